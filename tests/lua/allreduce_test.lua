-- tests/lua/allreduce_test.lua: which kernel runs a TP all-reduce of a
-- given size, by engine (sim.lua M.allreduce_custom_below), and where the
-- GPU has an NCCL table (sim.lua M.nccl_allreduce) the messages from the
-- engine's limit on priced at NCCL's bus bandwidth by size.
local kv = require "kvplan"
local sim = require "kvplan.sim"
local check = require "check"

local function dep(engine, tp, gpu, extra)
  local o = {model = "llama-3.1-70b", gpu = gpu or "a100-sxm-80gb", tp = tp, engine = engine}
  for k, v in pairs(extra or {}) do o[k] = v end
  return kv.deploy(o)
end

-- the path's limit by engine and TP size
check.eq(sim.allreduce_custom_below(dep("vllm", 8)), 8388608, "vLLM: custom all-reduce below 8 MiB")
check.eq(sim.allreduce_custom_below(dep("sglang", 4)), 8388608, "SGLang: _MAX_CAR_SIZE 8 MiB")
check.eq(sim.allreduce_custom_below(dep("trtllm", 2)), 16000001, "TensorRT-LLM TP 2: 16,000,000 B workspace")
check.eq(sim.allreduce_custom_below(dep("trtllm", 4)), 8000001, "TensorRT-LLM TP 4: 8,000,000 B workspace")
check.eq(sim.allreduce_custom_below(dep("trtllm", 8)), 8000001, "TensorRT-LLM TP 8: 8,000,000 B workspace")
check.eq(sim.allreduce_custom_below(dep("vllm", 3)), 0, "vLLM TP 3: no custom all-reduce, NCCL at every size")
-- vLLM from 0.11 on an SM 9.0 GPU: NCCL from the symmetric-memory limit on
-- (64 MiB at TP 8, 32 MiB at TP 4); before 0.11, or on the A100, from 8 MiB
check.eq(sim.allreduce_custom_below(dep("vllm", 8, "h100-sxm", {engine_version = "0.11.0"})), 67108864,
         "vLLM 0.11 H100 TP 8: 64 MiB")
check.eq(sim.allreduce_custom_below(dep("vllm", 4, "h200", {engine_version = "0.13.0"})), 33554432,
         "vLLM 0.13 H200 TP 4: 32 MiB")
check.eq(sim.allreduce_custom_below(dep("vllm", 8, "h100-sxm", {engine_version = "0.10.2"})), 8388608,
         "vLLM 0.10.2 H100: 8 MiB")
check.eq(sim.allreduce_custom_below(dep("vllm", 8, nil, {engine_version = "0.11.0"})), 8388608,
         "vLLM 0.11 A100 (SM 8.0): 8 MiB")

-- the rates the core gets: the curve and the limit on a GPU with a table
local p = sim.perf(dep("trtllm", 8))
check.eq(#p.nccl_bytes, 24, "ND A100 v4: 24 sizes, 1 KiB .. 8 GiB")
check.eq(p.nccl_bytes[1], 1024, "first size 1 KiB")
check.eq(p.nccl_bytes[24], 8589934592, "last size 8 GiB")
check.eq(p.nccl_busbw[14], 89.99, "8 MiB: 89.99 GB/s")
check.eq(p.ar_custom_below, 8000001, "TensorRT-LLM's limit passed")
-- no table (B200), a user's link rate
-- or link efficiency: no curve, the flat rate as before
check.eq(sim.perf(dep("vllm", 8, "b200")).nccl_bytes, nil, "B200: no table")
check.eq(#sim.perf(dep("vllm", 8, "h100-sxm")).nccl_bytes, 24, "ND H100 v5: 24 sizes")
check.eq(sim.perf(dep("trtllm", 8, nil, {perf = {link_gbps = 600}})).nccl_bytes, nil, "perf.link_gbps given")
check.eq(sim.perf(dep("trtllm", 8, nil, {efficiency = {link = 0.8}})).nccl_bytes, nil,
         "efficiency.link given")

-- Llama 3.1 70B (hidden 8192: 16384 bytes a token a message) at TP 8 on
-- A100: 400 tokens (6,553,600 B) stay on every engine's own kernel; 496
-- tokens (8,126,464 B; a vLLM graph size, so not padded) are above
-- TensorRT-LLM's 8,000,000 B workspace but below vLLM's 8 MiB: NCCL under
-- TensorRT-LLM alone
for _, e in ipairs{"vllm", "sglang", "trtllm"} do
  check.eq(dep(e, 8):time(1000, 400).nccl_ms, 0, e .. ": 400 tokens on the engine's kernel")
end
local t = dep("trtllm", 8):time(1000, 496)
assert(t.nccl_ms > 0, "TensorRT-LLM: 496 tokens run NCCL")
check.eq(dep("vllm", 8):time(1000, 496).nccl_ms, 0, "vLLM: 496 tokens below 8 MiB")
-- by hand: 160 all-reduces (80 layers x 2) of 8,126,464 B x 2 (8 - 1) / 8, at
-- the busbw 8,126,464 B reads between 4 MiB (71.43) and 8 MiB (89.99) in log bytes
local bytes = 496 * 16384
local f = math.log(bytes / 4194304) / math.log(2)
local busbw = 71.43 + f * (89.99 - 71.43)
local want = 160 * bytes * 1.75 / (busbw * 1e9) * 1e3
assert(math.abs(t.nccl_ms - want) < 1e-9 * want, string.format("nccl_ms %.9g, expected %.9g", t.nccl_ms, want))
-- vLLM's TP 8 at 600 tokens (9.8 MB) runs NCCL too, slower than the flat link
local v = dep("vllm", 8):time(1000, 600)
local flat = dep("vllm", 8, nil, {efficiency = {link = 0.8}}):time(1000, 600)
assert(v.nccl_ms > 0 and v.comm_ms > flat.comm_ms, "vLLM 600 tokens: NCCL, slower than 240 GB/s")

-- calibrate's link factor moves NCCL's curve by its ratio too (factors.perf_at),
-- as the memory and compute factors move the GEMM curves
local factors = require "kvplan.factors"
local d8 = dep("trtllm", 8)
local own = d8:perf()
local q = factors.perf_at(d8, {link = own.link_eff / 2})
check.eq(q.link_eff, own.link_eff / 2, "the flat factor")
check.eq(q.nccl_busbw[14], own.nccl_busbw[14] / 2, "NCCL's 8 MiB busbw halved with it")

-- MI300X (issue 18, brief linkgpu): RCCL's busbw by size (Azure's ND MI300X
-- v5 table, sim.lua nccl_allreduce.mi300x), the custom all-reduce's own
-- small-message latency (7.4 us, sim.lua link_latency_us_gpu) and SGLang's
-- 16 MiB limit on ROCm (_MAX_CAR_SIZE = 2 x 8192 x 1024)
local m = sim.perf(dep("vllm", 8, "mi300x"))
check.eq(#m.nccl_bytes, 24, "ND MI300X v5: 24 sizes, 1 KiB .. 8 GiB")
check.eq(m.nccl_busbw[14], 131.57, "MI300X 8 MiB: 131.57 GB/s")
check.eq(m.nccl_busbw[24], 316.82, "MI300X 8 GiB: 316.82 GB/s")
check.eq(m.link_latency_us, 7.4, "MI300X: vLLM's custom all-reduce, 7.4 us")
check.eq(m.ar_custom_below, 8388608, "vLLM on ROCm: CustomAllreduce below 8 MiB")
check.eq(sim.perf(dep("vllm", 8)).link_latency_us, 9, "A100: the H100's 9 us default")
check.eq(sim.perf(dep("vllm", 8, "mi300x", {perf = {link_latency_us = 12}})).link_latency_us, 12,
         "perf.link_latency_us given")
check.eq(sim.allreduce_custom_below(dep("sglang", 8, "mi300x")), 16777216, "SGLang on ROCm: 16 MiB")
check.eq(sim.allreduce_custom_below(dep("sglang", 3, "mi300x")), 0, "SGLang TP 3: NCCL at every size")
check.eq(sim.allreduce_custom_below(dep("vllm", 4, "mi300x", {engine_version = "0.11.0"})), 8388608,
         "vLLM 0.11 on MI300X: no symmetric-memory limit (CUDA only)")
-- by hand: 600 tokens (9,830,400 B) at TP 8: vLLM runs RCCL, 160 all-reduces
-- at the busbw read between 8 MiB (131.57) and 16 MiB (171.46) in log bytes;
-- SGLang's kernel keeps them (below 16 MiB)
local tm = dep("vllm", 8, "mi300x"):time(1000, 600)
local mb = 600 * 16384
local mf = math.log(mb / 8388608) / math.log(2)
local mbw = 131.57 + mf * (171.46 - 131.57)
local mwant = 160 * mb * 1.75 / (mbw * 1e9) * 1e3
assert(math.abs(tm.nccl_ms - mwant) < 1e-9 * mwant, string.format("MI300X nccl_ms %.9g, expected %.9g", tm.nccl_ms, mwant))
check.eq(dep("sglang", 8, "mi300x"):time(1000, 600).nccl_ms, 0, "SGLang MI300X: 600 tokens below 16 MiB")
-- 400 tokens stay on the custom kernel: 160 collectives at 7.4 us, not 9
local t74 = dep("vllm", 8, "mi300x"):time(1000, 400)
local t9 = dep("vllm", 8, "mi300x", {perf = {link_latency_us = 9}}):time(1000, 400)
check.eq(t74.nccl_ms, 0, "MI300X 400 tokens: custom all-reduce")
local dl = (t9.comm_ms - t74.comm_ms) / (1.6e-3)
assert(math.abs(dl - 160) < 1e-6, string.format("MI300X: %.9g collectives at 1.6 us less, expected 160", dl))
