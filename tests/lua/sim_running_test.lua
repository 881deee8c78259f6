-- tests/lua/sim_running_test.lua: kv.simulate's running_peak, the admitted
-- batch (engine/lua/sim_lua.c summary): the most requests running in one
-- step, the timeline's running column at its largest; capped by max_num_seqs
-- and by the KV cache.
local kv = require "kvplan"
local check = require "check"
local w = kv.workload

-- 8 requests at once, room for all: 8 run together; max_num_seqs 3 admits 3
local base = {model = "llama-3.1-8b", gpu = "h100-sxm", max_model_len = 4096, engine = "vllm",
              requests = 8, prompt = w.fixed(100), output = w.fixed(20)}
check.eq(kv.simulate(base).running_peak, 8, "all 8 admitted")
local o = {}
for k, v in pairs(base) do o[k] = v end
o.max_num_seqs = 3
local r = kv.simulate(o)
check.eq(r.running_peak, 3, "max_num_seqs 3")

-- the timeline's running column at its largest
local path = os.tmpname()
r:timeline(path)
local most = 0
local f = assert(io.open(path))
f:read("l")
for line in f:lines() do
  local n = tonumber(line:match("^[^,]*,[^,]*,[^,]*,([^,]*),"))
  if n > most then most = n end
end
f:close()
os.remove(path)
check.eq(r.running_peak, most, "the timeline's running at its largest")

-- the KV cache: 32K requests on one H100 with fp8 KV hold 28 whole (kvplan
-- capacity: 56.34 GiB of KV under the newest vLLM modelled, 2 GiB of fp8 KV
-- a request; 25 under 0.11's 51.33); all at once, the scheduler admits at most one more, partly
-- prefilled, and preempts
local d = {model = "llama-3.1-8b", gpu = "h100-sxm", kv = "fp8", max_model_len = 32768, engine = "vllm",
           requests = 60, prompt = w.fixed(32512), output = w.fixed(256)}
local cap = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", kv = "fp8", max_model_len = 32768}
              :ledger():max_concurrency(32768)
check.eq(cap, 28, "capacity")
local s = kv.simulate(d)
assert(s.running_peak >= cap and s.running_peak <= cap + 1,
       string.format("running_peak %d against capacity %d", s.running_peak, cap))
print("sim_running_test: ok")
