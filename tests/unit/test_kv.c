/* test_kv.c: KV bytes per token, per sequence, under TP and PP. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

static const kvp_format bf16 = {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const kvp_format fp8 = {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* per-token bytes of the whole model at tp */
static int64_t token_bytes(const kvp_model *m, const kvp_format *f, int64_t tp) {
  int64_t total = 0, bits;
  for (int64_t i = 0; i < m->layers; i++) {
    assert_int_equal(kvp_kv_token_bits(&m->spec[m->layer_spec[i]], f, tp, &bits), KVP_OK);
    total += bits;
  }
  assert_int_equal(total % 8, 0);
  return total / 8;
}

static void llama_3_1_8b_caches_131072_bytes_a_token(void **state) {
  (void)state;
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  assert_int_equal(token_bytes(&m, &bf16, 1), 131072);
  assert_int_equal(token_bytes(&m, &fp8, 1), 65536);
}

static void llama_2_70b_caches_less_than_llama_2_7b(void **state) {
  (void)state; /* the chapter's claim: GQA's 8 KV heads */
  kvp_model m7, m70;
  assert_int_equal(kvp_model_init(&m7, 32, 4096, 32, 32, 128, NULL), KVP_OK);
  assert_int_equal(kvp_model_init(&m70, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  assert_int_equal(token_bytes(&m7, &bf16, 1), 524288);  /* 512 KiB */
  assert_int_equal(token_bytes(&m70, &bf16, 1), 327680); /* 320 KiB */
}

static void seed_70b_sequence_is_2_5_gib_at_8k_and_40_gib_at_128k(void **state) {
  (void)state; /* the article claims 12.6 and 201.3: its own formula gives these */
  kvp_model m;
  int64_t b;
  assert_int_equal(kvp_model_init(&m, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 80, 8192, &b), KVP_OK);
  assert_int_equal(b, 2684354560LL); /* 2.5 GiB */
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 80, 131072, &b), KVP_OK);
  assert_int_equal(b, 42949672960LL); /* 40 GiB */
}

static void tp_beyond_kv_heads_replicates_one_head_per_gpu(void **state) {
  (void)state;
  assert_int_equal(kvp_kv_heads_per_gpu(8, 1), 8);
  assert_int_equal(kvp_kv_heads_per_gpu(8, 4), 2);
  assert_int_equal(kvp_kv_heads_per_gpu(8, 8), 1);
  assert_int_equal(kvp_kv_heads_per_gpu(8, 16), 1);
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  assert_int_equal(token_bytes(&m, &bf16, 8), 40960);
  assert_int_equal(token_bytes(&m, &bf16, 16), 40960); /* not 20480 */
}

static void mla_latent_sits_whole_on_every_tp_rank(void **state) {
  (void)state; /* DeepSeek-V3: 61 layers x (512 + 64) x 2 bytes */
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 61, 7168, 128, 128, 56, NULL), KVP_OK);
  kvp_layer l = {0};
  l.kind = KVP_MLA;
  l.latent = 512;
  l.rope_dim = 64;
  int64_t one = 1;
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 1, NULL), KVP_OK);
  assert_int_equal(token_bytes(&m, &bf16, 1), 70272);
  assert_int_equal(token_bytes(&m, &bf16, 8), 70272);
  assert_int_equal(token_bytes(&m, &bf16, 32), 70272);
}

static void window_larger_than_context_holds_the_whole_context(void **state) {
  (void)state;
  kvp_layer l = {KVP_SLIDING, 8, 128, 128, 4096, 0, 0, 0, 0};
  assert_int_equal(kvp_kv_tokens_held(&l, 1000), 1000);
  assert_int_equal(kvp_kv_tokens_held(&l, 100000), 4096);
  kvp_layer none = {0};
  none.kind = KVP_NONE;
  assert_int_equal(kvp_kv_tokens_held(&none, 100), 0);
}

static void mistral_sequence_stops_growing_at_its_window(void **state) {
  (void)state;
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  kvp_layer l = m.spec[0];
  l.kind = KVP_SLIDING;
  l.window = 4096;
  int64_t one = 1, a, b;
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 1, NULL), KVP_OK);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 32, 4096, &a), KVP_OK);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 32, 32768, &b), KVP_OK);
  assert_int_equal(a, 4096LL * 131072);
  assert_int_equal(a, b);
}

static void recurrent_state_is_fixed_and_split_by_tp(void **state) {
  (void)state;
  kvp_layer s = {0};
  s.kind = KVP_STATE;
  s.kv_heads = 16;
  s.state_bytes = 1097728;
  int64_t b, bits;
  assert_int_equal(kvp_kv_state_bytes(&s, 1, &b), KVP_OK);
  assert_int_equal(b, 1097728);
  assert_int_equal(kvp_kv_state_bytes(&s, 4, &b), KVP_OK);
  assert_int_equal(b, 1097728 / 4);
  assert_int_equal(kvp_kv_state_bytes(&s, 32, &b), KVP_OK);
  assert_int_equal(b, 1097728 / 16); /* one state head per GPU at least */
  assert_int_equal(kvp_kv_token_bits(&s, &bf16, 1, &bits), KVP_OK);
  assert_int_equal(bits, 0);
}

static void pipeline_stages_split_layers_as_vllm(void **state) {
  (void)state;
  int64_t first, count;
  /* 80 layers on 3 stages: 26 each, the 2 left over to stages 1 and 0 */
  assert_int_equal(kvp_pp_stage(80, 3, 0, &first, &count), KVP_OK);
  assert_int_equal(count, 27);
  assert_int_equal(kvp_pp_stage(80, 3, 1, &first, &count), KVP_OK);
  assert_int_equal(first, 27);
  assert_int_equal(count, 27);
  assert_int_equal(kvp_pp_stage(80, 3, 2, &first, &count), KVP_OK);
  assert_int_equal(first, 54);
  assert_int_equal(count, 26);
  /* 61 layers on 4: [15, 15, 16, 15] */
  assert_int_equal(kvp_pp_stage(61, 4, 2, &first, &count), KVP_OK);
  assert_int_equal(first, 30);
  assert_int_equal(count, 16);
  assert_int_equal(kvp_pp_stage(61, 4, 3, &first, &count), KVP_OK);
  assert_int_equal(count, 15);
  assert_int_equal(kvp_pp_stage(4, 5, 0, &first, &count), KVP_EINVAL);
  assert_int_equal(kvp_pp_stage(4, 0, 0, &first, &count), KVP_EINVAL);
}

static void int4_g32_kv_adds_scale_and_zero_per_head_row(void **state) {
  (void)state;
  kvp_format f = {4, 32, 16, 4, 0, 0, 0, 0, 0, 0, 0};
  kvp_layer l = {KVP_FULL, 8, 128, 128, 0, 0, 0, 0, 0};
  int64_t bits;
  assert_int_equal(kvp_kv_token_bits(&l, &f, 1, &bits), KVP_OK);
  /* 8 heads x (K + V) x (128 x 4 + 4 groups x 20) */
  assert_int_equal(bits, 8 * 2 * (128 * 4 + 4 * 20));
}

static void huge_sequences_overflow_cleanly(void **state) {
  (void)state;
  kvp_model m;
  int64_t b;
  assert_int_equal(kvp_model_init(&m, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 80, INT64_MAX / 1000, &b), KVP_EOVERFLOW);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 80, -1, &b), KVP_EINVAL);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 81, 1, &b), KVP_EINVAL);
  assert_int_equal(kvp_kv_seq_bytes(&m, &bf16, 1, 0, 80, 0, &b), KVP_OK);
  assert_int_equal(b, 0);
}

/* DeepSeek-V3.2 MLA per token and layer: 576 bf16 elements (1152 bytes), or
 * vLLM's fp8_ds_mla, 656 bytes (vllm/v1/kv_cache_interface.py
 * MLAAttentionSpec.real_page_size_bytes at
 * https://github.com/vllm-project/vllm/blob/001cabc1be16a59a70d720ed61a13b678c060a18/vllm/v1/kv_cache_interface.py);
 * its indexer adds 132 uint8 bytes whatever the format (new_indexer_mla_spec
 * in tests/v1/core/test_kv_cache_utils.py at
 * https://github.com/vllm-project/vllm/blob/002f10e0cfa1373a19a0d2756598a34b700d20e5/tests/v1/core/test_kv_cache_utils.py). */
static void mla_fp8_ds_mla_and_the_indexer_cache(void **state) {
  (void)state;
  kvp_layer l = {.kind = KVP_MLA, .latent = 512, .rope_dim = 64};
  kvp_format bf16 = {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ds = {8, 128, 32, 0, 16, 0, 0, 0, 0, 0, 0};
  int64_t bits;
  assert_int_equal(kvp_kv_token_bits(&l, &bf16, 8, &bits), KVP_OK);
  assert_int_equal(bits, 1152 * 8);
  assert_int_equal(kvp_kv_token_bits(&l, &ds, 8, &bits), KVP_OK);
  assert_int_equal(bits, 656 * 8);
  l.index_dim = 128;
  assert_int_equal(kvp_kv_token_bits(&l, &bf16, 8, &bits), KVP_OK);
  assert_int_equal(bits, (1152 + 132) * 8);
  assert_int_equal(kvp_kv_token_bits(&l, &ds, 1, &bits), KVP_OK);
  assert_int_equal(bits, (656 + 132) * 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(llama_3_1_8b_caches_131072_bytes_a_token),
    cmocka_unit_test(llama_2_70b_caches_less_than_llama_2_7b),
    cmocka_unit_test(seed_70b_sequence_is_2_5_gib_at_8k_and_40_gib_at_128k),
    cmocka_unit_test(tp_beyond_kv_heads_replicates_one_head_per_gpu),
    cmocka_unit_test(mla_latent_sits_whole_on_every_tp_rank),
    cmocka_unit_test(window_larger_than_context_holds_the_whole_context),
    cmocka_unit_test(mistral_sequence_stops_growing_at_its_window),
    cmocka_unit_test(recurrent_state_is_fixed_and_split_by_tp),
    cmocka_unit_test(pipeline_stages_split_layers_as_vllm),
    cmocka_unit_test(int4_g32_kv_adds_scale_and_zero_per_head_row),
    cmocka_unit_test(huge_sequences_overflow_cleanly),
    cmocka_unit_test(mla_fp8_ds_mla_and_the_indexer_cache),
  };
  return cmocka_run_group_tests_name("kv", tests, NULL, NULL);
}
