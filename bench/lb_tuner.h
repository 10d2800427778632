/*
** lb_tuner.h: `lowbit tune`: for one recipe and shape, the candidate plans
** (lb_plan_candidates) of the GEMV and of each GEMM bucket among the M
** asked for, compiled (in parallel, through the
** disk cache), checked on sampled rows against the float64 reference and
** timed as `lowbit bench` times (lb_timer.h), in two rounds: the plans one
** knob away from the rules', then those one knob away from the first
** round's best.  The best, timed again against the rules' plan in
** alternation, goes into the device's tuning table (lowbit.h) where it is
** at least 3% faster over the bucket's M; else the entry says the rules'
** plan stands.
*/
#ifndef lb_tuner_h
#define lb_tuner_h

#include "lb_bench.h"   /* LB_BENCH_MAX */
#include "lowbit.h"

typedef struct lb_tune_opts {
  const char *recipe;
  int n, k;
  int m[LB_BENCH_MAX];   /* rows timed; each bucket is tuned on its own M */
  int nm;
  int warmup, iters;
  int device;
  int dry;       /* report only: write no table */
  int verbose;   /* a line per candidate */
} lb_tune_opts;

/* Compiles the plans for m's bucket and sm_<arch> into the disk cache on
** as many threads as there are cores (at most 16; NVRTC takes most of a
** tune's time), where the op's compile of each then finds it.  Nothing
** with LOWBIT_CACHE=0; a plan that fails shows when it is run. */
void lb_tune_precompile(const lb_recipe *r, int n, int k, int m, int sms,
                        int arch, char (*plans)[LB_PLAN_LEN], int count);

/* Exit status for the command: 0 done, 1 a check or a call failed, 2 no
** GPU (nothing ran; the reason is printed). */
int lb_tune_run(const lb_tune_opts *o);

#endif
