/* test_predict.c: vLLM's profiled activation peak, by hand (predict.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

/* Llama-3.1-8B's config.json shape */
static kvp_shape llama8b(void) {
  kvp_shape s;
  memset(&s, 0, sizeof s);
  s.hidden = 4096, s.heads = 32, s.kv_heads = 8, s.head_dim = 128;
  s.intermediate = 14336, s.vocab = 128256;
  return s;
}

static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

static kvp_profile v0_profile(void) {
  kvp_profile p;
  memset(&p, 0, sizeof p);
  p.tokens = 2048, p.seqs = 256, p.tp = 1, p.act_bytes = 2, p.last_stage = 1, p.eager = 1;
  return p;
}

static void dense_terms_match_a_hand_count(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  /* eager MLP: (3H + 3I) x N x 2 = 55296 x 4096 */
  assert_int_equal(a.term[KVP_PREDICT_MLP][1], 226492416);
  /* compiled: max(2H + 3I, 3H + I) = 51200 */
  assert_int_equal(a.term[KVP_PREDICT_MLP][0], 209715200);
  /* attention: 3H + (32 + 2 x 8) x 128 + 32 x 128 = 22528 */
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][0], 92274688);
  /* sampler on the sort path: N H 2 + the sort moment, 256 x 128256 logits
   * x (2 + 16) + 256 rows >= 128 sorted at once x 128256 x 20 temporaries
   * (591003648 + 656670720), above the scatter's x (2 + 26) = 919339008 */
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], 16777216 + 1247674368);
  /* FlashInfer: x (2 + 8) */
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][0], 16777216 + 328335360);
  assert_int_equal(a.bytes, 1264451584);
  assert_int_equal(a.largest, KVP_PREDICT_SAMPLER);
  assert_string_equal(kvp_predict_term_name(a.largest), "sampler");
  assert_int_equal(a.lo, 345112576);
  assert_int_equal(a.hi, 1264451584);
}

/* The sort's temporaries follow PyTorch's three strategies by rows sorted. */
static void sort_temporaries_follow_the_rows_sorted(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  const int64_t V = 128256, hid = 2048LL * 4096 * 2;
  /* 64 rows: by full sort, 32 bytes of temporaries per logit */
  p.seqs = 64;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], hid + 64 * V * (18 + 32));
  /* one row: sorted alone, 20 bytes per logit of that row; the scatter's
   * 28 bytes per logit are then the larger moment */
  p.seqs = 1;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], hid + max_i64(V * 18 + V * 20, V * 28));
  /* a batch holds at most INT_MAX / V rows: 16384 rows sort 16743 at most */
  p.seqs = 16384, p.tokens = 16384;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1],
                   16384LL * 4096 * 2 + 16384 * V * 18 + 16384 * V * 20);
  s.vocab = 200000, p.seqs = 20000, p.tokens = 20000;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1],
                   20000LL * 4096 * 2 + 20000LL * 200000 * 18 + 10737LL * 200000 * 20);
}

/* V0's profile_run (vLLM 0.6, vllm-project/vllm#10511's H100 log: 8192
 * tokens over 256 dummy prompts, 1.26 GiB logged): the sampler's sort
 * moment, 8192 x 4096 x 2 + 256 x 128256 x (2 + 16) + 256 x 128256 x 20 =
 * 1314783232 bytes (1.2245 GiB), is the peak over the eager MLP's 8192 x
 * 55296 x 2 = 905969664; V0's scatter moment (b + 30 per logit: fp32
 * logits, sorted values and indices, two masks, softmax, its cumsum and the
 * scattered result) stays below the sort's b + 36. */
static void v0_dummy_sampler_peaks_at_the_sort(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  p.tokens = 8192;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_MLP][1], 905969664);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], 1314783232);
  assert_int_equal(a.bytes, 1314783232);
  assert_int_equal(a.largest, KVP_PREDICT_SAMPLER);
}

/* V1 in 0.7 computed logits in profile_run but ran no dummy sampler: for
 * Llama-3.1-8B's 2048 tokens over 256 requests, compiled, the sampler term
 * is the hidden states and the last tokens' logits in bf16, 2048 x 4096 x 2
 * + 256 x (4096 + 128256) x 2 = 84541440 (the older form's logits of every
 * token, 2048 x 4096 x 2 + 2048 x 128256 x 2 = 542113792, its high end), so
 * the compiled MLP, 2048 x 51200 x 2 = 209715200, is the peak. */
static void v1_of_0_7_holds_logits_but_no_sampler(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  p.eager = 0, p.logits_only = 1;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][0], 84541440);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], 542113792);
  assert_int_equal(a.bytes_of[KVP_PREDICT_SAMPLER], 84541440);
  assert_int_equal(a.bytes, 209715200);
  assert_int_equal(a.largest, KVP_PREDICT_MLP);
  assert_int_equal(a.hi, 542113792);
  /* with the sampler run (0.8 on) the sort moment is the peak */
  p.logits_only = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.largest, KVP_PREDICT_SAMPLER);
}

/* V1's dummy sampler run by release, hand-counted for Llama-3.1-8B's 2048
 * tokens over 1024 requests, compiled, the sort path: the sort moment is
 * 1024 x 128256 x (2 + 16 + 20) = 4990697472 bytes (1024 rows >= 128 sorted
 * at once), beside the hidden states still referenced: the forward's output
 * N H 2 = 16777216 (V0, 0.7), the last tokens' index copy S H 2 = 8388608
 * alone (0.8-0.9.0), with rand_like's copy of it 2 S H 2 (0.9.1), and all
 * three from 0.9.2 (33554432, gpu_model_runner.py at v0.11.0). torch's 32
 * MiB cuBLAS workspace of an H100 (33554432) is in every term. */
static void v1_sampler_holds_hidden_copies_and_the_cublas_workspace(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  const int64_t sort = 4990697472LL;
  p.eager = 0, p.seqs = 1024;
  const int64_t hid[4] = {16777216, 8388608, 16777216, 33554432};
  for (int m = KVP_HIDDEN_ALL; m <= KVP_HIDDEN_ALL_LAST_RAND; m++) {
    p.sampler_hidden = m;
    assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
    assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], sort + hid[m]);
    assert_int_equal(a.bytes, sort + hid[m]);
  }
  p.blas_workspace = 33554432;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], sort + 33554432 + 33554432);
  assert_int_equal(a.bytes, 5057806336LL);
  assert_int_equal(a.resident, 33554432);
  /* the compiled MLP, 2048 x 51200 x 2, holds it too; no MoE term: none */
  assert_int_equal(a.term[KVP_PREDICT_MLP][0], 209715200 + 33554432);
  assert_int_equal(a.term[KVP_PREDICT_MOE][0], 0);
  p.sampler_hidden = 4;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_EINVAL);
  p.sampler_hidden = 0, p.blas_workspace = -1;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_EINVAL);
}

/* bitsandbytes 4-bit linear layers, hand-counted for Qwen2.5-32B (H 5120, I
 * 27648, 40 heads, 8 KV heads of 128) in V0's profile of 2048 tokens over
 * 256 sequences, eager, on a stage that does not sample (PP stage 0 of
 * vllm-project/vllm#14452), with the 8,519,680-byte cuBLAS workspace of a
 * GPU other than 9.0. down_proj's moment: residual, input, gate_up 2I, act
 * I, down's out H and matmul_4bit's product H, 2048 x (4H + 3I) x 2 =
 * 423,624,704, beside the dequantized shard 27648 x 5120 x 2 = 283,115,520;
 * compiled: the gate_up moment, 2048 x (2H + 3I) x 2 = 381,681,664, is the
 * larger. Attention: 3H + (40 + 16) x 128 + 40 x 128 + o_proj's product H =
 * 32768 a token, 134,217,728, + q_proj's shard 5120 x 5120 x 2 = 52,428,800. */
static void bnb_4bit_holds_a_dequantized_shard(void **state) {
  (void)state;
  kvp_shape s;
  memset(&s, 0, sizeof s);
  s.hidden = 5120, s.heads = 40, s.kv_heads = 8, s.head_dim = 128;
  s.intermediate = 27648, s.vocab = 152064;
  kvp_profile p = v0_profile();
  kvp_activation a;
  p.last_stage = 0, p.blas_workspace = 8519680;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.bytes, 2048LL * (3 * 5120 + 3 * 27648) * 2 + 8519680); /* 411,172,864 */
  p.dequant_mlp = 1, p.dequant_attn = 1;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_MLP][1], 423624704 + 283115520 + 8519680);
  assert_int_equal(a.term[KVP_PREDICT_MLP][0], 381681664 + 283115520 + 8519680);
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][0], 134217728 + 52428800 + 8519680);
  assert_int_equal(a.bytes, 715259904);
  assert_int_equal(a.largest, KVP_PREDICT_MLP);
  /* the last stage: the sort sampler stays the peak, 21 MB of hidden states
   * + 256 x 152064 x (2 + 16 + 20) */
  p.last_stage = 1;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.bytes, 20971520LL + 1479278592 + 8519680);
  assert_int_equal(a.largest, KVP_PREDICT_SAMPLER);
  /* TP 2: the local shard, 13824 x 5120 x 2, and 2048 x (4H + 3 x 13824) x 2 */
  p.last_stage = 0, p.tp = 2, p.blas_workspace = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_MLP][1], 253755392 + 141557760);
}

static void long_prefill_makes_the_mlp_the_peak(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  p.tokens = 20000; /* V0 without chunked prefill: N = max_model_len */
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.largest, KVP_PREDICT_MLP);
  assert_int_equal(a.bytes, 20000LL * 55296 * 2);
  p.eager = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.bytes, 20000LL * 51200 * 2);
}

static void tp_shards_the_mlp_not_the_residual_stream(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  p.tokens = 8192, p.tp = 4, p.last_stage = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_MLP][1], 8192LL * (3 * 4096 + 3 * 3584) * 2);
  /* 8 heads, 2 KV heads per GPU */
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][1], 8192LL * (3 * 4096 + 12 * 128 + 8 * 128) * 2);
  assert_int_equal(a.term[KVP_PREDICT_SAMPLER][1], 0); /* not the last stage */
}

/* a tiny MoE shape and its profile: 10 tokens, caches chunked by 4 */
static kvp_shape tiny_moe(void) {
  kvp_shape s;
  memset(&s, 0, sizeof s);
  s.hidden = 8, s.heads = 4, s.kv_heads = 2, s.head_dim = 2, s.vocab = 10;
  s.experts = 4, s.experts_active = 2, s.moe_intermediate = 6;
  return s;
}

static kvp_profile tiny_moe_profile(void) {
  kvp_profile p;
  memset(&p, 0, sizeof p);
  p.tokens = 10, p.seqs = 1, p.tp = 2, p.act_bytes = 2, p.moe_chunk = 4, p.moe_cache13 = 1;
  return p;
}

static void moe_caches_are_chunked(void **state) {
  (void)state;
  kvp_shape s = tiny_moe();
  kvp_profile p = tiny_moe_profile();
  kvp_activation a;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  /* stream: N (E + 3H) 2 = 10 x 28 x 2; caches: chunk x k (max(2 x 3, 8) + 3) x 2 */
  assert_int_equal(a.term[KVP_PREDICT_MOE][0], 560 + 4 * 22 * 2);
  /* older: chunk x k (2 x 3 + 3 + 8) x 2 */
  assert_int_equal(a.term[KVP_PREDICT_MOE][1], 560 + 4 * 34 * 2);
  assert_int_equal(a.term[KVP_PREDICT_MLP][0], 0);
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][0], 10 * 36 * 2);
  assert_int_equal(a.bytes, 736);
  assert_int_equal(a.largest, KVP_PREDICT_MOE);
}

static void mla_attention_holds_the_latent_whole(void **state) {
  (void)state;
  kvp_shape s;
  memset(&s, 0, sizeof s);
  s.hidden = 8, s.heads = 4, s.kv_heads = 4, s.head_dim = 4, s.vocab = 10, s.intermediate = 2;
  s.mla_latent = 6, s.mla_rope = 2;
  kvp_profile p;
  memset(&p, 0, sizeof p);
  p.tokens = 10, p.seqs = 1, p.tp = 2, p.act_bytes = 2;
  kvp_activation a;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  /* 3H + q heads x (nope + rope) + the latent and its rope key + q x head:
   * 24 + 2 x 4 + 8 + 2 x 4 = 48 elements a token, the latent not split */
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][0], 10 * 48 * 2);
  p.tp = 4;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_ATTENTION][0], 10 * (24 + 4 + 8 + 4) * 2);
}

static void bad_shapes_are_named(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  kvp_diag d = {{0}};
  s.vocab = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "vocab"));
  s = llama8b();
  s.experts = 8;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "MoE"));
  s = llama8b();
  p.tokens = 0;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "max_num_batched_tokens"));
  p = v0_profile();
  p.tokens = INT64_MAX / 4;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, &d), KVP_EOVERFLOW);
}

/* a tiny tower: 2 items of 16 patches, 4 tokens each, 6 pixel values a patch */
static kvp_vision tiny_tower(void) {
  kvp_vision v;
  memset(&v, 0, sizeof v);
  v.hidden = 8, v.intermediate = 12, v.gated = 1, v.proj_hidden = 32, v.out_hidden = 16;
  v.merge = 4, v.patch_values = 6, v.patches = 16, v.tokens = 4;
  return v;
}

static void encoder_run_matches_a_hand_count(void **state) {
  (void)state;
  kvp_vision v = tiny_tower();
  kvp_encoder_run r = {2, 2, 4, 1};
  kvp_encoder e;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  /* 32 patches; MLP 3H + 3I = 60 (lo), 5H + 3I = 76 (hi); attention 7H = 56,
   * 10H = 80: the block is 60 and 80 elements a patch, 2 bytes each */
  assert_int_equal(e.block[0], 32 * 60 * 2);
  assert_int_equal(e.block[1], 32 * 80 * 2);
  /* merger: 2H + 2 x 32 / 4 + 16 / 4 = 36 */
  assert_int_equal(e.merger, 32 * 36 * 2);
  assert_int_equal(e.inputs, 32 * 6 * 4);  /* fp32 pixel values */
  assert_int_equal(e.cast, 32 * 6 * 2);    /* their bf16 copy */
  assert_int_equal(e.outputs, 2 * 4 * 16 * 2);
  assert_int_equal(e.peak[0], 768 + 384 + 3840);
  assert_int_equal(e.peak[1], 768 + 384 + 5120);
  assert_int_equal(e.kept, 768 + 256);
  /* pixel values already in the model dtype: no copy */
  r.pixel_bytes = 2;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(e.cast, 0);
  assert_int_equal(e.peak[1], 384 + 5120);
  /* an ungated MLP (fc1, act, fc2): 5H + 2I = 64 < attention's 80 */
  v.gated = 0;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(e.block[1], 32 * 80 * 2);
  assert_int_equal(e.block[0], 32 * 56 * 2); /* max(3H + 2I = 48, 7H = 56) */
}

/* Qwen2.5-VL-7B's largest image (65536 patches of 3 x 2 x 14 x 14 values, H
 * 1280, I 3420, 16384 tokens of 3584) as vLLM 0.9.2 on profiles it: the
 * processor's pixel values arrive in bf16 (vllm-project/vllm#18862), so the
 * inputs are 65536 x 1176 x 2 bytes and the tower makes no copy; before it
 * float32 and a bf16 copy (engines.lua vllm_pixel_cast_release) */
static void qwen25_vl_pixels_in_the_model_dtype(void **state) {
  (void)state;
  kvp_vision v;
  memset(&v, 0, sizeof v);
  v.hidden = 1280, v.intermediate = 3420, v.gated = 1, v.proj_hidden = 5120;
  v.out_hidden = 3584, v.merge = 4, v.patch_values = 1176, v.patches = 65536, v.tokens = 16384;
  kvp_encoder_run r = {1, 2, 2, 1};
  kvp_encoder e;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(e.inputs, 154140672);              /* 65536 x 1176 x 2 */
  assert_int_equal(e.cast, 0);
  assert_int_equal(e.block[1], 2183659520LL);         /* 65536 x (5H + 3I = 16660) x 2 */
  assert_int_equal(e.peak[1], 154140672 + 2183659520LL); /* 2.1773 GiB */
  assert_int_equal(e.kept, 154140672 + 117440512);    /* + 16384 x 3584 x 2 */
  r.pixel_bytes = 4; /* 0.9.0.1: float32 kept, their bf16 copy during the run */
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(e.inputs, 308281344);
  assert_int_equal(e.cast, 154140672);
  assert_int_equal(e.peak[1], 308281344 + 154140672 + 2183659520LL); /* 2.4644 GiB */
}

static void items_in_turn_hold_the_earlier_outputs(void **state) {
  (void)state;
  kvp_vision v = tiny_tower();
  kvp_encoder_run r = {2, 2, 4, 2}; /* V0: one call a modality */
  kvp_encoder e;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  /* one call: 16 patches; the first call's 4 tokens x 16 held */
  assert_int_equal(e.block[1], 16 * 80 * 2);
  assert_int_equal(e.cast, 16 * 6 * 2);
  assert_int_equal(e.inputs, 32 * 6 * 4);     /* every item's pixels */
  assert_int_equal(e.outputs, 2 * 4 * 16 * 2); /* every item's embeddings */
  assert_int_equal(e.peak[1], 768 + 192 + 4 * 16 * 2 + 2560);
  assert_int_equal(e.peak[0], 768 + 192 + 4 * 16 * 2 + 16 * 60 * 2);
  assert_int_equal(e.kept, 768 + 256);
  r.calls = 5; /* more calls than items: one item a call */
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(e.peak[1], 768 + 192 + 4 * 16 * 2 + 2560);
}

static void kept_encoder_outputs_add_to_the_decoder_peak(void **state) {
  (void)state;
  kvp_shape s = llama8b();
  kvp_profile p = v0_profile();
  kvp_activation a;
  kvp_vision v = tiny_tower();
  kvp_encoder_run r = {2, 2, 4, 1};
  kvp_encoder e;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.term[KVP_PREDICT_ENCODER][1], 0);
  const kvp_activation dec = a;
  assert_int_equal(dec.largest, KVP_PREDICT_SAMPLER);
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(kvp_predict_add_encoder(&a, &e, NULL), KVP_OK);
  /* the sampler still sets the peak, with the kept 1024 bytes under it */
  assert_int_equal(a.bytes, dec.bytes + 1024);
  assert_int_equal(a.largest, KVP_PREDICT_SAMPLER);
  assert_int_equal(a.encoder_kept, 1024);
  assert_int_equal(a.lo, dec.lo + 1024);
  assert_int_equal(a.hi, dec.hi + 1024);
  assert_int_equal(a.term[KVP_PREDICT_ENCODER][0], 4992);
  assert_int_equal(a.bytes_of[KVP_PREDICT_ENCODER], 6272);
  assert_string_equal(kvp_predict_term_name(KVP_PREDICT_ENCODER), "encoder");
}

static void a_big_encoder_batch_sets_the_peak(void **state) {
  (void)state;
  kvp_shape s = tiny_moe();
  kvp_profile p = tiny_moe_profile();
  kvp_activation a;
  kvp_vision v = tiny_tower();
  kvp_encoder_run r = {2, 2, 4, 1};
  kvp_encoder e;
  assert_int_equal(kvp_predict_activation(&s, &p, &a, NULL), KVP_OK);
  assert_int_equal(a.bytes, 736);
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, NULL), KVP_OK);
  assert_int_equal(kvp_predict_add_encoder(&a, &e, NULL), KVP_OK);
  /* 6272 against 736 + 1024 */
  assert_int_equal(a.bytes, 6272);
  assert_int_equal(a.largest, KVP_PREDICT_ENCODER);
  assert_int_equal(a.hi, 6272);
  assert_int_equal(a.lo, 4992);
}

static void bad_towers_are_named(void **state) {
  (void)state;
  kvp_vision v = tiny_tower();
  kvp_encoder_run r = {2, 2, 4, 1};
  kvp_encoder e;
  kvp_diag d = {{0}};
  v.tokens = 17;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "17 tokens from 16 patches"));
  v = tiny_tower();
  r.items = 0;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "encoder items"));
  r.items = 2, r.pixel_bytes = 0;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "pixel_bytes"));
  r.pixel_bytes = 4, v.patches = INT64_MAX / 2, v.tokens = 1;
  assert_int_equal(kvp_predict_encoder(&v, &r, &e, &d), KVP_EOVERFLOW);
}

#define GiB 1073741824.0

/* engines.lua's constants at the time of writing: the base's stated range;
 * the context's from its published measurements (287,047,680 bytes,
 * pytorch/pytorch#86509; 426 MiB, unsloth-zoo#1053; about 0.4 GiB); NCCL's connection from its defaults (src/init.cc: Simple
 * 1 << 22; LL 8 lines x 512 threads x 8 steps x 16 bytes; LL128 120 x 640
 * x 8 x 8 bytes), 2-64 channels; the custom all-reduce's two cudaMalloc'd
 * buffers of max_size 8192 x 1024 (custom_all_reduce.py); NVLS's 16
 * channels x 2 x (4 MiB + 2 MiB) per head (nvls.cc to NCCL 2.20) */
static kvp_non_torch constants(void) {
  kvp_non_torch nt = {.base = {0, 0.19 * GiB, 0.5 * GiB},
                      .context = {287047680, 0.4 * GiB, 426 * 1048576.0},
                      .nccl_connection = (1 << 22) + 8 * 512 * 8 * 16 + 120 * 640 * 8 * 8,
                      .nccl_channels = {2, 2, 64},
                      .custom_ar = 2 * 8192 * 1024,
                      .nvls_head = 16 * 2 * ((1 << 22) + (1 << 21))};
  return nt;
}

/* kvp_predict_non_torch at tp, pp for vLLM with NCCL counted or not and
 * P2P or not, the context not counted */
static kvp_non_torch_parts vllm_nt(int64_t tp, int64_t pp, int nccl, int p2p) {
  const kvp_non_torch nt = constants();
  const kvp_non_torch_at at = {.engine = KVP_NT_VLLM, .tp = tp, .pp = pp, .nccl_counted = nccl,
                               .p2p = p2p};
  kvp_non_torch_parts o;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  return o;
}

static void non_torch_base_alone_at_tp_1(void **state) {
  (void)state;
  /* nothing communicates at tp 1, pp 1: the base's range, rounded down */
  kvp_non_torch_parts o = vllm_nt(1, 1, 1, 1);
  assert_int_equal(o.total[0], 204010946); /* floor(0.19 x 2^30 = 204010946.56) */
  assert_int_equal(o.total[1], 0);
  assert_int_equal(o.total[2], 536870912);
  assert_int_equal(o.nccl[2], 0);
  assert_int_equal(o.custom_ar[2], 0);
  /* a version whose snapshot follows the distributed init: the base at any tp */
  o = vllm_nt(8, 2, 0, 1);
  assert_int_equal(o.total[0], 204010946);
  assert_int_equal(o.total[2], 536870912);
  assert_int_equal(o.nccl[0], 0);
}

static void non_torch_nccl_buffers_by_communicator(void **state) {
  (void)state;
  /* one connection: 4194304 + 524288 + 4915200 = 9633792 bytes; tp 2 over
   * P2P: one communicator of 2 channels, 19267584, at most 2 peers x 64
   * channels, 1233125376 */
  kvp_non_torch_parts o = vllm_nt(2, 1, 1, 1);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.nccl[1], 19267584);
  assert_int_equal(o.nccl[2], 1233125376);
  /* pp's communicator alone (tp 1), then tp's and pp's */
  o = vllm_nt(1, 2, 1, 1);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.custom_ar[0], 0);
  o = vllm_nt(2, 2, 1, 1);
  assert_int_equal(o.nccl[0], 2 * 19267584);
  assert_int_equal(o.nccl[2], 2 * (int64_t)1233125376);
  /* without P2P NCCL's SHM transport keeps its buffers in host memory: 0,
   * the high end as if P2P */
  o = vllm_nt(2, 1, 1, 0);
  assert_int_equal(o.nccl[0], 0);
  assert_int_equal(o.nccl[1], 0);
  assert_int_equal(o.nccl[2], 1233125376);
}

static void non_torch_custom_all_reduce_by_world_size(void **state) {
  (void)state;
  /* meta_ptrs and buffer_ptrs, 8 MiB each, at world sizes 2, 4, 6, 8 */
  const int64_t sizes[] = {2, 3, 4, 5, 6, 7, 8, 16};
  const int on[] = {1, 0, 1, 0, 1, 0, 1, 0};
  for (int i = 0; i < 8; i++) {
    kvp_non_torch_parts o = vllm_nt(sizes[i], 1, 1, 1);
    assert_int_equal(o.custom_ar[0], on[i] ? 16777216 : 0);
    assert_int_equal(o.custom_ar[2], on[i] ? 16777216 : 0);
  }
  /* without P2P vLLM disables it (_can_p2p): 0, the high end keeps it */
  kvp_non_torch_parts o = vllm_nt(2, 1, 1, 0);
  assert_int_equal(o.custom_ar[0], 0);
  assert_int_equal(o.custom_ar[2], 16777216);
  /* the total at tp 2 over P2P: base + NCCL + custom all-reduce */
  o = vllm_nt(2, 1, 1, 1);
  assert_int_equal(o.total[0], 240055746); /* floor(204010946.56 + 19267584 + 16777216) */
  assert_int_equal(o.total[1], 36044800);
  assert_int_equal(o.total[2], 536870912 + 1233125376 + 16777216);
}

static void non_torch_context_and_sglang(void **state) {
  (void)state;
  kvp_non_torch nt = constants();
  kvp_non_torch_parts o;
  /* the CUDA context counted: the sums, each rounded down once */
  kvp_non_torch_at at = {.engine = KVP_NT_VLLM, .tp = 1, .pp = 1, .nccl_counted = 1,
                         .context_counted = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[0], 633507676); /* floor((0.19 + 0.4) x 2^30 = 633507676.16) */
  assert_int_equal(o.total[1], 287047680);
  assert_int_equal(o.total[2], 983564288); /* 0.5 GiB + 426 MiB */
  /* 0.6.4's V0 at tp 2 over NVLink: base + context + 2 channels x 9633792 +
   * the custom all-reduce's 16777216 = 669552476.16; the low end the
   * context's 287047680 + 19267584 + 16777216; the high end 0.5 GiB + 426
   * MiB + 2 peers x 64 channels x 9633792 + 16777216 */
  at = (kvp_non_torch_at){.engine = KVP_NT_VLLM, .tp = 2, .pp = 1, .nccl_counted = 1,
                          .context_counted = 1, .p2p = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[0], 669552476);
  assert_int_equal(o.total[1], 323092480);
  assert_int_equal(o.total[2], 2233466880);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.custom_ar[0], 16777216);
  /* SGLang: the context's range whatever tp */
  at = (kvp_non_torch_at){.engine = KVP_NT_SGLANG, .tp = 4, .pp = 1, .nccl_counted = 1,
                          .context_counted = 1, .p2p = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[0], 429496729);
  assert_int_equal(o.nccl[0], 0);
}

static void non_torch_bad_constants_are_named(void **state) {
  (void)state;
  kvp_non_torch nt = constants();
  kvp_non_torch_parts o;
  kvp_diag d = {{0}};
  kvp_non_torch_at at = {.engine = KVP_NT_VLLM, .tp = 2, .pp = 1, .nccl_counted = 1};
  nt.base.point = 2 * GiB; /* past its high end */
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.base"));
  nt = constants();
  nt.context.lo = -1;
  assert_int_equal(kvp_non_torch_check(&nt, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.context"));
  nt = constants();
  nt.nccl_channels.lo = 3; /* past its point */
  assert_int_equal(kvp_non_torch_check(&nt, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.nccl_channels"));
  nt = constants();
  nt.custom_ar = -1;
  assert_int_equal(kvp_non_torch_check(&nt, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.custom_ar"));
  nt = constants();
  nt.nccl_connection = 0.0 / 0.0;
  assert_int_equal(kvp_non_torch_check(&nt, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.nccl_connection"));
  nt = constants();
  at.tp = 0;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, &d), KVP_EINVAL);
  at.tp = 1, at.pp = 0;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, &d), KVP_EINVAL);
  at.pp = 1, at.engine = 7;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, &d), KVP_EINVAL);
  at.engine = KVP_NT_VLLM;
  assert_int_equal(kvp_predict_non_torch(NULL, &at, &o, &d), KVP_EINVAL);
  nt = constants();
  nt.nvls_head = -1;
  assert_int_equal(kvp_non_torch_check(&nt, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "non_torch.nvls_head"));
}

/* NVLS (communicators of more than 2 ranks on multicast GPUs) and NCCL
 * connected at runtime feed the high end alone */
static void non_torch_nvls_and_runtime_connect_in_high_end(void **state) {
  (void)state;
  const kvp_non_torch nt = constants();
  kvp_non_torch_parts o;
  /* tp 4 over NVSwitch, NCCL counted: 2 channels x 9633792 at the point;
   * the high end 2 peers x 64 channels x 9633792 = 1233125376 + 4 heads x
   * 16 x 2 x 6 MiB = 805306368 */
  kvp_non_torch_at at = {.engine = KVP_NT_VLLM, .tp = 4, .pp = 1, .nccl_counted = 1, .p2p = 1,
                         .nvls = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.nccl[1], 19267584);
  assert_int_equal(o.nccl[2], 2038431744); /* 1233125376 + 805306368 */
  assert_int_equal(o.total[2], 2592079872); /* + 0.5 GiB + 16777216 */
  /* NVLS is off at 2 GPUs (ncclNvlsInit: gpuCount <= 2) */
  at.tp = 2;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[2], 1233125376);
  /* tp 8 and pp 4: two communicators, 2 x 1233125376 + (8 + 4) heads x
   * 201326592 */
  at.tp = 8, at.pp = 4;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[2], 2 * (int64_t)1233125376 + 12 * (int64_t)201326592);
  /* NCCL connected at the first collective (the snapshot after NCCL's
   * init): the point and the low end the base alone, the custom
   * all-reduce's buffers before the snapshot; the channels' buffers in
   * the high end: tp 2, 536870912 + 1233125376 */
  at = (kvp_non_torch_at){.engine = KVP_NT_VLLM, .tp = 2, .pp = 1, .nccl_runtime = 1, .p2p = 1,
                          .nvls = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[0], 204010946);
  assert_int_equal(o.total[1], 0);
  assert_int_equal(o.total[2], 536870912 + 1233125376);
  assert_int_equal(o.nccl[0], 0);
  assert_int_equal(o.custom_ar[2], 0);
  /* at tp 4 NVLS's 4 heads too; at tp 1 nothing communicates */
  at.tp = 4;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[2], 2575302656); /* 0.5 GiB + 1233125376 + 805306368 */
  at.tp = 1;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[2], 536870912);
}

/* the tp group's torch communicator (torch_pg), created at the profile
 * run's logits gather after the snapshot: its ring in the point on P2P GPUs
 * at pp 1, its tree's peer and NVLS in the high end */
static void non_torch_torch_communicator(void **state) {
  (void)state;
  const kvp_non_torch nt = constants();
  kvp_non_torch_parts o;
  /* vLLM 0.13 at tp 2 over NVLink (NCCL connected at runtime): PyNccl's
   * channels in the high end alone (2 peers x 64 x 9633792 = 1233125376);
   * torch's ring at 2 channels, 2 x 9633792 = 19267584, in the point and
   * the low end, its 2 peers x 64 channels in the high end */
  kvp_non_torch_at at = {.engine = KVP_NT_VLLM, .tp = 2, .pp = 1, .nccl_runtime = 1, .p2p = 1,
                         .nvls = 1, .torch_pg = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.nccl[1], 19267584);
  assert_int_equal(o.nccl[2], 2 * (int64_t)1233125376);
  assert_int_equal(o.total[0], 223278530); /* floor(204010946.56 + 19267584) */
  assert_int_equal(o.total[1], 19267584);
  assert_int_equal(o.total[2], 536870912 + 2 * (int64_t)1233125376);
  assert_int_equal(o.custom_ar[2], 0);
  /* tp 4: each communicator's high end adds 4 NVLS heads x 201326592 */
  at.tp = 4;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 19267584);
  assert_int_equal(o.nccl[2], 2 * ((int64_t)1233125376 + 4 * (int64_t)201326592));
  /* pp 2: the logged worker (the first stage) runs no sampler: torch's
   * ring in the high end alone, beside PyNccl's two communicators */
  at.tp = 2, at.pp = 2;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 0);
  assert_int_equal(o.total[0], 204010946);
  assert_int_equal(o.nccl[2], 3 * (int64_t)1233125376);
  /* without P2P its buffers are host memory (SHM): 0, the high end keeps them */
  at.pp = 1, at.p2p = 0;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 0);
  assert_int_equal(o.nccl[2], 2 * (int64_t)1233125376);
  /* a release whose snapshot precedes the distributed init (nccl_counted):
   * PyNccl's 19267584, the custom all-reduce's 16777216 and torch's
   * 19267584: floor(204010946.56 + 55312384) */
  at = (kvp_non_torch_at){.engine = KVP_NT_VLLM, .tp = 2, .pp = 1, .nccl_counted = 1, .p2p = 1,
                          .torch_pg = 1};
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.nccl[0], 2 * 19267584);
  assert_int_equal(o.custom_ar[0], 16777216);
  assert_int_equal(o.total[0], 259323330);
  assert_int_equal(o.total[2], 536870912 + 2 * (int64_t)1233125376 + 16777216);
  /* tp 1: no tp communicator */
  at.tp = 1;
  assert_int_equal(kvp_predict_non_torch(&nt, &at, &o, NULL), KVP_OK);
  assert_int_equal(o.total[0], 204010946);
  assert_int_equal(o.nccl[2], 0);
}

/* Llama-3.1-8B's decoder layer (config.json: hidden 4096, 32 heads, 8 KV
 * heads of 128, intermediate 14336) with one slot of rank 16 in bf16 */
static kvp_lora llama8b_lora(void) {
  return (kvp_lora){.max_loras = 1, .max_rank = 16, .dtype_bytes = 2, .hidden = 4096,
                    .heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate = 14336};
}

static void lora_slots_match_a_hand_count(void **state) {
  (void)state;
  kvp_lora lo = llama8b_lora();
  int64_t b;
  /* tp 1, by module (A rank x in, B out x rank): qkv 3 x 16 x 4096 + (4096
   * + 2 x 1024) x 16, o 16 x 4096 + 4096 x 16, gate_up 2 x 16 x 4096 + 2 x
   * 14336 x 16, down 16 x 14336 + 4096 x 16 = 1310720 parameters, LoRA's
   * count on the seven linear layers; 32 layers: 41943040, 80 MiB in bf16 */
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, NULL), KVP_OK);
  assert_int_equal(b, 1310720 * 2);
  /* max_loras slots and a 4-byte dtype scale it */
  lo.max_loras = 4, lo.dtype_bytes = 4;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, NULL), KVP_OK);
  assert_int_equal(b, 1310720 * 4 * 4);
  /* tp 2: A of the column layers whole (5 x 16 x 4096), B of the row layers
   * whole (2 x 4096 x 16), the rest split: qkv B (2048 + 2 x 512) x 16, o A
   * 16 x 2048, gate_up B 2 x 7168 x 16, down A 16 x 7168 */
  lo = llama8b_lora();
  assert_int_equal(kvp_lora_layer_bytes(&lo, 2, &b, NULL), KVP_OK);
  assert_int_equal(b, (327680 + 131072 + 49152 + 32768 + 229376 + 114688) * 2);
  /* fully sharded: the column layers' A rank 8, the row layers' B 2048 */
  lo.fully_sharded = 1;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 2, &b, NULL), KVP_OK);
  assert_int_equal(b, (163840 + 65536 + 49152 + 32768 + 229376 + 114688) * 2);
  /* tp 16 over 8 KV heads: one replicated head per GPU */
  lo.fully_sharded = 0;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 16, &b, NULL), KVP_OK);
  assert_int_equal(b, (327680 + (256 + 2 * 128) * 16 + 16 * 256 + 2 * 896 * 16 + 16 * 896 +
                       131072) * 2);
}

static void lora_bad_configs_are_named(void **state) {
  (void)state;
  kvp_lora lo = llama8b_lora();
  int64_t b;
  kvp_diag d = {{0}};
  lo.fully_sharded = 1; /* vLLM's divide: tp 3 does not divide rank 16 */
  assert_int_equal(kvp_lora_layer_bytes(&lo, 3, &b, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "fully_sharded_loras"));
  lo = llama8b_lora();
  lo.max_loras = 0;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "max_loras"));
  lo = llama8b_lora();
  lo.dtype_bytes = 1;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "lora_dtype"));
  lo = llama8b_lora();
  lo.intermediate = 0;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "intermediate"));
  lo = llama8b_lora();
  lo.max_loras = INT64_MAX / 4;
  assert_int_equal(kvp_lora_layer_bytes(&lo, 1, &b, &d), KVP_EOVERFLOW);
}

/* The profile's max_num_batched_tokens and max_num_seqs of rule r on a GPU
 * of gpu bytes at max_model_len mml (0: unknown), tokens and seqs given
 * when > 0, through kvp_predict_deploy. */
static void vllm_defaults(kvp_engine_rule r, int64_t gpu, int64_t mml, int64_t tokens,
                          int64_t seqs, int64_t *t, int64_t *q) {
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  d.engine = r;
  d.engine.profiled = 1;
  d.engine.tokens_given = tokens > 0, d.engine.seqs_given = seqs > 0;
  d.gpu_bytes = gpu, d.max_model_len = mml, d.max_num_batched_tokens = tokens;
  d.vllm.max_num_seqs = seqs;
  kvp_reserves o;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &o, NULL), KVP_OK);
  *t = o.tokens, *q = o.seqs;
}

static void vllm_defaults_by_engine_gpu_and_length(void **state) {
  (void)state;
  kvp_engine_rule r;
  memset(&r, 0, sizeof r);
  int64_t t, q;
  const int64_t h100 = 85 * (int64_t)GiB, l4 = 22 * (int64_t)GiB;
  /* V0: max(max_model_len, 2048) tokens, 256 sequences; chunked past 32768 */
  r.chunked_tokens = 512;
  vllm_defaults(r, h100, 20000, 0, 0, &t, &q);
  assert_int_equal(t, 20000);
  assert_int_equal(q, 256);
  vllm_defaults(r, h100, 1024, 0, 0, &t, &q);
  assert_int_equal(t, 2048);
  vllm_defaults(r, h100, 0, 0, 0, &t, &q); /* unknown length */
  assert_int_equal(t, 2048);
  vllm_defaults(r, h100, 65536, 0, 0, &t, &q);
  assert_int_equal(t, 512);
  r.chunked_tokens = 0;
  vllm_defaults(r, h100, 65536, 0, 0, &t, &q);
  assert_int_equal(t, 2048);
  /* V1: the server's 2048 / 256, or 8192 / big_seqs on a big GPU but an A100 */
  r.v1 = 1;
  r.big_seqs = 1024;
  vllm_defaults(r, l4, 65536, 0, 0, &t, &q);
  assert_int_equal(t, 2048);
  assert_int_equal(q, 256);
  vllm_defaults(r, h100, 4096, 0, 0, &t, &q);
  assert_int_equal(t, 8192);
  assert_int_equal(q, 1024);
  r.gpu_a100 = 1;
  vllm_defaults(r, h100, 4096, 0, 0, &t, &q);
  assert_int_equal(t, 2048);
  r.gpu_a100 = 0;
  r.offline = 1;
  vllm_defaults(r, h100, 4096, 0, 0, &t, &q);
  assert_int_equal(t, 16384);
  /* given values win; sequences capped at the tokens */
  vllm_defaults(r, h100, 4096, 512, 0, &t, &q);
  assert_int_equal(t, 512);
  assert_int_equal(q, 512);
  vllm_defaults(r, h100, 4096, 512, 4096, &t, &q);
  assert_int_equal(q, 4096);
  /* TensorRT-LLM's dry run: max_num_tokens 8192 in requests of
   * min(max_seq_len - 1, 8192) tokens: 2047 at 2048, 5 requests */
  memset(&r, 0, sizeof r);
  r.trtllm = 1, r.default_tokens = 8192;
  vllm_defaults(r, h100, 2048, 0, 0, &t, &q);
  assert_int_equal(t, 8192);
  assert_int_equal(q, 5);
  vllm_defaults(r, h100, 131072, 0, 0, &t, &q);
  assert_int_equal(q, 1);
}

/* Llama-3.1-8B on one H100 under V1's defaults: 8192 tokens, 1024 sequences */
static kvp_deploy predicted_deploy(void) {
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.model.max_context = 131072;
  d.gpu_bytes = 85 * (int64_t)GiB;
  d.engine.activation = 1;
  d.engine.overhead = KVP_NT_VLLM;
  d.engine.v1 = 1;
  d.engine.big_seqs = 1024;
  d.engine.shape = llama8b();
  d.engine.profile.act_bytes = 2;
  d.engine.profile.moe_chunk = 32768;
  return d;
}

static void deploy_predictions_follow_its_numbers(void **state) {
  (void)state;
  kvp_non_torch nt = constants();
  kvp_deploy d = predicted_deploy();
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  /* kvp_predict_activation with V1's big-GPU defaults, 8192 tokens and 1024
   * sequences, compiled, the sort path */
  kvp_profile p0 = d.engine.profile;
  p0.tokens = 8192, p0.seqs = 1024, p0.tp = 1, p0.last_stage = 1;
  kvp_activation a0;
  assert_int_equal(kvp_predict_activation(&d.engine.shape, &p0, &a0, NULL), KVP_OK);
  assert_int_equal(d.activation_bytes, a0.bytes);
  assert_int_equal(d.overhead_bytes, 204010946);
  assert_int_equal(d.vllm.max_num_seqs, 0); /* the engine not named: no cap */
  assert_int_equal(d.vllm.stage_activation_bytes[0], 0);
  /* the same call as kvp_predict_activation with the defaults */
  kvp_profile p = d.engine.profile;
  p.tokens = 8192, p.seqs = 1024, p.tp = 2, p.last_stage = 1;
  kvp_activation a;
  assert_int_equal(kvp_predict_activation(&d.engine.shape, &p, &a, NULL), KVP_OK);
  d.tp = 2;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  assert_int_equal(d.activation_bytes, a.bytes);
  assert_int_equal(d.overhead_bytes, 204010946); /* NCCL not counted */
  d.engine.nccl_counted = 1;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  assert_int_equal(d.overhead_bytes, 204010946); /* no P2P: NCCL's buffers in host memory */
  d.engine.gpu_p2p = 1;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  /* + PyNccl's 2 channels, the custom all-reduce and torch's communicator's
   * 2 channels (the profile run's logits gather): 204010946.56 + 19267584 +
   * 16777216 + 19267584 */
  assert_int_equal(d.overhead_bytes, 259323330);
  d.engine.gpu_p2p = 0;
  /* pipeline stages: the last samples, the others reserve the forward */
  d.pp = 3;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  p.last_stage = 0;
  kvp_activation f;
  assert_int_equal(kvp_predict_activation(&d.engine.shape, &p, &f, NULL), KVP_OK);
  assert_int_equal(d.vllm.stage_activation_bytes[0], f.bytes);
  assert_int_equal(d.vllm.stage_activation_bytes[1], f.bytes);
  assert_int_equal(d.vllm.stage_activation_bytes[2], a.bytes);
  assert_int_equal(d.vllm.stage_activation_bytes[3], 0);
  assert_true(f.bytes < a.bytes);
  d.pp = 1;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  assert_int_equal(d.vllm.stage_activation_bytes[2], 0);
  /* the engine named: its default caps the requests; a given one is kept */
  d.engine.seqs_cap = 1;
  d.gpu_bytes = 22 * (int64_t)GiB;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  assert_int_equal(d.vllm.max_num_seqs, 256);
  d.engine.seqs_cap = 0;
  d.engine.seqs_given = 1;
  d.vllm.max_num_seqs = 8;
  d.engine.tokens_given = 1;
  d.max_num_batched_tokens = 100;
  assert_int_equal(kvp_predict_deploy(&d, &nt, NULL, NULL), KVP_OK);
  assert_int_equal(d.vllm.max_num_seqs, 8);
  p.tokens = 100, p.seqs = 8, p.tp = d.tp, p.last_stage = 1;
  assert_int_equal(kvp_predict_activation(&d.engine.shape, &p, &a, NULL), KVP_OK);
  assert_int_equal(d.activation_bytes, a.bytes);
  /* nothing predicted: the numbers stay as given */
  kvp_deploy g = predicted_deploy();
  memset(&g.engine, 0, sizeof g.engine);
  g.activation_bytes = 5, g.overhead_bytes = 7;
  assert_int_equal(kvp_predict_deploy(&g, NULL, NULL, NULL), KVP_OK);
  assert_int_equal(g.activation_bytes, 5);
  assert_int_equal(g.overhead_bytes, 7);
  /* an overhead to predict needs the constants */
  kvp_diag diag = {{0}};
  kvp_deploy h = predicted_deploy();
  assert_int_equal(kvp_predict_deploy(&h, NULL, NULL, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "non-torch"));
}

static void deploy_reserves_report_the_parts(void **state) {
  (void)state;
  kvp_non_torch nt = constants();
  kvp_deploy d = predicted_deploy();
  d.engine.profiled = 1;
  kvp_reserves r;
  assert_int_equal(kvp_predict_deploy(&d, &nt, &r, NULL), KVP_OK);
  /* V1 on a GPU of 85 GiB, not an A100: 8192 tokens, 1024 sequences */
  assert_int_equal(r.tokens, 8192);
  assert_int_equal(r.seqs, 1024);
  assert_int_equal(r.activation, 1);
  assert_int_equal(r.act.bytes, d.activation_bytes);
  /* a stage that does not sample: the layers' terms alone */
  kvp_profile p = d.engine.profile;
  p.tokens = 8192, p.seqs = 1024, p.tp = 1, p.last_stage = 0;
  kvp_activation f;
  assert_int_equal(kvp_predict_activation(&d.engine.shape, &p, &f, NULL), KVP_OK);
  assert_int_equal(r.forward_bytes, f.bytes);
  assert_true(r.forward_bytes < r.act.bytes);
  /* tp 1 of a version that counts neither NCCL nor the context: tp1's range */
  assert_int_equal(r.overhead, 1);
  assert_int_equal(r.non_torch.total[0], 204010946);
  assert_int_equal(r.non_torch.total[1], 0);
  assert_int_equal(r.non_torch.total[2], 536870912);
  assert_int_equal(r.vision, 0);
  assert_int_equal(r.repacked, 0);
  assert_int_equal(r.sglang, 0);
  /* the profile alone (a rule that predicts nothing else) */
  kvp_deploy g = predicted_deploy();
  g.engine.activation = 0, g.engine.overhead = KVP_NT_NONE, g.engine.profiled = 1;
  g.engine.offline = 1;
  assert_int_equal(kvp_predict_deploy(&g, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.tokens, 16384);
  assert_int_equal(r.seqs, 1024);
  assert_int_equal(r.activation, 0);
  assert_int_equal(g.activation_bytes, 0);
  /* MXFP4 experts repacked: the weights change and say so */
  kvp_deploy m = predicted_deploy();
  m.engine.activation = 0, m.engine.overhead = KVP_NT_NONE;
  m.engine.mxfp4 = 1;
  m.engine.mx = (kvp_mxfp4){.experts = 32, .hidden = 2880, .inter = 2880, .layers = 24,
                             .ckpt_bytes = 13000000000LL, .align_inter = 128, .align_hidden = 256};
  m.weight_bytes = 13000000000LL;
  assert_int_equal(kvp_predict_deploy(&m, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.repacked, 1);
  assert_true(m.weight_bytes > 13000000000LL);
  m.engine.mx.align_inter = m.engine.mx.align_hidden = 1;
  m.weight_bytes = 13000000000LL;
  assert_int_equal(kvp_predict_deploy(&m, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.repacked, 0);
  assert_int_equal(m.weight_bytes, 13000000000LL);
  /* SGLang's memory defaults: 24 GiB at tp 4, 2048 tokens, 80 graphs, 4256 MiB */
  kvp_deploy s = predicted_deploy();
  memset(&s.engine, 0, sizeof s.engine);
  s.engine.sglang_memory = 1;
  s.gpu_bytes = 24LL << 30, s.tp = 4;
  assert_int_equal(kvp_predict_deploy(&s, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.sglang, 1);
  assert_int_equal(r.chunk, 2048);
  assert_int_equal(r.graph_bs, 80);
  assert_true(r.reserved_mib == 4256);
  assert_true(s.utilization == 0.827);
  /* the graphs up to 80: 1, 2, 4, 8, 12, then 16..80 by 8 (9 sizes) */
  assert_int_equal(r.ngraphs, 14);
  assert_int_equal(r.graphs[4], 12);
  assert_int_equal(r.graphs[5], 16);
  assert_int_equal(r.graphs[13], 80);
  /* 192 GiB at tp 8: 512 graphs, 5 + 31 (16..256) + 15 (272..496) + 1 (512) */
  s.gpu_bytes = 192LL << 30, s.tp = 8;
  assert_int_equal(kvp_predict_deploy(&s, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.graph_bs, 512);
  assert_int_equal(r.ngraphs, 52);
  assert_int_equal(r.graphs[35], 256);
  assert_int_equal(r.graphs[36], 272);
  assert_int_equal(r.graphs[50], 496);
  assert_int_equal(r.graphs[51], 512);
}

/* Qwen2.5-VL-7B's tower (config.json vision_config) */
static kvp_tower qwen_tower(void) {
  kvp_tower t = {.hidden = 1280, .intermediate = 3420, .gated = 1, .proj_hidden = 5120,
                 .out_hidden = 3584, .patch = 14, .merge = 2, .max_pixels = 12845056,
                 .in_channels = 3, .temporal_patch = 2, .video = 1};
  return t;
}

static void vision_items_follow_the_engine_and_the_tower(void **state) {
  (void)state;
  kvp_non_torch nt = constants();
  kvp_deploy d = predicted_deploy();
  d.engine.vision = 1;
  d.engine.tower = qwen_tower();
  d.engine.seqs_given = d.engine.tokens_given = 1;
  d.max_num_batched_tokens = 8192, d.vllm.max_num_seqs = 256, d.max_model_len = 32768;
  kvp_reserves r;
  assert_int_equal(kvp_predict_deploy(&d, &nt, &r, NULL), KVP_OK);
  /* max_pixels 12845056: sqrt 3584 = 128 x 28, a 3584-pixel side, 256 x 256
   * patches of 14, 16384 tokens after the 2 x 2 merge */
  assert_int_equal(r.vision, 1);
  assert_int_equal(r.item_patches, 65536);
  assert_int_equal(r.item_tokens, 16384);
  /* V1: budget max(8192, 16384) = 16384, one item (256 x min(999, 32768 /
   * 16384) = 512 allowed); the decoder runs its 8192 tokens */
  assert_int_equal(r.enc_budget, 16384);
  assert_int_equal(r.enc_items, 1);
  assert_int_equal(r.dec_tokens, 8192);
  /* fp32 pixel values kept: 65536 patches x (3 x 2 x 14 x 14) values x 4 */
  assert_int_equal(r.enc.inputs, 65536LL * 1176 * 4);
  assert_int_equal(r.act.term[KVP_PREDICT_ENCODER][1], r.enc.peak[1]);
  /* a CLIP tower of image_size 336 with a class token: 577 patches, 576 tokens;
   * 8192 / 576 = 14 items (at 4096 tokens a prompt: 256 x 7 allowed) */
  kvp_tower clip = {.hidden = 1024, .intermediate = 4096, .out_hidden = 4096, .patch = 14,
                    .merge = 1, .image_size = 336, .class_token = 1, .in_channels = 3,
                    .temporal_patch = 1};
  d.engine.tower = clip;
  d.max_model_len = 4096;
  assert_int_equal(kvp_predict_deploy(&d, &nt, &r, NULL), KVP_OK);
  assert_int_equal(r.item_patches, 577);
  assert_int_equal(r.item_tokens, 576);
  assert_int_equal(r.enc_items, 14);
  /* V0: an image and a video of 16384 tokens in each sequence: 8192 / 32768
   * gives 0, so one sequence of 32768 tokens and 2 items, no budget */
  d.engine.tower = qwen_tower();
  d.engine.v1 = 0;
  assert_int_equal(kvp_predict_deploy(&d, &nt, &r, NULL), KVP_OK);
  assert_int_equal(r.enc_items, 2);
  assert_int_equal(r.dec_tokens, 32768);
  assert_int_equal(r.enc_budget, 0);
  /* a tower with neither max_pixels nor image_size is named */
  d.engine.tower.max_pixels = 0;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_predict_deploy(&d, &nt, &r, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "neither max_pixels nor image_size"));
}

static void gpu_facts_set_the_a100_and_the_default_kernel(void **state) {
  (void)state;
  kvp_deploy d = predicted_deploy();
  d.engine.activation = 0, d.engine.overhead = KVP_NT_NONE;
  d.engine.mxfp4 = 1;
  d.engine.mx = (kvp_mxfp4){.experts = 32, .hidden = 2880, .inter = 2880, .layers = 24,
                            .ckpt_bytes = 13000000000LL, .align_inter = 1, .align_hidden = 1};
  /* Marlin's layout on this GPU (I to 128, H to 256), an A100 */
  const kvp_gpu_facts marlin = {.a100 = 1, .mx = {.align_inter = 128, .align_hidden = 256}};
  d.engine.mx_by_gpu = 1;
  kvp_engine_rule_gpu(&d.engine, &marlin);
  assert_int_equal(d.engine.gpu_a100, 1);
  assert_int_equal(d.engine.profile.blas_workspace, 0);
  /* the GPU's cuBLAS workspace goes to vLLM's profile, not TensorRT-LLM's */
  const kvp_gpu_facts sm90 = {.blas_workspace = 33554432};
  kvp_engine_rule_gpu(&d.engine, &sm90);
  assert_int_equal(d.engine.profile.blas_workspace, 33554432);
  d.engine.trtllm = 1;
  kvp_engine_rule_gpu(&d.engine, &sm90);
  assert_int_equal(d.engine.profile.blas_workspace, 0);
  d.engine.trtllm = 0;
  kvp_engine_rule_gpu(&d.engine, &marlin);
  assert_int_equal(d.engine.mx.align_inter, 128);
  assert_int_equal(d.engine.mx.align_hidden, 256);
  assert_int_equal(d.engine.mx.experts, 32); /* the model's part stays */
  d.weight_bytes = 13000000000LL;
  assert_int_equal(kvp_predict_deploy(&d, NULL, NULL, NULL), KVP_OK);
  /* tp 1: 24 x 32 experts, each 3 (2944 x 3072 - 2880 x 2880) more values
   * (/2 bytes), scales (/32) and 2 (2 x 64 + 192) bias bytes */
  const int64_t g = 3 * (2944LL * 3072 - 2880LL * 2880);
  assert_int_equal(d.weight_bytes - 13000000000LL, 24LL * 32 * (g / 2 + g / 32 + 2 * (2 * 64 + 192)));
  /* a kernel named by the deployment keeps its layout on any GPU */
  const kvp_gpu_facts flashinfer = {.mx = {.align_inter = 256, .align_hidden = 256,
                                           .fp32_bias = 1}};
  d.engine.mx_by_gpu = 0;
  kvp_engine_rule_gpu(&d.engine, &flashinfer);
  assert_int_equal(d.engine.gpu_a100, 0);
  assert_int_equal(d.engine.mx.align_inter, 128);
  assert_int_equal(d.engine.mx.fp32_bias, 0);
  /* a release that ships triton_kernels takes the GPU's other default (an
   * H100: Triton's layout where Marlin's was the older releases') */
  const kvp_gpu_facts h100 = {.mx = {.align_inter = 128, .align_hidden = 256},
                              .mx_bundled = {.align_inter = 64, .align_hidden = 1, .tile = 32,
                                             .scale_rows = 256, .fp32_bias = 1,
                                             .keeps_scales = 1}};
  d.engine.mx_by_gpu = 1;
  d.engine.mx_bundled = 1;
  kvp_engine_rule_gpu(&d.engine, &h100);
  assert_int_equal(d.engine.mx.align_inter, 64);
  assert_int_equal(d.engine.mx.scale_rows, 256);
  assert_int_equal(d.engine.mx.keeps_scales, 1);
  d.engine.mx_bundled = 0;
  kvp_engine_rule_gpu(&d.engine, &h100);
  assert_int_equal(d.engine.mx.align_inter, 128);
  assert_int_equal(d.engine.mx.keeps_scales, 0);
}

static void fraction_by_tp_picks_the_first_row_reached(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.gpu_bytes = 80 * (int64_t)GiB;
  /* SGLang's v0.4 rule: 16 -> 0.79, 8 -> 0.81, 4 -> 0.85, 2 -> 0.87, 1 -> 0.88 */
  const int64_t tps[] = {16, 8, 4, 2, 1};
  const double fr[] = {0.79, 0.81, 0.85, 0.87, 0.88};
  d.engine.nfraction = 5;
  for (int i = 0; i < 5; i++) d.engine.fraction_tp[i] = tps[i], d.engine.fraction[i] = fr[i];
  const int64_t ask[] = {1, 2, 3, 4, 7, 8, 15, 16, 64};
  const double want[] = {0.88, 0.87, 0.87, 0.85, 0.85, 0.81, 0.81, 0.79, 0.79};
  for (int i = 0; i < 9; i++) {
    d.tp = ask[i];
    assert_int_equal(kvp_predict_deploy(&d, NULL, NULL, NULL), KVP_OK);
    assert_true(d.utilization == want[i]);
  }
  /* a table that stops above tp 1 gives no fraction for tp 1: named */
  d.engine.nfraction = 4;
  d.tp = 1;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_predict_deploy(&d, NULL, NULL, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "tp 1"));
}

static void sglang_memory_defaults_by_hand(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.engine.sglang_memory = 1;
  kvp_reserves r;
  /* an H100 as the runtime reports it, 81090 MiB, tp 1: 8192 tokens, 256
   * graphs, 512 + 12288 + 512 + 128 = 13440 MiB, (81090 - 13440) / 81090 */
  d.gpu_bytes = 81090LL << 20;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.chunk, 8192);
  assert_int_equal(r.graph_bs, 256);
  assert_true(r.reserved_mib == 13440);
  assert_true(d.utilization == 0.834);
  /* 24 GiB at tp 4: 2048, 80 graphs, 512 + 3072 + 160 + 512 = 4256 (no floor) */
  d.gpu_bytes = 24LL << 30;
  d.tp = 4;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.chunk, 2048);
  assert_int_equal(r.graph_bs, 80);
  assert_true(r.reserved_mib == 4256);
  assert_true(d.utilization == 0.827);
  /* 16 GiB: 2048 and 8 graphs at any tp; above 160 GiB 16384 and 512 */
  d.gpu_bytes = 16LL << 30;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.graph_bs, 8);
  d.gpu_bytes = 192LL << 30;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &r, NULL), KVP_OK);
  assert_int_equal(r.chunk, 16384);
  assert_int_equal(r.graph_bs, 512);
  /* pp takes 512 more MiB per 8 ranks: 24 GiB at tp 4, pp 2 */
  d.gpu_bytes = 24LL << 30;
  d.pp = 2;
  assert_int_equal(kvp_predict_deploy(&d, NULL, &r, NULL), KVP_OK);
  assert_true(r.reserved_mib == 4768);
  assert_true(d.utilization < 0.827);
}

static void mxfp4_weights_follow_the_kernel_and_tp(void **state) {
  (void)state;
  /* gpt-oss-20b's experts: 32 of H 2880, I 2880, 24 layers */
  kvp_mxfp4 m = {.experts = 32, .hidden = 2880, .inter = 2880, .layers = 24,
                 .ckpt_bytes = 13000000000LL, .align_inter = 1, .align_hidden = 1};
  int64_t b;
  /* the checkpoint's layout: nothing changes at any tp */
  for (int64_t tp = 1; tp <= 8; tp *= 2) {
    assert_int_equal(kvp_mxfp4_weight_bytes(&m, tp, &b, NULL), KVP_OK);
    assert_int_equal(b, m.ckpt_bytes);
  }
  /* Marlin pads I/tp to 128 and H to 256: at tp 1, I 2880 -> 2944, H 2880 ->
   * 3072; per expert the values grow by 3 (I'H' - IH) / 2, the scales by
   * 3 (I'H' - IH) / 32, the bf16 biases by 2 (2 (I' - I) + (H' - H)) */
  m.align_inter = 128, m.align_hidden = 256;
  assert_int_equal(kvp_mxfp4_weight_bytes(&m, 1, &b, NULL), KVP_OK);
  const int64_t d = 3 * (2944LL * 3072 - 2880LL * 2880);
  assert_int_equal(b - m.ckpt_bytes, 24LL * 32 * (d / 2 + d / 32 + 2 * (2 * 64 + 192)));
  /* at tp 2 each GPU holds I/2 = 1440 -> 1536: tp x the per-GPU growth */
  assert_int_equal(kvp_mxfp4_weight_bytes(&m, 2, &b, NULL), KVP_OK);
  const int64_t d2 = 3 * (1536LL * 3072 - 1440LL * 2880);
  assert_int_equal(b - m.ckpt_bytes, 2 * 24LL * 32 * (d2 / 2 + d2 / 32 + 2 * (2 * 96 + 192)));
  kvp_diag diag = {{0}};
  m.experts = 0;
  assert_int_equal(kvp_mxfp4_weight_bytes(&m, 1, &b, &diag), KVP_EINVAL);
}


/* PyTorch's caching allocator (CUDACachingAllocator.cpp at eb42ad6eca0c,
 * the constants of engines.lua torch_alloc), replayed by hand. */
static const kvp_torch_alloc torch_alloc = {
  .min_block = 512, .small_size = 1048576, .small_buffer = 2097152, .large_buffer = 20971520,
  .min_large_alloc = 10485760, .round_large = 2097152
};

static int64_t segments_of(const int64_t *sizes, int64_t n) {
  kvp_torch_block blocks[16];
  int64_t bytes = -1;
  assert_int_equal(kvp_torch_segments(&torch_alloc, sizes, n, blocks, 16, &bytes, NULL), KVP_OK);
  return bytes;
}

static void torch_segments_by_hand(void **state) {
  (void)state;
  const int64_t MiB = 1048576;
  /* the small pool: 1000 -> 1024 bytes from a new 2 MiB segment, the rest
   * (2096128) split off; 1000 again and 600000 (600064) from it, 1495040
   * left; 1 MiB from that (446464 left); a second 1 MiB a new segment */
  const int64_t small[] = {1000, 1000, 600000, MiB, MiB};
  assert_int_equal(segments_of(small, 3), 2 * MiB);
  assert_int_equal(segments_of(small, 4), 2 * MiB);
  assert_int_equal(segments_of(small, 5), 4 * MiB);
  /* 0 bytes allocate nothing */
  const int64_t zero[] = {0, 0};
  assert_int_equal(segments_of(zero, 2), 0);
  /* the large pool: four 5 MiB requests share one 20 MiB segment (15, 10,
   * 5 MiB left, then none); a fifth takes another; a small request never
   * takes a large block (a 2 MiB segment of its own) */
  const int64_t large[] = {5 * MiB, 5 * MiB, 5 * MiB, 5 * MiB, 5 * MiB};
  assert_int_equal(segments_of(large, 4), 20 * MiB);
  assert_int_equal(segments_of(large, 5), 40 * MiB);
  const int64_t mixed[] = {5 * MiB, 1000};
  assert_int_equal(segments_of(mixed, 2), 22 * MiB);
  /* above 10 MiB: a segment of the request rounded up to 2 MiB; 11 MiB + 1
   * (11 MiB + 512) gets 12 MiB, its 1 MiB - 512 rest is not split off, so
   * 1.5 MiB after it takes a 20 MiB segment; 10 MiB exactly: 10 MiB */
  const int64_t big[] = {11 * MiB + 1, 3 * MiB / 2};
  assert_int_equal(segments_of(big, 1), 12 * MiB);
  assert_int_equal(segments_of(big, 2), 32 * MiB);
  const int64_t ten[] = {10 * MiB};
  assert_int_equal(segments_of(ten, 1), 10 * MiB);
  /* best fit: 5 MiB from a 20 MiB segment (15 left), 9 MiB from those (6
   * left), 9 MiB again from a new one (11 left); 4 MiB takes the 6 MiB
   * block, the smallest that holds it (2 left), so 11 MiB takes the 11 MiB
   * block: 40 MiB (taking the 11 MiB block for 4 MiB would need a third) */
  const int64_t fit[] = {5 * MiB, 9 * MiB, 9 * MiB, 4 * MiB, 11 * MiB};
  assert_int_equal(segments_of(fit, 5), 40 * MiB);
}

static void torch_segments_bad_inputs_are_named(void **state) {
  (void)state;
  kvp_torch_block blocks[1];
  int64_t bytes = 0;
  kvp_diag d = {{0}};
  const int64_t two[] = {1000, 5242880};
  /* a free block per allocation: room for one runs out at the second (a
   * small and a large rest) */
  assert_int_equal(kvp_torch_segments(&torch_alloc, two, 2, blocks, 1, &bytes, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "free blocks"));
  assert_int_equal(kvp_torch_segments(&torch_alloc, two, 1, blocks, 1, &bytes, &d), KVP_OK);
  assert_int_equal(bytes, 2097152);
  const int64_t neg[] = {-1};
  assert_int_equal(kvp_torch_segments(&torch_alloc, neg, 1, blocks, 1, &bytes, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "size must be >= 0"));
  kvp_torch_alloc bad = torch_alloc;
  bad.round_large = 0;
  assert_int_equal(kvp_torch_segments(&bad, two, 1, blocks, 1, &bytes, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "round_large"));
  const int64_t huge[] = {INT64_MAX};
  assert_int_equal(kvp_torch_segments(&torch_alloc, huge, 1, blocks, 1, &bytes, &d),
                   KVP_EOVERFLOW);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(dense_terms_match_a_hand_count),
    cmocka_unit_test(sort_temporaries_follow_the_rows_sorted),
    cmocka_unit_test(v0_dummy_sampler_peaks_at_the_sort),
    cmocka_unit_test(v1_of_0_7_holds_logits_but_no_sampler),
    cmocka_unit_test(v1_sampler_holds_hidden_copies_and_the_cublas_workspace),
    cmocka_unit_test(bnb_4bit_holds_a_dequantized_shard),
    cmocka_unit_test(long_prefill_makes_the_mlp_the_peak),
    cmocka_unit_test(tp_shards_the_mlp_not_the_residual_stream),
    cmocka_unit_test(moe_caches_are_chunked),
    cmocka_unit_test(mla_attention_holds_the_latent_whole),
    cmocka_unit_test(bad_shapes_are_named),
    cmocka_unit_test(encoder_run_matches_a_hand_count),
    cmocka_unit_test(qwen25_vl_pixels_in_the_model_dtype),
    cmocka_unit_test(items_in_turn_hold_the_earlier_outputs),
    cmocka_unit_test(kept_encoder_outputs_add_to_the_decoder_peak),
    cmocka_unit_test(a_big_encoder_batch_sets_the_peak),
    cmocka_unit_test(bad_towers_are_named),
    cmocka_unit_test(non_torch_base_alone_at_tp_1),
    cmocka_unit_test(non_torch_nccl_buffers_by_communicator),
    cmocka_unit_test(non_torch_custom_all_reduce_by_world_size),
    cmocka_unit_test(non_torch_context_and_sglang),
    cmocka_unit_test(non_torch_bad_constants_are_named),
    cmocka_unit_test(non_torch_nvls_and_runtime_connect_in_high_end),
    cmocka_unit_test(non_torch_torch_communicator),
    cmocka_unit_test(lora_slots_match_a_hand_count),
    cmocka_unit_test(lora_bad_configs_are_named),
    cmocka_unit_test(vllm_defaults_by_engine_gpu_and_length),
    cmocka_unit_test(deploy_predictions_follow_its_numbers),
    cmocka_unit_test(deploy_reserves_report_the_parts),
    cmocka_unit_test(vision_items_follow_the_engine_and_the_tower),
    cmocka_unit_test(gpu_facts_set_the_a100_and_the_default_kernel),
    cmocka_unit_test(fraction_by_tp_picks_the_first_row_reached),
    cmocka_unit_test(sglang_memory_defaults_by_hand),
    cmocka_unit_test(mxfp4_weights_follow_the_kernel_and_tp),
    cmocka_unit_test(torch_segments_by_hand),
    cmocka_unit_test(torch_segments_bad_inputs_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
