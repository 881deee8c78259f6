-- stdlib/kvplan/optim.lua: optimizations as values, kv.optim.
-- Stdlib layer: each optimization is a documented transformation of a
-- deployment's options; the memory arithmetic it switches on is the core's
-- (engine/core/ledger.c applies the deployment fields, engine/core/optim.c holds the
-- models: distributions, allocation waste, speculative rates, eviction).
--
--   local o = kv.optim
--   local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100", weights = "int4-g128",
--                       optim = {o.paged{block = 16}, o.kv_quant "fp8"}}
--   for _, c in ipairs(o.subsets{o.kv_quant "fp8", o.prefix{tokens = 2048}}) do ... end
--
-- An optimization is a table of hooks (kv.optim.define checks it):
--   name       string, the report name (no '+'; "none" is the empty combination)
--   phase      one of kv.optim.phases: when it applies
--   apply      function(opts, ctx) -> opts: changes a copy of the deployment
--              options and returns it; ctx.model(opts) resolves the model,
--              ctx.combination is the combination being applied
--   doc        what it does to the ledger; source: where its model comes from
--   exclusive  a slot name: two members of one combination with the same slot
--              conflict (two KV formats, two allocation policies)
--   lossy      what it may cost in quality, which kvplan does not model
--   columns    {column = function(row, ledger, deployment) -> value}: extra
--              report columns
-- A combination applies its members in phase order, ties by name, so any
-- listed order gives the same options, the same name (members joined by '+')
-- and the same numbers.

local oc = require "kvplan.optim_core"
local util = require "kvplan.util"
local units = require "kvplan.units"
local formats = require "kvplan.formats"
local models = require "kvplan.models"
local workload = require "kvplan.workload"

local M = {}
local opts_of, number, fmt_num = util.opts_of, util.number, util.fmt_num

-- ---- phases ------------------------------------------------------------------

--- The phases in the order they apply.
M.phases = {"budget", "model", "format", "allocation", "eviction", "sharing", "speculative",
            "offload", "batching"}
local phase_index = {}
for i, p in ipairs(M.phases) do phase_index[p] = i end

-- ---- optimizations ---------------------------------------------------------------

local Optimization = {}
Optimization.__index = Optimization
Optimization.__name = "kvplan.Optimization"
M.Optimization = Optimization

local hooks = {name = true, phase = true, apply = true, doc = true, source = true,
               exclusive = true, lossy = true, columns = true, params = true}
local hook_names = util.sorted_keys(hooks)

local function describe(t)
  return type(t.name) == "string" and ("optimization '" .. t.name .. "'") or "optimization"
end

--- Check a table of hooks and return it as an Optimization.
function M.define(t)
  if getmetatable(t) == Optimization then return t end
  if type(t) ~= "table" then util.raise("an optimization must be a table of hooks, got %s", type(t)) end
  for _, k in ipairs(util.sorted_keys(t)) do -- of several unknown hooks, the same one every run
    if not hooks[k] then
      util.raise("unknown hook '%s' in %s%s", util.shown(k), describe(t),
                 util.suggest(util.shown(k), hook_names))
    end
  end
  if type(t.name) ~= "string" or t.name == "" or t.name:find("+", 1, true) or t.name == "none" then
    util.raise("an optimization needs a 'name': a non-empty string without '+', not 'none' "
               .. "(got %s)", util.shown(t.name))
  end
  if phase_index[t.phase] == nil then
    util.raise("%s: unknown phase '%s'%s; phases: %s", describe(t), util.shown(t.phase),
               util.suggest(util.shown(t.phase), M.phases), table.concat(M.phases, ", "))
  end
  if type(t.apply) ~= "function" then
    util.raise("%s needs an 'apply' hook: function(opts, ctx) returning the options", describe(t))
  end
  for _, k in ipairs{"doc", "source", "exclusive", "lossy"} do
    if t[k] ~= nil and type(t[k]) ~= "string" then
      util.raise("%s: hook '%s' must be a string, got %s", describe(t), k, type(t[k]))
    end
  end
  if t.columns ~= nil then
    if type(t.columns) ~= "table" then
      util.raise("%s: hook 'columns' must be a table of column = function, got %s", describe(t),
                 type(t.columns))
    end
    for k, f in util.sorted_pairs(t.columns) do
      if type(k) ~= "string" or type(f) ~= "function" then
        util.raise("%s: column %s must map a name to a function(row, ledger, deployment)",
                   describe(t), util.shown(k))
      end
    end
  end
  local o = setmetatable({}, Optimization)
  for k, v in pairs(t) do o[k] = v end
  return o
end

function Optimization:__tostring() return "kvplan.Optimization '" .. self.name .. "'" end

-- ---- combinations ----------------------------------------------------------------

local Combination = {}
Combination.__index = Combination
Combination.__name = "kvplan.Combination"
M.Combination = Combination

local function before(a, b)
  local pa, pb = phase_index[a.phase], phase_index[b.phase]
  if pa ~= pb then return pa < pb end
  return a.name < b.name
end

-- Members of x (an optimization, a table of hooks, a combination, or a list
-- of any of them) appended to out. A list inside itself is an error (it
-- was a stack overflow inside this function); within: the lists around x.
local function gather(x, out, within)
  if getmetatable(x) == Combination then
    for _, m in ipairs(x.members) do out[#out + 1] = m end
  elseif getmetatable(x) == Optimization then
    out[#out + 1] = x
  elseif type(x) == "table" and x.apply == nil and x.name == nil then
    within = within or {}
    if within[x] then util.raise("the list of optimizations contains itself") end
    within[x] = true
    for i = 1, #x do gather(x[i], out, within) end
    within[x] = nil
  else
    out[#out + 1] = M.define(x)
  end
end

--- A combination of optimizations in phase order: kv.optim.combine{a, b}.
--- Errors when a member appears twice or two members share an exclusive slot.
function M.combine(x)
  if getmetatable(x) == Combination then return x end
  local members = {}
  if x ~= nil then gather(x, members) end
  table.sort(members, before)
  local seen, slots, names = {}, {}, {}
  for i, m in ipairs(members) do
    if seen[m.name] then util.raise("optimization '%s' appears twice in a combination", m.name) end
    seen[m.name] = true
    if m.exclusive then
      local other = slots[m.exclusive]
      if other then
        util.raise("optimizations '%s' and '%s' both set the %s: a combination takes one",
                   other, m.name, m.exclusive)
      end
      slots[m.exclusive] = m.name
    end
    names[i] = m.name
  end
  local name = #names > 0 and table.concat(names, "+") or "none"
  return setmetatable({members = members, name = name}, Combination)
end

--- The name of a combination (or of anything combine accepts).
function M.name(x) return M.combine(x).name end

function Combination:__tostring() return "kvplan.Combination '" .. self.name .. "'" end

--- The empty combination.
M.none = M.combine{}

--- Deployment options with the combination applied in phase order:
--- opts2, combination = kv.optim.apply(opts, {a, b}). opts is not changed.
function M.apply(opts, x)
  if type(opts) ~= "table" then util.raise("kv.optim.apply needs deployment options, got %s", type(opts)) end
  local combo = M.combine(x)
  local fields = require("kvplan.deploy").fields
  local o = util.copy(opts)
  o.optim = nil
  local ctx = {combination = combo, model = function(t) return models.get(t.model) end}
  for _, m in ipairs(combo.members) do
    ctx.optimization = m
    local r = m.apply(util.copy(o), ctx)
    if type(r) ~= "table" then
      util.raise("optimization '%s': apply must return the deployment options, got %s", m.name,
                 type(r))
    end
    util.check_keys(r, fields, "the options optimization '" .. m.name .. "' returned")
    o = r
  end
  return o, combo
end

local function sorted_members(list, what)
  if type(list) ~= "table" or getmetatable(list) ~= nil then
    util.raise("%s needs a list of optimizations, got %s", what, type(list))
  end
  local items = {}
  for i = 1, #list do items[i] = M.define(list[i]) end
  table.sort(items, before)
  return items
end

--- Every subset of the optimizations (2^n combinations, "none" first, then by
--- size), whatever order they are listed in. Subsets that would hold two
--- optimizations of one exclusive slot are left out.
function M.subsets(list)
  local items = sorted_members(list, "subsets")
  if #items > 16 then util.raise("subsets of %d optimizations are too many (at most 16)", #items) end
  local masks = {}
  for mask = 0, (1 << #items) - 1 do
    local slots, ok, chosen = {}, true, {}
    for i, m in ipairs(items) do
      if mask & (1 << (i - 1)) ~= 0 then
        if m.exclusive and slots[m.exclusive] then ok = false end
        if m.exclusive then slots[m.exclusive] = true end
        chosen[#chosen + 1] = i
      end
    end
    if ok then masks[#masks + 1] = chosen end
  end
  table.sort(masks, function(a, b)
    if #a ~= #b then return #a < #b end
    for i = 1, #a do if a[i] ~= b[i] then return a[i] < b[i] end end
    return false
  end)
  local out = {}
  for i, chosen in ipairs(masks) do
    local ms = {}
    for j, k in ipairs(chosen) do ms[j] = items[k] end
    out[i] = M.combine(ms)
  end
  return out
end

--- One combination per choice of one entry from each list (kv.optim.none
--- chooses nothing): product{{a, b}, {c, d}} -> a+c, a+d, b+c, b+d.
function M.product(lists)
  if type(lists) ~= "table" or #lists == 0 then
    util.raise("product needs a list of lists of optimizations")
  end
  local out, pos = {}, {}
  for i, l in ipairs(lists) do
    if type(l) ~= "table" or getmetatable(l) ~= nil or #l == 0 then
      util.raise("product: entry %d must be a non-empty list of optimizations", i)
    end
    pos[i] = 1
  end
  while true do
    local pick = {}
    for i, l in ipairs(lists) do pick[i] = l[pos[i]] end
    out[#out + 1] = M.combine(pick)
    local i = #lists
    while i >= 1 do
      pos[i] = pos[i] + 1
      if pos[i] <= #lists[i] then break end
      pos[i] = 1
      i = i - 1
    end
    if i == 0 then break end
  end
  return out
end

-- The request-length distributions live in kvplan.workload (kv.workload);
-- the names they had here remain, the same functions.
M.Distribution = workload.Distribution
M.fixed, M.uniform, M.normal = workload.fixed, workload.uniform, workload.normal
M.lognormal, M.empirical = workload.lognormal, workload.empirical

-- ---- helpers of the built-ins ------------------------------------------------------

local function count(t, k, min, default)
  local v = t[k]
  if v == nil then
    if default == nil then util.raise("field '%s' is required", k) end
    return default
  end
  return util.count(v, k, min)
end

local function ratio(v, field, lo_open, hi)
  if type(v) ~= "number" or not (v > lo_open and v <= hi) then
    util.raise("field '%s' must be in (%s, %s], got %s", field, fmt_num(lo_open), fmt_num(hi),
               util.shown(v))
  end
  return v
end

local model_facts = models.facts

-- ---- built-in optimizations ------------------------------------------------------

-- Built-ins whose effect is a fixed set of deployment fields whatever the
-- model, the GPU and the other options: the field groups they set, by the
-- core's names (engine/core/optim.h kvp_combo_bit). A sweep resolves a
-- combination of such members once and applies it to every deployment in C.
local core_sets = setmetatable({}, {__mode = "k"})
local function fixed(o, set)
  if set then core_sets[o] = set end
  return o
end

--- The field groups a combination sets on a deployment (sorted names), when
--- every member is a built-in whose effect does not depend on the model, the
--- GPU or the other options (kv_quant, paged, contiguous, kivi with `full`,
--- streaming, h2o, prefix, parallel_sampling, continuous, speculative with a
--- draft model or none); nil otherwise (budget rules, model conversions,
--- per-layer budgets, offload, draft heads, optimizations of one's own).
function M.core_fields(x)
  local set = {}
  for _, m in ipairs(M.combine(x).members) do
    local s = core_sets[m]
    if s == nil then return nil end
    for _, k in ipairs(s) do set[k] = true end
  end
  return util.sorted_keys(set)
end

local engine_doc = {
  vllm = "KV pool = gpu_memory_utilization x total - weights - activation peak - non-torch "
         .. "memory, one null block (vllm/v1/worker/gpu_worker.py)",
  sglang = "KV pool = mem_fraction_static x (total - overhead) - weights, tokens rounded down "
           .. "to the page size (sglang model_runner_kv_cache_mixin.py)",
  trtllm = "KV pool = free_gpu_memory_fraction of the memory free after weights and "
           .. "activations, capped by max_tokens (TensorRT-LLM docs/source/reference/memory.md)",
}

--- kv.optim.budget "sglang" or {rule = "trtllm", fraction = 0.85, max_tokens = 65536}:
--- the engine's budget rule with its own default fraction unless one is given.
function M.budget(t)
  if type(t) == "string" then t = {rule = t} end
  opts_of(t, {rule = true, fraction = true, max_tokens = true}, "budget")
  local rule = t.rule
  if engine_doc[rule] == nil then
    util.raise("unknown budget rule '%s'%s", util.shown(rule),
               util.suggest(util.shown(rule), util.sorted_keys(engine_doc)))
  end
  local f = t.fraction ~= nil and ratio(t.fraction, "fraction", 0, 1) or nil
  local mt = t.max_tokens ~= nil and util.count(t.max_tokens, "max_tokens") or nil
  if mt and rule ~= "trtllm" then util.raise("'max_tokens' is a TensorRT-LLM setting, not %s's", rule) end
  local name = "budget-" .. rule .. (f and ("-" .. fmt_num(f)) or "") .. (mt and ("-max" .. mt) or "")
  return M.define{
    name = name, phase = "budget", exclusive = "budget rule", doc = engine_doc[rule],
    source = "vLLM vllm/v1/worker/gpu_worker.py; SGLang python/sglang/srt/model_executor/model_runner.py; TensorRT-LLM docs/source/reference/memory.md (rules in engine/core/ledger.c)", params = {rule = rule, fraction = f},
    apply = function(o)
      o.budget, o.utilization, o.max_kv_tokens = rule, f, mt
      return o
    end,
  }
end

--- kv.optim.paged{block = 16}: KV in blocks allocated on demand; a sequence
--- wastes at most its last block.
function M.paged(t)
  t = opts_of(t or {}, {block = true}, "paged")
  local block = t.block and util.count(t.block, "block") or nil
  return fixed(M.define{
    name = block and ("paged-" .. block) or "paged", phase = "allocation",
    exclusive = "allocation policy",
    doc = "a request of n tokens takes ceil(n / block) blocks, allocated as it grows",
    source = "PagedAttention: Kwon et al., SOSP 2023 (under 4 % waste against 60-80 %)",
    apply = function(o)
      o.allocation = "paged"
      if block then o.block = block end
      return o
    end,
  }, block and {"allocation", "block"} or {"allocation"})
end

--- kv.optim.contiguous{}: each request reserves max_model_len tokens of KV when
--- admitted (the systems before PagedAttention).
function M.contiguous(t)
  opts_of(t or {}, {}, "contiguous")
  return fixed(M.define{
    name = "contiguous", phase = "allocation", exclusive = "allocation policy",
    doc = "each request reserves max_model_len tokens, unpaged, whatever its length",
    source = "Kwon et al., SOSP 2023, section 3: FasterTransformer and Orca reserve the "
             .. "maximum length; 20.4-38.2 % of their KV memory held real tokens",
    apply = function(o)
      o.allocation = "contiguous"
      return o
    end,
  }, {"allocation"})
end

--- kv.optim.kv_quant "fp8" (any KV format name or table): the KV cache in
--- that format.
function M.kv_quant(f)
  local fmt = formats.get(f, "kv")
  return fixed(M.define{
    name = "kv-" .. fmt.name, phase = "format", exclusive = "KV format",
    doc = string.format("KV elements stored as %s (%.4g bits each, group scales included)",
                        fmt.name, formats.bits(fmt)),
    source = "vLLM kv_cache_dtype (vllm/config/cache.py; fp8 halves bf16); group formats add "
             .. "(scale + zero) / group bits)",
    lossy = "quantization",
    apply = function(o)
      o.kv = fmt
      return o
    end,
  }, {"kv"})
end

--- kv.optim.kivi{bits = 2, group = 32, recent = 128 [, full = "bf16"]}: KIVI
--- (Liu et al., ICML 2024): keys per channel and values per token in groups
--- of `group` with an fp16 scale and fp16 zero point; the last `recent`
--- tokens of each sequence stay in full precision.
function M.kivi(t)
  t = opts_of(t or {}, {bits = true, group = true, recent = true, full = true}, "kivi")
  local bits = count(t, "bits", 1, 2)
  if bits > 8 then util.raise("field 'bits' must be 1..8, got %d", bits) end
  local group = count(t, "group", 1, 32)
  local recent = count(t, "recent", 0, 128)
  local full = t.full and formats.get(t.full, "full") or nil
  local fmt = {name = string.format("kivi-int%d-g%d", bits, group), bits = bits, group = group,
               scale = 16, zero = 16}
  return fixed(M.define{
    name = string.format("kivi-%db-g%d-r%d", bits, group, recent), phase = "format",
    exclusive = "KV format", lossy = "quantization",
    doc = string.format("KV in %d bits with an fp16 scale and zero per %d elements (%.4g bits), "
                        .. "the last %d tokens in full precision", bits, group,
                        bits + 32 / group, recent),
    source = "KIVI: Liu et al., ICML 2024",
    apply = function(o)
      o.kv, o.kv_recent, o.kv_full = fmt, recent, full
      return o
    end,
  }, full and {"kivi", "kv"} or nil)
end

-- A model with fewer KV heads: kv_heads on every attention run; the K and V
-- projections shrink by 2 x hidden x head_dim x (old - new) per layer.
local function with_kv_heads(m, k, id)
  if m.mla then util.raise("model '%s' uses MLA: it has no KV heads to reduce", m.id) end
  if (m.heads or 0) % k ~= 0 then
    util.raise("field 'kv_heads' must divide the %d attention heads of '%s', got %d", m.heads or 0,
               m.id, k)
  end
  local t = model_facts(m)
  local cut = 0
  for i = 1, m.layers do
    local l = m:layer(i)
    if l.kind == "full" or l.kind == "sliding" or l.kind == "chunked" then
      if k > l.kv_heads then
        util.raise("field 'kv_heads' must be at most the %d KV heads of '%s', got %d", l.kv_heads,
                   m.id, k)
      end
      cut = cut + 2 * (m.hidden or 0) * (l.head_dim or 0) * (l.kv_heads - k)
    end
  end
  t.id, t.kv_heads = id, k
  if t.layer_kinds then
    local runs = {}
    for i, r in ipairs(t.layer_kinds) do
      runs[i] = util.copy(r)
      if r.kv_heads then runs[i].kv_heads = k end
    end
    t.layer_kinds = runs
  end
  if t.params then
    t.params = t.params - cut
    if t.active then t.active = t.active - cut end
  end
  return models.new(t)
end

--- kv.optim.gqa{kv_heads = 8}: convert the model to grouped-query attention
--- with that many KV heads (Ainslie et al., EMNLP 2023: mean-pooled heads,
--- then uptraining); the KV cache scales with kv_heads.
function M.gqa(t)
  t = opts_of(t or {}, {kv_heads = true}, "gqa")
  local k = count(t, "kv_heads", 1)
  local name = k == 1 and "mqa" or ("gqa-" .. k)
  return M.define{
    name = name, phase = "model", exclusive = "attention form", lossy = "conversion needs uptraining",
    doc = string.format("every attention layer keeps %d KV heads; K and V weights shrink alike", k),
    source = k == 1 and "MQA: Shazeer, 2019" or "GQA: Ainslie et al., EMNLP 2023",
    apply = function(o, ctx)
      local m = ctx.model(o)
      o.model = with_kv_heads(m, k, m.id .. "+" .. name)
      return o
    end,
  }
end

--- kv.optim.mqa{}: one KV head (gqa{kv_heads = 1}).
function M.mqa(t)
  opts_of(t or {}, {}, "mqa")
  return M.gqa{kv_heads = 1}
end

--- kv.optim.mla{kv_lora_rank = 512, rope_dim = 64}: full-attention layers
--- become multi-head latent attention caching one latent of kv_lora_rank +
--- rope_dim elements a token (DeepSeek-V2, 2024); weights are not changed.
function M.mla(t)
  t = opts_of(t or {}, {kv_lora_rank = true, rope_dim = true}, "mla")
  local r, rope = count(t, "kv_lora_rank", 1), count(t, "rope_dim", 0, 64)
  local name = string.format("mla-%d-%d", r, rope)
  return M.define{
    name = name, phase = "model", exclusive = "attention form", lossy = "conversion needs uptraining",
    doc = string.format("full-attention layers cache a %d + %d element latent, no factor 2",
                        r, rope),
    source = "DeepSeek-V2 (2024); vllm MLAAttentionSpec",
    apply = function(o, ctx)
      local m = ctx.model(o)
      if m.mla then util.raise("model '%s' already uses MLA", m.id) end
      local f = model_facts(m)
      f.id = m.id .. "+" .. name
      f.mla = {kv_lora_rank = r, rope_dim = rope}
      if f.layer_kinds then
        local runs = {}
        for i, run in ipairs(f.layer_kinds) do
          runs[i] = util.copy(run)
          if run.kind == "full" then
            runs[i].kind, runs[i].kv_heads, runs[i].head_dim, runs[i].head_dim_v = "mla", nil, nil, nil
            runs[i].kv_lora_rank, runs[i].rope_dim = r, rope
          end
        end
        f.layer_kinds = runs
      end
      o.model = models.new(f)
      return o
    end,
  }
end

local function merge_evict(o, changes)
  local e = util.copy(o.evict or {})
  for k, v in pairs(changes) do e[k] = v end
  o.evict = e
  return o
end

--- kv.optim.streaming{sinks = 4, recent = 2048}: StreamingLLM (Xiao et al.,
--- ICLR 2024) keeps the first `sinks` tokens and the last `recent`.
function M.streaming(t)
  t = opts_of(t or {}, {sinks = true, recent = true}, "streaming")
  local sinks, recent = count(t, "sinks", 0, 4), count(t, "recent", 1)
  return fixed(M.define{
    name = string.format("streaming-%d-%d", sinks, recent), phase = "eviction",
    exclusive = "eviction window", lossy = "eviction",
    doc = string.format("full and MLA layers keep at most %d + %d tokens a sequence", sinks, recent),
    source = "StreamingLLM: Xiao et al., ICLR 2024",
    apply = function(o) return merge_evict(o, {sinks = sinks, recent = recent}) end,
  }, {"recent", "sinks"})
end

--- kv.optim.h2o{keep = 0.2, recent = 256}: H2O (Zhang et al., NeurIPS 2023)
--- keeps the heavy hitters, a fraction `keep` of the sequence, and the last
--- `recent` tokens.
function M.h2o(t)
  t = opts_of(t or {}, {keep = true, recent = true}, "h2o")
  local keep = ratio(t.keep, "keep", 0, 1)
  local recent = count(t, "recent", 0, 0)
  return fixed(M.define{
    name = string.format("h2o-%s-%d", fmt_num(keep), recent), phase = "eviction",
    exclusive = "eviction window", lossy = "eviction",
    doc = string.format("full and MLA layers keep ceil(%s n) + %d tokens of n", fmt_num(keep), recent),
    source = "H2O: Zhang et al., NeurIPS 2023",
    apply = function(o) return merge_evict(o, {keep = keep, recent = recent}) end,
  }, {"keep", "recent"})
end

--- kv.optim.layer_budgets{budgets = {...} or function(layer, layers), name = }:
--- per-layer token budgets (as PyramidKV, Cai et al. 2024): layer i keeps at
--- most budgets[i] tokens (0: no budget); at most 8 distinct values.
function M.layer_budgets(t)
  t = opts_of(t or {}, {budgets = true, name = true}, "layer_budgets")
  local b = t.budgets
  if type(b) ~= "table" and type(b) ~= "function" then
    util.raise("field 'budgets' must be a list of per-layer tokens or a function(layer, layers)")
  end
  if type(b) == "table" then
    for i, v in ipairs(b) do util.count(v, "budgets[" .. i .. "]", 0) end
  end
  return M.define{
    name = t.name or "layer-budgets", phase = "eviction", exclusive = "per-layer budgets",
    lossy = "eviction",
    doc = "each full or MLA layer keeps at most its own budget of tokens",
    source = "PyramidKV: Cai et al., 2024 (per-layer budgets)",
    apply = function(o) return merge_evict(o, {layers = b}) end,
  }
end

--- kv.optim.speculative{draft = "llama-3.2-1b", tokens = 4, acceptance = 0.7}
--- or {heads = "eagle" | "mtp", layers = 1, tokens = 4, acceptance = 0.8}
--- or {heads = "extract_hidden_states", hidden_states = 3, tokens = 1, ...}:
--- the draft's weights and KV, g = tokens extra KV slots per sequence, and
--- the rates of Leviathan et al. (ICML 2023) as columns.
function M.speculative(t)
  t = opts_of(t or {}, {draft = true, heads = true, layers = true, tokens = true,
                        acceptance = true, weights = true, weight_bytes = true,
                        hidden_states = true}, "speculative")
  local g = count(t, "tokens", 1)
  if type(t.acceptance) ~= "number" then
    util.raise("field 'acceptance' must be a number in [0, 1), got %s", util.shown(t.acceptance))
  end
  local rates = oc.spec_rates(t.acceptance, g) -- checks acceptance in [0, 1)
  local who
  if t.draft ~= nil then
    who = type(t.draft) == "string" and t.draft or models.get(t.draft).id
  elseif t.heads ~= nil then
    who = tostring(t.heads) .. "-" .. tostring(t.layers or 1)
  else
    who = "lookup" -- drafts without a model (n-gram, prompt lookup)
  end
  local s = {tokens = g, acceptance = t.acceptance, draft = t.draft, heads = t.heads,
             layers = t.layers, weights = t.weights, weight_bytes = t.weight_bytes,
             hidden_states = t.hidden_states}
  return fixed(M.define{
    name = string.format("spec-%s-g%d-a%s", who, g, fmt_num(t.acceptance)), phase = "speculative",
    exclusive = "speculative decoding",
    doc = string.format("draft weights and KV on the last stage, %d more KV slots a sequence; "
                        .. "%.4g tokens a target step", g, rates.tokens_per_step),
    source = "Leviathan et al., ICML 2023; EAGLE: Li et al., ICML 2024; MTP: DeepSeek-V3 report",
    params = s,
    apply = function(o)
      o.speculative = util.copy(s)
      return o
    end,
    columns = {
      spec_tokens_per_step = function() return rates.tokens_per_step end,
      spec_steps_per_token = function() return rates.steps_per_token end,
      spec_kv_writes_per_token = function() return rates.target_writes_per_token end,
      spec_draft_kv_writes_per_token = function() return rates.draft_writes_per_token end,
    },
  }, t.heads == nil and {"speculative"} or nil)
end

--- kv.optim.prefix{tokens = 2048}: a prefix every request shares (a system
--- prompt) held once; whole blocks only, as vLLM hashes full blocks.
function M.prefix(t)
  t = opts_of(t or {}, {tokens = true}, "prefix")
  local n = count(t, "tokens", 1)
  return fixed(M.define{
    name = "prefix-" .. n, phase = "sharing", exclusive = "shared prefix",
    doc = string.format("the first %d tokens of every request, in whole blocks, held once", n),
    source = "vLLM automatic prefix caching (full-block hashes); SGLang RadixAttention",
    apply = function(o)
      o.prefix = n
      return o
    end,
  }, {"prefix"})
end

--- kv.optim.parallel_sampling{n = 4, prompt = 1024 | output = 512}: each
--- request is n sequences sharing its prompt (given, or everything but the
--- `output` tokens each sample generates); concurrency counts requests.
function M.parallel_sampling(t)
  t = opts_of(t or {}, {n = true, prompt = true, output = true}, "parallel_sampling")
  local n = count(t, "n", 2)
  if (t.prompt == nil) == (t.output == nil) then
    util.raise("parallel_sampling needs 'prompt' (tokens the samples share) or 'output' "
               .. "(tokens each sample generates), one of them")
  end
  local prompt = t.prompt and count(t, "prompt", 1) or nil
  local output = t.output and count(t, "output", 1) or nil
  return fixed(M.define{
    name = prompt and string.format("n%d-prompt%d", n, prompt) or string.format("n%d-out%d", n, output),
    phase = "sharing", exclusive = "parallel sampling",
    doc = string.format("%d sequences a request share the prompt's whole blocks", n),
    source = "vLLM parallel sampling: copy-on-write prompt blocks (Kwon et al., SOSP 2023, 4.4)",
    apply = function(o)
      o.samples, o.prompt, o.output = n, prompt, output
      return o
    end,
  }, {"samples"})
end

local function offload_traffic(row, l)
  if not l.fits then return 0 end
  local _, shared, expected = l:request_bytes(row.context)
  local need = expected * row.concurrency + shared + l.null_blocks * l.block_bytes
  return math.max(0, need - l.kv_pool)
end

--- kv.optim.offload{host = "512 GiB", pcie_gbps = 64}: KV beyond the GPU pool
--- kept in host memory (split over the deployment's GPUs); columns give the
--- bytes that cross PCIe each decode step and the time at pcie_gbps GB/s.
function M.offload(t)
  t = opts_of(t or {}, {host = true, pcie_gbps = true}, "offload")
  local host = units.bytes(t.host, "host")
  if host < 1 then util.raise("field 'host' must be > 0 bytes, got %d", host) end
  local gbps = t.pcie_gbps and number(t.pcie_gbps, "pcie_gbps") or nil
  if gbps and gbps <= 0 then util.raise("field 'pcie_gbps' must be > 0, got %s", fmt_num(gbps)) end
  return M.define{
    name = "offload-" .. units.format(host):gsub(" ", ""), phase = "offload",
    exclusive = "offload",
    doc = "host memory for KV beside the GPU pool; KV held there crosses PCIe every decode step",
    source = "TensorRT-LLM host_cache_size secondary pool (kvCacheManager.cpp); vLLM swap space, "
             .. "LMCache",
    apply = function(o)
      o.offload = {host = host, pcie_gbps = gbps}
      return o
    end,
    columns = {
      host_kv_gib = function(_, l) return units.gib(l.host_blocks * l.block_bytes) end,
      pcie_gib_per_step = function(row, l) return units.gib(offload_traffic(row, l)) end,
      pcie_ms_per_step = function(row, l, d)
        local bw = d.offload and d.offload.pcie_gbps
        if bw == nil then return "" end
        return offload_traffic(row, l) / (bw * 1e9) * 1000
      end,
    },
  }
end

--- kv.optim.continuous{lengths = kv.workload.lognormal{...}}: continuous
--- batching, memory side: capacity sized by the expected request length
--- under the distribution (each capped at the asked context), not the worst
--- case; requests join and leave at every step (Orca: Yu et al., OSDI 2022).
function M.continuous(t)
  t = opts_of(t or {}, {lengths = true}, "continuous")
  if getmetatable(t.lengths) ~= workload.Distribution then
    util.raise("field 'lengths' must be a length distribution (kv.workload.uniform{...}, "
               .. "normal, lognormal, fixed, empirical), got %s", type(t.lengths))
  end
  local lengths = t.lengths
  return fixed(M.define{
    name = "continuous-" .. lengths.name, phase = "batching", exclusive = "batching",
    doc = string.format("capacity sized by the mean over %d equally likely lengths of %s",
                        oc.len_points, lengths.name),
    source = "Orca: Yu et al., OSDI 2022 (iteration-level scheduling)",
    apply = function(o)
      o.lengths = lengths
      return o
    end,
    columns = {
      mean_length = function() return lengths:mean() end,
    },
  }, {"lengths"})
end

--- Built-in speculative rates: kv.optim.speculative_rates(0.7, 4).
function M.speculative_rates(acceptance, tokens) return oc.spec_rates(acceptance, tokens) end

-- ---- report rows -------------------------------------------------------------------

--- Columns every optimization row has beside the ledger's.
M.row_columns = {"optim", "budget", "allocation", {"real_token_pct", precision = 1},
                 {"request_gib", precision = 3}, "quality"}

--- The columns of report rows for these combinations: the ledger's, the
--- optimization columns, then every member column, sorted.
function M.columns(combos)
  local report = require "kvplan.report"
  local cols = {}
  for _, c in ipairs(report.ledger_columns) do cols[#cols + 1] = c end
  for _, c in ipairs(M.row_columns) do cols[#cols + 1] = c end
  local extra = {}
  for _, x in ipairs(combos or {}) do
    for _, m in ipairs(M.combine(x).members) do
      for k in pairs(m.columns or {}) do extra[k] = true end
    end
  end
  for _, k in ipairs(util.sorted_keys(extra)) do cols[#cols + 1] = {k, precision = 4} end
  return cols
end

--- What a combination does not model about quality: "not modelled: kv-fp8
--- (quantization)"; "no change" when every member is lossless.
function M.quality(x)
  local parts = {}
  for _, m in ipairs(M.combine(x).members) do
    if m.lossy then parts[#parts + 1] = m.name .. " (" .. m.lossy .. ")" end
  end
  if #parts == 0 then return "no change" end
  return "not modelled: " .. table.concat(parts, "; ")
end

--- The percentage of allocated KV slots that hold real tokens for requests
--- of up to `context` tokens (the deployment's length distribution, else
--- all of that length).
function M.real_token_pct(d, context)
  local l = d:ledger()
  local lengths = {context}
  if d.lengths then
    lengths = {}
    for i, p in ipairs(d.lengths:points()) do lengths[i] = math.min(p, context) end
  end
  local real, alloc = oc.alloc_usage(l.allocation, l.block, l.max_model_len, lengths)
  return 100 * real / alloc
end

--- One report row for deployment d (built with optim = ...) at `context`
--- and `concurrency`: the ledger row, the combination's name in 'optim', and
--- its members' columns; `columns` (from kv.optim.columns) fills the columns
--- of other combinations with "".
function M.row(d, context, concurrency, columns)
  local report = require "kvplan.report"
  local row = report.ledger_row(d, context, concurrency)
  local l = d:ledger()
  local combo = d.optim or M.none
  row.optim = combo.name
  row.budget, row.allocation = l.budget, l.allocation
  row.real_token_pct = M.real_token_pct(d, row.context)
  local expected = 0
  if l.stages > 0 then expected = select(3, l:request_bytes(row.context)) end
  row.request_gib = units.gib(expected)
  row.quality = M.quality(combo)
  for _, c in ipairs(columns or {}) do
    local name = type(c) == "table" and c[1] or c
    if row[name] == nil then row[name] = "" end
  end
  for _, m in ipairs(combo.members) do
    -- by name: a column that reads another sees it filled or not the same way every run
    for k, f in util.sorted_pairs(m.columns or {}) do row[k] = f(row, l, d) end
  end
  return row
end

-- a method called with something else as self: an error at the user's line
util.methods(Optimization)
util.methods(Combination)

return M
