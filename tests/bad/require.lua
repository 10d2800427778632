-- expect: require.lua:2: unknown name 'require'
local m = require("os")
