/*
** lb_test.c: helpers of the test programs.
*/
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "lb_test.h"
#include "lowbit.h"

int lb_test_failures;

int lb_test_no_spills(const char *log, const char *what, int *regs,
                      int *spill) {
  lb_kernel_use ks[8];
  int nk = 0, f, found = 0;
  *regs = -1;
  *spill = 0;
  lb_log_kernels(log, ks, 8, &nk);
  for (f = 0; f < nk; f++) {
    if (ks[f].regs < 0) continue;
    found++;
    CHECK(ks[f].spill == 0, "%s %s: %d registers, %d bytes spilled", what,
          ks[f].name, ks[f].regs, ks[f].spill);
    if (ks[f].regs > *regs) *regs = ks[f].regs;
    if (ks[f].spill > *spill) *spill = ks[f].spill;
  }
  return found;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int lb_test_lua_files(const char *dir, char **names, int max) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int n = 0;
  if (d == NULL) return -1;
  while ((de = readdir(d)) != NULL && n < max) {
    size_t len = strlen(de->d_name);
    char buf[4096];
    if (len < 5 || strcmp(de->d_name + len - 4, ".lua") != 0) continue;
    snprintf(buf, sizeof buf, "%s/%s", dir, de->d_name);
    if ((names[n] = strdup(buf)) != NULL) n++;
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  return n;
}
