-- expect: acc_f16.lua:3: accumulator 'f16' is not supported yet
name "acc_f16"
accumulator "f16"
