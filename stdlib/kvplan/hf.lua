-- stdlib/kvplan/hf.lua: a Model from a Hugging Face checkpoint's local files:
-- config.json, model.safetensors.index.json and the *.safetensors headers.
-- Stdlib layer: maps each family's config fields onto the model schema of
-- models.lua; JSON parsing and header reading are kvplan.json's (jansson).
-- Local files only: nothing here touches the network.
--
--   local m = kv.models.from_hf("path/to/Llama-3.1-8B")        -- a directory
--   local m = kv.models.from_hf("path/to/config.json", {id = "mine"})
--   local m = kv.models.from_cache("meta-llama/Llama-3.1-8B")  -- the local cache's snapshot
--
-- Every fact the Model carries is recorded in m.source with the file and the
-- field it came from. The field rules follow transformers' configuration
-- classes and vLLM's ModelConfig (vllm/config/model.py: get_head_size,
-- get_total_num_kv_heads, get_hf_config_sliding_window); where a family's
-- rule is its own, the class is named at the rule.

local core = require "kvplan.core"
local engines = require "kvplan.engines"
local formats = require "kvplan.formats"
local json = require "kvplan.json"
local models = require "kvplan.models"
local util = require "kvplan.util"

local M = {}
local null = json.null

-- ---- families ------------------------------------------------------------
-- Traits by model_type. `tie` is the default of tie_word_embeddings in the
-- transformers config class (used when the file omits it); `defaults` are
-- other class defaults that real checkpoints rely on (a file that omits
-- anything else gets a "missing field" error, never a silent default).
-- `class` names the transformers class those defaults come from.
local not_decoders -- model_types from_hf refuses (below)
local families = {
  llama = {tie = false},
  -- MistralConfig(sliding_window=4096): an absent key means a 4096 window,
  -- an explicit null means none (Mistral-7B-v0.3)
  mistral = {tie = false, class = "MistralConfig", defaults = {sliding_window = 4096}},
  mixtral = {tie = false, moe = "all"},
  -- Qwen2Config/Qwen3Config: sliding only with use_sliding_window true, on
  -- layers i >= max_window_layers (default 28); q/k/v carry biases in Qwen2
  qwen2 = {tie = false, qkv_bias = true, swa_flag = true, class = "Qwen2Config",
           defaults = {max_window_layers = 28}},
  qwen3 = {tie = false, qk_norm = true, swa_flag = true, class = "Qwen3Config",
           defaults = {max_window_layers = 28}},
  qwen3_moe = {tie = false, qk_norm = true, swa_flag = true, moe = "qwen",
               class = "Qwen3MoeConfig", defaults = {max_window_layers = 28}},
  -- Qwen3NextConfig defaults (= Qwen3-Next-80B-A3B-Instruct): gated
  -- attention (q_proj doubled), Gated DeltaNet on 3 of every 4 layers
  qwen3_next = {tie = false, qk_norm = true, gated_q = true, moe = "qwen", hybrid = "gdn",
                class = "Qwen3NextConfig", defaults = {
                  head_dim = 256, full_attention_interval = 4, linear_conv_kernel_dim = 4,
                  linear_key_head_dim = 128, linear_value_head_dim = 128,
                  linear_num_key_heads = 16, linear_num_value_heads = 32}},
  -- Gemma2Config: layer i sliding when (i + 1) % 2 != 0 (layer 0 local)
  gemma2 = {tie = true, norms = 4, sliding_pattern = 2},
  -- Gemma3TextConfig defaults: google/gemma-3-*-it config.json files give
  -- only the non-default fields under text_config (4B: no heads, no head_dim)
  gemma3_text = {tie = true, norms = 4, qk_norm = true, class = "Gemma3TextConfig", defaults = {
                   vocab_size = 262208, num_attention_heads = 8, num_key_value_heads = 4,
                   head_dim = 256, max_position_embeddings = 131072, sliding_window = 4096,
                   sliding_window_pattern = 6}},
  deepseek_v2 = {tie = false, moe = "deepseek"},
  -- DeepseekV3: the router's e_score_correction_bias (topk_method noaux_tc)
  deepseek_v3 = {tie = false, moe = "deepseek", router_bias = true},
  phi3 = {tie = false},
  -- FalconConfig: no max_position_embeddings key in the released files
  -- (default 2048), FFN 4 * hidden, lm_head tied
  falcon = {tie = true, falcon = true, class = "FalconConfig",
            defaults = {max_position_embeddings = 2048}},
  gpt_oss = {tie = false, sinks = true, moe = "all", expert_bias = true, router_bias = true},
  -- JambaConfig: attention on layer i when i % attn_layer_period ==
  -- attn_layer_offset, Mamba elsewhere; MoE when i % expert_layer_period ==
  -- expert_layer_offset
  jamba = {tie = false, moe = "jamba", hybrid = "mamba", class = "JambaConfig", defaults = {
             attn_layer_period = 8, attn_layer_offset = 4, expert_layer_period = 2,
             expert_layer_offset = 1, mamba_d_state = 16, mamba_d_conv = 4, mamba_expand = 2,
             mamba_conv_bias = true, mamba_proj_bias = false}},
  -- NemotronHConfig: hybrid_override_pattern gives each layer's block, M a
  -- Mamba2 mixer, * attention, - an MLP (relu2, not gated), E a MoE MLP;
  -- one norm a block
  nemotron_h = {tie = false, hybrid = "mamba2", norms = 1, class = "NemotronHConfig"},
  -- MambaConfig / FalconMambaConfig: a Mamba1 mixer in every block, no
  -- attention; the mixer is intermediate_size wide (vLLM mamba1_state_shape
  -- reads it), time_step_rank the dt projection's rank
  mamba = {tie = true, hybrid = "mamba1", norms = 1, class = "MambaConfig"},
  falcon_mamba = {tie = false, hybrid = "mamba1", norms = 1, class = "FalconMambaConfig"},
  -- Llama4TextConfig: chunked local attention on the RoPE layers
  -- (no_rope_layers[i] == 1, default every layer but each 4th)
  llama4_text = {tie = false, moe = "llama4", chunked = true, class = "Llama4TextConfig",
                 defaults = {no_rope_layer_interval = 4, interleave_moe_layer_step = 1,
                             attention_chunk_size = 8192}},
}
-- Qwen2-VL / Qwen2.5-VL (Qwen2VLConfig, Qwen2_5_VLConfig): a Qwen2 decoder,
-- its fields at the top level (or under text_config, model_type
-- qwen2*_vl_text, in the files newer transformers write, whose
-- text_config.torch_dtype can say float32 beside a bfloat16 checkpoint: the
-- top level's dtype is read first), and a vision tower under vision_config
-- (read_vision)
for _, n in ipairs{"qwen2_5_vl", "qwen2_vl"} do
  for _, suffix in ipairs{"", "_text"} do
    families[n .. suffix] = {tie = false, qkv_bias = true, swa_flag = true,
                             class = n == "qwen2_vl" and "Qwen2VLConfig" or "Qwen2_5_VLConfig",
                             defaults = {max_window_layers = 28}, vision = n, root_dtype = true}
  end
end
-- LLaVA (LlavaConfig, model_type llava): a Llama decoder under text_config,
-- whose released files (llava-hf/llava-1.5-7b-hf) give only its non-default
-- fields, so LlamaConfig's defaults fill the rest; a CLIP tower under
-- vision_config (CLIPVisionConfig defaults) and a two-layer projector
families.llava_llama = {tie = false, class = "LlamaConfig", vision = "llava", root_dtype = true,
                        defaults = {hidden_size = 4096, intermediate_size = 11008,
                                    num_hidden_layers = 32, num_attention_heads = 32,
                                    max_position_embeddings = 2048, vocab_size = 32000}}
families.RefinedWeb = families.falcon      -- the first Falcon releases' model_type
families.RefinedWebModel = families.falcon
families.gemma = {tie = true}
for name, f in pairs(families) do f.name = name end

-- Multimodal wrappers whose language model sits under text_config.
local wrappers = {gemma3 = "gemma3_text", llama4 = "llama4_text", qwen2_5_vl = "qwen2_5_vl_text",
                  qwen2_vl = "qwen2_vl_text"}

-- Field aliases of older configs (transformers attribute_map / FalconConfig).
local aliases = {
  num_hidden_layers = {"num_hidden_layers", "n_layer"},
  num_attention_heads = {"num_attention_heads", "n_head"},
  hidden_size = {"hidden_size", "n_embed"},
}

-- ---- reading a config ----------------------------------------------------

local function show(v)
  if type(v) == "string" then return "'" .. util.escape(v, 80) .. "'" end
  if v == null then return "null" end
  if type(v) == "table" then
    -- a short array of numbers as itself: weight_block_size [0, 0] was
    -- "a JSON object or array"
    local n, count, items = #v, 0, {}
    for _ in pairs(v) do count = count + 1 end
    if n >= 1 and n <= 8 and count == n then
      for i = 1, n do
        if math.type(v[i]) == nil then return "a JSON object or array" end
        items[i] = util.fmt_num(v[i])
      end
      return "[" .. table.concat(items, ", ") .. "]"
    end
    return "a JSON object or array"
  end
  return tostring(v)
end

local Cfg = {}
Cfg.__index = Cfg

--- The value of field name and where it came from: text_config first (for
--- multimodal wrappers), then the top level, then the family's class
--- default. An explicit null is an answer (nil), not a reason to default.
function Cfg:get(name)
  for _, scope in ipairs(self.scopes) do
    local v = scope.t[name]
    if v == null then return nil, scope.prefix .. name end
    if v ~= nil then return v, scope.prefix .. name end
  end
  local d = self.fam.defaults and self.fam.defaults[name]
  if d ~= nil then
    return d, string.format("%s=%s (%s default)", name, tostring(d), self.fam.class)
  end
end

function Cfg:label(name) return (self.scopes[1].prefix or "") .. name end

function Cfg:raise(fmt, ...) util.raise("%s: " .. fmt, self.file, ...) end

--- An integer field (names: one name or a list of aliases), at least min
--- (default 1); absent gives nil unless required.
function Cfg:int(names, min, required)
  names = type(names) == "string" and (aliases[names] or {names}) or names
  min = min or 1
  for _, n in ipairs(names) do
    local v, where = self:get(n)
    if v ~= nil then
      local i = math.type(v) == "integer" and v or (math.type(v) == "float" and math.tointeger(v))
      if not i or i < min then
        self:raise("field '%s' must be a %s integer, got %s", where,
                   min >= 1 and "positive" or "non-negative", show(v))
      end
      return i, where
    end
  end
  if required then self:raise("missing field '%s'", self:label(names[1])) end
  return nil
end

-- The getter of a field of one JSON type: absent or null gives nil, a value
-- ok refuses an error saying it must be `what`.
local function typed(ok, what)
  return function(self, name)
    local v, where = self:get(name)
    if v ~= nil and not ok(v) then self:raise("field '%s' must be %s, got %s", where, what, show(v)) end
    return v, where
  end
end
Cfg.bool = typed(function(v) return type(v) == "boolean" end, "true or false")
Cfg.str = typed(function(v) return type(v) == "string" end, "a string")
Cfg.list = typed(function(v) return type(v) == "table" and (next(v) == nil or v[1] ~= nil) end, "an array")

-- ---- files -----------------------------------------------------------------

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text, rerr = f:read("a")
  f:close()
  if text == nil then util.raise("cannot read '%s': %s", path, util.shown(rerr)) end
  return text
end

--- A JSON file's object; nil, message when it cannot be opened.
local function read_json(path)
  local text, err = read(path)
  if not text then return nil, err end
  local v = json.decode(text, path)
  if type(v) ~= "table" or (next(v) ~= nil and v[1] ~= nil) then
    util.raise("%s: expected a JSON object at the top level, got %s", path, show(v))
  end
  return v
end

local function basename(p) return (p:gsub("/+$", ""):match("([^/]*)$")) end

-- ---- checked integer arithmetic (parameter counts of malformed files) ----

local MAXI = math.maxinteger
local function mul(file, ...)
  local r = 1
  for i = 1, select("#", ...) do
    local x = select(i, ...)
    if x ~= 0 and r > MAXI // x then util.raise("%s: parameter count overflows 64 bits", file) end
    r = r * x
  end
  return r
end

-- ---- layer kinds -------------------------------------------------------------

local layer_type_kinds = {
  full_attention = "full", sliding_attention = "sliding", chunked_attention = "chunked",
  linear_attention = "state", mamba = "state", attention = "full",
}

--- The kind of every layer (a list of "full", "sliding", "chunked",
--- "state"), and how it was decided.
local function kinds_of(C, a)
  local n, fam = a.layers, C.fam
  local kinds, how = {}, nil
  local types, where = C:list("layer_types")
  if types then
    if #types ~= n then
      C:raise("field '%s' has %d entries, expected %d (num_hidden_layers)", where, #types, n)
    end
    for i = 1, n do
      local k = layer_type_kinds[types[i]]
      if k == nil then
        C:raise("field '%s' entry %d is %s, expected one of attention, chunked_attention, " ..
                "full_attention, linear_attention, mamba, sliding_attention", where, i,
                show(types[i]))
      end
      kinds[i] = k
    end
    how = where
  elseif fam.hybrid == "gdn" then
    -- Qwen3NextConfig: layer i full when (i + 1) % full_attention_interval == 0
    local every, w = C:int("full_attention_interval", 1, true)
    for i = 0, n - 1 do kinds[i + 1] = (i + 1) % every == 0 and "full" or "state" end
    how = w .. ": full attention when (i+1) % " .. every .. " == 0, linear attention elsewhere"
  elseif fam.hybrid == "mamba1" then
    for i = 1, n do kinds[i] = "state" end
    how = "Mamba1 mixer on every layer (" .. fam.class .. ")"
  elseif fam.hybrid == "mamba2" then
    local p, w = C:str("hybrid_override_pattern")
    if p == nil then C:raise("missing field '%s'", C:label("hybrid_override_pattern")) end
    if #p ~= n then
      C:raise("field '%s' has %d characters, expected %d (num_hidden_layers)", w, #p, n)
    end
    local map = {M = "state", ["*"] = "full", ["-"] = "none", E = "none"}
    for i = 1, n do
      local k = map[p:sub(i, i)]
      if k == nil then
        C:raise("field '%s' character %d is %s, expected one of M * - E", w, i, show(p:sub(i, i)))
      end
      kinds[i] = k
    end
    how = w .. ": M Mamba2, * attention, - and E MLP only (no KV)"
  elseif fam.hybrid == "mamba" then
    local period, w1 = C:int("attn_layer_period", 1, true)
    local offset, w2 = C:int("attn_layer_offset", 0, true)
    if offset >= period then
      C:raise("field '%s' must be below attn_layer_period %d, got %d", w2, period, offset)
    end
    for i = 0, n - 1 do kinds[i + 1] = i % period == offset and "full" or "state" end
    how = string.format("%s, %s: attention when i %% %d == %d, Mamba elsewhere", w1, w2, period,
                        offset)
  elseif fam.chunked and C:int("attention_chunk_size") then
    local rope, w = C:list("no_rope_layers")
    if rope and #rope > 0 then
      if #rope ~= n then C:raise("field '%s' has %d entries, expected %d", w, #rope, n) end
      for i = 1, n do kinds[i] = (rope[i] ~= 0 and rope[i] ~= false) and "chunked" or "full" end
      how = w .. ": chunked attention on RoPE layers (1), full on NoPE layers (0)"
    else
      local every, w2 = C:int("no_rope_layer_interval", 1, true)
      for i = 0, n - 1 do kinds[i + 1] = (i + 1) % every ~= 0 and "chunked" or "full" end
      how = w2 .. ": every " .. every .. "th layer NoPE full attention, the rest chunked"
    end
  else
    local window, ww = C:int("sliding_window")
    local use, uw = C:bool("use_sliding_window")
    if window and fam.swa_flag then
      if use ~= true then
        how = (uw or "use_sliding_window absent") .. " false: no sliding window"
      else
        local from, w = C:int("max_window_layers", 0, true)
        for i = 0, n - 1 do kinds[i + 1] = i >= from and "sliding" or "full" end
        how = ww .. " on layers i >= " .. w
      end
    elseif window and use == false then
      -- vLLM get_hf_config_sliding_window: use_sliding_window false wins
      how = uw .. " false: no sliding window"
    elseif window then
      local every, w = C:int({"sliding_window_pattern", "_sliding_window_pattern"})
      every = every or fam.sliding_pattern
      if every then
        for i = 0, n - 1 do kinds[i + 1] = (i + 1) % every ~= 0 and "sliding" or "full" end
        how = ww .. ", " .. (w or fam.name .. " alternation") .. ": sliding when (i+1) % " ..
              every .. " != 0"
      else
        for i = 1, n do kinds[i] = "sliding" end
        how = ww .. " on every layer"
      end
    end
    if not next(kinds) then
      for i = 1, n do kinds[i] = "full" end
      how = how or "no sliding_window: full attention on every layer"
    end
  end
  return kinds, how
end

-- Bytes per element of a dtype name (torch_dtype values).
local dtype_names = {bfloat16 = "bf16", float16 = "fp16", float32 = "fp32", half = "fp16",
                     float = "fp32", bf16 = "bf16", fp16 = "fp16", fp32 = "fp32"}
local dtype_bytes = {bf16 = 2, fp16 = 2, fp32 = 4}

--- The fixed per-sequence state of a linear-attention (Gated DeltaNet) or
--- Mamba layer, and the number of parts it splits into under TP. vLLM
--- MambaStateShapeCalculator (vllm/model_executor/layers/mamba/mamba_utils.py):
---   gated_delta_net_state_shape: conv (conv_kernel - 1) x (2*k_heads*k_dim +
---     v_heads*v_dim), temporal v_heads x k_dim x v_dim, both split over TP;
---   mamba1_state_shape: conv intermediate x (d_conv - 1), temporal
---     intermediate x d_state (intermediate = mamba_expand * hidden).
--- Elements are in the model dtype (vLLM mamba_cache_dtype "auto"); a config
--- field mamba_ssm_dtype (Qwen3.5) sets the temporal state's dtype.
local function state_of(C, a)
  local ssm_bytes = a.dtype_bytes
  local sd, sw = C:str("mamba_ssm_dtype")
  if sd then
    local d = dtype_names[sd:lower()]
    if not d then
      C:raise("field '%s' must be one of bfloat16, float16, float32, got %s", sw, show(sd))
    end
    ssm_bytes = dtype_bytes[d]
  end
  if C.fam.hybrid == "gdn" then
    local kernel = C:int("linear_conv_kernel_dim", 1, true)
    local nk, dk = C:int("linear_num_key_heads", 1, true), C:int("linear_key_head_dim", 1, true)
    local nv, dv = C:int("linear_num_value_heads", 1, true), C:int("linear_value_head_dim", 1, true)
    local conv = mul(C.file, kernel - 1, 2 * nk * dk + nv * dv)
    local temporal = mul(C.file, nv, dk, dv)
    local bytes = conv * a.dtype_bytes + temporal * ssm_bytes
    a.linear = {kernel = kernel, nk = nk, dk = dk, nv = nv, dv = dv}
    return {kind = "state", state_bytes = bytes, state_heads = nk,
            spec_state_bytes = (2 * nk * dk + nv * dv) * a.dtype_bytes,
            note = string.format("Gated DeltaNet: conv %d x %d + recurrent %d x %d x %d elements",
                                 kernel - 1, 2 * nk * dk + nv * dv, nv, dk, dv)}
  elseif C.fam.hybrid == "mamba2" then
    local m = {heads = C:int("mamba_num_heads", 1, true),
               head_dim = C:int("mamba_head_dim", 1, true),
               state = C:int("ssm_state_size", 1, true),
               groups = C:int({"n_groups", "mamba_num_groups"}, 1, true),
               conv_kernel = C:int("conv_kernel", 1, true)}
    a.mamba2 = m
    local bytes, parts, note, row = models.mamba2_state(m, a.dtype_bytes, ssm_bytes, C.file)
    return {kind = "state", state_bytes = bytes, state_heads = parts, spec_state_bytes = row, note = note}
  elseif C.fam.hybrid == "mamba1" then
    local inner = C:int("intermediate_size", 1, true)
    local m = {inner = inner, state = C:int("state_size", 1, true),
               conv_kernel = C:int("conv_kernel", 1, true)}
    a.mamba = {inner = inner, d_conv = m.conv_kernel, d_state = m.state}
    local bytes, parts, note = models.mamba1_state(m, a.dtype_bytes, ssm_bytes, C.file)
    return {kind = "state", state_bytes = bytes, state_heads = parts, note = note}
  elseif C.fam.hybrid == "mamba" then
    local expand, dconv = C:int("mamba_expand", 1, true), C:int("mamba_d_conv", 1, true)
    local dstate = C:int("mamba_d_state", 1, true)
    local inner = mul(C.file, expand, a.hidden)
    local bytes = mul(C.file, inner, dconv - 1) * a.dtype_bytes
                  + mul(C.file, inner, dstate) * ssm_bytes
    a.mamba = {inner = inner, d_conv = dconv, d_state = dstate}
    return {kind = "state", state_bytes = bytes, state_heads = inner,
            note = string.format("Mamba: conv %d x %d + SSM %d x %d elements",
                                 inner, dconv - 1, inner, dstate)}
  end
  C:raise("model_type %s has linear-attention or Mamba layers whose state size kvplan does not " ..
          "know (known: qwen3_next, jamba)", show(C.model_type))
end

--- The per-layer shapes as a cyclic pattern of runs (models.lua
--- layer_kinds), or nil when every layer is full attention.
local function pattern_of(C, a, kinds)
  local shapes, state = {}, nil
  local full = true
  for i, k in ipairs(kinds) do
    if k == "sliding" then
      if not a.window then C:raise("layer %d is sliding_attention but field '%s' is absent", i - 1,
                                   C:label("sliding_window")) end
      shapes[i] = {kind = "sliding", window = a.window}
    elseif k == "chunked" then
      if not a.chunk then C:raise("layer %d is chunked_attention but field '%s' is absent", i - 1,
                                  C:label("attention_chunk_size")) end
      shapes[i] = {kind = "chunked", window = a.chunk}
    elseif k == "state" then
      state = state or state_of(C, a)
      shapes[i] = state
    elseif k == "none" then
      shapes[i] = {kind = "none"}
    else
      shapes[i] = {kind = "full"}
    end
    if k ~= "full" then full = false end
  end
  if full then return nil end
  local n = #shapes
  local function same(x, y)
    return x.kind == y.kind and x.window == y.window and x.state_bytes == y.state_bytes
           and x.spec_state_bytes == y.spec_state_bytes
  end
  local period = n
  for p = 1, n do
    local ok = true
    for i = p + 1, n do
      if not same(shapes[i], shapes[(i - 1) % p + 1]) then ok = false break end
    end
    if ok then period = p break end
  end
  local runs = {}
  for i = 1, period do
    local last = runs[#runs]
    if last and same(last.shape, shapes[i]) then
      last.n = last.n + 1
    else
      runs[#runs + 1] = {shape = shapes[i], n = 1}
    end
  end
  local out = {}
  for i, r in ipairs(runs) do
    local s = r.shape
    out[i] = {kind = s.kind, n = r.n, window = s.window, state_bytes = s.state_bytes,
              state_heads = s.state_heads, spec_state_bytes = s.spec_state_bytes, note = s.note}
  end
  return out
end

-- ---- quantization_config -> weight format -------------------------------------

-- The largest scale group the core counts (kvplan.h: kvp_format.group is an
-- int32_t; engine/lua/convert_lua.c refuses a wider one).
local max_group = 0x7fffffff

local function gptq_like(C, q, where, method)
  local bits = q.bits or q.w_bit
  local group = q.group_size or q.q_group_size
  if math.type(bits) ~= "integer" or bits < 1 or bits > 16 then
    C:raise("field '%s.bits' must be an integer 1..16, got %s", where, show(bits))
  end
  if math.type(group) ~= "integer" or (group < 1 and group ~= -1) or group > max_group then
    C:raise("field '%s.group_size' must be a positive integer of at most %d or -1, got %s", where,
            max_group, show(group))
  end
  -- GPTQ: sym (GPTQConfig default true) drops the zero points (vLLM's
  -- gptq_marlin keeps none for symmetric checkpoints); AWQ: zero_point
  -- (AwqConfig default true) keeps a bits-wide zero per group.
  local zero
  if method == "awq" then zero = q.zero_point ~= false else zero = q.sym == false end
  local note = ""
  if group == -1 then
    -- one scale per output channel: a group as long as a row of the
    -- hidden-size input (the q/k/v/gate/up matrices)
    group, note = C.hidden, " (group_size -1: per-channel scales counted per hidden_size row)"
  end
  -- act order: GPTQ's desc_act, compressed-tensors' actorder "group" (the
  -- caller's act): vLLM's Marlin keeps the sorted g_idx and its sort
  -- indices, two int32 an input column of each layer (formats.lua -act)
  local act = (method == "gptq" and q.desc_act == true) or q.act == true
  local name = string.format("int%d-g%d%s%s", bits, group, zero and "" or "-sym", act and "-act" or "")
  return {name = name, bits = bits, group = group, scale = 16, zero = zero and bits or 0,
          col = act and 64 or nil},
         string.format("%s %s: %d bits, group %d, fp16 scales%s%s%s", where, method, bits, group,
                       zero and (", " .. bits .. "-bit zeros") or ", symmetric", note,
                       act and ", act order (g_idx and its sort indices, int32 an input column)"
                       or "")
end

--- The weight format of quantization_config q (field label where), and a
--- line for the source.
local quantized_classes

local function weight_format_of(C, q, where)
  if type(q) ~= "table" then C:raise("field '%s' must be an object, got %s", where, show(q)) end
  local method = q.quant_method
  if type(method) ~= "string" then
    C:raise("field '%s.quant_method' must be a string, got %s", where, show(method))
  end
  method = method:lower()
  if method == "gptq" or method == "awq" then return gptq_like(C, q, where, method) end
  if method == "fp8" then
    local b = q.weight_block_size
    if b == nil or b == null then
      return "fp8", where .. " fp8: per-tensor scales"
    end
    if type(b) ~= "table" or #b ~= 2 or math.type(b[1]) ~= "integer" or math.type(b[2]) ~= "integer"
       or b[1] < 1 or b[2] < 1 then
      C:raise("field '%s.weight_block_size' must be two positive integers, got %s", where, show(b))
    end
    -- the block's scale group as the core's int32 (kvplan.h kvp_format.group):
    -- [2^40, 2^40] wrapped to group 0, "scale or zero bits need a group size"
    if b[1] > max_group // b[2] then
      C:raise("field '%s.weight_block_size' %s is a block of more than %d elements (expected a "
              .. "scale group kvplan counts)", where, show(b), max_group)
    end
    -- one fp32 scale per block_h x block_w block (DeepSeek-V3's 128 x 128)
    return {name = string.format("fp8-b%dx%d", b[1], b[2]), bits = 8, group = b[1] * b[2],
            scale = 32},
           string.format("%s fp8: one fp32 scale per %dx%d block", where, b[1], b[2])
  end
  if method == "modelopt" then
    -- NVIDIA ModelOpt's export: quant_algo at the top or under "quantization"
    local inner = type(q.quantization) == "table" and q.quantization or q
    local algo = inner.quant_algo or q.quant_algo
    if algo == "FP8" then return "fp8", where .. " modelopt FP8: per-tensor scales" end
    if algo == "NVFP4" then return "nvfp4", where .. " modelopt NVFP4" end
    C:raise("field '%s.quant_algo' %s is not supported for modelopt (known: FP8, NVFP4); give "
            .. "opts.weight_format", where, show(algo))
  end
  if method == "bitsandbytes" then
    -- transformers' BitsAndBytesConfig.to_dict, as vLLM's
    -- BitsAndBytesConfig.from_config reads it (load_in_4bit unless
    -- load_in_8bit; engines.lua has the layouts' sources)
    if q.load_in_8bit == true then
      -- LLM.int8: int8 values and an fp32 absmax per output row (SCB),
      -- counted per hidden_size row as GPTQ's per-channel scales
      return "bnb-int8-g" .. C.hidden,
             string.format("%s bitsandbytes 8-bit: int8, an fp32 scale per row (counted per " ..
                           "hidden_size %d row)", where, C.hidden)
    end
    if q.load_in_4bit == false then
      C:raise("field '%s': bitsandbytes with neither load_in_4bit nor load_in_8bit", where)
    end
    local dq = q.bnb_4bit_use_double_quant == true
    local qt = type(q.bnb_4bit_quant_type) == "string" and q.bnb_4bit_quant_type or "fp4"
    return dq and "bnb-4bit-dq" or "bnb-4bit",
           string.format("%s bitsandbytes 4-bit %s: an %s absmax per 64%s", where, qt,
                         dq and "8-bit" or "fp32", dq and ", an fp32 one per 256 of them" or "")
  end
  if method == "mxfp4" then
    return "mxfp4", where .. " mxfp4 (OCP MX: e8m0 scale per 32; modules_to_not_convert stay " ..
           "in the model dtype, counted as mxfp4 unless the files give the bytes)"
  end
  if method == "compressed-tensors" then
    if q.format == "nvfp4-pack-quantized" then
      return "nvfp4", where .. " compressed-tensors nvfp4"
    end
    local groups = type(q.config_groups) == "table" and q.config_groups or {}
    local names = util.sorted_keys(groups)
    local w = names[1] and type(groups[names[1]]) == "table" and groups[names[1]].weights
    if type(w) == "table" and w.type == "int" and w.strategy == "group" then
      return gptq_like(C, {bits = w.num_bits, group_size = w.group_size, sym = w.symmetric,
                           act = w.actorder == "group"},
                       where .. ".config_groups." .. names[1] .. ".weights", "gptq")
    end
    if type(w) == "table" and w.type == "int" and w.num_bits == 8 and
       (w.strategy == "tensor" or w.strategy == "channel") then
      -- W8A8 int8 (formats.lua int8-chG): an fp32 scale per output row,
      -- counted per hidden_size row; per tensor, one a matrix (not counted)
      if w.strategy == "tensor" then
        return "int8", where .. " compressed-tensors int8 (per-tensor scales, not counted)"
      end
      return "int8-ch" .. C.hidden,
             string.format("%s compressed-tensors int8: an fp32 scale per output channel (counted " ..
                           "per hidden_size %d row)", where, C.hidden)
    end
    -- W8A8 fp8 (vLLM CompressedTensorsW8A8Fp8.create_weights, compressed_tensors_
    -- w8a8_fp8.py at 00cb05c39f77): float32 scales per output channel (channel,
    -- counted per hidden_size row as int8's) or per block_structure block
    -- (block); per tensor, one a matrix (not counted)
    if type(w) == "table" and w.type == "float" and w.num_bits == 8 and w.strategy == "tensor" then
      return "fp8", where .. " compressed-tensors fp8 (per-tensor scales, not counted)"
    end
    if type(w) == "table" and w.type == "float" and w.num_bits == 8 and w.strategy == "channel" then
      return "fp8-ch" .. C.hidden,
             string.format("%s compressed-tensors fp8: an fp32 scale per output channel (counted " ..
                           "per hidden_size %d row)", where, C.hidden)
    end
    if type(w) == "table" and w.type == "float" and w.num_bits == 8 and w.strategy == "block" then
      local b = w.block_structure
      if type(b) ~= "table" or #b ~= 2 or math.type(b[1]) ~= "integer"
         or math.type(b[2]) ~= "integer" or b[1] < 1 or b[2] < 1 then
        C:raise("field '%s.config_groups.%s.weights.block_structure' must be two positive " ..
                "integers, got %s", where, names[1], show(b))
      end
      return string.format("fp8-b%dx%d", b[1], b[2]),
             string.format("%s compressed-tensors fp8: an fp32 scale per %dx%d block", where,
                           b[1], b[2])
    end
    C:raise("field '%s': compressed-tensors scheme not supported (int group, int8 or fp8 " ..
            "tensor/channel/block weights, or nvfp4); give opts.weight_format", where)
  end
  C:raise("field '%s.quant_method' %s is not supported (known: awq, bitsandbytes, " ..
          "compressed-tensors, fp8, gptq, modelopt, mxfp4); give opts.weight_format", where,
          show(q.quant_method))
end

-- ---- the checkpoint's KV cache quantization ----------------------------------
--
-- What a checkpoint states about its KV cache, as the engines read it (the
-- engines decide what `kv = "auto"` makes of it: deploy.lua):
--   config.json's quantization_config of quant_method "modelopt": its
--     kv_cache_scheme {dynamic = false, num_bits = 8, type = "float"} or its
--     kv_cache_quant_algo "FP8" (also under "quantization"): FP8 KV, as
--     vLLM's get_kv_cache_quant_algo_string reads it (vllm-project/vllm
--     vllm/utils/torch_utils.py at 959009b402c3)
--   hf_quant_config.json beside it (ModelOpt's export): quantization.
--     kv_cache_quant_algo "FP8", as TensorRT-LLM's ModelLoader.
--     _update_from_hf_quant_config reads it (NVIDIA/TensorRT-LLM
--     tensorrt_llm/llmapi/llm_utils.py at 7b437aaa73bf)
-- Returns {format = "fp8", config = true when config.json says so,
-- hf_quant = true when hf_quant_config.json does}, or nil.
local function kv_checkpoint(C, dir)
  local out
  local function fp8(v)
    if type(v) == "string" then return v:upper() == "FP8" end
    return type(v) == "table" and v.dynamic == false and v.num_bits == 8 and v.type == "float"
  end
  local q = C:get("quantization_config")
  if type(q) == "table" and type(q.quant_method) == "string"
     and q.quant_method:lower():find("^modelopt") then
    local inner = type(q.quantization) == "table" and q.quantization or q
    local k = inner.kv_cache_scheme or q.kv_cache_scheme or inner.kv_cache_quant_algo
              or q.kv_cache_quant_algo
    if fp8(k) then
      out = {format = "fp8", config = true}
      C:fact("checkpoint KV = config.json quantization_config (modelopt): FP8")
    end
  end
  local hq = dir and read_json(dir .. "/hf_quant_config.json")
  if hq ~= nil then
    local inner = type(hq.quantization) == "table" and hq.quantization or {}
    if fp8(inner.kv_cache_quant_algo) then
      out = out or {format = "fp8"}
      out.hf_quant = true
      C:fact("checkpoint KV = hf_quant_config.json kv_cache_quant_algo FP8")
    end
  end
  return out
end

-- The skip lists of quantization_config q that method's vLLM from_config
-- reads (no other key), a hole where one is absent:
--   bitsandbytes  llm_int8_skip_modules (bitsandbytes.py at 01f5395fdf04)
--   awq           modules_to_not_convert (awq_marlin.py at 2ab31a815160 from_config)
--   fp8           ignored_layers, else (absent or empty) modules_to_not_convert
--                 (Fp8Config.from_config, fp8.py at 1436674bcb3f): never ignore
--   compressed-tensors  ignore (CompressedTensorsConfig.from_config,
--                 compressed_tensors.py at be696453ee1b)
--   modelopt      quantization.exclude_modules when the config has
--                 "quantization" (hf_quant_config.json), else ignore
--                 (ModelOptQuantConfigBase.from_config, modelopt.py at c9a59901113c)
--   gptq, mxfp4   none (gptq_unlisted reads modules_in_block_to_quantize; Mxfp4Config.from_config
--                 returns cls(): mxfp4.py at afdb4a4ff429)
-- a method not named here: every key, as before
local function skip_list_keys(method, q)
  local keys
  if method == "bitsandbytes" then keys = {q.llm_int8_skip_modules}
  elseif method == "awq" or method == "awq_marlin" then keys = {q.modules_to_not_convert}
  elseif method == "fp8" then
    local l = q.ignored_layers
    keys = {(type(l) == "table" and next(l) ~= nil) and l or q.modules_to_not_convert}
  elseif method == "compressed-tensors" then keys = {q.ignore}
  elseif method == "modelopt" then
    if q.quant_method == nil then keys = {q.exclude_modules}   -- hf_quant_config.json's quantization
    elseif type(q.quantization) == "table" then keys = {q.quantization.exclude_modules}
    else keys = {q.ignore} end
  elseif method == "gptq" or method == "gptq_marlin" or method == "mxfp4" then keys = {}
  else
    keys = {q.modules_to_not_convert, q.ignore, q.ignored_layers, q.llm_int8_skip_modules,
            q.exclude_modules}
  end
  return keys
end

-- A Python fnmatch.fnmatchcase pattern (* any run, ? one character, [seq],
-- [!seq]) as a Lua pattern: ModelOpt's is_layer_excluded (quantized_classes)
local function glob(pat)
  local out, i = {"^"}, 1
  while i <= #pat do
    local c = pat:sub(i, i)
    if c == "*" then out[#out + 1] = ".*"
    elseif c == "?" then out[#out + 1] = "."
    elseif c == "[" and pat:find("]", i + 1, true) then
      local j = pat:find("]", i + 2, true) or pat:find("]", i + 1, true)
      local body = pat:sub(i + 1, j - 1):gsub("^!", "^"):gsub("%%", "%%%%")
      out[#out + 1] = "[" .. body .. "]"
      i = j
    else out[#out + 1] = c:gsub("%W", "%%%0") end
    i = i + 1
  end
  return table.concat(out) .. "$"
end

-- GPTQ's modules_in_block_to_quantize names the modules quantized (a list,
-- or a list of lists vLLM flattens: "self_attn.q_proj", "mlp.down_proj");
-- vLLM quantizes a linear layer when an entry is a substring of its prefix
-- and keeps the rest in the model dtype (is_layer_gptq_quantized,
-- utils/gptq_utils.py at 93e5a576c93d; gptq_marlin.py at 0ede9ef306be
-- maybe_update_config flattens it, and without it reads the safetensors
-- dtypes): a linear class none of whose modules is listed stays in the
-- dtype. The routed experts (FusedMoE, get_moe_quant_method, not read here)
-- and dynamic's "-:" regexes (get_dynamic_override) are left quantized.
-- Sets skip[k] for each class q's list leaves unlisted.
local function gptq_unlisted(C, q, skip)
  local m = q.modules_in_block_to_quantize
  if type(m) == "table" and next(m) ~= nil then
    local seen, names = {}, {}
    local function walk(t)
      for _, v in ipairs(t) do
        if type(v) == "table" then walk(v) elseif type(v) == "string" then names[#names + 1] = v:lower() end
      end
    end
    walk(m)
    for _, n in ipairs(names) do
      if n:find("attn", 1, true) or n:find("attention", 1, true) then seen.attention = true
      elseif n:find("shared_expert", 1, true) then seen.shared_experts = true
      elseif n:find("expert", 1, true) then seen.experts = true
      elseif n:find("mlp", 1, true) then seen.mlp = true
      else seen.unknown = n end
      if n:match("layers%.%d+%.") then
        C:fact(string.format("modules_in_block_to_quantize %s: one layer's module, read as its class", n))
      end
    end
    if seen.unknown then
      C:fact(string.format("modules_in_block_to_quantize %s: no class, the list is not read", seen.unknown))
    else
      for _, k in ipairs({"attention", "mlp", "shared_experts"}) do
        if not seen[k] then skip[k] = true end
      end
    end
  end
  if type(q.dynamic) == "table" then
    for _, pat in ipairs(util.sorted_keys(q.dynamic)) do -- the facts in one order every run
      if type(pat) == "string" and pat:sub(1, 2) == "-:" then
        C:fact(string.format("dynamic %s: a module vLLM leaves unquantized, not read: counted quantized", pat))
      end
    end
  end
end

--- Which weight classes (models.lua weight_class_params) a quantized
--- checkpoint stores in format wf: the linear layers (attention, dense MLP,
--- experts, shared experts) except those the method's skip list names (the
--- keys its vLLM from_config reads, each entry by its vLLM match: below;
--- bitsandbytes and "re:" entries by the last dotted component: "attn" for
--- attention, "mlp" for every MLP class, "shared_expert" for the shared
--- experts alone, another "expert" for the routed experts; routers, norms,
--- embeddings and vision modules are not linear classes here). The shared
--- experts take the checkpoint's quant_config as the dense MLP does (vLLM
--- DeepseekV2MoE / Llama4MoE / Qwen2MoeSparseMoeBlock: models.lua
--- weight_classes): quantized unless listed. Embeddings, norms and routers stay in the
--- model dtype, and lm_head too unless quantization_config.lm_head is true
--- (GPTQ's option). gpt-oss's mxfp4 lists its attention, router, embeddings
--- and head as not converted: its experts alone are MXFP4 (vLLM
--- vllm/model_executor/layers/quantization/mxfp4.py quantizes only the
--- fused MoE layers).
quantized_classes = function(C, a, wf, q)
  q = q or C:get("quantization_config")
  -- how vLLM matches a skip-list entry against a linear layer's prefix
  -- ("model.layers.0.mlp.down_proj"), by method:
  --   bitsandbytes  prefix: is_layer_skipped_bnb (bitsandbytes.py at 01f5395fdf04)
  --   awq           substring: awq_marlin.py at 2ab31a815160 (the CUDA path of a
  --                 4-bit AWQ checkpoint) is_layer_skipped(..., skip_with_substr=True),
  --                 linear and FusedMoE; awq.py's is_layer_skipped_awq,
  --                 any(module_name in prefix ...), the same (its commit not pinned here)
  --   modelopt      exact, then substring, then fnmatch: is_layer_excluded
  --                 (modelopt.py at c9a59901113c)
  --   fp8           exact: is_layer_skipped's prefix_full_match (fp8.py at
  --                 1436674bcb3f, utils/quant_utils.py at 01693a61cbed), a fused
  --                 qkv_proj / gate_up_proj skipped when its shards are listed
  --   compressed-tensors  exact or "re:": should_ignore_layer (compressed_tensors/
  --                 utils.py at aff237f9631e), the same shard rule
  -- so an entry naming one layer's attention or MLP block ("model.layers.0.mlp")
  -- keeps that layer's alone in the model dtype for the first three, and no
  -- layer for the exact two (no linear layer is named "model.layers.0.mlp");
  -- one layer's projections listed in full (q/k/v/o_proj, gate/up/down_proj)
  -- keep that layer's block in the dtype for all five
  local method = type(q.quant_method) == "string" and q.quant_method:lower()
                 or (q.quant_algo ~= nil and "modelopt") or ""
  local contains = ({bitsandbytes = true, awq = true, awq_marlin = true, modelopt = true})[method]
  local exact = ({fp8 = true, ["compressed-tensors"] = true})[method]
  local projections = {attention = {"q_proj", "k_proj", "v_proj", "o_proj"},
                       mlp = {"gate_proj", "up_proj", "down_proj"}}
  local skip, per_layer, listed = {}, {}, {attention = {}, mlp = {}}
  local keys = skip_list_keys(method, q)
  -- an entry naming no layer ("mlp", "self_attn", "model.layers.*.mlp") by the
  -- method's match against layer 0's linear layers (every layer alike), by
  -- the Llama / DeepSeek module names vLLM gives them: the shards q/k/v_proj,
  -- gate/up_proj for the exact and substring checks (is_layer_skipped's
  -- fused_mapping), the fused qkv_proj / gate_up_proj for ModelOpt's
  -- substring and fnmatch; a class all of whose layers match stays in the
  -- dtype, one some of whose match is counted quantized (a fact says so).
  -- bitsandbytes (a dotted component or prefix) and a method not named keep
  -- the last-component reading below; a "re:" entry too
  local se = (type(C.model_type) == "string" and C.model_type:find("^qwen")) and "mlp.shared_expert."
             or "mlp.shared_experts."
  local L = "model.layers.0."
  local names = {
    attention = {shards = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"},
                 fused = {"self_attn.qkv_proj", "self_attn.o_proj"}},
    mlp = {shards = {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"},
           fused = {"mlp.gate_up_proj", "mlp.down_proj"}},
    experts = {shards = {"mlp.experts"}, fused = {"mlp.experts"}},
    shared_experts = {shards = {se .. "gate_proj", se .. "up_proj", se .. "down_proj"},
                      fused = {se .. "gate_up_proj", se .. "down_proj"}},
  }
  local function bare_matches(e, k)
    local function any(list, f)
      local n = 0
      for _, m in ipairs(list) do if f(L .. m) then n = n + 1 end end
      return n, #list
    end
    if method == "awq" or method == "awq_marlin" then
      return any(names[k].shards, function(p) return p:find(e, 1, true) ~= nil end)
    elseif exact then
      return any(names[k].shards, function(p) return p == e end)
    end
    -- modelopt: exact on the shards (no bare entry names one: they carry
    -- "model.layers.0."), then substring, then fnmatch on the fused prefix
    local g = glob(e)
    return any(names[k].fused, function(p) return p:find(e, 1, true) ~= nil or p:match(g) ~= nil end)
  end
  for i = 1, 5 do -- keys holds at most five lists, with holes
    local l = keys[i]
    if type(l) == "table" then
      for _, name in ipairs(l) do
        if type(name) == "string" then
          -- bitsandbytes, a "re:" entry and a method not named above: the module
          -- is the last dotted component: "model.layers.*.mlp.router"
          -- names a router (not a linear class), "model.layers.*.self_attn" attention.
          -- A "re:" entry is a regular expression re.match'ed against the
          -- layer names (compressed-tensors, vLLM compressed_tensors/utils.py
          -- _find_first_match at aff237f9631e): its pattern less a trailing
          -- ".*" or "$" names the module the same way ("re:.*shared_expert.*")
          local pat = name:lower()
          local re = pat:sub(1, 3) == "re:"
          if re then
            pat = pat:sub(4)
            repeat
              local before = pat
              pat = pat:gsub("%$$", ""):gsub("%.%*$", "")
            until pat == before
          end
          -- one layer's module ("model.layers.0.mlp", unsloth's dynamic
          -- bnb-4bit; an AWQ list naming "model.layers.0.self_attn"): by the
          -- method's rule above. A dense model's whole attention or MLP is
          -- counted apart (unquantized_layers); a MoE layer's block, a
          -- projection not listed with its siblings, or a method whose rule is
          -- not read here is counted quantized (a fact says so)
          local idx, mod = pat:match("layers%.(%d+)%.([^%.]+)$")
          local pidx, pmod, proj = pat:match("layers%.(%d+)%.([^%.]+)%.([^%.]+)$")
          local deeper = idx == nil and pat:match("layers%.%d+%.")
          local last = pat:match("([^%.]+)$") or ""
          local k = mod and (mod == "mlp" and "mlp" or mod:find("attn") and "attention")
          local pk = pmod and (pmod == "mlp" and "mlp" or pmod:find("attn") and "attention")
          if re or not (contains or exact) then
            idx, deeper = nil, nil
          end
          local bare = not re and not pat:match("layers%.%d+%.") and method ~= "bitsandbytes"
                       and (contains or exact)
          if bare then
            local hit = false
            for _, c in ipairs({"attention", "mlp", "experts", "shared_experts"}) do
              local n, total = bare_matches(pat, c)
              if n == total then skip[c], hit = true, true
              elseif n > 0 then
                hit = true
                C:fact(string.format("%s: %s matches %d of %s's %d linear layers, counted in the "
                                     .. "quantized format", name, method, n, c, total))
              end
            end
            if not hit then
              C:fact(string.format("%s: %s's match names no linear layer here", name, method))
            end
            last = ""
          elseif idx and k and not a.moe and tonumber(idx) < a.layers and not exact then
            per_layer[k] = per_layer[k] or {}
            per_layer[k][tonumber(idx)] = true
            last = ""
          elseif idx and k and exact then
            C:fact(string.format("%s: %s matches a layer's name exactly, and no linear layer "
                                 .. "is named so: quantized", name, method))
            last = ""
          elseif deeper and pk and not a.moe and tonumber(pidx) < a.layers then
            listed[pk][tonumber(pidx)] = listed[pk][tonumber(pidx)] or {}
            listed[pk][tonumber(pidx)][proj] = name
            last = ""
          elseif idx or deeper then
            C:fact(string.format("%s: one layer's module, counted in the quantized format", name))
            last = ""
          end
          if last:find("attn") then skip.attention = true end
          if last:find("shared_expert", 1, true) then skip.shared_experts = true
          elseif last:find("expert") then skip.experts = true end
          if last:find("mlp") then skip.mlp, skip.experts, skip.shared_experts = true, true, true end
        end
      end
    end
  end
  for _, k in ipairs({"attention", "mlp"}) do
    for _, i in ipairs(util.sorted_keys(listed[k])) do
      local all = true
      for _, p in ipairs(projections[k]) do all = all and listed[k][i][p] ~= nil end
      if all then
        per_layer[k] = per_layer[k] or {}
        per_layer[k][i] = true
      else
        for _, p in ipairs(util.sorted_keys(listed[k][i])) do
          C:fact(string.format("%s: one projection of layer %d, counted in the quantized format",
                               listed[k][i][p], i))
        end
      end
    end
  end
  -- MXFP4 quantizes the fused MoE layers alone (above): a shared expert's
  -- linear layers stay in the model dtype as the attention's do
  if method == "mxfp4" and a.moe then
    skip.attention, skip.mlp, skip.shared_experts = true, true, true
  end
  if method == "gptq" or method == "gptq_marlin" then gptq_unlisted(C, q, skip) end
  local out = {}
  for _, k in ipairs({"attention", "mlp", "experts", "shared_experts"}) do
    if not skip[k] then out[k] = wf end
  end
  if q.lm_head == true then out.lm_head = wf end
  C:fact("quantized weight classes: " .. (next(out) and table.concat(util.sorted_keys(out), ", ")
                                          or "none"))
  local uq
  for _, k in ipairs({"attention", "mlp"}) do
    local n = 0
    for _ in pairs(per_layer[k] or {}) do n = n + 1 end
    if n > 0 and out[k] ~= nil then
      uq = uq or {}
      uq[k] = n
      C:fact(string.format("%s of %d layers in the model dtype (the skip list)", k, n))
    end
  end
  return out, uq
end

-- ---- the parameter estimate ---------------------------------------------------
--
-- Parameters from the config alone, summed per module as transformers builds
-- them (modeling_<family>.py of each family):
--   embeddings      vocab * hidden, plus the same again for lm_head unless tied
--   attention       q: hidden * heads * head_dim (x2 with Qwen3-Next's output
--                   gate), k and v: hidden * kv_heads * head_dim each,
--                   o: heads * head_dim * hidden; biases on q/k/v (Qwen2,
--                   attention_bias, Falcon bias) and o (attention_bias, Falcon
--                   bias); q_norm/k_norm head_dim each (Qwen3, Gemma 3, Qwen3-
--                   Next); one sink per head (gpt-oss)
--   MLA             (DeepSeek-V2/V3) q_a: hidden * q_lora + q_lora (norm),
--                   q_b: q_lora * heads * (nope + rope) (or hidden * heads *
--                   (nope + rope) without q_lora), kv_a: hidden * (kv_lora +
--                   rope) + kv_lora (norm), kv_b: kv_lora * heads * (nope +
--                   v_head_dim), o: heads * v_head_dim * hidden; DeepSeek-V3.2's
--                   indexer: wq_b q_lora * index_n_heads * index_head_dim, wk
--                   hidden * index_head_dim, weights_proj hidden *
--                   index_n_heads, k_norm 2 * index_head_dim
--   Gated DeltaNet  in_proj_qkvz hidden * (2 k_dim + 2 v_dim), in_proj_ba
--                   hidden * 2 v_heads, conv1d (2 k_dim + v_dim) * kernel,
--                   dt_bias and A_log v_heads each, norm v_head_dim, out_proj
--                   v_dim * hidden (modeling_qwen3_next.py)
--   Mamba           in_proj hidden * 2 inner, conv1d inner * d_conv (+ inner
--                   bias), x_proj inner * (dt_rank + 2 d_state), dt_proj
--                   dt_rank * inner + inner, A_log inner * d_state, D inner,
--                   out_proj inner * hidden, dt/b/c layernorms (modeling_jamba.py)
--   dense MLP       3 * hidden * intermediate (gated), 2 * hidden * 4 hidden
--                   for Falcon
--   MoE layer       router hidden * experts (+ experts for gpt-oss's bias and
--                   DeepSeek-V3's e_score_correction_bias), experts * 3 *
--                   hidden * expert_intermediate (+ experts * (2 expert_inter
--                   + hidden) biases in gpt-oss), shared experts: DeepSeek
--                   3 * hidden * n_shared * moe_inter, Qwen 3 * hidden *
--                   shared_expert_intermediate + hidden (gate), Llama 4 3 *
--                   hidden * intermediate
--   norms           2 * hidden per layer (4 for Gemma 2/3; 2 LayerNorms with
--                   bias for Falcon's new decoder, 1 for the old), final norm
-- Multi-token-prediction layers (DeepSeek num_nextn_predict_layers) and vision
-- towers are not counted: they are not part of the decoder that serves tokens.
-- Tested against the catalog's counts (tests/lua/hf_test.lua).

local function attention_params(C, a)
  local F, h, heads, kvh, hd = C.file, a.hidden, a.heads, a.kv_heads, a.head_dim
  if a.mla then
    local m = a.mla
    local qk = m.nope + m.rope
    local q = m.q_lora and (mul(F, h, m.q_lora) + m.q_lora + mul(F, m.q_lora, heads, qk))
              or mul(F, h, heads, qk)
    -- DeepSeek-V3.2's indexer (index_head_dim, index_n_heads): wq_b q_lora *
    -- index_n_heads * index_head_dim, wk hidden * index_head_dim,
    -- weights_proj hidden * index_n_heads, k_norm weight and bias (vllm-project/
    -- vllm deepseek_v2.py Indexer at 002d6073aa03), as the catalog's
    -- deepseek-v3.2 counts them
    local idx = 0
    if m.index and m.index_heads and m.q_lora then
      idx = mul(F, m.q_lora, m.index_heads, m.index) + mul(F, h, m.index) + mul(F, h, m.index_heads)
            + 2 * m.index
    end
    return q + mul(F, h, m.kv_lora + m.rope) + m.kv_lora + mul(F, m.kv_lora, heads, m.nope + m.v)
           + mul(F, heads, m.v, h) + idx
  end
  local qd, kd = heads * hd, kvh * hd
  local n = mul(F, h, qd, C.fam.gated_q and 2 or 1) + 2 * mul(F, h, kd) + mul(F, qd, h)
  if a.qkv_bias then n = n + qd * (C.fam.gated_q and 2 or 1) + 2 * kd end
  if a.o_bias then n = n + h end
  if C.fam.qk_norm then n = n + 2 * hd end
  if C.fam.sinks then n = n + heads end
  return n
end

local function linear_params(C, a)
  local F, h = C.file, a.hidden
  if a.linear then
    local l = a.linear
    local kdim, vdim = l.nk * l.dk, l.nv * l.dv
    return mul(F, h, 2 * kdim + 2 * vdim) + mul(F, h, 2 * l.nv) + mul(F, 2 * kdim + vdim, l.kernel)
           + 2 * l.nv + l.dv + mul(F, vdim, h)
  end
  if a.mamba2 then
    -- NemotronHMamba2Mixer: in_proj to 2 inner + 2 groups x state + heads,
    -- a depthwise conv over inner + 2 groups x state, dt_bias, A_log, D,
    -- a gated RMSNorm over inner, out_proj
    local m = a.mamba2
    local inner, cd = m.heads * m.head_dim, m.heads * m.head_dim + 2 * m.groups * m.state
    local n = mul(F, h, 2 * inner + 2 * m.groups * m.state + m.heads) + mul(F, cd, m.conv_kernel)
              + 3 * m.heads + inner + mul(F, inner, h)
    if a.conv_bias then n = n + cd end
    if a.proj_bias then n = n + 2 * inner + 2 * m.groups * m.state + m.heads + h end
    return n
  end
  local m = a.mamba
  local rank = a.dt_rank
  local n = mul(F, h, 2 * m.inner) + mul(F, m.inner, m.d_conv)
            + mul(F, m.inner, rank + 2 * m.d_state)
            + mul(F, rank, m.inner) + m.inner + mul(F, m.inner, m.d_state) + m.inner
            + mul(F, m.inner, h)
  -- Jamba's dt, B and C layernorms carry weights; Falcon-Mamba's do not
  if C.fam.hybrid == "mamba" then n = n + rank + 2 * m.d_state end
  if a.conv_bias then n = n + m.inner end
  if a.proj_bias then n = n + 2 * m.inner + h end
  return n
end

--- Parameters of the whole decoder, and those of the routed experts a token
--- does not use (total - inactive = active).
local function estimate(C, a)
  local F, h = C.file, a.hidden
  local total = mul(F, a.vocab, h) * (a.tie and 1 or 2)
  local inactive = 0
  for i = 0, a.layers - 1 do
    local kind = a.kinds[i + 1]
    local n = kind == "state" and linear_params(C, a) or attention_params(C, a)
    if C.fam.hybrid == "mamba2" then
      -- one mixer a block: Mamba2, attention, or an MLP (up and down, relu2)
      n = kind == "state" and linear_params(C, a) or kind == "full" and attention_params(C, a)
          or 2 * mul(F, h, a.intermediate)
    end
    local norms = (C.fam.norms or 2) * h
    if C.fam.falcon then norms = (a.new_arch and 2 or 1) * 2 * h end
    n = n + norms
    if C.fam.hybrid == "mamba2" or C.fam.hybrid == "mamba1" then
      -- no other FFN in the block
    elseif a.moe and a.moe.is_moe(i) then
      local e = a.moe
      local per_expert = 3 * mul(F, h, e.inter) + (C.fam.expert_bias and 2 * e.inter + h or 0)
      n = n + mul(F, h, e.experts) + (C.fam.router_bias and e.experts or 0)
            + mul(F, per_expert, e.experts) + e.shared
      inactive = inactive + mul(F, per_expert, e.experts - e.active)
    elseif C.fam.falcon then
      n = n + 2 * mul(F, h, a.intermediate) + (a.o_bias and a.intermediate + h or 0)
    else
      n = n + 3 * mul(F, h, a.dense_intermediate)
    end
    total = total + n
    if total < 0 then util.raise("%s: parameter count overflows 64 bits", F) end
  end
  total = total + (C.fam.falcon and 2 * h or h)
  return total, inactive
end

-- ---- checkpoint files ---------------------------------------------------------

-- safetensors dtypes and their bits per element (huggingface/safetensors
-- safetensors/src/tensor.rs Dtype); integer dtypes only hold packed or
-- auxiliary tensors of a quantized checkpoint.
local st_bits = {
  BOOL = 8, U8 = 8, I8 = 8, F8_E5M2 = 8, F8_E4M3 = 8, F8_E8M0 = 8, I16 = 16, U16 = 16,
  F16 = 16, BF16 = 16, I32 = 32, U32 = 32, F32 = 32, F64 = 64, I64 = 64, U64 = 64,
  F4 = 4, F6_E2M3 = 6, F6_E3M2 = 6,
}
local st_int = {BOOL = true, U8 = true, I8 = true, I16 = true, U16 = true, I32 = true,
                U32 = true, I64 = true, U64 = true}
local st_float = {BF16 = "bf16", F16 = "fp16", F32 = "fp32"}

--- Sum one safetensors file's tensors into acc: elements, bytes, packed.
--- The header is read as a stream first (json.safetensors_scan keeps only
--- the sums: memory follows the tensors' count, not the header's size); a
--- header it does not take as plainly well formed is read whole and checked
--- here, tensor by tensor, for the exact error.
local function add_header(path, acc)
  local sums, sdata = json.safetensors_scan(path, st_bits)
  if sums == nil then return nil, sdata end
  if sums then
    if sums.tensors == 0 then
      util.raise("%s: the safetensors header lists no tensors (expected the checkpoint's weights)", path)
    end
    acc.elements = acc.elements + sums.elements
    acc.bytes = acc.bytes + sums.bytes
    for dtype, b in pairs(sums.by_dtype) do
      acc.by_dtype[dtype] = (acc.by_dtype[dtype] or 0) + b
      if st_int[dtype] then acc.packed = true end
    end
    acc.files = acc.files + 1
    return true
  end
  local header, data = json.safetensors_header(path)
  if header == nil then return nil, data end
  for _, name in ipairs(util.sorted_keys(header)) do
    local t = header[name]
    if name == "__metadata__" then goto continue end
    if type(t) ~= "table" then
      util.raise("%s: tensor '%s' must be an object, got %s", path, name, show(t))
    end
    local bits = st_bits[t.dtype]
    if bits == nil then
      util.raise("%s: tensor '%s' has unknown dtype %s", path, name, show(t.dtype))
    end
    local count = 1
    if type(t.shape) ~= "table" then
      util.raise("%s: tensor '%s' field 'shape' must be an array, got %s", path, name,
                 show(t.shape))
    end
    for _, d in ipairs(t.shape) do
      if math.type(d) ~= "integer" or d < 0 then
        util.raise("%s: tensor '%s' has a bad dimension %s", path, name, show(d))
      end
      count = mul(path, count, d)
    end
    local off = t.data_offsets
    if type(off) ~= "table" or #off ~= 2 or math.type(off[1]) ~= "integer" or
       math.type(off[2]) ~= "integer" or off[1] < 0 or off[2] < off[1] or off[2] > data then
      util.raise("%s: tensor '%s' field 'data_offsets' must be [begin, end] within the %d data " ..
                 "bytes, got %s", path, name, data,
                 type(off) == "table" and ("[" .. table.concat(off, ", ") .. "]") or show(off))
    end
    local want = (mul(path, count, bits) + 7) // 8
    if off[2] - off[1] ~= want then
      util.raise("%s: tensor '%s' spans %d bytes, its shape and dtype %s need %d", path, name,
                 off[2] - off[1], t.dtype, want)
    end
    acc.elements = acc.elements + count
    acc.bytes = acc.bytes + want
    acc.by_dtype[t.dtype] = (acc.by_dtype[t.dtype] or 0) + want
    if st_int[t.dtype] then acc.packed = true end
    ::continue::
  end
  if next(header) == nil or (next(header) == "__metadata__" and next(header, "__metadata__") == nil) then
    util.raise("%s: the safetensors header lists no tensors (expected the checkpoint's weights)", path)
  end
  acc.files = acc.files + 1
  return true
end

--- What the checkpoint files say: {index = {...}|nil, headers = acc|nil}
local function read_files(dir, C)
  local out = {}
  local ipath = dir .. "/model.safetensors.index.json"
  local index = read_json(ipath)
  local shards
  if index then
    local meta = index.metadata
    if type(meta) ~= "table" then util.raise("%s: missing field 'metadata'", ipath) end
    local total = meta.total_size
    if total == nil or total == null then
      util.raise("%s: missing field 'metadata.total_size'", ipath)
    end
    if math.type(total) == "float" then total = math.tointeger(total) or total end
    if math.type(total) ~= "integer" or total < 0 then
      util.raise("%s: field 'metadata.total_size' must be a non-negative integer, got %s", ipath,
                 show(total))
    end
    local params = meta.total_parameters
    if params ~= nil and (math.type(params) ~= "integer" or params < 1) then
      util.raise("%s: field 'metadata.total_parameters' must be a positive integer, got %s", ipath,
                 show(params))
    end
    local seen = {}
    shards = {}
    if type(index.weight_map) == "table" then
      for _, k in ipairs(util.sorted_keys(index.weight_map)) do
        local f = index.weight_map[k]
        if type(f) ~= "string" then
          util.raise("%s: field 'weight_map.%s' must be a file name, got %s", ipath, k, show(f))
        end
        -- a shard is a file of this directory (or below it): an absolute path
        -- or a '..' would read files the model does not own
        if f == "" or f:sub(1, 1) == "/" or ("/" .. f .. "/"):find("/%.%./") or f:find("%z") then
          util.raise("%s: field 'weight_map.%s' must name a file inside the model directory, got %s",
                     ipath, util.escape(k), show(util.escape(f)))
        end
        if not seen[f] then seen[f] = true shards[#shards + 1] = f end
      end
      table.sort(shards)
    end
    out.index = {path = ipath, total = total, params = params, shards = shards,
                 head = type(index.weight_map) == "table" and index.weight_map["lm_head.weight"] ~= nil}
  else
    shards = json.safetensors_files(dir) or {}
  end
  if #shards > 0 then
    local acc = {elements = 0, bytes = 0, files = 0, by_dtype = {}, packed = false, names = shards}
    for _, s in ipairs(shards) do
      local ok, err = add_header(dir .. "/" .. s, acc)
      if not ok then
        if not out.index then util.raise("%s", err) end
        out.missing = s
        acc = nil
        break
      end
    end
    out.headers = acc
  end
  return out
end

-- ---- from_hf ------------------------------------------------------------------

function Cfg:fact(s) self.facts[#self.facts + 1] = s end

local function split_path(path)
  if path:match("%.json$") then
    return path:match("^(.*)/[^/]*$") or ".", path
  end
  local dir = path:gsub("/+$", "")
  if dir == "" then dir = "/" end
  return dir, dir .. "/config.json"
end

--- The config reader of path (a directory or a config.json), and the
--- directory the checkpoint files sit in.
local encoder_only = {"an encoder-only model (no KV cache in vLLM)",
                      "describe it with layer_kinds = {{kind = \"none\"}} (catalog "
                      .. "bge-large-en-v1.5 is one)"}
local encoder_decoder = {"an encoder-decoder model",
                         "describe its decoder with full and cross layer kinds (catalog "
                         .. "whisper-large-v3 is one)"}
not_decoders = {bert = encoder_only, roberta = encoder_only, ["xlm-roberta"] = encoder_only,
                distilbert = encoder_only, electra = encoder_only, nomic_bert = encoder_only,
                modernbert = encoder_only, t5 = encoder_decoder,
                mt5 = encoder_decoder, bart = encoder_decoder, mbart = encoder_decoder}
local function open_config(path)
  local dir, file = split_path(path)
  local root, err = read_json(file)
  if not root then util.raise("cannot open '%s': %s", file, (err:gsub("^.-: ", ""))) end
  -- where the language model's fields live: text_config of a multimodal
  -- wrapper first, then the top level
  local mt = root.model_type
  local scopes = {{t = root, prefix = ""}}
  local text = root.text_config
  if text ~= nil and text ~= null then
    if type(text) ~= "table" then
      util.raise("%s: field 'text_config' must be an object, got %s", file, show(text))
    end
    table.insert(scopes, 1, {t = text, prefix = "text_config."})
    local outer = mt
    mt = (type(text.model_type) == "string" and text.model_type) or wrappers[mt] or mt
    if outer == "llava" and mt == "llama" then mt = "llava_llama" end
  end
  if mt ~= nil and type(mt) ~= "string" then
    util.raise("%s: field 'model_type' must be a string, got %s", file, show(mt))
  end
  -- encoder-only and encoder-decoder models are no decoders: read as one they
  -- would get a KV cache vLLM never allocates (EncoderOnlyAttentionSpec: none)
  -- or miss the cross-attention cache (CrossAttentionSpec)
  local other = not_decoders[mt]
  if other then
    util.raise("%s: model_type %s is %s; from_hf reads decoder-only models: %s", file, show(mt),
               other[1], other[2])
  end
  local fam = families[mt] or {tie = false, name = mt, unknown = true}
  local C = setmetatable({file = file, root = root, scopes = scopes, fam = fam, model_type = mt,
                          facts = {}}, Cfg)
  if fam.unknown and mt ~= "whisper" then -- Whisper: from_hf reads it apart
    for _, f in ipairs{"num_hidden_layers", "hidden_size", "num_attention_heads"} do
      if not C:int(f) then
        C:raise("unknown model_type %s and no field '%s' to read it by (known: %s)",
                mt and show(mt) or "(none)", C:label(f),
                table.concat(util.sorted_keys(families), ", "))
      end
    end
  end
  return C, dir
end

--- Layers, widths, heads (vLLM get_total_num_kv_heads, get_head_size),
--- vocabulary, context and dtype into a.
local function read_shape(C, a)
  local fam, w = C.fam
  a.layers, w = C:int("num_hidden_layers", 1, true)
  -- before any per-layer work: 1e12 layers must fail now, not after minutes
  if a.layers > core.max_layers then
    C:raise("field '%s' must be at most %d (the layers kvplan plans), got %d", w, core.max_layers,
            a.layers)
  end
  C:fact("layers = " .. w)
  a.hidden, w = C:int("hidden_size", 1, true)
  C:fact("hidden = " .. w)
  C.hidden = a.hidden
  if fam.hybrid == "mamba1" then
    -- no attention: no heads, nothing cached per token
    a.heads, a.kv_heads, a.head_dim = 0, 0, 0
    C:fact("heads = 0 (Mamba: no attention layers)")
  else
    a.heads, w = C:int("num_attention_heads", 1, true)
    C:fact("heads = " .. w)
    local old_falcon = fam.falcon and C:bool("new_decoder_architecture") ~= true
    if old_falcon and C:bool("multi_query") == true then
      a.kv_heads = 1
      C:fact("kv_heads = 1 (multi_query true, old decoder)")
    else
      local kv, kw = C:int({"n_head_kv", "num_kv_heads", "num_key_value_heads",
                            "multi_query_group_num"})
      a.kv_heads = kv or a.heads
      C:fact("kv_heads = " .. (kw or "num_attention_heads (no num_key_value_heads: MHA)"))
    end
    local lora = C:int("kv_lora_rank") -- vLLM is_deepseek_mla: kv_lora_rank set
    if lora then
      local rope, nope = C:int("qk_rope_head_dim", 0, true), C:int("qk_nope_head_dim", 0, true)
      local v = C:int("v_head_dim", 1, true)
      a.mla = {kv_lora = lora, rope = rope, nope = nope, v = v, q_lora = C:int("q_lora_rank"),
               index = C:int("index_head_dim"), index_heads = C:int("index_n_heads"),
               index_topk = C:int("index_topk")}
      a.head_dim, a.head_dim_v = nope + rope, v
      C:fact(string.format("MLA: kv_lora_rank %d + qk_rope_head_dim %d cached per token and layer",
                           lora, rope))
      if a.mla.index then
        -- vLLM DeepseekV32IndexerCache: the indexer's keys, fp8 with an fp32
        -- scale per 128, cached beside the latent on every layer
        C:fact(string.format("sparse-attention indexer: index_head_dim %d keys cached per token "
                             .. "and layer", a.mla.index))
        if a.mla.index_heads and a.mla.index_topk then
          -- the step time's: each query scores every key with index_n_heads
          -- heads, MLA attends to the top index_topk (roofline.c)
          C:fact(string.format("sparse attention: index_n_heads %d, index_topk %d keys a query",
                               a.mla.index_heads, a.mla.index_topk))
        end
      end
    else
      local hd, hw = C:int("head_dim")
      if not hd then
        if a.hidden % a.heads ~= 0 then
          C:raise("no field 'head_dim' and hidden_size %d is not a multiple of " ..
                  "num_attention_heads %d", a.hidden, a.heads)
        end
        hd, hw = a.hidden // a.heads, "hidden_size / num_attention_heads (no head_dim)"
      end
      a.head_dim = hd
      C:fact("head_dim = " .. hw)
    end
  end
  a.vocab, w = C:int({"vocab_size", "padded_vocab_size"}, 1, true)
  C:fact("vocab = " .. w)
  local tie, tw = C:bool("tie_word_embeddings")
  if tie == nil then
    tie, tw = fam.tie, string.format("%s's default %s (no tie_word_embeddings)",
                                     fam.name or "an unknown model_type", tostring(fam.tie))
  end
  a.tie = tie
  C:fact("tie_embeddings = " .. tw)
  a.ctx, w = C:int({"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"})
  if a.ctx then C:fact("max_context = " .. w) end
  if not a.ctx and fam.hybrid == "mamba1" then
    -- vLLM's _get_and_verify_max_len assumes 2048 when no length key is given
    a.ctx = 2048
    C:fact("max_context = 2048 (no length key: vLLM assumes 2048)")
  end
  local dt, dw
  if fam.root_dtype and type(C.root.torch_dtype) == "string" then
    dt, dw = C.root.torch_dtype, "torch_dtype"
  else
    dt, dw = C:str("torch_dtype")
    if not dt then dt, dw = C:str("dtype") end
  end
  if dt then
    a.dtype, a.dtype_from, a.dtype_raw = dtype_names[dt:lower()], dw, dt
    if not a.dtype then
      C:raise("field '%s' must be one of bfloat16, float16, float32, got %s", dw, show(dt))
    end
  end
  a.dtype_bytes = dtype_bytes[a.dtype or "bf16"]
end

--- The layer_kinds pattern (nil: full attention everywhere).
local function read_kinds(C, a)
  a.window = C:int("sliding_window")
  a.chunk = C:int("attention_chunk_size")
  local how
  a.kinds, how = kinds_of(C, a)
  -- a window at least as long as the context never binds (vLLM charges a
  -- sliding layer min(W - 1 + batched, max_model_len) tokens)
  if a.window and a.ctx and a.window >= a.ctx then
    for i, k in ipairs(a.kinds) do if k == "sliding" then a.kinds[i] = "full" end end
    how = how .. " (window " .. a.window .. " >= max_position_embeddings " .. a.ctx .. ": full)"
  end
  if a.mla then
    C:fact("layer kinds: MLA on every layer (kv_lora_rank set)")
    return nil
  end
  C:fact("layer kinds: " .. how)
  return pattern_of(C, a, a.kinds)
end

--- Which layers are MoE, and the shared experts, by family.
local function moe_of(C, a, experts)
  local fam, F, h = C.fam, C.file, a.hidden
  local active = C:int({"num_experts_per_tok", "experts_per_token"}, 1, true)
  if active > experts then
    C:raise("field 'num_experts_per_tok' (%d) exceeds the %d experts", active, experts)
  end
  local e = {experts = experts, active = active, shared = 0, shared_inter = 0,
             inter = C:int("moe_intermediate_size") or a.intermediate}
  if fam.moe == "deepseek" then
    local first, freq = C:int("first_k_dense_replace", 0) or 0, C:int("moe_layer_freq") or 1
    local ns = C:int("n_shared_experts", 0) or 0
    e.shared, e.n_shared, e.shared_inter = 3 * mul(F, h, ns, e.inter), ns, ns * e.inter
    e.is_moe = function(i) return i >= first and i % freq == 0 end
  elseif fam.moe == "qwen" then
    local step, only = C:int("decoder_sparse_step") or 1, {}
    for _, i in ipairs(C:list("mlp_only_layers") or {}) do only[i] = true end
    local si = C:int("shared_expert_intermediate_size", 0) or 0
    if si > 0 then e.shared, e.n_shared, e.shared_inter = 3 * mul(F, h, si) + h, 1, si end -- + shared_expert_gate
    e.is_moe = function(i) return not only[i] and (i + 1) % step == 0 end
  elseif fam.moe == "jamba" then
    local period = C:int("expert_layer_period", 1, true)
    local offset = C:int("expert_layer_offset", 0, true)
    e.is_moe = function(i) return i % period == offset end
  elseif fam.moe == "llama4" then
    local step, set, listed = C:int("interleave_moe_layer_step", 1, true), C:list("moe_layers"), {}
    for _, i in ipairs(set or {}) do listed[i] = true end
    e.shared, e.n_shared, e.shared_inter = 3 * mul(F, h, a.intermediate), 1, a.intermediate
    e.is_moe = function(i) if set then return listed[i] == true end return (i + 1) % step == 0 end
  else
    e.is_moe = function() return true end
  end
  C:fact(string.format("MoE: %d experts, %d active, expert FFN %d", experts, active, e.inter))
  return e
end

--- FFN widths, biases and experts into a.
local function read_ffn(C, a)
  local fam = C.fam
  local inter, iw = C:int({"intermediate_size", "ffn_hidden_size", "n_inner"})
  if fam.falcon then
    -- FalconConfig: ffn_hidden_size defaults to 4 * hidden_size; `bias`
    -- puts biases on every linear layer
    if not inter then inter, iw = 4 * a.hidden, "4 * hidden_size (FalconConfig default)" end
    a.new_arch = C:bool("new_decoder_architecture") == true
    a.o_bias = C:bool("bias") == true
    a.qkv_bias = a.o_bias
  else
    if not inter then C:raise("missing field '%s'", C:label("intermediate_size")) end
    local ab = C:bool("attention_bias") == true
    a.qkv_bias, a.o_bias = ab or fam.qkv_bias == true, ab
  end
  a.intermediate, a.dense_intermediate = inter, inter
  C:fact("intermediate = " .. iw)
  if fam.moe == "llama4" then a.dense_intermediate = C:int("intermediate_size_mlp") or inter end
  if fam.hybrid == "mamba1" then
    local rank, rw = C:int("time_step_rank")
    a.dt_rank = rank or (a.hidden + 15) // 16 -- MambaConfig "auto"
    a.conv_bias = C:bool("use_conv_bias") ~= false
    a.proj_bias = C:bool("use_bias") == true
    C:fact("dt rank = " .. (rw or "ceil(hidden_size / 16) (time_step_rank auto)"))
  end
  if fam.hybrid == "mamba2" then
    a.conv_bias = C:bool("use_conv_bias") ~= false
    a.proj_bias = C:bool("use_bias") == true
    C:fact(string.format("Mamba2 conv bias %s (use_conv_bias), projection bias %s (use_bias)",
                         tostring(a.conv_bias), tostring(a.proj_bias)))
  end
  if fam.hybrid == "mamba" then
    a.dt_rank = C:int("mamba_dt_rank") or (a.hidden + 15) // 16 -- JambaConfig "auto"
    a.conv_bias = C:bool("mamba_conv_bias") ~= false
    a.proj_bias = C:bool("mamba_proj_bias") == true
  end
  local experts = C:int({"num_local_experts", "num_experts", "n_routed_experts"}, 0)
  if experts == nil and fam.moe ~= nil then
    -- a mixture-of-experts family without its experts count: the layers'
    -- experts cannot be counted (a gpt_oss config without num_local_experts
    -- failed later as a Lua arithmetic error, naming no file)
    local want = ({qwen = "num_experts", jamba = "num_experts", deepseek = "n_routed_experts"})[fam.moe]
                 or "num_local_experts"
    C:raise("missing field '%s' (model_type %s is a mixture of experts: the count of experts a layer)",
            C:label(want), fam.name)
  end
  if experts and experts > 1 then
    a.moe = moe_of(C, a, experts)
    local dense = 0
    for i = 0, a.layers - 1 do if not a.moe.is_moe(i) then dense = dense + 1 end end
    if dense > 0 then a.dense_layers = dense end
  end
end

--- Parameters and weight bytes from the files beside the config when they
--- tell (index or headers), else the estimate. Fills a.params, a.active,
--- a.weight_bytes, a.weight_source, a.notes (and a.dtype from the headers).
-- ---- vision towers ---------------------------------------------------------
-- vision_config of the families whose tower kvplan models (families[..].vision),
-- as vLLM builds it (vllm/model_executor/models/qwen2_5_vl.py
-- Qwen2_5_VisionTransformer, qwen2_vl.py Qwen2VisionTransformer):
--   qwen2_5_vl  hidden_size, intermediate_size (gated SiLU MLP, RMSNorm),
--               depth, num_heads, patch_size, temporal_patch_size,
--               in_channels / in_chans, spatial_merge_size, out_hidden_size
--   qwen2_vl    embed_dim, mlp_ratio x embed_dim (fc1, QuickGELU, fc2;
--               LayerNorm), depth, num_heads, patch_size, temporal_patch_size,
--               in_chans, spatial_merge_size, hidden_size (the output)
--   llava       a CLIP tower (vllm/model_executor/models/clip.py; CLIPVisionConfig
--               defaults: hidden_size 768, intermediate_size 3072,
--               num_hidden_layers 12, num_attention_heads 12, image_size 224,
--               patch_size 32): a class token and a position per patch,
--               pre- and post-LayerNorm, layers of 2 LayerNorms, q/k/v/o with
--               biases and fc1/fc2 with biases; the projector
--               (LlavaMultiModalProjector) Linear(hidden, text hidden), GELU,
--               Linear(text hidden, text hidden), with biases; an image is
--               (image_size / patch_size)^2 tokens, the class token dropped
--               (vision_feature_select_strategy "default"; "full", which keeps
--               it, is counted as "default": one token an image fewer).
--               vLLM builds the layers up to vision_feature_layer only (-2:
--               all but the last); the parameters here count the checkpoint
-- Parameters from those shapes: a bias-free patch embedding, per block two
-- norms, qkv and proj with biases, the MLP with biases; the merger's norm,
-- Linear(merge^2 x hidden, merge^2 x hidden), Linear(.., out) with biases.
-- max_pixels: preprocessor_config.json beside config.json (max_pixels, or
-- size.longest_edge), else 12845056, the value of the released Qwen2-VL and
-- Qwen2.5-VL preprocessor configs (recorded as an assumption).
local function read_vision(C, a, dir)
  local vc = C.root.vision_config
  if vc == nil or vc == null then return end
  if type(vc) ~= "table" or (next(vc) ~= nil and vc[1] ~= nil) then
    C:raise("field 'vision_config' must be an object, got %s",
            type(vc) == "table" and "an array" or show(vc))
  end
  local kind = C.fam.vision
  if not kind then
    C:fact("vision_config present: the tower of model_type " .. show(C.model_type) ..
           " is not modelled (its weights count as 'other', no encoder profiling)")
    return
  end
  local function int(name, default, alias)
    local v, where = vc[name], "vision_config." .. name
    if v == nil and alias then v, where = vc[alias], "vision_config." .. alias end
    if v == nil or v == null then
      if default == nil then C:raise("missing field 'vision_config.%s'", name) end
      return default
    end
    local i = math.type(v) == "integer" and v or (math.type(v) == "float" and math.tointeger(v))
    if not i or i < 1 then C:raise("field '%s' must be a positive integer, got %s", where, show(v)) end
    return i
  end
  -- both families take videos through the same tower (their processors'
  -- videos: as many tokens as the largest image)
  if kind == "llava" then
    local d = {hidden_size = 768, intermediate_size = 3072, num_hidden_layers = 12,
               num_attention_heads = 12, image_size = 224, patch_size = 32}
    local function cint(name) return int(name, d[name]) end
    local H, I, L = cint("hidden_size"), cint("intermediate_size"), cint("num_hidden_layers")
    local p, size = cint("patch_size"), cint("image_size")
    local O = a.hidden
    local grid = size // p
    local v = {model_type = "clip", hidden = H, intermediate = I, gated = false, layers = L,
               heads = cint("num_attention_heads"), patch = p, image_size = size, merge = 1,
               class_token = true, in_channels = int("num_channels", 3), out_hidden = O,
               proj_hidden = O}
    v.params = H + mul(C.file, 3 * p * p, H) + mul(C.file, grid * grid + 1, H) + 4 * H
               + mul(C.file, L, 4 * H + 4 * (mul(C.file, H, H) + H) + 2 * mul(C.file, H, I) + I + H)
               + mul(C.file, H, O) + O + mul(C.file, O, O) + O
    C:fact(string.format("vision = vision_config (a CLIP tower of %d layers of %d, MLP %d, " ..
                         "%d x %d pixels in patches of %d; LlavaMultiModalProjector to %d; " ..
                         "%d parameters from the shapes, CLIPVisionConfig defaults for absent fields)",
                         L, H, I, size, size, p, O, v.params))
    a.vision = v
    return
  end
  local v = {model_type = kind, video = true}
  if kind == "qwen2_5_vl" then
    v.hidden, v.intermediate, v.gated = int("hidden_size"), int("intermediate_size"), true
    v.out_hidden = int("out_hidden_size")
    v.in_channels = int("in_channels", 3, "in_chans")
  else
    v.hidden = int("embed_dim")
    v.intermediate, v.gated = v.hidden * int("mlp_ratio", 4), false
    v.out_hidden = int("hidden_size")
    v.in_channels = int("in_chans", 3, "in_channels")
  end
  v.layers, v.heads, v.patch = int("depth"), int("num_heads"), int("patch_size", 14)
  v.temporal_patch, v.merge = int("temporal_patch_size", 2), int("spatial_merge_size", 2)
  local H, I, m2 = v.hidden, v.intermediate, v.merge * v.merge
  v.proj_hidden = m2 * H
  local norm = kind == "qwen2_5_vl" and H or 2 * H -- RMSNorm weight; LayerNorm weight and bias
  local mlp = v.gated and (2 * (mul(C.file, H, I) + I) + mul(C.file, I, H) + H)
              or (mul(C.file, H, I) + I + mul(C.file, I, H) + H)
  local block = 2 * norm + mul(C.file, H, 3 * H) + 3 * H + mul(C.file, H, H) + H + mlp
  v.params = mul(C.file, v.in_channels * v.temporal_patch * v.patch * v.patch, H)
             + mul(C.file, block, v.layers) + norm + mul(C.file, m2 * H, m2 * H) + m2 * H
             + mul(C.file, m2 * H, v.out_hidden) + v.out_hidden
  local pp = read_json(dir .. "/preprocessor_config.json")
  local mp = pp and (pp.max_pixels or (type(pp.size) == "table" and pp.size.longest_edge))
  if mp ~= nil then
    if math.type(mp) ~= "integer" or mp < 1 then
      C:raise("preprocessor_config.json: field 'max_pixels' must be a positive integer, got %s",
              show(mp))
    end
    v.max_pixels = mp
    C:fact("vision max_pixels = preprocessor_config.json")
  else
    v.max_pixels = 12845056
    C:fact("vision max_pixels = 12845056 (no preprocessor_config.json: the released " ..
           "Qwen2/2.5-VL value assumed)")
  end
  C:fact(string.format("vision = vision_config (%s tower: %d blocks of %d, MLP %d, %d parameters " ..
                       "from the shapes)", kind, v.layers, H, I, v.params))
  a.vision = v
end

local function read_weights(C, a, dir)
  local params, inactive = estimate(C, a)
  if a.vision then params = params + a.vision.params end
  local files = read_files(dir, C)
  local quantized = C:get("quantization_config") ~= nil
  local h, ix, counted = files.headers, files.index, nil
  local notes = {}
  -- a bitsandbytes checkpoint's files are not what the engine holds: vLLM
  -- dequantizes double-quantized absmax at load from 0.9.2 (engines.lua),
  -- so its bytes come from the scheme by release (deploy.lua bnb_rule)
  local q = C:get("quantization_config")
  local bnb = type(q) == "table" and type(q.quant_method) == "string"
              and q.quant_method:lower() == "bitsandbytes"
  if bnb and (h or ix) then
    notes[#notes + 1] = string.format("bitsandbytes checkpoint: its files hold %d bytes; the " ..
                                      "weights are counted from the scheme as the engine loads them",
                                      h and h.bytes or ix.total)
    h, ix = nil, nil
  end
  if h then
    local names = #h.names == 1 and h.names[1] or (#h.names .. " safetensors files")
    a.weight_bytes, a.weight_source = h.bytes, "sum of tensor spans in " .. names
    if quantized or h.packed then
      notes[#notes + 1] = "quantized checkpoint: the element counts of packed tensors are not " ..
                          "parameter counts, so params are the config estimate"
    else
      counted = h.elements
      C:fact("params = sum of tensor elements in " .. names)
    end
    if not a.dtype then -- the float dtype holding the most bytes
      local most = -1
      for _, d in ipairs(util.sorted_keys(h.by_dtype)) do
        if st_float[d] and h.by_dtype[d] > most then
          a.dtype, a.dtype_from, most = st_float[d], "the dtype of most bytes in " .. names,
                                        h.by_dtype[d]
        end
      end
    end
    if ix and ix.total ~= h.bytes then
      notes[#notes + 1] = string.format("model.safetensors.index.json total_size %d differs " ..
                                        "from the headers' %d bytes", ix.total, h.bytes)
    end
  elseif ix then
    a.weight_bytes, a.weight_source = ix.total, "model.safetensors.index.json metadata.total_size"
    local per = dtype_bytes[a.dtype or ""]
    if ix.params then
      counted = ix.params
      C:fact("params = model.safetensors.index.json metadata.total_parameters")
    elseif not quantized and per and ix.total % per == 0 then
      counted = ix.total // per
      C:fact(string.format("params = model.safetensors.index.json metadata.total_size / %d (%s)",
                           per, a.dtype_raw))
    end
    if files.missing then
      notes[#notes + 1] = "shard " .. files.missing .. " absent: sizes from the index"
    end
  end
  -- A tied model's stored head is not loaded: vLLM makes lm_head the input
  -- embedding and its loader skips the checkpoint's 'lm_head.' tensors
  -- (AutoWeightsLoader(skip_prefixes=["lm_head."]) when tie_word_embeddings:
  -- vllm/model_executor/models/falcon.py FalconForCausalLM.load_weights at
  -- 00620f91ea18; the models built on AutoWeightsLoader do the same). The
  -- files' count and bytes then hold a vocab x hidden matrix the engine never
  -- holds: taken off (its bytes in the model dtype). Seen through the index's
  -- weight_map; a lone model.safetensors is read by sums, without names
  if a.tie and ix and ix.head and (counted or a.weight_bytes) then
    local head = mul(C.file, a.vocab, a.hidden)
    local per = dtype_bytes[a.dtype or ""]
    if counted then counted = counted - head end
    if a.weight_bytes and per then
      a.weight_bytes = a.weight_bytes - head * per
      a.weight_source = a.weight_source .. " less the stored lm_head.weight vLLM skips (tied)"
    end
    C:fact(string.format("a stored lm_head.weight (%d parameters) not counted: tied, vLLM skips " ..
                         "'lm_head.'", head))
  end
  if not counted then
    C:fact("params = estimate from " .. basename(C.file) .. (C.fam.unknown and
           " (unknown model_type: counted as a Llama-style decoder)" or ""))
  end
  -- the files count the whole checkpoint (MTP layers, a vision tower too)
  a.params = counted or params
  a.active = a.params - inactive
  if a.weight_bytes then C:fact("weight_bytes = " .. a.weight_source) end
  if #notes > 0 then a.notes = table.concat(notes, "; ") end
end

-- The rotary tables the layers ask vLLM's get_rope for (the model's `rope`
-- field, sized by engines.lua vllm_rotary): config.json's rope_scaling (or
-- the rope_parameters newer transformers write) gives the type ("type" in
-- older files; Qwen2-VL's "mrope" is the default type with M-RoPE sections,
-- as its transformers config renames it), factor and
-- original_max_position_embeddings (Phi-3's at the top level), and
-- partial_rotary_factor; by model file: DeepSeek's yarn is deepseek_yarn
-- (deepseek_v2.py), gpt-oss builds it in float32 (gpt_oss.py at
-- 0025d69bcf08), Gemma 3's sliding layers take the default type beside the
-- global layers' scaling (gemma3.py at 004dc924965c: two tables),
-- Nemotron-H's and Jamba's attention have none (nemotron_h.py at
-- 00b08dc44519, JambaAttentionDecoderLayer in jamba.py at 002b4cf80b73) and
-- Falcon with alibi neither (falcon.py: rotary only without alibi). nil:
-- one default table.
local function rope_of(C)
  local fam = C.fam.name
  if fam == "nemotron_h" or fam == "jamba" then return false end
  if C.fam.falcon and C:get("alibi") == true then return false end
  local r = {}
  local sc, where = C:get("rope_scaling")
  if sc == nil then sc, where = C:get("rope_parameters") end
  if sc ~= nil then
    -- (an array is a table too: rope_scaling [1, 2] was read as the default)
    if type(sc) ~= "table" or #sc > 0 then C:raise("field '%s' must be an object, got %s", where, show(sc)) end
    local t = sc.rope_type or sc.type or "default"
    if type(t) ~= "string" then C:raise("field '%s.rope_type' must be a string, got %s", where, show(t)) end
    if t == "mrope" then t = "default" end
    if (fam == "deepseek_v2" or fam == "deepseek_v3") and t == "yarn" then t = "deepseek_yarn" end
    if not engines.rope_types[t] then
      C:raise("field '%s': rope type %s is not one kvplan sizes vLLM's rotary table for (%s)", where,
              show(t), table.concat(util.sorted_keys(engines.rope_types), ", "))
    end
    if t ~= "default" then r.type = t end
    if sc.mrope_section ~= nil and sc.mrope_section ~= null then r.mrope = true end
    -- the factor and original length the rotary table is sized by
    -- (engines.lua rotary_table: a number >= 1, an integer >= 1), checked
    -- here with the file and its key: a factor of 0 or 1e308 was "model 'x':
    -- field 'rope.factor' ..." or an inf-row table at the script's line
    if t ~= "default" and t ~= "llama3" and t ~= "mllama4" and t ~= "longrope" then
      local f = sc.factor
      if math.type(f) == nil or not (f >= 1) or f == math.huge then
        C:raise("field '%s.factor' must be a number >= 1 for rope type '%s', got %s", where, t, show(f))
      end
      r.factor = f
    end
    if t == "yarn" or t == "deepseek_yarn" or t == "longrope" then
      local o, ow = sc.original_max_position_embeddings, where .. ".original_max_position_embeddings"
      if o == nil or o == null then o, ow = C:get("original_max_position_embeddings") end
      if o ~= nil and (type(o) ~= "number" or not (o >= 1) or o ~= math.floor(o)) then
        C:raise("field '%s' must be a positive integer, got %s", ow, show(o))
      end
      r.original_max_position = o
    end
    if type(sc.partial_rotary_factor) == "number" then r.partial_rotary_factor = sc.partial_rotary_factor end
  end
  local p, pw = C:get("partial_rotary_factor")
  if p ~= nil then
    if type(p) ~= "number" then C:raise("field '%s' must be a number, got %s", pw, show(p)) end
    r.partial_rotary_factor = p
  end
  if fam == "gpt_oss" then r.dtype = "fp32" end
  if fam == "gemma3_text" then return { {}, r } end
  if next(r) == nil then return nil end
  return r
end

local function model_id(C, opts, dir)
  if opts.id ~= nil then
    if type(opts.id) ~= "string" or opts.id == "" then
      util.raise("field 'id' must be a non-empty string, got %s", show(opts.id))
    end
    return opts.id, "opts.id"
  end
  local p = C.root._name_or_path
  if type(p) == "string" and basename(p) ~= "" then
    return basename(p), "config.json _name_or_path"
  end
  local d = dir
  if d == "." then d = os.getenv and os.getenv("PWD") or "model" end -- none under --sandbox
  return basename(d), "directory name"
end

-- Whisper (transformers WhisperConfig; vLLM vllm/model_executor/models/
-- whisper.py): the decoder's KV cache layers as vLLM names them, a
-- self-attention (full) and a cross-attention layer per decoder layer, the
-- cross layers caching the encoder's max_source_positions tokens (the input
-- is always padded to them, vllm-project/vllm#23664); the encoder's layers
-- hold no cache. Parameters from the shapes (modeling_whisper.py): encoder
-- conv1 (num_mel_bins x d_model x 3 + d_model), conv2 (d_model^2 x 3 +
-- d_model), positions (max_source_positions x d_model), layers of
-- self-attention (4 d^2 + 3 d: q, v and o biased), 2 LayerNorms and an MLP
-- (2 d x ffn + ffn + d), a final LayerNorm; decoder token embeddings (tied
-- to proj_out), positions (max_target_positions x d), layers with a second
-- attention block and a third LayerNorm, a final LayerNorm.
local function whisper_model(C, opts, dir)
  local function int(f) local v = C:int(f, 1, true) C:fact(f .. " = " .. v) return v end
  local d, heads = int("d_model"), int("decoder_attention_heads")
  local dec, enc = int("decoder_layers"), int("encoder_layers")
  local dffn, effn = int("decoder_ffn_dim"), int("encoder_ffn_dim")
  local src, tgt = int("max_source_positions"), int("max_target_positions")
  local vocab, mels = int("vocab_size"), int("num_mel_bins")
  if 2 * dec > core.max_layers then
    C:raise("field 'decoder_layers' must be at most %d (two KV layers each), got %d",
            core.max_layers // 2, dec)
  end
  if d % heads ~= 0 then
    C:raise("d_model %d is not a multiple of decoder_attention_heads %d", d, heads)
  end
  local att = 4 * d * d + 3 * d
  local params = mels * d * 3 + d + d * d * 3 + d + src * d
                 + enc * (att + 4 * d + 2 * d * effn + effn + d) + 2 * d
                 + vocab * d + tgt * d + dec * (2 * att + 6 * d + 2 * d * dffn + dffn + d) + 2 * d
  C:fact("params = estimate from the shapes (encoder, decoder, tied proj_out)")
  local dt = C:str("torch_dtype") or C:str("dtype")
  local dtype = dt and dtype_names[dt:lower()]
  if dt and not dtype then
    C:raise("field 'torch_dtype' must be one of bfloat16, float16, float32, got %s", show(dt))
  end
  local id, iw = model_id(C, opts, dir)
  return models.new{
    id = id, family = "whisper",
    hf = type(C.root._name_or_path) == "string" and C.root._name_or_path or nil,
    layers = 2 * dec, hidden = d, heads = heads, kv_heads = heads, head_dim = d // heads,
    max_context = tgt, params = params, active = params, intermediate = dffn, vocab = vocab,
    tie_embeddings = true, dtype = dtype or "bf16",
    -- learned positions: no rotary table (engines.lua vllm_rotary)
    rope = false,
    -- weight classes: the encoder's self-attention, the decoder's self- and
    -- cross-attention; fc1 and fc2 MLPs (modeling_whisper.py)
    attention_layers = enc + 2 * dec, mlp_layers = enc + dec, mlp_matrices = 2,
    layer_kinds = {{kind = "full", n = 1}, {kind = "cross", encoder_tokens = src, n = 1}},
    notes = string.format("encoder-decoder: %d decoder self-attention and %d cross-attention " ..
                          "layers caching the encoder's %d tokens; %d encoder layers (no cache)",
                          dec, dec, src, enc),
    source = string.format("from_hf %s (model_type 'whisper'; id from %s): %s", C.file, iw,
                           table.concat(C.facts, "; ")),
  }
end

--- A Model from a Hugging Face model directory or config.json. opts: id
--- (the model's name), weight_format (overrides quantization_config).
function M.from_hf(path, opts)
  if type(path) ~= "string" then
    util.raise("from_hf: path must be a string, got %s", type(path))
  end
  opts = opts or {}
  if type(opts) ~= "table" then
    util.raise("from_hf: options must be a table, got %s", type(opts))
  end
  util.check_keys(opts, {id = true, weight_format = true}, "from_hf options")
  local C, dir = open_config(path)
  if C.model_type == "whisper" then return whisper_model(C, opts, dir) end
  local a = {}
  read_shape(C, a)
  local kinds = read_kinds(C, a)
  read_ffn(C, a)
  read_vision(C, a, dir)
  read_weights(C, a, dir)
  if not a.dtype then a.dtype, a.dtype_from = "bf16", "no torch_dtype: bf16 assumed" end
  C:fact("dtype = " .. a.dtype_from)
  local wf
  if opts.weight_format ~= nil then
    formats.get(opts.weight_format, "weight_format") -- checked now, not at first use
    wf = opts.weight_format
    C:fact("weight_format = opts.weight_format")
  elseif C:get("quantization_config") ~= nil then
    local line
    wf, line = weight_format_of(C, C:get("quantization_config"))
    C:fact("weight_format = " .. line)
  end
  -- no quantization_config: a ModelOpt export's hf_quant_config.json beside
  -- config.json ({"quantization": {"quant_algo", "group_size",
  -- "exclude_modules", "kv_cache_quant_algo"}}), the file TensorRT-LLM reads
  -- first (ModelLoader._update_from_hf_quant_config, tensorrt_llm/llmapi/
  -- llm_utils.py at 0066b2a5696f: "Found hf_quant_config.json, pre-quantized
  -- checkpoint is used") and vLLM's ModelOpt configs name as theirs
  -- (ModelOptFp8Config / ModelOptNvFp4Config get_config_filenames, from_config
  -- reading quantization.quant_algo: vllm/model_executor/layers/quantization/
  -- modelopt.py at c9a59901113c); its exclude_modules stay in the model dtype
  local hq_inner
  if wf == nil and opts.weight_format == nil and dir then
    local hq = read_json(dir .. "/hf_quant_config.json")
    if hq ~= nil then
      if type(hq) ~= "table" or type(hq.quantization) ~= "table" then
        C:raise("hf_quant_config.json: field 'quantization' must be an object, got %s",
                show(type(hq) == "table" and hq.quantization or hq))
      end
      hq_inner = hq.quantization
      if hq_inner.quant_algo ~= nil and hq_inner.quant_algo ~= null then
        local line
        wf, line = weight_format_of(C, {quant_method = "modelopt", quantization = hq_inner},
                                    "hf_quant_config.json quantization")
        C:fact("weight_format = " .. line)
      else
        hq_inner = nil
      end
    end
  end
  local wfs, uq
  if wf ~= nil and opts.weight_format == nil then wfs, uq = quantized_classes(C, a, wf, hq_inner) end
  local kvc = kv_checkpoint(C, dir)
  local rope = rope_of(C)
  local id, iw = model_id(C, opts, dir)
  local t = {
    id = id, family = C.model_type, hf = type(C.root._name_or_path) == "string" and
      C.root._name_or_path or nil,
    layers = a.layers, hidden = a.hidden, heads = a.heads, kv_heads = a.kv_heads,
    head_dim = a.head_dim, head_dim_v = a.head_dim_v, max_context = a.ctx,
    params = a.params, active = a.active, intermediate = a.intermediate, vocab = a.vocab,
    tie_embeddings = a.tie, dtype = a.dtype, weight_bytes = a.weight_bytes,
    weight_source = a.weight_source, weight_format = wf, weight_formats = wfs,
    unquantized_layers = uq,
    attention_bias = a.o_bias or nil, dense_layers = a.dense_layers,
    layer_kinds = kinds, notes = a.notes, vision = a.vision, kv_checkpoint = kvc, rope = rope,
    source = string.format("from_hf %s (model_type %s; id from %s): %s", C.file,
                           C.model_type and show(C.model_type) or "absent", iw,
                           table.concat(C.facts, "; ")),
  }
  -- the weight classes' layers and MLP matrices where they are not every
  -- layer's gated MLP (models.lua weight_class_params): Falcon's
  -- dense_h_to_4h / dense_4h_to_h (vLLM falcon.py FalconMLP); Nemotron-H's
  -- blocks hold one mixer each, attention, an up/down MLP (NemotronHMLP) or
  -- Mamba2; a Mamba1 block its mixer alone; a Jamba layer attention or a
  -- Mamba mixer, then its MLP or MoE (modeling_jamba.py JambaAttentionDecoderLayer
  -- / JambaMambaDecoderLayer). Mamba mixers' projections have no class: such
  -- a checkpoint is not weighed by class
  if C.fam.falcon then t.mlp_matrices = 2 end
  local hy = C.fam.hybrid
  if hy == "mamba2" or hy == "mamba1" or hy == "mamba" then
    local att, mlp = 0, 0
    for i = 1, a.layers do
      local k = a.kinds[i]
      if k ~= "state" and (hy == "mamba" or k == "full") then att = att + 1
      elseif k ~= "state" then mlp = mlp + 1 end
    end
    t.attention_layers = att
    if hy ~= "mamba" then t.mlp_layers, t.mlp_matrices = hy == "mamba2" and mlp or 0, 2 end
    t.other_note = "the Mamba mixers and the norms"
    t.classes_unweighable = "its Mamba mixers' projections are linear layers a quantized "
                            .. "checkpoint quantizes and have no weight class"
  end
  -- Qwen3-Next's Gated DeltaNet layers: in_proj_qkvz and out_proj take the
  -- quant_config (vLLM qwen3_next.py Qwen3NextGatedDeltaNet) and have no class
  if hy == "gdn" then
    t.classes_unweighable = "its Gated DeltaNet layers' in_proj_qkvz, in_proj_ba and out_proj "
                            .. "(and the gated attention's doubled q_proj) have no weight class"
  end
  if a.mla then
    t.mla = {kv_lora_rank = a.mla.kv_lora, rope_dim = a.mla.rope, q_lora_rank = a.mla.q_lora,
             qk_nope_head_dim = a.mla.nope, v_head_dim = a.mla.v, index_head_dim = a.mla.index,
             index_n_heads = a.mla.index and a.mla.index_heads,
             index_topk = a.mla.index and a.mla.index_topk}
  end
  if a.moe then
    t.experts, t.experts_active = a.moe.experts, a.moe.active
    t.moe_intermediate, t.shared_experts = a.moe.inter, a.moe.n_shared
    -- the shared experts' width where it is not n_shared x moe_intermediate
    -- (Qwen2-MoE's shared_expert_intermediate_size, Llama 4's intermediate_size)
    if a.moe.shared_inter > 0 and a.moe.shared_inter ~= (a.moe.n_shared or 0) * a.moe.inter then
      t.shared_intermediate = a.moe.shared_inter
    end
  end
  local m = models.new(t)
  -- the rotary tables and the weights sized once here, so that a config
  -- whose numbers pass one by one but not together is an error naming the
  -- file (rope_scaling.factor 1e308, max_position_embeddings 2^62,
  -- index_head_dim 2^40 were errors at the script's line, status 1)
  for _, f in ipairs{engines.vllm_rotary, m.weight_size} do
    local ok, err = pcall(f, m)
    if not ok then C:raise("%s", (tostring(err):gsub("^.-:%d+: ", "", 1):gsub("^model '.-': ", "", 1))) end
  end
  return m
end

-- ---- the local Hugging Face cache ---------------------------------------------
-- A repo id (ORG/NAME) is read from what huggingface_hub downloaded, never
-- from the network. The cache is huggingface_hub's (src/huggingface_hub/
-- constants.py, huggingface/huggingface_hub at 03333b689b5a): $HF_HUB_CACHE,
-- else the older $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, HF_HOME being
-- $XDG_CACHE_HOME/huggingface by default and XDG_CACHE_HOME ~/.cache. A
-- repo's files are under models--ORG--NAME (REPO_ID_SEPARATOR "--"):
-- refs/REVISION holds the commit a branch or tag names, snapshots/COMMIT/
-- that commit's files; a revision no ref names is taken as a commit
-- (file_download.py try_to_load_from_cache).

--- The cache directory and what chose it ("$HF_HUB_CACHE", ...); nil and
--- why when none can be found (--sandbox reads no environment).
function M.cache_dir()
  local getenv = os.getenv
  if getenv == nil then
    return nil, "the environment is not readable here (--sandbox: give the snapshot's directory as the model)"
  end
  local home = getenv("HOME")
  local function var(k)
    local v = getenv(k)
    if v == nil or v == "" then return nil end
    if home and (v == "~" or v:sub(1, 2) == "~/") then v = home .. v:sub(2) end -- expanduser
    return v
  end
  for _, k in ipairs{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} do
    if var(k) then return var(k), "$" .. k end
  end
  if var("HF_HOME") then return var("HF_HOME") .. "/hub", "$HF_HOME/hub" end
  if var("XDG_CACHE_HOME") then
    return var("XDG_CACHE_HOME") .. "/huggingface/hub", "$XDG_CACHE_HOME/huggingface/hub"
  end
  if home and home ~= "" then return home .. "/.cache/huggingface/hub", "~/.cache/huggingface/hub" end
  return nil, "none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME and HOME is set"
end

--- name as a Hugging Face repo id and revision: "ORG/NAME" or
--- "ORG/NAME@REVISION" -> repo, revision (nil: main); nil when it is not one
--- (the Hub's ids: letters, digits, '-', '_' and '.', no '--' or '..').
function M.repo_id(name)
  if type(name) ~= "string" then return nil end
  local repo, rev = name:match("^([^@]+)@([^@]*)$")
  repo = repo or name
  if not repo:match("^[%w][%w._-]*/[%w][%w._-]*$") or repo:find("--", 1, true)
     or repo:find("..", 1, true) then
    return nil
  end
  return repo, rev
end

--- Is rev a revision from_cache reads: a branch, tag or commit name of
--- letters, digits, '.', '_' and '-' (no path: no '/', no '..')?
function M.revision_ok(rev)
  return type(rev) == "string" and rev:match("^[%w][%w._-]*$") ~= nil and not rev:find("..", 1, true)
end

-- Can path be opened? (a path --sandbox refuses cannot)
local function exists(path)
  local ok, f = pcall(io.open, path, "rb")
  if ok and f then f:close() end
  return ok and f ~= nil
end

--- Is path a Hugging Face checkpoint on disk: a config.json file, or a
--- directory holding one?
function M.is_checkpoint(path)
  if type(path) ~= "string" or path == "" then return false end
  if path:match("%.json$") then return exists(path) end
  return exists(path:gsub("/+$", "") .. "/config.json")
end

--- Why path is no checkpoint (is_checkpoint is false), when it names a file
--- or directory or reads as a path ('/', '.json', a leading '.' or '~'); nil
--- for a name that is none of these (a catalog name, looked up as one).
function M.not_checkpoint(path)
  local expected = " (expected a catalog id or alias, a Hugging Face model directory or a config.json)"
  local ok, f, err = pcall(io.open, path, "rb")
  if ok and f ~= nil then
    local data, rerr = f:read(0) -- a directory opens, and fails to read
    f:close()
    if data == nil and rerr ~= nil then return "the directory holds no config.json" .. expected end
    return "the file is not a .json config" .. expected
  end
  local c = path:sub(1, 1)
  if path:find("/", 1, true) or path:match("%.json$") or c == "." or c == "~" then
    return "cannot open it: " .. util.escape(util.shown(ok and err or f), 200)
  end
  return nil
end

--- A Model from the local cache's snapshot of repo (ORG/NAME) at revision
--- (a branch, tag or commit; default main): from_hf of its directory
--- (config.json, and the safetensors index and headers when there), its id
--- the repo id (with "@revision" when one is given), its hf the repo.
--- opts: cache (the directory, default M.cache_dir()), unknown (what an
--- error starts with, default "model 'ORG/NAME'"). A cache without it is
--- an error naming the directory looked in and how to download it.
function M.from_cache(repo, revision, opts)
  opts = opts or {}
  local r = M.repo_id(repo)
  if r == nil or r ~= repo then
    util.raise("from_cache: '%s' is not a Hugging Face repo id (ORG/NAME)", util.escape(util.shown(repo), 80))
  end
  if revision ~= nil and not M.revision_ok(revision) then
    util.raise("revision must be a branch, tag or commit of the repo (letters, digits, '.', '_', '-'), got '%s'",
               util.escape(util.shown(revision), 80))
  end
  local what = opts.unknown or ("model '" .. repo .. "'")
  local dir, chosen = opts.cache, "the cache given"
  if dir == nil then dir, chosen = M.cache_dir() end
  local download = string.format("kvplan reads local files only: `huggingface-cli download %s config.json%s` "
                                 .. "puts its config.json there (model.safetensors.index.json too for the "
                                 .. "checkpoint's exact size)", repo, revision and (" --revision " .. revision) or "")
  if dir == nil then
    util.raise("%s is not in the local Hugging Face cache: %s; %s", what, chosen, download)
  end
  local folder = dir .. "/models--" .. repo:gsub("/", "--")
  local rev = revision or "main"
  local ref = read(folder .. "/refs/" .. rev)
  local commit = rev
  if ref ~= nil then
    commit = ref:match("^%s*(%x+)%s*$")
    if commit == nil then util.raise("%s/refs/%s: expected a commit hash, got %s", folder, rev, show(util.escape(ref, 80))) end
  end
  local snap = folder .. "/snapshots/" .. commit
  if not exists(snap .. "/config.json") then
    local looked = not exists(folder) and ("directory " .. folder)
      or ref ~= nil and (snap .. "/config.json (refs/" .. rev .. ")")
      or string.format("%s/refs/%s nor %s/config.json", folder, rev, snap)
    util.raise("%s is not in the local Hugging Face cache: no %s (the cache directory %s: %s, the "
               .. "first set of $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub); %s",
               what, looked, dir, chosen, download)
  end
  local m = M.from_hf(snap, {id = revision and (repo .. "@" .. revision) or repo})
  m.hf = repo
  m.hf_revision = revision
  return m
end

return M
