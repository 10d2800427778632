/*
** lb_err.h: the per-thread error message behind lb_errmsg().
*/
#ifndef lb_err_h
#define lb_err_h

#include "lowbit.h"

/* Formats the message, keeps it for lb_errmsg() and returns st. */
lb_status lb_fail(lb_status st, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
void lb_clear(void);

#endif
