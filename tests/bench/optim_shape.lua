-- tests/bench/optim_shape.lua: shape (c) of `make bench`: optimization
-- combinations (none, fp8 KV, contiguous allocation, SGLang's budget and
-- their pairs) over hybrid models (Gemma 2 and 3, gpt-oss: sliding-window
-- and full layers in vLLM's KV cache groups) and MLA models (DeepSeek-V2-Lite,
-- V3) x 10 GPUs x tp 1, 2 x 128 contexts x concurrency 1..16. Activation 0 and 1 GiB
-- overhead given (nothing predicted), max_model_len 8192, utilization 0.9.
-- Arguments: contexts=N (64, 128, ... N * 64, at most 128), inputs=FILE
-- (write the facts the baselines read there and stop).
local kv = require "kvplan"
local o = kv.options(..., {contexts = 128, inputs = ""})
local opt = kv.optim

local models = {"gemma-2-9b", "gemma-3-27b", "gpt-oss-20b", "deepseek-v2-lite", "deepseek-v3"}
local gpus = {}
for _, g in ipairs(kv.gpus.all()) do
  if g.memory_basis == "visible" and g.visible_bytes >= 40e9 and #gpus < 10 then gpus[#gpus + 1] = g.id end
end
local combos = {opt.none, opt.kv_quant "fp8", opt.contiguous{}, {opt.kv_quant "fp8", opt.contiguous{}},
                opt.budget "sglang", {opt.budget "sglang", opt.kv_quant "fp8"}}
local ctx = {}
for i = 1, math.min(o.contexts, 128) do ctx[i] = 64 * i end
local conc = {}
for i = 1, 16 do conc[i] = i end
-- utilization 0.9 given: the baselines take vLLM's budget at 0.9 (the releases
-- before 0.20; the default release's is 0.92)
local base = {activation = 0, overhead = "1 GiB", max_model_len = 8192, utilization = 0.9}

if o.inputs ~= "" then
  local f = assert(io.open(o.inputs, "w"))
  for _, id in ipairs(models) do
    local d = kv.deploy{model = id, gpu = gpus[1], activation = 0, overhead = "1 GiB",
                        max_model_len = 8192}
    local m, k = d.model, d.kv
    -- weights on one GPU under vLLM's and SGLang's rules at tp 1 and 2 as kvplan
    -- gives them (vLLM's loading of MXFP4 experts for gpt-oss included, which
    -- differs by GPU: Triton's layout on Hopper from vLLM 0.20): facts the
    -- baselines take as they are, the cmodel line's on the first GPU, a
    -- cweights line's on each GPU
    local function weights(gpu)
      local w = {}
      for _, budget in ipairs{"vllm", "sglang"} do
        for tp = 1, 2 do
          w[#w + 1] = kv.deploy{model = id, gpu = gpu, activation = 0, overhead = "1 GiB",
                                max_model_len = 8192, tp = tp, budget = budget}:ledger().weights
        end
      end
      return w
    end
    local w = weights(gpus[1])
    f:write(string.format("cmodel %s %d %d %d %d %d %d %d %d %d\n", m.id, m.heads, w[1], w[2],
                          w[3], w[4], k.bits, k.group, k.scale, k.zero))
    for _, gpu in ipairs(gpus) do
      local gw = weights(gpu)
      f:write(string.format("cweights %s %d %d %d %d\n", gpu, gw[1], gw[2], gw[3], gw[4]))
    end
    local shapes, order = {}, {} -- distinct layer shapes in order, with their counts
    for i = 1, m.layers do
      local l = m:layer(i)
      local key = string.format("%s %d %d %d %d %d %d", l.kind, l.window or 0, l.kv_heads or 0,
                                l.head_dim or 0, l.head_dim_v or 0, l.kv_lora_rank or 0,
                                l.rope_dim or 0)
      if not shapes[key] then shapes[key], order[#order + 1] = 0, key end
      shapes[key] = shapes[key] + 1
    end
    for _, key in ipairs(order) do f:write(string.format("shape %s %d\n", key, shapes[key])) end
  end
  for _, id in ipairs(gpus) do f:write(string.format("gpu %s %d\n", id, kv.gpu(id).visible_bytes)) end
  for _, c in ipairs(combos) do f:write("combo " .. opt.name(c) .. "\n") end
  f:write("ctx " .. table.concat(ctx, " ") .. "\n")
  f:write("conc " .. table.concat(conc, " ") .. "\n")
  f:close()
  return
end

kv.sweep{model = models, gpu = gpus, optim = combos, tp = {1, 2}, context = ctx, concurrency = conc,
         base = base,
         columns = {"model", "gpu", "optim", "tp", "context", "concurrency", "kv_budget_gib",
                    "max_concurrency", "fits"}}:write()
