/*
** lb_cache.c: disk cache entries.
**
** Layout: "LBCACHE1", key, kind (0 CUBIN, 1 PTX), binary size, log size,
** checksum of binary and log, then the binary and the log.  All integers
** are 64-bit little-endian as this host writes them; an entry from another
** byte order simply fails its checks.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lb_cache.h"
#include "lb_hash.h"

#define MAGIC "LBCACHE1"
#define MAX_ENTRY ((uint64_t)1 << 30)

typedef struct header {
  char magic[8];
  uint64_t key, kind, size, logsize, sum;
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

int lb_cache_path(uint64_t key, char *buf, size_t len) {
  char dir[4096];
  int n;
  if (!cache_dir(dir, sizeof dir)) return 0;
  n = snprintf(buf, len, "%s/%016llx.lbc", dir, (unsigned long long)key);
  return n > 0 && (size_t)n < len;
}

static uint64_t checksum(const lb_binary *b) {
  uint64_t h = lb_hash(LB_HASH_INIT, b->data, b->size);
  return lb_hash(h, b->log ? b->log : "", b->log ? strlen(b->log) : 0);
}

lb_status lb_cache_get(uint64_t key, lb_binary *out) {
  char path[4200];
  header h;
  FILE *f;
  long end;
  memset(out, 0, sizeof *out);
  if (!lb_cache_path(key, path, sizeof path)) return LB_EIO;
  if ((f = fopen(path, "rb")) == NULL) return LB_EIO;
  if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, 8) != 0 ||
      h.key != key || h.kind > 1 || h.size == 0 || h.size > MAX_ENTRY ||
      h.logsize > MAX_ENTRY || fseek(f, 0, SEEK_END) != 0 ||
      (end = ftell(f)) < 0 ||
      (uint64_t)end != sizeof h + h.size + h.logsize ||
      fseek(f, (long)sizeof h, SEEK_SET) != 0)
    goto bad;
  out->data = malloc(h.size + 1);
  out->log = malloc(h.logsize + 1);
  if (out->data == NULL || out->log == NULL ||
      fread(out->data, 1, h.size, f) != h.size ||
      fread(out->log, 1, h.logsize, f) != h.logsize)
    goto bad;
  out->data[h.size] = 0;
  out->log[h.logsize] = '\0';
  out->size = h.size;
  out->ptx = (int)h.kind;
  if (strlen(out->log) != h.logsize || checksum(out) != h.sum) goto bad;
  fclose(f);
  return LB_OK;
bad:
  fclose(f);
  lb_binary_free(out);
  return LB_EIO;
}

/* Failures are not errors: the kernel is compiled, only not kept. */
void lb_cache_put(uint64_t key, const lb_binary *bin) {
  char path[4200], tmp[4300], dir[4096];
  header h;
  FILE *f;
  int ok;
  if (!cache_dir(dir, sizeof dir) || !make_dirs(dir)) return;
  if (!lb_cache_path(key, path, sizeof path)) return;
  snprintf(tmp, sizeof tmp, "%s.%ld.%p.tmp", path, (long)getpid(),
           (const void *)&h);
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  h.key = key;
  h.kind = (uint64_t)bin->ptx;
  h.size = bin->size;
  h.logsize = bin->log ? strlen(bin->log) : 0;
  h.sum = checksum(bin);
  if ((f = fopen(tmp, "wb")) == NULL) return;
  ok = fwrite(&h, sizeof h, 1, f) == 1 &&
       fwrite(bin->data, 1, bin->size, f) == bin->size &&
       (h.logsize == 0 || fwrite(bin->log, 1, h.logsize, f) == h.logsize);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
}
