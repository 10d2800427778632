/*
** lb_buf.h: a growable text buffer for generated source and messages.
** Allocation failure is sticky: later appends do nothing and lb_buf_take
** returns NULL, so callers check once at the end.
*/
#ifndef lb_buf_h
#define lb_buf_h

#include <stddef.h>

typedef struct lb_buf {
  char *p;
  size_t n, cap;
  int oom;
} lb_buf;

void lb_buf_init(lb_buf *b);
void lb_buf_add(lb_buf *b, const char *s, size_t len);
void lb_buf_puts(lb_buf *b, const char *s);
void lb_buf_printf(lb_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* s as text for a comment of generated source, into out (len bytes): a
** byte outside ' '..'~', or a backslash, as '?', so that nothing in it
** ends the comment or continues it onto the next line (a file's name may
** hold a newline). */
void lb_comment_text(const char *s, char *out, size_t len);
char *lb_buf_take(lb_buf *b);  /* NUL-terminated, caller frees; NULL on oom */
void lb_buf_free(lb_buf *b);

#endif
