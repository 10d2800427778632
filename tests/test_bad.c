/*
** test_bad.c: every recipe in tests/bad must fail to load, with the
** message its first line expects ("-- expect: FILE:LINE: ..."), quickly,
** and without crashing or leaking (the CI build runs under ASan).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/wait.h>
#include <unistd.h>

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

/* Work a recipe can start where the instruction count does not see it: in
** C library calls (pattern backtracking, an empty string.rep, table.move)
** or in VM instructions that each copy or compare megabytes.  Each must
** still fail with LB_ERECIPE within 5 s.  Every case runs in its own child
** (all at once) under alarm(5), so a hang shows as a failure, not a stuck
** test. */
static void time_cases(void) {
  static const char *const texts[] = {
    "local s = (\"a\"):rep(5000)\nlocal r = s:find(\".-.-.-.-b\")\n",
    "local s = (\"\"):rep(1 << 62)\n",
    "table.move({}, 1, 1 << 62, 2)\n",
    "local s = (\"x\"):rep(4000000)\n"
    "for i = 1, 1e6 do local t = s .. \"y\" end\n",
    "local s = (\"x\"):rep(2000000)\nlocal u, v = s .. \"z\", s .. \"y\"\n"
    "for i = 1, 3e6 do local c = u < v end\n",
    "for i = 1, 1e6 do local s = (\"x\"):rep(4000000) end\n",
  };
  enum { N = sizeof texts / sizeof texts[0] };
  pid_t kids[N];
  size_t i;
  fflush(stdout);
  for (i = 0; i < N; i++) {
    kids[i] = fork();
    if (kids[i] == 0) {
      lb_recipe *r = NULL;
      double t0 = now(), dt;
      lb_status st;
      alarm(5);
      st = lb_recipe_load_text("cpu.lua", texts[i], strlen(texts[i]), &r);
      dt = now() - t0;
      lb_recipe_free(r);
      if (st != LB_ERECIPE || strncmp(lb_errmsg(), "cpu.lua:", 8) != 0) {
        printf("FAIL cpu case %zu (%.2f s): status %s, message \"%s\"\n", i,
               dt, lb_status_name(st), lb_errmsg());
        fflush(stdout);
        exit(1);
      }
      printf("ok   cpu case %zu %.3f s  %s\n", i, dt, lb_errmsg());
      fflush(stdout);
      exit(0);
    }
  }
  for (i = 0; i < N; i++) {
    int status = 0;
    if (kids[i] < 0 || waitpid(kids[i], &status, 0) != kids[i]) {
      printf("FAIL cpu case %zu: fork or wait failed\n", i);
      failures++;
    } else if (WIFSIGNALED(status)) {
      printf("FAIL cpu case %zu: did not finish in 5 s (signal %d): %s",
             i, WTERMSIG(status), texts[i]);
      failures++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failures++;
    }
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
  time_cases();
  printf("%d bad recipes, %d failure(s)\n", n, failures);
  return failures != 0;
}
