-- expect: no_zeros.lua:6: dequant '(q - z) * s' uses z, but the recipe has no zeros section
name "no_zeros"
activations "f16"
weights { bits = 4 }
scales { group = 64 }
dequant "(q - z) * s"
