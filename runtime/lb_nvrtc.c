/*
** lb_nvrtc.c: run NVRTC on generated source.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

#include "lb_cache.h"
#include "lb_err.h"
#include "lb_hash.h"
#include "lb_nvrtc.h"

double lb_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void lb_nvrtc_version(int *major, int *minor) {
  if (nvrtcVersion(major, minor) != NVRTC_SUCCESS) *major = *minor = 0;
}

void lb_binary_free(lb_binary *b) {
  free(b->data);
  free(b->log);
  memset(b, 0, sizeof *b);
}

/* The newest arch NVRTC knows that is not newer than want; 0 if none. */
static int pick_arch(int want, int *exact) {
  int n = 0, i, best = 0;
  int *archs;
  *exact = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return 0;
  archs = malloc(sizeof(int) * (size_t)n);
  if (archs == NULL) return 0;
  if (nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS)
    for (i = 0; i < n; i++) {
      if (archs[i] == want) *exact = 1;
      if (archs[i] <= want && archs[i] > best) best = archs[i];
    }
  free(archs);
  return best;
}

#define NOPTS 5

/* -split-compile=0: the kernels of a program (a GEMV has two entry
** points) are optimized on as many threads as there are CPUs, which
** about halves the wall time of a compile on two cores.  Not for sources
** with wgmma (the GEMM's, whose second kernel is a small sum): split,
** NVRTC 13.0 writes ptxas's advisories on them ("(C7519) warpgroup.arrive
** is injected", C7510, C7511) to the process's stderr instead of the log,
** so a library that never prints printed them, and lb_log_warnings could
** not count them.  And split, ptxas gave the GEMM of codes that cross
** words more registers and slower code (a16w3_g128 from 128 rows, sm_90a:
** 231 registers against 210): H200, 8192 x 8192, M = 64 / 128 / 1024, us,
** split -> not, a16w3_g128 41.8 / 62.6 / 394.7 -> 35.8 / 54.2 / 333.2,
** a16w5_g64 71.0 / 76.2 / 505.1 -> 71.1 / 66.1 / 422.7, a16w6_g128 47.0 /
** 62.4 / 419.5 -> 44.2 / 54.7 / 346.0, a16w7_g32 98.7 / 89.3 / 590.3 ->
** 97.9 / 79.0 / 522.3 (lowbit bench, 2026-11-29, one call, two repeats
** within 1%); 1-, 2-, 4- and 8-bit codes get the same registers either
** way, and so does every GEMV checked (2, 3, 4 and 8 bits).  Not timed:
** sm_80..89 (the same sources, unsplit too) and the GEMM sources with no
** wgmma plan (up to 32 rows, but 8-bit codes), still split; in both, 3-,
** 5- and 7-bit kernels' registers differ by 2 at most either way.
** --no-cache (NVRTC 12.9 and newer): NVRTC keeps a cache of its own in
** the driver's compute cache wherever a driver is, and answers a compile
** it has seen from it, without ptxas's report of registers and spills
** (H200, 2026-11-28: the sweep's compiles took 0.02-0.08 s, one came back
** with no report).  lowbit caches binaries itself (lb_cache), log
** included; a second cache underneath only hides what a compile cost and
** what it said.  major.minor: NVRTC's version.  Returns the options'
** count. */
static int options(int arch, int ptx, int major, int minor, int split,
                   char arg[64], const char *opts[NOPTS]) {
  int n = 3;
  /* sm_90 as sm_90a: wgmma (the GEMM's sm_90 plan) exists only there;
  ** such code runs on sm_90 parts alone, the only ones it is made for */
  snprintf(arg, 64, "--gpu-architecture=%s_%d%s", ptx ? "compute" : "sm", arch,
           arch == 90 ? "a" : "");
  opts[0] = arg;
  opts[1] = "-std=c++17";
  opts[2] = "--ptxas-options=-v";
  if (split) opts[n++] = "-split-compile=0";
  if (major > 12 || (major == 12 && minor >= 9)) opts[n++] = "--no-cache";
  return n;
}

/* opts[0]: the architecture, which messages name. */
static lb_status compile(const char *src, const char *const opts[NOPTS], int no,
                         int ptx, lb_binary *out) {
  nvrtcProgram prog;
  nvrtcResult rc;
  size_t n = 0;
  lb_status st = LB_OK;
  rc = nvrtcCreateProgram(&prog, src, "lowbit.cu", 0, NULL, NULL);
  if (rc != NVRTC_SUCCESS)
    return lb_fail(LB_ECOMPILE, "nvrtcCreateProgram: %s",
                   nvrtcGetErrorString(rc));
  rc = nvrtcCompileProgram(prog, no, opts);
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0 &&
      (out->log = malloc(n + 1)) != NULL) {
    nvrtcGetProgramLog(prog, out->log);
    out->log[n] = '\0';
  }
  if (rc != NVRTC_SUCCESS) {
    st = lb_fail(LB_ECOMPILE, "NVRTC (%s): %s\n%s", opts[0],
                 nvrtcGetErrorString(rc), out->log ? out->log : "");
    goto done;
  }
  rc = ptx ? nvrtcGetPTXSize(prog, &n) : nvrtcGetCUBINSize(prog, &n);
  if (rc != NVRTC_SUCCESS || (out->data = malloc(n + 1)) == NULL) {
    st = lb_fail(LB_ECOMPILE, "NVRTC: cannot fetch the binary");
    goto done;
  }
  rc = ptx ? nvrtcGetPTX(prog, (char *)out->data)
           : nvrtcGetCUBIN(prog, (char *)out->data);
  if (rc != NVRTC_SUCCESS) {
    st = lb_fail(LB_ECOMPILE, "NVRTC: %s", nvrtcGetErrorString(rc));
    goto done;
  }
  out->data[n] = 0;
  out->size = n;
  out->ptx = ptx;
done:
  nvrtcDestroyProgram(&prog);
  if (st != LB_OK) lb_binary_free(out);
  return st;
}

/* The cache key: the source, then the NVRTC version and the options,
** each after a NUL (which no source contains). */
static char *cache_key(const char *src, int major, int minor,
                       const char *const opts[NOPTS], int no, size_t *len) {
  int i;
  char ver[48];
  const char *part[NOPTS + 2];
  size_t n = 0, at = 0;
  char *k;
  snprintf(ver, sizeof ver, "nvrtc %d.%d", major, minor);
  part[0] = src;
  part[1] = ver;
  for (i = 0; i < no; i++) part[i + 2] = opts[i];
  for (i = 0; i < no + 2; i++) n += strlen(part[i]) + 1;
  if ((k = malloc(n)) == NULL) return NULL;
  for (i = 0; i < no + 2; i++) {
    size_t l = strlen(part[i]) + 1;   /* with its NUL */
    memcpy(k + at, part[i], l);
    at += l;
  }
  *len = at;
  return k;
}

lb_status lb_obtain(const char *src, int arch, lb_binary *out, int *cache,
                    double *seconds) {
  int exact, use, no, major, minor;
  char arg[64], *key;
  const char *opts[NOPTS];
  size_t keylen = 0;
  uint64_t hash;
  double t0 = lb_now();
  lb_status st = LB_OK;
  memset(out, 0, sizeof *out);
  *cache = 0;
  if (src == NULL) return lb_fail(LB_EARG, "lb_obtain: src is NULL");
  use = pick_arch(arch, &exact);
  if (use == 0)
    return lb_fail(LB_EUNSUP, "NVRTC knows no architecture at or below "
                   "sm_%d", arch);
  lb_nvrtc_version(&major, &minor);   /* (once: options and key) */
  no = options(use, !exact, major, minor,
               strstr(src, "wgmma.mma_async") == NULL, arg, opts);
  if ((key = cache_key(src, major, minor, opts, no, &keylen)) == NULL)
    return lb_fail(LB_EMEM, "lb_obtain: out of memory");
  hash = lb_hash(LB_HASH_INIT, key, keylen);
  if (lb_cache_get(hash, key, keylen, out) == LB_OK) {
    *cache = 1;
  } else {
    st = compile(src, opts, no, !exact, out);
    if (st == LB_OK) lb_cache_put(hash, key, keylen, out);
  }
  free(key);
  if (st == LB_OK && seconds) *seconds = lb_now() - t0;
  return st;
}

/* ptxas -v prints, per kernel:
**   ptxas info    : Compiling entry function 'lb_gemv' for 'sm_90'
**   ptxas info    : Used 40 registers, ...
**   ... N bytes spill stores, N bytes spill loads */
void lb_log_resources(const char *log, const char *name, int *regs,
                      int *spill) {
  char pat[96];
  const char *p;
  *regs = *spill = -1;
  if (log == NULL) return;
  snprintf(pat, sizeof pat, "entry function '%s'", name);
  if ((p = strstr(log, pat)) == NULL) return;
  /* the kernel's lines run until the next kernel's */
  while ((p = strchr(p, '\n')) != NULL && *++p) {
    const char *q;
    char line[256];
    size_t len = strcspn(p, "\n");
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = '\0';
    if (strstr(line, "entry function '")) break;
    if ((q = strstr(line, "Used ")) != NULL) sscanf(q, "Used %d registers", regs);
    if ((q = strstr(line, "bytes spill stores")) != NULL) {
      while (q > line && q[-1] == ' ') q--;
      while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
      sscanf(q, "%d", spill);
    }
  }
}

lb_status lb_log_kernels(const char *log, lb_kernel_use *out, int max,
                         int *count) {
  static const char pat[] = "entry function '";
  const char *p = log;
  if (count == NULL || max < 0 || (out == NULL && max > 0))
    return lb_fail(LB_EARG, "lb_log_kernels: %s",
                   count == NULL ? "count is NULL"
                   : max < 0     ? "max is negative"
                                 : "out is NULL");
  *count = 0;
  while (p && *count < max && (p = strstr(p, pat)) != NULL) {
    lb_kernel_use *k = &out[*count];
    size_t len;
    p += sizeof pat - 1;
    len = strcspn(p, "'\n");
    if (p[len] != '\'') break;   /* a cut log: no whole name */
    if (len >= sizeof k->name) len = sizeof k->name - 1;
    memcpy(k->name, p, len);
    k->name[len] = '\0';
    lb_log_resources(p - (sizeof pat - 1), k->name, &k->regs, &k->spill);
    ++*count;
  }
  return LB_OK;
}

/* Whether the len characters at p hold what. */
static int line_has(const char *p, size_t len, const char *what) {
  const size_t w = strlen(what);
  size_t i;
  for (i = 0; i + w <= len; i++)
    if (memcmp(p + i, what, w) == 0) return 1;
  return 0;
}

/* Warning lines: NVRTC's and ptxas's warnings, and ptxas's performance
** advisories, which say that wgmma was serialised or made to wait
** ("(C7510) Potential Performance Loss: wgmma.mma_async instructions are
** serialized ...", "(C7519) warpgroup.arrive is injected ... in function
** 'lb_gemm'"): the plans that draw one, and why some keep it, are in
** gen/lb_gmplan.c (wgmma_takes).  They come in the log because wgmma
** sources are compiled unsplit (options, above). */
int lb_log_warnings(const char *log) {
  int n = 0;
  const char *p = log;
  while (p && *p) {
    const char *end = strchr(p, '\n');
    const size_t len = end ? (size_t)(end - p) : strlen(p);
    n += line_has(p, len, "warning") || line_has(p, len, "(C7519)") ||
         line_has(p, len, "Potential Performance Loss");
    p = end ? end + 1 : NULL;
  }
  return n;
}
