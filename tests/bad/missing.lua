-- expect: missing.lua:4: recipe has no 'weights' section
name "missing"
activations "f16"
scales { group = 64 }
