/*
** lb_gemm.h: the GEMM kind (templates/gemm.cu): tensor-core GEMM for the
** activation rows the GEMV does not take (M > LB_MAX_M), reading the same
** packed weights.  One kernel per M bucket; the bucket's tile height is
** LB_BM, and the launch covers any m in it (and past it, for the last).
*/
#ifndef lb_gemm_h
#define lb_gemm_h

#include <stddef.h>
#include <stdint.h>

#include "lb_recipe.h"
#include "lowbit.h"   /* LB_MAX_ROWS */

#define LB_GEMM_BUCKETS 7      /* 9..16, 17..32, 33..64, 65..160, 161..256,
                               ** 257..384, 385+: tiles of 16, 32, 64 and
                               ** then 128 rows (sm_90a: 256 past 160 rows,
                               ** plan_wg; 128 or 256 at 257..384,
                               ** tile_by_waves) */
#define LB_GEMM_KERNEL "lb_gemm"
#define LB_GEMM_SUM "lb_gemm_sum"   /* split-K: adds the splits' sums */
#define LB_GEMM_SPLITS 32      /* split-K's most ways by the rules (sk: any
                               ** up to 64, the knob's range) */
#define LB_SPLIT_SUMS (8 << 20) /* past 4 ways, the splits' sums' most bytes */
#define LB_SMEM_HI_KB 160      /* sm_80, sm_90, sm_100: 163 KB and more */
#define LB_SMEM_LO_KB 96       /* sm_86, sm_87, sm_89, sm_120: 99 KB */
#define LB_SMEM_WG_KB 227      /* sm_90a's 256-row wgmma tiles: a block's most */
#define LB_SMEM_SM_KB 228      /* an sm_90's SM: what two blocks share */
#define LB_SMEM_RESERVED 1024  /* bytes the driver keeps of each block's */
#define LB_GEMM_SRES_KB 128    /* resident scales' most (lb_gmplan.c fit_tile) */

typedef struct lb_gemm_cfg {
  int bm, bn;             /* block tile: activation rows x channels */
  int warps_m, warps_n;   /* warps along rows and channels */
  int warps_k;            /* warps taking alternate code rows (sums meet) */
  int r;                  /* code rows per sub-stage (32 r k-values) */
  int ws;                 /* words per lane a sub-stage copies, at most */
  int gss;                /* scale groups a sub-stage meets, at most */
  int stage;              /* shared-memory bytes of one stage */
  int srowb;              /* resident scales: bytes a padded row (0: none) */
  int zrowb;              /* resident zeros: bytes a padded row (0: none) */
  int sres;               /* their shared-memory bytes, after the stages */
  int sstg, zstg;         /* staged scales, zeros: a channel's bytes in a
                          ** stage (0: not staged; stage_scales) */
  int sgoff;              /* they would be, but the plan said sg=0 */
  int stages;             /* pipeline depth */
  int gridn;              /* channel blocks */
  int nss;                /* sub-stages along K */
  int threads;            /* a block's (derived from the warps) */
  int sk;                 /* K splits LOWBIT_GEMM asks for (0: the rule's) */
  int smem;               /* dynamic shared memory a block: stages and
                          ** resident scales */
  int per_sm;             /* blocks the plan means an SM to hold (2: two
                          ** stages so that two fit an sm_90; else 1) */
  int fit;                /* blocks an SM holds by shared memory, at most
                          ** 2: split-K fills that many (lb_gemm_splits) */
  int wg;                 /* MMA by wgmma, warps in warpgroups (sm_90a) */
  int csum;               /* split-K's sums meet in a cluster (sm_90) */
  int wr;                 /* words go to registers, not the stages (wg) */
  int tm;                 /* activations by TMA into the stages (wr): the
                          ** launch passes a tensor map of x */
  int un;                 /* the loop's sets of words (wr): 1 rolled, 2 or 3
                          ** unrolled by as many */
  int tail;               /* rows past the last whole tile may run apart
                          ** (lb_gemm_tail; LOWBIT_GEMM tl=0: never) */
  int tq;                 /* the rows of a whole tile to lb_gemm_tail: bm,
                          ** or 256 where 257..384 took 128 (tile_by_waves) */
} lb_gemm_cfg;

/* A bucket's plans: one for sm_90 (compiled for sm_90a: wgmma unless the
** plan says wg=0), one for the other parts with 160 KB of shared memory
** a block (lb_gemm_hi), one for the 99 KB parts.  The source holds all
** three. */
typedef struct lb_gemm_plans {
  lb_gemm_cfg wg, hi, lo;
} lb_gemm_plans;

/* The plan of plans that sm_<arch> runs. */
const lb_gemm_cfg *lb_gemm_part(const lb_gemm_plans *p, int arch);

/* The bucket of m (> LB_MAX_M): 0..LB_GEMM_BUCKETS-1. */
int lb_gemm_bucket(int m);
/* Bucket b's rows past the GEMV's reach (the first bucket starts past a
** reach below LB_MAX_M, else at LB_MAX_M + 1): lo..hi, hi 0 for the last
** (no end). */
void lb_gemm_span(int b, int reach, int *lo, int *hi);
/* Splits of K for m rows on sms SMs (1: none); lb_gemm_sum adds them,
** unless they meet in a cluster (lb_gemm_cluster: 1). */
int lb_gemm_splits(const lb_gemm_cfg *c, int m, int sms);
int lb_gemm_cluster(const lb_gemm_cfg *c, int splits);
/* Rows at the end of m that plan c leaves to a second launch on the kernel
** of their own count (0: none; the caller checks that kernel exists). */
int lb_gemm_tail(const lb_gemm_cfg *c, int m);
/* A run of m rows on GEMM buckets whose plans for the device are
** cfg(ctx, b) (NULL: bucket b has none), past the GEMV's first `rows`.
** Written once for the op (runtime/lb_op.c) and for the work space asked
** without one (lb_workspace_for). */
typedef const lb_gemm_cfg *(*lb_gemm_cfg_fn)(const void *ctx, int bucket);
/* The rows of the first launch: m, or m less the tail lb_gemm_tail leaves
** to a second launch where both parts have a kernel. */
int lb_gemm_lead(lb_gemm_cfg_fn cfg, const void *ctx, int rows, int m);
/* The splits of m rows on plan c (*splits; *cluster 1 where they meet in
** a cluster, which needs clusters: a driver that launches them) and the
** work space they need (0 in a cluster or unsplit). */
size_t lb_gemm_need(const lb_gemm_cfg *c, int m, int n, int sms,
                    int clusters, int *splits, int *cluster);
/* The work space of a whole run whose first launch takes lead rows: the
** larger of its parts' (they run one after the other). */
size_t lb_gemm_run_need(lb_gemm_cfg_fn cfg, const void *ctx, int rows,
                        int m, int lead, int n, int sms, int clusters);
/* Whether sm_<arch> has the larger shared-memory budget. */
int lb_gemm_hi(int arch);
/* The bucket's plan alone (LB_EUNSUP where none fits a 99 KB part).
** plan: knobs in words (lowbit.h) replacing the rules' choices, or NULL;
** from: where they came from, for messages and the source's comment
** ("LOWBIT_GEMM", the tuning table's path). */
lb_status lb_plan_gemm(const lb_recipe *r, int n, int k, int bucket, int sms,
                       const char *plan, const char *from,
                       lb_gemm_plans *plans);
/* Source of the bucket's kernel (deterministic) and its plan. */
lb_status lb_gen_gemm(const lb_recipe *r, int n, int k, int bucket, int sms,
                      const char *plan, const char *from,
                      lb_gemm_plans *plans, char **src);
/* The tuning table's key for the bucket: the hash of the source the rules
** alone make (no plan, no dump), so that any change to the recipe, the
** shape, the SM count or lowbit's generator leaves old entries unused. */
lb_status lb_gemm_key(const lb_recipe *r, int n, int k, int bucket, int sms,
                      uint64_t *key);
/* Whether plan parses for bucket (messages name from). */
lb_status lb_gemm_plan_check(const char *plan, int bucket, const char *from);
/* Plan c as knobs, every one named (lb_gemm_plans' hi or lo). */
void lb_gemm_plan_text(const lb_gemm_cfg *c, char *buf, size_t len);
/* The characters of the longest GEMM plan in words (lb_knobs_widest). */
size_t lb_gemm_plan_widest(void);
/* Plans one knob away from base (NULL: the rules'), base first, each a
** different plan for sm_<arch>'s part (lb_gemm_part), every knob named. */
lb_status lb_gemm_candidates(const lb_recipe *r, int n, int k, int bucket,
                             int sms, int arch, const char *base,
                             char (*out)[LB_PLAN_LEN], int max, int *count);

extern const char lb_tpl_gemm[];   /* templates/gemm.cu, embedded */

#endif
