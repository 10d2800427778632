/*
** lb_gemm.c: the GEMM kind's source: the format prelude with the
** dequantise-before-MMA hooks, templates/gemm.cu and the entry points, for
** the plans lb_gmplan.c makes (one a part: sm_90a, the 160 KB parts, the
** rest).  Deterministic, like the GEMV's source.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_buf.h"
#include "lb_dump.h"
#include "lb_err.h"
#include "lb_format.h"
#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_gmplan.h"
#include "lb_hash.h"
#include "lb_knob.h"
#include "lb_prelude.h"

/* Bucket b's rows in words ("65..160", "385 and more"), past the GEMV's
** reach. */
static void bucket_rows(int b, int reach, char *buf, size_t len) {
  int lo, hi;
  lb_gemm_span(b, reach, &lo, &hi);
  if (hi == 0)
    snprintf(buf, len, "%d and more", lo);
  else
    snprintf(buf, len, "%d..%d", lo, hi);
}

/* Parts whose blocks may take 160 KB of shared memory (sm_80: 163 KB,
** sm_90 and sm_100: 227 KB); the rest (sm_86, 87, 89, 120) give 99 KB.
** The source says the same in its #if (emit below): change both. */
int lb_gemm_hi(int arch) { return arch == 80 || arch == 90 || arch == 100; }
static const char hi_archs[] =
    "__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000";
/* sm_90 compiles for sm_90a (runtime/lb_nvrtc.c), which has wgmma: the
** source's first branch, which the same test names. */
static const char wg_arch[] =
    "__CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)";

const lb_gemm_cfg *lb_gemm_part(const lb_gemm_plans *p, int arch) {
  return arch == 90 ? &p->wg : lb_gemm_hi(arch) ? &p->hi : &p->lo;
}

/* One part's plan, planned within budget_kb of shared memory a block, as
** the constants the template reads.  LB_MINB: wgmma
** plans of up to 64 rows ask ptxas for the blocks an SM holds (fit), which
** split-K counts on (at 9..16 rows 95 registers left 2 of 256 threads
** anyway); at 128 rows that cap (128 registers) spilled 48 to 84 bytes
** (a16w4, a16w8, bf16w4, a16w1 on sm_90a), so one block an SM there
** (finish: bs=1), as the 180 registers it takes allow. */
static void emit_plan(lb_buf *b, const lb_format *f, int k, int budget_kb,
                      const lb_gemm_cfg *c) {
  lb_buf_printf(b,
    "constexpr int LB_SMEM_BUDGET = %d * 1024;   // what the planner let a "
    "block take here\n", budget_kb);
  lb_buf_printf(b,
    "// blocks of %d rows x %d channels, %d x %d warps (rows x channels), "
    "sub-stages of\n// %d code rows (%d k-values) copying up to %d word(s) "
    "per lane; %d block(s) along N\n"
    "constexpr int LB_BM = %d, LB_BN = %d, LB_WARPS_M = %d, LB_WARPS_N = %d;\n"
    "constexpr int LB_WARPS_K = %d;   // warps taking alternate code rows\n"
    "constexpr int LB_R = %d, LB_WS = %d;\n"
    "constexpr int LB_GSS = %d;   // scale groups a sub-stage meets\n"
    "constexpr int LB_GSTEP = %d;   // code rows per group slot (0: groups "
    "and sub-stages do not align)\n"
    "constexpr int LB_NGROUPS = %d;\n"
    "constexpr int LB_PLAN_STAGE_B = %d;   // shared memory per stage\n"
    "// Resident scales and zeros: rows of LB_SROWB and LB_ZROWB bytes after "
    "the stages\n// (0: none).\n"
    "constexpr int LB_SROWB = %d, LB_ZROWB = %d;\n"
    "// Staged scales and zeros: a channel's groups of a sub-stage, LB_SSTG and "
    "LB_ZSTG\n// bytes, in each stage (0: none; LOWBIT_GEMM sg).\n"
    "constexpr int LB_SSTG = %d, LB_ZSTG = %d;\n"
    "constexpr int LB_STAGES = %d;\n"
    "constexpr bool LB_WG = %s;   // MMA by wgmma (LOWBIT_GEMM wg)\n"
    "constexpr bool LB_CSUM = %s;   // split-K's sums meet in a cluster "
    "(LOWBIT_GEMM cl)\n"
    "constexpr int LB_MINB = %d;   // blocks an SM asked of ptxas\n"
    "constexpr bool LB_WREG = %s;   // words to registers, not the stages "
    "(LOWBIT_GEMM wr)\n"
    "constexpr bool LB_TMA = %s;   // activations by TMA, stages by mbarriers "
    "(LOWBIT_GEMM tm)\n"
    "constexpr int LB_UN = %d;   // the loop's sets of words, unrolled (LOWBIT_GEMM un)\n",
    c->bm, c->bn, c->warps_m, c->warps_n, c->r, 32 * c->r, c->ws, c->gridn,
    c->bm, c->bn, c->warps_m, c->warps_n, c->warps_k, c->r, c->ws, c->gss,
    f->per_channel || f->group % (32 * c->r) == 0 ? c->r
    : (32 * c->r) % f->group == 0                 ? f->group / 32 : 0,
    lb_format_groups(f, k), c->stage, c->srowb, c->zrowb, c->sstg, c->zstg, c->stages,
    c->wg ? "true" : "false", c->csum ? "true" : "false",
    c->wg && c->bm <= 64 ? c->fit : 1, c->wr ? "true" : "false",
    c->tm ? "true" : "false", c->un);
}

/* wgmma m64nNk16 for the sm_90a plan's N = 8 nf rows: its accumulators
** are the tile's nf fragments of 4 (thread (g, t) of warp w: channels
** 16 w + g (+ 8), rows 8 f + 2 t (+ 1)), as mma.sync's. */
static void emit_wgmma(lb_buf *b, const lb_format *f, int nf) {
  int i;
  const char *t = f->act == LB_BF16 ? "bf16" : "f16";
  lb_buf_printf(b,
    "// d += A (64 channels x 16 k, registers) * B (16 k x %d rows, shared "
    "memory at desc)\n"
    "template <>\n"
    "__device__ __forceinline__ void lb_wgmma<%d>(float (&d)[%d][4], "
    "unsigned a0, unsigned a1,\n"
    "                                             unsigned a2, unsigned a3, "
    "unsigned long long desc) {\n"
    "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
    "               \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {",
    8 * nf, nf, nf, 4 * nf + 5, 8 * nf, t, t);
  for (i = 0; i < 4 * nf; i++)
    lb_buf_printf(b, "%s%%%d", i ? ", " : "", i);
  lb_buf_printf(b, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, 0;\\n}\\n\"\n"
                   "               :", 4 * nf, 4 * nf + 1, 4 * nf + 2,
                4 * nf + 3, 4 * nf + 4);
  for (i = 0; i < 4 * nf; i++)
    lb_buf_printf(b, "%s\"+f\"(d[%d][%d])",
                  i == 0 ? " " : i % 4 ? ", " : ",\n                 ",
                  i / 4, i % 4);
  lb_buf_puts(b, "\n               : \"r\"(a0), \"r\"(a1), \"r\"(a2), "
                 "\"r\"(a3), \"l\"(desc), \"r\"(1));\n}\n");
}

/* Plan and source into b (initialised here; freed by the caller, also on
** failure). */
static lb_status build(const lb_recipe *r, int n, int k, int bucket, int sms,
                       const char *plan, const char *from, lb_buf *b,
                       lb_gemm_plans *p) {
  char rows[32], file[sizeof r->file];
  lb_format f;
  int plain;
  lb_status st;
  lb_buf_init(b);
  if (r == NULL)
    return lb_fail(LB_EARG, "lb_generate: recipe is NULL");
  /* (the rules' reach at this shape: the source is the rules' bucket) */
  bucket_rows(bucket, lb_gemv_rows(r, n, k), rows, sizeof rows);
  if ((st = lb_gmplan(r, n, k, bucket, sms, "lb_generate", plan, from, &f, p,
                      &plain)) != LB_OK)
    return st;
  lb_comment_text(lb_base_name(r->file), file, sizeof file);
  lb_buf_printf(b,
    "// Generated by lowbit from recipe '%s' (%s): the GEMM kind, for "
    "activation rows %s.\n"
    "// Regenerate with: lowbit gen %s --n %d --k %d --m %d --sms %d%s\n"
    "// Self-contained: compiles with NVRTC or nvcc, no headers needed.\n\n"
    "constexpr int LB_N = %d, LB_K = %d;\n\n",
    r->name, file, rows, strcmp(r->file, "stdin") ? file : "-", n, k,
    lb_gemm_bucket_m(bucket), sms,
    strcmp(r->file, "stdin") ? "" : " < RECIPE", n, k);
  lb_plan_comment(b, plan, from);
  lb_emit_prelude(b, &f);
  lb_emit_prelude_w16(b, &f);
  /* plain=1: the plan with its dequantisation left out (the packed words
  ** go to the tensor cores as they are): a wrong result in the time of
  ** the same data movement and MMAs, to see what the dequantisation
  ** costs.  Never by default. */
  lb_buf_printf(b, "constexpr bool LB_PLAIN = %s;   // LOWBIT_GEMM plain=1: "
                "wrong results, for timing\n\n",
                plain ? "true" : "false");
  lb_buf_printf(b,
    "// wgmma with the plan's tile of rows (the sm_90a plan's; no other "
    "calls it).\n"
    "template <int NF>\n"
    "__device__ void lb_wgmma(float (&d)[NF][4], unsigned a0, unsigned a1, "
    "unsigned a2, unsigned a3,\n"
    "                         unsigned long long desc);\n\n"
    "// Plan for n = %d, k = %d, rows %s on %d SMs: sm_90 (compiled for "
    "sm_90a), then by\n// the part's shared memory (%d KB or %d KB a "
    "block).\n"
    "#if defined(__CUDA_ARCH__) && %s\n",
    n, k, rows, sms, LB_SMEM_HI_KB, LB_SMEM_LO_KB, wg_arch);
  emit_plan(b, &f, k, lb_gemm_hi_kb(&p->wg), &p->wg);
  if (p->wg.wg) emit_wgmma(b, &f, p->wg.bm / 8);
  lb_buf_printf(b, "#elif defined(__CUDA_ARCH__) && (%s)\n", hi_archs);
  emit_plan(b, &f, k, LB_SMEM_HI_KB, &p->hi);
  lb_buf_puts(b, "#else\n");
  emit_plan(b, &f, k, LB_SMEM_LO_KB, &p->lo);
  lb_buf_puts(b, "#endif\n\n");
  lb_buf_puts(b, lb_tpl_gemm);
  lb_buf_printf(b,
    "\n// Entry points: grid (ceil(%d / LB_BN), ceil(m / LB_BM), splits), "
    "LB_GWARPS x 32\n// threads, shared memory LB_STAGES x LB_PLAN_STAGE_B + "
    "resident scales (and\n// LB_TMA's barriers); with splits > 1, ws holds "
    "splits x m x %d floats and %s\n// adds them up; xmap: x as a tensor map "
    "(rows m, LB_K; boxes of 64 x LB_BM, the\n// 128-byte swizzle) where "
    "LB_TMA, else unread.\n"
    "extern \"C\" __global__ void __launch_bounds__(LB_GWARPS * 32, LB_MINB)\n"
    "%s(const lb_act_t *x, const unsigned *w, const lb_scale_t *s, "
    "const lb_zero_t *z,\n"
    "        const lb_out_t *bias, lb_out_t *y, int m, float *ws,\n"
    "        const __grid_constant__ lb_tmap xmap) {\n"
    "  lb_gemm_body(x, w, s, z, bias, y, m, ws, &xmap);\n}\n"
    "extern \"C\" __global__ void %s(const float *ws, const lb_out_t *bias, "
    "lb_out_t *y, int m,\n"
    "                                  int splits) {\n"
    "  lb_gemm_sum_body(ws, bias, y, m, splits);\n}\n",
    n, n, LB_GEMM_SUM, LB_GEMM_KERNEL, LB_GEMM_SUM);
  return LB_OK;
}

lb_status lb_gen_gemm(const lb_recipe *r, int n, int k, int bucket, int sms,
                      const char *plan, const char *from,
                      lb_gemm_plans *plansp, char **src) {
  lb_buf b;
  lb_gemm_plans p;
  lb_status st;
  if (src) *src = NULL;
  if (src == NULL)
    return lb_fail(LB_EARG, "lb_generate: src is NULL");
  if ((st = build(r, n, k, bucket, sms, plan, from, &b, &p)) != LB_OK) {
    lb_buf_free(&b);
    return st;
  }
  if ((st = lb_dump_take(r, n, k, &b, src)) != LB_OK) return st;
  if (plansp) *plansp = p;
  return LB_OK;
}

lb_status lb_gemm_key(const lb_recipe *r, int n, int k, int bucket, int sms,
                      uint64_t *key) {
  lb_buf b;
  lb_gemm_plans p;
  lb_status st = build(r, n, k, bucket, sms, NULL, NULL, &b, &p);
  if (st == LB_OK && b.oom) st = lb_fail(LB_EMEM, "lb_generate: no memory");
  if (st == LB_OK) *key = lb_hash(LB_HASH_INIT, b.p, b.n);
  lb_buf_free(&b);
  return st;
}

