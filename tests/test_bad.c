/*
** test_bad.c: every recipe in tests/bad must fail to load, with the
** message its first line expects ("-- expect: FILE:LINE: ..."), quickly,
** and without crashing or leaking (the CI build runs under ASan).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The text after "-- expect: " on the file's first line. */
static int expected(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  char line[512];
  const char *tag = "-- expect: ";
  int ok = 0;
  if (f == NULL) return 0;
  if (fgets(line, sizeof line, f) && strncmp(line, tag, strlen(tag)) == 0) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(buf, len, "%s", line + strlen(tag));
    ok = buf[0] != '\0';
  }
  fclose(f);
  return ok;
}

static void one(const char *path) {
  char want[512];
  lb_recipe *r = NULL;
  lb_status st;
  double t0 = now(), dt;
  if (!expected(path, want, sizeof want)) {
    printf("FAIL %s: no '-- expect:' line\n", path);
    failures++;
    return;
  }
  st = lb_recipe_load(path, &r);
  dt = now() - t0;
  if (st != LB_ERECIPE || r != NULL || strstr(lb_errmsg(), want) == NULL ||
      dt > 5.0) {
    printf("FAIL %s (%.2f s): status %s, message \"%s\", expected \"%s\"\n",
           path, dt, lb_status_name(st), lb_errmsg(), want);
    failures++;
  } else {
    printf("ok   %-40s %.3f s  %s\n", strrchr(path, '/') + 1, dt, lb_errmsg());
  }
  lb_recipe_free(r);
}

/* Inline cases through lb_recipe_load_text, including one that must load:
** a test of failures alone would pass for a loader that fails everything. */
static void inline_cases(void) {
  static const char good[] =
      "name \"good\"\nactivations \"f16\"\nweights { bits = 3 }\n"
      "scales { group = 64 }\nzeros { dtype = \"f16\" }\n"
      "dequant \"q * s + z\"\n";
  static const struct { const char *text, *want; } bad[] = {
    {"", "mem.lua:1: recipe has no 'name' section"},
    {"name \"x\"\nweights { 4 }\n", "mem.lua:2: weights: fields are named"},
    {"name \"x\"\nweights { bits = 4, signed = \"yes\" }\n",
     "mem.lua:2: weights.signed must be true or false, got string"},
    {"name \"x\"\nscales { dtype = \"f16\" }\n",
     "mem.lua:2: scales: field 'group' is required"},
    {"name \"x\"\nscales { group = 64, dtype = \"f8\" }\n",
     "mem.lua:2: scales.dtype must be one of"},
    {"name(\"a\", \"b\")\n", "mem.lua:1: section 'name' takes one argument"},
    {"\x1bLua", "mem.lua:1: recipes must be Lua source text"},
    {"error({})\n", "mem.lua:1: recipe raised an error that is not a string"},
  };
  lb_recipe *r = NULL;
  size_t i;
  if (lb_recipe_load_text("good.lua", good, sizeof good - 1, &r) != LB_OK ||
      strcmp(lb_recipe_name(r), "good") != 0) {
    printf("FAIL inline good recipe: %s\n", lb_errmsg());
    failures++;
  } else {
    printf("ok   inline good recipe loads\n");
  }
  lb_recipe_free(r);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lb_status st = lb_recipe_load_text("mem.lua", bad[i].text,
                                       strlen(bad[i].text), &r);
    if (st != LB_ERECIPE || r != NULL ||
        strstr(lb_errmsg(), bad[i].want) == NULL) {
      printf("FAIL inline %zu: status %s, message \"%s\", expected \"%s\"\n",
             i, lb_status_name(st), lb_errmsg(), bad[i].want);
      failures++;
      lb_recipe_free(r);
    } else {
      printf("ok   inline %zu: %s\n", i, lb_errmsg());
    }
  }
  if (lb_recipe_load_text(NULL, "x", 1, &r) != LB_EARG ||
      lb_recipe_load_text("a", NULL, 1, &r) != LB_EARG ||
      lb_recipe_load_text("a", "x", 1, NULL) != LB_EARG ||
      lb_recipe_load(NULL, &r) != LB_EARG ||
      lb_recipe_load("/nonexistent/x.lua", &r) != LB_EIO) {
    printf("FAIL null or missing arguments not refused\n");
    failures++;
  }
}

int main(int argc, char **argv) {
  char *names[256];
  int n = argc == 2 ? lb_test_lua_files(argv[1], names, 256) : -1, i;
  if (n < 0) {
    fprintf(stderr, "usage: test_bad BAD_RECIPE_DIR\n");
    return 2;
  }
  if (n < 15) {
    printf("FAIL only %d bad recipes in %s\n", n, argv[1]);
    failures++;
  }
  for (i = 0; i < n; i++) {
    one(names[i]);
    free(names[i]);
  }
  inline_cases();
  printf("%d bad recipes, %d failure(s)\n", n, failures);
  return failures != 0;
}
