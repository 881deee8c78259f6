/*
 * paging.c: paged KV blocks (PagedAttention, Kwon et al., SOSP 2023).
 * Pure computation: no Lua, no I/O.
 *
 * A block (page) of one layer holds `block` tokens (vLLM default 16,
 * vllm/config/cache.py); a request of n tokens takes ceil(n / block) blocks,
 * so waste is confined to each sequence's last block. Block 0 of the pool
 * is the null block (vllm/v1/core/block_pool.py) and holds no request.
 */
#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

kvp_err kvp_layer_blocks(const kvp_layer *l, int64_t n, int64_t block,
                         int64_t max_num_batched_tokens, int64_t *blocks) {
  if (n < 0 || block < 1 || max_num_batched_tokens < 1) return KVP_EINVAL;
  switch (l->kind) {
    case KVP_FULL:
    case KVP_MLA:
      *blocks = cdiv(n, block);
      return KVP_OK;
    case KVP_SLIDING: {
      /* vllm SlidingWindowSpec.max_memory_usage_bytes:
       * cdiv(min(W - 1 + max_num_batched_tokens, max_model_len), block) + 1 */
      int64_t span;
      CHK(chk_add(l->window - 1, max_num_batched_tokens, &span));
      if (n <= span) {
        *blocks = cdiv(n, block);
      } else {
        *blocks = cdiv(span, block) + 1;
      }
      return KVP_OK;
    }
    case KVP_CHUNKED: {
      /* vllm ChunkedLocalAttentionSpec: cdiv(min(C + max_num_batched_tokens, len), block) */
      int64_t span;
      CHK(chk_add(l->window, max_num_batched_tokens, &span));
      *blocks = cdiv(min64(span, n), block);
      return KVP_OK;
    }
    case KVP_CROSS:
      /* vllm CrossAttentionManager: the encoder's tokens, allocated when the
       * request starts (CrossAttentionSpec.max_memory_usage_bytes:
       * cdiv(max_num_encoder_input_tokens, block)) */
      *blocks = n > 0 ? cdiv(l->window, block) : 0;
      return KVP_OK;
    default:
      *blocks = 0;
      return KVP_OK;
  }
}

kvp_err kvp_page_bytes(int64_t token_bits, int64_t block, int64_t *bytes) {
  if (token_bits < 0 || block < 1) return KVP_EINVAL;
  int64_t bits;
  CHK(chk_mul(token_bits, block, &bits));
  *bytes = cdiv(bits, 8);
  return KVP_OK;
}
