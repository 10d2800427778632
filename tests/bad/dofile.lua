-- expect: dofile.lua:2: unknown name 'dofile'
dofile("/etc/passwd")
