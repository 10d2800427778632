/*
** lb_knob.c: parsing plans in words against a kind's knobs.
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

void lb_plan_comment(lb_buf *b, const char *plan, const char *from) {
  const char *who;
  char t[161];
  size_t i, j = 0;
  if (plan == NULL || *plan == '\0') return;
  who = from == NULL ? "?" : strncmp(from, "lb_", 3) == 0 ? "the caller" : from;
  /* printable, one line: no newline or backslash may end the comment
  ** early or continue it (the plan itself parsed: plain knobs) */
  for (i = 0; who[i] && j < sizeof t - 1; i++)
    if (who[i] >= ' ' && who[i] <= '~' && who[i] != '\\') t[j++] = who[i];
  t[j] = '\0';
  lb_buf_printf(b, "// Plan changed by %s: \"%s\".\n\n", t, plan);
}
