/*
** lb_tune.h: the tuning table (lowbit.h describes it to users): per
** device, the GEMM plans `lowbit tune` measured fastest.
*/
#ifndef lb_tune_h
#define lb_tune_h

#include <stddef.h>
#include <stdint.h>

#include "lowbit.h"

/* Whether c's device has a table to read (a file, and LOWBIT_TUNE not 0):
** without one, ops need not hash their sources for keys. */
int lb_tune_have(const lb_ctx *c);

/* The plans the table of c's device holds for keys[0..nkeys-1]: "" where
** it holds none, and for all when there is no table (or no cache
** directory), or with LOWBIT_TUNE=0; name receives the table's file name
** where one is found.  LB_EIO, naming the file and line, for a table that
** does not parse.  Messages name fn. */
lb_status lb_tune_find(const lb_ctx *c, const uint64_t *keys, int nkeys,
                       char (*plans)[LB_PLAN_LEN], char *name, size_t len,
                       const char *fn);

/* The same for the device that devkey names (lb_ctx_devkey), without a
** context: for tests on machines with no GPU. */
lb_status lb_tune_find_dev(const char *devkey, const uint64_t *keys,
                           int nkeys, char (*plans)[LB_PLAN_LEN], char *name,
                           size_t len, const char *fn);
/* lb_tune_save for the device devkey names, with sms SMs. */
lb_status lb_tune_save_dev(const char *devkey, int sms, const lb_recipe *r,
                           int n, int k, int m, const char *plan, double us,
                           double us_rules);

#endif
