-- w7_ch: 7-bit codes with per-channel bf16 scales and no zeros, so that
-- no scales travel in the GEMV's ring: at N = 1024, K = 16384 its 1..8
-- rows take clusters of 8 blocks, a tile a warp (gen/lb_gvplan.c, the
-- 7-bit codes' room).
name "w7_ch"
activations "f16"
weights { bits = 7, signed = false, packing = "gemlite32" }
scales { group = "channel", dtype = "bf16" }
dequant "q * s"
accumulator "f32"
output "f16"
