/*
** lb_buf.c: growable text buffer.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_buf.h"

void lb_buf_init(lb_buf *b) { memset(b, 0, sizeof *b); }

static int reserve(lb_buf *b, size_t extra) {
  size_t need;
  char *np;
  if (b->oom) return 0;
  need = b->n + extra + 1;
  if (need <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  np = realloc(b->p, cap);
  if (np == NULL) { b->oom = 1; return 0; }
  b->p = np;
  b->cap = cap;
  return 1;
}

void lb_buf_add(lb_buf *b, const char *s, size_t len) {
  if (!reserve(b, len)) return;
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n] = '\0';
}

void lb_buf_puts(lb_buf *b, const char *s) { lb_buf_add(b, s, strlen(s)); }

void lb_buf_printf(lb_buf *b, const char *fmt, ...) {
  va_list ap;
  int len;
  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (len < 0 || !reserve(b, (size_t)len)) { b->oom = 1; return; }
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)len;
}

char *lb_buf_take(lb_buf *b) {
  char *p;
  if (!reserve(b, 0)) { lb_buf_free(b); return NULL; }
  p = b->p;
  lb_buf_init(b);
  return p;
}

void lb_buf_free(lb_buf *b) { free(b->p); lb_buf_init(b); }

void lb_comment_text(const char *s, char *out, size_t len) {
  size_t i;
  if (len == 0) return;
  for (i = 0; s[i] && i + 1 < len; i++)
    out[i] = s[i] >= ' ' && s[i] <= '~' && s[i] != '\\' ? s[i] : '?';
  out[i] = '\0';
}
