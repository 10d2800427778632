/*
** lb_timer.h: what the GPU tools (lowbit bench, lowbit tune) share: how a
** kernel is timed, and host data copied up.  A kernel is timed with CUDA
** events around each launch, each launch after L2 is flushed, warm-up
** first, the median of the rest.  The flush READS a buffer four times the
** size of L2 (cublasSasum into device memory): a flush that writes, like
** a memset, leaves L2 full of dirty lines, and the timed kernel would then
** pay for their write-back out of its own bandwidth (write = 1 does that
** on purpose, as Triton's do_bench does).
*/
#ifndef lb_timer_h
#define lb_timer_h

#include <stddef.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "lb_ref.h"
#include "lowbit.h"

typedef int (*lb_launch_fn)(void *ctx);   /* 1: launched */

typedef struct lb_timer {
  cudaEvent_t *ev;
  float *ms;
  float *flush;
  size_t flush_bytes;
  cublasHandle_t fh;   /* device pointer mode: the flush never syncs */
  int write;           /* flush with a memset instead (for comparison) */
  int warmup, iters;
} lb_timer;

/* For the current device; 0 (the reason on stderr) on failure.  Free it
** with lb_timer_free either way. */
int lb_timer_init(lb_timer *t, int warmup, int iters, int write);
void lb_timer_free(lb_timer *t);
/* The median of t->iters launches, microseconds; < 0 on error. */
double lb_time_it(lb_timer *t, lb_launch_fn fn, void *ctx);
int lb_cmp_float(const void *a, const void *b);
/* bytes of host in fresh device memory; NULL where there is nothing to
** copy (host NULL or no bytes) or it failed. */
void *lb_upload(const void *host, size_t bytes);
/* A case's packed weights, scales, zeros and bias in fresh device memory
** (each NULL where the case has none, or its copy failed); 1 when every
** one the case has is there.  lb_free_weights frees them either way. */
int lb_upload_weights(const lb_case *c, lb_weights *w);
void lb_free_weights(lb_weights *w);

#endif
