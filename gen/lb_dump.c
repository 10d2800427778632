/*
** lb_dump.c: generated source to $LOWBIT_DUMP_DIR.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_dump.h"
#include "lb_err.h"
#include "lb_hash.h"
#include "lb_recipe.h"

lb_status lb_dump(const lb_recipe *r, int n, int k, const char *src) {
  const char *dir = getenv("LOWBIT_DUMP_DIR");
  char path[4200], tmp[4300];
  FILE *f = NULL;
  size_t len;
  int fd, ok, err = 0;
  if (dir == NULL || *dir == '\0') return LB_OK;
  if (r == NULL || src == NULL)
    return lb_fail(LB_EARG, "lb_dump: null argument");
  ok = snprintf(path, sizeof path, "%s/%s-n%d-k%d-%016llx.cu", dir, r->name,
                n, k, (unsigned long long)lb_hash_str(LB_HASH_INIT, src));
  if (ok <= 0 || (size_t)ok >= sizeof path)
    return lb_fail(LB_EIO, "LOWBIT_DUMP_DIR: the path is too long: %s", dir);
  /* unique per process and thread: two writers of one file do not mix */
  snprintf(tmp, sizeof tmp, "%s.%ld.%p.tmp", path, (long)getpid(),
           (void *)&f);
  /* O_EXCL: never write through what already has the name (a link, a
  ** FIFO whose open would block) */
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 || (f = fdopen(fd, "wb")) == NULL) {
    err = errno;
    if (fd >= 0) {
      close(fd);
      remove(tmp);
    }
    return lb_fail(LB_EIO, "LOWBIT_DUMP_DIR: cannot write %s: %s", path,
                   strerror(err));
  }
  len = strlen(src);
  ok = fwrite(src, 1, len, f) == len;
  if (!ok) err = errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = 0;
    err = errno;
  }
  if (!ok) {
    remove(tmp);
    return lb_fail(LB_EIO, "LOWBIT_DUMP_DIR: cannot write %s: %s", path,
                   err ? strerror(err) : "short write");
  }
  return LB_OK;
}

lb_status lb_dump_take(const lb_recipe *r, int n, int k, lb_buf *b,
                       char **src) {
  lb_status st;
  *src = lb_buf_take(b);
  if (*src == NULL) return lb_fail(LB_EMEM, "lb_generate: out of memory");
  /* LOWBIT_DUMP_DIR: every generated kernel (lowbit gen and compile,
  ** lb_op_create), or an error saying why not */
  if ((st = lb_dump(r, n, k, *src)) != LB_OK) {
    free(*src);
    *src = NULL;
  }
  return st;
}
