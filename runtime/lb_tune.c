/*
** lb_tune.c: the tuning table: a text file per device in the cache
** directory, read by lb_op_create and written by lb_tune_save.
**
**   # comments
**   lowbit-tune 2 <device key>
**   <key> <bucket> <n> <k> <plan or -> <us> <us by the rules> <recipe>
**
** bucket: -1 for the GEMV (1..8 rows, or to its reach below 8), 0..6 for
** the GEMM's buckets.
** key: 16 hex digits, the hash of the source the rules alone make for the
** entry (lb_gemm_key).  The text is read strictly: a line that does not
** parse is an error naming the file and line, never skipped, since a
** table that silently stopped applying would look like a slow device.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lb_cache.h"
#include "lb_ctx.h"
#include "lb_err.h"
#include "lb_gemm.h"
#include "lb_gen.h"
#include "lb_hash.h"
#include "lb_recipe.h"
#include "lb_tune.h"

#define MAGIC "lowbit-tune"
#define VERSION 2   /* 2: seven GEMM buckets (65..160 .. 385+) */
#define MAX_BYTES (1 << 20)   /* a table this large was not written here */

typedef struct entry {
  uint64_t key;
  int bucket, n, k;
  char plan[LB_PLAN_LEN];   /* "-": the rules' */
  double us, us_rules;
  char recipe[64];
} entry;

typedef struct table {
  entry *e;
  int n, cap;
} table;

/* The table's path for the device; 0 (why says so) without a cache
** directory. */
static int table_path(const char *key, char *buf, size_t len,
                      const char **why) {
  char dir[4096];
  int n;
  if (!lb_cache_dir(dir, sizeof dir, why)) return 0;
  n = snprintf(buf, len, "%s/tune-%016llx.txt", dir,
               (unsigned long long)lb_hash_str(LB_HASH_INIT, key));
  if (n <= 0 || (size_t)n >= len) {
    *why = "the cache directory's name is too long";
    return 0;
  }
  return 1;
}

lb_status lb_tune_path(const lb_ctx *c, char *buf, size_t len) {
  const char *why = "";
  if (c == NULL || buf == NULL || len == 0)
    return lb_fail(LB_EARG, "lb_tune_path: null argument");
  if (!table_path(lb_ctx_devkey(c), buf, len, &why)) {
    buf[0] = '\0';
    return lb_fail(LB_EIO, "lb_tune_path: no tuning table: %s", why);
  }
  return LB_OK;
}

static int add(table *t, const entry *e) {
  int i;
  for (i = 0; i < t->n; i++)   /* one entry a key: the later wins */
    if (t->e[i].key == e->key) {
      t->e[i] = *e;
      return 1;
    }
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 16;
    entry *p = realloc(t->e, sizeof *p * (size_t)cap);
    if (p == NULL) return 0;
    t->e = p;
    t->cap = cap;
  }
  t->e[t->n++] = *e;
  return 1;
}

/* One entry line (NUL-terminated, no newline); 0 with *what set (in buf,
** for a plan's message). */
static int parse_entry(const char *line, entry *e, const char **what,
                       char *buf, size_t len) {
  char key[32], plan[LB_PLAN_LEN + 1], recipe[65];
  int used = 0, i;
  memset(e, 0, sizeof *e);
  /* (the plan's width: LB_PLAN_LEN, the buffer's less its NUL; a plan of
  ** that many characters is refused below, as lb_tune_save refuses it) */
  _Static_assert(LB_PLAN_LEN == 128, "the %128s below is LB_PLAN_LEN");
  if (sscanf(line, "%31s %d %d %d %128s %lf %lf %64s %n", key, &e->bucket,
             &e->n, &e->k, plan, &e->us, &e->us_rules, recipe, &used) != 8 ||
      line[used] != '\0') {
    *what = "expected: key bucket n k plan us us-by-the-rules recipe";
    return 0;
  }
  if (strlen(key) != 16) {
    *what = "the key is not 16 hex digits";
    return 0;
  }
  for (i = 0; i < 16; i++)
    if (!strchr("0123456789abcdef", key[i])) {
      *what = "the key is not 16 hex digits";
      return 0;
    }
  e->key = strtoull(key, NULL, 16);
  if (e->bucket < -1 || e->bucket >= LB_GEMM_BUCKETS || e->n < 1 ||
      e->k < 1) {
    *what = "bucket, n or k out of range";
    return 0;
  }
  if (!(e->us > 0 && e->us < 1e9 && e->us_rules > 0 && e->us_rules < 1e9)) {
    *what = "the times must be positive microseconds";
    return 0;
  }
  if (strlen(plan) >= sizeof e->plan) {
    *what = "the plan is too long";
    return 0;
  }
  memcpy(e->plan, plan, strlen(plan) + 1);
  memcpy(e->recipe, recipe, strlen(recipe) + 1);
  if (strcmp(plan, "-") != 0 &&
      (e->bucket < 0 ? lb_gemv_plan_check(plan, "the plan")
                     : lb_gemm_plan_check(plan, e->bucket, "the plan")) !=
          LB_OK) {
    snprintf(buf, len, "%s", lb_errmsg());   /* lb_fail will overwrite it */
    *what = buf;
    return 0;
  }
  return 1;
}

/* Reads the table at path into t (empty when there is no file).
** O_NONBLOCK, as the kernel cache opens its entries (lb_cache.c): a FIFO
** at the path, opened to read, would wait for a writer forever (an op's
** creation hung there); whatever is not a regular file is an error that
** says so, as a damaged table is. */
static lb_status load(const char *path, const char *devkey, table *t,
                      const char *fn, char *dev, size_t devlen) {
  FILE *f;
  char *text, *line, *next;
  long size;
  int lineno = 0, header = 0, fd;
  struct stat sb;
  lb_status st = LB_OK;
  memset(t, 0, sizeof *t);
  if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
    if (errno == ENOENT) return LB_OK;
    return lb_fail(LB_EIO, "%s: cannot read the tuning table %s: %s", fn,
                   path, strerror(errno));
  }
  if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    close(fd);
    return lb_fail(LB_EIO, "%s: the tuning table %s is not a regular file "
                   "(%s); remove it (lowbit tune writes it again), or set "
                   "LOWBIT_TUNE=0", fn, path, lb_file_kind(sb.st_mode));
  }
  if ((f = fdopen(fd, "rb")) == NULL) {
    const int err = errno;
    close(fd);
    return lb_fail(LB_EIO, "%s: cannot read the tuning table %s: %s", fn,
                   path, strerror(err));
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
      size > MAX_BYTES || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return lb_fail(LB_EIO, "%s: the tuning table %s is not a readable file "
                   "of at most %d bytes; remove it, or set LOWBIT_TUNE=0",
                   fn, path, MAX_BYTES);
  }
  if ((text = malloc((size_t)size + 1)) == NULL) {
    fclose(f);
    return lb_fail(LB_EMEM, "%s: no memory", fn);
  }
  if (fread(text, 1, (size_t)size, f) != (size_t)size) {
    free(text);
    fclose(f);
    return lb_fail(LB_EIO, "%s: cannot read the tuning table %s", fn, path);
  }
  fclose(f);
  text[size] = '\0';
  if (strlen(text) != (size_t)size) {
    free(text);
    return lb_fail(LB_EIO, "%s: %s holds a NUL byte: not a tuning table; "
                   "remove it, or set LOWBIT_TUNE=0", fn, path);
  }
  for (line = text; line && *line && st == LB_OK; line = next) {
    const char *what = NULL;
    char why[320];
    entry e;
    size_t len;
    if ((next = strchr(line, '\n')) != NULL) *next++ = '\0';
    if ((len = strlen(line)) > 0 && line[len - 1] == '\r')   /* CR LF */
      line[len - 1] = '\0';
    lineno++;
    if (*line == '#' || *line == '\0') continue;
    if (!header) {
      int version = 0, used = 0;
      if (sscanf(line, MAGIC " %d %n", &version, &used) != 1 || used == 0)
        what = "the first line is not \"" MAGIC " <version> <device>\"";
      else if (version != VERSION)
        what = "a table of another version of lowbit";
      else if (devkey != NULL && strcmp(line + used, devkey) != 0)
        what = "a table for another device";   /* a hash collision */
      if (used > 0 && dev != NULL)
        snprintf(dev, devlen, "%s", line + used);
      header = 1;
    } else if (!parse_entry(line, &e, &what, why, sizeof why)) {
      /* what says why */
    } else if (!add(t, &e)) {
      st = lb_fail(LB_EMEM, "%s: no memory", fn);
    }
    if (what != NULL)
      st = lb_fail(LB_EIO, "%s: %s:%d: %s; remove the file (lowbit tune "
                   "writes it again), or set LOWBIT_TUNE=0", fn, path,
                   lineno, what);
  }
  free(text);
  if (st != LB_OK) {
    free(t->e);
    memset(t, 0, sizeof *t);
  }
  return st;
}

/* (Anything at the path counts, a FIFO or a directory too: lb_tune_find
** then says what is wrong with it, without waiting on it.) */
int lb_tune_have(const lb_ctx *c) {
  const char *e = getenv("LOWBIT_TUNE"), *why;
  char path[4200];
  return !(e && strcmp(e, "0") == 0) &&
         table_path(lb_ctx_devkey(c), path, sizeof path, &why) &&
         access(path, F_OK) == 0;
}

lb_status lb_tune_find(const lb_ctx *c, const uint64_t *keys, int nkeys,
                       char (*plans)[LB_PLAN_LEN], char *name, size_t len,
                       const char *fn) {
  return lb_tune_find_dev(lb_ctx_devkey(c), keys, nkeys, plans, name, len,
                          fn);
}

lb_status lb_tune_find_dev(const char *devkey, const uint64_t *keys,
                           int nkeys, char (*plans)[LB_PLAN_LEN], char *name,
                           size_t len, const char *fn) {
  const char *e = getenv("LOWBIT_TUNE"), *why, *base;
  char path[4200];
  table t;
  lb_status st;
  int i, j;
  for (j = 0; j < nkeys; j++) plans[j][0] = '\0';
  if (len) name[0] = '\0';
  if ((e && strcmp(e, "0") == 0) ||
      !table_path(devkey, path, sizeof path, &why))
    return LB_OK;
  if ((st = load(path, devkey, &t, fn, NULL, 0)) != LB_OK) return st;
  base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  for (i = 0; i < t.n; i++)
    for (j = 0; j < nkeys; j++)
      if (t.e[i].key == keys[j] && strcmp(t.e[i].plan, "-") != 0) {
        snprintf(plans[j], LB_PLAN_LEN, "%s", t.e[i].plan);
        snprintf(name, len, "%s", base);
      }
  free(t.e);
  return LB_OK;
}

/* Names lowbit tune's tables have (tune-<16 hex digits>.txt), and any
** other tune-*.txt, which lb_op_create never reads but a user may take
** for one. */
static int table_name(const char *f) {
  const size_t len = strlen(f);
  return strncmp(f, "tune-", 5) == 0 && len >= 9 && len < 64 &&
         strcmp(f + len - 4, ".txt") == 0;
}

lb_status lb_tune_list(lb_tune_table **out, int *count) {
  char dir[4096];
  const char *why = "";
  DIR *d;
  struct dirent *de;
  lb_tune_table *list = NULL, *grown;
  int n = 0, cap = 0;
  if (out == NULL || count == NULL)
    return lb_fail(LB_EARG, "lb_tune_list: null argument");
  *out = NULL;
  *count = 0;
  if (!lb_cache_dir(dir, sizeof dir, &why))
    return lb_fail(LB_EIO, "lb_tune_list: no cache: %s", why);
  if ((d = opendir(dir)) == NULL) {
    if (errno == ENOENT) return LB_OK;   /* nothing cached yet */
    return lb_fail(LB_EIO, "lb_tune_list: %s: %s", dir, strerror(errno));
  }
  while ((de = readdir(d)) != NULL) {
    char path[4400];
    struct stat sb;
    lb_tune_table *e;
    table t;
    if (!table_name(de->d_name)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      if ((grown = realloc(list, (size_t)cap * sizeof *list)) == NULL) {
        closedir(d);
        free(list);
        return lb_fail(LB_EMEM, "lb_tune_list: out of memory");
      }
      list = grown;
    }
    e = &list[n++];
    memset(e, 0, sizeof *e);
    memcpy(e->file, de->d_name, strlen(de->d_name) + 1);   /* < 64: table_name */
    snprintf(e->device, sizeof e->device, "?");
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    /* (load opens without waiting and says the same; this is shorter) */
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
      snprintf(e->why, sizeof e->why, "not a regular file (%s), not a table",
               lb_file_kind(sb.st_mode));
      continue;
    }
    if (load(path, NULL, &t, "lb_tune_list", e->device, sizeof e->device) !=
        LB_OK) {
      snprintf(e->why, sizeof e->why, "%s", lb_errmsg());
      continue;
    }
    e->plans = t.n;
    free(t.e);
  }
  closedir(d);
  *out = list;
  *count = n;
  return LB_OK;
}

/* Writes t to path through a temporary file and a rename: readers see the
** old table or the new one, never a part. */
static lb_status write_table(const char *path, const char *devkey,
                             const table *t) {
  char tmp[4300];
  FILE *f;
  int i, ok;
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  if ((f = fopen(tmp, "wb")) == NULL)
    return lb_fail(LB_EIO, "lb_tune_save: cannot write %s: %s", tmp,
                   strerror(errno));
  fprintf(f, "# lowbit's tuning table, written by lowbit tune: one plan a "
          "line\n# key (hash of the source the rules make), bucket (-1: the "
          "GEMV), n, k,\n# plan (-: the rules'), us, us with the rules' "
          "plan, recipe\n" MAGIC " %d %s\n", VERSION, devkey);
  for (i = 0; i < t->n; i++) {
    const entry *e = &t->e[i];
    fprintf(f, "%016llx %d %d %d %s %.2f %.2f %s\n",
            (unsigned long long)e->key, e->bucket, e->n, e->k, e->plan,
            e->us, e->us_rules, e->recipe);
  }
  ok = !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    lb_status st = lb_fail(LB_EIO, "lb_tune_save: cannot write %s: %s",
                           path, strerror(errno));
    remove(tmp);
    return st;
  }
  return LB_OK;
}

lb_status lb_tune_save(lb_ctx *c, const lb_recipe *r, int n, int k, int m,
                       const char *plan, double us, double us_rules) {
  if (c == NULL) return lb_fail(LB_EARG, "lb_tune_save: null argument");
  return lb_tune_save_dev(lb_ctx_devkey(c), lb_ctx_sms(c), r, n, k, m, plan,
                          us, us_rules);
}

lb_status lb_tune_save_dev(const char *devkey, int sms, const lb_recipe *r,
                           int n, int k, int m, const char *plan, double us,
                           double us_rules) {
  char path[4200], lock[4300], dir[4096];
  const char *why = "";
  entry e;
  table t;
  lb_status st;
  int fd;
  if (devkey == NULL || r == NULL)
    return lb_fail(LB_EARG, "lb_tune_save: null argument");
  if (m < 1 || m > LB_MAX_ROWS)
    return lb_fail(LB_EARG, "lb_tune_save: m = %d; ops take 1..%d rows", m,
                   LB_MAX_ROWS);
  if (!(us > 0 && us < 1e9 && us_rules > 0 && us_rules < 1e9))
    return lb_fail(LB_EARG, "lb_tune_save: times %g and %g us: positive "
                   "microseconds, please", us, us_rules);
  memset(&e, 0, sizeof e);
  if (m > LB_MAX_M && m <= lb_gemv_rows(r, n, k))
    return lb_fail(LB_EARG, "lb_tune_save: m = %d runs the GEMV with %d "
                   "fragments of x at %d x %d (the rules' reach: %d rows), "
                   "which the table does not hold", m, lb_gemv_frags(m), k,
                   n, lb_gemv_rows(r, n, k));
  /* the GEMV up to 8 rows, but past a reach below 8 (the rules', or
  ** LOWBIT_PLAN's rows, as lb_rows_at and lowbit tune take it) the GEMM's
  ** first bucket */
  e.bucket = m <= LB_MAX_M && m <= lb_gemv_reach(r, n, k, getenv("LOWBIT_PLAN"))
                 ? -1
                 : lb_gemm_bucket(m);
  e.n = n;
  e.k = k;
  e.us = us;
  e.us_rules = us_rules;
  snprintf(e.recipe, sizeof e.recipe, "%s", r->name);
  if (plan == NULL || *plan == '\0') {
    memcpy(e.plan, "-", 2);
  } else {
    if (strlen(plan) >= sizeof e.plan)
      return lb_fail(LB_EARG, "lb_tune_save: the plan is longer than %d "
                     "characters", LB_PLAN_LEN - 1);
    if ((st = e.bucket < 0 ? lb_gemv_plan_check(plan, "lb_tune_save")
                           : lb_gemm_plan_check(plan, e.bucket,
                                                "lb_tune_save")) != LB_OK)
      return st;
    memcpy(e.plan, plan, strlen(plan) + 1);
  }
  if ((st = e.bucket < 0 ? lb_gemv_key(r, n, k, sms, &e.key)
                         : lb_gemm_key(r, n, k, e.bucket, sms, &e.key)) !=
      LB_OK)
    return st;
  if (!table_path(devkey, path, sizeof path, &why) ||
      !lb_cache_dir(dir, sizeof dir, &why))
    return lb_fail(LB_EIO, "lb_tune_save: no tuning table: %s", why);
  if (!lb_make_dirs(dir))
    return lb_fail(LB_EIO, "lb_tune_save: cannot create %s: %s", dir,
                   strerror(errno));
  /* one writer at a time: read, change and replace under a lock of its
  ** own (the table itself is replaced, so it cannot hold the lock) */
  snprintf(lock, sizeof lock, "%s.lock", path);
  if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
      flock(fd, LOCK_EX) != 0) {
    st = lb_fail(LB_EIO, "lb_tune_save: cannot lock %s: %s", lock,
                 strerror(errno));
    if (fd >= 0) close(fd);
    return st;
  }
  st = load(path, devkey, &t, "lb_tune_save", NULL, 0);
  if (st == LB_OK) {
    st = add(&t, &e) ? write_table(path, devkey, &t)
                     : lb_fail(LB_EMEM, "lb_tune_save: no memory");
    free(t.e);
  }
  flock(fd, LOCK_UN);
  close(fd);
  return st;
}
