-- tests/lua/rotary_test.lua: vLLM's rotary cos/sin caches in the loaded
-- weights (engines.lua vllm_rotary), hand-counted on a small model, and the
-- catalog's exact bytes.
local kv = require "kvplan"
local check = require "check"
local engines = require "kvplan.engines"
local report = require "kvplan.report"

-- a small model: head_dim 32, 1024 positions, bf16
local base = {id = "tiny-rope", layers = 2, hidden = 64, heads = 2, kv_heads = 1, head_dim = 32,
              params = 100000, max_context = 1024, dtype = "bf16"}
local function with(rope, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra or {}) do t[k] = v end
  t.rope = rope
  return kv.model(t)
end
local function bytes(rope, extra) return (engines.vllm_rotary(with(rope, extra))) end

-- default: one table, max_position x head_dim (cos and sin of 16 frequencies) x 2 bytes
check.eq(bytes(nil), 1024 * 32 * 2, "default")
local _, t = engines.vllm_rotary(with(nil))
check.eq(#t, 1, "one table")
check.eq(t[1].rows, 1024, "rows")
check.eq(t[1].dim, 32, "width")
check.eq(bytes({type = "llama3"}), 1024 * 32 * 2, "llama3: the frequencies change, not the rows")
-- linear and dynamic NTK: max_position x factor
check.eq(bytes({type = "linear", factor = 4}), 4096 * 32 * 2, "linear x 4")
check.eq(bytes({type = "dynamic", factor = 2}), 2048 * 32 * 2, "dynamic x 2")
-- YaRN: ceil(original_max_position x factor), whatever max_position is
check.eq(bytes({type = "yarn", factor = 4.5, original_max_position = 256}), 1152 * 32 * 2, "yarn")
check.eq(bytes({type = "deepseek_yarn", factor = 40, original_max_position = 64}), 2560 * 32 * 2,
         "deepseek_yarn")
-- longrope: the short table (original) and the long one (max_position) in one buffer
check.eq(bytes({type = "longrope", original_max_position = 256}), (256 + 1024) * 32 * 2, "longrope")
-- M-RoPE: 4 x the rows, default or YaRN
check.eq(bytes({mrope = true}), 4 * 1024 * 32 * 2, "mrope")
check.eq(bytes({mrope = true, type = "yarn", factor = 2, original_max_position = 256}),
         4 * 256 * 2 * 32 * 2, "mrope + yarn")
-- partial rotary: int(head_dim x factor) wide; a CSV catalog's text numbers too
check.eq(bytes({partial_rotary_factor = 0.5}), 1024 * 16 * 2, "partial 0.5")
check.eq(bytes({partial_rotary_factor = "0.25", type = "linear", factor = "2"}), 2048 * 8 * 2,
         "numbers as text")
-- the dtype: the model's (fp16 2 bytes, fp32 4), or the model file's
check.eq(bytes(nil, {dtype = "fp32"}), 1024 * 32 * 4, "fp32 model")
check.eq(bytes({dtype = "fp32"}), 1024 * 32 * 4, "float32 by the model file")
check.eq(bytes({max_position = 100}), 100 * 32 * 2, "max_position given")
-- one table per distinct rope (Gemma 3: local default, global linear x 8)
check.eq(bytes({{}, {type = "linear", factor = 8}}), (1024 + 8192) * 32 * 2, "two tables")
-- MLA: qk_rope_head_dim wide
check.eq(bytes(nil, {mla = {kv_lora_rank = 128, rope_dim = 16}}), 1024 * 16 * 2, "MLA rope_dim")
-- none: no RoPE layers, no attention layers, no context length to size it by
check.eq(bytes(false), 0, "rope = false")
check.eq(bytes(nil, {layer_kinds = {{kind = "state", state_bytes = 1000, n = 1}}}), 0,
         "recurrent layers only")
do
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  t.max_context = nil
  check.eq((engines.vllm_rotary(kv.model(t))), 0, "no max_context: its rows unknown")
end

-- bad input names the field
check.error("model 'tiny-rope': field 'rope.type' must be one of", function() bytes({type = "ntk2"}) end)
check.error("field 'rope.factor' must be a number >= 1 for rope type 'linear', got nil",
            function() bytes({type = "linear"}) end)
check.error("field 'rope.original_max_position'", function() bytes({type = "yarn", factor = 2}) end)
check.error("field 'rope.mrope' with rope type 'linear'",
            function() bytes({type = "linear", factor = 2, mrope = true}) end)
check.error("field 'rope.partial_rotary_factor' must be in (0, 1], got 2",
            function() bytes({partial_rotary_factor = 2}) end)
check.error("field 'rope[2].dtype' must be fp32, bf16 or fp16, got int8",
            function() bytes({{}, {dtype = "int8"}}) end)
check.error("unknown", function() bytes({typo = 1}) end)

-- in the ledger: per GPU, whole on every tp rank and stage, in the weights
local m = with(nil)
local d1 = kv.deploy{model = m, gpu = "h100", activation = 0, overhead = 0}
local d2 = kv.deploy{model = m, gpu = "h100", activation = 0, overhead = 0, tp = 2, pp = 2}
check.eq(d1:ledger().rotary, 65536, "ledger: rotary")
check.eq(d2:ledger().rotary, 65536, "tp 2 x pp 2: whole on each GPU")
local nobudget = kv.deploy{model = m, gpu = "h100", activation = 0, overhead = 0,
                           weight_bytes = 200000}
check.eq(nobudget:ledger().rotary, 0, "a given weight_bytes is the loaded bytes")
check.eq(nobudget:ledger().weights, 200000, "... as given")
-- SGLang keeps the table in float32 on CUDA, in the model dtype elsewhere
-- (rotary_embedding.py at sgl-project/sglang 00a66ebe136b)
check.eq(kv.deploy{model = m, gpu = "h100", budget = "sglang"}:ledger().rotary, 131072,
         "SGLang on CUDA: 1024 x 32 x 4 bytes")
check.eq(kv.deploy{model = m, gpu = "mi300x", budget = "sglang"}:ledger().rotary, 65536,
         "SGLang on ROCm: the model dtype")
check.eq(kv.deploy{model = m, gpu = "h100", budget = "trtllm"}:ledger().rotary, 0, "not TensorRT-LLM's")
local items = report.ledger_items(d1, 1024, 1)
local seen
for _, it in ipairs(items) do if it.item == "rotary" then seen = it end end
check.eq(seen.bytes, 65536, "ledger item")
check.eq(seen.note, "rotary cos/sin cache 1024 x 32 bf16, whole on every GPU", "ledger note")
check.eq(items[1].bytes, d1:ledger().weights - 65536, "the weights item without it")

-- the catalog, exact bytes
local function cat(id) return (engines.vllm_rotary(kv.model(id))) end
check.eq(cat("llama-3.1-8b"), 131072 * 128 * 2, "Llama-3.1-8B: 32 MiB")
check.eq(cat("qwen3-0.6b"), 40960 * 128 * 2, "Qwen3-0.6B: 10 MiB")
check.eq(cat("qwen2.5-vl-7b"), 4 * 128000 * 128 * 2, "Qwen2.5-VL-7B: M-RoPE, 4 x 128000")
check.eq(cat("gpt-oss-120b"), 4096 * 32 * 64 * 4, "gpt-oss-120b: YaRN in float32")
check.eq(cat("gemma-3-27b"), (131072 + 8 * 131072) * 128 * 2, "Gemma 3 27B: local + global x 8")
check.eq(cat("deepseek-v3"), 163840 * 64 * 2, "DeepSeek-V3: qk_rope_head_dim 64")
check.eq(cat("qwen3-next-80b-a3b"), 262144 * 64 * 2, "Qwen3-Next: a quarter of 256 rotates")
check.eq(cat("nemotron-nano-9b-v2"), 0, "Nemotron-H: no RoPE")
-- Llama 4 Scout: one llama3 table over config.max_position_embeddings (llama4.py at 0121c95efe85,
-- not capped by max_model_len); the base checkpoint's 262144, the Instruct one's 10485760
check.eq(cat("llama-4-scout-17b-16e"), 262144 * 128 * 2, "Llama-4-Scout base: 64 MiB")
check.eq(cat("llama-4-scout-17b-16e-instruct"), 10485760 * 128 * 2, "Llama-4-Scout Instruct: 2.5 GiB")
check.eq(cat("meta-llama/Llama-4-Scout-17B-16E-Instruct"), 2684354560, "the Instruct repo id names the Instruct entry")
check.eq(cat("whisper-large-v3"), 0, "Whisper: learned positions")
-- DeepSeek-R1-Distill-Qwen-14B: Qwen2.5-14B's shape, its own 131072 positions (vllm-project/
-- vllm#13061's "The model's max seq len (131072)"), where Qwen2.5-14B's config says 32768
check.eq(cat("deepseek-r1-distill-qwen-14b"), 131072 * 128 * 2, "R1-Distill-Qwen-14B: 32 MiB")
check.eq(cat("deepseek-r1-distill-qwen-14b") - cat("qwen2.5-14b"), 3 * 32768 * 128 * 2, "24 MiB more than Qwen2.5-14B's")
check.eq(kv.model("deepseek-r1-distill-qwen-14b").params, kv.model("qwen2.5-14b").params, "the same parameters")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "l4"}:ledger().rotary, 33554432,
         "Llama-3.1-8B on an L4, in the ledger")

-- a config.json's rope (hf.lua rope_of): the same tables as the catalog's
local engines_of = function(dir) return (engines.vllm_rotary(kv.models.from_hf("tests/fixtures/hf/" .. dir))) end
for _, id in ipairs{"llama-3.1-8b", "qwen3-8b", "gpt-oss-20b", "gemma-3-27b", "deepseek-v3",
                    "qwen3-next-80b-a3b", "llama-4-scout", "nemotron-nano-9b-v2", "whisper-large-v3",
                    "falcon-7b", "falcon-mamba-7b", "phi-3-mini"} do
  check.eq(engines_of(id), cat(id), "from_hf " .. id .. ": the catalog's rotary bytes")
end
check.eq(engines_of("jamba-v0.1"), 0, "Jamba's attention has no RoPE")
-- Qwen2-VL's "mrope" type: the default type with M-RoPE sections; partial rotary
-- (tiny: head_dim 4, 64 positions, bf16): 4 x 64 rows x 2 wide x 2 bytes
check.eq(engines_of("rope-mrope"), 4 * 64 * 2 * 2, "mrope sections, partial 0.5")
check.error("rope type 'ntk-by-parts' is not one kvplan sizes vLLM's rotary table for",
            function() engines_of("rope-unknown") end)
