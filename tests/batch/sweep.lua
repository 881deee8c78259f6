-- shard test: a sweep of a few thousand rows, a Lua column and a filter
local kv = require "kvplan"
local o = kv.options(..., {lua = false})
local ctx = {}
for i = 1, 40 do ctx[i] = 1024 * i end
local cols = {"model", "gpu", "tp", "kv", "context", "concurrency", "kv_budget_gib",
              "kv_bytes_per_token", "max_concurrency", "max_context", "fits", "limit", "why"}
local filter
if o.lua then
  cols[#cols + 1] = {"free_slots", function(r) return r.max_concurrency - r.concurrency end}
  filter = function(r) return r.tp ~= 2 end
end
kv.sweep{model = {"llama-3.1-8b", "qwen3-32b", "gemma-2-9b"}, gpu = {"h100-sxm", "l40s", "a100-sxm-80gb"},
         tp = {1, 2, 4}, kv = {"bf16", "fp8"}, context = ctx, concurrency = {1, 8, 64},
         base = {overhead = "1 GiB"}, columns = cols, filter = filter}:write()
