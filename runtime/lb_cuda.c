/*
** lb_cuda.c: open libcuda.so.1 and fetch the entry points lowbit uses.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lb_cuda.h"
#include "lb_err.h"

static lb_cu cu;
static lb_status cu_status = LB_ENODEV;
static char cu_msg[512];
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* dlsym returns void *; going through a union keeps the cast defined. */
static int sym(void *lib, const char *name, void *slot) {
  void *p = dlsym(lib, name);
  if (p == NULL) {
    snprintf(cu_msg, sizeof cu_msg, "libcuda.so.1 lacks %s: driver too old",
             name);
    return 0;
  }
  memcpy(slot, &p, sizeof p);
  return 1;
}

static void load(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CUresult rc;
  if (lib == NULL) {
    snprintf(cu_msg, sizeof cu_msg, "no CUDA driver: cannot open "
             "libcuda.so.1 (%s)", dlerror());
    return;
  }
  if (!sym(lib, "cuInit", &cu.Init) ||
      !sym(lib, "cuGetErrorString", &cu.GetErrorString) ||
      !sym(lib, "cuDeviceGetCount", &cu.DeviceGetCount) ||
      !sym(lib, "cuDeviceGet", &cu.DeviceGet) ||
      !sym(lib, "cuDeviceGetAttribute", &cu.DeviceGetAttribute) ||
      !sym(lib, "cuDeviceGetName", &cu.DeviceGetName) ||
      !sym(lib, "cuDriverGetVersion", &cu.DriverGetVersion) ||
      !sym(lib, "cuDevicePrimaryCtxRetain", &cu.DevicePrimaryCtxRetain) ||
      !sym(lib, "cuDevicePrimaryCtxRelease_v2", &cu.DevicePrimaryCtxRelease) ||
      !sym(lib, "cuCtxGetCurrent", &cu.CtxGetCurrent) ||
      !sym(lib, "cuCtxSetCurrent", &cu.CtxSetCurrent) ||
      !sym(lib, "cuCtxPushCurrent_v2", &cu.CtxPushCurrent) ||
      !sym(lib, "cuCtxPopCurrent_v2", &cu.CtxPopCurrent) ||
      !sym(lib, "cuModuleLoadData", &cu.ModuleLoadData) ||
      !sym(lib, "cuModuleUnload", &cu.ModuleUnload) ||
      !sym(lib, "cuModuleGetFunction", &cu.ModuleGetFunction) ||
      !sym(lib, "cuFuncGetAttribute", &cu.FuncGetAttribute) ||
      !sym(lib, "cuFuncSetAttribute", &cu.FuncSetAttribute) ||
      !sym(lib, "cuLaunchKernel", &cu.LaunchKernel) ||
      !sym(lib, "cuMemAlloc_v2", &cu.MemAlloc) ||
      !sym(lib, "cuMemFree_v2", &cu.MemFree) ||
      !sym(lib, "cuMemcpyHtoDAsync_v2", &cu.MemcpyHtoDAsync) ||
      !sym(lib, "cuMemcpyDtoHAsync_v2", &cu.MemcpyDtoHAsync) ||
      !sym(lib, "cuStreamSynchronize", &cu.StreamSynchronize))
    return;
  {
    void *p = dlsym(lib, "cuLaunchKernelEx");   /* optional */
    memcpy(&cu.LaunchKernelEx, &p, sizeof p);
    p = dlsym(lib, "cuTensorMapEncodeTiled");   /* optional */
    memcpy(&cu.TensorMapEncodeTiled, &p, sizeof p);
  }
  rc = cu.Init(0);
  if (rc != CUDA_SUCCESS) {
    const char *s = NULL;
    cu.GetErrorString(rc, &s);
    snprintf(cu_msg, sizeof cu_msg, "cuInit failed: %s (no usable GPU?)",
             s ? s : "unknown error");
    return;
  }
  cu_status = LB_OK;
}

lb_status lb_cuda(const lb_cu **out) {
  pthread_once(&cu_once, load);
  if (cu_status != LB_OK) return lb_fail(cu_status, "%s", cu_msg);
  *out = &cu;
  return LB_OK;
}

lb_status lb_cufail(CUresult rc, const char *where, const char *call) {
  const char *s = NULL;
  if (cu.GetErrorString) cu.GetErrorString(rc, &s);
  return lb_fail(LB_ECUDA, "%s: %s: %s (%d)", where, call,
                 s ? s : "unknown error", (int)rc);
}
