/*
 * predict.c: what an engine's memory profiler will measure, before any GPU
 * runs it: the activation peak of vLLM's profiling run.
 * Pure computation: no Lua, no I/O.
 *
 * vLLM sizes the KV cache after a profiling run (V1: vllm/v1/worker/
 * gpu_worker.py determine_available_memory -> gpu_model_runner.py
 * profile_run; V0: vllm/worker/worker.py determine_num_available_blocks ->
 * model_runner.py profile_run, read at vllm-project/vllm 35d5cda123ec and
 * 0012cf691b7e). The run is one dummy forward of max_num_batched_tokens (N)
 * tokens split over min(max_num_seqs, N) requests, then, on the last pipeline
 * stage, one sampler call on the last token of each request
 * (_dummy_sampler_run). The "activation peak" vLLM logs is the torch
 * allocator's peak over that run minus what was allocated before it (weights,
 * the runner's persistent input buffers): memory_profiling's
 * torch_peak_increase (vllm/utils/mem_utils.py). It is therefore
 *
 *   peak = max(forward, sampler)
 *   forward = N x the most bytes live per token inside one decoder layer
 *   sampler = the hidden states still referenced (below) +
 *             S x V x c, S = min(max_num_seqs, N) rows of the vocabulary
 *
 * and, in every term, what torch holds from the profile's first GEMM on
 * (blas_workspace, below).
 *
 * with b the activation dtype's bytes, H the hidden size, V the vocabulary
 * (the whole of it: compute_logits gathers the TP shards), and c the bytes
 * per logit the sampler keeps live at once. Per token inside a layer
 * (tensors of one token; I, q, kv divided over tp as the column-parallel
 * layers shard them; the residual stream is replicated):
 *
 *   dense MLP (LlamaMLP.forward, vllm/model_executor/models/llama.py):
 *     residual H + the MLP's input H + gate_up 2I + act I + down's output H.
 *     Eagerly (V0, enforce_eager) gate_up stays bound to its local name until
 *     the function returns: 3H + 3I (hi). Compiled (V1's default
 *     torch.compile), a buffer is freed after its last use, so gate_up is
 *     gone before down_proj: max(2H + 3I, 3H + I) (lo).
 *   attention: residual H + input H + qkv (q + 2 kv) d + attention output
 *     q d + o_proj's output H (d the head size; MLA: q heads of
 *     qk_nope + rope dims and the latent kv_lora_rank + rope per token).
 *   bitsandbytes 4-bit linear layers (dequant_mlp, dequant_attn; vLLM's
 *     BitsAndBytesLinearMethod._apply_4bit_weight and _apply_bnb_4bit,
 *     vllm/model_executor/layers/quantization/bitsandbytes.py, read at
 *     chzhdong/Adaptive-Batching 7fe2a05dbe74 (an early-2025 copy, not
 *     pinned to a release, the loop inline) and vllm-project/vllm 01f5395fdf04 (the loop in the custom op
 *     apply_bnb_4bit): out is allocated whole, then each shard of the
 *     layer (gate and up of gate_up_proj, q, k and v of qkv_proj, one for
 *     down_proj and o_proj) runs matmul_4bit and is copied into its slice.
 *     bitsandbytes' matmul_4bit (bitsandbytes/autograd/_functions.py at
 *     0.45.5, d72cb9cb6046) takes the GEMV kernel for one row alone; for
 *     more, MatMul4Bit.forward runs linear(A, dequantize_4bit(B).to(A.dtype)
 *     .t()): the shard dequantized to a temporary of its shape in the quant
 *     state's dtype (functional.py dequantize_4bit, torch.empty(
 *     quant_state.shape, dtype=quant_state.dtype)) and the product to a
 *     second one. So at down_proj (o_proj) one shard W of I/tp x H (q d x H)
 *     elements b and an output H beside out are live: the MLP holds
 *     4H + 3I (hi) or max(2H + 3I, 4H + I) (lo) per token, attention one H
 *     more, and each adds W, whatever the tokens. The quant state's dtype is
 *     taken as the activations' (the in-flight loader quantizes the loaded
 *     weights; a checkpoint's quant state names its own: a float16 one under
 *     bf16 activations would hold a second copy during .to, not counted).
 *   fused MoE (vllm/model_executor/layers/fused_moe/fused_moe.py
 *     fused_experts_impl): per token routed to k experts, intermediate_cache1
 *     2I_e, cache2 I_e and cache3 H each k times, for at most chunk tokens at
 *     a time (VLLM_FUSED_MOE_CHUNK_SIZE, 32768); newer releases share cache1
 *     and cache3 (cache13 of max(2I_e, H)) (lo) where older ones keep both
 *     (hi); plus the router logits E b, the residual, input and output 3H,
 *     and the shared experts' MLP output H when there are shared experts.
 *   sampler (vllm/v1/sample/sampler.py, ops/topk_topp_sampler.py): the
 *     model-dtype logits b, their fp32 copy 4, and either FlashInfer's fused
 *     top-k/top-p sampling, which adds the fp32 probabilities 4 (lo: c = b + 8),
 *     or the PyTorch path (apply_top_k_top_p), which sorts the logits. The
 *     dummy run asks for top-k and top-p. The path's peak is the larger of
 *     two moments (hi): the scatter back, with the sorted values 4, int64
 *     indices 8, the top-k and top-p boolean masks 1 + 1, the softmax 4 and
 *     the scattered result 4 live (c = b + 26); and the sort itself, where
 *     the fp32 logits, the sort's outputs (values 4, indices 8) and the
 *     sort's own temporaries are live (c = b + 16, plus the temporaries).
 *     The temporaries are PyTorch's (aten/src/ATen/native/cuda/
 *     SortStable.cu, launch_stable_sort_kernel; the vocabulary is above the
 *     4096 of the in-place small sort) and CUB's (a radix sort that may not
 *     overwrite its input allocates alternate key and value buffers of the
 *     input's size: cub/device/dispatch/dispatch_radix_sort.cuh, "bytes
 *     needed for 3rd keys/values buffer"). Per sorted element, by the
 *     number g of rows sorted in one batch (a batch holds at most
 *     INT_MAX / V rows):
 *       g >= 128: segmented_sort_pairs: reverse indices 8 + CUB's alternate
 *                 fp32 keys 4 and int64 values 8: t = 20;
 *       2 <= g < 128: segmented_sort_pairs_by_full_sort: two int2 index-and-
 *                 segment arrays 8 + 8, the radix sort's own key output 4
 *                 and CUB's alternate keys 4 and int2 values 8: t = 32;
 *       g == 1 or V >= 1,000,000: segmented_sort_large_segments sorts one
 *                 row at a time: V int64 indices + one row's CUB buffers,
 *                 8 V + 12 V in all.
 *     So the sort moment holds S V (b + 16) + g V t (or 20 V).
 *     V0 (0.6-0.8, read in vllm-project/vllm, commit not pinned:
 *     vllm/worker/model_runner.py profile_run with
 *     SamplingParams(top_p=0.99, top_k=vocab - 1) on max_num_seqs dummy
 *     prompts; vllm/model_executor/layers/sampler.py Sampler.forward, which
 *     casts the logits to fp32 before _apply_top_k_top_p) sorts the same
 *     way; its cumsum is not in place and it scatters into a new tensor, so
 *     its scatter moment holds b + 30 per logit, still below the sort
 *     moment (b + 36 at g >= 128, b + 48 below, 38 V for one row), and the
 *     probabilities, log-probabilities and exponential draws that follow
 *     (b + 16) are below it too: V0's rows take the same term. Its dummy
 *     sampling runs on the driver rank only (kvplan validate's 'rank').
 *     V1 before its dummy sampler run (0.7.x: gpu_model_runner.py
 *     profile_run computes logits and, by its own comment, leaves the
 *     sampler's memory out; vllm-project/vllm#13507, February 2025;
 *     _dummy_sampler_run is there by #14728, March 2025, 0.8.0) holds the
 *     hidden states N H b and model-dtype logits only (logits_only): of the
 *     S requests' last tokens after hidden_states[logit_indices], S (H + V)
 *     b (lo, the point), or, in the older form that gathers no index, of
 *     all N tokens, N V b (hi). Which 0.7 release has which form is not
 *     pinned here.
 *
 *   hidden states at the sampler (sampler_hidden, by release: stdlib/
 *     kvplan/engines.lua vllm_sampler_hidden): profile_run keeps the
 *     forward's output hidden_states (N H) and _dummy_run's
 *     hidden_states[logit_indices] (an index copy, S H), and
 *     _dummy_sampler_run replaces its argument by torch.rand_like (S H)
 *     while the caller still holds it: N H + 2 S H from 0.9.2 (read at
 *     vllm-project/vllm b8b302cde434, v0.11.0: "hidden_states,
 *     last_hidden_states = self._dummy_run(...)", #16188); 0.9.1 returns
 *     the index copy alone, the forward's output freed with _dummy_run's
 *     frame, plus rand_like (#18543): 2 S H; 0.8.0-0.9.0 without rand_like:
 *     S H; V0 and 0.7's V1 (not read again here): N H.
 *   blas_workspace: PyTorch gives each cuBLAS handle and stream a workspace
 *     from its caching allocator at the first GEMM (aten/src/ATen/cuda/
 *     CublasHandlePool.cpp getCurrentCUDABlasHandle -> setWorkspaceForHandle
 *     -> getNewWorkspace; "torch.cuda.empty_cache() explicitly does not free
 *     them", pytorch/pytorch#184084), 32 MiB on compute capability 9.0 and
 *     4096 x 1024 x 2 + 16 x 1024 x 8 = 8,519,680 bytes otherwise
 *     (parseChosenWorkspaceSize, read at pytorch/pytorch 26a39059ec58; the
 *     explicit workspace kept for CUDA 12.2+ by pytorch/pytorch#124250,
 *     April 2024). vLLM's load runs no GEMM, so the workspace is allocated
 *     in the profile's first forward and stays live through the sampler:
 *     it is in torch_peak_increase. The rule passes it (engines.lua
 *     cublas_workspace); 0 where it is not counted.
 *
 * Every term has a low and a high end as above; the profile's settings pick
 * one per term (eager: the MLP's high end; moe_cache13: the MoE's low end;
 * flashinfer_sampler: the sampler's low end; attention has one), and the
 * prediction is the largest picked term. lo and hi are the largest term at
 * either end.
 *
 * The forward covers one pipeline stage's layers; the sampler only the last
 * stage. Multimodal models add the encoder's dummy batch (below,
 * kvp_predict_encoder). What is not modelled: LoRA, speculative decoding's dummy drafter run, attention backends'
 * workspaces (FlashInfer's 128-512 MiB buffer is allocated before profiling
 * in recent releases). The answer is an estimate with a range [lo, hi].
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "kvplan.h"
#include "checked.h"
#include "diag.h"

const char *kvp_predict_term_name(int term) {
  static const char *const names[KVP_PREDICT_NTERMS] = {"mlp", "attention", "moe", "sampler",
                                                                "encoder"};
  return (term >= 0 && term < KVP_PREDICT_NTERMS) ? names[term] : "unknown";
}

static kvp_err kvp_predict_check(const kvp_shape *s, const kvp_profile *p, kvp_diag *d) {
  TRY(kvp_check_count(s->hidden, 1, "hidden", d));
  TRY(kvp_check_count(s->heads, 1, "heads", d));
  TRY(kvp_check_count(s->kv_heads, 1, "kv_heads", d));
  TRY(kvp_check_count(s->head_dim, 1, "head_dim", d));
  TRY(kvp_check_count(s->intermediate, 0, "intermediate", d));
  TRY(kvp_check_count(s->vocab, 1, "vocab", d));
  TRY(kvp_check_count(s->experts, 0, "experts", d));
  TRY(kvp_check_count(s->experts_active, 0, "experts_active", d));
  TRY(kvp_check_count(s->moe_intermediate, 0, "moe_intermediate", d));
  TRY(kvp_check_count(s->shared_intermediate, 0, "shared_intermediate", d));
  TRY(kvp_check_count(s->mla_latent, 0, "kv_lora_rank", d));
  TRY(kvp_check_count(s->mla_rope, 0, "qk_rope_head_dim", d));
  if (s->experts > 0 && (s->experts_active < 1 || s->experts_active > s->experts ||
                         s->moe_intermediate < 1))
    return kvp_fail(d, KVP_EINVAL,
                    "a MoE shape needs 1 <= experts_active <= experts and moe_intermediate >= 1, "
                    "got %lld of %lld, %lld", (long long)s->experts_active,
                    (long long)s->experts, (long long)s->moe_intermediate);
  if (s->experts == 0 && s->intermediate < 1)
    return kvp_fail(d, KVP_EINVAL, "a dense shape needs intermediate >= 1, got %lld",
                    (long long)s->intermediate);
  TRY(kvp_check_count(p->tokens, 1, "max_num_batched_tokens", d));
  TRY(kvp_check_count(p->seqs, 1, "max_num_seqs", d));
  TRY(kvp_check_count(p->tp, 1, "tp", d));
  if (p->act_bytes < 1 || p->act_bytes > 8)
    return kvp_fail(d, KVP_EINVAL, "field 'act_bytes' must be 1..8, got %d", (int)p->act_bytes);
  TRY(kvp_check_count(p->moe_chunk, 0, "moe_chunk", d));
  TRY(kvp_check_count(p->blas_workspace, 0, "blas_workspace", d));
  if (p->sampler_hidden < KVP_HIDDEN_ALL || p->sampler_hidden > KVP_HIDDEN_ALL_LAST_RAND)
    return kvp_fail(d, KVP_EINVAL, "field 'sampler_hidden' must be 0..3, got %d",
                    (int)p->sampler_hidden);
  return KVP_OK;
}

/* a * b * c in 64 bits, checked */
static int mul3(int64_t a, int64_t b, int64_t c, int64_t *r) {
  int64_t t;
  return chk_mul(a, b, &t) && chk_mul(t, c, r);
}

/* Bytes live at the peak of the PyTorch sort path of the sampler for S rows
 * of V logits of b bytes each: the larger of the sort and the scatter
 * moments (see the header comment). */
static int sort_path_bytes(int64_t S, int64_t V, int64_t b, int64_t *r) {
  const int64_t int_max = 2147483647;
  int64_t scatter, sort, temps;
  if (!mul3(S, V, b + 26, &scatter) || !mul3(S, V, b + 16, &sort)) return 0;
  /* rows sorted per batch: launch_stable_sort_kernel batches INT_MAX elements */
  const int64_t g = V > int_max ? 1 : min64(S, int_max / V);
  if (g == 1 || V >= 1000000) {
    if (!chk_mul(V, 20, &temps)) return 0;
  } else {
    if (!mul3(g, V, g >= 128 ? 20 : 32, &temps)) return 0;
  }
  if (!chk_add(sort, temps, &sort)) return 0;
  *r = max64(sort, scatter);
  return 1;
}

/* Elements per token of the layer terms, [0] the low end, [1] the high. */
static void per_token(const kvp_shape *s, const kvp_profile *p, int64_t mlp[2], int64_t *attn,
                      int64_t moe[2]) {
  const int64_t H = s->hidden, tp = p->tp;
  const int64_t I = cdiv(s->intermediate, tp);
  /* dense MLP: compiled frees gate_up before down_proj, eager keeps it */
  mlp[0] = s->intermediate > 0 ? max64(2 * H + 3 * I, 3 * H + I) : 0;
  mlp[1] = s->intermediate > 0 ? 3 * H + 3 * I : 0;
  /* bitsandbytes 4-bit: down_proj's matmul output H beside the output it is
   * copied into (the dequantized shard is added by the caller) */
  if (p->dequant_mlp && s->intermediate > 0) {
    mlp[0] = max64(2 * H + 3 * I, 4 * H + I);
    mlp[1] = 4 * H + 3 * I;
  }
  /* attention: heads per GPU, KV heads replicated past their count */
  const int64_t q = cdiv(s->heads, tp);
  const int64_t kv = kvp_kv_heads_per_gpu(s->kv_heads, tp);
  if (s->mla_latent > 0)
    *attn = 3 * H + q * s->head_dim + (s->mla_latent + s->mla_rope) + q * s->head_dim;
  else
    *attn = 3 * H + (q + 2 * kv) * s->head_dim + q * s->head_dim +
            (p->dequant_attn ? H : 0); /* bnb 4-bit: o_proj's matmul output */
  moe[0] = moe[1] = 0;
  if (s->experts > 0) {
    const int64_t Ie = cdiv(s->moe_intermediate, tp), k = s->experts_active;
    const int64_t shared = s->shared_intermediate > 0 ? H : 0;
    moe[0] = k * (max64(2 * Ie, H) + Ie) + s->experts + 3 * H + shared;
    moe[1] = k * (2 * Ie + Ie + H) + s->experts + 3 * H + shared;
  }
}

/* The terms of kvp_predict_activation into a (zeroed, p and s checked);
 * KVP_EOVERFLOW past 2^63 bytes. */
static kvp_err activation_terms(const kvp_shape *s, const kvp_profile *p, kvp_activation *a) {
  int64_t mlp[2], attn, moe[2];
  per_token(s, p, mlp, &attn, moe);
  const int64_t N = p->tokens, b = p->act_bytes, H = s->hidden;
  const int64_t S = min64(p->seqs, N);
  const int64_t chunk = (p->moe_chunk > 0) ? min64(N, p->moe_chunk) : N;
  /* which end of each term the engine's own settings pick */
  const int pick[KVP_PREDICT_NTERMS] = {p->eager ? 1 : 0, 0, p->moe_cache13 ? 0 : 1,
                                        (p->flashinfer_sampler || p->logits_only) ? 0 : 1};
  /* bitsandbytes 4-bit: the largest shard one layer dequantizes at a time
   * (gate, up or down: I/tp x H; q or o_proj: q heads x head_dim x H) */
  int64_t w_mlp = 0, w_attn = 0;
  if (p->dequant_mlp && s->intermediate > 0)
    CHK(mul3(cdiv(s->intermediate, p->tp), H, b, &w_mlp));
  if (p->dequant_attn && s->mla_latent == 0) {
    int64_t qd;
    CHK(chk_mul(cdiv(s->heads, p->tp), s->head_dim, &qd));
    CHK(mul3(qd, H, b, &w_attn));
  }
  for (int e = 0; e < 2; e++) {
    if (s->experts == 0 || s->dense_layers > 0) {
      CHK(mul3(N, mlp[e], b, &a->term[KVP_PREDICT_MLP][e]));
      CHK(chk_add(a->term[KVP_PREDICT_MLP][e], w_mlp, &a->term[KVP_PREDICT_MLP][e]));
    }
    CHK(mul3(N, attn, b, &a->term[KVP_PREDICT_ATTENTION][e]));
    CHK(chk_add(a->term[KVP_PREDICT_ATTENTION][e], w_attn, &a->term[KVP_PREDICT_ATTENTION][e]));
    if (s->experts > 0) {
      /* the residual stream holds N tokens, the expert caches chunk tokens */
      const int64_t stream_el = s->experts + 3 * H + (s->shared_intermediate > 0 ? H : 0);
      int64_t stream, caches;
      CHK(mul3(N, stream_el, b, &stream));
      CHK(mul3(chunk, moe[e] - stream_el, b, &caches));
      CHK(chk_add(stream, caches, &a->term[KVP_PREDICT_MOE][e]));
    }
    if (p->last_stage) {
      int64_t hid, logits, last;
      CHK(mul3(N, H, b, &hid));
      CHK(mul3(S, H, b, &last));
      switch (p->sampler_hidden) {
        case KVP_HIDDEN_LAST: hid = last; break;
        case KVP_HIDDEN_LAST_RAND: CHK(chk_mul(last, 2, &hid)); break;
        case KVP_HIDDEN_ALL_LAST_RAND:
          CHK(chk_add(hid, last, &hid));
          CHK(chk_add(hid, last, &hid));
          break;
        default: break;
      }
      if (p->logits_only)
        CHK(e == 0 ? mul3(S, H + s->vocab, b, &logits) : mul3(N, s->vocab, b, &logits));
      else if (e == 0)
        CHK(mul3(S, s->vocab, b + 8, &logits));
      else
        CHK(sort_path_bytes(S, s->vocab, b, &logits));
      CHK(chk_add(hid, logits, &a->term[KVP_PREDICT_SAMPLER][e]));
    }
  }
  /* the workspace is live at every moment of the run (a term of none stays 0) */
  a->resident = p->blas_workspace;
  for (int t = 0; t < KVP_PREDICT_NTERMS; t++)
    for (int e = 0; e < 2; e++)
      if (a->term[t][e] > 0) CHK(chk_add(a->term[t][e], a->resident, &a->term[t][e]));
  int64_t point = 0;
  a->largest = 0;
  for (int t = 0; t < KVP_PREDICT_NTERMS; t++) {
    a->lo = max64(a->lo, a->term[t][0]);
    a->hi = max64(a->hi, a->term[t][1]);
    a->bytes_of[t] = a->term[t][pick[t]];
    if (a->bytes_of[t] > point) {
      point = a->bytes_of[t];
      a->largest = t;
    }
  }
  a->bytes = point;
  return KVP_OK;
}

kvp_err kvp_predict_activation(const kvp_shape *s, const kvp_profile *p, kvp_activation *a,
                               kvp_diag *d) {
  memset(a, 0, sizeof *a);
  TRY(kvp_predict_check(s, p, d));
  kvp_err e = activation_terms(s, p, a);
  if (e == KVP_EOVERFLOW) /* every term is the profile's tokens times a layer's width */
    return kvp_fail(d, e, "the activation peak of a profile run of %lld tokens exceeds 64 bits "
                    "(caused by field 'max_num_batched_tokens' = %lld)", (long long)p->tokens,
                    (long long)p->tokens);
  return e;
}

/*
 * The encoder's dummy batch (vLLM V1 gpu_model_runner.py profile_run, read
 * at vllm-project/vllm 000fc94b754f): before the decoder's dummy forward,
 * profile_run builds _get_mm_dummy_batch(modality, max_mm_items_per_batch)
 * and runs self.model.embed_multimodal on it, then stores every output in
 * self.encoder_cache; the local batched_dummy_mm_inputs and the cache are
 * dropped only after _dummy_run and the sampler (encoder_cache.clear() at
 * the end). The torch peak of the whole run is therefore
 *
 *   max(encoder forward, kept + the decoder's peak)
 *   kept = inputs + outputs
 *
 * with, for K items of P patches and T output tokens each (b the model
 * dtype's bytes, p the pixel values' bytes as the processor hands them over):
 *
 *   inputs  = K P V p        V pixel values a patch (channels x temporal
 *                            patch x patch x patch)
 *   cast    = K P V b        the tower's pixel_values.type(dtype) copy, when
 *                            p != b, alive during the tower's run
 *   outputs = K T O b        O the projector's output (the decoder's hidden)
 *   forward = inputs + cast + K P max(block, merger) b
 *
 * When the items go through the tower in c calls (V0: one a modality, in
 * turn), block, merger and cast are those of one call's cdiv(K, c) items and
 * the outputs of the calls before it, (c - 1) / c of them, are held too.
 *
 * Per patch, in elements (H the tower's width, I its MLP width; the tower
 * runs eagerly: vLLM compiles it only with compile_mm_encoder; read in
 * vllm/model_executor/models/qwen2_5_vl.py Qwen2_5_VisionBlock.forward,
 * Qwen2_5_VisionAttention.forward, Qwen2_5_VisionPatchMerger.forward at
 * vllm-project/vllm 002d181a55a0):
 *   MLP, gated: the block's input and the attention's output stay bound in
 *     the frame, the fused norm's residual sum and normed input, gate_up 2I,
 *     the activation I and down's output H: 5H + 3I (hi); a fused in-place
 *     norm keeps 3H + 3I (lo). Not gated (fc1, act, fc2: CLIP/SigLIP):
 *     2I in place of 3I.
 *   attention: the input H, qkv 3H, q and k concatenated 2H and rotated 2H,
 *     the attention's output H and the projection's H: 10H (hi); without
 *     the rotary copies 7H (lo). No score matrix: the tower's attention is
 *     FlashAttention / xFormers / per-item SDPA (memory-efficient kernels).
 *   merger: the tower's output and its norm 2H, the projector's inner
 *     width before and after its activation 2W/m, its output O/m (W the
 *     inner width per output token, m the patches merged into one).
 * block = max(MLP, attention) at each end; the forward's [lo, hi] follow it.
 * An estimate: allocator rounding and small tensors (rotary tables, window
 * indices, cu_seqlens) are left out.
 */
kvp_err kvp_predict_encoder(const kvp_vision *v, const kvp_encoder_run *r, kvp_encoder *e,
                            kvp_diag *d) {
  memset(e, 0, sizeof *e);
  TRY(kvp_check_count(v->hidden, 1, "vision hidden", d));
  TRY(kvp_check_count(v->intermediate, 1, "vision intermediate", d));
  TRY(kvp_check_count(v->proj_hidden, 0, "vision projector width", d));
  TRY(kvp_check_count(v->out_hidden, 1, "vision output hidden", d));
  TRY(kvp_check_count(v->merge, 1, "vision merge", d));
  TRY(kvp_check_count(v->patch_values, 1, "pixel values a patch", d));
  TRY(kvp_check_count(v->patches, 1, "patches an item", d));
  TRY(kvp_check_count(v->tokens, 1, "tokens an item", d));
  TRY(kvp_check_count(r->items, 1, "encoder items", d));
  TRY(kvp_check_count(r->calls, 0, "encoder calls", d));
  const int64_t calls = r->calls > 0 ? min64(r->calls, r->items) : 1;
  if (r->act_bytes < 1 || r->act_bytes > 8)
    return kvp_fail(d, KVP_EINVAL, "field 'act_bytes' must be 1..8, got %d", (int)r->act_bytes);
  if (r->pixel_bytes < 1 || r->pixel_bytes > 8)
    return kvp_fail(d, KVP_EINVAL, "field 'pixel_bytes' must be 1..8, got %d",
                    (int)r->pixel_bytes);
  if (v->tokens > v->patches)
    return kvp_fail(d, KVP_EINVAL, "an item gives %lld tokens from %lld patches: at most one "
                    "token a patch", (long long)v->tokens, (long long)v->patches);
  const int64_t H = v->hidden, I = v->intermediate, b = r->act_bytes;
  int64_t mlp[2], attn[2], per[2], merger, patches;
  const int64_t inner = v->gated ? 3 * I : 2 * I;
  CHK(chk_add(3 * H, inner, &mlp[0]) && chk_add(5 * H, inner, &mlp[1]));
  attn[0] = 7 * H, attn[1] = 10 * H;
  merger = 2 * H + cdiv(2 * v->proj_hidden, v->merge) + cdiv(v->out_hidden, v->merge);
  CHK(chk_mul(cdiv(r->items, calls), v->patches, &patches));
  for (int x = 0; x < 2; x++) {
    per[x] = max64(mlp[x], attn[x]);
    CHK(mul3(patches, per[x], b, &e->block[x]));
  }
  CHK(mul3(patches, merger, b, &e->merger));
  int64_t all_patches, tokens, earlier = 0;
  CHK(chk_mul(r->items, v->patches, &all_patches));
  CHK(mul3(all_patches, v->patch_values, r->pixel_bytes, &e->inputs));
  if (r->pixel_bytes != r->act_bytes) CHK(mul3(patches, v->patch_values, b, &e->cast));
  CHK(chk_mul(r->items, v->tokens, &tokens));
  CHK(mul3(tokens, v->out_hidden, b, &e->outputs));
  if (calls > 1) CHK(mul3(r->items - cdiv(r->items, calls), v->tokens, v->out_hidden, &earlier) &&
                     chk_mul(earlier, b, &earlier));
  for (int x = 0; x < 2; x++) {
    int64_t t;
    CHK(chk_add(e->inputs, e->cast, &t) && chk_add(t, earlier, &t));
    CHK(chk_add(t, max64(e->block[x], e->merger), &e->peak[x]));
  }
  CHK(chk_add(e->inputs, e->outputs, &e->kept));
  return KVP_OK;
}

kvp_err kvp_predict_add_encoder(kvp_activation *a, const kvp_encoder *e, kvp_diag *d) {
  (void)d;
  int64_t dec_lo = 0, dec_hi = 0, dec = 0;
  int32_t dec_largest = a->largest;
  for (int t = 0; t < KVP_PREDICT_NTERMS; t++) {
    if (t == KVP_PREDICT_ENCODER) continue;
    dec_lo = max64(dec_lo, a->term[t][0]);
    dec_hi = max64(dec_hi, a->term[t][1]);
    if (a->bytes_of[t] > dec) dec = a->bytes_of[t], dec_largest = t;
  }
  /* the tower's GEMMs allocate the workspace the decoder's terms hold */
  int64_t enc_lo, enc_hi;
  CHK(chk_add(e->peak[0], a->resident, &enc_lo));
  CHK(chk_add(e->peak[1], a->resident, &enc_hi));
  a->term[KVP_PREDICT_ENCODER][0] = enc_lo;
  a->term[KVP_PREDICT_ENCODER][1] = enc_hi;
  /* the tower runs eagerly: its high end */
  a->bytes_of[KVP_PREDICT_ENCODER] = enc_hi;
  a->encoder_kept = e->kept;
  CHK(chk_add(dec_lo, e->kept, &dec_lo));
  CHK(chk_add(dec_hi, e->kept, &dec_hi));
  CHK(chk_add(dec, e->kept, &dec));
  a->lo = max64(dec_lo, enc_lo);
  a->hi = max64(dec_hi, enc_hi);
  if (enc_hi > dec) {
    a->bytes = enc_hi;
    a->largest = KVP_PREDICT_ENCODER;
  } else {
    a->bytes = dec;
    a->largest = dec_largest;
  }
  return KVP_OK;
}

/* ---- non-torch memory and the profile's defaults ------------------------
 *
 * Non-torch memory is what vLLM's budget subtracts besides the weights and
 * the activation peak: memory the torch allocator does not hold, from the
 * snapshot at init_device to the end of the profile run (vllm/utils/
 * mem_utils.py memory_profiling: non_torch_increase = the increase of
 * cuda_memory - torch.cuda.memory_reserved(), read at vllm-project/vllm
 * a6d5c39009eb). So torch's own buffers are not in it: cuBLAS's workspace
 * (PyTorch allocates it from its caching allocator, CublasHandlePool.cpp
 * getNewWorkspace), FlashInfer's workspace (torch.empty), the custom
 * all-reduce's rank_data (torch.empty), CUDA graph pools (captured after
 * the profile, in torch's pool). What is in it:
 *   base       the kernels the profile run loads after the snapshot (lazy
 *              loading) and the libraries' handles: no source sizes them by
 *              GPU, a stated range (engines.lua);
 *   context    the CUDA context, when the version counts all used memory
 *              (V0 of 0.6.0-0.6.4: determine_num_available_blocks' used -
 *              allocated; V1 of 0.7: determine_available_memory at
 *              0012cf691b7e); its size the published measurements;
 *   NCCL and the custom all-reduce, when the snapshot precedes the
 *              distributed init (V0 worker.py init_device, V1 before
 *              35d5cda123ec's gpu_worker.py, which takes it after "NCCL is
 *              initialized"). NCCL: per communicator (tp's and pp's, each
 *              of > 1 rank), channels x one receiving connection each (a
 *              ring; a tree's second peer is in the high end) x the
 *              connection's buffers, in device memory when the GPUs are
 *              peer to peer; without P2P NCCL goes through its SHM
 *              transport, whose buffers are host memory (0, the range's
 *              high end keeps them). The custom all-reduce (vllm/
 *              distributed/device_communicators/custom_all_reduce.py:
 *              world sizes 2, 4, 6, 8, P2P, its meta_ptrs and buffer_ptrs
 *              from cudaMalloc) is on the same condition. NVLS (NVLink
 *              SHARP), in a communicator of more than 2 ranks on GPUs with
 *              multicast, one head per rank (NVIDIA/nccl src/transport/
 *              nvls.cc ncclNvlsInit, ncclNvlsBufferSetup): the high end,
 *              at its largest layout (NCCL to 2.20), the version's NCCL
 *              not being known.
 *   NCCL connected at runtime (nccl_runtime): NCCL 2.22 and later, with
 *              cuMem on, connects an algorithm's channels at its first
 *              collective (src/init.cc at v2.22.3-1: runtimeConn =
 *              cuMemSupport && RuntimeConnect), which from vllm-project/
 *              vllm#24141 (no more NCCL_CUMEM_ENABLE=0) may follow the
 *              snapshot: the channels' and NVLS's buffers in the high end
 *              alone (which algorithms vLLM's warm-up all-reduce connected
 *              before the snapshot is not known).
 *   torch's communicator of the tp group (torch_pg): vLLM's GroupCoordinator
 *              creates its device group with torch.distributed.new_group and
 *              never passes init_process_group a device_id, so torch's
 *              ProcessGroupNCCL forms its NCCL communicator at the group's
 *              first collective ("the normal lazy call": the device_id
 *              docstring of torch/distributed/distributed_c10d.py). vLLM's
 *              all-reduce, reduce-scatter, send and recv go through PyNccl,
 *              the custom all-reduce or symmetric memory, but CudaCommunicator
 *              keeps DeviceCommunicatorBase's all_gather and gather, which
 *              call torch.distributed on device_group (vllm/distributed/
 *              device_communicators/base_device_communicator.py at
 *              00a18bc3df79; cuda_communicator.py at 00b5a01dd29b), and the
 *              profile run's sampler run gathers the logits (profile_run ->
 *              _dummy_sampler_run -> LogitsProcessor._gather_logits: all-gather
 *              in V1, gather in V0). So every release's profile run creates a
 *              second tp communicator after the snapshot: its ring (one
 *              receiving connection a channel; all-gather's algorithm at 2
 *              GPUs, NVLS being off) in the point, on P2P GPUs, for the
 *              logged worker on the last pipeline stage (pp 1); the tree's
 *              peer and NVLS's heads in the high end. Not counted: NCCL's
 *              per-channel device structures and cuMem's rounding of each
 *              allocation to the allocation granularity (src/include/alloc.h
 *              ncclCuMemAlloc at v2.27.5-1), which no source sizes by GPU.
 * SGLang's budget leaves the memory used before the weights load outside
 * its fraction (profile_max_num_token, python/sglang/srt/model_executor/
 * model_runner_kv_cache_mixin.py): the context's range.
 */

static int range_ok(const kvp_range *r) {
  const double max = 9007199254740992.0; /* 2^53: exact in a double */
  return r->lo >= 0 && r->lo <= r->point && r->point <= r->hi && r->hi < max;
}

kvp_err kvp_non_torch_check(const kvp_non_torch *nt, kvp_diag *d) {
  if (nt == NULL) return kvp_fail(d, KVP_EINVAL, "the non-torch memory rule has no constants");
  const struct { const kvp_range *r; const char *name; } rs[] = {
    {&nt->base, "base"}, {&nt->context, "context"}, {&nt->nccl_channels, "nccl_channels"}};
  for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
    if (!range_ok(rs[i].r))
      return kvp_fail(d, KVP_EINVAL,
                      "non_torch.%s must have 0 <= lo <= point <= hi < 2^53, got %g, %g, %g",
                      rs[i].name, kvp_shown(rs[i].r->lo), kvp_shown(rs[i].r->point),
                      kvp_shown(rs[i].r->hi));
  const struct { double v; const char *name; } bs[] = {
    {nt->nccl_connection, "nccl_connection"}, {nt->custom_ar, "custom_ar"},
    {nt->nvls_head, "nvls_head"}};
  for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
    if (!(bs[i].v >= 0 && bs[i].v < 1099511627776.0)) /* under 1 TiB */
      return kvp_fail(d, KVP_EINVAL, "non_torch.%s must be 0 to 1 TiB of bytes, got %g",
                      bs[i].name, kvp_shown(bs[i].v));
  return KVP_OK;
}

static void set_range(int64_t out[3], kvp_range r) {
  out[0] = (int64_t)floor(r.point);
  out[1] = (int64_t)floor(r.lo);
  out[2] = (int64_t)floor(r.hi);
}

kvp_err kvp_predict_non_torch(const kvp_non_torch *nt, const kvp_non_torch_at *at,
                              kvp_non_torch_parts *out, kvp_diag *d) {
  TRY(kvp_non_torch_check(nt, d));
  TRY(kvp_check_count(at->tp, 1, "tp", d));
  TRY(kvp_check_count(at->pp, 1, "pp", d));
  memset(out, 0, sizeof *out);
  kvp_range r, nccl = {0, 0, 0}, car = {0, 0, 0};
  if (at->engine == KVP_NT_SGLANG) {
    r = nt->context;
  } else if (at->engine == KVP_NT_VLLM) {
    /* summed as doubles: the constants are fractions of a GiB */
    r = nt->base;
    if (at->context_counted) {
      r.lo += nt->context.lo;
      r.point += nt->context.point;
      r.hi += nt->context.hi;
    }
    /* one connection's buffers in each communicator (tp's, pp's) */
    const double conn = ((at->tp > 1) + (at->pp > 1)) * nt->nccl_connection;
    if (at->nccl_counted || at->nccl_runtime) {
      /* the high end: a tree's second receiving peer on every channel, and
       * NVLS's buffers, one head per rank, in a communicator of more than 2
       * ranks on GPUs that may run it */
      nccl.hi = 2 * conn * nt->nccl_channels.hi;
      if (at->nvls)
        nccl.hi += nt->nvls_head * (double)((at->tp > 2 ? at->tp : 0) + (at->pp > 2 ? at->pp : 0));
    }
    /* the snapshot precedes the distributed init: the point and the low
     * end count the channels' buffers and the custom all-reduce's. Where
     * NCCL connects at the first collective instead (nccl_runtime), the
     * custom all-reduce's buffers come before the snapshot and the
     * channels' a collective may connect after it: the high end alone. */
    if (at->nccl_counted) {
      const int64_t tp = at->tp;
      if (tp == 2 || tp == 4 || tp == 6 || tp == 8) car.hi = nt->custom_ar;
      if (at->p2p) {
        nccl.lo = conn * nt->nccl_channels.lo;
        nccl.point = conn * nt->nccl_channels.point;
        car.lo = car.point = car.hi;
      }
    }
    /* the tp group's torch communicator, created at the profile run's
     * logits gather: its ring (one receiving connection a channel) in the
     * point and the low end on P2P GPUs when the logged worker runs the
     * sampler (pp 1: rank 0 is the last stage); a tree's second peer, NVLS
     * and the pp > 1 case in the high end */
    if (at->torch_pg && at->tp > 1) {
      nccl.hi += 2 * nt->nccl_connection * nt->nccl_channels.hi;
      if (at->nvls && at->tp > 2) nccl.hi += nt->nvls_head * (double)at->tp;
      if (at->p2p && at->pp == 1) {
        nccl.lo += nt->nccl_connection * nt->nccl_channels.lo;
        nccl.point += nt->nccl_connection * nt->nccl_channels.point;
      }
    }
    r.lo += nccl.lo + car.lo;
    r.point += nccl.point + car.point;
    r.hi += nccl.hi + car.hi;
  } else {
    return kvp_fail(d, KVP_EINVAL, "non-torch memory: unknown engine %d", (int)at->engine);
  }
  set_range(out->total, r);
  set_range(out->nccl, nccl);
  set_range(out->custom_ar, car);
  return KVP_OK;
}

/* ---- LoRA slots -----------------------------------------------------------
 *
 * vLLM with --enable-lora replaces every supported linear layer by a LoRA
 * layer that allocates, when the model loads (so inside "Model loading
 * took"), max_loras slots of A (max_loras, 1, rank_a, input) and B
 * (max_loras, 1, output, max_lora_rank) per slice, in lora_dtype
 * (vllm/lora/layers/base_linear.py create_lora_weights at 1ace43ed7b3c;
 * column_parallel_linear.py at 4f54575c9914; row_parallel_linear.py at
 * 7626577c2064). A decoder layer of a dense model, tp t, rank r, hidden H,
 * intermediate I, heads q, KV heads k per GPU (kvp_kv_heads_per_gpu), head
 * dim d; column layers see the whole input and their rank_a is r / t when
 * fully sharded; row layers see input / t and their B output is H / t when
 * fully sharded:
 *   qkv_proj     3 slices (q, k, v): A 3 x rank_a x H, B (q d / t + 2 k d) x r
 *   o_proj       A r x q d / t, B H_b x r
 *   gate_up_proj 2 slices: A 2 x rank_a x H, B 2 x I / t x r
 *   down_proj    A r x I / t, B H_b x r
 * times max_loras and the dtype's bytes. lm_head's and the embeddings'
 * slots (LogitsProcessorWithLoRA, VocabParallelEmbeddingWithLoRA, whose
 * shapes changed with the releases' extra vocabulary) are not counted.
 */
kvp_err kvp_lora_layer_bytes(const kvp_lora *lo, int64_t tp, int64_t *bytes, kvp_diag *d) {
  TRY(kvp_check_count(lo->max_loras, 1, "max_loras", d));
  TRY(kvp_check_count(lo->max_rank, 1, "max_lora_rank", d));
  TRY(kvp_check_count(tp, 1, "tp", d));
  if (lo->dtype_bytes != 2 && lo->dtype_bytes != 4)
    return kvp_fail(d, KVP_EINVAL, "lora_dtype must be 2 or 4 bytes, got %d", lo->dtype_bytes);
  const struct { int64_t v; const char *name; } dims[] = {
    {lo->hidden, "hidden"}, {lo->heads, "heads"}, {lo->kv_heads, "kv_heads"},
    {lo->head_dim, "head_dim"}, {lo->intermediate, "intermediate"}};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (dims[i].v < 1)
      return kvp_fail(d, KVP_EINVAL, "LoRA slots need the layer's %s (>= 1), got %lld",
                      dims[i].name, (long long)dims[i].v);
  const int64_t r = lo->max_rank, h = lo->hidden;
  int64_t ra = r, hb = h;
  if (lo->fully_sharded) {
    /* vllm/distributed/utils.py divide asserts divisibility */
    if (r % tp != 0 || h % tp != 0)
      return kvp_fail(d, KVP_EINVAL,
                      "fully_sharded_loras: tp %lld must divide max_lora_rank %lld and the "
                      "hidden size %lld", (long long)tp, (long long)r, (long long)h);
    ra = r / tp;
    hb = h / tp;
  }
  const int64_t qd = cdiv(lo->heads, tp) * lo->head_dim;
  const int64_t kd = kvp_kv_heads_per_gpu(lo->kv_heads, tp) * lo->head_dim;
  const int64_t inter = cdiv(lo->intermediate, tp);
  /* elements of one slot: the four modules' A and B */
  const int64_t terms[][2] = {
    {5 * ra, h},            /* qkv (3) and gate_up (2) A: rank_a x H each */
    {qd + 2 * kd, r},       /* qkv B */
    {r, qd},                /* o_proj A */
    {2 * inter, r},         /* gate_up B */
    {r, inter},             /* down A */
    {2 * hb, r},            /* o_proj and down B */
  };
  int64_t slot = 0;
  for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
    int64_t e;
    if (!chk_mul(terms[i][0], terms[i][1], &e) || !chk_add(slot, e, &slot))
      return kvp_fail(d, KVP_EOVERFLOW, "LoRA slots overflow");
  }
  if (!chk_mul(slot, lo->max_loras, &slot) || !chk_mul(slot, lo->dtype_bytes, bytes))
    return kvp_fail(d, KVP_EOVERFLOW, "LoRA slots overflow");
  return KVP_OK;
}

/* vLLM's defaults for max_num_batched_tokens and max_num_seqs (the rows'
 * constants: stdlib/kvplan/engines.lua M.vllm):
 *   V0 (vllm/config.py SchedulerConfig, 0.6-0.7): 256 sequences; tokens the
 *     row's chunked_tokens (2048 when the row has none) with chunked
 *     prefill, which turns itself on only past max_model_len 32768
 *     (arg_utils.py create_engine_config), else max(max_model_len, 2048);
 *   V1 (vllm/engine/arg_utils.py _set_default_args / get_batch_defaults):
 *     by usage context, LLM class (offline) / OpenAI server: 8192 / 2048
 *     tokens and 256 / 256 sequences; on a GPU of >= 70 GiB whose name has
 *     no "a100", 16384 / 8192 tokens and big_seqs sequences;
 * a given value wins; max_num_seqs is then capped at max_num_batched_tokens. */
static void vllm_defaults(const kvp_engine_rule *r, int64_t gpu_bytes, int64_t mml,
                          int64_t tokens, int64_t seqs, int64_t *out_tokens, int64_t *out_seqs) {
  int64_t t, q;
  if (!r->v1) {
    q = 256;
    t = mml > 32768 ? (r->chunked_tokens > 0 ? r->chunked_tokens : 2048) : max64(mml, 2048);
  } else if (gpu_bytes >= ((int64_t)70 << 30) && !r->gpu_a100) {
    t = r->offline ? 16384 : 8192;
    q = r->big_seqs;
  } else {
    t = r->offline ? 8192 : 2048;
    q = 256;
  }
  if (tokens > 0) t = tokens;
  *out_tokens = t;
  *out_seqs = seqs > 0 ? seqs : min64(q, t);
}

/* SGLang's memory defaults on a GPU of gpu_bytes (its total memory, read in
 * MiB as SGLang's get_device_memory_capacity reports it; kvplan has the
 * memory the runtime reports, a few hundred MiB under nvidia-smi's total)
 * with tp x pp ranks, as ServerArgs._handle_gpu_memory_settings sets them
 * when not given (python/sglang/srt/server_args.py, the heuristic of
 * sgl-project/sglang#10975; the releases: stdlib/kvplan/engines.lua
 * M.sglang), sizes in MiB:
 *   GPU memory  < 20 GiB: chunked_prefill_size 2048, cuda_graph_max_bs 8
 *               < 35 GiB: 2048, 24 (tp < 4) or 80
 *               < 60 GiB: 4096, 32 or 160
 *               < 160 GiB: 8192, 256 or 512
 *               else: 16384, 512
 *   reserved = 512 + 1.5 max(chunked_prefill_size, 2048) + 2 cuda_graph_max_bs
 *              + 1024 tp pp / 8, at least 10240 on a GPU above 60 GiB
 *   mem_fraction_static = round((memory - reserved) / memory, 3)
 * Doubles in the order the stdlib evaluated them. */
static void sglang_memory_defaults(double gpu_bytes, int64_t tp, int64_t pp, int64_t *chunk,
                                   int64_t *bs, double *reserved, double *frac) {
  const double mib = gpu_bytes / (1024.0 * 1024.0);
  int64_t c, b;
  if (mib < 20 * 1024) c = 2048, b = 8;
  else if (mib < 35 * 1024) c = 2048, b = tp < 4 ? 24 : 80;
  else if (mib < 60 * 1024) c = 4096, b = tp < 4 ? 32 : 160;
  else if (mib < 160 * 1024) c = 8192, b = tp < 4 ? 256 : 512;
  else c = 16384, b = 512;
  double r = 512.0 + (c > 0 ? (double)max64(c, 2048) * 1.5 : 2048 * 1.5) + (double)(b * 2) +
             (double)(tp * pp) / 8.0 * 1024.0;
  if (mib > 60 * 1024 && r < 10 * 1024) r = 10 * 1024;
  *chunk = c;
  *bs = b;
  *reserved = r;
  *frac = floor((mib - r) / mib * 1000 + 0.5) / 1000;
}

/* The CUDA-graph batch sizes SGLang captures up to bs (python/sglang/srt/
 * server_args.py _generate_cuda_graph_batch_sizes): 1, 2, 4, 8, 12,
 * 16..256 by 8, 272..496 by 16, 512.. by 32; at most KVP_MAX_GRAPHS. */
static int32_t graph_sizes(int64_t bs, int32_t *out) {
  int32_t n = 0;
  static const int32_t first[] = {1, 2, 4, 8, 12};
  for (int i = 0; i < 5; i++)
    if (first[i] <= bs) out[n++] = first[i];
  for (int32_t b = 16; b <= 256 && b <= bs; b += 8) out[n++] = b;
  for (int32_t b = 272; b <= 511 && b <= bs; b += 16) out[n++] = b;
  for (int32_t b = 512; b <= bs && n < KVP_MAX_GRAPHS; b += 32) out[n++] = b;
  return n;
}

static int64_t round_up(int64_t x, int64_t a) { return a > 1 ? cdiv(x, a) * a : x; }

/* One GPU's MXFP4 expert bytes at intermediate I and hidden Hh, in the
 * checkpoint's layout (kernel = 0) or the kernel's (the layouts and their
 * sources: stdlib/kvplan/engines.lua mxfp4_backends): per expert, w13
 * 2 I x Hh / 2 bytes of packed FP4, w2 Hh x I / 2, one uint8 scale per 32
 * values, bf16 (or the kernel's fp32) biases 2 I + Hh; Triton's tiles round
 * the values' and scales' dimensions up and keep the checkpoint's scales.
 * Sizes well below 2^40. */
static kvp_err mx_bytes(const kvp_mxfp4 *m, int64_t I, int64_t Hh, int kernel, int64_t *out) {
  int64_t vals, scales, per, all = 2 * I * Hh + Hh * I;
  if (kernel && m->tile > 0) {
    const int64_t t = m->tile, rows = m->scale_rows > 0 ? m->scale_rows : 1;
    vals = round_up(Hh / 2, t) * round_up(2 * I, t) + round_up(I / 2, t) * round_up(Hh, t);
    scales = round_up(2 * I, rows) * round_up(Hh / 32, 2) + round_up(Hh, rows) * round_up(I / 32, 2);
    if (m->keeps_scales) scales += all / 32;
  } else {
    vals = all / 2;
    scales = all / 32;
  }
  const int64_t bias = (2 * I + Hh) * (kernel && m->fp32_bias ? 4 : 2);
  per = vals + scales + bias;
  int64_t n;
  CHK(chk_mul(m->layers, m->experts, &n));
  CHK(chk_mul(n, per, out));
  return KVP_OK;
}

kvp_err kvp_mxfp4_weight_bytes(const kvp_mxfp4 *m, int64_t tp, int64_t *bytes, kvp_diag *d) {
  TRY(kvp_check_count(tp, 1, "tp", d));
  if (m->experts < 1 || m->hidden < 1 || m->inter < 1 || m->layers < 1 || m->ckpt_bytes < 1 ||
      m->align_inter < 1 || m->align_hidden < 1 || m->hidden > ((int64_t)1 << 24) ||
      m->inter > ((int64_t)1 << 24))
    return kvp_fail(d, KVP_EINVAL, "MXFP4 experts: bad shape or layout");
  const int64_t Ip = cdiv(m->inter, tp);
  int64_t ckpt, loaded, delta;
  TRY(mx_bytes(m, Ip, m->hidden, 0, &ckpt));
  TRY(mx_bytes(m, round_up(Ip, m->align_inter), round_up(m->hidden, m->align_hidden), 1, &loaded));
  if (loaded == ckpt) {
    *bytes = m->ckpt_bytes;
    return KVP_OK;
  }
  CHK(chk_mul(loaded - ckpt, tp, &delta));
  CHK(chk_add(m->ckpt_bytes, delta, bytes));
  return KVP_OK;
}

/* A model with a vision tower (`vision` in its stdlib/kvplan/models.lua
 * entry, from config.json's vision_config) is profiled by vLLM with a batch
 * of dummy images before the decoder's dummy forward (gpu_model_runner.py
 * profile_run at vllm-project/vllm 000fc94b754f). What one item of that
 * batch is:
 *   max_pixels (Qwen2-VL, Qwen2.5-VL: preprocessor_config.json's max_pixels,
 *     12845056 in the released checkpoints): vLLM's
 *     get_image_size_with_most_features resizes a 9999999-pixel square with
 *     the processor's smart_resize, to a side of floor(sqrt(max_pixels) /
 *     (patch x merge)) x patch x merge; the tower sees (side / patch)^2
 *     patches of one frame group, the decoder (side / patch)^2 / merge^2
 *     tokens (3584 px: 65536 patches, 16384 tokens).
 *   image_size (CLIP/SigLIP towers of LLaVA): (image_size / patch)^2 patches
 *     (+1 with a class token), the same number of tokens without it (LLaVA's
 *     vision_feature_select_strategy "default" drops it) over merge^2.
 * Pixel values of a patch: in_channels x temporal_patch x patch^2. */
static kvp_err vision_item(const kvp_tower *t, kvp_vision *v, kvp_diag *d) {
  TRY(kvp_check_count(t->patch, 1, "vision patch", d));
  TRY(kvp_check_count(t->merge, 1, "vision merge", d));
  TRY(kvp_check_count(t->in_channels, 1, "vision in_channels", d));
  TRY(kvp_check_count(t->temporal_patch, 1, "vision temporal_patch", d));
  if (t->patch > 65536 || t->merge > 256 || t->in_channels > 64 || t->temporal_patch > 64)
    return kvp_fail(d, KVP_EINVAL, "vision tower: patch %lld, merge %lld, in_channels %lld or "
                    "temporal_patch %lld out of range", (long long)t->patch, (long long)t->merge,
                    (long long)t->in_channels, (long long)t->temporal_patch);
  int64_t grid;
  if (t->max_pixels > 0) {
    const int64_t factor = t->patch * t->merge;
    const int64_t side = max64(factor, (int64_t)floor(sqrt((double)t->max_pixels) /
                                                      (double)factor) * factor);
    grid = side / t->patch;
  } else if (t->image_size > 0) {
    grid = t->image_size / t->patch;
  } else {
    return kvp_fail(d, KVP_EINVAL, "the vision tower gives neither max_pixels nor image_size");
  }
  if (grid < 1 || grid > ((int64_t)1 << 20))
    return kvp_fail(d, KVP_EINVAL, "vision tower: %lld patches a side", (long long)grid);
  memset(v, 0, sizeof *v);
  v->hidden = t->hidden;
  v->intermediate = t->intermediate;
  v->gated = t->gated;
  v->proj_hidden = t->proj_hidden;
  v->out_hidden = t->out_hidden;
  v->merge = t->merge * t->merge;
  v->patches = grid * grid + (t->class_token ? 1 : 0);
  v->tokens = grid * grid / v->merge;
  v->patch_values = t->in_channels * t->temporal_patch * t->patch * t->patch;
  return KVP_OK;
}

/* How many items vLLM's encoder dummy batch holds, by engine, for the
 * profile p (its tokens N and sequences S):
 *   V1 (vllm/multimodal/encoder_budget.py MultiModalBudget._get_max_items
 *   and vllm/v1/core/encoder_cache_manager.py compute_mm_encoder_budget, at
 *   vllm-project/vllm 042a4d3ee43e and 003ad86e237c): the encoder budget is
 *   min(max_num_batched_encoder_embeds, encoder_cache_size), both
 *   max_num_batched_tokens by default and at least one item's T tokens;
 *   items = max(1, min(budget / T, max_num_seqs x max(1, min(limit,
 *   max_model_len / T)))), max_num_seqs capped at max_num_batched_tokens / T
 *   without chunked prefill (V1 chunks by default, the only case modelled).
 *   limit is limit_mm_per_prompt: 999 a modality when unset under V1, 1
 *   under V0 (vllm/config MultiModalConfig.get_limit_per_prompt: "999 if
 *   envs.VLLM_USE_V1 else 1", later "Unspecified modality is set to 999").
 *   V1 profiles one modality, the one of the most tokens an item.
 *   V0 (vllm/worker/model_runner.py profile_run; vllm/multimodal/
 *   profiling.py MultiModalProfiler.get_decoder_dummy_data, read at a
 *   V0-era vLLM): every dummy sequence carries limit_mm_per_prompt items of
 *   every modality (1 each by default: Qwen2/2.5-VL log "{'image': 16384,
 *   'video': 16384}"), a tower call each (videos of Qwen2/2.5-VL: as many
 *   tokens as the largest image, `video` in the entry), M tokens in all;
 *   max_num_seqs is capped at max_num_batched_tokens / M (at least 1), and a
 *   sequence shorter than its items is not cut: the decoder's dummy forward
 *   runs seqs x max(N / seqs, M) tokens and the sampler seqs rows.
 * Older V1 releases may count the budget's items with cdiv (not pinned).
 * profile_run runs the encoder on every GPU whose runner supports
 * multimodal inputs (every pipeline stage builds the tower); under tp the
 * MLP's width is split like the decoder's, the residual stream, attention
 * and pixel values are counted whole. Fills e, its items and V1's budget
 * in tokens (compute_mm_encoder_budget: max(N, T); V0 has none). */
static kvp_err vision_run(const kvp_engine_rule *r, const kvp_deploy *d, int64_t mml,
                          kvp_profile *p, kvp_encoder *e, kvp_reserves *out, kvp_diag *diag) {
  kvp_vision v = {0};
  TRY(vision_item(&r->tower, &v, diag));
  out->item_patches = v.patches;
  out->item_tokens = v.tokens;
  int64_t *budget = &out->enc_budget;
  const int64_t T = v.tokens, N = p->tokens, S = p->seqs;
  const int64_t mods = (!r->v1 && r->tower.video) ? 2 : 1;
  TRY(kvp_check_count(T, 1, "tokens an item", diag));
  int64_t items;
  *budget = 0;
  if (!r->v1) {
    const int64_t lim = r->vision_limit > 0 ? r->vision_limit : 1;
    int64_t M, per;
    CHK(chk_mul(T, lim, &M) && chk_mul(M, mods, &M) && chk_mul(lim, mods, &per));
    const int64_t s = max64(1, min64(S, N / M));
    CHK(chk_mul(s, per, &items));
    CHK(chk_mul(s, max64(N / s, M), &p->tokens));
    p->seqs = s;
  } else {
    const int64_t lim = r->vision_limit > 0 ? r->vision_limit : 999;
    const int64_t per_prompt = max64(1, min64(lim, (mml > 0 ? mml : T) / T));
    int64_t reqs;
    CHK(chk_mul(S, per_prompt, &reqs));
    *budget = max64(N, T);
    items = max64(1, min64(*budget / T, reqs));
  }
  out->enc_items = items;
  v.intermediate = cdiv(v.intermediate, d->tp);
  /* the processor's pixel_values are float32 (transformers image
   * processors) unless the rule says otherwise: vLLM 0.9.2 on casts them to
   * the model dtype in call_hf_processor (vllm-project/vllm#18862; the rule's
   * pixel_bytes, stdlib/kvplan/engines.lua vllm_pixel_cast_release); the
   * tower casts float32 ones */
  const kvp_encoder_run run = {.items = items, .act_bytes = r->profile.act_bytes,
                               .pixel_bytes = r->pixel_bytes > 0 ? r->pixel_bytes : 4,
                               .calls = mods};
  return kvp_predict_encoder(&v, &run, e, diag);
}

void kvp_engine_rule_gpu(kvp_engine_rule *r, const kvp_gpu_facts *g) {
  r->gpu_a100 = g->a100;
  r->gpu_p2p = g->p2p;
  r->gpu_nvls = g->nvls;
  /* vLLM's profile holds the GPU's cuBLAS workspace; TensorRT-LLM's dry run
   * is not read for it */
  r->profile.blas_workspace = r->trtllm ? 0 : g->blas_workspace;
  if (r->mxfp4 && r->mx_by_gpu) {
    const kvp_mxfp4 *m = r->mx_bundled ? &g->mx_bundled : &g->mx;
    r->mx.align_inter = m->align_inter;
    r->mx.align_hidden = m->align_hidden;
    r->mx.tile = m->tile;
    r->mx.scale_rows = m->scale_rows;
    r->mx.fp32_bias = m->fp32_bias;
    r->mx.keeps_scales = m->keeps_scales;
  }
}

kvp_err kvp_predict_deploy(kvp_deploy *d, const kvp_non_torch *nt, kvp_reserves *out,
                           kvp_diag *diag) {
  const kvp_engine_rule *r = &d->engine;
  /* a sweep's evaluations pass no out: the parts go to scratch, unread */
  const int want = out != NULL;
  kvp_reserves scratch;
  if (!want) out = &scratch;
  memset(out, 0, want ? sizeof *out : offsetof(kvp_reserves, act));
  if (r->nfraction > 0) {
    int32_t i = 0;
    while (i < r->nfraction && d->tp < r->fraction_tp[i]) i++;
    if (i == r->nfraction)
      return kvp_fail(diag, KVP_EINVAL, "the budget's fractions by tp give none for tp %lld",
                      (long long)d->tp);
    d->utilization = r->fraction[i];
  }
  /* a weight format axis replaced the checkpoint's size (weight_bytes 0):
   * nothing is repacked then, as kv.deploy with weights given */
  if (r->mxfp4 && d->weight_bytes > 0) {
    const int64_t ckpt = d->weight_bytes;
    TRY(kvp_mxfp4_weight_bytes(&r->mx, d->tp, &d->weight_bytes, diag));
    out->repacked = d->weight_bytes != ckpt;
  }
  if (r->sglang_memory) {
    out->sglang = 1;
    sglang_memory_defaults((double)d->gpu_bytes, d->tp, d->pp, &out->chunk, &out->graph_bs,
                           &out->reserved_mib, &d->utilization);
    /* a multimodal model's vision tower: adjust_mem_fraction_for_vlm scales
     * the rounded fraction, itself unrounded (engines.lua sglang_vlm_factor) */
    if (r->sglang_vlm > 0) d->utilization *= r->sglang_vlm;
    if (want) out->ngraphs = graph_sizes(out->graph_bs, out->graphs);
  }
  if (r->activation || r->seqs_cap || r->profiled) {
    int64_t tokens, seqs;
    const int64_t mml = d->max_model_len > 0 ? d->max_model_len : d->model.max_context;
    if (r->trtllm) {
      /* TensorRT-LLM's PyTorch dry run (engines.lua trtllm): max_num_tokens
       * in context requests of min(max_seq_len - 1, max_num_tokens) tokens */
      tokens = r->tokens_given ? d->max_num_batched_tokens : r->default_tokens;
      const int64_t len = max64(1, mml > 0 ? min64(mml - 1, tokens) : tokens);
      seqs = cdiv(tokens, len);
    } else {
      vllm_defaults(r, d->gpu_bytes, mml, r->tokens_given ? d->max_num_batched_tokens : 0,
                    r->seqs_given ? d->vllm.max_num_seqs : 0, &tokens, &seqs);
    }
    out->tokens = tokens;
    out->seqs = seqs;
    if (r->seqs_cap) d->vllm.max_num_seqs = seqs;
    if (r->activation) {
      kvp_profile p = r->profile;
      p.tokens = tokens;
      p.seqs = seqs;
      p.tp = d->tp;
      p.last_stage = 1;
      kvp_encoder enc;
      if (r->vision) {
        TRY(vision_run(r, d, mml, &p, &enc, out, diag));
        out->vision = 1;
        out->enc = enc;
        out->dec_tokens = p.tokens;
      }
      kvp_activation a;
      TRY(kvp_predict_activation(&r->shape, &p, &a, diag));
      if (r->vision) TRY(kvp_predict_add_encoder(&a, &enc, diag));
      d->activation_bytes = a.bytes;
      out->activation = 1;
      out->act = a;
      /* the stages' peaks are set from stage 0 on, each > 0: clear them only
       * when some are set (a sweep's every evaluation passes here) */
      if (d->vllm.stage_activation_bytes[0] != 0)
        memset(d->vllm.stage_activation_bytes, 0, sizeof d->vllm.stage_activation_bytes);
      if (d->pp > KVP_MAX_PP)
        return kvp_fail(diag, KVP_EINVAL, "field 'pp' must be at most %d, got %lld", KVP_MAX_PP,
                        (long long)d->pp);
      /* under pipeline parallelism every stage profiles its own layers, only
       * the last one samples (gpu_model_runner.py profile_run:
       * _dummy_sampler_run on get_pp_group().is_last_rank; TensorRT-LLM's
       * dry run the same): the other stages reserve the forward alone.
       * kv.deploy asks for the forward at pp 1 too (V0's ranks other than
       * the driver sample nothing: kvplan validate's 'rank'). */
      if (d->pp > 1 || want) {
        kvp_activation f;
        p.last_stage = 0;
        TRY(kvp_predict_activation(&r->shape, &p, &f, diag));
        if (r->vision) TRY(kvp_predict_add_encoder(&f, &enc, diag));
        out->forward_bytes = f.bytes;
        if (d->pp > 1) {
          for (int64_t s = 0; s < d->pp - 1; s++)
            d->vllm.stage_activation_bytes[s] = max64(f.bytes, 1);
          d->vllm.stage_activation_bytes[d->pp - 1] = a.bytes;
        }
      }
    }
  }
  if (r->overhead != KVP_NT_NONE) {
    const kvp_non_torch_at at = {.engine = r->overhead, .tp = d->tp, .pp = d->pp,
                                 .nccl_counted = r->nccl_counted,
                                 .context_counted = r->context_counted, .p2p = r->gpu_p2p,
                                 .nccl_runtime = r->nccl_runtime, .nvls = r->gpu_nvls,
                                 .torch_pg = r->overhead == KVP_NT_VLLM && !r->trtllm};
    TRY(kvp_predict_non_torch(nt, &at, &out->non_torch, diag));
    d->overhead_bytes = out->non_torch.total[0];
    out->overhead = 1;
  }
  return KVP_OK;
}

/* ---- PyTorch's caching allocator (kvp_torch_segments) -------------------- */

/* c10/cuda/CUDACachingAllocator.cpp at pytorch/pytorch eb42ad6eca0c:
 * round_size (a request rounded up to kMinBlockSize), get_pool (<=
 * kSmallSize: the small pool), get_free_block (the smallest free block of
 * the pool that holds it: the lower_bound of its size-ordered set),
 * get_allocation_size (a new segment: kSmallBuffer; kLargeBuffer below
 * kMinLargeAlloc; else rounded up to kRoundLarge) and should_split (the
 * rest kept free when >= kMinBlockSize in the small pool, > kSmallSize in
 * the large one). The constants come from the caller (engines.lua
 * torch_alloc). */

/* v rounded up to a multiple of m (m >= 1), checked. */
static kvp_err seg_round(int64_t v, int64_t m, int64_t *out) {
  int64_t q = v / m + (v % m != 0);
  CHK(chk_mul(q, m, out));
  return KVP_OK;
}

kvp_err kvp_torch_segments(const kvp_torch_alloc *a, const int64_t *sizes, int64_t n,
                           kvp_torch_block *blocks, int64_t nblocks, int64_t *segments,
                           kvp_diag *diag) {
  TRY(kvp_check_count(a->min_block, 1, "torch_alloc.min_block", diag));
  TRY(kvp_check_count(a->small_size, 1, "torch_alloc.small_size", diag));
  TRY(kvp_check_count(a->small_buffer, 1, "torch_alloc.small_buffer", diag));
  TRY(kvp_check_count(a->large_buffer, 1, "torch_alloc.large_buffer", diag));
  TRY(kvp_check_count(a->min_large_alloc, 1, "torch_alloc.min_large_alloc", diag));
  TRY(kvp_check_count(a->round_large, 1, "torch_alloc.round_large", diag));
  TRY(kvp_check_count(n, 0, "allocations", diag));
  int64_t nfree = 0, total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (sizes[i] < 0)
      return kvp_fail(diag, KVP_EINVAL, "allocation %lld: size must be >= 0 bytes, got %lld",
                      (long long)(i + 1), (long long)sizes[i]);
    if (sizes[i] == 0) continue;
    int64_t r, block;
    TRY(seg_round(sizes[i], a->min_block, &r));
    int32_t small = r <= a->small_size;
    int64_t best = -1;
    for (int64_t j = 0; j < nfree; j++)
      if (blocks[j].small == small && blocks[j].bytes >= r &&
          (best < 0 || blocks[j].bytes < blocks[best].bytes))
        best = j;
    if (best >= 0) {
      block = blocks[best].bytes;
      blocks[best] = blocks[--nfree];
    } else {
      if (small) block = a->small_buffer;
      else if (r < a->min_large_alloc) block = a->large_buffer;
      else TRY(seg_round(r, a->round_large, &block));
      if (block < r)
        return kvp_fail(diag, KVP_EINVAL, "allocation %lld: a segment of %lld bytes for a "
                        "request of %lld (the torch_alloc constants disagree)",
                        (long long)(i + 1), (long long)block, (long long)r);
      CHK(chk_add(total, block, &total));
    }
    int64_t rest = block - r;
    if (small ? rest >= a->min_block : rest > a->small_size) {
      if (nfree >= nblocks)
        return kvp_fail(diag, KVP_EINVAL, "allocation %lld: more free blocks than the %lld "
                        "given room for (expected room for one per allocation)",
                        (long long)(i + 1), (long long)nblocks);
      blocks[nfree++] = (kvp_torch_block){.bytes = rest, .small = small};
    }
  }
  *segments = total;
  return KVP_OK;
}
