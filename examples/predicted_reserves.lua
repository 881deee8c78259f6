-- examples/predicted_reserves.lua: what vLLM will subtract at startup, predicted
-- before any GPU runs, and whether it will start.
--
-- Shows: for a few deployments (dense, MoE, hybrid, quantized; several GPUs,
-- tp and vLLM releases), the profiling run's size (max_num_batched_tokens N,
-- max_num_seqs S, from the release's defaults), the predicted activation peak
-- with its low and high end and the term that sets it (MLP, attention, MoE,
-- sampler, or a vision model's encoder batch: engine/core/predict.c), the
-- predicted non-torch memory, the weights
-- (by tensor class for mixed checkpoints), the KV memory left, and vLLM's
-- startup check (d:starts()). Nothing here is measured: pass activation= and
-- overhead= from your own log to replace the predictions.
--
-- Run: build/kvplan examples/predicted_reserves.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

local cases = {
  {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11"},
  {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.11", usage = "offline"},
  {model = "llama-3.1-8b", gpu = "rtx-3090", engine_version = "0.7", max_model_len = 20000},
  {model = "llama-3.1-8b", gpu = "l40s", engine_version = "0.10", flashinfer_sampler = true},
  {model = "qwen2.5-7b", gpu = "a100-sxm-80gb", engine_version = "0.10", utilization = 0.5,
   max_model_len = 16384, flashinfer_sampler = true},
  {model = "qwen3-30b-a3b", gpu = "h100-sxm", tp = 2, engine_version = "0.10"},
  {model = "gpt-oss-20b", gpu = "a100-sxm-80gb", engine_version = "0.11", utilization = 0.65},
  {model = "gpt-oss-120b", gpu = "h100-sxm", engine_version = "0.11"},
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, engine_version = "0.11"},
  -- a vision model: V1 encodes one 16384-token image before the decoder's
  -- dummy run (the encoder sets the peak); V0 runs an image and a video
  -- through the tower and the decoder over their 32768 tokens (the MLP does)
  {model = "qwen2.5-vl-7b", gpu = "l4", engine_version = "0.9", max_model_len = 2048,
   flashinfer_sampler = true},
  {model = "qwen2.5-vl-7b", gpu = "rtx-3090", engine_version = "0.7", max_model_len = 8192},
}

local r = kv.report{columns = {
  "model", "gpu", "tp", "vllm", "usage", "N", "S", "weights", {"weights_gib", precision = 2},
  {"activation_gib", precision = 2}, {"activation_lo_gib", precision = 2},
  {"activation_hi_gib", precision = 2}, "largest", {"non_torch_gib", precision = 2},
  {"kv_budget_gib", precision = 2}, "kv_tokens", "starts", "why",
}}
for _, c in ipairs(cases) do
  local d = kv.deploy(c)
  local l = d:ledger()
  local a = d.activation_range
  local ok, why = d:starts()
  r:row{
    model = d.model.id, gpu = d.gpu.id, tp = d.tp, vllm = d.engine_version,
    usage = c.usage or "server", N = d.profile_tokens, S = d.profile_seqs,
    weights = d.weights.name, weights_gib = l.weights / GiB,
    activation_gib = l.activation / GiB, activation_lo_gib = a.lo / GiB,
    activation_hi_gib = a.hi / GiB, largest = a.largest, non_torch_gib = l.overhead / GiB,
    kv_budget_gib = l.kv_budget / GiB, kv_tokens = l.vllm_kv_cache_tokens, starts = ok, why = why,
  }
end
r:close()
