-- expect: global.lua:3: assignment to global 'bits'
name "global"
bits = 4
