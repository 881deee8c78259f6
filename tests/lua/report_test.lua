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
