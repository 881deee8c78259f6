/*
 * roofline.h: time, not only memory: the roofline time of one engine step
 * (roofline.c). Pure computation: no Lua, no I/O. Included by kvplan.h.
 *
 * A step processes `tokens` tokens of `seqs` sequences (decode: one per
 * running sequence, or g + 1 under speculative decoding; prefill: a prompt
 * chunk) on one GPU of the TP group. Its time is a sum over the kinds of
 * kernel it runs, each bound by its own bytes or its own FLOPs:
 *
 *     max(weight bytes / bandwidth, GEMM FLOPs / peak, GEMMs x floor)    the linear layers
 *   + max(KV bytes / bandwidth, attention FLOPs / peak, attentions x floor)
 *   + max(activation and sampler bytes / bandwidth, other kernels x floor)
 *   + tensor-parallel all-reduces + pipeline hand-offs
 *   + host time the engine does not overlap with the GPU     graph or eager launches,
 *                                                            bookkeeping
 *   + a fixed overhead
 *
 * (floor: kernel_floor_us, the GPU time a kernel takes at least; an attention
 * call's attn_floor_us and an activation-quantization kernel's quant_floor_us
 * where given). A step
 * the engine captured as a CUDA graph (kvp_graphs) runs at its batch padded
 * up to the captured size; any other launches each kernel from the host
 * (eager_launch_us).
 *
 * (bandwidth and peak derated by mem_eff and flop_eff; the linear layers'
 * by the curves gemm_mem and gemm_flop at the step's tokens M when given:
 * kernel benchmarks measure a GEMM's efficiency as a function of M). Taking one max over
 * the whole step would hide attention's memory time behind the GEMMs'
 * compute in a large decode batch; the kernels run one after another.
 *
 * Pipeline stages hold proportional shares of the layers, so a batch's
 * pass through them is the whole model's time at 1 / tp of each GPU's
 * share, plus pp - 1 activation transfers; the engine keeps min(pp, seqs)
 * micro-batches in flight, so a step of all scheduled sequences takes one
 * micro-batch's pass (kvp_step_time).
 *
 * Bound or estimate: with mem_eff = flop_eff = link_eff = 1 and no
 * overhead or host time the step time is a lower bound on any engine's (a
 * roofline); with the default factors it is an estimate.
 */
#ifndef KVP_ROOFLINE_H
#define KVP_ROOFLINE_H

#include <stdint.h>

/* Points of a curve an efficiency follows over a GEMM's M (its tokens). */
#define KVP_CURVE_PTS 12

/* An efficiency as a function of a GEMM's M: n points (m[i], e[i]) with m
 * strictly increasing from 1, e in (0, 1]; between points linear in log m,
 * outside them the nearest point's (clamped). n = 0: no curve, the flat
 * factor instead. */
typedef struct kvp_curve {
  int32_t n;
  double m[KVP_CURVE_PTS];
  double e[KVP_CURVE_PTS];
} kvp_curve;
/* Points of a routed-expert efficiency curve (kvp_perf.expert_tpe). */
#define KVP_EXPERT_POINTS 48
/* Points of an NCCL AllReduce bus-bandwidth curve (kvp_perf.nccl_bytes). */
#define KVP_NCCL_POINTS 40

/* One GPU kind's rates and the efficiency factors applied to them. */
typedef struct kvp_perf {
  double hbm_gbps;         /* HBM bandwidth of one GPU, GB/s (1e9 bytes/s) */
  double tflops;           /* dense peak of one GPU in the compute format, TFLOP/s */
  double link_gbps;        /* GPU-GPU interconnect, total bidirectional GB/s (0: none) */
  double mem_eff;          /* achievable fraction of hbm_gbps, (0, 1] */
  double flop_eff;         /* achievable fraction of tflops, (0, 1] */
  double link_eff;         /* achievable fraction of link_gbps, (0, 1] */
  double expert_eff;       /* achievable fraction of the routed experts' roofline (their
                            * grouped GEMMs: max(bytes / hbm_gbps, FLOPs / tflops)) at any
                            * tokens per expert, (0, 1]; 0: expert_frac by tokens per
                            * expert when expert_points > 0, else mem_eff */
  int32_t expert_points;   /* points of the curve below, 0 .. KVP_EXPERT_POINTS */
  double expert_tpe[KVP_EXPERT_POINTS];  /* tokens per expert touched, increasing, >= 1 */
  double expert_frac[KVP_EXPERT_POINTS]; /* the fraction of the roofline measured there,
                            * (0, 1]; interpolated in log tokens, clamped outside */
  double expert_flops;     /* of body_flops, the routed experts' FLOPs a token (2 x the
                            * parameters of the k experts a token uses, every MoE layer) */
  double link_latency_us;  /* fixed time of one collective, microseconds (>= 0) */
  double step_overhead_ms; /* fixed time of every step, milliseconds (>= 0) */
  double acceptance;       /* speculative decoding: acceptance rate in [0, 1) */
  double price_per_hour;   /* USD per GPU hour (0: no price) */
  /* host time of a step: the engine's work between GPU steps */
  double launch_us;        /* per kernel of the step (CUDA graph replay), microseconds */
  double seq_host_us;      /* per scheduled sequence (bookkeeping), microseconds */
  double loop_host_us;     /* per step, whatever it runs: the engine loop's own host work
                            * beyond its launches (scheduling, input preparation, output
                            * processing), microseconds */
  int32_t host_overlap;    /* 1: the engine prepares the next step while the GPU runs
                            * this one, so the step takes max(GPU, host), else the sum */
  /* what a step of the model reads and computes beyond the ledger (all of
   * them 0: every weight read, 2 x active parameters FLOPs a token) */
  double expert_share;     /* routed experts' share of the weight bytes, [0, 1) */
  double idle_share;       /* share no text step reads (an untied embedding table
                            * beyond the rows it gathers, a vision tower), [0, 1) */
  double body_flops;       /* FLOPs a token in the layers, whole model (2 x active
                            * parameters of the layers), >= 0 */
  double head_flops;       /* FLOPs of the logits of one sampled row (2 x vocab x hidden) */
  double act_rep_bytes;    /* activation bytes a token moves on every GPU of the TP group
                            * (norms, residuals, the hidden-sized GEMM ends), whole model */
  double act_split_bytes;  /* activation bytes a token moves split over tp (rotary, the
                            * MLP's activation, the head- and intermediate-sized ends) */
  double kernels;          /* kernels a step launches (layers and head; the core adds
                            * the all-reduces and pipeline hand-offs) */
  int64_t experts;         /* routed experts a MoE layer chooses from (0: dense) */
  int64_t experts_active;  /* of which a token uses */
  int64_t moe_layers;      /* layers whose MLP is the routed experts (0: every layer, when
                            * experts > 0) */
  double attn_share;       /* the attention layers' share of the weight bytes, [0, 1): split
                            * over tp / dp_size under SGLang's attention DP */
  /* fixed costs of the GPU's kernels (all 0: none, as before) */
  double kernel_floor_us;  /* GPU time a kernel takes at least, even replayed in a CUDA
                            * graph, microseconds: each kind of kernel takes at least its
                            * count x this */
  double gemm_kernels;     /* of kernels: the linear layers' GEMMs (the logits' included) */
  double attn_kernels;     /* of kernels: attention's (one a layer) */
  double attn_floor_us;    /* GPU time one attention call (one a layer: its decode and merge
                            * kernels) takes at least, microseconds, in place of
                            * kernel_floor_us; 0: kernel_floor_us */
  double quant_kernels;    /* of kernels: the activation-quantization kernels ahead of the
                            * linear layers (vLLM V0's fp8 W8A8 linear layers: one before
                            * each GEMM), counted among the other kernels */
  double quant_floor_us;   /* GPU time one of them takes at least, microseconds, in place
                            * of kernel_floor_us; 0: kernel_floor_us */
  double sampler_bytes;    /* bytes the sampler's kernels move for one sampled row (its
                            * fp32 logits), added to the activation kernels */
  /* CUDA graphs (graphs = KVP_GRAPHS_NONE: not modelled, every step at launch_us) */
  int32_t graphs;          /* which steps replay a captured graph: kvp_graphs */
  int64_t graph_max;       /* the largest captured size (sequences or tokens, by graphs);
                            * 0 with graphs modelled: none captured, every step eager */
  double eager_launch_us;  /* host time of one kernel launched without a graph (eager),
                            * microseconds; 0: launch_us */
  int64_t graph_seq_max;   /* the longest sequence a graph step may hold: a step whose
                            * longest decoding sequence (its tokens with the one decoded,
                            * prompt and output) exceeds it runs eagerly (vLLM V0's
                            * max_seq_len_to_capture); 0: no limit */
  /* the linear layers' (dense GEMMs') efficiencies by the GEMM's M, in place
   * of mem_eff for the weights they read and of flop_eff for their FLOPs
   * (n = 0: the flat factors); attention, activations and routed experts
   * keep their own factors */
  kvp_curve gemm_mem;      /* fraction of hbm_gbps the weights are read at, by M */
  kvp_curve gemm_flop;     /* fraction of tflops the GEMMs reach, by M */
  double gemm_tile_m;      /* the dense GEMMs' M tile (issue 18): their tensor-core work is
                            * of the step's tokens rounded up to a multiple of it (a kernel
                            * whose smallest block is 64 rows computes 64 rows for one
                            * token); the weights' bytes are the same; 0: the tokens as run */
  double piecewise_kernels;/* of kernels: those a piecewise graph step launches outside its
                            * graphs, eagerly (vLLM V1: each layer's KV cache write and
                            * attention) */
  /* the attention kernel's own rates (the backend's published benchmarks;
   * all 0: the present rule, KV at mem_eff and FLOPs at tflops x flop_eff) */
  double attn_tflops;      /* the dense rate attention computes at, TFLOP/s (0: tflops) */
  double attn_mem_eff;     /* fraction of hbm_gbps attention's KV reads reach, (0, 1]; 0: mem_eff */
  kvp_curve attn_flop;     /* fraction of attn_tflops attention reaches by a sequence's query
                            * tokens in the step (n = 0: flop_eff) */
  /* attention without published rates computes in its inputs' dtype: with a
   * KV cache of 16 bits or more, at the GPU's 16-bit peak, not at the
   * weights' 8- or 4-bit one (0: tflops and flop_eff, as the GEMMs) */
  double attn16_tflops;    /* the GPU's dense bf16 (else fp16) rate, TFLOP/s */
  double attn16_eff;       /* its compute factor, (0, 1] when attn16_tflops > 0 */
  /* a sparse-attention indexer's scores (DeepSeek-V3.2: DeepGEMM's fp8 MQA-logits
   * kernels) at the GPU's fp8 rate, at flop_eff (0: tflops) */
  double index_tflops;     /* TFLOP/s */
  /* the tensor-parallel all-reduces by message size and engine path (nccl_points = 0:
   * every all-reduce at link_gbps / 2 x link_eff plus link_latency_us, whatever its size) */
  int32_t nccl_points;     /* points of the curve below, 0 .. KVP_NCCL_POINTS */
  double nccl_bytes[KVP_NCCL_POINTS]; /* message bytes, increasing, >= 1 */
  double nccl_busbw[KVP_NCCL_POINTS]; /* NCCL AllReduce bus bandwidth measured there, GB/s
                            * (nccl-tests busbw: bytes x 2 (n - 1) / n over the measured
                            * time, its fixed cost included), > 0; interpolated in log
                            * bytes, clamped outside */
  double ar_custom_below;  /* messages of fewer bytes than this run the engine's own all-reduce
                            * kernel (link rate and link_latency_us); the others NCCL at the
                            * curve's busbw; 0: every message NCCL */
} kvp_perf;

/* Which steps run as a replayed CUDA graph, padded to the next captured
 * size, and which eagerly (roofline.c graph_size). */
typedef enum kvp_graphs {
  KVP_GRAPHS_NONE = 0,   /* not modelled: every step launch_us a kernel, no padding */
  KVP_GRAPHS_DECODE = 1, /* decode-only steps of at most graph_max sequences (vLLM V0's
                          * sizes 1, 2, 4, 8, 16, ..., 256) */
  KVP_GRAPHS_TOKENS = 2, /* steps of at most graph_max tokens, decode or not, as piecewise
                          * graphs around the piecewise_kernels launched eagerly (vLLM V1's
                          * PIECEWISE mode; sizes 1, 2, 4, 8..248 by 8, 256.. by 16) */
  KVP_GRAPHS_SGLANG = 3, /* decode-only steps of at most graph_max sequences (SGLang's
                          * sizes 1, 2, 4, 8, 12, 16..256 by 8, 272..496 by 16, 512.. by 32) */
  KVP_GRAPHS_FULL_DECODE = 4, /* as KVP_GRAPHS_TOKENS, but a decode-only step replays one full
                          * graph, attention inside (vLLM V1's FULL_AND_PIECEWISE mode) */
  KVP_GRAPHS_EXACT = 5   /* decode-only steps whose sequences are one of the captured sizes,
                          * no padding: 1..32, 64, 128, the powers of 2 from 256 below
                          * graph_max, and graph_max (TensorRT-LLM's PyTorch backend) */
} kvp_graphs;

#define KVP_ROOF_TERMS (KVP_MAX_SPECS + 1)

/* What a step costs, per token and per sequence, on one GPU of the TP
 * group, derived once from a ledger and a kvp_perf (kvp_cost_init). */
typedef struct kvp_cost {
  kvp_perf p;
  int64_t tp, pp, gpus;       /* gpus: the whole deployment's (vLLM: tp x pp x dp) */
  int64_t attn_tp;            /* attention TP size (SGLang's attention DP: tp / dp_size) */
  int64_t ranks;              /* DP ranks, each its own requests (kvp_dp_ranks) */
  int64_t meet;               /* ranks whose tokens meet in every MoE layer (ranks for a MoE
                               * model, else 1): the ranks step together */
  int64_t ep_size;            /* ranks holding whole experts (0: experts split over TP) */
  double bw, flops, link;     /* effective bytes/s, FLOP/s, one-way link bytes/s */
  double hbm, peak;           /* the datasheet's bytes/s and FLOP/s (the GEMM curves' and
                               * the routed experts' base) */
  double attn_bw, attn_peak;  /* attention: effective KV bytes/s; FLOP/s before its curve */
  double attn_eff;            /* attention's compute factor without a curve (flop_eff, or
                               * attn16_eff at the 16-bit peak) */
  double expert_flops_tok;    /* FLOPs a token of the rank in the routed experts on one GPU */
  double weight_bytes;        /* target weights on one GPU (whole model / tp) */
  double active_frac;         /* active / total parameters (1: dense) */
  double flops_token;         /* FLOPs a token of the layers on one GPU */
  double head_flops;          /* FLOPs of one sampled row's logits on one GPU */
  double dense_bytes;         /* weights every step reads on one GPU (not routed experts) */
  double expert_bytes;        /* all routed experts' weights on one GPU */
  double expert_pick;         /* experts_active / experts: a token's share of them */
  double act_tok;             /* activation bytes one token moves on one GPU */
  double host_seq;            /* seconds of host time a scheduled sequence adds */
  double host_step;           /* seconds of host time every step adds (its kernels) */
  double host_step_eager;     /* the same when the step runs without a graph */
  double host_piece;          /* more in a piecewise graph step: its piecewise kernels
                               * launched eagerly */
  double floor_gemm, floor_attn, floor_other; /* seconds the kinds of kernel take at least
                                               * (kernel_floor_us x their counts) */
  int32_t nterm;              /* KV terms: (bytes per token, FLOPs per key, window) */
  double kv_tok[KVP_ROOF_TERMS];
  double attn_key[KVP_ROOF_TERMS]; /* attention FLOPs per (query, key) pair */
  int64_t window[KVP_ROOF_TERMS];  /* 0: every key; else the last `window` */
  double index_key;           /* sparse-attention indexers' FLOPs per (query, key) pair on one
                               * GPU, every key of the prefix (roofline.c) */
  double index_flops;         /* their kernel's FLOP/s (index_tflops x flop_eff) */
  double state_bytes;         /* fixed read per sequence: recurrent states and
                               * cross-attention caches of the encoder's tokens */
  double write_tok;           /* KV bytes one token writes */
  double ar_bytes_tok;        /* all-reduce and all-gather bytes a GPU sends per token of its
                               * rank (ring all-reduce: 2 (n - 1) / n of the message) */
  double ar_tp_bytes_tok;     /* of which the plain tensor-parallel all-reduces of the rank's
                               * own tokens (attention's, and the MLP's without DP): the ones
                               * priced by message size when the perf has an NCCL curve */
  double ar_other_tok;        /* the rest of ar_bytes_tok (DP gathers and all-reduces) */
  int64_t ar_tp_count;        /* of collectives, the plain tensor-parallel all-reduces */
  double ar_msg_tok;          /* bytes of one of them per token (hidden x 2) */
  double a2a_bytes_tok;       /* expert parallelism: all-to-all bytes (dispatch + combine) a
                               * GPU sends per token of its rank */
  int64_t collectives;        /* collectives per step (2 per layer when tp > 1), all-to-alls
                               * included */
  int64_t a2a_count;          /* of which all-to-alls (2 per MoE layer under EP) */
  double pp_bytes_tok;        /* activation bytes per token per stage hand-off */
  /* speculative decoding (g = spec_tokens > 0) */
  int64_t spec_tokens;
  double tokens_per_step;     /* E = (1 - a^(g+1)) / (1 - a); 1 without */
  double draft_weight_bytes;  /* draft weights on one GPU */
  double draft_flops_token;   /* 2 x draft parameters / tp (estimated from bytes) */
  double draft_kv_tok;        /* draft KV bytes per token of context */
  int64_t draft_ar_count;     /* the tensor-parallel all-reduces of one draft pass: after each
                               * draft layer's attention and MLP (0: no draft model runs) */
  double draft_ar_msg_tok;    /* bytes of one of them per token (the draft's hidden x 2) */
  double draft_ar_bytes_tok;  /* bytes a GPU sends per token in all of them (ring) */
} kvp_cost;

/* The time of one step and where it goes. */
typedef struct kvp_step {
  double seconds;      /* the step */
  double mem_s;        /* all bytes / effective bandwidth */
  double compute_s;    /* all FLOPs / effective FLOP/s */
  double gemm_s;       /* the linear layers: max(weight bytes, GEMM FLOPs) */
  double attn_s;       /* attention: max(KV bytes, attention FLOPs) */
  double act_s;        /* activation bytes / effective bandwidth */
  double comm_s;       /* all-reduces, all-to-alls and pipeline hand-offs */
  double nccl_s;       /* of which the tensor-parallel all-reduces NCCL ran, at the curve's
                        * bus bandwidth at their message size (0: none) */
  double a2a_s;        /* of which the MoE layers' all-to-alls (expert parallelism) */
  double expert_s;     /* of gemm_s, the routed experts: their roofline / the fraction of it
                        * the grouped GEMMs reach at the step's tokens per expert */
  double tokens_per_expert; /* mean tokens an expert some token chose gets (0: dense) */
  double host_s;       /* host time the GPU waits for (overlapped: what exceeds the GPU's) */
  double floor_s;      /* what the kernels' GPU floor added to gemm_s, attn_s and act_s */
  int64_t run_tokens;  /* tokens the step computed: padded up to its graph's size */
  int graph;           /* 1: replayed a CUDA graph; 0: eager (or graphs not modelled) */
  double weight_bytes, kv_bytes, flops;
  int compute_bound;   /* 1 when kernels bound by their FLOPs take most of the time */
} kvp_step;

/* Check a kvp_perf: rates finite and > 0 (link >= 0), efficiencies in
 * (0, 1], latencies, host times, FLOPs, bytes, kernels and price >= 0,
 * shares in [0, 1) and together below 1, acceptance in [0, 1), experts_active
 * in [1, experts] when experts > 0, each curve's points as kvp_curve says. */
kvp_err kvp_perf_check(const kvp_perf *p, kvp_diag *d);
/* Curve c at M = m (interpolated in log m, clamped outside its points), or
 * flat when c has no points. */
double kvp_curve_at(const kvp_curve *c, double m, double flat);
/* Derive the per-token and per-sequence costs of an evaluated ledger. */
kvp_err kvp_cost_init(kvp_cost *c, const kvp_ledger *l, const kvp_perf *p, kvp_diag *d);

/* The ledger's time answers at (context, concurrency). */
typedef struct kvp_time {
  double tpot_s;         /* time per output token of one sequence */
  double ttft_s;         /* the context as one prompt, one prefill step */
  double tokens_per_s;   /* output tokens per second of the deployment: every DP rank at
                          * `concurrency` sequences */
  double kv_read_share;  /* KV bytes / all bytes of the decode step */
  double usd_per_mtok;   /* price x GPUs / tokens, per million (0: no price) */
  double steps_per_token;/* target steps per output token (1 / E) */
  double kv_writes_per_token; /* target KV positions written per output token */
  double kv_write_bytes_per_token; /* KV bytes written per output token, draft's included */
  int compute_bound;     /* the decode step */
  kvp_step decode, prefill;
} kvp_time;

/* Decode of `concurrency` sequences at `context` tokens, each step one
 * token each (g + 1 verified with speculative decoding, E kept on average,
 * plus g draft passes); prefill of one prompt of `context` tokens. */
/* KVP_EOVERFLOW when a figure is not finite; the times are filled first, so a
 * caller whose tpot_s, tokens_per_s and ttft_s are finite knows it was
 * usd_per_mtok (the price). */
kvp_err kvp_time_at(const kvp_cost *c, int64_t context, int64_t concurrency, kvp_time *out);

#endif
