-- examples/memory_bound.lua: at which batch and context does decode turn
-- from memory-bound to compute-bound, per GPU?
--
-- Shows: the step time of kvplan (d:time, engine/core/roofline.c)
-- checking the claim "generation is memory-bound at typical context
-- lengths". A decode step of b sequences at context n runs the GEMMs of the
-- linear layers (the weights read once, 2 x active parameters x b FLOPs)
-- and attention (the KV of every sequence, b x n tokens); each kind of
-- kernel is bound by its bytes or its FLOPs at the achievable rates (the
-- default efficiency factors of kvplan.sim), and the step is compute-bound
-- when the kernels bound by their FLOPs take most of it. The weights are
-- shared by the batch, so a large enough batch turns the GEMMs
-- compute-bound; the KV is not shared, and attention does only
-- heads / kv_heads FLOPs per byte it reads (4 for Llama 3.1's GQA), so at
-- long contexts attention's bytes keep the step memory-bound at every batch.
--
-- Per GPU, model and context: the smallest batch at which the decode step
-- is compute-bound (0: none below 10^6), the most requests of that context
-- that fit in the KV pool (vLLM's budget rule), and the step at that batch.
-- The claim holds where no batch that fits is compute-bound.
--
-- Run: build/kvplan examples/memory_bound.lua

local kv = require "kvplan"

local cases = {
  {model = "llama-3.1-8b", tp = 1, gpus = {"l4", "a100-sxm-80gb", "h100-sxm", "h200", "mi300x"}},
  {model = "llama-3.1-70b", tp = 4, gpus = {"a100-sxm-80gb", "h100-sxm", "h200", "mi300x"}},
}
local contexts = {512, 2048, 8192, 32768}

local r = kv.report{columns = {
  "model", "gpu", "tp", "context", "compute_bound_from_batch", "max_concurrency",
  "bound_at_max_concurrency", {"tpot_ms_batch_1", precision = 3},
  {"tpot_ms_at_max", precision = 3}, {"tokens_per_s_at_max", precision = 0},
  {"kv_read_share_at_max", precision = 3}, "memory_bound_claim"}}

-- smallest batch whose decode step is compute-bound (steps grow linearly in
-- the batch, so the first one is found by bisection); 0 when none is
local function first_compute_bound(d, n)
  local hi = 1000000
  if d:time(n, hi).bound ~= "compute" then return 0 end
  local lo = 0
  while hi - lo > 1 do
    local mid = (lo + hi) // 2
    if d:time(n, mid).bound == "compute" then hi = mid else lo = mid end
  end
  return hi
end

for _, c in ipairs(cases) do
  for _, g in ipairs(c.gpus) do
    local d = kv.deploy{model = c.model, gpu = g, tp = c.tp}
    for _, n in ipairs(contexts) do
      local b = first_compute_bound(d, n)
      local m = d:ledger():max_concurrency(n)
      local at = d:time(n, math.max(m, 1))
      local claim
      if m == 0 then
        claim = "not one request of this context fits"
      elseif b == 0 then
        claim = "holds: memory-bound at every batch"
      elseif b > m then
        claim = string.format("holds: compute-bound only from batch %d; %d fit", b, m)
      else
        claim = string.format("does not hold from batch %d on", b)
      end
      r:row{model = c.model, gpu = g, tp = c.tp, context = n, compute_bound_from_batch = b,
            max_concurrency = m, bound_at_max_concurrency = m > 0 and at.bound or "",
            tpot_ms_batch_1 = d:time(n, 1).tpot_ms, tpot_ms_at_max = m > 0 and at.tpot_ms or 0,
            tokens_per_s_at_max = m > 0 and at.tokens_per_s or 0,
            kv_read_share_at_max = m > 0 and at.kv_read_share or 0, memory_bound_claim = claim}
    end
  end
end
r:close()
