/*
 * vllm_kv.c: what vLLM's KV cache manager decides beyond the pool's size:
 * the KV cache groups of a model of more than one KV type, the switches
 * that change how layers are allocated, the longest max_model_len its
 * startup check accepts, and each worker's view of the pool. The ledger
 * (ledger.c) calls it through vllm_kv.h; it calls nothing of the ledger.
 * Pure computation: no Lua, no I/O.
 *
 * Hybrid models under vLLM (budget vllm, paged) follow V1's hybrid KV cache
 * manager, vllm-project/vllm commit 001cabc1be16 (vllm/v1/core/
 * kv_cache_utils.py get_kv_cache_groups, unify_kv_cache_spec_page_size,
 * _get_kv_cache_groups_uniform_page_size, get_kv_cache_config_from_groups,
 * get_kv_cache_configs; vllm/v1/kv_cache_interface.py):
 *   - Layers whose KV specs are one type stay one group with per-layer pages,
 *     the ledger's rule (ledger.c): all full attention and MLA (UniformTypeKVCacheSpecs:
 *     MLAAttentionSpec is a FullAttentionSpec), all sliding with one window,
 *     all chunked with one chunk, all Mamba. Anything else is hybrid.
 *   - A type is one KVCacheSpec: kind, window, KV heads per GPU, head sizes,
 *     latent, state bytes per GPU. With a speculative draft its layers join
 *     the types after the target's (gpt-oss-20b + EAGLE is 12 sliding + 13
 *     full in vLLM's own comment).
 *   - Mamba states (HybridAttentionMambaModelConfig, vllm/model_executor/
 *     models/config.py at 1936cf3841ed, the branch without prefix caching):
 *     block = max(block, a * ceil(S / (a * A1))), S the state page, A1 the
 *     bytes of one token of the attention layer (the largest when several),
 *     a = 16 (64 for MLA) the kernel's block alignment; the state page is
 *     padded to block * A1. A state group holds 1 + g blocks per request
 *     (mamba_cache_mode "none": MambaSpec.max_memory_usage_bytes; g =
 *     num_speculative_blocks = the speculative tokens) and its block size is
 *     max_model_len (MambaModelConfig sets mamba_block_size so). Blackwell's
 *     alignment of 32 for head size 256 and the "align"/"all" modes of Mamba
 *     prefix caching are not modelled. From vllm-project/vllm#37467
 *     (vllm/platforms/interface.py _align_hybrid_block_size at c77619938d1c,
 *     option block_grain) a is max(16 or 64, the given block): a block of
 *     32 grows in steps of 32.
 *   - Unequal attention pages: the smaller ones' block sizes are multiplied
 *     up to the largest page; a non-MLA page that does not divide it keeps
 *     its block and is padded to it (vllm commit 002f10e0cfa1
 *     unify_kv_cache_spec_page_size); an MLA page that does not is refused,
 *     unless the others are sliding layers, which are then allocated as full
 *     attention (kvp_vllm_promote).
 *   - vLLM's switches and overrides (disable_hybrid_kv_cache_manager,
 *     num_gpu_blocks_override, kv_cache_memory_bytes, max_num_seqs, workers
 *     with unequal memory) and the lookahead cap at max_model_len: below.
 *   - group_size G = the fewest layers of a type, or the most when that is
 *     below 1.5 times the fewest; a type of c layers makes ceil(c / G)
 *     groups, group i taking its layers i, i + groups, ... (padding: the
 *     groups of a type hold ceil(c / G) * G layer slots).
 *   - Each GPU holds G_s tensors of num_blocks pages, G_s = the most layers
 *     of one group on it: num_blocks = budget // page // G_s, the fewest over
 *     the pipeline stages, block 0 the null block. One block in the pool is
 *     one page in each of the G_s tensors: block_bytes = page * G_s.
 *   - A request of n tokens takes, in each group, the blocks its type needs
 *     (kvp_layer_blocks for attention; 1 + g for a state): concurrency =
 *     (num_blocks - 1) // (sum over groups). Its bytes are those blocks
 *     times block_bytes, so the ledger's byte arithmetic serves both rules.
 *   - vLLM logs "GPU KV cache size" = num_blocks // groups * the smallest
 *     block, and "Maximum concurrency" = num_blocks / the blocks of a
 *     max_model_len request by each group's max_memory_usage_bytes
 *     (kvp_ledger_vllm_log).
 * Per-layer eviction budgets and KIVI's two formats give layers of one group
 * different block counts or page sizes, which one block table cannot hold:
 * with them the ledger keeps the per-layer rule (an ideal allocator).
 * SGLang's and TensorRT-LLM's budgets keep per-layer pages.
 *
 * Sources, vllm-project/vllm at commit 002f10e0cfa1 (the newest read) unless
 * named otherwise:
 *   - disable_hybrid_kv_cache_manager (vllm/config/scheduler.py): vllm/v1/
 *     core/kv_cache_utils.py unify_hybrid_kv_cache_specs and
 *     _promote_local_kv_cache_specs: when full attention (MLA included)
 *     sits beside sliding-window or chunked local layers, those are
 *     allocated as full attention (blocks for every token; their compute
 *     keeps the window); a model that still holds more than one type (Mamba
 *     beside attention, two windows without full layers) is refused with
 *     "Hybrid KV cache manager is disabled but failed to convert the KV
 *     cache specs to one unified type".
 *   - the same promotion is the fallback of get_kv_cache_groups when an MLA
 *     page does not divide the largest page and the other layers are
 *     regular sliding-window ones (_try_get_full_allocation_fallback_groups:
 *     no chunked layers, no state);
 *   - num_gpu_blocks_override (vllm/config/cache.py): may_override_num_blocks
 *     replaces the blocks every worker computed;
 *   - kv_cache_memory_bytes (vllm/config/cache.py; present at 001cabc1be16,
 *     absent from older releases): the KV budget of every GPU; when set,
 *     gpu_memory_utilization plays no part (its CacheConfig documentation;
 *     vllm/v1/worker/gpu_worker.py determine_available_memory returns it);
 *   - max_num_seqs (vllm/config/scheduler.py): the scheduler runs at most
 *     that many requests, whatever the KV pool holds;
 *   - lookahead slots: KVCacheManager.allocate_slots allocates
 *     min(computed + new + lookahead, max_model_len) token slots
 *     (vllm/v1/core/kv_cache_manager.py), so speculative slots stop at
 *     max_model_len (ledger.c applies it);
 *   - the startup check and its estimate: _check_enough_kv_cache_memory
 *     raises when one request of max_model_len needs more than a worker's
 *     KV memory, and suggests "the estimated maximum model length", a
 *     binary search over [1, max_model_len] of
 *     _max_memory_usage_bytes_from_groups <= available memory
 *     (_estimate_max_model_len_from_groups), the fewest over the workers:
 *     per-layer specs (one KV type) sum each layer's max_memory_usage_bytes;
 *     groups take group_size x page x the sum over groups of
 *     cdiv(max_memory_usage_bytes, page). max_memory_usage_bytes
 *     (vllm/v1/kv_cache_interface.py): full cdiv(len, block) pages, sliding
 *     cdiv(min(W - 1 + max_num_batched_tokens, len), block) + 1, chunked
 *     cdiv(min(C + max_num_batched_tokens, len), block), Mamba 1 + the
 *     speculative blocks. The memory it plans against is the worker's KV
 *     memory; from the releases of vllm-project/vllm#41069 (merged
 *     2026-04-28) num_gpu_blocks_override blocks when that is set, and from
 *     those of #47272 (merged 2026-08-20 as 76fb6d210a57, first tagged
 *     v0.28.1rc0 / v0.29.0rc1) one pool block less, the null block BlockPool
 *     holds back (check_memory below; the releases: engines.lua).
 *   - the minimum over workers: get_kv_cache_configs sets every worker's
 *     num_blocks to the fewest and shrinks its tensors to that many blocks.
 *   - decode context parallelism (decode_context_parallel_size, vllm/config/
 *     parallel.py): the dcp ranks of a TP group that would hold copies of
 *     the same KV heads hold different tokens instead. A block of the pool
 *     covers block x dcp tokens of a request, `block` on each rank
 *     (SingleTypeKVCacheManager: block_size *= dcp_world_size x
 *     pcp_world_size), so a request of n tokens takes cdiv(n, block x dcp)
 *     blocks of the same per-rank pages; FullAttentionSpec.
 *     max_memory_usage_bytes counts cdiv(max_model_len, dcp) tokens and
 *     "GPU KV cache size" is multiplied by dcp (_report_kv_cache_config).
 *     Sliding windows refuse it (SlidingWindowSpec asserts
 *     decode_context_parallel_size == 1). Prefill context parallelism
 *     (prefill_context_parallel_size, vllm/config/parallel.py) adds pcp
 *     ranks of tp x pp GPUs each (the world grows to tp x pp x pcp; vLLM's
 *     RFC vllm-project/vllm#25749 and the vllm-ascend context parallel
 *     design) that shard the KV along the sequence like dcp: block_size *=
 *     dcp x pcp, max_memory_usage_bytes counts cdiv(max_model_len, dcp x pcp)
 *     tokens (kv_cache_interface.py at 001cabc1be16), "GPU KV cache size" is
 *     multiplied by pcp x dcp (_report_kv_cache_config). Weights are whole
 *     on every pcp rank (its tp share); kvplan's answers are per engine of
 *     tp x pp x pcp GPUs, full attention and MLA layers only. Constraints (vLLM's context
 *     parallel guide, docs.vllm.ai/projects/ascend user_guide/feature_guide/
 *     context_parallel): tp % dcp == 0; MLA holds one latent on every rank,
 *     so any such dcp; GQA needs dcp copies of each head, dcp dividing
 *     tp / kv_heads. kvplan models it for full attention and MLA layers,
 *     and for Mamba layers beside them, whose groups keep their block and
 *     state at dcp 1 (dcp_world_size_for_kv_cache_spec: plan_groups).
 *   - MLA attention backends that address blocks by a fixed stride report a
 *     block_stride_alignment (MLAAttentionSpec); the pool's bytes a block
 *     are rounded up to the lcm of those alignments
 *     (_get_kv_cache_bytes_per_block at 002f10e0cfa1). kvplan takes it as
 *     the option block_stride_alignment (the backend's value, bytes) on
 *     stages that hold MLA layers; it needs full and MLA layers alone or
 *     vLLM's hybrid groups, and no optimization.
 *   - models of recurrent layers alone (Mamba, Mamba2) with mamba_cache_mode
 *     align or all (prefix caching; MambaModelConfig.verify_and_update_config,
 *     vllm/model_executor/models/config.py): mamba_block_size is the user's,
 *     else the cache's block_size (16), and MambaSpec pages of that block:
 *     align keeps 2 + the speculative states a request, all one state every
 *     block (cdiv(n, block), MambaSpec.max_memory_usage_bytes), "GPU KV cache
 *     size" counts that block a page. vLLM turns all into align for
 *     architectures without supports_mamba_prefix_caching; kvplan takes the
 *     mode it is given.
 *   - models of recurrent layers alone (Mamba, Mamba2): one KV type of
 *     MambaSpec pages, the page the state's bytes (page_size_bytes: the
 *     sum of its shapes' bytes), num_blocks = budget // the pages of all
 *     layers, the null block kept, a request taking 1 + the speculative
 *     blocks (max_memory_usage_bytes, mamba_cache_mode "none"), block size
 *     max_model_len (MambaModelConfig), which "GPU KV cache size" counts.
 *     A model without any KV layer is attention-free: no groups, one block
 *     (get_kv_cache_config_from_groups), no memory check; nothing in the KV
 *     cache limits its requests.
 *   - data and expert parallelism (data_parallel_size, enable_expert_parallel,
 *     vllm/config/parallel.py; vllm/model_executor/layers/fused_moe/config.py
 *     FusedMoEParallelConfig.make): dp engines of tp x pp GPUs, each with
 *     its own scheduler, requests and KV pool, attention and dense layers
 *     whole in every engine (split over its tp). The routed experts of MoE
 *     layers are cut across all dp x tp GPUs of a stage
 *     (flatten_tp_across_dp): split like tensor parallelism without expert
 *     parallelism, whole experts with it (ep_size = dp x tp; the fullest
 *     GPU holds ceil(experts / ep_size)). KV per GPU is the engine's: the
 *     ledger's answers are per engine, dp engines serve dp times the
 *     requests.
 *   - SGLang's attention data parallelism and expert parallelism
 *     (enable_dp_attention, dp_size, ep_size; kvp_sglang_par): dp_size
 *     ranks inside the tp GPUs, each with its own scheduler, requests and
 *     KV pool (max_running_requests // dp_size a rank, managers/
 *     tp_worker.py), the attention over tp / dp_size ranks (its KV heads
 *     too: MHATokenToKVPool head_num get_num_kv_heads(
 *     get_attention_tp_size()), the embedding whole, the rest over tp; the
 *     routed experts whole on ep_size ranks or split over tp. The
 *     ledger's answers are per DP rank, as vLLM's per engine.
 *   - TurboQuant KV formats (kv_cache_dtype turboquant_k8v4, _4bit_nc,
 *     _k3v4_nc, _3bit_nc; vllm/model_executor/layers/quantization/
 *     turboquant/config.py at 1471680b2471): Attention.get_kv_cache_spec
 *     returns TQFullAttentionSpec for full attention layers, a page of
 *     block x kv_heads x slot_size_aligned bytes (kv.c). Dense models keep
 *     their first and last min(2, layers / 2) layers unquantized
 *     (TurboQuantConfig.get_boundary_skip_layers, merged into
 *     kv_cache_dtype_skip_layers: those layers' KV in the model dtype, 16
 *     bits); hybrid models (recurrent layers) keep none. The layers stay one
 *     KV type of FullAttentionSpec pages (UniformTypeKVCacheSpecs when the
 *     pages differ). kvplan refuses TurboQuant beside sliding, chunked,
 *     cross or MLA layers and with a draft model: not modelled.
 *   - static attention sinks (SinkFullAttentionSpec, vllm/v1/kv_cache_interface.py
 *     at 001cabc1be16; StaticSinkAttention, vllm/model_executor/layers/
 *     attention/static_sink_attention.py; openPangu's param_sink_number):
 *     full-attention pages, but the group's manager (SinkFullAttentionManager,
 *     vllm/v1/core/single_type_kv_cache_manager.py) asserts sink_len is a
 *     positive multiple of its block and takes sink_len / block blocks from the
 *     pool's free queue once, when it is built, right after the null block
 *     (the sink's slots are block .. block + sink_len - 1). Every group of such
 *     layers takes its own; the startup check (max_memory_usage_bytes,
 *     FullAttentionSpec's) counts no sink, nor does "GPU KV cache size"
 *     (all blocks); the requests share what is left.
 */
#include <stddef.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"
#include "core.h"
#include "vllm_kv.h"

static int full_like(kvp_kind k) { return k == KVP_FULL || k == KVP_MLA; }

/* ---- the hybrid KV cache manager's groups ------------------------------- */

/* One vLLM KVCacheSpec at tensor parallelism tp: the same kind, window,
 * head sizes and latent, and the same heads (or state bytes) per GPU. */
static int same_spec(const kvp_layer *a, const kvp_layer *b, int64_t tp) {
  if (a->kind != b->kind || a->window != b->window || a->head_dim != b->head_dim ||
      a->head_dim_v != b->head_dim_v || a->latent != b->latent || a->rope_dim != b->rope_dim ||
      a->index_dim != b->index_dim || a->kv_auto != b->kv_auto || a->sink != b->sink)
    return 0;
  if (a->kind == KVP_STATE)
    return a->state_bytes / a->kv_heads * kvp_kv_heads_per_gpu(a->kv_heads, tp) ==
           b->state_bytes / b->kv_heads * kvp_kv_heads_per_gpu(b->kv_heads, tp);
  return kvp_kv_heads_per_gpu(a->kv_heads, tp) == kvp_kv_heads_per_gpu(b->kv_heads, tp);
}

/* One uniform type (UniformTypeKVCacheSpecs.is_uniform_type): full and MLA,
 * sliding of one window, chunked of one chunk, Mamba. */
static int same_class(const kvp_layer *a, const kvp_layer *b) {
  if (full_like(a->kind) || full_like(b->kind)) return full_like(a->kind) && full_like(b->kind);
  return a->kind == b->kind && a->window == b->window;
}

/* Add `count` layers of shape ly to the ledger's types; returns the type. */
static int32_t add_type(kvp_ledger *l, const kvp_layer *ly, int64_t count, int draft) {
  kvp_kv_type *type = ledger_types_of(l);
  int32_t t = 0;
  while (t < l->ntype && !same_spec(&type[t].shape, ly, l->d.tp)) t++;
  if (t == l->ntype) {
    if (t == l->cap_types) return -1; /* kvp_ledger_size gave no room: a bug */
    memset(&type[t], 0, sizeof type[t]);
    type[t].shape = *ly;
    type[t].draft_only = draft;
    l->ntype++;
  } else if (!draft) {
    type[t].draft_only = 0;
  }
  type[t].layers += count;
  return t;
}

/* The hidden-state cache of extract_hidden_states beside a hybrid target
 * (HiddenStateCacheSpec, an MLAAttentionSpec of n x hidden elements a token
 * in the model dtype): vLLM leaves it out of the target's grouping and page
 * unification and adds it back as its own group of one layer, its page
 * padded to the common page and its block the largest divisor of the gcd of
 * the target's group blocks that keeps block x its bytes a token within
 * that page (get_kv_cache_groups, vllm/v1/core/kv_cache_utils.py: "Add
 * hidden-state layers back with page aligned to the common page",
 * _largest_divisor_at_most; vllm-project/vllm#39949). A token wider than
 * the page (a block of 1 over it) is not modelled: vllm-project/vllm#50894
 * raises the target's blocks then. */
static kvp_err hidden_group(kvp_ledger *l, int32_t *draft_type, kvp_diag *diag) {
  const kvp_deploy *d = &l->d;
  int64_t g = 0, bits;
  for (int32_t t = 0; t < l->ntype; t++) {
    int64_t a = g, b = ledger_types_of(l)[t].block;
    while (b != 0) { int64_t r = a % b; a = b; b = r; }
    g = a;
  }
  int32_t t = add_type(l, &d->spec.draft, d->spec.draft_layers, 1);
  if (t < 0) return kvp_fail(diag, KVP_EINVAL, "more KV cache types than the ledger has room for");
  *draft_type = t;
  kvp_kv_type *ty = &ledger_types_of(l)[t];
  TRY(kvp_kv_token_bits(&ty->shape, &d->kv, d->tp, &bits));
  int64_t per_token = cdiv(bits, 8);
  if (per_token > l->page)
    return kvp_fail(diag, KVP_EINVAL,
                    "the hidden-state cache's %lld bytes a token exceed the KV page of %lld "
                    "bytes: vLLM then raises the target's blocks (vllm-project/vllm#50894), "
                    "not modelled", (long long)per_token, (long long)l->page);
  int64_t most = l->page / per_token, block = 1;
  for (int64_t c = min64(g, most); c > 0; c--)
    if (g % c == 0) {
      block = c;
      break;
    }
  ty->block = block;
  ty->page = l->page;
  ty->padded = block * per_token != l->page;
  return KVP_OK;
}

/* KV cache groups given by hand (kv_cache_groups), as vLLM's own tests build
 * a KVCacheConfig of KVCacheGroupSpec(layer_names, spec) with each group's
 * block_size (tests/v1/core/test_prefix_caching.py make_kv_cache_config_hybrid_model,
 * test_kv_cache_utils.py): each group one KV spec, its pages the block's;
 * every group's page must be the pool's (get_uniform_page_size asserts one
 * page size); the pool's block is group_size pages, group_size the most
 * layers of a group (get_kv_cache_config_from_groups). */
static kvp_err given_groups(kvp_ledger *l, kvp_diag *diag) {
  kvp_deploy *d = &l->d;
  const kvp_model *m = &d->model;
  const kvp_vllm *v = &d->vllm;
  if (d->spec.draft_layers > 0 || v->disable_hybrid || v->dcp > 1 || v->pcp > 1)
    return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups with %s: not modelled",
                    v->disable_hybrid ? "disable_hybrid_kv_cache_manager"
                    : d->spec.draft_layers > 0 ? "a speculative draft" : "context parallelism");
  if (v->ngiven > l->cap_types)
    return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: %d groups, at most %d", (int)v->ngiven,
                    (int)l->cap_types);
  kvp_kv_type *type = ledger_types_of(l);
  memset(type, 0, sizeof *type * (size_t)v->ngiven);
  for (int64_t i = 0; i < m->layers; i++) {
    const kvp_layer *ly = &m->spec[m->layer_spec[i]];
    int g = v->group_of[i];
    if (g == 0) {
      if (ly->kind == KVP_NONE) continue;
      return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: layer %lld (%s) is in no group "
                      "(vLLM asserts every layer is assigned to a group)", (long long)i + 1,
                      kvp_kind_name(ly->kind));
    }
    if (g > v->ngiven || ly->kind == KVP_NONE)
      return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: layer %lld %s", (long long)i + 1,
                      ly->kind == KVP_NONE ? "holds no KV cache" : "names no given group");
    kvp_kv_type *ty = &type[g - 1];
    if (ty->layers > 0 && !same_spec(&ty->shape, ly, d->tp))
      return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: group %d holds layers of two KV "
                      "specs (layer %lld is %s)", g, (long long)i + 1, kvp_kind_name(ly->kind));
    ty->shape = *ly;
    ty->layers++;
  }
  l->ntype = v->ngiven;
  l->page = 0;
  l->group_size = 0;
  l->ngroups = v->ngiven;
  l->min_block = INT64_MAX;
  for (int32_t t = 0; t < l->ntype; t++) {
    kvp_kv_type *ty = &type[t];
    if (ty->layers == 0)
      return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: group %d has no layer", (int)t + 1);
    ty->block = v->given_block[t] > 0 ? v->given_block[t] : d->block;
    ty->groups = 1;
    if (ty->shape.kind == KVP_STATE) {
      TRY(kvp_kv_state_bytes(&ty->shape, d->tp, &ty->page));
    } else {
      int64_t bits;
      TRY(kvp_kv_token_bits(&ty->shape, &d->kv, d->tp, &bits));
      TRY(kvp_page_bytes(bits, ty->block, &ty->page));
    }
    if (l->page == 0) l->page = ty->page;
    if (ty->page != l->page)
      return kvp_fail(diag, KVP_EINVAL, "kv_cache_groups: group %d has pages of %lld bytes, "
                      "group 1 of %lld: vLLM needs one page size (get_uniform_page_size)",
                      (int)t + 1, (long long)ty->page, (long long)l->page);
    l->group_size = max64(l->group_size, ty->layers);
    l->min_block = min64(l->min_block, ty->block);
  }
  l->hybrid = 1;
  return KVP_OK;
}

/* Allocate the ledger's sliding and chunked layers as full attention
 * (disable_hybrid_kv_cache_manager; fallback 1: the MLA + sliding fallback
 * of get_kv_cache_groups, KVP_EINVAL without a message when it does not
 * apply). Changes l->d.model; KVP_EINVAL when vLLM refuses. */
static kvp_err kvp_vllm_promote(kvp_ledger *l, int fallback, kvp_diag *diag) {
  kvp_model *m = &l->d.model;
  l->adjusted = 1; /* it may change the layers' kinds in l->d */
  int64_t used[KVP_MAX_SPECS] = {0};
  for (int64_t i = 0; i < m->layers; i++) used[m->layer_spec[i]]++;
  int full = 0, mla = 0, sliding = 0, chunked = 0, state = 0, cross = 0;
  int64_t window = -1;
  int windows = 0; /* distinct local kinds and windows */
  for (int k = 0; k < m->nspec; k++) {
    if (used[k] == 0) continue;
    const kvp_layer *ly = &m->spec[k];
    full |= full_like(ly->kind);
    mla |= ly->kind == KVP_MLA;
    state |= ly->kind == KVP_STATE;
    cross |= ly->kind == KVP_CROSS;
    if (ly->kind == KVP_SLIDING || ly->kind == KVP_CHUNKED) {
      sliding |= ly->kind == KVP_SLIDING;
      chunked |= ly->kind == KVP_CHUNKED;
      int64_t key = ly->window * 2 + (ly->kind == KVP_CHUNKED);
      if (key != window) windows++;
      window = key;
    }
  }
  if (l->d.spec.draft_layers > 0) {
    full = 1;
    mla |= l->d.spec.draft.kind == KVP_MLA;
  }
  if (fallback) {
    if (!(mla && sliding) || chunked || state || cross) return KVP_EINVAL;
  } else {
    /* one KV type already: nothing to do */
    int kinds = full + (windows > 0) + state + cross;
    if (kinds <= 1 && windows <= 1) return KVP_OK;
    if (!full || state || cross)
      return kvp_fail(diag, KVP_EINVAL,
                      "disable_hybrid_kv_cache_manager: vLLM \"failed to convert the KV cache "
                      "specs to one unified type\": %s",
                      state ? "recurrent states beside attention"
                      : cross ? "cross-attention layers (CrossAttentionSpec) beside self-attention"
                              : "local layers of two windows and no full attention layer");
  }
  for (int k = 0; k < m->nspec; k++) {
    kvp_layer *ly = &m->spec[k];
    if (ly->kind == KVP_SLIDING || ly->kind == KVP_CHUNKED) {
      ly->kind = KVP_FULL;
      ly->window = 0;
    }
  }
  l->promoted = 1;
  return KVP_OK;
}

kvp_err kvp_vllm_plan_groups(kvp_ledger *l, int8_t *spec_type, int32_t *draft_type,
                              kvp_diag *diag) {
  kvp_deploy *d = &l->d;
  const kvp_model *m = &d->model;
  l->hybrid = 0;
  l->ntype = 0;
  *draft_type = -1;
  for (int k = 0; k < KVP_MAX_SPECS; k++) spec_type[k] = -1;
  if (d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED || d->kv_recent > 0 ||
      d->evict.nlevel > 0 || d->vllm.v0_blocks)
    return KVP_OK;
  if (d->vllm.ngiven > 0) return given_groups(l, diag);
  if (d->vllm.disable_hybrid) TRY(kvp_vllm_promote(l, 0, diag));
  int64_t per_spec[KVP_MAX_SPECS] = {0};
  if (m->nspec == 1) per_spec[0] = m->layers; /* one layer shape: no walk */
  else
    for (int64_t i = 0; i < m->layers; i++) per_spec[m->layer_spec[i]]++;
  for (int k = 0; k < m->nspec; k++)
    if (per_spec[k] > 0 && m->spec[k].kind != KVP_NONE) {
      int32_t t = add_type(l, &m->spec[k], per_spec[k], 0);
      if (t < 0) return kvp_fail(diag, KVP_EINVAL, "more KV cache types than the ledger has room for");
      spec_type[k] = (int8_t)t;
    }
  /* the hidden-state cache of extract_hidden_states joins a model of one KV
   * type it is uniform with; beside anything else it is its own group, added
   * once the target's groups are planned (hidden_group) */
  int hidden = d->spec.draft_layers > 0 && d->spec.hidden_cache;
  if (d->spec.draft_layers > 0 && !hidden) {
    *draft_type = add_type(l, &d->spec.draft, d->spec.draft_layers, 1);
    if (*draft_type < 0)
      return kvp_fail(diag, KVP_EINVAL, "more KV cache types than the ledger has room for");
  }
  int uniform = 1;
  for (int32_t t = 1; t < l->ntype; t++)
    if (!same_class(&ledger_types_of(l)[0].shape, &ledger_types_of(l)[t].shape)) uniform = 0;
  if (hidden && uniform &&
      (l->ntype == 0 || same_class(&ledger_types_of(l)[0].shape, &d->spec.draft))) {
    *draft_type = add_type(l, &d->spec.draft, d->spec.draft_layers, 1);
    if (*draft_type < 0)
      return kvp_fail(diag, KVP_EINVAL, "more KV cache types than the ledger has room for");
    hidden = 0;
  } else if (hidden) {
    uniform = 0;
  }
  if (uniform) {
    l->ntype = 0;
    *draft_type = -1;
    for (int k = 0; k < KVP_MAX_SPECS; k++) spec_type[k] = -1;
    return KVP_OK;
  }
  l->hybrid = 1;
  /* Mamba: raise the block until one attention page holds a state */
  int64_t bits[KVP_MAX_KV_TYPES], a1_bits = 0, state = 0;
  int32_t a1 = -1;
  for (int32_t t = 0; t < l->ntype; t++) {
    kvp_layer *ly = &ledger_types_of(l)[t].shape;
    TRY(kvp_kv_token_bits(ly, &d->kv, d->tp, &bits[t]));
    if (ly->kind == KVP_STATE) {
      int64_t sb;
      TRY(kvp_kv_state_bytes(ly, d->tp, &sb));
      state = max64(state, sb);
    } else if (a1 < 0 || bits[t] > a1_bits) {
      a1 = t;
      a1_bits = bits[t];
    }
  }
  int64_t mamba_block = l->max_len; /* mamba_cache_mode none: max_model_len */
  if (state > 0) {
    int64_t one, align = ledger_types_of(l)[a1].shape.kind == KVP_MLA ? 64 : 16, span, need;
    /* vllm/platforms/interface.py _align_hybrid_block_size at c77619938d1c
     * (vllm-project/vllm#37467): kernel_block_alignment_size = max(the
     * backend's smallest kernel block, cache_config.block_size), so a given
     * block larger than the kernel's is the grain the block grows in */
    if (d->vllm.block_grain && d->block > align) align = d->block;
    TRY(kvp_page_bytes(a1_bits, 1, &one));
    if (d->vllm.mamba_mode == KVP_MAMBA_ALL) {
      /* _align_hybrid_block_size, mamba_cache_mode "all": the fewest whole
       * chunks of lcm(chunk, kernel alignment) whose attention tokens hold
       * a state; the Mamba block is that many tokens */
      int64_t a = align, b = d->vllm.mamba_chunk, chunk;
      while (b != 0) { int64_t r = a % b; a = b; b = r; }
      CHK(chk_mul(align / a, d->vllm.mamba_chunk, &chunk));
      CHK(chk_mul(chunk, cdiv(cdiv(state, one), chunk), &need));
      mamba_block = need;
    } else {
      CHK(chk_mul(align, one, &span));
      CHK(chk_mul(align, cdiv(state, span), &need));
    }
    if (d->block < need) {
      d->block = need;
      l->adjusted = 1;
    }
    if (d->vllm.mamba_mode == KVP_MAMBA_ALIGN) mamba_block = d->block;
  }
  /* pages at that block; the largest is the pool's page */
  l->page = 0;
  for (int32_t t = 0; t < l->ntype; t++) {
    kvp_kv_type *ty = &ledger_types_of(l)[t];
    if (ty->shape.kind == KVP_STATE) TRY(kvp_kv_state_bytes(&ty->shape, d->tp, &ty->page));
    else TRY(kvp_page_bytes(bits[t], d->block, &ty->page));
    if (ty->shape.kind != KVP_STATE) l->page = max64(l->page, ty->page);
  }
  if (l->page < state)
    return kvp_fail(diag, KVP_EINVAL,
                    "a state of %lld bytes exceeds the attention page of %lld bytes at block %lld",
                    (long long)state, (long long)l->page, (long long)d->block);
  for (int32_t t = 0; t < l->ntype; t++) {
    kvp_kv_type *ty = &ledger_types_of(l)[t];
    if (ty->shape.kind == KVP_STATE) {
      ty->block = mamba_block; /* mamba_block_size: max_model_len unless prefix caching */
      ty->padded = ty->page != l->page;
    } else if (l->page % ty->page == 0) {
      CHK(chk_mul(d->block, l->page / ty->page, &ty->block));
    } else if (ty->shape.kind != KVP_MLA) {
      /* vllm 002f10e0cfa1: a non-MLA attention page that does not divide
       * the largest keeps its block and is padded to it */
      ty->block = d->block;
      ty->padded = 1;
    } else if (!l->promoted && kvp_vllm_promote(l, 1, NULL) == KVP_OK) {
      /* MLA beside sliding layers: allocate the sliding ones as full
       * attention (_try_get_full_allocation_fallback_groups) */
      return kvp_vllm_plan_groups(l, spec_type, draft_type, diag);
    } else {
      return kvp_fail(diag, KVP_EINVAL,
                      "vLLM cannot put MLA layers with pages of %lld bytes in one pool with pages "
                      "of %lld bytes: an MLA page must divide the largest page "
                      "(unify_kv_cache_spec_page_size pads only non-MLA attention pages)",
                      (long long)ty->page, (long long)l->page);
    }
  }
  if (hidden) TRY(hidden_group(l, draft_type, diag));
  /* decode (and prefill) context parallelism: an attention group's block
   * spans block x dcp x pcp tokens of a request, block on each rank
   * (SingleTypeKVCacheManager: block_size *= dcp_world_size x
   * pcp_world_size); a Mamba group keeps its state whole on every rank and
   * its block at dcp 1 (dcp_world_size_for_kv_cache_spec: "Other specs keep
   * replicated per-rank state (Mamba, ...) and must keep dcp_world_size=1",
   * vllm/v1/core/kv_cache_coordinator.py at 00b08dc44519) */
  int64_t cp = (d->vllm.dcp > 1 ? d->vllm.dcp : 1) * (d->vllm.pcp > 1 ? d->vllm.pcp : 1);
  for (int32_t t = 0; cp > 1 && t < l->ntype; t++) {
    kvp_kv_type *ty = &ledger_types_of(l)[t];
    if (ty->shape.kind != KVP_STATE) CHK(chk_mul(ty->block, cp, &ty->block));
  }
  /* group size: the fewest layers of a type, or the most below 1.5 times that */
  int64_t fewest = INT64_MAX, most = 0;
  for (int32_t t = 0; t < l->ntype; t++) {
    if (t == *draft_type && d->spec.hidden_cache) continue; /* its own group of one layer */
    fewest = min64(fewest, ledger_types_of(l)[t].layers);
    most = max64(most, ledger_types_of(l)[t].layers);
  }
  l->group_size = 2 * most < 3 * fewest ? most : fewest;
  l->ngroups = 0;
  l->min_block = INT64_MAX;
  for (int32_t t = 0; t < l->ntype; t++) {
    ledger_types_of(l)[t].groups = cdiv(ledger_types_of(l)[t].layers, l->group_size);
    l->ngroups += ledger_types_of(l)[t].groups;
    l->min_block = min64(l->min_block, ledger_types_of(l)[t].block);
  }
  return KVP_OK;
}

/* Layer slots of one KV cache group on stage st: a type's layers on a stage
 * are consecutive in its order, so its fullest group there holds
 * ceil(layers on the stage / groups) of them. */
int64_t kvp_vllm_stage_group_size(const kvp_ledger *l, const kvp_stage *st,
                                  const int8_t *spec_type, int32_t draft_type, int draft) {
  int64_t on[KVP_MAX_KV_TYPES] = {0}, g = 0;
  for (int64_t i = st->first; i < st->first + st->layers; i++) {
    int t = l->d.vllm.ngiven > 0 ? l->d.vllm.group_of[i] - 1 : spec_type[l->d.model.layer_spec[i]];
    if (t >= 0) on[t]++;
  }
  if (draft && draft_type >= 0) on[draft_type] += l->d.spec.draft_layers;
  for (int32_t t = 0; t < l->ntype; t++) g = max64(g, cdiv(on[t], ledger_types_of(l)[t].groups));
  return g;
}

kvp_err kvp_vllm_group_blocks(const kvp_ledger *l, int64_t n, int64_t *blocks, int64_t *bg,
                              int64_t *br) {
  const kvp_deploy *d = &l->d;
  int64_t m, total = 0, g = 0, r = 0;
  CHK(chk_add(n, d->spec.tokens, &m));
  m = min64(m, l->max_len); /* lookahead slots stop at max_model_len (allocate_slots) */
  int64_t pg = min64(d->prefix, n);
  int64_t pr = d->prompt > 0 ? d->prompt
               : (d->output > 0 ? max64(n - d->output, 0) : 0);
  pr = max64(min64(pr, n), pg);
  for (int32_t t = 0; t < l->ntype; t++) {
    const kvp_kv_type *ty = &ledger_types_of(l)[t];
    int64_t k = 0, part;
    switch (ty->shape.kind) {
      case KVP_FULL:
      case KVP_MLA: {
        /* eviction is the target's: a group of draft layers alone keeps all */
        int64_t held = ty->draft_only ? m : kvp_evict_held(&d->evict, m, 0);
        k = cdiv(held, ty->block);
        CHK(chk_mul(min64(pg, held) / ty->block, ty->groups, &part));
        CHK(chk_add(g, part, &g));
        CHK(chk_mul(min64(pr, held) / ty->block, ty->groups, &part));
        CHK(chk_add(r, part, &r));
        break;
      }
      case KVP_SLIDING:
      case KVP_CHUNKED:
      case KVP_CROSS:
        TRY(kvp_layer_blocks(&ty->shape, m, ty->block, d->max_num_batched_tokens, &k));
        break; /* windows drop old blocks, encoder states are the request's: nothing shared */
      case KVP_STATE:
        /* the state and one per draft token; mamba_cache_mode align keeps the
         * state of the last block boundary too, all a state every block
         * (MambaSpec.max_memory_usage_bytes) */
        k = n == 0 ? 0 : kvp_vllm_usage_blocks(l, &ty->shape, ty->block, n);
        break;
      default:
        break;
    }
    CHK(chk_mul(k, ty->groups, &part));
    CHK(chk_add(total, part, &total));
  }
  *blocks = total;
  *bg = g;
  *br = r;
  return KVP_OK;
}

/* ---- the switches, the startup check, the workers -------------------------- */

/* V0's MLA entry alignment (vllm-project/vllm#12676, "Mem align KV caches for
 * CUDA devices", merged 2025-02-04 as 75e94309e8d8, first released in 0.7.2):
 * vllm/worker/cache_engine.py CacheEngine._align_cache is true for a model with
 * use_mla on CUDA when VLLM_CUDA_MEM_ALIGN_KV_CACHE is set (on by default: the
 * PR's baseline runs needed VLLM_CUDA_MEM_ALIGN_KV_CACHE=0), and then
 * get_cache_block_size takes key_cache_entry = align_to_256bytes(num_heads x
 * head_size, model_config.dtype), a multiple of 256 bytes of the model dtype
 * (not the cache dtype), and _allocate_kv_cache allocates the padded entry:
 * DeepSeek's 576 elements become 640 ("1280 bytes instead of 1152", the PR).
 * vllm-project/vllm#14842 (merged 2025-03-15 as 5952d8ab61a3, before v0.8.0)
 * removed it; the V1 engine's MLAAttentionSpec has no such padding. */
kvp_err kvp_vllm_mla_entry(const kvp_deploy *d, const kvp_layer *in, kvp_layer *out) {
  *out = *in;
  int64_t a = d->vllm.mla_entry_align, n, r;
  if (in->kind != KVP_MLA || a <= 0) return KVP_OK;
  CHK(chk_add(in->latent, in->rope_dim, &n));
  CHK(chk_add(n, a - 1, &r));
  r = r / a * a;
  CHK(chk_add(out->rope_dim, r - n, &out->rope_dim));
  return KVP_OK;
}

kvp_err kvp_vllm_dcp_check(const kvp_ledger *l, kvp_diag *diag) {
  const kvp_deploy *d = &l->d;
  const kvp_model *m = &d->model;
  int64_t dcp = d->vllm.dcp > 1 ? d->vllm.dcp : 1, tp = d->tp;
  const char *opt = dcp > 1 ? "decode_context_parallel_size" : "prefill_context_parallel_size";
  int64_t size = dcp > 1 ? dcp : d->vllm.pcp;
  if (dcp > tp || tp % dcp != 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "decode_context_parallel_size %lld must divide tensor parallel size %lld "
                    "(its ranks are the TP group's)", (long long)dcp, (long long)tp);
  int64_t used[KVP_MAX_SPECS] = {0};
  for (int64_t i = 0; i < m->layers; i++) used[m->layer_spec[i]]++;
  int attention = 0;
  for (int k = 0; k < m->nspec; k++) {
    const kvp_layer *ly = &m->spec[k];
    if (used[k] == 0 || ly->kind == KVP_NONE) continue;
    attention |= full_like(ly->kind);
    if (ly->kind == KVP_MLA) continue;
    /* Mamba groups stay at dcp 1, their states whole on every rank
     * (dcp_world_size_for_kv_cache_spec; plan_groups) */
    if (ly->kind == KVP_STATE && dcp > 1 && d->vllm.pcp <= 1) continue;
    if (ly->kind != KVP_FULL)
      return kvp_fail(diag, KVP_EINVAL,
                      "%s %lld with %s layers: vLLM splits the tokens of full attention and "
                      "MLA layers only (FullAttentionSpec.max_memory_usage_bytes; "
                      "SlidingWindowSpec asserts decode_context_parallel_size == 1)", opt,
                      (long long)size, kvp_kind_name(ly->kind));
    if (dcp > 1 && (ly->kv_heads >= tp || (tp / ly->kv_heads) % dcp != 0))
      return kvp_fail(diag, KVP_EINVAL,
                      "decode_context_parallel_size %lld needs that many copies of each of the "
                      "%lld KV heads at tp %lld: dcp must divide tp / kv_heads",
                      (long long)dcp, (long long)ly->kv_heads, (long long)tp);
  }
  if (!attention)
    return kvp_fail(diag, KVP_EINVAL,
                    "%s %lld without full attention or MLA layers: there are no tokens to "
                    "split", opt, (long long)size);
  return KVP_OK;
}

kvp_err kvp_vllm_align_block(const kvp_ledger *l, kvp_stage *st) {
  const kvp_deploy *d = &l->d;
  int64_t a = d->vllm.stride_align;
  st->aligned = 0;
  if (a <= 0 || st->block_bytes == 0) return KVP_OK;
  int mla = 0;
  for (int k = 0; k < d->model.nspec; k++) mla |= st->count[k] > 0 && d->model.spec[k].kind == KVP_MLA;
  if (!mla) return KVP_OK;
  int64_t r = st->block_bytes % a;
  if (r != 0) CHK(chk_add(st->block_bytes, a - r, &st->block_bytes));
  st->aligned = !l->hybrid;
  return KVP_OK;
}

/* The stage's share of `bytes`, spread evenly over the model's layers
 * (rounded down once per part). */
static int stage_share(int64_t bytes, int64_t layers, int64_t st_layers, int64_t *out) {
  int64_t w;
  if (!chk_mul(bytes / layers, st_layers, &w)) return 0;
  if (!chk_add(w, (bytes % layers) * st_layers / layers, &w)) return 0;
  *out = w;
  return 1;
}

/* Bytes of el held by the fullest of `ranks` ranks when each holds whole
 * experts of `experts`: ceil(experts / ranks) of them. */
static int64_t whole_experts(int64_t el, int64_t experts, int64_t ranks) {
  int64_t mine = cdiv(experts, ranks);
  return (int64_t)(((unsigned __int128)el * (uint64_t)mine + (uint64_t)experts - 1) /
                   (uint64_t)experts);
}

kvp_err kvp_vllm_stage_weights(const kvp_ledger *l, const kvp_stage *st, int64_t *bytes) {
  const kvp_deploy *d = &l->d;
  const kvp_sglang_par *sg = &d->sglang;
  int64_t layers = d->model.layers, w = l->weights_total, e = 0, a = 0, r = 0, wl, part;
  int vllm_split = (d->vllm.dp > 1 || d->vllm.ep) && d->vllm.experts > 0;
  int sglang_split = (sg->attn_dp > 1 || sg->ep > 1) && d->vllm.experts > 0;
  if (vllm_split || sglang_split) {
    e = min64(d->vllm.expert_bytes, w);
    w -= e;
  }
  if (sg->attn_dp > 1) {
    /* SGLang's attention DP: the attention layers over the attention TP
     * group (tp / dp_size ranks), the input embedding whole on every GPU
     * (VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled()),
     * python/sglang/srt/models/deepseek_v2.py at 3e4a39ee), the rest (the
     * dense MLPs, shared experts, the vocabulary-split lm_head) over tp */
    a = min64(sg->attn_bytes, w);
    w -= a;
    r = min64(sg->whole_bytes, w);
    w -= r;
  }
  /* the weights every TP rank holds whole (kvp_replicated: MLA's
   * ReplicatedLinear down-projections, the routers, the norms; models.lua
   * replicated_params): off what is split, the stage's share added whole */
  int64_t rep;
  TRY(kvp_deploy_replicated_bytes(d, w, &rep));
  w -= rep;
  /* the stage's share of the layers, rounded up once */
  CHK(stage_share(w, layers, st->layers, &wl));
  *bytes = cdiv(wl, d->tp);
  if (rep > 0) {
    CHK(stage_share(rep, layers, st->layers, &part));
    CHK(chk_add(*bytes, part, bytes));
  }
  if (sg->attn_dp > 1) {
    CHK(stage_share(a, layers, st->layers, &part));
    CHK(chk_add(*bytes, cdiv(part, kvp_attn_tp(d)), bytes));
    CHK(stage_share(r, layers, st->layers, &part));
    CHK(chk_add(*bytes, part, bytes));
  }
  if (!(vllm_split || sglang_split)) return KVP_OK;
  int64_t el;
  CHK(stage_share(e, layers, st->layers, &el));
  if (sglang_split) {
    /* SGLang's MoE group is the tp ranks: ep_size of them hold whole
     * experts, each expert split over the moe_tp = tp / ep_size ranks
     * beside it ("MoE: Global(TP) -> MOE_DP -> EP -> MOE_TP",
     * _compute_parallelism_ranks, sgl-project/sglang's scheduler launch);
     * without EP the experts are split over tp like any TP layer */
    int64_t ep = sg->ep > 1 ? sg->ep : 1;
    part = cdiv(ep > 1 ? whole_experts(el, d->vllm.experts, ep) : el, d->tp / ep);
  } else {
    int64_t gpus;
    CHK(chk_mul(d->tp, d->vllm.dp > 1 ? d->vllm.dp : 1, &gpus));
    /* whole experts under EP: the fullest GPU holds ceil(experts / ep_size) */
    part = d->vllm.ep ? whole_experts(el, d->vllm.experts, gpus) : cdiv(el, gpus);
  }
  CHK(chk_add(*bytes, part, bytes));
  return KVP_OK;
}

int kvp_vllm_state_only(const kvp_ledger *l) {
  const kvp_deploy *d = &l->d;
  if (d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED || d->spec.draft_layers > 0)
    return 0;
  int64_t kinds[KVP_NKINDS];
  kvp_model_kind_counts(&d->model, kinds);
  return kinds[KVP_STATE] > 0 && kinds[KVP_STATE] + kinds[KVP_NONE] == d->model.layers;
}

int64_t kvp_vllm_usage_blocks(const kvp_ledger *l, const kvp_layer *ly, int64_t block,
                              int64_t len) {
  int64_t step = l->d.max_num_batched_tokens, w;
  switch (ly->kind) {
    case KVP_FULL:
    case KVP_MLA:
      return cdiv(len, block);
    case KVP_SLIDING:
      if (!chk_add(ly->window - 1, step, &w)) w = INT64_MAX;
      return cdiv(min64(w, len), block) + 1;
    case KVP_CHUNKED:
      if (!chk_add(ly->window, step, &w)) w = INT64_MAX;
      return cdiv(min64(w, len), block);
    case KVP_STATE:
      /* MambaSpec.max_memory_usage_bytes by mamba_cache_mode (kv_cache_interface.py
       * at 001cabc1be16): none 1 + the speculative blocks, align 2 + them, all
       * cdiv(max_model_len, block) (+ them in later revisions; kvplan adds them) */
      if (l->d.vllm.mamba_mode == KVP_MAMBA_ALL) return cdiv(len, block) + l->d.spec.tokens;
      return (l->d.vllm.mamba_mode == KVP_MAMBA_ALIGN ? 2 : 1) + l->d.spec.tokens;
    case KVP_CROSS: /* cdiv(max_num_encoder_input_tokens, block) */
      return cdiv(ly->window, block);
    default:
      return 0;
  }
}

/* Bytes vLLM's startup check wants for one request of len tokens on stage s
 * (_max_memory_usage_bytes_from_groups); *any is 0 when the stage holds no
 * KV cache layer. */
static kvp_err stage_usage(const kvp_ledger *l, int32_t s, int64_t len, int64_t *bytes,
                           int *any) {
  const kvp_stage *st = &l->stage[s];
  const kvp_model *m = &l->d.model;
  int64_t total = 0, part;
  *any = 0;
  if (l->hybrid) {
    /* group_size x page x the blocks of every group (empty ones included) */
    *any = st->group_size > 0;
    for (int32_t t = 0; t < l->ntype; t++) {
      CHK(chk_mul(kvp_vllm_usage_blocks(l, &ledger_types_of(l)[t].shape, ledger_types_of(l)[t].block, len),
                  ledger_types_of(l)[t].groups, &part));
      CHK(chk_add(total, part, &total));
    }
    CHK(chk_mul(total, st->block_bytes, bytes));
    return KVP_OK;
  }
  /* one KV type: every layer's own max_memory_usage_bytes */
  for (int k = 0; k < m->nspec; k++) {
    if (st->count[k] == 0 || m->spec[k].kind == KVP_NONE) continue;
    *any = 1;
    int64_t one;
    if (m->spec[k].kind == KVP_STATE) {
      CHK(chk_mul(l->state_bytes[k],
                  kvp_vllm_usage_blocks(l, &m->spec[k], kvp_vllm_state_block(l), len), &one));
    } else {
      CHK(chk_mul(kvp_vllm_usage_blocks(l, &m->spec[k], l->span, len), l->page_bytes[k],
                  &one));
    }
    CHK(chk_mul(one, st->count[k], &part));
    CHK(chk_add(total, part, &total));
  }
  if (s == l->nstage - 1 && l->d.spec.draft_layers > 0) {
    *any = 1;
    CHK(chk_mul(kvp_vllm_usage_blocks(l, &l->d.spec.draft, l->span, len), l->draft_page,
                &part));
    CHK(chk_add(total, part, &total));
  }
  *bytes = total;
  return KVP_OK;
}

/* The KV memory vLLM's startup check and its estimate plan against on stage
 * s (get_kv_cache_configs): the worker's KV budget; num_gpu_blocks_override
 * blocks of the pool's bytes per block when the release checks the override
 * (check_override, vllm-project/vllm#41069: "this should take precedence
 * over the measured available kv cache size"); one block of the pool less
 * when the release reserves the null block BlockPool holds back
 * (check_null_block, #47272: check_memory = avail_mem -
 * _pool_bytes_per_block(groups); the pool itself is still sized from all
 * of it). */
static int64_t check_memory(const kvp_ledger *l, const kvp_stage *st) {
  const kvp_vllm *v = &l->d.vllm;
  int64_t avail = st->kv_budget;
  if (v->check_override && v->blocks_override > 0) avail = st->pool; /* blocks x block bytes */
  if (v->check_null_block && avail > 0) avail -= st->block_bytes;
  return avail;
}

kvp_err kvp_vllm_check(const kvp_ledger *l, kvp_vllm_start *out) {
  memset(out, 0, sizeof *out);
  if (l->d.budget != KVP_BUDGET_VLLM || l->d.alloc != KVP_ALLOC_PAGED) return KVP_EINVAL;
  if (l->nstage == 0 || l->fit.why != KVP_FITS) return KVP_OK;
  out->max_model_len = l->max_len;
  out->stage = -1;
  for (int32_t s = 0; s < l->nstage; s++) {
    int64_t avail = check_memory(l, &l->stage[s]), need, len;
    int any;
    TRY(stage_usage(l, s, l->max_len, &need, &any));
    if (!any) continue;
    if (avail <= 0) { /* "No available memory for the cache blocks" */
      len = 0;
    } else if (need <= avail) {
      len = l->max_len;
    } else {
      int64_t lo = 1, hi = l->max_len, best = 0, u;
      while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        TRY(stage_usage(l, s, mid, &u, &any));
        if (u <= avail) {
          best = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      len = best;
    }
    if (out->stage < 0 || len < out->max_model_len ||
        (len == out->max_model_len && need - avail > out->needed - out->available)) {
      out->stage = s;
      out->max_model_len = len;
      out->needed = need;
      out->available = avail;
    }
  }
  if (out->stage < 0) { /* no KV cache layer on any worker: nothing to check */
    out->stage = 0;
    out->starts = 1;
    return KVP_OK;
  }
  out->starts = 1;
  for (int32_t s = 0; s < l->nstage; s++) {
    int64_t need;
    int any;
    TRY(stage_usage(l, s, l->max_len, &need, &any));
    int64_t avail = check_memory(l, &l->stage[s]);
    if (any && (avail <= 0 || need > avail)) out->starts = 0;
  }
  return KVP_OK;
}

kvp_err kvp_vllm_worker(const kvp_ledger *l, int32_t s, int64_t gpu_bytes, kvp_vllm_stage *out) {
  memset(out, 0, sizeof *out);
  if (s < 0 || s >= l->nstage || gpu_bytes < 0) return KVP_EINVAL;
  const kvp_deploy *d = &l->d;
  const kvp_stage *st = &l->stage[s];
  const kvp_model *m = &d->model;
  out->stage = s;
  out->first = st->first;
  out->layers = st->layers;
  out->gpu_bytes = st->gpu_bytes;
  out->weights = st->weights;
  out->kv_budget = st->kv_budget > 0 ? st->kv_budget : 0;
  out->block_bytes = st->block_bytes;
  out->group_size = st->group_size;
  out->own_blocks = d->budget == KVP_BUDGET_VLLM ? st->own_blocks : st->blocks;
  if (gpu_bytes > 0 && d->budget == KVP_BUDGET_VLLM) {
    /* one GPU of the stage with its own memory: vLLM's budget rule on it */
    int64_t budget = d->vllm.kv_cache_bytes;
    if (budget == 0) {
      int64_t usable = (int64_t)((double)gpu_bytes * d->utilization), reserved;
      if (usable > gpu_bytes) usable = gpu_bytes;
      reserved = st->weights;
      CHK(chk_add(reserved, d->activation_bytes, &reserved));
      CHK(chk_add(reserved, d->overhead_bytes, &reserved));
      budget = usable - reserved;
    }
    out->gpu_bytes = gpu_bytes;
    out->kv_budget = budget > 0 ? budget : 0;
    out->own_blocks = st->block_bytes > 0 ? out->kv_budget / st->block_bytes : 0;
  }
  /* every worker ends with the fewest blocks of any worker */
  int64_t fewest = INT64_MAX;
  for (int32_t i = 0; i < l->nstage; i++)
    if (l->stage[i].block_bytes > 0) fewest = min64(fewest, l->stage[i].blocks);
  out->blocks = fewest == INT64_MAX || l->fit.why != KVP_FITS ? 0 : fewest;
  if (l->attention_free && l->fit.why == KVP_FITS) out->blocks = 1; /* the null block */
  if (l->hybrid) {
    out->tensors = st->group_size;
    CHK(chk_mul(l->page, out->blocks, &out->tensor_bytes));
  } else {
    for (int k = 0; k < m->nspec; k++)
      if (m->spec[k].kind != KVP_NONE && m->spec[k].kind != KVP_STATE)
        out->tensors += st->count[k];
    if (s == l->nstage - 1) out->tensors += d->spec.draft_layers;
  }
  CHK(chk_mul(out->blocks, st->block_bytes, &out->pool_bytes));
  out->unused_bytes = out->kv_budget > out->pool_bytes ? out->kv_budget - out->pool_bytes : 0;
  return KVP_OK;
}

kvp_err kvp_vllm_turboquant(kvp_ledger *l, kvp_diag *diag) {
  kvp_deploy *d = &l->d;
  kvp_model *m = &d->model;
  if (d->kv.tq_key_bits <= 0) return KVP_OK;
  if (d->budget != KVP_BUDGET_VLLM)
    return kvp_fail(diag, KVP_EINVAL,
                    "TurboQuant KV formats are vLLM's (kv_cache_dtype turboquant_*): "
                    "budget must be 'vllm'");
  int64_t used[KVP_MAX_SPECS] = {0};
  for (int64_t i = 0; i < m->layers; i++) used[m->layer_spec[i]]++;
  int state = 0;
  for (int k = 0; k < m->nspec; k++) {
    kvp_kind kind = m->spec[k].kind;
    if (used[k] == 0 || kind == KVP_FULL || kind == KVP_NONE) continue;
    if (kind == KVP_STATE) {
      state = 1;
      continue;
    }
    return kvp_fail(diag, KVP_EINVAL,
                    "TurboQuant KV format with %s layers: vLLM returns TQFullAttentionSpec "
                    "for full attention layers; other kinds are not modelled",
                    kvp_kind_name(kind));
  }
  /* a draft's full attention layers beside a hybrid target are TurboQuant
   * slots too: the MTP head is a decoder layer of the target's built with
   * the same cache_config (Qwen3_5MultiTokenPredictor: Qwen3_5DecoderLayer
   * layer_type "full_attention", vllm/model_executor/models/qwen3_5_mtp.py
   * at 01d99805d1ef), and no boundary layer is kept; beside a dense target
   * (boundary protection) or of another kind: not modelled */
  if (d->spec.draft_layers > 0 && !(state && d->spec.draft.kind == KVP_FULL && !d->spec.hidden_cache))
    return kvp_fail(diag, KVP_EINVAL,
                    "TurboQuant KV format with a draft model: not modelled");
  if (state) return KVP_OK; /* hybrid: get_boundary_skip_layers returns [] */
  int64_t n = m->layers / 2 < 2 ? m->layers / 2 : 2;
  for (int64_t i = 0; i < m->layers; i++) {
    if (i >= n && i < m->layers - n) continue;
    kvp_layer ly = m->spec[m->layer_spec[i]];
    if (ly.kind != KVP_FULL || ly.kv_auto) continue;
    ly.kv_auto = 1;
    int s = 0;
    while (s < m->nspec && !kvp_same_layer(&m->spec[s], &ly)) s++;
    if (s == m->nspec) {
      if (m->nspec >= KVP_MAX_SPECS)
        return kvp_fail(diag, KVP_EINVAL,
                        "TurboQuant boundary layers need more than %d layer shapes",
                        KVP_MAX_SPECS);
      m->spec[m->nspec++] = ly;
    }
    m->layer_spec[i] = (uint8_t)s;
    l->adjusted = 1;
  }
  return KVP_OK;
}

kvp_err kvp_vllm_sink_blocks(const kvp_ledger *l, int64_t *blocks, kvp_diag *diag) {
  const kvp_model *m = &l->d.model;
  *blocks = 0;
  /* no layer shape with sinks (nearly every model): nothing to count, and
   * no walk over the layers on each of a sweep's evaluations */
  int any = 0;
  for (int k = 0; k < m->nspec; k++) any |= m->spec[k].kind == KVP_FULL && m->spec[k].sink != 0;
  if (!any) return KVP_OK;
  int64_t used[KVP_MAX_SPECS] = {0};
  for (int64_t i = 0; i < m->layers; i++) used[m->layer_spec[i]]++;
  int64_t sink = 0;
  int plain = 0;
  for (int k = 0; k < m->nspec; k++) {
    const kvp_layer *ly = &m->spec[k];
    if (used[k] == 0 || ly->kind != KVP_FULL) continue;
    if (ly->sink == 0) plain = 1;
    else if (sink != 0 && sink != ly->sink)
      return kvp_fail(diag, KVP_EINVAL,
                      "sink_len %lld and %lld in one model: not modelled", (long long)sink,
                      (long long)ly->sink);
    else sink = ly->sink;
  }
  if (sink == 0) return KVP_OK;
  if (l->d.budget != KVP_BUDGET_VLLM || l->d.alloc != KVP_ALLOC_PAGED)
    return kvp_fail(diag, KVP_EINVAL,
                    "sink_len %lld: static attention sinks are modelled under vLLM's paged "
                    "budget (SinkFullAttentionSpec)", (long long)sink);
  if (plain || l->d.spec.draft_layers > 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "sink_len %lld beside full attention layers without sinks: not modelled",
                    (long long)sink);
  int64_t groups = 1, block = l->span;
  if (l->hybrid) {
    groups = 0;
    for (int32_t t = 0; t < l->ntype; t++)
      if (ledger_types_of(l)[t].shape.kind == KVP_FULL && ledger_types_of(l)[t].shape.sink > 0) {
        groups += ledger_types_of(l)[t].groups;
        block = ledger_types_of(l)[t].block; /* x dcp x pcp: plan_groups */
      }
  }
  if (sink % block != 0)
    return kvp_fail(diag, KVP_EINVAL,
                    "sink_len %lld must be a multiple of the block of %lld tokens "
                    "(SinkFullAttentionManager asserts sink_len %% block_size == 0)",
                    (long long)sink, (long long)block);
  CHK(chk_mul(groups, sink / block, blocks));
  return KVP_OK;
}

int64_t kvp_vllm_state_block(const kvp_ledger *l) {
  if (l->d.vllm.mamba_mode == KVP_MAMBA_NONE) return l->max_len;
  return l->d.vllm.mamba_chunk > 0 ? l->d.vllm.mamba_chunk : l->d.block;
}
