-- tests/lua/catalog_test.lua: the built-in model and GPU catalogs. Every
-- model's per-token KV bytes is recomputed here from its own config fields,
-- independently of engine/core/kv.c; the issue's required entries, their sources
-- and the lookups are checked.
local kv = require "kvplan"
local check = require "check"

local models, gpus = kv.models.all(), kv.gpus.all()

-- ---- counts and ids -------------------------------------------------------------
assert(#models >= 40, "at least 40 models, got " .. #models)
assert(#gpus >= 20, "at least 20 GPUs, got " .. #gpus)

local function unique_ids(list, what)
  local seen = {}
  for _, e in ipairs(list) do
    local k = e.id:lower()
    assert(not seen[k], what .. " id '" .. e.id .. "' appears twice")
    seen[k] = true
  end
end
unique_ids(models, "model")
unique_ids(gpus, "gpu")

-- ---- per-token KV bytes, computed from the entry's fields ------------------------
-- Per layer and token (vLLM kv_cache_interface.py; TP: vLLM get_num_kv_heads):
--   full / sliding / chunked / cross  kv_heads_per_gpu * (head_dim + head_dim_v) * b,
--                             kv_heads_per_gpu = max(1, kv_heads // tp)
--   mla                       (kv_lora_rank + rope_dim) * b on every rank
--   state / none              0 (a state is per sequence, not per token)
-- layer_kinds is a list of runs {kind, n} repeated from layer 0 until `layers`.
local B = 2 -- bytes per bf16 element

local function expected_kv(m, tp)
  local heads = m.heads
  local kv_heads = m.kv_heads or heads
  local head_dim = m.head_dim or m.hidden // heads
  local head_dim_v = m.head_dim_v or head_dim
  local mla = m.mla
  local runs = m.layer_kinds
  if runs == nil then
    runs = {{kind = mla and "mla" or "full", n = 1}}
  end
  local per_run = {}
  for i, r in ipairs(runs) do
    local kind = r.kind
    local bytes
    if kind == "full" or kind == "sliding" or kind == "chunked" or kind == "cross" then
      local h = r.kv_heads or kv_heads
      local dk = r.head_dim or head_dim
      local dv = r.head_dim_v or r.head_dim or head_dim_v
      bytes = math.max(1, h // tp) * (dk + dv) * B
    elseif kind == "mla" then
      bytes = ((r.kv_lora_rank or mla.kv_lora_rank) + (r.rope_dim or mla.rope_dim or 0)) * B
      -- a sparse-attention indexer's keys: fp8 plus an fp32 scale per 128,
      -- whatever the KV format (vLLM DeepseekV32IndexerCache)
      local idx = mla.index_head_dim
      if idx then bytes = bytes + idx + idx // 128 * 4 end
    elseif kind == "state" or kind == "none" then
      bytes = 0
    else
      error(m.id .. ": unexpected layer kind " .. tostring(kind))
    end
    per_run[i] = bytes
  end
  local total, layer = 0, 0
  while layer < m.layers do
    for i, r in ipairs(runs) do
      for _ = 1, r.n or 1 do
        if layer == m.layers then break end
        total = total + per_run[i]
        layer = layer + 1
      end
    end
  end
  return total
end

for _, m in ipairs(models) do
  check.eq(m:kv_bytes_per_token("bf16"), expected_kv(m, 1), m.id .. " bf16 per token")
  check.eq(m:kv_bytes_per_token("bf16", 8), expected_kv(m, 8), m.id .. " bf16 per token at tp 8")
  -- fp8 is exactly half of bf16 for every kind (1 byte per element)
  local idx = m.mla and m.mla.index_head_dim
  local fixed = idx and m.layers * (idx + idx // 128 * 4) or 0
  check.eq((m:kv_bytes_per_token("fp8") - fixed) * 2, m:kv_bytes_per_token("bf16") - fixed,
           m.id .. " fp8")
end

-- The issue's anchors. Llama: each rank holds max(1, 8 // tp) of the 8 KV
-- heads, so ranks x bytes per rank is the model's total up to tp 8, and beyond
-- it the extra ranks hold copies (tp 16: 16 ranks, 8 distinct heads).
-- DeepSeek-V3: the MLA latent (61 layers x 576 x 2 B) is on every rank.
for _, tp in ipairs{1, 2, 4, 8, 16} do
  local distinct = math.min(tp, 8)
  local l8, l70 = kv.model "llama-3.1-8b", kv.model "llama-3.1-70b"
  check.eq(l8:kv_bytes_per_token("bf16", tp) * distinct, 131072, "llama-3.1-8b over tp " .. tp)
  check.eq(l70:kv_bytes_per_token("bf16", tp) * distinct, 327680, "llama-3.1-70b over tp " .. tp)
  check.eq(kv.model("deepseek-v3"):kv_bytes_per_token("bf16", tp), 70272, "deepseek-v3 at tp " .. tp)
end
check.eq(kv.model("llama-3.1-8b"):kv_bytes_per_token("bf16"), 131072, "llama-3.1-8b")
check.eq(kv.model("llama-3.1-70b"):kv_bytes_per_token("bf16"), 327680, "llama-3.1-70b")
check.eq(61 * 576 * 2, 70272, "DeepSeek-V3 arithmetic")

-- ---- every model records where it came from ---------------------------------------
for _, m in ipairs(models) do
  assert(type(m.source) == "string" and #m.source > 20, m.id .. ": no source")
  assert(type(m.hf) == "string" and (m.hf:match("^[%w%-_.]+/[%w%-_.]+$") or m.hf == "none"),
         m.id .. ": hf must be a Hugging Face repo id, got " .. tostring(m.hf))
  if m.hf == "none" then
    assert(m.source:find("not", 1, true), m.id .. ": hf 'none' needs a source saying why")
  end
  assert(math.type(m.params) == "integer" and m.params > 0, m.id .. ": params")
  assert(math.type(m.active) == "integer" and m.active <= m.params, m.id .. ": active <= params")
  assert(type(m.dtype) == "string", m.id .. ": dtype")
  m:native_format() -- the dtype names a weight format
  assert(math.type(m.max_context) == "integer" and m.max_context > 0, m.id .. ": max_context")
end

-- ---- the issue's required models, by id or alias -----------------------------------
local required_models = {
  "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b",
  "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b",
  "mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.3",
  "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x22b",
  "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-7B", "qwen2.5-14b", "qwen2.5-32b", "Qwen/Qwen2.5-72B",
  "Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B",
  "Qwen/Qwen3-235B-A22B", "deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V3",
  "gemma-2-9b", "gemma-2-27b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b",
  "microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-medium-4k-instruct", "microsoft/phi-4",
  "tiiuae/falcon-40b", "openai/gpt-oss-20b", "openai/gpt-oss-120b",
}
for _, name in ipairs(required_models) do
  local ok, m = pcall(kv.model, name)
  assert(ok, "required model missing: " .. tostring(m))
end

-- sliding window, local/global and MLA layouts as the issue describes them
local function layers_of(id)
  local m, out = kv.model(id), {}
  for i = 1, m.layers do out[i] = m:layer(i) end
  return m, out
end
do
  local m, ls = layers_of("mistral-7b-v0.1")
  for i = 1, m.layers do check.eq(ls[i].window, 4096, "mistral v0.1 layer " .. i) end
  check.eq(kv.model("mistral-7b-v0.3"):kinds().full, 32, "mistral v0.3: full attention")
  for _, id in ipairs{"gemma-2-9b", "gemma-2-27b"} do
    m, ls = layers_of(id)
    for i = 1, m.layers do
      if i % 2 == 1 then check.eq(ls[i].window, 4096, id .. " local layer " .. i)
      else check.eq(ls[i].kind, "full", id .. " global layer " .. i) end
    end
  end
  for _, id in ipairs{"gemma-3-4b", "gemma-3-12b", "gemma-3-27b"} do
    m, ls = layers_of(id)
    for i = 1, m.layers do
      if i % 6 == 0 then check.eq(ls[i].kind, "full", id .. " global layer " .. i)
      else check.eq(ls[i].window, 1024, id .. " local layer " .. i) end
    end
  end
  for _, id in ipairs{"gpt-oss-20b", "gpt-oss-120b"} do
    m, ls = layers_of(id)
    for i = 1, m.layers do
      if i % 2 == 1 then check.eq(ls[i].window, 128, id .. " sliding layer " .. i)
      else check.eq(ls[i].kind, "full", id .. " full layer " .. i) end
    end
  end
  for _, id in ipairs{"deepseek-v2-lite", "deepseek-v3"} do
    m, ls = layers_of(id)
    check.eq(m:kinds().mla, m.layers, id .. ": MLA on every layer")
    check.eq(ls[1].kv_lora_rank, 512, id .. " kv_lora_rank")
    check.eq(ls[1].rope_dim, 64, id .. " rope_dim")
  end
end
-- MoE models keep fewer parameters active than they hold
for _, id in ipairs{"mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b",
                    "deepseek-v2-lite", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b"} do
  local m = kv.model(id)
  assert(m.active < m.params, id .. ": active must be below params")
end
-- at least one hybrid with recurrent layers, and one classic MHA model
local hybrid, mha = false, false
for _, m in ipairs(models) do
  local k = m:kinds()
  if k.state > 0 and k.state < m.layers then hybrid = true end
  if m.kv_heads == m.heads and not m.mla and m.params >= 6e10 then mha = true end
end
assert(hybrid, "no hybrid model with recurrent (state) layers")
assert(mha, "no classic MHA reference model")
check.eq(kv.model("gpt-3-175b").kv_heads, 96, "GPT-3 175B is MHA")

-- ---- GPUs ---------------------------------------------------------------------------
local required_gpus = {
  "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "h20", "b200", "l4",
  "l40s", "a10g", "t4", "v100", "rtx-3090", "rtx-4090", "rtx-5090", "rtx-a6000", "mi250x",
  "mi300x", "mi325x",
}
for _, name in ipairs(required_gpus) do
  local ok, g = pcall(kv.gpu, name)
  assert(ok, "required gpu missing: " .. tostring(g))
  assert(g.hbm_gbps and g.hbm_gbps > 0, g.id .. ": memory bandwidth")
  assert(g.interconnect_gbps and g.interconnect_gbps > 0, g.id .. ": interconnect bandwidth")
end
for _, g in ipairs(gpus) do
  assert(type(g.source) == "string" and #g.source > 20, g.id .. ": no source")
  assert(type(g.memory_marketed) == "string", g.id .. ": memory as marketed")
  assert(math.type(g.memory_bytes) == "integer", g.id .. ": memory_bytes")
  assert(g.visible_bytes <= g.memory_bytes, g.id .. ": visible_bytes exceeds memory_bytes")
  assert(g.visible_bytes > g.memory_bytes * 0.9, g.id .. ": visible_bytes under 90 % of memory")
  if g.memory_basis == "visible" then
    assert(type(g.visible_source) == "string", g.id .. ": visible_bytes needs a visible_source")
  else -- the marketed size stands in: the entry must say why
    assert((g.notes or ""):find("visible_bytes", 1, true), g.id .. ": no runtime memory, no note")
  end
  -- a missing tensor rate is explained (hardware without the type, or no datasheet)
  -- (an entry may refer to another's notes: "see 'mi250x'")
  local notes = (g.notes or "") .. " " .. g.source
  for ref in (g.notes or ""):gmatch("see '([%w%-]+)'") do
    local ok, other = pcall(kv.gpu, ref)
    if ok then notes = notes .. " " .. (other.notes or "") end
  end
  for _, f in ipairs{{"bf16_tflops", "BF16"}, {"fp8_tflops", "FP8"}} do
    if g[f[1]] == nil then
      assert(notes:find(f[2], 1, true) or notes:find(f[1], 1, true) or notes:find("Tensor TFLOPS", 1, true),
             g.id .. ": " .. f[1] .. " absent without a note")
    end
  end
end
-- an 80 GB H100 shows about 79.2 GiB to CUDA (budgets are fractions of that)
local h100 = kv.gpu("h100-sxm")
check.eq(h100.memory_bytes, 80 * kv.units.GiB, "H100 80 GB")
assert(math.abs(kv.units.gib(h100.visible_bytes) - 79.2) < 0.05,
       "h100-sxm shows " .. kv.units.gib(h100.visible_bytes) .. " GiB")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100"}:ledger().total, h100.visible_bytes,
         "ledgers use the visible memory")

-- ---- lookups ------------------------------------------------------------------------
check.eq(kv.model("LLAMA-3.1-8B").id, "llama-3.1-8b", "id, any case")
check.eq(kv.model("meta-llama/llama-3.1-8b-instruct").id, "llama-3.1-8b", "alias, any case")
check.eq(kv.gpu("NVIDIA H100 80GB HBM3").id, "h100-sxm", "gpu alias as the runtime names it")
check.eq(kv.gpu("H100").id, "h100-sxm", "short alias")
-- every alias resolves to its own entry (none is shadowed by another entry)
for _, list in ipairs{{models, kv.model}, {gpus, kv.gpu}} do
  for _, e in ipairs(list[1]) do
    for _, a in ipairs(e.aliases or {}) do
      check.eq(list[2](a).id, e.id, "alias '" .. a .. "'")
    end
  end
end
check.error("catalog_test.lua:251: unknown model 'llama-3-70' (did you mean 'llama-2-7b', 'llama-3-8b', 'llama-2-70b'?)",
            function() kv.model("llama-3-70") end)
check.error("unknown model 'zzzzzz' (closest: 'phi-4' (alias 'phi4'), 'gpt-3-175b' (alias 'gpt-3'), 'opt-66b' (alias 'opt66b'))", kv.model, "zzzzzz")
check.error("unknown gpu 'h10' (did you mean 'a10', 'h20', 'h100-sxm' (alias 'h100')?)", kv.gpu, "h10")
check.error("unknown gpu 'mi300' (did you mean", kv.gpu, "mi300")
check.error("field 'model' must be a name or table, got number", kv.model, 70)

print("catalog: " .. #models .. " models, " .. #gpus .. " GPUs ok")
