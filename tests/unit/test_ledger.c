/* test_ledger.c: the per-GPU ledger and its capacity answers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

#define GiB 1073741824LL

/* the 70B-class model of examples/recompute_article_ledger.lua on one 80 GiB card, 5 % safety, 2 GiB overhead */
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

/* system_memory (memory others hold on the GPU), hand-counted on the seed
 * (80 GiB, 70 GiB of weights, 2 GiB of overhead, utilization 0.95): vLLM V1
 * keeps its budget (76 - 70 - 2 = 4 GiB) and refuses to start once free
 * memory 80 - s < 76 GiB; vLLM 0.6.0-0.6.4 / V1 0.7 count it as non-torch
 * memory (4 - 1 = 3 GiB); SGLang's total is what is free at startup,
 * 0.95 x (80 - 2 - 3) - 70 = 1.25 GiB; TensorRT-LLM's free memory after
 * loading, 0.95 x (80 - 70 - 2 - 3) = 4.75 GiB. */
static void system_memory_as_each_engine_sees_it(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_start s;
  seed_deploy(&d, 70 * GiB);
  d.system_bytes = 3 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].kv_budget, 4 * GiB);
  assert_int_equal(kvp_start_check(&l, &s, NULL), KVP_OK);
  assert_true(s.why != KVP_START_VLLM_FREE); /* 77 GiB free >= 76 */
  d.system_bytes = 5 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].kv_budget, 4 * GiB);
  assert_int_equal(kvp_start_check(&l, &s, NULL), KVP_OK);
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_VLLM_FREE);
  assert_int_equal(s.available, 75 * GiB);
  d.system_bytes = 1 * GiB;
  d.vllm.system_rule = KVP_SYS_BUDGET;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].kv_budget, 3 * GiB);
  d.vllm.system_rule = KVP_SYS_NONE;
  d.system_bytes = 5 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].kv_budget, 4 * GiB);
  assert_int_equal(kvp_start_check(&l, &s, NULL), KVP_OK);
  assert_true(s.why != KVP_START_VLLM_FREE); /* V0: no such check */
  seed_deploy(&d, 70 * GiB);
  d.budget = KVP_BUDGET_SGLANG;
  d.system_bytes = 3 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_in_range(l.stage[0].kv_budget, 5 * GiB / 4 - 1, 5 * GiB / 4);
  seed_deploy(&d, 70 * GiB);
  d.budget = KVP_BUDGET_TRTLLM;
  d.system_bytes = 3 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_in_range(l.stage[0].kv_budget, 19 * GiB / 4 - 1, 19 * GiB / 4);
  d.system_bytes = -1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_EINVAL);
}

static void true_4bit_weights_fit_16_requests_of_8k(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.weights = (kvp_format){4, 128, 16, 4, 0, 0, 0, 0, 0, 0, 0};
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
  d.weights = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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

/* The weights every TP rank holds whole (kvp_replicated: MLA's
 * ReplicatedLinear down-projections, routers, norms), hand-counted on the
 * seed's 80 layers: 70 GiB of weights with 1 GiB of them replicated at tp 4
 * are 69 / 4 + 1 = 18.25 GiB a GPU, not 70 / 4 = 17.5; from the parameters
 * in fp8 (8e8 of 7e10, no given bytes): (7e10 - 8e8) / 4 + 8e8; at pp 2
 * each stage half of each part; nothing changes at tp 1. */
static void replicated_weights_stay_whole_on_every_rank(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 70 * GiB);
  d.tp = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 70 * GiB / 4);
  d.replicated.bytes = 1 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 69 * GiB / 4 + 1 * GiB);
  seed_deploy(&d, 0);
  d.weights = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d.tp = 4;
  d.replicated.params = 800000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, (70000000000LL - 800000000LL) / 4 + 800000000LL);
  d.pp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, (69200000000LL / 2) / 4 + 400000000LL);
  d.pp = 1;
  d.tp = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 70000000000LL);
  /* never more than the weights themselves */
  d.tp = 4;
  d.replicated.params = 0;
  d.replicated.bytes = 100000000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 70000000000LL);
  kvp_diag dg = {{0}};
  d.replicated.bytes = -1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "replicated_bytes"));
}

/* vLLM's LoRA slots load with the weights: every stage's layers' slots in
 * its weights, the KV budget that much smaller */
static void lora_slots_join_each_stage_weights(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger base, l;
  seed_deploy(&d, 0);
  d.pp = 3;
  d.weights = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &base, NULL), KVP_OK);
  d.vllm.lora = (kvp_lora){.max_loras = 2, .max_rank = 8, .dtype_bytes = 2, .hidden = 8192,
                           .heads = 64, .kv_heads = 8, .head_dim = 128, .intermediate = 28672};
  int64_t per;
  assert_int_equal(kvp_lora_layer_bytes(&d.vllm.lora, 1, &per, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  for (int s = 0; s < 3; s++) {
    assert_int_equal(l.stage[s].lora, per * l.stage[s].layers);
    assert_int_equal(l.stage[s].weights, base.stage[s].weights + l.stage[s].lora);
    assert_int_equal(l.stage[s].kv_budget, base.stage[s].kv_budget - l.stage[s].lora);
  }
  /* another budget rule has no such slots: refused, naming the option */
  kvp_diag diag = {{0}};
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "enable_lora"));
  /* a bad config is named at the deployment's check */
  d.budget = KVP_BUDGET_VLLM;
  d.vllm.lora.max_rank = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "max_lora_rank"));
}

/* vLLM's rotary cos/sin caches (engines.lua vllm_rotary): whole on every
 * GPU of every stage, in its weights, the KV budget that much smaller; hand
 * count: one table of 4096 positions x 128 (cos and sin) in bf16 */
static void rotary_caches_join_each_stage_weights(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger base, l;
  seed_deploy(&d, 0);
  d.pp = 3;
  d.tp = 2;
  d.weights = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &base, NULL), KVP_OK);
  d.vllm.rotary_bytes = 4096 * 128 * 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  for (int s = 0; s < 3; s++) {
    assert_int_equal(l.stage[s].rotary, 1048576);
    assert_int_equal(l.stage[s].weights, base.stage[s].weights + 1048576);
    assert_int_equal(l.stage[s].kv_budget, base.stage[s].kv_budget - 1048576);
  }
  kvp_diag diag = {{0}};
  /* SGLang's float32 tables are in its weights too; TensorRT-LLM's are not read */
  d.budget = KVP_BUDGET_TRTLLM;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "vllm_rotary_bytes"));
  d.budget = KVP_BUDGET_VLLM;
  d.vllm.rotary_bytes = -1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "vllm_rotary_bytes"));
}

/* SGLang's allocator slack (engines.lua sglang_alloc_slack): in the weights
 * of its budget, the KV budget that much smaller; refused under another
 * budget and when negative */
static void sglang_alloc_slack_joins_the_weights(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger base, l;
  kvp_diag diag = {{0}};
  seed_deploy(&d, 0);
  d.budget = KVP_BUDGET_SGLANG;
  d.block = 1;
  assert_int_equal(kvp_ledger_eval(&d, &base, &diag), KVP_OK);
  d.vllm.alloc_bytes = 3 << 20;
  d.vllm.rotary_bytes = 1 << 20;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.stage[0].alloc, 3 << 20);
  assert_int_equal(l.stage[0].rotary, 1 << 20);
  assert_int_equal(l.stage[0].weights, base.stage[0].weights + (4 << 20));
  assert_int_equal(l.stage[0].kv_budget, base.stage[0].kv_budget - (4 << 20));
  d.budget = KVP_BUDGET_VLLM;
  d.block = 16;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "sglang_alloc_bytes"));
  d.budget = KVP_BUDGET_SGLANG;
  d.block = 1;
  d.vllm.alloc_bytes = -1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "sglang_alloc_bytes"));
}

static void context_beyond_max_model_len_does_not_fit(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  seed_deploy(&d, 0);
  d.weights = (kvp_format){4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
  d.weights = (kvp_format){4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
  d->weights = (kvp_format){4, 128, 16, 4, 0, 0, 0, 0, 0, 0, 0};
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
  d.kv = (kvp_format){2, 32, 16, 16, 0, 0, 0, 0, 0, 0, 0}; /* a head row of 128: 256 + 4 x 32 bits */
  d.kv_recent = 128;
  d.kv_full = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
  d.weights = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
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
  d.prefix = 2048;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(own, 384 * 16 * 327680LL);
  assert_int_equal(shared, 128 * 16 * 327680LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, (INT4_BUDGET - 129 * 16 * 327680LL) / (384 * 16 * 327680LL));
  /* 4 samples share a 4096-token prompt: 4 x 256 own blocks + 256 prompt blocks */
  d.prefix = 0;
  d.samples = 4;
  d.prompt = 4096;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(own, 1280 * 16 * 327680LL);
  assert_int_equal(shared, 0);
  /* a prompt of 4095 tokens shares only its 255 whole blocks */
  d.prompt = 4095;
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
  d.kv = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  kvp_dist u = {.kind = KVP_DIST_UNIFORM, .lo = 1, .hi = 8192};
  assert_int_equal(kvp_dist_points(&u, KVP_LEN_POINTS, d.len, NULL), KVP_OK);
  d.nlen = KVP_LEN_POINTS;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* points 129 + 256 i take 9 + 16 i blocks: 8224 blocks over 32 points */
  int64_t own, shared, sum, points;
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(points, 32);
  assert_int_equal(sum, 8224 * 2621440LL);
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

/* ---- vLLM's hybrid KV cache manager (ledger.c header comment) ------------- */

/* `layers` layers cycling through runs on one 80 GiB GPU with 40 GiB for KV
 * (utilization 1, no reserve: every byte of the budget is an input). */
static void hybrid_deploy(kvp_deploy *d, int64_t layers, int64_t kv_heads, int64_t head_dim,
                          const kvp_layer *runs, const int64_t *counts, int nruns) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, layers, 4096, 32, kv_heads, head_dim, NULL), KVP_OK);
  assert_int_equal(kvp_model_set_pattern(&d->model, runs, counts, nruns, NULL), KVP_OK);
  d->gpu_bytes = 80 * GiB;
  d->utilization = 1.0;
  d->weight_bytes = 40 * GiB;
  d->max_model_len = 131072;
}

/* Gemma-3-27B's KV shape: 5 local (window 1024) per global layer over 62
 * layers, 16 KV heads of 128, bf16: 8192 bytes a token, a page of 131072. */
static void gemma3_like(kvp_deploy *d) {
  kvp_layer runs[2] = {{.kind = KVP_SLIDING, .kv_heads = 16, .head_dim = 128,
                        .head_dim_v = 128, .window = 1024},
                       {.kind = KVP_FULL, .kv_heads = 16, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {5, 1};
  hybrid_deploy(d, 62, 16, 128, runs, counts, 2);
}

static void gemma3_groups_ten_layers_and_pads_the_sliding_type(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  gemma3_like(&d);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* 52 sliding + 10 full: group size 10 (52 >= 1.5 x 10); sliding makes
   * ceil(52 / 10) = 6 groups (60 slots, 8 of them padding), full 1 */
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(l.ntype, 2);
  assert_int_equal(l.group_size, 10);
  assert_int_equal(l.ngroups, 7);
  assert_int_equal(l.page, 131072);
  assert_int_equal(l.stage[0].group_size, 10);
  assert_int_equal(l.stage[0].block_bytes, 10 * 131072);
  assert_int_equal(l.stage[0].blocks, 32768); /* 40 GiB // 1310720 */
  int64_t seq, n;
  kvp_fit f;
  /* 8192 tokens: 512 blocks in the full group, 65 (the window's 64 and one
   * straddling) in each of the 6 sliding groups */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (512 + 6 * 65) * 1310720LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 36); /* 32767 // 902 */
  assert_int_equal(kvp_ledger_fit(&l, 8192, 37, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_KV);
  assert_int_equal(f.need, (37 * 902 + 1) * 1310720LL);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 32767 / 7 * 16); /* 74896 */
  /* the per-layer ideal (kept for per-layer eviction budgets, here budgets
   * no request reaches): 62 pages a block, 5285 blocks, 8500 pages a request */
  int64_t b[62];
  for (int i = 0; i < 62; i++) b[i] = 131072;
  assert_int_equal(kvp_evict_set_layers(&d.evict, b, 62, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.stage[0].blocks, 5285);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (10 * 512 + 52 * 65) * 131072LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 38); /* (40 GiB - 62 pages) // 1114112000 */
}

static void vllm_logs_cache_tokens_per_group_and_the_max_usage_ratio(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t tokens, blocks, per;
  gemma3_like(&d);
  d.max_num_batched_tokens = 2048;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(blocks, 32768);
  assert_int_equal(tokens, 32768 / 7 * 16); /* "GPU KV cache size: 74,896 tokens" */
  /* full: 131072 / 16; sliding: cdiv(min(1023 + 2048, 131072), 16) + 1 = 193 */
  assert_int_equal(per, 8192 + 6 * 193); /* "Maximum concurrency ...: 3.50x" */
  /* one type: num_blocks * block and cdiv(max_model_len, block), as before */
  seed_int4(&d);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(blocks, 8218);
  assert_int_equal(tokens, 8218 * 16);
  assert_int_equal(per, 131072 / 16);
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_EINVAL);
}

/* gpt-oss-20b's KV shape: sliding (window 128) and full alternating over 24
 * layers, 8 KV heads of 64, bf16: 2048 bytes a token, a page of 32768. */
static void gpt_oss_like(kvp_deploy *d) {
  kvp_layer runs[2] = {{.kind = KVP_SLIDING, .kv_heads = 8, .head_dim = 64, .head_dim_v = 64,
                        .window = 128},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 64, .head_dim_v = 64}};
  int64_t counts[2] = {1, 1};
  hybrid_deploy(d, 24, 8, 64, runs, counts, 2);
}

static void gpt_oss_alternating_layers_make_two_groups_of_twelve(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n, seq;
  kvp_fit f;
  gpt_oss_like(&d);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.group_size, 12);
  assert_int_equal(l.ngroups, 2);
  assert_int_equal(l.stage[0].block_bytes, 12 * 32768);
  assert_int_equal(l.stage[0].blocks, 109226); /* 40 GiB // 393216 */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 209); /* 109225 // (512 + 9) */
  assert_int_equal(kvp_ledger_kv_tokens(&l), 109225 / 2 * 16);
  /* an EAGLE head of the full layers' shape joins them: 12 sliding + 13
   * full, group size 13 (13 < 1.5 x 12), the sliding group padded by one */
  d.spec.tokens = 3;
  d.spec.draft_layers = 1;
  d.spec.draft = d.model.spec[1];
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.ntype, 2);
  assert_int_equal(kvp_ledger_types(&l)[1].layers, 13);
  assert_int_equal(l.group_size, 13);
  assert_int_equal(l.ngroups, 2);
  assert_int_equal(l.stage[0].block_bytes, 13 * 32768);
  assert_int_equal(l.stage[0].blocks, 100824);
  /* 8192 + 3 slots: 513 full blocks, the window's 9 */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 522 * 13 * 32768LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 193); /* 100823 // 522 */
}

static void pipeline_stages_hold_the_groups_layers_that_fall_on_them(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  gpt_oss_like(&d);
  d.pp = 2;
  d.weight_bytes = 80 * GiB; /* 40 GiB a stage */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* the groups are the whole model's; each stage holds 6 layers of each */
  assert_int_equal(l.group_size, 12);
  assert_int_equal(l.stage[0].group_size, 6);
  assert_int_equal(l.stage[1].group_size, 6);
  assert_int_equal(l.stage[0].block_bytes, 6 * 32768);
  assert_int_equal(l.stage[1].blocks, 218453); /* 40 GiB // 196608 */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 419); /* 218452 // 521 */
}

/* Qwen3-Next-80B-A3B's KV shape: 3 Gated DeltaNet layers (a 1097728-byte
 * state, 16 state heads) per full-attention layer (2 KV heads of 256) over
 * 48 layers, bf16. */
static void qwen3_next_like(kvp_deploy *d) {
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 16, .state_bytes = 1097728},
                       {.kind = KVP_FULL, .kv_heads = 2, .head_dim = 256, .head_dim_v = 256}};
  int64_t counts[2] = {3, 1};
  hybrid_deploy(d, 48, 2, 256, runs, counts, 2);
  d->max_model_len = 262144;
}

static void mamba_states_raise_the_block_and_take_one_padded_page(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n, seq, tokens, blocks, per;
  kvp_fit f;
  qwen3_next_like(&d);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* 2048 bytes a token: block 16 * cdiv(1097728, 16 * 2048) = 544, a page of
   * 1114112 bytes, the state padded up to it */
  assert_int_equal(l.d.block, 544);
  assert_int_equal(l.page, 1114112);
  assert_int_equal(l.group_size, 12); /* 12 full, 36 state: 3 state groups */
  assert_int_equal(l.ngroups, 4);
  assert_int_equal(l.min_block, 544);
  assert_int_equal(l.stage[0].block_bytes, 12 * 1114112LL);
  assert_int_equal(l.stage[0].blocks, 3212);
  /* 8192 tokens: cdiv(8192, 544) = 16 blocks of the full group, one state
   * block in each of the 3 state groups */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 19 * 12 * 1114112LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 169); /* 3211 // 19 */
  assert_int_equal(kvp_ledger_kv_tokens(&l), 3211 / 4 * 544);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 3212 / 4 * 544); /* 436832 */
  assert_int_equal(per, 482 + 3);           /* cdiv(262144, 544) + 3 states */
  /* the raised block is not what was given: no evaluation in place */
  assert_int_equal(l.adjusted, 1);
  assert_int_equal(kvp_ledger_eval_own_numbers(&l, NULL), KVP_EINVAL);
  /* MTP-style speculation: 2 draft tokens take 2 more state blocks each */
  d.spec.tokens = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (16 + 3 * 3) * 12 * 1114112LL); /* 8194 tokens: still 16 */
  /* at tp 4: 274432 state bytes and 1024 a token give block 272 */
  d.spec.tokens = 0;
  d.tp = 4;
  d.model.heads = 16;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 272);
  assert_int_equal(l.page, 272 * 1024);
  /* a block the user sets larger is kept */
  d.tp = 1;
  d.block = 1024;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 1024);
  assert_int_equal(l.page, 1024 * 2048);
  /* the per-layer ideal, for comparison: 12 pages of 32768 a block and
   * 12 x 512 pages + 36 states a request: 178 requests of 8192 */
  d.block = 16;
  int64_t b[48];
  for (int i = 0; i < 48; i++) b[i] = 262144;
  assert_int_equal(kvp_evict_set_layers(&d.evict, b, 48, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.d.block, 16);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 178);
}

static void unequal_pages_raise_the_smaller_block_or_are_refused(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  int64_t seq;
  /* sliding layers with 4 KV heads beside full ones with 8: half the page,
   * so vLLM doubles their block to 32 tokens */
  kvp_layer runs[2] = {{.kind = KVP_SLIDING, .kv_heads = 4, .head_dim = 128, .head_dim_v = 128,
                        .window = 4096},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {1, 1};
  hybrid_deploy(&d, 32, 8, 128, runs, counts, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.page, 65536);
  assert_int_equal(kvp_ledger_types(&l)[0].block, 32);
  assert_int_equal(kvp_ledger_types(&l)[1].block, 16);
  assert_int_equal(l.min_block, 16);
  /* 8192 tokens: the window of 4096 in 32-token blocks: cdiv(4096, 32) + 1 */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (512 + 129) * 16 * 65536LL);
  /* a head of 96 makes pages of 49152 bytes, which do not divide 65536:
   * vLLM (commit 002f10e0cfa1, unify_kv_cache_spec_page_size) keeps their
   * 16-token block and pads the page to 65536 */
  runs[0].head_dim = runs[0].head_dim_v = 96;
  runs[0].kv_heads = 8;
  hybrid_deploy(&d, 32, 8, 128, runs, counts, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.page, 65536);
  assert_int_equal(kvp_ledger_types(&l)[0].block, 16);
  assert_int_equal(kvp_ledger_types(&l)[0].padded, 1);
  assert_int_equal(kvp_ledger_types(&l)[1].padded, 0);
  /* the window of 4096 in 16-token blocks: cdiv(4095 + 1, 16) + 1 = 257 */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, (512 + 257) * 16 * 65536LL);
  /* an MLA page (576 bf16 elements, 18432 bytes) that does not divide the
   * full layers' page is refused: only non-MLA pages are padded */
  kvp_layer mla[2] = {{.kind = KVP_MLA, .latent = 512, .rope_dim = 64},
                      {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  hybrid_deploy(&d, 32, 8, 128, mla, counts, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK); /* MLA and full: one type */
  assert_int_equal(l.hybrid, 0);
  mla[1].kind = KVP_CHUNKED;
  mla[1].window = 8192;
  hybrid_deploy(&d, 32, 8, 128, mla, counts, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg,
                      "vLLM cannot put MLA layers with pages of 18432 bytes in one pool with "
                      "pages of 65536 bytes: an MLA page must divide the largest page "
                      "(unify_kv_cache_spec_page_size pads only non-MLA attention pages)");
  /* beside sliding layers instead, vLLM falls back to allocating them as
   * full attention (_try_get_full_allocation_fallback_groups): one type */
  mla[1].kind = KVP_SLIDING;
  mla[1].window = 4096;
  hybrid_deploy(&d, 32, 8, 128, mla, counts, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.promoted, 1);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 8192, &seq), KVP_OK);
  assert_int_equal(seq, 512 * 16 * (18432 + 65536LL)); /* every token on every layer */
}

static void one_kv_type_and_kivi_keep_per_layer_pages(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  /* every layer sliding with one window: one type, per-layer pages */
  kvp_layer runs[1] = {{.kind = KVP_SLIDING, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128,
                        .window = 4096}};
  int64_t counts[1] = {1};
  hybrid_deploy(&d, 32, 8, 128, runs, counts, 1);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.stage[0].block_bytes, 32 * 65536);
  /* full and MLA layers are one type too (MLAAttentionSpec is a full spec) */
  kvp_layer mixed[2] = {{.kind = KVP_MLA, .latent = 512, .rope_dim = 64},
                        {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t two[2] = {1, 1};
  hybrid_deploy(&d, 32, 8, 128, mixed, two, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  /* two windows are two types */
  kvp_layer windows[2] = {runs[0], runs[0]};
  windows[1].window = 1024;
  hybrid_deploy(&d, 32, 8, 128, windows, two, 2);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(l.ngroups, 2);
  /* KIVI's two formats cannot share one page size: per-layer pages */
  gemma3_like(&d);
  d.kv = (kvp_format){2, 32, 16, 16, 0, 0, 0, 0, 0, 0, 0};
  d.kv_recent = 128;
  d.kv_full = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  /* nor does SGLang's budget group layers */
  gemma3_like(&d);
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
}

static void prefix_blocks_of_full_groups_are_held_once(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t own, shared, sum, points;
  gemma3_like(&d);
  d.prefix = 2048;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  /* the full group shares 128 whole blocks; sliding groups share nothing */
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(shared, 128 * 1310720LL);
  assert_int_equal(own, (512 - 128 + 6 * 65) * 1310720LL);
}

static void eviction_and_length_points_apply_per_group(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq, n;
  kvp_fit f;
  /* StreamingLLM, 4 sinks + 2044 recent: the full group keeps 2048 tokens
   * in 128 blocks; the sliding groups keep their window as before */
  gemma3_like(&d);
  d.evict.sinks = 4;
  d.evict.recent = 2044;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 131072, &seq), KVP_OK);
  assert_int_equal(seq, (128 + 6 * 65) * 1310720LL);
  /* two equally likely lengths: 1024 tokens take 64 blocks in every group
   * (the window not yet passed), 8192 take 902: 1350 over 2 points */
  gemma3_like(&d);
  d.nlen = 2;
  d.len[0] = 1024;
  d.len[1] = 8192;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  int64_t own, shared, sum, points;
  assert_int_equal(kvp_ledger_request_bytes(&l, 0, 8192, &own, &shared, &sum, &points), KVP_OK);
  assert_int_equal(sum, 1350 * 1310720LL);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 48); /* 32767 x 2 // 1350 */
}

/* Two ledgers of one deployment give the same capacity answers. */
static void answers_alike(const kvp_ledger *l, const kvp_ledger *full) {
  int64_t a, b;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(l, 8192, &a, &f), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(full, 8192, &b, &f), KVP_OK);
  assert_int_equal(a, b);
  assert_int_equal(kvp_ledger_max_context(l, 4, &a, &f), KVP_OK);
  assert_int_equal(kvp_ledger_max_context(full, 4, &b, &f), KVP_OK);
  assert_int_equal(a, b);
  assert_int_equal(kvp_ledger_kv_tokens(l), kvp_ledger_kv_tokens(full));
}

/* A ledger allocated at kvp_ledger_size holds every answer: eval and the
 * answers touch no byte beyond it (ASan checks the heap block's end). */
static void ledger_sized_to_its_stages_answers_alike(void **state) {
  (void)state;
  static kvp_ledger full;
  for (int64_t pp = 1; pp <= 3; pp++) {
    kvp_deploy d;
    seed_deploy(&d, 0);
    d.pp = pp;
    size_t size = kvp_ledger_size(&d);
    /* one layer shape, no eviction levels, no length points: room for two
     * groups a stage (a TurboQuant twin of the shape) and no sums, and for
     * two vLLM KV cache types (the same twins) */
    assert_int_equal(size, offsetof(kvp_ledger, stage) +
                           (size_t)pp * (sizeof(kvp_stage) + 2 * sizeof(kvp_group)) +
                           2 * sizeof(kvp_kv_type));
    kvp_ledger *l = malloc(size);
    assert_non_null(l);
    assert_int_equal(kvp_ledger_eval(&d, l, NULL), KVP_OK);
    assert_int_equal(kvp_ledger_eval(&d, &full, NULL), KVP_OK);
    answers_alike(l, &full);
    free(l);
  }
  kvp_deploy d;
  seed_deploy(&d, 0);
  d.pp = 81; /* more stages than layers: no stage at all */
  assert_int_equal(kvp_ledger_size(&d), offsetof(kvp_ledger, stage) + 2 * sizeof(kvp_kv_type));
  d.budget = KVP_BUDGET_SGLANG; /* no vLLM KV cache types either */
  assert_int_equal(kvp_ledger_size(&d), offsetof(kvp_ledger, stage));
}

/* Groups and length-point sums are sized to the deployment: a ledger of
 * exactly kvp_ledger_size bytes answers as the largest one does, with
 * several layer shapes, eviction levels, length points, stages and a
 * TurboQuant format that adds shapes while the ledger is evaluated (ASan,
 * under make check, sees any byte read or written past its end). */
static void groups_and_points_sized_to_the_deployment(void **state) {
  (void)state;
  static kvp_ledger full;
  for (int variant = 0; variant < 8; variant++) {
    kvp_deploy d;
    gemma3_like(&d);
    if (variant >= 6) { /* vLLM's hybrid KV cache types, with a draft's (7) and two stages */
      if (variant == 7) {
        d.spec.tokens = 3;
        d.spec.draft_layers = 2;
        d.spec.draft = (kvp_layer){.kind = KVP_FULL, .kv_heads = 8, .head_dim = 64, .head_dim_v = 64};
        d.pp = 2;
      }
      size_t size = kvp_ledger_size(&d);
      kvp_ledger *l = malloc(size);
      assert_non_null(l);
      assert_int_equal(kvp_ledger_eval(&d, l, NULL), KVP_OK);
      assert_int_equal(kvp_ledger_eval(&d, &full, NULL), KVP_OK);
      assert_int_equal(l->hybrid, 1);
      assert_int_equal(l->ntype, variant == 7 ? 3 : 2);
      assert_memory_equal(kvp_ledger_types(l), kvp_ledger_types(&full),
                          (size_t)l->ntype * sizeof(kvp_kv_type));
      answers_alike(l, &full);
      free(l);
      continue;
    }
    d.budget = KVP_BUDGET_SGLANG; /* per-layer pages: the groups path */
    d.block = 1;
    d.evict.sinks = 4;
    d.evict.recent = 512;
    if (variant >= 1) {
      int64_t budgets[62];
      for (int i = 0; i < 62; i++) budgets[i] = 256 * (i % 4); /* levels 256, 512, 768 */
      assert_int_equal(kvp_evict_set_layers(&d.evict, budgets, 62, NULL), KVP_OK);
    }
    if (variant >= 2) {
      d.nlen = 5;
      for (int i = 0; i < 5; i++) d.len[i] = 700 * (i + 1);
    }
    if (variant >= 3) d.pp = 3;
    if (variant == 4) d.alloc = KVP_ALLOC_CONTIGUOUS;
    if (variant == 5) { /* a dense model under vLLM: TurboQuant keeps boundary layers in bf16 */
      seed_deploy(&d, 0);
      d.kv = (kvp_format){.bits = 8, .tq_key_bits = 8, .tq_value_bits = 4};
      d.nlen = 3;
      d.len[0] = 100, d.len[1] = 1000, d.len[2] = 5000;
    }
    size_t size = kvp_ledger_size(&d);
    assert_true(size < sizeof(kvp_ledger));
    kvp_ledger *l = malloc(size);
    assert_non_null(l);
    kvp_err e = kvp_ledger_eval(&d, l, NULL);
    assert_int_equal(kvp_ledger_eval(&d, &full, NULL), e);
    if (e == KVP_OK) {
      /* sliding; full at levels 256 and 768 (full layers 5, 11, ...: i % 4 is 1 or 3);
       * TurboQuant: the boundary layers' bf16 twin of the one shape */
      assert_int_equal(l->stage[0].ngroup, variant == 0 || variant == 5 ? 2 : 3);
      for (int32_t st = 0; st < l->nstage; st++) {
        const kvp_group *g = kvp_ledger_groups(l, st), *h = kvp_ledger_groups(&full, st);
        assert_non_null(g);
        if (l->stage[st].ngroup > 0)
          assert_memory_equal(g, h, (size_t)l->stage[st].ngroup * sizeof *g);
        int64_t w1, s1, u1, p1, w2, s2, u2, p2;
        assert_int_equal(kvp_ledger_request_bytes(l, st, 4096, &w1, &s1, &u1, &p1), KVP_OK);
        assert_int_equal(kvp_ledger_request_bytes(&full, st, 4096, &w2, &s2, &u2, &p2), KVP_OK);
        assert_int_equal(u1, u2);
        assert_int_equal(p1, p2);
      }
      assert_null(kvp_ledger_groups(l, l->nstage));
      answers_alike(l, &full);
    }
    free(l);
  }
}

/* kvp_ledger_fit_limit agrees with kvp_ledger_fit at every concurrency,
 * whatever the rule, allocation, stages, sharing, lengths or offload. */
static void fit_limit_agrees_with_fit(void **state) {
  (void)state;
  static kvp_ledger l;
  for (int variant = 0; variant < 9; variant++) {
    kvp_deploy d;
    seed_deploy(&d, 0);
    d.weights = (kvp_format){.bits = 4, .group = 128, .scale_bits = 16, .zero_bits = 4};
    d.max_model_len = 32768;
    switch (variant) {
      case 1: d.pp = 3; break;
      case 2: d.alloc = KVP_ALLOC_CONTIGUOUS; break;
      case 3: d.prefix = 1000; d.samples = 4; d.output = 300; break;
      case 4: d.nlen = 3; d.len[0] = 100; d.len[1] = 2000; d.len[2] = 9000; break;
      case 5: d.host_bytes = 8 * GiB; break;
      case 6: d.budget = KVP_BUDGET_SGLANG; d.block = 1; break;
      case 7: d.budget = KVP_BUDGET_TRTLLM; d.block = 64; d.max_kv_tokens = 50000; break;
      case 8: d.host_bytes = INT64_MAX / 2; break; /* room saturates */
      default: break;
    }
    assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
    static const int64_t ctxs[] = {1, 15, 16, 17, 1000, 4096, 8192, 32768, 32769};
    for (size_t i = 0; i < sizeof ctxs / sizeof ctxs[0]; i++) {
      int64_t lim;
      assert_int_equal(kvp_ledger_fit_limit(&l, ctxs[i], &lim), KVP_OK);
      for (int64_t c = 1; c <= 400; c += (c < 50 ? 1 : 37)) {
        kvp_fit f;
        assert_int_equal(kvp_ledger_fit(&l, ctxs[i], c, &f), KVP_OK);
        assert_int_equal(f.why == KVP_FITS, c <= lim);
      }
      if (lim > 0 && lim < INT64_MAX) { /* the boundary itself */
        kvp_fit f;
        assert_int_equal(kvp_ledger_fit(&l, ctxs[i], lim, &f), KVP_OK);
        assert_int_equal(f.why, KVP_FITS);
        assert_int_equal(kvp_ledger_fit(&l, ctxs[i], lim + 1, &f), KVP_OK);
        assert_int_not_equal(f.why, KVP_FITS);
      }
    }
  }
}

/* kvp_ledger_eval_numbers answers what kvp_ledger_eval answers. */
static void eval_numbers_equals_eval(void **state) {
  (void)state;
  static kvp_ledger a, b;
  kvp_deploy d;
  seed_deploy(&d, 0);
  for (int i = 0; i < 4; i++) {
    d.overhead_bytes = i * GiB;
    d.max_model_len = 4096 << i;
    d.tp = 1 << (i % 3);
    assert_int_equal(kvp_ledger_eval(&d, &a, NULL), KVP_OK);
    assert_int_equal(kvp_ledger_eval_numbers(&d, &b, NULL), KVP_OK);
    assert_memory_equal(&a, &b, kvp_ledger_size(&d));
  }
  /* in place: b's own deployment changed in numbers answers as a new one */
  assert_int_equal(kvp_ledger_eval(&d, &b, NULL), KVP_OK);
  assert_int_equal(b.adjusted, 0);
  for (int i = 0; i < 4; i++) {
    d.overhead_bytes = b.d.overhead_bytes = (i + 1) * GiB;
    d.max_model_len = b.d.max_model_len = 2048 << i;
    d.pp = b.d.pp = 1 + i % 2;
    assert_int_equal(kvp_ledger_eval(&d, &a, NULL), KVP_OK);
    assert_int_equal(kvp_ledger_eval_own_numbers(&b, NULL), KVP_OK);
    assert_memory_equal(&a, &b, kvp_ledger_size(&d));
  }
  kvp_diag diag = {{0}};
  d.utilization = 0;
  assert_int_equal(kvp_ledger_eval_numbers(&d, &b, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'utilization' must be in (0, 1], got 0");
}

/* TensorRT-LLM gives every layer one attention window, max_seq_len, unless
 * kv_cache_config.max_attention_window is set (resource_manager.py
 * KVCacheManager.__init__, NVIDIA/TensorRT-LLM 001541bad83b; engines.lua,
 * "TensorRT-LLM's attention windows"): a sliding layer holds every token.
 * gpt-oss-20b's shape, 40 GiB free, fraction 0.85: 36507222016 bytes of
 * 49152 a token (24 layers x 2048) = 742741 tokens, ceil(742741 / 32) =
 * 23211 blocks (calculateMaxNumBlocks' ceilDiv). */
static void trtllm_sliding_layers_hold_every_token(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  gpt_oss_like(&d);
  d.max_model_len = 1048576; /* max_context below answers the pool, not the model */
  d.budget = KVP_BUDGET_TRTLLM;
  d.utilization = 0.85;
  d.block = 32;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 23211);
  /* a request of 8192 tokens takes 256 blocks in every layer, the sliding
   * ones too (at their window: 12 x 5 + 12 x 256 of the 24 x 256, 177 requests) */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 90); /* 23211 // 256 */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 100, &n, &f), KVP_OK);
  assert_int_equal(n, 5802); /* 23211 // 4: the window does not matter below it */
  assert_int_equal(kvp_ledger_max_context(&l, 1, &n, &f), KVP_OK);
  assert_int_equal(n, 23211 * 32);
  /* vLLM's budget still frees the window's blocks: 28 GiB // (12 x 32768)
   * = 76458 blocks, (76458 - 1) // (512 + 9) a request */
  d.budget = KVP_BUDGET_VLLM;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 8192, &n, &f), KVP_OK);
  assert_int_equal(n, 146);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(eval_numbers_equals_eval),
    cmocka_unit_test(fit_limit_agrees_with_fit),
    cmocka_unit_test(ledger_sized_to_its_stages_answers_alike),
    cmocka_unit_test(groups_and_points_sized_to_the_deployment),
    cmocka_unit_test(seed_inputs_leave_4_gib_and_one_8k_request),
    cmocka_unit_test(true_4bit_weights_fit_16_requests_of_8k),
    cmocka_unit_test(weights_too_big_say_why_never_a_negative_count),
    cmocka_unit_test(reserve_beyond_usable_is_its_own_reason),
    cmocka_unit_test(tp_that_does_not_divide_heads_does_not_fit),
    cmocka_unit_test(tightest_pipeline_stage_decides),
    cmocka_unit_test(replicated_weights_stay_whole_on_every_rank),
    cmocka_unit_test(lora_slots_join_each_stage_weights),
    cmocka_unit_test(rotary_caches_join_each_stage_weights),
    cmocka_unit_test(sglang_alloc_slack_joins_the_weights),
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
    cmocka_unit_test(gemma3_groups_ten_layers_and_pads_the_sliding_type),
    cmocka_unit_test(vllm_logs_cache_tokens_per_group_and_the_max_usage_ratio),
    cmocka_unit_test(gpt_oss_alternating_layers_make_two_groups_of_twelve),
    cmocka_unit_test(pipeline_stages_hold_the_groups_layers_that_fall_on_them),
    cmocka_unit_test(mamba_states_raise_the_block_and_take_one_padded_page),
    cmocka_unit_test(unequal_pages_raise_the_smaller_block_or_are_refused),
    cmocka_unit_test(one_kv_type_and_kivi_keep_per_layer_pages),
    cmocka_unit_test(prefix_blocks_of_full_groups_are_held_once),
    cmocka_unit_test(eviction_and_length_points_apply_per_group),
    cmocka_unit_test(trtllm_sliding_layers_hold_every_token),
    cmocka_unit_test(system_memory_as_each_engine_sees_it),
  };
  return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
