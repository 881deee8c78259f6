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
