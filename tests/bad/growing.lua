-- expect: growing.lua:5: recipe used more than 8 MiB of memory
name "growing"
local t = {}
for i = 1, 1e7 do
  t[i] = i .. "x"
end
