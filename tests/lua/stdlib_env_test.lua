-- tests/lua/stdlib_env_test.lua: every stdlib module runs in an environment
-- of its own (engine/lua/kvplan_lua.c load_blob): reading or assigning a
-- global the globals table lacks is an error naming the module and the name;
-- users' scripts keep the plain globals.
local kv = require "kvplan"
local check = require "check"

-- a user's script may still write globals
user_global_of_this_test = 42
check.eq(_G.user_global_of_this_test, 42, "a user's global")

-- the _ENV upvalue of a function of a module's value defined in the
-- module's file (nil when none has one)
local function env_of(v, path, depth)
  if type(v) == "function" and debug.getinfo(v, "S").source == "@" .. path then
    for i = 1, 255 do
      local n, e = debug.getupvalue(v, i)
      if n == nil then break end
      if n == "_ENV" then return e end
    end
  elseif type(v) == "table" and depth > 0 then
    for _, x in pairs(v) do
      local e = env_of(x, path, depth - 1)
      if e ~= nil then return e end
    end
  end
  return nil
end

-- every file of stdlib/ is embedded, loads under the rule, and a global
-- written or read from its environment is refused with its name
local probed, files = {}, 0
local list = assert(io.popen("find stdlib -name '*.lua' | LC_ALL=C sort"))
for path in list:lines() do
  files = files + 1
  local name = path:gsub("^stdlib/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
  assert(package.preload[name] ~= nil, path .. " is not embedded as '" .. name .. "'")
  local ok, mod = pcall(require, name)
  assert(ok, "require '" .. name .. "': " .. tostring(mod))
  local env = env_of(mod, path, 2)
  if env ~= nil and env ~= _G then
    check.error("probe:1: stdlib module '" .. name .. "' assigns the undeclared global "
                .. "'kvplan_probe'", load("kvplan_probe = 1", "=probe", "t", env))
    check.error("probe:1: stdlib module '" .. name .. "' reads the undeclared global "
                .. "'kvplan_probe'", load("return kvplan_probe", "=probe", "t", env))
    check.eq(rawget(_G, "kvplan_probe"), nil, "no global made by " .. name)
    probed[name] = true
  else -- only a module of data (a catalog) has no function of its own
    for _, x in pairs(type(mod) == "table" and mod or {mod}) do
      assert(type(x) ~= "function", name .. ": a function without the module's environment")
    end
  end
end
list:close()
assert(files >= 20, "stdlib files found: " .. files)
for _, name in ipairs{"kvplan", "kvplan.util", "kvplan.optim", "kvplan.workload", "kvplan.deploy",
                      "kvplan.sweep", "kvplan.report"} do
  assert(probed[name], name .. " was not probed")
end

-- a standard global read through a module's environment is the real one
local env = env_of(kv.optim, "stdlib/kvplan/optim.lua", 1)
check.eq(load("return string.format", "=probe", "t", env)(), string.format, "string.format")

-- optim.row wrote the global _ (kvplan 0ab8524 and before)
local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", optim = kv.optim.paged{}}
check.eq(kv.optim.row(d, 8192, 1).optim, "paged", "optim.row")
check.eq(rawget(_G, "_"), nil, "no global '_'")
