-- expect: act_s8.lua:3: activations 's8' is not supported yet
name "act_s8"
activations "s8"
