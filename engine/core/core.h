/*
 * core.h: the core's private interface: what its files offer one another
 * and neither the binding nor the program sees (kvplan.h is the public
 * one): the bits of a tensor, a layer's shape, tokens, blocks and pages, pipeline
 * stages (format.c, model.c, kv.c, paging.c), the deployment's checks of changed
 * numbers and its weights (deploy.c), the ledger's evaluation of a sweep's
 * changed numbers (ledger.c), the random numbers, eviction and checks of
 * the optimizations (optim.c), the step-time terms (roofline.c), and the
 * ledger's layout after its stages.
 * Unit tests of those files include it. Pure computation: no Lua, no I/O.
 */
#ifndef KVP_CORE_H
#define KVP_CORE_H

#include <stddef.h>

#include "kvplan.h"

/* ---- storage formats (format.c) ---------------------------------------- */

/* Bits of n elements in runs of `row` elements (groups never span rows; row 0
 * means one run): n * bits + (n / row) * ceil(row / group) * (scale + zero). */
kvp_err kvp_format_bits(const kvp_format *f, int64_t n, int64_t row, int64_t *bits);
/* Bytes of one TurboQuant slot (one token's K and V of one head of head_dim):
 * vLLM TurboQuantConfig.slot_size_aligned. 0 if f is not TurboQuant. */
int64_t kvp_format_tq_slot(const kvp_format *f, int64_t head_dim);

/* ---- model description (model.c) -------------------------------------- */

/* 1 when a and b are one layer shape: every field of kvp_layer alike. */
int kvp_same_layer(const kvp_layer *a, const kvp_layer *b);

/* ---- KV accounting (kv.c) ---------------------------------------------- */

/* Bytes of the fixed per-sequence state of a recurrent layer on one GPU. */
kvp_err kvp_kv_state_bytes(const kvp_layer *l, int64_t tp, int64_t *bytes);
/* Bits one token adds to an MLA layer's sparse-attention indexer keys (its
 * part of kvp_kv_token_bits, whole on every rank, any KV format); 0 without. */
kvp_err kvp_kv_index_bits(const kvp_layer *l, int64_t *bits);
/* Tokens of a sequence of n tokens that layer l keeps: n, or min(n, window). */
int64_t kvp_kv_tokens_held(const kvp_layer *l, int64_t n);

/* Layers [first, first + count) of pipeline stage `stage` of `pp`, as vLLM's
 * get_pp_indices splits them: layers / pp each, the remainder going one each
 * to the stages before the last, from the second-to-last backwards. */
kvp_err kvp_pp_stage(int64_t layers, int64_t pp, int64_t stage, int64_t *first,
                     int64_t *count);

/* ---- paging (paging.c) ------------------------------------------------- */

#define KVP_DEFAULT_BLOCK 16

/* Blocks one layer of shape l needs for a sequence of n tokens, with up to
 * `max_num_batched_tokens` tokens scheduled in one step (vLLM's option of that name;
 * 1 in steady decode). Full, MLA: ceil(n / block). Sliding W: the last
 * W - 1 + step tokens, straddling one more block once n exceeds them
 * (vLLM SlidingWindowSpec). Chunked C: ceil(min(C + step, n) / block)
 * (ChunkedLocalAttentionSpec). State, none: 0 (states are not paged). */
kvp_err kvp_layer_blocks(const kvp_layer *l, int64_t n, int64_t block,
                         int64_t max_num_batched_tokens, int64_t *blocks);
/* Bytes of one block (page) of one layer: ceil(block * token_bits / 8). */
kvp_err kvp_page_bytes(int64_t token_bits, int64_t block, int64_t *bytes);

/* ---- a deployment (deploy.c) -------------------------------------------- */

/* kvp_deploy_check but for the model's own checks and the ones that depend
 * on the model, budget rule and allocation only: for a deployment that
 * passed kvp_deploy_check and then changed numbers (a sweep's axes). */
kvp_err kvp_deploy_check_numbers(const kvp_deploy *d, kvp_diag *diag);
/* Total weight bytes: weight_bytes if set, else params in the weight format
 * plus its tensor and col bits over the model's linear shards and columns
 * (kvp_format_weight_bytes). */
kvp_err kvp_deploy_weight_bytes(const kvp_deploy *d, int64_t *bytes);
/* Bytes of the weights every TP rank holds whole (kvp_replicated): 0 at tp
 * 1, else replicated.bytes if set, else its params in the weight format with
 * the format's tensor and col bits over its shards and columns; at most
 * `total` (the weights' bytes). */
kvp_err kvp_deploy_replicated_bytes(const kvp_deploy *d, int64_t total, int64_t *bytes);

/* ---- the ledger (ledger.c) ------------------------------------------------ */

/* kvp_ledger_eval of a deployment whose model, budget rule and allocation
 * passed kvp_deploy_check (kvp_deploy_check_numbers checks the rest): a
 * sweep's change of numbers, without walking the model's layers again. */
kvp_err kvp_ledger_eval_numbers(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag);
/* kvp_ledger_eval_numbers of l's own deployment l->d, which the caller
 * changed in numbers only since l was evaluated (a sweep's next deployment,
 * without copying it): KVP_EINVAL when that evaluation adjusted l->d. */
kvp_err kvp_ledger_eval_own_numbers(kvp_ledger *l, kvp_diag *diag);
/* The ngroup groups of stage s (optimized path: not plain, not vLLM's
 * hybrid KV cache groups); NULL for a stage the ledger does not have. */
const kvp_group *kvp_ledger_groups(const kvp_ledger *l, int32_t s);

/* ---- optimizations (optim.c; kvp_optim_check, kvp_optim_plain: deploy.c) -- */

uint64_t kvp_rng_next(kvp_rng *r);
/* Uniform on 0 .. n - 1 (n >= 1), without modulo bias. */
uint64_t kvp_rng_below(kvp_rng *r, uint64_t n);
/* Uniform on the open interval (0, 1), 53 bits. */
double kvp_rng_unit(kvp_rng *r);
/* Tokens a full-attention or MLA layer at level `level` (0: none) keeps of a
 * sequence of m tokens: min(m, sinks + recent + ceil(m * keep_ppm / 10^6),
 * the level's budget), the window part only when recent or keep is set. */
int64_t kvp_evict_held(const kvp_evict *e, int64_t m, int32_t level);
/* (deploy.c) Check every optimization field of d; max_len is the deployment's
 * max_model_len when known (else 0), against which windows, prefixes and
 * prompts longer than any request are errors. */
kvp_err kvp_optim_check(const kvp_deploy *d, int64_t max_len, kvp_diag *diag);
/* Does any field change what a sequence holds (not just the pool size)? */
int kvp_optim_plain(const kvp_deploy *d);
/* KVP_EINVAL, naming the field, for unknown bits, an invalid format or
 * allocation, or more length points than KVP_LEN_POINTS (the rest of a
 * deployment's checks come once it is applied: kvp_deploy_check). */
kvp_err kvp_combo_check(const kvp_combo *c, kvp_diag *diag);

/* ---- step times (roofline.c) ------------------------------------------------- */

/* The per-sequence costs below are defined here, inline: the simulator
 * (sim.c) evaluates them for every scheduled sequence of every step, and a
 * call into roofline.c for each cost most of what they compute. Their
 * arithmetic is roofline.c's (see its header comment). */

/* KV bytes one sequence with n tokens of context reads in one step. */
static inline double kvp_cost_kv_read(const kvp_cost *c, int64_t n) {
  double r = c->state_bytes;
  for (int32_t i = 0; i < c->nterm; i++) {
    int64_t keys = c->window[i] > 0 && n > c->window[i] ? c->window[i] : n;
    r += c->kv_tok[i] * (double)keys;
  }
  return r;
}

/* Sum of min(i, w) for i = a + 1 .. a + k (w = 0: no cap), a, k >= 0.
 * a + k <= w is tested as k <= w - a: a context of INT64_MAX (kvp_time_at
 * takes one) plus its token overflowed int64 (UB) on a windowed term. */
static inline double kvp_keys_sum(int64_t a, int64_t k, int64_t w) {
  double fa = (double)a, fk = (double)k;
  if (w <= 0 || (a <= w && k <= w - a)) return fk * fa + fk * (fk + 1.0) / 2.0;
  if (a >= w) return fk * (double)w;
  int64_t below = w - a; /* positions a + 1 .. w are uncapped */
  double fb = (double)below;
  return fb * fa + fb * (fb + 1.0) / 2.0 + (fk - fb) * (double)w;
}

/* The attention kernels' FLOPs of `count` new tokens of a sequence that
 * already holds `start` tokens: token i (1-based position start + i) attends
 * to start + i keys, or the last `window` of them (a sparse-attention layer:
 * its top index_topk, the same count). */
static inline double kvp_cost_attn_kernels(const kvp_cost *c, int64_t start, int64_t count) {
  double f = 0.0;
  for (int32_t i = 0; i < c->nterm; i++)
    f += c->attn_key[i] * kvp_keys_sum(start, count, c->window[i]);
  return f;
}
/* The sparse-attention indexers' FLOPs of the same tokens: each scores
 * every key before it and itself (0 without an indexer). */
static inline double kvp_cost_index(const kvp_cost *c, int64_t start, int64_t count) {
  return c->index_key > 0.0 ? c->index_key * kvp_keys_sum(start, count, 0) : 0.0;
}
/* Attention FLOPs of those tokens: the kernels' and the indexers'. */
static inline double kvp_cost_attn(const kvp_cost *c, int64_t start, int64_t count) {
  return kvp_cost_attn_kernels(c, start, count) + kvp_cost_index(c, start, count);
}
/* One step of the target model: `tokens` tokens of `seqs` sequences
 * processed (each sequence's last token gives logits), `kv_read` bytes of
 * KV read, `attn` attention FLOPs (sums over the scheduled sequences of the
 * two functions above). */
void kvp_step_time(const kvp_cost *c, int64_t tokens, int64_t seqs, double kv_read, double attn,
                   kvp_step *out);
/* Seconds the attention FLOPs `attn` of one sequence with `count` query
 * tokens in the step take at the attention kernel's rate: attn_tflops x the curve
 * attn_flop at `count` (kvp_curve_at; flop_eff without one). */
static inline double kvp_cost_attn_s(const kvp_cost *c, int64_t count, double attn) {
  if (!(attn > 0.0)) return 0.0;
  double q = (double)(count > 0 ? count : 1);
  return attn / (c->attn_peak * kvp_curve_at(&c->p.attn_flop, q, c->attn_eff));
}
/* Seconds of the attention FLOPs of `count` new tokens of a sequence holding
 * `start`: the kernels' at kvp_cost_attn_s, the indexers' at their own rate
 * (index_flops); *flops gets their sum (kvp_cost_attn). */
static inline double kvp_cost_attn_secs(const kvp_cost *c, int64_t start, int64_t count,
                                        double *flops) {
  double a = kvp_cost_attn_kernels(c, start, count), x = kvp_cost_index(c, start, count);
  *flops = a + x;
  return kvp_cost_attn_s(c, count, a) + (x > 0.0 ? x / c->index_flops : 0.0);
}
/* kvp_step_time with the attention's compute seconds given (`attn_s`, the
 * sum of kvp_cost_attn_s over the scheduled sequences); kvp_step_time takes
 * them at the mean query tokens a sequence, tokens / seqs. */
void kvp_step_time_s(const kvp_cost *c, int64_t tokens, int64_t seqs, double kv_read, double attn,
                     double attn_s, kvp_step *out);
/* The part of a step's time its tokens and sequences decide alone (those of
 * one micro-batch under pipeline parallelism), before its KV and attention. */
typedef struct kvp_step_part {
  int64_t tokens, seqs, run_tokens;
  int graph;
  double tokens_per_expert, weight_bytes, weight_s, write_bytes, act, act_roof, act_s;
  double gemm_flops;  /* the GEMMs' and routed experts' FLOPs */
  double gemm_comp;   /* their compute seconds */
  double gemm_roof, gemm_s, expert_s, a2a_s, comm_s, nccl_s, host;
  double comp_bound;  /* the GEMMs' and experts' seconds bound by their FLOPs */
} kvp_step_part;
/* The last step's shape and its part: steps of one shape in a row (a decode
 * batch that neither grows nor shrinks) compute it once. Start it zeroed
 * (nothing memoized); it holds for one kvp_cost. */
typedef struct kvp_step_memo {
  int valid;
  int64_t key_tokens, key_seqs;
  int key_long;     /* 1: the step's longest sequence exceeds graph_seq_max */
  kvp_step_part part;
} kvp_step_memo;
/* kvp_step_time_s through the memo m: the same figures, bit for bit, for a
 * step whose longest decoding sequence holds `longest` tokens with the one it
 * decodes (kvp_perf.graph_seq_max; 0: none decoding, or not known). */
void kvp_step_time_memo(const kvp_cost *c, kvp_step_memo *m, int64_t tokens, int64_t seqs,
                        int64_t longest, double kv_read, double attn, double attn_s,
                        kvp_step *out);
/* One draft pass for `seqs` sequences at mean context n (speculative). */
double kvp_draft_time(const kvp_cost *c, int64_t seqs, double mean_context);

/* ---- the serving simulator (sim.c) ------------------------------------------- */

/* The name of a scheduler policy ("continuous", ...). */
const char *kvp_sched_name(kvp_sched s);

/* The ledger's layout after its stages (ledger.c lays it out, kvp_ledger_size
 * sizes it, vllm_kv.c reads the KV cache types in it).
 * Stage s's groups and sums at the length points, packed after the stages. */
static inline kvp_group *ledger_groups_of(const kvp_ledger *l, int32_t s) {
  char *tail = (char *)l + offsetof(kvp_ledger, stage) + (size_t)l->cap_stages * sizeof(kvp_stage);
  return (kvp_group *)tail + (size_t)s * (size_t)l->cap_groups;
}

static inline int64_t *ledger_sums_of(const kvp_ledger *l, int32_t s) {
  int64_t *sums = (int64_t *)(ledger_groups_of(l, l->cap_stages));
  return sums + (size_t)s * (size_t)l->cap_points;
}

/* The KV cache types of vLLM's hybrid KV cache manager, after every stage's sums. */
static inline kvp_kv_type *ledger_types_of(const kvp_ledger *l) {
  return (kvp_kv_type *)ledger_sums_of(l, l->cap_stages);
}

#endif
