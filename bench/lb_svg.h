/*
** lb_svg.h: a line chart as a standalone SVG file, for benchmark plots.
*/
#ifndef lb_svg_h
#define lb_svg_h

#define LB_SVG_MAXPTS 16

typedef struct lb_series {
  char label[64];
  int npts;
  double x[LB_SVG_MAXPTS], y[LB_SVG_MAXPTS];
} lb_series;

/* x on a log2 axis (M), y linear from 0; a dashed line at y = ref
** (ref <= 0: none).  Returns 0 on failure to write. */
int lb_svg_write(const char *path, const char *title, const char *xlabel,
                 const char *ylabel, const lb_series *s, int ns, double ref);

#endif
