-- expect: rep_huge.lua:3: resulting string too large
name "rep_huge"
local s = string.rep("ab", 2^40)
