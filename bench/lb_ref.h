/*
** lb_ref.h: host-side test data and the float64 reference.
**
** Used by the tests, the `lowbit run` command and the benchmark, so every
** check compares against the same reference: the dequantized weights
** computed in double from the very codes, scales and zeros that were
** packed and uploaded.
*/
#ifndef lb_ref_h
#define lb_ref_h

#include <stddef.h>
#include <stdint.h>

#include "lb_recipe.h"

uint16_t lb_f32_to_f16(float f);
float lb_f16_to_f32(uint16_t h);
uint16_t lb_f32_to_bf16(float f);
float lb_bf16_to_f32(uint16_t h);
/* Stores f as dtype t at p[i]; reads it back. */
void lb_store(lb_dtype t, void *p, size_t i, double f);
double lb_load(lb_dtype t, const void *p, size_t i);

uint64_t lb_rand(uint64_t *s);
double lb_uniform(uint64_t *s, double lo, double hi);

/* What the data and the reference need of a recipe, read from its public
** description (lb_recipe_describe), not from the generator's struct: the
** check stands apart from the code it checks. */
typedef struct lb_fmt {
  int bits, is_signed;
  int group;            /* 0: one scale per channel */
  int zeros, bias;      /* the recipe has zeros, a bias */
  lb_dtype act, scale, zero, out;
  lb_dequant dequant;
} lb_fmt;

/* r's lb_fmt; 0 (message in lb_errmsg()) where its description names a
** dtype or dequant form this does not know. */
int lb_fmt_of(const lb_recipe *r, lb_fmt *f);

/* One layer's worth of host data for (recipe, m, n, k). */
typedef struct lb_case {
  const lb_recipe *r;
  lb_fmt f;
  int m, n, k, groups;
  uint8_t *codes;       /* [n][k] */
  uint32_t *packed;
  void *scales, *zeros; /* [n][groups] */
  void *bias;           /* [n] or NULL */
  void *x;              /* [m][k] activations */
  size_t packed_bytes, scale_bytes, zero_bytes, x_bytes, y_bytes, bias_bytes;
} lb_case;

/* Fresh random data; packs the codes.  Returns 0 on failure (message in
** lb_errmsg()). */
int lb_case_make(lb_case *c, const lb_recipe *r, int m, int n, int k,
                 uint64_t seed);
void lb_case_free(lb_case *c);
/* Dequantized weight [j][kk] in double. */
double lb_case_weight(const lb_case *c, int j, int kk);
/* y64[m][n] = x * W^T (+ bias), in double; mag64 (may be NULL) gets
** sqrt(sum_k (x[m][k] |W|[n][k])^2), with |W| the size of the terms that
** make each weight (|q s| + |offset|): the scale of the rounding error that
** 16-bit weights put into each output.  Returns 0 when it could not run
** (no memory; message in lb_errmsg()): y64 is then not written. */
int lb_case_reference(const lb_case *c, double *y64, double *mag64);
/* dense[n][k] = every dequantized weight rounded to the activation type
** (what the benchmark's cuBLAS multiplies), channels shared among the
** machine's cores (8192 x 8192 took 1.2 s on one core). */
void lb_case_dense(const lb_case *c, void *dense);

/* Error of y (stored as the recipe's output type) against y64:
** ||y - ref|| / ||ref||; *bad counts elements that are not finite. */
double lb_rel_error(const lb_case *c, const void *y, const double *y64,
                    size_t *bad);

/* Whether y is as close to the reference as the arithmetic allows:
** every element finite and
**   ||y - ref|| <= 2 u_out ||ref|| + 4 u_w ||mag||
** with u the unit roundoff of the output type and of the activation
** type: the output is rounded once (at most u_out each).  Where a kernel
** rounds weights to the activation type (bf16 with 8-bit codes) each
** weight errs by up to u_w |terms|, independently, so the errors add as
** the square root of the sum of squares; elsewhere the weights are exact
** (codes and activations multiply exactly in f32) and the term only
** leaves room for f32 accumulation, which adds far less.  *err gets the
** left side over the right (pass: <= 1). */
int lb_check(const lb_case *c, const void *y, const double *y64,
             const double *mag64, double *err, size_t *bad);

#endif
