-- tests/guard/probe.lua: one thing a script might try (t=NAME), printed as
-- "NAME true|false result-or-error": what the sandbox lets through.
local kv = require "kvplan"
local what = ...
local here = arg[0]:match("^(.*)/") or "."
local t = {
  exec = function() return os.execute("true") end,
  popen = function() return io.popen("ls") end,
  remove = function() return os.remove("x") end,
  loadlib = function() return package.loadlib("libc.so.6", "puts") end,
  debug = function() return debug.getinfo(1) end,
  readout = function() return io.open("/etc/passwd"):read("a") end,
  readarg = function() return io.open(what.path):read("a") end,
  readbeside = function() return io.open(here .. "/data/m.csv"):read("a") end,
  csvout = function() return kv.models.load_csv("/etc/passwd") end,
  hfout = function() return kv.models.from_hf("/etc") end,
  csvarg = function() return #kv.models.load_csv(what.path) end,
  writeout = function() return io.open(what.evil, "w") end,
  writeok = function() local f = assert(io.open(what.out, "w")) f:write("x") f:close() return "wrote" end,
  report = function() local r = kv.report{columns = {"a"}, path = what.evil} r:row{a = 1} r:close() end,
  sweep = function() return kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", columns = {"tp"}}:write(what.evil) end,
  reportok = function() local r = kv.report{columns = {"a"}} r:row{a = 1} r:close() return "reported" end,
  binary = function() return load(string.dump(function() return 1 end)) end,
  cmod = function() return require("lfs") end,
  lines = function() for l in io.lines("/etc/passwd") do return l end end,
  symlink = function() return io.open(here .. "/link"):read("a") end,
  escape = function() return io.open(here .. "/../../../etc/passwd"):read("a") end,
  st_header = function() return require("kvplan.json").safetensors_header("/etc/passwd") end,
  st_scan = function() return require("kvplan.json").safetensors_scan("/etc/passwd", {}) end,
  searchpath = function() return assert(package.searchpath("passwd", "/etc/?")) end,
  getenv = function() return os.getenv("HOME") end,
  setlocale = function() return os.setlocale("C") end,
  tmpfile = function() return io.tmpfile() end,
  devzero = function() return assert(io.open("/dev/zero", "w")) end,
  devnull = function() local f = assert(io.open("/dev/null", "w")) f:close() return "opened" end,
}
print(what.t, pcall(t[what.t]))
