-- stdlib/kvplan/launch.lua: the launch command of a deployment, kv.launch.
-- launch.command(d, engine) writes the command line that starts deployment d
-- under vLLM, SGLang or TensorRT-LLM (or a Kubernetes Deployment of the vLLM
-- command) with every setting kvplan assumed spelt out, once kvplan's own
-- startup rule (d:ledger():starts(), engine/core/starts.c) says the engine
-- starts; launch.parse(text, engine) reads such a command back into
-- kv.deploy options. Every command is read back and rebuilt before it is
-- returned: its ledger must be the deployment's (launch.same).
-- Stdlib layer: text only; the flags' names come from the field registry
-- (fields.lua: the engines' spellings, the first of a list), the values from
-- the resolved deployment (deploy.lua, deploy.engine_limits).
--
-- Where the names come from (each read at the commit named):
--   vLLM: `vllm serve MODEL --flag value`, every flag an EngineArgs field with
--     dashes (vllm/engine/arg_utils.py EngineArgs and add_cli_args at
--     vllm-project/vllm 99d7eb5d6a51); booleans are BooleanOptionalAction
--     (--enable-expert-parallel / --no-...); kv_cache_dtype takes "auto" (the
--     model dtype) or "fp8" (=fp8_e4m3) (CacheDType, vllm/config/cache.py);
--     speculative_config is JSON {"model", "num_speculative_tokens"}.
--   SGLang: `python3 -m sglang.launch_server --model-path MODEL --flag value`,
--     ServerArgs fields with dashes (python/sglang/srt/server_args.py at
--     sgl-project/sglang 001067fffe33: model_path, tp_size, pp_size,
--     context_length, mem_fraction_static, kv_cache_dtype of "auto",
--     "fp8_e4m3", "fp8_e5m2", "bf16", ..., page_size, max_running_requests,
--     chunked_prefill_size, max_total_tokens, quantization).
--   TensorRT-LLM: `trtllm-serve MODEL --flag value` with underscores
--     (tensorrt_llm/commands/serve.py at NVIDIA/TensorRT-LLM 4c05a74891e4:
--     --backend, --tp_size, --pp_size, --ep_size, --max_batch_size,
--     --max_num_tokens, --max_seq_len, --fail_fast_on_attention_window_too_large,
--     --extra_llm_api_options YAML). The KV cache's settings go in that YAML's
--     kv_cache_config (KvCacheConfig: free_gpu_memory_fraction, dtype,
--     tokens_per_block, max_tokens), all of them there: serve.py builds a
--     KvCacheConfig of --kv_cache_free_gpu_memory_fraction alone and the YAML
--     is applied over the arguments (update_llm_args_with_extra_dict), so a
--     kv_cache_config in the YAML is the one that counts.
--   Kubernetes: an apps/v1 Deployment whose container runs the vLLM command,
--     with the GPUs of one replica as its nvidia.com/gpu (amd.com/gpu on AMD
--     GPUs) requests and limits, the device plugins' resource names.

local util = require "kvplan.util"
local fields = require "kvplan.fields"
local deploy = require "kvplan.deploy"
local engines = require "kvplan.engines"

local M = {}

--- The engines launch.command writes for.
M.engines = {"vllm", "sglang", "trtllm", "k8s"}
local known = {vllm = true, sglang = true, trtllm = true, k8s = true}
local names = {vllm = "vLLM", sglang = "SGLang", trtllm = "TensorRT-LLM"}

-- The engine whose flags `engine` writes (k8s: vLLM's), an unknown one an error.
local function engine_of(engine)
  if not known[engine] then
    util.raise("unknown engine '%s' (expected vllm, sglang, trtllm or k8s)%s", util.shown(engine),
               util.suggest(util.shown(engine), M.engines))
  end
  return engine == "k8s" and "vllm" or engine
end

--- The name engine e gives field `name` (the registry's first spelling), or nil.
function M.spelling(name, e)
  local f = fields.by_name[name]
  local a = f and f[e]
  if a == true then return name end
  if type(a) == "table" then return a[1] end
  return a
end

-- The members of TensorRT-LLM's KvCacheConfig kvplan writes, in the YAML's
-- kv_cache_config (llm_args.py KvCacheConfig); its dtype is the KV format
-- ("auto" or "fp8"), not vLLM's --dtype, so it is no alias of kv.
local kv_cache_config = {free_gpu_memory_fraction = true, tokens_per_block = true, max_tokens = true,
                         dtype = true}

-- Environment variables vLLM reads for two of kvplan's fields (vllm/envs.py):
-- VLLM_USE_FLASHINFER_SAMPLER, VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE.
local vllm_env = {flashinfer_sampler = "VLLM_USE_FLASHINFER_SAMPLER",
                  allow_chunked_local_attn_with_hybrid_kv_cache =
                    "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE",
                  vllm_use_v1 = "VLLM_USE_V1"}
-- ... of which false is written too, as 0 (VLLM_USE_V1=0: the V0 engine;
-- VLLM_USE_FLASHINFER_SAMPLER=0, the sampler being on by default from 0.21:
-- vllm/envs.py "set to 0 to opt out explicitly"; flashinfer_sampler=false
-- wrote no variable and failed its own read-back as "a kvplan bug")
local vllm_env_false = {vllm_use_v1 = true, flashinfer_sampler = true}

-- vLLM's options kvplan models beyond the common ones, written when the
-- deployment gives them (registry order), under vLLM's names.
local vllm_only = {"enforce_eager", "max_seq_len_to_capture", "limit_mm_per_prompt", "skip_mm_profiling",
                   "disable_hybrid_kv_cache_manager", "num_gpu_blocks_override",
                   "kv_cache_memory_bytes", "decode_context_parallel_size", "mamba_cache_mode",
                   "mamba_block_size", "prefill_context_parallel_size", "enable_lora",
                   "max_loras", "max_lora_rank", "max_cpu_loras", "lora_dtype",
                   "fully_sharded_loras"}
local vllm_only_set = {}
for _, n in ipairs(vllm_only) do vllm_only_set[n] = true end

-- Fields that are no engine's setting: the hardware, kvplan's own model of
-- the engine or of time, the workload. A command does not carry them;
-- launch.parse takes them from its base.
local base_fields = {gpu = true, gpu_memory = true, weight_bytes = true, engine_version = true,
                     activation = true, overhead = true, name = true, efficiency = true,
                     perf = true, profile = true, profile_any = true, price_per_hour = true,
                     optim = true, prefix = true, samples = true, prompt = true, output = true,
                     lengths = true, worker_gpu_memory = true, block_stride_alignment = true,
                     budget = true, engine = true}

-- Settings of kvplan's that no engine's command line turns on: a deployment
-- that uses one is refused, with the reason.
local no_flag = {
  allocation = function(v) return v ~= nil and v ~= "paged" and "contiguous allocation is no engine's option" end,
  kv_recent = function(v) return v ~= nil and "a KIVI window (kv_recent) is no engine's option" end,
  evict = function(v) return v ~= nil and "KV eviction (evict) is no engine's option" end,
  offload = function(v) return v ~= nil and "KV offload to host memory needs a KV connector, which kvplan does not write" end,
  mxfp4_backend = function(v) return v ~= nil and "the MXFP4 kernel (mxfp4_backend) is vLLM's own choice, no flag" end,
  moe_backend = function(v)
    return v ~= nil and "TensorRT-LLM's moe_config.backend (moe_backend) is an extra_llm_api_options "
                        .. "section kvplan does not write"
  end,
  usage = function(v) return v == "offline" and "usage 'offline' is vLLM's LLM class, not a server command" end,
}

local function fail(fmt, ...) return nil, string.format(fmt, ...) end

-- The KV format of d as engine e spells it, or nil and why: "auto" for the
-- model's dtype; FP8 as vLLM's CacheDType ("fp8" = fp8_e4m3, "fp8_e4m3",
-- "fp8_e5m2"), SGLang's kv_cache_dtype choices ("fp8_e4m3", "fp8_e5m2") and
-- KvCacheConfig.dtype ("fp8", E4M3).
local kv_names = {
  vllm = {fp8 = "fp8", fp8_e4m3 = "fp8_e4m3", fp8_e5m2 = "fp8_e5m2"},
  sglang = {fp8 = "fp8_e4m3", fp8_e4m3 = "fp8_e4m3", fp8_e5m2 = "fp8_e5m2"},
  trtllm = {fp8 = "fp8", fp8_e4m3 = "fp8"},
}
local function kv_name(d, e)
  local k = d.kv.name
  if k == d.model:auto_kv_format().name then return "auto" end
  local n = kv_names[e][k]
  if n then return n end
  local known = util.sorted_keys(kv_names[e])
  return nil, string.format("KV format '%s' is not one %s takes (the model's dtype, %s)", k, names[e],
                            table.concat(known, ", "))
end

-- The quantization flag of deployment d's weights under engine e: nil when
-- the checkpoint's own, "fp8" for FP8 from a 16-bit checkpoint (vLLM's and
-- SGLang's online FP8), else nil and why.
local function quantization(d, e)
  local native = d.model:native_format().name
  local w = d.weights.name
  if w == native or w == d.model:mixed_format_name() then return false end
  if w == "fp8" and (e == "vllm" or e == "sglang") and (native == "bf16" or native == "fp16") then
    return "fp8"
  end
  return nil, string.format("weights '%s' need a checkpoint quantized to it; %s loads '%s' as %s",
                            w, names[e], d.model.hf or d.model.id, native)
end

-- The --speculative-config JSON of vLLM for d, nil without one, or nil, why.
local function speculative(d, e)
  local s = d.speculative
  if s == nil then return false end
  if e ~= "vllm" then return nil, "speculative decoding is written for vLLM only" end
  if s.draft == nil then
    return nil, "draft heads (eagle, mtp) need a head checkpoint or method kvplan does not name"
  end
  local dm = require("kvplan.models").get(s.draft)
  return string.format('{"model": "%s", "num_speculative_tokens": %d}', dm.hf or dm.id, s.tokens)
end

-- The deployment d as engine e runs it: d itself when it names e, else d
-- with e named (its budget rule, defaults and startup check; the release of
-- another engine dropped). A running-request cap (max_num_seqs) is a
-- deployment field under vLLM only: under SGLang and TensorRT-LLM it is the
-- scheduler's limit, returned second ({max_num_seqs =}).
local function as_engine(d, e)
  local limits = {}
  -- vLLM's sliding and chunked layers hold blocks for max_num_batched_tokens
  -- beyond their window (vllm/v1/kv_cache_interface.py SlidingWindowSpec and
  -- ChunkedLocalAttentionSpec max_memory_usage_bytes read
  -- scheduler_config.max_num_batched_tokens, at vllm-project/vllm
  -- 001cabc1be16), the scheduler's default when none is given; kvplan's
  -- deployment counts a step of 1 (steady decode) then. The command writes
  -- that default, so the deployment it describes is the one with it given
  -- (kvplan startup and validate take the same).
  local d2 = d
  if not (d.budget == e and d.options.engine == e) then
    local changes = {engine = e, budget = false}
    if d.budget ~= e then changes.engine_version = false end
    if e ~= "vllm" and d.options.max_num_seqs ~= nil then
      limits.max_num_seqs, changes.max_num_seqs = d.options.max_num_seqs, false
    end
    local ok, w = pcall(d.with, d, changes)
    if not ok then return nil, (tostring(w):gsub("^.-:%d+: ", "")) end
    d2 = w
  end
  if e == "vllm" and d2.options.max_num_batched_tokens == nil then
    local ok, w = pcall(function()
      return d2:with{max_num_batched_tokens = (deploy.engine_limits(d2, d2.options))}
    end)
    if not ok then return nil, (tostring(w):gsub("^.-:%d+: ", "")) end
    d2 = w
  end
  return d2, limits
end

--- launch.check_model_path(p, what): p as the model a command names, or an
--- error naming `what`, p and what was expected: a non-empty string that
--- does not begin with '-' (the engines' command lines are Python's argparse,
--- which takes a word beginning with '-' that is not a negative number for
--- an option: docs.python.org/3/library/argparse.html, "Arguments
--- containing -"; `checkpoint=--help` was read back as "no model after the
--- program"; a path is written ./-x).
function M.check_model_path(p, what)
  if type(p) ~= "string" or p == "" or p:sub(1, 1) == "-" then
    util.raise("%s must be a model path or Hugging Face id that does not begin with '-' "
               .. "(write ./-x for a path '-x'), got %s", what,
               type(p) == "string" and ("'" .. util.escape(p, 80) .. "'") or type(p))
  end
  return p
end

-- One line of argv: words joined, a word with a character the shell reads
-- in single quotes.
local function word(w)
  w = tostring(w)
  if w:find("^[%w%._/:=,+@%-]+$") then return w end
  return "'" .. w:gsub("'", "'\\''") .. "'"
end

-- A number as the shortest text that reads back as the same double.
local function number(v)
  if math.type(v) == "integer" then return tostring(v) end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", v)
    if tonumber(s) == v then return s end
  end
  return string.format("%.17g", v)
end

-- The flags of deployment d for engine e ("vllm", "sglang", "trtllm"):
-- {env = {{name, value}}, flags = {{name, value | true}}, yaml = {{key, value}}}
-- or nil, why.
local function flags_of(d, e, opts, carried)
  local o = d.options
  -- sorted, as the loops below: of several the field refused is the same every run
  for name, check in util.sorted_pairs(no_flag) do
    -- the MXFP4 kernel kvplan derives is the one vLLM picks itself on the
    -- GPU (deploy.lua, engines.mxfp4_backend): only a kernel given is one no
    -- flag carries
    local v = o[name]
    if name ~= "mxfp4_backend" then v = rawget(d, name) or v end
    local why = check(v)
    if why then return nil, why end
  end
  local l = d:ledger()
  local env, flags, yaml = {}, {}, {}
  local function flag(name, v, field)
    local n = field and M.spelling(field, e) or name
    if e == "trtllm" and kv_cache_config[n] then yaml[#yaml + 1] = {n, v}
    else flags[#flags + 1] = {n, v} end
  end
  local model = opts.model_path or d.model.hf
  if model == nil then
    return fail("model '%s' names no Hugging Face repository; give model_path (kvplan launch: checkpoint=)",
                util.escape(d.model.id))
  end
  M.check_model_path(model, opts.model_path and "model_path" or "the model's Hugging Face id")
  -- the snapshot kvplan read (model=ORG/NAME revision=REV): every engine
  -- takes --revision (vLLM's and SGLang's revision, trtllm-serve's too:
  -- tensorrt_llm/commands/serve.py get_llm_args at 00209af149e7)
  if opts.model_path == nil and d.model.hf_revision ~= nil then flag("revision", d.model.hf_revision) end
  if e == "trtllm" then flag("backend", d.trtllm_backend) end
  flag(nil, d.tp, "tp")
  flag(nil, d.pp, "pp")
  -- data and expert parallelism: vLLM's own fields; SGLang's dp_size (with
  -- --enable-dp-attention: ranks inside the tp GPUs) and ep_size;
  -- TensorRT-LLM takes expert parallelism as an EP size over the TP group
  local dp, ep = d.data_parallel_size or 1, d.enable_expert_parallel
  if e == "vllm" then
    if dp > 1 then flag(nil, dp, "data_parallel_size") end
    if ep then flag(nil, true, "enable_expert_parallel") end
  elseif e == "sglang" then
    if dp > 1 then flag(nil, dp, "data_parallel_size") end
    if d.enable_dp_attention then flag(nil, true, "enable_dp_attention") end
    if (d.ep_size or 1) > 1 then flag("ep_size", d.ep_size) end
    if ep then return fail("enable_expert_parallel is vLLM's; SGLang takes ep_size") end
  else
    if dp > 1 then return fail("data_parallel_size %d is written for vLLM and SGLang only", dp) end
    -- TensorRT-LLM's --ep_size is kv.deploy's ep_size (moe_ep_size)
    if (d.ep_size or 1) > 1 then flag("ep_size", d.ep_size) end
    if ep then flag("ep_size", d.tp) end
  end
  flag(nil, l.max_model_len, "max_model_len")
  flag(nil, d.utilization, "utilization")
  local kvn, why = kv_name(d, e)
  if kvn == nil then return nil, why end
  if e == "trtllm" then
    if kvn ~= "auto" then flag("dtype", kvn) end
  else
    flag(nil, kvn, "kv")
  end
  if o.block ~= nil then flag(nil, d.block, "block") end
  if d.max_kv_tokens ~= nil then
    if e == "vllm" then return fail("max_kv_tokens (a cap on the pool) has no vLLM flag") end
    flag(nil, d.max_kv_tokens, "max_kv_tokens")
  end
  local tokens, seqs = deploy.engine_limits(d, setmetatable({max_num_seqs = carried.max_num_seqs},
                                                            {__index = o}))
  -- SGLang's attention DP: the flags are the server's, each rank takes
  -- 1 / dp_size of them (deploy.engine_limits)
  local ranks = e == "sglang" and d.enable_dp_attention and dp or 1
  flag(nil, seqs * ranks, "max_num_seqs")
  flag(nil, tokens * ranks, "max_num_batched_tokens")
  local q
  q, why = quantization(d, e)
  if q == nil then return nil, why end
  if q then flag(nil, q, "weights") end
  local sp
  sp, why = speculative(d, e)
  if sp == nil then return nil, why end
  if sp then flag("speculative_config", sp) end
  if e == "vllm" and d.prefix then flag("enable_prefix_caching", true) end
  -- a pool of disaggregated serving: vLLM's NixlConnector with the pool's KV
  -- role (docs/features/nixl_connector_usage.md at vllm-project/vllm
  -- 029e67cd28a3: kv_producer for prefillers, kv_consumer for decoders),
  -- SGLang's disaggregation_mode (server_args.py: "prefill" or "decode")
  if opts.role ~= nil then
    if opts.role ~= "prefill" and opts.role ~= "decode" then
      util.raise("launch.command: role must be 'prefill' or 'decode', got '%s'", util.escape(util.shown(opts.role), 64))
    end
    if e == "vllm" then
      flag("kv_transfer_config", string.format('{"kv_connector": "NixlConnector", "kv_role": "%s"}',
                                               opts.role == "prefill" and "kv_producer" or "kv_consumer"))
    elseif e == "sglang" then
      flag("disaggregation_mode", opts.role)
    else
      return fail("a disaggregated %s pool needs trtllm-serve disaggregated's own configuration, "
                  .. "which kvplan does not write", opts.role)
    end
  end
  for _, n in ipairs(vllm_only) do
    local v = o[n]
    if n == "enforce_eager" and e == "sglang" then
      -- SGLang's --disable-cuda-graph (server_args.py: "Disable cuda graph.")
      if v then flag("disable_cuda_graph", true) end
    elseif v ~= nil then
      if e ~= "vllm" then return fail("field '%s' is vLLM's; %s has no such flag", n, names[e]) end
      if n == "limit_mm_per_prompt" then v = string.format('{"image": %d}', v) end
      if v ~= false then flag(n, v) end
    end
  end
  -- --async-scheduling / --no-async-scheduling, written when the
  -- deployment's differs from its release row's default (engines.vllm
  -- async_scheduling; vLLM's booleans are BooleanOptionalAction)
  if o.async_scheduling ~= nil then
    if e ~= "vllm" then return fail("field 'async_scheduling' is vLLM's; %s has no such flag", names[e]) end
    local row = engines.vllm[d.engine_version or engines.vllm_latest]
    if o.async_scheduling ~= ((row and row.async_scheduling) or false) then
      if o.async_scheduling then flag("async_scheduling", true)
      else flag("no_async_scheduling", true) end
    end
  end
  -- SGLang's --disable-overlap-schedule (kv.deploy's disable_overlap_schedule,
  -- which only budget sglang takes; server_args.py's store_true flag)
  if o.disable_overlap_schedule ~= nil then
    if e ~= "sglang" then
      return fail("field 'disable_overlap_schedule' is SGLang's; %s has no such flag", names[e])
    end
    if o.disable_overlap_schedule then flag("disable_overlap_schedule", true) end
  end
  for n, var in util.sorted_pairs(vllm_env) do
    if o[n] or (o[n] == false and vllm_env_false[n]) then
      if e ~= "vllm" then return fail("field '%s' is vLLM's; %s has no such setting", n, names[e]) end
      env[#env + 1] = {var, o[n] and "1" or "0"}
    end
  end
  table.sort(env, function(a, b) return a[1] < b[1] end)
  if e == "trtllm" and o.fail_fast_on_attention_window_too_large then
    flag("fail_fast_on_attention_window_too_large", true)
  end
  -- any other field given is one kvplan cannot pass
  for k, v in util.sorted_pairs(o) do
    local f = fields.by_name[k]
    if f and v ~= nil and not base_fields[k] and not no_flag[k] and not vllm_only_set[k]
       and not vllm_env[k] and k ~= "fail_fast_on_attention_window_too_large"
       and k ~= "async_scheduling" and k ~= "disable_overlap_schedule" then
      local handled = {model = true, tp = true, pp = true, kv = true, weights = true,
                       utilization = true, block = true, max_num_batched_tokens = true,
                       max_model_len = true, max_num_seqs = true, max_kv_tokens = true,
                       speculative = true, data_parallel_size = true,
                       enable_expert_parallel = true, backend = true,
                       enable_dp_attention = true, ep_size = true}
      if not handled[k] then return fail("field '%s' has no %s flag kvplan writes", k, names[e]) end
    end
  end
  return {model = model, env = env, flags = flags, yaml = yaml}
end

-- The command's text: the program, the model, one flag a line.
local function command_text(e, spec)
  local lines = {}
  local head = {}
  for _, kv in ipairs(spec.env) do head[#head + 1] = kv[1] .. "=" .. kv[2] end
  local sep = e == "vllm" and "-" or e == "sglang" and "-" or "_"
  if e == "vllm" then
    head[#head + 1] = "vllm serve " .. word(spec.model)
  elseif e == "sglang" then
    head[#head + 1] = "python3 -m sglang.launch_server --model-path " .. word(spec.model)
  else
    head[#head + 1] = "trtllm-serve " .. word(spec.model)
  end
  lines[1] = table.concat(head, " ")
  for _, f in ipairs(spec.flags) do
    local n = "--" .. f[1]:gsub("_", sep)
    lines[#lines + 1] = f[2] == true and n or (n .. " " .. word(type(f[2]) == "number" and number(f[2]) or f[2]))
  end
  if e == "trtllm" then lines[#lines + 1] = "--extra_llm_api_options extra_llm_api_options.yaml" end
  return table.concat(lines, " \\\n  ") .. "\n"
end

-- The argv words of a command (program first), as a list of strings.
local function argv_of(e, spec)
  local out = {}
  if e == "vllm" then out = {"vllm", "serve", spec.model} end
  for _, f in ipairs(spec.flags) do
    out[#out + 1] = "--" .. f[1]:gsub("_", "-")
    if f[2] ~= true then out[#out + 1] = type(f[2]) == "number" and number(f[2]) or tostring(f[2]) end
  end
  return out
end

local function yaml_text(spec)
  local t = {"kv_cache_config:"}
  for _, kv in ipairs(spec.yaml) do
    t[#t + 1] = string.format("  %s: %s", kv[1], type(kv[2]) == "number" and number(kv[2]) or tostring(kv[2]))
  end
  return table.concat(t, "\n") .. "\n"
end

-- A DNS-1123 name (Kubernetes object names): lower case, digits and '-', at
-- most 63 characters.
local function dns_name(s)
  s = tostring(s):lower():gsub("[^%w%-]+", "-"):gsub("%-+", "-"):gsub("^%-", ""):gsub("%-$", "")
  return s:sub(1, 63):gsub("%-$", "")
end

-- The Docker image of vLLM release v (kvplan's engine_version): the
-- vllm/vllm-openai tag vX.Y.Z ("0.11" -> v0.11.0), rocm/vllm on AMD.
local function image_of(d, opts)
  if opts.image ~= nil then
    -- written unquoted into the YAML: only the characters of an image
    -- reference (distribution/reference, regexp.go: name components of
    -- [a-z0-9._-] split by '/', a domain's ':port', ':tag' of [\w.-], '@'
    -- and a digest), so no value can add keys ('image=x' then a line break
    -- and "securityContext: {privileged: true}" was a key of the container),
    -- a comment ('x #c') or a mapping ('{a: b}')
    local v = opts.image
    if type(v) ~= "string" or not v:find("^[%w][%w%._%-/:@]*$") or #v > 512 then
      util.raise("field 'image' must be a container image reference (letters, digits, '.', '_', '-', "
                 .. "'/', ':', '@'; e.g. vllm/vllm-openai:v0.11.0), got %s",
                 type(v) == "string" and ("'" .. util.escape(v, 80) .. "'") or type(v))
    end
    return v
  end
  if d.gpu.vendor == "amd" then return "rocm/vllm:latest" end
  local v = d.engine_version
  if v == nil or v == "latest" then return "vllm/vllm-openai:latest" end
  if not v:find("^%d+%.%d+%.%d+") then v = v .. ".0" end
  return "vllm/vllm-openai:v" .. v
end

local function k8s_text(d, spec, opts)
  local argv = argv_of("vllm", spec)
  local name = dns_name(opts.name or d.name or (d.model.id .. "-" .. (d.gpu.id or "gpu")))
  local res = d.gpu.vendor == "amd" and "amd.com/gpu" or "nvidia.com/gpu"
  local gpus = deploy.gpus(d)
  local replicas = util.count(opts.replicas or 1, "replicas", 1)
  local q = function(s) return '"' .. tostring(s):gsub('\\', '\\\\'):gsub('"', '\\"') .. '"' end
  -- an item of the container's command, args or an env value: Kubernetes
  -- expands $(VAR_NAME) in them and reads $$ as $ (kubernetes/api
  -- core/v1/types.go at 01021110c434, Container.Command and Args: "can be
  -- escaped with a double $$"), so every '$' is doubled (a checkpoint
  -- '$(HOME)/m' was the container's home); a control character is a YAML
  -- escape \xNN (a double-quoted scalar folds a line break into a space)
  local qa = function(s)
    s = tostring(s):gsub("%$", "$$")
    return (q(s):gsub("[%c\127]", function(c) return string.format("\\x%02x", c:byte()) end))
  end
  local t = {
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  name: " .. name,
    "  labels:",
    "    app: " .. name,
    "  annotations:",
    "    kvplan/gpu: " .. q(d.gpu.id or "custom"),
    "spec:",
    "  replicas: " .. replicas,
    "  selector:",
    "    matchLabels:",
    "      app: " .. name,
    "  template:",
    "    metadata:",
    "      labels:",
    "        app: " .. name,
    "    spec:",
    "      containers:",
    "      - name: vllm",
    "        image: " .. image_of(d, opts),
    "        command:",
  }
  t[#t + 1] = "        - " .. qa(argv[1])
  t[#t + 1] = "        - " .. qa(argv[2])
  t[#t + 1] = "        args:"
  for i = 3, #argv do t[#t + 1] = "        - " .. qa(argv[i]) end
  if #spec.env > 0 then
    t[#t + 1] = "        env:"
    for _, kv in ipairs(spec.env) do
      t[#t + 1] = "        - name: " .. kv[1]
      t[#t + 1] = "          value: " .. qa(kv[2])
    end
  end
  for _, line in ipairs{
    "        ports:",
    "        - containerPort: 8000",
    "        resources:",
    "          requests:",
    "            " .. res .. ": " .. gpus,
    "          limits:",
    "            " .. res .. ": " .. gpus,
    "        volumeMounts:",
    "        - name: shm",
    "          mountPath: /dev/shm",
    "      volumes:",
    "      - name: shm",
    "        emptyDir:",
    "          medium: Memory",
  } do t[#t + 1] = line end
  return table.concat(t, "\n") .. "\n"
end

-- The first comment line: what kvplan predicts, and the settings that are
-- not flags (the GPU, the release whose defaults were assumed), as
-- key=value words launch.parse reads back.
local function summary(d, e)
  local l = d:ledger()
  local words = {"gpu=" .. (d.gpu.id or "custom")}
  if d.gpu.id == nil or d.gpu_bytes ~= d.gpu.visible_bytes then
    words[#words + 1] = "gpu_memory=" .. d.gpu_bytes .. "B"
  end
  if d.engine_version then words[#words + 1] = "engine_version=" .. d.engine_version end
  local _, note = l:starts()
  local ranks = l.data_parallel_size > 1 and string.format(" on each of %d DP ranks", l.data_parallel_size)
                or ""
  return string.format("# kvplan %s %s: %s on %d x %s; KV cache %d tokens (%d blocks of %d), "
                       .. "%s of %d tokens at once%s; starts%s\n",
                       -- the ids with their control characters as escapes: a model
                       -- id with a line break (model=DIR/config.json of a directory
                       -- 'x\ntouch PWNED') ended the comment, its rest a shell line
                       e, table.concat(words, " "), util.escape(d.model.id, math.huge), deploy.gpus(d),
                       util.escape(d.gpu.id or "GPU", math.huge),
                       l.kv_tokens, l.kv_blocks, l.block,
                       util.count_of(l:max_concurrency(l.max_model_len), "request"),
                       l.max_model_len, ranks, note ~= "" and (" (" .. note .. ")") or "")
end

--- launch.command(d, engine [, opts]): the text of the command that starts
--- deployment d under engine ("vllm", "sglang", "trtllm", or "k8s": a
--- Kubernetes Deployment running the vLLM command), every flag kvplan
--- assumed written out; the first line a comment of what kvplan predicts.
--- A deployment that does not name engine is taken as that engine runs it
--- (d:with{engine = engine}). opts: model_path (instead of the model's
--- Hugging Face id), replicas, name and image (k8s), max_num_seqs (SGLang's
--- max_running_requests, TensorRT-LLM's max_batch_size: their scheduler's
--- cap, which is no deployment field there), role ("prefill" or "decode": a
--- pool of disaggregated serving, vLLM's NixlConnector KV role or SGLang's
--- disaggregation_mode).
--- Returns text, info ({deployment, ledger, argv, yaml}) or, when kvplan
--- predicts the engine would not start (d:ledger():starts()) or no flag
--- says what d assumes, nil and why.
function M.command(d, engine, opts)
  opts = opts or {}
  if getmetatable(d) ~= deploy.Deployment then
    util.raise("launch.command needs a deployment (kv.deploy), got %s", type(d))
  end
  local e = engine_of(engine)
  if e == "trtllm" and d.gpu.vendor ~= nil and d.gpu.vendor ~= "nvidia" then
    return nil, string.format("TensorRT-LLM runs on NVIDIA GPUs, not on %s (%s)", d.gpu.id, d.gpu.vendor)
  end
  local dl, carried = as_engine(d, e)
  if dl == nil then return nil, carried end
  if opts.max_num_seqs ~= nil then
    if e == "vllm" then util.raise("launch.command: give vLLM's max_num_seqs to kv.deploy, not to launch") end
    carried.max_num_seqs = util.count(opts.max_num_seqs, "max_num_seqs", 1)
  end
  local why
  local ok, note = dl:ledger():starts()
  if not ok then return nil, string.format("%s would not start: %s", names[e], note) end
  local spec
  spec, why = flags_of(dl, e, opts, carried)
  if spec == nil then return nil, why end
  local text = summary(dl, engine)
  local yaml
  if e == "trtllm" then
    yaml = yaml_text(spec)
    text = text .. "cat > extra_llm_api_options.yaml <<'EOF'\n" .. yaml .. "EOF\n"
  end
  text = text .. (engine == "k8s" and k8s_text(dl, spec, opts) or command_text(e, spec))
  -- every command is read back: its deployment must be this one
  local base = {gpu = dl.gpu, gpu_memory = dl.gpu_bytes ~= dl.gpu.visible_bytes and dl.gpu_bytes or nil}
  for k in pairs(base_fields) do
    if base[k] == nil and k ~= "engine" and k ~= "budget" then base[k] = dl.options[k] end
  end
  if opts.model_path then base.model = dl.model end
  local popts, limits = M.parse(text, engine, base)
  local same, diff = M.same(dl, popts, limits, carried)
  if not same then
    util.raise("kvplan's %s command for %s does not read back as the deployment (%s); a kvplan bug",
               engine, util.shown(dl), diff)
  end
  return text, {deployment = dl, ledger = dl:ledger(), argv = argv_of(e, spec), yaml = yaml,
                limits = carried}
end

-- ---- reading a command back ---------------------------------------------

-- The words of a shell command line: whitespace-separated, single quotes
-- and double quotes kept together, backslash-newlines joined.
local function split(text)
  local out, i, n = {}, 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c:match("%s") then i = i + 1
    elseif c == "\\" and text:sub(i + 1, i + 1) == "\n" then i = i + 2
    else
      local w = {}
      while i <= n do
        c = text:sub(i, i)
        if c:match("%s") then break end
        if c == "'" then
          local j = text:find("'", i + 1, true)
          if j == nil then util.raise("launch.parse: a quote is not closed in '%s'", util.escape(text, 64)) end
          w[#w + 1] = text:sub(i + 1, j - 1)
          i = j + 1
        elseif c == '"' then
          local j = text:find('"', i + 1, true)
          if j == nil then util.raise("launch.parse: a quote is not closed in '%s'", util.escape(text, 64)) end
          w[#w + 1] = text:sub(i + 1, j - 1)
          i = j + 1
        elseif c == "\\" and text:sub(i + 1, i + 1) == "\n" then i = i + 2
        elseif c == "\\" and i < n then
          -- outside quotes a backslash quotes the next character: the '\''
          -- of a single quote inside a quoted word (a checkpoint path with a
          -- quote was "a quote is not closed")
          w[#w + 1] = text:sub(i + 1, i + 1)
          i = i + 2
        else w[#w + 1] = c; i = i + 1 end
      end
      out[#out + 1] = table.concat(w)
    end
  end
  return out
end

local kv_back = {auto = "auto", fp8 = "fp8", fp8_e4m3 = "fp8_e4m3", fp8_e5m2 = "fp8_e5m2", bf16 = "bf16",
                 bfloat16 = "bf16", float16 = "fp16", half = "fp16"}

-- Value v (text) of registry field f as kv.deploy takes it.
local function value_of(f, v, flagname)
  local t = f.type
  if v == true then
    if t ~= "boolean" then util.raise("launch.parse: flag '--%s' needs a value", flagname) end
    return true
  end
  if t == "count" or t == "bytes" then
    local x = math.tointeger(tonumber(v))
    if x == nil then util.raise("launch.parse: flag '--%s' must be an integer, got '%s'", flagname, v) end
    return x
  elseif t == "fraction" or t == "number" then
    local x = tonumber(v)
    if x == nil then util.raise("launch.parse: flag '--%s' must be a number, got '%s'", flagname, v) end
    return x
  elseif t == "boolean" then
    if v == "true" or v == "True" or v == "1" then return true end
    if v == "false" or v == "False" or v == "0" then return false end
    util.raise("launch.parse: flag '--%s' must be true or false, got '%s'", flagname, v)
  end
  return v
end

-- A list item or env value of k8s_text read back: the YAML double-quoted
-- scalar's escapes (\\, \", \xNN) undone, then Kubernetes' $$ (one '$').
local function k8s_item(q, line)
  local out, i, n = {}, 1, #q
  while i <= n do
    local c = q:sub(i, i)
    if c == "\\" then
      local e = q:sub(i + 1, i + 1)
      if e == "x" then
        local h = q:sub(i + 2, i + 3)
        if not h:find("^%x%x$") then
          util.raise("launch.parse: a bad \\x escape in '%s'", util.escape(line, 64))
        end
        out[#out + 1] = string.char(tonumber(h, 16))
        i = i + 4
      else
        out[#out + 1] = e
        i = i + 2
      end
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return (table.concat(out):gsub("%$%$", "$"))
end

--- launch.parse(text, engine [, base]): a command of launch.command (or one
--- written by hand in its form) read back into kv.deploy options: the
--- engine's flags by the registry's spellings (dashes as underscores), the
--- model by its Hugging Face id, engine named; the first comment line's
--- key=value words (gpu=, engine_version=) and base (a table: the fields a
--- command does not carry, such as gpu or prefix) fill what the flags do not
--- give. Returns options, limits ({max_num_seqs =} for SGLang and
--- TensorRT-LLM, whose running-request cap is the scheduler's, kv.simulate's
--- option, not a deployment field; role = "prefill" or "decode" for a pool
--- of disaggregated serving). An unknown flag is an error naming it.
function M.parse(text, engine, base)
  if type(text) ~= "string" then util.raise("launch.parse needs the command's text, got %s", type(text)) end
  local e = engine_of(engine)
  local opts, limits = {engine = e}, {}
  local from_comment = {}
  local body = {}
  local yaml = {}
  local in_yaml, words
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local kvw = line:match("^# kvplan %S+ (.-):")
    if kvw then
      for k, v in kvw:gmatch("([%w_]+)=(%S+)") do from_comment[k] = v end
    elseif line:match("^%s*#") then -- a comment
    elseif line:match("<<'EOF'%s*$") then in_yaml = true
    elseif in_yaml then
      if line == "EOF" then in_yaml = false else yaml[#yaml + 1] = line end
    else body[#body + 1] = line end
  end
  if engine == "k8s" then
    -- the container's command and args, one list item a line
    words = {}
    local list
    for _, line in ipairs(body) do
      local key = line:match("^%s+(%w+):%s*$")
      if key then list = (key == "command" or key == "args") and key or nil
      elseif list and line:match("^%s+%- ") then
        -- a YAML double-quoted scalar as k8s_text writes it (\" and \\ escaped)
        local q = line:match('^%s+%- "(.*)"%s*$')
        if q == nil then util.raise("launch.parse: expected a quoted list item, got '%s'", util.escape(line, 64)) end
        words[#words + 1] = k8s_item(q, line)
      elseif not line:match("^%s+%- ") then list = nil end
      local n, v = line:match("^%s+%- name: (%S+)"), nil
      if n then
        for j, l2 in ipairs(body) do
          if l2 == line then v = (body[j + 1] or ""):match('value: "(.*)"') break end
        end
        if v then table.insert(words, 1, n .. "=" .. k8s_item(v, line)) end
      end
    end
  else
    words = split(table.concat(body, "\n"))
  end
  local i = 1
  -- environment assignments before the program
  while words[i] and words[i]:match("^[A-Z_][A-Z0-9_]*=") do
    local var, v = words[i]:match("^([^=]+)=(.*)$")
    local field
    for n, ev in pairs(vllm_env) do if ev == var then field = n end end
    if field == nil then util.raise("launch.parse: unknown environment variable '%s'", var) end
    opts[field] = v == "1" or v == "true"
    i = i + 1
  end
  local function expect(w)
    if words[i] ~= w then
      util.raise("launch.parse: expected '%s' at word %d of the %s command, got '%s'", w, i, engine,
                 util.shown(words[i]))
    end
    i = i + 1
  end
  if e == "vllm" then expect("vllm"); expect("serve")
  elseif e == "sglang" then expect("python3"); expect("-m"); expect("sglang.launch_server")
  else expect("trtllm-serve") end
  if e ~= "sglang" then
    if words[i] == nil or words[i]:sub(1, 2) == "--" then util.raise("launch.parse: no model after the program") end
    opts.model = words[i]
    i = i + 1
  end
  local sep = e == "trtllm" and "_" or "-"
  local seen = {}
  local revision
  local function set(field, v, flagname)
    if opts[field] ~= nil and seen[field] then
      util.raise("launch.parse: flag '--%s' sets '%s' a second time", flagname, field)
    end
    seen[field] = true
    opts[field] = v
  end
  local function take(name, v)
    -- name with underscores; v a string or true
    if name == "extra_llm_api_options" then return end
    if name == "kv_transfer_config" then
      local role = require("kvplan.json").decode(v, "--kv-transfer-config").kv_role
      limits.role = role == "kv_producer" and "prefill" or role == "kv_consumer" and "decode" or role
      return
    end
    if name == "disaggregation_mode" then limits.role = v return end
    if name == "revision" then
      if revision ~= nil then util.raise("launch.parse: flag '--revision' given a second time") end
      revision = v
      return
    end
    if name == "enable_prefix_caching" or name == "no_enable_prefix_caching" then return end
    if name == "speculative_config" then
      local json = require "kvplan.json"
      local s = json.decode(v, "--speculative-config")
      set("speculative", {tokens = s.num_speculative_tokens, draft = s.model}, name)
      return
    end
    if name == "ep_size" and (e == "sglang" or e == "trtllm") then
      set("ep_size", tonumber(v) or v, name)
      return
    end
    if name == "ep_size" then
      if tonumber(v) and tonumber(v) > 1 then set("enable_expert_parallel", true, name) end
      return
    end
    if name == "limit_mm_per_prompt" then
      local s = require("kvplan.json").decode(v, "--limit-mm-per-prompt")
      set("limit_mm_per_prompt", s.image, name)
      return
    end
    if name == "dtype" and e == "trtllm" then set("kv", kv_back[v] or v, name) return end
    local neg = name:match("^no_(.+)$")
    local field = fields.aliases[name] or (fields.names[name] and name)
    if field == nil and neg then
      field = fields.aliases[neg] or (fields.names[neg] and neg)
      if field then v = false end
    end
    if field == nil then util.raise("launch.parse: unknown %s flag '--%s'", engine, (name:gsub("_", sep))) end
    local f = fields.by_name[field]
    -- (not `v == false and false or ...`: that and/or reads false as unset)
    local x = false
    if v ~= false then x = value_of(f, v, name) end
    if field == "kv" then x = kv_back[x] or x end
    if field == "max_num_seqs" and e ~= "vllm" then
      limits.max_num_seqs = x
      return
    end
    if field == "model" then set("model", x, name) return end
    set(field, x, name)
  end
  while i <= #words do
    local w = words[i]
    local name = w:match("^%-%-(.+)$")
    if name == nil then util.raise("launch.parse: expected a flag, got '%s'", w) end
    local v
    local eq = name:find("=", 1, true)
    if eq then name, v = name:sub(1, eq - 1), name:sub(eq + 1)
    elseif words[i + 1] ~= nil and words[i + 1]:sub(1, 2) ~= "--" then v = words[i + 1]; i = i + 1
    else v = true end
    take((name:gsub("%-", "_")), v)
    i = i + 1
  end
  if revision ~= nil then
    if revision == true then util.raise("launch.parse: flag '--revision' needs a value") end
    if type(opts.model) ~= "string" or opts.model:find("@", 1, true) then
      util.raise("launch.parse: flag '--revision' needs a model given as ORG/NAME, got '%s'",
                 util.escape(util.shown(opts.model), 64))
    end
    -- the snapshot's model, as model=ORG/NAME revision=REV names it
    opts.model = opts.model .. "@" .. revision
  end
  -- TensorRT-LLM's YAML: kv_cache_config's members
  local section
  for _, line in ipairs(yaml) do
    local top = line:match("^([%w_]+):%s*$")
    local k, v = line:match("^%s+([%w_]+):%s*(%S+)%s*$")
    if top then section = top
    elseif k and section == "kv_cache_config" then take(k, v)
    elseif line:match("%S") then util.raise("launch.parse: unread YAML line '%s'", util.escape(line, 64)) end
  end
  if opts.model then
    local m = opts.model
    local ok, got = pcall(require("kvplan.models").get, m)
    if ok then opts.model = got end
  end
  base = base or {}
  if base.model ~= nil then opts.model = base.model end
  for k, v in pairs(base) do if opts[k] == nil then opts[k] = v end end
  for k, v in util.sorted_pairs(from_comment) do
    if opts[k] == nil then
      local f = fields.by_name[k]
      opts[k] = f and f.type == "bytes" and require("kvplan.units").bytes(v, k) or v
    end
  end
  return opts, limits
end

-- ---- the round trip -------------------------------------------------------

--- The figures a deployment's command must reproduce: the ledger's budget,
--- blocks, tokens and concurrency, whether it starts, and the engine's limits.
function M.figures(d, limits)
  local l = d:ledger()
  local ok, note = l:starts()
  local given = util.copy(limits or {})
  local tokens, seqs = deploy.engine_limits(d, setmetatable(given, {__index = d.options}))
  return {kv_budget = l.kv_budget, kv_blocks = l.kv_blocks, kv_tokens = l.kv_tokens,
          block = l.block, max_model_len = l.max_model_len, weights = l.weights,
          activation = l.activation, overhead = l.overhead, usable = l.usable,
          max_concurrency = l:max_concurrency(l.max_model_len), starts = ok, starts_note = note,
          max_num_batched_tokens = tokens, max_num_seqs = seqs, kv_token_bits = l.kv_token_bits, tp = d.tp, pp = d.pp,
          utilization = d.utilization}
end

M.figure_names = {"kv_budget", "kv_blocks", "kv_tokens", "block", "max_model_len", "weights",
                  "activation", "overhead", "usable", "max_concurrency", "starts", "starts_note",
                  "max_num_batched_tokens", "max_num_seqs", "kv_token_bits", "tp", "pp", "utilization"}

--- launch.same(d, options [, limits [, d_limits]]): does kv.deploy(options)
--- (a parsed command) with its limits give deployment d's figures
--- (launch.figures, d under d_limits: launch.command's info.limits)? true,
--- or false and the first figure that differs.
function M.same(d, options, limits, d_limits)
  local ok, d2 = pcall(deploy.new, options)
  if not ok then return false, "kv.deploy: " .. tostring(d2) end
  local a, b = M.figures(d, d_limits), M.figures(d2, limits)
  for _, k in ipairs(M.figure_names) do
    if a[k] ~= b[k] then
      return false, string.format("%s %s, read back %s", k, tostring(a[k]), tostring(b[k]))
    end
  end
  return true
end

-- ---- a ranked candidate's commands ----------------------------------------

-- The deployment of pool p (c.prefill or c.decode) of candidate c.
local function pool_deployment(c, p)
  if p.deployment ~= nil then return p.deployment end
  local base = c.deployment
  if base == nil then return nil end
  local changes = {}
  for _, k in ipairs{"gpu", "tp", "pp", "weights", "kv"} do
    if p[k] ~= nil then changes[k] = p[k] end
  end
  return base:with(changes)
end

--- launch.emit(c, engine [, opts]): the launch text of a ranked candidate of
--- kv.plan or kv.best (c.deployment; c.replicas): one command, or for a
--- disaggregated candidate (c.prefill and c.decode) one command a pool, each
--- with its role and replicas, after a comment naming the pool. Under k8s
--- the replicas are the Deployment's, and the two pools two Deployments
--- ("---" between). Returns the text, or nil and why (the pool's).
function M.emit(c, engine, opts)
  opts = opts or {}
  if type(c) ~= "table" then util.raise("launch.emit needs a candidate (a table), got %s", type(c)) end
  if c.prefill ~= nil and c.decode ~= nil then
    local parts = {}
    for _, role in ipairs{"prefill", "decode"} do
      local p = c[role]
      local d = pool_deployment(c, p)
      if d == nil then return nil, role .. " pool: no deployment" end
      local o = util.copy(opts)
      o.role, o.replicas = role, p.replicas or 1
      o.name = o.name or (d.model.id .. "-" .. (d.gpu.id or "gpu") .. "-" .. role)
      local text, why = M.command(d, engine, o)
      if text == nil then return nil, role .. " pool: " .. why end
      if engine == "k8s" then
        parts[#parts + 1] = text
      else
        parts[#parts + 1] = string.format("# %s pool: %d replica(s) of\n%s", role, o.replicas, text)
      end
    end
    return table.concat(parts, engine == "k8s" and "---\n" or "\n")
  end
  if c.deployment == nil then return nil, "the candidate has no deployment" end
  local o = util.copy(opts)
  o.replicas = o.replicas or c.replicas
  local text, why = M.command(c.deployment, engine, o)
  if text == nil then return nil, why end
  if engine ~= "k8s" and (c.replicas or 1) > 1 then
    text = string.format("# %d replicas of\n%s", c.replicas, text)
  end
  return text
end

--- launch.winner(ranked, engine [, opts]): the launch text of the best
--- ranked candidate (c.rank set, in rank order) that engine starts: rank 1's,
--- or, when kvplan refuses rank 1's command (TensorRT-LLM on an AMD GPU, a
--- format no flag gives), the first that is not, after a comment saying
--- why each one before it was passed over. Returns text, the candidate; or
--- nil and why when no ranked candidate's command can be written.
function M.winner(ranked, engine, opts)
  local passed = {}
  for _, c in ipairs(ranked) do
    if c.rank then
      local text, why = M.emit(c, engine, opts)
      if text then
        local head = {}
        for _, p in ipairs(passed) do head[#head + 1] = "# " .. p .. "\n" end
        if #head > 0 then head[#head + 1] = string.format("# rank %d:\n", c.rank) end
        return table.concat(head) .. text, c
      end
      passed[#passed + 1] = string.format("rank %d (%s, tp %d) not launched: %s", c.rank, c.gpu, c.tp, why)
    end
  end
  if #passed == 0 then return nil, "no deployment serves, so there is none to launch" end
  return nil, table.concat(passed, "; ")
end

-- ---- kvplan launch ---------------------------------------------------------

--- The command's own arguments: name, default, meaning ("" for none given).
M.own_arguments = {
  {"model", nil, "catalog id or alias"},
  {"gpu", nil, "GPU id or alias"},
  {"engine", "vllm", "vllm, sglang, trtllm or k8s (a Kubernetes Deployment of the vLLM command)"},
  {"checkpoint", "", "the model's path or repository in the command (none: its Hugging Face id)"},
  {"replicas", 1, "k8s: the Deployment's replicas"},
  {"image", "", "k8s: the container image (none: vllm/vllm-openai of the release, rocm/vllm on AMD)"},
}

--- The deployment fields other commands take as their own axes, one value
--- each here.
M.axis_fields = {"tp", "pp", "kv", "weights"}

--- Every argument of kvplan launch, in order: {name, default, meaning, field}
--- (field: the registry row of a deployment field, its default "" for not
--- given), the command's own then every one-word deployment field
--- (kv.options.deployment_fields, as the script takes them).
function M.command_arguments()
  local out, defaults = {}, {name = ""}
  for _, a in ipairs(M.own_arguments) do
    out[#out + 1] = {a[1], a[2], a[3]}
    defaults[a[1]] = a[2] or ""
  end
  out[#out + 1] = {"name", "", "k8s: the Deployment's name (none: model-gpu)"}
  local list = {}
  for i, n in ipairs(M.axis_fields) do list[i], defaults[n] = n, "" end
  for _, n in ipairs(require("kvplan.options").deployment_fields(defaults, {engine = true})) do
    list[#list + 1] = n
  end
  for _, n in ipairs(list) do
    local f = fields.by_name[n]
    out[#out + 1] = {n, "", f.meaning .. " (default: " .. tostring(f.default) .. ")", f}
  end
  return out
end

--- `kvplan launch --help`.
function M.command_help()
  local lines = {
    "usage: kvplan launch model=M gpu=G [engine=vllm|sglang|trtllm|k8s] [key=value ...]",
    "Print the command that starts the deployment under its engine, every flag kvplan",
    "assumed written out (kv.launch.command): vllm serve, python3 -m sglang.launch_server,",
    "trtllm-serve with its extra_llm_api_options YAML, or a Kubernetes Deployment of the",
    "vLLM command. The first line, a comment, is what kvplan predicts. A deployment kvplan",
    "predicts would not start is not printed: the refusal goes to stderr, exit status 1.",
    "",
    "arguments:",
  }
  fields.argument_lines(lines, M.command_arguments())
  lines[#lines + 1] = ""
  lines[#lines + 1] = "The engines' option names stand for kvplan's, with dashes or underscores"
  lines[#lines + 1] = "(tensor-parallel-size=4, mem_fraction_static=0.85, max_batch_size=256: docs/fields.md),"
  lines[#lines + 1] = "so a printed command's flags, written key=value, give the same deployment."
  return table.concat(lines, "\n") .. "\n"
end

return M
