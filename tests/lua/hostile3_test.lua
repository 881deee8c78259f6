-- tests/lua/hostile3_test.lua: hostile values through the Lua API, third pass
-- (docs/reliability.md, 2026-12-04, brief hostile3). Each is an error at this
-- file's line naming the field, the value and what was expected.
local kv = require "kvplan"
local check = require "check"

local function at_line(pattern, f)
  local msg = check.error(pattern, f)
  assert(msg:find("hostile3_test.lua:%d+: "), "not at the script's line: " .. msg)
  assert(not msg:find("stdlib/"), "from inside the stdlib: " .. msg)
  assert(not msg:find("-nan", 1, true), "a NaN shown as -nan: " .. msg)
  return msg
end

-- a NaN given to a field whose message built the value with tostring before
-- util.raise printed "-nan" (x86's 0/0 has its sign bit set): util.shown
local nan = 0/0
for _, v in ipairs{nan, -nan} do
  at_line("field 'offload.pcie_gbps' must be a number > 0, got nan", function()
    return (kv.deploy{model = "llama-3.1-8b", gpu = "h100", offload = {pcie_gbps = v}})
  end)
  at_line("field 'async_scheduling' must be true or false, got nan", function()
    return (kv.deploy{model = "llama-3.1-8b", gpu = "h100", async_scheduling = v})
  end)
  at_line("field 'rate' must be a number > 0 (requests a second), got nan", function()
    return (kv.plan{model = "llama-3.1-8b", rate = v})
  end)
  at_line("field 'tokens_per_s' must be a number >= 0, got nan", function()
    return (kv.best{model = "llama-3.1-8b", tokens_per_s = v})
  end)
end
-- a value whose __tostring raises (or returns no string) is shown by its type:
-- the message was the value's own error ("boom")
local raising = setmetatable({}, {__tostring = function() error("boom") end})
at_line("field 'usage' must be 'server' or 'offline', got 'a table'", function()
  return (kv.deploy{model = "llama-3.1-8b", gpu = "h100", usage = raising})
end)
at_line("field 'async_scheduling' must be true or false, got a table", function()
  return (kv.deploy{model = "llama-3.1-8b", gpu = "h100", async_scheduling = raising})
end)

-- a sweep run again from its own filter, column or each function: it ran
-- itself from every row until Lua's C stack overflowed, and said so in 4 KB
-- of "sweep filter:" ending at "stdlib/kvplan/util.lua:162"; now refused
local s
s = kv.sweep{model = "llama-3.1-8b", gpu = "h100", tp = {1, 2}, columns = {"tp"},
             filter = function() s:each(function() end) return true end}
at_line("sweep filter: ", function() return (s:each(function() end)) end)
at_line("sweep each: this sweep is already running (in s:each): a filter, column or each function "
        .. "cannot run its own sweep", function() return (s:each(function() end)) end)
local s2 = kv.sweep{model = "llama-3.1-8b", gpu = "h100", tp = {1, 2}, columns = {"tp"}}
at_line("sweep each: this sweep is already running (in s:each)",
        function() return (s2:each(function() s2:each(function() end) end)) end)
-- the refusal does not stick: the sweep runs afterwards, another sweep inside it too
check.eq(s2:each(function() end), 2, "rows after a refused nested run")
local s3 = kv.sweep{model = "llama-3.1-8b", gpu = "h100", tp = {8}, columns = {"tp"}}
local inner = 0
s2:each(function() inner = inner + s3:each(function() end) end)
check.eq(inner, 2, "another sweep run inside a sweep's each")
-- distinct sweeps nested without end: one short message at this line
local function deep()
  return (kv.sweep{model = "llama-3.1-8b", gpu = "h100", tp = {1}, columns = {"tp"},
                   filter = function() deep() return true end}:each(function() end))
end
local msg = at_line("sweep filter: C stack overflow", deep)
assert(#msg < 200, "the nested sweeps' message is " .. #msg .. " bytes")
-- an error object whose __tostring raises: the callback's own text
-- ("(error object is a table value)"), not the __tostring's error
at_line("sweep each: (error object is a table value)", function()
  return (s2:each(function() error(raising) end))
end)

-- a file name holding a NUL byte: C opened the name cut at it
-- (kv.report{path = "x\0y.csv"} wrote the file x)
local dir = check.tmpdir()
at_line("a file name holds a NUL byte after '" .. dir .. "/x' (byte " .. (#dir + 3) .. " of " .. (#dir + 8)
        .. "): refused, as the file opened would be '" .. dir .. "/x'", function()
  local r = kv.report{columns = {"a"}, path = dir .. "/x\0y.csv"}
  r:row{a = 1}
  return (r:close())
end)
at_line("a file name holds a NUL byte", function()
  return (kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {"tp"}}:write(dir .. "/y\0z.csv"))
end)
at_line("a file name holds a NUL byte", function() return (kv.models.load_csv(dir .. "/m.csv\0x")) end)
check.eq(io.open(dir .. "/x"), nil, "no file x")
check.eq(io.open(dir .. "/y"), nil, "no file y")
os.execute("rm -r " .. dir)

-- an error of the stdlib's own sweep callback (kv.best's each) said
-- "LINE: sweep each: LINE: ..." (the line twice): now once
-- (last in this file: the prices stay in the catalog)
local prices = os.tmpname()
local pf = assert(io.open(prices, "w"))
pf:write("gpu,price_per_hour\nl4,1e308\n")
pf:close()
kv.gpus.load_prices(prices)
os.remove(prices)
local msg2 = at_line("price_per_hour of gpu 'l4' = 1e+308: the cost of 2 GPUs exceeds the largest double", function()
  return (kv.best{model = "llama-3.1-8b", context = 1024, concurrency = 4, gpus = {"l4"}, rank = "cost"})
end)
assert(not msg2:find("sweep each", 1, true), msg2)
