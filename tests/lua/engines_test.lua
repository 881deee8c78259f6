-- tests/lua/engines_test.lua: engine defaults by version and the predicted
-- activation and non-torch memory of kv.deploy.
local kv = require "kvplan"
local check = require "check"
local engines = require "kvplan.engines"
local GiB = kv.units.GiB

-- defaults by version, usage and GPU class (vllm/engine/arg_utils.py),
-- as kv.deploy's profile (the core's vllm_defaults)
local function limits(o)
  o.model = o.model or "llama-3.1-8b"
  local d = kv.deploy(o)
  return d.profile_tokens, d.profile_seqs
end
check.eq(select(1, limits{gpu = "h100-sxm", engine_version = "0.9"}), 8192, "V1 server on a big GPU")
check.eq(select(1, limits{gpu = "a100-sxm-80gb", engine_version = "0.9"}), 2048,
         "A100 keeps the small defaults")
check.eq(select(1, limits{gpu_memory = 24 * GiB, engine_version = "0.9", usage = "offline"}), 8192,
         "V1 offline")
check.eq(select(2, limits{gpu = "h100-sxm", engine_version = "0.11"}), 1024,
         "0.11: 1024 sequences on a big GPU")
check.eq(select(1, limits{gpu = "h100-sxm", engine_version = "0.7.1", max_model_len = 10000}), 10000,
         "V0: max_model_len")
check.eq(select(1, limits{gpu = "h100-sxm", engine_version = "0.7.1", max_model_len = 65536}), 2048,
         "V0 chunked")
check.eq(select(2, limits{gpu = "h100-sxm", engine_version = "0.9", max_num_batched_tokens = 128}),
         128, "max_num_seqs capped at the batched tokens")
check.error("unknown vLLM version '0.1'", function() engines.vllm_version("0.1") end)

-- kv.deploy predicts what is not given and says so
local d = kv.deploy{model = "llama-3.1-8b", gpu = "rtx-3090", engine_version = "0.7",
                    max_model_len = 20000}
check.eq(d.activation_source, "predicted", "activation predicted")
check.eq(d.overhead_source, "predicted", "overhead predicted")
check.eq(d.profile_tokens, 20000, "V0 profiles max_model_len tokens")
-- (+ torch's cuBLAS workspace of the RTX 3090, :4096:2:16:8 = 8,519,680)
check.eq(d.activation, 20000 * (3 * 4096 + 3 * 14336) * 2 + 8519680, "eager MLP peak of 20000 tokens")
-- V1 in 0.7 ran no dummy sampler (logits only): the compiled MLP of 2048
-- tokens, 2048 x 51200 x 2; 0.8's sampler run makes the sort moment the peak,
-- the last tokens' hidden states 256 x 4096 x 2 + 256 x 128256 x (2 + 16 +
-- 20) (predict.c); each with the cuBLAS workspace, 8,519,680
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "rtx-3090", engine_version = "0.7-v1"}.activation,
         2048 * 51200 * 2 + 8519680, "0.7 V1: no sampler in the profile")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "rtx-3090", engine_version = "0.8"}.activation,
         256 * 4096 * 2 + 256 * 128256 * 38 + 8519680, "0.8: the dummy sampler's sort")
local g = kv.deploy{model = "llama-3.1-8b", gpu = "rtx-3090", activation = "1 GiB", overhead = 0}
check.eq(g.activation_source, "given", "given activation")
check.eq(g:ledger().activation, GiB, "given activation used")
local s = kv.deploy{model = "llama-3.1-8b", gpu = "h100", budget = "sglang"}
check.eq(s.activation_source, "none", "SGLang keeps activations in its reserve")
check.error("budget 'sglang' does not profile", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", budget = "sglang", max_num_seqs = 8}
end)
check.error("field 'max_num_seqs' describes vLLM's profiling; TensorRT-LLM's dummy run", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", budget = "trtllm", engine_version = "0.11",
            max_num_seqs = 8}
end)
check.error("unknown TensorRT-LLM release 'one' for field 'engine_version' (known: 0.5, 0.11, 0.14, 0.21, 1.0;", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", engine_version = "one"}
end)
-- releases 0.5 to 0.7: examples/llama/build.py's engine (engines.lua
-- M.trtllm): max_batch_size 8, max_num_tokens max_batch_size x max_input_len
-- 2048, the engine path, 64-token blocks, the KV fraction 0.85 (0.9 from 0.8)
for _, v in ipairs{"0.5", "0.5.0 (TensorRT 9.1.0.4)", "0.6.1", "0.7a", "v0.7.1"} do
  local row, key = engines.trtllm_version(v)
  check.eq(key, "0.5", "TensorRT-LLM " .. v .. ": the 0.5 row")
  check.eq(row.backend, "tensorrt", v .. ": the engine path")
end
local old = kv.deploy{model = "llama-2-7b", gpu = "h100-sxm", engine = "trtllm", engine_version = "0.6.1"}
check.eq(old.utilization, 0.85, "0.6.1: freeGpuMemoryFraction 0.85")
check.eq(old.block, 64, "0.6.1: tokens_per_block 64")
check.eq(old.trtllm_backend, "tensorrt", "0.6.1: the engine path")
check.eq(kv.deploy{model = "llama-2-7b", gpu = "h100-sxm", engine = "trtllm",
                   engine_version = "0.11"}.utilization, 0.9, "0.11: the fraction 0.9")
check.eq(kv.deploy{model = "llama-2-7b", gpu = "h100-sxm", engine = "trtllm", engine_version = "0.6.1",
                   utilization = 0.5}.utilization, 0.5, "0.6.1: a given fraction wins")
local dl = require "kvplan.deploy"
local t1, s1 = dl.engine_limits(old, {engine_version = "0.6.1"})
check.eq(s1, 8, "0.6.1: build.py's max_batch_size 8")
check.eq(t1, 8 * 2048, "0.6.1: max_num_tokens 8 x max_input_len 2048")
local t2, s2 = dl.engine_limits(old, {engine_version = "0.5", max_num_seqs = 64})
check.eq(s2, 64, "0.5: the given batch")
check.eq(t2, 64 * 2048, "0.5: max_num_tokens 64 x 2048, the batch's prompts in one step")
check.error("unknown TensorRT-LLM release '0.4' for field 'engine_version' (known: 0.5, 0.11, 0.14, 0.21, 1.0;",
            engines.trtllm_version, "0.4")
check.error("TensorRT-LLM release '0.9.0' for field 'engine_version' is not modelled: releases 0.8 to "
            .. "0.10 (trtllm-build's defaults of those releases were not read) (known: 0.5, 0.11,",
            engines.trtllm_version, "0.9.0")
check.error("field 'backend' must be 'pytorch' or 'tensorrt', got 'onnx'", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", backend = "onnx"}
end)
check.error("fields 'backend' and 'fail_fast_on_attention_window_too_large' are TensorRT-LLM's",
            function() kv.deploy{model = "llama-3.1-8b", gpu = "h100", backend = "pytorch"} end)

-- TensorRT-LLM's PyTorch backend (1.0 on): the dummy context requests of
-- max_num_tokens = 8192 tokens, by hand for Llama-3.1-8B (H 4096, I 14336,
-- V 128256, bf16) at max_seq_len 131072: one request of 8192 tokens; eager
-- MLP 8192 x (3 x 4096 + 3 x 14336) x 2 = 905969664 bytes (the largest
-- term), compiled end 8192 x max(2H + 3I, 3H + I) x 2 = 838860800
local t = kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm"}
check.eq(t.engine_version, "1.0", "latest TensorRT-LLM row")
check.eq(t.trtllm_backend, "pytorch", "1.0: the PyTorch backend")
check.eq(t.block, 32, "KvCacheConfig.tokens_per_block 32")
check.eq(t.profile_tokens, 8192, "max_num_tokens 8192")
check.eq(t.profile_seqs, 1, "one dummy request of 8192 tokens")
check.eq(t.activation, 905969664, "eager MLP of 8192 tokens")
check.eq(t.activation_range.lo, 838860800, "compiled end")
check.eq(t.activation_source, "predicted", "predicted")
check.eq(t.overhead, math.floor(0.19 * GiB + 0.4 * GiB), "non-torch: tp 1 + the CUDA context")
local tl = t:ledger()
check.eq(tl.kv_budget, math.floor(0.9 * (t.gpu_bytes - tl.weights - tl.activation - tl.overhead)),
         "f x (total - weights - activation - non-torch)")
-- max_seq_len 2048: requests of 2047 tokens, ceil(8192 / 2047) = 5 of them;
-- the sampler term 8192 x 4096 x 2 + 5 x 128256 x (2 + 8)
local t2 = kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", max_model_len = 2048}
check.eq(t2.profile_seqs, 5, "five dummy requests")
check.eq(t2.activation_range.terms.sampler.bytes, 8192 * 4096 * 2 + 5 * 128256 * 10, "greedy sampler")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", max_num_tokens = 4096}
           .activation, 905969664 // 2, "trtllm-serve's max_num_tokens")
-- the engine path (before 1.0): 64-token blocks, the engine's activation not predicted
local te = kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", engine_version = "0.21.0"}
check.eq(te.trtllm_backend, "tensorrt", "0.x: the TensorRT engine")
check.eq(te.block, 64, "64 tokens a block")
check.eq(te.activation_source, "none", "TensorRT's activation is the builder's")
check.eq(te.overhead_source, "predicted", "non-torch still predicted")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "trtllm", engine_version = "0.21",
                   backend = "pytorch"}.activation, 905969664, "backend chosen by name")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", budget = "trtllm"}.activation_source, "none",
         "the budget rule alone predicts nothing")

-- SGLang's defaults by release: 0.4 by tp, 0.5 by the GPU's memory
-- (ServerArgs._handle_gpu_memory_settings), by hand: an H100 (79.19 GiB =
-- 81090 MiB as the runtime reports it), tp 1: chunked_prefill_size 8192,
-- cuda_graph_max_bs 256, reserved 512 + 12288 + 512 + 128 = 13440 MiB (above
-- the 10240 floor), (81090 - 13440) / 81090 = 0.834
local e = require "kvplan.engines"
local h = kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", engine_version = "0.5"}
check.eq(h.sglang_defaults.chunked_prefill_size, 8192, "H100: 8k chunks")
check.eq(h.sglang_defaults.cuda_graph_max_bs, 256, "H100 tp 1: 256 graphs at most")
check.eq(h.sglang_defaults.reserved_mib, 13440, "reserved MiB")
check.eq(h.utilization, 0.834, "mem_fraction_static")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", engine_version = "0.4.3"}.utilization,
         0.88, "0.4: by tp")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang"}.utilization, 0.88,
         "no version: the 0.4 rule")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", engine_version = "0.5",
                   utilization = 0.7}.utilization, 0.7, "a given fraction wins")
-- a 24 GB GPU at tp 4: 2048 tokens, 80 graphs, 512 + 3072 + 160 + 512 = 4256 MiB reserved,
-- no floor below 60 GiB
local function sglang_defaults(gpu_bytes, tp)
  return kv.deploy{model = "llama-3.1-8b", gpu_memory = gpu_bytes, tp = tp, engine = "sglang",
                   engine_version = "0.5"}.sglang_defaults
end
local l4 = sglang_defaults(24 * GiB, 4)
check.eq(l4.reserved_mib, 4256, "L4-sized tp 4 reserve")
check.eq(l4.mem_fraction_static, 0.827, "fraction: (24576 - 4256) / 24576")
check.eq(table.concat(l4.cuda_graph_bs, ","), "1,2,4,8,12,16,24,32,40,48,56,64,72,80", "graph sizes")
check.eq(#sglang_defaults(192 * GiB, 8).cuda_graph_bs, 52, "512 graphs: 5 + 31 + 15 + 1 sizes")
check.eq(require("kvplan.deploy").sglang_fraction(e.sglang["0.5"], 24 * GiB, 4, 1), 0.827,
         "kvplan validate's fraction: the same rule")
check.eq(require("kvplan.deploy").sglang_fraction(e.sglang["0.4"], nil, 4, 1), 0.85,
         "0.4: by tp")
-- a multimodal model (ServerArgs.adjust_mem_fraction_for_vlm, engines.lua
-- sglang_vlm_factor): Qwen2.5-VL-7B's tower, 32 layers of 1280, is 32 x
-- 1280^2 / (24 x 1024^2) = 2.0833 ViT-L/14s: 0.95 x (1 - 0.1 x 1.0833) =
-- 0.84708 of the H100's 0.834, unrounded
local vl = kv.deploy{model = "qwen2.5-vl-7b", gpu = "h100", engine = "sglang", engine_version = "0.5"}
check.eq(math.abs(vl.utilization - 0.834 * 0.95 * (1 - 0.1 * (32 * 1280 ^ 2 / (24 * 1024 ^ 2) - 1)))
         < 1e-12, true, "the vision tower lowers the fraction")
check.eq(string.format("%.7f", vl.utilization), "0.7064675", "0.834 x 0.847083")
check.eq(vl.sglang_defaults.mem_fraction_static, vl.utilization, "and the defaults say so")
check.eq(e.sglang_vlm_factor({layers = 24, hidden = 1024}), 0.95, "a ViT-L/14: 0.95")
check.eq(e.sglang_vlm_factor({layers = 4, hidden = 512}), 0.95 * 1.05, "a small tower: at most 1.05")
check.eq(e.sglang_vlm_factor({layers = 48, hidden = 2048}), 0.95 * 0.8, "a large one: at least 0.8")
check.eq(e.sglang_vlm_factor(nil), nil, "no tower, no factor")
check.eq(kv.deploy{model = "qwen2.5-vl-7b", gpu = "h100", engine = "sglang", engine_version = "0.5",
                   utilization = 0.8}.utilization, 0.8, "a given fraction is not adjusted")
check.eq(kv.deploy{model = "qwen2.5-vl-7b", gpu = "h100", engine = "sglang",
                   engine_version = "0.4"}.utilization, 0.88, "0.4: by tp, not adjusted")
check.eq(require("kvplan.deploy").sglang_fraction(e.sglang["0.5"], vl.gpu_bytes, 1, 1,
                                                  kv.model("qwen2.5-vl-7b")),
         vl.utilization, "kvplan validate's fraction: the same rule")
check.error("unknown SGLang release '0.3' for field 'engine_version' (known: 0.4, 0.5", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", engine_version = "0.3"}
end)
check.error("field 'usage' must be 'server' or 'offline'", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", usage = "batch"}
end)
-- a model without the shape facts is not predicted, and says why
local m = kv.model{id = "tiny", layers = 2, hidden = 64, heads = 4, kv_heads = 4, head_dim = 16,
                   params = 1000000}
local t = kv.deploy{model = m, gpu_memory = "1 GiB"}
check.eq(t.activation_source, "none", "no vocab: not predicted")
check.eq(t.prediction_note, "model 'tiny' gives no vocab", "the reason")

-- ---- weights by tensor class ----------------------------------------------------
-- gpt-oss: MXFP4 experts, the rest bf16; the checkpoints' safetensors hold
-- 13761264768 and 65248815744 tensor bytes (index metadata.total_size)
check.eq(kv.model("gpt-oss-20b"):weight_size(), 13761264768, "gpt-oss-20b checkpoint bytes")
check.eq(kv.model("gpt-oss-120b"):weight_size(), 65248815744, "gpt-oss-120b checkpoint bytes")
local oss = kv.models.from_hf("tests/fixtures/hf/gpt-oss-20b")
check.eq(oss.weight_formats.experts, "mxfp4", "from_hf: experts mxfp4")
check.eq(oss.weight_formats.attention, nil, "modules_to_not_convert keeps attention bf16")
check.eq(oss:weight_size(), 13761264768, "from_hf: the config alone gives the checkpoint bytes")
local dgp = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = 0, overhead = 0,
                      mxfp4_backend = "checkpoint"}
check.eq(dgp.weights.name, "bf16+experts:mxfp4", "mixed format named by class")
-- and adds vLLM's rotary cache: gpt_oss.py builds YaRN's 4096 x 32 positions
-- x 64 in float32 (engines.lua vllm_rotary)
check.eq(dgp:ledger().rotary, 4096 * 32 * 64 * 4, "gpt-oss's float32 rotary cache")
check.eq(dgp:ledger().weights, 13761264768 + 4096 * 32 * 64 * 4, "the ledger weighs the classes")
-- as vLLM loads them (engines.mxfp4_expert_bytes), by hand for gpt-oss-20b
-- (24 layers x 32 experts, H = I = 2880): per expert the checkpoint holds
-- 1440 x 5760 + 1440 x 2880 packed bytes, 777600 scales, 2 x 8640 bias
-- bytes = 13236480; Marlin pads I to 2944 and H to 3072:
-- 2944 x 3072 x 3 / 2 + 2944 x 3072 x 3 / 32 + 2 x (5888 + 3072) = 14431744
local mar = kv.deploy{model = "gpt-oss-20b", gpu = "a100-80gb", activation = 0, overhead = 0}
check.eq(mar.mxfp4_backend, "marlin", "A100 (capability 8.0): Marlin")
check.eq(mar.weights_source, "loaded (marlin)", "weights as loaded")
check.eq(mar:ledger().weights, 13761264768 + 24 * 32 * (14431744 - 13236480) + mar:ledger().rotary,
         "Marlin's padded experts")
-- Triton on Hopper: values unpadded (multiples of 32), swizzled scales with
-- rows to 256 (5888 x 90 + 3072 x 90), the checkpoint's 777600 scales kept,
-- fp32 biases 4 x 8640: 12441600 + 529920 + 276480 + 777600 + 34560
local tri = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = 0, overhead = 0,
                      mxfp4_backend = "triton"}
check.eq(tri:ledger().weights, 13761264768 + 24 * 32 * (14060160 - 13236480) + tri:ledger().rotary,
         "Triton's layout")
-- TP 4: I_p = 720 pads to 768 under Marlin, per GPU
local ckpt4 = 24 * 32 * (3 * 720 * 2880 // 2 + 3 * 720 * 2880 // 32 + 2 * (1440 + 2880))
local marlin4 = 24 * 32 * (3 * 768 * 3072 // 2 + 3 * 768 * 3072 // 32 + 2 * (1536 + 3072))
check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "a100-80gb", tp = 4, activation = 0,
                   overhead = 0}.weight_bytes, 13761264768 + 4 * (marlin4 - ckpt4),
         "TP 4 Marlin: each GPU's padded experts")
check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "h100", weight_bytes = 1000}.weight_bytes, 1000,
         "given weight bytes are not repacked")
-- the kernel by release on an H100: Marlin assumed until vLLM bundles
-- triton_kernels (#28788, assumed 0.12), Triton's layout from then on
local h11 = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = 0, overhead = 0,
                      engine_version = "0.11.2"}
local h12 = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = 0, overhead = 0,
                      engine_version = "0.12"}
check.eq(h11.mxfp4_backend, "marlin", "0.11.2: Marlin assumed")
check.eq(h12.mxfp4_backend .. "/" .. tostring(h12.weights_note), "triton/nil", "0.12: Triton, no assumption")
check.eq(h12.weight_bytes, tri.weight_bytes, "0.12: Triton's layout")
check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "a100-80gb", engine_version = "0.12"}.mxfp4_backend,
         "marlin", "capability 8.0 keeps Marlin")
check.error("unknown mxfp4_backend 'marlinn' (did you mean 'marlin'?)", function()
  kv.deploy{model = "gpt-oss-20b", gpu = "h100", mxfp4_backend = "marlinn"}
end)
check.error("field 'mxfp4_backend' needs a model with MXFP4 experts, 'llama-3.1-8b' has none", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", mxfp4_backend = "marlin"}
end)
local c = kv.model("gpt-oss-20b"):weight_class_params()
check.eq(c.experts, 24 * 32 * 3 * 2880 * 2880, "expert parameters")
check.eq(c.embeddings, 201088 * 2880, "embeddings")
-- a weights option still overrides the classes
check.eq(kv.deploy{model = "gpt-oss-20b", gpu = "h100", weights = "bf16"}:ledger().weights,
         20914757184 * 2 + 4096 * 32 * 64 * 4, "weights = bf16: every parameter (and the rotary cache)")
check.error("field 'weight_formats.experts': unknown format 'int5x'", function()
  kv.model{id = "x", layers = 1, hidden = 8, heads = 1, head_dim = 8, params = 1000,
           weight_formats = {experts = "int5x"}}
end)
check.error("unknown field 'expert' in weight_formats (did you mean 'experts', 'shared_experts'?)", function()
  kv.model{id = "x", layers = 1, hidden = 8, heads = 1, head_dim = 8, params = 1000,
           weight_formats = {expert = "mxfp4"}}
end)

-- ---- the engine refuses to start ---------------------------------------------------
-- Llama-3.1-8B on an RTX 3090 at max_model_len 29000 (vLLM 0.6.4, the log of
-- vllm-project/vllm#10517: 0.82x, refused); the measured reserves given
local refused = kv.deploy{model = "llama-3.1-8b", gpu_memory = kv.bytes("23.58 GiB"),
                          weight_bytes = kv.bytes("14.9888 GiB"), activation = kv.bytes("2.99 GiB"),
                          overhead = kv.bytes("0.35 GiB"), max_model_len = 29000}
local ok, why = refused:starts()
check.eq(ok, false, "29000 tokens do not fit: vLLM refuses")
check.eq(why:find("vLLM refuses to start: one request of max_model_len 29000 tokens", 1, true), 1,
         "the reason")
check.eq(kv.report.ledger_row(refused, 1024, 1).fits, false, "fits never hides a refusal")
check.eq(select(1, refused:with{max_model_len = 20000}:starts()), true, "20000 tokens start")
check.eq(select(1, kv.deploy{model = "llama-3.1-8b", gpu = "h100", budget = "sglang"}:starts()),
         true, "other budgets: starts when it fits")

-- SGLang: no token in the pool (model_runner.py / pool_configurator.py)
local sg = kv.deploy{model = "llama-3.1-70b", gpu = "h100", engine = "sglang"}
ok, why = sg:starts()
check.eq(ok, false, "70B in bf16 on one H100: SGLang refuses")
check.eq(why:find('SGLang refuses to start ("Not enough memory. Please try to increase '
                  .. '--mem-fraction-static."): mem_fraction_static 0.880', 1, true), 1, "SGLang's error")
-- a pool of 5 tokens: max_req_input_len = min(context_len - 1, 4) - 5 < 1 (tp_worker.py);
-- Llama-3.1-8B holds 131072 bytes a token, page 1
local function sg_pool(n)
  return kv.deploy{model = "llama-3.1-8b", gpu_memory = n * 131072 + 1, weight_bytes = 1,
                   engine = "sglang", utilization = 1, overhead = 0}
end
ok, why = sg_pool(5):starts()
check.eq(ok, false, "5 tokens: too small")
check.eq(why, 'SGLang refuses to start ("Memory pool size is too small"): a pool of 5 tokens '
         .. "leaves max_req_input_len = min(context_len - 1, 5 - 1) - 5 = -1", "the assertion")
check.eq(kv.report.ledger_row(sg_pool(5), 1, 1).fits, false, "report rows say so")
ok, why = sg_pool(7):starts()
check.eq(ok, true, "7 tokens: max_req_input_len 1")
check.eq(why, "SGLang starts and cuts requests to max_req_len 6 tokens (max_total_num_tokens 7 - 1 "
         .. "< context_len 131072 - 1)", "no refusal, a cut")
-- TensorRT-LLM (PyTorch backend): max_tokens = floor(0.9 x (128 KiB + 1) / 131072) = 0, no
-- block of 32: "Impossible to fit in any sequence in kvCache"; a pool of some tokens has
-- ceil(max_tokens / 32) blocks, as 1.1.0rc3 allocates (engines.lua), and cuts max_seq_len
local function trt(mib, o)
  local opts = {model = "llama-3.1-8b", gpu_memory = mib * 1048576 + 1, weight_bytes = 1,
                engine = "trtllm", activation = 0, overhead = 0}
  for k, v in pairs(o or {}) do opts[k] = v end
  return kv.deploy(opts)
end
ok, why = trt(1 / 8):starts()
check.eq(ok, false, "no token: no block")
check.eq(why, 'TensorRT-LLM refuses to start ("Impossible to fit in any sequence in kvCache"): '
         .. "0.00 GiB of KV memory holds 0 tokens, not one block of 32", "TensorRT-LLM's assertion")
check.eq(kv.report.ledger_row(trt(1 / 8), 16, 1).fits, false, "report rows say so")
-- 0.9 x 4 MiB holds 28 tokens, one block: max_seq_len is cut to 32, or refused under fail-fast
ok, why = trt(4):starts()
check.eq(ok, true, "one block: starts")
check.eq(why, "TensorRT-LLM starts with maxAttentionWindow and maxSequenceLen reduced to 32 (1 "
         .. "blocks of 32 tokens; max_seq_len 131072 does not fit one sequence)", "the warning")
ok, why = trt(4, {fail_fast_on_attention_window_too_large = true}):starts()
check.eq(ok, false, "fail fast")
check.eq(why:find('TensorRT-LLM refuses to start ("Attention window too large to fit even a single '
                  .. 'sequence in the KV cache.', 1, true), 1, "the fail-fast error")
check.eq(kv.report.ledger_row(trt(4, {fail_fast_on_attention_window_too_large = true}), 16, 1).fits,
         false, "fits never hides it")
check.eq(select(1, trt(4, {fail_fast_on_attention_window_too_large = true, max_model_len = 32})
                     :starts()), true, "32 tokens fit one block")
-- 0.9 x 5 MiB holds 36 tokens: two blocks, cut to 64
check.eq(select(2, trt(5):starts()):find("reduced to 64 (2 blocks", 1, true) ~= nil, true,
         "ceil(36 / 32) blocks")
-- Mamba layers alone hold no per-token KV: nothing for SGLang or TensorRT-LLM to refuse
check.eq(select(1, kv.deploy{model = "falcon-mamba-7b", gpu = "h100", engine = "sglang"}:starts()),
         true, "SGLang: no KV tokens, no refusal")
check.eq(select(1, kv.deploy{model = "falcon-mamba-7b", gpu = "h100", engine = "trtllm"}:starts()),
         true, "TensorRT-LLM: no KV tokens, no refusal")
-- max_tokens caps the pool: 16 tokens take one block
check.eq(select(2, trt(5, {max_kv_tokens = 16}):starts()):find("reduced to 32 (1 blocks", 1, true)
         ~= nil, true, "max_tokens below a block: one block")

-- quantization_config -> weight classes (config alone, no safetensors beside it)
local tmp = check.tmpdir()
local base = check.slurp("tests/fixtures/hf/tiny-gptq/config.json")
local function quant(q)
  local path = tmp .. "/config.json"
  local fh = assert(io.open(path, "wb"))
  fh:write((base:gsub('"quantization_config": %b{}', '"quantization_config": ' .. q)))
  fh:close()
  return kv.models.from_hf(path)
end
local gq = quant('{"quant_method": "gptq", "bits": 4, "group_size": 32, "sym": true}')
check.eq(table.concat(kv.util.sorted_keys(gq.weight_formats), ","), "attention,experts,mlp,shared_experts",
         "GPTQ quantizes the linear layers")
-- 1024 + 1024 embeddings and head in fp16 (2 bytes), 3072 attention and 6144 MLP weights at
-- 4 bits + an fp16 scale per 32 (4.5 bits), 96 norm weights in fp16
check.eq(gq:weight_size(), 2048 + 2048 + 3072 * 9 // 16 + 6144 * 9 // 16 + 192, "by class")
local head = quant('{"quant_method": "gptq", "bits": 4, "group_size": 32, "sym": true, "lm_head": true}')
check.eq(head.weight_formats.lm_head.name, "int4-g32-sym", "GPTQ lm_head: true quantizes the head")
local skip = quant('{"quant_method": "awq", "bits": 4, "group_size": 32, "zero_point": true, ' ..
                   '"modules_to_not_convert": ["visual", "model.layers.0.self_attn"]}')
-- AWQ matches an entry as a substring of the layer's prefix (vLLM
-- is_layer_skipped_awq): "model.layers.0.self_attn" is layer 0's attention
-- alone, here the one layer's, counted apart as the class stays quantized
check.eq(skip.weight_formats.attention.name, "int4-g32", "the class stays quantized")
check.eq(skip.unquantized_layers.attention, 1, "modules_to_not_convert keeps layer 0's attention in fp16")
check.eq(skip:weight_size(), quant('{"quant_method": "awq", "bits": 4, "group_size": 32, ' ..
         '"zero_point": true, "modules_to_not_convert": ["self_attn"]}'):weight_size(),
         "one layer of one: the bytes of the whole class in fp16")
check.eq(skip.weight_formats.mlp.name, "int4-g32", "the MLP stays quantized")
-- fp8 matches a layer's name exactly (vLLM is_layer_skipped's
-- prefix_full_match): no linear layer is named "model.layers.0.mlp", the MLP
-- stays FP8 (before: the class in the dtype)
local ign = quant('{"quant_method": "fp8", "weight_block_size": [128, 128], "ignore": ["lm_head", "model.layers.0.mlp"]}')
check.eq(ign.weight_formats.mlp.name, "fp8-b128x128", "a block entry names no fp8 linear layer")
check.eq(ign.unquantized_layers, nil, "nothing counted apart")
check.eq(ign.weight_formats.attention.name, "fp8-b128x128", "block-scaled FP8 attention")
local ign3 = quant('{"quant_method": "fp8", "weight_block_size": [128, 128], "ignored_layers": ' ..
                   '["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"]}')
check.eq(ign3.unquantized_layers.mlp, 1, "layer 0's three MLP projections listed: its MLP in the dtype")
os.remove(tmp .. "/config.json")
os.remove(tmp)

-- engine names the budget rule too
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang"}.budget, "sglang", "engine")
check.error("fields 'engine' ('sglang') and 'budget' ('vllm') disagree", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", budget = "vllm"}
end)

-- what "GPU KV cache size" prints, by release
check.eq(engines.vllm_version("0.26.1") == engines.vllm["0.21"], true, "0.26 maps to the 0.21 row")

-- the engine by VLLM_USE_V1 (vllm_use_v1): the V0 engine of 0.8 to 0.10 has
-- 0.7's V0 worker, scheduler and block manager, the release's kernels
local r0 = engines.vllm_engine(engines.vllm["0.9"], "0.9", false)
for _, k in ipairs{"v1", "eager", "big_seqs", "nccl_counted", "context_counted", "hybrid_manager"} do
  check.eq(r0[k], engines.vllm["0.7"][k], "V0 on 0.9: " .. k)
end
check.eq(r0.moe_cache13, engines.vllm["0.9"].moe_cache13, "V0 on 0.9: the release's MoE kernel")
check.eq(engines.vllm_engine(engines.vllm["0.9"], "0.9", true) == engines.vllm["0.9"], true,
         "V1 is 0.9's own")
check.eq(select(2, engines.vllm_engine(engines.vllm["0.7"], "0.7", true)), "0.7-v1", "0.7's V1")
check.error("vLLM 0.11 has no V0 engine", function() engines.vllm_engine(engines.vllm["0.11"], "0.11", false) end)
check.error("vLLM 0.6 has no V1 engine", function() engines.vllm_engine(engines.vllm["0.6"], "0.6", true) end)
local g0 = kv.deploy{model = "gemma-3-27b", gpu = "h100", engine_version = "0.10", vllm_use_v1 = false,
                     activation = "1 GiB", overhead = "1 GiB", max_model_len = 32768}
check.eq(g0:ledger().kv_groups, 1, "the V0 engine of 0.10 keeps one KV type")
check.eq(g0.vllm_v0, true, "the deployment says V0")
-- VLLM_USE_V1 unset: 0.8-0.10's _is_v1_supported_oracle falls back to V0 on
-- a GPU of compute capability < 8.0 and for an encoder-decoder model
-- (vllm/engine/arg_utils.py of 0.8.4: "Compute Capability < 8.0", "No Mamba
-- or Encoder-Decoder so far"); VLLM_USE_V1=1 keeps V1, 0.11 has no V0
local function dep(m, g, v, use_v1)
  return kv.deploy{model = m, gpu = g, engine_version = v, vllm_use_v1 = use_v1, max_model_len = 4096}
end
local t4 = dep("llama-3.1-8b", "t4", "0.9")
check.eq(t4.vllm_v0, true, "a T4 (7.5) on 0.9 runs V0")
check.eq(t4.vllm_v0_reason, "vLLM 0.9 falls back to V0: compute capability 7.5 < 8.0 (t4)",
         "the reason names the capability")
local t4v0 = dep("llama-3.1-8b", "t4", "0.9", false)
check.eq(t4.activation, t4v0.activation, "the fallback's activation is V0's (eager, V0's profile)")
check.eq(t4.profile_tokens, 4096, "V0's profile: max(max_model_len, 2048) tokens without chunking")
local t4v1 = dep("llama-3.1-8b", "t4", "0.9", true)
check.eq(t4v1.vllm_v0, nil, "VLLM_USE_V1=1 keeps V1 on a T4")
check.eq(t4v1.profile_tokens, 2048, "V1's profile: 2048 tokens")
check.eq(t4.activation ~= t4v1.activation, true, "the two engines' activations differ")
check.eq(dep("llama-3.1-8b", "l4", "0.9").vllm_v0, nil, "an L4 (8.9) runs V1")
check.eq(dep("llama-3.1-8b", "v100-sxm2-16gb", "0.8").vllm_v0, true, "a V100 (7.0) on 0.8 runs V0")
check.eq(dep("llama-3.1-8b", "t4", "0.11").vllm_v0, nil, "0.11 has no V0 to fall back to")
local wh = dep("whisper-large-v3", "h100", "0.10")
check.eq(wh.vllm_v0, true, "Whisper (encoder-decoder) on 0.10 runs V0")
check.eq(wh.vllm_v0_reason:find("encoder%-decoder") ~= nil, true, "the reason says encoder-decoder")
check.eq(wh.activation, dep("whisper-large-v3", "h100", "0.10", false).activation,
         "Whisper's fallback is the V0 engine")
check.eq(dep("qwen3-8b", "h100", "0.10").vllm_v0, nil, "a decoder on an H100 runs V1")
-- 0.8's oracle also falls back for an fp8 KV cache off FlashAttention 3's
-- fp8 (capability 9.x) and off CUDA (V1 "off by default" there)
local function depkv(g, v, k)
  return kv.deploy{model = "llama-3.1-8b", gpu = g, engine_version = v, kv = k, max_model_len = 4096}
end
check.eq(depkv("a100-80gb", "0.8", "fp8").vllm_v0_reason,
         "vLLM 0.8 falls back to V0: an fp8 KV cache without FlashAttention 3's fp8 "
         .. "(compute capability 8.0, not 9.x)", "fp8 KV on an A100 at 0.8: V0")
check.eq(depkv("h100-sxm", "0.8", "fp8").vllm_v0, nil, "fp8 KV on an H100 at 0.8: V1 (FA3)")
check.eq(depkv("a100-80gb", "0.8").vllm_v0, nil, "bf16 KV on an A100 at 0.8: V1")
check.eq(depkv("a100-80gb", "0.9", "fp8").vllm_v0, nil, "0.9's platform check is not modelled: V1")
check.eq(depkv("mi300x", "0.8").vllm_v0_reason,
         "vLLM 0.8 falls back to V0: a non-CUDA platform (amd mi300x), V1 off by default",
         "an MI300X at 0.8: V0")
check.eq(depkv("mi300x", "0.9").vllm_v0, nil, "an MI300X at 0.9: V1")
check.eq(engines.vllm_version("0.20.2") == engines.vllm["0.20"], true, "0.20.2 maps to the 0.20 row")
local function log_ledger(version)
  -- the kernel named: its default follows the release too (Triton from 0.12);
  -- one utilization (its default follows the release: 0.92 from 0.20)
  return kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = 0, overhead = 0, utilization = 0.9,
                   max_model_len = 8192, engine_version = version, mxfp4_backend = "marlin"}:ledger()
end
local l20, l11 = log_ledger("0.26.1"), log_ledger("0.11")
check.eq(l20.vllm_max_concurrency, l11.vllm_max_concurrency, "the same cache either way")
check.eq(l20.vllm_kv_cache_tokens, math.floor(l11.vllm_max_concurrency * 8192),
         "newer releases: concurrency x max_model_len")
check.eq(l11.vllm_kv_cache_tokens, l11.kv_blocks // l11.kv_groups * 16,
         "older releases: blocks per group x block")
check.eq(l20.vllm_kv_cache_tokens > l11.vllm_kv_cache_tokens, true,
         "sliding windows hold less than their share: more tokens by concurrency")

-- ---- pipeline stages profile their own layers; the last one samples -------
do
  local pp = kv.deploy{model = "qwen3-30b-a3b", gpu = "h100", tp = 4, pp = 2, engine_version = "0.10"}
  local one = kv.deploy{model = "qwen3-30b-a3b", gpu = "h100", tp = 4, engine_version = "0.10"}
  check.eq(pp.stage_activation[1], one.activation_range.forward, "stage 1: the forward alone")
  check.eq(one.activation_range.terms.moe.bytes <= one.activation_range.forward, true,
           "the forward covers the layers' terms")
  check.eq(pp.stage_activation[2], pp.activation, "the last stage: the sampler too")
  check.eq(pp.stage_activation[2] > pp.stage_activation[1], true, "the sampler is the larger term here")
  local l = pp:ledger()
  check.eq(l:worker(1).kv_budget - l:worker(2).kv_budget, pp.stage_activation[2] - pp.stage_activation[1],
           "stage budgets differ by their activation peaks (same weights per stage here)")
  check.eq(l.activation, pp.activation, "the ledger's activation is the tight stage's")
  local given = kv.deploy{model = "qwen3-30b-a3b", gpu = "h100", tp = 4, pp = 2, activation = "1 GiB"}
  check.eq(given.stage_activation, nil, "a given activation applies to every stage")
end

-- ---- bitsandbytes 4-bit: the profile dequantizes one shard at a time -------
do
  -- vllm-project/vllm#14452's deployment (V0 0.8, PP 2 on RTX 5090s): stage 0
  -- holds down_proj's dequantized shard (27648 x 5120 x 2) and matmul_4bit's
  -- product beside the eager MLP (engine/core/predict.c, tests/unit/test_predict.c)
  local function stage0(wf)
    local m = kv.models.get("qwen2.5-32b")
    local t = {}
    for k, v in pairs(m) do if k ~= "core" and k ~= "weight_bytes" then t[k] = v end end
    t.weight_formats = wf
    local d = kv.deploy{model = wf and kv.model(t) or "qwen2.5-32b", gpu = "rtx-5090", pp = 2,
                        engine_version = "0.8", vllm_use_v1 = false, max_model_len = 50000}
    return d.stage_activation[1], d.stage_activation[2]
  end
  local bf0, bf1 = stage0(nil)
  local q0, q1 = stage0{attention = "bnb-4bit-dq", mlp = "bnb-4bit-dq"}
  check.eq(bf0, 2048 * (3 * 5120 + 3 * 27648) * 2 + 8519680, "bf16: the eager MLP")
  check.eq(q0, 2048 * (4 * 5120 + 3 * 27648) * 2 + 27648 * 5120 * 2 + 8519680,
           "bnb-4bit: + the dequantized shard and the product")
  check.eq(q1, bf1, "the last stage: the sampler stays the peak")
  local a8 = stage0{attention = "bnb-int8-g5120", mlp = "bnb-int8-g5120"}
  check.eq(a8, bf0, "8-bit (LLM.int8's matmul) is not counted so")
end

-- ---- "GPU KV cache size" as the release prints it -------------------------
do
  -- the MXFP4 kernel named (its default follows the release: Triton from 0.12)
  -- (one utilization: the default moved to 0.92 in 0.20, below)
  local old = kv.deploy{model = "gpt-oss-20b", gpu = "h100", engine_version = "0.11", max_model_len = 32768,
                        mxfp4_backend = "marlin", utilization = 0.9}:ledger()
  local new = kv.deploy{model = "gpt-oss-20b", gpu = "h100", engine_version = "0.20", max_model_len = 32768,
                        mxfp4_backend = "marlin", utilization = 0.9}:ledger()
  check.eq(new.vllm_max_concurrency, old.vllm_max_concurrency, "the same pool and concurrency")
  check.eq(new.vllm_kv_cache_tokens, math.floor(new.vllm_max_concurrency * 32768),
           "0.20: int(max concurrency x max_model_len)")
  check.eq(old.vllm_kv_cache_tokens < new.vllm_kv_cache_tokens, true,
           "older releases count blocks per group: fewer tokens for a sliding-window model")
end

-- ---- the vision encoder's dummy batch (engine/core/predict.c vision_item, vision_run)
do
  local m = kv.model("qwen2.5-vl-7b")
  local function enc(o)
    return kv.deploy(o).activation_range.encoder
  end
  -- the largest image: a 3584-pixel square, 256 x 256 patches of 14, merged by 2 x 2
  local q = enc{model = "qwen2.5-vl-7b", gpu = "h100", engine_version = "0.10",
                max_model_len = 32768, max_num_batched_tokens = 8192, max_num_seqs = 256}
  check.eq(q.item_patches, 65536, "max_pixels 12845056: 65536 patches")
  check.eq(q.item_tokens, 16384, "16384 tokens for the decoder")
  check.eq(q.inputs, q.items * 65536 * (3 * 2 * 14 * 14) * 2,
           "0.10: the processor's pixel values cast to bf16 (vllm-project/vllm#18862)")
  check.eq(q.cast, 0, "0.10: no copy in the tower")
  -- the release of the cast (engines.vllm_pixel_cast_release): float32 and
  -- their bf16 copy before it, bf16 from it on
  local p901 = enc{model = "qwen2.5-vl-7b", gpu = "l4", engine_version = "0.9.0.1",
                   max_model_len = 2048}
  check.eq(p901.inputs, 65536 * 1176 * 4, "0.9.0.1: fp32 pixel values")
  check.eq(p901.cast, 65536 * 1176 * 2, "0.9.0.1: their bf16 copy")
  check.eq(p901.peak_hi, 65536 * 1176 * 6 + 65536 * 16660 * 2, "0.9.0.1: inputs, copy, block")
  local p92 = enc{model = "qwen2.5-vl-7b", gpu = "l4", engine_version = "0.9.2",
                  max_model_len = 2048}
  check.eq(p92.inputs, 65536 * 1176 * 2, "0.9.2: bf16 pixel values")
  check.eq(p92.cast, 0, "0.9.2: no copy")
  check.eq(p92.peak_hi, 65536 * 1176 * 2 + 65536 * 16660 * 2, "0.9.2: inputs and block")
  check.eq(p92.kept, 65536 * 1176 * 2 + 16384 * 3584 * 2, "0.9.2: bf16 inputs kept")
  check.eq(q.items, 1, "V1: one image when it is larger than the batch")
  check.eq(q.budget, 16384, "V1's budget: at least one item")
  local clip = enc{model = "llava-1.5-7b", gpu = "h100", engine_version = "0.10",
                   max_model_len = 4096, max_num_batched_tokens = 8192, max_num_seqs = 256}
  check.eq(clip.item_patches, 577, "CLIP ViT-L/336: 576 patches and the class token")
  check.eq(clip.item_tokens, 576, "the class token is not handed to the decoder")
  -- V1: budget max(N, T) // T items, capped by max_num_seqs x items a prompt
  check.eq(clip.items, 14, "8192 // 576 items")
  check.eq(enc{model = "llava-1.5-7b", gpu = "h100", engine_version = "0.10", max_model_len = 4096,
               max_num_batched_tokens = 8192, max_num_seqs = 2, limit_mm_per_prompt = 1}.items, 2,
           "max_num_seqs x limit_mm_per_prompt caps them")
  local v0 = enc{model = "llava-1.5-7b", gpu = "h100", engine_version = "0.7",
                 max_num_batched_tokens = 8192, max_num_seqs = 4}
  check.eq(v0.items, 4, "V0: max_num_seqs sequences of one item, at most N // T")
  check.eq(v0.budget, nil, "V0 has no encoder budget")
  -- V0, an image and a video of 16384 tokens a sequence: one sequence of 32768
  local k = kv.deploy{model = "qwen2.5-vl-7b", gpu = "h100", engine_version = "0.7",
                      max_num_batched_tokens = 8192, max_num_seqs = 256, max_model_len = 32768}
  check.eq(k.activation_range.encoder.items, 2, "V0: an item of each modality")
  check.eq(k.activation_range.encoder.decoder_tokens, 32768, "V0: the dummy sequence holds its items whole")
  check.eq(k.activation_range.terms.sampler.bytes > 0, true, "V0: max_num_seqs capped at 1, one row sampled")
  local old = kv.deploy{model = "qwen2.5-vl-7b", gpu = "rtx-3090", engine_version = "0.7",
                        max_model_len = 8192}
  local oa = old.activation_range
  check.eq(oa.encoder.items, 2, "V0 deploy: image and video")
  check.eq(oa.encoder.decoder_tokens, 32768, "V0 deploy: the decoder runs 32768 tokens")
  check.eq(oa.terms.mlp.bytes, 32768 * (3 * 3584 + 3 * 18944) * 2 + 8519680,
           "V0's eager MLP over them, with the RTX 3090's cuBLAS workspace")
  check.eq(oa.largest, "mlp", "the decoder, with the kept inputs and outputs, sets V0's peak")
  check.eq(oa.bytes, oa.terms.mlp.bytes + oa.encoder_kept, "V0: kept under the MLP")
  -- the two items go through the tower in turn: one item's block, the first's outputs held
  check.eq(oa.encoder.block_hi, 65536 * 16660 * 2, "one call's block")
  check.eq(oa.encoder.peak_hi, oa.encoder.inputs + oa.encoder.cast + oa.encoder.outputs // 2
           + oa.encoder.block_hi, "V0: the video's call holds the image's outputs")

  -- kv.deploy: the encoder term and the kept outputs in the prediction
  local d = kv.deploy{model = "qwen2.5-vl-7b", gpu = "a100-80gb", engine_version = "0.10",
                      max_model_len = 32768}
  local a = d.activation_range
  local e = a.encoder
  -- one item: 65536 patches x max(5 x 1280 + 3 x 3420, 10 x 1280) x 2 bytes
  check.eq(e.block_hi, 65536 * 16660 * 2, "the tower's gated MLP sets its peak")
  check.eq(e.inputs, 65536 * 1176 * 2, "bf16 pixel values kept (0.10)")
  check.eq(e.cast, 0, "no copy (0.10)")
  check.eq(e.outputs, 16384 * 3584 * 2, "16384 embeddings of 3584 kept")
  check.eq(e.peak_hi, e.inputs + e.cast + e.block_hi, "the encoder forward's peak")
  -- the term holds the A100's cuBLAS workspace (8,519,680), the tower's GEMMs allocate it
  check.eq(a.terms.encoder.bytes, e.peak_hi + 8519680, "the encoder term")
  check.eq(a.encoder_kept, e.inputs + e.outputs, "kept through the decoder run")
  local note
  for _, it in ipairs(kv.report.ledger_items(d, 4096, 1)) do
    if it.item == "activation" then note = it.note end
  end
  check.eq(note, "vLLM's profiling-run peak, predicted (the vision encoder's dummy batch "
           .. "included: 1 item)", "the ledger says the encoder is in the peak")
  local text = kv.deploy{model = "qwen2.5-vl-7b", gpu = "a100-80gb", engine_version = "0.10",
                         max_model_len = 32768, skip_mm_profiling = true}
  check.eq(text.activation_range.encoder, nil, "skip_mm_profiling: no encoder run")
  check.eq(text.activation_range.terms.encoder.bytes, 0, "no encoder term")
  check.eq(d.activation, math.max(e.peak_hi + 8519680, text.activation + e.kept),
           "the peak: the encoder's, or the decoder's with the kept outputs")
  local none = kv.deploy{model = "qwen2.5-vl-7b", gpu = "a100-80gb", engine_version = "0.10",
                         max_model_len = 32768, limit_mm_per_prompt = 0}
  check.eq(none.activation, text.activation, "limit_mm_per_prompt = 0: no image, no encoder run")
  check.error("field 'skip_mm_profiling' must be true or false", function()
    kv.deploy{model = "qwen2.5-vl-7b", gpu = "a100-80gb", skip_mm_profiling = "yes"}
  end)
  -- the vision tower is a weight class of its own
  local c = m:weight_class_params()
  check.eq(c.vision, 676550144, "vision tower parameters")
  check.eq(c.embeddings + c.lm_head + c.attention + c.mlp + c.vision + c.other, m.params,
           "the classes add up")
  check.error("vision.hidden", function()
    kv.model{id = "bad", layers = 2, hidden = 8, heads = 2, params = 100,
             vision = {intermediate = 4, patch = 14, out_hidden = 8, max_pixels = 100}}
  end)
  check.error("needs one of max_pixels or image_size", function()
    kv.model{id = "bad", layers = 2, hidden = 8, heads = 2, params = 100,
             vision = {hidden = 4, intermediate = 4, patch = 14, out_hidden = 8}}
  end)
end

-- a CLIP tower (LLaVA-1.5): fixed 336-pixel images of 577 patches, 576 tokens;
-- V1 batches 2048 // 576 = 3 of them, far under the sampler's peak
do
  local d = kv.deploy{model = "llava-1.5-7b", gpu = "l4", engine_version = "0.10", max_model_len = 4096}
  local a = d.activation_range
  check.eq(a.encoder.items, 3, "three images in 2048 tokens")
  check.eq(a.encoder.budget, 2048, "the budget: max_num_batched_tokens")
  -- per patch: ungated MLP 5H + 2I = 13312, attention 10H = 10240, the
  -- projector 2H + 2 x 4096 + 4096 = 14336 sets it
  check.eq(a.encoder.merger, 3 * 577 * 14336 * 2, "the projector's per-patch bytes")
  check.eq(a.encoder.block_hi, 3 * 577 * 13312 * 2, "the CLIP layer's")
  check.eq(a.encoder.peak_hi, a.encoder.inputs + a.encoder.cast + a.encoder.merger, "the projector's peak")
  check.eq(a.encoder.outputs, 3 * 576 * 4096 * 2, "576 embeddings an image kept")
  check.eq(a.largest, "sampler", "the sampler sets LLaVA's peak")
  check.eq(kv.model("llava-1.5-7b"):weight_class_params().vision, 324487168, "tower and projector")
end

-- bitsandbytes 4-bit with double quantization: vLLM before 0.9.2 holds the
-- nested absmax, from 0.9.2 on dequantize_dq turns it into fp32 (#19742)
do
  local base = kv.model("llama-3.1-8b")
  local t = {}
  for k, v in pairs(base) do if k ~= "core" then t[k] = v end end
  t.id, t.weight_formats = "llama-bnb", {attention = "bnb-4bit-dq", mlp = "bnb-4bit-dq"}
  local m = kv.model(t)
  local c = m:weight_class_params()
  local lin = c.attention + c.mlp
  local rest = (c.embeddings + c.lm_head + c.other) * 2
  local old = kv.deploy{model = m, gpu = "l4", engine_version = "0.9.1", max_model_len = 4096}
  check.eq(old.weight_bytes, rest + lin // 2 + lin // 64 + lin // 64 // 256 * 4, "0.9.1: nested absmax")
  check.eq(old.weights_source, "checkpoint", "0.9.1: as the checkpoint")
  local new = kv.deploy{model = m, gpu = "l4", engine_version = "0.9.2", max_model_len = 4096}
  check.eq(new.weight_bytes, rest + lin // 2 + lin // 64 * 4, "0.9.2: fp32 absmax")
  check.eq(new.weights_source, "loaded (bitsandbytes absmax dequantized to fp32)", "0.9.2: as loaded")
  check.eq(kv.deploy{model = m, gpu = "l4", max_model_len = 4096}.weight_bytes, new.weight_bytes,
           "the latest release dequantizes")
  check.eq(engines.vllm_at_least("0.10", "0.9.2"), true, "0.10 after 0.9.2")
  check.eq(engines.vllm_at_least("0.9", "0.9.2"), false, "0.9 is 0.9.0")
end

-- non-torch memory from its parts (engines.non_torch): NCCL's connection
-- is its three protocols' default buffers, the custom all-reduce two 8 MiB
-- buffers; P2P follows the catalog's interconnect
do
  local nt = engines.non_torch
  check.eq(nt.nccl_connection, 4194304 + 524288 + 4915200, "Simple + LL + LL128")
  check.eq(nt.custom_ar, 16777216, "meta_ptrs and buffer_ptrs of max_size 8 MiB")
  check.eq(engines.peer_to_peer(kv.gpu("h100-sxm")), true, "NVLink 4")
  check.eq(engines.peer_to_peer(kv.gpu("mi300x")), true, "Infinity Fabric")
  check.eq(engines.peer_to_peer(kv.gpu("l40s")), false, "PCIe alone")
  check.eq(engines.peer_to_peer(kv.gpu("rtx-3090")), false, "a 2-way bridge is not assumed")
  -- 0.10 counts them at tp 2 over NVLink: the base + 2 channels of PyNccl's
  -- communicator + the custom all-reduce + 2 channels of torch's, the tp
  -- group's ProcessGroupNCCL formed at the profile run's logits gather; not
  -- over PCIe; from 0.11 on torch's alone (the snapshot after NCCL's init)
  local function nt_at(gpu, version)
    return kv.deploy{model = "llama-3.1-8b", gpu = gpu, tp = 2, engine_version = version}
  end
  local h = nt_at("h100-sxm", "0.10")
  check.eq(h.overhead, math.floor(nt.base.point + 2 * 2 * nt.nccl_connection + nt.custom_ar),
           "H100 at tp 2 in 0.10")
  check.eq(h.overhead_range.hi, math.floor(nt.base.hi + 2 * 2 * 64 * nt.nccl_connection + nt.custom_ar),
           "the high end: 64 channels, two peers each, two communicators")
  check.eq(nt_at("l40s", "0.10").overhead, math.floor(nt.base.point), "no P2P: host buffers")
  check.eq(nt_at("h100-sxm", "0.11").overhead, math.floor(nt.base.point + 2 * nt.nccl_connection),
           "the snapshot after NCCL's init: torch's communicator after it")
  -- from 0.11 NCCL connects at the first collective (cuMem on, NCCL 2.22+,
  -- vllm-project/vllm#24141): PyNccl's channels' buffers may follow the
  -- snapshot, the high end takes them (the 0.13 log's 0.54 GiB at tp 2)
  check.eq(nt_at("h100-sxm", "0.11").overhead_range.hi,
           math.floor(nt.base.hi + 2 * 2 * 64 * nt.nccl_connection), "0.11: NCCL at runtime, high end")
  check.eq(nt_at("h100-sxm", "0.11").overhead_range.lo, math.floor(2 * nt.nccl_connection),
           "0.11: the low end torch's ring")
  -- NVLS: 16 channels x 2 x (4 MiB + 2 MiB) a head, one head per rank, at
  -- more than 2 GPUs with multicast (NVLink 4 and 5 over NVSwitch)
  check.eq(nt.nvls_head, 16 * 2 * 6 * 2^20, "NVLS per head, NCCL 2.18-2.20's layout")
  check.eq(engines.nvls_capable(kv.gpu("h100-sxm")), true, "NVLink 4")
  check.eq(engines.nvls_capable(kv.gpu("b200")), true, "NVLink 5")
  check.eq(engines.nvls_capable(kv.gpu("a100-sxm-80gb")), false, "NVLink 3: no multicast")
  check.eq(engines.nvls_capable(kv.gpu("h100-nvl")), false, "a 2-way bridge")
  check.eq(engines.nvls_capable(kv.gpu("mi300x")), false, "Infinity Fabric")
  local function tp4(gpu, version)
    return kv.deploy{model = "llama-3.1-8b", gpu = gpu, tp = 4, engine_version = version}
  end
  check.eq(tp4("h100-sxm", "0.10").overhead_range.hi,
           math.floor(nt.base.hi + 2 * (2 * 64 * nt.nccl_connection + 4 * nt.nvls_head)
                      + nt.custom_ar),
           "tp 4 on H100 in 0.10: NVLS's 4 heads in the high end, each communicator")
  check.eq(tp4("h100-sxm", "0.10").overhead, h.overhead, "the point without NVLS")
  check.eq(tp4("a100-sxm-80gb", "0.10").overhead_range.hi,
           math.floor(nt.base.hi + 2 * 2 * 64 * nt.nccl_connection + nt.custom_ar), "A100: no NVLS")
end

-- 0.6.0-0.6.4 count the CUDA context: V0's non_torch_allocations is all
-- used memory minus torch's allocated (worker.py determine_num_available_
-- blocks), where 0.7's V0 starts from a baseline taken after the context
-- exists; the context's range is the published measurements (287,047,680
-- bytes, pytorch/pytorch#86509; 426 MiB, unsloth-zoo#1053), its point 0.4 GiB
do
  local nt = engines.non_torch
  check.eq(nt.context.lo, 287047680, "context: PyTorch 1.13 with lazy loading")
  check.eq(nt.context.hi, 426 * 1048576, "context: PyTorch 2.10, CUDA 13")
  check.eq(nt.context.point, 0.4 * GiB, "context: about 400 MB")
  local function nt_at(gpu, tp, version)
    return kv.deploy{model = "llama-3.1-8b", gpu = gpu, tp = tp, engine_version = version}
  end
  -- hand count, bytes: base 0.19 GiB = 204,010,946.56, context 0.4 GiB =
  -- 429,496,729.6; tp 2 over NVLink adds, for each of the two communicators
  -- (PyNccl's, torch's), 2 channels x 9,633,792 = 19,267,584, and the custom
  -- all-reduce's 16,777,216
  check.eq(nt_at("rtx-3090", 1, "0.6.4").overhead, 633507676, "0.6.4, tp 1: base + context")
  check.eq(nt_at("h100-sxm", 2, "0.6.4").overhead, 688820060, "0.6.4, tp 2: + NCCL + custom all-reduce")
  check.eq(nt_at("h100-sxm", 2, "0.6.4").overhead_range.lo, 287047680 + 2 * 19267584 + 16777216,
           "0.6.4, tp 2, low end: the base's 0 + the context's low end")
  check.eq(nt_at("h100-sxm", 2, "0.6.4").overhead_range.hi,
           math.floor(0.5 * GiB + 426 * 1048576 + 2 * 2 * 64 * 9633792 + 16777216),
           "0.6.4, tp 2, high end")
  check.eq(nt_at("rtx-3090", 1, "0.7").overhead, 204010946, "0.7's V0: the base alone")
  check.eq(nt_at("h100-sxm", 2, "0.7").overhead, 204010946 + 2 * 19267584 + 16777216,
           "0.7, tp 2: no context")
end

-- the dummy sampler by release: the PyTorch sort path until 0.20, FlashInfer's
-- kernel from 0.21 (#40376); flashinfer_sampler = false is the sort path again
do
  local function act(v, fi)
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = v, max_model_len = 8192,
                     flashinfer_sampler = fi}.activation_range
  end
  check.eq(act("0.20").largest, "sampler", "0.20: the sort sets the peak")
  check.eq(act("0.21").bytes < act("0.20").bytes, true, "0.21: FlashInfer's sampler, a smaller peak")
  check.eq(act("0.21", false).bytes, act("0.20").bytes, "0.21 with the sampler off: the sort")
  check.eq(act("0.20", true).bytes, act("0.21").bytes, "0.20 with FlashInfer's sampler asked for")
end

-- torch's cuBLAS workspace in vLLM's profile (engines.cublas_workspace):
-- 32 MiB on compute capability 9.0, 8,519,680 bytes on other NVIDIA GPUs,
-- none counted off NVIDIA; and the hidden states the dummy sampler keeps by
-- release (engines.vllm_sampler_hidden: 0 V0, 1 0.8-0.9.0, 2 0.9.1, 3 on)
do
  check.eq(engines.cublas_workspace(kv.gpu("h100-sxm")), 33554432, "H100: 32 MiB")
  check.eq(engines.cublas_workspace(kv.gpu("a100-sxm-80gb")), 8519680, "A100: :4096:2:16:8")
  check.eq(engines.cublas_workspace(kv.gpu("mi300x")), 0, "ROCm: not modelled")
  local function sh(v)
    local row, version = engines.vllm_version(v)
    return engines.vllm_sampler_hidden(row, v or version)
  end
  check.eq(sh("0.6"), 0, "V0: the forward's output")
  check.eq(sh("0.8"), 1, "0.8: the last tokens' copy")
  check.eq(sh("0.9.1"), 2, "0.9.1: and rand_like's")
  check.eq(sh("0.9.2"), 3, "0.9.2: all three")
  check.eq(sh("0.11"), 3, "0.11")
  -- gpt-oss-120b on one H100 at 0.11 (#27508's flags): the sort moment, the
  -- hidden states N H 2 + 2 S H 2 = 3 x 1024 x 2880 x 2 and the workspace
  local a = kv.deploy{model = "gpt-oss-120b", gpu = "h100-sxm", engine_version = "0.11",
                      gpu_memory_utilization = 0.95, max_num_batched_tokens = 1024}.activation_range
  check.eq(a.bytes, 1024 * 201088 * 38 + 3 * 1024 * 2880 * 2 + 33554432,
           "gpt-oss-120b, H100, 0.11: sort + hidden copies + cuBLAS workspace")
end

-- ---- vLLM's default --gpu-memory-utilization by release ---------------------
-- 0.9 until vllm-project/vllm#38284 made it 0.92 (first in v0.20.0; engines.lua
-- M.vllm rows' utilization): a deployment on 0.20 that gives none is budgeted
-- at 0.92, by kv.deploy, the ledger, launch, a sweep and validate's prediction
do
  local function dep(v, u)
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = v,
                     utilization = u}
  end
  check.eq(dep("0.19.1").utilization, 0.9, "0.19: 0.9")
  check.eq(dep("0.20").utilization, 0.92, "0.20: 0.92 (vllm-project/vllm#38284)")
  check.eq(dep("0.20.1").utilization, 0.92, "a 0.20.x release: its row's")
  check.eq(dep("0.29").utilization, 0.92, "0.29")
  check.eq(dep(nil).utilization, engines.vllm_default_utilization(nil), "the default release's row")
  check.eq(dep(nil).utilization, 0.92, "no release: the newest row's 0.92")
  check.eq(dep("0.29", 0.85).utilization, 0.85, "a given fraction wins")
  check.eq(engines.vllm_default_utilization("0.10.1"), 0.9, "0.10.1: 0.9")
  local a, b, c = dep("0.20"):ledger(), dep("0.20", 0.92):ledger(), dep("0.20", 0.9):ledger()
  check.eq(a.kv_budget, b.kv_budget, "0.20 without utilization: the 0.92 budget")
  check.eq(a.kv_budget > c.kv_budget, true, "more than 0.9's")
  local cmd = assert(require("kvplan.launch").command(dep("0.20"), "vllm"))
  check.eq(cmd:find("--gpu-memory-utilization 0.92", 1, true) ~= nil, true, "launch writes 0.92")
  -- a sweep over releases takes each one's default
  local seen = {}
  kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = {"0.19", "0.20"},
           columns = {"engine_version", "kv_budget_bytes"}}:each(function(r)
    seen[r.engine_version] = r.kv_budget_bytes
  end)
  check.eq(seen["0.19"], dep("0.19"):ledger().kv_budget, "sweep: 0.19's budget at 0.9")
  check.eq(seen["0.20"], a.kv_budget, "sweep: 0.20's at 0.92")
  -- validate: a log of 0.20.1 that prints no utilization is predicted at 0.92
  local function predicted(v)
    local log = "# engine: vllm\n# version: " .. v .. "\n# model: llama-3.1-8b\n# gpu: h100-sxm\n"
                .. "INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 14.99 GiB and 12.8 seconds\n"
                .. "INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: 51.02 GiB\n"
    for _, r in ipairs(kv.validate(log)) do
      if r.figure == "kv_memory_gib" and r.mode == "predict" then return r.kvplan end
    end
  end
  local gib = dep("0.20").gpu_bytes / 2^30
  check.eq(math.abs(predicted("0.20.1") - predicted("0.19.1") - 0.02 * gib) < 1e-6, true,
           "validate: 0.02 of the GPU more KV memory on 0.20.1")
end

-- ---- async scheduling by default from 0.14 (vllm-project/vllm#27614) --------
-- the 0.14 row: 0.14 to 0.19 plan the next step while the GPU runs (sim's
-- host_waits false); 0.11 to 0.13 wait for the host unless --async-scheduling
do
  local sim = require "kvplan.sim"
  local function waits(v, a)
    return sim.host_waits(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm",
                                    engine_version = v, async_scheduling = a})
  end
  check.eq(waits("0.13.0"), true, "0.13: the host's work between steps costs GPU time")
  check.eq(waits("0.14"), false, "0.14: async scheduling by default (#27614)")
  check.eq(waits("0.19.1"), false, "0.19.1: the 0.14 row, no longer 0.11's")
  check.eq(waits("0.20"), false, "0.20")
  check.eq(waits("0.14", false), true, "--no-async-scheduling wins")
  check.eq(waits("0.11", true), false, "--async-scheduling wins")
  check.eq(engines.vllm_version("0.17.1") == engines.vllm["0.14"], true, "0.17.1 maps to the 0.14 row")
end

-- engine_version = "latest" is the newest modelled vLLM row, as SGLang's and
-- TensorRT-LLM's "latest" are theirs; no release is the same row (issue 20:
-- it took 0.11 until 2026-12-04, and before that "latest" was 0.11 too, while
-- rows up to 0.29 were modelled)
do
  local kv = require "kvplan"
  local function v(ev)
    return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = ev}
  end
  local keys = {}
  for k in pairs(engines.vllm) do if not k:find("v1") then keys[#keys + 1] = k end end
  table.sort(keys, function(a, b)
    local a1, a2 = a:match("(%d+)%.(%d+)"); local b1, b2 = b:match("(%d+)%.(%d+)")
    return tonumber(a1) * 1000 + tonumber(a2) < tonumber(b1) * 1000 + tonumber(b2)
  end)
  check.eq(v("latest").engine_version, keys[#keys], "latest: the newest modelled vLLM row")
  check.eq(v(nil).engine_version, keys[#keys], "no release: the newest modelled, as latest")
  check.eq(engines.vllm_latest, keys[#keys], "vllm_latest names it")
  check.eq(engines.vllm_default, engines.vllm_latest, "the former name: the same release")
  check.eq(engines.vllm_at_least("latest", "0.29"), true, "latest is at least 0.29")
  check.eq(engines.vllm_at_least(nil, "0.29"), true, "no release is at least 0.29 too")
  check.eq(v("0.11").engine_version, "0.11", "an older release by its name")
end

-- issue 20: a deployment that names no vLLM release is the newest modelled
-- one, its ledger the same as engine_version = "latest"'s (it was 0.11's:
-- 51.33 GiB of KV for Llama-3.1-8B on an H100, 56.34 under the newest)
do
  local R = kv.report
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm"}
  local function with(extra)
    local o = {}
    for k, x in pairs(base) do o[k] = x end
    for k, x in pairs(extra) do o[k] = x end
    return kv.deploy(o)
  end
  local none, latest = with{}, with{engine_version = "latest"}
  local named = with{engine = "vllm"}
  check.eq(none.engine_version, latest.engine_version, "the same release")
  check.eq(none.utilization, latest.utilization, "the same default utilization")
  local fields = {"kv_budget", "kv_blocks", "usable", "weights", "activation", "overhead",
                  "vllm_starts", "vllm_max_model_len", "vllm_kv_cache_tokens", "vllm_kv_needed"}
  local ln, ll, lv = none:ledger(), latest:ledger(), named:ledger()
  for _, f in ipairs(fields) do
    check.eq(ln[f], ll[f], "no release and latest: ledger." .. f)
    check.eq(lv[f], ll[f], "engine = vllm and latest: ledger." .. f)
  end
  for _, ctx in ipairs{8192, 131072} do
    for _, pair in ipairs{{none, "no release"}, {named, "engine = vllm"}} do
      local a, b = R.ledger_row(pair[1], ctx, 1), R.ledger_row(latest, ctx, 1)
      for k, x in pairs(b) do check.eq(a[k], x, pair[2] .. " and latest at " .. ctx .. ": " .. k) end
      local ia, ib = R.ledger_items(pair[1], ctx, 1), R.ledger_items(latest, ctx, 1)
      check.eq(#ia, #ib, pair[2] .. ": as many ledger items")
      for i, it in ipairs(ib) do
        check.eq(ia[i].item .. " " .. ia[i].bytes, it.item .. " " .. it.bytes, pair[2] .. ": item " .. it.item)
      end
    end
  end
  check.eq(string.format("%.2f", ln.kv_budget / kv.units.GiB), "56.34", "the newest release's budget")
end

-- every NVIDIA GPU of the catalog has its compute capability (NVIDIA's CUDA
-- GPUs list): the MXFP4 kernel, the attention backends and the V1 oracle
-- read it, and a40 / rtx-a5000 came in without one (gpt-oss-20b on an A40
-- took another MXFP4 layout: 26.06 GiB of KV budget for Marlin's 25.20)
do
  local kv = require "kvplan"
  for _, g in ipairs(kv.gpus.all()) do
    local gpu = kv.gpu(g)
    if gpu.vendor == "nvidia" then
      check.eq(type(engines.compute_capability[gpu.id]), "number", gpu.id .. ": a compute capability")
    end
  end
end

-- the release of a date (issue 18): the newest modelled release published
-- on or before it (engines.release_dates), nil with why and which case
-- otherwise, an error for a date that is not YYYY-MM-DD
do
  check.eq(engines.vllm_release_at("2025-10-13"), "0.11", "a run of 2025-10-13: 0.11 (of 2025-10-02)")
  check.eq(engines.vllm_release_at("2025-10-02"), "0.11", "the release's own day: that release")
  check.eq(engines.vllm_release_at("2025-10-01"), nil, "the day before 0.11: 0.10, whose date is not known")
  check.eq(engines.vllm_release_at("2024-10-10"), "0.6", "October 2024: 0.6")
  check.eq(engines.vllm_release_at("2025-04-01"), "0.8", "April 2025: 0.8")
  check.eq(engines.vllm_release_at("2026-12-04"), engines.vllm_latest, "today: the newest")
  check.eq(engines.vllm_release_at("2026-05-15"), "0.21", "0.21's day")
  local v, why, kind = engines.vllm_release_at("2023-12-06")
  check.eq(v, nil, "before 0.6: none")
  check.eq(kind, "before", "before the oldest")
  check.eq(why, "2023-12-06 is before vLLM 0.6 (2024-09-05), the oldest modelled", "why")
  v, why, kind = engines.vllm_release_at("2025-07-01")
  check.eq(kind, "unknown", "between 0.9 and 0.11: 0.10's date is not known")
  check.eq(why, "2025-07-01 is after vLLM 0.9 (2025-05-28), and vLLM 0.10's release date is not known",
           "why")
  check.eq(engines.oldest_release("vllm"), "0.6", "vLLM's oldest row")
  check.eq(engines.oldest_release("trtllm"), "0.5", "TensorRT-LLM's oldest row")
  check.eq(engines.release_at("sglang", "2024-12-04"), nil, "SGLang 0.5's date is not known")
  check.eq(select(3, engines.release_at("trtllm", "2025-10-01")), "unknown", "no TensorRT-LLM date read")
  check.eq(engines.release_at("trtllm", "2025-10-01"), nil, "no TensorRT-LLM date read")
  check.error("release_at: field 'date': expected a date YYYY-MM-DD, got 'Oct 2025'",
              function() engines.vllm_release_at("Oct 2025") end)
  check.error("release_at: field 'date': '2025-02-29' is not a calendar date",
              function() engines.vllm_release_at("2025-02-29") end)
  check.eq(engines.vllm_release_at("2024-02-29"), nil, "a leap day is a date (before 0.6)")
  check.error("release_at: field 'date': expected a date YYYY-MM-DD, got number",
              function() engines.vllm_release_at(20251013) end)
  check.error("release_at: unknown engine 'lmdeploy'", function() engines.release_at("lmdeploy", "2025-01-01") end)
  -- the dates run with the releases: a newer row is never dated earlier
  for name, dates in pairs(engines.release_dates) do
    local last
    for _, k in ipairs((function()
      local rows = ({vllm = engines.vllm, sglang = engines.sglang, trtllm = engines.trtllm})[name]
      local keys = {}
      for key in pairs(rows) do if not key:find("v1") and dates[key] then keys[#keys + 1] = key end end
      table.sort(keys, function(a, b) return engines.vllm_at_least(b, a) and a ~= b end)
      return keys
    end)()) do
      local n = engines.date_number(dates[k])
      check.eq(last == nil or n >= last, true, name .. " " .. k .. ": dated after the release before it")
      last = n
    end
  end
end

-- engine_version = "@YYYY-MM-DD": the release of that date (issue 18)
do
  check.eq(engines.dated_version("vllm", "@2025-03-01"), "0.7", "@2025-03-01: vLLM 0.7")
  check.eq(engines.dated_version("vllm", "0.9.2"), "0.9.2", "a release is kept")
  check.eq(engines.dated_version("vllm", nil), nil, "none is kept")
  check.eq(engines.vllm_version("@2025-10-13"), engines.vllm["0.11"], "vllm_version reads a date")
  check.eq(select(2, engines.vllm_version("@2026-12-04")), engines.vllm_latest, "today: the newest")
  check.eq(engines.vllm_at_least("@2025-04-01", "0.8"), true, "vllm_at_least reads a date")
  check.eq(engines.vllm_at_least("@2025-04-01", "0.9"), false, "April 2025 is before 0.9")
  check.error("field 'engine_version' = '@2025-3-1': expected a date YYYY-MM-DD, got '2025-3-1'",
              function() engines.vllm_version("@2025-3-1") end)
  check.error("field 'engine_version' = '@2023-01-01' names no release: 2023-01-01 is before vLLM 0.6",
              function() engines.vllm_version("@2023-01-01") end)
  check.error("field 'engine_version' = '@2025-07-01' names no release: 2025-07-01 is after vLLM 0.9",
              function() engines.vllm_version("@2025-07-01") end)
  check.error("names no release: TensorRT-LLM 0.5's release date is not known",
              function() engines.trtllm_version("@2025-01-01") end)
  local kv = require "kvplan"
  local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = "@2025-03-01"}
  check.eq(d.engine_version, "0.7", "kv.deploy: the release of 2025-03-01")
  check.eq(d.utilization, 0.9, "0.7's utilization")
  local d2 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = "0.7"}
  check.eq(type(d:ledger().kv_tokens), "number", "a ledger")
  check.eq(d2:ledger().kv_tokens, d:ledger().kv_tokens, "the same KV tokens as engine_version = '0.7'")
end
