-- expect: bits9.lua:4: weights.bits must be in 1..8, got 9
name "bits9"
activations "f16"
weights { bits = 9 }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
