/*
** lb_gen.c: the GEMV kind's source: the format prelude (lb_prelude.c), the
** skeleton from templates/gemv.cu, and the entry points with the launch
** shape lb_gvplan.c plans.  The output is deterministic: it depends on the
** recipe, n, k and sms only, and on LOWBIT_PLAN where that is set (the
** file's base name appears in comments, never a time or a full path).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_buf.h"
#include "lb_dump.h"
#include "lb_err.h"
#include "lb_format.h"
#include "lb_gen.h"
#include "lb_gvplan.h"
#include "lb_hash.h"
#include "lb_knob.h"
#include "lb_prelude.h"

/* What differs between sm_90's kernel and the one before it (the cluster,
** its stages, the ring's scales), as one conditional in the source:
** sm90's lines, then before's; note (or "") follows the #else.  Every
** such difference goes through here, so that the source says it one way
** (into out, len bytes: LB_ARCH_LEN holds any of them). */
enum { LB_ARCH_LEN = 400 };
static void by_arch(char *out, size_t len, const char *sm90,
                    const char *before, const char *note) {
  snprintf(out, len, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
           "%s#else%s\n%s#endif\n", sm90, note, before);
}

static void emit_entries(lb_buf *b, const lb_gemv_cfg *cfg) {
  int xs;
  char st[16];
  /* the stages, where sm_90's kernel has fewer than the one before it */
  if (cfg->fstages != cfg->stages) {
    char a[48], p[48], text[LB_ARCH_LEN];
    lb_buf_printf(b,
      "\n// Ring stages: %d on sm_90, where the cluster gives each warp one "
      "tile; %d before\n// it, where the block walks K without the cluster "
      "(lb_gvplan.c, plan()).\n", cfg->stages, cfg->fstages);
    snprintf(a, sizeof a, "constexpr int LB_STAGES = %d;\n", cfg->stages);
    snprintf(p, sizeof p, "constexpr int LB_STAGES = %d;\n", cfg->fstages);
    by_arch(text, sizeof text, a, p, "");
    lb_buf_puts(b, text);
    snprintf(st, sizeof st, "LB_STAGES");
  } else
    snprintf(st, sizeof st, "%d", cfg->stages);
  lb_buf_printf(b,
    "\n// Entry points (lb_gemv minBlocksPerSM %d: %s).\n",
    cfg->minb, cfg->minb > 1 ? "caps registers at 128 so two blocks share "
                                "an SM"
                              : "wide state, registers left to ptxas");
  if (cfg->xs_m > 0) {
    lb_buf_printf(b, "// lb_gemv_xs keeps x in shared memory, for m up to %d",
                  cfg->xs_m);
    if (lb_gemv_xs_most(cfg) > cfg->xs_m)
      lb_buf_printf(b, " (the runtime: up to %d\n// where the device has room, "
                       "lb_gemv_xs_rows)", lb_gemv_xs_most(cfg));
    lb_buf_puts(b, "; lb_gemv reads it from global memory.\n");
  } else
    lb_buf_puts(b, "// lb_gemv reads x from global memory (no lb_gemv_xs: "
                   "x does not fit, or this plan\n// uses too little of it to "
                   "copy it whole).\n");
  for (xs = 0; xs < 2; xs++) {
    if (xs && cfg->xs_m == 0) break;
    lb_buf_printf(b,
      "extern \"C\" __global__ void __launch_bounds__(LB_WARPS * 32, %d)%s\n"
      "%s(const lb_act_t *x, const unsigned *w, const lb_scale_t *s, "
      "const lb_zero_t *z,\n"
      "        const lb_out_t *bias, lb_out_t *y, int m, int early) {\n"
      "%s"
      "  lb_gemv_run<LB_SPLIT, %s, %s>(x, w, s, z, bias, y, m, early);\n}\n",
      xs ? cfg->xminb : cfg->minb, cfg->cluster > 1 ? " LB_CLUSTER_DIMS" : "",
      xs ? LB_KERNEL_XS : LB_KERNEL,
      cfg->slices > 1
          ? "  // Slices (plan: slices): row b of the grid takes x's rows "
            "8 b .. 8 b + 7\n  // and writes y's.\n"
            "  x += (size_t)blockIdx.y * 8 * LB_K;\n"
            "  y += (size_t)blockIdx.y * 8 * LB_N;\n"
            "  m = min(m - 8 * (int)blockIdx.y, 8);\n"
          : "",
      st, xs ? "true" : "false");
  }
}

/* The source's head: what the kernel is, for which rows, how to make it
** again, its launch shape, and the shape's constants. */
static void emit_head(lb_buf *b, const lb_recipe *r, int n, int k, int sms,
                      const lb_gemv_cfg *cfg) {
  char rows[128];          /* the rows of x, and how they are laid out */
  char span[96];           /* the rows of the op this kernel runs */
  char mopt[16] = "";      /* --m M where M = 1 would not make it */
  char file[sizeof r->file];   /* its name, as comments may hold it */
  if (cfg->slices > 1)
    snprintf(rows, sizeof rows, "up to %d rows of x,\n// in %d rows of "
             "blocks, 8 rows of x each (gridDim.y; plan: slices)",
             LB_MAX_M * cfg->slices, cfg->slices);
  else
    snprintf(rows, sizeof rows, "up to %d rows of x", LB_MAX_M * cfg->nf);
  /* the rows this kernel runs: 1 and 2..8 apart where hcl gives 2..8
  ** rows a clustered kernel (pcl: this is it; hcl: 1..8 rows' plan, one
  ** fragment) */
  _Static_assert(LB_GEMV_HI == 2, "the texts below say 1 and 2..8");
  if (cfg->pcl > 0)
    snprintf(span, sizeof span, "2..%d (plan: hcl; 1 row runs another "
             "kernel)", LB_MAX_M);
  else if (cfg->hcl > 0)
    snprintf(span, sizeof span, "1 (2..%d run another kernel, in clusters "
             "of %d: plan hcl)", LB_MAX_M, cfg->hcl);
  else
    snprintf(span, sizeof span, "1..%d", LB_MAX_M * cfg->nf * cfg->slices);
  /* (the rows that regenerate this kernel: the default, 1, makes 1..8's) */
  if (cfg->nf > 1 || cfg->slices > 1)
    snprintf(mopt, sizeof mopt, " --m %d", LB_MAX_M * cfg->nf * cfg->slices);
  else if (cfg->pcl > 0)
    snprintf(mopt, sizeof mopt, " --m %d", LB_GEMV_HI);
  lb_comment_text(lb_base_name(r->file), file, sizeof file);
  lb_buf_printf(b,
    "// Generated by lowbit from recipe '%s' (%s): the GEMV kind, for "
    "activation rows %s.\n"
    "// Regenerate with: lowbit gen %s --n %d --k %d%s --sms %d%s\n"
    "// Self-contained: compiles with NVRTC or nvcc, no headers needed.\n\n"
    "// Launch shape planned for n = %d, k = %d on %d SMs: %d block(s) of "
    "%d warps; each\n// 16-channel group's tiles split over %d warp(s), "
    "%d tile(s) in flight per warp%s\n// (LB_WARPS, LB_SPLIT and the cluster "
    "below); %s.\n"
    "// The shape is part of the kernel: addresses become immediates and\n"
    "// the code for a partial tile or block goes where none exists.\n"
    "constexpr int LB_N = %d, LB_K = %d;\n\n",
    r->name, file, span, strcmp(r->file, "stdin") ? file : "-", n, k,
    mopt, sms, strcmp(r->file, "stdin") ? "" : " < RECIPE", n, k, sms,
    cfg->grid, cfg->warps, cfg->split, cfg->stages,
    cfg->fstages != cfg->stages ? " on sm_90 (LB_STAGES)" : "", rows, n, k);
}

/* The rings and what travels in them: the plan's constants beside the
** prelude. */
static void emit_ring(lb_buf *b, const lb_gemv_cfg *cfg) {
  char srg[LB_ARCH_LEN];   /* the ring's scales, per arch where they differ */
  char a[64], note[96];
  /* sm_90's ring scales, and the kernel before it without them (fsr) */
  snprintf(a, sizeof a, "constexpr int LB_SRING = %d, LB_ZRING = %d;\n",
           cfg->sring, cfg->zring);
  snprintf(note, sizeof note, "   // (sm_90 only: the block before it, %d "
           "stages deep, has no room)", cfg->fstages);
  if (cfg->sring && !cfg->fsr)
    by_arch(srg, sizeof srg, a, "constexpr int LB_SRING = 0, LB_ZRING = 0;\n",
            note);
  else
    snprintf(srg, sizeof srg, "%s", a);
  lb_buf_printf(b,
    "// Shared memory a block's rings and resident scales may take on every "
    "part (the\n// planner's budget; x's rows, lb_gemv_xs's, come on top).\n"
    "constexpr int LB_SMEM_BUDGET = %d * 1024;\n", LB_RING_KB);
  lb_buf_printf(b,
    "// Shared memory beside the rings (planned): resident scales and zeros\n"
    "// in rows of LB_SROWB bytes (0: read from global memory), x in rows of\n"
    "// LB_XROWB.\n"
    "constexpr int LB_SROWB = %d, LB_XROWB = %d;\n"
    "// Words %s.\n"
    "constexpr bool LB_LAZY = %s;\n"
    "// Scales and zeros %s.\n"
    "%s"
    "// Brought into L2 with each tile's words: %s.\n"
    "constexpr int LB_PF = %d;\n"
    "// Fragments of 8 rows of x (2: 9..16 rows, each weight dequantised "
    "before the MMA).\n"
    "constexpr int LB_NF = %d;\n"
    "// A channel group's LB_SPLIT warps split %s.\n"
    "constexpr bool LB_RSPLIT = %s;\n"
    "// Copy groups a warp's only tile comes in, its math starting as the "
    "first lands\n// (plan: ph; 1: one group).\n"
    "constexpr int LB_PH = %d;\n\n",
    cfg->srowb, cfg->xrowb,
    cfg->lazy ? "read from the ring where they are used (wide codes)"
              : "read from the ring into registers a tile at a time",
    cfg->lazy ? "true" : "false",
    cfg->sring ? "travel in the ring with their tile's words, rows of LB_SRING "
                 "bytes\n// (zeros: LB_ZRING)"
               : "do not travel in the ring (LB_SRING 0)",
    srg,
    cfg->pf == 2   ? "scales, zeros and x read from global memory"
    : cfg->pf == 1 ? "scales and zeros read from global memory"
                   : "nothing",
    cfg->pf, cfg->nf,
    cfg->rsplit ? "every tile's code rows (plan: rsplit)" : "its tiles",
    cfg->rsplit ? "true" : "false", cfg->ph);
}

/* How the kernel is launched: early or plainly, and its warps, split and
** cluster (per arch where they differ). */
static void emit_launch(lb_buf *b, const lb_gemv_cfg *cfg) {
  lb_buf_puts(b, cfg->early
    ? "// Launched early (lb_op_overlap; `lowbit gen` writes the plain "
      "source, which differs\n// here only): the kernel before may still "
      "write x when this one starts, so x\n// is read by plain loads after "
      "the wait, not the read-only path, which need not\n// see those "
      "writes.\nconstexpr bool LB_EARLY = true;\n\n"
    : "// Launched plainly: x does not change while the kernel runs, and "
      "is read by the\n// read-only path (LB_EARLY: launched early, "
      "lb_op_overlap).\nconstexpr bool LB_EARLY = false;\n\n");
  if (cfg->cluster > 1) {
    lb_buf_printf(b,
      "// Narrow layer: on sm_90 a cluster of %d blocks splits K (their "
      "sums meet in\n// distributed shared memory); before sm_90, one "
      "block per channel block",
      cfg->cluster);
    if (cfg->fold > 1)
      lb_buf_printf(b, ",\n// a cluster's %d blocks of %d warps there one "
                    "of %d (plan: fold)", cfg->fold, cfg->warps,
                    cfg->warps * cfg->fold);
    char a[128], p[128], text[LB_ARCH_LEN];
    snprintf(a, sizeof a,
             "constexpr int LB_WARPS = %d, LB_SPLIT = %d, LB_CLUSTER = %d;\n"
             "#define LB_CLUSTER_DIMS __cluster_dims__(%d, 1, 1)\n",
             cfg->warps, cfg->split, cfg->cluster, cfg->cluster);
    snprintf(p, sizeof p,
             "constexpr int LB_WARPS = %d, LB_SPLIT = %d, LB_CLUSTER = 1;\n"
             "#define LB_CLUSTER_DIMS\n",
             cfg->warps * cfg->fold, cfg->split * cfg->fold);
    by_arch(text, sizeof text, a, p, "");
    lb_buf_printf(b, ".\n%s\n", text);
  } else
    lb_buf_printf(b, "constexpr int LB_WARPS = %d, LB_SPLIT = %d;\n"
                  "constexpr int LB_CLUSTER = 1;   // blocks splitting K "
                  "(a cluster on sm_90)\n\n", cfg->warps, cfg->split);
}

/* Plan and source into b (initialised here; freed by the caller, also on
** failure). */
static lb_status build(const lb_recipe *r, int n, int k, int m, int sms,
                       const char *tune, const char *from, int early,
                       lb_buf *b, lb_gemv_cfg *cfgp) {
  lb_format f;
  lb_gemv_cfg cfg;
  lb_status st;
  lb_buf_init(b);
  if (r == NULL) return lb_fail(LB_EARG, "lb_generate: recipe is NULL");
  if ((st = lb_format_for(r, n, k, sms, "lb_generate", &f)) != LB_OK ||
      (st = lb_gvplan(&f, n, k, sms, tune, from, m, &cfg)) != LB_OK)
    return st;
  cfg.early = early != 0;
  emit_head(b, r, n, k, sms, &cfg);
  lb_plan_comment(b, tune, from);
  lb_emit_prelude(b, &f);
  lb_emit_prelude_w16(b, &f);   /* the two-fragment kernel's dequantisation */
  emit_ring(b, &cfg);
  emit_launch(b, &cfg);
  lb_buf_puts(b, lb_tpl_gemv);
  emit_entries(b, &cfg);
  if (cfgp) *cfgp = cfg;
  return LB_OK;
}

lb_status lb_gen_gemv(const lb_recipe *r, int n, int k, int m, int sms,
                      const char *plan, const char *from, int early,
                      lb_gemv_cfg *cfgp, char **src) {
  lb_buf b;
  lb_gemv_cfg cfg;
  lb_status st;
  if (src) *src = NULL;
  if (src == NULL) return lb_fail(LB_EARG, "lb_generate: src is NULL");
  if ((st = build(r, n, k, m, sms, plan, from, early, &b, &cfg)) != LB_OK) {
    lb_buf_free(&b);
    return st;
  }
  if ((st = lb_dump_take(r, n, k, &b, src)) != LB_OK) return st;
  if (cfgp) *cfgp = cfg;
  return LB_OK;
}

lb_status lb_gemv_key(const lb_recipe *r, int n, int k, int sms,
                      uint64_t *key) {
  lb_buf b;
  lb_status st = build(r, n, k, 1, sms, NULL, NULL, 0, &b, NULL);
  if (st == LB_OK && b.oom) st = lb_fail(LB_EMEM, "lb_generate: no memory");
  if (st == LB_OK) *key = lb_hash(LB_HASH_INIT, b.p, b.n);
  lb_buf_free(&b);
  return st;
}

lb_status lb_generate(const lb_recipe *r, int n, int k, int sms, char **src) {
  return lb_gen_gemv(r, n, k, 1, sms, getenv("LOWBIT_PLAN"), "LOWBIT_PLAN",
                     0, NULL, src);
}
