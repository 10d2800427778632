-- A GPU test recipe: 3-bit signed codes in groups of 32 with f32 scales
-- and no zeros.  At K = 8320 (260 groups) the GEMM's staged scales
-- (32 bytes a channel a sub-stage of 8 groups) end in a last sub-stage
-- of half its groups, whose copies past the row are skipped.
name "s3_f32"
activations "f16"
weights { bits = 3, signed = true }
scales { group = 32, dtype = "f32" }
dequant "q * s"
output "f16"
