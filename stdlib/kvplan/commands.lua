-- stdlib/kvplan/commands.lua: the commands of `kvplan COMMAND` that are not
-- ready scripts: `kvplan models [PATTERN]` and `kvplan gpus [PATTERN]` list
-- the catalogs with their key facts, one report row an entry.
-- Stdlib layer: report shapes only; the numbers come from the catalogs.

local util = require "kvplan.util"
local units = require "kvplan.units"
local report = require "kvplan.report"
local options = require "kvplan.options"

local M = {}

-- The one optional word PATTERN of a listing and its options.
local function pattern_of(args, cmd, defaults)
  local words = {}
  local pairs_only = {}
  for k, v in pairs(args or {}) do
    if math.type(k) == "integer" then words[k] = v else pairs_only[k] = v end
  end
  if #words > 1 then
    util.raise("kvplan %s takes one PATTERN, got %d words ('%s')", cmd, #words,
               table.concat(words, "' '"))
  end
  return words[1], options.parse(pairs_only, defaults, true)
end

-- Does entry e match pattern p: a case-insensitive substring of its id,
-- name or an alias, with spaces, '_' and '-' alike.
local function norm(s) return (tostring(s):lower():gsub("[%s_]+", "-")) end
local function matches(e, p)
  if p == nil or p == "" then return true end
  p = norm(p)
  local names = {e.id, e.name, e.hf, e.family, e.vendor}
  for _, a in ipairs(e.aliases or {}) do names[#names + 1] = a end
  for _, n in ipairs(names) do
    if n ~= nil and norm(n):find(p, 1, true) then return true end
  end
  return false
end

local function gib2(c) return {c, precision = 2} end

-- The words that say how a model's KV cache differs from the plain formula
-- 2 x layers x kv_heads x head_dim: the attention (mha, gqa, mqa or mla: a
-- latent cached in place of K and V), the layer kinds beside full attention
-- with their counts (sliding window, chunked, recurrent state: a hybrid
-- model, cross-attention, none), and moe with its routed experts.
local function architecture(m)
  local k = m:kinds()
  local w = {}
  if (k.mla or 0) > 0 then w[1] = "mla"
  elseif m.kv_heads == m.heads then w[1] = "mha"
  elseif m.kv_heads == 1 then w[1] = "mqa"
  else w[1] = "gqa" end
  for _, kind in ipairs{"sliding", "chunked", "state", "cross", "none"} do
    if (k[kind] or 0) > 0 then w[#w + 1] = string.format("%s:%d", kind, k[kind]) end
  end
  if m.experts then w[#w + 1] = string.format("moe:%dx%d", m.experts_active or 0, m.experts) end
  return table.concat(w, " ")
end

--- kvplan models [PATTERN]: id, family, architecture (mla, sliding window,
--- hybrid state layers, MoE), parameters, attention shape, KV bytes per token
--- (all layers, one GPU, the model's own KV dtype, and bf16), weights.
function M.models(args)
  local p = pattern_of(args, "models", {})
  local models = require "kvplan.models"
  local rows = {}
  for _, m in ipairs(models.all()) do
    if matches(m, p) then
      rows[#rows + 1] = {
        model = m.id, family = m.family or "", architecture = architecture(m),
        params_b = (m.params or 0) / 1e9,
        active_b = (m.active or 0) / 1e9, layers = m.layers, heads = m.heads,
        kv_heads = m.kv_heads, head_dim = m.head_dim or "", dtype = m.dtype or "",
        max_context = m.max_context or "", kv = m:auto_kv_format().name,
        kv_bytes_per_token = m:kv_bytes_per_token(),
        kv_bytes_per_token_bf16 = m:kv_bytes_per_token("bf16"), weights_gib = units.gib(m:weight_size()),
        aliases = table.concat(m.aliases or {}, " "),
      }
    end
  end
  if #rows == 0 then util.raise("no model matches '%s' (try 'kvplan models')", p) end
  local r = report{columns = {
    "model", "family", "architecture", {"params_b", precision = 2}, {"active_b", precision = 2},
    "layers", "heads", "kv_heads", "head_dim", "dtype", "max_context", "kv", "kv_bytes_per_token",
    "kv_bytes_per_token_bf16", gib2 "weights_gib", "aliases",
  }}
  for _, row in ipairs(rows) do r:row(row) end
  r:close()
end

--- kvplan gpus [PATTERN]: id, memory as marketed and as the runtime shows
--- it, bandwidth, dense tensor rates, interconnect; plan_with names the
--- device to plan with (another entry for a module of several devices).
function M.gpus(args)
  local p = pattern_of(args, "gpus", {})
  local gpus = require "kvplan.gpus"
  local rows = {}
  for _, g in ipairs(gpus.all(true)) do
    if matches(g, p) then
      rows[#rows + 1] = {
        gpu = g.id, name = g.name or "", vendor = g.vendor or "",
        memory_marketed = g.memory_marketed or "", visible_gib = units.gib(g.visible_bytes),
        hbm_gbps = g.hbm_gbps or "", bf16_tflops = g.bf16_tflops or "",
        fp8_tflops = g.fp8_tflops or "", interconnect = g.interconnect or "",
        plan_with = g.plan_as or g.id, aliases = table.concat(g.aliases or {}, " "),
      }
    end
  end
  if #rows == 0 then util.raise("no GPU matches '%s' (try 'kvplan gpus')", p) end
  local r = report{columns = {
    "gpu", "name", "vendor", "memory_marketed", gib2 "visible_gib", "hbm_gbps",
    "bf16_tflops", "fp8_tflops", "interconnect", "plan_with", "aliases",
  }}
  for _, row in ipairs(rows) do r:row(row) end
  r:close()
end

--- kvplan validate LOG... [--config DIR] [summary=1]: kvplan against engine
--- startup logs (validate.lua).
function M.validate(args) return require("kvplan.validate").command(args) end

--- kvplan calibrate RESULT... key=value... [-o profile.json] (calibrate.lua).
function M.calibrate(args) require("kvplan.calibrate").command(args) end
function M.completion(args) require("kvplan.completion").command(args) end

--- kvplan plot REPORT.csv x=COL y=COL [by=COL kind=line|scatter|bar|stacked
--- width=W height=H title=T logx=yes|no|auto logy=yes|no|auto lines=S,... vline=X
--- vline_title=T] -o CHART.png|svg
function M.plot(args)
  local words, opts = {}, {}
  for k, v in pairs(args or {}) do
    if math.type(k) == "integer" then words[k] = v else opts[k] = v end
  end
  -- a report missing or two, -o missing, a kind kv.plot has not: usage
  -- errors (status 2, as the manual's EXIT STATUS says of a required
  -- argument missing or a value of the wrong form; they were status 1)
  if #words ~= 1 then
    options.bad("usage: kvplan plot REPORT.csv x=COL y=COL [by=COL kind=line|scatter|bar|stacked] "
                .. "-o CHART.png|svg")
  end
  local o = options.parse(opts, {
    x = options.required "x=context", y = options.required "y=max_concurrency", by = "",
    kind = "line", width = options.at_least(16, 800), height = options.at_least(16, 500), title = "",
    xlabel = "", ylabel = "",
    logx = "auto", logy = "auto", lines = {""}, vline = "", vline_title = "",
  }, true)
  -- past kv.plot's bound: a usage error as the bound below 16 is (status 1,
  -- "field 'width' ..." at kv.plot's check)
  for _, f in ipairs{"width", "height"} do
    local max = require("kvplan.plot").max_size
    if o[f] > max then
      options.bad("argument '%s' must be an integer of at most %d pixels, got '%d'", f, max, o[f])
    end
  end
  for _, f in ipairs{"logx", "logy"} do
    local v = o[f]
    if v ~= "auto" and v ~= "yes" and v ~= "no" and v ~= "true" and v ~= "false" then
      options.bad("argument '%s' must be yes, no or auto (logarithmic where the data span two "
                  .. "decades), got '%s'", f, util.escape(v, 64))
    end
  end
  if o.kind ~= "line" and o.kind ~= "scatter" and o.kind ~= "bar" and o.kind ~= "stacked" then
    options.bad("argument 'kind' must be line, scatter, bar or stacked, got '%s'", util.escape(o.kind, 64))
  end
  local c = package.loaded["kvplan.cli"] or {}
  if c.output == nil then options.bad("kvplan plot needs -o CHART.png or -o CHART.svg") end
  local vline
  if o.vline ~= "" then
    local x = #o.vline <= 64 and util.decimal_number(o.vline) or nil -- '0x10' was 16
    if x == nil or x ~= x or x == math.huge or x == -math.huge then
      options.bad("argument 'vline' must be a finite number (the x of a vertical line), got '%s'",
                  util.escape(o.vline, 64))
    end
    vline = {x = x, title = o.vline_title}
  elseif o.vline_title ~= "" then
    options.bad("argument 'vline_title' needs vline=X")
  end
  require("kvplan.plot").plot{
    data = words[1], x = o.x, y = o.y, by = o.by ~= "" and o.by or nil, kind = o.kind,
    output = c.output, width = o.width, height = o.height,
    title = o.title ~= "" and o.title or nil, xlabel = o.xlabel ~= "" and o.xlabel or nil,
    ylabel = o.ylabel ~= "" and o.ylabel or nil, logx = o.logx, logy = o.logy,
    lines = o.lines[1] ~= "" and o.lines or nil, vline = vline,
  }
end

return M
