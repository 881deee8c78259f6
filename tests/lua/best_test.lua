-- tests/lua/best_test.lua: kv.best's candidates (stdlib/kvplan/best.lua).
local kv = require "kvplan"
local check = require "check"

-- a tp past 2^62 with the default pipeline depths: tp x pp wrapped in the
-- filter that keeps tp x pp <= max_gpus, so 'kvplan best tp=1e18' ranked
-- "at -446744073709551616 GPUs" candidates (and requests_per_gpu nan at
-- tp = 2^62); none is within max_gpus
for _, tp in ipairs{math.maxinteger, 10^18 // 1, 1 << 62} do
  local all = require("kvplan.best").candidates{model = "llama-3.1-8b", context = 4096, concurrency = 4, gpus = {"l4"},
                                 tp = {tp, 1}}
  for _, c in ipairs(all) do
    assert(c.gpus >= 1 and c.gpus <= 64, string.format("tp %d: a candidate of %d GPUs", tp, c.gpus))
  end
  check.eq(#all > 0, true, "tp 1 stays")
end
print("best: ok")
