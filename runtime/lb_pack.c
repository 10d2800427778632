/*
** lb_pack.c: packing on the GPU (templates/pack.cu), for weights that are
** already in device memory: no copy to the host and back, and no host
** thread walking every code.
*/
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_ctx.h"
#include "lb_err.h"
#include "lb_layout.h"

extern const char lb_tpl_pack[];   /* templates/pack.cu, embedded */

lb_status lb_pack_device(lb_ctx *c, const lb_recipe *r, int n, int k,
                         const void *codes, void *packed, void *stream) {
  static const char *const fn = "lb_pack_device";
  const lb_cu *cu;
  lb_layout lay;
  lb_sizes sz;
  lb_scope s;
  CUfunction f;
  CUdeviceptr bad = 0;
  CUresult rc = CUDA_SUCCESS;
  const char *call = NULL;
  unsigned long long hbad = ULLONG_MAX;
  int bits, words;
  lb_status st;
  if (c == NULL) return lb_fail(LB_EARG, "%s: context is NULL", fn);
  if ((st = lb_sizes_of(r, n, k, &sz)) != LB_OK) {   /* recipe, n, k */
    char why[512];   /* the message, renamed: never format it into itself */
    snprintf(why, sizeof why, "%s", lb_errmsg());
    return lb_fail(st, "%s (%s)", why, fn);
  }
  if (codes == NULL || packed == NULL)
    return lb_fail(LB_EARG, "%s: codes or packed is NULL", fn);
  if ((uintptr_t)packed % 4 != 0)
    return lb_fail(LB_EARG, "%s: packed (%p) must be 4-byte aligned", fn,
                   packed);
  lb_layout_of(r, &lay);
  bits = lay.bits;
  words = lay.words;
  cu = lb_ctx_cu(c);
  if ((st = lb_ctx_enter(c, &s, fn)) != LB_OK) return st;
  if ((st = lb_ctx_kernel(c, lb_tpl_pack, "lb_pack_codes", &f, fn)) != LB_OK)
    goto out;
  /* Where a code does not fit: the smallest flat index, ULLONG_MAX if none.
  ** The copies and the launch are on the caller's stream, and the call
  ** waits for it (the flag must be read): packing is not for the hot
  ** path, nor for stream capture. */
  if ((rc = cu->MemAlloc(&bad, sizeof hbad)) != CUDA_SUCCESS) {
    call = "cuMemAlloc";
    goto out;
  }
  if ((rc = cu->MemcpyHtoDAsync(bad, &hbad, sizeof hbad, (CUstream)stream)) !=
      CUDA_SUCCESS) {
    call = "cuMemcpyHtoDAsync";
    goto out;
  }
  {
    const long long total = (long long)(sz.packed / 4);
    long long blocks = (total + 255) / 256, most = 8LL * lb_ctx_sms(c);
    void *args[7] = {(void *)&codes, &packed, &n, &k, &bits, &words, &bad};
    if (blocks > most) blocks = most;
    if ((rc = cu->LaunchKernel(f, (unsigned)blocks, 1, 1, 256, 1, 1, 0,
                               (CUstream)stream, args, NULL)) !=
        CUDA_SUCCESS) {
      call = "cuLaunchKernel";
      goto out;
    }
  }
  if ((rc = cu->MemcpyDtoHAsync(&hbad, bad, sizeof hbad, (CUstream)stream)) !=
      CUDA_SUCCESS) {
    call = "cuMemcpyDtoHAsync";
    goto out;
  }
  if ((rc = cu->StreamSynchronize((CUstream)stream)) != CUDA_SUCCESS) {
    call = "cuStreamSynchronize";
    goto out;
  }
  if (hbad != ULLONG_MAX)
    st = lb_fail(LB_EARG, "%s: code at [%llu][%llu] does not fit in %d bits "
                 "(packed is left incomplete)", fn, hbad / (unsigned)k,
                 hbad % (unsigned)k, bits);
out:
  if (call) st = lb_cufail(rc, fn, call);
  if (bad) cu->MemFree(bad);
  lb_ctx_leave(&s);
  return st;
}
