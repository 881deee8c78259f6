-- tests/lua/fields_test.lua: the deployment field registry (stdlib/kvplan/
-- fields.lua) against every layer that names the fields: kv.deploy's keys
-- and the engines' names, the binding's deployment keys, the sweep's C
-- axes, key=value arguments, the docs' table, the manual page, SCRIPTING.md,
-- the ready scripts' argument lists and the commands' usage in --help and
-- the manual page. Each failure names the field (or the argument).
local kv = require "kvplan"
local check = require "check"
local fields = require "kvplan.fields"
local deploy = require "kvplan.deploy"
local core = require "kvplan.core"
local doc = require "fields_doc"

local failures = {}
local function fail(fmt, ...) failures[#failures + 1] = string.format(fmt, ...) end

-- the registry itself: one row a name, known types, enums with values
local types = {count = true, bytes = true, fraction = true, number = true, boolean = true,
               string = true, enum = true, table = true}
local seen = {}
for _, f in ipairs(fields.list) do
  if seen[f.name] then fail("field '%s' is declared twice", f.name) end
  seen[f.name] = true
  if not types[f.type] then fail("field '%s' has an unknown type '%s'", f.name, tostring(f.type)) end
  if f.type == "enum" and type(f.values) ~= "table" then fail("enum field '%s' lists no values", f.name) end
  if f.meaning == nil or f.default == nil then fail("field '%s' needs a meaning and a default", f.name) end
  if f.sweep and not fields.key(f) then fail("sweep field '%s' has no key in the core's table", f.name) end
end
for a, n in pairs(fields.aliases) do
  if fields.names[a] then fail("alias '%s' of field '%s' is a field itself", a, n) end
end

-- kv.deploy takes exactly the registry's fields and the engines' names
check.eq(deploy.fields, fields.names, "deploy.fields")
check.eq(deploy.engine_names, fields.aliases, "deploy.engine_names")
local r = deploy.rename({tensor_parallel_size = 4, ["gpu-memory-utilization"] = 0.8}, "t")
check.eq(r.tp, 4, "rename tp")
check.eq(r.utilization, 0.8, "rename utilization")

-- the binding's keys are the registry's spec keys and the derived ones
local binding = {}
for _, k in ipairs(core.deploy_keys()) do binding[k] = true end
local declared = {}
for _, f in ipairs(fields.list) do
  local key = fields.key(f)
  if key then
    declared[key] = true
    if not binding[key] then
      fail("field '%s': its key '%s' is not a key of the binding's deployment", f.name, key)
    end
  end
end
for _, k in ipairs(fields.derived) do
  declared[k] = true
  if not binding[k] then fail("derived key '%s' is not a key of the binding's deployment", k) end
end
for k in pairs(binding) do
  if not declared[k] then
    fail("the binding's deployment key '%s' is no field's spec key in fields.lua, nor derived", k)
  end
end

-- a deployment's spec holds only declared keys, and the binding reads it
local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", samples = 2, prompt = 128,
                    offload = {host = "64 GiB"}, worker_gpu_memory = {"80 GiB"}}
for k in pairs(d:spec()) do
  if not declared[k] then fail("Deployment:spec() key '%s' is not declared in fields.lua", k) end
end
assert(core.ledger(d:spec()))

-- the sweep's C axes: every sweep field as a list of two values gives the
-- rows kv.deploy gives for each value
local values = {
  gpu_memory = {"20 GiB", "24 GiB"}, weight_bytes = {"15 GiB", "16 GiB"},
  utilization = {0.8, 0.9}, activation = {"1 GiB", "2 GiB"}, overhead = {"1 GiB", "2 GiB"},
  block = {16, 32}, max_num_batched_tokens = {1, 2048}, max_model_len = {4096, 8192},
  max_num_seqs = {4, 8}, max_kv_tokens = {1000, 2000}, prefix = {0, 512},
  samples = {1, 2}, prompt = {0, 100}, output = {0, 100},
}
local base_of = {max_kv_tokens = {budget = "trtllm"}, prompt = {samples = 2}, output = {samples = 2}}
local dir = check.tmpdir()
for _, f in ipairs(fields.list) do
  if f.sweep then
    local vals = values[f.name]
    if vals == nil then
      fail("sweep field '%s' has no test values in fields_test.lua", f.name)
    else
      local base = {activation = "1 GiB", overhead = "1 GiB", max_model_len = 8192}
      for k, v in pairs(base_of[f.name] or {}) do base[k] = v end
      base[f.name] = nil
      local path = dir .. "/sweep.csv"
      local ok, err = pcall(function()
        kv.sweep{model = "llama-3.1-8b", gpu = "l40s", [f.name] = vals, base = base,
                 context = 4096, columns = {"kv_tokens", "max_concurrency"}}:write(path)
      end)
      if not ok then
        fail("sweep field '%s': %s", f.name, tostring(err))
      else
        local lines = {}
        for l in check.slurp(path):gmatch("[^\n]+") do lines[#lines + 1] = l end
        for i, v in ipairs(vals) do
          local o = {model = "llama-3.1-8b", gpu = "l40s", [f.name] = v}
          for k, x in pairs(base) do o[k] = x end
          local l = kv.deploy(o):ledger()
          local want = string.format("%d,%d", l.kv_tokens, (l:max_concurrency(4096)))
          if lines[i + 1] ~= want then
            fail("sweep field '%s' = %s: the sweep writes %s, kv.deploy gives %s", f.name,
                 tostring(v), tostring(lines[i + 1]), want)
          end
        end
      end
      os.remove(path)
    end
  end
end
os.remove(dir)

-- docs/sweeps.md names the options a sweep loops in C: the registry's sweep fields
local sweeps = check.slurp("docs/sweeps.md"):match("Every option that is a number %(([^)]*)%)") or ""
local named = {}
for n in sweeps:gsub(":.*", ""):gmatch("[%w_]+") do
  named[n] = true
  if not (fields.by_name[n] and fields.by_name[n].sweep) then
    fail("docs/sweeps.md names '%s' among the options looped in C; fields.lua does not", n)
  end
end
for _, f in ipairs(fields.list) do
  if f.sweep and not named[f.name] then
    fail("docs/sweeps.md does not name sweep field '%s' among the options looped in C", f.name)
  end
end

-- key=value arguments named as fields: converted and checked by the field
local o = kv.options({activation = "2GiB", utilization = "0.85", tp = "2,4", kv = "fp8"},
                     {activation = "predicted", utilization = 0.9, tp = {1}, kv = "auto"})
check.eq(o.activation, 2 * 2^30 // 1, "bytes argument")
check.eq(o.utilization, 0.85, "fraction argument")
check.eq(o.tp[2], 4, "count list")
check.eq(kv.options({activation = "predicted"}, {activation = "predicted"}).activation, "predicted",
         "the script's default word passes")
check.eq(kv.options({tp = "0"}, {tp = {0}}).tp[1], 0, "the script's default value passes")
check.error("argument 'utilization' must be in (0, 1], got 1.5", kv.options, {utilization = "1.5"},
            {utilization = 0.9})
check.error("argument 'tp' must be an integer >= 1, got 0", kv.options, {tp = "2,0"}, {tp = {1}})
check.error("argument 'activation': cannot read 'lots' as bytes", kv.options,
            {activation = "lots"}, {activation = "predicted"})
check.error("argument 'engine' must be 'vllm', 'sglang' or 'trtllm', got 'vlm'", kv.options,
            {engine = "vlm"}, {engine = ""})
check.error("argument 'enforce_eager' must be true or false", kv.options,
            {enforce_eager = "maybe"}, {enforce_eager = false})
check.eq(kv.options({price_per_hour = "2.5"}, {price_per_hour = 0}).price_per_hour, 2.5,
         "a number field takes decimals whatever the script's default")
check.eq(kv.options({tensor_parallel_size = "8"}, {tp = {1}}).tp[1], 8, "an engine's name")
-- every check accepts what kv.deploy accepts at the edges
for _, f in ipairs(fields.list) do
  if f.type == "count" and f.min then
    local ok = pcall(fields.check, f, f.min)
    if not ok then fail("field '%s': check refuses its own minimum %d", f.name, f.min) end
  end
end

-- the registry's checks are kv.deploy's: its bound, enum values and switches
-- accepted (in a deployment where the field applies), past them refused
-- with an error naming the field
local where = {max_kv_tokens = {budget = "trtllm"}, backend = {budget = "trtllm"},
               fail_fast_on_attention_window_too_large = {budget = "trtllm"},
               mxfp4_backend = {model = "gpt-oss-20b"}, enable_expert_parallel = {model = "gpt-oss-20b"},
               allocation = {max_model_len = 8192}, mamba_cache_mode = {mamba_block_size = 16},
               enable_dp_attention = {budget = "sglang", tp = 2, data_parallel_size = 2},
               disable_overlap_schedule = {budget = "sglang"},
               moe_backend = {budget = "trtllm", model = "qwen3-30b-a3b"},
               vllm_use_v1 = {engine_version = "0.10"}, max_seq_len_to_capture = {engine_version = "0.6"}}
local function deploys(f, v)
  local o = {model = "llama-3.1-8b", gpu = "h100-sxm"}
  for k, x in pairs(where[f.name] or {}) do o[k] = x end
  o[f.name] = v
  return pcall(kv.deploy, o)
end
local function refused(f, v)
  local ok, err = deploys(f, v)
  if ok then fail("field '%s': kv.deploy takes %s, which fields.lua refuses", f.name, tostring(v))
  elseif not tostring(err):find(f.name, 1, true) then
    fail("field '%s': kv.deploy refuses %s without naming the field: %s", f.name, tostring(v), err)
  end
end
local function accepted(f, v)
  local ok, err = deploys(f, v)
  if not ok then fail("field '%s': kv.deploy refuses %s, which fields.lua takes: %s", f.name, tostring(v), err) end
end
for _, f in ipairs(fields.list) do
  if (f.type == "count" or f.type == "bytes" or f.type == "number") and f.min then
    accepted(f, f.min)
    -- -1 is vLLM's --max-model-len auto where the field takes auto (from
    -- 0.14, the releases a deployment naming none runs): the count below it
    refused(f, (f.auto and f.min - 1 == -1) and -2 or f.min - 1)
  elseif f.type == "fraction" then
    accepted(f, 1)
    refused(f, 0)
    refused(f, 1.5)
  elseif f.type == "enum" then
    for _, v in ipairs(f.values) do accepted(f, v) end
    refused(f, "zzz")
  elseif f.type == "boolean" then
    accepted(f, true)
    accepted(f, false)
    refused(f, "maybe")
  end
end

-- docs/fields.md: one row a field, as the registry gives it
local text = check.slurp("docs/fields.md")
local rows, order = {}, {}
for line in text:gmatch("[^\n]+") do
  local name = line:match("^| `([%w_]+)` |")
  if name then rows[name] = line; order[#order + 1] = name end
end
for i, f in ipairs(fields.list) do
  if rows[f.name] == nil then fail("docs/fields.md has no row for field '%s'", f.name)
  elseif rows[f.name] ~= doc.row(f) then
    fail("docs/fields.md row of field '%s' differs from fields.lua: doc %s, registry %s",
         f.name, rows[f.name], doc.row(f))
  elseif order[i] ~= f.name then
    fail("docs/fields.md lists field '%s' at row %d, fields.lua at %d", f.name,
         (function() for j, n in ipairs(order) do if n == f.name then return j end end end)(), i)
  end
end
for name in pairs(rows) do
  if not fields.names[name] then fail("docs/fields.md has a row for '%s', no field of fields.lua", name) end
end

-- the manual page's engine names, as generated
local man = check.slurp("docs/kvplan.1")
local a = man:find(doc.man_begin, 1, true)
local b = a and man:find(doc.man_end, a, true)
if not (a and b) then
  fail("docs/kvplan.1 has no generated block of engine names")
else
  local got = man:sub(a + #doc.man_begin + 1, b - 2)
  local want = table.concat(doc.man_lines(), "\n")
  if got ~= want then
    for alias, name in pairs(fields.aliases) do
      if not got:find(alias .. " (" .. name .. ")", 1, true) then
        fail("docs/kvplan.1 does not list '%s' as the engines' name of field '%s'", alias, name)
      end
    end
    fail("docs/kvplan.1's engine names differ from fields.lua (order or text)")
  end
end

-- the manual page's list of the one-word fields, as generated
do
  local a2 = man:find(doc.man_fields_begin, 1, true)
  local b2 = a2 and man:find(doc.man_fields_end, a2, true)
  if not (a2 and b2) then
    fail("docs/kvplan.1 has no generated list of deployment fields")
  elseif man:sub(a2 + #doc.man_fields_begin + 1, b2 - 2) ~= table.concat(doc.man_fields_lines(), "\n") then
    fail("docs/kvplan.1's list of deployment fields differs from fields.lua (build/kvplan tests/lua/fields_doc.lua rewrites it)")
  end
end

-- SCRIPTING.md: the engines' names table lists the registry's aliases, the
-- option tables name fields of the registry's type, every field is named
local ref = check.slurp("SCRIPTING.md")
local kinds = {integer = {count = true}, bytes = {bytes = true}, number = {fraction = true, number = true},
               boolean = {boolean = true}, string = {string = true, enum = true},
               format = {string = true}}
local listed, in_table = {}, nil
for line in ref:gmatch("[^\n]*") do
  if line:match("^| kvplan | engines' names |") then in_table = "names"
  elseif line:match("^| option | type |") then in_table = "options"
  elseif not line:match("^|") then in_table = nil
  elseif in_table == "names" and line:match("^| `") then
    local name, aliases = line:match("^| `([%w_]+)` | (.-) |$")
    for alias in (aliases or ""):gmatch("`([%w_]+)`") do
      listed[alias] = true
      if fields.aliases[alias] ~= name then
        fail("SCRIPTING.md lists '%s' as the engines' name of '%s'; fields.lua says %s", alias,
             tostring(name), tostring(fields.aliases[alias]))
      end
    end
  elseif in_table == "options" and line:match("^| `") then
    local names, ty = line:match("^| (.-) | (.-) |")
    local list, tys = {}, {}
    for n in names:gmatch("`([%w_]+)`") do list[#list + 1] = n end
    for t in (ty .. ","):gmatch("%s*([^,]+),") do tys[#tys + 1] = t end
    for i, n in ipairs(list) do
      local f = fields.by_name[n]
      local t = #tys == #list and tys[i] or ty
      if f == nil then
        fail("SCRIPTING.md's option table names '%s', no field of fields.lua", n)
      elseif kinds[t] and not kinds[t][f.type] then
        fail("SCRIPTING.md gives field '%s' the type '%s'; fields.lua says %s", n, t, f.type)
      end
    end
  end
end
for alias, name in pairs(fields.aliases) do
  if not listed[alias] then fail("SCRIPTING.md's engines' names table lacks '%s' (%s)", alias, name) end
end
for _, f in ipairs(fields.list) do
  if not ref:find("`" .. f.name .. "[` ]") then fail("SCRIPTING.md does not name field '%s'", f.name) end
end

-- the ready scripts: every argument named as a field is in the script's
-- argument list (its opening comment, which is its help)
-- (simulate's list is built from the registry, stdlib/kvplan/sim.lua
-- command_arguments, and its help from the same list: checked below)
-- A ready script's own defaults: kv.options(..., {...}) or local defaults = {...}
local function defaults_block(src)
  return src:match("kv%.options%(%.%.%., (%b{})%)") or src:match("\nlocal defaults = (%b{})")
end
local options_mod = require "kvplan.options"
for _, script in ipairs{"fit", "capacity", "ledger", "best", "startup", "pareto"} do
  local src = check.slurp("scripts/" .. script .. ".lua")
  local block = defaults_block(src)
  if block == nil then fail("scripts/%s.lua: no kv.options(..., {...}) found", script) end
  local documented = {}
  for line in src:gmatch("[^\n]+") do
    local names = line:match("^%-%-   ([%w_, ]-)  ")
    for n in (names or ""):gmatch("[%w_]+") do documented[n] = true end
  end
  for key in (block or ""):gmatch("([%w_]+) =") do
    local name = fields.aliases[key] or key
    if fields.names[name] and not documented[key] then
      fail("scripts/%s.lua takes field '%s' (%s) but its argument list does not describe it",
           script, name, fields.by_name[name].meaning)
    end
  end
end

-- the commands' usage in --help (engine/cli/main.c) and the manual page
-- (COMMANDS, EXAMPLES): every key= is an argument of the ready script
local takes = {}
for _, script in ipairs{"fit", "capacity", "ledger", "best", "startup", "pareto"} do
  local src = check.slurp("scripts/" .. script .. ".lua")
  local block = defaults_block(src)
  takes[script] = {}
  for key in (block or ""):gmatch("([%w_]+) =") do takes[script][key] = true end
  -- kv.options.deployment_fields(defaults): every other one-word field
  if src:find("kv.options.deployment_fields(defaults)", 1, true) then
    for _, f in ipairs(fields.list) do
      if options_mod.flat_field(f) then takes[script][f.name] = true end
    end
  end
end
-- simulate: every argument of its generated list, every one-word field of
-- the registry among them, each in kvplan simulate --help
local sim = require "kvplan.sim"
takes.simulate = {}
local help = sim.command_help()
for _, a in ipairs(sim.command_arguments()) do
  takes.simulate[a[1]] = true
  if not help:find("\n  " .. a[1] .. " ", 1, true) then
    fail("kvplan simulate --help does not list argument '%s'", a[1])
  end
end
for _, f in ipairs(fields.list) do
  if f.type ~= "table" and f.name ~= "profile" and not takes.simulate[f.name] then
    fail("kvplan simulate does not take field '%s' (%s)", f.name, f.meaning)
  end
end
if not check.slurp("scripts/simulate.lua"):find("sim.command_arguments()", 1, true) then
  fail("scripts/simulate.lua does not take its arguments from sim.command_arguments()")
end
local function usage_keys(where, cmd, text)
  for key in text:gmatch("([%w_]+)=") do
    local k = fields.aliases[key] or key
    local every = fields.by_name[k] and fields.by_name[k].every_command
    if not (takes[cmd][key] or takes[cmd][k] or every) then
      fail("%s: 'kvplan %s' shows argument '%s', which scripts/%s.lua does not take", where, cmd,
           key, cmd)
    end
  end
end
local main = check.slurp("engine/cli/main.c")
for cmd, text in main:gmatch('{"(%w+)", F_RUN, cmd_ready, "([^"]*)"') do
  if takes[cmd] then usage_keys("kvplan --help", cmd, text) else fail("main.c: no ready script '%s'", cmd) end
end
-- --help's note on fields: the names it gives are fields or engines' names
for name in (main:match('"an argument named as a deployment field.-docs/fields%.md') or ""):gmatch("[%a_]+") do
  if name:find("_", 1, true) and not (fields.names[name] or fields.aliases[name]) then
    fail("kvplan --help names '%s' as a field or an engine's name; fields.lua has no such", name)
  end
end
if not main:find("docs/fields.md", 1, true) then fail("kvplan --help does not point to docs/fields.md") end
-- the command lines of the README, SCRIPTING.md and docs/ (kvplan CMD key=...)
for _, path in ipairs{"README.md", "SCRIPTING.md", "docs/commands.md", "docs/fields.md", "docs/sweeps.md"} do
  local ok, text = pcall(check.slurp, path)
  for cmd, rest in (ok and text or ""):gmatch("kvplan (%w+) ([^\n`#]*)") do
    if takes[cmd] then usage_keys(path, cmd, rest) end
  end
end
for line in man:gmatch("[^\n]+") do
  local plain = line:gsub("\\f.", ""):gsub("\\%-", "-")
  local cmd, rest = plain:match("^%.B (%w+) (.*)$")
  if cmd == nil then cmd, rest = plain:match("^kvplan (%w+) (.*)$") end
  if cmd and takes[cmd] then usage_keys("docs/kvplan.1", cmd, rest) end
end

if #failures > 0 then
  for _, m in ipairs(failures) do io.stderr:write("  ", m, "\n") end
  error("fields: " .. #failures .. " disagreement(s) with stdlib/kvplan/fields.lua above (run "
        .. "build/kvplan tests/lua/fields_doc.lua for the docs' table and man page)", 0)
end
