-- stdlib/kvplan/best.lua: the cheapest deployments that serve a request
-- shape, kv.best{...} (and `kvplan best`, scripts/best.lua).
-- Stdlib layer: a search over deployments; every number is a ledger's.
--
--   local ranked = kv.best{model = "llama-3.1-70b", context = 32768, concurrency = 64,
--                          gpus = {"h100-sxm"}, kv = {"bf16"}}
--   print(ranked[1].tp, ranked[1].pp)   --> 8   2
--
-- The search covers GPU x tp x pp x weight format x KV format:
--   gpu      the given GPUs, default every plannable one (kv.gpus.all(): a
--            module of several devices, such as the MI250X, is planned as
--            one of its devices)
--   tp       every size the heads allow, not only powers of two: tp divides
--            the attention heads, and tp and the KV heads divide one another
--            (vLLM's and SGLang's checks; the ledger refuses the rest)
--   pp       1, 2, 3, ... while tp x pp <= max_gpus, pp <= layers and pp <= 64
-- A candidate serves the shape when `concurrency` requests of `context`
-- tokens fit its KV cache and its engine starts (ledger:fit, the verdict of
-- engine/core/starts.c), and, with a throughput target,
-- when its decode throughput at that concurrency (d:time) reaches it.
-- Ranking (rank = ...):
--   gpus         fewest GPUs, then fewest pipeline stages (each adds a
--                pipeline bubble), then the most concurrent requests
--   cost         lowest price per hour: GPUs x the GPU's price_per_hour
--                (a catalog column users fill, kv.gpus.load_prices(csv));
--                GPUs without a price are not ranked and say so
--   concurrency  the most requests of `context` tokens per GPU
-- Every other candidate gets `why`: what it lost on against the winner, or
-- why it does not serve the shape.

local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local spec_fields = {
  model = true, context = true, concurrency = true, gpus = true, weights = true, kv = true,
  tp = true, pp = true, max_gpus = true, rank = true, tokens_per_s = true, base = true,
}

M.ranks = {gpus = true, cost = true, concurrency = true}

--- The tensor-parallel sizes the model's heads allow, up to max.
function M.tp_sizes(model, max)
  local heads, kvh = model.heads, model.kv_heads or model.heads
  local out = {}
  for tp = 1, math.min(max, heads) do
    if heads % tp == 0 and (kvh % tp == 0 or tp % kvh == 0) then out[#out + 1] = tp end
  end
  return out
end

local function list(v, field)
  if v == nil then return nil end
  if type(v) ~= "table" then v = {v} end
  for i, x in ipairs(v) do
    if type(x) ~= "string" and type(x) ~= "table" and type(x) ~= "number" then
      util.raise("field '%s' item %d must be a name, got %s", field, i, type(x))
    end
  end
  return v
end

local function fmt_num(x)
  if math.type(x) == "integer" then return tostring(x) end
  return string.format("%.2f", x)
end

-- Order of candidates under a rank: a < b.
local orders = {
  gpus = function(a, b)
    if a.gpus ~= b.gpus then return a.gpus < b.gpus end
    if a.pp ~= b.pp then return a.pp < b.pp end
    if a.max_concurrency ~= b.max_concurrency then return a.max_concurrency > b.max_concurrency end
    return nil
  end,
  cost = function(a, b)
    if a.cost_per_hour ~= b.cost_per_hour then return a.cost_per_hour < b.cost_per_hour end
    if a.gpus ~= b.gpus then return a.gpus < b.gpus end
    if a.pp ~= b.pp then return a.pp < b.pp end
    return nil
  end,
  concurrency = function(a, b)
    if a.per_gpu ~= b.per_gpu then return a.per_gpu > b.per_gpu end
    if a.gpus ~= b.gpus then return a.gpus < b.gpus end
    if a.pp ~= b.pp then return a.pp < b.pp end
    return nil
  end,
}

M.orders = orders -- kv.plan ranks by cost as kv.best does

local function tie(a, b)
  if a.gpu ~= b.gpu then return a.gpu < b.gpu end
  if a.weights ~= b.weights then return a.weights < b.weights end
  if a.kv ~= b.kv then return a.kv < b.kv end
  return a.tp < b.tp
end

-- Why candidate c lost against the winner w under rank.
local function lost(c, w, rank)
  local win = string.format("%s tp %d x pp %d", w.gpu, w.tp, w.pp)
  if rank == "cost" then
    if c.cost_per_hour ~= w.cost_per_hour then
      return string.format("costs %s/h (%d GPUs), %s costs %s/h", fmt_num(c.cost_per_hour), c.gpus,
                           win, fmt_num(w.cost_per_hour))
    end
  elseif rank == "concurrency" then
    if c.per_gpu ~= w.per_gpu then
      return string.format("%.2f requests per GPU, %s serves %.2f", c.per_gpu, win, w.per_gpu)
    end
  end
  if c.gpus ~= w.gpus then
    return string.format("needs %d GPUs, %s needs %d", c.gpus, win, w.gpus)
  end
  if c.pp ~= w.pp then
    return string.format("%d pipeline stages, %s has %d", c.pp, win, w.pp)
  end
  if c.max_concurrency ~= w.max_concurrency then
    return string.format("holds %d requests, %s holds %d", c.max_concurrency, win, w.max_concurrency)
  end
  return "ties with " .. win
end

--- The candidates of a search, before any ranking: every GPU x tp x pp x
--- weight format x KV format (x the engine limits given as lists), each
--- with the memory verdict for `concurrency` requests of `context` tokens
--- (ledger:fit, in one sweep a weight and KV format: GPU x tp x pp in C).
--- s: model (required), context (default the model's max_context),
--- concurrency (1), gpus, weights, kv, tp, pp (lists; defaults in the head
--- of this file), max_gpus (64), base (deployment options), limits
--- ({max_num_seqs = {...}, max_num_batched_tokens = {...}}: lists, each an
--- axis; nil: the engine's defaults). Returns the candidates, each {gpu,
--- tp, pp, gpus, weights, kv, max_num_seqs, max_num_batched_tokens (the
--- axes' values, nil without them), fits, limit, why, max_concurrency,
--- per_gpu, weights_gib, kv_budget_gib, cost_per_hour (nil without a
--- price), deployment (its kv.deploy, built when first read)}, in sweep
--- order; and the resolved {model, context, concurrency, max_gpus}. kv.best
--- and kv.plan (plan.lua) both search these.
function M.candidates(s)
  local kv = require "kvplan"
  if s.model == nil then util.raise("best needs a 'model'") end
  local model = kv.model(s.model)
  local context = util.count(s.context or model.max_context, "context")
  local concurrency = util.count(s.concurrency or 1, "concurrency")
  local max_gpus = util.count(s.max_gpus or 64, "max_gpus")
  local gpus = list(s.gpus, "gpus") or kv.gpus.all()
  if #gpus == 0 then gpus = kv.gpus.all() end
  local weights = list(s.weights, "weights") or {"native"}
  local kvs = list(s.kv, "kv") or {"auto"}
  local tps = list(s.tp, "tp")
  local pps = list(s.pp, "pp")
  local base = s.base or {}
  if type(base) ~= "table" then util.raise("field 'base' must be a table of deployment options") end
  local limits = s.limits or {}
  -- data_parallel_size engines (or SGLang's attention-DP ranks) each hold
  -- their share of the requests: the sweep sizes one for ceil(concurrency /
  -- dp), the candidate counts dp of them (and their GPUs, except SGLang's
  -- attention-DP ranks, which share the tp GPUs: deploy.gpus)
  local dp = util.count(base.data_parallel_size or 1, "data_parallel_size")
  local engine_concurrency = (concurrency + dp - 1) // dp
  if tps == nil or #tps == 0 then
    -- the sizes the heads allow, and a layout of the base that divides tp
    -- (SGLang's attention DP: dp_size; ep_size) only where it does
    local div = base.enable_dp_attention and dp or 1
    local ep = util.count(base.ep_size or 1, "ep_size")
    tps = {}
    for _, tp in ipairs(M.tp_sizes(model, max_gpus)) do
      if tp % div == 0 and tp % ep == 0 then tps[#tps + 1] = tp end
    end
  end
  local gpu_dp = base.enable_dp_attention and 1 or dp -- as deploy.gpus counts them

  -- one sweep a weight and KV format: GPU x tp x pp in C, each candidate a row
  -- (kv.sweep each); pp 1, 2, ... up to max_gpus // tp and the layers
  local by_id, ids = {}, {}
  for i, g in ipairs(gpus) do
    local gpu = kv.gpus.check_plannable(kv.gpu(g))
    by_id[gpu.id], ids[i] = gpu, gpu.id
  end
  if pps == nil or #pps == 0 then
    pps = {}
    -- and the stages the core plans (KVP_MAX_PP): 65 stages of a 126-layer
    -- model under max_gpus = 100 failed the whole search
    for pp = 1, math.min(model.layers, max_gpus, require("kvplan.core").max_pp) do
      pps[#pps + 1] = pp
    end
    pps.upto = max_gpus
  end
  local all = {}
  for _, wf in ipairs(weights) do
    for _, kf in ipairs(kvs) do
      local opts = util.copy(base)
      opts.weights, opts.kv = wf ~= "native" and wf or nil, kf
      local function candidate(r)
        local tp, pp, gpu = r.tp, r.pp, by_id[r.gpu]
        local maxc, ngpu = r.max_concurrency * dp, tp * pp * gpu_dp
        local c = {
          gpu = gpu.id, tp = tp, pp = pp, gpus = ngpu, weights = r.weights, kv = r.kv,
          max_num_seqs = limits.max_num_seqs and r.max_num_seqs or nil,
          max_num_batched_tokens = limits.max_num_batched_tokens and r.max_num_batched_tokens or nil,
          fits = r.fits, limit = r.limit, max_concurrency = maxc,
          weights_gib = units.gib(r.weights_bytes), kv_budget_gib = units.gib(r.kv_budget_bytes),
          why = r.why, data_parallel_size = dp > 1 and dp or nil,
        }
        -- the candidate's deployment, built when read (d:time, or the caller)
        setmetatable(c, {__index = function(t, k)
          if k ~= "deployment" then return nil end
          local o = {}
          for f, v in pairs(opts) do o[f] = v end
          o.model, o.gpu, o.tp, o.pp = model, gpu, tp, pp
          o.max_num_seqs = rawget(t, "max_num_seqs") or o.max_num_seqs
          o.max_num_batched_tokens = rawget(t, "max_num_batched_tokens") or o.max_num_batched_tokens
          rawset(t, k, kv.deploy(o))
          return t[k]
        end})
        c.per_gpu = maxc / ngpu
        if gpu.price_per_hour then
          c.cost_per_hour = gpu.price_per_hour * ngpu
          -- a finite price times the GPUs past the largest double ranked an
          -- inf cost, then "column 'cost_per_hour' has no finite value"
          if c.cost_per_hour == math.huge then
            util.raise("price_per_hour of gpu '%s' = %s: the cost of %d GPUs exceeds the largest double "
                       .. "(expected USD per GPU hour)", gpu.id, util.shown(gpu.price_per_hour), ngpu)
          end
        end
        all[#all + 1] = c
      end
      local sw = {
        model = model, gpu = ids, tp = tps, pp = pps, context = context,
        concurrency = engine_concurrency,
        base = opts, columns = {"fits"},
        -- tp <= upto // pp: tp * pp wrapped past 2^63 (tp=1e18 kept "-446744073709551616 GPUs")
        filter = pps.upto and function(r) return r.tp <= pps.upto // r.pp // gpu_dp end or nil,
      }
      for k, v in util.sorted_pairs(limits) do sw[k] = list(v, k) end
      kv.sweep(sw):each(candidate)
    end
  end
  return all, {model = model, context = context, concurrency = concurrency, max_gpus = max_gpus,
               data_parallel_size = dp}
end

--- kv.best(spec): every candidate, ranked: a list of tables {rank (nil when
--- it does not serve the shape), gpu, tp, pp, gpus, weights, kv, fits,
--- limit, max_concurrency, per_gpu, cost_per_hour (nil without a price),
--- tokens_per_s (with a target), why ("" for rank 1), deployment (its
--- kv.deploy, built when first read)}, servers first in
--- rank order, then the rest. spec: model, context, concurrency, gpus,
--- weights, kv, tp, pp (lists; defaults above), max_gpus (64), rank
--- ("gpus"), tokens_per_s (a decode throughput target, 0: none), base (other
--- deployment options, e.g. {utilization = 0.85}).
function M.search(spec)
  if type(spec) ~= "table" then util.raise("best needs a table, got %s", type(spec)) end
  util.check_keys(spec, spec_fields, "best")
  local rank = spec.rank or "gpus"
  if not M.ranks[rank] then
    util.raise("field 'rank' must be gpus, cost or concurrency, got '%s'", util.shown(rank))
  end
  local target = spec.tokens_per_s or 0
  if type(target) ~= "number" or target < 0 or target ~= target then
    util.raise("field 'tokens_per_s' must be a number >= 0, got %s", util.shown(target))
  end
  local all, shape = M.candidates(spec)
  local context, concurrency = shape.context, shape.concurrency
  for _, c in ipairs(all) do
    if c.fits and target > 0 then
      local d = c.deployment
      -- each of the dp ranks decodes its share of the requests (d:time's
      -- concurrency is a rank's; its tokens_per_s counts every rank)
      local dp = shape.data_parallel_size
      local ok, t = pcall(d.time, d, context, (concurrency + dp - 1) // dp)
      if not ok then
        c.fits, c.why = false, "no throughput: " .. tostring(t):gsub("^.-:%d+: ", "", 1)
      else
        c.tokens_per_s = t.tokens_per_s
        if t.tokens_per_s < target then
          c.fits = false
          c.why = string.format("decodes %.0f tokens/s at %d requests, target %s",
                                t.tokens_per_s, concurrency, fmt_num(target))
        end
      end
    end
    if c.fits and rank == "cost" and c.cost_per_hour == nil then
      c.fits = false
      c.why = string.format("no price_per_hour for gpu '%s' (kv.gpus.load_prices or prices=FILE)",
                            c.gpu)
    end
  end
  local order = orders[rank]
  local servers, rest = {}, {}
  for _, c in ipairs(all) do
    if c.fits then servers[#servers + 1] = c else rest[#rest + 1] = c end
  end
  table.sort(servers, function(a, b)
    local o = order(a, b)
    if o ~= nil then return o end
    return tie(a, b)
  end)
  table.sort(rest, function(a, b)
    if a.gpus ~= b.gpus then return a.gpus < b.gpus end
    return tie(a, b)
  end)
  for i, c in ipairs(servers) do
    c.rank = i
    c.why = i == 1 and "" or lost(c, servers[1], rank)
  end
  for _, c in ipairs(rest) do servers[#servers + 1] = c end
  return servers, {model = shape.model, context = context, concurrency = concurrency, rank = rank}
end

--- Prices per GPU-hour from a CSV file with columns gpu (or id) and
--- price_per_hour: set on the catalog's GPUs (by id or alias). Returns the
--- number of GPUs priced.
function M.load_prices(path)
  local csv = require "kvplan.csv"
  local gpus = require "kvplan.gpus"
  local rows, lines = csv.read(path)
  if rows == nil then util.raise("%s", lines) end
  if #rows == 0 then util.raise("%s: empty file (expected columns gpu, price_per_hour)", path) end
  local col = {}
  -- a column named twice, a GPU priced twice: refused (the last one won, and a
  -- second 'gpu' column of other GPUs left these unpriced without a word)
  for i, name in ipairs(rows[1]) do
    local k = util.norm(name)
    if col[k] or (k == "id" and col.gpu) or (k == "gpu" and col.id) then
      util.raise("%s:%d: column '%s' appears twice (expected one gpu column and one price_per_hour)", path,
                 lines[1], util.escape(util.trim(name), 60))
    end
    col[k] = i
  end
  local gcol = col["gpu"] or col["id"]
  local pcol = col["price-per-hour"]
  if gcol == nil or pcol == nil then
    util.raise("%s:%d: expected columns 'gpu' and 'price_per_hour', got '%s'", path, lines[1],
               table.concat(rows[1], ","))
  end
  local n, seen = 0, {}
  for r = 2, #rows do
    local name, p = rows[r][gcol], rows[r][pcol]
    if name ~= nil and name ~= "" then
      local ok, g = pcall(gpus.get, name)
      if not ok then util.raise("%s:%d: %s", path, lines[r], util.shown(g):gsub("^.-:%d+: ", "", 1)) end
      local x = #(p or "") <= 64 and util.decimal_number(p or "") or nil -- '0x10' was 16
      if x == nil or x ~= x or x < 0 or x == math.huge then
        util.raise("%s:%d: price_per_hour of '%s' must be a number >= 0, got '%s'", path, lines[r],
                   name, util.shown(p))
      end
      if seen[g.id] then
        util.raise("%s:%d: gpu '%s' is priced twice (line %d, as '%s'; expected one price a GPU)", path,
                   lines[r], g.id, seen[g.id][1], util.escape(seen[g.id][2], 60))
      end
      seen[g.id] = {lines[r], name}
      g.price_per_hour = x
      n = n + 1
    end
  end
  return n
end

return M
