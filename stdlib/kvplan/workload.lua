-- stdlib/kvplan/workload.lua: request-length distributions, kv.workload.
-- Stdlib layer: a distribution is a checked table of parameters; its mean,
-- representative points and seeded samples are the core's (engine/core/optim.c,
-- through kvplan.optim_core). Capacity under continuous batching
-- (kv.optim.continuous{lengths = ...}) and the simulator's prompts and outputs
-- (kv.simulate{prompt = ..., output = ...}) read them.
--
--   local w = kv.workload
--   local d = w.lognormal{median = 2000, sigma = 1, max = 32768}
--   print(d:mean(), table.concat(d:points(4), " "), d:sample(3, 42)[1])

local oc = require "kvplan.optim_core"
local util = require "kvplan.util"

local M = {}
local opts_of, number, fmt_num = util.opts_of, util.number, util.fmt_num

local Dist = {}
Dist.__index = Dist
Dist.__name = "kvplan.Distribution"
M.Distribution = Dist

local function dist(t, name)
  t.name = name
  local d = setmetatable(t, Dist)
  oc.dist_mean(d:core()) -- every parameter checked now, at the user's line
  return d
end

--- The table the core reads.
function Dist:core()
  return {kind = self.kind, lo = self.lo, hi = self.hi, mu = self.mu, sigma = self.sigma,
          values = self.values}
end
-- Representative points already computed, by distribution and k: an
-- empirical distribution of a million values is sorted and reduced once,
-- not once per deployment that uses it (a distribution is not changed after
-- it is made). Weak keys: a distribution no longer used is collected.
local points_memo = setmetatable({}, {__mode = "k"})

--- k (default 32) equally likely representative lengths, ascending: the
--- means of k equal-probability strata, integrated exactly (optim.c);
--- computed once per distribution and k.
function Dist:points(k)
  local memo = points_memo[self]
  if memo == nil then
    memo = {}
    points_memo[self] = memo
  end
  local key = k or 0
  local p = memo[key]
  if p == nil then
    p = oc.dist_points(self:core(), k)
    memo[key] = p
  end
  local out = {}
  for i, v in ipairs(p) do out[i] = v end
  return out
end
--- The exact mean length.
function Dist:mean() return oc.dist_mean(self:core()) end
--- n lengths drawn with the seeded generator (xoshiro256**): the same seed
--- gives the same lengths on every machine.
function Dist:sample(n, seed) return oc.dist_sample(self:core(), n, seed or 1) end
function Dist:__tostring() return "kvplan.Distribution '" .. self.name .. "'" end

-- An integer (the core checks its range and names the field).
local function int(v, field)
  if math.type(v) == "float" and v == math.floor(v) and v > -2^63 and v < 2^63 then
    v = math.tointeger(v)
  end
  if math.type(v) ~= "integer" then
    util.raise("field '%s' must be an integer, got %s", field,
               v ~= v and "nan" or (type(v) == "string" and ("string '" .. v .. "'") or tostring(v)))
  end
  return v
end


--- Every request has n tokens: kv.workload.fixed(8192).
function M.fixed(n)
  if type(n) == "table" then n = opts_of(n, {length = true}, "fixed").length end
  return dist({kind = "fixed", lo = util.count(n, "length")}, "fixed-" .. tostring(n))
end

--- Lengths min..max, equally likely: kv.workload.uniform{min = 1, max = 8192}.
function M.uniform(t, hi)
  if type(t) ~= "table" then t = {min = t, max = hi} end
  opts_of(t, {min = true, max = true}, "uniform")
  local lo = int(t.min or 1, "min")
  local h = int(t.max, "max")
  return dist({kind = "uniform", lo = lo, hi = h}, string.format("uniform-%d-%d", lo, h))
end

--- Normal lengths, clamped to [min, max]: kv.workload.normal{mean = 2000, sd = 500}.
function M.normal(t)
  opts_of(t, {mean = true, sd = true, min = true, max = true}, "normal")
  local mu, sd = number(t.mean, "mean"), number(t.sd, "sd")
  return dist({kind = "normal", lo = int(t.min or 1, "min"),
               hi = t.max and int(t.max, "max") or 0, mu = mu, sigma = sd},
              "normal-" .. fmt_num(mu) .. "-" .. fmt_num(sd))
end

--- Lognormal lengths, clamped to [min, max]: {median = 2000, sigma = 1}
--- (ln L ~ N(ln median, sigma)), {mu = , sigma = }, or {mean = , sd = } of
--- the lengths themselves (sigma^2 = ln(1 + sd^2 / mean^2)).
function M.lognormal(t)
  opts_of(t, {median = true, mu = true, sigma = true, mean = true, sd = true, min = true,
              max = true}, "lognormal")
  local mu, sigma, name
  if t.mean ~= nil or t.sd ~= nil then
    if t.median ~= nil or t.mu ~= nil or t.sigma ~= nil then
      util.raise("lognormal takes {median, sigma}, {mu, sigma} or {mean, sd}")
    end
    local mean, sd = number(t.mean, "mean"), number(t.sd, "sd")
    if mean <= 0 or sd <= 0 then
      util.raise("lognormal mean and sd must be > 0, got %s and %s", fmt_num(mean), fmt_num(sd))
    end
    sigma = math.sqrt(math.log(1 + sd * sd / (mean * mean)))
    mu = math.log(mean) - sigma * sigma / 2
    name = "lognormal-mean" .. fmt_num(mean) .. "-sd" .. fmt_num(sd)
  else
    sigma = number(t.sigma, "sigma")
    if t.median ~= nil then
      if t.mu ~= nil then util.raise("lognormal takes 'median' or 'mu', not both") end
      local med = number(t.median, "median")
      if med <= 0 then util.raise("field 'median' must be > 0, got %s", fmt_num(med)) end
      mu = math.log(med)
      name = "lognormal-median" .. fmt_num(med) .. "-s" .. fmt_num(sigma)
    else
      mu = number(t.mu, "mu")
      name = "lognormal-mu" .. fmt_num(mu) .. "-s" .. fmt_num(sigma)
    end
  end
  return dist({kind = "lognormal", lo = int(t.min or 1, "min"),
               hi = t.max and int(t.max, "max") or 0, mu = mu, sigma = sigma}, name)
end

--- Lengths from a list ({values = {...}} or the list itself) or from a CSV
--- file's column: {path = "lengths.csv", column = "tokens"} (a header row).
function M.empirical(t)
  if type(t) ~= "table" then util.raise("empirical needs a list or options table, got %s", type(t)) end
  local values
  if t[1] ~= nil then
    values = t
  else
    opts_of(t, {values = true, path = true, column = true, name = true}, "empirical")
    if t.values ~= nil then
      values = t.values
    elseif t.path ~= nil then
      local rows, lines = require("kvplan.csv").read(t.path)
      if rows == nil then util.raise("%s", lines) end
      local col = t.column or 1
      local header = rows[1] or {}
      local ci = col
      if type(col) == "string" then
        for i, h in ipairs(header) do if h == col then ci = i end end
        if ci == col then
          util.raise("%s: no column '%s'%s", t.path, col, util.suggest(col, header))
        end
      end
      values = {}
      for r = 2, #rows do
        local v = math.tointeger(tonumber(rows[r][ci]))
        if v == nil then
          util.raise("%s:%d: bad length '%s' in column '%s'", t.path, lines[r],
                     tostring(rows[r][ci]), tostring(header[ci] or ci))
        end
        values[#values + 1] = v
      end
    else
      util.raise("empirical needs 'values' or 'path'")
    end
  end
  if type(values) ~= "table" or #values == 0 then util.raise("field 'values' must be a non-empty list") end
  local v = {}
  for i, x in ipairs(values) do -- the field's name is built only for an error
    v[i] = math.type(x) == "integer" and x or int(x, "values[" .. i .. "]")
  end
  return dist({kind = "empirical", values = v}, t.name or ("empirical-" .. #v))
end

return M
