/*
** lb_svg.c: minimal SVG line charts.
*/
#include <math.h>
#include <stdio.h>

#include "lb_svg.h"

#define W 640
#define H 400
#define L 70   /* plot area margins */
#define R 170
#define T 40
#define B 50

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                     "#9467bd", "#ff7f0e", "#8c564b"};

int lb_svg_write(const char *path, const char *title, const char *xlabel,
                 const char *ylabel, const lb_series *s, int ns, double ref) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = ref > 0 ? ref : 0;
  double lx0, lx1, step;
  int i, j, pw = W - L - R, ph = H - T - B, ok;
  FILE *f = fopen(path, "w");
  if (f == NULL) return 0;
  for (i = 0; i < ns; i++)
    for (j = 0; j < s[i].npts; j++) {
      if (s[i].x[j] < xmin) xmin = s[i].x[j];
      if (s[i].x[j] > xmax) xmax = s[i].x[j];
      if (s[i].y[j] > ymax) ymax = s[i].y[j];
    }
  if (!(xmin <= xmax)) xmin = xmax = 1;
  lx0 = log2(xmin);
  lx1 = log2(xmax);
  if (lx1 - lx0 < 1) lx1 = lx0 + 1;
  ymax = ymax <= 0 ? 1 : ymax * 1.1;
  step = pow(10, floor(log10(ymax / 2)));
  if (ymax / step > 10) step *= 2;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
             "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
             "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n",
          W, H, L, title);
  for (j = 0; j * step <= ymax; j++) {
    double y = T + ph - j * step / ymax * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
               "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
               "text-anchor=\"end\">%g</text>\n",
            L, y, L + pw, y, L - 6, y + 4, j * step);
  }
  for (j = (int)lx0; j <= (int)lx1; j++) {
    double x = L + (j - lx0) / (lx1 - lx0) * pw;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
               "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
               "text-anchor=\"middle\">%d</text>\n",
            x, T, x, T + ph, x, T + ph + 16, 1 << j);
  }
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
             "fill=\"none\" stroke=\"black\"/>\n"
             "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
             "<text transform=\"translate(18,%d) rotate(-90)\" "
             "text-anchor=\"middle\">%s</text>\n",
          L, T, pw, ph, L + pw / 2, H - 12, xlabel, T + ph / 2, ylabel);
  if (ref > 0) {
    double y = T + ph - ref / ymax * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
               "stroke=\"black\" stroke-dasharray=\"5,4\"/>\n",
            L, y, L + pw, y);
  }
  for (i = 0; i < ns; i++) {
    const char *c = colors[i % 6];
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
               "points=\"", c);
    for (j = 0; j < s[i].npts; j++)
      fprintf(f, "%.1f,%.1f ", L + (log2(s[i].x[j]) - lx0) / (lx1 - lx0) * pw,
              T + ph - s[i].y[j] / ymax * ph);
    fprintf(f, "\"/>\n");
    for (j = 0; j < s[i].npts; j++)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
              L + (log2(s[i].x[j]) - lx0) / (lx1 - lx0) * pw,
              T + ph - s[i].y[j] / ymax * ph, c);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
               "stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
            W - R + 12, T + 10 + 20 * i, W - R + 36, T + 10 + 20 * i, c,
            W - R + 42, T + 14 + 20 * i, s[i].label);
  }
  fprintf(f, "</svg>\n");
  ok = !ferror(f);
  return (fclose(f) == 0) && ok;
}
