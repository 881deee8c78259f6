/*
 * deploy.c: a deployment's defaults, names and checks.
 * Pure computation: no Lua, no I/O.
 *
 * Every field of a kvp_deploy is checked here once, before any ledger is
 * evaluated: the model, GPU memory, parallelism, formats, the budget rule's
 * inputs and the optimization fields (kvp_optim_check). The ledger
 * (ledger.c) and the sweep (sweep.c) build on this file; it needs only the
 * formats and the model (format.c, model.c) and none of the accounting, so
 * dependencies run one way: optim, format, model -> deploy -> ledger -> sweep.
 */
#include <stddef.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

void kvp_deploy_defaults(kvp_deploy *d) {
  memset(d, 0, sizeof *d);
  d->tp = d->pp = 1;
  d->kv = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d->weights = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  d->utilization = 0.9;
  d->block = KVP_DEFAULT_BLOCK;
  d->max_num_batched_tokens = 1;
}

const char *kvp_budget_name(kvp_budget b) {
  static const char *const names[KVP_NBUDGETS] = {"vllm", "sglang", "trtllm"};
  return (b >= 0 && b < KVP_NBUDGETS) ? names[b] : "unknown";
}

const char *kvp_alloc_name(kvp_alloc a) {
  static const char *const names[KVP_NALLOCS] = {"paged", "contiguous"};
  return (a >= 0 && a < KVP_NALLOCS) ? names[a] : "unknown";
}

/* vLLM's switches and overrides: vLLM's names, vLLM's budget. */
static kvp_err check_vllm(const kvp_deploy *d, kvp_diag *diag) {
  const kvp_vllm *v = &d->vllm;
  TRY(kvp_check_count(v->blocks_override, 0, "num_gpu_blocks_override", diag));
  TRY(kvp_check_count(v->kv_cache_bytes, 0, "kv_cache_memory_bytes", diag));
  if (v->system_rule < KVP_SYS_CHECK || v->system_rule > KVP_SYS_NONE)
    return kvp_fail(diag, KVP_EINVAL, "field 'vllm_system_rule' must be 0, 1 or 2, got %lld",
                    (long long)v->system_rule);
  TRY(kvp_check_count(v->max_num_seqs, 0, "max_num_seqs", diag));
  TRY(kvp_check_count(v->dcp, 0, "decode_context_parallel_size", diag));
  TRY(kvp_check_count(v->pcp, 0, "prefill_context_parallel_size", diag));
  TRY(kvp_check_count(v->dp, 0, "data_parallel_size", diag));
  TRY(kvp_check_count(v->stride_align, 0, "block_stride_alignment", diag));
  TRY(kvp_check_count(v->mla_entry_align, 0, "vllm_mla_entry_align", diag));
  TRY(kvp_check_count(v->rotary_bytes, 0, "vllm_rotary_bytes", diag));
  TRY(kvp_check_count(v->alloc_bytes, 0, "sglang_alloc_bytes", diag));
  if (v->stride_align > 0 && !kvp_optim_plain(d))
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'block_stride_alignment' with optimizations (eviction, speculative "
                    "decoding, sharing, KIVI, length points) is not modelled");
  if (v->mamba_mode < KVP_MAMBA_NONE || v->mamba_mode > KVP_MAMBA_ALL)
    return kvp_fail(diag, KVP_EINVAL, "field 'mamba_cache_mode' must be none, align or all");
  TRY(kvp_check_count(v->mamba_chunk, 0, "mamba_block_size", diag));
  int64_t kinds[KVP_NKINDS];
  kvp_model_kind_counts(&d->model, kinds);
  /* a model of Mamba layers alone takes the cache's block (MambaModelConfig) */
  int attention = kinds[KVP_STATE] + kinds[KVP_NONE] < d->model.layers;
  if (v->mamba_mode == KVP_MAMBA_ALL && v->mamba_chunk < 1 && attention)
    return kvp_fail(diag, KVP_EINVAL,
                    "mamba_cache_mode 'all' aligns the block to the Mamba chunk: give "
                    "mamba_block_size (vLLM's --mamba-block-size, or the config's chunk_size)");
  TRY(kvp_check_count(v->experts, 0, "experts", diag));
  TRY(kvp_check_count(v->expert_bytes, 0, "expert bytes", diag));
  if (v->ep != 0 && v->ep != 1)
    return kvp_fail(diag, KVP_EINVAL, "field 'enable_expert_parallel' must be true or false, got %d",
                    (int)v->ep);
  if ((v->ep || v->expert_bytes > 0) && v->experts < 1)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'enable_expert_parallel' needs a MoE model (routed experts), got none");
  if (v->disable_hybrid != 0 && v->disable_hybrid != 1)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'disable_hybrid_kv_cache_manager' must be true or false, got %d",
                    (int)v->disable_hybrid);
  static const int64_t unset[KVP_MAX_PP];
  int any_stage = memcmp(v->stage_gpu_bytes, unset, sizeof unset) != 0; /* usually none */
  for (int s = 0; s < KVP_MAX_PP && any_stage; s++) {
    if (v->stage_gpu_bytes[s] == 0) continue; /* unset: nothing to check (sweeps check often) */
    TRY(kvp_check_count(v->stage_gpu_bytes[s], 0, "stage gpu memory", diag));
    if (s >= d->pp)
      return kvp_fail(diag, KVP_EINVAL, "gpu memory given for pipeline stage %d of %lld", s + 1,
                      (long long)d->pp);
    TRY(kvp_check_count(v->stage_activation_bytes[s], 0, "stage activation", diag));
    if (s >= d->pp && v->stage_activation_bytes[s] != 0)
      return kvp_fail(diag, KVP_EINVAL, "activation given for pipeline stage %d of %lld", s + 1,
                      (long long)d->pp);
  }
  if (v->lora.max_loras != 0) {
    int64_t per;
    TRY(kvp_lora_layer_bytes(&v->lora, d->tp, &per, diag));
  }
  const char *set = v->disable_hybrid ? "disable_hybrid_kv_cache_manager"
                    : v->blocks_override ? "num_gpu_blocks_override"
                    : v->kv_cache_bytes ? "kv_cache_memory_bytes"
                    : v->dcp > 1 ? "decode_context_parallel_size"
                    : v->pcp > 1 ? "prefill_context_parallel_size"
                    : v->dp > 1 ? "data_parallel_size"
                    : v->ep ? "enable_expert_parallel"
                    : v->stride_align ? "block_stride_alignment"
                    : v->mamba_mode ? "mamba_cache_mode"
                    : v->lora.max_loras ? "enable_lora" : NULL;
  if (set != NULL && (d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED))
    return kvp_fail(diag, KVP_EINVAL,
                    "field '%s' is a vLLM option and needs budget 'vllm' with paged allocation, "
                    "got budget '%s', allocation '%s'", set, kvp_budget_name(d->budget),
                    kvp_alloc_name(d->alloc));
  if (v->rotary_bytes > 0 && d->budget == KVP_BUDGET_TRTLLM)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'vllm_rotary_bytes' is vLLM's and SGLang's (their rotary caches in the "
                    "loaded weights) and needs budget 'vllm' or 'sglang', got budget '%s'",
                    kvp_budget_name(d->budget));
  if (v->alloc_bytes > 0 && d->budget != KVP_BUDGET_SGLANG)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'sglang_alloc_bytes' is SGLang's (the caching allocator's segments "
                    "its free-memory reading counts in the weights) and needs budget 'sglang', "
                    "got budget '%s'", kvp_budget_name(d->budget));
  return KVP_OK;
}

/* SGLang's attention DP and EP: SGLang's names, SGLang's budget
 * (server_args.py: enable_dp_attention needs dp_size > 1 and tp_size %
 * dp_size == 0; moe_tp_size = tp_size // ep_size). */
static kvp_err check_sglang(const kvp_deploy *d, kvp_diag *diag) {
  const kvp_sglang_par *s = &d->sglang;
  TRY(kvp_check_count(s->attn_dp, 0, "dp_size", diag));
  TRY(kvp_check_count(s->ep, 0, "ep_size", diag));
  TRY(kvp_check_count(s->attn_bytes, 0, "attention bytes", diag));
  TRY(kvp_check_count(s->whole_bytes, 0, "embedding bytes", diag));
  TRY(kvp_check_count(s->replicas, 0, "dp_size", diag));
  if (s->attn_dp <= 1 && s->ep <= 1 && s->replicas <= 1) return KVP_OK;
  const char *set = s->attn_dp > 1 ? "enable_dp_attention" : s->ep > 1 ? "ep_size" : "dp_size";
  if (s->attn_dp > 1 && s->replicas > 1)
    return kvp_fail(diag, KVP_EINVAL, "dp_size: attention-DP ranks %lld or replicas %lld, not both",
                    (long long)s->attn_dp, (long long)s->replicas);
  /* ep alone is TensorRT-LLM's moe_ep_size too: the same layout, moe_ep x
   * moe_tp = tp (tensorrt_llm/mapping.py Mapping at 05ebebb2c1d3) */
  int trtllm_ep = d->budget == KVP_BUDGET_TRTLLM && s->attn_dp <= 1 && s->replicas <= 1;
  if (d->budget != KVP_BUDGET_SGLANG && !trtllm_ep && s->attn_dp <= 1 && s->replicas <= 1)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'ep_size' is SGLang's or TensorRT-LLM's and needs budget 'sglang' "
                    "or 'trtllm', got budget '%s'", kvp_budget_name(d->budget));
  if (d->budget != KVP_BUDGET_SGLANG && !trtllm_ep)
    return kvp_fail(diag, KVP_EINVAL,
                    "field '%s' is an SGLang option and needs budget 'sglang', got budget '%s'",
                    set, kvp_budget_name(d->budget));
  if (s->attn_dp > 1 && d->tp % s->attn_dp != 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "enable_dp_attention needs dp_size to divide tp: dp_size %lld, tp %lld",
                    (long long)s->attn_dp, (long long)d->tp);
  if (s->ep > 1 && d->vllm.experts < 1)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'ep_size' %lld needs a MoE model (routed experts), got none",
                    (long long)s->ep);
  if (s->ep > 1 && d->tp % s->ep != 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'ep_size' must divide tp (moe_tp_size = tp_size / ep_size): "
                    "ep_size %lld, tp %lld", (long long)s->ep, (long long)d->tp);
  return KVP_OK;
}

kvp_err kvp_deploy_check(const kvp_deploy *d, kvp_diag *diag) {
  TRY(kvp_model_check(&d->model, diag));
  int64_t kinds[KVP_NKINDS];
  kvp_model_kind_counts(&d->model, kinds);
  /* attention-free: vLLM keeps one null block and no KV (vllm_kv.c) */
  if (kinds[KVP_NONE] == d->model.layers &&
      (d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED))
    return kvp_fail(diag, KVP_EINVAL,
                    "model has no layer that holds KV or state: kvplan answers such "
                    "attention-free models under budget 'vllm' with paged allocation");
  return kvp_deploy_check_numbers(d, diag);
}

kvp_err kvp_deploy_check_numbers(const kvp_deploy *d, kvp_diag *diag) {
  TRY(kvp_check_count(d->gpu_bytes, 1, "gpu memory", diag));
  TRY(kvp_check_count(d->tp, 1, "tp", diag));
  TRY(kvp_check_count(d->pp, 1, "pp", diag));
  if (d->pp > KVP_MAX_PP)
    return kvp_fail(diag, KVP_EINVAL, "field 'pp' must be at most %d, got %lld", KVP_MAX_PP,
                    (long long)d->pp);
  TRY(kvp_format_check(&d->kv, "kv", diag));
  TRY(kvp_format_check(&d->weights, "weights", diag));
  TRY(kvp_check_count(d->weight_bytes, 0, "weight_bytes", diag));
  TRY(kvp_check_count(d->replicated.params, 0, "replicated_params", diag));
  TRY(kvp_check_count(d->replicated.shards, 0, "replicated_shards", diag));
  TRY(kvp_check_count(d->replicated.cols, 0, "replicated_cols", diag));
  TRY(kvp_check_count(d->replicated.bytes, 0, "replicated_bytes", diag));
  TRY(kvp_check_count(d->replicated.matmul, 0, "replicated_matmul", diag));
  if (d->replicated.matmul > d->replicated.params)
    return kvp_fail(diag, KVP_EINVAL, "field 'replicated_matmul' (%lld) must be at most "
                    "'replicated_params' (%lld): the replicated linear layers are part of them",
                    (long long)d->replicated.matmul, (long long)d->replicated.params);
  if (!(d->utilization > 0.0 && d->utilization <= 1.0))
    return kvp_fail(diag, KVP_EINVAL, "field 'utilization' must be in (0, 1], got %g",
                    kvp_shown(d->utilization));
  TRY(kvp_check_count(d->activation_bytes, 0, "activation", diag));
  TRY(kvp_check_count(d->overhead_bytes, 0, "overhead", diag));
  TRY(kvp_check_count(d->system_bytes, 0, "system_memory", diag));
  TRY(kvp_check_count(d->block, 1, "block", diag));
  TRY(kvp_check_count(d->max_num_batched_tokens, 1, "max_num_batched_tokens", diag));
  TRY(kvp_check_count(d->max_model_len, 0, "max_model_len", diag));
  TRY(kvp_optim_check(d, d->max_model_len ? d->max_model_len : d->model.max_context, diag));
  TRY(check_vllm(d, diag));
  TRY(check_sglang(d, diag));
  return KVP_OK;
}

kvp_err kvp_deploy_weight_bytes(const kvp_deploy *d, int64_t *bytes) {
  if (d->weight_bytes > 0) {
    *bytes = d->weight_bytes;
    return KVP_OK;
  }
  /* NVFP4's per-shard scales, GPTQ act order's g_idx over the model's linear
   * layers (kvp_format_weight_bytes) */
  return kvp_format_weight_bytes(&d->weights, d->model.params, d->model.linear_shards,
                                 d->model.linear_cols, bytes);
}

kvp_err kvp_deploy_replicated_bytes(const kvp_deploy *d, int64_t total, int64_t *bytes) {
  const kvp_replicated *r = &d->replicated;
  *bytes = 0;
  if (d->tp <= 1 || (r->params == 0 && r->bytes == 0)) return KVP_OK;
  int64_t b = r->bytes;
  if (b == 0) {
    kvp_err e = kvp_format_weight_bytes(&d->weights, r->params, r->shards, r->cols, &b);
    if (e != KVP_OK) return e;
  }
  *bytes = b < total ? b : total;
  return KVP_OK;
}

/* ---- checks ---------------------------------------------------------------- */

int kvp_optim_plain(const kvp_deploy *d) {
  return d->alloc == KVP_ALLOC_PAGED && d->kv_recent == 0 && d->evict.recent == 0 &&
         d->evict.keep_ppm == 0 && d->evict.nlevel == 0 && d->spec.tokens == 0 &&
         d->spec.draft_layers == 0 && d->prefix == 0 && d->samples <= 1 &&
         d->nlen == 0;
}

/* A token count no longer than the context, when the context is known. */
static kvp_err check_window(int64_t v, const char *field, int64_t max_len, const char *why,
                            kvp_diag *diag) {
  TRY(kvp_check_count(v, 0, field, diag));
  if (max_len > 0 && v > max_len)
    return kvp_fail(diag, KVP_EINVAL, "field '%s' (%lld tokens) exceeds max_model_len %lld: %s",
                    field, (long long)v, (long long)max_len, why);
  return KVP_OK;
}

static kvp_err check_evict(const kvp_deploy *d, int64_t max_len, kvp_diag *diag) {
  const kvp_evict *e = &d->evict;
  TRY(kvp_check_count(e->sinks, 0, "sinks", diag));
  TRY(kvp_check_count(e->recent, 0, "recent", diag));
  if (e->keep_ppm < 0 || e->keep_ppm > KVP_PPM)
    return kvp_fail(diag, KVP_EINVAL, "field 'keep' must be in (0, 1], got %g",
                    (double)e->keep_ppm / KVP_PPM);
  if (e->sinks > 0 && e->recent == 0 && e->keep_ppm == 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'sinks' (%lld) needs a recent window or a keep ratio beside it",
                    (long long)e->sinks);
  int64_t window;
  if (!chk_add(e->sinks, e->recent, &window)) window = INT64_MAX;
  if (max_len > 0 && window > max_len)
    return kvp_fail(diag, KVP_EINVAL,
                    "eviction window sinks + recent = %lld tokens exceeds max_model_len %lld: "
                    "it would evict nothing", (long long)window, (long long)max_len);
  if (e->nlevel < 0 || e->nlevel > KVP_MAX_EVICT_LEVELS)
    return kvp_fail(diag, KVP_EINVAL, "per-layer budgets: %d levels, at most %d", (int)e->nlevel,
                    KVP_MAX_EVICT_LEVELS);
  for (int j = 0; j < e->nlevel; j++)
    if (e->level[j] < 1)
      return kvp_fail(diag, KVP_EINVAL, "per-layer budget %d must be >= 1 token, got %lld", j + 1,
                      (long long)e->level[j]);
  /* without levels the per-layer indexes are never read */
  for (int64_t i = 0; e->nlevel > 0 && i < d->model.layers && i < KVP_MAX_LAYERS; i++)
    if (e->layer[i] > e->nlevel)
      return kvp_fail(diag, KVP_EINVAL, "layer %lld has eviction level %d of %d", (long long)i + 1,
                      (int)e->layer[i], (int)e->nlevel);
  return KVP_OK;
}

static kvp_err check_spec(const kvp_deploy *d, kvp_diag *diag) {
  const kvp_spec *s = &d->spec;
  TRY(kvp_check_count(s->tokens, 0, "speculative.tokens", diag));
  TRY(kvp_check_count(s->draft_layers, 0, "speculative.draft_layers", diag));
  TRY(kvp_check_count(s->draft_weight_bytes, 0, "speculative.draft_weight_bytes", diag));
  TRY(kvp_check_count(s->draft_hidden, 0, "speculative.draft_hidden", diag));
  if ((s->draft_layers > 0 || s->draft_weight_bytes > 0) && s->tokens == 0)
    return kvp_fail(diag, KVP_EINVAL, "field 'speculative.tokens' must be >= 1 with a draft, got 0");
  if (s->draft_layers == 0) return KVP_OK;
  const kvp_layer *l = &s->draft;
  if (l->kind == KVP_FULL) {
    if (l->kv_heads < 1 || l->head_dim < 1 || l->head_dim_v < 1)
      return kvp_fail(diag, KVP_EINVAL,
                      "draft layer needs kv_heads, head_dim and head_dim_v >= 1, got %lld, %lld, %lld",
                      (long long)l->kv_heads, (long long)l->head_dim, (long long)l->head_dim_v);
  } else if (l->kind == KVP_MLA) {
    if (l->latent < 1 || l->rope_dim < 0)
      return kvp_fail(diag, KVP_EINVAL, "draft MLA layer needs kv_lora_rank >= 1, got %lld",
                      (long long)l->latent);
  } else {
    return kvp_fail(diag, KVP_EINVAL, "a draft layer must be full attention or MLA, got %s",
                    kvp_kind_name(l->kind));
  }
  return KVP_OK;
}

kvp_err kvp_optim_check(const kvp_deploy *d, int64_t max_len, kvp_diag *diag) {
  if (d->budget < 0 || d->budget >= KVP_NBUDGETS)
    return kvp_fail(diag, KVP_EINVAL, "field 'budget' must be vllm, sglang or trtllm, got %d",
                    (int)d->budget);
  TRY(kvp_check_count(d->max_kv_tokens, 0, "max_kv_tokens", diag));
  if (d->max_kv_tokens > 0 && d->budget != KVP_BUDGET_TRTLLM)
    return kvp_fail(diag, KVP_EINVAL,
                    "field 'max_kv_tokens' is TensorRT-LLM's max_tokens and needs budget "
                    "'trtllm', got budget '%s'", kvp_budget_name(d->budget));
  if (d->alloc < 0 || d->alloc >= KVP_NALLOCS)
    return kvp_fail(diag, KVP_EINVAL, "field 'allocation' must be paged or contiguous, got %d",
                    (int)d->alloc);
  if (d->alloc == KVP_ALLOC_CONTIGUOUS && max_len == 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "contiguous allocation reserves max_model_len per request: set "
                    "max_model_len (the model gives no max context)");
  TRY(check_window(d->kv_recent, "kv_recent", max_len, "a full-precision window longer than "
                   "any request quantizes nothing", diag));
  if (d->kv_recent > 0) TRY(kvp_format_check(&d->kv_full, "kv_full", diag));
  TRY(check_evict(d, max_len, diag));
  TRY(check_spec(d, diag));
  TRY(check_window(d->prefix, "prefix", max_len, "no request holds the whole prefix",
                   diag));
  TRY(kvp_check_count(d->samples, 0, "samples", diag));
  TRY(check_window(d->prompt, "prompt", max_len, "no request holds the whole prompt",
                   diag));
  TRY(check_window(d->output, "output", max_len, "no request holds that many tokens",
                   diag));
  if (d->prompt > 0 && d->output > 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "parallel sampling takes 'prompt' or 'output', not both (got %lld and %lld)",
                    (long long)d->prompt, (long long)d->output);
  TRY(kvp_check_count(d->host_bytes, 0, "host_bytes", diag));
  if (d->nlen < 0 || d->nlen > KVP_LEN_POINTS)
    return kvp_fail(diag, KVP_EINVAL, "field 'lengths' must hold 0..%d points, got %d",
                    KVP_LEN_POINTS, (int)d->nlen);
  for (int32_t i = 0; i < d->nlen; i++) {
    if (d->len[i] < 1)
      return kvp_fail(diag, KVP_EINVAL, "field 'lengths': point %d is %lld, expected >= 1",
                      (int)i + 1, (long long)d->len[i]);
    if (i > 0 && d->len[i] < d->len[i - 1])
      return kvp_fail(diag, KVP_EINVAL, "field 'lengths' must be sorted ascending (point %d)",
                      (int)i + 1);
  }
  return KVP_OK;
}
