-- expect: metatable.lua:2: unknown name 'setmetatable'
setmetatable({}, { __gc = function() while true do end end })
