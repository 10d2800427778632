/*
** lb_hash.c: FNV-1a.
*/
#include <string.h>

#include "lb_hash.h"

uint64_t lb_hash(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  size_t i;
  for (i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t lb_hash_str(uint64_t h, const char *s) {
  return lb_hash(h, s, strlen(s) + 1);
}
