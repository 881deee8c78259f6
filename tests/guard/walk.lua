-- tests/guard/walk.lua: every C function a script can reach under --sandbox
-- (the globals, every module once loaded, the methods of a file handle) is
-- either pure (touches no file and no environment), checked (asks the
-- sandbox's path check; each is tried on a path outside and must refuse),
-- or absent. A function in none of the lists fails: classify it here (and
-- in docs/reliability.md) before it ships. Lua functions reach the file
-- system only through these C functions (the stdlib reads its globals from
-- _G and its C modules through require, both walked here).
-- Run: kvplan --sandbox tests/guard/walk.lua  (without --sandbox it fails:
-- the absent functions are there)

for name in pairs(package.preload) do require(name) end

-- name patterns (Lua patterns over the dotted name) -> why it is pure
local pure = {
  {"^assert$", "raises"}, {"^collectgarbage$", "the collector"}, {"^coroutine%.", "coroutines"},
  {"^error$", "raises"}, {"^getmetatable$", "tables"}, {"^setmetatable$", "tables"},
  {"^ipairs$", "iteration"}, {"^pairs$", "iteration"}, {"^next$", "iteration"},
  {"^select$", "arguments"}, {"^pcall$", "calls"}, {"^xpcall$", "calls"},
  {"^rawequal$", "tables"}, {"^rawget$", "tables"}, {"^rawlen$", "tables"}, {"^rawset$", "tables"},
  {"^tonumber$", "conversion"}, {"^tostring$", "conversion"}, {"^type$", "types"},
  {"^print$", "standard output"}, {"^warn$", "standard error"},
  {"^math%.", "arithmetic"}, {"^string%.", "strings (string.dump makes a string)"},
  {"^table%.", "tables"}, {"^utf8%.", "strings"},
  {"^os%.clock$", "CPU time"}, {"^os%.date$", "the clock"}, {"^os%.difftime$", "arithmetic"},
  {"^os%.time$", "the clock"},
  {"^io%.close$", "closes an open handle"}, {"^io%.flush$", "the default output"},
  {"^io%.read$", "the default input"}, {"^io%.write$", "the default output"},
  {"^io%.type$", "types"},
  {"^file:", "a handle already opened (io.open checked its path)"},
  {"^package%.preload%.", "loads the embedded stdlib, no file"},
  {"^kvplan%.core%.", "the core's computation"}, {"^kvplan%.optim_core%.", "computation"},
  {"^kvplan%.predict_core%.", "computation"}, {"^kvplan%.json%.decode$", "a string"},
  {"^kvplan%.sim_core%.", "computation (sim:timeline, a method, checks its path)"},
  {"^kvplan%.sweep_core%.columns$", "names"}, {"^kvplan%.sweep_core%.shard$", "arithmetic"},
  {"^kvplan%.csv%.format_of$", "a file name's format and the terminal's width; opens nothing"},
}

local outside = "/etc/passwd"
local function refuses(f, ...)
  local ok, a, b = pcall(f, ...)
  local msg = tostring(ok and (a == nil and b or a) or a)
  return (not ok or a == nil) and (msg:find("sandbox", 1, true) or msg:find("no file", 1, true)) ~= nil, msg
end
-- name -> {why, probe: true when it refused the path outside}
local checked = {
  ["io.open"] = {"sb_open: the path checked for its mode", function() return refuses(io.open, outside) end},
  ["io.lines"] = {"sb_path_first, read", function() return refuses(io.lines, outside) end},
  ["io.input"] = {"sb_path_first, read", function() return refuses(io.input, outside) end},
  ["io.output"] = {"sb_path_first, write", function() return refuses(io.output, "/tmp/kvplan-walk") end},
  ["dofile"] = {"text_dofile through text_loadfile's check", function() return refuses(dofile, outside) end},
  ["loadfile"] = {"text_loadfile: checked, text only", function() return refuses(loadfile, outside) end},
  ["load"] = {"text_load: text only (no binary chunk); opens no file",
              function() return not load(string.dump(function() end)), "binary loaded" end},
  ["require"] = {"preload, then package.searchpath (checked); no C searcher",
                 function()
                   local old = package.path
                   package.path = "/etc/?"
                   local ok, m = pcall(require, "passwd")
                   package.path = old
                   return not ok and m:find("no file '/etc/passwd'", 1, true) ~= nil, m
                 end},
  ["package.searchpath"] = {"sb_searchpath: a candidate is tried only when the check allows it",
                            function() return refuses(package.searchpath, "passwd", "/etc/?") end},
  ["kvplan.csv.read"] = {"kvl_check_file read", function() return refuses(require("kvplan.csv").read, outside) end},
  ["kvplan.csv.open"] = {"kvl_check_file write",
                         function() return refuses(require("kvplan.csv").open, "/tmp/kvplan-walk.csv", {"a"}) end},
  ["kvplan.csv.atomic"] = {"kvl_check_file write",
                           function() return refuses(require("kvplan.csv").atomic, "/tmp/kvplan-walk") end},
  ["kvplan.csv.text"] = {"kvl_check_file write",
                         function() return refuses(require("kvplan.csv").text, "/tmp/kvplan-walk", "x") end},
  ["kvplan.csv.replaces"] = {"kvl_check_file write (stats a report's path)",
                             function() return refuses(require("kvplan.csv").replaces, "/tmp/kvplan-walk") end},
  ["kvplan.csv.gnuplot"] = {"runs nothing under the sandbox (nil, why)",
                            function() return select(2, refuses(require("kvplan.csv").gnuplot, "")) ~= nil
                                              and require("kvplan.csv").gnuplot("") == nil, "ran" end},
  ["kvplan.json.safetensors_header"] = {"kvl_check_file read",
    function() return refuses(require("kvplan.json").safetensors_header, outside) end},
  ["kvplan.json.safetensors_scan"] = {"kvl_check_file read",
    function() return refuses(require("kvplan.json").safetensors_scan, outside, {}) end},
  ["kvplan.json.safetensors_files"] = {"kvl_check_file read",
    function() return refuses(require("kvplan.json").safetensors_files, "/etc") end},
  ["kvplan.sweep_core.run"] = {"kvl_check_file write of spec.path (sweep_lua.c)", nil},
}
-- what the sandbox removes: none may be reachable under any name
local absent = {"os.execute", "os.remove", "os.rename", "os.exit", "os.tmpname", "os.getenv",
                "os.setlocale", "io.popen", "io.tmpfile", "package.loadlib", "debug"}

-- walk: every C function with every name it is reachable by
local names, seen = {}, {}
local function walk(t, path, depth)
  if type(t) ~= "table" or seen[t] or depth > 8 then return end
  seen[t] = true
  for k, v in pairs(t) do
    if type(k) == "string" then
      local p = path == "" and k or (path .. "." .. k)
      if type(v) == "function" and not pcall(string.dump, v) then
        names[v] = names[v] or {}
        table.insert(names[v], p)
      elseif type(v) == "table" then walk(v, p, depth + 1) end
    end
  end
end
local mods = {}
for n in pairs(package.loaded) do mods[#mods + 1] = n end
table.sort(mods)
seen[package.loaded], seen[_G] = true, true -- each module under its own name
for _, n in ipairs(mods) do if n ~= "_G" then walk(package.loaded[n], n, 0) end end
seen[_G] = nil
walk(_G, "", 0)
local fmeta = getmetatable(io.stdout)
for k, v in pairs(fmeta.__index) do names[v] = names[v] or {}; table.insert(names[v], "file:" .. k) end
for k, v in pairs(fmeta) do
  if type(v) == "function" then names[v] = names[v] or {}; table.insert(names[v], "file:" .. k) end
end

local bad, npure, nchecked, total = {}, 0, 0, 0
local reached = {}
for _, ns in pairs(names) do
  total = total + 1
  local kind
  for _, n in ipairs(ns) do
    reached[n] = true
    if checked[n] then kind = kind or "checked"; break end
    for _, p in ipairs(pure) do if n:find(p[1]) then kind = kind or "pure" end end
  end
  if kind == "checked" then nchecked = nchecked + 1
  elseif kind == "pure" then npure = npure + 1
  else table.sort(ns) bad[#bad + 1] = "unclassified C function: " .. table.concat(ns, " = ") end
end
for _, a in ipairs(absent) do
  if reached[a] or (a == "debug" and (rawget(_G, "debug") or package.loaded.debug)) then
    bad[#bad + 1] = "present, not absent: " .. a
  end
  for n in pairs(reached) do
    if n:sub(1, #a + 1) == a .. "." then bad[#bad + 1] = "present, not absent: " .. n end
  end
end
for n, c in pairs(checked) do
  if not reached[n] then bad[#bad + 1] = "listed as checked but not reachable: " .. n end
  if reached[n] and c[2] then
    local ok, msg = c[2]()
    if not ok then bad[#bad + 1] = "checked but let the path through: " .. n .. " (" .. tostring(msg) .. ")" end
  end
end
table.sort(bad)
if #bad > 0 then error("\n" .. table.concat(bad, "\n"), 0) end
print(string.format("walk: %d C functions: %d pure, %d checked; %d absent", total, npure, nchecked, #absent))
