-- stdlib/kvplan/pareto.lua: throughput against latency over deployments, the
-- Pareto front of tokens/s per GPU against tokens/s per user, kv.pareto{...}
-- (and `kvplan pareto`, scripts/pareto.lua).
-- Stdlib layer: a search (kv.best's) and simulations (kv.simulate's); every
-- figure is a simulation's.
--
--   local points, info = kv.pareto{model = "llama-3.1-8b", gpus = {"h100-sxm", "l40s"},
--                                  input = 1000, output = 200, tpot_ms = 20}
--   for _, p in ipairs(points) do
--     if p.pareto then print(p.gpu, p.tp, p.concurrency, p.tokens_per_s_gpu) end
--   end
--   print(info.sims)   -- simulations run
--
-- Candidates: kv.best's search (best.lua: GPU x every tp the heads allow x
-- pp x weight format x KV format), for one request of input + output tokens
-- (max_model_len is set to that, as a server for this workload would be
-- started); only the deployments that fit it and start are simulated, the
-- others are listed in info.skipped with best's why. Defaults differ from
-- best's to keep the simulations few: max_gpus 8 (one node) and pp 1 (give
-- pp = {1, 2} to try stages).
--
-- Each deployment is simulated (kv.simulate, its engine's scheduler) under
-- a client keeping `c` requests in flight (max_concurrency, as vLLM's
-- `vllm bench serve --max-concurrency`: every client starts at once) for c
-- on the ladder 1, 2, 4, 8, ... and the top rung itself: the most requests
-- of input + output tokens its KV cache holds (ledger:max_concurrency) or
-- its engine's max_num_seqs, whichever is smaller (past either, an added
-- client only waits in the queue: TTFT grows and nothing else). A given
-- `concurrency` list replaces the ladder (rungs above the top are dropped).
-- Requests a simulation: `requests` if given, else 8 per client and at least
-- 256 (so the first wave, when every client starts at once, is at most an
-- eighth of the requests). Seed 1: the same spec gives the same points.
--
-- A point (one deployment at one concurrency) has:
--   gpu, tp, pp, gpus (tp x pp), weights, kv, concurrency, requests
--   tokens_per_s       output tokens a second of the deployment (kv.simulate's
--                      throughput_tokens_s: output tokens / duration)
--   tokens_per_s_gpu   tokens_per_s / gpus
--   tokens_per_s_user  1000 / TPOT at the SLA's percentile (p90 by default):
--                      the streaming speed that share of users gets at
--                      least. TPOT, not output / e2e: e2e counts the wait for
--                      the first token, which TTFT reports on its own; and at
--                      the SLA's percentile so that the SLA line on the chart
--                      (1000 / tpot_ms) parts exactly the points that meet
--                      the TPOT target from those that do not
--   ttft_ms_p50, ttft_ms_p90, ttft_ms_p99, tpot_ms_p50, tpot_ms_p90,
--   tpot_ms_p99, e2e_ms_p90, e2e_ms_p99 (milliseconds, over the requests)
--   pareto             no other point has at least its tokens_per_s_gpu and
--                      its tokens_per_s_user and more of one (M.front: equal
--                      points are both on the front)
--   meets_sla          every target given is met at the percentile (nil
--                      without targets)
--   pareto_sla         on the front of the points that meet the SLA (nil
--                      without targets): with a TTFT or e2e target a point
--                      may be dominated only by points that miss it
--   why                the target missed by most (plan.what_missed; "" when
--                      met or none)
--   deployment         its kv.deploy
-- Points come in order of gpu, weights, kv, tp, pp, concurrency.
-- SLA fields, checked and met as kv.plan's (plan.sla, plan.meets): ttft_ms,
-- tpot_ms, e2e_ms (each optional, > 0), percentile "p50" | "p90" | "p99"
-- (default p90), goodput (the share of requests that must meet every
-- target; then the percentile applies only when given).

local util = require "kvplan.util"

local M = {}

local spec_fields = {
  model = true, gpus = true, input = true, output = true, tp = true, pp = true, weights = true,
  kv = true, max_gpus = true, concurrency = true, requests = true, ttft_ms = true,
  tpot_ms = true, e2e_ms = true, percentile = true, goodput = true, base = true,
  max_model_len = true,
}

M.targets = {"ttft_ms", "tpot_ms", "e2e_ms"}

--- The Pareto front of points on two axes to maximize: a list of booleans,
--- true where no other point is at least as high on both and higher on one.
--- x, y: the keys of the axes (default "x" and "y"). Equal points do not
--- dominate one another (both are on the front). O(n log n).
function M.front(points, x, y)
  x, y = x or "x", y or "y"
  if type(points) ~= "table" then util.raise("front needs a list of points, got %s", type(points)) end
  local idx = {}
  for i, p in ipairs(points) do
    if type(p) ~= "table" then util.raise("point %d must be a table, got %s", i, type(p)) end
    util.number(p[x], string.format("%s of point %d", x, i))
    util.number(p[y], string.format("%s of point %d", y, i))
    idx[i] = i
  end
  -- by x falling, then y falling: a point is dominated by one of higher x
  -- and at least its y, or by one of its x and higher y
  table.sort(idx, function(a, b)
    local pa, pb = points[a], points[b]
    if pa[x] ~= pb[x] then return pa[x] > pb[x] end
    if pa[y] ~= pb[y] then return pa[y] > pb[y] end
    return a < b
  end)
  local on, best, i = {}, -math.huge, 1
  while i <= #idx do
    local gx, top, j = points[idx[i]][x], points[idx[i]][y], i
    while j <= #idx and points[idx[j]][x] == gx do
      local py = points[idx[j]][y]
      on[idx[j]] = not (best >= py or top > py)
      j = j + 1
    end
    if top > best then best = top end
    i = j
  end
  return on
end

local function list(v, field)
  if v == nil then return nil end
  if type(v) ~= "table" then v = {v} end
  if #v == 0 then return nil end
  return v
end

--- The SLA of spec, checked by kv.plan's rule (plan.sla: ttft_ms, tpot_ms,
--- e2e_ms, each nil or > 0, percentile, goodput), and whether a target is
--- given.
function M.sla(spec)
  local t = {}
  for _, k in ipairs{"ttft_ms", "tpot_ms", "e2e_ms", "percentile", "goodput"} do t[k] = spec[k] end
  local sla = require("kvplan.plan").sla(t)
  return sla, sla.ttft_ms ~= nil or sla.tpot_ms ~= nil or sla.e2e_ms ~= nil
end

--- The ladder of client concurrencies below and at top: 1, 2, 4, ... and top.
function M.ladder(top)
  top = util.count(top, "top")
  local out, c = {}, 1
  while c < top do out[#out + 1] = c; c = c * 2 end
  out[#out + 1] = top
  return out
end

--- kv.pareto(spec): the points of every candidate deployment at every
--- concurrency of its ladder, marked (see the module comment), and info
--- {model, input, output (the means), sla, sims (simulations run),
--- deployments (simulated), skipped (candidates that do not fit or start:
--- {gpu, tp, pp, weights, kv, why}; and, with above = true, those that run
--- fewer requests at once than every concurrency asked), front (the points on the front, by
--- tokens_per_s_user rising)}.
function M.search(spec)
  if type(spec) ~= "table" then util.raise("pareto needs a table, got %s", type(spec)) end
  util.check_keys(spec, spec_fields, "pareto")
  local kv = require "kvplan"
  if spec.model == nil then util.raise("pareto needs a 'model'") end
  local model = kv.model(spec.model)
  for _, k in ipairs{"input", "output"} do
    if spec[k] == nil then util.raise("pareto needs '%s' (tokens per request)", k) end
  end
  -- lengths as kv.plan's workload takes them: tokens or distributions
  local w = require("kvplan.plan").workload{input = spec.input, output = spec.output}
  local input, in_mean, output, out_mean = w.input, w.input_mean, w.output, w.output_mean
  -- TPOT is the time between output tokens: one token has none
  if type(output) == "number" then util.count(output, "output", 2) end
  local sla, has_sla = M.sla(spec)
  local max_gpus = util.count(spec.max_gpus or 8, "max_gpus")
  local requests = spec.requests and util.count(spec.requests, "requests")
  local fixed = type(input) == "number" and type(output) == "number"
  local max_len = spec.max_model_len and util.count(spec.max_model_len, "max_model_len")
  if max_len == nil then max_len = fixed and input + output or model.max_context end
  if fixed and input + output > max_len then
    util.raise("field 'max_model_len' must hold input + output = %d tokens, got %d",
               input + output, max_len)
  end
  local ladder = list(spec.concurrency, "concurrency")
  if ladder then
    local seen, l = {}, {}
    for i, c in ipairs(ladder) do
      c = util.count(c, "concurrency item " .. i)
      if not seen[c] then seen[c], l[#l + 1] = true, c end
    end
    table.sort(l)
    ladder = l
  end
  local base = spec.base or {}
  if type(base) ~= "table" then util.raise("field 'base' must be a table of deployment options") end
  local pps = list(spec.pp, "pp") or {1}
  local weights = list(spec.weights, "weights") or {"native"}
  local kvs = list(spec.kv, "kv") or {"auto"}
  local context = math.ceil(in_mean + out_mean)

  local points, skipped, sims, simulated = {}, {}, 0, 0
  for _, wf in ipairs(weights) do
    for _, kf in ipairs(kvs) do
      local b = util.copy(base)
      b.max_model_len = max_len
      local ranked = kv.best{
        model = model, context = max_len, concurrency = 1, gpus = list(spec.gpus, "gpus"),
        weights = {wf}, kv = {kf}, tp = list(spec.tp, "tp"), pp = pps, max_gpus = max_gpus,
        base = b,
      }
      for _, c in ipairs(ranked) do
        -- a GPU without the rates step times need (a dense tensor rate, the
        -- interconnect under tp > 1) is skipped with why, as one that does not
        -- fit (every GPU by default: a10g ended the run)
        local no_rates
        if c.fits then
          local ok, err = pcall(c.deployment.time, c.deployment, context, 1)
          if not ok then no_rates = (tostring(err):gsub("^.-:%d+: ", "", 1)) end
        end
        if not c.fits or no_rates ~= nil then
          skipped[#skipped + 1] = {gpu = c.gpu, tp = c.tp, pp = c.pp, weights = c.weights, kv = c.kv,
                                   why = no_rates or c.why}
        else
          simulated = simulated + 1
          local o = util.copy(b)
          o.model, o.gpu, o.tp, o.pp = model, c.gpu, c.tp, c.pp
          o.weights, o.kv = wf ~= "native" and wf or nil, kf
          o.prompt, o.output, o.seed = input, output, 1
          local function run(n)
            o.max_concurrency = n
            o.requests = requests or math.max(256, 8 * n)
            sims = sims + 1
            return kv.simulate(o), o.requests
          end
          -- the top rung: what the KV cache holds, or the engine's limit
          local d = c.deployment
          local _, seqs = require("kvplan.deploy").engine_limits(d, b)
          -- one engine's, times its data_parallel_size engines (kv.simulate
          -- splits max_concurrency over them)
          local ranks = d.data_parallel_size or 1
          local top = math.max(math.min(d:ledger():max_concurrency(context), seqs), 1) * ranks
          -- every concurrency asked above what it holds: skipped with why
          -- (the command said "no deployment ... holds one request")
          if ladder and ladder[1] > top then
            skipped[#skipped + 1] = {gpu = c.gpu, tp = c.tp, pp = c.pp, weights = c.weights, kv = c.kv,
                                     above = true,
                                     why = string.format("it runs at most %d requests at once, below concurrency "
                                                         .. "%d, the least asked", top, ladder[1])}
          end
          for _, n in ipairs(ladder or M.ladder(top)) do
            if n > top then break end
            local r, nreq = run(n)
            local p = sla.percentile
            local per_user = r.tpot_ms[p] > 0 and 1000 / r.tpot_ms[p] or 0
            local pt = {
              gpu = c.gpu, tp = c.tp, pp = c.pp, gpus = c.gpus, weights = c.weights, kv = c.kv,
              concurrency = n, requests = nreq, tokens_per_s = r.throughput_tokens_s,
              tokens_per_s_gpu = r.throughput_tokens_s / c.gpus, tokens_per_s_user = per_user,
              ttft_ms_p50 = r.ttft_ms.p50, ttft_ms_p90 = r.ttft_ms.p90, ttft_ms_p99 = r.ttft_ms.p99,
              tpot_ms_p50 = r.tpot_ms.p50, tpot_ms_p90 = r.tpot_ms.p90, tpot_ms_p99 = r.tpot_ms.p99,
              e2e_ms_p90 = r.e2e_ms.p90, e2e_ms_p99 = r.e2e_ms.p99, deployment = r.deployment,
              why = "",
            }
            if has_sla then
              local plan = require "kvplan.plan"
              local ok, missed = plan.meets(r, sla)
              pt.meets_sla, pt.why = ok, ok and "" or plan.what_missed(missed, sla)
            end
            points[#points + 1] = pt
          end
        end
      end
    end
  end
  table.sort(points, function(a, b)
    if a.gpu ~= b.gpu then return a.gpu < b.gpu end
    if a.weights ~= b.weights then return a.weights < b.weights end
    if a.kv ~= b.kv then return a.kv < b.kv end
    if a.tp ~= b.tp then return a.tp < b.tp end
    if a.pp ~= b.pp then return a.pp < b.pp end
    return a.concurrency < b.concurrency
  end)
  local on = M.front(points, "tokens_per_s_gpu", "tokens_per_s_user")
  local front = {}
  for i, p in ipairs(points) do
    p.pareto = on[i]
    if on[i] then front[#front + 1] = p end
  end
  if has_sla then
    local ok = {}
    for _, p in ipairs(points) do if p.meets_sla then ok[#ok + 1] = p end end
    local on_ok = M.front(ok, "tokens_per_s_gpu", "tokens_per_s_user")
    for _, p in ipairs(points) do p.pareto_sla = false end
    for i, p in ipairs(ok) do p.pareto_sla = on_ok[i] end
  end
  table.sort(front, function(a, b)
    if a.tokens_per_s_user ~= b.tokens_per_s_user then return a.tokens_per_s_user < b.tokens_per_s_user end
    return a.tokens_per_s_gpu > b.tokens_per_s_gpu
  end)
  return points, {model = model, input = in_mean, output = out_mean, sla = has_sla and sla or nil,
                  percentile = sla.percentile,
                  sims = sims, deployments = simulated, skipped = skipped, front = front,
                  max_model_len = max_len}
end

-- A deployment's name on the chart: gpu and tp, and pp and the formats where
-- the points differ in them.
local function label(p, differ)
  local s = p.gpu .. " tp " .. p.tp
  if differ.pp then s = s .. " pp " .. p.pp end
  if differ.weights then s = s .. " w " .. p.weights end
  if differ.kv then s = s .. " kv " .. p.kv end
  return s
end

--- The chart of kv.pareto's points and info through kv.plot (gnuplot):
--- output tokens/s per user across, output tokens/s per GPU up, the front as
--- a line, each deployment's points in its own colour, the TPOT target (when
--- given) as a dashed line at 1000 / tpot_ms. opts: output (required),
--- width, height (default 900 x 500), title. Returns the output path.
function M.chart(points, info, opts)
  util.opts_of(opts, {output = true, width = true, height = true, title = true}, "pareto chart")
  local spec = M.chart_spec(points, info, opts)
  spec.output = opts.output
  return require("kvplan.plot").plot(spec)
end

--- The chart of M.chart as kv.plot's fields but `output` (an HTML report's
--- chart, kv.report's `chart`).
function M.chart_spec(points, info, opts)
  if type(points) ~= "table" or type(info) ~= "table" or info.front == nil then
    util.raise("pareto chart needs the points and the info kv.pareto returns")
  end
  local differ, first = {}, points[1] or {}
  for _, p in ipairs(points) do
    for _, k in ipairs{"pp", "weights", "kv"} do
      if p[k] ~= first[k] then differ[k] = true end
    end
  end
  local rows, front = {}, "Pareto front"
  for _, p in ipairs(info.front) do
    rows[#rows + 1] = {series = front, user = p.tokens_per_s_user, gpu = p.tokens_per_s_gpu}
  end
  for _, p in ipairs(points) do
    rows[#rows + 1] = {series = label(p, differ), user = p.tokens_per_s_user, gpu = p.tokens_per_s_gpu}
  end
  local sla = info.sla or {}
  local pct = sla.percentile or info.percentile or "p90"
  local gpus, seen = {}, {}
  for _, p in ipairs(points) do
    if not seen[p.gpu] then seen[p.gpu], gpus[#gpus + 1] = true, p.gpu end
  end
  local title = opts.title or string.format(
    "Pareto front: %s, %s input + %s output tokens, on %s", info.model.id,
    util.fmt_num(info.input), util.fmt_num(info.output), table.concat(gpus, ", "))
  local vline
  if sla.tpot_ms then
    vline = {x = 1000 / sla.tpot_ms,
             title = string.format("SLA: TPOT %s <= %s ms", pct, util.fmt_num(sla.tpot_ms))}
  end
  return {
    data = rows, x = "user", y = "gpu", by = "series", kind = "scatter", lines = {front},
    vline = vline, width = opts.width or 900, height = opts.height or 500,
    title = title, xlabel = string.format("output tokens/s per user (1000 / %s TPOT in ms)", pct),
    ylabel = "output tokens/s per GPU",
  }
end

--- `kvplan pareto` (scripts/pareto.lua) and `kvplan best ... pareto=yes`
--- (scripts/best.lua): opt, the command's arguments as kv.options parsed
--- them (input and output -1 when not given, lists {""} or {0} when not
--- given, 0 and "" for no target, front, chart); base, the deployment
--- options. Checks them (usage errors naming the argument), runs M.search,
--- says on stderr how many simulations ran (not under --quiet), writes the
--- report (kv.report) and, with chart, the chart (M.chart).
function M.command(opt, base)
  local kv = require "kvplan"
  local bad = kv.options.bad
  for _, k in ipairs{"input", "output"} do
    if opt[k] == -1 then bad("argument '%s' is required (tokens per request, e.g. %s=%d)", k, k,
                             k == "input" and 1000 or 200) end
  end
  if opt.input < 1 then bad("argument 'input' must be an integer >= 1 (prompt tokens), got '%d'", opt.input) end
  if opt.output < 2 then
    bad("argument 'output' must be an integer >= 2 (TPOT is the time between output tokens), got '%d'",
        opt.output)
  end
  if opt.percentile ~= "" and not require("kvplan.plan").percentiles[opt.percentile] then
    bad("argument 'percentile' must be p50, p90 or p99, got '%s'", kv.util.escape(opt.percentile, 64))
  end
  if opt.chart ~= "" then
    local ext = opt.chart:match("%.(%w+)$")
    if ext == nil or (ext:lower() ~= "png" and ext:lower() ~= "svg") then
      bad("argument 'chart' must name a .png or .svg file, got '%s'", kv.util.escape(opt.chart, 64))
    end
    require("kvplan.options").output("chart", opt.chart) -- not over an input of the run
  end
  local function given(l) return #l > 0 and l[1] ~= "" and l[1] ~= 0 and l or nil end
  for _, c in ipairs(given(opt.concurrency) or {}) do
    if c < 1 then bad("argument 'concurrency' must be integers >= 1, got '%d'", c) end
  end

  local spec = {
    model = opt.model, gpus = given(opt.gpus), input = opt.input, output = opt.output,
    tp = given(opt.tp), pp = given(opt.pp), max_gpus = opt.max_gpus, weights = given(opt.weights),
    kv = given(opt.kv), concurrency = given(opt.concurrency),
    requests = opt.requests > 0 and opt.requests or nil,
    percentile = opt.percentile ~= "" and opt.percentile or nil,
    base = base,
  }
  -- max_model_len is kv.pareto's own (default input + output)
  spec.max_model_len, spec.base.max_model_len = spec.base.max_model_len, nil
  if spec.max_model_len == "auto" then
    bad("argument 'max_model_len' = auto: pareto starts each deployment at input + output = %d tokens "
        .. "(the default) or at the count given, expected a count >= %d", opt.input + opt.output,
        opt.input + opt.output)
  end
  if spec.max_model_len and spec.max_model_len < opt.input + opt.output then
    bad("argument 'max_model_len' must hold input + output = %d tokens, got '%d'",
        opt.input + opt.output, spec.max_model_len)
  end
  for _, k in ipairs{"tpot_ms", "ttft_ms", "e2e_ms"} do
    if opt[k] > 0 then spec[k] = opt[k] end
  end
  if opt.goodput ~= 0 then
    if not (opt.goodput > 0 and opt.goodput <= 1) then
      bad("argument 'goodput' must be a fraction in (0, 1] (the share of requests meeting every "
          .. "target), got '%s'", opt.goodput)
    end
    if not (spec.tpot_ms or spec.ttft_ms or spec.e2e_ms) then
      bad("argument 'goodput' needs a target: tpot_ms, ttft_ms or e2e_ms")
    end
    spec.goodput = opt.goodput
  end
  local points, info = M.search(spec)
  if #points == 0 and info.deployments > 0 then
    local first
    for _, k in ipairs(info.skipped) do if k.above then first = first or k end end
    bad("argument 'concurrency': no deployment of %s with at most %d GPUs runs the concurrencies "
        .. "asked (%s tp %d: %s)", info.model.id, opt.max_gpus, first.gpu, first.tp, first.why)
  end
  if #points == 0 then
    local why = info.skipped[1] and (": " .. info.skipped[1].gpu .. " tp " .. info.skipped[1].tp .. ": "
                                     .. info.skipped[1].why) or ""
    error(string.format("no deployment of %s with at most %d GPUs holds one request of %d tokens and "
                        .. "starts%s", info.model.id, opt.max_gpus, info.max_model_len, why), 0)
  end
  if not (package.loaded["kvplan.cli"] or {}).quiet then
    local function n(k, what) return string.format("%d %s%s", k, what, k == 1 and "" or "s") end
    io.stderr:write(string.format("kvplan pareto: %s, %s; %s, %d on the front\n",
                                  n(info.deployments, "deployment"), n(info.sims, "simulation"),
                                  n(#points, "point"), #info.front))
  end

  local columns = {
    "gpu", "tp", "pp", "gpus", "weights", "kv", "concurrency", "requests",
    {"tokens_per_s", precision = 1}, {"tokens_per_s_gpu", precision = 1},
    {"tokens_per_s_user", precision = 2},
    {"ttft_ms_p50", precision = 1}, {"ttft_ms_p90", precision = 1}, {"ttft_ms_p99", precision = 1},
    {"tpot_ms_p50", precision = 2}, {"tpot_ms_p90", precision = 2}, {"tpot_ms_p99", precision = 2},
    {"e2e_ms_p90", precision = 1}, {"e2e_ms_p99", precision = 1}, "pareto",
  }
  if info.sla then
    for _, c in ipairs{"meets_sla", "pareto_sla", "why"} do columns[#columns + 1] = c end
  end
  local r = kv.report{columns = columns, chart = M.chart_spec(points, info, {})}
  for _, p in ipairs(points) do
    if p.pareto or not opt.front then
      local row = {}
      for _, c in ipairs(columns) do
        local name = type(c) == "table" and c[1] or c
        row[name] = p[name]
      end
      r:row(row)
    end
  end
  r:close()

  if opt.chart ~= "" then
    M.chart(points, info, {output = opt.chart})
  end
end

return M
