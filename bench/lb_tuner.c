/*
** lb_tuner.c: `lowbit tune` (lb_tuner.h).
*/
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "lb_ref.h"
#include "lb_timer.h"
#include "lb_tuner.h"
#include "lowbit.h"

#define MAXC 64         /* candidates a round */
#define MAXTRIED 160    /* plans timed per bucket, both rounds */
#define SAMPLE 12       /* rows checked per M: the first, middle, last 4 */
#define GAIN 0.97       /* a plan replaces the rules' only this much faster */
#define RETIME 3        /* alternate timings of the winner and the rules */
#define ONE 8           /* rows of one GEMV fragment of x */
#define HI 2            /* the fewest rows of 2..8 rows' own GEMV kernel
                        ** (where a plan's hcl gives them one) */
#define MOST 32         /* rows the GEMV takes at most (its rows knob) */

/* One M's rows on the GPU and their sampled reference. */
typedef struct rows {
  int m, idx[SAMPLE], ns;
  double *y64, *mag64;   /* [ns][n], rows of the joint reference */
} rows;

typedef struct tuner {
  const lb_tune_opts *o;
  const lb_recipe *r;
  lb_ctx *ctx;
  lb_op *op;
  lb_case c;            /* maxm rows of x, and the weights */
  lb_weights w;
  void *x, *y, *ws;
  size_t wsb;           /* bytes at ws */
  rows *rw;             /* one per o->m */
  lb_timer t;
  int arch, sms, failed;
  int made;             /* c holds data */
  int gv_saved;         /* the GEMV's entry was written in this run: */
  char gv_plan[LB_PLAN_LEN];   /* its plan ("" the rules'), */
  double gv_us, gv_rules;      /* its times */
} tuner;

/* -1: the GEMV (1..8 rows); -2, -3: the GEMV's two and four fragments
** (9..16 and 17..32 rows, where the rules at this shape or LOWBIT_PLAN's
** rows give it them: not tuned, their rules' plans; tune_reach times
** them against the GEMM); else the GEMM's bucket (-9: none). */
static int bucket_of(const tuner *t, int m) {
  lb_rows rw;
  return lb_rows_at(t->r, t->o->n, t->o->k, m, &rw) == LB_OK ? rw.bucket
                                                              : -9;
}

typedef struct tjob {
  tuner *t;
  int m;
} tjob;

static int run_op(void *p) {
  tjob *j = p;
  tuner *t = j->t;
  lb_status st = lb_op_run_ws(t->op, j->m, t->x, &t->w, t->y, t->ws, t->wsb,
                              NULL);
  if (st != LB_OK) fprintf(stderr, "lb_op_run_ws: %s\n", lb_errmsg());
  return st == LB_OK;
}

/* ---- compiles, in parallel (lb_tuner.h) ------------------------------- */

typedef struct pre {
  const lb_recipe *r;
  int n, k, m, sms, arch, count, next;
  char (*plans)[LB_PLAN_LEN];
  pthread_mutex_t lock;
} pre;

static void *pre_work(void *p) {
  pre *q = p;
  for (;;) {
    char *src = NULL;
    lb_offline info;
    int i, j, ms[2];
    pthread_mutex_lock(&q->lock);
    i = q->next++;
    pthread_mutex_unlock(&q->lock);
    if (i >= q->count) break;
    /* into the disk cache, where the op's compile finds it; a failure
    ** shows again, with its message, when the plan is set and run.  The
    ** GEMV's bucket runs the kernel of 1 row and, where the plan's hcl
    ** gives 2..8 rows their own, of HI (else the same source, a hit) */
    {
      lb_rows rw;   /* the one-fragment GEMV's rows (the GEMM's first
                    ** bucket may start below 8 rows) */
      const int gv = lb_rows_at(q->r, q->n, q->k, q->m, &rw) == LB_OK &&
                     rw.bucket == -1;
      ms[0] = gv ? 1 : q->m;
      ms[1] = gv && q->m >= HI ? HI : 0;
    }
    for (j = 0; j < 2 && ms[j] > 0; j++) {
      if (lb_generate_plan(q->r, q->n, q->k, ms[j], q->sms, q->plans[i],
                           &src) == LB_OK)
        lb_compile_offline(src, q->arch, &info, NULL);
      lb_free(src);
      src = NULL;
    }
  }
  return NULL;
}

void lb_tune_precompile(const lb_recipe *r, int n, int k, int m, int sms,
                        int arch, char (*plans)[LB_PLAN_LEN], int count) {
  enum { MAXT = 16 };
  pthread_t tid[MAXT];
  int started[MAXT], i, nt;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *cache = getenv("LOWBIT_CACHE");
  pre q = {r, n, k, m, sms, arch, count, 0, plans, PTHREAD_MUTEX_INITIALIZER};
  if (cache && strcmp(cache, "0") == 0) return;   /* nowhere to keep them */
  nt = cores < 1 ? 1 : cores > MAXT ? MAXT : (int)cores;
  for (i = 1; i < nt; i++)
    started[i] = pthread_create(&tid[i], NULL, pre_work, &q) == 0;
  pre_work(&q);   /* this thread too, and all of it if none started */
  for (i = 1; i < nt; i++)
    if (started[i]) pthread_join(tid[i], NULL);
  pthread_mutex_destroy(&q.lock);
}

/* ---- one plan: checked, then timed ------------------------------------ */

/* The work space m needs under the plan now set, grown as needed. */
static int workspace(tuner *t, int m) {
  size_t need = 0;
  if (lb_op_workspace(t->op, m, &need) != LB_OK) {
    fprintf(stderr, "lb_op_workspace: %s\n", lb_errmsg());
    return 0;
  }
  if (need > t->wsb) {
    cudaFree(t->ws);
    t->ws = NULL;
    t->wsb = 0;
    if (cudaMalloc(&t->ws, need) != cudaSuccess) {
      fprintf(stderr, "no device memory for a %zu-byte work space\n", need);
      return 0;
    }
    t->wsb = need;
  }
  return 1;
}

/* Runs rw's M once with the output poisoned and checks the sampled rows
** against the float64 reference; 1 if they pass. */
static int check(tuner *t, const rows *rw, const char *plan) {
  const size_t ob = (size_t)lb_dtype_size(t->c.f.out);
  const size_t rowb = (size_t)t->o->n * ob;
  lb_case view = t->c;
  char *sampled = malloc(rowb * (size_t)rw->ns);
  tjob j = {t, rw->m};
  double ratio = 0;
  size_t bad = 0;
  int i, ok = 0;
  if (sampled == NULL) return 0;
  if (cudaMemset(t->y, 0xff, (size_t)rw->m * rowb) != cudaSuccess ||
      !run_op(&j) || cudaDeviceSynchronize() != cudaSuccess)
    goto done;
  for (i = 0; i < rw->ns; i++)
    if (cudaMemcpy(sampled + (size_t)i * rowb,
                   (char *)t->y + (size_t)rw->idx[i] * rowb, rowb,
                   cudaMemcpyDeviceToHost) != cudaSuccess)
      goto done;
  view.m = rw->ns;
  ok = lb_check(&view, sampled, rw->y64, rw->mag64, &ratio, &bad);
  if (!ok)
    printf("FAIL: %s m=%d plan %s: error %.2f of the bound, %zu not "
           "finite (rows 0, %d, %d, ... sampled)\n", lb_recipe_name(t->r), rw->m, plan,
           ratio, bad, rw->idx[SAMPLE / 3], rw->idx[rw->ns - 1]);
done:
  free(sampled);
  return ok;
}

/* Sets plan on the bucket (with tl=0 where whole: tune_bucket) and times
** each of its Ms (us[i] for t->rw[i] in the bucket); 0 when the plan
** failed (a FAIL is printed for a wrong result: lowbit's bug, not the
** plan's), or spills and spill_ok is 0: the table must not make a kernel
** that spills out of rules that do not (the rules' own plan is timed
** whatever it does). */
static int measure(tuner *t, int b, int whole, const char *plan,
                   int spill_ok, double *us) {
  char own[LB_PLAN_LEN];
  lb_compile_info info;
  int i, m0 = 0;
  for (i = 0; i < t->o->nm; i++)
    if (bucket_of(t, t->rw[i].m) == b) m0 = t->rw[i].m;
  if (whole && b >= 0 &&
      snprintf(own, sizeof own, "%s,tl=0", plan) < (int)sizeof own)
    plan = own;
  if (lb_op_set_plan(t->op, m0, plan) != LB_OK) {
    /* the planner offered it: a plan that does not build is worth seeing */
    printf("  skipped %s: %s\n", plan, lb_errmsg());
    return 0;
  }
  /* every kernel the bucket's rows run (the GEMV's 1..8 rows may run two:
  ** 2..8 rows' hcl) */
  for (i = 0; i < t->o->nm; i++) {
    const int m = t->rw[i].m;
    if (bucket_of(t, m) != b) continue;
    if (lb_op_prepare(t->op, m, m) != LB_OK) {
      printf("  skipped %s: %s\n", plan, lb_errmsg());
      return 0;
    }
    if (!spill_ok && lb_op_info_m(t->op, m, &info) == LB_OK &&
        info.spill > 0) {
      printf("  skipped %s: spills %d bytes a thread (m = %d)\n", plan,
             info.spill, m);
      return 0;
    }
  }
  for (i = 0; i < t->o->nm; i++) {
    tjob j = {t, t->rw[i].m};
    if (bucket_of(t, t->rw[i].m) != b) continue;
    if (!workspace(t, j.m)) return 0;
    if (!check(t, &t->rw[i], plan)) {
      t->failed = 1;
      return 0;
    }
    if ((us[i] = lb_time_it(&t->t, run_op, &j)) <= 0) return 0;
  }
  return 1;
}

/* The geometric mean, over the bucket's Ms, of us against base. */
static double score(const tuner *t, int b, const double *us,
                    const double *base) {
  double s = 0;
  int i, n = 0;
  for (i = 0; i < t->o->nm; i++)
    if (bucket_of(t, t->rw[i].m) == b) {
      s += log(us[i] / base[i]);
      n++;
    }
  return n ? exp(s / n) : 1;
}

static void print_times(const tuner *t, int b, const double *us) {
  int i;
  for (i = 0; i < t->o->nm; i++)
    if (bucket_of(t, t->rw[i].m) == b) printf(" %8.1f", us[i]);
}

/* ---- one bucket ------------------------------------------------------- */

/* The rows of m's range in words ("65..160", "385+", "1..8 (the GEMV)"),
** as lb_rows_at says them. */
static void bucket_rows(const tuner *t, int m, char *buf, size_t len) {
  lb_rows rw;
  if (lb_rows_at(t->r, t->o->n, t->o->k, m, &rw) != LB_OK)
    snprintf(buf, len, "?");
  else if (rw.hi == 0)
    snprintf(buf, len, "%d+", rw.lo);
  else
    snprintf(buf, len, "%d..%d%s", rw.lo, rw.hi,
             rw.bucket < 0 ? " (the GEMV)" : "");
}

static void tune_bucket(tuner *t, int b) {
  char name[32];
  static char tried[MAXTRIED][LB_PLAN_LEN];
  static double times[MAXTRIED][LB_BENCH_MAX];
  char (*cand)[LB_PLAN_LEN] = malloc(MAXC * LB_PLAN_LEN);
  double rules[LB_BENCH_MAX] = {0}, best_s = 1, a[LB_BENCH_MAX],
         z[LB_BENCH_MAX];
  int ntried = 0, best = 0, round, i, count, m0 = 0, ok_rules, whole = 0;
  if (cand == NULL) return;
  for (i = 0; i < t->o->nm; i++)
    if (bucket_of(t, t->rw[i].m) == b) m0 = t->rw[i].m;
  bucket_rows(t, m0, name, sizeof name);
  printf("bucket %s (m =", name);
  for (i = 0; i < t->o->nm; i++)
    if (bucket_of(t, t->rw[i].m) == b) printf(" %d", t->rw[i].m);
  printf("):\n");
  /* An M whose last rows run apart (lb_op_tail) would time other
  ** buckets' kernels too: the bucket's plans are timed on its own kernel
  ** (tl=0), and the table keeps them without it. */
  for (i = 0; i < t->o->nm; i++) {
    int tail = 0;
    if (b >= 0 && bucket_of(t, t->rw[i].m) == b &&
        lb_op_tail(t->op, t->rw[i].m, &tail) == LB_OK && tail > 0) {
      printf("  m = %d runs its last %d rows apart; timed here in one launch "
             "(tl=0)\n", t->rw[i].m, tail);
      whole = 1;
    }
  }
  fflush(stdout);
  for (round = 0; round < 2; round++) {
    const char *base = round == 0 ? NULL : tried[best];
    if (round == 1 && best == 0) break;   /* the rules' plan stood */
    if (lb_plan_candidates(t->r, t->o->n, t->o->k, m0, t->sms, t->arch, base,
                           cand, MAXC, &count) != LB_OK) {
      printf("FAIL: candidates: %s\n", lb_errmsg());
      t->failed = 1;
      break;
    }
    lb_tune_precompile(t->r, t->o->n, t->o->k, m0, t->sms, t->arch, cand,
                       count);
    for (i = 0; i < count && ntried < MAXTRIED; i++) {
      int q, seen = 0;
      double s;
      for (q = 0; q < ntried; q++) seen |= strcmp(tried[q], cand[i]) == 0;
      if (seen) continue;
      if (!measure(t, b, whole, cand[i], ntried == 0, times[ntried])) {
        if (ntried == 0) {   /* the rules' own plan */
          printf("FAIL: the rules' plan %s: %s\n", cand[i], lb_errmsg());
          t->failed = 1;
          free(cand);
          return;
        }
        continue;
      }
      snprintf(tried[ntried], LB_PLAN_LEN, "%s", cand[i]);
      if (ntried == 0) memcpy(rules, times[0], sizeof rules);
      s = score(t, b, times[ntried], rules);
      if (t->o->verbose) {
        printf("  %-48s", cand[i]);
        print_times(t, b, times[ntried]);
        printf("  x%.3f\n", s);
      }
      if (s < best_s) {
        best_s = s;
        best = ntried;
      }
      ntried++;
    }
  }
  /* The winner of many noisy timings is flattered by its noise: time it
  ** and the rules' plan again, in turn, and keep the median of each. */
  ok_rules = 1;
  if (best != 0) {
    double ra[RETIME][LB_BENCH_MAX], za[RETIME][LB_BENCH_MAX];
    int rep, ok = 1;
    for (rep = 0; rep < RETIME && ok; rep++)
      ok = measure(t, b, whole, tried[0], 1, ra[rep]) &&
           measure(t, b, whole, tried[best], 1, za[rep]);
    if (!ok) {
      ok_rules = 0;
    } else {
      for (i = 0; i < t->o->nm; i++) {
        double u[RETIME], v[RETIME], x;
        int p, q;
        for (p = 0; p < RETIME; p++) {
          u[p] = ra[p][i];
          v[p] = za[p][i];
        }
        for (p = 0; p < RETIME; p++)   /* sort three */
          for (q = p + 1; q < RETIME; q++) {
            if (u[q] < u[p]) x = u[p], u[p] = u[q], u[q] = x;
            if (v[q] < v[p]) x = v[p], v[p] = v[q], v[q] = x;
          }
        a[i] = u[RETIME / 2];
        z[i] = v[RETIME / 2];
      }
      best_s = score(t, b, z, a);
    }
  }
  if (best == 0 || !ok_rules) memcpy(a, rules, sizeof a);
  printf("  rules %-48s", tried[0]);
  print_times(t, b, a);
  printf(" us\n");
  if (best != 0 && ok_rules) {
    printf("  best  %-48s", tried[best]);
    print_times(t, b, z);
    printf(" us  x%.3f%s\n", best_s,
           best_s <= GAIN ? "" : " (not 3% faster: the rules' plan stays)");
  }
  printf("  %d plans timed\n", ntried);
  if (!t->o->dry && ok_rules) {
    const int keep = best != 0 && best_s <= GAIN;
    const double *us = keep ? z : a;
    double gm = 0, gr = 0;
    int n = 0;
    for (i = 0; i < t->o->nm; i++)
      if (bucket_of(t, t->rw[i].m) == b) {
        gm += log(us[i]);
        gr += log(a[i]);
        n++;
      }
    if (lb_tune_save(t->ctx, t->r, t->o->n, t->o->k, m0,
                     keep ? tried[best] : NULL, exp(gm / n), exp(gr / n)) !=
        LB_OK) {
      printf("FAIL: lb_tune_save: %s\n", lb_errmsg());
      t->failed = 1;
    } else if (b == -1) {   /* tune_reach writes it again, with its rows */
      t->gv_saved = 1;
      snprintf(t->gv_plan, sizeof t->gv_plan, "%s", keep ? tried[best] : "");
      t->gv_us = exp(gm / n);
      t->gv_rules = exp(gr / n);
    }
  }
  /* the op keeps the table's plan, or the rules', for what follows */
  lb_op_set_plan(t->op, m0, NULL);
  fflush(stdout);
  free(cand);
}

/* ---- the GEMV's reach --------------------------------------------------- */

/* The rules' reach: the rows the GEMV takes without a rows knob, where
** lb_rows_at's last GEMV range ends (4, 8, 16 or 32; the range at 9 rows
** alone said 16 where the reach is 32). */
static int rules_reach(const tuner *t) {
  lb_rows rw;
  int m = 1, reach = ONE;
  while (lb_rows_at(t->r, t->o->n, t->o->k, m, &rw) == LB_OK &&
         !strcmp(rw.kind, "gemv")) {
    reach = rw.hi;
    m = rw.hi + 1;
  }
  return reach;
}

/* Whether m is a row count the GEMV's reach decides (9..32). */
static int reach_m(int m) { return m > ONE && m <= MOST; }

/* The op's one-fragment GEMV plan with its rows knob set to rows (into
** out); 0 where the op cannot say its plan. */
static int with_rows(tuner *t, int reach, char *out, size_t len) {
  char plan[LB_PLAN_LEN], *at;
  lb_plan_from from;
  if (lb_op_plan(t->op, 1, plan, &from) != LB_OK) return 0;
  if ((at = strstr(plan, "rows=")) != NULL) {   /* the last knob */
    if (at > plan && at[-1] == ',') at--;
    *at = '\0';
  }
  return snprintf(out, len, "%s%srows=%d", plan, *plan ? "," : "", reach) <
         (int)len;
}

/* The GEMM's buckets take every M past 8 rows while they are tuned: the
** reach back at the rules' (a table from an earlier run may hold more). */
static void pin_reach(tuner *t) {
  char plan[LB_PLAN_LEN];
  if (!with_rows(t, rules_reach(t), plan, sizeof plan) ||
      lb_op_set_plan(t->op, 1, plan) != LB_OK) {
    printf("FAIL: the GEMV at the rules' reach: %s\n", lb_errmsg());
    t->failed = 1;
  }
}

/* Times the Ms of 9..32 rows with the GEMV taking 8, 16 and 32 rows (its
** plan's rows knob; the GEMM's buckets run their table's plans, just
** tuned) and keeps the fastest in the GEMV's entry, where it is this
** much faster (GAIN) than the rules' reach; the crossover between the
** kinds is then measured for this shape and device, not a rule's.  A
** rules' reach below 8 stands in for 8 (the same kernels at 9..32 rows):
** the rows up to 8 past it stay the rules' choice, not timed here. */
static void tune_reach(tuner *t) {
  const int r0 = rules_reach(t);
  const int reach[3] = {r0 < ONE ? r0 : ONE, 16, 32};
  double us[3][LB_BENCH_MAX], sc[3];
  char plan[3][LB_PLAN_LEN];
  int i, q, best = -1, base = -1, ok[3] = {0, 0, 0};
  for (i = 0; i < t->o->nm; i++)
    if (reach_m(t->rw[i].m)) break;
  if (i == t->o->nm) return;   /* no M there */
  printf("the GEMV's reach (m =");
  for (i = 0; i < t->o->nm; i++)
    if (reach_m(t->rw[i].m))
      printf(" %d", t->rw[i].m);
  printf("; rows=%d: the GEMM past %d rows):\n", reach[0], reach[0]);
  for (q = 0; q < 3; q++) {
    if (reach[q] == r0) base = q;
    if (!with_rows(t, reach[q], plan[q], sizeof plan[q]) ||
        lb_op_set_plan(t->op, 1, plan[q]) != LB_OK) {
      printf("  rows=%d: skipped: %s\n", reach[q], lb_errmsg());
      continue;
    }
    ok[q] = 1;
    for (i = 0; i < t->o->nm && ok[q]; i++) {
      tjob j = {t, t->rw[i].m};
      lb_compile_info info;
      memset(&info, 0, sizeof info);   /* (read below when prepare fails) */
      if (!reach_m(j.m)) continue;
      if (lb_op_prepare(t->op, j.m, j.m) != LB_OK ||
          (lb_op_info_m(t->op, j.m, &info) == LB_OK && info.spill > 0 &&
           q != base)) {
        printf("  rows=%d: skipped at m = %d: %s\n", reach[q], j.m,
               info.spill > 0 ? "its kernel spills" : lb_errmsg());
        ok[q] = 0;
      } else if (!workspace(t, j.m) || !check(t, &t->rw[i], plan[q])) {
        t->failed = 1;
        ok[q] = 0;
      } else if ((us[q][i] = lb_time_it(&t->t, run_op, &j)) <= 0) {
        ok[q] = 0;
      }
    }
  }
  if (base < 0 || !ok[base]) {
    printf("FAIL: the rules' reach (%d rows) did not run\n", r0);
    t->failed = 1;
    pin_reach(t);
    return;
  }
  for (q = 0; q < 3; q++) {
    double s = 0;
    int n = 0;
    if (!ok[q]) continue;
    for (i = 0; i < t->o->nm; i++)
      if (reach_m(t->rw[i].m)) {
        s += log(us[q][i] / us[base][i]);
        n++;
      }
    sc[q] = exp(s / n);
    printf("  rows=%-3d", reach[q]);
    for (i = 0; i < t->o->nm; i++)
      if (reach_m(t->rw[i].m))
        printf(" %8.1f", us[q][i]);
    printf(" us  x%.3f%s\n", sc[q], q == base ? " (the rules')" : "");
    if (best < 0 || sc[q] < sc[best]) best = q;
  }
  if (sc[best] > GAIN) best = base;
  printf("  keeps rows=%d\n", reach[best]);
  if (t->o->dry) {
    /* nothing written */
  } else if (!t->gv_saved) {
    if (best != base)
      printf("  not written: the GEMV's plan was not tuned in this run "
             "(give --m with rows 1..8 too)\n");
  } else {
    char keep[LB_PLAN_LEN];
    const char *p = t->gv_plan[0] ? t->gv_plan : NULL;
    if (best != base) {
      /* the tuned plan (or the rules'), every knob named, rows replaced */
      if (lb_op_set_plan(t->op, 1, p) != LB_OK ||
          !with_rows(t, reach[best], keep, sizeof keep))
        keep[0] = '\0';
      p = keep[0] ? keep : NULL;
    }
    if ((best != base && p == NULL) ||
        lb_tune_save(t->ctx, t->r, t->o->n, t->o->k, 1, p, t->gv_us,
                     t->gv_rules) != LB_OK) {
      printf("FAIL: lb_tune_save: %s\n", lb_errmsg());
      t->failed = 1;
    }
  }
  /* the op as the table now has it */
  lb_op_set_plan(t->op, 1, NULL);
  fflush(stdout);
}

/* ---- the sampled rows and their reference ----------------------------- */

/* Rows 0..3, four about the middle and the last four of each M (fewer
** for small M), all in one reference over the gathered rows. */
static int sample(tuner *t) {
  const size_t xb = (size_t)t->o->k * (size_t)lb_dtype_size(t->c.f.act);
  const size_t nn = (size_t)t->o->n;
  lb_case g = t->c;
  double *y64, *mag64;
  char *xs;
  int i, q, total = 0, at = 0;
  for (i = 0; i < t->o->nm; i++) {
    rows *rw = &t->rw[i];
    int m = t->o->m[i], cand[SAMPLE];
    rw->m = m;
    rw->ns = 0;
    for (q = 0; q < 4; q++) {
      cand[q] = q;
      cand[4 + q] = m / 2 - 2 + q;
      cand[8 + q] = m - 4 + q;
    }
    for (q = 0; q < SAMPLE; q++) {   /* in range, increasing, distinct */
      int c = cand[q];
      if (c < 0 || c >= m || (rw->ns && c <= rw->idx[rw->ns - 1])) continue;
      rw->idx[rw->ns++] = c;
    }
    total += rw->ns;
  }
  xs = malloc(xb * (size_t)total);
  y64 = malloc(sizeof(double) * nn * (size_t)total);
  mag64 = malloc(sizeof(double) * nn * (size_t)total);
  if (!xs || !y64 || !mag64) {
    free(xs);
    free(y64);
    free(mag64);
    fprintf(stderr, "no memory for the reference\n");
    return 0;
  }
  for (i = 0; i < t->o->nm; i++)
    for (q = 0; q < t->rw[i].ns; q++, at++)
      memcpy(xs + (size_t)at * xb,
             (char *)t->c.x + (size_t)t->rw[i].idx[q] * xb, xb);
  g.x = xs;
  g.m = total;
  if (!lb_case_reference(&g, y64, mag64)) {
    fprintf(stderr, "reference: %s\n", lb_errmsg());
    free(xs);
    free(y64);
    free(mag64);
    return 0;
  }
  free(xs);
  for (i = 0, at = 0; i < t->o->nm; i++) {
    /* each M's rows are a slice of the joint arrays: the first owns them */
    t->rw[i].y64 = y64 + nn * (size_t)at;
    t->rw[i].mag64 = mag64 + nn * (size_t)at;
    at += t->rw[i].ns;
  }
  return 1;
}

int lb_tune_run(const lb_tune_opts *o) {
  tuner t;
  lb_recipe *r = NULL;
  struct cudaDeviceProp prop;
  char path[4200];
  int i, b, m, maxm = 0, rc = 1, wok = 0;
  lb_rows rw;
  lb_status st;
  double t0;
  struct timespec ts;
  memset(&t, 0, sizeof t);
  t.o = o;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  /* (on stderr, as lb_bench_run says it: stdout is the tuner's results) */
  if ((st = lb_ctx_create(o->device, &t.ctx)) != LB_OK) {
    fprintf(stderr, "no %sGPU: %s; nothing was run\n",
           st == LB_ENODEV ? "" : "usable ", lb_errmsg());
    return 2;
  }
  if (cudaSetDevice(o->device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, o->device) != cudaSuccess ||
      cudaFree(0) != cudaSuccess) {
    fprintf(stderr, "no usable GPU: the CUDA runtime cannot open device %d; "
            "nothing was run\n", o->device);
    lb_ctx_destroy(t.ctx);
    return 2;
  }
  t.arch = prop.major * 10 + prop.minor;
  t.sms = prop.multiProcessorCount;
  if (lb_tune_path(t.ctx, path, sizeof path) != LB_OK && !o->dry) {
    printf("FAIL: %s (or run with --dry-run)\n", lb_errmsg());
    goto done;
  }
  if (getenv("LOWBIT_GEMM"))
    printf("note: LOWBIT_GEMM is set; ops ignore the tuning table while it "
           "is\n");
  if (getenv("LOWBIT_PLAN"))
    printf("note: LOWBIT_PLAN is set; ops ignore the table's GEMV plan (and "
           "the GEMV's reach) while it is\n");
  if (getenv("LOWBIT_TUNE") && !strcmp(getenv("LOWBIT_TUNE"), "0"))
    printf("note: LOWBIT_TUNE=0; ops ignore the tuning table while it is\n");
  if (lb_recipe_load(o->recipe, &r) != LB_OK) {
    printf("FAIL: %s\n", lb_errmsg());
    goto done;
  }
  t.r = r;
  for (i = 0; i < o->nm; i++)
    if (o->m[i] > maxm) maxm = o->m[i];
  t.rw = calloc((size_t)o->nm, sizeof *t.rw);
  if (t.rw == NULL ||
      !(t.made = lb_case_make(&t.c, r, maxm, o->n, o->k, 20261124))) {
    printf("FAIL: test data: %s\n", lb_errmsg());
    goto done;
  }
  if (!sample(&t)) goto done;
  wok = lb_upload_weights(&t.c, &t.w);
  t.x = lb_upload(t.c.x, t.c.x_bytes);
  if (cudaMalloc(&t.y, t.c.y_bytes) != cudaSuccess || !wok || !t.x) {
    printf("FAIL: device memory for the layer and %d rows\n", maxm);
    goto done;
  }
  if (!lb_timer_init(&t.t, o->warmup, o->iters, 0)) goto done;
  if (lb_op_create(t.ctx, r, o->n, o->k, &t.op) != LB_OK) {
    printf("FAIL: lb_op_create: %s\n", lb_errmsg());
    goto done;
  }
  printf("%s, %d x %d (K x N) on %s, %d SMs: %d iterations, median, L2 "
         "flushed by a read\n", lb_recipe_name(r), o->k, o->n, prop.name, t.sms,
         o->iters);
  for (i = 0; i < o->nm; i++)
    if ((b = bucket_of(&t, o->m[i])) == -2 || b == -3) {
      /* (the plan's words say whether it runs in slices) */
      char p[LB_PLAN_LEN];
      lb_plan_from f;
      const int sliced = lb_op_plan(t.op, o->m[i], p, &f) == LB_OK &&
                         strstr(p, "slices=1") != NULL;
      printf("m = %d: the GEMV %s (not tuned: the rules' plan)\n", o->m[i],
             sliced    ? "in rows of one-fragment blocks (slices)"
             : b == -2 ? "with two fragments of x"
                       : "with four fragments of x");
      break;
    }
  /* every range of rows in order (lb_rows_at), but the two-fragment
  ** GEMV's; then the GEMV's reach, against the GEMM's buckets as tuned */
  for (m = 1;; m = rw.hi + 1) {
    int here = 0;
    if (lb_rows_at(r, o->n, o->k, m, &rw) != LB_OK) break;
    b = rw.bucket;
    for (i = 0; i < o->nm; i++) here |= bucket_of(&t, o->m[i]) == b;
    if (here && b != -2 && b != -3) tune_bucket(&t, b);
    if (b == -1) pin_reach(&t);
    if (rw.hi == 0) break;
  }
  tune_reach(&t);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  printf("%s in %.1f s%s%s\n", o->dry ? "timed (dry run: nothing written)"
                                      : "tuning table",
         (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - t0,
         o->dry ? "" : ": ", o->dry ? "" : path);
  rc = t.failed;
done:
  lb_op_destroy(t.op);
  lb_timer_free(&t.t);
  lb_free_weights(&t.w);
  cudaFree(t.x);
  cudaFree(t.y);
  cudaFree(t.ws);
  if (t.rw && o->nm > 0) {
    free(t.rw[0].y64);
    free(t.rw[0].mag64);
  }
  free(t.rw);
  if (t.made) lb_case_free(&t.c);
  lb_recipe_free(r);
  lb_ctx_destroy(t.ctx);
  return rc;
}
