-- tests/lua/validate_test.lua: the startup-log parser and the two checks of
-- kv.validate on every supported log shape, truncated and partial logs.
local kv = require "kvplan"
local check = require "check"
local validate = require "kvplan.validate"

local function rows_by(rows)
  local t = {}
  for _, r in ipairs(rows) do t[r.figure .. "/" .. r.mode] = r end
  return t
end

-- V0 0.7 profile lines
local v0 = [[
Initializing a V0 LLM engine (v0.7.1) with config: model='Qwen/Qwen2.5-32B-Instruct', dtype=torch.bfloat16, max_seq_len=10000, tensor_parallel_size=2, kv_cache_dtype=auto
Loading model weights took 30.7098 GB
the current vLLM instance can use total_gpu_memory (44.42GiB) x gpu_memory_utilization (0.90) = 39.98GiB
model weights take 30.71GiB; non_torch_memory takes 0.30GiB; PyTorch activation peak memory takes 1.26GiB; the rest of the memory reserved for KV Cache is 7.71GiB.
# CUDA blocks: 3947, # CPU blocks: 2048
]]
local f = validate.parse(v0)
check.eq(f.engine, "vllm", "engine")
check.eq(f.version, "0.7.1", "version")
check.eq(f.tp, 2, "tp from the config line")
check.eq(f.max_model_len, 10000, "max_seq_len")
check.eq(f.kv_memory.mid, 7.71, "KV memory")
check.eq(f.kv_memory.lo, 7.705, "its rounding interval")
check.eq(f.blocks, 3947, "CUDA blocks")
check.eq(f.activation.mid, 1.26, "activation")
check.eq(f.total.mid, 44.42, "total GPU memory")
local r = rows_by(kv.validate(v0))
check.eq(r["kv_blocks_x_block/exact"].status, "exact", "V0 blocks follow from the KV memory")
check.eq(r["kv_memory_gib/predict"].status, "predicted", "V0 predicted from the logged total")
check.eq(r["weights_gib/predict"].inputs:find("gpu=log", 1, true) ~= nil, true, "inputs say where")

-- a V0 engine on a release that ran V1 by default (VLLM_USE_V1=0, 0.8 to
-- 0.10): predicted with the V0 rules, which for a dense model are 0.7's
local v0_09 = (v0:gsub("v0%.7%.1", "v0.9.2"))
local r09 = rows_by(kv.validate(v0_09))
check.eq(r09["kv_memory_gib/predict"].kvplan, r["kv_memory_gib/predict"].kvplan,
         "the V0 engine of 0.9.2 predicts as 0.7's V0")
local v1_09 = rows_by(kv.validate((v0_09:gsub("V0 LLM engine", "V1 LLM engine"))))
check.eq(v1_09["kv_memory_gib/predict"].kvplan ~= r09["kv_memory_gib/predict"].kvplan, true,
         "its V1 engine does not")

-- a T4 on 0.9: the oracle's fallback to V0 unless the log shows V1's lines
-- (VLLM_USE_V1=1 set)
local t4_v1 = rows_by(kv.validate([[
# gpu: t4
Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-7B-Instruct', dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1
Available KV cache memory: 0.50 GiB
]]))
local t4_none = rows_by(kv.validate([[
# gpu: t4
vLLM API server version 0.9.2
non-default args: {'model': 'Qwen/Qwen2.5-7B-Instruct', 'max_model_len': 4096}
model weights take 14.25GiB; non_torch_memory takes 0.10GiB; PyTorch activation peak memory takes 1.00GiB; the rest of the memory reserved for KV Cache is 0.50GiB.
]]))
check.eq(t4_v1["kv_memory_gib/predict"].inputs:find("engine=V0", 1, true), nil,
         "V1's lines on a T4: predicted as V1")
check.eq(t4_none["kv_memory_gib/predict"].inputs:find("engine=V0 (fallback)", 1, true) ~= nil, true,
         "no engine line on a T4 at 0.9: V0 by the oracle's fallback")
check.eq(t4_none["kv_memory_gib/predict"].kvplan ~= t4_v1["kv_memory_gib/predict"].kvplan, true,
         "the two engines predict apart")
-- the oracle's own words: "Falling back to V0" (the feature named) is V0
local fb = validate.parse([[
vLLM API server version 0.8.4
Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.
]])
check.eq(fb.v0 ~= nil and fb.v1 == nil, true, "a fallback line says V0")
-- a stated engine wins over the lines (kvplan startup writes "# vllm_use_v1:
-- false" for a V0 engine, whose lines it prints in V1's words)
local t4_stated = rows_by(kv.validate([[
# gpu: t4
# vllm_use_v1: false
Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-7B-Instruct', dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1
Available KV cache memory: 0.50 GiB
]]))
check.eq(t4_stated["kv_memory_gib/predict"].kvplan, t4_none["kv_memory_gib/predict"].kvplan,
         "# vllm_use_v1: false predicts V0 over V1's lines")
check.eq(t4_stated["kv_memory_gib/predict"].inputs:find("vllm_use_v1=header", 1, true) ~= nil, true,
         "the inputs say where the engine came from")

-- V1: KV memory, tokens, concurrency with thousands separators
local v1 = [[
(APIServer pid=1) INFO [api_server.py:1] vLLM API server version 0.10.1
vllm serve Qwen/Qwen3-14B --max-model-len 32768
[gpu_worker.py:298] Available KV cache memory: 6.51 GiB
[kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens
[kv_cache_utils.py:868] Maximum concurrency for 32,768 tokens per request: 1.30x
]]
f = validate.parse(v1)
check.eq(f.kv_tokens, 42656, "tokens with commas")
check.eq(f.concurrency_len, 32768, "concurrency length")
check.eq(f.version, "0.10.1", "API server version")
r = rows_by(kv.validate(v1))
check.eq(r["kv_tokens/exact"].status, "exact", "V1 tokens exact")
check.eq(r["max_concurrency/exact"].status, "exact", "V1 concurrency exact")
check.eq(r["kv_memory_gib/predict"].status:find("missing: the GPU", 1, true) ~= nil, true,
         "no GPU: the prediction is missing, not guessed")
-- the header names the GPU
r = rows_by(kv.validate("# gpu: h100-sxm\n" .. v1))
check.eq(r["kv_memory_gib/predict"].status, "predicted", "GPU from the header")
check.eq(r["kv_memory_gib/predict"].inputs:find("gpu=header", 1, true) ~= nil, true, "header input")

-- refusal lines
local refuse = [[
Loading model weights took 14.9888 GB
Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90
# GPU blocks: 1478, # CPU blocks: 2048
The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648).
]]
f = validate.parse(refuse)
check.eq(f.refused, true, "refusal")
check.eq(f.refused_len, 29000, "the refused length")
check.eq(f.refused_tokens, 23648, "the tokens it states")
r = rows_by(kv.validate("# model: llama-3.1-8b\n# version: 0.6.4\n" .. refuse))
check.eq(r["starts/predict"].logged, "refuses", "logged refusal")
check.eq(r["starts/predict"].kvplan, "refuses", "kvplan says it refuses too")

-- SGLang
local sg = [[
python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B-FP8 --tp 4 --mem-fraction-static 0.93
[2025-07-22 10:00:00 TP0] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=20.12 GB, mem usage=55.02 GB.
[2025-07-22 10:00:01 TP0] KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB
]]
f = validate.parse(sg)
check.eq(f.engine, "sglang", "sglang")
check.eq(f.tp, 4, "--tp")
check.eq(f.sg_tokens, 367404, "#tokens")
check.eq(f.weights.mid, 55.02, "mem usage")
check.eq(f.mem_fraction_static.mid, 0.93, "mem_fraction_static")
r = rows_by(kv.validate(sg))
check.eq(r["k_size_gib/exact"].status, "exact", "K size follows from the tokens")

-- truncated and partial logs: rows for what is there, never an error
check.eq(#kv.validate(""), 1, "empty: one row")
check.eq(kv.validate("")[1].status, "missing: no engine (no vLLM, SGLang or TensorRT-LLM line; give engine=vllm|sglang|trtllm)",
         "empty log")
check.eq(#kv.validate("garbage\n\0\255 binary"), 1, "garbage")
local cut = v1:sub(1, 120) -- ends mid-line, before any figure
r = kv.validate("# model: qwen3-14b\n" .. cut)
check.eq(#r, 1, "a cut log gives its one row")
r = kv.validate("vllm serve nonexistent/model-x\nAvailable KV cache memory: 1.00 GiB\n")
check.eq(r[1].status, "missing: model 'nonexistent/model-x' (log:1) is not in the catalog (give model=ID or "
         .. "model=DIR, a Hugging Face directory)",
         "unknown model")
-- a log that names no model says so (it once said "model 'nil'")
r = kv.validate("INFO worker.py: GPU KV cache size: 1,024 tokens\nAvailable KV cache memory: 1.00 GiB\n")
check.eq(r[1].status, "missing: the log names no model (no --model, 'vllm serve MODEL' or "
         .. "model='...' line; give model=ID or model=DIR, or a '# model: ID' header)", "no model named")
check.eq(r[1].status:find("nil", 1, true), nil, "never 'nil'")
r = rows_by(kv.validate("# model: qwen3-14b\n# gpu: no-such-gpu\nvLLM API server version 0.10.1\n"
                        .. "Available KV cache memory: 6.51 GiB\n"))
check.eq(r["kv_memory_gib/predict"].status, "missing: unknown GPU 'no-such-gpu'", "unknown GPU")
r = rows_by(kv.validate("# model: qwen3-14b\n# gpu: h100\nvLLM API server version 0.1.0\n"
                        .. "Available KV cache memory: 6.51 GiB\n"))
check.eq(r["kv_memory_gib/predict"].status, "missing: the vLLM version (0.1.0 is not modelled)",
         "unmodelled version")
check.error("validate: a log must be a string, got nil", function() kv.validate(nil) end)

-- TensorRT-LLM, PyTorch backend: lines in the format of tensorrt_llm/_torch/
-- pyexecutor/_util.py (estimate_max_tokens, _cal_max_tokens), with figures
-- made consistent by hand (no public log with its inputs was found):
-- floor(55.40 GiB / 131072) = 453836.8 -> 453836, and 55.395 / 55.405 GiB
-- give 453795 / 453877
local trt = [[
# model: llama-3.1-8b
# gpu: h100
trtllm-serve meta-llama/Llama-3.1-8B-Instruct --backend pytorch --max_seq_len 8192 --kv_cache_free_gpu_memory_fraction 0.9
[TensorRT-LLM] TensorRT-LLM version: 1.0.0
[TensorRT-LLM][INFO] Memory used after loading model weights (inside torch) in memory usage profiling: 15.01 GiB
[TensorRT-LLM][INFO] Memory dynamically allocated during inference (inside torch) in memory usage profiling: 0.90 GiB
[TensorRT-LLM][INFO] Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling: 0.70 GiB
[TensorRT-LLM][INFO] Peak memory during memory usage profiling (torch + non-torch): 16.61 GiB, available KV cache memory when calculating max tokens: 55.40 GiB, fraction is set 0.9, kv size is 131072. device total memory 79.11 GiB, , tmp kv_mem 0.05 GiB
[TensorRT-LLM][INFO] Estimated max tokens in KV cache : 453836
]]
f = validate.parse(trt)
check.eq(f.engine, "trtllm", "TensorRT-LLM")
check.eq(f.version, "1.0.0", "its version line")
check.eq(f.trt_backend, "pytorch", "--backend")
check.eq(f.max_model_len, 8192, "--max_seq_len")
check.eq(f.trt_fraction.mid, 0.9, "fraction")
check.eq(f.trt_kv_size, 131072, "kv size")
check.eq(f.total.mid, 79.11, "device total memory (a fifth capture)")
check.eq(f.weights.mid, 14.96, "weights: the torch memory after loading minus the estimation's KV cache")
check.eq(f.activation.mid, 0.9, "activation")
check.eq(f.non_torch.mid, 0.7, "outside torch")
check.eq(f.kv_tokens, 453836, "estimated max tokens")
r = rows_by(kv.validate(trt))
check.eq(r["kv_size_per_token/exact"].status, "exact", "per-token KV size")
check.eq(r["kv_tokens/exact"].status, "exact", "tokens from the KV memory")
check.eq(r["kv_tokens/exact"].range, "453795-453877", "over the rounding of 55.40")
check.eq(r["kv_memory_gib/predict"].status, "predicted", "predicted from the GPU and model")
check.eq(r["starts/predict"].status, "agrees", "starts")
check.eq(r["activation_gib/predict"].inputs:find("activation=predicted", 1, true) ~= nil, true,
         "the dry run predicted")
-- a wrong per-token size is caught: Llama-3.1-8B in fp8 would print 65536
r = rows_by(kv.validate((trt:gsub("kv size is 131072", "kv size is 65536"))))
check.eq(r["kv_size_per_token/exact"].status, "differs", "a different KV size differs")

-- the engine path: cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp's lines
-- as a public deployment guide quotes them (its model is not named there;
-- one of 262144 bytes a token, as Qwen2.5-32B in fp16, fits them): 0.9 x
-- 1.42 GiB -> floor(1372208742.4 / 262144) = 5234 tokens, ceil(5234 / 64) =
-- 82 blocks, 82 x 64 x 262144 bytes = 1.28 GiB allocated
local eng = [[
[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 22.18 GiB, available: 1.42 GiB
[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 82
[TensorRT-LLM][WARNING] maxAttentionWindow and maxSequenceLen are too large for at least one sequence to fit in kvCache. they are reduced to 5185
[TensorRT-LLM][INFO] Number of tokens per block: 64.
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 1.28 GiB for max tokens in paged KV cache (5248).
]]
f = validate.parse(eng)
check.eq(f.engine, "trtllm", "engine path")
check.eq(f.trt_backend, "tensorrt", "the free-memory line is the engine path's")
check.eq(f.trt_free.mid, 1.42, "available")
check.eq(f.blocks, 82, "primary blocks")
check.eq(f.trt_tokens_per_block, 64, "tokens per block")
check.eq(f.trt_alloc_tokens, 5248, "allocated tokens")
check.eq(f.trt_reduced, 5185, "the cut")
check.eq(kv.validate(eng)[1].status:find("missing: the log names no model", 1, true), 1,
         "no model named: said so")
r = rows_by(kv.validate("# model: qwen2.5-32b\n" .. eng))
check.eq(r["kv_blocks/exact"].status, "exact", "blocks from the free memory x 0.9")
check.eq(r["kv_blocks/exact"].kvplan, 82, "82 blocks")
check.eq(r["kv_allocated_gib/exact"].status, "exact", "1.28 GiB allocated")
check.eq(r["kv_memory_gib/predict"].status:find("missing: the activation", 1, true), 1,
         "the engine's activation is not predicted")
check.eq(r["starts/predict"], nil, "no start predicted without the activation")
-- 2023's engine path printed its tokens before block rounding (NVIDIA/TensorRT-LLM#224)
f = validate.parse("[TensorRT-LLM][INFO] Using 10718 tokens in paged KV cache.\n")
check.eq(f.engine, "trtllm", "an old TensorRT-LLM line")
check.eq(f.kv_tokens, 10718, "its tokens")
check.eq(f.trt_backend, nil, "no backend named or implied")
-- 1.x's PyTorch backend prints its estimate as memory and the tokens in
-- the next KV cache manager's warning (the lines as printed in the
-- startup log of jeansblog/trt_llm's README, TensorRT-LLM 1.1.0rc3,
-- gpt-oss-120b on a DGX Spark): floor(5.95 GiB / 73728) = 86653, and
-- 5.945 / 5.955 GiB give 86580 / 86725; 86711 lies between. The estimation
-- run's own warning (8224 dummy tokens) comes earlier and is not read.
local trt11 = [[
# model: gpt-oss-120b
[TensorRT-LLM] TensorRT-LLM version: 1.1.0rc3
[12/20/2025-04:21:10] [TRT-LLM] [W] Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and 8224, respectively). The smaller value will be used.
[12/20/2025-04:21:51] [TRT-LLM] [I] Peak memory during memory usage profiling (torch + non-torch): 113.65 GiB, available KV cache memory when calculating max tokens: 5.95 GiB, fraction is set 0.8999999761581421, kv size is 73728. device total memory 119.70 GiB, , tmp kv_mem 0.56 GiB
[12/20/2025-04:21:51] [TRT-LLM] [I] Estimated max memory in KV cache : 5.95 GiB
[12/20/2025-04:21:51] [TRT-LLM] [W] Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and 86711, respectively). The smaller value will be used.
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 5.95 GiB for max tokens in paged KV cache (86720).
]]
f = validate.parse(trt11)
check.eq(f.engine, "trtllm", "1.x PyTorch backend")
check.eq(f.trt_backend, "pytorch", "its backend")
check.eq(f.kv_tokens, 86711, "the tokens of the warning after the estimate")
r = rows_by(kv.validate(trt11))
check.eq(r["kv_tokens/exact"].status, "exact", "floor(memory / kv size)")
check.eq(r["kv_tokens/exact"].range, "86580-86725", "over the rounding of 5.95")
-- the GiB allocated for the tokens the line names, without the free
-- memory: 86720 x 73728 bytes = 5.9546 GiB, logged 5.95
check.eq(r["kv_allocated_gib/exact"].status, "exact", "tokens allocated x kv size")
check.eq(rows_by(kv.validate((trt11:gsub("%(86720%)", "(96720)"))))["kv_allocated_gib/exact"].status,
         "differs", "other tokens for the same GiB differ")
-- no model line: the checkpoint's Hugging Face cache path the PyTorch
-- backend prints names it (models--ORG--NAME/snapshots/REV: NAME)
local snap = "/root/.cache/huggingface/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a"
f = validate.parse(snap .. "\n" .. trt11:gsub("^# model: gpt%-oss%-120b\n", ""))
check.eq(f.model, snap, "the snapshot path")
r = rows_by(kv.validate(snap .. "\n" .. trt11:gsub("^# model: gpt%-oss%-120b\n", "")))
check.eq(r["kv_tokens/exact"].status, "exact", "its catalog model, gpt-oss-120b")
check.eq(r["kv_tokens/exact"].inputs:find("model=log:1", 1, true) ~= nil, true, "read from the log")
-- a model named otherwise wins over the path
f = validate.parse("--model meta-llama/Llama-3.1-8B\n" .. snap .. "\n")
check.eq(f.model, "meta-llama/Llama-3.1-8B", "the command line's model first")
-- the estimate line alone gives the KV memory, no tokens
f = validate.parse("[TRT-LLM] [I] Estimated max memory in KV cache : 5.95 GiB\n")
check.eq(f.engine, "trtllm", "the estimate line names TensorRT-LLM")
check.eq(f.kv_memory.mid, 5.95, "its memory")
check.eq(f.kv_tokens, nil, "no tokens without the warning after it")
check.eq(f.trt_backend, "pytorch", "the PyTorch backend's line")

-- SGLang's MLA pool prints one KV size (memory_pool.py MLATokenToKVPool),
-- the line as a log parser quotes a DeepSeek-V3 run: 524288 tokens x 61
-- layers x 576 x 1 byte (fp8) = 17.16 GiB
local sg_mla = "# model: deepseek-v3\n# kv: fp8\n[2025-11-04 05:27:13 DP0 TP0 EP0] KV Cache is allocated. "
               .. "#tokens: 524288, KV size: 17.16 GB\nsglang\n"
f = validate.parse(sg_mla)
check.eq(f.sg_tokens, 524288, "MLA pool tokens")
check.eq(f.sg_kv.mid, 17.16, "MLA pool size")
r = rows_by(kv.validate(sg_mla))
check.eq(r["kv_size_gib/exact"].status, "exact", "tokens x latent bytes")
check.eq(r["kv_tokens/parse"], nil, "the line is read, not said unreadable")
-- a hybrid sliding-window model's two pools (the lines as printed in
-- sgl-project/sglang#19718, gpt-oss-120b): the last line is the full
-- layers' pool, 318715 tokens x 18 layers x 8 KV heads x 64 x 2 bytes =
-- 5.4711 GiB of K; over all 36 layers it would be twice that
local sg_swa = [[
# model: gpt-oss-120b
[2026-03-06 08:43:46] Use sliding window memory pool. full_layer_tokens=318715, swa_layer_tokens=254972
[2026-03-06 08:43:46] KV Cache is allocated. #tokens: 254972, K size: 4.38 GB, V size: 4.38 GB
[2026-03-06 08:43:46] KV Cache is allocated. #tokens: 318715, K size: 5.47 GB, V size: 5.47 GB
[2026-03-06 08:43:46] SWAKVPool mem usage: 19.70 GB, swa size: 254972, full size: 318715
]]
f = validate.parse(sg_swa)
check.eq(f.sg_swa_full, 318715, "the full layers' pool")
check.eq(f.sg_swa_tokens, 254972, "the sliding layers' pool")
r = rows_by(kv.validate(sg_swa))
check.eq(r["k_size_gib/exact"].status, "exact", "the full pool over the full layers")
check.eq(r["k_size_gib/exact"].inputs:find("pool=full_layers", 1, true) ~= nil, true, "said so")
-- the sliding pool's line last: its 18 layers, 254972 x 18432 B = 4.377 GiB
local swa_last = sg_swa:gsub("(%[[^\n]*#tokens: 254972[^\n]*\n)(%[[^\n]*#tokens: 318715[^\n]*\n)", "%2%1")
check.eq(validate.parse(swa_last).sg_tokens, 254972, "the sliding pool's line is the last")
r = rows_by(kv.validate(swa_last))
check.eq(r["k_size_gib/exact"].status, "exact", "the sliding pool over the sliding layers")
-- the dtype SGLang prints before #tokens in later releases is passed over
f = validate.parse("[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, "
                   .. "#tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n")
check.eq(f.sg_tokens, 454112, "tokens after the dtype")
check.eq(f.sg_k.mid, 3.46, "K size after the dtype")

-- truncated and partial TensorRT-LLM logs: the rows they can give, never an error
local cut_trt = trt:sub(1, trt:find("Peak memory") + 30) -- ends mid-line
r = rows_by(kv.validate(cut_trt))
check.eq(r["kv_tokens/exact"], nil, "cut before the budget line: no exact row")
check.eq(r["kv_memory_gib/predict"], nil, "nor a KV memory to compare")
check.eq(r["activation_gib/predict"].status, "predicted", "the activation before the cut is checked")
r = rows_by(kv.validate((cut_trt:gsub("# gpu: h100\n", ""))))
check.eq(r["kv_memory_gib/predict"].status, "missing: the GPU (neither the log nor its header names a known one)",
         "no GPU named, no device total: missing")
r = rows_by(kv.validate(eng:sub(1, 60)))
check.eq(#kv.validate(eng:sub(1, 60)), 1, "a cut engine log: one row")
r = rows_by(kv.validate("# model: llama-3.1-8b\n# gpu: h100\n[TensorRT-LLM] Estimated max tokens in KV cache : 1000\n"))
check.eq(r["kv_tokens/predict"].logged, 1000, "tokens alone: predicted, no exact row")
check.eq(r["kv_tokens/exact"], nil, "no KV memory: no exact row")
r = rows_by(kv.validate("# model: llama-3.1-8b\n# gpu: h100\n[TensorRT-LLM][ERROR] AssertionError: "
                        .. "Impossible to fit in any sequence in kvCache\n"))
check.eq(r["starts/predict"].logged, "refuses", "the refusal parsed")
check.eq(r["starts/predict"].status, "differs", "an H100 holds Llama-3.1-8B: kvplan says it starts")

-- the summary leaves calibration logs out
local s = validate.summary{
  {log = "a.log", mode = "predict", figure = "kv_memory_gib", rel_error = 0.1},
  {log = "b.log", mode = "predict", figure = "kv_memory_gib", rel_error = -0.3},
  {log = "x/calib-c.log", mode = "predict", figure = "kv_memory_gib", rel_error = 5},
  {log = "a.log", mode = "exact", figure = "kv_tokens", status = "exact"},
}
check.eq(s[1].figure, "kv_memory_gib", "by figure")
check.eq(s[1].n, 2, "calibration left out")
check.eq(math.abs(s[1].median_abs_error - 0.2) < 1e-12, true, "median")
check.eq(s[1].worst_abs_error, 0.3, "worst")
check.eq(s[2].figure, "exact_accounting", "exact rows last")
check.eq(s[2].exact, 1, "exact rows")

-- V1's refusal names the max seq len and the KV one request needs (MLA:
-- DeepSeek-V2-Lite's 27 layers x 576 latent values x 2 bytes per token)
local mla = [[
# engine: vllm
# model: deepseek-v2-lite
ERROR 04-02 12:33:23 [core.py:380] ValueError: To serve at least one request with the models's max seq len (32768), (0.95 GiB KV cache is needed, which is larger than the available KV cache memory (0.93 GiB). Try increasing `gpu_memory_utilization`.
]]
f = validate.parse(mla)
check.eq(f.max_model_len, 32768, "max seq len from the refusal")
check.eq(f.kv_needed.mid, 0.95, "KV needed")
r = rows_by(kv.validate(mla))
check.eq(r["kv_needed_gib/exact"].status, "exact", "MLA KV needed exact")
check.eq(r["kv_needed_gib/exact"].kvplan, 32768 * 27 * 576 * 2 / 2^30, "by hand")

-- the MXFP4 kernel named by the log picks the loaded weights
local tri = [[
# engine: vllm
# model: gpt-oss-120b
# gpu: h100-sxm
# version: 0.14.1
(EngineCore_DP0 pid=1) INFO 01-27 00:31:44 [mxfp4.py:165] Using Triton backend
(EngineCore_DP0 pid=1) INFO 01-27 00:31:59 [gpu_model_runner.py:3905] Model loading took 64.38 GiB memory and 14.38 seconds
]]
f = validate.parse(tri)
check.eq(f.mxfp4_backend, "triton", "Triton backend line")
r = rows_by(kv.validate(tri))
check.eq(r["weights_gib/predict"].inputs:find("mxfp4_backend=triton (log)", 1, true) ~= nil, true,
         "the row says the backend came from the log")
check.eq(validate.parse("WARNING [marlin_utils_fp4.py:196] ... leveraging the Marlin kernel.").mxfp4_backend,
         "marlin", "Marlin's warning")

-- SGLang's resolved mem_fraction_static (not on the command line) is predicted
local sg = [[
# model: qwen3-30b-a3b
[2026-07-15 13:14:53] Load weight end. elapsed=19.09 s, type=Qwen3MoeForCausalLM, avail mem=230.20 GB, mem usage=56.98 GB.
self.server_args.mem_fraction_static 0.911
[2026-07-15 13:14:54] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1669816, K size: 76.44 GB, V size: 76.44 GB
]]
f = validate.parse(sg)
check.eq(f.fraction_given, false, "not given on a command line")
r = rows_by(kv.validate(sg))
check.eq(r["mem_fraction_static/predict"].kvplan, 0.911, "SGLang's memory rule on 287 GiB")
f = validate.parse("python3 -m sglang.launch_server --model-path x --mem-fraction-static 0.93\nKV Cache is allocated. #tokens: 1, K size: 0.01 GB, V size: 0.01 GB")
check.eq(f.fraction_given, true, "given on the command line: no prediction row")

-- figures quoted in Markdown ("name: value" configuration lines, emphasis)
local quoted = [[
# engine: vllm
# version: 0.13
# model: llama-3.1-8b
# gpu: h100-sxm
All tests use `--enable-prefix-caching --block-size=128`.
- **tensor-parallel-size:** 2
- **gpu-memory-utilization:** 0.85
- **max-model-len:** 16000
- **Model loading took:** 7.51 GiB memory
- **Peak activation memory:** 4.76 GiB
- **Non-torch memory:** 0.54 GiB
- **Available KV cache memory:** 30.1 GiB
]]
f = validate.parse(quoted)
check.eq(f.tp, 2, "tp listed as name: value")
check.eq(f.utilization.mid, 0.85, "utilization listed")
check.eq(f.max_model_len, 16000, "max-model-len listed")
check.eq(f.block, 128, "block size from the flags")
check.eq(f.weights.mid, 7.51, "weights quoted")
check.eq(f.activation.mid, 4.76, "activation quoted")
check.eq(f.non_torch.mid, 0.54, "non-torch quoted")
check.eq(f.kv_memory.mid, 30.1, "KV memory quoted")
check.eq(f.args_seen, true, "a listed configuration counts as the engine's arguments")
r = rows_by(kv.validate(quoted))
check.eq(r["kv_memory_gib/predict"].inputs:find("utilization=log", 1, true) ~= nil, true, "utilization from the log")

-- no command line: the defaults a prediction uses are assumed, and the
-- summary gives each figure without those rows too
local bare = [[
# engine: vllm
# version: 0.10
# model: llama-3.1-8b
# gpu: h100-sxm
INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 14.99 GiB and 12.8 seconds
INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: 51.02 GiB
]]
f = validate.parse(bare)
check.eq(f.args_seen, nil, "no command line")
local rows = kv.validate(bare)
r = rows_by(rows)
check.eq(r["kv_memory_gib/predict"].inputs:find("utilization=assumed", 1, true) ~= nil, true, "assumed utilization")
local all = {}
for _, x in ipairs(rows) do all[#all + 1] = x end
for _, x in ipairs(kv.validate(quoted)) do all[#all + 1] = x end
local s = {}
for _, x in ipairs(validate.summary(all)) do s[x.figure] = x end
check.eq(s.kv_memory_gib.n, 2, "both rows in the figure")
check.eq(s.kv_memory_gib_stated.n, 1, "the assumed row left out of the stated figure")

-- a KV connector: the KV rows are missing, the weights still predicted
local conn = bare:gsub("INFO 08%-20 18:04:10", "vllm serve m --kv-transfer-config '{\"kv_connector\":\"LMCacheConnectorV1\",\"kv_role\":\"kv_both\"}'\nINFO 08-20 18:04:10")
f = validate.parse(conn)
check.eq(f.kv_connector, "LMCacheConnectorV1", "the connector named")
r = rows_by(kv.validate(conn))
check.eq(r["kv_memory_gib/predict"].status, "missing: the memory of the KV connector (LMCacheConnectorV1) is not modelled", "connector row")
check.eq(type(r["kv_memory_gib/predict"].rel_error) ~= "number", true, "no error figure for it")
check.eq(r["weights_gib/predict"].status, "predicted", "weights still predicted")

-- a connector the header states (the log's excerpt shows no
-- kv_transfer_config): the same missing KV rows
do
  local hconn = bare:gsub("# gpu: h100%-sxm\n", "# gpu: h100-sxm\n# kv_connector: LMCacheConnectorV1\n")
  local rc = rows_by(kv.validate(hconn))
  check.eq(rc["kv_memory_gib/predict"].status,
           "missing: the memory of the KV connector (LMCacheConnectorV1) is not modelled", "header connector")
  check.eq(rows_by(kv.validate(bare))["kv_memory_gib/predict"].status, "predicted", "none stated: predicted")
end

-- the entry point: '# usage: offline' (vllm.LLM: its larger default batch,
-- a larger profiling peak, less KV memory) over what the log shows, and an
-- argument over both (usage=offline was overwritten by the log's server)
do
  local function kvmem(text, args)
    local rr = rows_by(kv.validate(text, {args = args}))["kv_memory_gib/predict"]
    return rr.kvplan, rr.inputs
  end
  local server = kvmem(bare)
  local offline, inp = kvmem((bare:gsub("# gpu: h100%-sxm\n", "# gpu: h100-sxm\n# usage: offline\n")))
  local d0 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = "0.10"}
  local d1 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", engine_version = "0.10",
                       usage = "offline"}
  assert(d1:ledger().activation > d0:ledger().activation, "offline: a larger profiling peak")
  check.eq(server - offline, (d1:ledger().activation - d0:ledger().activation) / 2^30, "header usage: offline")
  assert(inp:find("usage=header", 1, true), inp)
  local served = bare:gsub("INFO 08%-20 18:04:10", "vllm serve m\nINFO 08-20 18:04:10")
  check.eq(validate.parse(served).usage, "server", "the log shows the server")
  local arg_off, ainp = kvmem(served, {usage = "offline"})
  check.eq(arg_off, offline, "argument usage=offline over the log's server")
  assert(ainp:find("usage=argument", 1, true), ainp)
end

-- bitsandbytes from an unsloth dynamic 4-bit checkpoint the header names: its
-- skip list (modules kept in bf16) is not in the log, so every linear layer
-- quantized is an assumption and the stated figures leave its rows out; a
-- plain bnb-4bit checkpoint keeps the log's reading
do
  local cmd = bare:gsub("INFO 08%-20 18:04:10", "vllm serve m --gpu-memory-utilization 0.9\nINFO 08-20 18:04:10")
  local function bnbrows(ck)
    return rows_by(kv.validate((cmd:gsub("# gpu: h100%-sxm\n", "# gpu: h100-sxm\n# quantization: bitsandbytes\n"
                                         .. "# checkpoint: " .. ck .. "\n"))))
  end
  local dyn = bnbrows("unsloth/Meta-Llama-3.1-8B-Instruct-unsloth-bnb-4bit")
  local plain = bnbrows("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
  assert(dyn["kv_memory_gib/predict"].inputs:find("weights=assumed (bitsandbytes from the log", 1, true),
         dyn["kv_memory_gib/predict"].inputs)
  assert(plain["kv_memory_gib/predict"].inputs:find("weights=bitsandbytes (log)", 1, true),
         plain["kv_memory_gib/predict"].inputs)
  check.eq(dyn["weights_gib/predict"].kvplan, plain["weights_gib/predict"].kvplan, "the same weighing")
  local both = {}
  for _, x in pairs(plain) do both[#both + 1] = x end
  for _, x in pairs(dyn) do x.log = "dyn" both[#both + 1] = x end
  local sm = {}
  for _, x in ipairs(validate.summary(both)) do sm[x.figure] = x end
  check.eq(sm.kv_memory_gib.n, 2, "both KV rows in the figure")
  check.eq(sm.kv_memory_gib_stated.n, 1, "the dynamic checkpoint's row left out of the stated figure")
  check.eq(sm.weights_gib_stated.n, 1, "and its weights row")
end

-- V0 with tp: a figure quoted from a rank other than the driver has no sampler
local v0rank = [[
# engine: vllm
# version: 0.7
# model: llama-3.1-8b
# gpu: h100-sxm
# rank: 1
vllm serve m --tensor-parallel-size 2 --max-model-len 8192
(VllmWorkerProcess pid=1786) INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 7.5 GB
model weights take 7.50GiB; non_torch_memory takes 0.25GiB; PyTorch activation peak memory takes 0.19GiB; the rest of the memory reserved for KV Cache is 63.0GiB.
]]
local r1 = rows_by(kv.validate(v0rank))
local r0 = rows_by(kv.validate((v0rank:gsub("# rank: 1\n", ""))))
check.eq(r1["activation_gib/predict"].kvplan < r0["activation_gib/predict"].kvplan, true, "rank 1 profiles no sampler")
check.eq(r1["kv_memory_gib/predict"].kvplan > r0["kv_memory_gib/predict"].kvplan, true, "so it keeps more KV memory")
check.eq(r1["kv_memory_gib/predict"].inputs:find("rank=header", 1, true) ~= nil, true, "the rank named")

-- a multimodal model's encoder profiling line: its budget and items
-- predicted (engine/core/predict.c vision_run); a model without a modelled tower says so
do
  local vl = [[
Initializing a V1 LLM engine (v0.9.0.1) with config: model='/mnt/models', dtype=torch.bfloat16, max_seq_len=2048, tensor_parallel_size=1
Chunked prefill is enabled with max_num_batched_tokens=2048.
Model loading took 15.6271 GiB and 119.639792 seconds
Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature size.
Available KV cache memory: 1.81 GiB
]]
  local pf = validate.parse(vl)
  check.eq(pf.encoder_budget, 16384, "the encoder budget")
  check.eq(pf.encoder_items, 1, "the items profiled")
  local vr = rows_by(kv.validate("# engine: vllm\n# model: qwen2.5-vl-7b\n# gpu: l4\n" .. vl))
  check.eq(vr["encoder_items/predict"].kvplan, 1, "one image of 16384 tokens")
  check.eq(vr["encoder_budget/predict"].kvplan, 16384, "budget max(2048, 16384)")
  vr = rows_by(kv.validate("# engine: vllm\n# model: qwen2.5-7b\n# gpu: l4\n" .. vl))
  check.eq(vr["encoder_items/predict"].status, "missing: no vision tower kvplan models in this model",
           "a text model's row says why")
  -- cut in the middle of the line: no figure, no crash
  pf = validate.parse(vl:sub(1, vl:find("profiled with") + 5))
  check.eq(pf.encoder_items, nil, "a truncated encoder line gives nothing")
end

-- an engine line alone names vLLM
f = validate.parse("INFO 08-31 08:01:43 [core.py:69] Initializing a V1 LLM engine (v0.9.0.1) with config: model='/m'\n")
check.eq(f.engine, "vllm", "the V1 engine line names vLLM")
check.eq(f.version, "0.9.0.1", "and its version")

-- a header rank that is not a number is said, not ignored
local badrank = rows_by(kv.validate((v0rank:gsub("# rank: 1", "# rank: two"))))
check.eq(badrank["rank/parse"].status:find("not a rank", 1, true) ~= nil, true, "bad rank named")

-- a header count past 2^63 is said, not read as tp 1 (it was, "tp=header")
for _, h in ipairs{"tp: 9999999999999999999", "tp: 0", "pp: 1.5", "max_model_len: -4"} do
  local bad = rows_by(kv.validate("# " .. h .. "\n" .. v0))
  local k = h:match("^([%w_]+):")
  check.eq(bad[k .. "/parse"] and bad[k .. "/parse"].status,
           "missing: header '" .. h .. "' is not a " .. k .. " (expected a whole number >= 1 below 2^63); "
           .. "the log is not checked", h)
  check.eq(bad["weights_gib/predict"], nil, h .. ": nothing predicted")
end
-- a figure of 400 digits is said in a row: its row was dropped without a word,
-- and a decimal one was infinite and ended the run ("column 'logged' has no
-- finite value", naming no log)
local digits = ("9"):rep(400)
for _, text in ipairs{(v0:gsub("# CUDA blocks: 3947", "# CUDA blocks: " .. digits)),
                      (v0:gsub("took 30%.7098 GB", "took " .. digits .. ".5 GB"))} do
  local rows = kv.validate(text)
  local said = rows_by(rows)["log/parse"]
  check.eq(said and said.status:gsub("^missing: line %d+: ", "missing: "), "missing: the figure '"
           .. ("9"):rep(64) .. "...' is no number kvplan reads (past 64 bits or not finite); what it states "
           .. "is not checked", "400 digits")
  check.eq(said.status:match("^missing: line (%d+): ") ~= nil, true, "400 digits: the line named")
  for _, r in ipairs(rows) do
    assert(type(r.logged) ~= "number" or r.logged - r.logged == 0, "a finite logged figure: " .. tostring(r.logged))
  end
  local out = os.tmpname()
  local rep = kv.report{columns = validate.columns, path = out}
  for _, r in ipairs(rows) do rep:row(r) end
  rep:close()
  os.remove(out)
end

-- kvplan validate streams a log (validate.reduce): the lines it keeps give
-- the facts the whole text gives, for every log of the corpus and for logs
-- past one block of lines, whose figures are repeated, changed and scattered
local function dump(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = type(v) .. ":" .. tostring(v) return out end
  out[#out + 1] = "{"
  for _, k in ipairs(kv.util.sorted_keys(v)) do
    out[#out + 1] = tostring(k) .. "="
    -- v0 and v1 are where a line was found: only whether one was is a fact
    dump((k == "v0" or k == "v1") and v[k] ~= nil or v[k], out)
  end
  out[#out + 1] = "}"
  return out
end
local function same_facts(path, what)
  local whole = validate.parse(check.slurp(path))
  local streamed = validate.parse(validate.reduce(path))
  check.eq(table.concat(dump(streamed), " "), table.concat(dump(whole), " "), what)
end
local logs = io.popen("ls tests/validation/*.log")
local n = 0
for path in logs:lines() do
  same_facts(path, path)
  n = n + 1
end
logs:close()
assert(n > 30, "the corpus has " .. n .. " logs")
local tmp = os.tmpname()
local a = check.slurp("tests/validation/vllm-pr10511-llama3-8b-h100-tp1.log")
local b = check.slurp("tests/validation/sglang-21348-qwen3-235b-fp8-h100-tp4.log")
-- noise of two kinds: lines read one by one (Markdown emphasis) and as a
-- block; blocks of 4 KiB put every log's lines in many blocks
local noise, plain = {}, {}
for i = 1, 1100 do noise[i] = "INFO noise line " .. i .. " **bold** --not-a-flag x" end
for i = 1, 400 do
  plain[i] = "INFO 09-03 16:31:02 [loggers.py:123] Engine 000: Avg prompt throughput: " .. i .. ".0 tokens/s"
end
noise, plain = table.concat(noise, "\n"), table.concat(plain, "\n")
local block_was = validate.block_bytes
validate.block_bytes = 4096
for _, text in ipairs{a .. noise .. "\n" .. a, noise .. a .. noise, a .. noise .. b .. noise .. "\n# tp: 2\n" .. a,
                      (a:gsub("\n", "\n" .. noise .. "\n", 3)), a .. noise .. (a:gsub("%d%d", "77")),
                      a .. plain .. "\n" .. a, plain .. a .. plain .. b, (a:gsub("\n", "\n" .. plain .. "\n", 2))} do
  local fh = assert(io.open(tmp, "wb"))
  fh:write(text)
  fh:close()
  same_facts(tmp, "a log of " .. #text .. " bytes")
end
validate.block_bytes = block_was
-- a file that is no log stops at the bound on a line, not at the machine's memory
check.error("/dev/zero:1: a line longer than 1048576 bytes (a startup log's lines are short)",
            validate.reduce, "/dev/zero")
local fh = assert(io.open(tmp, "wb"))
fh:write(a, ("x"):rep((1 << 20) + 1), "\n")
fh:close()
check.error(":" .. select(2, a:gsub("\n", "")) + 1 .. ": a line longer than 1048576 bytes", validate.reduce, tmp)
os.remove(tmp)
-- the plain run a block is searched for first is in every match of its pattern
for p, want in pairs{["%f[%w%-]max%-num%-tokens:%s+([%w%._/]+)"] = "max-num-tokens:", ["a+bcd"] = "bcd",
                     ["abc?"] = false, ["%s%-tp[= ]+(%d+)"] = "-tp", ["%[MemUsageChange%] Allocated"] =
                     "[MemUsageChange] Allocated", ["x%bxyabc"] = "abc", ["%-%-%a[%w%-]+[= ]"] = false} do
  check.eq(validate.literal(p) or false, want, p)
end

-- ---- raw logs, as pasted into GitHub threads (tests/validation/raw/) --------------
local rawdir = "tests/validation/raw/"
local function raw(name) return validate.reduce(rawdir .. name) end
local function facts(name) return validate.parse(raw(name)) end
-- vLLM's "non-default args: {...}" dict: the model, tp, dtype, KV dtype,
-- quantization, max_model_len, the limits (no header: these read nothing before)
f = facts("club3090-295-qwen3.6-27b-tp2.log")
check.eq(f.engine, "vllm", "non-default args: vLLM")
check.eq(f.model, "~/.cache/huggingface/qwen3.6-27b-autoround-int4", "'model': from non-default args")
check.eq(f.tp, 2, "'tensor_parallel_size': 2")
check.eq(f.dtype, "float16", "'dtype'")
check.eq(f.kv_cache_dtype, "fp8_e5m2", "'kv_cache_dtype'")
check.eq(f.quantization, "auto_round", "'quantization'")
check.eq(f.max_num_batched_tokens, 8192, "'max_num_batched_tokens'")
check.eq(f.max_num_seqs, 2, "'max_num_seqs'")
check.eq(f.kv_tokens, 620944, "GPU KV cache size")
check.eq(f.at.tp, 7, "tp read from line 7")
check.eq(f.at.kv_tokens, 1, "KV tokens from line 1")
-- the log's model under its other spellings (the cache path's last part,
-- lower case, without -AWQ...) is looked up, not asked for by kv.models.get
-- and refused: the refusal computes the closest catalog names (catalog.suggest,
-- 0.02 s a name), and kv.validate of this log, whose model none of them is,
-- took 0.66 s
do
  local catalog = require "kvplan.catalog"
  local suggest, asked = catalog.suggest, 0
  catalog.suggest = function(...) asked = asked + 1; return suggest(...) end
  local ok, rows = pcall(kv.validate, raw("club3090-295-qwen3.6-27b-tp2.log"))
  catalog.suggest = suggest
  assert(ok, rows)
  check.eq(rows[1].status:find("^missing: model '~/.cache/huggingface/qwen3.6%-27b%-autoround%-int4' %(log:3%) is not in the catalog") ~= nil,
           true, "the cache path's model, not in the catalog: " .. rows[1].status)
  check.eq(asked, 0, "kv.validate of a log naming a cache path: closest catalog names computed")
end
-- the banner and non-default args of 0.10.2.dev, "Using max model len"
f = facts("vllm-24162-qwen2.5-0.5b-tp2.log")
check.eq(f.version, "0.10.2.dev378", "vLLM API server version")
check.eq(f.model, "/data/datasets/models-hf/Qwen2.5-0.5B/", "model from non-default args")
check.eq(f.tp, 2, "tp from non-default args")
check.eq(f.max_model_len, 32768, "Using max model len")
check.eq(f.max_num_batched_tokens, 2048, "chunked prefill's max_num_batched_tokens")
check.eq(f.at.version, 2, "the version's line")
-- vLLM's logo banner (log_version_and_model): version and model
f = facts("vllm-38479-banner-0.20.log")
check.eq(f.engine, "vllm", "the logo names vLLM")
check.eq(f.version, "0.20.0", "the logo's version")
check.eq(f.model, "/home/sie/.cache/huggingface/hub/models--cyankiwi--Qwen3.6-27B-AWQ-INT4/snapshots/"
         .. "42cf87020d298736061e41fd2673bc631f1cc4c6", "the logo's model")
-- "vLLM server version V, serving model M" (the banner without the logo)
f = validate.parse("INFO 01-01 00:00:00 [utils.py:1] vLLM server version 0.12.0, serving model Qwen/Qwen3-8B\n")
check.eq(f.version, "0.12.0", "vLLM server version")
check.eq(f.model, "Qwen/Qwen3-8B", "serving model")
-- non-default args with a KVTransferConfig: the connector, utilization, eager
f = facts("lmcache-2522-llama3.2-1b.log")
check.eq(f.engine, "vllm", "non-default args alone: vLLM")
check.eq(f.kv_connector, "LMCacheConnectorV1", "KVTransferConfig(kv_connector=...)")
check.eq(f.utilization.mid, 0.35, "'gpu_memory_utilization'")
check.eq(f.enforce_eager, true, "'enforce_eager': True")
check.eq(f.max_model_len, 1024, "'max_model_len'")
check.eq(f.model, "meta-llama/Llama-3.2-1B-Instruct", "'model'")
-- the GPU where the log names it: collect_env.py, nvidia-smi -L and its table, torch
f = facts("vllm-7526-collect-env-rtx6000ada.log")
check.eq(f.gpu_name, "NVIDIA RTX 6000 Ada Generation", "collect_env's GPU line")
check.eq(f.at.gpu, 4, "the GPU's line")
check.eq(validate.parse("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)\n").gpu_name, "NVIDIA H100 80GB HBM3",
         "nvidia-smi -L")
check.eq(validate.parse("|   0  NVIDIA L4                      On  |   00000000:00:03.0 Off |\n").gpu_name,
         "NVIDIA L4", "nvidia-smi's table")
check.eq(validate.parse("_CudaDeviceProperties(name='NVIDIA A100-SXM4-80GB', major=8, minor=0)\n").gpu_name,
         "NVIDIA A100-SXM4-80GB", "torch's device properties")
-- a log that names its GPU needs no gpu=: the catalog alias, its source the line
r = rows_by(kv.validate("GPU 0: NVIDIA H100 80GB HBM3\n" .. raw("vllm-21348-qwen3-235b-fp8-tp4.log"),
                        {args = {engine_version = "0.9"}}))
check.eq(r["starts/predict"] ~= nil, true, "the log's GPU predicts")
check.eq(r["starts/predict"].inputs:find("gpu=log:1 ", 1, true) ~= nil, true, "gpu=log:1")
-- a GPU the catalog lacks is said, naming the line
r = rows_by(kv.validate("GPU 0: NVIDIA Imaginary X9\nvllm serve Qwen/Qwen3-14B\nAvailable KV cache memory: 6.51 GiB\n"))
check.eq(r["gpu/parse"].status, "missing: the GPU 'NVIDIA Imaginary X9' (log:1) is not in the catalog (give gpu=ID)",
         "an unknown GPU named")
-- SGLang's server_args=ServerArgs(...) (its fields as gpustack/gpustack#3831 quotes them)
f = validate.parse("server_args=ServerArgs(model_path='Qwen/Qwen3-8B', page_size=128, device='npu', "
                   .. "tp_size=1, pp_size=1, mem_fraction_static=0.88)\n")
check.eq(f.engine, "sglang", "ServerArgs: SGLang")
check.eq(f.model, "Qwen/Qwen3-8B", "model_path")
check.eq(f.block, 128, "page_size")
check.eq(f.tp, 1, "tp_size")
check.eq(f.mem_fraction_static.mid, 0.88, "mem_fraction_static")

-- ---- arguments and the header: precedence argument > header > log -----------------
local lm = raw("vllm-lmcache-1739-qwen3-14b.log")
-- the header's engine in any case (it yielded no rows: '# engine: vLLM')
r = rows_by(kv.validate("# Engine: vLLM\n# model: qwen3-14b\n" .. lm))
check.eq(r["kv_tokens/exact"].status, "exact", "# Engine: vLLM")
r = rows_by(kv.validate(lm, {args = {model = "qwen3-14b", engine = "VLLM"}}))
check.eq(r["kv_tokens/exact"].status, "exact", "engine=VLLM")
check.eq(r["kv_tokens/exact"].inputs:find("model=argument", 1, true) ~= nil, true, "model=argument")
-- an argument over the header, the header over the log
r = rows_by(kv.validate("# tp: 2\n" .. raw("vllm-21348-qwen3-235b-fp8-tp4.log")))
check.eq(r["kv_tokens/exact"].inputs:find("tp=header", 1, true) ~= nil, true, "header over the log's tp")
r = rows_by(kv.validate("# tp: 2\n" .. raw("vllm-21348-qwen3-235b-fp8-tp4.log"), {args = {tp = 4}}))
check.eq(r["kv_tokens/exact"].inputs:find("tp=argument", 1, true) ~= nil, true, "argument over the header")
check.eq(r["kv_tokens/exact"].kvplan, 180928, "tp 4 as the log says")
-- a model given as a Hugging Face directory
r = rows_by(kv.validate(lm, {args = {model = "tests/fixtures/hf/llama-3.1-8b"}}))
check.eq(r["kv_tokens/exact"] ~= nil, true, "model=DIR")
check.eq(r["kv_tokens/exact"].inputs:find("model=config", 1, true) ~= nil, true, "model=DIR is the config")
-- the raw log with gpu= gives the figures of the log with a '# gpu:' header
local sg = raw("sglang-21348-qwen3-235b-fp8-tp4.log")
local a = kv.validate(sg, {args = {gpu = "h100-sxm"}})
local b = kv.validate("# gpu: h100-sxm\n" .. sg)
check.eq(#a, #b, "raw + gpu=: as many rows as with the header")
for i = 1, #a do
  for _, k in ipairs{"figure", "mode", "logged", "kvplan", "rel_error", "status"} do
    check.eq(a[i][k], b[i][k], "raw + gpu= row " .. i .. " " .. k)
  end
end
check.eq(rows_by(a)["kv_tokens/predict"].status, "predicted", "raw + gpu=: predicted")

-- ---- a garbled KV line: a row naming the line, the other figures checked ------------
local garbled = lm:gsub("Available KV cache memory: 6%.51 GiB", "Available KV cache memory: 6,5l GiB")
r = kv.validate(garbled, {args = {model = "qwen3-14b"}, name = "pasted.log"})
local by = rows_by(r)
check.eq(by["kv_memory_gib/parse"].status, "missing: line 1 cannot be read (expected 'Available KV cache "
         .. "memory: N.NN GiB'): 'Available KV cache memory: 6,5l GiB'; this figure is not checked",
         "the garbled line named")
check.eq(by["kv_memory_gib/parse"].log, "pasted.log", "the row names the log")
-- a later unreadable line beside an earlier good one is said too (the later would win)
local twice = lm .. "\n(EngineCore_DP0 pid=1) INFO [gpu_worker.py:298] Available KV cache memory: n/a GiB\n"
by = rows_by(kv.validate(twice, {args = {model = "qwen3-14b"}}))
check.eq(by["kv_memory_gib/parse"].status:find("^missing: line 4 cannot be read") ~= nil, true,
         "a later unreadable line")
local tok = lm:gsub("GPU KV cache size: 42,656 tokens", "GPU KV cache size: ?? tokens")
by = rows_by(kv.validate(tok, {args = {model = "qwen3-14b", gpu = "h100-sxm"}}))
check.eq(by["kv_tokens/parse"].status:find("^missing: line 2 cannot be read %(expected 'GPU KV cache size: N "
         .. "tokens'%)") ~= nil, true, "a garbled token line")

-- the characters every match of a pattern starts with (the search jumps between them)
for p, want in pairs{["()Available KV cache memory: (%-?[%d.]+) GiB"] = "Available KV cache memory: ",
                     ["()%-%-model[= ]+([^%s]+)"] = "--model", ["()vLLM API server version v?([%d%.]+)"] =
                     "vLLM API server version ", ["()%s%-tp[= ]+(%d+)"] = false, ["()[%s{,(]'?tp"] = false,
                     ["()# GPU blocks: ([%d,]+)"] = "# GPU blocks: ", ["()ab*c"] = "a", ["()%.x"] = ".x",
                     ["()^abc"] = false} do
  check.eq(validate.lead(p) or false, want, "lead " .. p)
end
-- the scan of literals: a block holds these and not those
local present = require("kvplan.core").scan_literals("INFO GPU KV cache size: 1 tokens\n", {"GPU KV cache size",
                                                      "Available KV", "tokens\n"})
check.eq(present[1], true, "scan: held")
check.eq(present[2], nil, "scan: not held")
check.eq(present[3], true, "scan: at the end")
check.error("literal 1 is 2 bytes long", require("kvplan.core").scan_literals, "abc", {"ab"})

-- bitsandbytes: the engine config line's quantization=bitsandbytes, in-flight
-- 4-bit with double-quantized absmax; 0.9.2 holds the absmax in fp32, 0.9.1
-- does not; no GPU named: the weights alone are predicted
do
  local function bnb(version)
    return rows_by(kv.validate("Initializing a V1 LLM engine (v" .. version .. ") with config: "
      .. "model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=8192, "
      .. "load_format=bitsandbytes, tensor_parallel_size=1, quantization=bitsandbytes\n"
      .. "Model loading took 5.5 GiB and 30.1 seconds\n"))
  end
  local m = kv.model("llama-3.1-8b")
  local c = m:weight_class_params()
  -- (the rest in bf16 and the rotary cache, 131072 x 128 x 2 bytes: engines.vllm_rotary)
  local lin, rest = c.attention + c.mlp, (c.embeddings + c.lm_head + c.other) * 2 + 131072 * 128 * 2
  local old, new = bnb("0.9.1")["weights_gib/predict"], bnb("0.9.2")["weights_gib/predict"]
  check.eq(old.kvplan, (rest + lin // 2 + lin // 64 + lin // 64 // 256 * 4) / 2^30, "0.9.1: nested absmax")
  check.eq(new.kvplan, (rest + lin // 2 + lin // 64 * 4) / 2^30, "0.9.2: fp32 absmax")
  assert(new.inputs:find("gpu=none", 1, true) and new.inputs:find("weights=bitsandbytes (log)", 1, true),
         new.inputs)
  check.eq(bnb("0.9.2")["kv_memory_gib/predict"].status,
           "missing: the GPU (neither the log nor its header names it; give gpu=ID)", "no GPU: no KV figure")
end

-- "Using Triton backend on V1 engine." names the attention backend, not the
-- MXFP4 MoE kernel; mxfp4.py's own line ends at "Using Triton backend"
check.eq(validate.parse("INFO [cuda.py:398] Using Triton backend on V1 engine.\n").mxfp4_backend, nil,
         "the attention backend's line")
check.eq(validate.parse("INFO [cuda.py:398] Using Triton backend on V1 engine.\n"
                        .. "INFO [mxfp4.py:165] Using Triton backend\n").mxfp4_backend, "triton",
         "the MoE kernel's line beside it")
check.eq(validate.parse("INFO [mxfp4.py:91] [get_mxfp4_backend_with_lora] Using Triton backend\n")
         .mxfp4_backend, "triton", "with LoRA")

-- LoRA slots from the engine's arguments: non-default args (0.9 on) and
-- the argparse Namespace (0.6-0.8); the slots join the predicted weights as
-- they join "Model loading took"
do
  local nd = [[
# gpu: h100-sxm
INFO [utils.py:233] non-default args: {'model': 'meta-llama/Llama-3.1-8B', 'max_model_len': 8192, 'enable_lora': True, 'max_loras': 4, 'max_lora_rank': 64}
INFO [__init__.py:1] Initializing a V1 LLM engine (v0.10.1) with config: model='meta-llama/Llama-3.1-8B', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1
INFO [gpu_model_runner.py:1] Model loading took 16.2100 GiB and 3.1 seconds
]]
  local lf = validate.parse(nd)
  check.eq(lf.enable_lora, true, "enable_lora from non-default args")
  check.eq(lf.max_loras, 4, "max_loras")
  check.eq(lf.max_lora_rank, 64, "max_lora_rank")
  local lr = rows_by(kv.validate(nd))
  local want = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.10.1",
                         max_model_len = 8192, enable_lora = true, max_loras = 4,
                         max_lora_rank = 64}:ledger()
  check.eq(string.format("%.4f", lr["weights_gib/predict"].kvplan),
           string.format("%.4f", want.weights / 2^30), "the slots in the predicted weights")
  check.eq(lr["weights_gib/predict"].inputs:find("lora=log", 1, true) ~= nil, true,
           "the inputs say where the slots came from")
  -- an argument overrides the log's
  local over = rows_by(kv.validate(nd, {args = {max_loras = 1}}))
  check.eq(tonumber(over["weights_gib/predict"].kvplan) < tonumber(lr["weights_gib/predict"].kvplan),
           true, "max_loras=1 given: fewer slots")
  local ns = validate.parse("args: Namespace(model='m', enable_lora=True, max_loras=2, "
                            .. "max_lora_rank=32, fully_sharded_loras=True, lora_dtype='auto')")
  check.eq(ns.enable_lora, true, "Namespace enable_lora")
  check.eq(ns.max_loras, 2, "Namespace max_loras")
  check.eq(ns.fully_sharded_loras, true, "Namespace fully_sharded_loras")
  check.eq(ns.lora_dtype, "auto", "Namespace lora_dtype")
  local off = validate.parse("args: Namespace(model='m', enable_lora=False, max_loras=1)")
  check.eq(off.enable_lora, false, "enable_lora=False: no slots")
  check.eq(off.max_loras, nil, "its defaults not read")
end

-- validate --help says what it reads from a log: each fact it names is one
-- M.parse finds in a log of tests/validation or tests/validation/raw
do
  local found = {}
  local p = io.popen("ls tests/validation/*.log tests/validation/raw/*.log")
  for path in p:lines() do
    local fh = assert(io.open(path, "rb"))
    local text = fh:read("a")
    fh:close()
    for k, v in pairs(validate.parse(text)) do
      if v ~= nil and not (type(v) == "table" and next(v) == nil) then found[k] = true end
    end
  end
  p:close()
  for _, r in ipairs(validate.log_facts) do
    check.eq(found[r[1]], true, "log fact '" .. r[1] .. "' is one M.parse reads from a log")
  end
  local help = validate.command_help()
  for _, key in ipairs{"model", "gpu", "tp", "version", "engine_version", "max_model_len", "summary"} do
    check.eq(help:find("\n  " .. key .. " ", 1, true) ~= nil, true, "validate --help lists " .. key)
  end
end

-- a quantized log whose catalog model cannot be weighed by class gives a row
-- saying so, not an error that ends the run (nemotron-nano-9b-v2's Mamba2
-- mixers' projections have no weight class: classes_unweighable)
local function awq_log(id)
  return "# engine: vllm\n# model: " .. id .. "\n# version: 0.7\n# quantization: awq\n"
    .. "model weights take 4.45GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak memory "
    .. "takes 0.94GiB; the rest of the memory reserved for KV Cache is 59.75GiB.\n"
end
do
  local ok, rows = pcall(kv.validate, awq_log("nemotron-nano-9b-v2"))
  check.eq(ok, true, "the run goes on: " .. tostring(rows))
  local w = rows_by(rows)["weights_gib/predict"]
  check.eq(w ~= nil, true, "a weights row")
  assert(w.status:find("cannot be weighed by class", 1, true), w.status)
  assert(w.status:find("Mamba2 mixers", 1, true), w.status)
  -- Qwen3-Next likewise: its Gated DeltaNet projections have no class (the
  -- attention class counted 48 plain attention layers, and the log was
  -- weighed with them in the model dtype)
  local q = rows_by(kv.validate(awq_log("qwen3-next-80b-a3b")))["weights_gib/predict"]
  check.eq(q ~= nil, true, "a weights row for qwen3-next")
  assert(q.status:find("Gated DeltaNet", 1, true), q.status)
end
-- (issue 20) such a log still checks what needs no weights: the tokens
-- and concurrency of the KV memory it prints; AutoRound is read as an
-- int4 checkpoint (vLLM's AutoRoundConfig through GPTQ), not as bf16; the
-- model's own MTP head and vLLM's Mamba 'align' mode are read from the log
-- (before: the log was not checked at all, auto_round was weighed in bf16,
-- and the draft's KV layer and the align blocks were left out)
do
  local log = "# gpu: rtx-3090\n"
    .. "(APIServer pid=1) INFO 06-18 05:11:27 [config.py:442] Warning: Prefix caching in Mamba cache 'align' "
    .. "mode is currently enabled. Its support for Mamba layers is experimental.\n"
    .. "(APIServer pid=1) INFO 05-06 22:27:57 [utils.py:233] non-default args: {'model': "
    .. "'~/.cache/huggingface/qwen3.6-27b-autoround-int4', 'dtype': 'float16', 'max_model_len': 262144, "
    .. "'quantization': 'auto_round', 'tensor_parallel_size': 2, 'kv_cache_dtype': 'fp8_e5m2', "
    .. "'enable_prefix_caching': True, 'max_num_seqs': 2, 'speculative_config': {'method': 'mtp', "
    .. "'num_speculative_tokens': 3}}\n"
    .. "(EngineCore pid=106) INFO 05-06 22:28:36 [core.py:109] Initializing a V1 LLM engine (v0.20.1) with config\n"
    .. "(Worker_TP0 pid=54) INFO 05-06 06:48:40 [gpu_worker.py:460] Available KV cache memory: 10.99 GiB\n"
    .. "(EngineCore pid=106) INFO 05-06 22:30:35 [kv_cache_utils.py:1708] GPU KV cache size: 619,479 tokens\n"
  local ok, rows = pcall(kv.validate, log, {args = {model = "qwen3.6-27b"}})
  check.eq(ok, true, "an unweighable checkpoint's log is read: " .. tostring(rows))
  local r = rows_by(rows)
  assert(r["weights_gib/predict"] and r["weights_gib/predict"].status:find("auto_round checkpoint", 1, true),
         "the weights row names the AutoRound checkpoint")
  check.eq(tonumber(r["weights_gib/predict"].kvplan), nil, "and predicts none")
  local t = r["kv_tokens/exact"]
  check.eq(t ~= nil, true, "the exact KV tokens are still checked")
  check.eq(r["kv_memory_gib/predict"], nil, "nothing that needs the weights is predicted")
  assert(t.inputs:find("speculative=log:", 1, true) and t.inputs:find("mamba_cache_mode=log:", 1, true),
         t.inputs)
  -- the same deployment by hand: the MTP head's one attention layer, 3
  -- speculative tokens, align mode, the logged 10.99 GiB as the whole budget
  local b = math.floor(10.99 * 2^30)
  local want = kv.deploy{model = "qwen3.6-27b", tp = 2, kv = "fp8", max_model_len = 262144,
                         engine_version = "0.20.1", gpu_memory = b + 1, utilization = 1, activation = 0,
                         overhead = 0, weight_bytes = 1, mamba_cache_mode = "align",
                         speculative = {tokens = 3, heads = "mtp", weight_bytes = 0}}:ledger()
  check.eq(t.kvplan, want.vllm_kv_cache_tokens, "MTP and align as the log states them")
  -- without the align line: prefix caching with speculative decoding is
  -- vLLM's align mode (MambaModelConfig), the same tokens
  local nl = log:gsub("[^\n]*Mamba cache 'align' mode[^\n]*\n", "")
  local na = rows_by(kv.validate(nl, {args = {model = "qwen3.6-27b"}}))["kv_tokens/exact"]
  check.eq(na.kvplan, t.kvplan, "align by default")
  assert(na.inputs:find("mamba_cache_mode=default", 1, true), na.inputs)
  -- AutoRound on a model that can be weighed: int4 weights, not bf16
  local ar = rows_by(kv.validate("# engine: vllm\n# model: qwen3-8b\n# version: 0.20\n# gpu: h100\n"
    .. "# quantization: auto_round\nModel loading took 5.7 GiB memory and 3.1 seconds\n"))
  local w = ar["weights_gib/predict"]
  check.eq(w ~= nil and w.kvplan < 8, true, "auto_round weighed as int4: " .. tostring(w and w.kvplan))
  -- a draft model kvplan does not know: said, not silently left out
  local dl = log:gsub("{'method': 'mtp', 'num_speculative_tokens': 3}",
                      "{'method': 'dflash', 'model': '~/.cache/huggingface/qwen3.6-27b-dflash', "
                      .. "'num_speculative_tokens': 5}")
  local dr = rows_by(kv.validate(dl, {args = {model = "qwen3.6-27b"}}))
  assert(dr["speculative/parse"] and dr["speculative/parse"].status:find("'dflash'", 1, true),
         "the unknown draft is named")
  check.eq(dr["kv_tokens/exact"], nil, "and its tokens are not checked without its KV layers")
end
-- a model marked so refuses to be weighed by class when a deployment asks
do
  local t = kv.models.facts(kv.model("nemotron-nano-9b-v2"))
  t.id, t.weight_formats = "nemotron-awq", {attention = "int4-g128", mlp = "int4-g128"}
  local m = kv.model(t)
  check.error("model 'nemotron-awq': its checkpoint cannot be weighed by class: its 27 Mamba2",
              m.weight_size, m)
end
-- falcon-7b's two-matrix MLP (mlp_matrices = 2) adds up: its AWQ log is
-- weighed (before, its classes counted a gated MLP and exceeded params)
do
  local r = rows_by(kv.validate(awq_log("falcon-7b")))
  check.eq(r["weights_gib/predict"] and r["weights_gib/predict"].status, "predicted",
           "falcon-7b AWQ weighed by class")
end
-- deepseek-v2-lite's classes add up since its entry has dense_layers = 1
-- (first_k_dense_replace): its AWQ checkpoint is weighed (vllm#13109's log)
do
  local r = rows_by(kv.validate("# engine: vllm\n# model: deepseek-v2-lite\n# version: 0.7.2\n"
    .. "# quantization: awq\n"
    .. "model weights take 10.45GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak memory "
    .. "takes 0.94GiB; the rest of the memory reserved for KV Cache is 59.75GiB.\n"))
  check.eq(r["weights_gib/predict"].status, "predicted", "deepseek-v2-lite AWQ weighed by class")
end

-- TensorRT-LLM's pool and window from the max_tokens it names (1.1.0rc3's
-- lines, tests/validation/trtllm-spark-gpt-oss-120b-gb10.log): ceil(86711 /
-- 32) = 2710 blocks, 86720 tokens allocated, a max_seq_len of 131072 cut to
-- that (engine/core/starts.c; the floor, 2709 blocks, would say 86688)
local trt_pool = [[
# model: gpt-oss-120b
# tp: 1
[TensorRT-LLM] TensorRT-LLM version: 1.1.0rc3
[TRT-LLM] [I] Using LLM with PyTorch backend
[TRT-LLM] [I] Estimated max memory in KV cache : 5.95 GiB
[TRT-LLM] [W] Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and 86711, respectively). The smaller value will be used.
[TRT-LLM] [W] Attention window size 131072 exceeds upper bound 86720 for available blocks. Reducing to 86720.
[TensorRT-LLM][INFO] Number of tokens per block: 32.
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 5.95 GiB for max tokens in paged KV cache (86720).
]]
local rp = rows_by(kv.validate(trt_pool))
check.eq(rp["kv_pool_tokens/exact"].kvplan, 86720, "2710 blocks of 32")
check.eq(rp["kv_pool_tokens/exact"].status, "exact", "as allocated")
check.eq(rp["kv_window/exact"].kvplan, 86720, "the window: the pool's blocks")
check.eq(rp["kv_window/exact"].status, "exact", "as logged")
rp = rows_by(kv.validate((trt_pool:gsub("upper bound 86720", "upper bound 86688"))))
check.eq(rp["kv_window/exact"].status, "differs", "another window differs")

-- system_memory (memory others hold on the GPU): on a unified-memory GPU
-- (the catalog's gb10) nothing states it, so the rows it changes (the KV
-- pool, non-torch memory outside torch, the start) say system_memory=assumed
-- and the "_stated" figures leave them out; the weights do not depend on it.
-- Stated (header or argument), it is an input: TensorRT-LLM's budget loses
-- fraction x system_memory (0.9 x 40 GiB = 36 GiB, hand-counted), its
-- "outside torch" prediction gains it. The log's own outside-torch figure
-- is never read back as the input.
do
  local spark = check.slurp("tests/validation/trtllm-spark-gpt-oss-120b-gb10.log")
  local r0 = rows_by(kv.validate(spark))
  check.eq(r0["kv_memory_gib/predict"].inputs:find("system_memory=assumed", 1, true) ~= nil, true,
           "unified GB10: system_memory assumed on the KV row")
  check.eq(r0["starts/predict"].inputs:find("system_memory=assumed", 1, true) ~= nil, true,
           "and on the start")
  check.eq(r0["weights_gib/predict"].inputs:find("system_memory", 1, true), nil,
           "the weights do not depend on it")
  local s = {}
  for _, x in ipairs(validate.summary(kv.validate(spark))) do s[x.figure] = x end
  check.eq(s.kv_memory_gib_stated, nil, "no stated KV figure from this log alone")
  check.eq(s.weights_gib.n, 1, "its weights predicted")
  check.eq(s.weights_gib_stated, nil, "no weights row assumed: no stated figure apart")
  local given = spark:gsub("# gpu: gb10\n", "# gpu: gb10\n# system_memory: 40GiB\n", 1)
  local r1 = rows_by(kv.validate(given))
  check.eq(r1["kv_memory_gib/predict"].inputs:find("system_memory=header", 1, true) ~= nil, true,
           "system_memory from the header")
  check.eq(r1["kv_memory_gib/predict"].inputs:find("=assumed", 1, true), nil, "nothing assumed")
  local less = r0["kv_memory_gib/predict"].kvplan - r1["kv_memory_gib/predict"].kvplan
  check.eq(math.abs(less - 36) < 1e-6, true, "TensorRT-LLM's budget: 0.9 x 40 GiB less, got " .. less)
  local more = r1["non_torch_gib/predict"].kvplan - r0["non_torch_gib/predict"].kvplan
  check.eq(math.abs(more - 40) < 1e-9, true, "outside torch: 40 GiB more, got " .. more)
  local r2 = rows_by(kv.validate(spark, {args = {system_memory = 40 * 2^30}}))
  check.eq(r2["kv_memory_gib/predict"].kvplan, r1["kv_memory_gib/predict"].kvplan, "argument = header")
  check.eq(r2["kv_memory_gib/predict"].inputs:find("system_memory=argument", 1, true) ~= nil, true,
           "system_memory from the argument")
end

-- vLLM's CUDA-graph estimate (vllm-project/vllm#30515, on by default from
-- #38284): the lines as gpu_model_runner.py and gpu_worker.py print them;
-- the KV memory predicted is the logged estimate smaller where the log says
-- it was applied, the same where it says it was not
local cg_base = [[
# gpu: h100
(APIServer pid=1) INFO [api_server.py:1] vLLM API server version 0.21.0
vllm serve Qwen/Qwen3-14B --max-model-len 32768
(EngineCore pid=284) INFO 05-30 07:46:21 [gpu_worker.py:466] Available KV cache memory: 60.00 GiB
]]
local cg_est = "(EngineCore pid=284) INFO 05-30 07:46:21 [gpu_model_runner.py:6365] Estimated CUDA graph memory: 0.61 GiB total\n"
local cg_on = "(EngineCore pid=284) INFO 05-30 07:46:21 [gpu_worker.py:481] CUDA graph memory profiling is enabled "
  .. "(default since v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to "
  .. "--gpu-memory-utilization=0.9129 without CUDA graph memory profiling. To maintain the same effective KV "
  .. "cache size as before, increase --gpu-memory-utilization to 0.9271. To disable, set "
  .. "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.\n"
local cg_off = "(Worker_TP0 pid=79) WARNING 07-05 08:55:49 [gpu_worker.py:498] CUDA graph memory profiling is "
  .. "disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph memory is not accounted for "
  .. "during KV cache allocation, which may require lowering --gpu-memory-utilization to avoid OOM. Consider "
  .. "re-enabling it (the default as of v0.21.0) and increasing --gpu-memory-utilization from 0.8500 to 0.8524.\n"
-- the shorter form of an earlier build (no "is enabled" sentence)
local cg_short = "(EngineCore pid=1501) INFO [gpu_worker.py:495] The current --gpu-memory-utilization=0.7200 is "
  .. "equivalent to --gpu-memory-utilization=0.6026 without CUDA graph memory profiling. To maintain the same "
  .. "effective KV cache size as before, increase --gpu-memory-utilization to 0.8374.\n"
f = validate.parse(cg_base .. cg_est .. cg_on)
check.eq(f.cudagraph_estimate.mid, 0.61, "the estimate read")
check.eq(f.cudagraph_estimate.lo, 0.605, "its rounding interval")
check.eq(f.cudagraph_applied, true, "applied: profiling is enabled")
check.eq(validate.parse(cg_base .. cg_est .. cg_off).cudagraph_applied, false, "not applied: disabled")
check.eq(validate.parse(cg_base .. cg_est .. cg_short).cudagraph_applied, true, "the shorter form: applied")
check.eq(validate.parse(cg_base .. cg_est).cudagraph_applied, nil, "no line says: unknown")
check.eq(validate.parse(cg_base).cudagraph_estimate, nil, "no estimate line")
-- the utilization the line names is the one vLLM runs with (not the "... to W"
-- at its end, read as the word "to" before)
check.eq(f.utilization.mid, 0.92, "utilization: 'The current --gpu-memory-utilization=0.9200'")
check.eq(validate.parse(cg_base .. cg_est .. cg_short).utilization.mid, 0.72, "utilization: the shorter form")
check.eq(validate.parse(cg_base .. cg_est .. cg_off).utilization.mid, 0.85,
         "utilization: disabled, 'increasing --gpu-memory-utilization from 0.8500'")
check.eq(validate.parse(cg_base).utilization, nil, "no utilization line: none read")
local r_none = rows_by(kv.validate(cg_base))["kv_memory_gib/predict"]
local r_none_on = rows_by(kv.validate(cg_base .. cg_on))["kv_memory_gib/predict"]
local r_none_off = rows_by(kv.validate(cg_base .. cg_off))["kv_memory_gib/predict"]
local r_on = rows_by(kv.validate(cg_base .. cg_est .. cg_on))["kv_memory_gib/predict"]
local r_off = rows_by(kv.validate(cg_base .. cg_est .. cg_off))["kv_memory_gib/predict"]
local r_unk = rows_by(kv.validate(cg_base .. cg_est))["kv_memory_gib/predict"]
check.eq(r_none.status, "predicted", "the base log is predicted")
-- 0.61 GiB (654,982,414 bytes) less, to the rows' rounding of their GiB
check.eq(string.format("%.6f", r_none_on.kvplan - r_on.kvplan), "0.610000",
         "applied: the logged estimate off the KV memory")
check.eq(r_on.inputs:find("cudagraph_estimate=log:5", 1, true) ~= nil, true, "the inputs name its line")
check.eq(r_off.kvplan, r_none_off.kvplan, "disabled: the estimate is not taken off")
check.eq(r_unk.kvplan, r_none.kvplan, "not said to be applied: not taken off")
local t_none = rows_by(kv.validate(cg_base .. cg_on .. "[kv_cache_utils.py:1733] GPU KV cache size: 100,000 tokens\n"))
local t_on = rows_by(kv.validate(cg_base .. cg_est .. cg_on
                                 .. "[kv_cache_utils.py:1733] GPU KV cache size: 100,000 tokens\n"))
check.eq(t_on["kv_tokens/predict"].kvplan < t_none["kv_tokens/predict"].kvplan, true,
         "applied: fewer tokens predicted")
