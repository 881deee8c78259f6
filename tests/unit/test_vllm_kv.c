/* test_vllm_kv.c: vLLM's switches and overrides, its startup check and each
 * worker's view of the pool.
 *
 * Expected numbers come from vLLM's own tests, tests/v1/core/
 * test_kv_cache_utils.py (https://github.com/vllm-project/vllm/blob/
 * 002f10e0cfa1373a19a0d2756598a34b700d20e5/tests/v1/core/test_kv_cache_utils.py):
 * test_estimate_max_model_len, test_get_max_concurrency_for_kv_cache_config,
 * test_allocate_with_lookahead, test_get_kv_cache_config_one_worker,
 * test_get_kv_cache_configs_multiple_workers, test_get_kv_cache_configs_pp_sharding,
 * test_auto_fit_max_model_len (and _with_hybrid, _not_triggered,
 * _respects_num_gpu_blocks_override, _reserves_null_block);
 * and from vLLM's source where it has no test (named in each test). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

#define GiB 1073741824LL

/* A model of `layers` layers in runs (cyclic), no weights, on a GPU whose
 * whole memory is KV budget (utilization 1). */
static void deploy_runs(kvp_deploy *d, int64_t layers, int64_t kv_heads, int64_t head_dim,
                        const kvp_layer *runs, const int64_t *counts, int nruns) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, layers, 4096, 32, kv_heads, head_dim, NULL), KVP_OK);
  if (nruns > 0)
    assert_int_equal(kvp_model_set_pattern(&d->model, runs, counts, nruns, NULL), KVP_OK);
  d->gpu_bytes = 80 * GiB;
  d->utilization = 1.0;
}

/* Qwen1.5-7B's KV: 32 layers of 32 KV heads of 128, fp16: 512 KiB a token. */
static void qwen15_7b(kvp_deploy *d, int64_t max_model_len) {
  deploy_runs(d, 32, 32, 128, NULL, NULL, 0);
  d->max_model_len = max_model_len;
  d->max_num_batched_tokens = 32768;
  d->vllm.kv_cache_bytes = 8 * GiB; /* estimate_max_model_len(..., 8 * GiB_bytes) */
}

static void estimate_max_model_len_of_8_gib_is_16384(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_start c;
  /* ("Qwen/Qwen1.5-7B", 16385, 16384): one request of 16385 tokens needs
   * 1025 blocks of 32 x 256 KiB, more than 8 GiB; vLLM suggests 16384 */
  qwen15_7b(&d, 16385);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.max_model_len, 16384);
  assert_int_equal(c.needed, 1025LL * 32 * 16 * 524288 / 32);
  assert_int_equal(c.available, 8 * GiB);
  /* ("Qwen/Qwen1.5-7B", 16383, 16383): it starts, the estimate is the length */
  qwen15_7b(&d, 16383);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  assert_int_equal(c.max_model_len, 16383);
  /* kvplan's admission answer for one request keeps the null block aside:
   * 8 GiB holds 1024 blocks, 1023 usable, 16368 tokens */
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_context(&l, 1, &n, &f), KVP_OK);
  assert_int_equal(n, 1023 * 16);
  /* another budget rule has no vLLM check */
  d.vllm.kv_cache_bytes = 0;
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_EINVAL);
}

static void max_concurrency_follows_num_blocks_override(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t tokens, blocks, per;
  /* test_get_max_concurrency_for_kv_cache_config: max_model_len 16384,
   * max_num_batched_tokens 1024; 32 full layers and num_blocks 1536: 1.5 */
  qwen15_7b(&d, 16384);
  d.max_num_batched_tokens = 1024;
  d.vllm.kv_cache_bytes = 0;
  d.vllm.blocks_override = 1536;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(blocks, 1536);
  assert_int_equal(per, 1024); /* 1536 / 1024 = 1.5 */
  /* 32 sliding layers of window 1024 and num_blocks 129 x 3: 3 */
  kvp_layer sw[1] = {{.kind = KVP_SLIDING, .kv_heads = 32, .head_dim = 128, .head_dim_v = 128,
                      .window = 1024}};
  int64_t one[1] = {1};
  deploy_runs(&d, 32, 32, 128, sw, one, 1);
  d.max_model_len = 16384;
  d.max_num_batched_tokens = 1024;
  d.vllm.blocks_override = 129 * 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 129);
  assert_int_equal(blocks / per, 3);
  /* 32 full + 32 sliding, num_blocks (1024 + 129) x 3: 3 */
  kvp_layer hy[2] = {sw[0], {.kind = KVP_FULL, .kv_heads = 32, .head_dim = 128,
                             .head_dim_v = 128}};
  int64_t counts[2] = {1, 1};
  deploy_runs(&d, 64, 32, 128, hy, counts, 2);
  d.max_model_len = 16384;
  d.max_num_batched_tokens = 1024;
  d.vllm.blocks_override = (1024 + 129) * 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 1024 + 129);
  assert_int_equal(blocks, (1024 + 129) * 3);
  /* the pool the requests see is the override's, whatever the budget */
  assert_int_equal(l.stage[0].pool, (1024 + 129) * 3 * l.stage[0].block_bytes);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 16384, &n, &f), KVP_OK);
  assert_int_equal(n, 2); /* (3459 - the null block) // 1153 */
}

/* One request of max_model_len 512 on a pool of `blocks` blocks of 16
 * tokens: by measured memory (kv_cache_memory_bytes, override 0) or by
 * num_gpu_blocks_override on a pool the GPU holds many times over. */
static void pool_of(kvp_deploy *d, kvp_ledger *l, int64_t blocks, int override,
                    int check_override, int check_null_block) {
  deploy_runs(d, 1, 2, 64, NULL, NULL, 0);
  d->max_model_len = 512;
  assert_int_equal(kvp_ledger_eval(d, l, NULL), KVP_OK);
  int64_t block = l->stage[0].block_bytes;
  if (override) d->vllm.blocks_override = blocks;
  else d->vllm.kv_cache_bytes = blocks * block;
  d->vllm.check_override = check_override;
  d->vllm.check_null_block = check_null_block;
  assert_int_equal(kvp_ledger_eval(d, l, NULL), KVP_OK);
  assert_int_equal(l->stage[0].blocks, blocks);
}

static void the_check_plans_against_the_override_and_the_null_block(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_start c;
  int64_t block;
  /* vllm-project/vllm#47272's tests (tests/v1/core/test_kv_cache_utils.py):
   * test_kv_cache_reserves_null_block_for_max_model_len, use_override True
   * and False: a pool of 32 blocks of 16 for max_model_len 512 raises "max
   * seq len"; test_check_enough_kv_cache_memory_reserves_null_block: 32
   * blocks refused, 33 accepted. Its PR's end-to-end case: override 50,
   * block 16, max_model_len 800: "estimated maximum model length is 784" */
  for (int override = 0; override <= 1; override++) {
    pool_of(&d, &l, 32, override, 1, 1);
    block = l.stage[0].block_bytes;
    assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
    assert_int_equal(c.starts, 0);
    assert_int_equal(c.max_model_len, 31 * 16);
    assert_int_equal(c.needed, 32 * block);
    assert_int_equal(c.available, 31 * block);
    pool_of(&d, &l, 33, override, 1, 1);
    assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
    assert_int_equal(c.starts, 1);
    assert_int_equal(c.max_model_len, 512);
  }
  pool_of(&d, &l, 50, 1, 1, 1);
  d.max_model_len = 800;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.max_model_len, 784);
  /* before #47272 (#41069 alone): the override's 32 blocks hold the 32 a
   * request needs, the null block counted; 31 do not */
  pool_of(&d, &l, 32, 1, 1, 0);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  pool_of(&d, &l, 31, 1, 1, 0);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.max_model_len, 31 * 16);
  /* before #41069: the override plays no part in the check, the measured
   * memory (80 GiB here) does */
  pool_of(&d, &l, 1, 1, 0, 0);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  assert_int_equal(c.max_model_len, 512);
  /* a budget of exactly one block leaves nothing once the null block is
   * set aside: "No available memory for the cache blocks" */
  pool_of(&d, &l, 1, 0, 1, 1);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.max_model_len, 0);
}

/* test_get_kv_cache_config_one_worker's layers: pages of 16 x 2 x 64 x 4 x 2
 * = 16384 bytes (here 4 KV heads of 64 in bf16: 1024 bytes a token). */
#define PAGE 16384LL

static void one_worker(kvp_deploy *d, int64_t full, int64_t sliding, int64_t pages) {
  kvp_layer runs[2] = {{.kind = KVP_FULL, .kv_heads = 4, .head_dim = 64, .head_dim_v = 64},
                       {.kind = KVP_SLIDING, .kv_heads = 4, .head_dim = 64, .head_dim_v = 64,
                        .window = 128}};
  int64_t counts[2] = {full, sliding};
  deploy_runs(d, full + sliding, 4, 64, runs, counts, sliding > 0 ? 2 : 1);
  d->max_model_len = 16;
  d->vllm.kv_cache_bytes = PAGE * pages;
}

static void worker_tensors(const kvp_ledger *l, int64_t blocks, int64_t tensors) {
  kvp_vllm_stage w;
  assert_int_equal(l->fit.why, KVP_FITS);
  assert_int_equal(kvp_vllm_worker(l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.blocks, blocks);
  assert_int_equal(w.tensors, tensors);
}

static void one_worker_groups_and_the_hybrid_switch(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_stage w;
  /* all full, memory of 2 x 32 pages: 32 blocks, one tensor a layer */
  one_worker(&d, 2, 0, 2 * 32);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  worker_tensors(&l, 32, 2);
  assert_int_equal(kvp_vllm_worker(&l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.pool_bytes, 2 * 32 * PAGE);
  /* full + sliding with disable_hybrid_kv_cache_manager: one group, 32 */
  one_worker(&d, 1, 1, 2 * 32);
  d.vllm.disable_hybrid = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.promoted, 1);
  worker_tensors(&l, 32, 2);
  /* the same with the hybrid manager: one tensor of 64 blocks two groups share */
  d.vllm.disable_hybrid = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  worker_tensors(&l, 64, 1);
  assert_int_equal(kvp_vllm_worker(&l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.tensor_bytes, 64 * PAGE);
  /* 2 full + 4 sliding: 32 blocks, 2 tensors, 3 groups */
  one_worker(&d, 2, 4, 2 * 32);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.ngroups, 3);
  worker_tensors(&l, 32, 2);
  /* 3 full + 7 sliding, padded to 3 + 9: 32 blocks, 3 tensors, 4 groups */
  one_worker(&d, 3, 7, 3 * 32);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.ngroups, 4);
  worker_tensors(&l, 32, 3);
  /* 6 full + 5 sliding, padded to 6 + 6: 32 blocks, 6 tensors, 2 groups */
  kvp_layer runs[2] = {{.kind = KVP_FULL, .kv_heads = 4, .head_dim = 64, .head_dim_v = 64},
                       {.kind = KVP_SLIDING, .kv_heads = 4, .head_dim = 64, .head_dim_v = 64,
                        .window = 128}};
  int64_t counts[2] = {6, 5};
  deploy_runs(&d, 11, 4, 64, runs, counts, 2);
  d.max_model_len = 16;
  d.vllm.kv_cache_bytes = 6 * 32 * PAGE;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.group_size, 6);
  assert_int_equal(l.ngroups, 2);
  worker_tensors(&l, 32, 6);
  /* num_gpu_blocks_override = 16: 16 blocks, tensors of 16 pages */
  one_worker(&d, 2, 0, 2 * 32);
  d.vllm.blocks_override = 16;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  worker_tensors(&l, 16, 2);
  assert_int_equal(kvp_vllm_worker(&l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.pool_bytes, 2 * 16 * PAGE);
  assert_int_equal(w.unused_bytes, 2 * 16 * PAGE);
}

static void the_hybrid_switch_refuses_what_stays_hybrid(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  /* Mamba beside attention: unify_hybrid_kv_cache_specs raises */
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 1, .state_bytes = 1 << 20},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {3, 1};
  deploy_runs(&d, 32, 8, 128, runs, counts, 2);
  d.max_model_len = 4096;
  d.vllm.disable_hybrid = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "failed to convert the KV cache specs to one unified type"));
  /* chunked layers beside full ones become full attention: every token */
  runs[0] = (kvp_layer){.kind = KVP_CHUNKED, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128,
                        .window = 8192};
  deploy_runs(&d, 48, 8, 128, runs, counts, 2);
  d.max_model_len = 65536;
  d.vllm.disable_hybrid = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  int64_t seq;
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 65536, &seq), KVP_OK);
  assert_int_equal(seq, 48 * 4096 * 16 * 4096LL); /* 48 layers x 4096 blocks x a page */
  /* a vLLM switch under another budget rule is an error naming it */
  d.budget = KVP_BUDGET_TRTLLM;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "'disable_hybrid_kv_cache_manager' is a vLLM option"));
}

static void lookahead_slots_stop_at_max_model_len(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq;
  /* test_allocate_with_lookahead: block 4, 3 new tokens and 2 lookahead
   * take ceil(5 / 4) = 2 blocks; 3 + 4 take 2 */
  deploy_runs(&d, 1, 8, 128, NULL, NULL, 0);
  d.block = 4;
  d.max_model_len = 100;
  d.spec.tokens = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  int64_t page = l.page_bytes[0];
  assert_int_equal(page, 4 * 4096);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 3, &seq), KVP_OK);
  assert_int_equal(seq, 2 * page);
  d.spec.tokens = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 3, &seq), KVP_OK);
  assert_int_equal(seq, 2 * page);
  /* allocate_slots: min(computed + new + lookahead, max_model_len) slots,
   * so a request at max_model_len takes 25 blocks, not 26 */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 100, &seq), KVP_OK);
  assert_int_equal(seq, 25 * page);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 97, &seq), KVP_OK);
  assert_int_equal(seq, 25 * page);
}

static void max_num_seqs_caps_the_requests(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n;
  kvp_fit f;
  /* vllm/config/scheduler.py max_num_seqs: at most that many requests run */
  qwen15_7b(&d, 4096);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 1024, &n, &f), KVP_OK);
  assert_int_equal(n, 15); /* 1023 usable blocks of 8 MiB // 64 a request */
  d.vllm.max_num_seqs = 8;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 1024, &n, &f), KVP_OK);
  assert_int_equal(n, 8);
  assert_int_equal(kvp_ledger_fit(&l, 1024, 9, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_SEQS);
  char buf[128];
  kvp_fit_explain(&f, buf, sizeof buf);
  assert_string_equal(buf, "concurrency 9 exceeds max_num_seqs 8");
  assert_string_equal(kvp_why_name(f.why), "max_num_seqs");
  /* the cap on the answer is reported with what the KV cache holds, and the
   * sweeps' fit limit stops at it */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 1024, &n, &f), KVP_OK);
  assert_int_equal(f.why, KVP_WHY_SEQS);
  assert_int_equal(f.need, 15);
  kvp_fit_explain(&f, buf, sizeof buf);
  assert_string_equal(buf, "vLLM's scheduler runs at most max_num_seqs 8 requests (the KV cache "
                           "holds 15)");
  assert_int_equal(kvp_ledger_fit_limit(&l, 1024, &n), KVP_OK);
  assert_int_equal(n, 8);
  /* below the KV's answer the cap is not the limit */
  d.vllm.max_num_seqs = 20;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 1024, &n, &f), KVP_OK);
  assert_int_equal(n, 15);
  assert_int_equal(f.why, KVP_FITS);
}

/* Whisper large-v3's decoder: 32 self- and 32 cross-attention layers of 20
 * heads of 64 in fp16, 1500 encoder tokens, max_model_len 448, on 6300
 * blocks of 32 pages of 80 KiB. */
static void whisper_decoder(kvp_deploy *d) {
  kvp_layer runs[2] = {{.kind = KVP_FULL, .kv_heads = 20, .head_dim = 64, .head_dim_v = 64},
                       {.kind = KVP_CROSS, .kv_heads = 20, .head_dim = 64, .head_dim_v = 64,
                        .window = 1500}};
  int64_t counts[2] = {1, 1};
  deploy_runs(d, 64, 20, 64, runs, counts, 2);
  d->kv = (kvp_format){.bits = 16};
  d->max_model_len = 448;
  d->gpu_bytes = 6300LL * 32 * 81920;
}

/* Cross-attention (encoder-decoder models): vllm/v1/kv_cache_interface.py
 * at 001cabc1be16a59a70d720ed61a13b678c060a18, CrossAttentionSpec:
 * page_size_bytes = 2 x block x kv_heads x head_size x dtype bytes (the
 * AttentionSpec page), max_memory_usage_bytes = cdiv(max_num_encoder_input_
 * tokens, block) x page; CrossAttentionManager allocates the encoder's
 * tokens when the request starts and shares nothing. is_uniform_type puts
 * cross-attention apart from full attention, so a decoder of self- and
 * cross-attention layers is two KV types. Shapes: Whisper large-v3's
 * decoder (20 heads of 64, fp16, 32 layers of each, 1500 encoder tokens). */
static void cross_attention_caches_the_encoder_once(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_start c;
  whisper_decoder(&d);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(l.ntype, 2);
  assert_int_equal(l.page, 2 * 16 * 20 * 64 * 2); /* 81920 */
  assert_int_equal(l.group_size, 32);
  assert_int_equal(l.ngroups, 2);
  assert_int_equal(l.stage[0].blocks, 6300);
  int64_t one, full;
  /* a request of one token already holds the encoder's 94 blocks */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1, &one), KVP_OK);
  assert_int_equal(one, (1 + 94) * 32LL * 81920);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 448, &full), KVP_OK);
  assert_int_equal(full, (28 + 94) * 32LL * 81920);
  /* the startup check: cdiv(448, 16) + cdiv(1500, 16) blocks per group */
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  assert_int_equal(c.needed, 122LL * 32 * 81920);
  int64_t tokens, blocks, per;
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 122);
  assert_int_equal(tokens, 6300 / 2 * 16);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 448, &n, &f), KVP_OK);
  assert_int_equal(n, 6299 / 122); /* the null block aside */
  /* the switch cannot make one type of them */
  d.vllm.disable_hybrid = 1;
  kvp_diag diag;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "CrossAttentionSpec"));
}

/* V0's block manager (vllm.v0_blocks, the releases before V1's KV cache
 * groups): one pool, every block spanning all 64 layers; a request takes
 * its decoder tokens' blocks and the encoder's 1500 tokens' cross blocks
 * (cross_block_tables), each of every layer. The same Whisper decoder. */
static void v0_cross_blocks_span_every_layer(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  whisper_decoder(&d);
  d.vllm.v0_blocks = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  assert_int_equal(l.stage[0].block_bytes, 64LL * 81920);
  assert_int_equal(l.stage[0].blocks, 3150);
  int64_t one, full;
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1, &one), KVP_OK);
  assert_int_equal(one, (1 + 94) * 64LL * 81920);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 448, &full), KVP_OK);
  assert_int_equal(full, (28 + 94) * 64LL * 81920);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 448, &n, &f), KVP_OK);
  assert_int_equal(n, 3149 / 122); /* the null block aside */
}

static void workers_end_with_the_fewest_blocks(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_stage w;
  /* test_get_kv_cache_configs_multiple_workers, "Different available
   * memory. This is the case for TP": 2 layers on workers of 2 x 10 and
   * 2 x 20 pages: num_blocks 10 on both, tensors of 10 pages */
  deploy_runs(&d, 2, 4, 64, NULL, NULL, 0);
  d.model.spec[0].head_dim_v = 64;
  d.max_model_len = 16;
  d.gpu_bytes = 2 * 20 * PAGE;
  d.vllm.stage_gpu_bytes[0] = 2 * 10 * PAGE; /* the stage's smaller GPU */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_worker(&l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.own_blocks, 10);
  assert_int_equal(w.blocks, 10);
  assert_int_equal(w.pool_bytes, 2 * 10 * PAGE);
  assert_int_equal(kvp_vllm_worker(&l, 0, 2 * 20 * PAGE, &w), KVP_OK); /* the larger GPU */
  assert_int_equal(w.own_blocks, 20);
  assert_int_equal(w.blocks, 10);
  assert_int_equal(w.unused_bytes, 2 * 10 * PAGE);
  /* test_get_kv_cache_configs_pp_sharding (asymmetric): max_model_len 512,
   * one layer a stage, workers of 33 and 66 pages: 33 blocks on both */
  deploy_runs(&d, 2, 4, 64, NULL, NULL, 0);
  d.max_model_len = 512;
  d.pp = 2;
  d.gpu_bytes = 66 * PAGE;
  d.vllm.stage_gpu_bytes[0] = 33 * PAGE;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_vllm_start c;
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1); /* each worker checks its own layers */
  for (int32_t s = 0; s < 2; s++) {
    assert_int_equal(kvp_vllm_worker(&l, s, 0, &w), KVP_OK);
    assert_int_equal(w.blocks, 33);
    assert_int_equal(w.tensors, 1);
    assert_int_equal(w.pool_bytes, 33 * PAGE);
  }
  assert_int_equal(kvp_vllm_worker(&l, 1, 0, &w), KVP_OK);
  assert_int_equal(w.own_blocks, 66);
  assert_int_equal(w.unused_bytes, 33 * PAGE);
}

static void overrides_that_outgrow_the_gpu_do_not_fit(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  /* kv_cache_memory_bytes ignores gpu_memory_utilization: the whole GPU is
   * usable; asking for more than it holds beside the weights is refused */
  qwen15_7b(&d, 4096);
  d.utilization = 0.5;
  d.weight_bytes = 15 * GiB;
  d.vllm.kv_cache_bytes = 60 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
  assert_int_equal(l.stage[0].kv_budget, 60 * GiB);
  assert_int_equal(l.stage[0].usable, 80 * GiB);
  d.vllm.kv_cache_bytes = 70 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_OVERCOMMIT);
  assert_int_equal(l.fit.need, 85 * GiB);
  assert_int_equal(l.fit.have, 80 * GiB);
  /* so is an override of more blocks than the GPU holds */
  d.vllm.kv_cache_bytes = 0;
  d.utilization = 0.9;
  d.vllm.blocks_override = 5000; /* 5000 x 8 MiB = 39 GiB: fits */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
  d.vllm.blocks_override = 9000; /* 70.3 GiB beside 15 GiB of weights */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_WHY_OVERCOMMIT);
  assert_int_equal(l.fit.need, 15 * GiB + 9000 * 8388608LL);
}

static void decode_context_parallel_splits_a_requests_tokens(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  int64_t seq, tokens, blocks, per;
  /* two MLA layers (512 + 64 bf16 elements: 1152 bytes a token, a page of
   * 18432) at tp 2 and decode_context_parallel_size 2, 100 blocks */
  kvp_layer mla[1] = {{.kind = KVP_MLA, .latent = 512, .rope_dim = 64}};
  int64_t one[1] = {1};
  deploy_runs(&d, 2, 8, 128, mla, one, 1);
  d.tp = 2;
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 100 * 2 * 18432;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &seq), KVP_OK);
  assert_int_equal(seq, 63 * 2 * 18432); /* cdiv(1000, 16) blocks */
  d.vllm.dcp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100); /* the same pages on each rank */
  /* SingleTypeKVCacheManager: block_size *= dcp: cdiv(1000, 32) blocks */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &seq), KVP_OK);
  assert_int_equal(seq, 32 * 2 * 18432);
  /* _report_kv_cache_config multiplies the tokens by dcp; the max usage of
   * a request counts cdiv(4096, 2) tokens: 128 blocks */
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 100 * 16 * 2);
  assert_int_equal(per, 128);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 99 * 32);
  /* GQA: dcp must divide tp / kv_heads (the copies of each head) */
  deploy_runs(&d, 2, 2, 128, NULL, NULL, 0);
  d.tp = 8;
  d.vllm.dcp = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK); /* 4 copies of 2 heads */
  d.vllm.dcp = 8;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "decode_context_parallel_size 8 needs that many copies of each "
                                "of the 2 KV heads at tp 8: dcp must divide tp / kv_heads");
  d.vllm.dcp = 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "must divide tensor parallel size 8"));
  /* beside Mamba layers the attention groups split the tokens and the Mamba
   * groups stay at dcp 1 (dcp_world_size_for_kv_cache_spec, vllm/v1/core/
   * kv_cache_coordinator.py at 00b08dc44519): one full layer of 2 KV heads
   * of 128 (replicated at tp 4: a page of 16 x 2 x 128 x 2 = 8192 bytes) and
   * one state of 8192 bytes a GPU, 100 blocks of one page each */
  kvp_layer hy[2] = {{.kind = KVP_FULL, .kv_heads = 2, .head_dim = 128, .head_dim_v = 128},
                     {.kind = KVP_STATE, .kv_heads = 2, .state_bytes = 16384}};
  int64_t both[2] = {1, 1};
  deploy_runs(&d, 2, 2, 128, hy, both, 2);
  d.tp = 4;
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 100 * 8192;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &seq), KVP_OK);
  assert_int_equal(seq, (63 + 1) * 8192); /* cdiv(1000, 16) blocks and the state's */
  d.vllm.dcp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100);
  assert_int_equal(l.stage[0].block_bytes, 8192);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &seq), KVP_OK);
  assert_int_equal(seq, (32 + 1) * 8192); /* cdiv(1000, 32), the state still one block */
  /* a max_model_len request: cdiv(cdiv(4096, 2), 16) = 128 pages and the
   * state (_max_memory_usage_bytes_from_groups); "GPU KV cache size":
   * 100 // 2 groups x the smallest spec block 16 x dcp 2 */
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 128 + 1);
  assert_int_equal(tokens, 100 / 2 * 16 * 2);
  kvp_vllm_start c;
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.needed, 129 * 8192);
  /* a model of Mamba layers alone has no tokens to split */
  deploy_runs(&d, 2, 2, 128, &hy[1], one, 1);
  d.tp = 4;
  d.vllm.dcp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "without full attention or MLA layers"));
  /* sliding windows refuse it */
  kvp_layer sw[1] = {{.kind = KVP_SLIDING, .kv_heads = 2, .head_dim = 128, .head_dim_v = 128,
                      .window = 4096}};
  deploy_runs(&d, 2, 2, 128, sw, one, 1);
  d.tp = 8;
  d.vllm.dcp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "SlidingWindowSpec asserts"));
}

static void the_hidden_state_cache_beside_a_hybrid_target(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  int64_t with, without;
  /* 2 full and 4 sliding layers of 8 KV heads of 128 in bf16 (pages of
   * 65536 bytes at block 16: 3 groups of 2 layers) and extract_hidden_states'
   * cache of 3 hidden states of 4096 (24576 bytes a token): its own group,
   * block the largest divisor of gcd(16, 16) within 65536 // 24576 = 2
   * (get_kv_cache_groups: "Add hidden-state layers back with page aligned
   * to the common page"), the page padded to 65536 */
  kvp_layer runs[2] = {{.kind = KVP_SLIDING, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128,
                        .window = 4096},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {2, 1};
  deploy_runs(&d, 6, 8, 128, runs, counts, 2);
  d.max_model_len = 8192;
  d.vllm.kv_cache_bytes = 1000 * 131072LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.ngroups, 3);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &without), KVP_OK);
  d.spec.tokens = 1;
  d.spec.draft_layers = 1;
  d.spec.draft = (kvp_layer){.kind = KVP_MLA, .latent = 3 * 4096, .kv_auto = 1};
  d.spec.hidden_cache = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.ngroups, 4);
  assert_int_equal(l.group_size, 2); /* the target's: the cache adds no layer slot */
  assert_int_equal(l.page, 65536);
  assert_int_equal(l.stage[0].block_bytes, 131072);
  const kvp_kv_type *hs = NULL;
  for (int32_t t = 0; t < l.ntype; t++)
    if (kvp_ledger_types(&l)[t].draft_only) hs = &kvp_ledger_types(&l)[t];
  assert_non_null(hs);
  assert_int_equal(hs->block, 2);
  assert_int_equal(hs->groups, 1);
  assert_int_equal(hs->padded, 1);
  /* a request of 1000 tokens takes cdiv(1000 + its speculative slot, 2)
   * blocks more (cdiv(1001, 16) = 63 in the full group, as before) */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 1000, &with), KVP_OK);
  assert_int_equal(with - without, 501 * 131072LL);
  /* beside full attention alone it is one KV type with the target's layers
   * (UniformTypeKVCacheSpecs: an MLAAttentionSpec is a FullAttentionSpec) */
  deploy_runs(&d, 6, 8, 128, NULL, NULL, 0);
  d.max_model_len = 8192;
  d.spec.tokens = 1;
  d.spec.draft_layers = 1;
  d.spec.draft = (kvp_layer){.kind = KVP_MLA, .latent = 3 * 4096, .kv_auto = 1};
  d.spec.hidden_cache = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 0);
  /* a token wider than the page is not modelled (#50894 raises the blocks) */
  deploy_runs(&d, 6, 8, 128, runs, counts, 2);
  d.spec.tokens = 1;
  d.spec.draft_layers = 1;
  d.spec.draft = (kvp_layer){.kind = KVP_MLA, .latent = 12 * 4096, .kv_auto = 1};
  d.spec.hidden_cache = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "vllm-project/vllm#50894"));
}

static void kv_cache_groups_given_by_hand(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_diag diag = {{0}};
  int64_t seq, tokens, blocks, per;
  /* KVCacheGroupSpec(["layer1"], FullAttentionSpec(block_size=32, 1 KV head))
   * and KVCacheGroupSpec(["layer2"], FullAttentionSpec(block_size=16, 2 KV
   * heads)), as vLLM's tests build a KVCacheConfig: pages of 32 x 2 x 128 x 2 =
   * 16 x 2 x 2 x 128 x 2 = 16384 bytes, one layer a group */
  kvp_layer runs[2] = {{.kind = KVP_FULL, .kv_heads = 1, .head_dim = 128, .head_dim_v = 128},
                       {.kind = KVP_FULL, .kv_heads = 2, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {1, 1};
  deploy_runs(&d, 2, 2, 128, runs, counts, 2);
  d.max_model_len = 4096;
  d.vllm.blocks_override = 100;
  d.vllm.ngiven = 2;
  d.vllm.given_block[0] = 32;
  d.vllm.given_block[1] = 16;
  d.vllm.group_of[0] = 1;
  d.vllm.group_of[1] = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(l.ngroups, 2);
  assert_int_equal(l.stage[0].block_bytes, 16384);
  /* 100 tokens: cdiv(100, 32) + cdiv(100, 16) blocks */
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 100, &seq), KVP_OK);
  assert_int_equal(seq, (4 + 7) * 16384);
  /* a max_model_len request: 128 + 256 blocks; GPU KV cache size 100 // 2 x 16 */
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 128 + 256);
  assert_int_equal(tokens, 100 / 2 * 16);
  /* one page size (get_uniform_page_size), every KV layer in a group */
  d.vllm.given_block[0] = 16;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "one page size"));
  d.vllm.given_block[0] = 32;
  d.vllm.group_of[1] = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "layer 2 (full) is in no group"));
}

static void data_and_expert_parallel_cut_the_experts(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  /* 100 GiB of weights, 80 of them 10 routed experts a layer, tp 2: vLLM's
   * FusedMoEParallelConfig.make cuts the experts across dp x tp GPUs
   * (flatten_tp_across_dp), the rest splits over tp in every engine */
  deploy_runs(&d, 4, 8, 128, NULL, NULL, 0);
  d.gpu_bytes = 141 * GiB;
  d.tp = 2;
  d.weight_bytes = 100 * GiB;
  d.vllm.experts = 10;
  d.vllm.expert_bytes = 80 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 50 * GiB); /* no dp, no ep: as before */
  d.vllm.dp = 2; /* experts split like TP over 4 GPUs */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 10 * GiB + 20 * GiB);
  d.vllm.ep = 1; /* whole experts: ceil(10 / 4) = 3 on the fullest GPU */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 10 * GiB + 24 * GiB);
  d.vllm.dp = 1; /* tp + ep: ep_size = 2, 5 experts each */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 10 * GiB + 40 * GiB);
  /* the KV pool is the engine's: the same per GPU whatever dp */
  d.vllm.ep = 0;
  d.vllm.dp = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].kv_budget, (int64_t)(141 * GiB) - 10 * GiB - 10 * GiB);
  d.vllm.experts = 0;
  d.vllm.ep = 1;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "needs a MoE model"));
}

static void attention_free_and_state_only_models(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t n, tokens, blocks, per, seq;
  kvp_fit f;
  /* test_get_kv_cache_configs_attention_free: no KV spec, num_blocks 1, no
   * tensors; nothing in the KV cache limits the requests */
  kvp_layer none[1] = {{.kind = KVP_NONE}};
  int64_t one[1] = {1};
  deploy_runs(&d, 4, 8, 128, none, one, 1);
  d.max_model_len = 4096;
  d.weight_bytes = 80 * GiB; /* even with no memory left for KV */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.fit.why, KVP_FITS);
  assert_int_equal(l.stage[0].blocks, 1);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 0);
  kvp_vllm_stage w;
  assert_int_equal(kvp_vllm_worker(&l, 0, 0, &w), KVP_OK);
  assert_int_equal(w.blocks, 1);
  assert_int_equal(w.tensors, 0);
  assert_int_equal(w.pool_bytes, 0);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, INT64_MAX);
  d.vllm.max_num_seqs = 256;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, 256);
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_EINVAL);
  /* recurrent layers alone: MambaSpec pages of the state's bytes, one KV
   * type, the null block kept, 1 + g pages a request, block max_model_len */
  kvp_layer mamba[1] = {{.kind = KVP_STATE, .kv_heads = 8, .state_bytes = 1 << 20}};
  deploy_runs(&d, 4, 8, 128, mamba, one, 1);
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 4 * (1 << 20) * 100LL; /* 100 pages of 4 layers */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.state_pages, 1);
  assert_int_equal(l.stage[0].block_bytes, 4 << 20);
  assert_int_equal(l.stage[0].blocks, 100);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, 99);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 100 * 4096); /* num_blocks x mamba_block_size */
  assert_int_equal(per, 1);
  d.spec.tokens = 2; /* num_speculative_blocks */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 100, &seq), KVP_OK);
  assert_int_equal(seq, 3 * (4 << 20));
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, 33);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(per, 3);
}

static void mla_block_stride_alignment_rounds_the_block(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq;
  /* three MLA layers in fp8_ds_mla (656 bytes a token), block 16: pages of
   * 10496, a block of 31488 bytes; a backend's 512-byte block stride
   * alignment rounds it up to 31744 (_get_kv_cache_bytes_per_block:
   * round_up(bytes_per_block, lcm of the MLA specs' block_stride_alignment),
   * vllm/v1/core/kv_cache_utils.py at 002f10e0cfa1) */
  kvp_layer mla[1] = {{.kind = KVP_MLA, .latent = 512, .rope_dim = 64}};
  int64_t one[1] = {1};
  deploy_runs(&d, 3, 8, 128, mla, one, 1);
  d.kv = (kvp_format){8, 128, 32, 0, 16, 0, 0, 0, 0, 0, 0};
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 31488 * 100;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 31488);
  assert_int_equal(l.stage[0].blocks, 100);
  d.vllm.stride_align = 512;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 31744);
  assert_int_equal(l.stage[0].blocks, 99);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 17, &seq), KVP_OK);
  assert_int_equal(seq, 2 * 31744);
  int64_t n;
  kvp_fit f;
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, 0); /* 98 usable blocks, 256 a request */
  assert_int_equal(kvp_ledger_max_concurrency(&l, 1024, &n, &f), KVP_OK);
  assert_int_equal(n, 1); /* 98 // 64 */
  /* layers other than MLA are not rounded */
  deploy_runs(&d, 3, 8, 128, NULL, NULL, 0);
  d.vllm.stride_align = 100000;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 3 * 16 * 4096);
  d.spec.tokens = 1;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "block_stride_alignment"));
}

/* TurboQuant KV formats (vllm-project/vllm at 1471680b24719d9d3b2fe1235878196142af89cc,
 * https://github.com/vllm-project/vllm/blob/1471680b24719d9d3b2fe1235878196142af89cc/
 * vllm/model_executor/layers/quantization/turboquant/config.py TQ_PRESETS,
 * key_packed_size, value_packed_size, slot_size_aligned; get_boundary_skip_layers;
 * TQFullAttentionSpec.real_page_size_bytes in vllm/v1/kv_cache_interface.py at
 * 001cabc1be16): head 128, k8v4 128 + (64 + 4) = 196 bytes a slot, 4bit_nc
 * (64 + 2) + 68 = 134, k3v4_nc (48 + 2) + 68 = 118, 3bit_nc 50 + (48 + 4) = 102;
 * head 96, 3bit_nc (36 + 2) + (36 + 4) = 78; head 80, k3v4_nc (30 + 2) + (40 + 4)
 * = 76; head 100, 3bit_nc (38 + 2) + (38 + 4) = 82; head 99, k8v4 99 + (50 + 4)
 * = 153, rounded up to 154. A dense model keeps layers 0, 1, L-2, L-1 in the
 * model dtype; a model of attention and Mamba layers none. */
static void turboquant_slots_and_boundary_layers(void **state) {
  (void)state;
  kvp_format k8v4 = {8, 0, 0, 0, 0, 8, 4, 0, 0, 0, 0}, b4 = {8, 0, 0, 0, 0, 4, 4, 0, 0, 0, 0};
  kvp_format k3v4 = {8, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0}, b3 = {8, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0};
  assert_int_equal(kvp_format_tq_slot(&k8v4, 128), 196);
  assert_int_equal(kvp_format_tq_slot(&b4, 128), 134);
  assert_int_equal(kvp_format_tq_slot(&k3v4, 128), 118);
  assert_int_equal(kvp_format_tq_slot(&b3, 128), 102);
  assert_int_equal(kvp_format_tq_slot(&b3, 96), 78);
  assert_int_equal(kvp_format_tq_slot(&k3v4, 80), 76);
  assert_int_equal(kvp_format_tq_slot(&b3, 100), 82);
  assert_int_equal(kvp_format_tq_slot(&k8v4, 99), 154);
  kvp_format bad = {8, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_format_check(&bad, "kv", NULL), KVP_EINVAL);

  /* 32 layers of 8 KV heads of 128 (Llama-3.1-8B's shape), turboquant_k8v4 at
   * tp 1: 28 layers of 8 x 196 bytes a token and 4 of 8 x 2 x 128 x 2 */
  kvp_deploy d;
  kvp_ledger l;
  deploy_runs(&d, 32, 8, 128, NULL, NULL, 0);
  d.kv = k8v4;
  d.max_model_len = 8192;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 16 * (28 * 8 * 196 + 4 * 8 * 512));
  int64_t n_auto = 0;
  for (int64_t i = 0; i < 32; i++) {
    int a = (int)l.d.model.spec[l.d.model.layer_spec[i]].kv_auto;
    n_auto += a;
    assert_int_equal(a, i < 2 || i >= 30);
  }
  assert_int_equal(n_auto, 4);
  /* three layers: min(2, 3 / 2) = 1 at each end */
  deploy_runs(&d, 3, 8, 128, NULL, NULL, 0);
  d.kv = b3;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 16 * (8 * 102 + 2 * 8 * 512));
  /* attention beside Mamba states: no boundary layers */
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 8, .state_bytes = 1 << 20},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {3, 1};
  deploy_runs(&d, 8, 8, 128, runs, counts, 2);
  d.kv = k3v4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  for (int64_t i = 0; i < 8; i++)
    assert_int_equal(l.d.model.spec[l.d.model.layer_spec[i]].kv_auto, 0);
  /* refused beside sliding layers, and under another engine's budget */
  kvp_layer sw[2] = {{.kind = KVP_SLIDING, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128,
                      .window = 1024},
                     {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t swc[2] = {5, 1};
  deploy_runs(&d, 12, 8, 128, sw, swc, 2);
  d.kv = k8v4;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "sliding"));
  deploy_runs(&d, 32, 8, 128, NULL, NULL, 0);
  d.kv = k8v4;
  d.budget = KVP_BUDGET_SGLANG;
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "vllm"));
}

/* Static attention sinks (https://github.com/vllm-project/vllm/blob/
 * 001cabc1be16a59a70d720ed61a13b678c060a18/vllm/v1/core/single_type_kv_cache_manager.py
 * SinkFullAttentionManager.__init__: assert sink_len % block_size == 0, then
 * free_block_queue.popleft_n(sink_len // block_size); SinkFullAttentionSpec in
 * vllm/v1/kv_cache_interface.py keeps FullAttentionSpec's pages and
 * max_memory_usage_bytes). 8 layers of 8 KV heads of 128 (K 192, V 128 as
 * openPangu's qk_nope_dim + qk_rope_dim and v_channels), bf16, sink_len 32 at
 * block 16: a page of 16 x 8 x (192 + 128) x 2 = 81920 bytes a layer; 1000
 * blocks of memory keep the null block and 2 sink blocks out of use: 997 x 16
 * tokens; vLLM's log counts the 1000 blocks. */
static void static_sinks_take_blocks_once(void **state) {
  (void)state;
  kvp_layer sink[1] = {{.kind = KVP_FULL, .kv_heads = 8, .head_dim = 192, .head_dim_v = 128,
                        .sink = 32}};
  int64_t one[1] = {1};
  kvp_deploy d;
  kvp_ledger l;
  deploy_runs(&d, 8, 8, 128, sink, one, 1);
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 1000LL * 8 * 81920;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].block_bytes, 8 * 81920);
  assert_int_equal(l.stage[0].blocks, 1000);
  assert_int_equal(l.null_blocks, 3);
  assert_int_equal(kvp_ledger_kv_tokens(&l), 997 * 16);
  int64_t tokens, blocks, per;
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 1000 * 16);
  assert_int_equal(per, 4096 / 16); /* no sink in max_memory_usage_bytes */
  /* a sink that is not whole blocks is refused, as vLLM asserts */
  sink[0].sink = 24;
  deploy_runs(&d, 8, 8, 128, sink, one, 1);
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_ledger_eval(&d, &l, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "multiple of the block of 16"));
  /* block 32: one sink block */
  sink[0].sink = 32;
  deploy_runs(&d, 8, 8, 128, sink, one, 1);
  d.block = 32;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.null_blocks, 2);
}

/* mamba_cache_mode align and all for a model of Mamba layers alone
 * (vllm/model_executor/models/config.py MambaModelConfig.verify_and_update_config,
 * in a revision read without its commit: with prefix caching mamba_block_size
 * defaults to the cache's block_size; https://github.com/vllm-project/vllm/blob/
 * 001cabc1be16a59a70d720ed61a13b678c060a18/vllm/v1/kv_cache_interface.py
 * MambaSpec.max_memory_usage_bytes: align 2 +
 * the speculative pages, all cdiv(max_model_len, block) pages). 4 layers of a
 * 1 MiB state, 100 pages of memory, block 16, max_model_len 4096. */
static void mamba_alone_align_and_all(void **state) {
  (void)state;
  kvp_layer mamba[1] = {{.kind = KVP_STATE, .kv_heads = 8, .state_bytes = 1 << 20}};
  int64_t one[1] = {1}, n, tokens, blocks, per, seq;
  kvp_fit f;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_start c;
  deploy_runs(&d, 4, 8, 128, mamba, one, 1);
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 4 * (1 << 20) * 100LL;
  d.vllm.mamba_mode = KVP_MAMBA_ALIGN;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_max_concurrency(&l, 4096, &n, &f), KVP_OK);
  assert_int_equal(n, 99 / 2); /* 2 pages a request */
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 100 * 16); /* num_blocks x mamba_block_size (16) */
  assert_int_equal(per, 2);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  /* all: a state every 16 tokens; 4096 tokens want 256 pages, more than 100 */
  d.vllm.mamba_mode = KVP_MAMBA_ALL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 100, &seq), KVP_OK);
  assert_int_equal(seq, 7 * 4 * (1 << 20)); /* cdiv(100, 16) states a layer */
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.needed, 256LL * 4 * (1 << 20));
  assert_int_equal(c.max_model_len, 1600); /* 100 pages x 16 */
  /* mamba_block_size 64: 64 pages */
  d.vllm.mamba_chunk = 64;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  assert_int_equal(kvp_ledger_vllm_log(&l, &tokens, &blocks, &per), KVP_OK);
  assert_int_equal(tokens, 100 * 64);
  assert_int_equal(per, 64);
}

/* vllm/platforms/interface.py _align_hybrid_block_size at c77619938d1c
 * (vllm-project/vllm#37467, option block_grain): the block of a model of
 * attention and Mamba layers grows in multiples of max(16, the given block).
 * vllm-project/vllm#41037's NVIDIA-Nemotron-3-Nano-30B-A3B-FP8 at TP 1: one
 * token of attention is 2 KV heads x 128 x 2 (K, V) x 1 byte = 512 bytes, a
 * state 2134016 bytes: 32 x cdiv(2134016, 32 x 512) = 32 x 131 = 4192 under
 * --block-size 32, where a grain of 16 gives 16 x cdiv(2134016, 8192) = 16 x
 * 261 = 4176; at TP 4 (1 KV head, a state of 533504 bytes): 32 x
 * cdiv(533504, 8192) = 32 x 66 = 2112, against 16 x 131 = 2096. */
static void a_given_block_is_the_hybrid_grain(void **state) {
  (void)state;
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 64, .state_bytes = 2134016},
                       {.kind = KVP_FULL, .kv_heads = 2, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {1, 1};
  kvp_deploy d;
  kvp_ledger l;
  deploy_runs(&d, 2, 2, 128, runs, counts, 2);
  d.kv = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d.max_model_len = 8192;
  d.block = 32;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 4176); /* the grain of 16 (before #37467) */
  d.vllm.block_grain = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 4192);
  assert_int_equal(l.page, 4192 * 512);
  d.tp = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 2112);
  d.vllm.block_grain = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 2096);
  /* the default block of 16 is the kernel's grain either way */
  d.block = 16;
  d.tp = 1;
  d.vllm.block_grain = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.d.block, 4176);
}

/* V0's CacheEngine on CUDA (vllm-project/vllm#12676, vllm/worker/
 * cache_engine.py get_cache_block_size): an MLA entry of 512 + 64 elements
 * is allocated as align_to_256bytes(576, bf16) = 640 elements. Two layers,
 * block 16, bf16: a page of 16 x 640 x 2 = 20480 bytes a layer, a block of
 * 40960 (18432 a layer unpadded); an fp8 cache pads at the model dtype's
 * 128 elements too: 640 bytes a token. Other layers are not padded. */
static void v0_pads_mla_entries_to_256_bytes(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  int64_t seq;
  kvp_layer mla[1] = {{.kind = KVP_MLA, .latent = 512, .rope_dim = 64}};
  int64_t one[1] = {1};
  deploy_runs(&d, 2, 8, 128, mla, one, 1);
  d.max_model_len = 4096;
  d.vllm.kv_cache_bytes = 100 * 40960;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100 * 40960 / 36864); /* 111 unpadded */
  d.vllm.mla_entry_align = 128;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100);
  assert_int_equal(kvp_ledger_seq_bytes(&l, 0, 17, &seq), KVP_OK);
  assert_int_equal(seq, 2 * 40960);
  d.kv = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d.vllm.kv_cache_bytes = 100 * 2 * 16 * 640;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100);
  /* full attention: 8 heads of 128 bf16 K and V, 4096 bytes a token */
  deploy_runs(&d, 2, 8, 128, NULL, NULL, 0);
  d.max_model_len = 4096;
  d.vllm.mla_entry_align = 128;
  d.vllm.kv_cache_bytes = 100 * 2 * 16 * 4096;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].blocks, 100);
}

/* --max-model-len auto (vllm-project/vllm#29431; the rule: ledger.c
 * eval_checked), vLLM's tests at 002f10e0cfa1 (tests/v1/core/
 * test_kv_cache_utils.py): two full layers of 2 KV heads of 64 in fp32,
 * pages of 16384 bytes, a derived max_model_len of 1024. */
static void auto_fit(kvp_deploy *d, int64_t layers, int64_t derived, int64_t pages) {
  deploy_runs(d, layers, 2, 64, NULL, NULL, 0);
  d->kv = (kvp_format){32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d->model.max_context = derived;
  d->vllm.kv_cache_bytes = pages * 16384;
  d->vllm.auto_fit = 1;
  d->vllm.check_override = 1;
  d->vllm.check_null_block = 1;
}

static void max_model_len_auto_fits_the_kv_memory(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_vllm_start c;
  /* test_auto_fit_max_model_len: memory of 2 x 1024 pages keeps 1024 */
  auto_fit(&d, 2, 1024, 2 * 1024);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 1024);
  /* 2 x 32 pages: "reduced ... < 1024, > 0": 32 blocks less the null
   * block hold 31 x 16 tokens */
  auto_fit(&d, 2, 1024, 2 * 32);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 31 * 16);
  assert_int_equal(l.d.max_model_len, 0);  /* the deployment's own, derived */
  assert_int_equal(l.d.vllm.auto_fit, 1);
  assert_int_equal(l.stage[0].blocks, 32); /* the pool is sized from all the memory */
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 1);
  assert_int_equal(c.max_model_len, 31 * 16);
  /* the same ledger evaluated again from its own deployment fits again */
  assert_int_equal(kvp_ledger_eval_own_numbers(&l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 31 * 16);
  /* before #47272 the null block is not set aside: 32 x 16 */
  auto_fit(&d, 2, 1024, 2 * 32);
  d.vllm.check_null_block = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 32 * 16);
  /* test_auto_fit_max_model_len_not_triggered: a given max_model_len of 16 */
  auto_fit(&d, 2, 1024, 2 * 32);
  d.vllm.auto_fit = 0;
  d.max_model_len = 16;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 16);
  /* test_auto_fit_max_model_len_respects_num_gpu_blocks_override: a derived
   * 16384 and plenty of memory, 32 blocks: at most 512 (31 x 16 here) */
  auto_fit(&d, 2, 16384, 2 * 1024);
  d.vllm.blocks_override = 32;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 31 * 16);
  /* test_auto_fit_max_model_len_reserves_null_block: one layer, 64 pages,
   * a derived 1024: 63 x 16 */
  auto_fit(&d, 1, 1024, 64);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 63 * 16);
  /* test_auto_fit_max_model_len_with_hybrid: a Mamba layer of 16384 bytes
   * (num_speculative_blocks 2) beside the full one, a derived 8192, memory
   * of 1024 // 16 + 1 + 2 + 1 pages: 1024 */
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 1, .state_bytes = 16384},
                       {.kind = KVP_FULL, .kv_heads = 2, .head_dim = 64, .head_dim_v = 64}};
  int64_t counts[2] = {1, 1};
  deploy_runs(&d, 2, 2, 64, runs, counts, 2);
  d.kv = (kvp_format){32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d.model.max_context = 8192;
  d.spec.tokens = 2;
  d.vllm.kv_cache_bytes = (1024 / 16 + 1 + 2 + 1) * 16384;
  d.vllm.auto_fit = d.vllm.check_override = d.vllm.check_null_block = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.hybrid, 1);
  assert_int_equal(l.max_len, 1024);
  /* not a single token: "Cannot auto-fit max_model_len", the derived
   * length kept and the engine refuses to start */
  auto_fit(&d, 1, 1024, 1);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.max_len, 1024);
  assert_int_equal(kvp_vllm_check(&l, &c), KVP_OK);
  assert_int_equal(c.starts, 0);
  assert_int_equal(c.max_model_len, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(estimate_max_model_len_of_8_gib_is_16384),
    cmocka_unit_test(max_concurrency_follows_num_blocks_override),
    cmocka_unit_test(the_check_plans_against_the_override_and_the_null_block),
    cmocka_unit_test(max_model_len_auto_fits_the_kv_memory),
    cmocka_unit_test(one_worker_groups_and_the_hybrid_switch),
    cmocka_unit_test(the_hybrid_switch_refuses_what_stays_hybrid),
    cmocka_unit_test(lookahead_slots_stop_at_max_model_len),
    cmocka_unit_test(max_num_seqs_caps_the_requests),
    cmocka_unit_test(workers_end_with_the_fewest_blocks),
    cmocka_unit_test(overrides_that_outgrow_the_gpu_do_not_fit),
    cmocka_unit_test(decode_context_parallel_splits_a_requests_tokens),
    cmocka_unit_test(the_hidden_state_cache_beside_a_hybrid_target),
    cmocka_unit_test(kv_cache_groups_given_by_hand),
    cmocka_unit_test(data_and_expert_parallel_cut_the_experts),
    cmocka_unit_test(attention_free_and_state_only_models),
    cmocka_unit_test(mla_block_stride_alignment_rounds_the_block),
    cmocka_unit_test(v0_pads_mla_entries_to_256_bytes),
    cmocka_unit_test(cross_attention_caches_the_encoder_once),
    cmocka_unit_test(v0_cross_blocks_span_every_layer),
    cmocka_unit_test(turboquant_slots_and_boundary_layers),
    cmocka_unit_test(static_sinks_take_blocks_once),
    cmocka_unit_test(mamba_alone_align_and_all),
    cmocka_unit_test(a_given_block_is_the_hybrid_grain),
  };
  return cmocka_run_group_tests_name("vllm_kv", tests, NULL, NULL);
}
