/*
** main.c: a program outside the tree, built against an installed lowbit
** (find_package or pkg-config).  usage: consumer RECIPE_FILE [ARCH]
** Loads the recipe, sizes, packs and unpacks a layer, generates its CUDA
** source and, given ARCH, compiles it with NVRTC; no GPU is used.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lowbit.h>

#define N 256
#define K 512

static int fail(const char *what, lb_status st) {
  printf("consumer: FAIL %s: %s: %s\n", what, lb_status_name(st),
         lb_errmsg());
  return 1;
}

int main(int argc, char **argv) {
  static uint8_t codes[N * K], back[N * K];
  lb_recipe *r = NULL;
  lb_sizes sz;
  uint32_t *packed;
  char *src = NULL;
  lb_status st;
  int i, rc = 0;
  if (argc < 2) {
    fputs("usage: consumer RECIPE_FILE [ARCH]\n", stderr);
    return 2;
  }
  if ((st = lb_recipe_load(argv[1], &r)) != LB_OK) return fail("load", st);
  if ((st = lb_sizes_of(r, N, K, &sz)) != LB_OK) return fail("sizes", st);
  if (sz.packed == 0 || sz.scales == 0 || sz.groups < 1)
    return fail("sizes are zero", LB_OK);
  /* codes within any width: the low bit only */
  for (i = 0; i < N * K; i++) codes[i] = (uint8_t)((i * 7 + i / K) & 1);
  packed = malloc(sz.packed);
  if (packed == NULL) return fail("malloc", LB_EMEM);
  if ((st = lb_pack(r, N, K, codes, packed)) != LB_OK) return fail("pack", st);
  if ((st = lb_unpack(r, N, K, packed, back)) != LB_OK)
    return fail("unpack", st);
  free(packed);
  if (memcmp(codes, back, sizeof codes) != 0)
    return fail("unpacked codes differ", LB_OK);
  if ((st = lb_generate(r, N, K, 132, &src)) != LB_OK)
    return fail("generate", st);
  if (strlen(src) == 0 || strstr(src, "__global__") == NULL)
    return fail("generated source has no kernel", LB_OK);
  printf("consumer: lowbit %s, %s: %zu packed bytes, %zu bytes of CUDA\n",
         lb_version(), lb_recipe_name(r), sz.packed, strlen(src));
  if (argc > 2) {
    lb_offline info;
    char *log = NULL;
    st = lb_compile_offline(src, atoi(argv[2]), &info, &log);
    if (st != LB_OK || info.binary == 0) {
      rc = fail("compile", st);
      if (log) printf("%s\n", log);
    } else {
      printf("consumer: sm_%s: %zu bytes of %s, %d warnings\n", argv[2],
             info.binary, info.ptx ? "PTX" : "CUBIN", info.warnings);
    }
    lb_free(log);
  }
  lb_free(src);
  lb_recipe_free(r);
  return rc;
}
