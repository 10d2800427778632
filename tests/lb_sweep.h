/*
** lb_sweep.h: a generated sweep of recipes covering the recipe language:
** every pair of values of its factors (bit width, group, dequant form,
** signedness, activation, scale, zero and output dtypes, bias, shape)
** appears in at least one recipe.  The rows come from a greedy pairwise
** cover with a fixed seed, so every run sweeps the same recipes.
*/
#ifndef lb_sweep_h
#define lb_sweep_h

#include <stddef.h>

/* Factors, in the order of lb_sweep_row.v[]. */
enum {
  LB_SW_BITS, LB_SW_GROUP, LB_SW_DEQUANT, LB_SW_SIGNED, LB_SW_ACT,
  LB_SW_SDTYPE, LB_SW_ZDTYPE, LB_SW_OUT, LB_SW_BIAS, LB_SW_SHAPE, LB_SW_NF
};

typedef struct lb_sweep_row {
  int v[LB_SW_NF];   /* index of each factor's value */
  int n, k;          /* the shape the row is generated for */
  char name[64];
  char text[512];    /* the recipe */
} lb_sweep_row;

/* Fills rows (at most max) and returns how many; -1 if max is too small. */
int lb_sweep(lb_sweep_row *rows, int max);

/* Checks that every pair of factor values is covered; returns the number
** of pairs missing (0 when the cover is complete). */
int lb_sweep_missing(const lb_sweep_row *rows, int n);

#endif
