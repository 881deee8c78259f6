/* test_starts.c: would the engine start (starts.c)? vLLM's, SGLang's and
 * TensorRT-LLM's startup refusals on hand-computed pools, and the verdict
 * that folds them into whether requests run.
 *
 * vLLM's case is vLLM's own test (tests/v1/core/test_kv_cache_utils.py
 * test_estimate_max_model_len, https://github.com/vllm-project/vllm/blob/
 * 002f10e0cfa1373a19a0d2756598a34b700d20e5/tests/v1/core/test_kv_cache_utils.py):
 * Qwen1.5-7B in 8 GiB of KV cache, max_model_len 16385, estimate 16384. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

#define GiB 1073741824LL
#define MiB 1048576LL

static kvp_ledger l;
static kvp_deploy d;

/* 32 layers of 8 KV heads of 128, bf16: 131072 bytes a token; no weights,
 * nothing reserved. */
static void small(kvp_budget budget, int64_t gpu_bytes, double utilization) {
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.max_model_len = 131072;
  d.model.max_context = 131072;
  d.budget = budget;
  d.gpu_bytes = gpu_bytes;
  d.utilization = utilization;
}

static kvp_start check(void) {
  kvp_start s;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_start_check(&l, &s, NULL), KVP_OK);
  return s;
}

static void text_is(const kvp_start *s, const char *want) {
  char buf[KVP_START_TEXT_MAX];
  int n = kvp_start_explain(&l, s, buf, sizeof buf);
  assert_true(n >= 0 && (size_t)n < sizeof buf);
  assert_string_equal(buf, want);
}

static void vllm_refuses_a_max_model_len_beyond_its_kv_cache(void **state) {
  (void)state;
  /* Qwen1.5-7B: 32 layers of 32 KV heads of 128, fp16: 512 KiB a token */
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 32, 128, NULL), KVP_OK);
  d.gpu_bytes = 80 * GiB;
  d.utilization = 1.0;
  d.max_num_batched_tokens = 32768;
  d.vllm.kv_cache_bytes = 8 * GiB;
  d.max_model_len = 16385;
  kvp_start s = check();
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_VLLM_LEN);
  assert_int_equal(s.limit, 16384);
  /* 1025 blocks of 16 tokens x 512 KiB = 8200 MiB */
  assert_int_equal(s.needed, 1025LL * 16 * 524288);
  text_is(&s, "vLLM refuses to start: one request of max_model_len 16385 tokens needs 8.01 GiB "
              "of KV cache, 8.00 GiB available (vLLM's estimated maximum model length is 16384)");
  d.max_model_len = 16383;
  s = check();
  assert_int_equal(s.starts, 1);
  assert_int_equal(s.why, KVP_START_OK);
  text_is(&s, "");
  /* contiguous allocation: no paged check, it starts since it fits */
  d.max_model_len = 16385;
  d.alloc = KVP_ALLOC_CONTIGUOUS;
  d.vllm.kv_cache_bytes = 0;
  s = check();
  assert_int_equal(s.starts, l.fit.why == KVP_FITS);
}

static void a_deployment_that_does_not_fit_does_not_start(void **state) {
  (void)state;
  small(KVP_BUDGET_VLLM, 8 * GiB, 0.9);
  d.weight_bytes = 16 * GiB;
  kvp_start s = check();
  assert_int_equal(l.fit.why, KVP_WHY_WEIGHTS);
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_NO_FIT);
  char want[256];
  kvp_fit_explain(&l.fit, want, sizeof want);
  text_is(&s, want);
}

static void sglang_refuses_an_empty_or_too_small_pool(void **state) {
  (void)state;
  /* page size 1, fraction 1: the pool holds floor((n x 131072 + 1) / 131072) = n tokens */
  small(KVP_BUDGET_SGLANG, 5 * 131072 + 1, 1.0);
  d.block = 1;
  kvp_start s = check();
  assert_int_equal(s.tokens, 5);
  /* max_req_len = min(131072 - 1, 5 - 1) = 4; max_req_input_len = 4 - 5 = -1 */
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_SGLANG_POOL);
  assert_int_equal(s.limit, -1);
  text_is(&s, "SGLang refuses to start (\"Memory pool size is too small\"): a pool of 5 tokens "
              "leaves max_req_input_len = min(context_len - 1, 5 - 1) - 5 = -1");
  /* 7 tokens: max_req_input_len 1, it starts and cuts requests to 6 */
  d.gpu_bytes = 7 * 131072 + 1;
  s = check();
  assert_int_equal(s.starts, 1);
  assert_int_equal(s.why, KVP_START_CUT);
  assert_int_equal(s.limit, 6);
  text_is(&s, "SGLang starts and cuts requests to max_req_len 6 tokens (max_total_num_tokens 7 "
              "- 1 < context_len 131072 - 1)");
  /* a pool of max_model_len tokens or more: no cut */
  d.max_model_len = 7;
  s = check();
  assert_int_equal(s.starts, 1);
  assert_int_equal(s.why, KVP_START_OK);
  /* 1 GiB of weights in 0.5 GiB: not one token */
  d.max_model_len = 0;
  d.gpu_bytes = GiB / 2;
  d.weight_bytes = GiB;
  s = check();
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_SGLANG_MEMORY);
  assert_int_equal(s.tokens, 0);
  text_is(&s, "SGLang refuses to start (\"Not enough memory. Please try to increase "
              "--mem-fraction-static.\"): mem_fraction_static 1.000 of 0.50 GiB leaves -0.50 "
              "GiB after 1.00 GiB of weights, no KV token of 131072 bytes");
}

static void trtllm_refuses_no_block_and_cuts_the_window(void **state) {
  (void)state;
  /* free_gpu_memory_fraction 0.9 of 128 KiB: 117964 bytes, no token of 131072 */
  small(KVP_BUDGET_TRTLLM, 128 * 1024, 0.9);
  d.block = 32;
  kvp_start s = check();
  assert_int_equal(s.tokens, 0);
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_TRTLLM_BLOCK);
  text_is(&s, "TensorRT-LLM refuses to start (\"Impossible to fit in any sequence in kvCache\"): "
              "0.00 GiB of KV memory holds 0 tokens, not one block of 32");
  /* 4 MiB + 1: floor(3774874.5) bytes, 28 tokens, ceil(28 / 32) = 1 block (the
   * pool's, as 1.1.0rc3 allocates): max_seq_len cut to 32 */
  d.gpu_bytes = 4 * MiB + 1;
  s = check();
  assert_int_equal(s.tokens, 28);
  assert_int_equal(s.blocks, 1);
  assert_int_equal(s.starts, 1);
  assert_int_equal(s.why, KVP_START_CUT);
  assert_int_equal(s.limit, 32);
  assert_int_equal(l.stage[0].blocks, s.blocks); /* the ledger's pool */
  text_is(&s, "TensorRT-LLM starts with maxAttentionWindow and maxSequenceLen reduced to 32 (1 "
              "blocks of 32 tokens; max_seq_len 131072 does not fit one sequence)");
  /* 5 MiB + 1: 4718592 bytes, 36 tokens, 2 blocks: cut to 64 */
  d.gpu_bytes = 5 * MiB + 1;
  s = check();
  assert_int_equal(s.tokens, 36);
  assert_int_equal(s.blocks, 2);
  assert_int_equal(s.limit, 64);
  /* fail_fast_on_attention_window_too_large: a refusal instead */
  d.fail_fast = 1;
  s = check();
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_TRTLLM_WINDOW);
  text_is(&s, "TensorRT-LLM refuses to start (\"Attention window too large to fit even a single "
              "sequence in the KV cache. Failing fast rather than attempting an adjustment of "
              "the window sizes.\"): max_seq_len 131072, 2 blocks of 32 tokens hold 64");
  /* max_tokens (max_kv_tokens) 16: one block */
  d.fail_fast = 0;
  d.max_kv_tokens = 16;
  s = check();
  assert_int_equal(s.tokens, 16);
  assert_int_equal(s.blocks, 1);
  assert_int_equal(s.why, KVP_START_CUT);
  /* max_seq_len within the window: it starts as asked */
  d.max_kv_tokens = 0;
  d.max_model_len = 32;
  s = check();
  assert_int_equal(s.starts, 1);
  assert_int_equal(s.why, KVP_START_OK);
}

/* vLLM's test case again: 8 GiB of KV cache are 1024 blocks of 16 tokens x
 * 512 KiB, 1023 beside the null block; a request of 1024 tokens takes 64,
 * so 15 of them fit (960 blocks) and 16 (1024) do not. */
static void qwen_in_8_gib(int64_t max_model_len, int64_t max_num_seqs) {
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 32, 128, NULL), KVP_OK);
  d.gpu_bytes = 80 * GiB;
  d.utilization = 1.0;
  d.max_num_batched_tokens = 32768;
  d.vllm.kv_cache_bytes = 8 * GiB;
  d.vllm.max_num_seqs = max_num_seqs;
  d.max_model_len = max_model_len;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
}

static kvp_why verdict(int64_t context, int64_t concurrency) {
  kvp_verdict v;
  assert_int_equal(kvp_verdict_fit(&l, context, concurrency, &v, NULL), KVP_OK);
  return v.fit.why;
}

static void requests_that_fit_run_only_on_an_engine_that_starts(void **state) {
  (void)state;
  /* max_model_len 16385 needs 1025 blocks of the 1024: vLLM refuses to start */
  qwen_in_8_gib(16385, 0);
  kvp_verdict v;
  assert_int_equal(kvp_verdict_fit(&l, 1024, 1, &v, NULL), KVP_OK);
  assert_int_equal(v.fit.why, KVP_WHY_STARTS);
  assert_int_equal(v.start.why, KVP_START_VLLM_LEN);
  char buf[KVP_START_TEXT_MAX];
  kvp_verdict_explain(&l, &v.fit, &v.start, buf, sizeof buf);
  assert_string_equal(buf, "vLLM refuses to start: one request of max_model_len 16385 tokens "
                           "needs 8.01 GiB of KV cache, 8.00 GiB available (vLLM's estimated "
                           "maximum model length is 16384)");
  assert_int_equal(verdict(1024, 15), KVP_WHY_STARTS);
  /* what the ledger refuses is said first: 16 requests' KV, a context beyond max_model_len */
  assert_int_equal(verdict(1024, 16), KVP_WHY_KV);
  assert_int_equal(verdict(16386, 1), KVP_WHY_CONTEXT);
  /* the same requests when vLLM starts (16383 tokens take 1024 blocks) */
  qwen_in_8_gib(16383, 0);
  assert_int_equal(verdict(1024, 1), KVP_FITS);
  assert_int_equal(verdict(1024, 15), KVP_FITS);
  assert_int_equal(verdict(1024, 16), KVP_WHY_KV);
  assert_int_equal(kvp_verdict_fit(&l, 1024, 1, &v, NULL), KVP_OK);
  assert_int_equal(kvp_verdict_explain(&l, &v.fit, &v.start, buf, sizeof buf), 0);
}

static void max_concurrency_keeps_its_count_and_says_the_refusal(void **state) {
  (void)state;
  int64_t n;
  kvp_verdict v;
  qwen_in_8_gib(16385, 0);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 1024, &n, &v, NULL), KVP_OK);
  assert_int_equal(n, 15);
  assert_int_equal(v.fit.why, KVP_WHY_STARTS);
  /* max_num_seqs 4 caps the 15: still the refusal, 4 requests */
  qwen_in_8_gib(16385, 4);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 1024, &n, &v, NULL), KVP_OK);
  assert_int_equal(n, 4);
  assert_int_equal(v.fit.why, KVP_WHY_STARTS);
  /* 5 requests exceed max_num_seqs whether or not vLLM starts */
  assert_int_equal(verdict(1024, 5), KVP_WHY_SEQS);
  assert_int_equal(verdict(1024, 4), KVP_WHY_STARTS);
  /* vLLM starts: the cap is the answer */
  qwen_in_8_gib(16383, 4);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 1024, &n, &v, NULL), KVP_OK);
  assert_int_equal(n, 4);
  assert_int_equal(v.fit.why, KVP_WHY_SEQS);
  assert_int_equal(v.fit.need, 15);
  /* none fits: the ledger's reason, not the refusal */
  qwen_in_8_gib(16385, 0);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 16386, &n, &v, NULL), KVP_OK);
  assert_int_equal(n, 0);
  assert_int_equal(v.fit.why, KVP_WHY_CONTEXT);
}

static void the_fold_changes_only_a_fit_that_lets_requests_in(void **state) {
  (void)state;
  kvp_start no = {.starts = 0, .why = KVP_START_VLLM_LEN}, cut = {.starts = 1, .why = KVP_START_CUT};
  kvp_fit f = {.why = KVP_FITS, .concurrency = 3};
  kvp_verdict_fold(&f, &cut);
  assert_int_equal(f.why, KVP_FITS);
  kvp_verdict_fold(&f, &no);
  assert_int_equal(f.why, KVP_WHY_STARTS);
  for (int w = KVP_WHY_TP_HEADS; w < KVP_NWHY; w++) {
    f = (kvp_fit){.why = (kvp_why)w, .concurrency = 3};
    kvp_verdict_fold(&f, &no);
    assert_int_equal(f.why, w);
  }
  /* max_concurrency's cap (concurrency 0): one request runs, the cap says how many */
  f = (kvp_fit){.why = KVP_WHY_SEQS, .concurrency = 0};
  kvp_verdict_fold(&f, &no);
  assert_int_equal(f.why, KVP_WHY_STARTS);
  /* an SGLang pool that cuts requests starts: its fit stays */
  small(KVP_BUDGET_SGLANG, 7 * 131072 + 1, 1.0);
  d.block = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(verdict(6, 1), KVP_FITS);
  /* weights beyond the GPU: the ledger's reason (the engine does not start either) */
  small(KVP_BUDGET_VLLM, 8 * GiB, 0.9);
  d.weight_bytes = 16 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(verdict(1024, 1), KVP_WHY_WEIGHTS);
}

/* min_tp: the tp at which the requests run, not only fit. The same 8 GiB of
 * KV cache a worker: a block of 16 tokens is 8 MiB / tp, so max_model_len
 * 20000 (1250 blocks) is refused at tp 1 (1024 blocks) and starts at tp 2
 * (2048); 100 requests of 1024 tokens (64 blocks each) need 6400 blocks
 * beside the null one: tp 8 (8192). */
static void min_tp_is_the_smallest_tp_that_starts(void **state) {
  (void)state;
  static kvp_ledger last;
  int64_t tp;
  kvp_verdict v;
  qwen_in_8_gib(20000, 0);
  assert_int_equal(kvp_verdict_min_tp(&d, 1024, 1, 64, &last, &tp, &v, NULL), KVP_OK);
  assert_int_equal(tp, 2);
  assert_int_equal(v.fit.why, KVP_FITS);
  assert_int_equal(kvp_verdict_min_tp(&d, 1024, 1, 1, &last, &tp, &v, NULL), KVP_OK);
  assert_int_equal(tp, 0);
  assert_int_equal(v.fit.why, KVP_WHY_STARTS);
  char buf[KVP_START_TEXT_MAX];
  kvp_verdict_explain(&last, &v.fit, &v.start, buf, sizeof buf);
  assert_string_equal(buf, "vLLM refuses to start: one request of max_model_len 20000 tokens "
                           "needs 9.77 GiB of KV cache, 8.00 GiB available (vLLM's estimated "
                           "maximum model length is 16384)");
  assert_int_equal(kvp_verdict_min_tp(&d, 1024, 100, 64, &last, &tp, &v, NULL), KVP_OK);
  assert_int_equal(tp, 8);
  assert_int_equal(kvp_verdict_min_tp(&d, 1024, 100, 4, &last, &tp, &v, NULL), KVP_OK);
  assert_int_equal(tp, 0);
  /* at tp 4: 6400 blocks of 2 MiB and the null block, in 4096 */
  assert_int_equal(v.fit.why, KVP_WHY_KV);
  assert_int_equal(v.fit.need, 6401 * 2 * MiB);
  assert_int_equal(v.fit.have, 8 * GiB);
  assert_int_equal(kvp_verdict_min_tp(&d, 1024, 1, 0, &last, &tp, &v, NULL), KVP_EINVAL);
}

/* vLLM's check of one max_model_len request whose bytes pass 2^63: an error
 * naming the field that sets the length and its value (it said "arithmetic
 * overflow: a count exceeds 64 bits" alone) */
static void an_overflow_of_the_startup_check_names_the_field(void **state) {
  (void)state;
  small(KVP_BUDGET_VLLM, 8 * GiB, 0.9);
  d.max_model_len = (int64_t)1 << 62;
  d.model.max_context = (int64_t)1 << 62;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_start s;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_start_check(&l, &s, &diag), KVP_EOVERFLOW);
  assert_string_equal(diag.msg, "vLLM's startup check: the KV cache one request of "
                                "4611686018427387904 tokens needs exceeds 64 bits (caused by "
                                "field 'max_model_len' = 4611686018427387904)");
  kvp_verdict v;
  memset(&diag, 0, sizeof diag);
  assert_int_equal(kvp_verdict_fit(&l, 1024, 1, &v, &diag), KVP_EOVERFLOW);
  assert_non_null(strstr(diag.msg, "field 'max_model_len' = 4611686018427387904"));
  /* the model's context when max_model_len is not set */
  d.max_model_len = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  memset(&diag, 0, sizeof diag);
  assert_int_equal(kvp_start_check(&l, &s, &diag), KVP_EOVERFLOW);
  assert_non_null(strstr(diag.msg, "(caused by field 'max_context' = 4611686018427387904)"));
}

static void null_arguments_are_refused(void **state) {
  (void)state;
  kvp_start s;
  small(KVP_BUDGET_VLLM, 8 * GiB, 0.9);
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_start_check(NULL, &s, NULL), KVP_EINVAL);
  assert_int_equal(kvp_start_check(&l, NULL, NULL), KVP_EINVAL);
  kvp_verdict v;
  int64_t n;
  assert_int_equal(kvp_verdict_fit(NULL, 1, 1, &v, NULL), KVP_EINVAL);
  assert_int_equal(kvp_verdict_fit(&l, 1, 1, NULL, NULL), KVP_EINVAL);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 1, NULL, &v, NULL), KVP_EINVAL);
  assert_int_equal(kvp_verdict_max_concurrency(&l, 1, &n, NULL, NULL), KVP_EINVAL);
  assert_string_equal(kvp_why_name(KVP_WHY_STARTS), "starts");
}

/* A model with Mamba layers under full CUDA graphs refuses a max_num_seqs
 * above the pool's blocks (vllm-project/vllm#38270; tests/v1/worker/
 * test_gpu_model_runner.py test_mamba_cache_raises_when_max_num_seqs_exceeds_
 * blocks at 0099f1dfe34f, which forces max_num_reqs = num_blocks + 100 and
 * expects ValueError matching "max_num_seqs"). Two layers, a Mamba state of
 * 16384 bytes and a full layer of 2 KV heads of 64 in fp32 (16384-byte
 * pages): 10 blocks of two pages. */
static void vllm_refuses_more_seqs_than_mamba_blocks(void **state) {
  (void)state;
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 1, .state_bytes = 16384},
                       {.kind = KVP_FULL, .kv_heads = 2, .head_dim = 64, .head_dim_v = 64}};
  int64_t counts[2] = {1, 1};
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 2, 128, 4, 2, 64, NULL), KVP_OK);
  assert_int_equal(kvp_model_set_pattern(&d.model, runs, counts, 2, NULL), KVP_OK);
  d.kv = (kvp_format){32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d.gpu_bytes = GiB;
  d.utilization = 1.0;
  d.max_model_len = 64;
  d.vllm.kv_cache_bytes = 10 * 16384;
  d.vllm.max_num_seqs = 110;
  d.vllm.mamba_seqs_check = 1;
  kvp_start s = check();
  assert_int_equal(l.stage[0].blocks, 10);
  assert_int_equal(s.starts, 0);
  assert_int_equal(s.why, KVP_START_VLLM_MAMBA_SEQS);
  assert_int_equal(s.needed, 110);
  assert_int_equal(s.limit, 10);
  text_is(&s, "vLLM refuses to start (\"max_num_seqs (110) exceeds available Mamba cache blocks "
              "(10). Each decode sequence requires one Mamba cache block, so CUDA graph capture "
              "cannot proceed. Please lower max_num_seqs to at most 10 or increase "
              "gpu_memory_utilization.\")");
  /* as many sequences as blocks (the null block among them) start */
  d.vllm.max_num_seqs = 10;
  assert_int_equal(check().starts, 1);
  /* the releases before #38270, or enforce_eager (no CUDA graphs), start */
  d.vllm.max_num_seqs = 110;
  d.vllm.mamba_seqs_check = 0;
  assert_int_equal(check().starts, 1);
  /* no Mamba layer: nothing to check */
  d.vllm.mamba_seqs_check = 1;
  kvp_layer full[1] = {runs[1]};
  int64_t one[1] = {1};
  assert_int_equal(kvp_model_set_pattern(&d.model, full, one, 1, NULL), KVP_OK);
  assert_int_equal(check().starts, 1);
  /* no max_num_seqs (a deployment that does not name its engine): none */
  assert_int_equal(kvp_model_set_pattern(&d.model, runs, counts, 2, NULL), KVP_OK);
  d.vllm.max_num_seqs = 0;
  assert_int_equal(check().starts, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(vllm_refuses_a_max_model_len_beyond_its_kv_cache),
    cmocka_unit_test(vllm_refuses_more_seqs_than_mamba_blocks),
    cmocka_unit_test(a_deployment_that_does_not_fit_does_not_start),
    cmocka_unit_test(sglang_refuses_an_empty_or_too_small_pool),
    cmocka_unit_test(trtllm_refuses_no_block_and_cuts_the_window),
    cmocka_unit_test(requests_that_fit_run_only_on_an_engine_that_starts),
    cmocka_unit_test(max_concurrency_keeps_its_count_and_says_the_refusal),
    cmocka_unit_test(the_fold_changes_only_a_fit_that_lets_requests_in),
    cmocka_unit_test(min_tp_is_the_smallest_tp_that_starts),
    cmocka_unit_test(an_overflow_of_the_startup_check_names_the_field),
    cmocka_unit_test(null_arguments_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
