/*
 * sweep.h: cartesian sweeps of deployments evaluated row by row.
 * Pure computation: no Lua, no I/O. Included by kvplan.h.
 *
 * A sweep is the product of axes, outermost first:
 *   base deployment x tp x pp x kv format x weight format x context x concurrency.
 * Rows are numbered 0 .. total - 1 in that order, so any contiguous range of
 * row numbers is a deterministic slice (a shard). The ledger is evaluated once
 * per change of the deployment axes; the answers that depend on one request
 * axis only (max concurrency at a context, max context at a concurrency) are
 * cached per ledger, so a row costs one fit check and the formatting.
 */
#ifndef KVP_SWEEP_H
#define KVP_SWEEP_H

#include <stdint.h>

enum {
  KVP_AX_BASE, KVP_AX_TP, KVP_AX_PP, KVP_AX_KV, KVP_AX_WEIGHTS, KVP_AX_CONTEXT,
  KVP_AX_CONCURRENCY, KVP_NAXES
};

/* Axis values. An axis with n == 0 keeps each base deployment's own value
 * (counts as one position); context and concurrency default to the model's
 * max context and 1. */
typedef struct kvp_sweep_axes {
  const kvp_deploy *base; int64_t nbase;
  const int64_t *tp; int64_t ntp;
  const int64_t *pp; int64_t npp;
  const kvp_format *kv; int64_t nkv;
  const kvp_format *weights; int64_t nweights;
  const int64_t *context; int64_t ncontext;
  const int64_t *concurrency; int64_t nconcurrency;
} kvp_sweep_axes;

/* What a row needs computed (bit mask). */
#define KVP_WANT_FIT      1u  /* fits at (context, concurrency) and why not */
#define KVP_WANT_MAXCONC  2u  /* max concurrency at context */
#define KVP_WANT_MAXCTX   4u  /* max context at concurrency */

typedef struct kvp_sweep_row {
  int64_t index;                 /* row number in the whole sweep */
  int64_t pos[KVP_NAXES];        /* position on each axis */
  int64_t context, concurrency;
  const kvp_ledger *ledger;      /* valid until the next kvp_sweep_next */
  kvp_fit fit;
  int64_t max_concurrency, max_context;
  kvp_fit conc_why, ctx_why;
} kvp_sweep_row;

typedef struct kvp_sweep {
  kvp_sweep_axes ax;
  int64_t size[KVP_NAXES];
  int64_t total, next, end;
  int64_t pos[KVP_NAXES];
  int ledger_ok;
  unsigned want;
  int64_t *conc_cache, *ctx_cache;  /* per context / concurrency position; -1 unknown */
  kvp_fit *conc_why, *ctx_why;
  kvp_ledger ledger;
} kvp_sweep;

/* Rows in the product of the axes (KVP_EOVERFLOW past 2^63). */
kvp_err kvp_sweep_total(const kvp_sweep_axes *ax, int64_t *total);
/* Start a sweep over rows [first, end) of the product (end <= total).
 * Allocates the answer caches: release with kvp_sweep_free. */
kvp_err kvp_sweep_init(kvp_sweep *s, const kvp_sweep_axes *ax, int64_t first, int64_t end,
                       unsigned want, kvp_diag *d);
/* Fill the next row; returns 0 when the range is done, 1 for a row, or -err. */
int kvp_sweep_next(kvp_sweep *s, kvp_sweep_row *row, kvp_diag *d);
void kvp_sweep_free(kvp_sweep *s);
/* Row k of N equal contiguous shards of total rows: [first, end). */
kvp_err kvp_sweep_shard(int64_t total, int64_t k, int64_t n, int64_t *first, int64_t *end);

#endif
