/*
 * sweep.c: cartesian sweeps of deployments evaluated row by row (sweep.h).
 * Pure computation: no Lua, no I/O.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

static int64_t axis_len(int64_t n) { return n > 0 ? n : 1; }

/* The option name of a field ("max_model_len", "gpu memory", ...). */
static const char *field_name(kvp_field f) {
  static const char *const names[KVP_NFIELDS] = {
    "base", "label", "gpu memory", "tp", "pp", "kv", "weights", "weight_bytes", "utilization",
    "activation", "overhead", "block", "max_num_batched_tokens", "max_model_len",
    "max_kv_tokens", "prefix", "samples", "prompt", "output", "max_num_seqs", "optim", "gpu"
  };
  return (f >= 0 && f < KVP_NFIELDS) ? names[f] : "unknown";
}

/* The internal axes: the deployment axes (an implicit BASE axis first when
 * none is given), then tp, pp, kv and weights when given. */
static kvp_err layout(const kvp_sweep_axes *ax, kvp_sweep_axis *out, int32_t *nout,
                      int32_t *user0) {
  if (ax->nbase < 0 || ax->ntp < 0 || ax->npp < 0 || ax->nkv < 0 || ax->nweights < 0 ||
      ax->ncontext < 0 || ax->nconcurrency < 0 || ax->naxis < 0 ||
      ax->naxis > KVP_SWEEP_MAX_AXES || (ax->naxis > 0 && ax->axis == NULL))
    return KVP_EINVAL;
  int32_t n = 0, nbase_axes = 0;
  for (int32_t a = 0; a < ax->naxis; a++)
    if (ax->axis[a].field == KVP_FIELD_BASE) nbase_axes++;
  if (nbase_axes == 0) out[n++] = (kvp_sweep_axis){.field = KVP_FIELD_BASE, .n = ax->nbase};
  *user0 = n;
  for (int32_t a = 0; a < ax->naxis; a++) {
    if (ax->axis[a].n < 1 || ax->axis[a].field < 0 || ax->axis[a].field >= KVP_NFIELDS)
      return KVP_EINVAL;
    out[n++] = ax->axis[a];
  }
  if (ax->ntp) out[n++] = (kvp_sweep_axis){.field = KVP_FIELD_TP, .n = ax->ntp, .i = ax->tp};
  if (ax->npp) out[n++] = (kvp_sweep_axis){.field = KVP_FIELD_PP, .n = ax->npp, .i = ax->pp};
  if (ax->nkv) out[n++] = (kvp_sweep_axis){.field = KVP_FIELD_KV, .n = ax->nkv, .fmt = ax->kv};
  if (ax->nweights)
    out[n++] = (kvp_sweep_axis){.field = KVP_FIELD_WEIGHTS, .n = ax->nweights, .fmt = ax->weights};
  /* the BASE digits must enumerate exactly the given deployments */
  int64_t prod = 1;
  for (int32_t a = 0; a < n; a++)
    if (out[a].field == KVP_FIELD_BASE) CHK(chk_mul(prod, out[a].n, &prod));
  if (prod != ax->nbase) return KVP_EINVAL;
  *nout = n;
  return KVP_OK;
}

kvp_err kvp_sweep_total(const kvp_sweep_axes *ax, int64_t *total) {
  kvp_sweep_axis axis[KVP_SWEEP_MAX_AXES + 5];
  int32_t n, user0;
  TRY(layout(ax, axis, &n, &user0));
  int64_t t = 1;
  for (int32_t a = 0; a < n; a++) CHK(chk_mul(t, axis[a].n, &t));
  CHK(chk_mul(t, axis_len(ax->ncontext), &t));
  CHK(chk_mul(t, axis_len(ax->nconcurrency), &t));
  *total = t;
  return KVP_OK;
}

/* floor(a * b / c) for 0 <= a, b <= c, c > 0, without the 128-bit product:
 * long multiplication over the bits of b, keeping quotient and remainder
 * (r < c <= 2^63, so 2r and r + a stay below 2^64). */
static int64_t muldiv(int64_t a, int64_t b, int64_t c) {
  uint64_t q = 0, r = 0, ua = (uint64_t)a, uc = (uint64_t)c;
  for (int i = 62; i >= 0; i--) {
    q <<= 1;
    r <<= 1;
    if (r >= uc) q++, r -= uc;
    if (((uint64_t)b >> i) & 1) {
      r += ua;
      while (r >= uc) q++, r -= uc;
    }
  }
  return (int64_t)q;
}

kvp_err kvp_sweep_shard(int64_t total, int64_t k, int64_t n, int64_t *first, int64_t *end) {
  if (total < 0 || n < 1 || k < 1 || k > n) return KVP_EINVAL;
  /* total * k / n without overflow: split total = q * n + r, then
   * q * k <= total and r * k / n by muldiv (r * k itself may pass 2^63) */
  int64_t q = total / n, r = total % n;
  *first = q * (k - 1) + muldiv(r, k - 1, n);
  *end = q * k + muldiv(r, k, n);
  return KVP_OK;
}

void kvp_sweep_free(kvp_sweep *s) {
  free(s->conc_cache);
  free(s->fit_cache);
  free(s->ctx_cache);
  free(s->conc_why);
  free(s->ctx_why);
  s->conc_cache = s->ctx_cache = s->fit_cache = NULL;
  s->conc_why = s->ctx_why = NULL;
}

/* Set the field of axis x to its value at position p. */
static void apply(kvp_deploy *d, const kvp_sweep_axis *x, int64_t p) {
  switch (x->field) {
    case KVP_FIELD_BASE: case KVP_FIELD_NONE: case KVP_NFIELDS: break;
    case KVP_FIELD_GPU_MEMORY:
      d->gpu_bytes = x->i[p];
      if (x->gpu != NULL) kvp_engine_rule_gpu(&d->engine, &x->gpu[p]);
      break;
    case KVP_FIELD_GPU: kvp_engine_rule_gpu(&d->engine, &x->gpu[p]); break;
    case KVP_FIELD_TP: d->tp = x->i[p]; break;
    case KVP_FIELD_PP:
      d->pp = x->i[p];
      /* per-stage activation peaks belong to the base's stages */
      memset(d->vllm.stage_activation_bytes, 0, sizeof d->vllm.stage_activation_bytes);
      break;
    case KVP_FIELD_KV: d->kv = x->fmt[p]; break;
    case KVP_FIELD_WEIGHTS:
      d->weights = x->fmt[p];
      d->weight_bytes = 0; /* a weight format axis replaces a given checkpoint size */
      d->replicated.bytes = 0; /* and the replicated weights' (their params in it) */
      break;
    case KVP_FIELD_WEIGHT_BYTES: d->weight_bytes = x->i[p]; break;
    case KVP_FIELD_UTILIZATION: d->utilization = x->f[p]; break;
    case KVP_FIELD_ACTIVATION:
      d->activation_bytes = x->i[p];
      memset(d->vllm.stage_activation_bytes, 0, sizeof d->vllm.stage_activation_bytes);
      break;
    case KVP_FIELD_OVERHEAD: d->overhead_bytes = x->i[p]; break;
    case KVP_FIELD_BLOCK: d->block = x->i[p]; break;
    case KVP_FIELD_MAX_NUM_BATCHED_TOKENS: d->max_num_batched_tokens = x->i[p]; break;
    case KVP_FIELD_MAX_MODEL_LEN: d->max_model_len = x->i[p]; break;
    case KVP_FIELD_MAX_KV_TOKENS: d->max_kv_tokens = x->i[p]; break;
    case KVP_FIELD_PREFIX: d->prefix = x->i[p]; break;
    case KVP_FIELD_SAMPLES: d->samples = x->i[p]; break;
    case KVP_FIELD_PROMPT: d->prompt = x->i[p]; break;
    case KVP_FIELD_OUTPUT: d->output = x->i[p]; break;
    case KVP_FIELD_MAX_NUM_SEQS: d->vllm.max_num_seqs = x->i[p]; break;
    case KVP_FIELD_OPTIM: kvp_combo_apply(&x->combo[p], d); break;
  }
}

/* A deployment with an engine rule: its predicted numbers again, for the
 * numbers the axes set. */
static int predicted(const kvp_deploy *d) {
  return d->engine.activation || d->engine.overhead != KVP_NT_NONE || d->engine.seqs_cap ||
         d->engine.nfraction > 0 || d->engine.sglang_memory || d->engine.mxfp4;
}

/* The values of axis x exist for its field, and each one, set on the first
 * deployment, passes the deployment's checks. */
static kvp_err check_axis(const kvp_sweep_axes *ax, const kvp_sweep_axis *x, kvp_deploy *tmp,
                          kvp_diag *d) {
  kvp_field f = x->field;
  if (f == KVP_FIELD_BASE || f == KVP_FIELD_NONE) return KVP_OK;
  int need_fmt = f == KVP_FIELD_KV || f == KVP_FIELD_WEIGHTS;
  int need_i = !need_fmt && f != KVP_FIELD_UTILIZATION && f != KVP_FIELD_OPTIM &&
               f != KVP_FIELD_GPU;
  if ((need_fmt && x->fmt == NULL) || (f == KVP_FIELD_UTILIZATION && x->f == NULL) ||
      (f == KVP_FIELD_GPU && x->gpu == NULL) ||
      (f == KVP_FIELD_OPTIM && x->combo == NULL) || (need_i && x->i == NULL))
    return kvp_fail(d, KVP_EINVAL, "sweep axis '%s' has no values", field_name(f));
  for (int64_t p = 0; p < x->n; p++) {
    if (f == KVP_FIELD_OPTIM) TRY(kvp_combo_check(&x->combo[p], d));
    if (f == KVP_FIELD_TP || f == KVP_FIELD_PP) TRY(kvp_check_count(x->i[p], 1, field_name(f), d));
    if (need_fmt) TRY(kvp_format_check(&x->fmt[p], field_name(f), d));
    *tmp = ax->base[0];
    apply(tmp, x, p);
    if (predicted(tmp)) TRY(kvp_predict_deploy(tmp, ax->non_torch, NULL, d));
    TRY(kvp_deploy_check(tmp, d));
  }
  return KVP_OK;
}

kvp_err kvp_sweep_init(kvp_sweep *s, const kvp_sweep_axes *ax, int64_t first, int64_t end,
                       unsigned want, kvp_diag *d) {
  memset(s, 0, offsetof(kvp_sweep, dep));
  s->ax = *ax;
  if (ax->nbase < 1) return kvp_fail(d, KVP_EINVAL, "a sweep needs at least one deployment");
  for (int64_t i = 0; i < ax->ncontext; i++) TRY(kvp_check_count(ax->context[i], 1, "context", d));
  for (int64_t i = 0; i < ax->nconcurrency; i++)
    TRY(kvp_check_count(ax->concurrency[i], 1, "concurrency", d));
  kvp_err e = layout(ax, s->axis, &s->nax, &s->user0);
  if (e == KVP_EOVERFLOW) return kvp_fail(d, e, "the sweep has more than 2^63 deployments");
  if (e != KVP_OK)
    return kvp_fail(d, e, "sweep axes: at most %d, each with values, and the base deployments "
                    "their product (%lld given)", KVP_SWEEP_MAX_AXES, (long long)ax->nbase);
  for (int32_t a = 0; a < s->nax; a++) TRY(check_axis(ax, &s->axis[a], &s->dep, d));
  e = kvp_sweep_total(ax, &s->total);
  if (e != KVP_OK) return kvp_fail(d, e, "the sweep has more than 2^63 rows");
  if (first < 0 || end < first || end > s->total)
    return kvp_fail(d, KVP_EINVAL, "row range [%lld, %lld) outside the sweep's %lld rows",
                    (long long)first, (long long)end, (long long)s->total);
  /* digit weights of the BASE axes; which steps change nothing */
  int64_t w = 1;
  s->last_optim = -1;
  for (int32_t a = s->nax - 1; a >= 0; a--) {
    if (s->axis[a].field == KVP_FIELD_OPTIM && s->last_optim < 0) s->last_optim = a;
    if (s->axis[a].field == KVP_FIELD_BASE) {
      s->radix[a] = w;
      w *= s->axis[a].n;
    }
    int quiet = s->axis[a].field == KVP_FIELD_NONE;
    for (int32_t b = a + 1; b < s->nax && quiet; b++) quiet = s->axis[b].n == 1;
    s->quiet[a] = quiet;
  }
  int64_t size[KVP_SWEEP_MAX_AXES + 7];
  for (int32_t a = 0; a < s->nax; a++) size[a] = s->axis[a].n;
  size[s->nax] = axis_len(ax->ncontext);
  size[s->nax + 1] = axis_len(ax->nconcurrency);
  s->next = first;
  s->end = end;
  s->want = want;
  s->cur_base = -1;
  s->gen = 1;
  int64_t rest = first;
  for (int32_t a = s->nax + 1; a >= 0; a--) {
    s->pos[a] = rest % size[a];
    rest /= size[a];
  }
  s->nc = size[s->nax];
  s->nq = size[s->nax + 1];
  s->ci = s->pos[s->nax];
  s->qi = s->pos[s->nax + 1];
  size_t nc = (size_t)size[s->nax], nq = (size_t)size[s->nax + 1];
  s->conc_cache = malloc(nc * sizeof *s->conc_cache);
  s->fit_cache = malloc(nc * sizeof *s->fit_cache);
  s->conc_why = malloc(nc * sizeof *s->conc_why);
  s->ctx_cache = malloc(nq * sizeof *s->ctx_cache);
  s->ctx_why = malloc(nq * sizeof *s->ctx_why);
  if (!s->conc_cache || !s->fit_cache || !s->conc_why || !s->ctx_cache || !s->ctx_why) {
    kvp_sweep_free(s);
    return kvp_fail(d, KVP_ENOMEM, "out of memory for the sweep's caches");
  }
  return KVP_OK;
}

/* SGLang's weights beyond the parameters at the row's C axes: the base's
 * table (d->vllm.sweep_weights, sweep.lua weights_table) at the positions
 * on the gpu, tp, pp and weights axes, since the caching allocator's slack
 * and the rotary tables' float32 depend on them. */
static kvp_err sweep_weights_at(const kvp_sweep *s, kvp_deploy *dep, kvp_diag *d) {
  if (dep->vllm.sweep_weights == NULL) return KVP_OK;
  int64_t at = 0, n = 1;
  for (int32_t a = 0; a < s->nax; a++) {
    const kvp_sweep_axis *x = &s->axis[a];
    if (x->gpu == NULL && x->field != KVP_FIELD_TP && x->field != KVP_FIELD_PP &&
        x->field != KVP_FIELD_WEIGHTS)
      continue;
    CHK(chk_mul(at, x->n, &at));
    at += s->pos[a];
    CHK(chk_mul(n, x->n, &n));
  }
  if (n > INT64_MAX / 2 || dep->vllm.nsweep_weights != 2 * n)
    return kvp_fail(d, KVP_EINVAL, "sweep: a base's SGLang weights table has %lld integers, "
                    "expected 2 x %lld (its C axes' positions)",
                    (long long)dep->vllm.nsweep_weights, (long long)n);
  dep->vllm.rotary_bytes = dep->vllm.sweep_weights[2 * at];
  dep->vllm.alloc_bytes = dep->vllm.sweep_weights[2 * at + 1];
  return KVP_OK;
}

/* Evaluate the ledger of the current deployment axes; forget the caches. */
static kvp_err load_ledger(kvp_sweep *s, kvp_diag *d) {
  int64_t b = 0;
  for (int32_t a = 0; a < s->nax; a++)
    if (s->axis[a].field == KVP_FIELD_BASE) b += s->pos[a] * s->radix[a];
  /* a new base, or a new combination on an optim axis: from the base again */
  int fresh = b != s->cur_base || s->reload;
  s->reload = 0;
  if (fresh) {
    if (s->ax.fetch != NULL) TRY(s->ax.fetch(s->ax.fetch_ctx, b, &s->dep, d));
    else s->dep = s->ax.base[b];
    s->cur_base = b;
  }
  if (!fresh && !s->ledger.adjusted) {
    /* the ledger's deployment is the last one as given: change its numbers
     * in place (no copy of the deployment) */
    for (int32_t a = 0; a < s->nax; a++)
      if (s->axis[a].field != KVP_FIELD_OPTIM) apply(&s->ledger.d, &s->axis[a], s->pos[a]);
    TRY(sweep_weights_at(s, &s->ledger.d, d));
    if (predicted(&s->ledger.d)) TRY(kvp_predict_deploy(&s->ledger.d, s->ax.non_torch, NULL, d));
    TRY(kvp_ledger_eval_own_numbers(&s->ledger, d));
  } else {
    for (int32_t a = 0; a < s->nax; a++) apply(&s->dep, &s->axis[a], s->pos[a]);
    TRY(sweep_weights_at(s, &s->dep, d));
    if (predicted(&s->dep)) TRY(kvp_predict_deploy(&s->dep, s->ax.non_torch, NULL, d));
    /* the model, budget rule and allocation are the base's: checked once */
    if (fresh) TRY(kvp_ledger_eval(&s->dep, &s->ledger, d));
    else TRY(kvp_ledger_eval_numbers(&s->dep, &s->ledger, d));
  }
  s->loads++;
  int64_t nc = axis_len(s->ax.ncontext), nq = axis_len(s->ax.nconcurrency);
  for (int64_t i = 0; i < nc; i++) s->conc_cache[i] = s->fit_cache[i] = -1;
  for (int64_t i = 0; i < nq; i++) s->ctx_cache[i] = -1;
  s->start_ok = 0;
  s->ledger_ok = 1;
  return KVP_OK;
}

/* Advance the odometer by one row; a change of a deployment axis that sets
 * a field needs a new ledger. */
static void advance(kvp_sweep *s) {
  if (++s->qi < s->nq) return;
  s->qi = 0;
  if (++s->ci < s->nc) return;
  s->ci = 0;
  for (int32_t a = s->nax - 1; a >= 0; a--) {
    if (++s->pos[a] < s->axis[a].n) {
      if (!s->quiet[a]) s->ledger_ok = 0;
      if (a <= s->last_optim) s->reload = 1; /* it, or an optim axis inside it, moved */
      s->gen++;
      return;
    }
    s->pos[a] = 0;
  }
}

/* The positions a row reports that change with the deployment axes only. */
static void row_positions(kvp_sweep *s) {
  memset(s->rowpos, 0, sizeof s->rowpos);
  s->rowpos[KVP_AX_BASE] = s->cur_base;
  for (int32_t a = s->user0 + s->ax.naxis; a < s->nax; a++) {
    switch (s->axis[a].field) {
      case KVP_FIELD_TP: s->rowpos[KVP_AX_TP] = s->pos[a]; break;
      case KVP_FIELD_PP: s->rowpos[KVP_AX_PP] = s->pos[a]; break;
      case KVP_FIELD_KV: s->rowpos[KVP_AX_KV] = s->pos[a]; break;
      default: s->rowpos[KVP_AX_WEIGHTS] = s->pos[a]; break;
    }
  }
  memcpy(s->apos, &s->pos[s->user0], sizeof s->apos);
  s->row_gen = s->gen;
}

int kvp_sweep_next(kvp_sweep *s, kvp_sweep_row *row, kvp_diag *d) {
  if (s->next >= s->end) return 0;
  kvp_err e;
  if (!s->ledger_ok && (e = load_ledger(s, d)) != KVP_OK) return -(int)e;
  if (s->row_gen != s->gen) row_positions(s);
  const kvp_ledger *l = &s->ledger;
  const kvp_sweep_axes *ax = &s->ax;
  int64_t ci = s->ci, qi = s->qi;
  row->index = s->next;
  memcpy(row->pos, s->rowpos, sizeof row->pos);
  row->pos[KVP_AX_CONTEXT] = ci;
  row->pos[KVP_AX_CONCURRENCY] = qi;
  row->apos = s->apos;
  row->context = ax->ncontext ? ax->context[ci] : l->max_len;
  row->concurrency = ax->nconcurrency ? ax->concurrency[qi] : 1;
  row->ledger = l;
  row->ledger_id = s->loads;
  row->gen = s->gen;
  row->start = NULL;
  /* the engine's startup answer: once per ledger, when asked for or when
   * fits is (the refusal is part of fits) */
  int fold = (s->want & KVP_WANT_FIT) != 0;
  if ((s->want & KVP_WANT_START) || fold) {
    if (!s->start_ok) {
      if ((e = kvp_start_check(l, &s->start, d)) != KVP_OK) return -(int)e;
      s->start_ok = 1;
    }
    row->start = &s->start;
  }
  if (s->want & KVP_WANT_FIT) {
    /* a row that fits needs no evaluation of its bytes: the largest
     * concurrency that fits at this context is kept per context */
    if (s->fit_cache[ci] < 0 &&
        (e = kvp_ledger_fit_limit(l, row->context, &s->fit_cache[ci])) != KVP_OK)
      return -(int)e;
    if (row->concurrency <= s->fit_cache[ci] || l->fit.why != KVP_FITS) {
      row->fit = l->fit; /* what kvp_ledger_fit answers */
      row->fit.context = row->context;
      row->fit.concurrency = row->concurrency;
    } else if (!(s->want & KVP_WANT_FIT_NEED) && row->context <= l->max_len &&
               (l->d.vllm.max_num_seqs == 0 || row->concurrency <= l->d.vllm.max_num_seqs)) {
      row->fit = (kvp_fit){.why = KVP_WHY_KV, .stage = -1, .context = row->context,
                           .concurrency = row->concurrency};
    } else if ((e = kvp_ledger_fit(l, row->context, row->concurrency, &row->fit)) != KVP_OK) {
      return -(int)e;
    }
    kvp_verdict_fold(&row->fit, &s->start); /* fits, but the engine refuses to start */
  }
  if (s->want & KVP_WANT_MAXCONC) {
    if (s->conc_cache[ci] < 0) {
      e = kvp_ledger_max_concurrency(l, row->context, &s->conc_cache[ci], &s->conc_why[ci]);
      if (e != KVP_OK) return -(int)e;
    }
    row->max_concurrency = s->conc_cache[ci];
    row->conc_why = s->conc_why[ci];
  }
  if (s->want & KVP_WANT_MAXCTX) {
    if (s->ctx_cache[qi] < 0) {
      e = kvp_ledger_max_context(l, row->concurrency, &s->ctx_cache[qi], &s->ctx_why[qi]);
      if (e != KVP_OK) return -(int)e;
    }
    row->max_context = s->ctx_cache[qi];
    row->ctx_why = s->ctx_why[qi];
  }
  s->next++;
  advance(s); /* now: the next call reads the positions long after this store */
  return 1;
}

int64_t kvp_sweep_skip(kvp_sweep *s, const kvp_sweep_row *row, int whole) {
  if (s->next >= s->end || s->gen != row->gen) return 0; /* past the row's deployment */
  int64_t rest;
  if (whole) {
    rest = (s->nc - s->ci - 1) * s->nq + (s->nq - s->qi);
    s->ci = s->nc - 1;
  } else {
    if (s->ci != row->pos[KVP_AX_CONTEXT]) return 0; /* past the row's context */
    rest = s->nq - s->qi;
  }
  if (rest > s->end - s->next) rest = s->end - s->next;
  s->next += rest;
  s->qi = s->nq - 1;
  advance(s); /* to the first row after them */
  return rest;
}
