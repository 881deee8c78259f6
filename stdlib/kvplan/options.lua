-- stdlib/kvplan/options.lua: script arguments. `kvplan script.lua key=value`
-- passes {key = "value"} to the script; options() checks the keys against
-- the script's defaults and converts each value to its default's type.
-- Stdlib layer.
--
-- Values: numbers; integers also as token counts with vLLM's suffixes
-- (32k = 32000, 32K = 32768: units.tokens); true/false/yes/no/1/0; lists
-- comma-separated, each item trimmed. An argument named as a deployment
-- field (fields.lua) is converted and checked by the field's type instead
-- (bytes take units: 2.3GiB), the script's own default passing as it is
-- (activation = "predicted", tp = {0}). Keys: the serving engines' own option
-- names stand for kvplan's (tensor_parallel_size for tp, kv_cache_dtype for
-- kv, ...: fields.aliases), with dashes or underscores. A bad argument
-- given on the command line is reported as "command line: argument ...",
-- not at the script's line; arguments called model(s), gpu(s), kv and
-- weights are looked up in the catalogs at once, so a misspelt name is
-- reported the same way. A field marked every_command (profile=FILE) is
-- taken by every script, read at once, and given on the command line
-- applies to every deployment of the run (deploy.run_defaults).

local util = require "kvplan.util"
local units = require "kvplan.units"
local fields = require "kvplan.fields"

local M = {}

-- the options M.parse read from the command line: opt -> {key = the
-- spelling given} (M.as_usage)
local given_of = setmetatable({}, {__mode = "k"})

local trim = util.trim

local Required = {}
Required.__index = Required
Required.__name = "kvplan.Required"
local AtLeast = {}
AtLeast.__name = "kvplan.AtLeast"

-- An error of the stdlib as a command-line argument's.
local function strip(err)
  return (tostring(err):gsub("^.-:%d+: ", "", 1):gsub("^field", "argument"))
end

local by_field

-- v converted to the type of def; f: the deployment field it sets (by_field).
-- min: the argument's least value (M.at_least), whose check follows and
-- names it ('requests=-1' said ">= 0", 'requests=0' ">= 1")
local function convert(key, v, def, fail, f, min)
  local t = type(def)
  v = trim(v)
  if f ~= nil and t ~= "table" then return by_field(f, key, v, def, fail, min) end
  if t == "number" then
    -- a default >= 0 is a count, a size or a rate: a negative value is no
    -- such thing ('best context=-1' was the model's context, silently)
    local function nonneg(x)
      if def >= 0 and x < 0 and not (min ~= nil and min >= 0) then
        fail("argument '%s' must be %s >= 0, got '%s'", key,
             math.type(def) == "integer" and "an integer" or "a number", util.escape(v, 64))
      end
      return x
    end
    if math.type(def) == "integer" then
      local ok, x = pcall(units.tokens, v, key)
      if ok then return nonneg(x) end
      -- past 64 bytes a number is not one: units.tokens said so (at once)
      if #v > 64 or v:match("^%d+%.%d*[KMGT]$") then fail("%s", strip(x)) end
      local n = tonumber(v)
      -- an integer is written in decimal, as vLLM's human_readable_int reads
      -- one (Python's int(value) refuses '0x10' and '1e3': docs/formulas.md,
      -- "Sizes and token counts as vLLM reads them"); Lua's tonumber took
      -- them as 16 and 1000
      if n ~= nil and not util.decimal(v) then
        fail("argument '%s' must be a whole number written in decimal, got '%s'", key, util.escape(v, 64))
      end
      if n ~= nil and n == n and n - n == 0 then
        if n == math.floor(n) and n > -2^63 and n < 2^63 then return nonneg(math.tointeger(n)) end
        fail("argument '%s' must be an integer, got '%s'", key, v)
      end
      fail("argument '%s' must be a number, got '%s'", key, v)
    end
    local x = #v <= 64 and tonumber(v) or nil
    -- written in decimal, as Python's float() reads the engines' flags
    -- (utilization=0x1p-1 was 0.5)
    if x ~= nil and not util.decimal_number(v) then
      fail("argument '%s' must be a number written in decimal, got '%s'", key, util.escape(v, 64))
    end
    if x == nil or x ~= x or x == math.huge or x == -math.huge then
      fail("argument '%s' must be a number, got '%s'", key, util.escape(v, 64))
    end
    return nonneg(x)
  elseif t == "boolean" then
    local l = v:lower()
    if l == "true" or l == "1" or l == "yes" then return true end
    if l == "false" or l == "0" or l == "no" then return false end
    fail("argument '%s' must be true or false, got '%s'", key, v)
  elseif t == "table" then -- a list: comma-separated values of the first element's type
    local out = {}
    local d1 = def[1]
    if getmetatable(d1) == Required then d1 = "" end
    -- an empty item among others ('tp=1,,2', 'gpus=l4,', ',fp8') is refused:
    -- it was dropped without a word
    local blank = trim(v) == ""
    local seen = {}
    for item in (v .. ","):gmatch("([^,]*),") do
      item = trim(item)
      if item ~= "" then
        local x = convert(key, item, d1 or "", fail, f)
        -- an axis value given twice ran every row of it twice ('tp=1,1';
        -- best ranked a candidate "ties with" itself)
        if seen[x] then
          fail("argument '%s' gives '%s' twice in '%s' (items %d and %d; expected each value once)",
               key, util.escape(item, 64), util.escape(v, 64), seen[x], #out + 1)
        end
        out[#out + 1] = x
        seen[x] = #out
      elseif not blank then
        fail("argument '%s' has an empty item in '%s' (expected values separated by single commas)",
             key, util.escape(v, 64))
      end
    end
    -- a list given as nothing, where its default is no empty list or name
    -- ('tp=' ran no row, 'kv=' planned the model's format)
    if #out == 0 and d1 ~= nil and d1 ~= "" then
      fail("argument '%s' is empty (expected e.g. %s=%s)", key, key, util.shown(d1))
    end
    return out
  end
  if v == "" and type(def) == "string" and def ~= "" then
    fail("argument '%s' is empty (expected e.g. %s=%s)", key, key, def)
  end
  return v
end

-- A value of deployment field f: converted by the field's type (a count as
-- an integer, bytes with units, ...) and checked by fields.check; the
-- script's default itself passes as it is.
-- (the templates' negative numbers leave the bounds to fields.check)
local as_def = {count = -1, fraction = -1.0, number = -1.0, boolean = false}
by_field = function(f, key, v, def, fail, min)
  if type(def) == "string" and v == def then return v end
  -- vLLM's --max-model-len auto (or -1): kv.deploy fits it (fields.lua auto)
  if f.auto and (v == "auto" or v == "-1") then return "auto" end
  -- as convert's: 'fit kv=' failed at scripts/fit.lua:99, "unknown format ''"
  if v == "" and type(def) == "string" then
    fail("argument '%s' is empty (expected e.g. %s=%s)", key, key, def)
  end
  local x = v
  if f.type == "bytes" then
    local ok, b = pcall(units.bytes, v, key)
    if not ok then fail("%s", strip(b)) end
    -- a size without a unit is refused ('activation=2' was 2 bytes), but 0
    -- and the fields whose name says bytes (kv_cache_memory_bytes, as vLLM
    -- reads its flag)
    if b ~= 0 and v:find("^[%d.eE+]+$") and not f.name:find("_bytes$") then
      fail("argument '%s': '%s' has no unit (expected e.g. '%s GiB', '%s GB', '%sG' = %s GiB, "
           .. "'%sg' = %s GB, or '%sB' bytes)", key, util.escape(v, 64), v, v, v, v, v, v, v)
    end
    x = b
  elseif as_def[f.type] ~= nil then
    x = convert(key, v, as_def[f.type], fail)
  end
  if x == def then return x end
  -- below the command's own least value: its check names that bound
  -- (simulate 'prompt=-1' said the field's ">= 0", 'prompt=0' ">= 1")
  if min ~= nil and type(x) == "number" and x < min then return x end
  local ok, err = pcall(fields.check, f, x)
  if not ok then fail("%s", strip(err)) end
  return x
end

-- Catalog lookups of arguments by name: an unknown name fails here.
local lookups = {
  -- each returns what the name is (an entry given twice by two names is refused)
  model = function(v) return "model '" .. require("kvplan.models").get(v).id .. "'" end,
  gpu = function(v)
    local gpus = require "kvplan.gpus"
    local g = gpus.get(v)
    gpus.check_plannable(g)
    return "gpu '" .. tostring(g.id) .. "'"
  end,
  kv = function(v)
    if v ~= "auto" then require("kvplan.formats").get(v, "kv") end
  end,
  weights = function(v)
    if v ~= "native" then require("kvplan.formats").get(v, "weights") end
  end,
}
lookups.models, lookups.gpus = lookups.model, lookups.gpu

local function lookup(key, v, fail)
  local f = lookups[key]
  if f == nil then return end
  local seen = {}
  for i, item in ipairs(type(v) == "table" and v or {v}) do
    if type(item) == "string" and item ~= "" then
      local ok, id = pcall(f, item) -- id: what the name is, or the lookup's error
      if not ok then fail("argument '%s': %s", key, (util.shown(id):gsub("^.-:%d+: ", "", 1):gsub("^field '[^']*': ", "", 1))) end
      -- one entry by two names ('gpus=h100,h100-sxm'): every row twice
      if id ~= nil and seen[id] then
        fail("argument '%s' names %s twice ('%s', item %d, and '%s', item %d; expected each once)", key,
             id, util.escape(seen[id][2], 64), seen[id][1], util.escape(item, 64), i)
      end
      if id ~= nil then seen[id] = {i, item} end
    end
  end
end

-- key=value words of a stock interpreter's `arg` (lua5.4 script.lua k=v).
local function from_arg(words)
  local out = {}
  for _, w in ipairs(words) do
    local k, v = tostring(w):match("^([^=]+)=(.*)$")
    if k then out[k] = v else out[#out + 1] = w end
  end
  return out
end

--- bad(fmt, ...): a script's own check of an argument failed: on the command
--- line a usage error ("command line: ...", kvplan exits with status 2, as
--- for the arguments options() refuses), else an error at the caller's line.
function M.bad(fmt, ...)
  local cli = package.loaded["kvplan.cli"]
  if cli ~= nil and cli.args ~= nil then
    local text = "command line: " .. string.format(fmt, ...)
    cli.usage_error = text
    error(text, 0)
  end
  util.raise(fmt, ...)
end

--- The error options() raises instead of parsing when kvplan.cli.describe
--- is set (kvplan completion): {defaults = the command's defaults table}.
M.Described = {__name = "kvplan.Described"}

--- required(example): a default that must be given, a string; the error
--- shows the example ("model=llama-3.1-8b"). {required(...)} is a list of
--- at least one string.
function M.required(example)
  return setmetatable({example = example}, Required)
end

--- at_least(min, default): a number argument whose default is `default`
--- and whose value must be >= min, refused on the command line naming the
--- argument ('concurrency=0' failed at the script's line, 'field
--- 'concurrency' must be ...').
function M.at_least(min, default)
  return setmetatable({min = min, default = default}, AtLeast)
end

-- Words one command spells in the plural where it searches a list and
-- another in the singular: each stands for the other (gpu=h100,l40s on fit,
-- gpus=h100 on ledger).
local same_as = {gpu = "gpus", gpus = "gpu", model = "models", models = "model"}

--- options(args, defaults): a table with every default, overridden by args.
--- Unknown keys and values of the wrong type are errors at the user's line,
--- or named as command-line arguments when args came from the command line.
--- Under a stock lua5.4 (require "kvplan" through kvplan.so) `...` holds
--- the words themselves; they are read from the global `arg` then.
--- from_command_line: args are the command line's though not its table
--- (a command's copy without its words), so errors are usage errors.
function M.parse(args, defaults, from_command_line)
  if type(defaults) ~= "table" then
    util.raise("options needs a table of defaults, got %s", type(defaults))
  end
  local cli = package.loaded["kvplan.cli"]
  local from_cli = cli ~= nil and (rawequal(cli.args, args) or from_command_line == true)
  if args == nil or type(args) == "string" then
    local words = rawget(_G, "arg")
    if type(words) == "table" and (args == nil or words[1] == args) then
      args, from_cli = from_arg(words), true
    elseif args ~= nil then
      args = from_arg{args}
    end
  end
  args = args or {}
  if type(args) ~= "table" then util.raise("options needs the script's arguments (...), got %s", type(args)) end
  -- kvplan completion asks each command what it takes: the keys, not a run
  if cli ~= nil and cli.describe then error(setmetatable({defaults = defaults}, M.Described), 0) end
  -- a bad command-line argument is a usage error: kvplan exits with status 2
  -- (engine/cli/main.c run_script reads cli.usage_error), as the manual says
  local fail = from_cli and function(msg, ...)
    local text = "command line: " .. string.format(msg, ...)
    if cli ~= nil then cli.usage_error = text end
    error(text, 0)
  end or util.raise
  local out = {}
  local function is_required(d)
    return getmetatable(d) == Required or type(d) == "table" and getmetatable(d[1]) == Required
  end
  for k, v in pairs(defaults) do
    if getmetatable(v) == Required then out[k] = nil
    elseif getmetatable(v) == AtLeast then out[k] = v.default
    elseif is_required(v) then out[k] = {}
    else out[k] = v end
  end
  local names = fields.aliases
  -- revision=REV beside model=ORG/NAME picks a snapshot of the repo in the
  -- local Hugging Face cache (models.get of "ORG/NAME@REV"), on every script
  -- that takes a model; the model is looked up once both are read
  local revision = defaults.revision == nil and defaults.model ~= nil and args.revision or nil
  if revision ~= nil and type(revision) ~= "string" then
    fail("argument 'revision' must be a branch, tag or commit, got %s", type(revision))
  end
  local spelt = {} -- key -> the spelling given
  -- in sorted order: of several bad arguments the one reported is the same every run
  for k, v in util.sorted_pairs(args) do
    if revision ~= nil and k == "revision" then goto next_arg end
    if type(k) ~= "string" then
      fail("argument '%s' is not of the form key=value", util.shown(v))
    end
    local key = k
    if defaults[key] == nil then
      local u = key:gsub("%-", "_")
      if defaults[u] ~= nil then key = u
      elseif names[u] and defaults[names[u]] ~= nil then key = names[u]
      elseif same_as[u] and defaults[same_as[u]] ~= nil then key = same_as[u] end
    end
    local every = defaults[key] == nil and fields.by_name[(key:gsub("%-", "_"))]
    if every and every.every_command and type(v) == "string" then
      -- a field every script takes (profile): checked now, and applied to
      -- every deployment of the run when it came from the command line
      local name = every.name
      if out[name] ~= nil then fail("argument '%s' is given twice", name) end
      v = trim(v)
      if name == "profile" then
        local ok, err = pcall(require("kvplan.calibrate").read_profile, v)
        if not ok then fail("argument 'profile': %s", (util.shown(err):gsub("^.-:%d+: ", "", 1))) end
      end
      out[name] = v
      if from_cli then require("kvplan.deploy").run_defaults[name] = v end
      goto next_arg
    end
    if defaults[key] == nil then
      -- the engines' spellings of the fields taken are names too (a
      -- misspelt gpu_memory_utilisation is nearest to vLLM's own name)
      local cands = util.sorted_keys(defaults)
      for a, f in util.sorted_pairs(names) do
        if defaults[f] ~= nil and defaults[a] == nil then cands[#cands + 1] = a end
      end
      fail("unknown argument '%s'%s", k, util.suggest(k, cands))
    end
    -- two spellings of one option (tp_size=4 tensor_parallel_size=2): which
    -- won would be pairs()'s order; the names sorted, so the message is too
    if spelt[key] ~= nil and spelt[key] ~= k then
      local a, b = spelt[key], k
      if key == b or (key ~= a and b < a) then a, b = b, a end
      fail("arguments '%s' and '%s' are the same option", a, b)
    end
    spelt[key] = k
    local def = defaults[key]
    if getmetatable(def) == Required then def = "" end
    local min
    if getmetatable(def) == AtLeast then min, def = def.min, def.default end
    -- not 'and convert(...) or v': a boolean converted to false kept the word
    -- ('time=no' was the string "no", true)
    if type(v) == "string" then out[key] = convert(key, v, def, fail, fields.by_name[key], min)
    else out[key] = v end
    if min ~= nil and type(out[key]) == "number" and not (out[key] >= min) then
      fail("argument '%s' must be %s >= %s, got '%s'", key,
           math.type(def) == "integer" and "an integer" or "a number", util.fmt_num(min),
           util.escape(util.shown(v), 64))
    end
    if type(v) == "string" and not (revision ~= nil and key == "model") then lookup(key, out[key], fail) end
    ::next_arg::
  end
  if revision ~= nil then
    revision = trim(revision)
    local m = out.model
    local hf = require "kvplan.hf"
    if not hf.revision_ok(revision) then
      fail("argument 'revision' must be a branch, tag or commit of the repo (letters, digits, '.', '_', "
           .. "'-'), got '%s'", util.escape(revision, 80))
    end
    local repo, at = hf.repo_id(m)
    if type(m) ~= "string" or repo == nil or hf.is_checkpoint(m) then
      fail("argument 'revision' picks a snapshot of a Hugging Face repo id in the local cache "
           .. "(model=ORG/NAME), got model '%s'", util.escape(util.shown(m or ""), 80))
    end
    if at ~= nil then fail("argument 'revision' and model '%s' both name a revision", util.escape(m, 80)) end
    out.model = repo .. "@" .. revision
    lookup("model", out.model, fail)
  end
  for _, k in ipairs(util.sorted_keys(defaults)) do
    local d = defaults[k]
    if is_required(d) and (out[k] == nil or out[k] == "" or type(out[k]) == "table" and #out[k] == 0) then
      d = getmetatable(d) == Required and d or d[1]
      fail("argument '%s' is required, e.g. %s", k, d.example or (k .. "=..."))
    end
  end
  -- the options in effect, for an HTML report's inputs (report.lua)
  if from_cli and cli ~= nil then cli.options = out end
  if from_cli then given_of[out] = spelt end -- M.as_usage: which came from the command line
  return out
end

-- ---- every deployment field on every command ---------------------------------

-- Registry fields a command takes as one key=value word: their value is one
-- word of these types (tables need a script), and they are none of the words
-- every command spells its own way (the axes, the model, the GPU).
local flat_types = {count = true, bytes = true, fraction = true, number = true, boolean = true,
                    string = true, enum = true}
local own_words = {model = true, gpu = true, tp = true, pp = true, kv = true, weights = true,
                   profile = true}

--- M.flat_field(f): is registry field f one a command takes as one word?
function M.flat_field(f) return flat_types[f.type] == true and not own_words[f.name] end

--- M.deployment_fields(defaults [, skip]): add to a command's defaults every
--- deployment field of the registry (fields.lua) that it does not take under
--- a default of its own, with the default "" (not given), so that each is
--- accepted under its name or its engines' names and checked as that field.
--- skip: names left out besides the axes. Returns the names added, in the
--- registry's order, for M.given_fields.
function M.deployment_fields(defaults, skip)
  local added = {}
  for _, f in ipairs(fields.list) do
    if M.flat_field(f) and defaults[f.name] == nil and not (skip and skip[f.name]) then
      defaults[f.name] = ""
      added[#added + 1] = f.name
    end
  end
  return added
end

--- M.output(name, path): path, the file the command-line argument `name`
--- names for the run to write (timeline=, chart=), checked now as a report's
--- path is (not an input the run has read, under --sandbox under the output
--- directory): a refusal is that argument's usage error, status 2, not an
--- error at the ready script's line. "" passes. Call it before the file is
--- written (an input is known once read: trace=t.csv timeline=t.csv).
function M.output(name, path)
  if path ~= "" and path ~= nil then
    local ok, err = pcall(require("kvplan.csv").replaces, path)
    if not ok then
      M.bad("argument '%s=%s': %s", name, util.escape(path), (util.shown(err):gsub("^.-:%d+: ", "")))
    end
  end
  return path
end

--- M.as_usage(opt, f, ...): f(...), whose error naming an argument the
--- command line gave ("field 'price_per_hour' = 1e+308: usd_per_mtok ...
--- exceeds the largest double") becomes that argument's usage error (status
--- 2): for a value the ready script can refuse only once it computes with
--- it. Other errors are raised as they were.
function M.as_usage(opt, f, ...)
  local r = table.pack(pcall(f, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  local err, cli = r[2], package.loaded["kvplan.cli"]
  local given = given_of[opt]
  if type(err) == "string" and cli ~= nil and cli.args ~= nil and cli.usage_error == nil and given then
    local text = err:gsub("^.-:%d+: ", "")
    local field, rest = text:match("^field '([%w_]+)'(.*)$")
    if field ~= nil and given[field] then M.bad("argument '%s'%s", given[field], rest) end
  end
  error(err, 0)
end

--- M.length(v): a max_model_len argument as tokens, or nil when it was not
--- given ("", 0) or is vLLM's auto (or -1: kv.deploy fits it to the KV memory),
--- so that a script's default context is the model's max_context then
--- ('fit max_model_len=auto' compared "auto" with 0: a Lua error in fit.lua).
function M.length(v)
  return type(v) == "number" and v > 0 and v or nil
end

--- M.given_fields(opt, names [, base]): the fields of names (M.deployment_fields)
--- the command line gave, copied into base (a new table by default): the
--- options of kv.deploy. An engine_version is checked now in its engine's
--- table (engine, else budget, else vLLM), as a usage error.
function M.given_fields(opt, names, base)
  base = base or {}
  for _, k in ipairs(names) do
    if opt[k] ~= "" and opt[k] ~= nil then base[k] = opt[k] end
  end
  -- fields that contradict one another (engine=sglang budget=vllm, kv_full
  -- without kv_recent): the arguments named, a usage error, not kv.deploy's
  -- error at the ready script's line
  local why = require("kvplan.deploy").contradiction(base, "argument")
  if why then M.bad("%s", why) end
  local v = base.engine_version
  if v ~= nil then
    local e = base.engine or base.budget or "vllm"
    local engines = require "kvplan.engines"
    local ok, err = pcall(e == "trtllm" and engines.trtllm_version or e == "sglang"
                          and engines.sglang_version or engines.vllm_version, v)
    if not ok then M.bad("argument 'engine_version': %s", (util.shown(err):gsub("^.-:%d+: ", ""))) end
  end
  return base
end

return M
