-- stdlib/kvplan/calibrate.lua: `kvplan calibrate` and kv.calibrate: the free
-- factors of the step-time model (factors.lua) fitted to the user's own
-- benchmark results of one deployment, the profile file that carries them,
-- and its reading for kv.deploy{profile = FILE}.
-- Stdlib layer: readers, the fit and the profile; every prediction is
-- kv.simulate's (engine/core/sim.c, roofline.c).
--
--   local c = kv.calibrate{deployment = {model = "mistral-7b", gpu = "rtx-4090"},
--                          results = {"c4.json", "c16.json", "c48.json"}}
--   print(c.factors.memory.value, c.fit.median.throughput, c.loo.median.throughput)
--   c:write "profile.json"
--
-- Results: each file one or more points (a run at one load): its request
-- count, mean prompt and output tokens, arrival rate or client concurrency,
-- and the measured output throughput, mean TTFT and mean TPOT. Read formats
-- (the keys as the tools write them):
--   vllm bench serve --save-result (vllm-project/vllm vllm/benchmarks/serve.py,
--     commit 009e6d4a1cd6, main_async and benchmark: result_json): completed,
--     total_input_tokens, total_output_tokens, request_rate ("inf" or a
--     number), max_concurrency (null or a number), output_throughput,
--     mean_ttft_ms, mean_tpot_ms (and median_/p99_ of ttft, tpot, itl, e2el)
--   benchmarks/benchmark_serving.py --save-result (vllm-project/vllm, commit
--     0049e29c41fd, main): the same keys (its goodput key is spelt
--     "request_goodput:"), without "failed"
--   SGLang bench_serving (sgl-project/sglang python/sglang/bench_serving.py,
--     commit 50a613687fe1, benchmark: one JSON object a line appended to
--     --output-file): the same keys as vLLM's; request_rate is a float,
--     written by Python's json as Infinity when unbounded (not JSON: read
--     as such here), "server_info" and "dataset_name" beside
--   trtllm-bench --report_json (NVIDIA/TensorRT-LLM
--     tensorrt_llm/bench/dataclasses/reporting.py, commit 0249976575050,
--     get_statistics_dict): request_info.num_requests, avg_input_length,
--     avg_output_length; performance.system_output_throughput_tok_s;
--     streaming_metrics.avg_ttft_ms, avg_tpot_ms (with --streaming only);
--     world_info.max_batch_size, max_num_tokens (the limits it ran with).
--     The report does not record --concurrency: the run is read as all
--     requests at once, trtllm-bench's default (give the CSV form otherwise)
--   CSV: a header with input_len, output_len, output_tok_s and optionally
--     concurrency, rate, requests, mean_ttft_ms, mean_tpot_ms (blank:
--     unknown; concurrency and rate blank or absent: all at once; requests
--     absent: the `requests` option, 1000 by default, vllm bench serve's
--     --num-prompts default)
-- A file of a format not listed, a key missing or of the wrong type is an
-- error naming the file (and line or key), the value and what was expected.
--
-- The fit: each point is simulated by kv.simulate on the deployment with
-- fixed lengths (the point's mean prompt and output, rounded), its request
-- count and its rate or client concurrency. The factors that apply to the
-- deployment (factors.lua applies) are fitted in their bounded box by
-- Levenberg-Marquardt on the sum of squared log errors over the measured
-- figures (M.weights), in coordinates that map each box to [0, 1] (log for
-- factors whose lower bound is > 0), starting at the defaults, with a
-- forward-difference Jacobian at the start and Broyden's update after (a
-- fresh Jacobian when a step fails), stopping when the sum improves by less
-- than M.tolerance relatively, or moves less, or after M.max_iterations steps.
-- Deterministic. Fewer runs than simulations, the same figures: each
-- deployment built once, no percentiles, and the start's Jacobian probes
-- taken from the start's runs where the core proves them the same run
-- (docs/time.md "Its cost"; sim.simulate_means, engine/core/sim.h kvp_sim_alt).
-- Uncertainty: the jackknife over the points, from approximate
-- leave-one-out fits (one Gauss-Newton step from the full fit with the
-- point's residuals and Jacobian rows left out, within the box); each point
-- is then simulated at its own leave-one-out factors, which gives the
-- leave-one-out error. Interval: value -/+ 2 standard errors, within the box.

local util = require "kvplan.util"
local json = require "kvplan.json"
local csv = require "kvplan.csv"
local factors = require "kvplan.factors"

local M = {}

-- ---- reading results ---------------------------------------------------------

--- Weights of the figures in the sum of squared log errors: equal, so that
--- a 10 % miss of throughput, of mean TTFT and of mean TPOT cost the same.
M.weights = {throughput = 1, ttft = 1, tpot = 1}
M.figures = {"throughput", "ttft", "tpot"}

--- The request count of a CSV row without a `requests` column (vllm bench
--- serve's --num-prompts default, vllm/benchmarks/serve.py).
M.default_requests = 1000

-- Python's json writes inf and nan as Infinity and NaN, which JSON does not
-- have: outside strings they become the strings "Infinity", "-Infinity" and
-- "NaN", read as numbers by `number` below.
local function python_json(text)
  local out, i, n = {}, 1, #text
  while i <= n do
    local s = text:find('["IN%-]', i)
    if s == nil then out[#out + 1] = text:sub(i); break end
    local c = text:sub(s, s)
    if c == '"' then
      local j = s + 1
      while true do
        local q = text:find('["\\]', j)
        if q == nil then j = n; break end
        if text:sub(q, q) == "\\" then j = q + 2 else j = q; break end
      end
      out[#out + 1] = text:sub(i, j)
      i = j + 1
    elseif text:sub(s, s + 7) == "Infinity" then
      out[#out + 1] = text:sub(i, s - 1) .. '"Infinity"'
      i = s + 8
    elseif text:sub(s, s + 8) == "-Infinity" then
      out[#out + 1] = text:sub(i, s - 1) .. '"-Infinity"'
      i = s + 9
    elseif text:sub(s, s + 2) == "NaN" then
      out[#out + 1] = text:sub(i, s - 1) .. '"NaN"'
      i = s + 3
    else
      out[#out + 1] = text:sub(i, s)
      i = s + 1
    end
  end
  return table.concat(out)
end

local python_numbers = {Infinity = math.huge, ["-Infinity"] = -math.huge, NaN = 0 / 0,
                        inf = math.huge}

local function shown(v)
  if v == json.null then return "null" end
  if type(v) == "string" then return "'" .. util.escape(v, 60) .. "'" end
  if type(v) == "table" then return "an object" end
  return tostring(v)
end

-- Value of key `key` (a dotted path "a.b") of object o, in file `where`:
-- a number (Python's Infinity/NaN strings as numbers), nil when absent or
-- null and `optional`; an error naming the file, the key, the value and
-- what was expected otherwise. check(v): whether v is acceptable.
local function number(o, key, where, expected, check, optional)
  local v = o
  for part in key:gmatch("[^.]+") do
    if type(v) ~= "table" then v = nil; break end
    v = v[part]
  end
  if v == nil or v == json.null then
    if optional then return nil end
    util.raise("%s: key '%s' is missing (expected %s)", where, key, expected)
  end
  local x = v
  if type(v) == "string" then x = python_numbers[v] end
  if type(x) ~= "number" or (check and not check(x)) then
    util.raise("%s: key '%s' is %s (expected %s)", where, key, shown(v), expected)
  end
  return x
end

local function positive(x) return x > 0 and x < math.huge end
local function count1(x) return x >= 1 and x < 2^53 and x == math.floor(x) end
local function nonneg(x) return x >= 0 and x < math.huge end

-- A measured latency: nil when absent, null or NaN (the tools write NaN
-- when no request had the figure), else a number >= 0.
local function latency(o, key, where)
  local v = o[key]
  if v == "NaN" then return nil end
  if type(v) == "number" and v ~= v then return nil end
  local x = number(o, key, where, "milliseconds >= 0", nonneg, true)
  if x == 0 then return nil end
  return x
end

-- The mean lengths of n requests of `tokens` tokens in all: an integer >= 1.
local function mean_tokens(tokens, n)
  return math.max(1, math.floor(tokens / n + 0.5))
end

-- A vLLM (bench serve, benchmark_serving.py) or SGLang (bench_serving) result.
local function serving_point(o, where, format)
  local n = number(o, "completed", where, "completed requests, an integer >= 1", count1)
  local input = number(o, "total_input_tokens", where, "prompt tokens of all requests, > 0", positive)
  local output = number(o, "total_output_tokens", where, "output tokens of all requests, > 0", positive)
  local rate = o.request_rate
  if rate ~= nil and rate ~= json.null then
    rate = number(o, "request_rate", where, "requests a second > 0 or \"inf\"",
                  function(x) return x > 0 end)
    if rate == math.huge then rate = nil end
  else
    rate = nil
  end
  local conc = number(o, "max_concurrency", where, "null or an integer >= 1", count1, true)
  return {
    source = where, format = format, requests = math.tointeger(n),
    prompt = mean_tokens(input, n), output = mean_tokens(output, n), rate = rate,
    max_concurrency = conc and math.tointeger(conc),
    measured = {
      throughput = number(o, "output_throughput", where, "output tokens a second > 0", positive),
      ttft = latency(o, "mean_ttft_ms", where), tpot = latency(o, "mean_tpot_ms", where),
    },
  }
end

local function trtllm_point(o, where)
  local n = number(o, "request_info.num_requests", where, "an integer >= 1", count1)
  local s = type(o.streaming_metrics) == "table" and o.streaming_metrics or {}
  local w = type(o.world_info) == "table" and o.world_info or {}
  local seqs = number(w, "max_batch_size", where .. ": world_info", "an integer >= 1", count1, true)
  local toks = number(w, "max_num_tokens", where .. ": world_info", "an integer >= 1", count1, true)
  return {
    source = where, format = "trtllm-bench", requests = math.tointeger(n),
    prompt = math.max(1, math.floor(number(o, "request_info.avg_input_length", where,
                                           "tokens > 0", positive) + 0.5)),
    output = math.max(1, math.floor(number(o, "request_info.avg_output_length", where,
                                           "tokens > 0", positive) + 0.5)),
    max_num_seqs = seqs and math.tointeger(seqs),
    max_num_batched_tokens = toks and math.tointeger(toks),
    measured = {
      throughput = number(o, "performance.system_output_throughput_tok_s", where,
                          "output tokens a second > 0", positive),
      ttft = latency(s, "avg_ttft_ms", where .. ": streaming_metrics"),
      tpot = latency(s, "avg_tpot_ms", where .. ": streaming_metrics"),
    },
  }
end

local formats_expected = "a result of vllm bench serve --save-result or benchmark_serving.py "
  .. "(JSON), SGLang bench_serving (JSON Lines), trtllm-bench --report_json (JSON), or a CSV "
  .. "with columns input_len,output_len,output_tok_s[,concurrency|rate,requests,mean_ttft_ms,mean_tpot_ms]"

-- One JSON object of a result file as a point.
local function object_point(o, where)
  if type(o) ~= "table" or o[1] ~= nil then
    util.raise("%s: not a benchmark result (a JSON %s; expected %s)", where,
               type(o) == "table" and "array" or type(o), formats_expected)
  end
  if type(o.performance) == "table" and type(o.request_info) == "table" then
    return trtllm_point(o, where)
  end
  if o.output_throughput ~= nil then
    local format = "vllm bench serve"
    if o.server_info ~= nil or o.dataset_name ~= nil or o.total_output_tokens_retokenized ~= nil then
      format = "sglang bench_serving"
    elseif o["request_goodput:"] ~= nil then
      format = "vllm benchmark_serving.py"
    end
    return serving_point(o, where, format)
  end
  local keys = util.sorted_keys(o)
  for i = 6, #keys do keys[i] = nil end
  util.raise("%s: not a benchmark result kvplan reads (keys %s%s; expected %s)", where,
             #keys > 0 and ("'" .. table.concat(keys, "', '") .. "'") or "none",
             #keys == 5 and ", ..." or "", formats_expected)
end

local csv_columns = {input_len = true, output_len = true, output_tok_s = true, concurrency = true,
                     rate = true, requests = true, mean_ttft_ms = true, mean_tpot_ms = true}

local function csv_points(path, opts, text)
  local name = util.input_name(path)
  local rows, lines = csv.read(path, text)
  if rows == nil then util.raise("%s", lines) end
  local col, out = nil, {}
  for i, row in ipairs(rows) do
    if #row == 1 and util.trim(row[1]) == "" then goto continue end
    if col == nil then
      col = {}
      for j, head in ipairs(row) do
        local k = util.trim(head)
        if not csv_columns[k] then
          util.raise("%s:%d: unknown column '%s' (expected %s)%s", name, lines[i], util.escape(k, 60),
                     "input_len, output_len, output_tok_s, concurrency, rate, requests, "
                     .. "mean_ttft_ms, mean_tpot_ms", util.suggest(k, util.sorted_keys(csv_columns)))
        end
        if col[k] then util.raise("%s:%d: column '%s' appears twice", name, lines[i], k) end
        col[k] = j
      end
      for _, k in ipairs{"input_len", "output_len", "output_tok_s"} do
        if col[k] == nil then util.raise("%s:%d: the header needs a column '%s'", name, lines[i], k) end
      end
    else
      local where = string.format("%s:%d", name, lines[i])
      local function cell(k, expected, check, optional)
        local v = col[k] and util.trim(row[col[k]] or "") or ""
        if v == "" then
          if optional then return nil end
          util.raise("%s: column '%s' is empty (expected %s)", where, k, expected)
        end
        local x = #v <= 64 and util.decimal_number(v) or nil -- '0x10' was 16
        if v:lower() == "inf" then x = math.huge end
        if x == nil or x ~= x or not check(x) then
          util.raise("%s: column '%s' is '%s' (expected %s)", where, k, util.escape(v, 60), expected)
        end
        return x
      end
      local rate = cell("rate", "requests a second > 0, inf or blank", function(x) return x > 0 end, true)
      if rate == math.huge then rate = nil end
      local conc = cell("concurrency", "an integer >= 1 or blank", count1, true)
      local n = cell("requests", "an integer >= 1", count1, true) or opts.requests or M.default_requests
      local ttft = cell("mean_ttft_ms", "milliseconds > 0 or blank", positive, true)
      local tpot = cell("mean_tpot_ms", "milliseconds > 0 or blank", positive, true)
      out[#out + 1] = {
        source = where, format = "csv", requests = math.tointeger(n),
        prompt = math.tointeger(cell("input_len", "tokens, an integer >= 1", count1)),
        output = math.tointeger(cell("output_len", "tokens, an integer >= 1", count1)),
        rate = rate, max_concurrency = conc and math.tointeger(conc),
        measured = {throughput = cell("output_tok_s", "output tokens a second > 0", positive),
                    ttft = ttft, tpot = tpot},
      }
    end
    ::continue::
  end
  if #out == 0 then util.raise("%s: no result rows (expected a header and a row a run)", name) end
  return out
end

-- The text of a file, at most `max` bytes; an error naming it otherwise.
-- "-" is standard input (the command line lets one argument name it), read
-- once and kept: the result reader looks at it twice (its first character,
-- then CSV or JSON), and a profile is read again for each deployment.
local stdin_text
local function read_text(path, max, what)
  if type(path) ~= "string" then util.raise("%s must be a file name, got %s", what, type(path)) end
  if path == "-" and stdin_text ~= nil then
    if #stdin_text > max then util.raise("%s on standard input is larger than %d bytes", what, max) end
    return stdin_text
  end
  -- under --sandbox, io.open raises for a path outside the readable roots
  local ok, f, err = pcall(util.open_input, path)
  if not ok then err, f = (tostring(f):gsub("^.-:%d+: ", "", 1)), nil end
  if f == nil then
    if path == "-" then util.raise("cannot read %s: %s", what, util.shown(err)) end
    util.raise("cannot read %s '%s': %s", what, path, util.shown(err))
  end
  -- a directory opens, then fails to read: it was "the file is empty"
  local text, rerr = f:read(max + 1)
  if text == nil and rerr ~= nil then
    if path ~= "-" then f:close() end
    util.raise("cannot read %s '%s': %s", what, util.input_name(path), util.shown(rerr))
  end
  -- a UTF-8 byte order mark (PowerShell's Out-File, a spreadsheet's CSV UTF-8)
  -- is no content: a JSON result with one was read as "malformed CSV", a
  -- profile "is not JSON: invalid token"
  text = (text or ""):gsub("^\239\187\191", "", 1)
  if path == "-" then stdin_text = text else f:close() end
  if #text > max then util.raise("%s '%s' is larger than %d bytes", what, util.input_name(path), max) end
  return text
end

--- Result files are at most this large (a --save-detailed file of 100,000
--- requests is far below it).
M.max_file = 256 << 20

--- The points of one result file (a list; see the module comment). opts:
--- {requests = N} for CSV rows without a requests column.
function M.read(path, opts)
  opts = opts or {}
  local text = read_text(path, M.max_file, "result file")
  -- a UTF-8 byte order mark (PowerShell's Out-File, a spreadsheet's CSV UTF-8)
  -- is no content: a JSON result with one was read as "malformed CSV"
  text = text:gsub("^\239\187\191", "", 1)
  local name = util.input_name(path)
  local first = text:match("^%s*(.)")
  if first == nil then util.raise("%s: the file is empty (expected %s)", name, formats_expected) end
  if first ~= "{" and first ~= "[" then return csv_points(path, opts, path == "-" and text or nil) end
  if first == "[" then
    util.raise("%s: not a benchmark result (a JSON array; expected %s)", name, formats_expected)
  end
  local fixed = python_json(text)
  local ok, doc = pcall(json.decode, fixed, name)
  if ok then return {object_point(doc, name)} end
  -- JSON Lines: one object a line (SGLang appends one a run)
  local lines = {}
  for line in (fixed .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local objects = 0
  for _, line in ipairs(lines) do if util.trim(line) ~= "" then objects = objects + 1 end end
  if objects < 2 then
    util.raise("%s: not JSON (%s; expected %s)", name, (util.shown(doc):gsub("^.-:%d+:%d+: ", "")),
               formats_expected)
  end
  local out = {}
  for lineno, line in ipairs(lines) do
    if util.trim(line) ~= "" then
      local where = string.format("%s:%d", name, lineno)
      local ok2, o = pcall(json.decode, line, where)
      if not ok2 then
        util.raise("%s: not JSON (%s; expected one result object a line)", where,
                   (util.shown(o):gsub("^.-:%d+:%d+: ", "")))
      end
      out[#out + 1] = object_point(o, where)
    end
  end
  return out
end

-- ---- the fit -----------------------------------------------------------------

M.max_iterations = 12

--- The fit stops when a step improves the sum of squares by less than this
--- fraction of it, or moves no factor by more than this fraction of its box.
M.tolerance = 1e-3

--- The least damping of the leave-one-out steps (relative to the
--- curvature's diagonal, Marquardt's scaling): without a point, factors the
--- rest hardly determine would otherwise take steps far beyond where the
--- linear model holds.
M.loo_damping = 0.01

--- The weight of the prior: each fitted factor adds one residual, its
--- distance from its default in units of half its default spread
--- (factors.lua; log units for the efficiencies), weighted as one figure of
--- one run. A factor the runs hardly determine stays near its default (the
--- published measurement or rule behind it) instead of wandering to a
--- bound with another it trades against; one the runs do determine moves.
M.prior_weight = 1

local sim_keys = {requests = true, prompt = true, output = true, rate = true, max_concurrency = true}

-- Box coordinates of factor f: z in [0, 1] <-> its value.
local function to_z(f, x)
  if f.lo > 0 then return (math.log(x) - math.log(f.lo)) / (math.log(f.hi) - math.log(f.lo)) end
  return (x - f.lo) / (f.hi - f.lo)
end
local function from_z(f, z)
  z = math.max(0, math.min(1, z))
  if f.lo > 0 then
    return math.exp(math.log(f.lo) + z * (math.log(f.hi) - math.log(f.lo)))
  end
  return f.lo + z * (f.hi - f.lo)
end

-- Solve A x = b (n x n, Gaussian elimination with partial pivoting); nil
-- when singular.
local function solve(A, b)
  local n = #b
  local m = {}
  for i = 1, n do
    m[i] = {}
    for j = 1, n do m[i][j] = A[i][j] end
    m[i][n + 1] = b[i]
  end
  for c = 1, n do
    local p = c
    for r = c + 1, n do if math.abs(m[r][c]) > math.abs(m[p][c]) then p = r end end
    if math.abs(m[p][c]) < 1e-300 then return nil end
    m[c], m[p] = m[p], m[c]
    for r = c + 1, n do
      local k = m[r][c] / m[c][c]
      for j = c, n + 1 do m[r][j] = m[r][j] - k * m[c][j] end
    end
  end
  local x = {}
  for i = n, 1, -1 do
    local s = m[i][n + 1]
    for j = i + 1, n do s = s - m[i][j] * x[j] end
    x[i] = s / m[i][i]
  end
  return x
end

local median = util.median
M.median = median

--- Simulate point pt on deployment options dopts with factor values
--- `values` (name -> number): {throughput, ttft, tpot} as kv.simulate gives
--- them (output tokens/s, mean TTFT and mean TPOT in ms).
-- kv.simulate's options of point pt on dopts at factor values `values`.
local function point_options(dopts, pt, values)
  local o = factors.apply(dopts, values or {})
  o.requests, o.prompt, o.output = pt.requests, pt.prompt, pt.output
  o.rate, o.max_concurrency = pt.rate, pt.max_concurrency
  if pt.max_num_seqs and o.max_num_seqs == nil then o.max_num_seqs = pt.max_num_seqs end
  if pt.max_num_batched_tokens and o.max_num_batched_tokens == nil then
    o.max_num_batched_tokens = pt.max_num_batched_tokens
  end
  return o
end

-- v written out exactly: numbers by type and every bit, tables by sorted
-- keys, what is neither a number, a string, a boolean nor a table by its
-- identity.
local function exact(v)
  local t = type(v)
  if t == "number" then
    return math.type(v) == "integer" and string.format("i%d", v) or string.format("f%a", v)
  elseif t == "string" then return string.format("%q", v)
  elseif t == "boolean" or t == "nil" then return tostring(v)
  elseif t ~= "table" then return t .. ":" .. tostring(v) end
  local parts = {}
  for k, x in pairs(v) do parts[#parts + 1] = exact(k) .. "=" .. exact(x) end
  table.sort(parts)
  return "{" .. table.concat(parts, ",") .. "}"
end

-- The fit's deployment builder (sim.lua's prepare): each deployment built
-- once, not once a simulation, kept in `built` by what its options hold
-- beyond the fit's own, which are the same in all of them (the factors'
-- efficiency and perf tables, the limits a result gives): deploy.new is
-- deterministic, the same options give the same deployment.
local function builder(built)
  return function(opts)
    local key = exact{opts.efficiency, opts.perf, opts.max_num_seqs, opts.max_num_batched_tokens}
    local d = built[key]
    if d == nil then
      d = require("kvplan.deploy").new(opts)
      built[key] = d
    end
    return d
  end
end

--- Simulate point pt on deployment options dopts with factor values
--- `values` (name -> number): {throughput, ttft, tpot} as kv.simulate gives
--- them (output tokens/s, mean TTFT and mean TPOT in ms).
function M.predict(dopts, pt, values)
  local r = require("kvplan.sim").simulate(point_options(dopts, pt, values))
  return {throughput = r.throughput_tokens_s, ttft = r.ttft_ms.mean, tpot = r.tpot_ms.mean}
end

-- M.predict's figures as the fit takes them: build, the fit's builder;
-- the figures read without the percentiles (sim.simulate_means: the same
-- numbers). alt_values (optional): other factor values, a list; the second
-- result holds at j the figures of alt_values[j] where the core found their
-- run to be this one (the numbers M.predict gives them), nil where they
-- need their own.
local function fit_predict(dopts, pt, values, build, alt_values)
  local alts
  if alt_values ~= nil then
    alts = {}
    for j, v in ipairs(alt_values) do alts[j] = point_options(dopts, pt, v) end
  end
  return require("kvplan.sim").simulate_means(point_options(dopts, pt, values), build, alts)
end

-- Residuals of one point: sqrt(weight) x ln(predicted / measured) of each
-- measured figure, in M.figures order (a list of the figures used).
local function residuals(pt, pred)
  local r = {}
  for _, f in ipairs(M.figures) do
    local m = pt.measured[f]
    if m ~= nil then
      local p = pred[f]
      if not (p and p > 0 and p < math.huge) then p = 1e-9 end
      r[#r + 1] = math.sqrt(M.weights[f]) * math.log(p / m)
    end
  end
  return r
end

local Result = {}
Result.__index = Result
Result.__name = "kvplan.Calibration"

local function check_points(points)
  if type(points) ~= "table" or #points == 0 then
    util.raise("calibrate needs at least one result (field 'results' or 'points')")
  end
  for i = 1, #points do
    local p = points[i]
    if type(p) ~= "table" or type(p.measured) ~= "table" then
      util.raise("point %d must be a table with 'measured' (kv.calibrate.read gives them)", i)
    end
  end
end

--- kv.calibrate{deployment = {kv.deploy options}, results = {files} | points
--- = {points}, factors = {names} (default: every factor that applies),
--- requests = N (CSV rows without a count)}: the fit (see the module
--- comment). Returns a kvplan.Calibration: factors (name -> {value, se,
--- lo, hi, min, max, unit, default, fitted, at_bound, why}), points, fit and
--- loo ({points = {{source, measured, predicted, error}}, median = {figure
--- -> median |error|}}), deployment, inputs; c:write(path) writes the profile.
function M.calibrate(spec)
  util.opts_of(spec, {deployment = true, results = true, points = true, factors = true,
                      requests = true}, "calibrate")
  local deploy = require "kvplan.deploy"
  local dopts = spec.deployment
  if type(dopts) ~= "table" then util.raise("calibrate needs 'deployment', a table of kv.deploy options") end
  dopts = deploy.rename(dopts, "deployment")
  for _, k in ipairs(util.sorted_keys(dopts)) do
    if sim_keys[k] then
      util.raise("field '%s' is the results' own (each result file gives it), not the deployment's", k)
    end
  end
  if dopts.profile ~= nil then
    util.raise("field 'profile': calibrate fits the factors itself; drop the profile")
  end
  -- the run's profile (profile=FILE on the command line) is not applied
  -- while the factors are fitted: restored however the fit ends
  local run_profile = deploy.run_defaults.profile
  deploy.run_defaults.profile = nil
  local ok, c = pcall(M.fit, spec, dopts)
  deploy.run_defaults.profile = run_profile
  if not ok then error(c, 0) end
  return c
end

-- kv.calibrate's body: spec as given, dopts the deployment's options.
function M.fit(spec, dopts)
  local deploy = require "kvplan.deploy"
  local d = deploy.new(dopts)
  local points, inputs = spec.points, {}
  if spec.results ~= nil then
    if type(spec.results) ~= "table" or #spec.results == 0 then
      util.raise("field 'results' must list result files, got %s", type(spec.results))
    end
    points = {}
    for _, path in ipairs(spec.results) do
      inputs[#inputs + 1] = path
      for _, p in ipairs(M.read(path, {requests = spec.requests})) do points[#points + 1] = p end
    end
  end
  check_points(points)
  -- the factors fitted: those asked (or all) that the step time reads and
  -- that the deployment's own options do not set
  local eff, perf = dopts.efficiency or {}, dopts.perf or {}
  local out, fitted = {}, {}
  local asked
  if spec.factors ~= nil then
    asked = {}
    for _, n in ipairs(spec.factors) do asked[factors.get(n, "field 'factors'").name] = true end
  end
  local defaults = d:perf()
  for _, f in ipairs(factors.list) do
    local x = defaults[f.rate]
    if x == 0 and f.default then x = f.default(d) or x end
    local e = {value = x, default = x, min = f.lo, max = f.hi, unit = f.unit, fitted = false}
    local given = (f.option[1] == "efficiency" and eff or perf)[f.option[2]] ~= nil
    local applies, why_not = f.applies(d)
    if not applies then
      e.why = why_not
    elseif asked and not asked[f.name] then
      e.why = "not asked for (factors=...)"
    elseif given then
      e.why = "given in the deployment's options"
    elseif x < f.lo or x > f.hi then
      e.why = string.format("its value %s lies outside its box %s .. %s", util.fmt_num(x),
                            util.fmt_num(f.lo), util.fmt_num(f.hi))
    else
      fitted[#fitted + 1] = f
    end
    out[f.name] = e
  end
  local k, n = #fitted, #points
  -- the model: z (box coordinates of the fitted factors) -> residual
  -- blocks, one a point; every simulation counted
  local sims, runs, build = 0, 0, builder({})
  local function values_of(z)
    local v = {}
    for j, f in ipairs(fitted) do v[f.name] = from_z(f, z[j]) end
    return v
  end
  local function eval_point(i, z)
    sims, runs = sims + 1, runs + 1
    return (fit_predict(dopts, points[i], values_of(z), build))
  end
  -- the prior: one residual a factor, its distance from its default in
  -- units of its default spread (factors.lua), the block after the points'
  -- (never left out); a factor whose spread is 0 has none
  local z0, prior_scale = {}, {}
  for j, f in ipairs(fitted) do
    local x0 = out[f.name].value
    z0[j] = math.max(0, math.min(1, to_z(f, x0)))
    local a, b = factors.spread(f, x0)
    local w = (to_z(f, math.max(b, f.lo)) - to_z(f, math.max(a, f.lo))) / 2
    prior_scale[j] = w > 0 and math.sqrt(M.prior_weight) / w or 0
  end
  local function prior_res(z)
    local r = {}
    for j = 1, k do r[j] = (z[j] - z0[j]) * prior_scale[j] end
    return r
  end
  local nb = n + 1
  -- the Jacobian's probe of factor j from z: z moved by h along j (back
  -- when that leaves the box), and the move
  local h = 0.02
  local function probe(z, j)
    local zz = {}
    for q = 1, k do zz[q] = z[q] end
    local dz = z[j] + h <= 1 and h or -h
    zz[j] = z[j] + dz
    return zz, dz
  end
  -- every point at z; probes: also each point at the Jacobian's probes
  -- from z where its run is the one at z (sim.simulate_means), probed[i][j]
  -- (each counted as the simulation it stands for when the Jacobian takes it)
  local function eval_all(z, probes)
    local preds, res, probed = {}, {}, {}
    local alt_values
    if probes then
      alt_values = {}
      for j = 1, k do alt_values[j] = values_of((probe(z, j))) end
    end
    for i = 1, n do
      sims, runs = sims + 1, runs + 1
      preds[i], probed[i] = fit_predict(dopts, points[i], values_of(z), build, alt_values)
      res[i] = residuals(points[i], preds[i])
    end
    res[nb] = prior_res(z)
    return res, preds, probes and probed or nil
  end
  local function ssr(res)
    local s = 0
    for i = 1, #res do for _, r in ipairs(res[i]) do s = s + r * r end end
    return s
  end
  -- probed: eval_all's probes from this z (nil: none)
  local function jacobian(z, res, probed)
    local J = {} -- J[i][row][j]
    for i = 1, nb do
      J[i] = {}
      for row = 1, #res[i] do J[i][row] = {} end
    end
    for j = 1, k do
      local zz, step = probe(z, j)
      for i = 1, n do
        local pred = probed and probed[i][j]
        if pred then sims = sims + 1 else pred = eval_point(i, zz) end
        local r2 = residuals(points[i], pred)
        for row = 1, #res[i] do J[i][row][j] = (r2[row] - res[i][row]) / step end
      end
      for row = 1, k do J[nb][row][j] = row == j and prior_scale[j] or 0 end
    end
    return J
  end
  -- a damped Gauss-Newton step within the box from z, without the points
  -- in `skip`; lambda: the damping
  local function step(z, res, J, lambda, skip)
    local H, g = {}, {}
    for a = 1, k do
      H[a], g[a] = {}, 0
      for b = 1, k do H[a][b] = 0 end
    end
    for i = 1, nb do
      if not (skip and skip[i]) then
        for row, r in ipairs(res[i]) do
          local Jr = J[i][row]
          for a = 1, k do
            g[a] = g[a] + Jr[a] * r
            for b = 1, k do H[a][b] = H[a][b] + Jr[a] * Jr[b] end
          end
        end
      end
    end
    -- factors at a bound that the gradient pushes further out stay there;
    -- in a leave-one-out step (skip), every factor at a bound stays (the
    -- fit's active bounds: a step from the fit is a small change of it)
    local free = {}
    for a = 1, k do
      local out_lo = z[a] <= 0 and (skip or g[a] > 0)
      local out_hi = z[a] >= 1 and (skip or g[a] < 0)
      free[a] = not (out_lo or out_hi) and H[a][a] > 1e-12
    end
    local A, b, idx = {}, {}, {}
    for a = 1, k do if free[a] then idx[#idx + 1] = a end end
    for p, a in ipairs(idx) do
      A[p], b[p] = {}, -g[a]
      for q, c in ipairs(idx) do A[p][q] = H[a][c] + (p == q and lambda * (H[a][a] + 1e-9) or 0) end
    end
    local dz = solve(A, b) or {}
    local zn = {}
    for a = 1, k do zn[a] = z[a] end
    for p, a in ipairs(idx) do zn[a] = math.max(0, math.min(1, z[a] + (dz[p] or 0))) end
    return zn
  end
  -- start at the defaults, within the box
  local z = {}
  for j, f in ipairs(fitted) do z[j] = math.max(0, math.min(1, to_z(f, out[f.name].value))) end
  local res, preds, probed = eval_all(z, k > 0)
  local J, lambda, iterations = nil, 1e-3, 0
  if k > 0 then
    J = jacobian(z, res, probed)
    local fresh = true
    local s = ssr(res)
    while iterations < M.max_iterations do
      iterations = iterations + 1
      local zn = step(z, res, J, lambda)
      local moved = 0
      for a = 1, k do moved = math.max(moved, math.abs(zn[a] - z[a])) end
      if moved < 1e-6 then
        if fresh then break end
        J, fresh = jacobian(z, res), true
      else
        local rn, pn = eval_all(zn)
        local sn = ssr(rn)
        if sn < s then
          -- Broyden's update of each point's block: J += (dr - J dz) dz' / dz'dz
          local dz, dd = {}, 0
          for a = 1, k do dz[a] = zn[a] - z[a]; dd = dd + dz[a] * dz[a] end
          for i = 1, n do -- the prior's block is exact
            for row = 1, #res[i] do
              local Jr, pred = J[i][row], 0
              for a = 1, k do pred = pred + Jr[a] * dz[a] end
              local c = (rn[i][row] - res[i][row] - pred) / dd
              for a = 1, k do Jr[a] = Jr[a] + c * dz[a] end
            end
          end
          local gain = (s - sn) / math.max(s, 1e-300)
          z, res, preds, s, fresh = zn, rn, pn, sn, false
          lambda = math.max(lambda / 3, 1e-7)
          if gain < M.tolerance or moved < M.tolerance then break end
        elseif moved < 10 * M.tolerance then
          -- a step this small that does not help: the sum's noise (a
          -- simulation's steps are discrete), not a slope: done
          break
        elseif not fresh then
          J, fresh = jacobian(z, res), true
        else
          lambda = lambda * 8
          if lambda > 1e6 then break end
        end
      end
    end
  end
  -- leave-one-out: one damped Gauss-Newton step from the fit without point
  -- i, on the fit's last Jacobian
  local loo_z = {}
  for i = 1, n do
    if k == 0 or n == 1 then loo_z[i] = z
    else loo_z[i] = step(z, res, J, math.max(lambda, M.loo_damping), {[i] = true}) end
  end
  -- the factors: values, jackknife standard errors, intervals, bounds
  for j, f in ipairs(fitted) do
    local e = out[f.name]
    e.value, e.fitted = from_z(f, z[j]), true
    local xs, mean = {}, 0
    for i = 1, n do xs[i] = from_z(f, loo_z[i][j]); mean = mean + xs[i] / n end
    local v = 0
    for i = 1, n do v = v + (xs[i] - mean) ^ 2 end
    e.se = n > 1 and math.sqrt(v * (n - 1) / n) or nil
    e.lo = math.max(f.lo, e.value - 2 * (e.se or 0))
    e.hi = math.min(f.hi, e.value + 2 * (e.se or 0))
    if z[j] <= 1e-9 then e.at_bound = "lower"
    elseif z[j] >= 1 - 1e-9 then e.at_bound = "upper" end
    if J ~= nil then
      local col = 0
      for i = 1, n do for row = 1, #res[i] do col = col + math.abs(J[i][row][j]) end end
      if col < 1e-9 then e.why = "these results do not depend on it (kept where it started)" end
    end
  end
  local function errors(pt, pred)
    local e = {}
    for _, f in ipairs(M.figures) do
      local m = pt.measured[f]
      if m ~= nil and pred[f] ~= nil then e[f] = pred[f] / m - 1 end
    end
    return e
  end
  local function summary(list)
    local med = {}
    for _, f in ipairs(M.figures) do
      local v = {}
      for _, p in ipairs(list) do if p.error[f] ~= nil then v[#v + 1] = math.abs(p.error[f]) end end
      med[f] = median(v)
    end
    return {points = list, median = med}
  end
  local fit_list, loo_list = {}, {}
  for i, pt in ipairs(points) do
    fit_list[i] = {source = pt.source, measured = pt.measured, predicted = preds[i],
                   error = errors(pt, preds[i])}
    -- one result leaves nothing to fit without it: no leave-one-out error
    if n == 1 then
      loo_list[i] = {source = pt.source, measured = pt.measured, predicted = {}, error = {}}
    else
      local lp = (loo_z[i] == z) and preds[i] or eval_point(i, loo_z[i])
      loo_list[i] = {source = pt.source, measured = pt.measured, predicted = lp, error = errors(pt, lp)}
    end
  end
  return setmetatable({
    deployment = d, options = dopts, points = points, inputs = inputs, factors = out,
    fitted = fitted, fit = summary(fit_list), loo = summary(loo_list), iterations = iterations,
    simulations = sims, runs = runs, ssr = ssr(res),
  }, Result)
end

-- ---- the profile ---------------------------------------------------------------

M.profile_version = 1

local function json_string(s)
  return '"' .. tostring(s):gsub('[%c"\\]', function(c)
    local esc = {['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r"}
    return esc[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function json_value(v, indent)
  local t = type(v)
  if v == nil then return "null" end
  if t == "boolean" then return tostring(v) end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if math.type(v) == "integer" then return string.format("%d", v) end
    return string.format("%.17g", v)
  end
  if t == "string" then return json_string(v) end
  indent = indent or ""
  local inner = indent .. "  "
  if v[1] ~= nil or next(v) == nil and getmetatable(v) == "array" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = inner .. json_value(x, inner) end
    return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
  end
  local keys = util.sorted_keys(v)
  if #keys == 0 then return "{}" end
  local parts = {}
  for i, key in ipairs(keys) do parts[i] = inner .. json_string(key) .. ": " .. json_value(v[key], inner) end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end
M.json_value = json_value

-- The deployment as a profile records it: the options given (those a
-- profile can hold: not tables) and what they resolved to.
local function deployment_record(d, dopts)
  local rec = {}
  for key, v in pairs(dopts) do
    local t = type(v)
    if t == "string" or t == "number" or t == "boolean" then rec[key] = v end
  end
  rec.model, rec.gpu, rec.tp, rec.pp = d.model.id, d.gpu.id, d.tp, d.pp
  rec.weights, rec.kv, rec.engine = d.weights.name, d.kv.name, d.budget
  rec.engine_version = d.engine_version or dopts.engine_version
  return rec
end

--- The profile as a Lua table (what c:write writes as JSON).
function Result:profile()
  local fac = {}
  for _, f in ipairs(factors.list) do
    local e = self.factors[f.name]
    if e.fitted then
      fac[f.name] = {value = e.value, se = e.se, lo = e.lo, hi = e.hi, min = e.min, max = e.max,
                     unit = e.unit, default = e.default, at_bound = e.at_bound, note = e.why}
    end
  end
  local function points(list)
    local out = {}
    for i, p in ipairs(list.points) do
      out[i] = {input = p.source, measured = p.measured, predicted = p.predicted, error = p.error}
    end
    return {points = out, median_abs_error = list.median}
  end
  local inputs = {}
  for i, p in ipairs(self.inputs) do inputs[i] = p end
  return {
    kvplan_profile = M.profile_version, kvplan_version = require("kvplan.core").version,
    deployment = deployment_record(self.deployment, self.options), inputs = inputs,
    factors = fac, weights = M.weights,
    uncertainty = "jackknife over the results (approximate leave-one-out fits: one "
      .. "Gauss-Newton step from the full fit without the result); lo/hi: value -/+ 2 "
      .. "standard errors, within the factor's box",
    fit = points(self.fit), leave_one_out = points(self.loo),
  }
end

--- Write the profile (JSON) to path, atomically.
function Result:write(path)
  if type(path) ~= "string" then util.raise("profile path must be a string, got %s", type(path)) end
  local w <close> = csv.atomic(path)
  w:write(json_value(self:profile()), "\n")
  w:commit()
  return path
end

function Result:__tostring()
  return string.format("kvplan.Calibration (%d results, %d factors fitted)", #self.points, #self.fitted)
end

--- Profiles are at most this large.
M.max_profile = 16 << 20

local profile_cache = {}

--- The profile in file `path` (a table: deployment, factors name ->
--- {value, lo, hi, ...}), checked: an error names the file, the key and
--- what was expected.
function M.read_profile(path)
  if type(path) ~= "string" then util.raise("field 'profile' must be a file name, got %s", type(path)) end
  local text = read_text(path, M.max_profile, "profile")
  if profile_cache[path] and profile_cache[path].text == text then return profile_cache[path].p end
  local name = util.input_name(path) -- "-": standard input
  local ok, p = pcall(json.decode, text, name)
  if not ok then util.raise("profile '%s' is not JSON: %s", name, util.shown(p):gsub("^.-:%d+:%d+: ", "")) end
  if type(p) ~= "table" or p.kvplan_profile == nil then
    util.raise("%s: not a kvplan profile (no key 'kvplan_profile'; `kvplan calibrate ... -o %s` writes one)",
               name, path == "-" and "profile.json" or path)
  end
  if p.kvplan_profile ~= M.profile_version then
    util.raise("%s: key 'kvplan_profile' is %s (this kvplan reads version %d)", name,
               shown(p.kvplan_profile), M.profile_version)
  end
  if type(p.deployment) ~= "table" or type(p.deployment.gpu) ~= "string" then
    util.raise("%s: key 'deployment.gpu' is missing (expected the GPU the profile was fitted on)", name)
  end
  if type(p.factors) ~= "table" then util.raise("%s: key 'factors' is missing (expected an object)", name) end
  for fname, e in util.sorted_pairs(p.factors) do -- of several bad factors, the same one every run
    local f = factors.get(fname, name .. ": key 'factors'")
    local where = name .. ": factors." .. fname
    local function inbox(x) return x >= f.lo and x <= f.hi end
    e.value = number(e, "value", where, string.format("a number in %s .. %s", util.fmt_num(f.lo),
                                                       util.fmt_num(f.hi)), inbox)
    e.lo = number(e, "lo", where, "a number <= value", function(x) return inbox(x) and x <= e.value end, true)
    e.hi = number(e, "hi", where, "a number >= value", function(x) return inbox(x) and x >= e.value end, true)
  end
  profile_cache[path] = {text = text, p = p}
  return p
end

--- The deployment options opts with profile p's factors applied (each as if
--- given in efficiency = {...} or perf = {...}; what opts give wins), for
--- kv.deploy. gpu_id, engine: the deployment's; another GPU or engine than
--- the profile's is an error unless opts.profile_any.
function M.apply_profile(opts, p, path, gpu_id, engine)
  local rec = p.deployment
  if not opts.profile_any then
    if rec.gpu ~= gpu_id then
      util.raise("profile '%s' was fitted on gpu '%s', this deployment runs on '%s' "
                 .. "(profile_any = true applies it anyway)", path, rec.gpu, util.shown(gpu_id))
    end
    local pe = rec.engine or "vllm"
    if pe ~= engine then
      util.raise("profile '%s' was fitted for engine '%s', this deployment's is '%s' "
                 .. "(profile_any = true applies it anyway)", path, util.shown(pe), util.shown(engine))
    end
  end
  local values = {}
  for name, e in pairs(p.factors) do
    local f = factors.by_name[name]
    local own = opts[f.option[1]]
    if not (type(own) == "table" and own[f.option[2]] ~= nil) then values[name] = e.value end
  end
  return factors.apply(opts, values)
end

-- ---- the command ---------------------------------------------------------------

-- An error as a percentage: %.1f up to a million per cent, %.3g past it (a
-- measured 1e-300 tok/s against a predicted 5200 was a 300-digit cell)
local function pct(x)
  if x == nil then return "-" end
  return string.format(math.abs(100 * x) < 1e6 and "%+.1f %%" or "%+.3g %%", 100 * x)
end
local function apct(x)
  if x == nil then return "-" end
  return string.format(math.abs(100 * x) < 1e6 and "%.1f %%" or "%.3g %%", 100 * x)
end
local function num(x)
  if x == nil then return "-" end
  if x ~= 0 and (math.abs(x) < 0.01 or math.abs(x) >= 1e5) then return string.format("%.3g", x) end
  return string.format("%.4g", x)
end

--- The report of calibration c as lines of text (what `kvplan calibrate` prints).
function Result:text()
  local d, L = self.deployment, {}
  local function add(fmt, ...) L[#L + 1] = string.format(fmt, ...) end
  add("kvplan calibrate: %s on %s, tp %d x pp %d, engine %s: %d results, %d simulations, %d fit steps",
      d.model.id, d.gpu.id, d.tp, d.pp, d.budget, #self.points, self.simulations, self.iterations)
  add("")
  add("%-18s %10s %10s %22s %18s %10s  %s", "factor", "value", "s.e.", "interval (2 s.e.)", "bounds",
      "default", "note")
  for _, f in ipairs(factors.list) do
    local e = self.factors[f.name]
    local note = e.why or ""
    if e.at_bound then
      note = string.format("at its %s bound %s: the results ask for %s than the box allows", e.at_bound,
                           util.fmt_num(e.at_bound == "lower" and f.lo or f.hi),
                           e.at_bound == "lower" and "less" or "more")
        .. (e.why and ("; " .. e.why) or "")
    end
    if e.fitted then
      add("%-18s %10s %10s %22s %18s %10s  %s", f.name .. " (" .. f.unit .. ")", num(e.value),
          num(e.se), num(e.lo) .. " .. " .. num(e.hi), util.fmt_num(f.lo) .. " .. " .. util.fmt_num(f.hi),
          num(e.default), note)
    else
      add("%-18s %10s %10s %22s %18s %10s  not fitted: %s", f.name .. " (" .. f.unit .. ")", num(e.value),
          "", "", util.fmt_num(f.lo) .. " .. " .. util.fmt_num(f.hi), num(e.default), note)
    end
  end
  add("fit: squared log errors with a prior around each default (docs/time.md); uncertainty: "
      .. "jackknife over the %d results (approximate leave-one-out fits)", #self.points)
  add("")
  add("%-40s %12s %9s %9s %10s %9s %9s %10s %9s %9s", "result", "tok/s", "fit", "LOO", "ttft_ms",
      "fit", "LOO", "tpot_ms", "fit", "LOO")
  for i, p in ipairs(self.points) do
    local fe, le = self.fit.points[i].error, self.loo.points[i].error
    local m = p.measured
    local src = p.source
    if #src > 40 then src = "..." .. src:sub(-37) end
    add("%-40s %12s %9s %9s %10s %9s %9s %10s %9s %9s", src, num(m.throughput), pct(fe.throughput),
        pct(le.throughput), num(m.ttft), pct(fe.ttft), pct(le.ttft), num(m.tpot), pct(fe.tpot),
        pct(le.tpot))
  end
  add("median |error|: fit: throughput %s, ttft %s, tpot %s; leave-one-out: throughput %s, ttft %s, tpot %s",
      apct(self.fit.median.throughput), apct(self.fit.median.ttft), apct(self.fit.median.tpot),
      apct(self.loo.median.throughput), apct(self.loo.median.ttft), apct(self.loo.median.tpot))
  return table.concat(L, "\n")
end

--- kvplan calibrate RESULT... key=value... [-o profile.json]: the
--- deployment's fields as key=value (fields.lua), factors=a,b (default:
--- all that apply), requests=N (CSV rows without a count).
function M.command(args)
  local words, pairs_only = {}, {}
  for key, v in pairs(args or {}) do
    if math.type(key) == "integer" then words[key] = v else pairs_only[key] = v end
  end
  if #words == 0 then
    util.raise("usage: kvplan calibrate RESULT... model=M gpu=G [tp=N engine=E ...] [-o profile.json]")
  end
  -- every deployment field of one value is an argument (fields.lua)
  local fields = require "kvplan.fields"
  local defaults = {factors = {""}, requests = 0}
  for _, f in ipairs(fields.list) do
    if f.type ~= "table" and f.name ~= "profile" and f.name ~= "profile_any" then defaults[f.name] = "" end
  end
  defaults.model = require("kvplan.options").required "model=llama-3.1-8b"
  defaults.gpu = require("kvplan.options").required "gpu=h100-sxm"
  local o = require("kvplan.options").parse(pairs_only, defaults)
  local dopts = {}
  for key, v in pairs(o) do
    if key ~= "factors" and key ~= "requests" and v ~= "" then dopts[key] = v end
  end
  local names = {}
  for _, x in ipairs(o.factors) do if x ~= "" then names[#names + 1] = x end end
  local c = M.calibrate{deployment = dopts, results = words, factors = #names > 0 and names or nil,
                        requests = o.requests > 0 and o.requests or nil}
  local cli = package.loaded["kvplan.cli"] or {}
  io.stdout:write(c:text(), "\n")
  if cli.output ~= nil and cli.output ~= "-" then
    c:write(cli.output)
    io.stdout:write(string.format("profile: %s (kv.deploy{profile = ...}, profile=%s on any command)\n",
                                  cli.output, cli.output))
  else
    io.stdout:write("profile: not written (give -o profile.json)\n")
  end
  return c
end

-- a method called with something else as self: an error at the user's line
util.methods(Result)

return M
