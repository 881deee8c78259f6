-- tests/lua/optim_test.lua: the optimization models, their composition and
-- their errors.
local kv = require "kvplan"
local check = require "check"
local o = kv.optim
local GiB = kv.units.GiB

-- the 70B-class model of examples/recompute_article_ledger.lua, true 4-bit weights, one 80 GiB card, 5 % safety,
-- 2 GiB overhead: 43089707476 bytes left for KV (test_ledger.c)
local seed70 = kv.model{id = "seed-000-70b", layers = 80, hidden = 8192, heads = 64,
                        kv_heads = 8, head_dim = 128, params = 70000000000, dtype = "bf16"}
local base = {model = seed70, gpu_memory = 80 * GiB, utilization = 0.95, overhead = 2 * GiB,
              weights = "int4-g128", max_model_len = 131072}
local function dep(combo, extra)
  local b = {}
  for k, v in pairs(base) do b[k] = v end
  for k, v in pairs(extra or {}) do b[k] = v end
  b.optim = combo
  return kv.deploy(b)
end
local BUDGET = 43089707476
local TOKEN = 327680 -- bytes a bf16 token on 80 layers
local BLOCK = 16 * TOKEN

-- allocation: a contiguous reservation of max_model_len against paged blocks
local l = dep{o.contiguous{}}:ledger()
check.eq(l.kv_budget, BUDGET, "budget")
check.eq(l:seq_bytes(8192), 131072 * TOKEN, "reserved whatever the length")
check.eq(l:max_concurrency(8192), BUDGET // (131072 * TOKEN), "one reservation")
check.eq(o.real_token_pct(dep{o.contiguous{}}, 8192), 100 * 8192 / 131072, "6.25 % real tokens")
l = dep{o.paged{block = 16}}:ledger()
check.eq(l:max_concurrency(8192), (BUDGET // BLOCK - 1) // 512, "paged 8K requests")
check.eq(o.real_token_pct(dep{o.paged{}}, 8190), 100 * 8190 / 8192, "waste in the last block")

-- KV quantization: fp8 halves; KIVI int2 g32 with fp16 scale and zero keeps
-- the last 128 tokens in bf16: a head row of 128 is 256 + 4 x 32 bits
l = dep{o.paged{block = 16}, o.kv_quant "fp8"}:ledger()
check.eq(l:max_concurrency(8192), (BUDGET // (BLOCK // 2) - 1) // 512, "fp8 8K requests")
l = dep{o.kivi{bits = 2, group = 32, recent = 128}}:ledger()
check.eq(l.kv_bytes_per_token, 80 * 8 * 2 * 384 // 8, "KIVI bytes a token")
check.eq(l:seq_bytes(8192), 80 * (504 * 16 * 768 + 8 * 16 * 4096), "8064 quantized + 128 bf16")

-- continuous batching: 32 strata means of uniform 1..8192 are 129 + 256 i,
-- 9 + 16 i blocks each; fp8 blocks of 2621440 bytes
local u = kv.workload.uniform{min = 1, max = 8192}
check.eq(u:mean(), 4096.5, "uniform mean")
local pts = u:points()
check.eq(#pts, 32, "points")
check.eq(pts[1], 129, "first point")
check.eq(pts[32], 129 + 256 * 31, "last point")
l = dep{o.paged{block = 16}, o.kv_quant "fp8", o.continuous{lengths = u}}:ledger()
check.eq(l:max_concurrency(8192), (BUDGET - BLOCK // 2) * 32 // (8224 * (BLOCK // 2)),
         "expected, not worst-case, lengths")
local own, shared, expected = l:request_bytes(8192)
check.eq(own, 512 * BLOCK // 2, "worst case")
check.eq(expected, 8224 / 32 * BLOCK // 2, "expected bytes")
l = dep{o.continuous{lengths = kv.workload.fixed(8192)}}:ledger()
check.eq(l:max_concurrency(8192), (BUDGET // BLOCK - 1) // 512, "a fixed length changes nothing")

-- eviction: StreamingLLM keeps 4 + 2044, H2O ceil(0.2 n) + 256, per-layer budgets
check.eq(dep{o.streaming{sinks = 4, recent = 2044}}:ledger():seq_bytes(131072), 2048 * TOKEN,
         "streaming")
check.eq(dep{o.h2o{keep = 0.2, recent = 256}}:ledger():seq_bytes(10000), 141 * 16 * TOKEN,
         "h2o: 2256 tokens, 141 blocks")
l = dep{o.layer_budgets{budgets = function(i) return i <= 40 and 1024 or 512 end}}:ledger()
check.eq(l:seq_bytes(8192), (40 * 64 + 40 * 32) * 16 * 4096, "per-layer budgets")
local q = o.quality{o.h2o{keep = 0.2, recent = 256}, o.paged{}}
check.eq(q, "not modelled: h2o-0.2-256 (eviction)", "quality column")

-- sharing: a 2048-token prefix held once; 4 samples sharing a 4096-token prompt
own, shared = dep{o.prefix{tokens = 2048}}:ledger():request_bytes(8192)
check.eq(own, 384 * BLOCK, "own blocks")
check.eq(shared, 128 * BLOCK, "shared once")
own = dep{o.parallel_sampling{n = 4, prompt = 4096}}:ledger():request_bytes(8192)
check.eq(own, (4 * 256 + 256) * BLOCK, "4 x 256 own blocks + 256 prompt blocks")
own = dep{o.parallel_sampling{n = 4, output = 4096}}:ledger():request_bytes(8192)
check.eq(own, (4 * 256 + 256) * BLOCK, "the prompt as context - output")

-- offload: host blocks beside the pool
l = dep{o.offload{host = "512 GiB", pcie_gbps = 64}}:ledger()
check.eq(l.host_blocks, 512 * GiB // BLOCK, "host blocks")
check.eq(l:max_concurrency(8192), (BUDGET + l.host_blocks * BLOCK - BLOCK) // (512 * BLOCK),
         "GPU and host")

-- budget rules side by side: the same inputs, three engines
local rows = {}
for _, rule in ipairs{"vllm", "sglang", "trtllm"} do
  local d = dep({o.budget(rule)}, {activation = GiB})
  rows[rule] = d:ledger()
end
-- vLLM's default utilization of the newest release modelled (0.92 from the
-- 0.20 row, vllm-project/vllm#38284; 0.9 before): no release means it
check.eq(rows.vllm.kv_budget, 80 * GiB * 92 // 100 - 36367187500 - 3 * GiB, "vllm")
check.eq(rows.vllm:max_concurrency(8192), 14, "vllm 8K")
check.eq(rows.sglang.kv_budget, math.floor(78 * GiB * 0.88) - 36367187500, "sglang")
check.eq(rows.sglang.kv_pool, rows.sglang.kv_budget // TOKEN * TOKEN, "whole pages of 1 token")
check.eq(rows.sglang:max_concurrency(8192), rows.sglang.kv_budget // TOKEN // 8192, "sglang 8K")
local free = 80 * GiB - 36367187500 - 3 * GiB
check.eq(rows.trtllm.kv_budget, math.floor(free * 0.9), "trtllm: 0.9 of the free memory")
check.eq(rows.trtllm.kv_blocks, -(-(rows.trtllm.kv_budget // TOKEN) // 64), "ceil to 64-token blocks")
check.eq(rows.trtllm:max_concurrency(8192), rows.trtllm.kv_blocks // 128, "trtllm 8K")
check.eq(dep({o.budget{rule = "trtllm", max_tokens = 65536}}, {activation = GiB}):ledger().kv_blocks,
         1024, "max_tokens caps the pool")

-- speculative decoding: a draft model's weights and KV; EAGLE heads as one layer
local d8 = kv.deploy{model = "llama-3.1-8b", gpu = "h100",
                     optim = o.speculative{draft = "llama-3.2-1b", tokens = 4, acceptance = 0.7}}
l = d8:ledger()
check.eq(l.kv_bytes_per_token, 131072 + 16 * 2 * 8 * 64 * 2, "target + draft KV a token")
check.eq(l:seq_bytes(8192), 513 * 16 * (131072 + 32768), "8192 + 4 slots")
check.eq(l.weights, kv.model("llama-3.1-8b"):weight_size() + kv.model("llama-3.2-1b"):weight_size()
         + l.rotary, "draft weights")
local e8 = kv.deploy{model = "llama-3.1-8b", gpu = "h100",
                     optim = o.speculative{heads = "eagle", layers = 1, tokens = 4, acceptance = 0.8}}
check.eq(e8:ledger().kv_bytes_per_token, 131072 + 4096, "one more layer")
check.eq(e8:ledger().weights, 16060522496 + 2 * (8030261248 // 32 + 2 * 4096 * 4096)
         + e8:ledger().rotary, "head weights")
local rates = o.speculative_rates(0.7, 4)
assert(math.abs(rates.tokens_per_step - (1 - 0.7 ^ 5) / 0.3) < 1e-12, "Leviathan")
assert(math.abs(rates.target_writes_per_token - 5 / rates.tokens_per_step) < 1e-12, "writes")
local row = o.row(d8, 8192, 1)
check.eq(row.spec_tokens_per_step, rates.tokens_per_step, "a speculative column")
check.eq(row.optim, "spec-llama-3.2-1b-g4-a0.7", "optim column")

-- fewer KV heads: GQA, MQA, MLA
local g = kv.deploy{model = "llama-2-7b", gpu = "h100", optim = o.gqa{kv_heads = 8}}
check.eq(g.model:kv_bytes_per_token(), 32 * 2 * 8 * 128 * 2, "gqa-8")
check.eq(g.model.params, 6738415616 - 32 * 2 * 4096 * 128 * 24, "K and V projections shrink")
check.eq(kv.deploy{model = "llama-2-7b", gpu = "h100", optim = o.mqa{}}.model:kv_bytes_per_token(),
         32 * 2 * 128 * 2, "mqa")
local mla = kv.deploy{model = "llama-3.1-8b", gpu = "h100", optim = o.mla{kv_lora_rank = 512, rope_dim = 64}}
check.eq(mla.model:kv_bytes_per_token(), 32 * 576 * 2, "mla: one latent, no factor 2")

-- composition: any listed order gives the same name and byte-identical CSV
local dir = check.tmpdir()
local function csv_of(list, path)
  local cols = o.columns(list)
  local r = kv.report{columns = cols, path = path}
  for _, c in ipairs(list) do
    local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100", weights = "int4-g128",
                        max_model_len = 32768, optim = c}
    r:row(o.row(d, 32768, 4, cols))
  end
  r:close()
  return check.slurp(path)
end
local a = {o.budget "sglang", o.kv_quant "fp8", o.prefix{tokens = 1024}, o.paged{block = 32},
           o.speculative{heads = "eagle", tokens = 3, acceptance = 0.6},
           o.continuous{lengths = kv.workload.lognormal{median = 4000, sigma = 0.8}}}
local b = {}
for i = #a, 1, -1 do b[#b + 1] = a[i] end
check.eq(o.name(a), o.name(b), "names")
check.eq(o.name(a), "budget-sglang+kv-fp8+paged-32+prefix-1024+spec-eagle-1-g3-a0.6+"
         .. "continuous-lognormal-median4000-s0.8", "phase order")
local ca, cb = csv_of({a}, dir .. "/a.csv"), csv_of({b}, dir .. "/b.csv")
check.eq(ca, cb, "same CSV in either order")
local sa = csv_of(o.subsets{a[2], a[3], a[6]}, dir .. "/sa.csv")
local sb = csv_of(o.subsets{a[6], a[3], a[2]}, dir .. "/sb.csv")
check.eq(sa, sb, "same subsets in either order")
assert(not sa:find("nan") and not sa:find("inf"), "no NaN or inf in a report")
os.remove(dir .. "/a.csv"); os.remove(dir .. "/b.csv")
os.remove(dir .. "/sa.csv"); os.remove(dir .. "/sb.csv"); os.remove(dir)

-- sweep helpers
local names = {}
for i, c in ipairs(o.subsets{o.paged{}, o.contiguous{}, o.kv_quant "fp8"}) do names[i] = c.name end
check.eq(table.concat(names, " "), "none kv-fp8 contiguous paged kv-fp8+contiguous kv-fp8+paged",
         "subsets leave out two allocation policies")
names = {}
for i, c in ipairs(o.product{{o.paged{}, o.contiguous{}}, {o.none, o.kv_quant "fp8"}}) do
  names[i] = c.name
end
check.eq(table.concat(names, " "), "paged kv-fp8+paged contiguous kv-fp8+contiguous", "product")

-- a user-defined optimization works like the built-ins
local half = {name = "half-context", phase = "sharing", doc = "serve at most half the context",
              apply = function(opts) opts.max_model_len = 65536 return opts end,
              columns = {note = function() return "halved" end}}
local hd = dep{half, o.paged{}}
check.eq(hd.optim.name, "paged+half-context", "user optimization in phase order")
check.eq(hd:ledger().max_model_len, 65536, "its apply ran")
check.eq(o.row(hd, 8192, 1).note, "halved", "its column")

-- invalid parameters: the field, the value, this file's line; never NaN
check.error("optim_test.lua:186: field 'acceptance' must be in [0, 1), got 1", function()
  o.speculative{draft = "llama-3.2-1b", tokens = 4, acceptance = 1} end)
check.error("field 'acceptance' must be in [0, 1), got -0.5",
            o.speculative, {heads = "eagle", tokens = 4, acceptance = -0.5})
check.error("field 'acceptance' must be in [0, 1), got nan",
            o.speculative, {heads = "eagle", tokens = 4, acceptance = 0 / 0})
check.error("field 'keep' must be in (0, 1], got 0", o.h2o, {keep = 0, recent = 256})
check.error("field 'keep' must be in (0, 1], got 1.5", o.h2o, {keep = 1.5, recent = 256})
check.error("eviction window sinks + recent = 200004 tokens exceeds max_model_len 131072: it "
            .. "would evict nothing", dep, {o.streaming{sinks = 4, recent = 200000}})
check.error("field 'prefix' (200000 tokens) exceeds max_model_len 131072: no request holds the "
            .. "whole prefix", dep, {o.prefix{tokens = 200000}})
check.error("unknown hook 'aply' in optimization 'x' (did you mean 'apply'?)", o.define,
            {name = "x", phase = "model", aply = function() end})
check.error("optimization 'x': unknown phase 'modle' (did you mean 'model'?)", o.define,
            {name = "x", phase = "modle", apply = function(t) return t end})
check.error("optimizations 'kivi-2b-g32-r128' and 'kv-fp8' both set the KV format: a "
            .. "combination takes one", o.combine, {o.kv_quant "fp8", o.kivi{}})
check.error("optimization 'paged' appears twice in a combination", o.combine, {o.paged{}, o.paged{}})
check.error("optimization 'bad': apply must return the deployment options, got nil", dep,
            {{name = "bad", phase = "model", apply = function() end}})
check.error("parallel_sampling needs 'prompt'", o.parallel_sampling, {n = 4})
check.error("unknown budget rule 'sglan' (did you mean 'sglang'?)", o.budget, "sglan")
check.error("field 'kv_heads' must divide the 32 attention heads of 'llama-2-7b', got 5", kv.deploy,
            {model = "llama-2-7b", gpu = "h100", optim = o.gqa{kv_heads = 5}})
check.error("field 'allocation' must be paged or contiguous, got string 'pagd'", kv.deploy,
            {model = "llama-3.1-8b", gpu = "h100", allocation = "pagd"})
check.error("unknown field 'foo' in the options optimization 'x' returned", o.apply,
            {model = "llama-3.1-8b"}, {{name = "x", phase = "model",
                                        apply = function(t) t.foo = 1 return t end}})
