/*
** lb_ctx.h: what the runtime's other files need of a context (lb_op.c
** keeps its struct): making it current, its driver table, and kernels of
** a source compiled and loaded once per context.
*/
#ifndef lb_ctx_h
#define lb_ctx_h

#include "lb_cuda.h"

/* The context made current for a scope, and what to restore after. */
typedef struct lb_scope {
  const lb_cu *cu;
  int pushed;
} lb_scope;

lb_status lb_ctx_enter(lb_ctx *c, lb_scope *s, const char *where);
void lb_ctx_leave(lb_scope *s);
const lb_cu *lb_ctx_cu(const lb_ctx *c);
int lb_ctx_sms(const lb_ctx *c);
/* The device key of the tuning table: "NAME, N SMs, sm_XY, driver V,
** nvrtc A.B" */
const char *lb_ctx_devkey(const lb_ctx *c);
/* Kernel `name` of src (memory cache, else disk cache or NVRTC); the
** context must be current.  Messages name `where`. */
lb_status lb_ctx_kernel(lb_ctx *c, const char *src, const char *name,
                        CUfunction *fn, const char *where);

#endif
