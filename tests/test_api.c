/*
** test_api.c: the public API without a GPU.  Bad arguments are refused
** with a status and a message; packing round-trips every width exactly and
** puts codes where GemLite's layout says; generation is deterministic;
** NVRTC's complaints come back as LB_ECOMPILE.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_ref.h"
#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

extern const char lb_tpl_pack[];   /* templates/pack.cu, embedded */

/* st must be want, with a message that names `who`. */
static void refused(lb_status st, lb_status want, const char *who,
                    const char *what) {
  CHECK(st == want && strstr(lb_errmsg(), who) != NULL,
        "%s: status %s, message \"%s\"", what, lb_status_name(st),
        lb_errmsg());
}

static lb_recipe *make(int bits, int is_signed, const char *group) {
  char text[512];
  lb_recipe *r = NULL;
  snprintf(text, sizeof text,
           "name \"w%d\"\nactivations \"f16\"\n"
           "weights { bits = %d, signed = %s }\n"
           "scales { group = %s }\ndequant \"q * s\"\n",
           bits, bits, is_signed ? "true" : "false", group);
  if (lb_recipe_load_text("api.lua", text, strlen(text), &r) != LB_OK)
    printf("FAIL: recipe: %s\n", lb_errmsg());
  return r;
}

static void round_trips(void) {
  static const int shapes[][2] = {{1, 32}, {3, 96}, {5, 1024}, {2, 1056}};
  int bits, sg, s;
  for (bits = 1; bits <= 8; bits++)
    for (sg = 0; sg <= 1; sg++) {
      lb_recipe *r = make(bits, sg, "\"channel\"");
      if (r == NULL) {
        failures++;
        continue;
      }
      for (s = 0; s < 4; s++) {
        int n = shapes[s][0], k = shapes[s][1];
        lb_case c;
        uint8_t *back = malloc((size_t)n * (size_t)k);
        size_t i, diff = 0;
        if (back == NULL || !lb_case_make(&c, r, 1, n, k, 77 + bits)) {
          CHECK(0, "case %d-bit %dx%d: %s", bits, n, k, lb_errmsg());
          free(back);
          continue;
        }
        memset(back, 0xee, (size_t)n * (size_t)k);
        CHECK(lb_unpack(r, n, k, c.packed, back) == LB_OK, "unpack: %s",
              lb_errmsg());
        for (i = 0; i < (size_t)n * (size_t)k; i++) diff += back[i] != c.codes[i];
        CHECK(diff == 0, "%d-bit %s %dx%d: %zu codes differ after the round "
              "trip", bits, sg ? "signed" : "unsigned", n, k, diff);
        free(back);
        lb_case_free(&c);
      }
      lb_recipe_free(r);
    }
  printf("pack/unpack round trips: bits 1..8, signed and unsigned, 4 shapes\n");
}

/* Hand-computed positions: GemLite's order puts k = 0 in the top bits. */
static void positions(void) {
  lb_recipe *r4 = make(4, 0, "\"channel\""), *r3 = make(3, 0, "\"channel\"");
  uint8_t codes[1024];
  uint32_t packed[1024];
  uint32_t want = 0;
  int i;
  lb_sizes sz;
  if (!r4 || !r3) {
    failures++;
    return;
  }
  for (i = 0; i < 1024; i++) codes[i] = (uint8_t)((i * 7 + 3) & 15);
  CHECK(lb_pack(r4, 1, 256, codes, packed) == LB_OK, "pack: %s", lb_errmsg());
  for (i = 0; i < 8; i++) want |= (uint32_t)codes[32 * i] << (28 - 4 * i);
  CHECK(packed[0] == want, "4-bit word 0 = %08x, GemLite order says %08x",
        packed[0], want);
  want = 0;
  for (i = 0; i < 8; i++) want |= (uint32_t)codes[32 * i + 5] << (28 - 4 * i);
  CHECK(packed[5] == want, "4-bit word 5 = %08x, expected %08x", packed[5],
        want);
  /* 3 bits: lane 0's codes 0..9 fill bits 31..2 of word 0; code 10
  ** (k = 320) has its top two bits in bits 1..0 and its low bit at the top
  ** of the lane's next word, word 32. */
  for (i = 0; i < 1024; i++) codes[i] = (uint8_t)((i * 5 + 1) & 7);
  CHECK(lb_pack(r3, 1, 1024, codes, packed) == LB_OK, "pack: %s",
        lb_errmsg());
  CHECK(packed[0] >> 29 == codes[0], "3-bit code 0 not in the top bits");
  CHECK((packed[0] & 3) == (uint32_t)(codes[320] >> 1) &&
            packed[32] >> 31 == (uint32_t)(codes[320] & 1),
        "3-bit code 10 does not cross into the lane's next word");
  CHECK(lb_sizes_of(r3, 1, 1024, &sz) == LB_OK && sz.packed == 1024 * 3 / 8,
        "3-bit sizes: %zu bytes for 1024 codes", sz.packed);
  printf("code positions match GemLite's layout (4-bit) and cross words "
         "(3-bit)\n");
  lb_recipe_free(r4);
  lb_recipe_free(r3);
}

/* Every word of the packing, for every width, against the layout written
** out bit by bit: in a tile of 32 * codes k-values, lane l holds k = l,
** l + 32, ... as one big-endian bit stream over words l, l + 32, ...; the
** tail of the last tile is zero.  The output buffer is exactly
** lb_sizes_of's size (ASan sees any overrun) and starts as all ones (every
** word must be written). */
static void bitwise_reference(void) {
  int bits;
  for (bits = 1; bits <= 8; bits++) {
    lb_recipe *r = make(bits, 0, "32");
    int n = 2, words = 0, tile, k, j, kk;
    size_t rw, i, bad = 0;
    lb_sizes sz;
    uint8_t *codes;
    uint32_t *packed, *want;
    unsigned seed = 12345u + (unsigned)bits;
    if (r == NULL) {
      failures++;
      continue;
    }
    while (words * 32 % bits != 0 || words == 0) words++;
    tile = 32 * (32 * words / bits);
    k = 2 * tile + 32;
    if (lb_sizes_of(r, n, k, &sz) != LB_OK) {
      CHECK(0, "%d-bit sizes: %s", bits, lb_errmsg());
      lb_recipe_free(r);
      continue;
    }
    rw = (size_t)(3 * 32 * words);
    CHECK(sz.kpad == 3 * tile && sz.packed == (size_t)n * rw * 4,
          "%d-bit k = %d: kpad %d, %zu bytes; expected %d, %zu", bits, k,
          sz.kpad, sz.packed, 3 * tile, (size_t)n * rw * 4);
    codes = malloc((size_t)n * (size_t)k);
    packed = malloc(sz.packed);
    want = calloc((size_t)n * rw, 4);
    if (codes && packed && want && sz.packed == (size_t)n * rw * 4) {
      for (i = 0; i < (size_t)n * (size_t)k; i++) {
        seed = seed * 1103515245u + 12345u;
        codes[i] = (uint8_t)((seed >> 16) & ((1u << bits) - 1));
      }
      for (j = 0; j < n; j++)
        for (kk = 0; kk < k; kk++) {
          int t = kk / tile, lane = kk % 32, idx = kk % tile / 32, b;
          for (b = 0; b < bits; b++) {
            int sbit = idx * bits + b;   /* stream bit, 0 = top of word 0 */
            size_t w = (size_t)j * rw + (size_t)t * 32 * (size_t)words +
                       (size_t)(sbit / 32) * 32 + (size_t)lane;
            uint32_t v = (codes[(size_t)j * (size_t)k + (size_t)kk] >>
                          (bits - 1 - b)) & 1u;
            want[w] |= v << (31 - sbit % 32);
          }
        }
      memset(packed, 0xff, sz.packed);
      CHECK(lb_pack(r, n, k, codes, packed) == LB_OK, "pack: %s",
            lb_errmsg());
      for (i = 0; i < (size_t)n * rw; i++) bad += packed[i] != want[i];
      CHECK(bad == 0, "%d-bit: %zu of %zu words differ from the bitwise "
            "layout", bits, bad, (size_t)n * rw);
    }
    free(codes);
    free(packed);
    free(want);
    lb_recipe_free(r);
  }
  printf("every packed word matches the bitwise layout, bits 1..8, with a "
         "zero tail\n");
}

/* A recipe read back (lb_recipe_describe), recipes found by name, the
** version and lb_free. */
static void describe_and_find(const char *path) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  lb_recipe *r = NULL, *c = NULL;
  lb_recipe_info in;
  refused(lb_recipe_describe(NULL, &in), LB_EARG, "lb_recipe_describe",
          "NULL recipe");
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
           slash ? path : ".");
  setenv("LOWBIT_RECIPE_PATH", "/nonexistent:", 1);
  CHECK(lb_recipe_load("a16w4_g128", &r) != LB_OK &&
            strstr(lb_errmsg(), "no a16w4_g128.lua in LOWBIT_RECIPE_PATH") &&
            strstr(lb_errmsg(), "/nonexistent"),
        "a name off the path: \"%s\"", lb_errmsg());
  lb_recipe_free(r);
  r = NULL;
  setenv("LOWBIT_RECIPE_PATH", dir, 1);
  CHECK(lb_recipe_load("a16w4_g128", &r) == LB_OK, "by name: %s", lb_errmsg());
  CHECK(lb_recipe_load("a16w8_channel", &c) == LB_OK, "by name: %s",
        lb_errmsg());
  unsetenv("LOWBIT_RECIPE_PATH");
  if (r && lb_recipe_describe(r, &in) == LB_OK)
    CHECK(!strcmp(in.name, "a16w4_g128") && in.bits == 4 && !in.is_signed &&
              in.group == 128 && !strcmp(in.packing, "gemlite32") &&
              !strcmp(in.activations, "f16") && !strcmp(in.scales, "f16") &&
              in.zeros && !strcmp(in.zeros, "f16") &&
              !strcmp(in.dequant, "(q - z) * s") &&
              !strcmp(in.accumulator, "f32") && !strcmp(in.output, "f16") &&
              in.bias && strstr(in.file, "a16w4_g128.lua"),
          "a16w4_g128 described wrongly");
  if (c && lb_recipe_describe(c, &in) == LB_OK)
    CHECK(in.bits == 8 && in.is_signed && in.group == 0 && in.zeros == NULL &&
              !strcmp(in.dequant, "q * s"),
          "a16w8_channel described wrongly");
  if (r && c) {   /* the ranges of rows that share a kernel */
    lb_rows w;
    int m, ranges = 0, next = 1;
    CHECK(lb_rows_of(r, 1, &w) == LB_OK && !strcmp(w.kind, "gemv") &&
              w.lo == 1 && w.hi == 8 && w.bucket == -1,
          "rows of m = 1: %s %d..%d (%d)", w.kind, w.lo, w.hi, w.bucket);
    CHECK(lb_rows_of(r, 12, &w) == LB_OK && !strcmp(w.kind, "gemv") &&
              w.lo == 9 && w.hi == 16 && w.bucket == -2,
          "4-bit rows of m = 12: %s %d..%d (%d)", w.kind, w.lo, w.hi, w.bucket);
    CHECK(lb_rows_of(c, 12, &w) == LB_OK && !strcmp(w.kind, "gemm") &&
              w.lo == 9 && w.hi == 16 && w.bucket == 0,
          "8-bit rows of m = 12: %s %d..%d (%d)", w.kind, w.lo, w.hi, w.bucket);
    CHECK(lb_rows_of(r, 300, &w) == LB_OK && !strcmp(w.kind, "gemm") &&
              w.lo == 257 && w.hi == 384,
          "rows of m = 300: %s %d..%d", w.kind, w.lo, w.hi);
    /* the GEMV's reach from LOWBIT_PLAN's rows: four fragments to 32 rows,
    ** or the GEMM from 9 */
    setenv("LOWBIT_PLAN", "rows=32", 1);
    CHECK(lb_rows_of(r, 24, &w) == LB_OK && !strcmp(w.kind, "gemv") &&
              w.lo == 17 && w.hi == 32 && w.bucket == -3 &&
              lb_rows_of(c, 12, &w) == LB_OK && !strcmp(w.kind, "gemv") &&
              w.lo == 9 && w.hi == 16 && w.bucket == -2 &&
              lb_rows_of(r, 33, &w) == LB_OK && !strcmp(w.kind, "gemm") &&
              w.lo == 33 && w.hi == 64,
          "rows=32: rows of m = 24 / 12 (8-bit) / 33: %s %d..%d (%d)", w.kind,
          w.lo, w.hi, w.bucket);
    setenv("LOWBIT_PLAN", "rows=8", 1);
    CHECK(lb_rows_of(r, 12, &w) == LB_OK && !strcmp(w.kind, "gemm") &&
              w.lo == 9 && w.hi == 16 && w.bucket == 0,
          "rows=8: 4-bit rows of m = 12: %s %d..%d (%d)", w.kind, w.lo, w.hi,
          w.bucket);
    unsetenv("LOWBIT_PLAN");
    /* walked from m = 1: contiguous, each m inside its own range, to the end */
    for (m = 1; m <= LB_MAX_ROWS && lb_rows_of(r, m, &w) == LB_OK; m = w.hi + 1) {
      CHECK(w.lo == next && (w.hi == 0 || w.hi >= w.lo), "range %d: %d..%d",
            ranges, w.lo, w.hi);
      next = w.hi + 1;
      ranges++;
      if (w.hi == 0) break;
    }
    CHECK(ranges == 8 && w.hi == 0 && lb_rows_of(r, LB_MAX_ROWS, &w) == LB_OK &&
              w.hi == 0, "a16w4_g128: %d ranges of rows, the last to %d", ranges,
          w.hi);
    refused(lb_rows_of(r, 0, &w), LB_EARG, "lb_rows_of", "rows of m = 0");
    refused(lb_rows_of(r, LB_MAX_ROWS + 1, &w), LB_EARG, "lb_rows_of",
            "rows past LB_MAX_ROWS");
    refused(lb_rows_of(r, 1, NULL), LB_EARG, "lb_rows_of", "rows into NULL");
    refused(lb_rows_of(NULL, 1, &w), LB_EARG, "lb_rows_of", "rows of NULL");
    /* a shape's reach (lb_rows_at): four fragments in small layers, two in
    ** 8192 x 8192 (4-bit); what lb_rows_of says is the large layers' */
    CHECK(lb_rows_at(r, 1024, 4096, 24, &w) == LB_OK &&
              !strcmp(w.kind, "gemv") && w.lo == 17 && w.hi == 32 &&
              w.bucket == -3 &&
              lb_rows_at(c, 48, 16384, 12, &w) == LB_OK &&
              !strcmp(w.kind, "gemv") && w.bucket == -2 &&
              lb_rows_at(r, 8192, 8192, 24, &w) == LB_OK &&
              !strcmp(w.kind, "gemm") && w.lo == 17 && w.hi == 32 &&
              w.bucket == 1 &&
              lb_rows_at(c, 4096, 4096, 12, &w) == LB_OK &&
              !strcmp(w.kind, "gemm"),
          "lb_rows_at: %s %d..%d (%d)", w.kind, w.lo, w.hi, w.bucket);
    refused(lb_rows_at(r, 0, 4096, 1, &w), LB_EARG, "lb_rows_at",
            "rows of N = 0");
    refused(lb_rows_at(r, 4096, 4096, 0, &w), LB_EARG, "lb_rows_at",
            "rows at m = 0");
  }
  CHECK(lb_version() && strchr(lb_version(), '.'), "lb_version: %s",
        lb_version() ? lb_version() : "NULL");
  lb_free(NULL);
  lb_recipe_free(r);
  lb_recipe_free(c);
  printf("recipes by name and described; version %s\n", lb_version());
}

int main(int argc, char **argv) {
  lb_recipe *r = NULL;
  lb_sizes sz;
  lb_ctx *ctx = NULL;
  lb_op *op = NULL;
  lb_offline off;
  lb_compile_info info;
  lb_kernel_desc kd;
  lb_weights w = {0, 0, 0, 0};
  char *a = NULL, *b = NULL, *log = NULL;
  uint8_t codes[64 * 128];
  uint32_t packed[64 * 128];
  lb_status st;
  if (argc != 2 || lb_recipe_load(argv[1], &r) != LB_OK) {
    fprintf(stderr, "usage: test_api RECIPE (%s)\n", lb_errmsg());
    return 2;
  }
  /* null pointers */
  refused(lb_sizes_of(NULL, 64, 128, &sz), LB_EARG, "lb_sizes_of", "NULL recipe");
  refused(lb_sizes_of(r, 64, 128, NULL), LB_EARG, "lb_sizes_of", "NULL out");
  refused(lb_pack(r, 64, 128, NULL, packed), LB_EARG, "lb_pack", "NULL codes");
  refused(lb_pack(r, 64, 128, codes, NULL), LB_EARG, "lb_pack", "NULL packed");
  refused(lb_unpack(r, 64, 128, NULL, codes), LB_EARG, "lb_unpack", "NULL packed");
  refused(lb_unpack(r, 64, 128, packed, NULL), LB_EARG, "lb_unpack", "NULL codes");
  refused(lb_unpack(NULL, 64, 128, packed, codes), LB_EARG, "lb_unpack",
          "NULL recipe");
  refused(lb_pack(NULL, 64, 128, codes, packed), LB_EARG, "lb_pack",
          "NULL recipe");
  refused(lb_compile_offline("x", 90, NULL, &log), LB_EARG,
          "lb_compile_offline", "NULL info");
  /* destructors and queries take NULL quietly */
  lb_recipe_free(NULL);
  lb_ctx_destroy(NULL);
  lb_op_destroy(NULL);
  CHECK(lb_recipe_name(NULL) != NULL, "lb_recipe_name(NULL) is NULL");
  for (st = LB_OK; st <= LB_EUNSUP; st++)
    CHECK(lb_status_name(st) && *lb_status_name(st), "status %d unnamed", st);
  CHECK(lb_status_name((lb_status)99) != NULL, "status 99: NULL name");
  refused(lb_generate(r, 64, 128, 132, NULL), LB_EARG, "lb_generate", "NULL src");
  refused(lb_generate(NULL, 64, 128, 132, &a), LB_EARG, "lb_generate", "NULL recipe");
  refused(lb_generate_m(r, 64, 128, 0, 132, &a), LB_EARG, "lb_generate_m", "m = 0");
  refused(lb_generate_m(r, 64, 128, -3, 132, &a), LB_EARG, "lb_generate_m", "m < 0");
  refused(lb_generate_m(r, 64, 128, LB_MAX_ROWS + 1, 132, &a), LB_EARG,
          "lb_generate_m", "m past LB_MAX_ROWS");
  refused(lb_generate_m(r, 64, 128, 100, 132, NULL), LB_EARG, "lb_generate", "NULL src (GEMM)");
  refused(lb_generate_m(r, 64, 100, 100, 132, &a), LB_EARG, "k = 100", "GEMM k = 100");
  refused(lb_describe(r, 64, 128, 0, 132, &kd), LB_EARG, "lb_describe", "describe m = 0");
  refused(lb_describe(r, 64, 128, 16, 132, NULL), LB_EARG, "lb_describe", "NULL desc");
  refused(lb_describe(r, 64, 100, 16, 132, &kd), LB_EARG, "k = 100", "describe k = 100");
  CHECK(lb_describe(r, 4096, 4096, 8, 132, &kd) == LB_OK &&
            !strcmp(kd.kind, "gemv") && kd.threads > 0 && kd.smem_lo > 0,
        "describe m = 8: %s", lb_errmsg());
  /* 9..16 rows: the GEMV's two fragments (3- and 4-bit codes) or the GEMM */
  CHECK(lb_describe(r, 4096, 4096, 9, 132, &kd) == LB_OK &&
            (!strcmp(kd.kind, "gemm") ||
             (!strcmp(kd.kind, "gemv") && strstr(kd.plan, "two fragments"))),
        "describe m = 9: %s (%s)", lb_errmsg(), kd.plan);
  CHECK(lb_describe(r, 4096, 4096, 17, 132, &kd) == LB_OK &&
            !strcmp(kd.kind, "gemm") && kd.threads > 0 &&
            kd.smem_lo <= 99 * 1024 && kd.smem_hi <= 227 * 1024,
        "describe m = 17: %s", lb_errmsg());
  {   /* the whole plan text: sm_90's wgmma plan past lb_kernel_desc's 200
      ** bytes; too small a buffer refused, with the size it needs */
    char text[1024], tiny[16];
    size_t need = 0, need2 = 0;
    CHECK(lb_describe(r, 8192, 8192, 128, 132, &kd) == LB_OK &&
              lb_describe_plan(r, 8192, 8192, 128, 132, text, sizeof text,
                               &need) == LB_OK &&
              need == strlen(text) + 1 &&
              strncmp(text, kd.plan, strlen(kd.plan) -
                      (strstr(kd.plan, "...") ? 3 : 0)) == 0 &&
              strstr(text, "bytes of shared memory") != NULL,
          "describe_plan m = 128: %s (%s)", lb_errmsg(), text);
    /* the last rows apart: one row past two 128-row tiles, none where m
    ** fills its tiles */
    CHECK(lb_describe_plan(r, 8192, 8192, 257, 132, text, sizeof text,
                           NULL) == LB_OK &&
              strstr(text, "runs 256 rows, then the last 1 ") != NULL,
          "describe_plan m = 257: %s (%s)", lb_errmsg(), text);
    CHECK(lb_describe_plan(r, 8192, 8192, 256, 132, text, sizeof text,
                           NULL) == LB_OK &&
              strstr(text, "lb_op_tail") == NULL,
          "describe_plan m = 256: %s (%s)", lb_errmsg(), text);
    refused(lb_describe_plan(r, 8192, 8192, 128, 132, tiny, sizeof tiny,
                             &need2), LB_EARG, "takes", "describe_plan short");
    CHECK(need2 == need && tiny[0] == '\0',
          "describe_plan short: need %zu (%zu), buf '%s'", need2, need, tiny);
    refused(lb_describe_plan(r, 8192, 8192, 128, 132, NULL, 8, NULL),
            LB_EARG, "lb_describe_plan", "describe_plan NULL buf");
    refused(lb_describe_plan(NULL, 8192, 8192, 128, 132, text, sizeof text,
                             NULL), LB_EARG, "recipe is NULL",
            "describe_plan NULL recipe");
    refused(lb_describe_plan(r, 8192, 8192, 0, 132, text, sizeof text, NULL),
            LB_EARG, "lb_describe_plan", "describe_plan m = 0");
  }
  refused(lb_op_prepare(NULL, 1, 16), LB_EARG, "lb_op_prepare", "NULL op");
  refused(lb_op_info_m(NULL, 16, &info), LB_EARG, "lb_op_info_m", "NULL op");
  refused(lb_op_create(NULL, r, 64, 128, &op), LB_EARG, "lb_op_create", "NULL ctx");
  refused(lb_pack_device(NULL, r, 64, 128, codes, packed, NULL), LB_EARG,
          "lb_pack_device", "pack_device NULL ctx");
  /* the GPU packer's source compiles for every part, without warnings
  ** (it runs in tests/gpu) */
  {
    static const int archs[] = {80, 86, 89, 90};
    int ai;
    for (ai = 0; ai < 4; ai++) {
      char *plog = NULL;
      lb_offline po;
      CHECK(lb_compile_offline(lb_tpl_pack, archs[ai], &po, &plog) == LB_OK &&
                po.warnings == 0,
            "templates/pack.cu sm_%d: %s %s", archs[ai], lb_errmsg(),
            plog ? plog : "");
      free(plog);
    }
  }
  refused(lb_op_run(NULL, 1, codes, &w, codes, NULL), LB_EARG, "lb_op_run", "NULL op");
  refused(lb_op_info(NULL, &info), LB_EARG, "lb_op_info", "NULL op");
  refused(lb_op_overlap(NULL, 1), LB_EARG, "lb_op_overlap", "NULL op");
  {
    size_t wsb = 1;
    refused(lb_op_workspace(NULL, 16, &wsb), LB_EARG, "lb_op_workspace",
            "NULL op");
    CHECK(wsb == 0, "lb_op_workspace left %zu bytes on a refusal", wsb);
    refused(lb_op_run_ws(NULL, 16, codes, &w, codes, codes, 64, NULL), LB_EARG,
            "lb_op_run", "lb_op_run_ws NULL op");
  }
  {
    int sp = 7, cl = 7;
    refused(lb_op_splits(NULL, 16, &sp, &cl), LB_EARG, "lb_op_splits",
            "NULL op");
    CHECK(sp == 1 && cl == 0, "lb_op_splits left %d, %d on a refusal", sp, cl);
  }
  {
    int tail = 7;
    refused(lb_op_tail(NULL, 300, &tail), LB_EARG, "lb_op_tail", "NULL op");
    CHECK(tail == 0, "lb_op_tail left %d rows on a refusal", tail);
  }
  refused(lb_compile_offline(NULL, 90, &off, &log), LB_EARG,
          "lb_compile_offline", "NULL src");
  /* ptxas' report per entry point, from a log as NVRTC writes it */
  {
    static const char plog[] =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'lb_gemm' for 'sm_90a'\n"
        "ptxas info    : Function properties for lb_gemm\n"
        "    40 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers\n"
        "ptxas info    : Compiling entry function 'lb_gemm_sum' for 'sm_90a'\n"
        "ptxas info    : Used 36 registers\n";
    lb_kernel_use ku[2];
    int nk = -1;
    CHECK(lb_log_kernels(plog, ku, 2, &nk) == LB_OK && nk == 2 &&
              strcmp(ku[0].name, "lb_gemm") == 0 && ku[0].regs == 255 &&
              ku[0].spill == 12 && strcmp(ku[1].name, "lb_gemm_sum") == 0 &&
              ku[1].regs == 36 && ku[1].spill == -1,
          "lb_log_kernels: %d entries (%s %d %d)", nk, nk > 0 ? ku[0].name : "",
          nk > 0 ? ku[0].regs : 0, nk > 0 ? ku[0].spill : 0);
    CHECK(lb_log_kernels(plog, ku, 1, &nk) == LB_OK && nk == 1,
          "lb_log_kernels: max 1 gave %d", nk);
    CHECK(lb_log_kernels(NULL, ku, 2, &nk) == LB_OK && nk == 0,
          "lb_log_kernels: a NULL log gave %d", nk);
    CHECK(lb_log_kernels("Compiling entry function 'lb_g", ku, 2, &nk) == LB_OK &&
              nk == 0, "lb_log_kernels: a cut name gave %d", nk);
    refused(lb_log_kernels(plog, NULL, 2, &nk), LB_EARG, "lb_log_kernels",
            "NULL out");
    refused(lb_log_kernels(plog, ku, 2, NULL), LB_EARG, "lb_log_kernels",
            "NULL count");
  }
  refused(lb_ctx_create(0, NULL), LB_EARG, "lb_ctx_create", "NULL out");
  /* shapes */
  refused(lb_sizes_of(r, 64, 100, &sz), LB_EARG, "lb_sizes_of", "k = 100");
  refused(lb_sizes_of(r, 64, 192, &sz), LB_EARG, "group size 128", "k = 192");
  refused(lb_sizes_of(r, 0, 128, &sz), LB_EARG, "lb_sizes_of", "n = 0");
  refused(lb_sizes_of(r, -5, 128, &sz), LB_EARG, "lb_sizes_of", "n < 0");
  refused(lb_sizes_of(r, 1 << 20, 1 << 16, &sz), LB_EARG, "too large", "huge n*k");
  refused(lb_sizes_of(r, 1, 1 << 27, &sz), LB_EARG, "too large", "k = 2^27");
  refused(lb_sizes_of(r, 64, -128, &sz), LB_EARG, "lb_sizes_of", "k < 0");
  refused(lb_unpack(r, 64, 96, packed, codes), LB_EARG, "lb_unpack",
          "unpack k = 96");
  refused(lb_pack(r, 64, 96, codes, packed), LB_EARG, "lb_pack", "pack k = 96");
  memset(codes, 3, sizeof codes);
  codes[77] = 16;
  refused(lb_pack(r, 64, 128, codes, packed), LB_EARG, "does not fit",
          "code 16 in 4 bits");
  printf("argument checks done\n");

  /* generation is deterministic */
  CHECK(lb_generate(r, 300, 4096, 132, &a) == LB_OK &&
            lb_generate(r, 300, 4096, 132, &b) == LB_OK && strcmp(a, b) == 0,
        "generation not deterministic: %s", lb_errmsg());
  free(b);
  b = NULL;
  CHECK(lb_generate(r, 300, 4096, 0, &b) == LB_EARG, "sms = 0 accepted");
  printf("generation deterministic (%zu bytes)\n", a ? strlen(a) : 0);

  /* NVRTC errors come back with its message */
  st = lb_compile_offline("this is not CUDA;", 90, &off, &log);
  CHECK(st == LB_ECOMPILE && strstr(lb_errmsg(), "NVRTC") != NULL,
        "garbage source: status %s, \"%s\"", lb_status_name(st), lb_errmsg());
  free(log);
  log = NULL;
  refused(lb_compile_offline(a, 70, &off, &log), LB_EARG, "sm_70", "sm_70");
  printf("NVRTC errors reported: %.60s...\n", lb_errmsg());

  /* no GPU here (CI): a clean LB_ENODEV; with one: a context */
  st = lb_ctx_create(0, &ctx);
  CHECK(st == LB_OK || ((st == LB_ENODEV || st == LB_ECUDA) &&
                        strlen(lb_errmsg()) > 0),
        "lb_ctx_create: %s \"%s\"", lb_status_name(st), lb_errmsg());
  printf("lb_ctx_create: %s%s%s\n", lb_status_name(st), st ? ": " : "",
         st ? lb_errmsg() : "");
  if (st == LB_OK) {
    lb_ctx *other = NULL;
    refused(lb_ctx_create(99, &other), LB_EARG, "does not exist", "device 99");
    lb_ctx_destroy(ctx);
  }

  describe_and_find(argv[1]);
  round_trips();
  positions();
  bitwise_reference();
  free(a);
  lb_recipe_free(r);
  printf("api: %d failure(s)\n", failures);
  return failures != 0;
}
