/*
** lb_gvplan.h: the GEMV kind's plan for a format that lb_format_for has
** made (lb_gvplan.c); lb_plan_gemv (lb_gen.h) is the same from a recipe.
*/
#ifndef lb_gvplan_h
#define lb_gvplan_h

#include "lb_format.h"
#include "lb_gen.h"

/* The plan of m rows at n x k on sms SMs: the rules', then knobs (NULL:
** none) from `from` (for messages) replacing planned values. */
lb_status lb_gvplan(const lb_format *f, int n, int k, int sms,
                    const char *knobs, const char *from, int m,
                    lb_gemv_cfg *cfg);

#endif
