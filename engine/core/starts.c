/*
 * starts.c: would the engine start (starts.h)? Each engine's startup
 * refusal, as arithmetic on the evaluated ledger. Pure computation: no Lua,
 * no I/O.
 *
 * vLLM (budget vllm, paged): exits when one request of max_model_len needs
 *   more KV cache than a worker has (vllm-project/vllm vllm/v1/core/
 *   kv_cache_utils.py check_enough_kv_cache_memory: kvp_vllm_check,
 *   vllm_kv.c), naming the longest max_model_len it estimates would fit;
 *   and, when that check passes, when a model with Mamba layers runs full
 *   CUDA graphs and max_num_seqs exceeds the pool's blocks: "max_num_seqs
 *   (N) exceeds available Mamba cache blocks (M). Each decode sequence
 *   requires one Mamba cache block, so CUDA graph capture cannot proceed"
 *   (vllm-project/vllm#38270, merged 2026-03-26, which replaced #37416's
 *   silent cap of the capture sizes; the condition "has_full_cudagraphs()
 *   and kv_cache_config.has_mamba_layers and max_num_reqs >
 *   kv_cache_config.num_blocks", quoted from vllm/config/compilation.py in
 *   vllm-project/vllm#49064; its test tests/v1/worker/
 *   test_gpu_model_runner.py test_mamba_cache_raises_when_max_num_seqs_
 *   exceeds_blocks at 0099f1dfe34f). num_blocks is every worker's pool, the
 *   null block included; max_num_seqs the given one or vLLM's default
 *   (vllm.max_num_seqs: 0, a deployment that does not name its engine, has
 *   none to check). The release and enforce_eager (no CUDA graphs) decide
 *   vllm.mamba_seqs_check (deploy.lua).
 * SGLang (budget sglang, paged): sgl-project/sglang python/sglang/srt/
 *   model_executor/model_runner.py init_memory_pool (and the newer
 *   pool_configurator.py MemoryPoolConfig): max_total_num_tokens, rounded
 *   down to the page size, <= 0 raises "Not enough memory. Please try to
 *   increase --mem-fraction-static."; managers/tp_worker.py TpModelWorker:
 *   max_req_len = min(context_len - 1, max_total_num_tokens - 1),
 *   max_req_input_len = max_req_len - 5, and "Memory pool size is too small"
 *   unless both are > 0. A context_len beyond the pool is no refusal:
 *   requests are cut to max_req_len tokens.
 * TensorRT-LLM (budget trtllm, paged): PyTorch backend tensorrt_llm/_torch/
 *   pyexecutor/resource_manager.py KVCacheManager: the pool's blocks are
 *   ceil(max_tokens / tokens_per_block), as the ledger's (1.1.0rc3 reduces a
 *   window of 131072 to "upper bound 86720" for max_tokens 86711: 2710
 *   blocks of 32, tests/validation/trtllm-spark-gpt-oss-120b-gb10.log;
 *   resource_manager.py at NVIDIA/TensorRT-LLM 001541bad83b floors them in a
 *   release not pinned); get_max_atten_window_upper_bound asserts
 *   "Impossible to fit in any sequence in kvCache" when no block is left,
 *   and a max_seq_len beyond blocks x tokens_per_block is reduced to it; the
 *   engine path (cpp/tensorrt_llm/batch_manager/
 *   trtGptModelInflightBatching.cpp clampWindowSizesToFitAtLeastOneSequence)
 *   reduces maxAttentionWindow and maxSequenceLen the same way and throws
 *   instead under fail_fast_on_attention_window_too_large. max_tokens =
 *   floor(KV budget / bytes per token), capped by max_tokens (max_kv_tokens).
 * vLLM V1 (budget vllm, vllm.system_rule KVP_SYS_CHECK) with system_memory:
 *   init_device takes a MemorySnapshot and raises "Free memory on device
 *   (F/T GiB) on startup is less than desired GPU memory utilization (u, R
 *   GiB)" when free_memory < requested_memory = total_memory x
 *   gpu_memory_utilization (vllm/v1/worker/gpu_worker.py init_device at
 *   35d5cda123ec); free is taken as the GPU less system_memory (the
 *   engine's own CUDA context and NCCL buffers at the snapshot are not
 *   counted, so the real check refuses a little sooner). Checked first:
 *   the worker raises it before the weights load, whatever the ledger.
 * Any other rule or allocation starts whenever the deployment fits.
 *
 * The verdict (kvp_verdict_*): requests the ledger lets in run only on an
 * engine that starts; the one place that rule is written.
 */
#include <stdio.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"

static double gib(int64_t b) { return (double)b / 1073741824.0; }

static const kvp_stage *tight(const kvp_ledger *l) {
  return l->nstage > 0 ? &l->stage[l->tight] : NULL;
}

static int64_t token_bits(const kvp_ledger *l) {
  const kvp_stage *st = tight(l);
  return st ? st->token_bits : 0;
}

static int64_t kv_budget(const kvp_ledger *l) {
  const kvp_stage *st = tight(l);
  return st && st->kv_budget > 0 ? st->kv_budget : 0;
}

/* floor(bytes * 8 / bits) for bytes >= 0, bits > 0, without overflow
 * (INT64_MAX past it). */
static int64_t tokens_of(int64_t bytes, int64_t bits) {
  int64_t q = bytes / bits, r = bytes % bits, t;
  if (!chk_mul(q, 8, &t) || !chk_add(t, (r * 8) / bits, &t)) return INT64_MAX;
  return t;
}

static kvp_err sglang(const kvp_ledger *l, kvp_start *out) {
  kvp_why w = l->fit.why;
  if (w != KVP_FITS && w != KVP_WHY_WEIGHTS && w != KVP_WHY_RESERVED && w != KVP_WHY_NO_BLOCK) {
    out->why = KVP_START_NO_FIT;
    return KVP_OK;
  }
  /* a model without KV (Mamba layers alone) has no token pool to refuse */
  if (w == KVP_FITS && token_bits(l) == 0) {
    out->starts = 1;
    return KVP_OK;
  }
  int64_t tokens = w == KVP_FITS ? kvp_ledger_kv_tokens(l) : 0;
  out->tokens = tokens;
  if (tokens <= 0) {
    out->why = KVP_START_SGLANG_MEMORY;
    return KVP_OK;
  }
  int64_t max_req_len = l->max_len - 1 < tokens - 1 ? l->max_len - 1 : tokens - 1;
  if (max_req_len - 5 <= 0) {
    out->why = KVP_START_SGLANG_POOL;
    out->limit = max_req_len - 5;
    return KVP_OK;
  }
  out->starts = 1;
  if (l->max_len - 1 > tokens - 1) {
    out->why = KVP_START_CUT;
    out->limit = max_req_len;
  }
  return KVP_OK;
}

static kvp_err trtllm(const kvp_ledger *l, kvp_start *out) {
  kvp_why w = l->fit.why;
  if (w != KVP_FITS && w != KVP_WHY_NO_BLOCK) {
    out->why = KVP_START_NO_FIT;
    return KVP_OK;
  }
  int64_t bits = token_bits(l);
  if (w == KVP_FITS && bits == 0) { /* no KV to hold */
    out->starts = 1;
    return KVP_OK;
  }
  int64_t tokens = bits > 0 ? tokens_of(kv_budget(l), bits) : 0;
  if (l->d.max_kv_tokens > 0 && l->d.max_kv_tokens < tokens) tokens = l->d.max_kv_tokens;
  int64_t block = l->d.block > 0 ? l->d.block : 1;
  out->tokens = tokens;
  out->blocks = cdiv(tokens, block);
  if (out->blocks < 1) {
    out->why = KVP_START_TRTLLM_BLOCK;
    return KVP_OK;
  }
  int64_t window = out->blocks * block; /* < tokens + block */
  if (l->max_len > window) {
    out->limit = window;
    if (l->d.fail_fast) {
      out->why = KVP_START_TRTLLM_WINDOW;
      return KVP_OK;
    }
    out->why = KVP_START_CUT;
  }
  out->starts = 1;
  return KVP_OK;
}

kvp_err kvp_start_check(const kvp_ledger *l, kvp_start *out, kvp_diag *diag) {
  if (l == NULL || out == NULL) return KVP_EINVAL;
  memset(out, 0, sizeof *out);
  const kvp_deploy *d = &l->d;
  if (d->alloc == KVP_ALLOC_PAGED && d->budget == KVP_BUDGET_SGLANG) return sglang(l, out);
  if (d->alloc == KVP_ALLOC_PAGED && d->budget == KVP_BUDGET_TRTLLM) return trtllm(l, out);
  if (d->budget == KVP_BUDGET_VLLM && d->vllm.system_rule == KVP_SYS_CHECK && d->system_bytes > 0) {
    /* init_device, before the weights load: free memory < total x utilization */
    int64_t free_bytes;
    if (!chk_sub(d->gpu_bytes, d->system_bytes, &free_bytes)) free_bytes = INT64_MIN;
    double requested = (double)d->gpu_bytes * d->utilization;
    if ((double)free_bytes < requested) {
      out->why = KVP_START_VLLM_FREE;
      out->available = free_bytes > 0 ? free_bytes : 0;
      out->needed = (int64_t)requested;
      return KVP_OK;
    }
  }
  if (l->fit.why != KVP_FITS) {
    out->why = KVP_START_NO_FIT;
    return KVP_OK;
  }
  if (d->budget != KVP_BUDGET_VLLM || d->alloc != KVP_ALLOC_PAGED) {
    out->starts = 1;
    return KVP_OK;
  }
  kvp_vllm_start c;
  kvp_err e = kvp_vllm_check(l, &c);
  if (e == KVP_EOVERFLOW) /* the bytes grow with the length checked */
    return kvp_fail(diag, e, "vLLM's startup check: the KV cache one request of %lld tokens needs "
                    "exceeds 64 bits (caused by field '%s' = %lld)", (long long)l->max_len,
                    d->max_model_len ? "max_model_len" : "max_context", (long long)l->max_len);
  TRY(e);
  if (c.starts) {
    int64_t seqs = d->vllm.max_num_seqs, blocks = INT64_MAX, kinds[KVP_NKINDS];
    kvp_model_kind_counts(&d->model, kinds);
    if (d->vllm.mamba_seqs_check && seqs > 0 && kinds[KVP_STATE] > 0) {
      for (int32_t s = 0; s < l->nstage; s++)
        if (l->stage[s].block_bytes > 0 && l->stage[s].blocks < blocks) blocks = l->stage[s].blocks;
      if (blocks != INT64_MAX && seqs > blocks) {
        out->why = KVP_START_VLLM_MAMBA_SEQS;
        out->needed = seqs;
        out->limit = blocks;
        return KVP_OK;
      }
    }
    out->starts = 1;
    return KVP_OK;
  }
  out->why = KVP_START_VLLM_LEN;
  out->limit = c.max_model_len;
  out->needed = c.needed;
  out->available = c.available > 0 ? c.available : 0;
  return KVP_OK;
}

int kvp_start_explain(const kvp_ledger *l, const kvp_start *s, char *buf, size_t n) {
  switch (s->why) {
    case KVP_START_OK: case KVP_NSTART:
      break;
    case KVP_START_NO_FIT:
      return kvp_fit_explain(&l->fit, buf, n);
    case KVP_START_VLLM_LEN:
      return snprintf(buf, n, "vLLM refuses to start: one request of max_model_len %lld tokens "
                      "needs %.2f GiB of KV cache, %.2f GiB available (vLLM's estimated maximum "
                      "model length is %lld)", (long long)l->max_len, gib(s->needed),
                      gib(s->available), (long long)s->limit);
    case KVP_START_VLLM_MAMBA_SEQS:
      return snprintf(buf, n, "vLLM refuses to start (\"max_num_seqs (%lld) exceeds available "
                      "Mamba cache blocks (%lld). Each decode sequence requires one Mamba cache "
                      "block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to "
                      "at most %lld or increase gpu_memory_utilization.\")", (long long)s->needed,
                      (long long)s->limit, (long long)s->limit);
    case KVP_START_VLLM_FREE:
      return snprintf(buf, n, "vLLM refuses to start (\"Free memory on device (%.2f/%.2f GiB) on "
                      "startup is less than desired GPU memory utilization (%g, %.2f GiB)\"): "
                      "system_memory %.2f GiB is held by others", gib(s->available),
                      gib(l->d.gpu_bytes), l->d.utilization, gib(s->needed),
                      gib(l->d.system_bytes));
    case KVP_START_SGLANG_MEMORY: {
      const kvp_stage *st = tight(l);
      int64_t weights = st ? st->weights : 0, bits = token_bits(l);
      char per[32];
      if (bits % 8 == 0) snprintf(per, sizeof per, "%lld", (long long)(bits / 8));
      else snprintf(per, sizeof per, "%.17g", (double)bits / 8.0);
      return snprintf(buf, n, "SGLang refuses to start (\"Not enough memory. Please try to "
                      "increase --mem-fraction-static.\"): mem_fraction_static %.3f of %.2f GiB "
                      "leaves %.2f GiB after %.2f GiB of weights, no KV token of %s bytes",
                      l->d.utilization, gib(l->d.gpu_bytes), gib(l->usable - weights),
                      gib(weights), per);
    }
    case KVP_START_SGLANG_POOL:
      return snprintf(buf, n, "SGLang refuses to start (\"Memory pool size is too small\"): a "
                      "pool of %lld tokens leaves max_req_input_len = min(context_len - 1, %lld "
                      "- 1) - 5 = %lld", (long long)s->tokens, (long long)s->tokens,
                      (long long)s->limit);
    case KVP_START_TRTLLM_BLOCK:
      return snprintf(buf, n, "TensorRT-LLM refuses to start (\"Impossible to fit in any "
                      "sequence in kvCache\"): %.2f GiB of KV memory holds %lld tokens, not "
                      "one block of %lld", gib(kv_budget(l)), (long long)s->tokens,
                      (long long)l->d.block);
    case KVP_START_TRTLLM_WINDOW:
      return snprintf(buf, n, "TensorRT-LLM refuses to start (\"Attention window too large to "
                      "fit even a single sequence in the KV cache. Failing fast rather than "
                      "attempting an adjustment of the window sizes.\"): max_seq_len %lld, %lld "
                      "blocks of %lld tokens hold %lld", (long long)l->max_len,
                      (long long)s->blocks, (long long)l->d.block, (long long)s->limit);
    case KVP_START_CUT:
      if (l->d.budget == KVP_BUDGET_SGLANG)
        return snprintf(buf, n, "SGLang starts and cuts requests to max_req_len %lld tokens "
                        "(max_total_num_tokens %lld - 1 < context_len %lld - 1)",
                        (long long)s->limit, (long long)s->tokens, (long long)l->max_len);
      return snprintf(buf, n, "TensorRT-LLM starts with maxAttentionWindow and maxSequenceLen "
                      "reduced to %lld (%lld blocks of %lld tokens; max_seq_len %lld does not "
                      "fit one sequence)", (long long)s->limit, (long long)s->blocks,
                      (long long)l->d.block, (long long)l->max_len);
  }
  return snprintf(buf, n, "%s", "");
}

kvp_err kvp_verdict_fit(const kvp_ledger *l, int64_t context, int64_t concurrency,
                        kvp_verdict *out, kvp_diag *diag) {
  if (l == NULL || out == NULL) return KVP_EINVAL;
  TRY(kvp_ledger_fit(l, context, concurrency, &out->fit));
  TRY(kvp_start_check(l, &out->start, diag));
  kvp_verdict_fold(&out->fit, &out->start);
  return KVP_OK;
}

kvp_err kvp_verdict_max_concurrency(const kvp_ledger *l, int64_t context, int64_t *n,
                                    kvp_verdict *out, kvp_diag *diag) {
  if (l == NULL || n == NULL || out == NULL) return KVP_EINVAL;
  TRY(kvp_ledger_max_concurrency(l, context, n, &out->fit));
  TRY(kvp_start_check(l, &out->start, diag));
  kvp_verdict_fold(&out->fit, &out->start);
  return KVP_OK;
}

kvp_err kvp_verdict_min_tp(const kvp_deploy *d, int64_t context, int64_t concurrency,
                           int64_t max_tp, kvp_ledger *l, int64_t *tp, kvp_verdict *out,
                           kvp_diag *diag) {
  if (max_tp < 1)
    return kvp_fail(diag, KVP_EINVAL, "field 'max_tp' must be an integer >= 1, got %lld",
                    (long long)max_tp);
  kvp_deploy t = *d;
  *tp = 0;
  for (int64_t p = 1; p <= max_tp; p *= 2) {
    t.tp = p;
    TRY(kvp_ledger_eval(&t, l, diag));
    TRY(kvp_verdict_fit(l, context, concurrency, out, diag));
    if (out->fit.why == KVP_FITS) {
      *tp = p;
      return KVP_OK;
    }
    if (p > INT64_MAX / 2) break;
  }
  return KVP_OK;
}

int kvp_verdict_explain(const kvp_ledger *l, const kvp_fit *f, const kvp_start *s, char *buf,
                        size_t n) {
  if (f->why == KVP_WHY_STARTS && s != NULL) return kvp_start_explain(l, s, buf, n);
  return kvp_fit_explain(f, buf, n);
}
