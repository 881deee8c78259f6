-- scripts/simulate.lua: serve a workload on a deployment, step by step as
-- vLLM's V1 scheduler does (kv.simulate), and report throughput, latency
-- percentiles, preemptions and KV cache usage. With lists, one simulation a
-- combination (GPU x tp x KV format x scheduler x rate).
--
-- Run:  kvplan simulate model=llama-3.1-8b gpu=l4 requests=1000 prompt=1000 output=250 rate=2
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required)
--   gpu          GPU ids or aliases (required)
--   tp, pp       tensor-parallel sizes and pipeline stages (default 1)
--   kv           KV cache formats (default auto: the model's activation dtype)
--   weights      weight format (default native: the checkpoint's own)
--   requests     how many requests (default 1000)
--   prompt, output  median prompt and output tokens (default 1000 and 250);
--                lengths are lognormal around them with sigma `sigma`
--                (default 0.5; 0: every request exactly the median), capped
--                so that prompt + output fit max_model_len
--   rate         Poisson arrivals, requests a second (default 0: all at once)
--   concurrency  a client keeping at most this many in flight (default 0: none)
--   scheduler    continuous or static (default continuous)
--   max_model_len  longest request (default 0: the model's max_context)
--   seed         the generator's seed (default 1)
--   timeline     also write the per-step series of the first simulation to
--                this CSV file (default: none)
--
-- Output: one row a simulation: the deployment and workload, then
-- throughput_tokens_s, requests_s, ttft/tpot/e2e percentiles in ms,
-- num_preemptions, kv_cache_usage_mean/peak (fractions of the pool), steps.

local kv = require "kvplan"
local w = kv.workload

local opt = kv.options(..., {
  model = kv.options.required "model=llama-3.1-8b", gpu = {kv.options.required "gpu=l4"},
  tp = {1}, pp = {1}, kv = {"auto"}, weights = "native", requests = 1000, prompt = 1000,
  output = 250, sigma = 0.5, rate = {0}, concurrency = 0, scheduler = {"continuous"},
  max_model_len = 0, seed = 1, timeline = "",
})
-- 0 is none for rate and concurrency: a negative one is refused, not taken as 0
for _, rate in ipairs(opt.rate) do
  if rate < 0 then
    kv.util.raise("argument 'rate' must be requests a second >= 0 (0: all at once), got %s", rate)
  end
end
if opt.concurrency < 0 then
  kv.util.raise("argument 'concurrency' must be an integer >= 0 (0: no cap), got %d", opt.concurrency)
end
local model = kv.model(opt.model)
local max_len = opt.max_model_len > 0 and opt.max_model_len or model.max_context

local function lengths(median, cap)
  if opt.sigma == 0 then return w.fixed(median) end
  return w.lognormal{median = median, sigma = opt.sigma, max = cap}
end
local prompt = lengths(opt.prompt, max_len // 2)
local output = lengths(opt.output, max_len - max_len // 2)

local r = kv.report{columns = {
  "model", "gpu", "tp", "pp", "kv", "scheduler", "rate", "requests",
  {"throughput_tokens_s", precision = 1}, {"requests_s", precision = 3},
  {"ttft_ms_p50", precision = 1}, {"ttft_ms_p99", precision = 1},
  {"tpot_ms_p50", precision = 2}, {"tpot_ms_p99", precision = 2}, {"e2e_ms_p99", precision = 1},
  "num_preemptions", {"kv_cache_usage_mean", precision = 3}, {"kv_cache_usage_peak", precision = 3},
  "steps"}}

local first = true
for _, g in ipairs(opt.gpu) do
  for _, tp in ipairs(opt.tp) do
    for _, pp in ipairs(opt.pp) do
      for _, kf in ipairs(opt.kv) do
        for _, sched in ipairs(opt.scheduler) do
          for _, rate in ipairs(opt.rate) do
            local s = kv.simulate{
              model = model, gpu = g, tp = tp, pp = pp, kv = kf,
              weights = opt.weights ~= "native" and opt.weights or nil,
              max_model_len = opt.max_model_len > 0 and opt.max_model_len or nil,
              requests = opt.requests, prompt = prompt, output = output, seed = opt.seed,
              rate = rate > 0 and rate or nil, scheduler = sched,
              max_concurrency = opt.concurrency > 0 and opt.concurrency or nil,
            }
            if first and opt.timeline ~= "" then s:timeline(opt.timeline) end
            first = false
            r:row{model = model.id, gpu = s.deployment.gpu.id, tp = tp, pp = pp,
                  kv = s.deployment.kv.name, scheduler = sched, rate = rate,
                  requests = s.requests, throughput_tokens_s = s.throughput_tokens_s,
                  requests_s = s.requests_s, ttft_ms_p50 = s.ttft_ms.p50,
                  ttft_ms_p99 = s.ttft_ms.p99, tpot_ms_p50 = s.tpot_ms.p50,
                  tpot_ms_p99 = s.tpot_ms.p99, e2e_ms_p99 = s.e2e_ms.p99,
                  num_preemptions = s.num_preemptions,
                  kv_cache_usage_mean = s.kv_cache_usage_perc.mean,
                  kv_cache_usage_peak = s.kv_cache_usage_perc.peak, steps = s.steps}
          end
        end
      end
    end
  end
end
r:close()
