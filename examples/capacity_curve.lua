-- examples/capacity_curve.lua: the capacity curve, how many requests of a
-- given context fit at once, for Llama-3.1-8B on four GPUs with bf16 and
-- fp8 KV cache: one line per GPU and KV format, contexts 1K to 128K (two
-- decades: kv.plot draws both axes logarithmic, where 1/context is a
-- straight line). The curve falls as 1/context until one request no longer
-- fits.
--
-- Run:  kvplan examples/capacity_curve.lua                      (the CSV report)
--       kvplan examples/capacity_curve.lua chart=capacity.png   (and the chart)

local kv = require "kvplan"

local opt = kv.options(..., {chart = ""})
local gpus = {"h100-sxm", "a100-sxm-80gb", "l40s", "l4"}
local formats = {"bf16", "fp8"}
local contexts = {}
for i = 0, 14 do contexts[#contexts + 1] = math.floor(1024 * 2 ^ (i / 2) / 16 + 0.5) * 16 end

local rows = {}
for _, g in ipairs(gpus) do
  for _, f in ipairs(formats) do
    local d = kv.deploy{model = "llama-3.1-8b", gpu = g, kv = f}
    local l = d:ledger()
    for _, c in ipairs(contexts) do
      rows[#rows + 1] = {
        model = d.model.id, gpu = d.gpu.id, kv = d.kv.name, series = d.gpu.id .. " kv " .. d.kv.name, context = c,
        kv_tokens = l.kv_tokens, max_concurrency = l:max_concurrency(c),
      }
    end
  end
end

local r = kv.report{columns = {"model", "series", "gpu", "kv", "context", "kv_tokens", "max_concurrency"}}
for _, row in ipairs(rows) do r:row(row) end
r:close()

if opt.chart ~= "" then
  -- the title, the axes' labels and their logarithmic scales come from the
  -- data (kv.plot): "Llama-3.1-8B: max concurrency vs context"
  kv.plot{data = rows, x = "context", y = "max_concurrency", by = "series", kind = "line",
          output = opt.chart}
end
