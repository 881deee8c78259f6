-- scripts/best.lua: the cheapest deployments that serve a request shape:
-- `concurrency` requests of `context` tokens at once, searched over GPUs,
-- every tensor-parallel size the heads allow, pipeline stages, and weight
-- and KV cache formats (kv.best, stdlib/kvplan/best.lua).
--
-- Run:  kvplan best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16
--       kvplan best model=qwen3-32b context=32k concurrency=32 rank=cost prices=prices.csv
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required; `kvplan models` lists them)
--   context      tokens per request (default 0: the model's max_context;
--                32k = 32000 and 32K = 32768 as vLLM's --max-model-len)
--   concurrency  requests running at once (default 1)
--   gpus         GPU ids or aliases (default: every plannable GPU; a module
--                of several devices such as the MI250X counts as one device)
--   weights      weight formats to try (default native: the checkpoint's own)
--   kv           KV cache formats to try (default auto: the model's activation
--                dtype, as vLLM's kv_cache_dtype=auto)
--   tp, pp       sizes to try (default: every tp the heads allow; pp 1, 2, 3...)
--   max_gpus     most GPUs a deployment may use, tp x pp (default 64)
--   rank         gpus (fewest GPUs, then fewest stages), cost (GPUs x
--                price_per_hour) or concurrency (requests per GPU)
--   prices       CSV file with columns gpu, price_per_hour (USD per GPU-hour;
--                needed by rank=cost; no prices are built in)
--   tokens_per_s decode throughput the deployment must reach at `concurrency`
--                (default 0: none; kvplan's roofline step time, d:time)
--   top          ranked deployments shown (default 5)
--   all          true: every candidate tp x pp, not one a GPU and format
--   utilization  fraction of GPU memory the engine may use (default 0.9)
-- Activation peak and non-torch memory are predicted as kv.deploy does.
--
-- Output: the `top` deployments that serve the shape, by rank, then for
-- every other GPU and format its best deployment, or why none serves (when
-- nothing serves, only those rows, rank empty):
--   rank, gpu, tp, pp, gpus (tp x pp), weights, kv,
--   max_concurrency        requests of `context` tokens the deployment holds
--   requests_per_gpu       max_concurrency / gpus
--   cost_per_hour          gpus x price_per_hour (empty without prices)
--   tokens_per_s           decode throughput at `concurrency` (with a target)
--   weights_gib_per_gpu, kv_budget_gib_per_gpu   one GPU of the tightest stage
--   why                    what it lost on against rank 1, or why it does
--                          not serve the shape

local kv = require "kvplan"

local opt = kv.options(..., {
  model = kv.options.required "model=llama-3.1-70b", context = 0, concurrency = 1, gpus = {""},
  weights = {""}, kv = {""}, tp = {0}, pp = {0}, max_gpus = 64, rank = "gpus", prices = "",
  tokens_per_s = 0.0, top = 5, all = false, utilization = 0.9,
})
if opt.prices ~= "" then kv.gpus.load_prices(opt.prices) end
local ranked, shape = kv.best{
  model = opt.model, context = opt.context > 0 and opt.context or nil,
  concurrency = opt.concurrency, max_gpus = opt.max_gpus, rank = opt.rank,
  gpus = #opt.gpus > 0 and opt.gpus[1] ~= "" and opt.gpus or nil,
  weights = #opt.weights > 0 and opt.weights[1] ~= "" and opt.weights or nil,
  kv = #opt.kv > 0 and opt.kv[1] ~= "" and opt.kv or nil,
  tp = opt.tp[1] ~= 0 and opt.tp or nil, pp = opt.pp[1] ~= 0 and opt.pp or nil,
  tokens_per_s = opt.tokens_per_s, base = {utilization = opt.utilization},
}

local rows, shown = {}, {}
local function add(c, why)
  shown[c] = true
  rows[#rows + 1] = {
    rank = c.rank or "", gpu = c.gpu, tp = c.tp, pp = c.pp, gpus = c.gpus, weights = c.weights,
    kv = c.kv, max_concurrency = c.max_concurrency, requests_per_gpu = c.per_gpu,
    cost_per_hour = c.cost_per_hour or "", tokens_per_s = c.tokens_per_s or "",
    weights_gib_per_gpu = c.weights_gib,
    kv_budget_gib_per_gpu = c.kv_budget_gib, why = why or c.why,
  }
end
local best = {gpus = "best: fewest GPUs, then fewest pipeline stages", cost = "best: lowest cost per hour",
              concurrency = "best: most requests per GPU"}
for _, c in ipairs(ranked) do
  if c.rank and (c.rank <= opt.top or opt.all) then add(c, c.rank == 1 and best[shape.rank] or nil) end
end
if opt.all then
  for _, c in ipairs(ranked) do if not shown[c] then add(c) end end
else
  -- every other GPU and format: its best deployment, or why none serves
  local groups, order = {}, {}
  for _, c in ipairs(ranked) do
    local key = c.gpu .. "|" .. c.weights .. "|" .. c.kv
    if groups[key] == nil then groups[key] = {}; order[#order + 1] = key end
    local g = groups[key]
    g[#g + 1] = c
  end
  for _, key in ipairs(order) do
    local g, done = groups[key], false
    for _, c in ipairs(g) do done = done or shown[c] end
    if not done then
      if g[1].rank then
        add(g[1])
      else -- the largest candidate tried: the closest to serving
        local big = g[1]
        for _, c in ipairs(g) do
          if c.gpus > big.gpus or c.gpus == big.gpus and c.max_concurrency > big.max_concurrency then big = c end
        end
        add(big, string.format("no tp x pp up to %d GPUs serves %d x %d tokens; at %d GPUs: %s",
                               opt.max_gpus, shape.concurrency, shape.context, big.gpus, big.why))
      end
    end
  end
end
local r = kv.report{columns = {
  "rank", "gpu", "tp", "pp", "gpus", "weights", "kv", "max_concurrency",
  {"requests_per_gpu", precision = 2}, {"cost_per_hour", precision = 2},
  {"tokens_per_s", precision = 0},
  {"weights_gib_per_gpu", precision = 2}, {"kv_budget_gib_per_gpu", precision = 2}, "why",
}}
for _, row in ipairs(rows) do r:row(row) end
r:close()
