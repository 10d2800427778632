-- expect: group16.lua:4: scales.group must be in 32..1048576, got 16
name "group16"
weights { bits = 4 }
scales { group = 16 }
dequant "q * s"
