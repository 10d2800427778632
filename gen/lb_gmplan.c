/*
** lb_gmplan.c: the GEMM kind's plan (block tile, sub-stage, pipeline depth,
** the sm_90a wgmma plan) for a format, a shape and an M bucket: the
** buckets, the rules with the measurements that chose them, the knobs in
** words (LOWBIT_GEMM, lb_op_set_plan, the tuning table), the candidates
** lowbit tune tries, and the launch's splits and tail.  lb_gemm.c writes
** the source a plan says.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_format.h"
#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_gmplan.h"
#include "lb_knob.h"

/* The GEMM buckets, one table: each one's last row count (the last has
** none) and the M its source's "Regenerate with" line names.  The CLI's
** usage text and lowbit.h list them too. */
static const struct { int top, m; } tops[LB_GEMM_BUCKETS] = {
    {16, 16}, {32, 32}, {64, 64}, {160, 128}, {256, 256}, {384, 384},
    {0, 1024}};

int lb_gemm_bucket(int m) {
  int b = 0;
  while (b < LB_GEMM_BUCKETS - 1 && m > tops[b].top) b++;
  return b;
}

void lb_gemm_span(int b, int reach, int *lo, int *hi) {
  *lo = b > 0               ? tops[b - 1].top + 1
        : reach < LB_MAX_M ? reach + 1
                           : LB_MAX_M + 1;
  *hi = tops[b].top;
}

/* Words a lane's sub-stage of r code rows touches, at most over the
** sub-stages of a packing tile (cross-word widths straddle); a sub-stage
** of whole tiles (r a multiple of the codes a word group holds) takes all
** their words. */
static int words_max(const lb_layout *lay, int r) {
  int q, ws = 0;
  for (q = 0; q < (r < lay->codes ? lay->codes / r : 1); q++) {
    int w0 = lay->bits * r * q / 32;
    int w1 = (lay->bits * r * (q + 1) - 1) / 32;
    if (w1 - w0 + 1 > ws) ws = w1 - w0 + 1;
  }
  return ws;
}

/* Shared memory of one stage: LB_BN rows of ws words' chunks plus pad
** chunks (wgmma: two; words in registers: none), LB_BM activation rows of
** 32 r values padded (wgmma: not) (templates/gemm.cu's LB_STAGE_B, which
** a static_assert holds to this). */
/* What a plan with the words in registers (wr) needs of the template:
** whole 128-byte rows of x a sub-stage (the swizzle), and a third stage
** for the wgmmas still reading one (its static_asserts). */
static int r_min(const lb_gemm_cfg *c) { return c->wr ? 2 : 1; }
static int stages_min(const lb_gemm_cfg *c) { return c->wr ? 3 : 2; }

static int stage_bytes(const lb_gemm_cfg *c, int ws, int r) {
  return (c->wr ? 0 : c->bn * (ws * 8 + (c->wg ? 2 : 1)) * 16) +
         c->bm * (64 * r + (r >= 2 && !c->wg ? 64 : 0));
}
/* Shared memory a stage costs a block: its bytes, and with the activations
** by TMA (tm) its mbarrier and release count, after the resident scales
** (the template's LB_BAR_B). */
static int stage_cost(const lb_gemm_cfg *c) { return c->stage + (c->tm ? 16 : 0); }

/* KB of shared memory a block of plan c may take on a 160 KB part: sm_90a's
** 256-row tiles take up to 227 KB (three stages of 128 k-values of x, 64 KB
** each, and the resident scales); smaller tiles keep 160, on which their
** stage counts and the blocks an SM (finish) were measured. */
int lb_gemm_hi_kb(const lb_gemm_cfg *c) {
  return c->wg && c->bm > 128 ? LB_SMEM_WG_KB : LB_SMEM_HI_KB;
}

/* A plan in words ("wn=4,wk=2,wm=1,mj=1,r=8,st=4,sk=2,bs=1"), as
** LOWBIT_GEMM, lb_generate_plan and the tuning table spell it: each knob
** given replaces the rules' choice, the rest stay the rules'.  The keys,
** their ranges, the values lowbit tune tries and the order plans are
** written in (include/lowbit.h and docs/architecture.md list the keys
** too: change all three). */
enum { K_WN, K_WK, K_WM, K_MJ, K_R, K_ST, K_SK, K_BS, K_WG, K_CL, K_WR, K_TM, K_BM,
       K_UN, K_TL, K_SG, K_PLAIN, NKNOB };
static const lb_knob knob[NKNOB] = {
    {"wn", 1, 8, 1, 4, {1, 2, 4, 8}},   {"wk", 1, 8, 1, 3, {1, 2, 4}},
    {"wm", 1, 16, 1, 3, {1, 2, 4}},     {"mj", 1, 4, 1, 2, {1, 2}},
    {"r", 1, 32, 1, 5, {1, 2, 4, 8, 16}}, {"st", 2, 16, 0, 4, {2, 3, 4, 6}},
    {"sk", 0, 64, 1, 5, {1, 2, 4, 8, 16}},  {"bs", 1, 2, 0, 2, {1, 2}},
    {"wg", 0, 1, 0, 2, {0, 1}},         {"cl", 0, 1, 0, 2, {0, 1}},
    {"wr", 0, 1, 0, 2, {0, 1}},         {"tm", 0, 1, 0, 2, {0, 1}},
    {"bm", 16, 256, 1, 3, {64, 128, 256}}, {"un", 1, 3, 0, 3, {1, 2, 3}},
    {"tl", 0, 1, 0, 0, {0}},            {"sg", 0, 1, 0, 2, {0, 1}},
    {"plain", 0, 1, 0, 0, {0}}};

typedef struct knobs {
  int v[NKNOB];   /* -1: the rules' */
} knobs;

/* Parses plan (NULL or "": the rules) for bucket (lb_knobs_parse; wm
** reaches at most the bucket's tile rows / 8); messages name `from`. */
static lb_status parse_plan(const char *plan, int bucket, const char *from,
                            knobs *kn) {
  lb_knob k[NKNOB];
  memcpy(k, knob, sizeof k);
  k[K_WM].hi = (16 << (bucket < 3 ? bucket : 3)) / 8;
  if (lb_knobs_parse(plan, from, k, NKNOB, kn->v) != LB_OK) {
    /* the GEMV's reach, given to rows past it (`--plan rows=16 --m 24`) */
    const char *at = plan ? strstr(plan, "rows=") : NULL;
    if (at != NULL && (at == plan || at[-1] == ','))
      return lb_fail(LB_EARG, "%s: plan \"%s\": rows is the GEMV's knob (its "
                     "reach, set in its plan of 1..8 rows); the rows past "
                     "that reach run a GEMM bucket, whose plan has no rows",
                     from, plan);
    return LB_EARG;
  }
  if (kn->v[K_WN] >= 0 && kn->v[K_WK] >= 0 && kn->v[K_WM] >= 0 &&
      kn->v[K_WN] * kn->v[K_WK] * kn->v[K_WM] > 32)
    return lb_fail(LB_EARG, "%s: plan \"%s\": wn x wk x wm warps exceed "
                   "32 a block", from, plan);
  return LB_OK;
}

lb_status lb_gemm_plan_check(const char *plan, int bucket, const char *from) {
  knobs kn;
  if (bucket < 0 || bucket >= LB_GEMM_BUCKETS)
    return lb_fail(LB_EARG, "%s: GEMM bucket %d out of range", from, bucket);
  return parse_plan(plan, bucket, from, &kn);
}

static int pick(const knobs *kn, int i, int rule) {
  return kn->v[i] >= 0 ? kn->v[i] : rule;
}

/* Scales and zeros resident in shared memory (srowb, zrowb: rows padded by
** 16 bytes against bank conflicts) where each array's rows are whole
** 16-byte chunks and both fit `most` bytes; else none. */
static void reside(const lb_format *f, int k, int most, lb_gemm_cfg *c) {
  const int rowb = lb_format_groups(f, k) * f->ssize;
  const int zrowb = f->zeros ? lb_format_groups(f, k) * f->zsize : 0;
  c->srowb = c->zrowb = 0;
  if (rowb % 16 == 0 && zrowb % 16 == 0 &&
      c->bn * (rowb + 16 + (zrowb ? zrowb + 16 : 0)) <= most) {
    c->srowb = rowb + 16;
    c->zrowb = zrowb ? zrowb + 16 : 0;
  }
  c->sres = c->bn * (c->srowb + c->zrowb);
}

/* 9..16 rows (bucket 0) in layers of more than 4M weights: 64-channel
** blocks (four warps along channels, two along K; one for 5- to 7-bit
** codes where the blocks go two an SM, plan_tile), two an SM where they
** fit with two stages (two_16), not the 32-channel blocks the rule had
** taken since an H100 measured them faster for every shipped width (a16w4
** 8192 x 8192 27.5 against 30.0 us): the GEMV takes those formats there
** now, and the formats left to this bucket (5- to 8-bit codes, 2-bit ones
** in wide layers, f32 dequantisation) spend their time dequantising, whose
** latency 16 warps an SM likely hide better than 4 (not profiled).
** Measured on an
** H200 (lowbit bench --m 16 --iters 30, 2026-12-01, the 167 (recipe,
** shape) pairs of the sweep's and the shipped and bench recipes that run
** this bucket at nine shapes, LOWBIT_GEMM=wn=4,st=2,bs=2 (C) and
** wn=4,st=3 (B) against the rules then (A) in one build, every row
** correct; time against A's, geometric mean over a shape's rows):
**   8192 x 8192 (32 rows)  C 0.90, B 0.91 (a16w7-style group 32 with f32
**                          zeros 62.2 -> 38.5 us in lowbit tune, cuBLAS 35.3)
**   4096 x 14336 (35)      C 0.87, B 0.91
**   14336 x 4096 (29)      C 0.92, B 1.07 (22 rows slower)
**   16384 x 1024 (27)      C 0.90, B 0.91
**   4096 x 4096 (28)       C 0.98 (8 rows slower), B 0.92 (none)
** At 4096 x 4096 two blocks an SM split K = 4096 4 ways through a work
** space (and its adding kernel); one block an SM of three stages splits
** it 2 ways in a cluster (two_16).  In layers of 4M weights or fewer
** (1024 x 256 to 4096 x 1024: only the f32-dequantised 8-bit recipes,
** 7 rows) both were slower, 1.01 to 1.11, and keep 32 channels. */
static int wide16(int n, int k) { return (long long)n * k > 1LL << 22; }

/* Whether a wide16 block of bn channels at 9..16 rows goes two an SM (two
** stages): not where K of 4096 or less would be split more than 2 ways for
** them (lb_gemm_splits fills sms * 2 slots), which keeps one of three
** stages.  finish() asks it of the block; plan_tile() of the rule's 64
** channels, before the block is cut. */
static int two_16(int bn, int n, int k, int sms) {
  const int gridn = (n + bn - 1) / bn;
  return !(k <= 4096 && 2 * sms / gridn > 2);
}

/* The block's channels (mj groups of 16 a warp), resident scales, and the
** sub-stage cut until three stages fit the large budget and two the small
** one (lo, KB; 0: none, sm_90a's plan); where one row still leaves no two
** stages (wide codes, 128 x 128 tiles, resident scales), the scales go
** back to global memory, then the block takes fewer channels (found by
** test_plan: 7-bit codes at 257+ rows had no plan on a 99 KB part). */
static void fit_tile(const lb_format *f, int k, int mj, int lo,
                     lb_gemm_cfg *c) {
  const int wmin = c->wg ? 4 : 1;   /* a warpgroup's warps */
  c->bn = 16 * mj * c->warps_n / wmin;
  /* Scales and zeros resident in shared memory (reside) where they fit
  ** 32 KB (64 KB with the words in registers, whose stages hold x alone:
  ** a16w4 at M = 128 has 36 KB), and up to LB_GEMM_SRES_KB where the
  ** sub-stage keeps its rows beside them: loaded a sub-stage ahead from
  ** global memory instead, every short sub-stage waits on that load
  ** (a16w4 8192 x 8192, M = 16, H100: 54.5 us; groups of 32 at 8192 x
  ** 8192, M = 12 and 16, H200: 5-bit 67.9 against 41.2 us resident,
  ** 7-bit 70.6 against 61.4). */
  const int rowb = lb_format_groups(f, k) * f->ssize;
  const int zrowb = f->zeros ? lb_format_groups(f, k) * f->zsize : 0;
  const int cap = (c->wr ? 64 : 32) * 1024;
  reside(f, k, LB_GEMM_SRES_KB * 1024, c);
  for (;;) {
    int st_hi, st_lo;
    c->ws = words_max(&f->lay, c->r);
    c->stage = stage_bytes(c, c->ws, c->r);
    st_hi = (lb_gemm_hi_kb(c) * 1024 - c->sres) / stage_cost(c);
    st_lo = lo ? (lo * 1024 - c->sres) / c->stage : st_hi;
    if (st_hi >= 3 && st_lo >= 2) break;
    /* sm_90a's 256-row tiles: the scale rows lose their pad (a few 8-way
    ** bank conflicts a sub-stage) where that keeps the sub-stage, which
    ** is cut otherwise (a16w4_g128's three 64 KB stages need 1 KB more
    ** than 227 KB with it) */
    if (c->wg && c->bm > 128 && c->srowb > rowb &&
        (lb_gemm_hi_kb(c) * 1024 - c->bn * (rowb + zrowb)) / stage_cost(c) >=
            3) {
      c->srowb = rowb;
      c->zrowb = zrowb;
      c->sres = c->bn * (rowb + zrowb);
      break;
    }
    /* scales past the cap only where the sub-stage keeps its rows */
    if (c->sres > cap) {
      c->sres = c->srowb = c->zrowb = 0;
    } else if (c->r > r_min(c)) {
      c->r /= 2;
    } else if (st_lo >= 2) {
      break;
    } else if (c->sres) {
      c->sres = c->srowb = c->zrowb = 0;
    } else if (c->warps_n > wmin) {
      c->warps_n /= 2;
      c->bn = 16 * mj * c->warps_n / wmin;
    } else {
      break;   /* lb_gen_gemm reports it */
    }
  }
}

/* The block's warps along rows (wm), channels (wn) and a sub-stage's code
** rows (wk), the rules' or the plan's.  One along rows: measured on an
** H100 (a16w4 8192 x 8192, LOWBIT_GEMM): 33..64 rows,
** one warp over all 64 rows with two taking alternate code rows of
** 8-row sub-stages, 71.9 us, against 80.4 with two warps of 32 rows;
** past 256 rows two channel groups per warp over 128 rows, 778 us at
** M = 1024 against 1073.  (Slower at M = 128 then, 198 against 139 us,
** before the copies' addresses left the loop; now the same from 65 rows,
** mj_rule.) */
static void warps_rule(int n, int k, int bucket, const knobs *kn,
                       lb_gemm_cfg *c) {
  c->warps_m = 1;
  /* Four warps along channels (two up to 16 rows in layers of 4M weights
  ** or fewer: 32-channel blocks, twice as many; wide16 says why not in
  ** larger ones);
  ** up to 16 rows two warps share each stage, taking alternate code rows:
  ** their sums meet at the end.  At 17..64 rows one warp takes all of
  ** them: lowbit tune on an H100 (every shipped recipe and a16w7_g32,
  ** the four benchmark shapes, 2026-11-24) found wk = 1 faster in 49 of
  ** 52 cases, by 10% (17..32) and 8% (33..64) in the geometric mean,
  ** and two blocks an SM (below) faster still; at 9..16 rows it was 3%
  ** slower. */
  c->warps_n = bucket == 0 && !wide16(n, k) ? 2 : 4;
  c->warps_k = bucket == 0 ? 2 : 1;
  c->warps_n = pick(kn, K_WN, c->warps_n);
  c->warps_k = pick(kn, K_WK, c->warps_k);
  c->warps_m = pick(kn, K_WM, c->warps_m);
}

/* 16-channel groups per warp: two from 65 rows for codes that never
** cross words, 8-bit ones per channel only; at two, 3-bit codes spilled
** 8 to 28 bytes on sm_80..89 and an 8-bit g128 recipe (bf16 scales and
** zeros, bias, N = 48) 124 bytes on sm_90, and per-channel recipes with
** bf16 scales 24 to 28 bytes on sm_80 (1-, 4- and 8-bit sweep recipes,
** once the copy addresses were made outside the loop).  a16w8_channel
** at 8192 x 8192, M = 1024: 645 us at two, 895 at one.  From 65 rows
** (bucket 3) the same warp shape, one warp over all 128 rows: at M = 256
** a16w4 172.9 us against 181.4 with two warps of 64 rows, a16w1 172.2
** against 238.1; at M = 128 a16w4 95.2 against 92.9 (shapes differ:
** 14336 x 4096 80.1 against 87.6, 4096 x 14336 104.8 against 95.1). */
static int mj_rule(const lb_format *f, int n, int bucket, int warps_n) {
  const lb_layout *lay = &f->lay;
  const int two = bucket >= 3 && !lay->cross &&
                  (lay->bits <= 4 || f->per_channel) &&
                  !(f->per_channel && f->sdtype == LB_BF16);
  int mj = two ? 2 : 1;
  /* One channel group a warp too where a block's channels are not all in
  ** N (a last block in part, whose copies and epilogue clamp each
  ** channel), or with per-channel zeros: at two, sm_80 spilled 28 bytes
  ** at 255 registers for a16w8_channel and a16w8_f32 at N = 16, 48, 176
  ** and 4112 (K = 4096 and 8192, M = 128 to 1024; sm_86 and sm_89 too),
  ** 4 to 32 bytes for 1-, 2- and 4-bit codes in groups of 128 without
  ** zeros or per channel at N = 48, and 24 to 28 bytes for 1-, 2-, 4- and
  ** 8-bit codes per channel with zeros at N = 4096; at one they took 195
  ** to 204 registers (a16w8_channel).  Neither was measured for time:
  ** these shapes and formats are none of the benchmark's. */
  if (mj == 2 && (n % (32 * warps_n) != 0 || (f->per_channel && f->zeros)))
    mj = 1;
  return mj;
}

/* Sub-stages: as many code rows as keep three stages within the large
** budget and two within the small one; more rows mean fewer barriers,
** fewer rows less shared memory (activations grow with the tile).
** Up to 16 rows, 16 code rows where the codes are 3 bits or fewer
** (a packing tile has 32 or 16 rows then): half the barriers, and the
** same tune found it 13 to 31% faster for a16w1, a16w2 and a16w3 at
** every benchmark shape (a16w2 14336 x 4096: 38.8 -> 26.7 us), but 23%
** slower for a16w7_g32 at 8192 x 8192.
** 8-bit codes fill a packing tile in 4 code rows: up to 32 rows a
** sub-stage takes whole tiles, 8 code rows, and 16 on 160 KB parts at
** 17..32 rows (want_rule).  Measured on an H100 (lowbit bench, 8192 x
** 8192 and 14336 x 4096; a16w8_channel): at 17..32 rows 42.4 -> 34.8
** and 39.1 -> 32.1 us (16 rows, against 4; one block an SM then, no
** split), at 9..16 33.5 -> 32.8 and 32.5 -> 31.6 (8; 16 was faster at
** 14336 x 4096, 29.6, and slower at 8192 x 8192, 35.9).  4-bit codes
** keep one tile: 16 rows measured within run-to-run noise (+-5%) at
** 17..32 rows, -4% and +7% at 9..16. */
static void rows_rule(const lb_format *f, int bucket, lb_gemm_cfg *c) {
  c->r = bucket == 0 && f->lay.bits <= 3 ? 16 : c->bm <= 64 ? 8 : 2;
}

/* What 160 KB parts ask for (lift): 16 code rows at 17..32 rows for
** 8-bit codes (rows_rule), 8 at 33..64 rows, 4 past 64 where a warp has
** one channel group (with two, 4 rows spilled on sm_80 and sm_90);
** otherwise nothing (0). */
static int want_rule(int bucket, int mj, const lb_gemm_cfg *c,
                     const lb_layout *lay) {
  return bucket == 1 && lay->codes < 8             ? 16
       : bucket == 2 || (bucket >= 3 && mj == 1) ? (c->bm <= 64 ? 8 : 4)
                                                 : 0;
}

/* 5- to 7-bit codes in 64-channel blocks two an SM at 9..16 rows
** (wide16, two_16): one warp a code row (4 warps a block, not 8) and
** 16 code rows a sub-stage.  Found by `lowbit tune --m 16` (7-bit group
** 64 with f32 scales at 8192 x 8192: 43.2 -> 35.8 us with wk=1,r=16);
** H200, 2026-12-01, `lowbit bench --m 16 --iters 30` of the sweep's
** and the bench recipes of 5 to 8 bits, LOWBIT_GEMM=wk=1,r=16 against
** the rules in one build, time against the rules', geometric mean
** (range) over a shape's rows: 8192 x 8192 5-bit 0.83 (0.75 to 0.92),
** 6-bit 0.81, 7-bit 0.84 (0.72 to 0.91); 4096 x 14336 0.85, 0.81,
** 0.86 (two rows slower: 5-bit group 32 with bf16 scales 1.09, 7-bit
** group 64 with f32 scales 1.05); 16384 x 1024 6-bit 0.91, 7-bit 0.96
** (a16w7_g32 at 8192 x 8192 38.5 -> 33.7 us, cuBLAS fp16 36.4).  Not
** 8-bit codes: 0.94 at 8192 x 8192 (two rows 1.03), and at 4096 x
** 14336, where sm_90 takes wgmma's plan, 1.9 to 2.7.  One block an SM
** (K <= 4096 split more than 2 ways: 4096 x 4096) was not measured. */
static int odd16_rule(const lb_format *f, int n, int k, int sms, int bucket,
                      int mj, const lb_gemm_cfg *c) {
  return bucket == 0 && f->lay.bits >= 5 && f->lay.bits <= 7 &&
         wide16(n, k) && c->warps_n == 4 && mj == 1 && two_16(64, n, k, sms);
}

/* The plan both kinds of part share: the tile, the warps, resident scales
** and the sub-stage, cut to the 99 KB parts' budget.  Returns the code rows
** a sub-stage asks for on 160 KB parts (lift; 0: no more than here). */
static int plan_tile(const lb_format *f, int n, int k, int bucket, int sms,
                     const knobs *kn, lb_gemm_cfg *c) {
  const lb_layout *lay = &f->lay;
  int mj, want;
  memset(c, 0, sizeof *c);
  c->bm = 16 << (bucket < 3 ? bucket : 3);
  warps_rule(n, k, bucket, kn, c);
  mj = pick(kn, K_MJ, mj_rule(f, n, bucket, c->warps_n));
  rows_rule(f, bucket, c);
  want = want_rule(bucket, mj, c, lay);
  if (odd16_rule(f, n, k, sms, bucket, mj, c)) {
    c->r = 16;
    want = 16;
    if (kn->v[K_WK] < 0) c->warps_k = 1;
  }
  if (bucket > 1) {   /* whole tiles only up to 32 rows, by the rules */
    if (c->r > lay->codes) c->r = lay->codes;
    if (want > lay->codes) want = lay->codes;
  }
  c->r = pick(kn, K_R, c->r);   /* a plan may ask for whole tiles anywhere */
  /* a plan's r is what 160 KB parts lift to, also where the rules ask
  ** for nothing (it was cut to the 99 KB parts' rows there: "r=4" at
  ** 65..256 rows built r = 2 on sm_90, and timed the rules' plan) */
  if (kn->v[K_R] >= 0) want = kn->v[K_R];
  fit_tile(f, k, mj, LB_SMEM_LO_KB, c);
  return want;
}

/* Where sm_90 takes the wgmma plan with its words in registers (wr=1) by
** the rule: from 33 rows, and from 9 for 8-bit codes in layers wide enough
** (below); until 2026-11-30 7-bit codes, and 3-, 5- and 6-bit codes in
** groups under 128, from 65 (their end below).  Its code is one copy for every
** sub-stage of a packing tile (LB_QNORM, a funnel shift of the words);
** one copy a sub-stage had taken NVRTC 1.1 to 1.9 s for 1-, 2-, 3- and 5-
** to 7-bit codes.  It came in three steps, measured below: the widths
** that divide 32; 3-bit codes from 65 rows (H100, 2026-11-27, a16w3_g128
** 8192 x 8192, M = 128: 103.2 -> 64.6 us; with 64-channel tiles at
** 33..64 rows it spilled 260 bytes on a group-32 sweep recipe and ran as
** mma.sync, 66.9 against 66.8 us); then 128-channel tiles at 33..64 rows
** (wide_rule) and the other widths.
** Measured on an H100 (lowbit bench, LOWBIT_GEMM=wg=1,wr=1 against the
** mma.sync rule, 2026-11-25), a16w4_g128 8192 x 8192: M = 128 82.1 ->
** 58.3 us, M = 256 148.9 -> 96.2, M = 1024 514.5 -> 358.7; a16w8_channel
** 73.2 -> 53.5, 133.2 -> 85.9, 458.0 -> 328.7; bf16w4_g128 as a16w4; at
** M = 96 and 128 on 4096 x 14336, 14336 x 4096 and 4096 x 4096 34 to 47%
** faster (a16w4 86.7 -> 51.1 us at 4096 x 14336, M = 128).  At 33..64
** rows it measured the same as mma.sync then (43.4 us, a16w4 8192 x 8192,
** r=4), at 17..32 2% slower; with the activations by TMA (tm, below) it
** is faster at 33..64 rows too (H200, 2026-11-27, lowbit bench, M = 64:
** a16w4_g128 8192 x 8192 42.8 -> 39.0 us, 4096 x 14336 41.2 -> 40.0;
** a16w8_channel 45.4 -> 42.0 and 43.3 -> 40.2).  1- and 2-bit codes, the
** same day (8192 x 8192, M = 64 / 128 / 1024): a16w1_g64 59.7 / 83.1 /
** 534.4 -> 36.7 / 50.4 / 319.5 us, a16w2_g64 49.2 / 79.0 / 516.6 ->
** 36.7 / 52.0 / 322.3.
** With 128-channel tiles at 33..64 rows (wide_rule) 3- to 6-bit codes
** took it there too, and 5- to 7-bit codes from 65 rows; 7-bit codes
** stayed mma.sync's at 33..64 rows, slower with it at either tile (H100,
** lowbit bench, 2026-11-27, 8192 x 8192, M = 64: a16w7_g32 97.5 -> 138.6
** us with 128 channels; M = 128 (the rules' 128-channel tile): a16w5_g64
** 119.0 -> 76.1, a16w6_g128 104.4 -> 68.1, a16w7_g32 134.8 -> 86.9; the
** same within 10% at 4096 x 14336 and 14336 x 4096).  At 33..64 rows
** the 3-, 5- and 6-bit codes' 128-channel tiles spilled (test_sweep "" 64:
** 52 to 244 bytes at 255 registers) where a sub-stage meets more than two
** scale groups (groups of 32, or 64 with zeros; 64 without zeros did not,
** but stayed with them): groups under 128 stayed mma.sync's there, until
** their scales were staged (below).
** 8-bit codes take it from 9 rows too where its 64-channel tiles (cut
** two ways in a cluster at most) fill a wave: at 17..32 rows where the
** tiles are half the SMs or more, at 9..16 where they are as many.
** H200, 2026-11-29, lowbit bench --m 16,24,32 --iters 30, wgmma from 9
** rows against the rules before in one device call, two repeats, 8-bit
** recipes with f16 and bf16 activations, f32, f16 and bf16 scales, per
** channel and groups of 32 to 256: at 17..32 rows a16w8_channel 4096 x
** 14336 38.4 / 37.3 -> 30.3 / 30.2 us (M = 24 / 32; cuBLAS 33.3 /
** 33.0), 8192 x 8192 35.5 / 35.2 -> 33.9 / 34.2, the others 3 to 20%
** faster at both shapes; at 9..16 rows 4096 x 14336 0 to 14% faster
** (a16w8_channel 33.5 -> 29.0), 8192 x 8192 -5 to +3%.  With 64 tiles
** (N = 4096) slower: 14336 x 4096, M = 16, 18 to 48%, 4096 x 4096 3 to
** 16% (a16w8_channel 13.7 -> 15.9).
** Once their scales came with each stage in the wr plan (stage_scales),
** 3- to 7-bit codes in small groups took it at 33..64 rows too, with
** 128-channel tiles (wide_rule).  H200, 2026-11-30, lowbit bench --m
** 48,64 --iters 50, LOWBIT_GEMM=wg=1,wr=1,tm=1,wn=8 against the rules'
** mma.sync in one call, us at M = 64, 8192 x 8192 / 4096 x 14336:
** a16w7_g32 76.0 / 78.5 -> 48.0 / 45.1 (cuBLAS 38.8 / 34.3), a16w5_g64
** 64.6 / 71.4 -> 41.7 / 37.1, 3-bit g32 65.2 / 63.4 -> 38.9 / 36.3,
** 5-bit g32 bf16 67.2 / 65.4 -> 43.9 / 40.9, 6-bit g32 f32 scales 66.9 /
** 64.7 -> 44.2 / 41.3, 7-bit g64 73.6 / 72.3 -> 46.8 / 42.5; M = 48
** alike; with 64-channel tiles (wn=4) up to 20% slower than mma.sync at
** 8192 x 8192.  Those ran 8 code rows a sub-stage, as the rule does but
** for 7-bit codes whose 8 rows spilled (seven_narrow, plan_wg). */
static int wr_rule(const lb_format *f, int n, int sms, int bucket) {
  if (f->lay.bits == 8 && bucket <= 1)
    return (n + 63) / 64 >= (bucket == 1 ? sms / 2 : sms);
  return bucket >= 2;
}

/* The sm_90a plan's channels a block at 33..64 rows: two warpgroups
** (128) for 3- to 7-bit codes (7-bit since 2026-11-30: wr_rule), one (64)
** for the others.  Measured on an
** H100 (lowbit bench, 2026-11-27, M = 64, LOWBIT_GEMM=wg=1,wr=1,wn=8,bs=1
** against the rules' 64 channels; 3-, 5- and 6-bit codes were mma.sync's
** then), us at 8192 x 8192 / 4096 x 14336 / 14336 x 4096 / 4096 x 4096:
**   a16w3_g128    67.5 / 70.7 / 62.4 / 25.1 -> 42.8 / 39.0 / 40.1 / 18.8
**   a16w4_g128    37.4 / 40.9 / 37.0 / 18.5 -> 32.6 / 29.7 / 32.6 / 16.9
**   a16w5_g64     71.6 / 70.4 / 64.4 / 24.9 -> 54.2 / 46.0 / 48.6 / 20.2
**   a16w6_g128    67.3 / 69.9 / 63.0 / 24.4 -> 47.6 / 44.4 / 44.4 / 20.2
**   a16w2_g64     37.1 / 37.8 / 36.6 / 16.3 -> 39.9 / 30.2 / 39.3 / 16.8
**   a16w8_channel 45.5 / 39.4 / 39.7 / 19.0 -> 79.9 / 75.1 / 72.5 / 28.8
** (a16w1_g64 as a16w2_g64, bf16w4_g128 as a16w4_g128, a16w8_f32 as
** a16w8_channel).  Such blocks keep one an SM (regs_for_two): with two,
** a16w1_g64 at 8192 x 8192 took 58.6 us, with one 39.8.
** From 65 rows 128 channels a block, but for N of 256 or less: there one
** or two such tiles take K split 32 ways (lb_gemm_splits) and half a
** 128-channel tile of N = 48 is padding.  Measured on an H200 (lowbit
** bench, 2026-11-29, LOWBIT_GEMM=sk=32,wn=4 against sk=32), us at M = 128
** / 256: 16384 x 48 a16w4_g128 14.4 / 17.3 -> 14.6 / 16.8, a16w8_channel
** 15.8 / 17.2 -> 14.6 / 15.3, a16w2_g64 14.2 / 17.2 -> 13.6 / 16.0;
** 16384 x 256 18.2 / 22.2 -> 17.3 / 21.7, 18.1 / 22.2 -> 17.2 / 21.3,
** 19.2 / 21.9 -> 17.9 / 20.3.  At 33..64 rows (M = 64, the same
** shapes) 0 to 4% apart, not taken.
** At 65..160 rows small layers take 64 channels too: where N K is at most
** 4M weights, or K at most 1024 and N K at most 8M.  There 128-channel
** tiles filled the SMs only by splitting K more (twice the work space's
** sums), or at all (1024 x 8192: 64 tiles split 2 ways, against 128
** tiles unsplit).  Measured on an H200 (tests/gpu/ab.sh . with
** LOWBIT_GEMM=wn=4 against the rules, 2026-11-30, a16w4_g128,
** a16w8_channel, a16w7_g32 and at 4M a16w3_g128 and a16w2_g64 too, M =
** 80..160), B / A: 4096 x 1024, 2048 x 2048, 2048 x 1024, 1024 x 4096
** and 512 x 4096 0.81 to 1.00 (a16w4_g128 4096 x 1024, M = 128, 15.2 ->
** 13.2 us); 1024 x 8192 0.67 to 0.84 (19.0 -> 12.7); 8192 x 1024 and 2048
** x 4096 0.96 to 1.06, 4096 x 2048 0.92 to 1.11, and at 16M (16384 x
** 1024, 8192 x 2048, 4096 x 4096) 1.03 to 1.16, which keep 128.  So do
** 257..384 rows' 128-row tiles (tile_by_waves), whose kernel is 65..160's
** (test_plan, check_same_code); 161..256 and 385+ rows were not measured
** and keep 128. */
static int wide_rule(const lb_format *f, int n, int k, int bucket, int bm) {
  const long long nk = (long long)n * k;
  if ((bucket == 3 || (bucket == 5 && bm == 128)) &&
      (nk <= 1LL << 22 || (k <= 1024 && nk <= 1LL << 23)))
    return 0;
  if (bucket >= 3) return n > 256;
  return bucket == 2 && f->lay.bits >= 3 && f->lay.bits <= 7;
}

/* Whether a wr plan copies its activations by TMA (tm=1; the template's
** LB_TMA), its stages released by mbarriers and counts instead of a block
** barrier: the rule wherever wr is.  Measured on an H200 (lowbit bench,
** LOWBIT_GEMM=wg=1,wr=1,tm=1 against the rules' tm=0 in one device call,
** 2026-11-27), a16w4_g128 8192 x 8192: M = 128 57.9 -> 50.4 us, M = 256
** 98.2 -> 83.4, M = 1024 370.7 -> 314.3; 4096 x 14336 52.6 -> 45.7,
** 101.1 -> 88.0, 341.3 -> 292.2; a16w8_channel 8192 x 8192 52.5 -> 47.1,
** 91.6 -> 76.4, 344.5 -> 294.9.  Four stages instead of three measured
** the same (within 1%). */
static int tm_rule(void) { return 1; }

/* How a wr plan's loop holds its words (un; the template's LB_UN).  1:
** rolled, three sets (words two sub-stages ahead) moved down a set each
** sub-stage.  3: unrolled by three, the sets taking turns.  2: words one
** sub-stage ahead in two sets taking turns, unrolled by two.  The rules' 2
** where codes cross words (3, 5, 6 and 7 bits), whose sub-stages hold the
** most words: 3 was at most 3% faster (1% in the mean of the 30 rows
** below and two sweep recipes'), and NVRTC takes 1.3 times the rolled
** loop's time where 3 takes 1.8 to 1.9 (0.40 to 0.51 s against 0.31 to
** 0.39 on a 2-core machine, 8192 x 8192, M = 64 and 128).  Measured
** on an H200 (lowbit bench, LOWBIT_GEMM=un=1 / un=2 / un=3 in one device
** call, 2026-11-29, us, 8192 x 8192 / 4096 x 14336), M = 128: a16w3_g128
** 54.6 / 47.3 -> 52.8 / 45.1 (un=3 51.6 / 44.4), a16w5_g64 66.2 / 52.1 ->
** 62.0 / 49.8 (62.2 / 49.0), a16w6_g128 55.4 / 50.1 -> 54.2 / 48.3 (52.5 /
** 47.6), a16w7_g32 78.1 / 73.1 -> 73.8 / 69.0 (73.1 / 68.5); M = 1024:
** 330.2 / 297.6 -> 305.2 / 284.7 (300.1 / 282.2), 415.0 / 327.3 -> 391.0 /
** 318.0 (394.9 / 314.8), 348.6 / 321.3 -> 332.7 / 309.5 (324.8 / 308.0),
** 502.1 / 464.7 -> 469.7 / 435.9 (471.6 / 439.2); M = 64 (8 code rows a
** sub-stage; a16w5_g64 and a16w7_g32 run mma.sync there): a16w3_g128 36.9 /
** 36.1 -> 34.4 / 31.6, a16w6_g128 43.5 / 40.3 -> 39.1 / 36.8.  Not where
** codes stay in words: a16w4_g128 at M = 128 46.1 / 38.1 -> 50.0 / 42.0
** (un=3 47.8 / 39.7), though 2 to 6% faster at M = 1024 (222.1 -> 213.8,
** un=3 209.7). */
static int un_rule(const lb_format *f) {
  return f->lay.cross ? 2 : 1;
}

/* 7-bit codes whose sub-stages of 8 code rows spill with the words in
** registers (plan_wg): groups of 32, scales and zeros of two widths. */
static int seven_narrow(const lb_format *f) {
  return f->lay.bits == 7 && !f->per_channel && f->group <= 32 && f->zeros &&
         f->ssize != f->zsize;
}

/* The sm_90a plan (wgmma, wg=1): warpgroups of four warps along channels,
** each 64 channels a group, over all of the tile's rows (wgmma's n); where
** the tiles leave SMs idle, K is split (lb_gemm_splits).  mj counts a
** warpgroup's 64-channel groups.
** With the words through shared memory (wr=0) not the rule: measured on an
** H100 (lowbit bench a16w4_g128 8192 x 8192, 2026-11-24), M = 16 / 32 /
** 64 / 128 / 1024 took 38.0 /
** 49.5 / 81.8 / 94.9 / 637.1 us against mma.sync's 26.8 / 31.3 / 44.1 /
** 81.1 / 519.9; without dequantisation (plain=1, measured before the
** words were loaded once a sub-stage) 35.3 at M = 16 and 553.4 at 1024
** (mma.sync 24.4 and 481.1).  docs/architecture.md
** ("The wgmma plan") says what was tried. */
static void plan_wg(const lb_format *f, int n, int k, int sms, int bucket,
                    const knobs *kn, lb_gemm_cfg *c) {
  memset(c, 0, sizeof *c);
  c->wg = 1;
  c->wr = pick(kn, K_WR, wr_rule(f, n, sms, bucket));
  c->tm = c->wr && pick(kn, K_TM, tm_rule());   /* (a wr plan's only) */
  /* From 257 rows, tiles of 256 (wgmma m64n256k16: a dequantised A
  ** fragment feeds twice the MMAs, x is read once for 256 rows) where codes
  ** never cross words; 3-, 5-, 6- and 7-bit codes spilled 56 to 198 bytes
  ** there.  Measured on an H100 (lowbit bench, 2026-11-27, 128 -> 256
  ** rows), 8192 x 8192: a16w4_g128 M = 512 145.4 -> 123.4 us, 1024 282.1
  ** -> 242.3, 4096 1155.6 -> 961.7; a16w8_channel 146.5 -> 114.9, 293.2
  ** -> 237.4, 1175.8 -> 887.4; a16w1_g64 166.4 -> 125.5, 316.3 -> 258.5,
  ** 1354.5 -> 1028.0; but M = 257 on 4096 x 14336 (a second tile of one
  ** row) a16w4_g128 156.4 -> 206.6 (docs/architecture.md has the table).
  ** From 161 rows too (65..160 keep 128: 129..160 run 128 rows, then the
  ** rest apart, lb_gemm_tail): 128 -> 256 rows at M = 192 and 256, 8192 x
  ** 8192 / 4096 x 14336, a16w8_channel 78.0 / 94.0 -> 68.9 / 62.4 us and
  ** 77.4 / 78.4 -> 66.3 / 57.2, a16w1_g64 85.7 / 83.7 -> 78.0 / 66.8;
  ** faster in 14 of 16, a16w4_g128 at 8192 x 8192 1% and 5% slower. */
  c->bm = bucket >= 4 && c->tm && !f->lay.cross ? 256
                                                 : 16 << (bucket < 3 ? bucket : 3);
  if (c->tm) c->bm = pick(kn, K_BM, c->bm);   /* (the TMA plan's rows: any tile) */
  c->warps_m = pick(kn, K_WM, 1);
  c->warps_n = pick(kn, K_WN, wide_rule(f, n, k, bucket, c->bm) ? 8 : 4);
  /* One warpgroup along K, as a plan's wk=2 may ask: warpgroups taking
  ** alternate code rows run each their own unrolled rows behind a branch
  ** on the warpgroup, and ptxas serialises wgmmas under a branch ("(C7519)
  ** warpgroup.arrive is injected"; NVRTC printed that on stderr until
  ** 2026-11-29, runtime/lb_nvrtc.c).  It was the wr=0 plan's rule up to
  ** 32 rows, which no rule takes (words in registers load their own rows:
  ** one warpgroup a code row). */
  c->warps_k = pick(kn, K_WK, 1);
  /* 7-bit codes' words in registers at 8 code rows reach 255 registers
  ** at 33..64 rows, and spilled 16 to 36 bytes where groups of 32 have
  ** scales and zeros of different widths (f16 scales and f32 zeros,
  ** sw_w7s_g32_dq0_f16_sf16_zf32_of16, tests/gpu/recipes/w7_z32.lua; or
  ** f32 scales and 16-bit zeros): 4 code rows there (208 to 245
  ** registers, as from 65 rows).  Elsewhere 8, which measured 0.86 to
  ** 0.89 of 4's time (H200, M = 48 and 64, 8192^2 and 4096 x 14336:
  ** a16w7_g32 55.5 -> 48.4 us at 8192^2, M = 64). */
  c->r = bucket <= 2 && !(c->wr && seven_narrow(f)) ? 8 : 4;
  if (bucket > 1 && c->r > f->lay.codes) c->r = f->lay.codes;
  c->r = pick(kn, K_R, c->r);
  if (c->r < r_min(c)) c->r = r_min(c);
  /* a sub-stage of at most K (wgmma_takes; a plan's r is taken as asked) */
  if (kn->v[K_R] < 0)
    while (c->r > r_min(c) && 32 * c->r > k) c->r /= 2;
  fit_tile(f, k, 4 * pick(kn, K_MJ, 1), 0, c);
}

/* Whether the wgmma plan c takes K: where its sub-stage (32 r k-values)
** is no more than K.  Where K is no multiple of a sub-stage, the last
** one's code rows past K are multiplied as zeros (templates/gemm.cu).
** Until 2026-11-29 they made their A operands but skipped their wgmmas by
** a branch, and ptxas injected warpgroup.arrive before the wgmmas
** ("(C7519) warpgroup.arrive is injected ... to allow use of registers in
** GMMA", a warning to lb_log_warnings), which measured as follows for
** the plans below: a16w8_channel at N = 4112, M = 255, sm_90a
** (256 x 128 tiles, 4 code rows), K = 32, 64, 96, 160, 288 and 4128, none
** at K = 128, 256 and 4096; a16w1_g64, a16w5_g64 and a16w7_g32 at K =
** their group.  Measured on an H200 (lowbit bench --iters 30, two
** repeats, us at M = 255 / 4096, N = 4112 and 8192):
** - K less than a sub-stage: fewer code rows where a whole sub-stage fits
**   K (plan_wg), else mma.sync's plan (as where the stages do not fit).
**   K = 64, 2 code rows (no arrives) against the 4 before: a16w5_g64
**   9.0 / 44.3 -> 8.2 / 39.5 (N = 4112), 10.1 / 74.9 -> 9.3 / 65.9;
**   a16w1_g64 10.8 / 35.9 -> 10.7 / 35.8, 11.2 / 62.5 -> 10.7 / 57.8
**   (mma.sync: 7.6 / 39.2, 10.1 / 66.5; a16w8_channel 7.9 / 38.8, 10.3
**   / 69.8 against 11.0 / 35.9, 11.1 / 56.8 at 2 rows).  K = 32 (8- and
**   7-bit codes; no sub-stage of 2 rows fits): mma.sync 7.7 to 10.0 at
**   255 rows against 9.2 to 11.7, at 4096 from 5% faster (a16w8_channel,
**   N = 4112: 38.0 -> 36.2) to 10% slower (a16w7_g32 45.8 -> 50.5).
** - Past one sub-stage the arrives cost little against the alternatives:
**   M = 64 / 128 / 1024, N = 8192, a16w8_channel K = 4128 with them 27.9
**   / 33.6 / 115.4 (K = 4096, none: 24.6 / 30.7 / 110.8), mma.sync 28.4
**   / 45.0 / 237.7; K = 4160 25.9 / 33.3 / 113.4, with 2 code rows (whole
**   sub-stages, no arrives) 34.9 / 41.8 / 134.9; a16w1_g64 K = 4160 23.8
**   / 32.5 / 123.9 against 34.5 / 40.9 / 146.2 at 2 code rows.  So wgmma
**   stays there; its rows past K now multiply zeros (x's from TMA's
**   bounds), with no advisory. */
static int wgmma_takes(const lb_gemm_cfg *c, int k) {
  return !c->wg || k >= 32 * c->r;
}

/* On a 160 KB part the 99 KB parts' limit need not cut the sub-stage:
** back up to the code rows asked for (want) where two stages still fit.
** Measured on an H100 (8192 x 8192): at M = 64, 8 code rows and 3
** stages against 4 and 4, a16w4 66.4 -> 52.6 us, a16w3 86.5 -> 73.5;
** at M = 128 (two warps of 64 rows then), 4 rows and 2 stages against 2
** and 4, a16w4 123.0 -> 97.5, a16w3 178.8 -> 133.9.  With two channel
** groups a warp 4 rows ran faster (M = 1024: a16w4 761.5 -> 587.5 us,
** a16w8_channel 649.6 -> 506.8) but spilled on sm_80 for per-channel
** recipes (up to 100 bytes) and took NVRTC past 1 s for a sweep recipe.
** Below 33 rows it was not measured, and a 3-bit sweep recipe's compile
** at 17..32 rows reached 1.06 s. */
static void lift(const lb_format *f, int k, int want, lb_gemm_cfg *c) {
  int r;
  for (r = want; r > c->r; r /= 2) {
    int ws = words_max(&f->lay, r);
    int stage = stage_bytes(c, ws, r);
    if ((LB_SMEM_HI_KB * 1024 - c->sres) / stage >= 2) {
      c->r = r;
      c->ws = ws;
      c->stage = stage;
      break;
    }
  }
  /* Scales the 99 KB parts could not hold resident: here, where three
  ** stages still fit beside them. */
  if (c->sres == 0) {
    lb_gemm_cfg t = *c;
    reside(f, k, LB_GEMM_SRES_KB * 1024, &t);
    if (t.sres && (LB_SMEM_HI_KB * 1024 - t.sres) / stage_cost(&t) >= 3) *c = t;
  }
}

/* Whether two blocks of plan c on an SM leave its threads the registers
** they need: mma.sync's do, and a wgmma block of one warpgroup over up to
** 64 rows.  Two warpgroups a block got 128 registers a thread and ptxas
** serialised their wgmmas (C7511; wide_rule: a16w1_g64 8192 x 8192 at
** M = 64 58.6 against 39.8 us); 128 rows spilled under that cap (LB_MINB,
** emit_plan).  Warpgroups along K (wk = 2, plans that ask for wgmma up
** to 32 rows) are two a block as well: a16w7_g32's at 4096 x 4096, M =
** 32, spilled 68 bytes at 128 registers (none without the cap).  The
** rule's bs and the blocks split-K counts on (fit) ask it; a plan's bs=2
** is taken as asked. */
static int regs_for_two(const lb_gemm_cfg *c) {
  return !c->wg || (c->bm <= 64 && c->warps_n * c->warps_k <= 4);
}

/* Whether a run of b bytes of a channel's groups (a sub-stage's) goes in
** whole cp.async copies (4, 8 or 16 bytes; 16-byte ones past that) of a
** row of rowb bytes.  (Parallel to templates/gemm.cu's lb_sunit,
** lb_whole_units and its staged-scales static_asserts: change them
** together.) */
static int runs_copy(int b, int rowb) {
  const int u = b < 16 ? b : 16;
  return b >= 4 && (b & (b - 1)) == 0 && rowb % u == 0;
}

/* Scales and zeros staged (sstg, zstg): where they are not resident and a
** sub-stage meets two groups or more, whole ones, its groups' scales and
** zeros of the block's channels are copied into its stage with its words
** and activations (templates/gemm.cu, lb_issue_groups), so that no scale
** load waits on memory inside the loop.  Loaded from global memory a
** sub-stage ahead instead (lb_load_sg), each thread issues 2 mj gss loads
** of 2 bytes a sub-stage for each array, and the short sub-stages wait
** on them.  With the activations by TMA (tm) each warp copies its own
** channels' rows (lb_issue_own).  With the words in registers (wr) the
** stages are whole 1024-byte swizzle atoms, and the scales' bytes are
** rounded up with them.  Only where the budget keeps its stages (sg=0:
** never). */
static void stage_scales(const lb_format *f, int k, int budget, const knobs *kn,
                         lb_gemm_cfg *c) {
  const int ng = lb_format_groups(f, k);
  const int sb = c->gss * f->ssize, zb = f->zeros ? c->gss * f->zsize : 0;
  const int base = stage_bytes(c, c->ws, c->r);   /* (a plan finished before) */
  const int atom = c->wr ? 1024 : 16;
  const int extra = (base + c->bn * (sb + zb) + atom - 1) / atom * atom - base;
  c->stage = base;
  c->sstg = c->zstg = c->sgoff = 0;
  if (c->sres || f->per_channel || (32 * c->r) % f->group != 0 ||
      c->gss < 2 || !runs_copy(sb, ng * f->ssize) ||
      (zb && !runs_copy(zb, ng * f->zsize)) ||
      (budget * 1024 - c->sres) / (stage_cost(c) + extra) < stages_min(c))
    return;
  if (!pick(kn, K_SG, 1)) {
    c->sgoff = 1;
    return;
  }
  c->sstg = sb;
  c->zstg = zb;
  c->stage += extra;
}

/* What follows from a part's sub-stage and budget (KB a block). */
static void finish(const lb_format *f, int n, int k, int sms, int bucket,
                   int budget, const knobs *kn, lb_gemm_cfg *c) {
  int span, wide, two;
  /* scale groups a sub-stage meets */
  span = 32 * c->r;
  c->gss = f->per_channel            ? 1
         : span % f->group == 0      ? span / f->group
         : f->group % span == 0      ? 1
                                     : span / f->group + 2;
  stage_scales(f, k, budget, kn, c);
  c->stages = (budget * 1024 - c->sres) / stage_cost(c);
  if (c->warps_k > c->r) c->warps_k = c->r;
  /* Two blocks an SM rather than a deeper pipeline, where two stages let
  ** two fit an sm_90's 228 KB (1 KB of each block reserved); K is then
  ** split for two blocks an SM where the tiles leave fewer
  ** (lb_gemm_splits).  Measured on an H100, a16w4 8192 x 8192: M = 1024,
  ** 674.2 -> 525.4 us (4096 x 14336 698.6 -> 581.5, 4096 x 4096 202.2 ->
  ** 156.6, a16w8_channel 579.2 -> 457.9); M = 128, K split 4 ways, 95.8
  ** -> 81.0 (a16w8_channel 82.9 -> 72.7, 4096 x 14336 105.4 -> 94.8);
  ** M = 32, split 2 ways, 37.2 -> 35.2 (a16w3 42.0 -> 38.4; but a16w1
  ** and a16w2 54.6 -> 61.2 and 53.8 -> 61.4, hence 3 bits and more
  ** there).  With one warp a code row (wk = 1, from 17 rows), two blocks
  ** won for every width at 17..64 rows too (lowbit tune, above: a16w4
  ** 8192 x 8192 M = 32 33.5 -> 29.8 us, M = 64 50.9 -> 43.6; a16w2
  ** 14336 x 4096 M = 32 43.8 -> 31.5, M = 64 60.7 -> 44.2).  Up to 16
  ** rows only the 64-channel blocks of larger layers (wide16).  An sm_80
  ** (164 KB an SM) reads the same plan and keeps one block: not measured
  ** there. */
  c->per_sm = 1;
  /* 9..16 rows of mma.sync's wide16 blocks: two an SM (two_16), else one
  ** of at most three stages */
  wide = bucket == 0 && !c->wg && wide16(n, k);
  two = wide && two_16(c->bn, n, k, sms);
  if (pick(kn, K_BS, (bucket >= 1 && regs_for_two(c)) || two ? 2 : 1) == 2 &&
      budget >= LB_SMEM_HI_KB && c->stages >= stages_min(c) &&
      2 * (stages_min(c) * stage_cost(c) + c->sres + LB_SMEM_RESERVED) <=
          LB_SMEM_SM_KB * 1024) {
    c->stages = stages_min(c);
    c->per_sm = 2;
  }
  {
    int cap = pick(kn, K_ST, wide && !two ? 3 : 4);
    if (c->stages > cap) c->stages = cap;
  }
  /* Blocks an sm_90 holds at once whatever the plan meant (up to 16 rows
  ** a block's stages are small enough for two): split-K may fill them
  ** (lb_gemm_splits), where their registers allow.  Parts of 99 KB:
  ** per_sm (not measured). */
  c->fit = c->per_sm;
  if (budget >= LB_SMEM_HI_KB && regs_for_two(c) &&
      2 * (c->stages * stage_cost(c) + c->sres + LB_SMEM_RESERVED) <=
          LB_SMEM_SM_KB * 1024)
    c->fit = 2;
  c->gridn = (n + c->bn - 1) / c->bn;
  c->nss = (k + 32 * c->r - 1) / (32 * c->r);
  c->threads = 32 * c->warps_m * c->warps_n * c->warps_k;
  c->smem = c->stages * stage_cost(c) + c->sres;
  c->sk = pick(kn, K_SK, 0);   /* read here, not per launch */
  c->un = c->wr ? pick(kn, K_UN, un_rule(f)) : 1;   /* (rolled without wr) */
  c->tail = pick(kn, K_TL, 1);
  c->tq = c->bm;
}

/* A plan's time for m rows on sms SMs, in 128-row tile sub-stages: its
** waves of blocks (split-K's included) times a block's rows over its
** splits, a 256-row tile's row costing 0.85 of a 128-row one's (wgmma
** m64n256: each A fragment feeds twice the MMAs).  Only to choose between
** the two tiles (tile_by_waves).  split 0: a split's part costs as much as
** the whole block (split-K measured no gain, below). */
static long long wave_cost(const lb_gemm_cfg *c, int m, int sms, int split) {
  const long long blocks = (long long)c->gridn * ((m + c->bm - 1) / c->bm);
  const long long s = lb_gemm_splits(c, m, sms);
  const long long slots = (long long)sms * c->per_sm;
  return (blocks * s + slots - 1) / slots * c->bm * (c->bm >= 256 ? 85 : 100) /
         (split ? s : 1);
}

/* 257..384 rows (bucket 5) on sm_90a's 256-row tiles make two tile rows;
** 128-row tiles make three, and where the 256-row tiles' two rows take a
** wave more than the others' three (wide layers), the 128-row tiles are
** the rule's.  The last rows still run apart after 256 rows (tq: 257..320
** as 256 + the rest, on 161..256's kernel).  Measured on an H100
** (lowbit bench, 2026-11-27, M = 321 / 352 / 384, 256 -> 128 rows):
** 4096 x 14336 (112 channel blocks: 224 blocks against 336 on 132 SMs)
** a16w4_g128 178.0 / 170.2 / 155.0 -> 130.0 / 114.5 / 115.0 us,
** a16w8_channel 166.2 / 159.6 / 151.3 -> 133.6 / 118.5 / 116.1,
** a16w1_g64 171.5 / 159.9 / 146.7 -> 126.8 / 110.1 / 111.6; at 8192 x
** 8192 (128 blocks against 192) 256 rows kept a16w1_g64 at 155.9 / 148.9
** / 140.3 against 163.5 / 164.2 / 164.8; at 14336 x 4096 (64 blocks,
** split twice) 256 rows measured 9% faster for a16w1_g64 and a16w2_g64
** and 4 to 15% slower for a16w8_channel and a16w4_g128: for 4- and 8-bit
** codes the model counts a split as no gain there (its parts' sums cost
** what the shorter K saves), so those take 128 rows. */
static void tile_by_waves(const lb_format *f, int n, int k, int sms,
                          const knobs *kn, lb_gemm_cfg *c) {
  knobs k128 = *kn;
  lb_gemm_cfg alt;
  const int split = f->lay.bits < 4;
  k128.v[K_BM] = 128;
  plan_wg(f, n, k, sms, 5, &k128, &alt);
  finish(f, n, k, sms, 5, lb_gemm_hi_kb(&alt), &k128, &alt);
  if (alt.bm != 128 || alt.stages < stages_min(&alt)) return;
  if (wave_cost(&alt, tops[5].top, sms, split) <
      wave_cost(c, tops[5].top, sms, split)) {
    *c = alt;
    c->tq = 256;
  }
}

/* Whether sm_90's plan is wgmma's: mma.sync's, as on the other 160 KB
** parts, unless the plan says wg=1, or the rule takes wgmma with the
** words in registers (wr_rule; not where the plan's warps are mma.sync's).
** A plan whose knobs cannot go together is refused. */
static lb_status wg_rule(const lb_format *f, int n, int sms, int bucket,
                         const knobs *kn, const char *plan, const char *from,
                         int *use_wg) {
  const int wgwarps = pick(kn, K_WN, 4) % 4 == 0 && pick(kn, K_WM, 1) == 1;
  if (kn->v[K_WG] == 1 && !wgwarps)
    return lb_fail(LB_EARG, "%s: plan \"%s\": with wgmma (wg=1) warps "
                   "come in warpgroups along channels: wn 4 or 8, wm 1",
                   from, plan);
  if (kn->v[K_WR] == 1 && (kn->v[K_WG] == 0 || !wgwarps))
    return lb_fail(LB_EARG, "%s: plan \"%s\": wr=1 (words in registers) "
                   "is a wgmma plan's: not with wg=0, and warps in "
                   "warpgroups (wn 4 or 8, wm 1)", from, plan);
  *use_wg = kn->v[K_WG] == 1 ||
            (kn->v[K_WG] < 0 && wgwarps &&
             (kn->v[K_TM] == 1 || pick(kn, K_WR, wr_rule(f, n, sms, bucket)) == 1));
  return LB_OK;
}

/* sm_90's wgmma plan, p->wg (p->hi where the rule's does not take; a
** plan's that cannot is refused). */
static lb_status plan_sm90(const lb_format *f, int n, int k, int sms,
                           int bucket, const knobs *kn, const char *plan,
                           const char *from, lb_gemm_plans *p) {
  plan_wg(f, n, k, sms, bucket, kn, &p->wg);
  if (p->wg.wr && p->wg.warps_k > 1)
    return lb_fail(LB_EARG, "%s: plan \"%s\": wr=1 (words in registers) "
                   "takes one warpgroup a code row: wk=1", from, plan);
  finish(f, n, k, sms, bucket, lb_gemm_hi_kb(&p->wg), kn, &p->wg);
  /* wr=1 keeps a third stage for the wgmmas still reading one: where
  ** that does not fit the rule's is mma.sync's, a plan's is refused */
  if (p->wg.wr && p->wg.stages < stages_min(&p->wg)) {
    if (kn->v[K_WG] == 1 || kn->v[K_WR] == 1)
      return lb_fail(LB_EARG, "%s: plan \"%s\": wr=1 (words in "
                     "registers) needs three stages or more (%d of %d "
                     "bytes)", from, plan, p->wg.stages, p->wg.stage);
    p->wg = p->hi;
  }
  if (bucket == 5 && kn->v[K_BM] < 0 && p->wg.bm == 256)
    tile_by_waves(f, n, k, sms, kn, &p->wg);
  /* (a plan that asks for wgmma, words in registers or TMA takes it) */
  if (!wgmma_takes(&p->wg, k) && kn->v[K_WG] != 1 && kn->v[K_WR] != 1 &&
      kn->v[K_TM] != 1)
    p->wg = p->hi;
  return LB_OK;
}

/* Knobs of sm_90's plan that it did not take: refused, never ignored (a
** part that cannot keeps its own way). */
static lb_status refuse_unbuilt(const knobs *kn, const lb_gemm_plans *p,
                                const char *plan, const char *from) {
  /* tm=1 asked for and not built (no wgmma plan, no words in registers,
  ** or too few stages for them) */
  if (kn->v[K_TM] == 1 && !p->wg.tm)
    return lb_fail(LB_EARG, "%s: plan \"%s\": tm=1 (activations by TMA) "
                   "is sm_90's wgmma plan's with the words in registers "
                   "(wg=1, wr=1, warps in warpgroups, three stages)", from,
                   plan);
  /* sg=1 where no part's plan can stage the scales (stage_scales) */
  if (kn->v[K_SG] == 1 && !p->wg.sstg && !p->hi.sstg && !p->lo.sstg)
    return lb_fail(LB_EARG, "%s: plan \"%s\": sg=1 (scales staged with each "
                   "sub-stage) takes scales that are not resident, a "
                   "sub-stage meeting two whole groups or more and copies of "
                   "4 bytes or more: no plan of this layer has them", from, plan);
  /* un=2 or 3 unrolls the loop of the plan with the words in registers */
  if (kn->v[K_UN] > 1 && p->wg.un != kn->v[K_UN])
    return lb_fail(LB_EARG, "%s: plan \"%s\": un=%d (the loop unrolled) is sm_90's "
                   "wgmma plan's with the words in registers (wg=1, wr=1)", from,
                   plan, kn->v[K_UN]);
  /* bm other than the bucket's rows is sm_90a's TMA plan's: refused where
  ** that plan is not built (the other parts keep the bucket's rows) */
  if (kn->v[K_BM] >= 0 && kn->v[K_BM] != p->wg.bm)
    return lb_fail(LB_EARG, "%s: plan \"%s\": bm=%d (tile rows) is sm_90's "
                   "wgmma plan's with the activations by TMA (wg=1, wr=1, "
                   "tm=1); this plan's tiles have %d rows", from, plan,
                   kn->v[K_BM], p->wg.bm);
  return LB_OK;
}

/* Checks the arguments (messages name fn), derives the format and plans
** (plan: the knobs that replace the rules', from `from`; NULL: none). */
static lb_status prepare(const lb_recipe *r, int n, int k, int bucket,
                         int sms, const char *fn, const char *plan,
                         const char *from, lb_format *f, knobs *kn,
                         lb_gemm_plans *p) {
  lb_status st;
  int use_wg = 0, want;
  if ((st = lb_format_for(r, n, k, sms, fn, f)) != LB_OK) return st;
  if (bucket < 0 || bucket >= LB_GEMM_BUCKETS)
    return lb_fail(LB_EARG, "%s: GEMM bucket %d out of range", fn, bucket);
  if ((st = parse_plan(plan, bucket, from, kn)) != LB_OK) return st;
  want = plan_tile(f, n, k, bucket, sms, kn, &p->lo);
  p->hi = p->lo;
  lift(f, k, want, &p->hi);
  finish(f, n, k, sms, bucket, LB_SMEM_HI_KB, kn, &p->hi);
  finish(f, n, k, sms, bucket, LB_SMEM_LO_KB, kn, &p->lo);
  if ((st = wg_rule(f, n, sms, bucket, kn, plan, from, &use_wg)) != LB_OK)
    return st;
  p->wg = p->hi;
  if (use_wg &&
      (st = plan_sm90(f, n, k, sms, bucket, kn, plan, from, p)) != LB_OK)
    return st;
  if ((st = refuse_unbuilt(kn, p, plan, from)) != LB_OK) return st;
  /* Split-K on sm_90: the splits' sums meet in the shared memory of a
  ** cluster's blocks (cl=1, the rule) up to 64 rows where a block's sums
  ** fit its stages, else in a work space that a second kernel adds up
  ** (cl=0, as on the other parts).  Measured on an H100 (ncu, a16w4_g128,
  ** M = 16 .. 64, four shapes): that kernel took 3.4 to 5.2 us of every
  ** split GEMM.  At 128 rows the cluster's sums spilled 168 bytes (a16w4,
  ** sm_90).  Which splits go to a cluster: lb_gemm_cluster. */
  p->wg.csum = p->wg.bm <= 64 && 4 * p->wg.bm * p->wg.bn <= p->wg.stages * p->wg.stage &&
               pick(kn, K_CL, 1);
  if (kn->v[K_CL] == 1 && !p->wg.csum)
    return lb_fail(LB_EARG, "%s: plan \"%s\": cl=1 needs blocks of at most "
                   "64 rows whose sums fit their stages (%d x %d f32 sums, "
                   "%d stages of %d bytes)", from, plan,
                   p->wg.bm, p->wg.bn, p->wg.stages, p->wg.stage);
  /* bs=2 that sm_90's plan cannot take is refused; the other 160 KB
  ** parts' plan shares the knobs but not the tile (wgmma's warps), and
  ** keeps one block an SM where two do not fit */
  if (kn->v[K_BS] == 2 && p->wg.per_sm != 2)
    return lb_fail(LB_EARG, "%s: plan \"%s\": bs=2, but two blocks of "
                   "two %d-byte stages (and %d bytes of scales) exceed an "
                   "SM's %d KB", from, plan, p->wg.stage, p->wg.sres,
                   LB_SMEM_SM_KB);
  if (p->lo.stages < 2 || p->wg.stages < 2)
    return lb_fail(LB_EUNSUP, "%s: %s at n = %d: a GEMM stage of %d bytes "
                   "leaves no two-stage pipeline within %d KB", fn, r->name,
                   n, (p->lo.stages < 2 ? &p->lo : &p->wg)->stage,
                   p->lo.stages < 2 ? LB_SMEM_LO_KB : LB_SMEM_HI_KB);
  return LB_OK;
}

lb_status lb_plan_gemm(const lb_recipe *r, int n, int k, int bucket, int sms,
                       const char *plan, const char *from,
                       lb_gemm_plans *plans) {
  lb_format f;
  knobs kn;
  if (r == NULL || plans == NULL)
    return lb_fail(LB_EARG, "lb_describe: %s is NULL", r ? "out" : "recipe");
  return prepare(r, n, k, bucket, sms, "lb_describe", plan, from, &f, &kn,
                 plans);
}

/* The knobs that give plan c, every one of them named (plain: never). */
static void knobs_of(const lb_gemm_cfg *c, int v[NKNOB]) {
  v[K_WN] = c->warps_n;
  v[K_WK] = c->warps_k;
  v[K_WM] = c->warps_m;
  v[K_MJ] = c->bn / (16 * c->warps_n);
  v[K_R] = c->r;
  v[K_ST] = c->stages;
  v[K_SK] = c->sk;
  v[K_BS] = c->per_sm;
  v[K_WG] = c->wg;
  v[K_CL] = c->csum;
  v[K_WR] = c->wr;
  v[K_TM] = c->tm;
  v[K_BM] = c->bm;
  v[K_UN] = c->un;
  v[K_TL] = c->tail ? -1 : 0;   /* (named where it is off) */
  v[K_SG] = c->sgoff ? 0 : -1;   /* (named where a plan turned it off) */
  v[K_PLAIN] = -1;
}

void lb_gemm_plan_text(const lb_gemm_cfg *c, char *buf, size_t len) {
  int v[NKNOB];
  knobs_of(c, v);
  lb_knobs_text(knob, NKNOB, v, buf, len);
}

size_t lb_gemm_plan_widest(void) { return lb_knobs_widest(knob, NKNOB); }

typedef struct cand_ctx {
  const lb_recipe *r;
  int n, k, bucket, sms, arch;
} cand_ctx;

/* lb_knob_plan for the GEMM: the plan sm_<arch> runs (lb_gemm_part). */
static lb_status cand_plan(void *p, const char *plan, void *cfg, int *v) {
  const cand_ctx *x = p;
  lb_gemm_plans pl;
  lb_format f;
  knobs kn;
  const lb_status st = prepare(x->r, x->n, x->k, x->bucket, x->sms,
                               "lb_plan_candidates", plan,
                               "lb_plan_candidates", &f, &kn, &pl);
  if (st != LB_OK) return st;
  memcpy(cfg, lb_gemm_part(&pl, x->arch), sizeof(lb_gemm_cfg));
  knobs_of(lb_gemm_part(&pl, x->arch), v);
  return LB_OK;
}

lb_status lb_gemm_candidates(const lb_recipe *r, int n, int k, int bucket,
                             int sms, int arch, const char *base,
                             char (*out)[LB_PLAN_LEN], int max, int *count) {
  cand_ctx x = {r, n, k, bucket, sms, arch};
  *count = 0;
  if (r == NULL) return lb_fail(LB_EARG, "lb_plan_candidates: recipe is NULL");
  return lb_knobs_candidates(knob, NKNOB, cand_plan, &x, sizeof(lb_gemm_cfg),
                             base, out, max, count);
}

/* Split-K where the tiles of m rows fill at most half the blocks the SMs
** hold at once (per_sm an SM): as many splits as keep one such wave, each
** at least 2 sub-stages long.  Where an SM holds more blocks than the plan
** meant (fit), those fill them too if each split still takes 4096
** k-values: at 9..16 rows with 128 tiles (N = 4096, 32-channel tiles) one
** block an SM left half of each SM's room idle, and K split 2 ways
** measured (lowbit tune on an H100, M = 16, 14336 x 4096) a16w4_g128
** 32.9 -> 27.6 us, a16w2_g64 38.8 -> 31.4, a16w8_channel 39.3 -> 32.6;
** but at 4096 x 4096 3 to 6% slower.  At most LB_GEMM_SPLITS ways: 4 until
** 2026-11-29 left narrow layers a few blocks (H200, lowbit bench with
** LOWBIT_GEMM=sk=8,cl=0 and sk=16 against the rules, a16w4_g128 a16w2_g64
** a16w8_channel): 16384 x 48 at M = 64 28.2 -> 14.2 us (a16w4), 29.2 ->
** 14.1 (a16w2), 30.1 -> 14.9 (a16w8), at M = 128 38.7 -> 17.3; 16384 x
** 1024 at M = 64 34.3 -> 19.2, 31.4 -> 19.3, 32.0 -> 20.0; 4096 x 256 and
** 4096 x 1024 (8 splits there, by the sub-stages) 2 to 24% faster, but
** a16w2_g64 at M = 64 2% slower (11.3 -> 11.5, 11.6 -> 11.8).  Where tiles
** already fill a wave nothing changes (8192 x 8192, 32 rows and more: 2
** splits at most).  Past 4 ways the splits' f32 sums (splits x m x n,
** written and read again) stay within LB_SPLIT_SUMS, the most those
** measurements had (4096 x 1024 and 16384 x 1024 at M = 128, 16 ways: 8
** MiB, faster).  16 ways until later that day: where one or two tiles are
** all (N of 256 or less) 32 were faster, 64 no more so (H200, lowbit
** bench, LOWBIT_GEMM=sk=32 and sk=64 against the rules' 16, us at M = 64
** / 128 / 256): 16384 x 48 a16w4_g128 14.8 / 17.3 / 21.6 -> 13.4 / 14.4 /
** 17.3 (64 ways 13.6 / 14.6 / 17.0), a16w8_channel 15.7 / 17.9 / 21.0 ->
** 13.8 / 15.8 / 17.2, a16w2_g64 15.3 / 17.8 / 21.8 -> 12.5 / 14.2 /
** 17.2; 16384 x 256 a16w4_g128 16.6 / 19.9 / 25.4 -> 15.5 / 18.2 / 22.2
** (64 ways 17.5 / 20.3 / 24.9); where 8 tiles take 16 ways (16384 x
** 1024) 32 were up to 1.5 times slower, which one wave already rules
** out. */
int lb_gemm_splits(const lb_gemm_cfg *c, int m, int sms) {
  long long blocks = (long long)c->gridn * ((m + c->bm - 1) / c->bm), s, f;
  long long sums;
  if (c->sk) return c->sk < c->nss ? c->sk : c->nss;   /* an experiment */
  if (blocks < 1) blocks = 1;
  s = (long long)sms * c->per_sm / blocks;
  /* the fitted blocks' most ways that keep 4096 k-values a split (runs
  ** on every launch: no search) */
  f = (long long)sms * c->fit / blocks;
  if (f > (long long)c->nss * 32 * c->r / 4096)
    f = (long long)c->nss * 32 * c->r / 4096;
  if (f > s) s = f;
  if (s > LB_GEMM_SPLITS) s = LB_GEMM_SPLITS;
  sums = (long long)m * c->gridn * c->bn * 4;
  if (s > 4 && s * sums > LB_SPLIT_SUMS)
    s = LB_SPLIT_SUMS / sums > 4 ? LB_SPLIT_SUMS / sums : 4;
  if (s > c->nss / 2) s = c->nss / 2;
  return s >= 2 ? (int)s : 1;
}

/* Whether `splits` ways of plan c meet in a cluster (csum: sm_90's plan
** says they can): 2 ways by the rule, any up to 8 (the portable cluster)
** where the plan names its splits (sk, an experiment).  Measured on an
** H100 (ncu, a16w4_g128): 2-way splits took 1 to 2.5 us less than the
** split GEMM plus its adding kernel; 4-way ones at 64 tiles (4096 x 4096
** at M = 64, 14336 x 4096 at M = 32) took 1.8 and 1.7 times as long,
** since at most 62 clusters of 4 such blocks run at once (64 wanted) and
** they spread unevenly (0 to 3 blocks an SM). */
int lb_gemm_cluster(const lb_gemm_cfg *c, int splits) {
  return c->csum && (splits == 2 || (c->sk > 1 && splits > 1 && splits <= 8));
}

/* The rows past m's last whole tile, where they fill at most a quarter of
** a tile: a tile of them costs the big kernel a tile's time (often a wave
** more) for a few rows, where the kernel of their own count reads the
** weights once more and is done.  Measured on an H100 (lowbit bench
** a16w4_g128 a16w8_channel a16w1_g64 --m 144,160,257,300,320,1088 --shapes
** 8192x8192,4096x14336,14336x4096, 2026-11-27; one launch (tl=0) -> two):
** a16w4_g128 4096 x 14336 M = 257 208.6 -> 91.6 us, 8192 x 8192 157.0 ->
** 89.9, M = 1088 381.9 -> 286.5; faster in 49 of 54 cases, slower in 5
** by up to 11% (M = 160, a quarter of a 128-row tile, and 144 at 14336 x
** 4096: a16w8_channel 72.0 -> 76.4); docs/architecture.md has the table.
** An eighth of a tile would have kept those and lost 4096 x 14336 at
** M = 160 (a16w4_g128 107.7 -> 66.7). */
int lb_gemm_tail(const lb_gemm_cfg *c, int m) {
  const int r = m % c->tq;
  return c->tail && m > c->tq && r > 0 && r <= c->tq / 4 ? r : 0;
}

int lb_gemm_lead(lb_gemm_cfg_fn cfg, const void *ctx, int rows, int m) {
  const lb_gemm_cfg *c;
  int t;
  if (m <= rows || (c = cfg(ctx, lb_gemm_bucket(m))) == NULL ||
      (t = lb_gemm_tail(c, m)) == 0)
    return m;
  if ((t > rows && cfg(ctx, lb_gemm_bucket(t)) == NULL) ||
      (m - t > rows && cfg(ctx, lb_gemm_bucket(m - t)) == NULL))
    return m;
  return m - t;
}

size_t lb_gemm_need(const lb_gemm_cfg *c, int m, int n, int sms,
                    int clusters, int *splits, int *cluster) {
  *splits = lb_gemm_splits(c, m, sms);
  *cluster = clusters && lb_gemm_cluster(c, *splits);
  return *splits > 1 && !*cluster
             ? (size_t)*splits * (size_t)m * (size_t)n * sizeof(float)
             : 0;
}

size_t lb_gemm_run_need(lb_gemm_cfg_fn cfg, const void *ctx, int rows,
                        int m, int lead, int n, int sms, int clusters) {
  const int part[2] = {lead, m - lead};
  size_t need = 0, b;
  int i, sp, cl;
  for (i = 0; i < 2; i++) {
    const lb_gemm_cfg *c;
    if (part[i] <= rows) continue;   /* the GEMV's, or no part */
    c = cfg(ctx, lb_gemm_bucket(part[i]));
    if (c != NULL &&
        (b = lb_gemm_need(c, part[i], n, sms, clusters, &sp, &cl)) > need)
      need = b;
  }
  return need;
}

int lb_gemm_bucket_m(int b) { return tops[b].m; }

lb_status lb_gmplan(const lb_recipe *r, int n, int k, int bucket, int sms,
                    const char *fn, const char *plan, const char *from,
                    lb_format *f, lb_gemm_plans *p, int *plain) {
  knobs kn;
  const lb_status st = prepare(r, n, k, bucket, sms, fn, plan, from, f, &kn, p);
  *plain = st == LB_OK && pick(&kn, K_PLAIN, 0);
  return st;
}
