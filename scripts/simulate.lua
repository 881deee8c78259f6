-- scripts/simulate.lua: serve a workload on a deployment, step by step as its
-- engine schedules (kv.simulate), and report throughput, latency percentiles,
-- preemptions and KV cache usage. With lists, one simulation a combination
-- (GPU x tp x pp x KV format x scheduler x rate).
--
-- Run:  kvplan simulate model=llama-3.1-8b gpu=l4 requests=1000 prompt=1000 output=250 rate=2
--       kvplan simulate model=llama-3.1-8b gpu=h100 engine=trtllm engine_version=1.0 max_batch_size=256
--       kvplan simulate --help    (every argument, with its default and meaning)
--
-- Arguments: every option kv.simulate takes (stdlib/kvplan/sim.lua
-- command_arguments): the workload (requests, prompt, output, sigma, rate,
-- max_concurrency, trace, seed), the axes (gpu, tp, pp, kv, scheduler, rate),
-- the tables spelt flat (offload_host, offload_pcie_gbps with swap; the
-- speculative_* options; efficiency.KEY and perf.KEY, e.g. perf.launch_us=2),
-- timeline, and every one-word deployment field of
-- the registry (stdlib/kvplan/fields.lua: engine, engine_version, budget,
-- utilization, max_num_seqs, max_num_batched_tokens, block, usage, ...)
-- under its name or its engines' names, checked as that field; profile=FILE
-- as every command takes it.
--
-- Output: one row a simulation: the deployment and workload, then
-- throughput_tokens_s, requests_s, ttft/tpot/e2e percentiles in ms,
-- num_preemptions, running_peak (the most requests running in one step: the
-- admitted batch), kv_cache_usage_mean/peak (fractions of the pool), steps;
-- with range=yes, throughput_tokens_s_lo/hi, ttft_ms_p50_lo/hi and
-- tpot_ms_p50_lo/hi (each simulation again at every step-time factor's slow
-- and fast end: a profile's interval, else the default spread).

local kv = require "kvplan"
local w = kv.workload
local sim = require "kvplan.sim"

local args = ...
local defaults = {}
local fields = {} -- the deployment fields it takes, in the registry's order
local tables = {} -- efficiency.KEY and perf.KEY: {name, default, meaning, nil, shown, table, key}
for _, a in ipairs(sim.command_arguments()) do
  local def = a[2]
  if def == nil then
    def = a[1] == "gpu" and {kv.options.required "gpu=l4"} or kv.options.required "model=llama-3.1-8b"
  end
  -- a run of no requests, or of empty prompts or outputs, is no run
  if a[1] == "requests" or a[1] == "prompt" or a[1] == "output" then def = kv.options.at_least(1, def) end
  defaults[a[1]] = def
  if a[4] then fields[#fields + 1] = a[1] end
  if a[6] then tables[#tables + 1] = a end
end
local opt = kv.options(args, defaults)
-- timeline= where the run may not write (--sandbox: outside the output
-- directory): a usage error now, not after the simulation
kv.options.output("timeline", opt.timeline)
local bad = kv.options.bad -- a bad argument: a usage error, as kv.options gives
local function given(k) return type(args) == "table" and args[k] ~= nil end

-- a negative rate, concurrency or count is refused by kv.options (their
-- defaults are >= 0); 0 is none
if given("concurrency") and given("max_concurrency") then
  bad("arguments 'max_concurrency' and 'concurrency' are the same option: give one")
end
local conc = given("concurrency") and opt.concurrency or opt.max_concurrency
for _, s in ipairs(opt.scheduler) do
  if s ~= "" and not sim.schedulers[s] then
    bad("argument 'scheduler' must be %s, got '%s'", sim.scheduler_list, kv.util.escape(s))
  end
end
if #opt.scheduler == 0 then opt.scheduler = {""} end
local model = kv.model(opt.model)
local max_len = kv.options.length(opt.max_model_len) or model.max_context

-- the deployment fields given, as kv.simulate takes them (the release
-- checked now in its engine's own table)
local base = kv.options.given_fields(opt, fields)
if opt.offload_host ~= "" or opt.offload_pcie_gbps ~= 0 then
  if opt.offload_host == "" then
    bad("argument 'offload_pcie_gbps' needs offload_host (host memory, e.g. 64GiB)")
  end
  if not (opt.offload_pcie_gbps >= 0) then
    bad("argument 'offload_pcie_gbps' must be GB/s > 0 (0: the GPU's), got %s",
        opt.offload_pcie_gbps)
  end
  local ok, host = pcall(kv.units.bytes, opt.offload_host, "offload_host")
  if not ok then
    bad("argument 'offload_host' must be bytes of host memory (e.g. 64GiB), got '%s'",
        kv.util.escape(opt.offload_host))
  end
  base.offload = {host = host,
                  pcie_gbps = opt.offload_pcie_gbps > 0 and opt.offload_pcie_gbps or nil}
end
-- efficiency.KEY= and perf.KEY=: kv.simulate's tables, a key an argument
-- (checked by kv.simulate as the table's key)
for _, a in ipairs(tables) do
  if given(a[1]) then
    base[a[6]] = base[a[6]] or {}
    base[a[6]][a[7]] = opt[a[1]]
  end
end
do
  local ok, err = pcall(sim.check_options, {efficiency = base.efficiency, perf = base.perf})
  if not ok then bad("%s", (tostring(err):gsub("^.-:%d+: ", "", 1))) end
end
if opt.swap and (base.offload == nil or base.offload.host == 0) then
  -- offload_host=0 was kv.simulate's "field 'swap' needs host memory: give
  -- offload = {host = ...}" at this script's line, status 1
  bad("argument 'swap' needs offload_host > 0 (host memory for the swapped KV, e.g. 64GiB)%s",
      base.offload and ", got '" .. kv.util.escape(opt.offload_host) .. "'" or "")
end
if opt.speculative_tokens > 0 then
  local s = {tokens = opt.speculative_tokens, acceptance = opt.speculative_acceptance}
  -- [0, 1): what the core takes (engine/core/optim.c kvp_spec_rates_of:
  -- the tokens a step (1 - a^(g+1)) / (1 - a) divides by 1 - a);
  -- 1 passed here and was "field 'acceptance' must be in [0, 1)" at this
  -- script's line, status 1
  if not (s.acceptance >= 0 and s.acceptance < 1) then
    bad("argument 'speculative_acceptance' must be in [0, 1), got %s", kv.util.shown(s.acceptance))
  end
  if opt.speculative_heads ~= "" then s.heads = opt.speculative_heads end
  if opt.speculative_draft ~= "" then s.draft = opt.speculative_draft end
  if opt.speculative_layers > 0 then s.layers = opt.speculative_layers end
  base.speculative = s
else
  for _, k in ipairs{"speculative_acceptance", "speculative_heads", "speculative_draft",
                     "speculative_layers"} do
    if given(k) then bad("argument '%s' needs speculative_tokens > 0", k) end
  end
end

-- sigma past the lognormal's bound (engine/core/optim.c kvp_dist_check:
-- sigma <= 10 keeps exp(mu + sigma^2 / 2) finite) was kv.workload's field
-- error at this script's line, status 1
if not (opt.sigma <= 10) then
  bad("argument 'sigma' must be a number in [0, 10] (0: every request exactly the median), got '%s'",
      kv.util.escape(given("sigma") and args.sigma or kv.util.fmt_num(opt.sigma), 64))
end

local workload
if opt.trace ~= "" then
  for _, k in ipairs{"requests", "prompt", "output", "sigma", "rate"} do
    if given(k) then
      bad("argument 'trace' gives arrivals and lengths: drop '%s'", k)
    end
  end
  local ok, t = pcall(sim.read_trace, opt.trace)
  if not ok then bad("argument 'trace': %s", (tostring(t):gsub("^.-:%d+: ", "", 1))) end
  workload = {trace = t}
else
  local function lengths(median, cap)
    if opt.sigma == 0 then return w.fixed(median) end
    -- at most the longest length a distribution draws (engine/core/optim.h
    -- KVP_MAX_LENGTH, 2^40): max_model_len=1e18 said "field 'max' must be an
    -- integer in 1..2^40, got 500000000000000000", a field the user never gave
    return w.lognormal{median = median, sigma = opt.sigma, max = math.min(cap, 1 << 40)}
  end
  workload = {requests = opt.requests, prompt = lengths(opt.prompt, max_len // 2),
              output = lengths(opt.output, max_len - max_len // 2)}
end

local columns = {
  "model", "gpu", "tp", "pp", "kv", "scheduler", "rate", "requests",
  {"throughput_tokens_s", precision = 1}, {"requests_s", precision = 3},
  {"ttft_ms_p50", precision = 1}, {"ttft_ms_p99", precision = 1},
  {"tpot_ms_p50", precision = 2}, {"tpot_ms_p99", precision = 2}, {"e2e_ms_p99", precision = 1},
  "num_preemptions", "running_peak", {"kv_cache_usage_mean", precision = 3}, {"kv_cache_usage_peak", precision = 3},
  "steps"}
if opt.range then -- the ranges: every factor at its slow and fast end (kv.simulate range)
  for _, c in ipairs{{"throughput_tokens_s_lo", 1}, {"throughput_tokens_s_hi", 1}, {"ttft_ms_p50_lo", 1},
                     {"ttft_ms_p50_hi", 1}, {"tpot_ms_p50_lo", 2}, {"tpot_ms_p50_hi", 2}} do
    columns[#columns + 1] = {c[1], precision = c[2]}
  end
end
-- an HTML page (-f html) draws throughput and latency by the swept axis when
-- one is: against the rate (lines, a line a deployment) when the rate is
-- swept, else as bars of the deployments (the axes that vary named)
local axes = {{"gpu", opt.gpu}, {"tp", opt.tp}, {"pp", opt.pp}, {"kv", opt.kv}, {"scheduler", opt.scheduler}}
local varying = {}
for _, a in ipairs(axes) do if #a[2] > 1 then varying[#varying + 1] = a[1] end end
local rate_swept = opt.trace == "" and #opt.rate > 1
local chart_rows, charts = {}, nil
if rate_swept or #varying > 0 then
  charts = {}
  for _, y in ipairs{{"throughput_tokens_s", "output throughput (tokens/s)"}, {"ttft_ms_p99", "TTFT p99 (ms)"},
                     {"tpot_ms_p99", "TPOT p99 (ms)"}} do
    charts[#charts + 1] = {data = chart_rows, x = rate_swept and "rate" or "deployment", y = y[1],
                           by = rate_swept and #varying > 0 and "deployment" or nil,
                           kind = rate_swept and "line" or "bar", ylabel = y[2],
                           title = string.format("%s by %s", y[2], rate_swept and "request rate" or table.concat(varying, ", "))}
  end
end
local r = kv.report{columns = columns, chart = charts}

local first = true
local rates = opt.trace ~= "" and {0} or opt.rate
for _, g in ipairs(opt.gpu) do
  for _, tp in ipairs(opt.tp) do
    for _, pp in ipairs(opt.pp) do
      for _, kf in ipairs(opt.kv) do
        for _, sched in ipairs(opt.scheduler) do
          for _, rate in ipairs(rates) do
            local o = {model = model, gpu = g, tp = tp, pp = pp, kv = kf,
                       weights = opt.weights ~= "native" and opt.weights or nil,
                       max_model_len = kv.options.length(opt.max_model_len),
                       seed = opt.seed, rate = rate > 0 and rate or nil,
                       scheduler = sched ~= "" and sched or nil, swap = opt.swap or nil,
                       max_concurrency = conc > 0 and conc or nil, range = opt.range or nil,
                       long_prefill_token_threshold = opt.long_prefill_token_threshold > 0
                         and opt.long_prefill_token_threshold or nil}
            for k, v in pairs(base) do o[k] = v end
            for k, v in pairs(workload) do o[k] = v end
            local s = kv.simulate(o)
            if first and opt.timeline ~= "" then
              -- checked again now the trace is read: not over it (a usage error)
              kv.options.output("timeline", opt.timeline)
              s:timeline(opt.timeline)
            end
            first = false
            if charts then
              local parts = {}
              local at = {gpu = s.deployment.gpu.id, tp = "tp " .. tp, pp = "pp " .. pp, kv = "kv " .. s.deployment.kv.name,
                          scheduler = s.scheduler}
              for _, a in ipairs(varying) do parts[#parts + 1] = at[a] end
              chart_rows[#chart_rows + 1] = {deployment = #parts > 0 and table.concat(parts, " ") or "", rate = rate,
                                             throughput_tokens_s = s.throughput_tokens_s, ttft_ms_p99 = s.ttft_ms.p99,
                                             tpot_ms_p99 = s.tpot_ms.p99}
            end
            r:row{model = model.id, gpu = s.deployment.gpu.id, tp = tp, pp = pp,
                  kv = s.deployment.kv.name, scheduler = s.scheduler, rate = rate,
                  requests = s.requests, throughput_tokens_s = s.throughput_tokens_s,
                  requests_s = s.requests_s, ttft_ms_p50 = s.ttft_ms.p50,
                  ttft_ms_p99 = s.ttft_ms.p99, tpot_ms_p50 = s.tpot_ms.p50,
                  tpot_ms_p99 = s.tpot_ms.p99, e2e_ms_p99 = s.e2e_ms.p99,
                  num_preemptions = s.num_preemptions, running_peak = s.running_peak,
                  kv_cache_usage_mean = s.kv_cache_usage_perc.mean,
                  kv_cache_usage_peak = s.kv_cache_usage_perc.peak, steps = s.steps,
                  throughput_tokens_s_lo = s.throughput_tokens_s_lo,
                  throughput_tokens_s_hi = s.throughput_tokens_s_hi,
                  ttft_ms_p50_lo = s.ttft_ms_lo and s.ttft_ms_lo.p50,
                  ttft_ms_p50_hi = s.ttft_ms_hi and s.ttft_ms_hi.p50,
                  tpot_ms_p50_lo = s.tpot_ms_lo and s.tpot_ms_lo.p50,
                  tpot_ms_p50_hi = s.tpot_ms_hi and s.tpot_ms_hi.p50}
          end
        end
      end
    end
  end
end
r:close()
