-- stdlib/kvplan/models.lua: model descriptions and the model catalog.
-- Stdlib layer: the schema and defaults live here; the KV arithmetic is the
-- core's (engine/core/kv.c), reached through the Model's `core` userdata.
--
-- A model is a table of architecture facts (see the fields below); kv.model(t)
-- checks it and returns a Model. Catalog entries (catalog/models_data.lua)
-- are the same tables, each with the Hugging Face repo its config.json came
-- from.

local core = require "kvplan.core"
local util = require "kvplan.util"
local formats = require "kvplan.formats"

local M = {}

-- Fields the core reads.
local arch = {
  layers = true, hidden = true, heads = true, kv_heads = true, head_dim = true,
  head_dim_v = true, params = true, active = true, max_context = true, layer_kinds = true,
}
-- Fields kept for people and reports (not used by the arithmetic).
local meta = {
  id = true, name = true, aliases = true, hf = true, source = true, family = true,
  notes = true, intermediate = true, vocab = true, tie_embeddings = true, experts = true,
  experts_active = true, shared_experts = true, moe_intermediate = true, dtype = true,
  mla = true, weight_bytes = true, weight_source = true, weight_format = true,
  weight_formats = true, attention_bias = true, dense_layers = true, vision = true,
  -- the weight classes' layer counts where they are not `layers` and the
  -- dense MLP's matrices (Model:weight_class_params); other_note says what
  -- the class 'other' holds beyond norms and biases; classes_unweighable
  -- why a checkpoint cannot be weighed by class (its quantized linear
  -- layers have no class)
  attention_layers = true, mlp_layers = true, mlp_matrices = true, other_note = true,
  classes_unweighable = true,
  -- how many layers' attention or dense MLP their class's format of
  -- weight_formats leaves in the model dtype ({mlp = 20}: a bitsandbytes
  -- llm_int8_skip_modules entry naming one layer's module; classes_size)
  unquantized_layers = true,
  -- the shared experts' FFN width a MoE layer (default shared_experts x
  -- moe_intermediate: DeepSeek's; Qwen2-MoE's shared_expert_intermediate_size,
  -- Llama 4's intermediate_size)
  shared_intermediate = true,
  -- no output layer at all (an embedding model: BertModel ends in a pooler)
  no_lm_head = true,
  -- the KV format the checkpoint's quantization states (hf.lua kv_checkpoint)
  kv_checkpoint = true,
  -- the rotary embeddings the layers build (engines.lua vllm_rotary: vLLM's
  -- cos/sin caches in the loaded weights); false: no RoPE layers
  rope = true,
  -- why the engine's profiling-run activation is not predicted for the
  -- model (engines.shape): the deployment's activation is then 'none'
  activation_unmodelled = true,
}

-- A vision tower (config.json vision_config; engine/core/predict.c
-- vision_item and vision_run read it through kv.deploy): widths, depth, patching, the projector, the largest
-- image vLLM profiles with, and its parameters.
local vision_fields = {
  hidden = true, intermediate = true, layers = true, heads = true, patch = true,
  temporal_patch = true, in_channels = true, merge = true, out_hidden = true, gated = true,
  proj_hidden = true, max_pixels = true, image_size = true, class_token = true, params = true,
  model_type = true, video = true,
}
M.vision_fields = vision_fields
local allowed = {}
for k in pairs(arch) do allowed[k] = true end
for k in pairs(meta) do allowed[k] = true end
M.fields = allowed

local Model = {}
Model.__name = "kvplan.Model"
M.Model = Model
-- A model's table holds its facts alone, so a copy of its fields (pairs)
-- given to kv.model is the same model: the core's userdata and the derived
-- defaults are not fields (a copy carried the core built from the old facts
-- and was refused, and an `active` that no longer followed a changed params)
local cores = setmetatable({}, {__mode = "k"})
function Model.__index(m, k)
  local f = Model[k]
  if f ~= nil then return f end
  if k == "core" then return cores[m] end
  if k == "active" then return rawget(m, "params") end
  return nil
end

-- Native dtype -> the weight format of the checkpoint.
local dtype_format = {
  bf16 = "bf16", fp16 = "fp16", fp32 = "fp32", float16 = "fp16", bfloat16 = "bf16",
  float32 = "fp32",
  -- DeepSeek-V3 style fp8 with one fp32 scale per 128x128 block
  fp8 = {name = "fp8-b128", bits = 8, group = 16384, scale = 32},
  mxfp4 = "mxfp4",
}

--- The per-sequence state of one Mamba2 layer from its shapes, as vLLM
--- sizes it (vllm/model_executor/layers/mamba/mamba_utils.py
--- MambaStateShapeCalculator.mamba2_state_shape; MambaSpec.page_size_bytes
--- sums each shape's elements times its dtype's bytes):
---   conv state     (conv_kernel - 1) x (heads x head_dim + 2 x groups x state)
---   temporal (SSM) heads x head_dim x state
--- m = {heads, head_dim, state, groups, conv_kernel}; conv_bytes and ssm_bytes
--- the dtypes' bytes (the model dtype, vLLM mamba_cache_dtype "auto"; the SSM
--- state in mamba_ssm_cache_dtype when the config names one). Returns the
--- bytes at TP 1, the parts TP splits them into (the groups: heads and
--- groups are sharded together; kvplan replicates beyond them), a note and
--- the bytes of one conv row (a speculative token's: vLLM's conv state keeps
--- conv_kernel - 1 + num_spec rows, mamba_utils.py at 02d710837549).
function M.mamba2_state(m, conv_bytes, ssm_bytes, what)
  for _, k in ipairs({"heads", "head_dim", "state", "groups", "conv_kernel"}) do
    util.count(m[k], what .. "." .. k, 1)
  end
  local inner = m.heads * m.head_dim
  local conv = (m.conv_kernel - 1) * (inner + 2 * m.groups * m.state)
  local ssm = m.heads * m.head_dim * m.state
  return conv * conv_bytes + ssm * ssm_bytes, m.groups,
         string.format("Mamba2: conv %d x %d + SSM %d x %d x %d elements", m.conv_kernel - 1,
                       inner + 2 * m.groups * m.state, m.heads, m.head_dim, m.state),
         (inner + 2 * m.groups * m.state) * conv_bytes
end

--- The same for one Mamba1 layer (mamba1_state_shape): conv state
--- intermediate x (conv_kernel - 1), SSM state intermediate x state elements;
--- m = {inner, state, conv_kernel}; TP splits the intermediate channels.
function M.mamba1_state(m, conv_bytes, ssm_bytes, what)
  for _, k in ipairs({"inner", "state", "conv_kernel"}) do
    util.count(m[k], what .. "." .. k, 1)
  end
  return m.inner * (m.conv_kernel - 1) * conv_bytes + m.inner * m.state * ssm_bytes, m.inner,
         string.format("Mamba: conv %d x %d + SSM %d x %d elements", m.inner, m.conv_kernel - 1,
                       m.inner, m.state)
end

local dtype_bytes = {bf16 = 2, bfloat16 = 2, fp16 = 2, float16 = 2, fp32 = 4, float32 = 4}

-- layer_kinds runs that give Mamba2 shapes (`mamba2 = {...}`) get their
-- state_bytes and state_heads computed (M.mamba2_state).
local function resolve_runs(t)
  local runs = t.layer_kinds
  if type(runs) ~= "table" then return runs end
  local out, changed = {}, false
  for i, r in ipairs(runs) do
    local key = type(r) == "table" and (r.mamba2 ~= nil and "mamba2" or r.mamba1 ~= nil and "mamba1")
    if key then
      local m = r[key]
      if type(m) ~= "table" then
        util.raise("field 'layer_kinds[%d].%s' must be a table, got %s", i, key, type(m))
      end
      local b = dtype_bytes[(t.dtype or "bf16"):lower()] or 2
      local sb = m.ssm_dtype and dtype_bytes[m.ssm_dtype:lower()] or b
      local c = {}
      for k, v in pairs(r) do if k ~= key then c[k] = v end end
      c.kind = "state"
      local row
      c.state_bytes, c.state_heads, c.note, row = M[key .. "_state"](m, b, sb,
                                                                    "layer_kinds[" .. i .. "]." .. key)
      -- one conv row a speculative token adds (vLLM's mamba2_state_shape
      -- num_spec; Mamba1's shape has none)
      if key == "mamba2" then c.spec_state_bytes = row end
      out[i], changed = c, true
    else
      out[i] = r
    end
  end
  return changed and out or runs
end

-- The kinds of the fields kept beside the core's: a hand-built model with
-- `dtype = 0`, `experts = ""` or `rope = 0` was a Lua error inside this file
-- or engines.lua (docs/reliability.md, the Lua API); counts are integers >= 0.
local meta_kinds = {
  id = "string", name = "string", hf = "string", source = "string", family = "string",
  notes = "string", dtype = "string", weight_source = "string",
  other_note = "string", classes_unweighable = "string", activation_unmodelled = "string",
  tie_embeddings = "boolean", attention_bias = "boolean", no_lm_head = "boolean",
  aliases = "table", mla = "table", weight_formats = "table", vision = "table",
  unquantized_layers = "table", kv_checkpoint = "table",
  intermediate = "count", vocab = "count", experts = "count", experts_active = "count",
  shared_experts = "count", moe_intermediate = "count", dense_layers = "count",
  attention_layers = "count", mlp_layers = "count", mlp_matrices = "count",
  shared_intermediate = "count",
}
local function check_meta(t)
  local id = type(t.id) == "string" and t.id or nil
  for k, kind in util.sorted_pairs(meta_kinds) do -- of several bad fields, the same one every run
    local v = t[k]
    if v ~= nil then
      local where = (id and ("model '" .. util.escape(id) .. "': ") or "") .. "field '" .. k .. "'"
      if kind == "count" then
        if math.type(v) ~= "integer" and not (math.type(v) == "float" and v == math.floor(v)
                                               and v >= 0 and v < 2^63) or v < 0 then
          util.raise("%s must be an integer >= 0, got %s", where,
                     type(v) == "string" and ("'" .. util.escape(v) .. "'") or util.shown(v))
        end
      elseif type(v) ~= kind then
        util.raise("%s must be a %s, got %s", where, kind, type(v))
      end
    end
  end
  local r = t.rope
  if r ~= nil and r ~= false and type(r) ~= "table" then
    util.raise("%sfield 'rope' must be a table of the rotary tables or false (no RoPE layers), got %s",
               id and ("model '" .. util.escape(id) .. "': ") or "", type(r))
  end
end

--- A Model from a table of architecture facts.
function M.new(t)
  if type(t) ~= "table" then util.raise("a model must be a table, got %s", type(t)) end
  util.check_keys(t, allowed, "model" .. (t.id and (" '" .. tostring(t.id) .. "'") or ""))
  check_meta(t)
  local c = {}
  for k in pairs(arch) do c[k] = t[k] end
  c.layer_kinds = resolve_runs(t)
  if t.mla then
    if type(t.mla) ~= "table" then util.raise("field 'mla' must be a table, got %s", type(t.mla)) end
    c.kv_lora_rank, c.rope_dim = t.mla.kv_lora_rank, t.mla.rope_dim or 0
    -- a sparse-attention indexer's keys cached beside the latent (DeepSeek-V3.2)
    c.index_head_dim = t.mla.index_head_dim
    -- its query heads and top-k: the step time's (roofline.c, DeepSeek Sparse Attention)
    c.index_n_heads, c.index_topk = t.mla.index_n_heads, t.mla.index_topk
    if c.kv_lora_rank == nil then util.raise("field 'mla.kv_lora_rank' is missing") end
  end
  local m = setmetatable({}, Model)
  for k, v in pairs(t) do m[k] = v end
  m.id = t.id or t.name or "custom"
  m.kv_heads = t.kv_heads or t.heads
  cores[m] = core.model(c)
  -- what the core cannot see: the head counts against each other and hidden
  if m.kv_heads > t.heads then
    util.raise("model '%s': field 'kv_heads' (%d) must be at most field 'heads' (%d)", m.id,
               m.kv_heads, t.heads)
  end
  if t.head_dim == nil and t.hidden % t.heads ~= 0 then
    util.raise("model '%s': field 'heads' (%d) does not divide field 'hidden' (%d); give " ..
               "'head_dim' when the heads are not hidden / heads wide", m.id, t.heads, t.hidden)
  end
  local kc = t.kv_checkpoint
  if kc ~= nil then
    -- {format = KV format, config = bool, hf_quant = bool}: hf.lua kv_checkpoint
    if type(kc) ~= "table" then
      util.raise("model '%s': field 'kv_checkpoint' must be a table, got %s", m.id, type(kc))
    end
    util.check_keys(kc, {format = true, config = true, hf_quant = true}, "kv_checkpoint")
    formats.get(kc.format, "kv_checkpoint.format")
    for _, k in ipairs{"config", "hf_quant"} do
      if kc[k] ~= nil and type(kc[k]) ~= "boolean" then
        util.raise("model '%s': field 'kv_checkpoint.%s' must be true or false, got %s", m.id, k,
                   util.shown(kc[k]))
      end
    end
  end
  if t.vision ~= nil then
    if type(t.vision) ~= "table" then
      util.raise("model '%s': field 'vision' must be a table, got %s", m.id, type(t.vision))
    end
    util.check_keys(t.vision, vision_fields, "model '" .. m.id .. "' vision")
    for _, k in ipairs{"hidden", "intermediate", "patch", "out_hidden"} do
      util.count(t.vision[k], "vision." .. k, 1)
    end
    for _, k in ipairs{"layers", "heads", "temporal_patch", "in_channels", "merge", "max_pixels",
                       "image_size", "params"} do
      if t.vision[k] ~= nil then util.count(t.vision[k], "vision." .. k, 1) end
    end
    if t.vision.proj_hidden ~= nil then util.count(t.vision.proj_hidden, "vision.proj_hidden", 0) end
    if (t.vision.max_pixels == nil) == (t.vision.image_size == nil) then
      util.raise("model '%s': field 'vision' needs one of max_pixels or image_size", m.id)
    end
  end
  for _, k in ipairs{"attention_layers", "mlp_layers", "shared_intermediate"} do
    if t[k] ~= nil then util.count(t[k], k, 0) end
  end
  if t.mlp_matrices ~= nil and t.mlp_matrices ~= 2 and t.mlp_matrices ~= 3 then
    util.raise("model '%s': field 'mlp_matrices' must be 2 (up, down) or 3 (gate, up, down), got %s",
               m.id, util.shown(t.mlp_matrices))
  end
  for _, k in ipairs{"other_note", "classes_unweighable"} do
    if t[k] ~= nil and type(t[k]) ~= "string" then
      util.raise("model '%s': field '%s' must be a string, got %s", m.id, k, type(t[k]))
    end
  end
  if t.weight_formats ~= nil then
    if type(t.weight_formats) ~= "table" then
      util.raise("field 'weight_formats' must be a table of class = format, got %s",
                 type(t.weight_formats))
    end
    local ok = {}
    for _, k in ipairs(M.weight_classes) do ok[k] = true end
    util.check_keys(t.weight_formats, ok, "weight_formats")
    for k, f in util.sorted_pairs(t.weight_formats) do formats.get(f, "weight_formats." .. k) end
    m:weight_class_params() -- checked now
  end
  -- the linear layers' matrices and input columns over every class
  -- (class_shapes), once the fields are checked: the core counts a plain
  -- format's tensor and col bits over them (kvp_deploy_weight_bytes), as
  -- weight_size does
  local shards, cols = m:linear_shapes()
  if shards > 0 or cols > 0 then
    c.linear_shards, c.linear_cols = shards, cols
    cores[m] = core.model(c)
  end
  return m
end

--- The weight format of the model's own checkpoint: `weight_format` when
--- the entry gives one (a quantized checkpoint), else from its dtype.
function Model:native_format()
  if rawget(self, "weight_format") ~= nil then return formats.get(self.weight_format, "weight_format") end
  return self:dtype_format()
end

--- The format of the model dtype (what unquantized tensors are stored in).
function Model:dtype_format()
  local f = dtype_format[(self.dtype or "bf16"):lower()]
  if f == nil then
    util.raise("model '%s': unknown dtype '%s'", self.id, util.shown(self.dtype))
  end
  return formats.get(f, "dtype")
end

--- The KV format vLLM's kv_cache_dtype 'auto' gives: the model's activation
--- dtype (bf16 for checkpoints stored in fp8 or fp4).
function Model:auto_kv_format()
  local d = (self.dtype or "bf16"):lower()
  if d == "fp16" or d == "float16" then return formats.get("fp16") end
  if d == "fp32" or d == "float32" then return formats.get("fp32") end
  return formats.get("bf16")
end

--- Bytes one token adds to the KV cache of one GPU (all layers, inside
--- their windows): an integer, or a float when the format packs bits.
function Model:kv_bytes_per_token(kv, tp)
  local bits = self.core:token_bits(formats.get(kv or self:auto_kv_format(), "kv"), tp)
  return bits % 8 == 0 and bits // 8 or bits / 8
end

--- Unpaged KV bytes of `batch` sequences of n tokens on one GPU (windows cap
--- the tokens, recurrent states are fixed). opts: kv, tp, batch.
function Model:kv_bytes(n, opts)
  opts = opts or {}
  util.check_keys(opts, {kv = true, tp = true, batch = true}, "kv_bytes options")
  local one = self.core:seq_bytes(n, formats.get(opts.kv or self:auto_kv_format(), "kv"), opts.tp)
  local batch = util.count(opts.batch or 1, "batch")
  local total = one * batch
  if total // batch ~= one then util.raise("KV bytes of %d sequences overflow 64 bits", batch) end
  return total
end

-- Weight classes: a mixed-precision checkpoint stores some tensors
-- quantized and keeps others in the model dtype (gpt-oss: MXFP4 experts,
-- bf16 attention, embeddings and head; GPTQ/AWQ: quantized linear layers,
-- 16-bit embeddings and head; FP8 with block scales likewise). Parameters
-- per class, from the config shapes as transformers builds the modules:
--   embeddings  vocab x hidden
--   lm_head     vocab x hidden, unless tied (or no_lm_head)
--   attention   per attention layer (attention_layers, default layers: an
--               encoder-decoder's encoder self-, decoder self- and cross-
--               attention modules, a hybrid's attention layers alone) q, k,
--               v, o: hidden x (heads + 2 kv_heads) x head_dim
--               + heads x head_dim x hidden (+ their biases with
--               attention_bias); MLA: q (through q_lora_rank), kv_a, kv_b, o
--   mlp         dense layers (mlp_layers, default layers; dense_layers with
--               experts): mlp_matrices x hidden x intermediate, 3 (gate, up,
--               down; the default) or 2 (up, down: Falcon, OPT, GPT-3, BERT,
--               Whisper, Nemotron-H)
--   experts     MoE layers: experts x 3 x hidden x moe_intermediate
--   shared_experts  MoE layers: 3 x hidden x shared_intermediate (default
--               shared_experts x moe_intermediate): gate, up and down of the
--               shared experts' one MLP, which vLLM builds as a dense MLP
--               with the checkpoint's quant_config (deepseek_v2.py
--               DeepseekV2MoE: DeepseekV2MLP(intermediate_size =
--               moe_intermediate_size x n_shared_experts, quant_config=
--               quant_config) at b863fe5bf4e1; llama4.py Llama4MoE:
--               LlamaMLP(intermediate_size, quant_config=quant_config) at
--               0303cbd84895; qwen2_moe.py Qwen2MoeSparseMoeBlock:
--               Qwen2MoeMLP(shared_expert_intermediate_size, quant_config=
--               quant_config) at 002fb90788ae, its shared_expert_gate a
--               plain torch.nn.Linear, in 'other'). A class of its own, not
--               'mlp', because a checkpoint's ignore list can keep them in
--               16 bits while the routed experts and the dense MLP are
--               quantized (hf.lua quantized_classes)
--   other       params minus the above: norms, routers, biases, learned
--               positions, sinks, a Mamba mixer (and a vision tower without
--               vision.params); other_note says which when they are more
--               than norms and biases
--   vision      the vision tower and its projector: vision.params
M.weight_classes = {"embeddings", "lm_head", "attention", "mlp", "experts", "shared_experts",
                    "vision", "other"}

--- The shared experts' FFN width a MoE layer (0 without shared experts).
function Model:shared_width()
  if not self.experts then return 0 end
  return self.shared_intermediate
         or (self.shared_experts or 0) * (self.moe_intermediate or self.intermediate or 0)
end

-- Parameters of each weight class (a table by class name), 'other' what
-- params leaves beyond the rest: negative when the classes add up to more
-- than params (Model:weighs_by_class).
local function class_params(self)
  local H, V, L = self.hidden or 0, self.vocab or 0, self.layers
  local vis = rawget(self, "vision")
  local nohead = self.tie_embeddings or self.no_lm_head
  local c = {embeddings = V * H, lm_head = nohead and 0 or V * H,
             attention = 0, mlp = 0, experts = 0, shared_experts = 0,
             vision = vis and vis.params or 0}
  local mla = rawget(self, "mla")
  if mla and self.heads then
    -- DeepseekV2Attention (transformers modeling_deepseek_v2.py): q through
    -- a q_lora_rank bottleneck when there is one, kv_a to the latent plus
    -- the rope key, kv_b back to heads x (nope + v), o from heads x v
    local nope, rope, v = mla.qk_nope_head_dim or 0, mla.rope_dim or 0, mla.v_head_dim or 0
    local qk, n = nope + rope, self.heads
    local q = mla.q_lora_rank and (H * mla.q_lora_rank + mla.q_lora_rank * n * qk) or H * n * qk
    c.attention = L * (q + H * (mla.kv_lora_rank + rope) + mla.kv_lora_rank * n * (nope + v)
                       + n * v * H)
    -- DeepSeek-V3.2's indexer wq_b (q_lora_rank x index heads x index
    -- head_dim) is built with the checkpoint's quant_config (vllm-project/
    -- vllm deepseek_v2.py Indexer at 002d6073aa03: ReplicatedLinear(q_lora_rank,
    -- head_dim * n_head, quant_config=quant_config)), so it is weighed with
    -- the attention (FP8 with block scales in DeepSeek's checkpoint); its wk,
    -- weights_proj (wk_weights_proj, quant_config=None: wk upcast to bf16 at
    -- load) and k_norm stay in 'other'
    if mla.index_n_heads and mla.q_lora_rank then
      c.attention = c.attention + L * mla.q_lora_rank * mla.index_n_heads * (mla.index_head_dim or 0)
    end
  elseif self.heads and self.head_dim then
    local q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
    local per = H * (q + 2 * kv) + q * H
    if self.attention_bias then per = per + q + 2 * kv + H end
    c.attention = per * (self.attention_layers or L)
  end
  local mm = self.mlp_matrices or 3
  if self.experts then
    local dense = self.dense_layers or 0
    c.experts = (L - dense) * self.experts * 3 * H * (self.moe_intermediate or 0)
    c.shared_experts = (L - dense) * 3 * H * self:shared_width()
    c.mlp = dense * mm * H * (self.intermediate or 0)
  else
    c.mlp = (self.mlp_layers or L) * mm * H * (self.intermediate or 0)
  end
  local sum = 0
  for _, k in ipairs(M.weight_classes) do sum = sum + (c[k] or 0) end
  c.other = (self.params or 0) - sum
  return c, sum
end

--- Whether the model's parameters split into its weight classes: true, or
--- false and why not (the classes its shape gives add up to more than
--- params: a user's model whose intermediate or experts are not its
--- checkpoint's). Model:weight_class_params raises that message.
function Model:weighs_by_class()
  local c, sum = class_params(self)
  if c.other >= 0 then return true end
  return false, string.format("model '%s': its weight classes add up to %d parameters, more than "
                              .. "params %d (check intermediate, experts and moe_intermediate)",
                              self.id, sum, self.params or 0)
end

--- Parameters of each weight class (a table by class name); an error when
--- they add up to more than params (Model:weighs_by_class).
function Model:weight_class_params()
  local c = class_params(self)
  if c.other < 0 then
    local _, why = self:weighs_by_class()
    util.raise("%s", why)
  end
  return c
end

-- vLLM pads the vocabulary of its input embedding and output head
-- (vllm-project/vllm vllm/model_executor/layers/vocab_parallel_embedding.py
-- at 00db0119c376): DEFAULT_VOCAB_PADDING_SIZE = 64, pad_vocab_size rounds up
-- to a multiple of it, and VocabParallelEmbedding (ParallelLMHead is one)
-- creates num_embeddings_per_partition = divide(num_embeddings_padded,
-- tp_size) rows of embedding_dim on each rank: the padded vocabulary split
-- evenly (divide asserts the division; it pads to 64, not to 64 x tp). Those
-- padding rows are allocated with the weights. Whisper's decoder embeds with
-- a plain nn.Embedding(vocab_size, d_model) (whisper.py WhisperDecoder at
-- d1a2e94651cf) that its proj_out ties to: no padding. LoRA's extra
-- vocabulary (org_num_embeddings) is not modelled.
M.vocab_padding = 64

--- The parameters vLLM's vocabulary padding adds (the comment above):
--- {embeddings = (pad(vocab) - vocab) x hidden, lm_head = the same unless
--- tied or absent}, zeros for a vocabulary already a multiple of 64.
function Model:vocab_padding_params()
  local V, H = self.vocab or 0, self.hidden or 0
  if V <= 0 or H <= 0 or rawget(self, "family") == "whisper" then
    return {embeddings = 0, lm_head = 0}
  end
  local pad = (V + M.vocab_padding - 1) // M.vocab_padding * M.vocab_padding - V
  local nohead = self.tie_embeddings or self.no_lm_head
  return {embeddings = pad * H, lm_head = nohead and 0 or pad * H}
end

-- The families whose weights every tensor-parallel rank holds whole are
-- read from the engines' model files (vllm-project/vllm vllm/model_executor/
-- models/; SGLang's and TensorRT-LLM's builds of these models replicate the
-- same modules):
--   norms      every family below: RMSNorm input_layernorm and
--              post_attention_layernorm a layer and the final norm, hidden
--              each (llama.py, qwen2.py, qwen3.py, qwen3_moe.py at 002456df36fc,
--              mixtral.py at 005df92da1c0, deepseek_v2.py at 002d6073aa03);
--              Qwen3's q_norm and k_norm, RMSNorm(head_dim) each a layer
--              (Qwen3MoeAttention, qwen3_moe.py); MLA's q_a_layernorm
--              (q_lora_rank) and kv_a_layernorm (kv_lora_rank)
--              (DeepseekV2MLAAttention)
--   routers    the MoE layers' gate, hidden x experts, ReplicatedLinear with
--              quant_config None (Qwen3MoeSparseMoeBlock; MixtralMoE,
--              linear_method None; DeepseekV2MoE's GateLinear, quant_config
--              None): in the checkpoint dtype even in an FP8 checkpoint; DeepSeek-
--              V3's e_score_correction_bias (noaux_tc), experts a layer (an fp32
--              parameter in vLLM, counted here as the weights' total counts it,
--              in the dtype: 2 bytes of the 4 a value)
--   MLA        the down-projections, in the attention class's format:
--              q_a_proj hidden x q_lora_rank and kv_a_proj_with_mqa hidden x
--              (kv_lora_rank + rope_dim) (ReplicatedLinear with quant_config;
--              fused_qkv_a_proj, MergedColumnParallelLinear(disable_tp=True),
--              when there is a q_lora_rank: DeepSeekV2FusedQkvAProjLinear)
--   indexer    DeepSeek-V3.2's Indexer, all of it: wq_b (ReplicatedLinear
--              with the checkpoint's quant_config, in the attention class:
--              FP8 with block scales in DeepSeek's checkpoint), wk and
--              weights_proj (wk_weights_proj, disable_tp=True, quant_config
--              None: 16-bit) and k_norm (LayerNorm, weight and bias) in 'other'
-- More families, read the same way (brief replicated2, 2026-12-04):
--   phi3       Phi3DecoderLayer is LlamaDecoderLayer (phi3.py at 2bebc3103cb9):
--              Llama's two RMSNorms a layer and the final one
--   gemma2     four GemmaRMSNorm(hidden) a layer (input_layernorm,
--              post_attention_layernorm, pre_feedforward_layernorm,
--              post_feedforward_layernorm) and the final norm (gemma2.py at
--              025adfb93174)
--   gemma3, gemma3_text  the same four and the final one, and q_norm and
--              k_norm, GemmaRMSNorm(head_dim) each a layer (Gemma3Attention,
--              gemma3.py at 004dc924965c); the language model only (the
--              SigLIP tower and the projector of gemma3: not read)
--   cohere     one LayerNorm(hidden) a layer (weight only, input_layernorm:
--              attention and MLP in parallel) and the final norm (commandr.py
--              at 00db0119c376); its q_norm/k_norm (use_qk_norm) are built per
--              local heads, split, and command-r-v01 has none
--   gpt_oss    two RMSNorm(hidden) a layer (attn.norm, mlp.norm) and the final
--              one; the router, torch.nn.Linear(hidden, experts, bf16) with
--              its bias (nn.Linear's default), on every rank (MLPBlock,
--              gpt_oss.py at 0025d69bcf08); the sinks are split by head
--              (num_attention_heads // tp_size) and stay split; FusedMoE's
--              w2_bias, experts x hidden a MoE layer, whole on every rank
--              without expert parallelism: Mxfp4MoEMethod.create_weights
--              makes it torch.zeros(num_experts, hidden_size, bf16) beside a
--              w13_bias of 2 x intermediate_size_per_partition (vllm-project/
--              vllm mxfp4.py at 007d50058a06), and GptOssModel.load_weights
--              loads down_proj_bias whole ("only load on rank 0 to avoid
--              duplication": zeros on ranks > 0) or, under expert
--              parallelism, narrowed to the rank's experts
--              (weight[ep_rank_start:ep_rank_end], gpt_oss.py at
--              0025d69bcf08): whole only without it (replicated_params' ep)
-- More families (brief replicated3, 2026-12-04):
--   llama4     two RMSNorm(hidden) a layer (input_layernorm,
--              post_attention_layernorm) and the final one (LlamaModel's);
--              the router, ReplicatedLinear(hidden, num_local_experts,
--              bias=False, quant_config=None), every MoE layer (Llama4MoE,
--              llama4.py at 0121c95efe85). Its qk_norm is RMSNorm(head_dim,
--              has_weight=False): no parameter; the shared_expert is a
--              LlamaMLP (column/row parallel: split)
--   phimoe     two nn.LayerNorm(hidden, elementwise_affine=True) a layer,
--              weight and bias each, and the final one (PhiMoEDecoderLayer,
--              PhiMoEModel.norm); o_proj's bias, RowParallelLinear(bias=True):
--              the whole output_size on every rank (vllm linear.py
--              RowParallelLinear, added by tp_rank 0 only): 2 x 2 + 1 = 5 of
--              hidden a layer, 2 of hidden at the end; the gate,
--              ReplicatedLinear(hidden, experts, bias=False, quant_config=None)
--              (PhiMoE, phimoe.py at 01524004c3c9). The qkv bias and lm_head's
--              bias are split (QKVParallelLinear, ParallelLMHead)
--   nemotron_h one RMSNorm(hidden) a layer whatever its kind (the Mamba, MLP,
--              attention and MoE decoder layers' norm) and the final norm_f
--              (NemotronHModel, nemotron_h.py at 00b08dc44519); the
--              MambaMixer2's A, D, dt_bias, conv1d and gated norm are split
--              by heads and groups (8 groups: whole groups at tp <= 8). A MoE
--              variant's (NemotronHMoE, the same file) gate is a
--              GateLinear(hidden, n_routed_experts), a ReplicatedLinear
--              (vllm/model_executor/layers/fused_moe; its class "GateLinear(
--              ReplicatedLinear)"), and its e_score_correction_bias an fp32
--              nn.Parameter(n_routed_experts): both whole on every rank, each
--              MoE layer (the layers - dense_layers of a model with experts;
--              the bias counted in the dtype as DeepSeek-V3's). Its latent
--              projections (fc1/fc2_latent_proj, moe_latent_size) are not
--              modelled; the catalog's Nemotron-H has no MoE layer
--   qwen3_next Qwen3NextDecoderLayer's input_layernorm and
--              post_attention_layernorm (Qwen3NextRMSNorm = GemmaRMSNorm,
--              hidden) and the final norm; the full-attention layers' q_norm
--              and k_norm (head_dim), counted over the 'full' share of
--              layer_kinds; each MoE layer's gate, ReplicatedLinear(hidden,
--              experts, quant_config=None), and shared_expert_gate,
--              ReplicatedLinear(hidden, 1, quant_config=None)
--              (Qwen3NextSparseMoeBlock, qwen3_next.py at 002d6073aa03). Not
--              counted: the Gated DeltaNet's gated norm (head_v_dim a layer,
--              its file qwen_gdn_linear_attn.py not read; 36 x 128 for
--              Qwen3-Next-80B)
-- Other families (Falcon, Qwen3.5, Mllama, Whisper, BERT, OPT, GPT-3,
-- Falcon-Mamba): none counted (their model files not read).
-- {hidden-sized vectors a layer, head_dim norms a layer, hidden-sized
-- vectors after the last layer (1 if absent)} by family
local replicated_norms = {llama = {2, 0}, mistral = {2, 0}, qwen2 = {2, 0}, qwen3 = {2, 2},
                          qwen3_moe = {2, 2}, mixtral = {2, 0}, deepseek_v2 = {2, 0},
                          deepseek_v3 = {2, 0}, phi3 = {2, 0}, gemma2 = {4, 0},
                          gemma3 = {4, 2}, gemma3_text = {4, 2}, cohere = {1, 0},
                          gpt_oss = {2, 0}, llama4 = {2, 0}, llama4_text = {2, 0},
                          phimoe = {5, 0, 2}, nemotron_h = {1, 0}, qwen3_next = {2, 0}}
-- routers of hidden x experts (+ a bias of experts: gpt-oss's nn.Linear)
local replicated_router_families = {qwen3_moe = true, mixtral = true, deepseek_v2 = true,
                                    deepseek_v3 = true, gpt_oss = true, llama4 = true, llama4_text = true,
                                    phimoe = true, qwen3_next = true, nemotron_h = true}
-- a bias of experts a router (DeepSeek-V3's and Nemotron-H's
-- e_score_correction_bias, gpt-oss's nn.Linear bias)
local router_bias_families = {deepseek_v3 = true, gpt_oss = true, nemotron_h = true}
-- a shared_expert_gate, ReplicatedLinear(hidden, 1), each MoE layer
local replicated_shared_gate_families = {qwen3_next = true}

-- Qwen3-Next's full-attention layers (the 'full' share of layer_kinds), 0
-- when the model has no layer_kinds
local function full_attention_layers(self)
  local per, full = 0, 0
  for _, k in ipairs(rawget(self, "layer_kinds") or {}) do
    per = per + (k.n or 1)
    if k.kind == "full" then full = full + (k.n or 1) end
  end
  if per == 0 then return 0 end
  return self.layers // per * full
end

--- The parameters every tensor-parallel rank holds whole (the comment
--- above): {attention = {params, shards, cols} of the replicated linear
--- layers of the attention class, other = the replicated parameters of the
--- 'other' class (norms, routers, an indexer, gpt-oss's w2_bias)}, each at
--- most its class's parameters; zeros for a family not read. ep: expert
--- parallelism, under which gpt-oss's w2_bias is narrowed to the rank's
--- experts (not whole). Model:replicated_matmul: the part of them in linear
--- layers.
function Model:replicated_params(ep)
  local out = {attention = {params = 0, shards = 0, cols = 0}, other = 0}
  local fam = rawget(self, "family")
  local norms = replicated_norms[fam]
  if not norms then return out end
  local c = self:weight_class_params()
  local H, L = self.hidden or 0, self.layers
  local other = L * (norms[1] * H + norms[2] * (self.head_dim or 0)) + (norms[3] or 1) * H
  local mla = rawget(self, "mla")
  if mla and self.heads then
    local q, kv = mla.q_lora_rank, mla.kv_lora_rank + (mla.rope_dim or 0)
    other = other + L * (mla.kv_lora_rank + (q or 0))
    local a = out.attention
    a.params = L * H * ((q or 0) + kv)
    a.shards = L * (q and 2 or 1)
    a.cols = L * H -- the fused q_a and kv_a read the hidden state once
    if mla.index_n_heads and q then
      -- V3.2's indexer: wq_b in the attention class (weight_class_params),
      -- wk, weights_proj and k_norm (weight and bias) in 'other'
      local n, d = mla.index_n_heads, mla.index_head_dim or 0
      a.params = a.params + L * q * n * d
      a.shards, a.cols = a.shards + L, a.cols + L * q
      other = other + L * (H * d + H * n + 2 * d)
    end
  end
  if self.experts and replicated_router_families[fam] then
    local moe = L - (self.dense_layers or 0)
    other = other + moe * self.experts * H
    if router_bias_families[fam] then other = other + moe * self.experts end
    -- gpt-oss's w2_bias: experts x hidden a MoE layer, whole without EP
    if fam == "gpt_oss" and not ep then other = other + moe * self.experts * H end
    if replicated_shared_gate_families[fam] and (self.shared_experts or 0) > 0 then
      other = other + moe * H
    end
  end
  if fam == "qwen3_next" then other = other + full_attention_layers(self) * 2 * (self.head_dim or 0) end
  out.other = math.min(other, c.other)
  if out.attention.params > c.attention then out.attention = {params = 0, shards = 0, cols = 0} end
  return out
end

--- Of Model:replicated_params, the parameters of linear layers, whose GEMMs
--- every rank computes whole (2 FLOPs a parameter a token; the core's
--- kvp_replicated.matmul): MLA's q_a_proj and kv_a_proj_with_mqa (the
--- attention part), the routers' gate (hidden x experts) and V3.2's
--- indexer wq_b (q_lora_rank x heads x head_dim) and wk_weights_proj
--- (hidden x (head_dim + heads)); not the norms, the indexer's k_norm or
--- DeepSeek-V3's e_score_correction_bias (no matmul). The same families and
--- modules as replicated_params (the comment above it). r: replicated_params'
--- answer when the caller has it (a deployment computes it once).
function Model:replicated_matmul(r)
  r = r or self:replicated_params()
  if r.attention.params == 0 and r.other == 0 then return 0 end
  local fam = rawget(self, "family")
  local H, L, m = self.hidden or 0, self.layers, r.attention.params
  local mla = rawget(self, "mla")
  if mla and self.heads and mla.index_n_heads and mla.q_lora_rank then
    -- wq_b is in the attention part already (replicated_params)
    local n, d = mla.index_n_heads, mla.index_head_dim or 0
    m = m + L * H * (d + n)
  end
  if self.experts and replicated_router_families[fam] then
    m = m + (L - (self.dense_layers or 0)) * self.experts * H
    if replicated_shared_gate_families[fam] and (self.shared_experts or 0) > 0 then
      m = m + (L - (self.dense_layers or 0)) * H
    end
  end
  return math.min(m, r.attention.params + r.other)
end

--- The linear layers of each weight class as vLLM holds them: {shards =
--- the matrices a checkpoint stores (q, k, v, o; gate, up, down; an expert's
--- w1, w3, w2; lm_head), cols = the input columns of the layers vLLM builds
--- from them, merged layers counted once (QKVParallelLinear and
--- MergedColumnParallelLinear read one input: qkv H and o heads x head_dim;
--- gate_up H and down intermediate; a fused MoE's w13 H and w2
--- moe_intermediate an expert; MLA: fused q_a and kv_a H with q_lora, else q
--- and kv_a H each, q_b q_lora, kv_b kv_lora, o heads x v_head_dim; lm_head
--- H)} per class over the whole model (vllm/model_executor/models/llama.py,
--- deepseek_v2.py). A format's tensor and col bits count over them
--- (formats.lua); the embeddings, vision tower and other parameters have
--- none.
function Model:class_shapes()
  local H, L = self.hidden or 0, self.layers
  local c = {attention = {shards = 0, cols = 0}, mlp = {shards = 0, cols = 0},
             experts = {shards = 0, cols = 0}, shared_experts = {shards = 0, cols = 0},
             lm_head = {shards = (self.tie_embeddings or self.no_lm_head) and 0 or 1,
                        cols = (self.tie_embeddings or self.no_lm_head) and 0 or H}}
  local mla = rawget(self, "mla")
  if mla and self.heads then
    local q = mla.q_lora_rank
    c.attention.shards = L * (q and 5 or 4)
    c.attention.cols = L * ((q and (H + q) or 2 * H) + mla.kv_lora_rank
                            + self.heads * (mla.v_head_dim or 0))
    -- DeepSeek-V3.2's indexer wq_b (weight_class_params): one matrix reading q_lora
    if mla.index_n_heads and q then
      c.attention.shards = c.attention.shards + L
      c.attention.cols = c.attention.cols + L * q
    end
  elseif self.heads and self.head_dim then
    local La = self.attention_layers or L
    c.attention.shards = 4 * La
    c.attention.cols = La * (H + self.heads * self.head_dim)
  end
  -- a two-matrix MLP's up and down read H and intermediate columns, as the
  -- merged gate_up and down of a gated one do
  local dense = self.experts and (self.dense_layers or 0) or (self.mlp_layers or L)
  c.mlp.shards = (self.mlp_matrices or 3) * dense
  c.mlp.cols = dense * (H + (self.intermediate or 0))
  if self.experts then
    local n = (L - dense) * self.experts
    c.experts.shards, c.experts.cols = 3 * n, n * (H + (self.moe_intermediate or 0))
    -- the shared experts' gate, up and down a MoE layer (one merged gate_up
    -- and a down as vLLM builds them: H and shared_width input columns)
    local sw = self:shared_width()
    if sw > 0 then
      c.shared_experts.shards = 3 * (L - dense)
      c.shared_experts.cols = (L - dense) * (H + sw)
    end
  end
  return c
end

--- The matrices and input columns of all the model's linear layers (the
--- classes of class_shapes summed).
function Model:linear_shapes()
  local shards, cols = 0, 0
  for _, s in pairs(self:class_shapes()) do shards, cols = shards + s.shards, cols + s.cols end
  return shards, cols
end

--- Bytes of weight class k in format f: its parameters' elements, and the
--- format's bits a matrix and an input column over the class's linear
--- layers (class_shapes), rounded up once (the core's
--- kvp_format_weight_bytes); an empty class has no layers.
function Model:class_bytes(k, f, params, shapes)
  if params == nil then
    -- the script's m:class_bytes(class, f): a class name and a format (or
    -- its name); an unknown class was "attempt to compare number with nil"
    params = self:weight_class_params()[k]
    if params == nil then
      util.raise("class_bytes: unknown weight class %s (known: %s)",
                 type(k) == "string" and ("'" .. util.escape(k) .. "'") or util.shown(k),
                 table.concat(M.weight_classes, ", "))
    end
    if type(f) ~= "table" then f = formats.get(f, "format") end
  end
  local sh = params > 0 and ((f.tensor or 0) > 0 or (f.col or 0) > 0)
             and (shapes or self:class_shapes())[k]
  return core.weight_bytes(f, params, sh and sh.shards or 0, sh and sh.cols or 0, self.id)
end

--- The format weight class k is held in under a deployment's weight format
--- f: a mixed checkpoint (f named as mixed_format_name) holds each class in
--- its format of weight_formats, the rest in the dtype's; any other f holds
--- every class in f.
function Model:class_format(k, f)
  local wf = rawget(self, "weight_formats")
  if wf == nil or f.name ~= self:mixed_format_name() then return f end
  if wf[k] ~= nil then return formats.get(wf[k], "weight_formats." .. k) end
  return self:dtype_format()
end

--- The name of a mixed checkpoint's formats: the dtype's format, then
--- each other format with its classes ("bf16+experts:mxfp4"); nil when the
--- model has no weight_formats.
function Model:mixed_format_name()
  local wf = rawget(self, "weight_formats")
  if wf == nil then return nil end
  local base = self:dtype_format().name
  local by = {}
  for _, k in ipairs(M.weight_classes) do
    if wf[k] ~= nil then
      local n = formats.get(wf[k], "weight_formats." .. k).name
      if n ~= base then
        by[n] = by[n] or {}
        table.insert(by[n], k)
      end
    end
  end
  local parts = {base}
  for _, n in ipairs(util.sorted_keys(by)) do parts[#parts + 1] = table.concat(by[n], ",") .. ":" .. n end
  return table.concat(parts, "+")
end

--- Bytes of all weights in format f (default: the checkpoint's own size
--- when the entry records it; else each class in its format of
--- weight_formats, the rest in the native format; else params in the
--- native format). One format for all: its tensor bits a matrix and col
--- bits an input column over every linear layer (linear_shapes), rounded
--- up once by the core's kvp_format_weight_bytes, as kvp_deploy_weight_bytes
--- and classes_size (by class) count them: NVFP4's fp32 global and input
--- scales a shard, GPTQ act order's g_idx (formats.lua).
function Model:weight_size(f)
  if f == nil and rawget(self, "weight_bytes") then return self.weight_bytes end
  local wf = rawget(self, "weight_formats")
  if f == nil and wf ~= nil then return self:classes_size(wf) end
  f = formats.get(f or self:native_format(), "weights")
  local shards, cols = 0, 0
  if (f.tensor or 0) > 0 or (f.col or 0) > 0 then shards, cols = self:linear_shapes() end
  return core.weight_bytes(f, self.params or 0, shards, cols, self.id)
end

--- Bytes of all weights with each class in its format of wf (a table of
--- class = format), the rest in the model dtype; a format's bits a matrix
--- and an input column count over the class's layers (class_bytes). An
--- error for a model marked classes_unweighable.
function Model:classes_size(wf)
  if rawget(self, "classes_unweighable") then
    util.raise("model '%s': its checkpoint cannot be weighed by class: %s", self.id,
               self.classes_unweighable)
  end
  local c, native, total = self:weight_class_params(), self:dtype_format(), 0
  local shapes = self:class_shapes()
  local uq = rawget(self, "unquantized_layers") or {}
  for _, k in ipairs(M.weight_classes) do
    local fk = wf[k] ~= nil and formats.get(wf[k], "weight_formats." .. k) or native
    local n = wf[k] ~= nil and uq[k] or 0
    local b
    if n > 0 then
      -- n of the class's Lk equal layers in the model dtype, the rest in fk
      -- (vLLM's UnquantizedLinearMethod for a skipped module: hf.lua
      -- quantized_classes)
      local Lk = k == "attention" and (self.attention_layers or self.layers) or (self.mlp_layers or self.layers)
      if (k ~= "attention" and k ~= "mlp") or (k == "mlp" and self.experts) or math.type(n) ~= "integer"
         or n > Lk or c[k] % Lk ~= 0 then
        util.raise("model '%s': unquantized_layers.%s %s: expected a whole number of layers <= %d "
                   .. "of a dense model's attention or mlp", self.id, k, util.shown(n), Lk)
      end
      local sh = shapes[k]
      local q = {[k] = {shards = sh.shards // Lk * (Lk - n), cols = sh.cols // Lk * (Lk - n)}}
      b = self:class_bytes(k, fk, c[k] // Lk * (Lk - n), q) + self:class_bytes(k, native, c[k] // Lk * n, shapes)
    else
      b = self:class_bytes(k, fk, c[k], shapes)
    end
    if total + b < total then util.raise("model '%s': weight bytes overflow", self.id) end
    total = total + b
  end
  return total
end

function Model:kinds() return self.core:kinds() end
function Model:layer(i) return self.core:layer(i) end
function Model:__tostring() return "kvplan.Model '" .. self.id .. "'" end

-- ---- the catalog ----------------------------------------------------------

--- M.add(t): add a model to the catalog under its id and aliases;
--- M.all(): every catalogued model; M.get(name): by id or alias, any case;
--- M.find(name): the same or nil (a hash lookup, no suggestions).
local catalog = require "kvplan.catalog"
local catalog_get
M.add, M.all, catalog_get, M.find = catalog.new("model", Model, function(t) return M.new(t) end,
                                                "kvplan.catalog.models_data")

-- Models read from files, by the name that named them: read once a run
local read_models = {}

--- M.get(name): a Model or table passes through (a table is made one);
--- a name is the catalog's id or alias first, else a Hugging Face
--- directory or config.json (from_hf), else a repo id ORG/NAME (or
--- ORG/NAME@REVISION) read from the local Hugging Face cache (from_cache).
--- An unknown name is an error with the closest catalog names, and for a
--- repo id the cache directory looked in and how to download it.
function M.get(name)
  if type(name) ~= "string" then return catalog_get(name) end
  local m = M.find(name) or read_models[name]
  if m then return m end
  local hf = require "kvplan.hf"
  if hf.is_checkpoint(name) then
    m = hf.from_hf(name)
  else
    local repo, rev = hf.repo_id(name)
    if repo == nil then
      -- a path: what is there, not the closest catalog names ("unknown model
      -- '/tmp/x' (closest: 'phi-4' ...)" for a directory without config.json)
      local why = hf.not_checkpoint(name)
      if why ~= nil then
        local near = catalog.suggest(name, M.all())
        if not near:find("^ %(did you mean") then near = "" end
        util.raise("unknown model '%s'%s: not in the catalog, and %s", util.escape(name), near, why)
      end
      return catalog_get(name) -- unknown: raises with suggestions
    end
    -- a catalog name one typo away is suggested; the closest of the rest are noise here
    local near = catalog.suggest(name, M.all())
    if not near:find("^ %(did you mean") then near = "" end
    m = hf.from_cache(repo, rev, {
      unknown = "unknown model '" .. util.escape(name) .. "'" .. near .. ": not in the catalog, and it",
    })
  end
  read_models[name] = m
  return m
end

--- The facts of model m as a plain table, for a derived model: every field
--- but the checkpoint's own (its name and aliases, weight_bytes and
--- weight_source: a changed architecture is another checkpoint). vocab,
--- intermediate and the experts' sizes are among them: vLLM's activation
--- peak is predicted from them (engines.shape), and a model built from a
--- list of the architecture fields alone was predicted no activation at all
--- (Llama-3.1-8B on an H100: KV budget 56.12 GiB, 51.41 GiB with them).
function M.facts(m)
  if getmetatable(m) ~= Model then
    util.raise("facts needs a model (kv.model(...)), got %s", type(m))
  end
  local t = {}
  for k, v in pairs(m) do
    if allowed[k] and k ~= "aliases" and k ~= "weight_bytes" and k ~= "weight_source" and k ~= "name" then
      t[k] = v
    end
  end
  return t
end

--- A Model from a Hugging Face model directory or config.json (local files
--- only; see hf.lua).
function M.from_hf(path, opts) return require("kvplan.hf").from_hf(path, opts) end

--- A Model from the local Hugging Face cache's snapshot of repo ORG/NAME
--- (see hf.lua from_cache).
function M.from_cache(repo, revision, opts) return require("kvplan.hf").from_cache(repo, revision, opts) end

--- Add the models of a CSV file to the catalog (see catalog_csv.lua).
function M.load_csv(path) return require("kvplan.catalog_csv").load_models(path) end

-- a method called with something else as self: an error at the user's line
util.methods(Model)

return M
