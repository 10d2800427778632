-- expect: unused_zeros.lua:6: zeros are given but dequant 'q * s' does not use them
name "unused_zeros"
activations "f16"
weights { bits = 4 }
scales { group = 64 }
zeros { dtype = "f16" }
dequant "q * s"
