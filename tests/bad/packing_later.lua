-- expect: packing_later.lua:4: weights.packing 'marlin' is not supported yet
name "packing_later"
activations "f16"
weights { bits = 4, packing = "marlin" }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
