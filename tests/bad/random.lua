-- expect: random.lua:2: attempt to call a nil value (field 'random')
local b = math.random(1, 8)
