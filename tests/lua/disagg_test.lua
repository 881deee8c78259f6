-- tests/lua/disagg_test.lua: disaggregated prefill/decode: the KV transfer
-- of one request (stdlib/kvplan/disagg.lua) from first principles, and the
-- two pools of kv.simulate (phase = "prefill" | "decode").
local kv = require "kvplan"
local check = require "check"
local disagg = require "kvplan.disagg"

local function near(a, b, tol, what)
  assert(math.abs(a - b) <= tol, string.format("%s: expected %.9g, got %.9g", what, b, a))
end

-- ---- the KV one request moves ------------------------------------------------

-- Llama-3.1-70B in bf16: 80 layers x (K and V) x 8 KV heads x 128 x 2 bytes
-- = 327,680 bytes a token; at tp 4 a GPU holds 2 of the 8 heads: 81,920. An
-- 8192-token prompt fills 512 whole blocks of 16: 671,088,640 bytes a GPU,
-- sent by the four GPUs at once, each over its own 400 Gb/s ConnectX-7 (50
-- GB/s each way, DGX H100): 13.42 ms, plus the fixed 6.7 ms.
local p4 = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4}
local t = disagg.kv_transfer(p4, p4, 8192)
check.eq(t.bytes_per_gpu, 8192 * 81920, "70B tp 4: bytes one GPU sends")
check.eq(t.bytes, 8192 * 327680, "70B: bytes of the prompt's KV")
check.eq(t.link_gbps_prefill, 50, "DGX H100: 400 Gb/s a GPU")
near(t.ms, 6.7 + 8192 * 81920 / 50e9 * 1e3, 1e-9, "70B tp 4 -> tp 4 transfer ms")
-- a decode instance of tp 8 receives half as much a GPU; the senders bind
local p8 = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 8}
local t48 = disagg.kv_transfer(p4, p8, 8192)
check.eq(t48.bytes_per_receiver, 8192 * 40960, "tp 8 receiver: one head of 8")
near(t48.ms, t.ms, 1e-12, "tp 4 -> tp 8: the tp 4 senders bind")
near(disagg.kv_transfer(p8, p4, 8192).ms, t.ms, 1e-12, "tp 8 -> tp 4: the tp 4 receivers bind")
-- the user's link and latency
near(disagg.kv_transfer(p4, p4, 8192, {kv_link_gbps = 25, kv_link_latency_us = 0}).ms,
     8192 * 81920 / 25e9 * 1e3, 1e-9, "kv_link_gbps 25, no latency")
-- fp8 KV: half the bytes
local f4 = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, kv = "fp8"}
check.eq(disagg.kv_transfer(f4, f4, 8192).bytes_per_gpu, 8192 * 40960, "fp8 KV: half")
-- MLA (DeepSeek-V3): the latent (512) and the rope key (64) of 61 layers in
-- bf16, 70,272 bytes a token, held whole on every GPU of the group: tp does
-- not divide it
local ds = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}
check.eq(disagg.kv_bytes(ds, 8192), 8192 * 61 * 576 * 2, "MLA: the latent on every GPU")
-- sliding windows (gpt-oss-120b: 18 full layers, 18 of window 128; 8 KV heads
-- of 64, one a GPU at tp 8: 256 bytes a token a layer): the full layers hold
-- all 8192 tokens, a sliding layer at most the 9 blocks of 16 a 128-token
-- window can straddle (144 tokens)
local go = kv.deploy{model = "gpt-oss-120b", gpu = "h200", tp = 8}
check.eq(disagg.kv_bytes(go, 8192), 18 * 256 * 8192 + 18 * 256 * 144, "sliding layers keep the window")
-- pipeline stages send at once: the most of one stage's GPUs binds
local pp2 = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, pp = 2}
check.eq(disagg.kv_bytes(pp2, 8192), 8192 * 81920 / 2, "pp 2: 40 layers a stage")
-- a GPU without a scale-out link in the catalog: say so, or take the user's
local l4 = kv.deploy{model = "llama-3.1-8b", gpu = "l4"}
local none, why = disagg.kv_transfer(l4, l4, 1000)
assert(none == nil and why:find("gpu 'l4' has no scale-out link", 1, true), tostring(why))
assert(disagg.kv_transfer(l4, l4, 1000, {kv_link_gbps = 12.5}).ms > 6.7, "user link")
check.error("field 'kv_link_gbps' must be a number > 0", disagg.kv_transfer, l4, l4, 10, {kv_link_gbps = 0})
check.error("field 'kv_link_latency_us' must be a number >= 0", disagg.kv_transfer, p4, p4, 10,
            {kv_link_latency_us = -1})
-- every catalog scale-out figure names its source
for _, g in ipairs(kv.gpus.all()) do
  if g.scaleout_gbps then
    assert(type(g.scaleout_source) == "string" and #g.scaleout_source > 40, g.id .. ": scaleout_source")
    assert(type(g.scaleout) == "string", g.id .. ": scaleout")
  end
end

-- ---- the two pools in the simulator -------------------------------------------

local base = {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 200, prompt = 2000, output = 100,
              rate = 4, seed = 3}
local function sim(extra)
  local o = {}
  for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return kv.simulate(o)
end
local agg = sim{}
local pre = sim{phase = "prefill", kv_transfer_ms = 20}
local pre0 = sim{phase = "prefill"}
local dec = sim{phase = "decode", kv_transfer_ms = 20}
-- the prefill pool: every prompt token once, one output token a request;
-- its TTFT is the transfer's 20 ms more than without it, and e2e is TTFT
check.eq(pre.output_tokens, 200, "prefill pool: one token a request")
check.eq(pre.prompt_tokens, 200 * 2000, "prefill pool: every prompt")
near(pre.ttft_ms.p90, pre0.ttft_ms.p90 + 20, 1e-6, "prefill TTFT adds the transfer")
near(pre.e2e_ms.p50, pre.ttft_ms.p50, 1e-9, "prefill pool: e2e = TTFT")
check.eq(pre.phase, "prefill", "result names its phase")
check.eq(pre.kv_transfer_ms, 20, "result names its transfer")
-- the decode pool computes no prompt: fewer steps than the aggregated run,
-- every output token, and the prefill's interference gone from its TPOT
check.eq(dec.output_tokens, 200 * 100, "decode pool: every output token")
assert(dec.tpot_ms.p90 < agg.tpot_ms.p90,
       string.format("decode pool TPOT p90 %.3f < aggregated %.3f", dec.tpot_ms.p90, agg.tpot_ms.p90))
check.eq(agg.phase, nil, "aggregated: no phase")
-- the options are checked
check.error("field 'phase' must be 'prefill' or 'decode'", sim, {phase = "both"})
check.error("field 'kv_transfer_ms' must be a number >= 0", sim, {phase = "decode", kv_transfer_ms = -1})
check.error("field 'kv_transfer_ms' is a disaggregated pool's", sim, {kv_transfer_ms = 5})
check.error("phase 'decode' is modelled on the schedulers", sim, {phase = "decode", scheduler = "sglang"})

-- ---- the pools sized apart: where disaggregation wins and where it loses -------

local plan = require "kvplan.plan"
local function deployments(model, gpu, tps)
  local out = {}
  for _, tp in ipairs(tps) do out[#out + 1] = kv.deploy{model = model, gpu = gpu, tp = tp} end
  return out
end
local function best_aggregated(deps, wl, sla, rate)
  local best, cap_of = nil, {}
  for _, d in ipairs(deps) do
    local c = plan.capacity(d, wl, sla)
    cap_of[d.tp] = c.rate
    if c.rate > 0 then
      local g = math.ceil(rate / c.rate - 1e-9) * d.tp
      if best == nil or g < best then best = g end
    end
  end
  return best, cap_of
end
local function best_disaggregated(cs)
  local best
  for _, c in ipairs(cs) do
    if c.why == nil and (best == nil or c.gpus < best.gpus) then best = c end
  end
  return best
end

-- Wins: long prompts, tight TPOT. Llama-3.1-8B on H100 SXM, 8192 + 512
-- tokens, 10 req/s, TTFT p90 3 s, TPOT p90 15 ms. One 8192-token prefill
-- takes t_p = d:time(8192).ttft_ms (about 219 ms, compute-bound), 14 times the
-- TPOT target; a decode step of one request t_d = d:time(8193).tpot_ms. An
-- aggregated replica mixes other requests' prefill chunks into the steps of
-- its running requests, each of which then waits the chunk out: the share of
-- its time spent prefilling, f = r t_p, must stay below 1 - t_d / TPOT for the
-- decode steps to keep their pace, so its rate is at most (1 - t_d / TPOT) /
-- t_p. A prefill instance has no decode to protect: it may prefill nearly all
-- the time, up to 1 / t_p less its TTFT queue; a decode instance never waits
-- for a prefill. So the prefill pool's rate a GPU exceeds that bound, and
-- the pools together need fewer GPUs than the aggregated replicas.
local wl_long, sla_long = {input = 8192, output = 512, requests = 300}, {ttft_ms = 3000, tpot_ms = 15}
local deps = deployments("llama-3.1-8b", "h100-sxm", {1, 2})
local agg_gpus, agg_cap = best_aggregated(deps, wl_long, sla_long, 10)
local cs = disagg.candidates{wl = wl_long, sla = sla_long, rate = 10, deployments = deps}
check.eq(#cs, 4, "prefill tp x decode tp: 2 x 2 candidates")
for _, d in ipairs(deps) do
  local t_p, t_d = d:time(8192, 1).ttft_ms, d:time(8193, 1).tpot_ms
  local bound = (1 - t_d / 15) / (t_p / 1e3)
  assert(agg_cap[d.tp] <= bound, string.format("tp %d: aggregated %.3f req/s within the bound %.3f",
                                               d.tp, agg_cap[d.tp], bound))
  for _, c in ipairs(cs) do
    if c.prefill.tp == d.tp then
      assert(c.prefill.rate_per_replica > bound, string.format(
        "tp %d: a prefill instance (%.3f req/s) beats the aggregated bound %.3f", d.tp,
        c.prefill.rate_per_replica, bound))
    end
  end
end
local win = best_disaggregated(cs)
assert(win and agg_gpus and win.gpus < agg_gpus, string.format(
  "long prompts: disaggregated %s GPUs < aggregated %s", tostring(win and win.gpus), tostring(agg_gpus)))
-- the pools' counts are the rate over their capacities, each rounded up
for _, c in ipairs(cs) do
  check.eq(c.prefill.replicas, math.ceil(10 / c.prefill.rate_per_replica - 1e-9), "prefill replicas")
  check.eq(c.decode.replicas, math.ceil(10 / c.decode.rate_per_replica - 1e-9), "decode replicas")
  check.eq(c.gpus, c.prefill.replicas * c.prefill.tp + c.decode.replicas * c.decode.tp, "GPUs")
  near(c.kv_transfer_ms, disagg.kv_transfer(c.prefill.deployment, c.decode.deployment, 8192).ms, 1e-12,
       "the candidate's transfer is the request's")
  assert(c.ttft_ms <= 3000 and c.tpot_ms <= 15, "the planned rate meets the SLA in each pool")
  assert(c.rate_matching:find("^%d+P%d+D: "), c.rate_matching)
end

-- Loses: short prompts (128 + 128). A 128-token prefill costs about one
-- decode step (both read the weights once: t_p(128) < 2 t_d), so mixing it
-- into the decode steps costs the running requests little, and one GPU
-- serves 10 req/s (1,280 output tokens/s, below its roofline at 64 running)
-- within the SLA. Disaggregated serving needs an instance in each pool: at
-- least two GPUs.
local wl_short = {input = 128, output = 128, requests = 300}
local d1 = deps[1]
assert(d1:time(128, 1).ttft_ms < 2 * d1:time(129, 1).tpot_ms, "a short prefill costs about a decode step")
assert(d1:time(256, 64).tokens_per_s > 10 * 128, "one GPU's roofline serves 1,280 tokens/s")
local agg_short = best_aggregated(deps, wl_short, sla_long, 10)
check.eq(agg_short, 1, "short prompts: one aggregated GPU")
local lose = best_disaggregated(disagg.candidates{wl = wl_short, sla = sla_long, rate = 10, deployments = deps})
assert(lose and lose.gpus >= 2 and lose.gpus > agg_short, "short prompts: disaggregated needs more GPUs")

-- an SLA whose E2E target the TTFT target leaves nothing of
local bad = disagg.candidates{wl = wl_short, sla = {ttft_ms = 100, e2e_ms = 100}, rate = 1, deployments = {d1}}
assert(bad[1].why:find("leaves the decode pool nothing", 1, true), bad[1].why)
-- a GPU without a link: the candidate says why
local l4c = disagg.candidates{wl = wl_short, sla = sla_long, rate = 1, deployments = {l4}}
assert(l4c[1].why:find("no scale-out link", 1, true), l4c[1].why)

-- Throughput alone (no TPOT target, a loose TTFT): a GPU that serves both
-- phases spends 1 / r_prefill + 1 / r_decode seconds a request either way,
-- so splitting them gains nothing but the rounding up of two pools. Test
-- data, not a tuning: vLLM's documentation says "Disaggregated prefill DOES
-- NOT improve throughput" (docs.vllm.ai, features/disagg_prefill).
local loose = {ttft_ms = 20000}
local agg_loose = best_aggregated(deps, wl_long, loose, 10)
local dis_loose = best_disaggregated(disagg.candidates{wl = wl_long, sla = loose, rate = 10, deployments = deps})
assert(dis_loose.gpus >= agg_loose, string.format("no TPOT target: disaggregated %d GPUs >= aggregated %d",
                                                  dis_loose.gpus, agg_loose))

-- kv.plan's aggregated candidates give the deployments and the baseline of
-- the gain: 5 replicas of tp 2 (10 GPUs) against 3 x tp 1 + 2 x tp 2 (7)
local agg_c = {{deployment = deps[1], gpu = "h100-sxm", tp = 1, pp = 1},
               {deployment = deps[2], gpu = "h100-sxm", tp = 2, pp = 1, replicas = 5, gpus = 10}}
local via = best_disaggregated(disagg.candidates{wl = wl_long, sla = sla_long, rate = 10, candidates = agg_c})
check.eq(via.gpus, win.gpus, "the same pools from kv.plan's candidates")
check.eq(via.vs_aggregated, string.format("%d GPUs fewer than the best aggregated (5 x h100-sxm tp 2 pp 1: 10 GPUs)",
                                          10 - win.gpus), "the gain stated")

-- kv.plan's modes: both in one ranking, or the disaggregated alone
local both = kv.plan{model = "llama-3.1-8b", input = 8192, output = 512, rate = 10, ttft_ms = 3000,
                     tpot_ms = 15, gpus = {"h100-sxm"}, tp = {1, 2}, pp = {1}, requests = 300,
                     modes = {"aggregated", "disaggregated"}}
check.eq(both[1].mode, "disaggregated", "long prompts: a disaggregated candidate ranks first")
check.eq(both[1].gpus, win.gpus, "kv.plan ranks the pools disagg.candidates sized")
-- (1 GPU fewer since the TP 2 all-reduces of 8192-token prompts run at NCCL's
-- measured busbw, sim.lua nccl_allreduce: 4 aggregated replicas of tp 2, 8 GPUs)
assert(both[1].vs_aggregated:find(" fewer than the best aggregated", 1, true), both[1].vs_aggregated)
local seen_agg = false
for _, c in ipairs(both) do seen_agg = seen_agg or (c.mode == "aggregated" and c.rank ~= nil) end
assert(seen_agg, "the aggregated candidates are ranked in the same table")
local only = kv.plan{model = "llama-3.1-8b", input = 128, output = 128, rate = 10, tpot_ms = 15,
                     gpus = {"h100-sxm"}, tp = {1}, pp = {1}, requests = 300, modes = {"disaggregated"}}
for _, c in ipairs(only) do check.eq(c.mode, "disaggregated", "modes = {'disaggregated'}: only pools") end
check.eq(only[1].gpus, 2, "one prefill and one decode instance")
check.eq(only[1].vs_aggregated, nil, "no aggregated candidate to compare with")
