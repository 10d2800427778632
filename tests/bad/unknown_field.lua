-- expect: unknown_field.lua:3: weights: unknown field 'bitz'
name "unknown_field"
weights { bitz = 4 }
