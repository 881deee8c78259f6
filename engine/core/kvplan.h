/*
 * kvplan.h: the public interface of the kvplan core (what the binding, the
 * program and the installed library's users see; what the core's files offer
 * one another only is in core.h and vllm_kv.h, not installed).
 * Pure computation: no Lua, no I/O, no printing, no exit.
 *
 * Exact quantities (bytes, bits, tokens, blocks, requests) are int64_t and every
 * operation that could overflow is checked: overflow is KVP_EOVERFLOW, never a
 * wrapped number. Doubles appear only for ratios (utilization) and human units.
 */
#ifndef KVPLAN_H
#define KVPLAN_H

#include <stddef.h>
#include <stdint.h>

#define KVPLAN_VERSION "0.1.0"

/* ---- errors ------------------------------------------------------------ */

typedef enum kvp_err {
  KVP_OK = 0,
  KVP_EINVAL,     /* an input is outside its domain (the diag names it) */
  KVP_EOVERFLOW,  /* a result does not fit in 64 bits */
  KVP_ENOMEM,
  KVP_EIO
} kvp_err;

/* Optional detail for an error: a lowercase message naming the field, its
 * value and what was expected. Functions taking a kvp_diag * accept NULL. */
typedef struct kvp_diag {
  char msg[256];
} kvp_diag;

const char *kvp_strerror(kvp_err e);
/* v as an error message shows a user's number with %g: a NaN without its sign
 * bit, so it prints "nan" (glibc prints "-nan" for the NaN that x86 makes of
 * 0/0), infinities "inf" and "-inf"; the binding's messages use it too. */
double kvp_shown(double v);

/* ---- storage formats (format.c) ---------------------------------------- */

/* How a tensor is stored: `bits` per element plus, for every `group`
 * consecutive elements, one scale of `scale_bits` and one zero point of
 * `zero_bits`. group == 0 means no per-group metadata (a per-tensor scale,
 * kept outside the cache, costs nothing per element). */
typedef struct kvp_format {
  int32_t bits;
  int32_t group;
  int32_t scale_bits;
  int32_t zero_bits;
  int32_t rope_bits;  /* MLA: bits of each rope element, stored apart from the latent
                       * and its groups (vLLM fp8_ds_mla: bf16); 0: in the format */
  int32_t tq_key_bits;   /* vLLM TurboQuant (kv_cache_dtype turboquant_*): key bits
                          * (8: fp8 keys; 3-4: Lloyd-Max indices and an fp16 norm);
                          * 0: not TurboQuant */
  int32_t tq_value_bits; /* TurboQuant value bits (uniform, fp16 scale and zero) */
  int32_t group2;        /* double quantization: every `group2` groups' scales are
                          * themselves quantized and share one second-level scale
                          * of `scale2_bits` (bitsandbytes' nested absmax: 256
                          * 8-bit absmax values a fp32 one); 0: one level */
  int32_t scale2_bits;
  int32_t tensor_bits;   /* a weight format's bits a matrix (NVFP4: the fp32 global and
                          * input scales of each output shard) and ... */
  int32_t col_bits;      /* ... bits an input column of a linear layer (GPTQ act order:
                          * the int32 g_idx and its sort indices), counted over the
                          * model's linear_shards and linear_cols by
                          * kvp_deploy_weight_bytes; not in a tensor's bits
                          * (kvp_format_bits) nor in a KV cache */
} kvp_format;

#define KVP_FORMAT_MAX_BITS 64

kvp_err kvp_format_check(const kvp_format *f, const char *field, kvp_diag *d);
/* Bytes of a tensor of n elements, rounded up once: ceil(bits / 8). */
kvp_err kvp_format_bytes(const kvp_format *f, int64_t n, int64_t row, int64_t *bytes);
/* Bytes of n weight elements of f plus f's tensor bits a matrix over
 * `shards` matrices and col bits an input column over `cols` input columns,
 * rounded up once (a model's or a weight class's weights); KVP_EINVAL for a
 * negative count, KVP_EOVERFLOW. */
kvp_err kvp_format_weight_bytes(const kvp_format *f, int64_t n, int64_t shards, int64_t cols,
                                int64_t *bytes);
/* Effective bits per element in millibits (4156 for int4 g128 + fp16 scale
 * + 4-bit zero), for display. */
int64_t kvp_format_millibits(const kvp_format *f);

/* ---- model description (model.c) -------------------------------------- */

typedef enum kvp_kind {
  KVP_FULL = 0,   /* full attention (MHA, GQA, MQA) */
  KVP_SLIDING,    /* sliding window of `window` tokens */
  KVP_CHUNKED,    /* chunked local attention, chunks of `window` tokens */
  KVP_MLA,        /* latent attention: (latent + rope_dim) elements a token */
  KVP_STATE,      /* recurrent layer: a fixed state per sequence */
  KVP_NONE,       /* holds no KV */
  KVP_CROSS,      /* cross-attention of an encoder-decoder model: K and V of the
                   * `window` encoder tokens, cached once per request whatever
                   * its length (vLLM CrossAttentionSpec) */
  KVP_NKINDS
} kvp_kind;

const char *kvp_kind_name(kvp_kind k);

/* One layer's KV shape. Unused fields are 0. */
typedef struct kvp_layer {
  kvp_kind kind;
  int64_t kv_heads;     /* attention: KV heads; state: TP-shardable heads (>= 1) */
  int64_t head_dim;     /* K head dimension */
  int64_t head_dim_v;   /* V head dimension (often = head_dim) */
  int64_t window;       /* sliding window W or local chunk C, tokens; cross-attention:
                         * the encoder tokens a request caches */
  int64_t latent;       /* MLA: kv_lora_rank */
  int64_t rope_dim;     /* MLA: qk_rope_head_dim */
  int64_t state_bytes;  /* state: bytes per sequence, whole layer, TP 1 */
  int64_t index_dim;    /* MLA: head dim of a sparse-attention indexer whose keys are
                         * cached beside the latent (DeepSeek-V3.2 index_head_dim;
                         * kv.c); 0: none */
  int64_t index_heads;  /* MLA with an indexer: its query heads (DeepSeek-V3.2
                         * index_n_heads), whole on every rank; time only */
  int64_t index_topk;   /* MLA with an indexer: the keys each query token attends to,
                         * the top index_topk by the indexer's score (DeepSeek-V3.2
                         * index_topk); time only, the cache holds every token; 0: dense */
  int64_t kv_auto;      /* 1: the layer keeps the model dtype (16 bits) whatever the
                         * KV format (vLLM kv_cache_dtype_skip_layers under
                         * TurboQuant, set by kvp_vllm_turboquant; the hidden-state
                         * cache of extract_hidden_states); 0: the KV format */
  int64_t sink;         /* full attention: static sink tokens (vLLM sink_len,
                         * SinkFullAttentionSpec): their blocks are taken from the
                         * pool once per KV cache group of such layers; 0: none */
} kvp_layer;

#define KVP_MAX_LAYERS 1024
#define KVP_MAX_SPECS 16

/* An architecture. Layers refer to a small table of distinct layer shapes
 * (`spec`), so that a 62-layer Gemma 3 with 5 local layers per global layer
 * holds two specs and a 62-entry index. */
typedef struct kvp_model {
  int64_t layers;
  int64_t hidden;
  int64_t heads;         /* attention (query) heads */
  int64_t params;        /* total parameters (MoE: all experts) */
  int64_t active;        /* parameters used per token (MoE); = params if dense */
  int64_t max_context;   /* max_position_embeddings; 0 = unknown */
  int64_t linear_shards; /* the matrices of its linear layers as a checkpoint stores
                          * them (q, k, v, o; gate, up, down; each expert's; lm_head) */
  int64_t linear_cols;   /* their input columns as the engine builds the layers
                          * (merged layers counted once: stdlib models.lua
                          * class_shapes); both 0 when not given */
  int32_t nspec;
  kvp_layer spec[KVP_MAX_SPECS];
  uint8_t layer_spec[KVP_MAX_LAYERS];
} kvp_model;

/* A model of `layers` identical full-attention layers (kv_heads == heads is MHA). */
kvp_err kvp_model_init(kvp_model *m, int64_t layers, int64_t hidden, int64_t heads,
                       int64_t kv_heads, int64_t head_dim, kvp_diag *d);
/* Lay a cyclic pattern of runs over the layers: run i covers counts[i]
 * consecutive layers with shape runs[i]; the pattern repeats, and is cut,
 * until every layer has a shape. Identical shapes share one spec. */
kvp_err kvp_model_set_pattern(kvp_model *m, const kvp_layer *runs,
                              const int64_t *counts, int nruns, kvp_diag *d);
kvp_err kvp_model_check(const kvp_model *m, kvp_diag *d);
/* Layers of each kind (counts[KVP_NKINDS]). */
void kvp_model_kind_counts(const kvp_model *m, int64_t counts[KVP_NKINDS]);

/* ---- KV accounting (kv.c) ---------------------------------------------- */

/* KV heads one GPU holds under tensor parallelism: max(1, kv_heads / tp),
 * heads replicated when tp exceeds them (vLLM get_num_kv_heads). */
int64_t kvp_kv_heads_per_gpu(int64_t kv_heads, int64_t tp);

/* Bits one token adds to one layer of shape l on one GPU at tensor-parallel
 * degree tp (MLA: the latent, replicated on every rank; state, none: 0). */
kvp_err kvp_kv_token_bits(const kvp_layer *l, const kvp_format *kv, int64_t tp,
                          int64_t *bits);
/* Bytes of the KV cache of one sequence of n tokens on one GPU holding the
 * layers [first, first + count), unpaged: every layer's tensor rounded up
 * once (windows cap the tokens; states are fixed). */
kvp_err kvp_kv_seq_bytes(const kvp_model *m, const kvp_format *kv, int64_t tp,
                         int64_t first, int64_t count, int64_t n, int64_t *bytes);

/* ---- the inputs of vLLM's profiled reserves (predict.c) ---------------- */

/* The shape facts the activation model reads beyond kvp_model (config.json). */
typedef struct kvp_shape {
  int64_t hidden, heads, kv_heads, head_dim;
  int64_t intermediate;        /* dense MLP width (0: none) */
  int64_t vocab;
  int64_t experts, experts_active, moe_intermediate;  /* MoE (0: dense) */
  int64_t shared_intermediate; /* shared experts' MLP width (0: none) */
  int64_t dense_layers;        /* dense MLP layers of a MoE model (first_k_dense) */
  int64_t mla_latent, mla_rope;/* MLA: kv_lora_rank, qk_rope_head_dim (0: not MLA) */
} kvp_shape;

/* The engine's profiling run on one GPU. */
typedef struct kvp_profile {
  int64_t tokens;              /* max_num_batched_tokens of the dummy forward */
  int64_t seqs;                /* max_num_seqs: sampler rows (capped at tokens) */
  int64_t tp;
  int32_t act_bytes;           /* activation dtype bytes (bf16/fp16: 2) */
  int32_t last_stage;          /* 1: this GPU runs the sampler (last PP stage) */
  int32_t eager;               /* 1: eager PyTorch (V0, enforce_eager), 0: compiled */
  int32_t moe_cache13;         /* 1: fused MoE shares cache1 and cache3 */
  int32_t flashinfer_sampler;  /* 1: FlashInfer top-k/top-p, 0: the sort path */
  int32_t logits_only;         /* 1: logits but no dummy sampler run (V1 in 0.7) */
  int64_t moe_chunk;           /* fused MoE chunk tokens (0: no chunking) */
  int32_t sampler_hidden;      /* the hidden states live at the sampler (N tokens, S rows,
                                * H wide): KVP_HIDDEN_ALL N H (V0, 0.7's V1), _LAST S H,
                                * _LAST_RAND 2 S H, _ALL_LAST_RAND N H + 2 S H (predict.c) */
  int64_t blas_workspace;      /* bytes torch holds from the profile's first GEMM on, live
                                * at every term: cuBLAS's workspace (0: not counted) */
  int32_t dequant_mlp;         /* 1: the dense MLP's linear layers are bitsandbytes 4-bit:
                                * each shard dequantized to a temporary (predict.c) */
  int32_t dequant_attn;        /* 1: the attention's linear layers likewise */
} kvp_profile;

/* kvp_profile.sampler_hidden */
enum { KVP_HIDDEN_ALL = 0, KVP_HIDDEN_LAST = 1, KVP_HIDDEN_LAST_RAND = 2,
       KVP_HIDDEN_ALL_LAST_RAND = 3 };

/* A range of bytes: the low end, the point estimate, the high end. Doubles:
 * the stdlib's constants are fractions of a GiB (engines.lua non_torch). */
typedef struct kvp_range { double lo, point, hi; } kvp_range;

/* The non-torch memory rule's constants (stdlib/kvplan/engines.lua
 * non_torch): what no source sizes (base: the code the profile run loads,
 * library handles; a stated range), the CUDA context when the version
 * counts it (and what SGLang's budget leaves out of its fraction), and the
 * parts the sources size, counted when the version's snapshot precedes the
 * distributed init: the bytes of one NCCL connection's buffers (one per
 * protocol), the channels of one communicator (a range: NCCL picks them by
 * topology) and the buffers vLLM's custom all-reduce allocates per rank;
 * NCCL's NVLS buffers per head at their largest (the high end alone). */
typedef struct kvp_non_torch {
  kvp_range base, context;
  double nccl_connection;   /* bytes: the Simple, LL and LL128 buffers of one peer */
  kvp_range nccl_channels;  /* channels of one communicator (a count) */
  double custom_ar;         /* bytes per rank outside torch (cudaMalloc'd IPC buffers) */
  double nvls_head;         /* bytes per head (one per rank) of NCCL's NVLS buffers at their
                             * largest layout: the range's high end, communicators of > 2 ranks */
} kvp_non_torch;

/* Where a non-torch memory is predicted: the engine (KVP_NT_*), the
 * parallelism, what the version's snapshot counts, and whether the GPUs
 * reach each other peer to peer (NVLink, Infinity Fabric), which puts
 * NCCL's buffers in device memory and enables vLLM's custom all-reduce. */
typedef struct kvp_non_torch_at {
  int32_t engine;
  int64_t tp, pp;
  int32_t nccl_counted, context_counted, p2p;
  int32_t nccl_runtime;     /* NCCL connects at the first collective, after the snapshot:
                             * its buffers in the range's high end alone */
  int32_t nvls;             /* the GPUs may run NCCL's NVLS (multicast over NVSwitch) */
  int32_t torch_pg;         /* the tp group's torch ProcessGroupNCCL communicator is created
                             * at the profile run (vLLM's logits gather), after the snapshot:
                             * a second communicator's buffers */
} kvp_non_torch_at;

/* What engine a predicted non-torch memory follows. */
enum { KVP_NT_NONE = 0, KVP_NT_VLLM, KVP_NT_SGLANG };

/* A vision tower (config.json vision_config) and the item vLLM's profiling
 * run encodes: one image of the largest feature size. */
typedef struct kvp_vision {
  int64_t hidden, intermediate;  /* the tower's width and MLP width */
  int32_t gated;                 /* 1: gate_up + act-and-mul (SwiGLU), 0: fc1, act, fc2 */
  int64_t proj_hidden;           /* the projector's inner width per output token */
  int64_t out_hidden;            /* the projector's output: the decoder's hidden size */
  int64_t merge;                 /* patches merged into one output token (1: none) */
  int64_t patch_values;          /* pixel values of one patch (channels x frames x p x p) */
  int64_t patches;               /* patches of one item, through every tower block */
  int64_t tokens;                /* embeddings of one item the decoder receives */
} kvp_vision;

/* A vision tower as its config.json gives it (models.lua `vision`): the
 * item vLLM profiles is derived from it (predict.c vision_item). */
typedef struct kvp_tower {
  int64_t hidden, intermediate, proj_hidden, out_hidden;
  int32_t gated;
  int64_t patch, merge;          /* patch side in pixels; merge per side (1: none) */
  int64_t max_pixels;            /* the processor's max_pixels (Qwen2-VL), or 0 and ... */
  int64_t image_size;            /* ... the square image side (CLIP/SigLIP towers) */
  int32_t class_token;           /* the tower adds a class token to its patches */
  int64_t in_channels, temporal_patch;
  int32_t video;                 /* a video modality as large as the image (V0 profiles it too) */
} kvp_tower;

#define KVP_MAX_FRACTIONS 8 /* rows of a budget fraction by tp */

/* MXFP4 experts as vLLM's MoE kernel loads them (stdlib/kvplan/engines.lua
 * mxfp4_backends has the layouts and their sources): the kernel pads the
 * per-GPU intermediate size and the hidden size, may keep fp32 biases and,
 * for Triton, swizzles values and scales into tiles. */
typedef struct kvp_mxfp4 {
  int64_t experts, hidden, inter, layers; /* E, H, moe_intermediate, MoE layers */
  int64_t ckpt_bytes;                     /* all weights as checkpointed */
  int64_t align_inter, align_hidden;      /* the kernel's padding (1: none) */
  int64_t tile, scale_rows;               /* Triton's value tiles and scale rows (0: none) */
  int32_t fp32_bias, keeps_scales;        /* fp32 biases; the checkpoint's scales kept */
} kvp_mxfp4;

/* The engine rule of a deployment: what its engine reserves at startup
 * follows from these inputs (the release's constants and flags, the usage,
 * the model's shape, the GPU's facts) and the deployment's numbers (GPU
 * memory, tp, pp, max_model_len, max_num_batched_tokens, max_num_seqs):
 * kvp_predict_deploy predicts the activation peak, the non-torch memory,
 * the profile's defaults, the repacked weights and SGLang's fraction from
 * them, for kv.deploy and again for every deployment of a sweep. All zero:
 * as given. The ledger does not read it. */
typedef struct kvp_engine_rule {
  int32_t activation;       /* 1: activation_bytes (and the stages' peaks) predicted */
  int32_t profiled;         /* 1: the profile's tokens and sequences are reported
                             * (kvp_reserves) even when nothing else needs them */
  int32_t overhead;         /* KVP_NT_*: overhead_bytes predicted for that engine */
  int32_t seqs_cap;         /* 1: vllm.max_num_seqs is vLLM's default (engine named) */
  int32_t seqs_given;       /* 1: vllm.max_num_seqs was given (the profile takes it) */
  int32_t tokens_given;     /* 1: max_num_batched_tokens was given */
  int32_t v1;               /* the V1 engine's defaults, else V0's */
  int32_t offline;          /* usage "offline" (the LLM class), else the server's */
  int32_t gpu_a100;         /* the GPU's name says A100 (no big-GPU defaults) */
  int32_t nccl_counted;     /* the version counts NCCL's buffers at tp or pp > 1 */
  int32_t context_counted;  /* the version counts the CUDA context */
  int32_t gpu_p2p;          /* the GPUs reach each other peer to peer (interconnect) */
  int32_t nccl_runtime;     /* the version's NCCL connects at the first collective, after
                             * the snapshot (cuMem on, NCCL 2.22 and later) */
  int32_t gpu_nvls;         /* the GPUs may run NCCL's NVLS (engines.lua nvls_capable) */
  int32_t trtllm;           /* TensorRT-LLM's dry run (its tokens and requests), else vLLM's */
  int32_t sglang_memory;    /* utilization is SGLang's mem_fraction_static from the GPU's
                             * memory, tp and pp (predict.c sglang_memory_defaults) */
  double sglang_vlm;        /* > 0: that fraction times this, SGLang's
                             * adjust_mem_fraction_for_vlm for a model with a vision tower
                             * (engines.lua sglang_vlm_factor); 0: none */
  int32_t vision;           /* the activation folds a vision tower's encoder run in */
  kvp_tower tower;          /* its config (intermediate whole: split by tp per call) */
  int64_t vision_limit;     /* limit_mm_per_prompt (0: vLLM's default, 999 V1, 1 V0) */
  int32_t pixel_bytes;      /* bytes of a pixel value as the processor hands it over */
  int32_t mxfp4;            /* weight_bytes: the checkpoint with MXFP4 experts repacked
                             * for tp (mx), unless a weight format replaced it */
  kvp_mxfp4 mx;
  int32_t mx_by_gpu;        /* mx's layout is the GPU's default kernel's (no kernel named):
                             * a GPU's facts set it (kvp_engine_rule_gpu) */
  int32_t mx_bundled;       /* the release ships triton_kernels: the GPU's default kernel
                             * is its facts' mx_bundled */
  int64_t default_tokens;   /* TensorRT-LLM: max_num_tokens when not given */
  int64_t chunked_tokens;   /* V0: max_num_batched_tokens with chunked prefill */
  int64_t big_seqs;         /* V1: max_num_seqs on a GPU of >= 70 GiB, not an A100 */
  kvp_shape shape;          /* the model's (engines.shape) */
  kvp_profile profile;      /* act_bytes, eager, moe_cache13, flashinfer_sampler,
                             * moe_chunk (tokens, seqs, tp, last_stage set per call) */
  /* The budget's fraction by tp (SGLang's mem_fraction_static default,
   * engines.lua sglang_fractions): the first row whose smallest tp the
   * deployment's reaches sets utilization. 0 rows: utilization as given. */
  int32_t nfraction;
  int64_t fraction_tp[KVP_MAX_FRACTIONS];
  double fraction[KVP_MAX_FRACTIONS];
} kvp_engine_rule;

/* What an engine rule reads of a GPU besides its memory (a sweep's GPU axis
 * carries one per value): whether its name says A100 (vLLM's big-GPU
 * defaults leave it out), whether its GPUs reach each other peer to peer,
 * and the layout of the MXFP4 MoE kernel vLLM picks on it
 * (stdlib/kvplan/engines.lua mxfp4_backend, by compute capability). */
typedef struct kvp_gpu_facts {
  int32_t a100;
  int32_t p2p;              /* peer to peer: NVLink or Infinity Fabric (non-torch memory) */
  int32_t nvls;             /* NCCL's NVLS may run on it (non-torch memory's high end) */
  kvp_mxfp4 mx;             /* the layout: align_inter, align_hidden, tile, scale_rows,
                             * fp32_bias, keeps_scales (the rest unused) */
  kvp_mxfp4 mx_bundled;     /* the same in the releases whose wheel ships triton_kernels */
  int64_t blas_workspace;   /* torch's cuBLAS workspace on it (vLLM's activation peak) */
} kvp_gpu_facts;

/* Set a GPU's facts on rule r: the A100 and P2P flags, and the kernel's layout when
 * the rule's MXFP4 kernel is the GPU's default (r->mx_by_gpu): mx_bundled's when
 * the rule's release ships triton_kernels (r->mx_bundled). */
void kvp_engine_rule_gpu(kvp_engine_rule *r, const kvp_gpu_facts *g);

/* ---- the ledger of one GPU (ledger.c) ---------------------------------- */

#define KVP_MAX_PP 64
#define KVP_LEN_POINTS 32       /* representative lengths of a length distribution */
#define KVP_MAX_EVICT_LEVELS 8  /* distinct per-layer eviction budgets */
#define KVP_MAX_GROUPS 16       /* (layer shape, eviction level) pairs in one stage */
#define KVP_MAX_KV_TYPES (KVP_MAX_SPECS + 1) /* vLLM KV cache types: shapes and the draft's */
#define KVP_PPM 1000000         /* ratios given in millionths */

/* How an engine sizes its KV pool (ledger.c has the rules and their sources). */
typedef enum kvp_budget {
  KVP_BUDGET_VLLM = 0,  /* util * total - weights - activation - overhead; a null block */
  KVP_BUDGET_SGLANG,    /* f * (total - overhead) - weights; tokens down to whole pages */
  KVP_BUDGET_TRTLLM,    /* f * (total - weights - activation - overhead); max_tokens cap */
  KVP_NBUDGETS
} kvp_budget;

/* How a sequence's KV memory is allocated. */
typedef enum kvp_alloc {
  KVP_ALLOC_PAGED = 0,   /* blocks on demand (PagedAttention, Kwon et al., SOSP 2023) */
  KVP_ALLOC_CONTIGUOUS,  /* max_model_len reserved per sequence when it is admitted */
  KVP_NALLOCS
} kvp_alloc;

/* Eviction: what a full-attention or MLA layer keeps of a sequence of m
 * tokens (optim.c, kvp_evict_held): min(m, sinks + recent + ceil(m * keep)),
 * the window rule on when recent > 0 or keep_ppm > 0, and at most the
 * layer's own budget when it has a level. All zero: nothing is evicted. */
typedef struct kvp_evict {
  int64_t sinks;      /* first tokens always kept (StreamingLLM attention sinks) */
  int64_t recent;     /* most recent tokens kept */
  int32_t keep_ppm;   /* heavy hitters kept, millionths of the sequence (H2O); 0 = none */
  int32_t nlevel;     /* per-layer budgets in use (0 = none) */
  int64_t level[KVP_MAX_EVICT_LEVELS];  /* tokens a layer of level i + 1 keeps */
  uint8_t layer[KVP_MAX_LAYERS];        /* level of each layer, 1-based; 0 = none */
} kvp_evict;

/* Speculative decoding: g draft tokens verified per target step take g
 * more KV slots per sequence; a draft model or draft heads (EAGLE, MTP)
 * add their weights and `draft_layers` layers of KV of shape `draft`, on
 * the last pipeline stage. All zero: off. */
typedef struct kvp_spec {
  int64_t tokens;             /* g: draft tokens per step */
  int64_t draft_layers;       /* layers of draft KV (0: none) */
  kvp_layer draft;            /* their shape: full attention or MLA */
  int64_t draft_weight_bytes; /* all draft weights (split over tp) */
  int64_t draft_hidden;       /* the draft's hidden size: its all-reduces send hidden x 2
                               * bytes a token (0: the target's, as draft heads have) */
  int32_t hidden_cache;       /* the draft layer is extract_hidden_states' hidden-state
                               * cache: beside a hybrid target its own KV cache group
                               * (vllm_kv.c hidden_group) */
} kvp_spec;

/* vLLM's LoRA slots (--enable-lora; vllm/config/lora.py LoRAConfig): every
 * decoder layer's qkv_proj, o_proj, gate_up_proj and down_proj gets
 * max_loras stacked A and B tensors of max_lora_rank in lora_dtype
 * (predict.c kvp_lora_layer_bytes). max_loras 0: off. */
typedef struct kvp_lora {
  int64_t max_loras, max_rank;
  int32_t dtype_bytes;        /* lora_dtype (auto: the model dtype's) */
  int32_t fully_sharded;      /* fully_sharded_loras: A (column) and B (row) split by tp */
  int64_t hidden, heads, kv_heads, head_dim, intermediate; /* the decoder layer's shape */
} kvp_lora;

/* Bytes of one decoder layer's LoRA slots on one GPU at tensor parallelism
 * tp. Fails on a bad config (a count < 1, a fully sharded rank or hidden
 * size tp does not divide). */
kvp_err kvp_lora_layer_bytes(const kvp_lora *lo, int64_t tp, int64_t *bytes, kvp_diag *d);

/* vLLM's KV cache switches and overrides, by vLLM's names (engine/core/
 * vllm_kv.c; vllm-project/vllm vllm/config/cache.py, scheduler.py,
 * parallel.py). All zero: vLLM's defaults for the options; the release's own
 * switches (check_override, check_null_block, mamba_seqs_check,
 * log_tokens_mode) at zero are the older releases' rules. The core has no
 * release of its own: the binding sets each switch from the release row the
 * deployment resolved (stdlib/kvplan/engines.lua vllm_version: no release
 * named is the newest modelled, vllm_latest, as "latest"). Only with budget
 * vllm. */
/* kvp_vllm.system_rule */
enum { KVP_SYS_CHECK = 0, KVP_SYS_BUDGET = 1, KVP_SYS_NONE = 2 };

typedef struct kvp_vllm {
  int32_t disable_hybrid;     /* disable_hybrid_kv_cache_manager: sliding and chunked
                               * layers allocated as full attention */
  int64_t blocks_override;    /* num_gpu_blocks_override: the pool's blocks (0: sized) */
  int64_t kv_cache_bytes;     /* kv_cache_memory_bytes: the KV budget of every GPU,
                               * gpu_memory_utilization ignored (0: profiled) */
  int64_t max_num_seqs;       /* the scheduler's cap on running requests (0: none; the
                               * stdlib passes vLLM's default when engine = "vllm") */
  int64_t dcp;                /* decode_context_parallel_size: each block of a request
                               * spans dcp ranks of the TP group (0, 1: off) */
  int64_t pcp;                /* prefill_context_parallel_size: pcp more ranks of tp x pp
                               * GPUs, each holding 1 / pcp of a request's tokens (0, 1: off) */
  int64_t dp;                 /* data_parallel_size: engines of tp x pp GPUs, each with
                               * its own KV pool and requests (0, 1: one) */
  int32_t ep;                 /* enable_expert_parallel: whole experts per GPU */
  int64_t experts;            /* routed experts per MoE layer (dp > 1 or ep) */
  int64_t expert_bytes;       /* bytes of all routed experts, within the weights */
  int64_t stride_align;       /* block_stride_alignment of the MLA attention backend:
                               * bytes a block is rounded up to (0: none) */
  int64_t stage_gpu_bytes[KVP_MAX_PP]; /* > 0: the smallest GPU of stage s (workers with
                                        * unequal memory); 0: gpu_bytes */
  int64_t stage_activation_bytes[KVP_MAX_PP]; /* > 0: stage s's own activation peak (under
                                               * PP only the last stage samples); 0:
                                               * activation_bytes */
  int32_t mamba_mode;         /* mamba_cache_mode of a model of attention and Mamba layers:
                               * KVP_MAMBA_NONE (one state a request), KVP_MAMBA_ALIGN
                               * (the state at block boundaries kept for prefix caching:
                               * 2 a request), KVP_MAMBA_ALL (a state every block) */
  int64_t mamba_chunk;        /* mamba_cache_mode all: the chunk the block aligns to
                               * (vLLM mamba_block_size, else the model's chunk_size) */
  int32_t block_grain;        /* a model of attention and Mamba layers raises its block in
                               * multiples of max(the kernel's alignment, the given block),
                               * not of the kernel's alignment alone (the releases of
                               * vllm-project/vllm#37467: Platform._align_hybrid_block_size) */
  int32_t check_override;     /* the startup check and its estimate plan against
                               * num_gpu_blocks_override blocks when it is set (the
                               * releases of vllm-project/vllm#41069); 0: the measured
                               * KV memory */
  int32_t system_rule;        /* how the release's budget sees system_bytes: KVP_SYS_CHECK
                               * (V1 from 0.8: not in the budget, the startup check refuses
                               * when free < total x utilization), KVP_SYS_BUDGET (counted
                               * as non-torch memory: 0.6.0-0.6.4, V1 of 0.7), KVP_SYS_NONE
                               * (V0's baseline from 0.6.5: neither) */
  int32_t check_null_block;   /* ... against one block less, the null block (the
                               * releases of vllm-project/vllm#47272) */
  int32_t mamba_seqs_check;   /* the refusal of a model with Mamba layers whose max_num_seqs
                               * exceeds the pool's blocks under full CUDA graphs (the
                               * releases of vllm-project/vllm#38270, without enforce_eager;
                               * starts.c) */
  int32_t auto_fit;           /* max_model_len auto (vLLM --max-model-len auto or -1, the
                               * releases of vllm-project/vllm#29431): the ledger is
                               * evaluated at the derived max_model_len (max_model_len 0:
                               * the model's max_context), then again at the startup
                               * check's estimate when that is shorter (ledger.c) */
  int32_t ngiven;             /* kv_cache_groups given by hand (0: vLLM groups the
                               * layers itself) */
  int64_t given_block[KVP_MAX_SPECS]; /* each given group's block (0: the block) */
  uint8_t group_of[KVP_MAX_LAYERS];   /* each layer's given group, 1-based; 0: none */
  int32_t log_tokens_mode;    /* what "GPU KV cache size" prints: 0 num_blocks // groups x
                               * block; 1 int(max concurrency x max_model_len) (the
                               * releases that derive it from the concurrency figure) */
  kvp_lora lora;              /* --enable-lora's slots, in every stage's weights */
  int32_t v0_blocks;          /* V0's block manager: one KV type, every block spanning all
                               * layers, an encoder-decoder's cross-attention blocks from the
                               * same pool (no KV cache groups) */
  int64_t mla_entry_align;    /* V0's CacheEngine on CUDA (0.7.2-0.7.x): an MLA layer's entry,
                               * kv_lora_rank + qk_rope_head_dim elements, allocated
                               * rounded up to a multiple of this many elements (256
                               * bytes of the model dtype: 128 for bf16); 0: none */
  int64_t rotary_bytes;       /* the rotary embeddings' cos/sin caches one GPU holds, whole on
                               * every tp rank and in every pipeline stage, in its weights
                               * ("Model loading took"; the sizes: engines.lua vllm_rotary);
                               * SGLang's float32 tables too ("Load weight end"); 0: none */
  int64_t alloc_bytes;        /* SGLang's weights as free memory measures them: the caching
                               * allocator's segments beyond the parameters' bytes, in the
                               * weights of one GPU (engines.lua sglang_alloc_slack); 0: none */
  const int64_t *sweep_weights; /* a sweep's base (sweep.c): SGLang's rotary_bytes and
                               * alloc_bytes at each position of the sweep's C axes gpu x tp
                               * x pp x weights (an absent axis one position; the last
                               * varies fastest), pairs; the caller keeps it alive while the
                               * base is evaluated (sweep.lua weights_table); NULL: none */
  int64_t nsweep_weights;     /* its integers: 2 x the positions */
} kvp_vllm;

enum { KVP_MAMBA_NONE = 0, KVP_MAMBA_ALIGN, KVP_MAMBA_ALL };

/* SGLang's attention data parallelism and expert parallelism, by SGLang's
 * names (engine/core/vllm_kv.c kvp_vllm_stage_weights; sgl-project/sglang
 * python/sglang/srt/layers/dp_attention.py). All zero: off. Only with
 * budget sglang; the routed experts' count and bytes are kvp_vllm's. */
typedef struct kvp_sglang_par {
  int64_t attn_dp;            /* dp_size under enable_dp_attention: DP ranks inside the tp
                               * GPUs, each its own requests and KV, attention TP tp / attn_dp
                               * (0, 1: off) */
  int64_t ep;                 /* ep_size: MoE ranks holding whole experts, each expert split
                               * over tp / ep of them (0, 1: experts split over tp); also
                               * TensorRT-LLM's moe_ep_size under budget trtllm (its Mapping:
                               * moe_ep x moe_tp = tp, the same layout) */
  int64_t attn_bytes;         /* attention layers' weight bytes (split over tp / attn_dp) */
  int64_t whole_bytes;        /* weight bytes whole on every GPU under attention DP (the
                               * input embedding) */
  int64_t replicas;           /* dp_size without attention DP: replicas of tp x pp GPUs, each
                               * its own requests (the data-parallel controller's; 0, 1: one) */
} kvp_sglang_par;

/* The weights every tensor-parallel rank holds whole (stdlib/kvplan/
 * models.lua replicated_params: MLA's down-projections, MoE routers, the
 * norms, by family, from the engines' model files): the ledger takes them
 * off the bytes it splits over tp and adds them whole (vllm_kv.c
 * kvp_vllm_stage_weights), the step time reads them whole (roofline.c). All
 * zero: none; nothing changes at tp 1. */
typedef struct kvp_replicated {
  int64_t params;             /* their parameters */
  int64_t shards, cols;       /* their linear layers' matrices and input columns (a format's
                               * tensor and col bits, kvp_format_weight_bytes) */
  int64_t bytes;              /* > 0: their bytes as the checkpoint holds them (each class in
                               * its format), overrides params in the weight format; a sweep's
                               * weights axis clears it as it clears weight_bytes */
  int64_t matmul;             /* of `params`, those of linear layers (the routers, MLA's
                               * a-projections, an indexer's wq_b/wk/weights_proj; not norms,
                               * biases, vectors): every rank computes their GEMMs whole, 2
                               * FLOPs a parameter a token (roofline.c kvp_cost_init) */
} kvp_replicated;

/* A deployment: a model on GPUs of one kind. Every field after `max_model_len`
 * is an optimization (kvplan.optim) whose zero value means off. */
typedef struct kvp_deploy {
  kvp_model model;
  int64_t gpu_bytes;          /* memory the runtime reports for one GPU */
  int64_t tp, pp;
  kvp_format kv;              /* KV cache element format */
  kvp_format weights;         /* weight format (with group overhead) */
  int64_t weight_bytes;       /* > 0: total weight bytes, overrides params x format */
  kvp_replicated replicated;  /* the weights whole on every TP rank (all zero: none) */
  double utilization;         /* the budget rule's fraction, (0, 1]: vLLM
                               * gpu_memory_utilization, SGLang mem_fraction_static,
                               * TensorRT-LLM free_gpu_memory_fraction */
  int64_t activation_bytes;   /* per GPU: activation peak reserved */
  int64_t overhead_bytes;     /* per GPU: CUDA context, communication buffers */
  int64_t system_bytes;       /* per GPU: memory others hold on the device at startup (the
                               * OS and page cache on unified memory, other processes):
                               * system_memory, each budget rule as its engine sees it
                               * (ledger.c, starts.c); 0: none */
  int64_t block;              /* tokens per KV block */
  int64_t max_num_batched_tokens; /* tokens scheduled in one step (>= 1) */
  int64_t max_model_len;      /* longest request; 0 = the model's max_context */
  /* ---- optimizations: zero is off ---- */
  kvp_budget budget;          /* budget rule */
  int64_t max_kv_tokens;      /* TensorRT-LLM max_tokens: cap on the pool; 0 = none */
  kvp_alloc alloc;            /* paged or contiguous */
  int64_t kv_recent;          /* KIVI: the last kv_recent tokens stay in kv_full */
  kvp_format kv_full;         /* their format (needed when kv_recent > 0) */
  kvp_evict evict;
  kvp_spec spec;
  int64_t prefix;             /* a prefix every sequence shares, held once */
  int64_t samples;            /* sequences per request sharing its prompt (0, 1: one) */
  int64_t prompt;             /* the prompt the samples share, or ... */
  int64_t output;             /* ... the tokens each sample generates (prompt = n - these) */
  int64_t host_bytes;         /* host memory for KV per GPU (offload) */
  int32_t nlen;               /* continuous batching: representative lengths (0 = off) */
  int64_t len[KVP_LEN_POINTS];/* sorted, equally likely request lengths */
  kvp_vllm vllm;              /* vLLM's switches and overrides (budget vllm only) */
  kvp_sglang_par sglang;      /* SGLang's attention DP and EP (budget sglang only) */
  kvp_engine_rule engine;     /* the engine rule of its reserves (kvp_predict_deploy) */
  /* ---- the engine's startup (starts.h) ---- */
  int32_t engine_named;       /* the deployment names its engine (engine or engine_version):
                               * a sweep's fits includes the engine's refusal to start */
  int32_t fail_fast;          /* TensorRT-LLM fail_fast_on_attention_window_too_large */
} kvp_deploy;

/* ---- data and expert parallelism ---------------------------------------------- */

/* The tensor-parallel size of the attention layers: tp / dp_size under
 * SGLang's attention DP (derive_attn_tp_size: tp_size // (dp_size x
 * attn_cp_size), sgl-project/sglang python/sglang/srt/runtime_context at
 * 2aa2e2d0), else tp. KV heads and attention split over it. */
static inline int64_t kvp_attn_tp(const kvp_deploy *d) {
  return d->sglang.attn_dp > 1 ? d->tp / d->sglang.attn_dp : d->tp;
}

/* DP ranks of the deployment, each its own scheduler, requests and KV:
 * vLLM's data_parallel_size engines, SGLang's attention-DP ranks or its
 * replicas (dp_size alone); 1 else. */
static inline int64_t kvp_dp_ranks(const kvp_deploy *d) {
  if (d->sglang.attn_dp > 1) return d->sglang.attn_dp;
  if (d->sglang.replicas > 1) return d->sglang.replicas;
  return d->vllm.dp > 1 ? d->vllm.dp : 1;
}

/* ---- a deployment: defaults, names, checks (deploy.c) ------------------ */

/* Defaults: tp = pp = 1, bf16 KV and weights, utilization 0.9, block 16,
 * max_num_batched_tokens 1, nothing reserved. model and gpu_bytes are the caller's. */
void kvp_deploy_defaults(kvp_deploy *d);
kvp_err kvp_deploy_check(const kvp_deploy *d, kvp_diag *diag);
/* Name of a budget rule ("vllm", "sglang", "trtllm") and an allocation. */
const char *kvp_budget_name(kvp_budget b);
const char *kvp_alloc_name(kvp_alloc a);

/* ---- the ledger's answers (ledger.c) ------------------------------------ */

/* Why a deployment, or a request shape on it, does not fit. */
typedef enum kvp_why {
  KVP_FITS = 0,
  KVP_WHY_TP_HEADS,     /* tp does not divide the attention heads */
  KVP_WHY_TP_KV_HEADS,  /* kv_heads and tp: neither divides the other */
  KVP_WHY_PP_LAYERS,    /* more pipeline stages than layers */
  KVP_WHY_WEIGHTS,      /* weights alone exceed the usable memory */
  KVP_WHY_RESERVED,     /* weights + activation + overhead exceed it */
  KVP_WHY_NO_BLOCK,     /* the KV budget holds not even the null block */
  KVP_WHY_CONTEXT,      /* context beyond max_model_len */
  KVP_WHY_KV,           /* the requests' KV exceeds the KV budget */
  KVP_WHY_OVERCOMMIT,   /* num_gpu_blocks_override or kv_cache_memory_bytes ask for
                         * more than the GPU holds beside weights and reserves */
  KVP_WHY_SEQS,         /* more requests than vLLM's max_num_seqs */
  KVP_WHY_STARTS,       /* the engine refuses to start (starts.h kvp_verdict: the
                         * requests would fit) */
  KVP_NWHY
} kvp_why;

/* Short name of a reason ("none", "weights", "kv", ...). */
const char *kvp_why_name(kvp_why w);

typedef struct kvp_fit {
  kvp_why why;
  int32_t stage;        /* pipeline stage that decides */
  int64_t need, have;   /* bytes (or counts for the TP/context reasons) */
  int64_t context, concurrency;
} kvp_fit;

/* One KV cache type of vLLM's hybrid KV cache manager: the layers of one
 * KVCacheSpec, split into `groups` KV cache groups that each hold one block
 * table (ledger.c). */
typedef struct kvp_kv_type {
  kvp_layer shape;       /* the layers' shape (heads as the model gives them) */
  int32_t draft_only;    /* the speculative draft's layers alone */
  int64_t layers;        /* layers of this type in the model and the draft */
  int64_t groups;        /* ceil(layers / group_size) */
  int64_t block;         /* tokens per block (page unification may raise it) */
  int64_t page;          /* bytes of one layer's block at the base block (a state:
                          * its bytes), before unification and padding */
  int32_t padded;        /* its page is padded up to the pool's page (a state, or
                          * an attention page that does not divide it) */
} kvp_kv_type;

/* One pipeline stage as one of its GPUs sees it. */
typedef struct kvp_stage {
  int64_t first, layers;
  int64_t weights;       /* weight bytes on one GPU of the stage (LoRA slots and rotary
                          * caches included) */
  int64_t lora;          /* of which vLLM's LoRA slots (vllm.lora) */
  int64_t rotary;        /* of which the rotary cos/sin caches (vllm.rotary_bytes) */
  int64_t alloc;         /* of which SGLang's allocator slack (vllm.alloc_bytes) */
  int64_t kv_budget;     /* bytes left for KV; <= 0 when nothing is left */
  int64_t token_bits;    /* bits a token adds across the stage's paged layers */
  int64_t block_bytes;   /* one block on every paged layer of the stage */
  int64_t state_bytes;   /* fixed recurrent state of one sequence */
  int64_t blocks;        /* blocks in the pool, the null block included */
  int64_t count[KVP_MAX_SPECS];  /* layers of each spec in the stage */
  int64_t pool;          /* bytes requests may fill: vLLM the budget, SGLang and
                          * TensorRT-LLM their whole pages */
  int64_t margin;        /* bytes the budget rule leaves unused on the GPU */
  int64_t host_blocks;   /* blocks of host memory (offload) */
  int64_t reserve;       /* contiguous: bytes one sequence reserves */
  int64_t group_size;    /* vLLM hybrid: layer slots of one KV cache group on this
                          * GPU, block_bytes = page * group_size; else 0 */
  int64_t own_blocks;    /* vLLM: the blocks this stage's budget holds (blocks is
                          * num_gpu_blocks_override when set); the engine then
                          * uses the fewest over all workers */
  int64_t aligned;       /* vLLM MLA backends: block_bytes rounded up to the
                          * block stride alignment (0: not rounded) */
  int64_t gpu_bytes;     /* memory of this stage's smallest GPU */
  int64_t usable;        /* what the budget rule lets the engine use on it */
  int32_t ngroup;        /* optimized path: its (spec, eviction level) groups
                          * (kvp_ledger_groups) */
} kvp_stage;

/* Layers of one stage that share a layer shape and an eviction level. */
typedef struct kvp_group {
  int32_t spec, level;
  int64_t count;
} kvp_group;

typedef struct kvp_ledger {
  kvp_deploy d;          /* as evaluated: vLLM raises d.block for Mamba states */
  int64_t total;         /* gpu_bytes */
  int64_t usable;        /* what the budget rule lets the engine use */
  int64_t weights_total; /* all weight bytes of the model */
  int64_t max_len;       /* effective max_model_len */
  int64_t page_bytes[KVP_MAX_SPECS];   /* one block of one layer of each spec */
  int64_t state_bytes[KVP_MAX_SPECS];  /* per-sequence state of each spec */
  int64_t token_bits[KVP_MAX_SPECS];   /* bits of one token of one layer of each spec */
  int64_t full_bits[KVP_MAX_SPECS];    /* KIVI: the same in the full-precision format */
  int64_t page_full[KVP_MAX_SPECS];    /* KIVI: one full-precision block */
  int64_t draft_bits;    /* a token on all draft layers (speculative) */
  int64_t draft_page;    /* a block on all draft layers */
  int64_t null_blocks;   /* blocks the pool keeps out of use (vLLM's null block, and the
                          * blocks of static attention sinks) */
  int32_t plain;         /* no optimization changes what a sequence holds */
  int32_t state_pages;   /* vLLM, only recurrent layers (Mamba models): each state is
                          * a page of the pool, 1 + g a request (MambaSpec) */
  int32_t attention_free;/* no layer holds KV or state: vLLM's one null block */
  int32_t tight;         /* the stage with the fewest blocks (reported) */
  kvp_fit fit;           /* whether the deployment itself fits, and why not */
  /* vLLM's hybrid KV cache manager (budget vllm, paged, layers of more than
   * one KV type): the pool's blocks are shared by KV cache groups */
  int32_t hybrid;        /* 1 when the grouping applies, else per-layer pages */
  int32_t ntype;         /* its KV cache types (kvp_ledger_types) */
  int64_t group_size;    /* layers per KV cache group over the whole model */
  int64_t ngroups;       /* KV cache groups of every type */
  int64_t page;          /* the unified page: one block of one layer, padded */
  int64_t min_block;     /* smallest tokens per block over the groups */
  int64_t span;          /* tokens one block holds of a request: block x
                          * decode_context_parallel_size (vLLM DCP), else block */
  int32_t promoted;      /* vLLM: sliding and chunked layers allocated as full
                          * attention (disable_hybrid_kv_cache_manager, or the
                          * MLA + sliding fallback) */
  int32_t adjusted;      /* the evaluation changed d (block raised, layers
                          * promoted): d is no longer what was given */
  int32_t nstage;
  /* how the ledger is laid out, from the deployment as given (kvp_ledger_size):
   * the stages it has room for, then for each of them room for cap_groups
   * groups, then for each cap_points sums at the length points */
  int32_t cap_stages, cap_groups, cap_points, cap_types;
  kvp_stage stage[KVP_MAX_PP];
  /* only cap_stages of the stages above are the ledger's: their groups and
   * sums follow them, packed, then room for cap_types KV cache types
   * (kvp_ledger_size); this room holds them for the largest deployment */
  int64_t tail[KVP_MAX_PP * (KVP_MAX_GROUPS * (sizeof(kvp_group) / sizeof(int64_t)) +
                             KVP_LEN_POINTS + 1) +
               KVP_MAX_KV_TYPES * (sizeof(kvp_kv_type) / sizeof(int64_t))];
} kvp_ledger;

/* Evaluate a deployment. A deployment that does not fit is not an error:
 * l->fit says why, and every capacity answer is 0. Writes and reads only
 * the first kvp_ledger_size(d) bytes of *l, so a ledger that outlives the
 * call may be allocated at that size (its stages, not KVP_MAX_PP of them);
 * sizeof(kvp_ledger) holds any deployment. */
kvp_err kvp_ledger_eval(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag);
/* Bytes of a ledger sized to d, allocated once and reused for any deployment
 * of the same size or smaller: the fields before `stage`, its pp stages (0
 * when pp exceeds the layers), and for each stage room for its groups of
 * layers on the optimized path (layer shapes x (eviction levels + 1), twice
 * the shapes for the boundary layers a TurboQuant format keeps in the model
 * dtype, at most KVP_MAX_GROUPS) and, under continuous batching, its sums at
 * the nlen + 1 length points; then, when vLLM's hybrid KV cache manager may
 * apply (budget vllm, paged, no KIVI window or per-layer budgets), room for
 * its KV cache types (twice the shapes, at most KVP_MAX_SPECS, and the
 * draft's). sizeof(kvp_ledger) holds any deployment. */
size_t kvp_ledger_size(const kvp_deploy *d);
/* The ntype KV cache types of vLLM's hybrid KV cache manager. */
const kvp_kv_type *kvp_ledger_types(const kvp_ledger *l);
/* KV bytes of one sequence of n tokens on one GPU of stage s, paged: each
 * layer's blocks times its page bytes, plus fixed states. With optimizations:
 * the g speculative slots, eviction, KIVI's full-precision window and the
 * draft's KV included; contiguous: the bytes reserved for max_model_len;
 * vLLM hybrid: the blocks it takes in every KV cache group times the stage's
 * block_bytes (padding and padded Mamba pages included). */
kvp_err kvp_ledger_seq_bytes(const kvp_ledger *l, int32_t s, int64_t n, int64_t *bytes);
/* What one request of n tokens costs on stage s: `worst` its bytes beyond
 * what all requests share (parallel samples and shared prompt blocks
 * counted), `shared` the bytes of the common prefix held once in the pool;
 * under continuous batching `sum` / `points` is the expected cost over the
 * length points (each capped at n); else sum = worst and points = 1. */
kvp_err kvp_ledger_request_bytes(const kvp_ledger *l, int32_t s, int64_t n, int64_t *worst,
                                 int64_t *shared, int64_t *sum, int64_t *points);
/* Usable KV tokens of the tightest stage: (blocks - null blocks) * block;
 * vLLM hybrid: (blocks - null blocks) / groups * the smallest block. */
int64_t kvp_ledger_kv_tokens(const kvp_ledger *l);
/* What vLLM logs at startup (budget vllm, paged allocation): "GPU KV cache
 * size: *tokens tokens" = num_blocks / groups * the smallest block, and
 * "Maximum concurrency for max_model_len tokens per request: X" with X =
 * *blocks / *per_request, the blocks a request of max_model_len tokens may
 * take by each group's max_memory_usage_bytes (vllm/v1/core/kv_cache_utils.py
 * _report_kv_cache_config, get_max_concurrency_for_kv_cache_config). All 0
 * when the deployment does not fit or pages nothing. KVP_EINVAL for another
 * budget rule or allocation. */
kvp_err kvp_ledger_vllm_log(const kvp_ledger *l, int64_t *tokens, int64_t *blocks,
                            int64_t *per_request);
/* Does `concurrency` requests of `context` tokens fit? */
kvp_err kvp_ledger_fit(const kvp_ledger *l, int64_t context, int64_t concurrency,
                       kvp_fit *out);
/* The largest concurrency at which kvp_ledger_fit(l, context, c) fits:
 * requests of `context` tokens fit exactly when c <= *limit (0: none fits;
 * INT64_MAX: any number). For answering many concurrencies at one context
 * (sweeps) without evaluating the request's bytes again. */
kvp_err kvp_ledger_fit_limit(const kvp_ledger *l, int64_t context, int64_t *limit);
/* Most concurrent requests of `context` tokens (0 when none fits). When
 * vLLM's max_num_seqs is below what the KV cache holds, the answer is
 * max_num_seqs and `why` says so (KVP_WHY_SEQS, need = what the KV cache
 * holds or INT64_MAX, concurrency 0); else why is the fit of one request. */
kvp_err kvp_ledger_max_concurrency(const kvp_ledger *l, int64_t context,
                                   int64_t *n, kvp_fit *why);
/* Longest context (<= max_len) at which `concurrency` requests fit; 0 if none. */
kvp_err kvp_ledger_max_context(const kvp_ledger *l, int64_t concurrency,
                               int64_t *n, kvp_fit *why);
/* Human reason, e.g. "weights need 70.0 GiB per GPU, 68.4 GiB usable";
 * "" when it fits. Returns what snprintf returns. */
int kvp_fit_explain(const kvp_fit *f, char *buf, size_t n);

/* ---- predictions: what an engine's profiler measures (predict.c) ------- */


enum { KVP_PREDICT_MLP = 0, KVP_PREDICT_ATTENTION, KVP_PREDICT_MOE, KVP_PREDICT_SAMPLER,
       KVP_PREDICT_ENCODER, KVP_PREDICT_NTERMS };

typedef struct kvp_activation {
  int64_t term[KVP_PREDICT_NTERMS][2]; /* each term's low and high end, bytes */
  int64_t bytes_of[KVP_PREDICT_NTERMS];/* the end the profile's settings pick */
  int64_t lo, hi;                      /* the peak over terms at either end */
  int64_t bytes;                       /* the prediction: max of bytes_of */
  int32_t largest;                     /* the term that sets it */
  int64_t encoder_kept;                /* encoder inputs and outputs live through the
                                          decoder's terms (kvp_predict_add_encoder) */
  int64_t resident;                    /* the profile's blas_workspace, in every term */
} kvp_activation;

const char *kvp_predict_term_name(int term);
/* vLLM's profiled activation peak (torch_peak_increase) on one GPU. */
kvp_err kvp_predict_activation(const kvp_shape *s, const kvp_profile *p, kvp_activation *a,
                               kvp_diag *d);
/* The rule's constants are finite, 0 <= lo <= point <= hi < 2^53. */
kvp_err kvp_non_torch_check(const kvp_non_torch *nt, kvp_diag *d);
/* The parts of a predicted non-torch memory of one GPU, each {point, lo,
 * hi} in bytes rounded down: the total and the NCCL and custom all-reduce
 * buffers in it. */
typedef struct kvp_non_torch_parts {
  int64_t total[3], nccl[3], custom_ar[3];
} kvp_non_torch_parts;
/* Predicted non-torch memory of one GPU at `at`. */
kvp_err kvp_predict_non_torch(const kvp_non_torch *nt, const kvp_non_torch_at *at,
                              kvp_non_torch_parts *out, kvp_diag *d);
/* All weight bytes of a deployment at tp whose MXFP4 experts are loaded as
 * m says: the checkpoint's plus tp x (loaded - checkpoint) experts of one
 * GPU. */
kvp_err kvp_mxfp4_weight_bytes(const kvp_mxfp4 *m, int64_t tp, int64_t *bytes, kvp_diag *d);



/* The encoder's dummy batch: items, the model dtype's bytes, the bytes of a
 * pixel value as the processor hands it over, and the tower calls the items
 * are split over (0 or 1: one call; V0 calls it once a modality). */
typedef struct kvp_encoder_run {
  int64_t items;
  int32_t act_bytes, pixel_bytes;
  int64_t calls;
} kvp_encoder_run;

typedef struct kvp_encoder {
  int64_t block[2];   /* bytes of the tower's largest per-patch term, [lo, hi] */
  int64_t merger;     /* the projector's per-patch bytes */
  int64_t inputs;     /* pixel values as handed over, kept by profile_run */
  int64_t cast;       /* their copy in the model dtype during the tower's run */
  int64_t outputs;    /* the embeddings kept in the encoder cache */
  int64_t peak[2];    /* the encoder forward's peak, [lo, hi] */
  int64_t kept;       /* inputs + outputs: live while the decoder runs */
} kvp_encoder;

/* vLLM's encoder profiling (gpu_model_runner.py profile_run). */
kvp_err kvp_predict_encoder(const kvp_vision *v, const kvp_encoder_run *r, kvp_encoder *e,
                            kvp_diag *d);
/* Fold an encoder run into a decoder prediction: the encoder term, and the
 * kept bytes under every decoder term (the peak of the whole profile_run). */
kvp_err kvp_predict_add_encoder(kvp_activation *a, const kvp_encoder *e, kvp_diag *d);

#define KVP_MAX_GRAPHS 64 /* CUDA-graph batch sizes of SGLang's defaults (52 at 512) */

/* What kvp_predict_deploy predicted for one deployment beyond the numbers
 * it sets on it: what kv.deploy stores for reports and kvplan validate. */
typedef struct kvp_reserves {
  int64_t tokens, seqs;       /* the profile's max_num_batched_tokens and max_num_seqs
                                 (TensorRT-LLM: max_num_tokens and the dummy requests) */
  int32_t activation;         /* 1: act and forward_bytes are set */
  kvp_activation act;         /* the last stage's peak: terms, range, encoder */
  int64_t forward_bytes;      /* a stage that does not sample: its peak */
  int32_t vision;             /* 1: enc and the items below are set */
  kvp_encoder enc;
  int64_t item_patches, item_tokens; /* one item: patches through the tower, tokens out */
  int64_t enc_items;          /* items of the encoder's dummy batch */
  int64_t enc_budget;         /* V1's encoder budget in tokens (0: V0 has none) */
  int64_t dec_tokens;         /* the decoder's dummy tokens (V0: whole items) */
  int32_t overhead;           /* 1: non_torch is set */
  kvp_non_torch_parts non_torch;
  int32_t repacked;           /* weight_bytes: MXFP4 experts as the kernel loads them */
  int32_t sglang;             /* 1: SGLang's memory defaults below are set */
  int64_t chunk, graph_bs;    /* chunked_prefill_size, cuda_graph_max_bs */
  double reserved_mib;
  int32_t ngraphs;            /* the CUDA-graph batch sizes up to graph_bs */
  int32_t graphs[KVP_MAX_GRAPHS];
} kvp_reserves;

/* Predict d's reserves from its engine rule d->engine and its numbers:
 * the activation peak (and each pipeline stage's), the non-torch memory,
 * vLLM's default max_num_seqs when it caps, the utilization of SGLang's
 * defaults, MXFP4 weights as loaded; set on d. nt: the non-torch constants
 * (needed when the rule predicts the overhead). out (may be NULL): the
 * parts kv.deploy reports. */
kvp_err kvp_predict_deploy(kvp_deploy *d, const kvp_non_torch *nt, kvp_reserves *out,
                           kvp_diag *diag);

/* PyTorch's CUDACachingAllocator, the rules that decide its segments (the
 * constants: stdlib engines.lua torch_alloc, with their source). */
typedef struct kvp_torch_alloc {
  int64_t min_block;       /* kMinBlockSize: every request rounded up to it */
  int64_t small_size;      /* kSmallSize: the largest request of the small pool */
  int64_t small_buffer;    /* kSmallBuffer: a small-pool segment */
  int64_t large_buffer;    /* kLargeBuffer: the segment of a large request below min_large_alloc */
  int64_t min_large_alloc; /* kMinLargeAlloc */
  int64_t round_large;     /* kRoundLarge: a larger request's segment rounded up to it */
} kvp_torch_alloc;

/* A free block of a segment: its bytes and its pool (1 small, 0 large). */
typedef struct kvp_torch_block {
  int64_t bytes;
  int32_t small;
} kvp_torch_block;

/* The bytes of the segments the allocator holds after the n allocations of
 * sizes (bytes, in order, none freed; 0 allocates nothing): each request
 * rounded, taken from the smallest free block of its pool that holds it,
 * else from a new segment, the rest of the block kept free when it can be
 * split. blocks: the caller's room for the free blocks (nblocks >= n
 * always suffices: a request adds at most one); KVP_EINVAL naming
 * nblocks when they run out, or for a constant < 1 or a size < 0. */
kvp_err kvp_torch_segments(const kvp_torch_alloc *a, const int64_t *sizes, int64_t n,
                           kvp_torch_block *blocks, int64_t nblocks, int64_t *segments,
                           kvp_diag *diag);

/* ---- vLLM's KV cache manager beyond the pool (vllm_kv.c) ---------------- */

/* What the ledger's evaluation calls of it is private to the core (vllm_kv.h). */

/* vLLM's startup check of the KV memory (_check_enough_kv_cache_memory). */
typedef struct kvp_vllm_start {
  int32_t starts;         /* one request of max_model_len fits on every worker */
  int32_t stage;          /* the worker (pipeline stage) that decides */
  int64_t needed;         /* bytes one request of max_model_len needs there */
  int64_t available;      /* bytes of KV memory the check plans against there */
  int64_t max_model_len;  /* vLLM's estimate of the longest max_model_len that fits
                           * (the figure its startup error suggests), the fewest
                           * over the workers; max_model_len when it starts */
} kvp_vllm_start;
/* KVP_EINVAL under another budget rule or allocation; all 0 when the
 * deployment does not fit. */
kvp_err kvp_vllm_check(const kvp_ledger *l, kvp_vllm_start *out);

/* One worker of pipeline stage s as vLLM leaves it (get_kv_cache_configs). */
typedef struct kvp_vllm_stage {
  int32_t stage;
  int64_t first, layers;  /* its layers */
  int64_t gpu_bytes;      /* its GPU's memory (the smallest of the stage's) */
  int64_t weights;        /* weight bytes on it */
  int64_t kv_budget;      /* its KV memory */
  int64_t block_bytes;    /* one block on it */
  int64_t group_size;     /* hybrid: layer slots of a group, the tensors it holds */
  int64_t own_blocks;     /* blocks its memory holds */
  int64_t blocks;         /* blocks after the engine takes the fewest over workers */
  int64_t tensors;        /* KV cache tensors it allocates */
  int64_t tensor_bytes;   /* hybrid: bytes of each (page x blocks); else 0 */
  int64_t pool_bytes;     /* blocks x block_bytes: what it allocates for KV */
  int64_t unused_bytes;   /* KV memory left unallocated by the minimum */
} kvp_vllm_stage;
/* gpu_bytes > 0: one GPU of the stage with that much memory (workers with
 * unequal memory; its own blocks and KV memory by vLLM's rule); 0: the
 * stage's smallest GPU. */
kvp_err kvp_vllm_worker(const kvp_ledger *l, int32_t s, int64_t gpu_bytes, kvp_vllm_stage *out);

#include "starts.h"
#include "sweep.h"
#include "optim.h"
#include "roofline.h"
#include "sim.h"
#include "scan.h"

#endif
