/*
** lb_where.h: where the installed recipes lie, found at run time from the
** file the library was loaded from, so an install tree finds its own
** recipes under any prefix and after it is moved.
*/
#ifndef lb_where_h
#define lb_where_h

#include <stddef.h>

#define LB_WHERE_LEN 4096   /* bytes of a directory name (PATH_MAX) */
#define LB_WHERE_MAX 2      /* candidates: from the libdir, from the bindir */

/* Fills dirs with the recipe directories of the install tree this code
** lies in (relative to liblowbit.so, or to the program that liblowbit.a
** is linked into): existing ones only, resolved, each once; returns how
** many (at most max).  from gets the file they were found from ("" when
** none is known).  Never fails: 0 directories is an answer. */
int lb_where_recipes(char (*dirs)[LB_WHERE_LEN], int max, char *from,
                     size_t fromlen);

#endif
