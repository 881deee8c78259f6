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
-- lengths in decimal, as the command line's integers ('1e3' and '0x10' were
-- 1000 and 16, Lua's tonumber)
for _, cell in ipairs{"1e3", "0x10"} do
  fh = assert(io.open(lf, "w"))
  fh:write("tokens\n100\n" .. cell .. "\n")
  fh:close()
  check.error(lf .. ":3: length '" .. cell .. "' in column 'tokens' must be a whole number written in decimal",
              w.empirical, {path = lf, column = "tokens"})
end
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

-- ShareGPT as vLLM's client samples it: the means asked for, exact to
-- 1/1000 token; the source's percentiles (workload.lua: P50 102, P90 618,
-- P99 782 prompt tokens; P50 146, P90 474, P99 768 output tokens) at its
-- own means; half the means halve them; vLLM's filters bound every length
do
  local function pct(d, p)
    local v = {}
    for i, x in ipairs(d.values) do v[i] = x end
    table.sort(v)
    return v[math.max(1, math.ceil(p * #v / 100))], v[1], v[#v]
  end
  local function near(got, want, tol, what)
    assert(math.abs(got - want) <= tol, string.format("%s: %s, expected %s +- %s", what, got, want, tol))
  end
  local g = w.sharegpt{prompt_mean = 217, output_mean = 202}
  check.eq(g.prompt:mean(), 217.0, "sharegpt prompt mean")
  check.eq(g.output:mean(), 202.0, "sharegpt output mean")
  near(w.sharegpt{prompt_mean = 233.3}.prompt:mean(), 233.3, 0.0005, "a fractional mean")
  local src = w.sharegpt()
  near(src.prompt:mean(), 283459 / 1280, 0.0005, "the source's prompt mean by default")
  near(src.output:mean(), 233412 / 1191, 0.0005, "the source's output mean by default")
  for _, c in ipairs{{"prompt", 50, 102}, {"prompt", 90, 618}, {"prompt", 99, 782},
                     {"output", 50, 146}, {"output", 90, 474}, {"output", 99, 768}} do
    near(pct(src[c[1]], c[2]), c[3], 0.01 * c[3] + 1, c[1] .. " P" .. c[2])
  end
  local half = w.sharegpt{prompt_mean = 283459 / 2560, output_mean = 233412 / 2382}
  near(pct(half.prompt, 50), 51, 2, "half the prompt mean: P50")
  near(pct(half.prompt, 90), 309, 4, "half the prompt mean: P90")
  near(pct(half.output, 50), 73, 2, "half the output mean: P50")
  local long = w.sharegpt{prompt_mean = 900, output_mean = 1500}
  local _, lo, hi = pct(long.prompt, 50)
  assert(lo >= 4 and hi == 1024, "prompt lengths in 4..1024, got " .. lo .. ".." .. hi)
  _, lo, hi = pct(long.output, 50)
  assert(lo >= 1 and hi == 2044, "output lengths in 1..2044, got " .. lo .. ".." .. hi)
  check.eq(long.prompt:mean(), 900.0, "a clamped distribution keeps its mean")
  check.eq(table.concat(g.prompt:sample(50, 7), ","), table.concat(w.sharegpt{prompt_mean = 217}.prompt:sample(50, 7), ","),
           "same seed, same lengths")
  check.error("field 'prompt_mean' must be a mean length in (4, 1024), got 1100", w.sharegpt, {prompt_mean = 1100})
  check.error("field 'output_mean' must be a finite number, got x", w.sharegpt, {output_mean = "x"})
  check.error("unknown field 'prompt' in sharegpt (did you mean 'prompt_mean'?)", w.sharegpt, {prompt = 10})
end
