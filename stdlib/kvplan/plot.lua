-- stdlib/kvplan/plot.lua: charts of reports, kv.plot{...} and `kvplan plot`.
-- Stdlib layer: the chart is drawn by gnuplot (Debian gnuplot-nox), run as
-- a separate program without a shell (csv.gnuplot, engine/io/proc.c); kvplan
-- only writes its script and data. No data reaches gnuplot's commands: the
-- data go in inline blocks whose end marker no data line starts with, the
-- series names of the data are cells with control characters made spaces,
-- and every string of a command is single-quoted (gnuplot substitutes no
-- backquote or macro there) after refusing the arguments that hold a line
-- break or another control character.
--
--   kv.plot{data = "capacity.csv", x = "context", y = "max_concurrency", by = "gpu",
--           kind = "line", output = "capacity.png"}
--   kvplan plot capacity.csv x=context y=max_concurrency by=gpu -o capacity.png
--
-- Fields:
--   data     a CSV report's path, or a list of rows (tables keyed by column)
--   x, y     column names; `by` (optional) makes one series per value
--   kind     line (x numeric, one line per series, points in data order
--            sorted by x), scatter (x numeric, each series as points; the
--            series named in `lines` as lines through their points, sorted
--            by x: a Pareto front over the points of every deployment), bar
--            (x categories, one bar per series side by side) or stacked (x
--            categories, the series stacked: the ledger of each deployment,
--            by=item)
--   lines    scatter: the series drawn as lines (a list of names)
--   vline    line and scatter: a vertical reference line, {x = number,
--            title = text} (an SLA: tokens/s per user = 1000 / tpot_ms),
--            dashed, in the key under its title; the x axis reaches it
--   output   the chart: *.png (cairo, exactly width x height pixels) or *.svg
--   width, height  pixels (default 800 x 500, at most 8192 each: a bitmap
--            of 8192 x 8192 takes 256 MiB)
--   title    default: the question the data answer, from the columns of
--            one value in every row (model, gpu, context and concurrency)
--            and the axes' quantities: "Llama-3.1-8B: max concurrency vs
--            context" (x numeric), "... : memory per GPU by deployment"
--            (x categories)
--   xlabel, ylabel  default: the column's quantity and unit from the column
--            registry (columns.lua): "context (tokens)"
--   logx, logy     logarithmic axes: true/"yes", false/"no" or "auto"
--            (default): logarithmic where the axis is numeric and its
--            positive values span two decades or more (largest / smallest
--            >= 100) with none negative; zeros are then left off. Bars
--            (x categories, y from 0) have linear axes.
--   order    series names to put first, in this order (stacking order)
-- Series keep the order of their first row; missing y values are gaps in
-- a line and zero in bars. The chart is written beside `output`, checked
-- whole (gnuplot's exit status, a PNG ending in its IEND chunk, an SVG in
-- its closing tag) and only then renamed into place, so a failed or
-- interrupted run (a full disk, a signal: gnuplot is ended) leaves the old
-- file as it was and no temporary.

local util = require "kvplan.util"
local columns = require "kvplan.columns"

local M = {}

local fields = {
  data = true, x = true, y = true, by = true, kind = true, output = true, width = true,
  height = true, title = true, xlabel = true, ylabel = true, logx = true, logy = true,
  order = true, lines = true, vline = true,
}

-- A gnuplot string: single-quoted ('' is a quote inside; gnuplot expands
-- no backquote or macro there). gnuplot reads '' at the start of a string
-- as an empty string, so leading quotes are a double-quoted string of
-- quotes alone, joined by gnuplot's string concatenation (.).
local function q(s)
  local lead, rest = tostring(s):match("^('*)(.*)$")
  local body = "'" .. rest:gsub("'", "''") .. "'"
  if lead == "" then return body end
  return '"' .. lead .. '"' .. (rest ~= "" and (" . " .. body) or "")
end
-- A data cell: control characters (tabs, line breaks) made spaces.
local function cell(s) return (tostring(s):gsub("%c", " ")) end
-- The largest width and height of a chart, in pixels.
M.max_size = 8192

-- A string argument that goes into a gnuplot command: refused when it holds
-- a control character (a line break would end the command).
local function text(v, field)
  local s = tostring(v)
  local at = s:find("%c")
  if at then
    util.raise("field '%s' holds a control character (byte %d, code %d): refused, as it would "
               .. "reach gnuplot's commands", field, at, s:byte(at))
  end
  return s
end

-- Rows as tables keyed by column, from a CSV path or a list.
local function load(data)
  if type(data) == "table" then
    -- each row a table ({3}: a Lua error inside this file before)
    for i = 1, #data do
      if type(data[i]) ~= "table" then
        util.raise("field 'data': row %d must be a table of columns, got %s", i, type(data[i]))
      end
    end
    return data, "rows"
  end
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

-- A log-axis setting: true, false or "auto".
local function log_mode(v, field)
  if v == nil or v == "auto" then return "auto" end
  if v == true or v == "yes" or v == "true" then return true end
  if v == false or v == "no" or v == "false" then return false end
  util.raise("field '%s' must be true, false, 'yes', 'no' or 'auto', got '%s'", field,
             util.escape(util.shown(v), 64))
end

-- Whether numbers span two decades or more with none negative: an axis
-- that is read on a logarithmic scale (a context or concurrency sweep
-- doubling from 1K to 128K; capacity falling as 1/context).
local function decades(values)
  local lo, hi
  for _, v in ipairs(values) do
    if v < 0 then return false end
    if v > 0 then lo, hi = math.min(lo or v, v), math.max(hi or v, v) end
  end
  return lo ~= nil and hi / lo >= 100
end

-- A piece of a title from the data: control characters made spaces, at
-- most 48 characters.
local function piece(s)
  s = cell(s)
  if #s > 48 then s = s:sub(1, 45) .. "..." end
  return s
end

-- The question the rows answer, as a title: the model (its Hugging Face
-- name), the GPU (its name) and the request shape where one value holds in
-- every row, then the axes' quantities.
local function question(rows, spec, numeric)
  local function same(c)
    if c == spec.x or c == spec.y or c == spec.by then return nil end
    local v = rows[1][c]
    if type(v) ~= "string" and type(v) ~= "number" or v == "" then return nil end
    for i = 2, #rows do if rows[i][c] ~= v then return nil end end
    return piece(v)
  end
  local subject = {}
  local m, g = same("model"), same("gpu")
  if m then
    local e = require("kvplan.models").find(m)
    subject[#subject + 1] = e and e.hf and piece(e.hf:match("[^/]*$")) or m
  end
  if g then
    local e = require("kvplan.gpus").find(g)
    local name = e and e.name and piece((e.name:gsub("^NVIDIA ", ""):gsub("^AMD ", ""))) or g
    subject[#subject + 1] = (m and "on " or "") .. name
  end
  local ctx, conc = same("context"), same("concurrency")
  local shape
  if ctx and conc then shape = string.format("%s requests of %s tokens", conc, ctx)
  elseif ctx then shape = string.format("context %s tokens", ctx)
  elseif conc then shape = string.format("%s requests", conc) end
  local what = columns.quantity(spec.y) .. (numeric and " vs " or " by ") .. columns.quantity(spec.x)
  local head = table.concat(subject, " ")
  if shape then head = head ~= "" and (head .. ", " .. shape) or shape end
  return head ~= "" and (head .. ": " .. what) or what
end

local function number(v, col, row, where)
  if v == nil or v == "" then return nil end
  local x = tonumber(v)
  if x == nil or x ~= x or x == math.huge or x == -math.huge then
    util.raise("%s%s: column '%s' holds '%s', not a number", where,
               row["(line)"] and (":" .. row["(line)"]) or "", col, util.shown(v))
  end
  return x
end

-- Draw a chart (see the module comment): the output path; with `text`,
-- the SVG document itself, nothing written (spec.output a name beside
-- which the temporary is made, never written).
local function draw(spec, text_only)
  if type(spec) ~= "table" then util.raise("plot needs a table, got %s", type(spec)) end
  util.check_keys(spec, fields, "plot")
  for _, f in ipairs{"data", "x", "y", "output"} do
    if spec[f] == nil then util.raise("plot needs '%s'", f) end
  end
  local kind = spec.kind or "line"
  if kind ~= "line" and kind ~= "scatter" and kind ~= "bar" and kind ~= "stacked" then
    util.raise("field 'kind' must be line, scatter, bar or stacked, got '%s'", util.shown(kind))
  end
  local numeric = kind == "line" or kind == "scatter"
  local as_line = {}
  if spec.lines ~= nil then
    if kind ~= "scatter" then util.raise("field 'lines' goes with kind = \"scatter\"") end
    if type(spec.lines) ~= "table" then util.raise("field 'lines' must be a list of series names") end
    for i, s in ipairs(spec.lines) do as_line[cell(text(s, "lines item " .. i))] = true end
  end
  local vline
  if spec.vline ~= nil then
    if not numeric then util.raise("field 'vline' goes with kind = \"line\" or \"scatter\"") end
    if type(spec.vline) ~= "table" then
      util.raise("field 'vline' must be a table {x = number, title = text}, got %s", type(spec.vline))
    end
    util.check_keys(spec.vline, {x = true, title = true}, "vline")
    vline = {x = util.number(spec.vline.x, "vline.x"),
             title = text(spec.vline.title or "", "vline.title")}
  end
  local logx, logy = log_mode(spec.logx, "logx"), log_mode(spec.logy, "logy")
  if not numeric then
    for f, v in pairs{logx = logx, logy = logy} do
      if v == true then
        util.raise("field '%s' goes with kind = \"line\" or \"scatter\" (bars are drawn from 0 "
                   .. "over categories)", f)
      end
    end
    logx, logy = false, false
  end
  local out = spec.output
  if type(out) ~= "string" then util.raise("field 'output' must be a path, got %s", type(out)) end
  local ext = out:match("%.(%w+)$")
  ext = ext and ext:lower()
  if ext ~= "png" and ext ~= "svg" then
    util.raise("field 'output' must name a .png or .svg file, got '%s'", out)
  end
  text(out, "output")
  for _, f in ipairs{"x", "y", "by", "title", "xlabel", "ylabel"} do
    if spec[f] ~= nil then text(spec[f], f) end
  end
  -- the columns are names (y = 0 / 0 was "table index is NaN" inside this file)
  for _, f in ipairs{"x", "y", "by"} do
    if spec[f] ~= nil and type(spec[f]) ~= "string" then
      util.raise("field '%s' must be a column name, got %s", f, type(spec[f]))
    end
  end
  local width = util.count(spec.width or 800, "width", 16)
  local height = util.count(spec.height or 500, "height", 16)
  for _, f in ipairs{"width", "height"} do
    local v = f == "width" and width or height
    if v > M.max_size then
      util.raise("field '%s' must be at most %d pixels, got %d", f, M.max_size, v)
    end
  end
  local rows, where, header = load(spec.data)
  if #rows == 0 then util.raise("%s has no rows to plot", where) end
  local cols = {}
  if header then for _, c in ipairs(header) do cols[#cols + 1] = c end
  else
    for _, k in ipairs(util.sorted_keys(rows[1])) do
      if type(k) ~= "string" then
        util.raise("field 'data': row 1 has a key %s, not a column name", util.shown(k))
      end
      cols[#cols + 1] = k
    end
    table.sort(cols)
  end
  local have = {}
  for _, c in ipairs(cols) do have[c] = true end
  for _, f in ipairs{"x", "y", "by"} do
    local c = spec[f]
    if c ~= nil and not have[c] and header then
      util.raise("%s has no column '%s'%s", where, util.shown(c), util.suggest(util.shown(c), cols))
    end
  end

  -- series in order of first appearance
  local series, order = {}, {}
  local xs, xorder = {}, {}
  for _, r in ipairs(rows) do
    local s = spec.by and cell(r[spec.by] or "") or spec.y
    if series[s] == nil then series[s] = {}; order[#order + 1] = s end
    local y = number(r[spec.y], spec.y, r, where)
    if numeric then
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
  -- the end of an inline data block: a marker no data line starts with
  -- (gnuplot ends the block at the first line that does)
  local cells = {}
  for _, s in ipairs(order) do cells[#cells + 1] = s end
  for _, x in ipairs(xorder) do cells[#cells + 1] = x end
  local eod
  repeat
    eod = string.format("KVPLAN_END_%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
    for _, c in ipairs(cells) do
      if c:match("^%s*(.*)"):sub(1, #eod) == eod then eod = nil break end
    end
  until eod
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
  add("set title %s", q(spec.title or question(rows, spec, numeric)))
  add("set xlabel %s", q(spec.xlabel or columns.label(spec.x)))
  add("set ylabel %s", q(spec.ylabel or columns.label(spec.y)))
  add("set grid")
  if kind == "line" and vline == nil then add("set autoscale xfix") end
  add("set key outside right top")
  if numeric then
    local xv, yv = {vline and vline.x}, {}
    for _, s in ipairs(order) do
      for _, p in ipairs(series[s]) do xv[#xv + 1], yv[#yv + 1] = p[1], p[2] end
    end
    if logx == "auto" then logx = decades(xv) end
    if logy == "auto" then logy = decades(yv) end
    if logx and vline and vline.x <= 0 then
      util.raise("field 'vline.x' must be > 0 on a logarithmic x axis, got %s", util.shown(vline.x))
    end
  end
  if logx then add("set logscale x") end
  if logy then add("set logscale y") end
  if numeric then
    local plots = {}
    -- the x range holds the data and the reference line, 5 % beyond both
    -- (a factor 1.25 on a logarithmic axis)
    local lo, hi = vline and vline.x, vline and vline.x
    local npoints = 0
    for i, s in ipairs(order) do
      local pts = series[s]
      -- points keep their data order (a scatter's), a line goes by x
      if kind == "line" or as_line[s] then
        table.sort(pts, function(a, b) return a[1] < b[1] end)
      end
      add("$d%d << %s", i, eod)
      for _, p in ipairs(pts) do
        add("%s\t%s", string.format("%.17g", p[1]), p[2] and string.format("%.17g", p[2]) or "?")
        lo, hi = math.min(lo or p[1], p[1]), math.max(hi or p[1], p[1])
      end
      add("%s", eod)
      -- a scatter's lines black; its points in the first 7 of gnuplot's
      -- colours (the 8th is black), the marker changing every 7 series
      -- (circle, square, triangle, diamond)
      local with = "linespoints"
      if kind == "scatter" and as_line[s] then with = "linespoints lw 2 pt 7 ps 0.6 lc rgb '#000000'"
      elseif kind == "scatter" then
        npoints = npoints + 1
        with = string.format("points pt %d ps 1.2 lc %d", ({7, 5, 9, 13})[(npoints - 1) // 7 % 4 + 1],
                             (npoints - 1) % 7 + 1)
      end
      plots[#plots + 1] = string.format("$d%d using 1:2 with %s title %s", i, with, q(s))
    end
    if vline then
      local a, b
      if logx and lo > 0 then a, b = lo / 1.25, hi * 1.25
      else
        local pad = hi > lo and (hi - lo) * 0.05 or math.max(math.abs(lo) * 0.1, 1)
        a, b = lo - pad, hi + pad
      end
      if not (b - a < math.huge) then
        util.raise("%s: column '%s' and the vline span past the largest number (1.8e308): a "
                   .. "chart cannot scale them", where, spec.x)
      end
      add("set xrange [%.17g:%.17g]", a, b)
      add("set arrow 1 from %.17g, graph 0 to %.17g, graph 1 nohead lw 2 dt 2 lc rgb '#d62728'",
          vline.x, vline.x)
      plots[#plots + 1] = string.format("NaN with lines lw 2 dt 2 lc rgb '#d62728' title %s",
                                        q(vline.title))
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
    -- bars summed past the largest double (two cells of 1e308) have no
    -- scale: 'set yrange [0:inf]' is no gnuplot command (found by fuzz_plot)
    if top * 1.08 == math.huge then
      util.raise("%s: the bars of column '%s' add up past the largest number (1.8e308): a chart "
                 .. "cannot scale them", where, spec.y)
    end
    add("set yrange [0:%.17g]", top > 0 and top * 1.08 or 1)
    add("set xtics rotate by -25 scale 0")
    add("$d << %s", eod)
    local head = {"x"}
    for _, s in ipairs(order) do head[#head + 1] = s end
    add("%s", table.concat(head, "\t"))
    for _, x in ipairs(xorder) do
      local line = {x}
      for _, s in ipairs(order) do line[#line + 1] = string.format("%.17g", series[s][x] or 0) end
      add("%s", table.concat(line, "\t"))
    end
    add("%s", eod)
    add("plot for [i=2:%d] $d using i:xtic(1) title columnheader(i)", #order + 1)
  end
  add("set output")

  local code, err = require("kvplan.csv").gnuplot(table.concat(g, "\n") .. "\n")
  if code == nil then
    util.raise("cannot draw '%s': charts run gnuplot, a separate program, which --sandbox forbids", out)
  end
  if code == 127 then
    util.raise("cannot draw '%s': gnuplot is not installed (Debian: apt-get install gnuplot-nox)", out)
  end
  err = err:gsub("%s+$", ""):gsub("%s*\n%s*", " ")
  if code ~= 0 then
    util.raise("cannot draw '%s': gnuplot failed (status %d)%s", out, code,
               err ~= "" and (": " .. err) or "")
  end
  -- gnuplot does not report a short write (a full disk): the chart must be
  -- whole before it replaces the old one
  local f = io.open(tmp, "rb")
  local size = f and f:seek("end") or 0
  local tail = ""
  if f and size > 0 then
    f:seek("set", math.max(0, size - 64))
    tail = f:read("a") or ""
  end
  if f then f:close() end
  local whole
  if ext == "png" then whole = tail:sub(-12) == "\0\0\0\0IEND\174\66\96\130"
  else whole = tail:find("</svg>%s*$") ~= nil end
  if not whole then
    util.raise("cannot draw '%s': gnuplot wrote %d bytes, not a whole %s (a full disk?)%s", out,
               size, ext:upper(), err ~= "" and (": " .. err) or "")
  end
  if text_only then
    local f = io.open(tmp, "rb")
    local svg = f and f:read("a")
    if f then f:close() end
    if svg == nil then util.raise("cannot read the chart gnuplot wrote") end
    return svg
  end
  file:commit()
  return out
end

--- Draw a chart (see the module comment); returns the output path.
function M.plot(spec) return draw(spec, false) end

--- The chart of spec (kv.plot's fields; data and output not needed: the
--- data default to `rows`; its temporary is made beside the path `beside`
--- when given) as the text of an SVG document, for a page that
--- embeds it (an HTML report); nil and why when it cannot be drawn
--- (gnuplot missing, the sandbox, data it cannot plot), so the page says
--- so in its place. Nothing is written but gnuplot's temporary, removed.
function M.svg(spec, rows, beside)
  if type(spec) ~= "table" then return nil, "a chart needs a table of kv.plot's fields" end
  local s = util.copy(spec)
  if s.data == nil then s.data = rows end
  -- gnuplot's temporary beside the page (where kvplan may write: --sandbox
  -- allows the output alone), else in $TMPDIR or /tmp
  s.output = (beside or ((os.getenv and os.getenv("TMPDIR")) or "/tmp") .. "/kvplan-chart") .. ".svg"
  local ok, svg = pcall(draw, s, true)
  if ok then return svg end
  local why = tostring(svg):gsub("^.-:%d+: ", "", 1)
  local drawing = "cannot draw '" .. s.output .. "': " -- the temporary's name says nothing
  if why:sub(1, #drawing) == drawing then why = why:sub(#drawing + 1) end
  return nil, why
end

return M
