// ---------------------------------------------------------------------------
// templates/common.cu: what every kernel kind's template uses, emitted after
// the format prelude and before the kind's template.
// ---------------------------------------------------------------------------

// Global -> shared memory copies with cp.async (16 bytes, L2 only): bytes
// in flight without holding registers.  A copy is visible to the thread
// that issued it after cp.async.wait_group, to others after a barrier.
__device__ __forceinline__ void lb_cp16(void *smem, const void *gmem) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
// The same for bytes read once (packed weights): an L2 policy that makes
// them the first lines to go (lb_read_once), so that they do not push out
// what is in L2 already.  Dirty lines above all: evicting them writes them
// back to memory, which shares the bandwidth the weights stream on.
__device__ __forceinline__ unsigned long long lb_read_once() {
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
               : "=l"(pol));
  return pol;
}
__device__ __forceinline__ void lb_cp16_once(void *smem, const void *gmem,
                                             unsigned long long pol) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
               ::"r"(s), "l"(gmem), "l"(pol));
}
__device__ __forceinline__ void lb_cp_commit() {
  asm volatile("cp.async.commit_group;");
}
template <int N>
__device__ __forceinline__ void lb_cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}


// Programmatic dependent launch (sm_90; lb_op_overlap).  Launched with it, a
// kernel may start while the kernel before it on the stream still runs.
// lb_wait_prior returns once that kernel has finished and its writes are
// visible: before it, a kernel reads only what no kernel writes (packed
// weights, scales, zeros) and writes nothing.  lb_let_next lets the kernel
// after this one start (once every block of this one has said so or
// ended).  Launched without it, or before sm_90, both do nothing.
__device__ __forceinline__ void lb_wait_prior() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void lb_let_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
