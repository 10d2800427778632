// ---------------------------------------------------------------------------
// templates/gemm.cu: the fused low-bit GEMM skeleton, y = x * W^T (+ bias),
// for any number of activation rows, on the tensor cores.
//
// It reads the same packed weights as the GEMV (the prelude's layout), so
// one packed buffer serves every M.  The prelude above supplies the types
// and conversions, LB_BITS / LB_WORDS / LB_CODES / LB_TILE, lb_mma(), and
// for this kind lb_gpair() (two lanes' codes of one code row as a pair of
// 16-bit values), lb_wgroup() / lb_w2() (a group's scale and offset, and the
// dequantised weight pair in the activation type); templates/common.cu the
// cp.async helpers.  The planner (gen/lb_gmplan.c) supplies LB_BM, LB_BN,
// LB_WARPS_M/N/K, LB_R, LB_WS, LB_GSS, LB_GSTEP, LB_SROWB, LB_ZROWB, LB_SSTG,
// LB_ZSTG and LB_STAGES;
// the static_asserts below check what it promised.
//
// Block tile: LB_BN output channels x LB_BM activation rows, over K in
// sub-stages of LB_R code rows (32 LB_R k-values).  A sub-stage's packed
// words and activations travel global -> shared memory with cp.async,
// LB_STAGES sub-stages in flight.  Each warp owns LB_BN / LB_WARPS_N
// channels (MJ groups of 16) and LB_BM / LB_WARPS_M rows (MF groups of 8):
// it dequantises an A operand (16 channels x 16 k) once and multiplies it
// with MF activation fragments, so the dequantisation is shared by MF MMAs.
// LB_WARPS_K warps share each channel and row block, taking alternate code
// rows of every sub-stage; their sums meet in shared memory at the end.
// With gridDim.z > 1 (split-K) block z takes a range of the sub-stages;
// the blocks' f32 sums meet in a cluster's first block (sm_90, LB_CSUM),
// or in a work space that lb_gemm_sum adds up.
//
// Operand layout, as in the GEMV: thread (g, t) = (lane / 4, lane % 4); in
// code row i (k-values 32 i + l of lane l), half h maps thread t's k-slots
// to k = 32 i + 8 t + 4 h .. + 3: one 16-byte chunk of four lanes' words
// for A, and x[row][32 i + 8 t .. + 7] (16 bytes) for both halves of B.
// Weights are dequantised to the activation type before the MMA (a rounding
// of each weight, u |q s| + u |z s| at most; the GEMV avoids it by folding
// scales after the MMA, which at large M would double the accumulators).
//
// With LB_WG (sm_90a plans only) the MMA is Hopper's wgmma: four warps (a
// warpgroup) own 64 channels of each of their LB_MJ groups, the weights
// stay the A operand in registers (dequantised as above), and the
// activations are the B operand read by the tensor cores from shared
// memory, so no thread loads them.  B's k-slots are fixed by its layout
// (16-byte core-matrix rows of 8 consecutive k-values), so thread t's A
// slots (2t, 2t + 1 and 2t + 8, 2t + 9 of a 16-k step) are k = 32 i + 16 h
// + 2 t (+ 1) and + 8: lanes 2t, 2t + 1 and 2t + 8, 2t + 9 of code row i,
// read 8 bytes at a time.  Shared activations are stored k-chunk by
// k-chunk, the 16-byte chunk (row r, k-chunk j) at 16 (j LB_BM + r): core
// matrices of 8 rows are 128 contiguous bytes, the next 8 rows 128 bytes
// on (the descriptor's stride), the next 8 k-values LB_BM x 16 bytes on
// (its leading offset).
// ---------------------------------------------------------------------------

constexpr int LB_GWARPS = LB_WARPS_M * LB_WARPS_N * LB_WARPS_K;

constexpr int LB_WCH = LB_BN / LB_WARPS_N;     // channels per warp
constexpr int LB_WROWS = LB_BM / LB_WARPS_M;   // activation rows per warp
constexpr int LB_MJ = LB_WCH / 16;
constexpr int LB_MF = LB_WROWS / 8;
// Two sets of sums (one per half of a code row) where the warp tile is
// small: with few fragments, one set makes each MMA wait for the last.
constexpr int LB_ACCS = LB_MF * LB_MJ <= (LB_WG ? 8 : 4) ? 2 : 1;
// A warp's first channel of the block and the step between its groups
// of 16: its own run of LB_WCH channels, or (wgmma) 16 of each 64 of its
// warpgroup's.
constexpr int LB_JSTEP = LB_WG ? 64 : 16;
__device__ __forceinline__ int lb_wch0(int wn) {
  return LB_WG ? wn / 4 * 64 * LB_MJ + 16 * (wn % 4) : wn * LB_WCH;
}
// The block's channel that thread (g, t) of warp column wn holds in half
// h of fragment j (rows g and g + 8 of its 16): its sums, scales, bias.
__device__ __forceinline__ int lb_wch(int wn, int j, int g, int h) {
  return lb_wch0(wn) + LB_JSTEP * j + g + 8 * h;
}
// A sub-stage is part of one packing tile (LB_R < LB_CODES: LB_NQ of them
// tile it) or whole tiles (LB_TPS of them, consecutive words of a channel
// row): 4- and 8-bit codes fill a tile in 8 and 4 code rows, fewer than
// the rows a sub-stage wants where the tile of activation rows is small.
constexpr int LB_NQ = LB_R < LB_CODES ? LB_CODES / LB_R : 1;   // sub-stages a tile
constexpr int LB_TPS = LB_R > LB_CODES ? LB_R / LB_CODES : 1;  // tiles a sub-stage
constexpr int LB_TILES = (LB_K + LB_TILE - 1) / LB_TILE;
constexpr int LB_NSS = (LB_K + 32 * LB_R - 1) / (32 * LB_R);   // sub-stages
constexpr int LB_ROWW = LB_TILES * 32 * LB_WORDS;   // words per channel
// Shared memory per stage: LB_BN rows of LB_WS words (8 chunks of 16 bytes
// each) plus one pad chunk, so the 8 rows a quarter warp reads fall in
// different banks (two for wgmma's 8-byte reads: the 4 rows a half warp
// reads); LB_BM rows of 32 LB_R activations padded to 64 bytes past a
// multiple of 128 for the same reason (wgmma: no pad, core matrices).
// (LB_WREG: the words go to registers, not to the stages.)  Then, where
// the scales are staged (LB_SSTG > 0), the sub-stage's groups of each
// channel: LB_BN rows of LB_SSTG bytes, then of LB_ZSTG for the zeros.
constexpr int LB_WROWC = LB_WS * 8 + (LB_WG ? 2 : 1);     // chunks per row
constexpr int LB_XROWB = 64 * LB_R + (LB_R >= 2 && !LB_WG ? 64 : 0);  // bytes per row
constexpr int LB_WSTAGE_B = LB_WREG ? 0 : LB_BN * LB_WROWC * 16;
constexpr int LB_SSTAGE = LB_WSTAGE_B + LB_BM * LB_XROWB;   // the staged scales' offset
__host__ __device__ constexpr int lb_round_up(int x, int a) { return (x + a - 1) / a * a; }
// (LB_WREG: swizzled activations, stages of whole 1024-byte atoms)
constexpr int LB_STAGE_B =
    lb_round_up(LB_SSTAGE + LB_BN * (LB_SSTG + LB_ZSTG), LB_WREG ? 1024 : 1);

// First word (of a packing tile) that sub-stage q of it reads, and how many
// it reads: its code rows' bits, [LB_BITS LB_R q, LB_BITS LB_R (q + 1)).
// The same for a sub-stage of whole tiles (q = 0): a channel row's tiles
// are consecutive words, so its LB_TPS tiles' words are one run.
__host__ __device__ constexpr int lb_ss_w0(int q) { return LB_BITS * LB_R * q / 32; }
__host__ __device__ constexpr int lb_ss_nw(int q) {
  return (LB_BITS * LB_R * (q + 1) - 1) / 32 - lb_ss_w0(q) + 1;
}
__host__ __device__ constexpr bool lb_ws_fits() {
  for (int q = 0; q < LB_NQ; q++)
    if (lb_ss_nw(q) > LB_WS) return false;
  return true;
}

// The contract with the planner (lb_gmplan.c), checked where it is used.
static_assert(LB_BN % (16 * LB_WARPS_N) == 0, "warps own whole 16-channel groups");
static_assert(LB_BM % (8 * LB_WARPS_M) == 0, "warps own whole 8-row fragments");
static_assert(LB_CODES % LB_R == 0 || LB_R % LB_CODES == 0,
              "sub-stages tile a packing tile, or take whole tiles");
static_assert(LB_R % LB_WARPS_K == 0, "warps split a sub-stage's code rows evenly");
static_assert((LB_WARPS_K - 1) * LB_WARPS_N * LB_WARPS_M * 32 * LB_MJ * LB_MF * 16 <=
                  LB_STAGES * LB_STAGE_B,
              "the K-split sums fit the pipeline's shared memory");
static_assert(lb_ws_fits(), "every sub-stage's code rows fit LB_WS words");
static_assert(LB_STAGES >= 2, "a pipeline needs two stages");
static_assert(!LB_WREG || (LB_WG && LB_STAGES >= 3),
              "words in registers: wgmma plans, three stages (a refill lags two)");
static_assert(!LB_CSUM || LB_BM * LB_BN * 4 <= LB_STAGES * LB_STAGE_B,
              "split-K in a cluster: the block's sums fit the pipeline's shared memory");
static_assert(LB_STAGE_B == LB_PLAN_STAGE_B, "the planner's stage size is the kernel's");
// Staged scales: each sub-stage's groups a run of whole copies (4, 8 or
// 16 bytes; 16-byte ones past that), a sub-stage's first group at a
// multiple of its run, not with resident scales.
// (4 for no run: the blocks of a plan without staged scales are compiled.)
// Parallel to gen/lb_gmplan.c's runs_copy, which decides what is staged:
// change them together.
__host__ __device__ constexpr int lb_sunit(int b) { return b < 4 ? 4 : b < 16 ? b : 16; }
// Whether a run of b bytes goes in whole copies or loads of lb_sunit(b).
__host__ __device__ constexpr bool lb_whole_units(int b) { return b >= 4 && (b & (b - 1)) == 0; }
static_assert(LB_SSTG == 0 ||
                  (LB_SROWB == 0 && LB_SSTG == LB_GSS * (int)sizeof(lb_scale_t) &&
                   LB_GSTEP > 0 && LB_GSTEP < LB_R && lb_whole_units(LB_SSTG) &&
                   LB_NGROUPS * (int)sizeof(lb_scale_t) % lb_sunit(LB_SSTG) == 0),
              "staged scales: whole groups a sub-stage, in whole copies");
static_assert(LB_ZSTG == (LB_SSTG > 0 && LB_ZEROS ? LB_GSS * (int)sizeof(lb_zero_t) : 0) &&
                  (LB_ZSTG == 0 ||
                   LB_NGROUPS * (int)sizeof(lb_zero_t) % lb_sunit(LB_ZSTG) == 0),
              "staged zeros: beside staged scales, in whole copies");
// (LB_TMA: a stage's mbarrier and its release count after the scales)
constexpr int LB_BAR_B = LB_TMA ? 16 * LB_STAGES : 0;
static_assert(LB_STAGES * LB_STAGE_B + LB_BN * (LB_SROWB + LB_ZROWB) + LB_BAR_B <=
                  LB_SMEM_BUDGET,
              "shared memory within the part's budget (the planner's)");
static_assert(!LB_TMA || (LB_WREG && LB_R % 2 == 0 && LB_BM <= 256),
              "activations by TMA: the wr plan's swizzled stages, whole 64-k boxes "
              "of at most 256 rows");
static_assert(!LB_WG || (LB_WARPS_N % 4 == 0 && LB_WARPS_M == 1),
              "wgmma: warpgroups of four warps along channels, all rows");
static_assert(!LB_WG || (LB_BM % 8 == 0 && LB_BM <= 256), "wgmma: n = LB_BM, 8..256");
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
static_assert(!LB_WG, "wgmma plans are for sm_90a only");
#endif

// wgmma's ordering (sm_90a; nothing elsewhere, where LB_WG is false):
// lb_wg_fence before a wgmma that reads registers written since the
// last; lb_wg_commit after a sub-stage's; lb_wg_wait before its
// registers or shared memory are used again.  lb_proxy_fence: copies
// that landed (generic proxy) made visible to wgmma's reads (async proxy).
__device__ __forceinline__ void lb_wg_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void lb_wg_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void lb_wg_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
}
__device__ __forceinline__ void lb_proxy_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
// wgmma's activations in a stage: the 16-byte chunk (row r, k-chunk j)
// at lb_xat(r, j), which the copies store to and B's descriptor reads.
// Unswizzled, at 16 (j LB_BM + r): core matrices of 8 rows are 128
// contiguous bytes.  With the words in registers (LB_WREG) the 128-byte
// swizzle instead: rows of 64 k-values (128 bytes), 8 rows an atom of
// 1024 bytes, chunk j of row r at chunk j ^ (r % 8), atom j / 8 at
// j / 8 LB_BM 128 bytes.  Eight threads copy a row's 128 bytes (LB_XRUN)
// and store them to eight different banks (unswizzled, a row's chunks are
// LB_BM 16 bytes apart, in the same banks: ncu counted 7 of every 8
// wavefronts of those copies excessive, a16w4 at M = 128).
constexpr bool LB_XSW = LB_WREG;
__host__ __device__ constexpr int lb_xat(int r, int j) {
  return LB_XSW ? (j / 8 * LB_BM + r) * 128 + (j % 8 ^ r % 8) * 16 : (j * LB_BM + r) * 16;
}
// B's descriptor for the 16 k-values at k-chunk kc of a stage's
// activations at shared address xs (16-byte units): unswizzled, leading
// offset (next 8 k-values) LB_BM x 16 bytes and stride (next 8 rows) 128;
// swizzled, stride 1024 bytes and the 16-k step 32 bytes on within its
// atom (lb_xat of row 0).
__device__ __forceinline__ unsigned long long lb_xdesc(unsigned xs, int kc) {
  const unsigned long long a = ((xs + lb_xat(0, kc)) >> 4) & 0x3fff;
  if constexpr (LB_XSW) return a | 1ull << 16 | 64ull << 32 | 1ull << 62;
  return a | (unsigned long long)LB_BM << 16 | 8ull << 32;
}

// Activations by the tensor memory accelerator (LB_TMA: sm_90a plans with
// the words in registers).  One thread copies a sub-stage's activations
// with R / 2 bulk tensor copies, boxes of 64 k-values x LB_BM rows that the
// copy engine stores in the 128-byte swizzle lb_xat describes (each box an
// atom column: LB_BM x 128 bytes); rows past m and k-values past K come as
// zeros (the tensor map's bounds, runtime/lb_op.c).  A stage's mbarrier
// counts its bytes in; the warps wait on it instead of a block barrier.
// A stage is released by counting: each warp adds one once its wgmmas
// that read the stage are retired, and the warp that adds the last issues
// the stage's next copy, so no warp waits for another to refill.  What it
// replaces, measured (ncu, a16w4 at M = 128, wr=1): warps waiting at the
// barrier and on the proxy fence before it, and 8 cp.async a thread a
// sub-stage with their addresses.
struct __align__(64) lb_tmap { unsigned long long v[16]; };   // a CUtensorMap
constexpr int LB_XBOX_B = LB_BM * 128;   // one box: 64 k-values x LB_BM rows
static_assert(LB_XBOX_B % 1024 == 0, "a box is whole swizzle atoms");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void lb_bar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void lb_bar_init_fence() {   // (seen by the copy engine)
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void lb_bar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  } while (!done);
}
// One more warp done with a stage (release: its wgmmas' reads came first);
// true for the last of the block's (acquire: the copy comes after theirs).
__device__ __forceinline__ bool lb_release_last(unsigned cnt) {
  unsigned old;
  asm volatile("atom.acq_rel.cta.shared::cta.add.u32 %0, [%1], 1;"
               : "=r"(old) : "r"(cnt) : "memory");
  return (old + 1) % LB_GWARPS == 0;
}
__device__ __forceinline__ void lb_fill_x(unsigned stage, unsigned bar,
                                          const lb_tmap *map, int k0, int m0) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               ::"r"(bar), "r"(LB_R / 2 * LB_XBOX_B) : "memory");
#pragma unroll
  for (int b = 0; b < LB_R / 2; b++)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(stage + b * LB_XBOX_B), "l"(map), "r"(k0 + 64 * b), "r"(m0),
                 "r"(bar) : "memory");
}
#else
__device__ __forceinline__ void lb_bar_init(unsigned) {}
__device__ __forceinline__ void lb_bar_init_fence() {}
__device__ __forceinline__ void lb_bar_wait(unsigned, unsigned) {}
__device__ __forceinline__ bool lb_release_last(unsigned) { return false; }
__device__ __forceinline__ void lb_fill_x(unsigned, unsigned, const lb_tmap *, int, int) {}
#endif

struct __align__(16) lb_u4 { unsigned x, y, z, w; };

// lb_cp16, lb_cp_commit, lb_cp_wait: templates/common.cu.
// 16 bytes of shared memory (a plain load: the compiler keeps it after
// the barrier that publishes the copy).
__device__ __forceinline__ lb_u4 lb_lds16(const char *p) {
  return *reinterpret_cast<const lb_u4 *>(p);
}

// The copies of a sub-stage: every thread of the block takes 16-byte
// chunks in memory order, chunk c = threadIdx.x + e LB_THREADS (e = 0, 1,
// ...).  Activations: LB_XPR chunks a row (32 LB_R values).  Weights:
// each channel row's 8 chunks of a word, for each of the sub-stage's
// words.  Threads and chunks a row are both powers of two, so thread
// chunk e sits at a fixed offset from its first, in rows and in chunks:
// the addresses are made once (lb_copy_of), and a sub-stage adds its
// place in K.  Measured (ncu, a16w4 8192 x 8192, M = 128, H100): making
// them per chunk took 40% of the GEMM's instructions.  Channels past N
// repeat the last (never stored); activation rows past m repeat row
// m - 1 (in the block that has them); activations past K are not read
// (their code rows are skipped).
constexpr int LB_THREADS = LB_GWARPS * 32;
constexpr int LB_XPR = 4 * LB_R;
constexpr int LB_XCHUNKS = LB_BM * LB_XPR, LB_WCHUNKS = LB_BN * 8;
constexpr int LB_XPER = (LB_XCHUNKS + LB_THREADS - 1) / LB_THREADS;
constexpr int LB_WPER = (LB_WCHUNKS + LB_THREADS - 1) / LB_THREADS;
static_assert((LB_THREADS & (LB_THREADS - 1)) == 0 && (LB_XPR & (LB_XPR - 1)) == 0,
              "threads and chunks a row are powers of two (one divides the other)");
static_assert(LB_THREADS % 8 == 0, "a thread keeps its chunk of a word");
// wgmma's activations: chunk c of a sub-stage is k-chunk LB_XRUN (c /
// LB_XRUN / LB_BM) + c % LB_XRUN of row c / LB_XRUN % LB_BM: LB_XRUN
// threads read a run of a row (unswizzled 32 bytes, a whole sector;
// swizzled its 128 bytes), stored at lb_xat.
constexpr int LB_XRUN = LB_XSW ? 8 : 2;
static_assert(!LB_WG || LB_XPR % LB_XRUN == 0, "wgmma: a row's chunks come in whole runs");
static_assert(!LB_XSW || LB_STAGE_B % 1024 == 0, "swizzled activations: stages of whole atoms");
__host__ __device__ constexpr int lb_xrow(int c) { return c / LB_XRUN % LB_BM; }
__host__ __device__ constexpr int lb_xcol(int c) {
  return c / LB_XRUN / LB_BM * LB_XRUN + c % LB_XRUN;
}

// Chunk e of this thread: rows past its first, and chunks past its first
// within a row of pr chunks.
__host__ __device__ constexpr int lb_erow(int e, int pr) { return e * LB_THREADS / pr; }
__host__ __device__ constexpr int lb_ecol(int e, int pr) { return e * LB_THREADS % pr; }

struct lb_copy {
  const lb_act_t *x;     // first activation chunk at k = 0 (row m0 + its row)
  const unsigned *w;     // first weight chunk at word 0 of tile 0
  int xs, wsm;           // shared-memory offsets of both in a stage
};
// (The edges recompute their rows from threadIdx.x; keeping them in the
// struct measured the same registers.)

__device__ __forceinline__ lb_copy lb_copy_of(const unsigned *wq,
                                              const lb_act_t *x, int n0,
                                              int m0) {
  lb_copy c;
  const int tid = threadIdx.x, xr = tid / LB_XPR, xj = tid % LB_XPR, wr = tid / 8;
  c.x = x + (long long)(m0 + xr) * LB_K + 8 * xj;   // (not wgmma's: lb_xrow)
  c.w = wq + (long long)min(n0 + wr, LB_N - 1) * LB_ROWW + 4 * (tid % 8);
  c.xs = LB_WSTAGE_B + (LB_WG ? 0 : xr * LB_XROWB + 16 * xj);
  c.wsm = (wr * LB_WROWC + tid % 8) * 16;
  return c;
}

// cp.async of B = 4, 8 or 16 bytes (16: lb_cp16; the smaller ones only
// through L1, .ca).
template <int B>
__device__ __forceinline__ void lb_cpn(void *smem, const void *gmem) {
  static_assert(B == 4 || B == 8 || B == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (B == 16) {
    lb_cp16(smem, gmem);
  } else {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(s), "l"(gmem), "n"(B));
  }
}

// Staged scales (LB_SSTG): copy p (of RB / U, U bytes each) of the block's
// row `row` of an array's groups of sub-stage ss, RB bytes a row, into
// rows of RB at dst.  Groups past the last (a last sub-stage short of K)
// are not read: their slots are never selected (the reads clamp).
template <int RB, typename T>
__device__ __forceinline__ void lb_issue_piece(char *dst, const T *src, int ss, int row,
                                               int p, int n0, bool full_n) {
  constexpr int U = lb_sunit(RB);
  constexpr int ROWB = LB_NGROUPS * (int)sizeof(T);   // bytes of a channel's groups
  const int b = ss * RB + p * U;
  if (ROWB % RB != 0 && b >= ROWB) return;
  const int ch = LB_N % LB_BN == 0 || full_n ? n0 + row : min(n0 + row, LB_N - 1);
  lb_cpn<U>(dst + row * RB + p * U,
            reinterpret_cast<const char *>(src) + (long long)ch * ROWB + b);
}

// Those copies for every row of the block, by all its threads, which take
// the copies after the ones `skip` took.
template <int RB, typename T>
__device__ __forceinline__ void lb_issue_groups(char *dst, const T *src, int ss,
                                                int n0, bool full_n, int skip) {
  constexpr int PER = RB / lb_sunit(RB);
  for (int c = ((int)threadIdx.x + LB_THREADS - skip % LB_THREADS) % LB_THREADS;
       c < LB_BN * PER; c += LB_THREADS)
    lb_issue_piece<RB>(dst, src, ss, c / PER, c % PER, n0, full_n);
}

// The same by one warp for its own channels' rows (LB_TMA: each row's
// groups are read by the one warp that owns the channel, so a warp may
// refill its rows of a stage once it is done with them, without waiting
// for the block; the TMA fills the rest of the stage).  Row i of the
// warp's 16 LB_MJ: fragment i / 16, half i / 8 % 2, g = i % 8 (lb_wch).
template <int RB, typename T>
__device__ __forceinline__ void lb_issue_own_groups(char *dst, const T *src, int ss,
                                                    int n0, int wn, int lane) {
  constexpr int PER = RB / lb_sunit(RB);
#pragma unroll
  for (int c = lane; c < 16 * LB_MJ * PER; c += 32) {
    const int i = c / PER;
    lb_issue_piece<RB>(dst, src, ss, lb_wch(wn, i / 16, i % 8, i / 8 % 2), c % PER, n0,
                       false);
  }
}
__device__ __forceinline__ void lb_issue_own(char *smem, int buf, int ss,
                                             const lb_scale_t *sc, const lb_zero_t *zr,
                                             int n0, int wn, int lane) {
  char *const st = smem + buf * LB_STAGE_B + LB_SSTAGE;
  if constexpr (LB_SSTG > 0) {
    lb_issue_own_groups<LB_SSTG>(st, sc, ss, n0, wn, lane);
    if constexpr (LB_ZSTG > 0)
      lb_issue_own_groups<LB_ZSTG>(st + LB_BN * LB_SSTG, zr, ss, n0, wn, lane);
  }
}

// Issue the copies of sub-stage ss into stage buffer `buf`.  full_m: every
// activation row of the block's tile is below m; full_n: every channel
// below N.
__device__ __forceinline__ void lb_issue(char *smem, int buf, int ss,
                                         const lb_copy &c, const unsigned *wq,
                                         const lb_act_t *x, const lb_scale_t *sc,
                                         const lb_zero_t *zr, int n0, int m0,
                                         int m, bool full_m, bool full_n) {
  // its first word of a channel row: code rows are consecutive across tiles
  const int wr = LB_BITS * LB_R * ss / 32, nw = lb_ss_nw(ss % LB_NQ);
  char *const sbuf = smem + buf * LB_STAGE_B;
  if constexpr (LB_SSTG > 0) {   // (scales first: the threads past them copy zeros)
    constexpr int SN = LB_BN * (LB_SSTG / lb_sunit(LB_SSTG));
    lb_issue_groups<LB_SSTG>(sbuf + LB_SSTAGE, sc, ss, n0, full_n, 0);
    if constexpr (LB_ZSTG > 0)
      lb_issue_groups<LB_ZSTG>(sbuf + LB_SSTAGE + LB_BN * LB_SSTG, zr, ss, n0, full_n, SN);
  }
  const int k0 = ss * 32 * LB_R;
  const lb_act_t *const xk = c.x + k0;
#pragma unroll
  for (int e = 0; e < LB_XPER && LB_WG; e++) {
    const int ch = (int)threadIdx.x + e * LB_THREADS;
    if (LB_XCHUNKS % LB_THREADS != 0 && ch >= LB_XCHUNKS) break;
    const int row = lb_xrow(ch), j = lb_xcol(ch);
    if (LB_K % (32 * LB_R) != 0 && k0 + 8 * j >= LB_K) {   // zeros past K
      *reinterpret_cast<lb_u4 *>(sbuf + c.xs + lb_xat(row, j)) = lb_u4{0u, 0u, 0u, 0u};
      continue;
    }
    const int rr = full_m ? m0 + row : min(m0 + row, m - 1);
    lb_cp16(sbuf + c.xs + lb_xat(row, j), x + (long long)rr * LB_K + k0 + 8 * j);
  }
#pragma unroll
  for (int e = 0; e < LB_XPER && !LB_WG; e++) {
    if (LB_XCHUNKS % LB_THREADS != 0 && threadIdx.x + e * LB_THREADS >= LB_XCHUNKS) break;
    const int j = (int)threadIdx.x % LB_XPR + lb_ecol(e, LB_XPR);
    if (LB_K % (32 * LB_R) != 0 && k0 + 8 * j >= LB_K) continue;
    const lb_act_t *src = xk + (long long)lb_erow(e, LB_XPR) * LB_K + 8 * lb_ecol(e, LB_XPR);
    if (!full_m) {
      const int row = min(m0 + (int)threadIdx.x / LB_XPR + lb_erow(e, LB_XPR), m - 1);
      src = x + (long long)row * LB_K + k0 + 8 * j;
    }
    lb_cp16(sbuf + c.xs + lb_erow(e, LB_XPR) * LB_XROWB + 16 * lb_ecol(e, LB_XPR), src);
  }
  const unsigned *const wk = c.w + wr * 32;
#pragma unroll
  for (int e = 0; e < LB_WPER && !LB_WREG; e++) {
    if (LB_WCHUNKS % LB_THREADS != 0 && threadIdx.x + e * LB_THREADS >= LB_WCHUNKS) break;
    const unsigned *src = wk + (long long)lb_erow(e, 8) * LB_ROWW;
    if (LB_N % LB_BN != 0 && !full_n) {
      const int ch = min(n0 + (int)threadIdx.x / 8 + lb_erow(e, 8), LB_N - 1);
      src = wq + (long long)ch * LB_ROWW + wr * 32 + 4 * (threadIdx.x % 8);
    }
    // (a last sub-stage of whole tiles may reach past the row's last tile)
#pragma unroll
    for (int w = 0; w < LB_WS; w++)
      if ((LB_WS == 1 || w < nw) &&
          (LB_TILES % LB_TPS == 0 || wr + w < LB_TILES * LB_WORDS))
        lb_cp16(sbuf + c.wsm + (lb_erow(e, 8) * LB_WROWC + 8 * w) * 16, src + 32 * w);
  }
}

// LB_WREG (wgmma plans): a sub-stage's words go from global memory
// straight to the registers that make its A operands, a sub-stage ahead,
// and never through shared memory: each is read by one thread only, and
// the stages' copies and 8-byte shared loads of them had kept the MIO
// queue full (ncu, a16w4 at M = 16: mio_throttle 1.6 cycles an
// instruction).  [word][group][row g, g + 8][half h][lanes 2t.. or 2t + 8..]
struct lb_words {
  uint2 v[LB_WREG ? LB_WS : 1][LB_MJ][2][2][2];
};
__device__ __forceinline__ uint2 lb_ldg_once(const unsigned *p, unsigned long long pol) {
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;"
               : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void lb_load_words(lb_words &wv, const unsigned *wq,
                                              const int (&chs)[LB_MJ][2], int t,
                                              int ss, unsigned long long pol) {
  const int wr = LB_BITS * LB_R * ss / 32;   // the sub-stage's first word row
  const int nw = lb_ss_nw(ss % LB_NQ);        // and its words (LB_WS at most)
#pragma unroll
  for (int w = 0; w < (LB_WREG ? LB_WS : 0); w++)
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int r = 0; r < 2; r++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
          for (int c = 0; c < 2; c++) {
            // (a word past the sub-stage's, or past the row's last tile, is
            // never used: not read)
            if (w >= nw || (LB_TILES % LB_TPS != 0 && wr + w >= LB_TILES * LB_WORDS)) {
              wv.v[w][j][r][h][c] = make_uint2(0u, 0u);
              continue;
            }
            wv.v[w][j][r][h][c] = lb_ldg_once(
                wq + (long long)chs[j][r] * LB_ROWW + 32 * (wr + w) + 16 * h + 8 * c + 2 * t, pol);
          }
}

// Raw scales and zeros of the groups a sub-stage meets, for this thread's
// channels (rows g and g + 8 of each of its MJ groups): loaded one
// sub-stage ahead so that no load of them waits on the critical path.
struct lb_sgroups {   // LB_GSS: groups a sub-stage meets, at most (planned)
  // (aligned: a row's run is stored whole, lb_load_run)
  alignas(16) lb_scale_t s[LB_MJ][2][LB_GSS];
  alignas(16) lb_zero_t z[LB_MJ][2][LB_GSS];
};

// Sub-stage ss of a block's range [s0, s0 + ns), rotated by rot.
__device__ __forceinline__ int lb_rot(int ss, int rot, int s0, int ns) {
  return s0 + (ss + rot < ns ? ss + rot : ss + rot - ns);
}

__device__ __forceinline__ int lb_ss_g0(int ss) {
  return lb_group_of(ss * 32 * LB_R, LB_NGROUPS);
}

// A sub-stage's LB_GSS groups of one channel row in vector loads (of 4, 8
// or 16 bytes, lb_sunit: 16-byte ones past that) where they are whole
// groups that come in whole loads and every sub-stage has all of them
// (LB_NGROUPS a multiple of LB_GSS: none past the row, each run aligned
// to its size): one load a row where there were LB_GSS of 2 bytes.
template <typename T>
__host__ __device__ constexpr bool lb_vec_groups() {
  return LB_GSTEP > 0 && LB_GSTEP < LB_R && LB_NGROUPS % LB_GSS == 0 &&
         lb_whole_units(LB_GSS * (int)sizeof(T));
}
template <typename T>
__device__ __forceinline__ void lb_load_run(T (&dst)[LB_GSS], const T *run) {
  constexpr int RB = LB_GSS * (int)sizeof(T), U = lb_sunit(RB);
  static_assert(RB % U == 0, "a run of whole loads");
#pragma unroll
  for (int p = 0; p < RB / U; p++) {
    const char *src = reinterpret_cast<const char *>(run) + p * U;
    char *d = reinterpret_cast<char *>(dst) + p * U;
    if constexpr (U == 16)
      *reinterpret_cast<uint4 *>(d) = __ldg(reinterpret_cast<const uint4 *>(src));
    else if constexpr (U == 8)
      *reinterpret_cast<uint2 *>(d) = __ldg(reinterpret_cast<const uint2 *>(src));
    else
      *reinterpret_cast<unsigned *>(d) = __ldg(reinterpret_cast<const unsigned *>(src));
  }
}

__device__ __forceinline__ void lb_load_sg(lb_sgroups &sg,
                                           const lb_scale_t *sc,
                                           const lb_zero_t *zr,
                                           const int (&chs)[LB_MJ][2], int ss) {
  const int g0 = lb_ss_g0(ss);
#pragma unroll
  for (int j = 0; j < LB_MJ; j++)
#pragma unroll
    for (int r = 0; r < 2; r++) {
      if constexpr (lb_vec_groups<lb_scale_t>())
        lb_load_run(sg.s[j][r], sc + chs[j][r] * LB_NGROUPS + g0);
      if constexpr (LB_ZEROS && lb_vec_groups<lb_zero_t>())
        lb_load_run(sg.z[j][r], zr + chs[j][r] * LB_NGROUPS + g0);
#pragma unroll
      for (int u = 0; u < LB_GSS; u++) {
        const int gi = min(g0 + u, LB_NGROUPS - 1);
        if constexpr (!lb_vec_groups<lb_scale_t>())
          sg.s[j][r][u] = sc[chs[j][r] * LB_NGROUPS + gi];
        if constexpr (!LB_ZEROS)
          sg.z[j][r][u] = lb_zero_t(0);
        else if constexpr (!lb_vec_groups<lb_zero_t>())
          sg.z[j][r][u] = zr[chs[j][r] * LB_NGROUPS + gi];
      }
    }
}

// One sub-stage's code rows for K-split warp WK (rows WK, WK + LB_WARPS_K,
// ...), in sub-stage Q of its packing tile (Q < 0: q known only at run
// time).  With both fixed at compile time, every code row's words, PRMT
// window, shift and group slot are constants, and the rows of one word
// share its loads: lb_pick_rows dispatches to the warp's copy once a
// sub-stage (a warp-uniform branch).  Q is fixed where the copies stay
// small (LB_QFIX: fragments times rows of all its copies, counted twice
// for codes wider than 4 bits; 7-bit codes at 17..32 rows took 0.99 s to
// compile fixed, 0.36 not; 3-bit ones ran 43.6 us fixed at 32 rows, 55.6
// not, a16w3 8192 x 8192 on an H100).
// With the words in registers (LB_WREG, LB_QNORM) one copy serves every
// q: a thread's words of a sub-stage sit in registers whose places must
// be constants, and it shifts them by the sub-stage's place in its tile
// (a funnel shift a word), so that its code rows sit where sub-stage 0's
// do; the row constants are then sub-stage 0's.  One copy a sub-stage
// (LB_QFIX) had taken NVRTC 1.1 to 1.9 s for 1-, 2-, 3- and 5- to 7-bit
// codes (sm_90a, M = 128).
// Nor with wgmma (LB_WG; wr=0 plans, which no rule takes): the copies'
// wgmmas behind the branch on q are serialised by ptxas ("(C7519)
// warpgroup.arrive is injected").
constexpr bool LB_QNORM = LB_WREG;
constexpr bool LB_QFIX =
    !LB_QNORM && !LB_WG && LB_NQ * LB_R * LB_MJ * LB_MF * (LB_BITS > 4 ? 2 : 1) <= 128;

template <int WK, int Q>
__device__ __forceinline__ void lb_rows(
    float (&acc)[LB_ACCS][LB_MJ][LB_MF][4],
    const unsigned (&s2v)[LB_GSS][LB_MJ][2],
    const unsigned (&b2v)[LB_GSS][LB_MJ][2], const lb_words &wreg, const char *wrow,
    const char *xrow, int qr, int k0, int g0) {
  // (LB_QNORM: the row constants are sub-stage 0's, the words shifted below)
  const int q = LB_QNORM ? 0 : Q < 0 ? qr : Q;
  const int w0 = lb_ss_w0(q);
  // wgmma with the sub-stage fixed (Q, or LB_QNORM): the warp's words,
  // loaded once (the code rows of a word share them; each row's fence
  // would make the compiler load them again).
  // [word][group][r][h][lanes 2t.. or 2t + 8..]
  constexpr bool PRE = LB_WG && (Q >= 0 || LB_QNORM);
  constexpr int PNW = !PRE ? 1 : LB_QNORM ? LB_WS : lb_ss_nw(Q < 0 ? 0 : Q);
  // (LB_WREG: the words loaded into registers a sub-stage ahead, wreg)
  uint2 wv[PNW][LB_MJ][2][2][2];
  if constexpr (PRE) {
    // (LB_QNORM) Sub-stage qr of its tile starts o bits into its first
    // word: the stream from there, word by word (big-endian: a funnel shift
    // left; bits from a word past the sub-stage's are never used).
    constexpr bool SHIFT = LB_QNORM && LB_NQ > 1;
    const int o = SHIFT ? LB_BITS * LB_R * qr % 32 : 0;
    auto word = [&](int w, int j, int r, int h, int c) {
      return LB_WREG ? wreg.v[LB_WREG ? w : 0][j][r][h][c]
                     : *reinterpret_cast<const uint2 *>(
                           wrow + (LB_JSTEP * j + 8 * r) * LB_WROWC * 16 + 64 * h + 32 * c +
                           w * 128);
    };
#pragma unroll
    for (int w = 0; w < PNW; w++)
#pragma unroll
      for (int j = 0; j < LB_MJ; j++)
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
          for (int h = 0; h < 2; h++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
              const uint2 v = word(w, j, r, h, c);
              if constexpr (SHIFT) {
                const uint2 n = word(w + 1 < PNW ? w + 1 : w, j, r, h, c);
                wv[w][j][r][h][c] =
                    make_uint2(__funnelshift_l(n.x, v.x, o), __funnelshift_l(n.y, v.y, o));
              } else {
                wv[w][j][r][h][c] = v;
              }
            }
  }
  // wgmma: the A operands of all this warp's code rows of the sub-stage
  // first, then one fence and their wgmmas (a row past K is multiplied as
  // zeros: a wgmma skipped by a branch made ptxas serialise the
  // sub-stage's, "(C7519) warpgroup.arrive is injected").  A fence a code
  // row measured 1.7% slower in the geometric mean (H200, a16w1/3/4/8 at
  // 8192 x 8192 and 4096 x 14336, M = 64, 128 and 1024; a16w3_g128 4096 x
  // 14336, M = 1024: 367.6 -> 347.3 us), and spilled nowhere in the sweep.
  // Two fences and commit groups a sub-stage, one group in flight while
  // the other half's operands are made, measured 3.1% slower
  // (docs/architecture.md, "Overlap inside a warpgroup").
  constexpr int NR = LB_R / LB_WARPS_K;
  unsigned awb[LB_WG ? NR : 1][2][LB_MJ][4];   // [row][h][group][r + 2 (upper 8 k-slots)]
#pragma unroll
  for (int jj = 0; jj < NR; jj++) {
    const int ii = jj * LB_WARPS_K + WK;
    const int kk = k0 + 32 * ii;
    const bool past = LB_K % (32 * LB_R) != 0 && kk >= LB_K;
    if (!LB_WG && past) break;   // past K
    // this row's group slot: fixed where groups and sub-stages align,
    // else arithmetic and selects
    const int u = LB_GSS == 1 ? 0
                  : LB_GSTEP  ? ii / LB_GSTEP
                              : lb_group_of(kk, LB_NGROUPS) - g0;
    unsigned s2[LB_MJ][2], b2[LB_MJ][2];
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int r = 0; r < 2; r++) {
        s2[j][r] = s2v[0][j][r];
        b2[j][r] = b2v[0][j][r];
#pragma unroll
        for (int u2 = 1; u2 < LB_GSS; u2++) {
          s2[j][r] = u == u2 ? s2v[u2][j][r] : s2[j][r];
          b2[j][r] = u == u2 ? b2v[u2][j][r] : b2[j][r];
        }
      }
    // This code row's place in the words: which word of the stage it
    // starts in, and how its pair comes out of them.
    const int i = q * LB_R + ii;   // code row from the first tile's start
    const int wi = LB_BITS * i / 32 - w0;
    const int wj = wi + 1 < LB_WS ? wi + 1 : wi;
    const lb_crow cr = lb_crow_of(LB_TPS > 1 ? i % LB_CODES : i, Q >= 0 || LB_QNORM);   // row in its tile
    if constexpr (LB_WG) {
      // wgmma: each half of the code row is one 16-k step; its A operands
      // go to awb, multiplied after the loop.
      unsigned (&aw)[2][LB_MJ][4] = awb[LB_WG ? jj : 0];
      // past K: A zero, and x's k-slots too (TMA fills past its bounds
      // with zeros; lb_issue writes them), so the products are 0, not NaN
      const unsigned ok = past ? 0u : ~0u;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        unsigned (&a)[LB_MJ][4] = aw[h];
#pragma unroll
        for (int j = 0; j < LB_MJ; j++)
#pragma unroll
          for (int r = 0; r < 2; r++) {
            const char *p = wrow + (LB_JSTEP * j + 8 * r) * LB_WROWC * 16 + 64 * h;
            // (a word past the sub-stage's is never used: its codes do not cross)
            const int wk2 = wj < PNW ? wj : PNW - 1;
            const uint2 v0 = PRE ? wv[wi][j][r][h][0] : *reinterpret_cast<const uint2 *>(p + wi * 128);
            const uint2 v1 = PRE ? wv[wk2][j][r][h][0] : *reinterpret_cast<const uint2 *>(p + wj * 128);
            const uint2 u0 = PRE ? wv[wi][j][r][h][1] : *reinterpret_cast<const uint2 *>(p + wi * 128 + 32);
            const uint2 u1 = PRE ? wv[wk2][j][r][h][1] : *reinterpret_cast<const uint2 *>(p + wj * 128 + 32);
            if constexpr (LB_PLAIN) {
              a[j][r] = v0.x;
              a[j][2 + r] = u0.x;
            } else {
              a[j][r] = lb_w2(lb_gpair(v0.x, v1.x, v0.y, v1.y, cr), cr, s2[j][r], b2[j][r]) & ok;
              a[j][2 + r] = lb_w2(lb_gpair(u0.x, u1.x, u0.y, u1.y, cr), cr, s2[j][r], b2[j][r]) & ok;
            }
          }
      }
    } else {
      lb_u4 xv[LB_MF];
#pragma unroll
      for (int f = 0; f < LB_MF; f++)
        xv[f] = lb_lds16(xrow + f * 8 * LB_XROWB + 64 * ii);
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int j = 0; j < LB_MJ; j++) {
          unsigned a[2][2];   // [lane pair][row g, g + 8]
#pragma unroll
          for (int r = 0; r < 2; r++) {
            const char *p = wrow + ((16 * j + 8 * r) * LB_WROWC + h) * 16;
            const lb_u4 v0 = lb_lds16(p + wi * 128), v1 = lb_lds16(p + wj * 128);
            if constexpr (LB_PLAIN) {   // an experiment: the words as weights
              a[0][r] = v0.x;
              a[1][r] = v0.z;
            } else {
              a[0][r] = lb_w2(lb_gpair(v0.x, v1.x, v0.y, v1.y, cr), cr, s2[j][r], b2[j][r]);
              a[1][r] = lb_w2(lb_gpair(v0.z, v1.z, v0.w, v1.w, cr), cr, s2[j][r], b2[j][r]);
            }
          }
#pragma unroll
          for (int f = 0; f < LB_MF; f++)
            lb_mma(acc[h % LB_ACCS][j][f], a[0][0], a[0][1], a[1][0], a[1][1],
                   h ? xv[f].z : xv[f].x, h ? xv[f].w : xv[f].y);
        }
    }
  }
  if constexpr (LB_WG) {   // xrow: the stage's activations
    const unsigned xs = (unsigned)__cvta_generic_to_shared(xrow);
    lb_wg_fence();
#pragma unroll
    for (int jj = 0; jj < NR; jj++) {
#pragma unroll
      for (int h = 0; h < 2; h++)
#pragma unroll
        for (int j = 0; j < LB_MJ; j++)
          lb_wgmma(acc[h % LB_ACCS][j], awb[jj][h][j][0], awb[jj][h][j][1], awb[jj][h][j][2],
                   awb[jj][h][j][3], lb_xdesc(xs, 4 * (jj * LB_WARPS_K + WK) + 2 * h));
    }
  }
}

template <int WK, int Q>
__device__ __forceinline__ void lb_pick_rows(
    int wk, int q, float (&acc)[LB_ACCS][LB_MJ][LB_MF][4],
    const unsigned (&s2v)[LB_GSS][LB_MJ][2],
    const unsigned (&b2v)[LB_GSS][LB_MJ][2], const lb_words &wreg, const char *wrow,
    const char *xrow, int k0, int g0) {
  if (wk != WK) {
    if constexpr (WK + 1 < LB_WARPS_K)
      lb_pick_rows<WK + 1, Q>(wk, q, acc, s2v, b2v, wreg, wrow, xrow, k0, g0);
  } else if (Q >= 0 && q != Q) {
    if constexpr (Q >= 0 && Q + 1 < LB_NQ)
      lb_pick_rows<WK, Q + 1>(wk, q, acc, s2v, b2v, wreg, wrow, xrow, k0, g0);
  } else {
    lb_rows<WK, Q>(acc, s2v, b2v, wreg, wrow, xrow, q, k0, g0);
  }
}

__device__ __forceinline__ void lb_gemm_body(
    const lb_act_t *__restrict__ x, const unsigned *__restrict__ wq,
    const lb_scale_t *__restrict__ sc, const lb_zero_t *__restrict__ zr,
    const lb_out_t *__restrict__ bias, lb_out_t *__restrict__ y, int m,
    float *__restrict__ ws, const lb_tmap *xmap) {
  extern __shared__ __align__(1024) char lb_smem[];   // (LB_XSW: whole atoms)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // Warps: LB_WARPS_N along channels, LB_WARPS_M along rows, LB_WARPS_K
  // taking alternate code rows of each sub-stage (more warps on the same
  // stage where the tile is small; their sums meet at the end).
  const int wn = warp % LB_WARPS_N, wm = warp / LB_WARPS_N % LB_WARPS_M;
  const int wk = warp / (LB_WARPS_N * LB_WARPS_M);
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * LB_BN, m0 = blockIdx.y * LB_BM;

  // This thread's channels (rows past N repeat the last; never stored).
  int chs[LB_MJ][2];
#pragma unroll
  for (int j = 0; j < LB_MJ; j++)
#pragma unroll
    for (int r = 0; r < 2; r++)
      chs[j][r] = min(n0 + lb_wch(wn, j, g, r), LB_N - 1);

  float acc[LB_ACCS][LB_MJ][LB_MF][4];
#pragma unroll
  for (int a = 0; a < LB_ACCS; a++)
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int f = 0; f < LB_MF; f++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[a][j][f][e] = 0.f;

  // Resident scales and zeros (LB_SROWB > 0): the block's rows, copied
  // once in the first stage's group (issued before it, so that the wait
  // for the first stage covers them): no scale load waits on memory
  // inside the loop; rows padded by 16 bytes (banks).  The zeros' rows
  // (LB_ZROWB) follow the scales' and may be wider (f32 zeros, f16
  // scales).  Otherwise they come with each sub-stage in its stage
  // (LB_SSTG > 0: lb_issue_groups, or each warp's own rows by lb_issue_own
  // where the TMA fills the stage), or else from global memory a sub-stage
  // ahead (lb_sgroups), where every sub-stage waits on that load's latency
  // if the loop is short.
  constexpr bool SRES = LB_SROWB > 0;
  static_assert(!SRES || LB_ZROWB > 0 || !LB_ZEROS,
                "resident scales: the zeros resident too");
  char *const sres = lb_smem + LB_STAGES * LB_STAGE_B;
  constexpr int SREG = LB_BN * LB_SROWB;
  if constexpr (SRES) {
    // (guarded: the block is compiled, though not run, without resident rows)
    constexpr int CH = SRES ? LB_NGROUPS * (int)sizeof(lb_scale_t) / 16 : 1;
    constexpr int ZCH = SRES && LB_ZEROS ? LB_NGROUPS * (int)sizeof(lb_zero_t) / 16 : 0;
    for (int c = threadIdx.x; c < LB_BN * (CH + ZCH); c += LB_GWARPS * 32) {
      const int row = c / (CH + ZCH), e = c % (CH + ZCH);
      const int ch = LB_N % LB_BN == 0 ? n0 + row : min(n0 + row, LB_N - 1);
      if (e < CH)
        lb_cp16(sres + row * LB_SROWB + e * 16,
                (const char *)(sc + ch * LB_NGROUPS) + e * 16);
      else
        lb_cp16(sres + SREG + row * LB_ZROWB + (e - CH) * 16,
                (const char *)(zr + ch * LB_NGROUPS) + (e - CH) * 16);
    }
  }
  // Blocks walk K from different starting points (a rotation by their
  // channel block): in step, every block would read the same slice of
  // every channel row at once, 128 bytes a row at a row's stride.
  // Split-K (gridDim.z > 1, where the tiles alone leave SMs idle): block
  // z takes sub-stages [s0, s0 + ns); its sums meet the other blocks' at
  // the end.
  const int s0 = (int)((long long)blockIdx.z * LB_NSS / gridDim.z);
  const int ns = (int)((long long)(blockIdx.z + 1) * LB_NSS / gridDim.z) - s0;
  const int rot = (int)((long long)blockIdx.x * ns / gridDim.x);
  // Every sub-stage copies x with the weights: nothing more is read
  // before the previous kernel is done (lb_op_overlap).  The GEMM does not
  // let the next kernel start early (lb_let_next), unlike the GEMV: its
  // grids run several waves, and measured on an H100 (bench/model.py,
  // M = 16) the next kernel's early blocks cost 21% where the GEMM said so
  // at its start; saying nothing (the next starts as this one's blocks
  // end) costs nothing.
  // LB_TMA: the stages' mbarriers and release counts (after the scales),
  // set up by thread 0, which also copies the prologue's activations.
  char *const sbar = sres + SREG + LB_BN * LB_ZROWB;
  unsigned *const cnt = reinterpret_cast<unsigned *>(sbar + 8 * LB_STAGES);
  const unsigned bars = (unsigned)__cvta_generic_to_shared(sbar);
  const unsigned cnts = (unsigned)__cvta_generic_to_shared(cnt);
  if (LB_TMA && threadIdx.x == 0) {
    for (int s = 0; s < LB_STAGES; s++) {
      lb_bar_init(bars + 8 * s);
      cnt[s] = 0;
    }
    lb_bar_init_fence();
  }
  lb_wait_prior();
  const lb_copy cp = lb_copy_of(wq, x, n0, m0);
  const bool full_m = m0 + LB_BM <= m, full_n = n0 + LB_BN <= LB_N;
  // Prologue: LB_STAGES - 1 sub-stages in flight (LB_WREG: LB_STAGES - 2).
  // Every sub-stage starts by retiring all the wgmmas before it: with
  // wgmma.wait_group 1 (one sub-stage's wgmmas still multiplying while the
  // next is dequantised, the reason for LAG 2) the next sub-stage's A
  // operands were written into registers the last one still read: wrong
  // sums, varying run to run (8-bit codes, K 512 to 2048, on an H200);
  // waiting for all measured the same (a16w4 8192 x 8192, M = 64, 128 and
  // 1024).  LAG 2 stays, measured with it.
  constexpr int LAG = LB_WREG ? 2 : 1;   // sub-stages behind that a refill takes
  // (words two sub-stages ahead: one left the loop waiting on them,
  // ncu long_scoreboard, a16w4 at M = 128 with 8 warps an SM)
  // (LB_WREG) words AHEAD sub-stages ahead: sub-stage 0's, and 1's where two
  constexpr int AHEAD = LB_UN == 2 ? 1 : 2;
  lb_words w0 = {}, w1 = {};
  const unsigned long long pol = lb_read_once();
  if (LB_WREG) lb_load_words(w0, wq, chs, t, lb_rot(0, rot, s0, ns), pol);
  if (LB_WREG && AHEAD == 2 && ns > 1) lb_load_words(w1, wq, chs, t, lb_rot(1, rot, s0, ns), pol);
  const unsigned smem0 = (unsigned)__cvta_generic_to_shared(lb_smem);
#pragma unroll
  for (int s = 0; s < LB_STAGES - LAG; s++) {
    if (LB_TMA) {
      if (threadIdx.x == 0 && s < ns)
        lb_fill_x(smem0 + s * LB_STAGE_B, bars + 8 * s, xmap,
                  lb_rot(s, rot, s0, ns) * 32 * LB_R, m0);
      if constexpr (LB_SSTG > 0) {   // (a group a sub-stage, copies or none)
        if (s < ns) lb_issue_own(lb_smem, s, lb_rot(s, rot, s0, ns), sc, zr, n0, wn, lane);
        lb_cp_commit();
      }
      continue;
    }
    if (s < ns)
      lb_issue(lb_smem, s, lb_rot(s, rot, s0, ns), cp, wq, x, sc, zr, n0, m0, m, full_m,
               full_n);
    lb_cp_commit();
  }
  if (LB_TMA) {   // the resident scales have landed; the barriers are set
    lb_cp_commit();
    lb_cp_wait<0>();
    __syncthreads();
  }
  lb_sgroups sg;
  // (staged scales, LB_SSTG: read from the sub-stage's stage instead)
  constexpr bool SREG_LOAD = !SRES && LB_SSTG == 0;
  if (SREG_LOAD) lb_load_sg(sg, sc, zr, chs, lb_rot(0, rot, s0, ns));

  int buf = 0;
  // Sub-stage ss: its words wcur, and sub-stage ss + AHEAD's on their way
  // into wload (LB_WREG).
  auto step = [&](int ss, const lb_words &wcur, lb_words &wload) {
    if (LB_WREG && ss + AHEAD < ns)
      lb_load_words(wload, wq, chs, t, lb_rot(ss + AHEAD, rot, s0, ns), pol);
    const int ahead = ss + LB_STAGES - LAG;   // the sub-stage a refill takes,
    const int abuf = buf >= LAG ? buf - LAG : buf + LB_STAGES - LAG;   // into ss - LAG's buffer
    if constexpr (LB_TMA) {
      // the wgmmas before are retired (lb_wg_wait): the last warp to be
      // done with ss - 2's stage refills it (the first two refills are of
      // stages not used yet: thread 0's); then sub-stage ss has landed
      lb_wg_wait();
      if (ahead < ns &&
          (ss < LAG ? threadIdx.x == 0 : lane == 0 && lb_release_last(cnts + 4 * abuf)))
        lb_fill_x(smem0 + abuf * LB_STAGE_B, bars + 8 * abuf, xmap,
                  lb_rot(ahead, rot, s0, ns) * 32 * LB_R, m0);
      // Staged scales: this warp's rows of sub-stage ss - LAG's stage are
      // its own and read (each warp's channels are its own); its group of
      // copies for sub-stage ss has landed once no more than the
      // STAGES - LAG issued after it are in flight
      if constexpr (LB_SSTG > 0) {
        if (ahead < ns)
          lb_issue_own(lb_smem, abuf, lb_rot(ahead, rot, s0, ns), sc, zr, n0, wn, lane);
        lb_cp_commit();
        lb_cp_wait<LB_STAGES - LAG>();
        __syncwarp();
      }
      lb_bar_wait(bars + 8 * buf, (unsigned)(ss / LB_STAGES) & 1u);
    } else {
      lb_cp_wait<LB_STAGES - LAG - 1>();   // sub-stage ss has landed (this thread's
      if (LB_WG) {                   // copies), for every thread; and every
        lb_proxy_fence();            // thread is done with sub-stage ss - LAG
        lb_wg_wait();                // (wgmma: its reads of shared memory too)
      }
      __syncthreads();
      if (ahead < ns)
        lb_issue(lb_smem, abuf, lb_rot(ahead, rot, s0, ns), cp, wq, x, sc, zr, n0, m0, m,
                 full_m, full_n);
      lb_cp_commit();
    }
    const lb_sgroups cur = sg;
    if (SREG_LOAD && LB_NGROUPS > 1 && ss + 1 < ns)
      lb_load_sg(sg, sc, zr, chs, lb_rot(ss + 1, rot, s0, ns));

    const int sk = lb_rot(ss, rot, s0, ns);   // the sub-stage of K this iteration takes
    const int q = sk % LB_NQ, k0 = sk * 32 * LB_R;
    const int g0 = lb_ss_g0(sk);
    const char *wbuf = lb_smem + buf * LB_STAGE_B;
    const char *xbuf = wbuf + LB_WSTAGE_B;
    // This thread's rows of the stage: channel rows (chunk 2 t of word 0)
    // and activation rows (16 bytes at 8 t).
    // (wgmma: lanes 2t, 2t + 1 of a word at 8 bytes past chunk t / 2; the
    // stage's activations whole.)
    const char *wrow = wbuf + (lb_wch0(wn) + g) * LB_WROWC * 16 +
                       (LB_WG ? 16 * (t / 2) + 8 * (t % 2) : 32 * t);
    const char *xrow = LB_WG ? xbuf : xbuf + (wm * LB_WROWS + g) * LB_XROWB + 16 * t;
    // The operands of the groups this sub-stage meets (LB_GSS slots), made
    // once; each code row then selects its slot without a branch, so the
    // unrolled code rows form one block the compiler can interleave (a
    // branch per row left each row's loads, PRMTs and MMAs in sequence).
    unsigned s2v[LB_GSS][LB_MJ][2], b2v[LB_GSS][LB_MJ][2];
#pragma unroll
    for (int u = 0; u < LB_GSS; u++)
#pragma unroll
      for (int j = 0; j < LB_MJ; j++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
          lb_scale_t sv = cur.s[j][r][u];
          lb_zero_t zv = cur.z[j][r][u];
          if (SRES) {
            const int gi = min(g0 + u, LB_NGROUPS - 1);
            const int row = lb_wch(wn, j, g, r);
            sv = reinterpret_cast<const lb_scale_t *>(sres + row * LB_SROWB)[gi];
            zv = LB_ZEROS ? reinterpret_cast<const lb_zero_t *>(
                                sres + SREG + row * LB_ZROWB)[gi]
                          : lb_zero_t(0);
          } else if (LB_SSTG > 0) {   // slot u of the sub-stage's groups
            const int gu = min(g0 + u, LB_NGROUPS - 1) - g0;
            const int row = lb_wch(wn, j, g, r);
            const char *st = wbuf + LB_SSTAGE;
            sv = reinterpret_cast<const lb_scale_t *>(st + row * LB_SSTG)[gu];
            zv = LB_ZSTG > 0 ? reinterpret_cast<const lb_zero_t *>(
                                   st + LB_BN * LB_SSTG + row * LB_ZSTG)[gu]
                             : lb_zero_t(0);
          }
          const float s = lb_scale_f32(sv);
          lb_wgroup(s, lb_offset(s, zv), s2v[u][j][r], b2v[u][j][r]);
        }
    if constexpr (LB_WARPS_K == 1 && !LB_QFIX)   // nothing to pick
      lb_rows<0, -1>(acc, s2v, b2v, wcur, wrow, xrow, q, k0, g0);
    else
      lb_pick_rows<0, LB_QFIX ? 0 : -1>(wk, q, acc, s2v, b2v, wcur, wrow, xrow, k0, g0);
    if (LB_WG) lb_wg_commit();
    buf = buf + 1 == LB_STAGES ? 0 : buf + 1;
  };
  // Rolled (LB_UN 1), three sets of words are live, this sub-stage's and
  // the next two's, and the loop moves the next two down a set each
  // sub-stage (ncu, a16w4_g128 at M = 128: IMAD moves 15% of the
  // instructions).  Unrolled by three (LB_UN 3) the sets take turns and
  // nothing moves, for three copies of the body; by two (LB_UN 2), with
  // the words one sub-stage ahead, two copies (gen/lb_gmplan.c, un_rule).
  if constexpr (LB_WREG && LB_UN == 3) {
    lb_words w2;
    for (int ss = 0; ss < ns; ss += 3) {
      step(ss, w0, w2);
      if (ss + 1 < ns) step(ss + 1, w1, w0);
      if (ss + 2 < ns) step(ss + 2, w2, w1);
    }
  } else if constexpr (LB_WREG && LB_UN == 2) {
    for (int ss = 0; ss < ns; ss += 2) {
      step(ss, w0, w1);
      if (ss + 1 < ns) step(ss + 1, w1, w0);
    }
  } else {
    for (int ss = 0; ss < ns; ss++) {
      const lb_words wcur = w0;
      w0 = w1;
      step(ss, wcur, w1);
    }
  }
  lb_cp_wait<0>();   // no copy outlives the block
  if (LB_WG) lb_wg_wait();   // the sums are the wgmma's until it is done
  if (LB_ACCS > 1)
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int f = 0; f < LB_MF; f++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[0][j][f][e] += acc[LB_ACCS - 1][j][f][e];
  if (LB_WARPS_K > 1) {   // the K-split warps' sums, through shared memory
    float *red = reinterpret_cast<float *>(lb_smem);
    constexpr int PER = LB_MJ * LB_MF * 4;
    __syncthreads();   // every warp is done with the stages
    if (wk > 0) {
      float *p = red + (((wk - 1) * LB_WARPS_M + wm) * LB_WARPS_N + wn) * 32 * PER;
#pragma unroll
      for (int j = 0; j < LB_MJ; j++)
#pragma unroll
        for (int f = 0; f < LB_MF; f++)
#pragma unroll
          for (int e = 0; e < 4; e++) p[((j * LB_MF + f) * 4 + e) * 32 + lane] = acc[0][j][f][e];
    }
    __syncthreads();
    if (wk == 0)
#pragma unroll
      for (int w = 1; w < LB_WARPS_K; w++) {
        const float *p = red + (((w - 1) * LB_WARPS_M + wm) * LB_WARPS_N + wn) * 32 * PER;
#pragma unroll
        for (int j = 0; j < LB_MJ; j++)
#pragma unroll
          for (int f = 0; f < LB_MF; f++)
#pragma unroll
            for (int e = 0; e < 4; e++)
              acc[0][j][f][e] += p[((j * LB_MF + f) * 4 + e) * 32 + lane];
      }
  }

  // Split-K: block z of gridDim.z takes a range of the sub-stages (above).
  // In a cluster along z (sm_90, LB_CSUM, launched so: lb_op_run) every
  // block leaves its sums in its shared memory, and block r adds up the
  // fragments i with i % blocks == r, from every block's in rank order
  // (which is z order: the same sums in the same order as lb_gemm_sum's),
  // and stores them: no work space, no second kernel (measured on an H100,
  // that kernel cost 3.4 to 5.2 us a split GEMM), and the reads and
  // stores shared by the cluster's SMs.  Otherwise each block leaves its
  // sums in ws.  The warps that took alternate code rows (wk > 0) stay to
  // the end: every thread meets the cluster's barriers.
  constexpr int NF = LB_MJ * LB_MF;   // a thread's fragments of 4 sums
  unsigned blocks = 1, rank = 0;   // of the cluster (1: none)
  if constexpr (LB_CSUM) {
    blocks = lb_cluster_size();
    rank = lb_cluster_rank();
  }
  // Splits that meet in the work space: the next kernel is lb_gemm_sum,
  // launched with PDL (lb_op_run), which may now be placed on the SMs and
  // wait there (lb_wait_prior) while this grid stores its sums, instead of
  // being launched once it has ended.  Here, after the loop, and only for
  // that kernel: early blocks of a next layer's kernel took SMs from a GEMM
  // (above).  H200, a16w4_g128 at M = 128, 8192 x 8192: 44.8 -> 41.7 us
  // with the sum's stores vectorised; 1024 x 4096 14.4 -> 12.4.
  if (blocks == 1 && gridDim.z > 1) lb_let_next();
  if (blocks > 1) {
    // this warp's sums: fragment i = j MF + f of lane l at i 32 + l
    lb_f4 *const cs = reinterpret_cast<lb_f4 *>(lb_smem) + (wm * LB_WARPS_N + wn) * 32 * NF;
    __syncthreads();   // the stages (and red) are read
    if (wk == 0)
#pragma unroll
      for (int i = 0; i < NF; i++) {
        const float (&a)[4] = acc[0][i / LB_MF][i % LB_MF];
        cs[i * 32 + lane] = lb_f4{a[0], a[1], a[2], a[3]};
      }
    lb_cluster_sync();   // every block's sums are in its shared memory
    if (wk == 0)
#pragma unroll
      for (int i = 0; i < NF; i++) {
        if (i % blocks != rank) continue;
        float (&a)[4] = acc[0][i / LB_MF][i % LB_MF];
        const lb_f4 own{a[0], a[1], a[2], a[3]};
        lb_f4 v = rank == 0 ? own : lb_ld_peer4(cs + i * 32 + lane, 0);
        // (a loop, not unrolled: unrolled it took 18 KB of an a16w4 kernel's
        // 68 KB, for clusters of 2)
#pragma unroll 1
        for (unsigned q = 1; q < blocks; q++) {
          const lb_f4 u = q == rank ? own : lb_ld_peer4(cs + i * 32 + lane, q);
          v.x += u.x;
          v.y += u.y;
          v.z += u.z;
          v.w += u.w;
        }
        a[0] = v.x;
        a[1] = v.y;
        a[2] = v.z;
        a[3] = v.w;
      }
    // A block's shared memory outlives the others' reads: each arrives
    // once it has read, stores, then waits.
    lb_cluster_arrive();
  }

  // Fragment e of acc[j][f]: channel g + 8 (e / 2), activation row 2 t + e % 2;
  // in a cluster, the fragments this block added up (the rest: i % blocks).
  // The epilogue's part of this thread's channels is read first, once
  // (lb_epi_chan; a channel past N reads the last one's, never stored).
  if (wk == 0) {
    float ech[LB_MJ][2];
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int h = 0; h < 2; h++)
        ech[j][h] = lb_epi_chan(bias, min(n0 + lb_wch(wn, j, g, h), LB_N - 1));
    const bool in_ws = gridDim.z > 1 && blocks == 1;   // split in a work space
#pragma unroll
    for (int j = 0; j < LB_MJ; j++)
#pragma unroll
      for (int f = 0; f < LB_MF; f++) {
        if ((j * LB_MF + f) % blocks != rank) continue;
#pragma unroll
        for (int e = 0; e < 4; e++) {
          const int c = n0 + lb_wch(wn, j, g, e >> 1);
          const int row = m0 + wm * LB_WROWS + 8 * f + 2 * t + (e & 1);
          if ((LB_N % LB_BN == 0 || c < LB_N) && row < m) {
            if (in_ws)
              ws[((long long)blockIdx.z * m + row) * LB_N + c] = acc[0][j][f][e];
            else
              y[(long long)row * LB_N + c] =
                  lb_out_from_f32(lb_epi_apply(acc[0][j][f][e], ech[j][e >> 1]));
          }
        }
      }
  }
  if (blocks > 1) lb_cluster_wait();
}

// Split-K's second step: y = epilogue(sum of the splits' sums), added in
// split order (the result does not depend on timing).  Four outputs a
// thread where N allows 16-byte loads.
__device__ __forceinline__ void lb_gemm_sum_body(const float *__restrict__ ws,
                                                 const lb_out_t *__restrict__ bias,
                                                 lb_out_t *__restrict__ y, int m,
                                                 int splits) {
  constexpr int V = LB_N % 4 == 0 ? 4 : 1;
  struct __align__(4 * V) lb_fv { float v[V]; };
  struct __align__(sizeof(lb_out_t) * V) lb_ov { lb_out_t v[V]; };
  // y is aligned to its element (lb_op_run): V of them at once where more
  const bool vy = (reinterpret_cast<unsigned long long>(y) % sizeof(lb_ov)) == 0;
  // No lb_let_next, as the GEMM: the kernel after a sum is most often the
  // next layer's GEMM, whose early blocks took SMs from this one
  // (bench/model.py, a16w4_g128 at M = 32 with the overlap: 3153 -> 3061
  // us a step, against 3000 without it).
  lb_wait_prior();   // ws is the GEMM's, just before
  ws = lb_after_prior(ws);
  const long long total = (long long)m * LB_N;
  for (long long e = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * V; e < total;
       e += (long long)gridDim.x * blockDim.x * V) {
    lb_fv a = *reinterpret_cast<const lb_fv *>(ws + e);
    // (unrolled: the splits' loads go out together, then the adds in order)
#pragma unroll 4
    for (int z = 1; z < splits; z++) {
      const lb_fv b = *reinterpret_cast<const lb_fv *>(ws + z * total + e);
#pragma unroll
      for (int i = 0; i < V; i++) a.v[i] += b.v[i];
    }
    lb_ov o;
#pragma unroll
    for (int i = 0; i < V; i++)
      o.v[i] = lb_out_from_f32(lb_epilogue(a.v[i], bias, (int)((e + i) % LB_N)));
    if (vy)   // one store of V outputs
      *reinterpret_cast<lb_ov *>(y + e) = o;
    else
#pragma unroll
      for (int i = 0; i < V; i++) y[e + i] = o.v[i];
  }
}
