-- expect: group100.lua:4: scales.group must be a multiple of 32, got 100
name "group100"
weights { bits = 4 }
scales { group = 100 }
dequant "q * s"
