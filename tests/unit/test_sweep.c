/* test_sweep.c: cartesian sweeps: order, shards, caches, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

#define GiB 1073741824LL

static kvp_deploy base[2];

static int setup(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) {
    kvp_deploy_defaults(&base[i]);
    if (kvp_model_init(&base[i].model, 80, 8192, 64, 8, 128, NULL) != KVP_OK) return -1;
    base[i].model.params = base[i].model.active = 70000000000LL;
    base[i].model.max_context = 131072;
    base[i].gpu_bytes = (i == 0 ? 80 : 141) * GiB;
  }
  return 0;
}

static const int64_t tps[] = {1, 2, 4, 8};
static const int64_t ctxs[] = {8192, 32768, 131072};
static const int64_t concs[] = {1, 16};

static kvp_sweep_axes axes(void) {
  kvp_sweep_axes ax = {0};
  ax.base = base;
  ax.nbase = 2;
  ax.tp = tps;
  ax.ntp = 4;
  ax.context = ctxs;
  ax.ncontext = 3;
  ax.concurrency = concs;
  ax.nconcurrency = 2;
  return ax;
}

static void rows_run_outermost_axis_first(void **state) {
  (void)state;
  kvp_sweep_axes ax = axes();
  static kvp_sweep s;
  kvp_sweep_row r;
  int64_t total;
  assert_int_equal(kvp_sweep_total(&ax, &total), KVP_OK);
  assert_int_equal(total, 2 * 4 * 3 * 2);
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, total, KVP_WANT_FIT | KVP_WANT_MAXCONC, NULL), KVP_OK);
  int64_t n = 0;
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    assert_int_equal(r.index, n);
    assert_int_equal(r.pos[KVP_AX_BASE], n / 24);
    assert_int_equal(r.ledger->d.tp, tps[(n / 6) % 4]);
    assert_int_equal(r.context, ctxs[(n / 2) % 3]);
    assert_int_equal(r.concurrency, concs[n % 2]);
    n++;
  }
  assert_int_equal(n, total);
  kvp_sweep_free(&s);
}

/* fetch: base b made on demand; records the order it was asked in. */
static int64_t fetched[8];
static int nfetched;
static kvp_err fetch_base(void *ctx, int64_t b, kvp_deploy *out, kvp_diag *d) {
  (void)ctx;
  (void)d;
  if (nfetched < 8) fetched[nfetched] = b;
  nfetched++;
  *out = base[b];
  return b == 1 && ctx != NULL ? KVP_EINVAL : KVP_OK;
}

static void fetched_bases_come_once_each_when_their_rows_start(void **state) {
  (void)state;
  kvp_sweep_axes ax = axes();
  ax.base = &base[0]; /* base 0 only: the axis values' check */
  ax.fetch = fetch_base;
  static kvp_sweep s;
  kvp_sweep_row r;
  nfetched = 0;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 48, KVP_WANT_FIT | KVP_WANT_MAXCONC, NULL), KVP_OK);
  assert_int_equal(nfetched, 0); /* nothing made before the rows */
  int64_t n = 0;
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    assert_int_equal(nfetched, 1 + n / 24); /* base b made when its first row starts */
    assert_int_equal(r.ledger->d.gpu_bytes, base[n / 24].gpu_bytes);
    n++;
  }
  assert_int_equal(n, 48);
  assert_int_equal(nfetched, 2);
  assert_int_equal(fetched[0], 0);
  assert_int_equal(fetched[1], 1);
  kvp_sweep_free(&s);
  /* a shard starting inside base 1 makes base 1 only */
  nfetched = 0;
  assert_int_equal(kvp_sweep_init(&s, &ax, 30, 48, KVP_WANT_FIT, NULL), KVP_OK);
  while (kvp_sweep_next(&s, &r, NULL) == 1) assert_int_equal(r.pos[KVP_AX_BASE], 1);
  assert_int_equal(nfetched, 1);
  assert_int_equal(fetched[0], 1);
  kvp_sweep_free(&s);
  /* a failing fetch stops the sweep with its error */
  int flag;
  ax.fetch_ctx = &flag;
  nfetched = 0;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 48, KVP_WANT_FIT, NULL), KVP_OK);
  int got;
  n = 0;
  while ((got = kvp_sweep_next(&s, &r, NULL)) == 1) n++;
  assert_int_equal(n, 24);
  assert_int_equal(got, -KVP_EINVAL);
  kvp_sweep_free(&s);
}

static void cached_answers_equal_fresh_ledger_answers(void **state) {
  (void)state;
  kvp_sweep_axes ax = axes();
  static kvp_sweep s;
  static kvp_ledger l;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 48, KVP_WANT_FIT | KVP_WANT_MAXCONC | KVP_WANT_MAXCTX, NULL),
                   KVP_OK);
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    kvp_deploy d = base[r.pos[KVP_AX_BASE]];
    d.tp = tps[r.pos[KVP_AX_TP]];
    assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
    int64_t mc, mx;
    kvp_fit f;
    assert_int_equal(kvp_ledger_max_concurrency(&l, r.context, &mc, &f), KVP_OK);
    assert_int_equal(kvp_ledger_max_context(&l, r.concurrency, &mx, &f), KVP_OK);
    assert_int_equal(kvp_ledger_fit(&l, r.context, r.concurrency, &f), KVP_OK);
    assert_int_equal(r.max_concurrency, mc);
    assert_int_equal(r.max_context, mx);
    /* a row that fits where the engine refuses to start says so */
    kvp_start st;
    assert_int_equal(kvp_start_check(&l, &st, NULL), KVP_OK);
    assert_int_equal(r.fit.why, f.why == KVP_FITS && !st.starts ? KVP_WHY_STARTS : f.why);
  }
  kvp_sweep_free(&s);
}

/* Huge N and K: r * k passes 2^63 in the naive formula (UBSan caught it);
 * the shards still meet end to end and the last one ends at the total. */
static void shards_of_huge_counts_do_not_overflow(void **state) {
  (void)state;
  const int64_t totals[] = {INT64_MAX, INT64_MAX - 1, (int64_t)1 << 62, 99999999999};
  const int64_t ns[] = {INT64_MAX, INT64_MAX - 1, ((int64_t)1 << 62) + 12345, 3000000019};
  for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      int64_t n = ns[i], prev_end = 0, first, end;
      const int64_t ks[] = {1, 2, n / 3, n / 2, n - 1, n};
      for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
        assert_int_equal(kvp_sweep_shard(totals[t], ks[j], n, &first, &end), KVP_OK);
        assert_true(first >= 0 && first <= end && end <= totals[t]);
        if (j == 0) assert_int_equal(first, 0);
        if (j > 0 && ks[j] == ks[j - 1] + 1) assert_int_equal(first, prev_end);
        prev_end = end;
      }
      assert_int_equal(end, totals[t]);
    }
  /* against the exact 128-bit quotient */
  int64_t first, end;
  assert_int_equal(kvp_sweep_shard(INT64_MAX, INT64_MAX - 1, INT64_MAX, &first, &end), KVP_OK);
  assert_int_equal(first, INT64_MAX - 2);
  assert_int_equal(end, INT64_MAX - 1);
  assert_int_equal(kvp_sweep_shard(10, 7, INT64_MAX, &first, &end), KVP_OK);
  assert_int_equal(first, 0);
  assert_int_equal(end, 0);
}

static void shards_cover_every_row_once_in_order(void **state) {
  (void)state;
  int64_t first, end, prev = 0;
  for (int64_t k = 1; k <= 7; k++) {
    assert_int_equal(kvp_sweep_shard(48, k, 7, &first, &end), KVP_OK);
    assert_int_equal(first, prev);
    prev = end;
  }
  assert_int_equal(prev, 48);
  assert_int_equal(kvp_sweep_shard(INT64_MAX, 3, 3, &first, &end), KVP_OK);
  assert_int_equal(end, INT64_MAX); /* no overflow in total * k */
  assert_int_equal(kvp_sweep_shard(48, 0, 7, &first, &end), KVP_EINVAL);
  assert_int_equal(kvp_sweep_shard(48, 8, 7, &first, &end), KVP_EINVAL);
  /* a shard starting mid-sweep sees the same rows as the whole sweep */
  kvp_sweep_axes ax = axes();
  static kvp_sweep s;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_shard(48, 2, 3, &first, &end), KVP_OK);
  assert_int_equal(kvp_sweep_init(&s, &ax, first, end, KVP_WANT_FIT, NULL), KVP_OK);
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 16);
  assert_int_equal(r.ledger->d.tp, tps[(16 / 6) % 4]);
  assert_int_equal(r.context, ctxs[(16 / 2) % 3]);
  kvp_sweep_free(&s);
}

/* Skipping the rest of a row's context or deployment lands on the row after
 * them, with that row's own ledger and positions; a shard's end still holds. */
static void skips_land_on_the_next_context_or_deployment(void **state) {
  (void)state;
  kvp_sweep_axes ax = axes(); /* 6 rows a deployment (tp), 2 a context */
  static kvp_sweep s;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 7, 20, KVP_WANT_FIT | KVP_WANT_MAXCONC, NULL), KVP_OK);
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 7);
  assert_int_equal(kvp_sweep_skip(&s, &r, 0), 0); /* the last of its context */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 8);
  assert_int_equal(kvp_sweep_skip(&s, &r, 0), 1); /* row 9 */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 10);
  assert_int_equal(r.context, ctxs[2]);
  assert_int_equal(r.concurrency, concs[0]);
  assert_int_equal(kvp_sweep_skip(&s, &r, 1), 1); /* row 11 */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 12);
  assert_int_equal(r.ledger->d.tp, tps[2]);
  assert_int_equal(kvp_sweep_skip(&s, &r, 1), 5); /* rows 13-17 */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.index, 18);
  assert_int_equal(r.ledger->d.tp, tps[3]);
  assert_int_equal(r.context, ctxs[0]);
  assert_int_equal(kvp_sweep_skip(&s, &r, 1), 1); /* row 19: the shard ends at 20 */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 0);
  kvp_sweep_free(&s);
}

static void empty_axes_keep_each_deployments_own_value(void **state) {
  (void)state;
  kvp_sweep_axes ax = {0};
  ax.base = base;
  ax.nbase = 1;
  static kvp_sweep s;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 1, KVP_WANT_FIT, NULL), KVP_OK);
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
  assert_int_equal(r.context, 131072);
  assert_int_equal(r.concurrency, 1);
  assert_int_equal(r.ledger->d.tp, 1);
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 0);
  kvp_sweep_free(&s);
}

static void bad_axis_values_name_the_axis(void **state) {
  (void)state;
  kvp_sweep_axes ax = axes();
  static kvp_sweep s;
  kvp_diag d = {{0}};
  const int64_t bad[] = {8192, 0};
  ax.context = bad;
  ax.ncontext = 2;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 1, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'context' must be an integer >= 1, got 0");
  ax = axes();
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 49, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "row range [0, 49) outside the sweep's 48 rows");
  ax.nbase = 0;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 0, KVP_WANT_FIT, &d), KVP_EINVAL);
}

/* Deployment axes set numbers in C: each row's ledger equals the ledger of
 * the base with those numbers set by hand; BASE digits pick the base. */
static void deployment_axes_set_fields_in_row_order(void **state) {
  (void)state;
  static const int64_t mml[] = {4096, 32768};
  static const double util[] = {0.9, 0.95};
  static const int64_t over[] = {0, 2 * GiB};
  static const int64_t gpu[] = {80 * GiB, 141 * GiB};
  kvp_sweep_axis axis[] = {
    {.field = KVP_FIELD_BASE, .n = 2},
    {.field = KVP_FIELD_GPU_MEMORY, .n = 2, .i = gpu},
    {.field = KVP_FIELD_NONE, .n = 3},
    {.field = KVP_FIELD_MAX_MODEL_LEN, .n = 2, .i = mml},
    {.field = KVP_FIELD_OVERHEAD, .n = 2, .i = over},
    {.field = KVP_FIELD_UTILIZATION, .n = 2, .f = util},
  };
  kvp_sweep_axes ax = axes();
  ax.axis = axis;
  ax.naxis = 6;
  int64_t total;
  assert_int_equal(kvp_sweep_total(&ax, &total), KVP_OK);
  assert_int_equal(total, 2 * 2 * 3 * 2 * 2 * 2 * 4 * 3 * 2);
  static kvp_sweep s;
  static kvp_ledger l;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, total, KVP_WANT_FIT | KVP_WANT_MAXCONC, NULL), KVP_OK);
  int64_t n = 0;
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    int64_t q = n / 24; /* rows per deployment-axes position: tp x context x concurrency */
    assert_int_equal(r.apos[5], q % 2);
    assert_int_equal(r.apos[4], q / 2 % 2);
    assert_int_equal(r.apos[3], q / 4 % 2);
    assert_int_equal(r.apos[2], q / 8 % 3);
    assert_int_equal(r.apos[1], q / 24 % 2);
    assert_int_equal(r.apos[0], q / 48);
    assert_int_equal(r.pos[KVP_AX_BASE], q / 48);
    kvp_deploy d = base[q / 48];
    d.gpu_bytes = gpu[q / 24 % 2];
    d.max_model_len = mml[q / 4 % 2];
    d.overhead_bytes = over[q / 2 % 2];
    d.utilization = util[q % 2];
    d.tp = tps[(n / 6) % 4];
    assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
    assert_memory_equal(&r.ledger->d, &l.d, sizeof l.d);
    assert_int_equal(r.ledger->usable, l.usable);
    int64_t mc;
    kvp_fit f;
    assert_int_equal(kvp_ledger_max_concurrency(&l, r.context, &mc, &f), KVP_OK);
    assert_int_equal(r.max_concurrency, mc);
    n++;
  }
  assert_int_equal(n, total);
  kvp_sweep_free(&s);
  /* BASE digits must multiply to the deployments given */
  axis[2].field = KVP_FIELD_BASE;
  assert_int_equal(kvp_sweep_total(&ax, &total), KVP_EINVAL);
}

/* An optim axis writes each combination over the base: every row's ledger
 * is the ledger of the base with the combination applied by hand, and a
 * combination that leaves a field alone leaves the base's value even after
 * one that set it (here: prefix, then none). The optim axis sits between a
 * numeric axis and tp, so it moves under both. */
static void optim_axis_writes_each_combination_over_its_base(void **state) {
  (void)state;
  static kvp_combo combo[3];
  static kvp_deploy with;
  memset(combo, 0, sizeof combo);
  with = base[0];
  with.kv = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  with.alloc = KVP_ALLOC_CONTIGUOUS;
  with.prefix = 1024;
  assert_int_equal(kvp_combo_take(&combo[0], KVP_COMBO_KV | KVP_COMBO_PREFIX, &with, NULL), KVP_OK);
  assert_int_equal(kvp_combo_take(&combo[1], 0, &with, NULL), KVP_OK); /* none */
  assert_int_equal(kvp_combo_take(&combo[2], KVP_COMBO_ALLOC | KVP_COMBO_KV, &with, NULL), KVP_OK);
  static const int64_t mml[] = {8192, 131072};
  kvp_sweep_axis axis[] = {
    {.field = KVP_FIELD_BASE, .n = 2},
    {.field = KVP_FIELD_MAX_MODEL_LEN, .n = 2, .i = mml},
    {.field = KVP_FIELD_OPTIM, .n = 3, .combo = combo},
  };
  kvp_sweep_axes ax = axes();
  ax.axis = axis;
  ax.naxis = 3;
  int64_t total;
  assert_int_equal(kvp_sweep_total(&ax, &total), KVP_OK);
  assert_int_equal(total, 2 * 2 * 3 * 4 * 3 * 2);
  static kvp_sweep s;
  static kvp_ledger l;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, total, KVP_WANT_FIT | KVP_WANT_MAXCONC | KVP_WANT_MAXCTX,
                                  NULL), KVP_OK);
  int64_t n = 0;
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    int64_t q = n / 24;
    kvp_deploy d = base[q / 6];
    d.max_model_len = mml[q / 3 % 2];
    if (q % 3 == 0) d.kv = with.kv, d.prefix = 1024;
    if (q % 3 == 2) d.kv = with.kv, d.alloc = KVP_ALLOC_CONTIGUOUS;
    d.tp = tps[(n / 6) % 4];
    assert_int_equal(r.apos[2], q % 3);
    assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
    assert_memory_equal(&r.ledger->d, &l.d, sizeof l.d);
    int64_t mc, mx;
    kvp_fit f;
    assert_int_equal(kvp_ledger_max_concurrency(&l, r.context, &mc, &f), KVP_OK);
    assert_int_equal(r.max_concurrency, mc);
    assert_int_equal(kvp_ledger_max_context(&l, r.concurrency, &mx, &f), KVP_OK);
    assert_int_equal(r.max_context, mx);
    n++;
  }
  assert_int_equal(n, total);
  kvp_sweep_free(&s);
  /* a combination the first base refuses fails before any row, naming it */
  with.prefix = 200000;
  assert_int_equal(kvp_combo_take(&combo[0], KVP_COMBO_PREFIX, &with, NULL), KVP_OK);
  kvp_diag d = {{0}};
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, total, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "prefix"));
  /* an optim axis without its combinations */
  axis[2].combo = NULL;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, total, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "sweep axis 'optim' has no values");
}

static void bad_deployment_axis_values_fail_before_any_row(void **state) {
  (void)state;
  static const double util[] = {0.9, 1.5};
  static const int64_t blocks[] = {16, 0};
  kvp_sweep_axis axis[] = {{.field = KVP_FIELD_UTILIZATION, .n = 2, .f = util}};
  kvp_sweep_axes ax = axes();
  ax.axis = axis;
  ax.naxis = 1;
  static kvp_sweep s;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 1, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'utilization' must be in (0, 1], got 1.5");
  axis[0] = (kvp_sweep_axis){.field = KVP_FIELD_BLOCK, .n = 2, .i = blocks};
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 1, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'block' must be an integer >= 1, got 0");
  axis[0] = (kvp_sweep_axis){.field = KVP_FIELD_BLOCK, .n = 2, .i = NULL};
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 1, KVP_WANT_FIT, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "sweep axis 'block' has no values");
}

/* A label axis (KVP_FIELD_NONE) innermost of the deployment axes changes no
 * field: its steps keep the ledger; a numeric axis evaluates it again. */
static void label_axes_keep_the_ledger(void **state) {
  (void)state;
  static const int64_t over[] = {0, GiB};
  kvp_sweep_axis axis[] = {
    {.field = KVP_FIELD_OVERHEAD, .n = 2, .i = over},
    {.field = KVP_FIELD_NONE, .n = 3},
  };
  kvp_sweep_axes ax = {0};
  ax.base = base;
  ax.nbase = 1;
  ax.axis = axis;
  ax.naxis = 2;
  static kvp_sweep s;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 6, KVP_WANT_FIT, NULL), KVP_OK);
  int64_t ids[6];
  uint64_t gens[6];
  for (int i = 0; i < 6; i++) {
    assert_int_equal(kvp_sweep_next(&s, &r, NULL), 1);
    ids[i] = r.ledger_id;
    gens[i] = r.gen;
    assert_int_equal(r.apos[1], i % 3);
    assert_int_equal(r.ledger->d.overhead_bytes, over[i / 3]);
  }
  assert_int_equal(ids[0], ids[2]);       /* label steps: one evaluation */
  assert_int_not_equal(ids[2], ids[3]);   /* overhead step: a new one */
  assert_int_not_equal(gens[0], gens[1]); /* but every step is a new position */
  assert_int_equal(kvp_sweep_next(&s, &r, NULL), 0);
  kvp_sweep_free(&s);
}

/* A base whose activation and overhead were predicted: the sweep predicts
 * them again for each GPU memory (A100 or not) and tp, as one deployment
 * with those numbers would have them. */
static void predicted_reserves_follow_the_axes(void **state) {
  (void)state;
  static kvp_deploy b;
  b = base[0];
  b.engine.activation = 1;
  b.engine.overhead = KVP_NT_VLLM;
  b.engine.nccl_counted = 1;
  b.engine.seqs_cap = 1;
  b.engine.v1 = 1;
  b.engine.big_seqs = 1024;
  b.engine.shape = (kvp_shape){.hidden = 8192, .heads = 64, .kv_heads = 8, .head_dim = 128,
                                .intermediate = 28672, .vocab = 128256};
  b.engine.profile.act_bytes = 2;
  const kvp_non_torch nt = {.base = {0, 0.19 * GiB, 0.5 * GiB},
                            .context = {0.25 * GiB, 0.4 * GiB, 0.6 * GiB},
                            .nccl_connection = 9633792, .nccl_channels = {2, 2, 64},
                            .custom_ar = 16777216};
  static const int64_t mem[] = {80 * GiB, 80 * GiB, 40 * GiB};
  static const int32_t a100[] = {0, 1, 0};
  static kvp_gpu_facts facts[3];
  /* the first GPU's copies reach each other peer to peer: at tp 2 NCCL's
   * and the custom all-reduce's buffers count there alone */
  for (int i = 0; i < 3; i++) facts[i] = (kvp_gpu_facts){.a100 = a100[i], .p2p = i == 0};
  static const int64_t tp2[] = {1, 2};
  kvp_sweep_axis gpu = {.field = KVP_FIELD_GPU_MEMORY, .n = 3, .i = mem, .gpu = facts};
  kvp_sweep_axes ax = {0};
  ax.base = &b;
  ax.nbase = 1;
  ax.axis = &gpu;
  ax.naxis = 1;
  ax.tp = tp2;
  ax.ntp = 2;
  ax.non_torch = &nt;
  static kvp_sweep s;
  kvp_sweep_row r;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 6, KVP_WANT_MAXCONC, NULL), KVP_OK);
  int64_t n = 0, seen[6], over[6];
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    kvp_deploy want = b;
    want.gpu_bytes = mem[n / 2];
    want.engine.gpu_a100 = a100[n / 2];
    want.engine.gpu_p2p = n / 2 == 0;
    want.tp = tp2[n % 2];
    assert_int_equal(kvp_predict_deploy(&want, &nt, NULL, NULL), KVP_OK);
    assert_int_equal(r.ledger->d.activation_bytes, want.activation_bytes);
    assert_int_equal(r.ledger->d.overhead_bytes, want.overhead_bytes);
    assert_int_equal(r.ledger->d.vllm.max_num_seqs, want.vllm.max_num_seqs);
    seen[n] = want.activation_bytes;
    over[n] = want.overhead_bytes;
    n++;
  }
  assert_int_equal(n, 6);
  assert_true(over[1] > over[0]);
  assert_int_equal(over[3], over[2]);
  kvp_sweep_free(&s);
  /* the H100-sized GPU takes the big defaults, the A100 of the same memory
   * and the small GPU do not (the sampler, over the whole vocabulary, sets
   * the peak at both tp) */
  assert_true(seen[0] != seen[2]);
  assert_int_equal(seen[2], seen[4]);
  assert_int_equal(seen[1], seen[0]);
  /* without the constants the first deployment fails, naming them */
  ax.non_torch = NULL;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 6, 0, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non-torch"));
  kvp_sweep_free(&s);
  /* a GPU axis of facts alone (gpu_memory given): the memory stays the
   * base's, the A100 of the two takes the small defaults */
  ax.non_torch = &nt;
  kvp_sweep_axis facts_only = {.field = KVP_FIELD_GPU, .n = 2, .gpu = facts};
  ax.axis = &facts_only;
  ax.ntp = 0;
  b.gpu_bytes = 80 * GiB;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 2, KVP_WANT_MAXCONC, NULL), KVP_OK);
  n = 0;
  while (kvp_sweep_next(&s, &r, NULL) == 1) {
    kvp_deploy want = b;
    want.engine.gpu_a100 = a100[n];
    want.engine.gpu_p2p = n == 0;
    assert_int_equal(kvp_predict_deploy(&want, &nt, NULL, NULL), KVP_OK);
    assert_int_equal(r.ledger->d.gpu_bytes, 80 * GiB);
    assert_int_equal(r.ledger->d.activation_bytes, want.activation_bytes);
    seen[n] = want.activation_bytes;
    n++;
  }
  assert_int_equal(n, 2);
  assert_true(seen[0] != seen[1]);
  kvp_sweep_free(&s);
  /* such an axis needs its facts */
  facts_only.gpu = NULL;
  assert_int_equal(kvp_sweep_init(&s, &ax, 0, 2, 0, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "gpu"));
  kvp_sweep_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(rows_run_outermost_axis_first),
    cmocka_unit_test(skips_land_on_the_next_context_or_deployment),
    cmocka_unit_test(cached_answers_equal_fresh_ledger_answers),
    cmocka_unit_test(shards_cover_every_row_once_in_order),
    cmocka_unit_test(shards_of_huge_counts_do_not_overflow),
    cmocka_unit_test(empty_axes_keep_each_deployments_own_value),
    cmocka_unit_test(bad_axis_values_name_the_axis),
    cmocka_unit_test(deployment_axes_set_fields_in_row_order),
    cmocka_unit_test(optim_axis_writes_each_combination_over_its_base),
    cmocka_unit_test(bad_deployment_axis_values_fail_before_any_row),
    cmocka_unit_test(label_axes_keep_the_ledger),
    cmocka_unit_test(fetched_bases_come_once_each_when_their_rows_start),
    cmocka_unit_test(predicted_reserves_follow_the_axes),
  };
  return cmocka_run_group_tests_name("sweep", tests, setup, NULL);
}
