/*
** lb_gen.c: emit the recipe-specific prelude, join it with the skeleton
** from templates/, and emit the entry points with their launch shapes.
** The output is deterministic: it depends on the recipe, n, k and sms only,
** and on LOWBIT_PLAN where that is set (the file's base name appears in
** comments, never a time or a full path).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_buf.h"
#include "lb_dump.h"
#include "lb_err.h"
#include "lb_gen.h"
#include "lb_layout.h"

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* ---- launch shapes ------------------------------------------------------ */

/* The group slots of a tile: how many a tile meets (gpt), and as C
** expressions the slot of code row i, the first row of slot j, and the
** group of slot j in a tile inside k.  One classification serves the plan
** (registers) and the emitted prelude. */
typedef struct slots {
  int gpt;
  const char *slot, *first, *group;
} slots;

static slots slots_of(const lb_recipe *r, const lb_layout *lay) {
  slots s;
  if (r->group == 0) {                    /* one group: the channel */
    s.gpt = 1;
    s.slot = s.first = s.group = "0";
  } else if (r->group % lay->tile == 0) { /* one group covers the tile */
    s.gpt = 1;
    s.slot = s.first = "0";
    s.group = "tile / (LB_GROUP / LB_TILE)";
  } else if (lay->tile % r->group == 0) { /* a fixed number per tile */
    s.gpt = lay->tile / r->group;
    s.slot = "32 * i / LB_GROUP";
    s.first = "j * LB_GROUP / 32";
    s.group = "tile * (LB_TILE / LB_GROUP) + j";
  } else {                                /* boundaries move: one per row */
    s.gpt = lay->codes;
    s.slot = "i";
    s.first = "j";
    s.group = "(tile * LB_TILE + 32 * j) / LB_GROUP";
  }
  return s;
}

/* tune (LOWBIT_PLAN, e.g. "warps=8,split=4,stages=2") replaces planned
** values.  Entries are comma-separated key=value; a malformed entry, an
** unknown key or a value out of range is skipped.  The ring is then cut
** back (stages first, then warps) to fit LB_RING_KB. */
static void plan_override(lb_gemv_cfg *cfg, int stage, const char *e) {
  if (e == NULL) return;
  while (*e) {
    char key[16], *end;
    size_t n = strcspn(e, "=,");
    long v;
    if (e[n] == '=' && n > 0 && n < sizeof key) {
      memcpy(key, e, n);
      key[n] = '\0';
      v = strtol(e + n + 1, &end, 10);
      if (end != e + n + 1 && (*end == ',' || *end == '\0')) {
        if (!strcmp(key, "warps") && (v == 1 || v == 2 || v == 4 || v == 8))
          cfg->warps = (int)v;
        else if (!strcmp(key, "split") && v >= 1 && v <= 8 && !(v & (v - 1)))
          cfg->split = (int)v;
        else if (!strcmp(key, "stages") && v >= 1 && v <= 8)
          cfg->stages = (int)v;
        else if (!strcmp(key, "minb") && v >= 1 && v <= 8)
          cfg->minb = (int)v;
        else if (!strcmp(key, "xminb") && v >= 1 && v <= 8)
          cfg->xminb = (int)v;
        else if (!strcmp(key, "xres") && v >= 0 && v <= 160)
          cfg->xres = (int)v * 1024;
        else if (!strcmp(key, "lazy") && (v == 0 || v == 1))
          cfg->lazy = (int)v;
        else if (!strcmp(key, "cluster") && v >= 1 && v <= 8 && !(v & (v - 1)))
          cfg->cluster = (int)v;
      }
    }
    e += strcspn(e, ",");
    if (*e == ',') e++;
  }
  while (cfg->stages > 1 && cfg->warps * cfg->stages * stage > LB_RING_KB * 1024)
    cfg->stages--;
  while (cfg->warps > 1 && cfg->warps * cfg->stages * stage > LB_RING_KB * 1024)
    cfg->warps /= 2;
  if (cfg->split > cfg->warps) cfg->split = cfg->warps;
}

/* What a block keeps in shared memory besides its rings.  Scales and
** zeros: its rows, each padded by 16 bytes so that the eight rows a load
** touches fall in different banks; only when a row is whole 16-byte
** chunks (cp.async) and the rows fit LB_SRES_KB.  Activations: rows of
** K padded to 128 bytes plus 64, so that the two rows of a quarter warp
** fall in different banks; as many rows as fit LB_XRES_KB. */
static void plan_resident(const lb_recipe *r, int k, lb_gemv_cfg *cfg,
                          int stage) {
  int rowb = (r->group ? k / r->group : 1) * lb_dtype_size(r->sdtype);
  int zrowb = (r->group ? k / r->group : 1) * lb_dtype_size(r->zdtype);
  int rows = 16 * cfg->warps / cfg->split, arrays = r->zeros ? 2 : 1;
  int ring = cfg->warps * cfg->stages * stage;
  cfg->srowb = 0;
  if (rowb % 16 == 0 && (!r->zeros || zrowb == rowb) &&
      rows * (rowb + 16) * arrays <= LB_SRES_KB * 1024 &&
      ring + rows * (rowb + 16) * arrays <= LB_RING_KB * 1024)
    cfg->srowb = rowb + 16;
  cfg->smem = ring + rows * cfg->srowb * arrays;
  cfg->xrowb = (k * lb_dtype_size(r->act) + 127) / 128 * 128 + 64;
  cfg->xs_m = cfg->xres / cfg->xrowb;
  if (cfg->xs_m > LB_MAX_M) cfg->xs_m = LB_MAX_M;
}

static void plan(const lb_recipe *r, int n, int k, int sms, const char *tune,
                 lb_gemv_cfg *cfg) {
  lb_layout lay;
  int tiles, groups, split = 1, want, warps = LB_WARPS, stage;
  lb_layout_of(r, &lay);
  tiles = lb_kpad(&lay, k) / lay.tile;
  groups = (n + 15) / 16;
  /* A ring stage holds 16 rows of words * 8 chunks of 16 bytes, plus a
  ** pad chunk per row.  Keep the block's ring within LB_RING_KB (every
  ** sm_80..sm_90 part gives a block that much): fewer warps per block for
  ** wide codes, then as many stages as fit, one to LB_MAX_STAGES.  A
  ** stage is refilled as soon as its tile is in registers, so one stage
  ** already overlaps a tile's load with the previous tile's math; on an
  ** H100 deeper rings lose (a16w4 8192 x 8192, M = 1, split 4: 1, 2, 3
  ** stages 18.2, 19.1, 19.9 us): more requests in flight delay the ones
  ** the warps wait for. */
  stage = 16 * (lay.words * 8 + 1) * 16;
  while (warps > 1 && warps * 2 * stage > LB_RING_KB * 1024) warps /= 2;
  cfg->warps = warps;
  cfg->stages = LB_RING_KB * 1024 / (warps * stage);
  if (cfg->stages > LB_MAX_STAGES) cfg->stages = LB_MAX_STAGES;
  /* Wide codes (3 to 7 bits) read their words from the ring where they
  ** are used instead of holding a tile in registers (112 of them for 7
  ** bits, which spilled); the stage is then busy until the tile's math
  ** is done, so two stages keep a tile in flight.  The warps above were
  ** chosen so that two stages fit. */
  cfg->lazy = lay.words > 2;
  if (cfg->lazy && cfg->stages < 2) cfg->stages = 2;
  /* Two blocks per SM (128 registers) fit when a tile needs few scale
  ** slots, one word per lane and at least 4 bits per code; narrower
  ** codes carry more rows per tile, and f32 scales or zeros more state,
  ** and either spilled at 128 (1-bit group 256, 2-bit per channel). */
  cfg->minb = lay.words == 1 && slots_of(r, &lay).gpt <= 2 && r->bits >= 4 &&
              r->sdtype != LB_F32 && !(r->zeros && r->zdtype == LB_F32)
                  ? 2 : 1;
  cfg->xminb = cfg->minb;
  cfg->xres = LB_XRES_KB * 1024;
  /* Split K until the warps fill the GPU, but keep at least two tiles
  ** per warp and the warps of a channel group in one block.  Two blocks
  ** per SM: no more warps than one wave holds, so that each warp streams
  ** as many tiles as it can (a16w4 8192 x 8192, M = 1, H100: split 4
  ** 18.2 us, split 8 19.9).  One block (wide state, the issue slots are
  ** the limit): about 24 warps per SM (a16w2: split 8 20.9 us, 4 23.5). */
  want = (sms > 0 ? sms : 132) * (cfg->minb == 2 ? 16 : 24);
  while (split < warps && tiles >= 2 * split &&
         (cfg->minb == 2 ? groups * split * 2 <= want : groups * split < want))
    split *= 2;
  cfg->split = split;
  /* Narrow layers (N = 16, 48: a few channel groups) leave most SMs
  ** idle, and each warp walks its tiles one round trip at a time.  On
  ** sm_90 a cluster of blocks splits K further, up to a tile per warp,
  ** and adds its sums in distributed shared memory (no work space); the
  ** source says so only for sm_90 (LB_CLUSTER), older parts keep one
  ** block per channel block. */
  {
    int blocks = (groups + warps / split - 1) / (warps / split);
    cfg->cluster = 1;
    while (cfg->cluster < 8 && blocks * cfg->cluster * 2 <= (sms > 0 ? sms : 132) &&
           tiles >= split * cfg->cluster * 2)
      cfg->cluster *= 2;
  }
  /* In a cluster a warp with one or two tiles uses a sliver of x:
  ** copying all of it into every block first (lb_gemv_xs) would cost
  ** more than the tiles (1-bit, N = 16, K = 16384: 32 KB of x against 8
  ** KB of weights per block). */
  if (cfg->cluster > 1 && tiles < cfg->split * cfg->cluster * 4) cfg->xres = 0;
  plan_override(cfg, stage, tune);
  cfg->grid = (groups + cfg->warps / cfg->split - 1) /
              (cfg->warps / cfg->split);
  plan_resident(r, k, cfg, stage);
}

/* ---- prelude ------------------------------------------------------------ */

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

static void emit_types(lb_buf *b, const lb_recipe *r) {
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
                storage(r->sdtype), storage(r->zeros ? r->zdtype : LB_F16),
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
  emit_to_f32(b, "lb_zero_f32", r->zeros ? r->zdtype : LB_F16);
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

static void emit_weights(lb_buf *b, const lb_recipe *r) {
  lb_layout lay;
  unsigned flip[8] = {0};
  int i, p;
  lb_layout_of(r, &lay);
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
typedef enum dqmode { DQ_F16, DQ_BF16, DQ_F32 } dqmode;

static dqmode dq_mode(const lb_recipe *r) {
  if (r->act == LB_F16) return DQ_F16;
  return r->bits <= 7 ? DQ_BF16 : DQ_F32;
}

static void emit_pairs(lb_buf *b, const lb_recipe *r) {
  lb_layout lay;
  dqmode mode = dq_mode(r);
  unsigned mask, magic = mode == DQ_F16 ? 0x64006400u
                       : mode == DQ_BF16 ? 0x43004300u : 0u;
  int off = r->is_signed ? 1 << (r->bits - 1) : 0;
  int base = mode == DQ_F16 ? 1024 : mode == DQ_BF16 ? 128 : 0;
  int i, fast, cls16;
  unsigned clsbits = 0;
  lb_layout_of(r, &lay);
  mask = (1u << lay.bits) - 1;
  /* Power-of-two widths never straddle a 16-bit half: interleave the
  ** halves of the two words once (PRMT), then a shift and one LOP3 give
  ** a pair. */
  fast = 32 % lay.bits == 0 && 16 % lay.bits == 0;
  /* A code at bits 4.. of a half, masked in place, is the value
  ** base + 16 q: exact while 16 q stays below the base (f16 widths up to
  ** 4, bf16 up to 2).  Codes in bits 4..7 and 12..15 of a half then need
  ** no shift of their own, or share one with the code four bits lower;
  ** the kernel keeps such code rows (class 1) in separate sums and folds
  ** them with s / 16. */
  cls16 = fast && mode != DQ_F32 && 16 * mask < (unsigned)base;
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
                mode == DQ_F32 ? "" : ", OR-ed into the mantissa of the base",
                cls16 ? " (class 1 codes: bits 4.. and 20..)" : "", lay.bits);
  lb_buf_puts(b, "__device__ __forceinline__ unsigned lb_pair_at(unsigned a0, "
                 "unsigned a1, unsigned b0,\n"
                 "                                           unsigned b1, int "
                 "i) {\n");
  if (fast) {
    /* the shift and mask of each code as arithmetic on i (folded once
    ** the loops are unrolled); clsbits records the class 1 rows */
    for (i = 0; i < lay.codes; i++) {
      int lo = 32 - lay.bits * (i + 1);
      if (cls16 && (lo % 16) % 8 >= 4) clsbits |= 1u << i;
    }
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
  lb_buf_printf(b, "constexpr bool LB_FOLD = %s;  // scales applied per group "
                   "after the MMA\n", mode == DQ_F32 ? "false" : "true");
  lb_buf_printf(b, "// Classes of code rows: 0, the A value is base + q; 1, "
                   "base + 16 q.\n"
                   "constexpr int LB_CLS = %d;\n"
                   "__device__ __forceinline__ constexpr int lb_cls(int i) { "
                   "return (0x%08xu >> i) & 1u; }\n",
                cls16 ? 2 : 1, clsbits);
  lb_buf_puts(b, "// Per group: S and C (per class) for the fold, or s2 and b2 "
                 "for dequantizing before the MMA.\n"
                 "__device__ __forceinline__ void lb_group(float s, float o, "
                 "float &S, float (&C)[2],\n"
                 "                                         unsigned &s2, "
                 "unsigned &b2) {\n");
  if (mode == DQ_F32)
    lb_buf_puts(b, "  S = 1.f;\n  C[0] = C[1] = 0.f;\n"
                   "  s2 = __float_as_uint(s);\n"
                   "  b2 = __float_as_uint(o);\n}\n");
  else {   /* C[1] only where class 1 rows exist */
    char c1[40] = "0.f";
    if (cls16) snprintf(c1, sizeof c1, "o - %d.0f * s", base / 16 + off);
    lb_buf_printf(b, "  S = s;\n  C[0] = o - %d.0f * s;\n  C[1] = %s;\n"
                     "  (void)s2; (void)b2;\n}\n", base + off, c1);
  }
  lb_buf_puts(b, "// The A register of two codes.\n"
                 "__device__ __forceinline__ unsigned lb_dq2(unsigned p, "
                 "unsigned s2, unsigned b2) {\n");
  if (mode == DQ_F32)
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
  lb_buf_printf(b, "constexpr unsigned LB_ONES = 0x%08xu;  // two 1.0 in the "
                   "activation type\n",
                r->act == LB_BF16 ? 0x3f803f80u : 0x3c003c00u);
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
                r->act == LB_BF16 ? "bf16" : "f16",
                r->act == LB_BF16 ? "bf16" : "f16");
}

static void emit_scales(lb_buf *b, const lb_recipe *r) {
  lb_layout lay;
  slots sl;
  lb_layout_of(r, &lay);
  /* Group slots of a tile: the scales a tile needs, loaded with its
  ** weights so that no scale load waits on the critical path. */
  sl = slots_of(r, &lay);
  if (r->group)
    lb_buf_printf(b, "// scales { group = %d } (line %d): one scale per %d "
                     "k-values of a channel.\n"
                     "constexpr int LB_GROUP = %d;\n"
                     "__device__ __forceinline__ constexpr int lb_groups(int k) { return "
                     "k / LB_GROUP; }\n"
                     "__device__ __forceinline__ int lb_group_of(int kk, int "
                     "ngroups) {\n  return min(kk / LB_GROUP, ngroups - 1);\n"
                     "}\n",
                  r->group, r->line[LB_S_SCALES], r->group, r->group);
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
                   "constexpr int LB_GPT = %d;\n"
                   "__device__ __forceinline__ constexpr int lb_gslot(int i) { "
                   "return %s; }\n"
                   "__device__ __forceinline__ constexpr int lb_gfirst(int j) { "
                   "return %s; }\n"
                   "// Group of slot j of a tile that lies inside k.\n"
                   "__device__ __forceinline__ int lb_slot_group(int tile, int j) "
                   "{\n  (void)tile; (void)j;\n  return %s;\n}\n"
                   "constexpr bool LB_ZEROS = %s;\n",
                lay.tile, sl.gpt, sl.gpt, sl.slot, sl.first, sl.group,
                r->zeros ? "true" : "false");
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
  lb_buf_puts(b, "__device__ __forceinline__ float lb_epilogue(float v, const "
                 "lb_out_t *bias, int c) {\n");
  if (r->bias)
    lb_buf_puts(b, "  return bias ? v + lb_out_f32(bias[c]) : v;\n}\n\n");
  else
    lb_buf_puts(b, "  (void)bias; (void)c;\n  return v;\n}\n\n");
}

static void emit_entries(lb_buf *b, const lb_gemv_cfg *cfg) {
  int xs;
  lb_buf_printf(b,
    "\n// Entry points (lb_gemv minBlocksPerSM %d: %s).\n"
    "// lb_gemv_xs keeps x in shared memory, for m up to %d; lb_gemv reads "
    "it from global memory.\n",
    cfg->minb, cfg->minb > 1 ? "caps registers at 128 so two blocks share "
                                "an SM"
                              : "wide state, registers left to ptxas",
    cfg->xs_m);
  for (xs = 0; xs < 2; xs++) {
    if (xs && cfg->xs_m == 0) break;
    lb_buf_printf(b,
      "extern \"C\" __global__ void __launch_bounds__(LB_WARPS * 32, %d)%s\n"
      "%s(const lb_act_t *x, const unsigned *w, const lb_scale_t *s, "
      "const lb_zero_t *z,\n"
      "        const lb_out_t *bias, lb_out_t *y, int m) {\n"
      "  lb_gemv<%d, %d, %s>(x, w, s, z, bias, y, m);\n}\n",
      xs ? cfg->xminb : cfg->minb, cfg->cluster > 1 ? " LB_CLUSTER_DIMS" : "",
      xs ? LB_KERNEL_XS : LB_KERNEL, cfg->split, cfg->stages,
      xs ? "true" : "false");
  }
}

lb_status lb_gen_gemv(const lb_recipe *r, int n, int k, int sms,
                      lb_gemv_cfg *cfgp, char **src) {
  lb_buf b;
  lb_sizes sz;
  lb_gemv_cfg cfg;
  lb_status st;
  /* read once: the source and the plan the runtime launches with agree */
  const char *tune = getenv("LOWBIT_PLAN");
  if (src) *src = NULL;
  if (src == NULL || r == NULL)
    return lb_fail(LB_EARG, "lb_generate: %s is NULL", r ? "src" : "recipe");
  if ((st = lb_sizes_of(r, n, k, &sz)) != LB_OK) return st;
  if (sms <= 0 || sms > 1024)
    return lb_fail(LB_EARG, "lb_generate: sms = %d out of range", sms);
  plan(r, n, k, sms, tune, &cfg);
  lb_buf_init(&b);
  lb_buf_printf(&b,
    "// Generated by lowbit from recipe '%s' (%s).\n"
    "// Regenerate with: lowbit gen %s --n %d --k %d --sms %d%s\n"
    "// Self-contained: compiles with NVRTC or nvcc, no headers needed.\n\n"
    "// Launch shape planned for n = %d, k = %d on %d SMs: %d block(s) of "
    "%d warps; each\n// 16-channel group's tiles split over %d warp(s), "
    "%d tile(s) in flight per warp.\n"
    "constexpr int LB_WARPS = %d;\n"
    "// The shape is part of the kernel: addresses become immediates and\n"
    "// the code for a partial tile or block goes where none exists.\n"
    "constexpr int LB_N = %d, LB_K = %d;\n\n",
    r->name, base_name(r->file),
    strcmp(r->file, "stdin") ? base_name(r->file) : "-", n, k, sms,
    strcmp(r->file, "stdin") ? "" : " < RECIPE", n, k, sms,
    cfg.grid, cfg.warps, cfg.split, cfg.stages, cfg.warps, n, k);
  if (tune) {   /* name the override; no newline or backslash may end the
                ** comment early or continue it */
    char t[101];
    size_t i, j = 0;
    for (i = 0; tune[i] && j < sizeof t - 1; i++)
      if (tune[i] >= ' ' && tune[i] <= '~' && tune[i] != '\\' &&
          tune[i] != '"')
        t[j++] = tune[i];
    t[j] = '\0';
    lb_buf_printf(&b, "// Plan changed by LOWBIT_PLAN=\"%s\".\n\n", t);
  }
  emit_types(&b, r);
  emit_weights(&b, r);
  emit_pairs(&b, r);
  emit_scales(&b, r);
  lb_buf_printf(&b,
    "// Shared memory beside the rings (planned): resident scales and zeros\n"
    "// in rows of LB_SROWB bytes (0: read from global memory), x in rows of\n"
    "// LB_XROWB.\n"
    "constexpr int LB_SROWB = %d, LB_XROWB = %d;\n"
    "// Words %s.\n"
    "constexpr bool LB_LAZY = %s;\n\n",
    cfg.srowb, cfg.xrowb,
    cfg.lazy ? "read from the ring where they are used (wide codes)"
             : "read from the ring into registers a tile at a time",
    cfg.lazy ? "true" : "false");
  if (cfg.cluster > 1)
    lb_buf_printf(&b,
      "// Narrow layer: on sm_90 a cluster of %d blocks splits K (their "
      "sums meet in\n// distributed shared memory); before sm_90, one "
      "block per channel block.\n"
      "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
      "constexpr int LB_CLUSTER = %d;\n"
      "#define LB_CLUSTER_DIMS __cluster_dims__(%d, 1, 1)\n"
      "#else\n"
      "constexpr int LB_CLUSTER = 1;\n"
      "#define LB_CLUSTER_DIMS\n"
      "#endif\n\n",
      cfg.cluster, cfg.cluster, cfg.cluster);
  else
    lb_buf_puts(&b, "constexpr int LB_CLUSTER = 1;   // blocks splitting K "
                    "(a cluster on sm_90)\n\n");
  lb_buf_puts(&b, lb_tpl_gemv);
  emit_entries(&b, &cfg);
  *src = lb_buf_take(&b);
  if (*src == NULL) return lb_fail(LB_EMEM, "lb_generate: out of memory");
  /* LOWBIT_DUMP_DIR: every generated kernel (lowbit gen and compile,
  ** lb_op_create), or an error saying why not */
  if ((st = lb_dump(r, n, k, *src)) != LB_OK) {
    free(*src);
    *src = NULL;
    return st;
  }
  if (cfgp) *cfgp = cfg;
  return LB_OK;
}

lb_status lb_generate(const lb_recipe *r, int n, int k, int sms, char **src) {
  return lb_gen_gemv(r, n, k, sms, NULL, src);
}
