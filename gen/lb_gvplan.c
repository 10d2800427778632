/*
** lb_gvplan.c: the GEMV kind's plan (its launch shape) for a format and a
** shape: the rules, each with the measurement that chose it, the plan's
** knobs in words (LOWBIT_PLAN, lb_op_set_plan, the tuning table) and the
** candidates lowbit tune tries.  lb_gen.c writes the source a plan says.
** Deterministic: the recipe, n, k, sms, m and the knobs alone decide.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_format.h"
#include "lb_gen.h"
#include "lb_gvplan.h"
#include "lb_knob.h"

/* A GEMV plan in words ("warps=8,split=4,stages=2"; LOWBIT_PLAN,
** lb_generate_plan, the tuning table): the knobs, each replacing a
** planned value.  Strict, as the GEMM's (lb_gmplan.c): an unknown key, a
** value out of range, a sign or space, a key given twice or a trailing
** comma is an error naming it, never skipped.  The plan is then cut to
** what the template runs: the ring (stages first, then warps) to fit
** LB_RING_KB, two stages at least for lazy words, a cluster to no more
** warps than K has tiles.  The table also holds the values lowbit tune
** tries and the order plans are written in (include/lowbit.h lists the
** keys too).  K_* name the table's rows, in order: change the two
** together. */
enum { K_WARPS, K_SPLIT, K_STAGES, K_MINB, K_XMINB, K_XRES, K_LAZY, K_CLUSTER,
       K_FOLD, K_PF, K_SR, K_RSPLIT, K_PH, K_ROWS, K_SLICES, K_HCL, NKNOB };
static const lb_knob knob[NKNOB] = {
    {"warps", 1, 8, 1, 4, {1, 2, 4, 8}}, {"split", 1, 8, 1, 4, {1, 2, 4, 8}},
    {"stages", 1, 8, 0, 3, {1, 2, 3}},   {"minb", 1, 8, 0, 2, {1, 2}},
    {"xminb", 1, 8, 0, 2, {1, 2}},       {"xres", 0, 160, 0, 2, {0, 32}},
    {"lazy", 0, 1, 0, 2, {0, 1}},        {"cluster", 1, 8, 1, 4, {1, 2, 4, 8}},
    /* fold changes only the kernel before sm_90, which has no clusters
    ** to tune: never tried */
    {"fold", 1, 8, 1, 0, {0}},
    {"pf", 0, 2, 0, 3, {0, 1, 2}},       {"sr", 0, 1, 0, 2, {0, 1}},
    {"rsplit", 0, 1, 0, 2, {0, 1}},    {"ph", 1, 4, 1, 3, {1, 2, 4}},
    /* the GEMV's reach, an op's choice between kinds: lowbit tune times
    ** it apart (lb_tuner.c), never as a knob of one kernel; below 8 the
    ** GEMM's first bucket takes the rows past it */
    {"rows", 1, LB_GEMV_MOST, 1, 0, {0}},
    /* 9..32 rows as rows of one-fragment blocks (slices), or two and
    ** four fragments: no effect on the plan of 1..8 rows, the one lowbit
    ** tune times (the kernels of 9..32 rows keep the rules' plan) */
    {"slices", 0, 1, 0, 0, {0}},
    /* 2..8 rows in a second kernel, clustered (0: none; a cluster no
    ** larger than the plan's is none): lowbit tune times it with 1 row's
    ** plan, the bucket's rows past 1 running it */
    {"hcl", 0, 8, 1, 3, {0, 2, 4}}};

static lb_status parse_plan(const char *plan, const char *from,
                            int v[NKNOB]) {
  return lb_knobs_parse(plan, from, knob, NKNOB, v);
}

lb_status lb_gemv_plan_check(const char *plan, const char *from) {
  int v[NKNOB];
  return parse_plan(plan, from, v);
}

/* The knobs given replace the planned values (in knob's order). */
static void plan_override(lb_gemv_cfg *cfg, int stage, const int v[NKNOB]) {
  if (v[K_WARPS] >= 0) cfg->warps = v[K_WARPS];
  if (v[K_SPLIT] >= 0) cfg->split = v[K_SPLIT];
  if (v[K_STAGES] >= 0) cfg->stages = v[K_STAGES];
  if (v[K_MINB] >= 0) cfg->minb = v[K_MINB];
  if (v[K_XMINB] >= 0) cfg->xminb = v[K_XMINB];
  if (v[K_XRES] >= 0) cfg->xres = v[K_XRES] * 1024;
  if (v[K_LAZY] >= 0) cfg->lazy = v[K_LAZY];
  if (v[K_CLUSTER] >= 0) cfg->cluster = v[K_CLUSTER];
  if (v[K_FOLD] >= 0) cfg->fold = v[K_FOLD];
  if (v[K_PF] >= 0) cfg->pf = v[K_PF];
  if (v[K_SR] >= 0) cfg->sr = v[K_SR];
  if (v[K_RSPLIT] >= 0) cfg->rsplit = v[K_RSPLIT];
  if (v[K_PH] >= 0) cfg->ph = v[K_PH];
  if (v[K_ROWS] >= 0) cfg->rows = v[K_ROWS];
  if (v[K_HCL] >= 0) cfg->hcl = v[K_HCL];
  /* words read where they are used keep the stage busy through the
  ** tile's math: two stages at least (the rules' warps leave room for
  ** two; plan() keeps one where a warp has one tile) */
  {
    const int least = cfg->lazy ? 2 : 1;
    if (cfg->stages < least) cfg->stages = least;
    while (cfg->stages > least &&
           cfg->warps * cfg->stages * stage > LB_RING_KB * 1024)
      cfg->stages--;
  }
  while (cfg->warps > 1 && cfg->warps * cfg->stages * stage > LB_RING_KB * 1024)
    cfg->warps /= 2;
  if (cfg->split > cfg->warps) cfg->split = cfg->warps;
}

/* Before sm_90 a cluster's fold blocks run as one block: it must divide
** the cluster, and the folded block's warps and ring must be a block's.
** Nor may a warp of it (stepping split x fold tiles) have more than one
** tile, all of them issued by the prologue (STAGES x step or fewer), with
** lazy words: ptxas then schedules lb_gemv's tiles together
** (templates/gemv.cu: NOREFILL, which keeps lb_gemv_xs apart), and wide
** state spilled on sm_80 at N = 48, K = 8192 (fold 4: 4 warps, two tiles
** each), f32 scales and zeros, bias: 3-bit group 32 48 bytes at 255
** registers, group 64 24, 5-bit group 64 8; f32 scales, f16 zeros, no
** bias 8.  Half the fold, until a warp refills its stages: fold 2, four
** tiles a warp, 177 to 240 registers (6- and 7-bit codes at 4096 x 16,
** which had not spilled, 128 to 199 against 146 to 255).  The smaller
** folded block can leave room for the ring's scales or resident ones
** (plan_resident budgets the folded ring), which sm_90's kernel then
** takes too: 5-bit codes at 8192 x 48, a16w5_g64 230 -> 167 registers,
** group 64 with f32 scales and zeros 219 -> 158.  Neither measured for
** time (no sm_80 here; the H200 was not free for sm_90's). */
static void fold_fit(lb_gemv_cfg *cfg, int stage, int tiles) {
  while (cfg->fold > 1 &&
         (cfg->cluster % cfg->fold != 0 || cfg->warps * cfg->fold > LB_WARPS ||
          cfg->warps * cfg->fold * cfg->stages * stage > LB_RING_KB * 1024 ||
          (cfg->lazy && tiles > cfg->split * cfg->fold &&
           tiles <= cfg->stages * cfg->split * cfg->fold)))
    cfg->fold /= 2;
}

/* The knobs that give plan c, in knob's order. */
static void knobs_of(const lb_gemv_cfg *c, int v[NKNOB]) {
  v[K_WARPS] = c->warps;
  v[K_SPLIT] = c->split;
  v[K_STAGES] = c->pst > 0 ? c->pst : c->stages;
  v[K_MINB] = c->minb;
  v[K_XMINB] = c->xminb;
  v[K_XRES] = c->xres / 1024;
  v[K_LAZY] = c->lazy;
  v[K_CLUSTER] = c->pcl > 0 ? c->pcl : c->cluster;
  v[K_FOLD] = c->fold;
  v[K_PF] = c->pf;
  v[K_SR] = c->sring > 0;
  v[K_RSPLIT] = c->rsplit;
  v[K_PH] = c->ph;
  v[K_ROWS] = c->rows;
  v[K_SLICES] = c->nf > 1 ? 0 : c->slices > 1 ? 1 : -1;
  v[K_HCL] = c->nf > 1 ? -1 : c->hcl;
}

void lb_gemv_plan_text(const lb_gemv_cfg *c, char *buf, size_t len) {
  int v[NKNOB];
  knobs_of(c, v);
  lb_knobs_text(knob, NKNOB, v, buf, len);
}

size_t lb_gemv_plan_widest(void) { return lb_knobs_widest(knob, NKNOB); }

/* Resident scales and zeros share one row stride: the wider of the two
** dtypes' slots (in the ring each has its own, LB_ZRING).  Each array's
** rows are copied by 16-byte chunks, so `slots` of each must be whole
** chunks.
** Formats whose scales and zeros differ in size (f16 scales, f32 zeros)
** read both from global memory a chunk of rows ahead before 2026-11-27:
** H100, 16384 x 1024, M = 8 (sweep bench), 7-bit group 32 with f32
** zeros ran 25.7 us against cuBLAS's 18.8. */
static int slot_bytes(const lb_format *f) {
  return f->zeros && f->zsize > f->ssize ? f->zsize : f->ssize;
}
/* Scales and zeros of different sizes are resident only where a tile
** meets more than two group slots: with fewer they come a tile ahead in
** registers (lb_rowtile), which resident rows did not beat (H100, A/B of
** both, 2026-11-27: 16384 x 1024, 8-bit group 256 with f32 zeros 14.4
** -> 16.0 us; 4096 x 14336, 1-bit group 256, 12.8 -> 13.7). */
static int mixed(const lb_format *f) {
  return f->zeros && f->zsize != f->ssize;
}
static int whole_chunks(const lb_format *f, int slots) {
  return slots * f->ssize % 16 == 0 &&
         (!f->zeros || slots * f->zsize % 16 == 0);
}

/* Scales and zeros in the ring: a stage's bytes for them, where a tile
** meets many group slots and even one channel group's rows of them would
** not be resident: each code row would wait on its scales and zeros from
** global memory, a chunk of rows ahead.  Lazy plans keep a stage until
** the tile's math is done, so the tile's slots travel in it, copied with
** its words: rows of a tile's slots padded by 16 bytes (the 8 rows a
** quarter warp reads fall in different banks).  H100, a16w7_g32 at 16384
** x 1024 (ncu, M = 8): half the stall samples were those loads (HADD2
** converting a scale, HMMA; long scoreboard 52%).  0: not this format. */
static int ring_scales(const lb_format *f, int k) {
  const int ng = lb_format_groups(f, k), wide = slot_bytes(f);
  const int arrays = f->zeros ? 2 : 1;
  if (f->gpt <= 2 || !whole_chunks(f, f->gpt) ||
      !whole_chunks(f, ng) ||
      16 * (ng * wide + 16) * arrays <= LB_SRES_KB * 1024)
    return 0;
  return 16 * (f->gpt * f->ssize + 16) +
         (f->zeros ? 16 * (f->gpt * f->zsize + 16) : 0);
}

/* Whether a block of plan c's warps times fold, `stages` deep, takes the
** tile's scales too (sst bytes of them a stage, ring_scales; 0: not this
** format): stages the tile's math keeps (lazy), with room beside the
** words (stage bytes), in LB_RING_KB. */
static int ring_fits(const lb_gemv_cfg *c, int stage, int sst, int stages,
                     int fold) {
  return sst > 0 && c->lazy &&
         c->warps * stages * (stage + sst) * fold <= LB_RING_KB * 1024;
}

/* The blocks of plan c for `groups` channel groups (a cluster's as many). */
static int blocks_for(int groups, int per) { return (groups + per - 1) / per; }
static int channel_blocks(const lb_gemv_cfg *c, int groups) {
  return blocks_for(groups, c->warps / c->split);
}

/* Doubles c's cluster (to 8 at most) while `per` times it stays within
** `cap` and each warp of the split keeps two of K's `tiles` at least: the
** rules' clusters below grow this way, each with its own per and cap. */
static void cluster_up(lb_gemv_cfg *c, long long per, long long cap,
                       int tiles) {
  while (c->cluster < 8 && per * c->cluster <= cap &&
         tiles >= c->split * c->cluster * 2)
    c->cluster *= 2;
}

/* How evenly `blocks` spread over the SMs, in thousandths: the blocks
** over the SMs' share of the busiest (224 on 132: 848). */
static int evenness(int blocks, int sms) {
  const int per = (blocks + sms - 1) / sms;
  return (int)(1000LL * blocks / ((long long)sms * per));
}

/* A resident row of x: K padded to 128 bytes plus 64 (plan_resident). */
static int x_row_bytes(const lb_format *f, int k) {
  return (k * f->asize + 127) / 128 * 128 + 64;
}

/* x's resident budget lowered to one row (never raised: a row larger than
** LB_XRES_KB stays in global memory), in whole KB, the knob's unit, so
** that the plan's words make this plan again (lowbit tune, the tuning
** table: until 2026-11-28 they read 8 KB for K = 4096, less than a row,
** and timed no resident x as the rules). */
static void one_row_x(const lb_format *f, int k, lb_gemv_cfg *cfg) {
  const int row = (x_row_bytes(f, k) + 1023) / 1024 * 1024;
  if (cfg->xres > row) cfg->xres = row;
}

/* What a block keeps in shared memory besides its rings.  Scales and
** zeros: its rows, each padded by 16 bytes so that the eight rows a load
** touches fall in different banks; only when a row is whole 16-byte
** chunks (cp.async) and the rows fit LB_SRES_KB.  Activations: rows of
** K padded to 128 bytes plus 64, so that the two rows of a quarter warp
** fall in different banks; as many rows as fit LB_XRES_KB.  stage: a
** ring stage's bytes for words; sst: for the tile's scales (ring_scales),
** which the stages take where they fit the warps and stages planned for
** the words alone (a16w5_g64 at 16384 x 1024 on an H100: 4 warps a block
** cut to 2 to make room, 15.3 -> 18.7 us). */
static void plan_resident(const lb_format *f, int k, lb_gemv_cfg *cfg,
                          int stage, int sst) {
  int rowb = lb_format_groups(f, k) * slot_bytes(f);
  int rows = 16 * cfg->warps / cfg->split, arrays = f->zeros ? 2 : 1;
  /* the rings of sm_90's block and of the folded one before it */
  int ring = cfg->warps * cfg->stages * stage;
  int fring = cfg->warps * cfg->fstages * stage * cfg->fold;
  const int same = cfg->fstages == cfg->stages;
  cfg->srowb = cfg->sring = cfg->zring = cfg->fsr = 0;
  /* (never resident: ring_scales; a stage read into registers, lazy 0,
  ** is refilled before its tile's math).  With the kernels' stages
  ** apart, sm_90's one stage may take them where the block before it,
  ** two deep, has no room (a16w5_g64 at 16384 x 1024; `fsr`). */
  if (cfg->sr && ring_fits(cfg, stage, sst, cfg->stages,
                           same ? cfg->fold : 1)) {
    cfg->sring = f->gpt * f->ssize + 16;
    cfg->zring = f->zeros ? f->gpt * f->zsize + 16 : 0;
    ring += cfg->warps * cfg->stages * sst;
    cfg->fsr = same || ring_fits(cfg, stage, sst, cfg->fstages, cfg->fold);
    if (cfg->fsr) fring += cfg->warps * cfg->fstages * sst * cfg->fold;
  }
  /* (the folded block's ring, before sm_90, is the larger) */
  if (whole_chunks(f, lb_format_groups(f, k)) && (f->gpt > 2 || !mixed(f)) &&
      rows * (rowb + 16) * arrays <= LB_SRES_KB * 1024 &&
      fring + rows * (rowb + 16) * arrays <= LB_RING_KB * 1024)
    cfg->srowb = rowb + 16;
  cfg->smem = ring + rows * cfg->srowb * arrays;
  cfg->fsmem = fring + rows * cfg->srowb * arrays;
  cfg->xrowb = x_row_bytes(f, k);
  cfg->xs_m = cfg->xres / cfg->xrowb;
}

/* Code rows in a chunk (the template's LB_XC: change the two together):
** the rows whose activations are loaded ahead together, 4, or 4 / the
** fragments; a code-row split and phases give a warp whole chunks. */
static int chunk_rows(const lb_layout *lay, int m) {
  return lay->codes < 4 ? lay->codes : 4 / lb_gemv_frags(m);
}

/* The most rows f's GEMV takes: more than one fragment dequantises every
** weight before the MMA (templates/gemv.cu, LB_DQB), which f32
** dequantisation does not: it takes 9..16 rows only as slices, two rows
** of its one-fragment blocks (plan); four fragments of 5- to 7-bit codes
** spilled (a16w6_g128 at 4096 x 4096: 36 bytes at 255 registers). */
static int gemv_most(const lb_format *f) {
  return f->mode == LB_DQM_F32 || (f->lay.bits >= 5 && f->lay.bits <= 7)
             ? 2 * LB_MAX_M
             : LB_GEMV_MOST;
}

/* The reach: where the GEMV's fragments beat the GEMM's buckets at 9..32
** rows.  A rule a function, each giving the rows it takes for f at N x K,
** or 0 where it has no say; the first to say decides (reach_rules), else
** rules_rows' last line.  n or k of 0: a shape not known, taken as a
** large one.  "The first measurements" below: H200, `lowbit tune RECIPE
** --m 8,16,24,32 --dry-run` (2026-11-29, 13 recipes x 4 to 8 shapes, the
** reach at 8 / 16 / 32 in one call each, shapes K x N; the GEMM on its
** rules' plans; x = time at 16, 24 and 32 rows summed, against the rules'
** reach before them). */

/* Layers of 4M weights or fewer, where the GEMM's tiles leave SMs idle:
** the GEMV to its most for every width (the first measurements: 16384 x
** 48 x0.35 to x0.78, a16w2_g64 M = 24 25.8 -> 8.2 us; 4096 x 1024 x0.72
** to x0.93; 1024 x 4096 x0.80 to x0.99, 5-bit codes x1.02), but 8 rows
** of f32 dequantisation where N > 1024 (as slices where N <= 1024).
** f32 dequantisation (bf16 8-bit codes) in layers of 4M weights or
** fewer where N <= 1024, whose one-fragment grid is small enough to run
** twice over (slices): the GEMM's 9..16 bucket took 11.6 to 13.0 us at
** 16384 x 48 and 7.8 to 8.1 at 1024 x 256, M = 16, where the GEMV took
** 8.4 and 6.0 at M = 8 (H200, 2026-12-01, the sweep's bench).  As
** slices, in the sweep's bench of the run on d48e5d3 (same GPU): 8-bit
** group 64 at 16384 x 48, M = 16, 13.0 -> 9.0 us (cuBLAS fp16 10.0),
** group 256 11.5 -> 9.2, both at 1024 x 256 7.9 / 7.7 -> 6.0. */
static int reach_small(const lb_format *f, int n, int k, int most) {
  if (n > 0 && k > 0 && (long long)n * k <= 1LL << 22)
    return f->mode == LB_DQM_F32 && n > 1024 ? LB_MAX_M : most;
  return 0;
}

/* 1- to 3-bit codes in larger layers of N 2048 or less: two fragments,
** not four.  Since the GEMM splits K past 4 ways (lb_gemm_splits), in a larger
** layer of N 2048 or less (K split 8 ways or more at 17..32 rows: 16 at
** N = 1024, the one shape measured, 8 at 2048; the 32-way cap of
** 71c579e changed neither) four fragments lost for
** 1- to 3-bit codes, two still won (H200, lowbit bench, 2026-11-29,
** LOWBIT_PLAN=rows=8 against the rules, 16384 x 1024, us at M = 16 /
** 24 / 32, the GEMV -> the GEMM): a16w1_g64 14.8 / 17.3 / 18.0 -> 19.4
** / 16.4 / 16.6, a16w2_g64 16.6 / 19.6 / 20.4 -> 20.2 / 17.4 / 17.5,
** a16w3_g128 15.6 / 17.2 / 17.9 -> 15.5 / 17.0 / 17.0. */
static int reach_narrow(const lb_format *f, int n, int k, int most) {
  (void)k;
  if (n > 0 && n <= 2048 && f->lay.bits <= 3)
    return most < 2 * LB_MAX_M ? most : 2 * LB_MAX_M;
  return 0;
}

/* 1-bit codes: the GEMV to its most at every shape tried (the first
** measurements: 8192 x 8192 x0.88, 4096 x 14336 x0.86, 14336 x 4096
** x0.83, 16384 x 1024 x0.70). */
static int reach_one_bit(const lb_format *f, int n, int k, int most) {
  (void)n, (void)k;
  return f->lay.bits == 1 ? most : 0;
}

/* 3- and 4-bit codes with f32 scales or zeros where N > 2048: the GEMM
** (likely because two fragments convert a group's f32 scale and zero
** for every weight pair; not profiled).  H200, 2026-12-01,
** `lowbit bench --m 16` of the sweep's and the shipped 1- to 4-bit
** recipes at 8192 x 8192, 16384 x 1024, 14336 x 4096 and 4096 x 14336,
** LOWBIT_PLAN=rows=8 against the rules in one build: the GEMM took 0.71
** to 0.96 of the time in all 15 such rows at N > 2048 (4-bit group 64
** with f32 scales at 8192 x 8192 41.4 -> 29.3 us, 4-bit group 32 with
** f32 scales and zeros 43.4 -> 31.7; 3-bit per channel with f32 zeros
** 30.9 -> 23.4), 0.92 to 1.09 at 16384 x 1024 (kept: N <= 2048 above);
** 17..32 rows (N = 4096, where 3-bit codes went to 32) not measured.
** 3- and 4-bit codes in f16 or bf16 scales and zeros kept their reach
** (4-bit: the GEMM 1.09 to 1.27 of the GEMV's time in all 28 rows). */
static int reach_f32_zs(const lb_format *f, int n, int k, int most) {
  const int bits = f->lay.bits;
  (void)k, (void)most;
  if ((n <= 0 || n > 2048) && (bits == 3 || bits == 4) &&
      (f->ssize == 4 || (f->zeros && f->zsize == 4)))
    return LB_MAX_M;
  return 0;
}

/* 2- and 3-bit codes where N <= 4096: the GEMV to its most (the first
** measurements: 14336 x 4096 x0.83 to x1.01, 16384 x 1024 x0.77 to
** x0.83, 4096 x 4096 a16w3_g128 x0.8); at N 8192 and more two fragments
** or four lost for 2-bit codes (8192 x 8192: two x1.02 and x1.03, four
** x1.00 to x1.14) and four for 3-bit ones. */
static int reach_low(const lb_format *f, int n, int k, int most) {
  (void)k;
  return n > 0 && n <= 4096 && f->lay.bits <= 3 ? most : 0;
}

/* 2-bit codes where K <= 4096 and 4096 < N < 8192, except f32 scales
** with zeros: two fragments.  There the GEMM's 9..16-row blocks (64
** channels, K split 2 ways) fill 192 of 264 places at two an SM.  H200,
** 2026-12-01, `lowbit bench --m 12,16` of the sweep's 2-bit recipes and
** a16w2_g64, two fragments against LOWBIT_PLAN=rows=8 in one build, at
** 4096 x 6144: 0.72 to 0.82 of the GEMM's time in all 10 rows this rule
** takes (a16w2_g64, M = 16, 15.6 -> 11.5 us, cuBLAS fp16 18.4; 16-bit
** scales with f32 zeros 0.73 / 0.75, f32 scales without zeros 0.82);
** f32 scales with zeros 1.04 to 1.09.  Outside the band mixed:
** 4096 x 8192 0.95 to 1.20 (M = 16: 1.01 to 1.20), 4096 x 14336 0.82
** to 1.13, 4096 x 28672 0.75 to 1.26 (groups of 32 1.21 / 1.26), 2048
** x 8192 0.87 to 1.03.  Not measured at other N in the band.  (The
** GEMM's own fill there is the deeper fix, untried: it would serve
** every format that takes the GEMM at such N.) */
static int reach_two_band(const lb_format *f, int n, int k, int most) {
  (void)most;
  if (f->lay.bits == 2 && k > 0 && k <= 4096 && n > 4096 && n < 8192 &&
      !(f->ssize == 4 && f->zeros))
    return 2 * LB_MAX_M;
  return 0;
}

/* 5- and 6-bit codes where N <= 4096: two fragments against the GEMM's
** 9..16 bucket of 9bfab3d (64-channel blocks in larger layers), H200,
** 2026-12-01, `lowbit bench --m 12,16` of the sweep's 5- and 6-bit
** recipes, a16w5_g64 and a16w6_g128 at six shapes, LOWBIT_PLAN=rows=16
** against the rules in one build: 0.71 to 0.97 of the time in all 66
** rows this rule takes (geometric mean 0.84; 4096 x 4096 0.74 to 0.91,
** w5 16384 x 1024 0.71 to 0.90, 14336 x 4096 0.81 to 0.97; a16w5_g64
** at 16384 x 1024, M = 16, 19.4 -> 14.3 us).  Left to the GEMM:
** 6-bit codes at N = 1024 (16384 x 1024: 0.94 to 1.10, 1.02 in the
** mean), groups of 32 at 14336 x 4096 (5-bit 1.10 / 1.14, 6-bit 0.96 /
** 1.01), and N of 8192 and more (8192 x 8192 1.00 to 1.20; 4096 x
** 14336 and 4096 x 28672 0.79 to 1.25, by recipe and M). */
static int reach_mid(const lb_format *f, int n, int k, int most) {
  const int bits = f->lay.bits;
  if (n > 0 && n <= 4096 && (bits == 5 || (bits == 6 && n > 2048)) &&
      !(f->group == 32 && n > 2048 && k > 4096))
    return most;
  return 0;
}

/* 7-bit codes, and 5- and 6-bit codes in groups of 32, where K >= 8192
** and N = 8192, or K >= 12288 and 4096 <= N <= 8192: the GEMM's 9..16-row
** blocks from 5 rows (reach 4).  At such K the GEMV's x is resident for
** 1 row only (32 KB), and at 5..8 rows every code row reads its chunk of
** x from L2; the GEMM reads a tile of x once for 64 channels.  H200,
** 2026-12-01, `lowbit bench --iters 30` of the sweep's 5- to 7-bit
** recipes and the bench and shipped ones, LOWBIT_PLAN=rows=1 (the GEMM
** from 2 rows) against the rules in one build, two calls (M = 2, 4, 6,
** 8 and M = 4, 5, 6, 8): in the formats this rule takes, 0.71 to 0.96 of
** the time in all 72 rows of 5..8 rows at 14336 x 4096, 16384 x 4096 and
** 16384 x 8192 (sw_w7s_g32 at 14336 x 4096, M = 8, 41.8 -> 33.8 us,
** cuBLAS fp16 35.6; a16w7_g32 39.7 -> 33.6), 0.80 to 1.02 in the 18 at
** 8192 x 8192 (M = 6 and 8).  At 4 rows 0.78 to 1.02 where K >= 14336
** and 0.90 to 1.06 at 8192 x 8192: the GEMV keeps 1..4.  Left to the
** GEMV: K = 8192 at N = 4096 (0.94 to 1.13), 6144 (0.90 to 1.20), 14336
** (0.83 to 1.10) and 28672 (0.87 to 1.17); 6-bit codes in groups of 64
** to 256 (0.84 to 0.92 at 8192 x 8192, 1.05 to 1.20 at 14336 x 4096
** and 16384 x 4096, 0.84 to 1.08 at 16384 x 8192); 8-bit codes (1.11 to
** 1.44 at 8192 x 8192 and 14336 x 4096). */
static int reach_long_odd(const lb_format *f, int n, int k, int most) {
  const int bits = f->lay.bits;
  (void)most;
  if ((bits == 7 || (f->group == 32 && (bits == 5 || bits == 6))) &&
      ((k >= 8192 && n == 8192) || (k >= 12288 && n >= 4096 && n <= 8192)))
    return LB_MAX_M / 2;
  return 0;
}

/* The reach's rules in the order they decide. */
static int (*const reach_rules[])(const lb_format *, int, int, int) = {
    reach_small, reach_narrow, reach_one_bit, reach_f32_zs,
    reach_low,   reach_two_band, reach_mid,   reach_long_odd};

/* The rules' reach for f at N x K (lb_gemv_rows): the first rule's that
** says, else 16 for 3- and 4-bit codes and 8 for the others.  Not 32 for
** 4- and 8-bit codes in larger layers (the first measurements: four
** fragments lost at 14336 x 4096, a16w4_g128 x1.09, a16w8_channel x1.21,
** and tied at 4096 x 4096, a16w8_channel x1.03).
** Elsewhere as measured on an H100 (2026-11-26, `lowbit bench` against
** the GEMM's 9..16 bucket): two fragments for 3- and 4-bit codes
** (a16w4_g128 15-22% faster on four shapes, 8192 x 8192 M = 16 29.5
** -> 23.6 us; a16w3_g128 8-17% on three, 5% slower at 8192 x 8192),
** not for 2- and 8-bit codes (a16w2_g64 at 8192 x 8192 27.0 -> 32.3
** us, a16w8_channel 32.2 -> 36.5). */
static int rules_rows(const lb_format *f, int n, int k) {
  const int most = gemv_most(f), bits = f->lay.bits;
  size_t i;
  for (i = 0; i < sizeof reach_rules / sizeof reach_rules[0]; i++) {
    const int rows = reach_rules[i](f, n, k, most);
    if (rows > 0) return rows;
  }
  return bits == 3 || bits == 4 ? 2 * LB_MAX_M : LB_MAX_M;
}

int lb_gemv_rows(const lb_recipe *r, int n, int k) {
  lb_format f;
  if (r == NULL) return LB_MAX_M;
  lb_format_of(r, &f);
  return rules_rows(&f, n, k);
}

int lb_gemv_frags(int m) {
  return m > 2 * LB_MAX_M ? 4 : m > LB_MAX_M ? 2 : 1;
}

int lb_gemv_reach(const lb_recipe *r, int n, int k, const char *plan) {
  int v[NKNOB];
  if (plan != NULL && lb_knobs_parse(plan, "", knob, NKNOB, v) == LB_OK &&
      v[K_ROWS] > 0)
    return v[K_ROWS];
  return lb_gemv_rows(r, n, k);
}

/* Slices: 9..16 rows (or 17..32) as two (four) rows of the one-fragment
** kernel's blocks, 8 rows of x each, instead of one block taking two
** (four) fragments of x, where the one-fragment kernel's blocks (plan
** one) leave SMs idle: more blocks, each a shorter chain of math.  H200,
** 2026-12-01, `lowbit bench` of the shipped and bench recipes (1- to
** 8-bit codes) at nine shapes from 1024 x 256 to 8192 x 8192 (K x N),
** M = 12, 16, 24, 32, LOWBIT_PLAN=slices=1 against slices=0 in one
** build, every row correct (rows the GEMV takes): where the sliced grid
** fits the SMs once, slices took 0.63 to 0.98 of the time in all 40 rows
** (a16w3_g128 at 1024 x 256, M = 32 9.8 -> 6.2 us, a16w1_g64 at 4096 x
** 1024, M = 24 9.4 -> 8.0).  Twice over (256 sliced blocks), faster in 12
** of 12 rows for 1-bit codes (0.81 to 0.95) and 3-bit ones (0.84 to
** 0.94), 6 of 8 for 5-bit ones (0.86 to 0.97; 1.05 at 16384 x 256), but 4
** of 12 for 2-bit codes (to 1.10), 3 of 24 for 4-bit ones (to 1.36), 4 of
** 8 for 7-bit ones (to 1.10), none for 6- and 8-bit ones (1.01 to 1.33).
** Further over (512 and more) 1- and 3-bit codes lost in 19 of 26 rows
** (to 1.81, a16w3_g128 at 4096 x 4096).  So: once for every width, twice
** for 1-, 3- and 5-bit codes. */
static int slice_rule(const lb_format *f, const lb_gemv_cfg *one,
                      const lb_gemv_cfg *two, int m, int sms) {
  const long long grid =
      (long long)one->grid * one->cluster * lb_gemv_frags(m);
  const int b = f->lay.bits, twice = b == 1 || b == 3 || b == 5;
  /* 3- and 5-bit codes keep the fragments where a cluster spreads them
  ** past the SMs (plan's rule for long layers, measured there against
  ** these slices) */
  if ((b == 3 || b == 5) && two->nf > 1 && two->cluster > 1 &&
      (long long)two->grid * two->cluster > sms)
    return 0;
  return grid <= (long long)sms * (twice ? 2 : 1);
}

/* 2..8 rows of 7-bit codes in clusters of 4 (hcl), where that gives each
** warp of the 1..8-row plan's blocks of 2 warps (split 2) one tile (K =
** 8192) and those blocks are at least three an SM.  There one row of x is
** resident (no room for more) and past it every row streams from L2 a
** chunk ahead; four times the blocks, each with one tile and one stage
** (34 KB against 67: six an SM against three), keep more of those loads
** in flight.  One row keeps the plan: clusters lost there (28.4 -> 34.5
** us, 7-bit group 64 at 8192 x 8192): resident x, the cluster's sums.
** H200, 2026-12-01, `lowbit bench --iters 30`, every row correct; the
** sweep's and the shipped 7-bit recipes (seven):
** - at 8192 x 8192, M = 1, 5, 8, LOWBIT_PLAN=cluster=4,stages=1 against
**   the rules (one call), us at M = 5 / 8: a16w7_g32 39.1 / 40.5 -> 33.9
**   / 35.2, group 32 with f32 zeros 40.4 / 41.8 -> 35.4 / 36.8, group
**   1024 35.2 / 36.3 -> 30.9 / 32.5, group 256 34.2 / 35.7 -> 31.0 / 32.5,
**   per channel 34.7 / 35.8 -> 30.3 / 31.6, group 64 with f32 scales 37.2
**   / 38.6 -> 35.8 / 36.8; group 128 without zeros 35.1 / 36.3 -> 35.8 /
**   36.9;
** - this rule (5..8 rows then) against hcl=0 (one call), at 8192 x 6400,
**   M = 5 / 8: a16w7_g32 36.4 / 37.3 -> 29.0 / 30.3 (cuBLAS fp16 30.4 /
**   30.1), all seven 0.80 to 0.91 of the time; at 8192 x 8192 0.86 to
**   0.96, group 128 without zeros 1.01;
** - M = 2, 3, 4, cluster=4,stages=1 against the rules (one call): 0.78
**   to 0.97 of the time in 39 of 42 rows (a16w7_g32 at 8192 x 6400, M =
**   3: 36.6 -> 28.6 against cuBLAS 31.5), group 128 without zeros at 8192
**   x 8192 1.02 to 1.08 (32.0 -> 34.4 at M = 2; cuBLAS 37.7).
** Not where clusters of 2 give each warp a tile (4096 x 14336: 4 of 7
** recipes faster at M = 5, 8, group 128 26.6 -> 32.8), nor for other
** widths (6-bit group 32 faster, the rest of the 6-bit recipes and every
** 1- to 5- and 8-bit one slower: a16w4_g128 17.8 -> 31.0 at M = 8). */
static int hcl_rule(const lb_format *f, const lb_gemv_cfg *c, int tiles,
                    int groups, int sms) {
  return f->lay.bits == 7 && c->lazy && !c->rsplit && c->cluster == 1 &&
                 c->fold == 1 && c->warps == 2 && c->split == 2 &&
                 tiles == 4 * c->split &&
                 channel_blocks(c, groups) >= 3 * sms
             ? 4 : 0;
}

/* What the rules read: the format (its layout f->lay), the shape and
** the ring stage they plan for. */
typedef struct gv_shape {
  const lb_format *f;
  int n, k, m, sms;
  int tiles, groups;   /* tiles of K; 16-channel groups */
  int stage, sst;      /* a ring stage's bytes; its scales' (ring_scales) */
} gv_shape;

static void shape_of(const lb_format *f, int n, int k, int m, int sms,
                     gv_shape *s) {
  const lb_layout lay = f->lay;
  s->f = f;
  s->n = n;
  s->k = k;
  s->m = m;
  s->sms = sms;
  s->tiles = lb_kpad(&lay, k) / lay.tile;
  s->groups = (n + 15) / 16;
  /* 16 rows of words * 8 chunks of 16 bytes, plus a pad chunk a row */
  s->stage = 16 * (lay.words * 8 + 1) * 16;
  s->sst = ring_scales(f, k);
}

/* The plan before the rules: the ring, its words, registers and the split
** of K.  Every rule below starts from it. */
static void base(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_format *f = s->f;
  const lb_layout lay = s->f->lay;
  const int sms = s->sms, tiles = s->tiles, groups = s->groups,
            stage = s->stage;
  int split = 1, want, warps = LB_WARPS;
  memset(cfg, 0, sizeof *cfg);
  cfg->ph = 1;
  cfg->slices = 1;
  /* A ring stage (shape_of) holds 16 rows of words * 8 chunks of 16
  ** bytes, plus a pad chunk per row (and the tile's scales where they fit:
  ** ring_scales).  Keep the block's ring within LB_RING_KB (every
  ** sm_80..sm_90 part gives a block that much): fewer warps per block for
  ** wide codes, then as many stages as fit, one to LB_MAX_STAGES.  A
  ** stage is refilled as soon as its tile is in registers, so one stage
  ** already overlaps a tile's load with the previous tile's math; on an
  ** H100 deeper rings lose (a16w4 8192 x 8192, M = 1, split 4: 1, 2, 3
  ** stages 18.2, 19.1, 19.9 us): more requests in flight delay the ones
  ** the warps wait for. */
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
  cfg->minb = !lay.cross && f->gpt <= 2 && lay.bits >= 4 &&
              f->sdtype != LB_F32 && f->zdtype != LB_F32
                  ? 2 : 1;
  cfg->xminb = cfg->minb;
  /* Codes of 1 and 2 bits with wide state (minb 1: one block of 8 warps
  ** an SM): blocks of 4 warps, the same stages a warp; ptxas then keeps
  ** them near 128 registers (a16w2_g64: 124 against 188), so three or four
  ** blocks share an SM.  H100, `lowbit bench` A/B in one device call,
  ** twelve shapes, M = 1 and 8: a16w1_g64 and a16w2_g64 at 4096 x 28672
  ** 35.3 -> 21.9 and 36.4 -> 22.8 us (M = 1), 8192 x 28672 15% faster,
  ** 8192 x 8192 3 to 12%, 4096 x 6144 9 to 19%; 3 to 7% slower at 16384
  ** x 1024, 256 x 16384 (M = 8), and a16w2_g64 at 14336 x 4096 and 4096
  ** x 4096 (M = 8).  Not for 8-bit codes with f32 scales (a16w8_f32: up to
  ** 22% slower), nor where two blocks share an SM already (minb 2:
  ** a16w4_g128 at 8192 x 28672, M = 8, 59.3 -> 87.1 us). */
  if (cfg->minb == 1 && lay.bits <= 2 && warps == 8) cfg->warps = warps = 4;
  cfg->xres = LB_XRES_KB * 1024;
  cfg->sr = 1;   /* scales in the ring where plan_resident finds them fit */
  /* What the loop loads from global memory (x, scales and zeros that are
  ** not resident) is brought into L2 with each tile's words (LB_PF), where
  ** few channel groups share x: every group's warps prefetch the same
  ** lines of x.  H100, `lowbit bench` A/B of pf = 0, 1, 2 in one device
  ** call, seven recipes (1 to 8 bits), M = 1 and 8: at 16384 x 48 (3
  ** groups) x and scales took 0.2-0.9 us off every recipe (a16w5_g64 at
  ** M = 8 9.1 -> 8.2 us, a16w7_g32 10.3 -> 9.4); at N = 1024 (64 groups)
  ** x cost up to 2.2 us at M = 8 (a16w1_g64 11.8 -> 14.0), and at 8192 x
  ** 8192 up to 8 us; scales alone moved wide shapes both ways (a16w7_g32
  ** 16384 x 1024 23.1 -> 21.9, a16w5_g64 8192 x 8192 30.9 -> 33.3): a
  ** choice for the tuning table there. */
  cfg->pf = groups <= 4 ? 2 : 0;
  /* Split K until the warps fill the GPU, but keep at least two tiles
  ** per warp and the warps of a channel group in one block.  Two blocks
  ** per SM: no more warps than one wave holds, so that each warp streams
  ** as many tiles as it can (a16w4 8192 x 8192, M = 1, H100: split 4
  ** 18.2 us, split 8 19.9).  One block (wide state, the issue slots are
  ** the limit): about 24 warps per SM (a16w2: split 8 20.9 us, 4 23.5). */
  want = sms * (cfg->minb == 2 ? 16 : 24);
  while (split < warps && tiles >= 2 * split &&
         (cfg->minb == 2 ? groups * split * 2 <= want : groups * split < want))
    split *= 2;
  cfg->split = split;
}

/* Narrow layers (N = 16, 48: a few channel groups) leave most SMs
** idle, and each warp walks its tiles one round trip at a time.  On
** sm_90 a cluster of blocks splits K further, up to a tile per warp,
** and adds its sums in distributed shared memory (no work space); the
** source says so only for sm_90 (LB_CLUSTER), older parts keep one
** block per channel block. */
static void narrow_clusters(const gv_shape *s, lb_gemv_cfg *cfg) {
  const int sms = s->sms, tiles = s->tiles, groups = s->groups;
  const int blocks = channel_blocks(cfg, groups);
  cfg->cluster = 1;
  cluster_up(cfg, 2LL * blocks, sms, tiles);
  /* Where a cluster splits K and SMs are still idle, the same warps go
  ** to more SMs: blocks of half the warps in clusters twice as large (a
  ** channel group's warps and their tiles unchanged).  A narrow layer
  ** is a few round trips per warp; warps that share an SM wait on each
  ** other's issue slots and loads.  H100, N = 16 and 48, K = 8192 and
  ** 16384, every recipe: 2-23% faster (a16w1_g64 at 16384 x 16 11.0 ->
  ** 8.5 us: 8 warps x 2 blocks -> 2 x 8).  Not where the rules chose
  ** no cluster: a first cluster cost about 1 us at K = 256..4096 (1024
  ** x 256, a16w4_g128: 5.8 -> 6.9 us).  Before sm_90 (no clusters) the
  ** fold blocks of a cluster are one block again: the plan there is
  ** the one without the spread. */
  cfg->fold = 1;
  while (cfg->cluster > 1 && cfg->split > 1 && cfg->cluster < 8 &&
         blocks * cfg->cluster * 2 <= sms) {
    cfg->split /= 2;
    cfg->warps /= 2;
    cfg->cluster *= 2;
    cfg->fold *= 2;
  }
}

/* Scales in the ring (ring_scales, where they fit): the most math a tile
** of any plan (7-bit codes, a group a code row) in blocks of 2 warps, so
** a cluster splits K until about two blocks an SM, down to a tile a warp,
** and x comes into L2 with each tile's words.  H100, a16w7_g32, µs at
** M = 1 / 8 (cuBLAS fp16): 16384 x 1024 21.6 / 23.4 -> 17.9 / 18.7
** (18.7 / 18.2), 16384 x 2048 35.1 / 41.1 -> 24.5 / 28.0 (29.9 / 29.4),
** 8192 x 2048 14.7 / 23.0 -> 14.4 / 16.4 (17.6), 8192 x 1024 13.6 / 14.6
** -> 11.6 / 12.1 (12.6); clusters twice as large were slower at N =
** 2048 (8192 x 2048: 20.7 / 19.0).  Where the channel blocks are at
** most half the SMs, to about four blocks an SM: a16w7_g32 (`lowbit
** bench --m 1,8 --iters 50`, rules against cluster=8 in one device
** call, 2026-11-27) 16384 x 1024 18.3 / 19.1 -> 17.7 / 17.7 us (cuBLAS
** 18.9 / 18.4); at N = 2048 (128 blocks) it cost 9 to 15% at M = 1
** (8192 x 2048: 15.6 -> 18.0, 16384 x 2048 24.2 -> 26.3).
** Other lazy plans, where the channel blocks are at most half the SMs:
** a cluster splits K until about four warps an SM (the loop before
** stops at about one block an SM).  H100, `lowbit bench --m 1,8` A/B in
** one device call, 2026-11-27, 16384 x 1024: 7-bit codes in blocks of
** 2 warps, clusters of 2 -> 4, 18.8 / 20.5 -> 16.6 / 16.8 us (group
** 256; cuBLAS 17.8), 18.7 / 20.4 -> 16.5 / 16.8 (group 128).  Not more:
** four blocks an SM cost 3- and 5-bit codes in blocks of 4 warps 15 to
** 25% (a16w5_g64 15.3 -> 18.1 us at M = 1), the ring's four blocks of 4
** warps 7 to 22% (3-bit group 128, f32 zeros: 13.6 -> 16.6 at M = 8);
** and not at N = 2048 (128 blocks: 7-bit, clusters of 2, 7 to 12%
** slower at M = 1).
** 7-bit codes with their scales outside the ring, 1..8 rows: to a tile
** a warp (16 warps an SM of room; N = 1024 at K = 16384 takes clusters
** of 8 instead of 4).
** H200, `tests/gpu/ab.sh . RECIPES --shapes 16384x1024 --m 1,8 --iters
** 60` with AB_ENV_B="LOWBIT_PLAN=cluster=8" in one device call
** (2026-12-02), µs at M = 1 / 8: 7-bit group 256 15.3 / 15.6 -> 13.4 /
** 14.1 (cuBLAS fp16 about 15), group 1024 14.8 / 15.2 -> 13.2 / 13.9,
** per channel 14.5 / 14.7 -> 12.9 / 13.2 (groups of 32 to 128 take 8
** already: scales in the ring, above).  Not for 6-bit codes (0.98 to
** 1.03 of the rules' time); 9..16 rows not measured. */
static void room_clusters(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int m = s->m, sms = s->sms, tiles = s->tiles, groups = s->groups,
            stage = s->stage, sst = s->sst;
  /* warps an SM the clusters below grow to (0: the loop before's) */
  const int blocks = channel_blocks(cfg, groups), few = blocks * 2 <= sms;
  const int ring = ring_fits(cfg, stage, sst, cfg->stages, cfg->fold);
  const int wide = lay.bits == 7 && m <= LB_MAX_M;
  const int room = ring && cfg->warps == 2 ? (few ? 8 : 4)
                   : cfg->lazy && few      ? (wide ? 16 : 4)
                                           : 0;
  /* x into L2 with each tile's words only where the blocks are at
  ** most the SMs, the grids the measurements above had: with more,
  ** x stays in L2 after its first blocks, and every block's prefetch
  ** costs its warps' issue slots.  H200, `lowbit bench --m 1,8 --iters
  ** 40`, pf=1 against the rules (pf=2) in one device call, 2026-11-28,
  ** 8192 x 8192 (512 blocks), M = 8: 7-bit group 64 with f32 scales
  ** 43.1 -> 38.3 us, 7-bit group 32 with f32 zeros 48.2 -> 42.0, 6-bit
  ** group 64 with f32 zeros 37.9 -> 30.2 (cuBLAS 36 to 42); M = 1 (x
  ** resident, nothing to prefetch) within 0.4 us. */
  if (ring && blocks <= sms) cfg->pf = 2;
  cluster_up(cfg, 2LL * blocks * cfg->warps, (long long)room * sms, tiles);
}

/* Wide codes in tiles of 1024 k-values (3 and 5 bits) with at most two
** tiles of K: each warp's tiles are one long chain of math, and blocks
** of 4 warps share few SMs (1024 x 256: 4 blocks; 5-bit group 32 also
** lost its resident scales to the ring's room).  Blocks of 2 warps,
** where the channel blocks are at most half the SMs.  H100, `lowbit
** bench --m 1,8` of warps=2 against the rules in one device call
** (2026-11-28), 3- and 5-bit recipes: 1024 x 256 3-12% faster (5-bit
** group 32: 8.5 / 8.5 -> 7.7 / 7.9 us, cuBLAS 7.4 / 7.3), 2048 x 512
** 3-17%, 1024 x 4096 3-8% at M = 1 and -3..+5% at M = 8; not at 16384
** x 1024 (16 tiles: 25-35% slower).  6-bit codes (tiles of 512) were
** not measured. */
static void two_warps(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int sms = s->sms, tiles = s->tiles, groups = s->groups;
  if (cfg->lazy && lay.codes == 32 && tiles <= 2 && cfg->warps > 2 &&
      cfg->cluster == 1 && channel_blocks(cfg, groups) * 2 <= sms) {
    cfg->warps = 2;
    if (cfg->split > 2) cfg->split = 2;
  }
}

/* One such tile of K (K <= 1024) and one block per channel group still
** at most half the SMs: the group's two warps take half of the tile's
** code rows each (rsplit; the template's lb_part).  H100, `lowbit bench
** --m 1,8 --iters 50` of warps=2,split=2,rsplit=1 against the rules in
** one device call (2026-11-28), seven 3-, 5- and 7-bit recipes, 1024 x
** 256: 3 to 10% faster on all 14 rows (5-bit group 32: 7.7 / 7.9 ->
** 7.1 / 7.3 us, cuBLAS 7.4 / 7.3; 7-bit group 32 7.4 / 7.7 -> 6.8 /
** 6.9).  Not with two tiles (2048 x 512: up to 8% slower); where the
** blocks outnumber the SMs (1024 x 4096, 256 groups) this plan went
** -6 to +8% on the H100, and blocks of two groups won on the H200
** (next); four parts (blocks of 4 warps) were no faster than two.  The
** two-fragment GEMV (9..16 rows) was not measured with it. */
/* Where the channel groups outnumber the SMs but blocks of two groups do
** not (1024 x 4096: 256 groups), blocks of 4 warps (2 for 7-bit codes:
** the ring's room), a group's two warps half the code rows each.  H200,
** `lowbit bench --m 1,8 --iters 30` of LOWBIT_PLAN plans against the
** rules in one device call (2026-12-01), 22 3-, 5- and 7-bit recipes at
** 1024 x 4096, us at M = 1 / 8 (cuBLAS fp16 8.0 to 8.3):
** warps=4,split=2,rsplit=1 faster in 41 of 44 rows (a16w3_g128 6.8 /
** 7.0 -> 6.4 / 6.7, a16w5_g64 7.2 / 7.3 -> 6.8 / 6.8, 5-bit group 256
** 7.1 / 7.3 -> 6.2 / 6.3, 3-bit group 32 7.3 / 7.6 -> 7.0 / 7.0),
** a16w7_g32 at M = 1 the same, 7-bit group 32 with f32 zeros 8.2 / 8.4
** -> 8.3 / 8.6; blocks of 2 warps (split=2,rsplit=1) slower than those
** of 4 in 19 rows and faster in 6; four parts (warps=4,split=4) slower
** than two in 37.  Only where measured: more groups than SMs, at most two
** an SM (N = 2113 to 4224 on 132 SMs); from half a group an SM to one,
** neither plan was measured. */
/* 1-bit codes (narrow: words held a tile at a time) take the few
** groups' plan too, their words then read where used (a code-row split
** needs that).  H200, 2026-12-01, `lowbit bench --m 1,8 --iters 30` of
** the sweep's 1-bit recipes and a16w1_g64, LOWBIT_PLAN=lazy=1,warps=2,
** split=2,rsplit=1 against the rules in one build: 1024 x 256 and 1024
** x 1024 0.89 to 1.00 of the time in all 28 rows (group 32 at 1024 x
** 256 7.0 / 7.3 -> 6.6 / 6.8 us, cuBLAS fp16 7.1 / 7.0; a16w1_g64 at 1024
** x 1024 6.1 / 6.3 -> 5.6 / 5.7); at 1024 x 4096 (pairs) 0.93 to 1.04,
** group 32 slower: not there.
** 7-bit codes with two fragments (9..16 rows) take the pairs' plan
** too (its blocks of 4 warps cut to 2 by the ring's room): the rules'
** blocks of one group left 2 warps an SM, each a whole tile of math.
** H200, 2026-12-01, `lowbit bench --m 12,16 --iters 30` of the sweep's
** 7-bit recipes and a16w7_g32, LOWBIT_PLAN=warps=2,split=2,rsplit=1
** against the rules in one build: 1024 x 4096 and 1024 x 2560 0.80 to
** 0.89 of the time at M = 16 in all 14 rows (a16w7_g32 at 1024 x 4096
** 10.0 -> 8.5 us, cuBLAS fp16 8.1), 0.95 to 1.02 at M = 12.  Not with
** few groups (1024 x 256: 1.01 to 1.04), nor 5- and 6-bit codes (1024
** x 4096: 0.97 to 1.19). */
static void one_tile(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_format *f = s->f;
  const lb_layout lay = s->f->lay;
  const int m = s->m, sms = s->sms, tiles = s->tiles, groups = s->groups;
  if ((cfg->lazy || lay.bits == 1) && lay.codes == 32 && tiles == 1 &&
      cfg->cluster == 1 &&
      (m <= LB_MAX_M || (lay.bits == 7 && m <= 2 * LB_MAX_M))) {
    const int few = groups * 2 <= sms && m <= LB_MAX_M,
              pairs = groups > sms && blocks_for(groups, 2) <= sms;
    if (few || (pairs && cfg->lazy)) {
      cfg->warps = few ? 2 : 4;
      cfg->split = 2;
      cfg->rsplit = 1;
      cfg->lazy = 1;
      /* Pairs of groups of 32 of codes across words (3, 5, 7 bits): x read
      ** with the tile, not copied into each block first.  H200, 2026-12-01,
      ** `lowbit bench --m 1,8 --iters 30` of every sweep, shipped and
      ** bench recipe at 1024 x 4096, LOWBIT_PLAN=xres=0 against the rules
      ** in one build: those four recipes 0.93 to 0.99 of the time in all 8
      ** rows (5-bit group 32: 8.3 / 8.4 -> 7.9 / 8.1 us, cuBLAS fp16 7.9 /
      ** 8.0); the other recipes -5 to +10% (no rule). */
      if (pairs && f->group == 32 && lay.cross && m <= LB_MAX_M)
        cfg->xres = 0;
    }
  }
}

/* Even SMs: blocks of fewer channel groups where that spreads the grid
** more evenly over the SMs (a memory-bound SM's bandwidth follows the
** warps it holds).  4096 x 28672, 4-bit codes: 224 blocks of 8 warps
** put two on 92 SMs and one on 40; 896 of 2 warps put 7 on most.  Found
** by `lowbit tune a16w4_g128 --m 1,8` on the model's layers; H200, A/B
** against the rules before in one device call (2026-11-28, `lowbit
** bench --m 1,8,16 --iters 30`, 4- and 8-bit recipes at 4096 x 6144,
** 4096 x 14336, 4096 x 28672, 8192 x 28672), µs at M = 1 / 8:
** a16w4_g128 4096 x 28672 25.4 / 28.5 -> 23.5 / 24.9, 8192 x 28672
** 45.8 / 54.6 -> 41.5 / 42.2, 4096 x 6144 10.5 / 11.7 -> 9.5 / 11.1;
** a16w8_f32 4096 x 28672 45.9 -> 40.0 (M = 1); 4-bit group 64 with f32
** scales 4096 x 14336 22.7 / 29.8 -> 17.8 / 19.7; but a16w4_g128 at
** 4096 x 14336 15.0 / 16.2 -> 15.3 / 16.8; 8-bit per channel within 4%.
** bench/model.py (overlapped) 1297 -> 1236 us a step at M = 1, 1547 ->
** 1538 at M = 8.  Not for two fragments (9..16 rows): a16w4_g128 at
** 4096 x 14336 21.0 -> 29.6 us, the model at M = 16 2117 -> 2270.  Only
** grids of a wave or more (narrow layers: clusters above) and by 5% of
** evenness at least. */
static void even_sms(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_format *f = s->f;
  const int k = s->k, m = s->m, sms = s->sms, groups = s->groups;
  if (cfg->cluster == 1 && !cfg->rsplit && m <= LB_MAX_M &&
      channel_blocks(cfg, groups) >= sms) {
    int best = cfg->warps, be = evenness(channel_blocks(cfg, groups), sms);
    for (int w = cfg->warps / 2; w >= cfg->split; w /= 2) {
      const int e = evenness(blocks_for(groups, w / cfg->split), sms);
      if (e > be + 50) {
        be = e;
        best = w;
      }
    }
    /* Each block copies its rows of x before its first tile, so smaller
    ** blocks copy x more times over (at 896 blocks and M = 2, 15 MB
    ** against 59 MB of 8-bit codes): one row resident, 2..8 rows read
    ** from L2 with the tiles.  H200, A/B against x resident
    ** up to 3 rows in one device call (`lowbit bench --m 1,2,3,4 --iters
    ** 30`, 2026-11-28), µs at M = 2 / 3: a16w4_g128 4096 x 28672 28.3 /
    ** 35.6 -> 24.1 / 24.2, 4096 x 14336 18.2 / 22.6 -> 16.1 / 16.3;
    ** a16w8_channel 4096 x 14336 26.2 / 26.5 -> 22.5 / 22.7; M = 1 and 4
    ** within 0.15 us; bench/model.py (overlapped) at M = 2 1472 -> 1314
    ** us a step. */
    if (best < cfg->warps) one_row_x(f, k, cfg);
    cfg->warps = best;
  }
}

/* 3- and 5-bit codes where a warp of the split has two tiles (K =
** 8192, split 4): the two tiles are the whole loop, issued together in
** the prologue, and every warp's math waits on both.  Split the K once
** less and the code rows in two instead (the template's lb_part): each
** warp then runs all 8 tiles with half their rows, a loop long enough to
** overlap its loads.  Found by `lowbit tune` of 5-bit group 32 at 8192 x
** 8192.  H200, 2026-11-28, `lowbit bench --m 1,8 --iters 30`, two
** repeats: LOWBIT_PLAN split=2,rsplit=1 against the rules in one device
** call (8 recipes, 3 shapes), then this rule against the planner before
** it in another.  µs at M = 1 / 8, K x N = 8192 x 8192: 5-bit group 32
** with bf16 scales and zeros 38.9 / 41.6 -> 33.6 / 35.1 (cuBLAS 36.5 /
** 36.0), a16w5_g64 29.0 / 32.2 -> 24.2 / 27.3, 5-bit group 64 with f32
** scales 29.1 / 32.6 -> 24.4 / 26.1, a16w3_g128 18.5 / 22.3 -> 17.8 /
** 20.1; 8192 x 16384: 5-bit 10 to 17% faster (group 32: 66.9 / 74.3 ->
** 59.9 / 63.7, cuBLAS 66.1 / 66.3), 3-bit -6 to +3%.  Not with one
** tile a warp (4096 x 14336: 5-bit up to 51% slower), nor for 6- and
** 7-bit codes (-4 to +17%), nor where the halved grid would leave SMs
** idle (8192 x 4096: 128 blocks; asked at 16384 x 1024, 64 channel
** groups, it ran 2 to 3 times slower). */
static void split_rows35(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int m = s->m, sms = s->sms, tiles = s->tiles, groups = s->groups;
  if (cfg->lazy && lay.codes == 32 && (lay.bits == 3 || lay.bits == 5) &&
      cfg->cluster == 1 && !cfg->rsplit && m <= LB_MAX_M &&
      cfg->split == 4 && tiles == 2 * cfg->split) {
    if (blocks_for(groups, cfg->warps / 2) >= sms) {
      cfg->split = 2;
      cfg->rsplit = 1;
    }
  }
}

/* 5-bit codes where a cluster leaves each warp two tiles (16 tiles of K
** = 16384, 64 channel groups at N = 1024: clusters of 2, split 4, one
** block an SM): clusters twice as large, a tile a warp, and then one
** stage on sm_90 (below), which leaves room for the scales in the ring:
** the blocks share SMs instead of their warps walking two tiles in turn.
** H200, `tests/gpu/ab.sh` of main against it in one device call
** (2026-11-30, `--m 1,8 --iters 40`), 16384 x 1024, µs at M = 1 / 8:
** 5-bit group 32 with bf16 scales and zeros 16.7 / 17.3 -> 13.7 / 14.3
** (cuBLAS fp16 15.6 at M = 8 on 2026-11-29), a16w5_g64 14.5 / 15.7 ->
** 12.4 / 12.8, group 64 with f32 scales 13.3 / 13.9 -> 12.1 / 12.6, per
** channel, group 256 and group 1024 3 to 8% faster; group 128 with f32
** zeros 12.0 / 13.2 -> 13.7 / 14.4.  Not for 3-bit codes (cluster=4 in
** an earlier call: a16w3_g128 11.3 / 12.2 -> 13.3 / 14.0) nor 6-bit ones
** (tiles of 512: two a warp all the same; group 32 with f32 scales 14.0
** / 15.3 -> 16.7 / 20.1). */
static void five_clusters(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int tiles = s->tiles;
  if (cfg->lazy && lay.bits == 5 && !cfg->rsplit && cfg->cluster > 1 &&
      cfg->cluster < 8 && tiles == 2 * cfg->split * cfg->cluster)
    cfg->cluster *= 2;
}

/* Two fragments (9..16 rows) of 3- and 5-bit codes in long layers
** whose channel blocks fill at most the SMs once (N = 1024 and 2048 at
** K = 8192 and 16384): a cluster splits K until about two blocks an SM
** (and slice_rule then keeps the two fragments).  The rules' plan was
** one block an SM, or slices of the one-fragment plan (x resident, no
** cluster at N = 2048).  H200, 2026-12-01, `lowbit bench --m 16 --iters
** 30` of the sweep's, the shipped and the bench recipes at 16384 x 1024
** and 8192 x 2048, LOWBIT_PLAN=rows=16,cluster=4 against the rules in
** one build: 3-bit codes 0.80 to 0.94 of the time in all 16 rows
** (a16w3_g128 at 8192 x 2048 13.0 -> 11.5 us, cuBLAS fp16 14.8; group
** 32 at 16384 x 1024 18.1 -> 16.0, cuBLAS 15.8), 5-bit codes 0.64 to
** 0.83 at 8192 x 2048 (7 rows; a16w5_g64 17.4 -> 14.1, group 32 22.4 ->
** 14.5) and the rules' own plan at 16384 x 1024.  Not 1-bit codes
** (0.83 to 0.90 at 8192 x 2048, but 1.20 to 1.44 at 16384 x 1024), nor
** 2-bit ones (0.81 to 1.17), nor 4-, 6- and 8-bit ones (1.02 to 1.94).
** The rule against the plan before (slices=1) in a later call, with
** 16384 x 2048 too: 0.65 to 0.86 of the time in all 30 rows.  Not
** measured with fewer than 8 tiles of K or fewer blocks, nor before
** sm_90, whose kernel runs the fragments without the cluster. */
static void frags_clusters(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int m = s->m, sms = s->sms, tiles = s->tiles, groups = s->groups;
  if (m > LB_MAX_M && m <= 2 * LB_MAX_M && cfg->lazy && lay.codes == 32 &&
      (lay.bits == 3 || lay.bits == 5) && !cfg->rsplit && cfg->fold == 1 &&
      tiles >= 8) {
    const int blocks = channel_blocks(cfg, groups);
    if (blocks <= sms && blocks * 4 >= sms) cluster_up(cfg, blocks, sms, tiles);
  }
}

/* 7-bit codes where a warp has one tile (applied below, where a plan
** gives a warp one tile of K at most): the tile in four copies, the
** math starting on the first (the template's phases).  H200, `lowbit
** bench --m 1,8 --iters 30`, ph=4 against the rules in one device call
** (2026-11-28): a16w7_g32 2048 x 4096 9.5 / 9.6 -> 8.5 / 9.3 us, 1024 x
** 4096 8.1 / 8.5 -> 7.7 / 8.3; 7-bit group 32 with f32 zeros 9.6 / 9.8
** -> 9.0 / 9.8 and 8.4 / 8.8 -> 8.1 / 8.6; at 1024 x 256 (the code-row
** split) 0 to 0.2 us faster.  3-, 5- and 6-bit codes moved by -0.5 to
** +0.2 us (5-bit group 32 at 1024 x 4096, M = 8: 8.9 -> 9.1): not
** there.  Nor where a tile's code rows are split between two warps
** (rsplit: K is one tile, the layer not wide), each copying only its
** half: `tests/gpu/ab.sh` with ph=1 there against ph=4, three repeats
** (2026-12-02), four 7-bit recipes, M = 1 and 8: at K = 1024 and N =
** 256 / 1024 / 4096 0.98 to 1.02 / 0.96 to 1.00 / 0.95 to 0.99 of the
** time (a16w7_g32 at 1024 x 4096 8.0 / 8.1 -> 7.8 / 7.8 us); where a warp
** copies a whole tile (N = 8192 at K = 1024, or K = 2048) four copies
** stay ahead (one copy 1.05 to 1.07 at 1024 x 8192, up to 1.08 at 2048 x
** 4096, M = 1). */
static void seven_phases(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_layout lay = s->f->lay;
  const int k = s->k;
  if (lay.bits == 7 && k >= lay.tile && !cfg->rsplit) cfg->ph = 4;
}

/* A block of one channel group whose warps have a tile each reads
** every value of x once: copying its rows into shared memory first
** (lb_gemv_xs) adds a round trip before the first tile and reuses
** nothing.  One row stays resident (M = 1); 2..8 rows are read with the
** tiles.  Found by `lowbit tune --m 1,8` of 8-bit codes at 1024 x 4096
** (256 blocks of 8 warps, split 8).  H200, `lowbit bench --m 2,8 --iters
** 40` against the planner before in one device call (2026-11-28, two
** repeats, 12 recipes of 1 to 8 bits at 1024 x 256, 1024 x 4096, 2048
** x 512, 2048 x 4096, 4096 x 4096), µs at M = 2 / 8: 8-bit codes 3 to
** 9% faster at both (group 64 at 1024 x 4096: 8.05 / 8.50 -> 7.60 /
** 7.70, cuBLAS 8.03 / 8.08; a16w8_channel 7.20 / 7.65 -> 6.75 / 7.10);
** the others 2 to 14% faster at M = 2 (a16w1_g64 at 4096 x 4096: 9.10
** -> 7.80, a16w4_g128 at 2048 x 4096 8.15 -> 7.40) and within -1.5 to
** +2.7% at M = 8 (2- and 4-bit codes lose 2 to 3% there: a16w2_g64 at
** 2048 x 512 5.65 -> 5.80; the other widths -1.5 to +1.4%). */
static void x_once(const gv_shape *s, lb_gemv_cfg *cfg) {
  const lb_format *f = s->f;
  const int k = s->k, m = s->m, tiles = s->tiles;
  if (cfg->cluster == 1 && !cfg->rsplit && cfg->warps == cfg->split &&
      tiles <= cfg->split && m <= LB_MAX_M)
    one_row_x(f, k, cfg);
}

/* In a cluster a warp with one or two tiles uses a sliver of x:
** copying all of it into every block first (lb_gemv_xs) would cost
** more than the tiles (1-bit, N = 16, K = 16384: 32 KB of x against 8
** KB of weights per block). */
static void x_sliver(const gv_shape *s, lb_gemv_cfg *cfg) {
  const int tiles = s->tiles;
  if (cfg->cluster > 1 && tiles < cfg->split * cfg->cluster * 4) cfg->xres = 0;
}

/* Narrow codes (1, 2, 4 and 8 bits: words held a tile at a time) whose
** tile meets many group slots that are not resident (groups of 32 at K
** = 8192, of 64 at 16384): each code row's scales and zeros came from
** global memory a chunk ahead, which hides an L2 hit but not a trip to
** memory (the 1-bit group 32 GEMV ran at 28% of the read floor).  Words
** read where used keep the stage through the tile's math, so the
** slots travel in the ring, STAGES tiles ahead (ring_scales).  Set
** where the plan's knobs are, so that the rules before see the
** plan they measured.  H200, `tests/gpu/ab.sh . --m 1,8 --shapes
** 8192x8192,16384x1024,1024x4096 --iters 30` (2026-11-30), the rules
** against LOWBIT_PLAN=lazy=1, then lazy=1,sr=0 against lazy=1 (which
** rows took the ring), us at M = 1 / 8: 1-bit group 32 at 8192 x 8192
** 29.0 / 32.2 -> 19.0 / 22.8, at 16384 x 1024 14.0 / 15.0 -> 11.5 /
** 13.2; 2-bit group 32 28.9 / 31.5 -> 18.7 / 20.1; 4-bit group 32 with
** f32 scales and zeros 34.6 / 35.6 -> 25.0 / 25.9; 8-bit group 32
** 27.5 / 29.4 -> 26.0 / 27.9; a16w1_g64 at 16384 x 1024 11.1 / 11.9 ->
** 9.7 / 10.8.  Words read where used without the ring's slots lost up
** to 32% (4-bit group 64, f32 scales and bf16 zeros, whose zero slots
** are not whole chunks: 23.1 -> 30.4 at M = 1): only with them.  Not
** measured past 8 rows. */
static void lazy_ring(const gv_shape *s, lb_gemv_cfg *cfg) {
  const int m = s->m, stage = s->stage, sst = s->sst;
  if (!cfg->lazy && sst > 0 && m <= LB_MAX_M) {
    lb_gemv_cfg t = *cfg;
    t.lazy = 1;
    if (t.stages < 2) t.stages = 2;
    if (ring_fits(&t, stage, sst, t.stages, t.fold)) *cfg = t;
  }
}

/* The rules in the order they apply, each reading what those before it
** chose. */
static void (*const rules[])(const gv_shape *, lb_gemv_cfg *) = {
    narrow_clusters, room_clusters, two_warps,      one_tile,
    even_sms,        split_rows35,  five_clusters,  frags_clusters,
    seven_phases,    x_once,        x_sliver,       lazy_ring};

/* A plan as rules or knobs left it, cut to the kernels it makes: 2..8
** rows' own kernel (hcl) and four fragments' blocks.  Returns whether m
** rows run the hcl kernel. */
static int kernels(const gv_shape *s, lb_gemv_cfg *cfg) {
  const int m = s->m, tiles = s->tiles;
  int hi;
  /* 2..8 rows' cluster (hcl): cut as the cluster is below (a tile a
  ** warp at least; a code-row split takes none), and none where no
  ** larger than the plan's or past 8 rows, so that plans differing only
  ** there are one */
  while (cfg->hcl > cfg->cluster && cfg->split * cfg->hcl > tiles)
    cfg->hcl /= 2;
  if (cfg->hcl <= cfg->cluster || cfg->rsplit || m > LB_MAX_M) cfg->hcl = 0;
  hi = cfg->hcl > 0 && m >= LB_GEMV_HI && m <= LB_MAX_M;
  if (hi) {   /* (its words are 1 row's, which make it again) */
    cfg->pcl = cfg->cluster;
    cfg->pst = cfg->stages;
    cfg->cluster = cfg->hcl;
  }
  /* Four fragments (17..32 rows) hold twice the sums of two: blocks of 8
  ** warps (128 registers) spilled them (a16w4_g128 at 8192 x 8192, sm_90:
  ** 12 bytes; bf16w4_g128 32), blocks of 4 do not; and a block's sums
  ** meet in 2 KB a warp (templates/gemv.cu, lb_red), which 8 warps (or a
  ** fold to 8 before sm_90) would take past 99 KB beside the ring. */
  if (lb_gemv_frags(m) == 4) {
    if (cfg->warps > 4) cfg->warps = 4;
    if (cfg->split > cfg->warps) cfg->split = cfg->warps;
    while (cfg->warps * cfg->fold > 4) cfg->fold /= 2;
  }
  return hi;
}

/* A plan's rows past the GEMV's most (gemv_most) is the plan's error; a
** kernel for such rows, the caller's. */
static lb_status rows_check(const gv_shape *s, const lb_gemv_cfg *cfg,
                            int slices, const char *tune,
                            const char *from) {
  const lb_format *f = s->f;
  const lb_layout lay = s->f->lay;
  const int m = s->m;
  const int most = gemv_most(f);
  const char *why = f->mode == LB_DQM_F32
                        ? "it dequantises in f32, after its MMA: past 8 "
                          "rows only as slices"
                    : most < LB_GEMV_MOST ? "four fragments of x spill"
                                          : "four fragments of x";
  if (cfg->rows > most)   /* (rows=32 at most: the knob's range) */
    return lb_fail(LB_EARG, "%s: plan \"%s\": rows=%d: recipe '%s': its GEMV "
                   "takes %d rows at most (%d-bit codes: %s)",
                   from ? from : "lb_generate", tune ? tune : "", cfg->rows,
                   f->r->name, most, lay.bits, why);
  if (m > most)
    return lb_fail(LB_EARG, "lb_generate: m = %d: recipe '%s': its GEMV "
                   "takes %d rows at most (%d-bit codes: %s)", m,
                   f->r->name, most, lay.bits, why);
  if (f->mode == LB_DQM_F32 && m > LB_MAX_M && slices == 0)
    return lb_fail(LB_EARG, "%s: plan \"%s\": slices=0: recipe '%s' "
                   "dequantises in f32, after its MMA, which two fragments "
                   "of x cannot: its GEMV takes %d rows only as slices",
                   from ? from : "lb_generate", tune ? tune : "",
                   f->r->name, m);
  return LB_OK;
}

/* The plan fitted to the template: its splits, clusters, phases and
** stages as the template runs them, the grid, resident scales and x. */
static void fit(const gv_shape *s, lb_gemv_cfg *cfg, int hi, int xminb_set) {
  const lb_format *f = s->f;
  const lb_layout lay = s->f->lay;
  const int k = s->k, m = s->m, sms = s->sms, tiles = s->tiles,
            groups = s->groups, stage = s->stage, sst = s->sst;
  /* A code-row split as the template has it (lb_part): lazy words, no
  ** cluster, and whole chunks of code rows a warp (LB_XC rows: 4, 2 with
  ** two fragments); a split of one is none. */
  if (cfg->rsplit) {
    const int xc = chunk_rows(&lay, m);
    while (cfg->lazy && cfg->split > 1 && lay.codes / xc % cfg->split != 0)
      cfg->split /= 2;
    if (!cfg->lazy || cfg->split == 1) cfg->rsplit = 0;
    else cfg->cluster = cfg->fold = 1;
  }
  /* a cluster's warps each need a tile of K (the template's invariant) */
  while (cfg->cluster > 1 && cfg->split * cfg->cluster > tiles)
    cfg->cluster /= 2;
  fold_fit(cfg, stage, tiles);
  /* Phases as the template has them: lazy words, a tile at most a warp,
  ** whole chunks of code rows a phase. */
  {
    const int chunks =
        lay.codes / chunk_rows(&lay, m) / (cfg->rsplit ? cfg->split : 1);
    /* (tiles a warp: its step through K, before sm_90 the folded
    ** block's, which the cluster's on sm_90 is at least) */
    const int step = (cfg->rsplit ? 1 : cfg->split) * cfg->fold;
    while (cfg->ph > 1 && chunks % cfg->ph != 0) cfg->ph /= 2;
    if (!cfg->lazy || tiles > step) cfg->ph = 1;
  }
  /* A warp with one tile refills nothing: one stage, half the shared
  ** memory of two, where the blocks outnumber the SMs.  H100, a16w7_g32
  ** at 256 x 16384 (K a quarter of a tile): blocks of 2 warps and two
  ** 7-word stages took 58 KB, 3 blocks an SM, and the 512 blocks ran in
  ** two waves; one stage: 8.1 -> 7.4 us at M = 1, 8.7 -> 8.4 at M = 8
  ** (cuBLAS 8.4).  Not for a few blocks (1024 x 256, 8 blocks: 7.3 -> 7.5;
  ** clustered, a16w5_g64 at 8192 x 48: 7.6 -> 8.0), whose blocks then
  ** share SMs that larger ones keep apart. */
  cfg->grid = channel_blocks(cfg, groups);
  /* Where a cluster gives each warp one tile, only sm_90's kernel: before
  ** it the block walks K without the cluster, its warps more than one
  ** tile each, and keeps its stages (fstages).  7-bit codes at 16384 x
  ** 1024: 512 blocks of 2 warps in clusters of 8, 67 KB each, three an
  ** SM; one stage: 34 KB, six.  H200, `tests/gpu/ab.sh` of main against
  ** it in one device call (2026-11-30, `--m 1,8 --iters 40`), µs at M = 1
  ** / 8: a16w7_g32 15.6 / 16.3 -> 14.6 / 15.4, 7-bit group 32 with f32
  ** zeros 16.3 / 17.0 -> 15.1 / 15.7; the other 7-bit sweep recipes
  ** there, and every one at 16384 x 512 and 8192 x 1024 (256 blocks,
  ** which take it too), within -1..+2.6% (group 64 with f32 scales 15.6 /
  ** 16.3 -> 16.0 / 16.7). */
  cfg->fstages = cfg->stages;
  if (cfg->lazy && tiles <= (cfg->rsplit ? 1 : cfg->split) * cfg->cluster &&
      cfg->grid * cfg->cluster > sms) {
    cfg->stages = 1;   /* (whatever a plan says: stage 2 would stay empty) */
    if (cfg->cluster == 1) cfg->fstages = 1;
  }
  cfg->nf = lb_gemv_frags(m);
  plan_resident(f, k, cfg, stage, sst);
  cfg->sr = cfg->sring > 0;   /* as built: plans differing only here are one */
  /* x resident for the rows this kernel runs (one fragment 1..8, or 2..8
  ** where hcl gives them a kernel, two 9..16, four 17..32): up to its
  ** most, and none where x would not hold its fewest (an
  ** lb_gemv_xs that never launches costs its compile: a16w4_g128's, two
  ** fragments at 8192 x 8192 on sm_90, also spilled until 2026-11-28). */
  {
    const int most = LB_MAX_M * cfg->nf,
              fewest = cfg->nf > 1 ? most / 2 + 1 : hi ? LB_GEMV_HI : 1;
    if (cfg->xs_m > most) cfg->xs_m = most;
    if (cfg->xs_m < fewest) cfg->xs_m = 0;
  }
  /* Two fragments of x in lb_gemv_xs at 128 registers (two blocks an SM)
  ** spilled: a16w4_g128 at K = 1024, N = 256 and 4096, sm_90, 4 bytes.
  ** Where the grid is one wave or less a second block an SM buys
  ** nothing, so the cap goes (166 registers there, no spill). */
  if (cfg->nf > 1 && cfg->xs_m > 0 && cfg->xminb > 1 && !xminb_set &&
      (long long)cfg->grid * cfg->cluster <= sms)
    cfg->xminb = 1;
}

static lb_status plan(const lb_format *f, int n, int k, int sms,
                      const char *tune, const char *from, int m,
                      lb_gemv_cfg *cfg) {
  gv_shape s;
  int v[NKNOB], hi, slices;
  size_t i;
  lb_status st;
  shape_of(f, n, k, m, sms, &s);
  base(&s, cfg);
  for (i = 0; i < sizeof rules / sizeof rules[0]; i++) rules[i](&s, cfg);
  cfg->rows = rules_rows(f, n, k);
  if ((st = parse_plan(tune, from, v)) != LB_OK) return st;
  plan_override(cfg, s.stage, v);
  slices = v[K_SLICES];
  if (v[K_HCL] < 0) cfg->hcl = hcl_rule(f, cfg, s.tiles, s.groups, sms);
  hi = kernels(&s, cfg);
  if ((st = rows_check(&s, cfg, slices, tune, from)) != LB_OK) return st;
  fit(&s, cfg, hi, v[K_XMINB] >= 0);
  if (m > LB_MAX_M) {   /* (the rows were checked above) */
    lb_gemv_cfg one;
    st = plan(f, n, k, sms, tune, from, 1, &one);
    if (st != LB_OK) return st;
    if (slices < 0)
      slices = f->mode == LB_DQM_F32 || slice_rule(f, &one, cfg, m, sms);
    if (slices) {
      *cfg = one;
      cfg->slices = lb_gemv_frags(m);
    }
  }
  return LB_OK;
}

/* Each block copies its resident rows of x once, through L1 (lb_cp_rows),
** where lb_gemv reads them from L2 with every tile; the plan's budget
** (LB_XRES_KB, one row where blocks are many: one_row_x) keeps one to
** three rows of 4096 and more.  More rows are worth it where no SM then
** holds fewer blocks than an even spread of the grid puts there.  H200,
** 2026-11-30, one device call, `tests/gpu/ab.sh` of main against up to 8
** rows under that condition (a16w4_g128, a16w8_channel, a16w2_g64 at K x
** N = 4096 x 6144, 4096 x 4096, 4096 x 28672, 14336 x 4096, 8192 x 8192,
** M = 2, 4, 6, 8, 60 rows, all correct): at M = 2 and 4 none more than
** 1.3% slower and 10 of 30 rows 5 to 12.5% faster (a16w4_g128 8192 x 8192 16.9 /
** 17.4 -> 15.1 / 15.6 us, 14336 x 4096 at M = 2 16.0 -> 14.0; a16w2_g64
** 14336 x 4096 at M = 2 17.3 -> 15.2); bench/model.py's step overlapped at
** M = 2 / 4 1313.1 / 1382.7 -> 1248.6 / 1344.4 us.  At M = 6 and 8 also
** up to 12% faster (a16w4_g128 4096 x 4096), but a16w8_channel at 4096 x
** 6144, M = 8 (eight rows, 64 KB a block, as much as its codes), 13.9 ->
** 18.3: four rows at most.  With four (the next call, a16w4_g128,
** a16w3_g128, a16w1_g64, bf16w4_g128, M = 2..4, the same shapes): 0.81 to
** 1.026 (a16w3_g128 4096 x 6144, M = 3, 13.7 -> 11.1 us), the model's
** step at M = 2 / 4 1304.7 / 1388.3 -> 1252.3 / 1356.6.  Not for clusters (a sliver of x a block) nor
** two or more fragments (x resident measured slower at 9..16 rows). */
int lb_gemv_xs_most(const lb_gemv_cfg *c) {
  return c->xs_m == 0 || c->xs_m >= LB_XS_MORE || c->nf > 1 ||
                 c->cluster > 1
             ? c->xs_m
             : LB_XS_MORE;
}

int lb_gemv_xs_rows(const lb_gemv_cfg *c, int sms, int smsm, int smres,
                    int smopt, int smem) {
  int even, room, rows;
  if (lb_gemv_xs_most(c) == c->xs_m || sms <= 0 || smsm <= 0 ||
      c->xrowb <= 0 || c->grid <= 0)
    return c->xs_m;
  even = (c->grid * c->slices + sms - 1) / sms;   /* (every row of blocks) */
  room = smsm / even - smres - smem;
  if (room > smopt - smem) room = smopt - smem;
  rows = room > 0 ? room / c->xrowb : 0;
  if (rows > LB_XS_MORE) rows = LB_XS_MORE;
  return rows > c->xs_m ? rows : c->xs_m;
}

void lb_gemv_block(const lb_gemv_cfg *c, int arch, int *threads, int *smem) {
  const int fold = arch >= 90 ? 1 : c->fold;
  *threads = 32 * c->warps * fold;
  *smem = arch >= 90 ? c->smem : c->fsmem;
}

lb_status lb_plan_gemv(const lb_recipe *r, int n, int k, int m, int sms,
                       const char *knobs, const char *from, lb_gemv_cfg *cfg) {
  lb_format f;
  lb_status st;
  if (r == NULL || cfg == NULL)
    return lb_fail(LB_EARG, "lb_describe: %s is NULL", r ? "out" : "recipe");
  if ((st = lb_format_for(r, n, k, sms, "lb_describe", &f)) != LB_OK)
    return st;
  return plan(&f, n, k, sms, knobs, from, m, cfg);
}

typedef struct cand_ctx {
  const lb_recipe *r;
  int n, k, m, sms;
} cand_ctx;

/* lb_knob_plan for the GEMV. */
static lb_status cand_plan(void *p, const char *plan, void *cfg, int *v) {
  const cand_ctx *x = p;
  lb_gemv_cfg c;
  const lb_status st = lb_plan_gemv(x->r, x->n, x->k, x->m, x->sms, plan,
                                    "lb_plan_candidates", &c);
  if (st != LB_OK) return st;
  memcpy(cfg, &c, sizeof c);
  knobs_of(&c, v);
  return LB_OK;
}

lb_status lb_gemv_candidates(const lb_recipe *r, int n, int k, int m,
                             int sms, int arch, const char *base,
                             char (*out)[LB_PLAN_LEN], int max, int *count) {
  /* clusters are tried only where there are any (sm_90 and newer); the
  ** words of 1..8 rows are the one-fragment kernel's (m = 1: 2..8 rows'
  ** kernel is made from them, its hcl) */
  lb_knob kt[NKNOB];
  cand_ctx x = {r, n, k, m <= LB_MAX_M ? 1 : m, sms};
  memcpy(kt, knob, sizeof kt);
  if (arch < 90) kt[K_CLUSTER].ntry = kt[K_HCL].ntry = 1;   /* 1, and 0 */
  if (m > LB_MAX_M) kt[K_HCL].ntry = 1;   /* (9..32 rows' kernels: none) */
  *count = 0;
  if (r == NULL) return lb_fail(LB_EARG, "lb_plan_candidates: recipe is NULL");
  return lb_knobs_candidates(kt, NKNOB, cand_plan, &x, sizeof(lb_gemv_cfg),
                             base, out, max, count);
}

lb_status lb_gvplan(const lb_format *f, int n, int k, int sms,
                    const char *knobs, const char *from, int m,
                    lb_gemv_cfg *cfg) {
  return plan(f, n, k, sms, knobs, from, m, cfg);
}
