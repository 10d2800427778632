/*
** lowbit.c: the command-line tool.
**
**   lowbit check RECIPE...                 validate recipes
**   lowbit gen RECIPE [-o FILE] [--n N --k K --m M --sms S]
**   lowbit compile RECIPE [--arch sm_90] [--n N --k K --m M,... --sms S]
**   lowbit run RECIPE [--m M,... --n N --k K]  check and time on the GPU
**   lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes 4096x4096,...] [--out DIR]
**   lowbit tune RECIPE [--n N --k K --m M,...]  the tuning table (lb_tuner.h)
**
** RECIPE "-" is standard input.  Exit status: 0 ok, 1 failure, 2 usage
** error, 3 no GPU (nothing was run).
*/
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include "lb_bench.h"
#include "lb_tuner.h"
#include "lowbit.h"

enum { EXIT_USAGE = 2, EXIT_NOGPU = 3 };

#define INT_LIMIT   (1 << 30)   /* largest integer option value */
#define ITERS_LIMIT 100000      /* the bench keeps two events per iteration */
#define TEXT_LIMIT  (1 << 20)   /* bytes of recipe text, as lb_recipe_load */

static const char usage[] =
  "usage:\n"
  "  lowbit check RECIPE...\n"
  "  lowbit gen RECIPE [-o FILE] [--n N] [--k K] [--m M] [--sms S] "
  "[--plan P]\n"
  "  lowbit compile RECIPE [--arch sm_90[,sm_80...]] [--n N] [--k K] "
  "[--m M[,M...]] [--sms S]\n"
  "                 [--plan P]\n"
  "  lowbit run RECIPE [--m M[,M...]] [--n N] [--k K] [--iters I] "
  "[--flush read|write]\n"
  "  lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes KxN,...] [--iters I] "
  "[--out DIR]\n"
  "               [--flush read|write]  (L2 flush before each timed launch; "
  "default read)\n"
  "  lowbit tune RECIPE [--n N --k K | --shapes KxN,...] [--m M[,M...]] "
  "[--iters I]\n"
  "              [--dry-run] [--verbose]\n"
  "               (times the candidate plans of the GEMV and each GEMM "
  "bucket on the GPU\n"
  "               and keeps the fastest in this device's tuning table; "
  "default m =\n"
  "               1,4,8,16,32,64,128,256,384,1024,4096)\n"
  "  lowbit cache list|clear|path\n"
  "  lowbit --version\n"
  "RECIPE is a file, or a name (a16w4_g128) looked up in LOWBIT_RECIPE_PATH,\n"
  "then the source tree's recipes/, then the installed recipes.\n"
  "Shapes are K x N (in x out); defaults n = k = 8192, sms = 132, m = 1.\n"
  "M up to 8 runs the GEMV, larger M the GEMM of its bucket (9..16, 17..32,\n"
  "33..64, 65..160, 161..256, 257..384, 385+); gen and compile show each\n"
  "M's kernel.\n"
  "Rows past whole tiles, up to a quarter tile, run after the rest on the\n"
  "kernel of their own count (compile says where).\n"
  "--plan P: knobs of m's kernel (GEMM \"wn=2,st=3\", GEMV \"split=2\"; "
  "lowbit.h lists them).\n"
  "RECIPE - reads the recipe from standard input (check, gen, compile).\n"
  "Exit status: 0 ok, 1 failure, 2 usage error, 3 no GPU (nothing was run).\n";

typedef struct args {
  const char *files[LB_BENCH_MAX];
  int nfiles;
  const char *out, *arch, *shapes, *ms, *flush, *plan;
  int n, k, sms, iters;
  int dry, verbose;   /* flags: --dry-run, --verbose */
} args;

/* Options that take a value: anything else beginning with '-' is
** unknown, even as the last argument, where it has no value to ask for. */
static int known(const char *o) {
  static const char *const names[] = {
    "-o", "--out", "--arch", "--shapes", "--flush", "--n", "--k", "--sms",
    "--iters", "--m", "--plan", NULL
  };
  int i;
  for (i = 0; names[i]; i++)
    if (!strcmp(o, names[i])) return 1;
  return 0;
}

/* s as an integer in 1..INT_LIMIT; says what is wrong with it (naming
** option o) when it is not. */
static int to_int(const char *o, const char *s, int *v) {
  char *end;
  long x;
  errno = 0;
  x = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || x <= 0 ||
      (errno == ERANGE && x != LONG_MAX)) {
    fprintf(stderr, "lowbit: %s %s: not a positive integer\n", o, s);
    return 0;
  }
  if (errno == ERANGE || x > INT_LIMIT) {
    fprintf(stderr, "lowbit: %s %s: too large (at most %d)\n", o, s,
            INT_LIMIT);
    return 0;
  }
  *v = (int)x;
  return 1;
}

/* o is known(): the last case is --iters. */
static int value(args *a, const char *o, const char *v) {
  if (!strcmp(o, "-o") || !strcmp(o, "--out")) a->out = v;
  else if (!strcmp(o, "--arch")) a->arch = v;
  else if (!strcmp(o, "--shapes")) a->shapes = v;
  else if (!strcmp(o, "--flush")) a->flush = v;
  else if (!strcmp(o, "--m")) a->ms = v;
  else if (!strcmp(o, "--plan")) a->plan = v;
  else if (!strcmp(o, "--n")) return to_int(o, v, &a->n);
  else if (!strcmp(o, "--k")) return to_int(o, v, &a->k);
  else if (!strcmp(o, "--sms")) return to_int(o, v, &a->sms);
  else return to_int(o, v, &a->iters);
  return 1;
}

static int parse(int argc, char **argv, args *a) {
  int i, stdin_seen = 0;
  memset(a, 0, sizeof *a);
  a->n = a->k = 8192;
  a->sms = 132;
  for (i = 2; i < argc; i++) {
    const char *o = argv[i];
    if (o[0] != '-' || o[1] == '\0') {
      if (a->nfiles == LB_BENCH_MAX) {
        fprintf(stderr, "lowbit: too many recipes (max %d)\n", LB_BENCH_MAX);
        return 0;
      }
      /* stdin holds one recipe: a second '-' would read it empty */
      if (!strcmp(o, "-") && stdin_seen++) {
        fprintf(stderr, "lowbit: '-' (standard input) given twice\n");
        return 0;
      }
      a->files[a->nfiles++] = o;
      continue;
    }
    if (!strcmp(o, "--dry-run") || !strcmp(o, "--verbose")) {
      *(o[2] == 'd' ? &a->dry : &a->verbose) = 1;
      continue;
    }
    if (!known(o)) {
      fprintf(stderr, "lowbit: unknown option %s\n%s", o, usage);
      return 0;
    }
    if (i + 1 == argc) {
      fprintf(stderr, "lowbit: %s needs a value\n", o);
      return 0;
    }
    if (!value(a, o, argv[++i])) return 0;
  }
  return 1;
}

static const char *shown(const char *path) {
  return strcmp(path, "-") ? path : "stdin";
}

/* Standard input as a recipe named "stdin", bounded like a file. */
static lb_status load_stdin(lb_recipe **r) {
  char *text = malloc(TEXT_LIMIT + 1);
  size_t n;
  lb_status st = LB_EIO;
  *r = NULL;
  if (text == NULL) {
    fprintf(stderr, "stdin: no memory\n");
    return LB_EMEM;
  }
  n = fread(text, 1, TEXT_LIMIT + 1, stdin);
  if (ferror(stdin))
    fprintf(stderr, "stdin: cannot read recipe: %s\n", strerror(errno));
  else if (n > TEXT_LIMIT)
    fprintf(stderr, "stdin: recipe is more than the limit of 1 MiB (%d "
                    "bytes)\n", TEXT_LIMIT);
  else if ((st = lb_recipe_load_text("stdin", text, n, r)) != LB_OK)
    fprintf(stderr, "%s\n", lb_errmsg());
  free(text);
  return st;
}

/* Every message names the file: the library's say it already. */
static lb_recipe *load(const char *path) {
  lb_recipe *r;
  if (!strcmp(path, "-")) return load_stdin(&r) == LB_OK ? r : NULL;
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
    return EXIT_USAGE;
  }
  for (i = 0; i < a->nfiles; i++) {
    lb_recipe *r = load(a->files[i]);
    if (r == NULL) {
      bad = 1;
      continue;
    }
    printf("%s: ok (%s)\n", shown(a->files[i]), lb_recipe_name(r));
    lb_recipe_free(r);
  }
  return bad;
}

/* Copies list s of option o into buf for strtok_r, refusing a list too
** long to fit rather than cutting it. */
static int copy_list(const char *o, const char *s, char *buf, size_t len) {
  if (strlen(s) >= len) {
    fprintf(stderr, "lowbit: %s: list longer than %zu characters\n", o,
            len - 1);
    return 0;
  }
  memcpy(buf, s, strlen(s) + 1);
  return 1;
}

/* "1,2,4" -> M values, each a row count an op takes. */
static int parse_ms(const char *s, int *v, int max) {
  char buf[256], *tok, *save = NULL;
  int n = 0;
  if (!copy_list("--m", s, buf, sizeof buf)) return -1;
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == max) {
      fprintf(stderr, "lowbit: --m: at most %d values\n", max);
      return -1;
    }
    if (!to_int("--m", tok, &v[n])) return -1;
    if (v[n] > LB_MAX_ROWS) {
      fprintf(stderr, "lowbit: --m %s: ops take M from 1 to %d\n", tok,
              LB_MAX_ROWS);
      return -1;
    }
    n++;
  }
  if (n == 0) fprintf(stderr, "lowbit: --m wants a list like 1,2,4,8\n");
  return n > 0 ? n : -1;
}

static int cmd_gen(const args *a) {
  lb_recipe *r;
  char *src;
  FILE *f = stdout;
  int rc = 0, m = 1;
  if (a->nfiles != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (a->ms && parse_ms(a->ms, &m, 1) < 0) return EXIT_USAGE;
  if ((r = load(a->files[0])) == NULL) return 1;
  if ((a->plan ? lb_generate_plan(r, a->n, a->k, m, a->sms, a->plan, &src)
               : lb_generate_m(r, a->n, a->k, m, a->sms, &src)) != LB_OK) {
    fprintf(stderr, "lowbit gen: %s\n", lb_errmsg());
    lb_recipe_free(r);
    return 1;
  }
  if (a->out && (f = fopen(a->out, "w")) == NULL) {
    fprintf(stderr, "lowbit gen: cannot write %s: %s\n", a->out,
            strerror(errno));
    rc = 1;
  } else {
    if (fputs(src, f) < 0 || fflush(f) != 0) rc = 1;
    if (f != stdout && fclose(f) != 0) rc = 1;
    if (rc)
      fprintf(stderr, "lowbit gen: cannot write %s: %s\n",
              a->out ? a->out : "standard output", strerror(errno));
  }
  free(src);
  lb_recipe_free(r);
  return rc;
}

/* "sm_90,80" -> 90, 80; names the token that is not an arch. */
static int parse_archs(const char *s, int *archs, int max) {
  char buf[256], *tok, *save = NULL;
  int n = 0;
  if (!copy_list("--arch", s, buf, sizeof buf)) return -1;
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    const char *d = strncmp(tok, "sm_", 3) ? tok : tok + 3;
    size_t nd = strlen(d);
    if (nd < 2 || nd > 3 || strspn(d, "0123456789") != nd) {
      fprintf(stderr, "lowbit: --arch: '%s' is not a supported arch spelling "
                      "(sm_NN or NN, like sm_90 or 90)\n", tok);
      return -1;
    }
    if (atoi(d) < 80 || atoi(d) > 200) {
      fprintf(stderr, "lowbit: --arch: '%s': lowbit needs sm_80 to sm_200\n",
              tok);
      return -1;
    }
    if (n == max) {
      fprintf(stderr, "lowbit: --arch: at most %d archs\n", max);
      return -1;
    }
    archs[n++] = atoi(d);
  }
  if (n == 0)
    fprintf(stderr, "lowbit: --arch wants a list like sm_90 or 80,90\n");
  return n > 0 ? n : -1;
}

/* Where compiled kernels are kept, once: an unusable cache costs a
** compile every time, and this is where a user learns why. */
static void print_cache(void) {
  lb_cache_state cs;
  if (lb_cache_query(&cs) != LB_OK)
    printf("cache: unknown (%s)\n", lb_errmsg());
  else if (!cs.enabled)
    printf("cache: off%s%s\n", cs.why[0] ? ": " : " (LOWBIT_CACHE=0)", cs.why);
  else if (cs.writable)
    printf("cache: %s\n", cs.dir);
  else
    printf("cache: %s, not writable, kernels are compiled every time: %s\n",
           cs.dir, cs.why);
}

static int cmd_compile(const args *a) {
  lb_recipe *r;
  int archs[8], ms[16] = {1}, na, nm = 1, i, j, rc = 0;
  if (a->nfiles != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  na = parse_archs(a->arch ? a->arch : "sm_90", archs, 8);
  if (na < 0) return EXIT_USAGE;
  if (a->ms && (nm = parse_ms(a->ms, ms, 16)) < 0) return EXIT_USAGE;
  if ((r = load(a->files[0])) == NULL) return 1;
  print_cache();
  for (j = 0; j < nm; j++) {
    char *src, text[1024];
    lb_kernel_desc d;
    if (lb_describe(r, a->n, a->k, ms[j], a->sms, &d) != LB_OK ||
        lb_describe_plan(r, a->n, a->k, ms[j], a->sms, text, sizeof text,
                         NULL) != LB_OK ||
        (a->plan ? lb_generate_plan(r, a->n, a->k, ms[j], a->sms, a->plan,
                                    &src)
                 : lb_generate_m(r, a->n, a->k, ms[j], a->sms, &src)) !=
            LB_OK) {
      fprintf(stderr, "lowbit compile: %s\n", lb_errmsg());
      rc = 1;
      continue;
    }
    if (a->plan)   /* lb_describe speaks of the rules' plan */
      printf("%s m=%d: %s, the plan \"%s\"\n", lb_recipe_name(r), ms[j],
             d.kind, a->plan);
    else
      printf("%s m=%d: %s, %s; %d threads a block, %d bytes of shared "
             "memory (%d on 99 KB parts)\n", lb_recipe_name(r), ms[j], d.kind,
             text, d.threads, d.smem_hi, d.smem_lo);
    for (i = 0; i < na; i++) {
      lb_offline info;
      char *log = NULL;
      if (lb_compile_offline(src, archs[i], &info, &log) != LB_OK) {
        fprintf(stderr, "lowbit compile: %s\n", lb_errmsg());
        rc = 1;
        continue;
      }
      printf("%s m=%d (%s) sm_%d: %.3f s, %s, %zu bytes %s, %d warning(s)\n",
             lb_recipe_name(r), ms[j], d.kind, archs[i], info.seconds,
             info.cache ? "disk cache hit" : "compiled", info.binary,
             info.ptx ? "PTX (NVRTC does not know this arch; the driver "
                        "finishes it)" : "CUBIN",
             info.warnings);
      if (strcmp(d.kind, "gemm") == 0) {   /* the plan as knobs, for --plan */
        char knobs[1][LB_PLAN_LEN];
        int one = 0;
        if (lb_plan_candidates(r, a->n, a->k, ms[j], a->sms, archs[i],
                               a->plan, knobs, 1, &one) == LB_OK && one)
          printf("  plan: %s\n", knobs[0]);
      }
      if (!info.ptx) {
        lb_kernel_use ks[8];
        int nk = 0, f, said = 0;
        lb_log_kernels(log, ks, 8, &nk);
        for (f = 0; f < nk; f++)
          if (ks[f].regs >= 0) {
            printf("  %s: %d registers, %d bytes spilled\n", ks[f].name,
                   ks[f].regs, ks[f].spill);
            said++;
          }
        /* say so rather than print nothing (NVRTC's own cache answered
        ** so until lowbit passed it --no-cache, runtime/lb_nvrtc.c) */
        if (!said) printf("  no register report in ptxas's log\n");
      }
      if (info.warnings) {
        printf("%s", log ? log : "");
        rc = 1;
      }
      free(log);
    }
    free(src);
  }
  lb_recipe_free(r);
  return rc;
}

/* "4096x8192,..." -> shapes; whether each suits a recipe is checked
** later, with the recipes. */
static int parse_shapes(const char *s, lb_bench_opts *o) {
  char buf[512], *tok, *save = NULL;
  o->nshapes = 0;
  if (!copy_list("--shapes", s, buf, sizeof buf)) return 0;
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *x = strchr(tok, 'x');
    if (o->nshapes == LB_BENCH_MAX) {
      fprintf(stderr, "lowbit: --shapes: at most %d shapes\n", LB_BENCH_MAX);
      return 0;
    }
    if (x == NULL) {
      fprintf(stderr, "lowbit: --shapes: '%s' is not KxN (like 4096x8192)\n",
              tok);
      return 0;
    }
    *x = '\0';
    if (!to_int("--shapes K", tok, &o->k[o->nshapes]) ||
        !to_int("--shapes N", x + 1, &o->n[o->nshapes]))
      return 0;
    o->nshapes++;
  }
  if (o->nshapes == 0)
    fprintf(stderr, "lowbit: --shapes wants KxN,KxN...\n");
  return o->nshapes > 0;
}

/* Loads every recipe and sizes every shape with it, so that a missing
** recipe or a K the recipe cannot take stops the command before the GPU
** is touched.  Returns an exit status. */
static int check_recipes(const char *cmd, const lb_bench_opts *o) {
  int i, s, rc = 0;
  for (i = 0; i < o->nrecipes; i++) {
    lb_recipe *r = load(o->recipes[i]);
    if (r == NULL) {
      if (rc == 0) rc = 1;
      continue;
    }
    for (s = 0; s < o->nshapes; s++) {
      lb_sizes sz;
      if (lb_sizes_of(r, o->n[s], o->k[s], &sz) != LB_OK) {
        fprintf(stderr, "lowbit %s: %s with K x N = %d x %d: %s\n", cmd,
                o->recipes[i], o->k[s], o->n[s], lb_errmsg());
        rc = EXIT_USAGE;
      }
    }
    lb_recipe_free(r);
  }
  return rc;
}

static int check_outdir(const char *cmd, const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) != 0) {
    fprintf(stderr, "lowbit %s: --out %s: %s\n", cmd, dir, strerror(errno));
    return 0;
  }
  if (!S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "lowbit %s: --out %s: not a directory\n", cmd, dir);
    return 0;
  }
  return 1;
}

/* Every argument is checked before lb_bench_run, which opens the GPU:
** its exit status 2 then can only be its "no GPU". */
static int cmd_bench(const args *a, int single) {
  /* the shipped recipes, wherever the tool is run from */
  static const char *all[] = {
    LB_RECIPES "/a16w8_channel.lua", LB_RECIPES "/a16w4_g128.lua",
    LB_RECIPES "/a16w2_g64.lua", LB_RECIPES "/a16w1_g64.lua",
    LB_RECIPES "/a16w3_g128.lua", LB_RECIPES "/bf16w4_g128.lua"
  };
  static const int defk[] = {4096, 8192, 4096, 14336};
  static const int defn[] = {4096, 8192, 14336, 4096};
  const char *cmd = single ? "run" : "bench";
  lb_bench_opts o;
  int i, rc;
  memset(&o, 0, sizeof o);
  if (single && a->nfiles != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  for (i = 0; i < a->nfiles; i++) {
    /* the bench loads its recipes again, by path */
    if (!strcmp(a->files[i], "-")) {
      fprintf(stderr, "lowbit %s: a recipe from standard input works with "
                      "check, gen and compile only; give a file\n", cmd);
      return EXIT_USAGE;
    }
    o.recipes[o.nrecipes++] = a->files[i];
  }
  if (o.nrecipes == 0)
    for (i = 0; i < (int)(sizeof all / sizeof all[0]); i++)
      o.recipes[o.nrecipes++] = all[i];
  if (single) {
    o.k[0] = a->k;
    o.n[0] = a->n;
    o.nshapes = 1;
  } else if (a->shapes) {
    if (!parse_shapes(a->shapes, &o)) return EXIT_USAGE;
  } else {
    for (i = 0; i < 4; i++) {
      o.k[i] = defk[i];
      o.n[i] = defn[i];
    }
    o.nshapes = 4;
  }
  if (a->ms) {
    if ((o.nm = parse_ms(a->ms, o.m, LB_BENCH_MAX)) < 0) return EXIT_USAGE;
  } else if (single) {
    o.m[0] = 1;
    o.nm = 1;
  } else {
    o.m[0] = 1; o.m[1] = 2; o.m[2] = 4; o.m[3] = 8;
    o.nm = 4;
  }
  if (a->flush && strcmp(a->flush, "read") && strcmp(a->flush, "write")) {
    fprintf(stderr, "lowbit: --flush %s: wants read or write\n", a->flush);
    return EXIT_USAGE;
  }
  if (a->iters > ITERS_LIMIT) {
    fprintf(stderr, "lowbit: --iters %d: too large (at most %d)\n", a->iters,
            ITERS_LIMIT);
    return EXIT_USAGE;
  }
  if (a->out && !check_outdir(cmd, a->out)) return EXIT_USAGE;
  if ((rc = check_recipes(cmd, &o)) != 0) return rc;
  o.flush_write = a->flush && !strcmp(a->flush, "write");
  o.warmup = 10;
  o.iters = a->iters ? a->iters : 100;
  o.outdir = a->out;
  rc = lb_bench_run(&o);
  return rc == 2 ? EXIT_NOGPU : rc;
}

/* lowbit tune RECIPE: arguments checked here, before the GPU is opened;
** one run a shape (--n/--k, or --shapes). */
static int cmd_tune(const args *a) {
  static const int defm[] = {1, 4, 8, 16, 32, 64, 128, 256, 384, 1024,
                             4096};   /* the GEMV and every GEMM bucket */
  lb_tune_opts o;
  lb_bench_opts shapes;
  lb_recipe *r;
  int i, rc = 0;
  memset(&o, 0, sizeof o);
  memset(&shapes, 0, sizeof shapes);
  if (a->nfiles != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(a->files[0], "-")) {
    fprintf(stderr, "lowbit tune: give a recipe file or name, not standard "
                    "input\n");
    return EXIT_USAGE;
  }
  if (a->ms) {
    if ((o.nm = parse_ms(a->ms, o.m, LB_BENCH_MAX)) < 0) return EXIT_USAGE;
  } else {
    for (i = 0; i < (int)(sizeof defm / sizeof defm[0]); i++)
      o.m[o.nm++] = defm[i];
  }
  if (a->shapes) {
    if (!parse_shapes(a->shapes, &shapes)) return EXIT_USAGE;
  } else {
    shapes.k[0] = a->k;
    shapes.n[0] = a->n;
    shapes.nshapes = 1;
  }
  if (a->iters > ITERS_LIMIT) {
    fprintf(stderr, "lowbit: --iters %d: too large (at most %d)\n", a->iters,
            ITERS_LIMIT);
    return EXIT_USAGE;
  }
  if ((r = load(a->files[0])) == NULL) return 1;
  for (i = 0; i < shapes.nshapes; i++) {
    lb_sizes sz;
    if (lb_sizes_of(r, shapes.n[i], shapes.k[i], &sz) != LB_OK) {
      fprintf(stderr, "lowbit tune: K x N = %d x %d: %s\n", shapes.k[i],
              shapes.n[i], lb_errmsg());
      rc = EXIT_USAGE;
    }
  }
  lb_recipe_free(r);
  if (rc) return rc;
  o.recipe = a->files[0];
  o.warmup = 5;
  o.iters = a->iters ? a->iters : 30;
  o.dry = a->dry;
  o.verbose = a->verbose;
  for (i = 0; i < shapes.nshapes; i++) {
    int one;
    o.n = shapes.n[i];
    o.k = shapes.k[i];
    one = lb_tune_run(&o);
    if (one == 2) return EXIT_NOGPU;   /* nothing ran: no GPU */
    if (one) rc = 1;
  }
  return rc;
}

/* The tuning tables in the cache directory (lowbit tune writes them; cache
** clear leaves them): each file, its device and its plans. */
static void print_tables(void) {
  lb_cache_state cs;
  DIR *d;
  struct dirent *de;
  int n = 0;
  if (lb_cache_query(&cs) != LB_OK || !cs.enabled ||
      (d = opendir(cs.dir)) == NULL)
    return;
  while ((de = readdir(d)) != NULL) {
    const char *f = de->d_name;
    size_t len = strlen(f);
    char path[4400], line[512], device[256] = "?";
    int plans = 0, header = 0;
    FILE *t;
    if (strncmp(f, "tune-", 5) != 0 || len < 9 ||
        strcmp(f + len - 4, ".txt") != 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", cs.dir, f);
    if ((t = fopen(path, "r")) == NULL) continue;
    while (fgets(line, sizeof line, t)) {
      if (line[0] == '#' || line[0] == '\n') continue;
      if (!header) {   /* "lowbit-tune 1 DEVICE" */
        const char *sp = strchr(line, ' ');
        sp = sp ? strchr(sp + 1, ' ') : NULL;
        if (sp) snprintf(device, sizeof device, "%.*s",
                         (int)strcspn(sp + 1, "\r\n"), sp + 1);
        header = 1;
      } else {
        plans++;
      }
    }
    fclose(t);
    if (n++ == 0)
      printf("tuning tables (lowbit tune; cache clear keeps them):\n");
    printf("  %s: %d plan(s), %s\n", f, plans, device);
  }
  closedir(d);
}

/* lowbit cache list|clear|path */
static int cmd_cache(const args *a) {
  const char *sub = a->nfiles == 1 ? a->files[0] : "";
  if (!strcmp(sub, "path")) {
    print_cache();
    return 0;
  }
  if (!strcmp(sub, "clear")) {
    int removed = 0;
    lb_status st = lb_cache_clear(&removed);
    printf("removed %d file(s)\n", removed);
    if (st != LB_OK) fprintf(stderr, "lowbit cache clear: %s\n", lb_errmsg());
    return st != LB_OK;
  }
  if (!strcmp(sub, "list")) {
    lb_cache_entry *e = NULL;
    int n = 0, i;
    unsigned long long total = 0;
    if (lb_cache_list(&e, &n) != LB_OK) {
      fprintf(stderr, "lowbit cache list: %s\n", lb_errmsg());
      return 1;
    }
    print_cache();
    if (n) printf("%-21s %9s  %-24s %7s %7s %6s  %s\n", "entry", "bytes",
                  "recipe", "n", "k", "arch", "last used");
    for (i = 0; i < n; i++) {
      char when[32] = "?";
      time_t t = (time_t)e[i].mtime;
      struct tm tm;
      if (localtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
      printf("%-21s %9llu  %-24s %7d %7d %3s_%-2d  %s\n", e[i].file,
             (unsigned long long)e[i].bytes, e[i].recipe, e[i].n, e[i].k,
             e[i].ptx ? "ptx" : "sm", e[i].arch, when);
      total += e[i].bytes;
    }
    printf("%d entr%s, %llu bytes\n", n, n == 1 ? "y" : "ies", total);
    print_tables();
    lb_free(e);
    return 0;
  }
  fprintf(stderr, "lowbit cache: wants list, clear or path\n%s", usage);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  args a;
  const char *cmd = argc > 1 ? argv[1] : "";
  if (argc < 2 || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : 0;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("lowbit %s\n", lb_version());
    return 0;
  }
  /* recipe names also resolve in the source tree's recipes/, after the
  ** user's path and before the installed ones (lb_recipe_load) */
  {
    const char *e = getenv("LOWBIT_RECIPE_PATH");
    char path[8192];
    snprintf(path, sizeof path, "%s%s%s", e && *e ? e : "", e && *e ? ":" : "",
             LB_RECIPES);
    setenv("LOWBIT_RECIPE_PATH", path, 1);
  }
  if (!parse(argc, argv, &a)) return EXIT_USAGE;
  if (!strcmp(cmd, "cache")) return cmd_cache(&a);
  if (!strcmp(cmd, "check")) return cmd_check(&a);
  if (!strcmp(cmd, "gen")) return cmd_gen(&a);
  if (!strcmp(cmd, "compile")) return cmd_compile(&a);
  if (!strcmp(cmd, "run")) return cmd_bench(&a, 1);
  if (!strcmp(cmd, "bench")) return cmd_bench(&a, 0);
  if (!strcmp(cmd, "tune")) return cmd_tune(&a);
  fprintf(stderr, "lowbit: unknown command '%s'\n%s", cmd, usage);
  return EXIT_USAGE;
}
