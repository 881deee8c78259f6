/*
 * kv.c: KV cache bytes per token, per sequence and per pipeline stage.
 * Pure computation: no Lua, no I/O.
 *
 * Per layer and token (vLLM vllm/v1/kv_cache_interface.py):
 *   full, sliding, chunked  kv_heads_per_gpu * (head_dim + head_dim_v) elements
 *   MLA                     kv_lora_rank + qk_rope_head_dim elements, no factor 2,
 *                           the whole latent on every tensor-parallel rank
 *                           (kv_cache_dtype fp8_ds_mla: the latent in fp8 with
 *                           an fp32 scale per 128, the rope in bf16: 656 bytes,
 *                           MLAAttentionSpec.real_page_size_bytes, vllm
 *                           001cabc1be16), plus an indexer's keys when the model
 *                           has one: index_head_dim fp8 bytes and an fp32 scale
 *                           per 128 (DeepseekV32IndexerCache: head size
 *                           128 + 128 / 128 * 4 = 132 uint8 for DeepSeek-V3.2,
 *                           vLLM tests/v1/core/test_kv_cache_utils.py
 *                           new_indexer_mla_spec at 002f10e0cfa1), whatever
 *                           the KV format, also whole on every rank
 *   state                   none per token: a fixed state per sequence
 * Group scales of the KV format never span a head row (one head's K or V).
 * TurboQuant formats (vLLM TQFullAttentionSpec.real_page_size_bytes at
 * 001cabc1be16: block x kv_heads x tq_slot_size): kv_heads_per_gpu slots of
 * kvp_format_tq_slot(head_dim) bytes a token (vLLM passes head_size as
 * head_size_v); a layer kept in the model dtype (kv_auto: TurboQuant's boundary
 * layers, vLLM's HiddenStateCacheSpec) 16 bits an element, any kind.
 */
#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

int64_t kvp_kv_heads_per_gpu(int64_t kv_heads, int64_t tp) {
  int64_t h = kv_heads / tp;
  return h > 1 ? h : 1;
}

kvp_err kvp_kv_token_bits(const kvp_layer *l, const kvp_format *kv, int64_t tp,
                          int64_t *bits) {
  if (tp < 1) return KVP_EINVAL;
  /* a layer kept in the model dtype whatever the KV format (TurboQuant's
   * boundary layers, the hidden-state cache of extract_hidden_states) */
  const kvp_format bf16 = {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  if (l->kv_auto) kv = &bf16;
  switch (l->kind) {
    case KVP_FULL:
    case KVP_SLIDING:
    case KVP_CHUNKED:
    case KVP_CROSS: {
      int64_t h = kvp_kv_heads_per_gpu(l->kv_heads, tp), nk, nv, bk, bv;
      if (kv->tq_key_bits > 0) {
        int64_t slot = kvp_format_tq_slot(kv, l->head_dim);
        if (slot <= 0) return KVP_EINVAL;
        CHK(chk_mul(h, slot, bits));
        CHK(chk_mul(*bits, 8, bits));
        return KVP_OK;
      }
      CHK(chk_mul(h, l->head_dim, &nk));
      CHK(chk_mul(h, l->head_dim_v, &nv));
      TRY(kvp_format_bits(kv, nk, l->head_dim, &bk));
      TRY(kvp_format_bits(kv, nv, l->head_dim_v, &bv));
      CHK(chk_add(bk, bv, bits));
      return KVP_OK;
    }
    case KVP_MLA: {
      int64_t n, idx = 0;
      if (kv->tq_key_bits > 0) return KVP_EINVAL; /* TurboQuant pages full attention only */
      if (kv->rope_bits > 0) {
        int64_t rope;
        TRY(kvp_format_bits(kv, l->latent, l->latent, bits));
        CHK(chk_mul(l->rope_dim, kv->rope_bits, &rope));
        CHK(chk_add(*bits, rope, bits));
      } else {
        CHK(chk_add(l->latent, l->rope_dim, &n));
        TRY(kvp_format_bits(kv, n, n, bits));
      }
      TRY(kvp_kv_index_bits(l, &idx));
      CHK(chk_add(*bits, idx, bits));
      return KVP_OK;
    }
    default:
      *bits = 0;
      return KVP_OK;
  }
}

kvp_err kvp_kv_index_bits(const kvp_layer *l, int64_t *bits) {
  *bits = 0;
  if (l->kind != KVP_MLA || l->index_dim <= 0) return KVP_OK;
  int64_t idx;
  CHK(chk_add(l->index_dim, l->index_dim / 128 * 4, &idx));
  CHK(chk_mul(idx, 8, bits));
  return KVP_OK;
}

kvp_err kvp_kv_state_bytes(const kvp_layer *l, int64_t tp, int64_t *bytes) {
  if (tp < 1) return KVP_EINVAL;
  if (l->kind != KVP_STATE) {
    *bytes = 0;
    return KVP_OK;
  }
  /* heads of the state are split across ranks like KV heads */
  CHK(chk_mul(l->state_bytes / l->kv_heads, kvp_kv_heads_per_gpu(l->kv_heads, tp), bytes));
  return KVP_OK;
}

int64_t kvp_kv_tokens_held(const kvp_layer *l, int64_t n) {
  switch (l->kind) {
    case KVP_FULL:
    case KVP_MLA: return n;
    case KVP_SLIDING:
    case KVP_CHUNKED: return min64(n, l->window);
    case KVP_CROSS: return n > 0 ? l->window : 0; /* the encoder's tokens, from the start */
    default: return 0;
  }
}

kvp_err kvp_pp_stage(int64_t layers, int64_t pp, int64_t stage, int64_t *first,
                     int64_t *count) {
  if (layers < 1 || pp < 1 || pp > layers || stage < 0 || stage >= pp) return KVP_EINVAL;
  /* vllm/distributed/utils.py get_pp_indices: partitions[-i] += 1 for
   * i in 2 .. remaining + 1, i.e. stages pp-2, pp-3, ... get one more. */
  int64_t per = layers / pp, rem = layers % pp, start = 0;
  for (int64_t s = 0; s <= stage; s++) {
    int64_t size = per + (s >= pp - 1 - rem && s <= pp - 2);
    if (s == stage) {
      *first = start;
      *count = size;
    }
    start += size;
  }
  return KVP_OK;
}

kvp_err kvp_kv_seq_bytes(const kvp_model *m, const kvp_format *kv, int64_t tp,
                         int64_t first, int64_t count, int64_t n, int64_t *bytes) {
  if (n < 0 || first < 0 || count < 0 || first + count > m->layers) return KVP_EINVAL;
  int64_t per_spec[KVP_MAX_SPECS] = {0};
  for (int64_t i = first; i < first + count; i++) per_spec[m->layer_spec[i]]++;
  int64_t total = 0;
  for (int s = 0; s < m->nspec; s++) {
    if (per_spec[s] == 0) continue;
    const kvp_layer *l = &m->spec[s];
    int64_t one;
    if (l->kind == KVP_STATE) {
      TRY(kvp_kv_state_bytes(l, tp, &one));
    } else {
      int64_t tb, bits;
      TRY(kvp_kv_token_bits(l, kv, tp, &tb));
      CHK(chk_mul(tb, kvp_kv_tokens_held(l, n), &bits));
      one = cdiv(bits, 8); /* one tensor per layer: round once */
    }
    int64_t part;
    CHK(chk_mul(one, per_spec[s], &part));
    CHK(chk_add(total, part, &total));
  }
  *bytes = total;
  return KVP_OK;
}
