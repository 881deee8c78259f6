-- tests/lua/step_paths_test.lua: the three paths that price one engine step
-- agree on the step-time terms of issue 18 (core review, 2026-12-04): the
-- deployment's time (kvp_time_at), the simulator's per-step path (sim.c
-- run_step) and a sweep's timed column (sweep_text_lua.c, kvp_time_at on the
-- sweep's own perf). c requests of P prompt tokens and 2 output tokens, all
-- sent at 0 with room for every prompt in one step: step 1 prefills them,
-- step 2 decodes c sequences at P tokens each, so the simulated TPOT is that
-- step, the time at (P, c) and the sweep's tpot_ms at context P and
-- concurrency c.
local kv = require "kvplan"
local check = require "check"

local function paths(o, P, c)
  local d = kv.deploy(o)
  local so = {}
  for k, v in pairs(o) do so[k] = v end
  so.requests, so.prompt, so.output = c, P, 2
  so.max_num_batched_tokens, so.max_num_seqs = P * c, 1024
  -- SGLang's rates (its all-reduce limit, block-FP8 tile) on the continuous
  -- scheduler, which admits every prompt in one step
  if o.engine == "sglang" then so.scheduler = "continuous" end
  local r = kv.simulate(so)
  check.eq(r.steps, 2, o.model .. ": one prefill step, one decode step")
  local t = d:time(P, c)
  local path = check.tmpdir() .. "/sweep.csv"
  kv.sweep{model = o.model, gpu = o.gpu, tp = o.tp, engine = o.engine, context = P,
           concurrency = c, columns = {"tpot_ms"}}:write(path)
  local sw = kv.csv.read(path)[2][1]
  assert(math.abs(r.tpot_ms.mean - t.tpot_ms) <= 1e-12 * t.tpot_ms,
         string.format("%s: simulated decode step %.12g ms, time %.12g ms", o.model,
                       r.tpot_ms.mean, t.tpot_ms))
  check.eq(sw, string.format("%.4f", t.tpot_ms), o.model .. ": the sweep's tpot_ms")
  return t, d:perf()
end

-- DeepSeek Sparse Attention at 3000 tokens (above index_topk 2048): the
-- latent over the top 2048, the indexer's keys and FLOPs over all 3000
local t, p = paths({model = "deepseek-v3.2", gpu = "h200", tp = 8}, 3000, 8)
check.eq(p.index_tflops, 1979, "the indexer at the H200's fp8 peak")
check.eq(t.nccl_ms, 0, "8 tokens: the engine's own all-reduce")
-- NCCL by message size: 600 tokens x 8192 x 2 B = 9.8 MB, above vLLM's 8 MiB
t = paths({model = "llama-3.1-70b", gpu = "a100-sxm-80gb", tp = 8}, 64, 600)
assert(t.nccl_ms > 0, "600 tokens of Llama 3.1 70B at TP 8: NCCL")
-- all four at once: SGLang's block-FP8 tile of 64 rows, its 8 MiB limit
-- (600 x 7168 x 2 B = 8.6 MB: NCCL), the indexer at fp8
t, p = paths({model = "deepseek-v3.2", gpu = "h200", tp = 8, engine = "sglang"}, 64, 600)
check.eq(p.gemm_tile_m, 64, "SGLang block-FP8 on SM90: 64-row tiles")
assert(t.nccl_ms > 0, "600 tokens of DeepSeek-V3.2 at TP 8: NCCL")

-- a step time past the largest double names issue 18's inputs beside the
-- GPU's rates (it named hbm_gbps .. loop_host_us alone): the indexer's rate,
-- the tile, the NCCL curve's smallest busbw; a tile is whole rows
local sim = require "kvplan.sim"
local function time_with(o, extra)
  local d = kv.deploy(o)
  local p = d:perf()
  for k, v in pairs(extra) do p[k] = v end
  return sim.time(d, 100, 4, p)
end
local ds = {model = "deepseek-v3.2", gpu = "h200", tp = 8}
check.error("index_tflops = 9.9998886718268e-321, gemm_tile_m = 0.0, nccl_busbw from 0.06 GB/s)",
            time_with, ds, {index_tflops = 1e-320})
check.error("gemm_tile_m = 1e+308, nccl_busbw from 0.06 GB/s)", time_with, ds, {gemm_tile_m = 1e308})
check.error("nccl_busbw from 9.9998886718268e-321 GB/s)", time_with, ds,
            {nccl_bytes = {1024}, nccl_busbw = {1e-320}, ar_custom_below = 0})
check.error("field 'gemm_tile_m' must be 0 or a whole number of rows >= 1, got 0.5", time_with, ds,
            {gemm_tile_m = 0.5})
-- the API server's queue past the largest double: the field's error
check.error("field 'api_s' = 1e+305 s: the API server's work of request 1798 ends past the largest double",
            kv.simulate, {model = "llama-3.1-8b", gpu = "h100-sxm", requests = 4000, prompt = 10,
                          output = 2, perf = {api_ms = 1e308}})
