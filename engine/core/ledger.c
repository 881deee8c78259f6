/*
 * ledger.c: the memory ledger of one GPU and the capacity answers.
 * Pure computation: no Lua, no I/O.
 *
 * Budget rules, f = d->utilization:
 *   vllm    usable    = floor(f * visible memory)
 *           kv_budget = usable - weights on this GPU - activation peak - overhead
 *           (vllm/v1/worker/gpu_worker.py); the pool keeps one null block
 *           (vllm/v1/core/block_pool.py). The rule of thumb "total * (1 -
 *           safety) - weights - 2 GB" is this with f = 1 - safety and
 *           overhead = 2 GB.
 *   sglang  usable    = floor(f * (visible - overhead)), f = mem_fraction_static
 *           kv_budget = usable - weights: rest_memory = available after load
 *           - total before load * (1 - f), the activations and CUDA graphs
 *           living in the (1 - f) reserve; tokens = kv_budget // cell size,
 *           rounded down to the page size (sglang v0.5.8
 *           python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py
 *           profile_max_num_token, init_memory_pool); no null block (its
 *           padding slot is allocated beyond the budget). Its weights are
 *           what free memory sees: the rotary tables in float32 on CUDA
 *           (vllm.rotary_bytes) and the caching allocator's segments beyond
 *           the parameters (vllm.alloc_bytes; engines.lua
 *           sglang_alloc_slack).
 *   Memory others hold (system_memory, d->system_bytes): vLLM V1 leaves the
 *           budget as it is (starts.c refuses when free < f * visible), its
 *           releases that count all used memory as non-torch
 *           (vllm.system_rule KVP_SYS_BUDGET) reserve it; SGLang's total is
 *           what is free at startup, visible - overhead - system_memory
 *           (model_runner.py at 01cc04e2b5b0: min_per_gpu_memory =
 *           get_available_gpu_memory(...)); TensorRT-LLM reserves it (the
 *           PyTorch backend's peak counts all used memory, _util.py at
 *           000439672005; the engine path's free memory is cudaMemGetInfo's,
 *           kvCacheManager.cpp calculateFreeMemBytes at b35ac1b64368).
 *   trtllm  kv_budget = floor(f * (visible - weights - activation - overhead)),
 *           f = free_gpu_memory_fraction of the memory free after the engine
 *           is loaded; tokens = kv_budget // bytes per token, capped by
 *           max_tokens, blocks = ceil(tokens / tokens_per_block)
 *           (TensorRT-LLM docs/source/reference/memory.md;
 *           cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp).
 *
 * Capacity is paged: a sequence of n tokens takes, on every layer, the blocks
 * kvp_layer_blocks() gives. For layers of one shape under vLLM this is
 * num_blocks = budget // (page_bytes * layers) and concurrency =
 * (num_blocks - 1) // ceil(n / block). Under pipeline parallelism every
 * stage is a ledger of its own; the tightest decides.
 *
 * Hybrid models under vLLM (budget vllm, paged, layers of more than one KV
 * type) share the pool's blocks between KV cache groups: vllm_kv.c lays
 * them out (kvp_vllm_plan_groups) and counts a request's blocks in them.
 *
 * Optimizations (kvp_deploy fields after max_model_len; deploy.c checks
 * them) change what one request holds, applied per layer group in this
 * order: speculative slots (n + g tokens), eviction (kvp_evict_held), the
 * KIVI split into quantized and full-precision blocks, the draft's KV on
 * the last stage, prefix and prompt sharing (whole blocks of full and MLA
 * layers, held once), parallel samples; contiguous allocation instead
 * reserves max_model_len + g tokens unpaged per sequence, and continuous
 * batching charges the mean over the length points rather than the worst
 * case. A deployment without them takes the original path unchanged.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"
#include "core.h"
#include "vllm_kv.h"

#define CONTEXT_CAP ((int64_t)1 << 30) /* max_len when neither limit is known */

/* The tensor-parallel split must divide the heads as vLLM requires
 * (vllm/config/model.py verify_with_parallel_config, get_num_kv_heads). */
static kvp_why check_tp(const kvp_deploy *d, int64_t *need, int64_t *have) {
  const kvp_model *m = &d->model;
  /* the attention's TP group: tp / dp_size under SGLang's attention DP */
  const int64_t tp = kvp_attn_tp(d);
  if (m->heads % tp != 0) {
    *need = m->heads;
    *have = tp;
    return KVP_WHY_TP_HEADS;
  }
  for (int s = 0; s < m->nspec; s++) {
    const kvp_layer *l = &m->spec[s];
    if (l->kind != KVP_FULL && l->kind != KVP_SLIDING && l->kind != KVP_CHUNKED &&
        l->kind != KVP_CROSS)
      continue;
    if (tp <= l->kv_heads ? l->kv_heads % tp != 0 : tp % l->kv_heads != 0) {
      *need = l->kv_heads;
      *have = tp;
      return KVP_WHY_TP_KV_HEADS;
    }
  }
  return KVP_FITS;
}

/* floor(a * b / c) or its ceiling (up), for a, b >= 0 and c > 0, in 128
 * bits; INT64_MAX when the quotient does not fit. */
static int64_t mul_div(int64_t a, int64_t b, int64_t c, int up) {
  int64_t p64;
  if (!__builtin_mul_overflow(a, b, &p64)) /* the common case: no 128-bit division */
    return p64 / c + (up && p64 % c != 0);
  unsigned __int128 p = (unsigned __int128)(uint64_t)a * (uint64_t)b;
  unsigned __int128 q = p / (uint64_t)c + (up && p % (uint64_t)c != 0);
  return q > (unsigned __int128)INT64_MAX ? INT64_MAX : (int64_t)q;
}

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return chk_add(a, b, &r) ? r : INT64_MAX;
}

/* Does stage s hold the draft (speculative decoding's last stage)? */
static int holds_draft(const kvp_ledger *l, int32_t s) {
  return s == l->nstage - 1 && (l->d.spec.draft_layers > 0 || l->d.spec.draft_weight_bytes > 0);
}

/* The ledger's layout after its stages (kvp_ledger_size): how many stages,
 * groups a stage and sums a stage it has room for, from the deployment as
 * given (clamped: d may not be checked yet; the evaluation checks it). */
static void ledger_caps(const kvp_deploy *d, int32_t *stages, int32_t *groups, int32_t *points,
                        int32_t *types) {
  *stages = d->pp >= 1 && d->pp <= d->model.layers && d->pp <= KVP_MAX_PP ? (int32_t)d->pp : 0;
  /* distinct (shape, level) pairs; TurboQuant may add a model-dtype twin of
   * each shape (kvp_vllm_turboquant) after the caller sized the ledger */
  int64_t specs = d->model.nspec < 1 ? 1 : d->model.nspec;
  int64_t levels = d->evict.nlevel < 0 ? 0 : d->evict.nlevel;
  specs = min64(2 * min64(specs, KVP_MAX_SPECS), KVP_MAX_SPECS);
  *groups = (int32_t)min64(specs * (min64(levels, KVP_MAX_EVICT_LEVELS) + 1), KVP_MAX_GROUPS);
  *points = d->nlen > 0 ? (int32_t)min64(d->nlen, KVP_LEN_POINTS) + 1 : 0;
  /* vLLM's KV cache types: one a shape (kvp_vllm_plan_groups), the draft's */
  int hybrid = d->budget == KVP_BUDGET_VLLM && d->alloc == KVP_ALLOC_PAGED && d->kv_recent == 0 &&
               d->evict.nlevel == 0;
  *types = hybrid ? (int32_t)specs + (d->spec.draft_layers > 0) : 0;
}

const kvp_kv_type *kvp_ledger_types(const kvp_ledger *l) { return ledger_types_of(l); }

const kvp_group *kvp_ledger_groups(const kvp_ledger *l, int32_t s) {
  if (s < 0 || s >= l->nstage || s >= l->cap_stages) return NULL;
  return ledger_groups_of(l, s);
}

/* The same in bytes of stage s: blocks times the stage's block_bytes. */
static kvp_err seq_grouped(const kvp_ledger *l, int32_t s, int64_t n, int64_t *seq, int64_t *sg,
                           int64_t *sr) {
  int64_t b, g, r, bb = l->stage[s].block_bytes;
  TRY(kvp_vllm_group_blocks(l, n, &b, &g, &r));
  CHK(chk_mul(b, bb, seq));
  CHK(chk_mul(g, bb, sg));
  CHK(chk_mul(r, bb, sr));
  return KVP_OK;
}

/* Group the stage's layers by (shape, per-layer eviction level). */
static kvp_err stage_groups(const kvp_ledger *l, int32_t s, kvp_stage *st) {
  const kvp_deploy *d = &l->d;
  kvp_group *group = ledger_groups_of(l, s);
  st->ngroup = 0;
  if (l->cap_groups < 1) return KVP_EINVAL;
  if (d->model.nspec == 1 && d->evict.nlevel == 0 && st->layers > 0) {
    /* one layer shape, no eviction levels: one group of every layer */
    group[0].spec = 0;
    group[0].level = 0;
    group[0].count = st->layers;
    st->ngroup = 1;
    return KVP_OK;
  }
  for (int64_t i = st->first; i < st->first + st->layers; i++) {
    int32_t k = d->model.layer_spec[i], lv = 0;
    kvp_kind kind = d->model.spec[k].kind;
    if (d->evict.nlevel > 0 && (kind == KVP_FULL || kind == KVP_MLA)) lv = d->evict.layer[i];
    int32_t g = 0;
    while (g < st->ngroup && (group[g].spec != k || group[g].level != lv)) g++;
    if (g == st->ngroup) {
      if (g == l->cap_groups) return KVP_EINVAL;
      group[g].spec = k;
      group[g].level = lv;
      group[g].count = 0;
      st->ngroup++;
    }
    group[g].count++;
  }
  return KVP_OK;
}

/* The layer as the engine's pool holds it: TensorRT-LLM gives every layer
 * one attention window, max_seq_len, unless kv_cache_config's
 * max_attention_window is set (resource_manager.py KVCacheManager.__init__;
 * engines.lua, "TensorRT-LLM's attention windows"), so its sliding and chunked layers keep
 * every token of a sequence, as a full layer does; tmp holds the copy. */
static const kvp_layer *pool_layer(const kvp_deploy *d, const kvp_layer *ly, kvp_layer *tmp) {
  if (d->budget != KVP_BUDGET_TRTLLM || (ly->kind != KVP_SLIDING && ly->kind != KVP_CHUNKED))
    return ly;
  *tmp = *ly;
  tmp->kind = KVP_FULL;
  return tmp;
}

/* One sequence of n tokens on stage s, optimized path: its bytes (seq) and
 * the bytes of the whole blocks holding the first `prefix` (sg) and
 * the first prompt tokens of its request (sr) on shareable layers. */
static kvp_err seq_parts(const kvp_ledger *l, int32_t s, int64_t n, int64_t *seq, int64_t *sg,
                         int64_t *sr) {
  const kvp_deploy *d = &l->d;
  const kvp_stage *st = &l->stage[s];
  const kvp_group *group = ledger_groups_of(l, s);
  int64_t b = l->span, m, total = 0, g = 0, r = 0;
  CHK(chk_add(n, d->spec.tokens, &m));
  /* vLLM's allocate_slots caps the lookahead slots at max_model_len */
  if (d->budget == KVP_BUDGET_VLLM) m = min64(m, l->max_len);
  /* the prompt the samples share: given, or all but what each one generates */
  int64_t pg = min64(d->prefix, n);
  int64_t pr = d->prompt > 0 ? d->prompt
               : (d->output > 0 ? max64(n - d->output, 0) : 0);
  pr = max64(min64(pr, n), pg);
  for (int32_t i = 0; i < st->ngroup; i++) {
    int32_t k = group[i].spec;
    kvp_layer tmp;
    const kvp_layer *ly = pool_layer(d, &d->model.spec[k], &tmp);
    int64_t one = 0, old = 0, page_old = l->page_bytes[k], part;
    switch (ly->kind) {
      case KVP_FULL:
      case KVP_MLA: {
        int64_t t = kvp_evict_held(&d->evict, m, group[i].level), tq = t, tf = 0;
        if (d->kv_recent > 0) {
          tf = min64(t, d->kv_recent);
          tq = t - tf;
        }
        int64_t bq, bf;
        CHK(chk_mul(cdiv(tq, b), l->page_bytes[k], &bq));
        CHK(chk_mul(cdiv(tf, b), l->page_full[k], &bf));
        CHK(chk_add(bq, bf, &one));
        /* the oldest tokens sit in the quantized blocks (all of them without KIVI) */
        old = tq > 0 ? tq : tf;
        if (tq == 0) page_old = l->page_full[k];
        break;
      }
      case KVP_SLIDING:
      case KVP_CHUNKED:
      case KVP_CROSS: {
        int64_t blocks, bf = 0, x;
        TRY(kvp_layer_blocks(ly, m, b, d->max_num_batched_tokens, &blocks));
        if (d->kv_recent > 0 && ly->kind != KVP_CROSS) bf = min64(blocks, cdiv(min64(m, d->kv_recent), b));
        CHK(chk_mul(blocks - bf, l->page_bytes[k], &one));
        CHK(chk_mul(bf, l->page_full[k], &x));
        CHK(chk_add(one, x, &one));
        break; /* windows drop old blocks: nothing shared */
      }
      case KVP_STATE:
        /* vLLM pages a Mamba model's states: one and one per draft token, two with
         * mamba_cache_mode align, one every block with all (kvp_vllm_usage_blocks) */
        if (n > 0 && l->state_pages)
          CHK(chk_mul(l->state_bytes[k],
                      kvp_vllm_usage_blocks(l, ly, kvp_vllm_state_block(l), n), &one));
        else one = n > 0 ? l->state_bytes[k] : 0;
        break;
      default:
        break;
    }
    CHK(chk_mul(one, group[i].count, &part));
    CHK(chk_add(total, part, &total));
    if (old > 0) {
      CHK(chk_mul(min64(pg, old) / b * page_old, group[i].count, &part));
      CHK(chk_add(g, part, &g));
      CHK(chk_mul(min64(pr, old) / b * page_old, group[i].count, &part));
      CHK(chk_add(r, part, &r));
    }
  }
  if (holds_draft(l, s) && l->draft_page > 0) {
    int64_t part;
    CHK(chk_mul(cdiv(m, b), l->draft_page, &part));
    CHK(chk_add(total, part, &total));
    CHK(chk_add(g, pg / b * l->draft_page, &g));
    CHK(chk_add(r, pr / b * l->draft_page, &r));
  }
  *seq = total;
  *sg = g;
  *sr = r;
  return KVP_OK;
}

/* Contiguous: the bytes one sequence reserves, unpaged, for max_len + g
 * tokens (each layer's tensor rounded up once, windows and eviction
 * capping the tokens). */
static kvp_err reserve_bytes(const kvp_ledger *l, int32_t s, int64_t *bytes) {
  const kvp_deploy *d = &l->d;
  const kvp_stage *st = &l->stage[s];
  const kvp_group *group = ledger_groups_of(l, s);
  int64_t m, total = 0;
  CHK(chk_add(l->max_len, d->spec.tokens, &m));
  for (int32_t i = 0; i < st->ngroup; i++) {
    int32_t k = group[i].spec;
    kvp_layer tmp;
    const kvp_layer *ly = pool_layer(d, &d->model.spec[k], &tmp);
    int64_t t = 0, one, part;
    if (ly->kind == KVP_FULL || ly->kind == KVP_MLA)
      t = kvp_evict_held(&d->evict, m, group[i].level);
    else
      t = kvp_kv_tokens_held(ly, m);
    if (ly->kind == KVP_STATE && l->state_pages) {
      CHK(chk_mul(l->state_bytes[k],
                  kvp_vllm_usage_blocks(l, ly, kvp_vllm_state_block(l), l->max_len), &one));
    } else if (ly->kind == KVP_STATE) {
      one = l->state_bytes[k];
    } else {
      int64_t tf = d->kv_recent > 0 ? min64(t, d->kv_recent) : 0, bq, bf;
      CHK(chk_mul(t - tf, l->token_bits[k], &bq));
      CHK(chk_mul(tf, l->full_bits[k], &bf));
      CHK(chk_add(bq, bf, &one));
      one = cdiv(one, 8);
    }
    CHK(chk_mul(one, group[i].count, &part));
    CHK(chk_add(total, part, &total));
  }
  if (holds_draft(l, s)) {
    int64_t bits;
    CHK(chk_mul(m, l->draft_bits, &bits));
    CHK(chk_add(total, cdiv(bits, 8), &total));
  }
  *bytes = total;
  return KVP_OK;
}

/* Bytes one sequence of n tokens takes on stage s under the original
 * (unoptimized) rule: each layer's blocks times its page bytes. */
static kvp_err seq_plain(const kvp_ledger *l, int32_t s, int64_t n, int64_t *bytes) {
  const kvp_model *m = &l->d.model;
  const kvp_stage *st = &l->stage[s];
  int64_t total = 0;
  if (st->aligned) {
    /* one KV type of full and MLA layers: every layer takes the same blocks,
     * each block the stage's rounded block bytes */
    int64_t blocks = cdiv(n, l->span);
    CHK(chk_mul(blocks, st->block_bytes, bytes));
    return KVP_OK;
  }
  for (int k = 0; k < m->nspec; k++) {
    if (st->count[k] == 0) continue;
    int64_t blocks, one, part;
    kvp_layer tmp;
    TRY(kvp_layer_blocks(pool_layer(&l->d, &m->spec[k], &tmp), n, l->span,
                         l->d.max_num_batched_tokens, &blocks));
    CHK(chk_mul(blocks, l->page_bytes[k], &one));
    if (n > 0 && l->state_pages && m->spec[k].kind == KVP_STATE) {
      /* paged states by mamba_cache_mode (kvp_vllm_usage_blocks) */
      CHK(chk_mul(l->state_bytes[k],
                  kvp_vllm_usage_blocks(l, &m->spec[k], kvp_vllm_state_block(l), n), &one));
    } else if (n > 0) {
      CHK(chk_add(one, l->state_bytes[k], &one));
    }
    CHK(chk_mul(one, st->count[k], &part));
    CHK(chk_add(total, part, &total));
  }
  *bytes = total;
  return KVP_OK;
}

/* V0's block manager (vllm.v0_blocks): a sequence of n tokens takes
 * cdiv(n, block) self-attention blocks and, in an encoder-decoder, the
 * encoder's tokens in cross blocks (cross_block_tables), each block of
 * every layer (the stage's block_bytes); enc-dec has no prefix caching
 * (vllm/core/block/utils.py check_no_caching_or_swa_for_blockmgr_encdec). */
static kvp_err seq_v0(const kvp_ledger *l, int32_t s, int64_t n, int64_t *bytes) {
  const kvp_model *m = &l->d.model;
  const kvp_stage *st = &l->stage[s];
  int64_t blocks = cdiv(n, l->span), enc = 0;
  for (int k = 0; k < m->nspec; k++)
    if (st->count[k] > 0 && m->spec[k].kind == KVP_CROSS) enc = max64(enc, m->spec[k].window);
  if (n > 0) CHK(chk_add(blocks, cdiv(enc, l->span), &blocks));
  CHK(chk_mul(blocks, st->block_bytes, bytes));
  return KVP_OK;
}

/* One request of n tokens on stage s: its own bytes and the shared ones. */
static kvp_err request_cost(const kvp_ledger *l, int32_t s, int64_t n, int64_t *own,
                            int64_t *shared) {
  const kvp_deploy *d = &l->d;
  int64_t samples = d->samples > 1 ? d->samples : 1;
  *shared = 0;
  int64_t seq, sg, sr, part;
  if (d->vllm.v0_blocks) return seq_v0(l, s, n, own);
  if (l->hybrid) {
    TRY(seq_grouped(l, s, n, &seq, &sg, &sr));
    if (l->plain) {
      *own = seq;
      return KVP_OK;
    }
  } else {
    if (l->plain) return seq_plain(l, s, n, own);
    if (d->alloc == KVP_ALLOC_CONTIGUOUS) {
      CHK(chk_mul(l->stage[s].reserve, samples, own));
      return KVP_OK;
    }
    TRY(seq_parts(l, s, n, &seq, &sg, &sr));
  }
  /* samples x (own tokens beyond the prompt) + the prompt once, less the
   * prefix every request shares */
  CHK(chk_mul(seq - sr, samples, &part));
  CHK(chk_add(part, sr - sg, own));
  *shared = sg;
  return KVP_OK;
}

/* Count of length points below n (points are sorted). */
static int32_t points_below(const kvp_deploy *d, int64_t n) {
  int32_t lo = 0, hi = d->nlen;
  while (lo < hi) {
    int32_t mid = (lo + hi) / 2;
    if (d->len[mid] < n) lo = mid + 1; else hi = mid;
  }
  return lo;
}

kvp_err kvp_ledger_request_bytes(const kvp_ledger *l, int32_t s, int64_t n, int64_t *worst,
                                 int64_t *shared, int64_t *sum, int64_t *points) {
  if (s < 0 || s >= l->nstage || n < 0) return KVP_EINVAL;
  TRY(request_cost(l, s, n, worst, shared));
  *sum = *worst;
  *points = 1;
  if (l->d.nlen > 0 && l->d.alloc == KVP_ALLOC_PAGED) {
    /* points at or above n are capped at n: they cost what n costs */
    int32_t j = points_below(&l->d, n);
    int64_t rest;
    CHK(chk_mul(*worst, l->d.nlen - j, &rest));
    CHK(chk_add(ledger_sums_of(l, s)[j], rest, sum));
    *points = l->d.nlen;
  }
  return KVP_OK;
}

/* The pool of stage s, and the host blocks beside it, in bytes. */
static int64_t stage_room(const kvp_stage *st) {
  int64_t host;
  if (!chk_mul(st->host_blocks, st->block_bytes, &host)) return INT64_MAX;
  return sat_add(st->pool, host);
}

/* Size the KV pool of stage st by the budget rule. */
static void size_pool(const kvp_ledger *l, kvp_stage *st) {
  const kvp_deploy *d = &l->d;
  if (st->block_bytes == 0) {
    /* attention-free under vLLM: one block, the null block */
    st->blocks = l->attention_free ? 1 : 0;
    st->own_blocks = st->blocks;
    st->pool = st->kv_budget;
    return;
  }
  if (d->budget == KVP_BUDGET_VLLM) {
    st->own_blocks = st->kv_budget > 0 ? st->kv_budget / st->block_bytes : 0;
    st->blocks = st->own_blocks;
    st->pool = st->kv_budget;
    if (d->vllm.blocks_override > 0) { /* may_override_num_blocks */
      st->blocks = d->vllm.blocks_override;
      if (!chk_mul(st->blocks, st->block_bytes, &st->pool)) st->pool = INT64_MAX;
    }
    return;
  }
  /* SGLang and TensorRT-LLM count tokens of token_bits / 8 bytes first */
  int64_t tokens = st->kv_budget > 0 ? mul_div(st->kv_budget, 8, st->token_bits, 0) : 0;
  if (d->budget == KVP_BUDGET_SGLANG) {
    st->blocks = tokens / d->block;
  } else {
    if (d->max_kv_tokens > 0) tokens = min64(tokens, d->max_kv_tokens);
    st->blocks = cdiv(tokens, d->block);
  }
  if (!chk_mul(st->blocks, st->block_bytes, &st->pool)) st->pool = INT64_MAX;
}

/* SGLang's total_gpu_memory: the memory free before the weights load, the
 * GPU less the engine's non-torch memory and what others hold
 * (system_memory), never below 0 (model_runner.py init_memory_pool /
 * profile_max_num_token: total_gpu_memory from get_available_gpu_memory
 * at startup). */
static int64_t sglang_total(const kvp_deploy *d) {
  int64_t t;
  if (!chk_sub(d->gpu_bytes, d->overhead_bytes, &t) || !chk_sub(t, d->system_bytes, &t)) return 0;
  return max64(t, 0);
}

/* The memory of stage s's smallest GPU and what its budget rule lets the
 * engine use (every stage: the deployment's, unless workers differ). */
static void stage_memory(const kvp_ledger *l, int32_t s, kvp_stage *st) {
  const kvp_deploy *d = &l->d;
  int64_t g = d->vllm.stage_gpu_bytes[s];
  if (g <= 0 || g == d->gpu_bytes) {
    st->gpu_bytes = l->total;
    st->usable = l->usable;
    return;
  }
  st->gpu_bytes = g;
  st->usable = d->vllm.kv_cache_bytes > 0 ? g : (int64_t)floor((double)g * d->utilization);
  if (st->usable > g) st->usable = g;
}

/* Fill stage s; its fit (weights, reserve, null block) goes to f. spec_type
 * and draft_type map layers to vLLM's KV types (hybrid ledgers). */
static kvp_err eval_stage(kvp_ledger *l, int32_t s, const int8_t *spec_type, int32_t draft_type,
                          kvp_fit *f) {
  const kvp_deploy *d = &l->d;
  const kvp_model *m = &d->model;
  kvp_stage *st = &l->stage[s];
  memset(st, 0, sizeof *st);
  TRY(kvp_pp_stage(m->layers, d->pp, s, &st->first, &st->layers));
  stage_memory(l, s, st);
  if (m->nspec == 1) st->count[0] = st->layers; /* one layer shape: no walk */
  else
    for (int64_t i = st->first; i < st->first + st->layers; i++) st->count[m->layer_spec[i]]++;
  for (int k = 0; k < m->nspec; k++) {
    int64_t part;
    CHK(chk_mul(l->token_bits[k], st->count[k], &part));
    CHK(chk_add(st->token_bits, part, &st->token_bits));
    CHK(chk_mul(l->page_bytes[k], st->count[k], &part));
    CHK(chk_add(st->block_bytes, part, &st->block_bytes));
    CHK(chk_mul(l->state_bytes[k], st->count[k], &part));
    CHK(chk_add(st->state_bytes, part, &st->state_bytes));
  }
  if (l->hybrid) {
    /* one block is one page in each of the stage's group_size tensors */
    st->group_size = kvp_vllm_stage_group_size(l, st, spec_type, draft_type, holds_draft(l, s));
    CHK(chk_mul(l->page, st->group_size, &st->block_bytes));
  } else if (!l->plain && stage_groups(l, s, st) != KVP_OK) {
    return KVP_EINVAL;
  }
  TRY(kvp_vllm_align_block(l, st));
  /* weights of the stage's layers, split over tp; rounded up once. MoE
   * under data or expert parallelism: the routed experts apart (vllm_kv.c) */
  TRY(kvp_vllm_stage_weights(l, st, &st->weights));
  if (d->vllm.lora.max_loras > 0) {
    /* vLLM's LoRA slots load with the model: in its weights (checked by
     * kvp_deploy_check) */
    int64_t per;
    TRY(kvp_lora_layer_bytes(&d->vllm.lora, d->tp, &per, NULL));
    CHK(chk_mul(per, st->layers, &st->lora));
    CHK(chk_add(st->weights, st->lora, &st->weights));
  }
  if (d->vllm.rotary_bytes > 0) {
    /* vLLM's rotary cos/sin caches: buffers of the model, built with it
     * and counted in "Model loading took"; one per distinct rope (get_rope's
     * _ROPE_DICT), whole on every tp rank, in each stage's process */
    st->rotary = d->vllm.rotary_bytes;
    CHK(chk_add(st->weights, st->rotary, &st->weights));
  }
  if (d->vllm.alloc_bytes > 0) {
    /* SGLang reads its weights as free memory: the caching allocator's
     * segments beyond the parameters count (engines.lua sglang_alloc_slack;
     * pp 1 alone, checked in Lua) */
    st->alloc = d->vllm.alloc_bytes;
    CHK(chk_add(st->weights, st->alloc, &st->weights));
  }
  if (holds_draft(l, s)) {
    CHK(chk_add(st->token_bits, l->draft_bits, &st->token_bits));
    if (!l->hybrid) CHK(chk_add(st->block_bytes, l->draft_page, &st->block_bytes));
    CHK(chk_add(st->weights, cdiv(d->spec.draft_weight_bytes, d->tp), &st->weights));
  }
  int64_t reserved = st->weights;
  if (d->budget != KVP_BUDGET_SGLANG) {
    const int64_t act = d->vllm.stage_activation_bytes[s] > 0 ? d->vllm.stage_activation_bytes[s]
                                                              : d->activation_bytes;
    CHK(chk_add(reserved, act, &reserved));
    CHK(chk_add(reserved, d->overhead_bytes, &reserved));
  }
  /* memory others hold (system_memory): TensorRT-LLM's free memory after
   * loading and vLLM's non-torch memory of the releases that count all used
   * memory (KVP_SYS_BUDGET) exclude it; SGLang's total does (usable) */
  if (d->budget == KVP_BUDGET_TRTLLM ||
      (d->budget == KVP_BUDGET_VLLM && d->vllm.system_rule == KVP_SYS_BUDGET))
    CHK(chk_add(reserved, d->system_bytes, &reserved));
  st->kv_budget = st->usable - reserved;
  if (d->vllm.kv_cache_bytes > 0) st->kv_budget = d->vllm.kv_cache_bytes;
  switch (d->budget) {
    case KVP_BUDGET_SGLANG:
      st->margin = sglang_total(d) - st->usable;
      break;
    case KVP_BUDGET_TRTLLM:
      if (st->kv_budget > 0) {
        int64_t free_bytes = st->kv_budget;
        st->kv_budget = (int64_t)floor((double)free_bytes * d->utilization);
        st->margin = free_bytes - st->kv_budget;
      }
      break;
    default:
      st->margin = st->gpu_bytes - st->usable;
  }
  size_pool(l, st);
  /* what vLLM is told to allocate beyond what it measured */
  int64_t asked = 0, ask_need = 0;
  if (d->vllm.kv_cache_bytes > 0) asked = d->vllm.kv_cache_bytes;
  if (d->vllm.blocks_override > 0) asked = st->pool;
  if (asked > 0) {
    ask_need = sat_add(reserved, asked);
    st->margin = st->gpu_bytes - ask_need;
  }
  st->host_blocks = st->block_bytes > 0 ? d->host_bytes / st->block_bytes : 0;
  if (!l->plain && d->alloc == KVP_ALLOC_CONTIGUOUS) TRY(reserve_bytes(l, s, &st->reserve));
  f->stage = s;
  int no_block = d->alloc == KVP_ALLOC_CONTIGUOUS ? st->kv_budget <= 0
                 : l->attention_free ? 0 /* no KV, no memory check */
                 : d->budget == KVP_BUDGET_VLLM
                     ? (st->kv_budget < st->block_bytes || (st->block_bytes == 0 && st->kv_budget <= 0))
                     : (st->block_bytes > 0 ? st->blocks < 1 : st->kv_budget <= 0);
  if (st->weights > st->usable) {
    f->why = KVP_WHY_WEIGHTS;
    f->need = st->weights;
    f->have = st->usable;
  } else if (reserved > st->usable) {
    f->why = KVP_WHY_RESERVED;
    f->need = reserved;
    f->have = st->usable;
  } else if (asked > 0 && ask_need > st->gpu_bytes) {
    f->why = KVP_WHY_OVERCOMMIT;
    f->need = ask_need;
    f->have = st->gpu_bytes;
  } else if (no_block) {
    f->why = KVP_WHY_NO_BLOCK;
    f->need = st->block_bytes;
    f->have = st->kv_budget;
  } else {
    f->why = KVP_FITS;
  }
  return KVP_OK;
}

/* Continuous batching: prefix sums of the request bytes at the points. */
static kvp_err stage_points(kvp_ledger *l, int32_t s) {
  int64_t *sum = ledger_sums_of(l, s);
  if (l->d.nlen + 1 > l->cap_points) return KVP_EINVAL;
  sum[0] = 0;
  for (int32_t i = 0; i < l->d.nlen; i++) {
    int64_t own, shared;
    TRY(request_cost(l, s, min64(l->d.len[i], l->max_len), &own, &shared));
    CHK(chk_add(sum[i], own, &sum[i + 1]));
  }
  return KVP_OK;
}

size_t kvp_ledger_size(const kvp_deploy *d) {
  int32_t n, g, p, t;
  ledger_caps(d, &n, &g, &p, &t);
  return offsetof(kvp_ledger, stage) +
         (size_t)n * (sizeof(kvp_stage) + (size_t)g * sizeof(kvp_group) + (size_t)p * sizeof(int64_t)) +
         (size_t)t * sizeof(kvp_kv_type);
}

static kvp_err eval_checked(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag);

kvp_err kvp_ledger_eval(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag) {
  TRY(kvp_deploy_check(d, diag));
  return eval_checked(d, l, diag);
}

kvp_err kvp_ledger_eval_numbers(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag) {
  TRY(kvp_deploy_check_numbers(d, diag));
  return eval_checked(d, l, diag);
}

kvp_err kvp_ledger_eval_own_numbers(kvp_ledger *l, kvp_diag *diag) {
  if (l->adjusted) return KVP_EINVAL;
  TRY(kvp_deploy_check_numbers(&l->d, diag));
  return eval_checked(&l->d, l, diag);
}

static kvp_err eval_once(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag);

/* vLLM's --max-model-len auto (vllm/v1/core/kv_cache_utils.py
 * _auto_fit_max_model_len, vllm-project/vllm#29431, read at 002f10e0cfa1):
 * get_kv_cache_configs binary-searches, on every worker, the longest
 * max_model_len whose request fits the memory the startup check plans
 * against (_estimate_max_model_len_from_groups over check_memory: the
 * override's blocks and the null block by release), takes the fewest over
 * the workers and, when it is below the derived max_model_len, makes it
 * max_model_len; the full length is kept when it fits, and an estimate of 0
 * ("Cannot auto-fit max_model_len: not enough GPU memory available to serve
 * even a single token") refuses to start. The profiling run and the pool
 * are sized before it (the pool from all the memory), so only the answers
 * that read max_model_len change: the ledger is evaluated again at the
 * estimate, the deployment's own max_model_len (0, derived) and the
 * switch kept in l->d. */
static kvp_err eval_checked(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag) {
  if (!d->vllm.auto_fit || d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED)
    return eval_once(d, l, diag);
  /* the deployment as given (d may be l's own, which the evaluation adjusts) */
  kvp_deploy fitted = *d;
  TRY(eval_once(&fitted, l, diag));
  if (l->fit.why != KVP_FITS || l->nstage == 0) return KVP_OK;
  kvp_vllm_start st;
  TRY(kvp_vllm_check(l, &st));
  if (st.max_model_len <= 0 || st.max_model_len >= l->max_len) return KVP_OK;
  int64_t own = fitted.max_model_len;
  fitted.max_model_len = st.max_model_len;
  fitted.vllm.auto_fit = 0;
  TRY(eval_once(&fitted, l, diag));
  l->d.max_model_len = own;
  l->d.vllm.auto_fit = 1;
  return KVP_OK;
}

static kvp_err eval_once(const kvp_deploy *d, kvp_ledger *l, kvp_diag *diag) {
  /* stages are filled as they are evaluated: clear only what lies between
   * the deployment (copied whole, unless it is l's own) and them */
  if (d != &l->d) l->d = *d;
  memset((char *)l + sizeof l->d, 0, offsetof(kvp_ledger, stage) - sizeof l->d);
  /* the layout the caller sized l by (kvp_ledger_size of d as given) */
  ledger_caps(d, &l->cap_stages, &l->cap_groups, &l->cap_points, &l->cap_types);
  const kvp_model *m = &l->d.model;
  l->total = d->gpu_bytes;
  switch (d->budget) {
    case KVP_BUDGET_SGLANG:
      l->usable = (int64_t)floor((double)sglang_total(d) * d->utilization);
      break;
    case KVP_BUDGET_TRTLLM:
      l->usable = d->gpu_bytes;
      break;
    default:
      /* kv_cache_memory_bytes ignores gpu_memory_utilization */
      l->usable = d->vllm.kv_cache_bytes > 0
                      ? d->gpu_bytes : (int64_t)floor((double)d->gpu_bytes * d->utilization);
  }
  if (l->usable > l->total) l->usable = l->total;
  l->plain = kvp_optim_plain(d);
  l->null_blocks = (d->budget == KVP_BUDGET_VLLM && d->alloc == KVP_ALLOC_PAGED) ? 1 : 0;
  kvp_err e = kvp_deploy_weight_bytes(d, &l->weights_total);
  if (e != KVP_OK) return kvp_fail(diag, e, "weight bytes of %lld parameters overflow",
                                   (long long)m->params);
  l->max_len = d->max_model_len ? d->max_model_len
                                : (m->max_context ? m->max_context : CONTEXT_CAP);
  TRY(kvp_vllm_turboquant(l, diag));
  int8_t spec_type[KVP_MAX_SPECS];
  int32_t draft_type;
  e = kvp_vllm_plan_groups(l, spec_type, &draft_type, diag);
  if (e == KVP_EOVERFLOW) return kvp_fail(diag, e, "vLLM's KV cache groups overflow");
  if (e != KVP_OK) return e;
  /* the block vLLM uses (plan_groups raises it for Mamba states) */
  int64_t block = l->d.block;
  l->span = block;
  if (d->vllm.dcp > 1 || d->vllm.pcp > 1) {
    /* SingleTypeKVCacheManager: block_size *= dcp_world_size x pcp_world_size; each rank
     * holds its pages at `block` tokens (vllm_kv.c) */
    TRY(kvp_vllm_dcp_check(l, diag));
    if (!chk_mul(block, d->vllm.dcp > 1 ? d->vllm.dcp : 1, &l->span) ||
        !chk_mul(l->span, d->vllm.pcp > 1 ? d->vllm.pcp : 1, &l->span))
      return kvp_fail(diag, KVP_EOVERFLOW,
                      "block x decode_context_parallel_size x prefill_context_parallel_size "
                      "overflows");
  }
  {
    /* static attention sinks: their blocks leave the pool beside the null block */
    int64_t sink;
    TRY(kvp_vllm_sink_blocks(l, &sink, diag));
    if (!chk_add(l->null_blocks, sink, &l->null_blocks))
      return kvp_fail(diag, KVP_EOVERFLOW, "sink blocks overflow");
  }
  l->state_pages = kvp_vllm_state_only(l);
  {
    int64_t kinds[KVP_NKINDS];
    kvp_model_kind_counts(m, kinds);
    l->attention_free = kinds[KVP_NONE] == m->layers && d->spec.draft_layers == 0;
  }
  for (int k = 0; k < m->nspec; k++) {
    kvp_layer ly;
    TRY(kvp_vllm_mla_entry(d, &m->spec[k], &ly));
    TRY(kvp_kv_token_bits(&ly, &d->kv, kvp_attn_tp(d), &l->token_bits[k]));
    TRY(kvp_page_bytes(l->token_bits[k], block, &l->page_bytes[k]));
    TRY(kvp_kv_state_bytes(&m->spec[k], kvp_attn_tp(d), &l->state_bytes[k]));
    /* a model of recurrent layers alone: vLLM pages their states (MambaSpec,
     * one group of per-layer pages), the pool keeps its null block */
    if (l->state_pages && m->spec[k].kind == KVP_STATE) l->page_bytes[k] = l->state_bytes[k];
    if (d->kv_recent > 0) {
      TRY(kvp_kv_token_bits(&ly, &d->kv_full, kvp_attn_tp(d), &l->full_bits[k]));
      TRY(kvp_page_bytes(l->full_bits[k], block, &l->page_full[k]));
    }
  }
  if (d->spec.draft_layers > 0) {
    int64_t tb, page;
    TRY(kvp_kv_token_bits(&d->spec.draft, &d->kv, kvp_attn_tp(d), &tb));
    TRY(kvp_page_bytes(tb, block, &page));
    if (!chk_mul(tb, d->spec.draft_layers, &l->draft_bits) ||
        !chk_mul(page, d->spec.draft_layers, &l->draft_page))
      return kvp_fail(diag, KVP_EOVERFLOW, "KV of %lld draft layers overflows",
                      (long long)d->spec.draft_layers);
  }
  l->fit.why = KVP_FITS;
  if (d->pp > m->layers) {
    l->fit = (kvp_fit){.why = KVP_WHY_PP_LAYERS, .need = m->layers, .have = d->pp};
    l->nstage = 0;
    return KVP_OK;
  }
  l->fit.why = check_tp(d, &l->fit.need, &l->fit.have);
  l->nstage = (int32_t)d->pp;
  int64_t best = INT64_MAX;
  for (int32_t s = 0; s < l->nstage; s++) {
    kvp_fit f = {0};
    e = eval_stage(l, s, spec_type, draft_type, &f);
    if (e == KVP_EINVAL)
      return kvp_fail(diag, e, "pipeline stage %d has more than %d (layer shape, eviction "
                      "budget) groups", (int)s + 1, KVP_MAX_GROUPS);
    if (e == KVP_OK && l->d.nlen > 0 && l->d.alloc == KVP_ALLOC_PAGED) e = stage_points(l, s);
    if (e != KVP_OK) return kvp_fail(diag, e, "ledger of pipeline stage %d overflows", (int)s);
    if (l->fit.why == KVP_FITS && f.why != KVP_FITS) l->fit = f;
    int64_t room = l->stage[s].block_bytes ? l->stage[s].blocks : l->stage[s].kv_budget;
    if (room < best) {
      best = room;
      l->tight = s;
    }
  }
  return KVP_OK;
}

kvp_err kvp_ledger_seq_bytes(const kvp_ledger *l, int32_t s, int64_t n, int64_t *bytes) {
  if (s < 0 || s >= l->nstage || n < 0) return KVP_EINVAL;
  int64_t sg, sr;
  if (l->d.vllm.v0_blocks) return seq_v0(l, s, n, bytes);
  if (l->hybrid) return seq_grouped(l, s, n, bytes, &sg, &sr);
  if (l->plain) return seq_plain(l, s, n, bytes);
  if (l->d.alloc == KVP_ALLOC_CONTIGUOUS) {
    *bytes = l->stage[s].reserve;
    return KVP_OK;
  }
  return seq_parts(l, s, n, bytes, &sg, &sr);
}

int64_t kvp_ledger_kv_tokens(const kvp_ledger *l) {
  if (l->fit.why != KVP_FITS || l->nstage == 0) return 0;
  const kvp_stage *st = &l->stage[l->tight];
  if (st->block_bytes == 0 || st->blocks < l->null_blocks + 1) return 0;
  int64_t t;
  if (l->hybrid) {
    if (!chk_mul((st->blocks - l->null_blocks) / l->ngroups, l->min_block, &t)) return INT64_MAX;
    return t;
  }
  if (!chk_mul(st->blocks - l->null_blocks, l->state_pages ? kvp_vllm_state_block(l) : l->span,
               &t))
    return INT64_MAX;
  return t;
}

kvp_err kvp_ledger_vllm_log(const kvp_ledger *l, int64_t *tokens, int64_t *blocks,
                            int64_t *per_request) {
  if (l->d.budget != KVP_BUDGET_VLLM || l->d.alloc != KVP_ALLOC_PAGED) return KVP_EINVAL;
  *tokens = *blocks = *per_request = 0;
  if (l->fit.why != KVP_FITS || l->nstage == 0) return KVP_OK;
  const kvp_stage *st = &l->stage[l->tight];
  if (st->block_bytes == 0) return KVP_OK;
  int64_t req = 0, ngroups = 1, min_block = l->span;
  if (l->hybrid) {
    for (int32_t t = 0; t < l->ntype; t++) {
      int64_t part;
      CHK(chk_mul(kvp_vllm_usage_blocks(l, &ledger_types_of(l)[t].shape, ledger_types_of(l)[t].block, l->max_len),
                  ledger_types_of(l)[t].groups,
                  &part));
      CHK(chk_add(req, part, &req));
    }
    ngroups = l->ngroups;
    /* the smallest spec block (an attention group's per rank: its manager's
     * block / (dcp x pcp)), times dcp x pcp (_report_kv_cache_config) */
    int64_t cp = l->span / l->d.block;
    min_block = INT64_MAX;
    for (int32_t t = 0; t < l->ntype; t++) {
      const kvp_kv_type *ty = &ledger_types_of(l)[t];
      min_block = min64(min_block, ty->shape.kind == KVP_STATE ? ty->block : ty->block / cp);
    }
    CHK(chk_mul(min_block, cp, &min_block));
  } else {
    /* one type: every paged layer needs the same blocks; take the first */
    const kvp_model *m = &l->d.model;
    if (l->state_pages) { /* MambaSpec pages of block_size mamba_block_size */
      min_block = kvp_vllm_state_block(l);
      for (int k = 0; k < m->nspec && req == 0; k++)
        if (m->spec[k].kind == KVP_STATE)
          req = kvp_vllm_usage_blocks(l, &m->spec[k], min_block, l->max_len);
    }
    for (int64_t i = 0; i < m->layers && req == 0; i++) {
      const kvp_layer *ly = &m->spec[m->layer_spec[i]];
      if (ly->kind != KVP_STATE) req = kvp_vllm_usage_blocks(l, ly, l->span, l->max_len);
    }
  }
  CHK(chk_mul(st->blocks / ngroups, min_block, tokens));
  *blocks = st->blocks;
  *per_request = req;
  return KVP_OK;
}

/* Requests of n tokens that fit in stage s, the null block and the shared
 * prefix set aside. */
static kvp_err stage_concurrency(const kvp_ledger *l, int32_t s, int64_t n, int64_t *c) {
  const kvp_stage *st = &l->stage[s];
  int64_t own, shared, sum, points, null;
  TRY(kvp_ledger_request_bytes(l, s, n, &own, &shared, &sum, &points));
  CHK(chk_mul(st->block_bytes, l->null_blocks, &null));
  int64_t room = stage_room(st);
  if (room != INT64_MAX) room -= null + shared;
  if (l->attention_free) { /* no KV: the KV cache limits nothing */
    *c = INT64_MAX;
    return KVP_OK;
  }
  if (room <= 0 || sum == 0) {
    *c = (room > 0) ? INT64_MAX : 0; /* a stage without KV layers limits nothing */
    return KVP_OK;
  }
  *c = mul_div(room, points, sum, 0);
  return KVP_OK;
}

/* Bytes `concurrency` requests of n tokens need in stage s, the null block
 * and the shared prefix included; saturates at INT64_MAX (never fits). */
static kvp_err stage_need(const kvp_ledger *l, int32_t s, int64_t n, int64_t concurrency,
                          int64_t *need) {
  int64_t own, shared, sum, points, null;
  TRY(kvp_ledger_request_bytes(l, s, n, &own, &shared, &sum, &points));
  if (!chk_mul(l->stage[s].block_bytes, l->null_blocks, &null)) null = INT64_MAX;
  *need = sat_add(sat_add(mul_div(sum, concurrency, points, 1), shared), null);
  return KVP_OK;
}

kvp_err kvp_ledger_fit(const kvp_ledger *l, int64_t context, int64_t concurrency,
                       kvp_fit *out) {
  if (context < 1 || concurrency < 1) return KVP_EINVAL;
  *out = l->fit;
  out->context = context;
  out->concurrency = concurrency;
  if (l->fit.why != KVP_FITS) return KVP_OK;
  if (context > l->max_len) {
    out->why = KVP_WHY_CONTEXT;
    out->need = context;
    out->have = l->max_len;
    return KVP_OK;
  }
  if (l->d.vllm.max_num_seqs > 0 && concurrency > l->d.vllm.max_num_seqs) {
    out->why = KVP_WHY_SEQS;
    out->need = concurrency;
    out->have = l->d.vllm.max_num_seqs;
    return KVP_OK;
  }
  for (int32_t s = 0; s < l->nstage && !l->attention_free; s++) {
    int64_t need, room = stage_room(&l->stage[s]);
    TRY(stage_need(l, s, context, concurrency, &need));
    if (need > room) {
      out->why = KVP_WHY_KV;
      out->stage = s;
      out->need = need;
      out->have = room;
      return KVP_OK;
    }
  }
  return KVP_OK;
}

kvp_err kvp_ledger_fit_limit(const kvp_ledger *l, int64_t context, int64_t *limit) {
  if (context < 1) return KVP_EINVAL;
  *limit = 0;
  if (l->fit.why != KVP_FITS || context > l->max_len) return KVP_OK;
  int64_t lim = INT64_MAX;
  for (int32_t s = 0; s < l->nstage && lim > 0; s++) {
    /* stage_need(c) = sat(ceil(sum * c / points) + shared + null) <= room */
    int64_t own, shared, sum, points, null, room = stage_room(&l->stage[s]);
    TRY(kvp_ledger_request_bytes(l, s, context, &own, &shared, &sum, &points));
    if (!chk_mul(l->stage[s].block_bytes, l->null_blocks, &null)) null = INT64_MAX;
    int64_t fixed = sat_add(shared, null);
    if (room == INT64_MAX) continue;   /* even a saturated need fits */
    if (fixed > room) {
      lim = 0;
      break;
    }
    /* ceil(sum * c / points) <= rest  <=>  c <= floor(rest * points / sum) */
    if (sum > 0) lim = min64(lim, mul_div(room - fixed, points, sum, 0));
  }
  if (l->d.vllm.max_num_seqs > 0) lim = min64(lim, l->d.vllm.max_num_seqs);
  *limit = lim;
  return KVP_OK;
}

kvp_err kvp_ledger_max_concurrency(const kvp_ledger *l, int64_t context, int64_t *n,
                                   kvp_fit *why) {
  if (context < 1) return KVP_EINVAL;
  TRY(kvp_ledger_fit(l, context, 1, why));
  *n = 0;
  if (why->why != KVP_FITS) return KVP_OK;
  int64_t best = INT64_MAX;
  for (int32_t s = 0; s < l->nstage; s++) {
    int64_t c;
    TRY(stage_concurrency(l, s, context, &c));
    if (c < best) best = c;
  }
  if (l->d.vllm.max_num_seqs > 0 && best > l->d.vllm.max_num_seqs) {
    /* vLLM's scheduler runs at most max_num_seqs requests: the answer is
     * that cap, reported as the limit, with what the KV cache would hold
     * (INT64_MAX: any number); concurrency 0 marks a cap on an answer */
    why->why = KVP_WHY_SEQS;
    why->need = best;
    why->have = l->d.vllm.max_num_seqs;
    why->concurrency = 0;
    best = l->d.vllm.max_num_seqs;
  }
  *n = best;
  return KVP_OK;
}

kvp_err kvp_ledger_max_context(const kvp_ledger *l, int64_t concurrency, int64_t *n,
                               kvp_fit *why) {
  if (concurrency < 1) return KVP_EINVAL;
  TRY(kvp_ledger_fit(l, 1, concurrency, why));
  *n = 0;
  if (why->why != KVP_FITS) return KVP_OK;
  /* bytes grow with n, so bisect for the last n that fits */
  int64_t lo = 1, hi = l->max_len;
  kvp_fit f;
  TRY(kvp_ledger_fit(l, hi, concurrency, &f));
  if (f.why == KVP_FITS) {
    *n = hi;
    return KVP_OK;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    TRY(kvp_ledger_fit(l, mid, concurrency, &f));
    if (f.why == KVP_FITS) lo = mid; else hi = mid;
  }
  *n = lo;
  return KVP_OK;
}

static double gib(int64_t b) { return (double)b / 1073741824.0; }

const char *kvp_why_name(kvp_why w) {
  static const char *const names[KVP_NWHY] = {
    "none", "tp_heads", "tp_kv_heads", "pp_layers", "weights", "reserved", "no_block",
    "context", "kv", "overcommit", "max_num_seqs", "starts"
  };
  return (w >= 0 && w < KVP_NWHY) ? names[w] : "unknown";
}

int kvp_fit_explain(const kvp_fit *f, char *buf, size_t n) {
  char stage[40] = "";
  if (f->stage > 0) snprintf(stage, sizeof stage, " (pipeline stage %d)", (int)f->stage);
  switch (f->why) {
    case KVP_FITS:
      return snprintf(buf, n, "%s", "");
    case KVP_WHY_TP_HEADS:
      return snprintf(buf, n, "tp %lld does not divide the %lld attention heads",
                      (long long)f->have, (long long)f->need);
    case KVP_WHY_TP_KV_HEADS:
      return snprintf(buf, n, "tp %lld and the %lld KV heads do not divide one another",
                      (long long)f->have, (long long)f->need);
    case KVP_WHY_PP_LAYERS:
      return snprintf(buf, n, "pp %lld exceeds the %lld layers", (long long)f->have,
                      (long long)f->need);
    case KVP_WHY_WEIGHTS:
      return snprintf(buf, n, "weights need %.1f GiB per GPU, %.1f GiB usable%s",
                      gib(f->need), gib(f->have), stage);
    case KVP_WHY_RESERVED:
      return snprintf(buf, n,
                      "weights, activations and overhead need %.1f GiB per GPU, %.1f GiB usable%s",
                      gib(f->need), gib(f->have), stage);
    case KVP_WHY_NO_BLOCK:
      return snprintf(buf, n, "%.3f GiB left for KV per GPU holds not one block of %.3f GiB%s",
                      gib(f->have), gib(f->need), stage);
    case KVP_WHY_CONTEXT:
      return snprintf(buf, n, "context %lld exceeds max_model_len %lld", (long long)f->need,
                      (long long)f->have);
    case KVP_WHY_OVERCOMMIT:
      return snprintf(buf, n,
                      "the KV cache vLLM is told to allocate (num_gpu_blocks_override or "
                      "kv_cache_memory_bytes) with weights, activations and overhead needs %.2f "
                      "GiB per GPU, the GPU has %.2f GiB%s", gib(f->need), gib(f->have), stage);
    case KVP_WHY_SEQS:
      if (f->concurrency == 0 && f->need == INT64_MAX)
        return snprintf(buf, n, "vLLM's scheduler runs at most max_num_seqs %lld requests (the "
                        "KV cache holds any number)", (long long)f->have);
      if (f->concurrency == 0)
        return snprintf(buf, n, "vLLM's scheduler runs at most max_num_seqs %lld requests (the "
                        "KV cache holds %lld)", (long long)f->have, (long long)f->need);
      return snprintf(buf, n, "concurrency %lld exceeds max_num_seqs %lld", (long long)f->need,
                      (long long)f->have);
    case KVP_WHY_STARTS:
      return snprintf(buf, n, "%s", "the engine refuses to start");
    case KVP_NWHY:
      break;
    case KVP_WHY_KV:
      if (f->need == INT64_MAX)
        return snprintf(buf, n, "KV for %lld x %lld tokens exceeds any memory%s",
                        (long long)f->concurrency, (long long)f->context, stage);
      return snprintf(buf, n, "KV for %lld x %lld tokens needs %.2f GiB per GPU, %.2f GiB left for KV%s",
                      (long long)f->concurrency, (long long)f->context, gib(f->need),
                      gib(f->have), stage);
  }
  return snprintf(buf, n, "%s", "unknown reason");
}
