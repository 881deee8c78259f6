-- stdlib/kvplan/sweep.lua: cartesian sweeps, evaluated in C and streamed to CSV.
-- Stdlib layer: the axes are resolved here once; the row loop is the core's
-- (engine/core/sweep.c) and the rows go straight to the writer (engine/io/csvw.c).
--
--   kv.sweep{
--     model = {"llama-3.1-8b", "llama-3.1-70b"}, gpu = {"h100-sxm", "a100-sxm-80gb"},
--     tp = {1, 2, 4, 8}, context = {8192, 32768}, concurrency = {1, 16}, kv = {"bf16", "fp8"},
--     base = {utilization = 0.9, overhead = "1 GiB"},
--     columns = {"model", "gpu", "tp", "kv", "context", "concurrency", "max_concurrency", "fits"},
--   }:write "capacity.csv"
--
-- Axes, outermost first (the row order): model, gpu, optim, then any other
-- deployment option given as a list (sorted by name), then the script's own
-- `vars = {name = {values}}` (sorted by name; seen by Lua columns and
-- filters, printable as columns), then tp, pp, kv, weights, context,
-- concurrency. The first group is expanded here into
-- deployments (one kv.deploy each); the second is looped over in C.
-- Memory: each deployment built here is built when its rows start and
-- dropped once they are written (sweep_core.run asks for it), so 10x the
-- models holds no more than 1x; its model and GPU are looked up when the
-- sweep is made, its other checks come when it is built (at :write).
-- Speed: the C path writes millions of rows a second. A `filter` or a Lua
-- column calls Lua for every row: one row table for the whole sweep,
-- updated in place (sweep_lua.c push_row), and a call: about 40-100 ns a
-- row each on the machine of the README's figures, against about 60 ns for
-- the whole row in C.

local core = require "kvplan.sweep_core"
local util = require "kvplan.util"
local units = require "kvplan.units"
local formats = require "kvplan.formats"
local deploy = require "kvplan.deploy"
local gpus = require "kvplan.gpus"
local models = require "kvplan.models"
local engines = require "kvplan.engines"

local M = {}

-- Columns of step times (roofline.c): they need each deployment's GPU rates.
local time_columns = {tpot_ms = true, ttft_ms = true, tokens_per_s = true, bound = true,
                      kv_read_share = true, usd_per_mtok = true, steps_per_token = true,
                      kv_write_bytes_per_token = true}
-- Their ranges: the same figures with every factor of the step time at the
-- slow or the fast end of its uncertainty (kvplan.factors ends, per base:
-- a profile's interval, else the default spread).
local range_columns = {tpot_ms_lo = true, tpot_ms_hi = true, ttft_ms_lo = true, ttft_ms_hi = true,
                       tokens_per_s_lo = true, tokens_per_s_hi = true}
for k in pairs(range_columns) do time_columns[k] = true end

local Sweep = {}
Sweep.__index = Sweep
Sweep.__name = "kvplan.Sweep"

local c_axes = {tp = true, pp = true, kv = true, weights = true, context = true, concurrency = true}
local reserved = {columns = true, filter = true, base = true, model = true, gpu = true, optim = true,
                  vars = true}

-- Declarative filters: {column = condition, ...}, every condition met. The
-- columns are the built-in integer columns, `fits`, `starts` and `limit`; a condition
-- is a value (equal to it) or {op, value} with op one of == ~= < <= > >=.
-- The core evaluates them per row without calling Lua.
local filter_columns = {}
for _, n in ipairs{"row", "tp", "pp", "context", "concurrency", "gpu_bytes", "usable_bytes",
                   "weights_bytes", "activation_bytes", "overhead_bytes", "kv_budget_bytes",
                   "seq_bytes", "kv_blocks", "kv_tokens", "max_concurrency", "max_context",
                   "usable_bytes_per_gpu", "weights_bytes_per_gpu", "activation_bytes_per_gpu",
                   "overhead_bytes_per_gpu", "kv_budget_bytes_per_gpu"} do
  filter_columns[n] = "integer"
end
filter_columns.fits, filter_columns.starts, filter_columns.limit = "boolean", "boolean", "string"
local filter_ops = {["=="] = true, ["~="] = true, ["<"] = true, ["<="] = true, [">"] = true,
                    [">="] = true}

--- The core's rules of a declarative filter: {{column, op, value}, ...}
--- (sorted by column; fits as 1 or 0), each condition checked here.
function M.filter_rules(filter)
  if getmetatable(filter) ~= nil or filter[1] ~= nil then
    util.raise("field 'filter' must be a function or a table {column = condition, ...}")
  end
  local names = {}
  for _, k in ipairs(util.sorted_keys(filter)) do
    if type(k) ~= "string" or filter_columns[k] == nil then
      local known = util.sorted_keys(filter_columns)
      util.raise("filter: unknown column '%s' (a filter table takes %s; use a function for others)",
                 util.shown(k), table.concat(known, ", "))
    end
    names[#names + 1] = k
  end
  table.sort(names)
  local rules = {}
  for _, name in ipairs(names) do
    local cond, kind = filter[name], filter_columns[name]
    local op, v = "==", cond
    if type(cond) == "table" then
      op, v = cond[1], cond[2]
      if not filter_ops[op] or #cond ~= 2 then
        util.raise("filter: condition of '%s' must be a value or {op, value} with op one of "
                   .. "==, ~=, <, <=, >, >=, got {%s, %s}", name, util.shown(cond[1]), util.shown(cond[2]))
      end
    end
    if kind == "integer" then
      if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^63 then v = math.tointeger(v) end
      if math.type(v) ~= "integer" then
        util.raise("filter: '%s' takes an integer, got %s", name, util.shown(v))
      end
    elseif kind == "boolean" then
      if type(v) ~= "boolean" or (op ~= "==" and op ~= "~=") then
        util.raise("filter: '%s' takes true or false (or {\"==\"|\"~=\", true|false}), got %s",
                   name, util.shown(v))
      end
      v = v and 1 or 0
    elseif type(v) ~= "string" or (op ~= "==" and op ~= "~=") then
      util.raise("filter: 'limit' takes a limit's name (or {\"==\"|\"~=\", name}), got %s", util.shown(v))
    end
    rules[#rules + 1] = {name, op, v}
  end
  return rules
end

local function list(v)
  if type(v) == "table" and getmetatable(v) == nil and v[1] ~= nil then return v end
  return {v}
end

local function builtin_set()
  local s = {}
  for _, n in ipairs(core.columns()) do s[n] = true end
  return s
end

-- The value a Lua column sees for axis a at position p: the user's own value
-- for vars, the printed label otherwise (model id, gpu id, optim name, ...).
local function a_value(a, p, label)
  if a ~= nil and a.var then return a[2][p] end
  return label
end

local function optim_name(combo)
  local optim = require "kvplan.optim"
  return optim.name(combo)
end

-- Options given as lists that the core sets on the deployment itself (its
-- field name in sweep_core: the field's spec key), looped in C without
-- building a deployment: the registry's sweep fields (fields.lua).
local c_fields, byte_fields, registry = {}, {}, require "kvplan.fields"
for _, f in ipairs(registry.list) do
  if f.sweep then c_fields[f.name], byte_fields[f.name] = registry.key(f), f.type == "bytes" or nil end
end

-- vLLM's predicted activation peak (a vision tower's encoder run included),
-- non-torch memory and default max_num_seqs, TensorRT-LLM's dry run,
-- SGLang's default fractions (by tp, or by the GPU's memory, tp and pp) and
-- MXFP4 experts as loaded depend on the GPU, max_model_len,
-- max_num_batched_tokens, max_num_seqs, tp and pp, but the core predicts
-- them again per deployment of its axes (each base's engine rule,
-- engine/core/predict.c kvp_predict_deploy), so those stay C axes: the GPU
-- axis carries each GPU's memory and the facts the rule reads of it
-- (deploy.gpu_facts: the A100 name, the MXFP4 kernel's layout).

-- Decide which axes the core loops (a.field = its field) and which are
-- expanded here into deployments (a.field = "base"). An option list is a C
-- axis unless an optimization combination of the sweep rewrites that option:
-- each combination is applied once to the first options and once to the
-- second ones (a combination that passes both through leaves the option
-- alone). The GPU axis sets the GPU memory and its facts, or the facts alone
-- when a gpu_memory is given. With time columns the GPU stays a deployment
-- (its rates).
local function place_axes(spec, base, axes, timed, dspec, hooked, sglang)
  local cand, first, second = {}, {}, {}
  for _, a in ipairs(axes) do
    local k = a[1]
    if not a.var and (c_fields[k] or k == "gpu") then
      cand[k] = true
      first[k], second[k] = a[2][1], a[2][math.min(2, #a[2])]
    end
  end
  local gpu_memory = spec.gpu_memory ~= nil or base.gpu_memory ~= nil
  -- an engine rule in Lua: every option list is a deployment built here
  if hooked then cand = {} end
  -- step times take each base deployment's GPU rates (kvplan.sim perf)
  if timed then cand.gpu = nil end
  -- SGLang's weights rule applies only when weight_bytes is not given
  if sglang then cand.weight_bytes = nil end
  if spec.optim ~= nil and next(cand) ~= nil then
    local optim = require "kvplan.optim"
    for _, combo in ipairs(list(spec.optim)) do
      for _, vals in ipairs{first, second} do
        local opts = util.copy(base)
        opts.model = list(spec.model)[1]
        for k, v in pairs(vals) do opts[k] = v end
        local ok, o2 = pcall(optim.apply, opts, combo)
        for k in pairs(cand) do
          if not ok or o2[k] ~= opts[k] then cand[k] = nil end
        end
        if cand.gpu and o2.gpu_memory ~= opts.gpu_memory then cand.gpu = nil end
      end
    end
  end
  for _, a in ipairs(axes) do
    if a.var then a.field = "none"
    elseif a[1] == "optim" and dspec.optim == nil then a.field = "optim"
    elseif a[1] == "gpu" and cand.gpu then a.field = gpu_memory and "gpu" or "gpu_memory"
    elseif cand[a[1]] then a.field = c_fields[a[1]]
    else a.field = "base" end
  end
end

-- The budget of the sweep whose reserves are an engine rule in Lua
-- (deploy.budgets[name].reserves), or nil: the core cannot predict such a
-- deployment again, so the sweep builds every one in Lua (kv.deploy a
-- deployment: the model, the GPU, the options given as lists, tp and pp).
-- An optimization combination may choose any budget.
local function lua_rule(spec, base)
  local names = {}
  if spec.optim ~= nil then
    names = util.sorted_keys(deploy.budgets)
  else
    for _, field in ipairs{"budget", "engine"} do
      for _, b in ipairs(list(spec[field] or base[field] or "vllm")) do names[#names + 1] = b end
    end
  end
  for _, b in ipairs(names) do
    local rule = deploy.budgets[b]
    if rule and rule.reserves ~= nil then return b end
  end
  return nil
end

-- Whether a deployment of the sweep may be SGLang's (its budget or engine
-- lists, the base's, or an optimization combination's): its weights rule
-- reads whether weight_bytes is given (deploy.sglang_weights), so a
-- weight_bytes list stays an axis of deployments built here; tp, pp, the
-- weight format and the GPU stay C axes (weights_table below).
local function may_be_sglang(spec, base)
  if spec.optim ~= nil then return true end
  for _, field in ipairs{"budget", "engine"} do
    for _, b in ipairs(list(spec[field] or base[field] or "vllm")) do
      if b == "sglang" then return true end
    end
  end
  return false
end

--- A sweep from axes and columns (see the module comment).
function M.new(spec)
  if type(spec) ~= "table" then util.raise("sweep needs a table of axes, got %s", type(spec)) end
  if spec.model == nil then util.raise("sweep needs a 'model' axis") end
  if spec.gpu == nil and (spec.base == nil or spec.base.gpu_memory == nil) then
    util.raise("sweep needs a 'gpu' axis")
  end
  if spec.columns == nil then util.raise("sweep needs 'columns'") end
  for _, k in ipairs(util.sorted_keys(spec)) do -- of several unknown axes, the same one every run
    if type(k) ~= "string" or (not reserved[k] and not c_axes[k] and not deploy.fields[k]) then
      local names = util.sorted_keys(deploy.fields)
      for n in pairs(reserved) do names[#names + 1] = n end
      for n in pairs(c_axes) do if not deploy.fields[n] then names[#names + 1] = n end end
      util.raise("unknown sweep axis '%s'%s", util.shown(k), util.suggest(util.shown(k), names))
    end
  end
  local base = spec.base or {}
  util.check_keys(base, deploy.fields, "sweep base")
  -- an empty list is an axis with no value: no rows, never "the default"
  local function empty(v) return type(v) == "table" and getmetatable(v) == nil and next(v) == nil end
  for _, k in ipairs(util.sorted_keys(spec)) do
    if not (k == "base" or k == "vars" or k == "columns") and empty(spec[k]) then
      util.raise("sweep axis '%s' is empty (expected at least one value)", k)
    end
  end
  for _, k in ipairs(util.sorted_keys(type(spec.vars) == "table" and spec.vars or {})) do
    if empty(spec.vars[k]) then
      util.raise("sweep var '%s' is empty (expected at least one value)", util.shown(k))
    end
  end

  -- Deployment axes, in row order: model, gpu, optim, the other options
  -- given as lists (sorted by name), vars, tp when a default depends on it.
  local axes = {{"model", list(spec.model)}}
  if spec.gpu ~= nil then axes[#axes + 1] = {"gpu", list(spec.gpu)} end
  if spec.optim ~= nil then axes[#axes + 1] = {"optim", list(spec.optim)} end
  local others = {}
  for k in pairs(spec) do
    if not reserved[k] and not c_axes[k] then others[#others + 1] = k end
  end
  table.sort(others)
  for _, k in ipairs(others) do axes[#axes + 1] = {k, list(spec[k])} end

  -- vars: axes of the user's own, seen by Lua columns and filters and
  -- printable as columns, but not deployment options
  local vars = spec.vars or {}
  if type(vars) ~= "table" then util.raise("field 'vars' must be a table of lists, got %s", type(vars)) end
  local var_names = util.sorted_keys(vars)
  for _, k in ipairs(var_names) do
    if type(k) ~= "string" or c_axes[k] or reserved[k] or deploy.fields[k] then
      util.raise("sweep var '%s' has the name of an axis or option", util.shown(k))
    end
    axes[#axes + 1] = {k, list(vars[k]), var = true, field = "none"}
  end
  local timed, ranged = false, false
  for _, c in ipairs(type(spec.columns) == "table" and spec.columns or {}) do
    if time_columns[type(c) == "table" and c[1] or c] then timed = true end
    if range_columns[type(c) == "table" and c[1] or c] then ranged = true end
  end
  -- The optim axis is looped in C when every combination is made of
  -- built-ins of a fixed effect (kv.optim.core_fields): each is resolved once
  -- into the fields it sets (sweep_core: a kvp_combo) and written over each
  -- base deployment, built here without it. No combination then changes the
  -- budget rule or what kv.deploy predicts: dspec is the sweep without its
  -- optim axis for those questions. With step-time columns, or any other
  -- combination, each deployment is built here with its combination.
  local optim = require "kvplan.optim"
  local core_sets, dspec = nil, spec
  if spec.optim ~= nil and not timed then
    core_sets = {}
    for i, c in ipairs(list(spec.optim)) do
      core_sets[i] = optim.core_fields(c)
      if core_sets[i] == nil then core_sets = nil break end
    end
  end
  if core_sets then
    dspec = {}
    for k, v in pairs(spec) do if k ~= "optim" then dspec[k] = v end end
  end
  -- some of them only: a mixed axis (below), its fixed combinations applied in C
  local mixed
  if spec.optim ~= nil and core_sets == nil and not timed then
    local sets, some = {}, false
    for i, c in ipairs(list(spec.optim)) do
      sets[i] = optim.core_fields(c) or false
      some = some or sets[i] ~= false
    end
    if some then mixed = sets end
  end
  -- An engine rule in Lua (a budget's reserves hook) is kv.deploy's alone:
  -- then tp and pp are expanded here too (same row order)
  local hooked = lua_rule(dspec, base)
  -- step times: tp too, since a MoE model's routed-expert curve depends on the
  -- slice of an expert on one GPU (kvplan.sim expert_curve), a perf table a tp
  -- and a data- or expert-parallel layout, which kv.deploy checks against tp
  -- (SGLang's attention DP divides tp, ep_size divides tp): each tp's own
  local function layout(t)
    if type(t) ~= "table" then return false end
    local function many(v) return type(v) == "number" and v > 1 end
    return many(t.data_parallel_size) or many(t.ep_size) or t.enable_dp_attention == true
           or t.enable_expert_parallel == true
  end
  local tp_in_lua = (hooked or timed or layout(base) or layout(dspec)) and spec.tp ~= nil
  local pp_in_lua = hooked and spec.pp ~= nil
  if tp_in_lua then axes[#axes + 1] = {"tp", list(spec.tp)} end
  if pp_in_lua then axes[#axes + 1] = {"pp", list(spec.pp)} end
  for i = 1, #axes do
    if #axes[i][2] == 0 then util.raise("sweep axis '%s' is empty", axes[i][1]) end
  end
  place_axes(spec, base, axes, timed, dspec, hooked, may_be_sglang(spec, base))
  local s = setmetatable({spec = spec, label_names = {}, axes = {}}, Sweep)
  -- what the sweep says of itself (tostring): its deployments built in Lua
  if hooked then
    s.built_in_lua = "budget '" .. hooked .. "' has a reserves hook (an engine rule in Lua)"
  end
  for i, a in ipairs(axes) do s.label_names[i] = a[1] end
  local nl = #s.label_names
  s.label_names[nl + 1], s.label_names[nl + 2] = "kv", "weights"

  -- the axes set in C: values, labels, what a Lua column sees
  for i, a in ipairs(axes) do
    local ax = {name = a[1], field = a.field or "base", n = #a[2]}
    if ax.field == "optim" then
      ax.labels, ax.rowvals, ax.values = {}, {}, {}
      for p, c in ipairs(a[2]) do
        ax.labels[p] = optim_name(c)
        ax.rowvals[p] = ax.labels[p]
        s.optim_combos = s.optim_combos or {}
        s.optim_combos[ax.labels[p]] = c
      end
      s.optim_axis = ax
    elseif ax.field ~= "base" then
      ax.labels, ax.rowvals = {}, {}
      ax.values = ax.field ~= "none" and ax.field ~= "gpu" and {} or nil
      for p, v in ipairs(a[2]) do
        local label = v
        if a[1] == "gpu" then
          local g = gpus.check_plannable(gpus.get(v)) -- as kv.deploy takes it
          label = g.id
          if ax.values then ax.values[p] = g.visible_bytes end
          ax.gpus = ax.gpus or {} -- for SGLang's weights (weights_table)
          ax.gpus[p] = g
          ax.gpu = ax.gpu or {}
          ax.gpu[p] = deploy.gpu_facts(g) -- what the engine rules read of it
        elseif ax.values then
          ax.values[p] = byte_fields[a[1]] and units.bytes(v, a[1]) or v
          -- kv.deploy takes max_num_seqs >= 1 (0 would mean no cap in C)
          if a[1] == "max_num_seqs" then ax.values[p] = util.count(v, "max_num_seqs") end
        end
        if type(label) == "table" then label = label.name or label.id or tostring(label) end
        if math.type(label) == "float" then label = tostring(label) end
        ax.labels[p] = label
        ax.rowvals[p] = a.var and v or (a[1] == "gpu" and label or v)
      end
    end
    s.axes[i] = ax
  end

  -- the base deployments: the product of the axes resolved here (field
  -- "base"), the C axes at their first value, base b (1-based) at digits of
  -- b - 1 in row order. Each is built when its rows start (sweep_core.run
  -- calls s.base) and dropped once they are written: 10x the deployments
  -- hold no more memory than 1x.
  local lua_axes = {}
  for i, a in ipairs(axes) do
    if (a.field or "base") == "base" then lua_axes[#lua_axes + 1] = i end
  end
  local nbase = 1
  for _, i in ipairs(lua_axes) do
    local n = #axes[i][2]
    if nbase > math.maxinteger // n then util.raise("the sweep has more than 2^63 deployments") end
    nbase = nbase * n
  end
  local function positions(b)
    local pos, r = {}, b - 1
    for i = 1, #axes do pos[i] = 1 end
    for j = #lua_axes, 1, -1 do
      local i = lua_axes[j]
      local n = #axes[i][2]
      pos[i], r = r % n + 1, r // n
    end
    return pos
  end
  -- SGLang's weights along the C axes (deploy.sglang_weights: the caching
  -- allocator's slack by tp, pp and weight format, the rotary tables in
  -- float32 but on AMD GPUs): {rotary, alloc} for each position of the gpu,
  -- tp, pp and weights axes the core loops, in its order (the last varies
  -- fastest; engine/core/sweep.c sweep_weights_at); nil for another budget
  -- or a given weight_bytes
  local function weights_table(d)
    if d.budget ~= "sglang" or not d.sglang_weighed then return nil end
    local gl = {d.gpu}
    for _, ax in ipairs(s.axes) do if ax.gpus then gl = ax.gpus end end
    local t, memo = {}, {}
    for _, g in ipairs(gl) do
      for _, tp in ipairs(s.tp or {d.tp}) do
        for _, pp in ipairs(s.pp or {d.pp or 1}) do
          for _, w in ipairs(s.weights or {d.weights}) do
            local k = string.format("%s|%d|%d|%s", g.vendor == "amd" and "amd" or "cuda", tp, pp,
                                    w.name)
            local e = memo[k]
            if e == nil then
              local rotary, _, alloc = deploy.sglang_weights(d, g, tp, pp, w)
              e = {rotary or 0, alloc or 0}
              memo[k] = e
            end
            t[#t + 1] = e[1]
            t[#t + 1] = e[2]
          end
        end
      end
    end
    return t
  end
  -- base b's deployment; plain: without its combination, or with `with`
  local function deployment(b, with, plain)
    local pos = positions(b)
    local opts = util.copy(base)
    local combo
    for i, a in ipairs(axes) do
      local v = a[2][pos[i]]
      if a[1] == "optim" then combo = v elseif not a.var then opts[a[1]] = v end
    end
    if combo ~= nil and (core_sets or plain) then
      -- the optim axis is the core's: the base without it (as kv.optim.apply
      -- leaves a given `optim` out), or with combination `with`
      opts.optim, combo = with, with
      if with ~= nil then opts = optim.apply(opts, with) end
    elseif combo ~= nil then
      opts = optim.apply(opts, combo)
    end
    return deploy.new(opts), combo, pos
  end
  -- a combination of fixed built-ins resolved once, on the first base (the
  -- fields it sets do not depend on the base: kv.optim.core_fields); the
  -- empty one needs no deployment
  local function resolved(c, set)
    if #set == 0 then return {set = set} end
    local d, sets_kv = deployment(1, c, true), false
    for _, k in ipairs(set) do sets_kv = sets_kv or k == "kv" end
    return {spec = d:spec(), set = set, kv = sets_kv and d.kv.name or nil}
  end
  -- the optim axis in C
  if core_sets then
    for p, c in ipairs(s.optim_axis and list(spec.optim) or {}) do
      s.optim_axis.values[p] = resolved(c, core_sets[p])
    end
  end
  -- A mixed optim axis (combinations of fixed built-ins beside others) stays
  -- an axis of deployments built here, but a combination of fixed built-ins
  -- is resolved once (as above; sweep_core's spec.combos) and its base is the
  -- plain deployment of the same other axes, built once and kept while the
  -- axes before the optim axis stay, with the combination written over it
  -- in C: kv.deploy runs once a plain deployment and once a combination of
  -- other members, not once a combination and base.
  local oi, plains, plains_prefix = nil, {}, nil
  if mixed then
    for i, a in ipairs(axes) do if a[1] == "optim" then oi = i end end
    s.combos = {}
    for p, c in ipairs(list(spec.optim)) do
      s.combos[p] = false
      if mixed[p] then s.combos[p] = resolved(c, mixed[p]) end
    end
  end
  local function plain_of(b, pos)
    local prefix, key = {}, {}
    for _, i in ipairs(lua_axes) do
      if i < oi then prefix[#prefix + 1] = pos[i] end
      if i ~= oi then key[#key + 1] = pos[i] end
    end
    prefix, key = table.concat(prefix, ","), table.concat(key, ",")
    if prefix ~= plains_prefix then plains, plains_prefix = {}, prefix end
    local e = plains[key]
    if e == nil then
      local d = deployment(b, nil, true)
      e = {d = d, spec = d:spec(), sglang_weights = weights_table(d)}
      e.spec.engine_rule = d.engine_rule
      plains[key] = e
    end
    return e
  end
  -- base b's labels by label column and by axis name (what a Lua column sees)
  local function labels(d, pos, b, kv_name)
    local named, label = {kv = kv_name, weights = d.weights.name, _base = b}, {}
    for _, i in ipairs(lua_axes) do
      local a, v, l = axes[i], axes[i][2][pos[i]]
      if a[1] == "model" then l = d.model.id
      elseif a[1] == "gpu" then l = d.gpu.id
      elseif a[1] == "optim" then l = optim_name(v)
      elseif type(v) == "table" then l = v.name or v.id or tostring(v)
      else l = v end
      named[a[1]] = a_value(a, pos[i], l)
      label[i] = math.type(l) == "float" and tostring(l) or l
    end
    label[nl + 1], label[nl + 2] = kv_name, d.weights.name
    return named, label
  end
  -- base b: its deployment, the core's table of it, its labels, its GPU's rates
  local function build(b)
    local ci = oi and positions(b)[oi]
    if ci and mixed[ci] then
      local pos = positions(b)
      local plain, combo = plain_of(b, pos), axes[oi][2][ci]
      local named, label = labels(plain.d, pos, b, s.combos[ci].kv or plain.d.kv.name)
      return {plain = plain, combo_index = ci, label = label, named = named, d = plain.d,
              combo = combo, b = b, plain_d = true}
    end
    local d, combo, pos = deployment(b)
    local named, label = labels(d, pos, b, d.kv.name)
    local spec = d:spec()
    -- the core predicts again along its axes
    spec.engine_rule = d.engine_rule
    local e = {spec = spec, perf = timed and d:perf() or nil, label = label, named = named, d = d,
               combo = combo, b = b, sglang_weights = weights_table(d)}
    if ranged then
      -- every factor, whether or not this base reads it: the C axes may
      -- change tp, pp or the model under it
      local factors = require "kvplan.factors"
      local slow, fast = factors.ends(d, true)
      e.perf_slow, e.perf_fast = factors.perf_at(d, slow), factors.perf_at(d, fast)
    end
    -- a weights axis in C: each format's own rates (its compute rate and
    -- dense GEMM curves, kvplan.sim), the base with that format
    if timed and s.weights ~= nil then
      local factors = ranged and require "kvplan.factors"
      e.perfs, e.perfs_slow, e.perfs_fast = {}, {}, {}
      for i, f in ipairs(s.weights) do
        local dw = setmetatable({weights = f}, {__index = d})
        e.perfs[i] = dw:perf()
        if ranged then
          local slow, fast = factors.ends(dw, true)
          e.perfs_slow[i], e.perfs_fast[i] = factors.perf_at(dw, slow), factors.perf_at(dw, fast)
        end
      end
    end
    return e
  end
  -- A C axis outside some of these axes (the GPU's memory before the optim
  -- axis, say) visits each base once per value: the bases of one value of
  -- the axes outside it are kept until the rows leave them, no longer.
  local group, inside = 1, false
  for _, a in ipairs(axes) do
    if (a.field or "base") ~= "base" and #a[2] > 1 then inside = true
    elseif inside and (a.field or "base") == "base" then group = group * #a[2] end
  end
  local kept, kept_group, built = {}, nil, 0
  -- the models and GPUs of the bases named now, at the user's line, as
  -- kv.deploy takes them (a deployment's other checks come when it is built)
  for _, a in ipairs(axes) do
    if (a.field or "base") == "base" and (a[1] == "model" or a[1] == "gpu") then
      for _, v in ipairs(a[2]) do
        if a[1] == "model" then models.get(v) else gpus.check_plannable(gpus.get(v)) end
      end
    end
  end
  s.nbase = nbase
  s.base = function(b)
    local g = (b - 1) // group
    if g ~= kept_group then kept, kept_group = {}, g end
    local e = kept[b]
    if e == nil then
      -- the bases dropped so far are garbage: a step of the collector every
      -- 16 bases keeps the heap near its size at the first ones (about 5 us
      -- a base; Lua's own pace lets it grow by a few hundred KB first)
      built = built + 1
      if built % 16 == 0 then collectgarbage("step", 0) end
      e = build(b)
      kept[b] = e
    end
    s.cur = e -- the base whose rows are written now (optim columns read it)
    return e
  end

  -- C-level axes
  for _, k in ipairs{"tp", "pp", "context", "concurrency"} do
    if spec[k] ~= nil and not (k == "tp" and tp_in_lua) and not (k == "pp" and pp_in_lua) then
      s[k] = {}
      for i, v in ipairs(list(spec[k])) do s[k][i] = util.count(v, k) end
    end
  end
  for _, k in ipairs{"kv", "weights"} do
    if spec[k] ~= nil then
      s[k], s[k .. "_names"] = {}, {}
      for i, v in ipairs(list(spec[k])) do
        local f = formats.get(v, k)
        s[k][i], s[k .. "_names"][i] = f, f.name
      end
    end
  end

  -- columns
  local builtins, labels = builtin_set(), {}
  for _, n in ipairs(s.label_names) do labels[n] = true end
  s.columns, s.precision, s.funcs = {}, {}, {}
  if type(spec.columns) ~= "table" or #spec.columns == 0 then
    util.raise("field 'columns' must be a non-empty list of column names")
  end
  local seen = {}
  for i, c in ipairs(spec.columns) do
    local name, p, fn = c, nil, nil
    if type(c) == "table" then
      util.check_keys(c, {[1] = true, [2] = true, precision = true}, "sweep column " .. i)
      name, fn, p = c[1], c[2], c.precision
      if fn ~= nil and type(fn) ~= "function" then
        util.raise("sweep column '%s': the second element must be a function, got %s",
                   util.shown(name), type(fn))
      end
    end
    if type(name) ~= "string" then util.raise("sweep column %d must be named by a string", i) end
    if seen[name] then util.raise("column '%s' appears twice", name) end
    seen[name] = true
    if fn == nil and not builtins[name] and not labels[name] then
      fn = s:optim_column(name)
      if fn ~= nil and p == nil then p = 4 end
    end
    if fn == nil and not builtins[name] and not labels[name] then
      local names = util.sorted_keys(builtins)
      for n in pairs(labels) do names[#names + 1] = n end
      util.raise("unknown sweep column '%s'%s", name, util.suggest(name, names))
    end
    if fn ~= nil and (builtins[name] or labels[name]) then
      util.raise("Lua column '%s' has the name of a built-in column", name)
    end
    if p ~= nil then
      p = util.count(p, "precision of column '" .. name .. "'", 0)
      if p > 17 then util.raise("precision of column '%s' must be 0..17, got %d", name, p) end
    end
    s.columns[i], s.precision[i], s.funcs[i] = name, p, fn
  end
  if type(spec.filter) == "table" then
    s.rules = M.filter_rules(spec.filter)
  elseif spec.filter ~= nil and type(spec.filter) ~= "function" then
    util.raise("field 'filter' must be a function or a table of conditions, got %s",
               type(spec.filter))
  end
  core.run(s:core_spec{check = true}) -- every axis value checked now, at the user's line
  return s
end

-- An optimization's own column (the `columns` of a member of the sweep's
-- optim combinations), as a Lua column: the member's function with the row,
-- the ledger and the deployment of the row (its base deployment with the
-- row's tp, pp, formats and C-axis values); "" in rows of combinations
-- without it. nil when no combination has the column.
function Sweep:optim_column(name)
  if self.spec.optim == nil then return nil end
  local optim = require "kvplan.optim"
  local found = false
  for _, combo in ipairs(list(self.spec.optim)) do
    for _, m in ipairs(optim.combine(combo).members) do
      if (m.columns or {})[name] then found = true end
    end
  end
  if not found then return nil end
  local c_names = {}
  for _, ax in ipairs(self.axes) do
    if ax.field ~= "base" and ax.field ~= "none" and ax.field ~= "optim" and deploy.fields[ax.name] then
      c_names[#c_names + 1] = ax.name
    end
  end
  local cache, cached = {}, nil
  return function(row)
    local cur = self.cur
    if cur == nil or cur.b ~= row._base then cur = self.base(row._base) end
    if cached ~= row._base then cache, cached = {}, row._base end -- one base's at a time
    local d0, combo = cur.d, cur.combo
    if self.optim_axis or cur.plain_d then -- a combination written in C: on its plain base
      if self.optim_axis then combo = self.optim_combos[row.optim] end
      local k = "optim|" .. row.optim
      d0 = cache[k] or (combo and d0:with{optim = combo}) or d0
      cache[k] = d0
    end
    local f
    for _, m in ipairs(combo and optim.combine(combo).members or {}) do f = f or (m.columns or {})[name] end
    if f == nil then return "" end
    local changes, key = {}, {row._base, row.optim}
    local function set(k, v, now)
      if v ~= nil and v ~= now then changes[k] = v end
      key[#key + 1] = tostring(v)
    end
    set("tp", row.tp, d0.tp)
    set("pp", row.pp, d0.pp)
    set("kv", row.kv, d0.kv.name)
    set("weights", row.weights, d0.weights.name)
    for _, k in ipairs(c_names) do set(k, row[k], d0.options[k]) end
    local k = table.concat(key, "|")
    local d = cache[k]
    if d == nil then
      d = next(changes) and d0:with(changes) or d0
      cache[k] = d
    end
    return f(row, d:ledger(), d)
  end
end

-- The table sweep_core.run reads; `extra` adds path, shard, progress or
-- check (check every value and stop before writing).
function Sweep:core_spec(extra)
  local t = {
    nbase = self.nbase, base = self.base, label_names = self.label_names, axes = self.axes,
    tp = self.tp, pp = self.pp, context = self.context, concurrency = self.concurrency,
    kv = self.kv, kv_names = self.kv_names, weights = self.weights,
    weights_names = self.weights_names,
    columns = self.columns, precision = self.precision, funcs = self.funcs,
    rules = self.rules, kv_label = #self.label_names - 1, combos = self.combos,
    filter = type(self.spec.filter) == "function" and self.spec.filter or nil,
    non_torch = engines.non_torch, -- the engine rules' constants
  }
  for k, v in pairs(extra) do t[k] = v end
  return t
end

-- core.run of the sweep, refused while the same sweep runs: a filter, Lua
-- column or each function that writes or walks its own sweep ran it again
-- from every row, until Lua's C stack overflowed (a 4 KB chain of "sweep
-- filter:" and "stdlib/kvplan/util.lua:162: C stack overflow"). Another
-- sweep may run inside one.
local function run(self, spec, how)
  if self.running then
    util.raise("sweep %s: this sweep is already running (%s): a filter, column or each function "
               .. "cannot run its own sweep (build another kv.sweep{...} for that)", how, self.running)
  end
  self.running = how == "each" and "in s:each" or "in s:write"
  local ok, n, total = pcall(core.run, spec)
  self.running = nil
  if not ok then error(n, 0) end
  return n, total
end

--- Rows of the whole sweep (before any filter or shard).
function Sweep:count()
  local n = self.nbase
  local function times(m)
    if m > 0 and n > math.maxinteger // m then
      util.raise("the sweep has more than 2^63 rows (%d x %d and more)", n, m)
    end
    n = n * m
  end
  for _, a in ipairs(self.axes) do
    if a.field ~= "base" then times(a.n) end
  end
  for _, k in ipairs{"tp", "pp", "kv", "weights", "context", "concurrency"} do
    if self[k] then times(#self[k]) end
  end
  return n
end

-- The charts of Sweep:write{chart = ...} checked: a list of kv.plot specs.
local function chart_list(spec)
  local list = type(spec) == "table" and spec[1] == nil and {spec} or spec
  if type(list) ~= "table" then util.raise("field 'chart' must be a table of kv.plot's fields or a list of them") end
  for i, c in ipairs(list) do
    require("kvplan.report").check_chart(c, i)
    if c.data ~= nil and type(c.data) ~= "function" then
      util.raise("field 'chart' item %d: a sweep's chart takes 'data' as a function of a row", i)
    end
  end
  return list
end

--- Write the sweep as CSV to path (default: `kvplan -o FILE`, else stdout;
--- under `kvplan batch`, the script's file, or SCRIPT-NAME.csv with
--- opts.name). Under `kvplan --shard K/N` only the K-th slice of the rows is
--- written. Returns the rows written. opts.chart: an HTML page's chart (or a
--- list of them), kv.plot's fields but output; its `data` is a function of a
--- sweep row that gives the chart's row (nil leaves the row out; default:
--- the row's x, y and by), drawn from every row the filters keep before the
--- table is written (not under --shard: a slice's page says so).
function Sweep:write(path, opts)
  if type(path) == "table" then path, opts = nil, path end
  opts = opts or {}
  util.check_keys(opts, {name = true, format = true, chart = true}, "sweep write options")
  if opts.chart ~= nil then chart_list(opts.chart) end
  if opts.format ~= nil and not require("kvplan.report").formats[opts.format] then
    util.raise("field 'format' must be csv, table, vertical, json, markdown or html, got %s", util.shown(opts.format))
  end
  local cli = package.loaded["kvplan.cli"] or {}
  local report = require "kvplan.report"
  local given = path
  path = report.output_path(path, opts.name)
  -- a sweep of 2^40 rows must not start writing terabytes: refuse before
  -- the first row past `kvplan --max-rows N` (default 1e9; 0: no limit)
  local limit = cli.max_rows or 0
  if limit > 0 then
    local rows = self:count()
    if cli.shard then
      local first, last = core.shard(rows, cli.shard[1], cli.shard[2])
      rows = last - first
    end
    if rows > limit then
      util.raise("the sweep would write %d rows, more than --max-rows %d (raise it, or 0 for no limit)",
                 rows, limit)
    end
  end
  -- the columns kvplan --columns chose, in its order
  local columns, precision, funcs = self.columns, self.precision, self.funcs
  local pick = report.chosen(columns)
  if pick then
    columns, precision, funcs = {}, {}, {}
    for k, i in ipairs(pick) do columns[k], precision[k], funcs[k] = self.columns[i], self.precision[i], self.funcs[i] end
  end
  -- an HTML page (-f html, a .html path, format = "html"): its inputs and
  -- units, its charts (drawn before the path is claimed: a bad chart leaves
  -- it free)
  local page
  if (require("kvplan.csv").format_of(path, opts.format)) == "html" then
    local names = {}
    for i, c in ipairs(columns) do names[i] = type(c) == "table" and c[1] or c end
    page = report.page({}, names)
    if opts.chart ~= nil then page.charts = self:charts(opts.chart, path, cli.shard) end
  end
  report.claim(path, given)
  local ok, written = pcall(run, self, self:core_spec{path = path, shard = cli.shard, page = page,
                                                      progress = not cli.quiet, format = opts.format,
                                                      columns = columns, precision = precision, funcs = funcs},
                            "write")
  report.release(path)
  if not ok then error(written, 0) end
  return written
end

-- The charts of an HTML page of the sweep (Sweep:write's opts.chart):
-- {{title, svg, note}, ...} as csv.open's page takes them.
function Sweep:charts(spec, path, shard)
  local report, plot = require "kvplan.report", require "kvplan.plot"
  local out = {}
  for _, c in ipairs(chart_list(spec)) do
    local title = report.chart_title(c)
    if shard then
      out[#out + 1] = {title = title, note = "a shard of the sweep (--shard): the chart is the whole sweep's"}
    else
      local rows = {}
      self:each(function(r)
        local t
        if c.data then t = c.data(r) else t = {[c.x] = r[c.x], [c.y] = r[c.y]}; if c.by then t[c.by] = r[c.by] end end
        if t ~= nil then rows[#rows + 1] = t end
      end)
      local s = {}
      for k, v in pairs(c) do if k ~= "data" then s[k] = v end end
      local svg, why = plot.svg(s, rows, path)
      out[#out + 1] = {title = title, svg = svg, note = why}
    end
  end
  return out
end

--- Call fn(row) for every row the filters keep, in row order, writing
--- nothing: the row table a filter sees (one table for the whole sweep,
--- updated in place: copy what you keep), `why` among its fields. For a
--- script that makes its own rows from the sweep's (kv.best, the commands).
--- Returns the rows given to fn.
function Sweep:each(fn)
  if type(fn) ~= "function" then util.raise("sweep each needs a function, got %s", type(fn)) end
  return run(self, self:core_spec{each = fn}, "each")
end

function Sweep:__tostring()
  return string.format("kvplan.Sweep (%d rows, %d columns%s)", self:count(), #self.columns,
                       self.built_in_lua and ("; every deployment built in Lua: " .. self.built_in_lua)
                       or "")
end

setmetatable(M, {__call = function(_, spec) return M.new(spec) end})

-- a method called with something else as self: an error at the user's line
util.methods(Sweep)

return M
