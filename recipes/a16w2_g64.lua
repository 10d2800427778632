-- a16w2_g64: fp16 activations, 2-bit unsigned weights in groups of 64 with
-- fp16 scales and float zero-points, W = (Wq - z) * s.
name "a16w2_g64"
activations "f16"
weights { bits = 2, packing = "gemlite32" }
scales { group = 64, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
output "f16"
