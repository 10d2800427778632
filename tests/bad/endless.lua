-- expect: endless.lua:4: recipe ran more than 10000000 instructions (endless loop?)
name "endless"
local n = 0
while true do n = n + 1 end
