-- stdlib/kvplan/options.lua: script arguments. `kvplan script.lua key=value`
-- passes {key = "value"} to the script; options() checks the keys against
-- the script's defaults and converts each value to its default's type.
-- Stdlib layer.

local util = require "kvplan.util"

local M = {}

local function convert(key, v, def)
  local t = type(def)
  if t == "number" then
    local x = tonumber(v)
    if x == nil or x ~= x or x == math.huge or x == -math.huge then
      util.raise("argument '%s' must be a number, got '%s'", key, v)
    end
    if math.type(def) == "integer" then
      if math.type(x) == "float" and x == math.floor(x) and x > -2^63 and x < 2^63 then
        x = math.tointeger(x)
      end
      if math.type(x) ~= "integer" then util.raise("argument '%s' must be an integer, got '%s'", key, v) end
    end
    return x
  elseif t == "boolean" then
    if v == "true" or v == "1" or v == "yes" then return true end
    if v == "false" or v == "0" or v == "no" then return false end
    util.raise("argument '%s' must be true or false, got '%s'", key, v)
  elseif t == "table" then -- a list: comma-separated values of the first element's type
    local out = {}
    for item in (v .. ","):gmatch("([^,]*),") do
      if item ~= "" then out[#out + 1] = convert(key, item, def[1] or "") end
    end
    return out
  end
  return v
end

--- options(args, defaults): a table with every default, overridden by args.
--- Unknown keys and values of the wrong type are errors at the user's line.
function M.parse(args, defaults)
  args = args or {}
  local out = {}
  for k, v in pairs(defaults) do out[k] = v end
  for k, v in pairs(args) do
    if type(k) ~= "string" then
      util.raise("argument '%s' is not of the form key=value", tostring(v))
    end
    if defaults[k] == nil then
      util.raise("unknown argument '%s'%s", k, util.suggest(k, util.sorted_keys(defaults)))
    end
    out[k] = type(v) == "string" and convert(k, v, defaults[k]) or v
  end
  return out
end

return M
