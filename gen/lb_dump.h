/*
** lb_dump.h: generated source to $LOWBIT_DUMP_DIR, for people to read.
*/
#ifndef lb_dump_h
#define lb_dump_h

#include "lb_buf.h"
#include "lowbit.h"

/* Writes src to <dir>/<recipe>-n<N>-k<K>-<16 hex digits of its hash>.cu
** when LOWBIT_DUMP_DIR names a directory; nothing when it is unset or
** empty.  The file appears whole or not at all (temporary file, rename).
** LB_EIO, naming the path and the system's reason, when it cannot be
** written: a dump asked for and silently missing misleads more than an
** error. */
lb_status lb_dump(const lb_recipe *r, int n, int k, const char *src);

/* A generator's last step: b's text becomes *src (the caller's, freed
** with free or lb_free) and is dumped; on failure *src is NULL. */
lb_status lb_dump_take(const lb_recipe *r, int n, int k, lb_buf *b,
                       char **src);

#endif
