-- int8 weight-only: signed 8-bit codes, f32 per-channel scales, bias
name "a16w8_f32"
activations "f16"
weights { bits = 8, signed = true }
scales { group = "channel", dtype = "f32" }
dequant "q * s"
epilogue { bias = true }
