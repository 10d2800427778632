// ---------------------------------------------------------------------------
// templates/gemv.cu: the fused low-bit GEMV skeleton, y = x * W^T (+ bias),
// for 1..8 rows of activations, on the tensor cores.
//
// The prelude above (generated from the recipe) supplies the types and
// conversions, the layout constants LB_WORDS / LB_CODES / LB_TILE,
// lb_pair() that puts one code of two neighbouring lanes into a 32-bit
// register as two 16-bit values, lb_group() / lb_dq2() that apply scales
// and zeros (per group after the MMA, or before it), the group slot
// helpers and lb_mma().
//
// Why tensor cores for a GEMV: on CUDA cores every code costs a convert,
// a dequant FMA and M more FMAs, and the kernel runs out of issue slots
// before it runs out of bandwidth.  mma.m16n8k16 takes 16 output channels
// (rows of W, operand A) times 16 k-values times up to 8 activation rows
// (operand B) in one instruction, so a code costs only its extraction,
// whatever M is; scales and zeros are applied once per group.
//
// Operand layout.  Thread (g, t) = (lane / 4, lane % 4) holds A for rows
// g and g + 8 at k-slots 2t, 2t+1, 2t+8, 2t+9, and B (activations of row
// g) at the same slots.  Any consistent map of slots to k is correct.  In
// a code row (32 k-values, one code of every lane) half h maps thread t's
// slots to the four consecutive k-values 8t + 4h .. 8t + 4h + 3: in the
// packed layout those are one code of lanes 8t + 4h .. +3, the 16-byte
// word group the thread loads, and both halves' activations are one
// 16-byte load.
//
// Work split.  A warp owns 16 channels and a share of the tiles along K;
// a block has LB_WARPS warps: LB_WARPS / SPLIT channel groups, each with
// SPLIT warps that split its tiles and add their sums in shared memory;
// or, where K has few tiles (LB_RSPLIT), split every tile's code rows.
// ---------------------------------------------------------------------------

// What the template needs of the prelude's layout, checked here.
static_assert(LB_BITS * LB_CODES == 32 * LB_WORDS,
              "a lane's codes fill its words exactly");
static_assert(LB_TILE == 32 * LB_CODES, "a tile is one code of each lane");
static_assert(LB_CODES % (LB_CODES < 4 ? LB_CODES : 4) == 0,
              "code rows come in whole chunks");

struct lb_u4 { unsigned x, y, z, w; };

// Eight activations: from shared memory where the block keeps x (XS),
// else from global memory through L1, since every channel group of the
// SM re-reads them: by the read-only path, or, in a kernel launched
// early (LB_EARLY), by plain loads.  The read-only path may serve lines
// of x from before the kernel that writes it ended (H100: wrong results
// on a CUDA graph's first replay, GEMVs in clusters of 8); a plain load
// after the wait sees that kernel's writes (H100: 0 to 4% slower).
template <bool XS>
__device__ __forceinline__ lb_u4 lb_ld_act8(const lb_act_t *p) {
  lb_u4 v;
  // A plain load: it stays after the wait for the copy that filled it
  // (the wait clobbers memory).  An asm volatile load did too, but it
  // also kept the compiler from reusing any load of shared memory across
  // it: lazy words were read back and their signs flipped once per code
  // row instead of once per tile (5-bit group 32 at 1024 x 4096, m = 8:
  // 4112 PTX instructions in lb_gemv_xs against 3321).
  if (XS)
    v = *reinterpret_cast<const lb_u4 *>(p);
  else if (LB_EARLY)
    asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// Weights travel global -> shared memory with cp.async (templates/
// common.cu), STAGES tiles ahead of the math.  A warp copies in memory
// order and reads back in operand order (below), so it waits for its
// copies (cp.async.wait_group) and then __syncwarp.

// What the whole block reads, copied once when it starts: rows of
// ROWB bytes (a multiple of 16) from consecutive global rows into shared
// rows DSTB bytes apart (padded so that neighbouring rows start in
// different banks), 16 bytes per thread and step.  L1: through L1, for
// x's rows, which are the same in every block: an SM's blocks after the
// first find them there (the lines of one copy in flight are merged).
// Through L2 alone every block's copy hit the same few lines at once: a
// 4096 x 28672 layer at M = 1 runs 896 blocks, about 7 an SM; launched
// early, they copy x together after the wait, and that took 1.67 us of
// the 18.8 a layer in a chain of 32 (H200, block timestamps).  A load
// through L1 after lb_wait_prior sees the kernel before's writes, as
// LB_EARLY's plain loads do.  H200, the decode step of bench/model.py's
// layers, overlapped (a16w4_g128, four interleaved pairs in one call):
// M = 1 1251.1 -> 1237.1 us (every pair faster), M = 8 1549.9 -> 1550.2.
template <int ROWB, int DSTB, bool L1 = false>
__device__ __forceinline__ void lb_cp_rows(char *dst, const char *src,
                                           int rows) {
  static_assert(ROWB % 16 == 0, "rows are whole 16-byte chunks");
  constexpr int CH = ROWB / 16;
  for (int c = threadIdx.x; c < rows * CH; c += LB_WARPS * 32)
    lb_cp16<L1>(dst + c / CH * DSTB + c % CH * 16, src + c * 16);
}

// One warp's ring: per stage, 16 rows of LB_WORDS x 8 chunks (16 bytes,
// four lanes each), rows padded by one chunk so that the read-back below
// meets no bank conflict.  The copy is issued in memory order (lane l
// takes chunk l % 8 of row 4 j + l / 8: each instruction moves four whole
// 128-byte runs, one per row), and read back in operand order.
constexpr int LB_ROWCH = LB_WORDS * 8 + 1;          // chunks per ring row
constexpr int LB_CHUNKS = 16 * LB_ROWCH;            // words, per stage
// Scales and zeros in the ring (LB_SRING > 0: lazy plans, many group
// slots a tile, not resident): a stage also holds its tile's slots for
// the warp's 16 rows, scales in rows of LB_SRING bytes, then zeros in rows
// of LB_ZRING (each padded by 16: the 8 rows a quarter warp reads fall in
// different banks), copied with the words and read where a group starts.
constexpr bool LB_SRG = LB_SRING > 0;
constexpr int LB_SBT = LB_GPT * (int)sizeof(lb_scale_t);   // a row's slots
constexpr int LB_ZBT = LB_ZEROS ? LB_GPT * (int)sizeof(lb_zero_t) : 0;
constexpr int LB_STAGECH = LB_CHUNKS + (LB_SRG ? LB_SRING + LB_ZRING : 0);
static_assert(!LB_SRG ||
                  (LB_LAZY && LB_SBT % 16 == 0 && LB_ZBT % 16 == 0 &&
                   LB_SRING == LB_SBT + 16 &&
                   LB_ZRING == (LB_ZEROS ? LB_ZBT + 16 : 0) &&
                   lb_groups(LB_K) * (int)sizeof(lb_scale_t) % 16 == 0 &&
                   (!LB_ZEROS ||
                    lb_groups(LB_K) * (int)sizeof(lb_zero_t) % 16 == 0)),
              "ring scales: a lazy stage, rows of whole 16-byte chunks");

// off: the tile's first word within a channel (tile * 32 * LB_WORDS).
// A last tile that K does not fill needs only the words of its live code
// rows (K = 256 with 7-bit codes: 2 of 7); the rest of its stage is never
// used (its rows meet zero activations, and are skipped where it counts).
constexpr int LB_LASTW =
    LB_K % LB_TILE == 0 ? LB_WORDS
                        : (LB_BITS * ((LB_K % LB_TILE + 31) / 32) + 31) / 32;
// The words code rows 0 .. i - 1 of a lane are in: up to the last one's
// last bit.
__device__ __forceinline__ constexpr int lb_wend(int i) {
  return (LB_BITS * i + 31) / 32;
}
// q0 .. q1 - 1: the words copied (LB_RSPLIT: those of the warp's code
// rows; LB_PH: of a phase's), constants once the callers are unrolled.
__device__ __forceinline__ void lb_issue_tile(lb_u4 *ring, int stage,
                                              const unsigned *const (&src)[4],
                                              unsigned off, int lane,
                                              bool last,
                                              unsigned long long pol, int q0,
                                              int q1) {
  lb_u4 *dst = ring + stage * LB_STAGECH + (lane >> 3) * LB_ROWCH + (lane & 7);
#pragma unroll
  for (int j = 0; j < 4; j++)          // rows 4 j + lane / 8
#pragma unroll
    for (int q = 0; q < LB_WORDS; q++)
      if ((q < LB_LASTW || !last) && q >= q0 && q < q1)
        lb_cp16_once(dst + 4 * j * LB_ROWCH + q * 8, src[j] + off + q * 32,
                     pol);
}

// Where scales and zeros come from when they are not resident in shared
// memory: with few group slots per tile (LB_GPT <= 2), a tile ahead in
// registers (lb_rowtile); with more, a tile's worth would not fit in
// registers (7-bit group 32: 32 slots, 1.6 KB spilled per thread), so a
// chunk of code rows ahead (lb_schunk), like the activations.
constexpr bool LB_SRES = LB_SROWB > 0;
constexpr bool LB_SCH = !LB_SRES && !LB_SRG && LB_GPT > 2;
// a tile ahead in registers (none of the above)
constexpr bool LB_SAHEAD = !LB_SRES && !LB_SRG && !LB_SCH;
constexpr int LB_TGPT = LB_SAHEAD ? LB_GPT : 1;   // slots per rowtile

// The tile's slots into stage `stage` (LB_SRG), in the words' copy group:
// rows row0.. (past N: the last), chunks past K's last group not copied
// (their code rows are skipped, and so are their slots).
__device__ __forceinline__ void lb_issue_sg(lb_u4 *ring, int stage,
                                            const lb_scale_t *sc,
                                            const lb_zero_t *zr, int row0,
                                            int tile, int lane) {
  if constexpr (LB_SRG) {
    // chunks a row: of scales, of zeros, and the more of the two (1
    // where the ring has none: the branch is compiled all the same)
    constexpr int PS = LB_SBT / 16, PZ = LB_ZBT / 16;
    constexpr int PR = !LB_SRG ? 1 : PS > PZ ? PS : PZ, ng = lb_groups(LB_K);
    const int g0 = tile * LB_GPT;
    const int live = LB_K % LB_TILE == 0 ? LB_GPT : min(LB_GPT, ng - g0);
    char *const dst = (char *)(ring + stage * LB_STAGECH + LB_CHUNKS);
#pragma unroll
    for (int c = lane; c < 16 * PR; c += 32) {
      const int r = c / PR, q = c % PR;
      const int row = LB_N % 16 == 0 ? row0 + r : min(row0 + r, LB_N - 1);
      if (q < PS && (LB_K % LB_TILE == 0 ||
                     16 * q < live * (int)sizeof(lb_scale_t)))
        lb_cp16(dst + r * LB_SRING + 16 * q,
                (const char *)(sc + row * ng + g0) + 16 * q);
      if (LB_ZEROS && q < PZ &&
          (LB_K % LB_TILE == 0 || 16 * q < live * (int)sizeof(lb_zero_t)))
        lb_cp16(dst + 16 * LB_SRING + r * LB_ZRING + 16 * q,
                (const char *)(zr + row * ng + g0) + 16 * q);
    }
  }
}

// What thread t uses of one row for one tile: its words (read back from
// the ring) and, a tile ahead, the raw scales and zeros of the tile's
// group slots.
struct lb_rowtile {
  lb_u4 v[2][LB_WORDS];
  lb_scale_t s[LB_TGPT];
  lb_zero_t z[LB_TGPT];
};

// left: k-values from a tile's start to the end of K.  A tile inside K
// ("full") needs no clamp and its slots are at fixed offsets from the
// first; only the last tile of a K that is not a multiple of the tile
// takes the general path.
__device__ __forceinline__ bool lb_full(int left) {
  return LB_K % LB_TILE == 0 || left >= LB_TILE;
}

// The group of slot j of a tile.
__device__ __forceinline__ int lb_slot_index(int tile, int j, bool full) {
  return full ? lb_slot_group(tile, j)
              : lb_group_of(tile * LB_TILE + 32 * lb_gfirst(j),
                            lb_groups(LB_K));
}

__device__ __forceinline__ void lb_load_groups(lb_rowtile &r,
                                               const lb_scale_t *srow,
                                               const lb_zero_t *zrow, int tile,
                                               bool full) {
#pragma unroll
  for (int j = 0; j < LB_TGPT; j++) {
    const int gi = lb_slot_index(tile, j, full);
    r.s[j] = srow[gi];
    r.z[j] = LB_ZEROS ? zrow[gi] : lb_zero_t(0);
  }
}

// Thread (g, t) reads row `row` (g or g + 8): half h of word q is chunk
// 2 t + h, lanes 8 t + 4 h .. +3.
__device__ __forceinline__ void lb_read_tile(lb_rowtile &r, const lb_u4 *ring,
                                             int stage, int row, int t) {
  const lb_u4 *p = ring + stage * LB_STAGECH + row * LB_ROWCH + 2 * t;
#pragma unroll
  for (int h = 0; h < 2; h++)
#pragma unroll
    for (int q = 0; q < LB_WORDS; q++) {
      lb_u4 v = p[q * 8 + h];
      v.x = lb_flip(q, v.x);
      v.y = lb_flip(q, v.y);
      v.z = lb_flip(q, v.z);
      v.w = lb_flip(q, v.w);
      r.v[h][q] = v;
    }
}

// Activations for LB_XC code rows of a tile, in B-operand form: row r
// holds x[g][k .. k+7] for k = tile * LB_TILE + 32 (first + r) + 8 t,
// the first four for half 0, the last four for half 1.  Loaded a chunk
// ahead, like the weights, so that no MMA waits for an activation load.
// (two fragments hold two chunks of registers: half the code rows each;
// gen/lb_gvplan.c's chunk_rows plans with the same count)
constexpr int LB_XC = LB_CODES < 4 ? LB_CODES : 4 / LB_NF;
constexpr int LB_NCH = LB_CODES / LB_XC;
struct lb_xchunk { lb_u4 v[LB_XC]; };

// Code row i of a tile: xt points at the tile's first activation of
// this thread, left is as for lb_full.  Past K the activations must be
// zero (padded codes are not: the MMA sees 1024 + 0).
template <bool XS>
__device__ __forceinline__ lb_u4 lb_xrow(const lb_act_t *xt, int i,
                                         int left) {
  return lb_full(left) || 32 * i < left ? lb_ld_act8<XS>(xt + 32 * i)
                                        : lb_u4{0u, 0u, 0u, 0u};
}

template <bool XS>
__device__ __forceinline__ void lb_load_x(lb_xchunk &c, const lb_act_t *xt,
                                          int ch, int left) {
#pragma unroll
  for (int r = 0; r < LB_XC; r++) c.v[r] = lb_xrow<XS>(xt, ch * LB_XC + r, left);
}

// A group's scales and zeros are needed at code row i: it starts a group,
// or it is the first row of a warp's part of the tile (I0; LB_RSPLIT).
__device__ __forceinline__ constexpr bool lb_gstart(int i, int i0) {
  return lb_gfirst(lb_gslot(i)) == i || i == i0;
}

// Scales and zeros of the code rows of chunk ch that start a group (both
// rows of the thread), in slot rr of the chunk; other slots stay unset.
struct lb_schunk {
  lb_scale_t s[2][LB_XC];
  lb_zero_t z[2][LB_XC];
};

template <int I0>
__device__ __forceinline__ void lb_load_sch(lb_schunk &c,
                                            const lb_scale_t *const (&srow)[2],
                                            const lb_zero_t *const (&zrow)[2],
                                            int tile, int ch, int left) {
#pragma unroll
  for (int rr = 0; rr < LB_XC; rr++) {
    const int i = ch * LB_XC + rr;
    if (!lb_gstart(i, I0)) continue;
    const int gi = lb_slot_index(tile, lb_gslot(i), lb_full(left));
#pragma unroll
    for (int r = 0; r < 2; r++) {
      c.s[r][rr] = srow[r][gi];
      c.z[r][rr] = LB_ZEROS ? zrow[r][gi] : lb_zero_t(0);
    }
  }
}

// What a tile reads from global memory besides its words, brought into L2
// when the tile's words are copied (LB_PF): the m rows of its activations
// where x is not resident, and the warp's rows of its scales and zeros
// where they are not.  Those are loaded a chunk or a tile before their use,
// which hides an L2 hit but not a trip to memory, and every tile's first
// touch of them is one (the L2 holds them after the first warp; a read
// flush or a previous layer leaves them out): a16w7_g32 at 16384 x 1024
// spent 48% of its stall samples waiting on them.
template <bool XS>
__device__ __forceinline__ void lb_pf_x(const lb_act_t *x, int m, int tile,
                                        int lane) {
  if (LB_PF < 2 || XS) return;
  // lines a row's slice of the tile spans (one more where rows of K do
  // not start on a line)
  constexpr int AB = (int)sizeof(lb_act_t);
  const int k0 = tile * LB_TILE, kn = min(LB_TILE, LB_K - k0);
  const int L = (kn * AB + 127) / 128 + (LB_K * AB % 128 != 0);
  for (int c = lane; c < m * L; c += 32) {
    const int r = c / L, l = c % L;
    lb_pf_l2((const char *)(x + r * LB_K + k0) + min(128 * l, kn * AB - 1));
  }
}

// rows: the warp's first row of W; lanes 0..15 take a scale row each, 16..31
// a zero row, the lines of the tile's first and last group slots.
__device__ __forceinline__ void lb_pf_s(const lb_scale_t *sc,
                                        const lb_zero_t *zr, int row0,
                                        int tile, int lane) {
  if (LB_PF < 1 || LB_SRES || LB_SRG || (lane >= 16 && !LB_ZEROS)) return;
  const bool full = lb_full(LB_K - tile * LB_TILE);
  const int row = min(row0 + (lane & 15), LB_N - 1);
  const int g0 = lb_slot_index(tile, 0, full);
  const int g1 = lb_slot_index(tile, LB_GPT - 1, full);
  constexpr int ng = lb_groups(LB_K);
  if (lane < 16) {
    lb_pf_l2(sc + row * ng + g0);
    lb_pf_l2(sc + row * ng + g1);
  } else {
    lb_pf_l2(zr + row * ng + g0);
    lb_pf_l2(zr + row * ng + g1);
  }
}

// Code row i of two lanes' whole streams.
__device__ __forceinline__ unsigned lb_pair(const unsigned (&a)[LB_WORDS],
                                            const unsigned (&b)[LB_WORDS],
                                            int i) {
  const int p = LB_BITS * i / 32, q = p + 1 < LB_WORDS ? p + 1 : p;
  return lb_pair_at(a[p], a[q], b[p], b[q], i);
}

// A-operand register for code row i of one row: lanes c and c + 1 of half h.
__device__ __forceinline__ unsigned lb_a(const lb_rowtile &r, int h, int c,
                                         int i) {
  unsigned a[LB_WORDS], b[LB_WORDS];
#pragma unroll
  for (int q = 0; q < LB_WORDS; q++) {
    a[q] = c == 0 ? r.v[h][q].x : r.v[h][q].z;
    b[q] = c == 0 ? r.v[h][q].y : r.v[h][q].w;
  }
  return lb_pair(a, b, i);
}

// The same, read from the ring where the words are used (LB_LAZY): wide
// codes (3 to 7 bits, LB_WORDS > 2) would hold 16 LB_WORDS registers of
// words per tile (112 for 7 bits) and spill; read here, each word lives
// only across the code rows that use it.  The ring stage then stays
// untouched until the tile's math is done, so lazy plans have two stages.
// Only the word that code row i starts in is read, and the next where
// the code ends there (lb_wend).
__device__ __forceinline__ unsigned lb_a_ring(const lb_u4 *p, int h, int c,
                                              int i) {
  const int q0 = LB_BITS * i / 32, q1 = lb_wend(i + 1) - 1;
  const lb_u4 v0 = p[q0 * 8 + h], v1 = p[q1 * 8 + h];
  return lb_pair_at(lb_flip(q0, c == 0 ? v0.x : v0.z),
                    lb_flip(q1, c == 0 ? v1.x : v1.z),
                    lb_flip(q0, c == 0 ? v0.y : v0.w),
                    lb_flip(q1, c == 0 ? v1.y : v1.w), i);
}

// Two sums of x times the A operand: one per class of code row where
// there are two classes (then the halves of a row go to one sum, and
// rows of the other class fill the gap), else one per half of a code row,
// so that the two MMAs of a row do not wait on each other.
__device__ __forceinline__ constexpr int lb_acc(int i, int h) {
  return LB_CLS == 2 ? lb_cls(i) : h;
}

// The fold of one group into yacc, sums cleared for the next:
//   sum x w = S (aw_0 + aw_1 / 16) + C_0 ax_0 + C_1 ax_1 with two classes
// (class 1 rows hold base + 16 q, hence the 1/16 and their own C), else
//   sum x w = S (aw_0 + aw_1) + C_0 ax_0.
__device__ __forceinline__ void lb_fold(float *yacc, float (&aw)[2][4],
                                        float (&ax)[LB_CLS][4],
                                        const float (&S)[2],
                                        const float (&C)[2][2]) {
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const int r = j >> 1;
    if (LB_CLS == 2)
      yacc[j] += S[r] * aw[0][j] + (S[r] * 0.0625f) * aw[1][j] +
                 C[r][0] * ax[0][j] + C[r][1] * ax[LB_CLS - 1][j];
    else
      yacc[j] += S[r] * (aw[0][j] + aw[1][j]) + C[r][0] * ax[0][j];
    aw[0][j] = aw[1][j] = 0.f;
#pragma unroll
    for (int c = 0; c < LB_CLS; c++) ax[c][j] = 0.f;
  }
}

// Two fragments (LB_NF = 2: rows 0..7 and 8..15 of x, 9..16 rows): the
// fold's sums per fragment would not fit the registers, so each weight is
// dequantised before the MMA, to the activation type, by the prelude's
// hooks for that (lb_wgroup, lb_w2, as the GEMM's).  A pair of code row i
// holds its codes at bit 0 (class 0) or bit 4 (class 1) of base + code.
constexpr bool LB_DQB = LB_NF > 1;
static_assert(LB_NF == 1 || LB_FOLD, "two fragments: codes in the magic base");
__device__ __forceinline__ unsigned lb_wpair(unsigned p, int i, unsigned s2,
                                             unsigned b2) {
  lb_crow c{};
  c.pos = 4 * lb_cls(i);
  return lb_w2(p, c, s2, b2);
}

// Code-row split (LB_RSPLIT): where K has few tiles, a warp's tiles
// are one long chain of math (1024 x 256, 5-bit codes: 16 warps, 32 code
// rows each); the SPLIT warps of a channel group then take a part of
// every tile's code rows each: warp PART the chunks C0 .. C1 - 1 (code
// rows I0 .. I1 - 1), copying only the words those read (Q0 .. Q1 - 1).
// Each part is its own instance of the kernel (lb_gemv_run), so that its
// rows stay compile-time constants: the unrolled loop and its register
// indexing are the whole tile's.  Elsewhere a warp takes the whole tile.
//
// Phases (LB_PH > 1): where a warp has one tile, nothing overlaps its
// copy but the math can start on the code rows that have landed: the
// tile is copied in LB_PH groups, phase p the chunks C0 + p PCH .. and the
// words its rows reach that earlier phases did not (qp(p) .. qp(p + 1) -
// 1), and the math waits for each group where its chunks start.
template <int SPLIT, int PART>
struct lb_part {
  static constexpr int NCH = LB_RSPLIT ? LB_NCH / SPLIT : LB_NCH;
  static constexpr int C0 = LB_RSPLIT ? PART * NCH : 0, C1 = C0 + NCH;
  static constexpr int I0 = C0 * LB_XC, I1 = C1 * LB_XC;
  static constexpr int Q0 = LB_BITS * I0 / 32, Q1 = lb_wend(I1);
  static constexpr int PCH = NCH / LB_PH;
  __device__ static constexpr int qp(int p) {
    return p == 0 ? Q0 : p == LB_PH ? Q1 : lb_wend((C0 + p * PCH) * LB_XC);
  }
};
static_assert(!LB_RSPLIT || (LB_LAZY && LB_CLUSTER == 1 &&
                             LB_NCH % LB_SPLIT == 0),
              "a code-row split: lazy words, no cluster, whole chunks a part");
static_assert(LB_PH >= 1 && LB_PH <= 4, "phases: 1 to 4 copy groups");

// cp.async.wait_group n, for an n that is a constant once the loop that
// computes it is unrolled (the phases' waits).
__device__ __forceinline__ void lb_cp_wait_n(int n) {
  if (n <= 0)
    lb_cp_wait<0>();
  else if (n == 1)
    lb_cp_wait<1>();
  else if (n == 2)
    lb_cp_wait<2>();
  else
    lb_cp_wait<3>();
}

// The SPLIT parts' sums meet here: one array for every instance.
__shared__ float lb_red[LB_WARPS][4 * LB_NF][32];

// The block's barrier.  A code-row split's parts reach it from their own
// instances of the kernel, at different instructions, which __syncthreads
// (barrier.sync.aligned) does not allow (compute-sanitizer's synccheck:
// "divergent thread(s) in block"); the barrier without .aligned does.
__device__ __forceinline__ void lb_sync_block() {
  if constexpr (LB_RSPLIT)
    asm volatile("barrier.sync 0;" ::: "memory");
  else
    __syncthreads();
}

template <int SPLIT, int STAGES, bool XS, int PART>
__device__ __forceinline__ void lb_gemv(
    const lb_act_t *__restrict__ x, const unsigned *__restrict__ wq,
    const lb_scale_t *__restrict__ sc, const lb_zero_t *__restrict__ zr,
    const lb_out_t *__restrict__ bias, lb_out_t *__restrict__ y, int m,
    int early) {
  constexpr int GROUPS = LB_WARPS / SPLIT;
  using P = lb_part<SPLIT, PART>;
  extern __shared__ __align__(16) lb_u4 lb_smem[];

  lb_let_next();   // the next kernel may start its weights' copies
                   // (where it was launched to: lb_op_overlap)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = warp / SPLIT, part = warp % SPLIT;
  // A cluster's blocks share the channel groups of block cb and split K:
  // warp `part` of block `rank` takes tiles first, first + STEP, ...
  // (LB_RSPLIT: every tile, its part of the code rows)
  const int cb = blockIdx.x / LB_CLUSTER, rank = blockIdx.x % LB_CLUSTER;
  const int first = LB_RSPLIT ? rank : rank * SPLIT + part;
  constexpr int STEP = LB_RSPLIT ? LB_CLUSTER : SPLIT * LB_CLUSTER;
  const int g = lane >> 2, t = lane & 3;
  constexpr int tiles = (LB_K + LB_TILE - 1) / LB_TILE;
  constexpr int roww = tiles * 32 * LB_WORDS;  // words per channel
  constexpr int ngroups = lb_groups(LB_K);
  // Rows past n exist only in the last block, and only when its channel
  // groups do not divide n.
  constexpr bool NFULL = LB_N % (16 * GROUPS) == 0;

  // Rows past n repeat the last one: loads stay in bounds, the loop stays
  // uniform, and their results are never stored.
  const int row0 = (cb * GROUPS + grp) * 16;
  const int rows[2] = {NFULL ? row0 + g : min(row0 + g, LB_N - 1),
                       NFULL ? row0 + g + 8 : min(row0 + g + 8, LB_N - 1)};
  // The rows this lane copies: 4 j + lane / 8, chunk lane % 8.
  // Without a partial block they are one pointer and fixed offsets.
  const unsigned *csrc[4];
#pragma unroll
  for (int j = 0; j < 4; j++)
    csrc[j] = NFULL ? wq + (row0 + (lane >> 3)) * roww + 4 * (lane & 7) +
                          4 * j * roww
                    : wq + min(row0 + 4 * j + (lane >> 3), LB_N - 1) * roww +
                          4 * (lane & 7);
  lb_u4 *ring = lb_smem + warp * STAGES * LB_STAGECH;
  const unsigned long long once = lb_read_once();   // the weights' L2 policy

  // Shared memory past the rings: the block's scales and zeros (SRES)
  // and all of x (XS), copied once, so that no load of either waits on
  // memory inside the loop.  Their group is committed before the ring's.
  // Launched early (`early`: lb_op_overlap), the block may start before
  // the kernel that writes x has finished: x's copy then comes after the
  // ring's first tiles and the wait for that kernel (below).
  constexpr bool SRES = LB_SRES;
  char *const sres = (char *)(lb_smem + LB_WARPS * STAGES * LB_STAGECH);
  constexpr int SREG = GROUPS * 16 * LB_SROWB;     // one array's rows
  // The contract with the planner (lb_gvplan.c): the rings and the resident
  // scales and zeros (x's rows, lb_gemv_xs's, come on top at launch).
  static_assert(LB_WARPS * STAGES * LB_STAGECH * (int)sizeof(lb_u4) +
                        (SRES ? (LB_ZEROS ? 2 : 1) * SREG : 0) <=
                    LB_SMEM_BUDGET,
                "shared memory within the part's budget (the planner's)");
  char *const xres = sres + (SRES ? (LB_ZEROS ? 2 : 1) * SREG : 0);
  const int brow0 = cb * GROUPS * 16;      // the block's first row
  if constexpr (SRES) {
    const int brows = NFULL ? GROUPS * 16 : min(GROUPS * 16, LB_N - brow0);
    lb_cp_rows<ngroups * (int)sizeof(lb_scale_t), LB_SROWB>(
        sres, (const char *)(sc + brow0 * ngroups), brows);
    if constexpr (LB_ZEROS)
      lb_cp_rows<ngroups * (int)sizeof(lb_zero_t), LB_SROWB>(
          sres + SREG, (const char *)(zr + brow0 * ngroups), brows);
  }
  if (XS && !early)
    lb_cp_rows<LB_K * (int)sizeof(lb_act_t), LB_XROWB, true>(
        xres, (const char *)x, m);
  lb_cp_commit();
  // Rows past n read rows nobody copied: their results are never stored.
  const lb_scale_t *srow[2];
  const lb_zero_t *zrow[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    if (SRES) {
      const char *p = sres + (grp * 16 + g + 8 * r) * LB_SROWB;
      srow[r] = (const lb_scale_t *)p;
      zrow[r] = (const lb_zero_t *)(p + SREG);
    } else {
      srow[r] = sc + rows[r] * ngroups;
      zrow[r] = zr + rows[r] * ngroups;
    }
  }
  // Thread (g, t) feeds activation row g.  Rows past m repeat row m - 1:
  // their columns of the MMA are computed and never stored, which costs
  // less than zeroing them.
  const lb_act_t *xr =
      XS ? (const lb_act_t *)(xres + min(g, m - 1) * LB_XROWB) + 8 * t
         : x + min(g, m - 1) * LB_K + 8 * t;
  // fragment f reads row g + 8 f (or m - 1): dx[f] elements after xr
  int dx[LB_NF];
#pragma unroll
  for (int f = 0; f < LB_NF; f++)
    dx[f] = (min(g + 8 * f, m - 1) - min(g, m - 1)) *
            (XS ? LB_XROWB / (int)sizeof(lb_act_t) : LB_K);

  // aw: this group's sums of x times the A operand (lb_acc); ax: its sum
  // of x per class (an MMA against ones), for the base and zero-point
  // part of the fold; yacc: the folded result.
  // Fragment j holds (row g, x row 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
  float aw[LB_NF][2][4], ax[LB_CLS][4], yacc[4 * LB_NF];
#pragma unroll
  for (int j = 0; j < 4; j++) {
#pragma unroll
    for (int f = 0; f < LB_NF; f++) {
      aw[f][0][j] = aw[f][1][j] = 0.f;
      yacc[4 * f + j] = 0.f;
    }
#pragma unroll
    for (int c = 0; c < LB_CLS; c++) ax[c][j] = 0.f;
  }
  float S[2] = {0.f, 0.f}, C[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
  unsigned s2[2] = {0u, 0u}, b2[2] = {0u, 0u};
  lb_rowtile cur[2], nxt[2];
  // Activation chunks alternate between two buffers; with an even number
  // of chunks per tile the next tile starts in buffer 0 again.
  lb_xchunk xb[LB_NF][2];
  lb_schunk sb[2];   // the same for scales and zeros (LB_SCH)
  // Prologue: STAGES tiles in flight, a group each (an empty group where
  // none is left keeps the group count uniform); with phases, the warp's
  // one tile in LB_PH groups, all in stage 0.
  // Per-tile positions advance by constant steps (no index arithmetic
  // in the loop): words of the tile STAGES ahead, the activations.
  static_assert(LB_PH == 1 || (LB_LAZY && tiles <= STEP &&
                               P::NCH % LB_PH == 0),
                "phases: lazy words, a tile at most a warp, whole chunks");
  constexpr int NG = LB_PH > 1 ? LB_PH : STAGES;   // the ring's groups
  constexpr unsigned WSTEP = STEP * 32 * LB_WORDS;
  unsigned ahead_off = (unsigned)first * 32 * LB_WORDS;
  // Tile `tile`'s copies into stage st (its words from ahead_off): words
  // q0 .. q1 - 1, and with `head` (a tile's first copy) its ring scales
  // and what the loop will read from global memory, into L2 (x only where
  // `xpf`: not before the kernel that writes it has finished).
  auto issue = [&](int st, int tile, int q0, int q1, bool head, bool xpf) {
    lb_issue_tile(ring, st, csrc, ahead_off, lane, tile == tiles - 1, once,
                  q0, q1);
    if (!head) return;
    lb_issue_sg(ring, st, sc, zr, row0, tile, lane);
    lb_pf_s(sc, zr, row0, tile, lane);
    if (xpf && grp == 0) lb_pf_x<XS>(x, m, tile, lane);
  };
#pragma unroll
  for (int st = 0; st < NG; st++) {
    if (LB_PH > 1) {   // phase st of the warp's tile, into stage 0
      if (first < tiles)
        issue(0, first, P::qp(st), P::qp(st + 1), st == 0, !early);
    } else {
      if (first + st * STEP < tiles)
        issue(st, first + st * STEP, P::Q0, P::Q1, true, !early);
      ahead_off += WSTEP;
    }
    lb_cp_commit();
  }
  const lb_act_t *xt = xr + first * LB_TILE;
  int left = LB_K - first * LB_TILE;   // k-values from this tile to the end
  // Launched early, weights and scales are now on their way; x is read
  // only once the kernel before has finished.  Its copy is then the last
  // group, and the wait below takes every group (a plain launch waits
  // only for the first, which holds x: waiting for all of the ring's
  // tiles too cost 0.5 us at M = 1).
  if (early) {
    lb_wait_prior();
    xt = lb_after_prior(xt);   // (every load of x is through xt)
    for (int st = 0; st < STAGES && first + st * STEP < tiles; st++)
      if (grp == 0) lb_pf_x<XS>(x, m, first + st * STEP, lane);
    if (XS) {
      lb_cp_rows<LB_K * (int)sizeof(lb_act_t), LB_XROWB, true>(
          xres, (const char *)x, m);
      lb_cp_commit();
    }
  }
  if (SRES || XS) {      // the block's copies have landed, for all
    if (XS && early)
      lb_cp_wait<0>();
    else
      lb_cp_wait<NG>();
    lb_sync_block();
  }
  // Scales and activations in registers, a tile or a chunk ahead, only
  // where they come from global memory.
  if (first < tiles) {
    if (LB_SAHEAD)
#pragma unroll
      for (int r = 0; r < 2; r++)
        lb_load_groups(nxt[r], srow[r], zrow[r], first, lb_full(left));
    if (LB_SCH)
      lb_load_sch<P::I0>(sb[P::C0 & 1], srow, zrow, first, P::C0, left);
    if (!XS)
#pragma unroll
      for (int f = 0; f < LB_NF; f++)
        lb_load_x<XS>(xb[f][P::C0 & 1], xt + dx[f], P::C0, left);
  }
  int stage = 0;
  // The stage just read takes the tile STAGES ahead, so STAGES tiles
  // stay in flight; every lane must be done with it first.
  // Where a warp has more than one tile but the prologue issued them all
  // (5-bit codes, K = 8192, split 4: two tiles a warp, two stages), the
  // compiler proves that no refill copies anything and schedules the
  // warp's tiles together: a16w5_g64 at 8192 x 8192 has lb_gemv_xs at
  // 255 registers and 8 bytes spilled.  Hiding `tiles` from that proof
  // keeps the refill's copy point (184 registers, no spill).  Measured on
  // the H200 at M = 1, x resident: 3 to 9% faster for 3- and 5-bit codes
  // (a16w3_g128, 4096 x 28672: 28.3 -> 25.8 us), within 2% elsewhere.
  // With x from global memory (lb_gemv) the tiles scheduled together
  // were up to 7% faster at M = 8 (x's loads move ahead): kept there.
  constexpr bool NOREFILL = XS && tiles > STEP && tiles <= STAGES * STEP;
  auto refill = [&](int tile) {
    __syncwarp();
    const int ahead = tile + STAGES * STEP;
    if (ahead < (NOREFILL ? lb_opaque(tiles) : tiles))
      issue(stage, ahead, P::Q0, P::Q1, true, true);
    lb_cp_commit();
    ahead_off += WSTEP;
    stage = stage + 1 == STAGES ? 0 : stage + 1;
  };
  for (int tile = first; tile < tiles; tile += STEP) {
    const lb_act_t *xnext = xt + STEP * LB_TILE;
    const int lnext = left - STEP * LB_TILE;
    lb_cp_wait<NG - 1>();   // this tile's group (first phase) has landed,
    __syncwarp();           // for every lane of the warp
    // LB_LAZY: this thread's two rows of the stage, read where used
    const lb_u4 *const rp[2] = {
        ring + stage * LB_STAGECH + g * LB_ROWCH + 2 * t,
        ring + stage * LB_STAGECH + (g + 8) * LB_ROWCH + 2 * t};
    // LB_SRG: this thread's rows of the stage's scales and of its zeros
    const char *const sbase = (const char *)(ring + stage * LB_STAGECH + LB_CHUNKS);
    const char *const sgp = sbase + g * LB_SRING;
    const char *const zgp = sbase + 16 * LB_SRING + g * LB_ZRING;
#pragma unroll
    for (int r = 0; r < 2; r++) {
      if (!LB_LAZY) lb_read_tile(cur[r], ring, stage, g + 8 * r, t);
      if (LB_SAHEAD)
#pragma unroll
        for (int j = 0; j < LB_TGPT; j++) {
          cur[r].s[j] = nxt[r].s[j];
          cur[r].z[j] = nxt[r].z[j];
        }
    }
    // The tile is in registers: its stage can be refilled now.
    if (!LB_LAZY) refill(tile);
    const int next = tile + STEP;
    if (LB_SAHEAD && next < tiles)
#pragma unroll
      for (int r = 0; r < 2; r++)
        lb_load_groups(nxt[r], srow[r], zrow[r], next, lb_full(lnext));
#pragma unroll
    for (int ch = P::C0; ch < P::C1; ch++) {
      if (LB_PH > 1 && ch > P::C0 && (ch - P::C0) % P::PCH == 0) {
        lb_cp_wait_n(LB_PH - 1 - (ch - P::C0) / P::PCH);   // its phase
        __syncwarp();
      }
#pragma unroll
      for (int f = 0; f < LB_NF; f++)
        if (!XS && ch + 1 < P::C1)
          lb_load_x<XS>(xb[f][(ch + 1) & 1], xt + dx[f], ch + 1, left);
        else if (!XS && next < tiles)
          lb_load_x<XS>(xb[f][(ch + 1) & 1], xnext + dx[f], P::C0, lnext);
      if (LB_SCH && ch + 1 < P::C1)
        lb_load_sch<P::I0>(sb[(ch + 1) & 1], srow, zrow, tile, ch + 1, left);
      else if (LB_SCH && next < tiles)
        lb_load_sch<P::I0>(sb[(ch + 1) & 1], srow, zrow, next, P::C0, lnext);
#pragma unroll
      for (int rr = 0; rr < LB_XC; rr++) {
        const int i = ch * LB_XC + rr;
        // This code row's activations: from shared memory as they are
        // needed, or from the chunk loaded ahead.
        lb_u4 xv[LB_NF];
#pragma unroll
        for (int f = 0; f < LB_NF; f++)
          xv[f] = XS ? lb_xrow<XS>(xt + dx[f], i, left) : xb[f][ch & 1].v[rr];
        // A group starts at this row.  (Ring slots past K were not
        // copied: their rows keep the last group's, and add nothing.)
        if (lb_gstart(i, P::I0) &&
            (!LB_SRG || lb_full(left) || 32 * i < left)) {
          const int j = lb_gslot(i);
          const int gi = lb_slot_index(tile, j, lb_full(left));
#pragma unroll
          for (int r = 0; r < 2; r++) {
            const lb_scale_t *const rs =   // (LB_SRG) this row's slots
                reinterpret_cast<const lb_scale_t *>(sgp + 8 * r * LB_SRING);
            const lb_zero_t *const rz =
                reinterpret_cast<const lb_zero_t *>(zgp + 8 * r * LB_ZRING);
            const lb_scale_t sv = SRES     ? srow[r][gi]
                                  : LB_SRG ? rs[j]
                                  : LB_SCH ? sb[ch & 1].s[r][rr]
                                           : cur[r].s[j];
            const lb_zero_t zv = !LB_ZEROS ? lb_zero_t(0)
                                 : SRES    ? zrow[r][gi]
                                 : LB_SRG  ? rz[j]
                                 : LB_SCH  ? sb[ch & 1].z[r][rr]
                                           : cur[r].z[j];
            const float s = lb_scale_f32(sv);
            if (LB_DQB)
              lb_wgroup(s, lb_offset(s, zv), s2[r], b2[r]);
            else
              lb_group(s, lb_offset(s, zv), S[r], C[r], s2[r], b2[r]);
          }
        }
        // Code rows past K (a last tile that K does not fill) add nothing:
        // their activations are zero.
#pragma unroll
        for (int h = 0; h < 2 && (lb_full(left) || 32 * i < left); h++) {
          unsigned a[2][2];   // [lane pair][row]
#pragma unroll
          for (int c = 0; c < 2; c++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
              const unsigned p = LB_LAZY ? lb_a_ring(rp[r], h, 2 * c, i)
                                         : lb_a(cur[r], h, 2 * c, i);
              a[c][r] = LB_DQB ? lb_wpair(p, i, s2[r], b2[r])
                               : lb_dq2(p, s2[r], b2[r]);
            }
#pragma unroll
          for (int f = 0; f < LB_NF; f++)
            lb_mma(aw[f][LB_DQB ? h : lb_acc(i, h)], a[0][0], a[0][1],
                   a[1][0], a[1][1], h ? xv[f].z : xv[f].x,
                   h ? xv[f].w : xv[f].y);
          if (LB_FOLD && !LB_DQB)
            lb_mma(ax[lb_cls(i)], LB_ONES, LB_ONES, LB_ONES, LB_ONES,
                   h ? xv[0].z : xv[0].x, h ? xv[0].w : xv[0].y);
        }
        // Fold where the group ends: at its last row, or the tile's end
        // (a warp's tiles are not contiguous in K).  Per-channel scales
        // fold at every tile's end too: the sums hold base * sum x, which
        // the fold cancels, and over all of K they would lose the bits of
        // a small result (f32 has 24).
        const bool last = i + 1 == P::I1 ||
                          lb_gfirst(lb_gslot(i + 1)) == i + 1;
        if (last && !LB_DQB) lb_fold(yacc, aw[0], ax, S, C);
      }
    }
    if (LB_LAZY) refill(tile);   // the math is done with this stage
    if (!XS && (P::NCH & 1))  // odd chunk count: next tile's
#pragma unroll
      for (int f = 0; f < LB_NF; f++) xb[f][P::C0 & 1] = xb[f][P::C1 & 1];
    if (LB_SCH && (P::NCH & 1)) sb[P::C0 & 1] = sb[P::C1 & 1];
    xt = xnext;
    left = lnext;
  }

  if (LB_DQB)
#pragma unroll
    for (int f = 0; f < LB_NF; f++)
#pragma unroll
      for (int j = 0; j < 4; j++) yacc[4 * f + j] = aw[f][0][j] + aw[f][1][j];
  // Sum the SPLIT parts of each channel group, then the LB_CLUSTER
  // blocks' sums (in the first block), then store.  Every thread stays
  // for the cluster's barriers.
  if (SPLIT > 1) {
#pragma unroll
    for (int j = 0; j < 4 * LB_NF; j++) lb_red[warp][j][lane] = yacc[j];
    lb_sync_block();
    if (part == 0)
#pragma unroll
      for (int p = 1; p < SPLIT; p++)
#pragma unroll
        for (int j = 0; j < 4 * LB_NF; j++) yacc[j] += lb_red[warp + p][j][lane];
  }
  if constexpr (LB_CLUSTER > 1) {
    if (SPLIT > 1) __syncthreads();   // lb_red is free again
    if (part == 0)
#pragma unroll
      for (int j = 0; j < 4 * LB_NF; j++) lb_red[warp][j][lane] = yacc[j];
    lb_cluster_sync();   // every block's sums are in its lb_red
    if (rank == 0 && part == 0)
#pragma unroll
      for (int q = 1; q < LB_CLUSTER; q++)
#pragma unroll
        for (int j = 0; j < 4 * LB_NF; j++)
          yacc[j] += lb_ld_peer(&lb_red[warp][j][lane], q);
    lb_cluster_sync();   // a block's lb_red outlives the first block's reads
    if (rank != 0) return;
  }
  if (part != 0) return;
#pragma unroll
  for (int j = 0; j < 4 * LB_NF; j++) {
    const int c = row0 + g + 8 * ((j & 3) >> 1), mr = 8 * (j >> 2) + 2 * t + (j & 1);
    if ((NFULL || c < LB_N) && mr < m)
      y[mr * LB_N + c] = lb_out_from_f32(lb_epilogue(yacc[j], bias, c));
  }
}

// The kernel of warp `part`'s instance (LB_RSPLIT; else the one kernel).
template <int SPLIT, int STAGES, bool XS, int PART = 0>
__device__ __forceinline__ void lb_gemv_run(
    const lb_act_t *x, const unsigned *wq, const lb_scale_t *sc,
    const lb_zero_t *zr, const lb_out_t *bias, lb_out_t *y, int m, int early) {
  if constexpr (LB_RSPLIT && PART + 1 < SPLIT)
    if ((int)(threadIdx.x >> 5) % SPLIT != PART) {
      lb_gemv_run<SPLIT, STAGES, XS, PART + 1>(x, wq, sc, zr, bias, y, m,
                                                early);
      return;
    }
  lb_gemv<SPLIT, STAGES, XS, PART>(x, wq, sc, zr, bias, y, m, early);
}
