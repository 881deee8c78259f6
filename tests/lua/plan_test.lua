-- tests/lua/plan_test.lua: plan.capacity, the highest rate one replica
-- sustains under an SLA: a hand-checked case, the bisection's invariants,
-- bindings, determinism and bad input.
local kv = require "kvplan"
local check = require "check"
local plan = require "kvplan.plan"

-- Hand-checked: prompts of 1024 tokens and one output token on an H100
-- at the pure roofline (every efficiency 1, no host time, no kernel floor). Every step is a
-- prefill, compute-bound: the replica serves as many requests a second as
-- one prompt's prefill time allows, 1000 / d:time(1024, 1).ttft_ms (the
-- same FLOPs a token however the prompts are batched), 60.77 req/s. With
-- no latency target the capacity is the saturation rate, found in two
-- simulations (all at once, then Poisson arrivals at that rate).
local pure = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                       efficiency = {memory = 1, compute = 1, link = 1},
                       perf = {launch_us = 0, seq_host_us = 0, kernel_floor_us = 0,
                               eager_launch_us = 0}}
local c = plan.capacity(pure, {input = 1024, output = 1}, {})
local hand = 1000 / pure:time(1024, 1).ttft_ms
assert(math.abs(c.rate / hand - 1) < 1e-6, "prefill-only capacity " .. c.rate .. ", by hand " .. hand)
check.eq(c.binding, "compute", "prefills bind")
check.eq(c.sims, 2, "simulations")

-- a TPOT below one request's own decode step: no rate meets it
local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}
local wl = {input = 1000, output = 200}
local lone = d:time(1000, 1).tpot_ms
c = plan.capacity(d, wl, {tpot_ms = lone * 0.9})
check.eq(c.rate, 0, "tpot below a lone decode step")
check.eq(c.binding, "tpot", "binding")
assert(c.lone and c.why:find("cannot meet the SLA at any rate", 1, true), c.why)
assert(c.at.tpot_ms.p90 >= lone * 0.99, "a request alone decodes at the roofline's step")
check.eq(c.sims, 8, "saturation, its rate, 5 bisections, one request alone")

-- the bisection: the SLA holds at the rate, not at the next rate tried,
-- and the two are within the tolerance of the saturation rate
local sla = {tpot_ms = 20, ttft_ms = 1000}
c = plan.capacity(d, wl, sla)
assert(c.rate > 0 and c.next > c.rate, "a bracket")
assert(c.next - c.rate <= plan.tolerance * c.saturation_rate + 1e-9, "within the tolerance")
assert(plan.meets(c.at, plan.sla(sla)), "meets at the rate")
check.eq(c.at.tpot_ms.p90 <= 20, true, "p90 TPOT at the rate")
local above = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = plan.requests,
                          prompt = 1000, output = 200, rate = c.next, seed = 1}
local ok, f = plan.meets(above, plan.sla(sla))
check.eq(ok, false, "misses at the next rate")
check.eq(f.target, c.target, "the target missed above")
check.eq(c.binding, "tpot", "binding")
check.eq(c.sims, 7, "saturation, its rate, 5 bisections (the bracket is saturation / 32 up to rounding)")
assert(c.rate <= c.saturation_rate, "never above saturation")
-- deterministic: the same search gives the same rate, bit for bit
check.eq(plan.capacity(d, wl, sla).rate, c.rate, "deterministic")
-- the roofline's bound lies above the simulated saturation
assert(plan.rate_bound(d, wl) >= c.saturation_rate, "rate_bound is an upper bound")

-- a tighter target never sustains a higher rate
local last = math.huge
for _, t in ipairs{60, 40, 30, 25, 20, 15} do
  local r = plan.capacity(d, wl, {tpot_ms = t, ttft_ms = 2000}).rate
  assert(r <= last + 1e-12, string.format("tpot %d ms: %g req/s, above the looser %g", t, r, last))
  last = r
end
last = math.huge
for _, t in ipairs{2000, 500, 200, 100, 60} do
  local r = plan.capacity(d, wl, {ttft_ms = t}).rate
  assert(r <= last + 1e-12, string.format("ttft %d ms: %g req/s, above the looser %g", t, r, last))
  last = r
end

-- goodput: the share of requests within every target, at the rate
c = plan.capacity(d, wl, {ttft_ms = 1000, tpot_ms = 25, goodput = 0.9})
local met = c.at:goodput{ttft_ms = 1000, tpot_ms = 25}
assert(met / c.at.requests >= 0.9, "goodput at the rate: " .. met / c.at.requests)

-- the verdict first: a deployment that cannot start runs no simulation
c = plan.capacity(kv.deploy{model = "llama-3.1-70b", gpu = "l4"}, wl, sla)
check.eq(c.binding, "start", "70B on one L4")
check.eq(c.sims, 0, "no simulation")
assert(c.why:find("weights need", 1, true), c.why)
-- a request longer than max_model_len
c = plan.capacity(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", max_model_len = 1024}, wl, sla)
check.eq(c.binding, "start", "longer than max_model_len")

-- bad input names the field, the value and what is expected
check.error("SLA field 'percentile' must be p50, p90 or p99, got 'p95'", plan.capacity, d, wl,
            {tpot_ms = 20, percentile = "p95"})
check.error("SLA field 'goodput' must be a fraction in (0, 1]", plan.capacity, d, wl,
            {tpot_ms = 20, goodput = 1.5})
check.error("SLA field 'goodput' needs a target", plan.capacity, d, wl, {goodput = 0.9})
check.error("SLA field 'tpot_ms' must be a number of milliseconds > 0, got -5", plan.capacity, d, wl,
            {tpot_ms = -5})
check.error("a workload needs 'input' and 'output'", plan.capacity, d, {input = 100}, sla)
check.error("workload prefix 'hit_rate' must be 1", plan.capacity, d,
            {input = 100, output = 10, prefix = {tokens = 64, hit_rate = 0.5}}, sla)
check.error("unknown", plan.capacity, d, {input = 100, output = 10, inptu = 3}, sla)
-- a length past the longest the simulator draws (2^40, KVP_MAX_LENGTH):
-- input + output wrapped past 2^63 ('best input=9223372036854775807 output=20
-- rate=5' said "field 'context' must be an integer >= 1, got -9223372036854775789")
check.error("workload field 'input' must be an integer in 1..2^40 tokens (the longest request kvplan "
            .. "simulates), got 9223372036854775807", plan.workload, {input = math.maxinteger, output = 20})
check.error("workload field 'output' must be an integer in 1..2^40 tokens", plan.workload,
            {input = 20, output = (1 << 40) + 1})
check.eq(plan.workload{input = 1 << 40, output = 1}.input, 1 << 40, "2^40 itself")
print("plan: ok")

-- ---- kv.plan: replicas, GPUs and the search ---------------------------------

-- A deployment whose capacity under the SLA is R gets 3 replicas at 2.5 R
-- (kv.plan starts the server with max_model_len the longest request, 1200)
local one = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", max_model_len = 1200}
local R = plan.capacity(one, wl, sla).rate
local ranked, info = kv.plan{model = "llama-3.1-8b", input = 1000, output = 200, rate = 2.5 * R,
                             tpot_ms = 20, ttft_ms = 1000, gpus = {"h100-sxm"}, tp = {1}, pp = {1}}
check.eq(ranked[1].replicas, 3, "2.5 R on replicas of R")
check.eq(ranked[1].rate_per_replica, R, "the replica's capacity")
check.eq(ranked[1].gpus, 3, "three GPUs")
check.eq(ranked[1].mode, "aggregated", "mode")
assert(math.abs(ranked[1].utilization - 2.5 / 3) < 1e-12, "utilization 2.5 / 3")
assert(ranked[1].tpot_ms <= 20 and ranked[1].ttft_ms <= 1000, "the planned rate meets the SLA")
check.eq(ranked[1].why, "", "the winner")
check.eq(info.simulated, 1, "one deployment simulated")
-- R itself: one replica; just above: two
check.eq(kv.plan{model = "llama-3.1-8b", input = 1000, output = 200, rate = R, tpot_ms = 20, ttft_ms = 1000,
                 gpus = {"h100-sxm"}, tp = {1}, pp = {1}}[1].replicas, 1, "R on one replica")

-- tighter targets and higher rates never need fewer GPUs
local function fewest(t)
  local r = kv.plan{model = "llama-3.1-8b", input = 1000, output = 200, rate = t.rate or 8,
                    tpot_ms = t.tpot_ms, ttft_ms = t.ttft_ms, gpus = {"h100-sxm", "l40s"}, pp = {1}}
  return r[1].rank and r[1].gpus or math.huge
end
local prev = 0
for _, t in ipairs{60, 40, 30, 25, 20} do
  local g = fewest{tpot_ms = t, ttft_ms = 2000}
  assert(g >= prev, string.format("tpot %d ms: %s GPUs, fewer than a looser target's %s", t, g, prev))
  prev = g
end
prev = 0
for _, t in ipairs{2000, 500, 200, 100} do
  local g = fewest{tpot_ms = 40, ttft_ms = t}
  assert(g >= prev, string.format("ttft %d ms: %s GPUs, fewer than a looser target's %s", t, g, prev))
  prev = g
end
prev = 0
for _, rate in ipairs{2, 8, 20, 40, 80} do
  local g = fewest{rate = rate, tpot_ms = 40, ttft_ms = 1000}
  assert(g >= prev, string.format("rate %d: %s GPUs, fewer than a lower rate's %s", rate, g, prev))
  prev = g
end
assert(prev > 1, "80 req/s needs more than one GPU")

-- every candidate that is not ranked says why
ranked, info = kv.plan{model = "llama-3.1-70b", input = 2048, output = 256, rate = 4, tpot_ms = 50,
                       ttft_ms = 2000, gpus = {"h100-sxm", "l4"}, pp = {1}, tp = {1, 2, 4, 8}}
local seen = {}
for _, c in ipairs(ranked) do
  if c.rank == nil then
    assert(c.why ~= "", "unranked without a reason")
    seen[c.why:match("^[^:]*")] = true
  end
end
assert(seen["cannot start"], "70B on one L4 cannot start")
check.eq(ranked[1].gpu, "h100-sxm", "the H100s")
assert(info.sims > 0 and info.sims == info.sims // 1, "sims counted")
-- rank = cost: GPUs without a price are not ranked, and say so
kv.gpus.get("h100-sxm").price_per_hour = 3
ranked = kv.plan{model = "llama-3.1-8b", input = 1000, output = 200, rate = 4, tpot_ms = 40,
                 gpus = {"h100-sxm", "l40s"}, pp = {1}, rank = "cost"}
check.eq(ranked[1].gpu, "h100-sxm", "the priced GPU")
assert(math.abs(ranked[1].cost_per_hour - 3 * ranked[1].gpus) < 1e-12, "cost per hour")
assert(math.abs(ranked[1].usd_per_mtok_output - ranked[1].cost_per_hour / (4 * 200 * 3600 / 1e6)) < 1e-12,
       "USD per million output tokens at the planned rate")
assert(math.abs(ranked[1].usd_per_mtok_total - ranked[1].cost_per_hour / (4 * 1200 * 3600 / 1e6)) < 1e-12,
       "USD per million tokens, input and output")
local unpriced = false
for _, c in ipairs(ranked) do
  if c.gpu == "l40s" then
    unpriced = true
    assert(c.rank == nil and c.why:find("no price_per_hour", 1, true), c.why)
  end
end
assert(unpriced, "the L40S is listed")
kv.gpus.get("h100-sxm").price_per_hour = nil

-- modes: disaggregated candidates (kvplan.disagg) ranked beside the aggregated ones
ranked, info = kv.plan{model = "llama-3.1-8b", input = 4000, output = 200, rate = 10, ttft_ms = 2000,
                       tpot_ms = 20, gpus = {"h100-sxm"}, tp = {1, 2}, pp = {1},
                       modes = {"aggregated", "disaggregated"}}
local modes = {}
for _, c in ipairs(ranked) do
  if c.rank then
    modes[c.mode] = true
    if c.mode == "disaggregated" then
      assert(c.prefill.replicas >= 1 and c.decode.replicas >= 1 and c.kv_transfer_ms > 0, "pools sized")
      check.eq(c.gpus, c.prefill.gpus + c.decode.gpus, "GPUs of both pools")
    end
  end
end
assert(modes.aggregated and modes.disaggregated, "both modes ranked")
-- disaggregated pairs that cannot serve are listed with why (ordering them
-- compared a missing GPU count before)
ranked = kv.plan{model = "llama-3.1-8b", input = 1000, output = 200, rate = 30, ttft_ms = 1000, tpot_ms = 40,
                 gpus = {"h100-sxm", "l40s"}, pp = {1}, modes = {"aggregated", "disaggregated"}}
local unserved = 0
for _, c in ipairs(ranked) do
  if c.rank == nil and c.mode == "disaggregated" then
    unserved = unserved + 1
    assert(c.why ~= nil and c.why ~= "", "an unranked pair says why")
  end
end
assert(unserved > 0, "some pairs cannot serve 30 req/s under TTFT 1 s, TPOT 40 ms")

-- bad input
check.error("field 'rate' must be a number > 0", kv.plan, {model = "llama-3.1-8b", input = 1, output = 1, rate = -1})
check.error("field 'rate' must be a number > 0", kv.plan, {model = "llama-3.1-8b", input = 1, output = 1})
check.error("SLA field 'percentile' must be p50, p90 or p99, got 'p95'", kv.plan,
            {model = "llama-3.1-8b", input = 1, output = 1, rate = 1, tpot_ms = 9, percentile = "p95"})
check.error("field 'rank' must be gpus, cost or usd_per_mtok", kv.plan,
            {model = "llama-3.1-8b", input = 1, output = 1, rate = 1, rank = "speed"})
check.error("field 'modes' must list aggregated and/or disaggregated, got 'mixed'", kv.plan,
            {model = "llama-3.1-8b", input = 1, output = 1, rate = 1, modes = {"mixed"}})
print("plan search: ok")

-- expert and data parallelism (issue 19, scope 5): a MoE model's layouts
-- over one stage's tp GPUs, only the sizes the experts and heads allow
local function layouts(m, engine, tp)
  local out = {}
  for _, l in ipairs(kv.plan.parallel_layouts(m, engine, tp)) do out[#out + 1] = l.layout end
  return table.concat(out, "; ")
end
local v3 = kv.model("deepseek-v3") -- 256 routed experts, 128 heads
check.eq(layouts(v3, "vllm", 8), "EP 8; DP 2 x tp 4, EP 8; DP 4 x tp 2, EP 8; DP 8 x tp 1, EP 8", "vLLM at tp 8")
check.eq(layouts(v3, "sglang", 8), "EP 8; attention DP 2; attention DP 4; attention DP 8; attention DP 8, EP 8",
         "SGLang at tp 8")
check.eq(layouts(v3, "trtllm", 8), "", "no TensorRT-LLM layouts")
check.eq(layouts(v3, "vllm", 1), "", "tp 1: none")
check.eq(layouts(kv.model("llama-3.1-70b"), "vllm", 8), "", "a dense model: none")
-- 6 experts do not split over 4 ranks: no EP; 12 heads over tp / dp = 2 or 1
local odd = {experts = 6, heads = 12}
check.eq(layouts(odd, "sglang", 4), "attention DP 2; attention DP 4", "6 experts, 12 heads at tp 4")
check.eq(layouts(odd, "vllm", 4), "", "vLLM's DP comes with EP, which 6 experts over 4 refuse")
check.eq(layouts({experts = 8, heads = 6}, "sglang", 8), "EP 8; attention DP 4; attention DP 8; attention DP 8, EP 8",
         "6 heads: attention TP 8 / 2 = 4 does not divide them, 2 and 1 do")
-- the search compares them: Qwen3-235B-A22B on 8 H200s at 60 req/s under SGLang
local moe, minfo = kv.plan{model = "qwen3-235b-a22b", gpus = {"h200"}, input = 1000, output = 200,
                           rate = 60, ttft_ms = 3000, tpot_ms = 100, tp = {8}, pp = {1},
                           base = {engine = "sglang"}}
check.eq(minfo.candidates, 6, "tp 8 and its five layouts")
local seen = {}
for _, c in ipairs(moe) do
  seen[c.layout or "tp"] = c
  check.eq(c.gpus, c.replicas * 8, "attention DP ranks live inside the 8 GPUs: " .. (c.layout or "tp"))
end
check.eq(seen["attention DP 8, EP 8"].dp, 8, "the candidate's dp")
check.eq(seen["attention DP 8, EP 8"].ep, 8, "the candidate's ep")
check.eq(seen["attention DP 8, EP 8"].deployment.enable_dp_attention, true, "its deployment")
check.eq(seen["tp"].dp, 1, "tp alone: dp 1")
-- vLLM's DP engines: tp 1 x 8 engines are 8 GPUs a replica
local vm = kv.plan{model = "qwen3-235b-a22b", gpus = {"h200"}, input = 1000, output = 200, rate = 60,
                   ttft_ms = 3000, tpot_ms = 100, tp = {8}, pp = {1}}
for _, c in ipairs(vm) do
  if c.layout == "DP 8 x tp 1, EP 8" then
    check.eq(c.tp, 1, "the engines' tp")
    check.eq(c.gpus, c.replicas * 8, "8 engines of one GPU a replica")
  end
end
print("plan parallel ok")

-- A GPU the catalog gives no interconnect (the MI300A) cannot be timed at
-- tp 2: that candidate says so (binding "rates"), the search goes on; a
-- whole-catalog search of Qwen3-235B-A22B stopped at it
do
  local r = kv.plan{model = "llama-3.1-8b", input = 100, output = 50, rate = 1, tpot_ms = 100,
                    gpus = {"mi300a", "h100-sxm"}, tp = {2}, pp = {1}}
  check.eq(r[1].gpu, "h100-sxm", "the GPU that can be timed ranks")
  local m
  for _, c in ipairs(r) do if c.gpu == "mi300a" then m = c end end
  check.eq(m.binding, "rates", "no interconnect: no step time")
  check.eq(m.rank, nil, "not ranked")
  assert(m.why:find("no step time on gpu 'mi300a'", 1, true), m.why)
end
print("plan rates ok")

-- max_model_len = auto (vLLM's) in the base: kv.deploy fits it to the KV
-- memory and the candidates are searched at the longest request ("auto" was
-- checked as the context: "field 'context' must be an integer >= 1, got
-- string 'auto'", a field the caller never gave) (brief hostile)
do
  local r = kv.plan{model = "llama-3.1-8b", gpus = {"l4"}, tp = {1}, input = 1000, output = 100, rate = 1,
                    base = {max_model_len = "auto"}}
  check.eq(r[1].gpu, "l4", "a candidate")
  check.eq(r[1].deployment:ledger().max_model_len, 38336, "max_model_len fitted to the KV memory")
end
print("plan max_model_len auto ok")
