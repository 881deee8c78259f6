-- examples/ledger_bars.lua: where the memory of one GPU goes, for five ways
-- to serve Llama-3.1-70B with 16 requests of 32K tokens: weights, the KV the
-- requests take, the KV left free, activation peak, non-torch overhead and
-- the margin vLLM holds back; for a deployment the requests do not fit, the
-- KV they lack stacked above the GPU (kv_short). One stacked bar per
-- deployment.
--
-- Run:  kvplan examples/ledger_bars.lua                    (the CSV report)
--       kvplan examples/ledger_bars.lua chart=ledger.png   (and the chart)

local kv = require "kvplan"

local opt = kv.options(..., {chart = ""})
local context, concurrency = 32768, 16
local deployments = {
  {gpu = "h100-sxm", tp = 4, kv = "bf16"},
  {gpu = "h100-sxm", tp = 4, kv = "fp8"},
  {gpu = "h100-sxm", tp = 8, kv = "bf16"},
  {gpu = "h200", tp = 2, kv = "fp8"},
  {gpu = "h200", tp = 4, kv = "bf16"},
}

local rows = {}
for _, t in ipairs(deployments) do
  local d = kv.deploy{model = "llama-3.1-70b", gpu = t.gpu, tp = t.tp, kv = t.kv}
  local label = string.format("%s tp %d kv %s", d.gpu.id, d.tp, d.kv.name)
  for _, it in ipairs(kv.report.ledger_items(d, context, concurrency)) do
    -- model, context and concurrency, one value in every row, make the chart's title
    rows[#rows + 1] = {deployment = label, item = it.item, gib_per_gpu = it.bytes / kv.units.GiB,
                       note = it.note, model = d.model.id, context = context,
                       concurrency = concurrency}
  end
end

local r = kv.report{columns = {"deployment", "item", {"gib_per_gpu", precision = 2}, "note"}}
for _, row in ipairs(rows) do
  r:row{deployment = row.deployment, item = row.item, gib_per_gpu = row.gib_per_gpu, note = row.note}
end
r:close()

if opt.chart ~= "" then
  -- the title ("Llama-3.1-70B, 16 requests of 32768 tokens: memory per GPU by
  -- deployment") and the axis labels come from the data (kv.plot)
  kv.plot{data = rows, x = "deployment", y = "gib_per_gpu", by = "item", kind = "stacked",
          order = {"weights", "kv_used", "kv_free", "activation", "overhead", "margin", "kv_short"},
          output = opt.chart, width = 900, height = 500}
end
