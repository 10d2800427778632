-- a16w4_g128: fp16 activations, 4-bit unsigned weights in groups of 128
-- along K with fp16 scales and float zero-points, W = (Wq - z) * s.
-- This is the HQQ / GemLite A16W4 format.
name "a16w4_g128"
activations "f16"
weights { bits = 4, signed = false, packing = "gemlite32" }
scales { group = 128, dtype = "f16" }
zeros { kind = "float", dtype = "f16" }
dequant "(q - z) * s"
accumulator "f32"
output "f16"
epilogue { bias = true }
