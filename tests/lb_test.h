/*
** lb_test.h: what the test programs share: a CHECK that counts failures
** and goes on, the check that no kernel in a compile log spills, and the
** sorted list of *.lua files in a directory.
*/
#ifndef lb_test_h
#define lb_test_h

#include <stdio.h>

extern int lb_test_failures;

#define CHECK(cond, ...)                \
  do {                                  \
    if (!(cond)) {                      \
      printf("  FAIL: " __VA_ARGS__);   \
      printf("\n");                     \
      lb_test_failures++;               \
    }                                   \
  } while (0)

/* Every entry point ptxas reports in log (a GEMV's lb_gemv and lb_gemv_xs,
** a GEMM's lb_gemm and lb_gemm_sum): a CHECK each that it spills nothing,
** labelled "what kernel"; the largest registers and spilled bytes into
** *regs and *spill (-1 and 0 where none is reported); returns the kernels
** reported. */
int lb_test_no_spills(const char *log, const char *what, int *regs,
                      int *spill);

/* Paths "dir/name.lua", sorted, malloc'ed (free each); returns the count,
** -1 when dir cannot be read. */
int lb_test_lua_files(const char *dir, char **names, int max);

#endif
