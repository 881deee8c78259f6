-- tests/lua/formats_test.lua: format names and their exact bits.
local kv = require "kvplan"
local check = require "check"
local f = kv.formats

check.eq(f.bits(f.get "bf16"), 16.0, "bf16")
check.eq(f.bits(f.get "int4-g128"), 4.156, "int4-g128 (millibit precision)")
check.eq(f.bits(f.get "int4-g128-sym"), 4.125, "int4-g128-sym")
check.eq(f.bits(f.get "nvfp4"), 4.5, "nvfp4")
check.eq(f.bytes(f.get "INT3-G64", 64), 27, "int3-g64: ceil((64 x 3 + 16 + 3) / 8)")
check.eq(f.bytes(f.get "int4-g128", 70000000000), 36367187500, "70B int4-g128")
check.eq(f.bytes(f.get "int4", 3), 2, "rounded once")
check.error("unknown format 'fp9' (did you mean", f.get, "fp9", "kv")
check.error("bits must be 1..64, got 0", f.get, {bits = 0})
check.error("unknown field 'bitz' in format", f.get, {bitz = 4})

-- bitsandbytes: 4 bits and an fp32 absmax per 64; double quantization keeps
-- the absmax in 8 bits with an fp32 one per 256 of them; LLM.int8 an fp32
-- scale per row
check.eq(f.bytes(f.get "bnb-4bit", 4096 * 4096), 4096 * 4096 // 2 + 4096 * 4096 // 64 * 4, "bnb-4bit")
check.eq(f.bytes(f.get "bnb-4bit-dq", 4096 * 4096),
         4096 * 4096 // 2 + 4096 * 4096 // 64 + 4096 * 4096 // 64 // 256 * 4, "bnb-4bit-dq")
check.eq(f.bytes(f.get "bnb-int8-g4096", 4096 * 4096), 4096 * 4096 + 4096 * 4, "bnb-int8: row scales")
check.eq(f.bytes({bits = 4, group = 64, scale = 8, group2 = 256, scale2 = 32}, 64 * 257),
         (64 * 257 * 4 + 257 * 8 + 2 * 32) // 8, "a partial block of scales has its scale")
check.error("a second-level scale needs group2 >= 1", f.get, {bits = 4, group = 64, scale = 8, group2 = 256})
check.error("bad format 'bnb-int8-g0'", f.get, "bnb-int8-g0")
check.eq(f.bytes(f.get "int8-ch4096", 4096 * 4096), 4096 * 4096 + 4096 * 4, "int8-ch: an fp32 scale per row")

-- GGUF block types: each block's bytes (ggml-common.h static_asserts)
for name, want in pairs{q4_0 = {32, 18}, q4_1 = {32, 20}, q5_0 = {32, 22}, q5_1 = {32, 24},
                        q8_0 = {32, 34}, q2_k = {256, 84}, q3_k = {256, 110}, q4_k = {256, 144},
                        q5_k = {256, 176}, q6_k = {256, 210}} do
  check.eq(f.bytes(f.get(name), want[1] * 1000), want[2] * 1000, name .. ": bytes of 1000 blocks")
end
check.eq(f.get("Q4_K").name, "q4_k", "GGUF names in any case")

-- what a quantized layer holds by its shape (models.lua class_bytes): GPTQ's
-- act order (-act: vLLM's Marlin keeps the sorted g_idx and its sort indices,
-- 2 x int32 an input column), NVFP4's fp32 global and input scales a matrix;
-- fp8 with an fp32 scale per output channel or per block
local act = f.get "int4-g128-act"
check.eq(act.col .. "/" .. act.zero .. "/" .. act.group, "64/4/128", "int4-g128-act: g_idx columns")
check.eq(f.get("int4-g128-sym-act").zero, 0, "-sym-act: symmetric with act order")
check.eq(f.get("int4-g128").col, nil, "no act order: no g_idx held")
check.eq(f.bytes(act, 4096 * 4096), f.bytes(f.get "int4-g128", 4096 * 4096),
         "a tensor's bytes leave the columns to the classes")
check.eq(f.get("nvfp4").tensor, 64, "nvfp4: 2 fp32 a matrix")
check.eq(f.bytes(f.get "fp8-ch4096", 4096 * 4096), 4096 * 4096 + 4096 * 4, "fp8-ch: an fp32 scale per row")
check.eq(f.bytes(f.get "fp8-b128x128", 1024 * 1024), 1024 * 1024 + 64 * 4, "fp8-b128x128: fp32 per block")
check.eq(f.get({bits = 4, group = 16, scale = 8, tensor = 64}).tensor, 64, "tensor in a table")
check.error("field 'format.col' must be an integer 0..1024 (bits), got -1", f.get,
            {bits = 4, col = -1})
check.error("bad format 'fp8-b0x128'", f.get, "fp8-b0x128")
