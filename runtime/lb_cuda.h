/*
** lb_cuda.h: the CUDA driver API, opened at run time.
**
** lowbit links no driver library: libcuda.so.1 is opened on first use, so
** the library loads, generates and compiles on machines with no GPU and
** reports LB_ENODEV only when asked to run.
*/
#ifndef lb_cuda_h
#define lb_cuda_h

#include <cuda.h>

#include "lowbit.h"

typedef struct lb_cu {
  CUresult (*Init)(unsigned);
  CUresult (*GetErrorString)(CUresult, const char **);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  /* the tuning table's device key */
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxGetCurrent)(CUcontext *);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxPushCurrent)(CUcontext);
  CUresult (*CtxPopCurrent)(CUcontext *);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
  CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  /* lb_pack_device's flag for a code out of range */
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  /* NULL where the driver has none (before CUDA 12): no lb_op_overlap */
  CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                             void **);
  /* NULL where the driver has none (before CUDA 12): no plan with tm=1 */
  CUresult (*TensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType,
                                   cuuint32_t, void *, const cuuint64_t *,
                                   const cuuint64_t *, const cuuint32_t *,
                                   const cuuint32_t *, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion,
                                   CUtensorMapFloatOOBfill);
} lb_cu;

/* The driver's entry points, loaded and cuInit'ed once. */
lb_status lb_cuda(const lb_cu **out);

/* Fails with st and "where: cuXxx: <driver message>". */
lb_status lb_cufail(CUresult rc, const char *where, const char *call);

#endif
