-- stdlib/kvplan/factors.lua: the free factors of the step-time model,
-- declared once: what `kvplan calibrate` fits, what a profile file holds
-- and what the ranges of d:time() (tokens_per_s_lo/hi, ...) rest on.
-- Stdlib layer: data and the small functions that read it; the step time
-- itself is the core's (engine/core/roofline.c), its defaults sim.lua's.
--
-- Each factor: name (a profile's key); option: where it goes in kv.deploy's
-- options ({"efficiency", "memory"}: efficiency = {memory = x}); rate: the
-- key of d:perf() that holds the value in use (the default when no option
-- or profile sets it); curve: the key of d:perf() of a curve by M the factor
-- scales too (M.perf_at); scales: the key of a list of rates it scales by the
-- same ratio (M.perf_at); lo, hi: the box calibrate fits in; unit; slow: which
-- way makes steps slower ("lo": a lower value is slower, an efficiency;
-- "hi": a higher one, a cost); applies(d): whether the deployment's step
-- time reads it at all (true, or false and why not; a factor that does not
-- apply is never fitted);
-- spread: how far the default may be off, for the ranges of a deployment
-- without a profile: {"ratio", a, b} (default x a .. default x b),
-- {"add", a, b} (default + a .. default + b) or {"abs", a, b} (a .. b),
-- with its source (or said to be an assumption); meaning. A new factor of the step-time model is one
-- more row here (and its key in sim.lua's perf or efficiency options).

local util = require "kvplan.util"

local M = {}

-- applies(d): true, or false and why not
local function parallel(d)
  if (d.tp or 1) * (d.pp or 1) > 1 then return true end
  return false, "tp 1 x pp 1: no collectives"
end
local function always() return true end
local function moe(d)
  if (d.model.experts or 0) > 0 then return true end
  return false, "a dense model: no routed experts"
end
local function served(d)
  if (d.options or {}).usage ~= "offline" then return true end
  return false, "usage offline: requests reach the engine without an API server"
end
local function overlaps(d)
  if not require("kvplan.sim").host_waits(d) then return true end
  return false, "launch_us is this engine's fixed host time a step (the same constant)"
end

-- DeepGEMM's published FP8 GEMM table (deepseek-ai/DeepGEMM README.md,
-- "Performance", first release, February 2025; the table sim.lua's H100
-- factors come from): its 12 decode-sized dense rows reach 1509-2668 GB/s
-- around their median 2298.5, its 6 prefill-sized rows 590-1358 TFLOPS
-- around their median 1041.5. The spread of one kernel library over the
-- shapes of one model on one GPU: what a single factor per GPU leaves open.
local deepgemm_memory = {"ratio", 1509 / 2298.5, 2668 / 2298.5,
                         source = "DeepGEMM README.md, Performance (Feb 2025): decode rows "
                           .. "1509-2668 GB/s around their median 2298.5"}
local deepgemm_compute = {"ratio", 590 / 1041.5, 1358 / 1041.5,
                          source = "DeepGEMM README.md, Performance (Feb 2025): prefill rows "
                            .. "590-1358 TFLOPS around their median 1041.5"}

M.list = {
  {name = "memory", option = {"efficiency", "memory"}, rate = "mem_eff", curve = "gemm_memory",
   lo = 0.05, hi = 1, unit = "fraction", slow = "lo", applies = always, spread = deepgemm_memory,
   meaning = "fraction of the HBM bandwidth a step's reads reach"},
  {name = "compute", option = {"efficiency", "compute"}, rate = "flop_eff", curve = "gemm_compute",
   also = "attn16_eff",
   lo = 0.05, hi = 1, unit = "fraction", slow = "lo", applies = always, spread = deepgemm_compute,
   meaning = "fraction of the dense tensor rate a step's GEMMs reach"},
  {name = "experts", option = {"efficiency", "experts"}, rate = "expert_eff", lo = 0.05, hi = 1,
   unit = "fraction", slow = "lo", applies = moe,
   -- without a given factor the step time reads sim.lua's benchmark curve
   -- (expert_eff 0): its value at one token per expert, the decode of a
   -- single sequence, stands for it where one number is needed (the fit's start)
   default = function(d)
     local rows = require("kvplan.sim").expert_curve(d)
     return rows and rows[1][2] or nil
   end,
   spread = {"abs", 0.032, 0.883,
             source = "the least and greatest fraction of sim.lua's expert_gemm curves: "
               .. "0.032 (B200, DeepSeek-V3 NVFP4 TP 8, TensorRT-LLM's CUTLASS MoE, one token; "
               .. "TensorRT-LLM tech blog 24, 'MoE as Dense GEMM'), 0.883 (H100, Mixtral BF16 "
               .. "TP 2, 16 tokens; vllm-project/vllm pull request 24700)"},
   meaning = "fraction of the routed experts' roofline (bytes at the HBM bandwidth, FLOPs at "
     .. "the dense peak) their grouped GEMMs reach, at every tokens per expert (given, it "
     .. "replaces the benchmark curve)"},
  {name = "link", option = {"efficiency", "link"}, rate = "link_eff", lo = 0.05, hi = 1,
   unit = "fraction", slow = "lo", applies = parallel, scales = "nccl_busbw",
   spread = {"ratio", 1509 / 2298.5, 2668 / 2298.5,
             source = "an assumption: the memory factor's spread applied to the interconnect"},
   meaning = "fraction of the interconnect's bandwidth the all-reduces reach"},
  {name = "launch_us", option = {"perf", "launch_us"}, rate = "launch_us", lo = 0, hi = 10,
   unit = "us", slow = "hi", applies = always,
   spread = {"ratio", 1, 0.98 / 0.91,
             source = "cudaGraphLaunch a kernel: vLLM's graph 0.91 us, SGLang's 0.98 us "
               .. "(sgl-project/sglang issue 29960)"},
   meaning = "host time a kernel of the step (added to the step by engines that wait for the "
     .. "host, hidden up to the GPU's time by those that overlap)"},
  {name = "seq_host_us", option = {"perf", "seq_host_us"}, rate = "seq_host_us", lo = 0, hi = 200,
   unit = "us", slow = "hi", applies = always,
   spread = {"ratio", 0.14e3 / 128 / 1.1, 0.29e3 / 256 / 1.1,
             source = "vLLM V1's update_from_output, 0.14 ms at 128 and 0.29 ms at 256 "
               .. "running requests (vllm-project/vllm pull request 46112)"},
   meaning = "host time a scheduled request adds to a step (hidden up to the GPU's time by "
     .. "engines that overlap)"},
  {name = "step_overhead_ms", option = {"perf", "step_overhead_ms"}, rate = "step_overhead_ms",
   lo = 0, hi = 50, unit = "ms", slow = "hi", applies = overlaps,
   spread = {"add", 0, 0,
             source = "none: an engine that overlaps its host work has no known fixed time a step"},
   meaning = "fixed time added to every step (where launch_us does not apply: with it, the two "
     .. "are the same per-step constant)"},
  {name = "request_ms", option = {"perf", "request_ms"}, rate = "request_ms", lo = 0, hi = 1000,
   unit = "ms", slow = "hi", applies = always,
   spread = {"ratio", 8.4 / 11.0, 12.2 / 11.0,
             source = "the client's TTFT less vLLM's own, +8.4 to +12.2 ms around the median 11.0 "
               .. "(vllm-project/vllm pull request 54628)"},
   meaning = "a request's time outside the engine's steps as its client measures it (HTTP, "
     .. "tokenization, the first detokenization): in every TTFT and E2E, in no step"},
  {name = "api_ms", option = {"perf", "api_ms"}, rate = "api_ms", lo = 0, hi = 50,
   unit = "ms", slow = "hi", applies = served,
   spread = {"add", 0, 0,
             source = "an assumption: no source gives the API server's serial work a request "
               .. "apart from its stream (sim.lua M.api_ms), so the default 0 is both ends; "
               .. "the box's 50 ms is above the 13.1 and 15.7 ms a request that vLLM pull "
               .. "requests 17546 and 12287 bound it by"},
   meaning = "the API server's serial work a request, one FIFO server in front of the "
     .. "engine's waiting queue: its wait grows with load, in every TTFT and E2E"},
  {name = "link_latency_us", option = {"perf", "link_latency_us"}, rate = "link_latency_us",
   lo = 1, hi = 100, unit = "us", slow = "hi", applies = parallel,
   spread = {"ratio", 8.5 / 9, 11.8 / 9,
             source = "vLLM's custom all-reduce, 8.5-11.8 us at 512 B-32 KB on H100 "
               .. "(sgl-project/sglang pull request 2904)"},
   meaning = "fixed time of one all-reduce or pipeline hand-off"},
}

M.by_name = {}
for _, f in ipairs(M.list) do M.by_name[f.name] = f end

--- The factor named `name`, or an error naming it and the known ones
--- (`what` says where the name came from).
function M.get(name, what)
  local f = M.by_name[name]
  if f == nil then
    local names = {}
    for _, g in ipairs(M.list) do names[#names + 1] = g.name end
    util.raise("%s: unknown factor '%s' (known: %s)%s", what, util.escape(util.shown(name)),
               table.concat(names, ", "), util.suggest(util.shown(name), names))
  end
  return f
end

--- The value of factor f in deployment d as its step times use it.
function M.value(f, d)
  local v = d:perf()[f.rate]
  if v == 0 and f.default then v = f.default(d) or v end
  return v
end

--- Options of kv.deploy with factor values set: opts' own efficiency and
--- perf tables copied, each value of `values` (name -> number) put at its
--- factor's option. Returns a new table; opts is not changed.
function M.apply(opts, values)
  local out = util.copy(opts)
  for name, x in util.sorted_pairs(values) do
    local f = M.get(name, "factors")
    local key, sub = f.option[1], f.option[2]
    local t = util.copy(out[key] or {})
    t[sub] = x
    out[key] = t
  end
  return out
end

--- The default spread of factor f around value x: lo, hi (within f's box).
function M.spread(f, x)
  local s = f.spread
  local a, b
  if s[1] == "ratio" then a, b = x * s[2], x * s[3]
  elseif s[1] == "abs" then a, b = math.min(s[2], x), math.max(s[3], x)
  else a, b = x + s[2], x + s[3] end
  return math.max(f.lo, math.min(a, b)), math.min(f.hi, math.max(a, b))
end

--- The factors' values of d at the slow and the fast ends of their
--- uncertainty: two tables name -> value. With a profile (d.profile), each
--- fitted factor's interval from the profile; every other factor the step
--- time reads, its default spread (M.spread); all: every factor, whether
--- or not d's step time reads it (a sweep's C axes may change tp, pp).
function M.ends(d, all)
  local slow, fast = {}, {}
  local prof = d.profile and d.profile.factors or {}
  local perf = d:perf()
  for _, f in ipairs(M.list) do
    local x = perf[f.rate]
    -- nil: a rate d's step time has not (a model whose weights kvplan
    -- cannot split by class has no step facts, so no kernels for
    -- launch_us: d:time was a Lua error here for such a CSV model)
    if x ~= nil and (all or f.applies(d)) then
      if x == 0 and f.default then x = f.default(d) or x end
      local p = prof[f.name]
      local lo, hi
      if p ~= nil and p.lo ~= nil and p.hi ~= nil and x == p.value then
        lo, hi = p.lo, p.hi
      else
        lo, hi = M.spread(f, x)
      end
      if f.slow == "lo" then slow[f.name], fast[f.name] = lo, hi
      else slow[f.name], fast[f.name] = hi, lo end
    end
  end
  return slow, fast
end

--- d's rates (d:perf()) with the factors' values `values` (name -> number)
--- in place of its own: the perf table of the core's step time. A factor
--- with a curve (the dense GEMMs' efficiency by M, sim.gemm_curves) moves
--- the curve's points by the same ratio as its flat value (at most 1).
function M.perf_at(d, values)
  local p = {}
  local own = d:perf()
  for k, v in pairs(own) do p[k] = v end
  for name, x in util.sorted_pairs(values) do
    local f = M.by_name[name]
    p[f.rate] = x
    local c = f.curve and own[f.curve]
    if c ~= nil and own[f.rate] > 0 then
      local r, moved = x / own[f.rate], {}
      for i, pt in ipairs(c) do moved[i] = {pt[1], math.min(1, pt[2] * r)} end
      p[f.curve] = moved
    end
    -- a list of rates that moves by the same ratio (the link factor: NCCL's
    -- bus bandwidth by message size, sim.nccl_allreduce; GB/s, not capped)
    local l = f.scales and own[f.scales]
    if l ~= nil and own[f.rate] > 0 then
      local moved = {}
      for i, v in ipairs(l) do moved[i] = v * x / own[f.rate] end
      p[f.scales] = moved
    end
    -- a rate that moves with this one (attention's 16-bit compute factor)
    local a = f.also and own[f.also]
    if a ~= nil and own[f.rate] > 0 then p[f.also] = math.min(1, a * x / own[f.rate]) end
  end
  return p
end

return M
