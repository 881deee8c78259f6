-- tests/lua/report_test.lua: CSV reports: quoting, numbers, atomic files.
local kv = require "kvplan"
local check = require "check"

local dir = check.tmpdir()
local path = dir .. "/r.csv"
local r = kv.report{columns = {"name", "n", {"x", precision = 3}, "y", "ok"}, path = path}
r:row{name = "a,b", n = 42, x = 2.5, y = 0.1, ok = true}
r:row{name = 'say "hi"', n = -1, x = 1 / 3, y = 1 / 3, ok = false}
assert(io.open(path) == nil, "the file must not exist before close")
r:close()
check.eq(check.slurp(path), 'name,n,x,y,ok\n"a,b",42,2.500,0.1,true\n' ..
         '"say ""hi""",-1,0.333,0.3333333333333333,false\n', "csv text")

-- no NaN, no missing or unknown column; a failed report leaves no file
local bad = kv.report{columns = {"v"}, path = dir .. "/bad.csv"}
check.error("column 'v' has no finite value (got nan)", function() bad:row{v = 0/0} end)
check.error("row has no value for column 'v'", function() bad:row{} end)
check.error("unknown column 'w'", function() bad:row{w = 1} end)
bad:discard()
assert(io.open(dir .. "/bad.csv") == nil, "a discarded report leaves no file")
check.error("column 'x' appears twice", kv.report, {columns = {"x", "x"}})
check.error("field 'columns' must be a non-empty list", kv.report, {columns = {}})

-- ledger rows are deterministic
local d = kv.deploy{model = "llama-3.1-8b", gpu = "l4", kv = "fp8"}
local a, b = kv.report.ledger_row(d, 8192, 4), kv.report.ledger_row(d, 8192, 4)
for k, v in pairs(a) do check.eq(b[k], v, k) end

os.remove(path)
os.remove(dir)

-- the CSV reader: rows and the line each starts on, quoted line breaks included
local dir2 = check.tmpdir()
local f = assert(io.open(dir2 .. "/q.csv", "wb"))
f:write('a,b\n1,2\n"x\ny",3\n4,"5"\n')
f:close()
local rows, lines = kv.csv.read(dir2 .. "/q.csv")
check.eq(#rows, 4, "rows")
check.eq(rows[3][1], "x\ny", "quoted line break")
check.eq(lines[3], 3, "a row starts on its first line")
check.eq(lines[4], 5, "the next row after a two-line row")
check.eq(rows[4][2], "5", "quoted field")
local none, msg = kv.csv.read(dir2 .. "/missing.csv")
check.eq(none, nil, "missing file")
assert(msg:find("cannot open '.*missing.csv'"), msg)
-- csv.read(path, text): the text parsed, named path (standard input read
-- whole already): the same rows and lines as the file; no file is opened
local trows, tlines = kv.csv.read(dir2 .. "/missing.csv", 'a,b\n1,2\n"x\ny",3\n4,"5"\n')
check.eq(#trows, 4, "rows of a text")
check.eq(trows[3][1], "x\ny", "quoted line break of a text")
check.eq(tlines[4], 5, "a text's rows know their lines")
check.error("standard input:3: malformed CSV", function() kv.csv.read("-", 'a,b\n"x,1\n') end)
os.remove(dir2 .. "/q.csv")
os.remove(dir2)

-- where a report goes, for text written beside it (kvplan best's lines under
-- its table): a .txt file is a table, not standard output, never fitted
do
  local f, stdout, width = kv.report.destination{path = "x.txt"}
  assert(f == "table" and stdout == false and width == nil, "destination of x.txt")
  f, stdout = kv.report.destination{format = "json"}
  assert(f == "json" and stdout == true, "destination of -f json")
  -- and a line cut to a terminal's columns, UTF-8 characters counted
  assert(kv.util.cut("abcdef", 4) == "abc\u{2026}", "cut")
  assert(kv.util.cut("ab\u{2026}d", 4) == "ab\u{2026}d", "a line that fits")
  assert(kv.util.cut("abcdef", nil) == "abcdef", "no width")
end

-- HTML pages: every column, units from the column registry, each string
-- from data escaped, charts from the rows, the same bytes twice, nothing
-- left by a report that fails
local dir3 = check.tmpdir()
local function html_report(p, chart)
  local r = kv.report{columns = {"gpu", {"kv_budget_gib_per_gpu", precision = 2}, "tp", "context",
                                 {"v", unit = "widgets"}, "why"},
                      path = p, title = "budgets & <more>", chart = chart}
  r:row{gpu = "<script>alert(1)</script>", kv_budget_gib_per_gpu = 51.41, tp = 1, context = 8192, v = 3,
        why = "a \"quoted\" 'reason'"}
  r:row{gpu = "l4", kv_budget_gib_per_gpu = 3.5, tp = 2, context = 8192, v = 4, why = ""}
  r:close()
  return check.slurp(p)
end
local chart = {x = "gpu", y = "v", kind = "bar", title = "v by gpu"}
local page = html_report(dir3 .. "/a.html", chart)
check.eq(select(2, page:gsub("<tr><td", "")), 2, "one table row a report row")
assert(page:find("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>", 1, true), "a cell is escaped")
assert(not page:find("<script>alert", 1, true), "no script from data")
assert(page:find("<td class=\"w\">a &quot;quoted&quot; &#39;reason&#39;</td>", 1, true) or
       page:find("<td>a &quot;quoted&quot; &#39;reason&#39;</td>", 1, true), "quotes escaped")
assert(page:find("<title>budgets &amp; &lt;more&gt;</title>", 1, true), "the title, escaped")
for _, h in ipairs{"kv_budget_gib_per_gpu <span class=\"unit\">(GiB)</span>", "tp <span class=\"unit\">(GPUs)</span>",
                   "context <span class=\"unit\">(tokens)</span>", "v <span class=\"unit\">(widgets)</span>",
                   ">gpu</th>", ">why</th>"} do
  assert(page:find(h, 1, true), "header " .. h)
end
assert(page:find("<td class=\"n\">51.41</td>", 1, true), "numbers as the CSV writes them")
assert(page:find("Written by kvplan " .. kv.version, 1, true), "kvplan's version")
assert(page:find("<figcaption>v by gpu</figcaption>", 1, true), "the chart's title")
local drawn = page:find("<svg", 1, true) ~= nil
local said = page:find("<p class=\"note\">No chart: gnuplot is not installed", 1, true) ~= nil
assert(drawn ~= said, "the chart is drawn, or the page says gnuplot is missing")
check.eq(html_report(dir3 .. "/b.html", chart), page, "the same bytes twice")
check.eq(kv.report.column_unit("ttft_ms_p90"), "ms", "a time column")
check.eq(kv.report.column_unit("weights_gib_per_gpu"), "GiB", "a GiB column")
check.eq(kv.report.column_unit("max_model_len"), "tokens", "a field's unit (fields.lua)")
check.eq(kv.report.column_unit("gpu"), nil, "no unit")
check.eq((kv.csv.format_of(dir3 .. "/x.html")), "html", "html by the file name")
-- a chart it cannot draw is said on the page, the table written
local p2 = html_report(dir3 .. "/c.html", {x = "gpu", y = "why", kind = "bar"})
assert(p2:find("<p class=\"note\">No chart: ", 1, true) and p2:find("not a number", 1, true), "a chart's error on the page")
check.error("field 'chart' item 1: a report's chart is drawn into its page: no 'output'",
            kv.report, {columns = {"a"}, chart = {x = "a", y = "a", output = "x.png"}})
check.error("field 'chart' item 1 needs 'y'", kv.report, {columns = {"a"}, chart = {x = "a"}})
-- an error before close: no page, no temporary
local bad3 = kv.report{columns = {"v"}, path = dir3 .. "/bad.html"}
bad3:row{v = 1}
check.error("column 'v' has no finite value", function() bad3:row{v = 0 / 0} end)
bad3:discard()
assert(io.open(dir3 .. "/bad.html") == nil, "a failed HTML report leaves no file")
for _, n in ipairs{"a", "b", "c"} do os.remove(dir3 .. "/" .. n .. ".html") end
os.remove(dir3)

-- ledger_items past 64 bits (hostile input, docs/reliability.md 2026-12-03):
-- own * concurrency wrapped in Lua's integers, so 10^15 requests of 1024
-- tokens read kv_used 0.00 and kv_short 0.00 GiB; a request of 10^18 tokens
-- was "request_bytes: arithmetic overflow: a count exceeds 64 bits"
do
  local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}
  local l = d:ledger()
  local by = {}
  for _, it in ipairs(kv.report.ledger_items(d, 1024, 10^15 // 1)) do by[it.item] = it end
  check.eq(by.kv_used.bytes, l.kv_budget, "kv_used past 2^63 bytes: the whole KV budget")
  assert(by.kv_short.bytes > 2^63, "kv_short past 2^63 bytes: " .. tostring(by.kv_short.bytes))
  assert(by.kv_short.bytes == by.kv_short.bytes and by.kv_short.bytes < math.huge, "kv_short finite")
  check.error("request_bytes: arithmetic overflow past 2^63: the KV of one request of "
              .. "1000000000000000000 tokens exceeds 64 bits", kv.report.ledger_items, d, 10^18 // 1, 1)
  check.error("request_bytes: arithmetic overflow past 2^63: the KV of one request of "
              .. "1000000000000000000 tokens exceeds 64 bits", l.request_bytes, l, 10^18 // 1)
  -- samples multiply a request's own KV: named, as fit's and max_concurrency's
  -- overflow ("fit: arithmetic overflow: a count exceeds 64 bits" before)
  local ls = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", samples = 10^18 // 1}:ledger()
  for _, q in ipairs{function() return ls:request_bytes(100) end, function() return ls:fit(100, 1) end,
                     function() return ls:max_concurrency(100) end} do
    check.error("arithmetic overflow past 2^63: caused by field 'samples' = 1000000000000000000 "
                .. "(too large to count in 64 bits)", q)
  end
end
