-- examples/vllm_options.lua: vLLM's KV cache switches and overrides, by
-- vLLM's own option names, on two real models.
--
-- Shows: for Gemma-3-27B (52 sliding-window layers of 1024 tokens beside 10
-- full ones) on one H100 and Llama-3.1-70B (80 full layers) on four, what
-- each option changes in what vLLM decides at startup and in what fits:
--   disable_hybrid_kv_cache_manager  sliding layers allocated as full
--                       attention (one KV group, every token on every layer);
--   num_gpu_blocks_override  the pool's blocks, whatever memory is left
--                       (more than the GPU holds does not fit);
--   kv_cache_memory_bytes    the KV memory of every GPU, ignoring
--                       gpu_memory_utilization;
--   max_num_seqs       the scheduler's cap on running requests;
--   max_model_len      here 131072, beside vLLM's own check of it;
-- then, on models that have the layers they concern, cross-attention
-- (Whisper), mamba_cache_mode (Nemotron-H), prefill_context_parallel_size,
-- the release default for chunked local attention (Llama 4), a model
-- with no KV cache at all (BGE) under vLLM's default max_num_seqs, prefix
-- caching of a model of Mamba layers alone (Falcon-Mamba, mamba_cache_mode
-- align: two states a request, blocks of 16 tokens) and TurboQuant KV
-- formats (Llama-3.1-8B: packed slots, its first and last two layers in bf16).
-- Columns, per option: the block of each KV cache group (group_blocks), the
-- pool's blocks, what vLLM logs ("GPU KV cache size", "Maximum
-- concurrency"), vLLM's startup check (starts, and the longest
-- max_model_len it estimates fits: the figure its error message suggests),
-- kvplan's admission answer (the longest single request the pool admits,
-- the null block set aside) and the requests of 8192 tokens that fit.
--
-- Inputs: the H100 of kvplan's GPU catalog, vLLM's budget as the newest release
-- modelled runs it, no release named (utilization 0.92; engine_version = "0.11"
-- reproduces 0.11's 0.9 and startup check),
-- 1 GiB of activation peak and 1 GiB of non-torch memory per GPU, bf16 KV,
-- max_num_batched_tokens 2048.
--
-- Run: build/kvplan examples/vllm_options.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

local models = {
  {model = "gemma-3-27b", tp = 1},
  {model = "llama-3.1-70b", tp = 4},
}
local options = {
  {"defaults", {}},
  {"disable_hybrid_kv_cache_manager", {disable_hybrid_kv_cache_manager = true}},
  {"num_gpu_blocks_override=2000", {num_gpu_blocks_override = 2000}},
  {"num_gpu_blocks_override=40000", {num_gpu_blocks_override = 40000}},
  {"kv_cache_memory_bytes=8GiB", {kv_cache_memory_bytes = "8 GiB"}},
  {"max_num_seqs=16", {max_num_seqs = 16}},
}
local context = 8192

local r = kv.report{columns = {
  "model", "tp", "option", "fits", "limit", {"kv_budget_gib", precision = 2}, "group_blocks",
  "num_blocks", "vllm_kv_cache_tokens", {"vllm_max_concurrency", precision = 2}, "vllm_starts",
  "vllm_max_model_len", "admitted_len", "context", "max_concurrency"}}

for _, m in ipairs(models) do
  for _, o in ipairs(options) do
    local opts = {model = m.model, gpu = "h100", tp = m.tp, activation = "1 GiB",
                  overhead = "1 GiB", max_model_len = 131072, max_num_batched_tokens = 2048}
    for k, v in pairs(o[2]) do opts[k] = v end
    local l = kv.deploy(opts):ledger()
    r:row{
      model = m.model, tp = m.tp, option = o[1], fits = l.fits, limit = l.limit,
      kv_budget_gib = l.kv_budget / GiB, group_blocks = l.group_blocks, num_blocks = l.kv_blocks,
      vllm_kv_cache_tokens = l.vllm_kv_cache_tokens,
      vllm_max_concurrency = l.vllm_max_concurrency, vllm_starts = l.vllm_starts,
      vllm_max_model_len = l.vllm_max_model_len, admitted_len = l:max_context(1),
      context = context, max_concurrency = l:max_concurrency(context),
    }
  end
end

-- Options of other models: what vLLM's newer KV cache kinds and modes change
-- (each row a model that has the layers the option concerns; max_model_len
-- the model's own, context a request that fits it):
--   Whisper large-v3     cross-attention layers cache the encoder's 1500
--                        tokens once per request (CrossAttentionSpec);
--   Nemotron-Nano-9B-v2  mamba_cache_mode align / all (prefix caching of
--                        Mamba states; all at mamba_block_size 128);
--   Llama-3.1-70B        prefill_context_parallel_size 2 (KV sharded over
--                        two ranks of 4 GPUs);
--   Llama-4-Scout        engine_version 0.11: chunked local attention
--                        allocated as full attention unless
--                        allow_chunked_local_attn_with_hybrid_kv_cache;
--   BGE-large            an encoder-only embedding model: no KV cache, the
--                        requests capped by vLLM's default max_num_seqs when
--                        the deployment names the engine.
local more = {
  {"whisper-large-v3", 1, "defaults", {}, 448},
  {"nemotron-nano-9b-v2", 1, "defaults", {max_model_len = 131072}, context},
  {"nemotron-nano-9b-v2", 1, "mamba_cache_mode=align", {max_model_len = 131072,
                                                        mamba_cache_mode = "align"}, context},
  {"nemotron-nano-9b-v2", 1, "mamba_cache_mode=all", {max_model_len = 131072,
                                                      mamba_cache_mode = "all",
                                                      mamba_block_size = 128}, context},
  {"llama-3.1-70b", 4, "prefill_context_parallel_size=2", {max_model_len = 131072,
                                                          prefill_context_parallel_size = 2},
   context},
  {"llama-4-scout", 4, "defaults", {max_model_len = 131072}, 32768},
  {"llama-4-scout", 4, "engine_version=0.11", {max_model_len = 131072, engine_version = "0.11"},
   32768},
  {"llama-4-scout", 4, "engine_version=0.11+allow_chunked", {max_model_len = 131072,
   engine_version = "0.11", allow_chunked_local_attn_with_hybrid_kv_cache = true}, 32768},
  {"bge-large-en-v1.5", 1, "defaults", {}, 512},
  {"bge-large-en-v1.5", 1, "engine=vllm", {engine = "vllm"}, 512},
  {"falcon-mamba-7b", 1, "mamba_cache_mode=align", {max_model_len = 131072,
                                                    mamba_cache_mode = "align"}, context},
  {"llama-3.1-8b", 1, "kv_cache_dtype=turboquant_k8v4", {max_model_len = 131072,
                                                         kv = "turboquant_k8v4"}, context},
  {"llama-3.1-8b", 1, "kv_cache_dtype=turboquant_3bit_nc", {max_model_len = 131072,
                                                            kv = "turboquant_3bit_nc"}, context},
}
for _, x in ipairs(more) do
  local opts = {model = x[1], gpu = "h100", tp = x[2], activation = "1 GiB", overhead = "1 GiB",
                max_num_batched_tokens = 2048}
  for k, v in pairs(x[4]) do opts[k] = v end
  local l = kv.deploy(opts):ledger()
  r:row{
    model = x[1], tp = x[2], option = x[3], fits = l.fits, limit = l.limit,
    kv_budget_gib = l.kv_budget / GiB, group_blocks = l.group_blocks, num_blocks = l.kv_blocks,
    vllm_kv_cache_tokens = l.vllm_kv_cache_tokens,
    vllm_max_concurrency = l.vllm_max_concurrency, vllm_starts = l.vllm_starts,
    vllm_max_model_len = l.vllm_max_model_len, admitted_len = l:max_context(1),
    context = x[5], max_concurrency = l:max_concurrency(x[5]),
  }
end

r:close()
