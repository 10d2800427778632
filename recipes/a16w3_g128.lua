-- a16w3_g128: fp16 activations, 3-bit unsigned weights in groups of 128.
-- 3 does not divide 32: each lane packs 32 codes into 3 words, and codes
-- 10 and 21 run across a word boundary (GPTQ-TVM's cross-word packing).
name "a16w3_g128"
activations "f16"
weights { bits = 3, packing = "gemlite32" }
scales { group = 128, dtype = "f16" }
zeros { dtype = "f16" }
dequant "(q - z) * s"
output "f16"
epilogue { bias = true }
