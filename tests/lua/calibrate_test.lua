-- tests/lua/calibrate_test.lua: kvplan.calibrate (result readers, the fit,
-- profiles, kv.deploy{profile}), kvplan.factors and the ranges of d:time.
local kv = require "kvplan"
local cal = require "kvplan.calibrate"
local factors = require "kvplan.factors"
local check = dofile("tests/lua/check.lua")

local F = "tests/fixtures/calibrate/"
-- vLLM 0.11, a release that waits for the host between steps (no async
-- scheduling by default before 0.14): the fit takes launch_us and seq_host_us
local dep = {model = "mistral-7b-v0.3", gpu = "rtx-4090", max_num_seqs = 256,
             max_num_batched_tokens = 2048, engine_version = "0.11"}

-- ---- readers: each format's keys --------------------------------------------
local p = cal.read(F .. "vllm_serve_c4.json")
check.eq(#p, 1, "vllm points")
check.eq(p[1].format, "vllm bench serve", "vllm format")
check.eq(p[1].requests, 300, "completed")
check.eq(p[1].prompt, 256, "mean prompt 76800 / 300")
check.eq(p[1].output, 100, "mean output 30143 / 300 = 100.48")
check.eq(p[1].rate, nil, "request_rate inf: all at once")
check.eq(p[1].max_concurrency, 4, "max_concurrency")
check.eq(p[1].measured.throughput, 210.0, "output_throughput")
check.eq(p[1].measured.ttft, 63.0, "mean_ttft_ms")
check.eq(p[1].measured.tpot, nil, "no mean_tpot_ms key: not measured")
p = cal.read(F .. "benchmark_serving_c8.json")
check.eq(p[1].format, "vllm benchmark_serving.py", "old format")
check.eq(p[1].max_concurrency, 8, "old max_concurrency")
p = cal.read(F .. "sglang_c16_c32.jsonl")
check.eq(#p, 2, "sglang JSON Lines: a point a line")
check.eq(p[1].format, "sglang bench_serving", "sglang format")
check.eq(p[1].source, F .. "sglang_c16_c32.jsonl:1", "a line's source")
check.eq(p[2].max_concurrency, 32, "second line")
check.eq(p[1].rate, nil, "Infinity: all at once")
check.eq(p[1].measured.tpot, nil, "NaN TPOT: not measured")
p = cal.read(F .. "trtllm_report.json")
check.eq(p[1].format, "trtllm-bench", "trtllm format")
check.eq(p[1].requests, 1000, "num_requests")
check.eq(p[1].prompt, 128, "avg_input_length")
check.eq(p[1].max_num_seqs, 512, "max_batch_size")
check.eq(p[1].max_num_batched_tokens, 2048, "max_num_tokens")
check.eq(p[1].measured.throughput, 14222.0, "system_output_throughput_tok_s")
check.eq(p[1].measured.tpot, 25.0, "avg_tpot_ms")
p = cal.read(F .. "plain.csv")
check.eq(p[1].source, F .. "plain.csv:2", "CSV source names the line")
check.eq(p[1].max_concurrency, 48, "CSV concurrency")
check.eq(p[1].measured.tpot, nil, "blank TPOT")
check.eq(#kv.calibrate.read(F .. "plain.csv"), 1, "kv.calibrate.read")

-- ---- bad files: file (line, key), value, what was expected -------------------
check.error("cannot read result file '" .. F .. "none.json'", cal.read, F .. "none.json")
check.error(F .. "bad/array.json: not a benchmark result (a JSON array", cal.read, F .. "bad/array.json")
check.error(F .. "bad/bad_type.json: key 'output_throughput' is 'fast' (expected output tokens a second > 0)",
            cal.read, F .. "bad/bad_type.json")
check.error(F .. "bad/unknown.json: not a benchmark result kvplan reads (keys 'hello', 'world'",
            cal.read, F .. "bad/unknown.json")
check.error(F .. "bad/unknown_column.csv:1: unknown column 'concurency'", cal.read,
            F .. "bad/unknown_column.csv")
check.error(F .. "bad/bad_cell.csv:3: column 'output_len' is 'abc' (expected tokens, an integer >= 1)",
            cal.read, F .. "bad/bad_cell.csv")
check.error(F .. "bad/empty.json: the file is empty", cal.read, F .. "bad/empty.json")
check.error(F .. "bad/trtllm_missing.json: key 'request_info.num_requests' is missing (expected an integer >= 1)",
            cal.read, F .. "bad/trtllm_missing.json")
check.error(F .. "bad/broken.jsonl:2: not JSON", cal.read, F .. "bad/broken.jsonl")

-- ---- the factor table ----------------------------------------------------------
for _, f in ipairs(factors.list) do
  assert(f.lo < f.hi and f.option[1] and f.rate and f.unit and f.meaning and f.spread.source,
         "factor " .. f.name .. " declares box, option, rate, unit, meaning, spread and source")
  assert(f.slow == "lo" or f.slow == "hi", f.name .. ": slow")
end
check.error("unknown factor 'memry'", factors.get, "memry", "x")

-- ---- the fit ---------------------------------------------------------------------
local results = {F .. "vllm_serve_c4.json", F .. "benchmark_serving_c8.json",
                 F .. "sglang_c16_c32.jsonl", F .. "plain.csv"}
local c = kv.calibrate{deployment = dep, results = results}
check.eq(#c.points, 5, "five runs")
check.eq(c.factors.link.fitted, false, "link: no all-reduce at tp 1")
check.eq(c.factors.link_latency_us.fitted, false, "link latency: tp 1")
check.eq(c.factors.link.why, "tp 1 x pp 1: no collectives", "why link is not fitted")
check.eq(c.factors.step_overhead_ms.fitted, false, "vLLM waits for the host: launch_us, not step_overhead_ms")
local fitted_names = {"memory", "compute", "launch_us", "seq_host_us"}
for _, name in ipairs(fitted_names) do assert(c.factors[name].fitted, name .. " fitted") end
for _, name in ipairs(fitted_names) do
  local e, f = c.factors[name], factors.by_name[name]
  assert(e.value >= f.lo and e.value <= f.hi, name .. " within its box")
  assert(e.lo <= e.value and e.value <= e.hi, name .. " inside its interval")
end
-- the fit is no worse than the defaults it started from
local function ssr_at(values)
  local s = 0
  for _, pt in ipairs(c.points) do
    local pr = cal.predict(dep, pt, values)
    for _, f in ipairs(cal.figures) do
      if pt.measured[f] then s = s + math.log(pr[f] / pt.measured[f]) ^ 2 end
    end
  end
  return s
end
assert(c.ssr <= ssr_at({}) + 1e-12, "the fit improves on the defaults")
-- deterministic
local c2 = kv.calibrate{deployment = dep, results = results}
check.eq(c2.factors.memory.value, c.factors.memory.value, "same fit twice")
check.eq(c2.loo.median.throughput, c.loo.median.throughput, "same LOO twice")
-- the API server's queue (api_ms) is fitted from the runs' TTFT growth
assert(c.factors.api_ms.fitted and c.factors.api_ms.value > 0, "api_ms fitted")
-- the approximate leave-one-out errors against real refits without each
-- point, for the step time's factors: with api_ms fitted too the one
-- Gauss-Newton step is off by more (run 2: +0.012 against a refit's +0.035
-- on these five runs; docs/time.md, Calibration), the queue's wait being far
-- from linear in its service time
local step_factors = {}
for _, f in ipairs(factors.list) do if f.name ~= "api_ms" then step_factors[#step_factors + 1] = f.name end end
local cs = kv.calibrate{deployment = dep, results = results, factors = step_factors}
for i = 1, #cs.points do
  local sub = {}
  for j, pt in ipairs(cs.points) do if j ~= i then sub[#sub + 1] = pt end end
  local ci = kv.calibrate{deployment = dep, points = sub, factors = step_factors}
  local v = {}
  for name, e in pairs(ci.factors) do if e.fitted then v[name] = e.value end end
  local real = cal.predict(dep, cs.points[i], v).throughput / cs.points[i].measured.throughput - 1
  local approx = cs.loo.points[i].error.throughput
  assert(math.abs(real - approx) < 0.02, string.format("LOO %d: approximate %+.3f, refit %+.3f", i, approx, real))
end
-- a factor driven to its bound is reported as such: 50x the throughput the
-- GPU's bandwidth allows asks for a memory efficiency above 1
local fast = {{source = "x", requests = 50, prompt = 16, output = 64, max_concurrency = 1,
               measured = {throughput = 5000}}}
local cb = kv.calibrate{deployment = dep, points = fast, factors = {"memory"}}
check.eq(cb.factors.memory.at_bound, "upper", "memory at its upper bound")
assert(cb:text():find("memory (fraction)", 1, true) and cb:text():find("at its upper bound 1", 1, true),
       "the report says so")
check.eq(cb.factors.compute.fitted, false, "factors= limits the fit")
check.eq(cb.loo.median.throughput, nil, "one result: no leave-one-out error")
check.eq(cb.fit.points[1].error.throughput ~= nil, true, "but a fit error")
-- options
check.error("field 'max_concurrency' is the results' own", kv.calibrate,
            {deployment = {model = "mistral-7b-v0.3", gpu = "rtx-4090", max_concurrency = 3}, points = fast})
check.error("unknown field 'resuls' in calibrate", kv.calibrate, {deployment = dep, resuls = {}})
check.error("unknown factor 'memry'", kv.calibrate, {deployment = dep, points = fast, factors = {"memry"}})
-- a factor the deployment's options give is held
local held = {model = "mistral-7b-v0.3", gpu = "rtx-4090", efficiency = {memory = 0.5}}
local ch = kv.calibrate{deployment = held, points = fast}
check.eq(ch.factors.memory.fitted, false, "given memory is held")
check.eq(ch.factors.memory.value, 0.5, "at its given value")

-- ---- the profile -----------------------------------------------------------------
local dir = check.tmpdir()
local path = dir .. "/profile.json"
c:write(path)
local prof = cal.read_profile(path)
check.eq(prof.kvplan_profile, 1, "profile version")
check.eq(prof.deployment.gpu, "rtx-4090", "the GPU it was fitted on")
check.eq(prof.deployment.engine, "vllm", "the engine")
check.eq(#prof.inputs, 4, "inputs' names")
assert(prof.leave_one_out.median_abs_error.throughput and prof.fit.points[1].input, "errors recorded")
check.eq(prof.kvplan_version, kv.version, "kvplan version")
local d = kv.deploy{model = "mistral-7b-v0.3", gpu = "rtx-4090", profile = path}
check.eq(d:perf().mem_eff, c.factors.memory.value, "kv.deploy{profile}: memory")
check.eq(d:perf().flop_eff, c.factors.compute.value, "kv.deploy{profile}: compute")
check.eq(d:perf().step_overhead_ms, c.factors.step_overhead_ms.value, "kv.deploy{profile}: overhead")
local de = kv.deploy{model = "mistral-7b-v0.3", gpu = "rtx-4090", profile = path,
                     efficiency = {memory = 0.5}}
check.eq(de:perf().mem_eff, 0.5, "explicit options win over the profile")
check.eq(de:perf().flop_eff, c.factors.compute.value, "the rest from the profile")
check.eq(d:with{tp = 1}:perf().mem_eff, c.factors.memory.value, "with keeps the profile")
check.error("profile '" .. path .. "' was fitted on gpu 'rtx-4090', this deployment runs on 'h100-sxm' "
            .. "(profile_any = true applies it anyway)", kv.deploy,
            {model = "mistral-7b-v0.3", gpu = "h100", profile = path})
check.error("was fitted for engine 'vllm', this deployment's is 'sglang'", kv.deploy,
            {model = "mistral-7b-v0.3", gpu = "rtx-4090", engine = "sglang", profile = path})
check.eq(kv.deploy{model = "mistral-7b-v0.3", gpu = "h100", profile = path, profile_any = true}:perf().mem_eff,
         c.factors.memory.value, "profile_any")
check.error("cannot read profile '" .. dir .. "/none.json'", kv.deploy,
            {model = "mistral-7b-v0.3", gpu = "h100", profile = dir .. "/none.json"})
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return dir .. "/" .. name
end
check.error("not a kvplan profile (no key 'kvplan_profile'", cal.read_profile, write("a.json", "{}"))
check.error("is not JSON", cal.read_profile, write("b.json", "{"))
check.error(": key 'factors': unknown factor 'memroy'", cal.read_profile, write("c.json",
  '{"kvplan_profile": 1, "deployment": {"gpu": "rtx-4090"}, "factors": {"memroy": {"value": 0.5}}}'))
check.error("factors.memory: key 'value' is 3 (expected a number in 0.05 .. 1)", cal.read_profile,
  write("d.json", '{"kvplan_profile": 1, "deployment": {"gpu": "rtx-4090"}, "factors": {"memory": {"value": 3}}}'))
check.error("key 'kvplan_profile' is 2 (this kvplan reads version 1)", cal.read_profile,
  write("e.json", '{"kvplan_profile": 2}'))
-- simulations and sweeps take it
local r0 = kv.simulate{model = "mistral-7b-v0.3", gpu = "rtx-4090", requests = 20, prompt = 256, output = 50}
local r1 = kv.simulate{model = "mistral-7b-v0.3", gpu = "rtx-4090", requests = 20, prompt = 256, output = 50,
                       profile = path}
assert(r0.throughput_tokens_s ~= r1.throughput_tokens_s, "kv.simulate applies the profile")
kv.sweep{model = "mistral-7b-v0.3", gpu = "rtx-4090", context = 2048, concurrency = 16,
         base = {profile = path}, columns = {{"tokens_per_s", precision = 6}}}:write(dir .. "/s.csv")
local rows = {}
for i, row in ipairs(kv.csv.read(dir .. "/s.csv")) do if i > 1 then rows[#rows + 1] = tonumber(row[1]) end end
assert(math.abs(rows[1] - d:time(2048, 16).tokens_per_s) < 1e-4, "a sweep's time columns apply the profile")

-- ---- ranges of d:time ------------------------------------------------------------
-- (vLLM 0.11, which waits for the host: launch_us applies, not step_overhead_ms)
local d0 = kv.deploy{model = "mistral-7b-v0.3", gpu = "rtx-4090", engine_version = "0.11"}
local t = d0:time(2048, 16)
assert(t.tokens_per_s_lo < t.tokens_per_s and t.tokens_per_s < t.tokens_per_s_hi, "default spread: throughput")
assert(t.tpot_ms_lo < t.tpot_ms and t.tpot_ms < t.tpot_ms_hi, "default spread: tpot")
assert(t.ttft_ms_lo < t.ttft_ms and t.ttft_ms < t.ttft_ms_hi, "default spread: ttft")
-- the slow end: every factor at its slow end (memory 0.8 x 1509/2298.5 ...)
local slow = factors.ends(d0)
check.eq(slow.memory, 0.8 * 1509 / 2298.5, "memory's slow end")
assert(math.abs(slow.launch_us - 0.98) < 1e-12, "a kernel launch's slow end: SGLang's 0.98 us")
check.eq(slow.step_overhead_ms, nil, "no step_overhead_ms where launch_us applies")
check.eq(slow.link, nil, "no link factor at tp 1")
local e = c.factors.memory
local tp = d:time(2048, 16)
local sp = factors.ends(d)
check.eq(sp.memory, e.lo, "a profile's interval")
assert(tp.tokens_per_s_lo <= tp.tokens_per_s and tp.tokens_per_s <= tp.tokens_per_s_hi, "profile range")
-- a MoE model: the experts' factor joins
local sm = factors.ends(kv.deploy{model = "qwen3-30b-a3b", gpu = "h100-sxm"})
-- (the least fraction of sim.expert_gemm's curves, 0.032: TensorRT-LLM's
-- CUTLASS NVFP4 MoE on B200 at one token; below the factor's lo, 0.05)
check.eq(sm.experts, 0.05, "experts' slow end: the least curve fraction, held to the factor's lo")
check.eq(slow.experts, nil, "no experts' factor for a dense model")
-- tp 2: the link factors join
local s2 = factors.ends(kv.deploy{model = "mistral-7b-v0.3", gpu = "h100", tp = 2})
assert(s2.link and s2.link_latency_us == 9 * 11.8 / 9, "link factors at tp 2")
-- a run's profile (profile=FILE on the command line) does not enter a fit
local deploy = require "kvplan.deploy"
deploy.run_defaults.profile = path
local cr = kv.calibrate{deployment = dep, results = results}
check.eq(cr.factors.memory.value, c.factors.memory.value, "the fit ignores the run's profile")
check.eq(deploy.run_defaults.profile, path, "and restores it")
check.eq(kv.deploy{model = "mistral-7b-v0.3", gpu = "rtx-4090"}:perf().mem_eff, c.factors.memory.value,
         "the run's profile applies to every deployment")
deploy.run_defaults.profile = nil
-- sweeps carry ranges when a range column is asked (the C axes' tp included)
local rcols = {"tokens_per_s_lo", "tokens_per_s_hi", "tpot_ms_lo", "tpot_ms_hi", "ttft_ms_lo", "ttft_ms_hi"}
local cols = {"gpu", "tp", "concurrency"}
for _, k in ipairs(rcols) do cols[#cols + 1] = {k, precision = 6} end
kv.sweep{model = "llama-3.1-8b", gpu = {"h100", "l4"}, tp = {1, 2}, context = 2048, concurrency = {1, 16},
         columns = cols}:write(dir .. "/r.csv")
local n = 0
for i, row in ipairs(kv.csv.read(dir .. "/r.csv")) do
  if i > 1 then
    local t = kv.deploy{model = "llama-3.1-8b", gpu = row[1], tp = tonumber(row[2])}:time(2048, tonumber(row[3]))
    for j, k in ipairs(rcols) do
      assert(math.abs(tonumber(row[3 + j]) - t[k]) <= 1e-6 * t[k] + 1e-6,
             string.format("sweep %s %s tp %s: %s against d:time %s", k, row[1], row[2], row[3 + j], t[k]))
    end
    n = n + 1
  end
end
check.eq(n, 8, "the sweep's rows")
-- with a profile, its intervals
kv.sweep{model = "mistral-7b-v0.3", gpu = "rtx-4090", context = 2048, concurrency = 16, base = {profile = path},
         columns = {{"tokens_per_s_lo", precision = 6}, {"tokens_per_s_hi", precision = 6}}}:write(dir .. "/rp.csv")
local rp = kv.csv.read(dir .. "/rp.csv")[2]
local tpr = d:time(2048, 16)
assert(math.abs(tonumber(rp[1]) - tpr.tokens_per_s_lo) < 1e-5 and math.abs(tonumber(rp[2]) - tpr.tokens_per_s_hi) < 1e-5,
       "a sweep's ranges under a profile")
-- simulations carry ranges when asked
local w = {model = "mistral-7b-v0.3", gpu = "rtx-4090", requests = 40, prompt = 256, output = 50}
local plain = kv.simulate(w)
check.eq(plain.throughput_tokens_s_lo, nil, "no range unless asked")
w.range = true
local rr = kv.simulate(w)
check.eq(rr.throughput_tokens_s, plain.throughput_tokens_s, "range leaves the figures as they were")
assert(rr.throughput_tokens_s_lo < rr.throughput_tokens_s and rr.throughput_tokens_s < rr.throughput_tokens_s_hi,
       "simulated throughput range")
assert(rr.ttft_ms_lo.mean < rr.ttft_ms.mean and rr.ttft_ms.mean < rr.ttft_ms_hi.mean, "TTFT range")
assert(rr.tpot_ms_lo.p50 < rr.tpot_ms.p50 and rr.tpot_ms.p50 < rr.tpot_ms_hi.p50, "TPOT range")
w.range = "yes"
check.error("field 'range' must be true or false, got yes", kv.simulate, w)
-- ---- the fit's runs: the figures of kv.simulate, fewer runs ----------------
-- sim:means() and sim.simulate_means give kv.simulate's figures exactly
local sim = require "kvplan.sim"
local sw = {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 60, prompt = 500, output = 40,
            max_concurrency = 8}
local function same_figures(o, m, what)
  local r = kv.simulate(o)
  check.eq(m.throughput, r.throughput_tokens_s, what .. ": throughput")
  check.eq(m.ttft, r.ttft_ms.mean, what .. ": mean TTFT")
  check.eq(m.tpot, r.tpot_ms.mean, what .. ": mean TPOT")
  return r
end
local r0 = kv.simulate(sw)
local t0, f0, p0 = r0.sim:means()
check.eq(t0, r0.throughput_tokens_s, "sim:means throughput")
check.eq(f0, r0.ttft_ms.mean, "sim:means TTFT")
check.eq(p0, r0.tpot_ms.mean, "sim:means TPOT")
local function with(o, key, t)
  local c = {}
  for k, v in pairs(o) do c[k] = v end
  c[key] = t
  return c
end
-- alternatives: vLLM 0.29 overlaps its host work, hidden behind the GPU's
-- at these loads: another launch_us or seq_host_us is the same run, another
-- request_ms the same run with other latencies; another memory factor is not
local alts = {with(sw, "perf", {launch_us = 1.11}), with(sw, "perf", {seq_host_us = 1.5}),
              with(sw, "perf", {request_ms = 20}), with(sw, "efficiency", {memory = 0.5}),
              with(sw, "perf", {launch_us = 30})}
local m0, ma = sim.simulate_means(sw, nil, alts)
same_figures(sw, m0, "simulate_means")
for j = 1, 3 do
  assert(ma[j] ~= nil, "alternative " .. j .. ": the same run")
  same_figures(alts[j], ma[j], "alternative " .. j)
end
check.eq(ma[3].throughput, m0.throughput, "request_ms moves no step")
assert(ma[3].ttft > m0.ttft, "request_ms moves the TTFT")
check.eq(ma[4], nil, "another memory factor: another run")
-- 30 us a kernel outlasts the GPU's step: the steps differ, another run
check.eq(ma[5], nil, "a host time the GPU does not hide: another run")
assert(kv.simulate(alts[5]).throughput_tokens_s ~= m0.throughput, "and its figures differ")
-- vLLM 0.11 waits for the host: every step moves with launch_us
local s11 = with(sw, "engine_version", "0.11")
local m11, a11 = sim.simulate_means(s11, nil, {with(s11, "perf", {launch_us = 1.11}),
                                                with(s11, "perf", {request_ms = 20})})
same_figures(s11, m11, "0.11")
check.eq(a11[1], nil, "0.11: launch_us is in every step")
same_figures(with(s11, "perf", {request_ms = 20}), a11[2], "0.11: request_ms")
-- the fit takes the probes of the start's hidden host factors and of
-- request_ms from the start's runs: fewer runs than simulations
local cs = kv.calibrate{deployment = {model = "llama-3.1-8b", gpu = "h100-sxm"},
                        points = {{requests = 40, prompt = 300, output = 30, max_concurrency = 4,
                                   measured = {throughput = 900, ttft = 30, tpot = 4}},
                                  {requests = 40, prompt = 300, output = 30, rate = 8.0,
                                   measured = {throughput = 230, ttft = 40, tpot = 4.5}}}}
assert(cs.runs < cs.simulations and cs.runs >= cs.simulations - 3 * 2,
       string.format("runs %s of %s simulations", tostring(cs.runs), tostring(cs.simulations)))
os.execute("rm -rf " .. dir)
print("calibrate: ok")
