// ---------------------------------------------------------------------------
// templates/gemv.cu: the fused low-bit GEMV skeleton, y = x * W^T (+ bias),
// for M = 1..8 rows of activations.
//
// The prelude above (generated from the recipe) supplies the types, the
// conversions, the layout constants LB_WORDS / LB_CODES / LB_TILE, lb_code()
// that extracts lane code i from a lane's words, lb_q() that turns it into
// a float, the group size LB_GROUP and lb_offset() for the dequant form.
//
// Work split.  A block has LB_WARPS warps, arranged as LB_WARPS / SPLIT
// column groups; a group owns COLS output channels, and its SPLIT warps
// share the channel's K range.  The K range is cut into units: 4 lanes of
// one tile, so one 16-byte load per lane word, and 32 consecutive units
// (one per lane of a warp) are 512 contiguous bytes.  Each thread keeps
// sums for COLS x M outputs in registers; the activations it loads for a
// unit are reused for all COLS channels.  Warps reduce with shuffles, the
// SPLIT parts of a group meet in shared memory.
// ---------------------------------------------------------------------------

struct lb_u4 { unsigned x, y, z, w; };

// Packed weights are read once: stream them past L1.
__device__ __forceinline__ lb_u4 lb_ld_weights(const unsigned *p) {
  lb_u4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// Activations are re-read by every column group: keep them in L1.
__device__ __forceinline__ void lb_ld_act4(const lb_act_t *p, unsigned &a,
                                           unsigned &b) {
  asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p));
}

__device__ __forceinline__ lb_u4 lb_ld_act8(const lb_act_t *p) {
  lb_u4 v;
  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// M is the row bucket; rows <= M are present (the rest read as zero).
template <int M, int COLS, int SPLIT, bool STAGE>
__device__ __forceinline__ void lb_gemv(
    const lb_act_t *__restrict__ x, const unsigned *__restrict__ wq,
    const lb_scale_t *__restrict__ sc, const lb_zero_t *__restrict__ zr,
    const lb_out_t *__restrict__ bias, lb_out_t *__restrict__ y, int rows,
    int n, int k) {
  constexpr int GROUPS = LB_WARPS / SPLIT;
  extern __shared__ __align__(16) unsigned char lb_smem[];
  __shared__ float red[LB_WARPS][COLS][M];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = warp / SPLIT, part = warp % SPLIT;
  const int tiles = (k + LB_TILE - 1) / LB_TILE;
  const int units = tiles * 8;
  const int roww = tiles * 32 * LB_WORDS;  // words per channel
  const int ngroups = lb_groups(k);

  // Activations: staged in shared memory (zero past k) when the block's
  // columns reuse them enough; otherwise read through L1 with a guard.
  const lb_act_t *xs = x;
  int xstride = k;
  if (STAGE) {
    lb_act_t *s = (lb_act_t *)lb_smem;
    const int kpad = tiles * LB_TILE, chunks = kpad / 8;
    for (int i = threadIdx.x; i < M * chunks; i += blockDim.x) {
      const int m = i / chunks, c = (i % chunks) * 8;
      lb_u4 v = {0u, 0u, 0u, 0u};
      if (c < k && m < rows) v = lb_ld_act8(x + m * k + c);
      *(lb_u4 *)(s + m * kpad + c) = v;
    }
    __syncthreads();
    xs = s;
    xstride = kpad;
  }

  // Channels past n repeat the last one: loads stay in bounds and the
  // loop stays branch-free; their results are never stored.
  const int col0 = (blockIdx.x * GROUPS + grp) * COLS;
  int col[COLS];
#pragma unroll
  for (int j = 0; j < COLS; j++) col[j] = min(col0 + j, n - 1);

  float acc[COLS][M];
#pragma unroll
  for (int j = 0; j < COLS; j++)
#pragma unroll
    for (int m = 0; m < M; m++) acc[j][m] = 0.f;

  for (int u = part * 32 + lane; u < units; u += 32 * SPLIT) {
    const int tile = u >> 3, l0 = (u & 7) * 4;
    const int kbase = tile * LB_TILE + l0;

    unsigned w[COLS][LB_WORDS][4];
#pragma unroll
    for (int j = 0; j < COLS; j++)
#pragma unroll
      for (int p = 0; p < LB_WORDS; p++) {
        lb_u4 v = lb_ld_weights(wq + col[j] * roww + tile * 32 * LB_WORDS +
                                p * 32 + l0);
        w[j][p][0] = lb_flip(p, v.x);
        w[j][p][1] = lb_flip(p, v.y);
        w[j][p][2] = lb_flip(p, v.z);
        w[j][p][3] = lb_flip(p, v.w);
      }

    float s[COLS], b[COLS];
#pragma unroll
    for (int i = 0; i < LB_CODES; i++) {
      const int kk = kbase + 32 * i;
      // Scale and offset change only where a group starts (known at
      // compile time for each code row i).
      if (lb_new_group(i)) {
        const int g = lb_group_of(tile * LB_TILE + 32 * i, ngroups);
#pragma unroll
        for (int j = 0; j < COLS; j++) {
          s[j] = lb_scale_f32(sc[col[j] * ngroups + g]);
          b[j] = lb_offset(s[j], zr, col[j] * ngroups + g);
        }
      }
      float xv[M][4];
#pragma unroll
      for (int m = 0; m < M; m++) {
        unsigned a = 0u, c = 0u;
        if (STAGE) {
          const unsigned *p = (const unsigned *)(xs + m * xstride + kk);
          a = p[0];
          c = p[1];
        } else if (kk < k && m < rows) {
          lb_ld_act4(xs + m * xstride + kk, a, c);
        }
        lb_act2_f32(a, xv[m][0], xv[m][1]);
        lb_act2_f32(c, xv[m][2], xv[m][3]);
      }
#pragma unroll
      for (int j = 0; j < COLS; j++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
          unsigned lw[LB_WORDS];
#pragma unroll
          for (int p = 0; p < LB_WORDS; p++) lw[p] = w[j][p][c];
          const float wv = fmaf(lb_q(lb_code(lw, i)), s[j], b[j]);
#pragma unroll
          for (int m = 0; m < M; m++) acc[j][m] = fmaf(xv[m][c], wv, acc[j][m]);
        }
    }
  }

#pragma unroll
  for (int j = 0; j < COLS; j++)
#pragma unroll
    for (int m = 0; m < M; m++) {
      float v = acc[j][m];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) red[warp][j][m] = v;
    }
  __syncthreads();

  // One thread per (channel, row) of the block adds the SPLIT parts.
  const int t = threadIdx.x;
  if (t < GROUPS * COLS * M) {
    const int g = t / (COLS * M), j = (t / M) % COLS, m = t % M;
    const int c = (blockIdx.x * GROUPS + g) * COLS + j;
    if (c < n && m < rows) {
      float v = 0.f;
#pragma unroll
      for (int p = 0; p < SPLIT; p++) v += red[g * SPLIT + p][j][m];
      y[m * n + c] = lb_out_from_f32(lb_epilogue(v, bias, c));
    }
  }
}
