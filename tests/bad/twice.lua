-- expect: twice.lua:4: section 'weights' given twice (first at line 3)
name "twice"
weights { bits = 4 }
weights { bits = 2 }
