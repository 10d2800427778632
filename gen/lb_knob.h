/*
** lb_knob.h: plans in words ("wn=4,st=3"), as LOWBIT_GEMM, LOWBIT_PLAN,
** lb_generate_plan and the tuning table spell them: each kernel kind lists
** its knobs in one table (keys, ranges, the values lowbit tune tries), and
** this parses a plan against that table, strictly, writes one, and lists
** the candidates one knob away from a plan.
*/
#ifndef lb_knob_h
#define lb_knob_h

#include <stddef.h>

#include "lb_buf.h"
#include "lowbit.h"

#define LB_KNOB_TRIES 5

typedef struct lb_knob {
  const char *key;
  int lo, hi;    /* the range of its values */
  int pow2;      /* a power of two (or 0 where lo is 0) */
  int ntry;      /* the values lowbit tune tries, one knob at a time */
  int tries[LB_KNOB_TRIES];
} lb_knob;

/* A kind's plan for knobs in words: its part's configuration (size bytes,
** compared whole: two plans that come out the same are one candidate)
** into cfg and every knob's value as built into v; not LB_OK where the
** plan does not fit. */
typedef lb_status (*lb_knob_plan)(void *ctx, const char *plan, void *cfg,
                                  int *v);

/* v[i]: knob i's value in plan, -1 where not given (plan NULL or "":
** none).  An unknown key, a value that is not all digits or out of range
** (or not a power of two where one is asked), a key given twice or a
** trailing comma is LB_EARG: "FROM: plan "PLAN": ...".  Nothing is
** skipped, so a plan that says something is what is built. */
lb_status lb_knobs_parse(const char *plan, const char *from,
                         const lb_knob *knob, int n, int *v);

/* "key=value,..." for the knobs whose v[i] >= 0, in the table's order
** (cut at len - 1 characters: lb_knobs_widest bounds what it writes). */
void lb_knobs_text(const lb_knob *knob, int n, const int *v, char *buf,
                   size_t len);
/* The characters of the longest plan the table can write: every knob,
** each at its widest value.  LB_PLAN_LEN must exceed it (test_plan). */
size_t lb_knobs_widest(const lb_knob *knob, int n);

/* base's plan (NULL: the rules'), every knob named, into out[0]; then the
** plans one knob away from it (each knob's tries) that fit and come out
** different, as built; at most max, *count of them. */
lb_status lb_knobs_candidates(const lb_knob *knob, int n, lb_knob_plan plan,
                              void *ctx, size_t size, const char *base,
                              char (*out)[LB_PLAN_LEN], int max, int *count);

/* The source's comment naming plan and where it came from (nothing for no
** plan).  An API function's name (lb_generate_plan, lb_op_set_plan) reads
** "the caller": one text for both, so that what lowbit tune compiles ahead
** is the source its op then loads. */
void lb_plan_comment(lb_buf *b, const char *plan, const char *from);

#endif
