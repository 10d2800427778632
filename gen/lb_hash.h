/*
** lb_hash.h: 64-bit FNV-1a, for cache keys and integrity checks.  Not a
** defence against a hostile cache directory, only against torn or stale
** files.
*/
#ifndef lb_hash_h
#define lb_hash_h

#include <stddef.h>
#include <stdint.h>

#define LB_HASH_INIT 0xcbf29ce484222325ull

uint64_t lb_hash(uint64_t h, const void *p, size_t n);
uint64_t lb_hash_str(uint64_t h, const char *s);

#endif
