-- examples/hybrid_groups.lua: vLLM's hybrid KV cache groups against a
-- per-layer ideal, for five hybrid models on one H100 each.
--
-- Shows: for Gemma-3-27B (52 sliding + 10 full layers), Gemma-2-9B (21 + 21),
-- gpt-oss-20b (12 + 12), Llama-4-Scout (36 chunked + 12 full) and
-- Qwen3-Next-80B-A3B (36 Gated DeltaNet + 12 full), how vLLM V1 groups the
-- layers (group size, groups, padded layer slots), the block it uses, its
-- num_blocks and the "GPU KV cache size" it logs, and the requests that fit
-- at a few contexts; beside them the same answers for a per-layer ideal
-- allocator: one pool, every layer holding its own 16-token pages (what
-- kvplan computed for vLLM before it followed the grouping, and what it still
-- computes under SGLang's and TensorRT-LLM's budgets).
--
-- How vLLM groups (engine/core/ledger.c has the rules and their sources):
-- layers of one KV spec are one type; the group size is the fewest layers of
-- a type (the most, when that is below 1.5 times the fewest); a type of c
-- layers makes ceil(c / group size) groups. Every GPU holds group-size
-- tensors of num_blocks pages that the groups share, so one block costs
-- page x group size, and a request takes blocks in every group: a full group
-- ceil(n / block), a sliding group the window's, a chunked group the
-- chunk's, a Mamba group one padded page. Mamba models raise the block until
-- one attention page holds a state (544 tokens for Qwen3-Next at tp 1, 272
-- at tp 4). The figures read back from the ledger:
--   groups     = l:request_bytes(1) // l.block_bytes (a request's first token
--                takes one block in every group)
--   group_size = l.block_bytes // page, page = block x the KV bytes of one
--                token of the largest attention layer
--   logged     = kv_blocks // groups x block, vLLM's "GPU KV cache size"
--
-- Inputs: the H100 of kvplan's GPU catalog, vLLM's budget as the newest release
-- modelled runs it, no release named (utilization 0.92; engine_version = "0.11"
-- reproduces 0.11's 0.9 and startup check),
-- 1 GiB of activation peak and 1 GiB of non-torch memory per GPU (the
-- defaults of scripts/fit.lua, inside the ranges vLLM's logs show), bf16 KV,
-- decode steps (max_num_batched_tokens 1). Llama-4-Scout (215 GB of bf16
-- weights) and Qwen3-Next (159 GB) run at tensor parallelism 4.
--
-- Run: build/kvplan examples/hybrid_groups.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

local cases = {
  {model = "gemma-3-27b", tp = 1},
  {model = "gemma-2-9b", tp = 1},
  {model = "gpt-oss-20b", tp = 1},
  {model = "llama-4-scout", tp = 4},
  {model = "qwen3-next-80b-a3b", tp = 4},
}
local contexts = {8192, 32768, 131072}

local function deployment(c)
  return kv.deploy{model = c.model, gpu = "h100", tp = c.tp, activation = "1 GiB",
                   overhead = "1 GiB"}
end

-- The model's distinct layer shapes, in order: {shape, count, key}.
local function shapes(m)
  local list, by_key = {}, {}
  for i = 1, m.layers do
    local s = m:layer(i)
    local key = string.format("%s/%s/%s/%s/%s/%s", s.kind, s.window, s.kv_heads, s.head_dim,
                              s.head_dim_v, s.state_bytes)
    if by_key[key] == nil then
      by_key[key] = {shape = s, count = 0}
      list[#list + 1] = by_key[key]
    end
    by_key[key].count = by_key[key].count + 1
  end
  return list
end

-- A one-layer deployment of shape s on d's GPU: its ledger gives that
-- layer's page and blocks by the per-layer rule (one KV type: unchanged).
local function one_layer(d, s)
  local run = {kind = s.kind, n = 1, window = s.window, kv_heads = s.kv_heads,
               head_dim = s.head_dim, head_dim_v = s.head_dim_v}
  if s.kind == "state" then
    run = {kind = "state", n = 1, state_bytes = s.state_bytes, state_heads = s.kv_heads}
  end
  local m = kv.model{id = d.model.id .. "-one-layer", layers = 1, hidden = d.model.hidden,
                     heads = d.model.heads, kv_heads = d.model.kv_heads,
                     head_dim = d.model.head_dim, params = 0, layer_kinds = {run}}
  return kv.deploy{model = m, gpu = "h100", tp = d.tp, kv = d.kv, weight_bytes = 0}:ledger()
end

-- The per-layer ideal on d's KV budget: a block is one 16-token page of
-- every attention layer, a request every layer's blocks and every state.
local function ideal(d, list)
  local block_bytes, ones = 0, {}
  for i, e in ipairs(list) do
    ones[i] = one_layer(d, e.shape)
    -- a state is no page of the ideal pool (vLLM pages the states of a
    -- model of recurrent layers alone, as this one-layer ledger is)
    if e.shape.kind ~= "state" then block_bytes = block_bytes + e.count * ones[i].block_bytes end
  end
  local budget = d:ledger().kv_budget
  local blocks = budget // block_bytes
  local t = {blocks = blocks, tokens = (blocks - 1) * 16}
  function t.concurrency(n)
    local seq = 0
    for i, e in ipairs(list) do seq = seq + e.count * ones[i]:seq_bytes(n) end
    return (budget - block_bytes) // seq
  end
  return t, ones
end

local function describe(list)
  local parts = {}
  for _, e in ipairs(list) do
    local s = e.shape
    parts[#parts + 1] = string.format("%d %s%s", e.count, s.kind,
                                      s.window and (":" .. s.window) or "")
  end
  return table.concat(parts, " + ")
end

local r = kv.report{columns = {
  "model", "tp", "layers", {"kv_budget_gib", precision = 2}, "block", "group_size", "groups",
  "padded_slots", "num_blocks", "vllm_logged_tokens", "context", "vllm_concurrency",
  "ideal_blocks", "ideal_kv_tokens", "ideal_concurrency", {"vllm_vs_ideal_pct", precision = 1}}}

for _, c in ipairs(cases) do
  local d = deployment(c)
  local l = d:ledger()
  local list = shapes(d.model)
  local id, ones = ideal(d, list)
  -- the page: vLLM's block x the largest attention layer's bytes a token
  local token = 0
  for i, e in ipairs(list) do
    if e.shape.kind ~= "state" then token = math.max(token, ones[i].kv_bytes_per_token) end
  end
  local page = l.block * token
  local groups = l:request_bytes(1) // l.block_bytes
  local group_size = l.block_bytes // page
  assert(group_size * page == l.block_bytes, "block_bytes is not a whole number of pages")
  local kv_layers = 0
  for _, e in ipairs(list) do kv_layers = kv_layers + e.count end
  for _, n in ipairs(contexts) do
    if n <= l.max_model_len then
      local conc, ideal_conc = l:max_concurrency(n), id.concurrency(n)
      r:row{
        model = c.model, tp = c.tp, layers = describe(list), kv_budget_gib = l.kv_budget / GiB,
        block = l.block, group_size = group_size, groups = groups,
        padded_slots = groups * group_size - kv_layers, num_blocks = l.kv_blocks,
        vllm_logged_tokens = l.kv_blocks // groups * l.block, context = n,
        vllm_concurrency = conc, ideal_blocks = id.blocks, ideal_kv_tokens = id.tokens,
        ideal_concurrency = ideal_conc,
        vllm_vs_ideal_pct = ideal_conc > 0 and 100 * (conc - ideal_conc) / ideal_conc or "",
      }
    end
  end
end

r:close()
