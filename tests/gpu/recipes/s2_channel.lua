-- s2_channel: signed 2-bit codes with one scale per channel.  Its results
-- are small next to the 1026 * sum x the MMA sums carry, so it checks that
-- the fold keeps them exact over a long K (tests/gpu/run.sh runs it with
-- LOWBIT_PLAN=split=1: one warp takes all of K).
name "s2_channel"
activations "f16"
weights { bits = 2, signed = true, packing = "gemlite32" }
scales { group = "channel", dtype = "f16" }
dequant "q * s"
accumulator "f32"
output "f16"
