-- expect: load.lua:2: unknown name 'load'
local f = load("return 1")
