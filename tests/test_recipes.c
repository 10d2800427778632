/*
** test_recipes.c: every recipe in recipes/ loads, generates the same bytes
** twice, compiles with NVRTC for sm_80, sm_86, sm_89 and sm_90 with no
** warnings, and its host packing round-trips random codes exactly.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_nvrtc.h"
#include "lb_recipe.h"
#include "lb_ref.h"
#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

static void round_trip(const lb_recipe *r, int n, int k, uint64_t seed) {
  lb_case c;
  uint8_t *back;
  size_t i, total = (size_t)n * (size_t)k, diff = 0;
  if (!lb_case_make(&c, r, 1, n, k, seed)) {
    CHECK(0, "lb_case_make %dx%d: %s", n, k, lb_errmsg());
    return;
  }
  back = malloc(total);
  CHECK(back != NULL, "no memory");
  if (back) {
    memset(back, 0xa5, total);
    CHECK(lb_unpack(r, n, k, c.packed, back) == LB_OK, "lb_unpack: %s",
          lb_errmsg());
    for (i = 0; i < total; i++) diff += back[i] != c.codes[i];
    CHECK(diff == 0, "pack/unpack %dx%d: %zu codes differ", n, k, diff);
  }
  free(back);
  lb_case_free(&c);
}

/* The float64 reference, which shares channels among threads past a
** size, against its definition summed here in one thread in the same
** order: equal to the last bit. */
static void reference(const lb_recipe *r, uint64_t seed) {
  lb_case c;
  int m = 3, n = 401, k = 4096 + (r->group ? r->group : 32), i, j, kk;
  double *y = malloc(sizeof(double) * (size_t)m * (size_t)n);
  size_t diff = 0;
  if (!lb_case_make(&c, r, m, n, k, seed)) {
    CHECK(0, "lb_case_make: %s", lb_errmsg());
    free(y);
    return;
  }
  CHECK(y != NULL, "no memory");
  if (y && !lb_case_reference(&c, y, NULL)) {
    CHECK(0, "lb_case_reference: %s", lb_errmsg());
  } else if (y) {
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        double s = 0;
        for (kk = 0; kk < k; kk++)
          s += lb_load(r->act, c.x, (size_t)i * (size_t)k + (size_t)kk) *
               lb_case_weight(&c, j, kk);
        s += c.bias ? lb_load(r->out, c.bias, (size_t)j) : 0;
        diff += s != y[(size_t)i * (size_t)n + (size_t)j];
      }
    CHECK(diff == 0, "reference %dx%dx%d: %zu outputs differ", m, n, k, diff);
  }
  free(y);
  lb_case_free(&c);
}

/* The benchmark's dense weights (lb_case_dense, channels over threads)
** against one thread's loop: the same bytes. */
static void dense(const lb_recipe *r, uint64_t seed) {
  lb_case c;
  int n = 401, k = 4096 + (r->group ? r->group : 32), j, kk;
  const size_t total = (size_t)n * (size_t)k;
  uint16_t *a = malloc(total * 2), *b = malloc(total * 2);
  CHECK(a != NULL && b != NULL, "no memory");
  if (a && b && lb_case_make(&c, r, 1, n, k, seed)) {
    memset(a, 0x5a, total * 2);
    memset(b, 0xa5, total * 2);
    for (j = 0; j < n; j++)
      for (kk = 0; kk < k; kk++)
        lb_store(r->act, a, (size_t)j * (size_t)k + (size_t)kk, lb_case_weight(&c, j, kk));
    lb_case_dense(&c, b);
    CHECK(memcmp(a, b, total * 2) == 0, "dense weights %dx%d differ", n, k);
    lb_case_free(&c);
  } else if (a && b) {
    CHECK(0, "lb_case_make: %s", lb_errmsg());
  }
  free(a);
  free(b);
}

/* The case's packed words (lb_case_make packs channel ranges on several
** cores past a size) against one lb_pack of all its codes: the same
** words. */
static void packed_whole(const lb_recipe *r, uint64_t seed) {
  lb_case c;
  const int n = 1031, k = 4096 + (r->group ? r->group : 32);
  uint32_t *whole;
  if (!lb_case_make(&c, r, 1, n, k, seed)) {
    CHECK(0, "lb_case_make: %s", lb_errmsg());
    return;
  }
  whole = malloc(c.packed_bytes);
  CHECK(whole != NULL, "no memory");
  if (whole) {
    memset(whole, 0x5a, c.packed_bytes);
    CHECK(lb_pack(r, n, k, c.codes, whole) == LB_OK, "lb_pack: %s", lb_errmsg());
    CHECK(memcmp(whole, c.packed, c.packed_bytes) == 0,
          "packed %dx%d: the case's words differ from one lb_pack's", n, k);
  }
  free(whole);
  lb_case_free(&c);
}

/* sm_90 alone, for the kernels only it runs (early GEMVs, wgmma plans). */
static const int sm90[] = {90};

/* lb_test_no_spills on log, labelled "m=M sm_A"; the kernels reported. */
static int check_resources(const char *log, int m, int arch) {
  char what[32];
  int regs, spill;
  snprintf(what, sizeof what, "m=%d sm_%d", m, arch);
  return lb_test_no_spills(log, what, &regs, &spill);
}

/* src compiled for every arch: no warnings, a binary, and every kernel's
** registers with no spilled byte.  m labels it.  (Before 2026-11-28 only
** the GEMM's lb_gemm was checked for spills, though the GEMV's lines
** said "without spills".) */
static void compile_for(const char *src, int m, const int *archs,
                        size_t narch) {
  size_t i;
  for (i = 0; i < narch; i++) {
    lb_offline info;
    char *log = NULL;
    int found = 0;
    lb_status st = lb_compile_offline(src, archs[i], &info, &log);
    CHECK(st == LB_OK, "m=%d sm_%d: %s", m, archs[i], lb_errmsg());
    if (st == LB_OK) {
      CHECK(info.warnings == 0, "m=%d sm_%d: %d warning(s):\n%s", m,
            archs[i], info.warnings, log ? log : "");
      CHECK(info.binary > 0, "m=%d sm_%d: empty binary", m, archs[i]);
      found = info.ptx ? 1 : check_resources(log, m, archs[i]);
      /* NVRTC 13.0.2 (the GPU machine's) returned binaries without
      ** ptxas's report, in 0.02 s, for sm_86 and sm_89 at M = 1024,
      ** whose plan and so PTX equal M = 128's, compiled before: it
      ** seems to keep ptxas's work by PTX.  One more (empty) kernel
      ** makes the PTX new, and ptxas reports again. */
      if (found == 0) {
        size_t len = strlen(src);
        char *again = malloc(len + 64);
        if (again) {
          lb_offline info2;
          char *log2 = NULL;
          snprintf(again, len + 64,
                   "%s\nextern \"C\" __global__ void lb_again_%d() {}\n",
                   src, m);
          if (lb_compile_offline(again, archs[i], &info2, &log2) == LB_OK)
            found = check_resources(log2, m, archs[i]);
          free(log2);
          free(again);
        }
      }
      CHECK(found > 0, "m=%d sm_%d: no resource report", m, archs[i]);
      printf("  m=%d sm_%d: %zu bytes CUBIN, %.2f s%s, %d warnings\n", m,
             archs[i], info.binary, info.seconds,
             info.cache ? " (cache)" : "", info.warnings);
    }
    free(log);
  }
}

/* What a line says of the compiles since the failure count was f0: a
** line must not call clean what a CHECK above it has just failed. */
static const char *verdict(int f0) {
  return failures == f0 ? "without warnings or spills" : "FAILED (above)";
}

static void compile_archs(const char *src, int m) {
  static const int archs[] = {80, 86, 89, 90};
  compile_for(src, m, archs, sizeof archs / sizeof archs[0]);
}

static void one(const char *path) {
  lb_recipe *r;
  char *a = NULL, *b = NULL, *other = NULL;
  printf("%s\n", path);
  if (lb_recipe_load(path, &r) != LB_OK) {
    CHECK(0, "load: %s", lb_errmsg());
    return;
  }
  CHECK(lb_generate(r, 4096, 4096, 132, &a) == LB_OK, "gen: %s", lb_errmsg());
  CHECK(lb_generate(r, 4096, 4096, 132, &b) == LB_OK, "gen: %s", lb_errmsg());
  CHECK(lb_generate(r, 4096, 14336, 132, &other) == LB_OK, "gen: %s",
        lb_errmsg());
  if (a && b && other) {
    CHECK(strcmp(a, b) == 0, "generation is not deterministic");
    CHECK(strcmp(a, other) != 0, "different shapes gave the same source");
    printf("  generated %zu bytes, deterministic\n", strlen(a));
  }
  if (a) compile_archs(a, 1);
  {
    /* K of one tile, few channel groups (1024 x 256): where the rules
    ** split each tile's code rows over a group's warps (3-, 5- and 7-bit
    ** codes), the kernel of one instance a part, compiled for each arch */
    char *sk = NULL;
    lb_gemv_cfg c;
    CHECK(lb_gen_gemv(r, 256, 1024, 1, 132, NULL, "test", 0, &c, &sk) ==
              LB_OK,
          "gen 1024 x 256: %s", lb_errmsg());
    if (sk) {
      CHECK((strstr(sk, "constexpr bool LB_RSPLIT = true;") != NULL) ==
                (c.rsplit != 0),
            "1024 x 256: the source's LB_RSPLIT is not the plan's (%d)",
            c.rsplit);
      const int f0 = failures;
      compile_archs(sk, 1);
      printf("  GEMV 1024 x 256%s: sm_80/86/89/90 %s\n",
             c.rsplit ? " (a tile's code rows split)" : "", verdict(f0));
    }
    free(sk);
  }
  {
    /* The GEMVs lb_op_overlap makes (sm_90, launched early: x by plain
    ** loads), wide and narrow (clusters): the plain source but for
    ** LB_EARLY, compiled without warnings or spills. */
    static const int ns[] = {4096, 128};
    size_t j;
    for (j = 0; j < sizeof ns / sizeof ns[0]; j++) {
      char *e = NULL, *p = NULL;
      CHECK(lb_gen_gemv(r, ns[j], 4096, 1, 132, NULL, "test", 1, NULL, &e) ==
                    LB_OK &&
                lb_gen_gemv(r, ns[j], 4096, 1, 132, NULL, "test", 0, NULL,
                            &p) == LB_OK,
            "gen early n=%d: %s", ns[j], lb_errmsg());
      if (e && p) {
        static const char off[] = "constexpr bool LB_EARLY = false;",
                          on[] = "constexpr bool LB_EARLY = true;";
        const char *pe = strstr(p, off), *ee = strstr(e, on);
        CHECK(pe && ee &&
                  strcmp(pe + sizeof off - 1, ee + sizeof on - 1) == 0,
              "n=%d: the early GEMV differs from the plain one past "
              "LB_EARLY", ns[j]);
        const int f0 = failures;
        compile_for(e, 1, sm90, 1);
        printf("  GEMV n=%d early (lb_op_overlap): sm_90 %s\n", ns[j],
               verdict(f0));
      }
      free(e);
      free(p);
    }
  }
  {
    /* The kernels the rules give m rows at a shape, compiled without
    ** warnings or spills.  The benchmark's headline shape, 8192 x 8192,
    ** where a warp has two tiles: 1 and 16 rows, sm_90 (its two-fragment
    ** GEMV had an unused lb_gemv_xs that spilled until 2026-11-28; so did
    ** 5-bit codes in groups of 64 at 1 row, which test_sweep's fixed rows
    ** check).  Small layers, where the rules give the GEMV 9..32 rows (two
    ** and four fragments of x) for most widths: 16 and 32 rows, sm_80 and
    ** sm_90 (the two-fragment lb_gemv_xs of 4-bit codes at K = 1024
    ** spilled 4 bytes on sm_90 until 2026-11-29). */
    static const int at[][4] = {   /* N, K, m, sm_80 too */
        {8192, 8192, 1, 0},  {8192, 8192, 16, 0}, {256, 1024, 16, 1},
        {256, 1024, 32, 1},  {4096, 1024, 16, 1}, {4096, 1024, 32, 1},
        {1024, 256, 16, 1},  {1024, 256, 32, 1},  {48, 16384, 16, 1},
        {48, 16384, 32, 1}};
    static const int a8090[] = {80, 90};
    size_t q;
    for (q = 0; q < sizeof at / sizeof at[0]; q++) {
      const int n = at[q][0], k = at[q][1], m = at[q][2];
      char *g = NULL;
      const int f0 = failures;
      CHECK(lb_generate_m(r, n, k, m, 132, &g) == LB_OK,
            "gen %d x %d m=%d: %s", k, n, m, lb_errmsg());
      if (g) compile_for(g, m, at[q][3] ? a8090 : sm90, at[q][3] ? 2 : 1);
      printf("  %d x %d m=%d (%s): sm_%s %s\n", k, n, m,
             m <= lb_gemv_rows(r, n, k) ? "GEMV" : "GEMM",
             at[q][3] ? "80/90" : "90", verdict(f0));
      free(g);
    }
  }
  {
    /* Every GEMM bucket: deterministic, its own source, and compiled for
    ** each arch without warnings or spills (CI has no GPU: this is where
    ** every kernel a recipe can launch is compiled). */
    static const int ms[] = {16, 32, 64, 128, 1024};
    const int reach = lb_gemv_rows(r, 4096, 4096);   /* the rules', here */
    size_t j;
    for (j = 0; j < sizeof ms / sizeof ms[0]; j++) {
      char *g1 = NULL, *g2 = NULL;
      int f0 = failures;
      CHECK(lb_generate_m(r, 4096, 4096, ms[j], 132, &g1) == LB_OK &&
                lb_generate_m(r, 4096, 4096, ms[j], 132, &g2) == LB_OK,
            "gen m=%d: %s", ms[j], lb_errmsg());
      if (g1 && g2) {
        CHECK(strcmp(g1, g2) == 0, "m=%d: generation is not deterministic",
              ms[j]);
        CHECK(a == NULL || strcmp(g1, a) != 0, "m=%d: the GEMV's source",
              ms[j]);
      }
      /* (9..32 rows: the GEMV's fragments where the recipe takes them) */
      if (g1) compile_archs(g1, ms[j]);
      printf("  %s m=%d: deterministic, sm_80/86/89/90 %s\n",
             ms[j] <= reach ? "GEMV" : "GEMM", ms[j],
             verdict(f0));
      free(g1);
      free(g2);
      /* the GEMM's bucket where the GEMV takes these rows here: wider
      ** layers, a table's or a plan's smaller reach run it */
      if (ms[j] <= reach) {
        char *gm = NULL;
        f0 = failures;
        CHECK(lb_gen_gemm(r, 4096, 4096, lb_gemm_bucket(ms[j]), 132, NULL,
                          NULL, NULL, &gm) == LB_OK,
              "gen GEMM m=%d: %s", ms[j], lb_errmsg());
        if (gm) compile_archs(gm, ms[j]);
        printf("  GEMM m=%d: sm_80/86/89/90 %s\n", ms[j], verdict(f0));
        free(gm);
      }
      /* the wgmma plan (wg=1), which only sm_90 (as sm_90a) runs */
      {
        char *gw = NULL;
        f0 = failures;
        CHECK(lb_gen_gemm(r, 4096, 4096, lb_gemm_bucket(ms[j]), 132, "wg=1",
                          "test", NULL, &gw) == LB_OK &&
                  strstr(gw, "constexpr bool LB_WG = true;"),
              "gen m=%d wg=1: %s", ms[j], lb_errmsg());
        if (gw) compile_for(gw, ms[j], sm90, 1);
        printf("  GEMM m=%d wg=1: sm_90a %s\n", ms[j], verdict(f0));
        free(gw);
      }
    }
  }
  {
    /* The GEMV's reach past the rules' (a plan's rows knob, which lowbit
    ** tune may keep): two fragments at rows=16, four at rows=32, compiled for
    ** each arch without warnings or spills, at 4096 x 4096 and 8192 x
    ** 8192; or refused, saying why, where the GEMV cannot take them. */
    static const int rm[] = {16, 32};
    size_t j, q;
    for (j = 0; j < sizeof rm / sizeof rm[0]; j++)
      for (q = 4096; q <= 8192; q += 4096) {
        char *g = NULL;
        const int f0 = failures;
        const lb_status st =
            lb_generate_plan(r, (int)q, (int)q, rm[j], 132,
                             rm[j] > 16 ? "rows=32" : "rows=16", &g);
        if (st != LB_OK) {
          CHECK(strstr(lb_errmsg(), "dequantises in f32") != NULL ||
                    (rm[j] > 16 && strstr(lb_errmsg(), "fragments of x spill")),
                "gen rows=%d: %s", rm[j], lb_errmsg());
          printf("  GEMV rows=%d: refused (%s)\n", rm[j], lb_errmsg());
          break;
        }
        CHECK(strstr(g, rm[j] > 16 ? "LB_NF = 4" : "LB_NF = 2") != NULL,
              "gen rows=%d: not %d fragments", rm[j], rm[j] / 8);
        compile_archs(g, rm[j]);
        printf("  GEMV rows=%d %zu x %zu: sm_80/86/89/90 %s\n", rm[j], q, q,
               verdict(f0));
        free(g);
      }
  }
  round_trip(r, 3, r->group ? r->group : 32, 1);
  round_trip(r, 17, 1024, 2);
  round_trip(r, 5, 4096 + (r->group ? r->group : 32), 3);
  printf("  pack/unpack round trips checked\n");
  reference(r, 4);
  dense(r, 5);
  packed_whole(r, 6);
  printf("  float64 reference checked\n");
  free(a);
  free(b);
  free(other);
  lb_recipe_free(r);
}

int main(int argc, char **argv) {
  char *names[256];
  /* a directory with fewer recipes than expected is a failure, not a pass */
  int least = argc == 3 ? atoi(argv[2]) : 5;
  int n = argc == 2 || argc == 3 ? lb_test_lua_files(argv[1], names, 256) : -1;
  int i;
  if (n < 0 || least < 1) {
    fprintf(stderr, "usage: test_recipes RECIPE_DIR [AT_LEAST]\n");
    return 2;
  }
  if (n < least) {
    printf("FAIL: only %d recipes in %s\n", n, argv[1]);
    failures++;
  }
  for (i = 0; i < n; i++) {
    one(names[i]);
    free(names[i]);
  }
  printf("%d recipes, %d failure(s)\n", n, failures);
  return failures != 0;
}
