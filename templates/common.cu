// ---------------------------------------------------------------------------
// templates/common.cu: what every kernel kind's template uses, emitted after
// the format prelude and before the kind's template.
// ---------------------------------------------------------------------------

// Global -> shared memory copies with cp.async (16 bytes, L2 only): bytes
// in flight without holding registers.  A copy is visible to the thread
// that issued it after cp.async.wait_group, to others after a barrier.
// L1: through L1 instead, for bytes every block of an SM copies (x): the
// blocks after the first find the lines there, where .cg sends each
// block's copy to L2.
template <bool L1 = false>
__device__ __forceinline__ void lb_cp16(void *smem, const void *gmem) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  if constexpr (L1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
  else
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
// v, as a value the compiler cannot see through: a condition on it is
// not folded away at compile time (it costs a compare at run time).
__device__ __forceinline__ int lb_opaque(int v) {
  asm volatile("" : "+r"(v));
  return v;
}
// A hint that the line holding p will be read soon: it is brought into L2,
// no register is written and nothing waits for it.
__device__ __forceinline__ void lb_pf_l2(const void *p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
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
// p, for loads after lb_wait_prior of what the kernel before wrote: the
// compiler cannot know its value before the wait, so no load through it is
// moved above the wait (the GEMV loads x by an asm without volatile, which
// the compiler may move past the wait's asm).
template <class T>
__device__ __forceinline__ const T *lb_after_prior(const T *p) {
  asm volatile("" : "+l"(p));
  return p;
}
__device__ __forceinline__ void lb_let_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Clusters (sm_90): blocks that split K meet in shared memory, the first
// block of the cluster reading the others' sums.  A barrier for the whole
// cluster (in two halves, so that a block can work between them), the
// block's rank and the cluster's size, and loads of another block's shared
// memory.  Before sm_90 a cluster is one block: never called there.
struct __align__(16) lb_f4 { float x, y, z, w; };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void lb_cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void lb_cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned lb_cluster_rank() {
  unsigned r;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned lb_cluster_size() {
  unsigned n;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
// p in this block's shared memory, as block `rank` of the cluster has it
__device__ __forceinline__ unsigned lb_peer(const void *p, int rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(r) : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(rank));
  return r;
}
__device__ __forceinline__ float lb_ld_peer(const float *p, int rank) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(lb_peer(p, rank)) : "memory");
  return v;
}
__device__ __forceinline__ lb_f4 lb_ld_peer4(const lb_f4 *p, int rank) {
  lb_f4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(lb_peer(p, rank)) : "memory");
  return v;
}
#else
__device__ __forceinline__ void lb_cluster_arrive() {}
__device__ __forceinline__ void lb_cluster_wait() {}
__device__ __forceinline__ unsigned lb_cluster_rank() { return 0; }
__device__ __forceinline__ unsigned lb_cluster_size() { return 1; }
__device__ __forceinline__ float lb_ld_peer(const float *, int) { return 0.f; }
__device__ __forceinline__ lb_f4 lb_ld_peer4(const lb_f4 *, int) { return lb_f4{}; }
#endif
__device__ __forceinline__ void lb_cluster_sync() {
  lb_cluster_arrive();
  lb_cluster_wait();
}
