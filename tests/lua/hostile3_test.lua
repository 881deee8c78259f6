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
