-- tests/lua/hf_test.lua: models from Hugging Face files (config.json,
-- model.safetensors.index.json, safetensors headers) and kvplan.json.
local kv = require "kvplan"
local json = require "kvplan.json"
local check = require "check"

local FIX = "tests/fixtures/hf/"
local from_hf = kv.models.from_hf

local function kinds_eq(m, c, what)
  local a, b = m:kinds(), c:kinds()
  for _, k in ipairs{"full", "sliding", "chunked", "mla", "state", "none"} do
    check.eq(a[k], b[k], what .. ": " .. k .. " layers")
  end
end

-- ---- kvplan.json ---------------------------------------------------------------

local v = json.decode('{"a": [1, null, 3.5, "x"], "n": null, "t": true, "big": 9007199254740993}')
check.eq(#v.a, 4, "null keeps the array length")
check.eq(v.a[2], json.null, "null sentinel in arrays")
check.eq(v.n, json.null, "null sentinel in objects")
check.eq(math.type(v.a[1]), "integer", "integers stay integers")
check.eq(math.type(v.a[3]), "float", "reals are floats")
check.eq(v.big, 9007199254740993, "integers beyond 2^53 are exact")
check.eq(v.t, true, "booleans")
check.eq(json.decode("[]")[1], nil, "empty array")
check.error("hf_test.lua:29: x.json:3:8: unexpected token near '}'",
            function() json.decode('{\n  "a": 1,\n  "b": }', "x.json") end)
check.error("y.json:1:26: too big integer near '99999999999999999999'",
            function() json.decode('{"a": 99999999999999999999}', "y.json") end)
local none, why = json.safetensors_header(FIX .. "absent.safetensors")
check.eq(none, nil, "missing file: nil")
check.eq(why, "cannot open '" .. FIX .. "absent.safetensors': No such file or directory", "message")
local _, isdir = json.safetensors_header(FIX)
check.eq(isdir, "cannot read '" .. FIX .. "': Is a directory", "a directory is not a file")
local files = json.safetensors_files(FIX .. "tiny-llama")
check.eq(#files, 1, "one safetensors file")
check.eq(files[1], "model.safetensors", "its name")
local header, data = json.safetensors_header(FIX .. "tiny-llama/model.safetensors")
check.eq(data, 3488, "data section bytes")
check.eq(header["model.norm.weight"].dtype, "F32", "header entry")
check.eq(header["lm_head.weight"].shape[1], 32, "header shape")

-- ---- every family fixture against the catalog ------------------------------------

local fixtures = {
  {"llama-3.1-8b", "llama-3.1-8b"}, {"mistral-7b-v0.1", "mistral-7b-v0.1"},
  {"mixtral-8x7b", "mixtral-8x7b"}, {"qwen2.5-7b", "qwen2.5-7b"}, {"qwen3-8b", "qwen3-8b"},
  {"qwen3-30b-a3b", "qwen3-30b-a3b"}, {"gemma-2-9b", "gemma-2-9b"}, {"gemma-3-27b", "gemma-3-27b"},
  {"deepseek-v3", "deepseek-v3"}, {"deepseek-v2-lite", "deepseek-v2-lite"},
  {"phi-3-mini", "phi-3-mini-4k"}, {"falcon-40b", "falcon-40b"}, {"falcon-7b", "falcon-7b"},
  {"gpt-oss-20b", "gpt-oss-20b"}, {"qwen3-next-80b-a3b", "qwen3-next-80b-a3b"},
  {"llama-4-scout", "llama-4-scout-17b-16e"}, {"nemotron-nano-9b-v2", "nemotron-nano-9b-v2"},
  {"falcon-mamba-7b", "falcon-mamba-7b"},
}
for _, f in ipairs(fixtures) do
  local m, c = from_hf(FIX .. f[1]), kv.model(f[2])
  check.eq(m:kv_bytes_per_token(), c:kv_bytes_per_token(), f[1] .. " KV bytes per token")
  check.eq(m:kv_bytes_per_token("fp8", 8), c:kv_bytes_per_token("fp8", 8), f[1] .. " fp8 at TP 8")
  check.eq(m:kv_bytes(100000), c:kv_bytes(100000), f[1] .. " bytes of a 100k sequence (windows)")
  kinds_eq(m, c, f[1])
  check.eq(m.layers, c.layers, f[1] .. " layers")
  check.eq(m.head_dim, c.head_dim, f[1] .. " head_dim")
  check.eq(m.kv_heads, c.kv_heads, f[1] .. " kv_heads")
  check.eq(m.max_context, c.max_context, f[1] .. " max_context")
  check.eq(m.vocab, c.vocab, f[1] .. " vocab")
  check.eq(m.tie_embeddings, c.tie_embeddings, f[1] .. " tie_embeddings")
end

-- the acceptance values, computed here from the config fields
check.eq(from_hf(FIX .. "llama-3.1-8b"):kv_bytes_per_token(), 2 * 32 * 8 * 128 * 2, "Llama-3.1-8B")
check.eq(from_hf(FIX .. "deepseek-v3"):kv_bytes_per_token("bf16", 16), 61 * (512 + 64) * 2,
         "DeepSeek-V3: one latent per layer on every rank")
local g3 = from_hf(FIX .. "gemma-3-27b")
check.eq(g3:kinds().sliding, 52, "Gemma 3 27B: 10 x (5 local + 1 global) + 2 local")
check.eq(g3:layer(6).kind, "full", "layer 5 (0-based) is global")
check.eq(g3:layer(1).window, 1024, "local window from text_config.sliding_window")
check.eq(g3.head_dim, 128, "explicit head_dim, not 5376 / 32 = 168")
check.eq(g3.vocab, 262208, "Gemma3TextConfig default vocab")
check.eq(from_hf(FIX .. "gemma-2-9b"):layer(1).kind, "sliding", "Gemma 2 layer 0 is local")
check.eq(from_hf(FIX .. "gpt-oss-20b"):layer(1).window, 128, "gpt-oss window")
check.eq(from_hf(FIX .. "falcon-7b").kv_heads, 1, "Falcon-7B multi_query")
check.eq(from_hf(FIX .. "falcon-40b").kv_heads, 8, "Falcon-40B num_kv_heads")
check.eq(from_hf(FIX .. "qwen2.5-7b"):kinds().sliding, 0, "use_sliding_window false")
local l4 = from_hf(FIX .. "llama-4-scout")
check.eq(l4:layer(1).window, 8192, "attention_chunk_size")
check.eq(l4:layer(4).kind, "full", "every 4th layer NoPE global")

-- hybrids: Qwen3-Next (Gated DeltaNet) and Jamba (Mamba), state sizes from
-- vLLM's gated_delta_net_state_shape and mamba1_state_shape, bf16
local qn = from_hf(FIX .. "qwen3-next-80b-a3b")
check.eq(qn:layer(1).state_bytes, (3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 2,
         "Qwen3-Next linear-attention state")
check.eq(qn:layer(1).state_bytes, kv.model("qwen3-next-80b-a3b"):layer(1).state_bytes, "= catalog")
check.eq(qn.layer_kinds[1].spec_state_bytes, (2 * 16 * 128 + 32 * 128) * 2,
         "a speculative token's conv row (vLLM's num_spec), = catalog")
check.eq(qn.layer_kinds[1].spec_state_bytes, kv.model("qwen3-next-80b-a3b").layer_kinds[1].spec_state_bytes,
         "the catalog's conv row")
check.eq(qn:layer(4).kind, "full", "full_attention_interval 4")
check.eq(qn:kv_bytes(1000), kv.model("qwen3-next-80b-a3b"):kv_bytes(1000), "KV + states")
local jb = from_hf(FIX .. "jamba-v0.1")
check.eq(jb:kinds().full, 4, "Jamba attention layers 4, 12, 20, 28")
check.eq(jb:kinds().state, 28, "Jamba Mamba layers")
check.eq(jb:layer(5).kind, "full", "attn_layer_offset 4")
check.eq(jb:layer(1).state_bytes, 2 * 4096 * (4 - 1 + 16) * 2, "Mamba conv + SSM state")
check.eq(jb:kv_bytes_per_token(), 4 * 2 * 8 * 128 * 2, "only attention layers grow")
-- its weight classes count the 4 attention layers' q, k, v, o alone (32
-- before, the Mamba layers' too), its 28 Mamba mixers are 'other' and mark
-- it not weighable by class; Nemotron-H's 4 attention and 25 up/down MLP
-- layers as the catalog's (models_test.lua)
check.eq(jb:weight_class_params().attention, 4 * (4096 * (4096 + 2 * 1024) + 4096 * 4096),
         "Jamba attention class: 4 layers")
check.eq(type(jb.classes_unweighable), "string", "Jamba's Mamba mixers have no class")
local nh = from_hf(FIX .. "nemotron-nano-9b-v2"):weight_class_params()
local nc = kv.model("nemotron-nano-9b-v2"):weight_class_params()
check.eq(nh.attention .. "/" .. nh.mlp .. "/" .. nh.other, nc.attention .. "/" .. nc.mlp .. "/" .. nc.other,
         "Nemotron-H classes from_hf = catalog")
check.eq(from_hf(FIX .. "whisper-large-v3"):weight_class_params().other,
         kv.model("whisper-large-v3"):weight_class_params().other, "Whisper classes from_hf = catalog")

-- ---- quantization_config -> weight format -------------------------------------------

local ds = from_hf(FIX .. "deepseek-v3")
local f = kv.formats.get(ds.weight_format)
check.eq(f.bits, 8, "fp8 bits")
check.eq(f.group, 128 * 128, "one scale per 128x128 block")
check.eq(f.scale, 32, "fp32 scale")
check.eq(ds:weight_size(), kv.model("deepseek-v3"):weight_size(), "same bytes as the catalog's fp8")
check.eq(from_hf(FIX .. "gpt-oss-20b").weight_format, "mxfp4", "mxfp4")
local gq = from_hf(FIX .. "tiny-gptq")
f = kv.formats.get(gq.weight_format)
check.eq(f.name, "int4-g32-sym", "GPTQ sym: no zero points")
check.eq(kv.formats.bits(f), 4 + 16 / 32, "4 bits + an fp16 scale per 32")
check.eq(from_hf(FIX .. "qwen3-8b").weight_format, nil, "unquantized: no weight_format")

-- quantization configs written here, one per method
local tmp = check.tmpdir()
local base = check.slurp(FIX .. "tiny-llama/config.json")
local function config_with(q, name)
  local path = tmp .. "/" .. (name or "config.json")
  local fh = assert(io.open(path, "wb"))
  fh:write((base:gsub('"vocab_size"', q .. ',\n  "vocab_size"')))
  fh:close()
  return path
end
local function qformat(q) return kv.formats.get(from_hf(config_with(q)).weight_format) end
f = qformat('"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, ' ..
            '"zero_point": true, "version": "gemm"}')
check.eq(f.name .. f.zero, "int4-g1284", "AWQ keeps 4-bit zeros")
f = qformat('"quantization_config": {"quant_method": "gptq", "bits": 8, "group_size": 64, "sym": false}')
check.eq(f.name .. "/" .. f.zero, "int8-g64/8", "asymmetric GPTQ int8")
f = qformat('"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": -1}')
check.eq(f.group, 8, "per-channel: one scale per hidden_size row")
f = qformat('"quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}')
check.eq(f.name .. f.group, "fp80", "fp8 without blocks: per-tensor scale")
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", ' ..
            '"group_size": 128, "symmetric": true}}}}')
check.eq(f.name, "int4-g128-sym", "compressed-tensors W4A16")
-- W8A8 int8 per channel: int8 and an fp32 scale per output row (per hidden_size row)
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel", ' ..
            '"symmetric": true}, "input_activations": {"num_bits": 8, "type": "int", ' ..
            '"strategy": "token", "dynamic": true}}}}')
check.eq(f.name .. "/" .. f.bits .. "/" .. f.group .. "/" .. f.scale, "int8-ch8/8/8/32", "W8A8 int8 channel")
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 8, "type": "int", "strategy": "tensor"}}}}')
check.eq(f.name, "int8", "W8A8 int8 per tensor")
-- act order and the per-shape terms, hand-counted on tiny-llama (hidden 8,
-- intermediate 16, 2 heads of 4, 1 KV head, 2 layers): vLLM's layers are
-- qkv_proj and o_proj (inputs 8 and 8), gate_up_proj and down_proj (8 and
-- 16), so 2 x (8 + 8) = 32 attention and 2 x (8 + 16) = 48 MLP input columns,
-- and 2 x 4 attention and 2 x 3 MLP shards
f = qformat('"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, ' ..
            '"desc_act": true, "sym": true}')
check.eq(f.name .. "/" .. f.col, "int4-g128-sym-act/64", "GPTQ desc_act: g_idx and sort indices")
local gact = from_hf(config_with('"quantization_config": {"quant_method": "gptq", "bits": 4, ' ..
                                 '"group_size": 128, "desc_act": true, "sym": true}'))
local gno = from_hf(config_with('"quantization_config": {"quant_method": "gptq", "bits": 4, ' ..
                                '"group_size": 128, "desc_act": false, "sym": true}'))
check.eq(gact:weight_size() - gno:weight_size(), (32 + 48) * 64 // 8,
         "act order: 80 input columns x 2 int32 (640 bytes)")
check.eq(gact:class_bytes("attention", kv.formats.get(gact.weight_formats.attention)),
         kv.formats.bytes(kv.formats.get "int4-g128-sym", 384) + 32 * 8, "attention: 384 weights + 32 columns")
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", ' ..
            '"group_size": 128, "symmetric": true, "actorder": "group"}}}}')
check.eq(f.name, "int4-g128-sym-act", "compressed-tensors actorder group: a g_idx")
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", ' ..
            '"group_size": 128, "symmetric": true, "actorder": "weight"}}}}')
check.eq(f.name, "int4-g128-sym", "actorder weight: reordered at quantization, no g_idx")
-- compressed-tensors W8A8 fp8: fp32 channel scales (per hidden_size row), block scales
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}')
check.eq(f.name .. "/" .. f.group .. "/" .. f.scale, "fp8-ch8/8/32", "fp8 channel: an fp32 scale a row")
f = qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
            '{"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "block", ' ..
            '"block_structure": [128, 128]}}}}')
check.eq(f.name .. "/" .. f.group .. "/" .. f.scale, "fp8-b128x128/16384/32", "fp8 block: fp32 a block")
check.error("block_structure' must be two positive integers", function()
  qformat('"quantization_config": {"quant_method": "compressed-tensors", "config_groups": ' ..
          '{"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "block"}}}}')
end)
-- a ModelOpt export for TensorRT-LLM: no quantization_config, hf_quant_config.json
-- beside config.json; NVFP4's two fp32 a matrix: attention 384 elements in
-- 216 bytes + 8 x 8, the MLP 768 in 432 + 6 x 8, embeddings, lm_head and the
-- other 40 parameters in bf16
local mo = tmp .. "/modelopt"
assert(os.execute("mkdir -p " .. mo))
local function put_file(path, text) local o = assert(io.open(path, "wb")) o:write(text) o:close() end
put_file(mo .. "/config.json", base)
put_file(mo .. "/hf_quant_config.json", '{"producer": {"name": "modelopt", "version": "0.29.0"}, ' ..
         '"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null, "group_size": 16, ' ..
         '"exclude_modules": ["lm_head"]}}')
local mom = from_hf(mo)
check.eq(mom.weight_format, "nvfp4", "hf_quant_config.json's quant_algo")
check.eq(mom.weight_formats.attention .. mom.weight_formats.mlp, "nvfp4nvfp4", "linear layers NVFP4")
check.eq(mom.weight_formats.lm_head, nil, "lm_head excluded, in bf16")
check.eq(mom:weight_size(), (216 + 64) + (432 + 48) + (256 + 256 + 40) * 2, "NVFP4 weights to the byte")
assert(mom.source:find("hf_quant_config.json quantization modelopt NVFP4", 1, true), mom.source)
put_file(mo .. "/hf_quant_config.json", '{"quantization": {"quant_algo": "NVFP4", "group_size": 16, ' ..
         '"exclude_modules": ["lm_head", "model.layers.*.self_attn"]}}')
-- vLLM's is_layer_excluded (modelopt.py at c9a59901113c) tries the exact name,
-- a substring, then fnmatch on "model.layers.0.self_attn.qkv_proj": the pattern
-- without a trailing * matches none (before: read as the attention class)
check.eq(from_hf(mo).weight_formats.attention, "nvfp4", "model.layers.*.self_attn matches no projection")
put_file(mo .. "/hf_quant_config.json", '{"quantization": {"quant_algo": "NVFP4", "group_size": 16, ' ..
         '"exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}}')
check.eq(from_hf(mo).weight_formats.attention, nil, "model.layers.*.self_attn* (fnmatch) keeps it bf16")
check.eq(from_hf(mo).weight_formats.mlp, "nvfp4", "the MLP stays NVFP4")
put_file(mo .. "/hf_quant_config.json", '{"quantization": {"quant_algo": "NVFP4", "group_size": 16, ' ..
         '"exclude_modules": ["mlp"]}}')
check.eq(from_hf(mo).weight_formats.mlp, nil, "a bare mlp: a substring of every MLP projection")
check.eq(from_hf(mo).weight_formats.attention, "nvfp4", "and not of the attention's")
put_file(mo .. "/hf_quant_config.json", '{"quantization": {"quant_algo": "W4A8_AWQ"}}')
check.error("field 'hf_quant_config.json quantization.quant_algo' 'W4A8_AWQ' is not supported for modelopt",
            function() from_hf(mo) end)

-- shared experts take the quant_config as the dense MLP does (vLLM
-- DeepseekV2MoE's DeepseekV2MLP(quant_config=quant_config)): quantized
-- unless the ignore list names them, and an entry naming them keeps the
-- routed experts quantized
local dsq = tmp .. "/dsq"
assert(os.execute("mkdir -p " .. dsq))
local dsbase = check.slurp(FIX .. "deepseek-v2-lite/config.json")
local function ds_with(q)
  put_file(dsq .. "/config.json", (dsbase:gsub('"vocab_size"', q .. ',\n  "vocab_size"')))
  return from_hf(dsq)
end
local awq = ds_with('"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, ' ..
                    '"zero_point": true, "version": "gemm"}')
check.eq(kv.formats.get(awq.weight_formats.shared_experts).name, "int4-g128", "AWQ shared experts quantized")
local ign = ds_with('"quantization_config": {"quant_method": "compressed-tensors", "format": ' ..
                    '"nvfp4-pack-quantized", "ignore": ["lm_head", "model.layers.*.mlp.shared_experts"]}')
check.eq(ign.weight_formats.experts, "nvfp4", "routed experts stay NVFP4")
-- a plain (not "re:") ignore entry is matched exactly (vLLM should_ignore_layer /
-- check_equal_or_regex_match, compressed_tensors/utils.py): no layer is named
-- "model.layers.*.mlp.shared_experts", they stay NVFP4 (before: read as in bf16)
check.eq(ign.weight_formats.shared_experts, "nvfp4", "a plain wildcard entry matches no layer")
local ign_re = ds_with('"quantization_config": {"quant_method": "compressed-tensors", "format": ' ..
                       '"nvfp4-pack-quantized", "ignore": ["lm_head", "re:model.layers.*.mlp.shared_experts.*"]}')
check.eq(ign_re.weight_formats.shared_experts, nil, "the re: entry keeps them in bf16")
check.eq(ign_re.weight_formats.experts, "nvfp4", "and the routed experts NVFP4")
-- AWQ's substring: "experts" is inside "model.layers.1.mlp.shared_experts.gate_proj"
-- too (awq_marlin.py is_layer_skipped(..., skip_with_substr=True)): both in fp16
local awq_ex = ds_with('"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, ' ..
                       '"zero_point": true, "modules_to_not_convert": ["experts"]}')
check.eq(awq_ex.weight_formats.experts, nil, "AWQ experts: routed experts in fp16")
check.eq(awq_ex.weight_formats.shared_experts, nil, "AWQ experts: a substring of the shared experts' names")
check.eq(kv.formats.get(awq_ex.weight_formats.mlp).name, "int4-g128", "the dense MLP stays int4")
check.eq(ign:weight_class_params().shared_experts, 449839104, "from_hf's class = the catalog's")
-- compressed-tensors' "re:" entries are regular expressions on the layer
-- names: the module the pattern ends in, less its trailing ".*" or "$"
local rex = ds_with('"quantization_config": {"quant_method": "compressed-tensors", "format": ' ..
                    '"nvfp4-pack-quantized", "ignore": ["lm_head", "re:.*shared_expert.*", ' ..
                    '"re:.*self_attn.*", "re:.*mlp.gate$"]}')
check.eq(rex.weight_formats.shared_experts, nil, "re:.*shared_expert.* keeps them in bf16")
check.eq(rex.weight_formats.attention, nil, "re:.*self_attn.* keeps the attention in bf16")
check.eq(rex.weight_formats.experts .. "/" .. rex.weight_formats.mlp, "nvfp4/nvfp4",
         "the router's pattern leaves the experts and the dense MLP quantized")
-- the Qwen MoE reading: a shared expert shared_expert_intermediate_size
-- wide (Qwen2-MoE's field), its gate (hidden x 1, a plain torch.nn.Linear
-- in vLLM) stays in 'other'
put_file(dsq .. "/config.json", '{"model_type": "qwen3_moe", "hidden_size": 16, "head_dim": 8, ' ..
         '"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, ' ..
         '"intermediate_size": 64, "moe_intermediate_size": 8, "shared_expert_intermediate_size": 40, ' ..
         '"num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 10, "max_position_embeddings": 64}')
local q2 = from_hf(dsq)
check.eq(q2.shared_intermediate, 40, "Qwen2-MoE shared width")
check.eq(q2:weight_class_params().shared_experts, 2 * 3 * 16 * 40, "Qwen2-MoE shared experts")

-- bitsandbytes (transformers BitsAndBytesConfig.to_dict): 4-bit with or
-- without double quantization, 8-bit; embeddings and lm_head stay bf16
local bnb = from_hf(config_with('"quantization_config": {"quant_method": "bitsandbytes", ' ..
                                '"load_in_4bit": true, "bnb_4bit_quant_type": "nf4", ' ..
                                '"bnb_4bit_use_double_quant": true, "llm_int8_skip_modules": null}'))
check.eq(bnb.weight_format, "bnb-4bit-dq", "nf4 with double quantization")
check.eq(bnb.weight_formats.attention .. bnb.weight_formats.mlp, "bnb-4bit-dqbnb-4bit-dq",
         "linear layers quantized")
check.eq(bnb.weight_formats.lm_head, nil, "lm_head stays in the model dtype")
check.eq(bnb.weight_bytes, nil, "bytes from the scheme, not the files")
f = qformat('"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, ' ..
            '"bnb_4bit_quant_type": "fp4"}')
check.eq(f.name .. "/" .. kv.formats.bits(f), "bnb-4bit/4.5", "fp4, an fp32 absmax per 64")
f = qformat('"quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": true, ' ..
            '"load_in_4bit": false}')
check.eq(f.name .. "/" .. f.scale .. "/" .. f.group, "bnb-int8-g8/32/8", "LLM.int8: fp32 row scale")
local skip = from_hf(config_with('"quantization_config": {"quant_method": "bitsandbytes", ' ..
                                 '"load_in_4bit": true, "llm_int8_skip_modules": ["mlp"]}'))
check.eq(skip.weight_formats.mlp, nil, "llm_int8_skip_modules keeps the MLP in bf16")
-- unsloth's dynamic bnb-4bit: an entry naming one layer's module keeps that
-- layer's alone in bf16 (vLLM is_layer_skipped_bnb's prefix check). Hand
-- count on tiny-llama (hidden 8, intermediate 16, 2 layers): the MLP class is
-- 2 x 3 x 8 x 16 = 768 parameters; all in bnb-4bit-dq: 768 x 4 bits + 12
-- uint8 absmax + 1 fp32 second-level absmax = 3200 bits = 400 bytes; with
-- layer 0's MLP in bf16: 384 x 2 = 768 bytes + 384 x 4 bits + 6 x 8 + 32 =
-- 1616 bits = 202 bytes
local function bnb_skip(list)
  return from_hf(config_with('"quantization_config": {"quant_method": "bitsandbytes", ' ..
                             '"load_in_4bit": true, "bnb_4bit_use_double_quant": true, ' ..
                             '"llm_int8_skip_modules": ' .. list .. '}'))
end
local plain, dyn = bnb_skip('["lm_head"]'), bnb_skip('["lm_head", "model.layers.0.mlp"]')
check.eq(dyn.weight_formats.mlp, "bnb-4bit-dq", "one layer's MLP skipped: the class stays quantized")
check.eq(dyn.unquantized_layers.mlp, 1, "one MLP in bf16")
check.eq(dyn:weight_size() - plain:weight_size(), 768 + 202 - 400, "layer 0's MLP in bf16, to the byte")
local dyn_attn = bnb_skip('["model.layers.1.self_attn", "model.layers.1.mlp.down_proj"]')
check.eq(dyn_attn.weight_formats.attention, "bnb-4bit-dq", "one layer's attention: class quantized")
check.eq(dyn_attn.unquantized_layers.attention, 1, "one attention in bf16")
check.eq(dyn_attn.unquantized_layers.mlp, nil, "a single projection is counted quantized")
-- the other methods by vLLM's own match (hf.lua quantized_classes): AWQ a
-- substring of the layer's prefix (is_layer_skipped_awq), ModelOpt exact,
-- substring or fnmatch (is_layer_excluded): one layer's block; fp8 and
-- compressed-tensors an exact name: a block entry names no linear layer, one
-- layer's projections listed in full keep that layer's block in the dtype
local function qc(q) return from_hf(config_with('"quantization_config": ' .. q)) end
local awq0 = qc('{"quant_method": "awq", "bits": 4, "group_size": 8, "zero_point": true, ' ..
                '"modules_to_not_convert": ["model.layers.0.mlp"]}')
check.eq(kv.formats.get(awq0.weight_formats.mlp).name, "int4-g8", "AWQ: one layer's MLP, the class quantized")
check.eq(awq0.unquantized_layers.mlp, 1, "AWQ: layer 0's MLP in fp16")
local awq1 = qc('{"quant_method": "awq", "bits": 4, "group_size": 8, "zero_point": true, ' ..
                '"modules_to_not_convert": ["model.layers.1.mlp.down_proj"]}')
check.eq(awq1.unquantized_layers, nil, "AWQ: one projection counted quantized")
local ct_attn = qc('{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": ' ..
                   '["lm_head", "model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.k_proj", ' ..
                   '"model.layers.1.self_attn.v_proj", "model.layers.1.self_attn.o_proj"]}')
check.eq(ct_attn.weight_formats.attention, "nvfp4", "compressed-tensors: the class stays NVFP4")
check.eq(ct_attn.unquantized_layers.attention, 1, "compressed-tensors: layer 1's four projections in bf16")
local ct_mlp = qc('{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", ' ..
                  '"ignore": ["lm_head", "model.layers.0.mlp"]}')
check.eq(ct_mlp.weight_formats.mlp, "nvfp4", "compressed-tensors: a block entry matches no layer")
check.eq(ct_mlp.unquantized_layers, nil, "compressed-tensors: nothing in bf16")
local mo0 = qc('{"quant_method": "modelopt", "quant_algo": "FP8", "ignore": ["lm_head", ' ..
               '"model.layers.0.self_attn"]}')
check.eq(mo0.weight_formats.attention ~= nil, true, "ModelOpt: the attention class stays FP8")
check.eq(mo0.unquantized_layers.attention, 1, "ModelOpt: layer 0's attention in bf16 (substring)")
-- an entry naming no layer, by the method's match (quantized_classes): fp8 and
-- compressed-tensors an exact name, a bare "mlp" or "self_attn" is none;
-- AWQ a substring, "model.layers.*.mlp" (a literal *) is in no name
local fp8_bare = qc('{"quant_method": "fp8", "ignored_layers": ["lm_head", "mlp", "self_attn"]}')
check.eq(fp8_bare.weight_formats.mlp, "fp8", "fp8: a bare mlp names no layer")
check.eq(fp8_bare.weight_formats.attention, "fp8", "fp8: a bare self_attn names no layer")
local ct_bare = qc('{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", ' ..
                   '"ignore": ["lm_head", "self_attn", "model.layers.*.mlp"]}')
check.eq(tostring(ct_bare.weight_formats.attention) .. "/" .. tostring(ct_bare.weight_formats.mlp), "nvfp4/nvfp4",
         "compressed-tensors: bare entries name no layer")
local awq_star = qc('{"quant_method": "awq", "bits": 4, "group_size": 8, "zero_point": true, ' ..
                    '"modules_to_not_convert": ["model.layers.*.mlp"]}')
check.eq(kv.formats.get(awq_star.weight_formats.mlp).name, "int4-g8", "AWQ: a literal * is in no prefix")
local awq_bare = qc('{"quant_method": "awq", "bits": 4, "group_size": 8, "zero_point": true, ' ..
                    '"modules_to_not_convert": ["mlp"]}')
check.eq(awq_bare.weight_formats.mlp, nil, "AWQ: a bare mlp is in every MLP projection's name")
-- each method reads the keys its from_config reads: Fp8Config ignored_layers,
-- else modules_to_not_convert, never ignore (fp8.py at 1436674bcb3f)
local fp8_ign = qc('{"quant_method": "fp8", "ignore": ["model.layers.0.mlp.gate_proj", ' ..
                   '"model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"]}')
check.eq(fp8_ign.unquantized_layers, nil, "fp8 reads no ignore key")
local fp8_mtnc = qc('{"quant_method": "fp8", "ignored_layers": [], "modules_to_not_convert": ' ..
                    '["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"]}')
check.eq(fp8_mtnc.unquantized_layers.mlp, 1, "fp8: an empty ignored_layers falls back to modules_to_not_convert")
local ct_mtnc = qc('{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", ' ..
                   '"modules_to_not_convert": ["self_attn"]}')
check.eq(ct_mtnc.weight_formats.attention, "nvfp4", "compressed-tensors reads ignore alone")
-- GPTQ's modules_in_block_to_quantize lists the modules quantized (vLLM
-- is_layer_gptq_quantized, a substring of the prefix): the attention alone
-- listed leaves the MLP in fp16. Hand count on tiny-llama: attention
-- 2 x (64 + 32 + 32 + 64) = 384 parameters at 4 bits + an fp16 scale per 8
-- (6 bits) = 288 bytes; the MLP 768 in fp16 = 1536
local gq_attn = qc('{"quant_method": "gptq", "bits": 4, "group_size": 8, "sym": true, ' ..
                   '"modules_in_block_to_quantize": [["self_attn.q_proj", "self_attn.k_proj", ' ..
                   '"self_attn.v_proj"], ["self_attn.o_proj"]]}')
check.eq(gq_attn.weight_formats.mlp, nil, "GPTQ: an MLP not listed stays in fp16")
check.eq(kv.formats.get(gq_attn.weight_formats.attention).name, "int4-g8-sym", "GPTQ: the listed attention")
local gq_all = qc('{"quant_method": "gptq", "bits": 4, "group_size": 8, "sym": true}')
check.eq(gq_attn:weight_size() - gq_all:weight_size(), 1536 - 768 * 6 // 8,
         "GPTQ: the MLP in fp16, to the byte")
check.error("config.json: field 'quantization_config.quant_method' 'hqq' is not supported (known: " ..
            "awq, bitsandbytes, compressed-tensors, fp8, gptq, modelopt, mxfp4); give opts.weight_format",
            function() from_hf(config_with('"quantization_config": {"quant_method": "hqq"}')) end)
check.error("config.json: field 'quantization_config.bits' must be an integer 1..16, got 0",
            function() from_hf(config_with('"quantization_config": {"quant_method": "gptq", ' ..
                                           '"bits": 0, "group_size": 128}')) end)
local over = from_hf(config_with('"quantization_config": {"quant_method": "hqq"}'),
                     {weight_format = "int4-g64"})
check.eq(over.weight_format, "int4-g64", "opts.weight_format overrides quantization_config")
check.error("field 'weight_format': unknown format 'int5x'", function()
  from_hf(FIX .. "qwen3-8b", {weight_format = "int5x"})
end)

-- ---- parameters and weight bytes ---------------------------------------------------------

-- from model.safetensors.index.json (shards absent): total_size / 2 (bf16)
local ll = from_hf(FIX .. "llama-3.1-8b")
check.eq(ll.params, 16060522496 // 2, "params = total_size / 2")
check.eq(ll.params, kv.model("llama-3.1-8b").params, "= catalog")
check.eq(ll.weight_bytes, 16060522496, "weight_bytes = total_size")
check.eq(ll:weight_size(), 16060522496, "weight_size uses the file's bytes")
assert(ll.source:find("params = model.safetensors.index.json metadata.total_size / 2 (bfloat16)",
                      1, true), ll.source)
local fa = from_hf(FIX .. "falcon-40b")
-- its index counts a stored lm_head.weight the tied model does not load
-- (vLLM falcon.py FalconForCausalLM.load_weights skips 'lm_head.'): 83671941120
-- bytes / 2 less 65024 x 8192, and 2 x 65024 x 8192 bytes fewer
check.eq(fa.params, 83671941120 // 2 - 65024 * 8192, "Falcon-40B from its index, the stored head off")
check.eq(fa.weight_bytes, 83671941120 - 2 * 65024 * 8192, "the bytes vLLM loads")
check.eq(fa.params, kv.model("falcon-40b").params, "= catalog")
check.eq(fa:weight_size(), kv.model("falcon-40b"):weight_size(), "same bytes as the catalog")

-- from the safetensors headers: elements (bf16 and fp32 tensors) and spans
local tl = from_hf(FIX .. "tiny-llama")
local per_layer = 8 * 8 + 2 * 8 * 4 + 8 * 8 + 3 * 8 * 16 + 2 * 8
check.eq(tl.params, 2 * 32 * 8 + 2 * per_layer + 8, "params = sum of elements")
check.eq(tl.weight_bytes, (2 * 32 * 8 + 2 * (per_layer - 16)) * 2 + (2 * 16 + 8) * 4,
         "bf16 matrices, fp32 norms")
assert(tl.source:find("params = sum of tensor elements in model.safetensors", 1, true), tl.source)
-- the config alone gives the same count (the estimate's formula)
local cfg_only = config_with("\"pad_token_id\": 0", "config.json")
check.eq(from_hf(cfg_only).params, tl.params, "estimate = header count for tiny-llama")
-- a quantized checkpoint: packed int32 tensors are not parameters
check.eq(gq.params, 2 * 32 * 32 + (32 * 32 + 2 * 32 * 16 + 32 * 32 + 3 * 32 * 64 + 2 * 32) + 32,
         "GPTQ params from the config")
check.eq(gq.weight_bytes, 10640, "GPTQ weight bytes from the spans")
assert(gq.notes:find("packed tensors are not parameter counts", 1, true), gq.notes)
check.eq(gq.id, "tiny-llama-gptq-4bit", "id from _name_or_path")

-- an index beside its shard: headers give params, the index's total is cross-checked
local sh = tmp .. "/sharded"
assert(os.execute("mkdir -p " .. sh))
local function put(path, text) local o = assert(io.open(path, "wb")) o:write(text) o:close() end
put(sh .. "/config.json", base)
put(sh .. "/model-00001-of-00001.safetensors", check.slurp(FIX .. "tiny-llama/model.safetensors"))
put(sh .. "/model.safetensors.index.json", '{"metadata": {"total_size": 3488}, "weight_map": ' ..
    '{"lm_head.weight": "model-00001-of-00001.safetensors"}}')
local shm = from_hf(sh, {id = "sharded"})
check.eq(shm.params, 1704, "params from the shard's header")
check.eq(shm.id, "sharded", "opts.id")
check.eq(shm.notes, nil, "index total_size matches the headers")

-- the estimate against the catalog's counts: dense, MoE, MLA, hybrid, within 1 %
for _, e in ipairs{{"qwen2.5-7b", "qwen2.5-7b"}, {"qwen3-8b", "qwen3-8b"},
                   {"gemma-2-9b", "gemma-2-9b"}, {"gemma-3-27b", "gemma-3-27b"},
                   {"phi-3-mini", "phi-3-mini-4k"}, {"mistral-7b-v0.1", "mistral-7b-v0.1"},
                   {"falcon-7b", "falcon-7b"}, {"mixtral-8x7b", "mixtral-8x7b"},
                   {"qwen3-30b-a3b", "qwen3-30b-a3b"}, {"deepseek-v3", "deepseek-v3"},
                   {"deepseek-v2-lite", "deepseek-v2-lite"}, {"gpt-oss-20b", "gpt-oss-20b"},
                   {"qwen3-next-80b-a3b", "qwen3-next-80b-a3b"},
                   {"llama-4-scout", "llama-4-scout-17b-16e"}} do
  local m, c = from_hf(FIX .. e[1]), kv.model(e[2])
  assert(m.source:find("params = estimate from config.json", 1, true), m.source)
  assert(math.abs(m.params - c.params) * 100 <= c.params,
         string.format("%s: estimate %d vs catalog %d", e[1], m.params, c.params))
end
-- Qwen2.5-7B written out: embeddings + lm_head, q/k/v with biases, o, gated MLP, 2 norms
check.eq(from_hf(FIX .. "qwen2.5-7b").params,
         2 * 152064 * 3584 + 28 * (3584 * 3584 + 3584 + 2 * (3584 * 512 + 512) + 3584 * 3584
                                   + 3 * 3584 * 18944 + 2 * 3584) + 3584, "Qwen2.5-7B formula")
-- MoE active: total less the unused routed experts
local mx = from_hf(FIX .. "mixtral-8x7b")
check.eq(mx.active, mx.params - 32 * 6 * 3 * 4096 * 14336, "Mixtral active parameters")
-- Falcon-40B's config ties lm_head (FalconConfig default), its checkpoint stores one:
-- the estimate is the tied count, the index gives the stored one
local fcfg = tmp .. "/falcon.json"
put(fcfg, check.slurp(FIX .. "falcon-40b/config.json"))
check.eq(from_hf(fcfg).params, 41835970560 - 65024 * 8192, "tied estimate")

-- ---- ids, paths, sources -------------------------------------------------------------------

check.eq(from_hf(FIX .. "qwen3-8b/config.json").id, "qwen3-8b", "a config.json path")
check.eq(from_hf(FIX .. "qwen3-8b/").id, "qwen3-8b", "a trailing slash")
check.eq(from_hf(FIX .. "phi-3-mini").id, "Phi-3-mini-4k-instruct", "_name_or_path basename")
check.eq(from_hf(FIX .. "gemma-2-9b").hf, "google/gemma-2-9b-it", "hf from _name_or_path")
local src = from_hf(FIX .. "gemma-3-27b").source
for _, s in ipairs{"from_hf " .. FIX .. "gemma-3-27b/config.json", "head_dim = text_config.head_dim",
                   "text_config.sliding_window", "vocab", "dtype = torch_dtype"} do
  assert(src:find(s, 1, true), "source lacks '" .. s .. "': " .. src)
end
check.eq(from_hf(FIX .. "gemma-3-27b").family, "gemma3_text", "family of the language model")

-- ---- malformed and incomplete files: the exact messages ------------------------------------

local function err(name, msg)
  local got = check.error(msg, function() from_hf(FIX .. name) end)
  check.eq(got:gsub("^tests/lua/hf_test%.lua:%d+: ", ""), msg, name)
end
err("bad-json", FIX .. "bad-json/config.json:5:23: '}' expected")
err("missing-layers", FIX .. "missing-layers/config.json: missing field 'num_hidden_layers'")
err("negative-heads", FIX .. "negative-heads/config.json: field 'num_attention_heads' must be a " ..
    "positive integer, got -32")
err("string-heads", FIX .. "string-heads/config.json: field 'num_attention_heads' must be a " ..
    "positive integer, got 'x'")
err("unknown-type", FIX .. "unknown-type/config.json: unknown model_type 'mystery' and no field " ..
    "'num_hidden_layers' to read it by (known: RefinedWeb, RefinedWebModel, deepseek_v2, " ..
    "deepseek_v3, falcon, falcon_mamba, gemma, gemma2, gemma3_text, gpt_oss, jamba, llama, " ..
    "llama4_text, llava_llama, mamba, mistral, mixtral, nemotron_h, phi3, qwen2, qwen2_5_vl, qwen2_5_vl_text, qwen2_vl, qwen2_vl_text, qwen3, qwen3_moe, qwen3_next)")
err("bge-large-en-v1.5", FIX .. "bge-large-en-v1.5/config.json: model_type 'bert' is an " ..
    "encoder-only model (no KV cache in vLLM); from_hf reads decoder-only models: describe it " ..
    "with layer_kinds = {{kind = \"none\"}} (catalog bge-large-en-v1.5 is one)")
err("bad-index", FIX .. "bad-index/model.safetensors.index.json: field 'metadata.total_size' " ..
    "must be a non-negative integer, got '16 GB'")
err("truncated-safetensors", FIX .. "truncated-safetensors/model.safetensors: safetensors header " ..
    "length 4096 at byte 0 runs past the end of the file (41 bytes follow the length)")
err("oversized-safetensors", FIX .. "oversized-safetensors/model.safetensors: safetensors header " ..
    "length 1099511627776 at byte 0 exceeds the format's limit of 100000000 bytes")
err("absent", "cannot open '" .. FIX .. "absent/config.json': No such file or directory")
-- a mixture-of-experts family without its experts count names the file and
-- the field (gpt-oss without num_local_experts failed as a Lua arithmetic
-- error, then as "MXFP4 experts: bad shape or layout", naming no file)
for _, c in ipairs{{"gpt-oss-20b", "num_local_experts", "gpt_oss"}, {"qwen3-30b-a3b", "num_experts", "qwen3_moe"},
                   {"deepseek-v3", "n_routed_experts", "deepseek_v3"}} do
  local d = tmp .. "/no-experts-" .. c[1]
  assert(os.execute("mkdir -p " .. d))
  local text = check.slurp(FIX .. c[1] .. "/config.json")
  local cut, n = text:gsub('%s*"' .. c[2] .. '"%s*:%s*%d+%s*,', "", 1)
  assert(n == 1, c[1] .. ": " .. c[2] .. " not found")
  local fh = assert(io.open(d .. "/config.json", "wb"))
  fh:write(cut)
  fh:close()
  local got = check.error("missing field", function() from_hf(d) end)
  check.eq(got:gsub("^tests/lua/hf_test%.lua:%d+: ", ""), d .. "/config.json: missing field '" .. c[2] ..
           "' (model_type " .. c[3] .. " is a mixture of experts: the count of experts a layer)", c[1])
  os.remove(d .. "/config.json")
  os.remove(d)
end
-- the message points at this file's line, the file name inside it
local m1 = check.error("missing field", function() from_hf(FIX .. "missing-layers") end)
assert(m1:find("^tests/lua/hf_test%.lua:%d+: "), m1)

-- bad headers written here: the file, the tensor and the problem
local function header_error(h, tail, msg)
  local d = tmp .. "/st"
  os.execute("mkdir -p " .. d)
  put(d .. "/config.json", base)
  put(d .. "/model.safetensors", string.pack("<I8", #h) .. h .. tail)
  check.error(d .. "/model.safetensors: " .. msg, from_hf, d)
  os.remove(d .. "/model.safetensors")
  os.remove(d .. "/config.json")
  os.remove(d)
end
header_error('{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}', "",
             "bad safetensors header at byte 69: '}' expected near end of file")
header_error('{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}', "1234",
             "tensor 'w' field 'data_offsets' must be [begin, end] within the 4 data bytes, " ..
             "got [0, 8]")
header_error('{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 6]}}', "123456",
             "tensor 'w' spans 6 bytes, its shape and dtype BF16 need 8")
header_error('{"w": {"dtype": "Q4", "shape": [4], "data_offsets": [0, 2]}}', "12",
             "tensor 'w' has unknown dtype 'Q4'")
header_error('[1, 2]', "", "the safetensors header must be a JSON object")
header_error('{"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}, ' ..
             '"w": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}', "12345678",
             "bad safetensors header at byte 74: duplicate object key near '\"w\"'")

-- the header read as a stream keeps sums only; what it does not take as plainly
-- well formed it leaves to the whole read (false), which says what is wrong
do
  local bits = {BF16 = 16, F32 = 32}
  local path = FIX .. "tiny-llama/model.safetensors"
  local sums, data = json.safetensors_scan(path, {BF16 = 16, F32 = 32, F16 = 16})
  local whole, data2 = json.safetensors_header(path)
  assert(sums, "tiny-llama's header is plain")
  check.eq(data, data2, "data bytes")
  local n, el, by = 0, 0, 0
  for name, t in pairs(whole) do
    if name ~= "__metadata__" then
      local c = 1
      for _, d in ipairs(t.shape) do c = c * d end
      n, el, by = n + 1, el + c, by + t.data_offsets[2] - t.data_offsets[1]
    end
  end
  check.eq(sums.tensors, n, "tensors")
  check.eq(sums.elements, el, "elements")
  check.eq(sums.bytes, by, "bytes")
  local d = tmp .. "/scan.safetensors"
  local function scan(h, tail) put(d, string.pack("<I8", #h) .. h .. (tail or "")) return json.safetensors_scan(d, bits) end
  local plain = '{"__metadata__": {"format": "pt"}, "a.w": {"dtype": "F32", "shape": [2, 3], ' ..
                '"data_offsets": [0, 24]}, "b": {"dtype": "BF16", "shape": [], "data_offsets": [24, 26]}}   '
  local s1 = scan(plain, string.rep("x", 26))
  check.eq(s1 and s1.tensors, 2, "plain header scanned")
  check.eq(s1.elements, 7, "elements of a [2, 3] and a scalar")
  check.eq(s1.by_dtype.F32, 24, "bytes by dtype")
  for _, odd in ipairs{
    '{"a\\u0041": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',   -- an escape
    '{"a": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}}',        -- a real
    '{"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 4]}}',          -- unknown dtype
    '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}}',          -- span
    '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {}}', -- a name twice
    '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}} x',        -- trailing bytes
  } do
    check.eq(scan(odd, "1234"), false, "left to the whole read: " .. odd)
  end
  os.remove(d)
end
local short = tmp .. "/short"
os.execute("mkdir -p " .. short)
put(short .. "/config.json", base)
put(short .. "/model.safetensors", "\1\2\3")
check.error(short .. "/model.safetensors: truncated safetensors file: 3 bytes, the header length " ..
            "alone takes 8", from_hf, short)

-- configs that name a layer kind without its size, or a bad option
local lt = config_with('"layer_types": ["sliding_attention", "full_attention"]')
check.error("config.json: layer 0 is sliding_attention but field 'sliding_window' is absent",
            from_hf, lt)
lt = config_with('"layer_types": ["full_attention"]')
check.error("config.json: field 'layer_types' has 1 entries, expected 2 (num_hidden_layers)",
            from_hf, lt)
lt = config_with('"layer_types": ["linear_attention", "full_attention"]')
check.error("config.json: model_type 'llama' has linear-attention or Mamba layers whose state " ..
            "size kvplan does not know (known: qwen3_next, jamba)", from_hf, lt)
check.error("unknown field 'idd' in from_hf options (did you mean 'id'?)",
            function() from_hf(FIX .. "qwen3-8b", {idd = "x"}) end)
check.error("from_hf: path must be a string, got nil", function() from_hf() end)

-- clean up the temporary files
for _, p in ipairs{tmp .. "/config.json", fcfg, sh .. "/config.json",
                   sh .. "/model-00001-of-00001.safetensors", sh .. "/model.safetensors.index.json",
                   sh, short .. "/config.json", short .. "/model.safetensors", short, tmp} do
  os.remove(p)
end

-- Whisper (encoder-decoder): the decoder's self- and cross-attention layers,
-- the encoder's 1500 tokens, parameters from the shapes, as the catalog has them
do
  local w, c = from_hf(FIX .. "whisper-large-v3"), kv.model("whisper-large-v3")
  check.eq(w.layers, 64, "32 self- and 32 cross-attention layers")
  check.eq(w:layer(2).kind, "cross", "cross-attention second")
  check.eq(w:layer(2).window, 1500, "max_source_positions")
  check.eq(w.params, c.params, "params from the shapes: 1543490560")
  check.eq(w:kv_bytes_per_token(), c:kv_bytes_per_token(), "KV bytes per token slot")
  check.eq(w.dtype, "fp16", "torch_dtype float16")
  check.eq(w.max_context, 448, "max_target_positions")
end

-- Qwen2.5-VL in transformers' newer layout: the decoder under text_config
-- (whose torch_dtype says float32 beside a bfloat16 checkpoint), the tower
-- under vision_config; the catalog entry's counts from the same shapes
do
  local dir = check.tmpdir()
  local fh = assert(io.open(dir .. "/config.json", "wb"))
  fh:write([[{
  "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
  "text_config": {"hidden_size": 3584, "intermediate_size": 18944,
    "max_position_embeddings": 128000, "max_window_layers": 28, "model_type": "qwen2_5_vl_text",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "torch_dtype": "float32", "use_sliding_window": false, "sliding_window": null,
    "vocab_size": 152064},
  "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "in_channels": 3,
    "intermediate_size": 3420, "model_type": "qwen2_5_vl", "num_heads": 16,
    "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
    "window_size": 112},
  "vocab_size": 152064}]])
  fh:close()
  local m = from_hf(dir)
  local c = kv.model("qwen2.5-vl-7b")
  check.eq(m.params, c.params, "decoder + vision tower from the shapes")
  check.eq(m.vision.params, c.vision.params, "the tower's parameters")
  check.eq(m.dtype, "bf16", "the top level's torch_dtype, not text_config's float32")
  check.eq(m.vision.max_pixels, 12845056, "no preprocessor_config.json: the released value")
  check.eq(m:kv_bytes_per_token(), c:kv_bytes_per_token(), "KV bytes per token")
  fh = assert(io.open(dir .. "/preprocessor_config.json", "wb"))
  fh:write('{"max_pixels": 1003520, "min_pixels": 3136}')
  fh:close()
  m = from_hf(dir)
  check.eq(m.vision.max_pixels, 1003520, "max_pixels from preprocessor_config.json")
  -- smart_resize of a square: floor(sqrt(1003520) / 28) x 28 = 980 pixels a side
  check.eq(kv.deploy{model = m, gpu = "h100", engine_version = "0.10"}.activation_range.encoder
             .item_tokens, 35 * 35, "1003520 pixels: a 980-pixel square, 1225 tokens")
  fh = assert(io.open(dir .. "/config.json", "wb"))
  fh:write('{"model_type": "qwen2_5_vl", "hidden_size": 64, "num_hidden_layers": 2, ' ..
           '"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, ' ..
           '"max_position_embeddings": 1024, "vision_config": {"hidden_size": 32}}')
  fh:close()
  check.error("missing field 'vision_config.intermediate_size'", function() from_hf(dir) end)
  -- bad input names the file, the field and the value
  local function write(name, text)
    local h = assert(io.open(dir .. "/" .. name, "wb"))
    h:write(text)
    h:close()
  end
  local base = '{"model_type": "qwen2_5_vl", "hidden_size": 64, "num_hidden_layers": 2, ' ..
               '"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, ' ..
               '"max_position_embeddings": 1024, '
  write("config.json", base .. '"vision_config": [1, 2]}')
  check.error("field 'vision_config' must be an object, got an array",
              function() from_hf(dir) end)
  write("config.json", base .. '"vision_config": {"hidden_size": 32, "intermediate_size": 64, ' ..
        '"out_hidden_size": 64, "depth": 2, "num_heads": 2, "patch_size": -14}}')
  check.error("field 'vision_config.patch_size' must be a positive integer, got -14",
              function() from_hf(dir) end)
  write("config.json", base .. '"vision_config": {"hidden_size": 32, "intermediate_size": 64, ' ..
        '"out_hidden_size": 64, "depth": 2, "num_heads": 2}}')
  write("preprocessor_config.json", '{"max_pixels": "big"}')
  check.error("preprocessor_config.json: field 'max_pixels' must be a positive integer, got 'big'",
              function() from_hf(dir) end)
  write("preprocessor_config.json", '{"max_pixels": 1003520, "min_pixels": 3136}')
  -- Qwen2-VL's older layout: the decoder at the top level, the tower's width
  -- as embed_dim and mlp_ratio, its output as vision_config.hidden_size, an
  -- fc1/QuickGELU/fc2 MLP and LayerNorms (Qwen2VisionTransformer)
  fh = assert(io.open(dir .. "/config.json", "wb"))
  fh:write([[{"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
    "hidden_size": 3584, "intermediate_size": 18944, "max_position_embeddings": 32768,
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_sliding_window": false,
    "vocab_size": 152064,
    "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16,
      "in_chans": 3, "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
      "spatial_patch_size": 14, "temporal_patch_size": 2}}]])
  fh:close()
  m = from_hf(dir)
  -- by hand: patch embed 1176 x 1280; a block: 2 LayerNorms 4 x 1280, qkv
  -- 1280 x 3840 + 3840, proj 1280^2 + 1280, fc1 1280 x 5120 + 5120, fc2
  -- 5120 x 1280 + 1280; the merger's LayerNorm 2560, 5120^2 + 5120, 5120 x
  -- 3584 + 3584
  local block = 4 * 1280 + 1280 * 3840 + 3840 + 1280 * 1280 + 1280 + 1280 * 5120 + 5120
                + 5120 * 1280 + 1280
  local tower = 1176 * 1280 + 32 * block + 2560 + 5120 * 5120 + 5120 + 5120 * 3584 + 3584
  check.eq(m.vision.params, tower, "Qwen2-VL's tower from its shapes")
  check.eq(m.vision.params, 675759104, "Qwen2-VL-7B's: 675759104")
  check.eq(m.vision.gated, false, "fc1, QuickGELU, fc2")
  check.eq(m.vision.intermediate, 5120, "mlp_ratio x embed_dim")
  check.eq(m.vision.out_hidden, 3584, "vision_config.hidden_size is the projector's output")
  check.eq(m.params, 7615616512 + 675759104, "the decoder and the tower")
  os.remove(dir .. "/config.json")
  os.remove(dir .. "/preprocessor_config.json")
  os.remove(dir)
end

-- LLaVA-1.5: the Llama decoder under a partial text_config (LlamaConfig's
-- defaults fill it), a CLIP tower, the catalog entry's counts from the same shapes
do
  local dir = check.tmpdir()
  local fh = assert(io.open(dir .. "/config.json", "wb"))
  fh:write([[{"_name_or_path": "llava-hf/llava-1.5-7b-hf", "model_type": "llava",
    "projector_hidden_act": "gelu", "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5",
    "architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096, "model_type": "llama",
    "rms_norm_eps": 1e-05, "torch_dtype": "float16", "vocab_size": 32064},
    "tie_word_embeddings": false, "torch_dtype": "float16",
    "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
      "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
      "patch_size": 14, "projection_dim": 768, "vocab_size": 32000},
    "vision_feature_layer": -2, "vision_feature_select_strategy": "default"}]])
  fh:close()
  local m = from_hf(dir)
  local c = kv.model("llava-1.5-7b")
  check.eq(m.params, c.params, "decoder + CLIP tower + projector")
  check.eq(m.vision.params, c.vision.params, "the tower and projector: 324487168")
  check.eq(m.hidden, 4096, "LlamaConfig's default hidden_size")
  check.eq(m.kv_heads, 32, "MHA")
  check.eq(m.dtype, "fp16", "float16")
  check.eq(m:kv_bytes_per_token(), c:kv_bytes_per_token(), "KV bytes per token")
  local item = kv.deploy{model = m, gpu = "h100", engine_version = "0.10"}.activation_range.encoder
  check.eq(item.item_patches, 577, "576 patches and the class token")
  check.eq(item.item_tokens, 576, "576 tokens an image")
  os.remove(dir .. "/config.json")
  os.remove(dir)
end

-- ---- KV auto follows what each engine does with the checkpoint ------------------
-- A ModelOpt FP8 checkpoint (config.json's quantization_config of quant_method
-- modelopt, and hf_quant_config.json beside it): from_hf reads its FP8 weights
-- and FP8 KV (it refused quant_method 'modelopt' before); kv = "auto" is FP8 on
-- TensorRT-LLM (hf_quant_config.json's kv_cache_quant_algo) and on the vLLM
-- releases that resolve auto from the checkpoint, the model dtype elsewhere.
do
  local dir = check.tmpdir()
  local base = check.slurp(FIX .. "llama-3.1-8b/config.json")
  local q = '"vocab_size": 128256,\n  "quantization_config": {"quant_method": "modelopt", '
            .. '"quant_algo": "FP8", "kv_cache_scheme": {"dynamic": false, "num_bits": 8, '
            .. '"type": "float"}}'
  local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
  end
  write("config.json", (base:gsub('"vocab_size": 128256', q)))
  write("hf_quant_config.json", '{"producer": {"name": "modelopt"}, "quantization": '
        .. '{"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}')
  local m = from_hf(dir)
  check.eq(m.weight_format, "fp8", "modelopt FP8 weights")
  local function kvof(o)
    o.model, o.gpu = m, "h100-sxm"
    local d = kv.deploy(o)
    return d.kv.name, d.kv_source
  end
  local k, src = kvof{engine = "trtllm", engine_version = "1.0"}
  check.eq(k, "fp8", "TensorRT-LLM: FP8 KV from the checkpoint")
  check.eq(src, "checkpoint (hf_quant_config.json kv_cache_quant_algo)", "TensorRT-LLM's source")
  check.eq(kvof{budget = "trtllm"}, "fp8", "TensorRT-LLM's budget: the same")
  check.eq(kvof{engine_version = "0.11"}, "bf16", "vLLM 0.11: the model dtype")
  check.eq(kvof{}, "fp8", "vLLM, no release (the newest modelled): the checkpoint's")
  check.eq(kvof{engine = "vllm", engine_version = "0.20"}, "fp8", "vLLM 0.20: the checkpoint's")
  check.eq(kvof{budget = "sglang"}, "bf16", "SGLang: the model dtype")
  check.eq(kvof{budget = "trtllm", kv = "bf16"}, "bf16", "a given kv wins")
  -- without hf_quant_config.json TensorRT-LLM 1.0 reads no KV algorithm
  os.remove(dir .. "/hf_quant_config.json")
  m = from_hf(dir)
  check.eq(kvof{engine = "trtllm"}, "bf16", "TensorRT-LLM without hf_quant_config.json")
  check.eq(kvof{engine = "vllm", engine_version = "0.20"}, "fp8", "vLLM reads config.json's")
  -- a plain checkpoint states nothing: the model dtype everywhere
  write("config.json", base)
  m = from_hf(dir)
  check.eq(kvof{engine = "trtllm"}, "bf16", "a plain checkpoint on TensorRT-LLM")
  check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8", budget = "trtllm"}.kv.name,
           "bf16", "a catalog model (its quantization unknown): the model dtype, not guessed")
  os.remove(dir .. "/config.json")
  os.remove(dir)
end

-- ---- the local Hugging Face cache (tests/fixtures/hf-home/README.md) -------------

do
  local hf = require "kvplan.hf"
  local cache = "tests/fixtures/hf-home/hub"
  check.eq(select(2, hf.repo_id("meta-llama/Llama-3.1-8B@v1")), "v1", "repo@revision")
  check.eq(hf.repo_id("meta-llama/Llama-3.1-8B"), "meta-llama/Llama-3.1-8B", "a repo id")
  for _, bad in ipairs{"llama-3.1-8b", "a/b/c", "/abs/x", "a--b/c", "a/../b", "../x", "a/"} do
    check.eq(hf.repo_id(bad), nil, "not a repo id: " .. bad)
  end
  check.eq(hf.revision_ok("main"), true, "a branch")
  check.eq(hf.revision_ok("../main"), false, "no path in a revision")
  check.eq(hf.revision_ok("refs/pr/1"), false, "no '/' in a revision")
  -- SmolLM2-135M: config.json alone (refs/main -> its snapshot)
  local s = kv.models.from_cache("HuggingFaceTB/SmolLM2-135M", nil, {cache = cache})
  check.eq(s.id, "HuggingFaceTB/SmolLM2-135M", "id: the repo id")
  check.eq(s.hf, "HuggingFaceTB/SmolLM2-135M", "hf: the repo id")
  check.eq(s:kv_bytes_per_token(), 2 * 30 * 3 * 64 * 2, "30 layers, 3 KV heads of 64, bf16")
  check.eq(s.max_context, 8192, "max_position_embeddings")
  -- 134,515,008 from the shapes, tied embeddings (as transformers counts them)
  check.eq(s.params, 49152 * 576 + 30 * (576 * 576 * 2 + 576 * 192 * 2 + 3 * 576 * 1536 + 2 * 576) + 576,
           "params from the shapes")
  check.eq(s.params, 134515008, "SmolLM2-135M's parameters")
  assert(s.source:find("snapshots/d1cc2d2db3caca96cf7303ddd079d7e7f0caa88f/config.json", 1, true), s.source)
  -- Llama-3.1-8B: main has the index (the checkpoint's size), the other snapshot config.json alone
  local main = kv.models.from_cache("meta-llama/Llama-3.1-8B", nil, {cache = cache})
  check.eq(main.weight_bytes, 16060522496, "main: the index's total_size")
  local old = kv.models.from_cache("meta-llama/Llama-3.1-8B", "18cf537a24c1076a5cdaa56091448ad394d1a381",
                                   {cache = cache})
  check.eq(old.id, "meta-llama/Llama-3.1-8B@18cf537a24c1076a5cdaa56091448ad394d1a381", "id with the revision")
  check.eq(old.weight_bytes, nil, "a snapshot without the index")
  check.eq(old:kv_bytes_per_token(), main:kv_bytes_per_token(), "the same config")
  check.eq(kv.models.from_cache("meta-llama/Llama-3.1-8B", "main", {cache = cache}).weight_bytes, 16060522496,
           "revision main: refs/main")
  -- what is not there: the directory looked in and how to download it
  local msg = check.error("model 'org/none' is not in the local Hugging Face cache: no directory "
                          .. cache .. "/models--org--none", kv.models.from_cache, "org/none", nil, {cache = cache})
  assert(msg:find("`huggingface-cli download org/none config.json`", 1, true), msg)
  msg = check.error("no " .. cache .. "/models--meta-llama--Llama-3.1-8B/refs/v9 nor ",
                    kv.models.from_cache, "meta-llama/Llama-3.1-8B", "v9", {cache = cache})
  assert(msg:find("config.json --revision v9`", 1, true), msg)
  check.error("revision must be a branch, tag or commit", kv.models.from_cache, "org/x", "../../etc", {cache = cache})
  check.error("'a/b/c' is not a Hugging Face repo id", kv.models.from_cache, "a/b/c")
  -- kv.model: the catalog first, then a directory or config.json
  check.eq(kv.model("meta-llama/Llama-3.1-8B").id, "llama-3.1-8b", "the catalog's alias wins")
  check.eq(kv.model(FIX .. "qwen3-8b").id, "qwen3-8b", "a directory")
  check.eq(kv.model(FIX .. "qwen3-8b/config.json"):kv_bytes_per_token(), kv.model("qwen3-8b"):kv_bytes_per_token(),
           "a config.json")
  check.eq(rawequal(kv.model(FIX .. "qwen3-8b"), kv.model(FIX .. "qwen3-8b")), true, "read once")
end

-- DeepSeek Sparse Attention from config.json (DeepSeek-V3.2: index_head_dim,
-- index_n_heads, index_topk): the indexer's keys in the KV (memory, as
-- before) and its heads and top-k for the step time (roofline.c): at 32K the
-- latent is read over 2048 keys, the indexer's 132 bytes over all
do
  local d = tmp .. "/dsa"
  assert(os.execute("mkdir -p " .. d))
  local text = check.slurp(FIX .. "deepseek-v3/config.json")
  local dsa, n = text:gsub("^%s*{", '{"index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048,', 1)
  assert(n == 1, "config.json opens with {")
  put(d .. "/config.json", dsa)
  local m = from_hf(d)
  check.eq(m.mla.index_n_heads, 64, "index_n_heads")
  check.eq(m.mla.index_topk, 2048, "index_topk")
  check.eq(m:kv_bytes_per_token("bf16", 16), 61 * ((512 + 64) * 2 + 132), "latent and indexer keys")
  local plain = from_hf(FIX .. "deepseek-v3")
  local function tpot(model) return kv.deploy{model = model, gpu = "h200", tp = 8}:time(32768, 32).tpot_ms end
  assert(tpot(m) < 0.8 * tpot(plain), "sparse attention at 32K: " .. tpot(m) .. " vs " .. tpot(plain))
  -- heads without top-k is the core's error naming them
  put(d .. "/config.json", (text:gsub("^%s*{", '{"index_head_dim": 128, "index_n_heads": 64,', 1)))
  check.error("index_topk", function() from_hf(d) end)
  os.remove(d .. "/config.json")
  os.remove(d)
end
