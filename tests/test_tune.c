/*
** test_tune.c: GEMM plans in words and the tuning table, without a GPU.
** Plans parse strictly (every malformed or out-of-range knob refused with
** a message naming it) and change the source only by what they say; the
** candidates `lowbit tune` tries are distinct, regenerate to themselves
** and compile cleanly, also on threads at once into the disk cache (as
** lowbit tune does); the table round-trips, keeps one entry a key, is
** keyed by the rules' source, and every kind of damage to it is an error
** naming the file and line; a FIFO or a directory in its place is an
** error at once (a FIFO's blocking open had waited for a writer).
**
**   test_tune RECIPE.lua
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_hash.h"
#include "lb_nvrtc.h"
#include "lb_test.h"
#include "lb_tune.h"
#include "lb_tuner.h"
#include "lowbit.h"

#define failures lb_test_failures
#define DEV "test device, 132 SMs, sm_90, driver 13000, nvrtc 13.0"
#define N 4096
#define K 4096

static void refused(lb_status st, lb_status want, const char *has,
                    const char *what) {
  CHECK(st == want && strstr(lb_errmsg(), has) != NULL,
        "%s: status %s, message \"%s\" (wanted %s naming \"%s\")", what,
        lb_status_name(st), lb_errmsg(), lb_status_name(want), has);
}

static void plans_parse(const lb_recipe *r) {
  static const struct {
    const char *plan;
    int m;
    const char *has;   /* in the message */
  } bad[] = {
      {"zz=1", 64, "unknown knob"},      {"wn", 64, "unknown knob"},
      {"wn=3", 64, "power of two"},      {"wn=16", 64, "1..8"},
      {"wn=0", 64, "1..8"},              {"st=1", 64, "2..16"},
      {"wn=4,wn=2", 64, "given twice"},  {"wn=", 64, "wn must be"},
      {"wn= 4", 64, "wn must be"},       {"wn=+4", 64, "wn must be"},
      {"wn=\n4", 64, "wn must be"},      {"wn=4,", 64, "nothing after it"},
      {"wn=4x", 64, "wn must be"},       {"wm=8", 32, "wm must be a power of two in 1..4"},
      {"wn=8,wk=8,wm=2", 1024, "exceed 32"}, {"sk=3", 64, "power of two"},
      {"bs=3", 64, "1..2"},              {"plain=2", 64, "0..1"},
  };
  char *rules = NULL, *same = NULL, *with = NULL;
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *src = (char *)1;
    char what[64];
    snprintf(what, sizeof what, "plan \"%s\" at m = %d", bad[i].plan,
             bad[i].m);
    refused(lb_generate_plan(r, N, K, bad[i].m, 132, bad[i].plan, &src),
            LB_EARG, bad[i].has, what);
    CHECK(src == NULL, "%s: *src not cleared", what);
  }
  refused(lb_generate_plan(r, N, K, 8, 132, "wn=4", &rules), LB_EARG,
          "unknown knob at \"wn=4\"", "a GEMM plan for the GEMV");
  /* 9..16 rows of 4-bit codes: the GEMV's two fragments, its knobs */
  refused(lb_generate_plan(r, N, K, 16, 132, "wn=4", &rules), LB_EARG,
          "unknown knob at \"wn=4\"", "a GEMM plan for the two-fragment GEMV");
  refused(lb_generate_plan(r, N, K, 64, 132, "split=2", &rules), LB_EARG,
          "unknown knob at \"split=2\"", "a GEMV plan for the GEMM");
  /* the GEMV's LOWBIT_PLAN, as strict */
  {
    static const struct {
      const char *plan, *has;
    } gbad[] = {{"split=3", "power of two"}, {"splt=2", "unknown knob"},
                {"split=2,", "nothing after it"}, {"warps=16", "1..8"},
                {"stages=0", "1..8"}, {"split=2,split=4", "given twice"},
                {"xres=-1", "xres must be"}, {"lazy= 1", "lazy must be"}};
    size_t g;
    for (g = 0; g < sizeof gbad / sizeof gbad[0]; g++) {
      char *src = (char *)1;
      setenv("LOWBIT_PLAN", gbad[g].plan, 1);
      refused(lb_generate_m(r, N, K, 1, 132, &src), LB_EARG, gbad[g].has,
              gbad[g].plan);
      CHECK(src == NULL, "LOWBIT_PLAN %s: *src not cleared", gbad[g].plan);
    }
    setenv("LOWBIT_PLAN", "split=2,stages=1", 1);
    CHECK(lb_generate_m(r, N, K, 1, 132, &same) == LB_OK && same &&
              strstr(same, "LOWBIT_PLAN: \"split=2,stages=1\"") != NULL,
          "LOWBIT_PLAN split=2,stages=1: %s", lb_errmsg());
    lb_free(same);
    same = NULL;
    unsetenv("LOWBIT_PLAN");
  }
  /* no plan, or an empty one: the rules' source, byte for byte */
  unsetenv("LOWBIT_GEMM");
  CHECK(lb_generate_m(r, N, K, 64, 132, &rules) == LB_OK, "rules: %s",
        lb_errmsg());
  CHECK(lb_generate_plan(r, N, K, 64, 132, "", &same) == LB_OK, "\"\": %s",
        lb_errmsg());
  CHECK(rules && same && strcmp(rules, same) == 0,
        "an empty plan changed the source");
  /* a plan: named in the source, and the constants it sets */
  CHECK(lb_generate_plan(r, N, K, 64, 132, "wn=2,st=3,bs=1", &with) == LB_OK,
        "wn=2,st=3,bs=1: %s", lb_errmsg());
  CHECK(with && strstr(with, "Plan changed by the caller: "
                             "\"wn=2,st=3,bs=1\"") != NULL,
        "the source does not name its plan");
  CHECK(with && strstr(with, "LB_WARPS_N = 2;") != NULL &&
            strstr(with, "LB_STAGES = 3;") != NULL,
        "wn=2,st=3,bs=1 did not reach the constants");
  /* lowbit tune compiles ahead with lb_generate_plan what the op then
  ** makes for lb_op_set_plan: the two sources must be the same bytes */
  {
    char *op_src = NULL, *op_gemv = NULL, *gen_gemv = NULL;
    CHECK(lb_gen_gemm(r, N, K, lb_gemm_bucket(64), 132, "wn=2,st=3,bs=1",
                      "lb_op_set_plan", NULL, &op_src) == LB_OK &&
              with && op_src && strcmp(with, op_src) == 0,
          "the op's source for a plan set differs from lb_generate_plan's");
    CHECK(lb_gen_gemv(r, N, K, 4, 132, "split=2", "lb_op_set_plan", 0, NULL,
                      &op_gemv) == LB_OK &&
              lb_generate_plan(r, N, K, 4, 132, "split=2", &gen_gemv) ==
                  LB_OK &&
              strcmp(op_gemv, gen_gemv) == 0,
          "the op's GEMV source for a plan set differs from "
          "lb_generate_plan's");
    lb_free(op_src);
    lb_free(op_gemv);
    lb_free(gen_gemv);
  }
  lb_free(rules);
  lb_free(same);
  lb_free(with);
}

/* Plan as knobs, every one named, as built for m on sm_90. */
static int effective(const lb_recipe *r, int m, const char *plan,
                     char text[LB_PLAN_LEN]) {
  if (m <= lb_gemv_rows(r, N, K)) {
    lb_gemv_cfg c;
    if (lb_plan_gemv(r, N, K, m, 132, plan, "test", &c) != LB_OK) return 0;
    lb_gemv_plan_text(&c, text, LB_PLAN_LEN);
  } else {
    lb_gemm_plans p;
    if (lb_plan_gemm(r, N, K, lb_gemm_bucket(m), 132, plan, "test", &p) !=
        LB_OK)
      return 0;
    lb_gemm_plan_text(lb_gemm_part(&p, 90), text, LB_PLAN_LEN);
  }
  return 1;
}

/* Lines of a compile's log that are warnings (not ptxas's performance
** advisories, which lb_log_warnings counts too: a candidate may draw one,
** as a16w4_g128's 128-channel wgmma tiles at m = 1024 do, C7511, and is
** then timed like any other). */
static int warning_lines(const char *log) {
  int n = 0;
  const char *p = log;
  while (p && (p = strstr(p, "warning")) != NULL) {
    n++;
    p = strchr(p, '\n');
  }
  return n;
}

/* The candidates: the rules' plan first, distinct, each regenerating to
** itself; `compile` of them compiled for sm_90 without warnings. */
static void candidates(const lb_recipe *r, int m, int compile) {
  char (*c)[LB_PLAN_LEN] = malloc(64 * LB_PLAN_LEN);
  char text[LB_PLAN_LEN];
  int count = 0, i, j;
  if (c == NULL) return;
  CHECK(lb_plan_candidates(r, N, K, m, 132, 90, NULL, c, 64, &count) ==
            LB_OK,
        "%s m=%d: candidates: %s", lb_recipe_name(r), m, lb_errmsg());
  CHECK(count >= 4, "%s m=%d: %d candidates", lb_recipe_name(r), m, count);
  CHECK(effective(r, m, NULL, text), "plan: %s", lb_errmsg());
  CHECK(count > 0 && strcmp(c[0], text) == 0,
        "%s m=%d: the first candidate %s is not the rules' %s",
        lb_recipe_name(r), m, count ? c[0] : "-", text);
  for (i = 0; i < count; i++) {
    for (j = 0; j < i; j++)
      CHECK(strcmp(c[i], c[j]) != 0, "%s m=%d: %s twice", lb_recipe_name(r),
            m, c[i]);
    CHECK(effective(r, m, c[i], text), "%s m=%d %s: %s", lb_recipe_name(r),
          m, c[i], lb_errmsg());
    CHECK(strcmp(c[i], text) == 0, "%s m=%d: %s regenerates as %s",
          lb_recipe_name(r), m, c[i], text);
  }
  /* a second round starts from a candidate and leaves it first */
  if (count > 1) {
    char (*d)[LB_PLAN_LEN] = malloc(64 * LB_PLAN_LEN);
    int dn = 0;
    if (d) {
      CHECK(lb_plan_candidates(r, N, K, m, 132, 90, c[1], d, 64, &dn) ==
                    LB_OK &&
                dn > 1 && strcmp(d[0], c[1]) == 0,
            "%s m=%d: candidates around %s: %s", lb_recipe_name(r), m, c[1],
            lb_errmsg());
      free(d);
    }
  }
  /* no clusters offered where there are none */
  if (m <= lb_gemv_rows(r, N, K)) {
    int n80 = 0;
    CHECK(lb_plan_candidates(r, N, K, m, 132, 80, NULL, c, 64, &n80) ==
              LB_OK,
          "sm_80 candidates: %s", lb_errmsg());
    for (i = 1; i < n80; i++)
      CHECK(strstr(c[i], "cluster=1") != NULL, "%s m=%d sm_80: %s",
            lb_recipe_name(r), m, c[i]);
    CHECK(lb_plan_candidates(r, N, K, m, 132, 90, NULL, c, 64, &count) ==
              LB_OK,
          "candidates again: %s", lb_errmsg());
  }
  for (i = 1; i <= compile && i < count; i++) {
    char *src = NULL, *log = NULL;
    lb_offline info;
    int regs, spill;
    if (lb_generate_plan(r, N, K, m, 132, c[i], &src) != LB_OK ||
        lb_compile_offline(src, 90, &info, &log) != LB_OK) {
      CHECK(0, "%s m=%d %s: %s", lb_recipe_name(r), m, c[i], lb_errmsg());
    } else {
      lb_log_resources(log, m <= lb_gemv_rows(r, N, K) ? LB_KERNEL : LB_GEMM_KERNEL,
                       &regs, &spill);
      CHECK(warning_lines(log) == 0 && regs > 0,
            "%s m=%d %s: %d warnings, %d registers\n%s", lb_recipe_name(r),
            m, c[i], warning_lines(log), regs, log ? log : "");
      printf("  %s m=%d %-44s %3d registers, %d bytes spilled\n",
             lb_recipe_name(r), m, c[i], regs, spill);
    }
    lb_free(src);
    lb_free(log);
  }
  free(c);
}

/* lowbit tune's parallel compiles: every plan lands in the disk cache,
** whole (each then a hit), with threads writing the cache at once. */
static void precompiled(const lb_recipe *r) {
  char dir[] = "/tmp/lb_tune_cache_XXXXXX", cmd[200];
  char (*c)[LB_PLAN_LEN] = malloc(64 * LB_PLAN_LEN);
  int count = 0, i, hits = 0;
  if (c == NULL || mkdtemp(dir) == NULL) {
    CHECK(0, "precompile: setup");
    free(c);
    return;
  }
  setenv("LOWBIT_CACHE_DIR", dir, 1);
  unsetenv("LOWBIT_CACHE");
  if (lb_plan_candidates(r, N, K, 32, 132, 90, NULL, c, 64, &count) !=
      LB_OK)
    CHECK(0, "precompile: candidates: %s", lb_errmsg());
  if (count > 6) count = 6;
  lb_tune_precompile(r, N, K, 32, 132, 90, c, count);
  for (i = 0; i < count; i++) {
    char *src = NULL;
    lb_offline info;
    if (lb_generate_plan(r, N, K, 32, 132, c[i], &src) == LB_OK &&
        lb_compile_offline(src, 90, &info, NULL) == LB_OK && info.cache == 2)
      hits++;
    lb_free(src);
  }
  CHECK(count >= 4 && hits == count, "precompile: %d of %d plans found in "
        "the disk cache", hits, count);
  unsetenv("LOWBIT_CACHE_DIR");
  setenv("LOWBIT_CACHE", "0", 1);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) printf("could not remove %s\n", dir);
  free(c);
}

static int write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return 0;
  fwrite(text, 1, len, f);
  return fclose(f) == 0;
}

/* The table file of DEV in dir, and its text. */
static char *table_text(const char *dir, char *path, size_t len) {
  static char text[8192];
  FILE *f;
  size_t n;
  snprintf(path, len, "%s/tune-%016llx.txt", dir,
           (unsigned long long)lb_hash_str(LB_HASH_INIT, DEV));
  if ((f = fopen(path, "rb")) == NULL) return NULL;
  n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static void table(const lb_recipe *r) {
  char dir[] = "/tmp/lb_tune_XXXXXX", path[4200], name[128];
  char plans[2][LB_PLAN_LEN], good[8192], *text;
  uint64_t keys[2], other;
  lb_status st;
  int i, lines = 0;
  if (mkdtemp(dir) == NULL) {
    CHECK(0, "mkdtemp failed");
    return;
  }
  setenv("LOWBIT_CACHE_DIR", dir, 1);
  unsetenv("LOWBIT_CACHE");
  unsetenv("LOWBIT_TUNE");
  CHECK(lb_gemm_key(r, N, K, 2, 132, &keys[0]) == LB_OK &&
            lb_gemm_key(r, N, K, 4, 132, &keys[1]) == LB_OK &&
            lb_gemm_key(r, N + 16, K, 2, 132, &other) == LB_OK,
        "keys: %s", lb_errmsg());
  CHECK(keys[0] != keys[1] && keys[0] != other,
        "keys of other buckets or shapes are equal");
  /* no table yet: nothing found, no error */
  CHECK(lb_tune_find_dev(DEV, keys, 2, plans, name, sizeof name, "t") ==
                LB_OK &&
            plans[0][0] == '\0' && plans[1][0] == '\0',
        "an absent table: %s", lb_errmsg());
  CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2,st=3", 50.5, 60.25) ==
            LB_OK,
        "save: %s", lb_errmsg());
  CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 1024, NULL, 400, 400) == LB_OK,
        "save the rules': %s", lb_errmsg());
  CHECK(lb_tune_find_dev(DEV, keys, 2, plans, name, sizeof name, "t") ==
                LB_OK &&
            strcmp(plans[0], "wn=2,st=3") == 0 && plans[1][0] == '\0' &&
            strncmp(name, "tune-", 5) == 0,
        "found \"%s\" and \"%s\" in %s: %s", plans[0], plans[1], name,
        lb_errmsg());
  /* the GEMV's plan: bucket -1, found by its own key */
  {
    uint64_t vkey;
    char vplan[1][LB_PLAN_LEN];
    CHECK(lb_gemv_key(r, N, K, 132, &vkey) == LB_OK && vkey != keys[0],
          "the GEMV's key: %s", lb_errmsg());
    CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 4, "split=2", 9, 9.5) == LB_OK,
          "save the GEMV's: %s", lb_errmsg());
    CHECK(lb_tune_find_dev(DEV, &vkey, 1, vplan, name, sizeof name, "t") ==
                  LB_OK &&
              strcmp(vplan[0], "split=2") == 0,
          "the GEMV's plan: found \"%s\": %s", vplan[0], lb_errmsg());
    /* a plan with every knob named, as lowbit tune writes them: read
    ** back whole (the reader's width was 96 characters when a GEMV plan
    ** with its rows knob had 110, and the table failed to load) */
    {
      lb_gemv_cfg c;
      char full[LB_PLAN_LEN];
      CHECK(lb_plan_gemv(r, N, K, 1, 132, "rows=32", "t", &c) == LB_OK,
            "plan rows=32: %s", lb_errmsg());
      lb_gemv_plan_text(&c, full, sizeof full);
      CHECK(strlen(full) > 96 && strstr(full, ",rows=32") != NULL,
            "the whole plan \"%s\"", full);
      CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 4, full, 9, 9.5) == LB_OK &&
                lb_tune_find_dev(DEV, &vkey, 1, vplan, name, sizeof name,
                                 "t") == LB_OK &&
                strcmp(vplan[0], full) == 0,
            "the whole GEMV plan: found \"%s\": %s", vplan[0], lb_errmsg());
      CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 4, "split=2", 9, 9.5) ==
                LB_OK,
            "save the GEMV's again: %s", lb_errmsg());
    }
  }
  /* the same key again: replaced, one line */
  CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 33, "wn=4,r=4", 40, 60.25) ==
            LB_OK,
        "save again: %s", lb_errmsg());
  CHECK(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t") ==
                LB_OK &&
            strcmp(plans[0], "wn=4,r=4") == 0,
        "replaced: found \"%s\"", plans[0]);
  text = table_text(dir, path, sizeof path);
  CHECK(text != NULL, "no table at %s", path);
  if (text == NULL) return;
  snprintf(good, sizeof good, "%s", text);
  for (i = 0; text[i]; i++) lines += text[i] == '\n';
  CHECK(lines == 7 && strstr(text, " -1 4096 4096 split=2 9.00 9.50 ") != NULL,
        "%d lines, wanted 3 comments, a header, 3 entries (the GEMV's with "
        "bucket -1):\n%s", lines, text);
  /* LOWBIT_TUNE=0: not read */
  setenv("LOWBIT_TUNE", "0", 1);
  CHECK(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t") ==
                LB_OK &&
            plans[0][0] == '\0',
        "LOWBIT_TUNE=0 read the table");
  unsetenv("LOWBIT_TUNE");
  /* refused saves */
  refused(lb_tune_save_dev(DEV, 132, r, N, K, 8, "wn=2", 1, 1), LB_EARG,
          "unknown knob", "saving a GEMM plan for the GEMV");
  refused(lb_tune_save_dev(DEV, 132, r, N, K, 0, "split=2", 1, 1), LB_EARG,
          "1..", "saving for m = 0");
  refused(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=5", 1, 1), LB_EARG,
          "power of two", "saving a bad plan");
  refused(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2", -1, 1), LB_EARG,
          "positive", "saving a negative time");
  setenv("LOWBIT_CACHE", "0", 1);
  refused(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2", 1, 1), LB_EIO,
          "LOWBIT_CACHE=0", "saving with no cache");
  unsetenv("LOWBIT_CACHE");
  /* damage, line by line: each an LB_EIO naming the file and the line */
  {
    static const struct {
      const char *from, *to;   /* replace the first `from` by `to` */
      int line;
      const char *has;
    } dmg[] = {
        {"lowbit-tune 2", "lowbit-tune 1", 4, "another version"},
        {"lowbit-tune 2", "lowbit-tuner 2", 4, "first line"},
        {"test device", "best device", 4, "another device"},
        {" wn=4,r=4 ", " wn=3,r=4 ", 5, "power of two"},
        {" 40.00 ", " -40.00 ", 5, "positive"},
        {" 40.00 ", " 40.00 extra ", 5, "expected"},
        {" 60.25 ", " ", 5, "expected"},
        {" 4096 ", " 0 ", 5, "out of range"},
    };
    size_t d;
    for (d = 0; d < sizeof dmg / sizeof dmg[0]; d++) {
      char bad[8300], want[64], what[96];
      const char *at = strstr(good, dmg[d].from);
      if (at == NULL) {
        CHECK(0, "damage %zu: \"%s\" not in the table", d, dmg[d].from);
        continue;
      }
      snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - good), good,
               dmg[d].to, at + strlen(dmg[d].from));
      write_file(path, bad, strlen(bad));
      snprintf(want, sizeof want, ".txt:%d: ", dmg[d].line);
      snprintf(what, sizeof what, "\"%s\" -> \"%s\"", dmg[d].from, dmg[d].to);
      st = lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t");
      refused(st, LB_EIO, want, what);
      refused(st, LB_EIO, dmg[d].has, what);
      /* a save neither reads past it nor writes over it */
      refused(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2", 1, 1), LB_EIO,
              want, what);
      CHECK(strcmp(table_text(dir, path, sizeof path), bad) == 0,
            "%s: a save wrote over the damaged table", what);
    }
    /* the key: not 16 hex digits */
    {
      char bad[8300];
      char *nl = strstr(good, "\nlowbit-tune");
      nl = nl ? strchr(nl + 1, '\n') : NULL;   /* the first entry */
      if (nl) {
        snprintf(bad, sizeof bad, "%.*sXY%s", (int)(nl + 1 - good), good,
                 nl + 3);
        write_file(path, bad, strlen(bad));
        refused(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name,
                                 "t"),
                LB_EIO, ":5: the key", "a bad key");
      }
      memcpy(bad, good, strlen(good) + 1);
      bad[10] = '\0';
      write_file(path, bad, strlen(good));
      refused(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t"),
              LB_EIO, "NUL byte", "a NUL byte");
    }
  }
  /* CR LF line ends (a table edited elsewhere): read alike */
  {
    char crlf[9000];
    size_t i2, j2 = 0;
    for (i2 = 0; good[i2] && j2 < sizeof crlf - 2; i2++) {
      if (good[i2] == '\n') crlf[j2++] = '\r';
      crlf[j2++] = good[i2];
    }
    write_file(path, crlf, j2);
    CHECK(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t") ==
                  LB_OK &&
              strcmp(plans[0], "wn=4,r=4") == 0,
          "a table with CR LF line ends: %s", lb_errmsg());
  }
  /* whole again: found again */
  write_file(path, good, strlen(good));
  CHECK(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t") ==
                LB_OK &&
            strcmp(plans[0], "wn=4,r=4") == 0,
        "the restored table: %s", lb_errmsg());
  /* another device's table is another file */
  CHECK(lb_tune_find_dev("another, 1 SMs, sm_80, driver 1, nvrtc 1.0", keys,
                         1, plans, name, sizeof name, "t") == LB_OK &&
            plans[0][0] == '\0',
        "another device read this device's table");
  /* not a regular file at the table's path: a FIFO (whose blocking open
  ** waited for a writer forever) and a directory are errors that say so,
  ** at once; the alarm ends a read that waits, failing the test */
  {
    static const char *const kinds[] = {"a FIFO", "a directory"};
    int kd;
    for (kd = 0; kd < 2; kd++) {
      remove(path);
      if (kd == 0 ? mkfifo(path, 0644) != 0 : mkdir(path, 0755) != 0) {
        CHECK(0, "cannot make %s at %s", kinds[kd], path);
        continue;
      }
      alarm(20);
      refused(lb_tune_find_dev(DEV, keys, 1, plans, name, sizeof name, "t"),
              LB_EIO, kinds[kd], "find with not a regular file");
      refused(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2", 1, 1), LB_EIO,
              "not a regular file", "save over not a regular file");
      alarm(0);
      if (kd == 1) rmdir(path);
    }
    printf("tuning table: a FIFO or a directory at its path refused at "
           "once\n");
  }
  remove(path);
  snprintf(path + strlen(path), 8, ".lock");
  remove(path);
  rmdir(dir);
  unsetenv("LOWBIT_CACHE_DIR");
}

/* K splits at 16 rows on 132 SMs for a16w4 (r) at n x k (-1: no plan). */
static int splits16(const lb_recipe *r, int n, int k) {
  lb_gemm_plans p;
  if (lb_plan_gemm(r, n, k, 0, 132, NULL, "test", &p) != LB_OK) return -1;
  return lb_gemm_splits(&p.hi, 16, 132);
}

/* The rules lowbit tune's measurements set (gen/lb_gmplan.c says what was
** measured): a change to them should be one that was measured too, and
** this test then says so.  4-bit group 128 (r) and 3-bit (r3), 132 SMs. */
static void measured_rules(const lb_recipe *r, const lb_recipe *r3,
                           const lb_recipe *r8) {
  lb_gemm_plans p;
  int b;
  for (b = 1; b <= 2; b++) {   /* 17..64 rows: one warp a code row, two
                               ** blocks an SM */
    CHECK(lb_plan_gemm(r, 8192, 8192, b, 132, NULL, "test", &p) == LB_OK &&
              p.hi.warps_k == 1 && p.hi.per_sm == 2 && p.hi.stages == 2,
          "bucket %d: wk %d, %d blocks an SM, %d stages", b, p.hi.warps_k,
          p.hi.per_sm, p.hi.stages);
  }
  CHECK(lb_plan_gemm(r, 8192, 8192, 0, 132, NULL, "test", &p) == LB_OK &&
            p.hi.warps_k == 2 && p.hi.r == 8,
        "9..16 rows, 4-bit: wk %d, %d code rows", p.hi.warps_k, p.hi.r);
  CHECK(lb_plan_gemm(r3, 8192, 8192, 0, 132, NULL, "test", &p) == LB_OK &&
            p.hi.r == 16,
        "9..16 rows, 3-bit: %d code rows, not 16", p.hi.r);
  /* whole packing tiles a sub-stage for 8-bit codes (4 code rows a
  ** tile): two up to 16 rows, four at 17..32 on 160 KB parts */
  CHECK(lb_plan_gemm(r8, 8192, 8192, 0, 132, NULL, "test", &p) == LB_OK &&
            p.hi.r == 8 && p.hi.ws == 2 && p.lo.r == 8,
        "9..16 rows, 8-bit: %d code rows (99 KB parts %d), %d words, not 8 "
        "and 2", p.hi.r, p.lo.r, p.hi.ws);
  CHECK(lb_plan_gemm(r8, 8192, 8192, 1, 132, NULL, "test", &p) == LB_OK &&
            p.hi.r == 16 && p.hi.ws == 4 && p.lo.r <= 8,
        "17..32 rows, 8-bit: %d code rows (99 KB parts %d), %d words, not "
        "16 and 4", p.hi.r, p.lo.r, p.hi.ws);
  CHECK(lb_plan_gemm(r, 8192, 8192, 1, 132, NULL, "test", &p) == LB_OK &&
            p.hi.r == 8,
        "17..32 rows, 4-bit: %d code rows, not 8 (one tile)", p.hi.r);
  /* 9..16 rows past 4M weights (lb_gmplan.c wide16, two_16): 64-channel
  ** blocks two an SM of two stages, K split to fill them (64 tiles at N =
  ** 4096, K = 14336: 4 ways; 128 at N = 8192: 2); at K = 4096 one an SM
  ** of three stages, split 2 ways; 32 channels in layers of 4M or fewer
  ** (0: any stages) */
  {
    static const int cs[][6] = {   /* n, k, channels, blocks, stages, splits */
        {4096, 14336, 64, 2, 2, 4},
        {4096, 4096, 64, 1, 3, 2},
        {8192, 8192, 64, 2, 2, 2},
        {4096, 1024, 32, 1, 0, 0}};
    for (b = 0; b < (int)(sizeof cs / sizeof cs[0]); b++) {
      const int *w = cs[b];
      const int st = lb_plan_gemm(r, w[0], w[1], 0, 132, NULL, "test", &p);
      const int sp = splits16(r, w[0], w[1]);
      CHECK(st == LB_OK && p.hi.bn == w[2] && p.hi.per_sm == w[3] &&
                (!w[4] || p.hi.stages == w[4]) && (!w[5] || sp == w[5]),
            "%d x %d, M = 16: %d channels, %d blocks an SM, %d stages, %d "
            "splits; want %d, %d, %d, %d", w[1], w[0], p.hi.bn, p.hi.per_sm,
            p.hi.stages, sp, w[2], w[3], w[4], w[5]);
    }
  }
  /* ... and 5- to 7-bit codes there, where the blocks go two an SM, take
  ** one warp a code row and 16 code rows a sub-stage; not one an SM (K =
  ** 4096 at N = 4096), not 8-bit codes (r8) */
  {
    static const char text7[] =
        "name \"w7\"\nactivations \"f16\"\nweights { bits = 7 }\n"
        "scales { group = 64 }\nzeros { dtype = \"f16\" }\n"
        "dequant \"(q - z) * s\"\n";
    static const int cs[][4] = {   /* n, k, wk, r */
        {8192, 8192, 1, 16}, {14336, 4096, 1, 16}, {1024, 16384, 1, 16},
        {4096, 4096, 2, 8}};
    lb_recipe *r7 = NULL;
    CHECK(lb_recipe_load_text("w7.lua", text7, strlen(text7), &r7) == LB_OK,
          "w7.lua: %s", lb_errmsg());
    for (b = 0; r7 && b < (int)(sizeof cs / sizeof cs[0]); b++)
      CHECK(lb_plan_gemm(r7, cs[b][0], cs[b][1], 0, 132, NULL, "test", &p) ==
                    LB_OK &&
                p.hi.warps_k == cs[b][2] && p.hi.r == cs[b][3],
            "7-bit at %d x %d, M = 16: wk %d, %d code rows; want %d, %d",
            cs[b][1], cs[b][0], p.hi.warps_k, p.hi.r, cs[b][2], cs[b][3]);
    lb_recipe_free(r7);
    CHECK(lb_plan_gemm(r8, 8192, 8192, 0, 132, NULL, "test", &p) == LB_OK &&
              p.hi.warps_k == 2,
          "8-bit at 8192 x 8192, M = 16: wk %d, not 2", p.hi.warps_k);
  }
  /* GEMV, narrow layers: where a cluster splits K, the block's warps
  ** spread over a cluster of 8 on sm_90; before sm_90 the fold blocks of
  ** a cluster are the one block the rules had (4 warps for 3-bit codes);
  ** no first cluster where the rules chose none */
  {
    lb_gemv_cfg c;
    char *src = NULL, *log = NULL;
    int arch;
    CHECK(lb_plan_gemv(r3, 16, 16384, 1, 132, NULL, "test", &c) == LB_OK &&
              c.cluster == 8 && c.warps == 2 && c.split == 2 && c.fold == 2,
          "3-bit, 16384 x 16: %d warps, split %d, cluster %d, fold %d, not "
          "2, 2, 8, 2", c.warps, c.split, c.cluster, c.fold);
    CHECK(lb_plan_gemv(r3, 256, 1024, 1, 132, NULL, "test", &c) == LB_OK &&
              c.cluster == 1 && c.fold == 1,
          "3-bit, 1024 x 256: cluster %d, fold %d, not 1, 1", c.cluster, c.fold);
    CHECK(lb_gen_gemv(r3, 16, 16384, 1, 132, NULL, "test", 0, NULL, &src) == LB_OK &&
              strstr(src, "LB_WARPS = 2, LB_SPLIT = 2, LB_CLUSTER = 8;") &&
              strstr(src, "LB_WARPS = 4, LB_SPLIT = 4, LB_CLUSTER = 1;"),
          "3-bit, 16384 x 16: the source's blocks (%s)", lb_errmsg());
    for (arch = 80; src && arch <= 90; arch += 10) {
      lb_offline info;
      CHECK(lb_compile_offline(src, arch, &info, &log) == LB_OK &&
                info.warnings == 0,
            "3-bit, 16384 x 16, sm_%d: %s", arch, log ? log : lb_errmsg());
      lb_free(log);
      log = NULL;
    }
    lb_free(src);
  }
}

/* lb_tune_list: every tune-*.txt of the cache directory, whatever its
** device: a table's plans and device, or what is wrong with it (a FIFO is
** not opened: the alarm fails a list that waits on it). */
static void listed(const lb_recipe *r) {
  char dir[] = "/tmp/lb_tlist_XXXXXX", path[4200];
  static const char bad[] = "lowbit-tune 2 other, 1 SMs, sm_80\nnot a line\n";
  lb_tune_table *t = NULL;
  int n = 0, i, good = -1, fifo = -1, broken = -1;
  if (mkdtemp(dir) == NULL) {
    CHECK(0, "mkdtemp failed");
    return;
  }
  setenv("LOWBIT_CACHE_DIR", dir, 1);
  CHECK(lb_tune_list(&t, &n) == LB_OK && n == 0, "an empty cache lists %d "
        "table(s): %s", n, lb_errmsg());
  lb_free(t);
  CHECK(lb_tune_save_dev(DEV, 132, r, N, K, 64, "wn=2,st=3", 50.5, 60.25) ==
                LB_OK &&
            lb_tune_save_dev(DEV, 132, r, N, K, 1024, NULL, 400, 400) == LB_OK,
        "save: %s", lb_errmsg());
  snprintf(path, sizeof path, "%s/tune-fifo.txt", dir);
  CHECK(mkfifo(path, 0644) == 0, "mkfifo %s", path);
  snprintf(path, sizeof path, "%s/tune-0000000000000000.txt", dir);
  CHECK(write_file(path, bad, strlen(bad)), "cannot write %s", path);
  alarm(20);
  CHECK(lb_tune_list(&t, &n) == LB_OK && n == 3, "listed %d table(s), "
        "expected 3: %s", n, lb_errmsg());
  alarm(0);
  for (i = 0; i < n; i++) {
    if (strcmp(t[i].file, "tune-fifo.txt") == 0) fifo = i;
    else if (strcmp(t[i].file, "tune-0000000000000000.txt") == 0) broken = i;
    else good = i;
  }
  CHECK(good >= 0 && t[good].why[0] == '\0' && t[good].plans == 2 &&
            strcmp(t[good].device, DEV) == 0,
        "the table: %d plan(s), device \"%s\", why \"%s\"",
        good >= 0 ? t[good].plans : -1, good >= 0 ? t[good].device : "",
        good >= 0 ? t[good].why : "");
  CHECK(fifo >= 0 && strstr(t[fifo].why, "not a regular file (a FIFO)"),
        "the FIFO: why \"%s\"", fifo >= 0 ? t[fifo].why : "(not listed)");
  CHECK(broken >= 0 && strstr(t[broken].why, ":3: expected") == NULL &&
            strstr(t[broken].why, "tune-0000000000000000.txt:2: expected") &&
            strcmp(t[broken].device, "other, 1 SMs, sm_80") == 0,
        "the broken table: device \"%s\", why \"%s\"",
        broken >= 0 ? t[broken].device : "", broken >= 0 ? t[broken].why : "");
  lb_free(t);
  refused(lb_tune_list(NULL, &n), LB_EARG, "null", "list into NULL");
  remove(path);
  snprintf(path, sizeof path, "%s/tune-fifo.txt", dir);
  remove(path);
  table_text(dir, path, sizeof path);
  remove(path);
  snprintf(path + strlen(path), 8, ".lock");
  remove(path);
  CHECK(rmdir(dir) == 0, "%s not empty after the test", dir);
  unsetenv("LOWBIT_CACHE_DIR");
  printf("tuning tables listed: a table, a FIFO, a broken one\n");
}

int main(int argc, char **argv) {
  lb_recipe *r = NULL, *r3 = NULL, *r8 = NULL;
  static const char text8[] =
      "name \"w8\"\nactivations \"f16\"\nweights { bits = 8, signed = true }\n"
      "scales { group = \"channel\" }\ndequant \"q * s\"\n";
  static const char text3[] =
      "name \"w3\"\nactivations \"bf16\"\nweights { bits = 3 }\n"
      "scales { group = 64, dtype = \"bf16\" }\nzeros { dtype = \"bf16\" }\n"
      "dequant \"(q - z) * s\"\n";
  if (argc < 2) {
    printf("usage: test_tune RECIPE.lua\n");
    return 2;
  }
  unsetenv("LOWBIT_DUMP_DIR");
  unsetenv("LOWBIT_GEMM");
  unsetenv("LOWBIT_PLAN");
  if (lb_recipe_load(argv[1], &r) != LB_OK ||
      lb_recipe_load_text("w3.lua", text3, strlen(text3), &r3) != LB_OK ||
      lb_recipe_load_text("w8.lua", text8, strlen(text8), &r8) != LB_OK) {
    printf("FAIL: %s\n", lb_errmsg());
    return 1;
  }
  setenv("LOWBIT_CACHE", "0", 1);   /* real compiles */
  plans_parse(r);
  measured_rules(r, r3, r8);
  candidates(r, 1, 1);
  candidates(r3, 8, 1);
  candidates(r, 16, 2);
  candidates(r, 64, 0);
  candidates(r, 1024, 2);
  candidates(r3, 32, 1);
  candidates(r3, 128, 0);
  precompiled(r3);
  table(r);
  listed(r);
  lb_recipe_free(r);
  lb_recipe_free(r3);
  lb_recipe_free(r8);
  printf("%d failure(s)\n", failures);
  return failures != 0;
}
