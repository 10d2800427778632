-- expect: io.lua:2: unknown name 'io'
local f = io.open("/etc/passwd")
