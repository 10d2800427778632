-- expect: act_number.lua:3: section 'activations' takes a string, got number
name "act_number"
activations(16)
