-- examples/engine_startup.lua: one model on one GPU under vLLM, SGLang and
-- TensorRT-LLM: what each engine's budget subtracts, the KV pool it is left
-- with, and whether it starts.
--
-- Shows: the three budget rules side by side (vLLM: utilization x total -
-- weights - profiled activation - non-torch; SGLang: mem_fraction_static x
-- (total - CUDA context) - weights, its 0.5 defaults from the GPU's memory;
-- TensorRT-LLM: free_gpu_memory_fraction x (total - weights - activation -
-- non-torch), the PyTorch backend's dry run of max_num_tokens predicted, the
-- TensorRT engine's activation left to the user), the KV tokens each pool
-- holds, and each engine's startup answer from d:starts(): vLLM refuses a
-- max_model_len its KV cache cannot hold, SGLang refuses an empty pool ("Not
-- enough memory") and otherwise cuts requests to its pool, TensorRT-LLM cuts
-- max_seq_len to its blocks unless told to fail fast. Every reserve is
-- predicted; nothing here is measured (docs/predictions.md).
--
-- Run: build/kvplan examples/engine_startup.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

local engines = {
  {engine = "vllm", engine_version = "0.11"},
  {engine = "sglang", engine_version = "0.5"},
  {engine = "trtllm", engine_version = "1.0"},
  {engine = "trtllm", engine_version = "1.0", fail_fast_on_attention_window_too_large = true},
  {engine = "trtllm", engine_version = "0.21", activation = "1 GiB"},
}
local setups = {
  {model = "llama-3.1-8b", gpu = "h100-sxm"},
  {model = "llama-3.1-8b", gpu = "l4", max_model_len = 32768},
  {model = "llama-3.1-70b", gpu = "h100-sxm", weights = "fp8"},
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4},
}

local r = kv.report{columns = {
  "model", "gpu", "tp", "weights", "max_model_len", "engine", "version", "backend", "fail_fast",
  {"utilization", precision = 3}, {"weights_gib", precision = 2}, {"activation_gib", precision = 2},
  "activation_source", {"non_torch_gib", precision = 2}, {"kv_budget_gib", precision = 2},
  "block", "kv_tokens", "starts", "why",
}}
for _, s in ipairs(setups) do
  for _, e in ipairs(engines) do
    local o = {}
    for k, v in pairs(s) do o[k] = v end
    for k, v in pairs(e) do o[k] = v end
    local d = kv.deploy(o)
    local l = d:ledger()
    -- the tokens the engine reports: vLLM's "GPU KV cache size", SGLang's
    -- max_total_num_tokens, TensorRT-LLM's max tokens before block rounding
    local tokens = 0
    if l.fits and d.budget == "vllm" then tokens = l.vllm_kv_cache_tokens
    elseif l.fits and d.budget == "sglang" then tokens = l.kv_tokens
    elseif l.kv_budget > 0 then tokens = l.kv_budget // l.kv_bytes_per_token end
    local ok, why = d:starts()
    r:row{
      model = d.model.id, gpu = d.gpu.id, tp = d.tp, weights = d.weights.name,
      max_model_len = l.max_model_len, engine = d.budget, version = d.engine_version,
      backend = d.trtllm_backend or "", fail_fast = d.fail_fast_on_attention_window_too_large or false,
      utilization = d.utilization, weights_gib = l.weights / GiB, activation_gib = l.activation / GiB,
      activation_source = d.activation_source, non_torch_gib = l.overhead / GiB,
      kv_budget_gib = l.kv_budget / GiB, block = l.block, kv_tokens = tokens,
      starts = ok, why = why,
    }
  end
end
r:close()
