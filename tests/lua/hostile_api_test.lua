-- tests/lua/hostile_api_test.lua: hostile values through the Lua API
-- (docs/reliability.md, 2026-12-03, the Lua API and the file readers): each
-- is an error at this file's line naming what was expected, never a Lua
-- error from inside the stdlib ("stdlib/kvplan/sweep.lua:763: attempt to
-- index a number value (local 'self')" before).
local kv = require "kvplan"
local check = require "check"

local function at_line(pattern, f)
  local msg = check.error(pattern, f)
  assert(msg:find("hostile_api_test.lua:%d+: "), "not at the script's line: " .. msg)
  assert(not msg:find("stdlib/"), "from inside the stdlib: " .. msg)
  return msg
end

local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100"}
local s = kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {"tp"}}
local r = kv.report{columns = {"a"}, path = os.tmpname()}
local w = kv.workload.fixed(5)
local m = kv.model("llama-3.1-8b")

-- a method called with a dot and something else as self
at_line("bad argument #1 to 'ledger' (kvplan.Deployment expected, got number)", function() return (d.ledger(5)) end)
at_line("bad argument #1 to 'time' (kvplan.Deployment expected, got table)", function() return (d.time({}, 1024)) end)
at_line("bad argument #1 to 'starts' (kvplan.Deployment expected, got nil)", function() return (d.starts()) end)
at_line("bad argument #1 to 'count' (kvplan.Sweep expected, got number)", function() return (s.count(5)) end)
at_line("bad argument #1 to 'each' (kvplan.Sweep expected, got string)", function() return (s.each("x", print)) end)
at_line("bad argument #1 to 'write' (kvplan.Sweep expected, got table)", function() return (s.write({})) end)
at_line("bad argument #1 to 'row' (kvplan.Report expected, got number)", function() return (r.row(5, {a = 1})) end)
at_line("bad argument #1 to 'mean' (kvplan.Distribution expected, got number)", function() return (w.mean(0)) end)
at_line("bad argument #1 to 'weight_size' (kvplan.Model expected, got number)", function() return (m.weight_size(5)) end)
-- a table whose __index raises is not taken for the object either
local raising = setmetatable({}, {__index = function() error("boom") end})
at_line("bad argument #1 to 'ledger' (kvplan.Deployment expected, got table)", function() return (d.ledger(raising)) end)
-- the methods still work on the object and on a table that reads through to it
assert(s:count() >= 1 and d:ledger() and w:mean() == 5)
assert(setmetatable({}, {__index = d}):ledger())
r:discard()

-- an options table that is not a table
at_line("sweep base must be a table of fields, got number", function() return (kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {"tp"}, base = 5}) end)
at_line("sweep write options must be a table of fields, got string", function() return (s:write(os.tmpname(), "x")) end)

-- functions given something else than the deployment, model or file name
at_line("ledger_row needs a deployment (kv.deploy{...}), got number", function() return (kv.report.ledger_row(5, 1024, 1)) end)
at_line("ledger_items needs a deployment (kv.deploy{...}), got string", function() return (kv.report.ledger_items("x", 1024, 1)) end)
at_line("time_fields needs a deployment (kv.deploy{...}), got table", function() return (kv.report.time_fields({}, 1024, 1)) end)
assert(kv.report.ledger_row(d, 1024, 1).fits)
at_line("facts needs a model (kv.model(...)), got number", function() return (kv.models.facts(5)) end)
at_line("models.load_csv needs a file name, got table", function() return (kv.models.load_csv({})) end)
at_line("gpus.load_csv needs a file name, got boolean", function() return (kv.gpus.load_csv(true)) end)
at_line("report text needs a string, got table", function() return (kv.report.text({})) end)

-- tables that lie: a list of optimizations inside itself (a stack overflow
-- in optim.lua before), a key that is not a name, a __len past the entries
local cyc = {}
cyc[1] = cyc
at_line("the list of optimizations contains itself", function() return (kv.optim.combine(cyc)) end)
at_line("the list of optimizations contains itself", function() return (kv.deploy{model = "llama-3.1-8b", gpu = "h100", optim = {cyc}}) end)
at_line("unexpected key 1 in simulations (field names are strings)", function() return (kv.simulations{model = "llama-3.1-8b", [1] = 2}) end)
local lying = setmetatable({}, {__len = function() return 1e9 end})
at_line("point 1 must be a table with 'measured'", function() return (kv.calibrate{deployment = {model = "llama-3.1-8b", gpu = "h100"}, points = lying}) end)

-- config.json's rope_scaling past what Lua's integers hold: an arithmetic
-- error inside engines.lua (factor 1e308), or the rotary table's bytes
-- wrapped negative and the table left out of the ledger (1e18 positions)
local dir = check.tmpdir()
local function config(name, rope)
  os.execute("mkdir -p " .. dir .. "/" .. name)
  local f = assert(io.open(dir .. "/" .. name .. "/config.json", "wb"))
  f:write('{"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_hidden_layers":32,'
          .. '"num_key_value_heads":8,"vocab_size":128256,"intermediate_size":14336,'
          .. '"max_position_embeddings":8192,"rope_scaling":' .. rope .. '}')
  f:close()
  return dir .. "/" .. name
end
local function rotary(path)
  local dd = kv.deploy{model = kv.models.from_hf(path), gpu = "h100", max_model_len = 4096}
  for _, it in ipairs(kv.report.ledger_items(dd, 1024, 1)) do
    if it.item == "rotary" then return it.bytes end
  end
end
check.eq(rotary(config("yarn", '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":2048}')),
         4 * 2048 * 128 * 2, "yarn rotary bytes")
-- (since hostile4 at from_hf, naming the file)
at_line("huge_factor/config.json: vLLM's rotary table ('rope') of inf rows x 128 elements is more than 2^63 bytes, caused by field 'rope.original_max_position' = 2048 and 'rope.factor' = 1e+308",
        function() return (rotary(config("huge_factor", '{"rope_type":"yarn","factor":1e308,"original_max_position_embeddings":2048}'))) end)
at_line("of 4e+18 rows x 128 elements is more than 2^63 bytes, caused by field 'rope.original_max_position' = 1e+18 and 'rope.factor' = 4",
        function() return (rotary(config("huge_orig", '{"rope_type":"yarn","factor":4,"original_max_position_embeddings":1e18}'))) end)
at_line("of 8.192e+303 rows x 128 elements is more than 2^63 bytes, caused by field 'max_context' = 8192 and 'rope.factor' = 1e+300", function() return (rotary(config("huge_linear", '{"rope_type":"linear","factor":1e300}'))) end)
os.execute("rm -r " .. dir)

-- a hand-built model with fields of the wrong kind: a Lua error inside
-- models.lua or engines.lua before (dtype = 0: "attempt to index a number
-- value"; experts = "": "attempt to mul a 'number' with a 'string'")
local facts = kv.models.facts(kv.model("llama-3.1-8b"))
local function hand(field, value)
  local t = {}
  for k, v in pairs(facts) do t[k] = v end
  t.id, t[field] = "hand", value
  local dd = kv.deploy{model = kv.model(t), gpu = "h100", max_model_len = 4096}
  return dd:ledger():max_concurrency(1024)
end
at_line("model 'hand': field 'dtype' must be a string, got number", function() return (hand("dtype", 0)) end)
at_line("model 'hand': field 'experts' must be an integer >= 0, got ''", function() return (hand("experts", "")) end)
at_line("model 'hand': field 'intermediate' must be an integer >= 0, got -1", function() return (hand("intermediate", -1)) end)
at_line("model 'hand': field 'rope' must be a table of the rotary tables or false (no RoPE layers), got number",
        function() return (hand("rope", 0)) end)
facts.id = 0 / 0 -- a report's model cell was -nan
at_line("field 'id' must be a string, got number", function() return (kv.model(facts)) end)
assert(hand("intermediate", 14336.0) > 0)

-- kv.plot's columns and rows of the wrong kind (no chart is drawn: each is
-- refused before gnuplot)
local svg = os.tmpname() .. ".svg"
at_line("field 'y' must be a column name, got number",
        function() return (kv.plot{data = {{x = 1, y = 2}}, x = "x", y = 0 / 0, output = svg}) end)
at_line("field 'data': row 1 must be a table of columns, got number",
        function() return (kv.plot{data = {3}, x = "x", y = "y", output = svg}) end)
at_line("field 'data': row 1 has a key 1, not a column name",
        function() return (kv.plot{data = {{[1] = 2, x = 1, y = 2}}, x = "x", y = "y", output = svg}) end)

-- kv.plan at a finite rate past what 2^63 GPUs serve: 3.2e306 replicas (a
-- float count) and tokens_per_s inf before; now not served, and why
local ranked = kv.plan{model = "llama-3.1-8b", input = 512, output = 64, rate = 1e308, ttft_ms = 2000,
                       tpot_ms = 100, gpus = {"h100"}, tp = {1}, pp = {1}, requests = 20}
check.eq(ranked[1].rank, nil, "rank at rate 1e308")
check.eq(ranked[1].replicas, nil, "replicas at rate 1e308")
assert(ranked[1].why:find("replicas of 1 GPUs %(.* req/s a replica%): more than 2%^63 GPUs"), ranked[1].why)

-- a CSV catalog's model whose params are fewer than its shapes' (so its
-- weights cannot be split by class, and its steps have no kernel count):
-- d:time was "attempt to perform arithmetic on a nil value" in factors.lua
local csvdir = check.tmpdir()
local cf = assert(io.open(csvdir .. "/m.csv", "wb"))
cf:write("id,layers,hidden,heads,kv_heads,head_dim,vocab,intermediate,max_context,params,dtype\n"
         .. "csv-8b,32,4096,32,8,128,128256,14336,8192,8000000000,bf16\n")
cf:close()
local cd = kv.deploy{model = kv.models.load_csv(csvdir .. "/m.csv")[1], gpu = "h100", max_model_len = 4096}
local ct = cd:time(1024, 1)
assert(ct.tpot_ms > 0 and ct.tpot_ms_lo <= ct.tpot_ms and ct.tpot_ms <= ct.tpot_ms_hi, "csv model's time")
os.execute("rm -r " .. csvdir)

-- m:class_bytes with a class it has not ("attempt to compare number with nil"
-- in models.lua before) or a format that is not one
at_line("class_bytes: unknown weight class 'x' (known: embeddings, lm_head,", function() return (m:class_bytes("x", kv.format("bf16"))) end)
at_line("field 'format' must be a format name or table, got number", function() return (m:class_bytes("mlp", 5)) end)
check.eq(m:class_bytes("mlp", "bf16"), m:class_bytes("mlp", kv.format("bf16")), "a format by name")

-- (2026-12-04) load's and loadfile's mode: kvplan replaced it by "t", so a
-- mode "b" (a binary chunk alone) loaded a text chunk, which Lua refuses
-- under "b"; now "b" is refused (binary chunks need --allow-binary) and a
-- mode "t" or "bt" loads text
local f0, e0 = load("return 1", "x", "b")
check.eq(f0, nil, "load of a text chunk in mode 'b'")
assert(e0:find("mode 'b': binary chunks are refused %(%-%-allow%-binary accepts them%)"), e0)
check.eq(load("return 1", "x", "t")(), 1, "load in mode 't'")
check.eq(load("return 1", "x", "bt")(), 1, "load in mode 'bt'")
check.eq(load("return 1")(), 1, "load without a mode")
check.eq(select(2, load(string.dump(function() end), "x", "bt")), "attempt to load a binary chunk (mode is 't')",
         "a binary chunk in mode 'bt'")
local lfdir = check.tmpdir()
local lf = assert(io.open(lfdir .. "/five.lua", "wb"))
lf:write("return 5\n")
lf:close()
local f1, e1 = loadfile(lfdir .. "/five.lua", "b")
check.eq(f1, nil, "loadfile of a text chunk in mode 'b'")
assert(e1:find("binary chunks are refused"), e1)
check.eq(loadfile(lfdir .. "/five.lua", "t")(), 5, "loadfile in mode 't'")

-- (2026-12-04) the CSV reader on a file without line breaks (/dev/zero: a
-- plot, prices= or trace= grew one field to gigabytes) and on a directory
-- ("cannot read '.'", no reason)
local csv = require "kvplan.csv"
at_line("/dev/zero:1: a line longer than 16777216 bytes (a CSV file's lines are at most 16 MiB)",
        function() return (csv.read("/dev/zero")) end)
at_line("cannot read '" .. lfdir .. "': it is a directory (expected a CSV file)",
        function() return (csv.read(lfdir)) end)
at_line("/dev/zero:1: a line longer than 16777216 bytes", function() return (kv.gpus.load_csv("/dev/zero")) end)
local long = string.rep("a", (1 << 24) + 1)
at_line("text:1: a line longer than 16777216 bytes", function() return (csv.read("text", long)) end)
check.eq(#csv.read("text", string.rep("a", 1 << 20) .. "\n1\n"), 2, "a 1 MiB header cell is read")
os.execute("rm -r " .. lfdir)
