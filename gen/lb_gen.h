/*
** lb_gen.h: the generator: recipe + shape class -> CUDA source.
*/
#ifndef lb_gen_h
#define lb_gen_h

#include <stddef.h>
#include <stdint.h>

#include "lb_recipe.h"

#define LB_WARPS 8       /* warps per GEMV block, at most */
#define LB_RING_KB 88    /* rings and resident scales per block (sm_86 opt-in: 99) */
#ifndef LB_MAX_STAGES
#define LB_MAX_STAGES 1  /* ring depth limit: measured fastest on H100 (a build-time knob) */
#endif
#if LB_MAX_STAGES < 1
#error "LB_MAX_STAGES must be at least 1"
#endif
#define LB_SRES_KB 16    /* a block's resident scales and zeros, at most */
#define LB_XRES_KB 32    /* a block's resident activations, at most */
#define LB_MAX_M 8       /* activation rows one GEMV fragment takes (mma n = 8) */
#define LB_GEMV_HI 2     /* the fewest rows of the second one-fragment kernel
                         ** (lb_gemv_cfg.hcl; its texts say 1 and 2..8) */
#define LB_GEMV_MOST 32  /* rows the GEMV takes at most (four fragments) */

/* Launch shape of the GEMV kernel.  Decided from (recipe, n, k, sms) and
** LOWBIT_PLAN alone and written into the source, so the same inputs give
** the same bytes. */
typedef struct lb_gemv_cfg {
  int warps;    /* warps per block */
  int split;    /* warps sharing one 16-channel group's tiles */
  int rsplit;   /* those warps split every tile's code rows instead (plan
                ** knob; lazy words, no cluster) */
  int ph;       /* copy groups a warp's only tile comes in, the math
                ** starting as the first lands (plan knob; lazy words, a
                ** tile at most a warp; 1: one group) */
  int minb;     /* blocks per SM asked of ptxas (caps registers) */
  int xminb;    /* the same for lb_gemv_xs */
  int stages;   /* shared-memory ring depth: tiles in flight per warp */
  int fstages;  /* the same before sm_90 (the folded block, which walks K
                ** without the cluster); stages but where a cluster gives
                ** sm_90's warps one tile */
  int lazy;     /* words read from the ring where used (wide codes, and
                ** narrow ones whose scales travel in the ring) */
  int cluster;  /* blocks of a cluster splitting K (sm_90 only; 1: none);
                ** grid counts channel blocks, the launch multiplies */
  int nf;       /* fragments of 8 rows of x (2: m up to 16, 4: 32) */
  int rows;     /* the op's GEMV takes 1..rows (8, 16, 32; plan knob,
                ** read from the plan of 1..8 rows; lb_gemv_rows) */
  int hcl;      /* 2..8 rows run a second one-fragment kernel in clusters
                ** of this many (plan knob; 0: none, the kernel of 1..8
                ** rows takes them) */
  int pcl, pst; /* that kernel's plan: the cluster and stages its words
                ** say (1 row's); 0 in every other kernel */
  int slices;   /* 9..32 rows run as this many rows of one-fragment blocks,
                ** 8 rows of x each (gridDim.y); 1: not (nf fragments) */
  int pf;       /* x, scales and zeros from global memory prefetched into
                ** L2 with each tile's words */
  int fold;     /* before sm_90 (no clusters), fold blocks of a cluster
                ** run as one: warps * fold warps, split * fold (1: none) */
  int grid;     /* blocks */
  int smem;     /* dynamic shared memory bytes: rings and resident scales */
  int fsmem;    /* the same for the block before sm_90 (folded, fstages) */
  int srowb;    /* resident scales: bytes per padded row, 0 if not resident */
  int xrowb;    /* resident x: bytes per padded row of activations */
  int xres;     /* budget for resident x, bytes (LB_XRES_KB) */
  int xs_m;     /* largest m whose x fits xres; 0: no resident x */
  int sr;       /* scales and zeros may travel in the ring (plan knob) */
  int sring;    /* they do: bytes per padded row of a tile's slots; 0: not */
  int zring;    /* and of its zero slots (0: no zeros or none in the ring) */
  int fsr;      /* the kernel before sm_90 takes them too (where the
                ** kernels' stages differ, it may not: fstages) */
  int early;    /* not a knob: the source is for launches that may start
                ** before the kernel writing x ends (lb_op_overlap) */
} lb_gemv_cfg;

/* The rows the GEMV takes for recipe r at N x K (n, k; 0: a shape not
** known, taken as a large one) by the rules: LB_MAX_M with one fragment
** of x, 16 with two, LB_GEMV_MOST with four, where they measured faster
** than the GEMM, and 4 where the GEMM's first bucket measured faster at
** 5..8 rows; the GEMM's buckets take the rest. */
int lb_gemv_rows(const lb_recipe *r, int n, int k);
/* The fragments of 8 rows of x the GEMV runs m rows with, where it takes
** them: 1 (up to LB_MAX_M), 2 (to 16), 4 (to LB_GEMV_MOST).  Past the
** rules' reach (lb_gemv_rows) only a plan's rows knob (lowbit tune,
** lb_op_set_plan) gives it those rows. */
int lb_gemv_frags(int m);
/* The GEMV's reach at N x K under plan: its rows knob, else lb_gemv_rows
** (the rules'); a plan that does not parse counts as none (its
** generation says what is wrong). */
int lb_gemv_reach(const lb_recipe *r, int n, int k, const char *plan);
/* The GEMV's source for m rows (one fragment up to LB_MAX_M, two to 16,
** four to LB_GEMV_MOST),
** also giving the plan it was made for (cfg may be NULL).  The plan is
** made once, so the two cannot disagree.  plan: knobs in words replacing
** planned values (NULL: none); from: where they came from (LOWBIT_PLAN,
** the tuning table), for messages and the source.
** early: for launches with programmatic dependent launch (lb_op_overlap),
** which read x by plain loads rather than the read-only path. */
lb_status lb_gen_gemv(const lb_recipe *r, int n, int k, int m, int sms,
                      const char *plan, const char *from, int early,
                      lb_gemv_cfg *cfg, char **src);
/* The block the kernel compiled for sm_<arch> runs: its threads and
** dynamic shared memory (lb_gemv_xs adds its rows of x). */
void lb_gemv_block(const lb_gemv_cfg *c, int arch, int *threads, int *smem);
/* The rows of x a GEMV of plan c keeps resident on a device of sms SMs
** with smsm bytes of shared memory an SM, smres reserved a block and
** smopt at most a block, its block taking smem bytes besides x: the
** plan's c->xs_m, or more, up to LB_XS_MORE, where an even spread of the
** grid leaves room for them (smsm 0, a device not known: c->xs_m). */
#define LB_XS_MORE 4
int lb_gemv_xs_rows(const lb_gemv_cfg *c, int sms, int smsm, int smres,
                    int smopt, int smem);
/* The most rows lb_gemv_xs_rows may give plan c on any device. */
int lb_gemv_xs_most(const lb_gemv_cfg *c);
/* The plan alone (what lb_gen_gemv would write into the source). */
lb_status lb_plan_gemv(const lb_recipe *r, int n, int k, int m, int sms,
                       const char *plan, const char *from, lb_gemv_cfg *cfg);
/* The tuning table's key: the hash of the source the rules alone make
** (the one-fragment GEMV). */
lb_status lb_gemv_key(const lb_recipe *r, int n, int k, int sms,
                      uint64_t *key);
/* Whether plan parses (messages name from). */
lb_status lb_gemv_plan_check(const char *plan, const char *from);
/* Plan c as knobs, every one named. */
void lb_gemv_plan_text(const lb_gemv_cfg *c, char *buf, size_t len);
/* The characters of the longest GEMV plan in words (lb_knobs_widest). */
size_t lb_gemv_plan_widest(void);
/* Plans one knob away from base (NULL: the rules'), base first, each a
** different plan, every knob named; clusters only for sm_90 and newer. */
lb_status lb_gemv_candidates(const lb_recipe *r, int n, int k, int m,
                             int sms, int arch, const char *base,
                             char (*out)[LB_PLAN_LEN], int max, int *count);

#define LB_KERNEL "lb_gemv"        /* activations read from global memory */
#define LB_KERNEL_XS "lb_gemv_xs"  /* activations kept in shared memory */

extern const char lb_tpl_gemv[];   /* templates/gemv.cu, embedded */

#endif
