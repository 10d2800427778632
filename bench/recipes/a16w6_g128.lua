name "a16w6_g128"
activations "f16"
weights { bits = 6 }
scales { group = 128 }
zeros { dtype = "f16" }
dequant "(q - z) * s"
