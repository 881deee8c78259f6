-- stdlib/kvplan/util.lua: shared helpers of the stdlib: errors at the user's
-- line, option checking, closest-name suggestions.
-- Stdlib layer (policy and checks in Lua; arithmetic in the core).

local core = require "kvplan.core"

local M = {}

--- v as a message shows it: a NaN as "nan" whatever its sign bit (Lua's
--- tostring and %g print "-nan" for the NaN x86 makes of 0/0, as C's %g does:
--- the core's kvp_shown), anything else as tostring does ("inf", "-inf").
--- A value whose __tostring raises or returns no string is shown by its type
--- ("a table"), so a message about a bad value never becomes the value's own
--- error.
function M.shown(v)
  if v ~= v then return "nan" end
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  local ok, s = pcall(tostring, v)
  if ok and type(s) == "string" then return s end
  return "a " .. t
end

--- Raise msg located at the user's script line (never at a stdlib line);
--- a NaN among the arguments is shown as "nan", a table or userdata as
--- M.shown shows it.
function M.raise(msg, ...)
  local n = select("#", ...)
  if n > 0 then
    local args = {...}
    for i = 1, n do
      local a = args[i]
      if a ~= a then args[i] = math.abs(a)
      elseif type(a) == "table" or type(a) == "userdata" then args[i] = M.shown(a) end
    end
    msg = string.format(msg, table.unpack(args, 1, n))
  end
  core.raise(msg)
end

--- s as it may be shown in a message: control characters as escapes
--- ("\n", "\x1b"), and cut to max bytes (default 200) with "...".
function M.escape(s, max)
  s = M.shown(s)
  max = max or 200
  local cut = #s > max
  if cut then s = s:sub(1, max) end
  s = s:gsub("[%c\127]", function(c)
    if c == "\n" then return "\\n" elseif c == "\t" then return "\\t" elseif c == "\r" then return "\\r" end
    return string.format("\\x%02x", c:byte())
  end)
  return cut and s .. "..." or s
end

--- s cut to `width` columns (UTF-8 characters) with an ellipsis; s itself
--- when it fits or width is nil.
function M.cut(s, width)
  local n = utf8.len(s) or #s
  if width == nil or n <= width then return s end
  return s:sub(1, (utf8.offset(s, width) or width) - 1) .. "\u{2026}"
end

--- Levenshtein distance, for "did you mean".
local function distance(a, b)
  local la, lb = #a, #b
  local prev, cur = {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    for j = 1, lb do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[lb]
end
M.distance = distance

--- s without its leading and trailing blanks, in time linear in #s (the
--- pattern "%s+$" retries at every blank of a long run: quadratic), s itself
--- when it has none.
function M.trim(s)
  local i, j = s:find("%S"), #s
  if i == nil then return "" end
  while s:find("^%s", j) do j = j - 1 end
  if i == 1 and j == #s then return s end
  return s:sub(i, j)
end

--- Is the text s (spaces around it aside) a number written in decimal, as
--- vLLM's human_readable_int reads an integer (Python's int(value): no '0x10'
--- and no '1e3', which Lua's tonumber takes as 16 and 1000)?
function M.decimal(s)
  return M.trim(tostring(s)):find("^[+-]?[%d.]+$") ~= nil
end

--- The number s writes in decimal ("0.9", "-1.5e-3", ".5", "7."), or nil:
--- Lua's tonumber also reads hexadecimal ("0x10", "0x1p-1"), which Python's
--- float(), the engines' reader of the same flags, refuses. One anchored
--- match with nothing to backtrack over: linear in the length.
function M.decimal_number(s)
  s = M.trim(tostring(s))
  local int, dot, frac, exp = s:match("^[+-]?(%d*)(%.?)(%d*)(.*)$")
  if int == nil or (int == "" and frac == "") then return nil end
  if dot == "" and frac ~= "" then return nil end
  if exp ~= "" and not exp:match("^[eE][-+]?%d+$") then return nil end
  return tonumber(s)
end

--- A name as lookups compare it: trimmed, lower case, blanks and '_' as '-'.
function M.norm(name)
  return (M.trim(tostring(name)):lower():gsub("[%s_]+", "-"))
end

--- Up to n names close to name (case-insensitive), best first: within an
--- edit distance of max(2, #name // 3), or holding one another. The name
--- typed itself is never suggested.
function M.closest(name, names, n, any)
  -- names are compared by their first 64 bytes: a megabyte cell costs what
  -- a short name does (the distance is quadratic in the lengths)
  local lname, scored = M.norm(name:sub(1, 64)), {}
  local limit = any and math.huge or math.max(2, #lname // 3)
  for _, c in ipairs(names) do
    local lc = M.norm(c:sub(1, 64))
    -- the distance is at least the difference of the lengths
    local e = math.abs(#lc - #lname) > limit and math.huge or distance(lname, lc)
    local d = e
    if lc:find(lname, 1, true) or lname:find(lc, 1, true) then
      -- one inside the other: the edit distance is the lengths' difference
      d, e = math.min(d, 1), math.abs(#lc - #lname)
    end
    if d <= limit and lc ~= lname then scored[#scored + 1] = {c, d, e} end
  end
  -- names containing the name (or contained in it) rank as distance 1,
  -- among them the nearer by edit distance first ('layer': 'layers' before
  -- 'mlp_layers' and 'attention_layers'), then by name
  table.sort(scored, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    if x[3] ~= y[3] then return x[3] < y[3] end
    return x[1] < y[1]
  end)
  local out = {}
  for i = 1, math.min(n or 3, #scored) do out[i] = scored[i][1] end
  return out
end

--- " (did you mean 'a', 'b'?)" or "". With `any` (catalog lookups) the
--- nearest names are listed however far they are.
function M.suggest(name, names, any)
  local c = M.closest(name, names, 3, any)
  if #c == 0 then return "" end
  if any and #M.closest(name, names, 1) == 0 then
    return " (closest: '" .. table.concat(c, "', '") .. "')"
  end
  return " (did you mean '" .. table.concat(c, "', '") .. "'?)"
end

--- The median of the numbers of list v (a sorted copy's middle, or the
--- mean of its two middle ones); nil for an empty list.
function M.median(v)
  if #v == 0 then return nil end
  local s = {}
  for i, x in ipairs(v) do s[i] = x end
  table.sort(s)
  local n = #s
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

--- Keys of t in sorted order (by their text; keys of one text, 1 and "1",
--- by their type's name).
function M.sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b)
    local x, y = tostring(a), tostring(b)
    if x ~= y then return x < y end
    return type(a) < type(b)
  end)
  return ks
end

--- pairs(t) in M.sorted_keys order. Lua seeds its string hash per state
--- (lstate.c luai_makeseed: the time and addresses), so pairs() visits
--- string keys in an order that changes run to run: a loop whose result
--- depends on that order (the first error of several, rows, messages)
--- visits them this way instead.
function M.sorted_pairs(t)
  local ks, i = M.sorted_keys(t), 0
  return function()
    i = i + 1
    local k = ks[i]
    if k ~= nil then return k, t[k] end
  end
end

--- A shallow copy of table t.
function M.copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

--- Reject keys of opts not in allowed (a set); what names the table.
function M.check_keys(opts, allowed, what)
  if type(opts) ~= "table" then M.raise("%s must be a table of fields, got %s", what, type(opts)) end
  for _, k in ipairs(M.sorted_keys(opts)) do -- the first unknown of several: the same every run
    if allowed[k] then goto continue end
    if type(k) ~= "string" then
      M.raise("unexpected key %s in %s (field names are strings)", M.shown(k), what)
    end
    do
      local names = {}
      for n in pairs(allowed) do if type(n) == "string" then names[#names + 1] = n end end
      table.sort(names)
      M.raise("unknown field '%s' in %s%s", k, what, M.suggest(k, names))
    end
    ::continue::
  end
end

--- A value as an error about an argument shows it: strings quoted and
--- escaped, a table by up to four of its fields in key order
--- ("a table {context = 1024}"), anything else as M.shown shows it.
local function argument_shown(v)
  if type(v) == "string" then return "'" .. M.escape(v, 60) .. "'" end
  if type(v) ~= "table" or getmetatable(v) ~= nil then return M.shown(v) end
  local parts, keys = {}, M.sorted_keys(v)
  for i = 1, math.min(#keys, 4) do
    local k, x = keys[i], v[keys[i]]
    x = type(x) == "table" and "{...}" or type(x) == "string" and "'" .. M.escape(x, 30) .. "'" or M.shown(x)
    parts[i] = math.type(k) == "integer" and x or (type(k) == "string" and M.escape(k, 30) or "[" .. M.shown(k) .. "]") .. " = " .. x
  end
  if #keys > 4 then parts[#parts + 1] = "..." end
  return #keys == 0 and "an empty table {}" or "a table {" .. table.concat(parts, ", ") .. "}"
end

--- f, checked for its arguments: a call with more than the parameter names
--- `params` (self not among them) is an error at the user's line naming the
--- method (`owner:name(params)`), what was given and `hint` (what to do
--- instead; "%s" in it is the method's name), not an argument dropped
--- without a word (`d:ledger{context = 1024}` ran d:ledger()). The one
--- check of every method's argument count (M.methods; deploy.lua the
--- ledger's C methods).
function M.checked_arity(f, owner, name, params, hint)
  local max, sig = #params, string.format("%s:%s(%s)", owner, name, table.concat(params, ", "))
  return function(self, ...)
    local n = select("#", ...)
    if n > max then
      local extra = {}
      for i = max + 1, math.min(n, max + 3) do extra[#extra + 1] = argument_shown((select(i, ...))) end
      if n > max + 3 then extra[#extra + 1] = "..." end
      local msg = max == 0 and string.format("%s takes no arguments, got %s", sig, table.concat(extra, ", "))
        or string.format("%s takes at most %d argument%s, got %d (the extra: %s)", sig, max,
                         max == 1 and "" or "s", n, table.concat(extra, ", "))
      if hint then msg = msg .. ": " .. hint:gsub("%%s", name) end
      core.raise(msg)
    end
    return f(self, ...)
  end
end

--- Every method of Class (its functions but the metamethods, __*) checks
--- its self first: `d.ledger(5)` instead of `d:ledger()` is an error at the
--- user's line worded as the core's methods word it (luaL_checkudata:
--- "bad argument #1 to 'ledger' (kvplan.Deployment expected, got number)"),
--- not an index error inside the stdlib. A table that reads the method
--- through to an object (setmetatable({}, {__index = d})) is that object.
--- A method without `...` refuses arguments past its parameters
--- (M.checked_arity), with hints[name] (else, for a method of no
--- parameters, hints.default) as what to do instead. Call once, after the methods are defined.
function M.methods(Class, hints)
  hints = hints or {}
  local names = {}
  for k, f in pairs(Class) do
    if type(k) == "string" and type(f) == "function" and k:sub(1, 2) ~= "__" then names[#names + 1] = k end
  end
  local owner = Class.__name
  for _, k in ipairs(names) do
    local f = Class[k]
    local params, vararg = core.params(f)
    if params and not vararg and params[1] == "self" then
      f = M.checked_arity(f, owner, k, table.move(params, 2, #params, 1, {}),
                          hints[k] or #params == 1 and hints.default or nil)
    end
    Class[k] = function(self, ...)
      if getmetatable(self) ~= Class and not M.is_a(self, Class) then
        M.raise("bad argument #1 to '%s' (%s expected, got %s)", k, owner, type(self))
      end
      return f(self, ...)
    end
  end
  return Class
end

--- Is x an object of Class, or a table that reads through to one
--- (setmetatable({}, {__index = d})): raw lookups only, so a hostile
--- __index is never called, and at most 8 tables deep (a loop ends).
function M.is_a(x, Class)
  for _ = 1, 8 do
    local mt = getmetatable(x)
    if mt == Class then return true end
    if type(mt) ~= "table" then return false end
    x = rawget(mt, "__index")
    if type(x) ~= "table" then return false end
  end
  return false
end

--- A positive integer, or an error naming the field and the value.
function M.count(v, field, min)
  min = min or 1
  if math.type(v) == "float" and v == math.floor(v) and v > -2^63 and v < 2^63 then
    v = math.tointeger(v)
  end
  if math.type(v) ~= "integer" or v < min then
    local got = type(v) == "string" and ("string '" .. M.escape(v) .. "'")
      or type(v) == "table" and getmetatable(v) == nil and "a table" or M.shown(v)
    M.raise("field '%s' must be an integer >= %d, got %s", field, min, got)
  end
  return v
end

--- t when it is a table whose keys are all in allowed (a set); what names it.
function M.opts_of(t, allowed, what)
  if type(t) ~= "table" then M.raise("%s needs an options table, got %s", what, type(t)) end
  M.check_keys(t, allowed, what)
  return t
end

--- A finite number, or an error naming the field and the value.
function M.number(v, field)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
    M.raise("field '%s' must be a finite number, got %s", field, M.shown(v))
  end
  return v
end

--- How a file argument is named in messages: "standard input" for "-".
function M.input_name(path)
  return path == "-" and "standard input" or path
end

--- A file kvplan reads, opened for reading in binary; "-" is standard input
--- (the command line lets one argument name it). nil and why when it cannot
--- be opened, or when standard input is empty (nothing was piped in).
function M.open_input(path)
  if path ~= "-" then return io.open(path, "rb") end
  if io.stdin:read(0) == nil then
    return nil, "standard input ('-') is empty: nothing was piped in"
  end
  return io.stdin
end

--- A number as a report name writes it: whole numbers without a point, else %g.
--- "1 request", "2 requests": integer n and the noun, plural unless n is 1
--- (nouns taking an s only).
function M.count_of(n, noun)
  return string.format("%d %s%s", n, noun, n == 1 and "" or "s")
end

function M.fmt_num(x)
  if math.type(x) == "integer" or x == math.floor(x) and math.abs(x) < 2^53 then
    return string.format("%d", math.floor(x))
  end
  return string.format("%g", x)
end

return M
