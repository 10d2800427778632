/*
** lb_prelude.c: the device-side format prelude of a generated kernel: its
** types and conversions, how codes come out of packed words and reach the
** tensor cores, scales, zeros and the epilogue.  Written once from the
** format (lb_format.h); every kernel kind's template builds on it.
*/
#include <stdio.h>

#include "lb_prelude.h"

static const char *storage(lb_dtype t) {
  return t == LB_F32 ? "float" : "unsigned short";
}

/* Scalar conversion to float of a stored value of type t. */
static void emit_to_f32(lb_buf *b, const char *fn, lb_dtype t) {
  lb_buf_printf(b, "__device__ __forceinline__ float %s(%s v) {\n", fn,
                storage(t));
  if (t == LB_F32)
    lb_buf_puts(b, "  return v;\n");
  else if (t == LB_BF16)
    lb_buf_puts(b, "  return __uint_as_float((unsigned)v << 16);\n");
  else
    lb_buf_puts(b, "  float f;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : "
                   "\"h\"(v));\n  return f;\n");
  lb_buf_puts(b, "}\n");
}

static void emit_types(lb_buf *b, const lb_format *f) {
  const lb_recipe *r = f->r;
  lb_buf_printf(b,
    "// activations \"%s\" (line %d), scales.dtype \"%s\" (line %d), "
    "zeros.dtype \"%s\", output \"%s\"\n"
    "// Values travel as raw bits; conversions are PTX, so the source needs "
    "no headers.\n",
    lb_dtype_name(r->act), r->line[LB_S_ACT], lb_dtype_name(r->sdtype),
    r->line[LB_S_SCALES], r->zeros ? lb_dtype_name(r->zdtype) : "-",
    lb_dtype_name(r->out));
  lb_buf_printf(b, "typedef unsigned short lb_act_t;\n"
                   "typedef %s lb_scale_t;\n"
                   "typedef %s lb_zero_t;\n"
                   "typedef %s lb_out_t;\n\n",
                storage(f->sdtype), storage(f->zdtype),
                storage(r->out));
  lb_buf_puts(b, "// Two packed activations -> two floats.\n"
                 "__device__ __forceinline__ void lb_act2_f32(unsigned v, "
                 "float &lo, float &hi) {\n");
  if (r->act == LB_BF16)
    lb_buf_puts(b, "  lo = __uint_as_float(v << 16);\n"
                   "  hi = __uint_as_float(v & 0xffff0000u);\n");
  else
    lb_buf_puts(b, "  asm(\"{ .reg .b16 l, h; mov.b32 {l, h}, %2; "
                   "cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }\"\n"
                   "      : \"=f\"(lo), \"=f\"(hi) : \"r\"(v));\n");
  lb_buf_puts(b, "}\n");
  emit_to_f32(b, "lb_scale_f32", r->sdtype);
  emit_to_f32(b, "lb_zero_f32", f->zdtype);
  emit_to_f32(b, "lb_out_f32", r->out);
  lb_buf_puts(b, "__device__ __forceinline__ lb_out_t lb_out_from_f32(float f) "
                 "{\n");
  if (r->out == LB_F32)
    lb_buf_puts(b, "  return f;\n");
  else
    lb_buf_printf(b, "  unsigned short h;\n  asm(\"cvt.rn.%s.f32 %%0, %%1;\" "
                     ": \"=h\"(h) : \"f\"(f));\n  return h;\n",
                  r->out == LB_BF16 ? "bf16" : "f16");
  lb_buf_puts(b, "}\n\n");
}

static void emit_weights(lb_buf *b, const lb_format *f) {
  const lb_recipe *r = f->r;
  const lb_layout lay = f->lay;
  unsigned flip[8] = {0};
  int i, p;
  lb_buf_printf(b,
    "// weights { bits = %d, signed = %s, packing = \"gemlite32\" } "
    "(line %d)\n"
    "// GemLite warp-tiled int32 packing: a tile is %d k-values; lane l owns "
    "k = l + 32 i,\n"
    "// i < %d, as a big-endian bit stream over %d word(s) (word p of lane l "
    "is word 32 p + l).\n",
    r->bits, r->is_signed ? "true" : "false", r->line[LB_S_WEIGHTS],
    lay.tile, lay.codes, lay.words);
  lb_buf_printf(b, "constexpr int LB_BITS = %d;\n"
                   "constexpr int LB_WORDS = %d;\n"
                   "constexpr int LB_CODES = %d;\n"
                   "constexpr int LB_TILE = %d;\n\n",
                lay.bits, lay.words, lay.codes, lay.tile);
  for (i = 0; i < lay.codes; i++) {
    lb_codepos cp = lb_code_pos(&lay, i);
    if (r->is_signed) flip[cp.word] |= 1u << (31 - cp.off);
  }
  lb_buf_printf(b, "// weights.signed = %s: ", r->is_signed ? "true" : "false");
  if (r->is_signed)
    lb_buf_printf(b, "flipping each code's sign bit turns two's complement "
                     "into offset binary, code + %d.\n", 1 << (lay.bits - 1));
  else
    lb_buf_puts(b, "codes are used as they are.\n");
  lb_buf_puts(b, "__device__ __forceinline__ unsigned lb_flip(int p, unsigned "
                 "w) {\n");
  if (!r->is_signed)
    lb_buf_puts(b, "  (void)p;\n  return w;\n");
  else {
    lb_buf_puts(b, "  constexpr unsigned sign[LB_WORDS] = {");
    for (p = 0; p < lay.words; p++)
      lb_buf_printf(b, "%s0x%08xu", p ? ", " : "", flip[p]);
    lb_buf_puts(b, "};\n  return w ^ sign[p];\n");
  }
  lb_buf_puts(b, "}\n");
  lb_buf_puts(b, "\n");
}

/* How codes reach the tensor cores, by activation type.
** f16: a code q OR-ed into the mantissa of 1024.0 (0x6400) is the f16
** value 1024 + q, exactly, for q < 1024.  The MMA multiplies these by the
** activations exactly (11-bit by 11-bit products fit f32) and sums in
** f32; per group the kernel then folds
**   sum x (q s + b) = s * sum x (1024 + q) + (b - 1024 s) * sum x,
** with sum x from a second MMA against ones.  Weights are never rounded
** to 16 bits.  bf16 with codes below 128: the same with 128.0 (0x4300).
** bf16 with 8-bit codes (128 + q would not be exact): each weight is
** dequantized in f32 and rounded to bf16 before the MMA. */
/* lb_pair_at: two lanes' code i as one A register (with lb_andor). */
static void emit_pair_at(lb_buf *b, const lb_format *f) {
  const lb_layout lay = f->lay;
  const unsigned mask = f->mask, magic = f->magic;
  const int cls16 = f->cls16;
  lb_buf_printf(b, "// (a & m) | c in one LOP3 (C would spend a second one "
                   "on the two constants).\n"
                   "__device__ __forceinline__ unsigned lb_andor(unsigned a, "
                   "unsigned m, unsigned c) {\n"
                   "  unsigned d;\n"
                   "  asm(\"lop3.b32 %%0, %%1, %%2, %%3, 0xea;\" : \"=r\"(d) : "
                   "\"r\"(a), \"r\"(m), \"r\"(c));\n  return d;\n}\n");
  lb_buf_printf(b, "// Code i of lanes a and b as a pair: a's in bits 0..%d, "
                   "b's in bits 16..%d%s%s;\n"
                   "// a0, b0: the lanes' word p = %d i / 32, a1, b1: word p "
                   "+ 1 (where a code may end).\n",
                lay.bits - 1, 15 + lay.bits,
                f->mode == LB_DQM_F32 ? "" : ", OR-ed into the mantissa of the base",
                cls16 ? " (class 1 codes: bits 4.. and 20..)" : "", lay.bits);
  lb_buf_puts(b, "__device__ __forceinline__ unsigned lb_pair_at(unsigned a0, "
                 "unsigned a1, unsigned b0,\n"
                 "                                           unsigned b1, int "
                 "i) {\n");
  if (f->fast) {
    /* the shift and mask of each code as arithmetic on i (folded once
    ** the loops are unrolled) */
    lb_buf_printf(b, "  (void)a1; (void)b1;   // codes never cross a word\n"
                     "  const int lo = %d - %d * i, hi = lo >= 16, "
                     "sh = hi ? lo - 16 : lo;\n", 32 - lay.bits, lay.bits);
    if (cls16)
      lb_buf_printf(b, "  // class 1: the code stays at bit 4 of its half\n"
                       "  const bool c1 = sh %% 8 >= 4;\n"
                       "  return lb_andor(__byte_perm(a0, b0, hi ? 0x7632 "
                       ": 0x5410) >> (c1 ? sh - 4 : sh),\n"
                       "                  c1 ? 0x%08xu : 0x%08xu, 0x%08xu);\n"
                       "}\n",
                    (mask | mask << 16) << 4, mask | mask << 16, magic);
    else
      lb_buf_printf(b, "  return lb_andor(__byte_perm(a0, b0, hi ? 0x7632 "
                       ": 0x5410) >> sh,\n"
                       "                  0x%08xu, 0x%08xu);\n}\n",
                    mask | mask << 16, magic);
  } else {
    /* Widths that do not divide 32.  A code inside one word lies in one
    ** of its byte-aligned 16-bit windows (bytes 0-1, 1-2 or 2-3; any run
    ** of up to 9 bits does): one PRMT puts a's and b's windows side by
    ** side, then a shift and one LOP3.  A code that crosses into the
    ** next word takes a funnel shift per lane first.  3 or 4 operations
    ** a pair, where two lb_code calls, a shift and two ORs took 7. */
    lb_buf_printf(b, "  const int bit = %d * i, end = bit %% 32 + %d, "
                     "lsb = 32 - end;\n"
                     "  if (end > 32)   // crosses into word p + 1\n"
                     "    return lb_andor(__byte_perm(__funnelshift_r(a1, a0, "
                     "64 - end),\n"
                     "                                __funnelshift_r(b1, b0, "
                     "64 - end), 0x5410),\n"
                     "                    0x%08xu, 0x%08xu);\n"
                     "  const int w = lsb / 8 < 2 ? lsb / 8 : 2;   // window: "
                     "bytes w, w + 1\n"
                     "  return lb_andor(__byte_perm(a0, b0, w * 0x1111 + "
                     "0x5410) >> (lsb - 8 * w),\n"
                     "                  0x%08xu, 0x%08xu);\n}\n",
                  lay.bits, lay.bits, mask | mask << 16, magic,
                  mask | mask << 16, magic);
  }
}

/* The fold's classes and per-group constants (lb_group), or the f32
** dequantisation's. */
static void emit_group(lb_buf *b, const lb_format *f) {
  const lb_dqmode mode = f->mode;
  const int off = f->off, base = f->base, cls16 = f->cls16;
  lb_buf_printf(b, "[[maybe_unused]] constexpr bool LB_FOLD = %s;  // scales applied per group "
                   "after the MMA\n", mode == LB_DQM_F32 ? "false" : "true");
  lb_buf_printf(b, "// Classes of code rows: 0, the A value is base + q; 1, "
                   "base + 16 q.\n"
                   "[[maybe_unused]] constexpr int LB_CLS = %d;\n"
                   "__device__ __forceinline__ constexpr int lb_cls(int i) { "
                   "return (0x%08xu >> i) & 1u; }\n",
                cls16 ? 2 : 1, f->clsbits);
  lb_buf_puts(b, "// Per group: S and C (per class) for the fold, or s2 and b2 "
                 "for dequantizing before the MMA.\n"
                 "__device__ __forceinline__ void lb_group(float s, float o, "
                 "float &S, float (&C)[2],\n"
                 "                                         unsigned &s2, "
                 "unsigned &b2) {\n");
  if (mode == LB_DQM_F32)
    lb_buf_puts(b, "  S = 1.f;\n  C[0] = C[1] = 0.f;\n"
                   "  s2 = __float_as_uint(s);\n"
                   "  b2 = __float_as_uint(o);\n}\n");
  else {   /* C[1] only where class 1 rows exist */
    char c1[40] = "0.f";
    if (cls16) snprintf(c1, sizeof c1, "o - %d.0f * s", base / 16 + off);
    lb_buf_printf(b, "  S = s;\n  C[0] = o - %d.0f * s;\n  C[1] = %s;\n"
                     "  (void)s2; (void)b2;\n}\n", base + off, c1);
  }
}

/* lb_dq2: a pair as the MMA's A register (as it is where the fold
** applies the scales; else dequantised in f32). */
static void emit_dq2(lb_buf *b, const lb_format *f) {
  const int off = f->off;
  lb_buf_puts(b, "// The A register of two codes.\n"
                 "__device__ __forceinline__ unsigned lb_dq2(unsigned p, "
                 "unsigned s2, unsigned b2) {\n");
  if (f->mode == LB_DQM_F32)
    lb_buf_printf(b, "  const float s = __uint_as_float(s2), "
                     "o = __uint_as_float(b2);\n"
                     "  const float lo = __uint_as_float((p & 0xffffu) | "
                     "0x4b000000u) - %d.0f;\n"
                     "  const float hi = __uint_as_float((p >> 16) | "
                     "0x4b000000u) - %d.0f;\n"
                     "  unsigned w;\n"
                     "  asm(\"cvt.rn.bf16x2.f32 %%0, %%1, %%2;\" : "
                     "\"=r\"(w) : \"f\"(fmaf(hi, s, o)), "
                     "\"f\"(fmaf(lo, s, o)));\n"
                     "  return w;\n}\n",
                  8388608 + off, 8388608 + off);
  else
    lb_buf_puts(b, "  (void)s2; (void)b2;\n  return p;\n}\n");
}

/* LB_ONES and lb_mma, in the activation type. */
static void emit_mma(lb_buf *b, const lb_format *f) {
  lb_buf_printf(b, "[[maybe_unused]] constexpr unsigned LB_ONES = 0x%08xu;  // two 1.0 in the "
                   "activation type\n",
                f->act == LB_BF16 ? 0x3f803f80u : 0x3c003c00u);
  lb_buf_printf(b, "// d += A (16 channels x 16 k) * B (16 k x 8 activation "
                   "rows), f32 accumulation.\n"
                   "__device__ __forceinline__ void lb_mma(float (&d)[4], "
                   "unsigned a0, unsigned a1, unsigned a2,\n"
                   "                                       unsigned a3, "
                   "unsigned b0, unsigned b1) {\n"
                   "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 "
                   "{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, "
                   "{%%0, %%1, %%2, %%3};\"\n"
                   "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), "
                   "\"+f\"(d[3])\n"
                   "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), "
                   "\"r\"(b0), \"r\"(b1));\n}\n\n",
                f->act == LB_BF16 ? "bf16" : "f16",
                f->act == LB_BF16 ? "bf16" : "f16");
}

static void emit_scales(lb_buf *b, const lb_format *f) {
  const lb_recipe *r = f->r;
  /* Group slots of a tile: the scales a tile needs, loaded with its
  ** weights so that no scale load waits on the critical path. */
  if (!f->per_channel)
    lb_buf_printf(b, "// scales { group = %d } (line %d): one scale per %d "
                     "k-values of a channel.\n"
                     "constexpr int LB_GROUP = %d;\n"
                     "__device__ __forceinline__ constexpr int lb_groups(int k) { return "
                     "k / LB_GROUP; }\n"
                     "__device__ __forceinline__ int lb_group_of(int kk, int "
                     "ngroups) {\n  return min(kk / LB_GROUP, ngroups - 1);\n"
                     "}\n",
                  f->group, r->line[LB_S_SCALES], f->group, f->group);
  else
    lb_buf_printf(b, "// scales { group = \"channel\" } (line %d): one scale "
                     "per channel.\n"
                     "__device__ __forceinline__ constexpr int lb_groups(int) { return 1; "
                     "}\n"
                     "__device__ __forceinline__ int lb_group_of(int, int) { "
                     "return 0; }\n",
                  r->line[LB_S_SCALES]);
  lb_buf_printf(b, "// A tile of %d k-values meets %d group slot(s): code row "
                   "i uses slot lb_gslot(i),\n// slot j starts at code row "
                   "lb_gfirst(j).\n"
                   "[[maybe_unused]] constexpr int LB_GPT = %d;\n"
                   "__device__ __forceinline__ constexpr int lb_gslot(int i) { "
                   "return %s; }\n"
                   "__device__ __forceinline__ constexpr int lb_gfirst(int j) { "
                   "return %s; }\n"
                   "// Group of slot j of a tile that lies inside k.\n"
                   "__device__ __forceinline__ int lb_slot_group(int tile, int j) "
                   "{\n  (void)tile; (void)j;\n  return %s;\n}\n"
                   "constexpr bool LB_ZEROS = %s;\n",
                f->lay.tile, f->gpt, f->gpt, f->slot, f->first, f->slotgroup,
                f->zeros ? "true" : "false");
  lb_buf_printf(b, "// dequant \"%s\" (line %d) as w = q * s + b, b per "
                   "group:\n"
                   "__device__ __forceinline__ float lb_offset(float s, "
                   "lb_zero_t z) {\n",
                lb_dequant_text(r->dequant), r->line[LB_S_DEQUANT]);
  switch (r->dequant) {
    case LB_DQ_SUBMUL:
      lb_buf_puts(b, "  return -lb_zero_f32(z) * s;\n}\n");
      break;
    case LB_DQ_MULADD:
      lb_buf_puts(b, "  (void)s;\n  return lb_zero_f32(z);\n}\n");
      break;
    case LB_DQ_MUL:
      lb_buf_puts(b, "  (void)s; (void)z;\n  return 0.f;\n}\n");
      break;
  }
  lb_buf_printf(b, "// accumulator \"f32\"%s; epilogue { bias = %s }%s\n",
                r->line[LB_S_ACC] ? "" : " (default)",
                r->bias ? "true" : "false",
                r->line[LB_S_EPILOGUE] ? "" : " (default)");
  /* Two hooks: what channel c's outputs need, read once a channel (the
  ** GEMM's thread stores up to 128 values of a few channels: read with
  ** each value, the bias (which may be null) stayed behind a branch each
  ** and the compiler kept a copy of the stores for either case: NVRTC
  ** took 1.7 s for sm_90a's 256 x 128 tiles of a 1-bit recipe on a 2-core
  ** machine, 1.2 s with it read once), and what it does to one value. */
  lb_buf_puts(b, "// Channel c's part of the epilogue, read once a channel "
                 "(-0.f: none; v + -0.f is v).\n"
                 "__device__ __forceinline__ float lb_epi_chan(const "
                 "lb_out_t *bias, int c) {\n");
  if (f->bias)
    lb_buf_puts(b, "  return bias ? lb_out_f32(bias[c]) : -0.f;\n}\n");
  else
    lb_buf_puts(b, "  (void)bias; (void)c;\n  return -0.f;\n}\n");
  lb_buf_puts(b, "__device__ __forceinline__ float lb_epi_apply(float v, "
                 "float ch) {\n");
  if (f->bias)
    lb_buf_puts(b, "  return v + ch;\n}\n");
  else
    lb_buf_puts(b, "  (void)ch;\n  return v;\n}\n");
  lb_buf_puts(b, "__device__ __forceinline__ float lb_epilogue(float v, const "
                 "lb_out_t *bias, int c) {\n"
                 "  return lb_epi_apply(v, lb_epi_chan(bias, c));\n}\n\n");
}

void lb_emit_prelude(lb_buf *b, const lb_format *f) {
  emit_types(b, f);
  emit_weights(b, f);
  emit_pair_at(b, f);
  emit_group(b, f);
  emit_dq2(b, f);
  emit_mma(b, f);
  emit_scales(b, f);
  lb_buf_puts(b, lb_tpl_common);
}

/* Hooks of kinds that dequantise each weight to the activation type before
** the MMA (the GEMM): at large M the GEMV's fold (scales after the MMA)
** would double the accumulators and add an MMA per fragment.  A pair is
** the two codes OR-ed into the base (the same magic numbers as the GEMV),
** with signed codes turned into offset binary by the same LOP3; then
**   w = (p 2^-pos - base 2^-pos - off) * s + o
** with the first part exact, and one rounding in the FMA.  A code stays
** where its PRMT window puts it (bit pos, 0..7) wherever it still fits
** under the base's exponent (pos + bits <= 10 for f16, 7 for bf16): no
** shift, and the first FMA's factor 2^-pos puts it back.  That holds for
** every code row of widths up to 4; wider ones shift where it does not.
** In f32 mode (bf16, 8-bit codes) the code is always shifted down. */
/* lb_crow_of: where code row i sits in its word. */
static void emit_crow(lb_buf *b, const lb_format *f) {
  const lb_layout lay = f->lay;
  const int mb = f->act == LB_BF16 ? 7 : 10;
  const int keep = f->mode == LB_DQM_F32 ? -1 : mb - lay.bits;
  lb_buf_printf(b, "// ---- dequantisation before the MMA (this kind) ----\n"
                   "// Where code row i sits: a byte window of its word (PRMT "
                   "selector), the shift\n// that brings it down (sh) or the "
                   "place it stays at (pos), or across into the\n// next word "
                   "(funnel shift).\n"
                   "constexpr int LB_KEEP = %d;   // highest place a code "
                   "stays at (-1: always shifted)\n"
                   "struct lb_crow { unsigned sel; int sh, pos, fsh; bool "
                   "cross; };\n"
                   "// stay = false: always shifted (where i is known only at "
                   "run time, the in-place\n// factors would cost more than "
                   "the shift).\n"
                   "__device__ __forceinline__ lb_crow lb_crow_of(int i, bool "
                   "stay) {\n"
                   "  const int end = %d * i %% 32 + %d, lsb = 32 - end;\n"
                   "  const int w = lsb / 8, w1 = w < 3 ? w + 1 : 3, "
                   "at = lsb - 8 * w;\n"
                   "  const bool keep = end > 32 || (stay && at <= LB_KEEP);\n"
                   "  return {unsigned((4 + w1) << 12 | (4 + w) << 8 | w1 << "
                   "4 | w), keep ? 0 : at,\n"
                   "          keep && end <= 32 ? at : 0, 64 - end, end > "
                   "32};\n}\n",
                keep, lay.bits, lay.bits);
}

/* lb_gpair: two lanes' code row as a pair OR-ed into the base. */
static void emit_gpair(lb_buf *b, const lb_format *f) {
  const lb_layout lay = f->lay;
  const unsigned mask2 = f->mask | f->mask << 16;
  const unsigned sign2 = f->off ? (unsigned)f->off * 0x10001u : 0u;
  lb_buf_printf(b, "// Code row c of lanes a and b: a's code in bits "
                   "c.pos..c.pos + %d, b's 16 bits\n// higher, OR-ed into the "
                   "base%s.\n"
                   "__device__ __forceinline__ unsigned lb_gpair(unsigned a0, "
                   "unsigned a1, unsigned b0,\n"
                   "                                         unsigned b1, "
                   "const lb_crow &c) {\n"
                   "  unsigned v;\n",
                lay.bits - 1, f->off ? ", sign bit flipped (offset binary)" : "");
  if (lay.cross)
    lb_buf_puts(b, "  // both ways, then a select: no branch in the "
                   "unrolled code rows\n"
                   "  const unsigned vc = __byte_perm(__funnelshift_r(a1, a0, "
                   "c.fsh),\n"
                   "                                  __funnelshift_r(b1, b0, "
                   "c.fsh), 0x5410);\n"
                   "  v = c.cross ? vc : __byte_perm(a0, b0, c.sel) >> c.sh;\n");
  else
    lb_buf_puts(b, "  (void)a1; (void)b1;   // codes never cross a word\n"
                   "  v = __byte_perm(a0, b0, c.sel) >> c.sh;\n");
  lb_buf_printf(b, "  unsigned d;   // (v & mask) ^ (base | sign): the bits "
                   "are disjoint\n"
                   "  asm(\"lop3.b32 %%0, %%1, %%2, %%3, 0x6a;\" : \"=r\"(d) : "
                   "\"r\"(v), \"r\"(0x%08xu << c.pos),\n"
                   "      \"r\"(0x%08xu ^ 0x%08xu << c.pos));\n"
                   "  return d;\n}\n",
                mask2, f->magic, sign2);
}

/* lb_wgroup and lb_w2: a group's operands, and a pair dequantised. */
static void emit_w2(lb_buf *b, const lb_format *f) {
  const int bf = f->act == LB_BF16, mb = bf ? 7 : 10;
  const char *t = bf ? "bf16" : "f16";
  lb_buf_puts(b, "// A group's scale s and offset o (w = q s + o) as the "
                 "operands of lb_w2.\n"
                 "__device__ __forceinline__ void lb_wgroup(float s, float o, "
                 "unsigned &s2, unsigned &b2) {\n");
  if (f->mode == LB_DQM_F32)
    lb_buf_puts(b, "  s2 = __float_as_uint(s);\n  b2 = __float_as_uint(o);\n"
                   "}\n"
                   "// bf16 with 8-bit codes: in f32, rounded once (lb_dq2).\n"
                   "__device__ __forceinline__ unsigned lb_w2(unsigned p, "
                   "const lb_crow &c, unsigned s2,\n"
                   "                                          unsigned b2) {\n"
                   "  (void)c;   // codes are shifted down (LB_KEEP)\n"
                   "  return lb_dq2(p, s2, b2);\n}\n\n");
  else
    lb_buf_printf(b, "  unsigned short hs, ho;\n"
                     "  asm(\"cvt.rn.%s.f32 %%0, %%1;\" : \"=h\"(hs) : "
                     "\"f\"(s));\n"
                     "  asm(\"cvt.rn.%s.f32 %%0, %%1;\" : \"=h\"(ho) : "
                     "\"f\"(o));\n"
                     "  s2 = (unsigned)hs * 0x10001u;\n"
                     "  b2 = (unsigned)ho * 0x10001u;\n}\n"
                     "// q = p 2^-pos - (%d 2^-pos + %d) exactly (both powers "
                     "of two, the code below\n// the base's exponent), then "
                     "q s + o with one rounding.\n"
                     "__device__ __forceinline__ unsigned lb_w2(unsigned p, "
                     "const lb_crow &c, unsigned s2,\n"
                     "                                          unsigned b2) {\n"
                     "  const unsigned k = (%du - c.pos) << %d, "
                     "o = 0x8000u | (%du - c.pos) << %d | %du << c.pos;\n"
                     "  unsigned q, w;\n"
                     "  asm(\"fma.rn.%s %%0, %%1, %%2, %%3;\" : \"=r\"(q) : "
                     "\"r\"(p), \"r\"(k * 0x10001u), \"r\"(o * 0x10001u));\n"
                     "  asm(\"fma.rn.%s %%0, %%1, %%2, %%3;\" : \"=r\"(w) : "
                     "\"r\"(q), \"r\"(s2), \"r\"(b2));\n"
                     "  return w;\n}\n\n",
                  t, t, f->base, f->off,
                  bf ? 127 : 15, mb, bf ? 134 : 25, mb, (unsigned)f->off,
                  bf ? "bf16x2" : "f16x2", bf ? "bf16x2" : "f16x2");
}

void lb_emit_prelude_w16(lb_buf *b, const lb_format *f) {
  emit_crow(b, f);
  emit_gpair(b, f);
  emit_w2(b, f);
}
