-- tests/lua/vllm_test.lua: vLLM's switches and overrides by vLLM's names,
-- its startup check and each worker's view of the pool (engine/core/vllm_kv.c).
-- Expected numbers: vllm-project/vllm tests/v1/core/test_kv_cache_utils.py at
-- commit 002f10e0cfa1373a19a0d2756598a34b700d20e5
-- (https://github.com/vllm-project/vllm/blob/002f10e0cfa1373a19a0d2756598a34b700d20e5/tests/v1/core/test_kv_cache_utils.py).
local kv = require "kvplan"
local check = require "check"
local GiB = kv.units.GiB

-- some of a ledger's fields, as one string
local function row(l, ...)
  local t = {}
  for i, k in ipairs{...} do t[i] = tostring(l[k]) end
  return table.concat(t, " ")
end

-- test_estimate_max_model_len: 32 layers of 32 KV heads of 128 in fp16 and
-- 8 GiB of KV memory: vLLM refuses max_model_len 16385 and suggests 16384
-- (the rules of vLLM 0.11, pinned: that commit's check plans against every
-- block, before the null block of vllm-project/vllm#47272, the 0.29 row's)
local qwen = kv.model{id = "qwen1.5-7b-kv", layers = 32, hidden = 4096, heads = 32,
                      kv_heads = 32, head_dim = 128, params = 0, max_context = 32768}
local d = kv.deploy{model = qwen, gpu_memory = "80 GiB", kv = "fp16", max_model_len = 16385,
                    max_num_batched_tokens = 32768, kv_cache_memory_bytes = "8 GiB",
                    engine_version = "0.11"}
local l = d:ledger()
check.eq(l.kv_budget, 8 * GiB, "kv_cache_memory_bytes is the KV budget")
check.eq(l.usable, 80 * GiB, "kv_cache_memory_bytes ignores gpu_memory_utilization")
check.eq(l.vllm_starts, false, "16385 does not start")
check.eq(l.vllm_max_model_len, 16384, "vLLM's estimate")
check.eq(l.vllm_kv_needed, 1025 * 16 * 524288, "one request of 16385 tokens")
check.eq(l:max_context(1), 1023 * 16, "kvplan's admission answer keeps the null block aside")
l = d:with{max_model_len = 16383}:ledger()
check.eq(l.vllm_starts, true, "16383 starts")
check.eq(l.vllm_max_model_len, 16383, "the estimate is max_model_len when it starts")

-- kv_cache_memory_bytes = 0 is vLLM's unset: determine_available_memory
-- (vllm/v1/worker/gpu_worker.py at 35d5cda123ec) takes the value only when
-- truthy and profiles with gpu_memory_utilization otherwise
local z, u = d:with{kv_cache_memory_bytes = 0}:ledger(), d:with{kv_cache_memory_bytes = false}:ledger()
check.eq(row(z, "kv_budget", "usable", "kv_blocks", "vllm_starts"),
         row(u, "kv_budget", "usable", "kv_blocks", "vllm_starts"), "0 is unset")
check.eq(z.usable, math.floor(80 * GiB * 0.9), "gpu_memory_utilization applies")
-- and said so where the ledger is shown (kvplan ledger, kvplan startup): the
-- margin held back by utilization names the 0
local function margin_note(dd)
  for _, it in ipairs(kv.report.ledger_items(dd, 16383, 1)) do
    if it.item == "margin" then return it.note end
  end
end
local dz = d:with{max_model_len = 16383, kv_cache_memory_bytes = 0}
check.eq(margin_note(dz), "held back by utilization 0.90 (kv_cache_memory_bytes = 0 is vLLM's "
         .. "unset: the budget is profiled with gpu_memory_utilization)", "the 0 is not silent")
check.eq(margin_note(d:with{max_model_len = 16383, kv_cache_memory_bytes = false}),
         "held back by utilization 0.90", "unset says nothing of it")
check.eq(margin_note(d:with{max_model_len = 16383}),
         "none held back: kv_cache_memory_bytes ignores gpu_memory_utilization",
         "a pinned KV budget holds nothing back")

-- test_get_max_concurrency_for_kv_cache_config: num_blocks 1536 of 1024 a request
l = d:with{max_model_len = 16384, kv_cache_memory_bytes = false,
           num_gpu_blocks_override = 1536}:ledger()
check.eq(l.kv_blocks, 1536, "num_gpu_blocks_override")
check.eq(l.vllm_max_concurrency, 1.5, "vLLM's maximum concurrency")

-- the startup check by release (engines.lua check_override, check_null_block):
-- vllm-project/vllm#47272's test_kv_cache_reserves_null_block_for_max_model_len,
-- a pool of 32 blocks of 16 for max_model_len 512, refused from 0.29 on; the
-- ledger's own answer (496 tokens beside the null block) agrees with vLLM's
-- estimate from then on
local tiny = kv.model{id = "t", layers = 1, hidden = 128, heads = 4, kv_heads = 2, head_dim = 64,
                      params = 0}
local function tiny_at(v)
  return kv.deploy{model = tiny, kv = "fp32", gpu_memory = 524288, utilization = 1,
                   activation = 0, overhead = 0, max_model_len = 512, engine_version = v}:ledger()
end
for _, v in ipairs{"0.10.1", "0.28"} do
  local lt = tiny_at(v)
  check.eq(row(lt, "kv_blocks", "vllm_starts", "vllm_max_model_len"), "32 true 512",
           v .. " checks all 32 blocks")
end
local lt = tiny_at("0.29.0")
check.eq(row(lt, "kv_blocks", "vllm_starts", "vllm_max_model_len"), "32 false 496",
         "0.29 checks 31 blocks, the null block set aside")
check.eq(lt:max_context(1), 496, "the ledger agrees: 496 tokens fit beside the null block")
check.eq(lt:fit(512, 1), false, "and the engine does not start")
-- num_gpu_blocks_override in the check (vllm-project/vllm#41069, from 0.21
-- on): 32 blocks of 16 on an H100 are 512 tokens, whatever memory is left
local function l8_override(v)
  return kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", num_gpu_blocks_override = 32,
                   max_model_len = 16384, activation = 0, overhead = 0,
                   engine_version = v}:ledger()
end
local lo = l8_override("0.20")
check.eq(row(lo, "kv_blocks", "vllm_starts", "vllm_max_model_len"), "32 true 16384",
         "0.20 checks the measured memory")
lo = l8_override("0.21")
check.eq(row(lo, "kv_blocks", "vllm_starts", "vllm_max_model_len"), "32 false 512",
         "0.21 checks the override's 32 blocks")
lo = l8_override("0.29")
check.eq(row(lo, "vllm_starts", "vllm_max_model_len"), "false 496", "0.29: 31 of them")

-- decode context parallelism beside Mamba layers (Qwen3-Next: 36 linear
-- attention states, 12 full layers of 2 KV heads): the attention group's
-- block spans dcp x its block, the Mamba groups keep theirs (at dcp 1,
-- vllm/v1/core/kv_cache_coordinator.py dcp_world_size_for_kv_cache_spec at
-- 00b08dc44519); vLLM 0.10 refuses it. 0.11 pinned: its "GPU KV cache size"
-- (num_blocks // groups x the block); from the 0.20 row it is
-- int(max_concurrency x max_model_len), engines.lua tokens_from_concurrency
local function next_at(dcp, v)
  return kv.deploy{model = "qwen3-next-80b-a3b", gpu = "h100", tp = 4, activation = "1 GiB",
                   overhead = "1 GiB", max_model_len = 262144,
                   decode_context_parallel_size = dcp, engine_version = v or "0.11"}:ledger()
end
local n1, n2 = next_at(1), next_at(2)
check.eq(n1.group_blocks, "262144/262144/262144/272", "three Mamba groups, one attention group")
check.eq(n2.group_blocks, "262144/262144/262144/544", "dcp 2: the attention block doubles")
check.eq(n2.kv_blocks, n1.kv_blocks, "the same pages on each rank")
check.eq(row(n1, "vllm_kv_cache_tokens") .. " " .. row(n2, "vllm_kv_cache_tokens"),
         "700400 1400800", "GPU KV cache size: 10300 // 4 x 272, times dcp (10326 before the gates and norms were held whole)")
check.eq(n1:max_concurrency(262144) .. " " .. n2:max_concurrency(262144), "10 21",
         "each request holds half the attention blocks, one state each")
check.error("HybridKVCacheCoordinator asserts dcp_world_size == 1", function() next_at(2, "0.10.2") end)

-- speculative tokens grow vLLM's Gated DeltaNet conv state by a row each
-- (gated_delta_net_state_shape: conv_kernel - 1 + num_spec rows, issue 20):
-- Qwen3.6-27B at TP 2 with 3 MTP tokens holds 6 x 10240 / 2 x 2 + 24 x 128
-- x 128 x 4 = 1634304 bytes a state, so the attention block (1024 bytes a
-- token, fp8) is 16 x ceil(1634304 / 16384) = 1600, not the 1568 of
-- 1603584 bytes without them; SGLang's budget keeps the catalog's state
local function q36(spec, budget)
  return kv.deploy{model = "qwen3.6-27b", tp = 2, kv = "fp8", max_model_len = 262144,
                   engine_version = "0.20.1", gpu_memory = "11 GiB", utilization = 1, activation = 0,
                   overhead = 0, weight_bytes = 1, engine = budget, speculative = spec}
end
local s0 = q36(nil):ledger()
local s3 = q36({tokens = 3, heads = "mtp", weight_bytes = 0}):ledger()
check.eq(s0.block .. " " .. s3.block, "1568 1600", "three conv rows more raise the block")
check.eq(q36({tokens = 3, heads = "mtp", weight_bytes = 0}).model:layer(1).state_bytes,
         3207168 + 3 * 20480, "the deployment's state: three rows of 10240 x 2 bytes more")
check.eq(q36({tokens = 3, heads = "mtp", weight_bytes = 0}, "sglang").model:layer(1).state_bytes,
         3207168, "SGLang's state as the catalog's")
check.eq(kv.model("qwen3.6-27b"):layer(1).state_bytes, 3207168, "the catalog's model unchanged")

-- extract_hidden_states' hidden-state cache beside a hybrid target: its own
-- group from 0.20 (vllm-project/vllm#39949), its block the largest divisor of
-- the groups' gcd within page // its bytes a token (gpt-oss-20b: 32768 //
-- 17280 = 1); before, its KV connector turns the hybrid manager off
local function oss_hs(v)
  local dv = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = "1 GiB",
                       overhead = "1 GiB", max_model_len = 32768, engine_version = v,
                       speculative = {heads = "extract_hidden_states", hidden_states = 3, tokens = 1}}
  return dv:ledger(), dv
end
local h20, h11 = oss_hs("0.20"), oss_hs("0.11")
check.eq(row(h20, "kv_groups", "group_blocks"), "3 16/16/1", "0.20: sliding, full, the cache")
check.eq(h20:max_concurrency(32768), 4, "a block of the pool for each token of the cache")
check.eq(row(h11, "kv_groups", "group_blocks"), "1 16", "0.11: one KV type")
check.eq(select(2, oss_hs("0.11")).hybrid_off_reason,
         "extract_hidden_states in vLLM 0.11: its KV connector turns the hybrid KV cache manager off",
         "the deployment says why")
check.error("failed to convert the KV cache specs to one unified type", function()
  kv.deploy{model = "qwen3-next-80b-a3b", gpu = "h100", tp = 4, engine_version = "0.11",
            speculative = {heads = "extract_hidden_states", hidden_states = 3, tokens = 1}}:ledger()
end)
local q = kv.deploy{model = "qwen3-next-80b-a3b", gpu = "h100", tp = 4, engine_version = "0.20",
                    speculative = {heads = "extract_hidden_states", hidden_states = 3, tokens = 1},
                    max_model_len = 32768}:ledger()
check.eq(q.group_blocks, "32768/32768/32768/272/16",
         "Mamba and attention groups as without it, the cache at gcd 16 within 278528 // 12288")

-- KV cache groups by hand (kv_cache_groups), as vLLM's tests give a
-- KVCacheConfig: tests/v1/core/test_prefix_caching.py
-- make_kv_cache_config_hybrid_model(16, 21, 2), layer1 full and layer2,
-- layer3 sliding (window 32) of one KV head of size 1 in fp32, each its own
-- group, 21 blocks: vLLM's own grouping gives the same
local t3 = kv.model{id = "t3", layers = 3, hidden = 64, heads = 1, kv_heads = 1, head_dim = 1,
                    params = 0, layer_kinds = {{kind = "full"}, {kind = "sliding", window = 32, n = 2}}}
local hd = kv.deploy{model = t3, kv = "fp32", gpu_memory = "1 GiB", activation = 0, overhead = 0,
                     max_model_len = 8192, num_gpu_blocks_override = 21,
                     kv_cache_groups = {{layers = {1}}, {layers = {2}}, {layers = {3}}}}
local hl, own = hd:ledger(), hd:with{kv_cache_groups = false}:ledger()
check.eq(row(hl, "kv_groups", "group_blocks", "kv_blocks"), "3 16/16/16 21", "three groups of one layer")
check.eq(hl:seq_bytes(55), own:seq_bytes(55), "as vLLM groups them")
-- a grouping vLLM's heuristic would not make: both sliding layers in one
-- group, the full one padded to two slots (a block is two pages)
local h2 = hd:with{kv_cache_groups = {{layers = {1}}, {layers = {2, 3}}}}:ledger()
check.eq(row(h2, "kv_groups", "group_blocks"), "2 16/16", "two groups")
check.eq(h2:seq_bytes(55), 7 * 2 * 128, "4 full and 3 sliding blocks of 256 bytes")
check.error("layer 3 (sliding) is in no group", function()
  hd:with{kv_cache_groups = {{layers = {1}}, {layers = {2}}}}:ledger()
end)
check.error("holds layers of two KV specs", function()
  hd:with{kv_cache_groups = {{layers = {1, 2}}, {layers = {3}}}}:ledger()
end)
check.error("vLLM needs one page size", function()
  hd:with{kv_cache_groups = {{layers = {1}, block = 32}, {layers = {2, 3}}}}:ledger()
end)
check.error("layer 1 is already in group 1", function()
  hd:with{kv_cache_groups = {{layers = {1, 1}}}}:ledger()
end)
-- more groups than the core holds (KVP_MAX_SPECS, 16): named, not a
-- format error of the message itself
local many = {}
for i = 1, 17 do many[i] = {layers = {i}} end
check.error("field 'kv_cache_groups': layer 17 is in group 17, expected at most 16 groups", function()
  kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", kv_cache_groups = many}:ledger()
end)

-- a hybrid model: the switch puts the sliding layers in the full group
local g = kv.deploy{model = "gemma-3-27b", gpu = "h100", activation = "1 GiB",
                    overhead = "1 GiB", max_model_len = 32768}
local lh = g:ledger()
check.eq(lh.kv_groups, 7, "6 sliding groups and one full")
check.eq(lh.group_blocks, "16/16/16/16/16/16/16", "the block of each group")
local groups = lh:vllm_groups()
check.eq(#groups, 2, "two KV types")
check.eq(groups[1].kind, "sliding", "the sliding type first")
check.eq(groups[1].groups, 6, "its groups")
check.eq(groups[1].padded, false, "equal pages: no padding")
local off = g:with{disable_hybrid_kv_cache_manager = true}:ledger()
check.eq(off.kv_groups, 1, "one group")
check.eq(off:seq_bytes(8192), 62 * 512 * 16 * 8192, "every layer holds every token")
check.eq(off:max_concurrency(8192) < lh:max_concurrency(8192), true, "fewer requests")
-- the hybrid KV cache manager by release (engines.lua hybrid_manager): V0
-- and V1 before vllm-project/vllm#17996 regard sliding beside full layers as
-- full attention (#14097), the switch's own arithmetic
for _, v in ipairs{"0.6", "0.7.3", "0.8.2", "0.9"} do
  local dv = g:with{engine_version = v}
  local lv = dv:ledger()
  check.eq(lv.kv_groups, 1, v .. ": one group")
  check.eq(lv:seq_bytes(8192), off:seq_bytes(8192), v .. ": every layer holds every token")
  check.eq(dv.hybrid_off_reason, "vLLM " .. dv.engine_version .. " has no hybrid KV cache manager",
           v .. ": the deployment says why")
end
check.eq(g:with{engine_version = "0.10"}:ledger().kv_groups, 7, "0.10 groups them")
check.eq(g:with{engine_version = "0.8", disable_hybrid_kv_cache_manager = true}:ledger().kv_groups,
         1, "the switch given on 0.8 changes nothing")
check.error("vLLM 0.8 has no hybrid KV cache manager to keep on", function()
  kv.deploy{model = "gemma-3-27b", gpu = "h100", engine_version = "0.8",
            disable_hybrid_kv_cache_manager = false}
end)
check.error("attention beside recurrent layers kept their states in V0's MambaCacheManager",
            function() kv.deploy{model = "nemotron-nano-9b-v2", gpu = "h100", engine_version = "0.9"} end)
check.eq(g:with{max_num_seqs = 2}:ledger():max_concurrency(8192), 2, "max_num_seqs caps")
local fits, why, limit = g:with{max_num_seqs = 2}:ledger():fit(8192, 3)
check.eq(fits, false, "3 > max_num_seqs")
check.eq(why, "concurrency 3 exceeds max_num_seqs 2", "why")
check.eq(limit, "max_num_seqs", "limit")

-- vLLM's default max_num_seqs (vllm/engine/arg_utils.py get_batch_defaults;
-- stdlib/kvplan/engines.lua) caps the concurrency answers of a deployment
-- that names the engine: the scheduler never runs more (vllm/v1/core/sched/
-- scheduler.py Scheduler.schedule: no waiting request is taken once
-- len(self.running) == max_num_running_reqs)
local small = {model = "llama-3.1-8b", activation = "1 GiB", overhead = "1 GiB"}
local function with(t, extra)
  local o = {}
  for k, v in pairs(t) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return kv.deploy(o)
end
local plain = with(small, {gpu = "a100-sxm-80gb"}):ledger()
local kv_only = plain:max_concurrency(512)
check.eq(kv_only > 256, true, "the budget rule alone caps nothing")
local named = with(small, {gpu = "a100-sxm-80gb", engine = "vllm"}):ledger()
local n, nwhy, nlimit = named:max_concurrency(512)
check.eq(n, 256, "an A100: the server's 256 sequences")
check.eq(nlimit, "max_num_seqs", "reported as the limit")
check.eq(nwhy, string.format("vLLM's scheduler runs at most max_num_seqs 256 requests (the KV "
                             .. "cache holds %d)", kv_only), "and what the KV cache holds")
check.eq(select(3, named:max_concurrency(131072)), "none", "below the cap: the KV decides")
check.eq(select(3, named:fit(512, 257)), "max_num_seqs", "257 requests do not run")
check.eq(with(small, {gpu = "h100", engine = "vllm"}):ledger():max_concurrency(128), 1024,
         "a GPU of >= 70 GiB but an A100 at 0.11: 1024")
check.eq(with(small, {gpu = "h100", engine_version = "0.9"}):ledger():max_concurrency(128), 256,
         "0.9 on the same GPU: 256 (an engine_version names vLLM)")
check.eq(with(small, {gpu = "h100", engine = "vllm", max_num_batched_tokens = 128})
           :ledger():max_concurrency(128), 128, "capped at max_num_batched_tokens")
check.eq(with(small, {gpu = "h100", engine = "vllm", max_num_seqs = 2000}):ledger()
           :max_concurrency(128) > 1024, true, "a given max_num_seqs replaces the default")
-- sweeps: the GPU axis stays a deployment (its default), the rows in C
local path = os.tmpname()
kv.sweep{model = "llama-3.1-8b", gpu = {"a100-sxm-80gb", "h100"}, context = 128,
         concurrency = {256, 257, 1025},
         base = {engine = "vllm", activation = "1 GiB", overhead = "1 GiB"},
         columns = {"gpu", "concurrency", "max_concurrency", "fits", "limit"}}:write(path)
local f = assert(io.open(path))
local text = f:read("a")
f:close()
os.remove(path)
check.eq(text, "gpu,concurrency,max_concurrency,fits,limit\n"
         .. "a100-sxm-80gb,256,256,true,none\na100-sxm-80gb,257,256,false,max_num_seqs\n"
         .. "a100-sxm-80gb,1025,256,false,max_num_seqs\nh100-sxm,256,1024,true,none\n"
         .. "h100-sxm,257,1024,true,none\nh100-sxm,1025,1024,false,max_num_seqs\n", "sweep rows")

-- workers with unequal memory (test_get_kv_cache_configs_multiple_workers:
-- "Use the smallest memory available"): both end with the smaller's blocks
local two = kv.deploy{model = "llama-3.1-8b", gpu_memory = "80 GiB", tp = 2, utilization = 1,
                      activation = 0, overhead = 0,
                      worker_gpu_memory = {"40 GiB", "80 GiB"}}
local w = two:workers()
check.eq(#w, 2, "one entry a worker")
check.eq(w[1].blocks, w[2].blocks, "the same blocks on both")
check.eq(w[1].own_blocks, w[1].blocks, "the smaller GPU decides")
check.eq(w[2].own_blocks > w[2].blocks, true, "the larger keeps memory unused")
check.eq(w[2].unused_bytes, w[2].kv_budget - w[2].pool_bytes, "unused")
check.eq(w[1].kv_budget, 40 * GiB - two:ledger().weights, "its own budget")
check.eq(two:ledger().kv_blocks, w[1].blocks, "the ledger's pool is the smaller's")

-- every pipeline stage's ledger
local pp = kv.deploy{model = "gemma-3-27b", gpu = "h100", pp = 2, activation = "1 GiB",
                     overhead = "1 GiB", max_model_len = 32768}
w = pp:workers()
check.eq(#w, 2, "two stages")
check.eq(w[1].first_layer, 1, "stage 1 starts at layer 1")
check.eq(w[2].first_layer, 1 + w[1].layers, "stage 2 follows")
check.eq(w[1].layers + w[2].layers, 62, "all layers")
check.eq(w[1].tensors, w[1].group_size, "a hybrid worker holds group_size tensors")
check.eq(w[1].tensor_bytes * w[1].tensors, w[1].pool_bytes, "its tensors are its pool")

-- bad input names the option
check.error("field 'disable_hybrid_kv_cache_manager' must be true or false, got yes",
            function() g:with{disable_hybrid_kv_cache_manager = "yes"} end)
check.error("field 'num_gpu_blocks_override' must be an integer >= 1, got 0",
            function() g:with{num_gpu_blocks_override = 0} end)
check.error("field 'worker_gpu_memory' must list the memory of each of the 2 workers",
            function() two:with{worker_gpu_memory = {"40 GiB"}} end)
check.error("field 'num_gpu_blocks_override' is a vLLM option and needs budget 'vllm'",
            function() g:with{num_gpu_blocks_override = 10, budget = "sglang"} end)
check.error("failed to convert the KV cache specs to one unified type",
            function() kv.deploy{model = "qwen3-next-80b-a3b", gpu = "h100", tp = 4,
                                 disable_hybrid_kv_cache_manager = true} end)

-- decode context parallelism on an MLA model: the same pages, twice the
-- tokens a block holds of a request
local ds = kv.deploy{model = "deepseek-v2-lite", gpu = "h100", tp = 2, activation = "1 GiB",
                     overhead = "1 GiB", max_model_len = 32768}
local ds2 = ds:with{decode_context_parallel_size = 2}
check.eq(ds2:ledger().kv_blocks, ds:ledger().kv_blocks, "the pool is unchanged")
check.eq(ds2:ledger().vllm_kv_cache_tokens, 2 * ds:ledger().vllm_kv_cache_tokens,
         "GPU KV cache size doubles")
check.eq(ds2:ledger():seq_bytes(8192), ds:ledger():seq_bytes(4096), "half the blocks a request")
check.error("decode_context_parallel_size 4 must divide tensor parallel size 2",
            function() ds:with{decode_context_parallel_size = 4} end)

-- DeepSeek-V3.2: the indexer's keys beside the latent, and vLLM's fp8_ds_mla
local v32 = kv.deploy{model = "deepseek-v3.2", gpu = "h200", tp = 8, activation = "4 GiB",
                      overhead = "2 GiB", block = 64}
check.eq(v32:ledger().kv_bytes_per_token, 61 * (1152 + 132), "bf16 latent + indexer keys")
check.eq(v32:with{kv = "fp8_ds_mla"}:ledger().kv_bytes_per_token, 61 * (656 + 132),
         "fp8_ds_mla latent + indexer keys")
check.eq(v32:ledger():vllm_groups()[1].kind, "uniform", "MLA and indexer: one KV type")

-- DeepSeek-V3 on 8 H200: tp 8, or 8 data-parallel engines with expert parallelism
local tp8 = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 8, activation = "4 GiB",
                      overhead = "2 GiB", max_model_len = 32768}
local dp8 = kv.deploy{model = "deepseek-v3", gpu = "h200", tp = 1, data_parallel_size = 8,
                      enable_expert_parallel = true, activation = "4 GiB", overhead = "2 GiB",
                      max_model_len = 32768}
local c = tp8.model:weight_class_params()
local fp8 = kv.formats.get({name = "fp8-b128", bits = 8, group = 16384, scale = 32})
local experts = kv.formats.bytes(fp8, c.experts)
local total = tp8:ledger().weights_total
check.eq(dp8:ledger().data_parallel_size, 8, "8 engines")
-- the fullest GPU holds 256 / 8 = 32 experts of every MoE layer; the rest whole
-- (and the rotary cache whole on each: 163840 x 64 x 2 bytes, engines.vllm_rotary)
local rot = 163840 * 64 * 2
check.eq(dp8:ledger().weights, (total - experts) + experts // 8 + rot, "weights per GPU under DP + EP")
-- under TP 8 the MLA down-projections, routers and norms whole on every GPU
-- (models.lua replicated_params; deploy_test.lua counts them: 1138597040
-- bytes), the rest over 8
local rep = tp8.replicated_bytes
check.eq(rep, 1138597040, "DeepSeek-V3's replicated weights")
check.eq(tp8:ledger().weights, (total - rep + 7) // 8 + rep + rot, "weights per GPU under TP 8")
-- the latent is whole on every rank either way: the KV bytes a token are the same
check.eq(dp8:ledger().kv_bytes_per_token, tp8:ledger().kv_bytes_per_token, "MLA per GPU")
check.error("field 'enable_expert_parallel' needs a MoE model",
            function() kv.deploy{model = "llama-3.1-8b", gpu = "h100",
                                 enable_expert_parallel = true} end)

-- Mamba2 states from the config's shapes (vLLM MambaStateShapeCalculator.
-- mamba2_state_shape: conv (conv_kernel - 1) x (heads x head_dim + 2 groups x
-- state), SSM heads x head_dim x state, bf16): NVIDIA-Nemotron-Nano-9B-v2
local nem = kv.deploy{model = "nemotron-nano-9b-v2", gpu = "h100", activation = "1 GiB",
                      overhead = "1 GiB", max_model_len = 131072}
local state = 3 * (128 * 80 + 2 * 8 * 128) * 2 + 128 * 80 * 128 * 2
check.eq(nem.model:layer(1).state_bytes, state, "a Mamba2 state: 2695168 bytes")
check.eq(nem.model:layer(2).kind, "none", "an MLP-only block holds no KV")
-- HybridAttentionMambaModelConfig: block = 16 ceil(state / (16 x 4096 bytes a token))
local nl = nem:ledger()
check.eq(nl.block, 16 * ((state + 16 * 4096 - 1) // (16 * 4096)), "block raised to 672")
-- 27 Mamba + 4 attention layers: group size 4, 7 Mamba groups and 1 attention group
check.eq(nl.kv_groups, 8, "groups")
check.eq(nl.group_blocks, "131072/131072/131072/131072/131072/131072/131072/672",
         "Mamba groups' block is max_model_len")
check.eq(nl:vllm_groups()[1].padded, true, "the state page is padded to the attention page")
check.eq(nl:request_bytes(1), 8 * nl.block_bytes, "a request's first token: a block in every group")

-- a speculative head's layers join the KV types: gpt-oss-20b + EAGLE is 12
-- sliding + 13 full layers, padded to group size 13, "(13 sw, 13 full)
-- instead of (12 sw, 24 full)" (vllm/v1/core/kv_cache_utils.py
-- _get_kv_cache_groups_uniform_page_size at 002f10e0cfa1)
local oss = kv.deploy{model = "gpt-oss-20b", gpu = "h100", activation = "1 GiB",
                      overhead = "1 GiB", max_model_len = 32768,
                      speculative = {tokens = 3, heads = "eagle"}}
local ol = oss:ledger()
local types = ol:vllm_groups()
check.eq(#types, 2, "sliding and full")
check.eq(types[1].layers + types[2].layers, 25, "24 target layers and the head's")
check.eq(ol.kv_groups, 2, "one group each")
check.eq(ol.block_bytes // (16 * 8 * 64 * 2 * 2), 13, "13 layer slots a block")

-- an MLA backend's block stride alignment (option block_stride_alignment):
-- DeepSeek-V3.2 in fp8_ds_mla at tp 8 has blocks of 61 x 64 x (656 + 132)
-- bytes; 512-byte alignment rounds each up
local ds32 = kv.deploy{model = "deepseek-v3.2", gpu = "h200", tp = 8, kv = "fp8_ds_mla",
                       block = 64, activation = "4 GiB", overhead = "2 GiB"}
local raw = 61 * 64 * (656 + 132)
check.eq(ds32:ledger().block_bytes, raw, "unaligned block")
check.eq(ds32:with{block_stride_alignment = 512}:ledger().block_bytes, (raw + 511) // 512 * 512,
         "aligned block")

-- a model of Mamba layers alone (Falcon-Mamba-7B, from its config.json): no
-- attention heads; vLLM pages the states (MambaSpec: page = the state's
-- bytes, mamba1_state_shape conv 8192 x 3 + SSM 8192 x 16 bf16), keeps the
-- null block, and logs num_blocks x max_model_len tokens
local fm = kv.deploy{model = "falcon-mamba-7b", gpu = "h100", activation = "1 GiB",
                     overhead = "1 GiB"}
local fl = fm:ledger()
local fstate = (8192 * 3 + 8192 * 16) * 2
check.eq(fm.model.heads, 0, "no attention heads")
check.eq(fl.block_bytes, 64 * fstate, "a block: one state of every layer")
check.eq(fl.kv_blocks, fl.kv_budget // (64 * fstate), "num_blocks")
check.eq(fl:max_concurrency(2048), fl.kv_blocks - 1, "one block a request, the null block kept")
check.eq(fl.vllm_kv_cache_tokens, fl.kv_blocks * 2048, "GPU KV cache size: blocks x max_model_len")
check.eq(fm:with{tp = 2}:ledger().block_bytes, 64 * fstate // 2, "TP splits the channels")

-- Cache specs of vllm/v1/kv_cache_interface.py at commit
-- 001cabc1be16a59a70d720ed61a13b678c060a18 beyond attention and Mamba:
-- CrossAttentionSpec (max_memory_usage_bytes = cdiv(max_num_encoder_input_tokens,
-- block) x page, "e.g., 1500 for Whisper") and EncoderOnlyAttentionSpec
-- (max_memory_usage_bytes 0: no cache), on catalog models from their config.json.
local whisper = kv.deploy{model = "openai/whisper-large-v3", gpu = "l4", activation = "1 GiB",
                          overhead = "0.5 GiB"}
local lw = whisper:ledger()
local wg = lw:vllm_groups()
check.eq(#wg, 2, "self- and cross-attention are two KV types")
check.eq(wg[2].kind, "cross", "the cross type")
check.eq(wg[2].window, 1500, "it caches the encoder's 1500 tokens")
check.eq(lw.block_bytes, 32 * 2 * 16 * 20 * 64 * 2, "a block: 32 layer slots of 80 KiB pages")
check.eq(lw:seq_bytes(1), (1 + 94) * lw.block_bytes, "one token already holds the encoder's blocks")
check.eq(lw:seq_bytes(448), (28 + 94) * lw.block_bytes, "max_target_positions 448")
check.eq(lw.vllm_kv_needed, 122 * lw.block_bytes, "vLLM's startup check counts the same")
check.eq(lw:max_concurrency(448), (lw.kv_blocks - 1) // 122, "requests of 448 tokens")
check.error("CrossAttentionSpec", function()
  whisper:with{disable_hybrid_kv_cache_manager = true}:ledger()
end)
-- an encoder-only embedding model (BertModel): no cache, one null block
local bge = kv.deploy{model = "BAAI/bge-large-en-v1.5", gpu = "l4", engine = "vllm",
                      activation = "1 GiB", overhead = "0.5 GiB"}
local lb = bge:ledger()
check.eq(lb.kv_blocks, 1, "vLLM's null block only")
check.eq(lb:seq_bytes(512), 0, "nothing cached per request")
check.eq(lb.vllm_starts, true, "no memory check to fail")
local bn, _, blimit = lb:max_concurrency(512)
check.eq(bn, 256, "requests limited by max_num_seqs alone (an L4: 256)")
check.eq(blimit, "max_num_seqs", "reported as the limit")
-- int8_per_token_head: AttentionSpec.page_size_bytes adds 2 x block x kv_heads
-- x 4 bytes to the int8 page (001cabc1be16): Llama-3.1-8B (8 KV heads of 128)
check.eq(kv.model("llama-3.1-8b"):kv_bytes_per_token("int8_per_token_head"),
         32 * (2 * 8 * 128 + 2 * 8 * 4), "one fp32 scale per token, head, K and V")

-- mamba_cache_mode (vLLM prefix caching of hybrid Mamba models):
-- MambaSpec.max_memory_usage_bytes at 001cabc1be16 (none 1 + spec, align
-- 2 + spec, all cdiv(max_model_len, block) pages) and _align_hybrid_block_size
-- (vllm/platforms/interface.py; earlier HybridAttentionMambaModelConfig):
-- "all" raises the attention block to chunk x cdiv(ceil(state / one token's
-- attention page), chunk), chunk = lcm(mamba chunk, kernel alignment 16),
-- and uses it as the Mamba block; "align" uses the attention block.
-- Nemotron-Nano-9B-v2: a state of 2695168 bytes, attention 4096 bytes a
-- token: block 16 x ceil(2695168 / 65536) = 672; "all" at chunk 128: 768.
local function nemo(extra)
  local o = {model = "nemotron-nano-9b-v2", gpu = "h100", activation = "1 GiB",
             overhead = "1 GiB", max_model_len = 32768}
  for k, v in pairs(extra) do o[k] = v end
  return kv.deploy(o):ledger()
end
local none, align, all = nemo{}, nemo{mamba_cache_mode = "align"},
                         nemo{mamba_cache_mode = "all", mamba_block_size = 128}
check.eq(none.group_blocks, "32768/32768/32768/32768/32768/32768/32768/672", "none: Mamba block max_model_len")
check.eq(align.group_blocks, "672/672/672/672/672/672/672/672", "align: the attention block")
check.eq(all.group_blocks, "768/768/768/768/768/768/768/768", "all: 128 x ceil(658 / 128)")
check.eq(all.block_bytes, 4 * 768 * 4096, "4 layer slots of the raised page")
-- 27 Mamba layers in 7 groups of 4 slots, 4 attention layers in one
check.eq(none:seq_bytes(32768) // none.block_bytes, 7 * 1 + 49, "none: one state a group")
check.eq(align:seq_bytes(32768) // align.block_bytes, 7 * 2 + 49, "align: two")
check.eq(all:seq_bytes(32768) // all.block_bytes, 7 * 43 + 43, "all: a state every block")
check.eq(align.vllm_kv_needed, 63 * align.block_bytes, "vLLM's startup check agrees")
-- a model of Mamba layers alone (Falcon-Mamba-7B, from its config.json):
-- MambaModelConfig.verify_and_update_config (vllm/model_executor/models/
-- config.py, in a revision read without its commit; at 0144dd5b0d2d it set
-- max_model_len only) makes mamba_block_size the cache's block (16); pages by
-- MambaSpec.max_memory_usage_bytes (kv_cache_interface.py at 001cabc1be16);
-- a 19922944-byte state a page; 1 GiB holds 53 pages, the null block kept:
-- align 2 a request (26), all a state every 16 tokens (8192 tokens: 512 pages,
-- vLLM estimates 53 x 16 = 848 tokens); vLLM 0.11's log and check, pinned
-- (from the 0.20 row the log prints int(max_concurrency x max_model_len))
do
  local function fm(mode)
    return kv.deploy{model = "falcon-mamba-7b", gpu = "h100", max_model_len = 8192,
                     mamba_cache_mode = mode, kv_cache_memory_bytes = 1 << 30,
                     engine_version = "0.11"}:ledger()
  end
  local fn, fa, fl = fm("none"), fm("align"), fm("all")
  check.eq(fa.kv_blocks, 53, "a page a state")
  check.eq(fn:max_concurrency(8192), 52, "none: one state a request")
  check.eq(fa:max_concurrency(8192), 26, "align: two")
  check.eq(fa.vllm_kv_cache_tokens, 53 * 16, "GPU KV cache size: blocks x mamba_block_size")
  check.eq(fn.vllm_kv_cache_tokens, 53 * 8192, "none: blocks x max_model_len")
  check.eq(fl.vllm_starts, false, "all: 512 pages do not fit")
  check.eq(fl.vllm_max_model_len, 848, "vLLM's estimate")
end
check.error("give mamba_block_size", function()
  kv.deploy{model = "nemotron-nano-9b-v2", gpu = "h100", mamba_cache_mode = "all"}
end)

-- prefill_context_parallel_size: pcp ranks shard a request's KV along the
-- sequence like dcp (kv_cache_interface.py at 001cabc1be16:
-- FullAttentionSpec.max_memory_usage_bytes counts cdiv(max_model_len,
-- dcp x pcp) tokens; _report_kv_cache_config multiplies "GPU KV cache size"
-- by pcp x dcp). Llama-3.1-8B at pcp 2: the same blocks per GPU, each of a
-- request's blocks spans 32 tokens
local function l8(extra)
  local o = {model = "llama-3.1-8b", gpu = "h100", activation = "1 GiB", overhead = "1 GiB",
             max_model_len = 32768}
  for k, v in pairs(extra) do o[k] = v end
  return kv.deploy(o):ledger()
end
local p1, p2 = l8{}, l8{prefill_context_parallel_size = 2}
check.eq(p2.kv_blocks, p1.kv_blocks, "the same pool on every GPU")
check.eq(p2:seq_bytes(32768), p1:seq_bytes(32768) // 2, "half a request's KV a rank")
check.eq(p2.vllm_kv_cache_tokens, p1.vllm_kv_cache_tokens * 2, "GPU KV cache size x pcp")
check.eq(p2.vllm_kv_needed, 1024 * 32 * 16 * 4096, "cdiv(32768, 2) tokens in the check")
check.error("prefill_context_parallel_size 2 with sliding layers", function()
  kv.deploy{model = "gemma-3-27b", gpu = "h100", prefill_context_parallel_size = 2}
end)

-- chunked local attention and the hybrid manager (vllm/config/vllm.py;
-- vllm-project/vllm#21761, merged 2025-07-28: off unless
-- VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE; #29627 on again):
-- Llama-4-Scout under a deployment that names vLLM 0.11 is one KV type
local function scout(extra)
  local o = {model = "llama-4-scout", gpu = "h100", tp = 4, activation = "1 GiB",
             overhead = "1 GiB", max_model_len = 32768}
  for k, v in pairs(extra) do o[k] = v end
  return kv.deploy(o)
end
local s0, s11 = scout{}, scout{engine = "vllm", engine_version = "0.11"}
check.eq(s0:ledger().kv_groups, 4, "the budget rule alone: vLLM's groups (12 full, 3 x 12 chunked)")
check.eq(s11:ledger().kv_groups, 1, "0.11 by default: all layers full attention")
check.eq(s11:ledger():max_concurrency(32768),
         scout{disable_hybrid_kv_cache_manager = true, engine_version = "0.11"}:ledger():max_concurrency(32768),
         "the same as the switch")
check.eq(s11.hybrid_off_reason ~= nil, true, "the deployment says why")
check.eq(scout{engine = "vllm", engine_version = "0.11",
               allow_chunked_local_attn_with_hybrid_kv_cache = true}:ledger().kv_groups,
         4, "the environment variable keeps the groups")
check.eq(scout{engine_version = "0.20"}:ledger().kv_groups, 4, "later releases group them again")
check.eq(scout{engine = "vllm"}:ledger().kv_groups, 4, "no release: the newest modelled, grouped")
check.eq(scout{engine = "vllm", engine_version = "0.20", speculative = {tokens = 2, heads = "eagle"}}
           .hybrid_off_reason, "chunked local attention with EAGLE", "EAGLE turns it off in any")

-- TurboQuant KV formats (vLLM turboquant/config.py at 1471680b2471, TQ_PRESETS
-- and slot_size_aligned; TQFullAttentionSpec page block x kv_heads x slot):
-- Llama-3.1-8B (8 KV heads of 128) in turboquant_k8v4, 196 bytes a slot; vLLM
-- keeps layers 0, 1, 30, 31 in bf16 (get_boundary_skip_layers, merged into
-- kv_cache_dtype_skip_layers by create_engine_config)
do
  local m8 = kv.model("llama-3.1-8b")
  check.eq(m8:kv_bytes_per_token("turboquant_k8v4"), 32 * 8 * 196, "every layer's slots")
  check.eq(m8:kv_bytes_per_token("turboquant_3bit_nc"), 32 * 8 * 102, "3-bit keys and values")
  local lt = kv.deploy{model = "llama-3.1-8b", gpu = "h100", kv = "turboquant_k8v4",
                       max_model_len = 8192}:ledger()
  check.eq(lt.kv_bytes_per_token, 28 * 8 * 196 + 4 * 8 * 2 * 128 * 2,
           "the four boundary layers keep bf16")
  local lb = kv.deploy{model = "llama-3.1-8b", gpu = "h100", max_model_len = 8192}:ledger()
  check.eq(lt.kv_tokens > 2 * lb.kv_tokens, true, "more than twice the tokens of bf16")
  check.error("TurboQuant KV format with mla layers", function()
    kv.deploy{model = "deepseek-v2-lite", gpu = "h100", kv = "turboquant_k8v4"}:ledger()
  end)
  -- (issue 20) an MTP head beside a hybrid target holds TurboQuant slots too
  -- (Qwen3_5MultiTokenPredictor builds a decoder layer of the target's with
  -- the same cache_config): club-3090 #69, Qwen3.6-27B at TP 2 in
  -- turboquant_3bit_nc with 3 MTP tokens in align mode, 9.3 GiB: 17 layers
  -- of 2 x 198-byte slots a token, the state's 6 conv rows make the block
  -- 16 x ceil(1634304 / (16 x 396)) = 4128, 359 blocks of 17 pages, 359 /
  -- (64 + 3 x 5) x 262144 = 1191261 tokens, as the log says (before: refused)
  local b = math.floor(9.3 * 2^30)
  local lq = kv.deploy{model = "qwen3.6-27b", tp = 2, kv = "turboquant_3bit_nc", max_model_len = 262144,
                       engine_version = "0.20.2", gpu_memory = b + 1, utilization = 1, activation = 0,
                       overhead = 0, weight_bytes = 1, mamba_cache_mode = "align",
                       speculative = {tokens = 3, heads = "mtp", weight_bytes = 0}}:ledger()
  check.eq(lq.block .. " " .. lq.kv_blocks .. " " .. lq.vllm_kv_cache_tokens, "4128 359 1191261",
           "Qwen3.6-27B with TurboQuant and its MTP head")
  check.error("TurboQuant KV format with a draft model: not modelled", function()
    kv.deploy{model = "llama-3.1-8b", gpu = "h100", kv = "turboquant_k8v4", max_model_len = 8192,
              speculative = {tokens = 2, heads = "eagle"}}:ledger()
  end)
end

-- Static attention sinks (SinkFullAttentionManager at vllm 001cabc1be16 takes
-- sink_len / block blocks from the pool once; the check and the log count none):
-- 4 layers of 2 KV heads of 64, bf16, sink_len 64 at block 16: 4 blocks beside
-- the null block
do
  local function tiny(sink)
    return kv.model{id = "sinky", layers = 4, hidden = 256, heads = 4, kv_heads = 2,
                    head_dim = 64, params = 1000000,
                    layer_kinds = {{kind = "full", sink_len = sink}}}
  end
  local ls = kv.deploy{model = tiny(64), gpu_memory = "1 GiB", kv_cache_memory_bytes = 4096 * 16384,
                       max_model_len = 1024}:ledger()
  local lp = kv.deploy{model = tiny(nil), gpu_memory = "1 GiB", kv_cache_memory_bytes = 4096 * 16384,
                       max_model_len = 1024}:ledger()
  check.eq(ls.null_blocks, 5, "the null block and 64 / 16 sink blocks")
  check.eq(lp.kv_tokens - ls.kv_tokens, 64, "the sink's tokens leave the pool")
  check.eq(ls.vllm_kv_cache_tokens, lp.vllm_kv_cache_tokens, "vLLM's log counts every block")
  check.error("multiple of the block of 16", function()
    kv.deploy{model = tiny(8), gpu_memory = "1 GiB", kv_cache_memory_bytes = 4096 * 16384}:ledger()
  end)
end

-- vLLM's extract_hidden_states method (vllm/model_executor/models/
-- extract_hidden_states.py at 055e47c28003156421365af985d676fc921cb075,
-- https://github.com/vllm-project/vllm/blob/055e47c28003156421365af985d676fc921cb075/vllm/model_executor/models/extract_hidden_states.py):
-- one cache-only layer, HiddenStateCacheSpec (an MLAAttentionSpec: block x
-- num_kv_heads x head_size x dtype, no factor 2) with num_kv_heads =
-- len(eagle_aux_hidden_state_layer_ids) and head_size = hidden, in the model
-- dtype even under a quantized KV cache; one group with the target's full
-- layers (UniformTypeKVCacheSpecs). Llama-3.1-8B, 3 hidden states of 4096:
-- 24576 bytes a token beside its 131072 (65536 in fp8)
do
  local function hs(extra)
    local o = {model = "llama-3.1-8b", gpu = "h100", max_model_len = 8192,
               speculative = {heads = "extract_hidden_states", hidden_states = 3, tokens = 1}}
    for k, v in pairs(extra or {}) do o[k] = v end
    return kv.deploy(o):ledger()
  end
  local h, h8 = hs(), hs{kv = "fp8"}
  check.eq(h.kv_bytes_per_token, 131072 + 3 * 4096 * 2, "the hidden states beside the KV")
  check.eq(h8.block_bytes, 16 * (65536 + 3 * 4096 * 2), "hidden states stay bf16 under fp8 KV")
  check.eq(h.kv_groups, 1, "one KV cache group")
  check.eq(h.vllm_kv_needed, 512 * h.block_bytes, "vLLM's check: 512 blocks of 8192 tokens")
  check.error("must be 1", function()
    kv.deploy{model = "llama-3.1-8b", gpu = "h100",
              speculative = {heads = "extract_hidden_states", hidden_states = 3, tokens = 2}}
  end)
end

-- V0's CacheEngine pads each MLA entry to 256 bytes of the model dtype on
-- CUDA in 0.7.2-0.7.x (vllm-project/vllm#12676 to #14842: 576 elements as 640):
-- DeepSeek-V2-Lite's 27 layers hold 27 x 640 x 2 = 34560 bytes a token, a
-- block of 16 tokens 552960, where V1, 0.7.1 and 0.8 hold 27 x 576 x 2 = 31104
-- (497664 a block); 64 GiB of KV memory: 124275 blocks padded, 138084 not
do
  local function blocks(o)
    local t = {model = "deepseek-v2-lite", gpu_memory = 64 * GiB, utilization = 1,
               activation = 0, overhead = 0, weight_bytes = 1, block = 16}
    for k, v in pairs(o) do t[k] = v end
    local d = kv.deploy(t)
    return d:ledger().kv_blocks, d.vllm_mla_entry_align
  end
  local b, a = blocks{engine_version = "0.7.2"}
  check.eq(a, 128, "V0 at 0.7.2: entries a multiple of 128 bf16 elements")
  check.eq(b, (64 * GiB) // 552960, "V0 at 0.7.2: 640 elements a latent")
  check.eq((blocks{engine_version = "0.7.1"}), (64 * GiB) // 497664, "0.7.1: no padding")
  check.eq((blocks{engine_version = "0.8.4", vllm_use_v1 = true}), (64 * GiB) // 497664,
           "V1: MLAAttentionSpec unpadded")
  check.eq((blocks{engine_version = "0.7.3"}), (64 * GiB) // 552960, "V0 at 0.7.3 pads")
  check.eq((blocks{engine_version = "0.8.4", vllm_use_v1 = false}), (64 * GiB) // 497664,
           "V0 on 0.8: vllm-project/vllm#14842 removed the padding")
  local ar = kv.deploy{model = "deepseek-v2-lite", gpu = "mi300x", engine_version = "0.7.2",
                       activation = 0, overhead = 0}.vllm_mla_entry_align
  check.eq(ar, nil, "ROCm: current_platform.is_cuda() is false, no padding")
end

-- V0's MLA backend of 0.7.1-0.7.x materializes W_Q_UK (2048 x 16 x 512),
-- W_QR (2048 x 16 x 64) and W_UV_O (16 x 512 x 2048) in bf16 a layer
-- (vllm-project/vllm#12528 to #14770): DeepSeek-V2-Lite's 27 layers hold
-- 27 x 35651584 x 2 = 1925185536 bytes more than its checkpoint; none at
-- 0.7.0, on V0 at 0.8 (#14770), on V1, or with weight_bytes given
do
  local function w(o)
    local t = {model = "deepseek-v2-lite", gpu = "h100-sxm", activation = 0, overhead = 0}
    for k, v in pairs(o) do t[k] = v end
    return kv.deploy(t).weight_bytes
  end
  local base = kv.model("deepseek-v2-lite"):weight_size()
  check.eq(w{engine_version = "0.7.2"}, base + 1925185536, "0.7.2 V0: the absorbed matrices")
  check.eq(w{engine_version = "0.7.1"}, base + 1925185536, "0.7.1 V0: from #12528")
  check.eq(w{engine_version = "0.7.0"}, nil, "0.7.0: no MLA backend, the checkpoint's bytes")
  check.eq(w{engine_version = "0.8.4", vllm_use_v1 = false}, nil, "V0 at 0.8: not materialized")
  check.eq(w{engine_version = "0.8.4", vllm_use_v1 = true}, nil, "V1: not materialized")
  check.eq(w{engine_version = "0.7.2", weight_bytes = 10 * GiB}, 10 * GiB, "given weight_bytes win")
end

-- Expectations of tests/v1/core/test_kv_cache_utils.py at 002f10e0cfa1
-- ported by issue 20's pass over vLLM's tests (docs/predictions.md "vLLM's
-- unit tests"), through kv.deploy as a user gives them.
do
  -- --max-model-len auto (or -1, vllm-project/vllm#29431): test_auto_fit_max_model_len
  -- and its _with_hybrid, _respects_num_gpu_blocks_override and
  -- _reserves_null_block cases; two full layers of 2 KV heads of 64 in fp32
  -- (pages of 16384 bytes), a derived max_model_len of 1024
  local page = 16384
  local t2 = kv.model{id = "t2", layers = 2, hidden = 128, heads = 4, kv_heads = 2, head_dim = 64,
                      params = 0, max_context = 1024}
  local function fit(mem, v, extra)
    local o = {model = t2, kv = "fp32", gpu_memory = "1 GiB", activation = 0, overhead = 0,
               max_model_len = "auto", kv_cache_memory_bytes = mem, engine_version = v}
    for k, x in pairs(extra or {}) do o[k] = x end
    return kv.deploy(o):ledger()
  end
  check.eq(fit(page * 2 * 1024, "0.29").max_model_len, 1024, "the full context fits: kept")
  local lim = fit(page * 2 * 32, "0.29")
  check.eq(row(lim, "max_model_len", "vllm_starts", "kv_blocks"), "496 true 32",
           "reduced to 31 blocks of 16 beside the null block; the pool keeps all 32")
  check.eq(fit(page * 2 * 32, "0.21").max_model_len, 512, "before #47272: all 32 blocks")
  check.eq(fit(page * 2 * 1024, "0.29", {num_gpu_blocks_override = 32}).max_model_len, 496,
           "the override's 32 blocks, not the memory (#41069)")
  check.eq(fit(page * 2 * 1024, "0.14", {num_gpu_blocks_override = 32}).max_model_len, 1024,
           "before #41069 the measured memory decides")
  check.eq(fit(page * 2 * 32, "0.29", {max_model_len = -1}).max_model_len, 496, "-1 is auto")
  local t1 = kv.model{id = "t1", layers = 1, hidden = 128, heads = 4, kv_heads = 2, head_dim = 64,
                      params = 0, max_context = 1024}
  check.eq(fit(page * 64, "0.29", {model = t1}).max_model_len, 63 * 16,
           "_reserves_null_block: 64 blocks, 63 x 16 tokens")
  -- _with_hybrid: a Mamba state of 16384 bytes and num_speculative_blocks 2
  -- beside the full layer, a derived 8192, memory of 1024 // 16 + 1 + 2 + 1 pages
  local hm = kv.model{id = "hm", layers = 2, hidden = 128, heads = 4, kv_heads = 2, head_dim = 64,
                      params = 0, max_context = 8192,
                      layer_kinds = {{kind = "state", state_bytes = 16384}, {kind = "full"}}}
  check.eq(fit(page * (1024 // 16 + 1 + 2 + 1), "0.29", {model = hm, speculative = {tokens = 2}})
             .max_model_len, 1024, "_with_hybrid: 1024")
  check.error("vLLM 0.11 has no --max-model-len auto", function() fit(page, "0.11") end)
  check.error("budget 'sglang' has none", function() fit(page, nil, {budget = "sglang"}) end)

  -- test_get_kv_cache_config_one_worker, "different hidden size that cannot
  -- be aligned by using different block size, but can be aligned by padding
  -- the smaller physical page": full of head 64 (16384-byte pages), sliding
  -- of head 96 (24576), memory of 2 x 32 x 16384: both padded to 24576, 42 blocks
  local m2 = kv.model{id = "m2", layers = 2, hidden = 128, heads = 4, kv_heads = 2, head_dim = 64,
                      params = 0, max_context = 16,
                      layer_kinds = {{kind = "full"}, {kind = "sliding", window = 1, head_dim = 96}}}
  local pl = kv.deploy{model = m2, kv = "fp32", gpu_memory = "1 GiB", activation = 0, overhead = 0,
                       kv_cache_memory_bytes = page * 2 * 32}:ledger()
  check.eq(row(pl, "kv_groups", "group_blocks", "block_bytes", "kv_blocks"), "2 16/16 24576 42",
           "the full page padded to the sliding one's")

  -- test_get_max_concurrency_for_kv_cache_config, "unequal group sizes" and
  -- the UniformTypeKVCacheSpecs group: 32 (or 4) full layers and 2 sliding
  -- ones (window 1024) of 32 KV heads of 128 in fp16, num_blocks 1153 x 3:
  -- 1024 + 129 blocks a request of 16384 tokens, 3 requests
  local function unequal(full)
    local m = kv.model{id = "u" .. full, layers = full + 2, hidden = 4096, heads = 32,
                       kv_heads = 32, head_dim = 128, params = 0, max_context = 16384,
                       layer_kinds = {{kind = "full", n = full},
                                      {kind = "sliding", window = 1024, n = 2}}}
    local first = {}
    for i = 1, full do first[i] = i end
    return kv.deploy{model = m, kv = "fp16", gpu_memory = "1000 GiB", activation = 0, overhead = 0,
                     max_num_batched_tokens = 1024, num_gpu_blocks_override = 1153 * 3,
                     kv_cache_groups = {{layers = first}, {layers = {full + 1, full + 2}}}}:ledger()
  end
  check.eq(unequal(32).vllm_max_concurrency, 3, "32 full + 2 sliding: 3")
  check.eq(unequal(4).vllm_max_concurrency, 3, "4 full + 2 sliding: 3")

  -- test_get_kv_cache_config_mamba_hybrid_sharing_no_indexer (Kimi-Linear
  -- like): 27 layers, MLA where i % 4 == 3 or i == 26 (7, block 1024, 576
  -- bf16 elements: pages of 1179648 bytes), Mamba states of 16384 bytes
  -- elsewhere (20): 4 groups, Mamba in 3 of [7, 7, 6] padded to the MLA
  -- page, 7 MLA pages a block, 100 blocks from 7 x 1179648 x 100 + 1 bytes
  local kinds = {}
  for i = 0, 26 do
    kinds[#kinds + 1] = (i % 4 == 3 or i == 26) and {kind = "mla", kv_lora_rank = 512, rope_dim = 64}
                        or {kind = "state", state_bytes = 16384}
  end
  local km = kv.model{id = "kimi-like", layers = 27, hidden = 2048, heads = 16, kv_heads = 1,
                      head_dim = 128, params = 0, max_context = 8192, layer_kinds = kinds}
  local mla_page = 1024 * 576 * 2
  local kl = kv.deploy{model = km, kv = "bf16", gpu_memory = "100 GiB", activation = 0,
                       overhead = 0, block = 1024,
                       kv_cache_memory_bytes = 7 * mla_page * 100 + 1}:ledger()
  local kt = kl:vllm_groups()
  check.eq(row(kl, "kv_groups", "block_bytes", "kv_blocks"), "4 " .. 7 * mla_page .. " 100",
           "4 groups, 7 MLA pages a block, 100 blocks")
  check.eq(string.format("%s %d %d %s", kt[1].kind, kt[1].layers, kt[1].groups, tostring(kt[1].padded)),
           "state 20 3 true", "20 Mamba layers in 3 groups, padded to the MLA page")

  -- test_hidden_state_group_preserves_hybrid_prefix_cache_granularity: a
  -- full layer of one KV head of 512 in bf16 and an align-mode Mamba state
  -- of 557056 bf16 elements (both 1114112 bytes at block 544), the hidden
  -- states of 3 x 1024 bf16 (6144 bytes a token): the cache's block is 136,
  -- the largest divisor of 544 within 1114112 // 6144
  local hs = kv.model{id = "hs", layers = 2, hidden = 1024, heads = 8, kv_heads = 1, head_dim = 512,
                      params = 0, max_context = 8192,
                      layer_kinds = {{kind = "full"}, {kind = "state", state_bytes = 557056 * 2}}}
  local hl2 = kv.deploy{model = hs, kv = "bf16", gpu_memory = "100 GiB", activation = 0,
                        overhead = 0, mamba_cache_mode = "align", engine_version = "0.20",
                        speculative = {heads = "extract_hidden_states", hidden_states = 3,
                                       tokens = 1}}:ledger()
  check.eq(row(hl2, "block", "group_blocks"), "544 544/544/136", "the hidden-state cache at 136")
end

-- A model with Mamba layers under full CUDA graphs refuses a max_num_seqs
-- above the pool's blocks (vllm-project/vllm#38270, assumed from 0.20:
-- engines.lua mamba_seqs_check; tests/v1/worker/test_gpu_model_runner.py
-- test_mamba_cache_raises_when_max_num_seqs_exceeds_blocks at 0099f1dfe34f).
-- NVIDIA-Nemotron-Nano-9B-v2 on an L4 at 32768 tokens: 217 blocks at 0.20's
-- default utilization 0.92 (174 at 0.9), the default max_num_seqs 256
do
  local function nemo_l4(extra)
    local o = {model = "nemotron-nano-9b-v2", gpu = "l4", engine_version = "0.20",
               max_model_len = 32768}
    for k, v in pairs(extra or {}) do o[k] = v end
    return kv.deploy(o)
  end
  local dn = nemo_l4()
  local ok, why = dn:starts()
  check.eq(dn:ledger().kv_blocks, 217, "217 blocks")
  check.eq(ok, false, "256 sequences do not start")
  check.eq(why, "vLLM refuses to start (\"max_num_seqs (256) exceeds available Mamba cache blocks "
           .. "(217). Each decode sequence requires one Mamba cache block, so CUDA graph capture "
           .. "cannot proceed. Please lower max_num_seqs to at most 217 or increase "
           .. "gpu_memory_utilization.\")", "vLLM's words")
  check.eq(select(3, dn:ledger():fit(32768, 1)), "starts", "the verdict names the refusal")
  check.eq((nemo_l4{max_num_seqs = 217}:starts()), true, "217 sequences start")
  check.eq((nemo_l4{enforce_eager = true}:starts()), true, "no CUDA graphs: no check")
  check.eq((nemo_l4{engine_version = "0.11"}:starts()), true, "0.11: capture sizes capped silently")
end

-- tests/v1/worker/test_gpu_model_runner.py at 0099f1dfe34f,
-- test_init_kv_cache_without_kv_sharing and _with_kv_sharing_valid: two
-- layers of 8 KV heads of 64 in fp16 (32 KiB pages); 20 GiB hold 327680
-- blocks, and at 5 GiB vLLM estimates 1310720 tokens. A layer that reads the
-- first's KV (kv_sharing_target_layer_name) holds none: a layer of kind
-- "none" here, twice the blocks and twice the estimate
do
  local function opt(kinds, mem)
    local m = kv.model{id = "opt-2", layers = 2, hidden = 512, heads = 8, kv_heads = 8, head_dim = 64,
                       params = 0, max_context = 3000000, layer_kinds = kinds}
    return kv.deploy{model = m, kv = "fp16", gpu_memory = "100 GiB", activation = 0, overhead = 0,
                     max_model_len = 3000000, kv_cache_memory_bytes = mem,
                     engine_version = "0.21"}:ledger()
  end
  check.eq(opt(nil, 20 * GiB).kv_blocks, 327680, "without sharing: 327680 blocks")
  check.eq(opt(nil, 5 * GiB).vllm_max_model_len, 1310720, "estimate at 5 GiB")
  local shared = {{kind = "full"}, {kind = "none"}}
  check.eq(opt(shared, 20 * GiB).kv_blocks, 655360, "with sharing: 655360 blocks")
  check.eq(opt(shared, 5 * GiB).vllm_max_model_len, 2 * 1310720, "twice the estimate")
end

-- The block of a model of attention and Mamba layers grows in multiples of
-- max(the kernel's alignment, the given block) from vllm-project/vllm#37467
-- (vllm/platforms/interface.py _align_hybrid_block_size at c77619938d1c;
-- engines.lua block_grain, assumed from 0.20). vllm-project/vllm#41037
-- (2026-04-27) logs NVIDIA-Nemotron-3-Nano-30B-A3B-FP8 (fp8 KV, 2 KV heads of
-- 128: 512 bytes a token; a Mamba state of 2134016 bytes at TP 1) under
-- --block-size 32 raised to 4192 at TP 1 and 2 and to 2112 at TP 4; a grain of
-- 16 gives 4176 and 2096
do
  local m = kv.model{id = "nano30-like", layers = 2, hidden = 2688, heads = 32, kv_heads = 2,
                     head_dim = 128, params = 0, max_context = 262144,
                     layer_kinds = {{kind = "state", state_bytes = 2134016, state_heads = 64},
                                    {kind = "full"}}}
  local function at(v, tp, block)
    return kv.deploy{model = m, kv = "fp8", gpu_memory = "80 GiB", tp = tp, activation = 0,
                     overhead = 0, block = block, engine_version = v,
                     max_model_len = 8192}:ledger().block
  end
  check.eq(at("0.20", 1, 32) .. " " .. at("0.20", 2, 32) .. " " .. at("0.20", 4, 32),
           "4192 4192 2112", "#41037: block 32 is the grain")
  check.eq(at("0.20", 1, 16) .. " " .. at("0.20", 4, 16), "4176 2096", "the default block: 16")
  check.eq(at("0.14", 1, 32) .. " " .. at("0.14", 4, 32), "4176 2096",
           "before #37467 the grain is 16 whatever the block")
  check.eq(at("0.29", 1, 8192), 8192, "a given block that holds the state is kept")
end

-- tests/v1/core/test_kv_cache_interface.py at 68f3362c02e2 (TestFullAttentionSpec):
-- block 16, 4 KV heads of 64 in fp16: a page of 2 x 16 x 4 x 64 x 2 = 16384
-- bytes (test_page_size_bytes_standard); 16, 17, 32 and 53 tokens take 1, 2,
-- 2 and 4 pages (test_bytes_for_tokens); at blocks 8 to 64 a page of 1024 x
-- block and 3 x block + 5 tokens in 4 pages (test_different_block_sizes); an
-- MLA entry of the same 4 x 64 elements (one latent, no factor 2) a page of
-- 8192 (test_mla_page_size)
do
  local m = kv.model{id = "four-heads", layers = 1, hidden = 256, heads = 4, kv_heads = 4,
                     head_dim = 64, params = 0, max_context = 4096}
  local function at(block, model)
    return kv.deploy{model = model or m, kv = "fp16", gpu_memory = "1 GiB", activation = 0,
                     overhead = 0, block = block, max_model_len = 4096}:ledger()
  end
  local l16 = at(16)
  check.eq(l16.block_bytes, 16384, "test_page_size_bytes_standard")
  check.eq(l16:seq_bytes(16) .. " " .. l16:seq_bytes(17) .. " " .. l16:seq_bytes(32) .. " "
           .. l16:seq_bytes(53), "16384 32768 32768 65536", "test_bytes_for_tokens: 1, 2, 2, 4 pages")
  for _, b in ipairs{8, 16, 32, 64} do
    local lb = at(b)
    check.eq(lb.block_bytes, 1024 * b, "test_different_block_sizes: the page at block " .. b)
    check.eq(lb:seq_bytes(3 * b + 5), 4 * 1024 * b, "and 3 x " .. b .. " + 5 tokens in 4 pages")
  end
  local mla = kv.model{id = "mla-256", layers = 1, hidden = 256, heads = 4, kv_heads = 1,
                       head_dim = 64, params = 0, max_context = 4096,
                       layer_kinds = {{kind = "mla", kv_lora_rank = 192, rope_dim = 64}}}
  check.eq(at(16, mla).block_bytes, 8192, "test_mla_page_size")
end

-- tests/v1/core/test_mamba_block_size_alignment.py at af09eb78a5fb: Falcon-H1-Tiny
-- (a Mamba chunk of 128, conv 896 x 3 and SSM 24 x 32 x 64 bf16: a 103680-byte
-- state; 2 KV heads of 64, 512 bytes a token: 203 tokens a state) under
-- mamba_cache_mode "all". kvplan's mamba_block_size is the chunk the block
-- aligns to (vLLM's --mamba-block-size, else the config's chunk_size), as in
-- _align_hybrid_block_size at c77619938d1c (base_chunk_size = mamba_block_size
-- or the model's chunk): no --mamba-block-size (128), 64, 128 and 256 give the
-- test's 256. Its other cases (16 -> 256, 32 -> 256, 96 -> 384, 176 -> 1408)
-- are the fix of vllm-project/vllm#57266, lcm with the model's chunk as well,
-- which no stored vLLM source holds: kvplan keeps c77619938d1c's 208, 224, 288
-- and 352 (docs/predictions.md, 2026-12-04)
do
  local fh = kv.model{id = "falcon-h1-tiny-like", layers = 2, hidden = 768, heads = 8, kv_heads = 2,
                      head_dim = 64, params = 0, max_context = 8192,
                      layer_kinds = {{kind = "state", state_bytes = (896 * 3 + 24 * 32 * 64) * 2,
                                      state_heads = 24}, {kind = "full"}}}
  local function all_at(chunk)
    return kv.deploy{model = fh, kv = "bf16", gpu_memory = "1 GiB", activation = 0, overhead = 0,
                     mamba_cache_mode = "all", mamba_block_size = chunk, max_model_len = 8192,
                     engine_version = "0.29"}:ledger().group_blocks
  end
  for _, c in ipairs{64, 128, 256} do
    check.eq(all_at(c), "256/256", "test_mamba_all_mode_block_size_is_chunk_aligned: " .. c)
  end
  check.eq(all_at(96), "288/288", "c77619938d1c: lcm(96, 16) x cdiv(203, 96)")
end

-- tests/v1/core/test_kv_pool_unservable_requests.py at 479413adcf65 (vllm-project/
-- vllm#52520): a full layer and an align-mode Mamba group with 3 speculative
-- tokens, blocks of 16, max_model_len 1024: the startup minimum is 64 + 2 + 3 =
-- 69 blocks, and beside the null block a request holds (69 - 1 - 5) x 16 = 1008
-- tokens (Scheduler.max_servable_num_tokens); 70 blocks cover 1024. kvplan's
-- admission answer is the context whose 3 lookahead slots fit as well
-- (allocate_slots): 1008 - 3; the startup check of 0.29 refuses 69 (#47272) and
-- estimates 1008
do
  local m = kv.model{id = "gdn-tiny", layers = 2, hidden = 64, heads = 1, kv_heads = 1, head_dim = 1,
                     params = 0, max_context = 1024,
                     layer_kinds = {{kind = "full"}, {kind = "state", state_bytes = 4}}}
  local function pool(n)
    return kv.deploy{model = m, kv = "fp32", gpu_memory = "1 GiB", activation = 0, overhead = 0,
                     max_model_len = 1024, max_num_batched_tokens = 256, max_num_seqs = 1,
                     mamba_cache_mode = "align", num_gpu_blocks_override = n,
                     speculative = {tokens = 3}, engine_version = "0.29"}:ledger()
  end
  local p69, p70 = pool(69), pool(70)
  check.eq(p69:max_context(1) + 3, 1008, "test_max_servable_num_tokens_reserves_the_null_block")
  check.eq(row(p69, "vllm_starts", "vllm_max_model_len"), "false 1008", "0.29's check and estimate")
  check.eq(p70:max_context(1), 1024, "one block more covers max_model_len")
end
