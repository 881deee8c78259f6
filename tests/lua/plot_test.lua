-- tests/lua/plot_test.lua: kv.plot's axes, labels and titles, read from the
-- gnuplot script it writes (a stub takes it in place of gnuplot): a
-- logarithmic axis where the data span two decades, labels with units from
-- the column registry (columns.lua), a title from the question, and data
-- text that reaches a title only as one gnuplot string.
local kv = require "kvplan"
local check = require "check"
local csv = require "kvplan.csv"
local plot = require "kvplan.plot"
local columns = require "kvplan.columns"

local dir = check.tmpdir()

-- the script kv.plot hands gnuplot for spec (the chart is not drawn)
local function script(spec)
  local got
  local real = csv.gnuplot
  csv.gnuplot = function(s) got = s return 1, "stub" end
  spec.output = spec.output or (dir .. "/c.png")
  local ok, err = pcall(plot.plot, spec)
  csv.gnuplot = real
  assert(got, "no script: " .. tostring(err))
  assert(not ok and tostring(err):find("gnuplot failed (status 1)", 1, true), tostring(err))
  return got
end
local function has(s, line) return ("\n" .. s .. "\n"):find("\n" .. line .. "\n", 1, true) ~= nil end

-- the column registry: units by name, by a field of fields.lua, by suffix
check.eq(columns.label("max_concurrency"), "max concurrency (requests)", "max_concurrency")
check.eq(columns.label("context"), "context (tokens)", "context")
check.eq(columns.label("gib_per_gpu"), "memory per GPU (GiB)", "gib_per_gpu")
check.eq(columns.label("weights_gib_per_gpu"), "weights per GPU (GiB)", "a _gib_per_gpu column")
check.eq(columns.label("kv_budget_gib"), "KV budget (GiB)", "a _gib column")
check.eq(columns.label("ttft_ms_p90"), "TTFT p90 (ms)", "a percentile after the unit")
check.eq(columns.label("tpot_ms_lo"), "TPOT lo (ms)", "a range end after the unit")
check.eq(columns.label("share_pct"), "share of the GPU (%)", "share_pct")
check.eq(columns.label("max_num_seqs"), "max num seqs (sequences)", "a deployment field's unit")
check.eq(columns.label("gpus"), "GPUs", "a count of its own unit")
check.eq(columns.label("series"), "series", "a name the registry does not know is its label")
check.eq(columns.label("tokens_per_s_user"), "output per user (tokens/s)", "tokens_per_s_user")
-- every column of the ready scripts' numeric reports has a unit
for _, c in ipairs{"kv_tokens", "kv_bytes_per_token_per_gpu", "kv_budget_gib_per_gpu", "max_context",
                   "throughput_tokens_s", "ttft_ms_p50", "e2e_ms_p99", "requests_per_gpu",
                   "cost_per_hour", "tokens_per_s_gpu", "rate_per_replica", "usd_per_mtok"} do
  assert(select(2, columns.quantity(c)) ~= nil, "no unit for " .. c)
end

-- a capacity curve: context doubling 1K..128K, capacity falling as 1/context
local rows = {}
for i = 0, 7 do
  local c = 1024 * 2 ^ i
  rows[#rows + 1] = {model = "llama-3.1-8b", gpu = "h100-sxm", context = c,
                     max_concurrency = 4 * 131072 // c}
end
local s = script{data = rows, x = "context", y = "max_concurrency"}
assert(has(s, "set logscale x") and has(s, "set logscale y"), "two decades on both axes: " .. s)
assert(has(s, "set xlabel 'context (tokens)'"), s)
assert(has(s, "set ylabel 'max concurrency (requests)'"), s)
assert(has(s, "set title 'Llama-3.1-8B on H100 SXM5 80GB: max concurrency vs context'"), s)
-- overridden: yes/no, true/false; title=, labels
s = script{data = rows, x = "context", y = "max_concurrency", logx = "no", logy = false,
           title = "mine", xlabel = "X", ylabel = "Y"}
assert(not s:find("set logscale", 1, true), "logx = no, logy = false: " .. s)
assert(has(s, "set title 'mine'") and has(s, "set xlabel 'X'") and has(s, "set ylabel 'Y'"), s)
-- less than two decades: linear (1K..64K is 64x); log where asked
local short = {}
for i = 1, 6 do short[i] = rows[i] end
s = script{data = short, x = "context", y = "max_concurrency"}
assert(not s:find("set logscale x", 1, true), "64x is under two decades: " .. s)
s = script{data = short, x = "context", y = "max_concurrency", logx = "yes", logy = "auto"}
assert(has(s, "set logscale x") and not s:find("set logscale y", 1, true), s)
-- a negative value keeps an axis linear; zeros (requests that no longer fit) do not
rows[#rows + 1] = {model = "llama-3.1-8b", gpu = "h100-sxm", context = 262144, max_concurrency = 0}
s = script{data = rows, x = "context", y = "max_concurrency"}
assert(has(s, "set logscale y"), "zeros are left off a log axis: " .. s)
rows[#rows].max_concurrency = -1
s = script{data = rows, x = "context", y = "max_concurrency"}
assert(not s:find("set logscale y", 1, true), "a negative value: linear: " .. s)
check.error("field 'logx' must be true, false, 'yes', 'no' or 'auto', got 'maybe'", plot.plot,
            {data = rows, x = "context", y = "max_concurrency", logx = "maybe", output = dir .. "/c.png"})
-- bars: categories across, y from 0, never logarithmic
local bars = {{deployment = "a", item = "weights", gib_per_gpu = 1, model = "llama-3.1-70b",
               context = 32768, concurrency = 16},
              {deployment = "b", item = "weights", gib_per_gpu = 500, model = "llama-3.1-70b",
               context = 32768, concurrency = 16}}
s = script{data = bars, x = "deployment", y = "gib_per_gpu", by = "item", kind = "stacked"}
assert(not s:find("set logscale", 1, true), "bars are linear: " .. s)
assert(has(s, "set title 'Llama-3.1-70B, 16 requests of 32768 tokens: memory per GPU by deployment'"), s)
assert(has(s, "set ylabel 'memory per GPU (GiB)'"), s)
check.error("field 'logy' goes with kind = \"line\" or \"scatter\"", plot.plot,
            {data = bars, x = "deployment", y = "gib_per_gpu", kind = "bar", logy = true,
             output = dir .. "/c.png"})
-- a vertical line counts on the x axis, and must be > 0 where it is logarithmic
s = script{data = short, x = "context", y = "max_concurrency", vline = {x = 200000, title = "v"}}
assert(has(s, "set logscale x"), "the vline takes x past two decades: " .. s)
check.error("field 'vline.x' must be > 0 on a logarithmic x axis, got 0", plot.plot,
            {data = short, x = "context", y = "max_concurrency", logx = true, vline = {x = 0},
             output = dir .. "/c.png"})

-- data text in a title: hostile model and GPU names of a CSV report are
-- one gnuplot string each, control characters made spaces, cut at 48
local path = dir .. "/hostile.csv"
local f = assert(io.open(path, "wb"))
f:write("x,y,model,gpu\n")
local model = "''a'b`echo x`\"$(id)\"\\n\tc @x ';system(\"id\")"
local gpu = "g''" .. string.rep("g", 60)
for i = 1, 3 do f:write(string.format('%d,%d,"%s","%s"\n', i, i, model:gsub('"', '""'), gpu)) end
f:close()
s = script{data = path, x = "x", y = "y"}
local line = s:match("\nset title ([^\n]*)\n")
local want = model:gsub("%c", " ")
-- leading quotes: a double-quoted string of them, then '...' (plot.lua's q)
local rest = (want:sub(3) .. " on g''" .. string.rep("g", 42) .. "...: y vs x"):gsub("'", "''")
check.eq(line, "\"''\" . '" .. rest .. "'", "a hostile title, quoted")
-- one value in every row only: a model that differs between rows is left out
rows = {{model = "llama-3.1-8b", x = 1, y = 1}, {model = "qwen3-32b", x = 2, y = 2}}
s = script{data = rows, x = "x", y = "y"}
assert(has(s, "set title 'y vs x'"), s)

-- drawn: a PNG of the size asked, with the registry's labels (gnuplot, when installed)
if os.execute("command -v gnuplot > /dev/null 2>&1") then
  local out = dir .. "/curve.svg"
  kv.plot{data = short, x = "context", y = "max_concurrency", output = out, width = 640, height = 400,
          logx = "auto"}
  local svg = check.slurp(out)
  assert(svg:find("max concurrency (requests)", 1, true), "the label in the chart")
  os.remove(out)
end
