-- stdlib/kvplan/deploy.lua: deployments (a model on GPUs of one kind) and
-- their ledgers.
-- Stdlib layer: names are resolved and defaults applied here; the binding
-- checks every field once and the core computes the ledger (engine/core/ledger.c).
--
-- Besides the model, the GPU and the engine limits, a deployment carries the
-- settings the optimizations of kvplan.optim change (all off by default):
-- budget rule, allocation, KIVI window, eviction, speculative decoding,
-- prefix and prompt sharing, offload and the request-length distribution.
-- `optim = combination` applies a combination of optimizations first.

local core = require "kvplan.core"
local util = require "kvplan.util"
local units = require "kvplan.units"
local formats = require "kvplan.formats"
local models = require "kvplan.models"
local gpus = require "kvplan.gpus"
local engines = require "kvplan.engines"
local pcore = require "kvplan.predict_core"

local M = {}

local Deployment = {}
Deployment.__index = Deployment
Deployment.__name = "kvplan.Deployment"
M.Deployment = Deployment

-- Budget rules: how much of the GPU an engine lets the KV cache have
-- (engine/core/ledger.c has the formulas and their sources), with their
-- default blocks: vllm 16 (vllm/config/cache.py), sglang's page_size 1
-- (server_args.py), trtllm 64 tokens (docs/source/reference/memory.md's log).
-- A budget's `reserves` (a function of yours, nil by default) is an engine
-- rule in Lua: reserves(d, opts) -> {activation =, overhead =,
-- utilization =, max_num_seqs =} (bytes, a fraction, a count; each
-- optional) replaces the core's predictions for the deployments under that
-- budget (a value given in the options still wins); a sweep of such
-- deployments builds every one in Lua (sweep.lua).
M.budgets = {
  vllm = {utilization = 0.9, block = 16},
  sglang = {fractions = engines.sglang_fractions, block = 1},
  trtllm = {utilization = 0.9, block = 64},
}

local predict_reserved

-- kv.deploy's keys: the field registry (fields.lua) declares each once
local registry = require "kvplan.fields"
local fields = registry.names
M.fields = fields

local evict_fields = {sinks = true, recent = true, keep = true, layers = true}
local spec_fields = {tokens = true, acceptance = true, draft = true, heads = true, layers = true,
                     weights = true, weight_bytes = true, hidden_states = true}
local offload_fields = {host = true, pcie_gbps = true}

local function optional_count(v, field, min)
  if v == nil then return nil end
  return util.count(v, field, min or 0)
end

-- Eviction options -> the core's table: keep as millionths.
local function resolve_evict(e, layers)
  if e == nil then return nil end
  if type(e) ~= "table" then util.raise("field 'evict' must be a table, got %s", type(e)) end
  util.check_keys(e, evict_fields, "evict")
  local out = {sinks = optional_count(e.sinks, "sinks"), recent = optional_count(e.recent, "recent")}
  if e.keep ~= nil then
    local k = e.keep
    if type(k) ~= "number" or not (k > 0 and k <= 1) then
      util.raise("field 'keep' must be in (0, 1], got %s", util.shown(k))
    end
    out.keep_ppm = math.max(1, math.floor(k * 1000000 + 0.5))
  end
  if e.layers ~= nil then
    local l = e.layers
    if type(l) == "function" then
      local list = {}
      for i = 1, layers do list[i] = l(i, layers) end
      l = list
    end
    if type(l) ~= "table" or #l ~= layers then
      util.raise("field 'evict.layers' must list a budget for each of the %d layers (or be a "
                 .. "function of the layer), got %s", layers,
                 type(l) == "table" and (#l .. " values") or type(l))
    end
    out.layers = {}
    for i, v in ipairs(l) do out.layers[i] = util.count(v, "evict.layers[" .. i .. "]", 0) end
  end
  return out
end

-- The one KV layer shape of a draft model, and how many layers hold it.
local function draft_shape(m)
  local shape, n, key
  for i = 1, m.layers do
    local l = m:layer(i)
    if l.kind ~= "none" then
      local k = string.format("%s/%s/%s/%s/%s/%s", l.kind, l.kv_heads, l.head_dim, l.head_dim_v,
                              l.kv_lora_rank, l.rope_dim)
      if (l.kind ~= "full" and l.kind ~= "mla") or (key ~= nil and k ~= key) then
        util.raise("draft model '%s' has layers of more than one shape; kvplan models a draft "
                   .. "whose KV layers are all full attention or all MLA of one shape", m.id)
      end
      shape, key, n = l, k, (n or 0) + 1
    end
  end
  if shape == nil then util.raise("draft model '%s' holds no KV", m.id) end
  return shape, n
end

--- Model m with each state run that gives spec_state_bytes grown by that
--- many bytes per speculative token (vLLM's conv rows), or m itself when
--- none does or tokens is no count above 0 (resolve_spec checks it).
function M.speculative_states(m, tokens)
  local runs = rawget(m, "layer_kinds")
  if math.type(tokens) ~= "integer" or tokens < 1 or type(runs) ~= "table" then return m end
  local out, changed = {}, false
  for i, r in ipairs(runs) do
    if type(r) == "table" and r.kind == "state" and math.type(r.spec_state_bytes) == "integer"
       and math.type(r.state_bytes) == "integer" then
      local c = util.copy(r)
      local add = r.spec_state_bytes * tokens
      if add // tokens ~= r.spec_state_bytes or c.state_bytes > math.maxinteger - add then
        util.raise("model '%s': layer_kinds[%d]'s state with %d speculative tokens overflows 64 bits",
                   util.shown(m.id), i, tokens)
      end
      c.state_bytes = c.state_bytes + add
      out[i], changed = c, true
    else
      out[i] = r
    end
  end
  if not changed then return m end
  local t = models.facts(m)
  t.layer_kinds = out
  t.id, t.hf, t.weight_bytes, t.weight_source = m.id, rawget(m, "hf"), rawget(m, "weight_bytes"),
                                                 rawget(m, "weight_source")
  return models.get(t)
end

-- Speculative options -> the core's table. A draft model brings its own
-- weights and KV layers; draft heads (EAGLE: Li et al., ICML 2024; MTP:
-- DeepSeek-V3 report section 2.2) are `layers` decoder layers of the target's
-- shape plus a 2 hidden x hidden projection, their weights estimated as
-- layers x (params / model layers + 2 hidden^2) in the deployment's weight
-- format unless weight_bytes is given.
local function resolve_spec(s, d)
  if s == nil then return nil end
  if type(s) ~= "table" then util.raise("field 'speculative' must be a table, got %s", type(s)) end
  util.check_keys(s, spec_fields, "speculative")
  local out = {tokens = util.count(s.tokens, "speculative.tokens")}
  if s.draft ~= nil and s.heads ~= nil then
    util.raise("speculative decoding takes a 'draft' model or draft 'heads', not both")
  end
  local wb = s.weight_bytes ~= nil and units.bytes(s.weight_bytes, "speculative.weight_bytes")
  if s.draft ~= nil then
    local dm = models.get(s.draft)
    local shape, n = draft_shape(dm)
    out.draft, out.draft_layers = shape, n
    out.draft_weight_bytes = wb or dm:weight_size(s.weights and formats.get(s.weights, "weights"))
    -- its all-reduces' message a token (roofline.c kvp_draft_time); absent:
    -- the target's
    out.draft_hidden = dm.hidden
  elseif s.heads == "extract_hidden_states" then
    -- vLLM's extract_hidden_states method (vllm/model_executor/models/
    -- extract_hidden_states.py at 055e47c28003): no draft weights, one
    -- cache-only layer whose HiddenStateCacheSpec (an MLAAttentionSpec) pages
    -- hidden_states (len(eagle_aux_hidden_state_layer_ids)) x hidden elements a
    -- token in the model dtype whatever the KV format, whole on every TP rank;
    -- num_speculative_tokens must be 1 (ExtractHiddenStatesProposer)
    if out.tokens ~= 1 then
      util.raise("field 'speculative.tokens' must be 1 with heads 'extract_hidden_states' "
                 .. "(vLLM asserts num_speculative_tokens == 1), got %d", out.tokens)
    end
    local n = util.count(s.hidden_states, "speculative.hidden_states", 1)
    local hidden = d.model.hidden
    if not hidden then util.raise("model '%s' gives no hidden size", d.model.id) end
    out.draft = {kind = "mla", kv_lora_rank = n * hidden, rope_dim = 0, kv_auto = 1}
    out.draft_layers = 1
    out.draft_weight_bytes = 0
    out.hidden_cache = true
  elseif s.heads ~= nil then
    if s.heads ~= "eagle" and s.heads ~= "mtp" then
      util.raise("field 'speculative.heads' must be 'eagle', 'mtp' or 'extract_hidden_states', "
                 .. "got %s", util.shown(s.heads))
    end
    local n = util.count(s.layers or 1, "speculative.layers")
    local m = d.model
    for i = 1, m.layers do
      local l = m:layer(i)
      if l.kind == "full" or l.kind == "mla" then out.draft = l break end
    end
    if out.draft == nil then util.raise("model '%s' has no full or MLA layer to copy", m.id) end
    out.draft_layers = n
    if not wb then
      local per = (m.params or 0) // m.layers + 2 * (m.hidden or 0) * (m.hidden or 0)
      wb = formats.bytes(s.weights and formats.get(s.weights, "weights") or d.weights, n * per)
    end
    out.draft_weight_bytes = wb
  elseif wb then
    util.raise("field 'speculative.weight_bytes' needs a 'draft' model or draft 'heads'")
  end
  return out
end

-- Activation peak and non-torch memory: given, or predicted for vLLM's
-- budget from the model, the GPU and the engine version's defaults
-- (engines.lua, engine/core/predict.c). d.activation_source and
-- d.overhead_source say which: "given", "predicted", or "none" (not
-- predicted: another budget rule, or a model without the shape facts; 0 is
-- used and d.prediction_note says why).
--
-- kv.deploy resolves the engine rule here (which engine, its release's row,
-- usage, flags, the model's shape, the GPU's facts: the inputs of
-- kvp_engine_rule in engine/core/kvplan.h), calls the core once
-- (predict_core.reserves, engine/core/predict.c kvp_predict_deploy) and
-- stores its answers; a sweep hands the same rule to the core, which
-- predicts again per deployment of its axes.

-- Weights as vLLM loads them: MXFP4 experts repacked by the MoE kernel
-- vLLM picks on the GPU (engines.mxfp4_backends: padded sizes, fp32
-- biases, swizzled scales; the arithmetic is the core's,
-- kvp_mxfp4_weight_bytes). Only for a checkpoint weighed from the model
-- (no weights or weight_bytes given) and experts on every GPU of the TP
-- group (not with data or expert parallelism). d.weights_source says
-- "checkpoint" or "loaded (<backend>)", d.mxfp4_backend the kernel.
-- The layout of MXFP4 kernel `backend` (engines.mxfp4_backends) as the
-- engine rule's fields.
local function mxfp4_layout(backend)
  local b = engines.mxfp4_backends[backend]
  if b == nil then
    util.raise("unknown mxfp4_backend '%s'%s", util.shown(backend),
               util.suggest(util.shown(backend), util.sorted_keys(engines.mxfp4_backends)))
  end
  return {align_inter = b.inter, align_hidden = b.hidden, tile = b.tile, scale_rows = b.scale_rows,
          fp32_bias = b.fp32_bias, keeps_scales = b.keeps_scales}
end

local function mxfp4_rule(d, opts, rule)
  local wf = rawget(d.model, "weight_formats")
  local mx = wf and wf.experts and formats.get(wf.experts, "weight_formats.experts").name == "mxfp4"
  if opts.mxfp4_backend ~= nil and not mx then
    util.raise("field 'mxfp4_backend' needs a model with MXFP4 experts, '%s' has none", d.model.id)
  end
  if not mx or opts.weights ~= nil or opts.weight_bytes ~= nil or d.weight_bytes == nil then return end
  d.weights_source = "checkpoint"
  if opts.enable_expert_parallel or (opts.data_parallel_size or 1) > 1 or (opts.ep_size or 1) > 1 then
    d.weights_note = "MXFP4 repacking not modelled with data or expert parallelism"
    return
  end
  local backend, why = opts.mxfp4_backend, nil
  local bundled = engines.vllm_bundles_triton_kernels(opts.engine_version)
  if backend == nil then backend, why = engines.mxfp4_backend(d.gpu.id and d.gpu or nil, bundled) end
  local m = d.model
  d.mxfp4_backend, d.weights_note = backend, why
  rule.mxfp4 = mxfp4_layout(backend)
  rule.mxfp4.experts, rule.mxfp4.hidden, rule.mxfp4.inter = m.experts, m.hidden, m.moe_intermediate
  rule.mxfp4.layers, rule.mxfp4.ckpt_bytes = m.layers - (m.dense_layers or 0), d.weight_bytes
  -- the kernel follows the GPU unless named (a sweep's GPU axis sets it,
  -- the release's layout of the two its facts carry)
  rule.mxfp4.by_gpu = opts.mxfp4_backend == nil
  rule.mxfp4.bundled = bundled
end

-- Weights as vLLM holds a bitsandbytes checkpoint weighed from its classes
-- (no weights, weight_bytes or checkpoint bytes given): double-quantized
-- absmax (bnb-4bit-dq) becomes fp32 (bnb-4bit) from the release
-- engines.vllm_bnb_dequant_release on (engines.lua has the source).
local function bnb_rule(d, opts)
  local m = d.model
  local wf = rawget(m, "weight_formats")
  if wf == nil or opts.weights ~= nil or opts.weight_bytes ~= nil or rawget(m, "weight_bytes") then
    return
  end
  local loaded, any = {}, false
  for k, f in pairs(wf) do
    local name = formats.get(f, "weight_formats." .. k).name
    if name == "bnb-4bit-dq" then loaded[k], any = "bnb-4bit", true else loaded[k] = f end
  end
  if not any then return end
  if not engines.vllm_at_least(opts.engine_version, engines.vllm_bnb_dequant_release) then
    d.weights_source = "checkpoint"
    return
  end
  d.weight_bytes = m:classes_size(loaded)
  d.weights_source = "loaded (bitsandbytes absmax dequantized to fp32)"
end

-- V0's MLA backend of 0.7.1-0.7.x materializes the absorbed decode
-- matrices after loading, in the activation dtype, beside the checkpoint's
-- own q_proj, kv_b_proj and o_proj (kept for prefill):
-- MLACommonImpl.process_weights_after_loading (vllm/attention/backends/mla/
-- utils.py) with VLLM_MLA_PERFORM_MATRIX_ABSORPTION on (the default) stores
-- W_Q_UK (Lq, N x Lkv), W_QR (Lq, N x R) and W_UV_O (N x Lkv, H), Lq the
-- q_lora_rank or the hidden size, N the heads of a rank, Lkv the
-- kv_lora_rank, R the rope dim; an fp8 checkpoint requantizes W_Q_UK and
-- W_UV_O to fp8 with scales (not modelled: no term). The releases: from
-- vllm-project/vllm#12528 (merged 2025-01-30 as cabaf4eff3c7, v0.7.1) until
-- #14770 ("MLA get rid of materialization", merged 2025-03-13 as
-- 9532c49836ad: W_UV and W_UK_T copies instead, not modelled), so the 0.7
-- row (engines.vllm_mla_absorb_releases). They count in "model weights take",
-- measured after loading. Only for weights kvplan weighs (no weight_bytes).
local function mla_absorb_rule(d, opts, version)
  local m = d.model
  local mla = rawget(m, "mla")
  if not d.vllm_v0 or mla == nil or opts.weight_bytes ~= nil or (m:kinds().mla or 0) == 0 then return end
  local r = engines.vllm_mla_absorb_releases
  local v = opts.engine_version or version
  if not engines.vllm_at_least(v, r.from) or engines.vllm_at_least(v, r.to) then return end
  local wf = rawget(m, "weight_formats")
  local af = (wf and wf.attention) or (opts.weights and d.weights)
  if af and formats.get(af, "weights").name:match("^fp8") then return end
  local lq, n, lkv = mla.q_lora_rank or m.hidden, m.heads, mla.kv_lora_rank
  local per = lq * n * lkv + lq * n * (mla.rope_dim or 0) + n * lkv * m.hidden
  local extra = m:kinds().mla * per * engines.act_bytes(m)
  d.weight_bytes = (d.weight_bytes or m:weight_size(opts.weights and d.weights or nil)) + extra
  d.mla_absorbed_bytes = extra
  d.weights_source = (d.weights_source and (d.weights_source .. " ") or "")
                     .. "+ V0 MLA's absorbed W_Q_UK, W_QR, W_UV_O"
end

-- vLLM's vocabulary padding (Model:vocab_padding_params: VocabParallelEmbedding
-- and ParallelLMHead allocate the vocabulary padded to a multiple of 64, split
-- over the TP ranks): the padding rows' bytes, in the embeddings' and
-- lm_head's formats, added to the weights (split over tp with them: the padded
-- rows divide evenly, vLLM asserts it). They count in "Model loading took",
-- measured after loading. Only for weights kvplan weighs (no weight_bytes).
local function vocab_pad_rule(d, opts)
  if opts.weight_bytes ~= nil then return end
  local m = d.model
  local p = m:vocab_padding_params()
  if p.embeddings == 0 and p.lm_head == 0 then return end
  local wf = rawget(m, "weight_formats")
  local none = {embeddings = {shards = 0, cols = 0}, lm_head = {shards = 0, cols = 0}}
  local extra = 0
  for _, k in ipairs({"embeddings", "lm_head"}) do
    if p[k] > 0 then
      local f = opts.weights ~= nil and d.weights
                or (wf and wf[k] and formats.get(wf[k], "weight_formats." .. k))
                or (wf and m:dtype_format()) or d.weights
      -- the padding adds rows, not matrices: no scales a shard again
      extra = extra + m:class_bytes(k, f, p[k], none)
    end
  end
  d.weight_bytes = (d.weight_bytes or m:weight_size(opts.weights and d.weights or nil)) + extra
  d.vocab_padding_bytes = extra
  d.weights_source = (d.weights_source and (d.weights_source .. " ") or "")
                     .. "+ the vocabulary padded to a multiple of 64"
end

--- What an engine rule reads of GPU g (a catalog GPU) besides its memory:
--- {a100 = its name says A100, p2p = its copies reach each other peer to
--- peer (engines.peer_to_peer), nvls = NCCL may run NVLS on it
--- (engines.nvls_capable), mx = the layout of the MXFP4 kernel vLLM
--- picks on it, mx_bundled = the same in a release that ships
--- triton_kernels, blas_workspace = torch's cuBLAS workspace on it
--- (engines.cublas_workspace)}. A sweep's GPU axis carries one per GPU.
function M.gpu_facts(g)
  return {a100 = engines.names_a100(g.name or g.id), p2p = engines.peer_to_peer(g),
          nvls = engines.nvls_capable(g),
          mx = mxfp4_layout((engines.mxfp4_backend(g, false))),
          mx_bundled = mxfp4_layout((engines.mxfp4_backend(g, true))),
          blas_workspace = engines.cublas_workspace(g)}
end

-- The activation model's inputs from the model (engines.shape) and the
-- profile's settings, or nil and why.
local function profile_shape(m, settings)
  local s, why = engines.shape(m)
  if s == nil then return nil, why end
  s.act_bytes = engines.act_bytes(m)
  for k, v in pairs(settings) do s[k] = v end
  return s
end

-- A vision tower's rule (its config, models.lua `vision`), or nil and why
-- when it lacks a field; nil when the run encodes nothing.
local function vision_rule(m, limit, mm)
  local v = rawget(m, "vision")
  if v == nil or mm == false then return nil end
  for _, k in ipairs{"hidden", "intermediate", "patch", "out_hidden"} do
    if v[k] == nil then return nil, "model '" .. m.id .. "': vision tower gives no " .. k end
  end
  if v.max_pixels == nil and v.image_size == nil then
    return nil, "model '" .. m.id .. "': the vision tower gives neither max_pixels nor image_size"
  end
  return {hidden = v.hidden, intermediate = v.intermediate, gated = v.gated or false,
          proj_hidden = v.proj_hidden or 0, out_hidden = v.out_hidden, patch = v.patch,
          merge = v.merge or 1, max_pixels = v.max_pixels, image_size = v.image_size,
          class_token = v.class_token or false, in_channels = v.in_channels or 3,
          temporal_patch = v.temporal_patch or 1, video = v.video or false, limit = limit}
end

-- TensorRT-LLM named as the engine (engine = "trtllm" or an engine_version
-- under its budget): its release's backend, tokens per block, the dummy run
-- of max_num_tokens and the non-torch memory (engines.lua, "TensorRT-LLM").
local function trtllm_rule(d, opts, rule)
  if opts.max_num_seqs ~= nil then
    util.raise("field 'max_num_seqs' describes vLLM's profiling; TensorRT-LLM's dummy run is "
               .. "max_num_tokens (max_num_batched_tokens) tokens")
  end
  local row, version = engines.trtllm_version(opts.engine_version)
  d.engine_version = version
  local backend = opts.backend or row.backend
  if backend ~= "pytorch" and backend ~= "tensorrt" then
    util.raise("field 'backend' must be 'pytorch' or 'tensorrt', got '%s'", util.escape(util.shown(backend), 64))
  end
  d.trtllm_backend = backend
  if opts.block == nil then d.block = engines.trtllm_tokens_per_block[backend] end
  rule.trtllm, rule.profiled = true, true
  rule.tokens_given = opts.max_num_batched_tokens ~= nil
  rule.default_tokens = engines.trtllm_defaults.max_num_tokens
  if d.activation == nil and backend == "tensorrt" then
    d.activation, d.activation_source = 0, "none"
    d.prediction_note = "TensorRT-LLM's engine path: the activation memory is the TensorRT "
                        .. "engine's, sized by its builder; give 'activation'"
  elseif d.activation == nil then
    local s, why = profile_shape(d.model, engines.trtllm_profile)
    if s then rule.activation, rule.shape = true, s
    else d.activation, d.activation_source, d.prediction_note = 0, "none", why end
  end
  if d.overhead == nil then
    -- vLLM's rule with what TensorRT-LLM counts (engines.trtllm_non_torch)
    rule.overhead = "vllm"
    rule.nccl_counted = engines.trtllm_non_torch.nccl_counted
    rule.context_counted = engines.trtllm_non_torch.context_counted
    rule.gpu_p2p = engines.peer_to_peer(d.gpu)
    rule.gpu_nvls = engines.nvls_capable(d.gpu)
  end
end

-- vLLM's defaults of release row `row` (max_num_batched_tokens,
-- max_num_seqs): the row's constants, the usage, the GPU's name, what is
-- given.
local function limits_rule(d, opts, row, rule)
  rule.profiled = true
  rule.v1, rule.offline = row.v1, opts.usage == "offline"
  rule.gpu_a100 = engines.names_a100(d.gpu.name or d.gpu.id)
  rule.chunked_tokens, rule.big_seqs = row.chunked_tokens, row.big_seqs
  rule.tokens_given = opts.max_num_batched_tokens ~= nil
  rule.seqs_given = opts.max_num_seqs ~= nil
end

-- vLLM's rotary cos/sin caches (engines.vllm_rotary): buffers built with
-- the model, in "Model loading took", whole on every GPU; d.rotary_bytes and
-- d.rotary_tables. Only for weights kvplan weighs: a given weight_bytes is
-- the loaded bytes (as for the rules above).
local function rotary_rule(d, opts)
  if opts.weight_bytes ~= nil then return end
  local bytes, tables = engines.vllm_rotary(d.model)
  if bytes > 0 then d.rotary_bytes, d.rotary_tables = bytes, tables end
end

-- SGLang's weights as its free-memory reading sees them ("Load weight end
-- ... mem usage"): the rotary cos/sin tables of engines.vllm_rotary, kept in
-- float32 on CUDA (python/sglang/srt/layers/rotary_embedding.py at
-- sgl-project/sglang 00a66ebe136b: "cache needs to be in FP32", cast to the
-- model dtype only when not _is_cuda), and the caching allocator's segments
-- beyond the parameters (engines.sglang_alloc_slack) at pp 1 without EP or
-- attention DP; d.rotary_bytes, d.rotary_tables, d.sglang_alloc_bytes. Only
-- for weights kvplan weighs (a given weight_bytes is the loaded bytes).
local function sglang_weights_rule(d, opts)
  if opts.weight_bytes ~= nil then return end
  d.sglang_weighed = true -- a sweep's C axes take the rule again (M.sglang_weights)
  local bytes, tables, slack = M.sglang_weights(d, d.gpu, d.tp, d.pp, d.weights)
  if bytes then d.rotary_bytes, d.rotary_tables = bytes, tables end
  d.sglang_alloc_bytes = slack
end

--- SGLang's weights beyond the parameters on one GPU of deployment d's
--- model and parallel layout (its EP and attention DP) at GPU `gpu`, tp, pp
--- and weight format `weights`: the rotary tables' bytes and the tables,
--- and the allocator's slack, each nil when none (kv.deploy's rule above;
--- kvplan.sweep's table of them along its C axes).
function M.sglang_weights(d, gpu, tp, pp, weights)
  local m = d.model
  local bytes, tables = engines.vllm_rotary(m)
  local total, out
  if bytes > 0 then
    local cuda = gpu.vendor ~= "amd"
    out, total = {}, 0
    for i, t in ipairs(tables) do
      local e = cuda and 4 or t.elem
      out[i] = {type = t.type, rows = t.rows, dim = t.dim, elem = e, bytes = t.rows * t.dim * e,
                mrope = t.mrope}
      total = total + out[i].bytes
    end
  end
  local slack
  if (pp or 1) == 1 and not d.sglang_ep and not d.sglang_attn_dp then
    slack = engines.sglang_alloc_slack(m, tp, function(k) return m:class_format(k, weights) end,
                                       total)
    if not (slack and slack > 0) then slack = nil end
  end
  return total, out, slack
end

-- Whether weight class k (mlp, attention) runs bitsandbytes 4-bit linear
-- layers, whose profile dequantizes each shard to a temporary (engine/core/
-- predict.c, dequant_mlp and dequant_attn; the sources are there).
local function bnb4_class(d, k)
  local name = d.model:class_format(k, d.weights).name
  return name == "bnb-4bit" or name == "bnb-4bit-dq"
end

-- vLLM's rule: the release's row, the GPU's name, usage and flags.
local function vllm_rule(d, opts, rule)
  local row, version = engines.vllm_version(opts.engine_version)
  if opts.vllm_use_v1 ~= nil then
    row, version = engines.vllm_engine(row, version, opts.vllm_use_v1)
  else
    -- VLLM_USE_V1 unset: the release's oracle may fall back to V0 itself
    local why = engines.vllm_v0_fallback(row, version, d.gpu, d.model, d.kv)
    if why then
      row, version = engines.vllm_engine(row, version, false)
      d.vllm_v0_reason = "vLLM " .. version .. " falls back to V0: " .. why
    end
  end
  d.engine_version = version
  d.vllm_v0 = not row.v1 or nil
  -- V0's CacheEngine on CUDA pads each MLA entry to 256 bytes of the model
  -- dtype (576 -> 640 elements) in 0.7.2-0.7.x (vllm-project/vllm#12676 to
  -- #14842: engines.vllm_mla_align_release and _end; the rule: engine/core/
  -- vllm_kv.c kvp_vllm_mla_entry); V1 does not
  if d.vllm_v0 and (d.model:kinds().mla or 0) > 0 and (d.gpu.vendor or "nvidia") == "nvidia"
     and engines.vllm_at_least(opts.engine_version or version, engines.vllm_mla_align_release)
     and not engines.vllm_at_least(opts.engine_version or version, engines.vllm_mla_align_end) then
    d.vllm_mla_entry_align = 256 // engines.act_bytes(d.model)
  end
  -- what the release prints as "GPU KV cache size" (the ledger's
  -- vllm_kv_cache_tokens follows it: engine/lua/core_lua.c)
  d.vllm_log_tokens_from_concurrency = row.tokens_from_concurrency or nil
  -- what the release's startup check plans against (engines.lua
  -- check_override, check_null_block; the rule: engine/core/vllm_kv.c)
  d.vllm_check_override = row.check_override or nil
  d.vllm_check_null_block = row.check_null_block or nil
  -- how the release raises the block of a model of attention and Mamba
  -- layers (engines.lua block_grain; the rule: engine/core/vllm_kv.c)
  d.vllm_block_grain = row.block_grain or nil
  -- how the release's budget sees memory others hold (system_memory;
  -- engine/core/ledger.c, starts.c): counted as non-torch memory where
  -- non-torch is all used memory less torch's (context_counted: 0.6.0-0.6.4,
  -- V1 of 0.7, gpu_worker.py at 0012cf691b7e); V1 from 0.8 refuses to start
  -- when free memory < total x utilization (gpu_worker.py init_device at
  -- 35d5cda123ec), the budget unchanged; V0 from 0.6.5 (memory_profiling's
  -- baseline at init_device, no such check) neither
  d.vllm_system_rule = row.context_counted and 1 or (row.v1 and 0 or 2)
  d.max_num_seqs = opts.max_num_seqs and util.count(opts.max_num_seqs, "max_num_seqs")
  -- no CUDA graphs: every step eager (sim.lua cuda_graphs)
  d.enforce_eager = opts.enforce_eager or nil
  -- a model with Mamba layers refuses a max_num_seqs above the pool's
  -- blocks under full CUDA graphs (engines.lua mamba_seqs_check; the rule:
  -- engine/core/starts.c): V1 of those releases, not enforce_eager
  d.vllm_mamba_seqs_check = (row.mamba_seqs_check and row.v1 and not d.enforce_eager) or nil
  -- the release takes its CUDA graphs' measured estimate off the KV budget
  -- (engines.lua cudagraph_estimate): not modelled, said by the ledger
  d.vllm_cudagraph_estimate = (row.cudagraph_estimate and row.v1 and not d.enforce_eager) or nil
  -- vLLM's --max-seq-len-to-capture (sim.lua graph_seq_max): V0 reads it,
  -- V1 accepts and ignores it, 0.11 on has no such argument
  -- (vllm-project/vllm#25543; engines.lua vllm_v0_max_seq_len_to_capture)
  if opts.max_seq_len_to_capture ~= nil then
    local n = util.count(opts.max_seq_len_to_capture, "max_seq_len_to_capture", 1)
    if engines.vllm_at_least(version:match("^[%d.]+"), engines.vllm_max_seq_len_to_capture_end) then
      util.raise("field 'max_seq_len_to_capture' %d: vLLM %s has no such argument (removed in %s, "
                 .. "vllm-project/vllm#25543)", n, version, engines.vllm_max_seq_len_to_capture_end)
    end
    d.max_seq_len_to_capture = n
  end
  -- --async-scheduling (sim.host_waits): V1's AsyncScheduler, from
  -- vllm-project/vllm#19970 ("Implement Async Scheduling", 2025-06-23),
  -- first released in 0.10.0 (kvplan's 0.10 row; 0.9.1 and 0.9.2 are the 0.9
  -- row, refused); unset: the release row's default (engines.lua)
  if opts.async_scheduling ~= nil then
    local a = opts.async_scheduling
    if type(a) ~= "boolean" then
      util.raise("field 'async_scheduling' must be true or false, got %s", util.shown(a))
    end
    if not row.v1 or not engines.vllm_at_least(version:match("^[%d.]+"), "0.10") then
      util.raise("field 'async_scheduling' = %s: vLLM %s%s has no --async-scheduling (V1 from 0.10.0 "
                 .. "on, vllm-project/vllm#19970); expected a release of 0.10 or later on V1",
                 util.shown(a), version, row.v1 and "" or " (V0 engine)")
    end
    d.async_scheduling = a
  end
  -- vLLM's scheduler never runs more than max_num_seqs requests (vllm/v1/
  -- core/sched/scheduler.py: schedule() stops taking waiting requests at
  -- len(self.running) == self.max_num_running_reqs): a deployment that
  -- names the engine (engine = "vllm", or an engine_version) has its
  -- default cap its concurrency answers, limit "max_num_seqs"; the budget
  -- rule alone (budget = "vllm", the default) sizes memory and caps nothing
  local named = opts.engine == "vllm" or opts.engine_version ~= nil
  if d.max_num_seqs then
    d.max_num_seqs_source = "given"
  elseif named then
    d.max_num_seqs_source = "default"
  end
  -- vllm/config/vllm.py: chunked local attention turns the hybrid KV cache
  -- manager off when EAGLE drafts, and, in the releases whose row says
  -- chunked_hybrid = false, unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_
  -- KV_CACHE is set (option allow_chunked_local_attn_with_hybrid_kv_cache);
  -- like max_num_seqs, applied when the deployment names the engine
  local allow = opts.allow_chunked_local_attn_with_hybrid_kv_cache
  if named and opts.disable_hybrid_kv_cache_manager == nil and row.chunked_hybrid ~= nil
     and (d.model:kinds().chunked or 0) > 0 then
    local eagle = type(opts.speculative) == "table" and opts.speculative.heads == "eagle"
    if eagle or (row.chunked_hybrid == false and not allow) then
      d.hybrid_off_reason = eagle and "chunked local attention with EAGLE"
        or ("chunked local attention in vLLM " .. version
            .. " without VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE")
    end
  end
  -- releases without V1's hybrid KV cache manager (row hybrid_manager =
  -- false: V0, and V1 before vllm-project/vllm#17996) keep one KV type:
  -- sliding and chunked local layers beside full ones hold every token, as
  -- disable_hybrid_kv_cache_manager does later; applied like the rules above
  -- when the deployment names the engine
  local kinds = d.model:kinds()
  if opts.disable_hybrid_kv_cache_manager == false and row.hybrid_manager == false and named then
    util.raise("field 'disable_hybrid_kv_cache_manager' = false: vLLM %s has no hybrid KV cache "
               .. "manager to keep on (it came with 0.10's row, vllm-project/vllm#17996)", version)
  end
  if named and opts.disable_hybrid_kv_cache_manager == nil and row.hybrid_manager == false
     and d.hybrid_off_reason == nil then
    if (kinds.state or 0) > 0 and kinds.state + (kinds.none or 0) < d.model.layers then
      util.raise("vLLM %s has no hybrid KV cache manager: attention beside recurrent layers "
                 .. "kept their states in V0's MambaCacheManager, not modelled (engine_version "
                 .. "0.10 or later: V1's groups)", version)
    end
    if (kinds.sliding or 0) + (kinds.chunked or 0) > 0
       and (kinds.full or 0) + (kinds.mla or 0) > 0 then
      d.hybrid_off_reason = "vLLM " .. version .. " has no hybrid KV cache manager"
    end
    -- an encoder-decoder (cross-attention layers): V0's block manager
    -- gives the encoder's tokens cross blocks from the one pool, each
    -- block spanning every layer (vllm/core/block_manager.py
    -- SelfAttnBlockSpaceManager, cross_block_tables; the V0 worker's
    -- CacheEngine allocates num_layers of them): no KV cache groups
    if (kinds.cross or 0) > 0 then d.vllm_v0_blocks = true end
  end
  -- extract_hidden_states needs a KV connector, and the releases before
  -- vllm-project/vllm#39949 (row hidden_group) turn the hybrid KV cache
  -- manager off whenever kv_transfer_config is set (vllm/config/vllm.py, from
  -- #17996: "Hybrid KV cache manager is not compatible with KV transfer")
  local hs = type(opts.speculative) == "table" and opts.speculative.heads == "extract_hidden_states"
  local classes = ((kinds.full or 0) + (kinds.mla or 0) > 0 and 1 or 0)
                  + ((kinds.sliding or 0) > 0 and 1 or 0) + ((kinds.chunked or 0) > 0 and 1 or 0)
                  + ((kinds.state or 0) > 0 and 1 or 0) + ((kinds.cross or 0) > 0 and 1 or 0)
  if named and hs and not row.hidden_group and classes > 1
     and opts.disable_hybrid_kv_cache_manager == nil and d.hybrid_off_reason == nil then
    d.hybrid_off_reason = "extract_hidden_states in vLLM " .. version
                          .. ": its KV connector turns the hybrid KV cache manager off"
  end
  -- decode context parallelism beside recurrent layers: vLLM 0.10's
  -- HybridKVCacheCoordinator asserts dcp_world_size == 1 (row dcp_hybrid =
  -- false); later releases keep the Mamba groups at dcp 1 (engine/core/vllm_kv.c)
  if named and row.dcp_hybrid == false and (kinds.state or 0) > 0
     and (opts.decode_context_parallel_size or 1) > 1 then
    util.raise("field 'decode_context_parallel_size' = %s with recurrent layers: vLLM %s's "
               .. "HybridKVCacheCoordinator asserts dcp_world_size == 1 (\"DCP not support hybrid "
               .. "attn now.\")", util.shown(opts.decode_context_parallel_size), version)
  end
  mxfp4_rule(d, opts, rule)
  bnb_rule(d, opts)
  mla_absorb_rule(d, opts, version)
  vocab_pad_rule(d, opts)
  rotary_rule(d, opts)
  limits_rule(d, opts, row, rule)
  rule.nccl_counted, rule.context_counted = row.nccl_counted, row.context_counted
  rule.nccl_runtime = row.nccl_runtime
  rule.gpu_p2p = engines.peer_to_peer(d.gpu)
  rule.gpu_nvls = engines.nvls_capable(d.gpu)
  rule.seqs_cap = d.max_num_seqs_source == "default"
  if d.activation == nil then
    -- a vision tower's dummy batch: limit_mm_per_prompt (one integer for
    -- the image modality) and skip_mm_profiling as vLLM names them
    local limit = opts.limit_mm_per_prompt and util.count(opts.limit_mm_per_prompt,
                                                          "limit_mm_per_prompt", 0)
    local skip = opts.skip_mm_profiling
    local s, why = profile_shape(d.model, engines.vllm_profile(row, opts,
                                                               opts.engine_version or version,
                                                               d.gpu))
    local vis
    if s then
      s.dequant_mlp = bnb4_class(d, "mlp")
      s.dequant_attn = bnb4_class(d, "attention")
      vis, why = vision_rule(d.model, limit, not skip and limit ~= 0)
    end
    -- the processor's pixel values in the model dtype from
    -- engines.vllm_pixel_cast_release on (vllm-project/vllm#18862), float32
    -- before it (the core's default)
    if vis and engines.vllm_at_least(opts.engine_version or version,
                                     engines.vllm_pixel_cast_release) then
      vis.pixel_bytes = s.act_bytes
    end
    if s and (vis or why == nil) then
      rule.activation, rule.shape, rule.vision = true, s, vis
    else
      d.activation, d.activation_source, d.prediction_note = 0, "none", why
    end
  end
  if d.overhead == nil then rule.overhead = "vllm" end
end

-- The core's answers for d's engine rule (kvp_predict_deploy).
local function predict(d, opts, rule)
  return pcore.reserves(rule, {
    gpu_bytes = d.gpu_bytes, tp = util.count(d.tp, "tp"), pp = util.count(d.pp, "pp"),
    max_model_len = opts.max_model_len, max_context = d.model.max_context,
    max_num_batched_tokens = opts.max_num_batched_tokens
      and util.count(opts.max_num_batched_tokens, "max_num_batched_tokens"),
    max_num_seqs = opts.max_num_seqs and util.count(opts.max_num_seqs, "max_num_seqs"),
    weight_bytes = d.weight_bytes, utilization = d.utilization,
  }, engines.non_torch)
end

-- The core's answers for d's engine rule, stored.
local function reserves(d, opts, rule)
  if next(rule) == nil then return end
  local r = predict(d, opts, rule)
  d.profile_tokens = r.tokens
  if rule.seqs_cap then d.max_num_seqs_default = r.max_num_seqs end
  if not rule.trtllm then d.profile_seqs = r.seqs end
  if r.activation then
    d.activation, d.activation_source, d.activation_range = r.activation.bytes, "predicted",
                                                            r.activation
    -- TensorRT-LLM's dummy context requests
    if rule.trtllm then d.profile_seqs, r.activation.requests = r.seqs, r.seqs end
    d.stage_activation = r.stages
  end
  if r.overhead then
    d.overhead, d.overhead_source = r.overhead.point, "predicted"
    d.overhead_range = {lo = r.overhead.lo, hi = r.overhead.hi}
  end
  if r.repacked then
    d.weight_bytes = r.weight_bytes
    d.weights_source = "loaded (" .. d.mxfp4_backend .. ")"
  end
  if r.sglang then
    local sd = r.sglang
    sd.mem_fraction_static = r.utilization
    d.sglang_defaults = sd
  end
  if d.utilization == nil then d.utilization = r.utilization end
  -- a given fraction wins over SGLang's memory defaults, on a sweep's axes too
  if rule.sglang_memory and opts.utilization ~= nil then
    rule.sglang_memory, rule.sglang_vlm = nil, nil
  end
  d.engine_rule = next(rule) and rule or nil
end

-- The reserves of a budget's Lua hook (M.budgets[...].reserves): set where
-- not given, no engine rule left for the core.
local function hook_reserves(d, opts, hook)
  local r = hook(d, opts)
  if type(r) ~= "table" then
    util.raise("budget '%s': reserves(d, opts) must return a table, got %s", d.budget, type(r))
  end
  util.check_keys(r, {activation = true, overhead = true, utilization = true, max_num_seqs = true},
                  "budget '" .. d.budget .. "' reserves")
  if r.activation ~= nil and opts.activation == nil then
    d.activation, d.activation_source = units.bytes(r.activation, "reserves.activation"), "rule"
    d.activation_range, d.stage_activation, d.prediction_note = nil, nil, nil
  end
  if r.overhead ~= nil and opts.overhead == nil then
    d.overhead, d.overhead_source = units.bytes(r.overhead, "reserves.overhead"), "rule"
    d.overhead_range = nil
  end
  if r.utilization ~= nil and opts.utilization == nil then d.utilization = r.utilization end
  if r.max_num_seqs ~= nil and opts.max_num_seqs == nil then
    d.max_num_seqs_default = util.count(r.max_num_seqs, "reserves.max_num_seqs", 1)
    d.max_num_seqs_source = "rule"
  end
  d.engine_rule = nil
end

predict_reserved = function(d, opts, rule, hook)
  d.activation_source, d.overhead_source = "given", "given"
  if opts.activation ~= nil then d.activation = units.bytes(opts.activation, "activation") end
  if opts.overhead ~= nil then d.overhead = units.bytes(opts.overhead, "overhead") end
  if opts.usage ~= nil and opts.usage ~= "server" and opts.usage ~= "offline" then
    util.raise("field 'usage' must be 'server' or 'offline', got '%s'", util.escape(util.shown(opts.usage), 64))
  end
  local ff = opts.fail_fast_on_attention_window_too_large
  if (ff ~= nil or opts.backend ~= nil) and d.budget ~= "trtllm" then
    util.raise("fields 'backend' and 'fail_fast_on_attention_window_too_large' are "
               .. "TensorRT-LLM's; budget '%s' has neither", d.budget)
  end
  d.fail_fast_on_attention_window_too_large = ff
  if opts.async_scheduling ~= nil and d.budget ~= "vllm" then
    util.raise("field 'async_scheduling' = %s is vLLM's --async-scheduling; budget '%s' has none "
               .. "(expected budget 'vllm')", util.shown(opts.async_scheduling), d.budget)
  end
  if d.budget == "trtllm" and (opts.engine == "trtllm" or opts.engine_version ~= nil
                               or opts.backend ~= nil) then
    trtllm_rule(d, opts, rule)
  elseif d.budget ~= "vllm" then
    if d.budget == "sglang" and opts.engine_version ~= nil and opts.max_num_seqs == nil then
      -- checked in M.new (engines.sglang_version)
    elseif opts.engine_version ~= nil or opts.max_num_seqs ~= nil then
      util.raise("fields 'engine_version' and 'max_num_seqs' describe vLLM's profiling; "
                 .. "budget '%s' does not profile", d.budget)
    end
    if d.activation == nil then d.activation, d.activation_source = 0, "none" end
    if d.overhead == nil then
      if d.budget == "sglang" then
        -- SGLang's total is the free memory before loading: the CUDA
        -- context and the distributed init are gone already (engines.lua)
        rule.overhead = "sglang"
      else
        d.overhead, d.overhead_source = 0, "none"
      end
    end
  else
    vllm_rule(d, opts, rule)
  end
  reserves(d, opts, rule)
  if hook ~= nil then hook_reserves(d, opts, hook) end
end

-- SGLang's max_running_requests when not given: min(pool tokens // 2, the
-- request pool's size, min(max(int(pool tokens / context_len x 512), 2048),
-- 4096)) (engines.lua M.sglang, tp_worker.py, model_runner.py).
local function sglang_running(d)
  local l = d:ledger()
  local tokens = math.max(l.kv_tokens or 0, 1)
  local ctx = l.max_model_len or d.max_model_len or d.model.max_context
  local pool = math.min(math.max(math.floor(tokens / ctx * 512), 2048), 4096)
  return math.max(math.min(tokens // 2, pool), 1)
end

--- The GPUs of deployment d: tp x pp, times data_parallel_size for vLLM's
--- DP engines and SGLang's replicas (not for SGLang's attention-DP ranks,
--- which live inside the tp GPUs).
function M.gpus(d)
  local dp = d.data_parallel_size or 1
  if d.budget == "sglang" and d.enable_dp_attention then dp = 1 end
  return d.tp * d.pp * dp
end

--- The scheduler's limits of deployment d as its engine runs it, each the
--- given one (opts.max_num_batched_tokens, opts.max_num_seqs) or the
--- engine's default for its release (opts.engine_version):
---   vLLM: max_num_batched_tokens and max_num_seqs by the GPU (the OpenAI
---     server's unless usage = "offline"; engine/core/predict.c)
---   TensorRT-LLM: max_num_tokens and max_batch_size (engines.lua M.trtllm;
---     before 0.8 max_num_tokens is max_batch_size x max_input_len), not the
---     dummy run's request count, which sizes only the memory profile
---   SGLang: chunked_prefill_size and max_running_requests (engines.lua
---     M.sglang)
--- Returns max_num_batched_tokens, max_num_seqs.
function M.engine_limits(d, opts)
  local tokens = opts.max_num_batched_tokens and util.count(opts.max_num_batched_tokens,
                                                            "max_num_batched_tokens")
  local seqs = opts.max_num_seqs and util.count(opts.max_num_seqs, "max_num_seqs")
  if d.budget == "trtllm" then
    local row = engines.trtllm_version(opts.engine_version)
    seqs = seqs or row.max_batch_size
    -- before 0.8 the engine's max_num_tokens, unset, is max_batch_size x
    -- max_input_len (examples/llama/build.py: engines.lua M.trtllm)
    return tokens or row.max_num_tokens or seqs * row.max_input_len, seqs
  elseif d.budget == "sglang" then
    local row, v = engines.sglang_version(opts.engine_version)
    if tokens == nil then
      local sd = d.sglang_defaults
      if sd == nil and row.chunk then
        tokens = row.chunk(d.gpu_bytes / 2^20)
      else
        sd = sd or predict(d, opts, {sglang_memory = true}).sglang
        tokens = sd.chunked_prefill_size
      end
    end
    if d.enable_dp_attention and (d.data_parallel_size or 1) > 1 then
      -- attention DP: each rank's scheduler takes max_running_requests //
      -- dp_size when it is given (its own default otherwise: tp_worker.py
      -- TpModelWorker) and chunked_prefill_size // dp_size ("DP attention is
      -- enabled. The chunked prefill size is adjusted", server_args.py
      -- ServerArgs, the later 0.4 and the 0.5 forms), or // 2 where the
      -- release row says so (engines.lua M.sglang dp_attention_chunk_divisor:
      -- the early 0.4 form, 0.4.1's)
      local dp = d.data_parallel_size
      local div = row.dp_attention_chunk_divisor or dp
      return math.max(tokens // div, 1), seqs and math.max(seqs // dp, 1) or sglang_running(d), v
    end
    return tokens, seqs or sglang_running(d), v
  end
  if d.profile_tokens and d.profile_seqs then return d.profile_tokens, d.profile_seqs end
  local rule = {}
  limits_rule(d, opts, engines.vllm_version(opts.engine_version), rule)
  local r = predict(d, opts, rule)
  return r.tokens, r.seqs
end

--- SGLang's cuda_graph_max_bs for d: its release's rule (engines.lua
--- M.sglang: by tp and the GPU's memory in 0.4, the core's by memory, tp
--- and pp in 0.5), as engine_limits takes chunked_prefill_size.
function M.sglang_graph_bs(d)
  local sd = d.sglang_defaults
  if sd == nil then
    local row = engines.sglang_version(d.engine_version)
    if row.graph_bs then return row.graph_bs(d.gpu_bytes / 2^20, d.tp) end
    sd = predict(d, {}, {sglang_memory = true}).sglang
  end
  return sd.cuda_graph_max_bs
end

--- SGLang's default mem_fraction_static of release row srow
--- (engines.sglang) on a GPU of gpu_bytes with tp x pp ranks: the core's
--- rule (by tp, or by the GPU's memory, tp and pp), as kv.deploy takes it;
--- model m (optional) with a vision tower lowers it where the row says so
--- (engines.sglang_vlm_factor).
function M.sglang_fraction(srow, gpu_bytes, tp, pp, m)
  local rule = srow.rule == "memory" and {sglang_memory = true}
               or {fractions = M.budgets.sglang.fractions}
  if rule.sglang_memory and srow.vlm and m then
    rule.sglang_vlm = engines.sglang_vlm_factor(rawget(m, "vision"))
  end
  return pcore.reserves(rule, {gpu_bytes = gpu_bytes or 0, tp = tp, pp = pp or 1}).utilization
end

-- The serving engines' own option names, accepted for kvplan's (alias ->
-- field; fields.lua says whose each is). Dashes count as underscores.
M.engine_names = registry.aliases

--- opts with the engines' option names (M.engine_names) renamed to kvplan's;
--- both names of one option is an error. Returns opts itself when none is used.
function M.rename(opts, what)
  local out
  local spelt = {} -- field -> the engine's name given for it
  -- sorted: which of two names is reported does not hang on pairs()'s order
  for k, v in util.sorted_pairs(opts) do
    local canon = type(k) == "string" and M.engine_names[k:gsub("%-", "_")] or nil
    if canon == nil and type(k) == "string" and k:find("-", 1, true) and fields[(k:gsub("%-", "_"))] then
      canon = k:gsub("%-", "_")
    end
    if canon ~= nil then
      if out == nil then
        out = {}
        for k2, v2 in pairs(opts) do out[k2] = v2 end
      end
      if opts[canon] ~= nil then
        util.raise("%s gives both '%s' and '%s' (the same option)", what, canon, k)
      end
      -- two engines' names of one field (tensor_parallel_size and tp_size):
      -- the last pairs() visited won
      if spelt[canon] ~= nil then
        util.raise("%s gives both '%s' and '%s' (the same option)", what, spelt[canon], k)
      end
      spelt[canon] = k
      out[k], out[canon] = nil, v
    end
  end
  return out or opts
end

-- kv_cache_groups: {{layers = {i, ...}, block = n}, ...} as vLLM's tests
-- give KVCacheGroupSpecs (1-based model layers, each in one group; block
-- the group's block_size, the deployment's when absent): each layer's group
-- and each group's block, for the core (engine/core/vllm_kv.c given_groups)
local function resolve_groups(g, d)
  if g == nil then return nil end
  if type(g) ~= "table" or #g == 0 then
    util.raise("field 'kv_cache_groups' must be a list of groups {layers = {...}, block = n}, got %s",
               type(g) == "table" and "an empty table" or type(g))
  end
  local of, blocks = {}, {}
  for i = 1, d.model.layers do of[i] = 0 end
  for gi, grp in ipairs(g) do
    local where = "kv_cache_groups[" .. gi .. "]"
    if type(grp) ~= "table" or type(grp.layers) ~= "table" or #grp.layers == 0 then
      util.raise("field '%s' must be {layers = {...}, block = n} with at least one layer", where)
    end
    util.check_keys(grp, {layers = true, block = true}, where)
    for _, li in ipairs(grp.layers) do
      local n = util.count(li, where .. ".layers", 1)
      if n > d.model.layers then
        util.raise("field '%s.layers': layer %d, the model has %d", where, n, d.model.layers)
      end
      if of[n] ~= 0 then
        util.raise("field '%s.layers': layer %d is already in group %d", where, n, of[n])
      end
      of[n] = gi
    end
    blocks[gi] = grp.block ~= nil and util.count(grp.block, where .. ".block", 1) or 0
  end
  return of, blocks
end

-- Workers with unequal memory: a list of tp x pp memories in vLLM's rank
-- order (rank = stage x tp + tensor-parallel rank) -> the list itself, each
-- in bytes; the core takes the smallest GPU of each stage.
local function resolve_workers(w, d)
  if w == nil then return nil end
  local n = util.count(d.tp, "tp") * util.count(d.pp, "pp")
  if type(w) ~= "table" or #w ~= n then
    util.raise("field 'worker_gpu_memory' must list the memory of each of the %d workers "
               .. "(tp x pp, in vLLM's rank order), got %s", n,
               type(w) == "table" and (#w .. " values") or type(w))
  end
  local out = {}
  for i, v in ipairs(w) do out[i] = units.bytes(v, "worker_gpu_memory[" .. i .. "]") end
  return out
end

-- Data and expert parallelism, as each engine lays out a MoE model:
--   vLLM (data_parallel_size, enable_expert_parallel): data_parallel_size
--     engines of tp x pp GPUs; the routed experts' bytes, which the core cuts
--     across dp x tp GPUs (engine/core/vllm_kv.c), in the experts' own format.
--   SGLang (dp_size, enable_dp_attention, ep_size; python/sglang/srt/
--     server_args.py): dp_size without enable_dp_attention is replicas
--     (the data-parallel controller's, each its own tp x pp GPUs, nothing
--     cut); with it dp_size ranks inside the tp GPUs, the attention over
--     tp / dp_size (its weights' bytes, the core's attn_bytes) and the
--     embedding whole on every GPU (whole_bytes); ep_size ranks of the tp
--     GPUs holding whole experts.
--   TensorRT-LLM (ep_size, its --ep_size / moe_expert_parallel_size):
--     Mapping's moe_ep_size x moe_tp_size = tp_size (NVIDIA/TensorRT-LLM
--     tensorrt_llm/mapping.py at 05ebebb2c1d3); the MoE module holds
--     num_experts // ep_size whole experts (ep_rank = tp_rank % ep_size),
--     each split over moe_tp = tp / ep_size (intermediate_size //
--     moe_tp_size; _torch/modules/fused_moe/fused_moe_cutlass.py at
--     7b437aaa73bf): SGLang's layout, the core's sglang_ep. The rest of the
--     model stays over tp; no attention DP (not modelled).
-- The bytes of weight class k in the deployment's format (a mixed
-- checkpoint's own for that class); params and shapes: a part of the class
-- (Model:class_bytes).
local function class_bytes(d, opts, k, params, shapes)
  local m = d.model
  local wf = rawget(m, "weight_formats")
  local f = opts.weights ~= nil and d.weights
            or (wf and wf[k] and formats.get(wf[k], "weight_formats." .. k))
            or (wf and m:dtype_format()) or d.weights
  return m:class_bytes(k, f, params, shapes)
end

-- The weights every TP rank holds whole (models.lua replicated_params: the
-- engines' ReplicatedLinear layers, routers and norms by family), for the
-- core's kvp_replicated: their parameters, linear shards and columns (a
-- sweep's weight format axis weighs them again) and their bytes in the
-- checkpoint's formats. Under SGLang's attention DP the replicated part of
-- the attention leaves attn_bytes (whole on every GPU, not over tp /
-- dp_size). Kept at tp 1 too (a sweep's tp axis; the core counts none
-- there); none for a model that cannot be weighed by class (its classes
-- add up to more than params: Model:weighs_by_class, the one failure
-- replicated_params has by design; any other error in it raises).
-- replicated_params is computed once and given to replicated_matmul.
local function resolve_replicated(d, opts)
  local m = d.model
  if not m:weighs_by_class() then return end
  -- gpt-oss's w2_bias is narrowed by experts under expert parallelism
  -- (replicated_params' ep)
  local ep = opts.enable_expert_parallel == true or (opts.ep_size or 1) > 1
  local r = m:replicated_params(ep)
  if r.attention.params == 0 and r.other == 0 then return end
  local a = r.attention
  local ab = a.params > 0 and class_bytes(d, opts, "attention", a.params,
                                          {attention = {shards = a.shards, cols = a.cols}}) or 0
  local ob = r.other > 0 and class_bytes(d, opts, "other", r.other) or 0
  d.replicated_params = a.params + r.other
  d.replicated_shards, d.replicated_cols = a.shards, a.cols
  d.replicated_bytes = ab + ob
  d.replicated_matmul = m:replicated_matmul(r)
  if d.attn_bytes then d.attn_bytes = math.max(0, d.attn_bytes - ab) end
end

local function resolve_moe_parallel(d, opts)
  local ep = opts.enable_expert_parallel
  local m = d.model
  d.enable_expert_parallel = ep
  d.data_parallel_size = optional_count(opts.data_parallel_size, "data_parallel_size", 1)
  d.enable_dp_attention = opts.enable_dp_attention
  d.ep_size = optional_count(opts.ep_size, "ep_size", 1)
  local dp = d.data_parallel_size or 1
  -- (enable_expert_parallel under SGLang's budget: the core refuses it as vLLM's)
  if d.budget == "sglang" and not ep then
    if d.enable_dp_attention and dp < 2 then
      util.raise("field 'enable_dp_attention' needs data_parallel_size (SGLang's dp_size) > 1, "
                 .. "got %d (SGLang's server_args: 'Please set a dp-size > 1')", dp)
    end
    if d.enable_dp_attention and d.tp % dp ~= 0 then
      util.raise("field 'enable_dp_attention' needs data_parallel_size to divide tp "
                 .. "(attention TP = tp / dp_size): dp_size %d, tp %d", dp, d.tp)
    end
    if (d.ep_size or 1) > 1 and not m.experts then
      util.raise("field 'ep_size' needs a MoE model, '%s' has no experts", m.id)
    end
    if (d.ep_size or 1) > 1 and d.tp % d.ep_size ~= 0 then
      util.raise("field 'ep_size' must divide tp (SGLang's moe_tp_size = tp_size / ep_size): "
                 .. "ep_size %d, tp %d", d.ep_size, d.tp)
    end
    if d.enable_dp_attention then
      d.sglang_attn_dp = dp
      local ok, c = pcall(m.weight_class_params, m)
      if ok then
        d.attn_bytes = class_bytes(d, opts, "attention")
        d.whole_bytes = c.embeddings > 0 and class_bytes(d, opts, "embeddings") or 0
      end
    end
    if (d.ep_size or 1) > 1 then d.sglang_ep = d.ep_size end
    if dp > 1 and not d.enable_dp_attention then d.sglang_replicas = dp end
    if m.experts and (d.sglang_attn_dp or d.sglang_ep) then
      d.moe_experts = m.experts
      d.expert_bytes = class_bytes(d, opts, "experts")
    end
    return
  end
  if d.budget == "trtllm" then
    if ep then
      util.raise("field 'enable_expert_parallel' is vLLM's; TensorRT-LLM's expert parallelism is "
                 .. "ep_size (its --ep_size, moe_ep_size x moe_tp_size = tp)")
    end
    if (d.ep_size or 1) > 1 then
      if not m.experts then
        util.raise("field 'ep_size' needs a MoE model, '%s' has no experts", m.id)
      end
      if d.tp % d.ep_size ~= 0 then
        util.raise("field 'ep_size' must divide tp (TensorRT-LLM's Mapping: moe_tp_size = "
                   .. "tp_size / moe_ep_size): ep_size %d, tp %d", d.ep_size, d.tp)
      end
      d.sglang_ep = d.ep_size
      d.moe_experts = m.experts
      d.expert_bytes = class_bytes(d, opts, "experts")
      return
    end
  end
  if d.enable_dp_attention and d.budget ~= "sglang" then
    util.raise("field 'enable_dp_attention' is SGLang's and needs budget 'sglang' (vLLM's "
               .. "data_parallel_size engines each run their own attention), got budget '%s'",
               d.budget)
  end
  if (d.ep_size or 1) > 1 and d.budget ~= "sglang" then
    util.raise("field 'ep_size' is SGLang's and TensorRT-LLM's and needs budget 'sglang' or "
               .. "'trtllm' (vLLM's expert-parallel size is data_parallel_size x tp: give "
               .. "enable_expert_parallel), got budget '%s'",
               d.budget)
  end
  if not (ep or dp > 1) then return end
  if not m.experts then
    if ep then util.raise("field 'enable_expert_parallel' needs a MoE model, '%s' has no experts", m.id) end
    return
  end
  local wf = rawget(m, "weight_formats")
  local f = opts.weights ~= nil and d.weights
            or (wf and wf.experts and formats.get(wf.experts, "weight_formats.experts"))
            or m:dtype_format()
  d.moe_experts = m.experts
  d.expert_bytes = m:class_bytes("experts", f)
end

-- The smallest GPU of each pipeline stage (nil when all are the deployment's).
local function stage_memories(d)
  local w = d.worker_gpu_memory
  if w == nil then return nil end
  local out = {}
  for s = 1, d.pp do
    local m
    for r = 1, d.tp do
      local v = w[(s - 1) * d.tp + r]
      if m == nil or v < m then m = v end
    end
    out[s] = m
  end
  return out
end

--- Options every deployment of this run takes unless it gives its own:
--- the fields marked every_command (fields.lua) given to kv.options on the
--- command line (options.lua): profile.
M.run_defaults = {}

--- The KV format of deployment d under options opts and why: the given
--- one, or what its engine makes of kv = "auto" with the checkpoint
--- (rawget(model, "kv_checkpoint"): what the checkpoint's quantization
--- states, hf.lua kv_checkpoint; catalog models state nothing):
---   TensorRT-LLM (budget "trtllm"): FP8 KV for a checkpoint whose
---     hf_quant_config.json gives kv_cache_quant_algo FP8: ModelLoader.
---     _update_from_hf_quant_config sets quant_config.kv_cache_quant_algo from
---     it (NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_utils.py at 7b437aaa73bf),
---     which KvCacheConfig's dtype "auto" follows
---   vLLM: kv_cache_dtype "auto" resolves from config.json's modelopt
---     quantization_config (kv_cache_scheme / kv_cache_quant_algo: vllm/utils/
---     torch_utils.py resolve_kv_cache_dtype_string at 959009b402c3) in the
---     releases whose row has kv_from_checkpoint (engines.lua M.vllm), else it
---     is the model dtype
---   SGLang, other checkpoints, other releases: the model's activation dtype.
--- Returns the format and "given", "checkpoint (...)" or "model dtype".
function M.auto_kv(d, opts)
  if opts.kv ~= nil and opts.kv ~= "auto" then return formats.get(opts.kv, "kv"), "given" end
  local ck = rawget(d.model, "kv_checkpoint")
  if type(ck) == "table" and ck.format ~= nil then
    local follows
    if d.budget == "trtllm" and ck.hf_quant then
      follows = "hf_quant_config.json kv_cache_quant_algo"
    elseif d.budget == "vllm" and ck.config and engines.vllm_version(opts.engine_version).kv_from_checkpoint then
      follows = "config.json quantization_config"
    end
    if follows then return formats.get(ck.format, "kv"), "checkpoint (" .. follows .. ")" end
  end
  return d.model:auto_kv_format(), "model dtype"
end

-- vLLM's LoRA ranks (vllm/config/lora.py MaxLoRARanks, read at a78dc92f43ae)
local lora_ranks = {1, 8, 16, 32, 64, 128, 256, 320, 512}

-- vLLM's LoRA slots of deployment d (--enable-lora and its options, by
-- vLLM's names and defaults: vllm/config/lora.py LoRAConfig), the core's
-- table (kvplan.h kvp_lora), or nil without enable_lora. The slots' sizes
-- are the core's (predict.c kvp_lora_layer_bytes): a dense decoder's four
-- linear modules; MoE experts and MLA attention are refused, not guessed.
local lora_options = {"max_loras", "max_lora_rank", "max_cpu_loras", "lora_dtype"}
local function resolve_lora(d, opts)
  -- like vLLM, which builds its LoRAConfig only under --enable-lora
  -- (vllm/engine/arg_utils.py create_engine_config), the other options
  -- alone change nothing; their values are checked all the same
  for _, k in ipairs(lora_options) do
    if opts[k] ~= nil then registry.check(registry.by_name[k], opts[k]) end
  end
  if not opts.enable_lora then return nil end
  if d.budget ~= "vllm" then
    util.raise("field 'enable_lora' is vLLM's; budget '%s' has no LoRA slots", d.budget)
  end
  local m = d.model
  if (m.experts or 0) > 0 then
    util.raise("model '%s': LoRA slots of MoE experts (vllm/lora/layers/fused_moe.py) are not "
               .. "modelled", m.id)
  end
  if (m.kv_lora_rank or 0) > 0 then
    util.raise("model '%s': LoRA slots of MLA attention are not modelled", m.id)
  end
  if m.intermediate == nil then
    util.raise("model '%s' gives no intermediate size: its LoRA slots cannot be sized", m.id)
  end
  local n = optional_count(opts.max_loras, "max_loras", 1) or 1
  local rank = optional_count(opts.max_lora_rank, "max_lora_rank", 1) or 16
  local ok = false
  for _, r in ipairs(lora_ranks) do ok = ok or r == rank end
  if not ok then
    util.raise("field 'max_lora_rank' must be one of vLLM's ranks (%s), got %d",
               table.concat(lora_ranks, ", "), rank)
  end
  local cpu = optional_count(opts.max_cpu_loras, "max_cpu_loras", 1)
  if cpu ~= nil and cpu < n then
    util.raise("field 'max_cpu_loras' (%d) must be >= max_loras (%d)", cpu, n)
  end
  local dtype = opts.lora_dtype or "auto"
  local bytes = ({auto = engines.act_bytes(m), float16 = 2, bfloat16 = 2})[dtype]
  if bytes == nil then
    util.raise("field 'lora_dtype' must be 'auto', 'float16' or 'bfloat16', got '%s'",
               util.escape(util.shown(dtype), 64))
  end
  d.max_cpu_loras = cpu or n
  return {max_loras = n, max_rank = rank, dtype_bytes = bytes,
          fully_sharded = opts.fully_sharded_loras and true or false, hidden = m.hidden,
          heads = m.heads, kv_heads = m.kv_heads, head_dim = m.head_dim,
          intermediate = m.intermediate}
end

--- Fields of opts that contradict one another whatever the model and GPU:
--- nil, or the message, worded with `noun` ("field": M.new raises it at the
--- user's line; "argument": kv.options.given_fields names the command
--- line's arguments, a usage error).
function M.contradiction(opts, noun)
  -- `engine` and `budget` name the same rule
  if opts.engine ~= nil and opts.budget ~= nil and opts.engine ~= opts.budget then
    return string.format("%ss 'engine' ('%s') and 'budget' ('%s') disagree: give one", noun,
                         util.escape(opts.engine), util.escape(opts.budget))
  end
  if opts.kv_full ~= nil and opts.kv_recent == nil then
    return string.format("%s 'kv_full' ('%s') needs 'kv_recent' (the tokens kept in that format)",
                         noun, util.escape(opts.kv_full))
  end
end

--- A deployment from options (see the API reference for each field).
function M.new(opts)
  if type(opts) ~= "table" then util.raise("deploy needs an options table, got %s", type(opts)) end
  opts = M.rename(opts, "deployment")
  util.check_keys(opts, fields, "deployment")
  -- engine_version = "@YYYY-MM-DD": the release of that date (engines.
  -- dated_version), named as the release from here on
  if type(opts.engine_version) == "string" and opts.engine_version:sub(1, 1) == "@" then
    local o = util.copy(opts)
    o.engine_version = engines.dated_version(opts.engine or opts.budget or "vllm", opts.engine_version)
    opts = o
  end
  local given = opts
  local combination
  if opts.optim ~= nil then
    local o = {}
    for k, v in pairs(opts) do if k ~= "optim" then o[k] = v end end
    opts, combination = require("kvplan.optim").apply(o, given.optim)
  end
  -- vLLM's --max-model-len auto (or -1): the deployment is planned at the
  -- derived max_model_len and the ledger fits it to the KV memory
  -- (vllm_max_model_len_auto; the rule: engine/core/ledger.c eval_checked)
  local auto_len = opts.max_model_len == "auto" or opts.max_model_len == -1
                   or opts.max_model_len == "-1"
  if auto_len then
    local o = {}
    for k, v in pairs(opts) do if k ~= "max_model_len" then o[k] = v end end
    opts = o
  end
  -- a switch is true or false (the registry's boolean fields), not any value
  for k, v in util.sorted_pairs(opts) do
    local f = registry.by_name[k]
    if f and f.type == "boolean" then registry.check(f, v) end
  end
  if opts.model == nil then util.raise("deployment needs a 'model'") end
  if opts.gpu == nil and opts.gpu_memory == nil then
    util.raise("deployment needs a 'gpu' (or 'gpu_memory')")
  end
  if opts.gpu_memory ~= nil and units.bytes(opts.gpu_memory, "gpu_memory") < 1 then
    util.raise("field 'gpu_memory' must be > 0 bytes, got %s", util.escape(util.shown(opts.gpu_memory)))
  end
  local d = setmetatable({options = given, optim = combination}, Deployment)
  d.model = models.get(opts.model)
  d.gpu = opts.gpu ~= nil and gpus.check_plannable(gpus.get(opts.gpu)) or gpus.new{memory = opts.gpu_memory}
  d.gpu_bytes = opts.gpu_memory ~= nil and units.bytes(opts.gpu_memory, "gpu_memory")
                or d.gpu.visible_bytes
  -- `engine` names the engine whose budget rule and defaults apply (the
  -- same names as `budget`; engine_version picks its release)
  local why = M.contradiction(opts, "field")
  if why then util.raise("%s", why) end
  d.budget = opts.engine or opts.budget or "vllm"
  -- a deployment that names its engine: a sweep's fits includes the
  -- engine's refusal to start (d:starts(), engine/core/starts.c)
  d.engine_named = opts.engine ~= nil or opts.engine_version ~= nil or nil
  local rule = M.budgets[d.budget]
  if rule == nil then
    util.raise("unknown %s '%s'%s", opts.engine ~= nil and "engine" or "budget rule",
               util.shown(d.budget), util.suggest(util.shown(d.budget), util.sorted_keys(M.budgets)))
  end
  d.tp = opts.tp or 1
  d.pp = opts.pp or 1
  d.kv, d.kv_source = M.auto_kv(d, opts)
  d.weights = opts.weights ~= nil and formats.get(opts.weights, "weights")
              or d.model:native_format()
  if opts.weights == nil and d.model:mixed_format_name() then
    -- a mixed checkpoint: the bytes come from its classes (weight_bytes)
    local w = util.copy(d.weights)
    w.name = d.model:mixed_format_name()
    d.weights = w
  end
  d.weight_bytes = opts.weight_bytes ~= nil and units.bytes(opts.weight_bytes, "weight_bytes")
                   or (opts.weights == nil and (rawget(d.model, "weight_bytes")
                       or (rawget(d.model, "weight_formats") and d.model:weight_size())) or nil)
  d.utilization = opts.utilization
  -- vLLM's conv state of a Gated DeltaNet or Mamba2 layer keeps
  -- conv_kernel - 1 + num_speculative_tokens rows (MambaStateShapeCalculator
  -- gated_delta_net_state_shape and mamba2_state_shape's num_spec, vllm/
  -- model_executor/layers/mamba/mamba_utils.py at 02d710837549; the layer
  -- passes speculative_config.num_speculative_tokens, gdn_linear_attn.py at
  -- 0218d0504d61): a state run's spec_state_bytes (one row, TP 1) per token
  if d.budget == "vllm" and type(opts.speculative) == "table" then
    d.model = M.speculative_states(d.model, opts.speculative.tokens)
  end
  -- the engine rule (engine/core/kvplan.h kvp_engine_rule), resolved here
  -- and in predict_reserved, answered by the core once
  local erule = {}
  -- SGLang's --disable-cuda-graph (enforce_eager's alias, fields.lua): every
  -- step eager (sim.lua cuda_graphs)
  if d.budget == "sglang" then d.enforce_eager = opts.enforce_eager or nil end
  -- SGLang's --disable-overlap-schedule (sim.sglang_overlap: the host's time
  -- a step is waited for); refused under other budgets
  if opts.disable_overlap_schedule ~= nil then
    local v = opts.disable_overlap_schedule
    if type(v) ~= "boolean" then
      util.raise("field 'disable_overlap_schedule' must be true or false, got %s", util.shown(v))
    end
    if d.budget ~= "sglang" then
      util.raise("field 'disable_overlap_schedule' = %s is SGLang's --disable-overlap-schedule; "
                 .. "budget '%s' has none (expected budget 'sglang')", util.shown(v), d.budget)
    end
    d.disable_overlap_schedule = v or nil
  end
  -- TensorRT-LLM's moe_config.backend (sim.expert_kernel: which MoE kernel's
  -- curve the routed experts read); refused under other budgets
  if opts.moe_backend ~= nil then
    local v = opts.moe_backend
    if v ~= "cutlass" and v ~= "trtllm" then
      util.raise("field 'moe_backend' must be 'cutlass' or 'trtllm' (TensorRT-LLM's "
                 .. "moe_config.backend, the kernels kvplan has curves of), got '%s'",
                 util.escape(util.shown(v), 64))
    end
    if d.budget ~= "trtllm" then
      util.raise("field 'moe_backend' = '%s' is TensorRT-LLM's moe_config.backend; budget '%s' "
                 .. "has none (expected budget 'trtllm')", v, d.budget)
    end
    if (d.model.experts or 0) == 0 then
      util.raise("field 'moe_backend' needs a model with routed experts, '%s' has none",
                 util.shown(d.model.id))
    end
    d.moe_backend = v
  end
  if d.budget == "sglang" and opts.engine_version ~= nil then
    -- SGLang's release picks its defaults (engines.sglang_version)
    local srow, sv = engines.sglang_version(opts.engine_version)
    d.engine_version = sv
    -- the release as given ("0.4.1"): what changed within a row's releases
    -- (sim.block_fp8_kernel)
    d.sglang_release = opts.engine_version
    -- by the GPU's memory, tp and pp (d.sglang_defaults; the fraction
    -- unless one is given)
    if srow.rule == "memory" then
      erule.sglang_memory = true
      -- a vision tower lowers the default (engines.lua sglang_vlm_factor)
      if srow.vlm then erule.sglang_vlm = engines.sglang_vlm_factor(rawget(d.model, "vision")) end
    end
  end
  if d.utilization == nil and d.budget == "trtllm" and opts.engine_version ~= nil then
    -- a TensorRT-LLM release's own KV fraction (0.85 before 0.8: engines.lua
    -- M.trtllm), the budget's 0.9 for the others
    d.utilization = engines.trtllm_version(opts.engine_version).fraction
  end
  if d.utilization == nil and not erule.sglang_memory then
    if rule.fractions then
      -- SGLang's fraction by tp (engines.sglang_fractions), the core's rule
      erule.fractions = rule.fractions
    else
      -- vLLM's default follows the release (engines.lua M.vllm rows'
      -- utilization: 0.92 from 0.20, vllm-project/vllm#38284), else the
      -- budget's
      d.utilization = d.budget == "vllm" and engines.vllm_default_utilization(opts.engine_version)
                      or rule.utilization
    end
  end
  d.block = opts.block or rule.block
  predict_reserved(d, opts, erule, rule.reserves)
  if d.budget == "sglang" and opts.engine_version ~= nil and d.sglang_defaults == nil then
    -- a release whose defaults go by tp and the GPU's memory in MB (the 0.4
    -- row: engines.lua M.sglang): its chunked_prefill_size and
    -- cuda_graph_max_bs, beside the fraction the budget took
    local srow = engines.sglang_version(opts.engine_version)
    if srow.chunk then
      local mib = d.gpu_bytes / 2^20
      d.sglang_defaults = {chunked_prefill_size = srow.chunk(mib),
                           cuda_graph_max_bs = srow.graph_bs(mib, d.tp),
                           mem_fraction_static = d.utilization}
    end
  end
  d.max_num_batched_tokens = opts.max_num_batched_tokens or 1
  d.max_model_len = opts.max_model_len
  if auto_len then
    if d.budget ~= "vllm" then
      util.raise("field 'max_model_len' = auto is vLLM's --max-model-len auto; budget '%s' has "
                 .. "none (expected budget 'vllm')", d.budget)
    end
    if not engines.vllm_at_least(opts.engine_version, engines.vllm_max_model_len_auto_release) then
      util.raise("field 'max_model_len' = auto: vLLM %s has no --max-model-len auto (assumed "
                 .. "from %s, vllm-project/vllm#29431): give engine_version",
                 d.engine_version or engines.vllm_latest, engines.vllm_max_model_len_auto_release)
    end
    d.vllm_max_model_len_auto = true
  end
  d.name = opts.name
  -- optimizations
  d.max_kv_tokens = opts.max_kv_tokens
  d.allocation = opts.allocation
  d.kv_recent = opts.kv_recent
  if opts.kv_recent ~= nil then
    d.kv_full = opts.kv_full ~= nil and formats.get(opts.kv_full, "kv_full") or d.model:auto_kv_format()
  end
  d.evict = resolve_evict(opts.evict, d.model.layers)
  d.speculative = opts.speculative
  d.spec_core = resolve_spec(opts.speculative, d)
  d.prefix, d.samples, d.prompt, d.output = opts.prefix, opts.samples, opts.prompt, opts.output
  if opts.offload ~= nil then
    if type(opts.offload) ~= "table" then
      util.raise("field 'offload' must be a table, got %s", type(opts.offload))
    end
    util.check_keys(opts.offload, offload_fields, "offload")
    d.offload = {host = units.bytes(opts.offload.host or 0, "offload.host"),
                 pcie_gbps = opts.offload.pcie_gbps or d.gpu.pcie_gbps}
    if d.offload.pcie_gbps ~= nil and not (type(d.offload.pcie_gbps) == "number"
                                           and d.offload.pcie_gbps > 0 and d.offload.pcie_gbps < math.huge) then
      util.raise("field 'offload.pcie_gbps' must be a number > 0, got %s", util.shown(d.offload.pcie_gbps))
    end
  end
  -- vLLM's switches and overrides
  local hybrid_off = opts.disable_hybrid_kv_cache_manager
  d.disable_hybrid_kv_cache_manager = hybrid_off
  if hybrid_off == nil and d.hybrid_off_reason then d.disable_hybrid_kv_cache_manager = true end
  d.num_gpu_blocks_override = optional_count(opts.num_gpu_blocks_override,
                                             "num_gpu_blocks_override", 1)
  d.kv_cache_memory_bytes = opts.kv_cache_memory_bytes ~= nil
                            and units.bytes(opts.kv_cache_memory_bytes, "kv_cache_memory_bytes")
                            or nil
  -- 0 is what vLLM makes of it, and said so: the option's config field has
  -- no bound (vllm/config/cache.py: "kv_cache_memory_bytes: int | None =
  -- None", at 002f10e0cfa1, as since vllm-project/vllm#21489 brought it) and
  -- the worker takes it only when truthy ("if kv_cache_memory_bytes :=
  -- self.cache_config.kv_cache_memory_bytes:", gpu_worker.py
  -- determine_available_memory at 35d5cda123ec), else profiles
  if d.kv_cache_memory_bytes == 0 then
    d.kv_cache_memory_note = "kv_cache_memory_bytes = 0 is vLLM's unset: the budget is profiled "
                             .. "with gpu_memory_utilization"
  end
  -- memory others hold on the GPU (fields.lua system_memory): 0 unless given
  d.system_memory = opts.system_memory ~= nil and units.bytes(opts.system_memory, "system_memory")
                    or nil
  if d.system_memory and d.system_memory < 0 then
    util.raise("field 'system_memory' must be >= 0 bytes, got %s",
               util.escape(util.shown(opts.system_memory)))
  end
  d.worker_gpu_memory = resolve_workers(opts.worker_gpu_memory, d)
  d.kv_cache_groups = opts.kv_cache_groups
  d.kv_cache_group_of, d.kv_cache_group_blocks = resolve_groups(opts.kv_cache_groups, d)
  d.decode_context_parallel_size = optional_count(opts.decode_context_parallel_size,
                                                  "decode_context_parallel_size", 1)
  resolve_moe_parallel(d, opts)
  resolve_replicated(d, opts)
  if d.budget == "sglang" then sglang_weights_rule(d, opts) end
  d.block_stride_alignment = opts.block_stride_alignment ~= nil
                             and units.bytes(opts.block_stride_alignment, "block_stride_alignment")
                             or nil
  d.prefill_context_parallel_size = optional_count(opts.prefill_context_parallel_size,
                                                   "prefill_context_parallel_size", 1)
  d.mamba_cache_mode = opts.mamba_cache_mode
  d.mamba_block_size = optional_count(opts.mamba_block_size, "mamba_block_size", 1)
  d.lora = resolve_lora(d, opts)
  d.lengths = opts.lengths
  if d.lengths ~= nil and (type(d.lengths) ~= "table" or type(d.lengths.points) ~= "function") then
    util.raise("field 'lengths' must be a length distribution (kv.workload.uniform{...} and the "
               .. "like), got %s", type(d.lengths))
  end
  -- a profile of `kvplan calibrate`: its factors as if given as efficiency
  -- and perf options, which win over it (calibrate.lua apply_profile)
  local profile = opts.profile
  if profile == nil then profile = M.run_defaults.profile end
  if profile ~= nil then
    local calibrate = require "kvplan.calibrate"
    d.profile = calibrate.read_profile(profile)
    d.profile_path = profile
    opts = calibrate.apply_profile(opts, d.profile, profile, d.gpu.id, d.budget)
  end
  require("kvplan.sim").check_options(opts)
  d.options_time = {efficiency = opts.efficiency, perf = opts.perf, price_per_hour = opts.price_per_hour}
  d:ledger() -- check every field now, at the user's line
  return d
end

--- The table the core reads: each field under its key there (fields.lua
--- spec: most by their own name), the fields resolved here and the keys
--- derived from them.
-- The fields the core's table takes by their own name (fields.lua spec),
-- listed once: spec() runs for every deployment built.
local spec_names = {}
for _, f in ipairs(registry.list) do
  if f.spec == nil then spec_names[#spec_names + 1] = f.name end
end

function Deployment:spec()
  local t = {}
  for i = 1, #spec_names do
    local k = spec_names[i]
    t[k] = rawget(self, k)
  end
  t.model, t.gpu_memory, t.speculative = self.model.core, self.gpu_bytes, self.spec_core
  if self.offload then
    t.host_bytes = self.offload.host // (util.count(self.tp, "tp") * util.count(self.pp, "pp"))
  end
  t.lengths = self.lengths and self.lengths:points() or nil
  t.max_num_seqs = self.max_num_seqs or self.max_num_seqs_default
  t.stage_gpu_bytes, t.stage_activation_bytes = stage_memories(self), self.stage_activation
  t.moe_experts, t.expert_bytes = self.moe_experts, self.expert_bytes
  -- SGLang's dp_size is its own (replicas or attention-DP ranks), not vLLM's
  if self.budget == "sglang" then t.data_parallel_size = nil end
  t.sglang_attn_dp, t.sglang_ep = self.sglang_attn_dp, self.sglang_ep
  t.attn_bytes, t.whole_bytes = self.attn_bytes, self.whole_bytes
  t.replicated_params, t.replicated_shards = self.replicated_params, self.replicated_shards
  t.replicated_cols, t.replicated_bytes = self.replicated_cols, self.replicated_bytes
  t.replicated_matmul = self.replicated_matmul
  t.sglang_replicas = self.sglang_replicas
  t.vllm_log_tokens_from_concurrency = self.vllm_log_tokens_from_concurrency
  t.vllm_check_override, t.vllm_check_null_block = self.vllm_check_override,
                                                   self.vllm_check_null_block
  t.vllm_block_grain = self.vllm_block_grain
  t.vllm_max_model_len_auto = self.vllm_max_model_len_auto
  t.vllm_system_rule = self.budget == "vllm" and self.vllm_system_rule or nil
  t.vllm_mamba_seqs_check = self.vllm_mamba_seqs_check
  t.kv_cache_group_of, t.kv_cache_group_blocks = self.kv_cache_group_of, self.kv_cache_group_blocks
  t.engine_named = self.engine_named
  t.vllm_lora = self.lora
  t.vllm_v0_blocks = self.vllm_v0_blocks
  t.vllm_mla_entry_align = self.vllm_mla_entry_align
  t.vllm_rotary_bytes = self.rotary_bytes
  t.sglang_alloc_bytes = self.sglang_alloc_bytes
  return t
end

--- Step times at `context` tokens and `concurrency` sequences of each
--- data-parallel rank (tokens_per_s counts every rank) (kvplan.sim):
--- {tpot_ms, ttft_ms, tokens_per_s, bound, kv_read_share, usd_per_mtok, ...},
--- and their ranges: tokens_per_s_lo/hi, tpot_ms_lo/hi, ttft_ms_lo/hi, the
--- same figures with every factor of the step time at the slow and at the
--- fast end of its uncertainty (a profile's interval, else the factor's
--- default spread: factors.lua).
function Deployment:time(context, concurrency)
  local sim = require "kvplan.sim"
  local t = sim.time(self, context, concurrency)
  local factors = require "kvplan.factors"
  local slow, fast = factors.ends(self)
  local ts = sim.time(self, context, concurrency, factors.perf_at(self, slow))
  local tf = sim.time(self, context, concurrency, factors.perf_at(self, fast))
  local min, max = math.min, math.max
  t.tokens_per_s_lo = min(ts.tokens_per_s, t.tokens_per_s, tf.tokens_per_s)
  t.tokens_per_s_hi = max(ts.tokens_per_s, t.tokens_per_s, tf.tokens_per_s)
  t.tpot_ms_lo, t.tpot_ms_hi = min(ts.tpot_ms, t.tpot_ms, tf.tpot_ms), max(ts.tpot_ms, t.tpot_ms, tf.tpot_ms)
  t.ttft_ms_lo, t.ttft_ms_hi = min(ts.ttft_ms, t.ttft_ms, tf.ttft_ms), max(ts.ttft_ms, t.ttft_ms, tf.ttft_ms)
  return t
end

--- The GPU rates and efficiency factors the step times use (kvplan.sim).
function Deployment:perf() return require("kvplan.sim").perf(self) end

--- The evaluated ledger of one GPU (a kvplan.Ledger, computed once).
function Deployment:ledger()
  if self._ledger == nil then
    local rates, why = require("kvplan.sim").rates(self) -- for l:time
    self._ledger = core.ledger(self:spec(), rates or why)
  end
  return self._ledger
end

--- Every worker (GPU) of the deployment as vLLM leaves it, in vLLM's rank
--- order (rank = stage x tp + tensor-parallel rank): a list of tables with
--- rank, stage, tp_rank, first_layer, layers, gpu_bytes, weights, kv_budget,
--- block_bytes, group_size, own_blocks (what its memory holds), blocks (the
--- fewest over all workers, which every worker uses), tensors, tensor_bytes,
--- pool_bytes and unused_bytes.
function Deployment:workers()
  local l, out = self:ledger(), {}
  -- a table a worker: tp is checked against its bound first (vLLM splits
  -- the attention heads over the ranks, verify_with_parallel_config), not
  -- met by building tp tables until memory runs out
  local heads = self.model.heads
  if heads ~= nil and self.tp > heads then
    util.raise("field 'tp' must be at most the %d attention heads of '%s' for workers(), got %d",
               heads, self.model.id, self.tp)
  end
  local w = self.worker_gpu_memory
  for s = 1, l.stages do
    for r = 1, self.tp do
      local rank = (s - 1) * self.tp + r
      local t = l:worker(s, w and w[rank] or nil)
      t.rank, t.tp_rank = rank - 1, r - 1
      out[#out + 1] = t
    end
  end
  return out
end

--- Would the engine start (vLLM, SGLang, TensorRT-LLM: the rules and their
--- sources in engine/core/starts.c, the same a sweep's `starts` column uses)?
--- Returns true and "" (or a note when the engine starts with a smaller
--- limit than asked), or false and the engine's error in words. A
--- deployment that does not fit at all (weights, no block) does not start
--- either: false and the ledger's reason.
function Deployment:starts()
  return self:ledger():starts()
end

--- A copy with some options changed: d:with{tp = 4, kv = "fp8"}. An optional
--- setting given as false returns to its default: d:with{gpu_memory = false}.
--- The deployment's optimizations are applied again to the changed options.
function Deployment:with(changes)
  if type(changes) ~= "table" then
    util.raise("d:with needs a table of changes, e.g. d:with{tp = 2}, got %s", type(changes))
  end
  changes = M.rename(changes, "deployment change")
  util.check_keys(changes, fields, "deployment change")
  local opts = util.copy(self.options)
  -- a gpu_memory that only sized a custom GPU goes with it
  opts.gpu = self.gpu
  if self.gpu_bytes == self.gpu.visible_bytes then opts.gpu_memory = nil end
  for k, v in pairs(changes) do
    if v == false then opts[k] = nil else opts[k] = v end
  end
  if changes.weights ~= nil and changes.weight_bytes == nil then opts.weight_bytes = nil end
  return M.new(opts)
end

--- Smallest power-of-two tp (<= max_tp, default 64) at which `concurrency`
--- requests of `context` tokens fit and the engine starts (l:fit's verdict):
--- tp, or 0 and the reason at the largest.
function Deployment:min_tp(context, concurrency, max_tp)
  return core.min_tp(self:spec(), context, concurrency or 1, max_tp)
end

function Deployment:__tostring()
  return string.format("kvplan.Deployment '%s' on %s (tp %d, pp %d)", self.model.id,
                       self.gpu.id, self.tp, self.pp)
end

-- a method called with something else as self, or with arguments it does
-- not take: an error at the user's line (util.methods), saying what to do
local change = "a deployment's fields are changed first, d:with{...}:%s() (e.g. d:with{tp = 2}:%s())"
util.methods(Deployment, {
  default = change,
  ledger = "one deployment has one ledger, whatever the requests: ask it l:fit(context, concurrency), "
    .. "l:max_concurrency(context) or l:max_context(concurrency); a field (max_model_len, tp, ...) "
    .. "is changed first, d:with{max_model_len = 1024}:ledger()",
})

-- the ledger's methods (core_lua.c) refuse arguments past their parameters
-- the same way
do
  local lm = core.ledger_methods
  local params = {
    max_concurrency = {"context"}, max_context = {"concurrency"}, fit = {"context", "concurrency"},
    starts = {}, seq_bytes = {"tokens", "stage"}, request_bytes = {"tokens", "stage"},
    worker = {"stage", "gpu_bytes"}, vllm_groups = {}, time = {"context", "concurrency"},
  }
  local hint = "a ledger is its deployment's: change the deployment first, d:with{...}:ledger():%s()"
  for _, name in ipairs(util.sorted_keys(lm)) do
    local p = params[name] or util.raise("internal: kvplan.Ledger:%s has no declared parameters", name)
    if core.params(lm[name]) == nil then -- the C function, not yet checked (a second load)
      lm[name] = util.checked_arity(lm[name], "kvplan.Ledger", name, p, #p == 0 and hint or nil)
    end
  end
end

return M
