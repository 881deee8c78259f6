-- examples/continuous_batching.lua: does continuous batching give "5-10x
-- throughput"? Recomputed for a 70B model on four H100s and an 8B model on
-- one L4.
--
-- Shows: kv.simulate (engine/core/sim.c), which schedules step by step as
-- vLLM's V1 scheduler does, with step times from the roofline
-- (engine/core/roofline.c). The same 4000 chat-like requests, all queued at
-- once (an offline batch job), served eight ways:
--   scheduler   static (a batch is admitted when the last one has finished,
--               and runs until its longest member is done) or continuous
--               (requests join and leave at every step: Orca, OSDI 2022)
--   allocation  contiguous (each request reserves max_model_len = 8192
--               tokens of KV when admitted) or paged (blocks of 16 tokens on
--               demand: PagedAttention, SOSP 2023)
--   KV format   bf16 or fp8
-- `speedup` is each row's output throughput over the first row of its
-- deployment (static, contiguous, bf16: batching as before PagedAttention);
-- `vs_static` is continuous over static with the same allocation and KV
-- format, the scheduler's own share; `claim` says where "5-10x" holds.
-- Lengths: prompts lognormal with median 512 tokens, outputs lognormal with
-- median 200 and sigma 0.8 (a long tail: the longest of a batch of 256 is
-- about 7x the median), both capped so that prompt + output <= 8192.
-- Engine limits are vLLM's defaults for the GPU (engines.lua): 8192 tokens
-- and 1024 sequences a step on the H100, 2048 and 256 on the L4.
--
-- Run: build/kvplan examples/continuous_batching.lua

local kv = require "kvplan"
local o = kv.optim

local deployments = {
  {name = "llama-3.1-70b on 4x h100-sxm", model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4},
  {name = "llama-3.1-8b on 1x l4", model = "llama-3.1-8b", gpu = "l4", tp = 1},
}
local workload = {
  requests = 4000, seed = 1,
  prompt = kv.workload.lognormal{median = 512, sigma = 0.6, max = 4096},
  output = kv.workload.lognormal{median = 200, sigma = 0.8, max = 4096},
}

local r = kv.report{columns = {
  "deployment", "scheduler", "allocation", "kv", {"throughput_tokens_s", precision = 1},
  {"speedup", precision = 2}, {"vs_static", precision = 2}, {"ttft_p50_s", precision = 2}, {"ttft_p99_s", precision = 2},
  {"tpot_p50_ms", precision = 2}, {"tpot_p99_ms", precision = 2}, {"e2e_p99_s", precision = 2},
  "num_preemptions", {"kv_usage_mean", precision = 3}, {"kv_usage_peak", precision = 3},
  "steps", "claim"}}

for _, dep in ipairs(deployments) do
  local base, static = nil, {}
  for _, sched in ipairs{"static", "continuous"} do
    for _, alloc in ipairs{"contiguous", "paged"} do
      for _, fmt in ipairs{"bf16", "fp8"} do
        local opts = {model = dep.model, gpu = dep.gpu, tp = dep.tp, max_model_len = 8192,
                      scheduler = sched, kv = fmt,
                      optim = alloc == "paged" and o.paged{block = 16} or o.contiguous{}}
        for k, v in pairs(workload) do opts[k] = v end
        local s = kv.simulate(opts)
        base = base or s.throughput_tokens_s
        local x = s.throughput_tokens_s / base
        local key = alloc .. "/" .. fmt
        static[key] = static[key] or s.throughput_tokens_s
        local vs = s.throughput_tokens_s / static[key]
        local function verdict(v)
          return v > 10 and "above 10x" or (v >= 5 and "5-10x" or string.format("%.1fx", v))
        end
        local claim = ""
        if sched == "continuous" then
          claim = string.format("%s over the baseline; %s from the scheduler alone", verdict(x),
                                verdict(vs))
        end
        r:row{deployment = dep.name, scheduler = sched, allocation = alloc, kv = fmt,
              throughput_tokens_s = s.throughput_tokens_s, speedup = x, vs_static = vs,
              ttft_p50_s = s.ttft_ms.p50 / 1000, ttft_p99_s = s.ttft_ms.p99 / 1000,
              tpot_p50_ms = s.tpot_ms.p50, tpot_p99_ms = s.tpot_ms.p99,
              e2e_p99_s = s.e2e_ms.p99 / 1000, num_preemptions = s.num_preemptions,
              kv_usage_mean = s.kv_cache_usage_perc.mean, kv_usage_peak = s.kv_cache_usage_perc.peak,
              steps = s.steps, claim = claim}
      end
    end
  end
end
r:close()
