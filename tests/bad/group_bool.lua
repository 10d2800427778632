-- expect: group_bool.lua:4: scales.group must be an integer, got boolean
name "group_bool"
weights { bits = 4 }
scales { group = true }
dequant "q * s"
