-- tests/fuzz/fuzz_plot.lua: kvplan plot's data path on hostile CSV reports
-- and strings: kv.plot builds gnuplot's script, which a stub takes in place
-- of csv.gnuplot (no gnuplot runs), and the script is checked: every line
-- outside a data block is one of the commands plot.lua writes, every string
-- in them one gnuplot string, every data block ended by its own marker and
-- by no data line. Input: byte 1 picks kind, by and the labels (bit 32: a
-- scatter, its first series a line; bit 64: a vertical line titled by the
-- title, at x = the number in the title, else 1.5); up to the first NUL a
-- title; the rest the CSV report (x its first column, y its second, by its
-- third).
local data, dir = ...
local csv = require "kvplan.csv"
local plot = require "kvplan.plot"
local flags = data:byte(1) or 0
local nul = data:find("\0", 2, true)
local title = nul and data:sub(2, nul - 1) or nil
local report = data:sub(nul and nul + 1 or 2)
local path = dir .. "/report.csv"
local f = assert(io.open(path, "wb"))
f:write(report)
f:close()
local ok, rows = pcall(csv.read, path)
local head = ok and rows and rows[1] or {}
local script
local real = csv.gnuplot
csv.gnuplot = function(s) script = s return 1, "stub" end
local spec = {data = path, x = head[1] or "x", y = head[2] or head[1] or "y", output = dir .. "/c.png",
              kind = ({"line", "bar", "stacked"})[flags % 3 + 1], title = title}
if flags & 4 ~= 0 then spec.by = head[3] or head[1] end
if flags & 8 ~= 0 then spec.xlabel, spec.ylabel = title, head[1] end
if flags & 16 ~= 0 then spec.output = dir .. "/c.svg" end
if flags & 32 ~= 0 then
  spec.kind = "scatter"
  local first = ok and rows and rows[2] and spec.by and rows[2][head[3] and 3 or 1]
  spec.lines = {first or spec.y}
end
if flags & 64 ~= 0 then
  spec.vline = {x = tonumber(title or "") or 1.5, title = title}
  if spec.kind ~= "scatter" then spec.kind = "line" end
end
pcall(plot.plot, spec)
csv.gnuplot = real
if script == nil then return end

-- one gnuplot string at s[i]: 'single quoted' ('' inside), or "'..." . '...'
local function gstring(s, i)
  if s:sub(i, i) == '"' then
    local j = s:find("[^']", i + 1)
    assert(j and j > i + 1 and s:sub(j, j) == '"', "a double-quoted string of quotes alone")
    if s:sub(j + 1, j + 4) ~= " . '" then return j + 1 end
    i = j + 4
  else
    assert(s:sub(i, i) == "'", "a string at byte " .. i .. " of: " .. s)
  end
  local k = i + 1
  while true do
    local q = s:find("'", k, true)
    assert(q, "an unended string: " .. s)
    if s:sub(q + 1, q + 1) == "'" then k = q + 2 else return q + 1 end
  end
end
local function one_string(line, prefix)
  assert(gstring(line, #prefix + 1) == #line + 1, "one string after '" .. prefix .. "': " .. line)
end
local fixed = {["set datafile separator '\\t'"] = true, ["set datafile missing '?'"] = true,
               ["set grid"] = true, ["set autoscale xfix"] = true, ["set key outside right top"] = true,
               ["set logscale x"] = true, ["set logscale y"] = true, ["set style data histograms"] = true,
               ["set style histogram rowstacked"] = true, ["set style histogram clustered gap 1"] = true,
               ["set style fill solid 0.85 border -1"] = true, ["set boxwidth 0.75"] = true,
               ["set xtics rotate by -25 scale 0"] = true, ["set output"] = true}
local num = "[-+]?[%d.]+e?[-+]?%d*"
local arrow = "^set arrow 1 from " .. num .. ", graph 0 to " .. num
              .. ", graph 1 nohead lw 2 dt 2 lc rgb '#d62728'$"
local marker
for line in (script:sub(1, -2) .. "\n"):gmatch("([^\n]*)\n") do
  -- a tab separates a data line's cells: no other control character anywhere
  assert(not line:find(marker and "[%c]" or "%c") or (marker and not line:find("[^%C\t]")),
         "a control character in a line of the script")
  if marker then
    local lead = line:match("^%s*(.*)")
    if line == marker then marker = nil
    else assert(lead:sub(1, #marker) ~= marker, "a data line ends its block early: " .. line) end
  elseif line:find("^%$d%d* << KVPLAN_END_%x+$") then
    marker = line:match("(KVPLAN_END_%x+)$")
  elseif line:find("^set terminal %a+ noenhanced size %d+,%d+$") or line:find("^set yrange %[0:[%d.e+-]+%]$")
         or line:find("^plot for %[i=2:%d+%] %$d using i:xtic%(1%) title columnheader%(i%)$") or fixed[line]
         or line:find("^set xrange %[" .. num .. ":" .. num .. "%]$") or line:find(arrow) then
    -- a command plot.lua writes whole
  elseif line:find("^set output ") then one_string(line, "set output ")
  elseif line:find("^set title ") then one_string(line, "set title ")
  elseif line:find("^set xlabel ") then one_string(line, "set xlabel ")
  elseif line:find("^set ylabel ") then one_string(line, "set ylabel ")
  elseif line:find("^plot %$d") or line:find("^plot NaN") then
    -- line and scatter charts: $dN using 1:2 with STYLE title STRING, ...
    -- and the vertical line's key entry, NaN with lines ... title STRING
    local styles = {"linespoints", "linespoints lw 2 pt 7 ps 0.6 lc rgb '#000000'",
                    "points pt %d+ ps 1.2 lc %d+"}
    local i = 6
    while true do
      local a, b
      for _, st in ipairs(styles) do
        a, b = line:find("^%$d%d+ using 1:2 with " .. st:gsub("[%-%.']", "%%%0") .. " title ", i)
        if a then break end
      end
      if not a then a, b = line:find("^NaN with lines lw 2 dt 2 lc rgb '#d62728' title ", i) end
      assert(a, "a line chart's plot: " .. line)
      i = gstring(line, b + 1)
      if i == #line + 1 then break end
      assert(line:sub(i, i + 1) == ", ", "series apart: " .. line)
      i = i + 2
    end
  else
    error("a line plot.lua does not write: " .. line)
  end
end
assert(marker == nil, "a data block not ended")
