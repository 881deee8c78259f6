-- tests/lua/sglang_weights_test.lua: SGLang's weights as its free-memory
-- reading sees them (deploy.lua sglang_weights_rule): PyTorch's caching
-- allocator's segments (engines.lua torch_segments, sglang_alloc_slack) and
-- the float32 rotary table, hand-counted.
local kv = require "kvplan"
local check = require "check"
local engines = require "kvplan.engines"

local MiB = 1 << 20
local seg = engines.torch_segments
-- small requests (at most 1 MiB) share 2 MiB segments, rounded to 512 bytes
check.eq(seg{1}, 2 * MiB, "one byte: a small segment")
check.eq(seg{MiB, MiB}, 2 * MiB, "two 1 MiB requests in one small segment")
check.eq(seg{MiB, MiB, 1}, 4 * MiB, "a third request opens a second one")
check.eq(seg{MiB, MiB - 1023, 1023}, 4 * MiB, "512-byte rounding: 1048064 + 1024 overflow the first")
-- 1 to 10 MiB: 20 MiB segments, split while more than 1 MiB remains
check.eq(seg{9 * MiB, 8 * MiB}, 20 * MiB, "9 + 8 MiB in one 20 MiB segment")
check.eq(seg{9 * MiB, 8 * MiB, 9 * MiB}, 40 * MiB, "the 3 MiB left does not hold 9")
check.eq(seg{9 * MiB, 8 * MiB, 3 * MiB}, 20 * MiB, "but holds 3")
-- 10 MiB and more: a segment rounded up to 2 MiB; its rest kept when over 1 MiB
check.eq(seg{17.5 * MiB // 1}, 18 * MiB, "17.5 MiB: 18")
check.eq(seg{25 * MiB // 2, 3 * MiB // 2}, 14 * MiB, "12.5 MiB's 1.5 MiB rest holds 1.5 MiB")
check.eq(seg{17 * MiB, 3 * MiB // 2}, 38 * MiB, "a 1 MiB rest is not split off")

-- QwQ-32B / Qwen2.5-32B at tp 4 (sglang-durand-qwq-32b-l4-tp4.log): a layer's
-- qkv 17.5 MiB (18), o_proj 12.5 (14), gate_up 135 (136), down 67.5 (68):
-- 3.5 MiB over 64 layers; embed_tokens and lm_head 371.25 MiB each (372);
-- qkv biases (3584 bytes) and two RMSNorms (10240) a layer and the final norm
-- in one small segment; the rotary table a 2 MiB multiple
local m = kv.model("qwen2.5-32b")
local small = 64 * (3584 + 2 * 10240) + 10240
local hand = 64 * 7 * MiB // 2 + 3 * MiB // 2 + (2 * MiB - small)
local bf16 = function() return m:dtype_format() end
check.eq(engines.sglang_alloc_slack(m, 4, bf16, 64 * MiB), hand, "QwQ-32B tp 4: hand count")
check.eq(engines.sglang_alloc_slack(m, 4, bf16, 16 * MiB), hand, "the 32768-row table alike")
local d = kv.deploy{model = "qwen2.5-32b", gpu = "l4", tp = 4, budget = "sglang", utilization = 0.85}
local l = d:ledger()
check.eq(l.alloc, hand, "ledger: the slack")
check.eq(l.rotary, 32768 * 128 * 4, "ledger: the float32 table")
-- the two RMSNorms a layer and the final one (5120 bf16 each) whole on every
-- GPU (models.lua replicated_params), the rest over tp 4
local rep = (64 * 2 * 5120 + 5120) * 2
check.eq(d.replicated_bytes, rep, "the norms whole on every GPU")
local split = (32763876352 * 2 - rep) // 4 + rep
check.eq(l.weights, split + hand + 32768 * 128 * 4, "ledger: in the weights")
-- the log's 15.54 GiB: 15.2578 + 0.2847 with QwQ's 131072 rows (docs/predictions.md)
check.eq(math.abs((split + hand + 64 * MiB) / (1 << 30) - 15.54) < 0.005, true,
         "QwQ-32B's logged weights")
-- not counted: a given weight_bytes, vLLM's budget, pipeline stages, a family not listed
check.eq(kv.deploy{model = "qwen2.5-32b", gpu = "l4", tp = 4, budget = "sglang",
                   weight_bytes = 16 * (1 << 30)}:ledger().alloc, 0, "a given weight_bytes")
check.eq(kv.deploy{model = "qwen2.5-32b", gpu = "l4", tp = 4}:ledger().alloc, 0, "vLLM's budget")
check.eq(kv.deploy{model = "qwen2.5-32b", gpu = "h100", tp = 2, pp = 2, budget = "sglang"}:ledger().alloc,
         0, "pipeline parallelism")
check.eq(engines.sglang_alloc_slack(kv.model("deepseek-v3"), 8, bf16, 0), nil, "MLA: not listed")
-- fp8 with 128 x 128 block scales: the fp32 scales are tensors of their own
local q = kv.model("qwen3-235b-a22b")
local fp8 = kv.format("fp8-b128x128")
local s8 = engines.sglang_alloc_slack(q, 4, function(k)
  return (k == "attention" or k == "experts") and fp8 or q:dtype_format()
end, 40960 * 128 * 4)
-- qkv 9 MiB and o_proj 8 MiB share a 20 MiB segment a layer (3 MiB over 94
-- layers); embed_tokens and lm_head 296.75 MiB each (298); w13 384 MiB and w2
-- 192 MiB whole; the small tensors in small segments (at most 2 MiB more a
-- segment of 94 x 1.17 MiB)
check.eq(s8 >= 94 * 3 * MiB + 5 * MiB // 2 and s8 < 94 * 3 * MiB + 5 * MiB // 2 + 70 * MiB, true,
         "Qwen3-235B-A22B-FP8 tp 4: about 0.3 GiB")
