/*
** lb_bench.h: the GPU harness behind `lowbit run` and `lowbit bench`.
**
** For each recipe, shape (K x N) and M it packs fresh random weights,
** checks the lowbit kernel once against the float64 reference (output
** poisoned first), then times it and cuBLAS in the same process with CUDA
** events: warm-up, then the median of many launches, each after a read of
** four times the L2 size that flushes it (without leaving dirty lines;
** or by a memset, or both ways: lb_bench_opts.flush).
** Bandwidth counts the bytes the kernel must move (packed weights,
** scales, zeros, bias, activations, output) and is
** compared to a device-to-device copy measured at the start of the run,
** and to the read floor (lb_floor.h): a plain streaming read of the same
** bytes, timed the same way.
*/
#ifndef lb_bench_h
#define lb_bench_h

#define LB_BENCH_MAX 32

/* How L2 is flushed before each timed launch (lb_timer.h): by a read (the
** default), by a memset that leaves dirty lines, or each row timed both
** ways (the memset's times then in columns of their own). */
enum { LB_FLUSH_READ, LB_FLUSH_WRITE, LB_FLUSH_BOTH };

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
  int flush;            /* LB_FLUSH_*; write is Triton's do_bench's */
} lb_bench_opts;

/* Exit status for the command: 0 all checks passed, 1 a check or a call
** failed, 2 no GPU (nothing ran; the reason is on stderr). */
int lb_bench_run(const lb_bench_opts *o);

/* The status line of a long run (bench, compile), on a terminal only:
** where stderr is piped or in a file it gets nothing.  It says which step
** of how many ("[3/24] ...") while the step takes its seconds, and is
** cleared before each result line (lb_progress_clear).  lowbit tune has
** none: the tuner's own lines say where it is. */
typedef struct lb_progress {
  int on;               /* stderr is a terminal */
  int at, of;           /* the step now, from 1, of all; the caller sets at */
  int shown;            /* a status is on the screen */
} lb_progress;

void lb_progress_init(lb_progress *p, int of);
void lb_progress_say(lb_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void lb_progress_clear(lb_progress *p);

#endif
