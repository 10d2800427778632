/*
** test_plan.c: the planners' invariants over the pairwise recipe sweep
** and a range of shapes (no compile).  GEMV: the plan covers every
** channel, its warps, split and cluster are what the template can run, and
** its shared memory fits the parts it is compiled for (99 KB a block on
** sm_86/89: the kernel without resident x must load there).  GEMM, every
** bucket: tiles the template's static_asserts accept, whole channel
** blocks, a pipeline of two stages or more within each part's budget.
** The same for every candidate plan lowbit tune may try.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_layout.h"
#include "lb_ref.h"
#include "lb_sweep.h"
#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* The recipe `text` as file `name`; NULL (and a failed check) if it does
** not load. */
static lb_recipe *load(const char *name, const char *text) {
  lb_recipe *r = NULL;
  if (lb_recipe_load_text(name, text, strlen(text), &r) != LB_OK) {
    CHECK(0, "%s: %s", name, lb_errmsg());
    return NULL;
  }
  return r;
}

/* The GEMV's plan for (r, n, k, sms) and m rows, with plan's knobs (NULL:
** none). */
static void check_plan_with(const lb_recipe *r, const char *name, int n,
                            int k, int m, int sms, const char *plan) {
  lb_gemv_cfg c;
  lb_layout lay;
  char *src = NULL;
  int tiles, groups, red;
  if (lb_gen_gemv(r, n, k, m, sms, plan, "test", 0, &c, &src) != LB_OK) {
    CHECK(0, "%s n=%d k=%d%s%s: %s", name, n, k, plan ? " plan " : "",
          plan ? plan : "", lb_errmsg());
    return;
  }
  free(src);
  {
    /* the plan in words, whole (lb_knobs_text cuts what does not fit) */
    char words[LB_PLAN_LEN + 1];
    lb_gemv_plan_text(&c, words, sizeof words);
    CHECK(strlen(words) + 1 < LB_PLAN_LEN, "%s n=%d k=%d: plan \"%s\" of "
          "%zu characters leaves LB_PLAN_LEN (%d) no room", name, n, k, words,
          strlen(words), LB_PLAN_LEN);
    /* and the words make the same plan: lowbit tune times the rules, and
    ** the tuning table and lb_op_overlap keep plans, as their words */
    {
      lb_gemv_cfg w;
      char *s2 = NULL;
      if (lb_gen_gemv(r, n, k, m, sms, words, "test", 0, &w, &s2) != LB_OK)
        CHECK(0, "%s n=%d k=%d m=%d: its plan's words \"%s\": %s", name, n,
              k, m, words, lb_errmsg());
      else
        CHECK(memcmp(&w, &c, sizeof w) == 0, "%s n=%d k=%d m=%d: its plan's "
              "words \"%s\" make another plan (x resident to m = %d, not "
              "%d; %d bytes of shared memory, not %d)", name, n, k, m, words,
              w.xs_m, c.xs_m, w.smem, c.smem);
      free(s2);
    }
  }
  /* m's rows in fragments of x, or in slices: rows of the one-fragment
  ** kernel's blocks, where the rules find its grid that many times over
  ** within the SMs (within twice the SMs for 1-, 3- and 5-bit codes; f32
  ** dequantisation wherever its GEMV takes the rows) */
  {
    const int frags = m > 2 * LB_MAX_M ? 4 : m > LB_MAX_M ? 2 : 1;
    CHECK(c.slices == 1 ? c.nf == frags : c.nf == 1 && c.slices == frags,
          "%s n=%d k=%d m=%d: %d fragments, %d slices", name, n, k, m, c.nf,
          c.slices);
    if (plan == NULL && frags > 1) {
      const int twice = r->bits == 1 || r->bits == 3 || r->bits == 5;
      /* (f32 dequantisation, bf16 8-bit codes: slices or no GEMV) */
      const int f32 = r->bits == 8 && r->act == LB_BF16;
      lb_gemv_cfg one, two;
      /* (3- and 5-bit codes keep the fragments where their plan fills the
      ** SMs by a cluster) */
      const int kept =
          (r->bits == 3 || r->bits == 5) &&
          lb_plan_gemv(r, n, k, m, sms, "slices=0", "test", &two) == LB_OK &&
          two.cluster > 1 && (long long)two.grid * two.cluster > sms;
      CHECK(lb_plan_gemv(r, n, k, 1, sms, NULL, "test", &one) == LB_OK,
            "%s: %s", name, lb_errmsg());
      CHECK((c.slices > 1) ==
                (f32 || (!kept && (long long)one.grid * one.cluster * frags <=
                                      (long long)sms * (twice ? 2 : 1))),
            "%s n=%d k=%d m=%d: %d slices of %d blocks in clusters of %d "
            "on %d SMs", name, n, k, m, c.slices, one.grid, one.cluster,
            sms);
      one.slices = c.slices;
      CHECK(c.slices == 1 || memcmp(&one, &c, sizeof c) == 0,
            "%s n=%d k=%d m=%d: slices of another plan than 1..8 rows'",
            name, n, k, m);
    }
  }
  /* 2..8 rows in clusters of 4 (hcl), the rules' where 7-bit codes in
  ** blocks of 2 warps (split 2, no cluster) have 8 tiles of K and at
  ** least three blocks an SM; that kernel is 1 row's plan but its
  ** cluster (and what follows from it), its words 1 row's */
  if (m <= LB_MAX_M) {
    lb_gemv_cfg one, hi;
    lb_layout l;
    char w1[LB_PLAN_LEN], w5[LB_PLAN_LEN];
    lb_layout_of(r, &l);
    if (lb_plan_gemv(r, n, k, 1, sms, plan, "test", &one) == LB_OK &&
        lb_plan_gemv(r, n, k, LB_MAX_M, sms, plan, "test", &hi) == LB_OK) {
      const int t = lb_kpad(&l, k) / l.tile;
      if (plan == NULL)
        CHECK((one.hcl > 0) ==
                  (r->bits == 7 && one.lazy && !one.rsplit &&
                   one.cluster == 1 && one.fold == 1 && one.warps == 2 &&
                   one.split == 2 && t == 8 && one.grid >= 3 * sms) &&
                  (one.hcl == 0 || one.hcl == 4),
              "%s n=%d k=%d: hcl %d (cluster %d, %d warps, split %d, %d "
              "tiles, %d blocks on %d SMs)", name, n, k, one.hcl,
              one.cluster, one.warps, one.split, t, one.grid, sms);
      lb_gemv_plan_text(&one, w1, sizeof w1);
      lb_gemv_plan_text(&hi, w5, sizeof w5);
      CHECK(strcmp(w1, w5) == 0, "%s n=%d k=%d: 2..8 rows' words \"%s\", "
            "not 1 row's \"%s\"", name, n, k, w5, w1);
      CHECK(one.pcl == 0 && one.pst == 0 &&
                (one.hcl == 0 || one.hcl > one.cluster),
            "%s n=%d k=%d: 1 row's pcl %d, hcl %d, cluster %d", name, n,
            k, one.pcl, one.hcl, one.cluster);
      if (one.hcl == 0) {
        CHECK(memcmp(&one, &hi, sizeof hi) == 0, "%s n=%d k=%d: 2..8 rows "
              "planned apart without hcl", name, n, k);
      } else {
        CHECK(hi.cluster > one.cluster && hi.cluster <= one.hcl &&
                  hi.pcl == one.cluster && hi.pst == one.stages &&
                  (hi.xs_m == 0 || hi.xs_m >= LB_GEMV_HI) &&
                  hi.split * hi.cluster <= t,
              "%s n=%d k=%d: 2..8 rows in clusters of %d (hcl %d, pcl %d, "
              "%d tiles, split %d), x resident to m = %d", name, n, k,
              hi.cluster, one.hcl, hi.pcl, t, hi.split, hi.xs_m);
      }
    }
  }
  /* the template's lb_red[LB_WARPS][4 LB_NF][32], the block's warps (the
  ** folded block's before sm_90, at least as many) */
  red = c.warps * c.fold * 4 * c.nf * 32 * 4;
  lb_layout_of(r, &lay);
  tiles = lb_kpad(&lay, k) / lay.tile;
  groups = (n + 15) / 16;
  CHECK(pow2(c.warps) && c.warps <= LB_WARPS, "%s n=%d k=%d: warps %d", name,
        n, k, c.warps);
  CHECK(pow2(c.split) && c.split <= c.warps, "%s n=%d k=%d: split %d of %d "
        "warps", name, n, k, c.split, c.warps);
  CHECK(pow2(c.cluster) && c.cluster <= 8, "%s n=%d k=%d: cluster %d", name,
        n, k, c.cluster);
  CHECK(c.grid * (c.warps / c.split) >= groups &&
        (c.grid - 1) * (c.warps / c.split) < groups,
        "%s n=%d k=%d: %d blocks of %d groups for %d groups", name, n, k,
        c.grid, c.warps / c.split, groups);
  CHECK(c.cluster == 1 || c.split * c.cluster <= tiles,
        "%s n=%d k=%d: %d warps split %d tiles", name, n, k,
        c.split * c.cluster, tiles);
  /* before sm_90 a cluster's fold blocks are one block */
  CHECK(pow2(c.fold) && c.cluster % c.fold == 0 && c.warps * c.fold <= LB_WARPS,
        "%s n=%d k=%d: fold %d of a cluster of %d blocks of %d warps", name, n,
        k, c.fold, c.cluster, c.warps);
  CHECK(c.fsmem >= c.smem && c.fsmem + red <= 99 * 1024 &&
        c.fsmem + c.xs_m * c.xrowb + red <= 227 * 1024,
        "%s n=%d k=%d: the folded block's %d bytes of shared memory", name, n,
        k, c.fsmem + red);
  /* one stage only where a warp has one tile: on sm_90 with the cluster,
  ** before it (fstages) in the folded block */
  CHECK(c.stages >= 1 && c.fstages >= c.stages &&
            (!c.lazy || c.stages >= 2 ||
             tiles <= (c.rsplit ? 1 : c.split) * c.cluster) &&
            (!c.lazy || c.fstages >= 2 ||
             tiles <= (c.rsplit ? 1 : c.split) * c.fold),
        "%s n=%d k=%d: %d stage(s) (before sm_90 %d), lazy %d", name, n, k,
        c.stages, c.fstages, c.lazy);
  CHECK(c.smem + red <= 99 * 1024, "%s n=%d k=%d: %d bytes of shared memory "
        "(sm_86 gives a block 99 KB)", name, n, k, c.smem + red);
  CHECK(c.xs_m >= 0 && c.xs_m <= 8 * c.nf &&
        c.smem + c.xs_m * c.xrowb + red <= 227 * 1024,
        "%s n=%d k=%d: resident x of %d rows of %d bytes", name, n, k, c.xs_m,
        c.xrowb);
  /* the rows the runtime keeps resident on an H100/H200 (228 KB an SM, 1
  ** KB a block reserved, 227 KB at most a block): the plan's, or more, to
  ** LB_XS_MORE, only where the grid's even spread still fits every SM
  ** (the static sums, red, beside the rings); on an unknown device the
  ** plan's */
  {
    const int smsm = 228 * 1024, res = 1024, opt = 227 * 1024;
    const int xr = lb_gemv_xs_rows(&c, sms, smsm, res, opt, c.smem + red);
    const long long even = ((long long)c.grid * c.slices + sms - 1) / sms;
    CHECK(xr == c.xs_m ||
              (xr > c.xs_m && xr <= LB_XS_MORE && c.nf == 1 &&
               c.cluster == 1 &&
               even * (c.smem + red + (long long)xr * c.xrowb + res) <= smsm &&
               c.smem + red + xr * c.xrowb <= opt),
          "%s n=%d k=%d m=%d: %d rows of x resident on an H200 (the plan's "
          "%d, %lld blocks an SM of %d + %d bytes)", name, n, k, m, xr,
          c.xs_m, even, c.smem + red, c.xrowb);
    CHECK(lb_gemv_xs_rows(&c, sms, 0, 0, 0, c.smem + red) == c.xs_m,
          "%s n=%d k=%d m=%d: resident rows on an unknown device", name, n,
          k, m);
  }
  CHECK(c.minb >= 1 && c.minb <= 8, "%s n=%d k=%d: minb %d", name, n, k,
        c.minb);
  /* scales in the ring: only where a stage outlives its tile's math, and
  ** never beside resident ones */
  CHECK(c.sring == 0 || (c.lazy && c.srowb == 0 && c.sring % 16 == 0),
        "%s n=%d k=%d: ring scales in rows of %d bytes (lazy %d, resident "
        "rows of %d)", name, n, k, c.sring, c.lazy, c.srowb);
  /* the kernel before sm_90 takes sm_90's ring scales but where their
  ** stages differ (fsr) */
  CHECK(c.fsr == (c.sring > 0) || (c.fstages != c.stages && c.sring > 0),
        "%s n=%d k=%d: ring scales %d before sm_90, %d bytes a row on sm_90 "
        "(stages %d and %d)", name, n, k, c.fsr, c.sring, c.fstages, c.stages);
  CHECK(c.zring % 16 == 0 && (c.zring == 0 || c.sring > 0),
        "%s n=%d k=%d: ring zeros in rows of %d bytes (scales' %d)", name, n,
        k, c.zring, c.sring);
  /* the rules read narrow codes' words where used (one or two words a
  ** lane) only so that their scales travel in the ring, or for a
  ** code-row split (1-bit codes) */
  CHECK(plan != NULL || lay.words > 2 || !c.lazy || c.sring > 0 ||
            (c.rsplit && lay.bits == 1),
        "%s n=%d k=%d m=%d: %d-bit words read where used, without ring "
        "scales", name, n, k, m, lay.bits);
  /* a code-row split: lazy words, no cluster, whole chunks of code rows
  ** (4 rows, 2 with two fragments) for each of the split's warps */
  {
    const int xc = lay.codes < 4 ? lay.codes : 4 / c.nf;
    CHECK(!c.rsplit || (c.lazy && c.split > 1 && c.cluster == 1 &&
                        c.fold == 1 && lay.codes / xc % c.split == 0),
          "%s n=%d k=%d: a code-row split over %d warps (lazy %d, cluster "
          "%d, fold %d, %d code rows)", name, n, k, c.split, c.lazy,
          c.cluster, c.fold, lay.codes);
    /* phases: lazy words, a tile at most a warp (before sm_90 too: the
    ** folded block's step), whole chunks of the warp's code rows each */
    CHECK((c.ph == 1 || c.ph == 2 || c.ph == 4) &&
              (c.ph == 1 ||
               (c.lazy && tiles <= (c.rsplit ? 1 : c.split) * c.fold &&
                lay.codes / xc / (c.rsplit ? c.split : 1) % c.ph == 0)),
          "%s n=%d k=%d m=%d: %d phases (lazy %d, %d tiles, split %d, "
          "rsplit %d, fold %d)", name, n, k, m, c.ph, c.lazy, tiles, c.split,
          c.rsplit, c.fold);
  }
}

static void check_plan(const lb_recipe *r, const char *name, int n, int k,
                       int sms) {
  lb_gemv_cfg c;
  check_plan_with(r, name, n, k, 1, sms, NULL);
  check_plan_with(r, name, n, k, LB_MAX_M, sms, NULL);
  if (lb_gemv_rows(r, n, k) > LB_MAX_M)
    check_plan_with(r, name, n, k, lb_gemv_rows(r, n, k), sms, NULL);
  /* two and four fragments, which a plan's rows knob reaches, wherever
  ** the GEMV folds its scales; refused, saying why, where it does not */
  if (lb_plan_gemv(r, n, k, 2 * LB_MAX_M, sms, NULL, "test", &c) == LB_OK &&
      r->bits >= 5 && r->bits <= 7) {
    check_plan_with(r, name, n, k, 2 * LB_MAX_M, sms, NULL);
    check_plan_with(r, name, n, k, 1, sms, "rows=16");
    CHECK(lb_plan_gemv(r, n, k, 1, sms, "rows=32", "test", &c) != LB_OK &&
              strstr(lb_errmsg(), "four fragments of x spill") != NULL,
          "%s n=%d k=%d: rows=32 of %d-bit codes: %s", name, n, k, r->bits,
          lb_errmsg());
  } else if (lb_plan_gemv(r, n, k, LB_GEMV_MOST, sms, NULL, "test", &c) ==
             LB_OK) {
    check_plan_with(r, name, n, k, 2 * LB_MAX_M, sms, NULL);
    check_plan_with(r, name, n, k, LB_GEMV_MOST, sms, NULL);
    /* both ways of taking 9..32 rows, whichever the rules choose */
    check_plan_with(r, name, n, k, LB_GEMV_MOST, sms, "slices=0");
    check_plan_with(r, name, n, k, LB_GEMV_MOST, sms, "slices=1");
    check_plan_with(r, name, n, k, 1, sms, "rows=32");
    CHECK(lb_plan_gemv(r, n, k, 1, sms, "rows=32", "test", &c) == LB_OK &&
              c.rows == 32 && lb_gemv_reach(r, n, k, "rows=32") == 32,
          "%s n=%d k=%d: rows=32 is not the plan's reach", name, n, k);
  } else {
    /* f32 dequantisation: 9..16 rows only as slices of the one-fragment
    ** kernel; two fragments (slices=0) and four refused, saying why */
    CHECK(strstr(lb_errmsg(), "dequantises in f32") != NULL &&
              lb_plan_gemv(r, n, k, 2 * LB_MAX_M, sms, NULL, "test", &c) ==
                  LB_OK &&
              c.nf == 1 && c.slices == 2,
          "%s n=%d k=%d: 16 rows of f32 dequantisation not as slices: %s",
          name, n, k, lb_errmsg());
    check_plan_with(r, name, n, k, 2 * LB_MAX_M, sms, NULL);
    check_plan_with(r, name, n, k, 1, sms, "rows=16");
    CHECK(lb_plan_gemv(r, n, k, 2 * LB_MAX_M, sms, "slices=0", "test",
                       &c) != LB_OK &&
              strstr(lb_errmsg(), "only as slices") != NULL &&
              lb_plan_gemv(r, n, k, 1, sms, "rows=32", "test", &c) != LB_OK &&
              strstr(lb_errmsg(), "plan \"rows=32\": rows=32") != NULL,
          "%s n=%d k=%d: two or four fragments of f32 dequantisation, or "
          "not said: %s", name, n, k, lb_errmsg());
  }
  CHECK(lb_plan_gemv(r, n, k, LB_GEMV_MOST + 1, sms, NULL, "test", &c) !=
            LB_OK,
        "%s n=%d k=%d: a GEMV of %d rows", name, n, k, LB_GEMV_MOST + 1);
}

static void check_gemm_cfg(const lb_gemm_cfg *cp, const lb_layout *lay,
                           const char *name, int n, int k, int bucket,
                           int hi) {
  const lb_gemm_cfg c = *cp;
  /* sm_90a's 256-row tiles take a block's most (lb_gmplan.c lb_gemm_hi_kb) */
  const int budget = (c.wg && c.bm > 128 ? LB_SMEM_WG_KB
                      : hi               ? LB_SMEM_HI_KB
                                         : LB_SMEM_LO_KB) * 1024;
  int warps, k_red;
  warps = c.warps_m * c.warps_n * c.warps_k;
  /* the K-split sums reuse the stages' shared memory */
  k_red = (c.warps_k - 1) * c.warps_n * c.warps_m * 32 * (c.bn / c.warps_n /
          16) * (c.bm / c.warps_m / 8) * 16;
  CHECK(warps >= 1 && warps <= 32, "%s n=%d k=%d b%d: %d warps", name, n, k,
        bucket, warps);
  /* the bucket's rows, or with x by TMA any of 16..256 (a plan's bm; the
  ** rules' below) */
  CHECK(c.tm ? pow2(c.bm) && c.bm >= 16 && c.bm <= 256
             : c.bm == 16 << (bucket < 3 ? bucket : 3),
        "%s b%d: tile height %d", name, bucket, c.bm);
  CHECK(c.bn % (16 * c.warps_n) == 0 && c.bm % (8 * c.warps_m) == 0,
        "%s n=%d k=%d b%d: tile %d x %d for %d x %d warps", name, n, k, bucket,
        c.bm, c.bn, c.warps_m, c.warps_n);
  CHECK(pow2(c.r) && (lay->codes % c.r == 0 || c.r % lay->codes == 0) &&
            c.r % c.warps_k == 0,
        "%s n=%d k=%d b%d: %d code rows a sub-stage (codes %d, %d K-warps)",
        name, n, k, bucket, c.r, lay->codes, c.warps_k);
  CHECK(c.ws >= (lay->bits * c.r + 31) / 32 &&
            c.ws <= (c.r > lay->codes ? c.r / lay->codes * lay->words : lay->words + 1),
        "%s n=%d k=%d b%d: %d words a sub-stage", name, n, k, bucket, c.ws);
  CHECK(c.gridn * c.bn >= n && (c.gridn - 1) * c.bn < n,
        "%s n=%d k=%d b%d: %d blocks of %d channels", name, n, k, bucket,
        c.gridn, c.bn);
  CHECK(c.stages >= 2, "%s n=%d k=%d b%d (%s): %d stages", name, n, k,
        bucket, hi ? "hi" : "lo", c.stages);
  /* words in registers (wgmma only): a third stage for the wgmmas still
  ** reading one, whole 128-byte rows of x, one warpgroup a code row (the
  ** template's static_asserts) */
  CHECK(!c.wr || (c.wg && c.stages >= 3 && c.r >= 2 && c.warps_k == 1),
        "%s n=%d k=%d b%d: words in registers with %d stages, %d code rows, "
        "wk %d", name, n, k, bucket, c.stages, c.r, c.warps_k);
  /* activations by TMA (tm): a wr plan's, with an mbarrier and a release
  ** count a stage (16 bytes) after the scales */
  CHECK(!c.tm || (c.wr && c.r % 2 == 0 && c.bm <= 256),
        "%s n=%d k=%d b%d: tm with wr %d, %d code rows, %d rows", name, n, k,
        bucket, c.wr, c.r, c.bm);
  /* a wgmma block of two warpgroups or 128 rows is one an SM (128
  ** registers a thread for two: lb_gmplan.c regs_for_two) unless the plan
  ** asks for two (bs=2): neither the rule nor split-K counts on two */
  CHECK(!c.wg || (c.bm <= 64 && c.warps_n <= 4) || c.fit == c.per_sm,
        "%s n=%d k=%d b%d: wgmma %d x %d, %d warps: %d blocks an SM counted "
        "(%d planned)", name, n, k, bucket, c.bm, c.bn, c.warps_n, c.fit,
        c.per_sm);
  CHECK(c.sres == c.bn * (c.srowb + c.zrowb) && (c.srowb > 0 || c.zrowb == 0),
        "%s n=%d k=%d b%d: resident rows of %d and %d bytes, %d in all", name,
        n, k, bucket, c.srowb, c.zrowb, c.sres);
  CHECK(c.smem == c.stages * (c.stage + (c.tm ? 16 : 0)) + c.sres &&
        c.smem <= budget && k_red <= c.stages * c.stage,
        "%s n=%d k=%d b%d (%s): shared memory %d x %d + %d", name, n, k,
        bucket, hi ? "hi" : "lo", c.stages, c.stage, c.sres);
}

/* Where sm_90's split-K may meet in a cluster: up to 64 rows, a block's
** f32 sums within its stages (the template's static_assert). */
static int csum_fits(const lb_gemm_cfg *c) {
  return c->bm <= 64 && 4 * c->bm * c->bn <= c->stages * c->stage;
}

/* The bytes of f32 sums sp splits of plan c leave for m rows, as
** lb_gemm_splits bounds them (whole tiles of channels). */
static long long split_sums(const lb_gemm_cfg *c, int m, int sp) {
  return (long long)sp * m * c->gridn * c->bn * 4;
}

static void check_gemm(const lb_recipe *r, const char *name, int n, int k,
                       int bucket) {
  lb_gemm_plans p, pw;
  lb_gemm_cfg c;
  lb_layout lay;
  char *src = NULL;
  if (lb_gen_gemm(r, n, k, bucket, 132, NULL, NULL, &p, &src) != LB_OK ||
      lb_plan_gemm(r, n, k, bucket, 132, "wg=1", "test", &pw) != LB_OK) {
    CHECK(0, "%s n=%d k=%d bucket %d: %s", name, n, k, bucket, lb_errmsg());
    free(src);
    return;
  }
  free(src);
  /* each part's words make that part again (lowbit tune, the tuning
  ** table); the part is compared whole */
  {
    static const int arch[3] = {90, 80, 86};
    int a;
    for (a = 0; a < 3; a++) {
      const lb_gemm_cfg *part = lb_gemm_part(&p, arch[a]);
      char words[LB_PLAN_LEN];
      lb_gemm_plans q;
      lb_gemm_plan_text(part, words, sizeof words);
      if (lb_plan_gemm(r, n, k, bucket, 132, words, "test", &q) != LB_OK)
        CHECK(0, "%s n=%d k=%d bucket %d sm_%d: its plan's words \"%s\": "
              "%s", name, n, k, bucket, arch[a], words, lb_errmsg());
      else {
        lb_gemm_cfg made = *lb_gemm_part(&q, arch[a]);
        /* (but the tail's tile: 257..384 rows on 128-row tiles that the
        ** rules chose by waves count 256-row ones, check_waves; words
        ** saying bm=128 count their own) */
        if (bucket == 5 && made.tq == 128 && part->tq == 256) made.tq = 256;
        CHECK(memcmp(&made, part, sizeof *part) == 0,
              "%s n=%d k=%d bucket %d sm_%d: its plan's words \"%s\" make "
              "another plan", name, n, k, bucket, arch[a], words);
      }
    }
  }
  lb_layout_of(r, &lay);
  check_gemm_cfg(&p.hi, &lay, name, n, k, bucket, 1);
  check_gemm_cfg(&p.lo, &lay, name, n, k, bucket, 0);
  check_gemm_cfg(&pw.wg, &lay, name, n, k, bucket, 1);
  check_gemm_cfg(&p.wg, &lay, name, n, k, bucket, 1);
  /* the rules' tiles: 256 rows from 161 where sm_90a's plan takes x by TMA
  ** and codes never cross words (lb_gmplan.c plan_wg), else the bucket's;
  ** at 257..384 rows 128 where that takes fewer waves (tile_by_waves,
  ** which check_waves checks), the tail rule then counting 256-row tiles */
  {
    const int big = bucket >= 4 && p.wg.tm && 32 % lay.bits == 0;
    const int waves = big && bucket == 5 && p.wg.bm == 128;
    CHECK(p.wg.bm == (big && !waves ? 256 : 16 << (bucket < 3 ? bucket : 3)),
          "%s n=%d k=%d b%d: the rules' tile height %d", name, n, k, bucket,
          p.wg.bm);
    CHECK(p.wg.tq == (waves ? 256 : p.wg.bm) && p.hi.tq == p.hi.bm &&
              p.lo.tq == p.lo.bm,
          "%s n=%d k=%d b%d: tail quantum %d, tile %d", name, n, k, bucket,
          p.wg.tq, p.wg.bm);
  }
  CHECK(!p.hi.wr && !p.lo.wr, "%s n=%d k=%d b%d: words in registers off "
        "sm_90", name, n, k, bucket);
  /* sm_90's plan by the rules is mma.sync's (the other 160 KB parts');
  ** wg=1's: warpgroups along channels over all the tile's rows, whose
  ** activation chunks come in pairs of a row (templates/gemm.cu) */
  /* sm_90's sums of split K meet in a cluster wherever a block's fit its
  ** stages (the template's static_assert), on no other part */
  c = p.wg;
  CHECK(c.csum == csum_fits(&c) && pw.wg.csum == csum_fits(&pw.wg) &&
            !p.hi.csum && !p.lo.csum && !pw.hi.csum,
        "%s n=%d k=%d b%d: cluster sums %d (%d x %d, %d stages of %d bytes)",
        name, n, k, bucket, c.csum, c.bm, c.bn, c.stages, c.stage);
  c.csum = 0;
  /* ... but from 33 rows, and from 9 for 8-bit codes in wide layers,
  ** where it is wgmma's with the words in registers and the activations
  ** by TMA (lb_gmplan.c wr_rule, tm_rule); two warpgroups (128 channels)
  ** from 65 rows (but at 65..160 in layers of 4M weights or fewer, or of
  ** K <= 1024 and 8M), and at 33..64 for 3- to 7-bit codes (wide_rule), 7-bit
  ** ones at 8 code rows a sub-stage there, 4 where 8 spilled (plan_wg) */
  {
    const int from = 2;
    const long long nk = (long long)n * k;   /* (small layers: 64 at 65..160) */
    const int small = (bucket == 3 || (bucket == 5 && pw.wg.bm == 128)) &&
                      (nk <= 1LL << 22 || (k <= 1024 && nk <= 1LL << 23));
    const int bn = (bucket >= 3 && n > 256 && !small) ||
                           (bucket == 2 && lay.bits >= 3 && lay.bits <= 7)
                       ? 128 : 64;
    /* (7-bit codes in groups of 32 with scales and zeros of two widths:
    ** 4 code rows, as 8 spilled; the other 7-bit codes 8 where K takes
    ** them) */
    const int narrow7 = lay.bits == 7 && r->group > 0 && r->group <= 32 && r->zeros &&
                        lb_dtype_size(r->sdtype) != lb_dtype_size(r->zdtype);
    CHECK(!(bucket == 2 && lay.bits == 7 && pw.wg.wr) ||
              (narrow7 ? pw.wg.r <= 4 : pw.wg.r == 8 || 32 * 8 > k),
          "%s n=%d k=%d b%d: 7-bit codes' words in registers at %d code "
          "rows", name, n, k, bucket, pw.wg.r);
    /* 8-bit codes from 9 rows where the 64-channel tiles fill a wave of
    ** the 132 SMs planned for: half of them at 17..32 rows, all at 9..16 */
    const int wide8 = lay.bits == 8 && bucket <= 1 &&
                      (n + 63) / 64 >= (bucket == 1 ? 132 / 2 : 132);
    CHECK(pw.wg.bn == bn, "%s n=%d k=%d b%d: wgmma tile of %d channels, "
          "not %d", name, n, k, bucket, pw.wg.bn, bn);
    if (bucket >= from || wide8) {
      CHECK(c.wg == 1 && c.wr == 1 && c.tm == 1 && c.warps_k == 1 &&
                c.r >= 2 && c.bm == pw.wg.bm && c.bn == pw.wg.bn &&
                c.wr == pw.wg.wr && c.tm == pw.wg.tm,
            "%s n=%d k=%d b%d: the rule's sm_90 plan wg %d wr %d tm %d", name,
            n, k, bucket, c.wg, c.wr, c.tm);
      c = p.hi;
    }
  }
  CHECK(memcmp(&c, &p.hi, sizeof p.hi) == 0 && p.hi.wg == 0 &&
            p.lo.wg == 0 && pw.wg.wg == 1 && pw.wg.warps_m == 1 &&
            pw.wg.warps_n % 4 == 0 && pw.wg.bn % 64 == 0 &&
            pw.wg.bm % 8 == 0 && pw.wg.bm <= 256 &&
            memcmp(&pw.hi, &p.hi, sizeof p.hi) == 0,
        "%s n=%d k=%d b%d: wgmma plan %d x %d, %d x %d warps", name, n, k,
        bucket, pw.wg.bm, pw.wg.bn, pw.wg.warps_m, pw.wg.warps_n);
  /* the two parts share the tile and the warps; the larger budget never
  ** takes fewer code rows, nor less shared memory but where two stages let
  ** two blocks share an SM */
  CHECK(p.hi.bm == p.lo.bm && p.hi.warps_m == p.lo.warps_m &&
        p.hi.r >= p.lo.r &&
        (p.hi.smem >= p.lo.smem || (p.hi.per_sm == 2 && p.hi.stages == 2 &&
                                    2 * (p.hi.smem + LB_SMEM_RESERVED) <=
                                        LB_SMEM_SM_KB * 1024)),
        "%s n=%d k=%d b%d: hi plan %d x %d r %d, lo plan %d x %d r %d", name,
        n, k, bucket, p.hi.bm, p.hi.bn, p.hi.r, p.lo.bm, p.lo.bn, p.lo.r);
  /* a plan naming its splits (sk) takes a cluster for any of them up to 8,
  ** where its sums can meet in one */
  c = p.wg;
  c.sk = 4;
  CHECK(lb_gemm_cluster(&c, 4) == c.csum && lb_gemm_cluster(&c, 8) == c.csum &&
            !lb_gemm_cluster(&c, 9) && !lb_gemm_cluster(&c, 1) &&
            !lb_gemm_cluster(&p.hi, 2),
        "%s n=%d k=%d b%d: clusters with sk", name, n, k, bucket);
  /* split K, on both plans: one wave at most (fit blocks an SM: two only
  ** on 160 KB parts where shared memory holds two), every split at least
  ** two sub-stages */
  for (int h = 0; h < 3; h++) {
    static const int ms[] = {9, 16, 17, 32, 33, 64, 65, 128, 129, 160, 161,
                             256, 257, 1024};
    int i, sms;
    c = h == 2 ? pw.wg : h ? p.hi : p.lo;
    for (i = 0; i < (int)(sizeof ms / sizeof ms[0]); i++) {
      int m = ms[i], blocks, sp;
      if (lb_gemm_bucket(m) != bucket) continue;
      for (sms = 16; sms <= 256; sms *= 2) {
        blocks = c.gridn * ((m + c.bm - 1) / c.bm);
        sp = lb_gemm_splits(&c, m, sms);
        CHECK(sp >= 1 && sp <= LB_GEMM_SPLITS && c.per_sm >= 1 && c.per_sm <= 2 &&
                  c.fit >= c.per_sm && c.fit <= 2 &&
                  (c.fit == 1 || h >= 1) &&
                  (c.fit == 1 ||
                   2 * (c.smem + LB_SMEM_RESERVED) <= LB_SMEM_SM_KB * 1024) &&
                  (sp == 1 || (sp * blocks <= sms * c.fit && 2 * sp <= c.nss)) &&
                  (sp <= 4 || split_sums(&c, m, sp) <= LB_SPLIT_SUMS),
              "%s n=%d k=%d m=%d on %d SMs: %d splits of %d sub-stages, %d "
              "blocks", name, n, k, m, sms, sp, c.nss, blocks);
        /* by the rules only 2-way splits meet in a cluster (sm_90) */
        CHECK(lb_gemm_cluster(&c, sp) == (c.csum && sp == 2),
              "%s n=%d k=%d m=%d on %d SMs: %d splits, cluster %d", name, n,
              k, m, sms, sp, lb_gemm_cluster(&c, sp));
      }
    }
  }
}

/* Every plan lowbit tune may try keeps the same invariants: the GEMV's
** candidates (sm_90, clusters included) and each GEMM bucket's, on the
** part they are offered for (a 160 KB sm_90, a 99 KB sm_89). */
static int check_candidates(const lb_recipe *r, const char *name, int n,
                            int k) {
  static const int ms[] = {4, 16, 32, 64, 128, 1024};
  static const int archs[] = {90, 89};
  char c[64][LB_PLAN_LEN];
  int mi, a, i, count, plans = 0;
  lb_layout lay;
  lb_layout_of(r, &lay);
  for (mi = 0; mi < (int)(sizeof ms / sizeof ms[0]); mi++)
    for (a = 0; a < 2; a++) {
      const int m = ms[mi], arch = archs[a];
      if (m <= lb_gemv_rows(r, n, k) && arch != 90) continue;   /* one GEMV plan */
      if (lb_plan_candidates(r, n, k, m, 132, arch, NULL, c, 64, &count) !=
          LB_OK) {
        CHECK(0, "%s n=%d k=%d m=%d sm_%d: candidates: %s", name, n, k, m,
              arch, lb_errmsg());
        continue;
      }
      for (i = 1; i < count; i++, plans++) {
        if (m <= lb_gemv_rows(r, n, k)) {
          check_plan_with(r, name, n, k, m, 132, c[i]);
        } else {
          lb_gemm_plans p;
          char what[160];
          snprintf(what, sizeof what, "%s plan %s", name, c[i]);
          if (lb_plan_gemm(r, n, k, lb_gemm_bucket(m), 132, c[i], "test",
                           &p) != LB_OK) {
            CHECK(0, "%s n=%d k=%d m=%d: %s", what, n, k, m, lb_errmsg());
            continue;
          }
          check_gemm_cfg(lb_gemm_part(&p, arch), &lay, what, n, k,
                         lb_gemm_bucket(m), arch == 90);
        }
      }
    }
  return plans;
}

/* A plan's r (code rows a sub-stage) is built on 160 KB parts wherever
** two stages of it fit, also where the rules ask for no more than the 99
** KB parts' (65..160 rows, two channel groups a warp): it was cut to the
** small parts' 2 rows there, and "r=4" timed the rules' plan. */
static void check_knob_r(void) {
  static const char text[] =
      "name \"w4\"\nactivations \"f16\"\n"
      "weights { bits = 4, signed = false, packing = \"gemlite32\" }\n"
      "scales { group = 128, dtype = \"f16\" }\n"
      "zeros { kind = \"float\", dtype = \"f16\" }\n"
      "dequant \"(q - z) * s\"\naccumulator \"f32\"\noutput \"f16\"\n";
  lb_recipe *r = NULL;
  lb_gemm_plans p;
  if ((r = load("w4.lua", text)) == NULL) return;
  if (lb_plan_gemm(r, 8192, 8192, 3, 132, "r=4", "test", &p) != LB_OK)
    CHECK(0, "w4 r=4: %s", lb_errmsg());
  else
    CHECK(p.hi.r == 4 && p.wg.r == 4 && p.lo.r <= 4,
          "w4 8192 x 8192 bucket 3, plan r=4: %d code rows (sm_90), %d "
          "(99 KB parts)", p.wg.r, p.lo.r);
  lb_recipe_free(r);
}

/* The GEMV plan of r at n x k (one row, 132 SMs) with plan's knobs (NULL:
** the rules') into *c, with check_plan_with's invariants there (which
** fail where it does not generate); 0 if it does not plan. */
static int gemv_rows(const lb_recipe *r, const char *name, int n, int k,
                     int m, const char *plan, lb_gemv_cfg *c) {
  check_plan_with(r, name, n, k, m, 132, plan);
  return lb_plan_gemv(r, n, k, m, 132, plan, "test", c) == LB_OK;
}

static int gemv_at(const lb_recipe *r, const char *name, int n, int k,
                   const char *plan, lb_gemv_cfg *c) {
  return gemv_rows(r, name, n, k, 1, plan, c);
}

/* Recipes more than one check plans: 7-bit codes in groups of 32 with
** zeros (many group slots a tile), 4-bit codes (words not lazy). */
static const char w7_text[] =
    "name \"w7\"\nactivations \"f16\"\nweights { bits = 7 }\n"
    "scales { group = 32 }\nzeros { dtype = \"f16\" }\n"
    "dequant \"(q - z) * s\"\n";
static const char w4_text[] =
    "name \"w4\"\nactivations \"f16\"\nweights { bits = 4 }\n"
    "scales { group = 128 }\ndequant \"q * s\"\n";
static const char w1_text[] =
    "name \"w1\"\nactivations \"f16\"\nweights { bits = 1 }\n"
    "scales { group = 32 }\nzeros { dtype = \"f16\" }\n"
    "dequant \"(q - z) * s\"\n";
static const char w5_text[] =
    "name \"w5\"\nactivations \"f16\"\nweights { bits = 5 }\n"
    "scales { group = 64 }\nzeros { dtype = \"f16\" }\n"
    "dequant \"(q - z) * s\"\n";

/* Scales and zeros travel in the ring where a tile meets many group slots
** that are not resident (7-bit group 32 at 16384 x 1024), and not where a
** plan says sr=0 or reads its stages into registers (lazy=0). */
static void check_ring_scales(void) {
  static const char *const plans[] = {NULL, "sr=0", "lazy=0"};
  lb_recipe *r = NULL;
  int i;
  if ((r = load("w7.lua", w7_text)) == NULL) return;
  /* one stage where each warp has one tile and the blocks outnumber the
  ** SMs (256 x 16384), two where they are few (1024 x 256) or clustered
  ** few (8192 x 48); clustered many (16384 x 1024: 512 blocks), one on
  ** sm_90 and two before it, whose block walks K without the cluster */
  {
    static const int shp[4][4] = {{16384, 256, 1, 1}, {256, 1024, 2, 2},
                                  {48, 8192, 2, 2}, {1024, 16384, 1, 2}};
    for (i = 0; i < 4; i++) {
      lb_gemv_cfg c;
      CHECK(gemv_at(r, "w7", shp[i][0], shp[i][1], NULL, &c) &&
                c.stages == shp[i][2] && c.fstages == shp[i][3],
            "w7 %d x %d: %d stage(s), %d before sm_90, not %d and %d",
            shp[i][1], shp[i][0], c.stages, c.fstages, shp[i][2], shp[i][3]);
    }
  }
  for (i = 0; i < 3; i++) {
    lb_gemv_cfg c;
    CHECK(gemv_at(r, "w7", 1024, 16384, plans[i], &c) &&
              (c.sring > 0) == (i == 0) && c.sr == (c.sring > 0),
          "w7 1024 x 16384 %s: ring scales in rows of %d bytes",
          plans[i] ? plans[i] : "rules", c.sring);
  }
  /* x comes into L2 with each tile's words where the channel blocks are
  ** at most the SMs (16384 x 1024: 64 blocks), not where they outnumber
  ** them (8192 x 8192: 512; x stays in L2, the prefetch costs issue
  ** slots: before 2026-11-28 every ring plan had it) */
  {
    static const int shp[2][3] = {{1024, 16384, 2}, {8192, 8192, 0}};
    for (i = 0; i < 2; i++) {
      lb_gemv_cfg c;
      CHECK(gemv_at(r, "w7", shp[i][0], shp[i][1], NULL, &c) && c.sring > 0 &&
                c.pf == shp[i][2],
            "w7 %d x %d: ring scales in rows of %d bytes, pf %d, not %d",
            shp[i][1], shp[i][0], c.sring, c.pf, shp[i][2]);
    }
  }
  lb_recipe_free(r);
  /* 5-bit codes whose cluster left each warp two tiles (16384 x 1024:
  ** clusters of 2) take clusters of 4, a tile a warp: one stage on sm_90,
  ** with the scales in its ring; before sm_90 two stages, whose block has
  ** no room for them (fsr 0); 8192 x 1024 (a tile a warp already) keeps
  ** its clusters of 2 */
  if ((r = load("w5.lua", w5_text)) == NULL) return;
  {
    lb_gemv_cfg c;
    CHECK(gemv_at(r, "w5", 1024, 16384, NULL, &c) && c.cluster == 4 &&
              c.stages == 1 && c.fstages == 2 && c.sring > 0 && c.fsr == 0 &&
              c.fsmem > c.smem,
          "w5 16384 x 1024: cluster %d, stages %d and %d, ring scales %d "
          "(before sm_90 %d), %d and %d bytes", c.cluster, c.stages,
          c.fstages, c.sring, c.fsr, c.smem, c.fsmem);
    CHECK(gemv_at(r, "w5", 1024, 8192, NULL, &c) && c.cluster == 2,
          "w5 8192 x 1024: cluster %d, not 2", c.cluster);
  }
  lb_recipe_free(r);
  /* 1-bit codes (words held a tile at a time) in groups of 32 read their
  ** words where used so that the scales travel in the ring, where those
  ** are not resident (K = 8192), at 1..8 rows: not where a plan says
  ** lazy=0, nor at K = 4096 (resident), nor with two fragments */
  if ((r = load("w1.lua", w1_text)) == NULL) return;
  {
    static const struct { int k, m; const char *plan; int ring; } at[4] = {
        {8192, 1, NULL, 1}, {8192, 1, "lazy=0", 0}, {4096, 1, NULL, 0},
        {8192, 16, NULL, 0}};
    for (i = 0; i < 4; i++) {
      lb_gemv_cfg c;
      CHECK(gemv_rows(r, "w1", 8192, at[i].k, at[i].m, at[i].plan, &c) &&
                (c.sring > 0) == at[i].ring && c.lazy == at[i].ring,
            "w1 %d x 8192, %d rows, %s: lazy %d, ring scales %d bytes a row",
            at[i].k, at[i].m, at[i].plan ? at[i].plan : "rules", c.lazy,
            c.sring);
    }
  }
  lb_recipe_free(r);
}

/* The two-fragment kernel (9..16 rows) has an lb_gemv_xs only where x
** fits more than 8 rows: one for fewer would never launch (before
** 2026-11-28 it was compiled, and a16w4_g128's at 8192 x 8192 spilled). */
static void check_two_frag_xs(void) {
  static const int shp[2][3] = {{8192, 8192, 0}, {4096, 256, 16}};
  lb_recipe *r = NULL;
  int i;
  if ((r = load("w4.lua", w4_text)) == NULL) return;
  for (i = 0; i < 2; i++) {
    lb_gemv_cfg c;
    /* (the second shape's rules take 9..16 rows in slices) */
    CHECK(gemv_rows(r, "w4", shp[i][0], shp[i][1], 16, "slices=0", &c) &&
              c.nf == 2 && c.xs_m == shp[i][2],
          "w4 %d x %d, 16 rows: %d fragment(s), x resident up to m = %d, not %d",
          shp[i][1], shp[i][0], c.nf, c.xs_m, shp[i][2]);
  }
  lb_recipe_free(r);
}

/* x resident for more rows on an H200 where the even spread has room
** (lb_gemv_xs_rows): the model's layers of 4096 and 8192 rows of K
** (N x K, the rows).  The plan's 0 stays 0 (no lb_gemv_xs), and so do
** two fragments. */
static void check_xs_rows(void) {
  static const int want[7][4] = {{6144, 4096, 1, 4},    {4096, 4096, 1, 4},
                                 {28672, 4096, 1, 2},   {4096, 14336, 1, 3},
                                 {8192, 8192, 1, 4},    {4096, 4096, 16, 0},
                                 {1024, 4096, 1, 0}};
  lb_recipe *r = NULL;
  int i;
  if ((r = load("w4.lua", w4_text)) == NULL) return;
  for (i = 0; i < 7; i++) {
    lb_gemv_cfg c;
    const int *w = want[i];
    int threads, smem, xr = -1;
    memset(&c, 0, sizeof c);   /* (printed below if the plan fails) */
    if (gemv_rows(r, "w4", w[0], w[1], w[2], NULL, &c)) {
      lb_gemv_block(&c, 90, &threads, &smem);
      xr = lb_gemv_xs_rows(&c, 132, 228 * 1024, 1024, 227 * 1024,
                           smem + c.warps * 4 * c.nf * 32 * 4);
    }
    CHECK(xr == w[3], "w4 %d x %d, m = %d: x resident to m = %d on an "
          "H200, not %d (the plan's %d)", w[1], w[0], w[2], xr, w[3], c.xs_m);
  }
  lb_recipe_free(r);
}

/* Blocks of fewer channel groups where that spreads a grid of a wave or
** more evenly over the SMs, for one fragment only (lb_gvplan.c, "Even
** SMs"): 4-bit at 4096 -> 28672 ran 224 blocks of 8 warps on 132 SMs
** until 2026-11-28.  Each row: n, k, m, grid, warps, rows of x resident
** (one where the blocks were made smaller, as each copies its x; none
** where a row is more than LB_XRES_KB, with two fragments or, at 1024 x
** 4096, a cluster). */
static void check_even(void) {
  static const int want[6][6] = {{28672, 4096, 1, 896, 2, 1},
                                 {28672, 16384, 1, 896, 2, 0},
                                 {6144, 4096, 8, 384, 4, 1},
                                 {28672, 4096, 16, 224, 8, 0},
                                 {4096, 4096, 1, 256, 8, 3},
                                 {1024, 4096, 1, 64, 8, 0}};
  lb_recipe *r = NULL;
  int i;
  if ((r = load("w4.lua", w4_text)) == NULL) return;
  for (i = 0; i < 6; i++) {
    lb_gemv_cfg c;
    const int *w = want[i];
    CHECK(gemv_rows(r, "w4", w[0], w[1], w[2], NULL, &c) &&
              c.grid == w[3] && c.warps == w[4] && c.xs_m == w[5],
          "w4 %d x %d, m = %d: %d blocks of %d warps, x resident to m = "
          "%d, not %d of %d, %d",
          w[1], w[0], w[2], c.grid, c.warps, c.xs_m, w[3], w[4], w[5]);
  }
  lb_recipe_free(r);
}

/* A block of one channel group whose warps have a tile each keeps one
** row of x resident (8-bit codes, K = 1024: 8 tiles, split 8), not where
** its warps have two tiles or more (K = 2048, 4096). */
static void check_one_tile(void) {
  static const char w8_text[] =
      "name \"w8\"\nactivations \"f16\"\nweights { bits = 8 }\n"
      "scales { group = 1024 }\ndequant \"q * s\"\n";
  static const int want[4][4] = {
      {4096, 1024, 8, 1}, {256, 1024, 8, 1}, {4096, 2048, 8, 7},
      {4096, 4096, 8, 3}};
  lb_recipe *r = NULL;
  int i;
  if ((r = load("w8.lua", w8_text)) == NULL) return;
  for (i = 0; i < 4; i++) {
    lb_gemv_cfg c;
    const int *w = want[i];
    CHECK(gemv_rows(r, "w8", w[0], w[1], w[2], NULL, &c) && c.warps == 8 &&
              c.split == 8 && c.xs_m == w[3],
          "w8 %d x %d, m = %d: %d warps split %d, x resident to m = %d, "
          "not 8, 8, %d", w[1], w[0], w[2], c.warps, c.split, c.xs_m, w[3]);
  }
  lb_recipe_free(r);
}

/* 7-bit codes whose scales stay out of the ring (per channel) split K in
** clusters to a tile a warp at 1..8 rows where their channel blocks are
** at most half the SMs (N = 1024, K = 16384: clusters of 8, one stage;
** 4 before 2026-12-02); not past half the SMs, nor 6-bit codes. */
static void check_seven_room(void) {
  static const char w7c_text[] =
      "name \"w7c\"\nactivations \"f16\"\nweights { bits = 7 }\n"
      "scales { group = \"channel\" }\ndequant \"q * s\"\n";
  static const char w6c_text[] =
      "name \"w6c\"\nactivations \"f16\"\nweights { bits = 6 }\n"
      "scales { group = \"channel\" }\ndequant \"q * s\"\n";
  /* bits, n, k, m: cluster */
  static const int want[6][5] = {
      {7, 1024, 16384, 1, 8}, {7, 1024, 16384, 8, 8}, {7, 1056, 16384, 1, 8},
      {7, 1024, 8192, 1, 4},  {7, 1088, 16384, 1, 1}, {6, 1024, 16384, 1, 2}};
  lb_recipe *r7 = NULL, *r6 = NULL;
  int i;
  if ((r7 = load("w7c.lua", w7c_text)) == NULL) return;
  if ((r6 = load("w6c.lua", w6c_text)) == NULL) {
    lb_recipe_free(r7);
    return;
  }
  for (i = 0; i < 6; i++) {
    const int *w = want[i];
    lb_gemv_cfg c;
    CHECK(gemv_rows(w[0] == 7 ? r7 : r6, w[0] == 7 ? "w7c" : "w6c", w[1],
                    w[2], w[3], NULL, &c) &&
              c.cluster == w[4] && (w[4] != 8 || c.stages == 1),
          "w%dc %d x %d, m = %d: cluster %d, %d stage(s), not %d", w[0],
          w[2], w[1], w[3], c.cluster, c.stages, w[4]);
  }
  lb_recipe_free(r7);
  lb_recipe_free(r6);
}

/* 3- and 5-bit codes whose warps would have two tiles each (K = 8192,
** split 4) split each tile's code rows between two warps instead (split
** 2, rsplit), where the grid still fills the SMs (2026-11-28); not with
** one tile a warp, not for 7-bit codes. */
static void check_two_tiles(void) {
  static const char text[] =
      "name \"w5\"\nactivations \"f16\"\nweights { bits = 5 }\n"
      "scales { group = 64 }\ndequant \"q * s\"\n";
  /* n, k: split, rsplit */
  static const int want[4][4] = {{8192, 8192, 2, 1},
                                 {16384, 8192, 2, 1},
                                 {4096, 8192, 4, 0},
                                 {14336, 4096, 4, 0}};
  lb_recipe *r = NULL, *r7 = NULL;
  lb_gemv_cfg c;
  int i;
  if ((r = load("w5.lua", text)) == NULL) return;
  for (i = 0; i < 4; i++) {
    const int *w = want[i];
    CHECK(gemv_at(r, "w5", w[0], w[1], NULL, &c) && c.split == w[2] &&
              c.rsplit == w[3],
          "w5 %d x %d: split %d, rsplit %d, not %d, %d", w[1], w[0],
          c.split, c.rsplit, w[2], w[3]);
  }
  lb_recipe_free(r);
  if ((r7 = load("w7.lua", w7_text)) == NULL) return;
  CHECK(gemv_at(r7, "w7", 8192, 8192, NULL, &c) && !c.rsplit,
        "w7 8192 x 8192: rsplit %d, not 0", c.rsplit);
  lb_recipe_free(r7);
}

/* Scales and zeros of different sizes travel in the ring too, each in
** rows of its own size (before 2026-11-27 neither the ring nor resident
** rows took them, and 7-bit group 32 with f32 zeros ran at 0.73x cuBLAS
** at 16384 x 1024), and are resident where they fit. */
static void check_mixed_slots(void) {
  static const char text[] =
      "name \"w7z32\"\nactivations \"f16\"\nweights { bits = 7 }\n"
      "scales { group = 32 }\nzeros { dtype = \"f32\" }\n"
      "dequant \"(q - z) * s\"\n";
  lb_recipe *r = NULL;
  lb_gemv_cfg c;
  if ((r = load("w7z32.lua", text)) == NULL) return;
  /* 32 slots a tile: 64 bytes of f16 scales, 128 of f32 zeros, each + 16 */
  CHECK(gemv_at(r, "w7z32", 1024, 16384, NULL, &c) && c.sring == 80 &&
            c.zring == 144,
        "w7z32 1024 x 16384: ring rows of %d and %d bytes, not 80 and 144",
        c.sring, c.zring);
  /* 256 x 1024: 32 groups, rows of 128 bytes (the f32 zeros') + 16 */
  CHECK(gemv_at(r, "w7z32", 256, 1024, NULL, &c) && c.srowb == 144 &&
            c.sring == 0,
        "w7z32 256 x 1024: resident rows of %d bytes, not 144", c.srowb);
  lb_recipe_free(r);
}

/* 5-bit codes, group 32, K = 1024 (one tile): blocks of 2 warps where the
** blocks are few, which also leaves the ring room for resident scales
** (4 warps: 82 KB of ring, and the scales came from global memory), each
** warp half of the tile's code rows (rsplit), and blocks of 4 at K =
** 16384 (16 tiles), where 2 measured slower.  The code-row split only
** with one tile and few blocks (or blocks of two groups at most the
** SMs), and only where the template has it. */
/* Slices: 9..32 rows as rows of the one-fragment kernel's blocks where
** its grid leaves SMs idle (twice the SMs for 1-, 3- and 5-bit codes),
** the source then offsetting x and y by blockIdx.y; elsewhere
** two and four fragments, as before, and a plan's slices knob decides. */
static void check_slices(void) {
  static const struct {
    const char *name, *text, *plan;
    int n, k, m, slices, nf;
  } at[] = {
      {"w4", w4_text, NULL, 256, 1024, 16, 2, 1},
      {"w4", w4_text, NULL, 256, 1024, 32, 4, 1},
      {"w4", w4_text, NULL, 256, 1024, 12, 2, 1},
      {"w4", w4_text, NULL, 256, 1024, 1, 1, 1},
      {"w4", w4_text, "slices=0", 256, 1024, 16, 1, 2},
      {"w4", w4_text, NULL, 4096, 1024, 16, 1, 2},      /* 128 blocks */
      {"w4", w4_text, "slices=1", 4096, 1024, 16, 2, 1},
      {"w4", w4_text, NULL, 8192, 8192, 16, 1, 2},
      {"w5", w5_text, NULL, 4096, 1024, 16, 2, 1},      /* 5-bit codes */
      {"w1", w1_text, NULL, 8192, 8192, 32, 1, 4}};
  size_t i;
  for (i = 0; i < sizeof at / sizeof at[0]; i++) {
    lb_recipe *r = load(at[i].name, at[i].text);
    lb_gemv_cfg c;
    char *src = NULL;
    if (r == NULL) continue;
    CHECK(gemv_rows(r, at[i].name, at[i].n, at[i].k, at[i].m, at[i].plan,
                    &c) &&
              c.slices == at[i].slices && c.nf == at[i].nf,
          "%s %d x %d, %d rows, %s: %d slices, %d fragments; not %d, %d",
          at[i].name, at[i].k, at[i].n, at[i].m,
          at[i].plan ? at[i].plan : "rules", c.slices, c.nf, at[i].slices,
          at[i].nf);
    if (lb_gen_gemv(r, at[i].n, at[i].k, at[i].m, 132, at[i].plan, "test", 0,
                    NULL, &src) == LB_OK)
      CHECK((strstr(src, "blockIdx.y") != NULL) == (at[i].slices > 1),
            "%s %d x %d, %d rows: the source %s blockIdx.y", at[i].name,
            at[i].k, at[i].n, at[i].m,
            at[i].slices > 1 ? "does not read" : "reads");
    free(src);
    lb_recipe_free(r);
  }
}

/* 2..8 rows of 7-bit codes at K = 8192 in clusters of 4 (hcl): a second
** one-fragment kernel, its source saying which rows it runs and how to
** make it again; a plan's hcl decides (0: none, 2 for any plan). */
static void check_hcl(void) {
  static const struct {
    const char *name, *text, *plan;
    int n, k, m, cluster, stages, hcl;
  } at[] = {
      {"w7", w7_text, NULL, 8192, 8192, 1, 1, 2, 4},
      {"w7", w7_text, NULL, 8192, 8192, 2, 4, 1, 4},
      {"w7", w7_text, NULL, 8192, 8192, 5, 4, 1, 4},
      {"w7", w7_text, NULL, 8192, 8192, 8, 4, 1, 4},
      {"w7", w7_text, "hcl=0", 8192, 8192, 8, 1, 2, 0},
      {"w7", w7_text, "hcl=2", 8192, 8192, 8, 2, 2, 2},
      {"w7", w7_text, NULL, 14336, 4096, 8, 1, 2, 0},   /* K = 4096 */
      {"w7", w7_text, NULL, 2048, 8192, 8, 2, 2, 0},    /* 128 blocks */
      {"w4", w4_text, NULL, 8192, 8192, 8, 1, 1, 0}};
  size_t i;
  for (i = 0; i < sizeof at / sizeof at[0]; i++) {
    lb_recipe *r = load(at[i].name, at[i].text);
    lb_gemv_cfg c;
    char *src = NULL;
    const int hi = at[i].hcl > 0 && at[i].m >= LB_GEMV_HI;
    if (r == NULL) continue;
    CHECK(gemv_rows(r, at[i].name, at[i].n, at[i].k, at[i].m, at[i].plan,
                    &c) &&
              c.cluster == at[i].cluster && c.stages == at[i].stages &&
              c.hcl == at[i].hcl,
          "%s %d x %d, %d rows, %s: cluster %d, %d stage(s), hcl %d; not "
          "%d, %d, %d", at[i].name, at[i].k, at[i].n, at[i].m,
          at[i].plan ? at[i].plan : "rules", c.cluster, c.stages, c.hcl,
          at[i].cluster, at[i].stages, at[i].hcl);
    if (lb_gen_gemv(r, at[i].n, at[i].k, at[i].m, 132, at[i].plan, "test", 0,
                    NULL, &src) == LB_OK) {
      const char *span = !at[i].hcl ? "rows 1..8."
                         : hi       ? "rows 2..8 (plan: hcl"
                                    : "rows 1 (2..8 run another kernel";
      CHECK(strstr(src, span) != NULL &&
                (strstr(src, "--m 2 ") != NULL) == hi,
            "%s %d x %d, %d rows: the source does not say \"%s\"%s",
            at[i].name, at[i].k, at[i].n, at[i].m, span,
            hi ? " or --m 2" : "");
    }
    free(src);
    lb_recipe_free(r);
  }
}

static void check_short_k(void) {
  static const char text[] =
      "name \"w5g32\"\nactivations \"bf16\"\n"
      "weights { bits = 5, signed = true }\n"
      "scales { group = 32, dtype = \"bf16\" }\nzeros { dtype = \"bf16\" }\n"
      "dequant \"q * s + z\"\n";
  lb_recipe *r = NULL;
  lb_gemv_cfg c;
  if ((r = load("w5g32.lua", text)) == NULL) return;
  CHECK(gemv_at(r, "w5g32", 256, 1024, NULL, &c) && c.warps == 2 &&
            c.split == 2 && c.rsplit && c.grid == 16 && c.srowb > 0,
        "w5g32 256 x 1024: %d blocks of %d warps, split %d, rsplit %d, "
        "resident rows %d; not 16 of 2, split 2, rsplit, resident", c.grid,
        c.warps, c.split, c.rsplit, c.srowb);
  CHECK(gemv_at(r, "w5g32", 1024, 16384, NULL, &c) && c.warps == 4 &&
            !c.rsplit,
        "w5g32 1024 x 16384: blocks of %d warps (rsplit %d), not 4", c.warps,
        c.rsplit);
  CHECK(gemv_at(r, "w5g32", 512, 2048, NULL, &c) && !c.rsplit,
        "w5g32 512 x 2048 (two tiles): a code-row split");
  /* more groups than SMs, at most two an SM: blocks of two groups */
  CHECK(gemv_at(r, "w5g32", 4096, 1024, NULL, &c) && c.rsplit &&
            c.warps == 4 && c.split == 2 && c.grid == 128,
        "w5g32 4096 x 1024: %d blocks of %d warps, split %d, rsplit %d; "
        "not 128 of 4, split 2, rsplit", c.grid, c.warps, c.split, c.rsplit);
  /* there groups of 32 of codes across words read x with the tiles;
  ** other groups copy it first */
  CHECK(gemv_rows(r, "w5g32", 4096, 1024, 8, NULL, &c) && c.xres == 0,
        "w5g32 4096 x 1024, M = 8: x resident (%d bytes)", c.xres);
  {
    lb_recipe *r5 = load("w5.lua", w5_text);
    CHECK(r5 == NULL || (gemv_rows(r5, "w5", 4096, 1024, 8, NULL, &c) &&
                         c.rsplit && c.xres > 0),
          "w5 4096 x 1024, M = 8: rsplit %d, x resident %d bytes", c.rsplit,
          c.xres);
    lb_recipe_free(r5);
  }
  CHECK(gemv_at(r, "w5g32", 8192, 1024, NULL, &c) && !c.rsplit,
        "w5g32 8192 x 1024 (512 groups): a code-row split");
  CHECK(gemv_at(r, "w5g32", 1536, 1024, NULL, &c) && !c.rsplit,
        "w5g32 1536 x 1024 (96 groups, not measured): a code-row split");
  /* two fragments of 3- and 5-bit codes in long layers: a cluster to about
  ** two blocks an SM, not slices; not for 4-bit codes */
  {
    static const char w3[] =
        "name \"w3\"\nactivations \"f16\"\nweights { bits = 3 }\n"
        "scales { group = 128 }\nzeros { dtype = \"f16\" }\n"
        "dequant \"(q - z) * s\"\n";
    lb_recipe *r3 = load("w3.lua", w3), *r4 = load("w4.lua", w4_text);
    static const int at[][3] = {{1024, 16384, 4}, {2048, 8192, 2}};
    size_t i;
    for (i = 0; r3 && i < 2; i++)
      CHECK(gemv_rows(r3, "w3", at[i][0], at[i][1], 16, NULL, &c) &&
                c.nf == 2 && c.slices == 1 && c.cluster == at[i][2],
            "w3 %d x %d, M = 16: %d fragments, %d slices, cluster %d; not "
            "2, 1, %d", at[i][1], at[i][0], c.nf, c.slices, c.cluster,
            at[i][2]);
    CHECK(gemv_rows(r, "w5g32", 2048, 8192, 12, NULL, &c) && c.nf == 2 &&
              c.slices == 1 && c.cluster == 2,
          "w5g32 8192 x 2048, M = 12: %d fragments, %d slices, cluster %d; "
          "not 2, 1, 2", c.nf, c.slices, c.cluster);
    CHECK(r4 == NULL || (gemv_rows(r4, "w4", 2048, 8192, 16, NULL, &c) &&
                         c.cluster == 1),
          "w4 8192 x 2048, M = 16: cluster %d, not 1", c.cluster);
    lb_recipe_free(r3);
    lb_recipe_free(r4);
  }
  /* two fragments (9..16 rows): 7-bit codes take the pairs' split (5-bit
  ** codes and few groups run 9..16 rows as slices of 1..8 rows' plan) */
  {
    lb_recipe *r7 = load("w7.lua", w7_text);
    if (r7) {
      CHECK(gemv_rows(r7, "w7", 4096, 1024, 16, NULL, &c) && c.rsplit &&
                c.nf == 2 && c.warps == 2 && c.split == 2 && c.grid == 256,
            "w7 4096 x 1024, M = 16: %d blocks of %d warps, split %d, "
            "rsplit %d, %d fragments; not 256 of 2, split 2, rsplit, 2",
            c.grid, c.warps, c.split, c.rsplit, c.nf);
      CHECK(gemv_rows(r7, "w7", 2560, 1024, 12, NULL, &c) && c.rsplit &&
                c.grid == 160,
            "w7 2560 x 1024, M = 12: %d blocks, rsplit %d; not 160, rsplit",
            c.grid, c.rsplit);
      lb_recipe_free(r7);
    }
  }
  {
    /* 1-bit codes: the few groups' split, their words then read where
    ** used; not blocks of two groups (1024 x 4096), nor past one tile */
    static const char w1[] =
        "name \"w1g32\"\nactivations \"f16\"\nweights { bits = 1 }\n"
        "scales { group = 32 }\nzeros { dtype = \"f16\" }\n"
        "dequant \"(q - z) * s\"\n";
    lb_recipe *r1 = load("w1g32.lua", w1);
    if (r1) {
      CHECK(gemv_at(r1, "w1g32", 1024, 1024, NULL, &c) && c.rsplit &&
                c.lazy && c.warps == 2 && c.split == 2 && c.grid == 64,
            "w1g32 1024 x 1024: %d blocks of %d warps, split %d, rsplit "
            "%d, lazy %d; not 64 of 2, split 2, rsplit, lazy", c.grid,
            c.warps, c.split, c.rsplit, c.lazy);
      CHECK(gemv_at(r1, "w1g32", 4096, 1024, NULL, &c) && !c.rsplit,
            "w1g32 4096 x 1024 (256 groups): a code-row split");
      CHECK(gemv_at(r1, "w1g32", 256, 2048, NULL, &c) && !c.rsplit,
            "w1g32 256 x 2048 (two tiles): a code-row split");
      lb_recipe_free(r1);
    }
  }
  {
    /* knobs: kept where the template has it (the cluster dropped), else
    ** dropped; cut to whole chunks a warp (6-bit codes: 16 code rows, 4
    ** chunks, so no more than 4 parts) */
    static const char w6[] =
        "name \"w6\"\nactivations \"f16\"\nweights { bits = 6 }\n"
        "scales { group = 128 }\ndequant \"q * s\"\n";
    lb_recipe *r6 = load("w6.lua", w6), *r4 = load("w4.lua", w4_text);
    struct {
      const lb_recipe *r;
      int n, k;
      const char *plan;
      int rsplit, split, cluster;   /* (cluster -1: the rules') */
    } kc[] = {{r, 48, 16384, "rsplit=1,cluster=4,warps=4,split=4", 1, 4, 1},
              {r, 256, 1024, "rsplit=1,split=1", 0, 1, -1},
              {r4, 256, 4096, "rsplit=1,warps=4,split=4", 0, 4, -1},
              {r6, 256, 4096, "rsplit=1,warps=8,split=8", 1, 4, 1}};
    size_t i;
    for (i = 0; i < sizeof kc / sizeof kc[0]; i++) {
      if (kc[i].r == NULL) continue;
      CHECK(gemv_at(kc[i].r, "rsplit", kc[i].n, kc[i].k, kc[i].plan, &c) &&
                c.rsplit == kc[i].rsplit && c.split == kc[i].split &&
                (kc[i].cluster < 0 || c.cluster == kc[i].cluster),
            "%s: rsplit %d, split %d, cluster %d; not %d, %d, %d",
            kc[i].plan, c.rsplit, c.split, c.cluster, kc[i].rsplit,
            kc[i].split, kc[i].cluster);
    }
    lb_recipe_free(r6);
    lb_recipe_free(r4);
  }
  lb_recipe_free(r);
}

/* Every plan in words fits LB_PLAN_LEN with its NUL, whatever its knobs'
** values (lb_knobs_text would cut it): the widest of each kind's table.
** The GEMV's was 96 characters when LB_PLAN_LEN was 96. */
static void check_plan_len(void) {
  CHECK(lb_gemv_plan_widest() < LB_PLAN_LEN,
        "the widest GEMV plan has %zu characters; LB_PLAN_LEN is %d",
        lb_gemv_plan_widest(), LB_PLAN_LEN);
  CHECK(lb_gemm_plan_widest() < LB_PLAN_LEN,
        "the widest GEMM plan has %zu characters; LB_PLAN_LEN is %d",
        lb_gemm_plan_widest(), LB_PLAN_LEN);
}

/* A warp's only tile in copies (ph): four for 7-bit codes where a plan
** gives a warp one whole tile of K (8192 x 1024, 4096 x 2048), not where
** two warps split its code rows (4096 x 1024, 256 x 1024), with more
** tiles a warp (1024 x 16384) or a tile that K does not fill (16384 x
** 256); the knob kept where the template has phases, dropped where it
** does not. */
static void check_phases(void) {
  static const char w5[] =
      "name \"w5\"\nactivations \"f16\"\nweights { bits = 5 }\n"
      "scales { group = 64 }\ndequant \"q * s\"\n";
  lb_recipe *r7 = load("w7.lua", w7_text), *r4 = load("w4.lua", w4_text),
            *r5 = load("w5.lua", w5);
  struct {
    const lb_recipe *r;
    int n, k;
    const char *plan;
    int ph;
  } pc[] = {{r7, 4096, 1024, NULL, 1},  {r7, 4096, 2048, NULL, 4},
            {r7, 8192, 1024, NULL, 4},  {r7, 4096, 1024, "ph=4", 4},
            {r7, 256, 1024, NULL, 1},   {r7, 1024, 16384, NULL, 1},
            {r7, 16384, 256, NULL, 1},  {r7, 4096, 1024, "ph=1", 1},
            {r5, 4096, 1024, NULL, 1},  {r5, 4096, 1024, "ph=2", 2},
            {r5, 1024, 16384, "ph=4", 1}, {r4, 4096, 1024, "ph=4", 1}};
  size_t i;
  for (i = 0; i < sizeof pc / sizeof pc[0]; i++) {
    lb_gemv_cfg c;
    if (pc[i].r == NULL) continue;
    CHECK(gemv_at(pc[i].r, "ph", pc[i].n, pc[i].k, pc[i].plan, &c) &&
              c.ph == pc[i].ph,
          "%s %d x %d %s: %d phases, not %d", lb_recipe_name(pc[i].r),
          pc[i].k, pc[i].n, pc[i].plan ? pc[i].plan : "rules", c.ph,
          pc[i].ph);
  }
  lb_recipe_free(r7);
  lb_recipe_free(r4);
  lb_recipe_free(r5);
}

/* The plan in words, at a GEMV row count and one M a GEMM bucket: whole
** within 1 KB (lowbit compile's buffer), the size it says it needs, and
** the 200-byte lb_kernel_desc text its start (or cut, saying so); where
** sm_90's plan is wgmma's, the text gives its split, threads and shared
** memory. */
static void check_describe(const lb_recipe *r, const char *name, int n,
                           int k) {
  static const int ms[] = {1, 16, 32, 64, 128, 1024};
  int i;
  for (i = 0; i < (int)(sizeof ms / sizeof ms[0]); i++) {
    char text[1024];
    size_t need = 0, cut;
    lb_kernel_desc d;
    lb_gemm_plans p;
    const int m = ms[i];
    if (lb_describe(r, n, k, m, 132, &d) != LB_OK ||
        lb_describe_plan(r, n, k, m, 132, text, sizeof text, &need) !=
            LB_OK) {
      CHECK(0, "%s n=%d k=%d m=%d: describe: %s", name, n, k, m, lb_errmsg());
      continue;
    }
    cut = strlen(d.plan) >= 3 && !strcmp(d.plan + strlen(d.plan) - 3, "...")
              ? strlen(d.plan) - 3 : strlen(d.plan);
    CHECK(need == strlen(text) + 1 && strncmp(text, d.plan, cut) == 0 &&
              (cut == strlen(d.plan) || need > sizeof d.plan),
          "%s n=%d k=%d m=%d: '%s' against '%s' (need %zu)", name, n, k, m,
          text, d.plan, need);
    if (m > lb_gemv_rows(r, n, k) &&
        lb_plan_gemm(r, n, k, lb_gemm_bucket(m), 132, NULL, NULL, &p) ==
            LB_OK &&
        p.wg.wg) {
      char want[64];
      snprintf(want, sizeof want, "%d threads, %d bytes", p.wg.threads,
               p.wg.smem);
      CHECK(strstr(text, "sm_90 wgmma") && strstr(text, want),
            "%s n=%d k=%d m=%d: '%s' lacks '%s'", name, n, k, m, text, want);
    }
  }
}

/* lb_plan_gemm at n x k for a test recipe of f16 activations and these
** sections, with "q * s" unless they say their own dequant: its status
** (LB_EARG where the recipe did not load, reported here). */
static lb_status plan_at(const char *sections, const char *plan, int bucket,
                         int n, int k, lb_gemm_plans *p) {
  char text[256];
  lb_recipe *r = NULL;
  lb_status st;
  snprintf(text, sizeof text, "name \"t\"\nactivations \"f16\"\n%s%s", sections,
           strstr(sections, "dequant") ? "" : "dequant \"q * s\"\n");
  if ((r = load("t.lua", text)) == NULL) return LB_EARG;
  st = lb_plan_gemm(r, n, k, bucket, 132, plan, "test", p);
  lb_recipe_free(r);
  return st;
}

static lb_status plan_of(const char *sections, const char *plan, int bucket,
                         lb_gemm_plans *p) {
  return plan_at(sections, plan, bucket, 8192, 8192, p);
}

/* The weights and scales most plan cases read (plan_of adds the rest). */
#define W4 "weights { bits = 4 }\nscales { group = 128 }\n"
#define W3 "weights { bits = 3 }\nscales { group = 128 }\n"
#define W8C "weights { bits = 8 }\nscales { group = \"channel\" }\n"

/* The last rows apart (lb_gemm_tail): m past a whole number of tiles by
** at most a quarter tile, on every part's tile; none at or below one tile,
** on a whole number of tiles, or with tl=0, which the plan's text names
** (and the rules' does not). */
/* The buckets cover 9..LB_MAX_ROWS in order, each span as lb_gemm_bucket
** sorts rows (the tuner prints spans, the generator names them). */
static void check_spans(void) {
  int b, lo, hi, next = LB_MAX_M + 1;
  for (b = 0; b < LB_GEMM_BUCKETS; b++) {
    lb_gemm_span(b, LB_MAX_M, &lo, &hi);
    CHECK(lo == next && (hi == 0) == (b == LB_GEMM_BUCKETS - 1) &&
              (hi == 0 || hi >= lo),
          "bucket %d spans %d..%d after %d", b, lo, hi, next - 1);
    CHECK(lb_gemm_bucket(lo) == b &&
              lb_gemm_bucket(hi ? hi : LB_MAX_ROWS) == b &&
              (lo == LB_MAX_M + 1 || lb_gemm_bucket(lo - 1) == b - 1),
          "bucket %d: rows %d..%d sorted elsewhere", b, lo, hi);
    next = hi + 1;
  }
  /* past a reach below 8 the first bucket starts at its next row */
  lb_gemm_span(0, 4, &lo, &hi);
  CHECK(lo == 5 && hi == 16, "bucket 0 past a reach of 4 spans %d..%d", lo,
        hi);
}

static void check_tail(void) {
  static const char *const text = W4;
  int b, pass;
  for (pass = 0; pass < 2; pass++)
    for (b = 0; b < LB_GEMM_BUCKETS; b++) {
      lb_gemm_plans p;
      char words[LB_PLAN_LEN];
      const lb_gemm_cfg *part[3];
      int i, m;
      if (plan_of(text, pass ? "tl=0" : NULL, b, &p) != LB_OK) {
        CHECK(0, "tail b%d: %s", b, lb_errmsg());
        continue;
      }
      part[0] = &p.wg;
      part[1] = &p.hi;
      part[2] = &p.lo;
      lb_gemm_plan_text(&p.wg, words, sizeof words);
      CHECK((strstr(words, "tl=0") != NULL) == pass && strstr(words, "tl=1") == NULL,
            "tail b%d: plan text \"%s\"", b, words);
      for (i = 0; i < 3; i++)
        for (m = 9; m <= 2048; m++) {
          const int bm = part[i]->tq, r = m % bm;
          const int want = !pass && m > bm && r > 0 && r <= bm / 4 ? r : 0;
          if (lb_gemm_tail(part[i], m) != want) {
            CHECK(0, "tail b%d part %d (bm %d%s) m=%d: %d rows apart, want %d",
                  b, i, bm, pass ? ", tl=0" : "", m, lb_gemm_tail(part[i], m),
                  want);
            break;
          }
        }
    }
}

/* The kernels of 161..256 and 257..384 rows are those of 65..160 or of
** 385+ (the same plan on every part, so the same code but for the rows
** its comments name): what test_sweep leans on to compile only 128 and
** 1024 rows past 64. */
static int same_part(const lb_gemm_cfg *x, const lb_gemm_cfg *y) {
  char t[LB_PLAN_LEN], u[LB_PLAN_LEN];
  lb_gemm_plan_text(x, t, sizeof t);
  lb_gemm_plan_text(y, u, sizeof u);
  return !strcmp(t, u) && x->gridn == y->gridn && x->smem == y->smem;
}

static int same_plans(const lb_gemm_plans *a, const lb_gemm_plans *b) {
  return same_part(&a->wg, &b->wg) && same_part(&a->hi, &b->hi) &&
         same_part(&a->lo, &b->lo);
}

static void check_same_code(const lb_recipe *r, const char *name, int n,
                            int k) {
  lb_gemm_plans p[LB_GEMM_BUCKETS];
  char t[LB_PLAN_LEN];
  int b;
  for (b = 3; b < LB_GEMM_BUCKETS; b++)
    if (lb_plan_gemm(r, n, k, b, 132, NULL, NULL, &p[b]) != LB_OK) return;
  for (b = 4; b <= 5; b++) {
    lb_gemm_plan_text(&p[b].wg, t, sizeof t);
    CHECK(same_plans(&p[b], &p[3]) || same_plans(&p[b], &p[6]),
          "%s n=%d k=%d: bucket %d's plans (sm_90 %s) are neither 65..160's "
          "nor 385+'s", name, n, k, b, t);
  }
}

/* 257..384 rows on sm_90a: 128-row tiles where 256-row ones take a wave
** more (N = 14336: 224 blocks on 132 SMs against 336), the last rows
** still apart after 256 (the tail rule counts 256-row tiles); 256 rows at
** 8192 x 8192 and with bm=256 asked for; at N = 4096 (64 blocks split
** twice) 128 for 4- and 8-bit codes, 256 for 1- and 2-bit; 3-bit codes
** take 128 by the rules at any N. */
static void check_waves(void) {
  static const struct {
    const char *text, *plan;
    int n, k, bm, tq;
  } cs[] = {{W4, NULL, 14336, 4096, 128, 256},
            {W4, NULL, 8192, 8192, 256, 256},
            {W4, NULL, 4096, 14336, 128, 256},
            {W4, "bm=256", 14336, 4096, 256, 256},
            {W4, "tl=0", 14336, 4096, 128, 256},
            {W8C, NULL, 14336, 4096, 128, 256},
            {W3, NULL, 14336, 4096, 128, 128},
            /* 64 channel blocks split twice: 128 rows for 4- and 8-bit
            ** codes, 256 for 1- and 2-bit (measured, lb_gmplan.c) */
            {W8C, NULL, 4096, 14336, 128, 256},
            {"weights { bits = 2 }\nscales { group = 64 }\n", NULL, 4096,
             14336, 256, 256},
            {"weights { bits = 1 }\nscales { group = 64 }\n", NULL, 4096,
             14336, 256, 256}};
  static const int tails[][2] = {{257, 1}, {300, 44}, {320, 64}, {321, 0},
                                 {384, 0}};
  int i, j;
  for (i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
    lb_gemm_plans p;
    if (plan_at(cs[i].text, cs[i].plan, 5, cs[i].n, cs[i].k, &p) != LB_OK) {
      CHECK(0, "waves case %d: %s", i, lb_errmsg());
      continue;
    }
    CHECK(p.wg.bm == cs[i].bm && p.wg.tq == cs[i].tq,
          "waves case %d (n=%d k=%d %s): tiles of %d rows, tail quantum %d; "
          "want %d, %d", i, cs[i].n, cs[i].k, cs[i].plan ? cs[i].plan : "",
          p.wg.bm, p.wg.tq, cs[i].bm, cs[i].tq);
    for (j = 0; j < 5 && cs[i].tq == 256; j++) {
      const int want = cs[i].plan && !strcmp(cs[i].plan, "tl=0") ? 0
                                                                  : tails[j][1];
      CHECK(lb_gemm_tail(&p.wg, tails[j][0]) == want,
            "waves case %d m=%d: %d rows apart, want %d", i, tails[j][0],
            lb_gemm_tail(&p.wg, tails[j][0]), want);
    }
  }
}

/* Resident scales and zeros in the GEMM (lb_gmplan.c reside): past 32 KB
** only where the sub-stage keeps the rule's rows (groups of 32 at K =
** 8192, 9..16 rows of a plan's 32-channel blocks (wn=2): 528-byte rows,
** 34 KB, once read from global memory a sub-stage ahead at half cuBLAS's
** speed); zero rows of their own width (f32 zeros, f16 scales); none
** where they would cut the sub-stage (64 channels, 68 KB: the rule's
** blocks there, whose 5- to 7-bit codes take 16 code rows a sub-stage,
** and at 17..32 rows), which stages them (check_staged). */
static void check_resident(void) {
  static const struct {
    const char *zeros, *plan;
    int bucket, srowb, zrowb, r;
  } cs[] = {{"f16", "wn=2", 0, 528, 528, 8},
            {"f32", "wn=2", 0, 528, 1040, 8},
            {"f16", NULL, 0, 0, 0, 16},
            {"f16", NULL, 1, 0, 0, 8}};
  int i;
  for (i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
    char sections[160];
    lb_gemm_plans p;
    snprintf(sections, sizeof sections,
             "weights { bits = 7 }\nscales { group = 32 }\nzeros { dtype = \"%s\" }\n"
             "dequant \"(q - z) * s\"\n", cs[i].zeros);
    if (plan_of(sections, cs[i].plan, cs[i].bucket, &p) != LB_OK) {
      CHECK(0, "resident case %d: %s", i, lb_errmsg());
    } else {
      CHECK(p.hi.srowb == cs[i].srowb && p.hi.zrowb == cs[i].zrowb &&
                p.hi.r == cs[i].r &&
                p.hi.sres == p.hi.bn * (p.hi.srowb + p.hi.zrowb),
            "resident case %d (zeros %s, bucket %d): rows of %d and %d "
            "bytes (%d in all), %d code rows; want %d, %d, %d", i,
            cs[i].zeros, cs[i].bucket, p.hi.srowb, p.hi.zrowb, p.hi.sres,
            p.hi.r, cs[i].srowb, cs[i].zrowb, cs[i].r);
    }
  }
}

/* Staged scales (stage_scales): a sub-stage's groups of the block's
** channels in each stage where they are not resident and a sub-stage meets
** two whole groups or more (the copies 4 bytes or more); none with
** resident ones, per channel, or where the plan says sg=0, which the plan's
** text then names.  7-bit codes, group 32 (8 a sub-stage of 8 code rows;
** 16 of 16 in the 9..16-row rule's 64-channel blocks) at 8192 x 8192, and 4-bit group 128 (2) at K = 16384, where the rows of
** 64 channels are not resident; the 160 KB parts' plan. */
static void check_staged(void) {
  static const struct {
    int bits, k;
    const char *group, *zeros, *plan;
    int bucket, sstg, zstg;
  } cs[] = {{7, 8192, "32", "f16", NULL, 1, 16, 16},
            {7, 8192, "32", "f32", NULL, 1, 16, 32},
            {7, 8192, "32", "f16", NULL, 0, 32, 32},
            {7, 8192, "32", "f16", "wn=2", 0, 0, 0},
            {7, 8192, "32", "f16", "sg=0", 1, 0, 0},
            {4, 16384, "128", "f16", NULL, 2, 4, 4},
            {4, 16384, "128", "f16", "sg=0", 2, 0, 0},
            {4, 16384, "\"channel\"", "f16", NULL, 2, 0, 0},
            {7, 8192, "32", "f16", "sg=1", 1, 16, 16}};
  int i;
  for (i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
    char sections[160], plan[256];
    lb_gemm_plans p;
    snprintf(sections, sizeof sections,
             "weights { bits = %d }\nscales { group = %s }\nzeros { dtype = \"%s\" }\n"
             "dequant \"(q - z) * s\"\n", cs[i].bits, cs[i].group, cs[i].zeros);
    if (plan_at(sections, cs[i].plan, cs[i].bucket, 8192, cs[i].k, &p) != LB_OK) {
      CHECK(0, "staged case %d: %s", i, lb_errmsg());
    } else {
      const lb_gemm_cfg *c = &p.hi;
      lb_gemm_plan_text(c, plan, sizeof plan);
      CHECK(c->sstg == cs[i].sstg && c->zstg == cs[i].zstg &&
                (c->sstg == 0 || (c->sres == 0 && c->sstg == c->gss * 2)) &&
                (cs[i].plan != NULL && strcmp(cs[i].plan, "sg=0") == 0) ==
                    (strstr(plan, "sg=0") != NULL),
            "staged case %d (%d bits, group %s, zeros %s, bucket %d, plan %s): "
            "%d and %d bytes a channel a stage (%d resident, %d groups a "
            "sub-stage; plan %s); want %d and %d", i, cs[i].bits, cs[i].group,
            cs[i].zeros, cs[i].bucket, cs[i].plan ? cs[i].plan : "-", c->sstg,
            c->zstg, c->sres, c->gss, plan, cs[i].sstg, cs[i].zstg);
    }
  }
  /* test_gpu's stage_check formats (f16 activations here) at N = 1000
  ** stage on sm_90's part at 33..64 and 65..160 rows (its wgmma plans:
  ** stage_check asserts it on the device, and fails where they do not) and
  ** on the other 160 KB parts at 33..64 */
  {
    static const struct {
      const char *sections;
      int k;
    } fx[] = {{"weights { bits = 7 }\nscales { group = 32 }\nzeros { dtype = \"f16\" }\n"
               "dequant \"(q - z) * s\"\n", 8192},
              {"weights { bits = 5, signed = true }\nscales { group = 64, dtype = \"bf16\" }\n"
               "zeros { dtype = \"bf16\" }\ndequant \"q * s + z\"\n", 16384},
              {"weights { bits = 3, signed = true }\nscales { group = 32, dtype = \"f32\" }\n",
               8320}};
    int b;
    for (i = 0; i < (int)(sizeof fx / sizeof fx[0]); i++)
      for (b = 2; b <= 3; b++) {
        lb_gemm_plans p;
        if (plan_at(fx[i].sections, NULL, b, 1000, fx[i].k, &p) != LB_OK) {
          CHECK(0, "staged fixture %d: %s", i, lb_errmsg());
          continue;
        }
        CHECK(p.wg.sstg > 0 && (b == 3 || p.hi.sstg > 0),
              "staged fixture %d, bucket %d: sm_90 %d (wr %d) and 160 KB "
              "parts %d bytes a channel a stage", i, b, p.wg.sstg, p.wg.wr,
              p.hi.sstg);
      }
  }
  /* sg=1 where no part's plan can stage them (8-bit codes, per channel):
  ** refused, naming the knob */
  {
    lb_gemm_plans p;
    CHECK(plan_of(W8C, "sg=1", 1, &p) == LB_EARG && strstr(lb_errmsg(), "sg=1") != NULL,
          "staged: sg=1 on per-channel scales not refused (%s)", lb_errmsg());
  }
}

/* Split-K's ways by the rules (lb_gemm_splits), where the cap and the
** sums' bound decide: a narrow layer's few tiles split 32 ways (4 until
** 2026-11-29, then 16; the old most fails them), a wider one's sums keep
** within LB_SPLIT_SUMS, and tiles that fill the SMs keep their 2 or none;
** sm_90's plan, 132 SMs. */
static void check_splits(void) {
  static const struct {
    int n, k, bucket, m, want;
  } cs[] = {{48, 16384, 2, 64, 32},    {48, 16384, 3, 128, 32},
            {48, 16384, 6, 1024, 32},  {256, 16384, 3, 128, 32},
            {256, 16384, 4, 256, 32},  {1024, 16384, 2, 64, 16},
            {1024, 16384, 4, 256, 8},  {1024, 16384, 6, 1024, 4},
            {256, 4096, 2, 64, 8},     {8192, 8192, 2, 64, 2},
            {8192, 8192, 6, 1024, 1}};
  int i;
  for (i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
    lb_gemm_plans p;
    int sp;
    long long sums;
    if (plan_at(W4, NULL, cs[i].bucket, cs[i].n, cs[i].k, &p) != LB_OK) {
      CHECK(0, "splits case %d: %s", i, lb_errmsg());
      continue;
    }
    sp = lb_gemm_splits(&p.wg, cs[i].m, 132);
    sums = split_sums(&p.wg, cs[i].m, sp);
    CHECK(sp == cs[i].want && (sp <= 4 || sums <= LB_SPLIT_SUMS),
          "splits: %d x %d m=%d: %d ways (%lld bytes of sums); want %d",
          cs[i].n, cs[i].k, cs[i].m, sp, sums, cs[i].want);
  }
}

/* A knob's cases: the recipe's weights and scales, the plan, the bucket,
** and what is built (0: refused, naming the knob). */
typedef struct knob_case {
  const char *text, *plan;
  int bucket, built;
} knob_case;

/* Runs cases: a built one must satisfy built_ok, a refused one must fail
** with LB_EARG naming `needle`. */
static void knob_cases(const knob_case *cs, int n, const char *needle,
                       int (*built_ok)(const lb_gemm_plans *p,
                                       const knob_case *c)) {
  int i;
  for (i = 0; i < n; i++) {
    lb_gemm_plans p;
    lb_status st;
    memset(&p, 0, sizeof p);
    st = plan_of(cs[i].text, cs[i].plan, cs[i].bucket, &p);
    if (cs[i].built)
      CHECK(st == LB_OK && built_ok(&p, &cs[i]),
            "plan \"%s\" b%d: %s not built as asked (%s; %d-row tiles on "
            "sm_90, %d elsewhere, tm %d)", cs[i].plan ? cs[i].plan : "rules",
            cs[i].bucket, needle, st == LB_OK ? "built" : lb_errmsg(),
            p.wg.bm, p.hi.bm, p.wg.tm);
    else
      CHECK(st == LB_EARG && strstr(lb_errmsg(), needle) != NULL,
            "plan \"%s\" b%d: %s neither built nor refused (%d: %s)",
            cs[i].plan, cs[i].bucket, needle, (int)st,
            st == LB_OK ? "" : lb_errmsg());
  }
}

/* built: sm_90's tile rows; the other parts keep the bucket's */
static int bm_built(const lb_gemm_plans *p, const knob_case *c) {
  return p->wg.bm == c->built &&
         p->hi.bm == 16 << (c->bucket < 3 ? c->bucket : 3) &&
         p->lo.bm == p->hi.bm;
}

/* bm: sm_90's TMA plan takes any tile rows it is given, the rules' 256
** rows from 257 (codes that never cross words) and the bucket's below; a
** plan whose sm_90 tile is not the TMA plan's refuses any other rows, and
** the other parts keep the bucket's (built: the sm_90 tile's rows; 0:
** refused naming bm). */
static void check_knob_bm(void) {
  static const knob_case cs[] = {
      {W4, NULL, 5, 256},
      {W4, NULL, 4, 256},
      {W4, NULL, 3, 128},
      {W3, NULL, 5, 128},
      {W3, NULL, 4, 128},
      {W4, "bm=128", 4, 128},
      {W4, "bm=256", 3, 256},
      {W4, "bm=64", 3, 64},
      {W8C, "bm=256", 2, 256},
      {W4, "tm=0,bm=256", 3, 0},
      {W4, "wg=0,bm=64", 3, 0},
      {W4, "wg=0,bm=128", 3, 128},
      {W4, "bm=32", 0, 0}};
  knob_cases(cs, (int)(sizeof cs / sizeof cs[0]), "bm=", bm_built);
}

static int tm_built(const lb_gemm_plans *p, const knob_case *c) {
  (void)c;
  return p->wg.tm == 1 && p->wg.wr == 1 && p->wg.wg == 1;
}

/* tm=1 (activations by TMA) is built as asked or refused with LB_EARG,
** never dropped: where the rules take no wgmma plan with the words in
** registers (17..32 rows, wg=1 without wr=1), with wg=0, wr=0 or
** mma.sync's warps (before, several of those built the plan without TMA);
** built at 33..64 rows for every width, 3-bit codes in groups of 32 and
** 7-bit codes too (refused there until they took the rule's wgmma plan). */
static void check_knob_tm(void) {
  static const knob_case cs[] = {
      {W4, "tm=1", 3, 1},
      {W4, "tm=1", 2, 1},
      {W4, "wg=1,wr=1,tm=1", 1, 1},
      {W4, "wg=1,tm=1", 1, 0},
      {W4, "tm=1", 1, 0},
      {W3, "tm=1", 2, 1},
      {"weights { bits = 3 }\nscales { group = 32 }\n", "tm=1", 2, 1},
      {"weights { bits = 7 }\nscales { group = 128 }\n", "tm=1", 2, 1},
      {"weights { bits = 7 }\nscales { group = 128 }\n", "tm=1", 3, 1},
      {W4, "wg=0,tm=1", 3, 0},
      {W4, "wr=0,tm=1", 3, 0},
      {W4, "wn=2,tm=1", 3, 0}};
  knob_cases(cs, (int)(sizeof cs / sizeof cs[0]), "tm=1", tm_built);
}

static int un_built(const lb_gemm_plans *p, const knob_case *c) {
  return p->wg.un == c->built && p->hi.un == 1 && p->lo.un == 1;
}

/* un (how the wr plan's loop holds its words): the rules' 2 where codes
** cross words, in sub-stages of 8 code rows (33..64 rows) and of 4 (65
** and more), 1 for codes within words (and where the words stay in
** shared memory); 7-bit codes in groups of 32 at 33..64 rows 2 (mma.sync's
** with 1 until the wgmma plan took them there); 2 and 3 asked,
** built where the words go to registers and refused elsewhere; 1 on the
** other parts (built: sm_90's un; 0: refused naming un=). */
static void check_knob_un(void) {
  static const knob_case cs[] = {
      {W3, NULL, 3, 2},          {W3, NULL, 5, 2},
      {W3, NULL, 6, 2},          {W3, NULL, 2, 2},
      {W4, NULL, 3, 1},          {W4, NULL, 5, 1},
      {W4, NULL, 2, 1},
      {"weights { bits = 7 }\nscales { group = 32 }\n", NULL, 2, 2},
      {W4, "wr=0", 2, 1},
      {W3, "un=1", 3, 1},        {W3, "un=3", 3, 3},
      {W4, "un=3", 3, 3},
      {W4, "un=2", 3, 2},        {W4, "un=3", 2, 3},
      {W4, "wg=0,un=3", 3, 0},   {W4, "wr=0,un=2", 3, 0}};
  knob_cases(cs, (int)(sizeof cs / sizeof cs[0]), "un=", un_built);
}

/* The reference's view of a recipe (lb_fmt_of, from the public
** description) is the recipe the generator read: every field, on every
** recipe of the sweep (each dtype, dequant form and zero kind). */
static void check_fmt(const lb_recipe *r, const char *name) {
  lb_fmt f;
  if (!lb_fmt_of(r, &f)) {
    CHECK(0, "%s: lb_fmt_of: %s", name, lb_errmsg());
    return;
  }
  CHECK(f.bits == r->bits && f.is_signed == r->is_signed &&
            f.group == r->group && f.zeros == r->zeros && f.bias == r->bias &&
            f.act == r->act && f.scale == r->sdtype &&
            (!r->zeros || f.zero == r->zdtype) && f.out == r->out &&
            f.dequant == r->dequant,
        "%s: lb_fmt_of differs from the recipe (bits %d/%d, group %d/%d, "
        "dequant %d/%d)", name, f.bits, r->bits, f.group, r->group,
        (int)f.dequant, (int)r->dequant);
}

/* lb_workspace_for (the work space without a GPU; tests/gpu/test_gpu.c
** holds it to lb_op_workspace): none for the GEMV's rows; else whole f32
** rows of n, at most 16 splits of m rows. */
static void check_workspace(const lb_recipe *r, const char *name, int n,
                            int k) {
  static const int ms[] = {8, 16, 100, 255, 4096}, archs[] = {80, 90};
  size_t i, a;
  for (i = 0; i < sizeof ms / sizeof ms[0]; i++)
    for (a = 0; a < sizeof archs / sizeof archs[0]; a++) {
      size_t b = 1;
      const int m = ms[i];
      if (lb_workspace_for(r, n, k, m, 132, archs[a], &b) != LB_OK) {
        CHECK(0, "%s %d x %d m=%d sm_%d: lb_workspace_for: %s", name, n, k,
              m, archs[a], lb_errmsg());
        continue;
      }
      CHECK(m > lb_gemv_rows(r, n, k) || b == 0,
            "%s %d x %d m=%d: %zu bytes for the GEMV", name, n, k, m, b);
      CHECK(b % ((size_t)n * 4) == 0 &&
                b <= (size_t)LB_GEMM_SPLITS * m * n * 4,
            "%s %d x %d m=%d sm_%d: %zu bytes, not splits of f32 rows", name,
            n, k, m, archs[a], b);
    }
}

/* lb_workspace_for's arguments, and LOWBIT_GEMM read as lb_op_create
** reads it: sk=1 (no split) needs none; cl=0 (no cluster) where sm_90's
** plan splits in a cluster needs what sm_80's split does. */
static void check_workspace_env(void) {
  lb_recipe *r = load("w4.lua", w4_text);
  size_t b = 1, b80 = 0, b90 = 1, b90w = 0;
  if (r == NULL) return;
  CHECK(lb_workspace_for(NULL, 64, 64, 16, 132, 90, &b) == LB_EARG &&
            lb_workspace_for(r, 64, 64, 16, 132, 90, NULL) == LB_EARG &&
            lb_workspace_for(r, 64, 64, 0, 132, 90, &b) == LB_EARG &&
            lb_workspace_for(r, 64, 64, LB_MAX_ROWS + 1, 132, 90, &b) ==
                LB_EARG &&
            lb_workspace_for(r, 64, 64, 16, 0, 90, &b) == LB_EARG &&
            lb_workspace_for(r, 64, 64, 16, 132, 75, &b) == LB_EARG &&
            lb_workspace_for(r, 64, 100, 16, 132, 90, &b) != LB_OK && b == 0,
        "lb_workspace_for accepted a bad argument (or set bytes: %zu)", b);
  /* 8192 x 8192 at 32 rows: K split, in a cluster on sm_90 */
  CHECK(lb_workspace_for(r, 8192, 8192, 32, 132, 80, &b80) == LB_OK &&
            lb_workspace_for(r, 8192, 8192, 32, 132, 90, &b90) == LB_OK &&
            b80 > 0 && b90 == 0,
        "8192 x 8192, m = 32: %zu bytes on sm_80, %zu on sm_90 (want some, "
        "none: %s)", b80, b90, lb_errmsg());
  setenv("LOWBIT_GEMM", "cl=0", 1);
  CHECK(lb_workspace_for(r, 8192, 8192, 32, 132, 90, &b90w) == LB_OK &&
            b90w > 0,
        "LOWBIT_GEMM=cl=0: %zu bytes on sm_90 (%s)", b90w, lb_errmsg());
  setenv("LOWBIT_GEMM", "sk=1", 1);
  CHECK(lb_workspace_for(r, 8192, 8192, 32, 132, 80, &b) == LB_OK && b == 0,
        "LOWBIT_GEMM=sk=1: %zu bytes (%s)", b, lb_errmsg());
  unsetenv("LOWBIT_GEMM");
  lb_recipe_free(r);
}

/* The rules' reach by width and shape (lb_gemv_rows; gen/lb_gvplan.c says
** what measured it): every width's most in layers of 4M weights or fewer,
** 16 rows of 1- to 3-bit codes in larger ones where N <= 2048, 32 of 1-bit
** codes, of 2- and 3-bit codes where N <= 4096, 16 of 5-bit codes where
** N <= 4096 and of 6-bit ones where 2048 < N <= 4096 (groups of 32 there
** only where K <= 4096), 8 of 3- and 4-bit codes with f32 scales or
** zeros where N > 2048, 16 of 2-bit codes (not f32 scales with zeros)
** where K <= 4096 and 4096 < N < 8192, 4 of 7-bit codes and 5- and
** 6-bit ones in groups of 32 where K >= 8192 and N = 8192 or K >= 12288
** and 4096 <= N <= 8192, else 16 for 3- and 4-bit codes and 8 for the
** others; each op's plan and lb_rows_at say the same. */
static void check_reach_rules(void) {
  /* N, K, then the reach for bits 1..8 with f16 activations, and for 8
  ** bits with bf16 (f32 dequantisation) */
  static const int want[][11] = {
      {48, 16384, 32, 32, 32, 32, 16, 16, 16, 32, 16},
      {1024, 4096, 32, 32, 32, 32, 16, 16, 16, 32, 16},
      {2048, 2048, 32, 32, 32, 32, 16, 16, 16, 32, 8},
      {1024, 16384, 16, 16, 16, 16, 16, 8, 8, 8, 8},
      {2048, 8192, 16, 16, 16, 16, 16, 8, 8, 8, 8},
      {2049, 8192, 32, 32, 32, 16, 16, 16, 8, 8, 8},
      {4096, 1152, 32, 32, 32, 16, 16, 16, 8, 8, 8},
      {4096, 14336, 32, 32, 32, 16, 16, 16, 4, 8, 8},
      {4096, 12288, 32, 32, 32, 16, 16, 16, 4, 8, 8},
      {4096, 8192, 32, 32, 32, 16, 16, 16, 8, 8, 8},
      {8192, 16384, 32, 8, 16, 16, 8, 8, 4, 8, 8},
      {8193, 16384, 32, 8, 16, 16, 8, 8, 8, 8, 8},
      {4095, 16384, 32, 32, 32, 16, 16, 16, 8, 8, 8},
      {4097, 4096, 32, 16, 16, 16, 8, 8, 8, 8, 8},
      {6144, 4096, 32, 16, 16, 16, 8, 8, 8, 8, 8},
      {6144, 8192, 32, 8, 16, 16, 8, 8, 8, 8, 8},
      {8192, 4096, 32, 8, 16, 16, 8, 8, 8, 8, 8},
      {8192, 8192, 32, 8, 16, 16, 8, 8, 4, 8, 8},
      {0, 0, 32, 8, 16, 16, 8, 8, 8, 8, 8}};
  char text[256];
  int bits, s, bf;
  for (bf = 0; bf < 2; bf++)
    for (bits = bf ? 8 : 1; bits <= 8; bits++) {
      lb_recipe *r;
      snprintf(text, sizeof text,
               "name \"w%d\"\nactivations \"%s\"\nweights { bits = %d }\n"
               "scales { group = 128, dtype = \"%s\" }\n"
               "zeros { dtype = \"%s\" }\ndequant \"(q - z) * s\"\n",
               bits, bf ? "bf16" : "f16", bits, bf ? "bf16" : "f16",
               bf ? "bf16" : "f16");
      if ((r = load("reach.lua", text)) == NULL) continue;
      for (s = 0; s < (int)(sizeof want / sizeof want[0]); s++) {
        const int n = want[s][0], k = want[s][1];
        const int w = want[s][bf ? 10 : 1 + bits];
        lb_gemv_cfg c;
        lb_rows rw;
        CHECK(lb_gemv_rows(r, n, k) == w, "%s %d-bit at %d x %d (K x N): "
              "the rules' reach %d, not %d", bf ? "bf16" : "f16", bits, k, n,
              lb_gemv_rows(r, n, k), w);
        if (n == 0) {
          CHECK(lb_rows_of(r, 9, &rw) == LB_OK &&
                    !strcmp(rw.kind, w > 8 ? "gemv" : "gemm"),
                "%d-bit: lb_rows_of(9) ran %s", bits, rw.kind);
          continue;
        }
        CHECK(lb_plan_gemv(r, n, k, 1, 132, NULL, "test", &c) == LB_OK &&
                  c.rows == w,
              "%d-bit at %d x %d: the plan's rows %d, not %d (%s)", bits, k,
              n, c.rows, w, lb_errmsg());
        CHECK(lb_rows_at(r, n, k, w, &rw) == LB_OK &&
                  !strcmp(rw.kind, "gemv") && rw.hi == w &&
                  lb_rows_at(r, n, k, w + 1, &rw) == LB_OK &&
                  !strcmp(rw.kind, "gemm") && rw.lo == w + 1 &&
                  (w >= 16 || (rw.bucket == 0 && rw.hi == 16)),
              "%d-bit at %d x %d: lb_rows_at does not end the GEMV at %d "
              "(the GEMM's rows %d..%d)", bits, k, n, w, rw.lo, rw.hi);
      }
      lb_recipe_free(r);
    }
  /* groups of 32: two fragments of 5- and 6-bit codes where N <= 4096
  ** only where K <= 4096 or N <= 2048, and the GEMM from 5 rows where K
  ** >= 8192 and N = 8192 or K >= 12288 and 4096 <= N <= 8192 (larger
  ** groups of 6-bit codes not); 3- and 4-bit codes with f32 scales or
  ** zeros: the GEMM past 8 rows where N > 2048 */
  {
    static const struct {
      int n, k, bits, group;
      const char *sd, *zd;
      int reach;
    } at[] = {{4096, 4096, 5, 32, "f16", "f16", 16},
              {4096, 4096, 6, 32, "f16", "f16", 16},
              {4096, 4608, 5, 32, "f16", "f16", 8},
              {4096, 14336, 6, 32, "f16", "f16", 4},
              {8192, 8192, 5, 32, "f16", "f16", 4},
              {8192, 8192, 6, 64, "f16", "f16", 8},
              {6144, 16384, 5, 32, "bf16", "f32", 4},
              {6144, 8192, 5, 32, "f16", "f16", 8},
              {1024, 16384, 5, 32, "f16", "f16", 16},
              {1024, 16384, 6, 32, "f16", "f16", 8},
              {8192, 4096, 5, 32, "f16", "f16", 8},
              {8192, 8192, 4, 64, "f32", "bf16", 8},
              {8192, 8192, 4, 64, "bf16", "bf16", 16},
              {1024, 16384, 4, 32, "f32", "f32", 16},
              {4096, 14336, 3, 0, "f16", "f32", 8},
              {2048, 8192, 3, 1024, "f32", "f16", 16},
              {4096, 14336, 2, 256, "f32", "f16", 32},
              {6144, 4096, 2, 64, "f32", "f16", 8},
              {6144, 4096, 2, 64, "f16", "f32", 16},
              {6144, 4096, 2, 0, "f32", "f32", 8},
              {6144, 4096, 2, 32, "bf16", "bf16", 16}};
    for (s = 0; s < (int)(sizeof at / sizeof at[0]); s++) {
      lb_recipe *r;
      char grp[32] = "group = \"channel\", ";
      if (at[s].group) snprintf(grp, sizeof grp, "group = %d, ", at[s].group);
      snprintf(text, sizeof text,
               "name \"fx\"\nactivations \"f16\"\nweights { bits = %d }\n"
               "scales { %sdtype = \"%s\" }\nzeros { dtype = \"%s\" }\n"
               "dequant \"(q - z) * s\"\n",
               at[s].bits, grp, at[s].sd, at[s].zd);
      if ((r = load("reach_fx.lua", text)) == NULL) continue;
      CHECK(lb_gemv_rows(r, at[s].n, at[s].k) == at[s].reach,
            "%d-bit, group %d, %s scales, %s zeros at %d x %d (K x N): the "
            "rules' reach %d, not %d", at[s].bits, at[s].group, at[s].sd,
            at[s].zd, at[s].k, at[s].n, lb_gemv_rows(r, at[s].n, at[s].k),
            at[s].reach);
      lb_recipe_free(r);
    }
  }
}

/* The int fields of a plan struct, in order (every field of lb_gemv_cfg
** and lb_gemm_cfg is an int). */
static void put_ints(const void *cfg, size_t bytes) {
  const int *v = cfg;
  size_t i;
  for (i = 0; i < bytes / sizeof(int); i++) printf(" %d", v[i]);
}

/* --dump: every plan of the sweep's recipes and of the recipe files
** given, over a grid of shapes, row counts, SM counts and plans in words,
** one line each (every field, or the status and message), for comparing
** two builds: a change to the planners that means to move code only must
** leave it byte-identical (`test_plan --dump RECIPE... > before.txt`,
** rebuild, the same > after.txt, cmp). */
static int dump(int nfiles, char **files) {
  static const int ns[] = {1,    16,   48,   257,  512,   600,   1024,  1056,
                           1088, 2048, 4096, 4112, 8192, 14336, 16384, 28672};
  static const int ks[] = {128,  256,  1024,  1088,  4096,
                           8192, 8320, 14336, 16384, 32768};
  static const int ms[] = {1, 2, 5, 8, 9, 12, 16, 32};
  static const int smss[] = {132, 108, 16};
  static const char *const gv[] = {
      NULL, "split=2", "cluster=4", "hcl=4", "rows=16",
      "warps=2,split=2,rsplit=1", "cluster=8,stages=1", "pf=1,sr=0",
      "slices=0", "lazy=1", "warps=4,split=4"};
  static const char *const gm[] = {NULL, "wn=2,st=3", "sk=2", "wg=0",
                                   "wg=1,wr=1,tm=0"};
  static lb_sweep_row rows[256];
  const int nsweep = lb_sweep(rows, 256);
  int i, d, a, b, q, s, p;
  for (i = 0; i < nsweep + nfiles; i++) {
    lb_recipe *r = NULL;
    const char *name = i < nsweep ? rows[i].name : files[i - nsweep];
    if (i < nsweep ? lb_recipe_load_text(name, rows[i].text,
                                         strlen(rows[i].text), &r) != LB_OK
                   : lb_recipe_load(name, &r) != LB_OK) {
      printf("%s: %s\n", name, lb_errmsg());
      continue;
    }
    for (a = 0; a < (int)(sizeof ns / sizeof ns[0]); a++)
      for (b = 0; b < (int)(sizeof ks / sizeof ks[0]); b++)
        for (s = 0; s < (int)(sizeof smss / sizeof smss[0]); s++) {
          for (q = 0; q < (int)(sizeof ms / sizeof ms[0]); q++)
            for (p = 0; p < (int)(sizeof gv / sizeof gv[0]); p++) {
              lb_gemv_cfg c;
              lb_status st;
              if (p > 0 && (s > 0 || ms[q] % 4 != 1)) continue;
              memset(&c, 0, sizeof c);
              st = lb_plan_gemv(r, ns[a], ks[b], ms[q], smss[s], gv[p],
                                "dump", &c);
              printf("%s gemv %d %d %d %d %s %d", name, ns[a], ks[b], ms[q],
                     smss[s], gv[p] ? gv[p] : "-", (int)st);
              if (st == LB_OK) put_ints(&c, sizeof c);
              else printf(" %s", lb_errmsg());
              printf("\n");
            }
          for (d = 0; d < LB_GEMM_BUCKETS; d++)
            for (p = 0; p < (int)(sizeof gm / sizeof gm[0]); p++) {
              lb_gemm_plans g;
              lb_status st;
              if (p > 0 && s > 0) continue;
              memset(&g, 0, sizeof g);
              st = lb_plan_gemm(r, ns[a], ks[b], d, smss[s], gm[p], "dump",
                                &g);
              printf("%s gemm %d %d %d %d %s %d", name, ns[a], ks[b], d,
                     smss[s], gm[p] ? gm[p] : "-", (int)st);
              if (st == LB_OK) put_ints(&g, sizeof g);
              else printf(" %s", lb_errmsg());
              printf("\n");
            }
        }
    lb_recipe_free(r);
  }
  return 0;
}

int main(int argc, char **argv) {
  static lb_sweep_row rows[256];
  /* (N = 1024: 64 channel groups, where clusters meet more blocks than
  ** SMs: one stage on sm_90 only, fstages) */
  static const int ns[] = {1, 16, 48, 257, 1024, 4112, 16384};
  static const int ks[] = {256, 1024, 8192, 16384, 16384 + 1024};
  int n = lb_sweep(rows, 256), i, a, b, plans = 0;
  if (n <= 0) {
    printf("FAIL: no sweep\n");
    return 1;
  }
  unsetenv("LOWBIT_PLAN");
  unsetenv("LOWBIT_GEMM");
  unsetenv("LOWBIT_DUMP_DIR");
  if (argc > 1 && strcmp(argv[1], "--dump") == 0)
    return dump(argc - 2, argv + 2);
  for (i = 0; i < n; i++) {
    lb_recipe *r = load(rows[i].name, rows[i].text);
    if (r == NULL) continue;
    check_fmt(r, rows[i].name);
    for (a = 0; a < (int)(sizeof ns / sizeof ns[0]); a++)
      for (b = 0; b < (int)(sizeof ks / sizeof ks[0]); b++) {
        int k = ks[b];
        if (r->group && k % r->group) continue;
        check_plan(r, rows[i].name, ns[a], k, 132);
        check_plan(r, rows[i].name, ns[a], k, 108);   /* an A100 */
        plans += 2;
        {
          int bk;
          for (bk = 0; bk < LB_GEMM_BUCKETS; bk++, plans++)
            check_gemm(r, rows[i].name, ns[a], k, bk);
        }
        check_describe(r, rows[i].name, ns[a], k);
        check_workspace(r, rows[i].name, ns[a], k);
        check_same_code(r, rows[i].name, ns[a], k);
        /* the candidates, on a share of the shapes (every recipe meets
        ** each shape once in six) */
        if ((i + a + b) % 6 == 0)
          plans += check_candidates(r, rows[i].name, ns[a], k);
      }
    lb_recipe_free(r);
  }
  check_knob_r();
  check_knob_bm();
  check_tail();
  check_spans();
  check_waves();
  check_resident();
  check_staged();
  check_splits();
  check_knob_tm();
  check_knob_un();
  check_ring_scales();
  check_two_frag_xs();
  check_even();
  check_xs_rows();
  check_one_tile();
  check_two_tiles();
  check_seven_room();
  check_mixed_slots();
  check_short_k();
  check_slices();
  check_phases();
  check_plan_len();
  check_hcl();
  check_workspace_env();
  check_reach_rules();
  printf("%d plans of %d recipes checked, %d failure(s)\n", plans, n,
         failures);
  return failures != 0;
}
