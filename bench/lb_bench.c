/*
** lb_bench.c: check and time lowbit kernels against cuBLAS on the GPU.
*/
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "lb_bench.h"
#include "lb_floor.h"
#include "lb_ref.h"
#include "lb_svg.h"
#include "lb_timer.h"
#include "lowbit.h"

#define CK(call)                                                        \
  do {                                                                  \
    cudaError_t e_ = (call);                                            \
    if (e_ != cudaSuccess) {                                            \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
              cudaGetErrorString(e_));                                  \
      goto fail;                                                        \
    }                                                                   \
  } while (0)

typedef struct row {
  char recipe[64];
  int k, n, m;
  double us, cublas_us, gbs, pct, err, cublas_err, compile_s, launch_us;
  double floor_us;   /* a plain read of the same bytes; 0: not measured */
  /* LB_FLUSH_BOTH: the same after the memset flush (the ones above
  ** are the read flush's) */
  double us_w, cublas_us_w, floor_us_w, gbs_w;
  int cache, pass, regs;
  double bytes;
} row;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- the two contenders ------------------------------------------------- */

typedef struct job {
  const lb_op *op;
  lb_weights w;
  int m;
  void *x, *y;
  cublasHandle_t h;
  cudaDataType_t dt;
  int n, k;
  void *wdense, *ydense;
  void *ws;       /* split-K work space for m (NULL where m needs none) */
  size_t wsb;
} job;

static int run_lowbit(void *p) {
  job *j = p;
  lb_status st = lb_op_run_ws(j->op, j->m, j->x, &j->w, j->y, j->ws, j->wsb, NULL);
  if (st != LB_OK) fprintf(stderr, "lb_op_run_ws: %s\n", lb_errmsg());
  return st == LB_OK;
}

static int run_cublas(void *p) {
  job *j = p;
  const float one = 1.f, zero = 0.f;
  /* column-major: y^T (n x m) = W (n x k, stored k x n) ^T * x^T (k x m) */
  cublasStatus_t st = cublasGemmEx(j->h, CUBLAS_OP_T, CUBLAS_OP_N, j->n, j->m,
                                   j->k, &one, j->wdense, j->dt, j->k, j->x,
                                   j->dt, j->k, &zero, j->ydense, j->dt, j->n,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "cublasGemmEx: %d\n", st);
  return st == CUBLAS_STATUS_SUCCESS;
}

/* Host time of one lb_op_run_ws (the enqueue alone): the median of 200
** calls timed one by one, the stream drained every 8 so that a full
** launch queue never makes the host wait for the GPU. */
static double host_launch_us(job *j) {
  double t[200];
  int i;
  for (i = 0; i < 200; i++) {
    struct timespec a, b;
    if (i % 8 == 0) cudaDeviceSynchronize();
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (!run_lowbit(j)) return -1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 +
           (double)(b.tv_nsec - a.tv_nsec) * 1e-3;
  }
  cudaDeviceSynchronize();
  qsort(t, 200, sizeof t[0], cmp_double);
  return t[100];
}

/* Device-to-device copy bandwidth, bytes read + written per second. */
static double copy_bandwidth(lb_timer *t) {
  size_t bytes = (size_t)1 << 30;
  void *a = NULL, *b = NULL;
  float ms[20];
  cudaEvent_t e0, e1;
  double bw = -1;
  int i;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
    goto done;
  cudaMemset(a, 1, bytes);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (i = 0; i < 23; i++) {
    cudaEventRecord(e0, 0);
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    if (i >= 3) cudaEventElapsedTime(&ms[i - 3], e0, e1);
  }
  qsort(ms, 20, sizeof(float), lb_cmp_float);
  bw = 2.0 * (double)bytes / (ms[10] * 1e-3);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
done:
  cudaFree(a);
  cudaFree(b);
  (void)t;
  return bw;
}

/* Relative error of cuBLAS's last output against the reference: a check
** of the reference itself (cuBLAS sees the same weights, rounded to the
** activation type, and adds no bias).  -1 when it cannot be computed. */
static double cublas_error(const lb_case *view, const job *j,
                           const double *y64) {
  size_t total = (size_t)view->m * (size_t)j->n, q, bad;   /* checked rows */
  uint16_t *yd = malloc(total * 2);
  double *ref = malloc(sizeof(double) * total), err = -1;
  lb_case cv = *view;
  if (yd && ref && cudaMemcpy(yd, j->ydense, total * 2,
                              cudaMemcpyDeviceToHost) == cudaSuccess) {
    for (q = 0; q < total; q++)
      ref[q] = y64[q] - (view->bias ? lb_load(view->f.out, view->bias,
                                              q % (size_t)j->n)
                                    : 0);
    /* cuBLAS's output: the activation type, no bias */
    cv.f.out = cv.f.act;
    cv.f.bias = 0;
    cv.bias = NULL;
    err = lb_rel_error(&cv, yd, ref, &bad);
  }
  free(yd);
  free(ref);
  return err;
}

/* ---- one run ----------------------------------------------------------- */

typedef struct env {
  const lb_bench_opts *o;
  lb_ctx *ctx;
  cublasHandle_t h;
  lb_timer t;
  double copy_bw;
  double mma_tflops;    /* mma.sync's ceiling on this device; 0: unknown */
  lb_floor fl;
  int have_floor;
  row *rows;
  int nrows;
  uint64_t seed;
  lb_progress pg;       /* a step for each (recipe, shape) */
} env;

/* ---- the status line (lb_bench.h) --------------------------------------- */

void lb_progress_init(lb_progress *p, int of) {
  memset(p, 0, sizeof *p);
  p->on = isatty(STDERR_FILENO);
  p->of = of;
}

void lb_progress_say(lb_progress *p, const char *fmt, ...) {
  va_list ap;
  if (!p->on) return;
  fprintf(stderr, "\r\033[K[%d/%d] ", p->at, p->of);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
  p->shown = 1;
}

void lb_progress_clear(lb_progress *p) {
  if (p->shown) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  p->shown = 0;
}

/* ---- one recipe and shape, all M --------------------------------------- */

static void complain(env *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A failure's message on stderr, on a line of its own. */
static void complain(env *e, const char *fmt, ...) {
  va_list ap;
  lb_progress_clear(&e->pg);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* The rows of view in y against their reference: rw keeps the worst
** relative error and passes only if every judged row does. */
static void judge(const lb_case *view, const void *y, const double *y64,
                  const double *mag64, row *rw) {
  size_t bad = 0;
  double ratio, err = lb_rel_error(view, y, y64, &bad);
  if (err > rw->err) rw->err = err;
  rw->pass &= lb_check(view, y, y64, mag64, &ratio, &bad);
}

#define REF_ROWS 16

static int bench_shape(env *e, const lb_recipe *r, int k, int n) {
  const lb_bench_opts *o = e->o;
  int maxm = 1, refm, i, ok = 0, wok = 0;
  lb_case c;
  double *y64 = NULL, *mag64 = NULL;
  void *ybuf = NULL, *hy = NULL;
  uint16_t *dense = NULL;
  job j;
  lb_op *op = NULL;
  lb_compile_info info;
  memset(&j, 0, sizeof j);
  for (i = 0; i < o->nm; i++)
    if (o->m[i] > maxm) maxm = o->m[i];
  lb_progress_say(&e->pg, "%s %dx%d: data, float64 reference, compile",
                  lb_recipe_name(r), k, n);
  if (!lb_case_make(&c, r, maxm, n, k, e->seed++)) {
    complain(e, "%s %dx%d: %s", lb_recipe_name(r), k, n, lb_errmsg());
    return 0;
  }
  /* The float64 reference covers the first REF_ROWS rows (at M = 4096
  ** and 8192 x 8192 all of them would take minutes) and each M's last;
  ** the GPU suite checks every row on smaller layers. */
  refm = maxm < REF_ROWS ? maxm : REF_ROWS;
  /* (one row more: the last of each M, below) */
  y64 = malloc(sizeof(double) * (size_t)(refm + 1) * (size_t)n);
  mag64 = malloc(sizeof(double) * (size_t)(refm + 1) * (size_t)n);
  hy = malloc(c.y_bytes);
  dense = malloc((size_t)n * (size_t)k * 2);
  if (!y64 || !mag64 || !hy || !dense) goto fail;
  {
    lb_case head = c;
    head.m = refm;
    if (!lb_case_reference(&head, y64, mag64)) {
      complain(e, "%s %dx%d: %s", lb_recipe_name(r), k, n, lb_errmsg());
      goto fail;
    }
  }
  /* cuBLAS multiplies the same weights, dequantized and rounded to the
  ** activation type. */
  lb_case_dense(&c, dense);
  wok = lb_upload_weights(&c, &j.w);
  j.x = lb_upload(c.x, c.x_bytes);
  j.wdense = lb_upload(dense, (size_t)n * (size_t)k * 2);
  CK(cudaMalloc(&ybuf, c.y_bytes));
  CK(cudaMalloc(&j.ydense, (size_t)maxm * (size_t)n * 2));
  j.y = ybuf;
  if (!wok || !j.x || !j.wdense) {
    complain(e, "device allocation failed");
    goto fail;
  }
  if (lb_op_create(e->ctx, r, n, k, &op) != LB_OK) {
    complain(e, "%s: lb_op_create: %s", lb_recipe_name(r), lb_errmsg());
    goto fail;
  }
  lb_op_info(op, &info);
  j.op = op;
  j.h = e->h;
  j.dt = c.f.act == LB_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  j.n = n;
  j.k = k;
  ok = 1;
  for (i = 0; i < o->nm; i++) {
    row *rw = &e->rows[e->nrows];
    lb_case view = c;
    j.m = o->m[i];
    view.m = j.m < refm ? j.m : refm;   /* the rows checked */
    lb_progress_say(&e->pg, "%s %dx%d m=%d: check and time",
                    lb_recipe_name(r), k, n, j.m);
    /* the work space split K asks for (cuBLAS has its own) */
    cudaFree(j.ws);
    j.ws = NULL;
    if (lb_op_workspace(op, j.m, &j.wsb) != LB_OK) {
      complain(e, "lb_op_workspace: %s", lb_errmsg());
      goto fail;
    }
    if (j.wsb) CK(cudaMalloc(&j.ws, j.wsb));
    /* check once, output poisoned (0xff bytes are NaN in every float type) */
    CK(cudaMemset(ybuf, 0xff, c.y_bytes));
    if (!run_lowbit(&j)) goto fail;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy, ybuf, c.y_bytes, cudaMemcpyDeviceToHost));
    memset(rw, 0, sizeof *rw);
    snprintf(rw->recipe, sizeof rw->recipe, "%s", lb_recipe_name(r));
    rw->k = k;
    rw->n = n;
    rw->m = j.m;
    rw->pass = 1;
    judge(&view, hy, y64, mag64, rw);
    if (j.m > refm) {
      /* and the last row, which a second launch writes where the last
      ** rows run apart (lb_op_tail) */
      lb_case last = c;
      const size_t at = (size_t)(j.m - 1) * (size_t)n *
                        (size_t)lb_dtype_size(c.f.out);
      double *ly = y64 + (size_t)refm * n, *lmag = mag64 + (size_t)refm * n;
      last.m = 1;
      last.x = (char *)c.x + (size_t)(j.m - 1) * (size_t)k *
                                 (size_t)lb_dtype_size(c.f.act);
      if (!lb_case_reference(&last, ly, lmag)) {
        complain(e, "%s %dx%d: %s", lb_recipe_name(r), k, n, lb_errmsg());
        goto fail;
      }
      judge(&last, (char *)hy + at, ly, lmag, rw);
    }
    if (!run_cublas(&j)) goto fail;
    CK(cudaDeviceSynchronize());
    rw->cublas_err = cublas_error(&view, &j, y64);
    rw->us = lb_time_it(&e->t, run_lowbit, &j);
    rw->cublas_us = lb_time_it(&e->t, run_cublas, &j);
    if (rw->us <= 0 || rw->cublas_us <= 0) goto fail;
    rw->bytes = (double)(c.packed_bytes + c.scale_bytes + c.zero_bytes +
                         c.bias_bytes) +
                (double)j.m * k * lb_dtype_size(c.f.act) +
                (double)j.m * n * lb_dtype_size(c.f.out);
    if (e->have_floor && lb_floor_size(&e->fl, (size_t)rw->bytes))
      rw->floor_us = lb_time_it(&e->t, lb_floor_launch, &e->fl);
    if (rw->floor_us < 0) rw->floor_us = 0;
    if (o->flush == LB_FLUSH_BOTH) {   /* again, after a memset each */
      e->t.write = 1;
      rw->us_w = lb_time_it(&e->t, run_lowbit, &j);
      rw->cublas_us_w = lb_time_it(&e->t, run_cublas, &j);
      if (e->have_floor && lb_floor_size(&e->fl, (size_t)rw->bytes))
        rw->floor_us_w = lb_time_it(&e->t, lb_floor_launch, &e->fl);
      e->t.write = 0;
      if (rw->us_w <= 0 || rw->cublas_us_w <= 0) goto fail;
      if (rw->floor_us_w < 0) rw->floor_us_w = 0;
      rw->gbs_w = rw->bytes / (rw->us_w * 1e-6) / 1e9;
    }
    rw->gbs = rw->bytes / (rw->us * 1e-6) / 1e9;
    rw->pct = 100.0 * rw->bytes / (rw->us * 1e-6) / e->copy_bw;
    {   /* the kernel this m used (a GEMM bucket compiled on its first run) */
      lb_compile_info mi;
      if (lb_op_info_m(op, j.m, &mi) == LB_OK) info = mi;
    }
    rw->compile_s = info.seconds;
    rw->launch_us = host_launch_us(&j);
    rw->cache = info.cache;
    rw->regs = info.regs;
    lb_progress_clear(&e->pg);
    {   /* where the kernel's plan came from: a table changes what is timed */
      static const char *const from[] = {"rules", "table", "env", "set"};
      /* lb_plan_from's order */
      char plan[LB_PLAN_LEN];
      lb_plan_from pf = LB_PLAN_RULES;
      if (lb_op_plan(op, j.m, plan, &pf) != LB_OK) pf = LB_PLAN_RULES;
      /* GEMM rows: the arithmetic rate, against cuBLAS's and the ceiling
      ** of mma.sync on this device (the GEMV's is bytes, above) */
      char rate[128] = "", apart[40] = "", wr[112] = "";
      int tail = 0;
      if (lb_op_tail(op, j.m, &tail) == LB_OK && tail > 0)
        snprintf(apart, sizeof apart, "  last %d rows apart", tail);
      if (j.m > 8) {
        const double fl = 2.0 * j.m * n * (double)k / 1e12;
        snprintf(rate, sizeof rate, "  %.0f TFLOP/s (cuBLAS %.0f, mma.sync "
                 "%.0f)%s", fl / (rw->us * 1e-6), fl / (rw->cublas_us * 1e-6),
                 e->mma_tflops, apart);
      }
      if (o->flush == LB_FLUSH_BOTH)
        snprintf(wr, sizeof wr, "  memset flush: %.1f us  cuBLAS %.1f us  "
                 "x%.2f  read floor %.1f us", rw->us_w, rw->cublas_us_w,
                 rw->cublas_us_w / rw->us_w, rw->floor_us_w);
      printf("%-14s %5dx%-5d m=%d  %8.1f us  cuBLAS %8.1f us  x%5.2f  "
             "%6.0f GB/s %5.1f%%  read floor %.1f us (%.0f%%)  err %.1e %s  "
             "regs %d  launch %.2f us  plan %s%s%s\n",
             rw->recipe, k, n, j.m, rw->us, rw->cublas_us,
             rw->cublas_us / rw->us, rw->gbs, rw->pct, rw->floor_us,
             100.0 * rw->floor_us / rw->us, rw->err,
             rw->pass ? "ok" : "FAIL", rw->regs, rw->launch_us, from[pf], rate,
             wr);
    }
    fflush(stdout);
    if (!rw->pass) ok = 0;
    e->nrows++;
  }
  goto done;
fail:
  ok = 0;
done:
  lb_progress_clear(&e->pg);
  cudaFree(j.ws);
  lb_op_destroy(op);
  lb_free_weights(&j.w);
  cudaFree(j.x);
  cudaFree(j.wdense);
  cudaFree(j.ydense);
  cudaFree(ybuf);
  free(y64);
  free(mag64);
  free(hy);
  free(dense);
  lb_case_free(&c);
  return ok;
}

/* ---- results ------------------------------------------------------------ */

/* 0 (and why, on stderr) where f could not be written and closed. */
static int closed(FILE *f, const char *path) {
  const int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    fprintf(stderr, "lowbit: cannot write %s: %s\n", path, strerror(errno));
    return 0;
  }
  return 1;
}

static FILE *create(const char *path) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    fprintf(stderr, "lowbit: cannot write %s: %s\n", path, strerror(errno));
  return f;
}

/* results.csv, results.json and a plot per recipe into the output
** directory; 0 where one could not be written (each said).  With both
** flushes the columns of a one-flush run keep their meaning (the read
** flush's), and the memset flush's follow as *_write. */
static int write_results(const env *e) {
  const int both = e->o->flush == LB_FLUSH_BOTH;
  char path[4096];
  FILE *f;
  int i, a, s, ok = 1;
  snprintf(path, sizeof path, "%s/results.csv", e->o->outdir);
  if ((f = create(path)) == NULL) {
    ok = 0;
  } else {
    fprintf(f, "recipe,k,n,m,lowbit_us,cublas_us,speedup,gbs,pct_copy,"
               "floor_us,rel_err,cublas_rel_err,pass,compile_s,cache,regs,"
               "launch_us%s\n", both ? ",lowbit_us_write,cublas_us_write,"
               "speedup_write,gbs_write,floor_us_write" : "");
    for (i = 0; i < e->nrows; i++) {
      const row *r = &e->rows[i];
      fprintf(f, "%s,%d,%d,%d,%.2f,%.2f,%.3f,%.1f,%.1f,%.2f,%.3e,%.3e,%d,%.3f,"
                 "%d,%d,%.3f",
              r->recipe, r->k, r->n, r->m, r->us, r->cublas_us,
              r->cublas_us / r->us, r->gbs, r->pct, r->floor_us, r->err,
              r->cublas_err,
              r->pass, r->compile_s, r->cache, r->regs, r->launch_us);
      if (both)
        fprintf(f, ",%.2f,%.2f,%.3f,%.1f,%.2f", r->us_w, r->cublas_us_w,
                r->cublas_us_w / r->us_w, r->gbs_w, r->floor_us_w);
      fputc('\n', f);
    }
    ok &= closed(f, path);
  }
  snprintf(path, sizeof path, "%s/results.json", e->o->outdir);
  if ((f = create(path)) == NULL) {
    ok = 0;
  } else {
    static const char *const flush[] = {"read", "write", "both"};
    fprintf(f, "{\"copy_gbs\": %.1f, \"flush\": \"%s\", \"rows\": [\n",
            e->copy_bw / 1e9, flush[e->o->flush]);
    for (i = 0; i < e->nrows; i++) {
      const row *r = &e->rows[i];
      fprintf(f, "  {\"recipe\": \"%s\", \"k\": %d, \"n\": %d, \"m\": %d, "
                 "\"lowbit_us\": %.2f, \"cublas_us\": %.2f, \"gbs\": %.1f, "
                 "\"pct_copy\": %.1f, \"floor_us\": %.2f, \"rel_err\": %.3e, "
                 "\"cublas_rel_err\": %.3e, \"pass\": %s, "
                 "\"compile_s\": %.3f, \"cache\": %d, \"regs\": %d, "
                 "\"launch_us\": %.3f",
              r->recipe, r->k, r->n, r->m, r->us, r->cublas_us, r->gbs, r->pct,
              r->floor_us, r->err, r->cublas_err, r->pass ? "true" : "false", r->compile_s,
              r->cache, r->regs, r->launch_us);
      if (both)
        fprintf(f, ", \"lowbit_us_write\": %.2f, \"cublas_us_write\": %.2f, "
                   "\"gbs_write\": %.1f, \"floor_us_write\": %.2f",
                r->us_w, r->cublas_us_w, r->gbs_w, r->floor_us_w);
      fprintf(f, "}%s\n", i + 1 < e->nrows ? "," : "");
    }
    fprintf(f, "]}\n");
    ok &= closed(f, path);
  }
  /* one plot per recipe: speed-up over cuBLAS against M, a line per shape */
  for (a = 0; a < e->nrows; a++) {
    lb_series ser[LB_BENCH_MAX];
    int ns = 0, seen = 0;
    char title[160];
    for (i = 0; i < a; i++)
      if (strcmp(e->rows[i].recipe, e->rows[a].recipe) == 0) seen = 1;
    if (seen) continue;
    for (i = a; i < e->nrows; i++) {
      const row *r = &e->rows[i];
      if (strcmp(r->recipe, e->rows[a].recipe) != 0) continue;
      for (s = 0; s < ns; s++) {
        char lab[64];
        snprintf(lab, sizeof lab, "%d x %d", r->k, r->n);
        if (strcmp(lab, ser[s].label) == 0) break;
      }
      if (s == ns) {
        if (ns == LB_BENCH_MAX) continue;
        memset(&ser[ns], 0, sizeof ser[ns]);
        snprintf(ser[ns].label, sizeof ser[ns].label, "%d x %d", r->k, r->n);
        ns++;
      }
      if (ser[s].npts < LB_SVG_MAXPTS) {
        ser[s].x[ser[s].npts] = r->m;
        ser[s].y[ser[s].npts] = r->cublas_us / r->us;
        ser[s].npts++;
      }
    }
    snprintf(title, sizeof title, "%s: speed-up over cuBLAS fp16 (K x N)",
             e->rows[a].recipe);
    snprintf(path, sizeof path, "%s/%s.svg", e->o->outdir, e->rows[a].recipe);
    if (!lb_svg_write(path, title, "M (rows)", "cuBLAS time / lowbit time",
                      ser, ns, 1.0)) {
      fprintf(stderr, "lowbit: cannot write %s\n", path);
      ok = 0;
    }
  }
  return ok;
}

/* 0 where device can be used; else 2, and "no GPU: ...; nothing was run"
** (or "no usable GPU") on stderr, what lb_bench_run says first. */
static int no_gpu(int device) {
  lb_ctx *c = NULL;
  lb_status ls;
  cudaError_t ce;
  int count = 0;
  /* lowbit's own probe names the cause (no driver, no device) better
  ** than the runtime's "driver version is insufficient" */
  if ((ls = lb_ctx_create(device, &c)) == LB_ENODEV) {
    fprintf(stderr, "no GPU: %s; nothing was run\n", lb_errmsg());
    return 2;
  }
  lb_ctx_destroy(c);
  ce = cudaGetDeviceCount(&count);
  if (ls != LB_OK || ce != cudaSuccess || count <= device) {
    fprintf(stderr, "no usable GPU: %s; nothing was run\n",
            ls != LB_OK ? lb_errmsg()
            : ce != cudaSuccess ? cudaGetErrorString(ce) : "no CUDA device");
    return 2;
  }
  return 0;
}

int lb_bench_run(const lb_bench_opts *o) {
  static const char *const flushes[] = {
    "a read", "a write (memset)",
    "a read, and by a memset in the columns marked w"
  };
  env e;
  int i, s, failed = 0, total, wide = 14;
  struct cudaDeviceProp prop;
  memset(&e, 0, sizeof e);
  lb_progress_init(&e.pg, o->nrecipes * o->nshapes);
  if (no_gpu(o->device)) return 2;
  e.o = o;
  e.seed = 20261122;
  total = o->nrecipes * o->nshapes * o->nm;
  e.rows = calloc((size_t)total + 1, sizeof(row));
  if (!e.rows) goto fail;
  CK(cudaSetDevice(o->device));
  CK(cudaGetDeviceProperties(&prop, o->device));
  CK(cudaFree(0));  /* make the primary context current */
  if (!lb_timer_init(&e.t, o->warmup, o->iters, o->flush == LB_FLUSH_WRITE))
    goto fail;
  if (lb_ctx_create(o->device, &e.ctx) != LB_OK) {
    fprintf(stderr, "lb_ctx_create: %s\n", lb_errmsg());
    goto fail;
  }
  if (cublasCreate(&e.h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublasCreate failed\n");
    goto fail;
  }
  e.copy_bw = copy_bandwidth(&e.t);
  e.have_floor = lb_floor_init(&e.fl, prop.major * 10 + prop.minor,
                               prop.multiProcessorCount);
  e.mma_tflops = lb_mma_ceiling(prop.major * 10 + prop.minor,
                                prop.multiProcessorCount);
  printf("device: %s, %d SMs, L2 %d MB; copy bandwidth %.0f GB/s "
         "(read + write), mma.sync f16 %.0f TFLOP/s; %d iterations, median, "
         "L2 flushed by %s\n",
         prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
         e.copy_bw / 1e9, e.mma_tflops, o->iters, flushes[o->flush]);
  for (i = 0; i < o->nrecipes; i++) {
    lb_recipe *r;
    if (lb_recipe_load(o->recipes[i], &r) != LB_OK) {
      fprintf(stderr, "%s\n", lb_errmsg());
      failed = 1;
      continue;
    }
    for (s = 0; s < o->nshapes; s++) {
      e.pg.at = i * o->nshapes + s + 1;
      if (!bench_shape(&e, r, o->k[s], o->n[s])) failed = 1;
    }
    lb_recipe_free(r);
  }
  if (o->outdir && !write_results(&e)) failed = 1;
  /* summary: every row, last, so a log's tail holds it; the recipe's
  ** column as wide as its longest name */
  for (i = 0; i < e.nrows; i++)
    if ((int)strlen(e.rows[i].recipe) > wide) wide = (int)strlen(e.rows[i].recipe);
  printf("\n%-*s %-11s %3s %9s %9s %7s %7s %6s %8s %6s", wide, "recipe",
         "K x N", "M", "lowbit us", "cuBLAS us", "speedup", "GB/s", "%copy",
         "floor us", "%floor");
  if (o->flush == LB_FLUSH_BOTH)
    printf(" %9s %9s %7s %8s", "w lowbit", "w cuBLAS", "w speed", "w floor");
  printf(" %s\n", "check");
  for (i = 0; i < e.nrows; i++) {
    const row *r = &e.rows[i];
    char shape[32];
    snprintf(shape, sizeof shape, "%dx%d", r->k, r->n);
    printf("%-*s %-11s %3d %9.1f %9.1f %7.2f %7.0f %6.1f %8.1f %6.1f", wide,
           r->recipe, shape, r->m, r->us, r->cublas_us, r->cublas_us / r->us,
           r->gbs, r->pct, r->floor_us, 100.0 * r->floor_us / r->us);
    if (o->flush == LB_FLUSH_BOTH)
      printf(" %9.1f %9.1f %7.2f %8.1f", r->us_w, r->cublas_us_w,
             r->cublas_us_w / r->us_w, r->floor_us_w);
    printf(" %s\n", r->pass ? "ok" : "FAIL");
  }
  goto done;
fail:
  failed = 1;
done:
  lb_progress_clear(&e.pg);
  if (e.h) cublasDestroy(e.h);
  lb_timer_free(&e.t);
  lb_ctx_destroy(e.ctx);
  lb_floor_free(&e.fl);
  free(e.rows);
  return failed;
}
