/*
** lb_format.c: derive a recipe's weight format (lb_format.h).
*/
#include <string.h>

#include "lb_err.h"
#include "lb_format.h"

static void slots_of(lb_format *f) {
  const lb_layout *lay = &f->lay;
  if (f->per_channel) {                   /* one group: the channel */
    f->gpt = 1;
    f->slot = f->first = f->slotgroup = "0";
  } else if (f->group % lay->tile == 0) { /* one group covers the tile */
    f->gpt = 1;
    f->slot = f->first = "0";
    f->slotgroup = "tile / (LB_GROUP / LB_TILE)";
  } else if (lay->tile % f->group == 0) { /* a fixed number per tile */
    f->gpt = lay->tile / f->group;
    f->slot = "32 * i / LB_GROUP";
    f->first = "j * LB_GROUP / 32";
    f->slotgroup = "tile * (LB_TILE / LB_GROUP) + j";
  } else {                                /* boundaries move: one per row */
    f->gpt = lay->codes;
    f->slot = "i";
    f->first = "j";
    f->slotgroup = "(tile * LB_TILE + 32 * j) / LB_GROUP";
  }
}

void lb_format_of(const lb_recipe *r, lb_format *f) {
  int i;
  f->r = r;
  lb_layout_of(r, &f->lay);
  f->per_channel = r->group == 0;
  f->group = r->group;
  slots_of(f);
  f->mode = r->act == LB_F16 ? LB_DQM_F16
          : r->bits <= 7     ? LB_DQM_BF16 : LB_DQM_F32;
  f->base = f->mode == LB_DQM_F16 ? 1024 : f->mode == LB_DQM_BF16 ? 128 : 0;
  f->magic = f->mode == LB_DQM_F16    ? 0x64006400u
           : f->mode == LB_DQM_BF16   ? 0x43004300u : 0u;
  f->off = r->is_signed ? 1 << (r->bits - 1) : 0;
  f->mask = (1u << f->lay.bits) - 1;
  /* Power-of-two widths never straddle a 16-bit half: interleave the
  ** halves of the two words once (PRMT), then a shift and one LOP3 give
  ** a pair. */
  f->fast = !f->lay.cross;
  /* A code at bits 4.. of a half, masked in place, is the value
  ** base + 16 q: exact while 16 q stays below the base (f16 widths up to
  ** 4, bf16 up to 2).  Codes in bits 4..7 and 12..15 of a half then need
  ** no shift of their own, or share one with the code four bits lower;
  ** the kernel keeps such code rows (class 1) in separate sums and folds
  ** them with s / 16. */
  f->cls16 = f->fast && f->mode != LB_DQM_F32 &&
             16 * f->mask < (unsigned)f->base;
  f->clsbits = 0;
  for (i = 0; f->cls16 && i < f->lay.codes; i++) {
    int lo = 32 - f->lay.bits * (i + 1);
    if ((lo % 16) % 8 >= 4) f->clsbits |= 1u << i;
  }
  f->act = r->act;
  f->sdtype = r->sdtype;
  f->zdtype = r->zeros ? r->zdtype : LB_F16;
  f->out = r->out;
  f->ssize = lb_dtype_size(f->sdtype);
  f->zsize = lb_dtype_size(f->zdtype);
  f->asize = lb_dtype_size(f->act);
  f->zeros = r->zeros;
  f->bias = r->bias;
}

int lb_format_groups(const lb_format *f, int k) {
  return f->per_channel ? 1 : k / f->group;
}

lb_status lb_format_for(const lb_recipe *r, int n, int k, int sms,
                        const char *fn, lb_format *f) {
  lb_sizes sz;
  lb_status st;
  if ((st = lb_sizes_of(r, n, k, &sz)) != LB_OK) return st;
  if (sms <= 0 || sms > 1024)
    return lb_fail(LB_EARG, "%s: sms = %d out of range", fn, sms);
  lb_format_of(r, f);
  return LB_OK;
}

const char *lb_base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}
