-- expect: runtime.lua:3: attempt to perform arithmetic on a table value
name "runtime"
local g = {} + 1
