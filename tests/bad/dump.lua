-- expect: dump.lua:2: attempt to call a nil value (field 'dump')
local b = string.dump(function() end)
