-- tests/lua/arguments_test.lua: a method refuses arguments it does not take
-- (docs/reliability.md, "Defects, 2026-12-06"): `d:ledger{context = 1024}`
-- ran d:ledger() and dropped the table without a word. Every method of the
-- stdlib's classes (util.methods) and of the ledger (deploy.lua) says, at
-- this file's line, the method, what was given and what to do instead; the
-- methods that take arguments refuse wrong types and unknown keys.
local kv = require "kvplan"
local check = require "check"

local function at_line(pattern, f)
  local msg = check.error(pattern, f)
  assert(msg:find("arguments_test.lua:%d+: "), "not at the script's line: " .. msg)
  assert(not msg:find("stdlib/"), "from inside the stdlib: " .. msg)
  return msg
end

local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100"}
local l = d:ledger()

-- the brief's case: the context given to the ledger
local msg = at_line("kvplan.Deployment:ledger() takes no arguments, got a table {context = 1024}",
                    function() return (d:ledger{context = 1024}) end)
assert(msg:find("l:fit(context, concurrency)", 1, true), msg)
assert(msg:find("d:with{max_model_len = 1024}:ledger()", 1, true), msg)
at_line("kvplan.Deployment:ledger() takes no arguments, got 5", function() return (d:ledger(5)) end)
at_line("kvplan.Deployment:ledger() takes no arguments, got 'x', nil", function() return (d:ledger("x", nil)) end)
-- the deployment's other methods of no arguments
for _, m in ipairs{"starts", "perf", "workers", "spec"} do
  local e = at_line("kvplan.Deployment:" .. m .. "() takes no arguments, got 2",
                    function() return (d[m](d, 2)) end)
  assert(e:find("d:with{...}:" .. m .. "()", 1, true), e)
end
-- a method of arguments given one too many
at_line("kvplan.Deployment:time(context, concurrency) takes at most 2 arguments, got 3 (the extra: 5)",
        function() return (d:time(1024, 4, 5)) end)
at_line("kvplan.Deployment:min_tp(context, concurrency, max_tp) takes at most 3 arguments, got 4",
        function() return (d:min_tp(1024, 4, 8, 1)) end)
-- and of the wrong type: no table address in the message
local e = at_line("field 'context' must be an integer >= 1, got a table", function() return (d:time({context = 1})) end)
assert(not e:find("0x"), e)
at_line("field 'context' must be an integer", function() return (d:min_tp("x", 4)) end)
at_line("unknown field 'contxt' in deployment change", function() return (d:with{contxt = 5}) end)

-- the ledger's methods (C functions) the same way
at_line("kvplan.Ledger:starts() takes no arguments, got 5", function() return (l:starts(5)) end)
at_line("kvplan.Ledger:vllm_groups() takes no arguments, got an empty table {}", function() return (l:vllm_groups{}) end)
at_line("kvplan.Ledger:fit(context, concurrency) takes at most 2 arguments, got 3 (the extra: 1)",
        function() return (l:fit(1024, 1, 1)) end)
at_line("kvplan.Ledger:max_concurrency(context) takes at most 1 argument, got 2",
        function() return (l:max_concurrency(1024, 16)) end)
at_line("field 'context' must be an integer, got table", function() return (l:fit({context = 1})) end)
-- what they answer is unchanged
check.eq(select(1, l:fit(1024, 1)), true, "fit")
check.eq(select("#", l:starts()), 2, "starts")

-- results: a simulation, a sweep, a report
local r = kv.simulate{model = "llama-3.1-8b", gpu = "h100", requests = 20, prompt = 100, output = 10, rate = 1}
at_line("kvplan.SimResult:goodput(t) takes at most 1 argument, got 2", function() return (r:goodput({}, 5)) end)
-- a misspelt target counted every request as met
at_line("unknown field 'ttft' in goodput targets (did you mean 'ttft_ms'?)", function() return (r:goodput{ttft = 100}) end)
at_line("field 'ttft_ms' must be a finite number, got x", function() return (r:goodput{ttft_ms = "x"}) end)
local s = kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {"tp"}}
at_line("kvplan.Sweep:count() takes no arguments, got 1", function() return (s:count(1)) end)
local sims = kv.simulations{model = "llama-3.1-8b", gpu = "h100", requests = 5, prompt = 100, output = 10,
                            rate = {1, 2}, columns = {"rate"}}
at_line("unknown field 'nme' in simulations write options (did you mean 'name'?)",
        function() return (sims:write(os.tmpname(), {nme = "x"})) end)
local path = os.tmpname()
local rep = kv.report{columns = {"a"}, path = path}
at_line("r:row needs a table of the row's values keyed by column name, e.g. r:row{a = 1}, got number",
        function() return (rep:row(5)) end)
at_line("kvplan.Report:close() takes no arguments, got true", function() return (rep:close(true)) end)
rep:discard()
os.remove(path)

print("arguments ok")
