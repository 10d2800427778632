/*
** lb_gen.h: the generator: recipe + shape class -> CUDA source.
*/
#ifndef lb_gen_h
#define lb_gen_h

#include "lb_recipe.h"

#define LB_WARPS 8       /* warps per GEMV block */
#define LB_MAX_M 8       /* rows the GEMV kernels take */
#define LB_NBUCKET 4     /* kernels per module: M buckets 1, 2, 4, 8 */

/* Bucket b holds m = lb_bucket_m(b) rows at most; rows between buckets
** run in the next larger one. */
int lb_bucket_m(int b);
int lb_bucket_of(int m);

/* Launch shape of the GEMV kernel for m rows.  Everything here is decided
** from (recipe, n, k, sms, m) alone, and written into the source, so the
** same inputs give the same bytes. */
typedef struct lb_gemv_cfg {
  int cols;     /* output channels per column group */
  int split;    /* warps sharing one group's K range */
  int stage;    /* activations staged in shared memory */
  int grid;     /* blocks */
  int smem;     /* dynamic shared memory bytes */
} lb_gemv_cfg;

void lb_gemv_plan(const lb_recipe *r, int n, int k, int sms, int m,
                  lb_gemv_cfg *cfg);

/* Name of the kernel of bucket b: "lb_gemv_m<M>". */
void lb_kernel_name(int b, char *buf, int len);

extern const char lb_tpl_gemv[];   /* templates/gemv.cu, embedded */

#endif
