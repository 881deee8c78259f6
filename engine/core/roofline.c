/*
 * roofline.c: the time of one engine step (roofline.h).
 * Pure computation: no Lua, no I/O.
 *
 * Bytes of one step on one GPU of the TP group, all pipeline stages in turn:
 *   weights   the dense part (every weight but the routed experts and what
 *             no text step reads: an untied embedding table, of which a step
 *             gathers only its tokens' rows, and a vision tower) / tp, read
 *             whole by any step; the routed experts / tp x (1 - (1 - k/E)^T)
 *             for T tokens, each choosing k of a layer's E experts: the
 *             expected share of experts at least one token chooses when the
 *             router spreads them evenly (with T = 1 exactly the k chosen).
 *             A model without that split (a user's, giving params and active
 *             only) reads all weights x (1 - (1 - f)^T), f = active / params
 *   KV read   per scheduled sequence of context n: sum over layers of the
 *             bytes of one token on this GPU (kvp_kv_token_bits: heads
 *             split over tp, MLA's latent whole) x n, or x min(n, W) for a
 *             sliding window or local chunk W, plus recurrent states;
 *             a DeepSeek Sparse Attention layer (MLA with index_topk) its
 *             latent x min(n, index_topk) and its indexer's keys x n
 *   KV write  the step's tokens x the bytes of one token on all layers
 *   activations  each token's hidden state through the norms and residual
 *             adds and the ends of the linear layers (on every GPU of the
 *             group), its rotary, MLP-activation and head-sized tensors
 *             (split over tp): the stdlib counts them from the model's shape
 * FLOPs on one GPU: the layers' 2 x active parameters per token / tp (a
 * multiply-add per weight per token), the logits' 2 x vocab x hidden / tp
 * per scheduled sequence (the engines compute the logits of each sequence's
 * last scheduled token only: vLLM V1 gpu_model_runner.py logits_indices), plus
 * attention: per (query, key) pair and layer 2 x heads x (head_dim +
 * head_dim_v) (QK^T and PV), for MLA with absorbed projections 2 x heads x
 * (2 latent + rope_dim), over tp.
 * DeepSeek Sparse Attention (DeepSeek-V3.2): each query token's indexer
 * scores every key before it and itself (index_n_heads x index_head_dim fp8
 * dot products and a weighted sum: DeepSeek-V3.2-Exp inference/model.py
 * Indexer at 6d8cb70dfdd6; vLLM's sparse_attn_indexer, DeepGEMM
 * fp8_mqa_logits over each query's [ks, ke) in prefill and
 * fp8_paged_mqa_logits over seq_lens in decode,
 * vllm/model_executor/layers/sparse_attn_indexer.py at 006475fe481a), reading
 * its fp8 keys of the whole context; MLA then attends to the top index_topk
 * (FlashMLA sparse, indices in place of the block table: vllm/v1/attention/
 * backends/mla/flashmla_sparse.py at 008a0c31dc02), so the latent's read and
 * the MLA FLOPs are those of a sliding window of index_topk (time only: the
 * cache keeps every token). The indexer's FLOPs, 2 x index_n_heads x
 * index_head_dim a (query, key) pair, are whole on every rank (its wq_b a
 * ReplicatedLinear, "no tensor parallel, just replicated": vLLM
 * vllm/model_executor/models/deepseek_v2.py Indexer at 002d6073aa03; SGLang
 * python/sglang/srt/layers/attention/nsa/nsa_indexer.py at 9c570b0857c4;
 * the reference computes all heads on every rank and broadcasts rank 0's
 * top-k), at the fp8 rate (index_tflops) x flop_eff.
 * Tensor parallelism: two all-reduces per layer (after attention and after
 * the MLP, Megatron-LM: Shoeybi et al., 2019) of T x hidden x 2 bytes (16-bit
 * activations); a ring all-reduce sends 2 (tp - 1) / tp of it each way
 * (Patarasuk and Yuan, 2009), at half the catalog's bidirectional
 * interconnect figure, plus link_latency_us each. Given an NCCL AllReduce
 * bus-bandwidth curve by message size (kvp_perf.nccl_bytes / nccl_busbw,
 * nccl-tests' busbw), a plain TP all-reduce whose message (its T tokens x
 * hidden x 2 bytes) is not below the engine's own kernel's limit
 * (ar_custom_below) runs NCCL instead: its bytes x 2 (n - 1) / n at the
 * curve's busbw at that message size, and no separate latency (busbw is
 * size x 2 (n - 1) / n over the whole measured time, NCCL's fixed cost in
 * it: NVIDIA/nccl-tests doc/PERFORMANCE.md). Pipeline: pp - 1 hand-offs of T x hidden x 2 bytes, and
 * min(pp, sequences) micro-batches in flight (kvp_step_time).
 * Data and expert parallelism (kvp_dp_ranks DP ranks, each its own
 * requests): the ranks of a MoE model step together (vLLM: DP ranks of a
 * MoE model run every forward together, idle ones a dummy batch,
 * vllm/v1/engine/core.py DPEngineCoreProc; SGLang: every attention-DP rank
 * joins each MoE layer's gather, python/sglang/srt/layers/dp_attention.py),
 * so a MoE layer sees the tokens of all ranks, T x ranks when the ranks
 * are evenly loaded (assumed). On one GPU: the experts it holds (whole
 * experts under EP, its TP slice of each without) at the share of them
 * some of the ranks' tokens chose; FLOPs of the whole deployment's tokens
 * spread over its GPUs, so 2 x active / attn_tp a token of the rank
 * (attn_tp = tp for vLLM, tp / dp_size under SGLang's attention DP); the
 * attention's all-reduce over attn_tp. The MLP's collective: under EP an
 * all-to-all dispatch and combine each MoE layer, each GPU sending its
 * share (1 / attn_tp) of its rank's tokens' k copies of hidden x 2 bytes,
 * (ep - 1) / ep of them to other GPUs; without EP under vLLM's DP a ring
 * all-reduce of the ranks' tokens over the dp x tp GPUs the experts are
 * split across (flatten_tp_across_dp); under SGLang's attention DP an
 * all-gather of the ranks' tokens (dp_gather, DpPaddingMode MAX_LEN:
 * all_gather_into_tensor) and the MLP's all-reduce of them over tp.
 * The dense linear layers read their weights at hbm x gemm_mem(T) and
 * compute at peak x gemm_flop(T), T the step's tokens (the logits at the
 * sequences they are computed for): curves by M from published kernel
 * benchmarks (stdlib/kvplan/sim.lua gemm_benchmarks), interpolated in log M
 * and clamped outside their points (kvp_curve_at); without a curve, the
 * flat mem_eff and flop_eff. KV, attention, activations and routed experts
 * keep their own factors.
 * Host time: launch_us per kernel of the step, loop_host_us a step (the
 * engine loop's own work beyond its launches) plus seq_host_us per scheduled
 * sequence, added to the step when the engine waits for the host between
 * steps, else hidden up to the GPU's time (host_overlap: max of the two).
 */
#include <math.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

#define ACT_BYTES 2.0 /* bytes of one activation element (bf16/fp16) */

static int finite_pos(double v) { return isfinite(v) && v > 0.0; }

/* A curve's points: at most KVP_CURVE_PTS, M >= 1 strictly increasing,
 * efficiencies in (0, 1]. */
static kvp_err curve_check(const kvp_curve *c, const char *name, kvp_diag *d) {
  if (c->n < 0 || c->n > KVP_CURVE_PTS)
    return kvp_fail(d, KVP_EINVAL, "field '%s' must have 0 to %d points, got %d", name,
                    KVP_CURVE_PTS, (int)c->n);
  for (int32_t i = 0; i < c->n; i++) {
    if (!(isfinite(c->m[i]) && c->m[i] >= 1.0) || (i > 0 && !(c->m[i] > c->m[i - 1])))
      return kvp_fail(d, KVP_EINVAL, "field '%s' point %d: M must be >= 1 and above the "
                      "previous point's, got %g", name, (int)i + 1, kvp_shown(c->m[i]));
    if (!(c->e[i] > 0.0 && c->e[i] <= 1.0))
      return kvp_fail(d, KVP_EINVAL, "field '%s' point %d: efficiency must be in (0, 1], got %g",
                      name, (int)i + 1, kvp_shown(c->e[i]));
  }
  return KVP_OK;
}

kvp_err kvp_perf_check(const kvp_perf *p, kvp_diag *d) {
  if (!finite_pos(p->hbm_gbps))
    return kvp_fail(d, KVP_EINVAL, "field 'hbm_gbps' must be a number > 0, got %g", kvp_shown(p->hbm_gbps));
  if (!finite_pos(p->tflops))
    return kvp_fail(d, KVP_EINVAL, "field 'tflops' must be a number > 0, got %g", kvp_shown(p->tflops));
  if (!(isfinite(p->link_gbps) && p->link_gbps >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'link_gbps' must be a number >= 0, got %g",
                    kvp_shown(p->link_gbps));
  const struct { const char *name; double v; } eff[3] = {
    {"memory", p->mem_eff}, {"compute", p->flop_eff}, {"link", p->link_eff}};
  if (!(p->expert_eff >= 0.0 && p->expert_eff <= 1.0))
    return kvp_fail(d, KVP_EINVAL, "efficiency 'experts' must be in (0, 1], got %g",
                    kvp_shown(p->expert_eff));
  for (int i = 0; i < 3; i++)
    if (!(eff[i].v > 0.0 && eff[i].v <= 1.0))
      return kvp_fail(d, KVP_EINVAL, "efficiency '%s' must be in (0, 1], got %g", eff[i].name,
                      kvp_shown(eff[i].v));
  if (!(isfinite(p->link_latency_us) && p->link_latency_us >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'link_latency_us' must be a number >= 0, got %g",
                    kvp_shown(p->link_latency_us));
  if (!(isfinite(p->step_overhead_ms) && p->step_overhead_ms >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'step_overhead_ms' must be a number >= 0, got %g",
                    kvp_shown(p->step_overhead_ms));
  if (!(p->acceptance >= 0.0 && p->acceptance < 1.0))
    return kvp_fail(d, KVP_EINVAL, "field 'acceptance' must be in [0, 1), got %g",
                    kvp_shown(p->acceptance));
  if (!(isfinite(p->price_per_hour) && p->price_per_hour >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'price_per_hour' must be a number >= 0, got %g",
                    kvp_shown(p->price_per_hour));
  const struct { const char *name; double v; } nonneg[] = {
    {"launch_us", p->launch_us}, {"seq_host_us", p->seq_host_us},
    {"loop_host_us", p->loop_host_us}, {"body_flops", p->body_flops},
    {"head_flops", p->head_flops}, {"act_rep_bytes", p->act_rep_bytes},
    {"act_split_bytes", p->act_split_bytes}, {"kernels", p->kernels},
    {"kernel_floor_us", p->kernel_floor_us}, {"gemm_kernels", p->gemm_kernels},
    {"attn_kernels", p->attn_kernels}, {"sampler_bytes", p->sampler_bytes},
    {"eager_launch_us", p->eager_launch_us}, {"graph_max", (double)p->graph_max},
    {"piecewise_kernels", p->piecewise_kernels}, {"graph_seq_max", (double)p->graph_seq_max},
    {"attn_floor_us", p->attn_floor_us}, {"quant_kernels", p->quant_kernels},
    {"quant_floor_us", p->quant_floor_us}, {"gemm_tile_m", p->gemm_tile_m},
    {"index_tflops", p->index_tflops}};
  for (size_t i = 0; i < sizeof nonneg / sizeof nonneg[0]; i++)
    if (!(isfinite(nonneg[i].v) && nonneg[i].v >= 0.0))
      return kvp_fail(d, KVP_EINVAL, "field '%s' must be a number >= 0, got %g", nonneg[i].name,
                      kvp_shown(nonneg[i].v));
  /* a tile is whole rows: 0.3 rounded one token up to 1.2 rows, 1e-310 to inf */
  if (p->gemm_tile_m != floor(p->gemm_tile_m))
    return kvp_fail(d, KVP_EINVAL, "field 'gemm_tile_m' must be 0 or a whole number of rows >= 1, "
                    "got %g", p->gemm_tile_m);
  if (!(p->expert_share >= 0.0 && p->idle_share >= 0.0 && p->expert_share + p->idle_share < 1.0))
    return kvp_fail(d, KVP_EINVAL, "fields 'expert_share' %g and 'idle_share' %g must be >= 0 "
                    "with a sum below 1", kvp_shown(p->expert_share), kvp_shown(p->idle_share));
  if (p->experts < 0 || (p->experts > 0 && !(p->experts_active >= 1 && p->experts_active <= p->experts)))
    return kvp_fail(d, KVP_EINVAL, "field 'experts_active' must be in [1, experts %lld], got %lld",
                    (long long)p->experts, (long long)p->experts_active);
  if (p->expert_share > 0.0 && p->experts == 0)
    return kvp_fail(d, KVP_EINVAL, "field 'expert_share' %g needs 'experts' > 0",
                    kvp_shown(p->expert_share));
  if (p->expert_points < 0 || p->expert_points > KVP_EXPERT_POINTS)
    return kvp_fail(d, KVP_EINVAL, "field 'expert_points' must be in [0, %d], got %d",
                    KVP_EXPERT_POINTS, (int)p->expert_points);
  for (int32_t i = 0; i < p->expert_points; i++) {
    double x = p->expert_tpe[i], f = p->expert_frac[i];
    if (!(isfinite(x) && x > 0.0) || (i > 0 && !(x > p->expert_tpe[i - 1])))
      return kvp_fail(d, KVP_EINVAL, "field 'expert_tpe' point %d must be a number > 0 and above "
                      "the point before it, got %g", (int)i + 1, kvp_shown(x));
    if (!(f > 0.0 && f <= 1.0))
      return kvp_fail(d, KVP_EINVAL, "field 'expert_frac' point %d must be in (0, 1], got %g",
                      (int)i + 1, kvp_shown(f));
  }
  if (!(isfinite(p->expert_flops) && p->expert_flops >= 0.0 && p->expert_flops <= p->body_flops))
    return kvp_fail(d, KVP_EINVAL, "field 'expert_flops' must be a number in [0, body_flops %g], "
                    "got %g", kvp_shown(p->body_flops), kvp_shown(p->expert_flops));
  if (p->moe_layers < 0)
    return kvp_fail(d, KVP_EINVAL, "field 'moe_layers' must be >= 0, got %lld",
                    (long long)p->moe_layers);
  if (p->gemm_kernels + p->attn_kernels > p->kernels)
    return kvp_fail(d, KVP_EINVAL, "fields 'gemm_kernels' %g and 'attn_kernels' %g are of "
                    "'kernels' %g: their sum must not exceed it", kvp_shown(p->gemm_kernels),
                    kvp_shown(p->attn_kernels), kvp_shown(p->kernels));
  if (p->gemm_kernels + p->attn_kernels + p->quant_kernels > p->kernels)
    return kvp_fail(d, KVP_EINVAL, "field 'quant_kernels' %g is of 'kernels' %g beside "
                    "'gemm_kernels' %g and 'attn_kernels' %g: their sum must not exceed it",
                    kvp_shown(p->quant_kernels), kvp_shown(p->kernels),
                    kvp_shown(p->gemm_kernels), kvp_shown(p->attn_kernels));
  if (p->piecewise_kernels > p->kernels)
    return kvp_fail(d, KVP_EINVAL, "field 'piecewise_kernels' %g is of 'kernels' %g: it must "
                    "not exceed it", kvp_shown(p->piecewise_kernels), kvp_shown(p->kernels));
  if (p->graphs < KVP_GRAPHS_NONE || p->graphs > KVP_GRAPHS_EXACT)
    return kvp_fail(d, KVP_EINVAL, "field 'graphs' must be %d..%d (kvp_graphs), got %d",
                    KVP_GRAPHS_NONE, KVP_GRAPHS_EXACT, (int)p->graphs);
  if (!(p->attn_share >= 0.0 && p->attn_share + p->expert_share + p->idle_share < 1.0))
    return kvp_fail(d, KVP_EINVAL, "field 'attn_share' %g must be >= 0 with 'expert_share' and "
                    "'idle_share' a sum below 1", kvp_shown(p->attn_share));
  TRY(curve_check(&p->attn_flop, "attn_compute", d));
  if (!(isfinite(p->attn_tflops) && p->attn_tflops >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'attn_tflops' must be a number >= 0, got %g",
                    kvp_shown(p->attn_tflops));
  if (!(p->attn_mem_eff >= 0.0 && p->attn_mem_eff <= 1.0))
    return kvp_fail(d, KVP_EINVAL, "field 'attn_mem_eff' must be in [0, 1] (0: mem_eff), got %g",
                    kvp_shown(p->attn_mem_eff));
  TRY(curve_check(&p->gemm_mem, "gemm_memory", d));
  TRY(curve_check(&p->gemm_flop, "gemm_compute", d));
  if (p->nccl_points < 0 || p->nccl_points > KVP_NCCL_POINTS)
    return kvp_fail(d, KVP_EINVAL, "field 'nccl_points' must be in [0, %d], got %d",
                    KVP_NCCL_POINTS, (int)p->nccl_points);
  for (int32_t i = 0; i < p->nccl_points; i++) {
    double x = p->nccl_bytes[i], f = p->nccl_busbw[i];
    if (!(isfinite(x) && x >= 1.0) || (i > 0 && !(x > p->nccl_bytes[i - 1])))
      return kvp_fail(d, KVP_EINVAL, "field 'nccl_bytes' point %d must be a number >= 1 and above "
                      "the point before it, got %g", (int)i + 1, kvp_shown(x));
    if (!(isfinite(f) && f > 0.0))
      return kvp_fail(d, KVP_EINVAL, "field 'nccl_busbw' point %d must be a number > 0 (GB/s), "
                      "got %g", (int)i + 1, kvp_shown(f));
  }
  if (!(isfinite(p->ar_custom_below) && p->ar_custom_below >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'ar_custom_below' must be a number >= 0 (bytes), got %g",
                    kvp_shown(p->ar_custom_below));
  if (!(isfinite(p->attn16_tflops) && p->attn16_tflops >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'attn16_tflops' must be a number >= 0, got %g",
                    kvp_shown(p->attn16_tflops));
  if (p->attn16_tflops > 0.0 && !(p->attn16_eff > 0.0 && p->attn16_eff <= 1.0))
    return kvp_fail(d, KVP_EINVAL, "field 'attn16_eff' must be in (0, 1] with 'attn16_tflops', "
                    "got %g", kvp_shown(p->attn16_eff));
  return KVP_OK;
}

/* y at v on the n points (x[i], y[i]), x increasing: linear in log x
 * between the points around v, the nearest point's y outside them. */
static double log_interp(const double *x, const double *y, int32_t n, double v) {
  if (!(v > x[0])) return y[0];
  if (v >= x[n - 1]) return y[n - 1];
  int32_t i = 0;
  while (v >= x[i + 1]) i++;
  double t = log(v / x[i]) / log(x[i + 1] / x[i]);
  return y[i] + t * (y[i + 1] - y[i]);
}

double kvp_curve_at(const kvp_curve *c, double m, double flat) {
  return c->n > 0 ? log_interp(c->m, c->e, c->n, m) : flat;
}

/* The fraction of the routed experts' roofline their grouped GEMMs reach at
 * `tpe` tokens per expert: expert_eff when given (> 0), else the curve
 * expert_tpe/expert_frac interpolated linearly in log tokens and clamped to
 * its first and last points, else mem_eff. */
static double kvp_expert_fraction(const kvp_perf *p, double tpe) {
  if (p->expert_eff > 0.0) return p->expert_eff;
  if (p->expert_points <= 0) return p->mem_eff;
  /* the measured points by tokens per expert touched */
  return log_interp(p->expert_tpe, p->expert_frac, p->expert_points, tpe);
}

/* Attention FLOPs per (query, key) pair of one layer of shape l, all heads. */
static double attn_per_key(const kvp_layer *l, int64_t heads) {
  switch (l->kind) {
    case KVP_FULL:
    case KVP_SLIDING:
    case KVP_CHUNKED:
      return 2.0 * (double)heads * (double)(l->head_dim + l->head_dim_v);
    case KVP_MLA:
      return 2.0 * (double)heads * (double)(2 * l->latent + l->rope_dim);
    default:
      return 0.0;
  }
}

/* Add `layers` layers of shape l to the KV terms (same window: same term). */
static void add_term(kvp_cost *c, int64_t window, double tok_bytes, double per_key) {
  int32_t i = 0;
  while (i < c->nterm && c->window[i] != window) i++;
  if (i == c->nterm) {
    c->window[i] = window;
    c->kv_tok[i] = c->attn_key[i] = 0.0;
    c->nterm++;
  }
  c->kv_tok[i] += tok_bytes;
  c->attn_key[i] += per_key;
}

/* 2 (n - 1) / n: the share of a message a ring all-reduce over n ranks
 * sends each way (Patarasuk and Yuan, 2009). */
static double ring(double n) { return n > 1.0 ? 2.0 * (n - 1.0) / n : 0.0; }

/* The collectives of one pass through layers, per token of the pass: the
 * target's step (kvp_cost's ar_* fields) and the draft's pass (draft_ar_*)
 * take the one path below (collectives_s). */
typedef struct coll {
  double msg_tok;   /* bytes of one plain TP all-reduce's message a token (hidden x 2) */
  double all_tok;   /* bytes a GPU sends a token in every all-reduce and gather */
  double tp_tok;    /* of which the plain TP all-reduces' (tp_count of them) */
  double other_tok; /* the rest (the DP paths) */
  int64_t count;    /* collectives, all-to-alls included */
  int64_t a2a_count;/* of which all-to-alls */
  int64_t tp_count; /* of which plain TP all-reduces */
} coll;

/* The seconds of k's collectives for t tokens (a2a_s: its all-to-alls'): a
 * plain TP all-reduce whose message (t x msg_tok bytes) reaches the engine's
 * own kernel's limit (ar_custom_below) runs NCCL when the perf has its curve,
 * its bytes at the curve's bus bandwidth at that size and no latency beside
 * it (NCCL's fixed cost is inside the measured busbw: roofline.c header), the
 * others at the flat link rate plus link_latency_us each; without a curve or
 * below the limit every one at the link rate plus link_latency_us. *nccl: the
 * seconds NCCL ran (0 when none). */
static double collectives_s(const kvp_cost *c, const coll *k, double t, double a2a_s,
                            double *nccl) {
  const kvp_perf *p = &c->p;
  *nccl = 0.0;
  if (k->count <= 0) return 0.0;
  double msg = t * k->msg_tok;
  if (p->nccl_points > 0 && k->tp_count > 0 && !(msg < p->ar_custom_below)) {
    double busbw = log_interp(p->nccl_bytes, p->nccl_busbw, p->nccl_points, msg) * 1e9;
    *nccl = t * k->tp_tok / busbw;
    return t * k->other_tok / c->link + a2a_s + *nccl +
           (double)(k->count - k->a2a_count - k->tp_count) * p->link_latency_us * 1e-6;
  }
  return t * k->all_tok / c->link + a2a_s +
         (double)(k->count - k->a2a_count) * p->link_latency_us * 1e-6;
}

/* The share of all routed experts' bytes on the fullest GPU, and the EP
 * size (0: experts split over the TP ranks), as the ledger lays them out
 * (vllm_kv.c kvp_vllm_stage_weights). */
static double expert_layout(const kvp_deploy *dep, int64_t *ep_size) {
  const kvp_sglang_par *sg = &dep->sglang;
  double E = (double)dep->vllm.experts, tp = (double)dep->tp;
  *ep_size = 0;
  if (dep->vllm.experts > 0 && (sg->attn_dp > 1 || sg->ep > 1)) {
    if (sg->ep <= 1) return 1.0 / tp;
    /* TensorRT-LLM's moe_ep_size without attention DP: every tp rank runs
     * its own experts on all the step's tokens and the MoE's output is
     * all-reduced over the tp group as under TP MoE (the MoE module's
     * AllReduce over mapping.tp_size, "All ranks participate in allreduce
     * regardless of EP/TP combination"; the all-to-all only with
     * enable_attention_dp: CutlassFusedMoE.enable_alltoall,
     * tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py at
     * 7b437aaa73bf): no all-to-all */
    if (dep->budget != KVP_BUDGET_TRTLLM) *ep_size = sg->ep;
    return ceil(E / (double)sg->ep) / E / (tp / (double)sg->ep);
  }
  if (dep->vllm.experts > 0 && (dep->vllm.dp > 1 || dep->vllm.ep)) {
    double g = tp * (double)(dep->vllm.dp > 1 ? dep->vllm.dp : 1);
    if (!dep->vllm.ep) return 1.0 / g;
    *ep_size = (int64_t)g;
    return ceil(E / g) / E;
  }
  return 1.0 / tp;
}

kvp_err kvp_cost_init(kvp_cost *c, const kvp_ledger *l, const kvp_perf *p, kvp_diag *d) {
  TRY(kvp_perf_check(p, d));
  memset(c, 0, sizeof *c);
  const kvp_deploy *dep = &l->d;
  const kvp_model *m = &dep->model;
  c->p = *p;
  c->tp = dep->tp;
  c->pp = dep->pp;
  c->attn_tp = kvp_attn_tp(dep);
  c->ranks = kvp_dp_ranks(dep);
  /* vLLM's DP engines and SGLang's replicas are more GPUs */
  int64_t engines = dep->vllm.dp > 1 ? dep->vllm.dp : dep->sglang.replicas > 1 ? dep->sglang.replicas : 1;
  if (!chk_mul(dep->tp, dep->pp, &c->gpus) || !chk_mul(c->gpus, engines, &c->gpus))
    return kvp_fail(d, KVP_EOVERFLOW, "tp x pp x data_parallel_size = %lld x %lld x %lld overflows 64 bits",
                    (long long)dep->tp, (long long)dep->pp, (long long)engines);
  int moe = p->experts > 0 && p->expert_share > 0.0;
  /* replicas share nothing: their tokens never meet */
  c->meet = moe && dep->sglang.replicas <= 1 ? c->ranks : 1;
  if ((c->tp > 1 || c->pp > 1) && !(p->link_gbps > 0.0))
    return kvp_fail(d, KVP_EINVAL, "tp %lld x pp %lld needs the GPUs' interconnect: field "
                    "'link_gbps' must be > 0", (long long)c->tp, (long long)c->pp);
  if (c->meet > 1 && !(p->link_gbps > 0.0))
    return kvp_fail(d, KVP_EINVAL, "%lld DP ranks of a MoE model need the GPUs' interconnect: "
                    "field 'link_gbps' must be > 0", (long long)c->meet);
  c->hbm = p->hbm_gbps * 1e9;
  c->peak = p->tflops * 1e12;
  c->bw = p->hbm_gbps * 1e9 * p->mem_eff;
  c->flops = p->tflops * 1e12 * p->flop_eff;
  /* attention: its kernel's own rates where the backend's are published */
  c->attn_bw = p->hbm_gbps * 1e9 * (p->attn_mem_eff > 0.0 ? p->attn_mem_eff : p->mem_eff);
  c->attn_peak = (p->attn_tflops > 0.0 ? p->attn_tflops : p->tflops) * 1e12;
  c->attn_eff = p->flop_eff;
  /* without the backend's rates, attention computes in its inputs' dtype:
   * a KV cache of 16 bits means 16-bit math whatever the weights' format
   * (FlashAttention-2 takes fp16 and bf16 alone: Dao-AILab/flash-attention
   * README.md, "Datatype fp16 and bf16"; FlashInfer and FlashAttention-3
   * run fp8 only on an fp8 KV cache), so not at the GEMMs' fp8/int8/fp4 peak */
  if (!(p->attn_tflops > 0.0) && p->attn16_tflops > 0.0 && dep->kv.bits >= 16) {
    c->attn_peak = p->attn16_tflops * 1e12;
    c->attn_eff = p->attn16_eff;
  }
  /* a sparse-attention indexer's kernel: its fp8 rate where given */
  c->index_flops = (p->index_tflops > 0.0 ? p->index_tflops : p->tflops) * 1e12 * p->flop_eff;
  c->link = p->link_gbps / 2.0 * 1e9 * p->link_eff;
  double tp = (double)dep->tp, atp = (double)c->attn_tp;
  double W = (double)l->weights_total;
  c->weight_bytes = W / tp;
  double params = (double)m->params, active = (double)(m->active > 0 ? m->active : m->params);
  /* FLOPs of all ranks' tokens over all GPUs: per token of the rank / attn_tp */
  if (p->body_flops > 0.0 || p->expert_share > 0.0 || p->idle_share > 0.0) {
    /* the model's split (kvplan.sim step facts) */
    c->active_frac = 1.0;
    c->expert_bytes = moe ? W * p->expert_share * expert_layout(dep, &c->ep_size)
                          : c->weight_bytes * p->expert_share;
    c->dense_bytes = c->weight_bytes * (1.0 - p->expert_share - p->idle_share);
    /* SGLang's attention DP: the attention layers over tp / dp_size */
    if (c->attn_tp != c->tp) c->dense_bytes += W * p->attn_share * (1.0 / atp - 1.0 / tp);
    c->expert_pick = p->experts > 0 ? (double)p->experts_active / (double)p->experts : 0.0;
    c->flops_token = ((p->body_flops > 0.0 ? p->body_flops : 2.0 * active) -
                      (moe ? p->expert_flops : 0.0)) / atp;
    c->expert_flops_tok = moe ? p->expert_flops / atp : 0.0;
  } else {
    c->active_frac = params > 0.0 ? fmin(1.0, active / params) : 1.0;
    c->dense_bytes = c->weight_bytes;
    c->flops_token = 2.0 * active / atp;
  }
  /* the weights every TP rank holds whole (kvp_replicated, the ledger's
   * kvp_vllm_stage_weights) are read whole, not / tp; under SGLang's
   * attention DP left as they were (its attention share is counted apart).
   * Their linear layers (ReplicatedLinear, disable_tp=True: the routers,
   * MLA's a-projections, V3.2's indexer) compute their whole GEMM on every
   * rank: 2 FLOPs a parameter a token, not / tp (vllm-project/vllm
   * vllm/model_executor/models/ deepseek_v2.py at 002d6073aa03, qwen3_moe.py
   * at 002456df36fc, mixtral.py at 005df92da1c0, as models.lua cites) */
  if (c->attn_tp == c->tp) {
    int64_t rep;
    TRY(kvp_deploy_replicated_bytes(dep, l->weights_total, &rep));
    c->dense_bytes += (double)rep * (1.0 - 1.0 / tp);
    if (dep->tp > 1) c->flops_token += 2.0 * (double)dep->replicated.matmul * (1.0 - 1.0 / tp);
  }
  c->head_flops = p->head_flops / atp;
  c->act_tok = p->act_rep_bytes + p->act_split_bytes / atp;
  c->host_seq = p->seq_host_us * 1e-6;
  double eager_us = p->eager_launch_us > 0.0 ? p->eager_launch_us : p->launch_us;
  /* the kernels' launches (the collectives: below) and the loop's own work */
  c->host_step = (p->kernels * p->launch_us + p->loop_host_us) * 1e-6;
  c->host_step_eager = (p->kernels * eager_us + p->loop_host_us) * 1e-6;
  c->host_piece = p->piecewise_kernels * (eager_us - p->launch_us) * 1e-6;
  /* the GPU's floor: each kind of kernel takes at least its count x the
   * floor (the collectives have link_latency_us); an attention call at
   * least its own published minimum where one is given (attn_floor_us: a
   * decode call's split-KV and merge kernels at one short sequence, in place
   * of kernel_floor_us, never added to it) */
  double attn_floor = p->attn_floor_us > 0.0 ? p->attn_floor_us : p->kernel_floor_us;
  c->floor_gemm = p->gemm_kernels * p->kernel_floor_us * 1e-6;
  c->floor_attn = p->attn_kernels * attn_floor * 1e-6;
  /* the activation-quantization kernels (quant_kernels, of the other kernels)
   * at their own published minimum where one is given (quant_floor_us) */
  double quant_floor = p->quant_floor_us > 0.0 ? p->quant_floor_us : p->kernel_floor_us;
  c->floor_other = ((p->kernels - p->gemm_kernels - p->attn_kernels - p->quant_kernels) *
                    p->kernel_floor_us + p->quant_kernels * quant_floor) * 1e-6;
  /* KV terms by window, over every layer of the model */
  int64_t per_spec[KVP_MAX_SPECS] = {0};
  for (int64_t i = 0; i < m->layers; i++) per_spec[m->layer_spec[i]]++;
  int64_t heads_gpu = m->heads / c->attn_tp > 0 ? m->heads / c->attn_tp : 1;
  for (int k = 0; k < m->nspec; k++) {
    if (per_spec[k] == 0) continue;
    const kvp_layer *ly = &m->spec[k];
    double n = (double)per_spec[k];
    if (ly->kind == KVP_STATE) {
      c->state_bytes += n * (double)l->state_bytes[k];
      continue;
    }
    if (ly->kind == KVP_NONE) continue;
    double tok = n * (double)l->token_bits[k] / 8.0;
    if (ly->kind == KVP_CROSS) {
      /* the encoder's K and V, written once at prefill, read whole every step */
      c->state_bytes += tok * (double)ly->window;
      continue;
    }
    int64_t w = (ly->kind == KVP_SLIDING || ly->kind == KVP_CHUNKED) ? ly->window : 0;
    c->write_tok += tok;
    if (ly->kind == KVP_MLA && ly->index_topk > 0) {
      /* DeepSeek Sparse Attention (roofline.c header): the latent and its
       * FLOPs over the top index_topk keys (a window's shape, for time
       * only), the indexer's keys over every key; at most one more term than
       * specs, window 0's (KVP_ROOF_TERMS) */
      int64_t ib;
      TRY(kvp_kv_index_bits(ly, &ib));
      double idx = n * (double)ib / 8.0;
      add_term(c, ly->index_topk, tok - idx, n * attn_per_key(ly, heads_gpu));
      add_term(c, 0, idx, 0.0);
      c->index_key += n * 2.0 * (double)ly->index_heads * (double)ly->index_dim;
      continue;
    }
    add_term(c, w, tok, n * attn_per_key(ly, heads_gpu));
  }
  /* collectives a layer, in bytes a GPU sends per token of its rank */
  double msg = (double)m->hidden * ACT_BYTES, L = (double)m->layers;
  double Lm = moe ? (double)(p->moe_layers > 0 && p->moe_layers <= m->layers ? p->moe_layers
                                                                            : m->layers) : 0.0;
  double Ld = L - Lm, ranks = (double)c->meet;
  int sg_dp = dep->sglang.attn_dp > 1;
  int64_t n_attn = c->attn_tp > 1 ? m->layers : 0; /* the attention's all-reduce */
  c->ar_bytes_tok = (double)n_attn * msg * ring(atp);
  /* the plain TP all-reduces of the rank's own tokens, by message size when
   * an NCCL curve is given (ar_tp_*), and the rest (ar_other_tok) */
  c->ar_msg_tok = msg;
  c->ar_tp_bytes_tok = c->ar_bytes_tok;
  c->ar_tp_count = n_attn;
  int64_t n_mlp = 0;
  /* the dense MLPs: SGLang's attention DP gathers the ranks' tokens (an
   * all-gather: the other ranks' tokens arrive) and all-reduces them over
   * tp; otherwise each rank's own all-reduce over tp */
  if (sg_dp) {
    c->ar_bytes_tok += Ld * msg * ((double)c->ranks - 1.0 + (double)c->ranks * ring(tp));
    c->ar_other_tok += Ld * msg * ((double)c->ranks - 1.0 + (double)c->ranks * ring(tp));
    n_mlp += 2 * (int64_t)Ld;
  } else if (dep->tp > 1) {
    c->ar_bytes_tok += Ld * msg * ring(tp);
    c->ar_tp_bytes_tok += Ld * msg * ring(tp);
    c->ar_tp_count += (int64_t)Ld;
    n_mlp += (int64_t)Ld;
  }
  /* the MoE layers */
  if (Lm > 0.0 && c->ep_size > 1) {
    double k = (double)p->experts_active, ep = (double)c->ep_size;
    c->a2a_bytes_tok = Lm * 2.0 * k * msg * (ep - 1.0) / ep / atp;
    c->a2a_count = 2 * (int64_t)Lm;
  } else if (Lm > 0.0 && sg_dp) {
    c->ar_bytes_tok += Lm * msg * (ranks - 1.0 + ranks * ring(tp));
    c->ar_other_tok += Lm * msg * (ranks - 1.0 + ranks * ring(tp));
    n_mlp += 2 * (int64_t)Lm;
  } else if (Lm > 0.0 && c->meet > 1) {
    double g = tp * ranks; /* vLLM: the experts split over dp x tp GPUs */
    c->ar_bytes_tok += Lm * msg * ranks * ring(g);
    c->ar_other_tok += Lm * msg * ranks * ring(g);
    n_mlp += (int64_t)Lm;
  } else if (Lm > 0.0 && dep->tp > 1) {
    c->ar_bytes_tok += Lm * msg * ring(tp);
    c->ar_tp_bytes_tok += Lm * msg * ring(tp);
    c->ar_tp_count += (int64_t)Lm;
    n_mlp += (int64_t)Lm;
  }
  c->collectives = n_attn + n_mlp + c->a2a_count;
  c->pp_bytes_tok = (double)(dep->pp - 1) * (double)m->hidden * ACT_BYTES;
  /* each collective and hand-off is a kernel of the step too */
  c->host_step += (double)(c->collectives + dep->pp - 1) * p->launch_us * 1e-6;
  c->host_step_eager += (double)(c->collectives + dep->pp - 1) * eager_us * 1e-6;
  /* speculative decoding: the rates of Leviathan et al. (optim.c) */
  c->tokens_per_step = 1.0;
  if (dep->spec.tokens > 0) {
    kvp_spec_rates r;
    TRY(kvp_spec_rates_of(p->acceptance, dep->spec.tokens, &r, d));
    c->spec_tokens = dep->spec.tokens;
    c->tokens_per_step = r.tokens_per_step;
    c->draft_weight_bytes = (double)dep->spec.draft_weight_bytes / tp;
    double bytes_per_param = params > 0.0 ? (double)l->weights_total / params : 2.0;
    c->draft_flops_token = 2.0 * c->draft_weight_bytes / (bytes_per_param > 0 ? bytes_per_param : 2.0);
    c->draft_kv_tok = (double)l->draft_bits / 8.0;
    /* the draft's layers under the target's TP (vLLM V1: a draft model's
     * tensor_parallel_size must be the target's, DraftModelProposer.
     * _raise_if_draft_tp_mismatch, vllm/v1/spec_decode/draft_model.py at
     * 9b849b170a1f; EAGLE's layers are LlamaDecoderLayers built from the
     * target's vllm_config, vllm/model_executor/models/llama_eagle.py at
     * 00da92319af4): each layer's o_proj and down_proj are RowParallelLinear,
     * an all-reduce of the pass's tokens x the draft's hidden x 2 bytes each
     * (vllm/model_executor/models/llama.py at e06c9ba2a6ea), as the target's
     * dense layers: attention's over attn_tp, the MLP's over tp. None when no
     * draft model runs: n-gram lookup (no draft layers) and vLLM's
     * extract_hidden_states, whose one cache-only layer computes nothing
     * (vllm/v1/spec_decode/extract_hidden_states.py at 025cafb6176e) */
    const kvp_spec *sp = &dep->spec;
    if (sp->draft_layers > 0 && !sp->hidden_cache) {
      int64_t per = (c->attn_tp > 1) + (dep->tp > 1);
      if (!chk_mul(sp->draft_layers, per, &c->draft_ar_count))
        return kvp_fail(d, KVP_EOVERFLOW, "speculative.draft_layers %lld x %lld all-reduces "
                        "overflows 64 bits", (long long)sp->draft_layers, (long long)per);
      double h = (double)(sp->draft_hidden > 0 ? sp->draft_hidden : m->hidden);
      c->draft_ar_msg_tok = h * ACT_BYTES;
      c->draft_ar_bytes_tok = (double)sp->draft_layers * c->draft_ar_msg_tok *
                              (ring(atp) + ring(tp));
    }
  }
  return KVP_OK;
}

/* The captured size a batch of n (sequences or tokens) runs at: the
 * smallest of the engine's graph sizes >= n (graphs: kvp_graphs), n itself
 * above them. vLLM V1: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1,
 * 16) (vllm/config/vllm.py VllmConfig._set_cudagraph_sizes at 09f030eaf851;
 * V0's 1, 2, 4 and multiples of 8 to 256, vllm/worker/model_runner.py
 * _BATCH_SIZES_TO_CAPTURE, are the same up to 256); SGLang: 1, 2, 4, 8, 12,
 * 16..256 by 8, 272..496 by 16, 512.. by 32 (server_args.py
 * _generate_cuda_graph_batch_sizes, as predict.c graph_sizes). */
static int64_t graph_size(int32_t graphs, int64_t n) {
  if (n <= 2) return n;
  if (n <= 4) return 4;
  if (graphs == KVP_GRAPHS_SGLANG) {
    if (n <= 8) return 8;
    if (n <= 12) return 12;
    if (n <= 256) return (n + 7) / 8 * 8;
    if (n <= 496) return (n + 15) / 16 * 16;
    if (n <= 512) return 512;
    return 512 + (n - 512 + 31) / 32 * 32;
  }
  if (n <= 256) return (n + 7) / 8 * 8;
  return (n + 15) / 16 * 16;
}

/* Is n one of TensorRT-LLM's captured sizes up to max without padding:
 * list(range(1, 32)) + [32, 64, 128] + the powers of 2 from 256 below max,
 * those above max dropped, max itself added (tensorrt_llm/llmapi/
 * llm_args.py CudaGraphConfig._generate_cuda_graph_batch_sizes with
 * enable_padding False)? */
static int exact_size(int64_t n, int64_t max) {
  if (n < 1 || n > max) return 0;
  if (n == max || n <= 32 || n == 64 || n == 128) return 1;
  return n >= 256 && (n & (n - 1)) == 0;
}

/* The part of one batch's time that depends on its tokens and sequences
 * only (not on its KV or attention): what a step of the same shape as the
 * one before reuses (kvp_step_memo). */
static void step_base(const kvp_cost *c, int64_t tokens, int64_t seqs, int is_long,
                      kvp_step_part *b) {
  memset(b, 0, sizeof *b);
  b->tokens = tokens;
  b->seqs = seqs;
  if (tokens <= 0) return;
  /* CUDA graphs: a step the engine has captured replays its graph, at its
   * batch padded up to the captured size (the padding's tokens run through
   * every GEMM, activation and collective; they read no KV and sample
   * nothing); any other step runs eagerly, each kernel launched from the
   * host (eager_launch_us). A decode-only step is one of 1 + g tokens a
   * sequence. A step whose longest decoding sequence exceeds graph_seq_max
   * (is_long) runs eagerly: vLLM V0's ModelInputForGPUBuilder.
   * _use_captured_graph needs max_decode_seq_len <= max_seq_len_to_capture
   * (vllm/worker/model_runner.py; docs/time.md "CUDA graphs"). */
  int64_t run = tokens;
  int graph = c->p.graphs == KVP_GRAPHS_NONE, piecewise = 0;
  if (c->p.graphs != KVP_GRAPHS_NONE && c->p.graph_max > 0 && !is_long) {
    int64_t per = 1 + c->spec_tokens;
    int decode = tokens == seqs * per;
    if (c->p.graphs == KVP_GRAPHS_TOKENS || c->p.graphs == KVP_GRAPHS_FULL_DECODE) {
      if (tokens <= c->p.graph_max) {
        graph = 1, run = graph_size(c->p.graphs, tokens);
        piecewise = c->p.graphs == KVP_GRAPHS_TOKENS || !decode;
      }
    } else if (c->p.graphs == KVP_GRAPHS_EXACT) {
      graph = decode && exact_size(seqs, c->p.graph_max);
    } else if (decode && seqs <= c->p.graph_max) {
      graph = 1, run = graph_size(c->p.graphs, seqs) * per;
    }
  }
  b->graph = graph && c->p.graphs != KVP_GRAPHS_NONE;
  b->run_tokens = run;
  double t = (double)run;
  /* weights: the dense part whole, the routed experts some token chose */
  double wfrac = c->active_frac >= 1.0 ? 1.0 : -expm1(t * log1p(-c->active_frac));
  /* a MoE layer sees the tokens of every rank (c->meet): the share of the
   * experts some token chose, and the mean tokens each of those gets */
  double tm = t * (double)c->meet, touched = 0.0;
  if (c->expert_pick > 0.0) {
    touched = -expm1(tm * log1p(-c->expert_pick));
    b->tokens_per_expert = touched > 0.0 ? tm * c->expert_pick / touched : 1.0;
  }
  double experts = c->expert_bytes * touched;
  b->weight_bytes = c->dense_bytes * wfrac + experts;
  /* the dense GEMMs at their M (the step's tokens as run, padding included;
   * the logits' M is the sequences they are computed for): the curves'
   * efficiencies, else the flat factors */
  const kvp_perf *p = &c->p;
  double s = (double)seqs;
  double dense_bw = p->gemm_mem.n > 0 ? c->hbm * kvp_curve_at(&p->gemm_mem, t, p->mem_eff) : c->bw;
  double dense_s = c->dense_bytes * wfrac / dense_bw;
  b->write_bytes = (double)tokens * c->write_tok;
  /* a kernel whose M tile is gemm_tile_m computes whole tiles: the layers'
   * GEMMs at the tokens rounded up to it (the logits' GEMM is not the
   * layers' kernel: its M stays the sequences) */
  double tg = p->gemm_tile_m > 0.0 ? ceil(t / p->gemm_tile_m) * p->gemm_tile_m : t;
  double gemm_flops = tg * c->flops_token + s * c->head_flops;
  double expert_flops = t * c->expert_flops_tok;
  b->gemm_flops = gemm_flops + expert_flops;
  /* the sampler's kernels read and write each sampled row's logits */
  b->act = t * c->act_tok + (double)seqs * c->p.sampler_bytes;
  double gemm_comp = gemm_flops / c->flops;
  if (p->gemm_flop.n > 0)
    gemm_comp = tg * c->flops_token / (c->peak * kvp_curve_at(&p->gemm_flop, tg, p->flop_eff)) +
                s * c->head_flops / (c->peak * kvp_curve_at(&p->gemm_flop, s, p->flop_eff));
  /* the routed experts' grouped GEMMs: their own roofline at the datasheet's
   * rates, reached to the fraction the kernel benchmarks measured at this
   * many tokens per expert (kvp_expert_fraction) */
  double expert_mem = experts / c->hbm, expert_comp = expert_flops / c->peak;
  double frac = experts > 0.0 ? kvp_expert_fraction(&c->p, b->tokens_per_expert) : 1.0;
  b->expert_s = experts > 0.0 ? fmax(expert_mem, expert_comp) / frac : 0.0;
  b->weight_s = dense_s + (experts > 0.0 ? expert_mem / frac : 0.0);
  b->gemm_roof = fmax(dense_s, gemm_comp) + b->expert_s;
  b->act_roof = b->act / c->bw;
  /* no kind of kernel runs faster than its kernels' floor */
  b->gemm_s = fmax(b->gemm_roof, c->floor_gemm);
  b->act_s = fmax(b->act_roof, c->floor_other);
  b->gemm_comp = gemm_comp + expert_comp / frac;
  if (c->a2a_count > 0)
    b->a2a_s = t * c->a2a_bytes_tok / c->link + (double)c->a2a_count * c->p.link_latency_us * 1e-6;
  /* the all-reduces by message size (collectives_s, the draft's path too) */
  const coll k = {c->ar_msg_tok, c->ar_bytes_tok, c->ar_tp_bytes_tok, c->ar_other_tok,
                  c->collectives, c->a2a_count, c->ar_tp_count};
  b->comm_s += collectives_s(c, &k, t, b->a2a_s, &b->nccl_s);
  if (c->pp > 1)
    b->comm_s += t * c->pp_bytes_tok / c->link +
                 (double)(c->pp - 1) * c->p.link_latency_us * 1e-6;
  b->host = (graph ? c->host_step + (piecewise ? c->host_piece : 0.0) : c->host_step_eager) +
            (double)seqs * c->host_seq;
  /* the GEMMs' share of the compute-bound kernels (step_finish adds attention's) */
  b->comp_bound = (gemm_comp > dense_s ? b->gemm_roof - b->expert_s : 0.0) +
                  (expert_comp > expert_mem ? b->expert_s : 0.0);
}

/* One batch through the whole model: its shape's part b, then its KV and
 * attention. */
static void step_finish(const kvp_cost *c, const kvp_step_part *b, double kv_read, double attn,
                        double attn_comp, kvp_step *out) {
  memset(out, 0, sizeof *out);
  if (b->tokens <= 0) return;
  out->graph = b->graph;
  out->run_tokens = b->run_tokens;
  out->tokens_per_expert = b->tokens_per_expert;
  out->weight_bytes = b->weight_bytes;
  out->kv_bytes = kv_read + b->write_bytes;
  out->flops = b->gemm_flops + attn;
  /* attention: KV bytes at its kernel's bandwidth, FLOPs at its kernel's
   * rate for each sequence's query tokens (kvp_cost_attn_s) */
  double attn_mem = out->kv_bytes / c->attn_bw;
  double attn_roof = fmax(attn_mem, attn_comp);
  out->expert_s = b->expert_s;
  out->gemm_s = b->gemm_s;
  out->attn_s = fmax(attn_roof, c->floor_attn);
  out->act_s = b->act_s;
  out->floor_s = out->gemm_s - b->gemm_roof + out->attn_s - attn_roof + out->act_s - b->act_roof;
  out->mem_s = c->attn_bw == c->bw ? b->weight_s + (out->kv_bytes + b->act) / c->bw
                                    : b->weight_s + attn_mem + b->act / c->bw;
  out->compute_s = b->gemm_comp + attn_comp;
  out->a2a_s = b->a2a_s;
  out->comm_s = b->comm_s;
  out->nccl_s = b->nccl_s;
  double device = out->gemm_s + out->attn_s + out->act_s + out->comm_s;
  /* an engine that overlaps waits only for the host time beyond the GPU's */
  out->host_s = c->p.host_overlap ? fmax(0.0, b->host - device) : b->host;
  /* bound by compute when the kernels whose FLOPs outlast their bytes take
   * most of the step's device time */
  double comp_bound = b->comp_bound + (attn_comp > attn_mem ? attn_roof : 0.0);
  out->compute_bound = comp_bound > out->gemm_s + out->attn_s + out->act_s - comp_bound;
  out->seconds = device + out->host_s + c->p.step_overhead_ms * 1e-3;
}

void kvp_step_time(const kvp_cost *c, int64_t tokens, int64_t seqs, double kv_read, double attn,
                   kvp_step *out) {
  int64_t q = seqs > 0 ? cdiv(tokens, seqs) : tokens;
  kvp_step_time_s(c, tokens, seqs, kv_read, attn, kvp_cost_attn_s(c, q, attn), out);
}

void kvp_step_time_s(const kvp_cost *c, int64_t tokens, int64_t seqs, double kv_read, double attn,
                     double attn_s, kvp_step *out) {
  /* Pipeline parallelism: the engine keeps pp batches in flight, one a
   * stage (vLLM V1: max_concurrent_batches = pipeline_parallel_size, "PP
   * requires PP-size concurrent batches to fill the pipeline", vllm/config/
   * vllm.py; EngineCore.step_with_batch_queue), so the scheduled sequences
   * split into nb = min(pp, seqs) micro-batches. Each stage runs them in turn
   * and every sequence advances a token once each micro-batch has crossed all
   * stages: the time of one micro-batch through the whole model (its bytes,
   * FLOPs, collectives and hand-offs at 1 / nb of the batch, every stage's
   * weights read once for it). Even micro-batches are assumed; one sequence
   * (a prompt) gains nothing. */
  kvp_step_memo m = {0};
  kvp_step_time_memo(c, &m, tokens, seqs, 0, kv_read, attn, attn_s, out);
}

void kvp_step_time_memo(const kvp_cost *c, kvp_step_memo *m, int64_t tokens, int64_t seqs,
                        int64_t longest, double kv_read, double attn, double attn_s,
                        kvp_step *out) {
  int64_t nb = c->pp > 1 && seqs > 1 ? (seqs < c->pp ? seqs : c->pp) : 1;
  int is_long = c->p.graph_seq_max > 0 && longest > c->p.graph_seq_max;
  if (!m->valid || m->key_tokens != tokens || m->key_seqs != seqs || m->key_long != is_long) {
    /* one micro-batch of nb: its share of the tokens and sequences */
    step_base(c, cdiv(tokens, nb), cdiv(seqs, nb), is_long, &m->part);
    m->key_tokens = tokens;
    m->key_seqs = seqs;
    m->key_long = is_long;
    m->valid = 1;
  }
  if (nb == 1) {
    step_finish(c, &m->part, kv_read, attn, attn_s, out);
    return;
  }
  double f = 1.0 / (double)nb;
  step_finish(c, &m->part, kv_read * f, attn * f, attn_s * f, out);
}

double kvp_draft_time(const kvp_cost *c, int64_t seqs, double mean_context) {
  if (c->spec_tokens == 0 || seqs == 0) return 0.0;
  double s = (double)seqs;
  double bytes = c->draft_weight_bytes + s * c->draft_kv_tok * (mean_context + 1.0);
  double mem = bytes / c->bw, comp = s * c->draft_flops_token / c->flops;
  /* its all-reduces, one token a sequence a pass: the target step's path by
   * message size (collectives_s) */
  const coll k = {c->draft_ar_msg_tok, c->draft_ar_bytes_tok, c->draft_ar_bytes_tok, 0.0,
                  c->draft_ar_count, 0, c->draft_ar_count};
  double nccl, comm = collectives_s(c, &k, s, 0.0, &nccl);
  return (mem > comp ? mem : comp) + comm;
}

kvp_err kvp_time_at(const kvp_cost *c, int64_t context, int64_t concurrency, kvp_time *out) {
  if (context < 1 || concurrency < 1) return KVP_EINVAL;
  memset(out, 0, sizeof *out);
  double b = (double)concurrency;
  int64_t per = 1 + c->spec_tokens, tokens;
  if (!chk_mul(concurrency, per, &tokens)) return KVP_EOVERFLOW;
  /* every sequence at `context` tokens before the step: vLLM V0's seq_len
   * of a decode counts the token it decodes (context + 1) */
  /* the attention kernels' FLOPs at their rate, the indexers' at theirs */
  double kv = b * kvp_cost_kv_read(c, context), attn = b * kvp_cost_attn_kernels(c, context, per);
  double index = b * kvp_cost_index(c, context, per);
  double attn_s = kvp_cost_attn_s(c, per, attn) + (index > 0.0 ? index / c->index_flops : 0.0);
  attn += index;
  kvp_step_memo m = {0};
  int64_t longest = context < INT64_MAX ? context + 1 : context;
  kvp_step_time_memo(c, &m, tokens, concurrency, longest, kv, attn, attn_s, &out->decode);
  double step = out->decode.seconds + (double)c->spec_tokens *
                kvp_draft_time(c, concurrency, (double)context);
  double e = c->tokens_per_step;
  out->tpot_s = step / e;
  out->tokens_per_s = b * e / step * (double)c->ranks; /* every DP rank */
  out->steps_per_token = 1.0 / e;
  out->kv_writes_per_token = (double)per / e;
  out->kv_write_bytes_per_token = (c->write_tok * (double)per +
                                   c->draft_kv_tok * (double)c->spec_tokens) / e;
  double all = out->decode.weight_bytes + out->decode.kv_bytes;
  out->kv_read_share = all > 0.0 ? out->decode.kv_bytes / all : 0.0;
  out->compute_bound = out->decode.compute_bound;
  /* the prompt as the simulator's step charges a scheduled sequence of no
   * computed tokens (sim.c run_step: kvp_cost_kv_read at q->computed): its
   * fixed per-sequence read, the recurrent states and cross-attention caches
   * (state_bytes), which a prefill step moves as a decode step does (vLLM's
   * MambaMixer2 writes each prompt's final state, ssm_state[
   * state_indices_tensor_p] = varlen_state, vllm/model_executor/layers/mamba/
   * mamba_mixer2.py); it read none before (issue 18, time paths) */
  double pattn, pattn_s = kvp_cost_attn_secs(c, 0, context, &pattn);
  kvp_step_time_s(c, context, 1, kvp_cost_kv_read(c, 0), pattn, pattn_s, &out->prefill);
  out->ttft_s = out->prefill.seconds;
  if (c->p.price_per_hour > 0.0)
    out->usd_per_mtok = c->p.price_per_hour * (double)c->gpus / 3600.0 / out->tokens_per_s * 1e6;
  if (!isfinite(out->tpot_s) || !isfinite(out->tokens_per_s) || !isfinite(out->ttft_s))
    return KVP_EOVERFLOW;
  /* a finite price can still give dollars past the largest double
   * (price_per_hour=1e308): an overflow, not inf in a report */
  if (!isfinite(out->usd_per_mtok)) return KVP_EOVERFLOW;
  return KVP_OK;
}
