-- a16w1_g64: fp16 activations, 1-bit weights in groups of 64.  With
-- W = q * s + z each group holds two values, z and z + s.
name "a16w1_g64"
activations "f16"
weights { bits = 1, packing = "gemlite32" }
scales { group = 64, dtype = "f16" }
zeros { dtype = "f16" }
dequant "q * s + z"
output "f16"
