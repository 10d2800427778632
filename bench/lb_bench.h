/*
** lb_bench.h: the GPU harness behind `lowbit run` and `lowbit bench`.
**
** For each recipe, shape (K x N) and M it packs fresh random weights,
** checks the lowbit kernel once against the float64 reference (output
** poisoned first), then times it and cuBLAS in the same process with CUDA
** events: warm-up, then the median of many launches, each after a read of
** four times the L2 size that flushes it (without leaving dirty lines).
** Bandwidth counts the bytes the kernel must move (packed weights,
** scales, zeros, bias, activations, output) and is
** compared to a device-to-device copy measured at the start of the run,
** and to the read floor (lb_floor.h): a plain streaming read of the same
** bytes, timed the same way.
*/
#ifndef lb_bench_h
#define lb_bench_h

#define LB_BENCH_MAX 32

typedef struct lb_bench_opts {
  const char *recipes[LB_BENCH_MAX];
  int nrecipes;
  int k[LB_BENCH_MAX], n[LB_BENCH_MAX];  /* shapes, K x N (in x out) */
  int nshapes;
  int m[LB_BENCH_MAX];
  int nm;
  int warmup, iters;
  int device;
  const char *outdir;   /* results.csv, results.json, <recipe>.svg; NULL: none */
  int flush_write;      /* flush L2 with a memset, as Triton's do_bench does */
} lb_bench_opts;

/* Exit status for the command: 0 all checks passed, 1 a check or a call
** failed, 2 no GPU (nothing ran; the reason is printed). */
int lb_bench_run(const lb_bench_opts *o);

#endif
