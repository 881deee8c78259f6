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
-- scales too (M.perf_at); lo, hi: the box calibrate fits in; unit; slow: which
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

-- The efficiency factors (memory, compute, experts) are multipliers of the
-- published curves (sim.lua M.scaled: perf = {memory_scale =, ...}), not
-- fractions in their place: 1 is the curves as published, and a fit moves
-- each curve by one ratio, keeping its shape over M (the GEMM curves by
-- tokens, attention's by query tokens, the experts' by tokens per expert).
-- scales: the rate of d:perf() (without multipliers) a multiplier's box and
-- spread are expressed against, its reference fraction ref: the box is
-- lo / ref .. hi / ref (lo, hi: the fraction's bounds, as before the
-- change), an "abs" spread a / ref .. b / ref, a "ratio" spread unchanged;
-- flat: the key of efficiency = {...} that replaces the curve by one
-- fraction (a factor given there is held, never fitted nor scaled by a
-- profile).
M.list = {
  {name = "memory", option = {"perf", "memory_scale"}, rate = "memory_scale", scales = "mem_eff",
   flat = "memory", lo = 0.05, hi = 1, unit = "multiplier", slow = "lo", applies = always,
   spread = deepgemm_memory,
   meaning = "multiplier of the fraction of the HBM bandwidth a step's reads reach (the flat "
     .. "factor, the dense GEMMs' published curve by M and the attention kernel's decode rate; "
     .. "bounds: the fraction in 0.05 .. 1 at the flat factor)"},
  {name = "compute", option = {"perf", "compute_scale"}, rate = "compute_scale", scales = "flop_eff",
   flat = "compute", lo = 0.05, hi = 1, unit = "multiplier", slow = "lo", applies = always,
   spread = deepgemm_compute,
   meaning = "multiplier of the fraction of the dense tensor rate a step's GEMMs and attention "
     .. "reach (the flat factor, the dense GEMMs' published curve by M, the attention backend's "
     .. "measured fractions by query tokens; bounds: the fraction in 0.05 .. 1 at the flat factor)"},
  {name = "experts", option = {"perf", "experts_scale"}, rate = "experts_scale", flat = "experts",
   -- the reference: the benchmark curve's value at one token per expert,
   -- the decode of a single sequence (or the flat factor given)
   scales = function(p)
     if (p.expert_eff or 0) > 0 then return p.expert_eff end
     return p.expert_frac and p.expert_frac[1] or nil
   end,
   lo = 0.05, hi = 1, unit = "multiplier", slow = "lo", applies = moe,
   spread = {"abs", 0.105, 0.883,
             source = "the least and greatest fraction of sim.lua's expert_gemm curves: "
               .. "0.105 (B200, DeepSeek-R1 TP 8 FP8, one token; sgl-project/sglang pull request "
               .. "11816), 0.883 (H100, Mixtral BF16 TP 2, 16 tokens; vllm-project/vllm pull "
               .. "request 24700)"},
   meaning = "multiplier of the fraction of the routed experts' roofline (bytes at the HBM "
     .. "bandwidth, FLOPs at the dense peak) their grouped GEMMs reach: the benchmark curve by "
     .. "tokens per expert (bounds: the fraction in 0.05 .. 1 at one token per expert)"},
  {name = "link", option = {"efficiency", "link"}, rate = "link_eff", lo = 0.05, hi = 1,
   unit = "fraction", slow = "lo", applies = parallel,
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
    util.raise("%s: unknown factor '%s' (known: %s)%s", what, util.escape(tostring(name)),
               table.concat(names, ", "), util.suggest(tostring(name), names))
  end
  return f
end

--- The value of factor f in deployment d as its step times use it (a
--- multiplier's: 1 unless an option or a profile sets it).
function M.value(f, d)
  return d:perf()[f.rate]
end

--- The rates of d with every multiplier at 1 (the published curves): the
--- table M.box reads a multiplier's reference from.
function M.base(d)
  return require("kvplan.sim").perf_scaled(d, {memory_scale = 1, compute_scale = 1, experts_scale = 1})
end

--- Factor f's box in its own unit for deployment d: lo, hi, and a
--- multiplier's reference fraction ref (M.list: scales). base: M.base(d),
--- when the caller has it. A multiplier with no reference (a dense model's
--- experts) keeps lo .. hi.
function M.box(f, d, base)
  if f.scales == nil then return f.lo, f.hi end
  base = base or M.base(d)
  local ref
  if type(f.scales) == "function" then ref = f.scales(base) else ref = base[f.scales] end
  if not (ref and ref > 0) then return f.lo, f.hi end
  return f.lo / ref, f.hi / ref, ref
end

--- Options of kv.deploy with factor values set: opts' own efficiency and
--- perf tables copied, each value of `values` (name -> number) put at its
--- factor's option. Returns a new table; opts is not changed.
function M.apply(opts, values)
  local out = {}
  for k, v in pairs(opts) do out[k] = v end
  for name, x in pairs(values) do
    local f = M.get(name, "factors")
    local key, sub = f.option[1], f.option[2]
    local t = {}
    for k, v in pairs(out[key] or {}) do t[k] = v end
    t[sub] = x
    out[key] = t
  end
  return out
end

--- Whether opts give factor f themselves (its option, or for a multiplier
--- the flat efficiency that replaces its curve): held, not fitted, and a
--- profile's value does not apply.
function M.given(f, opts)
  local own = opts[f.option[1]]
  if type(own) == "table" and own[f.option[2]] ~= nil then return true end
  return f.flat ~= nil and type(opts.efficiency) == "table" and opts.efficiency[f.flat] ~= nil
end

--- The default spread of factor f around value x: lo, hi (within f's box
--- lo, hi; ref: a multiplier's reference fraction, which an "abs" spread's
--- fractions are divided by).
function M.spread(f, x, lo, hi, ref)
  local s = f.spread
  lo, hi = lo or f.lo, hi or f.hi
  local a, b
  if s[1] == "ratio" then a, b = x * s[2], x * s[3]
  elseif s[1] == "abs" then
    local r = ref or 1
    a, b = math.min(s[2] / r, x), math.max(s[3] / r, x)
  else a, b = x + s[2], x + s[3] end
  return math.max(lo, math.min(a, b)), math.min(hi, math.max(a, b))
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
  local base
  for _, f in ipairs(M.list) do
    if all or f.applies(d) then
      local x = perf[f.rate]
      local p = prof[f.name]
      local lo, hi
      if p ~= nil and p.lo ~= nil and p.hi ~= nil and x == p.value then
        lo, hi = p.lo, p.hi
      else
        if f.scales and base == nil then base = M.base(d) end
        lo, hi = M.spread(f, x, M.box(f, d, base))
      end
      if f.slow == "lo" then slow[f.name], fast[f.name] = lo, hi
      else slow[f.name], fast[f.name] = hi, lo end
    end
  end
  return slow, fast
end

--- d's rates (d:perf()) with the factors' values `values` (name -> number)
--- in place of its own: the perf table of the core's step time. A
--- multiplier scales the published curves from their values as published
--- (sim.lua M.scaled), not from d's already scaled ones.
function M.perf_at(d, values)
  local scales = {}
  for name, x in pairs(values) do
    local f = M.by_name[name]
    if f.scales then scales[f.rate] = x end
  end
  local p = require("kvplan.sim").perf_scaled(d, scales)
  for name, x in pairs(values) do
    local f = M.by_name[name]
    if not f.scales then p[f.rate] = x end
  end
  return p
end

return M
