/*
** lb_err.c: the per-thread error message.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lb_err.h"

/* (room for a recipe file name of 4095 bytes and its message) */
static _Thread_local char errmsg[8192];

lb_status lb_fail(lb_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errmsg, sizeof errmsg, fmt, ap);
  va_end(ap);
  return st;
}

void lb_clear(void) { errmsg[0] = '\0'; }

const char *lb_errmsg(void) { return errmsg; }

const char *lb_status_name(lb_status s) {
  switch (s) {
    case LB_OK: return "ok";
    case LB_EARG: return "bad argument";
    case LB_ERECIPE: return "bad recipe";
    case LB_EMEM: return "out of memory";
    case LB_EIO: return "i/o error";
    case LB_ECOMPILE: return "compile error";
    case LB_ECUDA: return "CUDA error";
    case LB_ENODEV: return "no CUDA device";
    case LB_EUNSUP: return "unsupported";
  }
  return "unknown status";
}

void lb_free(void *p) { free(p); }

#ifndef LB_VERSION
#define LB_VERSION "0.1.0"
#endif

const char *lb_version(void) { return LB_VERSION; }
