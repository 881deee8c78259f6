-- tests/bench/simulate.lua: the serving simulator's speed (make bench).
-- 100,000 chat-like requests (prompts lognormal around 1K tokens, outputs
-- around 250), all queued at once, on llama-3.1-8b and one H100 with vLLM's
-- default limits; prints the requests, the steps simulated and the CPU
-- seconds of kv.simulate (one thread). Arguments: requests=N.
local kv = require "kvplan"
local args = kv.options(..., {requests = 100000})
local w = kv.workload
local t0 = os.clock()
local r = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = args.requests, seed = 1,
                      prompt = w.lognormal{median = 1000, sigma = 0.5, max = 8192},
                      output = w.lognormal{median = 250, sigma = 0.5, max = 4096}}
local t = os.clock() - t0
print(string.format("%d requests, %d steps, %d preemptions: %.3f s CPU", r.requests, r.steps,
                    r.num_preemptions, t))
