-- expect: error_level0.lua:3: no position given
name "error_level0"
error("no position given", 0)
