/*
 * optim.c: the arithmetic of the optimization models: request-length
 * distributions and a seeded generator, allocation waste, speculative
 * decoding rates and eviction budgets. It knows no deployment: deploy.c
 * checks the optimization fields of one, ledger.c applies them.
 * Pure computation: no Lua, no I/O.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

/* ---- the standard normal ------------------------------------------------ */

#define SQRT_2PI 2.50662827463100050242 /* sqrt(2 pi) */

double kvp_normal_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

/* Upper tail 1 - CDF(z), without the cancellation of 1 - cdf for z > 0. */
static double normal_sf(double z) { return 0.5 * erfc(z / sqrt(2.0)); }

static double normal_pdf(double z) {
  if (isinf(z)) return 0.0;
  return exp(-0.5 * z * z) / SQRT_2PI;
}

/* P(l < Z < u), from whichever tail keeps the digits. */
static double normal_mass(double l, double u) {
  if (!(u > l)) return 0.0;
  return l > 0.0 ? normal_sf(l) - normal_sf(u) : kvp_normal_cdf(u) - kvp_normal_cdf(l);
}

/* Peter J. Acklam's rational approximation of the inverse normal CDF
 * (relative error 1.15e-9), refined by one step of Halley's method on
 * erfc, which brings it to full double precision. */
double kvp_normal_quantile(double p) {
  static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                              -2.759285104469687e+02, 1.383577518672690e+02,
                              -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                              -1.556989798598866e+02, 6.680131188771972e+01,
                              -1.328068155288572e+01};
  static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                              -2.400758277161838e+00, -2.549732539343734e+00,
                              4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                              2.445134137142996e+00, 3.754408661907416e+00};
  if (p <= 0.0) return -INFINITY;
  if (p >= 1.0) return INFINITY;
  double x, q, r;
  if (p < 0.02425) {
    q = sqrt(-2.0 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - 0.02425) {
    q = p - 0.5;
    r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    q = sqrt(-2.0 * log(1.0 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  double e = kvp_normal_cdf(x) - p;
  double u = e * SQRT_2PI * exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

/* ---- distributions ------------------------------------------------------- */

/* A double as messages show it: a NaN of either sign prints "nan". */

const char *kvp_dist_name(kvp_dist_kind k) {
  static const char *const names[KVP_NDISTS] = {"fixed", "uniform", "normal", "lognormal",
                                                "empirical"};
  return (k >= 0 && k < KVP_NDISTS) ? names[k] : "unknown";
}

static int64_t dist_hi(const kvp_dist *d) { return d->hi > 0 ? d->hi : KVP_MAX_LENGTH; }

kvp_err kvp_dist_check(const kvp_dist *d, kvp_diag *diag) {
  switch (d->kind) {
    case KVP_DIST_FIXED:
      if (d->lo < 1 || d->lo > KVP_MAX_LENGTH)
        return kvp_fail(diag, KVP_EINVAL, "field 'length' must be an integer in 1..2^40, got %lld",
                        (long long)d->lo);
      return KVP_OK;
    case KVP_DIST_UNIFORM:
      if (d->lo < 1)
        return kvp_fail(diag, KVP_EINVAL, "field 'min' must be an integer >= 1, got %lld",
                        (long long)d->lo);
      if (d->hi < d->lo || d->hi > KVP_MAX_LENGTH)
        return kvp_fail(diag, KVP_EINVAL, "field 'max' must be an integer in %lld..2^40, got %lld",
                        (long long)d->lo, (long long)d->hi);
      return KVP_OK;
    case KVP_DIST_NORMAL:
    case KVP_DIST_LOGNORMAL: {
      int lognormal = d->kind == KVP_DIST_LOGNORMAL;
      if (d->lo < 1)
        return kvp_fail(diag, KVP_EINVAL, "field 'min' must be an integer >= 1, got %lld",
                        (long long)d->lo);
      if (d->hi != 0 && (d->hi < d->lo || d->hi > KVP_MAX_LENGTH))
        return kvp_fail(diag, KVP_EINVAL, "field 'max' must be an integer in %lld..2^40, got %lld",
                        (long long)d->lo, (long long)d->hi);
      /* lognormal: ln of lengths; |mu| <= 50 and sigma <= 10 keep
       * exp(mu + sigma^2 / 2) finite, so no mean is ever inf or NaN */
      double mu_max = lognormal ? 50.0 : 1e15, sd_max = lognormal ? 10.0 : 1e15;
      if (!(fabs(d->mu) <= mu_max))
        return kvp_fail(diag, KVP_EINVAL, "field '%s' must be a finite number in [-%g, %g], got %g",
                        lognormal ? "mu" : "mean", mu_max, mu_max, kvp_shown(d->mu));
      if (!(d->sigma > 0.0 && d->sigma <= sd_max))
        return kvp_fail(diag, KVP_EINVAL, "field '%s' must be a number in (0, %g], got %g",
                        lognormal ? "sigma" : "sd", sd_max, kvp_shown(d->sigma));
      return KVP_OK;
    }
    case KVP_DIST_EMPIRICAL:
      if (d->n < 1 || d->values == NULL)
        return kvp_fail(diag, KVP_EINVAL, "field 'values' must hold at least one length");
      for (int64_t i = 0; i < d->n; i++) {
        if (d->values[i] < 1 || d->values[i] > KVP_MAX_LENGTH)
          return kvp_fail(diag, KVP_EINVAL, "field 'values': length %lld is outside 1..2^40",
                          (long long)d->values[i]);
        if (i > 0 && d->values[i] < d->values[i - 1])
          return kvp_fail(diag, KVP_EINVAL, "field 'values' must be sorted ascending");
      }
      return KVP_OK;
    default:
      return kvp_fail(diag, KVP_EINVAL, "unknown distribution kind %d", (int)d->kind);
  }
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void kvp_lengths_sort(int64_t *v, int64_t n) {
  if (n > 1) qsort(v, (size_t)n, sizeof *v, cmp64);
}

/* Mass-weighted sum of the clamped length over lo..hi of Z in (z0, z1):
 * E[clamp(X); z0 < Z < z1], X = mu + sigma Z (normal) or exp(mu + sigma Z)
 * (lognormal, whose partial mean is e^(mu + sigma^2/2) P(l - sigma < Z < u - sigma)). */
static double clamped_partial(const kvp_dist *d, double z0, double z1) {
  int lognormal = d->kind == KVP_DIST_LOGNORMAL;
  double lo = (double)d->lo, hi = (double)dist_hi(d);
  double za = ((lognormal ? log(lo) : lo) - d->mu) / d->sigma;
  double zb = ((lognormal ? log(hi) : hi) - d->mu) / d->sigma;
  double sum = lo * normal_mass(z0, fmin(z1, za)) + hi * normal_mass(fmax(z0, zb), z1);
  double l = fmax(z0, za), u = fmin(z1, zb);
  if (u > l) {
    if (lognormal)
      sum += exp(d->mu + 0.5 * d->sigma * d->sigma) * normal_mass(l - d->sigma, u - d->sigma);
    else
      sum += d->mu * normal_mass(l, u) + d->sigma * (normal_pdf(l) - normal_pdf(u));
  }
  return sum;
}

/* Integral over ranks t in [t0, t1) of value(floor(t)) for a sorted list
 * (values) or the integers lo.. (values == NULL). */
static double rank_integral(const kvp_dist *d, const int64_t *values, double t0, double t1) {
  if (values == NULL) {
    /* F(t) = integral of floor(s) ds over [0, t] = f (f - 1) / 2 + f (t - f) */
    double f0 = floor(t0), f1 = floor(t1);
    double F0 = f0 * (f0 - 1.0) / 2.0 + f0 * (t0 - f0);
    double F1 = f1 * (f1 - 1.0) / 2.0 + f1 * (t1 - f1);
    return (double)d->lo * (t1 - t0) + (F1 - F0);
  }
  double sum = 0.0;
  for (int64_t j = (int64_t)floor(t0); (double)j < t1 && j < d->n; j++) {
    double w = fmin(t1, (double)j + 1.0) - fmax(t0, (double)j);
    if (w > 0.0) sum += w * (double)values[j];
  }
  return sum;
}

/* Mean of the stratum of probability [p0, p1). */
static double stratum_mean(const kvp_dist *d, double p0, double p1) {
  switch (d->kind) {
    case KVP_DIST_FIXED:
      return (double)d->lo;
    case KVP_DIST_UNIFORM:
    case KVP_DIST_EMPIRICAL: {
      double n = d->kind == KVP_DIST_UNIFORM ? (double)(d->hi - d->lo + 1) : (double)d->n;
      double t0 = p0 * n, t1 = p1 * n;
      return rank_integral(d, d->kind == KVP_DIST_EMPIRICAL ? d->values : NULL, t0, t1) /
             (t1 - t0);
    }
    default: {
      double z0 = p0 <= 0.0 ? -INFINITY : kvp_normal_quantile(p0);
      double z1 = p1 >= 1.0 ? INFINITY : kvp_normal_quantile(p1);
      return clamped_partial(d, z0, z1) / (p1 - p0);
    }
  }
}

/* A mean rounded to a length inside the distribution's bounds. */
static int64_t to_length(const kvp_dist *d, double x) {
  double lo = 1.0, hi = (double)KVP_MAX_LENGTH;
  if (d->kind == KVP_DIST_UNIFORM || d->kind == KVP_DIST_NORMAL ||
      d->kind == KVP_DIST_LOGNORMAL) {
    lo = (double)d->lo;
    hi = (double)dist_hi(d);
  }
  x = floor(x + 0.5);
  if (!(x >= lo)) x = lo; /* also catches NaN, which the checks exclude */
  if (x > hi) x = hi;
  return (int64_t)x;
}

kvp_err kvp_dist_mean(const kvp_dist *d, double *mean, kvp_diag *diag) {
  TRY(kvp_dist_check(d, diag));
  *mean = stratum_mean(d, 0.0, 1.0);
  if (!isfinite(*mean)) return kvp_fail(diag, KVP_EINVAL, "the distribution's mean is not finite");
  return KVP_OK;
}

kvp_err kvp_dist_points(const kvp_dist *d, int32_t k, int64_t *points, kvp_diag *diag) {
  TRY(kvp_dist_check(d, diag));
  if (k < 1 || k > KVP_LEN_POINTS)
    return kvp_fail(diag, KVP_EINVAL, "points must be 1..%d, got %d", KVP_LEN_POINTS, (int)k);
  for (int32_t i = 0; i < k; i++)
    points[i] = to_length(d, stratum_mean(d, (double)i / k, (double)(i + 1) / k));
  /* strata are ordered, so are their means; rounding keeps the order */
  return KVP_OK;
}

/* ---- the generator ------------------------------------------------------- */

/* splitmix64 (Steele, Lea and Flood, 2014), as Vigna seeds xoshiro with it */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void kvp_rng_seed(kvp_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** 1.0 (prng.di.unimi.it/xoshiro256starstar.c) */
uint64_t kvp_rng_next(kvp_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t kvp_rng_below(kvp_rng *r, uint64_t n) {
  /* reject the lowest (2^64 mod n) values so every residue is equally likely */
  uint64_t threshold = (0 - n) % n;
  for (;;) {
    uint64_t x = kvp_rng_next(r);
    if (x >= threshold) return x % n;
  }
}

double kvp_rng_unit(kvp_rng *r) {
  return ((double)(kvp_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

kvp_err kvp_dist_sample(const kvp_dist *d, kvp_rng *r, int64_t *length) {
  switch (d->kind) {
    case KVP_DIST_FIXED:
      *length = d->lo;
      return KVP_OK;
    case KVP_DIST_UNIFORM:
      *length = d->lo + (int64_t)kvp_rng_below(r, (uint64_t)(d->hi - d->lo) + 1);
      return KVP_OK;
    case KVP_DIST_EMPIRICAL:
      *length = d->values[kvp_rng_below(r, (uint64_t)d->n)];
      return KVP_OK;
    case KVP_DIST_NORMAL:
    case KVP_DIST_LOGNORMAL: {
      double x = d->mu + d->sigma * kvp_normal_quantile(kvp_rng_unit(r));
      if (d->kind == KVP_DIST_LOGNORMAL) x = exp(x);
      *length = to_length(d, x);
      return KVP_OK;
    }
    default:
      return KVP_EINVAL;
  }
}

/* ---- allocation ---------------------------------------------------------- */

static kvp_err check_alloc(kvp_alloc a, int64_t block, int64_t max_len, int64_t n,
                           kvp_diag *diag) {
  if (a < 0 || a >= KVP_NALLOCS)
    return kvp_fail(diag, KVP_EINVAL, "unknown allocation policy %d", (int)a);
  TRY(kvp_check_count(block, 1, "block", diag));
  TRY(kvp_check_count(max_len, 1, "max_model_len", diag));
  TRY(kvp_check_count(n, 1, "lengths", diag));
  return KVP_OK;
}

kvp_err kvp_alloc_usage(kvp_alloc a, int64_t block, int64_t max_len, const int64_t *lengths,
                        int64_t n, int64_t *real, int64_t *allocated, kvp_diag *diag) {
  TRY(check_alloc(a, block, max_len, n, diag));
  int64_t re = 0, al = 0;
  for (int64_t i = 0; i < n; i++) {
    if (lengths[i] < 1)
      return kvp_fail(diag, KVP_EINVAL, "length %lld of request %lld must be >= 1",
                      (long long)lengths[i], (long long)i + 1);
    int64_t len = min64(lengths[i], max_len);
    int64_t slots = a == KVP_ALLOC_CONTIGUOUS ? max_len : cdiv(len, block) * block;
    if (!chk_add(re, len, &re) || !chk_add(al, slots, &al))
      return kvp_fail(diag, KVP_EOVERFLOW, "token counts of %lld requests overflow",
                      (long long)n);
  }
  *real = re;
  *allocated = al;
  return KVP_OK;
}

/* ---- speculative decoding ------------------------------------------------ */

kvp_err kvp_spec_rates_of(double acceptance, int64_t tokens, kvp_spec_rates *out,
                          kvp_diag *diag) {
  if (!(acceptance >= 0.0 && acceptance < 1.0))
    return kvp_fail(diag, KVP_EINVAL, "field 'acceptance' must be in [0, 1), got %g",
                    kvp_shown(acceptance));
  if (tokens < 1 || tokens > 1024)
    return kvp_fail(diag, KVP_EINVAL, "field 'tokens' must be an integer in 1..1024, got %lld",
                    (long long)tokens);
  double g = (double)tokens;
  double e = (1.0 - pow(acceptance, g + 1.0)) / (1.0 - acceptance);
  out->tokens_per_step = e;
  out->steps_per_token = 1.0 / e;
  out->target_writes_per_token = (g + 1.0) / e;
  out->draft_writes_per_token = g / e;
  return KVP_OK;
}

/* ---- eviction ------------------------------------------------------------ */

int64_t kvp_evict_held(const kvp_evict *e, int64_t m, int32_t level) {
  int64_t cap = INT64_MAX;
  if (e->recent > 0 || e->keep_ppm > 0) {
    int64_t heavy = 0, p;
    if (e->keep_ppm > 0) heavy = chk_mul(m, e->keep_ppm, &p) ? cdiv(p, KVP_PPM) : m;
    if (!chk_add(e->sinks, e->recent, &cap) || !chk_add(cap, heavy, &cap)) cap = INT64_MAX;
  }
  if (level > 0) cap = min64(cap, e->level[level - 1]);
  return min64(m, cap);
}

kvp_err kvp_evict_set_layers(kvp_evict *e, const int64_t *budgets, int64_t n, kvp_diag *diag) {
  if (n < 0 || n > KVP_MAX_LAYERS)
    return kvp_fail(diag, KVP_EINVAL, "per-layer budgets for %lld layers, at most %d",
                    (long long)n, KVP_MAX_LAYERS);
  int64_t lv[KVP_MAX_EVICT_LEVELS];
  int nl = 0;
  for (int64_t i = 0; i < n; i++) {
    if (budgets[i] < 0)
      return kvp_fail(diag, KVP_EINVAL, "per-layer budget of layer %lld must be >= 0 tokens, got %lld",
                      (long long)i + 1, (long long)budgets[i]);
    if (budgets[i] == 0) continue;
    int j = 0;
    while (j < nl && lv[j] != budgets[i]) j++;
    if (j < nl) continue;
    if (nl == KVP_MAX_EVICT_LEVELS)
      return kvp_fail(diag, KVP_EINVAL,
                      "per-layer budgets take more than %d distinct values: group the layers "
                      "into at most %d budgets", KVP_MAX_EVICT_LEVELS, KVP_MAX_EVICT_LEVELS);
    lv[nl++] = budgets[i];
  }
  kvp_lengths_sort(lv, nl);
  memset(e->layer, 0, sizeof e->layer);
  for (int64_t i = 0; i < n; i++) {
    if (budgets[i] == 0) continue;
    int j = 0;
    while (lv[j] != budgets[i]) j++;
    e->layer[i] = (uint8_t)(j + 1);
  }
  e->nlevel = nl;
  for (int j = 0; j < KVP_MAX_EVICT_LEVELS; j++) e->level[j] = j < nl ? lv[j] : 0;
  return KVP_OK;
}

/* ---- combinations resolved once for a sweep -------------------------------- */

uint32_t kvp_combo_bit(const char *name) {
  static const struct { const char *name; uint32_t bit; } bits[] = {
    {"kv", KVP_COMBO_KV}, {"allocation", KVP_COMBO_ALLOC}, {"block", KVP_COMBO_BLOCK},
    {"kivi", KVP_COMBO_KIVI}, {"sinks", KVP_COMBO_SINKS}, {"recent", KVP_COMBO_RECENT},
    {"keep", KVP_COMBO_KEEP}, {"prefix", KVP_COMBO_PREFIX}, {"samples", KVP_COMBO_SAMPLES},
    {"speculative", KVP_COMBO_SPEC}, {"lengths", KVP_COMBO_LENGTHS},
  };
  for (size_t i = 0; name != NULL && i < sizeof bits / sizeof bits[0]; i++)
    if (strcmp(bits[i].name, name) == 0) return bits[i].bit;
  return 0;
}

kvp_err kvp_combo_take(kvp_combo *c, uint32_t set, const kvp_deploy *d, kvp_diag *diag) {
  if (set & ~KVP_COMBO_ALL)
    return kvp_fail(diag, KVP_EINVAL, "optimization combination: unknown field bits 0x%x",
                    (unsigned)(set & ~KVP_COMBO_ALL));
  memset(c, 0, sizeof *c);
  c->set = set;
  c->kv = d->kv;
  c->kv_full = d->kv_full;
  c->alloc = d->alloc;
  c->block = d->block;
  c->kv_recent = d->kv_recent;
  c->sinks = d->evict.sinks;
  c->recent = d->evict.recent;
  c->keep_ppm = d->evict.keep_ppm;
  c->prefix = d->prefix;
  c->samples = d->samples;
  c->prompt = d->prompt;
  c->output = d->output;
  c->spec = d->spec;
  c->nlen = d->nlen;
  if (d->nlen > 0 && d->nlen <= KVP_LEN_POINTS)
    memcpy(c->len, d->len, (size_t)d->nlen * sizeof c->len[0]);
  return kvp_combo_check(c, diag);
}

kvp_err kvp_combo_check(const kvp_combo *c, kvp_diag *diag) {
  if (c->set & ~KVP_COMBO_ALL)
    return kvp_fail(diag, KVP_EINVAL, "optimization combination: unknown field bits 0x%x",
                    (unsigned)(c->set & ~KVP_COMBO_ALL));
  if (c->set & KVP_COMBO_KV) TRY(kvp_format_check(&c->kv, "kv", diag));
  if (c->set & KVP_COMBO_KIVI) TRY(kvp_format_check(&c->kv_full, "kv_full", diag));
  if ((c->set & KVP_COMBO_ALLOC) && (c->alloc < 0 || c->alloc >= KVP_NALLOCS))
    return kvp_fail(diag, KVP_EINVAL, "field 'allocation' must be paged or contiguous, got %d",
                    (int)c->alloc);
  if ((c->set & KVP_COMBO_LENGTHS) && (c->nlen < 0 || c->nlen > KVP_LEN_POINTS))
    return kvp_fail(diag, KVP_EINVAL, "field 'lengths' takes 0..%d points, got %d",
                    KVP_LEN_POINTS, (int)c->nlen);
  return KVP_OK;
}

void kvp_combo_apply(const kvp_combo *c, kvp_deploy *d) {
  uint32_t s = c->set;
  if (s & KVP_COMBO_KV) d->kv = c->kv;
  if (s & KVP_COMBO_ALLOC) d->alloc = c->alloc;
  if (s & KVP_COMBO_BLOCK) d->block = c->block;
  if (s & KVP_COMBO_KIVI) {
    d->kv_recent = c->kv_recent;
    d->kv_full = c->kv_full;
  }
  if (s & KVP_COMBO_SINKS) d->evict.sinks = c->sinks;
  if (s & KVP_COMBO_RECENT) d->evict.recent = c->recent;
  if (s & KVP_COMBO_KEEP) d->evict.keep_ppm = c->keep_ppm;
  if (s & KVP_COMBO_PREFIX) d->prefix = c->prefix;
  if (s & KVP_COMBO_SAMPLES) {
    d->samples = c->samples;
    d->prompt = c->prompt;
    d->output = c->output;
  }
  if (s & KVP_COMBO_SPEC) d->spec = c->spec;
  if (s & KVP_COMBO_LENGTHS) {
    d->nlen = c->nlen;
    memset(d->len, 0, sizeof d->len);
    if (c->nlen > 0) memcpy(d->len, c->len, (size_t)c->nlen * sizeof d->len[0]);
  }
}
