-- expect: pcall.lua:2: unknown name 'pcall'
pcall(function() while true do end end)
