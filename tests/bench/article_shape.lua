-- tests/bench/article_shape.lua: shape (a) of `make bench`, the article-shaped
-- sweep: the rule of the article that examples/recompute_article_ledger.lua
-- checks (utilization 0.95, i.e. 5 % safety; 2 GiB overhead;
-- no activation term; each request reserves its whole sequence length,
-- contiguously) over every catalog model of full-attention layers only x 20
-- GPUs x `lens` sequence lengths (max_model_len 1024, 2048, ...) x 3 KV
-- formats x 3 weight formats x concurrency 1..16: many deployments, few rows
-- each. Arguments: lens=N, models=N (the model list N times over: N times
-- the deployments built in Lua, for the peak memory line), inputs=FILE
-- (write the facts the baselines read there and stop).
local kv = require "kvplan"
local o = kv.options(..., {lens = 10, models = 1, inputs = ""})

local models = {}
for _, m in ipairs(kv.models.all()) do
  if m.core:kinds().full == m.layers and m.params then models[#models + 1] = m.id end
end
local nmodel = #models
for _ = 2, o.models do
  for i = 1, nmodel do models[#models + 1] = models[i] end
end
local gpus = {}
for _, g in ipairs(kv.gpus.all()) do
  if g.memory_basis == "visible" and #gpus < 20 then gpus[#gpus + 1] = g.id end
end
local lens, conc = {}, {}
for i = 1, o.lens do lens[i] = 1024 * i end
for i = 1, 16 do conc[i] = i end
local kvf, wf = {"bf16", "fp8", "int4-g64"}, {"bf16", "fp8", "int4-g128"}

if o.inputs ~= "" then
  local f = assert(io.open(o.inputs, "w"))
  for _, id in ipairs(models) do
    local m = kv.model(id)
    f:write(string.format("model %s %d %d %d %d %d %d %d\n", m.id, m.layers, m.heads, m.kv_heads,
                          m.head_dim, m:layer(1).head_dim_v, m.params, m.max_context or 0))
  end
  for _, id in ipairs(gpus) do f:write(string.format("gpu %s %d\n", id, kv.gpu(id).visible_bytes)) end
  for _, set in ipairs{{"kv", kvf}, {"weights", wf}} do
    for _, name in ipairs(set[2]) do
      local x = kv.formats.get(name)
      f:write(string.format("%s %s %d %d %d %d\n", set[1], x.name, x.bits, x.group, x.scale, x.zero))
    end
  end
  f:write("lens " .. table.concat(lens, " ") .. "\n")
  f:write("conc " .. table.concat(conc, " ") .. "\n")
  f:close()
  return
end

local no_rope = dofile("tests/bench/no_rope.lua")
local swept = {}
for i, id in ipairs(models) do swept[i] = no_rope(id) end
kv.sweep{model = swept, gpu = gpus, max_model_len = lens, kv = kvf, weights = wf, concurrency = conc,
         base = {utilization = 0.95, overhead = "2 GiB", activation = 0, allocation = "contiguous"},
         columns = {"model", "gpu", "max_model_len", "kv", "weights", "concurrency", "weights_gib",
                    "kv_budget_gib", "seq_bytes", "max_concurrency", "fits"}}:write()
