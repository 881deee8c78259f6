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
check.eq(l.weights, kv.formats.bytes(kv.formats.get "int4-g128", d.model.params), "weights")
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
check.error("deploy_test.lua:39: field 'tp' must be an integer >= 1, got -1",
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
