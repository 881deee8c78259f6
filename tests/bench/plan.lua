-- tests/bench/plan.lua: kv.plan's speed (make bench): an SLA search over the
-- whole GPU catalog for one model and workload, llama-3.1-8b, 1000 prompt
-- and 200 output tokens at 10 requests a second with a p90 TPOT of 50 ms
-- (every GPU x every tp the heads allow x pp up to 64 GPUs, vLLM's
-- defaults). Prints the CPU seconds of kv.plan and the simulations it ran,
-- beside its baseline in the same run: the search without its bounds,
-- every candidate that starts simulated (the search's own count of them
-- times the simulations of one capacity search, 7, times the CPU seconds of
-- one simulation of the workload measured here), an estimate: run whole it
-- would take minutes.
local kv = require "kvplan"
local plan = require "kvplan.plan"
local args = kv.options(..., {rate = 10.0, tpot_ms = 50.0})
local spec = {model = "llama-3.1-8b", input = 1000, output = 200, rate = args.rate,
              tpot_ms = args.tpot_ms}
local t0 = os.clock()
local ranked, info = kv.plan(spec)
local t = os.clock() - t0
local starts = 0
for _, c in ipairs(ranked) do
  if c.rank or not c.why:find("^cannot start") then starts = starts + 1 end
end
-- one simulation of the workload at the winner's planned rate, timed alone
local w = ranked[1]
local o = {}
for k, v in pairs(w.deployment.options) do o[k] = v end
o.requests, o.prompt, o.output, o.rate, o.seed = plan.requests, 1000, 200, args.rate / w.replicas, 1
local n = 20
t0 = os.clock()
for _ = 1, n do kv.simulate(o) end
local one = (os.clock() - t0) / n
print(string.format("%d GPUs, %d candidates, %d start: %.3f s CPU, %d simulations of %d requests "
                    .. "(%d deployments simulated); without the bounds %d x 7 simulations of %.1f ms: "
                    .. "%.0f s (estimated); rank 1: %s tp %d x pp %d, %d replica(s)", #kv.gpus.all(),
                    info.candidates, starts, t, info.sims, plan.requests, info.simulated, starts,
                    one * 1e3, starts * 7 * one, w.gpu, w.tp, w.pp, w.replicas))
