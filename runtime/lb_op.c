/*
** lb_op.c: contexts, ops and launches.
**
** Creating an op resolves everything a launch needs (source, module,
** functions, grid, shared memory), so lb_op_run only checks its arguments
** and calls cuLaunchKernel: no hashing, allocation or synchronisation.
*/
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_ctx.h"
#include "lb_cuda.h"
#include "lb_err.h"
#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_hash.h"
#include "lb_nvrtc.h"
#include "lb_recipe.h"
#include "lb_tune.h"

/* Modules loaded in this context, by hash of their source. */
typedef struct lb_mod {
  uint64_t key;
  CUmodule mod;
  int ptx;       /* loaded from PTX: the driver finished the compile */
  char *log;
  struct lb_mod *next;
} lb_mod;

struct lb_ctx {
  const lb_cu *cu;
  CUdevice dev;
  CUcontext ctx;
  int arch, sms;
  int smsm, smres, smopt; /* shared memory: an SM's, a block's reserve, most */
  char devkey[192];       /* lb_ctx_devkey */
  pthread_mutex_t lock;   /* guards mods */
  lb_mod *mods;
};

/* A GEMM bucket: its source is made with the op, its kernel compiled on
** first use (or by lb_op_prepare).  fn is published with a release store
** once everything else is set, so launches read it without a lock. */
typedef struct lb_bucket {
  char *src;              /* NULL: this bucket cannot be planned (why) */
  lb_status why_st;
  char why[256];
  lb_gemm_cfg cfg;        /* the plan for this device's part */
  lb_plan_from from;      /* where its knobs came from */
  lb_compile_info info;
  CUfunction sum;         /* split-K's second kernel; set before fn */
  CUfunction fn;
} lb_bucket;

/* The op's GEMV kernels: one fragment of x, two, four (indices 0, 1, 2:
** lb_gemv_frags(m) / 2), and GV_HI, the one-fragment kernel of 2..8 rows
** where the one-fragment plan gives them a cluster of their own (hcl). */
enum { GV_HI = 3, GV_N };

/* A GEMV kernel of the op: one fragment of x (up to LB_MAX_M rows),
** compiled with the op; two (up to 16) or four (up to 32), where the
** reach takes them, and the one-fragment kernel of 2..8 rows where the
** plan gives them one (its hcl), compiled on first use (gemv_fn) or by
** lb_op_prepare.
** fn is published with a release store once everything else is set, so
** launches read it without a lock (NULL: not compiled). */
typedef struct lb_gv {
  CUfunction fn, fn_xs;   /* x from global memory; x in shared (or NULL) */
  lb_gemv_cfg cfg;
  unsigned blocks;        /* grid: channel blocks times the cluster width */
  int threads, smem;      /* the block this part runs (lb_gemv_block) */
  int spread;             /* shared memory of an early launch (0: smem) */
  lb_compile_info info;
  lb_plan_from from;      /* where its knobs came from */
} lb_gv;
/* Where the fields past fn start: gemv_fn writes them, then fn, with no
** plain store to fn (launches read it without the lock).  Everything past
** fn's own bytes, so that a field put anywhere after it is copied too. */
#define LB_GV_REST sizeof(CUfunction)
_Static_assert(offsetof(lb_gv, fn) == 0, "gemv_fn publishes fn, the first "
               "field, after the rest");

struct lb_op {
  lb_ctx *c;
  const lb_cu *cu;
  lb_recipe rec;          /* a copy: lb_op_set_plan generates again */
  int n, k;
  int has_zeros, has_bias;
  int out_size;
  int rows;               /* the GEMV's reach, its plan's rows: 8, 16, 32 */
  lb_gv gv[GV_N];         /* the GEMV: one fragment of x, two, four, and
                          ** one for 2..8 rows (fn NULL where not compiled
                          ** yet, or not the op's) */
  pthread_mutex_t lock;   /* guards compiling a bucket or a GEMV */
  lb_bucket gemm[LB_GEMM_BUCKETS];
  int overlap;            /* lb_op_overlap: launch with PDL */
};

/* The GEMV kernels by fragments of x (0: one, 1: two, 2: four; GV_HI),
** the rows each is made for, and how many the reach `rows` takes. */
static int gv_index(int m) { return lb_gemv_frags(m) / 2; }
static const int gv_rows[GV_N] = {1, 2 * LB_MAX_M, LB_GEMV_MOST, LB_GEMV_HI};
static int gv_count(int rows) { return gv_index(rows) + 1; }

/* The GEMV kernel m rows run (an index of op->gv); before sm_90 (no
** clusters: 2..8 rows' kernel would walk K as 1 row's does) not GV_HI. */
static int gv_at(const lb_op *op, int m) {
  return m >= LB_GEMV_HI && m <= LB_MAX_M && op->gv[0].cfg.hcl > 0 &&
                 op->c->arch >= 90
             ? GV_HI : gv_index(m);
}

/* The GEMV that m rows run, or NULL where the GEMM's buckets take them. */
static const lb_gv *gemv_of(const lb_op *op, int m) {
  return m > op->rows ? NULL : &op->gv[gv_at(op, m)];
}

/* The plan 2..8 rows' kernel is made from: the one-fragment kernel's
** words (its hcl) into plan, or NULL where the rules (or LOWBIT_PLAN)
** made that one. */
static const char *hi_words(const lb_op *op, char plan[LB_PLAN_LEN]) {
  const lb_gv *gv = &op->gv[0];
  if (gv->from == LB_PLAN_RULES || gv->from == LB_PLAN_ENV) return NULL;
  lb_gemv_plan_text(&gv->cfg, plan, LB_PLAN_LEN);
  return plan;
}

/* The plan the op's GEMV v > 0 is made from, into words, and *from where
** it came: 2..8 rows' kernel from the one-fragment kernel's words
** (hi_words); NULL otherwise, LOWBIT_PLAN's or the rules' then. */
static const char *made_from(const lb_op *op, int v, char words[LB_PLAN_LEN],
                             lb_plan_from *from) {
  const char *plan = v == GV_HI ? hi_words(op, words) : NULL;
  *from = plan ? op->gv[0].from : LB_PLAN_RULES;
  return plan;
}

/* Bucket b's plan where it has a source (lb_gemm_cfg_fn). */
static const lb_gemm_cfg *bucket_cfg(const void *ctx, int b) {
  const lb_op *op = ctx;
  return op->gemm[b].src != NULL ? &op->gemm[b].cfg : NULL;
}

/* The rows of m the first launch takes (lb_gemm_lead; lb_op_run launches
** the tail second). */
static int lead_rows(const lb_op *op, int m) {
  return lb_gemm_lead(bucket_cfg, op, op->rows, m);
}

/* Makes the context current on this thread for a scope; restores after. */
lb_status lb_ctx_enter(lb_ctx *c, lb_scope *s, const char *where) {
  CUcontext cur = NULL;
  CUresult rc;
  s->cu = c->cu;
  s->pushed = 0;
  if ((rc = c->cu->CtxGetCurrent(&cur)) != CUDA_SUCCESS)
    return lb_cufail(rc, where, "cuCtxGetCurrent");
  if (cur == c->ctx) return LB_OK;
  if ((rc = c->cu->CtxPushCurrent(c->ctx)) != CUDA_SUCCESS)
    return lb_cufail(rc, where, "cuCtxPushCurrent");
  s->pushed = 1;
  return LB_OK;
}

void lb_ctx_leave(lb_scope *s) {
  CUcontext dummy;
  if (s->pushed) s->cu->CtxPopCurrent(&dummy);
}

lb_status lb_ctx_create(int device, lb_ctx **out) {
  const lb_cu *cu;
  lb_ctx *c;
  CUresult rc;
  int count = 0, major = 0, minor = 0;
  lb_status st;
  if (out == NULL) return lb_fail(LB_EARG, "lb_ctx_create: out is NULL");
  *out = NULL;
  if ((st = lb_cuda(&cu)) != LB_OK) return st;
  if ((rc = cu->DeviceGetCount(&count)) != CUDA_SUCCESS)
    return lb_cufail(rc, "lb_ctx_create", "cuDeviceGetCount");
  if (device < 0 || device >= count)
    return lb_fail(count ? LB_EARG : LB_ENODEV, "lb_ctx_create: device %d "
                   "does not exist (%d device(s))", device, count);
  if ((c = calloc(1, sizeof *c)) == NULL)
    return lb_fail(LB_EMEM, "lb_ctx_create: no memory");
  c->cu = cu;
  if ((rc = cu->DeviceGet(&c->dev, device)) != CUDA_SUCCESS ||
      (rc = cu->DeviceGetAttribute(
           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev)) !=
          CUDA_SUCCESS ||
      (rc = cu->DeviceGetAttribute(
           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev)) !=
          CUDA_SUCCESS ||
      (rc = cu->DeviceGetAttribute(
           &c->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev)) !=
          CUDA_SUCCESS) {
    free(c);
    return lb_cufail(rc, "lb_ctx_create", "cuDeviceGetAttribute");
  }
  if (cu->DeviceGetAttribute(&c->smsm,
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, c->dev) !=
          CUDA_SUCCESS ||
      cu->DeviceGetAttribute(&c->smres,
          CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, c->dev) !=
          CUDA_SUCCESS ||
      cu->DeviceGetAttribute(&c->smopt,
          CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->dev) !=
          CUDA_SUCCESS)
    c->smsm = c->smres = c->smopt = 0;
  if ((rc = cu->DevicePrimaryCtxRetain(&c->ctx, c->dev)) != CUDA_SUCCESS) {
    free(c);
    return lb_cufail(rc, "lb_ctx_create", "cuDevicePrimaryCtxRetain");
  }
  c->arch = major * 10 + minor;
  if (c->arch < 80) {
    cu->DevicePrimaryCtxRelease(c->dev);
    free(c);
    return lb_fail(LB_EUNSUP, "lb_ctx_create: device %d is sm_%d; lowbit "
                   "needs sm_80 or newer", device, major * 10 + minor);
  }
  {
    char name[128] = "?";
    int drv = 0, nv_major = 0, nv_minor = 0;
    cu->DeviceGetName(name, (int)sizeof name, c->dev);
    name[sizeof name - 1] = '\0';
    cu->DriverGetVersion(&drv);
    lb_nvrtc_version(&nv_major, &nv_minor);
    snprintf(c->devkey, sizeof c->devkey, "%s, %d SMs, sm_%d, driver %d, "
             "nvrtc %d.%d", name, c->sms, c->arch, drv, nv_major, nv_minor);
  }
  pthread_mutex_init(&c->lock, NULL);
  *out = c;
  return LB_OK;
}

void lb_ctx_destroy(lb_ctx *c) {
  lb_scope s;
  lb_mod *m, *next;
  if (c == NULL) return;
  if (lb_ctx_enter(c, &s, "lb_ctx_destroy") == LB_OK) {
    for (m = c->mods; m; m = next) {
      next = m->next;
      c->cu->ModuleUnload(m->mod);
      free(m->log);
      free(m);
    }
    lb_ctx_leave(&s);
  }
  c->cu->DevicePrimaryCtxRelease(c->dev);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* The module for src: memory cache, else disk cache or NVRTC. */
static lb_status get_module(lb_ctx *c, const char *src, lb_mod **out,
                            lb_compile_info *info, const char *where) {
  uint64_t key = lb_hash_str(LB_HASH_INIT, src);
  lb_binary bin;
  lb_mod *m;
  CUresult rc;
  int hit;
  double t0 = lb_now();
  lb_status st;
  pthread_mutex_lock(&c->lock);
  for (m = c->mods; m; m = m->next)
    if (m->key == key) break;
  if (m) {
    pthread_mutex_unlock(&c->lock);
    info->cache = 1;
    info->ptx = m->ptx;
    info->seconds = lb_now() - t0;
    *out = m;
    return LB_OK;
  }
  st = lb_obtain(src, c->arch, &bin, &hit, NULL);
  if (st != LB_OK) {
    pthread_mutex_unlock(&c->lock);
    return st;
  }
  m = calloc(1, sizeof *m);
  if (m == NULL) {
    lb_binary_free(&bin);
    pthread_mutex_unlock(&c->lock);
    return lb_fail(LB_EMEM, "%s: no memory", where);
  }
  if ((rc = c->cu->ModuleLoadData(&m->mod, bin.data)) != CUDA_SUCCESS) {
    free(m);
    lb_binary_free(&bin);
    pthread_mutex_unlock(&c->lock);
    return lb_cufail(rc, where, "cuModuleLoadData");
  }
  m->key = key;
  m->log = bin.log;
  bin.log = NULL;
  info->ptx = m->ptx = bin.ptx;
  lb_binary_free(&bin);
  m->next = c->mods;
  c->mods = m;
  pthread_mutex_unlock(&c->lock);
  info->cache = hit ? 2 : 0;
  info->seconds = lb_now() - t0;
  *out = m;
  return LB_OK;
}

/* Kernel `name` of the module, allowed smem bytes of dynamic shared memory
** (the rings live there, beyond the default 48 KB); regs and spill grow
** to its registers and spill-store bytes.  CUDA_ERROR_INVALID_VALUE from
** the shared-memory request means the part has less of it. */
static CUresult get_kernel(const lb_ctx *c, const lb_mod *m, const char *name,
                           int smem, CUfunction *fn, int *regs, int *spill) {
  CUresult rc;
  int r = -1, s = -1, logregs, local = 0;
  if ((rc = c->cu->ModuleGetFunction(fn, m->mod, name)) != CUDA_SUCCESS ||
      (rc = c->cu->FuncSetAttribute(
           *fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)) !=
          CUDA_SUCCESS ||
      (rc = c->cu->FuncGetAttribute(&r, CU_FUNC_ATTRIBUTE_NUM_REGS, *fn)) !=
          CUDA_SUCCESS ||
      (rc = c->cu->FuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                    *fn)) != CUDA_SUCCESS)
    return rc;
  lb_log_resources(m->log, name, &logregs, &s);
  if (s < 0) s = local;
  if (r > *regs) *regs = r;
  if (s > *spill) *spill = s;
  return CUDA_SUCCESS;
}

const lb_cu *lb_ctx_cu(const lb_ctx *c) { return c->cu; }
const char *lb_ctx_devkey(const lb_ctx *c) { return c->devkey; }
int lb_ctx_sms(const lb_ctx *c) { return c->sms; }

lb_status lb_ctx_kernel(lb_ctx *c, const char *src, const char *name,
                        CUfunction *fn, const char *where) {
  lb_compile_info info;
  lb_mod *m = NULL;
  CUresult rc;
  lb_status st;
  memset(&info, 0, sizeof info);
  if ((st = get_module(c, src, &m, &info, where)) != LB_OK) return st;
  if ((rc = c->cu->ModuleGetFunction(fn, m->mod, name)) != CUDA_SUCCESS)
    return lb_cufail(rc, where, "cuModuleGetFunction");
  return LB_OK;
}

/* The grid: the source asks for clusters only where it was compiled for
** sm_90 or newer (LB_CLUSTER), so the binary says how wide they are.  A
** width other than the plan's would launch the wrong blocks: refused. */
static lb_status cluster_grid(const lb_ctx *c, CUfunction fn,
                              const lb_gemv_cfg *cfg, unsigned *blocks,
                              const char *where) {
  int width = 0;
  CUresult rc = c->cu->FuncGetAttribute(
      &width, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn);
  if (rc != CUDA_SUCCESS) {
    if (cfg->cluster > 1 && c->arch >= 90)
      return lb_cufail(rc, where, "cuFuncGetAttribute (cluster)");
    width = 0;
  }
  if (width < 1) width = 1;
  if (width != 1 && width != cfg->cluster)
    return lb_fail(LB_ECUDA, "%s: the kernel's cluster width is %d, the "
                   "plan's %d", where, width, cfg->cluster);
  *blocks = (unsigned)(cfg->grid * width);
  return LB_OK;
}

/* The blocks an SM holds where a grid of `blocks` is spread evenly. */
static int even_of(const lb_ctx *c, unsigned blocks) {
  return (int)((blocks + (unsigned)c->sms - 1) / (unsigned)c->sms);
}

/* Shared memory for a GEMV launched early (lb_op_overlap): enough that no
** more of its blocks share an SM than an even spread would put there
** (0: the plan's own is enough, or the part cannot give more).  A plain
** launch finds every SM free and deals its blocks out evenly; an early one
** places them as the kernel before frees SMs, as many to an SM as fit, so
** the SMs freed first took all of a short grid and the rest none.  H100,
** bench/model.py, a Llama-3-8B step's linear layers with the overlap, µs
** at M = 1 / 8: a16w2_g64 1437 / 1740 -> 1205 / 1487 (blocks of 4 warps,
** up to four an SM), a16w1_g64 1337 / 1365 -> 1174 / 1364, a16w8_channel
** 3099 / 2703 -> 2703 / 2700; a16w4_g128 1507 / 1709 -> 1504 / 1695 (its
** registers allow two blocks an SM already).  fn and fn_xs may take that
** much (fn_xs at least xs, its own most). */
static int spread_of(const lb_ctx *c, CUfunction fn, CUfunction fn_xs,
                     unsigned blocks, int smem, int xs) {
  const int even = even_of(c, blocks);
  int per;
  if (c->arch < 90 || c->smsm <= 0) return 0;   /* (no overlap before sm_90) */
  /* even + 1 blocks, each with the block's reservation, overflow the SM */
  per = (c->smsm / (even + 1) - c->smres + 16 + 15) / 16 * 16;
  if (per <= smem || per > c->smopt) return 0;
  if (c->cu->FuncSetAttribute(
          fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, per) !=
          CUDA_SUCCESS ||
      (fn_xs != NULL &&
       c->cu->FuncSetAttribute(
           fn_xs, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
           per > xs ? per : xs) != CUDA_SUCCESS))
    return 0;
  return per;
}

/* The carveout an early one-fragment lb_gemv (x from global memory) asks
** for: the least of the SM's shared-memory capacities that holds an even
** spread of its blocks (each `per` bytes with its reservation), so that the
** rest of the SM's 256 KB is L1 for x's rows, which every warp reads there.
** Left to the driver, L1 kept too little of x where it is not resident (5..8
** rows at most shapes).  H200, bench/model.py overlapped, a16w4_g128, µs a
** step, two processes a side: M = 8 1538.6-1572.2 -> 1461.9-1512.9, M = 4
** 1373.3-1389.0 -> 1358.7-1380.0, M = 1, 2, 16 and 32 within the spread.
** Not on the two- and four-fragment kernels (M = 16 8% slower), nor on
** lb_gemv_xs (x resident: M = 1, 2 and 16 up to 7.5% slower, set on both),
** nor on plain launches (the layers alone -2.4 to +4.8%; 4096 x 28672,
** M = 8: 24.9 -> 26.1 µs).  The driver takes the percentage as a hint and rounds
** it to one of the SM's capacities, not always the one above: ask for the
** capacity itself (a percentage rounded down cost up to 30%).  A hint the
** driver refuses changes no result: it is then left out. */
static void carve_of(const lb_ctx *c, CUfunction fn, unsigned blocks,
                     int per) {
  /* sm_90's capacities in KB (the CUDA programming guide's table) */
  static const int cap_kb[] = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  const long long even = even_of(c, blocks);
  long long cap = c->smsm;
  size_t i;
  if (c->arch != 90 || c->smsm <= 0) return;
  for (i = 0; i < sizeof cap_kb / sizeof cap_kb[0]; i++)
    if ((long long)cap_kb[i] * 1024 >= even * (per + c->smres)) {
      cap = (long long)cap_kb[i] * 1024;
      break;
    }
  if (cap > c->smsm) cap = c->smsm;
  (void)c->cu->FuncSetAttribute(
      fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
      (int)((100 * cap + c->smsm - 1) / c->smsm));
}

/* Where a plan came from, in words, for messages and the source. */
static void plan_said(lb_plan_from from, const char *env, const char *table,
                      char *said, size_t len) {
  if (from == LB_PLAN_TABLE)
    snprintf(said, len, "the tuning table (%s)", table ? table : "");
  else
    snprintf(said, len, "%s",
             from == LB_PLAN_ENV ? env
             : from == LB_PLAN_SET ? "lb_op_set_plan" : "the rules");
}

/* plan, where given (from `from`); else LOWBIT_PLAN's, else the rules'
** (NULL), *from saying which: the plan a GEMV kernel of the op takes. */
static const char *plan_or_env(const char *plan, lb_plan_from *from) {
  if (plan == NULL) {
    plan = getenv("LOWBIT_PLAN");
    *from = plan ? LB_PLAN_ENV : LB_PLAN_RULES;
  }
  return plan;
}

/* The op's GEMV with v + 1 fragments from plan (from `from`:
** LB_PLAN_SET, or the table named `table`), else LOWBIT_PLAN's, else the
** rules': generated (for launches with PDL where `early`), compiled, its
** kernels and grid found, into *out, which changes only when all of it
** worked. */
static lb_status make_gemv(const lb_op *op, int v, int early,
                           const char *plan, lb_plan_from from,
                           const char *table, const char *where,
                           lb_gv *out) {
  lb_ctx *c = op->c;
  lb_compile_info info;
  lb_gemv_cfg cfg;
  lb_mod *mod = NULL;
  CUfunction fn = NULL, fn_xs = NULL;
  unsigned blocks = 0;
  int threads, smem, spread = 0, stat = 0;
  char said[192], *src = NULL;
  lb_scope s;
  lb_status st;
  plan = plan_or_env(plan, &from);
  plan_said(from, "LOWBIT_PLAN", table, said, sizeof said);
  if ((st = lb_gen_gemv(&op->rec, op->n, op->k, gv_rows[v], c->sms,
                        plan, said, early, &cfg, &src)) != LB_OK)
    return st;
  memset(&info, 0, sizeof info);
  info.arch = c->arch;
  info.regs = info.spill = -1;
  if ((st = lb_ctx_enter(c, &s, where)) != LB_OK) {
    free(src);
    return st;
  }
  lb_gemv_block(&cfg, c->arch, &threads, &smem);
  st = get_module(c, src, &mod, &info, where);
  if (st == LB_OK) {
    /* info: the larger of the two kernels' registers and spills */
    CUresult rc = get_kernel(c, mod, LB_KERNEL, smem, &fn, &info.regs,
                             &info.spill);
    if (rc != CUDA_SUCCESS)
      st = lb_cufail(rc, where, LB_KERNEL);
    else if ((rc = c->cu->FuncGetAttribute(
                  &stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn)) !=
             CUDA_SUCCESS)
      st = lb_cufail(rc, where, "cuFuncGetAttribute (shared memory)");
    else if ((cfg.xs_m = lb_gemv_xs_rows(&cfg, c->sms, c->smsm, c->smres,
                                         c->smopt, smem + stat)) > 0 &&
             (rc = get_kernel(c, mod, LB_KERNEL_XS,
                              smem + cfg.xs_m * cfg.xrowb, &fn_xs,
                              &info.regs, &info.spill)) != CUDA_SUCCESS) {
      /* a part with less shared memory: x stays in global memory */
      if (rc == CUDA_ERROR_INVALID_VALUE)
        fn_xs = NULL;
      else
        st = lb_cufail(rc, where, LB_KERNEL_XS);
    }
  }
  if (st == LB_OK) st = cluster_grid(c, fn, &cfg, &blocks, where);
  /* (spread: for its most rows of blocks, slices; with fewer rows an SM
  ** may take a little more than an even spread) */
  if (st == LB_OK) spread = spread_of(c, fn, fn_xs, blocks * cfg.slices,
                                      smem, smem + cfg.xs_m * cfg.xrowb);
  /* (stat: the kernel's static shared memory, its sums) */
  if (st == LB_OK && (v == 0 || v == GV_HI) && cfg.early)
    carve_of(c, fn, blocks, (spread > 0 ? spread : smem) + stat);
  lb_ctx_leave(&s);
  free(src);
  if (st != LB_OK) return st;
  *out = (lb_gv){fn, fn_xs, cfg, blocks, threads, smem, spread, info, from};
  return LB_OK;
}

/* The op's GEMV v as make_gemv makes it, for the op's launches (early
** where lb_op_overlap is on). */
static lb_status load_gemv(lb_op *op, int v, const char *plan,
                           lb_plan_from from, const char *table,
                           const char *where) {
  return make_gemv(op, v, op->overlap, plan, from, table, where, &op->gv[v]);
}

/* The plan of the op's GEMV v > 0 as gemv_fn compiles it (LOWBIT_PLAN's,
** else the rules'; 2..8 rows' from the one-fragment kernel's), into
** *cfg, and where it comes from. */
static lb_status plan_frags(const lb_op *op, int v, const char *where,
                            lb_gemv_cfg *cfg, lb_plan_from *from) {
  lb_plan_from f;
  char words[LB_PLAN_LEN];
  const char *plan = made_from(op, v, words, &f);
  if (plan == NULL) plan = plan_or_env(NULL, &f);
  if (from) *from = f;
  return lb_plan_gemv(&op->rec, op->n, op->k, gv_rows[v], op->c->sms, plan,
                      plan == words ? where : plan ? "LOWBIT_PLAN" : where,
                      cfg);
}

/* The one-fragment GEMV from plan (as load_gemv), and the others its reach
** (the plan's rows) takes planned, so that a plan they cannot take fails
** here (they compile on first use); all or nothing: the op as it was when
** any fails. */
static lb_status set_gemv(lb_op *op, const char *plan, lb_plan_from from,
                          const char *table, const char *where) {
  const lb_gv old = op->gv[0];
  lb_status st = load_gemv(op, 0, plan, from, table, where);
  lb_gemv_cfg cfg;
  int v, rows;
  if (st != LB_OK) return st;
  rows = op->gv[0].cfg.rows;
  for (v = 1; v < gv_count(rows) && st == LB_OK; v++)
    st = plan_frags(op, v, where, &cfg, NULL);
  if (st == LB_OK && gv_at(op, LB_MAX_M) == GV_HI)
    st = plan_frags(op, GV_HI, where, &cfg, NULL);
  if (st != LB_OK) {
    op->gv[0] = old;
    return st;
  }
  op->rows = rows;
  /* 2..8 rows' kernel follows the new plan: made again on first use */
  __atomic_store_n(&op->gv[GV_HI].fn, NULL, __ATOMIC_RELEASE);
  return LB_OK;
}

/* The GEMV v, compiled (or found in a cache) if it is not yet: the slow
** path of a launch of 9..32 rows (and of 2..8 with their own kernel),
** taken once per kernel and op. */
static lb_status gemv_fn(const lb_op *cop, int v) {
  lb_op *op = (lb_op *)cop;   /* the kernel is a cache; the op is logically const */
  lb_gv *gv = &op->gv[v], g;
  lb_status st;
  if (__atomic_load_n(&gv->fn, __ATOMIC_ACQUIRE) != NULL) return LB_OK;
  pthread_mutex_lock(&op->lock);
  if (gv->fn != NULL) {
    pthread_mutex_unlock(&op->lock);
    return LB_OK;
  }
  {
    char words[LB_PLAN_LEN];
    lb_plan_from f;
    const char *plan = made_from(op, v, words, &f);
    st = make_gemv(op, v, op->overlap, plan, f, NULL, "lb_op_run", &g);
  }
  if (st == LB_OK) {   /* every field but fn (the first), then fn */
    memcpy((char *)gv + LB_GV_REST, (const char *)&g + LB_GV_REST,
           sizeof g - LB_GV_REST);
    __atomic_store_n(&gv->fn, g.fn, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&op->lock);
  return st;
}

/* Bucket b's source and plan: plan from `from` (LB_PLAN_SET, or the
** table named `table`), else LOWBIT_GEMM's, else the rules'.  A bucket that
** cannot be planned keeps why for its runs; only no memory fails here. */
static lb_status make_bucket(lb_op *op, int b, const char *plan,
                             lb_plan_from from, const char *table) {
  lb_bucket *bk = &op->gemm[b];
  const char *env = getenv("LOWBIT_GEMM");
  char said[192];
  lb_gemm_plans plans;
  free(bk->src);
  bk->src = NULL;
  bk->why[0] = '\0';
  bk->info.arch = op->c->arch;
  if (plan == NULL && env != NULL) {
    plan = env;
    from = LB_PLAN_ENV;
  }
  plan_said(plan ? from : LB_PLAN_RULES, "LOWBIT_GEMM", table, said,
            sizeof said);
  bk->from = plan ? from : LB_PLAN_RULES;
  bk->why_st = lb_gen_gemm(&op->rec, op->n, op->k, b, op->c->sms, plan, said,
                           &plans, &bk->src);
  if (bk->why_st == LB_EMEM) return bk->why_st;
  if (bk->why_st != LB_OK) {
    snprintf(bk->why, sizeof bk->why, "%s", lb_errmsg());
    return LB_OK;
  }
  bk->cfg = *lb_gemm_part(&plans, op->c->arch);
  return LB_OK;
}

/* The table's plans for the op's GEMV ([0]) and GEMM buckets ([1 + b]):
** "" where it holds none, where an environment variable decides instead,
** or where there is no table. */
static lb_status table_plans(const lb_op *op,
                             char (*plans)[LB_PLAN_LEN], char *table,
                             size_t len, const char *where) {
  uint64_t keys[1 + LB_GEMM_BUCKETS];
  int known[1 + LB_GEMM_BUCKETS], i;
  const int look = lb_tune_have(op->c);
  lb_status st = LB_OK;
  for (i = 0; i <= LB_GEMM_BUCKETS; i++) {
    const char *env = getenv(i == 0 ? "LOWBIT_PLAN" : "LOWBIT_GEMM");
    /* a bucket with no plan has no key; its source says why */
    known[i] = look && env == NULL &&
               (i == 0 ? lb_gemv_key(&op->rec, op->n, op->k, op->c->sms,
                                     &keys[i])
                       : lb_gemm_key(&op->rec, op->n, op->k, i - 1,
                                     op->c->sms, &keys[i])) == LB_OK;
    if (!known[i]) keys[i] = 0;
    plans[i][0] = '\0';
  }
  if (look)
    st = lb_tune_find(op->c, keys, 1 + LB_GEMM_BUCKETS, plans, table, len,
                      where);
  for (i = 0; i <= LB_GEMM_BUCKETS; i++)
    if (!known[i]) plans[i][0] = '\0';
  return st;
}

lb_status lb_op_create(lb_ctx *c, const lb_recipe *r, int n, int k,
                       lb_op **out) {
  char plans[1 + LB_GEMM_BUCKETS][LB_PLAN_LEN], table[128] = "";
  lb_op *op;
  lb_status st;
  int b;
  if (out) *out = NULL;
  if (c == NULL || r == NULL || out == NULL)
    return lb_fail(LB_EARG, "lb_op_create: null argument");
  if ((op = calloc(1, sizeof *op)) == NULL)
    return lb_fail(LB_EMEM, "lb_op_create: no memory");
  op->c = c;
  op->cu = c->cu;
  op->rec = *r;   /* the recipe may be freed after this call */
  op->n = n;
  op->k = k;
  op->has_zeros = r->zeros;
  op->has_bias = r->bias;
  op->out_size = lb_dtype_size(r->out);
  /* Each kernel's plan: the environment's (LOWBIT_PLAN for the GEMV,
  ** LOWBIT_GEMM for the GEMM), else the tuning table's, else the rules'.
  ** The GEMV is compiled now; the GEMM buckets' sources are made now,
  ** their kernels compiled when first needed. */
  /* (the GEMV of two or four fragments is not in the tuning table: its
  ** rules, or LOWBIT_PLAN; the one-fragment GEMV's plan sets their reach) */
  if ((st = table_plans(op, plans, table, sizeof table, "lb_op_create")) !=
          LB_OK ||
      (st = set_gemv(op, plans[0][0] ? plans[0] : NULL,
                     plans[0][0] ? LB_PLAN_TABLE : LB_PLAN_RULES, table,
                     "lb_op_create")) != LB_OK) {
    free(op);
    return st;
  }
  for (b = 0; b < LB_GEMM_BUCKETS; b++)
    if ((st = make_bucket(op, b, plans[1 + b][0] ? plans[1 + b] : NULL,
                          plans[1 + b][0] ? LB_PLAN_TABLE : LB_PLAN_RULES,
                          table)) != LB_OK) {
      for (b = 0; b < LB_GEMM_BUCKETS; b++) free(op->gemm[b].src);
      free(op);
      return st;
    }
  pthread_mutex_init(&op->lock, NULL);
  *out = op;
  return LB_OK;
}

void lb_op_destroy(lb_op *op) {
  int b;
  if (op == NULL) return;
  for (b = 0; b < LB_GEMM_BUCKETS; b++) free(op->gemm[b].src);
  pthread_mutex_destroy(&op->lock);
  free(op);
}

lb_status lb_op_set_plan(lb_op *op, int m, const char *plan) {
  char found[1 + LB_GEMM_BUCKETS][LB_PLAN_LEN], table[128] = "";
  lb_bucket *bk, old;
  lb_status st = LB_OK;
  int b;
  if (op == NULL) return lb_fail(LB_EARG, "lb_op_set_plan: op is NULL");
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_set_plan: m = %d; ops take 1..%d rows", m,
                   LB_MAX_ROWS);
  /* back to the table's plan (or the rules'): read it again */
  if (plan == NULL &&
      (st = table_plans(op, found, table, sizeof table, "lb_op_set_plan")) !=
          LB_OK)
    return st;
  pthread_mutex_lock(&op->lock);
  if (m <= op->rows) {   /* the GEMV: compiled now, kept if that fails */
    const int v = gv_index(m);
    /* the table holds the one-fragment GEMV's plan only, which also
    ** sets the GEMV's reach */
    const char *tp = !v && found[0][0] ? found[0] : NULL;
    if (v == 0)
      st = plan ? set_gemv(op, plan, LB_PLAN_SET, NULL, "lb_op_set_plan")
           : set_gemv(op, tp, tp ? LB_PLAN_TABLE : LB_PLAN_RULES, table,
                      "lb_op_set_plan");
    else
      st = plan ? load_gemv(op, v, plan, LB_PLAN_SET, NULL, "lb_op_set_plan")
           : load_gemv(op, v, NULL, LB_PLAN_RULES, NULL, "lb_op_set_plan");
    pthread_mutex_unlock(&op->lock);
    return st;
  }
  b = lb_gemm_bucket(m);
  bk = &op->gemm[b];
  old = *bk;
  bk->src = NULL;
  if (plan != NULL)
    st = make_bucket(op, b, plan, LB_PLAN_SET, NULL);
  else
    st = make_bucket(op, b, found[1 + b][0] ? found[1 + b] : NULL,
                     found[1 + b][0] ? LB_PLAN_TABLE : LB_PLAN_RULES, table);
  if (st == LB_OK && plan != NULL && bk->src == NULL)
    st = lb_fail(bk->why_st, "lb_op_set_plan: %s", bk->why);
  if (st != LB_OK) {   /* the bucket as it was */
    free(bk->src);
    *bk = old;
  } else {   /* compiled again on its next use */
    free(old.src);
    bk->fn = NULL;
    bk->sum = NULL;
    memset(&bk->info, 0, sizeof bk->info);
  }
  pthread_mutex_unlock(&op->lock);
  return st;
}

lb_status lb_op_plan(const lb_op *op, int m, char plan[LB_PLAN_LEN],
                     lb_plan_from *from) {
  const lb_bucket *bk;
  const lb_gv *gv;
  if (op == NULL || plan == NULL || from == NULL)
    return lb_fail(LB_EARG, "lb_op_plan: null argument");
  plan[0] = '\0';
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_plan: m = %d; ops take 1..%d rows", m,
                   LB_MAX_ROWS);
  if ((gv = gemv_of(op, m)) != NULL) {
    /* the reach in effect, the first kernel's, whichever kernel runs m;
    ** past the rules' reach the GEMV runs m because of that plan, so it
    ** says where m's kernel came from (bench's "plan table" at 24 rows);
    ** a kernel not compiled yet, as gemv_fn will plan it */
    lb_gemv_cfg c;
    lb_plan_from f;
    if (__atomic_load_n(&gv->fn, __ATOMIC_ACQUIRE) != NULL) {
      c = gv->cfg;
      f = gv->from;
    } else {
      const lb_status st = plan_frags(op, gv_at(op, m), "lb_op_plan", &c, &f);
      if (st != LB_OK) return st;
    }
    c.rows = op->rows;
    lb_gemv_plan_text(&c, plan, LB_PLAN_LEN);
    *from = m > lb_gemv_rows(&op->rec, op->n, op->k) ? op->gv[0].from : f;
    return LB_OK;
  }
  bk = &op->gemm[lb_gemm_bucket(lead_rows(op, m))];
  if (bk->src == NULL)
    return lb_fail(bk->why_st, "lb_op_plan: no GEMM for this shape: %s",
                   bk->why);
  lb_gemm_plan_text(&bk->cfg, plan, LB_PLAN_LEN);
  *from = bk->from;
  return LB_OK;
}

/* The bucket's kernel, compiled (or found in a cache) if it is not yet:
** the one slow path of a launch, taken once per bucket and op. */
static lb_status bucket_fn(const lb_op *cop, int b, CUfunction *fn) {
  lb_op *op = (lb_op *)cop;   /* the kernel is a cache; the op is logically const */
  lb_bucket *bk = &op->gemm[b];
  lb_mod *mod = NULL;
  lb_compile_info info;
  CUfunction f;
  CUresult rc;
  lb_status st;
  lb_scope s;
  if ((*fn = __atomic_load_n(&bk->fn, __ATOMIC_ACQUIRE)) != NULL) return LB_OK;
  if (bk->src == NULL)
    return lb_fail(bk->why_st, "lb_op_run: no GEMM for this shape: %s",
                   bk->why);
  pthread_mutex_lock(&op->lock);
  if ((*fn = bk->fn) != NULL) {
    pthread_mutex_unlock(&op->lock);
    return LB_OK;
  }
  memset(&info, 0, sizeof info);
  info.arch = op->c->arch;
  info.regs = info.spill = -1;
  if ((st = lb_ctx_enter(op->c, &s, "lb_op_run")) != LB_OK) {
    pthread_mutex_unlock(&op->lock);
    return st;
  }
  st = get_module(op->c, bk->src, &mod, &info, "lb_op_run");
  if (st == LB_OK) {
    rc = get_kernel(op->c, mod, LB_GEMM_KERNEL, bk->cfg.smem, &f,
                    &info.regs, &info.spill);
    if (rc == CUDA_SUCCESS)
      rc = op->cu->ModuleGetFunction(&bk->sum, mod->mod, LB_GEMM_SUM);
    if (rc != CUDA_SUCCESS)
      st = lb_cufail(rc, "lb_op_run", "the GEMM kernel (shared memory "
                     "request or lookup)");
  }
  lb_ctx_leave(&s);
  if (st == LB_OK) {
    bk->info = info;
    __atomic_store_n(&bk->fn, f, __ATOMIC_RELEASE);
    *fn = f;
  }
  pthread_mutex_unlock(&op->lock);
  return st;
}

lb_status lb_op_prepare(lb_op *op, int m_lo, int m_hi) {
  char need[LB_GEMM_BUCKETS], gneed[GV_N] = {0};
  int b, m, v;
  CUfunction fn;
  lb_status st;
  if (op == NULL) return lb_fail(LB_EARG, "lb_op_prepare: op is NULL");
  if (m_lo < 1 || m_hi < m_lo || m_hi > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_prepare: rows %d..%d; ops take 1..%d",
                   m_lo, m_hi, LB_MAX_ROWS);
  /* every kernel a run of m_lo..m_hi rows launches: the GEMV's of m
  ** rows, m's bucket's, or the first part's and the tail's (lead_rows);
  ** rows are few enough to walk */
  memset(need, 0, sizeof need);
  for (m = m_lo; m <= m_hi && m <= op->rows; m++) gneed[gv_at(op, m)] = 1;
  for (m = m_lo > op->rows ? m_lo : op->rows + 1; m <= m_hi; m++) {
    const int lead = lead_rows(op, m);
    need[lb_gemm_bucket(lead)] = 1;
    if (m - lead > op->rows)
      need[lb_gemm_bucket(m - lead)] = 1;
    else if (m > lead)
      gneed[gv_at(op, m - lead)] = 1;
  }
  for (v = 1; v < GV_N; v++)   /* (the one-fragment GEMV is the op's) */
    if (gneed[v] && (st = gemv_fn(op, v)) != LB_OK) return st;
  for (b = 0; b < LB_GEMM_BUCKETS; b++)
    if (need[b] && (st = bucket_fn(op, b, &fn)) != LB_OK) return st;
  return LB_OK;
}

lb_status lb_op_info_m(const lb_op *op, int m, lb_compile_info *info) {
  const lb_bucket *bk;
  const lb_gv *gv;
  if (op == NULL || info == NULL)
    return lb_fail(LB_EARG, "lb_op_info_m: null argument");
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_info_m: m = %d; ops take 1..%d", m,
                   LB_MAX_ROWS);
  if ((gv = gemv_of(op, m)) != NULL) {
    if (__atomic_load_n(&gv->fn, __ATOMIC_ACQUIRE) == NULL)
      return lb_fail(LB_EARG, "lb_op_info_m: the kernel for m = %d is not "
                     "compiled yet (lb_op_prepare, or a run, compiles it)",
                     m);
    *info = gv->info;
    return LB_OK;
  }
  bk = &op->gemm[lb_gemm_bucket(lead_rows(op, m))];
  if (__atomic_load_n(&bk->fn, __ATOMIC_ACQUIRE) == NULL)
    return lb_fail(LB_EARG, "lb_op_info_m: the kernel for m = %d is not "
                   "compiled yet (lb_op_prepare, or a run, compiles it)", m);
  *info = bk->info;
  return LB_OK;
}

lb_status lb_op_info(const lb_op *op, lb_compile_info *info) {
  if (op == NULL || info == NULL)
    return lb_fail(LB_EARG, "lb_op_info: null argument");
  *info = op->gv[0].info;
  return LB_OK;
}

static int misaligned(const void *p, size_t a) {
  return ((uintptr_t)p & (a - 1)) != 0;
}

/* Split-K for m rows of bucket bk (lb_gemm_need): clusters where the
** driver launches them. */
static size_t split_need(const lb_op *op, const lb_bucket *bk, int m,
                         int *splits, int *cluster) {
  return lb_gemm_need(&bk->cfg, m, op->n, op->c->sms,
                      op->cu->LaunchKernelEx != NULL, splits, cluster);
}

/* The work space a run of m rows (lead of them first) needs. */
static size_t run_need(const lb_op *op, int m, int lead) {
  return lb_gemm_run_need(bucket_cfg, op, op->rows, m, lead, op->n,
                          op->c->sms, op->cu->LaunchKernelEx != NULL);
}

/* split_need for the public queries (fn: their name): the splits of the
** first part (lead_rows), the work space of the whole run; the arguments
** checked; the GEMV never splits this way. */
static lb_status split_query(const lb_op *op, int m, const char *fn,
                             int *splits, int *cluster, size_t *bytes) {
  const lb_bucket *bk;
  int lead;
  *splits = 1;
  *cluster = 0;
  *bytes = 0;
  if (op == NULL) return lb_fail(LB_EARG, "%s: op is NULL", fn);
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "%s: m = %d; ops take 1..%d rows", fn, m,
                   LB_MAX_ROWS);
  if (m <= op->rows) return LB_OK;
  lead = lead_rows(op, m);
  bk = &op->gemm[lb_gemm_bucket(lead)];
  if (bk->src == NULL)
    return lb_fail(bk->why_st, "%s: no GEMM for this shape: %s", fn, bk->why);
  split_need(op, bk, lead, splits, cluster);
  *bytes = run_need(op, m, lead);
  return LB_OK;
}

lb_status lb_op_workspace(const lb_op *op, int m, size_t *bytes) {
  int sp, cl;
  size_t b;
  const lb_status st = split_query(op, m, "lb_op_workspace", &sp, &cl, &b);
  if (bytes == NULL) return lb_fail(LB_EARG, "lb_op_workspace: bytes is NULL");
  *bytes = b;
  return st;
}

lb_status lb_op_splits(const lb_op *op, int m, int *splits, int *cluster) {
  int sp, cl;
  size_t b;
  const lb_status st = split_query(op, m, "lb_op_splits", &sp, &cl, &b);
  if (splits == NULL || cluster == NULL)
    return lb_fail(LB_EARG, "lb_op_splits: a result pointer is NULL");
  *splits = sp;
  *cluster = cl;
  return st;
}

lb_status lb_op_tail(const lb_op *op, int m, int *rows) {
  if (rows != NULL) *rows = 0;
  if (op == NULL || rows == NULL)
    return lb_fail(LB_EARG, "lb_op_tail: null argument");
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_tail: m = %d; ops take 1..%d rows", m,
                   LB_MAX_ROWS);
  *rows = m - lead_rows(op, m);
  return LB_OK;
}

/* Whether the op's device and driver launch with programmatic dependent
** launch (sm_90 and newer, cuLaunchKernelEx): split-K's adding kernel
** always goes so (fire); lb_op_overlap refuses without it, saying which
** of the two is missing. */
static int has_pdl(const lb_op *op) {
  return op->c->arch >= 90 && op->cu->LaunchKernelEx != NULL;
}

lb_status lb_op_overlap(lb_op *op, int on) {
  lb_gv gv2[GV_N];
  lb_status st = LB_OK;
  int v;
  if (op == NULL) return lb_fail(LB_EARG, "lb_op_overlap: op is NULL");
  if (on && op->c->arch < 90)
    return lb_fail(LB_EUNSUP, "lb_op_overlap: sm_%d has no programmatic "
                   "dependent launch (sm_90 and newer)", op->c->arch);
  if (on && op->cu->LaunchKernelEx == NULL)
    return lb_fail(LB_EUNSUP, "lb_op_overlap: the driver has no "
                   "cuLaunchKernelEx (CUDA 12 or newer)");
  on = on != 0;
  if (on == op->overlap) return LB_OK;
  /* The GEMV's source differs for early launches (LB_EARLY: x by plain
  ** loads): made again, with the plan it has, and swapped in only when
  ** every fragment's compiled. */
  pthread_mutex_lock(&op->lock);
  for (v = 0; v < GV_N && st == LB_OK; v++) {
    const lb_gv *gv = &op->gv[v];
    char plan[LB_PLAN_LEN];
    if (gv->fn == NULL) {   /* past the reach, or not compiled yet
                             ** (gemv_fn makes it with the overlap) */
      gv2[v] = *gv;
      continue;
    }
    lb_gemv_plan_text(&gv->cfg, plan, sizeof plan);
    /* the rules' (or LOWBIT_PLAN's) are made again as they were made;
    ** 2..8 rows' kernel too: its words are the one-fragment kernel's
    ** (test_plan checks it), and its `from` that kernel's */
    st = make_gemv(op, v, on,
                   gv->from == LB_PLAN_RULES || gv->from == LB_PLAN_ENV
                       ? NULL : plan,
                   gv->from, NULL, "lb_op_overlap", &gv2[v]);
  }
  if (st == LB_OK) {
    memcpy(op->gv, gv2, (size_t)v * sizeof gv2[0]);
    op->overlap = on;
  }
  pthread_mutex_unlock(&op->lock);
  return st;
}

/* One kernel on the stream; with pdl (the op's overlap), allowed to start
** before the kernel ahead of it ends (the templates wait for it:
** lb_wait_prior); with cz > 1, in clusters of cz blocks along z (sm_90). */
static CUresult launch(const lb_op *op, int pdl, CUfunction fn, unsigned gx,
                       unsigned gy, unsigned gz, unsigned cz,
                       unsigned threads, unsigned smem, CUstream stream,
                       void **args) {
  CUlaunchAttribute at[2];
  CUlaunchConfig lc;
  unsigned na = 0;
  if (!pdl && cz <= 1)
    return op->cu->LaunchKernel(fn, gx, gy, gz, threads, 1, 1, smem, stream,
                                args, NULL);
  memset(at, 0, sizeof at);
  memset(&lc, 0, sizeof lc);
  if (pdl) {
    at[na].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at[na++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (cz > 1) {
    at[na].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[na].value.clusterDim.x = 1;
    at[na].value.clusterDim.y = 1;
    at[na++].value.clusterDim.z = cz;
  }
  lc.gridDimX = gx;
  lc.gridDimY = gy;
  lc.gridDimZ = gz;
  lc.blockDimX = threads;
  lc.blockDimY = lc.blockDimZ = 1;
  lc.sharedMemBytes = smem;
  lc.hStream = stream;
  lc.attrs = at;
  lc.numAttrs = na;
  return op->cu->LaunchKernelEx(&lc, fn, args, NULL);
}

/* x as the tensor map a plan with tm=1 copies it by (templates/gemm.cu's
** lb_fill_x): m rows of k 16-bit values, boxes of 64 values x the tile's
** rows stored in the 128-byte swizzle; rows past m and values past k read
** as zeros.  Made for each launch (host arithmetic only: no allocation,
** no call to the device). */
static lb_status x_map(const lb_op *op, const lb_gemm_cfg *c, int m,
                       const void *x, CUtensorMap *map) {
  const cuuint64_t dim[2] = {(cuuint64_t)op->k, (cuuint64_t)m};
  const cuuint64_t stride[1] = {(cuuint64_t)op->k * 2};
  const cuuint32_t box[2] = {64, (cuuint32_t)c->bm}, step[2] = {1, 1};
  void *xp;
  CUresult rc;
  if (op->cu->TensorMapEncodeTiled == NULL)
    return lb_fail(LB_EUNSUP, "lb_op_run: the plan of m = %d copies x by "
                   "TMA (tm=1), and the driver has no cuTensorMapEncodeTiled "
                   "(CUDA 12 or newer)", m);
  memcpy(&xp, &x, sizeof xp);   /* (the driver's signature is not const) */
  rc = op->cu->TensorMapEncodeTiled(
      map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, xp, dim, stride, box, step,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    return lb_cufail(rc, "lb_op_run", "cuTensorMapEncodeTiled");
  return LB_OK;
}

/* One part of a run, made ready (kernel compiled, tensor map made) before
** any part is launched, so that a failure leaves y untouched. */
typedef struct lb_part {
  CUfunction fn, sum;      /* sum: split-K's adding kernel, or NULL */
  unsigned gx, gy, gz, cz, threads, smem;
  const void *x;
  void *y;
  int m;
  int gemv;                /* the GEMV's (its argument `early` is pdl) */
  int pdl;                 /* launched with PDL (lb_op_overlap) */
  float *ws;               /* the splits' sums (NULL: none) */
  size_t need;             /* work space its splits need (split_need) */
  CUtensorMap xmap;        /* the GEMM's last argument (read where tm=1) */
} lb_part;

/* m rows of x into y: the GEMM of m's bucket (compiled on its first run),
** else the GEMV, with x in shared memory where its m rows fit.  The
** arguments are checked (ws holds what the run needs, or is NULL). */
static lb_status part_of(const lb_op *op, int m, const void *x, void *y,
                         void *ws, lb_part *p) {
  const lb_gv *gv;
  lb_status st;
  memset(p, 0, sizeof *p);
  p->x = x;
  p->y = y;
  p->m = m;
  p->gz = p->cz = 1;
  p->pdl = op->overlap;
  if ((gv = gemv_of(op, m)) == NULL) {
    const int b = lb_gemm_bucket(m);
    const lb_bucket *bk = &op->gemm[b];
    int sp, cl;
    /* first: a bucket without a plan (a bad LOWBIT_GEMM) fails here */
    if ((st = bucket_fn(op, b, &p->fn)) != LB_OK) return st;
    p->need = split_need(op, bk, m, &sp, &cl);
    if (bk->cfg.tm && (st = x_map(op, &bk->cfg, m, x, &p->xmap)) != LB_OK)
      return st;
    if (cl) {   /* split K in clusters: no work space, no second kernel */
      p->gz = p->cz = (unsigned)sp;
    } else if (sp > 1 && ws != NULL) {   /* split K (without a work space: not) */
      p->ws = ws;
      p->gz = (unsigned)sp;
      p->sum = bk->sum;
    }
    p->gx = (unsigned)bk->cfg.gridn;
    p->gy = (unsigned)((m + bk->cfg.bm - 1) / bk->cfg.bm);
    p->threads = (unsigned)bk->cfg.threads;
    p->smem = (unsigned)bk->cfg.smem;
  } else {
    const lb_gemv_cfg *cfg = &gv->cfg;
    int rows = m;   /* a block's rows of x */
    /* first: 9..32 rows' kernels compile on their first run */
    if ((st = gemv_fn(op, gv_at(op, m))) != LB_OK) return st;
    p->gemv = 1;
    p->gy = 1;
    if (cfg->slices > 1) {   /* rows of blocks, 8 rows of x each */
      p->gy = (unsigned)((m + LB_MAX_M - 1) / LB_MAX_M);
      rows = LB_MAX_M;
    }
    p->fn = gv->fn_xs != NULL && rows <= cfg->xs_m ? gv->fn_xs : gv->fn;
    /* only a source made for it is launched early (lb_op_overlap makes
    ** it: x by plain loads, LB_EARLY) */
    p->pdl = op->overlap && cfg->early;
    p->gx = gv->blocks;
    p->threads = (unsigned)gv->threads;
    p->smem =
        (unsigned)(gv->smem + (p->fn == gv->fn_xs ? rows * cfg->xrowb : 0));
    if (p->pdl && (unsigned)gv->spread > p->smem)
      p->smem = (unsigned)gv->spread;   /* (spread_of) */
  }
  return LB_OK;
}

/* Launches part p (the op's context current). */
static lb_status fire(const lb_op *op, lb_part *p, const lb_weights *w,
                      CUstream stream) {
  const void *bias = w->bias, *zeros = w->zeros;
  void *args[9] = {&p->x, (void *)&w->packed, (void *)&w->scales, &zeros,
                   &bias, &p->y, &p->m, NULL, &p->xmap};
  CUresult rc;
  args[7] = p->gemv ? (void *)&p->pdl : (void *)&p->ws;
  rc = launch(op, p->pdl, p->fn, p->gx, p->gy,
              p->gz, p->cz, p->threads, p->smem,
              stream, args);
  if (rc == CUDA_SUCCESS && p->sum != NULL) {
    /* the splits' sums, added in order, then the epilogue */
    const long long quads = ((long long)p->m * op->n + 3) / 4;
    const long long most = 8LL * op->c->sms;
    int splits = (int)p->gz;
    void *sargs[5] = {&p->ws, &bias, &p->y, &p->m, &splits};
    /* with PDL wherever the device has it, overlap or not: the GEMM
    ** lets it start once its blocks are past their loops (lb_let_next),
    ** and it waits there for their stores (lb_wait_prior) */
    rc = launch(op, has_pdl(op), p->sum, (unsigned)((quads + 255) / 256 < most
                                           ? (quads + 255) / 256 : most),
                1, 1, 1, 256, 0, stream, sargs);
  }
  if (rc != CUDA_SUCCESS) return lb_cufail(rc, "lb_op_run", "cuLaunchKernel");
  return LB_OK;
}

lb_status lb_op_run(const lb_op *op, int m, const void *x,
                    const lb_weights *w, void *y, void *stream) {
  return lb_op_run_ws(op, m, x, w, y, NULL, 0, stream);
}

lb_status lb_op_run_ws(const lb_op *op, int m, const void *x,
                       const lb_weights *w, void *y, void *ws, size_t bytes,
                       void *stream) {
  /* what the block copies with 16-byte cp.async */
  const void *const vec[4] = {x, w ? w->packed : NULL, w ? w->scales : NULL,
                              w ? w->zeros : NULL};
  static const char *const vname[4] = {"x", "w->packed", "w->scales",
                                       "w->zeros"};
  lb_part part[2];
  lb_status st;
  lb_scope s;
  size_t need;
  int i, lead;
  if (op == NULL || w == NULL)
    return lb_fail(LB_EARG, "lb_op_run: %s is NULL", op ? "w" : "op");
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_op_run: m = %d; ops take 1..%d rows", m,
                   LB_MAX_ROWS);
  if (x == NULL || y == NULL || w->packed == NULL || w->scales == NULL)
    return lb_fail(LB_EARG, "lb_op_run: %s is NULL",
                   x == NULL ? "x" : y == NULL ? "y" :
                   w->packed == NULL ? "w->packed" : "w->scales");
  if (op->has_zeros && w->zeros == NULL)
    return lb_fail(LB_EARG, "lb_op_run: the recipe has zeros but w->zeros "
                   "is NULL");
  if (!op->has_zeros && w->zeros != NULL)
    return lb_fail(LB_EARG, "lb_op_run: w->zeros is set but the recipe has "
                   "no zeros section");
  if (!op->has_bias && w->bias != NULL)
    return lb_fail(LB_EARG, "lb_op_run: w->bias is set but the recipe has "
                   "no bias (epilogue { bias = true })");
  for (i = 0; i < 4; i++)
    if (misaligned(vec[i], 16))
      return lb_fail(LB_EARG, "lb_op_run: %s (%p) must be 16-byte aligned",
                     vname[i], vec[i]);
  if (misaligned(ws, 16))
    return lb_fail(LB_EARG, "lb_op_run: the work space (%p) must be 16-byte "
                   "aligned", ws);
  if (misaligned(y, (size_t)op->out_size) ||
      misaligned(w->bias, (size_t)op->out_size))
    return lb_fail(LB_EARG, "lb_op_run: y and bias must be aligned to their "
                   "element size");
  lead = lead_rows(op, m);
  /* Launch in the caller's context when it is ours (the usual case with
  ** cudart or PyTorch); otherwise make ours current for the call. */
  if ((st = lb_ctx_enter(op->c, &s, "lb_op_run")) != LB_OK) return st;
  /* both parts ready before either runs: a failure leaves y as it was;
  ** the work space must hold the larger part's sums (run_need) */
  memset(part, 0, sizeof part);
  st = part_of(op, lead, x, y, ws, &part[0]);
  if (st == LB_OK && lead < m)   /* the tail: rows lead.. on their own kernel */
    st = part_of(op, m - lead, (const char *)x + (size_t)lead * op->k * 2,
                 (char *)y + (size_t)lead * op->n * op->out_size, ws, &part[1]);
  need = part[0].need > part[1].need ? part[0].need : part[1].need;
  if (st == LB_OK && ws != NULL && bytes < need)
    st = lb_fail(LB_EARG, "lb_op_run: a work space of %zu bytes; m = %d "
                 "needs %zu (lb_op_workspace), or none", bytes, m, need);
  for (i = 0; st == LB_OK && i < (lead < m ? 2 : 1); i++)
    st = fire(op, &part[i], w, (CUstream)stream);
  lb_ctx_leave(&s);
  return st;
}

lb_status lb_compile_offline(const char *src, int arch, lb_offline *info,
                             char **log) {
  lb_binary bin;
  lb_status st;
  if (log) *log = NULL;
  if (src == NULL || info == NULL)
    return lb_fail(LB_EARG, "lb_compile_offline: null argument");
  if (arch < 80 || arch > 200)
    return lb_fail(LB_EARG, "lb_compile_offline: arch sm_%d out of range",
                   arch);
  memset(info, 0, sizeof *info);
  st = lb_obtain(src, arch, &bin, &info->cache, &info->seconds);
  if (st != LB_OK) return st;
  if (info->cache) info->cache = 2;
  info->warnings = lb_log_warnings(bin.log);
  info->ptx = bin.ptx;
  info->binary = bin.size;
  if (log) {
    *log = bin.log;
    bin.log = NULL;
  }
  lb_binary_free(&bin);
  return LB_OK;
}
