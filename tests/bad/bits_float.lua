-- expect: bits_float.lua:4: weights.bits must be an integer, got 4.5
name "bits_float"
activations "f16"
weights { bits = 4.5 }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
