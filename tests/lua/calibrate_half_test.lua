-- tests/lua/calibrate_half_test.lua: issue 18's acceptance of `kvplan
-- calibrate`: on a published concurrency or QPS sweep of one deployment,
-- calibrate on alternate points (the 1st, 3rd, ... by load) and predict the
-- others. Three sweeps of the corpus's dev split (tests/validation/throughput):
-- the vLLM --max-concurrency sweep of Mistral-7B on an RTX 4090 (concurrency
-- 4-48), GPUStack's vLLM 0.11.0 Qwen3-8B on an H100 (concurrency 1-8) and
-- TensorRT-LLM 0.14.0's Llama 3.1 8B on an H100 online-serving table (QPS
-- 2, 8, 32, unbounded), and one load sweep that is neither: dstack's vLLM
-- 0.6.3 offline runs of 4-256 prompts at once of Llama 3.1 405B FP8 on 8
-- H100s (TP 8: the link factors are fitted too). Prints the median |error| of each figure on the
-- predicted half. The issue asks for <= 5 % throughput and <= 10 % TTFT/TPOT;
-- the figures are reported, not passed or failed on that: the test is a
-- ratchet that fails when one gets worse than M.recorded by more than 20 %
-- of itself plus 2 points (the step-time model changes under it).
local kv = require "kvplan"
local cal = require "kvplan.calibrate"

local dir = "tests/validation/throughput/"

-- the points of one deployment's sweep in a corpus file, ordered by load
local function sweep(file, keep, order)
  local rows = assert(kv.csv.read(dir .. file))
  local h = {}
  for j, n in ipairs(rows[1]) do h[n] = j end
  local pts = {}
  for i = 2, #rows do
    local r = rows[i]
    local function c(k) local v = h[k] and r[h[k]] or ""; if v == "" then return nil end; return v end
    if keep(c) then
      local out = tonumber(c("output"))
      -- early stops: the mean output from tokens/s over requests/s
      if c("output_stop") == "eos" then
        out = tonumber(c("measured_output_tok_s")) / tonumber(c("measured_requests_s"))
      end
      pts[#pts + 1] = {
        source = c("id"), requests = math.tointeger(tonumber(c("requests"))),
        prompt = math.tointeger(tonumber(c("prompt"))), output = math.floor(out + 0.5),
        rate = c("rate") and tonumber(c("rate")),
        max_concurrency = c("max_concurrency") and math.tointeger(tonumber(c("max_concurrency"))),
        measured = {throughput = tonumber(c("measured_output_tok_s")),
                    ttft = c("measured_ttft_mean_ms") and tonumber(c("measured_ttft_mean_ms")),
                    tpot = c("measured_tpot_mean_ms") and tonumber(c("measured_tpot_mean_ms"))},
      }
    end
  end
  local function load(p)
    if order == "requests" then return p.requests end
    return p.max_concurrency or p.rate or math.huge
  end
  table.sort(pts, function(a, b) return load(a) < load(b) end)
  return pts
end

local cases = {
  {name = "vLLM Mistral-7B RTX 4090, concurrency 4-48", file = "benchmarks.csv",
   keep = function(c) return (c("id") or ""):find("^vllm%-mistral7b%-rtx4090") end,
   deployment = {model = "mistral-7b-v0.3", gpu = "rtx-4090", max_num_seqs = 256,
                 max_num_batched_tokens = 2048}},
  {name = "vLLM 0.11.0 Qwen3-8B H100 (GPUStack), concurrency 1-8", file = "community.csv",
   keep = function(c)
     return c("source_id") == "gpustack-qwen3-8b-h100-latency" and c("engine") == "vllm"
            and c("weights") == "bf16"
   end,
   deployment = {model = "qwen3-8b", gpu = "h100-sxm", engine_version = "0.11"}},
  {name = "TensorRT-LLM 0.14.0 Llama 3.1 8B H100, QPS 2-inf", file = "vendor.csv",
   keep = function(c)
     return c("source_id") == "trtllm-perf-overview-v0.17" and c("model") == "llama-3.1-8b"
            and c("prompt") == "467" and c("output") == "256" and c("split") == "dev"
   end,
   deployment = {model = "llama-3.1-8b", gpu = "h100-sxm", weights = "bf16", kv = "bf16",
                 budget = "trtllm"}},
  {name = "vLLM 0.6.3 Llama 3.1 405B FP8 8x H100 (dstack), 4-256 prompts at once", file = "community.csv",
   keep = function(c)
     return c("source_id") == "dstack-405b-h100-mi300x" and c("gpu") == "h100-sxm"
            and c("prompt") == "128" and c("output") == "2048" and c("split") == "dev"
   end,
   order = "requests",
   deployment = {model = "llama-3.1-405b", gpu = "h100-sxm", tp = 8, weights = "fp8", engine = "vllm",
                 engine_version = "0.6.3", usage = "offline"}},
}

-- the medians when this test was written (one line a case: throughput, ttft, tpot)
-- (re-baselined when kv.simulate's TTFT and E2E took the client's time a
-- request, sim.lua request_ms: the GPUStack sweep's throughput went from 0.018
-- to 0.066 and the RTX 4090's TTFT from 0.984 to 1.063, the others improved)
-- (re-baselined when the API server's serial work became a queue, sim.lua
-- api_ms, fitted: the RTX 4090's TTFT went from 1.053 to 0.480 and the
-- GPUStack sweep's from 0.431 to 0.015; before it, on the same main, the
-- figures were 0.074/1.053, 0.037/0.431/0.023, 0.052/0.060 and 0.185)
local recorded = {
  {throughput = 0.077, ttft = 0.480},
  {throughput = 0.048, ttft = 0.015, tpot = 0.021},
  {throughput = 0.043, ttft = 0.072},
  {throughput = 0.185},
}

for ci, case in ipairs(cases) do
  local pts = sweep(case.file, case.keep, case.order)
  assert(#pts >= 4, case.name .. ": " .. #pts .. " points")
  local train, test = {}, {}
  for i, p in ipairs(pts) do if i % 2 == 1 then train[#train + 1] = p else test[#test + 1] = p end end
  local c = kv.calibrate{deployment = case.deployment, points = train}
  local v = {}
  for name, e in pairs(c.factors) do if e.fitted then v[name] = e.value end end
  local errs = {throughput = {}, ttft = {}, tpot = {}}
  for _, p in ipairs(test) do
    local pr = cal.predict(case.deployment, p, v)
    for f, list in pairs(errs) do
      if p.measured[f] then list[#list + 1] = math.abs(pr[f] / p.measured[f] - 1) end
    end
  end
  local line = {}
  for _, f in ipairs(cal.figures) do
    local m = cal.median(errs[f])
    line[#line + 1] = string.format("%s %s", f, m and string.format("%.1f %%", 100 * m) or "-")
    local rec = recorded[ci][f]
    if m ~= nil then
      assert(rec ~= nil, case.name .. ": no recorded " .. f)
      assert(m <= rec * 1.2 + 0.02, string.format("%s: %s median |error| %.3f, recorded %.3f",
                                                  case.name, f, m, rec))
    end
  end
  local fitted = {}
  for _, f in ipairs(c.fitted) do fitted[#fitted + 1] = string.format("%s %.4g", f.name, c.factors[f.name].value) end
  print(string.format("%s: calibrated on %d, predicted %d: median |error| %s (fitted: %s)", case.name,
                      #train, #test, table.concat(line, ", "), table.concat(fitted, ", ")))
end
