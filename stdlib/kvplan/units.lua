-- stdlib/kvplan/units.lua: memory units. Parses "80 GiB", "80GB", "512 KiB"
-- and plain byte counts into exact integer bytes; formats bytes for people.
-- Stdlib layer.
--
-- Binary units (KiB, MiB, GiB, TiB, and Ki, Mi, Gi, Ti as Kubernetes writes
-- them) are powers of 1024; decimal units (KB, MB, GB, TB) powers of 1000, as
-- vendors and the SI use them. A single letter follows vLLM's
-- human_readable_int (vllm/utils/argparse_utils.py at commit 00da11e37d1f,
-- used for kv_cache_memory_bytes): K, M, G, T are binary, as in GNU dd and
-- sort -S ("2G" = 2 GiB), and lowercase k, m, g, t decimal ("2g" = 2 GB).
-- A fractional result is rounded to the nearest byte.

local util = require "kvplan.util"

local M = {}

local factor = {
  B = 1,
  KB = 10^3, MB = 10^6, GB = 10^9, TB = 10^12,
  KIB = 2^10, MIB = 2^20, GIB = 2^30, TIB = 2^40,
  KI = 2^10, MI = 2^20, GI = 2^30, TI = 2^40,
}
-- single letters: case matters (vLLM's human_readable_int)
local letter = {
  K = 2^10, M = 2^20, G = 2^30, T = 2^40, k = 10^3, m = 10^6, g = 10^9, t = 10^12,
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
                 util.shown(v))
    end
    -- a float past 2^63 has no integer (kv.deploy{gpu_memory = 1e19} was
    -- "attempt to compare nil with number" inside deploy.lua)
    if v >= 2^63 then util.raise("field '%s' = %s exceeds 64-bit bytes", field, util.shown(v)) end
    return math.tointeger(v)
  end
  if type(v) ~= "string" then
    util.raise("field '%s' must be bytes or a string like '80 GiB', got %s", field, type(v))
  end
  -- a size is short: past 64 bytes it is not one (and the pattern below
  -- would backtrack over a long run of 'e's)
  local num, unit
  if #v <= 64 then num, unit = v:match("^%s*([%d%.eE+]+)%s*(%a*)%s*$") end
  local x = tonumber(num or "")
  local f = letter[unit or ""] or factor[(unit or ""):upper()] or (unit == "" and 1) or nil
  if x == nil or f == nil or x ~= x or x == math.huge then
    util.raise("field '%s': cannot read '%s' as bytes (expected e.g. '80 GiB', '80 GB', '512 MiB', '2G')",
               field, util.escape(v, 64))
  end
  local b = math.floor(x * f + 0.5)
  if b >= 2^63 then util.raise("field '%s': '%s' exceeds 64-bit bytes", field, v) end
  return math.tointeger(b)
end

--- A token count: an integer, or a string with the suffixes vLLM's command
--- line takes for --max-model-len (human_readable_int in
--- vllm/utils/argparse_utils.py at commit 00da11e37d1f; vllm/engine/arg_utils.py
--- gives max_model_len that type): k, m, g, t multiply by 10^3, 10^6, 10^9,
--- 10^12 and take decimals, truncated as int(float(n) * mult) does ("25.6k"
--- = 25600); K, M, G, T multiply by 2^10 ... 2^40 and take whole numbers only
--- ("32K" = 32768). field names the option in messages.
function M.tokens(v, field)
  field = field or "tokens"
  if math.type(v) == "integer" then return v end
  if math.type(v) == "float" then
    if v == math.floor(v) and v > -2^63 and v < 2^63 then return math.tointeger(v) end
    util.raise("field '%s' must be a whole number of tokens, got %s", field, util.shown(v))
  end
  if type(v) ~= "string" then
    util.raise("field '%s' must be a token count, got %s", field, type(v))
  end
  -- a token count is short: past 64 bytes it is not one, refused before
  -- any pattern reads it; the patterns below read each byte once
  local s = #v <= 64 and util.trim(v) or ""
  if s:find("^[+-]?%d+$") then
    local n = math.tointeger(tonumber(s))
    if n then return n end
  end
  local num, suffix = s:match("^([%d.]+)([kKmMgGtT])$")
  local dot = num and num:find(".", 1, true)
  if num == nil or not num:sub(1, (dot or 0) - 1):find("^%d+$")
     or dot and not num:sub(dot + 1):find("^%d+$") then
    util.raise("field '%s': cannot read '%s' as a token count (expected e.g. 32768, 32k = 32000, 32K = 32768)",
               field, util.escape(v, 64))
  end
  local mult = letter[suffix]
  local n
  if suffix:match("%l") then
    n = math.floor(tonumber(num) * mult)
  else
    if dot then
      util.raise("field '%s': decimals are not allowed with the binary suffix in '%s' (did you mean '%s%s'?)",
                 field, v, num, suffix:lower())
    end
    n = tonumber(num) * mult
  end
  if n >= 2^63 then util.raise("field '%s': '%s' exceeds 64 bits", field, v) end
  return math.tointeger(n)
end

function M.gib(b) return b / 2^30 end

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
