-- expect: syntax.lua:3: 
name "syntax"
weights { bits = 4,, }
