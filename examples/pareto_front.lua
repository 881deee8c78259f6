-- examples/pareto_front.lua: the throughput-latency trade-off of serving
-- Llama-3.1-8B on H100 SXM and L40S GPUs (tp 1, 2, 4 and 8, one node),
-- requests of 1000 prompt and 200 output tokens: each deployment simulated
-- under a client keeping 1, 2, 4, ... requests in flight, up to what its KV
-- cache holds or its engine's max_num_seqs (kv.pareto). Across, the speed
-- each user sees (output tokens/s, 1000 / p90 TPOT); up, output tokens/s per
-- GPU. The front (pareto = true) is where no deployment does better on both:
-- a single H100 at 128 or more clients gives the most per GPU, a tp 8 H100 at
-- few clients the fastest stream, and no L40S point is on it. The dashed
-- line is a TPOT target of 20 ms at p90 (meets_sla, pareto_sla).
--
-- Run:  kvplan examples/pareto_front.lua                     (the CSV report)
--       kvplan examples/pareto_front.lua chart=pareto.png    (and the chart)

local kv = require "kvplan"

local opt = kv.options(..., {chart = ""})
local points, info = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm", "l40s"},
                               input = 1000, output = 200, tpot_ms = 20}

local r = kv.report{columns = {
  "gpu", "tp", "gpus", "kv", "concurrency", "requests", {"tokens_per_s_gpu", precision = 1},
  {"tokens_per_s_user", precision = 2}, {"ttft_ms_p50", precision = 1},
  {"ttft_ms_p90", precision = 1}, {"tpot_ms_p50", precision = 2}, {"tpot_ms_p90", precision = 2},
  "pareto", "meets_sla", "pareto_sla",
}}
for _, p in ipairs(points) do
  r:row{gpu = p.gpu, tp = p.tp, gpus = p.gpus, kv = p.kv, concurrency = p.concurrency,
        requests = p.requests, tokens_per_s_gpu = p.tokens_per_s_gpu,
        tokens_per_s_user = p.tokens_per_s_user, ttft_ms_p50 = p.ttft_ms_p50,
        ttft_ms_p90 = p.ttft_ms_p90, tpot_ms_p50 = p.tpot_ms_p50, tpot_ms_p90 = p.tpot_ms_p90,
        pareto = p.pareto, meets_sla = p.meets_sla, pareto_sla = p.pareto_sla}
end
r:close()

if opt.chart ~= "" then
  kv.pareto.chart(points, info, {output = opt.chart, width = 900, height = 500})
end
