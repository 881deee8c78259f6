-- stdlib/kvplan/units.lua: memory units. Parses "80 GiB", "80GB", "512 KiB"
-- and plain byte counts into exact integer bytes; formats bytes for people.
-- Stdlib layer.
--
-- Binary units (KiB, MiB, GiB, TiB) are powers of 1024; decimal units (KB, MB,
-- GB, TB) powers of 1000, as vendors and the SI use them. A fractional result
-- is rounded to the nearest byte.

local util = require "kvplan.util"

local M = {}

local factor = {
  B = 1,
  KB = 10^3, MB = 10^6, GB = 10^9, TB = 10^12,
  KIB = 2^10, MIB = 2^20, GIB = 2^30, TIB = 2^40,
}

M.KiB, M.MiB, M.GiB, M.TiB = 2^10 // 1, 2^20 // 1, 2^30 // 1, 2^40 // 1
M.KB, M.MB, M.GB, M.TB = 1000, 1000000, 1000000000, 1000000000000

--- Bytes of v: an integer, or a string "<number> <unit>". field names the
--- option in messages.
function M.bytes(v, field)
  field = field or "bytes"
  if math.type(v) == "integer" then
    if v < 0 then util.raise("field '%s' must be >= 0 bytes, got %d", field, v) end
    return v
  end
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge or v < 0 or v ~= math.floor(v) then
      util.raise("field '%s' must be a whole number of bytes >= 0, got %s", field,
                 v ~= v and "nan" or tostring(v))
    end
    return math.tointeger(v)
  end
  if type(v) ~= "string" then
    util.raise("field '%s' must be bytes or a string like '80 GiB', got %s", field, type(v))
  end
  local num, unit = v:match("^%s*([%d%.eE+]+)%s*(%a*)%s*$")
  local x = tonumber(num or "")
  local f = factor[(unit or ""):upper()] or (unit == "" and 1) or nil
  if x == nil or f == nil or x ~= x or x == math.huge then
    util.raise("field '%s': cannot read '%s' as bytes (expected e.g. '80 GiB', '80 GB', '512 MiB')",
               field, v)
  end
  local b = math.floor(x * f + 0.5)
  if b >= 2^63 then util.raise("field '%s': '%s' exceeds 64-bit bytes", field, v) end
  return math.tointeger(b)
end

function M.gib(b) return b / 2^30 end
function M.gb(b) return b / 1e9 end
function M.mib(b) return b / 2^20 end
function M.kib(b) return b / 2^10 end

--- "2.50 GiB", "320 KiB": the largest binary unit that keeps a number >= 1.
function M.format(b, digits)
  digits = digits or 2
  local units = {{"TiB", 2^40}, {"GiB", 2^30}, {"MiB", 2^20}, {"KiB", 2^10}}
  for _, u in ipairs(units) do
    if b >= u[2] then
      local x = b / u[2]
      if x == math.floor(x) then return string.format("%d %s", math.tointeger(x), u[1]) end
      return string.format("%." .. digits .. "f %s", x, u[1])
    end
  end
  return string.format("%d B", b)
end

return M
