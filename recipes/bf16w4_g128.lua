-- bf16w4_g128: the a16w4_g128 format with bf16 activations, scales,
-- zero-points and output.
name "bf16w4_g128"
activations "bf16"
weights { bits = 4, packing = "gemlite32" }
scales { group = 128, dtype = "bf16" }
zeros { dtype = "bf16" }
dequant "(q - z) * s"
output "bf16"
epilogue { bias = true }
