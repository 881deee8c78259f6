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
               v ~= v and "nan" or (type(v) == "string" and ("string '" .. v .. "'") or util.shown(v)))
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
        -- in decimal, as the command line's integers (kv.options)
        if v ~= nil and not util.decimal(rows[r][ci]) then
          util.raise("%s:%d: length '%s' in column '%s' must be a whole number written in decimal",
                     t.path, lines[r], util.escape(util.shown(rows[r][ci]), 64), util.shown(header[ci] or ci))
        end
        if v == nil then
          util.raise("%s:%d: bad length '%s' in column '%s'", t.path, lines[r],
                     util.shown(rows[r][ci]), util.shown(header[ci] or ci))
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

-- ShareGPT as vLLM's benchmark client samples it (`--dataset-name sharegpt`):
-- vllm/benchmarks/datasets.py ShareGPTDataset.sample at vllm-project/vllm
-- 0056b87fc1fd shuffles ShareGPT_V3_unfiltered_cleaned_split.json (seed 0),
-- takes each conversation's first turn as the prompt and its reply's token
-- count as the request's cap, and keeps a pair only if is_valid_sequence
-- holds: prompt and completion >= 4 tokens, prompt <= 1024, prompt +
-- completion <= 2048 (the same rule as benchmarks/benchmark_serving.py's
-- sample_sharegpt_requests before it). The shape: the percentiles P0, P1,
-- ..., P100 (nearest rank) of the per-request lengths of one such run,
-- LambdaLabsML/vllm-benchmark commit a4f9f4371a1c,
-- results/prompt_1280/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json
-- (its benchmark.py: vLLM's benchmark_serving.py --dataset-name sharegpt
-- --num-prompts 1280 --save-result, in the vllm/vllm-openai:v0.5.4 image by
-- its benchmark.sh's default; Llama 3 tokenizer): `input_lens` of all 1280
-- requests (sum 283459 = its total_input_tokens, mean 221.5, median 102.5),
-- `output_lens` of the 1191 that were served (the 89 with no first token
-- and 0 tokens are failed requests, left out; sum 233412 = its
-- total_output_tokens, mean 196.0, median 146): what the model generated
-- under each request's cap, stopping at EOS.
local sharegpt_prompt_q = {
  4, 5, 6, 7, 7, 8, 8, 9, 9, 10,  -- P0..P9
  10, 11, 11, 12, 13, 13, 14, 14, 15, 15,  -- P10..P19
  16, 16, 17, 18, 19, 20, 21, 22, 23, 24,  -- P20..P29
  25, 27, 28, 29, 32, 33, 35, 39, 41, 44,  -- P30..P39
  46, 49, 53, 58, 62, 67, 73, 78, 85, 93,  -- P40..P49
  102, 115, 125, 139, 155, 161, 175, 189, 203, 216,  -- P50..P59
  225, 235, 245, 253, 262, 274, 286, 302, 308, 317,  -- P60..P69
  325, 331, 339, 352, 361, 366, 379, 395, 406, 422,  -- P70..P79
  444, 462, 475, 486, 498, 515, 529, 551, 573, 597,  -- P80..P89
  618, 641, 668, 696, 719, 757, 768, 769, 770, 782,  -- P90..P99
  997,  -- P100
}
local sharegpt_output_q = {
  1, 4, 5, 6, 7, 7, 8, 9, 9, 10,  -- P0..P9
  11, 11, 12, 12, 13, 14, 15, 16, 17, 19,  -- P10..P19
  19, 21, 22, 23, 24, 25, 26, 27, 28, 30,  -- P20..P29
  32, 36, 38, 40, 43, 46, 53, 58, 63, 73,  -- P30..P39
  78, 85, 90, 100, 105, 111, 114, 120, 129, 139,  -- P40..P49
  146, 153, 162, 169, 173, 178, 183, 194, 201, 206,  -- P50..P59
  212, 218, 225, 233, 241, 250, 256, 261, 273, 279,  -- P60..P69
  285, 290, 299, 305, 312, 318, 322, 331, 334, 343,  -- P70..P79
  355, 363, 373, 384, 393, 399, 413, 431, 441, 449,  -- P80..P89
  474, 483, 495, 512, 536, 569, 602, 646, 740, 768,  -- P90..P99
  1104,  -- P100
}
-- vLLM's filters on the lengths drawn: a prompt of 4..1024 tokens; an output
-- of at most 2048 - 4 (prompt + completion <= 2048 with the shortest prompt);
-- at least 1, since a served output stops at EOS before its cap (the
-- source's shortest is 1).
local sharegpt_bounds = {prompt = {4, 1024}, output = {1, 2044}}
local sharegpt_n = 1000 -- lengths of the inverse CDF a distribution holds

-- n lengths at u = (i - 0.5) / n of the inverse CDF linear between the
-- percentiles q (P0..P100), times s, floored and clamped to [lo, hi], with
-- s chosen so that they sum to round(mean * n): the largest s whose sum is
-- at most that, then +1 on the unclamped lengths of the largest fractional
-- parts (the sum rises by at most one a length between two values of s).
local function scaled_quantiles(q, mean, lo, hi, field)
  if not (mean > lo and mean < hi) then
    util.raise("field '%s' must be a mean length in (%d, %d), got %s", field, lo, hi, fmt_num(mean))
  end
  local n = sharegpt_n
  local base = {}
  for i = 1, n do
    local x = (i - 0.5) / n * 100
    local j = math.floor(x)
    base[i] = q[j + 1] + (x - j) * (q[j + 2] - q[j + 1])
  end
  local target = math.floor(mean * n + 0.5)
  local floor, min, max = math.floor, math.min, math.max
  local function total(s)
    local t = 0
    for i = 1, n do t = t + min(hi, max(lo, floor(s * base[i]))) end
    return t
  end
  local a, b = 0, hi -- total(0) = lo * n <= target; total(hi) = hi * n >= target (base >= 1)
  for _ = 1, 100 do
    local m = (a + b) / 2
    if total(m) <= target then a = m else b = m end
  end
  local v, order = {}, {}
  for i = 1, n do
    local x = a * base[i]
    v[i] = min(hi, max(lo, floor(x)))
    if floor(x) >= lo and floor(x) < hi then order[#order + 1] = {i, x - floor(x)} end
  end
  table.sort(order, function(p, r) if p[2] ~= r[2] then return p[2] > r[2] end return p[1] < r[1] end)
  local left = target - total(a)
  for k = 1, math.min(left, #order) do
    local i = order[k][1]
    v[i] = v[i] + 1
  end
  return v
end

--- ShareGPT-like prompt and output lengths with the given means:
--- kv.workload.sharegpt{prompt_mean = 217, output_mean = 202} returns
--- {prompt = D, output = D}, two empirical distributions of 1000 lengths
--- each with the source's shape (the percentiles above) scaled to the mean
--- (an assumption: a run's own tokenizer and model move the means, the
--- shape is taken to scale with them) and vLLM's filters applied; the mean
--- is exact to 1/1000 token. Omitted, a mean is the source's (221.45
--- prompt, 195.98 output tokens). The source gives prompt and output pairs,
--- negatively correlated (Spearman -0.40 over the 1191 served requests);
--- kv.simulate draws the two independently, so the correlation is left out.
function M.sharegpt(t)
  t = t or {}
  opts_of(t, {prompt_mean = true, output_mean = true}, "sharegpt")
  local out = {}
  for _, k in ipairs{"prompt", "output"} do
    local field = k .. "_mean"
    local mean = t[field] ~= nil and number(t[field], field)
                 or (k == "prompt" and 283459 / 1280 or 233412 / 1191)
    local b = sharegpt_bounds[k]
    local q = k == "prompt" and sharegpt_prompt_q or sharegpt_output_q
    out[k] = dist({kind = "empirical", values = scaled_quantiles(q, mean, b[1], b[2], field)},
                  "sharegpt-" .. k .. "-mean" .. fmt_num(mean))
  end
  return out
end

-- a method called with something else as self: an error at the user's line
util.methods(Dist)

return M
