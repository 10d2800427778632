name "a16w5_g64"
activations "bf16"
weights { bits = 5, signed = true }
scales { group = 64, dtype = "bf16" }
zeros { dtype = "bf16" }
dequant "q * s + z"
