-- tests/lua/pareto_test.lua: the Pareto front of kv.pareto (dominance on
-- hand-made points: a single point, a dominated one, ties, duplicates), the
-- ladder of concurrencies, and kv.pareto's points, SLA marks and errors.
local kv = require "kvplan"
local check = require "check"
local front = kv.pareto.front

local function marks(points)
  local on, s = front(points), {}
  for i = 1, #points do s[i] = on[i] and "1" or "0" end
  return table.concat(s)
end

-- hand-made points (x and y both to maximize)
check.eq(marks{}, "", "no points, no front")
check.eq(marks{{x = 5, y = 5}}, "1", "a single point is the front")
check.eq(marks{{x = 1, y = 1}, {x = 2, y = 2}}, "01", "a point below and left of another is dominated")
check.eq(marks{{x = 1, y = 3}, {x = 3, y = 1}, {x = 2, y = 2}}, "111", "a trade-off: every point on the front")
check.eq(marks{{x = 1, y = 3}, {x = 3, y = 1}, {x = 1, y = 1}}, "110", "under the staircase: dominated")
-- ties on one axis: the higher on the other dominates
check.eq(marks{{x = 2, y = 1}, {x = 2, y = 3}}, "01", "same x, lower y: dominated")
check.eq(marks{{x = 1, y = 4}, {x = 3, y = 4}}, "01", "same y, lower x: dominated")
-- equal points do not dominate one another
check.eq(marks{{x = 2, y = 2}, {x = 2, y = 2}}, "11", "duplicates are both on the front")
check.eq(marks{{x = 2, y = 2}, {x = 2, y = 2}, {x = 3, y = 2}}, "001", "duplicates dominated together")
check.eq(marks{{x = 3, y = 2}, {x = 2, y = 2}, {x = 2, y = 3}, {x = 3, y = 2}}, "1011",
         "a tie with a higher x and a tie with a higher y")
-- the order of the points does not matter
check.eq(marks{{x = 2, y = 2}, {x = 1, y = 1}, {x = 0, y = 9}, {x = 9, y = 0}}, "1011", "order")
-- against the definition, on a grid with many ties and duplicates
local pts = {}
for i = 1, 60 do pts[i] = {x = (i * 7) % 5, y = (i * 11) % 6} end
local on = front(pts)
for i, p in ipairs(pts) do
  local dominated = false
  for _, q in ipairs(pts) do
    if q.x >= p.x and q.y >= p.y and (q.x > p.x or q.y > p.y) then dominated = true end
  end
  check.eq(on[i], not dominated, "point " .. i .. " against the definition")
end
-- other keys
local kp = front({{a = 1, b = 2}, {a = 0, b = 1}}, "a", "b")
assert(kp[1] and not kp[2], "keys a and b")
check.error("field 'y of point 2' must be a finite number, got nan", front, {{x = 1, y = 1}, {x = 1, y = 0 / 0}})
check.error("field 'x of point 1' must be a finite number, got nil", front, {{y = 1}})
check.error("point 1 must be a table, got number", front, {3})

-- the ladder: powers of two below the top, and the top
local pareto = require "kvplan.pareto"
check.eq(table.concat(pareto.ladder(1), ","), "1", "ladder of 1")
check.eq(table.concat(pareto.ladder(8), ","), "1,2,4,8", "ladder of 8")
check.eq(table.concat(pareto.ladder(350), ","), "1,2,4,8,16,32,64,128,256,350", "ladder of 350")

-- kv.pareto on a small case: two deployments of an 8B model
local spec = {model = "llama-3.1-8b", gpus = {"h100-sxm"}, tp = {1, 2}, input = 1000, output = 200,
              tpot_ms = 20}
local points, info = kv.pareto(spec)
check.eq(info.deployments, 2, "deployments simulated")
-- tp 1 holds 384 requests of 1200 tokens (ledger), tp 2 871, under max_num_seqs 1024
-- (the newest vLLM modelled, no release given: 0.92 utilization and FlashInfer's
-- sampler; 350 and 802 under 0.11)
check.eq(info.sims, #points, "one simulation a point")
check.eq(#points, 10 + 11, "ladders of 350 and 804")
check.eq(info.max_model_len, 1200, "max_model_len is input + output")
local d1 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", tp = 1, max_model_len = 1200}
check.eq(points[10].concurrency, d1:ledger():max_concurrency(1200), "the top rung is the KV cache's")
local nfront = 0
for i, p in ipairs(points) do
  check.eq(p.gpus, p.tp * p.pp, "gpus")
  assert(math.abs(p.tokens_per_s_gpu - p.tokens_per_s / p.gpus) < 1e-9, "per GPU")
  assert(math.abs(p.tokens_per_s_user - 1000 / p.tpot_ms_p90) < 1e-9, "per user: 1000 / p90 TPOT")
  check.eq(p.requests, math.max(256, 8 * p.concurrency), "requests a simulation")
  check.eq(p.meets_sla, p.tpot_ms_p90 <= 20, "meets_sla " .. i)
  check.eq(p.why == "", p.meets_sla, "why " .. i)
  -- with a TPOT target alone at the axis's percentile, the SLA's front is
  -- the front's points that meet it
  check.eq(p.pareto_sla, p.pareto and p.meets_sla, "pareto_sla " .. i)
  if p.pareto then nfront = nfront + 1 end
  if i > 1 and points[i - 1].tp == p.tp then
    assert(points[i - 1].concurrency < p.concurrency, "by concurrency")
  end
end
check.eq(#info.front, nfront, "info.front")
assert(nfront >= 2, "a front of more than one point")
-- the same spec, the same points
local again = kv.pareto(spec)
for i, p in ipairs(points) do
  check.eq(again[i].tokens_per_s, p.tokens_per_s, "deterministic " .. i)
  check.eq(again[i].pareto, p.pareto, "deterministic front " .. i)
end
-- a given ladder, rungs past the top dropped; requests given
local few, finfo = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm"}, tp = {1}, input = 1000,
                             output = 200, concurrency = {8, 2, 8, 5000}, requests = 100}
check.eq(#few, 2, "two rungs: 2 and 8 (5000 is past the KV cache)")
check.eq(finfo.sims, 2, "two simulations")
check.eq(few[1].concurrency, 2, "sorted")
check.eq(few[2].requests, 100, "requests given")
assert(few[1].meets_sla == nil and few[1].pareto_sla == nil, "no SLA, no marks")
-- data_parallel_size engines: the candidate's GPUs and the ladder's top are
-- the engines' together (the top was one engine's, which kv.simulate then
-- split over the engines: 350 clients, 175 a rank, on 1 GPU counted)
do
  local function top(base)
    local pts = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm"}, tp = {1}, input = 1000,
                          output = 200, requests = 64, base = base}
    return pts[#pts]
  end
  local one, two = top(nil), top({data_parallel_size = 2})
  check.eq(two.gpus, 2 * one.gpus, "dp 2: twice the GPUs")
  check.eq(two.concurrency, 2 * one.concurrency, "dp 2: the top rung is both engines'")
end
-- a TTFT target: the SLA's front may hold points the whole front does not
local t = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm"}, tp = {1}, input = 1000, output = 200,
                    ttft_ms = 100, percentile = "p50"}
for _, p in ipairs(t) do
  check.eq(p.meets_sla, p.ttft_ms_p50 <= 100, "ttft at p50")
  assert(math.abs(p.tokens_per_s_user - 1000 / p.tpot_ms_p50) < 1e-9, "per user at p50")
  assert(not p.pareto_sla or p.meets_sla, "the SLA's front meets it")
end
-- goodput: the share of requests within every target, as kv.plan's SLA
local g = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm"}, tp = {1}, input = 1000, output = 200,
                    tpot_ms = 20, goodput = 0.5, concurrency = {1, 128}}
check.eq(g[1].meets_sla, true, "one client: every request within 20 ms")
check.eq(g[2].meets_sla, false, "128 clients: TPOT about 26.8 ms for every request")
assert(g[2].why:find("of requests meet every target, goodput 0.5 asks 50.0 %", 1, true), g[2].why)
-- 26.8 ms: the 27.3 of 0.11 less the host's 328 x 0.91 + 128 x 1.1 us = 0.44
-- ms a step, hidden by async scheduling (the default from the 0.14 row on)
check.eq(points[8].why, "the p90 TPOT is 26.8 ms, target 20 ms", "why: plan.what_missed")
-- a model too big for the GPU: skipped with why, no points
local none, ninfo = kv.pareto{model = "llama-3.1-70b", gpus = {"l4"}, tp = {1}, input = 1000, output = 200}
check.eq(#none, 0, "nothing fits")
check.eq(#ninfo.skipped, 1, "skipped")
assert(ninfo.skipped[1].why ~= "", "skipped says why")

-- bad input
local function bad(field, value, want)
  local s = {}
  for k, v in pairs(spec) do s[k] = v end
  s[field] = value
  check.error(want, kv.pareto, s)
end
bad("input", 0, "field 'input' must be an integer >= 1, got 0")
bad("output", 1, "field 'output' must be an integer >= 2, got 1")
bad("input", "lots", "workload field 'input' must be a number of tokens >= 1 or a length distribution")
bad("tpot_ms", -1, "SLA field 'tpot_ms' must be a number of milliseconds > 0, got -1")
bad("ttft_ms", 0 / 0, "SLA field 'ttft_ms' must be a number of milliseconds > 0, got")
bad("percentile", "p95", "SLA field 'percentile' must be p50, p90 or p99, got 'p95'")
bad("goodput", 1.5, "SLA field 'goodput' must be a fraction in (0, 1]")
bad("concurrency", {4, 0}, "field 'concurrency item 2' must be an integer >= 1, got 0")
bad("max_model_len", 1000, "field 'max_model_len' must hold input + output = 1200 tokens, got 1000")
bad("gpu", "h100", "unknown field 'gpu' in pareto (did you mean 'gpus'")
check.error("pareto needs 'input'", kv.pareto, {model = "llama-3.1-8b"})
check.error("pareto chart needs an options table", kv.pareto.chart, points, info, nil)
check.error("unknown field 'colour' in pareto chart", kv.pareto.chart, points, info, {output = "x.png", colour = 1})

-- a GPU the catalog has no rates for is skipped with why, not the end of the
-- run: 'kvplan pareto model=llama-3.1-8b input=100 output=20' (every GPU, the
-- default) failed with "gpu 'a10g' has no dense tensor rate in the catalog"
do
  local pts, inf = kv.pareto{model = "llama-3.1-8b", gpus = {"a10g", "h100-sxm"}, tp = {1}, input = 100,
                             output = 20, concurrency = {1}}
  assert(#pts > 0, "h100-sxm simulated")
  local why
  for _, s in ipairs(inf.skipped) do if s.gpu == "a10g" then why = s.why end end
  check.eq(why, "gpu 'a10g' has no dense tensor rate in the catalog: give perf = {hbm_gbps = ..., tflops = ...}",
           "a10g skipped, why")
end
