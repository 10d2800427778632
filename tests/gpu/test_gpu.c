/*
** test_gpu.c: every recipe against the float64 reference on a GPU.
**
** For each recipe, several shapes (K equal to the group size, N not a
** multiple of a block, K not a multiple of the packing tile) and M = 1..8:
** fresh random inputs each time, output poisoned (NaN) before the run and
** guarded past its end, bias present and absent, the default and a
** created stream; the GPU packer against the host's.  Exits 77 (skipped)
** when there is no GPU, saying why.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_layout.h"
#include "lb_recipe.h"
#include "lb_ref.h"
#include "lb_sweep.h"
#include "lb_test.h"
#include "lb_timer.h"
#include "lb_tuner.h"
#include "lowbit.h"

#define GUARD 256

static int checks;
#define failures lb_test_failures
/* counts every check, then lb_test.h's CHECK */
#define GCHECK(...) do { checks++; CHECK(__VA_ARGS__); } while (0)

static int splits_run;   /* GEMM cases that split K */
static int tails_run;    /* GEMM cases whose last rows ran apart */
static int streams_run;  /* unsplit cases run on two streams at once */

/* Copies y back and checks it against the reference: all written, finite,
** within the bound, nothing past the end.  *err: the error over its bound;
** *rel: the relative error. */
static int check_y(const lb_case *c, const void *dy, unsigned char *hy,
                   const double *y64, const double *mag64, const char *what,
                   double *err, double *rel) {
  size_t bad = 0, i;
  int ok = 1;
  cudaMemcpy(hy, dy, c->y_bytes + GUARD, cudaMemcpyDeviceToHost);
  for (i = 0; i < GUARD; i++) ok &= hy[c->y_bytes + i] == 0xff;
  GCHECK(ok, "%s: wrote past the end of y", what);
  *rel = lb_rel_error(c, hy, y64, &bad);
  GCHECK(bad == 0, "%s: %zu outputs not written or not finite", what, bad);
  ok = lb_check(c, hy, y64, mag64, err, &bad);
  GCHECK(ok, "%s: relative error %.3e is %.2f times its bound", what, *rel,
         *err);
  return ok;
}

/* The op run four times on each of two streams at once, interleaved:
** into dy (work space ws) on s1 and dy2 (ws2) on s2, bytes of work space
** each (0: none).  Both outputs, copied back into h2 and h3, must equal
** h1, the checked result, bit for bit.  0 where a run failed (said). */
static int streams_agree(const lb_op *op, const lb_case *c,
                         const lb_weights *w, const void *dx, int m,
                         size_t bytes, void *dy, void *ws, cudaStream_t s1,
                         void *dy2, void *ws2, cudaStream_t s2,
                         const unsigned char *h1, unsigned char *h2,
                         unsigned char *h3, const char *what) {
  int i;
  for (i = 0; i < 4; i++) {
    lb_status a = lb_op_run_ws(op, m, dx, w, dy, ws, bytes, s1);
    lb_status b = lb_op_run_ws(op, m, dx, w, dy2, ws2, bytes, s2);
    if (a != LB_OK || b != LB_OK) {
      GCHECK(0, "%s: two streams: %s", what, lb_errmsg());
      return 0;
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) {
    GCHECK(0, "%s: two streams: kernel failed", what);
    return 0;
  }
  cudaMemcpy(h2, dy, c->y_bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(h3, dy2, c->y_bytes, cudaMemcpyDeviceToHost);
  GCHECK(memcmp(h1, h2, c->y_bytes) == 0 && memcmp(h1, h3, c->y_bytes) == 0,
         "%s: two streams at once changed the result", what);
  return 1;
}

/* Split-K, where the op's plan for m splits.  The result is checked
** against the reference; then the op runs on two streams at once, each
** with its own output (and work space), four times each, interleaved:
** both outputs must equal the first result bit for bit (the splits are
** added in a fixed order).  With a work space, one a float short is
** refused.  Where the splits meet in a cluster (sm_90), the op then takes
** the work-space plan (cl=0) and does all of that again: the two must
** agree bit for bit (the same sums, added in the same order). */
static void split_case(lb_op *op, const lb_case *c, const lb_weights *w,
                       const void *dx, int m, int n, int k,
                       cudaStream_t stream, const double *y64,
                       const double *mag64) {
  size_t bytes = 0;
  void *ws = NULL, *ws2 = NULL, *dy = NULL, *dy2 = NULL;
  unsigned char *h1 = NULL, *h2 = NULL, *h3 = NULL, *hc = NULL;
  cudaStream_t s2 = NULL;
  char what[128], plan[LB_PLAN_LEN];
  int sp = 1, cl = 0, pass, set = 0;
  lb_plan_from from;
  GCHECK(lb_op_splits(op, m, &sp, &cl) == LB_OK, "lb_op_splits: %s",
         lb_errmsg());
  if (sp == 1) return;
  splits_run++;
  h1 = malloc(c->y_bytes + GUARD);
  h2 = malloc(c->y_bytes + GUARD);
  h3 = malloc(c->y_bytes + GUARD);
  hc = malloc(c->y_bytes + GUARD);
  if (!h1 || !h2 || !h3 || !hc ||
      cudaMalloc(&dy, c->y_bytes + GUARD) != cudaSuccess ||
      cudaMalloc(&dy2, c->y_bytes + GUARD) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess) {
    GCHECK(0, "split-K m=%d: allocation failed", m);
    goto done;
  }
  for (pass = 0; pass < 2; pass++) {
    double err = 0, rel = 0;
    GCHECK(lb_op_workspace(op, m, &bytes) == LB_OK, "lb_op_workspace: %s",
           lb_errmsg());
    GCHECK(lb_op_splits(op, m, &sp, &cl) == LB_OK && sp > 1 &&
               (bytes == 0) == (cl == 1),
           "split-K m=%d: %d splits, cluster %d, work space %zu bytes", m,
           sp, cl, bytes);
    snprintf(what, sizeof what, "split-K m=%d n=%d k=%d (%d ways, %s)", m, n,
             k, sp, cl ? "in a cluster" : "work space");
    if (bytes) {
      cudaFree(ws);
      cudaFree(ws2);
      ws = ws2 = NULL;
      if (cudaMalloc(&ws, bytes) != cudaSuccess ||
          cudaMalloc(&ws2, bytes) != cudaSuccess) {
        GCHECK(0, "%s: allocation failed", what);
        goto done;
      }
      cudaMemset(ws, 0xff, bytes);   /* NaN: every sum must be written */
      cudaMemset(ws2, 0xff, bytes);
      GCHECK(lb_op_run_ws(op, m, dx, w, dy, ws, bytes - 4, stream) == LB_EARG,
             "%s: a work space one float short accepted", what);
    }
    cudaMemset(dy, 0xff, c->y_bytes + GUARD);
    cudaDeviceSynchronize();
    if (lb_op_run_ws(op, m, dx, w, dy, ws, bytes, stream) != LB_OK) {
      GCHECK(0, "%s: lb_op_run_ws: %s", what, lb_errmsg());
      goto done;
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess) {
      GCHECK(0, "%s: kernel failed: %s", what,
             cudaGetErrorString(cudaGetLastError()));
      goto done;
    }
    if (!check_y(c, dy, h1, y64, mag64, what, &err, &rel)) goto done;
    cudaMemset(dy, 0xff, c->y_bytes + GUARD);
    cudaDeviceSynchronize();
    if (!streams_agree(op, c, w, dx, m, bytes, dy, ws, stream, dy2, ws2, s2,
                       h1, h2, h3, what))
      goto done;
    if (pass == 1) {
      GCHECK(memcmp(h1, hc, c->y_bytes) == 0,
             "%s: differs from the cluster's sums", what);
      break;
    }
    if (!cl) break;
    /* the same plan with a work space (cl=0: one knob changed) */
    memcpy(hc, h1, c->y_bytes);
    if (lb_op_plan(op, m, plan, &from) != LB_OK || strstr(plan, "cl=1") == NULL) {
      GCHECK(0, "%s: plan \"%s\" names no cl=1", what, plan);
      goto done;
    }
    strstr(plan, "cl=1")[3] = '0';
    if (lb_op_set_plan(op, m, plan) != LB_OK) {
      GCHECK(0, "%s: lb_op_set_plan(%s): %s", what, plan, lb_errmsg());
      goto done;
    }
    set = 1;
  }
done:
  if (set) lb_op_set_plan(op, m, NULL);
  if (s2) cudaStreamDestroy(s2);
  cudaFree(ws);
  cudaFree(ws2);
  cudaFree(dy);
  cudaFree(dy2);
  free(h1);
  free(h2);
  free(h3);
  free(hc);
}

/* Two streams at once where split_case does not run (the GEMV, or a
** GEMM that does not split K): the op runs four times on each, interleaved,
** into two outputs, which must both equal the checked result h1 bit for
** bit.  Up to 128 rows (the copies back are the cost). */
static void two_streams(lb_op *op, const lb_case *c, const lb_weights *w,
                        const void *dx, void *dy, int m, cudaStream_t stream,
                        const unsigned char *h1, const char *what) {
  void *dy2 = NULL;
  unsigned char *h2 = malloc(c->y_bytes), *h3 = malloc(c->y_bytes);
  cudaStream_t s2 = NULL;
  int sp = 1, cl = 0;
  if (m > 128 || lb_op_splits(op, m, &sp, &cl) != LB_OK || (m > LB_MAX_M && sp > 1))
    goto done;
  if (!h2 || !h3 || cudaMalloc(&dy2, c->y_bytes) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess) {
    GCHECK(0, "%s: two streams: allocation failed", what);
    goto done;
  }
  streams_run++;
  cudaMemset(dy, 0xff, c->y_bytes);
  cudaMemset(dy2, 0xff, c->y_bytes);
  cudaDeviceSynchronize();
  streams_agree(op, c, w, dx, m, 0, dy, NULL, stream, dy2, NULL, s2, h1, h2,
                h3, what);
done:
  if (s2) cudaStreamDestroy(s2);
  cudaFree(dy2);
  free(h2);
  free(h3);
}

/* This device's SMs and arch (10 major + minor). */
static void device_of(int *sms, int *arch) {
  int dev = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  *arch = 10 * major + minor;
}

/* One (shape, m) run; returns the error over its bound (or -1 on error)
** and the relative error in *rel. */
static double run_case(lb_ctx *ctx, const lb_recipe *r, int m, int n, int k,
                       uint64_t seed, int with_bias, cudaStream_t stream,
                       double *rel) {
  lb_case c;
  lb_op *op = NULL;
  lb_weights w;
  double *y64 = NULL, *mag64 = NULL, err = -1;
  unsigned char *hy = NULL;
  void *dx = NULL, *dy = NULL;
  char what[96];
  memset(&w, 0, sizeof w);
  if (!lb_case_make(&c, r, m, n, k, seed)) {
    GCHECK(0, "lb_case_make: %s", lb_errmsg());
    return -1;
  }
  if (!with_bias && c.bias) {
    free(c.bias);
    c.bias = NULL;
    c.bias_bytes = 0;
  }
  y64 = malloc(sizeof(double) * (size_t)m * (size_t)n);
  mag64 = malloc(sizeof(double) * (size_t)m * (size_t)n);
  hy = malloc(c.y_bytes + GUARD);
  if (!y64 || !mag64 || !hy) goto done;
  if (!lb_case_reference(&c, y64, mag64)) {
    GCHECK(0, "reference: %s", lb_errmsg());
    goto done;
  }
  lb_upload_weights(&c, &w);
  dx = lb_upload(c.x, c.x_bytes);
  if (cudaMalloc(&dy, c.y_bytes + GUARD) != cudaSuccess) dy = NULL;
  if (!w.packed || !w.scales || !dx || !dy) {
    GCHECK(0, "device allocation failed");
    goto done;
  }
  /* NaN in every float type; finished before the launch, which may be on
  ** a stream that does not wait for the legacy stream */
  if (cudaMemset(dy, 0xff, c.y_bytes + GUARD) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    GCHECK(0, "poisoning y failed");
    goto done;
  }
  if (lb_op_create(ctx, r, n, k, &op) != LB_OK) {
    GCHECK(0, "lb_op_create n=%d k=%d: %s", n, k, lb_errmsg());
    goto done;
  }
  if (lb_op_run(op, m, dx, &w, dy, stream) != LB_OK) {
    GCHECK(0, "lb_op_run m=%d n=%d k=%d: %s", m, n, k, lb_errmsg());
    goto done;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess ||
      cudaGetLastError() != cudaSuccess) {
    GCHECK(0, "kernel failed: %s", cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  {
    int tail = 0;
    GCHECK(lb_op_tail(op, m, &tail) == LB_OK && tail >= 0 && tail < m,
           "lb_op_tail m=%d: %d rows (%s)", m, tail, lb_errmsg());
    tails_run += tail > 0;
    snprintf(what, sizeof what, "m=%d n=%d k=%d bias=%d%s", m, n, k,
             with_bias, tail ? " (last rows apart)" : "");
  }
  {   /* the work space asked without a GPU is the op's (no table here) */
    size_t opb = 1, cpub = 2;
    int sms = 0, arch = 0;
    device_of(&sms, &arch);
    GCHECK(lb_op_workspace(op, m, &opb) == LB_OK &&
               lb_workspace_for(r, n, k, m, sms, arch,
                                &cpub) == LB_OK &&
               opb == cpub,
           "m=%d n=%d k=%d: lb_workspace_for %zu bytes, lb_op_workspace "
           "%zu (%s)", m, n, k, cpub, opb, lb_errmsg());
  }
  if (check_y(&c, dy, hy, y64, mag64, what, &err, rel))
    two_streams(op, &c, &w, dx, dy, m, stream, hy, what);
  if (m > LB_MAX_M) split_case(op, &c, &w, dx, m, n, k, stream, y64, mag64);
done:
  lb_op_destroy(op);
  lb_free_weights(&w);
  cudaFree(dx);
  cudaFree(dy);
  free(y64);
  free(mag64);
  free(hy);
  lb_case_free(&c);
  return err;
}

/* The worst of a series of runs: error over its bound, relative error. */
typedef struct worst {
  double e, rel;
} worst;
static void run_worst(lb_ctx *ctx, const lb_recipe *r, int m, int n, int k,
                      uint64_t seed, int bias, cudaStream_t stream, worst *w) {
  double rel = 0;
  const double e = run_case(ctx, r, m, n, k, seed, bias, stream, &rel);
  if (e > w->e) w->e = e;
  if (rel > w->rel) w->rel = rel;
}

/* The root mean square of count values of type t at p. */
static double rms_of(lb_dtype t, const void *p, size_t count) {
  double sum = 0;
  size_t i;
  for (i = 0; i < count; i++) {
    const double v = lb_load(t, p, i);
    sum += v * v;
  }
  return sqrt(sum / (double)count);
}

/* Multiplies count values of type t at p by 2^-e, e the nearest integer
** to log2(size). */
static void scale_down(lb_dtype t, void *p, size_t count, double size) {
  const double f = ldexp(1, -(int)lround(log2(size)));
  size_t i;
  for (i = 0; i < count; i++) lb_store(t, p, i, lb_load(t, p, i) * f);
}

/* Each run multiplies the size of its input by about g = sqrt(k mean(w^2))
** (26 for 2-bit per-channel codes at k = 1024, about 150 for 7-bit ones
** at k = 16384, where x / 64, the scaling this replaced, let the third
** run overflow f16).  x and the bias scaled by powers of two (exact but
** where they become subnormal, and the reference reads the stored values)
** so that the second run's outputs are about 1: the first input about
** g^-1.5, the third output about g^1.5, and the bias about as large as
** the first run's products, so that it never outgrows them. */
static void chain_scale(lb_case *c) {
  const int rows = c->n < 16 ? c->n : 16;
  const size_t nx = (size_t)c->m * (size_t)c->k;
  double w2 = 0, g, xr, br;
  for (int j = 0; j < rows; j++)
    for (int kk = 0; kk < c->k; kk++) {
      const double w = lb_case_weight(c, j * (c->n / rows), kk);
      w2 += w * w;
    }
  g = sqrt(w2 / rows);
  xr = rms_of(c->f.act, c->x, nx);
  if (!(g > 0 && xr > 0)) return;   /* (no growth to measure: as made) */
  scale_down(c->f.act, c->x, nx, xr * pow(g, 1.5));
  if (!c->bias) return;
  br = rms_of(c->f.out, c->bias, (size_t)c->n);
  if (br > 0) scale_down(c->f.out, c->bias, (size_t)c->n, br * sqrt(g));
}

/* lb_op_overlap: three runs back to back on one stream, each started
** before the one ahead ends (programmatic dependent launch), each reading
** what the one before wrote and overwriting what it read: x = A -> B,
** B -> A, A -> C (n = k; the recipe's output type is its activation
** type).  Each output is checked against the float64 reference of the
** input it should have read, copied back from the GPU; with split K the
** runs share one work space, which each writes while the one before may
** still read it.  A kernel that read x, or wrote y or the work space,
** before the previous kernel ended would fail these checks. */
static void overlap_case(lb_ctx *ctx, const lb_recipe *r, int m, int n,
                         uint64_t seed, cudaStream_t stream) {
  lb_case c;
  lb_op *op = NULL;
  lb_weights w;
  void *d[3] = {NULL, NULL, NULL}, *ws = NULL;
  unsigned char *hy = NULL, *x0 = NULL;   /* y copied back; the first x */
  double *y64 = NULL, *mag64 = NULL;
  size_t bytes = 0;
  const int in[3] = {0, 1, 0}, out[3] = {1, 0, 2};
  char what[96];
  int i, ok = 1;
  lb_status st;
  memset(&w, 0, sizeof w);
  if (r->out != r->act) {
    printf("  overlap: not checked (output type is not the activation "
           "type, so runs do not chain)\n");
    return;
  }
  if (!lb_case_make(&c, r, m, n, n, seed)) {
    GCHECK(0, "lb_case_make: %s", lb_errmsg());
    return;
  }
  chain_scale(&c);
  if (lb_op_create(ctx, r, n, n, &op) != LB_OK) {
    GCHECK(0, "overlap: lb_op_create: %s", lb_errmsg());
    goto done;
  }
  if ((st = lb_op_overlap(op, 1)) == LB_EUNSUP) {
    printf("  overlap: not checked (%s)\n", lb_errmsg());
    goto done;
  }
  GCHECK(st == LB_OK, "lb_op_overlap: %s", lb_errmsg());
  GCHECK(lb_op_workspace(op, m, &bytes) == LB_OK, "lb_op_workspace: %s",
         lb_errmsg());
  lb_upload_weights(&c, &w);
  y64 = malloc(sizeof(double) * (size_t)m * (size_t)n);
  mag64 = malloc(sizeof(double) * (size_t)m * (size_t)n);
  hy = malloc(c.y_bytes + GUARD);
  x0 = malloc(c.x_bytes);
  for (i = 0; i < 3; i++) {
    if (cudaMalloc(&d[i], c.y_bytes + GUARD) != cudaSuccess) d[i] = NULL;
    ok &= d[i] != NULL &&
          cudaMemset(d[i], 0xff, c.y_bytes + GUARD) == cudaSuccess;
  }
  if (bytes && cudaMalloc(&ws, bytes) != cudaSuccess) ws = NULL;
  if (!ok || !hy || !x0 || !y64 || !mag64 || !w.packed || !w.scales ||
      (bytes && !ws)) {
    GCHECK(0, "overlap: allocation failed");
    goto done;
  }
  cudaMemcpy(d[0], c.x, c.x_bytes, cudaMemcpyHostToDevice);
  memcpy(x0, c.x, c.x_bytes);   /* the first run's input */
  cudaDeviceSynchronize();
  for (i = 0; i < 3; i++)
    GCHECK(lb_op_run_ws(op, m, d[in[i]], &w, d[out[i]], ws, bytes, stream) ==
               LB_OK, "overlap: run %d: %s", i, lb_errmsg());
  if (cudaDeviceSynchronize() != cudaSuccess) {
    GCHECK(0, "overlap: kernel failed: %s",
           cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  /* each run's output, checked against the reference of the input it
  ** should have read: the first input, then each output in turn */
  memcpy(c.x, x0, c.x_bytes);
  for (i = 0; i < 3; i++) {
    double err = 0, rel = 0;
    snprintf(what, sizeof what, "overlap run %d m=%d n=k=%d", i, m, n);
    if (!lb_case_reference(&c, y64, mag64)) {
      GCHECK(0, "reference: %s", lb_errmsg());
      break;
    }
    if (!check_y(&c, d[out[i]], hy, y64, mag64, what, &err, &rel)) break;
    memcpy(c.x, hy, c.x_bytes);   /* the next run's input */
  }
  printf("  overlap: m=%d n=k=%d, three runs chained%s\n", m, n,
         bytes ? ", sharing a work space" : "");
done:
  lb_op_destroy(op);
  lb_free_weights(&w);
  for (i = 0; i < 3; i++) cudaFree(d[i]);
  free(hy);
  free(x0);
  cudaFree(ws);
  free(y64);
  free(mag64);
  lb_case_free(&c);
}

/* Argument errors on a real op: each must be refused, none may launch. */
/* lb_pack_device against lb_pack: random codes of the recipe's width
** (K off the packing tile where the caller asks, so the zero tail is
** checked too), bit-identical words; then one code that does not fit,
** which must be refused with its position. */
static void pack_case(lb_ctx *ctx, const lb_recipe *r, int n, int k,
                      uint64_t seed, cudaStream_t stream) {
  lb_sizes sz;
  uint8_t *codes = NULL;
  uint32_t *want = NULL, *got = NULL;
  void *dcodes = NULL, *dpacked = NULL;
  size_t i, nk = (size_t)n * (size_t)k;
  const unsigned mask = r->bits < 8 ? (1u << r->bits) - 1u : 0xffu;
  if (lb_sizes_of(r, n, k, &sz) != LB_OK) {
    GCHECK(0, "pack n=%d k=%d: %s", n, k, lb_errmsg());
    return;
  }
  codes = malloc(nk);
  want = malloc(sz.packed);
  got = malloc(sz.packed);
  if (!codes || !want || !got) {
    GCHECK(0, "pack n=%d k=%d: no host memory", n, k);
    goto done;
  }
  for (i = 0; i < nk; i++) {   /* xorshift: every code value, no zeros bias */
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    codes[i] = (uint8_t)(seed >> 24) & mask;
  }
  GCHECK(lb_pack(r, n, k, codes, want) == LB_OK, "lb_pack: %s", lb_errmsg());
  dcodes = lb_upload(codes, nk);
  if (cudaMalloc(&dpacked, sz.packed) != cudaSuccess) dpacked = NULL;
  if (!dcodes || !dpacked) {
    GCHECK(0, "pack n=%d k=%d: device allocation failed", n, k);
    goto done;
  }
  cudaMemset(dpacked, 0xa5, sz.packed);   /* poisoned: every word written */
  cudaDeviceSynchronize();
  GCHECK(lb_pack_device(ctx, r, n, k, dcodes, dpacked, stream) == LB_OK,
         "lb_pack_device n=%d k=%d: %s", n, k, lb_errmsg());
  cudaMemcpy(got, dpacked, sz.packed, cudaMemcpyDeviceToHost);
  GCHECK(memcmp(got, want, sz.packed) == 0,
         "lb_pack_device n=%d k=%d: words differ from lb_pack's", n, k);
  if (r->bits < 8) {   /* one code too wide, somewhere in the middle */
    const size_t at = nk / 2 + 1;
    char where[64];
    const uint8_t wide = (uint8_t)(mask + 1);
    cudaMemcpy((char *)dcodes + at, &wide, 1, cudaMemcpyHostToDevice);
    snprintf(where, sizeof where, "[%d][%d]", (int)(at / (size_t)k),
             (int)(at % (size_t)k));
    GCHECK(lb_pack_device(ctx, r, n, k, dcodes, dpacked, stream) == LB_EARG &&
               strstr(lb_errmsg(), where) != NULL,
           "lb_pack_device n=%d k=%d: code %u at %s: \"%s\"", n, k, wide,
           where, lb_errmsg());
  }
  GCHECK(lb_pack_device(ctx, r, n, k, NULL, dpacked, stream) == LB_EARG &&
             lb_pack_device(ctx, r, n, k, dcodes, (char *)dpacked + 2,
                            stream) == LB_EARG &&
             lb_pack_device(ctx, r, n, k + 1, dcodes, dpacked, stream) ==
                 LB_EARG,
         "lb_pack_device accepted a NULL, misaligned or bad-k argument");
done:
  cudaFree(dcodes);
  cudaFree(dpacked);
  free(codes);
  free(want);
  free(got);
}

static void bad_args(lb_ctx *ctx, const lb_recipe *r) {
  lb_op *op = NULL;
  lb_weights w;
  void *buf = NULL;
  if (lb_op_create(ctx, r, 64, r->group ? r->group : 64, &op) != LB_OK) {
    GCHECK(0, "lb_op_create: %s", lb_errmsg());
    return;
  }
  cudaMalloc(&buf, 1 << 20);
  w.packed = buf;
  w.scales = buf;
  w.zeros = r->zeros ? buf : NULL;
  w.bias = NULL;
  GCHECK(lb_op_run(op, 0, buf, &w, buf, NULL) == LB_EARG, "m = 0 accepted");
  GCHECK(lb_op_run(op, LB_MAX_ROWS + 1, buf, &w, buf, NULL) == LB_EARG,
         "m = LB_MAX_ROWS + 1 accepted");
  GCHECK(lb_op_run(op, -1, buf, &w, buf, NULL) == LB_EARG, "m = -1 accepted");
  {
    int tail = 7;
    GCHECK(lb_op_tail(op, 0, &tail) == LB_EARG && tail == 0 &&
               lb_op_tail(op, LB_MAX_ROWS + 1, &tail) == LB_EARG &&
               lb_op_tail(op, 300, NULL) == LB_EARG,
           "lb_op_tail: m = 0, m past LB_MAX_ROWS or a NULL result accepted");
  }
  GCHECK(lb_op_run(op, 1, (char *)buf + 2, &w, buf, NULL) == LB_EARG,
        "misaligned x accepted");
  GCHECK(lb_op_run(op, 1, NULL, &w, buf, NULL) == LB_EARG, "NULL x accepted");
  w.packed = (char *)buf + 4;
  GCHECK(lb_op_run(op, 1, buf, &w, buf, NULL) == LB_EARG,
        "misaligned packed accepted");
  w.packed = buf;
  if (r->zeros) {
    w.zeros = NULL;
    GCHECK(lb_op_run(op, 1, buf, &w, buf, NULL) == LB_EARG,
          "NULL zeros accepted");
    w.zeros = buf;
  }
  if (!r->bias) {
    w.bias = buf;
    GCHECK(lb_op_run(op, 1, buf, &w, buf, NULL) == LB_EARG,
          "bias accepted by a recipe without bias");
  }
  GCHECK(strlen(lb_errmsg()) > 0, "refusal without a message");
  lb_op_destroy(op);
  cudaFree(buf);
}

static void reach_check(lb_ctx *ctx, const lb_recipe *r, uint64_t seed);

static void one(lb_ctx *ctx, const char *path, cudaStream_t stream) {
  lb_recipe *r;
  int g, t, m, s;
  uint64_t seed = 0x5eed;
  printf("%s\n", path);
  if (lb_recipe_load(path, &r) != LB_OK) {
    GCHECK(0, "load: %s", lb_errmsg());
    return;
  }
  g = r->group ? r->group : 32;
  {
    /* K = group, N not a multiple of any block, K off the tile, large */
    /* N: below, at and past one channel group; not a multiple of 16; a
    ** multiple of 16 but not of a block's channels (16, 48, 4112); K
    ** within a tile over more blocks than SMs (256 x 16384: one ring stage
    ** for wide codes); one tile of K over 256 channel groups (1024 x 4096:
    ** blocks of 2 warps for wide codes, a tile a warp, 7-bit codes in four
    ** copies, ph) */
    const int shapes[][2] = {{g, 1},      {g, 7},          {g, 16},
                             {g, 33},     {2 * g, 48},     {3 * g, 257},
                             {4096, 300}, {8192 + g, 1000}, {4096, 4112},
                             {256, 16384}, {1024, 4096}};
    for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
      worst w = {0, 0};
      for (m = 1; m <= 8; m++)
        run_worst(ctx, r, m, shapes[s][1], shapes[s][0], seed++ * 7919 + (uint64_t)m,
                  r->bias && (m + s) % 2, (m & 1) ? stream : NULL, &w);
      printf("  K=%-5d N=%-5d M=1..8: worst relative error %.2e, worst "
             "error/bound %.2f\n",
             shapes[s][0], shapes[s][1], w.rel, w.e);
    }
  }
  {
    /* The GEMM buckets (M > 8): every bucket, M on and off its tile
    ** height, N and K off every tile; large M on small layers so that the
    ** float64 reference stays fast. */
    static const int gm[][4] = {   /* M, N, K (0: the group), repeat */
        {9, 16, 0}, {16, 48, 0}, {17, 257, 0}, {31, 4112, 2048},
        {33, 300, 1024}, {64, 1000, 0}, {127, 300, 1024}, {128, 64, 0},
        {255, 4112, 512}, {1024, 256, 512}, {4096, 48, 0},
        /* split K (narrow, deep layers): 4 ways at 16, 64 and 100 rows */
        {16, 1000, 4096}, {64, 1000, 4096}, {100, 300, 2048},
        /* 2 ways at 12 rows: 128 tiles, split only to fill the second
        ** block an sm_90 holds (lb_gemm_cfg.fit) */
        {12, 4096, 8192},
        /* 9..16 rows of a layer past 4M weights at K = 4096: one block
        ** an SM of three stages, K split 2 ways (lb_gmplan.c two_16) */
        {16, 4096, 4096},
        /* the last rows apart (lb_op_tail): 1 row (the GEMV), 12, 16 and
        ** 44 rows (small GEMMs) after 128-, 256- and 1024-row parts, and
        ** after a part that splits K; 300 keeps one launch on 128-row tiles */
        {129, 300, 1024}, {140, 1000, 0}, {257, 4112, 512}, {300, 1000, 512},
        {1040, 256, 512}, {136, 1000, 4096},
        /* each side of 160 | 161 (sm_90: 128-row tiles with 32 rows apart,
        ** then one 256-row tile for codes within words), and 224 rows */
        {160, 300, 1024}, {161, 1000, 0}, {224, 1000, 1024},
        /* 257..384 on a wide layer (sm_90, 132 SMs: 128-row tiles for
        ** codes within words), whole and with 44 rows apart after 256 */
        {352, 14336, 256}, {300, 14336, 256},
        /* large M on a wide N (K the group); 8-bit codes' wgmma plan at
        ** 9..32 rows on sm_90 (layers wide enough for a wave of tiles) */
        {4096, 4112, 0}, {24, 4224, 1024}, {12, 8448, 1024}};
    worst w = {0, 0};
    for (s = 0; s < (int)(sizeof gm / sizeof gm[0]); s++) {
      int k = gm[s][2] ? gm[s][2] : g;
      if (r->group && k % r->group) k = r->group;
      run_worst(ctx, r, gm[s][0], gm[s][1], k, seed++ * 7919, r->bias && s % 2,
                s % 2 ? stream : NULL, &w);
    }
    printf("  GEMM M=9..4096: worst relative error %.2e, worst error/bound "
           "%.2f; %d case(s) split K, %d ran their last rows apart; %d "
           "(GEMV and GEMM, unsplit) on two streams at once\n",
           w.rel, w.e, splits_run, tails_run, streams_run);
    GCHECK(splits_run > 0, "no GEMM case split K");
    GCHECK(tails_run > 0, "no GEMM case ran its last rows apart");
    GCHECK(streams_run > 0, "no unsplit case ran on two streams");
    splits_run = tails_run = streams_run = 0;
  }
  reach_check(ctx, r, seed++);
  overlap_case(ctx, r, 5, 1024, seed++, stream);
  overlap_case(ctx, r, 40, 1024, seed++, stream);
  overlap_case(ctx, r, 129, 1024, seed++, stream);   /* two parts (lb_op_tail) */
  t = checks;
  pack_case(ctx, r, 7, g, seed++, stream);
  pack_case(ctx, r, 257, 3 * g, seed++, NULL);
  pack_case(ctx, r, 33, 8192 + g, seed++, stream);
  printf("  GPU packing: %d checks\n", checks - t);
  t = checks;
  bad_args(ctx, r);
  printf("  %d argument checks\n", checks - t);
  lb_recipe_free(r);
}

/* The pairwise sweep (lb_sweep.h): each recipe at its own K (which
** decides resident scales, chunked scales and the split) with N capped
** at 2048 so that the float64 reference stays fast, and at a small
** narrow shape; M = 1, 3, 8 (x resident in shared memory or not), 16,
** and 40 and 100 (the GEMM at 33..64 rows and from 65 rows).  Share
** `part` of `parts` takes every parts-th recipe, so that several processes
** can share the sweep (its time is NVRTC's). */
static void sweep(lb_ctx *ctx, cudaStream_t stream, int part, int parts) {
  static lb_sweep_row rows[256];
  int n = lb_sweep(rows, 256), i, s, mi;
  static const int ms[] = {1, 3, 8, 16, 40, 100};
  const int nm = (int)(sizeof ms / sizeof ms[0]);
  uint64_t seed = 0x5a5a;
  for (i = part; i < n; i += parts) {
    lb_recipe *r = NULL;
    worst w = {0, 0};
    int g;
    if (lb_recipe_load_text(rows[i].name, rows[i].text, strlen(rows[i].text),
                            &r) != LB_OK) {
      GCHECK(0, "%s: %s", rows[i].name, lb_errmsg());
      continue;
    }
    g = r->group ? r->group : 256;
    {
      const int shapes[2][2] = {
          {rows[i].k, rows[i].n < 2048 ? rows[i].n : 2048}, {g, 48}};
      for (s = 0; s < 2; s++)
        for (mi = 0; mi < nm; mi++)
          run_worst(ctx, r, ms[mi], shapes[s][1], shapes[s][0], seed++ * 7919,
                    r->bias && (mi + s) % 2, (mi & 1) ? stream : NULL, &w);
    }
    pack_case(ctx, r, 48, rows[i].k, seed++, stream);
    printf("  %-52s worst relative error %.2e, error/bound %.2f\n",
           rows[i].name, w.rel, w.e);
    lb_recipe_free(r);
  }
  printf("sweep: %d of %d recipes\n", (n - part + parts - 1) / parts, n);
}

/* Scales and zeros that travel in the ring with their tile's words (lazy
** plans with many group slots a tile whose scales are not resident: 3- to
** 7-bit codes in small groups at large K, and 1- to 8-bit ones at 1..8
** rows), for formats the shipped recipes do not take there: K off the
** packing tile, N off a channel group, M = 1..16 (narrow codes 1..8),
** f16, bf16 and f32 scales, with and without zeros.
** Each case's plan must be that one (lb_plan_gemv), so that the check
** cannot pass on another path. */
static void ring_check(lb_ctx *ctx, cudaStream_t stream) {
  static const char *const rec[] = {
      "name \"ring_w7_g32\"\nactivations \"f16\"\nweights { bits = 7 }\nscales { group = 32 }\n"
      "zeros { dtype = \"f16\" }\ndequant \"(q - z) * s\"\n",
      "name \"ring_w7s_g64\"\nactivations \"bf16\"\nweights { bits = 7, signed = true }\n"
      "scales { group = 64, dtype = \"bf16\" }\nzeros { dtype = \"bf16\" }\n"
      "dequant \"q * s + z\"\noutput \"f32\"\nepilogue { bias = true }\n",
      "name \"ring_w6_g32\"\nactivations \"f16\"\nweights { bits = 6 }\nscales { group = 32 }\n"
      "dequant \"q * s\"\n",
      "name \"ring_w3_g32_f32\"\nactivations \"f16\"\nweights { bits = 3 }\n"
      "scales { group = 32, dtype = \"f32\" }\nzeros { dtype = \"f32\" }\n"
      "dequant \"(q - z) * s\"\n",
      /* narrow codes, whose words are read where used for the ring's
      ** sake at 1..8 rows only (gen/lb_gvplan.c, plan) */
      "name \"ring_w1_g32\"\nactivations \"f16\"\nweights { bits = 1 }\nscales { group = 32 }\n"
      "zeros { dtype = \"f16\" }\ndequant \"(q - z) * s\"\n",
      "name \"ring_w4_g32_f32\"\nactivations \"bf16\"\nweights { bits = 4 }\n"
      "scales { group = 32, dtype = \"f32\" }\nzeros { dtype = \"f32\" }\n"
      "dequant \"q * s + z\"\nepilogue { bias = true }\n"};
  /* K = 16.5 tiles of 1024 (two tiles of 512 for 6 bits: 33; 66 tiles of
  ** 256 for 4 bits) */
  static const int shapes[][3] = {{1, 1000, 16896}, {3, 48, 16896},
                                  {8, 1000, 16896}, {16, 48, 16896}};
  uint64_t seed = 0x71a6;
  size_t i;
  int s, used = 0;
  for (i = 0; i < sizeof rec / sizeof rec[0]; i++) {
    lb_recipe *r = NULL;
    lb_layout lay;
    worst w = {0, 0};
    if (lb_recipe_load_text("ring.lua", rec[i], strlen(rec[i]), &r) != LB_OK) {
      GCHECK(0, "ring scales: %s", lb_errmsg());
      continue;
    }
    lb_layout_of(r, &lay);
    for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
      const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      lb_gemv_cfg cfg;
      if (m > lb_gemv_rows(r, n, k) || (lay.words <= 2 && m > LB_MAX_M))
        continue;
      GCHECK(lb_plan_gemv(r, n, k, m, 132, NULL, "ring_check", &cfg) == LB_OK &&
                 cfg.sring > 0,
             "ring scales: %s n=%d k=%d m=%d: the plan does not put them in the "
             "ring", r->name, n, k, m);
      used++;
      run_worst(ctx, r, m, n, k, seed++ * 7919, r->bias && s % 2, s % 2 ? stream : NULL,
                &w);
    }
    printf("  ring scales %-16s worst relative error %.2e, error/bound %.2f\n",
           r->name, w.rel, w.e);
    lb_recipe_free(r);
  }
  GCHECK(used >= 12, "ring scales: %d cases", used);
}

/* 2..8 rows in their own kernel, in clusters (hcl: 7-bit codes at K =
** 8192 in blocks of 2 warps, three blocks an SM or more): rows 1 (1 row's
** kernel), 2, 5 and 8 against the float64 reference, the op's plan for
** 8 rows in 1 row's words (which make both kernels again), and the
** same rows launched early (lb_op_overlap at N = K = 8192).  Each case's
** plan on this device must take it, so that the check cannot pass on
** another path (a device with fewer blocks an SM: skipped, saying so). */
static void hcl_check(lb_ctx *ctx, cudaStream_t stream) {
  static const char *const rec[] = {
      "name \"hcl_w7_g32\"\nactivations \"f16\"\nweights { bits = 7 }\nscales { group = 32 }\n"
      "zeros { dtype = \"f16\" }\ndequant \"(q - z) * s\"\n",
      "name \"hcl_w7_g128_bf16\"\nactivations \"bf16\"\nweights { bits = 7 }\n"
      "scales { group = 128, dtype = \"bf16\" }\ndequant \"q * s\"\n"
      "epilogue { bias = true }\n"};
  static const int ms[] = {1, 2, 5, 8};
  const int n = 6400, k = 8192;
  uint64_t seed = 0x4c1;
  size_t i;
  int s, used = 0, sms = 0, arch = 0;
  device_of(&sms, &arch);
  for (i = 0; i < sizeof rec / sizeof rec[0]; i++) {
    lb_recipe *r = NULL;
    lb_gemv_cfg lo, hi;
    lb_op *op = NULL;
    worst w = {0, 0};
    if (lb_recipe_load_text("hcl.lua", rec[i], strlen(rec[i]), &r) != LB_OK) {
      GCHECK(0, "hcl: %s", lb_errmsg());
      continue;
    }
    if (arch < 90 ||
        lb_plan_gemv(r, n, k, 1, sms, NULL, "hcl_check", &lo) != LB_OK ||
        lb_plan_gemv(r, n, k, 8, sms, NULL, "hcl_check", &hi) != LB_OK ||
        lo.hcl == 0) {
      printf("  hcl %-16s skipped: no clusters for 2..8 rows on sm_%d with "
             "%d SMs\n", r->name, arch, sms);
      lb_recipe_free(r);
      continue;
    }
    GCHECK(hi.cluster == lo.hcl && lo.cluster == 1,
           "hcl: %s: 2..8 rows in clusters of %d, not %d", r->name,
           hi.cluster, lo.hcl);
    for (s = 0; s < (int)(sizeof ms / sizeof ms[0]); s++, used++)
      run_worst(ctx, r, ms[s], n, k, seed++ * 7919, r->bias && s % 2,
                s % 2 ? stream : NULL, &w);
    /* the op says 1 row's words for 8 rows, and they make it again */
    if (lb_op_create(ctx, r, n, k, &op) == LB_OK) {
      char p1[LB_PLAN_LEN], p8[LB_PLAN_LEN];
      lb_plan_from f1, f8;
      GCHECK(lb_op_plan(op, 1, p1, &f1) == LB_OK &&
                 lb_op_plan(op, 8, p8, &f8) == LB_OK && !strcmp(p1, p8) &&
                 strstr(p8, "hcl=") != NULL,
             "hcl: %s: the plans of 1 and 8 rows: %s, %s", r->name, p1, p8);
      GCHECK(lb_op_set_plan(op, 8, p8) == LB_OK &&
                 lb_op_prepare(op, 1, 8) == LB_OK,
             "hcl: %s: set_plan %s: %s", r->name, p8, lb_errmsg());
      lb_op_destroy(op);
    } else {
      GCHECK(0, "hcl: %s: lb_op_create: %s", r->name, lb_errmsg());
    }
    overlap_case(ctx, r, 6, k, seed++, stream);
    printf("  hcl %-16s M = 1, 2, 5, 8 at %d x %d: worst relative error %.2e, "
           "error/bound %.2f; M = 6 launched early at %d x %d\n", r->name, k,
           n, w.rel, w.e, k, k);
    lb_recipe_free(r);
  }
  GCHECK(used >= 8 || arch < 90, "hcl: %d cases", used);
}

/* The GEMM's staged scales (a sub-stage's groups copied into its stage,
** gen/lb_gmplan.c stage_scales) for formats the shipped recipes do not take
** there: groups of 32 and 64 at K past resident scales, f16, bf16 and f32
** scales, with and without zeros, copies of 8, 16 and 32 bytes a channel
** (the last sub-stage of the f32 one half its groups, K = 8320), at 17..32
** and 33..64 rows, and on an sm_90 at 100 rows (the wgmma plan with the
** activations by TMA, where each warp stages its own channels' rows).
** Each case's plan on this device must stage them, so that the check
** cannot pass on another path (100 rows elsewhere: skipped). */
static void stage_check(lb_ctx *ctx, cudaStream_t stream) {
  static const struct {
    const char *text;
    int k;
  } rec[] = {
      {"name \"stg_w7_g32\"\nactivations \"f16\"\nweights { bits = 7 }\nscales { group = 32 }\n"
       "zeros { dtype = \"f16\" }\ndequant \"(q - z) * s\"\n", 8192},
      {"name \"stg_w5s_g64\"\nactivations \"bf16\"\nweights { bits = 5, signed = true }\n"
       "scales { group = 64, dtype = \"bf16\" }\nzeros { dtype = \"bf16\" }\n"
       "dequant \"q * s + z\"\noutput \"f32\"\nepilogue { bias = true }\n", 16384},
      {"name \"stg_w3s_g32_f32\"\nactivations \"f16\"\nweights { bits = 3, signed = true }\n"
       "scales { group = 32, dtype = \"f32\" }\ndequant \"q * s\"\n", 8320}};
  static const int ms[] = {20, 40, 100};
  uint64_t seed = 0x57a6;
  size_t i;
  int s, used = 0, sms = 0, arch = 0;
  device_of(&sms, &arch);
  for (i = 0; i < sizeof rec / sizeof rec[0]; i++) {
    lb_recipe *r = NULL;
    worst w = {0, 0};
    if (lb_recipe_load_text("stage.lua", rec[i].text, strlen(rec[i].text), &r) != LB_OK) {
      GCHECK(0, "staged scales: %s", lb_errmsg());
      continue;
    }
    for (s = 0; s < (int)(sizeof ms / sizeof ms[0]); s++) {
      const int m = ms[s], n = 1000, k = rec[i].k;
      lb_gemm_plans p;
      if (m <= lb_gemv_rows(r, n, k) || (m == 100 && arch / 10 != 9)) continue;
      GCHECK(lb_plan_gemm(r, n, k, lb_gemm_bucket(m), sms, NULL, "stage_check", &p) ==
                     LB_OK &&
                 lb_gemm_part(&p, arch)->sstg > 0,
             "staged scales: %s n=%d k=%d m=%d: the plan does not stage them",
             r->name, n, k, m);
      used++;
      run_worst(ctx, r, m, n, k, seed++ * 7919, r->bias && s % 2, s % 2 ? stream : NULL,
                &w);
    }
    printf("  staged scales %-16s worst relative error %.2e, error/bound %.2f\n",
           r->name, w.rel, w.e);
    lb_recipe_free(r);
  }
  GCHECK(used >= 5, "staged scales: %d cases", used);
}

/* One recipe at one shape, with and without bias, on the default and a
** created stream, then three runs chained with lb_op_overlap at n = k = K
** (sm_90: the early GEMV's own source, or the GEMM launched early): what
** compute-sanitizer runs (no cuBLAS in the process, whose own kernels the
** sanitizer cannot follow). */
static int one_case(lb_ctx *ctx, char **argv, cudaStream_t stream) {
  lb_recipe *r = NULL;
  char *end;
  long v[3];
  int i, b;
  for (i = 0; i < 3; i++) {
    v[i] = strtol(argv[3 + i], &end, 10);
    if (*end || v[i] < 1 || v[i] > 1 << 20) {
      fprintf(stderr, "test_gpu --case: '%s' is not a size\n", argv[3 + i]);
      return 0;
    }
  }
  if (lb_recipe_load(argv[2], &r) != LB_OK) {
    GCHECK(0, "load: %s", lb_errmsg());
    return 1;
  }
  for (b = 0; b < 2; b++) {
    double rel = 0;
    run_case(ctx, r, (int)v[0], (int)v[1], (int)v[2], 0xca5e + (uint64_t)b,
             r->bias && b, b ? stream : NULL, &rel);
    printf("%s m=%ld n=%ld k=%ld bias=%d: relative error %.2e\n", argv[2],
           v[0], v[1], v[2], r->bias && b, rel);
  }
  overlap_case(ctx, r, (int)v[0], (int)v[2], 0x0e7a, stream);
  /* the GPU packer, under the sanitizer too */
  pack_case(ctx, r, (int)v[1], (int)v[2], 0xca5e, stream);
  lb_recipe_free(r);
  return 1;
}

/* LOWBIT_DUMP_DIR: creating an op writes its source there. */
static void dump_check(lb_ctx *ctx, const char *recipe) {
  char dir[] = "/tmp/lowbit-dump-XXXXXX", path[4200];
  lb_recipe *r = NULL;
  lb_op *op = NULL;
  int found = 0;
  if (recipe == NULL || mkdtemp(dir) == NULL) return;
  setenv("LOWBIT_DUMP_DIR", dir, 1);
  if (lb_recipe_load(recipe, &r) == LB_OK &&
      lb_op_create(ctx, r, 96, r->group ? 2 * r->group : 128, &op) == LB_OK) {
    snprintf(path, sizeof path, "ls %s/*.cu >/dev/null 2>&1", dir);
    found = system(path) == 0;
  }
  GCHECK(found, "LOWBIT_DUMP_DIR: no .cu written to %s", dir);
  printf("LOWBIT_DUMP_DIR: %s\n", found ? "source written" : "nothing");
  unsetenv("LOWBIT_DUMP_DIR");
  snprintf(path, sizeof path, "rm -rf %s", dir);
  if (system(path) != 0) printf("could not remove %s\n", dir);
  lb_op_destroy(op);
  lb_recipe_free(r);
}

/* A layer on the device with its float64 reference: fresh random data of
** maxm rows, the weights, x, and y (with GUARD bytes past it). */
typedef struct dev_case {
  lb_case c;
  lb_weights w;
  double *y64, *mag64;
  unsigned char *hy;
  void *dx, *dy;
  int made;
} dev_case;

static void dev_case_free(dev_case *d) {
  lb_free_weights(&d->w);
  cudaFree(d->dx);
  cudaFree(d->dy);
  free(d->y64);
  free(d->mag64);
  free(d->hy);
  if (d->made) lb_case_free(&d->c);
  memset(d, 0, sizeof *d);
}

static int dev_case_make(dev_case *d, const lb_recipe *r, int maxm, int n,
                         int k, uint64_t seed) {
  memset(d, 0, sizeof *d);
  if (!(d->made = lb_case_make(&d->c, r, maxm, n, k, seed))) return 0;
  d->y64 = malloc(sizeof(double) * (size_t)maxm * (size_t)n);
  d->mag64 = malloc(sizeof(double) * (size_t)maxm * (size_t)n);
  d->hy = malloc(d->c.y_bytes + GUARD);
  d->dx = lb_upload(d->c.x, d->c.x_bytes);
  if (!lb_upload_weights(&d->c, &d->w) || !d->y64 || !d->mag64 || !d->hy ||
      !d->dx || cudaMalloc(&d->dy, d->c.y_bytes + GUARD) != cudaSuccess ||
      !lb_case_reference(&d->c, d->y64, d->mag64)) {
    dev_case_free(d);
    return 0;
  }
  return 1;
}

/* The case's first m rows, as a case of their own. */
static lb_case dev_case_rows(const dev_case *d, int m) {
  lb_case v = d->c;
  v.m = m;
  v.y_bytes = (size_t)m * (size_t)v.n * (size_t)lb_dtype_size(v.r->out);
  return v;
}

/* One run of op at m rows (a work space of `bytes` at ws, or none), output
** poisoned, checked against the reference. */
static void plan_run(const lb_op *op, dev_case *d, int m, void *ws,
                     size_t bytes, const char *what) {
  const lb_case v = dev_case_rows(d, m);
  double err = 0, rel = 0;
  cudaMemset(d->dy, 0xff, v.y_bytes + GUARD);
  cudaDeviceSynchronize();
  if (lb_op_run_ws(op, m, d->dx, &d->w, d->dy, ws, bytes, NULL) != LB_OK ||
      cudaDeviceSynchronize() != cudaSuccess) {
    GCHECK(0, "%s: run: %s", what, lb_errmsg());
    return;
  }
  check_y(&v, d->dy, d->hy, d->y64, d->mag64, what, &err, &rel);
}

/* The GEMV's reach (the rows knob of its one-fragment plan): with rows=16
** and rows=32 the GEMV takes 9..16 (two fragments of x) and 17..32 (four),
** the GEMM the rows past it; each against the reference, also launched
** early (lb_op_overlap); rows=8 gives 9 rows to the GEMM, rows=4 5 rows
** (the GEMM's first bucket below its 9 rows, as the rules give 7-bit
** codes in long layers), run at 5..8 rows only (past 8 its kernels are
** rows=8's; below 9 the others run the one-fragment GEMV, checked
** elsewhere).  Recipes whose GEMV cannot take them are refused, saying
** why. */
static void reach_check(lb_ctx *ctx, const lb_recipe *r, uint64_t seed) {
  static const int ms[] = {5, 7, 9, 13, 16, 17, 24, 31, 32};
  static const int reach[] = {16, 32, 8, 4};
  const int g = r->group ? r->group : 32;
  const int shapes[][2] = {{3 * g, 257}, {1024, 4112}, {8192 + g, 1000}};
  int s, q, i, runs = 0, before = failures;
  for (s = 0; s < 3; s++) {
    dev_case d;
    lb_op *op = NULL;
    int k = shapes[s][0], rules;
    if (r->group && k % r->group) k = r->group * (k / r->group + 1);
    /* the rules' reach: past it the GEMV runs m because of the rows set */
    rules = lb_gemv_rows(r, shapes[s][1], k);
    if (!dev_case_make(&d, r, 32, shapes[s][1], k, seed + (uint64_t)s) ||
        lb_op_create(ctx, r, shapes[s][1], k, &op) != LB_OK) {
      GCHECK(0, "reach: data or op: %s", lb_errmsg());
      if (d.made) dev_case_free(&d);
      continue;
    }
    /* the fragments past 8 rows compile on first use or by
    ** lb_op_prepare, not with the op */
    if (rules > LB_MAX_M) {
      lb_compile_info ci;
      GCHECK(lb_op_info_m(op, rules, &ci) != LB_OK &&
                 strstr(lb_errmsg(), "not compiled yet") != NULL,
             "reach: %s n=%d k=%d: the GEMV of %d rows compiled with the op",
             lb_recipe_name(r), shapes[s][1], k, rules);
      GCHECK(lb_op_prepare(op, LB_MAX_M + 1, rules) == LB_OK &&
                 lb_op_info_m(op, rules, &ci) == LB_OK && ci.regs > 0 &&
                 lb_op_info_m(op, LB_MAX_M + 1, &ci) == LB_OK && ci.regs > 0,
             "reach: %s n=%d k=%d: lb_op_prepare(9..%d): %s",
             lb_recipe_name(r), shapes[s][1], k, rules, lb_errmsg());
    }
    for (q = 0; q < (int)(sizeof reach / sizeof reach[0]); q++) {
      char plan[16], what[160], got[LB_PLAN_LEN];
      lb_plan_from from;
      snprintf(plan, sizeof plan, "rows=%d", reach[q]);
      if (lb_op_set_plan(op, 1, plan) != LB_OK) {
        GCHECK(reach[q] > 8 && (strstr(lb_errmsg(), "dequantises in f32") ||
                                (reach[q] > 16 &&
                                 strstr(lb_errmsg(), "fragments of x spill"))),
               "reach: %s %s: %s", lb_recipe_name(r), plan, lb_errmsg());
        continue;
      }
      for (i = 0; i < (int)(sizeof ms / sizeof ms[0]); i++) {
        const int m = ms[i];
        if ((reach[q] < LB_MAX_M) != (m <= LB_MAX_M)) continue;
        snprintf(what, sizeof what, "%s %s m=%d n=%d k=%d",
                 lb_recipe_name(r), plan, m, shapes[s][1], k);
        /* the GEMV's plans name their reach; the GEMM's do not */
        GCHECK(lb_op_plan(op, m, got, &from) == LB_OK &&
                   (strstr(got, plan) != NULL) == (m <= reach[q]) &&
                   (m > reach[q] || m <= rules || from == LB_PLAN_SET),
               "%s: the kernel of another kind ran, or its plan came from "
               "elsewhere (plan %s, from %d)", what, got, (int)from);
        plan_run(op, &d, m, NULL, 0, what);
        runs++;
      }
      if ((reach[q] == 32 || reach[q] == 4) && lb_op_overlap(op, 1) == LB_OK) {
        const int m = reach[q] == 32 ? 24 : 6;
        snprintf(what, sizeof what, "%s %s m=%d n=%d k=%d, early",
                 lb_recipe_name(r), plan, m, shapes[s][1], k);
        plan_run(op, &d, m, NULL, 0, what);
        lb_op_overlap(op, 0);
        runs++;
      }
    }
    GCHECK(lb_op_set_plan(op, 1, NULL) == LB_OK, "reach: back: %s",
           lb_errmsg());
    lb_op_destroy(op);
    dev_case_free(&d);
  }
  printf("  the GEMV's reach (rows=16, 32, 8, 4): %d runs, %s\n", runs,
         failures > before ? "FAIL" : "all right");
}

/* The plan an op's bucket for m uses must be want, from `from`. */
static void plan_is(const lb_op *op, int m, const char *want,
                    lb_plan_from from, const char *what) {
  char plan[LB_PLAN_LEN];
  lb_plan_from got = LB_PLAN_RULES;
  lb_status st = lb_op_plan(op, m, plan, &got);
  GCHECK(st == LB_OK && got == from && (want == NULL || !strcmp(plan, want)),
         "%s: the op's plan is %s (from %d), wanted %s (from %d): %s", what,
         plan, (int)got, want ? want : "any", (int)from, lb_errmsg());
}

/* The variables that choose a plan or where the table lives: a check that
** sets its own keeps the caller's (run.sh's stress run sets LOWBIT_PLAN)
** and puts them back after. */
static const char *const plan_env[] = {"LOWBIT_CACHE_DIR", "LOWBIT_TUNE",
                                       "LOWBIT_GEMM", "LOWBIT_PLAN"};
#define NPLAN_ENV ((int)(sizeof plan_env / sizeof plan_env[0]))

static void plan_env_keep(char *kept[NPLAN_ENV]) {
  int i;
  for (i = 0; i < NPLAN_ENV; i++) {
    const char *v = getenv(plan_env[i]);
    kept[i] = v ? strdup(v) : NULL;
    unsetenv(plan_env[i]);
  }
}

static void plan_env_put_back(char *kept[NPLAN_ENV]) {
  int i;
  for (i = 0; i < NPLAN_ENV; i++) {
    if (kept[i])
      setenv(plan_env[i], kept[i], 1);
    else
      unsetenv(plan_env[i]);
    free(kept[i]);
  }
}

/* The tuning table and plans set on an op: an op made after lb_tune_save
** takes the table's plan for that GEMM bucket and for the GEMV, and
** computes the same product;
** lb_op_set_plan takes another, NULL goes back to the table's, a bad plan
** is refused and changes nothing; LOWBIT_TUNE=0 and LOWBIT_GEMM win over
** the table; a damaged table fails lb_op_create with LB_EIO. */
static void tune_check(lb_ctx *ctx, const char *recipe) {
  char dir[] = "/tmp/lowbit-tune-XXXXXX", path[4200];
  char (*cand)[LB_PLAN_LEN] = malloc(16 * LB_PLAN_LEN);
  char (*vcand)[LB_PLAN_LEN] = malloc(16 * LB_PLAN_LEN);
  const int m = 100, n = 256;
  lb_recipe *r = NULL;
  lb_op *op = NULL, *op2 = NULL;
  dev_case d;
  struct cudaDeviceProp prop;
  int count = 0, vcount = 0, k, before = failures;
  char *kept[NPLAN_ENV];
  FILE *f;
  memset(&d, 0, sizeof d);
  plan_env_keep(kept);
  if (recipe == NULL || cand == NULL || vcand == NULL ||
      mkdtemp(dir) == NULL ||
      lb_recipe_load(recipe, &r) != LB_OK ||
      cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    GCHECK(0, "tuning table: setup: %s", lb_errmsg());
    goto done;
  }
  setenv("LOWBIT_CACHE_DIR", dir, 1);
  k = r->group ? 4 * r->group : 512;
  if (!dev_case_make(&d, r, m, n, k, 77)) {
    GCHECK(0, "tuning table: data: %s", lb_errmsg());
    goto done;
  }
  GCHECK(lb_plan_candidates(r, n, k, m, prop.multiProcessorCount,
                            prop.major * 10 + prop.minor, NULL, cand, 16,
                            &count) == LB_OK && count >= 3,
         "tuning table: %d candidates: %s", count, lb_errmsg());
  if (count < 3) goto done;
  GCHECK(lb_tune_save(ctx, r, n, k, m, cand[1], 10, 12) == LB_OK,
         "lb_tune_save: %s", lb_errmsg());
  /* and the GEMV's (4 rows): the first plan one knob away from the rules' */
  GCHECK(lb_plan_candidates(r, n, k, 4, prop.multiProcessorCount,
                            prop.major * 10 + prop.minor, NULL, vcand, 16,
                            &vcount) == LB_OK && vcount >= 2,
         "tuning table: %d GEMV candidates: %s", vcount, lb_errmsg());
  if (vcount < 2) goto done;
  GCHECK(lb_tune_save(ctx, r, n, k, 4, vcand[1], 5, 6) == LB_OK,
         "lb_tune_save (GEMV): %s", lb_errmsg());
  if (lb_op_create(ctx, r, n, k, &op) != LB_OK) {
    GCHECK(0, "tuning table: lb_op_create: %s", lb_errmsg());
    goto done;
  }
  plan_is(op, m, cand[1], LB_PLAN_TABLE, "the table's plan");
  plan_run(op, &d, m, NULL, 0, "the table's plan");
  {   /* the GEMV's, on the first 4 rows */
    plan_is(op, 4, vcand[1], LB_PLAN_TABLE, "the table's GEMV plan");
    plan_run(op, &d, 4, NULL, 0, "the table's GEMV plan");
    GCHECK(lb_op_set_plan(op, 4, vcand[0]) == LB_OK,
           "lb_op_set_plan (GEMV): %s", lb_errmsg());
    plan_is(op, 4, vcand[0], LB_PLAN_SET, "a GEMV plan set");
    plan_run(op, &d, 4, NULL, 0, "a GEMV plan set");
    GCHECK(lb_op_set_plan(op, 4, "split=3") == LB_EARG,
           "a bad GEMV plan was set");
    plan_is(op, 4, vcand[0], LB_PLAN_SET, "after a bad GEMV plan");
    GCHECK(lb_op_set_plan(op, 4, NULL) == LB_OK,
           "lb_op_set_plan NULL (GEMV): %s", lb_errmsg());
    plan_is(op, 4, vcand[1], LB_PLAN_TABLE, "back to the table's GEMV plan");
  }
  GCHECK(lb_op_set_plan(op, m, cand[2]) == LB_OK, "lb_op_set_plan: %s",
         lb_errmsg());
  plan_is(op, m, cand[2], LB_PLAN_SET, "a plan set");
  plan_run(op, &d, m, NULL, 0, "a plan set");
  GCHECK(lb_op_set_plan(op, m, "wn=3") == LB_EARG, "a bad plan was set");
  plan_is(op, m, cand[2], LB_PLAN_SET, "after a bad plan");
  GCHECK(lb_op_set_plan(op, m, NULL) == LB_OK, "lb_op_set_plan NULL: %s",
         lb_errmsg());
  plan_is(op, m, cand[1], LB_PLAN_TABLE, "back to the table's");
  plan_run(op, &d, m, NULL, 0, "back to the table's");
  setenv("LOWBIT_TUNE", "0", 1);
  if (lb_op_create(ctx, r, n, k, &op2) == LB_OK) {
    plan_is(op2, m, cand[0], LB_PLAN_RULES, "LOWBIT_TUNE=0");
    plan_is(op2, 4, vcand[0], LB_PLAN_RULES, "LOWBIT_TUNE=0 (GEMV)");
    lb_op_destroy(op2);
    op2 = NULL;
  }
  unsetenv("LOWBIT_TUNE");
  setenv("LOWBIT_GEMM", cand[2], 1);
  if (lb_op_create(ctx, r, n, k, &op2) == LB_OK) {
    plan_is(op2, m, cand[2], LB_PLAN_ENV, "LOWBIT_GEMM");
    lb_op_destroy(op2);
    op2 = NULL;
  }
  /* a plan that does not parse leaves the GEMV, and every GEMM call says
  ** why (it once divided by the missing plan's zero tile height) */
  setenv("LOWBIT_GEMM", "sk=3", 1);
  if (lb_op_create(ctx, r, n, k, &op2) == LB_OK) {
    size_t b = 1;
    int sp = 0, cl = 0;
    GCHECK(lb_op_run(op2, m, d.dx, &d.w, d.dy, NULL) == LB_EARG &&
               strstr(lb_errmsg(), "sk=3") != NULL,
           "LOWBIT_GEMM=sk=3: lb_op_run said: %s", lb_errmsg());
    GCHECK(lb_op_workspace(op2, m, &b) == LB_EARG && b == 0 &&
               lb_op_splits(op2, m, &sp, &cl) == LB_EARG,
           "LOWBIT_GEMM=sk=3: lb_op_workspace / lb_op_splits accepted");
    lb_op_destroy(op2);
    op2 = NULL;
  } else {
    GCHECK(strstr(lb_errmsg(), "sk=3") != NULL,
           "LOWBIT_GEMM=sk=3: lb_op_create said: %s", lb_errmsg());
  }
  unsetenv("LOWBIT_GEMM");
  setenv("LOWBIT_PLAN", vcand[0], 1);
  if (lb_op_create(ctx, r, n, k, &op2) == LB_OK) {
    plan_is(op2, 4, vcand[0], LB_PLAN_ENV, "LOWBIT_PLAN");
    plan_is(op2, m, cand[1], LB_PLAN_TABLE, "LOWBIT_PLAN leaves the GEMM");
    lb_op_destroy(op2);
    op2 = NULL;
  }
  unsetenv("LOWBIT_PLAN");
  GCHECK(lb_tune_path(ctx, path, sizeof path) == LB_OK, "lb_tune_path: %s",
         lb_errmsg());
  if ((f = fopen(path, "a")) != NULL) {
    fputs("not an entry\n", f);
    fclose(f);
  }
  GCHECK(lb_op_create(ctx, r, n, k, &op2) == LB_EIO &&
             strstr(lb_errmsg(), ".txt:7: ") != NULL,
         "a damaged table: %s", lb_errmsg());
  printf("tuning table: %s\n",
         failures > before ? "FAIL" : "plans taken as said");
done:
  plan_env_put_back(kept);
  if (dir[strlen(dir) - 1] != 'X') {
    snprintf(path, sizeof path, "rm -rf %s", dir);
    if (system(path) != 0) printf("could not remove %s\n", dir);
  }
  lb_op_destroy(op);
  lb_op_destroy(op2);
  dev_case_free(&d);
  free(cand);
  free(vcand);
  lb_recipe_free(r);
}

/* Every plan lowbit tune may pick must be right where the rules' plan is:
** each candidate of the GEMV and of each GEMM bucket (M = 5, 12, 20, 40,
** 100, 200, 300, 400: off every tile), on a layer off every block (N = 300) and
** short in K, with and without a work space, against the float64
** reference.  The candidates compile on every core first
** (lb_tune_precompile), as lowbit tune's do. */
static void plans_check(lb_ctx *ctx, const char *recipe) {
  static const int ms[] = {5, 12, 20, 40, 100, 200, 300, 400};   /* a bucket each */
  char (*cand)[LB_PLAN_LEN] = malloc(64 * LB_PLAN_LEN);
  const int n = 300, maxm = ms[sizeof ms / sizeof ms[0] - 1];   /* the largest */
  struct cudaDeviceProp prop;
  lb_recipe *r = NULL;
  lb_op *op = NULL;
  dev_case d;
  void *ws = NULL;
  int k, mi, i, plans = 0, before = failures;
  memset(&d, 0, sizeof d);
  if (recipe == NULL || cand == NULL || lb_recipe_load(recipe, &r) != LB_OK ||
      cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    GCHECK(0, "plans: setup: %s", lb_errmsg());
    goto done;
  }
  k = r->group ? 2 * r->group : 256;
  if (!dev_case_make(&d, r, maxm, n, k, 99) ||
      lb_op_create(ctx, r, n, k, &op) != LB_OK) {
    GCHECK(0, "plans: data or op: %s", lb_errmsg());
    goto done;
  }
  for (mi = 0; mi < (int)(sizeof ms / sizeof ms[0]); mi++) {
    const int m = ms[mi];
    int count = 0;
    if (lb_plan_candidates(r, n, k, m, prop.multiProcessorCount,
                           prop.major * 10 + prop.minor, NULL, cand, 64,
                           &count) != LB_OK) {
      GCHECK(0, "plans: m=%d: %s", m, lb_errmsg());
      continue;
    }
    lb_tune_precompile(r, n, k, m, prop.multiProcessorCount,
                       prop.major * 10 + prop.minor, cand, count);
    for (i = 0; i < count; i++) {
      char what[160];
      size_t bytes = 0;
      int pass;
      snprintf(what, sizeof what, "%s m=%d n=%d k=%d plan %s",
               lb_recipe_name(r), m, n, k, cand[i]);
      if (lb_op_set_plan(op, m, cand[i]) != LB_OK ||
          lb_op_prepare(op, m, m) != LB_OK) {
        GCHECK(0, "%s: %s", what, lb_errmsg());
        continue;
      }
      plans++;
      for (pass = 0; pass < 2; pass++) {   /* no work space, then one */
        cudaFree(ws);
        ws = NULL;
        bytes = 0;
        if (pass == 1 && (lb_op_workspace(op, m, &bytes) != LB_OK ||
                          bytes == 0 ||
                          cudaMalloc(&ws, bytes) != cudaSuccess))
          break;
        plan_run(op, &d, m, ws, bytes, what);
      }
    }
  }
  printf("plans: %s, %d candidate plans of the GEMV and every GEMM bucket: "
         "%s\n", lb_recipe_name(r), plans, failures > before ? "FAIL"
                                                               : "all right");
done:
  lb_op_destroy(op);
  dev_case_free(&d);
  cudaFree(ws);
  free(cand);
  lb_recipe_free(r);
}

/* Whether job *job (counted on) falls to share part of parts: every
** parts-th from part, as sweep takes its recipes. */
static int mine(int *job, int part, int parts) {
  return (*job)++ % parts == part;
}

int main(int argc, char **argv) {
  int count = 0, n = 0, i;
  cudaError_t ce;
  lb_ctx *ctx = NULL;
  cudaStream_t stream = NULL;
  char *names[256];
  const char *names_first;
  int part = 0, parts = 1, job = 0, ran = 0;
  /* a share: PART/PARTS after the recipe directory or --sweep */
  const int share = argc == 3 && strcmp(argv[1], "--case") != 0;
  if (share && (sscanf(argv[2], "%d/%d", &part, &parts) != 2 || parts < 1 ||
                parts > 64 || part < 0 || part >= parts))
    part = -1;   /* not a share */
  if (part < 0 || argc < 2 ||
      (argc != 2 && !share && !(argc == 6 && strcmp(argv[1], "--case") == 0))) {
    fprintf(stderr, "usage: test_gpu RECIPE_DIR [PART/PARTS] | --sweep "
                    "[PART/PARTS] | --case RECIPE M N K\n");
    return 2;
  }
  if (lb_ctx_create(0, &ctx) == LB_ENODEV) {
    printf("SKIPPED: no GPU (%s); GPU tests run with tests/gpu/run.sh on a "
           "GPU machine\n", lb_errmsg());
    return 77;
  }
  lb_ctx_destroy(ctx);
  ctx = NULL;
  ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    printf("SKIPPED: no GPU (%s); GPU tests run with tests/gpu/run.sh on a "
           "GPU machine\n",
           ce != cudaSuccess ? cudaGetErrorString(ce) : "no device");
    return 77;
  }
  cudaFree(0);
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (lb_ctx_create(0, &ctx) != LB_OK) {
    printf("FAIL: lb_ctx_create: %s\n", lb_errmsg());
    return 1;
  }
  if (strcmp(argv[1], "--sweep") == 0) {
    sweep(ctx, stream, part, parts);
    lb_ctx_destroy(ctx);
    cudaStreamDestroy(stream);
    printf("gpu: sweep, %d checks, %d failure(s)\n", checks, failures);
    return failures != 0;
  }
  if (argc == 6) {
    int ok = one_case(ctx, argv, stream);
    lb_ctx_destroy(ctx);
    cudaStreamDestroy(stream);
    if (!ok) return 2;
    printf("gpu: case, %d checks, %d failure(s)\n", checks, failures);
    return failures != 0;
  }
  if ((n = lb_test_lua_files(argv[1], names, 256)) < 0) return 2;
  /* The jobs: each recipe, then the checks of the other paths; a share
  ** takes every PARTS-th from its PART (run.sh runs the shares side by
  ** side: the float64 reference is on the CPU). */
  for (i = 0; i < n; i++)
    if (mine(&job, part, parts)) {
      one(ctx, names[i], stream);
      ran++;
    }
  names_first = n > 0 ? names[0] : NULL;
  if (mine(&job, part, parts)) ring_check(ctx, stream);
  if (mine(&job, part, parts)) hcl_check(ctx, stream);
  if (mine(&job, part, parts)) stage_check(ctx, stream);
  if (mine(&job, part, parts)) dump_check(ctx, names_first);
  if (mine(&job, part, parts)) tune_check(ctx, names_first);
  for (i = 0; i < n; i++)   /* the main job's and a cross-word format */
    if ((strstr(names[i], "a16w4_g128") || strstr(names[i], "a16w3_g128")) &&
        mine(&job, part, parts))
      plans_check(ctx, names[i]);
  lb_ctx_destroy(ctx);
  cudaStreamDestroy(stream);
  for (i = 0; i < n; i++) free(names[i]);
  if (share)
    printf("gpu: recipes, %d checks, %d failure(s) (share %d/%d: %d of %d "
           "recipes)\n", checks, failures, part, parts, ran, n);
  else
    printf("gpu: %d recipes, %d checks, %d failure(s)\n", n, checks,
           failures);
  return failures != 0;
}
