-- expect: huge.lua:3: recipe used more than 8 MiB of memory
name "huge"
local s = string.rep("x", 1 << 30)
