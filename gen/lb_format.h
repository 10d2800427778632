/*
** lb_format.h: a recipe's weight format, derived once: where codes live
** (the layout), how they reach the tensor cores (mode, base, classes of
** code rows), how groups meet a tile (slots), and the dtypes with their
** sizes.  Kernel kinds and the prelude read this; none re-derives it from
** the recipe or re-tests the recipe's sentinels (group 0: per channel).
*/
#ifndef lb_format_h
#define lb_format_h

#include "lb_layout.h"
#include "lb_recipe.h"

/* How codes reach the tensor cores (see lb_prelude.c). */
typedef enum lb_dqmode {
  LB_DQM_F16,   /* f16 1024 + q, scales folded after the MMA */
  LB_DQM_BF16,  /* bf16 128 + q, the same */
  LB_DQM_F32    /* bf16 8-bit: dequantized in f32, rounded, then the MMA */
} lb_dqmode;

typedef struct lb_format {
  const lb_recipe *r;   /* names and lines, for the generated comments */
  lb_layout lay;
  int per_channel;      /* one group per channel */
  int group;            /* k-values per group (0 when per channel) */
  /* Group slots of a tile: how many a tile meets, and as C expressions
  ** the slot of code row i, the first row of slot j, the group of slot j
  ** in a tile inside k.  One classification serves plans and prelude. */
  int gpt;
  const char *slot, *first, *slotgroup;
  lb_dqmode mode;
  int base;             /* the A value of code 0: 1024, 128 or 0 */
  int off;              /* signed codes: 2^(bits - 1) (offset binary) */
  unsigned mask;        /* a code's bits */
  unsigned magic;       /* the base in both 16-bit halves of a pair */
  int fast;             /* width divides 16: a pair is one PRMT of halves */
  int cls16;            /* some code rows hold base + 16 q (class 1) */
  unsigned clsbits;     /* which code rows are class 1 */
  lb_dtype act, sdtype, zdtype, out;   /* zdtype: f16 without zeros */
  int ssize, zsize, asize;             /* their bytes */
  int zeros, bias;
} lb_format;

void lb_format_of(const lb_recipe *r, lb_format *f);
/* What every kind's generator and planner does first: checks the shape and
** SM count (messages name fn), then derives the format. */
lb_status lb_format_for(const lb_recipe *r, int n, int k, int sms,
                        const char *fn, lb_format *f);
/* The file part of a path (the generated sources' headers). */
const char *lb_base_name(const char *path);
/* Groups per channel for a K. */
int lb_format_groups(const lb_format *f, int k);

#endif
