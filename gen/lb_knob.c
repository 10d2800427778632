/*
** lb_knob.c: plans in words against a kind's knob table: parsed, written,
** and the candidates one knob away.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_err.h"
#include "lb_knob.h"

lb_status lb_knobs_parse(const char *plan, const char *from,
                         const lb_knob *knob, int n, int *v) {
  const char *e = plan;
  int i;
  for (i = 0; i < n; i++) v[i] = -1;
  while (e && *e) {
    size_t len = strcspn(e, "=,");
    const char *val = e + len;
    char *end = NULL;
    long x;
    for (i = 0; i < n; i++)
      if (strlen(knob[i].key) == len && !strncmp(e, knob[i].key, len)) break;
    if (i == n || *val != '=') {
      char keys[160] = "";
      size_t at = 0;
      int j;
      for (j = 0; j < n && at < sizeof keys; j++) {
        const int w = snprintf(keys + at, sizeof keys - at, "%s%s",
                               j ? ", " : "", knob[j].key);
        if (w < 0) break;
        at += (size_t)w;
      }
      return lb_fail(LB_EARG, "%s: plan \"%s\": unknown knob at \"%.*s\" "
                     "(knobs: %s; comma-separated key=value)", from, plan,
                     (int)strcspn(e, ","), e, keys);
    }
    /* digits only: strtol would take a sign or spaces (a newline too) */
    x = val[1] >= '0' && val[1] <= '9' ? strtol(val + 1, &end, 10) : -1;
    if (x < 0 || (*end != ',' && *end != '\0') || x < knob[i].lo ||
        x > knob[i].hi || (knob[i].pow2 && x > 0 && (x & (x - 1))))
      return lb_fail(LB_EARG, "%s: plan \"%s\": %s must be %s in %d..%d",
                     from, plan, knob[i].key,
                     knob[i].pow2 ? "a power of two" : "a whole number",
                     knob[i].lo, knob[i].hi);
    if (v[i] >= 0)
      return lb_fail(LB_EARG, "%s: plan \"%s\": %s given twice", from, plan,
                     knob[i].key);
    if (*end == ',' && end[1] == '\0')
      return lb_fail(LB_EARG, "%s: plan \"%s\": a comma and nothing after "
                     "it", from, plan);
    v[i] = (int)x;
    e = end + (*end == ',');
  }
  return LB_OK;
}

void lb_knobs_text(const lb_knob *knob, int n, const int *v, char *buf,
                   size_t len) {
  size_t at = 0;
  int i;
  if (len) buf[0] = '\0';
  for (i = 0; i < n && at < len; i++) {
    int w;
    if (v[i] < 0) continue;
    w = snprintf(buf + at, len - at, "%s%s=%d", at ? "," : "", knob[i].key,
                 v[i]);
    if (w < 0) break;
    at += (size_t)w;
  }
}

size_t lb_knobs_widest(const lb_knob *knob, int n) {
  size_t w = 0;
  int i;
  for (i = 0; i < n; i++) {
    char lo[16], hi[16];
    const int a = snprintf(lo, sizeof lo, "%d", knob[i].lo);
    const int b = snprintf(hi, sizeof hi, "%d", knob[i].hi);
    w += (i ? 1 : 0) + strlen(knob[i].key) + 1 + (size_t)(a > b ? a : b);
  }
  return w;
}

#define MAXSEEN 64

lb_status lb_knobs_candidates(const lb_knob *knob, int n, lb_knob_plan plan,
                              void *ctx, size_t size, const char *base,
                              char (*out)[LB_PLAN_LEN], int max, int *count) {
  unsigned char *seen, *cfg;
  int nseen = 0, eff[32], v[32], i, j;
  lb_status st;
  *count = 0;
  if (out == NULL || max < 1 || n > 32)
    return lb_fail(LB_EARG, "lb_plan_candidates: null argument or max < 1");
  if ((seen = malloc(size * (MAXSEEN + 1))) == NULL)
    return lb_fail(LB_EMEM, "lb_plan_candidates: no memory");
  cfg = seen + size * MAXSEEN;
  /* the base, every knob named: the plan the others differ from by one */
  if ((st = plan(ctx, base, seen, eff)) != LB_OK) {
    free(seen);
    return st;
  }
  lb_knobs_text(knob, n, eff, out[0], LB_PLAN_LEN);
  nseen = *count = 1;
  for (i = 0; i < n && *count < max; i++)
    for (j = 0; j < knob[i].ntry && *count < max; j++) {
      char text[LB_PLAN_LEN];
      int q, dup = 0;
      if (knob[i].tries[j] == eff[i]) continue;
      memcpy(v, eff, sizeof(int) * (size_t)n);
      v[i] = knob[i].tries[j];
      lb_knobs_text(knob, n, v, text, sizeof text);
      if (plan(ctx, text, cfg, v) != LB_OK) continue;   /* does not fit */
      for (q = 0; q < nseen && !dup; q++)
        dup = memcmp(seen + size * (size_t)q, cfg, size) == 0;
      if (dup || nseen == MAXSEEN) continue;
      memcpy(seen + size * (size_t)nseen++, cfg, size);
      lb_knobs_text(knob, n, v, out[(*count)++], LB_PLAN_LEN);
    }
  free(seen);
  return LB_OK;
}

void lb_plan_comment(lb_buf *b, const char *plan, const char *from) {
  const char *who;
  char t[161];
  if (plan == NULL || *plan == '\0') return;
  who = from == NULL ? "?" : strncmp(from, "lb_", 3) == 0 ? "the caller" : from;
  lb_comment_text(who, t, sizeof t);   /* (the plan itself parsed: knobs) */
  lb_buf_printf(b, "// Plan changed by %s: \"%s\".\n\n", t, plan);
}
