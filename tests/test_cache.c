/*
** test_cache.c: the disk cache.  A miss, then a hit; a corrupted, a
** truncated and a garbage entry are each detected, recompiled and
** rewritten; an entry whose hash collides with another key's is not used;
** the oldest entries go when the cache outgrows LOWBIT_CACHE_MAX, and a
** hit makes an entry young again; a LOWBIT_CACHE_MAX that is no size
** keeps no new entry and lb_cache_query names it; two processes filling
** the same cache at once both succeed; LOWBIT_CACHE=0 turns the cache
** off; an unusable directory (a file, /proc/self, read-only) costs only
** the hits, and lb_cache_query says why; a FIFO or a directory in an
** entry's place is a miss (a FIFO, before, blocked the reader forever).
*/
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

/* Compiles src for sm_90; returns info.cache (-1 on error). */
static int compile(const char *src, double *secs) {
  lb_offline info;
  char *log = NULL;
  if (lb_compile_offline(src, 90, &info, &log) != LB_OK) {
    printf("compile failed: %s\n", lb_errmsg());
    return -1;
  }
  free(log);
  if (secs) *secs = info.seconds;
  return info.cache;
}

static char *source(const char *recipe, int n) {
  lb_recipe *r;
  char *src = NULL;
  if (lb_recipe_load(recipe, &r) != LB_OK) return NULL;
  if (lb_generate(r, n, 4096, 132, &src) != LB_OK) src = NULL;
  lb_recipe_free(r);
  return src;
}

/* The one entry in dir whose name ends in .lbc, or count of them. */
static int entries(const char *dir, char *path, size_t len) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int n = 0;
  if (d == NULL) return 0;
  while ((de = readdir(d)) != NULL) {
    size_t l = strlen(de->d_name);
    if (l > 4 && strcmp(de->d_name + l - 4, ".lbc") == 0) {
      if (path) snprintf(path, len, "%s/%s", dir, de->d_name);
      n++;
    }
  }
  closedir(d);
  return n;
}

static void clear(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  char p[4096];
  if (d == NULL) return;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    remove(p);
  }
  closedir(d);
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Damage the entry one way, then: next compile recompiles, next hits. */
static void damaged(const char *what, const char *entry, const char *src,
                    void (*harm)(const char *)) {
  int c1, c2;
  harm(entry);
  c1 = compile(src, NULL);
  c2 = compile(src, NULL);
  CHECK(c1 == 0, "%s entry: expected a recompile, got cache = %d", what, c1);
  CHECK(c2 == 2, "%s entry: expected a hit after the rewrite, got %d", what,
        c2);
  printf("%-9s entry: recompiled, then hit again\n", what);
}

static void flip_byte(const char *path) {
  FILE *f = fopen(path, "r+b");
  long mid = file_size(path) / 2;
  int c;
  if (f == NULL) return;
  fseek(f, mid, SEEK_SET);
  c = fgetc(f);
  fseek(f, mid, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
}

static void truncate_half(const char *path) {
  if (truncate(path, file_size(path) / 2) != 0) printf("truncate failed\n");
}

static void garbage(const char *path) {
  FILE *f = fopen(path, "wb");
  int i;
  if (f == NULL) return;
  for (i = 0; i < 4096; i++) fputc((i * 131) & 0xff, f);
  fclose(f);
}

/* A .lbc entry in dir that is none of the nknown paths in known, or ""
** if there is none. */
static void entry_not_in(const char *dir, const char *const known[],
                         int nknown, char *path, size_t len) {
  DIR *d = opendir(dir);
  struct dirent *de;
  path[0] = '\0';
  if (d == NULL) return;
  while ((de = readdir(d)) != NULL) {
    char p[4200];
    size_t l = strlen(de->d_name);
    int j, seen = 0;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    for (j = 0; j < nknown; j++) seen |= strcmp(p, known[j]) == 0;
    if (l > 4 && strcmp(de->d_name + l - 4, ".lbc") == 0 && !seen)
      snprintf(path, len, "%s", p);
  }
  closedir(d);
}

static int copy_file(const char *from, const char *to) {
  FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
  int c, ok = f && g;
  while (ok && (c = fgetc(f)) != EOF) ok = fputc(c, g) != EOF;
  if (f) fclose(f);
  if (g && fclose(g) != 0) ok = 0;
  return ok;
}

/* Makes path look modified `ago` seconds before now. */
static void age(const char *path, long ago) {
  struct timeval tv[2];
  gettimeofday(&tv[0], NULL);
  tv[0].tv_sec -= ago;
  tv[1] = tv[0];
  utimes(path, tv);
}

/* A copy of entry `from` under the name `to`, its header's hash (bytes
** 8..15) set to the one `to` is named after: as if two keys collided. */
static int collide(const char *from, const char *to) {
  const char *base = strrchr(to, '/');
  unsigned long long hash;
  FILE *f;
  if (!copy_file(from, to) || base == NULL ||
      sscanf(base + 1, "%16llx", &hash) != 1 || (f = fopen(to, "r+b")) == NULL)
    return 0;
  fseek(f, 8, SEEK_SET);
  fwrite(&hash, 8, 1, f);
  return fclose(f) == 0;
}

/* lb_cache_query must say enabled/writable, and why holds each of the
** non-NULL needles (why is "" when writable). */
static void expect_state(const char *what, int enabled, int writable,
                         const char *needle1, const char *needle2) {
  lb_cache_state st;
  if (lb_cache_query(&st) != LB_OK) {
    CHECK(0, "%s: lb_cache_query failed: %s", what, lb_errmsg());
    return;
  }
  printf("%s: enabled %d, writable %d, why \"%s\"\n", what, st.enabled,
         st.writable, st.why);
  CHECK(st.enabled == enabled, "%s: enabled %d, expected %d", what,
        st.enabled, enabled);
  CHECK(st.writable == writable, "%s: writable %d, expected %d", what,
        st.writable, writable);
  CHECK(writable ? st.why[0] == '\0' : st.why[0] != '\0',
        "%s: why \"%s\"", what, st.why);
  CHECK(!needle1 || strstr(st.why, needle1), "%s: \"%s\" not in why", what,
        needle1);
  CHECK(!needle2 || strstr(st.why, needle2), "%s: \"%s\" not in why", what,
        needle2);
}

/* Child mode: compile two sources into the shared cache and exit 0. */
static int child(const char *recipe, int n) {
  char *own = source(recipe, n), *shared = source(recipe, 4096);
  int ok = own && shared && compile(own, NULL) >= 0 &&
           compile(shared, NULL) >= 0;
  free(own);
  free(shared);
  return ok ? 0 : 1;
}

/* Child mode: compile one source under an alarm, so that a cache that
** blocks (a FIFO in an entry's place) fails the test instead of hanging
** it; exits 10 + info.cache, 1 on error. */
static int child_one(const char *recipe, int n) {
  char *src;
  int c;
  alarm(30);
  if ((src = source(recipe, n)) == NULL) return 1;
  c = compile(src, NULL);
  free(src);
  return c < 0 ? 1 : 10 + c;
}

/* Runs child_one in a fresh process; its exit code, or -signal. */
static int run_one(const char *self, const char *recipe, int n) {
  char nbuf[16];
  int status = 0;
  pid_t pid;
  snprintf(nbuf, sizeof nbuf, "%d", n);
  if ((pid = fork()) == 0) {
    execl("/proc/self/exe", self, "--one", recipe, nbuf, (char *)NULL);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1000;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static int is_regular(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* lb_cache_list and lb_cache_clear with files named like entries that are
** not regular files: listed last with what they are (a FIFO never
** opened: the alarm fails a list that waits on it); clear removes the
** entry and the FIFO, keeps the directory, and succeeds. */
static void odd_entries(const char *dir, const char *src) {
  char fifo[4200], sub[4200], entry[4200];
  lb_cache_entry *e = NULL;
  int n = 0, removed = -1, i, kinds = 0;
  clear(dir);
  CHECK(compile(src, NULL) == 0 && entries(dir, entry, sizeof entry) == 1,
        "odd entries: no entry written");
  snprintf(fifo, sizeof fifo, "%s/0123456789abcdee.lbc", dir);
  snprintf(sub, sizeof sub, "%s/0123456789abcdef.lbc", dir);
  CHECK(mkfifo(fifo, 0644) == 0 && mkdir(sub, 0755) == 0,
        "odd entries: cannot make a FIFO and a directory");
  alarm(20);
  CHECK(lb_cache_list(&e, &n) == LB_OK && n == 3, "odd entries: listed %d, "
        "expected 3: %s", n, lb_errmsg());
  alarm(0);
  CHECK(n == 3 && e[0].odd[0] == '\0' && e[0].bytes > 0 &&
            strcmp(e[0].kernel, "?") != 0,
        "odd entries: the entry is not listed first, whole");
  for (i = 1; i < n; i++) {
    const int fi = strcmp(e[i].file, "0123456789abcdee.lbc") == 0;
    CHECK(strcmp(e[i].odd, fi ? "a FIFO" : "a directory") == 0 &&
              e[i].bytes == 0 && strcmp(e[i].recipe, "?") == 0,
          "odd entries: %s listed as \"%s\"", e[i].file, e[i].odd);
    kinds |= fi ? 1 : 2;
  }
  CHECK(kinds == 3, "odd entries: the FIFO or the directory not listed");
  lb_free(e);
  CHECK(lb_cache_clear(&removed) == LB_OK && removed == 2,
        "odd entries: clear removed %d (expected the entry and the FIFO): %s",
        removed, lb_errmsg());
  CHECK(!is_regular(entry) && access(fifo, F_OK) != 0 && access(sub, F_OK) == 0,
        "odd entries: clear removed the wrong files");
  CHECK(lb_cache_list(&e, &n) == LB_OK && n == 1 &&
            strcmp(e[0].odd, "a directory") == 0,
        "odd entries: after clear, %d listed", n);
  lb_free(e);
  rmdir(sub);
  printf("cache list and clear: a FIFO and a directory named like entries\n");
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/lowbit-cache-test-XXXXXX", entry[4200];
  const char *recipe;
  char *src;
  double miss_s = 0, hit_s = 0;
  int c, i;
  pid_t kids[2];
  if (argc == 4 && strcmp(argv[1], "--child") == 0)
    return child(argv[2], atoi(argv[3]));
  if (argc == 4 && strcmp(argv[1], "--one") == 0)
    return child_one(argv[2], atoi(argv[3]));
  if (argc != 2) {
    fprintf(stderr, "usage: test_cache RECIPE\n");
    return 2;
  }
  recipe = argv[1];
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  setenv("LOWBIT_CACHE_DIR", dir, 1);
  unsetenv("LOWBIT_CACHE");
  unsetenv("LOWBIT_CACHE_MAX");

  /* Concurrency first, in fresh processes: both fill the same directory. */
  for (i = 0; i < 2; i++) {
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", 4096 + 32 * (i + 1));
    kids[i] = fork();
    if (kids[i] == 0) {
      execl("/proc/self/exe", argv[0], "--child", recipe, nbuf, (char *)NULL);
      _exit(127);
    }
  }
  for (i = 0; i < 2; i++) {
    int status = 0;
    CHECK(kids[i] > 0 && waitpid(kids[i], &status, 0) == kids[i] &&
              WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "concurrent process %d failed (status %d)", i, status);
  }
  CHECK(entries(dir, NULL, 0) == 3, "expected 3 entries after two processes, "
        "found %d", entries(dir, NULL, 0));
  for (i = 0; i < 2; i++) {
    char *s = source(recipe, 4096 + 32 * (i + 1));
    CHECK(s && compile(s, NULL) == 2, "entry of process %d is not a hit", i);
    free(s);
  }
  printf("two processes filled the cache at once: 3 entries, all hits\n");
  clear(dir);

  src = source(recipe, 4096);
  if (src == NULL) {
    printf("FAIL: cannot generate: %s\n", lb_errmsg());
    return 1;
  }
  c = compile(src, &miss_s);
  CHECK(c == 0, "first compile should miss, got cache = %d", c);
  c = compile(src, &hit_s);
  CHECK(c == 2, "second compile should hit, got cache = %d", c);
  CHECK(hit_s * 5 < miss_s, "hit (%.4f s) not much faster than miss "
        "(%.4f s)", hit_s, miss_s);
  printf("miss %.3f s, hit %.4f s\n", miss_s, hit_s);
  CHECK(entries(dir, entry, sizeof entry) == 1, "expected one entry");

  damaged("corrupted", entry, src, flip_byte);
  damaged("truncated", entry, src, truncate_half);
  damaged("garbage", entry, src, garbage);
  {
    /* an empty file of the right name */
    FILE *f = fopen(entry, "wb");
    if (f) fclose(f);
    c = compile(src, NULL);
    CHECK(c == 0, "empty entry: expected a recompile, got %d", c);
    c = compile(src, NULL);
    CHECK(c == 2, "empty entry: expected a hit after the rewrite, got %d", c);
  }
  {
    /* a FIFO in the entry's place: opening it to read must not wait for
    ** a writer; it is a miss, and the write replaces it */
    remove(entry);
    CHECK(mkfifo(entry, 0644) == 0, "mkfifo %s failed", entry);
    c = run_one(argv[0], recipe, 4096);
    CHECK(c != -SIGALRM, "FIFO entry: lb_compile_offline blocked (killed by "
          "the alarm after 30 s)");
    CHECK(c == 10, "FIFO entry: expected a recompile (10), got %d", c);
    CHECK(is_regular(entry), "FIFO entry: not replaced by an entry");
    if (!is_regular(entry)) remove(entry);   /* else this process blocks */
    CHECK(compile(src, NULL) == 2, "FIFO entry: no hit after the rewrite");
    printf("a FIFO in an entry's place: no wait, recompiled, replaced\n");

    /* a directory there: a miss, and it cannot be replaced, so the
    ** kernel is not kept and lb_cache_query says why */
    remove(entry);
    CHECK(mkdir(entry, 0755) == 0, "mkdir %s failed", entry);
    c = run_one(argv[0], recipe, 4096);
    CHECK(c == 10, "directory entry: expected a recompile (10), got %d", c);
    CHECK(compile(src, NULL) == 0, "directory entry: hit");
    expect_state("directory in an entry's place", 1, 0, entry,
                 "Is a directory");
    rmdir(entry);
    CHECK(compile(src, NULL) == 0 && compile(src, NULL) == 2,
          "directory entry removed: no miss then hit");
    expect_state("directory gone", 1, 1, NULL, NULL);
  }
  {
    /* a whole, valid entry under another key's name must not be used:
    ** it is another kernel */
    char *o = source(recipe, 4096 + 32 * 5), other[4200];
    const char *const first[1] = {entry};
    CHECK(o && compile(o, NULL) == 0, "second source: no miss");
    entry_not_in(dir, first, 1, other, sizeof other);
    CHECK(other[0] && copy_file(entry, other), "cannot copy %s", entry);
    c = compile(o, NULL);
    CHECK(c == 0, "valid entry of another key was used (cache = %d)", c);
    c = compile(o, NULL);
    CHECK(c == 2, "entry under the wrong key: no hit after the rewrite (%d)",
          c);
    c = compile(src, NULL);
    CHECK(c == 2, "first entry disturbed (%d)", c);
    printf("a valid entry under another key's name is not used\n");

    /* the same, with the header saying the right hash: only the stored
    ** key tells them apart */
    CHECK(collide(entry, other), "cannot forge %s", other);
    c = compile(o, NULL);
    CHECK(c == 0, "entry of a colliding key was used (cache = %d)", c);
    c = compile(o, NULL);
    CHECK(c == 2, "colliding entry: no hit after the rewrite (%d)", c);
    printf("an entry whose hash collides with the key's is not used\n");
    free(o);
  }
  {
    /* eviction: four entries a, b, c, d; a is used again after b and c
    ** were written, so b is the oldest when d does not fit */
    char *s4[4], ent[4][4200], lim[32];
    const char *const known[3] = {ent[0], ent[1], ent[2]};
    long sz[4];
    clear(dir);
    for (i = 0; i < 4; i++) s4[i] = source(recipe, 4096 + 32 * (10 + i));
    for (i = 0; i < 3; i++) {
      CHECK(s4[i] && compile(s4[i], NULL) == 0, "eviction: source %d", i);
      entry_not_in(dir, known, i, ent[i], sizeof ent[i]);   /* the new one */
      sz[i] = file_size(ent[i]);
      CHECK(sz[i] > 0, "eviction: entry %d not found", i);
      age(ent[i], 300 - 100 * i);   /* a: 300 s old, b: 200, c: 100 */
    }
    CHECK(compile(s4[0], NULL) == 2, "eviction: a should hit");
    /* room for a, b, c and half of d: writing d must remove exactly b */
    snprintf(lim, sizeof lim, "%ld", sz[0] + sz[1] + sz[2] + sz[2] / 2);
    setenv("LOWBIT_CACHE_MAX", lim, 1);
    CHECK(compile(s4[3], NULL) == 0, "eviction: d should miss");
    CHECK(entries(dir, NULL, 0) == 3, "eviction: %d entries, expected 3",
          entries(dir, NULL, 0));
    CHECK(file_size(ent[1]) < 0, "eviction: b (the oldest) was kept");
    CHECK(compile(s4[0], NULL) == 2 && compile(s4[2], NULL) == 2 &&
              compile(s4[3], NULL) == 2,
          "eviction: a, c or d was removed");
    setenv("LOWBIT_CACHE_MAX", "1k", 1);
    CHECK(compile(s4[1], NULL) == 0 && entries(dir, NULL, 0) == 0,
          "LOWBIT_CACHE_MAX=1k: %d entries kept", entries(dir, NULL, 0));
    /* 0 is no limit */
    setenv("LOWBIT_CACHE_MAX", "0", 1);
    CHECK(compile(s4[0], NULL) == 0 && compile(s4[1], NULL) == 0 &&
              entries(dir, NULL, 0) == 2,
          "LOWBIT_CACHE_MAX=0: %d entries kept", entries(dir, NULL, 0));
    /* a value that is no size (a word, a sign, a stray suffix, past 64
    ** bits) is an error lb_cache_query reports, naming it, and no new
    ** entry is kept (it was 1g, silently); hits still serve */
    {
      static const char *const bad[] = {"abc", "-1", "1x", "1g ", "+5",
                                        "17179869184g",
                                        "99999999999999999999"};
      size_t b;
      for (b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char what[64];   /* (also what the reason must name) */
        setenv("LOWBIT_CACHE_MAX", bad[b], 1);
        snprintf(what, sizeof what, "LOWBIT_CACHE_MAX=\"%s\"", bad[b]);
        CHECK(compile(s4[2], NULL) == 0 && entries(dir, NULL, 0) == 2,
              "%s: a miss expected and no entry kept (%d entries)", what,
              entries(dir, NULL, 0));
        CHECK(compile(s4[0], NULL) == 2, "%s: an entry kept before did not "
              "hit", what);
        expect_state(what, 1, 0, what, "not a size");
      }
    }
    /* valid forms keep working: suffixes of either case, plain bytes, and
    ** an empty value is the default */
    {
      static const char *const good[] = {"1G", "4096m", "1048576k",
                                         "1073741824", ""};
      size_t g;
      for (g = 0; g < sizeof good / sizeof good[0]; g++) {
        char what[64];
        setenv("LOWBIT_CACHE_MAX", good[g], 1);
        snprintf(what, sizeof what, "LOWBIT_CACHE_MAX=\"%s\"", good[g]);
        expect_state(what, 1, 1, NULL, NULL);
      }
      CHECK(compile(s4[2], NULL) == 0 && entries(dir, NULL, 0) == 3,
            "LOWBIT_CACHE_MAX=\"\": %d entries kept, not 3",
            entries(dir, NULL, 0));
    }
    unsetenv("LOWBIT_CACHE_MAX");
    {
      /* a temporary file whose writer died an hour ago goes; a fresh one
      ** and a file that is not the cache's stay */
      char old_tmp[4200], new_tmp[4200], other[4200];
      FILE *f;
      snprintf(old_tmp, sizeof old_tmp, "%s/0123456789abcdef.lbc.1.0x1.tmp",
               dir);
      snprintf(new_tmp, sizeof new_tmp, "%s/0123456789abcdef.lbc.2.0x2.tmp",
               dir);
      snprintf(other, sizeof other, "%s/notes-for-me.lbc", dir);
      if ((f = fopen(old_tmp, "w")) != NULL) fclose(f);
      if ((f = fopen(new_tmp, "w")) != NULL) fclose(f);
      if ((f = fopen(other, "w")) != NULL) fclose(f);
      age(old_tmp, 7200);
      age(other, 7200);
      CHECK(compile(s4[3], NULL) == 0, "eviction: d should miss again");
      CHECK(file_size(old_tmp) < 0, "stale temporary file kept");
      CHECK(file_size(new_tmp) == 0, "fresh temporary file removed");
      CHECK(file_size(other) == 0, "a file not of the cache was removed");
      remove(new_tmp);
      remove(other);
    }
    for (i = 0; i < 4; i++) free(s4[i]);
    printf("over LOWBIT_CACHE_MAX the least recently used entry goes\n");
  }
  {
    /* the directory is created (mkdir -p); a cache that cannot be
    ** written costs the hit, never the compile */
    char nested[4200], file[4200];
    FILE *f;
    snprintf(nested, sizeof nested, "%s/a/b", dir);
    setenv("LOWBIT_CACHE_DIR", nested, 1);
    c = compile(src, NULL);
    CHECK(c == 0, "nested dir: expected a miss, got %d", c);
    c = compile(src, NULL);
    CHECK(c == 2, "nested dir %s not created or not used (%d)", nested, c);
    expect_state("nested dir", 1, 1, NULL, NULL);
    clear(nested);
    rmdir(nested);
    snprintf(nested, sizeof nested, "%s/a", dir);
    rmdir(nested);
    snprintf(file, sizeof file, "%s/plainfile", dir);
    if ((f = fopen(file, "w")) != NULL) fclose(f);
    setenv("LOWBIT_CACHE_DIR", file, 1);
    CHECK(compile(src, NULL) == 0 && compile(src, NULL) == 0,
          "cache dir that is a file: compile failed or hit");
    /* and lb_cache_query says why, with the path */
    expect_state("cache dir is a file", 1, 0, file, "Not a directory");
    remove(file);
    /* /proc/self is a directory nobody, root included, creates files in */
    setenv("LOWBIT_CACHE_DIR", "/proc/self", 1);
    CHECK(compile(src, NULL) == 0 && compile(src, NULL) == 0,
          "cache dir /proc/self: compile failed or hit");
    expect_state("cache dir /proc/self", 1, 0, "/proc/self", NULL);
    if (geteuid() == 0)
      printf("read-only cache dir: not checked, running as root (root "
             "ignores permissions)\n");
    else {
      char ro[4200];
      snprintf(ro, sizeof ro, "%s/readonly", dir);
      mkdir(ro, 0555);
      setenv("LOWBIT_CACHE_DIR", ro, 1);
      CHECK(compile(src, NULL) == 0 && compile(src, NULL) == 0,
            "read-only cache dir: compile failed or hit");
      expect_state("read-only cache dir", 1, 0, ro, "Permission denied");
      rmdir(ro);
    }
    setenv("LOWBIT_CACHE_DIR", dir, 1);
    CHECK(compile(src, NULL) >= 0, "back in the good dir: compile failed");
    expect_state("good dir", 1, 1, NULL, NULL);
    printf("cache dir created when missing; an unusable one only costs "
           "the hit, and lb_cache_query says why\n");
  }

  odd_entries(dir, src);

  setenv("LOWBIT_CACHE", "0", 1);
  clear(dir);
  CHECK(compile(src, NULL) == 0 && compile(src, NULL) == 0,
        "LOWBIT_CACHE=0 still hit");
  CHECK(entries(dir, NULL, 0) == 0, "LOWBIT_CACHE=0 still wrote entries");
  expect_state("LOWBIT_CACHE=0", 0, 0, "LOWBIT_CACHE=0", NULL);
  printf("LOWBIT_CACHE=0: no hits, nothing written\n");

  free(src);
  clear(dir);
  rmdir(dir);
  printf("cache: %d failure(s)\n", failures);
  return failures != 0;
}
