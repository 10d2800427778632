/*
** lowbit.c: the command-line tool.
**
**   lowbit check RECIPE...                 validate recipes
**   lowbit gen RECIPE [-o FILE] [--n N --k K --m M --sms S --plan P]
**   lowbit compile RECIPE... [--arch sm_90] [--n N --k K --m M,... --sms S]
**   lowbit run RECIPE [--m M,... --n N --k K]  check and time on the GPU
**   lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes 4096x4096,...] [--out DIR]
**   lowbit tune RECIPE [--n N --k K --m M,...]  the tuning table (lb_tuner.h)
**   lowbit cache list|clear|path
**
** RECIPE "-" is standard input.  Exit status: 0 ok, 1 failure, 2 usage
** error, 3 no GPU (nothing was run).  Each command takes only the options
** of its usage line, and checks every argument (recipes, shapes, M, plan,
** arch) before it does anything, the GPU looked for last: a mistake shows
** on any machine, with a GPU or not.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "lb_bench.h"
#include "lb_tuner.h"
#include "lowbit.h"

enum { EXIT_USAGE = 2, EXIT_NOGPU = 3 };

#define ITERS_LIMIT 100000      /* the bench keeps two events per iteration */
#define TEXT_LIMIT  (1 << 20)   /* bytes of recipe text, as lb_recipe_load */
/* What the generator takes (gen/lb_layout.c, gen/lb_format.c), checked
** here so that a message names the option, not a library function:
** kernels index with 32-bit integers, so k is at most 2^26 and n * k
** below 2^31 (n at most 2^31 / 32 - 1, k being at least 32). */
#define K_LIMIT     (1 << 26)
#define NK_LIMIT    (1LL << 31)
#define N_LIMIT     ((1 << 26) - 1)
#define SMS_LIMIT   1024

/* "lowbit gen": what every message of the command starts with. */
static char me[32] = "lowbit";

/* A message on stderr, a line of its own after the command's name. */
static void vsay(const char *fmt, va_list ap) {
  fprintf(stderr, "%s: ", me);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
}

/* A library message without the library function it starts with
** ("lb_sizes_of: k = 100 ..."): the user called none.  Control bytes but
** newlines and tabs as '?': a recipe's error() text, or a file's name,
** would otherwise reach the terminal as its escape sequences. */
static const char *plain(const char *m) {
  static char shown[8192];
  size_t n, i;
  if (strncmp(m, "lb_", 3) == 0) {
    n = 3 + strspn(m + 3, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (strncmp(m + n, ": ", 2) == 0) m += n + 2;
  }
  for (i = 0; m[i] && i + 1 < sizeof shown; i++) {
    const unsigned char c = (unsigned char)m[i];
    shown[i] = (c < ' ' && c != '\n' && c != '\t') || c == 0x7f ? '?' : m[i];
  }
  shown[i] = '\0';
  return shown;
}

static const char usage_tail[] =
  "RECIPE is a file, or a name (a16w4_g128) looked up in LOWBIT_RECIPE_PATH,\n"
  "then the source tree's recipes/, then the installed recipes.\n"
  "Shapes are K x N (in x out); defaults n = k = 8192, sms = 132, m = 1.\n"
  "M up to 8 runs the GEMV, and up to its reach (16 or 32 rows by recipe and\n"
  "shape; 4 for some 5- to 7-bit formats in long layers); larger M the GEMM\n"
  "of its bucket (9..16 or from the reach + 1, 17..32, 33..64, 65..160,\n"
  "161..256, 257..384, 385+); gen and compile show each M's kernel.\n"
  "Rows past whole tiles, up to a quarter tile, run after the rest on the\n"
  "kernel of their own count (compile says where).\n"
  "--plan P: knobs of m's kernel (GEMM \"wn=2,st=3\", GEMV \"split=2\"; "
  "lowbit.h lists them).\n"
  "--flush: L2 flushed before each timed launch by a read (the default), a\n"
  "memset (write), or each row timed both ways (both: *_write columns).\n"
  "RECIPE - reads the recipe from standard input (check, gen, compile).\n"
  "Each command takes the options of its line only.\n"
  "Exit status: 0 ok, 1 failure, 2 usage error, 3 no GPU (nothing was run).\n";

struct cmd;

typedef struct args {
  const struct cmd *c;
  const char *files[LB_BENCH_MAX];
  int nfiles;
  const char *out, *arch, *shapes, *ms, *flush, *plan;
  int n, k, sms, iters;
  int dry, verbose;   /* flags: --dry-run, --verbose */
  unsigned seen;      /* the options given, by their place in opts[] */
} args;

typedef struct cmd {
  const char *name;
  const char *takes;  /* its options, each between spaces */
  const char *use;    /* its usage lines */
  int (*run)(const args *a);
} cmd;

static int cmd_check(const args *a);
static int cmd_gen(const args *a);
static int cmd_compile(const args *a);
static int cmd_run(const args *a);
static int cmd_bench(const args *a);
static int cmd_tune(const args *a);
static int cmd_cache(const args *a);

/* Each command, the options it takes (any other is a usage error naming
** both) and its usage. */
static const cmd cmds[] = {
  {"check", "", "  lowbit check RECIPE...\n", cmd_check},
  {"gen", " -o --out --n --k --m --sms --plan ",
   "  lowbit gen RECIPE [-o FILE] [--n N] [--k K] [--m M] [--sms S] "
   "[--plan P]\n", cmd_gen},
  {"compile", " --arch --n --k --m --sms --plan ",
   "  lowbit compile RECIPE... [--arch sm_90[,sm_80...]] [--n N] [--k K] "
   "[--m M[,M...]]\n"
   "                 [--sms S] [--plan P]\n", cmd_compile},
  {"run", " --m --n --k --iters --flush -o --out ",
   "  lowbit run RECIPE [--m M[,M...]] [--n N] [--k K] [--iters I] "
   "[--flush F] [--out DIR]\n", cmd_run},
  {"bench", " --m --shapes --iters --flush -o --out ",
   "  lowbit bench [RECIPE...] [--m 1,2,4,8] [--shapes KxN,...] [--iters I] "
   "[--out DIR]\n"
   "               [--flush read|write|both]  (L2 flush before each timed "
   "launch; default read)\n", cmd_bench},
  {"tune", " --n --k --shapes --m --iters --dry-run --verbose ",
   "  lowbit tune RECIPE [--n N --k K | --shapes KxN,...] [--m M[,M...]] "
   "[--iters I]\n"
   "              [--dry-run] [--verbose]\n"
   "               (times the candidate plans of the GEMV and each GEMM "
   "bucket on the GPU\n"
   "               and keeps the fastest in this device's tuning table; "
   "default m =\n"
   "               1,4,8,16,32,64,128,256,384,1024,4096)\n", cmd_tune},
  {"cache", "", "  lowbit cache list|clear|path\n", cmd_cache},
};
static const int ncmds = (int)(sizeof cmds / sizeof cmds[0]);

static void print_usage(FILE *f, const cmd *only) {
  int i;
  fputs("usage:\n", f);
  for (i = 0; i < ncmds; i++)
    if (only == NULL || only == &cmds[i]) fputs(cmds[i].use, f);
  if (only == NULL) fputs("  lowbit --version\n", f);
  fputs(only ? "(lowbit --help says more)\n" : usage_tail, f);
}

/* A usage error: the message, then the command's usage. */
static int misuse(const args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int misuse(const args *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
  print_usage(stderr, a->c);
  return EXIT_USAGE;
}

/* ---- options ------------------------------------------------------------ */

/* Every option of every command; the flags take no value.  "-o" is
** "--out" spelt short. */
static const char *const opts[] = {
  "--out", "--arch", "--shapes", "--flush", "--n", "--k", "--sms", "--iters",
  "--m", "--plan", "--dry-run", "--verbose", NULL
};

static int opt_index(const char *o) {
  int i;
  if (!strcmp(o, "-o")) o = "--out";
  for (i = 0; opts[i]; i++)
    if (!strcmp(o, opts[i])) return i;
  return -1;
}

static int takes(const cmd *c, const char *o) {
  char spaced[32];
  snprintf(spaced, sizeof spaced, " %s ", o);
  return strstr(c->takes, spaced) != NULL;
}

/* s as an integer in 1..max: NULL, or what is wrong with it. */
static const char *int_why(const char *s, long max, int *v) {
  char *end;
  long x;
  errno = 0;
  if (*s < '0' || *s > '9')   /* (strtol would take " 32" and "+32") */
    return "not a positive integer";
  x = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || x <= 0 ||
      (errno == ERANGE && x != LONG_MAX))
    return "not a positive integer";
  if (errno == ERANGE || x > max) return "too large";
  *v = (int)x;
  return NULL;
}

/* Option o's value s into *v, at most max (limit says why where it is not
** plain); says what is wrong with it when it is not. */
static int to_int(const char *o, const char *s, long max, const char *limit,
                  int *v) {
  const char *why = int_why(s, max, v);
  if (why == NULL) return 1;
  if (strcmp(why, "too large") != 0)
    say("%s %s: %s", o, s, why);
  else if (limit)
    say("%s %s: too large (%s)", o, s, limit);
  else
    say("%s %s: too large (at most %ld)", o, s, max);
  return 0;
}

static int value(args *a, const char *o, const char *v) {
  if (!strcmp(o, "-o") || !strcmp(o, "--out")) a->out = v;
  else if (!strcmp(o, "--arch")) a->arch = v;
  else if (!strcmp(o, "--shapes")) a->shapes = v;
  else if (!strcmp(o, "--flush")) a->flush = v;
  else if (!strcmp(o, "--m")) a->ms = v;
  else if (!strcmp(o, "--plan")) a->plan = v;
  else if (!strcmp(o, "--n"))
    return to_int(o, v, N_LIMIT, "n * k must be below 2^31: n at most "
                  "67108863, with k = 32", &a->n);
  else if (!strcmp(o, "--k"))
    return to_int(o, v, K_LIMIT, "at most 67108864, 2^26", &a->k);
  else if (!strcmp(o, "--sms")) return to_int(o, v, SMS_LIMIT, NULL, &a->sms);
  else return to_int(o, v, ITERS_LIMIT, NULL, &a->iters);   /* --iters */
  return 1;
}

/* The commands that take option o, for a message ("gen and compile"). */
static void takers(const char *o, char *buf, size_t len) {
  int i, n = 0, all = 0;
  size_t at = 0;
  for (i = 0; i < ncmds; i++) all += takes(&cmds[i], o);
  buf[0] = '\0';
  for (i = 0; i < ncmds && at < len; i++)
    if (takes(&cmds[i], o)) {
      n++;
      at += (size_t)snprintf(buf + at, len - at, "%s%s",
                             n == 1 ? "" : n == all ? " and " : ", ",
                             cmds[i].name);
    }
}

static int parse(int argc, char **argv, args *a) {
  int i, stdin_seen = 0;
  for (i = 2; i < argc; i++) {
    const char *o = argv[i];
    int at;
    if (o[0] != '-' || o[1] == '\0') {
      if (a->nfiles == LB_BENCH_MAX)
        return misuse(a, "too many arguments (at most %d)", LB_BENCH_MAX);
      /* stdin holds one recipe: a second '-' would read it empty */
      if (!strcmp(o, "-") && stdin_seen++)
        return misuse(a, "'-' (standard input) given twice");
      a->files[a->nfiles++] = o;
      continue;
    }
    /* the name is checked before its value is asked for */
    if ((at = opt_index(o)) < 0) return misuse(a, "unknown option %s", o);
    if (!takes(a->c, o)) {
      char who[96];
      takers(opts[at], who, sizeof who);
      return misuse(a, "%s is not an option of %s (%s take%s it)", o,
                    a->c->name, who, strchr(who, ' ') ? "" : "s");
    }
    /* the later would silently win */
    if (a->seen & (1u << at)) return misuse(a, "%s given twice", o);
    a->seen |= 1u << at;
    if (!strcmp(o, "--dry-run") || !strcmp(o, "--verbose")) {
      *(o[2] == 'd' ? &a->dry : &a->verbose) = 1;
      continue;
    }
    if (i + 1 == argc) {
      say("%s needs a value", o);
      return EXIT_USAGE;
    }
    if (!value(a, o, argv[++i])) return EXIT_USAGE;
  }
  return 0;
}

/* Where a command takes one recipe: 0, or the usage error said. */
static int one_recipe(const args *a, const char *more) {
  if (a->nfiles == 1) return 0;
  if (a->nfiles == 0) return misuse(a, "no recipe given");
  return misuse(a, "%s takes one recipe, given %d (%s, %s%s)%s%s", a->c->name,
                a->nfiles, a->files[0], a->files[1], a->nfiles > 2 ? ", ..." : "",
                more ? "; " : "", more ? more : "");
}

/* ---- lists -------------------------------------------------------------- */

/* The next item of option o's comma-separated list s, from *at into buf
** (len bytes): 1 with an item, 0 at the end, -1 (said) for an empty item,
** which strtok would skip, or one too long.  example: a list o takes. */
static int item(const char *o, const char *s, const char **at, char *buf,
                size_t len, const char *example) {
  const char *p = *at, *e;
  size_t n;
  if (p == NULL) return 0;
  e = strchr(p, ',');
  n = e ? (size_t)(e - p) : strlen(p);
  if (n == 0) {
    if (*s == '\0')
      say("%s wants a list like %s", o, example);
    else
      say("%s %s: an empty item (a list is like %s)", o, s, example);
    return -1;
  }
  if (n >= len) {
    say("%s %s: '%.*s' is too long", o, s, (int)n, p);
    return -1;
  }
  memcpy(buf, p, n);
  buf[n] = '\0';
  *at = e ? e + 1 : NULL;
  return 1;
}

/* "1,2,4" -> M values, each a row count an op takes; -1 (said) when the
** list is not one. */
static int parse_ms(const char *s, int *v, int max) {
  const char *at = s;
  char tok[32];
  int n = 0, got, i;
  while ((got = item("--m", s, &at, tok, sizeof tok, "1,2,4,8")) > 0) {
    const char *why;
    if (n == max) {
      say("--m %s: at most %d values", s, max);
      return -1;
    }
    if ((why = int_why(tok, LB_MAX_ROWS, &v[n])) != NULL) {
      if (strcmp(why, "too large") == 0)
        say("--m %s: ops take M from 1 to %d", tok, LB_MAX_ROWS);
      else
        say("--m %s: %s", tok, why);
      return -1;
    }
    for (i = 0; i < n && v[i] != v[n]; i++) {}
    if (i < n) {   /* a row count twice would be checked and timed twice */
      say("--m %s: %d is given twice", s, v[n]);
      return -1;
    }
    n++;
  }
  return got < 0 ? -1 : n;
}

/* "sm_90,80" -> 90, 80; names the item that is not an arch. */
static int parse_archs(const char *s, int *archs, int max) {
  const char *at = s;
  char tok[32];
  int n = 0, got, i;
  while ((got = item("--arch", s, &at, tok, sizeof tok, "sm_80,sm_90")) > 0) {
    const char *d = strncmp(tok, "sm_", 3) ? tok : tok + 3;
    size_t nd = strlen(d);
    if (nd < 2 || nd > 3 || strspn(d, "0123456789") != nd) {
      say("--arch: '%s' is not a supported arch spelling (sm_NN or NN, like "
          "sm_90 or 90)", tok);
      return -1;
    }
    if (atoi(d) < 80 || atoi(d) > 200) {
      say("--arch: '%s': lowbit needs sm_80 to sm_200", tok);
      return -1;
    }
    if (n == max) {
      say("--arch %s: at most %d archs", s, max);
      return -1;
    }
    for (i = 0; i < n && archs[i] != atoi(d); i++) {}
    if (i < n) {   /* (sm_90 and 90 are one arch) */
      say("--arch %s: sm_%d is given twice", s, archs[i]);
      return -1;
    }
    archs[n++] = atoi(d);
  }
  return got < 0 ? -1 : n;
}

/* "4096x8192,..." -> shapes, each item named where it is wrong; whether
** each suits a recipe is checked with the recipes (check_shape). */
static int parse_shapes(const char *s, lb_bench_opts *o) {
  const char *at = s;
  char tok[64];
  int got, i;
  o->nshapes = 0;
  while ((got = item("--shapes", s, &at, tok, sizeof tok,
                     "4096x4096,8192x8192")) > 0) {
    char *x = strchr(tok, 'x');
    const char *kw, *nw;
    if (o->nshapes == LB_BENCH_MAX) {
      say("--shapes %s: at most %d shapes", s, LB_BENCH_MAX);
      return 0;
    }
    if (x == NULL) {
      say("--shapes: '%s' is not KxN (like 4096x8192)", tok);
      return 0;
    }
    *x = '\0';
    kw = int_why(tok, K_LIMIT, &o->k[o->nshapes]);
    nw = int_why(x + 1, N_LIMIT, &o->n[o->nshapes]);
    if (kw || nw) {
      *x = 'x';
      if (x == tok || x[1] == '\0')
        say("--shapes: '%s': %s is missing (KxN, like 4096x8192)", tok,
            x == tok ? "K" : "N");
      else if (kw)
        say("--shapes: '%s': K %.*s is %s%s (KxN, like 4096x8192)", tok,
            (int)(x - tok), tok, kw, strcmp(kw, "too large") ? ""
            : ", at most 67108864");
      else
        say("--shapes: '%s': N %s is %s%s (KxN, like 4096x8192)", tok, x + 1,
            nw, strcmp(nw, "too large") ? "" : ", at most 67108863");
      return 0;
    }
    for (i = 0; i < o->nshapes && (o->k[i] != o->k[o->nshapes] ||
                                   o->n[i] != o->n[o->nshapes]); i++) {}
    if (i < o->nshapes) {
      say("--shapes %s: %dx%d is given twice", s, o->k[i], o->n[i]);
      return 0;
    }
    o->nshapes++;
  }
  return got == 0 && o->nshapes > 0;
}

/* ---- recipes and shapes ------------------------------------------------- */

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
    fprintf(stderr, "%s\n", plain(lb_errmsg()));
  free(text);
  return st;
}

/* The build-tree tool's source recipes/, which it puts on
** LOWBIT_RECIPE_PATH (main); NULL in the installed tool. */
static const char *tree_recipes;

/* Every message names the file: the library's say it already.  The
** build-tree tool says that LOWBIT_RECIPE_PATH's last directory was its
** doing, not the user's. */
static lb_recipe *load(const char *path) {
  lb_recipe *r;
  if (!strcmp(path, "-")) return load_stdin(&r) == LB_OK ? r : NULL;
  if (lb_recipe_load(path, &r) != LB_OK) {
    fprintf(stderr, "%s\n", plain(lb_errmsg()));
    if (tree_recipes && strstr(lb_errmsg(), "LOWBIT_RECIPE_PATH (") != NULL)
      fprintf(stderr, "(this lowbit, in a build tree, adds the source "
              "tree's %s to LOWBIT_RECIPE_PATH)\n", plain(tree_recipes));
    return NULL;
  }
  return r;
}

/* Whether r takes K x N (what lb_sizes_of asks, said in the options'
** words); says why not.  shape: the --shapes item, or NULL for --n/--k. */
static int check_shape(const lb_recipe *r, int n, int k, const char *shape) {
  lb_recipe_info in;
  lb_sizes sz;
  char what[160];
  int g = 0;
  if (lb_recipe_describe(r, &in) == LB_OK) g = in.group;
  if (shape)
    snprintf(what, sizeof what, "--shapes %s (K x N) with %s: K", shape,
             lb_recipe_name(r));
  else
    snprintf(what, sizeof what, "--k %d:", k);
  /* the recipe's group is a multiple of 32 (gen/lb_recipe.c) */
  if (k % 32 != 0) {
    if (g > 32)
      say("%s must be a multiple of 32 (the recipe's group, %d, too)", what,
          g);
    else
      say("%s must be a multiple of 32", what);
    return 0;
  }
  if (g && k % g != 0) {
    say("%s must be a multiple of the recipe's group, %d", what, g);
    return 0;
  }
  if ((long long)n * k >= NK_LIMIT) {
    if (shape)
      say("--shapes %s (K x N): K * N = %lld must be below 2^31 (kernels "
          "index with 32-bit integers)", shape, (long long)n * k);
    else
      say("--n %d --k %d: n * k = %lld must be below 2^31 (kernels index "
          "with 32-bit integers)", n, k, (long long)n * k);
    return 0;
  }
  /* the library's own word, should it ask more than the above */
  if (lb_sizes_of(r, n, k, &sz) != LB_OK) {
    say("%s %dx%d (K x N): %s", lb_recipe_name(r), k, n, plain(lb_errmsg()));
    return 0;
  }
  return 1;
}

/* A plan's error ("plan \"wn=5\": wn must be ..."), not another's. */
static int plan_error(lb_status st) {
  return st == LB_EARG && strstr(lb_errmsg(), "plan \"") != NULL;
}

/* The library's message on plan p without its 'plan "p": ' (the
** option is named already). */
static const char *plan_why(const char *p) {
  const char *m = plain(lb_errmsg());
  size_t n = strlen(p);
  if (strncmp(m, "plan \"", 6) == 0 && strncmp(m + 6, p, n) == 0 &&
      strncmp(m + 6 + n, "\": ", 3) == 0)
    return m + 9 + n;
  return m;
}

/* The source of m's kernel, with the plan given; an exit status: a plan
** that does not fit m's kernel is a usage error, said. */
static int generate(const args *a, const lb_recipe *r, int m, char **src) {
  lb_status st = a->plan ? lb_generate_plan(r, a->n, a->k, m, a->sms, a->plan,
                                            src)
                         : lb_generate_m(r, a->n, a->k, m, a->sms, src);
  lb_kernel_desc d;
  if (st == LB_OK) return 0;
  if (a->plan && plan_error(st)) {
    char why[1024];
    snprintf(why, sizeof why, "%s", plan_why(a->plan));
    if (lb_describe(r, a->n, a->k, m, a->sms, &d) != LB_OK)
      snprintf(d.kind, sizeof d.kind, "?");
    if (strstr(why, ": its GEMV takes") != NULL)   /* the rows knob's */
      snprintf(d.kind, sizeof d.kind, "gemv");
    say("--plan %s for m = %d (%s's %s): %s", a->plan, m, lb_recipe_name(r),
        !strcmp(d.kind, "gemv") ? "GEMV" : !strcmp(d.kind, "gemm") ? "GEMM"
        : "kernel", why);
    return EXIT_USAGE;
  }
  say("%s", plain(lb_errmsg()));
  return 1;
}

/* ---- check, gen, compile ------------------------------------------------ */

static int cmd_check(const args *a) {
  int i, bad = 0;
  if (a->nfiles == 0) return misuse(a, "no recipe given");
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

static int cmd_gen(const args *a) {
  lb_recipe *r;
  char *src = NULL;
  FILE *f = stdout;
  int rc, m = 1;
  if ((rc = one_recipe(a, "compile takes several")) != 0) return rc;
  if (a->ms && strchr(a->ms, ',')) {
    say("--m %s: gen writes one M's kernel (compile takes a list)", a->ms);
    return EXIT_USAGE;
  }
  if (a->ms && parse_ms(a->ms, &m, 1) < 0) return EXIT_USAGE;
  if ((r = load(a->files[0])) == NULL) return 1;
  if (!check_shape(r, a->n, a->k, NULL)) {
    lb_recipe_free(r);
    return EXIT_USAGE;
  }
  if ((rc = generate(a, r, m, &src)) != 0) {
    lb_recipe_free(r);
    return rc;
  }
  if (a->out && (f = fopen(a->out, "w")) == NULL) {
    say("cannot write %s: %s", a->out, strerror(errno));
    rc = 1;
  } else {
    if (fputs(src, f) < 0 || fflush(f) != 0) rc = 1;
    if (f != stdout && fclose(f) != 0) rc = 1;
    if (rc)
      say("cannot write %s: %s", a->out ? a->out : "standard output",
          strerror(errno));
  }
  free(src);
  lb_recipe_free(r);
  return rc;
}

/* Where compiled kernels are kept, once: an unusable cache costs a
** compile every time, and this is where a user learns why. */
static void print_cache(void) {
  lb_cache_state cs;
  if (lb_cache_query(&cs) != LB_OK)
    printf("cache: unknown (%s)\n", plain(lb_errmsg()));
  else if (!cs.enabled)
    printf("cache: off%s%s\n", cs.why[0] ? ": " : " (LOWBIT_CACHE=0)", cs.why);
  else if (cs.writable)
    printf("cache: %s\n", cs.dir);
  else
    printf("cache: %s, not writable, kernels are compiled every time: %s\n",
           cs.dir, cs.why);
}

/* One recipe's kernels for each M, each compiled for each arch; the
** status line says which of all is compiling.  Returns 0 or 1. */
static int compile_recipe(const args *a, const lb_recipe *r, const int *ms,
                          int nm, const int *archs, int na, lb_progress *pg) {
  int i, j, rc = 0;
  for (j = 0; j < nm; j++) {
    char *src = NULL, text[1024];
    lb_kernel_desc d;
    if (lb_describe(r, a->n, a->k, ms[j], a->sms, &d) != LB_OK ||
        lb_describe_plan(r, a->n, a->k, ms[j], a->sms, text, sizeof text,
                         NULL) != LB_OK) {
      lb_progress_clear(pg);
      say("%s m=%d: %s", lb_recipe_name(r), ms[j], plain(lb_errmsg()));
      pg->at += na;
      rc = 1;
      continue;
    }
    lb_progress_clear(pg);
    if (generate(a, r, ms[j], &src) != 0) {   /* (a plan was checked) */
      pg->at += na;
      rc = 1;
      continue;
    }
    /* lb_describe speaks of the rules' plan; a GEMV plan's rows knob can
    ** give m to the GEMV: the kind the source's first line names */
    if (a->plan && strstr(src, "the GEMV kind") != NULL &&
        strstr(src, "the GEMV kind") < strchr(src, '\n'))
      snprintf(d.kind, sizeof d.kind, "gemv");
    if (a->plan)
      printf("%s m=%d: %s, the plan \"%s\"\n", lb_recipe_name(r), ms[j],
             d.kind, a->plan);
    else
      printf("%s m=%d: %s, %s; %d threads a block, %d bytes of shared "
             "memory (%d on 99 KB parts)\n", lb_recipe_name(r), ms[j], d.kind,
             text, d.threads, d.smem_hi, d.smem_lo);
    fflush(stdout);
    for (i = 0; i < na; i++) {
      lb_offline info;
      char *log = NULL;
      pg->at++;
      lb_progress_say(pg, "%s m=%d sm_%d: compile", lb_recipe_name(r), ms[j],
                      archs[i]);
      if (lb_compile_offline(src, archs[i], &info, &log) != LB_OK) {
        lb_progress_clear(pg);
        say("%s m=%d sm_%d: %s", lb_recipe_name(r), ms[j], archs[i],
            plain(lb_errmsg()));
        rc = 1;
        continue;
      }
      lb_progress_clear(pg);
      printf("%s m=%d (%s) sm_%d: %.3f s, %s, %zu bytes %s, %d warning(s)\n",
             lb_recipe_name(r), ms[j], d.kind, archs[i], info.seconds,
             info.cache ? "disk cache hit" : "compiled", info.binary,
             info.ptx ? "PTX (NVRTC does not know this arch; the driver "
                        "finishes it)" : "CUBIN",
             info.warnings);
      if (strcmp(d.kind, "gemm") == 0) {   /* the plan as knobs, for --plan */
        char knobs[1][LB_PLAN_LEN];
        int one = 0;
        /* the plan compiled: --plan's, else LOWBIT_GEMM's (as the source
        ** says), else the rules' */
        const char *base = a->plan ? a->plan : getenv("LOWBIT_GEMM");
        if (lb_plan_candidates(r, a->n, a->k, ms[j], a->sms, archs[i], base,
                               knobs, 1, &one) == LB_OK && one)
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
      fflush(stdout);
      free(log);
    }
    free(src);
  }
  return rc;
}

/* Every recipe is loaded and every argument checked against each (shape,
** the plan for each M) before the first compile; then each recipe in
** turn.  A recipe that does not load fails the command, not the others. */
static int cmd_compile(const args *a) {
  lb_recipe *rs[LB_BENCH_MAX] = {NULL};
  int archs[8], ms[16] = {1}, na, nm = 1, i, j, rc = 0, bad = 0, nr = 0;
  lb_progress pg;
  if (a->nfiles == 0) return misuse(a, "no recipe given");
  na = parse_archs(a->arch ? a->arch : "sm_90", archs, 8);
  if (na < 0) return EXIT_USAGE;
  if (a->ms && (nm = parse_ms(a->ms, ms, 16)) < 0) return EXIT_USAGE;
  for (i = 0; i < a->nfiles; i++) {
    if ((rs[i] = load(a->files[i])) == NULL) {
      rc = 1;
      continue;
    }
    nr++;
    if (!check_shape(rs[i], a->n, a->k, NULL)) {
      bad = 1;
      continue;
    }
    for (j = 0; j < nm && a->plan; j++) {
      char *src = NULL;
      int st = generate(a, rs[i], ms[j], &src);
      free(src);
      if (st == EXIT_USAGE) bad = 1;
      if (st) break;
    }
  }
  if (!bad) {
    print_cache();
    lb_progress_init(&pg, nr * nm * na);
    for (i = 0; i < a->nfiles; i++)
      if (rs[i] && compile_recipe(a, rs[i], ms, nm, archs, na, &pg)) rc = 1;
    lb_progress_clear(&pg);
  }
  for (i = 0; i < a->nfiles; i++) lb_recipe_free(rs[i]);
  return bad ? EXIT_USAGE : rc;
}

/* ---- run, bench, tune --------------------------------------------------- */

/* Loads every recipe and checks every shape with it, so that a missing
** recipe or a K the recipe cannot take stops the command before the GPU
** is looked for.  single: the shape is --n/--k.  Returns an exit status. */
static int check_recipes(const lb_bench_opts *o, int single) {
  int i, s, rc = 0;
  for (i = 0; i < o->nrecipes; i++) {
    lb_recipe *r = load(o->recipes[i]);
    if (r == NULL) {
      if (rc == 0) rc = 1;
      continue;
    }
    for (s = 0; s < o->nshapes; s++) {
      char shape[32];
      snprintf(shape, sizeof shape, "%dx%d", o->k[s], o->n[s]);
      if (!check_shape(r, o->n[s], o->k[s], single ? NULL : shape))
        rc = EXIT_USAGE;
    }
    lb_recipe_free(r);
  }
  return rc;
}

/* mkdir -p dir (a copy is cut at each '/'); 0, said, when a part cannot
** be made or is not a directory. */
static int make_dirs(const char *dir) {
  char path[4096], *p;
  struct stat sb;
  if (*dir == '\0') {
    say("--out wants a directory");
    return 0;
  }
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    say("--out %s: the name is too long", dir);
    return 0;
  }
  for (p = path + 1;; p++) {
    const char c = *p;
    if (c != '/' && c != '\0') continue;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      say("--out %s: cannot create %s: %s", dir, path, strerror(errno));
      return 0;
    }
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
      say("--out %s: %s is not a directory", dir, path);
      return 0;
    }
    *p = c;
    if (c == '\0') break;
  }
  return 1;
}

/* --flush: LB_FLUSH_*, or -1 (said). */
static int flush_of(const char *f) {
  if (f == NULL || !strcmp(f, "read")) return LB_FLUSH_READ;
  if (!strcmp(f, "write")) return LB_FLUSH_WRITE;
  if (!strcmp(f, "both")) return LB_FLUSH_BOTH;
  say("--flush %s: wants read, write or both", f);
  return -1;
}

/* run (single) and bench: every argument is checked before lb_bench_run,
** which opens the GPU: its exit status 2 then can only be its "no GPU". */
static int bench_or_run(const args *a, int single) {
  /* the shipped recipes, by name: lb_recipe_load finds them on
  ** LOWBIT_RECIPE_PATH (the source tree's recipes/ on it, main) or in
  ** the installed recipes, wherever the tool is run from */
  static const char *all[] = {
    "a16w8_channel", "a16w4_g128", "a16w2_g64", "a16w1_g64", "a16w3_g128",
    "bf16w4_g128"
  };
  static const int defk[] = {4096, 8192, 4096, 14336};
  static const int defn[] = {4096, 8192, 14336, 4096};
  lb_bench_opts o;
  int i, rc;
  memset(&o, 0, sizeof o);
  if (single && (rc = one_recipe(a, "bench takes several")) != 0) return rc;
  for (i = 0; i < a->nfiles; i++) {
    /* the bench loads its recipes again, by path */
    if (!strcmp(a->files[i], "-")) {
      say("a recipe from standard input works with check, gen and compile "
          "only; give a file");
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
  if ((o.flush = flush_of(a->flush)) < 0) return EXIT_USAGE;
  if ((rc = check_recipes(&o, single)) != 0) return rc;
  /* made last: a mistake above leaves no directory behind */
  if (a->out && !make_dirs(a->out)) return EXIT_USAGE;
  o.warmup = 10;
  o.iters = a->iters ? a->iters : 100;
  o.outdir = a->out;
  rc = lb_bench_run(&o);
  return rc == 2 ? EXIT_NOGPU : rc;
}

static int cmd_run(const args *a) { return bench_or_run(a, 1); }
static int cmd_bench(const args *a) { return bench_or_run(a, 0); }

/* lowbit tune RECIPE: arguments checked here, then the GPU looked for;
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
  if ((rc = one_recipe(a, "run it once for each")) != 0) return rc;
  if (!strcmp(a->files[0], "-")) {
    say("give a recipe file or name, not standard input");
    return EXIT_USAGE;
  }
  if (a->shapes &&
      (a->seen & ((1u << opt_index("--n")) | (1u << opt_index("--k")))))
    return misuse(a, "--shapes and --n/--k: give one or the other");
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
  if ((r = load(a->files[0])) == NULL) return 1;
  for (i = 0; i < shapes.nshapes; i++) {
    char shape[32];
    snprintf(shape, sizeof shape, "%dx%d", shapes.k[i], shapes.n[i]);
    if (!check_shape(r, shapes.n[i], shapes.k[i], a->shapes ? shape : NULL))
      rc = EXIT_USAGE;
  }
  if (rc) {
    lb_recipe_free(r);
    return rc;
  }
  o.recipe = a->files[0];
  o.warmup = 5;
  o.iters = a->iters ? a->iters : 30;
  o.dry = a->dry;
  o.verbose = a->verbose;
  for (i = 0; i < shapes.nshapes; i++) {   /* (each says its shape) */
    int one;
    o.n = shapes.n[i];
    o.k = shapes.k[i];
    one = lb_tune_run(&o);
    if (one == 2) {   /* nothing ran: no GPU after all */
      rc = EXIT_NOGPU;
      break;
    }
    if (one) rc = 1;
  }
  lb_recipe_free(r);
  return rc;
}

/* ---- cache -------------------------------------------------------------- */

/* The tuning tables in the cache directory (lowbit tune writes them; cache
** clear leaves them): each file, its device and its plans, or what is
** wrong with it (lb_tune_list). */
static void print_tables(void) {
  lb_tune_table *t = NULL;
  int n = 0, i;
  if (lb_tune_list(&t, &n) != LB_OK) {
    printf("tuning tables: %s\n", plain(lb_errmsg()));
    return;
  }
  if (n) printf("tuning tables (lowbit tune; cache clear keeps them):\n");
  for (i = 0; i < n; i++)
    if (t[i].why[0])
      printf("  %s: %s\n", t[i].file, plain(t[i].why));
    else
      printf("  %s: %d plan(s), %s\n", t[i].file, t[i].plans, t[i].device);
  lb_free(t);
}

/* The newest first; then by recipe, shape and name. */
static int newer(const void *x, const void *y) {
  const lb_cache_entry *a = x, *b = y;
  int c;
  if (a->mtime != b->mtime) return a->mtime > b->mtime ? -1 : 1;
  if ((c = strcmp(a->recipe, b->recipe)) != 0) return c;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  return strcmp(a->file, b->file);
}

static int cache_list(void) {
  lb_cache_entry *e = NULL;
  lb_cache_state cs;
  int n = 0, i, wr = 6, wk = 6, odd = 0;
  unsigned long long total = 0;
  if (lb_cache_list(&e, &n) != LB_OK) {
    say("%s", plain(lb_errmsg()));
    return 1;
  }
  print_cache();
  if (lb_cache_query(&cs) != LB_OK) cs.dir[0] = '\0';
  for (i = 0; i < n; i++) {
    if ((int)strlen(e[i].recipe) > wr) wr = (int)strlen(e[i].recipe);
    if ((int)strlen(e[i].kernel) > wk) wk = (int)strlen(e[i].kernel);
  }
  /* (the files named like entries that are not come last: lb_cache_list) */
  while (n > 0 && e[n - 1].odd[0]) {
    n--;
    odd++;
  }
  if (n) qsort(e, (size_t)n, sizeof *e, newer);
  if (n)
    printf("%-20s %9s  %-*s %8s %8s %6s  %-*s %4s  %-19s  %s\n", "entry",
           "bytes", wr, "recipe", "n", "k", "arch", wk, "kernel", "sms",
           "last used", "plan");
  for (i = 0; i < n; i++) {
    const lb_cache_entry *c = &e[i];
    char when[32] = "?", arch[16], sms[16] = "?";
    time_t t = (time_t)c->mtime;
    struct tm tm;
    if (localtime_r(&t, &tm))
      strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    if (c->arch > 0)   /* (0: a header that does not say, or a damaged one) */
      snprintf(arch, sizeof arch, "%s_%d", c->ptx ? "ptx" : "sm", c->arch);
    else
      snprintf(arch, sizeof arch, "?");
    if (c->sms) snprintf(sms, sizeof sms, "%d", c->sms);
    printf("%-20s %9llu  %-*s %8d %8d %6s  %-*s %4s  %-19s  %s\n", c->file,
           (unsigned long long)c->bytes, wr, c->recipe, c->n, c->k, arch, wk,
           c->kernel, sms, when, c->plan);
    total += c->bytes;
  }
  for (i = n; i < n + odd; i++)
    printf("%-20s  not a regular file (%s): not an entry\n", e[i].file,
           e[i].odd);
  printf("%d entr%s, %llu bytes", n, n == 1 ? "y" : "ies", total);
  if (odd) printf("; %d file(s) named like an entry are not one", odd);
  printf("\n");
  if (cs.dir[0]) print_tables();
  lb_free(e);
  return 0;
}

/* The library removes what the cache writes; a directory named like an
** entry is not one of those: it stays, and is named. */
static int cache_clear(void) {
  lb_cache_entry *e = NULL;
  int removed = 0, n = 0, i;
  lb_status st = lb_cache_clear(&removed);
  printf("removed %d file(s)\n", removed);
  if (st != LB_OK) {
    say("%s", plain(lb_errmsg()));
    return 1;
  }
  if (lb_cache_list(&e, &n) == LB_OK)
    for (i = 0; i < n; i++)
      if (e[i].odd[0])
        printf("kept %s: %s named like a cache entry, not one\n",
               e[i].file, e[i].odd);
  lb_free(e);
  return 0;
}

/* lowbit cache list|clear|path */
static int cmd_cache(const args *a) {
  const char *sub = a->nfiles == 1 ? a->files[0] : "";
  if (!strcmp(sub, "path")) {
    print_cache();
    return 0;
  }
  if (!strcmp(sub, "clear")) return cache_clear();
  if (!strcmp(sub, "list")) return cache_list();
  return misuse(a, "wants list, clear or path");
}

/* ---- main --------------------------------------------------------------- */


int main(int argc, char **argv) {
  args a;
  const char *name = argc > 1 ? argv[1] : "";
  int i, rc;
  if (argc < 2 || !strcmp(name, "-h") || !strcmp(name, "--help")) {
    print_usage(argc < 2 ? stderr : stdout, NULL);
    return argc < 2 ? EXIT_USAGE : 0;
  }
  if (!strcmp(name, "--version") || !strcmp(name, "version")) {
    printf("lowbit %s\n", lb_version());
    return 0;
  }
  memset(&a, 0, sizeof a);
  for (i = 0; i < ncmds; i++)
    if (!strcmp(name, cmds[i].name)) a.c = &cmds[i];
  if (a.c == NULL) {
    fprintf(stderr, "lowbit: unknown command '%s'\n", name);
    print_usage(stderr, NULL);
    return EXIT_USAGE;
  }
  snprintf(me, sizeof me, "lowbit %s", a.c->name);
#ifdef LB_RECIPES
  /* The build-tree tool: recipe names also resolve in the source tree's
  ** recipes/, after the user's path and before the installed ones.  The
  ** installed tool has no LB_RECIPES: lb_recipe_load finds the recipes of
  ** the tree it lies in (gen/lb_where.c), under any prefix. */
  {
    const char *e = getenv("LOWBIT_RECIPE_PATH");
    char path[8192];
    struct stat sb;
    if (stat(LB_RECIPES, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      snprintf(path, sizeof path, "%s%s%s", e && *e ? e : "",
               e && *e ? ":" : "", LB_RECIPES);
      setenv("LOWBIT_RECIPE_PATH", path, 1);
      tree_recipes = LB_RECIPES;
    }
  }
#endif
  a.n = a.k = 8192;
  a.sms = 132;
  if ((rc = parse(argc, argv, &a)) != 0) return rc;
  return a.c->run(&a);
}
