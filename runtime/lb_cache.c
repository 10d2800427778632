/*
** lb_cache.c: disk cache entries.
**
** Layout: "LBCACHE2", hash, kind (0 CUBIN, 1 PTX), binary size, log size,
** key size, checksum of binary, log and stored key, then the binary, the
** log and the key.  The checksum says the file is whole; the stored key,
** compared with the caller's, says it is the right kernel.  All integers
** are 64-bit little-endian as this host writes them; an entry from another
** byte order simply fails its checks.
*/
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lb_cache.h"
#include "lb_err.h"
#include "lb_hash.h"

#define MAGIC "LBCACHE2"
#define MAX_ENTRY ((uint64_t)1 << 30)
#define DEFAULT_MAX ((uint64_t)1 << 30)
#define STALE_TMP 3600   /* seconds: a temporary file this old lost its writer */

typedef struct header {
  char magic[8];
  uint64_t hash, kind, size, logsize, idsize, sum;
} header;

/* The cache directory into buf; 0 (and *why says so) when there is
** none. */
int lb_cache_dir(char *buf, size_t len, const char **why) {
  const char *e = getenv("LOWBIT_CACHE");
  const char *d;
  int n;
  if (e && strcmp(e, "0") == 0) {
    *why = "LOWBIT_CACHE=0";
    return 0;
  }
  if ((d = getenv("LOWBIT_CACHE_DIR")) && *d)
    n = snprintf(buf, len, "%s", d);
  else if ((d = getenv("XDG_CACHE_HOME")) && *d)
    n = snprintf(buf, len, "%s/lowbit", d);
  else if ((d = getenv("HOME")) && *d)
    n = snprintf(buf, len, "%s/.cache/lowbit", d);
  else {
    *why = "no directory: LOWBIT_CACHE_DIR, XDG_CACHE_HOME and HOME are "
           "all unset";
    return 0;
  }
  if (n <= 0 || (size_t)n >= len) {
    *why = "the cache directory's name is too long";
    return 0;
  }
  return 1;
}

/* mkdir -p; 0 with errno set on failure.  A file of that name that is
** not a directory fails here, not later at each entry. */
int lb_make_dirs(char *path) {
  struct stat st;
  char *p;
  for (p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
      *p = '/';
      return 0;
    }
    *p = '/';
  }
  if (mkdir(path, 0755) == 0) return 1;
  if (errno != EEXIST || stat(path, &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return 0;
  }
  return 1;
}

/* Why the last write failed ("" when it succeeded), and in which
** directory: per process, because any thread's write tells about the
** same directory, so lb_cache_query can say why nothing is kept. */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_dir[4096];
static char last_why[512];

/* "<what> <path>: <the system's reason>" into buf; a long path may cut
** it short, which still says what and where. */
static void reason(char *buf, size_t len, const char *what, const char *path,
                   int err) {
  int n = snprintf(buf, len, "%s %s: %s", what, path,
                   err ? strerror(err) : "short write");
  if (n < 0) snprintf(buf, len, "%s", what);   /* (and uses n: no warning
                                              ** about a cut that is meant) */
}

/* Notes the outcome of a write in dir (what NULL: it succeeded). */
static void note(const char *dir, const char *what, const char *path,
                 int err) {
  pthread_mutex_lock(&last_lock);
  snprintf(last_dir, sizeof last_dir, "%s", dir);
  last_why[0] = '\0';
  if (what) reason(last_why, sizeof last_why, what, path, err);
  pthread_mutex_unlock(&last_lock);
}

static int entry_path(uint64_t hash, char *buf, size_t len) {
  char dir[4096];
  const char *why;
  int n;
  if (!lb_cache_dir(dir, sizeof dir, &why)) return 0;
  n = snprintf(buf, len, "%s/%016llx.lbc", dir, (unsigned long long)hash);
  return n > 0 && (size_t)n < len;
}

static uint64_t checksum(const lb_binary *b, const void *id, size_t idlen) {
  uint64_t h = lb_hash(LB_HASH_INIT, b->data, b->size);
  h = lb_hash(h, b->log ? b->log : "", b->log ? strlen(b->log) : 0);
  return lb_hash(h, id, idlen);
}

lb_status lb_cache_get(uint64_t hash, const void *id, size_t idlen,
                       lb_binary *out) {
  char path[4200];
  header h;
  struct stat st;
  FILE *f;
  int fd;
  char *key = NULL;
  memset(out, 0, sizeof *out);
  if (!entry_path(hash, path, sizeof path)) return LB_EIO;
  /* O_NONBLOCK: opening a FIFO to read would wait for a writer forever;
  ** whatever is not a regular file (FIFO, directory, device) is a miss,
  ** and the write that follows replaces it where it can */
  if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) return LB_EIO;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (f = fdopen(fd, "rb")) == NULL) {
    close(fd);
    return LB_EIO;
  }
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, 8) != 0 ||
      h.hash != hash || h.kind > 1 || h.size == 0 || h.size > MAX_ENTRY ||
      h.logsize > MAX_ENTRY || h.idsize != idlen ||
      (uint64_t)st.st_size != sizeof h + h.size + h.logsize + h.idsize)
    goto bad;
  out->data = malloc(h.size + 1);
  out->log = malloc(h.logsize + 1);
  key = malloc(idlen + 1);
  if (out->data == NULL || out->log == NULL || key == NULL ||
      fread(out->data, 1, h.size, f) != h.size ||
      fread(out->log, 1, h.logsize, f) != h.logsize ||
      fread(key, 1, idlen, f) != idlen)
    goto bad;
  out->data[h.size] = 0;
  out->log[h.logsize] = '\0';
  out->size = h.size;
  out->ptx = (int)h.kind;
  /* whole (checksum), and the right kernel: the key decides, not its
  ** hash, so a collision is a miss */
  if (strlen(out->log) != h.logsize || checksum(out, key, idlen) != h.sum ||
      memcmp(key, id, idlen) != 0)
    goto bad;
  free(key);
  /* recently used: evicted last (where the file is not ours to touch,
  ** e.g. a read-only cache, it simply keeps its age) */
  futimens(fd, NULL);
  fclose(f);
  return LB_OK;
bad:
  free(key);
  fclose(f);
  lb_binary_free(out);
  return LB_EIO;
}

/* $LOWBIT_CACHE_MAX in bytes into *max: digits with an optional k, m or
** g suffix (0: no limit; unset or empty: 1g).  Anything else (a sign, a
** stray character, a size past 64 bits) returns 0 with why naming it:
** the cache then keeps no new entry, since it could not keep to the limit
** that was meant, and lb_cache_query says why (where an unusable
** directory's reason goes).  Such a value was 1g before, without a word:
** "abc", "-1" and "1x" each kept a gigabyte. */
static int cache_max(uint64_t *max, char *why, size_t len) {
  const char *e = getenv("LOWBIT_CACHE_MAX");
  char *end;
  unsigned long long v;
  int shift = 0;
  *max = DEFAULT_MAX;
  if (e == NULL || *e == '\0') return 1;
  if (*e >= '0' && *e <= '9') {
    errno = 0;
    v = strtoull(e, &end, 10);
    switch (*end) {
      case 'k': case 'K': shift = 10; end++; break;
      case 'm': case 'M': shift = 20; end++; break;
      case 'g': case 'G': shift = 30; end++; break;
      default: break;
    }
    if (errno == 0 && *end == '\0' && v <= (UINT64_MAX >> shift)) {
      *max = v == 0 ? UINT64_MAX : (uint64_t)v << shift;   /* 0: no limit */
      return 1;
    }
  }
  snprintf(why, len, "LOWBIT_CACHE_MAX=\"%.64s\" is not a size (bytes: "
           "digits with an optional k, m or g, under 2^64; 0: no limit), "
           "so no kernel is kept", e);
  return 0;
}

typedef struct item {
  char name[32];   /* 16 hex digits + ".lbc" */
  uint64_t size;
  struct timespec mtime;
} item;

static int older(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

const char *lb_file_kind(unsigned m) {
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
         : S_ISLNK(m) ? "a symbolic link" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a plain file";
}

/* Names the cache writes: an entry, 16 lowercase hex digits and ".lbc"
** (2), or its temporary file, "<entry>.<pid>.<ptr>.tmp" (1); else 0.  Only
** such files are counted or removed, whatever else shares the directory. */
static int cache_name(const char *s) {
  size_t l = strlen(s);
  int i;
  for (i = 0; i < 16; i++)
    if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
      return 0;
  if (strcmp(s + 16, ".lbc") == 0) return 2;
  return l > 24 && strncmp(s + 16, ".lbc.", 5) == 0 &&
         strcmp(s + l - 4, ".tmp") == 0;
}

/* Removes the oldest entries of dir until they total at most max bytes,
** and temporary files whose writer died long ago.  Another process may
** remove the same files at the same time: a remove that fails is only
** skipped. */
static void evict(const char *dir, uint64_t max) {
  DIR *d = opendir(dir);
  struct dirent *de;
  item *it = NULL, *grown;
  size_t n = 0, cap = 0, i;
  uint64_t total = 0;
  if (d == NULL) return;
  while ((de = readdir(d)) != NULL) {
    char p[4400];
    struct stat st;
    int kind = cache_name(de->d_name);
    if (kind == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (kind == 1) {
      if (st.st_mtim.tv_sec + STALE_TMP < time(NULL)) remove(p);
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      if ((grown = realloc(it, cap * sizeof *it)) == NULL) break;
      it = grown;
    }
    memcpy(it[n].name, de->d_name, 21);   /* 20 characters and the NUL */
    it[n].size = (uint64_t)st.st_size;
    it[n].mtime = st.st_mtim;
    total += it[n].size;
    n++;
  }
  closedir(d);
  if (total > max) {
    qsort(it, n, sizeof *it, older);
    for (i = 0; i < n && total > max; i++) {
      char p[4400];
      snprintf(p, sizeof p, "%s/%s", dir, it[i].name);
      remove(p);
      total -= it[i].size;
    }
  }
  free(it);
}

/* A new file for writing, or -1.  O_EXCL: never write through whatever
** already has the name (a link, a FIFO, whose open would block); a
** leftover of a dead writer that had our pid is removed once. */
static int create(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST && remove(path) == 0)
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  return fd;
}

/* Failures are not errors: the kernel is compiled, only not kept; the
** reason is noted for lb_cache_query. */
void lb_cache_put(uint64_t hash, const void *id, size_t idlen,
                  const lb_binary *bin) {
  char path[4200], tmp[4300], dir[4096], bad[512];
  const char *why;
  header h;
  FILE *f = NULL;
  uint64_t max;
  int fd, ok, err = 0;
  if (!lb_cache_dir(dir, sizeof dir, &why)) return;
  if (!cache_max(&max, bad, sizeof bad)) return;   /* lb_cache_query says */
  if (!lb_make_dirs(dir)) {
    note(dir, "cannot create directory", dir, errno);
    return;
  }
  if (!entry_path(hash, path, sizeof path)) return;
  snprintf(tmp, sizeof tmp, "%s.%ld.%p.tmp", path, (long)getpid(),
           (const void *)&h);
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  h.hash = hash;
  h.kind = (uint64_t)bin->ptx;
  h.size = bin->size;
  h.logsize = bin->log ? strlen(bin->log) : 0;
  h.idsize = idlen;
  h.sum = checksum(bin, id, idlen);
  fd = create(tmp);
  if (fd < 0 || (f = fdopen(fd, "wb")) == NULL) {
    err = errno;
    if (fd >= 0) {
      close(fd);
      remove(tmp);
    }
    note(dir, "cannot create a file in", dir, err);
    return;
  }
  ok = fwrite(&h, sizeof h, 1, f) == 1 &&
       fwrite(bin->data, 1, bin->size, f) == bin->size &&
       (h.logsize == 0 || fwrite(bin->log, 1, h.logsize, f) == h.logsize) &&
       fwrite(id, 1, idlen, f) == idlen;
  if (!ok) err = errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  if (!ok) {
    remove(tmp);
    note(dir, "cannot write", tmp, err);
    return;
  }
  /* over a FIFO or a stale file this works; over a directory it fails,
  ** and this kernel is simply not kept */
  if (rename(tmp, path) != 0) {
    err = errno;
    remove(tmp);
    note(dir, "cannot replace", path, err);
    return;
  }
  note(dir, NULL, NULL, 0);
  evict(dir, max);
}

lb_status lb_cache_query(lb_cache_state *out) {
  char tmp[4300];
  const char *why = "";
  int fd;
  if (out == NULL) return lb_fail(LB_EARG, "lb_cache_query: out is NULL");
  memset(out, 0, sizeof *out);
  if (!lb_cache_dir(out->dir, sizeof out->dir, &why)) {
    out->dir[0] = '\0';
    snprintf(out->why, sizeof out->why, "%s", why);
    return LB_OK;
  }
  out->enabled = 1;
  /* the probe: what a write would do, short of an entry */
  if (!lb_make_dirs(out->dir)) {
    reason(out->why, sizeof out->why, "cannot create directory", out->dir,
           errno);
    return LB_OK;
  }
  snprintf(tmp, sizeof tmp, "%s/%016llx.lbc.%ld.%p.probe.tmp", out->dir,
           0ull, (long)getpid(), (void *)tmp);
  if ((fd = create(tmp)) < 0) {
    reason(out->why, sizeof out->why, "cannot create a file in", out->dir,
           errno);
    return LB_OK;
  }
  close(fd);
  remove(tmp);
  {   /* a limit that is no size keeps every new entry out (cache_max) */
    uint64_t max;
    if (!cache_max(&max, out->why, sizeof out->why)) return LB_OK;
  }
  /* the probe can succeed where an entry cannot be written (a directory
  ** in its place, a full disk): the last write says */
  pthread_mutex_lock(&last_lock);
  if (last_why[0] && strcmp(last_dir, out->dir) == 0)
    snprintf(out->why, sizeof out->why, "%s", last_why);
  pthread_mutex_unlock(&last_lock);
  out->writable = out->why[0] == '\0';
  return LB_OK;
}

/* ---- listing and clearing (lowbit cache list|clear) --------------------- */

/* What the generated source's first lines (head) say of the kernel
** (gen/lb_gen.c and gen/lb_gemm.c write them): the recipe and shape, the
** kind and rows, the SM count, and a plan that is not the rules'. */
static void from_source(const char *head, lb_cache_entry *e) {
  char kind[8] = "", rows[24] = "", who[64] = "", plan[LB_PLAN_LEN] = "";
  const char *p;
  if ((p = strstr(head, "from recipe '")) != NULL)
    sscanf(p, "from recipe '%63[^']'", e->recipe);
  if ((p = strstr(head, " --n ")) != NULL)
    sscanf(p, " --n %d --k %d", &e->n, &e->k);
  /* "the GEMV kind, for activation rows 1..8." (either kind's first line) */
  if ((p = strstr(head, "): the ")) != NULL &&
      sscanf(p, "): the %7[A-Z] kind, for activation rows %23[0-9.+]", kind,
             rows) == 2) {
    size_t i, n = strlen(rows);
    if (n && rows[n - 1] == '.') rows[n - 1] = '\0';   /* the sentence's */
    for (i = 0; kind[i]; i++) kind[i] = (char)tolower((unsigned char)kind[i]);
    snprintf(e->kernel, sizeof e->kernel, "%s %.15s", kind, rows);   /* (fits) */
  }
  if ((p = strstr(head, " --sms ")) != NULL) sscanf(p, " --sms %d", &e->sms);
  if ((p = strstr(head, "// Plan changed by ")) != NULL &&
      sscanf(p, "// Plan changed by %63[^:]: \"%127[^\"]\"", who, plan) == 2)
    /* the words of lowbit bench's "plan" column */
    snprintf(e->plan, sizeof e->plan, "%.100s (%.40s)", plan,   /* (fits) */
             !strcmp(who, "the caller") ? "set"
             : !strncmp(who, "the tuning table", 16) ? "table" : who);
  else if (strstr(head, "// Regenerate with: ") != NULL)
    snprintf(e->plan, sizeof e->plan, "rules");
}

/* What made entry path: from_source on the first lines of the source its
** key holds, the arch from the options at the key's end.  Fields stay
** unknown ("?", 0: the caller's) where the file does not say. */
static void describe(const char *path, lb_cache_entry *e) {
  char head[4096], tail[256];
  header h;
  FILE *f;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  const char *p;
  size_t got;
  uint64_t key, back;
  if (fd < 0) return;
  if ((f = fdopen(fd, "rb")) == NULL) {
    close(fd);
    return;
  }
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, 8) != 0 ||
      h.size > MAX_ENTRY || h.logsize > MAX_ENTRY || h.idsize > MAX_ENTRY)
    goto done;
  e->ptx = h.kind == 1;
  key = sizeof h + h.size + h.logsize;
  if (fseek(f, (long)key, SEEK_SET) != 0) goto done;
  got = fread(head, 1, (size_t)(h.idsize < sizeof head - 1 ? h.idsize
                                                          : sizeof head - 1),
              f);
  head[got] = '\0';
  from_source(head, e);
  back = h.idsize < sizeof tail ? h.idsize : sizeof tail;
  if (fseek(f, (long)(key + h.idsize - back), SEEK_SET) != 0) goto done;
  got = fread(tail, 1, (size_t)back, f);
  for (p = tail; p < tail + got; p++)   /* the options are NUL-separated */
    if (strncmp(p, "--gpu-architecture=", 19) == 0 &&
        (size_t)(p - tail) + 30 < got) {
      sscanf(p + 19, "%*[a-z]_%d", &e->arch);
      break;
    }
done:
  fclose(f);
}

/* The entries first (odd == 0), then the files named like one that are
** not regular files (odd == 1). */
static int odd_last(const void *a, const void *b) {
  const lb_cache_entry *x = a, *y = b;
  return (x->odd[0] != '\0') - (y->odd[0] != '\0');
}

lb_status lb_cache_list(lb_cache_entry **out, int *count) {
  char dir[4096];
  const char *why = "";
  DIR *d;
  struct dirent *de;
  lb_cache_entry *list = NULL, *grown;
  int n = 0, cap = 0;
  if (out == NULL || count == NULL)
    return lb_fail(LB_EARG, "lb_cache_list: null argument");
  *out = NULL;
  *count = 0;
  if (!lb_cache_dir(dir, sizeof dir, &why))
    return lb_fail(LB_EIO, "lb_cache_list: no cache: %s", why);
  if ((d = opendir(dir)) == NULL) {
    if (errno == ENOENT) return LB_OK;   /* nothing cached yet */
    return lb_fail(LB_EIO, "lb_cache_list: %s: %s", dir, strerror(errno));
  }
  while ((de = readdir(d)) != NULL) {
    char p[4400];
    struct stat st;
    if (cache_name(de->d_name) != 2) continue;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    if (lstat(p, &st) != 0) continue;   /* removed meanwhile */
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      if ((grown = realloc(list, (size_t)cap * sizeof *list)) == NULL) {
        closedir(d);
        free(list);
        return lb_fail(LB_EMEM, "lb_cache_list: out of memory");
      }
      list = grown;
    }
    memset(&list[n], 0, sizeof list[n]);
    memcpy(list[n].file, de->d_name, 21);   /* 20 characters and the NUL */
    /* unknown until the file says (describe) */
    snprintf(list[n].recipe, sizeof list[n].recipe, "?");
    snprintf(list[n].kernel, sizeof list[n].kernel, "?");
    snprintf(list[n].plan, sizeof list[n].plan, "?");
    if (S_ISREG(st.st_mode)) {
      list[n].bytes = (uint64_t)st.st_size;
      list[n].mtime = (long long)st.st_mtim.tv_sec;
      describe(p, &list[n]);
    } else {   /* never opened: a FIFO would wait for a writer */
      snprintf(list[n].odd, sizeof list[n].odd, "%s",
               lb_file_kind(st.st_mode));
    }
    n++;
  }
  closedir(d);
  if (n > 1) qsort(list, (size_t)n, sizeof *list, odd_last);
  *out = list;
  *count = n;
  return LB_OK;
}

lb_status lb_cache_clear(int *removed) {
  char dir[4096];
  const char *why = "";
  DIR *d;
  struct dirent *de;
  int n = 0, failed = 0, err = 0;
  if (removed) *removed = 0;
  if (!lb_cache_dir(dir, sizeof dir, &why))
    return lb_fail(LB_EIO, "lb_cache_clear: no cache: %s", why);
  if ((d = opendir(dir)) == NULL) {
    if (errno == ENOENT) return LB_OK;
    return lb_fail(LB_EIO, "lb_cache_clear: %s: %s", dir, strerror(errno));
  }
  /* only what the cache writes: other files in the directory stay */
  while ((de = readdir(d)) != NULL) {
    char p[4400];
    struct stat st;
    if (cache_name(de->d_name) == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    /* a directory is not what the cache wrote (it cannot be unlinked) */
    if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) continue;
    if (unlink(p) == 0)
      n++;
    else if (errno != ENOENT) {   /* another process may clear it too */
      failed++;
      err = errno;
    }
  }
  closedir(d);
  if (removed) *removed = n;
  if (failed)
    return lb_fail(LB_EIO, "lb_cache_clear: %d file(s) in %s could not be "
                   "removed: %s", failed, dir, strerror(err));
  return LB_OK;
}
