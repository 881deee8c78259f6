/*
 * ledger.c: the memory ledger of one GPU and the capacity answers.
 * Pure computation: no Lua, no I/O.
 *
 * Budget (vLLM, vllm/v1/worker/gpu_worker.py, ANCHORS.md section 4):
 *   usable    = floor(utilization * visible memory)
 *   kv_budget = usable - weights on this GPU - activation peak - overhead
 * The rest of the GPU (visible - usable) is the safety margin. Seed 000's
 * rule "total * (1 - safety) - weights - 2 GB" is the same with
 * utilization = 1 - safety and overhead = 2 GB.
 *
 * Capacity is paged: a sequence of n tokens takes, on every layer, the blocks
 * kvp_layer_blocks() gives, and the pool keeps one null block. For layers of
 * one shape this is vLLM's num_blocks = budget // (page_bytes * layers) and
 * concurrency = (num_blocks - 1) // ceil(n / block). Under pipeline
 * parallelism every stage is a ledger of its own; the tightest decides.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"

#define CONTEXT_CAP ((int64_t)1 << 30) /* max_len when neither limit is known */

void kvp_deploy_defaults(kvp_deploy *d) {
  memset(d, 0, sizeof *d);
  d->tp = d->pp = 1;
  d->kv = (kvp_format){16, 0, 0, 0};
  d->weights = (kvp_format){16, 0, 0, 0};
  d->utilization = 0.9;
  d->block = KVP_DEFAULT_BLOCK;
  d->step_tokens = 1;
}

kvp_err kvp_deploy_check(const kvp_deploy *d, kvp_diag *diag) {
  TRY(kvp_model_check(&d->model, diag));
  int64_t kinds[KVP_NKINDS];
  kvp_model_kind_counts(&d->model, kinds);
  if (kinds[KVP_NONE] == d->model.layers)
    return kvp_fail(diag, KVP_EINVAL, "model has no layer that holds KV or state");
  TRY(kvp_check_count(d->gpu_bytes, 1, "gpu memory", diag));
  TRY(kvp_check_count(d->tp, 1, "tp", diag));
  TRY(kvp_check_count(d->pp, 1, "pp", diag));
  if (d->pp > KVP_MAX_PP)
    return kvp_fail(diag, KVP_EINVAL, "field 'pp' must be at most %d, got %lld", KVP_MAX_PP,
                    (long long)d->pp);
  TRY(kvp_format_check(&d->kv, "kv", diag));
  TRY(kvp_format_check(&d->weights, "weights", diag));
  TRY(kvp_check_count(d->weight_bytes, 0, "weight_bytes", diag));
  if (!(d->utilization > 0.0 && d->utilization <= 1.0))
    return kvp_fail(diag, KVP_EINVAL, "field 'utilization' must be in (0, 1], got %g",
                    d->utilization);
  TRY(kvp_check_count(d->activation_bytes, 0, "activation", diag));
  TRY(kvp_check_count(d->overhead_bytes, 0, "overhead", diag));
  TRY(kvp_check_count(d->block, 1, "block", diag));
  TRY(kvp_check_count(d->step_tokens, 1, "max_num_batched_tokens", diag));
  TRY(kvp_check_count(d->max_model_len, 0, "max_model_len", diag));
  return KVP_OK;
}

kvp_err kvp_deploy_weight_bytes(const kvp_deploy *d, int64_t *bytes) {
  if (d->weight_bytes > 0) {
    *bytes = d->weight_bytes;
    return KVP_OK;
  }
  return kvp_format_bytes(&d->weights, d->model.params, 0, bytes);
}

/* The tensor-parallel split must divide the heads as vLLM requires
 * (vllm/config/model.py verify_with_parallel_config, get_num_kv_heads). */
static kvp_why check_tp(const kvp_deploy *d, int64_t *need, int64_t *have) {
  const kvp_model *m = &d->model;
  if (m->heads % d->tp != 0) {
    *need = m->heads;
    *have = d->tp;
    return KVP_WHY_TP_HEADS;
  }
  for (int s = 0; s < m->nspec; s++) {
    const kvp_layer *l = &m->spec[s];
    if (l->kind != KVP_FULL && l->kind != KVP_SLIDING && l->kind != KVP_CHUNKED) continue;
    if (d->tp <= l->kv_heads ? l->kv_heads % d->tp != 0 : d->tp % l->kv_heads != 0) {
      *need = l->kv_heads;
      *have = d->tp;
      return KVP_WHY_TP_KV_HEADS;
    }
  }
  return KVP_FITS;
}

/* Fill stage s; its fit (weights, reserve, null block) goes to f. */
static kvp_err eval_stage(kvp_ledger *l, int32_t s, kvp_fit *f) {
  const kvp_deploy *d = &l->d;
  const kvp_model *m = &d->model;
  kvp_stage *st = &l->stage[s];
  memset(st, 0, sizeof *st);
  TRY(kvp_pp_stage(m->layers, d->pp, s, &st->first, &st->layers));
  for (int64_t i = st->first; i < st->first + st->layers; i++) st->count[m->layer_spec[i]]++;
  for (int k = 0; k < m->nspec; k++) {
    int64_t tb, part;
    TRY(kvp_kv_token_bits(&m->spec[k], &d->kv, d->tp, &tb));
    CHK(chk_mul(tb, st->count[k], &part));
    CHK(chk_add(st->token_bits, part, &st->token_bits));
    CHK(chk_mul(l->page_bytes[k], st->count[k], &part));
    CHK(chk_add(st->block_bytes, part, &st->block_bytes));
    CHK(chk_mul(l->state_bytes[k], st->count[k], &part));
    CHK(chk_add(st->state_bytes, part, &st->state_bytes));
  }
  /* weights of the stage's layers, split over tp; rounded up once */
  int64_t wl;
  CHK(chk_mul(l->weights_total / m->layers, st->layers, &wl));
  CHK(chk_add(wl, (l->weights_total % m->layers) * st->layers / m->layers, &wl));
  st->weights = cdiv(wl, d->tp);
  int64_t reserved;
  CHK(chk_add(st->weights, d->activation_bytes, &reserved));
  CHK(chk_add(reserved, d->overhead_bytes, &reserved));
  st->kv_budget = l->usable - reserved;
  st->blocks = (st->kv_budget > 0 && st->block_bytes > 0) ? st->kv_budget / st->block_bytes : 0;
  f->stage = s;
  if (st->weights > l->usable) {
    f->why = KVP_WHY_WEIGHTS;
    f->need = st->weights;
    f->have = l->usable;
  } else if (reserved > l->usable) {
    f->why = KVP_WHY_RESERVED;
    f->need = reserved;
    f->have = l->usable;
  } else if (st->kv_budget < st->block_bytes || (st->block_bytes == 0 && st->kv_budget <= 0)) {
    f->why = KVP_WHY_NO_BLOCK;
    f->need = st->block_bytes;
    f->have = st->kv_budget;
  } else {
    f->why = KVP_FITS;
  }
  return KVP_OK;
}

kvp_err kvp_ledger_eval(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag) {
  TRY(kvp_deploy_check(d, diag));
  /* stages are filled as they are evaluated: clear only what precedes them */
  memset(l, 0, offsetof(kvp_ledger, stage));
  l->d = *d;
  const kvp_model *m = &l->d.model;
  l->total = d->gpu_bytes;
  l->usable = (int64_t)floor((double)d->gpu_bytes * d->utilization);
  if (l->usable > l->total) l->usable = l->total;
  kvp_err e = kvp_deploy_weight_bytes(d, &l->weights_total);
  if (e != KVP_OK) return kvp_fail(diag, e, "weight bytes of %lld parameters overflow",
                                   (long long)m->params);
  l->max_len = d->max_model_len ? d->max_model_len
                                : (m->max_context ? m->max_context : CONTEXT_CAP);
  for (int k = 0; k < m->nspec; k++) {
    int64_t tb;
    TRY(kvp_kv_token_bits(&m->spec[k], &d->kv, d->tp, &tb));
    TRY(kvp_page_bytes(tb, d->block, &l->page_bytes[k]));
    TRY(kvp_kv_state_bytes(&m->spec[k], d->tp, &l->state_bytes[k]));
  }
  l->fit.why = KVP_FITS;
  if (d->pp > m->layers) {
    l->fit = (kvp_fit){.why = KVP_WHY_PP_LAYERS, .need = m->layers, .have = d->pp};
    l->nstage = 0;
    return KVP_OK;
  }
  l->fit.why = check_tp(d, &l->fit.need, &l->fit.have);
  l->nstage = (int32_t)d->pp;
  int64_t best = INT64_MAX;
  for (int32_t s = 0; s < l->nstage; s++) {
    kvp_fit f = {0};
    e = eval_stage(l, s, &f);
    if (e != KVP_OK) return kvp_fail(diag, e, "ledger of pipeline stage %d overflows", (int)s);
    if (l->fit.why == KVP_FITS && f.why != KVP_FITS) l->fit = f;
    int64_t room = l->stage[s].block_bytes ? l->stage[s].blocks : l->stage[s].kv_budget;
    if (room < best) {
      best = room;
      l->tight = s;
    }
  }
  return KVP_OK;
}

kvp_err kvp_ledger_seq_bytes(const kvp_ledger *l, int32_t s, int64_t n, int64_t *bytes) {
  if (s < 0 || s >= l->nstage || n < 0) return KVP_EINVAL;
  const kvp_model *m = &l->d.model;
  const kvp_stage *st = &l->stage[s];
  int64_t total = 0;
  for (int k = 0; k < m->nspec; k++) {
    if (st->count[k] == 0) continue;
    int64_t blocks, one, part;
    TRY(kvp_layer_blocks(&m->spec[k], n, l->d.block, l->d.step_tokens, &blocks));
    CHK(chk_mul(blocks, l->page_bytes[k], &one));
    if (n > 0) CHK(chk_add(one, l->state_bytes[k], &one));
    CHK(chk_mul(one, st->count[k], &part));
    CHK(chk_add(total, part, &total));
  }
  *bytes = total;
  return KVP_OK;
}

int64_t kvp_ledger_kv_tokens(const kvp_ledger *l) {
  if (l->fit.why != KVP_FITS || l->nstage == 0) return 0;
  const kvp_stage *st = &l->stage[l->tight];
  if (st->block_bytes == 0 || st->blocks < 1) return 0;
  int64_t t;
  if (!chk_mul(st->blocks - 1, l->d.block, &t)) return INT64_MAX;
  return t;
}

/* Requests of n tokens that fit in stage s, the null block set aside. */
static kvp_err stage_concurrency(const kvp_ledger *l, int32_t s, int64_t n, int64_t *c,
                                 int64_t *seq) {
  const kvp_stage *st = &l->stage[s];
  TRY(kvp_ledger_seq_bytes(l, s, n, seq));
  int64_t room = st->kv_budget - st->block_bytes;
  if (room <= 0 || *seq == 0) {
    *c = (room > 0) ? INT64_MAX : 0; /* a stage without KV layers limits nothing */
    return KVP_OK;
  }
  *c = room / *seq;
  return KVP_OK;
}

/* Bytes `concurrency` sequences of n tokens need in stage s, the null block
 * included; saturates at INT64_MAX (which never fits). */
static kvp_err stage_need(const kvp_ledger *l, int32_t s, int64_t n, int64_t concurrency,
                          int64_t *need) {
  int64_t seq;
  TRY(kvp_ledger_seq_bytes(l, s, n, &seq));
  if (!chk_mul(seq, concurrency, need) || !chk_add(*need, l->stage[s].block_bytes, need))
    *need = INT64_MAX;
  return KVP_OK;
}

kvp_err kvp_ledger_fit(const kvp_ledger *l, int64_t context, int64_t concurrency,
                       kvp_fit *out) {
  if (context < 1 || concurrency < 1) return KVP_EINVAL;
  *out = l->fit;
  out->context = context;
  out->concurrency = concurrency;
  if (l->fit.why != KVP_FITS) return KVP_OK;
  if (context > l->max_len) {
    out->why = KVP_WHY_CONTEXT;
    out->need = context;
    out->have = l->max_len;
    return KVP_OK;
  }
  for (int32_t s = 0; s < l->nstage; s++) {
    int64_t need;
    TRY(stage_need(l, s, context, concurrency, &need));
    if (need > l->stage[s].kv_budget) {
      out->why = KVP_WHY_KV;
      out->stage = s;
      out->need = need;
      out->have = l->stage[s].kv_budget;
      return KVP_OK;
    }
  }
  return KVP_OK;
}

kvp_err kvp_ledger_max_concurrency(const kvp_ledger *l, int64_t context, int64_t *n,
                                   kvp_fit *why) {
  if (context < 1) return KVP_EINVAL;
  TRY(kvp_ledger_fit(l, context, 1, why));
  *n = 0;
  if (why->why != KVP_FITS) return KVP_OK;
  int64_t best = INT64_MAX;
  for (int32_t s = 0; s < l->nstage; s++) {
    int64_t c, seq;
    TRY(stage_concurrency(l, s, context, &c, &seq));
    if (c < best) best = c;
  }
  *n = best;
  return KVP_OK;
}

kvp_err kvp_ledger_max_context(const kvp_ledger *l, int64_t concurrency, int64_t *n,
                               kvp_fit *why) {
  if (concurrency < 1) return KVP_EINVAL;
  TRY(kvp_ledger_fit(l, 1, concurrency, why));
  *n = 0;
  if (why->why != KVP_FITS) return KVP_OK;
  /* bytes grow with n, so bisect for the last n that fits */
  int64_t lo = 1, hi = l->max_len;
  kvp_fit f;
  TRY(kvp_ledger_fit(l, hi, concurrency, &f));
  if (f.why == KVP_FITS) {
    *n = hi;
    return KVP_OK;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    TRY(kvp_ledger_fit(l, mid, concurrency, &f));
    if (f.why == KVP_FITS) lo = mid; else hi = mid;
  }
  *n = lo;
  return KVP_OK;
}

kvp_err kvp_ledger_min_tp(const kvp_deploy *d, int64_t context, int64_t concurrency,
                          int64_t max_tp, int64_t *tp, kvp_fit *why, kvp_diag *diag) {
  if (max_tp < 1)
    return kvp_fail(diag, KVP_EINVAL, "field 'max_tp' must be an integer >= 1, got %lld",
                    (long long)max_tp);
  kvp_ledger l, *lp = &l;
  kvp_deploy t = *d;
  *tp = 0;
  for (int64_t p = 1; p <= max_tp; p *= 2) {
    t.tp = p;
    TRY(kvp_ledger_eval(&t, lp, diag));
    TRY(kvp_ledger_fit(lp, context, concurrency, why));
    if (why->why == KVP_FITS) {
      *tp = p;
      return KVP_OK;
    }
    if (p > INT64_MAX / 2) break;
  }
  return KVP_OK;
}

static double gib(int64_t b) { return (double)b / 1073741824.0; }

int kvp_fit_explain(const kvp_fit *f, char *buf, size_t n) {
  char stage[40] = "";
  if (f->stage > 0) snprintf(stage, sizeof stage, " (pipeline stage %d)", (int)f->stage);
  switch (f->why) {
    case KVP_FITS:
      return snprintf(buf, n, "%s", "");
    case KVP_WHY_TP_HEADS:
      return snprintf(buf, n, "tp %lld does not divide the %lld attention heads",
                      (long long)f->have, (long long)f->need);
    case KVP_WHY_TP_KV_HEADS:
      return snprintf(buf, n, "tp %lld and the %lld KV heads do not divide one another",
                      (long long)f->have, (long long)f->need);
    case KVP_WHY_PP_LAYERS:
      return snprintf(buf, n, "pp %lld exceeds the %lld layers", (long long)f->have,
                      (long long)f->need);
    case KVP_WHY_WEIGHTS:
      return snprintf(buf, n, "weights need %.1f GiB per GPU, %.1f GiB usable%s",
                      gib(f->need), gib(f->have), stage);
    case KVP_WHY_RESERVED:
      return snprintf(buf, n,
                      "weights, activations and overhead need %.1f GiB per GPU, %.1f GiB usable%s",
                      gib(f->need), gib(f->have), stage);
    case KVP_WHY_NO_BLOCK:
      return snprintf(buf, n, "%.3f GiB left for KV per GPU holds not one block of %.3f GiB%s",
                      gib(f->have), gib(f->need), stage);
    case KVP_WHY_CONTEXT:
      return snprintf(buf, n, "context %lld exceeds max_model_len %lld", (long long)f->need,
                      (long long)f->have);
    case KVP_WHY_KV:
      if (f->need == INT64_MAX)
        return snprintf(buf, n, "KV for %lld x %lld tokens exceeds any memory%s",
                        (long long)f->concurrency, (long long)f->context, stage);
      return snprintf(buf, n, "KV for %lld x %lld tokens needs %.2f GiB per GPU, %.2f GiB left for KV%s",
                      (long long)f->concurrency, (long long)f->context, gib(f->need),
                      gib(f->have), stage);
  }
  return snprintf(buf, n, "%s", "unknown reason");
}
