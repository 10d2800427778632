/*
** lb_floor.c: the read floor (see lb_floor.h).
*/
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "lb_floor.h"
#include "lb_nvrtc.h"

/* Four independent 16-byte loads in flight per thread and a grid of 32
** blocks per SM: the fastest of the plain read kernels measured on an H100
** (four or eight loads per thread, 4 to 32 blocks per SM, and tiled
** cp.async copies like the GEMV's).  The XOR keeps the loads alive; the
** sink is written only if it hits a value no buffer here holds. */
static const char *read_src =
    "struct lb_u4 { unsigned x, y, z, w; };\n"
    "__device__ __forceinline__ unsigned lb_ld(const lb_u4 *p) {\n"
    "  lb_u4 v;\n"
    "  asm volatile(\"ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\"\n"
    "               : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w)\n"
    "               : \"l\"(p));\n"
    "  return v.x ^ v.y ^ v.z ^ v.w;\n"
    "}\n"
    "extern \"C\" __global__ void lb_read(const lb_u4 *p, unsigned long long n,\n"
    "                                    unsigned *sink) {\n"
    "  const unsigned long long s = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x +\n"
    "                         threadIdx.x;\n"
    "  unsigned acc = 0;\n"
    "  for (; i + 3 * s < n; i += 4 * s) {\n"
    "    unsigned a = lb_ld(p + i), b = lb_ld(p + i + s), c = lb_ld(p + i + 2 * s),\n"
    "             d = lb_ld(p + i + 3 * s);\n"
    "    acc ^= a ^ b ^ c ^ d;\n"
    "  }\n"
    "  for (; i < n; i += s) acc ^= lb_ld(p + i);\n"
    "  if (acc == 0x9e3779b9u) sink[0] = acc;\n"
    "}\n";

/* Kernel `name` of src, compiled for sm_<arch> through lowbit's NVRTC path
** and disk cache, and loaded.  0 on failure, with `what` and the reason
** printed. */
static int load(const char *src, const char *name, int arch, const char *what,
                const lb_cu **cu, CUmodule *mod, CUfunction *fn) {
  lb_binary bin;
  int cache;
  double sec;
  CUresult rc;
  memset(&bin, 0, sizeof bin);
  if (lb_cuda(cu) != LB_OK || lb_obtain(src, arch, &bin, &cache, &sec) != LB_OK) {
    fprintf(stderr, "%s: %s\n", what, lb_errmsg());
    return 0;
  }
  rc = (*cu)->ModuleLoadData(mod, bin.data);
  if (rc == CUDA_SUCCESS) rc = (*cu)->ModuleGetFunction(fn, *mod, name);
  lb_binary_free(&bin);
  if (rc != CUDA_SUCCESS) {
    fprintf(stderr, "%s: loading the kernel failed (CUresult %d)\n", what, (int)rc);
    return 0;
  }
  return 1;
}

int lb_floor_init(lb_floor *f, int arch, int sms) {
  memset(f, 0, sizeof *f);
  if (!load(read_src, "lb_read", arch, "read floor", &f->cu, &f->mod, &f->fn))
    return 0;
  f->grid = (unsigned)(sms > 0 ? sms : 1) * 32u;
  if (cudaMalloc((void **)&f->sink, 16) != cudaSuccess) {
    fprintf(stderr, "read floor: cudaMalloc failed\n");
    return 0;
  }
  return 1;
}

int lb_floor_size(lb_floor *f, size_t bytes) {
  bytes = (bytes + 15) / 16 * 16;
  if (bytes > f->cap) {
    cudaFree(f->buf);
    f->buf = NULL;
    f->cap = 0;
    if (cudaMalloc(&f->buf, bytes) != cudaSuccess ||
        cudaMemset(f->buf, 1, bytes) != cudaSuccess) {
      fprintf(stderr, "read floor: cannot allocate %zu bytes\n", bytes);
      return 0;
    }
    f->cap = bytes;
  }
  f->chunks = bytes / 16;
  return 1;
}

int lb_floor_launch(void *p) {
  lb_floor *f = p;
  unsigned long long n = f->chunks;
  void *args[3];
  args[0] = &f->buf;
  args[1] = &n;
  args[2] = &f->sink;
  return f->cu->LaunchKernel(f->fn, f->grid, 1, 1, 256, 1, 1, 0, NULL, args,
                             NULL) == CUDA_SUCCESS;
}

void lb_floor_free(lb_floor *f) {
  if (f->mod) f->cu->ModuleUnload(f->mod);
  cudaFree(f->buf);
  cudaFree(f->sink);
  memset(f, 0, sizeof *f);
}

/* The tensor cores' ceiling for the instruction the kernels use: each warp
** issues mma.m16n8k16 (f16 in, f32 sums) on registers only, 16 independent
** sums, 8 warps a block, 2 blocks an SM (on an H100 fewer sums or warps
** measured lower, more the same). */
static const char *mma_src =
    "extern \"C\" __global__ void lb_mma_peak(float *sink, int iters) {\n"
    "  unsigned a = threadIdx.x * 2654435761u, b = a ^ 0x3c003c00u;\n"
    "  float d[16][4] = {};\n"
    "  for (int i = 0; i < iters; i++)\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 16; j++)\n"
    "      asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \"\n"
    "                   \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, \"\n"
    "                   \"{%0, %1, %2, %3};\"\n"
    "                   : \"+f\"(d[j][0]), \"+f\"(d[j][1]), \"+f\"(d[j][2]), \"+f\"(d[j][3])\n"
    "                   : \"r\"(a), \"r\"(b), \"r\"(a), \"r\"(b), \"r\"(b), \"r\"(a));\n"
    "  float s = 0.f;\n"
    "#pragma unroll\n"
    "  for (int j = 0; j < 16; j++) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];\n"
    "  if (s == 1.25f) sink[0] = s;\n"
    "}\n";

double lb_mma_ceiling(int arch, int sms) {
  const lb_cu *cu;
  CUmodule mod = NULL;
  CUfunction fn;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float *sink = NULL, ms = 0.f, best = 0.f;
  int iters = 4096, r, ok = 0;
  void *args[2];
  if (!load(mma_src, "lb_mma_peak", arch, "mma ceiling", &cu, &mod, &fn)) return 0;
  if (cudaMalloc((void **)&sink, 16) != cudaSuccess ||
      cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
    goto done;
  args[0] = &sink;
  args[1] = &iters;
  for (r = 0; r < 6; r++) {   /* the first warms up; the best of the rest */
    if (cudaEventRecord(e0, 0) != cudaSuccess ||
        cu->LaunchKernel(fn, (unsigned)sms * 2u, 1, 1, 256, 1, 1, 0, NULL, args,
                         NULL) != CUDA_SUCCESS ||
        cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
        cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      goto done;
    if (r > 0 && (best == 0.f || ms < best)) best = ms;
  }
  ok = best > 0.f;
done:
  if (!ok) fprintf(stderr, "mma ceiling: the measurement failed\n");
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaFree(sink);
  if (mod) cu->ModuleUnload(mod);
  /* 2 * 16 * 8 * 16 flops an MMA, 16 MMAs an iteration, 8 warps a block */
  return ok ? 2.0 * 16 * 8 * 16 * 16 * iters * 8.0 * sms * 2 / (best * 1e-3) / 1e12 : 0;
}
