-- tests/bench/sweep.lua: shapes (b) and (d) of `make bench`: dense
-- full-attention models x GPUs x tp x context x concurrency, bf16 weights
-- and KV, vLLM's budget at 0.9 with no activation or overhead reserved (given
-- as 0, so nothing is predicted): many rows per deployment, all on C axes.
-- With lua=true (shape d) a Lua filter keeps the rows where at least one
-- request fits and a Lua column adds the KV budget per request; with
-- decl=true (shape d2) the same filter is declarative, {max_concurrency =
-- {">=", 1}}, evaluated in C (no Lua column); with empty=true (the floor of
-- a Lua call per row) a filter that reads nothing and keeps every row.
-- Arguments: contexts=N (context values 512, 1024, ... N * 512), lua=true, decl=true, empty=true,
-- inputs=FILE (write the model and GPU facts for the baselines there and stop).
local kv = require "kvplan"
local o = kv.options(..., {contexts = 250, inputs = "", lua = false, decl = false,
                             empty = false})

local models = {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b",
                "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b", "qwen2.5-7b", "qwen2.5-72b"}
local gpus = {}
for _, g in ipairs(kv.gpus.all()) do
  if g.memory_basis == "visible" then gpus[#gpus + 1] = g.id end
end

if o.inputs ~= "" then
  local f = assert(io.open(o.inputs, "w"))
  for _, id in ipairs(models) do
    local m = kv.model(id)
    -- the parameters every TP rank holds whole (the norms of these families)
    local r = m:replicated_params()
    f:write(string.format("model %s %d %d %d %d %d %d %d %d\n", m.id, m.layers, m.heads,
                          m.kv_heads, m.head_dim, m:layer(1).head_dim_v, m.params, m.max_context,
                          r.attention.params + r.other))
  end
  for _, id in ipairs(gpus) do
    f:write(string.format("gpu %s %d\n", id, kv.gpu(id).visible_bytes))
  end
  f:write(string.format("contexts %d\n", o.contexts))
  f:close()
  return
end

local ctx = {}
for i = 1, o.contexts do ctx[i] = 512 * i end
local columns = {"model", "gpu", "tp", "context", "concurrency", "kv_bytes_per_token",
                 "kv_budget_gib", "max_concurrency", "fits"}
local filter
if o.lua then
  columns[#columns + 1] = {"budget_per_request", function(r) return r.kv_budget_bytes // r.concurrency end}
  filter = function(r) return r.max_concurrency >= 1 end
elseif o.decl then
  filter = {max_concurrency = {">=", 1}}
elseif o.empty then
  filter = function() return true end
end
local no_rope = dofile("tests/bench/no_rope.lua")
local swept = {}
for i, id in ipairs(models) do swept[i] = no_rope(id) end
kv.sweep{model = swept, gpu = gpus, tp = {1, 2, 4, 8}, context = ctx,
         concurrency = {1, 2, 4, 8, 16, 32, 64, 128},
         kv = "bf16", weights = "bf16", base = {utilization = 0.9, activation = 0, overhead = 0},
         columns = columns, filter = filter}:write()
