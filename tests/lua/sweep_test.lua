-- tests/lua/sweep_test.lua: sweeps agree with single deployments; axes,
-- columns and errors.
local kv = require "kvplan"
local check = require "check"
local o = kv.optim

local dir = check.tmpdir()
local path = dir .. "/s.csv"

-- every row of a sweep equals the answers of the same deployment built alone
local s = kv.sweep{model = {"llama-3.1-8b", "gemma-2-9b"}, gpu = {"h100-sxm", "l4"},
                   optim = o.subsets{o.kv_quant "fp8", o.streaming{sinks = 4, recent = 2048}},
                   budget = {"vllm", "sglang"}, tp = {1, 2}, context = {8192, 65536},
                   concurrency = {1, 8}, base = {overhead = "1 GiB"},
                   columns = {"model", "gpu", "optim", "budget", "tp", "context", "concurrency",
                              "kv_budget_bytes", "kv_tokens", "max_concurrency", "max_context",
                              "fits", "limit"}}
check.eq(s:count(), 2 * 2 * 4 * 2 * 2 * 2 * 2, "count")
check.eq(s:write(path), s:count(), "rows written")
local rows = kv.csv.read(path)
check.eq(#rows, s:count() + 1, "header and rows")
local combos = o.subsets{o.kv_quant "fp8", o.streaming{sinks = 4, recent = 2048}}
local byname = {}
for _, c in ipairs(combos) do byname[o.name(c)] = c end
for i = 2, #rows, 7 do -- every 7th row
  local r = rows[i]
  local d = kv.deploy{model = r[1], gpu = r[2], optim = byname[r[3]], budget = r[4],
                      tp = tonumber(r[5]), overhead = "1 GiB"}
  local l = d:ledger()
  local ctx, conc = tonumber(r[6]), tonumber(r[7])
  local fits, _, limit = l:fit(ctx, conc)
  -- a row that fits where the engine refuses to start says so
  if fits and not d:starts() then fits, limit = false, "starts" end
  check.eq(tonumber(r[8]), l.kv_budget, "kv_budget_bytes row " .. i)
  check.eq(tonumber(r[9]), l.kv_tokens, "kv_tokens row " .. i)
  check.eq(tonumber(r[10]), (l:max_concurrency(ctx)), "max_concurrency row " .. i)
  check.eq(tonumber(r[11]), (l:max_context(conc)), "max_context row " .. i)
  check.eq(r[12], tostring(fits), "fits row " .. i)
  check.eq(r[13], limit, "limit row " .. i)
end

-- numeric options given as lists are looped in C: each row equals the same
-- deployment built alone, also when a combination rewrites one of them
-- (budget sets utilization: that axis is then expanded in Lua)
local combos2 = {o.none, o.budget "sglang", o.contiguous{}}
local s2 = kv.sweep{model = {"llama-3.1-8b", "qwen3-next-80b-a3b"}, gpu = {"h100-sxm", "h200"},
                    optim = combos2, utilization = {0.85, 0.9}, overhead = {0, "1 GiB"},
                    max_model_len = {4096, 32768}, block = {16, 64}, activation = {"512 MiB"},
                    vars = {v = {1, 2}}, context = {2048, 4096}, concurrency = {1, 4},
                    columns = {"model", "gpu", "optim", "utilization", "overhead", "max_model_len",
                               "block", "v", "context", "concurrency", "kv_budget_bytes",
                               "kv_tokens", "max_concurrency", "max_context", "fits",
                               {"seen", function(r) return r.gpu .. "/" .. r.overhead .. "/" .. r.v end}}}
check.eq(s2:count(), 2 * 2 * 3 * 2 * 2 * 2 * 2 * 2 * 2 * 2, "count of C axes")
check.eq(s2:write(path), s2:count(), "rows of C axes")
rows = kv.csv.read(path)
local byname2 = {}
for _, c in ipairs(combos2) do byname2[o.name(c)] = c end
for i = 2, #rows, 5 do
  local r = rows[i]
  local over = tonumber(r[5]) or r[5]
  local d = kv.deploy{model = r[1], gpu = r[2], optim = byname2[r[3]], utilization = tonumber(r[4]),
                      overhead = over, max_model_len = tonumber(r[6]), block = tonumber(r[7]),
                      activation = "512 MiB"}
  local l = d:ledger()
  local ctx, conc = tonumber(r[9]), tonumber(r[10])
  check.eq(tonumber(r[11]), l.kv_budget, "C axes kv_budget_bytes row " .. i)
  check.eq(tonumber(r[12]), l.kv_tokens, "C axes kv_tokens row " .. i)
  check.eq(tonumber(r[13]), (l:max_concurrency(ctx)), "C axes max_concurrency row " .. i)
  check.eq(tonumber(r[14]), (l:max_context(conc)), "C axes max_context row " .. i)
  check.eq(r[15], tostring((l:fit(ctx, conc))), "C axes fits row " .. i)
  check.eq(r[16], r[2] .. "/" .. r[5] .. "/" .. r[8], "C axes seen by Lua row " .. i)
end
-- a predicted activation peak and non-torch memory (vLLM's, when not given)
-- depend on the GPU, max_model_len and tp: those axes then stay deployments
kv.sweep{model = "qwen3-8b", gpu = {"h100-sxm", "l4"}, tp = {1, 2}, max_model_len = {4096, 32768},
         columns = {"gpu", "tp", "max_model_len", "activation_bytes", "overhead_bytes",
                    "kv_budget_bytes"}}:write(path)
rows = kv.csv.read(path)
check.eq(#rows, 9, "predicted rows")
for i = 2, #rows do
  local r = rows[i]
  local l = kv.deploy{model = "qwen3-8b", gpu = r[1], tp = tonumber(r[2]),
                      max_model_len = tonumber(r[3])}:ledger()
  check.eq(tonumber(r[4]), l.activation, "predicted activation row " .. i)
  check.eq(tonumber(r[5]), l.overhead, "predicted overhead row " .. i)
  check.eq(tonumber(r[6]), l.kv_budget, "predicted kv_budget row " .. i)
end
-- step times take each GPU's rates: the GPU axis stays a deployment then
kv.sweep{model = "llama-3.1-8b", gpu = {"h100-sxm", "l4"}, base = {activation = 0, overhead = 0},
         context = 2048, concurrency = 4, columns = {"gpu", "tpot_ms"}}:write(path)
rows = kv.csv.read(path)
for i = 2, 3 do
  local d = kv.deploy{model = "llama-3.1-8b", gpu = rows[i][1], activation = 0, overhead = 0}
  check.eq(rows[i][2], string.format("%.4f", d:time(2048, 4).tpot_ms), "tpot_ms on " .. rows[i][1])
end
-- and each weight format's: its compute rate and dense GEMM curves (a
-- weights axis in C took the base's bf16 rate and curves for fp8 rows)
kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", weights = {"bf16", "fp8"}, context = 2048,
         concurrency = {1, 256}, columns = {"weights", "concurrency", "tpot_ms", "tpot_ms_hi"}}:write(path)
rows = kv.csv.read(path)
for i = 2, 5 do
  local t = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = rows[i][1]}:time(2048, tonumber(rows[i][2]))
  check.eq(rows[i][3], string.format("%.4f", t.tpot_ms), "tpot_ms of " .. rows[i][1] .. " at " .. rows[i][2])
  check.eq(rows[i][4], string.format("%.4f", t.tpot_ms_hi), "tpot_ms_hi of " .. rows[i][1])
end
kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8", context = 2048, concurrency = 256,
         columns = {"tpot_ms"}}:write(path)
check.eq(kv.csv.read(path)[2][1], string.format("%.4f",
         kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8"}:time(2048, 256).tpot_ms),
         "one weights value: its rates")
check.error("field 'utilization' must be in (0, 1], got 1.5", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100", utilization = {0.9, 1.5},
           columns = {"fits"}}:write(path)
end)
check.error("gpu 'mi250x' is a module the runtime shows as several devices; plan with " ..
            "'mi250x-gcd'", kv.sweep, {model = "llama-3.1-8b", gpu = {"h100-sxm", "mi250x"},
                                       base = {activation = 0, overhead = 0}, columns = {"gpu"}})
check.error("field 'block' must be an integer, got 1.5", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", block = {16, 1.5}, columns = {"fits"}})

-- a Lua column and a filter see the row
local n = kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", context = {1024, 2048, 4096},
                   filter = function(r) return r.context > 1024 end,
                   columns = {"context", {"half", function(r) return r.context // 2 end}}}:write(path)
check.eq(n, 2, "filtered rows")
check.eq(check.slurp(path), "context,half\n2048,1024\n4096,2048\n", "Lua column")

-- max_context is computed when a filter or column reads it, once a row, and
-- the row table a filter saw is the one the columns see: one table for the
-- whole sweep, its fields updated in place; a script keeps a copy of what it
-- reads
local seen, kept, copies = {}, nil, {}
n = kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", concurrency = {1, 64, 100000},
             filter = function(r) seen[#seen + 1] = r; return r.max_context > 0 end,
             columns = {"concurrency", "max_context",
                        {"same", function(r) kept = r; return tostring(r == seen[#seen]) end},
                        {"ctx", function(r)
                           copies[#copies + 1] = {r.concurrency, r.max_context}
                           return r.max_context
                         end}}}:write(path)
check.eq(n, 2, "rows kept by max_context")
local l8 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:ledger()
check.eq(check.slurp(path), string.format("concurrency,max_context,same,ctx\n1,%d,true,%d\n64,%d,true,%d\n",
         l8:max_context(1), l8:max_context(1), l8:max_context(64), l8:max_context(64)), "lazy max_context")
check.eq(#seen, 3, "the filter saw every row")
check.eq(seen[1] == seen[3] and kept == seen[1], true, "one row table for the whole sweep")
check.eq(copies[1][1], 1, "a copy keeps its row's concurrency")
check.eq(copies[2][2], l8:max_context(64), "a copy keeps the max_context it read")
check.eq(kept.concurrency, 100000, "after the sweep the row table holds its last row")
check.eq(rawget(kept, "max_context"), nil, "max_context is not stored in the row table")

-- a filter and a Lua column cost no allocation a row: over 10,000 rows of
-- one base deployment (C axes only) the Lua heap does not move
do
  local ctx, conc = {}, {}
  for i = 1, 50 do ctx[i], conc[i] = 512 * i, i end
  local first, last, calls = nil, nil, 0
  kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", tp = {1, 2}, kv = {"bf16", "fp8"}, context = ctx,
           concurrency = conc, base = {activation = 0, overhead = 0},
           filter = function(r)
             calls = calls + 1
             local c = collectgarbage("count")
             if calls == 2 then first = c end
             last = c
             return r.max_concurrency >= 1
           end,
           columns = {"context", {"b", function(r) return r.kv_budget_bytes // r.concurrency end}}}:write(path)
  check.eq(calls, 10000, "the filter saw every row")
  check.eq(last, first, "no Lua allocation a row")
end

-- a key a filter or column adds to the row lasts for that row only, as it
-- would in a table of its own; a field the sweep sets changes with the rows
n = kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", kv = {"bf16", "fp8"}, context = {1024, 1000000},
             concurrency = {1, 2},
             filter = function(r)
               if r.concurrency == 2 then r.mark = r.kv .. "/" .. r.context end
               return true
             end,
             columns = {"kv", "context", "concurrency", "fits", "limit",
                        {"mark", function(r) return tostring(r.mark) end},
                        {"seen", function(r) return r.kv .. "," .. tostring(r.fits) .. "," .. r.limit end}}}:write(path)
check.eq(n, 8, "rows with marks")
for i, row in ipairs(kv.csv.read(path)) do
  if i > 1 then
    local mark = row[3] == "2" and row[1] .. "/" .. row[2] or "nil"
    check.eq(row[6], mark, "a key added to row " .. (i - 1) .. " lasts for that row only")
    check.eq(row[7], row[1] .. "," .. row[4] .. "," .. row[5], "the fields of row " .. (i - 1))
  end
end
kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", filter = function(r) kept = r; return true end,
         columns = {"fits"}}:write(path)
check.error("row.max_context is known only while the sweep calls a filter or column", function()
  return kept.max_context
end)

-- a declarative filter (evaluated in C, no row table) keeps exactly the rows
-- and bytes that the same conditions written as a Lua function keep
local fspec = {model = {"llama-3.1-8b", "llama-3.1-70b"}, gpu = {"h100-sxm", "l4"}, tp = {1, 2, 4},
               context = {8192, 131072}, concurrency = {1, 8, 64},
               columns = {"model", "gpu", "tp", "context", "concurrency", "max_concurrency", "fits",
                          "limit"}}
local function with(t)
  local c = {}
  for k, v in pairs(fspec) do c[k] = v end
  for k, v in pairs(t) do c[k] = v end
  return c
end
local fcases = {
  {{fits = true, max_concurrency = {">=", 4}}, function(r) return r.fits and r.max_concurrency >= 4 end},
  {{fits = false, limit = "kv"}, function(r) return not r.fits and r.limit == "kv" end},
  {{tp = {"~=", 2}, context = 8192.0, kv_budget_bytes = {">", 0}},
   function(r) return r.tp ~= 2 and r.context == 8192 and r.kv_budget_bytes > 0 end},
  {{limit = {"~=", "none"}, concurrency = {"<", 64}},
   function(r) return r.limit ~= "none" and r.concurrency < 64 end},
  {{max_context = {"<=", 100000}, row = {">", 3}}, function(r) return r.max_context <= 100000 and r.row > 3 end},
}
local all = kv.sweep(fspec):count()
for i, c in ipairs(fcases) do
  local a = kv.sweep(with{filter = c[1]}):write(path)
  local text = check.slurp(path)
  local b = kv.sweep(with{filter = c[2]}):write(path)
  check.eq(text, check.slurp(path), "declarative filter " .. i .. " as its Lua function")
  check.eq(a, b, "rows kept by declarative filter " .. i)
  assert(a > 0 and a < all, "declarative filter " .. i .. " keeps some rows, not all")
end
check.error("filter: unknown column 'colour' (a filter table takes", kv.sweep, with{filter = {colour = 1}})
check.error("filter: 'tp' takes an integer, got 1.5", kv.sweep, with{filter = {tp = 1.5}})
check.error("filter: limit 'memory' is not one of none, tp_heads,", kv.sweep, with{filter = {limit = "memory"}})
check.error("filter: condition of 'tp' must be a value or {op, value}", kv.sweep,
            with{filter = {tp = {"=>", 2}}})
check.error("filter: 'fits' takes true or false", kv.sweep, with{filter = {fits = {">", true}}})
check.error("field 'filter' must be a function or a table of conditions, got string", kv.sweep,
            with{filter = "fits"})

-- the row table follows every axis: its fields equal the row's C columns
-- whatever moved (base deployments, axes set in C, tp, kv, concurrency, fits
-- and limit); a var named like a built-in field does not hide it
do
  local names = {"model", "gpu", "utilization", "share", "tp", "kv", "context", "concurrency",
                 "fits", "limit", "max_concurrency", "kv_budget_bytes", "kv_tokens", "row"}
  local cols = {}
  for i, n in ipairs(names) do cols[i] = n end
  cols[#cols + 1] = {"seen", function(r)
    local t = {}
    for i, n in ipairs(names) do t[i] = tostring(r[n]) end
    return table.concat(t, "|")
  end}
  local rows = kv.sweep{model = {"llama-3.1-8b", "qwen3-8b"}, gpu = {"l4", "h100-sxm"}, tp = {1, 2},
                        kv = {"bf16", "fp8"}, context = {8192, 131072}, concurrency = {1, 4},
                        utilization = {0.8, 0.9}, vars = {row = {"r"}, fits = {"f"}, share = {1, 2}},
                        base = {activation = 0, overhead = 0}, columns = cols}:write(path)
  local seen, fits = 0, {}
  for i, row in ipairs(kv.csv.read(path)) do
    if i > 1 then
      check.eq(row[#names + 1], table.concat(row, "|", 1, #names), "row table of row " .. (i - 1))
      fits[row[9]] = true
      seen = seen + 1
    end
  end
  check.eq(seen, rows, "rows compared")
  assert(fits["true"] and fits["false"], "rows that fit and rows that do not")
end

-- a var of any name reaches the row (any string is a key of the row table)
kv.sweep{model = "llama-3.1-8b", gpu = "l4", vars = {['odd "name"\n'] = {7}},
         columns = {{"v", function(r) return r['odd "name"\n'] * 2 end}}}:write(path)
check.eq(check.slurp(path), "v\n14\n", "odd var name")

-- vars: the script's own axes, and the row's labels by name
kv.sweep{model = {"llama-3.1-8b", "qwen3-8b"}, gpu = "l4", context = {4096, 8192},
         vars = {share = {0.25, 0.5}},
         columns = {"model", "share", "context",
                    {"shared", function(r) return math.floor(r.context * r.share) end},
                    {"label", function(r) return r.model .. "@" .. r.gpu .. "/" .. r.kv end}}}:write(path)
local vrows = kv.csv.read(path)
check.eq(#vrows, 9, "vars rows")
check.eq(table.concat(vrows[4], ","), "llama-3.1-8b,0.5,4096,2048,llama-3.1-8b@l4/bf16", "vars row")
check.eq(table.concat(vrows[9], ","), "qwen3-8b,0.5,8192,4096,qwen3-8b@l4/bf16", "last vars row")
check.error("sweep var 'tp' has the name of an axis or option", kv.sweep,
            {model = "llama-3.1-8b", gpu = "l4", vars = {tp = {1}}, columns = {"fits"}})

-- errors name the axis, the column or the value
check.error("unknown sweep column 'max_conc' (did you mean 'max_concurrency'", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", columns = {"max_conc"}})
check.error("unknown sweep axis 'contxt' (did you mean 'context'", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", contxt = {1}, columns = {"fits"}})
check.error("field 'context' must be an integer >= 1, got 0", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", context = {8192, 0}, columns = {"fits"}})
check.error("sweep needs a 'gpu' axis", kv.sweep, {model = "llama-3.1-8b", columns = {"fits"}})
check.error("column 'fits' appears twice", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", columns = {"fits", "fits"}})
check.error("Lua column 'tp' has the name of a built-in column", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100", columns = {{"tp", function() return 1 end}}})
check.error("column 'bad' has no finite value (got nan)", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100",
           columns = {{"bad", function() return 0 / 0 end}}}:write(path)
end)
assert(check.slurp(path):find("^model,share,context,shared,label\n"), "a failed sweep leaves the old file")
check.error("column 'tbl' must be a number, string or boolean, got table", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {{"tbl", function() return {} end}}}:write(path)
end)
check.error("sweep filter: tests/lua/sweep_test.lua:", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100", filter = function(r) return r.nothing.x end,
           columns = {"fits"}}:write(path)
end)
check.error("cols: tests/lua/sweep_test.lua:", function()
  kv.sweep{model = "llama-3.1-8b", gpu = "h100", columns = {{"cols", function() error("no") end}}}:write(path)
end)

-- a Lua column's value as CSV text, whatever the row's path (the columns
-- built in C only, or with `why`, written field by field): integers, floats
-- (shortest exact form, or at a precision), booleans, strings
-- quoted when they hold a comma, a quote or a line break, long strings
do
  local long, longer = string.rep("x", 3000), string.rep("y,", 20000)
  local values = {7, 2.0, 1 / 3, true, false, "plain", 'a "q", b', "line\nbreak", long, longer}
  local want = {"7", "2", "0.3333333333333333", "true", "false", "plain", '"a ""q"", b"',
                '"line\nbreak"', long, '"' .. longer .. '"'}
  for _, extra in ipairs{{}, {"why"}} do
    local cols = {"concurrency"}
    for i = 1, #values do
      cols[#cols + 1] = {"v" .. i, function(r) if r.concurrency == 1 then return values[i] end return i end}
    end
    cols[#cols + 1] = {"p", function() return 2.0 end, precision = 3}
    for _, c in ipairs(extra) do cols[#cols + 1] = c end
    kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", concurrency = {1, 2}, columns = cols}:write(path)
    local text = check.slurp(path)
    local lines = {}
    for i = 2, #values + 1 do lines[#lines + 1] = tostring(i - 1) end
    local head = {"concurrency"}
    for i = 1, #values do head[#head + 1] = "v" .. i end
    head[#head + 1] = "p"
    for _, c in ipairs(extra) do head[#head + 1] = c end
    local first = table.concat(head, ",") .. "\n1," .. table.concat(want, ",") .. ",2.000"
    assert(text:sub(1, #first) == first, "Lua column texts" .. (extra[1] and " with why" or ""))
    local second = "\n2," .. table.concat(lines, ",") .. ",2.000"
    assert(text:find(second, #first, true), "Lua column texts, second row")
  end
end

-- the deployments built in Lua are built when their rows start and dropped
-- once they are written: while a row is written, the only one alive is the
-- row's own (a weak table sees the others collected); with the GPU's memory
-- as a C axis outside the optim axis, the bases of one GPU are kept while
-- its rows are written, no longer
do
  local deploy = require "kvplan.deploy"
  local made, alive = 0, setmetatable({}, {__mode = "k"})
  local new = deploy.new
  deploy.new = function(opts)
    local d = new(opts)
    made = made + 1
    alive[d] = true
    return d
  end
  local function live()
    collectgarbage()
    collectgarbage()
    local n = 0
    for _ in pairs(alive) do n = n + 1 end
    return n
  end
  local most, calls = 0, 0
  local ok, err = pcall(function()
    local s = kv.sweep{model = {"llama-3.1-8b", "gemma-2-9b", "qwen2.5-7b", "llama-3.1-70b"}, gpu = "h100-sxm",
                       concurrency = {1, 2},
                       columns = {"model", "concurrency", {"live", function()
                         calls = calls + 1
                         local n = live()
                         if n > most then most = n end
                         return n
                       end}}}
    check.eq(made, 1, "kv.sweep builds the first deployment only (its check)")
    s:write(path)
    check.eq(made, 4, "each deployment built once, when its rows start (the first kept from the check)")
    check.eq(calls, 8, "the column saw every row")
    check.eq(most, 1, "one deployment alive while a row is written")
    made, most = 0, 0
    s = kv.sweep{model = {"llama-3.1-8b", "gemma-2-9b"}, gpu = {"h100-sxm", "l4"},
                 optim = {o.none, o.kv_quant "fp8"}, base = {activation = 0, overhead = "1 GiB"},
                 columns = {"model", "gpu", "optim", {"live", function()
                   local n = live()
                   if n > most then most = n end
                   return n
                 end}}}
    s:write(path)
    -- the optim axis is looped in C (built-ins of a fixed effect): each
    -- combination resolved once on the first base (none needs nothing), each
    -- model built once without it, one alive at a time
    check.eq(made, 3, "one combination resolved, two models built")
    check.eq(most, 1, "one base alive")
    made, most = 0, 0
    s = kv.sweep{model = {"llama-3.1-8b", "gemma-2-9b"}, gpu = {"h100-sxm", "l4"},
                 optim = {o.none, o.budget "sglang"}, utilization = 0.9,
                 base = {activation = 0, overhead = "1 GiB"},
                 columns = {"model", "gpu", "optim", {"live", function()
                   local n = live()
                   if n > most then most = n end
                   return n
                 end}}}
    s:write(path)
    -- a budget rule is built in Lua with each deployment; the GPU axis is
    -- looped in C outside the optim axis: a model's two combinations are
    -- built once, kept for its two GPUs, then dropped
    check.eq(made, 4, "each deployment built once")
    check.eq(most, 2, "the bases of one model alive, no others")
  end)
  deploy.new = new
  if not ok then error(err, 0) end
end

-- An optim axis over built-ins of a fixed effect is looped in C: each
-- combination resolved once, the base deployments built without it. Its
-- rows are byte for byte those of the same combinations built in Lua with
-- each deployment (the same optimizations copied into user-defined ones,
-- which the sweep cannot apply in C), and each row is what kv.deploy gives.
do
  local deploy = require "kvplan.deploy"
  local lengths = kv.workload.lognormal{median = 3000, sigma = 0.7}
  local members = {o.kv_quant "fp8", o.paged{block = 32}, o.contiguous{},
                   o.kivi{bits = 2, group = 32, recent = 128, full = "bf16"},
                   o.streaming{sinks = 4, recent = 1024}, o.h2o{keep = 0.25, recent = 64},
                   o.prefix{tokens = 512}, o.parallel_sampling{n = 3, output = 256},
                   o.continuous{lengths = lengths},
                   o.speculative{draft = "llama-3.2-1b", tokens = 3, acceptance = 0.6},
                   o.speculative{tokens = 2, acceptance = 0.5}}
  local combos = {o.none}
  for _, m in ipairs(members) do combos[#combos + 1] = m end
  -- pairs across slots, in both orders of listing, and a triple
  combos[#combos + 1] = {o.contiguous{}, o.kv_quant "fp8"}
  combos[#combos + 1] = {o.h2o{keep = 0.25, recent = 64}, o.prefix{tokens = 512}, o.paged{block = 32}}
  combos[#combos + 1] = {o.streaming{sinks = 4, recent = 1024}, o.kivi{bits = 2, full = "fp8"},
                         o.continuous{lengths = lengths}}
  local function copy_of(c) -- the same members as optimizations of one's own
    local ms = {}
    for i, m in ipairs(o.combine(c).members) do
      local t = {}
      for k, v in pairs(m) do t[k] = v end
      ms[i] = o.define(t)
    end
    return o.combine(ms)
  end
  local copies = {}
  for i, c in ipairs(combos) do
    check.eq(o.core_fields(c) ~= nil, true, "built-in combination " .. o.name(c))
    copies[i] = copy_of(c)
    if i > 1 then check.eq(o.core_fields(copies[i]), nil, "one's own optimization is not applied in C") end
  end
  local cols = {"model", "gpu", "optim", "kv", "tp", "max_model_len", "context", "concurrency",
                "kv_budget_bytes", "kv_bytes_per_token", "seq_bytes", "kv_blocks", "kv_tokens",
                "max_concurrency", "max_context", "fits", "why", "spec_tokens_per_step",
                "mean_length", {"kv_seen", function(r) return r.kv .. "/" .. r.optim end}}
  local function sweep(list, columns)
    return kv.sweep{model = {"gemma-3-27b", "gpt-oss-20b", "deepseek-v2-lite", "llama-3.1-8b"},
                    gpu = {"h100-sxm", "a100-sxm-80gb"}, optim = list, tp = {1, 2},
                    max_model_len = {8192, 32768}, context = {2048, 8192}, concurrency = {1, 13},
                    base = {activation = "1 GiB", overhead = "1 GiB", utilization = 0.9},
                    columns = columns or cols}
  end
  local made = 0
  local new = deploy.new
  deploy.new = function(opts)
    made = made + 1
    return new(opts)
  end
  local ok, err = pcall(function()
    local c_path, lua_path = dir .. "/optim_c.csv", dir .. "/optim_lua.csv"
    -- built-in columns only: a combination resolved once, a model built once
    -- (the optimizations' own columns build the row's deployment in Lua)
    made = 0
    local sc = sweep(combos, {"model", "gpu", "optim", "kv", "tp", "context", "max_concurrency"})
    -- one base a model (vLLM's MXFP4 experts of gpt-oss, padded by tp, are
    -- repacked per tp in C; the H100 and the A100 take the same kernel,
    -- Marlin, so the GPU stays a C axis too)
    check.eq(sc.nbase, 4, "the optim axis in C: one base a model")
    sc:write(c_path)
    check.eq(made, 4 + #combos - 1, "no deployment built per combination and base")
    sc = sweep(combos)
    sc:write(c_path)
    local sl = sweep(copies)
    check.eq(sl.nbase, 4 * #combos, "combinations of one's own: a base each")
    sl:write(lua_path)
    local a, b = assert(io.open(c_path, "rb")), assert(io.open(lua_path, "rb"))
    local ta, tb = a:read("a"), b:read("a")
    a:close()
    b:close()
    check.eq(#ta > 0 and ta == tb, true, "the C optim axis writes the Lua path's bytes")
    local rows = kv.csv.read(c_path)
    check.eq(#rows, sc:count() + 1, "every row")
    local byname = {}
    for _, c in ipairs(combos) do byname[o.name(c)] = c end
    for i = 2, #rows, 3 do
      local r = rows[i]
      local d = kv.deploy{model = r[1], gpu = r[2], optim = byname[r[3]], tp = tonumber(r[5]),
                          max_model_len = tonumber(r[6]), activation = "1 GiB",
                          overhead = "1 GiB", utilization = 0.9}
      local l = d:ledger()
      local ctx, conc = tonumber(r[7]), tonumber(r[8])
      check.eq(r[4], d.kv.name, "kv row " .. i)
      check.eq(tonumber(r[9]), l.kv_budget, "kv_budget_bytes row " .. i)
      check.eq(tonumber(r[13]), l.kv_tokens, "kv_tokens row " .. i)
      check.eq(tonumber(r[14]), (l:max_concurrency(ctx)), "max_concurrency row " .. i)
      check.eq(tonumber(r[15]), (l:max_context(conc)), "max_context row " .. i)
      check.eq(r[16], tostring((l:fit(ctx, conc))), "fits row " .. i)
      check.eq(r[20], d.kv.name .. "/" .. r[3], "the row Lua sees row " .. i)
    end
    -- a mixed axis: budget rules and an optimization of one's own beside
    -- them keep the axis in Lua, but each fixed combination's base is the
    -- plain deployment with the combination written over it in C: kv.deploy
    -- runs once a plain base and once a base of the other combinations
    local own = o.define{name = "own-prefix", phase = "sharing",
                         apply = function(opts) opts.prefix = 256 return opts end}
    local mixed = {}
    for _, c in ipairs(combos) do mixed[#mixed + 1] = c end
    mixed[#mixed + 1] = o.budget "sglang"
    mixed[#mixed + 1] = {o.budget "trtllm", o.kv_quant "fp8"}
    mixed[#mixed + 1] = {own, o.contiguous{}}
    local mixed_copies = {}
    for i, c in ipairs(mixed) do mixed_copies[i] = copy_of(c) end
    made = 0
    local sm = sweep(mixed, {"model", "gpu", "optim", "kv", "tp", "context", "max_concurrency"})
    sm:write(c_path)
    local nb = sm.nbase // #mixed -- the other axes' positions (tp in Lua with SGLang's rule)
    check.eq(made, nb + 3 * nb + #combos - 1, "plain bases, other combinations, resolutions")
    sweep(mixed):write(c_path)
    sweep(mixed_copies):write(lua_path)
    a, b = assert(io.open(c_path, "rb")), assert(io.open(lua_path, "rb"))
    ta, tb = a:read("a"), b:read("a")
    a:close()
    b:close()
    check.eq(#ta > 0 and ta == tb, true, "a mixed optim axis writes the Lua path's bytes")
  end)
  deploy.new = new
  if not ok then error(err, 0) end
  os.remove(dir .. "/optim_c.csv")
  os.remove(dir .. "/optim_lua.csv")
end

-- s:each: the rows to a function, nothing written; filters apply; why is the
-- why column's text (need and have evaluated: no why column asked for)
do
  local se = kv.sweep{model = "llama-3.1-8b", gpu = {"l4", "h100-sxm"}, tp = {1, 2},
                      context = {2048, 65536}, concurrency = {1, 64},
                      columns = {"gpu", "tp", "context", "concurrency", "weights_bytes",
                                 "kv_budget_bytes", "max_concurrency", "fits", "limit", "why"}}
  se:write(path)
  local want = kv.csv.read(path)
  local i = 1
  check.eq(se:each(function(r)
    i = i + 1
    local w = want[i]
    local got = {r.gpu, r.tp, r.context, r.concurrency, r.weights_bytes, r.kv_budget_bytes,
                 r.max_concurrency, tostring(r.fits), r.limit, r.why}
    for j = 1, #w do check.eq(tostring(got[j]), w[j], "each: row " .. i .. " column " .. j) end
  end), 16, "each: 16 rows")
  check.eq(i, 17, "each: every row, in order")
  local kv_rows = 0
  check.eq(kv.sweep{model = "llama-3.1-8b", gpu = {"l4", "h100-sxm"}, tp = {1, 2},
                    context = {2048, 65536}, concurrency = {1, 64}, columns = {"fits"},
                    filter = {limit = "kv"}}:each(function(r)
    kv_rows = kv_rows + 1
    check.eq(r.why:find("^KV for %d+ x %d+ tokens needs [0-9.]+ GiB per GPU, [0-9.]+ GiB left") ~= nil, true, r.why)
  end), kv_rows, "each: the rows the filter keeps")
  check.eq(kv_rows > 0, true, "each: some rows fail on their KV")
  check.eq(se:each(function() end), 16, "each: a function's result is ignored")
  -- max_concurrency's limit and why, as l:max_concurrency: the KV cache, vLLM's
  -- max_num_seqs (256 of 1755 on the L4 at 16 tokens), the refusal to start
  local seen = {}
  kv.sweep{model = "llama-3.1-8b", gpu = {"l4", "h100-sxm"}, engine = "vllm",
           max_model_len = {8192, 131072}, context = {16, 8192, 200000},
           columns = {"fits"}}:each(function(r)
    local d = kv.deploy{model = "llama-3.1-8b", gpu = r.gpu, engine = "vllm", max_model_len = r.max_model_len}
    local n, why, limit = d:ledger():max_concurrency(r.context)
    check.eq(r.max_concurrency, n, "each: max_concurrency")
    check.eq(r.max_concurrency_limit, limit, "each: max_concurrency_limit")
    check.eq(r.max_concurrency_why, why, "each: max_concurrency_why")
    seen[limit] = true
  end)
  for _, k in ipairs{"none", "max_num_seqs", "starts", "context"} do
    check.eq(seen[k], true, "each: a row of max_concurrency limit " .. k)
  end
  check.error("sweep each needs a function, got nil", function() se:each() end)
  check.error("sweep each: ", function() se:each(function() error("stop") end) end)
end

-- an HTML page's chart of a sweep (s:write{chart = ...}): drawn from the rows
-- the filters keep, through data(row); a chart's data that is no function,
-- or a chart with an output, is an error naming the field
do
  local sc = kv.sweep{model = "llama-3.1-8b", gpu = {"l4", "h100"}, tp = {1, 2}, context = 8192,
                      columns = {"gpu", "tp", "max_concurrency"}}
  check.error("field 'chart' item 1: a sweep's chart takes 'data' as a function of a row", function()
    sc:write(dir .. "/c.html", {chart = {x = "gpu", y = "max_concurrency", data = {}}})
  end)
  check.error("field 'chart' item 1: a report's chart is drawn into its page: no 'output'", function()
    sc:write(dir .. "/c.html", {chart = {x = "gpu", y = "max_concurrency", output = "x.png"}})
  end)
  local seen = 0
  local charts = sc:charts({x = "gpu", by = "tp", y = "max_concurrency", kind = "bar", title = "held",
                            data = function(r) seen = seen + 1; return {gpu = r.gpu, tp = "tp " .. r.tp,
                                                                        max_concurrency = r.max_concurrency} end},
                           dir .. "/c.html")
  check.eq(seen, 4, "data sees every row")
  check.eq(#charts, 1, "one chart")
  check.eq(charts[1].title, "held", "its title")
  local gp = io.open("/usr/bin/gnuplot") -- drawn when gnuplot is there, else the note says why
  if gp then gp:close(); assert(charts[1].svg and charts[1].svg:find("<svg", 1, true), charts[1].note) end
  check.eq(sc:charts({x = "gpu", y = "max_concurrency"}, nil, {1, 2})[1].note,
           "a shard of the sweep (--shard): the chart is the whole sweep's", "a shard's note")
  sc:write(dir .. "/c.html", {chart = {x = "gpu", y = "max_concurrency", kind = "bar", title = "held"}})
  local page = check.slurp(dir .. "/c.html")
  assert(page:find("<figcaption>held</figcaption>", 1, true), "the page's chart caption")
  os.remove(dir .. "/c.html")
end

-- One plain weight format for a whole deployment counts its bits a matrix
-- and an input column over every linear layer, as a checkpoint's config
-- does by class (kvp_deploy_weight_bytes, models.lua weight_size).
-- Llama-3.1-8B: 32 x (4 + 3) matrices + lm_head = 225; input columns 32 x
-- ((4096 + 32 x 128) + (4096 + 14336)) + 4096 = 856064. NVFP4: 225 x 64
-- bits = 1800 bytes beside the elements; int4-g128-act: 856064 x 64 bits
-- = 6848512 bytes. The sweep's weights axis gives the same bytes
do
  local m = kv.model("llama-3.1-8b")
  check.eq(select(1, m:linear_shapes()) .. "/" .. select(2, m:linear_shapes()), "225/856064",
           "Llama-3.1-8B's linear layers")
  local function total(w)
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = w}:ledger().weights_total
  end
  local nv, act = kv.formats.get("nvfp4"), kv.formats.get("int4-g128-act")
  check.eq(total("nvfp4"), kv.formats.bytes(nv, m.params) + 1800, "NVFP4: 64 bits a matrix")
  check.eq(total("int4-g128-act"), kv.formats.bytes(act, m.params) + 6848512,
           "act order: 64 bits an input column")
  check.eq(m:weight_size("nvfp4"), total("nvfp4"), "weight_size = the ledger's")
  kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", weights = {"bf16", "nvfp4", "int4-g128-act"},
           columns = {"weights", "weights_bytes"}}:write(path)
  rows = kv.csv.read(path)
  for i = 2, 4 do
    -- a GPU's weights: the checkpoint's and vLLM's rotary cache (engines.vllm_rotary)
    check.eq(tonumber(rows[i][2]), total(rows[i][1]) + 131072 * 128 * 2,
             "sweep weights_bytes of " .. rows[i][1])
  end
end

os.remove(path)
os.remove(dir)

-- a Lua column, filter or each raising no string says what it raised
-- ("x: (null)", "sweep filter: (null)" before)
do
  local function sw(t) t.model, t.gpu, t.context = "llama-3.1-8b", "l4", {1000}; return kv.sweep(t) end
  local null = os.tmpname()
  check.error("x: (error object is a table value)", function()
    sw{columns = {"context", {"x", function() error({}) end}}}:write(null) end)
  check.error("sweep filter: (error object is a nil value)", function()
    sw{columns = {"context"}, filter = function() error(nil) end}:write(null) end)
  check.error("sweep each: custom", function()
    sw{columns = {"context"}}:each(function() error(setmetatable({}, {__tostring = function() return "custom" end})) end)
  end)
  os.remove(null)
end

-- a weights axis weighs the weights every TP rank holds whole (the core's
-- kvp_replicated) in its format, as kv.deploy does: DeepSeek-V3's MLA
-- down-projections, routers and norms in bf16 or fp8, not the checkpoint's
do
  local sw = kv.sweep{model = "deepseek-v3", gpu = "h200", tp = {1, 8}, weights = {"bf16", "fp8"},
                      columns = {"tp", "weights", "weights_bytes_per_gpu"}}
  local p = os.tmpname()
  sw:write(p)
  for i, r in ipairs(kv.csv.read(p)) do
    if i > 1 then
      local dl = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = tonumber(r[1]),
                           weights = r[2]}:ledger()
      check.eq(tonumber(r[3]), dl.weights - dl.lora, "weights axis row " .. i .. " (" .. r[2] .. ")")
    end
  end
  os.remove(p)
end
