/*
** lb_gen.h: the generator: recipe + shape class -> CUDA source.
*/
#ifndef lb_gen_h
#define lb_gen_h

#include "lb_recipe.h"

#define LB_WARPS 8       /* warps per GEMV block, at most */
#define LB_RING_KB 88    /* shared-memory ring per block (sm_86 opt-in: 99) */
#ifndef LB_MAX_STAGES
#define LB_MAX_STAGES 2  /* ring depth limit: measured fastest on H100 (a build-time knob) */
#endif
#if LB_MAX_STAGES < 2
#error "LB_MAX_STAGES must be at least 2: the ring needs a stage to fill while one is read"
#endif
#define LB_MAX_M 8       /* activation rows the GEMV takes (mma n = 8) */

/* Launch shape of the GEMV kernel.  Decided from (recipe, n, k, sms)
** alone and written into the source, so the same inputs give the same
** bytes. */
typedef struct lb_gemv_cfg {
  int warps;    /* warps per block */
  int split;    /* warps sharing one 16-channel group's tiles */
  int minb;     /* blocks per SM asked of ptxas (caps registers) */
  int stages;   /* shared-memory ring depth: tiles in flight + 1 */
  int grid;     /* blocks */
  int smem;     /* dynamic shared memory bytes */
} lb_gemv_cfg;

void lb_gemv_plan(const lb_recipe *r, int n, int k, int sms,
                  lb_gemv_cfg *cfg);

#define LB_KERNEL "lb_gemv"

extern const char lb_tpl_gemv[];   /* templates/gemv.cu, embedded */

#endif
