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
--   rates            the step time cannot be computed: the GPU catalog lacks
--                    a rate it needs (an interconnect for tp, pp or DP > 1:
--                    give the GPU's link_gbps, kv.gpus.load or a GPU table)
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
M.bindings = {"kv_memory", "ttft", "tpot", "e2e", "compute", "start", "rates"}

local wl_fields = {input = true, output = true, requests = true, prefix = true, trace = true}
local sla_fields = {ttft_ms = true, tpot_ms = true, e2e_ms = true, percentile = true, goodput = true}
local targets = {"ttft", "tpot", "e2e"}

local function length(v, field)
  local workload = require "kvplan.workload"
  if type(v) == "number" then
    local n = util.count(v, field, 1)
    -- the longest length the simulator draws (engine/core/optim.h
    -- KVP_MAX_LENGTH); input + output wrapped past 2^63 to a negative context
    if n > 1 << 40 then
      util.raise("workload field '%s' must be an integer in 1..2^40 tokens (the longest request kvplan "
                 .. "simulates), got %d", field, n)
    end
    return n, n
  end
  if getmetatable(v) == workload.Distribution then return v, v:mean() end
  util.raise("workload field '%s' must be a number of tokens >= 1 or a length distribution "
             .. "(kv.workload.lognormal{...}, ...), got %s", field, util.escape(util.shown(v)))
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
      util.raise("workload field 'prefix' must be {tokens =, hit_rate =}, got %s", util.escape(util.shown(p)))
    end
    util.check_keys(p, {tokens = true, hit_rate = true}, "workload prefix")
    if p.hit_rate ~= nil and p.hit_rate ~= 1 then
      -- the simulator caches one prefix every request shares (sim.c): a
      -- share of requests hitting it is not modelled, so not accepted
      util.raise("workload prefix 'hit_rate' must be 1 (the simulator models a prefix every "
                 .. "request shares), got %s", util.escape(util.shown(p.hit_rate)))
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
        util.raise("SLA field '%s' must be a number of milliseconds > 0, got %s", k, util.escape(util.shown(v)))
      end
      s[k] = v
    end
  end
  local p = sla.percentile
  if p ~= nil and not M.percentiles[p] then
    util.raise("SLA field 'percentile' must be p50, p90 or p99, got '%s'", util.escape(util.shown(p)))
  end
  s.percentile, s.percentile_given = p or "p90", p ~= nil
  if sla.goodput ~= nil then
    local g = sla.goodput
    if type(g) ~= "number" or not (g > 0 and g <= 1) then
      util.raise("SLA field 'goodput' must be a fraction in (0, 1] (the share of requests meeting "
                 .. "every target), got %s", util.escape(util.shown(g)))
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
  local o = util.copy(d.options)
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
--- when none), binding ("kv_memory"|"ttft"|"tpot"|"e2e"|"compute"|"start"|"rates"),
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
    -- a GPU the catalog gives no interconnect: this candidate cannot be
    -- timed, the others can (a whole-catalog search stopped at it)
    if msg:find("the GPUs' interconnect: field 'link_gbps'", 1, true) then
      return nil, string.format("no step time on gpu '%s': %s", d.gpu.id, (msg:gsub("^.-:%d+: ", "", 1))),
             "rates"
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
    -- halving [0, top] five times leaves top / 32 up to rounding: a
    -- relative slack keeps the rounding from running a sixth simulation
    while hi - lo > M.tolerance * top * (1 + 1e-9) do
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

-- ---- the search: kv.plan{...} ------------------------------------------------

local spec_fields = {
  model = true, input = true, output = true, rate = true, requests = true, prefix = true,
  trace = true, ttft_ms = true, tpot_ms = true, e2e_ms = true, percentile = true, goodput = true,
  gpus = true, tp = true, pp = true, weights = true, kv = true, max_num_seqs = true,
  max_num_batched_tokens = true, max_gpus = true, rank = true, modes = true, base = true,
  keep = true, simulate = true, kv_link_gbps = true, kv_link_latency_us = true,
}

M.ranks = {gpus = true, cost = true, usd_per_mtok = true}
M.modes = {aggregated = true, disaggregated = true}
-- Ranked candidates whose figures are exact (simulated); the rest of the
-- candidates are pruned when their lower bound of the rank's figure is
-- worse than the keep-th best found.
M.keep = 5

local function fmt2(x) return string.format("%.2f", x) end

-- a < b under a rank (nil: equal so far)
local orders = {
  gpus = function(a, b)
    if a.gpus ~= b.gpus then return a.gpus < b.gpus end
    if a.pp ~= b.pp then return a.pp < b.pp end
    if a.rate_per_replica ~= b.rate_per_replica then return a.rate_per_replica > b.rate_per_replica end
    return nil
  end,
  -- lowest cost per hour, then fewest GPUs, then fewest stages: kv.best's order
  cost = require("kvplan.best").orders.cost,
}
orders.usd_per_mtok = function(a, b)
  if a.usd_per_mtok_output ~= b.usd_per_mtok_output then
    return a.usd_per_mtok_output < b.usd_per_mtok_output
  end
  return orders.gpus(a, b)
end

local function tie(a, b)
  if a.mode ~= b.mode then return a.mode < b.mode end
  if a.gpu ~= b.gpu then return a.gpu < b.gpu end
  if a.weights ~= b.weights then return a.weights < b.weights end
  if a.kv ~= b.kv then return a.kv < b.kv end
  if a.tp ~= b.tp then return a.tp < b.tp end
  if a.pp ~= b.pp then return a.pp < b.pp end
  local ad, bd = a.decode and a.decode.tp or 0, b.decode and b.decode.tp or 0
  if ad ~= bd then return ad < bd end
  if (a.layout or "") ~= (b.layout or "") then return (a.layout or "") < (b.layout or "") end
  if (a.max_num_seqs or 0) ~= (b.max_num_seqs or 0) then return (a.max_num_seqs or 0) < (b.max_num_seqs or 0) end
  return (a.max_num_batched_tokens or 0) < (b.max_num_batched_tokens or 0)
end

local function label(c)
  if c.mode == "disaggregated" and c.prefill and c.decode and c.prefill.replicas then
    local P, D = c.prefill, c.decode
    return string.format("%s %dP%dD (prefill tp %d x pp %d, decode tp %d x pp %d)", c.gpu, P.replicas,
                         D.replicas, P.tp, P.pp or 1, D.tp, D.pp or 1)
  end
  local s = string.format("%s tp %d x pp %d", c.gpu, c.tp, c.pp)
  if c.layout then s = s .. " (" .. c.layout .. ")" end
  if c.replicas then s = s .. string.format(", %d replica%s", c.replicas, c.replicas == 1 and "" or "s") end
  return s
end

-- Why candidate c lost against the winner w under rank.
local function lost(c, w, rank)
  local win = label(w)
  if rank == "cost" and c.cost_per_hour ~= w.cost_per_hour then
    return string.format("costs %s/h, %s costs %s/h", fmt2(c.cost_per_hour), win, fmt2(w.cost_per_hour))
  end
  if rank == "usd_per_mtok" and c.usd_per_mtok_output ~= w.usd_per_mtok_output then
    return string.format("costs %s per million output tokens, %s costs %s", fmt2(c.usd_per_mtok_output),
                         win, fmt2(w.usd_per_mtok_output))
  end
  if c.gpus ~= w.gpus then
    if c.mode == "disaggregated" then
      return string.format("needs %d GPUs (%s), %s needs %d", c.gpus, label(c), win, w.gpus)
    end
    return string.format("needs %d GPUs (%d replica%s of %s req/s), %s needs %d", c.gpus, c.replicas,
                         c.replicas == 1 and "" or "s", fmt2(c.rate_per_replica), win, w.gpus)
  end
  if c.pp ~= w.pp then return string.format("%d pipeline stages, %s has %d", c.pp, win, w.pp) end
  if c.rate_per_replica ~= w.rate_per_replica then
    return string.format("serves %s req/s a replica, %s serves %s", fmt2(c.rate_per_replica), win,
                         fmt2(w.rate_per_replica))
  end
  return "ties with " .. win
end

-- The longest request of workload w: what max_model_len is set to.
local function longest(w, model)
  if w.trace then
    local most = 0
    for i = 1, #w.trace.arrival do
      most = math.max(most, w.trace.prompt_tokens[i] + w.trace.output_tokens[i])
    end
    return most
  end
  local function top(v) return type(v) == "number" and v or v.hi end
  local a, b = top(w.input), top(w.output)
  if a == nil or b == nil or a + b > (model.max_context or math.huge) then return nil end
  return math.floor(a + b)
end

--- The expert- and data-parallel layouts of a MoE model over the tp GPUs
--- of one stage, as engine (vllm or sglang) offers them (docs/time.md,
--- "data and expert parallelism"): a list of {layout (words), options (the
--- deployment fields that change), dp, ep, attention_dp}. Only the sizes
--- the experts and heads allow: an EP size dividing the routed experts
--- (every rank as many whole experts), a DP size dividing tp whose
--- attention TP (tp / dp) divides the attention heads. vLLM: EP over the tp
--- GPUs (enable_expert_parallel), and dp engines of tp / dp GPUs with EP
--- over all of them (data_parallel_size; DP without EP, its experts split
--- over dp x tp, is left out: no faster by the step time than tp alone and
--- a replica more to schedule); SGLang: ep_size = tp, attention DP of every
--- such dp_size, and attention DP = tp with ep_size = tp. Empty for a dense
--- model, tp 1 or another engine.
function M.parallel_layouts(model, engine, tp)
  local E, H = model.experts or 0, model.heads or 0
  local out = {}
  if E < 2 or tp < 2 or H < 1 then return out end
  local ep_ok = E % tp == 0
  local function add(layout, options, dp, ep, attn)
    out[#out + 1] = {layout = layout, options = options, dp = dp, ep = ep, attention_dp = attn}
  end
  if engine == "vllm" then
    if ep_ok then add("EP " .. tp, {enable_expert_parallel = true}, 1, tp, false) end
    for dp = 2, tp do
      if tp % dp == 0 and H % (tp // dp) == 0 and ep_ok then
        add(string.format("DP %d x tp %d, EP %d", dp, tp // dp, tp),
            {tp = tp // dp, data_parallel_size = dp, enable_expert_parallel = true}, dp, tp, false)
      end
    end
  elseif engine == "sglang" then
    if ep_ok then add("EP " .. tp, {ep_size = tp}, 1, tp, false) end
    for dp = 2, tp do
      if tp % dp == 0 and H % (tp // dp) == 0 then
        add(string.format("attention DP %d", dp), {data_parallel_size = dp, enable_dp_attention = true},
            dp, 1, true)
      end
    end
    if ep_ok then
      add(string.format("attention DP %d, EP %d", tp, tp),
          {data_parallel_size = tp, enable_dp_attention = true, ep_size = tp}, tp, tp, true)
    end
  end
  return out
end

-- The layouts of M.parallel_layouts for each candidate of all (one stage:
-- pp 1; a layout across pipeline stages is not searched) that fits, as
-- candidates of the same shape; each deployment is the candidate's with the
-- layout's fields.
local function parallel_candidates(model, all, ctx)
  local kv = require "kvplan"
  local deploy = require "kvplan.deploy"
  local out = {}
  for _, c in ipairs(all) do
    if c.fits and c.pp == 1 and c.tp > 1 then
      local d0 = c.deployment
      local engine = d0.budget
      for _, lay in ipairs(M.parallel_layouts(model, engine, c.tp)) do
        local o = util.copy(d0.options)
        for k, v in pairs(lay.options) do o[k] = v end
        local ok, d = pcall(kv.deploy, o)
        local v = {gpu = c.gpu, tp = ok and d.tp or o.tp or c.tp, pp = c.pp, weights = c.weights,
                   kv = c.kv, max_num_seqs = c.max_num_seqs,
                   max_num_batched_tokens = c.max_num_batched_tokens, layout = lay.layout,
                   dp = lay.dp, ep = lay.ep, attention_dp = lay.attention_dp}
        if ok then
          local l = d:ledger()
          local fits, why = l:fit(ctx, 1)
          v.deployment, v.fits, v.why = d, fits, why or ""
          v.gpus = deploy.gpus(d)
          v.max_concurrency = fits and l:max_concurrency(ctx) * l.data_parallel_size or 0
          v.per_gpu = v.max_concurrency / v.gpus
          v.weights_gib, v.kv_budget_gib = l.weights / 2^30, l.kv_budget / 2^30
          local price = d.gpu.price_per_hour
          if price then v.cost_per_hour = price * v.gpus end
        else
          v.fits, v.why, v.gpus = false, tostring(d):gsub("^[^:]*:%d+: ", ""), c.gpus
        end
        out[#out + 1] = v
      end
    end
  end
  return out
end

--- The latencies of ranked candidate c at the planned rate: one replica at
--- rate / replicas simulated (once), its percentiles set on c (ttft_ms,
--- tpot_ms, e2e_ms at the SLA's percentile, tokens_per_s_user = 1000 /
--- the mean TPOT, at = the result). kv.plan sets them on the first `keep`;
--- info is kv.plan's second result (its sims counts this one).
function M.planned(c, info)
  if c.at ~= nil or c.replicas == nil or c.mode ~= "aggregated" then return c end
  local r = require("kvplan").simulate(sim_options(c.deployment, info.workload, info.rate / c.replicas,
                                                   info.simulate))
  info.sims = info.sims + 1
  local p = info.sla.percentile
  c.at = r
  c.ttft_ms, c.tpot_ms, c.e2e_ms = r.ttft_ms[p], r.tpot_ms[p], r.e2e_ms[p]
  c.tokens_per_s_user = r.tpot_ms.mean > 0 and 1000 / r.tpot_ms.mean or nil
  return c
end

--- kv.plan(spec): the deployments and replicas that serve `rate` requests
--- a second of a workload under an SLA, ranked. See SCRIPTING.md
--- ("Planning a service") for the fields; returns the candidates (ranked
--- first, in rank order, then the rest: each says why) and info {model,
--- rate, workload, sla, rank, sims, simulated, pruned, candidates}.
function M.search(spec)
  if type(spec) ~= "table" then util.raise("plan needs a table, got %s", type(spec)) end
  util.check_keys(spec, spec_fields, "plan")
  local kv = require "kvplan"
  local best = require "kvplan.best"
  if spec.model == nil then util.raise("plan needs a 'model'") end
  local model = kv.model(spec.model)
  local rate = spec.rate
  if type(rate) ~= "number" or not (rate > 0 and rate < math.huge) then
    util.raise("field 'rate' must be a number > 0 (requests a second), got %s", util.escape(util.shown(rate)))
  end
  local w = M.workload{input = spec.input, output = spec.output, requests = spec.requests,
                       prefix = spec.prefix, trace = spec.trace}
  local s = M.sla{ttft_ms = spec.ttft_ms, tpot_ms = spec.tpot_ms, e2e_ms = spec.e2e_ms,
                  percentile = spec.percentile, goodput = spec.goodput}
  local rank = spec.rank or "gpus"
  if not M.ranks[rank] then
    util.raise("field 'rank' must be gpus, cost or usd_per_mtok, got '%s'", util.escape(util.shown(rank)))
  end
  local modes = spec.modes or {"aggregated"}
  if type(modes) ~= "table" then modes = {modes} end
  local want = {}
  for _, m in ipairs(modes) do
    if not M.modes[m] then
      util.raise("field 'modes' must list aggregated and/or disaggregated, got '%s'", util.escape(util.shown(m)))
    end
    want[m] = true
  end
  local keep = util.count(spec.keep or M.keep, "keep", 1)
  local base = util.copy(spec.base or {})
  -- a server for this workload is started with max_model_len its longest
  -- request (unless given): the model's default may not start (vLLM checks
  -- that one request of max_model_len fits the KV cache)
  if base.max_model_len == nil then base.max_model_len = longest(w, model) end
  local limits
  for _, k in ipairs{"max_num_seqs", "max_num_batched_tokens"} do
    if spec[k] ~= nil then
      limits = limits or {}
      limits[k] = type(spec[k]) == "table" and spec[k] or {spec[k]}
    end
  end
  -- (max_model_len = auto, vLLM's, is fitted by kv.deploy: the candidates are
  -- then searched at the longest request; "auto" was checked as the context)
  local ctx = type(base.max_model_len) == "number" and base.max_model_len or longest(w, model)
              or math.ceil(w.input_mean + w.output_mean)
  local all = (want.aggregated or want.disaggregated) and best.candidates{
    model = model, context = ctx, concurrency = 1, gpus = spec.gpus, weights = spec.weights,
    kv = spec.kv, tp = spec.tp, pp = spec.pp, max_gpus = spec.max_gpus, base = base, limits = limits,
  } or {}
  -- the disaggregated pools are drawn from the same deployments (kvplan.disagg:
  -- those that start, pp 1), simulated or not by the aggregated search
  local pools = all
  if not want.aggregated then all = {} end
  -- a MoE model: its expert- and data-parallel layouts beside tp alone
  -- (aggregated serving; the pools stay tp alone)
  if want.aggregated then
    local with = {}
    for _, c in ipairs(all) do with[#with + 1] = c end
    for _, v in ipairs(parallel_candidates(model, all, ctx)) do with[#with + 1] = v end
    all = with
  end
  local info = {model = model, rate = rate, workload = w, sla = s, rank = rank, sims = 0,
                simulated = 0, pruned = 0, candidates = #all, simulate = spec.simulate}
  local copts = spec.simulate and {simulate = spec.simulate} or nil

  -- the lower bound of a candidate's figure under the rank, from one
  -- replica's GPUs (static) or from the rate bound (ub)
  local function figure(c, replicas)
    local g = replicas * c.gpus
    if rank == "gpus" then return g end
    if c.cost_per_hour == nil then return math.huge end
    return replicas * c.cost_per_hour
  end
  local served, rest, values = {}, {}, {}
  local function threshold() return #values >= keep and values[keep] or math.huge end
  local function record(v)
    values[#values + 1] = v
    table.sort(values)
  end
  local to_time = {} -- the candidates that start and can be ranked: timed by their bound
  for _, c in ipairs(all) do
    c.mode, c.dp, c.ep = "aggregated", c.dp or 1, c.ep or 1
    if not c.fits then
      c.why = "cannot start: " .. c.why
      rest[#rest + 1] = c
    elseif rank ~= "gpus" and c.cost_per_hour == nil then
      c.why = string.format("no price_per_hour for gpu '%s' (kv.gpus.load_prices or prices=FILE)", c.gpu)
      rest[#rest + 1] = c
    else
      to_time[#to_time + 1] = c
    end
  end
  table.sort(to_time, function(a, b)
    local x, y = figure(a, 1), figure(b, 1)
    if x ~= y then return x < y end
    return tie(a, b)
  end)
  for _, c in ipairs(to_time) do
    if figure(c, 1) > threshold() then
      c.why = string.format("not simulated: one replica needs %d GPUs%s, more than %d ranked candidates need",
                            c.gpus, rank ~= "gpus" and string.format(" (%s/h)", fmt2(c.cost_per_hour)) or "",
                            keep)
      info.pruned = info.pruned + 1
      rest[#rest + 1] = c
    else
      local d = c.deployment
      local rates, no_rates = require("kvplan.sim").rates(d)
      local ub = rates and M.rate_bound(d, w) or 0
      local lb = ub > 0 and ub < math.huge and math.ceil(rate / ub) or 1
      if rates == nil then
        c.why = "no step times: " .. no_rates
        rest[#rest + 1] = c
      elseif ub <= 0 then
        c.why = "cannot serve a request of the workload: its KV cache holds none"
        rest[#rest + 1] = c
      elseif figure(c, lb) > threshold() then
        c.why = string.format("not simulated: at most %s req/s a replica by the roofline (%s), so at "
                              .. "least %d replicas, more than %d ranked candidates need", fmt2(ub),
                              "no prefill time, every step a decode of all it holds", lb, keep)
        info.pruned = info.pruned + 1
        rest[#rest + 1] = c
      else
        local cap = M.capacity(d, w, s, copts)
        info.sims, info.simulated = info.sims + cap.sims, info.simulated + 1
        c.capacity, c.binding, c.rate_per_replica = cap, cap.binding, cap.rate
        if cap.rate <= 0 then
          c.why = cap.why
          rest[#rest + 1] = c
        elseif math.type(math.ceil(rate / cap.rate)) ~= "integer"
               or math.ceil(rate / cap.rate) > math.maxinteger // c.gpus then
          -- rate = 1e308: 3.2e306 replicas, a float, and tokens_per_s inf; past
          -- 2^63 GPUs an integer that wraps (a negative count)
          c.why = string.format("needs %.6g replicas of %d GPUs (%s req/s a replica): more than "
                                .. "2^63 GPUs", rate / cap.rate, c.gpus, fmt2(cap.rate))
          rest[#rest + 1] = c
        else
          c.replicas = math.ceil(rate / cap.rate)
          c.gpus = c.replicas * c.gpus -- a replica's: tp x pp (x dp for vLLM's engines)
          c.cost_per_hour = c.cost_per_hour and c.cost_per_hour * c.replicas or nil
          record(rank == "gpus" and c.gpus or c.cost_per_hour)
          served[#served + 1] = c
        end
      end
    end
  end
  -- disaggregated prefill/decode: kvplan.disagg's candidates, in the same shape
  if want.disaggregated then
    local ok, disagg = pcall(require, "kvplan.disagg")
    if not ok or type(disagg.candidates) ~= "function" then
      util.raise("mode 'disaggregated' needs kvplan.disagg.candidates, which this build lacks")
    end
    local list, sims = disagg.candidates{model = model, wl = w, sla = s, rate = rate, spec = spec,
                                         base = base, candidates = pools}
    info.sims = info.sims + (sims or 0)
    for _, c in ipairs(list) do
      c.mode = "disaggregated"
      if c.replicas and not (rank ~= "gpus" and c.cost_per_hour == nil) then
        served[#served + 1] = c
      else
        if c.replicas then
          c.why = string.format("no price_per_hour for gpu '%s' (kv.gpus.load_prices or prices=FILE)", c.gpu)
        end
        rest[#rest + 1] = c
      end
    end
  end
  -- the figures at the planned rate: each replica gets rate / replicas
  local out_mean, in_mean = w.output_mean, w.input_mean
  for _, c in ipairs(served) do
    if c.mode ~= "aggregated" then goto next end -- the disaggregated pools' figures are disagg's
    c.utilization = rate / (c.replicas * c.rate_per_replica)
    c.tokens_per_s = rate * out_mean
    if c.cost_per_hour then
      local per_hour = rate * 3600 / 1e6
      c.usd_per_mtok_output = c.cost_per_hour / (per_hour * out_mean)
      c.usd_per_mtok_total = c.cost_per_hour / (per_hour * (in_mean + out_mean))
    end
    ::next::
  end
  if rank == "usd_per_mtok" then
    local priced = {}
    for _, c in ipairs(served) do
      if c.usd_per_mtok_output then priced[#priced + 1] = c
      else
        c.why = string.format("no price_per_hour for gpu '%s' (kv.gpus.load_prices or prices=FILE)", c.gpu)
        rest[#rest + 1] = c
      end
    end
    served = priced
  end
  local order = orders[rank]
  table.sort(served, function(a, b)
    local o = order(a, b)
    if o ~= nil then return o end
    return tie(a, b)
  end)
  for i, c in ipairs(served) do
    c.rank = i
    c.why = i == 1 and "" or lost(c, served[1], rank)
    if i <= keep then M.planned(c, info) end
  end
  -- a disaggregated candidate that does not serve has no GPU count (its
  -- pools were not sized): one replica of each pool's GPUs orders it
  local function gpus_of(c)
    if c.gpus then return c.gpus end
    local p, d = c.prefill or {}, c.decode or {}
    return (p.tp or c.tp) * (p.pp or c.pp or 1) + (d.tp or 0) * (d.pp or 1)
  end
  table.sort(rest, function(a, b)
    local x, y = gpus_of(a), gpus_of(b)
    if x ~= y then return x < y end
    return tie(a, b)
  end)
  for _, c in ipairs(rest) do served[#served + 1] = c end
  return served, info
end

return M
