-- stdlib/kvplan/plan.lua: plan a service, not a batch: the highest request
-- rate one replica of a deployment sustains under latency targets
-- (plan.capacity), and the deployments and replicas that serve a rate
-- (kv.plan, `kvplan best ... rate=`).
-- Stdlib layer: a search over rates by the serving simulator (kv.simulate,
-- engine/core/sim.c); every latency is a simulation's.
--
--   local plan = require "kvplan.plan"
--   local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}
--   local c = plan.capacity(d, {input = 1000, output = 200}, {tpot_ms = 50, ttft_ms = 2000})
--   print(c.rate, c.binding, c.at.ttft_ms.p90, c.sims)
--
-- A workload `wl`: {input = tokens | Distribution, output = tokens |
-- Distribution, requests = simulated requests (default M.requests),
-- prefix = {tokens =, hit_rate = 1} (a prefix every request shares, cached
-- once: kv.optim.prefix), trace = CSV path (arrival_s, prompt_tokens,
-- output_tokens; its arrivals are scaled to each rate tried)}.
-- An SLA `sla`: {ttft_ms =, tpot_ms =, e2e_ms = (each optional), percentile
-- = "p50"|"p90"|"p99" (default p90), goodput = fraction (optional)}.
--
-- How the capacity is found (M.capacity):
--   1. the verdict: the deployment must start and hold one request of the
--      workload's mean length (l:fit); else rate 0, binding "start" (or
--      "kv_memory" when only the KV cache is short)
--   2. saturation: the workload with every request at time 0 (kv.simulate
--      without a rate): its completion rate (requests_s) is the most the
--      replica serves; no higher rate is sustainable, whatever the
--      latencies of a finite simulation say. One simulation. The ramp at
--      the start and the drain of the last batch make it a little lower
--      than a long run's: 22.5 req/s at 500 requests against 23.2 at 8000
--      for Llama-3.1-8B on an H100 SXM, 1000 + 200 tokens, where Poisson
--      arrivals of 8000 requests at 25 req/s and more complete 23.3-24.0
--   3. the rates: Poisson arrivals (seed 1, so the arrivals of every rate
--      are the same draws scaled by 1 / rate: latencies change with the
--      rate alone), the saturation rate first, then bisection of [0, it]
--      until the bracket is M.tolerance of it: 1 + 5 simulations at the
--      default 1/32. The rate returned met the SLA; the next one tried
--      above it did not, and names what binds
--   4. no rate of the bisection meets it: one request at a time (a client
--      of concurrency 1, the limit of a rate near 0) decides: it fails,
--      and no rate meets the SLA (rate 0, the target it misses); it meets
--      it, and the bisection goes on below the lowest rate tried
-- So a capacity takes 7 simulations (8 or 13 in the last case) of
-- `requests` requests each.
-- The binding constraint at the capacity:
--   ttft, tpot, e2e  the target the next rate missed (the one missed by
--                    most over its target, or by most requests under goodput)
--   kv_memory        requests were preempted at the next rate (they waited
--                    for KV blocks) and it missed TTFT or E2E; or the SLA
--                    held up to saturation, the KV cache holds fewer
--                    requests of the mean length than max_num_seqs and a
--                    decode step of as many is memory-bound (d:time: a
--                    larger cache would batch more requests a weight read);
--                    or one request exceeds the pool
--   compute          the SLA held up to saturation, and max_num_seqs or the
--                    step time limits it (a workload of one output token:
--                    its prefills)
--   start            the engine refuses to start, the weights or reserves
--                    do not fit, or a request is longer than max_model_len
-- An SLA with goodput counts the share of requests within every target
-- (DistServe's SLO attainment, Zhong et al., OSDI 2024; kvp_sim_goodput);
-- the percentile applies too only when given.

local util = require "kvplan.util"

local M = {}

-- Requests each simulation serves: enough for a p99 of five requests above
-- it, few enough for a search over a GPU catalog (a simulation of 500
-- requests of 1000 + 200 tokens on an H100 takes about 10 ms).
M.requests = 500
-- The bisection stops when the bracket is this share of the saturation rate.
M.tolerance = 1 / 32
M.percentiles = {p50 = true, p90 = true, p99 = true}
M.bindings = {"kv_memory", "ttft", "tpot", "e2e", "compute", "start"}

local wl_fields = {input = true, output = true, requests = true, prefix = true, trace = true}
local sla_fields = {ttft_ms = true, tpot_ms = true, e2e_ms = true, percentile = true, goodput = true}
local targets = {"ttft", "tpot", "e2e"}

local function length(v, field)
  local workload = require "kvplan.workload"
  if type(v) == "number" then
    local n = util.count(v, field, 1)
    return n, n
  end
  if getmetatable(v) == workload.Distribution then return v, v:mean() end
  util.raise("workload field '%s' must be a number of tokens >= 1 or a length distribution "
             .. "(kv.workload.lognormal{...}, ...), got %s", field, util.escape(tostring(v)))
end

--- The workload checked: {input, output (tokens or Distributions),
--- input_mean, output_mean, requests, prefix (tokens or nil), trace (the
--- read trace or nil), rate (a trace's own mean rate)}.
function M.workload(wl)
  if getmetatable(wl) == M.Workload then return wl end
  if type(wl) ~= "table" then util.raise("a workload must be a table {input =, output =, ...}, got %s", type(wl)) end
  util.check_keys(wl, wl_fields, "workload")
  local w = {}
  if wl.trace ~= nil then
    if wl.input ~= nil or wl.output ~= nil then
      util.raise("a workload's trace gives the lengths: drop 'input' and 'output'")
    end
    local t = type(wl.trace) == "table" and wl.trace or require("kvplan.sim").read_trace(wl.trace)
    local n, sin, sout, last = #t.arrival, 0, 0, 0
    for i = 1, n do
      sin, sout = sin + t.prompt_tokens[i], sout + t.output_tokens[i]
      if t.arrival[i] > last then last = t.arrival[i] end
    end
    w.trace, w.input_mean, w.output_mean, w.requests = t, sin / n, sout / n, n
    w.rate = last > 0 and n / last or nil
  else
    if wl.input == nil or wl.output == nil then
      util.raise("a workload needs 'input' and 'output' (tokens or length distributions)")
    end
    w.input, w.input_mean = length(wl.input, "input")
    w.output, w.output_mean = length(wl.output, "output")
    w.requests = util.count(wl.requests or M.requests, "requests", 1)
  end
  if wl.prefix ~= nil then
    local p = wl.prefix
    if type(p) == "number" then p = {tokens = p} end
    if type(p) ~= "table" then
      util.raise("workload field 'prefix' must be {tokens =, hit_rate =}, got %s", util.escape(tostring(p)))
    end
    util.check_keys(p, {tokens = true, hit_rate = true}, "workload prefix")
    if p.hit_rate ~= nil and p.hit_rate ~= 1 then
      -- the simulator caches one prefix every request shares (sim.c): a
      -- share of requests hitting it is not modelled, so not accepted
      util.raise("workload prefix 'hit_rate' must be 1 (the simulator models a prefix every "
                 .. "request shares), got %s", util.escape(tostring(p.hit_rate)))
    end
    w.prefix = util.count(p.tokens, "prefix tokens", 0)
  end
  return setmetatable(w, M.Workload)
end
M.Workload = {__name = "kvplan.Workload"}

--- The SLA checked: {ttft_ms, tpot_ms, e2e_ms (nil: none), percentile,
--- percentile_given, goodput (nil: none)}.
function M.sla(sla)
  if sla == nil then sla = {} end
  if getmetatable(sla) == M.SLA then return sla end
  if type(sla) ~= "table" then util.raise("an SLA must be a table {ttft_ms =, tpot_ms =, ...}, got %s", type(sla)) end
  util.check_keys(sla, sla_fields, "SLA")
  local s = {}
  for _, t in ipairs(targets) do
    local k = t .. "_ms"
    local v = sla[k]
    if v ~= nil then
      if type(v) ~= "number" or not (v > 0 and v < math.huge) then
        util.raise("SLA field '%s' must be a number of milliseconds > 0, got %s", k, util.escape(tostring(v)))
      end
      s[k] = v
    end
  end
  local p = sla.percentile
  if p ~= nil and not M.percentiles[p] then
    util.raise("SLA field 'percentile' must be p50, p90 or p99, got '%s'", util.escape(tostring(p)))
  end
  s.percentile, s.percentile_given = p or "p90", p ~= nil
  if sla.goodput ~= nil then
    local g = sla.goodput
    if type(g) ~= "number" or not (g > 0 and g <= 1) then
      util.raise("SLA field 'goodput' must be a fraction in (0, 1] (the share of requests meeting "
                 .. "every target), got %s", util.escape(tostring(g)))
    end
    if s.ttft_ms == nil and s.tpot_ms == nil and s.e2e_ms == nil then
      util.raise("SLA field 'goodput' needs a target: ttft_ms, tpot_ms or e2e_ms")
    end
    s.goodput = g
  end
  return setmetatable(s, M.SLA)
end
M.SLA = {__name = "kvplan.SLA"}

--- Does simulation result r meet sla? true, or false and what it missed:
--- {target = "ttft"|"tpot"|"e2e", value (ms at the percentile), limit,
--- share (under goodput: the share of requests within every target)}.
function M.meets(r, sla)
  local worst
  if sla.goodput == nil or sla.percentile_given then
    for _, t in ipairs(targets) do
      local lim = sla[t .. "_ms"]
      if lim ~= nil then
        local v = r[t .. "_ms"][sla.percentile]
        if v > lim and (worst == nil or v / lim > worst.value / worst.limit) then
          worst = {target = t, value = v, limit = lim}
        end
      end
    end
    if worst then return false, worst end
  end
  if sla.goodput ~= nil then
    local met, miss = r:goodput(sla)
    local share = met / r.requests
    if share < sla.goodput then
      local t, most = nil, -1
      for _, k in ipairs(targets) do
        if sla[k .. "_ms"] ~= nil and miss[k] > most then t, most = k, miss[k] end
      end
      return false, {target = t, value = r[t .. "_ms"][sla.percentile], limit = sla[t .. "_ms"],
                     share = share, goodput = sla.goodput}
    end
  end
  return true
end

local function what_missed(f, sla, rate)
  local at = rate and string.format("at %s req/s ", util.fmt_num(rate)) or ""
  if f.share then
    return string.format("%s%.1f %% of requests meet every target, goodput %s asks %.1f %% (%s misses most)",
                         at, f.share * 100, util.fmt_num(f.goodput), f.goodput * 100, f.target)
  end
  return string.format("%sthe %s %s is %.1f ms, target %s ms", at, sla.percentile, f.target:upper(),
                       f.value, util.fmt_num(f.limit))
end
M.what_missed = what_missed

-- kv.simulate's options for deployment d, workload w at `rate` (nil: all at
-- time 0), with extra simulation options.
local function sim_options(d, w, rate, extra)
  local o = {}
  for k, v in pairs(d.options) do o[k] = v end
  o.gpu = d.gpu
  if d.gpu_bytes ~= d.gpu.visible_bytes then o.gpu_memory = d.gpu_bytes end
  if w.prefix ~= nil and o.prefix == nil then o.prefix = w.prefix end
  o.seed = 1
  for k, v in pairs(extra or {}) do o[k] = v end
  if w.trace then
    local t = w.trace
    local scale = (rate and w.rate) and w.rate / rate or 0
    local arr = {}
    for i, a in ipairs(t.arrival) do arr[i] = a * scale end
    o.trace = {arrival = arr, prompt_tokens = t.prompt_tokens, output_tokens = t.output_tokens}
  else
    o.requests, o.prompt, o.output, o.rate = w.requests, w.input, w.output, rate
  end
  return o
end

--- An upper bound of the rate one replica of d serves (requests a second),
--- from the ledger and the roofline alone, no simulation: the most requests
--- the KV cache holds at the mean prompt length plus one token (and at most
--- max_num_seqs), each decoding a token a step of the roofline at that
--- context (d:time), every step a decode of them all (no prefill time):
--- tokens a second over the mean output. Returns the bound and the
--- concurrency it assumed (0, 0 when none fits).
function M.rate_bound(d, wl)
  local w = M.workload(wl)
  local l = d:ledger()
  local ctx = math.max(1, math.floor(w.input_mean)) + 1
  local c = l:max_concurrency(ctx)
  local _, seqs = require("kvplan.deploy").engine_limits(d, d.options)
  if seqs and seqs < c then c = seqs end
  if c < 1 then return 0, 0 end
  local ok, t = pcall(require("kvplan.sim").time, d, ctx, c)
  if not ok then return math.huge, c end
  return t.tokens_per_s / w.output_mean, c
end

local function as_deployment(d)
  if getmetatable(d) == require("kvplan.deploy").Deployment then return d end
  if type(d) == "table" and d.options == nil then return require("kvplan").deploy(d) end
  if type(d) ~= "table" then util.raise("capacity needs a deployment (kv.deploy{...}), got %s", type(d)) end
  return d
end

--- plan.capacity(d, wl, sla [, opts]): the highest Poisson arrival rate
--- (requests a second) one replica of deployment d sustains while meeting
--- sla, found by simulation (see the head of this file). Returns {rate (0
--- when none), binding ("kv_memory"|"ttft"|"tpot"|"e2e"|"compute"|"start"),
--- at (the kv.simulate result at that rate; at 0, the one of the lowest
--- rate tried, nil when nothing ran), sims (simulations run), why (in
--- words), target (the target missed above the rate, nil when none was),
--- saturation_rate (requests a second with every request at time 0), next
--- (the rate tried above it that missed), lone (true when a request alone
--- was simulated)}. opts.simulate: more kv.simulate options (scheduler,
--- max_num_seqs, ...).
function M.capacity(d, wl, sla, opts)
  d = as_deployment(d)
  local w, s = M.workload(wl), M.sla(sla)
  opts = opts or {}
  util.check_keys(opts, {simulate = true}, "capacity options")
  local extra = opts.simulate
  local kv = require "kvplan"
  local out = {rate = 0, sims = 0}
  -- 1. the verdict at one request of the mean length
  local ctx = math.ceil(w.input_mean + w.output_mean)
  local fits, why, limit = d:ledger():fit(ctx, 1)
  if not fits then
    out.binding = limit == "kv" and "kv_memory" or "start"
    out.why = why
    return out
  end
  local function run(rate, more)
    out.sims = out.sims + 1
    local o = sim_options(d, w, rate, extra)
    for k, v in pairs(more or {}) do o[k] = v end
    local ok, r = pcall(kv.simulate, o)
    if ok then return r end
    local msg = tostring(r)
    if msg:find("cannot be served", 1, true) then
      return nil, msg:gsub("^.-:%d+: ", "", 1), msg:find("max_model_len", 1, true) and "start" or "kv_memory"
    end
    error(r, 0)
  end
  -- 2. saturation: every request at time 0
  local sat, err, kind = run(nil)
  if sat == nil then
    out.binding, out.why = kind, err
    return out
  end
  local mu = sat.requests_s
  out.saturation_rate = mu
  local function ceiling()
    local _, seqs = require("kvplan.deploy").engine_limits(d, d.options)
    seqs = (extra and extra.max_num_seqs) or seqs
    local held = d:ledger():max_concurrency(ctx)
    if w.output_mean > 1 and seqs and held < seqs then
      local okt, t = pcall(require("kvplan.sim").time, d, ctx, held)
      if okt and t.bound == "memory" then return "kv_memory" end
    end
    return "compute"
  end
  local function binding(r, f)
    if r.num_preemptions > 0 and f.target ~= "tpot" then return "kv_memory" end
    return f.target
  end
  -- 3. the saturation rate, then bisection below it
  local r = run(mu)
  local ok, f = M.meets(r, s)
  if ok then
    out.rate, out.at, out.binding = mu, r, ceiling()
    out.why = string.format("meets the SLA up to its saturation rate, %s req/s (%s)",
                            util.fmt_num(mu), out.binding == "kv_memory"
                            and "the KV cache holds fewer requests than max_num_seqs"
                            or "the step time and max_num_seqs limit it")
    return out
  end
  local lo, hi, r_lo, r_hi, f_hi = 0, mu, nil, r, f
  local function bisect(top)
    while hi - lo > M.tolerance * top do
      local mid = (lo + hi) / 2
      local rm = run(mid)
      local okm, fm = M.meets(rm, s)
      if okm then lo, r_lo = mid, rm else hi, r_hi, f_hi = mid, rm, fm end
    end
  end
  bisect(mu)
  if r_lo == nil then
    -- 4. one request at a time: the limit of a rate near 0
    out.lone = true
    local alone = run(nil, {max_concurrency = 1})
    local oka, fa = M.meets(alone, s)
    if not oka then
      out.at, out.binding, out.target = alone, fa.target, fa.target
      out.why = "cannot meet the SLA at any rate: one request at a time, " .. what_missed(fa, s)
      return out
    end
    bisect(hi)
  end
  if r_lo == nil then
    out.at, out.binding, out.target, out.next = r_hi, binding(r_hi, f_hi), f_hi.target, hi
    out.why = "meets the SLA only below " .. util.fmt_num(hi) .. " req/s: " .. what_missed(f_hi, s, hi)
    return out
  end
  out.rate, out.at, out.next = lo, r_lo, hi
  out.target, out.binding = f_hi.target, binding(r_hi, f_hi)
  out.why = what_missed(f_hi, s, hi) .. (out.binding == "kv_memory" and
            string.format(" (%d preemptions: requests wait for KV blocks)", r_hi.num_preemptions) or "")
  return out
end

return M
