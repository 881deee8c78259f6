-- tests/lua/models_test.lua: model tables, KV bytes per token and errors.
local kv = require "kvplan"
local check = require "check"

-- per-token bytes from the catalog, against the formula on its own fields
for _, id in ipairs{"llama-2-7b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b"} do
  local m = kv.model(id)
  check.eq(m:kv_bytes_per_token("bf16"), 2 * m.layers * m.kv_heads * m.head_dim * 2, id)
end
check.eq(kv.model("llama-3.1-8b"):kv_bytes_per_token(), 131072, "llama-3.1-8b")
check.eq(kv.model("Meta-Llama/Llama-3.1-70B"):kv_bytes_per_token("bf16"), 327680, "alias, any case")
check.eq(kv.model("deepseek-v3"):kv_bytes_per_token("bf16"), 70272, "MLA, no factor 2")
check.eq(kv.model("deepseek-v3"):kv_bytes_per_token("bf16", 16), 70272, "MLA on every rank")

-- TP beyond the KV heads: one head per GPU, not a fraction
local m70 = kv.model "llama-3.1-70b"
check.eq(m70:kv_bytes_per_token("bf16", 8), 40960, "tp 8")
check.eq(m70:kv_bytes_per_token("bf16", 16), 40960, "tp 16 replicates")

-- a window larger than the context holds the context
local mistral = kv.model {id = "w", layers = 2, hidden = 64, heads = 2, kv_heads = 1, head_dim = 32,
                          layer_kinds = {{kind = "sliding", window = 100}}}
check.eq(mistral:kv_bytes(50), 2 * 50 * 2 * 32 * 2, "n < window")
check.eq(mistral:kv_bytes(1000), 2 * 100 * 2 * 32 * 2, "n > window")
check.eq(mistral:kv_bytes(1000, {batch = 3}), 3 * 2 * 100 * 2 * 32 * 2, "batch")

-- errors name the field, the value and this file's line
check.error("models_test.lua:29: field 'layers' must be an integer >= 1, got 0",
            function() kv.model{layers = 0, hidden = 64, heads = 2} end)
check.error("field 'heads' must be an integer, got nan",
            function() kv.model{layers = 2, hidden = 64, heads = 0/0} end)
check.error("unknown field 'layerz' in model", function() kv.model{layerz = 2} end)
check.error("unknown model 'llama-3-70' (did you mean", kv.model, "llama-3-70")
check.error("field 'layer_kinds[2].window' must be an integer >= 1, got 0", function()
  kv.model{layers = 4, hidden = 64, heads = 2, layer_kinds = {{kind = "full"}, {kind = "sliding"}}}
end)
check.error("field 'layer_kinds[1].kind' must be one of full", function()
  kv.model{layers = 4, hidden = 64, heads = 2, layer_kinds = {{kind = "fulll"}}}
end)
check.error("field 'batch' must be an integer >= 1, got 0", function() mistral:kv_bytes(10, {batch = 0}) end)
check.error("field 'tokens' must be a non-negative integer, got -5", function() mistral:kv_bytes(-5) end)

-- a copy of a model's fields is the same model, reserves and all: vLLM's
-- activation peak is predicted from vocab and intermediate, which a copy of
-- the architecture fields alone dropped (KV budget 56.12 GiB for 51.41)
do
  local m = kv.model "llama-3.1-8b"
  local function budget(model)
    local d = kv.deploy{model = model, gpu = "h100-sxm"}
    return d:ledger().kv_budget, d.activation_source
  end
  local want = budget(m)
  check.eq(string.format("%.2f", want / kv.units.GiB), "51.41", "the catalog's Llama-3.1-8B on an H100")
  local t = {}
  for k, v in pairs(m) do t[k] = v end
  local copy = kv.model(t)
  local b, src = budget(copy)
  check.eq(b, want, "a pairs copy keeps the predicted activation")
  check.eq(src, "predicted", "a pairs copy's activation")
  local f = kv.models.facts(m)
  f.id = "llama-3.1-8b+copy"
  check.eq(budget(kv.model(f)), want, "kv.models.facts keeps it")
  check.eq(f.vocab, 128256, "facts: vocab")
  check.eq(f.aliases, nil, "facts: not the checkpoint's own names")
  -- the derived defaults are not fields: a copy with fewer params has fewer active ones
  local h = kv.model{id = "h", layers = 2, hidden = 64, heads = 2, params = 1000}
  check.eq(h.active, 1000, "active defaults to params")
  local c = {}
  for k, v in pairs(h) do c[k] = v end
  c.params = 500
  check.eq(kv.model(c).active, 500, "a copy's active follows its params")
end

-- the linear layers a format's per-matrix and per-column bits count over
-- (class_shapes), by hand: Qwen3-30B-A3B's attention 48 x (2048 + 32 x 128)
-- input columns (qkv_proj, o_proj) and 48 x 4 shards, its 48 x 128 experts
-- 3 shards and 2048 + 768 columns each (w13, w2); DeepSeek-V3's MLA with
-- q_lora: fused q_a/kv_a 7168, q_b 1536, kv_b 512, o 128 x 128 a layer, 5
-- shards; its 3 dense layers' MLP 7168 + 18432
local q3 = kv.model("qwen3-30b-a3b"):class_shapes()
check.eq(q3.attention.shards .. "/" .. q3.attention.cols, 48 * 4 .. "/" .. 48 * (2048 + 4096),
         "Qwen3-30B-A3B attention")
check.eq(q3.experts.shards .. "/" .. q3.experts.cols, 48 * 128 * 3 .. "/" .. 48 * 128 * (2048 + 768),
         "Qwen3-30B-A3B experts")
check.eq(q3.mlp.shards, 0, "no dense MLP")
local v3 = kv.model("deepseek-v3"):class_shapes()
check.eq(v3.attention.shards .. "/" .. v3.attention.cols,
         61 * 5 .. "/" .. 61 * (7168 + 1536 + 512 + 128 * 128), "DeepSeek-V3 MLA")
check.eq(v3.mlp.cols, 3 * (7168 + 18432), "DeepSeek-V3's dense layers")
check.eq(v3.lm_head.shards .. "/" .. v3.lm_head.cols, "1/7168", "an untied lm_head")
