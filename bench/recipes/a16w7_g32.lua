-- 7-bit codes in group 32: a tile meets 32 groups (the spill case)
name "a16w7_g32"
activations "f16"
weights { bits = 7 }
scales { group = 32 }
zeros { dtype = "f16" }
dequant "(q - z) * s"
