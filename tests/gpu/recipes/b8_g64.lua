-- b8_g64: 8-bit codes with bf16 activations, whose GEMV dequantises in f32
-- after its MMA and takes 9..16 rows only as slices (gen/lb_gen.c
-- gemv_most, slice_rule): the sanitizer runs it sliced.
name "b8_g64"
activations "bf16"
weights { bits = 8, signed = true, packing = "gemlite32" }
scales { group = 64, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
accumulator "f32"
output "bf16"
epilogue { bias = true }
