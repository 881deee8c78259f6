-- stdlib/kvplan/engines.lua: engine versions and the constants that decide
-- what an engine reserves at startup: release rows, non-torch constants,
-- SGLang's fractions, TensorRT-LLM's defaults, MXFP4 layouts by kernel, the
-- profiling run's settings.
-- Stdlib layer: tables users can read and override; kv.deploy (deploy.lua)
-- resolves them into a deployment's engine rule and every prediction's
-- arithmetic is the core's (engine/core/predict.c kvp_predict_deploy).
--
-- Every row cites the engine file it was read from. vLLM was read at
-- vllm-project/vllm 35d5cda123ec (main, late 2025) and 0012cf691b7e (V1,
-- early 2025); the release each branch of a default belongs to is stated
-- where the file's history was not available to pin it, as an assumption.

local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local GiB = units.GiB
local MiB = units.MiB

-- vLLM engine versions modelled. Fields:
--   v1          the V1 engine (vllm/v1/...); else V0 (vllm/worker/...)
--   eager       the profiling forward runs eagerly (V0 has no torch.compile;
--               V1 compiles by default, enforce_eager turns it off)
--   big_seqs    max_num_seqs on a GPU of >= 70 GiB that is not an A100
--   moe_cache13 fused_experts shares intermediate caches 1 and 3
--   nccl_counted the memory snapshot that starts the budget precedes the
--               distributed init, so NCCL and custom all-reduce buffers count
--               as non-torch memory (V0 worker.py init_device; V1 before the
--               "take memory snapshot after NCCL is initialized" change,
--               gpu_worker.py init_device at 35d5cda)
--   chunked_hybrid the hybrid KV cache manager groups chunked local
--               attention layers by default (false: vllm/config/vllm.py turns
--               it off for them unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_
--               HYBRID_KV_CACHE is set: vllm-project/vllm#21761, merged
--               2025-07-28, first released in 0.10.1, so the 0.10 row stands
--               for 0.10.1 on; #29627 turned the default on again, assumed
--               here before 0.20); nil: not modelled for the version
--   logits_only V1's profile_run computes the logits but runs no dummy
--               sampler (0.7.x; the sampler run came with 0.8: predict.c)
--   context_counted non-torch = all used GPU memory - torch's, after the
--               profile run and empty_cache, so the CUDA context and other
--               processes count too: V0 worker.py determine_num_available_
--               blocks of 0.6.0-0.6.4 (non_torch_allocations = mem_get_info's
--               used - memory_stats' allocated_bytes.all.current; the line
--               "Memory profiling results: total_gpu_memory=...
--               memory_usage_post_profile=... non_torch_memory=..." it prints)
--               and V1 gpu_worker.py determine_available_memory at
--               0012cf691b7e (0.7). vllm-project/vllm#10511 (merged 2024-12,
--               first in 0.6.5) replaced V0's by a baseline taken at
--               init_device, after the context exists; the 0.6 row keeps the
--               0.6.0-0.6.4 formula (0.6.5 and 0.6.6 are not told apart)
--   nccl_runtime NCCL connects an algorithm's channels at the first
--               collective that uses it, which may follow the snapshot:
--               NCCL 2.22 and later do so with cuMem on (src/init.cc at
--               v2.22.3-1: runtimeConn = cuMemSupport && RuntimeConnect),
--               and vLLM stopped forcing NCCL_CUMEM_ENABLE=0 with
--               vllm-project/vllm#24141 (set since #5091 for NCCL 2.19's
--               cuMem overhead, "resolved" in 2.22.3); the rows from 0.11 on.
--               Only the non-torch range's high end takes those buffers
--               (which algorithms vLLM's one-element warm-up all-reduce
--               connected before the snapshot is not known)
--   async_scheduling the scheduler plans the next step while the GPU runs this
--               one, so the host's work between steps (graph launch,
--               bookkeeping) costs no GPU time (vllm/config/vllm.py turns
--               SchedulerConfig.async_scheduling on when it is left unset,
--               vllm-project/vllm#27614, the default of the 0.14 releases on);
--               nil: the engine waits for the host between steps. A
--               deployment's own async_scheduling (--async-scheduling,
--               vllm-project/vllm#19970, V1 from 0.10.0) wins (deploy.lua,
--               sim.host_waits)
--   chunked_tokens V0's max_num_batched_tokens with chunked prefill: 512 in
--               the 0.6 releases (vllm/config.py SchedulerConfig.__init__ at
--               v0.6.0: "the values that have the best balance between ITL
--               and TTFT on A100"), 2048 once _DEFAULT_MAX_NUM_BATCHED_TOKENS
--               replaced it (0.7 modelled; 0.6.5 and 0.6.6 are not told
--               apart from 0.6.0-0.6.4 here)
--   hybrid_manager V1's hybrid KV cache manager puts layers of more than one
--               KV type in their own KV cache groups (vllm-project/vllm#17996,
--               "[v1] Hybrid Memory Allocator": vllm/v1/core/
--               kv_cache_coordinator.py HybridKVCacheCoordinator, absent from
--               the v0.9.0 API reference, docs.vllm.ai/en/v0.9.0/api/vllm/v1/
--               core, present in v0.9.2's; 0.9.1 and 0.9.2 are modelled as
--               0.9.0). false: one KV type, sliding-window and chunked layers
--               beside full attention hold every token (vllm-project/vllm
--               #14097: "For models with global attention + sliding window
--               attention, still regard as global-attention-only model in kv
--               cache manager"; V0's block manager has one block table per
--               sequence for all layers)
--   dcp_hybrid  false: decode context parallelism beside recurrent layers is
--               refused (vllm/v1/core/kv_cache_coordinator.py
--               HybridKVCacheCoordinator at v0.10.2: assert dcp_world_size ==
--               1, "DCP not support hybrid attn now.", docs.vllm.ai/en/v0.10.2
--               API reference; v0.14.1's has no such assertion and later
--               sources keep Mamba groups at dcp 1; the 0.11 row, for 0.11 to
--               0.19, allows it: 0.11 to 0.13 were not read)
--   hidden_group the hidden-state cache of extract_hidden_states is its own KV
--               cache group beside a hybrid target (vllm-project/vllm#39949,
--               merged 2026-04-15, after the 0.19 releases: assumed first in
--               0.20); before it the method's KV connector turns the hybrid
--               KV cache manager off (kv_transfer_config, vllm/config/vllm.py)
--   check_override the startup check (_check_enough_kv_cache_memory) and its
--               estimated maximum model length plan against
--               num_gpu_blocks_override blocks when it is set, not the
--               measured KV memory (vllm-project/vllm#41069, "[Core] Account
--               for num_gpu_blocks_override in max_model_len checks", merged
--               2026-04-28, after the 0.20 releases that brought DeepSeek-V4
--               (vllm-project/vllm#40778, 2026-04-24): assumed first in 0.21)
--   flashinfer_sampler V1's top-k/top-p sampler is FlashInfer's unless
--               VLLM_USE_FLASHINFER_SAMPLER=0 (vllm-project/vllm#40376, "[Perf]
--               Enable FlashInfer top-k/top-p sampler by default", merged
--               2026-04-29 as b92ef9ec5a04, the week of #41069: assumed
--               first in 0.21 too), FlashInfer being a dependency of the CUDA
--               wheel since #26443 (2025-10-08). nil: the PyTorch sort path.
--               Between them #26859 (2025-10-15) had the sampler off unless
--               set; before it V1 took FlashInfer's whenever FlashInfer was
--               installed (topk_topp_sampler.py: "In V1, None means True",
--               #11394), but FlashInfer was an optional install then
--               (`vllm[flashinfer]`, #21959), so a pip-installed 0.7-0.11.0
--               sorts: the corpus logs of 0.8-0.11 that print no sampler
--               line have the sort path's activation (a log's own
--               "Using FlashInfer for top-p & top-k sampling" wins)
--   mamba_seqs_check a model with Mamba (recurrent state) layers refuses to
--               start when max_num_seqs exceeds the pool's blocks under full
--               CUDA graphs ("max_num_seqs (N) exceeds available Mamba cache
--               blocks (M)": vllm-project/vllm#38270, merged 2026-03-26,
--               replacing #37416's silent cap of the capture sizes; still the
--               rule on main in #49064, 2026-07-22, and #55148, 2026-09-03).
--               Its first release is not pinned (vllm-project/recipes#551
--               saw 0.17-0.19 fail earlier for another reason): assumed from
--               the 0.20 row, the first modelled after the merge
--   block_grain a model of attention and Mamba layers raises its block in
--               multiples of max(the attention kernel's alignment, the given
--               --block-size), so a given block of 32 grows in steps of 32
--               (vllm/platforms/interface.py _align_hybrid_block_size at
--               c77619938d1c: kernel_block_alignment_size = max(min of the
--               backend's supported kernel block sizes, cache_config.block_size);
--               moved there from HybridAttentionMambaModelConfig, whose
--               alignment was 16, or 64 for MLA, by vllm-project/vllm#37467,
--               opened 2026-03-18, its rival #37665 closed 2026-04-22 "as part
--               of #37467"; vllm-project/vllm#41037, 2026-04-27, logs block 32
--               raised to 4192 on Nemotron-3-Nano at TP 1, where a grain of 16
--               gives 4176). Its first release is not pinned: assumed from the
--               0.20 row (v0.20.0 of 2026-04-27 was tagged 30 commits behind
--               main), 0.14 to 0.19 keeping the grain of 16
--   check_null_block both plan against one pool block less, the null block
--               BlockPool holds back (vllm-project/vllm#47272, merged
--               2026-08-20 as 76fb6d210a57: check_memory = avail_mem -
--               _pool_bytes_per_block(groups) in get_kv_cache_configs; not in
--               v0.28.0, first tagged v0.28.1rc0 and v0.29.0rc1; its tests:
--               tests/v1/core/test_kv_cache_utils.py
--               test_kv_cache_reserves_null_block_for_max_model_len)
--   utilization the default of --gpu-memory-utilization (CacheConfig.
--               gpu_memory_utilization) a deployment without one takes: 0.9
--               until vllm-project/vllm#38284 ("[Startup][UX] Enable CUDAGraph
--               memory profiling by default", opened 2026-03-26) raised it to
--               0.92 beside turning VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on
--               ("correspondingly increases the default
--               `--gpu-memory-utilization` to 0.92"); on main by 2026-04-24
--               (vllm/entrypoints/llm.py at 21792520e727, eugr/spark-vllm-
--               docker#210), listed in v0.20.0's release notes (2026-04-27;
--               the tag then 30 commits behind main) and the 0.20 baseline of
--               noonghunna/club-3090; vllm/config/cache.py at 002f10e0cfa1
--               "Field(default=0.92, gt=0, le=1)", docs.vllm.ai/en/stable/cli/
--               serve. So 0.92 from the 0.20 row on. Against it: the PR says
--               the switch was "slated for ... v0.21" and vLLM's own line says
--               "CUDA graph memory profiling is enabled (default since
--               v0.21.0)"; the 0.20.x wheels' config was not read. The CUDA
--               graph estimate the same PR subtracts is not modelled
--               (docs/predictions.md)
--   cudagraph_estimate the same PR's other half, from the same row: V1 not
--               enforce_eager takes an estimate of its CUDA graphs' memory
--               off the KV budget (gpu_worker.py determine_available_memory:
--               requested_memory - non_kv_cache_memory -
--               cudagraph_memory_estimate_applied). The estimate is measured:
--               gpu_model_runner.py profile_cudagraph_memory captures the
--               first two graphs of each mode (largest first) with a small
--               KV cache, first + max(second, 1 MiB) x (graphs - 1), the
--               largest first capture over the modes plus the others
--               (vllm-project/vllm#30515; #45178 quotes it; #51590 proposes
--               capturing every graph). Not derivable from kvplan's inputs:
--               the ledger's margin says kvplan's KV budget is high by it,
--               validate takes the logged figure ("Estimated CUDA graph
--               memory: N GiB total") off where the log says it was applied
-- vLLM V0's max_seq_len_to_capture when unset: 8192 (EngineArgs
-- max_seq_len_to_capture: int = 8192, vllm/engine/arg_utils.py; ModelConfig.
-- _verify_cuda_graph caps it at max_model_len, which changes nothing here:
-- no sequence is longer than max_model_len). V0 replays its decode graph
-- only for a batch whose longest sequence (max_decode_seq_len, its prompt and
-- output with the token it decodes) is at most that (vllm/worker/
-- model_runner.py ModelInputForGPUBuilder._use_captured_graph: "decode_only
-- and not enforce_eager and max_decode_seq_len <= max_seq_len_to_capture and
-- batch_size <= max_batchsize_to_capture", the same from vllm-project/vllm
-- c334b1898b68 (#7894, 2024-08-29, before v0.6.0) through #10838
-- (2024-12, 0.6.5/0.7) to V0's last release, 0.10: docs.vllm.ai/en/v0.10.0
-- api/vllm/worker/model_runner). Every V0 row (0.6, 0.7, and V0 in 0.8 to
-- 0.10): 8192. V1 reads it for no graph (its runner picks a graph by the
-- step's tokens alone, GPUModelRunner.execute_model: num_scheduled_tokens <=
-- cudagraph_batch_sizes[-1]); vllm-project/vllm#25543 ("[V0 Deprecation]
-- Remove max_seq_len_to_capture") removed the argument for 0.11.
M.vllm_v0_max_seq_len_to_capture = 8192
M.vllm_max_seq_len_to_capture_end = "0.11"
-- vLLM's --max-model-len auto (or -1): vllm-project/vllm#29431 ("Add
-- `--max-model-len auto` to auto-fit context to available memory", opened
-- 2025-11-25; its merge date was not read): get_kv_cache_configs makes
-- max_model_len the startup check's estimate over the workers when the
-- derived length does not fit (vllm/v1/core/kv_cache_utils.py
-- _auto_fit_max_model_len at 002f10e0cfa1; the rule: engine/core/ledger.c).
-- Its first release is not pinned: vllm-project/vllm-ascend#6181 ports it
-- against vLLM v0.14.0 (2026-01-23), so it is assumed from 0.14 (0.12 and
-- 0.13 were not read).
M.vllm_max_model_len_auto_release = "0.14"

M.vllm = {
  ["0.6"] = {v1 = false, eager = true, big_seqs = 256, moe_cache13 = false, nccl_counted = true,
             context_counted = true, chunked_tokens = 512, hybrid_manager = false,
             utilization = 0.9},
  ["0.7"] = {v1 = false, eager = true, big_seqs = 256, moe_cache13 = false, nccl_counted = true,
             context_counted = false, hybrid_manager = false, utilization = 0.9},
  ["0.7-v1"] = {v1 = true, eager = false, big_seqs = 256, moe_cache13 = false, nccl_counted = true,
                context_counted = true, logits_only = true, hybrid_manager = false,
                utilization = 0.9},
  ["0.8"] = {v1 = true, eager = false, big_seqs = 256, moe_cache13 = false, nccl_counted = true,
             context_counted = false, hybrid_manager = false, utilization = 0.9},
  ["0.9"] = {v1 = true, eager = false, big_seqs = 256, moe_cache13 = true, nccl_counted = true,
             context_counted = false, hybrid_manager = false, utilization = 0.9},
  ["0.10"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = true,
              context_counted = false, chunked_hybrid = false, dcp_hybrid = false,
              utilization = 0.9},
  -- assumed from 0.11 on: the snapshot after the distributed init (the
  -- release that moved it is not pinned here), and NCCL left to connect
  -- at the first collective (nccl_runtime, below)
  ["0.11"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = false,
              nccl_runtime = true,
              context_counted = false, chunked_hybrid = false, utilization = 0.9},
  -- 0.14 on: async scheduling by default (async_scheduling above: vllm/
  -- config/vllm.py turns SchedulerConfig.async_scheduling on when unset,
  -- vllm-project/vllm#27614; merged after the 0.13 cut: vllm-project/
  -- vllm-gaudi#768 followed it on main after #741 of 2025-12-18, and
  -- deepjavalibrary/djl#3833: "Async scheduling is now enabled by default
  -- in v0.14", v0.14.0 of 2026-01); 0.14 to 0.19 took the 0.11 row before
  ["0.14"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = false,
              nccl_runtime = true,
              context_counted = false, chunked_hybrid = false, async_scheduling = true,
              utilization = 0.9},
  -- assumed from 0.20 on (the release is not pinned): "GPU KV cache size" is
  -- int(max_concurrency x max_model_len) (kv_cache_utils.py
  -- _report_kv_cache_config of the releases that support DeepSeek-V4),
  -- where older releases print num_blocks // groups x the smallest block
  -- kv_from_checkpoint: kv_cache_dtype "auto" is the checkpoint's modelopt
  -- kv_cache_scheme / kv_cache_quant_algo (vllm/utils/torch_utils.py
  -- resolve_kv_cache_dtype_string, read at 959009b402c3, after vllm-project/
  -- vllm issue 34752; its first release is not pinned: assumed from this row)
  ["0.20"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = false,
              nccl_runtime = true,
              context_counted = false, tokens_from_concurrency = true, chunked_hybrid = true,
              async_scheduling = true, kv_from_checkpoint = true, hidden_group = true,
              block_grain = true, mamba_seqs_check = true, utilization = 0.92,
              cudagraph_estimate = true},
  ["0.21"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = false,
              nccl_runtime = true,
              context_counted = false, tokens_from_concurrency = true, chunked_hybrid = true,
              async_scheduling = true, kv_from_checkpoint = true, check_override = true,
              flashinfer_sampler = true, hidden_group = true,
              block_grain = true, mamba_seqs_check = true, utilization = 0.92,
              cudagraph_estimate = true},
  ["0.29"] = {v1 = true, eager = false, big_seqs = 1024, moe_cache13 = true, nccl_counted = false,
              nccl_runtime = true,
              context_counted = false, tokens_from_concurrency = true, chunked_hybrid = true,
              async_scheduling = true, kv_from_checkpoint = true, check_override = true,
              check_null_block = true, flashinfer_sampler = true, hidden_group = true,
              block_grain = true, mamba_seqs_check = true, utilization = 0.92,
              cudagraph_estimate = true},
}
-- The newest vLLM release modelled: what engine_version = "latest" names,
-- and what a deployment that names no release takes (engine_version nil),
-- as SGLang and TensorRT-LLM take their newest rows (issue 20: "vLLM"
-- means the current vLLM). Until 2026-12-04 nil took 0.11, the newest
-- release whose rules the project's startup logs and runs pin (the rows
-- after it rest on boundaries marked assumed above); engine_version =
-- "0.11" reproduces it, and any older release by its name.
M.vllm_latest = "0.29"
-- the same release under its former name (scripts that read it): one
-- definition, vllm_latest
M.vllm_default = M.vllm_latest

local function version_order(a, b)
  local function key(v)
    local x, y = v:match("^(%d+)%.(%d+)")
    return tonumber(x) * 1000 + tonumber(y) + (v:find("v1") and 0.5 or 0)
  end
  return key(a) < key(b)
end

-- The V0 engine of the releases that ran V1 by default (VLLM_USE_V1=0,
-- 0.8 to 0.10; "V1 is now enabled by default" from 0.8.0, and the V0 engine
-- "completely removed from vLLM starting with version 0.11.0",
-- huggingface/optimum-neuron#1027; vllm-project/vllm#25033 "[V0 Deprecation]
-- Remove LLMEngine"): the V0 worker, scheduler and block manager of the 0.7
-- row (eager profiling, 256 sequences, 2048 tokens with chunked prefill, the
-- snapshot before the distributed init, one KV type), with the release's
-- kernels (the fused MoE caches of moe_cache13).
local v0_keys = {"v1", "eager", "big_seqs", "nccl_counted", "context_counted", "chunked_tokens",
                 "hybrid_manager"}

--- The row of release `row` (named `version`) on the engine VLLM_USE_V1
--- asks for (use_v1 nil: the release's own), and its name; an engine the
--- release does not have is an error naming it.
function M.vllm_engine(row, version, use_v1)
  if use_v1 == nil or use_v1 == row.v1 then return row, version end
  if use_v1 then
    if version ~= "0.7" then
      util.raise("field 'vllm_use_v1' = true: vLLM %s has no V1 engine modelled (0.7 and later)",
                 version)
    end
    return M.vllm["0.7-v1"], "0.7-v1"
  end
  if version == "0.7-v1" then return M.vllm["0.7"], "0.7" end
  if not version_order(version, "0.11") then
    util.raise("field 'vllm_use_v1' = false: vLLM %s has no V0 engine (removed in 0.11.0)", version)
  end
  local out = util.copy(row)
  for _, k in ipairs(v0_keys) do out[k] = M.vllm["0.7"][k] end
  return out, version
end

-- Where a release that runs V1 by default falls back to V0 by itself
-- (VLLM_USE_V1 unset): EngineArgs._is_v1_supported_oracle (vllm/engine/
-- arg_utils.py), read in a copy of the 0.8.4 release (Farrrrland/vllm084 at
-- 36ca3c652f00, the file as released) and in a later 0.9-0.10 one: a CUDA
-- GPU of compute capability below 8.0 ("Need at least Ampere for now (FA
-- support required)": _raise_or_fallback(feature_name="Compute Capability <
-- 8.0")) and a model that is not V1 compatible ("No Mamba or Encoder-Decoder
-- so far": model_config.is_v1_compatible, false for SupportsV0Only models:
-- the encoder-decoders kvplan models, those with cross-attention layers).
-- 0.8's oracle (the 0.8.4 file) falls back too for an fp8 KV cache unless
-- FlashAttention supports fp8 ("No Fp8 KV cache so far": supported =
-- flash_attn_supports_fp8(), FlashAttention 3 on a device of capability
-- 9.x, vllm_flash_attn/fa_utils.py as copies of that era read it) and off
-- CUDA ("Non-CUDA is supported on V1, but off by default for now":
-- _warn_or_fallback(device_name)); the later copy asks the platform
-- instead (is_kv_cache_dtype_supported, default_v1), not read for CUDA's
-- and ROCm's answers, so these two are 0.8's alone here.
-- _raise_or_fallback logs "... is not supported by the V1 Engine. Falling
-- back to V0." and raises instead when VLLM_USE_V1=1 is set. Not modelled:
-- the oracle's other fallbacks (flags such as --preemption-mode, ngram and
-- EAGLE drafts on 0.8, Mamba's "experimental" fallback), and which later
-- 0.10.x release moved Whisper to V1.
--- The reason release row `row` (named `version`) runs the V0 engine on
--- GPU gpu (a catalog GPU) for model m with KV format kv (a format or nil)
--- when VLLM_USE_V1 is unset, or nil.
function M.vllm_v0_fallback(row, version, gpu, m, kv)
  if not row.v1 or version == "0.7-v1" or not version_order(version, "0.11") then return nil end
  local cc = gpu and M.compute_capability[gpu.id]
  if cc and cc < 8.0 then
    return string.format("compute capability %.1f < 8.0 (%s)", cc, gpu.id)
  end
  if m and ((m:kinds().cross or 0) > 0) then
    return "an encoder-decoder model (model '" .. tostring(m.id) .. "': cross-attention layers)"
  end
  if version_order(version, "0.9") then
    local vendor = gpu and gpu.vendor
    if vendor and vendor ~= "nvidia" then
      return "a non-CUDA platform (" .. vendor .. " " .. tostring(gpu.id) .. "), V1 off by default"
    end
    local kname = kv and kv.name or ""
    if kname:find("^fp8") and cc and math.floor(cc) ~= 9 then
      return string.format("an %s KV cache without FlashAttention 3's fp8 (compute capability " ..
                           "%.1f, not 9.x)", kname, cc)
    end
  end
  return nil
end

--- The row of a vLLM version: "0.10", "0.10.1" (its minor), "latest" (the
--- newest modelled), nil (the same: M.vllm_latest), "@YYYY-MM-DD" (the
--- release of that date, M.dated_version).
function M.vllm_version(v)
  v = M.dated_version("vllm", v)
  if v == nil or v == "latest" then v = M.vllm_latest end
  if type(v) ~= "string" then util.raise("field 'engine_version' must be a string, got %s", type(v)) end
  local row = M.vllm[v]
  if row == nil then
    local minor = v:match("^v?(%d+%.%d+)")
    local keys = util.sorted_keys(M.vllm)
    table.sort(keys, version_order)
    if minor then
      -- the newest modelled version not after it
      for _, k in ipairs(keys) do
        if not k:find("v1") and not version_order(minor, k) then row, v = M.vllm[k], k end
      end
    end
    if row == nil then
      util.raise("unknown vLLM version '%s' (modelled: %s)", v, table.concat(keys, ", "))
    end
  end
  return row, v
end

--- vLLM release v's default --gpu-memory-utilization (an engine_version, nil
--- for the newest, as "latest"): its row's utilization (0.9, 0.92 from the 0.20 row:
--- vllm-project/vllm#38284), nil for a row without one.
function M.vllm_default_utilization(v)
  return (M.vllm_version(v)).utilization
end

--- Is vLLM release v (an engine_version: "0.9.2", "0.10", "latest", nil
--- for the newest, as "latest") at least release `at` ("0.9.2")? A release named by
--- its minor alone is its .0.
function M.vllm_at_least(v, at)
  v = M.dated_version("vllm", v)
  if v == nil or v == "latest" then v = M.vllm_latest end
  local function parts(s)
    local a, b, c = tostring(s):match("^v?(%d+)%.(%d+)%.?(%d*)")
    if a == nil then util.raise("field 'engine_version': not a vLLM version '%s'", util.shown(s)) end
    return tonumber(a), tonumber(b), tonumber(c) or 0
  end
  local a1, b1, c1 = parts(v)
  local a2, b2, c2 = parts(at)
  if a1 ~= a2 then return a1 > a2 end
  if b1 ~= b2 then return b1 > b2 end
  return c1 >= c2
end

-- bitsandbytes 4-bit weights as vLLM holds them. The loader quantizes a
-- bf16/fp16 checkpoint in flight with quantize_4bit(compress_statistics=
-- True, quant_type="nf4") (vllm/model_executor/model_loader/
-- bitsandbytes_loader.py _unquantized_generator at 0406fb9fb92d), so its
-- absmax is double quantized like a checkpoint saved with
-- bnb_4bit_use_double_quant; from 0.9.2 on, load_weights calls
-- dequantize_dq, which turns every nested absmax back into fp32 and drops
-- the second level ("at the cost of increased memory usage",
-- vllm-project/vllm#19742, merged 2025-06-18, first released in v0.9.2):
-- bnb-4bit-dq is held as bnb-4bit. Linear layers and fused MoE experts are
-- quantized (bitsandbytes.py BitsAndBytesConfig.get_quant_method at
-- 01f5395fdf04: LinearBase unless in llm_int8_skip_modules, FusedMoE); the
-- embeddings and lm_head (VocabParallelEmbedding, ParallelLMHead) stay in
-- the model dtype.
M.vllm_bnb_dequant_release = "0.9.2"

-- A vision tower's pixel values as the processor hands them to the model:
-- transformers' image processors return float32, and vLLM casts every
-- floating-point tensor of the processor's output to the model dtype in
-- InputProcessingContext.call_hf_processor (vllm/inputs/registry.py
-- maybe_cast_dtype, read at vllm-project/vllm f06ae6511fdd), the path the
-- profiling run's dummy images take too (MultiModalProfiler ->
-- processor.apply -> _call_hf_processor): vllm-project/vllm#18862 ("Cast
-- multimodal input in hf processor", opened 2025-05-28; on main by
-- 2025-06-09, when vllm-project/vllm-ascend#1002 was closed as "reverted in
-- vllm" for the runner-side cast #18756 it replaced), first modelled in
-- v0.9.2 (whether the v0.9.1 cut holds it was not read). From this release
-- on the inputs are K P V b and the tower's pixel_values.type(dtype) copy is
-- none (engine/core/predict.c kvp_predict_encoder: pixel_bytes = act_bytes);
-- before it K P V x 4 and a copy of K P V b.
M.vllm_pixel_cast_release = "0.9.2"

-- V0's CacheEngine aligns MLA cache entries to 256 bytes on CUDA
-- (vllm/worker/cache_engine.py _align_cache and get_cache_block_size:
-- align_to_256bytes(num_heads x head_size, model_config.dtype) when use_mla,
-- current_platform.is_cuda() and VLLM_CUDA_MEM_ALIGN_KV_CACHE, on by default):
-- vllm-project/vllm#12676 ("Mem align KV caches for CUDA devices (MLA perf
-- improvement)", merged 2025-02-04 as 75e94309e8d8; "for MLA with a head dim
-- of 576 ... we allocate 640 elements per cache entry instead of 576"), first
-- released in v0.7.2 (2025-02-06), until vllm-project/vllm#14842 ("Get rid
-- of mla cache alignment", merged 2025-03-15 as 5952d8ab61a3, before v0.8.0:
-- main still called itself 0.7.4.dev on 03-18, vllm#14992): releases from
-- vllm_mla_align_release up to, not including, vllm_mla_align_end. The V1
-- engine's MLA pages are unpadded.
M.vllm_mla_align_release = "0.7.2"
M.vllm_mla_align_end = "0.8.0"

-- V0's MLA backend materializes the absorbed decode matrices W_Q_UK, W_QR
-- and W_UV_O in the activation dtype after loading (vllm/attention/backends/
-- mla/utils.py MLACommonImpl.process_weights_after_loading,
-- VLLM_MLA_PERFORM_MATRIX_ABSORPTION on) from vllm-project/vllm#12528
-- (merged 2025-01-30 as cabaf4eff3c7, first in v0.7.1) until #14770
-- (merged 2025-03-13 as 9532c49836ad, "It's actually better to just not
-- materialize the absorbed W_Q_UK and W_UV_O as it reduces memory usage"):
-- releases from `from` up to, not including, `to` (deploy.lua mla_absorb_rule).
M.vllm_mla_absorb_releases = {from = "0.7.1", to = "0.8.0"}

--- Does a GPU's name say A100 (vLLM's big-GPU defaults leave it out)?
function M.names_a100(name)
  return tostring(name or ""):lower():find("a100", 1, true) ~= nil
end

-- vLLM's defaults for max_num_batched_tokens and max_num_seqs follow the
-- row's v1, chunked_tokens and big_seqs, the usage and the GPU (its memory,
-- whether its name says A100): the rule and its sources are the core's
-- (engine/core/predict.c vllm_defaults: vllm/config.py
-- SchedulerConfig, 0.6-0.7; vllm/engine/arg_utils.py _set_default_args /
-- get_batch_defaults).

-- Non-torch memory vLLM subtracts, per GPU: what its snapshot counts
-- outside torch's allocator, from its parts (the rule that combines them by
-- release, tp, pp and interconnect is the core's: engine/core/predict.c
-- kvp_predict_non_torch, with what is left out and why). Parts:
--   base     the code the profile run loads after the snapshot (CUDA loads
--            a kernel at its first use: CUDA_MODULE_LOADING=LAZY, the
--            default on Linux from CUDA 12.2 and set by PyTorch itself from
--            1.13, pytorch/pytorch#86509; NVIDIA's CUDA Programming Guide,
--            "Lazy Loading": runtime >= 11.7, driver >= 515), Triton's and
--            torch.compile's kernels, the libraries' handles. No engine
--            file, doc or published measurement sizes it by GPU: NOT
--            DERIVED, a stated range whose point is the calibration
--            constant of earlier releases of kvplan (the mean of the two
--            TP 1 calibration logs as logged, tests/validation/calib-*.log:
--            0.03 GiB, vllm-project/vllm#13882, 0.7 on an RTX 4060, and 0.35
--            GiB, #10517, 0.6.4 on an RTX 3090). Read with each release's
--            formula they put the base lower on those GPUs: 0.6.4's figure
--            holds the CUDA context (context_counted), so #10517's base is
--            0.35 - context, 0 to 0.08 GiB over the context's range below;
--            #13882's is 0.03. A point re-derived from them (about 0.03 GiB)
--            is contradicted by the other logs (H100s at TP 1: 0.13-0.16
--            GiB), so the base depends on the GPU in a way no source gives
--            and the point is left as it was: docs/predictions.md
--            (non-torch memory). Local memory sized by resident threads
--            (SMs x threads per SM) and a per-thread figure set from the
--            two calibration logs alone (728-747 bytes) gives an H100 SXM
--            0.18-0.19 GiB, no nearer its logs: not adopted (same page).
--   context  the CUDA context (the driver's state and the kernels loaded at
--            its creation), for the releases that count it (0.6.0-0.6.4,
--            0.7's V1) and what SGLang's budget leaves out: measured with
--            lazy loading at 287,047,680 bytes (PyTorch 1.13, a 6.4 MB
--            tensor in it: pytorch/pytorch#86509, where eager loading
--            measured 666,632,192) and 426 MiB (PyTorch 2.10 with CUDA 13 on
--            an RTX 6000 Ada, torch.cuda.mem_get_info alone: unsloth-zoo
--            #1053); "around 400MB if CUDA >= 11.7 is used and lazy module
--            loading enabled" (NVIDIA's ptrblck, pytorch/pytorch#109888):
--            the point 0.4 GiB, the range the two measurements. By GPU no
--            measurement was found; eager loading (CUDA_MODULE_LOADING=
--            EAGER, a driver before 515) is not modelled.
--   nccl_connection  the buffers of one NCCL connection, one per protocol
--            (NVIDIA/nccl src/init.cc DEFAULT_BUFFSIZE 1 << 22, DEFAULT_LL_
--            BUFFSIZE, DEFAULT_LL128_BUFFSIZE, read at 48bb7fec7953, with
--            src/include/device.h at 80f6bda4378b: NCCL_STEPS 8; LL: 8 lines
--            x 512 threads x 8 steps x 16 bytes = 512 KiB; LL128: 120
--            elements x 640 threads x 8 steps x 8 bytes; NCCL_BUFFSIZE's
--            documented default 4 MiB).
--   nccl_channels  the channels of one communicator, each with one
--            receiving peer on a ring: NCCL's topology search picks them
--            and no source states the count by GPU, so a range: at least 2
--            (ncclTopoPreset duplicates the channels it found, "Duplicate
--            channels rings/trees", src/graph/connect.cc at 5d3ab08b6975),
--            the point at that fewest; at most MAXCHANNELS (64, device.h).
--            All are allocated in ncclCommInitRank while vLLM forces
--            NCCL_CUMEM_ENABLE=0 (vllm-project/vllm#5091 until #24141):
--            NCCL 2.22+ connects at the first collective only with cuMem
--            (src/init.cc at v2.22.3-1: runtimeConn = cuMemSupport &&
--            RuntimeConnect). NVLS buffers (tp > 2, multicast GPUs) are not
--            counted: docs/predictions.md gives their size by NCCL version.
--            The core counts these channels for two communicators of the tp
--            group: PyNccl's and torch's ProcessGroupNCCL, which torch forms
--            lazily at the group's first collective (no device_id given to
--            init_process_group), the profile run's logits gather
--            (DeviceCommunicatorBase.all_gather / gather on device_group), so
--            after the snapshot in every release (kvp_predict_non_torch).
--   custom_ar vLLM's custom all-reduce per rank: meta_ptrs (meta_size() +
--            max_size) and buffer_ptrs (max_size) from cudaMalloc
--            (create_shared_buffer -> allocate_shared_buffer_and_handle),
--            max_size 8192 x 1024 (vllm/distributed/device_communicators/
--            custom_all_reduce.py at 00d618aab604); meta_size() (the
--            Signal flags of csrc/custom_all_reduce.cuh) is not read here.
--            Its rank_data is torch.empty: torch's memory, not counted.
--   nvls_head NCCL's NVLS (NVLink SHARP) buffers per head, one head per
--            rank of a communicator of more than 2 GPUs with multicast
--            (src/transport/nvls.cc ncclNvlsInit: "gpuCount <= 2" turns it
--            off; nvlsTotalSize = nChannels x 2 x (buffSize + memSize) x
--            nHeads on every rank), at its largest layout, NCCL 2.18-2.20:
--            16 channels (NCCL_NVLS_NCHANNELS) x 2 x (Simple's 4 MiB +
--            NVLS_MEM_ALIGN_SIZE 2 MiB), read at v2.20.5-1 (48bb7fec7953);
--            2.21 keeps 1 MiB + 2 MiB (ab2b89c4c339), 2.22 on 1 MiB
--            (178b6b759074). Which NCCL a release's torch ships is not
--            mapped here, so it is the range's high end alone, counted
--            where NCCL's buffers are (kvp_predict_non_torch).
M.non_torch = {
  base = {lo = 0, point = 0.19 * GiB, hi = 0.5 * GiB},
  context = {lo = 287047680, point = 0.4 * GiB, hi = 426 * MiB},
  nccl_connection = (1 << 22) + 8 * 512 * 8 * 16 + 120 * 640 * 8 * 8,
  nccl_channels = {lo = 2, point = 2, hi = 64},
  custom_ar = 2 * 8192 * 1024,
  nvls_head = 16 * 2 * ((1 << 22) + (1 << 21)),
}

--- Do a GPU's copies reach each other peer to peer (the catalog's
--- interconnect names NVLink or Infinity Fabric, not a 2-way bridge)?
--- NCCL's buffers are then in device memory and vLLM enables its custom
--- all-reduce (it tests P2P access: custom_all_reduce.py _can_p2p; over
--- PCIe alone GeForce and most PCIe parts have none, so NCCL goes through
--- its SHM transport, buffers in host memory).
function M.peer_to_peer(g)
  local ic = tostring(g and g.interconnect or "")
  if ic:find("bridge", 1, true) then return false end
  return ic:find("^NVLink") ~= nil or ic:find("^Infinity Fabric") ~= nil
end

--- May NCCL run NVLS on a GPU's nodes? ncclNvlsInit reads CU_DEVICE_
--- ATTRIBUTE_MULTICAST_SUPPORTED and ncclTopoCompute finds no NVLS graph
--- without an NVSwitch or below compute capability 9.0 (NVIDIA/nccl
--- src/graph/search.cc at v2.27.5-1: "nodes[NVS].count == 0 || ccMin <
--- 90"), one head per GPU of the node: Hopper and Blackwell, the catalog's
--- interconnect "NVLink 4" or "NVLink 5", not a 2-way bridge. A board
--- without NVSwitch (a 4-GPU HGX H100) has none, so this feeds only the
--- non-torch range's high end.
function M.nvls_capable(g)
  if not M.peer_to_peer(g) then return false end
  return tostring(g.interconnect):find("^NVLink [45]") ~= nil
end

-- The rule that combines them by tp and what the version counts is the
-- core's (engine/core/predict.c kvp_predict_non_torch).

--- The activation model's inputs from a Model (nil and a reason when the
--- model lacks a field the model needs).
function M.shape(m)
  if m.activation_unmodelled then return nil, "model '" .. m.id .. "': " .. m.activation_unmodelled end
  local need = {"hidden", "heads", "vocab"}
  for _, k in ipairs(need) do
    if m[k] == nil then return nil, "model '" .. m.id .. "' gives no " .. k end
  end
  if m.heads == 0 then
    return nil, "model '" .. m.id .. "' has no attention layers (Mamba): the activation model "
                .. "covers transformer blocks"
  end
  if m.experts == nil and m.intermediate == nil then
    return nil, "model '" .. m.id .. "' gives no intermediate size"
  end
  local l1 = m:layer(1)
  local s = {
    hidden = m.hidden, heads = m.heads, kv_heads = m.kv_heads, vocab = m.vocab,
    head_dim = m.head_dim or (l1 and l1.head_dim) or m.hidden // m.heads,
    intermediate = m.experts and 0 or m.intermediate,
  }
  if m.experts then
    s.experts, s.experts_active = m.experts, m.experts_active
    s.moe_intermediate = m.moe_intermediate or m.intermediate
    if m:shared_width() > 0 then s.shared_intermediate = m:shared_width() end
  end
  if m.mla then
    s.kv_lora_rank, s.rope_dim = m.mla.kv_lora_rank, m.mla.rope_dim or 0
    s.head_dim = (m.mla.qk_nope_head_dim or 128) + (m.mla.rope_dim or 0)
  end
  return s
end

--- Bytes of the activation dtype: the model's compute dtype (fp16 stays
--- fp16, fp32 is 4, everything quantized computes in bf16).
function M.act_bytes(m)
  local d = (m.dtype or "bf16"):lower()
  if d == "fp32" or d == "float32" then return 4 end
  return 2
end

-- ---- vLLM's rotary cos/sin caches, in the loaded weights ----------------
--
-- Every RoPE attention layer of a vLLM model gets its rotary embedding from
-- get_rope (vllm/model_executor/layers/rotary_embedding/__init__.py at
-- vllm-project/vllm 07b12f1b16d5), which builds one per distinct key (head
-- size, rotary_dim, max_position, neox style, the rope parameters, dtype) and
-- hands the same module to every layer asking for it again (_ROPE_DICT). Its
-- __init__ registers the table as a buffer, cos_sin_cache = rows x rotary_dim
-- (cos and sin of rotary_dim / 2 frequencies, concatenated) cast to `dtype`
-- (RotaryEmbedding.__init__, base.py at 04458da08417), on the GPU with the
-- model: "Model loading took" counts it, and each tensor-parallel rank and
-- pipeline stage (each its own process) holds it whole. rotary_dim =
-- int(head_size x partial_rotary_factor) (get_rope); dtype: the model dtype
-- (get_rope's None is torch.get_default_dtype(), the model's while vLLM builds
-- it) unless the model file passes one. Rows by rope type, each class's
-- _compute_cos_sin_cache:
--   default, llama3, mllama4: max_position (base.py; llama3_rope.py at
--     045d7575500e changes only the frequencies);
--   linear: max_position x factor (linear_scaling_rope.py at 0f17ee061e41:
--     max_len = max_position_embeddings * scaling_factor, one factor);
--   dynamic (factor): max_position x factor (dynamic_ntk_scaling_rope.py at
--     3cfbaf333d80);
--   yarn: ceil(original_max_position x factor) (get_rope passes
--     original_max_position; yarn_scaling_rope.py at 0cd5784803d8);
--   deepseek_yarn: original_max_position x factor (deepseek_scaling_rope.py
--     at 00d678e109f0; deepseek_v2.py renames a config's yarn to it);
--   longrope: original_max_position + max_position, the short and the long
--     table in one buffer (phi3_long_rope_scaled_rope.py at 17d618b0f944);
--   mrope (mrope_section in the rope parameters, default or yarn): 4 x the
--     rows above ("We enlarge max_position_embeddings to 4 times",
--     MRotaryEmbedding, mrope.py at 055e47c28003).
-- A model without RoPE layers builds none (NoPE layers: get_rope(...) if
-- not self.nope else None, llama4.py at 0121c95efe85; NemotronHAttention
-- has no rotary_emb, nemotron_h.py at 00b08dc44519; learned positions).
--
-- The model's `rope` field says what the layers ask for: absent, one table
-- of the default type over max_context rows, head_dim wide (MLA:
-- mla.rope_dim, deepseek_v2.py get_rope(qk_rope_head_dim, ...)); false: no
-- RoPE layers; a table {type, factor, original_max_position, max_position,
-- partial_rotary_factor, mrope, dtype}; or a list of such tables, one per
-- distinct rope of the layers (Gemma 3's local and global layers).
local rope_types = {default = true, llama3 = true, mllama4 = true, linear = true, dynamic = true,
                    yarn = true, deepseek_yarn = true, longrope = true}
local rope_keys = {type = true, factor = true, original_max_position = true, max_position = true,
                   partial_rotary_factor = true, mrope = true, dtype = true}
M.rope_types = rope_types

-- One table's rows, width and element bytes for model m (field: its name
-- in errors).
local function rotary_table(m, r, field)
  if type(r) ~= "table" then
    util.raise("model '%s': field '%s' must be a table, got %s", m.id, field, type(r))
  end
  util.check_keys(r, rope_keys, "model '" .. m.id .. "' " .. field)
  local t = r.type or "default"
  if not rope_types[t] then
    util.raise("model '%s': field '%s.type' must be one of %s, got '%s'", m.id, field,
               table.concat(util.sorted_keys(rope_types), ", "), util.shown(t))
  end
  local P = r.max_position ~= nil and util.count(r.max_position, field .. ".max_position", 1)
            or m.max_context
  if P == nil or P < 1 then
    util.raise("model '%s': field '%s' needs max_context or max_position", m.id, field)
  end
  -- a CSV catalog's "factor=8" or "partial_rotary_factor=0.25" (catalog_csv pairs)
  local function number(v) return type(v) == "string" and tonumber(v) or v end
  local function need_factor()
    local f = number(r.factor)
    if type(f) ~= "number" or not (f >= 1) or f == math.huge then
      util.raise("model '%s': field '%s.factor' must be a number >= 1 for rope type '%s', got %s",
                 m.id, field, t, util.shown(r.factor))
    end
    return f
  end
  local function need_orig()
    return util.count(r.original_max_position, field .. ".original_max_position", 1)
  end
  if r.mrope ~= nil and type(r.mrope) ~= "boolean" then
    util.raise("model '%s': field '%s.mrope' must be true or false, got %s", m.id, field,
               util.shown(r.mrope))
  end
  local rows
  if t == "linear" or t == "dynamic" then rows = math.ceil(P * need_factor())
  elseif t == "yarn" or t == "deepseek_yarn" then
    local o, f = need_orig(), need_factor()
    rows = r.mrope and math.ceil(4 * o * f) or math.ceil(o * f)
  elseif t == "longrope" then rows = need_orig() + P
  else rows = P end
  if r.mrope and t ~= "yarn" then
    if t ~= "default" then
      util.raise("model '%s': field '%s.mrope' with rope type '%s': vLLM builds M-RoPE for the "
                 .. "default and yarn types only (get_rope)", m.id, field, t)
    end
    rows = 4 * rows
  end
  local head = m.mla and (m.mla.rope_dim or 0) or (m.head_dim or m.hidden // m.heads)
  local p = number(r.partial_rotary_factor) or 1
  if type(p) ~= "number" or not (p > 0 and p <= 1) then
    util.raise("model '%s': field '%s.partial_rotary_factor' must be in (0, 1], got %s", m.id,
               field, util.shown(p))
  end
  local dim = math.floor(head * p)
  local elem = M.act_bytes(m)
  if r.dtype ~= nil then
    if r.dtype ~= "fp32" and r.dtype ~= "bf16" and r.dtype ~= "fp16" then
      util.raise("model '%s': field '%s.dtype' must be fp32, bf16 or fp16, got %s", m.id, field,
                 util.shown(r.dtype))
    end
    elem = r.dtype == "fp32" and 4 or 2
  end
  -- a factor of 1e308 or 1e18 positions: past 2^63 rows or bytes, which
  -- Lua's integers cannot hold (an arithmetic error inside this file, or
  -- bytes that wrapped negative and the table left out, before); in floats,
  -- at 4 bytes an element, as SGLang holds the tables (deploy.lua
  -- sglang_weights)
  if not (rows * 1.0 * dim * math.max(elem, 4) < 2^63) then
    local pos = r.max_position ~= nil and (field .. ".max_position") or "max_context"
    local causes = {}
    local function cause(name, v) causes[#causes + 1] = string.format("'%s' = %s", name, tostring(v)) end
    if t == "yarn" or t == "deepseek_yarn" or t == "longrope" then
      cause(field .. ".original_max_position", r.original_max_position)
    end
    if t ~= "yarn" and t ~= "deepseek_yarn" then cause(pos, P) end
    if t == "linear" or t == "dynamic" or t == "yarn" or t == "deepseek_yarn" then
      cause(field .. ".factor", r.factor)
    end
    util.raise("model '%s': vLLM's rotary table ('%s') of %.6g rows x %d elements is more than "
               .. "2^63 bytes, caused by field %s", m.id, field, rows, dim, table.concat(causes, " and "))
  end
  rows = math.tointeger(rows)
  return {type = t, rows = rows, dim = dim, elem = elem,
          bytes = rows * dim * elem, mrope = r.mrope and true or nil}
end

--- vLLM's rotary caches of model m on one GPU: their bytes and the list of
--- tables ({type, rows, dim, elem, bytes, mrope}); 0 and {} for a model
--- without RoPE layers (rope = false, or no attention layer).
function M.vllm_rotary(m)
  local r = rawget(m, "rope")
  local k = m:kinds()
  local attn = (k.full or 0) + (k.sliding or 0) + (k.chunked or 0) + (k.mla or 0)
  if r == false or attn == 0 then return 0, {} end
  -- a model without a context length (a hand-made table): its rows unknown, not counted
  if r == nil and (m.max_context or 0) < 1 then return 0, {} end
  if r == nil then r = {{}} elseif r[1] == nil then r = {r} end
  local out, total = {}, 0
  for i, t in ipairs(r) do
    local x = rotary_table(m, t, #r > 1 and ("rope[" .. i .. "]") or "rope")
    out[i], total = x, total + x.bytes
  end
  return total, out
end

-- ---- vision towers: the encoder's dummy batch ----------------------------
--
-- A model with a vision tower (`vision` in its entry, from config.json's
-- vision_config) is profiled by vLLM with a batch of dummy images before the
-- decoder's dummy forward: the item, the items of the batch by engine and
-- the tower's run are the core's (engine/core/predict.c vision_item,
-- vision_run, kvp_predict_encoder, with their sources). kv.deploy hands it
-- the tower's config (deploy.lua vision_rule).

-- torch's cuBLAS workspace, allocated from its caching allocator at the
-- profile run's first GEMM and live to its end (engine/core/predict.c,
-- blas_workspace): PyTorch's default CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8"
-- (4096 KiB x 2 + 16 KiB x 8 = 8,519,680 bytes) and ":4096:8" (32 MiB) on
-- compute capability 9.0 (aten/src/ATen/cuda/CublasHandlePool.cpp
-- parseChosenWorkspaceSize, read at pytorch/pytorch 26a39059ec58; the 32
-- MiB from pytorch/pytorch#89027 / #91564, January 2023; its test in
-- test/test_cuda.py measures it as active_bytes.all.allocated, and
-- pytorch/pytorch#95668 saw the 8,519,680 bytes stay allocated after one
-- nn.Linear). Blackwell at 32 MiB was tried and backed out (#153556,
-- #175344): not for the torch of the releases here. cuBLASLt's workspace
-- (1 MiB) was allocated per call until pytorch/pytorch#156495 (merged
-- 2025-06-27, its first torch release not pinned): not counted. ROCm's
-- hipBLAS workspace (32 or 128 MiB, #138791) is not modelled: 0 off NVIDIA.
M.cublas_workspace_bytes = {default = 4096 * 1024 * 2 + 16 * 1024 * 8, sm90 = 4096 * 8 * 1024}

--- The cuBLAS workspace vLLM's profile holds on GPU g (a catalog GPU), bytes.
function M.cublas_workspace(g)
  if g == nil or (g.vendor or "nvidia") ~= "nvidia" then return 0 end
  local cc = M.compute_capability[g.id]
  if cc == 9.0 then return M.cublas_workspace_bytes.sm90 end
  return M.cublas_workspace_bytes.default
end

-- The hidden states still referenced when V1's dummy sampler runs
-- (engine/core/predict.c sampler_hidden; read in gpu_model_runner.py
-- profile_run, _dummy_run, _dummy_sampler_run): the forward's whole output,
-- _dummy_run's index copy of the last tokens and _dummy_sampler_run's
-- torch.rand_like of it from vllm-project/vllm#16188 ("Support embedding
-- models in V1", 799397ee4, 2025-06-19: _dummy_run returns both) on; the
-- copy and rand_like from #18543 ("[Bugfix] Use random hidden states in
-- dummy sampler run", 4e04eceb5, 2025-05-22); the copy alone before (0.8.0,
-- #14728's _dummy_sampler_run). Read in the history of the v0.11.0 tree
-- (b8b302cde434, the GitHub fork Yuran-7/vllm-0.11); the first releases,
-- 0.9.2 and 0.9.1, are assumed from the commit dates, not read.
M.vllm_sampler_rand_release = "0.9.1"
M.vllm_sampler_both_release = "0.9.2"

--- The core's sampler_hidden for vLLM release `row` named `version`.
function M.vllm_sampler_hidden(row, version)
  if not row.v1 or row.logits_only then return 0 end
  if M.vllm_at_least(version, M.vllm_sampler_both_release) then return 3 end
  if M.vllm_at_least(version, M.vllm_sampler_rand_release) then return 2 end
  return 1
end

--- The profiling run's settings of vLLM release `row` (named `version`),
--- the deployment's options o (enforce_eager, flashinfer_sampler) and GPU
--- g: the activation model's switches (engine/core/predict.c picks each
--- term's end by them) and what it adds (blas_workspace, sampler_hidden).
function M.vllm_profile(row, o, version, g)
  return {
    sampler_hidden = M.vllm_sampler_hidden(row, version),
    blas_workspace = M.cublas_workspace(g),
    eager = o.enforce_eager or row.eager, moe_cache13 = row.moe_cache13,
    -- the release's default unless VLLM_USE_FLASHINFER_SAMPLER is given
    -- (row.flashinfer_sampler above)
    flashinfer_sampler = o.flashinfer_sampler == nil and (row.flashinfer_sampler or false)
                         or o.flashinfer_sampler,
    logits_only = row.logits_only or false,
    moe_chunk = 32768, -- VLLM_FUSED_MOE_CHUNK_SIZE default (vllm/envs.py)
  }
end

-- ---- MXFP4 experts as vLLM loads them -----------------------------------
--
-- vLLM's "Model loading took X GiB" is the torch allocator's memory after
-- the load minus before it (gpu_model_runner.py load_model under
-- DeviceMemoryProfiler; CudaPlatform.get_current_memory_usage empties the
-- cache and reads max_memory_allocated after resetting the peak: what is
-- resident, vllm/platforms/cuda.py). For MXFP4 MoE layers that is the
-- layout the chosen kernel repacks the experts into, not the checkpoint's
-- (vllm/model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod,
-- read at vllm-project/vllm 007d50058a06):
--   create_weights pads the per-partition intermediate size I_p and the
--   hidden size H to the kernel's alignment:
--     marlin       I_p to 128, H to 256 ("n % 256 == 0 and k % 128 == 0")
--     flashinfer   SM100 (TRT-LLM gen): both to 256; its biases become
--                  fp32 (w13_bias.to(torch.float32), stacked as new params)
--     flashinfer_sm90  SM90 CUTLASS (VLLM_USE_FLASHINFER_MOE_MXFP4_BF16):
--                  both to 128, biases bf16
--     triton       I_p to 64; process_weights_after_loading turns the
--                  biases to fp32, swizzles values and scales into the
--                  Hopper layouts of triton_kernels and keeps the
--                  checkpoint's scale parameters registered on the layer
--                  (only w13_weight / w2_weight are deleted)
--   the bytes per expert: engine/core/predict.c mx_bytes. Marlin's repack
--   (marlin_utils_fp4.py prepare_moe_fp4_layer_for_marlin,
--   mxfp4_marlin_process_scales) keeps the byte counts: int4 tiles and
--   float8_e8m0 scales.
--   Triton's Hopper layouts (triton-lang/triton python/triton_kernels,
--   tensor_details/layout_details: the HopperMXValueLayout with op_idx
--   pads the value tiles to 16 x 32 elements, kvplan rounds both to 32;
--   HopperMXScaleLayout pads the scale rows to 2 x num_warps x 2 x 8 = 256
--   with vLLM's 8 warps and the scale columns to 2). Newer triton_kernels
--   pad values to 64 x 256 (_padded_shape): not modelled, the package's
--   version is not pinned by vLLM's wheel.
-- Which backend runs (get_mxfp4_backend, no environment variables set):
--   compute capability 10.x with FlashInfer: flashinfer; 9.0: triton when
--   the triton_kernels package is installed and torch >= 2.8, else marlin;
--   below 9.0 and 11+: marlin. Whether triton_kernels is installed is not
--   in the flags before vLLM bundles it: kvplan assumes marlin on 9.0
--   unless told (mxfp4_backend = "triton", or a log's "Using Triton
--   backend"). vLLM's build copies triton_kernels into vllm/third_party
--   (vllm-project/vllm#28788, "[Build] Add OpenAI triton_kernels", merged
--   the week ending 2025-11-21, after the 0.11.1 release of 2025-11-18:
--   assumed first in 0.12, M.vllm_triton_kernels_release), with torch 2.9:
--   from then on 9.0 takes Triton, as the H100 logs of 0.14 show.
-- Compute capabilities: NVIDIA's CUDA GPUs list
-- (https://developer.nvidia.com/cuda-gpus).
M.compute_capability = {
  ["v100-sxm2-16gb"] = 7.0, ["v100-sxm2-32gb"] = 7.0, t4 = 7.5, a10 = 8.6, a10g = 8.6,
  ["rtx-3090"] = 8.6, ["rtx-a6000"] = 8.6, ["a100-sxm-40gb"] = 8.0, ["a100-sxm-80gb"] = 8.0,
  l4 = 8.9, ["rtx-4090"] = 8.9, l40 = 8.9, l40s = 8.9, ["rtx-6000-ada"] = 8.9,
  ["h100-sxm"] = 9.0, ["h100-pcie"] = 9.0, ["h100-nvl"] = 9.0, h20 = 9.0, ["gh200-96gb"] = 9.0,
  h200 = 9.0, ["rtx-5090"] = 12.0, b200 = 10.0, gb200 = 10.0, a40 = 8.6, ["rtx-a5000"] = 8.6,
  -- GB10 (DGX Spark): deviceQuery's "CUDA Capability Major/Minor version
  -- number: 12.1" (the catalog entry's visible_source)
  gb10 = 12.1,
}

M.mxfp4_backends = {
  marlin = {inter = 128, hidden = 256},
  triton = {inter = 64, hidden = 1, fp32_bias = true, tile = 32, scale_rows = 256,
            keeps_scales = true},
  flashinfer = {inter = 256, hidden = 256, fp32_bias = true},
  flashinfer_sm90 = {inter = 128, hidden = 128},
  checkpoint = {inter = 1, hidden = 1},
}

--- The MXFP4 MoE backend vLLM picks on a GPU (a catalog GPU or nil) in a
--- release that bundles triton_kernels or not: name, and a reason when it is
--- an assumption.
function M.mxfp4_backend(gpu, bundled)
  local cc = gpu and M.compute_capability[gpu.id]
  if cc == nil then
    return "checkpoint", "no compute capability known for the GPU: the checkpoint's layout is used"
  end
  if cc >= 10 and cc < 11 then return "flashinfer" end
  if cc == 9.0 then
    if bundled then return "triton" end
    return "marlin", "on compute capability 9.0 vLLM takes Triton when triton_kernels is installed, "
                     .. "else Marlin: Marlin assumed (mxfp4_backend = \"triton\" to change it)"
  end
  return "marlin"
end

--- Does vLLM release v (an engine_version, nil for the newest, as "latest") ship
--- triton_kernels in its wheel (from M.vllm_triton_kernels_release on)?
M.vllm_triton_kernels_release = "0.12"
function M.vllm_bundles_triton_kernels(v)
  return M.vllm_at_least(v, M.vllm_triton_kernels_release)
end

--- SGLang's default mem_fraction_static by tensor-parallel size
--- (python/sglang/srt/server_args.py __post_init__, v0.4): the rule of a
--- deployment under budget "sglang" that names no engine_version.
--- The table: {smallest tp, fraction} pairs, the first whose tp the
--- deployment's reaches applies (the core reads the same table for sweeps:
--- engine/core/predict.c kvp_predict_deploy).
M.sglang_fractions = {{16, 0.79}, {8, 0.81}, {4, 0.85}, {2, 0.87}, {1, 0.88}}

-- SGLang releases modelled: "0.4" takes mem_fraction_static by tp (above);
-- "0.5" sizes chunked_prefill_size, cuda_graph_max_bs and
-- mem_fraction_static from the GPU's memory (ServerArgs.
-- _handle_gpu_memory_settings, the heuristic of sgl-project/sglang#10975,
-- October 2025; the 0.5.x release that first shipped it is not pinned here:
-- assumed from 0.5 on).
-- The scheduling defaults of each row (the simulator's SGLang scheduler,
-- engine/core/sim.c KVP_SCHED_SGLANG):
--   chunked_prefill_size  "0.4": 2048 on a GPU under 25,000 MB, else 8192
--               (ServerArgs.__post_init__ of the 0.4 releases, the form that
--               sets mem_fraction_static by tp as above: "Set chunked prefill
--               size, which depends on the gpu memory capacity"); "0.5": by
--               the GPU's memory, tp and pp (the core's rule above,
--               d.sglang_defaults.chunked_prefill_size)
--   cuda_graph_max_bs  "0.4": 8 (tp < 4) or 80 under 25,000 MB, else 160
--               (the same __post_init__); "0.5": the core's rule
--   max_prefill_tokens  16384 (ServerArgs default, both rows)
--   max_running_requests  min(pool tokens // 2, the request pool's size
--               min(max(int(pool tokens / context_len x 512), 2048), 4096))
--               unless given (python/sglang/srt/managers/tp_worker.py and
--               model_runner.py init_memory_pool; context_len: max_model_len)
--   dp_attention_conservativeness  0.3 (both rows): under enable_dp_attention
--               ServerArgs multiplies schedule_conservativeness by 0.3, so the
--               scheduler reserves less for the running requests' remaining
--               output (init_new_token_ratio 0.7 x 0.3 = 0.21). Introduced by
--               sgl-project/sglang PR #2096 "Set schedule policy less
--               conservative for DP attention" (merged 2024-11-20, before
--               v0.4.0 of 2024-12-04) in ServerArgs.__post_init__'s "Others"
--               block; kept in the 0.4 releases' "Data parallelism
--               attention" block and in ServerArgs._handle_data_parallelism
--               of the 0.5 releases (python/sglang/srt/server_args.py,
--               read also at 001067fffe33427bee0ed2f007fb7551a1d76b44, where
--               the resolution moved to declare_resolution with the same
--               x 0.3). A row without the field: no change.
--   dp_attention_chunk_divisor  "0.4": 2. Under enable_dp_attention the 0.4
--               releases' ServerArgs.__post_init__ sets "self.chunked_prefill_size
--               = self.chunked_prefill_size // 2" next to "self.dp_size =
--               self.tp_size" (its "Others" block; read in two stored copies of
--               python/sglang/srt/server_args.py, no commit named: the
--               PR #2096-era form of November 2024 and a form of early 2025 with
--               --enable-flashinfer-mla and EAGLE, so 0.4.1 of December 2024,
--               between them, halves too). Later forms divide by dp_size
--               ("chunked_prefill_size // self.dp_size" with "Please set a
--               dp-size > 1", after sgl-project/sglang PR #4390 "Improve DP
--               attention", merged 2025-03-13, made --dp explicit; PR #5663
--               "Remove chunked prefill length divide for DP" refers to it);
--               the 0.4.x release that first shipped it is not pinned, so the
--               "0.4" row keeps the early form. "0.5": none (// dp_size).
M.sglang = {
  ["0.4"] = {rule = "tp", max_prefill_tokens = 16384, dp_attention_conservativeness = 0.3,
             dp_attention_chunk_divisor = 2,
             chunk = function(gpu_mib) return gpu_mib < 25000 and 2048 or 8192 end,
             graph_bs = function(gpu_mib, tp)
               if gpu_mib < 25000 then return tp < 4 and 8 or 80 end
               return 160
             end},
  ["0.5"] = {rule = "memory", max_prefill_tokens = 16384, dp_attention_conservativeness = 0.3,
             vlm = true},
}
M.sglang_latest = "0.5"

-- SGLang's scheduler constants (read at sgl-project/sglang: python/sglang/
-- global_config.py at 025ea29a384914a7f0f338a660238bf7a85ba42f, python/
-- sglang/srt/managers/schedule_policy.py at ad0119fdde519598c25f5c48b95dacaa2b85d607,
-- both of the 0.5 releases; 0.4's scheduler.py has the same names):
--   init_new_token_ratio 0.7 (SGLANG_INIT_NEW_TOKEN_RATIO) x
--     schedule_conservativeness (1.0 by default); min_new_token_ratio that x
--     0.14 (SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR); the decay a decode step
--     (init - min) / 600 (SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS): Scheduler.
--     __init__'s "Init new token estimation"
--   retract_decode_steps 20 (GlobalConfig)
--   clip_max_new_tokens 4096 (CLIP_MAX_NEW_TOKENS, SGLANG_CLIP_MAX_NEW_TOKENS_
--     ESTIMATION: the estimate of a request's output is clipped there)
M.sglang_scheduler = {init_new_token_ratio = 0.7, min_new_token_ratio_factor = 0.14,
                      new_token_ratio_decay_steps = 600, retract_decode_steps = 20,
                      clip_max_new_tokens = 4096, schedule_conservativeness = 1.0}

--- SGLang's new_token_ratio of a release row (M.sglang) and whether the
--- deployment runs enable_dp_attention: init, min and the decay a decode step,
--- as Scheduler.__init__ computes them ("Init new token estimation":
--- init = min(0.7 x schedule_conservativeness, 1.0), min = min(init x 0.14,
--- 1.0), decay = (init - min) / 600), schedule_conservativeness being 1.0 x
--- the row's dp_attention_conservativeness under DP attention.
function M.sglang_new_token_ratios(row, dp_attention)
  local c = M.sglang_scheduler
  local cons = c.schedule_conservativeness
  if dp_attention and row.dp_attention_conservativeness then
    cons = cons * row.dp_attention_conservativeness
  end
  local init = math.min(c.init_new_token_ratio * cons, 1.0)
  local min = math.min(init * c.min_new_token_ratio_factor, 1.0)
  return init, min, (init - min) / c.new_token_ratio_decay_steps
end

--- The row of an SGLang version ("0.4", "0.4.3", "0.5.2", "latest") and its
--- name: a release from 0.4 on takes the newest modelled row not after it;
--- an older one is an error naming the releases known.
function M.sglang_version(v)
  v = M.dated_version("sglang", v)
  if v == nil or v == "latest" then v = M.sglang_latest end
  if type(v) ~= "string" then util.raise("field 'engine_version' must be a string, got %s", type(v)) end
  local x, y = v:match("^v?(%d+)%.(%d+)")
  local key = x and (x .. "." .. y)
  if key and M.sglang[key] then return M.sglang[key], key end
  if key and (tonumber(x) > 0 or tonumber(y) > 5) then return M.sglang[M.sglang_latest], M.sglang_latest end
  util.raise("unknown SGLang release '%s' for field 'engine_version' (known: %s; a later release "
             .. "takes the newest before it)", v, table.concat(util.sorted_keys(M.sglang), ", "))
end

-- SGLang's default fraction for a multimodal model (ServerArgs.
-- adjust_mem_fraction_for_vlm, called at the end of _handle_gpu_memory_settings
-- when mem_fraction_static is not given and model_config.is_multimodal, in
-- the #10975 form of python/sglang/srt/server_args.py that the "0.5" row
-- models: read in stored copies of the index, no commit named; the 0.4
-- releases' __post_init__ was not checked for it, so the "0.4" row keeps its
-- fractions, and later forms that size graphs after capture (a fixed 8 GiB
-- instead, post_capture_kv_sizing) are not modelled): with vision_config's
-- num_hidden_layers L (24 when absent) and hidden_size H (1024), complexity
-- c = L H^2 / (24 x 1024^2) (ViT-L/14), the fraction is multiplied by 0.95 x
-- clamp(1 - 0.1 (c - 1), 0.8, 1.05), unrounded. The catalog's vision.layers
-- and vision.hidden are those two keys (config.json vision_config).
M.sglang_vlm = {base = 0.95, sensitivity = 0.1, lo = 0.8, hi = 1.05, layers = 24, hidden = 1024}

--- The factor SGLang multiplies its default mem_fraction_static by for a
--- model with vision tower v (M.sglang_vlm), or nil without one.
function M.sglang_vlm_factor(v)
  if v == nil then return nil end
  local c = M.sglang_vlm
  local L, H = v.layers or c.layers, v.hidden or c.hidden
  local ratio = L * H * H / (c.layers * c.hidden * c.hidden)
  local dyn = math.max(c.lo, math.min(c.hi, 1.0 - c.sensitivity * (ratio - 1.0)))
  return c.base * dyn
end

-- SGLang's memory defaults by the GPU's memory, tp and pp, and the CUDA-graph
-- batch sizes it captures, are the core's (engine/core/predict.c
-- sglang_memory_defaults, graph_sizes: server_args.py
-- _handle_gpu_memory_settings, _generate_cuda_graph_batch_sizes); kv.deploy
-- lists them in d.sglang_defaults.

-- ---- TensorRT-LLM ------------------------------------------------------------
--
-- What TensorRT-LLM's KV budget subtracts, per backend (read in
-- https://github.com/NVIDIA/TensorRT-LLM, commit not pinned:
-- tensorrt_llm/_torch/pyexecutor/_util.py in its ExecutorConfig-era form of
-- 2025, resource_manager.py, tensorrt_llm/llmapi/llm_args.py and the C++
-- batch manager, cpp/tensorrt_llm/batch_manager/, of 2025-2026.
-- ai-dynamo/aiconfigurator PR #652 cites the same dry run at TensorRT-LLM
-- 656091bf, 2026: activation from max_num_tokens, the pool from max_seq_len):
--   pytorch   the default backend from 1.0 (trtllm-serve --backend, the LLM
--             API). tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator:
--             _create_dummy_context_requests makes context requests of
--             min(max_seq_len - 1, max_num_tokens) tokens until they hold
--             max_num_tokens in all, each asking for one output token (no
--             sampling parameters: greedy); estimate_max_tokens runs them
--             after reset_peak_memory_stats and takes peak_memory = the
--             torch allocator's peak (the weights in it) + what the device
--             uses outside torch afterwards ("e.g., NCCL and CUDA graphs";
--             total - free counts the CUDA context too), and _cal_max_tokens
--             keeps (total - peak + the estimation run's own KV cache) x
--             free_gpu_memory_fraction (0.9 when unset,
--             _get_free_gpu_memory_fraction), in tokens of
--             _get_cache_size_per_token, capped by kv_cache_config.max_tokens.
--             The pool is max_tokens // tokens_per_block blocks
--             (resource_manager.py KVCacheManager.calculate_max_num_blocks),
--             tokens_per_block 32 (llm_args.py KvCacheConfig).
--   tensorrt  the engine path (the default before 1.0): cpp/tensorrt_llm/
--             batch_manager/kvCacheManager.cpp BaseKVCacheManager::
--             calculateFreeMemBytes takes free_gpu_memory_fraction of the
--             memory free once the engine is loaded (its weights, the
--             execution context's activation memory that TensorRT's builder
--             sized for max_num_tokens, the runtime buffers, the CUDA
--             context), and calculateMaxNumBlocks ceil(tokens /
--             tokens_per_block) blocks of 64 tokens (the engine's build
--             default). The activation term is TensorRT's own and is not
--             predicted: give `activation`.
-- Either way the ledger's trtllm rule is kv = f x (total - weights -
-- activation - non-torch), the same as the code's.
-- The runtime limits of each row: max_batch_size (the requests a step
-- schedules) and max_num_tokens (the tokens of a step), the limits of the
-- scheduler, not of the memory profile's dummy run. Both default to
-- BuildConfig's, max_batch_size 2048 and max_num_tokens 8192
-- (tensorrt_llm/builder.py BuildConfig, read at NVIDIA/TensorRT-LLM
-- 008b2b8d23af95e4e19fa6f354f9c5f6349b2bfc). The LLM API (and trtllm-serve,
-- trtllm-bench without their own) makes a BuildConfig of them when none is
-- given and, on the PyTorch backend, copies them to the runtime
-- (tensorrt_llm/llmapi/llm_args.py BaseLlmArgs.init_build_config and
-- set_runtime_knobs_from_build_config, read at fcd3f31682808ae56118ae43c1d7864a3a945e6f,
-- a 1.0 release candidate); the engine path's engine is built with them.
-- Before 1.0 the engine is built with trtllm-build's defaults: max_num_tokens
-- 8192 and max_batch_size 256 from 0.11 ("[BREAKING CHANGE] max_batch_size in
-- trtllm-build command is 256 by default now", "max_num_tokens ... 8192 by
-- default now": NVIDIA/TensorRT-LLM pull request 1763, the update of
-- 2024-06-11; docs/source/features/paged-attention-ifb-scheduler.md as pull
-- request 10283 quotes it: "max_num_tokens is set to 8192 by default starting
-- from v0.11"), max_batch_size 2048 from
-- the update of 2024-09-24 (pull request 2253: "The default max_batch_size of
-- trtllm-build command is set to 2048"), first released in 0.14 (assumed: the
-- update reached main after 0.13 was branched).
-- 0.5 to 0.7: the engine of each example's build script, run by the C++
-- GptSession (static batching) or the batch manager. examples/llama/build.py
-- (read at NVIDIA/TensorRT-LLM 027cd518e3b63809a5c5799187991e7f1164fb12, the
-- 0.5 era: TensorRT 9.1's --strongly_typed, gptSessionBenchmark's
-- session.setup(batchSize, beamWidth, maxSequenceLength, ...)): --max_batch_size
-- 8, --max_input_len 2048, --max_num_tokens None, --tokens_per_block 64,
-- --paged_kv_cache and --use_inflight_batching off; unset, max_num_tokens is
-- max_batch_size x max_input_len (with --remove_input_padding the engine's
-- packed input holds the whole batch's prompts: gptSessionBenchmark at the
-- same commit shapes them {1, batchSize * maxInputLength}), so a step takes
-- every prompt of a batch the engine was built for. docs/source/
-- performance.md of the 0.6.1 tables (read at 138f96d45f90b9667426f7c47297d8c06bafac73:
-- "updated for v0.6.1", the L40S and first-token tables "from TensorRT-LLM
-- v0.5") measures them with gptSessionBenchmark (a static batch) on engines of
-- that build.py without --paged_kv_cache. The KV fraction: the batch
-- manager's KvCacheConfig default 0.85 until 0.8.0 ("Increase default
-- freeGpuMemoryFraction parameter from 0.85 to 0.9", docs/source/
-- release-notes.md, release 0.8.0, read at 001eaecea63dd6bdbfd02aed1bf8dc7fad567bd0);
-- 0.5's GptSession sized its paged cache to the batch, batchSize x beamWidth
-- x max_seq_len (runtime/gptSession.cpp createKvCacheManagers,
-- maxTokensInPagedKvCache unset), which a static batch fits by construction.
-- The capacity scheduler of the batch manager (GUARANTEED_NO_EVICT by
-- default) is kvplan's no_evict; a static batch of equal requests is
-- scheduled the same by it.
-- 0.8 to 0.10 (trtllm-build and the unified workflow: release 0.8.0
-- "Migrate models to the new build workflow"; 0.10 "Set the default
-- tokens_per_block argument of the trtllm-build command to 64") are not
-- modelled: trtllm-build's defaults of those releases were not read, and the
-- 0.8 row is an error saying so rather than falling back to 0.5's build
-- script.
M.trtllm = {
  ["0.5"] = {backend = "tensorrt", max_batch_size = 8, max_input_len = 2048, fraction = 0.85},
  ["0.8"] = {unmodelled = "0.8 to 0.10 (trtllm-build's defaults of those releases were not read)"},
  ["0.11"] = {backend = "tensorrt", max_batch_size = 256, max_num_tokens = 8192},
  ["0.14"] = {backend = "tensorrt", max_batch_size = 2048, max_num_tokens = 8192},
  -- 0.21 and later 0.x: the TensorRT engine by default
  ["0.21"] = {backend = "tensorrt", max_batch_size = 2048, max_num_tokens = 8192},
  -- 1.0 and later: the PyTorch backend by default
  ["1.0"] = {backend = "pytorch", max_batch_size = 2048, max_num_tokens = 8192},
}
M.trtllm_latest = "1.0"
M.trtllm_tokens_per_block = {pytorch = 32, tensorrt = 64}
-- Whole blocks of the pool: ceil(max_tokens / tokens_per_block), as the C++
-- BaseKVCacheManager::calculateMaxNumBlocks takes tc::ceilDiv (cpp/
-- tensorrt_llm/batch_manager/kvCacheManager.cpp, the stored copy of 2025 with
-- windowSizeToLayers; commit not pinned) and as TensorRT-LLM 1.1.0rc3's
-- PyTorch backend allocates (tests/validation/trtllm-spark-gpt-oss-120b-
-- gb10.log: max_tokens 86711, "Allocated 5.95 GiB for max tokens in paged KV
-- cache (86720)", 2710 x 32). resource_manager.py at NVIDIA/TensorRT-LLM
-- 001541bad83b84ae4c5c4a279e464572d5f690f7 keeps int(max_tokens //
-- tokens_per_block) in its single-window "Standard case" (one block fewer);
-- the release that does so was not pinned, so kvplan keeps the rounding the
-- log shows (the ledger's size_pool, engine/core/ledger.c).
--
-- TensorRT-LLM's attention windows: either backend gives every layer one
-- window, max_seq_len, unless kv_cache_config.max_attention_window is set
-- (KVCacheManager.__init__ at 001541bad83b: "Use max_seq_len as default
-- max_attention_window"; the executor's KvCacheConfig keeps it optional), so
-- a sliding-window layer keeps every token of its sequence in the pool: the
-- ledger counts TensorRT-LLM's sliding and chunked layers as full
-- (engine/core/ledger.c pool_layer). The 1.1.0rc3 log above runs
-- gpt-oss-120b (sliding layers of 128 tokens) so: "Adjusted
-- max_attention_window_vec to [86720]". A max_attention_window list
-- (variable sliding window attention: a pool per window size, each its share
-- c_w w / sum c_v v of the memory, c_w the bytes a token of its layers,
-- BlockManager::calculateWindowSizeToShare) is not modelled.
-- the dummy run's max_num_tokens and the KV fraction when unset
-- (KvCacheConfig.free_gpu_memory_fraction 0.9); max_batch_size as the rows'
M.trtllm_defaults = {max_num_tokens = 8192, max_batch_size = 2048, fraction = 0.9}

--- The row of a TensorRT-LLM version ("0.21.0", "1.0", "1.2.0rc1",
--- "latest") and its name: a release takes the newest row not after it; one
--- before the oldest row, or whose row is `unmodelled` (0.8 to 0.10), is an
--- error naming the releases known.
function M.trtllm_version(v)
  v = M.dated_version("trtllm", v)
  if v == nil or v == "latest" then v = M.trtllm_latest end
  if type(v) ~= "string" then util.raise("field 'engine_version' must be a string, got %s", type(v)) end
  local x, y = v:match("^v?(%d+)%.(%d+)")
  local known = util.sorted_keys(M.trtllm)
  table.sort(known, version_order)
  local key
  if x then
    for _, k in ipairs(known) do
      if not version_order(x .. "." .. y, k) then key = k end
    end
  end
  local names = {}
  for _, k in ipairs(known) do
    if not M.trtllm[k].unmodelled then names[#names + 1] = k end
  end
  if key == nil then
    util.raise("unknown TensorRT-LLM release '%s' for field 'engine_version' (known: %s; a later "
               .. "release takes the newest before it)", v, table.concat(names, ", "))
  end
  if M.trtllm[key].unmodelled then
    util.raise("TensorRT-LLM release '%s' for field 'engine_version' is not modelled: releases %s "
               .. "(known: %s)", v, M.trtllm[key].unmodelled, table.concat(names, ", "))
  end
  return M.trtllm[key], key
end

--- TensorRT-LLM's PyTorch backend's dummy run, as the activation model's
--- settings: the dummy context requests' forward of max_num_tokens tokens
--- through the layer model of predict.c, eager (the backend runs without
--- torch.compile unless torch_compile_config is set, and the context
--- requests run outside CUDA graphs), the MoE term at its high end
--- (TensorRT-LLM's fused MoE kernels are its own: the range covers both
--- ends), and the greedy sampler on the last token of each request, R =
--- ceil(N / min(max_seq_len - 1, N)) rows of the vocabulary at c = b + 8
--- (the logits, an fp32 copy and its softmax: an upper bound of a greedy
--- step; the FlashInfer sampler's end of the sampler term). An estimate: no
--- public TensorRT-LLM log with the inputs was found to check it.
M.trtllm_profile = {eager = true, moe_cache13 = false, flashinfer_sampler = true, moe_chunk = 0}

--- Non-torch memory TensorRT-LLM's PyTorch backend subtracts, per GPU. The
--- code counts everything the device uses outside torch after the dummy run
--- (total - free - torch's), the CUDA context included: the composition of
--- vLLM's context_counted releases (M.non_torch: the base, NCCL's and the
--- custom all-reduce's buffers, the context), with NCCL's buffers counted.
--- The base's and the context's ranges are vLLM's (no TensorRT-LLM log
--- states the figure), and the CUDA graphs
--- TensorRT-LLM captured before the estimation are outside this range when
--- their pool is not torch's: an assumption, stated in docs/predictions.md.
M.trtllm_non_torch = {nccl_counted = true, context_counted = true}

-- ---- SGLang's weights as free memory measures them -------------------------
--
-- SGLang reads the loaded weights and sizes its pool from free memory
-- (get_available_gpu_memory: torch.cuda.mem_get_info after empty_cache,
-- python/sglang/srt/utils.py), so what PyTorch's caching allocator holds for
-- the parameters counts, not their bytes: a request is rounded to 512 bytes
-- (kMinBlockSize); one of at most 1 MiB (kSmallSize) comes from 2 MiB
-- segments (kSmallBuffer), split down to 512 bytes; one under 10 MiB
-- (kMinLargeAlloc) from 20 MiB segments (kLargeBuffer); a larger one gets a
-- segment of its size rounded up to 2 MiB (kRoundLarge); a large-pool block
-- is split when more than 1 MiB would remain; a request takes the smallest
-- free block that holds it (get_free_block's lower_bound) before a new
-- segment (c10/cuda/CUDACachingAllocator.cpp round_size, get_pool,
-- get_allocation_size, should_split, get_free_block at pytorch/pytorch
-- eb42ad6eca0c; the same rules in the hipified allocator of ROCm builds).
-- PYTORCH_CUDA_ALLOC_CONF unset (no expandable segments, no max_split_size).
M.torch_alloc = {min_block = 512, small_size = 1048576, small_buffer = 2097152,
                 large_buffer = 20971520, min_large_alloc = 10485760, round_large = 2097152}

--- The bytes of the segments PyTorch's caching allocator holds after the
--- allocations of `sizes` (bytes, in order, none freed): the rules above
--- replayed by the core (engine/core/predict.c kvp_torch_segments).
function M.torch_segments(sizes)
  return require("kvplan.predict_core").torch_segments(M.torch_alloc, sizes)
end

-- The families whose SGLang model files kvplan lists the parameters of, in
-- the order their modules create them (python/sglang/srt/models/llama.py,
-- qwen2.py, qwen3.py, qwen3_moe.py, mixtral.py: embed_tokens; a layer's
-- self_attn (QKVParallelLinear qkv_proj with Qwen2's bias, RowParallelLinear
-- o_proj, the rotary table of get_rope at the first layer, Qwen3's q_norm and
-- k_norm), its mlp (MergedColumnParallelLinear gate_up_proj and down_proj; a
-- MoE block's FusedMoE w13_weight and w2_weight, then its ReplicatedLinear
-- gate), its two RMSNorms; the final norm; lm_head unless tied).
local sglang_param_families = {llama = "dense", mistral = "dense", qwen2 = "dense",
                               qwen3 = "dense", qwen3_moe = "moe", mixtral = "moe"}

-- Bytes of one tensor of rows x cols elements in format f, and its fp32
-- block scales (fp8-bHxW: ceil(rows / H) x ceil(cols / W), Fp8LinearMethod's
-- weight_scale_inv); nil for a format whose tensors are not listed.
local function tensor_parts(f, rows, cols)
  local n = f.name
  if n == "bf16" or n == "fp16" or n == "fp32" or n == "fp8" then
    return {rows * cols * (f.bits // 8)}
  end
  local bh, bw = n:match("^fp8%-b(%d+)x(%d+)$")
  if bh then
    local h, w = tonumber(bh) // 1, tonumber(bw) // 1
    return {rows * cols, ((rows + h - 1) // h) * ((cols + w - 1) // w) * 4}
  end
  return nil
end

--- SGLang's allocator slack on one GPU of a deployment: the caching
--- allocator's segments for the model's parameters on one tp rank
--- (M.torch_segments) less their bytes, the rotary tables (`rotary`, bytes,
--- allocated after the first layer's o_proj) counted among them; nil for a
--- model whose parameters kvplan does not list (another family, pipeline
--- parallelism, expert parallelism or attention DP, a format not plain or
--- fp8) -- then nothing is added. fmt(k): weight class k's format.
function M.sglang_alloc_slack(m, tp, fmt, rotary)
  local kind = sglang_param_families[m.family or ""]
  if kind == nil or rawget(m, "vision") or rawget(m, "mla") then return nil end
  local H, L, D = m.hidden, m.layers, m.head_dim
  local heads, kvh, V = m.heads, m.kv_heads or m.heads, m.vocab
  if not (H and L and D and heads and V) or heads % tp ~= 0 then return nil end
  if (kind == "moe") ~= (m.experts ~= nil) or (kind == "moe" and (m.shared_experts or 0) > 0) then
    return nil
  end
  local sizes, sum, ok = {}, 0, true
  local function add(parts)
    if parts == nil then ok = false return end
    for _, b in ipairs(parts) do sizes[#sizes + 1] = b; sum = sum + b end
  end
  local dt = m:dtype_format()
  local function lin(k, rows, cols) add(tensor_parts(fmt(k), rows, cols)) end
  local function vec(n) add(tensor_parts(dt, 1, n)) end
  local vr = (V + tp - 1) // tp
  lin("embeddings", vr, H)
  local q = heads // tp
  local kv = kvh >= tp and (kvh + tp - 1) // tp or 1 -- replicated below tp
  local I = m.intermediate and (m.intermediate + tp - 1) // tp
  for l = 1, L do
    lin("attention", (q + 2 * kv) * D, H)
    if m.family == "qwen2" then vec((q + 2 * kv) * D) end
    lin("attention", H, q * D)
    if l == 1 and rotary and rotary > 0 then add({rotary}) end
    if m.family == "qwen3" or m.family == "qwen3_moe" then vec(D); vec(D) end
    if kind == "moe" then
      local E, Im = m.experts, (m.moe_intermediate or m.intermediate) // tp
      if not (E and Im and Im > 0) then return nil end
      lin("experts", E * 2 * Im, H) -- w13_weight (E, 2 Im, H): one tensor
      lin("experts", E * H, Im)     -- w2_weight (E, H, Im)
      add(tensor_parts(fmt("other"), E, H)) -- the router
    else
      if not I then return nil end
      lin("mlp", 2 * I, H)
      lin("mlp", H, I)
    end
    vec(H); vec(H)
  end
  vec(H)
  if not (m.tie_embeddings or rawget(m, "no_lm_head")) then lin("lm_head", vr, H) end
  if not ok then return nil end
  return M.torch_segments(sizes) - sum
end

-- The publication date of each modelled release (its x.y.0, the first
-- release a row models), where one was found: the date a measurement of a
-- given day could have run it (M.release_at). A row without a date here is
-- one whose release date was not found; a date where it could be the
-- newest is refused (M.release_at says which). Sources:
-- vLLM
--   0.6   2024-09-05: the vLLM blog "vLLM v0.6.0: 2.7x Throughput
--         Improvement and 5x Latency Reduction" (blog.vllm.ai/2024/09/05/
--         perf-update.html) announces v0.6.0 as out; the tag may be a day
--         older (not read)
--   0.7   2025-01-27: the vLLM blog's V1 alpha post (blog.vllm.ai/2025/01/
--         27/v1-alpha-release.html), the alpha that v0.7.0 ships; release
--         tracker vllm-project/vllm#12365 (opened 2025-01-23, "ETA
--         1/23-1/24"); France-Travail/happy_vllm#56 "Update vllm to 0.7.0"
--         of 2025-01-29
--   0.8   2025-03-19, the date by which v0.8.0 was out (EuroEval/EuroEval#852,
--         2025-03-19: "Update `vllm` to `>=0.8.0`"); its tag date was not read
--   0.9   2025-05-28: vllm-project/vllm#18539, DarkLight1337 on 2025-05-28:
--         "v0.9.0 has been released!" (2025-05-22: "We haven't officially
--         released v0.9.0 yet")
--   0.10  not found (v0.10.0 of July 2025: no dated source read), so a date
--         between 0.9's and 0.11's is refused
--   0.11  2025-10-02 (docs/predictions.md: "after 0.11.0 of 2025-10-02",
--         beside vllm-project/vllm#27370)
--   0.14  2026-01-23 (the v0.14.0 vllm-project/vllm-ascend#6181 ports
--         against, as vllm_max_model_len_auto_release above)
--   0.20  2026-04-27 (its release notes, as utilization above)
--   0.21  2026-05-15: the GitHub release v0.21.0 by khluu, "May 15, 08:44"
--         (the release feed quoted in a daily digest of 2026-05-15)
--   0.29  2026-09-09: the GitHub release v0.29.0 by khluu, "Sep 9, 08:54"
--         (the same digest, 2026-09-10)
-- SGLang
--   0.4   2024-12-04 (v0.4.0, as dp_attention_conservativeness above)
--   0.5   not found
-- TensorRT-LLM: no release date was read (0.5, 0.11, 0.14, 0.21, 1.0):
--   every date is refused
M.release_dates = {
  vllm = {["0.6"] = "2024-09-05", ["0.7"] = "2025-01-27", ["0.8"] = "2025-03-19",
          ["0.9"] = "2025-05-28", ["0.11"] = "2025-10-02", ["0.14"] = "2026-01-23",
          ["0.20"] = "2026-04-27", ["0.21"] = "2026-05-15", ["0.29"] = "2026-09-09"},
  sglang = {["0.4"] = "2024-12-04"},
  trtllm = {},
}
local release_rows = {vllm = function() return M.vllm end, sglang = function() return M.sglang end,
                      trtllm = function() return M.trtllm end}
local engine_names = {vllm = "vLLM", sglang = "SGLang", trtllm = "TensorRT-LLM"}
-- The release table of an engine by its budget name, for `who`'s error
local function engine_rows(engine, who)
  local rows = release_rows[engine]
  if rows == nil then
    util.raise("%s: unknown engine '%s' (expected vllm, sglang or trtllm)", who, util.shown(engine))
  end
  return rows
end
-- a release table's rows in release order, without vLLM's "0.7-v1" (0.7's
-- V1 engine, not a release of its own)
local function release_keys(rows)
  local keys = {}
  for k in pairs(rows) do
    if not k:find("v1") then keys[#keys + 1] = k end
  end
  table.sort(keys, version_order)
  return keys
end

--- A calendar date "YYYY-MM-DD" (a string) as its number YYYYMMDD; anything
--- else (another form, a month or day that does not exist) is an error
--- naming `what` and the value.
function M.date_number(s, what)
  what = what or "date"
  local y, m, d
  if type(s) == "string" then y, m, d = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$") end
  if not y then
    util.raise("%s: expected a date YYYY-MM-DD, got %s", what,
               type(s) == "string" and ("'" .. s .. "'") or type(s))
  end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  local leap = (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
  local days = ({31, leap and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31})[m]
  if days == nil or d < 1 or d > days then
    util.raise("%s: '%s' is not a calendar date (expected YYYY-MM-DD)", what, s)
  end
  return y * 10000 + m * 100 + d
end

--- The newest modelled release of engine `engine` ("vllm", "sglang",
--- "trtllm") published on or before `date` ("YYYY-MM-DD", M.release_dates),
--- or nil, why there is none and which case it is: "before" (the date is
--- before the oldest modelled release), "unknown" (a release whose date was
--- not found could be the newest) or "unmodelled" (a row kvplan does not
--- model: TensorRT-LLM 0.8 to 0.10). A malformed date or an unknown engine
--- is an error.
function M.release_at(engine, date)
  local rows = engine_rows(engine, "release_at")
  local n = M.date_number(date, "release_at: field 'date'")
  local dates, name = M.release_dates[engine], engine_names[engine]
  local keys = release_keys(rows())
  local at
  for i, k in ipairs(keys) do
    if dates[k] and M.date_number(dates[k], "release_dates." .. engine) <= n then at = i end
  end
  if at == nil then
    if dates[keys[1]] == nil then
      return nil, string.format("%s %s's release date is not known: the release of %s cannot be named",
                                name, keys[1], date), "unknown"
    end
    return nil, string.format("%s is before %s %s (%s), the oldest modelled", date, name, keys[1],
                              dates[keys[1]]), "before"
  end
  local nxt = keys[at + 1]
  if nxt and dates[nxt] == nil then
    return nil, string.format("%s is after %s %s (%s), and %s %s's release date is not known",
                              date, name, keys[at], dates[keys[at]], name, nxt), "unknown"
  end
  local k = keys[at]
  if rows()[k].unmodelled then
    return nil, string.format("%s %s, the release of %s, is not modelled: %s", name, k, date,
                              rows()[k].unmodelled), "unmodelled"
  end
  return k
end

--- The oldest modelled release of engine `engine` (its first row; vLLM's
--- "0.6").
function M.oldest_release(engine)
  local rows = engine_rows(engine, "oldest_release")
  local keys = release_keys(rows())
  return keys[1]
end

--- An engine_version of the form "@YYYY-MM-DD" (the release a deployment
--- of that day ran: the newest modelled release of `engine` published on or
--- before it, M.release_at) as that release; any other value unchanged. A
--- date that names no release (before the oldest modelled, or where a
--- release whose date is not known could be it) or is malformed is an
--- error naming the field and why.
function M.dated_version(engine, v)
  if type(v) ~= "string" or v:sub(1, 1) ~= "@" then return v end
  M.date_number(v:sub(2), string.format("field 'engine_version' = '%s'", v))
  local r, why = M.release_at(engine, v:sub(2))
  if r == nil then util.raise("field 'engine_version' = '%s' names no release: %s", v, why) end
  return r
end

--- vLLM's newest modelled release published on or before `date`
--- (M.release_at("vllm", date)).
function M.vllm_release_at(date)
  return M.release_at("vllm", date)
end

return M
