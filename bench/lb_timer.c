/*
** lb_timer.c: timing kernels with CUDA events after an L2 flush; uploads.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_timer.h"

int lb_cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int lb_timer_init(lb_timer *t, int warmup, int iters, int write) {
  struct cudaDeviceProp prop;
  int dev = 0, i;
  memset(t, 0, sizeof *t);
  t->warmup = warmup;
  t->iters = iters;
  t->write = write;
  t->ev = calloc(2 * (size_t)iters, sizeof(cudaEvent_t));
  t->ms = calloc((size_t)iters, sizeof(float));
  if (t->ev == NULL || t->ms == NULL) {
    fprintf(stderr, "timer: no memory\n");
    return 0;
  }
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    fprintf(stderr, "timer: no device properties\n");
    return 0;
  }
  for (i = 0; i < 2 * iters; i++)
    if (cudaEventCreate(&t->ev[i]) != cudaSuccess) {
      fprintf(stderr, "timer: cudaEventCreate failed\n");
      return 0;
    }
  t->flush_bytes =
      (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : 1 << 26) * 4;
  if (cudaMalloc((void **)&t->flush, t->flush_bytes) != cudaSuccess ||
      cudaMemset(t->flush, 0, t->flush_bytes) != cudaSuccess) {
    fprintf(stderr, "timer: no device memory for the L2 flush\n");
    return 0;
  }
  if (cublasCreate(&t->fh) != CUBLAS_STATUS_SUCCESS ||
      cublasSetPointerMode(t->fh, CUBLAS_POINTER_MODE_DEVICE) !=
          CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "timer: cublasCreate failed\n");
    return 0;
  }
  return 1;
}

void lb_timer_free(lb_timer *t) {
  int i;
  if (t->fh) cublasDestroy(t->fh);
  if (t->ev)
    for (i = 0; i < 2 * t->iters; i++)
      if (t->ev[i]) cudaEventDestroy(t->ev[i]);
  cudaFree(t->flush);
  free(t->ev);
  free(t->ms);
  memset(t, 0, sizeof *t);
}

static int flush_l2(lb_timer *t) {
  if (t->write)
    return cudaMemsetAsync(t->flush, 0, t->flush_bytes, 0) == cudaSuccess;
  return cublasSasum(t->fh, (int)(t->flush_bytes / sizeof(float)) - 1,
                     t->flush, 1, t->flush + t->flush_bytes / sizeof(float) - 1)
         == CUBLAS_STATUS_SUCCESS;
}

double lb_time_it(lb_timer *t, lb_launch_fn fn, void *ctx) {
  int i;
  for (i = 0; i < t->warmup; i++)
    if (!fn(ctx)) return -1;
  for (i = 0; i < t->iters; i++) {
    if (!flush_l2(t)) return -1;
    cudaEventRecord(t->ev[2 * i], 0);
    if (!fn(ctx)) return -1;
    cudaEventRecord(t->ev[2 * i + 1], 0);
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  for (i = 0; i < t->iters; i++)
    cudaEventElapsedTime(&t->ms[i], t->ev[2 * i], t->ev[2 * i + 1]);
  qsort(t->ms, (size_t)t->iters, sizeof(float), lb_cmp_float);
  return 1000.0 * t->ms[t->iters / 2];
}

void *lb_upload(const void *host, size_t bytes) {
  void *d = NULL;
  if (bytes == 0 || host == NULL) return NULL;
  if (cudaMalloc(&d, bytes) != cudaSuccess) return NULL;
  if (cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    cudaFree(d);
    return NULL;
  }
  return d;
}

int lb_upload_weights(const lb_case *c, lb_weights *w) {
  w->packed = lb_upload(c->packed, c->packed_bytes);
  w->scales = lb_upload(c->scales, c->scale_bytes);
  w->zeros = lb_upload(c->zeros, c->zero_bytes);
  w->bias = lb_upload(c->bias, c->bias_bytes);
  return w->packed && w->scales && (!c->zero_bytes || w->zeros) &&
         (!c->bias_bytes || w->bias);
}

void lb_free_weights(lb_weights *w) {
  cudaFree((void *)w->packed);
  cudaFree((void *)w->scales);
  cudaFree((void *)w->zeros);
  cudaFree((void *)w->bias);
  memset(w, 0, sizeof *w);
}
