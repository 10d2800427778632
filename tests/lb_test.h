/*
** lb_test.h: what the test programs share: a CHECK that counts failures
** and goes on, and the sorted list of *.lua files in a directory.
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

/* Paths "dir/name.lua", sorted, malloc'ed (free each); returns the count,
** -1 when dir cannot be read. */
int lb_test_lua_files(const char *dir, char **names, int max);

#endif
