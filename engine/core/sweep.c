/*
 * sweep.c: cartesian sweeps of deployments evaluated row by row (sweep.h).
 * Pure computation: no Lua, no I/O.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"

static int64_t axis_len(int64_t n) { return n > 0 ? n : 1; }

static void sizes(const kvp_sweep_axes *ax, int64_t size[KVP_NAXES]) {
  size[KVP_AX_BASE] = ax->nbase;
  size[KVP_AX_TP] = axis_len(ax->ntp);
  size[KVP_AX_PP] = axis_len(ax->npp);
  size[KVP_AX_KV] = axis_len(ax->nkv);
  size[KVP_AX_WEIGHTS] = axis_len(ax->nweights);
  size[KVP_AX_CONTEXT] = axis_len(ax->ncontext);
  size[KVP_AX_CONCURRENCY] = axis_len(ax->nconcurrency);
}

kvp_err kvp_sweep_total(const kvp_sweep_axes *ax, int64_t *total) {
  int64_t size[KVP_NAXES], t = 1;
  if (ax->nbase < 0 || ax->ntp < 0 || ax->npp < 0 || ax->nkv < 0 || ax->nweights < 0 ||
      ax->ncontext < 0 || ax->nconcurrency < 0)
    return KVP_EINVAL;
  sizes(ax, size);
  for (int a = 0; a < KVP_NAXES; a++) CHK(chk_mul(t, size[a], &t));
  *total = t;
  return KVP_OK;
}

kvp_err kvp_sweep_shard(int64_t total, int64_t k, int64_t n, int64_t *first, int64_t *end) {
  if (total < 0 || n < 1 || k < 1 || k > n) return KVP_EINVAL;
  /* total * k / n without overflow: split total = q * n + r */
  int64_t q = total / n, r = total % n;
  *first = q * (k - 1) + r * (k - 1) / n;
  *end = q * k + r * k / n;
  return KVP_OK;
}

void kvp_sweep_free(kvp_sweep *s) {
  free(s->conc_cache);
  free(s->ctx_cache);
  free(s->conc_why);
  free(s->ctx_why);
  s->conc_cache = s->ctx_cache = NULL;
  s->conc_why = s->ctx_why = NULL;
}

kvp_err kvp_sweep_init(kvp_sweep *s, const kvp_sweep_axes *ax, int64_t first, int64_t end,
                       unsigned want, kvp_diag *d) {
  memset(s, 0, offsetof(kvp_sweep, ledger));
  s->ax = *ax;
  if (ax->nbase < 1) return kvp_fail(d, KVP_EINVAL, "a sweep needs at least one deployment");
  for (int64_t i = 0; i < ax->ntp; i++) TRY(kvp_check_count(ax->tp[i], 1, "tp", d));
  for (int64_t i = 0; i < ax->npp; i++) TRY(kvp_check_count(ax->pp[i], 1, "pp", d));
  for (int64_t i = 0; i < ax->ncontext; i++) TRY(kvp_check_count(ax->context[i], 1, "context", d));
  for (int64_t i = 0; i < ax->nconcurrency; i++)
    TRY(kvp_check_count(ax->concurrency[i], 1, "concurrency", d));
  for (int64_t i = 0; i < ax->nkv; i++) TRY(kvp_format_check(&ax->kv[i], "kv", d));
  for (int64_t i = 0; i < ax->nweights; i++) TRY(kvp_format_check(&ax->weights[i], "weights", d));
  kvp_err e = kvp_sweep_total(ax, &s->total);
  if (e != KVP_OK) return kvp_fail(d, e, "the sweep has more than 2^63 rows");
  if (first < 0 || end < first || end > s->total)
    return kvp_fail(d, KVP_EINVAL, "row range [%lld, %lld) outside the sweep's %lld rows",
                    (long long)first, (long long)end, (long long)s->total);
  sizes(ax, s->size);
  s->next = first;
  s->end = end;
  s->want = want;
  int64_t rest = first;
  for (int a = KVP_NAXES - 1; a >= 0; a--) {
    s->pos[a] = rest % s->size[a];
    rest /= s->size[a];
  }
  size_t nc = (size_t)s->size[KVP_AX_CONTEXT], nq = (size_t)s->size[KVP_AX_CONCURRENCY];
  s->conc_cache = malloc(nc * sizeof *s->conc_cache);
  s->conc_why = malloc(nc * sizeof *s->conc_why);
  s->ctx_cache = malloc(nq * sizeof *s->ctx_cache);
  s->ctx_why = malloc(nq * sizeof *s->ctx_why);
  if (!s->conc_cache || !s->conc_why || !s->ctx_cache || !s->ctx_why) {
    kvp_sweep_free(s);
    return kvp_fail(d, KVP_ENOMEM, "out of memory for the sweep's caches");
  }
  return KVP_OK;
}

/* Evaluate the ledger of the current deployment axes; forget the caches. */
static kvp_err load_ledger(kvp_sweep *s, kvp_diag *d) {
  const kvp_sweep_axes *ax = &s->ax;
  kvp_deploy dep = ax->base[s->pos[KVP_AX_BASE]];
  if (ax->ntp) dep.tp = ax->tp[s->pos[KVP_AX_TP]];
  if (ax->npp) dep.pp = ax->pp[s->pos[KVP_AX_PP]];
  if (ax->nkv) dep.kv = ax->kv[s->pos[KVP_AX_KV]];
  if (ax->nweights) {
    dep.weights = ax->weights[s->pos[KVP_AX_WEIGHTS]];
    dep.weight_bytes = 0; /* a weight format axis replaces a given checkpoint size */
  }
  TRY(kvp_ledger_eval(&dep, &s->ledger, d));
  for (int64_t i = 0; i < s->size[KVP_AX_CONTEXT]; i++) s->conc_cache[i] = -1;
  for (int64_t i = 0; i < s->size[KVP_AX_CONCURRENCY]; i++) s->ctx_cache[i] = -1;
  s->ledger_ok = 1;
  return KVP_OK;
}

int kvp_sweep_next(kvp_sweep *s, kvp_sweep_row *row, kvp_diag *d) {
  if (s->next >= s->end) return 0;
  kvp_err e;
  if (!s->ledger_ok && (e = load_ledger(s, d)) != KVP_OK) return -(int)e;
  const kvp_ledger *l = &s->ledger;
  const kvp_sweep_axes *ax = &s->ax;
  int64_t ci = s->pos[KVP_AX_CONTEXT], qi = s->pos[KVP_AX_CONCURRENCY];
  row->index = s->next;
  memcpy(row->pos, s->pos, sizeof row->pos);
  row->context = ax->ncontext ? ax->context[ci] : l->max_len;
  row->concurrency = ax->nconcurrency ? ax->concurrency[qi] : 1;
  row->ledger = l;
  if (s->want & KVP_WANT_FIT) {
    e = kvp_ledger_fit(l, row->context, row->concurrency, &row->fit);
    if (e != KVP_OK) return -(int)e;
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
  /* advance the odometer; a change above the request axes needs a new ledger */
  s->next++;
  for (int a = KVP_NAXES - 1; a >= 0; a--) {
    if (++s->pos[a] < s->size[a]) {
      if (a < KVP_AX_CONTEXT) s->ledger_ok = 0;
      break;
    }
    s->pos[a] = 0;
  }
  return 1;
}
