/*
 * sweep.h: cartesian sweeps of deployments evaluated row by row.
 * Pure computation: no Lua, no I/O. Included by kvplan.h.
 *
 * A sweep is the product of axes, outermost first:
 *   deployment axes (axis[0 .. naxis)) x tp x pp x kv format x weight format
 *   x context x concurrency.
 * A deployment axis either picks a digit of the base deployment's index
 * (KVP_FIELD_BASE: what the caller resolved itself, e.g. the model and the
 * optimization combination), sets one number or format of the deployment
 * (gpu memory, utilization, max_model_len, ...), writes an optimization
 * combination resolved once (KVP_FIELD_OPTIM: the fields a kvp_combo sets),
 * or only labels the rows (KVP_FIELD_NONE). The base deployments are the product of the BASE axes in
 * their order (the last one varies fastest); without a BASE axis they form
 * an implicit outermost axis. Rows are numbered 0 .. total - 1 in that order,
 * so any contiguous range of row numbers is a deterministic slice (a shard).
 *
 * A deployment whose activation peak, non-torch memory or max_num_seqs were
 * predicted (its engine rule, kvplan.h) has them predicted again in C
 * whenever the axes change their inputs (kvp_predict_deploy): such axes stay
 * numbers looped here, not deployments the caller builds.
 *
 * The ledger is evaluated once per change of the deployment axes, in place:
 * a change of numbers only rewrites the fields on the sweep's own copy of the
 * deployment and evaluates again (no allocation; the base is copied only
 * when its index or an optim axis changes: a combination may set what the
 * next one leaves to the base, and changes the allocation, which the
 * numbers-only evaluation takes as checked). The answers that depend on one request axis only
 * (max concurrency at a context, max context at a concurrency) are cached
 * per ledger, so a row costs one fit check and the formatting.
 */
#ifndef KVP_SWEEP_H
#define KVP_SWEEP_H

#include <stdint.h>

enum {
  KVP_AX_BASE, KVP_AX_TP, KVP_AX_PP, KVP_AX_KV, KVP_AX_WEIGHTS, KVP_AX_CONTEXT,
  KVP_AX_CONCURRENCY, KVP_NAXES
};

/* What a deployment axis sets. Integer fields read `i`, utilization `f`,
 * the formats `fmt`. A weights axis also drops a given weight_bytes (the
 * format replaces the checkpoint's size). */
typedef enum kvp_field {
  KVP_FIELD_BASE = 0,      /* a digit of the base deployment index */
  KVP_FIELD_NONE,          /* changes nothing (labels of the caller's own) */
  KVP_FIELD_GPU_MEMORY,    /* gpu_bytes */
  KVP_FIELD_TP, KVP_FIELD_PP,
  KVP_FIELD_KV, KVP_FIELD_WEIGHTS,
  KVP_FIELD_WEIGHT_BYTES,
  KVP_FIELD_UTILIZATION,
  KVP_FIELD_ACTIVATION,    /* activation_bytes */
  KVP_FIELD_OVERHEAD,      /* overhead_bytes */
  KVP_FIELD_BLOCK,
  KVP_FIELD_MAX_NUM_BATCHED_TOKENS, /* max_num_batched_tokens */
  KVP_FIELD_MAX_MODEL_LEN,
  KVP_FIELD_MAX_KV_TOKENS,
  KVP_FIELD_PREFIX,        /* prefix */
  KVP_FIELD_SAMPLES,
  KVP_FIELD_PROMPT,        /* prompt */
  KVP_FIELD_OUTPUT,        /* output */
  KVP_FIELD_MAX_NUM_SEQS,  /* vllm.max_num_seqs */
  KVP_FIELD_OPTIM,         /* an optimization combination resolved once (kvp_combo,
                            * optim.h): its fields written over the base's */
  KVP_FIELD_GPU,           /* a GPU's facts alone (`gpu`), its memory given otherwise */
  KVP_NFIELDS
} kvp_field;


typedef struct kvp_sweep_axis {
  kvp_field field;
  int64_t n;                /* values, >= 1 */
  const int64_t *i;         /* integer fields */
  const double *f;          /* utilization */
  const kvp_format *fmt;    /* kv, weights */
  const kvp_gpu_facts *gpu; /* gpu memory (optional) and gpu: each GPU's facts, set on
                             * the deployment's engine rule (kvp_engine_rule_gpu) */
  const struct kvp_combo *combo; /* optim */
} kvp_sweep_axis;

#define KVP_SWEEP_MAX_AXES 32

/* Axis values. tp .. concurrency with n == 0 keep each deployment's own value
 * (counts as one position); context and concurrency default to the
 * deployment's max_model_len and 1. */
typedef struct kvp_sweep_axes {
  const kvp_deploy *base; int64_t nbase;
  /* Optional: the base deployments made when their rows start. With fetch
   * set, base holds base 0 only (the axis values are checked against it)
   * and fetch(fetch_ctx, b, out, d) writes base b into out once, when the
   * rows reach it: nothing of the other bases is held. */
  kvp_err (*fetch)(void *fetch_ctx, int64_t b, kvp_deploy *out, kvp_diag *d);
  void *fetch_ctx;
  const kvp_sweep_axis *axis; int32_t naxis;  /* deployment axes, outermost first */
  const int64_t *tp; int64_t ntp;
  const int64_t *pp; int64_t npp;
  const kvp_format *kv; int64_t nkv;
  const kvp_format *weights; int64_t nweights;
  const int64_t *context; int64_t ncontext;
  const int64_t *concurrency; int64_t nconcurrency;
  /* The non-torch memory rule's constants, for the deployments whose
   * engine rule predicts their overhead (NULL: none does). */
  const kvp_non_torch *non_torch;
} kvp_sweep_axes;

/* What a row needs computed (bit mask). */
#define KVP_WANT_FIT      1u  /* fits at (context, concurrency) and why not */
#define KVP_WANT_MAXCONC  2u  /* max concurrency at context */
#define KVP_WANT_MAXCTX   4u  /* max context at concurrency */
#define KVP_WANT_FIT_NEED 8u  /* with KVP_WANT_FIT: the stage, need and have of a row
                               * that fails on its KV (else why = KVP_WHY_KV, stage
                               * -1, need and have 0: evaluated only when asked) */
#define KVP_WANT_START   16u  /* the engine's startup answer (row.start) */

/* The engine's refusal to start is an answer of the deployment: with
 * KVP_WANT_START or KVP_WANT_FIT, kvp_start_check runs once per ledger, and
 * a row's fit is the verdict (kvp_verdict_fold, starts.h): one that fits
 * while the engine of its budget rule refuses to start says why =
 * KVP_WHY_STARTS, as l:fit and every other reader of a fit. */

typedef struct kvp_sweep_row {
  int64_t index;                 /* row number in the whole sweep */
  int64_t pos[KVP_NAXES];        /* base index and position on tp .. concurrency */
  const int64_t *apos;           /* position on each deployment axis (ax.axis order) */
  int64_t context, concurrency;
  const kvp_ledger *ledger;      /* valid until the next kvp_sweep_next */
  int64_t ledger_id;             /* changes whenever the ledger is evaluated anew */
  uint64_t gen;                  /* changes whenever a deployment axis moves */
  kvp_fit fit;
  int64_t max_concurrency, max_context;
  kvp_fit conc_why, ctx_why;
  const kvp_start *start;        /* the engine's startup answer (valid until the next
                                  * kvp_sweep_next), NULL when not evaluated */
} kvp_sweep_row;

/* Internal state; read only through the rows. */
typedef struct kvp_sweep {
  kvp_sweep_axes ax;
  int32_t nax;                               /* internal axes: deployment axes, tp .. weights */
  int32_t user0;                             /* index of ax.axis[0] among them */
  kvp_sweep_axis axis[KVP_SWEEP_MAX_AXES + 5];
  int64_t radix[KVP_SWEEP_MAX_AXES + 5];     /* BASE axes: weight of the digit */
  int64_t pos[KVP_SWEEP_MAX_AXES + 7];       /* internal axes, context, concurrency */
  int32_t quiet[KVP_SWEEP_MAX_AXES + 5];     /* a step here changes no field */
  int32_t last_optim;                        /* innermost optim axis, -1 none */
  int32_t reload;                            /* an optim axis may have moved */
  int64_t total, next, end;
  int64_t cur_base;                          /* base copied into dep, -1 none */
  uint64_t gen;                              /* moves of the deployment axes so far */
  int ledger_ok;
  int64_t ci, qi, nc, nq;                    /* context and concurrency: position, size */
  uint64_t row_gen;                          /* rowpos and apos are of this gen */
  int64_t rowpos[KVP_NAXES];                 /* a row's pos but context and concurrency */
  int64_t apos[KVP_SWEEP_MAX_AXES];          /* a row's positions on the deployment axes */
  int64_t loads;                    /* ledgers evaluated so far */
  unsigned want;
  int64_t *conc_cache, *ctx_cache;  /* per context / concurrency position; -1 unknown */
  int64_t *fit_cache;               /* per context: kvp_ledger_fit_limit; -1 unknown */
  kvp_fit *conc_why, *ctx_why;
  kvp_start start;                  /* the current ledger's startup answer */
  int start_ok;                     /* start is of the current ledger */
  kvp_deploy dep;                   /* the deployment of the current row */
  kvp_ledger ledger;
} kvp_sweep;

/* Rows in the product of the axes (KVP_EOVERFLOW past 2^63; KVP_EINVAL for a
 * negative count, more than KVP_SWEEP_MAX_AXES deployment axes or BASE axes
 * whose product is not nbase). */
kvp_err kvp_sweep_total(const kvp_sweep_axes *ax, int64_t *total);
/* Start a sweep over rows [first, end) of the product (end <= total).
 * Checks every axis value against the first base deployment. Allocates the
 * answer caches: release with kvp_sweep_free. */
kvp_err kvp_sweep_init(kvp_sweep *s, const kvp_sweep_axes *ax, int64_t first, int64_t end,
                       unsigned want, kvp_diag *d);
/* Fill the next row; returns 0 when the range is done, 1 for a row, or -err. */
int kvp_sweep_next(kvp_sweep *s, kvp_sweep_row *row, kvp_diag *d);
/* Skip the rows that follow `row` (the row kvp_sweep_next just returned) in
 * its context (whole = 0: the rest of its concurrency values) or in its
 * deployment (whole = 1: every context and concurrency left), without
 * evaluating them: a filter that rejects a row for a reason of its context
 * or deployment rejects them all. Returns the rows skipped. */
int64_t kvp_sweep_skip(kvp_sweep *s, const kvp_sweep_row *row, int whole);
void kvp_sweep_free(kvp_sweep *s);
/* Row k of N equal contiguous shards of total rows: [first, end). */
kvp_err kvp_sweep_shard(int64_t total, int64_t k, int64_t n, int64_t *first, int64_t *end);

#endif
