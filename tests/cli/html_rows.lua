-- tests/cli/html_rows.lua: a CSV's rows as a report (csv=FILE), charted as
-- bars of column n by column gpu: hostile cells reach the page and its
-- chart as text (tests/run_html.sh)
local kv = require "kvplan"
local o = kv.options(..., {csv = "tests/fixtures/html/hostile.csv"})
local rows = assert(kv.csv.read(o.csv))
local r = kv.report{columns = rows[1], chart = {x = "gpu", y = "n", kind = "bar", title = "n by gpu"}}
for i = 2, #rows do
  local t = {}
  for j, name in ipairs(rows[1]) do t[name] = rows[i][j] end
  r:row(t)
end
r:close()
