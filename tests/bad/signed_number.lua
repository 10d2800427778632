-- expect: signed_number.lua:4: weights.signed must be true or false, got number
name "signed_number"
activations "f16"
weights { bits = 4, signed = 1 }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
