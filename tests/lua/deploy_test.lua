-- tests/lua/deploy_test.lua: deployments, ledgers and their answers.
local kv = require "kvplan"
local check = require "check"
local GiB = kv.units.GiB

-- the issue's 10-line question: 8K requests of a 70B model, one H100, 4-bit weights
local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", weights = "int4-g128",
                    utilization = 0.9, overhead = "2 GiB"}
local l = d:ledger()
check.eq(l.total, 85028896768, "H100 visible memory")
check.eq(l.usable, math.floor(85028896768 * 0.9), "usable")
-- the weights as vLLM loads them: the checkpoint's and the rotary cos/sin cache
-- (engines.lua vllm_rotary): 131072 positions x 128 in bf16, whole on the GPU
check.eq(l.rotary, 131072 * 128 * 2, "rotary cache")
check.eq(l.weights, kv.formats.bytes(kv.formats.get "int4-g128", d.model.params) + l.rotary,
         "weights")
check.eq(d.activation_source, "predicted", "activation predicted when not given")
check.eq(d.overhead_source, "given", "overhead given")
check.eq(l.activation, d.activation, "the ledger subtracts the prediction")
check.eq(l.kv_budget, l.usable - l.weights - l.activation - 2 * GiB, "budget")
check.eq(l.kv_blocks, l.kv_budget // (16 * 327680), "blocks")
check.eq(l.kv_tokens, (l.kv_blocks - 1) * 16, "tokens")
check.eq(l:max_concurrency(8192), (l.kv_blocks - 1) // 512, "8K requests")
check.eq(l.fits, true, "fits")

-- not fitting is an answer, not an error, and never a negative count
local big = d:with{weights = "bf16"}:ledger()
check.eq(big.fits, false, "bf16 70B on one H100")
check.eq(big.why, "weights need 131.4 GiB per GPU, 71.3 GiB usable", "why")
check.eq(big:max_concurrency(8192), 0, "no requests")
check.eq(big.kv_budget, 0, "no budget, not negative")
local tp = d:with{weights = "bf16"}:min_tp(32768, 16)
check.eq(tp, 8, "min tp")
local at4 = d:with{weights = "bf16", tp = 4}:ledger()
check.eq(at4:fit(32768, 16), false, "tp 4 is too small")
check.eq(32769 * 16 * 81920 > at4.kv_budget, true, "16 x 2048 blocks + the null block exceed it")
local fits, reason = l:fit(131072, 64)
check.eq(fits, false, "64 x 128K")
assert(reason:find("^KV for 64 x 131072 tokens needs"), reason)

-- bad input: field, value, this file's line
check.error("deploy_test.lua:43: field 'tp' must be an integer >= 1, got -1",
            function() kv.deploy{model = "llama-3.1-8b", gpu = "h100", tp = -1} end)
check.error("field 'context' must be an integer, got nan", function() l:max_concurrency(0/0) end)
check.error("field 'context' must be a positive integer, got 0", function() l:fit(0, 1) end)
check.error("field 'utilization' must be in (0, 1], got 1.5",
            function() d:with{utilization = 1.5} end)
check.error("unknown field 'tpp' in deployment change (did you mean 'pp', 'tp'", function() d:with{tpp = 2} end)
check.error("unknown gpu 'h100-sxn' (did you mean 'h100-sxm'", function() d:with{gpu = "h100-sxn"} end)
check.error("deployment needs a 'model'", function() kv.deploy{gpu = "h100"} end)
check.error("ledger has no field 'kv_tokenz'", function() return l.kv_tokenz end)

-- what vLLM logs: "GPU KV cache size" counts the null block, "Maximum
-- concurrency" divides the pool by a max_model_len request's blocks
local v = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:ledger()
check.eq(v.kv_groups, 1, "one KV cache group")
check.eq(v.vllm_kv_cache_tokens, v.kv_blocks * 16, "logged tokens")
check.eq(v.vllm_max_concurrency, v.kv_blocks / (131072 // 16), "logged concurrency")
local g = kv.deploy{model = "gemma-3-27b", gpu = "h100-sxm"}:ledger()
check.eq(g.kv_groups, 7, "Gemma 3 27B: 1 full + 6 sliding groups of 10 layers")
check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang"}:ledger()
         .vllm_kv_cache_tokens, 0, "not a vLLM budget")

-- Llama-3.1-8B's 2048-token request fits one L4, but vLLM refuses its max_model_len there
local l4 = kv.deploy{model = "llama-3.1-8b", gpu = "l4"}
check.eq(l4:min_tp(2048, 1), 2, "min tp: the engine starts")
check.eq(select(3, l4:min_tp(2048, 1, 1)), "starts", "min tp 1: vLLM refuses")

-- Data and expert parallelism, hand-counted from the engines' layouts
-- (engine/core/vllm_kv.c kvp_vllm_stage_weights). Qwen3-235B-A22B: 94 layers
-- of 64 query heads and 4 KV heads of 128, 128 experts (8 a token), bf16.
local function moe(o)
  local t = {model = "qwen3-235b-a22b", gpu = "h200", tp = 8, max_model_len = 8192}
  for k, v in pairs(o) do t[k] = v end
  return kv.deploy(t):ledger()
end
local qc = kv.model("qwen3-235b-a22b"):weight_class_params()
local all = 0
for _, n in pairs(qc) do all = all + 2 * n end
local experts, attn, emb = 2 * qc.experts, 2 * qc.attention, 2 * qc.embeddings
-- whole on every GPU (models.lua replicated_params): the norms (two of the
-- hidden size and Qwen3's q_norm and k_norm of the head size a layer, the
-- final one) and the routers (hidden x 128 a layer), bf16
local qm = kv.model("qwen3-235b-a22b")
local R = 2 * (94 * (2 * 4096 + 2 * 128) + 4096 + 94 * 128 * 4096)
check.eq(R, 2 * (qm.layers * (2 * qm.hidden + 2 * qm.head_dim) + qm.hidden
                 + qm.layers * qm.experts * qm.hidden), "Qwen3-235B's replicated bytes")
-- SGLang at tp 8: 4 KV heads over 8 GPUs, one (replicated) a GPU: 94 x 2 x 1 x 128 x 2 bytes
local sg = moe{engine = "sglang"}
check.eq(sg.kv_token_bits, 8 * 94 * 2 * 1 * 128 * 2, "SGLang tp 8: one KV head a GPU")
-- SGLang's weights beyond the parameters: the float32 rotary table (40960
-- x 128 x 4 bytes) and the caching allocator's slack (engines.lua
-- sglang_alloc_slack), neither under attention DP's or EP's layout but the
-- table
check.eq(sg.rotary, 40960 * 128 * 4, "SGLang: the rotary table in float32")
check.eq(sg.weights - sg.rotary - sg.alloc, (all - R + 7) // 8 + R,
         "SGLang tp 8: every weight over tp but the replicated")
-- enable_dp_attention, dp_size 8: attention TP 8 / 8 = 1, all 4 KV heads on
-- every GPU, the attention and the embedding whole, the rest over 8
local dpa = moe{engine = "sglang", dp_size = 8, enable_dp_attention = true}
check.eq(dpa.kv_token_bits, 8 * 94 * 2 * 4 * 128 * 2, "attention DP 8: four KV heads a GPU")
check.eq(dpa.data_parallel_size, 8, "attention DP 8: eight ranks")
check.eq(dpa.alloc, 0, "attention DP: no allocator slack listed")
check.eq(dpa.weights - dpa.rotary, (all - experts - attn - emb - R + 7) // 8 + attn + emb + R + (experts + 7) // 8,
         "attention DP 8: attention and embedding whole")
-- dp_size 2: attention TP 4, still one KV head a GPU, the attention over 4
local dp2 = moe{engine = "sglang", data_parallel_size = 2, enable_dp_attention = true}
check.eq(dp2.kv_token_bits, sg.kv_token_bits, "attention DP 2: attention TP 4, one KV head")
check.eq(dp2.weights - dp2.rotary, (all - experts - attn - emb - R + 7) // 8 + (attn + 3) // 4 + emb + R + (experts + 7) // 8,
         "attention DP 2: attention over 4")
-- ep_size 8: 16 whole experts a GPU, as many bytes as 1/8 of each; ep 4:
-- 32 experts on each pair of GPUs, each split over 2
local sg_plain = sg.weights - sg.alloc
check.eq(moe{engine = "sglang", ep_size = 8}.weights, sg_plain, "EP 8 of 128 experts")
check.eq(moe{engine = "sglang", expert_parallel_size = 4}.weights, sg_plain, "SGLang's spelling")
-- without enable_dp_attention SGLang's dp_size is replicas: each its own tp 8
check.eq(moe{engine = "sglang", dp_size = 2}.weights, sg.weights, "SGLang dp_size alone: replicas")
check.error("field 'enable_dp_attention' needs data_parallel_size (SGLang's dp_size) > 1",
            function() moe{engine = "sglang", enable_dp_attention = true} end)
check.error("field 'enable_dp_attention' needs data_parallel_size to divide tp",
            function() moe{engine = "sglang", dp_size = 3, enable_dp_attention = true} end)
check.error("field 'ep_size' must divide tp", function() moe{engine = "sglang", ep_size = 3} end)
check.error("field 'ep_size' needs a MoE model",
            function() kv.deploy{model = "llama-3.1-8b", gpu = "h200", tp = 2, engine = "sglang", ep_size = 2} end)
check.error("field 'enable_dp_attention' is SGLang's",
            function() moe{data_parallel_size = 2, enable_dp_attention = true} end)
check.error("field 'ep_size' is SGLang's", function() moe{ep_size = 8} end)
-- TensorRT-LLM's ep_size (its --ep_size; Mapping: moe_ep_size x moe_tp_size =
-- tp, tensorrt_llm/mapping.py): ep ranks of whole experts, each over tp / ep.
-- ep 8 at tp 8: 16 of the 128 experts whole a GPU; ep 2: 64 experts, each over
-- 4 GPUs; either as many bytes as 1/8 of every expert (the core's rounding:
-- ceil(experts x 64 / 128), then over 4), the rest over tp
local te8 = moe{engine = "trtllm", ep_size = 8}
local te2 = moe{engine = "trtllm", ep_size = 2}
check.eq(te8.weights, (all - experts - R + 7) // 8 + R + (experts * 16 + 127) // 128, "TensorRT-LLM EP 8")
check.eq(te2.weights, (all - experts - R + 7) // 8 + R + ((experts * 64 + 127) // 128 + 3) // 4,
         "TensorRT-LLM EP 2 x moe_tp 4")
-- one expert's slice on a GPU (kvplan.sim.expert_slice_bytes, the MoE GEMM
-- curve's axis): w13 + w2 = 3 x hidden 4096 x moe_intermediate 1536 x 2 bytes,
-- whole under EP 8, over moe_tp 4 under EP 2, over tp 8 without EP
local sim = require "kvplan.sim"
local function dep(o)
  local t = {model = "qwen3-235b-a22b", gpu = "h100-sxm", tp = 8, max_model_len = 8192, engine = "trtllm"}
  for k, v in pairs(o) do t[k] = v end
  return kv.deploy(t)
end
check.eq(dep{ep_size = 8}.sglang_ep, 8, "TensorRT-LLM's moe_ep_size in the core's EP layout")
check.eq(sim.expert_slice_bytes(dep{ep_size = 8}), 3 * 4096 * 1536 * 2, "EP 8: whole experts")
check.eq(sim.expert_slice_bytes(dep{ep_size = 2}), 3 * 4096 * 1536 * 2 / 4, "EP 2: over moe_tp 4")
check.eq(sim.expert_slice_bytes(dep{}), 3 * 4096 * 1536 * 2 / 8, "no EP: over tp 8")
-- the step: the MoE's output all-reduced over tp as without EP (no
-- all-to-all without attention DP: CutlassFusedMoE.enable_alltoall), the
-- larger slices read at H100's curve of larger slices: a quicker step
local t0, t8 = dep{}:time(1024, 16), dep{ep_size = 8}:time(1024, 16)
check.eq(t8.a2a_ms, 0, "TensorRT-LLM EP without attention DP: no all-to-all")
check.eq(t8.comm_ms, t0.comm_ms, "the same all-reduces over tp")
check.eq(t8.tpot_ms < t0.tpot_ms, true, "whole experts: the GEMMs of larger slices")
check.error("field 'enable_expert_parallel' is vLLM's; TensorRT-LLM's expert parallelism is ep_size",
            function() moe{engine = "trtllm", enable_expert_parallel = true} end)
check.error("field 'ep_size' must divide tp (TensorRT-LLM's Mapping",
            function() moe{engine = "trtllm", ep_size = 3} end)
check.error("field 'ep_size' needs a MoE model",
            function() kv.deploy{model = "llama-3.1-8b", gpu = "h200", tp = 2, engine = "trtllm", ep_size = 2} end)
-- vLLM data_parallel_size 8 at tp 1 with EP: dense whole, 16 experts a GPU
local v8 = moe{tp = 1, data_parallel_size = 8, enable_expert_parallel = true}
check.eq(v8.weights - v8.rotary, all - experts + experts // 8, "vLLM DP 8 EP: 16 of 128 experts a GPU")
check.eq(v8.kv_token_bits, 8 * 94 * 2 * 4 * 128 * 2, "vLLM DP 8 at tp 1: every KV head")
-- the step time: the deployment's throughput is every rank's
local tq = kv.deploy{model = "qwen3-235b-a22b", gpu = "h200", tp = 8, engine = "sglang",
                     dp_size = 8, enable_dp_attention = true, ep_size = 8}:time(1024, 16)
check.eq(tq.a2a_ms > 0, true, "EP: an all-to-all")
check.eq(math.abs(tq.tokens_per_s / (8 * 16 / (tq.tpot_ms / 1e3)) - 1) < 1e-9, true, "eight ranks of 16")

-- vLLM's LoRA slots (--enable-lora): every layer's four linear modules,
-- max_loras slots of max_lora_rank, in the weights (engine/core/predict.c
-- kvp_lora_layer_bytes): Llama-3.1-8B at rank 16, one slot, bf16: LoRA's
-- 41943040 parameters on its seven linear layers, 80 MiB
do
  local plain = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:ledger()
  local lo = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true}:ledger()
  check.eq(lo.lora, 41943040 * 2, "one slot of rank 16")
  check.eq(lo.weights, plain.weights + lo.lora, "in the weights")
  check.eq(lo.kv_budget, plain.kv_budget - lo.lora, "out of the KV budget")
  check.eq(plain.lora, 0, "none without enable_lora")
  local four = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true,
                         max_loras = 4, max_lora_rank = 64, lora_dtype = "float16"}:ledger()
  check.eq(four.lora, 16 * lo.lora, "4 slots of rank 64")
  -- pipeline stages hold their own layers' slots
  local pp = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true, pp = 2}:ledger()
  check.eq(pp.lora, lo.lora // 2, "16 of 32 layers a stage")
  -- the ledger's rows: weights without them, a lora row
  local items = kv.report.ledger_items(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                                                 enable_lora = true, max_loras = 2})
  check.eq(items[1].item, "weights", "weights first")
  check.eq(items[1].bytes, plain.weights - plain.rotary, "weights alone (the rotary cache apart)")
  check.eq(items[2].item, "lora", "then the slots")
  check.eq(items[2].bytes, 2 * lo.lora, "2 slots")
  check.eq(items[2].note, "2 LoRA slots of rank 16 (max_loras, max_lora_rank)", "its note")
  local sum = 0
  for _, it in ipairs(items) do if it.item ~= "kv_short" then sum = sum + it.bytes end end
  check.eq(sum, plain.total, "the rows add up to the GPU")
  -- bad options are named
  -- as vLLM, the options change nothing without enable_lora
  check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", max_loras = 2}:ledger().lora, 0,
           "max_loras alone")
  check.error("field 'max_lora_rank' must be one of vLLM's ranks (1, 8, 16, 32, 64, 128, 256, "
              .. "320, 512), got 24", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true, max_lora_rank = 24})
  check.error("field 'max_cpu_loras' (2) must be >= max_loras (4)", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true, max_loras = 4,
               max_cpu_loras = 2})
  check.error("field 'enable_lora' is vLLM's; budget 'sglang' has no LoRA slots", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true, budget = "sglang"})
  check.error("LoRA slots of MoE experts", kv.deploy,
              {model = "mixtral-8x7b", gpu = "h100-sxm", enable_lora = true})
  check.error("fully_sharded_loras: tp 4 must divide max_lora_rank 1", kv.deploy,
              {model = "llama-3.1-8b", gpu = "h100-sxm", enable_lora = true, max_lora_rank = 1,
               fully_sharded_loras = true, tp = 4})
end

-- Llama-3.2-11B-Vision (mllama, from its config.json): 32 self-attention
-- layers and, every fifth from layer 3, 8 cross-attention layers caching
-- an image's 4 x 1601 encoder tokens; its profiling run is not modelled
do
  local m = kv.model("meta-llama/Llama-3.2-11B-Vision")
  check.eq(m.id, "llama-3.2-11b-vision", "the alias")
  local k = m:kinds()
  check.eq(k.full, 32, "self-attention layers")
  check.eq(k.cross, 8, "cross-attention layers")
  check.eq(m:layer(4).kind, "cross", "layer 3 (the fourth) is cross-attention")
  check.eq(m:layer(39).kind, "cross", "layer 38 too")
  local d0 = kv.deploy{model = m, gpu = "h100-sxm", engine_version = "0.7", max_model_len = 65536}
  check.eq(d0.activation_source, "none", "no activation predicted")
  check.eq(tostring(d0.prediction_note):find("mllama", 1, true) ~= nil, true, "and why")
  -- V0: one pool, every block of all 40 layers (16 tokens x 8 KV heads x
  -- 128 x K and V x 2 bytes each), a request's cross blocks beside its own
  local l0 = d0:ledger()
  check.eq(l0.block_bytes, 40 * 16 * 4096, "a V0 block spans every layer")
  check.eq(l0:request_bytes(512), (32 + 401) * l0.block_bytes, "512 tokens: 32 + 401 blocks")
  -- V1's releases: the cross layers are a KV type of their own
  local l1 = kv.deploy{model = m, gpu = "h100-sxm", engine_version = "0.11", max_model_len = 65536,
                       activation = "30 GiB"}:ledger()
  check.eq(l1.block_bytes ~= l0.block_bytes, true, "V1: KV cache groups")
end

-- d:with of no table names it ("bad argument #1 to 'for iterator' (table
-- expected, got number)" from inside deploy.lua before)
do
  local d0 = kv.deploy{model = "llama-3.1-8b", gpu = "l4"}
  check.error("d:with needs a table of changes, e.g. d:with{tp = 2}, got number", d0.with, d0, 4)
  check.error("d:with needs a table of changes, e.g. d:with{tp = 2}, got nil", d0.with, d0)
end

-- system_memory by vLLM release (deploy.lua vllm_system_rule; ledger.c,
-- starts.c): 0.6 (context_counted: non-torch is all used memory less
-- torch's) loses it from the KV budget; V0 of 0.7 (memory_profiling's
-- baseline, no startup check) neither loses it nor refuses; V1 from 0.8
-- keeps the budget and refuses once free < total x utilization. On an
-- 80 GiB GPU at utilization 0.9 (72 GiB requested): 5 GiB leaves 75 free
-- (starts), 10 GiB leaves 70 (refuses).
do
  local function at(v, sys)
    return kv.deploy{model = "llama-3.1-8b", gpu_memory = "80GiB", engine = "vllm", engine_version = v,
                     utilization = 0.9, max_model_len = 8192, system_memory = sys}
  end
  local GiB = 2^30
  for _, v in ipairs{"0.6", "0.7", "0.11"} do
    local base = at(v, 0):ledger()
    local five, ten = at(v, 5 * GiB), at(v, 10 * GiB)
    local drop = base.kv_budget - five:ledger().kv_budget
    check.eq(drop, v == "0.6" and 5 * GiB or 0, "vLLM " .. v .. ": the budget loses " .. drop)
    check.eq(five:starts(), true, "vLLM " .. v .. ": 75 GiB free starts")
    local ok, why = ten:starts()
    check.eq(ok, v ~= "0.11", "vLLM " .. v .. ": 70 GiB free " .. tostring(why))
    if v == "0.11" then
      check.eq(why:find("Free memory on device (70.00/80.00 GiB) on startup is less than desired "
                        .. "GPU memory utilization (0.9, 72.00 GiB)", 1, true) ~= nil, true, why)
    end
  end
  -- the ledger's line: its own item, and the margin holds it under V1
  local items = {}
  for _, it in ipairs(kv.report.ledger_items(at("0.11", 5 * GiB), 8192, 1)) do items[it.item] = it end
  check.eq(items.system.bytes, 5 * GiB, "system_memory's own line")
  check.eq(items.margin.bytes, 8 * GiB - 5 * GiB, "V1: the 8 GiB utilization holds back less the 5 held by others")
end

-- documented ledger fields (SCRIPTING.md's table) the coverage run of make test never read
check.eq(l.safety, l.total - l.usable, "safety: what utilization 0.9 keeps back")
check.eq(tostring(l), "kvplan.Ledger (tp 1, pp 1, fits)", "a ledger as text")
local hy = kv.deploy{model = "qwen3-next-80b-a3b", gpu = "h100-sxm", tp = 4, pp = 2}:ledger()
check.eq(string.format("%d %d %d %d %d", hy.tp, hy.pp, hy.stage, hy.stages, hy.layers), "4 2 2 2 24",
         "tp 4, pp 2: the tightest of the two stages holds 24 of the 48 layers")
check.eq(hy.state_bytes > 0, true, "the linear-attention layers' recurrent state")

-- The weights every TP rank holds whole (models.lua replicated_params, the
-- core's kvp_replicated), hand-counted for DeepSeek-V3 at tp 8: the 61 MLA
-- layers' q_a_proj 7168 x 1536 and kv_a_proj_with_mqa 7168 x 576 in fp8 with
-- a 32-bit scale a 128 x 128 block, 61 x 7168 x 2112 = 923467776 bytes +
-- 56364 scales x 4; the routers (58 x 256 x 7168), their score-correction
-- biases (58 x 256) and the norms (61 x (2 x 7168 + 1536 + 512) + 7168) in
-- bf16, 107451904 x 2: whole on each GPU, the rest / 8
do
  local ds = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}
  local R = 923467776 + 56364 * 4 + 107451904 * 2
  check.eq(ds.replicated_bytes, R, "deepseek-v3 replicated bytes")
  local W = ds.model:weight_size()
  local dl = ds:ledger()
  local split = (W - R + 7) // 8
  check.eq(dl.weights - dl.rotary, split + R, "deepseek-v3 tp 8 weights a GPU: (W - R) / 8 + R")
  check.eq(dl.weights - dl.rotary - (W + 7) // 8, split + R - (W + 7) // 8,
           "grown by R x 7/8 against W / 8")
  check.eq(split + R - (W + 7) // 8 > 996000000, true, "about 0.93 GiB more a GPU")
  -- tp 1: all of it on the one GPU, nothing changes
  local one = ds:with{tp = 1, gpu = "h200"}:ledger()
  check.eq(one.weights - one.rotary, W, "tp 1 holds all the weights")
  -- a family whose modules are not read: none
  check.eq(kv.deploy{model = "falcon-40b", gpu = "h100", tp = 2}.replicated_bytes, nil,
           "falcon: not read, none counted")
  -- Qwen3's q_norm and k_norm besides the layer norms, bf16
  local q = kv.deploy{model = "qwen3-32b", gpu = "h100", tp = 2}
  local m = q.model
  check.eq(q.replicated_bytes, (m.layers * (2 * m.hidden + 2 * m.head_dim) + m.hidden) * 2,
           "qwen3 norms")
end

-- resolve_replicated (issue 18/17, brief timepaths): a model whose weight
-- classes add up to more than its params cannot be weighed by class and gets
-- no replicated weights (what the pcall around replicated_params was for:
-- weight_class_params' error); any other error inside replicated_params
-- raises, where the pcall dropped the replicated weights without a word; a
-- deployment computes replicated_params once and gives it to
-- replicated_matmul (it was computed twice).
do
  local Model = kv.models.Model
  local t = kv.models.facts(kv.models.get "qwen3-32b")
  t.id, t.params, t.active = "qwen3-32b-params-1m", 1000000, nil
  local small = kv.models.get(t)
  local ok, why = small:weighs_by_class()
  check.eq(ok, false, "classes above params: not weighed by class")
  assert(why:find("more than params 1000000", 1, true), why)
  local sd = kv.deploy{model = small, gpu = "h100", tp = 2}
  check.eq(sd.replicated_bytes, nil, "no replicated weights for it, and no error")
  check.eq(select(2, pcall(small.weight_class_params, small)):find(why, 1, true) ~= nil, true,
           "weight_class_params raises the same message")
  local orig, calls = Model.replicated_params, 0
  Model.replicated_params = function(self)
    calls = calls + 1
    return orig(self)
  end
  local q = kv.deploy{model = "qwen3-32b", gpu = "h100", tp = 2}
  check.eq(calls, 1, "replicated_params once a deployment")
  check.eq(q.replicated_bytes > 0, true, "its replicated weights")
  Model.replicated_params = function() error("field 'hiden' is nil (a typo inside replicated_params)") end
  local ok2, err = pcall(kv.deploy, {model = "qwen3-32b", gpu = "h100", tp = 2})
  Model.replicated_params = orig
  check.eq(ok2, false, "an error inside replicated_params raises")
  assert(tostring(err):find("hiden", 1, true), tostring(err))
end

-- A draft model's hidden size reaches the core: its passes' all-reduces send
-- tokens x hidden x 2 bytes each (roofline.c kvp_draft_time; issue 18, time
-- paths); draft heads leave it out, the target's
do
  local o = kv.optim
  local base = {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4}
  local sd = kv.deploy(base):with{optim = {o.speculative{draft = "llama-3.2-1b", tokens = 4,
                                                         acceptance = 0.7}}}
  check.eq(sd:spec().speculative.draft_hidden, 2048,
           "the draft model's hidden, 2048")
  local se = kv.deploy(base):with{optim = {o.speculative{heads = "eagle", tokens = 3,
                                                         acceptance = 0.7}}}
  check.eq(se:spec().speculative.draft_hidden, nil, "eagle heads: the target's")
end

-- Their linear layers compute their whole GEMM on every rank (the core's
-- kvp_replicated.matmul, models.lua replicated_matmul), hand-counted for
-- DeepSeek-V3 at tp 8: the a-projections 61 x 7168 x (1536 + 576) =
-- 923467776 and the routers 58 x 256 x 7168 = 106430464 parameters (not the
-- norms or the correction biases), 2 FLOPs each a token, 7/8 of them more
-- a GPU than / 8. An 8192-token prefill, compute-bound, without the dense
-- GEMMs' compute curve (its fraction of peak is the same either way): TTFT
-- grows by 8192 x 2 x 1029898240 x 7/8 FLOPs / (tflops x flop_eff).
do
  local sim = require "kvplan.sim"
  local sim_core = require "kvplan.sim_core"
  local ds = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8}
  local M = 923467776 + 106430464
  check.eq(ds.replicated_matmul, M, "deepseek-v3 replicated matmul parameters")
  local perf = sim.perf(ds)
  perf.gemm_compute = nil
  local spec = ds:spec()
  local t1 = sim_core.time(spec, perf, 8192, 1)
  spec.replicated_matmul = 0
  local t0 = sim_core.time(spec, perf, 8192, 1)
  local want = 8192 * 2 * M * 7 / 8 / (perf.tflops * 1e12 * perf.flop_eff) * 1e3
  check.eq(math.abs((t1.ttft_ms - t0.ttft_ms) - want) < 1e-9 * want, true,
           string.format("TTFT grows by the replicated GEMMs: %.6f ms, hand count %.6f ms",
                         t1.ttft_ms - t0.ttft_ms, want))
  -- tp 1 (a sweep's tp axis keeps the fields): none
  spec.tp, spec.replicated_matmul = 1, M
  local s1 = sim_core.time(spec, perf, 8192, 1)
  spec.replicated_matmul = 0
  check.eq(s1.ttft_ms, sim_core.time(spec, perf, 8192, 1).ttft_ms, "tp 1: no replicated FLOPs")
  -- the sweep's fast path (C axes) reads the same cost as d:time
  local path = os.tmpname()
  kv.sweep{model = "deepseek-v3", gpu = "h200", tp = {4, 8}, context = 8192, concurrency = 1,
           columns = {"tp", "ttft_ms", "tpot_ms"}}:write(path)
  local rows = kv.csv.read(path)
  os.remove(path)
  check.eq(rows[3][1], "8", "the tp 8 row")
  local t = ds:time(8192, 1)
  check.eq(rows[3][2], string.format("%.4f", t.ttft_ms), "sweep ttft_ms = d:time's at tp 8")
  check.eq(rows[3][3], string.format("%.4f", t.tpot_ms), "sweep tpot_ms = d:time's at tp 8")
  -- a family without routers or MLA: its norms are no matmul
  check.eq(kv.deploy{model = "qwen3-32b", gpu = "h100", tp = 2}.replicated_matmul, 0,
           "qwen3 dense: norms only, no replicated matmul")
end

-- The other families' replicated weights (models.lua replicated_params,
-- brief replicated2), hand-counted in bf16 at tp 2 or 4: W / tp for the
-- split part, R whole
do
  local function whole(id, tp, R)
    local d = kv.deploy{model = id, gpu = "h200", tp = tp}
    check.eq(d.replicated_bytes, R, id .. " replicated bytes")
    local W = d.model:weight_size()
    local l = d:ledger()
    check.eq(l.weights - l.rotary, (W - R + tp - 1) // tp + R, id .. " weights a GPU: (W - R) / tp + R")
  end
  -- Gemma 2 9B: four GemmaRMSNorm(3584) a layer x 42 and the final one
  whole("gemma-2-9b", 2, (42 * 4 * 3584 + 3584) * 2)         -- 1211392
  -- Gemma 3 12B: the four of 3840 and q_norm, k_norm of 256, 48 layers
  whole("gemma-3-12b", 2, (48 * (4 * 3840 + 2 * 256) + 3840) * 2) -- 1531392
  -- Phi-4 (LlamaDecoderLayer): two RMSNorm(5120) a layer x 40, the final
  whole("phi-4", 2, (40 * 2 * 5120 + 5120) * 2)              -- 829440
  -- Command-R: one LayerNorm(8192) a layer x 40, the final; fp16
  whole("command-r", 2, (40 * 8192 + 8192) * 2)              -- 671744
  -- gpt-oss-120b: attn.norm and mlp.norm (2880) a layer x 36, the final,
  -- the bf16 router nn.Linear(2880, 128) with its bias a layer, and
  -- FusedMoE's w2_bias, 128 experts x 2880 a layer, whole on every rank
  -- without expert parallelism (Mxfp4MoEMethod's torch.zeros(num_experts,
  -- hidden_size); GptOssModel.load_weights keeps it whole, zeros on ranks >
  -- 0; brief memexact). Its MXFP4 experts have their own layout, so against
  -- the same entry under a family not read: R x 3/4 more a GPU
  local R = (36 * 2 * 2880 + 2880 + 36 * (2880 * 128 + 128) + 36 * 128 * 2880) * 2
  check.eq(R, 53513856, "gpt-oss-120b replicated bytes, hand count")
  local g = kv.deploy{model = "gpt-oss-120b", gpu = "h200", tp = 4}
  check.eq(g.replicated_bytes, R, "gpt-oss-120b replicated bytes")
  local t = {}
  for k, v in pairs(require("kvplan.catalog.models_data")) do
    if v.id == "gpt-oss-120b" then for f, x in pairs(v) do t[f] = x end end
  end
  t.id, t.family, t.aliases = "gpt-oss-120b-unread", "gpt_oss_unread", nil
  local u = kv.deploy{model = kv.model(t), gpu = "h200", tp = 4}
  check.eq(g:ledger().weights - u:ledger().weights, R - R // 4, "gpt-oss-120b tp 4: R x 3/4 more a GPU")
  -- under expert parallelism the loader narrows w2_bias to the rank's
  -- experts (weight[ep_rank_start:ep_rank_end]): not whole, R without it
  local e = kv.deploy{model = "gpt-oss-120b", gpu = "h200", tp = 4, enable_expert_parallel = true}
  check.eq(e.replicated_bytes, R - 36 * 128 * 2880 * 2, "gpt-oss-120b EP: w2_bias narrowed, not whole")
end

-- A Nemotron-H MoE (nemotron_h.py at 00b08dc44519, NemotronHMoE): its gate,
-- GateLinear(hidden, n_routed_experts) = a ReplicatedLinear, and its
-- e_score_correction_bias (n_routed_experts) whole on every rank, each MoE
-- layer, beside the one RMSNorm a layer and norm_f (brief memexact). The
-- catalog's Nemotron-Nano-9B-v2 given 4 MoE layers of 8 experts (the
-- 52 others dense): hand count in bf16 at tp 4
do
  local t = {}
  for _, v in pairs(require("kvplan.catalog.models_data")) do
    if v.id == "nemotron-nano-9b-v2" then for f, x in pairs(v) do t[f] = x end end
  end
  t.id, t.aliases = "nemotron-h-moe-test", nil
  t.experts, t.experts_active, t.moe_intermediate, t.dense_layers = 8, 2, 64, 52
  t.params = t.params + 4 * 8 * 3 * 4480 * 64 + 4 * 8 * 4480 + 4 * 8
  local d = kv.deploy{model = kv.model(t), gpu = "h200", tp = 4}
  local R = (56 * 4480 + 4480 + 4 * 8 * 4480 + 4 * 8) * 2
  check.eq(R, 797504, "nemotron-h moe replicated bytes, hand count")
  check.eq(d.replicated_bytes, R, "nemotron-h moe: the routers and their correction biases whole")
  check.eq(d.replicated_matmul, 4 * 8 * 4480, "nemotron-h moe: the routers' GEMMs whole")
end

-- vLLM's vocabulary padding (models.lua vocab_padding_params, deploy.lua
-- vocab_pad_rule; vocab_parallel_embedding.py at 00db0119c376: pad_vocab_size
-- to a multiple of DEFAULT_VOCAB_PADDING_SIZE = 64, divide(padded, tp_size)
-- rows a rank): hand counts of the four catalog vocabularies not a multiple
-- of 64 (brief memexact)
do
  local function pad(id, tp, bytes)
    local d = kv.deploy{model = id, gpu = "h200", tp = tp}
    check.eq(d.vocab_padding_bytes, bytes, id .. " vocabulary padding bytes")
    local W = d.model:weight_size()
    local l = d:ledger()
    local R = d.replicated_bytes or 0
    check.eq(l.weights - l.rotary, (W + bytes - R + tp - 1) // tp + R,
             id .. " weights a GPU: the padded rows split with the rest")
  end
  -- OPT-66B: 50272 -> 50304, 32 rows x 9216 in fp16, lm_head tied
  pad("opt-66b", 2, 32 * 9216 * 2)             -- 589824
  -- BGE-large (BERT): 30522 -> 30528, 6 rows x 1024 in fp32, no lm_head
  pad("bge-large-en-v1.5", 1, 6 * 1024 * 4)    -- 24576
  -- GPT-3: 50257 -> 50304, 47 rows x 12288 in 16 bits, tied
  pad("gpt-3-175b", 8, 47 * 12288 * 2)         -- 1155072
  -- Whisper's decoder embeds with a plain nn.Embedding (whisper.py at
  -- d1a2e94651cf): 51866 unpadded
  check.eq(kv.deploy{model = "whisper-large-v3", gpu = "h200"}.vocab_padding_bytes, nil,
           "whisper: nn.Embedding, no padding")
  -- a vocabulary of 64 x n pads nothing
  check.eq(kv.deploy{model = "llama-3-8b", gpu = "h200", tp = 2}.vocab_padding_bytes, nil,
           "llama 3: 128256 = 64 x 2004, nothing padded")
  -- an untied model pads its lm_head too: Llama 2's 32000 with one more
  -- token (32001 -> 32064: 63 rows x 4096 each of embed_tokens and lm_head)
  local t = {}
  for _, v in pairs(require("kvplan.catalog.models_data")) do
    if v.id == "llama-2-7b" then for f, x in pairs(v) do t[f] = x end end
  end
  t.id, t.aliases, t.vocab, t.params = "llama-2-7b-32001", nil, 32001, t.params + 2 * 4096
  local u = kv.deploy{model = kv.model(t), gpu = "h200", tp = 2}
  check.eq(u.vocab_padding_bytes, 2 * 63 * 4096 * 2, "untied: embeddings and lm_head padded")
  -- a given weight_bytes is the loaded bytes: no rule
  check.eq(kv.deploy{model = "opt-66b", gpu = "h200", tp = 2, weight_bytes = 1e11}.vocab_padding_bytes,
           nil, "weight_bytes given: no padding added")
end

-- DeepSeek-V3.2's indexer in its vLLM formats (deepseek_v2.py Indexer at
-- 002d6073aa03): wq_b 1536 x 64 x 128 a layer with the checkpoint's
-- quant_config, FP8 with a 32-bit scale a 128 x 128 block; wk (7168 x 128),
-- weights_proj (7168 x 64) and k_norm (2 x 128) in bf16; all of it whole on
-- every GPU at tp 8, beside DeepSeek-V3's replicated part
do
  local d = kv.deploy{model = "deepseek-v3.2", gpu = "h200", tp = 8}
  local wqb = 61 * 1536 * 64 * 128                          -- 767557632
  local fp8 = 61 * 7168 * 2112 + wqb                         -- the a-projections and wq_b
  local scales = 56364 + 61 * (1536 // 128) * (8192 // 128)  -- 56364 + 46848
  local bf16 = 107451904 + 61 * (7168 * 128 + 7168 * 64 + 2 * 128) -- + 83967232
  local R = fp8 + scales * 4 + bf16 * 2
  check.eq(R, 2074276528, "deepseek-v3.2 replicated bytes, hand count")
  check.eq(d.replicated_bytes, R, "deepseek-v3.2 replicated bytes")
  local c = d.model:weight_class_params()
  check.eq(c.other, 107451904 + 83967232, "deepseek-v3.2 'other': V3's and the indexers' wk, weights_proj, k_norm")
  -- the whole model: wq_b in fp8 (+ its scales) where it was bf16, 767370240 bytes less
  local W = d.model:weight_size()
  check.eq(W, 674853625008 - (wqb * 2 - (wqb + 46848 * 4)), "deepseek-v3.2 weights: wq_b in fp8")
  local l = d:ledger()
  check.eq(l.weights - l.rotary, (W - R + 7) // 8 + R, "deepseek-v3.2 tp 8 weights a GPU: (W - R) / 8 + R")
end

-- Llama 4 and Phi-3.5-MoE (models.lua replicated_params, brief replicated3),
-- hand-counted in bf16: R whole on every GPU, the rest split; the routers'
-- GEMMs whole (replicated_matmul)
do
  local function whole(id, tp, R, M)
    local d = kv.deploy{model = id, gpu = "h200", tp = tp}
    check.eq(d.replicated_bytes, R, id .. " replicated bytes")
    check.eq(d.replicated_matmul, M, id .. " replicated matmul parameters")
    local W = d.model:weight_size()
    local l = d:ledger()
    check.eq(l.weights - l.rotary, (W - R + tp - 1) // tp + R, id .. " weights a GPU: (W - R) / tp + R")
  end
  -- Llama 4 Scout (llama4.py at 0121c95efe85): two RMSNorm(5120) a layer x 48,
  -- the final one, and the router ReplicatedLinear(5120, 16) in each of the 48
  -- MoE layers; the weightless qk_norm holds nothing
  whole("llama-4-scout-17b-16e", 4, (48 * 2 * 5120 + 5120 + 48 * 16 * 5120) * 2, 48 * 16 * 5120) -- 8857600
  -- Phi-3.5-MoE (phimoe.py at 01524004c3c9): two LayerNorm(4096) with bias a
  -- layer x 32 and o_proj's RowParallelLinear bias (4096), the final LayerNorm
  -- with its bias, and the gate ReplicatedLinear(4096, 16) a layer
  whole("phi-3.5-moe", 2, (32 * (2 * 2 * 4096 + 4096) + 2 * 4096 + 32 * 16 * 4096) * 2, 32 * 16 * 4096) -- 5521408
  -- Nemotron-Nano-9B-v2 (nemotron_h.py at 00b08dc44519): one RMSNorm(4480)
  -- a layer x 56 (Mamba, MLP and attention alike) and norm_f; no router
  whole("nemotron-nano-9b-v2", 4, (56 * 4480 + 4480) * 2, 0)   -- 510720
  -- Qwen3-Next-80B-A3B (qwen3_next.py at 002d6073aa03): two RMSNorm(2048) a
  -- layer x 48, the final one, q_norm and k_norm (256) in the 12 full-attention
  -- layers, the gate ReplicatedLinear(2048, 512) and shared_expert_gate
  -- ReplicatedLinear(2048, 1) in each of the 48 MoE layers
  whole("qwen3-next-80b-a3b", 4, (48 * 2 * 2048 + 2048 + 12 * 2 * 256 + 48 * 512 * 2048 + 48 * 2048) * 2,
        48 * 512 * 2048 + 48 * 2048)                          -- 101269504, 50429952
end
