/*
** lb_nvrtc.h: CUDA source -> CUBIN (or PTX) with NVRTC, through the disk
** cache.
*/
#ifndef lb_nvrtc_h
#define lb_nvrtc_h

#include <stddef.h>
#include <stdint.h>

#include "lowbit.h"

typedef struct lb_binary {
  unsigned char *data;   /* CUBIN, or NUL-terminated PTX */
  size_t size;
  int ptx;               /* 1: PTX for the driver to finish */
  char *log;             /* NVRTC log, with ptxas' resource lines */
} lb_binary;

void lb_binary_free(lb_binary *b);

/* Compiles src for sm_<arch> (PTX for the newest known arch below it when
** NVRTC does not know it).  Looks in the disk cache first; *cache is set
** to 1 on a disk hit. */
lb_status lb_obtain(const char *src, int arch, lb_binary *out, int *cache,
                    double *seconds);

/* Registers and spill-store bytes that ptxas reported for kernel `name`
** (-1 when the log does not say). */
void lb_log_resources(const char *log, const char *name, int *regs,
                      int *spill);
int lb_log_warnings(const char *log);

double lb_now(void);
void lb_nvrtc_version(int *major, int *minor);

#endif
