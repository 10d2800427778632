/*
** lowbit.c: the command-line tool.
**
**   lowbit check RECIPE...                 validate recipes
**   lowbit gen RECIPE [-o FILE] [--n N --k K --sms S]
**   lowbit compile RECIPE [--arch sm_90] [--n N --k K --sms S]
**   lowbit run RECIPE [--m M --n N --k K]  check and time on the GPU
**   lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes 4096x4096,...] [--out DIR]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_bench.h"
#include "lb_gen.h"
#include "lb_nvrtc.h"
#include "lowbit.h"

static const char usage[] =
  "usage:\n"
  "  lowbit check RECIPE...\n"
  "  lowbit gen RECIPE [-o FILE] [--n N] [--k K] [--sms S]\n"
  "  lowbit compile RECIPE [--arch sm_90[,sm_80...]] [--n N] [--k K] [--sms S]\n"
  "  lowbit run RECIPE [--m M] [--n N] [--k K] [--iters I] [--flush read|write]\n"
  "  lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes KxN,...] [--iters I] "
  "[--out DIR]\n"
  "               [--flush read|write]  (L2 flush before each timed launch; "
  "default read)\n"
  "Shapes are K x N (in x out); defaults n = k = 8192, sms = 132.\n";

typedef struct args {
  const char *files[LB_BENCH_MAX];
  int nfiles;
  const char *out, *arch, *shapes, *ms, *flush;
  int n, k, m, sms, iters;
} args;

static int to_int(const char *s, int *v) {
  char *end;
  long x = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || x <= 0 || x > 1 << 30) return 0;
  *v = (int)x;
  return 1;
}

static int parse(int argc, char **argv, args *a) {
  int i;
  memset(a, 0, sizeof *a);
  a->n = a->k = 8192;
  a->m = 1;
  a->sms = 132;
  for (i = 2; i < argc; i++) {
    const char *o = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (o[0] != '-') {
      if (a->nfiles == LB_BENCH_MAX) {
        fprintf(stderr, "lowbit: too many recipes (max %d)\n", LB_BENCH_MAX);
        return 0;
      }
      a->files[a->nfiles++] = o;
      continue;
    }
    if (v == NULL) {
      fprintf(stderr, "lowbit: %s needs a value\n", o);
      return 0;
    }
    if (!strcmp(o, "-o") || !strcmp(o, "--out")) a->out = v;
    else if (!strcmp(o, "--arch")) a->arch = v;
    else if (!strcmp(o, "--shapes")) a->shapes = v;
    else if (!strcmp(o, "--flush")) a->flush = v;
    else if (!strcmp(o, "--n")) ok = to_int(v, &a->n);
    else if (!strcmp(o, "--k")) ok = to_int(v, &a->k);
    else if (!strcmp(o, "--sms")) ok = to_int(v, &a->sms);
    else if (!strcmp(o, "--iters")) ok = to_int(v, &a->iters);
    else if (!strcmp(o, "--m")) { a->ms = v; ok = 1; }
    else {
      fprintf(stderr, "lowbit: unknown option %s\n%s", o, usage);
      return 0;
    }
    if (!ok) {
      fprintf(stderr, "lowbit: %s %s: not a positive integer\n", o, v);
      return 0;
    }
    i++;
  }
  return 1;
}

static lb_recipe *load(const char *path) {
  lb_recipe *r;
  if (lb_recipe_load(path, &r) != LB_OK) {
    fprintf(stderr, "%s\n", lb_errmsg());
    return NULL;
  }
  return r;
}

static int cmd_check(const args *a) {
  int i, bad = 0;
  if (a->nfiles == 0) {
    fputs(usage, stderr);
    return 2;
  }
  for (i = 0; i < a->nfiles; i++) {
    lb_recipe *r = load(a->files[i]);
    if (r == NULL) {
      bad = 1;
      continue;
    }
    printf("%s: ok (%s)\n", a->files[i], lb_recipe_name(r));
    lb_recipe_free(r);
  }
  return bad;
}

static int cmd_gen(const args *a) {
  lb_recipe *r;
  char *src;
  FILE *f = stdout;
  int rc = 0;
  if (a->nfiles != 1) {
    fputs(usage, stderr);
    return 2;
  }
  if ((r = load(a->files[0])) == NULL) return 1;
  if (lb_generate(r, a->n, a->k, a->sms, &src) != LB_OK) {
    fprintf(stderr, "lowbit gen: %s\n", lb_errmsg());
    lb_recipe_free(r);
    return 1;
  }
  if (a->out && (f = fopen(a->out, "w")) == NULL) {
    fprintf(stderr, "lowbit gen: cannot write %s\n", a->out);
    rc = 1;
  } else {
    if (fputs(src, f) < 0) rc = 1;
    if (f != stdout && fclose(f) != 0) rc = 1;
    if (rc) fprintf(stderr, "lowbit gen: write failed\n");
  }
  free(src);
  lb_recipe_free(r);
  return rc;
}

/* "sm_90,sm_80" -> 90, 80 */
static int parse_archs(const char *s, int *archs, int max) {
  int n = 0;
  while (s && *s && n < max) {
    int v = 0;
    if (strncmp(s, "sm_", 3) == 0) s += 3;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    if (v < 80 || (*s && *s != ',')) return -1;
    archs[n++] = v;
    if (*s == ',') s++;
  }
  return n;
}

static int cmd_compile(const args *a) {
  lb_recipe *r;
  char *src;
  int archs[8], na, i, rc = 0;
  if (a->nfiles != 1) {
    fputs(usage, stderr);
    return 2;
  }
  na = parse_archs(a->arch ? a->arch : "sm_90", archs, 8);
  if (na <= 0) {
    fprintf(stderr, "lowbit compile: --arch wants sm_80 or newer, like "
                    "sm_90 or sm_80,sm_90\n");
    return 2;
  }
  if ((r = load(a->files[0])) == NULL) return 1;
  if (lb_generate(r, a->n, a->k, a->sms, &src) != LB_OK) {
    fprintf(stderr, "lowbit compile: %s\n", lb_errmsg());
    lb_recipe_free(r);
    return 1;
  }
  for (i = 0; i < na; i++) {
    lb_offline info;
    char *log = NULL;
    if (lb_compile_offline(src, archs[i], &info, &log) != LB_OK) {
      fprintf(stderr, "lowbit compile: %s\n", lb_errmsg());
      rc = 1;
      continue;
    }
    printf("%s sm_%d: %.3f s, %s, %zu bytes %s, %d warning(s)\n",
           lb_recipe_name(r), archs[i], info.seconds,
           info.cache ? "disk cache hit" : "compiled", info.binary,
           info.ptx ? "PTX (NVRTC does not know this arch; the driver "
                      "finishes it)" : "CUBIN",
           info.warnings);
    if (!info.ptx) {
      static const char *const fns[] = {LB_KERNEL, LB_KERNEL_XS};
      int regs, spill, f;
      for (f = 0; f < 2; f++) {
        lb_log_resources(log, fns[f], &regs, &spill);
        if (regs >= 0)
          printf("  %s: %d registers, %d bytes spilled\n", fns[f], regs,
                 spill);
      }
    }
    if (info.warnings) {
      printf("%s", log ? log : "");
      rc = 1;
    }
    free(log);
  }
  free(src);
  lb_recipe_free(r);
  return rc;
}

/* "1,2,4" -> list */
static int parse_list(const char *s, int *v, int max) {
  int n = 0;
  char buf[256], *tok, *save = NULL;
  snprintf(buf, sizeof buf, "%s", s);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == max || !to_int(tok, &v[n])) return -1;
    n++;
  }
  return n;
}

static int parse_shapes(const char *s, lb_bench_opts *o) {
  char buf[512], *tok, *save = NULL;
  snprintf(buf, sizeof buf, "%s", s);
  o->nshapes = 0;
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *x = strchr(tok, 'x');
    if (x == NULL || o->nshapes == LB_BENCH_MAX) return 0;
    *x = '\0';
    if (!to_int(tok, &o->k[o->nshapes]) || !to_int(x + 1, &o->n[o->nshapes]))
      return 0;
    o->nshapes++;
  }
  return o->nshapes > 0;
}

static int cmd_bench(const args *a, int single) {
  /* the shipped recipes, wherever the tool is run from */
  static const char *all[] = {
    LB_RECIPES "/a16w8_channel.lua", LB_RECIPES "/a16w4_g128.lua",
    LB_RECIPES "/a16w2_g64.lua", LB_RECIPES "/a16w1_g64.lua",
    LB_RECIPES "/a16w3_g128.lua", LB_RECIPES "/bf16w4_g128.lua"
  };
  static const int defk[] = {4096, 8192, 4096, 14336};
  static const int defn[] = {4096, 8192, 14336, 4096};
  lb_bench_opts o;
  int i;
  memset(&o, 0, sizeof o);
  if (single && a->nfiles != 1) {
    fputs(usage, stderr);
    return 2;
  }
  for (i = 0; i < a->nfiles; i++) o.recipes[o.nrecipes++] = a->files[i];
  if (o.nrecipes == 0)
    for (i = 0; i < (int)(sizeof all / sizeof all[0]); i++)
      o.recipes[o.nrecipes++] = all[i];
  if (single) {
    o.k[0] = a->k;
    o.n[0] = a->n;
    o.nshapes = 1;
  } else if (a->shapes) {
    if (!parse_shapes(a->shapes, &o)) {
      fprintf(stderr, "lowbit bench: --shapes wants KxN,KxN...\n");
      return 2;
    }
  } else {
    for (i = 0; i < 4; i++) {
      o.k[i] = defk[i];
      o.n[i] = defn[i];
    }
    o.nshapes = 4;
  }
  if (a->ms) {
    o.nm = parse_list(a->ms, o.m, LB_BENCH_MAX);
    if (o.nm <= 0) {
      fprintf(stderr, "lowbit: --m wants a list like 1,2,4,8\n");
      return 2;
    }
  } else if (single) {
    o.m[0] = 1;
    o.nm = 1;
  } else {
    o.m[0] = 1; o.m[1] = 2; o.m[2] = 4; o.m[3] = 8;
    o.nm = 4;
  }
  if (a->flush && strcmp(a->flush, "read") && strcmp(a->flush, "write")) {
    fprintf(stderr, "lowbit: --flush wants read or write\n");
    return 2;
  }
  o.flush_write = a->flush && !strcmp(a->flush, "write");
  o.warmup = 10;
  o.iters = a->iters ? a->iters : 100;
  o.outdir = a->out;
  return lb_bench_run(&o);
}

int main(int argc, char **argv) {
  args a;
  const char *cmd = argc > 1 ? argv[1] : "";
  if (argc < 2 || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!parse(argc, argv, &a)) return 2;
  if (!strcmp(cmd, "check")) return cmd_check(&a);
  if (!strcmp(cmd, "gen")) return cmd_gen(&a);
  if (!strcmp(cmd, "compile")) return cmd_compile(&a);
  if (!strcmp(cmd, "run")) return cmd_bench(&a, 1);
  if (!strcmp(cmd, "bench")) return cmd_bench(&a, 0);
  fprintf(stderr, "lowbit: unknown command '%s'\n%s", cmd, usage);
  return 2;
}
