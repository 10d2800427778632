// bench/wgmma_rate.cu: how fast an sm_90's tensor pipe retires wgmma
// m64nNk16 (f16 operands, f32 sums) for the loop shapes the GEMM kind's
// wgmma plan could take, with nothing else in the way: no global memory,
// B (the activations) a fixed tile of shared memory, A (the weights) in
// registers (RS, as templates/gemm.cu) or in shared memory (SS).
//
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o /tmp/wgmma_rate \
//     bench/wgmma_rate.cu && /tmp/wgmma_rate [ops]
//
// (`ops`: the instruction kinds' table instead, below: the same count of
// instructions a register, of one kind at a time.)
// (about 25 s on an H200 with the compile; ctest compiles it where nvcc is,
// so that it keeps building.)  Not part of the library: nothing links it.
//
// Each block (one an SM, 132 on an H100 or H200) is 1 to 4 warpgroups;
// each warpgroup runs `iters` sub-stages of 8 wgmmas (128 k-values, the
// rules' 4 code rows) on its own accumulators.  A sub-stage's A operands
// are made by `alu` steps a register (two LOP3s and an HFMA2 each, ptxas's
// form of `(x & mask) | magic` and the HFMA2, standing in for the
// dequantisation: templates/gemm.cu spends about 10 instructions an A
// register at M = 128, about alu 3) or from the seed alone (alu 0).  Orders (what
// the GEMM kind's loop does, and what it could do):
//   wait0  : wgmma.wait_group 0, make the sub-stage's A, fence, 8 wgmmas,
//            commit (templates/gemm.cu today);
//   turns  : as wait0, and the two warpgroups issue in turn (named
//            barriers 1 and 2; tried in templates/gemm.cu 2026-11-30);
//   wait1  : two sets of A registers taking turns: wait_group 1 retires
//            the sub-stage before last, whose set is then rewritten while
//            the last one's wgmmas run;
//   ss     : A from shared memory, wait_group 1, no A to make (the rate
//            with no register operand);
//   ws     : warp-specialised: two warpgroups multiply (SS, wait_group 1)
//            while one or two more make their A (alu steps a register)
//            and store it into a ring of four 32 KB slots of shared memory,
//            handed over by mbarriers (full: made; empty: multiplied);
//            "wgs" counts both kinds, the TFLOP/s the multipliers';
//   wait1+, ss+: wait1 (one warpgroup) and ss (two), alu 0, while another
//            kernel's warps (one block of four an SM, `busy`) run 5 ALU
//            steps a register on the same SMs (its own progress is not
//            measured).
// Prints TFLOP/s a row (to stderr as each is measured), and at the end the
// table with each row's share of the best rate.  docs/architecture.md
// ("Overlap inside a warpgroup") has the H200's figures and what they say.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

template <int N>
__device__ __forceinline__ void wg_rs(float (&d)[N / 2], const unsigned (&a)[4],
                                      unsigned long long bd);
template <int N>
__device__ __forceinline__ void wg_ss(float (&d)[N / 2], unsigned long long ad,
                                      unsigned long long bd);
// The accumulators of one wgmma as asm operands and their registers: every
// form below writes them out (inline asm takes no arrays), 8 at a time.
#define WG_D8(i)                                                           \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_D64(i)                                                          \
  WG_D8(i), WG_D8(i + 8), WG_D8(i + 16), WG_D8(i + 24), WG_D8(i + 32),       \
      WG_D8(i + 40), WG_D8(i + 48), WG_D8(i + 56)
#define WG_R64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, " \
  "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, " \
  "%28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, " \
  "%41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, " \
  "%54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_R128 \
  WG_R64 ", " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, " \
  "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, " \
  "%90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, " \
  "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, " \
  "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, " \
  "%125, %126, %127"

template <> __device__ __forceinline__ void wg_rs<128>(float (&d)[64], const unsigned (&a)[4], unsigned long long bd) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" WG_R64 "}, "
               "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
               : WG_D64(0)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bd), "r"(1));
}
template <> __device__ __forceinline__ void wg_ss<128>(float (&d)[64], unsigned long long ad, unsigned long long bd) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" WG_R64 "}, "
               "%64, %65, p, 1, 1, 0, 0;\n}\n"
               : WG_D64(0)
               : "l"(ad), "l"(bd), "r"(1));
}
template <> __device__ __forceinline__ void wg_rs<256>(float (&d)[128], const unsigned (&a)[4], unsigned long long bd) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" WG_R128 "}, "
               "{%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
               : WG_D64(0), WG_D64(64)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(bd), "r"(1));
}
template <> __device__ __forceinline__ void wg_ss<256>(float (&d)[128], unsigned long long ad, unsigned long long bd) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" WG_R128 "}, "
               "%128, %129, p, 1, 1, 0, 0;\n}\n"
               : WG_D64(0), WG_D64(64)
               : "l"(ad), "l"(bd), "r"(1));
}

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int K>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(K) : "memory");
}
// A register the compiler must keep until here (its value "changed"): a
// set of A operands stays put while wgmmas may still read it.
__device__ __forceinline__ void keep(unsigned &r) { asm volatile("" : "+r"(r)::"memory"); }
__device__ __forceinline__ void keepf(float &r) { asm volatile("" : "+f"(r)::"memory"); }

// Shared-memory descriptor, no swizzle: core matrices of 8 rows x 16 bytes
// at 128-byte strides, the next 8 k-values `lead` 16-byte units on.
__device__ __forceinline__ unsigned long long desc(unsigned addr, int lead) {
  return ((addr >> 4) & 0x3fff) | (unsigned long long)lead << 16 | 8ull << 32;
}

// A sub-stage's 32 A registers from a seed: ALU steps each (a mask and a
// magic number, which ptxas makes two LOP3s since one LOP3 holds one
// immediate, then an HFMA2; dependent, the 32 chains independent, as a
// sub-stage's A registers are).  OP (the `ops` table) makes a step two
// instructions of one kind instead, to tell which kind keeps the tensor
// pipe waiting: OP_L two LOP3s, OP_H two HFMA2s, OP_F two FFMAs, OP_I two
// IMADs, OP_P two PRMTs (OP_LH: the three above).  Each is PTX of its one
// instruction, with operands ptxas cannot fold (kernel arguments).
enum { OP_LH, OP_L, OP_H, OP_F, OP_I, OP_P };   // (op_names[], below: change together)
template <int OP>
__device__ __forceinline__ unsigned step(unsigned x, unsigned s2, unsigned b2) {
  if constexpr (OP == OP_LH) {
    x = (x & 0x000f000fu) | 0x64006400u;
    __half2 h = __hfma2(*reinterpret_cast<__half2 *>(&x),
                        *reinterpret_cast<const __half2 *>(&s2),
                        *reinterpret_cast<const __half2 *>(&b2));
    return *reinterpret_cast<unsigned *>(&h);
  } else if constexpr (OP == OP_L) {
    // (x & s2) | b2, then (x | s2) ^ b2: no two steps make one LOP3
    asm("lop3.b32 %0, %0, %1, %2, 0xea;" : "+r"(x) : "r"(s2), "r"(b2));
    asm("lop3.b32 %0, %0, %1, %2, 0x1e;" : "+r"(x) : "r"(s2), "r"(b2));
  } else if constexpr (OP == OP_H) {
    asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
    asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
  } else if constexpr (OP == OP_F) {
    asm("fma.rn.f32 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
    asm("fma.rn.f32 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
  } else if constexpr (OP == OP_I) {
    asm("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
    asm("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
  } else {
    asm("prmt.b32 %0, %0, %1, %2;" : "+r"(x) : "r"(s2), "r"(b2));
    asm("prmt.b32 %0, %0, %1, %2;" : "+r"(x) : "r"(b2), "r"(s2));
  }
  return x;
}
template <int ALU, int OP = OP_LH>
__device__ __forceinline__ void make_a(unsigned (&a)[8][4], unsigned seed, unsigned s2,
                                       unsigned b2) {
#pragma unroll
  for (int j = 0; j < 8; j++)
#pragma unroll
    for (int r = 0; r < 4; r++) {
      unsigned x = seed + 0x9e3779b9u * (4 * j + r);
#pragma unroll
      for (int i = 0; i < ALU; i++) x = step<OP>(x, s2, b2);
      a[j][r] = x;
    }
}

// mbarriers (WS): arrivals counted, phases waited on by parity.
__device__ __forceinline__ void mb_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mb_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mb_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}

enum { WAIT0, TURNS, WAIT1, SS, WS };   // (names[], below: change them together)

template <int N, int ORDER, int WGS, int ALU, int OP = OP_LH>
__global__ void __launch_bounds__(128 * WGS, 1)
rate(int iters, unsigned s2, unsigned b2, float *sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  // B: N rows x 16 k (N x 32 bytes) at base; A (SS): 64 x 16 at base + 16 KB
  const unsigned long long bd = desc(base, N);
  const unsigned long long ad = desc(base + 16384, 64);
  const int wg = threadIdx.x >> 7;
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; i++) {
    d[i] = 0.f;
    keepf(d[i]);
  }
  unsigned a0[8][4], a1[8][4];
  for (int i = threadIdx.x; i < 8192; i += blockDim.x)
    reinterpret_cast<unsigned *>(smem)[i] = 0x3c003c00u ^ (i & 7);   // small halves
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned seed0 = threadIdx.x * 2654435761u;
  if constexpr (ORDER == WS) {
    // Warpgroups 0 and 1 multiply (SS: A and B from shared memory); the
    // other WGS - 2 make each sub-stage's A (alu steps a register, as the
    // other orders' warps do for themselves) and store it into one of S
    // slots of 32 KB (16 KB a multiplying warpgroup), after B's 8 KB at
    // base.  full[s] counts the makers' warps in, empty[s] the multipliers'
    // warps once their wgmmas that read slot s are retired.
    constexpr int S = 4, MAKERS = WGS - 2;
    static_assert(MAKERS >= 1 && 2 % MAKERS == 0, "one or two making warpgroups");
    const unsigned slots = base + 8192, bars = base + 8192 + S * 32768;
    if (threadIdx.x == 0) {
      for (int i = 0; i < S; i++) {
        mb_init(bars + 8 * i, 4 * MAKERS);
        mb_init(bars + 8 * (S + i), 8);
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    const int lane = threadIdx.x & 31;
    if (wg >= 2) {
      const int m = wg - 2, t = threadIdx.x & 127;
      for (int it = 0; it < iters; it++) {
        const int sl = it % S;
        if (it >= S) mb_wait(bars + 8 * (S + sl), (unsigned)(it / S - 1) & 1u);
#pragma unroll
        for (int h = 0; h < 2 / MAKERS; h++) {   // 16 KB a set of 128 threads
          // (chunk (h MAKERS + m) 8 + j of 2 KB: the A of multiplying
          // warpgroup h MAKERS + m's wgmma j)
          make_a<ALU, OP>(a0, seed0 + it + h, s2, b2);
          const unsigned at = slots + sl * 32768 + (h * MAKERS + m) * 16384 + t * 16;
#pragma unroll
          for (int j = 0; j < 8; j++)
            asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(at + j * 2048),
                         "r"(a0[j][0]), "r"(a0[j][1]), "r"(a0[j][2]), "r"(a0[j][3])
                         : "memory");
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // seen by wgmma
        __syncwarp();
        if (lane == 0) mb_arrive(bars + 8 * sl);
      }
    } else {
      for (int it = 0; it < iters; it++) {
        const int sl = it % S;
        mb_wait(bars + 8 * sl, (unsigned)(it / S) & 1u);
        wg_fence();
        const unsigned long long as = desc(slots + sl * 32768 + wg * 16384, 64);
#pragma unroll
        for (int j = 0; j < 8; j++) wg_ss<N>(d, as + 128 * j, bd + 2 * j);
        wg_commit();
        wg_wait<1>();   // the sub-stage before is retired: its slot is free
        if (it > 0 && lane == 0) mb_arrive(bars + 8 * (S + (it - 1) % S));
      }
    }
  } else if constexpr (ORDER == SS) {
    for (int it = 0; it < iters; it++) {
      wg_wait<1>();
      wg_fence();
#pragma unroll
      for (int j = 0; j < 8; j++) wg_ss<N>(d, ad + 2 * j, bd + 2 * j);
      wg_commit();
    }
  } else if constexpr (ORDER == WAIT1) {
    for (int it = 0; it < iters; it += 2) {
      wg_wait<1>();
#pragma unroll
      for (int j = 0; j < 8; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) keep(a0[j][r]);
      make_a<ALU, OP>(a0, seed0 + it, s2, b2);
      wg_fence();
#pragma unroll
      for (int j = 0; j < 8; j++) wg_rs<N>(d, a0[j], bd + 2 * j);
      wg_commit();
      wg_wait<1>();
#pragma unroll
      for (int j = 0; j < 8; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) keep(a1[j][r]);
      make_a<ALU, OP>(a1, seed0 + it + 1, s2, b2);
      wg_fence();
#pragma unroll
      for (int j = 0; j < 8; j++) wg_rs<N>(d, a1[j], bd + 2 * j);
      wg_commit();
    }
  } else {
    if (ORDER == TURNS && wg == 1) asm volatile("bar.arrive 1, 256;" ::: "memory");
    for (int it = 0; it < iters; it++) {
      wg_wait<0>();
      make_a<ALU, OP>(a0, seed0 + it, s2, b2);
      // (no branch near the wgmmas: the barrier's id in a register, and
      // no turn skipped, so ptxas does not serialise them, C7520)
      if (ORDER == TURNS) asm volatile("bar.sync %0, 256;" ::"r"(1 + wg) : "memory");
      wg_fence();
#pragma unroll
      for (int j = 0; j < 8; j++) wg_rs<N>(d, a0[j], bd + 2 * j);
      wg_commit();
      if (ORDER == TURNS) asm volatile("bar.arrive %0, 256;" ::"r"(2 - wg) : "memory");
    }
    // (turns: warpgroup 1 gave 0 its first turn before the loop, and 0
    // takes 1's last one after it, so that every arrival meets its wait)
    if (ORDER == TURNS && wg == 0) asm volatile("bar.sync 1, 256;" ::: "memory");
  }
  wg_wait<0>();
#pragma unroll
  for (int i = 0; i < N / 2; i++) keepf(d[i]);   // read below only after the wait
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; i++) s += d[i];
  if (s == 1234.5f) sink[threadIdx.x] = s;   // keeps the sums alive
}

// ALU work alone, beside the wgmma kernel on the same SMs (one block of
// four warps an SM, no shared memory): whether other warps' instructions
// slow a warpgroup's wgmmas as its own do.
template <int ALU>
__global__ void __launch_bounds__(128) busy(int iters, unsigned s2, unsigned b2, float *sink) {
  unsigned a[8][4], acc = 0;
  for (int it = 0; it < iters; it++) {
    make_a<ALU>(a, threadIdx.x * 2654435761u + it, s2, b2);
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc += a[j][r];
  }
  if (acc == 12345u) sink[threadIdx.x] = (float)acc;
}

// TFLOP/s of one loop shape: the best of five launches of 132 blocks
// (BESIDE: each with the ALU kernel running on the same SMs, started first
// and lasting longer).
template <int N, int ORDER, int WGS, int ALU, bool BESIDE = false, int OP = OP_LH>
static double run(int sms, float *sink) {
  const int wgs = WGS, iters = 4000;
  auto k = rate<N, ORDER, WGS, ALU, OP>;
  const int smem = ORDER == WS ? 8192 + 4 * 32768 + 64 : 64 * 1024;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const __half2 s = __floats2half2_rn(1.0f, 1.0f), b = __floats2half2_rn(-1024.f, -1024.f);
  const unsigned s2 = *reinterpret_cast<const unsigned *>(&s),
                 b2 = *reinterpret_cast<const unsigned *>(&b);
  cudaStream_t sm, sb;
  CK(cudaStreamCreateWithFlags(&sm, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  k<<<sms, 128 * wgs, smem, sm>>>(iters / 10, s2, b2, sink);   // warm-up
  CK(cudaGetLastError());
  float best = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    if (BESIDE) {
      busy<5><<<sms, 128, 0, sb>>>(60000, s2, b2, sink);
      CK(cudaGetLastError());
    }
    CK(cudaEventRecord(e0, sm));
    k<<<sms, 128 * wgs, smem, sm>>>(iters, s2, b2, sink);
    CK(cudaEventRecord(e1, sm));
    CK(cudaEventSynchronize(e1));
    CK(cudaDeviceSynchronize());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaStreamDestroy(sm));
  CK(cudaStreamDestroy(sb));
  const double flop = 2.0 * 64 * N * 16 * 8 * (double)iters * (ORDER == WS ? 2 : wgs) * sms;
  return flop / (best * 1e-3) / 1e12;
}

struct row { int n, order, wgs, alu; bool beside; double tf; int op; };
static const char *const names[] = {"wait0", "turns", "wait1", "ss", "ws"};   // the enum's order
static const char *const op_names[] = {"lop3+hfma2", "lop3", "hfma2", "ffma", "imad", "prmt"};

// Appends a row, printed as it comes too, should a later one never end.
static void add(row *rows, int &nr, row r) {
  rows[nr++] = r;
  fprintf(stderr, "  (N %d, %s%s, %d warpgroups, alu %d of %s: %.1f TFLOP/s)\n", r.n,
          names[r.order], r.beside ? "+" : "", r.wgs, r.alu, op_names[r.op], r.tf);
}

// Every ALU count of one loop shape (A's making has none with SS).
template <int N, int ORDER, int WGS>
static void sweep(row *rows, int &nr, int sms, float *sink) {
  add(rows, nr, {N, ORDER, WGS, 0, false, run<N, ORDER, WGS, 0>(sms, sink)});
  if constexpr (ORDER != SS) {
    add(rows, nr, {N, ORDER, WGS, 3, false, run<N, ORDER, WGS, 3>(sms, sink)});
    add(rows, nr, {N, ORDER, WGS, 5, false, run<N, ORDER, WGS, 5>(sms, sink)});
  }
}

// One instruction kind (OP) at 2 and 5 steps a register (4 and 10
// instructions), one warpgroup with two A sets and two warpgroups as the
// GEMM's block: the `ops` table.
template <int OP>
static void ops(row *rows, int &nr, int sms, float *sink) {
  add(rows, nr, {128, WAIT1, 1, 2, false, run<128, WAIT1, 1, 2, false, OP>(sms, sink), OP});
  add(rows, nr, {128, WAIT1, 1, 5, false, run<128, WAIT1, 1, 5, false, OP>(sms, sink), OP});
  add(rows, nr, {128, WAIT0, 2, 2, false, run<128, WAIT0, 2, 2, false, OP>(sms, sink), OP});
  add(rows, nr, {128, WAIT0, 2, 5, false, run<128, WAIT0, 2, 5, false, OP>(sms, sink), OP});
}

// wgmma_rate: the loop shapes' table; wgmma_rate ops: the instruction
// kinds' table (OP above).
int main(int argc, char **argv) {
  const bool kinds = argc > 1 && strcmp(argv[1], "ops") == 0;
  int dev = 0, sms = 0, major = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9) {
    printf("wgmma_rate: needs an sm_90 device (this one is sm_%d0)\n", major);
    return 2;
  }
  float *sink;
  CK(cudaMalloc(&sink, 4096));
  row rows[64];
  int nr = 0;
  if (kinds) {
    add(rows, nr, {128, WAIT1, 1, 0, false, run<128, WAIT1, 1, 0>(sms, sink), OP_LH});
    add(rows, nr, {128, WAIT0, 2, 0, false, run<128, WAIT0, 2, 0>(sms, sink), OP_LH});
    ops<OP_LH>(rows, nr, sms, sink);
    ops<OP_L>(rows, nr, sms, sink);
    ops<OP_H>(rows, nr, sms, sink);
    ops<OP_F>(rows, nr, sms, sink);
    ops<OP_I>(rows, nr, sms, sink);
    ops<OP_P>(rows, nr, sms, sink);
  } else {
    sweep<128, WAIT0, 1>(rows, nr, sms, sink);
    sweep<128, WAIT1, 1>(rows, nr, sms, sink);
    sweep<128, SS, 1>(rows, nr, sms, sink);
    sweep<128, WAIT0, 2>(rows, nr, sms, sink);
    sweep<128, TURNS, 2>(rows, nr, sms, sink);
    sweep<128, WAIT1, 2>(rows, nr, sms, sink);
    sweep<128, WAIT0, 3>(rows, nr, sms, sink);
    sweep<128, WAIT1, 3>(rows, nr, sms, sink);
    sweep<256, WAIT0, 1>(rows, nr, sms, sink);
    sweep<256, WAIT1, 1>(rows, nr, sms, sink);
    sweep<256, SS, 1>(rows, nr, sms, sink);
    sweep<256, WAIT0, 2>(rows, nr, sms, sink);
    sweep<256, TURNS, 2>(rows, nr, sms, sink);
    sweep<256, WAIT1, 2>(rows, nr, sms, sink);
    sweep<128, WS, 3>(rows, nr, sms, sink);
    sweep<128, WS, 4>(rows, nr, sms, sink);
    sweep<256, WS, 3>(rows, nr, sms, sink);
    // (beside the ALU kernel: one warpgroup of RS wgmmas, two of SS; two RS
    // warpgroups' registers and that kernel's do not fit one SM together)
    add(rows, nr, {128, WAIT1, 1, 0, true, run<128, WAIT1, 1, 0, true>(sms, sink)});
    add(rows, nr, {128, SS, 2, 0, true, run<128, SS, 2, 0, true>(sms, sink)});
  }
  double best = 0;
  for (int i = 0; i < nr; i++) best = rows[i].tf > best ? rows[i].tf : best;
  printf("wgmma m64nNk16 f16 -> f32, %d blocks (one an SM), 8 wgmmas a sub-stage\n", sms);
  printf("%5s %7s %3s %4s %10s %9s %6s\n", "N", "order", "wgs", "alu", "op", "TFLOP/s", "share");
  for (int i = 0; i < nr; i++)
    printf("%5d %6s%s %3d %4d %10s %9.1f %6.2f\n", rows[i].n, names[rows[i].order],
           rows[i].beside ? "+" : " ", rows[i].wgs, rows[i].alu, op_names[rows[i].op],
           rows[i].tf, rows[i].tf / best);
  CK(cudaFree(sink));
  return 0;
}
