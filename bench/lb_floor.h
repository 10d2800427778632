/*
** lb_floor.h: the read floor of the bench.
**
** How long a plain streaming read of B bytes takes in the bench's own
** harness (L2 flushed before each launch, launch and event overhead
** included).  A kernel that must move B bytes can hardly beat it, so the
** ratio of the two says how much of a kernel's time is its own doing and
** how much is the memory system's and the launch's.
*/
#ifndef lb_floor_h
#define lb_floor_h

#include <stddef.h>

#include "lb_cuda.h"

typedef struct lb_floor {
  const lb_cu *cu;      /* the driver, looked up once */
  CUmodule mod;
  CUfunction fn;        /* lb_read */
  void *buf;            /* device buffer that is read, cap bytes */
  size_t cap, chunks;   /* chunks: 16-byte chunks the next launch reads */
  unsigned grid;
  unsigned *sink;
} lb_floor;

/* Compiles the read kernel for sm_<arch> (through lowbit's NVRTC path and
** disk cache).  0 on failure, with the reason printed. */
int lb_floor_init(lb_floor *f, int arch, int sms);

/* Sets the next launch to read `bytes` (rounded up to 16), growing the
** buffer as needed.  0 on failure. */
int lb_floor_size(lb_floor *f, size_t bytes);

/* One launch on the default stream; the bench's launch_fn.  1 on success. */
int lb_floor_launch(void *f);

void lb_floor_free(lb_floor *f);

/* TFLOP/s of mma.m16n8k16 (f16, f32 sums) with no memory traffic: the
** ceiling of any kernel built on that instruction, GEMM rows' yardstick
** beside cuBLAS.  0 on failure, with the reason printed. */
double lb_mma_ceiling(int arch, int sms);

#endif
