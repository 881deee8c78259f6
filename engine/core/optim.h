/*
 * optim.h: the arithmetic of kvplan's optimization models (optim.c).
 * Pure computation: no Lua, no I/O. Included at the end of kvplan.h, which
 * defines the deployment fields these models set (kvp_deploy: budget, alloc,
 * kv_recent, evict, spec, prefix, samples, host_bytes, len).
 *
 * Exact counts stay int64_t; doubles appear only for rates (acceptance,
 * tokens per step), distribution parameters and expected values, and every
 * double an answer carries is checked finite.
 */
#ifndef KVP_OPTIM_H
#define KVP_OPTIM_H

#include <stdint.h>

#include "kvplan.h"

/* ---- request-length distributions ------------------------------------- */

/* Longest length a distribution yields when it has no upper bound. */
#define KVP_MAX_LENGTH ((int64_t)1 << 40)

typedef enum kvp_dist_kind {
  KVP_DIST_FIXED = 0,   /* every request has lo tokens */
  KVP_DIST_UNIFORM,     /* integers lo..hi, equally likely */
  KVP_DIST_NORMAL,      /* mu + sigma Z tokens, clamped to [lo, hi] */
  KVP_DIST_LOGNORMAL,   /* exp(mu + sigma Z) tokens, clamped to [lo, hi] */
  KVP_DIST_EMPIRICAL,   /* the n values, equally likely */
  KVP_NDISTS
} kvp_dist_kind;

/* A distribution of request lengths (tokens). For normal and lognormal,
 * hi == 0 means no upper bound (KVP_MAX_LENGTH). Empirical values are the
 * caller's, sorted ascending (kvp_lengths_sort). */
typedef struct kvp_dist {
  kvp_dist_kind kind;
  int64_t lo, hi;
  double mu, sigma;
  const int64_t *values;
  int64_t n;
} kvp_dist;

const char *kvp_dist_name(kvp_dist_kind k);
/* KVP_EINVAL, naming the field, for a length below 1, hi < lo, a sigma not
 * in (0, 10], a mean outside what 64-bit lengths hold, unsorted values. */
kvp_err kvp_dist_check(const kvp_dist *d, kvp_diag *diag);
/* Exact mean of the (clamped) distribution. */
kvp_err kvp_dist_mean(const kvp_dist *d, double *mean, kvp_diag *diag);
/* k (1..KVP_LEN_POINTS) equally likely representative lengths, ascending:
 * the mean of each of k equal-probability strata, integrated exactly
 * (normal and lognormal through the standard normal CDF; uniform and
 * empirical over their ranks), rounded to the nearest token (halves up).
 * Their average is the distribution's mean within half a token. */
kvp_err kvp_dist_points(const kvp_dist *d, int32_t k, int64_t *points, kvp_diag *diag);
void kvp_lengths_sort(int64_t *v, int64_t n);

/* Standard normal CDF, and its inverse (Acklam's rational approximation
 * refined by one Halley step: full double precision), p in (0, 1). */
double kvp_normal_cdf(double z);
double kvp_normal_quantile(double p);

/* ---- a seeded generator ------------------------------------------------ */

/* xoshiro256** (Blackman and Vigna, 2018), its state filled by splitmix64
 * from one 64-bit seed: the same seed gives the same lengths everywhere. */
typedef struct kvp_rng {
  uint64_t s[4];
} kvp_rng;

void kvp_rng_seed(kvp_rng *r, uint64_t seed);
/* One length drawn from d (by inversion for normal and lognormal). */
kvp_err kvp_dist_sample(const kvp_dist *d, kvp_rng *r, int64_t *length);

/* ---- allocation -------------------------------------------------------- */

/* Over requests of the given lengths (each capped at max_len): the tokens
 * they hold (`real`) and the token slots their allocation takes
 * (`allocated`): paged, ceil(L / block) * block; contiguous, max_len each.
 * real / allocated is the fraction of KV memory holding real tokens (Kwon
 * et al., SOSP 2023: 20.4-38.2 % in systems that reserve the maximum,
 * above 96 % in vLLM). */
kvp_err kvp_alloc_usage(kvp_alloc a, int64_t block, int64_t max_len, const int64_t *lengths,
                        int64_t n, int64_t *real, int64_t *allocated, kvp_diag *diag);

/* ---- speculative decoding ---------------------------------------------- */

/* Leviathan et al. (ICML 2023), acceptance rate a, g draft tokens a step:
 * tokens per target step E = (1 - a^(g+1)) / (1 - a); target steps per
 * generated token 1 / E (each step reads the whole KV cache once); KV
 * writes per generated token: the target writes g + 1 positions a step,
 * the draft g, so (g + 1) / E and g / E. */
typedef struct kvp_spec_rates {
  double tokens_per_step;
  double steps_per_token;
  double target_writes_per_token;
  double draft_writes_per_token;
} kvp_spec_rates;

kvp_err kvp_spec_rates_of(double acceptance, int64_t tokens, kvp_spec_rates *out,
                          kvp_diag *diag);

/* ---- eviction ---------------------------------------------------------- */

/* Per-layer budgets (tokens; 0: no budget for that layer) for layers
 * 0 .. n - 1, as at most KVP_MAX_EVICT_LEVELS levels, ascending. */
kvp_err kvp_evict_set_layers(kvp_evict *e, const int64_t *budgets, int64_t n, kvp_diag *diag);

/* ---- combinations resolved once for a sweep ----------------------------- */

/* What a combination of built-in optimizations sets on a deployment, resolved
 * once per combination (stdlib/kvplan/sweep.lua builds the deployment of the
 * sweep's first base with it, and kvp_combo_take keeps the fields its members
 * set) and applied in C to every deployment of a sweep's optim axis (sweep.c,
 * KVP_FIELD_OPTIM): the combination's deployment on any base is that base
 * with these fields, the rest the base's own. Eviction's three numbers are
 * separate bits, as kv.optim merges an eviction into the one given. Only
 * optimizations whose effect does not depend on the model, the GPU or the
 * other options qualify (kv.optim says which); the others build each
 * deployment in Lua. */
enum {
  KVP_COMBO_KV = 1u << 0,       /* kv */
  KVP_COMBO_ALLOC = 1u << 1,    /* alloc */
  KVP_COMBO_BLOCK = 1u << 2,    /* block */
  KVP_COMBO_KIVI = 1u << 3,     /* kv_recent, kv_full */
  KVP_COMBO_SINKS = 1u << 4,    /* evict.sinks */
  KVP_COMBO_RECENT = 1u << 5,   /* evict.recent */
  KVP_COMBO_KEEP = 1u << 6,     /* evict.keep_ppm */
  KVP_COMBO_PREFIX = 1u << 7,   /* prefix */
  KVP_COMBO_SAMPLES = 1u << 8,  /* samples, prompt, output */
  KVP_COMBO_SPEC = 1u << 9,     /* spec (a draft model: its shape and weights) */
  KVP_COMBO_LENGTHS = 1u << 10, /* nlen, len */
  KVP_COMBO_ALL = (1u << 11) - 1u
};

typedef struct kvp_combo {
  uint32_t set;              /* KVP_COMBO_* bits: the fields written */
  kvp_format kv, kv_full;
  kvp_alloc alloc;
  int64_t block, kv_recent;
  int64_t sinks, recent;
  int32_t keep_ppm;
  int32_t nlen;
  int64_t prefix, samples, prompt, output;
  kvp_spec spec;
  int64_t len[KVP_LEN_POINTS];
} kvp_combo;

/* The bit of a field group by its name ("kv", "allocation", "block", "kivi",
 * "sinks", "recent", "keep", "prefix", "samples", "speculative", "lengths");
 * 0 for another name. */
uint32_t kvp_combo_bit(const char *name);
/* c = the fields of `set` as deployment d has them (d: a deployment built
 * with the combination). KVP_EINVAL for a bit outside KVP_COMBO_ALL. */
kvp_err kvp_combo_take(kvp_combo *c, uint32_t set, const kvp_deploy *d, kvp_diag *diag);
/* Write the fields of c->set on d; the others are left as they are. */
void kvp_combo_apply(const kvp_combo *c, kvp_deploy *d);

#endif
