-- expect: bad_dequant.lua:3: dequant must be one of
name "bad_dequant"
dequant "q * s * z"
