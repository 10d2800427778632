/*
** lb_kind.c: which kernel kind serves m activation rows (the GEMV up to
** the GEMV's reach, else the GEMM of m's bucket), its source, and a description of
** its kernel that callers can print without reading the generator's
** structs (lowbit compile, bindings).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_gemm.h"
#include "lb_gen.h"

static lb_status check_m(int m, const char *fn) {
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "%s: m = %d; ops take 1..%d rows", fn, m,
                   LB_MAX_ROWS);
  return LB_OK;
}

/* The GEMV's reach at N x K under LOWBIT_PLAN (its rows knob), else the
** rules'. */
static int reach(const lb_recipe *r, int n, int k) {
  return lb_gemv_reach(r, n, k, getenv("LOWBIT_PLAN"));
}

static lb_status rows_at(const lb_recipe *r, int n, int k, int m,
                         lb_rows *out, const char *fn) {
  lb_status st;
  int top;
  if (out) memset(out, 0, sizeof *out);
  if (r == NULL || out == NULL)
    return lb_fail(LB_EARG, "%s: %s is NULL", fn, r ? "out" : "recipe");
  if ((st = check_m(m, fn)) != LB_OK) return st;
  top = reach(r, n, k);
  if (m <= top) {
    /* a kernel a fragment count nf: rows 4 nf + 1 .. 8 nf (1..8 for one) */
    const int nf = lb_gemv_frags(m);
    snprintf(out->kind, sizeof out->kind, "gemv");
    out->lo = nf == 1 ? 1 : LB_MAX_M * nf / 2 + 1;
    out->hi = LB_MAX_M * nf < top ? LB_MAX_M * nf : top;
    out->bucket = nf == 4 ? -3 : -nf;
    return LB_OK;
  }
  snprintf(out->kind, sizeof out->kind, "gemm");
  out->bucket = lb_gemm_bucket(m);
  lb_gemm_span(out->bucket, top, &out->lo, &out->hi);
  return LB_OK;
}

lb_status lb_rows_at(const lb_recipe *r, int n, int k, int m, lb_rows *out) {
  if (n < 1 || k < 1) {
    if (out) memset(out, 0, sizeof *out);
    return lb_fail(LB_EARG, "lb_rows_at: N x K = %d x %d; a layer has 1 or "
                   "more of each", n, k);
  }
  return rows_at(r, n, k, m, out, "lb_rows_at");
}

lb_status lb_rows_of(const lb_recipe *r, int m, lb_rows *out) {
  return rows_at(r, 0, 0, m, out, "lb_rows_of");
}

lb_status lb_generate_m(const lb_recipe *r, int n, int k, int m, int sms,
                        char **src) {
  lb_status st;
  if (src) *src = NULL;
  if ((st = check_m(m, "lb_generate_m")) != LB_OK) return st;
  if (m <= reach(r, n, k))
    return lb_gen_gemv(r, n, k, m, sms, getenv("LOWBIT_PLAN"), "LOWBIT_PLAN",
                       0, NULL, src);
  return lb_gen_gemm(r, n, k, lb_gemm_bucket(m), sms, getenv("LOWBIT_GEMM"),
                     "LOWBIT_GEMM", NULL, src);
}

lb_status lb_generate_plan(const lb_recipe *r, int n, int k, int m, int sms,
                           const char *plan, char **src) {
  lb_status st;
  if (src) *src = NULL;
  if ((st = check_m(m, "lb_generate_plan")) != LB_OK) return st;
  if (m <= lb_gemv_reach(r, n, k, plan))
    return lb_gen_gemv(r, n, k, m, sms, plan, "lb_generate_plan", 0, NULL,
                       src);
  return lb_gen_gemm(r, n, k, lb_gemm_bucket(m), sms, plan,
                     "lb_generate_plan", NULL, src);
}

lb_status lb_plan_candidates(const lb_recipe *r, int n, int k, int m,
                             int sms, int arch, const char *base,
                             char (*out)[LB_PLAN_LEN], int max, int *count) {
  lb_status st;
  if (count) *count = 0;
  if (count == NULL)
    return lb_fail(LB_EARG, "lb_plan_candidates: count is NULL");
  if ((st = check_m(m, "lb_plan_candidates")) != LB_OK) return st;
  if (m <= lb_gemv_rows(r, n, k))
    return lb_gemv_candidates(r, n, k, m, sms, arch, base, out, max, count);
  return lb_gemm_candidates(r, n, k, lb_gemm_bucket(m), sms, arch,
                            base, out, max, count);
}

/* ", K split N ways " and where the sums meet, into buf; nothing for one
** way. */
static void say_split(char *buf, size_t len, int ways, const char *where) {
  if (ways > 1) snprintf(buf, len, ", K split %d ways %s", ways, where);
}

/* The kernel m rows use: kind, block, and its plan in words into text
** (len bytes; *need: the bytes the whole text takes).  fn names the
** caller in messages. */
/* describe's text of the GEMV's plan for m rows; *w: its length. */
static lb_status describe_gemv(const lb_recipe *r, int n, int k, int m,
                               int sms, lb_kernel_desc *out, char *text,
                               size_t len, int *wout) {
  lb_gemv_cfg c;
  lb_status st;
  int w;
  char fold[48] = "", fst[32] = "", more[48] = "", xs[96], frags[96];
  if ((st = lb_plan_gemv(r, n, k, m, sms, getenv("LOWBIT_PLAN"),
                         "LOWBIT_PLAN", &c)) != LB_OK)
    return st;
  snprintf(out->kind, sizeof out->kind, "gemv");
  if (lb_gemv_xs_most(&c) > c.xs_m)   /* (lb_gemv_xs_rows may add rows) */
    snprintf(more, sizeof more, " (up to %d where the device has room)",
             lb_gemv_xs_most(&c));
  if (c.xs_m > 0)
    snprintf(xs, sizeof xs, "x resident up to m = %d%s", c.xs_m, more);
  else
    snprintf(xs, sizeof xs, "x from global memory");
  if (c.fold > 1)
    snprintf(fold, sizeof fold, " (before sm_90 %d warps, split %d)",
             c.warps * c.fold, c.split * c.fold);
  if (c.fstages != c.stages)
    snprintf(fst, sizeof fst, " (before sm_90 %d)", c.fstages);
  if (c.slices > 1)
    snprintf(frags, sizeof frags, ", %d..%d rows as %d rows of blocks "
             "(slices), 8 each", LB_MAX_M * c.slices / 2 + 1,
             LB_MAX_M * c.slices, c.slices);
  else if (c.hcl > 0)   /* (1 and 2..8 rows apart; pcl: 2..8's) */
    snprintf(frags, sizeof frags, c.pcl > 0
             ? ", for 2..8 rows (hcl; 1 row runs another kernel)"
             : ", for 1 row (2..8 run in clusters of %d: hcl)", c.hcl);
  else
    snprintf(frags, sizeof frags, "%s",
             c.nf == 4   ? ", four fragments of x (17..32 rows)"
             : c.nf == 2 ? ", two fragments of x (9..16 rows)"
                         : "");
  w = snprintf(text, len,
               "%d block(s) of %d warps, split %d%s, cluster %d%s, %d "
               "stage(s)%s%s, %s%s", c.grid, c.warps,
               c.split, c.rsplit ? " (a tile's code rows)" : "", c.cluster,
               fold, c.stages, fst, c.lazy ? " (lazy)" : "", xs, frags);
  {   /* sm_90's block (a 160 KB part's, as sm_80's when nothing folds);
      ** the 99 KB parts come before sm_90 and run the folded one */
    int t;
    lb_gemv_block(&c, 90, &out->threads, &out->smem_hi);
    lb_gemv_block(&c, 89, &t, &out->smem_lo);
  }
  *wout = w;
  return LB_OK;
}

/* The same of the GEMM bucket that takes m rows. */
static lb_status describe_gemm(const lb_recipe *r, int n, int k, int m,
                               int sms, lb_kernel_desc *out, char *text,
                               size_t len, int *wout) {
  lb_gemm_plans p;
  const lb_gemm_cfg *c = &p.hi, *lo = &p.lo, *wg = &p.wg;
  const int b = lb_gemm_bucket(m);
  lb_status st;
  int w;
  char split[48] = "", small[96] = "", hopper[256] = "", apart[160] = "";
  if ((st = lb_plan_gemm(r, n, k, b, sms, getenv("LOWBIT_GEMM"),
                         "LOWBIT_GEMM", &p)) != LB_OK)
    return st;
  snprintf(out->kind, sizeof out->kind, "gemm");
  {
    const int sp = lb_gemm_splits(c, m, sms);
    say_split(split, sizeof split, sp,
              !wg->wg && lb_gemm_cluster(wg, sp) ? "(sm_90: in a cluster)"
                                                  : "with a work space");
  }
  /* the 99 KB parts' plan: what differs */
  if (lo->r != c->r || lo->stages != c->stages || lo->bn != c->bn ||
      lo->sres != c->sres) {
    char bn[24] = "";
    if (lo->bn != c->bn) snprintf(bn, sizeof bn, ", %d channels", lo->bn);
    snprintf(small, sizeof small, "; 99 KB parts: %d code rows, %d "
             "stages%s%s", lo->r, lo->stages, bn,
             lo->sres == c->sres ? ""
             : lo->sres          ? ", scales resident"
                                 : ", scales not resident");
  }
  /* sm_90's plan where it is wgmma's, with its own split and block (the
  ** desc's threads and smem_hi are the mma.sync plan's) */
  if (wg->wg) {
    const int wsp = lb_gemm_splits(wg, m, sms);
    char wsplit[48] = "";
    say_split(wsplit, sizeof wsplit, wsp,
              lb_gemm_cluster(wg, wsp) ? "in a cluster" : "with a work space");
    snprintf(hopper, sizeof hopper, "; sm_90 wgmma: %d x %d tiles, %d x %d "
             "warpgroups, %d code rows, %d stages%s%s, %d threads, %d "
             "bytes of shared memory", wg->bm, wg->bn, wg->warps_n / 4,
             wg->warps_k, wg->r, wg->stages, wg->tm ? ", x by TMA" : "",
             wsplit, wg->threads, wg->smem);
  }
  /* the last rows apart (lb_gemm_tail; lb_op_run also wants both
  ** kernels planned) */
  {
    const int t = lb_gemm_tail(c, m), tw = lb_gemm_tail(wg, m);
    if (t == tw && t > 0)
      snprintf(apart, sizeof apart, "; runs %d rows, then the last %d on "
               "their own kernel (lb_op_tail)", m - t, t);
    else if (t > 0)
      snprintf(apart, sizeof apart, "; runs %d rows, then the last %d on "
               "their own kernel (lb_op_tail; sm_90: %s)", m - t, t,
               tw ? "other rows" : "one launch");
    else if (tw > 0)
      snprintf(apart, sizeof apart, "; on sm_90 runs %d rows, then the "
               "last %d on their own kernel (lb_op_tail)", m - tw, tw);
  }
  w = snprintf(text, len,
               "bucket %d: %d x %d tiles, warps %d x %d x %d (rows, "
               "channels, K), %d code rows a sub-stage, %d stages%s%s%s%s%s",
               b, c->bm, c->bn, c->warps_m, c->warps_n, c->warps_k, c->r,
               c->stages, c->sres ? ", scales resident" : "", split, small,
               hopper, apart);
  out->threads = c->threads;
  out->smem_hi = c->smem;
  out->smem_lo = lo->smem;
  *wout = w;
  return LB_OK;
}

static lb_status describe(const lb_recipe *r, int n, int k, int m, int sms,
                          const char *fn, lb_kernel_desc *out, char *text,
                          size_t len, size_t *need) {
  lb_status st;
  int w;
  memset(out, 0, sizeof *out);
  if (r == NULL) return lb_fail(LB_EARG, "%s: recipe is NULL", fn);
  if ((st = check_m(m, fn)) != LB_OK) return st;
  st = m <= reach(r, n, k)
           ? describe_gemv(r, n, k, m, sms, out, text, len, &w)
           : describe_gemm(r, n, k, m, sms, out, text, len, &w);
  if (st != LB_OK) return st;
  if (w < 0) return lb_fail(LB_EARG, "%s: the plan's text", fn);
  if (need) *need = (size_t)w + 1;
  return LB_OK;
}

lb_status lb_describe(const lb_recipe *r, int n, int k, int m, int sms,
                      lb_kernel_desc *out) {
  size_t need = 0;
  lb_status st;
  if (out == NULL) return lb_fail(LB_EARG, "lb_describe: out is NULL");
  st = describe(r, n, k, m, sms, "lb_describe", out, out->plan,
                sizeof out->plan, &need);
  if (st == LB_OK && need > sizeof out->plan)   /* cut: say so */
    memcpy(out->plan + sizeof out->plan - 4, "...", 4);
  return st;
}

lb_status lb_describe_plan(const lb_recipe *r, int n, int k, int m, int sms,
                           char *buf, size_t len, size_t *need) {
  lb_kernel_desc d;
  size_t w = 0;
  lb_status st;
  if (need) *need = 0;
  if (buf == NULL || len == 0)
    return lb_fail(LB_EARG, "lb_describe_plan: buf is NULL or len 0");
  buf[0] = '\0';
  if ((st = describe(r, n, k, m, sms, "lb_describe_plan", &d, buf, len,
                     &w)) != LB_OK)
    return st;
  if (need) *need = w;
  if (w > len) {
    buf[0] = '\0';
    return lb_fail(LB_EARG, "lb_describe_plan: the plan's text takes %zu "
                   "bytes, len is %zu", w, len);
  }
  return LB_OK;
}

/* The buckets' plans for one device part, made as lb_op_create makes them
** without a tuning table (LOWBIT_GEMM or the rules), each the first time
** the run asks for it (a run needs one bucket, three with a tail). */
typedef struct parts {
  const lb_recipe *r;
  int n, k, sms, arch;
  lb_gemm_plans p[LB_GEMM_BUCKETS];
  lb_status st[LB_GEMM_BUCKETS];
  int planned[LB_GEMM_BUCKETS];
} parts;

static lb_status part_plan(parts *ps, int b) {
  if (!ps->planned[b])
    ps->st[b] = lb_plan_gemm(ps->r, ps->n, ps->k, b, ps->sms,
                             getenv("LOWBIT_GEMM"), "LOWBIT_GEMM", &ps->p[b]);
  ps->planned[b] = 1;
  return ps->st[b];
}

/* (lb_gemm_cfg_fn's ctx is const for the op's lookups; this one plans on
** first use, in the query's own memo) */
static const lb_gemm_cfg *part_cfg(const void *ctx, int b) {
  parts *ps = (parts *)ctx;
  return part_plan(ps, b) == LB_OK ? lb_gemm_part(&ps->p[b], ps->arch)
                                   : NULL;
}

lb_status lb_workspace_for(const lb_recipe *r, int n, int k, int m, int sms,
                           int arch, size_t *bytes) {
  parts *ps;
  lb_gemv_cfg gv;
  lb_status st;
  int b, lead, rows;
  if (bytes) *bytes = 0;
  if (r == NULL || bytes == NULL)
    return lb_fail(LB_EARG, "lb_workspace_for: %s is NULL",
                   r ? "bytes" : "recipe");
  if ((st = check_m(m, "lb_workspace_for")) != LB_OK) return st;
  if (sms < 1 || arch < 80 || arch > 200)
    return lb_fail(LB_EARG, "lb_workspace_for: %d SMs of sm_%d (1 SM or "
                   "more, sm_80 or newer)", sms, arch);
  /* the shape's errors as lb_op_create's (lb_format_for) */
  if ((st = lb_plan_gemv(r, n, k, 1, sms, NULL, "lb_workspace_for", &gv)) !=
      LB_OK)
    return st;
  rows = reach(r, n, k);
  if (m <= rows) return LB_OK;   /* the GEMV splits in clusters or not at all */
  if ((ps = malloc(sizeof *ps)) == NULL)
    return lb_fail(LB_EMEM, "lb_workspace_for: no memory");
  ps->r = r;
  ps->n = n;
  ps->k = k;
  ps->sms = sms;
  ps->arch = arch;
  memset(ps->planned, 0, sizeof ps->planned);
  lead = lb_gemm_lead(part_cfg, ps, rows, m);
  b = lb_gemm_bucket(lead);
  if ((st = part_plan(ps, b)) != LB_OK) {
    /* (planned again: later plans took lb_errmsg) */
    lb_plan_gemm(r, n, k, b, sms, getenv("LOWBIT_GEMM"), "LOWBIT_GEMM",
                 &ps->p[b]);
    st = lb_fail(st, "lb_workspace_for: no GEMM for this shape: %s",
                 lb_errmsg());
  } else {
    /* clusters from sm_90 (lb_op_create's driver launches them) */
    *bytes = lb_gemm_run_need(part_cfg, ps, rows, m, lead, n, sms, arch >= 90);
  }
  free(ps);
  return st;
}
