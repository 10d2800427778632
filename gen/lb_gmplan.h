/*
** lb_gmplan.h: what the GEMM kind's source (lb_gemm.c) asks of its plan
** (lb_gmplan.c) beyond lb_gemm.h: the plans with the format they were made
** for, and two of the plan's numbers.
*/
#ifndef lb_gmplan_h
#define lb_gmplan_h

#include "lb_format.h"
#include "lb_gemm.h"

/* The plans of bucket at n x k on sms SMs (the rules', then the knobs of
** plan from `from`), the format f they were made for, and whether the plan
** asks for no dequantisation (plain=1, for timing).  fn names the caller
** in messages. */
lb_status lb_gmplan(const lb_recipe *r, int n, int k, int bucket, int sms,
                    const char *fn, const char *plan, const char *from,
                    lb_format *f, lb_gemm_plans *p, int *plain);
/* The M a bucket's source names in its "Regenerate with" line. */
int lb_gemm_bucket_m(int b);
/* KB of shared memory a block of plan c may take on a 160 KB part (sm_90a's
** 256-row tiles up to 227), what its source is planned within. */
int lb_gemm_hi_kb(const lb_gemm_cfg *c);

#endif
