/*
** lb_ref.c: test data and the float64 reference.
*/
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb_err.h"
#include "lb_ref.h"

uint16_t lb_f32_to_f16(float f) {
  uint32_t x;
  uint32_t sign, mant;
  int exp;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (int)((x >> 23) & 0xff) - 127 + 15;
  mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff)
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    uint32_t m, half, r;
    int shift;
    if (exp < -10) return (uint16_t)sign;
    m = mant | 0x800000u;
    shift = 14 - exp;
    half = 1u << (shift - 1);
    r = m >> shift;
    if ((m & ((1u << shift) - 1)) > half ||
        ((m & ((1u << shift) - 1)) == half && (r & 1)))
      r++;
    return (uint16_t)(sign | r);
  }
  {
    uint32_t r = ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (r & 1))) r++;
    return (uint16_t)(sign | r);
  }
}

float lb_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu, x;
  float f;
  if (exp == 0) {
    f = ldexpf((float)mant, -24);
    return sign ? -f : f;
  }
  if (exp == 31)
    x = sign | 0x7f800000u | (mant << 13);
  else
    x = sign | ((uint32_t)(exp - 15 + 127) << 23) | (mant << 13);
  memcpy(&f, &x, 4);
  return f;
}

uint16_t lb_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

float lb_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

void lb_store(lb_dtype t, void *p, size_t i, double f) {
  switch (t) {
    case LB_F16: ((uint16_t *)p)[i] = lb_f32_to_f16((float)f); break;
    case LB_BF16: ((uint16_t *)p)[i] = lb_f32_to_bf16((float)f); break;
    case LB_F32: ((float *)p)[i] = (float)f; break;
  }
}

double lb_load(lb_dtype t, const void *p, size_t i) {
  switch (t) {
    case LB_F16: return lb_f16_to_f32(((const uint16_t *)p)[i]);
    case LB_BF16: return lb_bf16_to_f32(((const uint16_t *)p)[i]);
    case LB_F32: return ((const float *)p)[i];
  }
  return NAN;
}

uint64_t lb_rand(uint64_t *s) {   /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double lb_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(lb_rand(s) >> 11) * 0x1.0p-53;
}

void lb_case_free(lb_case *c) {
  free(c->codes);
  free(c->packed);
  free(c->scales);
  free(c->zeros);
  free(c->bias);
  free(c->x);
  memset(c, 0, sizeof *c);
}

/* Codes as the signed or unsigned integers they stand for. */
static int code_value(const lb_fmt *f, uint8_t c) {
  if (f->is_signed && (c >> (f->bits - 1)) & 1) return (int)c - (1 << f->bits);
  return c;
}

static int dtype_of(const char *name, lb_dtype *t) {
  static const struct { const char *name; lb_dtype t; } known[] = {
      {"f16", LB_F16}, {"bf16", LB_BF16}, {"f32", LB_F32}};
  size_t i;
  for (i = 0; name != NULL && i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i].name) == 0) {
      *t = known[i].t;
      return 1;
    }
  lb_fail(LB_EARG, "lb_fmt_of: dtype \"%s\" unknown to the reference",
          name ? name : "(none)");
  return 0;
}

int lb_fmt_of(const lb_recipe *r, lb_fmt *f) {
  static const struct { const char *text; lb_dequant d; } forms[] = {
      {"(q - z) * s", LB_DQ_SUBMUL}, {"q * s + z", LB_DQ_MULADD},
      {"q * s", LB_DQ_MUL}};
  lb_recipe_info in;
  size_t i;
  memset(f, 0, sizeof *f);
  if (lb_recipe_describe(r, &in) != LB_OK) return 0;
  f->bits = in.bits;
  f->is_signed = in.is_signed;
  f->group = in.group;
  f->zeros = in.zeros != NULL;
  f->bias = in.bias;
  if (!dtype_of(in.activations, &f->act) || !dtype_of(in.scales, &f->scale) ||
      (f->zeros && !dtype_of(in.zeros, &f->zero)) ||
      !dtype_of(in.output, &f->out))
    return 0;
  for (i = 0; i < sizeof forms / sizeof forms[0]; i++)
    if (strcmp(in.dequant, forms[i].text) == 0) {
      f->dequant = forms[i].d;
      return 1;
    }
  lb_fail(LB_EARG, "lb_fmt_of: dequant \"%s\" unknown to the reference",
          in.dequant);
  return 0;
}

/* Work over output channels (or another count of parts: over_parts),
** shared among the machine's cores: fn(c, j0, j1, arg) for ranges that
** cover [0, count).  Each channel is one thread's, computed as it would
** be alone, so results do not depend on the thread count.  work: the
** operations, below which one thread does it all (a thread costs more
** than it saves). */
typedef void (*lb_chan_fn)(const lb_case *c, int j0, int j1, void *arg);
typedef struct {
  const lb_case *c;
  lb_chan_fn fn;
  void *arg;
  int j0, j1;
} lb_chan_part;

static void *chan_part(void *a) {
  lb_chan_part *p = a;
  p->fn(p->c, p->j0, p->j1, p->arg);
  return NULL;
}

static void over_parts(const lb_case *c, int count, double work,
                       lb_chan_fn fn, void *arg) {
  enum { MAXT = 32 };
  pthread_t tid[MAXT];
  lb_chan_part part[MAXT];
  int started[MAXT];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int t, nt = cores < 1 ? 1 : cores > MAXT ? MAXT : (int)cores;
  if (work < 1 << 22) nt = 1;
  if (nt > count) nt = count;
  for (t = 0; t < nt; t++) {
    part[t] = (lb_chan_part){c, fn, arg, (int)((long long)count * t / nt),
                             (int)((long long)count * (t + 1) / nt)};
    started[t] = t > 0 && pthread_create(&tid[t], NULL, chan_part, &part[t]) == 0;
  }
  /* thread 0's share, and any share no thread could be started for */
  for (t = 0; t < nt; t++)
    if (!started[t]) chan_part(&part[t]);
  for (t = 1; t < nt; t++)
    if (started[t]) pthread_join(tid[t], NULL);
}

static void over_channels(const lb_case *c, double work, lb_chan_fn fn,
                          void *arg) {
  over_parts(c, c->n, work, fn, arg);
}

/* A stream of its own for part j of what seed makes (a channel's codes,
** a row of x): parts made on several cores are the same however many. */
static uint64_t part_seed(uint64_t seed, int j) {
  uint64_t s = seed ^ (0x632be59bd9b4e019ull * (uint64_t)(j + 1));
  return lb_rand(&s);
}

typedef struct {
  uint64_t seed;
  size_t rw;          /* a channel's packed words */
  atomic_int bad;     /* a part's lb_pack failed */
} lb_make_arg;

/* Channels j0..j1-1: their codes, packed. */
static void codes_part(const lb_case *c, int j0, int j1, void *arg) {
  lb_make_arg *a = arg;
  const uint64_t qmax = (1u << c->f.bits) - 1;
  int j, kk;
  for (j = j0; j < j1; j++) {
    uint8_t *row = c->codes + (size_t)j * (size_t)c->k;
    uint64_t s = part_seed(a->seed, j);
    for (kk = 0; kk < c->k; kk++) row[kk] = (uint8_t)(lb_rand(&s) & qmax);
  }
  if (j1 > j0 && lb_pack(c->r, j1 - j0, c->k, c->codes + (size_t)j0 * (size_t)c->k,
                         c->packed + (size_t)j0 * a->rw) != LB_OK)
    atomic_store(&a->bad, 1);
}

/* Rows i0..i1-1 of x. */
static void x_part(const lb_case *c, int i0, int i1, void *arg) {
  const lb_make_arg *a = arg;
  int i, kk;
  for (i = i0; i < i1; i++) {
    uint64_t s = part_seed(a->seed, i);
    for (kk = 0; kk < c->k; kk++)
      lb_store(c->f.act, c->x, (size_t)i * (size_t)c->k + (size_t)kk,
               lb_uniform(&s, -1, 1));
  }
}

int lb_case_make(lb_case *c, const lb_recipe *r, int m, int n, int k,
                 uint64_t seed) {
  const lb_fmt *f = &c->f;
  lb_sizes sz;
  size_t i, ng;
  int qmax;
  memset(c, 0, sizeof *c);
  if (!lb_fmt_of(r, &c->f) || lb_sizes_of(r, n, k, &sz) != LB_OK) return 0;
  qmax = (1 << f->bits) - 1;
  c->r = r;
  c->m = m;
  c->n = n;
  c->k = k;
  c->groups = sz.groups;
  ng = (size_t)n * (size_t)sz.groups;
  c->packed_bytes = sz.packed;
  c->scale_bytes = sz.scales;
  c->zero_bytes = sz.zeros;
  c->x_bytes = (size_t)m * (size_t)k * (size_t)lb_dtype_size(f->act);
  c->y_bytes = (size_t)m * (size_t)n * (size_t)lb_dtype_size(f->out);
  c->bias_bytes = f->bias ? (size_t)n * (size_t)lb_dtype_size(f->out) : 0;
  c->codes = malloc((size_t)n * (size_t)k);
  c->packed = malloc(sz.packed);
  c->scales = malloc(sz.scales);
  c->zeros = f->zeros ? malloc(sz.zeros) : NULL;
  c->bias = f->bias ? malloc(c->bias_bytes) : NULL;
  c->x = malloc(c->x_bytes);
  if (!c->codes || !c->packed || !c->scales || (f->zeros && !c->zeros) ||
      (f->bias && !c->bias) || !c->x) {
    lb_case_free(c);
    lb_fail(LB_EMEM, "lb_case_make: no memory");
    return 0;
  }
  seed = seed * 0x2545f4914f6cdd1dull + 1;
  /* codes (packed) and x, a stream a channel or row, on the machine's
  ** cores (8192 x 8192 7-bit codes took about 0.5 s on one); the rest
  ** from seed */
  {
    lb_make_arg a;
    a.seed = lb_rand(&seed);
    a.rw = c->packed_bytes / 4 / (size_t)n;
    atomic_init(&a.bad, 0);
    over_channels(c, (double)n * k, codes_part, &a);
    /* (a worker's message is its own thread's: this one packs again for
    ** it) */
    if (atomic_load(&a.bad) && lb_pack(r, n, k, c->codes, c->packed) != LB_OK) {
      lb_case_free(c);
      return 0;
    }
    a.seed = lb_rand(&seed);
    over_parts(c, m, (double)m * k, x_part, &a);
  }
  /* Scales keep |w| around 1 whatever the width; zeros sit mid-range with
  ** a fractional part, as HQQ's float zero-points do. */
  for (i = 0; i < ng; i++) {
    double s = lb_uniform(&seed, 0.5, 1.5) / (qmax > 1 ? qmax / 2.0 : 1.0);
    lb_store(f->scale, c->scales, i, lb_rand(&seed) & 1 ? s : -s);
    if (f->zeros) {
      double z = f->dequant == LB_DQ_MULADD
                     ? lb_uniform(&seed, -0.5, 0.5)
                     : lb_uniform(&seed, 0.25 * qmax, 0.75 * qmax);
      if (f->is_signed && f->dequant != LB_DQ_MULADD) z -= (qmax + 1) / 2;
      lb_store(f->zero, c->zeros, i, z);
    }
  }
  for (i = 0; f->bias && i < (size_t)n; i++)
    lb_store(f->out, c->bias, i, lb_uniform(&seed, -1, 1));
  return 1;
}

/* The dequantized weight, and in *mag the size of the terms the kernel
** adds to make it (|q s| + |offset|), which sets its rounding error. */
static double weight(const lb_case *c, int j, int kk, double *mag) {
  const lb_fmt *f = &c->f;
  size_t g = (size_t)j * (size_t)c->groups + (size_t)(f->group ? kk / f->group : 0);
  double q = code_value(f, c->codes[(size_t)j * (size_t)c->k + (size_t)kk]);
  double s = lb_load(f->scale, c->scales, g);
  double z = f->zeros ? lb_load(f->zero, c->zeros, g) : 0;
  switch (f->dequant) {
    case LB_DQ_SUBMUL: *mag = fabs(q * s) + fabs(z * s); return (q - z) * s;
    case LB_DQ_MULADD: *mag = fabs(q * s) + fabs(z); return q * s + z;
    case LB_DQ_MUL: *mag = fabs(q * s); return q * s;
  }
  return NAN;
}

double lb_case_weight(const lb_case *c, int j, int kk) {
  double mag;
  return weight(c, j, kk, &mag);
}

/* The reference's outputs of channels j0..j1-1. */
typedef struct {
  const double *xr;
  double *y64, *mag64;
} lb_ref_out;

static void reference_part(const lb_case *c, int j0, int j1, void *arg) {
  const lb_ref_out *o = arg;
  int i, j, kk;
  double *w = malloc(sizeof(double) * (size_t)c->k);
  double *wm = malloc(sizeof(double) * (size_t)c->k);
  for (j = j0; w != NULL && wm != NULL && j < j1; j++) {
    double b = c->bias ? lb_load(c->f.out, c->bias, (size_t)j) : 0;
    for (kk = 0; kk < c->k; kk++) w[kk] = weight(c, j, kk, &wm[kk]);
    for (i = 0; i < c->m; i++) {
      const double *x = o->xr + (size_t)i * (size_t)c->k;
      double s = 0, q = 0;
      for (kk = 0; kk < c->k; kk++) {
        s += x[kk] * w[kk];
        q += (x[kk] * wm[kk]) * (x[kk] * wm[kk]);
      }
      o->y64[(size_t)i * (size_t)c->n + (size_t)j] = s + b;
      if (o->mag64) o->mag64[(size_t)i * (size_t)c->n + (size_t)j] = sqrt(q);
    }
  }
  free(w);
  free(wm);
}

/* The GPU suite's large cases (M = 100, K = 16384) are bound by this
** loop, not by the GPU: its channels go to the machine's cores. */
int lb_case_reference(const lb_case *c, double *y64, double *mag64) {
  size_t i, total = (size_t)c->m * (size_t)c->k;
  double *xr = malloc(sizeof(double) * total);
  lb_ref_out o = {xr, y64, mag64};
  if (xr == NULL) {
    lb_fail(LB_EMEM, "lb_case_reference: no memory for x in double");
    return 0;
  }
  for (i = 0; i < total; i++) xr[i] = lb_load(c->f.act, c->x, i);
  over_channels(c, (double)c->m * c->n * c->k, reference_part, &o);
  free(xr);
  return 1;
}

static void dense_part(const lb_case *c, int j0, int j1, void *dense) {
  int j, kk;
  for (j = j0; j < j1; j++)
    for (kk = 0; kk < c->k; kk++)
      lb_store(c->f.act, dense, (size_t)j * (size_t)c->k + (size_t)kk,
               lb_case_weight(c, j, kk));
}

void lb_case_dense(const lb_case *c, void *dense) {
  /* (a weight costs about what ten multiply-adds of the reference do) */
  over_channels(c, 10.0 * c->n * c->k, dense_part, dense);
}

static double unit_roundoff(lb_dtype t) {
  switch (t) {
    case LB_F16: return 0x1.0p-11;
    case LB_BF16: return 0x1.0p-8;
    case LB_F32: return 0x1.0p-24;
  }
  return 0;
}

/* Squared norms over the finite outputs: of y - ref, of ref and (when
** mag64 is given) of mag; *bad counts the outputs that are not finite. */
static void norms(const lb_case *c, const void *y, const double *y64,
                  const double *mag64, double sq[3], size_t *bad) {
  size_t i, total = (size_t)c->m * (size_t)c->n;
  sq[0] = sq[1] = sq[2] = 0;
  *bad = 0;
  for (i = 0; i < total; i++) {
    double v = lb_load(c->f.out, y, i);
    if (!isfinite(v)) {
      (*bad)++;
      continue;
    }
    sq[0] += (v - y64[i]) * (v - y64[i]);
    sq[1] += y64[i] * y64[i];
    if (mag64) sq[2] += mag64[i] * mag64[i];
  }
}

int lb_check(const lb_case *c, const void *y, const double *y64,
             const double *mag64, double *err, size_t *bad) {
  double sq[3], bound;
  norms(c, y, y64, mag64, sq, bad);
  bound = 2 * unit_roundoff(c->f.out) * sqrt(sq[1]) +
          4 * unit_roundoff(c->f.act) * sqrt(sq[2]);
  *err = bound > 0 ? sqrt(sq[0]) / bound : (sq[0] > 0 ? INFINITY : 0);
  return *bad == 0 && *err <= 1;
}

double lb_rel_error(const lb_case *c, const void *y, const double *y64,
                    size_t *bad) {
  double sq[3];
  norms(c, y, y64, NULL, sq, bad);
  return sq[1] > 0 ? sqrt(sq[0] / sq[1]) : (sq[0] > 0 ? INFINITY : 0);
}
