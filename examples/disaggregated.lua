-- examples/disaggregated.lua: when does disaggregated prefill/decode (xPyD)
-- need fewer GPUs than aggregated serving? Llama-3.1-8B on H100 SXM at
-- 10 requests a second, TTFT p90 3 s and TPOT p90 15 ms, for long prompts
-- (8192 + 512 tokens) and short ones (128 + 128).
--
-- Shows: the two pools sized apart (kvplan.disagg, docs/time.md
-- "Disaggregated prefill and decode") beside the aggregated replicas, in
-- one table. Aggregated: one replica's capacity under the SLA
-- (plan.capacity, by simulation), replicas = ceil(rate / capacity). Disaggregated:
-- each prefill tp x decode tp pair, the prefill pool's capacity under the
-- TTFT target with the KV transfer inside it (kv.simulate phase = "prefill"),
-- the decode pool's under the TPOT target (phase = "decode"), x and y
-- instances of each; the KV of one request goes over the GPU's 400 Gb/s
-- ConnectX-7 (DGX H100, one a GPU), kv_transfer_ms. vs_best_aggregated is
-- each row's GPUs less the fewest aggregated GPUs of its workload: negative
-- where disaggregation saves GPUs. A disaggregated row's binding is its
-- prefill pool's / its decode pool's; its capacities are in rate_matching. With long prompts a prefill (219 ms) is 14
-- TPOT targets long and stalls every running request of an aggregated
-- replica; a decode pool never waits for one, so 3 prefill instances of tp 1
-- and 2 decode instances of tp 2 (7 GPUs) serve what 10 aggregated GPUs (5 x
-- tp 2) do. With short prompts one aggregated GPU serves the rate, and two
-- pools need two.
--
-- Run: build/kvplan examples/disaggregated.lua

local kv = require "kvplan"
local plan = require "kvplan.plan"
local disagg = require "kvplan.disagg"

local rate, sla = 10, {ttft_ms = 3000, tpot_ms = 15}
local workloads = {
  {name = "long 8192+512", input = 8192, output = 512},
  {name = "short 128+128", input = 128, output = 128},
}
local deployments = {}
for _, tp in ipairs{1, 2} do
  deployments[#deployments + 1] = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", tp = tp}
end

local r = kv.report{columns = {
  "workload", "mode", "prefill", "decode", "gpus", "vs_best_aggregated",
  {"rate_per_replica", precision = 3}, "binding", {"ttft_ms", precision = 1},
  {"tpot_ms", precision = 2}, {"kv_transfer_ms", precision = 2}, "rate_matching"}}

for _, w in ipairs(workloads) do
  local wl = {input = w.input, output = w.output, requests = 300}
  local rows, best = {}, nil
  for _, d in ipairs(deployments) do
    local c = plan.capacity(d, wl, sla)
    local n = math.ceil(rate / c.rate - 1e-9)
    local at = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", tp = d.tp, requests = 300,
                           prompt = w.input, output = w.output, rate = rate / n, seed = 1}
    rows[#rows + 1] = {workload = w.name, mode = "aggregated", prefill = string.format("%d x tp %d", n, d.tp),
                       decode = "", gpus = n * d.tp, rate_per_replica = c.rate, binding = c.binding,
                       ttft_ms = at.ttft_ms.p90, tpot_ms = at.tpot_ms.p90, kv_transfer_ms = 0,
                       rate_matching = ""}
    if best == nil or n * d.tp < best then best = n * d.tp end
  end
  for _, c in ipairs(disagg.candidates{wl = wl, sla = sla, rate = rate, deployments = deployments}) do
    rows[#rows + 1] = {workload = w.name, mode = "disaggregated",
                       prefill = string.format("%d x tp %d", c.prefill.replicas, c.prefill.tp),
                       decode = string.format("%d x tp %d", c.decode.replicas, c.decode.tp),
                       gpus = c.gpus, rate_per_replica = "", binding = c.prefill.binding .. " / " .. c.decode.binding,
                       ttft_ms = c.ttft_ms, tpot_ms = c.tpot_ms, kv_transfer_ms = c.kv_transfer_ms,
                       rate_matching = c.rate_matching}
  end
  for _, row in ipairs(rows) do
    row.vs_best_aggregated = row.gpus - best
    r:row(row)
  end
end
r:close()
