-- stdlib/kvplan/disagg.lua: disaggregated prefill/decode (xPyD): the KV a
-- request moves from its prefill instance to its decode instance, and the
-- two pools sized apart (kv.plan's "disaggregated" mode).
-- Stdlib layer: the link facts and the policy are chosen here; the bytes are
-- the ledger's (engine/core/ledger.c kvp_ledger_seq_bytes: layer kinds,
-- sliding windows, MLA, hybrid states, whole blocks), the pools' times the
-- simulator's (kv.simulate phase = "prefill" | "decode", engine/core/sim.c).
--
--   local disagg = require "kvplan.disagg"
--   local p = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4}
--   local t = disagg.kv_transfer(p, p, 8192)
--   print(t.ms, t.bytes_per_gpu)   -- the KV of an 8192-token prompt, H100 to H100
--
-- The transfer of one request's prompt KV (DistServe, Zhong et al., OSDI 2024,
-- section 4.4: the KV moves once per request, after its prefill):
--   bytes on one GPU   max over the pipeline stages of l:seq_bytes(prompt, stage):
--                      the blocks the prompt fills on one GPU of that stage
--                      (a vLLM NixlConnector read moves whole blocks)
--   time               latency + max(sender bytes / sender link,
--                                    receiver bytes / receiver link)
--                      every GPU of the prefill instance sends its own share
--                      of the heads and layers at once over its own NIC, and
--                      every GPU of the decode instance receives its share
--                      over its own; a decode instance of another tp than the
--                      prefill's receives another share
--   link               opts.kv_link_gbps (GB/s one way a GPU), else the
--                      catalog's scaleout_gbps of the GPU's standard system
--                      (gpus_data.lua: DGX H100/H200/B200, 8x ConnectX-7
--                      400 Gb/s, one per GPU: 50 GB/s); a GPU without one
--                      needs kv_link_gbps
--   latency            opts.kv_link_latency_us, else M.link_latency_us
-- Not modelled: the prefill instance holding the blocks until the decode has
-- read them, the decode engine's steps between the KV's arrival and its
-- first token beyond the simulated queue, several requests sharing a NIC at
-- once (each request is given the whole link).

local util = require "kvplan.util"

local M = {}

-- Fixed cost of one request's KV transfer, microseconds: 6.7 ms, the average
-- "post duration" NIXL's telemetry measured for vLLM's NixlConnector READ of a
-- request of about 5,000 tokens (block 64), on the KV's arrival path
-- (vllm-project/vllm issue 50913, "[RFC]: Cutting P/D-disaggregation TTFT",
-- 2026; the same setup's whole transfer took ~29 ms, pull request 51919).
-- One measurement of one deployment: give yours (kv_link_latency_us).
M.link_latency_us = 6700

--- The link a deployment's GPUs send or receive KV over: GB/s one way for
--- one GPU and where the figure comes from; nil and why when neither the
--- options nor the catalog give one.
function M.link(d, opts)
  opts = opts or {}
  local g = opts.kv_link_gbps
  if g ~= nil then
    if type(g) ~= "number" or not (g > 0 and g < math.huge) then
      util.raise("field 'kv_link_gbps' must be a number > 0 (GB/s one way for one GPU), got %s",
                 util.shown(g))
    end
    return g, "kv_link_gbps"
  end
  local gpu = d.gpu
  if gpu.scaleout_gbps then return gpu.scaleout_gbps, gpu.scaleout or "catalog scaleout_gbps" end
  return nil, string.format("gpu '%s' has no scale-out link in the catalog (scaleout_gbps): give "
    .. "kv_link_gbps (GB/s one way for one GPU)", tostring(gpu.id or gpu.name or "custom"))
end

--- The latency of one transfer, microseconds (opts.kv_link_latency_us or
--- M.link_latency_us).
function M.latency_us(opts)
  local v = (opts or {}).kv_link_latency_us
  if v == nil then return M.link_latency_us end
  if type(v) ~= "number" or not (v >= 0 and v < math.huge) then
    util.raise("field 'kv_link_latency_us' must be a number >= 0 (microseconds), got %s", util.shown(v))
  end
  return v
end

--- KV bytes `tokens` prompt tokens hold on one GPU of deployment d (the most
--- of any pipeline stage) and on all its GPUs.
function M.kv_bytes(d, tokens)
  tokens = util.count(tokens, "tokens")
  local l = d:ledger()
  local most, all = 0, 0
  for s = 1, l.stages do
    local b = l:seq_bytes(tokens, s)
    if b > most then most = b end
    all = all + b * d.tp
  end
  return most, all
end

--- One request's KV transfer from prefill deployment p to decode deployment
--- dd for a prompt of `tokens` tokens: {ms, bytes (all GPUs of p), bytes_per_gpu
--- (one sender), bytes_per_receiver, link_gbps_prefill, link_gbps_decode,
--- latency_us}; nil and why when a link is unknown. opts: kv_link_gbps,
--- kv_link_latency_us.
function M.kv_transfer(p, dd, tokens, opts)
  local gp, why = M.link(p, opts)
  if gp == nil then return nil, why end
  local gd, why_d = M.link(dd, opts)
  if gd == nil then return nil, why_d end
  local lat = M.latency_us(opts)
  local send, all = M.kv_bytes(p, tokens)
  local recv = M.kv_bytes(dd, tokens)
  local s = math.max(send / (gp * 1e9), recv / (gd * 1e9))
  return {ms = lat / 1e3 + s * 1e3, bytes = all, bytes_per_gpu = send, bytes_per_receiver = recv,
          link_gbps_prefill = gp, link_gbps_decode = gd, latency_us = lat}
end

-- ---- the two pools sized apart (kv.plan's "disaggregated" mode) -----------------
--
-- For each prefill deployment P and decode deployment D on one GPU kind, with
-- the same weight and KV formats (the KV moves as it is), from the
-- deployments kv.plan resolved (ctx.deployments):
--   t        one request's transfer, disagg.kv_transfer(P, D, the mean prompt)
--   prefill  plan.capacity(P, wl, {ttft_ms}, {simulate = {phase = "prefill",
--            kv_transfer_ms = t}}): the highest rate one prefill instance
--            serves with TTFT = queue + prefill + transfer within the target
--   decode   plan.capacity(D, wl, {tpot_ms, e2e_ms - ttft_ms}, {simulate =
--            {phase = "decode"}}): the highest rate one decode instance serves
--            within the TPOT target (its queue for the first decode step
--            inside); an E2E target leaves the decode pool what the TTFT
--            target does not take (the sum of the two percentiles bounds the
--            percentile of the sum). Its arrivals are the prefill's Poisson
--            arrivals: a constant transfer shifts them all alike and changes
--            no latency counted from the KV's arrival
--   counts   x = ceil(rate / prefill capacity), y = ceil(rate / decode
--            capacity): every request passes once through each pool, so both
--            pools carry the whole rate (rate matching: x prefill replicas at
--            rate / x each, y decode replicas at rate / y each)
--   GPUs     x P.gpus + y D.gpus; cost their price
-- The SLA's goodput applies to each pool's own targets (a request meeting
-- both is not counted across the pools). A pair whose pool cannot meet its
-- target at any rate is returned with why.

local function price(d)
  return (d.options_time or {}).price_per_hour or d.gpu.price_per_hour
end

local function gpus_of(d) return d.tp * d.pp end

local function key(d)
  return table.concat({tostring(d.gpu.id), d.weights.name, d.kv.name}, "|")
end

--- The SLAs of the two pools from the service's SLA (checked by plan.sla).
function M.pool_slas(sla)
  local pre = {percentile = sla.percentile_given and sla.percentile or nil, goodput = sla.goodput}
  local dec = {percentile = pre.percentile, goodput = sla.goodput}
  pre.ttft_ms = sla.ttft_ms
  dec.tpot_ms = sla.tpot_ms
  if sla.e2e_ms ~= nil then
    local left = sla.e2e_ms - (sla.ttft_ms or 0)
    if not (left > 0) then return nil, nil, string.format(
      "the E2E target %s ms leaves the decode pool nothing after the TTFT target %s ms",
      util.fmt_num(sla.e2e_ms), util.fmt_num(sla.ttft_ms or 0)) end
    dec.e2e_ms = left
  end
  if pre.ttft_ms == nil then pre.goodput = nil end
  if dec.tpot_ms == nil and dec.e2e_ms == nil then dec.goodput = nil end
  return pre, dec
end

local function fmt(x) return util.fmt_num(x) end

--- Disaggregated candidates for kv.plan: ctx = {wl (plan.workload), sla
--- (plan.sla), rate, deployments (the deployments the search allows) and/or
--- candidates (kv.plan's aggregated candidates: their deployments, and the
--- best that serves the rate for vs_aggregated, the gain or loss), opts
--- = {kv_link_gbps =, kv_link_latency_us =, simulate = {...}}}. Returns a
--- list of candidates in kv.plan's shape with mode "disaggregated",
--- prefill = {...}, decode = {...} and kv_transfer_ms, each with why when it
--- cannot serve, and the simulations run.
function M.candidates(ctx)
  local plan = require "kvplan.plan"
  local w, sla = plan.workload(ctx.wl), plan.sla(ctx.sla)
  local rate = ctx.rate
  if type(rate) ~= "number" or not (rate > 0 and rate < math.huge) then
    util.raise("disaggregated candidates need a rate > 0 (requests a second), got %s", util.shown(rate))
  end
  local opts = ctx.opts or {}
  if ctx.opts == nil and ctx.spec ~= nil then -- kv.plan's own spec
    opts = {kv_link_gbps = ctx.spec.kv_link_gbps, kv_link_latency_us = ctx.spec.kv_link_latency_us,
            simulate = ctx.spec.simulate}
  end
  local extra = opts.simulate or {}
  local pre_sla, dec_sla, why_sla = M.pool_slas(sla)
  local out, sims = {}, 0
  -- the deployments by GPU kind and formats, each once
  local groups, order = {}, {}
  local deps, best_agg = {}, nil
  for _, d in ipairs(ctx.deployments or {}) do deps[#deps + 1] = d end
  -- kv.plan passes its aggregated candidates (each with its deployment and,
  -- when it serves the rate, its replicas and GPUs): the gain or loss is
  -- stated against the one of fewest GPUs
  for _, c in ipairs(ctx.candidates or {}) do
    -- a pool is a tensor-parallel instance (pp 1) that starts
    if c.deployment and c.fits ~= false and (c.pp or 1) == 1 then deps[#deps + 1] = c.deployment end
    if c.replicas and c.gpus and (best_agg == nil or c.gpus < best_agg.gpus
        or (c.gpus == best_agg.gpus and (c.cost_per_hour or math.huge) < (best_agg.cost_per_hour or math.huge))) then
      best_agg = c
    end
  end
  local seen = {}
  for _, d in ipairs(deps) do
    if seen[d] then goto continue end
    seen[d] = true
    local k = key(d)
    if groups[k] == nil then
      groups[k] = {}
      order[#order + 1] = k
    end
    table.insert(groups[k], d)
    ::continue::
  end
  local prompt = math.max(1, math.floor(w.input_mean + 0.5))
  local function with(t)
    local o = util.copy(extra)
    for k, v in pairs(t) do o[k] = v end
    return o
  end
  local dec_caps = {}
  local function decode_cap(dd)
    if dec_caps[dd] == nil then
      local c = plan.capacity(dd, w, dec_sla, {simulate = with{phase = "decode"}})
      sims = sims + c.sims
      dec_caps[dd] = c
    end
    return dec_caps[dd]
  end
  local pre_caps = {}
  local function prefill_cap(p, ms)
    local k = tostring(p) .. string.format("|%.17g", ms)
    if pre_caps[k] == nil then
      local c = plan.capacity(p, w, pre_sla, {simulate = with{phase = "prefill", kv_transfer_ms = ms}})
      sims = sims + c.sims
      pre_caps[k] = c
    end
    return pre_caps[k]
  end
  -- a pool's figures at its planned rate: one simulation of it
  local function at_rate(d, phase, ms, r)
    sims = sims + 1
    local o = util.copy(d.options)
    o.gpu = d.gpu
    if d.gpu_bytes ~= d.gpu.visible_bytes then o.gpu_memory = d.gpu_bytes end
    if w.prefix ~= nil and o.prefix == nil then o.prefix = w.prefix end
    for k, v in pairs(extra) do o[k] = v end
    o.seed, o.phase = 1, phase
    if phase == "prefill" then o.kv_transfer_ms = ms end
    if w.trace then
      local scale = w.rate and w.rate / r or 0
      local arr = {}
      for i, a in ipairs(w.trace.arrival) do arr[i] = a * scale end
      o.trace = {arrival = arr, prompt_tokens = w.trace.prompt_tokens, output_tokens = w.trace.output_tokens}
    else
      o.requests, o.prompt, o.output, o.rate = w.requests, w.input, w.output, r
    end
    return require("kvplan").simulate(o)
  end
  local pct = sla.percentile
  for _, k in ipairs(order) do
    local list = groups[k]
    for _, p in ipairs(list) do
      for _, dd in ipairs(list) do
        local c = {mode = "disaggregated", gpu = p.gpu.id, weights = p.weights.name, kv = p.kv.name,
                   tp = p.tp, pp = p.pp, dp = 1, ep = 1, deployment = p,
                   prefill = {gpu = p.gpu.id, tp = p.tp, pp = p.pp, deployment = p},
                   decode = {gpu = dd.gpu.id, tp = dd.tp, pp = dd.pp, deployment = dd}}
        out[#out + 1] = c
        local t, why_link = M.kv_transfer(p, dd, prompt, opts)
        if why_sla then
          c.why = why_sla
        elseif t == nil then
          c.why = why_link
        else
          c.kv_transfer_ms = t.ms
          c.kv_transfer_bytes = t.bytes
          local cp = prefill_cap(p, t.ms)
          local cd = decode_cap(dd)
          c.prefill.rate_per_replica, c.prefill.binding = cp.rate, cp.binding
          c.decode.rate_per_replica, c.decode.binding = cd.rate, cd.binding
          if not (cp.rate > 0) then
            c.why = "prefill pool: " .. (cp.why or cp.binding)
          elseif not (cd.rate > 0) then
            c.why = "decode pool: " .. (cd.why or cd.binding)
          else
            local x, y = math.ceil(rate / cp.rate - 1e-9), math.ceil(rate / cd.rate - 1e-9)
            local P, D = c.prefill, c.decode
            P.replicas, D.replicas = x, y
            P.gpus, D.gpus = x * gpus_of(p), y * gpus_of(dd)
            P.utilization, D.utilization = rate / (x * cp.rate), rate / (y * cd.rate)
            c.replicas, c.gpus = x + y, P.gpus + D.gpus
            c.rate_per_replica = math.min(cp.rate, cd.rate)
            c.binding = (P.gpus >= D.gpus and cp.binding or cd.binding)
            c.rate_matching = string.format("%dP%dD: %d prefill at %s req/s each (of %s), %d decode at "
              .. "%s req/s each (of %s)", x, y, x, fmt(rate / x), fmt(cp.rate), y, fmt(rate / y), fmt(cd.rate))
            local rp = at_rate(p, "prefill", t.ms, rate / x)
            local rd = at_rate(dd, "decode", t.ms, rate / y)
            c.ttft_ms = rp.ttft_ms[pct]
            c.tpot_ms = rd.tpot_ms[pct]
            c.e2e_ms = rp.ttft_ms[pct] + rd.e2e_ms[pct]
            P.ttft_ms, D.tpot_ms, D.ttft_ms = c.ttft_ms, c.tpot_ms, rd.ttft_ms[pct]
            c.tokens_per_s = rate * w.output_mean
            c.tokens_per_s_user = c.tpot_ms > 0 and 1e3 / c.tpot_ms or nil
            c.utilization = (P.utilization * P.gpus + D.utilization * D.gpus) / c.gpus
            if best_agg then
              local dg = c.gpus - best_agg.gpus
              c.vs_aggregated = string.format("%s the best aggregated (%d x %s tp %d pp %d: %d GPU%s)",
                dg == 0 and "as many GPUs as" or string.format("%d GPU%s %s than", math.abs(dg), math.abs(dg) == 1 and "" or "s", dg < 0 and "fewer" or "more"),
                best_agg.replicas, tostring(best_agg.gpu), best_agg.tp, best_agg.pp or 1, best_agg.gpus,
                best_agg.gpus == 1 and "" or "s")
            end
            local pp_, pd = price(p), price(dd)
            if pp_ and pd then
              c.cost_per_hour = P.gpus * pp_ + D.gpus * pd
              local out_h = rate * w.output_mean * 3600
              c.usd_per_mtok_output = c.cost_per_hour / out_h * 1e6
              c.usd_per_mtok_total = c.cost_per_hour / (rate * (w.input_mean + w.output_mean) * 3600) * 1e6
            end
          end
        end
      end
    end
  end
  return out, sims
end

return M
