/*
** lb_where.c: the installed recipes, found from where the library lies.
**
** A prefix baked in at configure time is wrong after `cmake --install
** --prefix P`, after the tree is moved, and in a wheel (whose build
** prefix is a deleted temporary folder).  The layout inside the tree does
** not change: the recipes lie at a fixed relative path from the libdir
** (liblowbit.so) and from the bindir (the lowbit tool, which holds
** liblowbit.a).  CMakeLists.txt computes both paths.
*/
#define _GNU_SOURCE   /* dladdr1 */

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "lb_where.h"

#ifndef LB_RECIPES_FROM_LIB
#define LB_RECIPES_FROM_LIB "../share/lowbit/recipes"
#endif
#ifndef LB_RECIPES_FROM_BIN
#define LB_RECIPES_FROM_BIN "../share/lowbit/recipes"
#endif

/* The file this code was loaded from, resolved (malloc'd; NULL when not
** known).  dladdr names the main program by argv[0], which may be
** relative or a bare name found on PATH, so the program is read from
** /proc/self/exe; a static program has no dladdr at all.  A shared
** library opened by a relative path is resolved against the working
** directory, the best that is known. */
static char *loaded_from(void) {
  Dl_info info;
  void *extra = NULL;
  const char *f = "/proc/self/exe";
  if (dladdr1((void *)(uintptr_t)&lb_where_recipes, &info, &extra,
              RTLD_DL_LINKMAP) && info.dli_fname != NULL) {
    const struct link_map *lm = extra;
    int main_program = lm != NULL && lm->l_name != NULL &&
                       lm->l_name[0] == '\0';
    if (!main_program && info.dli_fname[0] != '\0') f = info.dli_fname;
  }
  return realpath(f, NULL);
}

int lb_where_recipes(char (*dirs)[LB_WHERE_LEN], int max, char *from,
                     size_t fromlen) {
  static const char *const rel[] = {LB_RECIPES_FROM_LIB, LB_RECIPES_FROM_BIN};
  char *file = loaded_from(), *slash;
  int i, j, n = 0;
  if (fromlen > 0) from[0] = '\0';
  if (file == NULL) return 0;
  if (fromlen > 0) snprintf(from, fromlen, "%s", file);
  slash = strrchr(file, '/');   /* realpath's answer is absolute */
  if (slash != NULL) *slash = '\0';
  for (i = 0; i < (int)(sizeof rel / sizeof rel[0]) && n < max; i++) {
    char cand[LB_WHERE_LEN], *real;
    struct stat sb;
    int len;
    if (rel[i][0] == '\0') continue;   /* no such dir in this layout */
    len = snprintf(cand, sizeof cand, "%s/%s", file, rel[i]);
    if (len < 0 || (size_t)len >= sizeof cand) continue;
    if ((real = realpath(cand, NULL)) == NULL) continue;   /* not there */
    if (stat(real, &sb) == 0 && S_ISDIR(sb.st_mode) &&
        strlen(real) < LB_WHERE_LEN) {
      /* the libdir and the bindir are often siblings: one answer */
      for (j = 0; j < n && strcmp(dirs[j], real) != 0; j++) {}
      if (j == n) snprintf(dirs[n++], LB_WHERE_LEN, "%s", real);
    }
    free(real);
  }
  free(file);
  return n;
}
