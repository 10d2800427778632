-- expect: bits0.lua:4: weights.bits must be in 1..8, got 0
name "bits0"
activations "f16"
weights { bits = 0 }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
