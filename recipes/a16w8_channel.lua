-- a16w8_channel: fp16 activations, signed 8-bit weights with one fp16
-- scale per output channel and no zero-point (symmetric), W = Wq * s.
name "a16w8_channel"
activations "f16"
weights { bits = 8, signed = true, packing = "gemlite32" }
scales { group = "channel", dtype = "f16" }
dequant "q * s"
accumulator "f32"
output "f16"
epilogue { bias = true }
