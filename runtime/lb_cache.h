/*
** lb_cache.h: the disk cache of compiled kernels.
**
** Directory: $LOWBIT_CACHE_DIR, else $XDG_CACHE_HOME/lowbit, else
** ~/.cache/lowbit; LOWBIT_CACHE=0 turns it off.  An entry is written to a
** temporary file and renamed into place, so readers see whole entries or
** none, and processes filling the cache at once do not interfere.
**
** The file name is a 64-bit hash of the key, but the entry also holds the
** key itself (source, NVRTC version and options) and is used only when
** that matches byte for byte: two kernels whose keys collide in the hash
** cost a recompile, never a wrong kernel.  Sizes and a checksum catch torn
** or damaged files; such an entry is treated as missing and rewritten,
** and so is anything at an entry's name that is not a regular file (a
** FIFO is never waited on; a directory cannot be replaced, so that
** kernel is not kept).
**
** Size: after each write the oldest entries (by modification time, which
** a hit refreshes) are removed until the entries total at most
** $LOWBIT_CACHE_MAX bytes (a number with an optional k, m or g suffix;
** 0: no limit; unset or empty: 1g; a value that is no size keeps no new
** entry, and lb_cache_query says why), and
** so are temporary files older than an hour (their writer died).  In a
** cache this process cannot write to, hits do not refresh entries.
**
** A cache that cannot be written costs the hits, never a compile; the
** reason of the last failed write is kept (per process) for
** lb_cache_query (lowbit.h), which also probes the directory itself.
*/
#ifndef lb_cache_h
#define lb_cache_h

#include <stddef.h>
#include <stdint.h>

#include "lb_nvrtc.h"

/* The cache directory into buf; 0 (and *why says so) when there is none
** (LOWBIT_CACHE=0, no variable names one). */
int lb_cache_dir(char *buf, size_t len, const char **why);
/* mkdir -p path; 0 with errno set on failure. */
int lb_make_dirs(char *path);
/* What a file of mode m (st_mode) is, for one that is not a regular
** file: "a FIFO", "a directory", ... */
const char *lb_file_kind(unsigned m);

/* id: the key's bytes (idlen of them); hash: their 64-bit hash. */
lb_status lb_cache_get(uint64_t hash, const void *id, size_t idlen,
                       lb_binary *out);
void lb_cache_put(uint64_t hash, const void *id, size_t idlen,
                  const lb_binary *bin);

#endif
