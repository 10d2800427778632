-- w7_z32: 7-bit codes in groups of 32 with f16 scales and f32 zeros, so
-- that the GEMM's resident zero rows are twice as wide as its scale rows
-- (gen/lb_gemm.c reside; templates/gemm.cu LB_ZROWB).
name "w7_z32"
activations "f16"
weights { bits = 7, signed = false, packing = "gemlite32" }
scales { group = 32, dtype = "f16" }
zeros { dtype = "f32" }
dequant "(q - z) * s"
accumulator "f32"
output "f16"
