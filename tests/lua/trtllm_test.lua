-- tests/lua/trtllm_test.lua: TensorRT-LLM's own expectations about its KV
-- pool, through kv.deploy{engine = "trtllm"} (the ledger's trtllm rule,
-- engine/core/ledger.c; the constants and their sources, stdlib/kvplan/
-- engines.lua "TensorRT-LLM"). What was read and what is not applicable:
-- docs/predictions.md, "TensorRT-LLM's and SGLang's own tests".
local kv = require "kvplan"
local check = require "check"

-- tests/unittest/_torch/test_resource_manager.py
-- test_calculate_max_num_blocks_from_cpp, case 2 (a stored copy of 2025; the
-- index's copies at NVIDIA/TensorRT-LLM 2133cc8106c3 and 0709cededc48 predate
-- the test): 4 attention layers of 8 KV heads, head_size 64 / 64 = 1, fp16,
-- torch.cuda.mem_get_info mocked to 128 MB free, free_gpu_memory_fraction
-- 0.1, no max_gpu_total_bytes: the primary pool is int(free x 0.1) =
-- 13421772 bytes. Free memory is what the dry run leaves: no weights,
-- activation or non-torch memory here.
local m = kv.model{id = "trtllm-test-4l", layers = 4, hidden = 64, heads = 64, kv_heads = 8,
                   head_dim = 1, params = 0, max_context = 128}
local d = kv.deploy{model = m, gpu_memory = 128 * 2^20, kv = "fp16", engine = "trtllm",
                    engine_version = "1.0", kv_cache_free_gpu_memory_fraction = 0.1,
                    activation = 0, overhead = 0}
local l = d:ledger()
check.eq(l.kv_budget, 13421772, "primary pool bytes: int(128 MiB x 0.1)")
-- 2 x 4 x 8 x 1 x 2 = 128 bytes a token: 104857 tokens, in kvplan's single
-- window ceil(104857 / 32) = 3277 blocks (calculateMaxNumBlocks' ceilDiv;
-- the test's two windows, 64 and 128, split the pool between them: variable
-- sliding windows are not modelled)
check.eq(d.block, 32, "tokens_per_block 32 (KvCacheConfig)")
check.eq(l.kv_blocks, 3277, "ceil(104857 / 32)")

-- Every layer one attention window, max_seq_len, when
-- kv_cache_config.max_attention_window is not set (KVCacheManager.__init__,
-- "Use max_seq_len as default max_attention_window", resource_manager.py at
-- NVIDIA/TensorRT-LLM 001541bad83b84ae4c5c4a279e464572d5f690f7; 1.1.0rc3
-- runs gpt-oss-120b so, tests/validation/trtllm-spark-gpt-oss-120b-gb10.log:
-- "Adjusted max_attention_window_vec to [86720]"): a sliding-window model's
-- request of n tokens takes ceil(n / 32) blocks of every layer, its sliding
-- layers' too. gpt-oss-20b (12 sliding layers of window 128, 12 full) on an
-- H100 at max_seq_len 32768: 39904 blocks, 38 requests of 32768 (39904 //
-- 1024); counting the sliding layers at their window, as vLLM's pool does,
-- gave 77
local g = kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm", engine = "trtllm", engine_version = "1.0",
                    max_model_len = 32768}
local gl = g:ledger()
check.eq(gl.kv_blocks, 39904, "gpt-oss-20b's pool")
check.eq(gl:max_concurrency(32768), 39904 // 1024, "sliding layers hold every token")
check.eq(gl:max_concurrency(1000), 39904 // 32, "ceil(1000 / 32) = 32 blocks a request")
check.eq(g:starts(), true, "it starts")
-- vLLM's pool frees the window's blocks (a sliding layer takes at most
-- cdiv(127 + max_num_batched_tokens, 16) + 1 of its own): 66 requests from
-- 53.7 GB of KV against TensorRT-LLM's 38 from 62.8 (vLLM 0.11's budget, the
-- release these figures were counted under)
local v = kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm", max_model_len = 32768,
                    engine_version = "0.11"}:ledger()
check.eq(gl.kv_budget, 62763360800, "TensorRT-LLM's budget")
check.eq(v.kv_budget, 53691941105, "vLLM's budget")
check.eq(v:max_concurrency(32768), 66, "vLLM's hybrid groups are not TensorRT-LLM's single window")
