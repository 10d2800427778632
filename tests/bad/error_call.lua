-- expect: error_call.lua:3: custom failure
name "error_call"
error("custom failure")
