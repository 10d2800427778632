/*
** lowbit.h: public interface of lowbit, a generator of fused low-bit
** matmul kernels.  A Lua recipe describes a weight format; lowbit turns it
** into CUDA source, compiles it with NVRTC, caches the binary and launches
** it through the driver API.
**
** Every function returns an lb_status.  On failure lb_errmsg() holds a
** message that says what was wrong and where; nothing here aborts or prints.
** Messages are per thread.
*/
#ifndef lowbit_h
#define lowbit_h

#include <stddef.h>
#include <stdint.h>

/* LB_API marks what liblowbit.so exports.  The library is built with
** -fvisibility=hidden, so a declaration here without LB_API is not
** reachable through the shared library: every public function needs it. */
#ifndef LB_API
#if defined(__GNUC__)
#define LB_API __attribute__((visibility("default")))
#else
#define LB_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lb_status {
  LB_OK = 0,
  LB_EARG,      /* null, misaligned or out-of-range argument */
  LB_ERECIPE,   /* recipe failed to load or validate */
  LB_EMEM,      /* host allocation failed */
  LB_EIO,       /* file could not be read or written */
  LB_ECOMPILE,  /* NVRTC rejected the generated source */
  LB_ECUDA,     /* the CUDA driver reported an error */
  LB_ENODEV,    /* no CUDA driver or device */
  LB_EUNSUP     /* valid request that this version does not implement */
} lb_status;

/* Message of the last failure on this thread ("" before any).  A call
** that succeeds leaves it as it was: read it right after a call that
** returned a status other than LB_OK; it stays valid until the next
** failing lowbit call on this thread. */
LB_API const char *lb_errmsg(void);
LB_API const char *lb_status_name(lb_status s);
/* Frees what lowbit allocated for the caller (generated source, logs,
** cache listings), so that callers need not share lowbit's C runtime. */
LB_API void lb_free(void *p);

/* ---- recipes ---------------------------------------------------------- */

typedef struct lb_recipe lb_recipe;

/* Runs the recipe in a sandbox and validates it.  path is a file, or a
** bare name ("a16w4_g128": no '/', no ".lua") looked up as NAME.lua in
** each directory of $LOWBIT_RECIPE_PATH (':'-separated), then in the
** installed recipes (share/lowbit/recipes). */
LB_API lb_status lb_recipe_load(const char *path, lb_recipe **out);
/* Same, from text; chunkname names it in messages ("@name" style not needed). */
LB_API lb_status lb_recipe_load_text(const char *chunkname, const char *text,
                                     size_t len, lb_recipe **out);
LB_API void lb_recipe_free(lb_recipe *r);
LB_API const char *lb_recipe_name(const lb_recipe *r);

/* What a recipe says, read-only; the strings live as long as the recipe. */
typedef struct lb_recipe_info {
  const char *name, *file;
  int bits;                 /* 1..8 */
  int is_signed;            /* codes in two's complement */
  const char *packing;      /* "gemlite32" */
  int group;                /* k-values per scale; 0: one per channel */
  const char *activations;  /* "f16", "bf16" */
  const char *scales;       /* dtype of the scales */
  const char *zeros;        /* dtype of the zeros; NULL: no zeros */
  const char *dequant;      /* "(q - z) * s", "q * s + z" or "q * s" */
  const char *accumulator;  /* "f32" */
  const char *output;       /* dtype of y */
  int bias;                 /* epilogue adds a bias */
} lb_recipe_info;

LB_API lb_status lb_recipe_describe(const lb_recipe *r, lb_recipe_info *out);

/* ---- host-side tensors --------------------------------------------------
** A layer computes y[M][N] = x[M][K] * W[N][K]^T (+ bias[N]).  W is given
** as integer codes, one byte each, row-major [N][K], holding the code's
** low `bits` bits (signed codes in two's complement).  Scales and zeros are
** row-major [N][K / group] in the recipe's dtypes (group = K for
** per-channel).
*/
typedef struct lb_sizes {
  size_t packed;   /* bytes of packed weights */
  size_t scales;   /* bytes of scales */
  size_t zeros;    /* bytes of zeros (0 when the recipe has none) */
  int groups;      /* groups per output channel */
  int kpad;        /* K rounded up to the packing tile */
} lb_sizes;

LB_API lb_status lb_sizes_of(const lb_recipe *r, int n, int k, lb_sizes *out);
LB_API lb_status lb_pack(const lb_recipe *r, int n, int k,
                         const uint8_t *codes, uint32_t *packed);
LB_API lb_status lb_unpack(const lb_recipe *r, int n, int k,
                           const uint32_t *packed, uint8_t *codes);

/* ---- generation --------------------------------------------------------- */

/* Self-contained CUDA source for (recipe, n, k) on a device with `sms`
** multiprocessors.  Free *src with lb_free (or free). */
LB_API lb_status lb_generate(const lb_recipe *r, int n, int k, int sms,
                             char **src);
/* The source of the kernel that m activation rows use: the GEMV for m up
** to 8 (lb_generate's source; up to its reach where that is below 8) and
** up to its reach (lb_rows_at: two
** fragments of x to 16 rows, four to 32, or, where the one-fragment
** kernel's blocks leave SMs idle, that kernel in rows of blocks, the plan
** knob slices), else the GEMM of m's bucket (rows
** 9..16, 17..32, 33..64, 65..160, 161..256, 257..384, 385 and more).
** m = 1..LB_MAX_ROWS. */
#define LB_MAX_ROWS (1 << 20)
LB_API lb_status lb_generate_m(const lb_recipe *r, int n, int k, int m,
                               int sms, char **src);

/* The range of rows that share the kernel m rows use, for recipe r at
** N x K (n, k): its kind ("gemv" or "gemm"), rows lo..hi (hi 0: no end),
** and the range's index, as lb_op_plan, the tuning table and `lowbit
** tune` key plans: -1 the GEMV with one fragment of x (1..8 rows, or to
** its reach below 8), -2
** with two (9..16 rows), -3 with four (17..32; either in slices where
** the plan says so), 0.. the GEMM's buckets.
** Where the GEMV ends (its reach) depends on the shape.  By the rules,
** in layers of 4M weights or fewer: 32 rows for every width but 5- to
** 7-bit codes (16) and bf16 activations with 8-bit codes (16 as slices
** where N is 1024 or less, else 8).  In larger
** ones, in this order: 16 for 1- to 3-bit codes where N is 2048 or less;
** 32 for 1-bit codes; 8 for 3- and 4-bit codes with f32 scales or zeros;
** 32 for 2- and 3-bit codes where N is 4096 or less; 16 for 3- and 4-bit
** codes, for 5-bit codes where N is 4096 or less and for 6-bit ones where
** it is 2049..4096 (groups of 32 there only where K is 4096 or less or N
** 2048 or less); 4 for 7-bit codes and for 5- and 6-bit codes in groups
** of 32 where K is 8192 or more and N is 8192, or K is 12288 or more and
** N is 4096..8192 (the GEMM's first bucket from 5 rows: lo 5); 8 for the
** others.  A plan's rows knob
** (LOWBIT_PLAN here, a tuning table in an op) sets it.  To walk every
** range, start at m = 1 and go on from hi + 1 until hi is 0. */
typedef struct lb_rows {
  char kind[8];
  int lo, hi, bucket;
} lb_rows;
LB_API lb_status lb_rows_at(const lb_recipe *r, int n, int k, int m,
                            lb_rows *out);
/* lb_rows_at for a layer of no given shape, as the rules take a large
** one (N above 4096 and more than 4M weights). */
LB_API lb_status lb_rows_of(const lb_recipe *r, int m, lb_rows *out);

/* What the kernel that m rows use is, without compiling it. */
typedef struct lb_kernel_desc {
  char kind[8];      /* "gemv" or "gemm" */
  char plan[200];    /* the plan in words */
  int threads;       /* per block */
  int smem_hi;       /* dynamic shared memory, bytes: on sm_80, sm_90, sm_100 */
  int smem_lo;       /* the same on 99 KB parts (sm_86, sm_89, sm_120); the
                     ** GEMV's lb_gemv_xs adds its resident x to either */
} lb_kernel_desc;
LB_API lb_status lb_describe(const lb_recipe *r, int n, int k, int m, int sms,
                             lb_kernel_desc *out);
/* lb_kernel_desc's plan is cut at 200 bytes (ending "..."), and its
** threads and smem_hi are the mma.sync plan's; the whole text, with
** sm_90's wgmma plan, its split, threads and shared memory, goes into buf
** (len bytes).  *need (if not NULL): the bytes the text takes, terminator
** included; LB_EARG, and buf empty, where len is less. */
LB_API lb_status lb_describe_plan(const lb_recipe *r, int n, int k, int m,
                                  int sms, char *buf, size_t len,
                                  size_t *need);

/* ---- plans in words --------------------------------------------------
** A plan is comma-separated knobs ("wn=4,wk=2,r=8"), each replacing what
** the planner's rules choose for the kernel m rows use; knobs left out stay
** the rules'.  The GEMM's (m past the GEMV's reach: lb_rows_at;
** gen/lb_gmplan.c holds the same list):
**   wn  warps along channels (1, 2, 4, 8)
**   wk  warps taking alternate code rows (1, 2, 4, 8)
**   wm  warps along rows (1 .. rows of the bucket's tile / 8, powers of 2)
**   mj  16-channel groups a warp (1, 2, 4)
**   r   code rows a sub-stage (1 .. 32, powers of 2; cut to fit; more than
**       a packing tile holds, 8 for 4-bit codes, 4 for 8-bit: whole tiles)
**   st  pipeline stages, at most (2 .. 16)
**   sk  K splits (0: the rule's, 1: none, 2 .. 64; a work space past 8)
**   cl  on sm_90, the splits' sums meet in a cluster (1, the rules' where
**       a block's sums fit its stages; refused where not) or in a work
**       space (0, as on the other parts: lb_op_workspace)
**   bs  blocks an SM on 160 KB parts (1, or 2 where two fit: two stages;
**       refused where sm_90's plan cannot take two)
**   wg  on sm_90 (compiled for sm_90a), the MMA by wgmma (1) or by
**       mma.sync (0; the rules': wgmma with wr=1 and tm=1 from 65 rows, and
**       from 33 but for 7-bit codes and 3-, 5-, 6-bit codes in groups
**       under 128; mma.sync elsewhere);
**       with wg=1, wn counts warps in warpgroups of four (4, 8), wm is 1
**       and mj counts 64-channel groups a warpgroup; other parts run
**       mma.sync whatever it says
**   wr  with wgmma, the packed words go to registers, not through the
**       stages (1; wk 1, r 2 or more, three stages or more; refused with
**       wg=0) or through shared memory (0)
**   tm  with wr=1, the activations are copied by TMA (a tensor map of x
**       made at each launch) into stages released by mbarriers (1; the
**       rules' with wr; refused where sm_90's plan is not wgmma's with
**       wr=1) or by every thread's cp.async and a block barrier (0)
**   bm  the tile's rows in sm_90's wgmma plan with the activations by TMA
**       (16 .. 256, powers of 2; the rules': 256 from 257 rows for codes
**       that never cross words, else the bucket's); other parts keep the
**       bucket's rows, and a plan whose sm_90 tile is not the TMA plan's
**       refuses any other
**   un  with wr=1, how the loop holds its words: 1 rolled (three sets,
**       two sub-stages ahead, moved each sub-stage), 2 one sub-stage
**       ahead in two sets that take turns, unrolled by two (the rules'
**       where codes cross words, 3, 5, 6 and 7 bits), 3 three sets that
**       take turns, unrolled by three; 2 and 3 refused where the words do
**       not go to registers
**   tl  rows past the last whole tile of m's bucket, up to a quarter tile,
**       run as a second launch on the kernel of their own count (1, the
**       rules'; lb_op_tail) or in one more tile (0; every part)
**   sg  scales and zeros that are not resident in shared memory are copied
**       with each sub-stage into its stage (1, the rules' where a sub-stage
**       meets two whole groups or more, in copies of 4 bytes or more;
**       refused where no part's plan can) or loaded by each thread a
**       sub-stage ahead (0)
**   plain=1  no dequantisation: wrong results, for timing only
** The GEMV's (m up to its reach, rows below; gen/lb_gvplan.c):
**   warps  warps a block (1, 2, 4, 8; cut to fit the ring)
**   split  warps sharing a channel group's tiles (1, 2, 4, 8)
**   stages  ring depth (1 .. 8; 1 where a warp has one tile and the
**   blocks outnumber the SMs)    minb, xminb  blocks an SM asked of
**   ptxas for lb_gemv and lb_gemv_xs (1 .. 8)    xres  KB of resident x
**   (0 .. 160)    lazy  words read where used (0, 1)    cluster  blocks
**   of a cluster splitting K on sm_90 (1, 2, 4, 8)    fold  before sm_90,
**   that many of a cluster's blocks run as one block (1 .. 8; divides the
**   cluster)    pf  what the loop reads from global memory, brought into
**   L2 with each tile's words (0: nothing, 1: scales and zeros, 2: x too)
**   sr  a tile's scales and zeros copied into the ring with its words
**   (1, where the rules find them not resident, many a tile and room for
**   them; 0: read from global memory)
**   rsplit  the split's warps take a part of every tile's code rows
**   instead of every split-th tile (0, 1; lazy words only, no cluster;
**   the rules' where K is one 1024-code tile and the blocks are few)
**   ph  copies a warp's only tile comes in, its math starting on the
**   first (1, 2, 4; lazy words where a warp has one tile of K at most;
**   the rules' 4 for 7-bit codes there)
**   rows  the GEMV's reach: it takes 1..rows rows and the GEMM the rest
**   (1, 2, 4, 8, 16, 32; below 8 the GEMM's first bucket takes the rows
**   past it; the rules' by width and shape, lb_rows_at; bf16 8-bit
**   codes, whose GEMV dequantises in f32, to 16 only as slices; 32 not
**   for them nor for 5- to 7-bit codes).  An
**   op reads it from the plan of 1..8 rows; lowbit tune times 8 (or the
**   rules' reach below 8), 16 and 32 and keeps the fastest for 9..32 rows
**   in the table's GEMV plan.
**   slices  9..16 (17..32) rows as two (four) rows of the one-fragment
**   kernel's blocks, 8 rows of x each (1), or one block taking two (four)
**   fragments of x (0); the rules' 1 where the sliced grid fits the SMs
**   once, twice for 1-, 3- and 5-bit codes (not where 3- and 5-bit codes'
**   fragments fill the SMs in clusters: long layers, N <= 2048 on 132
**   SMs); no effect on 1..8 rows.
**   hcl  2..8 rows in a second one-fragment kernel, in clusters of hcl
**   blocks on sm_90 (0: none, 2, 4, 8; none where no larger than the
**   plan's cluster or than K's tiles allow); the rules' 4 for 7-bit codes
**   at K = 8192 in blocks of 2 warps, three blocks an SM or more.  The
**   op's plan for 2..8 rows reads in 1 row's words.
** A malformed plan, an unknown knob or a value out of range is LB_EARG;
** every plan that generates computes the same product (plans change
** speed only).  LOWBIT_GEMM and LOWBIT_PLAN apply one plan to every GEMM
** bucket and to the GEMV, for experiments; the tuning table (below) holds
** one per kernel, shape and device.  A plan in words with every GEMV knob
** at its widest is 119 characters (with rows, slices and hcl): LB_PLAN_LEN
** leaves room to grow (it was 96 before 2026-11-28, one short of what it
** was then). */
#define LB_PLAN_LEN 128
/* lb_generate_m's source with plan's knobs (the GEMV's for the rows it takes). */
LB_API lb_status lb_generate_plan(const lb_recipe *r, int n, int k, int m,
                                  int sms, const char *plan, char **src);
/* The plans `lowbit tune` tries for m's bucket on sm_<arch> with `sms`
** SMs: base (NULL: the rules' plan) first, then those one knob away from
** it that fit and differ, every knob named; at most max. */
LB_API lb_status lb_plan_candidates(const lb_recipe *r, int n, int k, int m,
                                    int sms, int arch, const char *base,
                                    char (*out)[LB_PLAN_LEN], int max,
                                    int *count);

/* ---- runtime ------------------------------------------------------------ */

typedef struct lb_ctx lb_ctx;   /* one device, its primary context, caches */
typedef struct lb_op lb_op;     /* (recipe, N, K), compiled and ready */

LB_API lb_status lb_ctx_create(int device, lb_ctx **out);
LB_API void lb_ctx_destroy(lb_ctx *c);
/* lb_pack on the GPU of context c, for codes already in device memory:
** codes and packed are device pointers (n x k bytes; lb_sizes_of's packed
** bytes, 4-byte aligned), the work goes on `stream` (a CUstream or
** cudaStream_t; NULL: the legacy default stream), and the call waits for
** that stream.  The result is bit-identical to lb_pack's.  A code that
** does not fit the recipe's bits gives LB_EARG naming the first such
** [row][column] (packed is then incomplete).  Not for stream capture. */
LB_API lb_status lb_pack_device(lb_ctx *c, const lb_recipe *r, int n, int k,
                                const void *codes, void *packed,
                                void *stream);

/* Where a compile came from, and what ptxas reported. */
typedef struct lb_compile_info {
  double seconds;     /* time spent getting the module (NVRTC or cache) */
  int cache;          /* 0 compiled, 1 memory cache, 2 disk cache */
  int arch;           /* e.g. 90 */
  int ptx;            /* 1 when loaded as PTX (NVRTC did not know the arch) */
  int regs;           /* registers per thread, the larger of the two kernels */
  int spill;          /* spill-store bytes, the larger of the two (0 is the goal) */
} lb_compile_info;

LB_API lb_status lb_op_create(lb_ctx *c, const lb_recipe *r, int n, int k,
                              lb_op **out);
LB_API void lb_op_destroy(lb_op *op);
LB_API lb_status lb_op_info(const lb_op *op, lb_compile_info *info);

/* Device pointers (cudaMalloc, PyTorch, cuMemAlloc).  packed, scales and
** zeros: 16-byte aligned (blocks copy them with 16-byte cp.async); bias:
** aligned to its element size; bias and zeros may be NULL when the recipe
** allows it. */
typedef struct lb_weights {
  const void *packed;
  const void *scales;
  const void *zeros;
  const void *bias;
} lb_weights;

/* y[m][n] = x[m][k] * W^T (+ bias); x is [m][K] and 16-byte aligned, y is
** [m][N].  m = 1..LB_MAX_ROWS: up to 8 rows run the GEMV (up to 4 where
** its reach is 4), up to its reach (lb_rows_at: 16 or 32 by width and
** shape) its two- and four-fragment kernels; more rows the GEMM of m's
** bucket (9..16, or from the reach + 1 where it is below 8, 17..32,
** 33..64, 65..160, 161..256, 257..384, 385+), with the same
** packed weights.  Where m ends a few rows past a whole number of the
** bucket's tiles (at most a quarter tile), those rows run as a second
** launch on the kernel of their own count (lb_op_tail).  stream is a
** CUstream / cudaStream_t (NULL: default).
** Enqueues only: no allocation, no synchronisation; graph-capturable.
** The one exception is the first run of a GEMM bucket or of the GEMV's
** two- or four-fragment kernel, which compiles it (NVRTC, or the disk
** cache; lb_op_create compiles the one-fragment GEMV): call lb_op_prepare
** first where a launch must not wait (serving, CUDA graph capture). */
LB_API lb_status lb_op_run(const lb_op *op, int m, const void *x,
                           const lb_weights *w, void *y, void *stream);
/* Split-K.  Where the tiles of m rows leave most SMs idle (narrow layers,
** small M), the GEMM splits K across blocks and adds their f32 sums in a
** fixed order (the result does not depend on timing).  On sm_90 the blocks
** of a split form a cluster and meet in shared memory: nothing to pass.
** Elsewhere (or with the plan knob cl=0) they leave their sums in a work
** space, cuBLASLt-style, and a second kernel adds them up.  bytes: the work
** space lb_op_run_ws can use for m rows (0: none needed).  Pass that much
** 16-byte aligned device memory, or NULL for the plan that needs none (no
** split there); streams running at once need a work space each. */
LB_API lb_status lb_op_workspace(const lb_op *op, int m, size_t *bytes);
/* lb_op_workspace without a GPU: the bytes m rows need on an op that
** lb_op_create would make for recipe r, n x k, on a device of sms SMs of
** sm_<arch>, with no tuning table (the rules' plans, or LOWBIT_GEMM's),
** for setting memory aside before any op exists.  An op's own plans
** (its tuning table, lb_op_set_plan) may need another amount:
** lb_op_workspace says what to pass it.  The shape's errors are
** lb_op_create's. */
LB_API lb_status lb_workspace_for(const lb_recipe *r, int n, int k, int m,
                                  int sms, int arch, size_t *bytes);
LB_API lb_status lb_op_run_ws(const lb_op *op, int m, const void *x,
                              const lb_weights *w, void *y, void *ws,
                              size_t bytes, void *stream);
/* How the kernel of m rows splits K: *splits ways (1: not at all), and
** *cluster 1 where the splits meet in a cluster (no work space), 0 where
** they take lb_op_workspace's (none given: no split). */
LB_API lb_status lb_op_splits(const lb_op *op, int m, int *splits,
                              int *cluster);
/* The rows at the end of m that lb_op_run launches apart, after the rest
** (0: one launch): the kernel of m - *rows rows runs first, then the one
** of *rows rows.  lb_op_plan, lb_op_info_m and lb_op_splits describe the
** first; lb_op_prepare compiles both; lb_op_workspace covers both (they
** run one after the other).  The plan knob tl=0 (LOWBIT_GEMM) turns it
** off. */
LB_API lb_status lb_op_tail(const lb_op *op, int m, int *rows);
/* Overlap with the kernel before (programmatic dependent launch, sm_90 and
** newer).  With on != 0 the op's kernels may start while the kernel
** launched before them on the same stream still runs: they fetch packed
** weights, scales and zeros at once, and read x, read bias and write y
** (and the work space) only after that kernel has finished.  This hides
** much of each kernel's start (launch, first tiles) when layers run back
** to back.  The promise the caller makes: w->packed, w->scales and
** w->zeros are complete before the stream's run of overlapping kernels
** begins, since a kernel of it may read them while earlier ones still
** run (write or convert the weights, synchronize, then run: as in
** inference).  Off by default; LB_EUNSUP, op unchanged, before sm_90 or
** with a driver without cuLaunchKernelEx.  Turning it on or off makes the
** GEMV's kernels again (an early GEMV reads x by plain loads, not the
** read-only path), compiled or found in the cache as lb_op_create's; if
** that fails, the op is unchanged.  Call it before the runs that use it,
** not during them, and not while another thread runs the op. */
LB_API lb_status lb_op_overlap(lb_op *op, int on);
/* Where the plan of a kernel came from: the planner's rules, this
** device's tuning table, the environment (LOWBIT_GEMM, LOWBIT_PLAN), or
** lb_op_set_plan. */
typedef enum lb_plan_from {
  LB_PLAN_RULES, LB_PLAN_TABLE, LB_PLAN_ENV, LB_PLAN_SET
} lb_plan_from;
/* The plan of the kernel m rows use (every knob named) and where it came
** from (rows the GEMV takes past the rules' reach: where its rows knob
** came from). */
LB_API lb_status lb_op_plan(const lb_op *op, int m, char plan[LB_PLAN_LEN],
                            lb_plan_from *from);
/* From now on the kernel m rows use takes plan (NULL: the table's or the
** rules' again): a GEMM bucket's is compiled on its next run or
** lb_op_prepare, the GEMV's now (and kept as it was if that fails).  For
** tuning and experiments: not while another thread runs the op. */
LB_API lb_status lb_op_set_plan(lb_op *op, int m, const char *plan);

/* ---- the tuning table ----------------------------------------------------
** `lowbit tune` times the candidate plans of the GEMV and of each GEMM
** bucket and keeps the fastest, per device, in a text file in the cache directory (lb_cache.h):
** tune-<16 hex digits>.txt, the digits a hash of the device key (name, SM
** count, arch, driver and NVRTC versions) that its first line spells out.
** Each entry is keyed by a hash of the source the rules alone make for
** (recipe, N, K, kernel, SMs), so a change to any of them, or to lowbit's
** generator, leaves it unused.  lb_op_create reads the table (LOWBIT_TUNE=0:
** not); LOWBIT_GEMM and LOWBIT_PLAN, where set, win over it.  A table that does not parse
** fails lb_op_create with LB_EIO naming the file and line: remove the
** file, or set LOWBIT_TUNE=0. */
LB_API lb_status lb_tune_path(const lb_ctx *c, char *buf, size_t len);
/* Records plan (NULL or "": the rules' were fastest) for the kernel m rows
** of (r, n, k) use on c's device, with its time and the rules' plan's time (us),
** replacing an entry of the same key. */
LB_API lb_status lb_tune_save(lb_ctx *c, const lb_recipe *r, int n, int k,
                              int m, const char *plan, double us,
                              double us_rules);
/* A tuning table found in the cache directory: every file named
** tune-*.txt, read as lb_op_create reads it, whatever its device. */
typedef struct lb_tune_table {
  char file[64];      /* its name in the cache directory */
  char device[256];   /* the device key of its first line ("?" unread) */
  int plans;          /* its entries */
  char why[512];      /* "" where it reads; else what is wrong with it */
} lb_tune_table;
/* The tables (*out freed with lb_free; none when there are none). */
LB_API lb_status lb_tune_list(lb_tune_table **out, int *count);

/* Compiles the kernels that rows m_lo..m_hi use: the GEMV's two- and
** four-fragment kernels and the GEMM's buckets. */
LB_API lb_status lb_op_prepare(lb_op *op, int m_lo, int m_hi);
/* lb_op_info for the kernel that m rows use (compiled: LB_EARG if not). */
LB_API lb_status lb_op_info_m(const lb_op *op, int m, lb_compile_info *info);

/* ---- compile without a device (CI, `lowbit compile`) ---------------------
** Compiles src for sm_<arch>; reports ptxas' registers and spills and
** NVRTC's warnings count; uses the disk cache like a run would. */
typedef struct lb_offline {
  double seconds;
  int cache;           /* 0 compiled, 2 disk cache */
  int warnings;        /* warning lines in the NVRTC log */
  int ptx;             /* 1: NVRTC does not know the arch; binary is PTX */
  size_t binary;       /* bytes of CUBIN (or PTX) */
} lb_offline;

LB_API lb_status lb_compile_offline(const char *src, int arch,
                                    lb_offline *info, char **log);
/* What ptxas reported for each entry point in a compile log (the log of
** lb_compile_offline, or an lb_compile_info's): its name, registers a
** thread and bytes spilled (-1 where the log does not say), in the log's
** order; up to max of them into out, *count of them (0 for a log that
** names none: a PTX build, a cache hit's empty log, NULL). */
typedef struct lb_kernel_use {
  char name[64];
  int regs, spill;
} lb_kernel_use;
LB_API lb_status lb_log_kernels(const char *log, lb_kernel_use *out, int max,
                                int *count);

/* The disk cache as this process sees it.  lb_cache_query probes it: it
** creates the directory if needed and creates and removes a file there;
** a write that failed since (or before) is reported too.  An unusable
** cache never fails a compile, so this is the only place that says why
** every kernel is compiled again. */
typedef struct lb_cache_state {
  char dir[4096];   /* the directory ("" when the cache is off) */
  int enabled;      /* 0: LOWBIT_CACHE=0 or no directory could be named */
  int writable;     /* 1 when the probe and the last write succeeded */
  char why[512];    /* why it is off or not writable ("" when fine): the
                    ** system's reason and the path */
} lb_cache_state;

LB_API lb_status lb_cache_query(lb_cache_state *out);

/* One entry of the disk cache: what made it, read from the key it holds
** (the generated source's first lines and the options; "?" and 0s where
** the file does not say). */
typedef struct lb_cache_entry {
  char file[32];        /* the entry's name in the cache directory */
  uint64_t bytes;
  long long mtime;      /* last use, seconds since the epoch */
  char recipe[64];
  int n, k, arch;       /* shape, and sm_<arch> it was compiled for */
  int ptx;              /* 1: PTX for the driver to finish */
  char kernel[24];      /* its kind and rows: "gemv 1..8", "gemm 33..64" */
  int sms;              /* the SM count it was planned for */
  char plan[LB_PLAN_LEN + 24];   /* "rules", or knobs and who set them:
                                 ** "wn=2 (set)", "... (table)" */
  char odd[24];         /* "" for an entry; else what a file named like one
                        ** is ("a FIFO", "a directory"...): not read, and
                        ** the fields above stay unknown */
} lb_cache_entry;

/* The entries, and after them the files named like one that are not
** regular files (odd; *out freed with lb_free; none when nothing is
** cached). */
LB_API lb_status lb_cache_list(lb_cache_entry **out, int *count);
/* Removes every entry and temporary file the cache wrote (other files in
** the directory stay, and so does a directory named like an entry, which
** lb_cache_list reports); *removed may be NULL. */
LB_API lb_status lb_cache_clear(int *removed);

/* lowbit's version, "MAJOR.MINOR.PATCH". */
LB_API const char *lb_version(void);

#ifdef __cplusplus
}
#endif
#endif
