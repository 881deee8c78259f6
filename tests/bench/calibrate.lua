-- tests/bench/calibrate.lua: `kvplan calibrate`'s speed (make bench): a
-- calibration of `files` result files (default 20) of one deployment,
-- llama-3.1-8b on one H100 with vLLM's defaults: vllm bench serve JSON of
-- `requests` requests each (default 1000, vllm bench serve's --num-prompts
-- default) of 1000 prompt and 200 output tokens, at client concurrencies
-- 1, 2, 4, ... and Poisson rates 1, 2, 4, ... requests a second (half each).
-- Their figures are kvplan's own simulations at known factors (memory 0.6,
-- compute 0.45), written in dir (default /tmp); the fit must recover them
-- within 10 % (a check that the bench fits what it times; the prior pulls
-- toward the defaults 0.69 and 0.7). Prints the CPU seconds of kv.calibrate beside its baseline in the
-- same run: the files' simulations once (one evaluation of the sum of
-- squares, the floor of any fit).
local kv = require "kvplan"
local cal = require "kvplan.calibrate"
local args = kv.options(..., {files = 20, requests = 1000, dir = "/tmp"})
local dep = {model = "llama-3.1-8b", gpu = "h100-sxm"}
local truth = {memory = 0.6, compute = 0.45}
local paths, points = {}, {}
for i = 1, args.files do
  local half = (i + 1) // 2
  local pt = {requests = args.requests, prompt = 1000, output = 200,
              max_concurrency = i % 2 == 1 and (1 << (half - 1)) or nil,
              rate = i % 2 == 0 and (1 << (half - 1)) + 0.0 or nil}
  local r = cal.predict(dep, pt, truth)
  local path = string.format("%s/kvplan-bench-calibrate-%02d.json", args.dir, i)
  local f = assert(io.open(path, "w"))
  f:write(cal.json_value{
    num_prompts = pt.requests, completed = pt.requests, failed = 0,
    request_rate = pt.rate or "inf", max_concurrency = pt.max_concurrency,
    total_input_tokens = pt.requests * pt.prompt, total_output_tokens = pt.requests * pt.output,
    output_throughput = r.throughput, mean_ttft_ms = r.ttft, mean_tpot_ms = r.tpot,
  }, "\n")
  f:close()
  paths[i], points[i] = path, pt
end
local t0 = os.clock()
for _, pt in ipairs(points) do cal.predict(dep, pt, truth) end
local once = os.clock() - t0
t0 = os.clock()
local c = kv.calibrate{deployment = dep, results = paths}
local t = os.clock() - t0
for name, x in pairs(truth) do
  local v = c.factors[name].value
  assert(math.abs(v - x) <= 0.1 * x, string.format("bench: %s fitted %.4g, truth %.4g", name, v, x))
end
for _, p in ipairs(paths) do os.remove(p) end
print(string.format("%d result files of %d requests: %.3f s CPU, %d simulations, %d of them run "
                    .. "(the %d files simulated once: %.3f s); factors recovered within 10 %%",
                    args.files, args.requests, t, c.simulations, c.runs, args.files, once))
