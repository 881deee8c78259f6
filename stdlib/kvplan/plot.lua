-- stdlib/kvplan/plot.lua: charts of reports, kv.plot{...} and `kvplan plot`.
-- Stdlib layer: the chart is drawn by gnuplot (Debian gnuplot-nox), run as
-- a separate program; kvplan only writes its script and data.
--
--   kv.plot{data = "capacity.csv", x = "context", y = "max_concurrency", by = "gpu",
--           kind = "line", output = "capacity.png"}
--   kvplan plot capacity.csv x=context y=max_concurrency by=gpu -o capacity.png
--
-- Fields:
--   data     a CSV report's path, or a list of rows (tables keyed by column)
--   x, y     column names; `by` (optional) makes one series per value
--   kind     line (x numeric, one line per series, points in data order
--            sorted by x), bar (x categories, one bar per series side by
--            side) or stacked (x categories, the series stacked: the ledger
--            of each deployment, by=item)
--   output   the chart: *.png (cairo, exactly width x height pixels) or *.svg
--   width, height  pixels (default 800 x 500); title, xlabel, ylabel
--   logx, logy     logarithmic axes (true/false)
--   order    series names to put first, in this order (stacking order)
-- Series keep the order of their first row; missing y values are gaps in
-- a line and zero in bars. The chart is written beside `output` and renamed
-- into place, so a failed run leaves no partial file.

local util = require "kvplan.util"

local M = {}

local fields = {
  data = true, x = true, y = true, by = true, kind = true, output = true, width = true,
  height = true, title = true, xlabel = true, ylabel = true, logx = true, logy = true,
  order = true,
}

-- A gnuplot single-quoted string ('' is a quote inside).
local function q(s) return "'" .. tostring(s):gsub("'", "''") .. "'" end
-- A shell single-quoted word.
local function sh(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end
-- A data cell: no tabs or line breaks.
local function cell(s) return (tostring(s):gsub("[\t\r\n]", " ")) end

-- Rows as tables keyed by column, from a CSV path or a list.
local function load(data)
  if type(data) == "table" then return data, "rows" end
  if type(data) ~= "string" then
    util.raise("field 'data' must be a CSV path or a list of rows, got %s", type(data))
  end
  local rows, lines = require("kvplan.csv").read(data)
  if rows == nil then util.raise("%s", lines) end
  if #rows == 0 then util.raise("'%s' is empty (expected a header row)", data) end
  local out, header = {}, rows[1]
  for i = 2, #rows do
    local t = {}
    for j, name in ipairs(header) do t[name] = rows[i][j] end
    t["(line)"] = lines[i]
    out[#out + 1] = t
  end
  return out, data, header
end

local function number(v, col, row, where)
  if v == nil or v == "" then return nil end
  local x = tonumber(v)
  if x == nil or x ~= x or x == math.huge or x == -math.huge then
    util.raise("%s%s: column '%s' holds '%s', not a number", where,
               row["(line)"] and (":" .. row["(line)"]) or "", col, tostring(v))
  end
  return x
end

--- Draw a chart (see the module comment); returns the output path.
function M.plot(spec)
  if type(spec) ~= "table" then util.raise("plot needs a table, got %s", type(spec)) end
  util.check_keys(spec, fields, "plot")
  for _, f in ipairs{"data", "x", "y", "output"} do
    if spec[f] == nil then util.raise("plot needs '%s'", f) end
  end
  local kind = spec.kind or "line"
  if kind ~= "line" and kind ~= "bar" and kind ~= "stacked" then
    util.raise("field 'kind' must be line, bar or stacked, got '%s'", tostring(kind))
  end
  local out = spec.output
  if type(out) ~= "string" then util.raise("field 'output' must be a path, got %s", type(out)) end
  local ext = out:match("%.(%w+)$")
  ext = ext and ext:lower()
  if ext ~= "png" and ext ~= "svg" then
    util.raise("field 'output' must name a .png or .svg file, got '%s'", out)
  end
  local width = util.count(spec.width or 800, "width", 16)
  local height = util.count(spec.height or 500, "height", 16)
  local rows, where, header = load(spec.data)
  if #rows == 0 then util.raise("%s has no rows to plot", where) end
  local cols = {}
  if header then for _, c in ipairs(header) do cols[#cols + 1] = c end
  else for k in pairs(rows[1]) do cols[#cols + 1] = k end table.sort(cols) end
  local have = {}
  for _, c in ipairs(cols) do have[c] = true end
  for _, f in ipairs{"x", "y", "by"} do
    local c = spec[f]
    if c ~= nil and not have[c] and header then
      util.raise("%s has no column '%s'%s", where, tostring(c), util.suggest(tostring(c), cols))
    end
  end

  -- series in order of first appearance
  local series, order = {}, {}
  local xs, xorder = {}, {}
  for _, r in ipairs(rows) do
    local s = spec.by and cell(r[spec.by] or "") or spec.y
    if series[s] == nil then series[s] = {}; order[#order + 1] = s end
    local y = number(r[spec.y], spec.y, r, where)
    if kind == "line" then
      local x = number(r[spec.x], spec.x, r, where)
      if x ~= nil then series[s][#series[s] + 1] = {x, y} end
    else
      local x = cell(r[spec.x] or "")
      if xs[x] == nil then xs[x] = true; xorder[#xorder + 1] = x end
      series[s][x] = (series[s][x] or 0) + (y or 0)
    end
  end

  if spec.order ~= nil then
    if type(spec.order) ~= "table" then util.raise("field 'order' must be a list of series names") end
    local first, seen = {}, {}
    for _, s in ipairs(spec.order) do
      if series[s] ~= nil and not seen[s] then first[#first + 1], seen[s] = s, true end
    end
    for _, s in ipairs(order) do if not seen[s] then first[#first + 1] = s end end
    order = first
  end

  local g = {}
  local function add(...) g[#g + 1] = string.format(...) end
  -- gnuplot writes the atomic writer's temporary (a unique mkstemp name
  -- beside out, removed on error or signal), which is then renamed over out
  local file <close> = require("kvplan.csv").atomic(out)
  local tmp = file:temp()
  if ext == "png" then
    add("set terminal pngcairo noenhanced size %d,%d", width, height)
  else
    add("set terminal svg noenhanced size %d,%d", width, height)
  end
  add("set output %s", q(tmp))
  add("set datafile separator '\\t'")
  add("set datafile missing '?'")
  add("set title %s", q(spec.title or (spec.y .. (spec.by and (" by " .. spec.by) or "") .. " against " .. spec.x)))
  add("set xlabel %s", q(spec.xlabel or spec.x))
  add("set ylabel %s", q(spec.ylabel or spec.y))
  add("set grid")
  if kind == "line" then add("set autoscale xfix") end
  add("set key outside right top")
  if spec.logx then add("set logscale x") end
  if spec.logy then add("set logscale y") end
  if kind == "line" then
    local plots = {}
    for i, s in ipairs(order) do
      local pts = series[s]
      table.sort(pts, function(a, b) return a[1] < b[1] end)
      add("$d%d << EOD", i)
      for _, p in ipairs(pts) do
        add("%s\t%s", string.format("%.17g", p[1]), p[2] and string.format("%.17g", p[2]) or "?")
      end
      add("EOD")
      plots[#plots + 1] = string.format("$d%d using 1:2 with linespoints title %s", i, q(s))
    end
    add("plot %s", table.concat(plots, ", "))
  else
    add("set style data histograms")
    add(kind == "stacked" and "set style histogram rowstacked" or "set style histogram clustered gap 1")
    add("set style fill solid 0.85 border -1")
    add("set boxwidth 0.75")
    local top = 0
    for _, x in ipairs(xorder) do
      local sum, most = 0, 0
      for _, s in ipairs(order) do
        local v = series[s][x] or 0
        sum, most = sum + math.max(v, 0), math.max(most, v)
      end
      top = math.max(top, kind == "stacked" and sum or most)
    end
    add("set yrange [0:%.17g]", top > 0 and top * 1.08 or 1)
    add("set xtics rotate by -25 scale 0")
    add("$d << EOD")
    local head = {"x"}
    for _, s in ipairs(order) do head[#head + 1] = s end
    add("%s", table.concat(head, "\t"))
    for _, x in ipairs(xorder) do
      local line = {x}
      for _, s in ipairs(order) do line[#line + 1] = string.format("%.17g", series[s][x] or 0) end
      add("%s", table.concat(line, "\t"))
    end
    add("EOD")
    add("plot for [i=2:%d] $d using i:xtic(1) title columnheader(i)", #order + 1)
  end
  add("set output")

  if type(io.popen) ~= "function" or type(os.tmpname) ~= "function" then
    util.raise("cannot draw '%s': charts run gnuplot, a separate program, which --sandbox forbids", out)
  end
  local errf = os.tmpname()
  local p = io.popen("gnuplot 2> " .. sh(errf), "w")
  if p == nil then util.raise("cannot run gnuplot") end
  p:write(table.concat(g, "\n"), "\n")
  local ok, _, code = p:close()
  local f = io.open(errf, "r")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(errf)
  if not ok then
    if code == 127 then
      util.raise("cannot draw '%s': gnuplot is not installed (Debian: apt-get install gnuplot-nox)", out)
    end
    util.raise("cannot draw '%s': gnuplot failed: %s", out, (err:gsub("%s+$", ""):gsub("\n", " ")))
  end
  file:commit()
  return out
end

return M
