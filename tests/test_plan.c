/*
** test_plan.c: the GEMV planner's invariants over the pairwise recipe sweep
** and a range of shapes (no compile): the plan covers every channel, its
** warps, split and cluster are what the template can run, and its shared
** memory fits the parts it is compiled for (99 KB a block on sm_86/89:
** the kernel without resident x must load there).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb_gen.h"
#include "lb_layout.h"
#include "lb_sweep.h"
#include "lb_test.h"
#include "lowbit.h"

#define failures lb_test_failures

static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static void check_plan(const lb_recipe *r, const char *name, int n, int k,
                       int sms) {
  lb_gemv_cfg c;
  lb_layout lay;
  char *src = NULL;
  int tiles, groups, red = LB_WARPS * 4 * 32 * 4;   /* the template's red[] */
  if (lb_gen_gemv(r, n, k, sms, &c, &src) != LB_OK) {
    CHECK(0, "%s n=%d k=%d: %s", name, n, k, lb_errmsg());
    return;
  }
  free(src);
  lb_layout_of(r, &lay);
  tiles = lb_kpad(&lay, k) / lay.tile;
  groups = (n + 15) / 16;
  CHECK(pow2(c.warps) && c.warps <= LB_WARPS, "%s n=%d k=%d: warps %d", name,
        n, k, c.warps);
  CHECK(pow2(c.split) && c.split <= c.warps, "%s n=%d k=%d: split %d of %d "
        "warps", name, n, k, c.split, c.warps);
  CHECK(pow2(c.cluster) && c.cluster <= 8, "%s n=%d k=%d: cluster %d", name,
        n, k, c.cluster);
  CHECK(c.grid * (c.warps / c.split) >= groups &&
        (c.grid - 1) * (c.warps / c.split) < groups,
        "%s n=%d k=%d: %d blocks of %d groups for %d groups", name, n, k,
        c.grid, c.warps / c.split, groups);
  CHECK(c.cluster == 1 || c.split * c.cluster <= tiles,
        "%s n=%d k=%d: %d warps split %d tiles", name, n, k,
        c.split * c.cluster, tiles);
  CHECK(c.stages >= 1 && (!c.lazy || c.stages >= 2),
        "%s n=%d k=%d: %d stage(s), lazy %d", name, n, k, c.stages, c.lazy);
  CHECK(c.smem + red <= 99 * 1024, "%s n=%d k=%d: %d bytes of shared memory "
        "(sm_86 gives a block 99 KB)", name, n, k, c.smem + red);
  CHECK(c.xs_m >= 0 && c.xs_m <= LB_MAX_M &&
        c.smem + c.xs_m * c.xrowb + red <= 227 * 1024,
        "%s n=%d k=%d: resident x of %d rows of %d bytes", name, n, k, c.xs_m,
        c.xrowb);
  CHECK(c.minb == 1 || c.minb == 2, "%s n=%d k=%d: minb %d", name, n, k,
        c.minb);
}

int main(void) {
  static lb_sweep_row rows[256];
  static const int ns[] = {1, 16, 48, 257, 4112, 16384};
  static const int ks[] = {256, 1024, 8192, 16384, 16384 + 1024};
  int n = lb_sweep(rows, 256), i, a, b, plans = 0;
  if (n <= 0) {
    printf("FAIL: no sweep\n");
    return 1;
  }
  unsetenv("LOWBIT_PLAN");
  unsetenv("LOWBIT_DUMP_DIR");
  for (i = 0; i < n; i++) {
    lb_recipe *r = NULL;
    if (lb_recipe_load_text(rows[i].name, rows[i].text, strlen(rows[i].text),
                            &r) != LB_OK) {
      CHECK(0, "%s: %s", rows[i].name, lb_errmsg());
      continue;
    }
    for (a = 0; a < (int)(sizeof ns / sizeof ns[0]); a++)
      for (b = 0; b < (int)(sizeof ks / sizeof ks[0]); b++) {
        int k = ks[b];
        if (r->group && k % r->group) continue;
        check_plan(r, rows[i].name, ns[a], k, 132);
        check_plan(r, rows[i].name, ns[a], k, 108);   /* an A100 */
        plans += 2;
      }
    lb_recipe_free(r);
  }
  printf("%d plans of %d recipes checked, %d failure(s)\n", plans, n,
         failures);
  return failures != 0;
}
