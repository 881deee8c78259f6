/* test_ledger.c: the per-GPU ledger and its capacity answers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

#define GiB 1073741824LL

/* seed 000's 70B-class model on one 80 GiB card, 5 % safety, 2 GiB overhead */
static void seed_deploy(kvp_deploy *d, int64_t weight_bytes) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  d->model.params = d->model.active = 70000000000LL;
  d->gpu_bytes = 80 * GiB;
  d->utilization = 0.95;
  d->overhead_bytes = 2 * GiB;
  d->weight_bytes = weight_bytes;
}

static void seed_inputs_leave_4_gib_and_one_8k_request(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 70 * GiB);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.usable, 81604378624LL); /* 76 GiB */
  assert_int_equal(l.stage[0].kv_budget, 4 * GiB);
  assert_int_equal(l.stage[0].block_bytes, 16 * 327680);
  assert_int_equal(l.stage[0].blocks, 819);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 818 * 16);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 1); /* 818 usable blocks / 512 a request */
}

static void true_4bit_weights_fit_16_requests_of_8k(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.weights = (kvp_format){4, 128, 16, 4};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.weights_total, 36367187500LL);
  assert_int_equal(l.stage[0].kv_budget, 81604378624LL - 36367187500LL - 2 * GiB);
  assert_int_equal(l.stage[0].blocks, 8218);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 16); /* 8217 / 512 */
  assert_int_equal(kvp_ledger_max_context(&l, 1, &n, &f), KVP_OK);
  assert_int_equal(n, 8217 * 16); /* the null block set aside */
  assert_int_equal(kvp_ledger_fit(&l, 8192, 17, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_KV);
  assert_int_equal(f.need, (17 * 512 + 1) * 16 * 327680LL);
}

static void weights_too_big_say_why_never_a_negative_count(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0); /* bf16: 140e9 bytes */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_WEIGHTS);
  char buf[160];
  kvp_fit_explain(&l.fit, buf, sizeof buf);
  assert_string_equal(buf, "weights need 130.4 GiB per GPU, 76.0 GiB usable");
  int64_t n = -7;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 0);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 0);
  assert_int_equal(kvp_ledger_max_context(&l, 1, &n, &f), KVP_OK);
  assert_int_equal(n, 0);
}

static void reserve_beyond_usable_is_its_own_reason(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 70 * GiB);
  d.activation_bytes = 5 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_RESERVED);
  char buf[160];
  kvp_fit_explain(&l.fit, buf, sizeof buf);
  assert_string_equal(buf, "weights, activations and overhead need 77.0 GiB per GPU, 76.0 GiB usable");
}

static void smallest_tp_for_16_requests_of_32k_bf16_70b_is_8(void **state) {
  (void)state;
  kvp_deploy d;
  seed_deploy(&d, 0);
  d.utilization = 0.9;
  d.overhead_bytes = 0;
  int64_t tp;
  kvp_fit f;
  assert_int_equal(kvp_ledger_min_tp(&d, 32768, 16, 64, &tp, &f, NULL), KVP_OK);
  assert_int_equal(tp, 8);
  assert_int_equal(kvp_ledger_min_tp(&d, 32768, 16, 4, &tp, &f, NULL), KVP_OK);
  assert_int_equal(tp, 0);
  assert_int_equal(f.why, KVP_WHY_KV); /* at tp 4: 42.95e9 needed, 42.31e9 left */
  assert_int_equal(f.need, 32769 * 1310720LL);
  assert_int_equal(f.have, 77309411328LL - 35000000000LL);
}

static void tp_that_does_not_divide_heads_does_not_fit(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 70 * GiB);
  d.tp = 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_TP_HEADS);
  char buf[160];
  kvp_fit_explain(&l.fit, buf, sizeof buf);
  assert_string_equal(buf, "tp 3 does not divide the 64 attention heads");
  /* 24 heads, 8 KV heads, tp 12: 12 divides 24 but not 8, nor 8 12 */
  assert_int_equal(kvp_model_init(&d.model, 80, 3072, 24, 8, 128, NULL), KVP_OK);
  d.tp = 12;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_TP_KV_HEADS);
  d.tp = 24; /* 24 % 8 == 0: heads replicated */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
}

static void tightest_pipeline_stage_decides(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.pp = 3;
  d.weights = (kvp_format){16, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
  assert_int_equal(l.nstage, 3);
  assert_int_equal(l.stage[0].layers, 27);
  assert_int_equal(l.stage[2].layers, 26);
  assert_int_equal(l.stage[0].weights, 140000000000LL / 80 * 27);
  assert_true(l.tight == 0 || l.tight == 1);
  int64_t n, seq;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 512 * 27 * 65536LL);
  assert_int_equal(n, (l.stage[0].kv_budget - l.stage[0].block_bytes) / seq);
}

static void context_beyond_max_model_len_does_not_fit(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.weights = (kvp_format){4, 0, 0, 0};
  d.max_model_len = 8192;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_fit f;
  assert_int_equal(kvp_ledger_fit(&l, 8193, 1, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_CONTEXT);
  char buf[160];
  kvp_fit_explain(&f, buf, sizeof buf);
  assert_string_equal(buf, "context 8193 exceeds max_model_len 8192");
  int64_t n;
  assert_int_equal(kvp_ledger_max_context(&l, 1, &n, &f), KVP_OK);
  assert_int_equal(n, 8192);
}

static void absurd_concurrency_saturates_instead_of_wrapping(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.weights = (kvp_format){4, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_fit f;
  assert_int_equal(kvp_ledger_fit(&l, 1 << 20, INT64_MAX / 2, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_KV);
  assert_int_equal(f.need, INT64_MAX);
  assert_int_equal(kvp_ledger_fit(&l, 0, 1, &f), KVP_EINVAL);
}

static void bad_deployments_are_errors_naming_the_field(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  seed_deploy(&d, 0);
  d.tp = -1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'tp' must be an integer >= 1, got -1");
  seed_deploy(&d, 0);
  d.utilization = 1.5;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'utilization' must be in (0, 1], got 1.5");
  seed_deploy(&d, 0);
  d.model.params = INT64_MAX / 4; /* bytes of the weights overflow */
  d.model.active = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EOVERFLOW);
}

/* ---- optimizations (kvp_deploy fields after max_model_len) ---------------- */

#define INT4_BUDGET (81604378624LL - 36367187500LL - 2 * GiB)

static void seed_int4(kvp_deploy *d) {
  seed_deploy(d, 0);
  d->weights = (kvp_format){4, 128, 16, 4};
  d->max_model_len = 131072;
}

static void contiguous_allocation_reserves_max_model_len_per_request(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_int4(&d);
  d.alloc = KVP_ALLOC_CONTIGUOUS;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.null_blocks, 0);
  int64_t seq, n;
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 131072 * 327680LL); /* 40 GiB whatever the length */
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 1); /* 43089707476 / 42949672960 */
  assert_int_equal(kvp_ledger_fit(&l, 100, 2, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_KV);
  assert_int_equal(f.need, 2 * 131072 * 327680LL); /* no null block */
}

static void kivi_keeps_the_recent_window_in_full_precision(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_int4(&d);
  d.kv = (kvp_format){2, 32, 16, 16}; /* a head row of 128: 256 + 4 x 32 bits */
  d.kv_recent = 128;
  d.kv_full = (kvp_format){16, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].token_bits, 80 * 2 * 8 * 384);
  int64_t seq;
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  /* 8064 quantized tokens in 504 blocks of 16 x 768 B, 128 in 8 of 16 x 4096 B */
  assert_int_equal(seq, 80 * (504 * 16 * 768LL + 8 * 16 * 4096LL));
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 100, &seq), KVP_OK);
  assert_int_equal(seq, 80 * 7 * 16 * 4096LL); /* all recent */
}

static void eviction_caps_what_each_layer_keeps(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq;
  seed_int4(&d);
  d.evict.sinks = 4;
  d.evict.recent = 2044;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 131072, &seq), KVP_OK);
  assert_int_equal(seq, 2048 * 327680LL);
  /* per-layer budgets: 40 layers keep 1024 tokens, 40 keep 512 */
  memset(&d.evict, 0, sizeof d.evict);
  int64_t b[80];
  for (int i = 0; i < 80; i++) b[i] = i < 40 ? 1024 : 512;
  assert_int_equal(kvp_evict_set_layers(&d.evict, b, 80, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].ngroup, 2);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (40 * 64 + 40 * 32) * 65536LL);
}

static void speculative_slots_and_draft_layers_sit_on_the_last_stage(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq;
  seed_int4(&d);
  d.spec.tokens = 4;
  d.spec.draft_layers = 1; /* an EAGLE head: one layer of the target's shape */
  d.spec.draft = d.model.spec[0];
  d.spec.draft_weight_bytes = 1000000000;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 81 * 65536);
  assert_int_equal(l.stage[0].weights, 36367187500LL + 1000000000);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 513 * 81 * 65536LL); /* 8192 + 4 tokens: 513 blocks */
  d.pp = 2;
  d.weights = (kvp_format){16, 0, 0, 0};
  d.model.params = d.model.active = 8000000000LL; /* small enough for a stage */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 40 * 65536);
  assert_int_equal(l.stage[1].block_bytes, 41 * 65536);
  assert_int_equal(l.stage[1].weights - l.stage[0].weights, 1000000000);
}

static void prefix_and_prompt_blocks_are_held_once(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t own, shared, sum, points, n;
  kvp_fit f;
  seed_int4(&d);
  d.prefix_tokens = 2048;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(own, 384 * 16 * 327680LL);
  assert_int_equal(shared, 128 * 16 * 327680LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, (INT4_BUDGET - 129 * 16 * 327680LL) / (384 * 16 * 327680LL));
  /* 4 samples share a 4096-token prompt: 4 x 256 own blocks + 256 prompt blocks */
  d.prefix_tokens = 0;
  d.samples = 4;
  d.prompt_tokens = 4096;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(own, 1280 * 16 * 327680LL);
  assert_int_equal(shared, 0);
  /* a prompt of 4095 tokens shares only its 255 whole blocks */
  d.prompt_tokens = 4095;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(own, (4 * 257 + 255) * 16 * 327680LL);
}

static void continuous_batching_charges_the_mean_of_the_points(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  seed_deploy(&d, 70 * GiB); /* 4 GiB for KV */
  d.kv = (kvp_format){8, 0, 0, 0};
  kvp_dist u = {.kind = KVP_DIST_UNIFORM, .lo = 1, .hi = 8192};
  assert_int_equal(kvp_dist_points(&u, KVP_LEN_POINTS, d.len, NULL), KVP_OK);
  d.nlen = KVP_LEN_POINTS;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* points 129 + 256 i take 9 + 16 i blocks: 8224 blocks over 32 points */
  assert_int_equal(l.stage[0].lsum[32], 8224 * 2621440LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, (4 * GiB - 2621440) * 32 / (8224 * 2621440LL)); /* 6 */
  assert_int_equal(n, 6);
  /* capped at a shorter context every point costs at most that context */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 129, &n, &f), KVP_OK);
  assert_int_equal(n, (4 * GiB - 2621440) / (9 * 2621440LL));
  assert_int_equal(kvp_ledger_fit(&l, 8192, 7, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_KV);
  assert_int_equal(f.need, (7 * 8224 * 2621440LL + 31) / 32 + 2621440);
}

static void sglang_and_trtllm_size_the_pool_by_their_rules(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  seed_int4(&d);
  d.activation_bytes = GiB;
  d.budget = KVP_BUDGET_SGLANG;
  d.utilization = 0.88;
  d.block = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.usable, 73701638799LL); /* floor(0.88 x 78 GiB) */
  assert_int_equal(l.stage[0].kv_budget, 73701638799LL - 36367187500LL);
  assert_int_equal(l.stage[0].blocks, 113935); /* 37334451299 // 327680 */
  assert_int_equal(l.stage[0].pool, 113935 * 327680LL);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 113935); /* no null block */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 13);
  d.budget = KVP_BUDGET_TRTLLM;
  d.utilization = 0.9;
  d.block = 64;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* 0.9 x (80 GiB - 36367187500 - 1 GiB - 2 GiB) = 41679839653.2 */
  assert_int_equal(l.stage[0].kv_budget, 41679839653LL);
  assert_int_equal(l.stage[0].margin, 46310932948LL - 41679839653LL);
  assert_int_equal(l.stage[0].blocks, 1988); /* ceil(127196 / 64) */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 15); /* 1988 // 128 */
  d.max_kv_tokens = 65536;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 1024);
}

static void offload_adds_host_blocks_beside_the_pool(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  seed_int4(&d);
  d.host_bytes = 512 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].host_blocks, 104857); /* 512 GiB // 5242880 */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, (INT4_BUDGET + 104856 * 5242880LL) / (512 * 5242880LL));
  assert_int_equal(n, 220);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(seed_inputs_leave_4_gib_and_one_8k_request),
    cmocka_unit_test(true_4bit_weights_fit_16_requests_of_8k),
    cmocka_unit_test(weights_too_big_say_why_never_a_negative_count),
    cmocka_unit_test(reserve_beyond_usable_is_its_own_reason),
    cmocka_unit_test(smallest_tp_for_16_requests_of_32k_bf16_70b_is_8),
    cmocka_unit_test(tp_that_does_not_divide_heads_does_not_fit),
    cmocka_unit_test(tightest_pipeline_stage_decides),
    cmocka_unit_test(context_beyond_max_model_len_does_not_fit),
    cmocka_unit_test(absurd_concurrency_saturates_instead_of_wrapping),
    cmocka_unit_test(bad_deployments_are_errors_naming_the_field),
    cmocka_unit_test(contiguous_allocation_reserves_max_model_len_per_request),
    cmocka_unit_test(kivi_keeps_the_recent_window_in_full_precision),
    cmocka_unit_test(eviction_caps_what_each_layer_keeps),
    cmocka_unit_test(speculative_slots_and_draft_layers_sit_on_the_last_stage),
    cmocka_unit_test(prefix_and_prompt_blocks_are_held_once),
    cmocka_unit_test(continuous_batching_charges_the_mean_of_the_points),
    cmocka_unit_test(sglang_and_trtllm_size_the_pool_by_their_rules),
    cmocka_unit_test(offload_adds_host_blocks_beside_the_pool),
  };
  return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
