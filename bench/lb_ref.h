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

/* One layer's worth of host data for (recipe, m, n, k). */
typedef struct lb_case {
  const lb_recipe *r;
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
/* y64[m][n] = x * W^T (+ bias), in double. */
void lb_case_reference(const lb_case *c, double *y64);

/* Error of y (stored as the recipe's output type) against y64:
** ||y - ref|| / ||ref||; *bad counts elements that are not finite. */
double lb_rel_error(const lb_case *c, const void *y, const double *y64,
                    size_t *bad);
/* The largest relative error the accumulator and output type justify. */
double lb_tolerance(const lb_recipe *r);

#endif
