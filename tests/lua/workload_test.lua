-- tests/lua/workload_test.lua: request-length distributions (kv.workload):
-- means, points, seeded samples, CSV columns, errors, the points cache.
local kv = require "kvplan"
local check = require "check"
local w = kv.workload

-- distributions: deterministic samples; normal and lognormal points
local s1, s2 = w.lognormal{median = 2000, sigma = 1, max = 32768}:sample(1000, 42),
               w.lognormal{median = 2000, sigma = 1, max = 32768}:sample(1000, 42)
check.eq(table.concat(s1, ","), table.concat(s2, ","), "same seed, same lengths")
for _, v in ipairs(s1) do assert(v >= 1 and v <= 32768, v) end
check.eq(w.normal{mean = 1000, sd = 100}:points(2)[1], 920, "normal lower half")
check.eq(w.empirical{400, 100, 300, 200}:points(2)[2], 350, "empirical")
check.eq(w.lognormal{mean = 2000, sd = 1000}:mean() // 1, 1999, "lognormal from mean and sd")

-- an empirical distribution from a CSV column
local lf = os.tmpname()
local fh = assert(io.open(lf, "w"))
fh:write("id,tokens\n1,100\n2,300\n3,200\n")
fh:close()
local emp = w.empirical{path = lf, column = "tokens"}
check.eq(emp:mean(), 200.0, "mean of the column")
check.eq(table.concat(emp:points(3), " "), "100 200 300", "sorted points")
fh = assert(io.open(lf, "w"))
fh:write("tokens\n100\nabc\n")
fh:close()
check.error(lf .. ":3: bad length 'abc' in column 'tokens'", w.empirical, {path = lf, column = "tokens"})
check.error("no column 'token' (did you mean 'tokens'?)", w.empirical, {path = lf, column = "token"})
os.remove(lf)

-- invalid parameters: the field and the value, never NaN
check.error("field 'min' must be an integer >= 1, got -5", w.uniform, {min = -5, max = 10})
check.error("field 'values': length -3 is outside 1..2^40", w.empirical, {5, -3})
check.error("field 'sd' must be a number in (0, 1e+15], got -1", w.normal, {mean = 100, sd = -1})
check.error("field 'sigma' must be a finite number, got nan", w.lognormal, {median = 100, sigma = 0 / 0})

-- the names kv.optim gave them are the same functions
check.eq(kv.optim.lognormal, w.lognormal, "kv.optim.lognormal")
check.eq(kv.optim.Distribution, w.Distribution, "kv.optim.Distribution")

-- an empirical distribution is reduced to its points once, whatever the
-- deployments that use it (optim_core.dist_points called once per k)
do
  local oc = require "kvplan.optim_core"
  local real, calls = oc.dist_points, 0
  oc.dist_points = function(...) calls = calls + 1; return real(...) end
  local vals = {}
  for i = 1, 5000 do vals[i] = (i * 7919) % 30000 + 1 end
  local e = w.empirical{values = vals}
  local first = e:points()
  for _, gpu in ipairs{"h100-sxm", "h200", "l4"} do
    kv.deploy{model = "llama-3.1-8b", gpu = gpu, max_model_len = 32768,
              optim = kv.optim.continuous{lengths = e}}
  end
  local again = e:points()
  oc.dist_points = real
  assert(calls == 1, "points computed " .. calls .. " times")
  assert(#first == 32 and #again == 32, "32 points")
  for i = 1, 32 do assert(first[i] == again[i], "same points") end
  again[1] = -1
  assert(e:points()[1] == first[1], "a caller's copy does not change the kept points")
end
