-- stdlib/kvplan/formats.lua: storage formats by name. The bits of a tensor are
-- computed exactly in the core (engine/core/format.c); this table names them.
-- Stdlib layer: add a format by adding a row.
--
-- A format is {bits, group, scale, zero}: every `group` elements share a
-- `scale`-bit scale and a `zero`-bit zero point (group 0: a per-tensor scale
-- that costs nothing per element). group2, scale2: double quantization, the
-- group scales themselves quantized, every `group2` of them sharing a
-- `scale2`-bit second-level scale (bitsandbytes' nested absmax).
-- tensor, col: what a quantized linear layer holds besides its elements, by
-- its shape: `tensor` bits a matrix (NVFP4's fp32 global scale and input
-- scale a shard) and `col` bits an input column of a layer (GPTQ's act-order
-- g_idx). They count where a model's weight classes are weighed
-- (models.lua classes_size: the classes' matrices and input columns) and,
-- for one format over a whole deployment, over all its linear layers
-- (models.lua weight_size and linear_shapes; the core's
-- kvp_deploy_weight_bytes over the model's linear_shards and linear_cols),
-- all by one core rule (kvp_format_weight_bytes, core.weight_bytes), not in
-- a tensor's bits (M.bits, M.bytes) nor in a KV cache.

local core = require "kvplan.core"
local util = require "kvplan.util"

local M = {}

M.table = {
  fp32      = {bits = 32, note = "IEEE single"},
  fp16      = {bits = 16, note = "IEEE half"},
  bf16      = {bits = 16, note = "bfloat16"},
  fp8       = {bits = 8, note = "fp8 e4m3, per-tensor scale (vLLM kv_cache_dtype fp8)"},
  fp8_e4m3  = {bits = 8, note = "fp8 e4m3, per-tensor scale"},
  fp8_e5m2  = {bits = 8, note = "fp8 e5m2, per-tensor scale"},
  -- vLLM's *_per_token_head KV modes: one fp32 scale per token, head and K/V;
  -- a group at least as long as a head row means one scale per row.
  fp8_per_token_head = {bits = 8, group = 1 << 30, scale = 32,
                        note = "fp8 with an fp32 scale per token and head (vLLM)"},
  -- the same for int8 (KVQuantMode.INT8_PER_TOKEN_HEAD; AttentionSpec.
  -- page_size_bytes adds 2 x block x kv_heads x 4 bytes, vllm 001cabc1be16)
  int8_per_token_head = {bits = 8, group = 1 << 30, scale = 32,
                         note = "int8 with an fp32 scale per token and head (vLLM)"},
  -- vLLM TurboQuant presets (turboquant/config.py TQ_PRESETS at 1471680b2471):
  -- a packed uint8 slot per token and head, its bytes from tq_key/tq_value bits
  -- and the head size (kvp_format_tq_slot); dense models keep their first and
  -- last two layers in the model dtype (boundary protection)
  turboquant_k8v4 = {bits = 8, tq_key = 8, tq_value = 4,
                     note = "TurboQuant: fp8 keys, 4-bit values (vLLM)"},
  turboquant_4bit_nc = {bits = 8, tq_key = 4, tq_value = 4,
                        note = "TurboQuant: 4-bit MSE keys, 4-bit values (vLLM)"},
  turboquant_k3v4_nc = {bits = 8, tq_key = 3, tq_value = 4,
                        note = "TurboQuant: 3-bit MSE keys, 4-bit values (vLLM)"},
  turboquant_3bit_nc = {bits = 8, tq_key = 3, tq_value = 3,
                        note = "TurboQuant: 3-bit MSE keys, 3-bit values (vLLM)"},
  int8      = {bits = 8, note = "int8, per-tensor or per-channel scale"},
  int4      = {bits = 4, note = "4 bits flat, scales not counted"},
  fp4       = {bits = 4, note = "fp4 e2m1 flat, scales not counted"},
  -- NVFP4 (vLLM ModelOptNvFp4LinearMethod.create_weights, vllm/model_executor/
  -- layers/quantization/modelopt.py at c9a59901113c): packed fp4 values, an
  -- fp8 weight_scale per 16 inputs, and per output shard an fp32
  -- weight_scale_2 (the global scale) and an fp32 input_scale: 64 bits a matrix
  nvfp4     = {bits = 4, group = 16, scale = 8, tensor = 64,
               note = "NVFP4: fp8 scale per 16 elements, fp32 global and input scales a matrix"},
  mxfp4     = {bits = 4, group = 32, scale = 8, note = "MXFP4 (OCP): e8m0 scale per 32 elements"},
  ["int4-g128"] = {bits = 4, group = 128, scale = 16, zero = 4,
                   note = "GPTQ/AWQ: fp16 scale and 4-bit zero per 128 (4.156 bits)"},
  ["int4-g128-sym"] = {bits = 4, group = 128, scale = 16,
                       note = "symmetric GPTQ: fp16 scale per 128 (4.125 bits)"},
  ["int4-g64"] = {bits = 4, group = 64, scale = 16, zero = 4,
                  note = "fp16 scale and 4-bit zero per 64"},
  ["int8-g128"] = {bits = 8, group = 128, scale = 16, note = "fp16 scale per 128"},
  -- bitsandbytes 4-bit, nf4 or fp4 alike in size (bitsandbytes/functional.py
  -- quantize_4bit at 01327aa0119f: blocksize 64, an fp32 absmax per block;
  -- compress_statistics (bnb_4bit_use_double_quant) quantizes the absmax
  -- to uint8 with quantize_blockwise(absmax, blocksize=256): an fp32 absmax
  -- per 256 blocks, and one fp32 offset per tensor, not counted)
  ["bnb-4bit"] = {bits = 4, group = 64, scale = 32,
                  note = "bitsandbytes nf4/fp4: fp32 absmax per 64 (4.5 bits)"},
  ["bnb-4bit-dq"] = {bits = 4, group = 64, scale = 8, group2 = 256, scale2 = 32,
                     note = "bitsandbytes nf4/fp4, double quantization: uint8 absmax per 64, " ..
                            "fp32 per 256 of them (4.127 bits)"},
  -- llama.cpp's GGUF block types, each block's bytes as ggml/src/ggml-common.h
  -- declares them (ggml-org/llama.cpp at 01243c587fec; QK_K = 256,
  -- K_SCALE_SIZE = 12): q4_0 an fp16 d and 16 bytes of nibbles per 32 (18
  -- bytes), q4_1 d and m (20), q5_0 d, 4 bytes of high bits and 16 of
  -- nibbles (22), q5_1 (24), q8_0 d and 32 int8 (34); the K super-blocks of
  -- 256: q2_K 16 bytes of 4-bit scales and mins, 64 of quants, d and dmin
  -- (84), q3_K 32 + 64 bytes of quants, 12 of scales, d (110), q4_K d, dmin,
  -- 12 bytes of scales, 128 of quants (144), q5_K the same and 32 of high
  -- bits (176), q6_K 128 + 64 bytes of quants, 16 int8 scales, d (210).
  -- The K types as two levels: sub-blocks of 16 or 32 with their scales
  -- (and mins: `zero`), the super-block's fp16 d (and dmin) over them
  -- (group2, scale2). A file type such as Q4_K_M mixes these per tensor
  -- (llama.cpp's quantizer): not one format.
  q4_0 = {bits = 4, group = 32, scale = 16, note = "GGUF Q4_0: 18 bytes per 32 (4.5 bits)"},
  q4_1 = {bits = 4, group = 32, scale = 32, note = "GGUF Q4_1: 20 bytes per 32 (5 bits)"},
  q5_0 = {bits = 5, group = 32, scale = 16, note = "GGUF Q5_0: 22 bytes per 32 (5.5 bits)"},
  q5_1 = {bits = 5, group = 32, scale = 32, note = "GGUF Q5_1: 24 bytes per 32 (6 bits)"},
  q8_0 = {bits = 8, group = 32, scale = 16, note = "GGUF Q8_0: 34 bytes per 32 (8.5 bits)"},
  q2_k = {bits = 2, group = 16, scale = 4, zero = 4, group2 = 16, scale2 = 32,
          note = "GGUF Q2_K: 84 bytes per 256 (2.625 bits)"},
  q3_k = {bits = 3, group = 16, scale = 6, group2 = 16, scale2 = 16,
          note = "GGUF Q3_K: 110 bytes per 256 (3.4375 bits)"},
  q4_k = {bits = 4, group = 32, scale = 6, zero = 6, group2 = 8, scale2 = 32,
          note = "GGUF Q4_K: 144 bytes per 256 (4.5 bits)"},
  q5_k = {bits = 5, group = 32, scale = 6, zero = 6, group2 = 8, scale2 = 32,
          note = "GGUF Q5_K: 176 bytes per 256 (5.5 bits)"},
  q6_k = {bits = 6, group = 16, scale = 8, group2 = 16, scale2 = 16,
          note = "GGUF Q6_K: 210 bytes per 256 (6.5625 bits)"},
  -- vLLM kv_cache_dtype fp8_ds_mla (FlashMLA sparse, DeepSeek-V3.2): the 512
  -- latent elements in fp8 with an fp32 scale per 128, the 64 rope elements
  -- in bf16: 656 bytes a token (vllm/v1/kv_cache_interface.py
  -- MLAAttentionSpec.real_page_size_bytes, vllm commit 001cabc1be16)
  fp8_ds_mla = {bits = 8, group = 128, scale = 32, rope = 16,
                note = "MLA: fp8 latent, fp32 scale per 128, bf16 rope (vLLM fp8_ds_mla)"},
}

--- Every known name, sorted.
function M.names() return util.sorted_keys(M.table) end

local function make(name, t)
  return {name = name, bits = t.bits, group = t.group or 0, scale = t.scale or 0,
          zero = t.zero or 0, rope = t.rope or 0, tq_key = t.tq_key, tq_value = t.tq_value,
          group2 = t.group2, scale2 = t.scale2, tensor = t.tensor, col = t.col}
end

--- A format from a name ("int4-g128", "int3-g64-sym", "fp8") or a table
--- {bits = , group = , scale = , zero = }. field names the option.
function M.get(v, field)
  field = field or "format"
  if type(v) == "table" then
    util.check_keys(v, {name = true, bits = true, group = true, scale = true, zero = true,
                        rope = true, tq_key = true, tq_value = true, group2 = true,
                        scale2 = true, note = true, tensor = true, col = true}, "format")
    for _, k in ipairs{"tensor", "col"} do
      if v[k] ~= nil and (math.type(v[k]) ~= "integer" or v[k] < 0 or v[k] > 1024) then
        util.raise("field '%s.%s' must be an integer 0..1024 (bits), got %s", field, k,
                   util.shown(v[k]))
      end
    end
    local f = make(v.name or "custom", v)
    core.format_bits(f) -- checks every field
    return f
  end
  if type(v) ~= "string" then
    util.raise("field '%s' must be a format name or table, got %s", field, type(v))
  end
  local key = v:lower()
  local t = M.table[key]
  if t then return make(key, t) end
  -- bnb-int8-gG: bitsandbytes LLM.int8 (Linear8bitLt / Int8Params), int8
  -- values and an fp32 absmax per output row (its SCB, row_stats), a row
  -- being G input elements
  -- int8-chG: int8 values and an fp32 scale per output channel of G inputs
  -- (compressed-tensors W8A8 int8, strategy "channel": vLLM's
  -- CompressedTensorsW8A8Int8.create_weights registers a float32
  -- ChannelQuantScaleParameter of (output, 1), compressed_tensors_w8a8_int8.py
  -- at 00ba7ff11a83): the same bytes as LLM.int8's
  -- fp8-chG: fp8 values and an fp32 scale per output channel of G inputs
  -- (compressed-tensors W8A8 fp8, strategy "channel": vLLM's
  -- CompressedTensorsW8A8Fp8.create_weights registers a float32 channel
  -- scale of (output, 1), compressed_tensors_w8a8_fp8.py at 00cb05c39f77)
  local rg = key:match("^bnb%-int8%-g(%d+)$") or key:match("^int8%-ch(%d+)$")
             or key:match("^fp8%-ch(%d+)$")
  if rg then
    local g = tonumber(rg) // 1
    if g < 1 then util.raise("field '%s': bad format '%s' (group >= 1)", field, v) end
    return {name = key, bits = 8, group = g, scale = 32, zero = 0, rope = 0}
  end
  -- fp8-bHxW: fp8 values and an fp32 scale per H x W block (DeepSeek-V3's
  -- weight_block_size; compressed-tensors strategy "block", whose float32
  -- block scales the same create_weights registers)
  local bh, bw = key:match("^fp8%-b(%d+)x(%d+)$")
  if bh then
    local h, w = tonumber(bh) // 1, tonumber(bw) // 1
    if h < 1 or w < 1 then util.raise("field '%s': bad format '%s' (blocks >= 1)", field, v) end
    return {name = key, bits = 8, group = h * w, scale = 32, zero = 0, rope = 0}
  end
  -- intN-gG[-sym][-act]: N bits, an fp16 scale per G and an N-bit zero unless
  -- -sym; -act: act order (GPTQ desc_act, compressed-tensors actorder
  -- "group"), whose g_idx vLLM's Marlin keeps sorted beside its sort
  -- indices, two int32 an input column of each layer
  -- (MarlinLinearKernel.process_weights_after_loading: marlin_sort_g_idx when
  -- has_g_idx, else empty tensors; vllm/model_executor/layers/quantization/
  -- kernels/mixed_precision/marlin.py at def725a56685; has_g_idx = desc_act
  -- in gptq_marlin.py at 0ede9ef306be, actorder == GROUP in
  -- compressed_tensors_wNa16.py at 519b90d4648d)
  local act = key:match("%-act$") ~= nil
  local stem = act and key:sub(1, -5) or key
  local bits, group, sym = stem:match("^int(%d+)%-g(%d+)(%-?s?y?m?)$")
  if bits and (sym == "" or sym == "-sym") then
    local f = {name = key, bits = tonumber(bits) // 1, group = tonumber(group) // 1, scale = 16,
               zero = sym == "" and tonumber(bits) // 1 or 0, col = act and 64 or nil}
    if f.bits < 1 or f.bits > 16 or f.group < 1 then
      util.raise("field '%s': bad format '%s' (bits 1..16, group >= 1)", field, v)
    end
    return f
  end
  util.raise("field '%s': unknown format '%s'%s", field, v, util.suggest(v, M.names()))
end

--- Effective bits per element (4.15625 for int4-g128).
function M.bits(f) return core.format_bits(f) end

--- Bytes of n elements in format f, rounded up once.
function M.bytes(f, n) return core.format_bytes(f, n) end

return M
