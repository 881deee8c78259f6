-- stdlib/kvplan/catalog.lua: a named collection of entries (models, GPUs)
-- looked up by id or alias in any case; an unknown name lists the closest.
-- Stdlib layer.

local util = require "kvplan.util"

local M = {}

--- A catalog of `kind` ("model", "gpu") whose entries are made by make(t)
--- and are of metatable mt; `data` names the module of built-in entries,
--- loaded on first use. Returns add, all, get.
function M.new(kind, mt, make, data)
  local list, by_name

  local add
  local function index()
    if list then return end
    list, by_name = {}, {}
    for _, t in ipairs(require(data)) do add(t) end
  end

  --- Add an entry (a table or an entry) under its id and aliases.
  add = function(t)
    index()
    local e = getmetatable(t) == mt and t or make(t)
    if by_name[e.id:lower()] then util.raise("%s '%s' is already in the catalog", kind, e.id) end
    list[#list + 1] = e
    by_name[e.id:lower()] = e
    for _, a in ipairs(e.aliases or {}) do
      local k = a:lower()
      if by_name[k] == nil then by_name[k] = e end
    end
    return e
  end

  --- Every entry, in catalog order.
  local function all()
    index()
    local out = {}
    for i, e in ipairs(list) do out[i] = e end
    return out
  end

  --- The entry named by id or alias (any case); an entry or table passes through.
  local function get(name)
    if getmetatable(name) == mt then return name end
    if type(name) == "table" then return make(name) end
    if type(name) ~= "string" then
      util.raise("field '%s' must be a name or table, got %s", kind, type(name))
    end
    index()
    local e = by_name[name:lower()]
    if e then return e end
    local ids = {}
    for i, c in ipairs(list) do ids[i] = c.id end
    util.raise("unknown %s '%s'%s", kind, name, util.suggest(name, ids, true))
  end

  return add, all, get
end

return M
