-- expect: bits_string.lua:4: weights.bits must be an integer, got string
name "bits_string"
activations "f16"
weights { bits = "4" }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
