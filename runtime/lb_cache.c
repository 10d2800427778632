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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lb_cache.h"
#include "lb_hash.h"

#define MAGIC "LBCACHE2"
#define MAX_ENTRY ((uint64_t)1 << 30)
#define DEFAULT_MAX ((uint64_t)1 << 30)
#define STALE_TMP 3600   /* seconds: a temporary file this old lost its writer */

typedef struct header {
  char magic[8];
  uint64_t hash, kind, size, logsize, idsize, sum;
} header;

static int cache_dir(char *buf, size_t len) {
  const char *e = getenv("LOWBIT_CACHE");
  const char *d;
  int n;
  if (e && strcmp(e, "0") == 0) return 0;
  if ((d = getenv("LOWBIT_CACHE_DIR")) && *d)
    n = snprintf(buf, len, "%s", d);
  else if ((d = getenv("XDG_CACHE_HOME")) && *d)
    n = snprintf(buf, len, "%s/lowbit", d);
  else if ((d = getenv("HOME")) && *d)
    n = snprintf(buf, len, "%s/.cache/lowbit", d);
  else
    return 0;
  return n > 0 && (size_t)n < len;
}

/* mkdir -p */
static int make_dirs(char *path) {
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
  return mkdir(path, 0755) == 0 || errno == EEXIST;
}

static int entry_path(uint64_t hash, char *buf, size_t len) {
  char dir[4096];
  int n;
  if (!cache_dir(dir, sizeof dir)) return 0;
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
  FILE *f;
  long end;
  char *key = NULL;
  memset(out, 0, sizeof *out);
  if (!entry_path(hash, path, sizeof path)) return LB_EIO;
  if ((f = fopen(path, "rb")) == NULL) return LB_EIO;
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, 8) != 0 ||
      h.hash != hash || h.kind > 1 || h.size == 0 || h.size > MAX_ENTRY ||
      h.logsize > MAX_ENTRY || h.idsize != idlen ||
      fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 ||
      (uint64_t)end != sizeof h + h.size + h.logsize + h.idsize ||
      fseek(f, (long)sizeof h, SEEK_SET) != 0)
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
  fclose(f);
  /* recently used: evicted last (where the file is not ours to touch,
  ** e.g. a read-only cache, it simply keeps its age) */
  utimes(path, NULL);
  return LB_OK;
bad:
  free(key);
  fclose(f);
  lb_binary_free(out);
  return LB_EIO;
}

/* $LOWBIT_CACHE_MAX in bytes (see lb_cache.h). */
static uint64_t cache_max(void) {
  const char *e = getenv("LOWBIT_CACHE_MAX");
  char *end;
  unsigned long long v;
  int shift = 0;
  if (e == NULL || *e < '0' || *e > '9') return DEFAULT_MAX;
  errno = 0;
  v = strtoull(e, &end, 10);
  if (errno != 0) return DEFAULT_MAX;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
  }
  if (*end != '\0' || v > (UINT64_MAX >> shift)) return DEFAULT_MAX;
  return v == 0 ? UINT64_MAX : (uint64_t)v << shift;   /* 0: no limit */
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

/* Failures are not errors: the kernel is compiled, only not kept. */
void lb_cache_put(uint64_t hash, const void *id, size_t idlen,
                  const lb_binary *bin) {
  char path[4200], tmp[4300], dir[4096];
  header h;
  FILE *f;
  int ok;
  if (!cache_dir(dir, sizeof dir) || !make_dirs(dir)) return;
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
  if ((f = fopen(tmp, "wb")) == NULL) return;
  ok = fwrite(&h, sizeof h, 1, f) == 1 &&
       fwrite(bin->data, 1, bin->size, f) == bin->size &&
       (h.logsize == 0 || fwrite(bin->log, 1, h.logsize, f) == h.logsize) &&
       fwrite(id, 1, idlen, f) == idlen;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return;
  }
  evict(dir, cache_max());
}
