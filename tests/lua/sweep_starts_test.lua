-- tests/lua/sweep_starts_test.lua: a sweep row of a deployment that names its
-- engine folds the engine's refusal to start into fits, as
-- kv.report.ledger_row does, both ways: every sweep row equals the report
-- row of the same deployment built alone, and every deployment of the
-- product has its sweep row. vLLM (max_model_len beyond the KV cache),
-- SGLang (pool too small) and TensorRT-LLM (no block, fail-fast window),
-- each with deployments that refuse and deployments that start.
local kv = require "kvplan"
local check = require "check"

local dir = check.tmpdir()
local path = dir .. "/s.csv"
local answers = {"fits", "starts", "limit", "why", "max_concurrency", "max_context"}

-- seen[engine][answer]: what the sweeps below covered
local seen = {}
local function saw(engine, what)
  seen[engine] = seen[engine] or {}
  seen[engine][what] = true
end

-- Write the sweep; for each combination of `axes` (name -> values; nil
-- entries are absent) build the deployment alone and compare its report
-- row with the sweep's row of the same labels. Returns the rows.
local function both_ways(spec, axes, base)
  local names = {}
  for k in pairs(axes) do names[#names + 1] = k end
  table.sort(names)
  local cols = {}
  for _, k in ipairs(names) do cols[#cols + 1] = k end
  for _, k in ipairs(answers) do cols[#cols + 1] = k end
  spec.columns = cols
  for k, v in pairs(axes) do spec[k] = v end
  local s = kv.sweep(spec)
  check.eq(s:write(path), s:count(), "rows written")
  local rows = kv.csv.read(path)
  local head = rows[1]
  local byrow = {}
  for i = 2, #rows do
    local r = {}
    for j, name in ipairs(head) do r[name] = rows[i][j] end
    local key = {}
    for _, k in ipairs(names) do key[#key + 1] = r[k] end
    key = table.concat(key, "|")
    check.eq(byrow[key], nil, "one row of " .. key)
    byrow[key] = r
  end
  -- s:each gives the rows the file has, in its order, its verdict the same
  local i = 1
  check.eq(s:each(function(r)
    i = i + 1
    local w = {}
    for j, name in ipairs(head) do w[name] = rows[i][j] end
    for _, k in ipairs(names) do check.eq(tostring(r[k]), w[k], "each: " .. k .. " of row " .. i) end
    check.eq(tostring(r.fits), w.fits, "each: fits of row " .. i)
    check.eq(r.limit, w.limit, "each: limit of row " .. i)
    check.eq(r.why, w.why, "each: why of row " .. i)
    check.eq(tostring(r.starts), w.starts, "each: starts of row " .. i)
    check.eq(r.max_concurrency, tonumber(w.max_concurrency), "each: max_concurrency of row " .. i)
  end), #rows - 1, "each: every row")
  local n = 0
  local function walk(i, opts)
    if i <= #names then
      for _, v in ipairs(axes[names[i]]) do
        opts[names[i]] = v
        walk(i + 1, opts)
      end
      opts[names[i]] = nil
      return
    end
    local o, key = {}, {}
    for k, v in pairs(base) do o[k] = v end
    for _, k in ipairs(names) do
      o[k] = opts[k]
      key[#key + 1] = tostring(opts[k])
    end
    key = table.concat(key, "|")
    local ctx, conc = o.context, o.concurrency
    o.context, o.concurrency = nil, nil
    local d = kv.deploy(o)
    local want = kv.report.ledger_row(d, ctx, conc)
    local starts, refusal = d:starts()
    local _, _, limit = d:ledger():fit(ctx, conc)
    local r = byrow[key]
    check.eq(r ~= nil, true, "a sweep row for " .. key)
    check.eq(r.fits, tostring(want.fits), "fits of " .. key)
    check.eq(r.why, want.why, "why of " .. key)
    check.eq(r.limit, limit, "limit of " .. key)
    check.eq(r.starts, tostring(starts), "starts of " .. key)
    check.eq(tonumber(r.max_concurrency), want.max_concurrency, "max_concurrency of " .. key)
    check.eq(tonumber(r.max_context), want.max_context, "max_context of " .. key)
    if limit == "starts" then
      check.eq(r.why, refusal, "the engine's error of " .. key)
      saw(d.budget, "refused")
    elseif starts and want.fits then
      saw(d.budget, "starts")
    end
    n = n + 1
  end
  walk(1, {})
  check.eq(n, #rows - 1, "as many deployments as rows")
  return rows
end

-- vLLM refuses Llama-3.1-8B at max_model_len 131072 on an L4 (16 GiB of KV
-- for one request); SGLang and TensorRT-LLM start and cut
both_ways({}, {model = {"llama-3.1-8b", "qwen2.5-7b"}, gpu = {"l4", "h100-sxm"},
               engine = {"vllm", "sglang", "trtllm"}, max_model_len = {8192, 131072},
               context = {2048, 8192}, concurrency = {1, 16}}, {})

-- tiny pools (Llama-3.1-8B: 131072 bytes a token): SGLang refuses 5 tokens
-- and starts with 7; TensorRT-LLM refuses 24 tokens (no block of 32), starts
-- with 40 (one block)
both_ways({base = {weight_bytes = 1, utilization = 1, activation = 0, overhead = 0}},
          {model = {"llama-3.1-8b"}, gpu = {"l4"}, gpu_memory = {5 * 131072 + 1, 7 * 131072 + 1,
                                                   3 * 1048576 + 1, 5 * 1048576 + 1},
           engine = {"sglang", "trtllm"}, context = {4}, concurrency = {1, 2}},
          {weight_bytes = 1, utilization = 1, activation = 0, overhead = 0})

-- TensorRT-LLM under fail_fast_on_attention_window_too_large: a max_seq_len
-- beyond the pool's one block is refused, 32 tokens start
both_ways({base = {weight_bytes = 1, activation = 0, overhead = 0,
                   fail_fast_on_attention_window_too_large = true}},
          {model = {"llama-3.1-8b"}, gpu = {"l4"}, gpu_memory = {5 * 1048576 + 1}, engine = {"trtllm"},
           max_model_len = {32, 131072}, context = {16}, concurrency = {1}},
          {weight_bytes = 1, activation = 0, overhead = 0,
           fail_fast_on_attention_window_too_large = true})

for _, e in ipairs{"vllm", "sglang", "trtllm"} do
  check.eq(seen[e] and seen[e].refused, true, e .. ": a deployment that refuses to start")
  check.eq(seen[e] and seen[e].starts, true, e .. ": a deployment that starts")
end

-- the declarative filter and Lua filters see the folded fits
local function count(filter)
  return kv.sweep{model = "llama-3.1-8b", gpu = {"l4", "h100-sxm"}, engine = {"vllm", "sglang"},
                  max_model_len = {8192, 131072}, context = 2048, filter = filter,
                  columns = {"fits"}}:write(path)
end
check.eq(count(nil), 8, "all rows")
check.eq(count{fits = true}, 7, "the L4's refusal is no fit")
check.eq(count{starts = false}, 1, "one refusal")
check.eq(count{fits = true, starts = false}, 0, "fits never hides a refusal")
check.eq(count{limit = "starts"}, 1, "limit starts")
check.eq(count(function(r) return r.fits and not r.starts end), 0, "Lua filters: the same")
check.eq(count(function(r) return not r.starts end), 1, "Lua filters read starts")
check.error("filter: 'starts' takes true or false", count, {starts = 1})

-- a deployment that names no engine has its budget rule's engine (vLLM by
-- default): its refusal is part of fits too, as in report.ledger_row
kv.sweep{model = "llama-3.1-8b", gpu = "l4", max_model_len = 131072, context = 2048,
         columns = {"fits", "starts", "limit"}}:write(path)
local rows = kv.csv.read(path)
check.eq(table.concat(rows[2], ","), "false,false,starts", "budget rule alone: the refusal folded")
local rr = require("kvplan.report").ledger_row(kv.deploy{model = "llama-3.1-8b", gpu = "l4",
  max_model_len = 131072}, 2048, 1)
check.eq(rr.fits, false, "as the report row says")

os.remove(path)
os.remove(dir)
