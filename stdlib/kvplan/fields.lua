-- stdlib/kvplan/fields.lua: the deployment's fields, declared once: what
-- kv.deploy{} takes, the key=value arguments of the commands that name them,
-- the serving engines' spellings and the docs' option table derive from it.
-- Stdlib layer: data and the checks of one value; kv.deploy resolves the
-- deployment (deploy.lua), the binding checks the table it hands the core.
--
-- Each field: name; type (count, bytes, fraction, number, boolean, string,
-- enum with its values, table); unit; default (a value, or words saying whose
-- default); min (counts, bytes, numbers); max (counts: the core's bound,
-- engine/core/deploy.c); one line of meaning; the engines'
-- spellings accepted for it (vllm, sglang, trtllm: a name or a list; true:
-- the field is spelled as that engine spells it); spec: the key of the table
-- handed to the core when it is not the field's own name (Deployment:spec,
-- the binding's deploy_keys; false: kv.deploy resolves it in Lua, no key of
-- its own); sweep: a list of it is an axis the core may loop itself
-- (sweep.lua, the binding's axis fields), by that key; every_command: any
-- script's kv.options takes it, and then every deployment of the run
-- (options.lua, deploy.run_defaults).
-- The engines' names are those of vLLM's EngineArgs (vllm/engine/arg_utils.py,
-- read at vllm-project/vllm 99d7eb5d6a51: model, tensor_parallel_size,
-- kv_cache_dtype, quantization, ...), SGLang's ServerArgs
-- (python/sglang/srt/server_args.py, read at sgl-project/sglang 001067fffe33:
-- model_path, tp_size, pp_size, context_length, kv_cache_dtype, quantization,
-- mem_fraction_static, max_running_requests, max_total_tokens,
-- chunked_prefill_size, page_size) and TensorRT-LLM's KvCacheConfig
-- (free_gpu_memory_fraction, tokens_per_block, max_tokens), trtllm-serve
-- (tensorrt_llm/commands/serve.py, read at NVIDIA/TensorRT-LLM 4c05a74891e4:
-- its MODEL argument, --tp_size, --pp_size, --max_seq_len, --max_batch_size,
-- --max_num_tokens, --kv_cache_free_gpu_memory_fraction, --backend) and
-- trtllm-bench (kv_cache_free_gpu_mem_fraction). Dashes count as underscores.
-- The first spelling of a list is the one kv.launch writes (launch.lua).

local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local engines3 = {"vllm", "sglang", "trtllm"}

M.list = {
  -- what runs where
  {name = "model", type = "string", default = "required", vllm = true, sglang = "model_path",
   trtllm = true, meaning = "the model: a catalog name or alias, a table or a Model"},
  {name = "gpu", type = "string", default = "required (or gpu_memory)", spec = false,
   meaning = "the GPU: a catalog name or alias, a table or a GPU"},
  {name = "gpu_memory", type = "bytes", unit = "bytes per GPU", min = 1,
   default = "the GPU's visible memory", sweep = true,
   meaning = "the memory of one GPU, overriding the catalog's"},
  {name = "tp", type = "count", unit = "GPUs", min = 1, default = 1, vllm = "tensor_parallel_size",
   sglang = "tp_size", trtllm = "tp_size", meaning = "tensor-parallel size"},
  {name = "pp", type = "count", unit = "stages", min = 1, max = require("kvplan.core").max_pp, default = 1,
   vllm = "pipeline_parallel_size", sglang = "pp_size", trtllm = "pp_size", meaning = "pipeline-parallel stages"},
  {name = "kv", type = "string", default = "auto", vllm = "kv_cache_dtype", sglang = "kv_cache_dtype",
   meaning = "KV cache format; auto: as the engine does with the checkpoint (deploy.auto_kv)"},
  {name = "weights", type = "string", default = "the checkpoint's", vllm = "quantization",
   sglang = "quantization",
   meaning = "weight format (bf16, fp8, int4-g128, ...)"},
  {name = "weight_bytes", type = "bytes", unit = "bytes (all GPUs)", min = 0,
   default = "params x format", sweep = true,
   meaning = "total weight bytes, overriding params x format"},
  -- the engine's budget rule
  {name = "budget", type = "enum", values = engines3, default = "vllm",
   meaning = "whose rule sizes the KV cache"},
  {name = "engine", type = "enum", values = engines3, default = "none (the budget rule alone)",
   spec = false, meaning = "the engine itself: its budget rule, defaults and startup check"},
  {name = "engine_version", type = "string",
   default = "the newest modelled, as latest: vLLM 0.29, SGLang 0.5, TensorRT-LLM 1.0",
   spec = false, meaning = "the engine's release whose defaults apply (0.11 reproduces vLLM 0.11; 0.5, 1.0, latest; @YYYY-MM-DD: the release of that date)"},
  {name = "utilization", type = "fraction", default = "vLLM's release: 0.92 (0.20 on, the default release), 0.9 before; TensorRT-LLM 0.9; SGLang: by tp or the GPU",
   sweep = true, vllm = "gpu_memory_utilization", sglang = "mem_fraction_static",
   trtllm = {"free_gpu_memory_fraction", "kv_cache_free_gpu_memory_fraction",
             "kv_cache_free_gpu_mem_fraction"},
   meaning = "fraction of the GPU memory the engine may use"},
  {name = "activation", type = "bytes", unit = "bytes per GPU", min = 0, default = "predicted",
   sweep = true, meaning = "activation peak of the profiling run"},
  {name = "overhead", type = "bytes", unit = "bytes per GPU", min = 0, default = "predicted",
   sweep = true, meaning = "non-torch memory: CUDA context, NCCL"},
  -- memory something other than the engine holds on the device; no engine
  -- has a flag for it (vLLM's error says "reduce GPU memory used by other
  -- processes"): each budget rule sees it as its engine does (ledger.c,
  -- starts.c; docs/predictions.md "Memory others hold")
  {name = "system_memory", type = "bytes", unit = "bytes per GPU", min = 0, default = 0,
   meaning = "memory others hold on the GPU at startup: the OS and page cache on unified memory (DGX Spark, Jetson), other processes"},
  {name = "block", type = "count", unit = "tokens", min = 1,
   default = "16 (SGLang 1, TensorRT-LLM 64, 32 on its PyTorch backend)", sweep = true,
   vllm = "block_size", sglang = "page_size", trtllm = "tokens_per_block",
   meaning = "tokens per KV cache block (page)"},
  {name = "max_num_batched_tokens", type = "count", unit = "tokens", min = 1,
   default = "1 (steady decode); profiling: the engine's", sweep = true, vllm = true,
   sglang = "chunked_prefill_size", trtllm = "max_num_tokens", meaning = "tokens of one engine step"},
  {name = "max_model_len", type = "count", unit = "tokens", min = 0, auto = true,
   default = "the model's max_context", sweep = true, vllm = true, sglang = "context_length",
   trtllm = "max_seq_len",
   meaning = "longest request; auto (or -1, vLLM 0.14 on): the longest the KV memory holds"},
  {name = "name", type = "string", default = "none", spec = false, meaning = "a label for reports"},
  -- the engine's profiling run (predicted activation and non-torch memory)
  {name = "max_num_seqs", type = "count", unit = "sequences", min = 1,
   default = "the engine's (caps concurrency when it is named)", sweep = true, vllm = true,
   sglang = "max_running_requests", trtllm = "max_batch_size",
   meaning = "most sequences an engine step runs"},
  {name = "usage", type = "enum", values = {"server", "offline"}, default = "server", spec = false,
   meaning = "vLLM's usage context, which picks its defaults"},
  {name = "enforce_eager", type = "boolean", default = false, spec = false, vllm = true,
   sglang = "disable_cuda_graph",
   meaning = "no CUDA graphs (vLLM: and no compilation)"},
  -- vLLM V0's --max-seq-len-to-capture (engines.lua
  -- vllm_v0_max_seq_len_to_capture); V1 ignores it, 0.11 removed it (deploy.lua)
  {name = "max_seq_len_to_capture", type = "count", unit = "tokens", min = 1,
   default = "the release's (vLLM V0: 8192)", spec = false, vllm = true,
   meaning = "vLLM V0: a decode step whose longest sequence is longer runs without its CUDA graph (V1 ignores it; removed in 0.11)"},
  -- vLLM V1's --async-scheduling (vllm-project/vllm#19970, "Implement Async
  -- Scheduling", 2025-06-23; first released in 0.10.0, the 0.10 row), on by
  -- default from the 0.20 rows (engines.lua async_scheduling); refused on the
  -- rows before 0.10, on a V0 engine and under other budgets (deploy.lua)
  {name = "async_scheduling", type = "boolean", default = "the release's (vLLM 0.20 on: true)",
   spec = false, vllm = true,
   meaning = "vLLM's --async-scheduling (0.10 on, V1): the scheduler plans the next step while the GPU runs this one, hiding the host's time a step"},
  -- SGLang's --disable-overlap-schedule (sim.lua sglang_overlap, which also
  -- turns it off where SGLang does: pp > 1, speculative decoding, a
  -- multimodal model before 0.4.6); refused under other budgets (deploy.lua)
  {name = "disable_overlap_schedule", type = "boolean", default = false, spec = false, sglang = true,
   meaning = "SGLang: no overlap scheduler, so the host's time a step (launches, the loop's work) adds to it"},
  {name = "flashinfer_sampler", type = "boolean", default = "the release's (vLLM 0.21 on: true)",
   spec = false,
   meaning = "FlashInfer's top-k/top-p sampler instead of the sort path"},
  {name = "mxfp4_backend", type = "enum",
   values = {"marlin", "triton", "flashinfer", "flashinfer_sm90", "checkpoint"},
   default = "by the GPU's compute capability and the release", spec = false,
   meaning = "the kernel whose layout MXFP4 experts are loaded in"},
  {name = "limit_mm_per_prompt", type = "count", unit = "images", min = 0, default = "vLLM's",
   spec = false, vllm = true, meaning = "images a prompt in a vision tower's dummy run; 0: none"},
  {name = "skip_mm_profiling", type = "boolean", default = false, spec = false, vllm = true,
   meaning = "no encoder run in the profiling"},
  {name = "backend", type = "enum", values = {"pytorch", "tensorrt"}, default = "the release's",
   spec = false, trtllm = true, meaning = "TensorRT-LLM's backend"},
  -- TensorRT-LLM's moe_config.backend (extra_llm_api_options), the two of its
  -- MoE kernels kvplan has a curve of (sim.expert_kernel)
  {name = "moe_backend", type = "enum", values = {"cutlass", "trtllm"},
   default = "TensorRT-LLM's (CUTLASS for NVFP4 experts)", spec = false,
   meaning = "TensorRT-LLM's moe_config.backend: which MoE kernel's curve NVFP4 experts on B200 and GB200 read (cutlass; trtllm, its trtllm-gen kernels)"},
  {name = "fail_fast_on_attention_window_too_large", type = "boolean", default = false,
   trtllm = true, meaning = "refuse to start when one max_seq_len sequence does not fit"},
  -- time (kvplan.sim)
  {name = "efficiency", type = "table", default = "by GPU", spec = false,
   meaning = "{memory =, compute =, link =, experts =}: fractions of the GPU's rates reached (experts: of the routed experts' roofline), each a flat factor in place of the published curve (the dense GEMMs' by M, the routed experts' by tokens per expert)"},
  {name = "perf", type = "table", default = "the GPU's", spec = false,
   meaning = "GPU rate overrides for step times"},
  {name = "profile", type = "string", default = "none", spec = false, every_command = true,
   meaning = "a profile file of `kvplan calibrate` ('-': standard input): its fitted factors as efficiency and perf"},
  {name = "profile_any", type = "boolean", default = false, spec = false,
   meaning = "apply a profile fitted on another GPU or engine"},
  {name = "price_per_hour", type = "number", unit = "USD per GPU hour", min = 0,
   default = "the GPU catalog's", spec = false, meaning = "price of one GPU for usd_per_mtok"},
  -- optimizations (kvplan.optim sets them; see each constructor)
  {name = "optim", type = "table", default = "none", spec = false,
   meaning = "an optimization or a list of them (kv.optim)"},
  {name = "max_kv_tokens", type = "count", unit = "tokens", min = 0, default = "none", sweep = true,
   sglang = "max_total_tokens", trtllm = "max_tokens",
   meaning = "TensorRT-LLM's max_tokens: a cap on the pool"},
  {name = "allocation", type = "enum", values = {"paged", "contiguous"}, default = "paged",
   meaning = "how requests get KV memory"},
  {name = "kv_recent", type = "count", unit = "tokens", min = 0, default = "none",
   meaning = "recent tokens kept in kv_full (KIVI)"},
  {name = "kv_full", type = "string", default = "the model's activation dtype",
   meaning = "format of the kv_recent window"},
  {name = "evict", type = "table", default = "none",
   meaning = "{sinks, recent, keep, layers}: KV eviction"},
  {name = "speculative", type = "table", default = "none",
   meaning = "{tokens, draft | heads, ...}: speculative decoding"},
  {name = "prefix", type = "count", unit = "tokens", min = 0, default = "none", sweep = true,
   meaning = "tokens of a prefix every request shares"},
  {name = "samples", type = "count", unit = "sequences", min = 0, default = "none", sweep = true,
   meaning = "sequences sampled a request (parallel sampling)"},
  {name = "prompt", type = "count", unit = "tokens", min = 0, default = "none", sweep = true,
   meaning = "prompt tokens the samples share"},
  {name = "output", type = "count", unit = "tokens", min = 0, default = "none", sweep = true,
   meaning = "output tokens of each sample"},
  {name = "offload", type = "table", default = "none", spec = "host_bytes",
   meaning = "{host, pcie_gbps}: KV offloaded to host memory"},
  {name = "lengths", type = "table", default = "none",
   meaning = "a request-length distribution (kv.workload.uniform{...})"},
  -- vLLM's switches and overrides, by vLLM's names (engine/core/vllm_kv.c)
  {name = "disable_hybrid_kv_cache_manager", type = "boolean", default = false, vllm = true,
   meaning = "one KV cache group for every layer"},
  {name = "num_gpu_blocks_override", type = "count", unit = "blocks", min = 1, default = "none",
   vllm = true, meaning = "the KV cache's blocks, as given"},
  -- 0 is vLLM's unset: gpu_worker.py determine_available_memory takes the
  -- value only when it is truthy ("if kv_cache_memory_bytes :=
  -- self.cache_config.kv_cache_memory_bytes:", vllm/v1/worker/gpu_worker.py
  -- at 35d5cda123ec), else profiles with gpu_memory_utilization
  {name = "kv_cache_memory_bytes", type = "bytes", unit = "bytes per GPU", min = 0,
   default = "none", vllm = true,
   meaning = "every GPU's KV memory, utilization ignored; 0 as unset, as vLLM reads it"},
  {name = "worker_gpu_memory", type = "table", default = "none", spec = "stage_gpu_bytes",
   meaning = "tp x pp memories in vLLM's rank order: workers with unequal memory"},
  {name = "decode_context_parallel_size", type = "count", unit = "ranks", min = 1, default = 1,
   vllm = true, meaning = "KV tokens split over that many ranks of the TP group"},
  {name = "data_parallel_size", type = "count", unit = "ranks", min = 1, default = 1, vllm = true,
   sglang = "dp_size",
   meaning = "DP ranks, each its own requests and KV (vLLM: engines of tp x pp GPUs, a MoE's routed experts cut across data_parallel_size x tp; SGLang: replicas, or ranks inside the tp GPUs with enable_dp_attention)"},
  {name = "enable_expert_parallel", type = "boolean", default = false, vllm = true,
   meaning = "MoE: experts split, not sharded"},
  {name = "enable_dp_attention", type = "boolean", default = false, spec = false, sglang = true,
   meaning = "SGLang: the data_parallel_size ranks inside the tp GPUs, attention over tp / data_parallel_size"},
  {name = "ep_size", type = "count", unit = "ranks", min = 1, default = 1, spec = false,
   sglang = "expert_parallel_size", trtllm = "moe_expert_parallel_size",
   meaning = "SGLang and TensorRT-LLM (moe_ep_size): ranks holding whole experts, each split over tp / ep_size"},
  {name = "block_stride_alignment", type = "bytes", unit = "bytes", min = 0, default = "none",
   meaning = "bytes an MLA backend rounds each block up to"},
  {name = "mamba_cache_mode", type = "enum", values = {"none", "align", "all"}, default = "none",
   vllm = true, meaning = "Mamba states kept for prefix caching"},
  {name = "mamba_block_size", type = "count", unit = "tokens", min = 1,
   default = "the cache's block", vllm = true, meaning = "the Mamba chunk the block aligns to"},
  {name = "prefill_context_parallel_size", type = "count", unit = "ranks", min = 1, default = 1,
   vllm = true, meaning = "more ranks of tp x pp GPUs, each holding 1 / p of a request's KV"},
  {name = "allow_chunked_local_attn_with_hybrid_kv_cache", type = "boolean", default = false,
   spec = false, meaning = "vLLM's environment variable of that name in capitals"},
  {name = "kv_cache_groups", type = "table", default = "vLLM's own grouping", spec = false,
   meaning = "vLLM's KV cache groups by hand: {{layers = {1, 3}, block = 32}, ...}"},
  {name = "vllm_use_v1", type = "boolean", default = "the release's engine", spec = false,
   meaning = "vLLM's environment variable VLLM_USE_V1: false runs the V0 engine (0.8 to 0.10); unset, 0.8-0.10 fall back to V0 on a GPU below compute capability 8.0 or for an encoder-decoder model, 0.8 also for fp8 KV off Hopper and off CUDA"},
  -- vLLM's LoRA adapters (vllm/config/lora.py LoRAConfig, engine/core/predict.c
  -- kvp_lora_layer_bytes)
  {name = "enable_lora", type = "boolean", default = false, spec = false, vllm = true,
   meaning = "LoRA adapters: max_loras slots of max_lora_rank in every layer, loaded with the weights"},
  {name = "max_loras", type = "count", unit = "adapters", min = 1, default = 1, spec = false,
   vllm = true, meaning = "LoRA adapters one batch may use: the GPU's slots (with enable_lora)"},
  {name = "max_lora_rank", type = "count", unit = "rank", min = 1, default = 16, spec = false,
   vllm = true, meaning = "the largest adapter rank, every slot's: 1, 8, 16, 32, 64, 128, 256, 320 or 512 (with enable_lora)"},
  {name = "max_cpu_loras", type = "count", unit = "adapters", min = 1, default = "max_loras",
   spec = false, vllm = true, meaning = "adapters cached in host memory, at least max_loras (no GPU memory; with enable_lora)"},
  {name = "lora_dtype", type = "enum", values = {"auto", "float16", "bfloat16"}, default = "auto",
   spec = false, vllm = true, meaning = "the slots' dtype; auto: the model's (with enable_lora)"},
  {name = "fully_sharded_loras", type = "boolean", default = false, spec = false, vllm = true,
   meaning = "LoRA A of column layers and B of row layers split over tp too (with enable_lora)"},
}

-- Keys of the core's table that kv.deploy derives rather than takes
-- (Deployment:spec): a stage's GPU memory and activation, the MoE experts'
-- bytes, the release's log and startup-check rules, whether the engine is named, how the
-- reserved memory was predicted.
M.derived = {"stage_activation_bytes", "moe_experts", "expert_bytes",
             "sglang_attn_dp", "sglang_ep", "attn_bytes", "whole_bytes", "sglang_replicas",
             "replicated_params", "replicated_shards", "replicated_cols", "replicated_bytes",
             "replicated_matmul",
             "vllm_log_tokens_from_concurrency", "vllm_check_override", "vllm_check_null_block",
             "vllm_block_grain", "vllm_max_model_len_auto", "vllm_mamba_seqs_check",
             "kv_cache_group_of", "kv_cache_group_blocks",
             "engine_named", "engine_rule", "vllm_lora", "vllm_v0_blocks",
             "vllm_mla_entry_align", "vllm_rotary_bytes", "sglang_alloc_bytes",
             "vllm_system_rule"}

--- The key of field f in the core's deployment table, or nil (resolved in Lua).
function M.key(f)
  if f.spec == false then return nil end
  return f.spec or f.name
end

--- The field named `name` (a registry row), or nil.
M.by_name = {}
--- Every field's name: a set (kv.deploy's keys).
M.names = {}
--- The engines' spellings: alias -> field name (deploy.rename).
M.aliases = {}
for _, f in ipairs(M.list) do
  M.by_name[f.name], M.names[f.name] = f, true
  for _, e in ipairs(engines3) do
    local a = f[e]
    for _, n in ipairs(type(a) == "table" and a or {a}) do
      if type(n) == "string" then M.aliases[n] = f.name end
    end
  end
end

local function quoted(values)
  local q = {}
  for i, v in ipairs(values) do q[i] = "'" .. v .. "'" end
  if #q == 1 then return q[1] end
  return table.concat(q, ", ", 1, #q - 1) .. " or " .. q[#q]
end

--- One line of a command's --help for registry field f under argument
--- name: its meaning, its type (an enum's values), and the engines' own
--- spellings of it, each once.
function M.help_line(name, meaning, f)
  local kind = f.type == "enum" and table.concat(f.values, "|") or f.type
  local also = {}
  for _, e in ipairs(engines3) do
    local n = f[e]
    for _, x in ipairs(type(n) == "table" and n or {n}) do
      if type(x) == "string" and x ~= f.name and not also[x] then also[#also + 1], also[x] = x, true end
    end
  end
  return string.format("  %-24s %s; %s%s", name, meaning, kind,
                       #also > 0 and ("; also " .. table.concat(also, ", ")) or "")
end

--- A command's --help lines of its arguments {name, default, meaning,
--- field[, default shown]} appended to lines: a registry field's by
--- help_line, another's with its default (nil: required, "": none, a list
--- joined by commas).
function M.argument_lines(lines, arguments)
  for _, a in ipairs(arguments) do
    if a[4] == nil then
      local v = a[2]
      if type(v) == "table" then
        local t = {}
        for i, x in ipairs(v) do t[i] = tostring(x) end
        v = table.concat(t, ",")
      end
      v = v == nil and "required" or v == "" and "none" or tostring(v)
      lines[#lines + 1] = string.format("  %-24s %s (default: %s)", a[1], a[3], a[5] or v)
    else
      lines[#lines + 1] = M.help_line(a[1], a[3], a[4])
    end
  end
end

--- Check value v of field f (a registry row) by its type and bounds, the
--- message as kv.deploy and the core give it ("field 'tp' must be ...").
--- Returns the value (bytes as an integer).
function M.check(f, v)
  local t, name = f.type, f.name
  if f.auto and (v == "auto" or v == -1) then return v end
  if t == "count" then
    v = util.count(v, name, f.min)
    if f.max and v > f.max then util.raise("field '%s' must be at most %d, got %d", name, f.max, v) end
    return v
  elseif t == "bytes" then
    local b = units.bytes(v, name)
    if f.min and b < f.min then
      util.raise("field '%s' must be > 0 bytes, got %s", name, util.shown(v))
    end
    return b
  elseif t == "fraction" then
    if type(v) ~= "number" or not (v > 0 and v <= 1) then
      util.raise("field '%s' must be in (0, 1], got %s", name, util.shown(v))
    end
  elseif t == "number" then
    if type(v) ~= "number" or not (v >= (f.min or -math.huge) and v < math.huge) then
      util.raise("field '%s' must be a number >= %s, got %s", name, util.shown(f.min), util.shown(v))
    end
  elseif t == "boolean" then
    if type(v) ~= "boolean" then
      util.raise("field '%s' must be true or false, got %s", name, util.shown(v))
    end
  elseif t == "enum" then
    for _, x in ipairs(f.values) do if v == x then return v end end
    util.raise("field '%s' must be %s, got '%s'", name, quoted(f.values), util.escape(util.shown(v), 64))
  end
  return v
end

return M
