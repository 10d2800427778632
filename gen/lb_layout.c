/*
** lb_layout.c: the packing description and the host packer built on it.
*/
#include <string.h>

#include "lb_err.h"
#include "lb_layout.h"

static int gcd(int a, int b) {
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

void lb_layout_of(const lb_recipe *r, lb_layout *lay) {
  lay->bits = r->bits;
  lay->words = r->bits / gcd(r->bits, 32);
  lay->codes = 32 * lay->words / r->bits;
  lay->tile = 32 * lay->codes;
  lay->cross = lay->words > 1;
}

lb_codepos lb_code_pos(const lb_layout *lay, int i) {
  lb_codepos p;
  int bit = i * lay->bits;
  p.word = bit / 32;
  p.off = bit % 32;
  return p;
}

int lb_kpad(const lb_layout *lay, int k) {
  return (k + lay->tile - 1) / lay->tile * lay->tile;
}

size_t lb_row_words(const lb_layout *lay, int k) {
  return (size_t)(lb_kpad(lay, k) / lay->tile) * 32 * (size_t)lay->words;
}

static lb_status check(const lb_recipe *r, int n, int k, const char *fn) {
  if (r == NULL) return lb_fail(LB_EARG, "%s: recipe is NULL", fn);
  if (n <= 0 || k <= 0)
    return lb_fail(LB_EARG, "%s: n = %d, k = %d must be positive", fn, n, k);
  if (k % 32 != 0)
    return lb_fail(LB_EARG, "%s: k = %d must be a multiple of 32", fn, k);
  if (r->group && k % r->group != 0)
    return lb_fail(LB_EARG, "%s: k = %d must be a multiple of the recipe's "
                   "group size %d (%s)", fn, k, r->group, r->name);
  /* kernels index with 32-bit integers */
  if ((size_t)n * (size_t)k >= ((size_t)1 << 31) || k > (1 << 26))
    return lb_fail(LB_EARG, "%s: n = %d, k = %d is too large (n * k must be "
                   "below 2^31, k at most 2^26)", fn, n, k);
  return LB_OK;
}

lb_status lb_sizes_of(const lb_recipe *r, int n, int k, lb_sizes *out) {
  lb_layout lay;
  lb_status st = check(r, n, k, "lb_sizes_of");
  if (st != LB_OK) return st;
  if (out == NULL) return lb_fail(LB_EARG, "lb_sizes_of: out is NULL");
  lb_layout_of(r, &lay);
  out->kpad = lb_kpad(&lay, k);
  out->groups = r->group ? k / r->group : 1;
  out->packed = (size_t)n * lb_row_words(&lay, k) * 4;
  out->scales = (size_t)n * (size_t)out->groups * lb_dtype_size(r->sdtype);
  out->zeros = r->zeros ? (size_t)n * (size_t)out->groups *
                              lb_dtype_size(r->zdtype)
                        : 0;
  return LB_OK;
}

/* Word and shift of k-value kk within one channel's row. */
static void locate(const lb_layout *lay, int kk, size_t *w, int *off) {
  int t = kk / lay->tile, in = kk % lay->tile;
  int lane = in % 32, i = in / 32;
  lb_codepos p = lb_code_pos(lay, i);
  *w = (size_t)t * 32 * lay->words + (size_t)p.word * 32 + lane;
  *off = p.off;
}

/* The lane stream is big-endian across its words, which are 32 words
** apart in memory: the code's bits at stream offset off.. go to word w's
** bits counted from the top, spilling into the next word of the lane. */
static void put(uint32_t *row, size_t w, int off, int bits, uint32_t code) {
  int first = bits < 32 - off ? bits : 32 - off;
  int rest = bits - first;
  row[w] |= (code >> rest) << (32 - off - first);
  if (rest) row[w + 32] |= (code & ((1u << rest) - 1)) << (32 - rest);
}

static uint32_t get(const uint32_t *row, size_t w, int off, int bits) {
  int first = bits < 32 - off ? bits : 32 - off;
  int rest = bits - first;
  uint32_t v = (row[w] >> (32 - off - first)) & ((1u << first) - 1);
  if (rest) v = (v << rest) | (row[w + 32] >> (32 - rest));
  return v;
}

lb_status lb_pack(const lb_recipe *r, int n, int k, const uint8_t *codes,
                  uint32_t *packed) {
  lb_layout lay;
  size_t rw;
  int j, kk;
  lb_status st = check(r, n, k, "lb_pack");
  if (st != LB_OK) return st;
  if (codes == NULL || packed == NULL)
    return lb_fail(LB_EARG, "lb_pack: codes or packed is NULL");
  lb_layout_of(r, &lay);
  rw = lb_row_words(&lay, k);
  memset(packed, 0, (size_t)n * rw * 4);
  for (j = 0; j < n; j++) {
    uint32_t *row = packed + (size_t)j * rw;
    const uint8_t *c = codes + (size_t)j * (size_t)k;
    for (kk = 0; kk < k; kk++) {
      size_t w;
      int off;
      if (lay.bits < 8 && (c[kk] >> lay.bits) != 0)
        return lb_fail(LB_EARG, "lb_pack: code %u at [%d][%d] does not fit "
                       "in %d bits", c[kk], j, kk, lay.bits);
      locate(&lay, kk, &w, &off);
      put(row, w, off, lay.bits, c[kk]);
    }
  }
  return LB_OK;
}

lb_status lb_unpack(const lb_recipe *r, int n, int k, const uint32_t *packed,
                    uint8_t *codes) {
  lb_layout lay;
  size_t rw;
  int j, kk;
  lb_status st = check(r, n, k, "lb_unpack");
  if (st != LB_OK) return st;
  if (codes == NULL || packed == NULL)
    return lb_fail(LB_EARG, "lb_unpack: codes or packed is NULL");
  lb_layout_of(r, &lay);
  rw = lb_row_words(&lay, k);
  for (j = 0; j < n; j++) {
    const uint32_t *row = packed + (size_t)j * rw;
    for (kk = 0; kk < k; kk++) {
      size_t w;
      int off;
      locate(&lay, kk, &w, &off);
      codes[(size_t)j * (size_t)k + kk] = (uint8_t)get(row, w, off, lay.bits);
    }
  }
  return LB_OK;
}
