-- scripts/pareto.lua: throughput against latency over deployments.
-- Every deployment of a model on the given GPUs (kv.best's search) is
-- simulated at a ladder of client concurrencies (kv.simulate) and the points
-- are marked on the Pareto front of output tokens/s per GPU against output
-- tokens/s per user (kv.pareto, stdlib/kvplan/pareto.lua): a report and,
-- with chart=, a chart with the SLA line.
--
-- Run:  kvplan pareto model=llama-3.1-8b gpus=h100-sxm,l40s input=1000 output=200 tpot_ms=20
--       kvplan pareto model=qwen3-32b gpus=h100-sxm input=2048 output=256 chart=front.png -o front.csv
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required)
--   gpus         GPU ids or aliases (default: every plannable GPU)
--   input        prompt tokens per request (required, >= 1)
--   output       output tokens per request (required, >= 2: TPOT is the
--                time between output tokens)
--   tp, pp       sizes to try (default: every tp the heads allow up to
--                max_gpus; pp 1)
--   max_gpus     most GPUs a deployment may use, tp x pp (default 8)
--   weights, kv  formats to try (default native and auto)
--   concurrency  client concurrencies to simulate (default: 1, 2, 4, ... and
--                the deployment's top: the requests its KV cache holds or its
--                engine's max_num_seqs, whichever is smaller)
--   requests     requests a simulation (default 0: 8 per client, at least 256)
--   tpot_ms, ttft_ms, e2e_ms   SLA targets in milliseconds at `percentile`
--                (default 0: none)
--   percentile   p50, p90 or p99 (default p90): the SLA's, and the TPOT that
--                tokens/s per user is 1000 over
--   goodput      the share of requests that must meet every target (default
--                0: none; then the percentile applies only when given), as
--                kv.plan's SLA
--   front        true: only the points on the front (default false: all)
--   chart        also draw the chart to this .png or .svg file
--   utilization  fraction of GPU memory the engine may use (default 0.9)
--   max_model_len  the longest request the engine is started for (default
--                input + output)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (engine, engine_version, max_num_seqs,
--                max_num_batched_tokens, block, prefix, ...: max-num-seqs as
--                vLLM spells it), checked as that field; gpu stands for gpus
--
-- Output, one row a point (a deployment at a client concurrency), in order
-- of gpu, weights, kv, tp, pp, concurrency:
--   gpu, tp, pp, gpus, weights, kv, concurrency, requests,
--   tokens_per_s (output, the deployment), tokens_per_s_gpu, tokens_per_s_user,
--   ttft_ms_p50, ttft_ms_p90, ttft_ms_p99, tpot_ms_p50, tpot_ms_p90,
--   tpot_ms_p99, e2e_ms_p90, e2e_ms_p99,
--   pareto (on the front), meets_sla and pareto_sla (with a target; the front
--   of the points that meet it), why (the target missed by most)
-- The chart: tokens/s per user across, tokens/s per GPU up, the front as a
-- line, every point in its deployment's colour, the SLA as a dashed line at
-- tokens/s per user = 1000 / tpot_ms. Standard error says how many
-- simulations ran.

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-8b", gpus = {""}, input = -1, output = -1,
  tp = {0}, pp = {0}, max_gpus = 8, weights = {""}, kv = {""}, concurrency = {0}, requests = 0,
  tpot_ms = 0.0, ttft_ms = 0.0, e2e_ms = 0.0, percentile = "", goodput = 0.0, front = false,
  chart = "",
  utilization = 0.9,
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
local bad = kv.options.bad
for _, k in ipairs{"input", "output"} do
  if opt[k] == -1 then bad("argument '%s' is required (tokens per request, e.g. %s=%d)", k, k,
                           k == "input" and 1000 or 200) end
end
if opt.input < 1 then bad("argument 'input' must be an integer >= 1 (prompt tokens), got '%d'", opt.input) end
if opt.output < 2 then
  bad("argument 'output' must be an integer >= 2 (TPOT is the time between output tokens), got '%d'",
      opt.output)
end
if opt.percentile ~= "" and not require("kvplan.plan").percentiles[opt.percentile] then
  bad("argument 'percentile' must be p50, p90 or p99, got '%s'", kv.util.escape(opt.percentile, 64))
end
if opt.chart ~= "" then
  local ext = opt.chart:match("%.(%w+)$")
  if ext == nil or (ext:lower() ~= "png" and ext:lower() ~= "svg") then
    bad("argument 'chart' must name a .png or .svg file, got '%s'", kv.util.escape(opt.chart, 64))
  end
end
local function given(l) return #l > 0 and l[1] ~= "" and l[1] ~= 0 and l or nil end
for _, c in ipairs(given(opt.concurrency) or {}) do
  if c < 1 then bad("argument 'concurrency' must be integers >= 1, got '%d'", c) end
end

local spec = {
  model = opt.model, gpus = given(opt.gpus), input = opt.input, output = opt.output,
  tp = given(opt.tp), pp = given(opt.pp), max_gpus = opt.max_gpus, weights = given(opt.weights),
  kv = given(opt.kv), concurrency = given(opt.concurrency),
  requests = opt.requests > 0 and opt.requests or nil,
  percentile = opt.percentile ~= "" and opt.percentile or nil,
  base = kv.options.given_fields(opt, fields, {utilization = opt.utilization}),
}
-- max_model_len is kv.pareto's own (default input + output)
spec.max_model_len, spec.base.max_model_len = spec.base.max_model_len, nil
if spec.max_model_len and spec.max_model_len < opt.input + opt.output then
  bad("argument 'max_model_len' must hold input + output = %d tokens, got '%d'",
      opt.input + opt.output, spec.max_model_len)
end
for _, k in ipairs{"tpot_ms", "ttft_ms", "e2e_ms"} do
  if opt[k] > 0 then spec[k] = opt[k] end
end
if opt.goodput ~= 0 then
  if not (opt.goodput > 0 and opt.goodput <= 1) then
    bad("argument 'goodput' must be a fraction in (0, 1] (the share of requests meeting every "
        .. "target), got '%s'", opt.goodput)
  end
  if not (spec.tpot_ms or spec.ttft_ms or spec.e2e_ms) then
    bad("argument 'goodput' needs a target: tpot_ms, ttft_ms or e2e_ms")
  end
  spec.goodput = opt.goodput
end
local points, info = kv.pareto(spec)
if #points == 0 then
  local why = info.skipped[1] and (": " .. info.skipped[1].gpu .. " tp " .. info.skipped[1].tp .. ": "
                                   .. info.skipped[1].why) or ""
  error(string.format("no deployment of %s with at most %d GPUs holds one request of %d tokens and "
                      .. "starts%s", info.model.id, opt.max_gpus, info.max_model_len, why), 0)
end
if not (package.loaded["kvplan.cli"] or {}).quiet then
  local function n(k, what) return string.format("%d %s%s", k, what, k == 1 and "" or "s") end
  io.stderr:write(string.format("kvplan pareto: %s, %s; %s, %d on the front\n",
                                n(info.deployments, "deployment"), n(info.sims, "simulation"),
                                n(#points, "point"), #info.front))
end

local columns = {
  "gpu", "tp", "pp", "gpus", "weights", "kv", "concurrency", "requests",
  {"tokens_per_s", precision = 1}, {"tokens_per_s_gpu", precision = 1},
  {"tokens_per_s_user", precision = 2},
  {"ttft_ms_p50", precision = 1}, {"ttft_ms_p90", precision = 1}, {"ttft_ms_p99", precision = 1},
  {"tpot_ms_p50", precision = 2}, {"tpot_ms_p90", precision = 2}, {"tpot_ms_p99", precision = 2},
  {"e2e_ms_p90", precision = 1}, {"e2e_ms_p99", precision = 1}, "pareto",
}
if info.sla then
  for _, c in ipairs{"meets_sla", "pareto_sla", "why"} do columns[#columns + 1] = c end
end
local r = kv.report{columns = columns}
for _, p in ipairs(points) do
  if p.pareto or not opt.front then
    local row = {}
    for _, c in ipairs(columns) do
      local name = type(c) == "table" and c[1] or c
      row[name] = p[name]
    end
    r:row(row)
  end
end
r:close()

if opt.chart ~= "" then
  kv.pareto.chart(points, info, {output = opt.chart})
end
