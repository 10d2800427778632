/*
** lb_cache.h: the disk cache of compiled kernels.
**
** Directory: $LOWBIT_CACHE_DIR, else $XDG_CACHE_HOME/lowbit, else
** ~/.cache/lowbit; LOWBIT_CACHE=0 turns it off.  An entry is written to a
** temporary file and renamed into place, so readers see whole entries or
** none, and processes filling the cache at once do not interfere.  Each
** entry carries its key, its sizes and a checksum; one that fails them is
** treated as missing (and rewritten after the recompile).
*/
#ifndef lb_cache_h
#define lb_cache_h

#include <stdint.h>

#include "lb_nvrtc.h"

lb_status lb_cache_get(uint64_t key, lb_binary *out);
void lb_cache_put(uint64_t key, const lb_binary *bin);
/* Path of the entry for key; 0 when the cache is off. */
int lb_cache_path(uint64_t key, char *buf, size_t len);

#endif
