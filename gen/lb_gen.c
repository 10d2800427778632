/*
** lb_gen.c: emit the recipe-specific prelude, join it with the skeleton
** from templates/, and emit the entry points with their launch shapes.
** The output is deterministic: it depends on the recipe, n, k and sms only
** (the file's base name appears in comments, never a time or a full path).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_buf.h"
#include "lb_err.h"
#include "lb_gen.h"
#include "lb_layout.h"

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* ---- launch shapes ------------------------------------------------------ */

void lb_gemv_plan(const lb_recipe *r, int n, int k, int sms, int m,
                  lb_gemv_cfg *cfg) {
  lb_layout lay;
  int units, cols, split, maxsplit, want;
  lb_layout_of(r, &lay);
  units = lb_kpad(&lay, k) / lay.tile * 8;
  /* Enough warps to keep half of every SM's warp slots busy, yet at least
  ** two units per lane so each warp streams a few loads per channel. */
  want = (sms > 0 ? sms : 132) * 32;
  maxsplit = units / 64;
  if (maxsplit > LB_WARPS) maxsplit = LB_WARPS;
  if (maxsplit < 1) maxsplit = 1;
  /* Registers hold COLS x M sums and COLS x words loaded words: fewer
  ** channels per group for many rows or wide codes. */
  cols = lay.words > 2 ? 1 : m >= 4 ? 2 : 4;
  for (;;) {
    int groups = (n + cols - 1) / cols;
    split = 1;
    while (split < maxsplit && groups * split < want) split *= 2;
    if (groups * split >= want || cols == 1) break;
    cols /= 2;
  }
  cfg->cols = cols;
  cfg->split = split;
  /* Staging pays when one block covers many channels over all of K. */
  cfg->stage = split == 1 && (size_t)m * lb_kpad(&lay, k) * 2 <= 16384;
  cfg->smem = cfg->stage ? m * lb_kpad(&lay, k) * 2 : 0;
  {
    int bcols = LB_WARPS / split * cols;
    cfg->grid = (n + bcols - 1) / bcols;
  }
}

int lb_bucket_m(int b) { return 1 << b; }

int lb_bucket_of(int m) {
  int b = 0;
  while (lb_bucket_m(b) < m) b++;
  return b;
}

void lb_kernel_name(int b, char *buf, int len) {
  snprintf(buf, (size_t)len, "lb_gemv_m%d", lb_bucket_m(b));
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
  unsigned mask, flip[8] = {0};
  int i, p;
  lb_layout_of(r, &lay);
  mask = lay.bits == 32 ? 0xffffffffu : (1u << lay.bits) - 1;
  lb_buf_printf(b,
    "// weights { bits = %d, signed = %s, packing = \"gemlite32\" } "
    "(line %d)\n"
    "// GemLite warp-tiled int32 packing: a tile is %d k-values; lane l owns "
    "k = l + 32 i,\n"
    "// i < %d, as a big-endian bit stream over %d word(s) (word p of lane l "
    "is word 32 p + l).\n",
    r->bits, r->is_signed ? "true" : "false", r->line[LB_S_WEIGHTS],
    lay.tile, lay.codes, lay.words);
  lb_buf_printf(b, "constexpr int LB_WORDS = %d;\n"
                   "constexpr int LB_CODES = %d;\n"
                   "constexpr int LB_TILE = %d;\n\n",
                lay.words, lay.codes, lay.tile);
  lb_buf_printf(b, "// Lane code i (bits of the code, unsigned).\n"
                   "__device__ __forceinline__ unsigned lb_code(const "
                   "unsigned (&w)[LB_WORDS], int i) {\n  switch (i) {\n");
  for (i = 0; i < lay.codes; i++) {
    lb_codepos cp = lb_code_pos(&lay, i);
    int end = cp.off + lay.bits;
    if (r->is_signed) flip[cp.word] |= 1u << (31 - cp.off);
    if (end <= 32)
      lb_buf_printf(b, "  case %d: return (w[%d] >> %d) & 0x%xu;\n", i,
                    cp.word, 32 - end, mask);
    else
      lb_buf_printf(b, "  case %d: return __funnelshift_r(w[%d], w[%d], %d) & "
                       "0x%xu;  // crosses into word %d\n",
                    i, cp.word + 1, cp.word, 64 - end, mask, cp.word + 1);
  }
  lb_buf_puts(b, "  }\n  return 0u;\n}\n\n");
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
    lb_buf_puts(b, "  switch (p) {\n");
    for (p = 0; p < lay.words; p++)
      lb_buf_printf(b, "  case %d: return w ^ 0x%08xu;\n", p, flip[p]);
    lb_buf_puts(b, "  }\n  return w;\n");
  }
  lb_buf_puts(b, "}\n");
  lb_buf_printf(b, "// Code -> float: OR-ing it into the mantissa of 2^23 is "
                   "exact and cheaper than I2F.\n"
                   "__device__ __forceinline__ float lb_q(unsigned c) {\n"
                   "  return __uint_as_float(c | 0x4b000000u) - %d.0f;\n}\n\n",
                8388608 + (r->is_signed ? 1 << (lay.bits - 1) : 0));
}

static void emit_scales(lb_buf *b, const lb_recipe *r) {
  lb_layout lay;
  const char *starts;
  lb_layout_of(r, &lay);
  if (r->group == 0 || r->group % lay.tile == 0)
    starts = "i == 0";                    /* one group per unit */
  else if (lay.tile % r->group == 0)
    starts = "(32 * i) % LB_GROUP == 0";  /* a fixed number per tile */
  else
    starts = "true";                      /* boundaries move from tile to tile */
  if (r->group)
    lb_buf_printf(b, "// scales { group = %d } (line %d): one scale per %d "
                     "k-values of a channel.\n"
                     "constexpr int LB_GROUP = %d;\n"
                     "__device__ __forceinline__ int lb_groups(int k) { return "
                     "k / LB_GROUP; }\n"
                     "__device__ __forceinline__ int lb_group_of(int kk, int "
                     "ngroups) {\n  return min(kk / LB_GROUP, ngroups - 1);\n"
                     "}\n",
                  r->group, r->line[LB_S_SCALES], r->group, r->group);
  else
    lb_buf_printf(b, "// scales { group = \"channel\" } (line %d): one scale "
                     "per channel.\n"
                     "__device__ __forceinline__ int lb_groups(int) { return 1; "
                     "}\n"
                     "__device__ __forceinline__ int lb_group_of(int, int) { "
                     "return 0; }\n",
                  r->line[LB_S_SCALES]);
  lb_buf_printf(b, "// Whether code row i of a unit may start a new group.\n"
                   "__device__ __forceinline__ constexpr bool lb_new_group(int "
                   "i) { return %s; }\n", starts);
  lb_buf_printf(b, "// dequant \"%s\" (line %d) as w = q * s + b, b per "
                   "group:\n"
                   "__device__ __forceinline__ float lb_offset(float s, const "
                   "lb_zero_t *z, int g) {\n",
                lb_dequant_text(r->dequant), r->line[LB_S_DEQUANT]);
  switch (r->dequant) {
    case LB_DQ_SUBMUL:
      lb_buf_puts(b, "  return -lb_zero_f32(z[g]) * s;\n}\n");
      break;
    case LB_DQ_MULADD:
      lb_buf_puts(b, "  (void)s;\n  return lb_zero_f32(z[g]);\n}\n");
      break;
    case LB_DQ_MUL:
      lb_buf_puts(b, "  (void)s; (void)z; (void)g;\n  return 0.f;\n}\n");
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

static void emit_entries(lb_buf *b, const lb_recipe *r, int n, int k,
                         int sms) {
  int bk;
  lb_buf_printf(b, "\n// ---- entry points: launch shapes planned for n = %d, "
                   "k = %d on %d SMs ----\n", n, k, sms);
  for (bk = 0; bk < LB_NBUCKET; bk++) {
    lb_gemv_cfg cfg;
    int m = lb_bucket_m(bk);
    lb_gemv_plan(r, n, k, sms, m, &cfg);
    lb_buf_printf(b,
      "// m <= %d: %d channel(s) per column group, %d warp(s) per group's K "
      "range, activations %s\n"
      "extern \"C\" __global__ void __launch_bounds__(LB_WARPS * 32)\n"
      "lb_gemv_m%d(const lb_act_t *x, const unsigned *w, const lb_scale_t *s,"
      " const lb_zero_t *z,\n"
      "            const lb_out_t *bias, lb_out_t *y, int m, int n, int k) {\n"
      "  lb_gemv<%d, %d, %d, %s>(x, w, s, z, bias, y, m, n, k);\n}\n",
      m, cfg.cols, cfg.split, cfg.stage ? "staged in shared memory"
                                        : "read through L1",
      m, m, cfg.cols, cfg.split, cfg.stage ? "true" : "false");
  }
}

lb_status lb_generate(const lb_recipe *r, int n, int k, int sms, char **src) {
  lb_buf b;
  lb_sizes sz;
  lb_status st;
  if (src) *src = NULL;
  if (src == NULL) return lb_fail(LB_EARG, "lb_generate: src is NULL");
  if ((st = lb_sizes_of(r, n, k, &sz)) != LB_OK) return st;
  if (sms <= 0 || sms > 1024)
    return lb_fail(LB_EARG, "lb_generate: sms = %d out of range", sms);
  lb_buf_init(&b);
  lb_buf_printf(&b,
    "// Generated by lowbit from recipe '%s' (%s).\n"
    "// Regenerate with: lowbit gen %s --n %d --k %d --sms %d\n"
    "// Self-contained: compiles with NVRTC or nvcc, no headers needed.\n\n"
    "constexpr int LB_WARPS = %d;\n\n",
    r->name, base_name(r->file), base_name(r->file), n, k, sms, LB_WARPS);
  emit_types(&b, r);
  emit_weights(&b, r);
  emit_scales(&b, r);
  lb_buf_puts(&b, lb_tpl_gemv);
  emit_entries(&b, r, n, k, sms);
  *src = lb_buf_take(&b);
  if (*src == NULL) return lb_fail(LB_EMEM, "lb_generate: out of memory");
  return LB_OK;
}
