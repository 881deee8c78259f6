/* test_roofline.c: the roofline time of one step and the ledger's time answers. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

#define GiB 1073741824LL

/* H100 SXM datasheet rates, every efficiency 1: the pure roofline */
static kvp_perf h100(void) {
  return (kvp_perf){.hbm_gbps = 3350, .tflops = 989.5, .link_gbps = 900, .mem_eff = 1,
                    .flop_eff = 1, .link_eff = 1};
}

/* a Llama-3-8B-like shape: 32 layers, hidden 4096, 32 heads, 8 KV heads of 128 */
static void llama8b(kvp_deploy *d, kvp_ledger *l, int64_t tp) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d->model.params = d->model.active = 8000000000LL;
  d->gpu_bytes = 80 * GiB;
  d->tp = tp;
  assert_int_equal(kvp_ledger_eval(d, l, NULL), KVP_OK);
}

static void batch_one_decode_is_weights_plus_kv_over_bandwidth(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 32 layers x 2 (K, V) x 8 heads x 128 x 2 bytes = 131072 bytes a token */
  assert_true(c.write_tok == 131072.0);
  assert_true(kvp_cost_kv_read(&c, 1000) == 131072000.0);
  assert_int_equal(kvp_time_at(&c, 1000, 1, &t), KVP_OK);
  double bytes = 16e9 + 131072.0 * 1000 + 131072.0; /* weights, read, write */
  assert_true(fabs(t.tpot_s - bytes / 3.35e12) < 1e-15);
  assert_false(t.compute_bound);
  assert_true(fabs(t.kv_read_share - (131072.0 * 1001) / bytes) < 1e-12);
  assert_true(fabs(t.tokens_per_s - 1.0 / t.tpot_s) < 1e-9);
  /* one prompt of 1000 tokens: 2 x 8e9 x 1000 FLOPs + attention is compute-bound */
  double attn = 32.0 * 2 * 32 * 256 * (1000.0 * 1001 / 2);
  assert_true(fabs(t.ttft_s - (16e12 + attn) / 989.5e12) < 1e-15);
  assert_true(t.prefill.compute_bound);
}

static void large_batches_turn_decode_compute_bound(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* at context 1: bytes ~ 16e9 + 2.6e5 b, FLOPs ~ 1.6e10 b: the ridge is
   * b = 16e9 / 3.35e12 x 989.5e12 / 1.6e10 = 295 */
  assert_int_equal(kvp_time_at(&c, 1, 256, &t), KVP_OK);
  assert_false(t.compute_bound);
  assert_int_equal(kvp_time_at(&c, 1, 512, &t), KVP_OK);
  assert_true(t.compute_bound);
  /* at context 8192 the KV read keeps it memory-bound at 512 */
  assert_int_equal(kvp_time_at(&c, 8192, 512, &t), KVP_OK);
  assert_false(t.compute_bound);
  assert_true(t.kv_read_share > 0.9);
}

static void tensor_parallel_splits_bytes_and_adds_two_allreduces_a_layer(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  p.link_latency_us = 5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(c.weight_bytes == 8e9);
  assert_int_equal(c.collectives, 64);
  kvp_step_time(&c, 10, 10, 0.0, 0.0, &s);
  /* 64 all-reduces of 10 x 4096 x 2 bytes, ring factor 2 (2 - 1) / 2 = 1,
   * at 450 GB/s one way, plus 64 x 5 us */
  double comm = 64.0 * 10 * 4096 * 2 / 450e9 + 64 * 5e-6;
  assert_true(fabs(s.comm_s - comm) < 1e-15);
  assert_true(fabs(s.seconds - (s.mem_s + comm)) < 1e-15);
  /* no interconnect: an error naming the field */
  p.link_gbps = 0;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "link_gbps"));
}

/* The TP all-reduces by message size: below the engine's own kernel's limit
 * the flat link rate plus the latency, from it on NCCL at the curve's bus
 * bandwidth at the message's bytes (log-interpolated, clamped), no latency
 * beside it (the measured busbw holds NCCL's fixed cost). */
static void allreduces_from_the_engine_limit_run_nccl_at_its_busbw_by_size(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  p.link_latency_us = 5;
  p.nccl_points = 3;
  p.nccl_bytes[0] = 4096, p.nccl_bytes[1] = 65536, p.nccl_bytes[2] = 1048576;
  p.nccl_busbw[0] = 1, p.nccl_busbw[1] = 10, p.nccl_busbw[2] = 100;
  p.ar_custom_below = 65536;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 64 plain TP all-reduces (attention's and the MLP's, 32 layers) of
   * hidden 4096 x 2 bytes a token, ring factor 2 (2 - 1) / 2 = 1 */
  assert_int_equal(c.ar_tp_count, 64);
  assert_true(c.ar_tp_bytes_tok == 64.0 * 8192 && c.ar_other_tok == 0.0);
  /* 4 tokens: 32768-byte messages, below 65536: the engine's kernel, at
   * 450 GB/s one way plus 64 x 5 us */
  kvp_step_time(&c, 4, 4, 0.0, 0.0, &s);
  assert_true(fabs(s.comm_s - (64.0 * 4 * 8192 / 450e9 + 64 * 5e-6)) < 1e-15);
  assert_true(s.nccl_s == 0.0);
  /* 16 tokens: 131072 bytes, NCCL; ln(131072 / 65536) / ln(16) = 0.25 of
   * the way from 10 to 100 GB/s: 32.5 GB/s, no latency */
  kvp_step_time(&c, 16, 16, 0.0, 0.0, &s);
  double nccl = 64.0 * 131072 / 32.5e9;
  assert_true(fabs(s.nccl_s - nccl) < 1e-15);
  assert_true(fabs(s.comm_s - nccl) < 1e-15);
  /* 256 tokens: 2 MiB, beyond the last point: clamped at 100 GB/s */
  kvp_step_time(&c, 256, 256, 0.0, 0.0, &s);
  assert_true(fabs(s.comm_s - 64.0 * 2097152 / 100e9) < 1e-15);
  /* no limit (0): every message NCCL; 32768 bytes is ln 8 / ln 16 = 0.75 of
   * the way from 1 to 10 GB/s: 7.75 GB/s */
  p.ar_custom_below = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 4, 4, 0.0, 0.0, &s);
  assert_true(fabs(s.comm_s - 64.0 * 32768 / 7.75e9) < 1e-15);
  /* no curve: the flat rate and the latency at every size, as before */
  p.nccl_points = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 256, 256, 0.0, 0.0, &s);
  assert_true(fabs(s.comm_s - (64.0 * 2097152 / 450e9 + 64 * 5e-6)) < 1e-15);
  assert_true(s.nccl_s == 0.0);
  /* a curve out of order, a busbw of 0 or a negative limit: errors naming the field */
  kvp_diag dg = {{0}};
  kvp_perf bad = p;
  bad.nccl_points = 3, bad.nccl_bytes[2] = 4096;
  assert_int_equal(kvp_perf_check(&bad, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "nccl_bytes"));
  bad = p;
  bad.nccl_points = 3, bad.nccl_busbw[1] = 0;
  assert_int_equal(kvp_perf_check(&bad, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "nccl_busbw"));
  bad = p;
  bad.ar_custom_below = -1;
  assert_int_equal(kvp_perf_check(&bad, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "ar_custom_below"));
}

static void moe_reads_active_weights_alone_and_all_of_them_in_a_large_batch(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  d.model.active = 1000000000LL; /* an eighth */
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.weight_bytes - 2e9) < 1e-3);
  kvp_step_time(&c, 2, 2, 0.0, 0.0, &s);
  assert_true(fabs(s.weight_bytes - 16e9 * (1 - 0.875 * 0.875)) < 1e-3);
  kvp_step_time(&c, 4096, 4096, 0.0, 0.0, &s);
  assert_true(s.weight_bytes > 16e9 * 0.999999);
  assert_true(fabs(s.flops - 4096 * 2e9) < 1.0);
}

static void windows_cap_the_keys_read_and_attended(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 2, 64, 1, 1, 8, NULL), KVP_OK);
  kvp_layer runs[2] = {{.kind = KVP_SLIDING, .kv_heads = 1, .head_dim = 8, .head_dim_v = 8,
                        .window = 4},
                       {.kind = KVP_FULL, .kv_heads = 1, .head_dim = 8, .head_dim_v = 8}};
  int64_t counts[2] = {1, 1};
  assert_int_equal(kvp_model_set_pattern(&d.model, runs, counts, 2, NULL), KVP_OK);
  d.model.params = d.model.active = 1000;
  d.gpu_bytes = GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 32 bytes a token a layer; at 10 tokens the window layer reads 4 */
  assert_true(kvp_cost_kv_read(&c, 10) == 32.0 * 10 + 32.0 * 4);
  /* tokens 3..6 of a sequence holding 2: full keys 3+4+5+6 = 18, window
   * min(i, 4) = 3+4+4+4 = 15; 32 FLOPs a key a layer */
  assert_true(kvp_cost_attn(&c, 2, 4) == 32.0 * (18 + 15));
  assert_true(kvp_cost_attn(&c, 0, 3) == 32.0 * (6 + 6));
  assert_true(kvp_cost_attn(&c, 8, 2) == 32.0 * (19 + 8));
}

/* Attention at its kernel's own rates (kvp_perf attn_*): KV bytes at
 * hbm x attn_mem_eff, FLOPs at attn_tflops x the curve at each sequence's
 * query tokens, interpolated in log tokens and clamped; hand-counted on
 * the Llama-3-8B-like shape (32 layers, 32 heads of 128, 8 KV heads). */
static void attention_runs_at_its_kernels_rates_by_query_tokens(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.mem_eff = 0.8;
  p.flop_eff = 0.5;
  p.attn_tflops = 1000;
  p.attn_mem_eff = 0.9;
  p.attn_flop = (kvp_curve){.n = 2, .m = {512, 2048}, .e = {0.3, 0.5}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* a prompt of 1024 tokens (halfway in log between 512 and 2048: 0.4):
   * 32 layers x 2 x 32 heads x (128 + 128) FLOPs a key, 1024 x 1025 / 2
   * keys, at 1000 TFLOPS x 0.4; its KV write 1024 x 131072 bytes at
   * 3350 GB/s x 0.9 is shorter */
  double a1 = 32.0 * 2 * 32 * 256 * (1024.0 * 1025 / 2);
  assert_true(kvp_cost_attn(&c, 0, 1024) == a1);
  assert_true(fabs(kvp_cost_attn_s(&c, 1024, a1) - a1 / 4e14) < 1e-15);
  kvp_step_time(&c, 1024, 1, 0.0, a1, &s);
  assert_true(fabs(s.attn_s - a1 / 4e14) < 1e-15);
  /* clamped: 256 and 1 query tokens at 0.3, 4096 at 0.5 */
  assert_true(fabs(kvp_cost_attn_s(&c, 256, 3e14) - 1.0) < 1e-15);
  assert_true(fabs(kvp_cost_attn_s(&c, 1, 3e14) - 1.0) < 1e-15);
  assert_true(fabs(kvp_cost_attn_s(&c, 4096, 5e14) - 1.0) < 1e-15);
  /* 16 sequences decoding at context 4096: KV bytes 16 x 131072 x 4096 read
   * + 16 x 131072 written at 3350 GB/s x 0.9, beyond their FLOPs at 0.3 */
  double kv = 16.0 * 131072 * 4096, a2 = 16.0 * 32 * 2 * 32 * 256 * 4097;
  kvp_step_time(&c, 16, 16, kv, a2, &s);
  assert_true(fabs(s.attn_s - (kv + 16.0 * 131072) / (3350e9 * 0.9)) < 1e-15);
  assert_true(a2 / 3e14 < s.attn_s);
  /* a mixed step (the simulator's): the prompt chunk at its own 1024 query
   * tokens, a decode at 1, not both at their mean */
  double a3 = 32.0 * 2 * 32 * 256 * 4097;
  double as = kvp_cost_attn_s(&c, 1024, a1) + kvp_cost_attn_s(&c, 1, a3);
  assert_true(fabs(as - (a1 / 4e14 + a3 / 3e14)) < 1e-15);
  kvp_step_time_s(&c, 1025, 2, 131072.0 * 4096, a1 + a3, as, &s);
  assert_true(fabs(s.attn_s - as) < 1e-15);
  /* no curve, no rates: the present rule, the GEMMs' peak and factors */
  kvp_perf q = h100();
  q.mem_eff = 0.8;
  q.flop_eff = 0.5;
  assert_int_equal(kvp_cost_init(&c, &l, &q, NULL), KVP_OK);
  assert_true(kvp_cost_attn_s(&c, 1024, a1) == a1 / (989.5e12 * 0.5));
  /* bad rates name the field */
  kvp_diag dg = {{0}};
  p.attn_flop.e[1] = 0;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "attn_compute"));
  p.attn_flop.e[1] = 0.5;
  p.attn_mem_eff = 1.5;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "attn_mem_eff"));
}

/* DeepSeek Sparse Attention (roofline.c header): an MLA layer with an
 * indexer reads its latent and computes MLA over min(n, index_topk) keys,
 * the indexer's fp8 keys and 2 x index_n_heads x index_head_dim FLOPs a
 * (query, key) pair over every key, at index_tflops. Hand-counted on 2
 * layers of a 16-wide latent, rope 8, 4 heads, an indexer of 2 heads of 128
 * and top-k 4, bf16 KV: 48 latent bytes and 132 indexer bytes a token a layer. */
static void sparse_attention_attends_top_k_and_indexes_every_key(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 2, 64, 4, 4, 16, NULL), KVP_OK);
  d.model.spec[0] = (kvp_layer){.kind = KVP_MLA, .latent = 16, .rope_dim = 8, .index_dim = 128,
                                .index_heads = 2, .index_topk = 4};
  d.model.params = d.model.active = 1000;
  d.gpu_bytes = GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* memory: every token's latent and indexer keys, as without top-k */
  assert_int_equal(l.token_bits[0], (48 + 132) * 8);
  kvp_perf p = h100();
  p.index_tflops = 1979;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(c.write_tok == 2.0 * 180);
  /* a decode at context 10: latent 2 x 48 x min(10, 4), indexer 2 x 132 x 10 */
  assert_true(kvp_cost_kv_read(&c, 10) == 2.0 * 48 * 4 + 2.0 * 132 * 10);
  /* MLA 2 layers x 2 x 4 heads x (2 x 16 + 8) = 640 a key over min(11, 4);
   * the indexer 2 x 2 x 2 x 128 = 1024 a key over all 11 */
  assert_true(kvp_cost_attn_kernels(&c, 10, 1) == 640.0 * 4);
  assert_true(kvp_cost_index(&c, 10, 1) == 1024.0 * 11);
  assert_true(kvp_cost_attn(&c, 10, 1) == 640.0 * 4 + 1024.0 * 11);
  double f = 0.0, sec = kvp_cost_attn_secs(&c, 10, 1, &f);
  assert_true(f == 640.0 * 4 + 1024.0 * 11);
  assert_true(fabs(sec - (640.0 * 4 / 989.5e12 + 1024.0 * 11 / 1979e12)) < 1e-24);
  /* a prompt of 6: MLA keys 1 + 2 + 3 + 4 + 4 + 4 = 18, the indexer's 21 */
  assert_true(kvp_cost_attn(&c, 0, 6) == 640.0 * 18 + 1024.0 * 21);
  assert_int_equal(kvp_time_at(&c, 6, 1, &t), KVP_OK);
  double pa = 640.0 * 18 / 989.5e12 + 1024.0 * 21 / 1979e12;
  assert_true(fabs(t.prefill.compute_s - (6.0 * 2000 / 989.5e12 + pa)) < 1e-24);
  assert_true(t.prefill.flops == 6.0 * 2000 + 640.0 * 18 + 1024.0 * 21);
  /* the decode at 6: bytes read 2 x 48 x 4 + 2 x 132 x 6, written 360 */
  assert_true(t.decode.kv_bytes == 2.0 * 48 * 4 + 2.0 * 132 * 6 + 360);
  assert_true(t.decode.flops == 2000 + 640.0 * 4 + 1024.0 * 7);
  /* without index_tflops the indexer at tflops; the indexer's heads are whole
   * on every rank: tp 2 halves MLA's heads, not the indexer's */
  p.index_tflops = 0;
  d.tp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(kvp_cost_attn_kernels(&c, 10, 1) == 320.0 * 4);
  assert_true(kvp_cost_index(&c, 10, 1) == 1024.0 * 11);
  sec = kvp_cost_attn_secs(&c, 10, 1, &f);
  assert_true(fabs(sec - (320.0 * 4 + 1024.0 * 11) / 989.5e12) < 1e-24);
  /* heads without top-k (or top-k without the indexer's keys) is an error naming them */
  kvp_diag dg = {{0}};
  d.model.spec[0].index_topk = 0;
  assert_int_equal(kvp_model_check(&d.model, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "index_topk"));
  d.model.spec[0].index_topk = 4;
  d.model.spec[0].index_dim = 0;
  assert_int_equal(kvp_model_check(&d.model, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "index_head_dim"));
}

/* A context of INT64_MAX (kvp_time_at takes any count >= 1): the decode's
 * new token at position 2^63 on a windowed term (a sparse-attention layer's
 * top-k here) attends min(2^63, 4) = 4 keys, and the prompt of INT64_MAX
 * tokens is one micro-batch of them. The window test a + k <= w and the
 * micro-batch's (tokens + nb - 1) / nb overflowed int64 (UB, UBSan's abort;
 * the wrapped test counted 2^63 keys) (core review 2026-12-04). */
static void a_context_of_int64_max_counts_its_keys_without_overflow(void **state) {
  (void)state;
  assert_true(kvp_keys_sum(INT64_MAX, 1, 4) == 4.0);
  assert_true(kvp_keys_sum(INT64_MAX - 1, 1, 4) == 4.0);
  assert_true(kvp_keys_sum(2, 2, 4) == 3.0 + 4.0);
  assert_true(kvp_keys_sum(0, INT64_MAX, 4) == 1.0 + 2 + 3 + 4 + ((double)INT64_MAX - 4) * 4);
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  kvp_step s;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 2, 64, 4, 4, 16, NULL), KVP_OK);
  d.model.spec[0] = (kvp_layer){.kind = KVP_MLA, .latent = 16, .rope_dim = 8, .index_dim = 128,
                                .index_heads = 2, .index_topk = 4};
  d.model.params = d.model.active = 1000;
  d.gpu_bytes = GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* MLA 640 FLOPs a key over 4 keys (as at context 10: the sparse test above) */
  assert_true(kvp_cost_attn_kernels(&c, INT64_MAX, 1) == 640.0 * 4);
  assert_int_equal(kvp_time_at(&c, INT64_MAX, 1, &t), KVP_OK);
  assert_true(t.decode.kv_bytes == 2.0 * 48 * 4 + 2.0 * 132 * (double)INT64_MAX + 360);
  assert_true(isfinite(t.ttft_s) && t.prefill.run_tokens == INT64_MAX);
  kvp_step_time(&c, INT64_MAX, 2, 0.0, 0.0, &s);
  assert_int_equal(s.run_tokens, INT64_MAX);
}

/* Without its backend's rates, attention computes in its inputs' dtype: an
 * fp8 checkpoint (tflops the fp8 peak 1979) on a 16-bit KV cache runs its
 * attention at the 16-bit peak 989.5 x attn16_eff, its GEMMs at 1979 x
 * flop_eff; on an fp8 KV cache at the GEMMs' peak and factor, as before. */
static void attention_on_a_16_bit_cache_computes_at_the_16_bit_peak(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.tflops = 1979;
  p.flop_eff = 0.5;
  p.attn16_tflops = 989.5;
  p.attn16_eff = 0.7;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  double a = 32.0 * 2 * 32 * 256 * (1024.0 * 1025 / 2);
  assert_true(kvp_cost_attn_s(&c, 1024, a) == a / (989.5e12 * 0.7));
  assert_true(c.flops == 1979e12 * 0.5);
  /* an fp8 KV cache: the GEMMs' rate */
  d.kv = (kvp_format){8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(kvp_cost_attn_s(&c, 1024, a) == a / (1979e12 * 0.5));
  /* the backend's own rates win over both */
  p.attn_tflops = 1000;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(kvp_cost_attn_s(&c, 1024, a) == a / (1000e12 * 0.5));
  /* a 16-bit peak without its factor is an error naming it */
  kvp_diag dg = {{0}};
  p.attn16_eff = 0;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "attn16_eff"));
}

static void speculative_decoding_divides_steps_by_tokens_per_step(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t, base;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_time_at(&c, 2048, 8, &base), KVP_OK);
  d.spec.tokens = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  p.acceptance = 0.5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_time_at(&c, 2048, 8, &t), KVP_OK);
  /* E = (1 - 0.5^3) / 0.5 = 1.75; the target writes 3 positions a step */
  assert_true(fabs(t.steps_per_token - 1 / 1.75) < 1e-12);
  assert_true(fabs(t.kv_writes_per_token - 3 / 1.75) < 1e-12);
  /* 3 positions of 131072 bytes a step, no draft KV (no draft layers) */
  assert_true(fabs(t.kv_write_bytes_per_token - 3 * 131072.0 / 1.75) < 1e-6);
  /* no draft weights: the step costs a little more, a token much less */
  assert_true(t.decode.seconds > base.decode.seconds);
  assert_true(fabs(t.tpot_s - t.decode.seconds / 1.75) < 1e-15);
  assert_true(t.tpot_s < base.tpot_s);
}

/* A draft pass's all-reduces (issue 18, time paths): the draft's layers'
 * own, two a layer (attention's o_proj and the MLP's down_proj, RowParallelLinear)
 * of the pass's tokens x the draft's hidden x 2 bytes, through the target
 * step's path by message size: below the engine's limit the link rate plus
 * link_latency_us each, from it NCCL at the curve's busbw. They were the
 * target's 64 all-reduces' bytes at the link rate without latency. */
static void draft_passes_all_reduce_their_own_layers_by_message_size(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  llama8b(&d, &l, 2);
  d.spec.tokens = 2;
  d.spec.draft_layers = 2;
  d.spec.draft = (kvp_layer){.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128};
  d.spec.draft_hidden = 2048;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  p.acceptance = 0.5;
  p.link_latency_us = 5;
  p.nccl_points = 3;
  p.nccl_bytes[0] = 4096, p.nccl_bytes[1] = 65536, p.nccl_bytes[2] = 1048576;
  p.nccl_busbw[0] = 1, p.nccl_busbw[1] = 10, p.nccl_busbw[2] = 100;
  p.ar_custom_below = 65536;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 2 draft layers x 2 all-reduces of 2048 x 2 bytes a token, ring factor
   * 2 (2 - 1) / 2 = 1 */
  assert_int_equal(c.draft_ar_count, 4);
  assert_true(c.draft_ar_msg_tok == 4096.0 && c.draft_ar_bytes_tok == 4.0 * 4096);
  /* draft KV: 2 layers x 2 (K, V) x 8 / 2 heads a GPU x 128 x 2 bytes;
   * no draft weights, so no FLOPs: the pass reads its KV */
  assert_true(c.draft_kv_tok == 4096.0);
  /* 4 sequences at 100 tokens: messages of 4 x 4096 = 16384 bytes, below
   * 65536: 4 x 16384 / 450 GB/s + 4 x 5 us */
  double mem4 = 4.0 * 4096 * 101 / 3.35e12;
  double comm4 = 4.0 * 16384 / 450e9 + 4 * 5e-6;
  assert_true(fabs(kvp_draft_time(&c, 4, 100.0) - (mem4 + comm4)) < 1e-15);
  /* 16 sequences: 65536-byte messages, NCCL at the curve's 10 GB/s there */
  double mem16 = 16.0 * 4096 * 101 / 3.35e12;
  assert_true(fabs(kvp_draft_time(&c, 16, 100.0) - (mem16 + 16.0 * 16384 / 10e9)) < 1e-15);
  /* and through kvp_time_at: (target step + g draft passes) / E, E = 1.75 */
  kvp_time t;
  assert_int_equal(kvp_time_at(&c, 100, 4, &t), KVP_OK);
  assert_true(fabs(t.tpot_s - (t.decode.seconds + 2 * (mem4 + comm4)) / 1.75) < 1e-15);
  /* no draft_hidden: the target's (draft heads), 4096 x 2 bytes */
  d.spec.draft_hidden = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(c.draft_ar_msg_tok == 8192.0 && c.draft_ar_bytes_tok == 4.0 * 8192);
  /* vLLM's extract_hidden_states (a cache-only layer) and n-gram lookup (no
   * draft layers) run no draft model: no all-reduce */
  d.spec.hidden_cache = 1;
  d.spec.draft_layers = 1;
  d.spec.draft = (kvp_layer){.kind = KVP_MLA, .latent = 3 * 4096, .kv_auto = 1};
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.draft_ar_count, 0);
  d.spec.hidden_cache = 0;
  d.spec.draft_layers = 0;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(kvp_draft_time(&c, 4, 100.0) == 0.0);
  /* a negative hidden size: an error naming the field */
  d.spec.draft_hidden = -1;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "speculative.draft_hidden"));
}

/* A prompt's prefill (kvp_time_at's TTFT) reads the fixed per-sequence
 * bytes, the recurrent states, as the simulator's step charges every
 * scheduled sequence (kvp_cost_kv_read at its computed tokens, 0 for a new
 * prompt; issue 18, time paths): it read none. A 4-layer hybrid, 3 state
 * layers of 1 MiB a sequence per full-attention layer of 8 KV heads of 128. */
static void a_prefill_reads_the_recurrent_states_as_the_simulator_does(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 4, 4096, 32, 8, 128, NULL), KVP_OK);
  kvp_layer runs[2] = {{.kind = KVP_STATE, .kv_heads = 1, .state_bytes = 1048576},
                       {.kind = KVP_FULL, .kv_heads = 8, .head_dim = 128, .head_dim_v = 128}};
  int64_t counts[2] = {3, 1};
  assert_int_equal(kvp_model_set_pattern(&d.model, runs, counts, 2, NULL), KVP_OK);
  d.model.params = d.model.active = 1000000000LL;
  d.gpu_bytes = 80 * GiB;
  d.tp = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(c.state_bytes == 3.0 * 1048576);
  /* the full layer writes 2 x 8 x 128 x 2 = 4096 bytes a token */
  assert_true(c.write_tok == 4096.0);
  assert_int_equal(kvp_time_at(&c, 100, 1, &t), KVP_OK);
  /* 100 prompt tokens: 3 states of 1 MiB read plus 100 x 4096 written */
  assert_true(t.prefill.kv_bytes == 3.0 * 1048576 + 100.0 * 4096);
  /* attention's bytes outlast its FLOPs (32 heads x 256 x 2 a (query, key)
   * pair over 5050 pairs): its time is the bytes over the bandwidth */
  assert_true(fabs(t.prefill.attn_s - (3.0 * 1048576 + 409600) / 3.35e12) < 1e-18);
  /* the simulator's step of the one prompt: the same time */
  kvp_step s;
  double pattn, pattn_s = kvp_cost_attn_secs(&c, 0, 100, &pattn);
  kvp_step_time_s(&c, 100, 1, kvp_cost_kv_read(&c, 0), pattn, pattn_s, &s);
  assert_true(s.seconds == t.ttft_s);
  /* the decode step reads each sequence's states too, as before */
  assert_true(t.decode.kv_bytes == 3.0 * 1048576 + 100.0 * 4096 + 4096);
}

static void price_per_gpu_hour_gives_dollars_per_million_tokens(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  p.price_per_hour = 3.6;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_time_at(&c, 1024, 32, &t), KVP_OK);
  assert_true(fabs(t.usd_per_mtok - 2 * 3.6 / 3600 / t.tokens_per_s * 1e6) < 1e-12);
  /* a price whose dollars per million tokens pass the largest double is an
   * overflow, not inf in a report (kvplan fit price_per_hour=1e308 said
   * "cannot write 'standard output': Numerical argument out of domain") */
  /* the product past 2^63 names its factors (was "tp x pp x data_parallel_size
   * overflows" alone) */
  kvp_diag dg = {{0}};
  l.d.vllm.dp = INT64_MAX;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EOVERFLOW);
  assert_string_equal(dg.msg, "tp x pp x data_parallel_size = 2 x 1 x 9223372036854775807 overflows 64 bits");
  l.d.vllm.dp = 0;
  p.price_per_hour = 1e308;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_time_at(&c, 1024, 32, &t), KVP_EOVERFLOW);
  assert_true(isfinite(t.tpot_s) && isfinite(t.tokens_per_s) && isfinite(t.ttft_s));
}

static void bad_rates_are_errors_naming_the_field(void **state) {
  (void)state;
  kvp_diag dg = {{0}};
  kvp_perf p = h100();
  p.mem_eff = 0;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "efficiency 'memory' must be in (0, 1], got 0"));
  p = h100();
  p.tflops = NAN;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "'tflops' must be a number > 0, got nan"));
  p = h100();
  p.acceptance = 1;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "acceptance"));
  p = h100();
  p.price_per_hour = -1;
  assert_int_equal(kvp_perf_check(&p, &dg), KVP_EINVAL);
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 1);
  p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_time_at(&c, 0, 1, &t), KVP_EINVAL);
  assert_int_equal(kvp_time_at(&c, 1, 0, &t), KVP_EINVAL);
}


/* A step's kernels run one after another: a decode batch whose GEMMs are
 * bound by FLOPs and whose attention is bound by KV bytes takes the sum. */
static void gemms_and_attention_each_take_their_own_bound(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 512 sequences at context 1024: GEMMs 512 x 1.6e10 FLOPs = 8.192e12 at
   * 989.5e12, 8.3 ms (weights 16e9 bytes take 4.8 ms); attention reads 512 x
   * 1024 x 131072 bytes at 3.35e12, 20.5 ms (its 512 x 1024 x 32 x 2 x 32 x
   * 256 FLOPs take 0.3 ms); the KV write of 512 x 131072 bytes joins the
   * attention's bytes */
  assert_int_equal(kvp_time_at(&c, 1024, 512, &t), KVP_OK);
  double gemm = 512 * 1.6e10 / 989.5e12;
  double kv = (512.0 * 1024 * 131072 + 512.0 * 131072) / 3.35e12;
  assert_true(fabs(t.decode.gemm_s - gemm) < 1e-15);
  assert_true(fabs(t.decode.attn_s - kv) < 1e-15);
  assert_true(fabs(t.decode.seconds - (gemm + kv)) < 1e-15);
  /* one max over the whole step would have hidden the GEMMs' time */
  assert_true(t.decode.seconds > fmax(t.decode.mem_s, t.decode.compute_s) * 1.1);
  assert_false(t.compute_bound); /* the memory-bound attention takes most of it */
}

/* The model's split: routed experts read as tokens choose them, an unread
 * embedding table, the layers' and the logits' FLOPs, activation bytes. */
static void experts_chosen_idle_weights_logits_and_activations_are_counted(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  /* 16e9 weight bytes: 12e9 routed experts (2 of 8 chosen a token), 1e9 an
   * untied embedding table, 3e9 read by every step; 8e8 GEMM FLOPs a token
   * in the layers, 4e8 a sampled row for the logits, 1000 activation bytes a
   * token on every GPU and 4000 split over tp */
  p.expert_share = 0.75;
  p.idle_share = 1.0 / 16;
  p.experts = 8;
  p.experts_active = 2;
  p.body_flops = 8e8;
  p.head_flops = 4e8;
  p.act_rep_bytes = 1000;
  p.act_split_bytes = 4000;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* tp 2: each GPU holds half of every class */
  assert_true(fabs(c.dense_bytes - 1.5e9) < 1e-3);
  assert_true(fabs(c.expert_bytes - 6e9) < 1e-3);
  /* 3 tokens of 2 sequences: experts chosen 1 - (6/8)^3 = 37/64 */
  kvp_step_time(&c, 3, 2, 0.0, 0.0, &s);
  assert_true(fabs(s.weight_bytes - (1.5e9 + 6e9 * 37.0 / 64)) < 1e-3);
  /* FLOPs: 3 x 8e8 / 2 + 2 rows x 4e8 / 2 */
  assert_true(fabs(s.flops - (1.2e9 + 4e8)) < 1e-3);
  /* activation bytes: 3 x (1000 + 4000 / 2) */
  assert_true(fabs(s.act_s - 9000.0 / 3.35e12) < 1e-18);
  /* experts read at their own factor: half the bandwidth, twice the time */
  kvp_step s2;
  p.expert_eff = 0.5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 3, 2, 0.0, 0.0, &s2);
  assert_true(fabs(s2.gemm_s - (1.5e9 / 3.35e12 + 6e9 * 37.0 / 64 / 1.675e12)) < 1e-15);
  p.expert_eff = 1.5;
  kvp_diag de = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &de), KVP_EINVAL);
  assert_non_null(strstr(de.msg, "experts"));
  p.expert_eff = 0;
  /* the split must leave something read: shares of 1 or more are refused */
  p.idle_share = 0.25;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "idle_share"));
  p.idle_share = 0;
  p.experts_active = 9;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "experts_active"));
}

/* The routed experts' term by tokens per expert: the same split as above
 * at tp 2 (6e9 bytes of routed experts on a GPU, 2 of 8 chosen a token),
 * 4e8 of the 8e8 FLOPs a token in the experts, and a curve of two points:
 * 0.25 of the experts' roofline at 1 token per expert, 0.5 at 4. */
static void experts_reach_the_benchmarked_fraction_by_tokens_per_expert(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  p.expert_share = 0.75;
  p.idle_share = 1.0 / 16;
  p.experts = 8;
  p.experts_active = 2;
  p.body_flops = 8e8;
  p.expert_flops = 4e8;
  p.head_flops = 4e8;
  p.expert_points = 2;
  p.expert_tpe[0] = 1;
  p.expert_frac[0] = 0.25;
  p.expert_tpe[1] = 4;
  p.expert_frac[1] = 0.5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 1 token: exactly its 2 experts, 1 token each, the first point: 6e9 x
   * 2 / 8 = 1.5e9 bytes at 3.35e12 x 0.25 (its 4e8 / 2 FLOPs: 0.2 us at
   * 989.5e12, below the bytes' 448 us) */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.tokens_per_expert - 1.0) < 1e-12);
  assert_true(fabs(s.expert_s - 1.5e9 / 3.35e12 / 0.25) < 1e-15);
  /* the dense part beside it: 1.5e9 bytes at 3.35e12 (3e9 / tp 2) */
  assert_true(fabs(s.gemm_s - (1.5e9 / 3.35e12 + s.expert_s)) < 1e-15);
  /* 3 tokens: 1 - (6/8)^3 = 37/64 of the experts chosen, 3 x 2 / 8 / (37/64)
   * = 48/37 = 1.297 tokens each; between the points in log tokens: 0.25 +
   * 0.25 x ln(48/37) / ln 4 = 0.29694; 6e9 x 37/64 = 3.46875e9 bytes */
  kvp_step_time(&c, 3, 2, 0.0, 0.0, &s);
  assert_true(fabs(s.tokens_per_expert - 48.0 / 37.0) < 1e-12);
  double f3 = 0.25 + 0.25 * log(48.0 / 37.0) / log(4.0);
  assert_true(fabs(f3 - 0.29694) < 1e-5);
  assert_true(fabs(s.expert_s - 3.46875e9 / 3.35e12 / f3) < 1e-15);
  /* FLOPs unchanged in sum: dense 3 x 4e8 / 2 + 2 rows x 4e8 / 2, experts
   * 3 x 4e8 / 2 */
  assert_true(fabs(s.flops - 1.6e9) < 1e-3);
  /* 4096 tokens: every expert, 4096 x 2 / 8 = 1024 tokens each, clamped to
   * the last point 0.5; the experts' 4096 x 4e8 / 2 = 8.192e11 FLOPs take
   * 0.828 ms at 989.5e12, their 6e9 bytes 1.791 ms: bytes bind */
  kvp_step_time(&c, 4096, 4096, 0.0, 0.0, &s);
  assert_true(fabs(s.tokens_per_expert - 1024.0) < 1e-6);
  assert_true(fabs(s.expert_s - 6e9 / 3.35e12 / 0.5) < 1e-12);
  /* a curve of one point of 0.25: FLOPs bind at 16384 tokens (3.311 ms
   * beside the bytes' 1.791 ms), at a quarter of the peak */
  p.expert_points = 1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 16384, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.expert_s - 16384 * 4e8 / 2 / 989.5e12 / 0.25) < 1e-12);
  /* a given factor replaces the curve at every tokens per expert */
  p.expert_points = 2;
  p.expert_eff = 0.8;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 3, 2, 0.0, 0.0, &s);
  assert_true(fabs(s.expert_s - 3.46875e9 / 3.35e12 / 0.8) < 1e-15);
  p.expert_eff = 0;
  /* a curve whose tokens do not increase, or a fraction out of (0, 1] */
  kvp_diag de = {{0}};
  p.expert_tpe[1] = 1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &de), KVP_EINVAL);
  assert_non_null(strstr(de.msg, "'expert_tpe' point 2"));
  p.expert_tpe[1] = 4;
  p.expert_frac[1] = 1.5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &de), KVP_EINVAL);
  assert_non_null(strstr(de.msg, "'expert_frac' point 2"));
  p.expert_frac[1] = 0.5;
  p.expert_flops = 9e8;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &de), KVP_EINVAL);
  assert_non_null(strstr(de.msg, "expert_flops"));
}

/* A MoE split of the 8B shape: 16e9 weight bytes, 12e9 of them 8 routed
 * experts (2 chosen a token) in all 32 layers, 2e9 attention; the perf's
 * matching step facts. */
static void moe_split(kvp_deploy *d, int64_t experts, kvp_perf *p) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d->model.params = d->model.active = 8000000000LL;
  d->gpu_bytes = 80 * GiB;
  d->vllm.experts = experts;
  d->vllm.expert_bytes = 12000000000LL;
  *p = h100();
  p->expert_share = 0.75;
  p->experts = 8;
  p->experts_active = 2;
  p->moe_layers = 32;
  p->attn_share = 0.125;
  p->body_flops = 8e8;
  p->link_latency_us = 10;
}

/* SGLang's ep_size: whole experts on ep ranks, the MoE layers' all-reduce
 * replaced by an all-to-all dispatch and combine. */
static void expert_parallelism_holds_whole_experts_and_adds_an_all_to_all(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  kvp_perf p;
  moe_split(&d, 8, &p);
  d.budget = KVP_BUDGET_SGLANG;
  d.tp = 4;
  d.sglang.ep = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* the 4e9 dense bytes over tp 4, 2 of the 8 experts whole: 1e9 + 3e9 */
  assert_int_equal(l.stage[0].weights, 4000000000LL);
  /* 6 experts over 4 ranks: the fullest holds 2 of them, 12e9 x 2 / 6 */
  d.vllm.experts = 6;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 1000000000LL + 4000000000LL);
  d.vllm.experts = 8;
  /* ep 2 of tp 4: 4 experts a rank, each split over tp / ep = 2 GPUs */
  d.sglang.ep = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 1000000000LL + 3000000000LL);
  d.sglang.ep = 4;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.ep_size, 4);
  assert_true(fabs(c.expert_bytes - 3e9) < 1e-3);
  /* attention: 32 ring all-reduces over tp 4 of hidden x 2 bytes a token,
   * 2 (4 - 1) / 4 of it sent: 32 x 8192 x 1.5; the MoE layers: a dispatch
   * and a combine each, k = 2 copies of 8192 bytes of the GPU's quarter of
   * the tokens, 3 / 4 of them to other GPUs: 32 x 2 x 2 x 8192 x 3/4 / 4 */
  assert_true(fabs(c.ar_bytes_tok - 32.0 * 8192 * 1.5) < 1e-6);
  assert_true(fabs(c.a2a_bytes_tok - 32.0 * 2 * 2 * 8192 * 0.75 / 4) < 1e-6);
  assert_int_equal(c.a2a_count, 64);
  assert_int_equal(c.collectives, 32 + 64);
  kvp_step_time(&c, 3, 3, 0.0, 0.0, &s);
  double a2a = 3 * 196608.0 / 450e9 + 64 * 10e-6;
  assert_true(fabs(s.a2a_s - a2a) < 1e-15);
  assert_true(fabs(s.comm_s - (a2a + 3 * 393216.0 / 450e9 + 32 * 10e-6)) < 1e-15);
  /* ep must divide tp; an SGLang option under another budget is refused */
  kvp_diag dg = {{0}};
  d.sglang.ep = 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "ep_size"));
  d.sglang.ep = 4;
  d.budget = KVP_BUDGET_VLLM;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "SGLang's or TensorRT-LLM's"));
  /* TensorRT-LLM's moe_ep_size (tensorrt_llm/mapping.py: moe_ep x moe_tp =
   * tp): the same whole experts, 1e9 + 3e9; without attention DP the MoE's
   * output all-reduced over tp as under TP MoE, no all-to-all
   * (fused_moe_cutlass.py enable_alltoall needs enable_attention_dp): the
   * attention's 32 and the MoE layers' 32 ring all-reduces, 32 x 8192 x 1.5
   * each */
  d.budget = KVP_BUDGET_TRTLLM;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 4000000000LL);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.ep_size, 0);
  assert_true(fabs(c.expert_bytes - 3e9) < 1e-3);
  assert_int_equal(c.a2a_count, 0);
  assert_true(fabs(c.ar_bytes_tok - 2 * 32.0 * 8192 * 1.5) < 1e-6);
  assert_int_equal(c.collectives, 64);
  /* SGLang's attention DP stays SGLang's */
  d.sglang.attn_dp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "SGLang option"));
}

/* SGLang's attention DP: dp ranks inside the tp GPUs, the attention and its
 * KV heads over tp / dp, the embedding whole; each MoE layer sees every
 * rank's tokens (gathered, then all-reduced over tp). */
static void attention_dp_splits_attention_over_tp_over_dp(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  kvp_time t;
  kvp_perf p;
  moe_split(&d, 8, &p);
  d.budget = KVP_BUDGET_SGLANG;
  d.tp = 4;
  d.sglang.attn_dp = 4;
  d.sglang.attn_bytes = 2000000000LL;
  d.sglang.whole_bytes = 1000000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_attn_tp(&d), 1);
  assert_int_equal(kvp_dp_ranks(&d), 4);
  /* the rest 1e9 over tp 4, the attention 2e9 over 1, the embedding 1e9
   * whole, the experts 12e9 over tp 4 */
  assert_int_equal(l.stage[0].weights, 250000000LL + 2000000000LL + 1000000000LL + 3000000000LL);
  /* all 8 KV heads on every GPU: 32 x 2 x 8 x 128 x 2 bytes a token */
  assert_int_equal(l.token_bits[0], 2 * 8 * 128 * 16);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.attn_tp, 1);
  assert_int_equal(c.meet, 4);
  /* dense: 4e9 / 4, the attention's 2e9 x (1 - 1/4) more */
  assert_true(fabs(c.dense_bytes - 2.5e9) < 1e-3);
  assert_true(fabs(c.expert_bytes - 3e9) < 1e-3);
  /* no attention all-reduce; each MoE layer gathers the other 3 ranks'
   * tokens and all-reduces all 4 ranks' over tp 4: 32 x 8192 x (3 + 4 x 1.5) */
  assert_true(fabs(c.ar_bytes_tok - 32.0 * 8192 * 9) < 1e-6);
  assert_int_equal(c.collectives, 64);
  /* 3 tokens a rank: the experts see 12, 1 - (6/8)^12 of them chosen; FLOPs
   * of 3 tokens at 8e8 over attn_tp 1 */
  kvp_step_time(&c, 3, 3, 0.0, 0.0, &s);
  assert_true(fabs(s.weight_bytes - (2.5e9 + 3e9 * (1 - pow(0.75, 12)))) < 1e-2);
  assert_true(fabs(s.flops - 3 * 8e8) < 1e-3);
  /* the deployment's throughput: 4 ranks of 3 sequences */
  assert_int_equal(kvp_time_at(&c, 100, 3, &t), KVP_OK);
  assert_true(fabs(t.tokens_per_s - 4 * 3 / t.tpot_s) < 1e-6 * t.tokens_per_s);
  /* dp must divide tp */
  kvp_diag dg = {{0}};
  d.sglang.attn_dp = 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "dp_size"));
}

/* The weights every TP rank holds whole (kvp_replicated) are read whole by
 * every step: 16e9 bytes at tp 4, 0.4e9 of them replicated: the ledger's
 * 15.6e9 / 4 + 0.4e9 = 4.3e9 a GPU; the step reads the dense quarter
 * 1e9 + 0.4e9 x (1 - 1/4) and the experts' 12e9 / 4, the same 4.3e9. */
static void replicated_weights_are_read_whole(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_perf p;
  moe_split(&d, 8, &p);
  d.tp = 4;
  d.replicated.bytes = 400000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(l.stage[0].weights, 4300000000LL);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.dense_bytes - 1.3e9) < 1e-3);
  assert_true(fabs(c.expert_bytes - 3e9) < 1e-3);
  /* without the model's split, all of it dense: 16e9 / 4 + 0.3e9 */
  p.expert_share = 0.0;
  p.attn_share = 0.0;
  p.body_flops = 0.0;
  p.experts = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.dense_bytes - 4.3e9) < 1e-3);
}

/* Their linear layers (kvp_replicated.matmul: routers, MLA's a-projections)
 * compute the whole GEMM on every rank: at tp 4 the model's 8e8 FLOPs a
 * token / 4 = 2e8, plus 150e6 replicated matmul parameters x 2 x (1 - 1/4)
 * = 2.25e8, so 4.25e8; without the model's split 2 x 8e9 / 4 + 2.25e8; at
 * tp 1 and under SGLang's attention DP as before. */
static void replicated_matmuls_are_computed_whole(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_perf p;
  moe_split(&d, 8, &p);
  d.tp = 4;
  d.replicated.params = 200000000LL;
  d.replicated.bytes = 400000000LL;
  d.replicated.matmul = 150000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.flops_token - 4.25e8) < 1e-3);
  /* the bytes as before (replicated_weights_are_read_whole) */
  assert_true(fabs(c.dense_bytes - 1.3e9) < 1e-3);
  p.expert_share = 0.0;
  p.attn_share = 0.0;
  p.body_flops = 0.0;
  p.experts = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.flops_token - (4e9 + 2.25e8)) < 1e-3);
  /* SGLang's attention DP: left as it was */
  moe_split(&d, 8, &p);
  d.budget = KVP_BUDGET_SGLANG;
  d.tp = 4;
  d.sglang.attn_dp = 2;
  d.replicated.params = 200000000LL;
  d.replicated.matmul = 150000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.flops_token - 8e8 / 2) < 1e-3);
  /* tp 1: none */
  moe_split(&d, 8, &p);
  d.replicated.params = 200000000LL;
  d.replicated.matmul = 150000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_true(fabs(c.flops_token - 8e8) < 1e-3);
  /* more matmul parameters than replicated ones: named */
  kvp_diag dg = {{0}};
  d.replicated.matmul = 300000000LL;
  assert_int_equal(kvp_ledger_eval(&d, &l, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "replicated_matmul"));
}

/* vLLM's data_parallel_size: dp engines of tp GPUs each, the experts cut
 * across dp x tp GPUs, the MoE layers' collective over all of them. */
static void vllm_data_parallel_counts_every_engine(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  kvp_perf p;
  moe_split(&d, 8, &p);
  d.tp = 2;
  d.vllm.dp = 2;
  p.price_per_hour = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  /* dense 4e9 over tp 2, experts 12e9 over 4 GPUs */
  assert_int_equal(l.stage[0].weights, 2000000000LL + 3000000000LL);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.gpus, 4);
  assert_int_equal(c.ep_size, 0);
  /* attention over tp 2 (32 x 8192 x 1), the MoE layers a ring all-reduce
   * of both engines' tokens over 4 GPUs: 32 x 8192 x 2 x 1.5 */
  assert_true(fabs(c.ar_bytes_tok - (32.0 * 8192 + 32.0 * 8192 * 2 * 1.5)) < 1e-6);
  assert_int_equal(kvp_time_at(&c, 100, 5, &t), KVP_OK);
  assert_true(fabs(t.tokens_per_s - 2 * 5 / t.tpot_s) < 1e-6 * t.tokens_per_s);
  /* the price of 4 GPUs over both engines' tokens */
  assert_true(fabs(t.usd_per_mtok - 2.0 * 4 / 3600 / t.tokens_per_s * 1e6) < 1e-9);
  /* with EP: whole experts over dp x tp = 4, an all-to-all of the GPU's half
   * of its engine's tokens */
  d.vllm.ep = 1;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(c.ep_size, 4);
  assert_true(fabs(c.a2a_bytes_tok - 32.0 * 2 * 2 * 8192 * 0.75 / 2) < 1e-6);
  assert_true(fabs(c.ar_bytes_tok - 32.0 * 8192) < 1e-6);
}

/* Host time: its kernels' launch and each scheduled sequence's bookkeeping,
 * added to every step that runs by an engine that waits for the host,
 * hidden up to the GPU's time by one that overlaps. */
static void host_time_adds_kernels_and_sequences(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 328;
  p.launch_us = 0.5;
  p.seq_host_us = 2;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  /* 328 x 0.5 us + 40 x 2 us = 244 us */
  assert_true(fabs(s.host_s - 244e-6) < 1e-15);
  assert_true(fabs(s.seconds - (s.gemm_s + s.attn_s + s.act_s + 244e-6)) < 1e-15);
  /* an engine that overlaps waits only for host time beyond the GPU's: at
   * 244 us of host time a 40-token step of 4.8 ms hides all of it; at 20 ms
   * per kernel the host (6.56 s) outlasts the GPU */
  p.host_overlap = 1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  assert_true(s.host_s == 0.0);
  double device = s.gemm_s + s.attn_s + s.act_s;
  assert_true(fabs(s.seconds - device) < 1e-15);
  p.launch_us = 20000;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  assert_true(fabs(s.seconds - (328 * 0.02 + 40 * 2e-6)) < 1e-12);
  p.host_overlap = 0;
  p.launch_us = 0.5;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 0, 0, 0.0, 0.0, &s); /* a step that runs nothing costs nothing */
  assert_true(s.seconds == 0.0);
  p.launch_us = -1;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "launch_us"));
}

/* The engine loop's own host work a step (loop_host_us, SGLang's 308 us):
 * once a step whatever it runs, beside its launches and sequences: 328 x 0.5
 * us + 308 us + 40 x 2 us = 552 us, 1 sequence 328 x 0.5 + 308 + 2 = 474 us;
 * an eager step launches at eager_launch_us and still adds it once (328 x 5
 * + 308 + 80 = 2028 us); overlapped, hidden up to the GPU's time; negative
 * is an error. */
static void loop_host_time_adds_once_a_step(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 328;
  p.launch_us = 0.5;
  p.seq_host_us = 2;
  p.loop_host_us = 308;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  assert_true(fabs(s.host_s - 552e-6) < 1e-15);
  assert_true(fabs(s.seconds - (s.gemm_s + s.attn_s + s.act_s + 552e-6)) < 1e-15);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.host_s - 474e-6) < 1e-15);
  p.eager_launch_us = 5;
  p.graphs = KVP_GRAPHS_DECODE;
  p.graph_max = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  assert_true(!s.graph && fabs(s.host_s - 2028e-6) < 1e-15);
  p.graphs = KVP_GRAPHS_NONE;
  p.host_overlap = 1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 40, 40, 0.0, 0.0, &s);
  assert_true(s.host_s == 0.0);
  p.loop_host_us = -1;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "loop_host_us"));
}

/* The GPU's floor a kernel: each kind of kernel takes at least its count x
 * kernel_floor_us, whatever its bytes and FLOPs (a pointwise kernel replayed
 * in a CUDA graph takes 1.1 us, pytorch/pytorch issue 161104). */
static void kernels_take_at_least_their_floor(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  /* 32 layers x 10 + 8 kernels: 32 x 4 + 1 GEMMs, 32 attentions, 167 others */
  p.kernels = 328;
  p.gemm_kernels = 129;
  p.attn_kernels = 32;
  p.kernel_floor_us = 1.1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* one token of one sequence at context 0: the GEMMs read 16e9 bytes (4.78
   * ms, above 129 x 1.1 us); attention writes 131072 bytes (39 ns, below 32 x
   * 1.1 = 35.2 us); the other kernels move nothing here (167 x 1.1 = 183.7 us) */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.gemm_s - 16e9 / 3.35e12) < 1e-15);
  assert_true(fabs(s.attn_s - 35.2e-6) < 1e-15);
  assert_true(fabs(s.act_s - 183.7e-6) < 1e-15);
  assert_true(fabs(s.floor_s - (35.2e-6 - 131072.0 / 3.35e12 + 183.7e-6)) < 1e-15);
  assert_true(fabs(s.seconds - (16e9 / 3.35e12 + 35.2e-6 + 183.7e-6)) < 1e-15);
  /* the bytes are the roofline's: memory time is not the floor */
  assert_true(fabs(s.mem_s - (16e9 + 131072.0) / 3.35e12) < 1e-15);
  /* without a floor the step is the roofline's, as before */
  p.kernel_floor_us = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(s.floor_s == 0.0 && s.act_s == 0.0);
  /* the kinds are of the kernels: more GEMMs and attentions than kernels is refused */
  p.attn_kernels = 300;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "gemm_kernels"));
  p.attn_kernels = 32;
  p.kernel_floor_us = -1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "kernel_floor_us"));
}

/* A GEMM kernel whose M tile is 64 rows computes 64 rows for one token
 * (gemm_tile_m, issue 18: SGLang's block-FP8 kernels on SM90, Triton's
 * default BLOCK_SIZE_M 64 and DeepGEMM's smallest block_m 64): the layers'
 * FLOPs at the tokens rounded up to the tile, the weights' bytes unchanged.
 * At an H20's 148 TFLOPS the padded FLOPs outlast the weights' read. */
static void gemms_compute_whole_m_tiles(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = {.hbm_gbps = 4000, .tflops = 148, .link_gbps = 900, .mem_eff = 1, .flop_eff = 1,
                .link_eff = 1};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* no tile: one token reads 16e9 bytes in 4 ms; its 2 x 8e9 FLOPs take 0.108 ms */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.gemm_s - 16e9 / 4e12) < 1e-15);
  p.gemm_tile_m = 64;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* one token: 64 rows x 16e9 FLOPs = 1.024e12 at 148e12 = 6.9189 ms, above the 4 ms read */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.gemm_s - 64 * 16e9 / 148e12) < 1e-15);
  assert_true(fabs(s.mem_s - (16e9 + 131072.0) / 4e12) < 1e-15);
  /* 64 tokens fill the tile: the same time; 65 take two tiles, 128 rows */
  kvp_step_time(&c, 64, 64, 0.0, 0.0, &s);
  assert_true(fabs(s.gemm_s - 64 * 16e9 / 148e12) < 1e-15);
  kvp_step_time(&c, 65, 65, 0.0, 0.0, &s);
  assert_true(fabs(s.gemm_s - 128 * 16e9 / 148e12) < 1e-15);
  p.gemm_tile_m = -1;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "gemm_tile_m"));
  /* a tile is whole rows (core review 2026-12-04): 0.5 rounded one token to
   * itself, 0.3 to 1.2 rows; 1e-310 made the step inf ("overflows", naming
   * other fields) */
  const double parts[] = {0.5, 0.3, 64.5, 1e-310};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    p.gemm_tile_m = parts[i];
    dg.msg[0] = '\0';
    assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
    assert_non_null(strstr(dg.msg, "gemm_tile_m"));
    assert_non_null(strstr(dg.msg, "whole number"));
  }
}

/* A decode attention call takes at least its own published minimum
 * (attn_floor_us: vllm-project/vllm#43232, XQA at one sequence of 1024 tokens,
 * 10.7592 us a layer) in place of kernel_floor_us, never added to it; above
 * the floor its bytes decide as before. */
static void an_attention_call_takes_at_least_its_own_floor(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 328;
  p.gemm_kernels = 129;
  p.attn_kernels = 32;
  p.kernel_floor_us = 1.1;
  p.attn_floor_us = 10.7592;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* one token of one sequence at context 0: attention writes 131072 bytes
   * (39 ns), so the 32 calls take 32 x 10.7592 = 344.2944 us, not 32 x 1.1;
   * the GEMMs (4.78 ms) and the 167 other kernels (167 x 1.1 = 183.7 us) as
   * before */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.attn_s - 344.2944e-6) < 1e-15);
  assert_true(fabs(s.gemm_s - 16e9 / 3.35e12) < 1e-15);
  assert_true(fabs(s.act_s - 183.7e-6) < 1e-15);
  assert_true(fabs(s.floor_s - (344.2944e-6 - 131072.0 / 3.35e12 + 183.7e-6)) < 1e-15);
  assert_true(fabs(s.seconds - (16e9 / 3.35e12 + 344.2944e-6 + 183.7e-6)) < 1e-15);
  /* 2e9 bytes of KV read take 597.0 us at 3.35 TB/s, above the floor: the
   * bytes alone, nothing added */
  kvp_step_time(&c, 1, 1, 2e9, 0.0, &s);
  assert_true(fabs(s.attn_s - (2e9 + 131072.0) / 3.35e12) < 1e-15);
  assert_true(fabs(s.floor_s - 183.7e-6) < 1e-15);
  /* 0: the kernels' floor, 32 x 1.1 us, as before */
  p.attn_floor_us = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.attn_s - 35.2e-6) < 1e-15);
  p.attn_floor_us = -1;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "attn_floor_us"));
}

/* The activation-quantization kernels vLLM V0 runs before each fp8 W8A8
 * linear layer (quant_kernels, of the other kernels) take at least their own
 * published minimum a call (quant_floor_us: vllm-project/vllm#49363, H100,
 * fp8-tensor-w-token-a minus fp8-tensor-w-tensor-a-noquant, median 4.10 us)
 * in place of kernel_floor_us; the rest of the other kernels keep theirs. */
static void a_quantization_kernel_takes_at_least_its_own_floor(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 456;       /* 328 + 4 x 32 quantization kernels */
  p.gemm_kernels = 129;
  p.attn_kernels = 32;
  p.quant_kernels = 128;
  p.kernel_floor_us = 1.1;
  p.quant_floor_us = 4.10;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* one token, no activation bytes: the other kernels are 456 - 129 - 32 =
   * 295, of which 128 quantization kernels at 4.10 us (524.8 us) and 167 at
   * 1.1 us (183.7 us): 708.5 us */
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.act_s - 708.5e-6) < 1e-15);
  assert_true(fabs(s.attn_s - 35.2e-6) < 1e-15);
  /* 0: every one of the 295 at kernel_floor_us, 324.5 us */
  p.quant_floor_us = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.act_s - 324.5e-6) < 1e-15);
  /* more kinds of kernel than kernels, or a negative floor: refused */
  p.quant_kernels = 300;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "quant_kernels"));
  p.quant_kernels = 128;
  p.quant_floor_us = -1;
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "quant_floor_us"));
}

/* The sampler's kernels read and write each sampled row's fp32 logits:
 * 26 x vocab bytes a row, greedy (vLLM V1's Sampler.forward). */
static void the_sampler_moves_each_sampled_rows_logits(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 2);
  kvp_perf p = h100();
  p.act_rep_bytes = 1000;
  p.sampler_bytes = 26.0 * 128256; /* 3334656 bytes a row */
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 3 tokens of 2 sequences: 3 x 1000 activation bytes + 2 rows x 3334656,
   * on each GPU (the logits are gathered whole over tp) */
  kvp_step_time(&c, 3, 2, 0.0, 0.0, &s);
  assert_true(fabs(s.act_s - (3000.0 + 2 * 3334656.0) / 3.35e12) < 1e-18);
  /* a prompt chunk of 100 tokens samples one row */
  kvp_step_time(&c, 100, 1, 0.0, 0.0, &s);
  assert_true(fabs(s.act_s - (100000.0 + 3334656.0) / 3.35e12) < 1e-18);
}

/* CUDA graphs: a captured step runs at its batch padded to the next
 * captured size and launch_us a kernel; any other runs eagerly at
 * eager_launch_us a kernel. */
static void cuda_graphs_pad_to_captured_sizes_and_eager_steps_launch_each_kernel(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 328;
  p.launch_us = 0.91;
  p.eager_launch_us = 5.48;
  p.act_rep_bytes = 1000; /* activation bytes follow the tokens computed */
  p.graphs = KVP_GRAPHS_TOKENS;
  p.graph_max = 512;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* vLLM V1: 5 tokens run as 8; host 328 x 0.91 us = 298.48 us */
  kvp_step_time(&c, 5, 5, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 8);
  assert_true(fabs(s.act_s - 8000.0 / 3.35e12) < 1e-18);
  assert_true(fabs(s.host_s - 298.48e-6) < 1e-15);
  /* the padding writes no KV: 5 tokens' 131072 bytes */
  assert_true(fabs(s.kv_bytes - 5 * 131072.0) < 1e-6);
  /* 300 tokens (a mixed step too) run as 304 (256 + 3 x 16); 512 as 512 */
  kvp_step_time(&c, 300, 3, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 304);
  kvp_step_time(&c, 512, 512, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 512);
  /* 600 tokens: above the largest graph, eager, 328 x 5.48 us = 1797.44 us */
  kvp_step_time(&c, 600, 600, 0.0, 0.0, &s);
  assert_true(!s.graph && s.run_tokens == 600);
  assert_true(fabs(s.host_s - 1797.44e-6) < 1e-15);
  /* vLLM V0: decode-only steps by sequences (5 as 8), a prompt eager */
  p.graphs = KVP_GRAPHS_DECODE;
  p.graph_max = 256;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 5, 5, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 8);
  kvp_step_time(&c, 5, 1, 0.0, 0.0, &s);
  assert_true(!s.graph && s.run_tokens == 5);
  kvp_step_time(&c, 257, 257, 0.0, 0.0, &s);
  assert_true(!s.graph && s.run_tokens == 257);
  /* SGLang's sizes: 10 as 12, 300 as 304, 500 as 512, 520 as 544 */
  p.graphs = KVP_GRAPHS_SGLANG;
  p.graph_max = 1024;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  const int64_t in[4] = {10, 300, 500, 520}, runs[4] = {12, 304, 512, 544};
  for (int i = 0; i < 4; i++) {
    kvp_step_time(&c, in[i], in[i], 0.0, 0.0, &s);
    assert_true(s.graph && s.run_tokens == runs[i]);
  }
  /* graphs modelled, none captured (enforce_eager): every step eager */
  p.graph_max = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 1, 1, 0.0, 0.0, &s);
  assert_true(!s.graph && s.run_tokens == 1 && fabs(s.host_s - 1797.44e-6) < 1e-15);
  /* not modelled: launch_us a kernel, no padding (as before) */
  p.graphs = KVP_GRAPHS_NONE;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 5, 5, 0.0, 0.0, &s);
  assert_true(!s.graph && s.run_tokens == 5 && fabs(s.host_s - 298.48e-6) < 1e-15);
  /* TensorRT-LLM's PyTorch backend: decode batches of exactly 1..32, 64 or
   * 128 sequences (graph_max 128) replay a graph, unpadded; 40 or 130 eager */
  p.graphs = KVP_GRAPHS_EXACT;
  p.graph_max = 128;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  const int64_t bs[7] = {1, 31, 32, 40, 64, 128, 130};
  const int on[7] = {1, 1, 1, 0, 1, 1, 0};
  for (int i = 0; i < 7; i++) {
    kvp_step_time(&c, bs[i], bs[i], 0.0, 0.0, &s);
    assert_int_equal(s.graph, on[i]);
    assert_true(s.run_tokens == bs[i]);
    assert_true(fabs(s.host_s - (on[i] ? 298.48e-6 : 1797.44e-6)) < 1e-15);
  }
  kvp_step_time(&c, 5, 1, 0.0, 0.0, &s); /* a prompt: eager */
  assert_false(s.graph);
  /* a larger graph_max adds the powers of 2 from 256 below it and itself */
  p.graph_max = 1000;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  const int64_t bs2[4] = {256, 300, 512, 1000};
  const int on2[4] = {1, 0, 1, 1};
  for (int i = 0; i < 4; i++) {
    kvp_step_time(&c, bs2[i], bs2[i], 0.0, 0.0, &s);
    assert_int_equal(s.graph, on2[i]);
  }
  p.graphs = 6;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "graphs"));
}

/* vLLM V1's piecewise graphs: the 64 kernels outside them (each layer's KV
 * cache write and attention) are launched eagerly, 5.48 - 0.91 = 4.57 us of
 * host time more each; under FULL_AND_PIECEWISE a decode-only step replays
 * one full graph and only mixed steps are piecewise. */
static void piecewise_graphs_launch_attention_eagerly(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_step s;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.kernels = 328;
  p.piecewise_kernels = 64;
  p.launch_us = 0.91;
  p.eager_launch_us = 5.48;
  p.graphs = KVP_GRAPHS_TOKENS;
  p.graph_max = 512;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* PIECEWISE: a decode step of 5: 328 x 0.91 + 64 x 4.57 = 590.96 us */
  kvp_step_time(&c, 5, 5, 0.0, 0.0, &s);
  assert_true(s.graph && fabs(s.host_s - 590.96e-6) < 1e-15);
  /* FULL_AND_PIECEWISE: the decode step is one full graph, 298.48 us; a
   * mixed step of 300 tokens of 3 sequences piecewise, 590.96 us */
  p.graphs = KVP_GRAPHS_FULL_DECODE;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_step_time(&c, 5, 5, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 8 && fabs(s.host_s - 298.48e-6) < 1e-15);
  kvp_step_time(&c, 300, 3, 0.0, 0.0, &s);
  assert_true(s.graph && s.run_tokens == 304 && fabs(s.host_s - 590.96e-6) < 1e-15);
  /* above the largest graph: eager, every kernel at 5.48 us */
  kvp_step_time(&c, 600, 600, 0.0, 0.0, &s);
  assert_true(!s.graph && fabs(s.host_s - 1797.44e-6) < 1e-15);
  p.piecewise_kernels = 400;
  kvp_diag dg = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &dg), KVP_EINVAL);
  assert_non_null(strstr(dg.msg, "piecewise_kernels"));
}

/* Pipeline parallelism: pp batches in flight, one a stage; a round of the
 * sequences takes one micro-batch's time through the whole model. */
static void pipeline_stages_run_micro_batches(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.model.params = d.model.active = 8000000000LL;
  d.gpu_bytes = 80 * GiB;
  d.pp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* 4 sequences at context 1000 in 2 micro-batches of 2: each reads all
   * 16e9 weight bytes (the stages' halves in turn) and 2 x 1000 tokens of
   * KV, writes 2 tokens, and hands 2 x 4096 x 2 bytes to the next stage
   * at 450 GB/s one way */
  assert_int_equal(kvp_time_at(&c, 1000, 4, &t), KVP_OK);
  double mem = (16e9 + 2 * 1000 * 131072.0 + 2 * 131072.0) / 3.35e12;
  double hand = 2 * 4096 * 2.0 / 450e9;
  assert_true(fabs(t.decode.seconds - (mem + hand)) < 1e-15);
  assert_true(fabs(t.tokens_per_s - 4 / (mem + hand)) < 1e-6);
  /* one sequence: no micro-batches, its KV whole */
  assert_int_equal(kvp_time_at(&c, 1000, 1, &t), KVP_OK);
  double one = (16e9 + 1000 * 131072.0 + 131072.0) / 3.35e12 + 4096 * 2.0 / 450e9;
  assert_true(fabs(t.decode.seconds - one) < 1e-15);
}

/* The simulator's memo of a step's shape (kvp_step_time_memo) gives what
 * kvp_step_time_s gives, bit for bit, whether the shape repeats or changes:
 * under pipeline parallelism, CUDA graphs, GEMM curves, floors, host time
 * overlapped and a MoE model's experts. */
static void the_step_memo_gives_the_same_step_bit_for_bit(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.model.params = 46700000000LL;
  d.model.active = 12900000000LL;
  d.gpu_bytes = 80 * GiB;
  d.pp = 2;
  d.tp = 2;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = h100();
  p.mem_eff = 0.7, p.flop_eff = 0.6, p.link_eff = 0.8, p.link_latency_us = 5;
  p.launch_us = 2, p.seq_host_us = 3, p.loop_host_us = 40, p.host_overlap = 1;
  p.kernels = 400, p.gemm_kernels = 200, p.attn_kernels = 32, p.kernel_floor_us = 2;
  p.graphs = KVP_GRAPHS_TOKENS, p.graph_max = 512, p.piecewise_kernels = 64;
  p.eager_launch_us = 5, p.step_overhead_ms = 0.5;
  p.gemm_mem = (kvp_curve){.n = 2, .m = {1, 256}, .e = {0.5, 0.8}};
  p.gemm_flop = (kvp_curve){.n = 2, .m = {1, 4096}, .e = {0.3, 0.7}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  static const int64_t shape[][2] = {{1, 1},   {1, 1},     {7, 7},   {7, 7}, {7, 7}, {2048, 3},
                                     {2048, 3}, {600, 600}, {1, 1},  {0, 0}, {0, 0}, {9, 3}};
  kvp_step_memo m;
  memset(&m, 0, sizeof m);
  for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
    kvp_step a, b;
    double kv = 1e6 * (double)(i + 1), attn = 3e9 * (double)(i + 1), as = attn / 5e14;
    kvp_step_time_s(&c, shape[i][0], shape[i][1], kv, attn, as, &a);
    kvp_step_time_memo(&c, &m, shape[i][0], shape[i][1], 0, kv, attn, as, &b);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(shape[i][0] == 0 || a.seconds > 0.0);
  }
}

/* The dense GEMMs' efficiency by M: two curves in log M, clamped outside
 * their points, in place of the flat factors for the weights' read and the
 * GEMMs' FLOPs; KV and attention keep the flat factors. */
static void gemm_efficiency_follows_its_curves_in_log_m(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_time t;
  llama8b(&d, &l, 1);
  kvp_perf p = h100();
  p.gemm_mem = (kvp_curve){.n = 2, .m = {1, 64}, .e = {0.8, 0.5}};
  p.gemm_flop = (kvp_curve){.n = 2, .m = {256, 4096}, .e = {0.5, 0.7}};
  /* M = 8 is halfway from 1 to 64 in log M: 0.8 + (0.5 - 0.8) / 2 */
  assert_true(fabs(kvp_curve_at(&p.gemm_mem, 8, 1) - 0.65) < 1e-15);
  assert_true(kvp_curve_at(&p.gemm_mem, 1, 1) == 0.8);
  assert_true(kvp_curve_at(&p.gemm_mem, 1000, 1) == 0.5);   /* clamped above */
  assert_true(kvp_curve_at(&p.gemm_flop, 8, 1) == 0.5);     /* clamped below */
  kvp_curve none = {0};
  assert_true(kvp_curve_at(&none, 8, 0.9) == 0.9);          /* no points: flat */
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  /* decode of 8 at context 1000: 16e9 weight bytes at 3.35e12 x 0.65 (their
   * 2 x 8e9 x 8 FLOPs at 989.5e12 x 0.5 take less), the KV at 3.35e12 x 1 */
  assert_int_equal(kvp_time_at(&c, 1000, 8, &t), KVP_OK);
  double gemm = 16e9 / (3.35e12 * 0.65);
  double kv = 8 * 131072.0 * 1001 / 3.35e12;
  assert_true(fabs(t.decode.gemm_s - gemm) < 1e-15);
  assert_true(fabs(t.decode.attn_s - kv) < 1e-15);
  assert_true(fabs(t.tpot_s - (gemm + kv)) < 1e-15);
  /* one prompt of 1000 tokens: M = 1000 is ln(1000 / 256) / ln 16 of the way
   * from 256 to 4096; its 2 x 8e9 x 1000 FLOPs at 989.5e12 x that, beside
   * the weights at 3.35e12 x 0.5 (clamped) */
  double e = 0.5 + 0.2 * log(1000.0 / 256) / log(16.0);
  double attn = 32.0 * 2 * 32 * 256 * (1000.0 * 1001 / 2) / 989.5e12;
  assert_true(fabs(t.prefill.gemm_s - 16e12 / (989.5e12 * e)) < 1e-15);
  assert_true(fabs(t.ttft_s - (16e12 / (989.5e12 * e) + attn)) < 1e-12);
  /* a curve out of order, or an efficiency above 1, is an error naming it */
  kvp_diag diag;
  kvp_perf bad = p;
  bad.gemm_mem.m[1] = 1;
  assert_int_equal(kvp_perf_check(&bad, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "gemm_memory"));
  bad = p;
  bad.gemm_flop.e[0] = 1.5;
  assert_int_equal(kvp_perf_check(&bad, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "gemm_compute"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(batch_one_decode_is_weights_plus_kv_over_bandwidth),
    cmocka_unit_test(large_batches_turn_decode_compute_bound),
    cmocka_unit_test(tensor_parallel_splits_bytes_and_adds_two_allreduces_a_layer),
    cmocka_unit_test(allreduces_from_the_engine_limit_run_nccl_at_its_busbw_by_size),
    cmocka_unit_test(moe_reads_active_weights_alone_and_all_of_them_in_a_large_batch),
    cmocka_unit_test(windows_cap_the_keys_read_and_attended),
    cmocka_unit_test(gemms_and_attention_each_take_their_own_bound),
    cmocka_unit_test(experts_chosen_idle_weights_logits_and_activations_are_counted),
    cmocka_unit_test(host_time_adds_kernels_and_sequences),
    cmocka_unit_test(loop_host_time_adds_once_a_step),
    cmocka_unit_test(kernels_take_at_least_their_floor),
    cmocka_unit_test(an_attention_call_takes_at_least_its_own_floor),
    cmocka_unit_test(a_quantization_kernel_takes_at_least_its_own_floor),
    cmocka_unit_test(the_sampler_moves_each_sampled_rows_logits),
    cmocka_unit_test(cuda_graphs_pad_to_captured_sizes_and_eager_steps_launch_each_kernel),
    cmocka_unit_test(piecewise_graphs_launch_attention_eagerly),
    cmocka_unit_test(expert_parallelism_holds_whole_experts_and_adds_an_all_to_all),
    cmocka_unit_test(attention_dp_splits_attention_over_tp_over_dp),
    cmocka_unit_test(vllm_data_parallel_counts_every_engine),
    cmocka_unit_test(pipeline_stages_run_micro_batches),
    cmocka_unit_test(the_step_memo_gives_the_same_step_bit_for_bit),
    cmocka_unit_test(gemm_efficiency_follows_its_curves_in_log_m),
    cmocka_unit_test(gemms_compute_whole_m_tiles),
    cmocka_unit_test(attention_runs_at_its_kernels_rates_by_query_tokens),
    cmocka_unit_test(attention_on_a_16_bit_cache_computes_at_the_16_bit_peak),
    cmocka_unit_test(sparse_attention_attends_top_k_and_indexes_every_key),
    cmocka_unit_test(a_context_of_int64_max_counts_its_keys_without_overflow),
    cmocka_unit_test(experts_reach_the_benchmarked_fraction_by_tokens_per_expert),
    cmocka_unit_test(speculative_decoding_divides_steps_by_tokens_per_step),
    cmocka_unit_test(draft_passes_all_reduce_their_own_layers_by_message_size),
    cmocka_unit_test(a_prefill_reads_the_recurrent_states_as_the_simulator_does),
    cmocka_unit_test(price_per_gpu_hour_gives_dollars_per_million_tokens),
    cmocka_unit_test(replicated_weights_are_read_whole),
    cmocka_unit_test(replicated_matmuls_are_computed_whole),
    cmocka_unit_test(bad_rates_are_errors_naming_the_field),
  };
  return cmocka_run_group_tests_name("roofline", tests, NULL, NULL);
}
