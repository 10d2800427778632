/*
** lb_knob.h: plans in words ("wn=4,st=3"), as LOWBIT_GEMM, LOWBIT_PLAN,
** lb_generate_plan and the tuning table spell them: each kernel kind lists
** its knobs, and this parses a plan against that list, strictly.
*/
#ifndef lb_knob_h
#define lb_knob_h

#include "lb_buf.h"
#include "lowbit.h"

typedef struct lb_knob {
  const char *key;
  int lo, hi;    /* the range of its values */
  int pow2;      /* a power of two (or 0 where lo is 0) */
} lb_knob;

/* v[i]: knob i's value in plan, -1 where not given (plan NULL or "":
** none).  An unknown key, a value that is not all digits or out of range
** (or not a power of two where one is asked), a key given twice or a
** trailing comma is LB_EARG: "FROM: plan "PLAN": ...".  Nothing is
** skipped, so a plan that says something is what is built. */
lb_status lb_knobs_parse(const char *plan, const char *from,
                         const lb_knob *knob, int n, int *v);

/* The source's comment naming plan and where it came from (nothing for no
** plan).  An API function's name (lb_generate_plan, lb_op_set_plan) reads
** "the caller": one text for both, so that what lowbit tune compiles ahead
** is the source its op then loads. */
void lb_plan_comment(lb_buf *b, const char *plan, const char *from);

#endif
