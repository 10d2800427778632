/*
** lb_sweep.c: the pairwise recipe sweep (see lb_sweep.h).
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lb_sweep.h"

/* Values of each factor; a row holds indices into these. */
static const int bits_v[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const int group_v[] = {32, 64, 128, 256, 1024, 0};   /* 0: channel */
static const char *const dequant_v[] = {"(q - z) * s", "q * s + z", "q * s"};
static const char *const dtype_v[] = {"f16", "bf16", "f32"};
static const char *const act_v[] = {"f16", "bf16"};
/* Shapes (n, k): square, narrow (the split-K case), wide K with a large
** N (scales too many to keep resident), one channel group. */
static const int shape_n[] = {4096, 48, 8192, 16};
static const int shape_k[] = {4096, 8192, 16384, 16384};

static const int count[LB_SW_NF] = {8, 6, 3, 2, 2, 3, 3, 3, 2, 4};

#define DQ_MUL 2   /* index of "q * s": no zeros */

/* Factor f of a row matters: zero dtypes only where there are zeros. */
static int matters(const int *v, int f) {
  return f != LB_SW_ZDTYPE || v[LB_SW_DEQUANT] != DQ_MUL;
}

/* Pairs (f1, a, f2, b), f1 < f2, numbered densely for a coverage map. */
static int pair_base[LB_SW_NF][LB_SW_NF];
static int npairs;

static void number_pairs(void) {
  int f1, f2;
  npairs = 0;
  for (f1 = 0; f1 < LB_SW_NF; f1++)
    for (f2 = f1 + 1; f2 < LB_SW_NF; f2++) {
      pair_base[f1][f2] = npairs;
      npairs += count[f1] * count[f2];
    }
}

static int pair_id(int f1, int a, int f2, int b) {
  return pair_base[f1][f2] + a * count[f2] + b;
}

/* A pair that no row can cover: zero dtypes with "q * s". */
static int impossible(int f1, int a, int f2, int b) {
  return (f1 == LB_SW_DEQUANT && f2 == LB_SW_ZDTYPE && a == DQ_MUL) ||
         (f2 == LB_SW_DEQUANT && f1 == LB_SW_ZDTYPE && b == DQ_MUL);
}

static int gain(const int *v, const unsigned char *covered) {
  int f1, f2, n = 0;
  for (f1 = 0; f1 < LB_SW_NF; f1++)
    for (f2 = f1 + 1; f2 < LB_SW_NF; f2++)
      if (matters(v, f1) && matters(v, f2) &&
          !covered[pair_id(f1, v[f1], f2, v[f2])])
        n++;
  return n;
}

static void cover(const int *v, unsigned char *covered) {
  int f1, f2;
  for (f1 = 0; f1 < LB_SW_NF; f1++)
    for (f2 = f1 + 1; f2 < LB_SW_NF; f2++)
      if (matters(v, f1) && matters(v, f2))
        covered[pair_id(f1, v[f1], f2, v[f2])] = 1;
}

static uint64_t rng = 0x10b17u;   /* fixed seed: the same sweep every run */

static int pick(int n) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((rng >> 33) % (uint64_t)n);
}

static void write_row(lb_sweep_row *r) {
  const int *v = r->v;
  int g = group_v[v[LB_SW_GROUP]], zeros = v[LB_SW_DEQUANT] != DQ_MUL;
  char group[16];
  if (g)
    snprintf(group, sizeof group, "%d", g);
  else
    snprintf(group, sizeof group, "\"channel\"");
  r->n = shape_n[v[LB_SW_SHAPE]];
  r->k = shape_k[v[LB_SW_SHAPE]];
  snprintf(r->name, sizeof r->name, "sw_w%d%s_g%s_dq%d_%s_s%s_z%s_o%s%s",
           bits_v[v[LB_SW_BITS]], v[LB_SW_SIGNED] ? "s" : "u",
           g ? group : "ch", v[LB_SW_DEQUANT], act_v[v[LB_SW_ACT]],
           dtype_v[v[LB_SW_SDTYPE]],
           zeros ? dtype_v[v[LB_SW_ZDTYPE]] : "-", dtype_v[v[LB_SW_OUT]],
           v[LB_SW_BIAS] ? "_bias" : "");
  snprintf(r->text, sizeof r->text,
           "name \"%s\"\n"
           "activations \"%s\"\n"
           "weights { bits = %d, signed = %s }\n"
           "scales { group = %s, dtype = \"%s\" }\n"
           "%s%s%s"
           "dequant \"%s\"\n"
           "output \"%s\"\n"
           "epilogue { bias = %s }\n",
           r->name, act_v[v[LB_SW_ACT]], bits_v[v[LB_SW_BITS]],
           v[LB_SW_SIGNED] ? "true" : "false", group,
           dtype_v[v[LB_SW_SDTYPE]], zeros ? "zeros { dtype = \"" : "",
           zeros ? dtype_v[v[LB_SW_ZDTYPE]] : "", zeros ? "\" }\n" : "",
           dequant_v[v[LB_SW_DEQUANT]], dtype_v[v[LB_SW_OUT]],
           v[LB_SW_BIAS] ? "true" : "false");
}

/* Greedy cover: for the first uncovered pair, the best of 64 random rows
** holding it; repeat until every pair is covered. */
int lb_sweep(lb_sweep_row *rows, int max) {
  static unsigned char covered[4096];
  int n = 0, f1, f2, a, b;
  number_pairs();
  if (npairs > (int)sizeof covered) return -1;
  memset(covered, 0, sizeof covered);
  for (f1 = 0; f1 < LB_SW_NF; f1++)
    for (f2 = f1 + 1; f2 < LB_SW_NF; f2++)
      for (a = 0; a < count[f1]; a++)
        for (b = 0; b < count[f2]; b++)
          if (impossible(f1, a, f2, b)) covered[pair_id(f1, a, f2, b)] = 1;
  rng = 0x10b17u;
  for (;;) {
    int best[LB_SW_NF], v[LB_SW_NF], bestgain = -1, c, f, id = 0;
    while (id < npairs && covered[id]) id++;
    if (id == npairs) break;
    if (n == max) return -1;
    /* decode the pair */
    for (f1 = 0; f1 < LB_SW_NF; f1++)
      for (f2 = f1 + 1; f2 < LB_SW_NF; f2++)
        if (id >= pair_base[f1][f2] &&
            id < pair_base[f1][f2] + count[f1] * count[f2])
          goto found;
  found:
    a = (id - pair_base[f1][f2]) / count[f2];
    b = (id - pair_base[f1][f2]) % count[f2];
    for (c = 0; c < 64; c++) {
      int g;
      for (f = 0; f < LB_SW_NF; f++) v[f] = pick(count[f]);
      v[f1] = a;
      v[f2] = b;
      /* a zero dtype pair needs zeros */
      if ((f1 == LB_SW_ZDTYPE || f2 == LB_SW_ZDTYPE) &&
          v[LB_SW_DEQUANT] == DQ_MUL)
        v[LB_SW_DEQUANT] = pick(2);
      if (!matters(v, LB_SW_ZDTYPE)) v[LB_SW_ZDTYPE] = 0;
      g = gain(v, covered);
      if (g > bestgain) {
        bestgain = g;
        memcpy(best, v, sizeof best);
      }
    }
    cover(best, covered);
    memcpy(rows[n].v, best, sizeof best);
    write_row(&rows[n]);
    n++;
  }
  return n;
}

int lb_sweep_missing(const lb_sweep_row *rows, int n) {
  static unsigned char covered[4096];
  int f1, f2, a, b, i, missing = 0;
  number_pairs();
  memset(covered, 0, sizeof covered);
  for (i = 0; i < n; i++) cover(rows[i].v, covered);
  for (f1 = 0; f1 < LB_SW_NF; f1++)
    for (f2 = f1 + 1; f2 < LB_SW_NF; f2++)
      for (a = 0; a < count[f1]; a++)
        for (b = 0; b < count[f2]; b++)
          if (!impossible(f1, a, f2, b) && !covered[pair_id(f1, a, f2, b)])
            missing++;
  return missing;
}
