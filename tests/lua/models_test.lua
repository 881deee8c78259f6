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
-- the architecture fields alone dropped (KV budget 56.12 GiB for 51.33 under
-- vLLM 0.11). The newest release modelled, which no release means, budgets
-- 56.34 GiB: 51.33 + 0.02 x 79.19 GiB (utilization 0.92, vllm-project/vllm
-- #38284) + 28 bytes x 1024 sequences x 128256 logits = 3.42 GiB less sampler
-- (FlashInfer's top-k/top-p, c = b + 8 + hidden, for the sort path's b + 36)
do
  local m = kv.model "llama-3.1-8b"
  local function budget(model)
    local d = kv.deploy{model = model, gpu = "h100-sxm"}
    return d:ledger().kv_budget, d.activation_source
  end
  local want = budget(m)
  check.eq(string.format("%.2f", want / kv.units.GiB), "56.34", "the catalog's Llama-3.1-8B on an H100")
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

-- every catalog model is weighed by class: its classes add up to no more
-- than params (the rest is 'other'), and 'other' is norms and biases alone
-- (at most 0.5 % of params) unless the entry's other_note says what else it
-- holds; a model marked classes_unweighable refuses to be weighed by class
-- with its reason (before: falcon, OPT, GPT-3, BERT and Whisper counted a
-- gated three-matrix MLP, Nemotron-H attention and an MLP in every layer)
do
  local models = require "kvplan.models"
  local n = 0
  for _, m in ipairs(models.all()) do
    n = n + 1
    local ok, c = pcall(m.weight_class_params, m)
    check.eq(ok, true, m.id .. " weighed by class: " .. tostring(not ok and c or ""))
    if ok then
      check.eq(c.other >= 0, true, m.id .. " other >= 0")
      if c.other * 200 > m.params then
        check.eq(type(rawget(m, "other_note")), "string",
                 string.format("%s: other %d of %d params needs an other_note", m.id, c.other, m.params))
      end
    end
    local why = rawget(m, "classes_unweighable")
    if why then
      check.error(why, m.classes_size, m, {attention = "int4-g128", mlp = "int4-g128"})
    end
  end
  check.eq(n > 50, true, "the whole catalog")
end

-- OPT-66B by class, by hand (fc1 and fc2: two matrices an MLP): 64 layers
-- of attention 4 x 9216^2 = 21743271936 and MLP 2 x 9216 x 36864 =
-- 43486543872, embeddings 50272 x 9216 = 463306752 (lm_head tied), other
-- the learned positions 2050 x 9216 = 18892800 and 64 x (9 x 9216 + 36864)
-- biases and LayerNorms + 2 x 9216 final = 7686144: 26578944. int4-g128
-- (4.15625 bits, 133/256 bytes a weight) on attention and MLP, fp16 the rest:
-- 11296309248 + 22592618496 + 2 x (463306752 + 26578944) = 34868699136
do
  local m = kv.model("opt-66b")
  local c = m:weight_class_params()
  check.eq(c.attention, 21743271936, "OPT-66B attention")
  check.eq(c.mlp, 43486543872, "OPT-66B MLP: up and down")
  check.eq(c.embeddings .. "/" .. c.lm_head, "463306752/0", "OPT-66B embeddings, tied head")
  check.eq(c.other, 18892800 + 7686144, "OPT-66B other: positions, biases, LayerNorms")
  local sh = m:class_shapes()
  check.eq(sh.mlp.shards .. "/" .. sh.mlp.cols, 64 * 2 .. "/" .. 64 * (9216 + 36864), "OPT-66B MLP shapes")
  check.eq(m:classes_size{attention = "int4-g128", mlp = "int4-g128"}, 34868699136,
           "OPT-66B int4-g128 by class")
  -- falcon-7b likewise adds up exactly: 32 x (4544 x (4544 + 128) + 4544^2
  -- attention + 2 x 4544 x 18176 MLP + 2 x 4544 LayerNorm) + 65024 x 4544
  -- + 2 x 4544 = params, other its 33 LayerNorms
  local f = kv.model("falcon-7b"):weight_class_params()
  check.eq(f.other, 33 * 2 * 4544, "falcon-7b: other is its LayerNorms")
  -- falcon-40b: params are what vLLM loads, the checkpoint's stored
  -- lm_head.weight (65024 x 8192) left out (tied: falcon.py load_weights
  -- skips 'lm_head.'); other is exactly its 60 x 2 LayerNorms and ln_f,
  -- weight and bias: 121 x 2 x 8192 = 1982464; bf16 2 x (41835970560 -
  -- 532676608) bytes
  local f40 = kv.model("falcon-40b")
  check.eq(f40:weight_class_params().other, 121 * 2 * 8192, "falcon-40b: other is its LayerNorms")
  check.eq(f40:weight_size(), 2 * (41835970560 - 65024 * 8192), "falcon-40b: the weights vLLM loads")
  -- Whisper's 96 attention modules (encoder self, decoder self and cross)
  -- and 64 two-matrix MLPs
  local w = kv.model("whisper-large-v3"):weight_class_params()
  check.eq(w.attention .. "/" .. w.mlp, 96 * 4 * 1280 * 1280 .. "/" .. 64 * 2 * 1280 * 5120,
           "whisper-large-v3 classes")
  -- BERT has no LM head
  check.eq(kv.model("bge-large-en-v1.5"):weight_class_params().lm_head, 0, "bge: no lm_head")
end

-- Qwen3.6-27B (issue 20), from its config.json: the Gated DeltaNet state
-- by vLLM's gated_delta_net_state_shape (conv (kernel - 1) x (2 key_dim +
-- value_dim) in the model dtype, recurrent num_v_heads x head_v x head_k in
-- float32, the config's mamba_ssm_dtype), 3 linear layers to 1 full, and
-- params as the language model's tensors add up; its token mixers hold more
-- than the attention class counts, so 'other' says so and a quantized
-- checkpoint cannot be weighed by class
do
  local m = kv.model("qwen3.6-27b")
  local conv, rec = (4 - 1) * (128 * 16 * 2 + 128 * 48), 48 * 128 * 128
  check.eq(m:layer(1).state_bytes, conv * 2 + rec * 4, "Qwen3.6-27B GDN state")
  check.eq(m:layer(1).state_bytes, 3207168, "Qwen3.6-27B GDN state bytes")
  check.eq(m:layer(4).kind .. "/" .. m:layer(64).kind, "full/full", "Qwen3.6-27B full layers 4, 8, ..., 64")
  local H, V, I = 5120, 248320, 17408
  local gdn = 48 * (2 * 48 + 10240 * 4 + H * (10240 + 6144 + 2 * 48) + 6144 * H + 128)
  local gated = 16 * (H * (12288 + 2 * 1024) + 6144 * H + 2 * 256)
  check.eq(2 * V * H + gdn + gated + 64 * (3 * H * I + 2 * H) + H, m.params, "Qwen3.6-27B params")
  local c = m:weight_class_params()
  check.eq(c.other, 2542820864, "Qwen3.6-27B other: the token mixers beyond the class, convolutions, norms")
  check.error("no weight class", m.classes_size, m, {attention = "int4-g128", mlp = "int4-g128"})
end

-- Shared experts are a class of their own, weighed in their checkpoint's
-- format (vLLM builds them as a dense MLP with the quant_config: models.lua
-- weight_classes). DeepSeek-V2-Lite by hand: 26 MoE layers of one shared MLP
-- 2 x 1408 wide, 3 x 2048 x 2816 a layer = 449839104; the rest is the
-- routers 26 x 64 x 2048 = 3407872 and the norms 126464. DeepSeek-V3: 58
-- layers of 3 x 7168 x 2048 = 2554331136, FP8 with a 32-bit scale a 128 x
-- 128 block: 2554331136 + 2554331136 / 16384 x 4 = 2554954752 bytes where
-- bf16 was 5108662272
do
  local c = kv.model("deepseek-v2-lite"):weight_class_params()
  check.eq(c.shared_experts, 26 * 3 * 2048 * 2 * 1408, "DeepSeek-V2-Lite shared experts")
  check.eq(c.shared_experts, 449839104, "= the catalog's note")
  check.eq(c.other, 3407872 + 126464, "DeepSeek-V2-Lite other: routers and norms")
  local sh = kv.model("deepseek-v2-lite"):class_shapes().shared_experts
  check.eq(sh.shards .. "/" .. sh.cols, 26 * 3 .. "/" .. 26 * (2048 + 2816), "shared experts' shapes")
  local v3 = kv.model("deepseek-v3")
  local c3 = v3:weight_class_params()
  check.eq(c3.shared_experts, 58 * 3 * 7168 * 2048, "DeepSeek-V3 shared expert")
  check.eq(v3.weight_formats.shared_experts.name, "fp8-b128", "in FP8 as the checkpoint stores it")
  local fp8 = v3:class_bytes("shared_experts", kv.formats.get(v3.weight_formats.shared_experts))
  check.eq(fp8, 2554331136 + 2554331136 // 16384 * 4, "FP8 block bytes")
  local t = {}
  for k, v in pairs(v3) do if k ~= "core" then t[k] = v end end
  t.weight_formats = {}
  for k, v in pairs(v3.weight_formats) do if k ~= "shared_experts" then t.weight_formats[k] = v end end
  check.eq(kv.model(t):weight_size() - v3:weight_size(), 2 * 2554331136 - fp8,
           "the shared expert's 16-bit bytes were counted before")
  -- a width of their own (Qwen2-MoE's shared_expert_intermediate_size):
  -- 2 MoE layers x 3 x 16 x 40 = 3840
  local q = kv.model{id = "q", layers = 2, hidden = 16, heads = 2, head_dim = 8, vocab = 10,
                     experts = 4, experts_active = 2, moe_intermediate = 8, shared_experts = 1,
                     shared_intermediate = 40, params = 100000}
  check.eq(q:weight_class_params().shared_experts, 2 * 3 * 16 * 40, "shared_intermediate")
  check.error("field 'shared_intermediate'", function()
    kv.model{id = "q", layers = 2, hidden = 16, heads = 2, shared_intermediate = -1, params = 1}
  end)
end
check.error("field 'mlp_matrices' must be 2 (up, down) or 3 (gate, up, down), got 4", kv.model,
            {id = "x", layers = 1, hidden = 64, heads = 1, params = 1000, mlp_matrices = 4})

-- one weight-bytes rule, the core's (kvp_format_weight_bytes): weight_size,
-- class_bytes and classes_size pass a format, the parameters and the linear
-- layers' matrices and input columns to core.weight_bytes; their bytes equal
-- its call and, for the catalog's whole-byte tensor and col bits, the
-- elements' bytes plus those bits rounded up apart, as counted before
do
  local core = require "kvplan.core"
  for _, id in ipairs{"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b"} do
    local m = kv.model(id)
    local shards, cols = m:linear_shapes()
    for _, name in ipairs{"bf16", "nvfp4", "int4-g128-act", "fp8"} do
      local f = kv.formats.get(name)
      local t, c = f.tensor or 0, f.col or 0
      local want = core.weight_bytes(f, m.params, shards, cols, m.id)
      check.eq(m:weight_size(name), want, id .. " " .. name .. ": weight_size = the core's")
      check.eq(want, kv.formats.bytes(f, m.params) + (shards * t + cols * c + 7) // 8,
               id .. " " .. name .. ": the same bytes as before")
      local params, shapes, sum = m:weight_class_params(), m:class_shapes(), 0
      for _, k in ipairs(kv.models.weight_classes) do
        local sh = params[k] > 0 and shapes[k] or {shards = 0, cols = 0}
        local b = core.weight_bytes(f, params[k], sh.shards, sh.cols, m.id)
        check.eq(m:class_bytes(k, f), b, id .. " " .. name .. " " .. k .. ": class_bytes = the core's")
        sum = sum + b
      end
      local all = {}
      for _, k in ipairs(kv.models.weight_classes) do all[k] = name end
      check.eq(m:classes_size(all), sum, id .. " " .. name .. ": classes_size = the core's by class")
    end
  end
  -- an overflow names the model
  local huge = kv.model{id = "huge", layers = 1, hidden = 64, heads = 1, head_dim = 64,
                        params = math.maxinteger // 4}
  local msg = check.error("model 'huge': weight bytes of 2305843009213693951 parameters",
                          huge.weight_size, huge, "bf16")
  check.eq(msg:find("overflow", 1, true) ~= nil, true, "the overflow named: " .. msg)
  check.error("model 'huge': weight bytes of 2305843009213693951 parameters, 8 matrices and 256 "
              .. "input columns: arithmetic overflow", huge.weight_size, huge, "nvfp4")
end

-- the format a class is held in (Model:class_format), and the step's reads of
-- the weights (kvplan.sim) weighed by the same rule as the ledger
do
  local sim = require "kvplan.sim"
  local formats = require "kvplan.formats"
  local g = kv.models.get("gpt-oss-20b")
  local mixed = kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm"}.weights
  check.eq(mixed.name, g:mixed_format_name(), "the checkpoint's own formats")
  check.eq(g:class_format("experts", mixed).name, "mxfp4", "gpt-oss's experts: their own format")
  check.eq(g:class_format("attention", mixed).name, g:dtype_format().name, "the rest: the dtype's")
  local f8 = formats.get("fp8", "weights")
  check.eq(g:class_format("experts", f8), f8, "a whole-deployment format holds every class")
  -- NVFP4 experts: one expert's slice is the class's bytes with the format's
  -- per-matrix bits (class_bytes), split over the layers and experts
  local d = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4"}
  local m = d.model
  local c = m:weight_class_params()
  local want = m:class_bytes("experts", d.weights, c.experts) / (m.experts * m.layers)
  check.eq(sim.expert_slice_bytes(d), want, "the slice: class_bytes over experts x layers")
  assert(want > formats.bytes(d.weights, c.experts) / (m.experts * m.layers),
         "NVFP4's per-matrix bits are in the slice")
end

-- a name that is a path says what is there, not the closest catalog names
-- ("unknown model '/tmp/x' (closest: 'phi-4' (alias 'phi4'), ...)" for a
-- directory without config.json, a file and a missing path alike)
do
  local dir = check.tmpdir()
  local f = io.open(dir .. "/weights.bin", "wb"); f:write("x"); f:close()
  check.error("unknown model '" .. dir .. "': not in the catalog, and the directory holds no config.json "
              .. "(expected a catalog id or alias, a Hugging Face model directory or a config.json)", kv.model, dir)
  check.error("unknown model '" .. dir .. "/weights.bin': not in the catalog, and the file is not a .json "
              .. "config (expected a catalog id or alias, a Hugging Face model directory or a config.json)",
              kv.model, dir .. "/weights.bin")
  check.error("unknown model '" .. dir .. "/none/config.json': not in the catalog, and cannot open it: ",
              kv.model, dir .. "/none/config.json")
  check.error("unknown model './none': not in the catalog, and cannot open it: ", kv.model, "./none")
  check.error("unknown model 'llama-3-70' (did you mean", kv.model, "llama-3-70")
  os.remove(dir .. "/weights.bin")
  os.remove(dir)
end
