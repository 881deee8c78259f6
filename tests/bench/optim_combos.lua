-- tests/bench/optim_combos.lua: what a change of optimization combination
-- costs in a sweep (docs/speed.md). The 32 subsets of five built-ins of a
-- fixed effect (fp8 KV, contiguous allocation, a 1024-token shared prefix,
-- StreamingLLM, parallel sampling) over up to 20 dense full-attention
-- catalog models x 40 GPUs, one row per deployment. mode=c (default): the
-- built-ins, an optim axis looped in C; mode=lua: the same members copied
-- into optimizations of one's own, which each deployment applies in Lua.
-- Both write the same bytes. n=N: the first N combinations.
local kv = require "kvplan"
local o = kv.optim
local a = kv.options(..., {n = 32, mode = "c"})
if a.mode ~= "c" and a.mode ~= "lua" then error("mode must be c or lua, got " .. tostring(a.mode)) end
local all = o.subsets{o.kv_quant "fp8", o.contiguous{}, o.prefix{tokens = 1024},
                      o.streaming{sinks = 4, recent = 2048}, o.parallel_sampling{n = 4, output = 256}}
local combos = {}
for i = 1, math.min(a.n, #all) do
  local c = all[i]
  if a.mode == "lua" then
    local ms = {}
    for j, m in ipairs(o.combine(c).members) do
      local t = {}
      for k, v in pairs(m) do t[k] = v end
      ms[j] = o.define(t)
    end
    c = o.combine(ms)
  end
  combos[i] = c
end
local models = {}
for _, m in ipairs(kv.models.all()) do
  if #models < 20 and m.layers and (m:kinds().full or 0) == m.layers and not m.experts then
    models[#models + 1] = m.id
  end
end
local gpus = {}
for _, g in ipairs(kv.gpus.all()) do
  if g.memory_basis == "visible" and #gpus < 40 then gpus[#gpus + 1] = g.id end
end
kv.sweep{model = models, gpu = gpus, optim = combos, context = {4096}, concurrency = {4},
         base = {activation = 0, overhead = "1 GiB", max_model_len = 8192, utilization = 0.9},
         columns = {"model", "gpu", "optim", "kv", "kv_budget_bytes", "max_concurrency"}}:write()
