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

-- data_parallel_size engines in the base (issue: best and pareto counted
-- tp x pp GPUs and one engine's requests for a deployment of dp engines):
-- dp engines of tp x pp GPUs each hold their share of the requests, so the
-- candidate counts tp x pp x dp GPUs and dp x one engine's concurrency, is
-- sized for ceil(concurrency / dp) a engine and decodes at d:time's rate at
-- that share (its tokens_per_s counts every rank)
do
  local function one(base, extra)
    local spec = {model = "llama-3.1-8b", context = 4096, concurrency = 200, gpus = {"h100-sxm"},
                  tp = {1, 2}, pp = {1}, base = base, tokens_per_s = 1}
    for k, v in pairs(extra or {}) do spec[k] = v end
    local by = {}
    for _, c in ipairs((kv.best(spec))) do by[c.tp] = c end
    return by
  end
  local plain, dp2 = one({}), one({data_parallel_size = 2})
  for _, tp in ipairs{1, 2} do
    local a, b = plain[tp], dp2[tp]
    check.eq(b.gpus, 2 * a.gpus, "tp " .. tp .. ": dp 2 engines are twice the GPUs")
    check.eq(b.max_concurrency, 2 * a.max_concurrency, "tp " .. tp .. ": and twice the requests")
    check.eq(b.per_gpu, a.per_gpu, "tp " .. tp .. ": requests per GPU unchanged")
    local d = b.deployment
    check.eq(b.tokens_per_s, d:time(4096, 100).tokens_per_s, "tp " .. tp .. ": 100 requests a rank")
  end
  -- before, tp 1 x dp 2 counted 1 GPU and 102 requests
  check.eq(dp2[1].gpus, 2, "tp 1 x dp 2 is 2 GPUs")
  -- SGLang's attention DP ranks share the tp GPUs; the default tp sizes are
  -- those dp_size divides (tp 1 raised "needs data_parallel_size to divide
  -- tp ... tp 1" and ended the search)
  local all = kv.best{model = "qwen3-30b-a3b", context = 4096, concurrency = 64, gpus = {"h100-sxm"},
                      max_gpus = 8, base = {engine = "sglang", data_parallel_size = 2,
                                            enable_dp_attention = true}}
  check.eq(#all > 0, true, "attention DP: candidates")
  for _, c in ipairs(all) do
    check.eq(c.tp % 2, 0, "attention DP 2: tp " .. c.tp .. " divisible")
    check.eq(c.gpus, c.tp * c.pp, "attention DP: the ranks inside tp x pp GPUs")
  end
end
print("best: ok")
