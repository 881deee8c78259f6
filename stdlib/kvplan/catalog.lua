-- stdlib/kvplan/catalog.lua: a named collection of entries (models, GPUs)
-- looked up by id or alias in any case, blanks and '_' counting as '-'
-- ("H100 80GB" finds the alias h100-80gb); an unknown name lists the
-- closest entries, ranking ids and aliases alike.
-- Stdlib layer.

local util = require "kvplan.util"

local M = {}

--- A catalog of `kind` ("model", "gpu") whose entries are made by make(t)
--- and are of metatable mt; `data` names the module of built-in entries,
--- loaded on first use. Returns add, all, get, find (find(name): the entry
--- or nil, one hash lookup: no suggestions are computed).
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
    local key = util.norm(e.id)
    if by_name[key] and by_name[key].id == e.id or by_name[key] and util.norm(by_name[key].id) == key then
      util.raise("%s '%s' is already in the catalog", kind, e.id)
    end
    -- an alias names one entry: one that already names another is an error,
    -- never a name that silently finds the older entry
    for _, a in ipairs(e.aliases or {}) do
      local other = by_name[util.norm(a)]
      if other ~= nil and other ~= e then
        util.raise("%s '%s': alias '%s' already names %s '%s'", kind, e.id, a, kind, other.id)
      end
    end
    list[#list + 1] = e
    by_name[key] = e
    for _, a in ipairs(e.aliases or {}) do by_name[util.norm(a)] = e end
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
    local e = by_name[util.norm(name)]
    if e then return e end
    util.raise("unknown %s '%s'%s", kind, util.escape(name), M.suggest(name, list))
  end

  local function find(name)
    if type(name) ~= "string" then return nil end
    index()
    return by_name[util.norm(name)]
  end

  return add, all, get, find
end

--- " (did you mean 'a', 'b'?)" for an unknown name: the three entries whose
--- id or an alias is closest (edit distance, then length; a name holding the
--- other counts as distance 1), each shown by id, with the alias that matched.
--- Within max(2, #name // 3) edits "did you mean", else "closest".
function M.suggest(name, list)
  -- compared by their first 64 bytes: the distance is quadratic in the
  -- lengths, and a megabyte name must not take minutes
  local lname = util.norm(name:sub(1, 64))
  local scored = {}
  for _, e in ipairs(list) do
    local best
    local names = {e.id}
    for _, a in ipairs(e.aliases or {}) do names[#names + 1] = a end
    for _, n in ipairs(names) do
      local ln = util.norm(n:sub(1, 64))
      local d = util.distance(lname, ln)
      if ln:find(lname, 1, true) or lname:find(ln, 1, true) then d = math.min(d, 1) end
      if ln ~= lname and (best == nil or d < best[2] or d == best[2] and #n < #best[3]) then
        best = {e, d, n}
      end
    end
    if best then scored[#scored + 1] = best end
  end
  table.sort(scored, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    if #x[3] ~= #y[3] then return #x[3] < #y[3] end
    return x[1].id < y[1].id
  end)
  local out = {}
  for i = 1, math.min(3, #scored) do
    local e, n = scored[i][1], scored[i][3]
    out[i] = n == e.id and ("'" .. e.id .. "'") or ("'" .. e.id .. "' (alias '" .. n .. "')")
  end
  if #out == 0 then return "" end
  local near = scored[1][2] <= math.max(2, #name // 3)
  return (near and " (did you mean " or " (closest: ") .. table.concat(out, ", ") .. (near and "?)" or ")")
end

return M
