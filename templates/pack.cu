// ---------------------------------------------------------------------------
// templates/pack.cu: packing on the GPU (lb_pack_device).  The same layout
// as the host packer (gen/lb_layout.c): a channel's row is tiles of 32
// lanes; lane l of tile t carries the codes of k = t * tile + 32 i + l,
// i = 0 .. codes - 1, as one big-endian bit stream of `words` words, the
// stream's word q stored 32 words after word q - 1.  Codes past K are zero.
//
// One thread makes one packed word: it gathers the (at most 32 / bits + 1)
// codes whose bits fall in that word, so every word is written once, whole,
// with no atomics; neighbouring threads are neighbouring lanes, so the code
// loads and the word stores coalesce.  The format is the kernel's argument
// (bits, words), not its source: one module serves every recipe.
//
// A code that does not fit `bits` is not packed silently: *bad receives the
// smallest flat index (row * k + column, 64-bit: a layer may hold 2^31
// codes and more) of such a code, which the host reports.  A code that
// straddles two words is checked by both threads.
// ---------------------------------------------------------------------------

extern "C" __global__ void lb_pack_codes(const unsigned char *__restrict__ codes,
                                         unsigned *__restrict__ packed, int n,
                                         int k, int bits, int words,
                                         unsigned long long *__restrict__ bad) {
  const int ncodes = 32 * words / bits;   // code rows a tile
  const int tile = 32 * ncodes;           // k-values a tile
  const long long rw = (long long)(k + tile - 1) / tile * 32 * words;
  const long long total = n * rw;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total;
       o += (long long)gridDim.x * blockDim.x) {
    const int j = (int)(o / rw);
    const int w = (int)(o % rw);
    const int t = w / (32 * words), q = w / 32 % words, lane = w % 32;
    // code rows whose stream bits [i bits, (i + 1) bits) meet word q's
    // [32 q, 32 q + 32)
    const int i0 = 32 * q / bits, i1 = (32 * q + 31) / bits;
    unsigned v = 0u;
    for (int i = i0; i <= i1; i++) {
      const int kk = t * tile + 32 * i + lane;
      unsigned c = 0u;
      if (kk < k) {
        const unsigned long long at = (unsigned long long)j * k + kk;
        c = codes[at];
        if (bits < 8 && (c >> bits) != 0u) atomicMin(bad, at);
      }
      // where the code's lowest bit lands, counted from the word's bottom:
      // 1 - bits .. 31 (negative: the code's low bits go to word q + 1)
      const int s = 32 * q + 32 - (i + 1) * bits;
      v |= s >= 0 ? c << s : c >> -s;
    }
    packed[o] = v;
  }
}
