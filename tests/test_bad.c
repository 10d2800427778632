/*
** test_bad.c: every recipe in tests/bad must fail to load, with the
** message its first line expects ("-- expect: FILE:LINE: ..."), quickly,
** and without crashing or leaking (the CI build runs under ASan).
*/
#include <errno.h>
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

static const char good_text[] =
    "name \"good\"\nactivations \"f16\"\nweights { bits = 3 }\n"
    "scales { group = 64 }\nzeros { dtype = \"f16\" }\n"
    "dequant \"q * s + z\"\n";

/* Lua shortens a long chunk name in the positions it writes ("..." and
** the tail, which may end inside a directory's name): every message names
** the file in full, as given, once, whoever made it (Lua's parser, an
** error in a C function, the loader's own checks); past 255 bytes too (the
** name was cut there until 2026-12-02), and up to 4095. */
static void long_name_cases(void) {
  static const struct { const char *text, *want; } cases[] = {
    {"name \"x\"\nerror(\"boom\")\n", ":2: boom"},
    {"name \"x\"\nlocal = 1\n", ":2: <name> expected near '='"},
    {"name \"x\"\nlocal s = string.rep(\"ab\", 2^40)\n",
     ":2: resulting string too large"},
    {"name \"x\"\nweights { bits = 4 }\n", ":2: recipe has no"},
  };
  static const size_t lens[] = {150, 300, 4000};
  char name[4200], want[4300];
  lb_recipe *r = NULL;
  size_t i, l;
  for (l = 0; l < sizeof lens / sizeof lens[0]; l++) {
    for (i = 0; i < lens[l]; i++) name[i] = i % 61 == 60 ? '/' : 'd';
    memcpy(name + lens[l], "/long.lua", 10);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const char *msg;
      lb_status st = lb_recipe_load_text(name, cases[i].text,
                                         strlen(cases[i].text), &r);
      msg = lb_errmsg();
      snprintf(want, sizeof want, "%s%s", name, cases[i].want);
      if (st != LB_ERECIPE || strncmp(msg, want, strlen(want)) != 0) {
        printf("FAIL long name (%zu bytes) %zu: status %s, message \"%.200s"
               "...\"\n", strlen(name), i, lb_status_name(st), msg);
        failures++;
      } else {
        printf("ok   long name (%zu bytes) %zu: ...%s\n", strlen(name), i,
               msg + strlen(name) - 9);
      }
      lb_recipe_free(r);
    }
  }
  memset(name, 'd', 4096);
  name[4096] = '\0';
  if (lb_recipe_load_text(name, good_text, sizeof good_text - 1, &r) !=
          LB_EARG ||
      strstr(lb_errmsg(), "4096 bytes") == NULL) {
    printf("FAIL a 4096-byte name not refused: %s\n", lb_errmsg());
    failures++;
  }
}

/* Values a C comparison would misread: a string with a NUL byte in it
** passed as the text before it ("f16\0junk" as f16, a field "bits\0x"
** as bits), and an integer past int's range was reported wrapped (bits =
** 2^32 + 4 "got 4"). */
static void exact_value_cases(void) {
  static const struct { const char *text; size_t len; const char *want; }
      cases[] = {
#define T(s) s, sizeof s - 1
    {T("name \"x\"\nactivations \"f16\\0junk\"\n"),
     "v.lua:2: activations: a string with a NUL byte in it ('f16' then 5"},
    {T("name \"x\"\nactivations \"f16\0junk\"\n"),
     "v.lua:2: activations: a string with a NUL byte in it ('f16' then 5"},
    {T("name \"x\"\nweights { bits = 4, [\"bits\\0x\"] = 9 }\n"),
     "v.lua:2: weights: a string with a NUL byte in it ('bits' then 2"},
    {T("name \"x\"\nscales { group = \"channel\\0\" }\n"),
     "v.lua:2: scales.group: a string with a NUL byte in it"},
    {T("name \"x\"\nweights { bits = 4294967300 }\n"),
     "v.lua:2: weights.bits must be in 1..8, got 4294967300"},
    {T("name \"x\"\nscales { group = -4294967264 }\n"),
     "v.lua:2: scales.group must be in 32..1048576, got -4294967264"},
    {T("name \"x\"\nweights { bits = math.mininteger }\n"),
     "got -9223372036854775808"},
#undef T
  };
  lb_recipe *r = NULL;
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lb_status st = lb_recipe_load_text("v.lua", cases[i].text, cases[i].len,
                                       &r);
    if (st != LB_ERECIPE || r != NULL ||
        strstr(lb_errmsg(), cases[i].want) == NULL) {
      printf("FAIL value %zu: status %s, message \"%s\", expected \"%s\"\n",
             i, lb_status_name(st), lb_errmsg(), cases[i].want);
      failures++;
    } else {
      printf("ok   value %zu: %s\n", i, lb_errmsg());
    }
    lb_recipe_free(r);
  }
}

/* A file's name goes into the generated source's comments: a newline in
** it would end the comment and put the rest in the code. */
static void name_in_source_case(void) {
  static const char name[] = "/tmp/inj\n#error INJECTED\nint x = \\\n.lua";
  lb_recipe *r = NULL;
  char *src = NULL;
  int ok = lb_recipe_load_text(name, good_text, sizeof good_text - 1, &r) ==
               LB_OK &&
           lb_generate(r, 256, 256, 132, &src) == LB_OK;
  if (!ok || strstr(src, "\n#error") != NULL ||
      strstr(src, "(inj?#error INJECTED?int x = ??.lua)") == NULL) {
    printf("FAIL a newline in the file's name: %s\n",
           ok ? "reaches the source" : lb_errmsg());
    failures++;
  } else {
    printf("ok   a newline in the file's name stays in the comment\n");
  }
  lb_free(src);
  lb_recipe_free(r);
}

/* Inline cases through lb_recipe_load_text, including one that must load:
** a test of failures alone would pass for a loader that fails everything. */
static void inline_cases(void) {
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
  if (lb_recipe_load_text("good.lua", good_text, sizeof good_text - 1,
                          &r) != LB_OK ||
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
  long_name_cases();
  exact_value_cases();
  name_in_source_case();
  if (lb_recipe_load_text(NULL, "x", 1, &r) != LB_EARG ||
      lb_recipe_load_text("a", NULL, 1, &r) != LB_EARG ||
      lb_recipe_load_text("a", "x", 1, NULL) != LB_EARG ||
      lb_recipe_load(NULL, &r) != LB_EARG ||
      lb_recipe_load("/nonexistent/x.lua", &r) != LB_EIO) {
    printf("FAIL null or missing arguments not refused\n");
    failures++;
  }
}

/* Loads path expecting status want and a message holding each of has
** (and not holding hasnt, when given). */
static void file_case(const char *what, const char *path, lb_status want,
                      const char *has, const char *has2, const char *hasnt) {
  lb_recipe *r = NULL;
  lb_status st = lb_recipe_load(path, &r);
  const char *msg = st == LB_OK ? "" : lb_errmsg();
  if (st != want || (has && !strstr(msg, has)) ||
      (has2 && !strstr(msg, has2)) || (hasnt && strstr(msg, hasnt))) {
    printf("FAIL file %s: status %s, message \"%s\"\n", what,
           lb_status_name(st), msg);
    failures++;
  } else {
    printf("ok   file %s: %s\n", what, st == LB_OK ? "loads" : msg);
  }
  lb_recipe_free(r);
}

/* Writes text, padded with a comment to size bytes, to path. */
static int write_padded(const char *path, size_t size) {
  FILE *f = fopen(path, "wb");
  size_t i;
  if (f == NULL) return 0;
  fputs(good_text, f);
  fputs("--", f);
  for (i = sizeof good_text - 1 + 2; i + 1 < size; i++) fputc('x', f);
  fputc('\n', f);
  return fclose(f) == 0;
}

/* Reading: the system's reason when a file does not open, directories,
** the size limit (exactly at it and one over), and files whose size
** fstat or ftell does not tell: a pipe and a /proc file (size 0). */
static void file_cases(const char *dir) {
  char tmp[] = "/tmp/lb_test_bad_XXXXXX", path[64], want[128];
  int fds[2];
  file_case("missing", "/nonexistent/x.lua", LB_EIO,
            "/nonexistent/x.lua: cannot open recipe: ", strerror(ENOENT),
            NULL);
  snprintf(want, sizeof want, "%s: is a directory, not a recipe file", dir);
  file_case("directory", dir, LB_EIO, want, NULL, NULL);
  file_case("/proc", "/proc/self/status", LB_ERECIPE, "/proc/self/status:",
            NULL, "has no 'name' section");
  if (pipe(fds) != 0 ||
      write(fds[1], good_text, sizeof good_text - 1) !=
          (ssize_t)(sizeof good_text - 1)) {
    printf("FAIL file pipe: cannot make one\n");
    failures++;
  } else {
    close(fds[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    file_case("pipe", path, LB_OK, NULL, NULL, NULL);
    close(fds[0]);
  }
  if (mkdtemp(tmp) == NULL) {
    printf("FAIL file: mkdtemp\n");
    failures++;
    return;
  }
  snprintf(path, sizeof path, "%s/big.lua", tmp);
  if (!write_padded(path, 1 << 20)) {
    printf("FAIL file: cannot write %s\n", path);
    failures++;
  } else {
    file_case("of 1 MiB", path, LB_OK, NULL, NULL, NULL);
  }
  if (write_padded(path, (1 << 20) + 1))
    file_case("of 1 MiB + 1", path, LB_EIO,
              "big.lua: recipe is 1048577 bytes, more than the limit of "
              "1 MiB (1048576 bytes)", NULL, NULL);
  remove(path);
  rmdir(tmp);
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
  file_cases(argv[1]);
  time_cases();
  printf("%d bad recipes, %d failure(s)\n", n, failures);
  return failures != 0;
}
