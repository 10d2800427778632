/*
** test_dump.c: lb_dump, the generated source to LOWBIT_DUMP_DIR.  Unset or
** empty: nothing, and no error.  A directory: one file, named after the
** recipe, N, K and the source's hash, holding exactly the source and no
** temporary file beside it.  A directory that is missing, a regular file,
** or one nobody can write in (/proc/self): LB_EIO naming the path, where
** before a failed dump was ignored.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_dump.h"
#include "lb_hash.h"
#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

/* The whole file, malloc'ed, or NULL. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
  }
  fclose(f);
  return buf;
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *de;
  int n = 0;
  if (d == NULL) return -1;
  while ((de = readdir(d)) != NULL) n += de->d_name[0] != '.';
  closedir(d);
  return n;
}

/* LOWBIT_DUMP_DIR=where must fail with LB_EIO, naming where. */
static void refused(const char *what, const char *where, const lb_recipe *r,
                    const char *src) {
  lb_status st;
  setenv("LOWBIT_DUMP_DIR", where, 1);
  st = lb_dump(r, 4096, 4096, src);
  CHECK(st == LB_EIO, "%s: status %s, expected LB_EIO", what,
        lb_status_name(st));
  CHECK(strstr(lb_errmsg(), where) != NULL, "%s: message without the path: "
        "%s", what, lb_errmsg());
  printf("%s: %s\n", what, lb_errmsg());
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/lowbit-dump-test-XXXXXX", path[4200], other[4200];
  lb_recipe *r;
  char *src = NULL, *got;
  size_t len = 0;
  FILE *f;
  if (argc != 2) {
    fprintf(stderr, "usage: test_dump RECIPE\n");
    return 2;
  }
  if (lb_recipe_load(argv[1], &r) != LB_OK) {
    printf("FAIL: %s\n", lb_errmsg());
    return 1;
  }
  /* the source before any dump directory is set */
  unsetenv("LOWBIT_DUMP_DIR");
  if (lb_generate(r, 4096, 4096, 132, &src) != LB_OK) {
    printf("FAIL: cannot generate: %s\n", lb_errmsg());
    return 1;
  }
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }

  CHECK(lb_dump(r, 4096, 4096, src) == LB_OK, "unset: %s", lb_errmsg());
  setenv("LOWBIT_DUMP_DIR", "", 1);
  CHECK(lb_dump(r, 4096, 4096, src) == LB_OK, "empty: %s", lb_errmsg());

  setenv("LOWBIT_DUMP_DIR", dir, 1);
  CHECK(lb_dump(r, 4096, 4096, src) == LB_OK, "good dir: %s", lb_errmsg());
  snprintf(path, sizeof path, "%s/%s-n4096-k4096-%016llx.cu", dir,
           lb_recipe_name(r),
           (unsigned long long)lb_hash_str(LB_HASH_INIT, src));
  got = slurp(path, &len);
  CHECK(got != NULL, "good dir: %s not written", path);
  CHECK(got && len == strlen(src) && memcmp(got, src, len) == 0,
        "good dir: %s does not hold exactly the source (%zu bytes, %zu "
        "expected)", path, len, strlen(src));
  free(got);
  /* again: replaced whole, nothing left beside it */
  CHECK(lb_dump(r, 4096, 4096, src) == LB_OK, "again: %s", lb_errmsg());
  CHECK(count_files(dir) == 1, "good dir: %d files, expected 1",
        count_files(dir));
  printf("good dir: %s holds the source\n", path);
  remove(path);

  snprintf(other, sizeof other, "%s/missing", dir);
  refused("missing dir", other, r, src);
  snprintf(other, sizeof other, "%s/plainfile", dir);
  if ((f = fopen(other, "w")) != NULL) fclose(f);
  refused("dir is a file", other, r, src);
  remove(other);
  refused("/proc/self", "/proc/self", r, src);
  CHECK(count_files(dir) == 0, "%d files left after the failures",
        count_files(dir));

  free(src);
  lb_recipe_free(r);
  rmdir(dir);
  printf("dump: %d failure(s)\n", failures);
  return failures != 0;
}
