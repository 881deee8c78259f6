-- examples/expert_parallel.lua: DeepSeek-V3 (its FP8 checkpoint) on 8 H200s,
-- per-GPU weights and KV with and without expert parallelism and attention
-- data parallelism, under SGLang and vLLM, and what the roofline and the
-- simulator make of each layout.
--
-- Shows: at tp 8 every GPU holds 1/8 of every weight and the same MLA latent
-- of every request (MLA's KV is one latent a token, not split over heads),
-- so the 8 GPUs hold one pool's requests. SGLang's ep_size 8 holds 32 whole
-- experts a GPU: the same bytes, an all-to-all in place of the MoE layers'
-- all-reduce. SGLang's enable_dp_attention with dp_size 8 makes 8 ranks
-- inside the 8 GPUs: each GPU holds the attention whole (and the embedding),
-- about 10 GiB more weights, but its KV pool holds its own rank's requests,
-- so the deployment holds 8 pools' (the column requests_4k: 4096-token
-- requests at once, all ranks). vLLM's data_parallel_size 8 at tp 1 with
-- enable_expert_parallel is 8 engines of one GPU, the experts cut over all 8.
-- The step-time columns are d:time's decode step at 2048 tokens of context
-- and 32 sequences a rank (tokens_per_s the deployment's; a2a_ms the
-- all-to-all's part of comm_ms); the simulated column serves 1024 requests
-- of 1000 prompt and 200 output tokens arriving at once, split evenly over
-- the ranks (kv.simulate). Nothing here is measured; the figures are
-- kvplan's predictions.
--
-- Run: build/kvplan examples/expert_parallel.lua

local kv = require "kvplan"

local layouts = {
  {engine = "sglang", label = "tp 8"},
  {engine = "sglang", label = "tp 8, ep 8", ep_size = 8},
  {engine = "sglang", label = "tp 8, dp attention 8", dp_size = 8, enable_dp_attention = true},
  {engine = "sglang", label = "tp 8, dp attention 8, ep 8", dp_size = 8, enable_dp_attention = true,
   ep_size = 8},
  {engine = "vllm", label = "tp 8"},
  {engine = "vllm", label = "tp 8, ep", enable_expert_parallel = true},
  {engine = "vllm", label = "tp 1, dp 8, ep", tp = 1, data_parallel_size = 8,
   enable_expert_parallel = true},
}

local GiB = kv.units.GiB
local r = kv.report{columns = {
  "engine", "layout", "gpus", "ranks", {"weights_gib", precision = 2}, {"kv_gib", precision = 2},
  "kv_bytes_token", "kv_tokens_rank", "requests_4k", {"tpot_ms", precision = 2},
  {"comm_ms", precision = 3}, {"a2a_ms", precision = 3}, {"tokens_per_s", precision = 0},
  {"sim_tokens_per_s", precision = 0}, {"sim_tpot_ms_p50", precision = 2},
}}
for _, o in ipairs(layouts) do
  local opts = {model = "deepseek-v3", gpu = "h200", tp = 8, max_model_len = 4096}
  for k, v in pairs(o) do if k ~= "label" then opts[k] = v end end
  local d = kv.deploy(opts)
  local l = d:ledger()
  local t = d:time(2048, 32)
  local sopts = {requests = 1024, prompt = 1000, output = 200}
  for k, v in pairs(opts) do sopts[k] = v end
  local s = kv.simulate(sopts)
  r:row{engine = o.engine, layout = o.label, gpus = kv.deployments.gpus(d), ranks = l.data_parallel_size,
        weights_gib = l.weights / GiB, kv_gib = l.kv_budget / GiB, kv_bytes_token = l.kv_token_bits // 8,
        kv_tokens_rank = l.kv_tokens, requests_4k = l:max_concurrency(4096) * l.data_parallel_size,
        tpot_ms = t.tpot_ms, comm_ms = t.comm_ms, a2a_ms = t.a2a_ms, tokens_per_s = t.tokens_per_s,
        sim_tokens_per_s = s.throughput_tokens_s, sim_tpot_ms_p50 = s.tpot_ms.p50}
end
r:close()
