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
