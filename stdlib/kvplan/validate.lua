-- stdlib/kvplan/validate.lua: check kvplan against engine startup logs.
-- Stdlib layer: a log parser, the two checks and the report shape; the
-- arithmetic is the ledger's and the predictor's (kvplan.deploy,
-- kvplan.engines).
--
--   kv.validate(text [, opts]) -> rows, facts
--   kvplan validate LOG... [--config DIR] [summary=1]
--
-- A log is the text an engine prints at startup, optionally opened by
-- header lines "# key: value" that say what the log does not: source (the
-- URL it was copied from), engine, version, model (a catalog id), gpu (a
-- catalog id), tp, note. Every figure the log states is predicted two ways:
--
--   exact    given the KV memory the engine itself reports, the tokens,
--            blocks and concurrency must follow by the ledger's rules; the
--            logged GiB are rounded to their printed digits, so kvplan is
--            evaluated at both ends of that rounding and "exact" means the
--            logged figure lies between the two answers.
--   predict  from the GPU, the model and the flags alone (kv.deploy with the
--            predicted activation and non-torch memory, engines.lua): the
--            weights, activation peak, non-torch memory, KV memory, tokens.
--
-- One row per figure: kvplan's value, the log's, the relative error, and
-- where each input came from: "log" (printed by the engine), "header" (the
-- thread the log was copied from, e.g. the GPU), "default" (the engine
-- version's default, where the log shows the command line or engine
-- arguments without the flag), "assumed" (the default again, but the log
-- shows no command line or arguments: the flag may have been given),
-- "catalog". A figure the log does not state is not checked; an input the
-- prediction needs and nothing states is reported as missing, never
-- guessed; a KV figure of a deployment with a KV connector (LMCache, ...)
-- is reported as missing, its buffers not being modelled. A truncated log
-- gives the rows it can. summary() gives each figure over all rows and,
-- where some rows rest on assumed inputs, "<figure>_stated" without them.

local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local GiB = units.GiB

-- ---- numbers as printed ----------------------------------------------------------

-- Figures of the log being parsed that are no number kvplan reads (past
-- 64 bits, not finite, more digits than any engine prints): M.parse keeps
-- them as f.unread, and M.check says so in a parse row instead of dropping
-- the figure's row (or ending the run at an infinite cell) without a word.
local unread

-- Where the last successful `last` matched: its position in the body being
-- parsed (nil after a question no line answered), and the body's line
-- numbers (M.parse: line_at(pos) is the log's line holding pos).
local hit
local line_at = function() return nil end

-- The index of the last of the rising positions `starts` at or before p
-- (binary search; 1 when there is none).
local function line_index(starts, p)
  local lo, hi = 1, #starts
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if starts[mid] <= p then lo = mid else hi = mid - 1 end
  end
  return lo
end

local function refuse(s)
  if unread then unread[#unread + 1] = {text = s, line = hit and line_at(hit)} end
  return nil
end

--- A printed decimal figure: its value and the two ends of its rounding
--- interval, in the unit it was printed in (mid, lo, hi as numbers).
local function figure(s)
  if s == nil then return nil end
  s = s:gsub(",", "")
  local int, frac = s:match("^%-?(%d+)%.?(%d*)$")
  if int == nil then return nil end
  local v = tonumber(s)
  if #s > 40 or v == nil or v - v ~= 0 then return refuse(s) end
  local half = 0.5 / 10 ^ #frac
  return {mid = v, lo = v - half, hi = v + half, text = s}
end
M.figure = figure

local function int(s)
  if s == nil then return nil end
  local t = s:gsub(",", "")
  local v = #t <= 40 and math.tointeger(tonumber(t)) or nil
  if v == nil and t:find("^%d+$") then return refuse(t) end
  return v
end

-- ---- parsing -----------------------------------------------------------------------

-- The first capture of the last line matching any pattern (later lines win:
-- a retried start prints the figures again).
local function last(text, patterns)
  local found
  hit = nil
  for _, p in ipairs(patterns) do
    local it = text:gmatch("()" .. p)
    while true do
      local caps = table.pack(it())
      if caps[1] == nil then break end
      found = caps
    end
    if found then
      hit = found[1]
      return table.unpack(found, 2, found.n)
    end
  end
  return nil
end

-- Flags of a command line or an engine-args dump, by their spellings.
local function flag(text, names)
  for _, n in ipairs(names) do
    local v = last(text, {"%-%-" .. n:gsub("%-", "%%-") .. "[= ]+['\"]?([%w%._/%-]+)",
                          "[%s{,(]'?" .. n:gsub("%-", "_") .. "'?[=:]%s*['\"]?([%w%._/%-]+)",
                          -- a configuration listed as "name: value"
                          "%f[%w%-]" .. n:gsub("%-", "%%-") .. ":%s+([%w%._/]+)"})
    if v then return v end
  end
  return nil
end

local function bool_flag(text, name)
  local pat = "%-%-" .. name:gsub("%-", "%%-")
  if text:find(pat .. "[%s\n]") or text:find(pat .. "$") then return true end
  local v = flag(text, {name})
  if v == nil then return nil end
  return v == "True" or v == "true" or v == "1"
end

-- Does text hold mxfp4.py's "Using Triton backend" (the MoE kernel, the
-- end of its line, or get_mxfp4_backend_with_lora's) rather than the
-- attention selector's "Using Triton backend on V1 engine."?
local function triton_moe_line(text)
  local i = 1
  while true do
    local _, e = text:find("Using Triton backend", i, true)
    if e == nil then return false end
    if text:sub(e + 1, e + 3) ~= " on" then return true end
    i = e + 1
  end
end

local parse_body

-- v, and the log line of the match it came from as f.at[key] (nil v: none)
local function at(f, key, v)
  if v ~= nil and hit and f.at then f.at[key] = line_at(hit) end
  return v
end

--- The lines that name a KV figure (anchor: a plain run every such line
--- holds, its fact in M.parse's table, its report figure, and the form the
--- engine prints): a line with the anchor whose figure is not read is said.
M.anchors = {
  {anchor = "Available KV cache memory", fact = "kv_memory", figure = "kv_memory_gib",
   expected = "Available KV cache memory: N.NN GiB"},
  {anchor = "GPU KV cache size", fact = "kv_tokens", figure = "kv_tokens",
   expected = "GPU KV cache size: N tokens"},
  {anchor = "# GPU blocks", fact = "blocks", figure = "kv_blocks_x_block", expected = "# GPU blocks: N"},
  {anchor = "KV Cache is allocated", fact = "sg_tokens", figure = "kv_tokens",
   expected = "KV Cache is allocated. #tokens: N, K size: N.NN GB, V size: N.NN GB (MLA: KV size: N.NN GB)"},
}

--- The facts of a startup log: a table of parsed fields (strings as
--- printed; see the header comment). Never raises on a partial log.
function M.parse(text, numbers, engine)
  if type(text) ~= "string" then util.raise("validate: a log must be a string, got %s", type(text)) end
  local f = {header = {}, header_line = {}, unread = {}, at = {}, garbled = {}, engine_hint = engine}
  unread = f.unread
  local lines, starts, nums, pos, i = {}, {}, {}, 1, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    i = i + 1
    local n = numbers and numbers[i] or i
    -- header keys in any case (# Engine: vLLM)
    local k, v = line:match("^#%s*([%w_]+):(.*)$")
    if k then
      k = k:lower()
      f.header[k], f.header_line[k] = util.trim(v), n
    else
      -- a log quoted in Markdown: its emphasis is not the log's
      if line:find("*", 1, true) then line = line:gsub("%*%*", "") end
      lines[#lines + 1], starts[#starts + 1], nums[#nums + 1] = line, pos, n
      pos = pos + #line + 1
    end
  end
  local body = table.concat(lines, "\n")
  line_at = function(p) -- the log's line holding body position p (nil in an empty body)
    return nums[line_index(starts, p)]
  end
  parse_body(body, f)
  return f
end

-- The log's body (header lines out, emphasis stripped) into f: every
-- question is body:find, body:match, body:gmatch (through last, flag,
-- bool_flag), so a recorder in place of the body lists them (M.reduce).
parse_body = function(body, f)
  -- engine and version
  if body:find("TensorRT%-LLM") or body:find("%[TRT%-LLM%]") or body:find("in paged kv cache")
     or body:find("in paged KV cache") or body:find("Estimated max tokens in KV cache")
     or body:find("Estimated max memory in KV cache") then
    f.engine = "trtllm"
  elseif body:find("sglang") or body:find("SGLang") or body:find("KV Cache is allocated")
         or body:find("mem_fraction_static") then
    f.engine = "sglang"
  elseif body:find("vllm") or body:find("vLLM") or body:find("VLLM") or body:find("LLM engine %(v")
         or body:find("GPU KV cache size") or body:find("GPU blocks") or body:find("CUDA blocks")
         or body:find("non%-default args: {") or body:find("Using max model len")
         or body:find("\u{2580}\u{2584}\u{2580} \u{2588}  version") then
    f.engine = "vllm"
  end
  -- the release: vLLM's banner (vllm/entrypoints/utils.py log_version_and_model
  -- at 00fc8809: "vLLM server version %s, serving model %s", or its logo with
  -- "version %s" and "model   %s"; older api_server.py: "vLLM API server
  -- version %s"), the engine's config line ("Initializing a V1 LLM engine
  -- (v%s) with config: ...", vllm/v1/engine/core.py EngineCore.__init__)
  f.version = f.version or at(f, "version", last(body, {
    "vLLM API server version v?([%d%.]+[%w%.]*)", "vLLM server version v?([%d%.]+[%w%.]*)",
    "LLM engine %(v([%d%.]+[%w%.]*)%)", "\u{2580}\u{2584}\u{2580} \u{2588}%s+version%s+v?(%d+%.[%d%.]*[%w%.]*)",
    "vLLM version:? v?([%d%.]+[%w%.]*)", "sglang==([%d%.]+)",
    "utils%.py:%d+%][^\n]-version (%d+%.%d+[%.%d]*)",
    "TensorRT%-LLM version:? v?(%d+%.%d+[%.%w]*)"}))
  f.version_source = f.version and "log"
  f.v1 = body:find("V1 LLM engine") or body:find("Available KV cache memory")
         or body:find("GPU KV cache size") or body:find("Model loading took")
  -- the oracle's fallback says so too (vllm/engine/arg_utils.py of 0.8.4,
  -- _raise_or_fallback: "... is not supported by the V1 Engine. Falling back
  -- to V0."; _warn_or_fallback: "... Falling back to V0 Engine.")
  f.v0 = body:find("V0 LLM engine") or body:find("# GPU blocks") or body:find("# CUDA blocks")
         or body:find("GPU blocks:") or body:find("Loading model weights took")
         or body:find("Falling back to V0")
  -- engine arguments (command line, config dump, non-default args); whether
  -- the log shows any: without them an engine default is an assumption
  for _, p in ipairs({"vllm serve", "%-m vllm", "model='", "non%-default args", "LLM%(model",
                      "%-%-model", "launch_server", "ServerArgs%(", "%-%-%a[%w%-]+[= ]", "tensor%-parallel%-size:"}) do
    if body:find(p) then f.args_seen = true break end
  end
  -- a KV connector (LMCache, NIXL, ...) allocates buffers of its own
  f.kv_connector = body:match("[\"']kv_connector[\"']%s*:%s*[\"']([%w_]+)")
    or body:match("KVTransferConfig%(kv_connector='([%w_]+)'")
  if f.kv_connector == nil and (body:find("%-%-kv%-transfer%-config") or body:find("kv_transfer_config=[{K]")) then
    f.kv_connector = "named in kv_transfer_config"
  end
  -- the model: the engine's config line (model='...'), SGLang's
  -- server_args=ServerArgs(model_path='...'), a command line, vLLM's
  -- non-default args ({'model': '...'}, vllm/entrypoints/utils.py
  -- log_non_default_args) or its banner
  f.model = at(f, "model", last(body, {"model='([^']+)'", "model_path='([^']+)'", "vllm serve%s+([^%s\\]+)",
                        "%-%-model%-path%s+([^%s\\]+)", "%-%-model[= ]+([^%s\\]+)",
                        "model=\"([^\"]+)\"", "LLM%(model=['\"]([^'\"]+)", "'model': '([^']+)'",
                        "serving model ([^%s,]+)", "\u{2588}  model   ([^%s]+)",
                        -- the last resort: a checkpoint's Hugging Face cache
                        -- path (TensorRT-LLM's PyTorch backend prints it),
                        -- from the start of its word alone: tried at every
                        -- byte, the leading run was quadratic in a word's
                        -- length (a 30,000-digit token count took 15 s, a
                        -- 1 MiB line would take hours)
                        "%f[^%s'\"\0]([^%s'\"]*models%-%-[^%s/]+%-%-[^%s/]+/snapshots/%x+)"}))
  f.tp = at(f, "tp", int(flag(body, {"tensor-parallel-size", "tensor_parallel_size", "tp-size", "tp_size", "tp"})
              or last(body, {"%s%-tp[= ]+(%d+)"})))
  f.pp = at(f, "pp", int(flag(body, {"pipeline-parallel-size", "pipeline_parallel_size", "pp-size", "pp_size"})))
  f.dp = at(f, "dp", int(flag(body, {"data-parallel-size", "data_parallel_size", "dp-size", "dp_size"})))
  f.dtype = at(f, "dtype", flag(body, {"dtype"}))
  f.kv_cache_dtype = at(f, "kv", flag(body, {"kv-cache-dtype", "kv_cache_dtype"}))
  f.quantization = at(f, "quantization", flag(body, {"quantization"}))
  -- speculative decoding: vLLM's non-default args ('speculative_config':
  -- {'method': 'mtp', 'num_speculative_tokens': 3}), its --speculative-config
  -- JSON or the engine config's SpeculativeConfig(method='mtp', ...,
  -- num_spec_tokens=3); the method decides whose KV layers the draft adds
  do
    local seg = last(body, {"speculative[_%-]config['\"]?[%s:=]+'?(%b{})",
                            "SpeculativeConfig(%b())"})
    if seg then
      local where = hit
      f.spec_method = seg:match("['\"]?method['\"]?%s*[:=]%s*['\"]([%w_%-]+)")
      f.spec_tokens = int(seg:match("num_speculative_tokens['\"]?%s*[:=]%s*(%d+)")
                          or seg:match("num_spec_tokens%s*=%s*(%d+)"))
      f.spec_model = seg:match("['\"]?model['\"]?%s*[:=]%s*['\"]([^'\"]+)")
      if f.spec_method and f.at then f.at.speculative = line_at(where) end
    end
  end
  -- the Mamba state cache mode: vLLM's config.py says "Mamba cache mode is
  -- set to 'align' ... by default when prefix caching is enabled" and
  -- "Prefix caching in Mamba cache 'align' mode is currently enabled"
  -- (a hybrid model with --enable-prefix-caching), or the flag itself
  f.mamba_cache_mode = at(f, "mamba_cache_mode", last(body, {"Mamba cache '(%a+)' mode is currently enabled",
                                                             "Mamba cache mode is set to '(%a+)'"})
                                                 or flag(body, {"mamba-cache-mode", "mamba_cache_mode"}))
  f.block = at(f, "block", int(flag(body, {"block-size", "block_size", "page-size", "page_size"})))
  f.max_model_len = at(f, "max_model_len", int(last(body, {"max_seq_len=(%d+)", "max seq len %((%d+)%)",
                                                           "Using max model len (%d+)"})) or
                    int(flag(body, {"max-model-len", "max_model_len", "context-length", "context_length",
                                    "max_seq_len"})))
  f.max_num_batched_tokens = at(f, "max_num_batched_tokens",
                                int(flag(body, {"max-num-batched-tokens", "max_num_batched_tokens"})))
  f.max_num_seqs = at(f, "max_num_seqs", int(flag(body, {"max-num-seqs", "max_num_seqs"})))
  f.enforce_eager = bool_flag(body, "enforce-eager") or bool_flag(body, "enforce_eager")
  f.enable_prefix_caching = at(f, "enable_prefix_caching",
                               bool_flag(body, "enable-prefix-caching") or bool_flag(body, "enable_prefix_caching"))
  -- LoRA slots (--enable-lora, vllm/engine/arg_utils.py): they load with
  -- the weights, so "Model loading took" holds them (kv.deploy's enable_lora)
  f.enable_lora = bool_flag(body, "enable-lora") or bool_flag(body, "enable_lora")
  if f.enable_lora then
    f.max_loras = int(flag(body, {"max-loras", "max_loras"}))
    f.max_lora_rank = int(flag(body, {"max-lora-rank", "max_lora_rank"}))
    f.fully_sharded_loras = bool_flag(body, "fully-sharded-loras")
                            or bool_flag(body, "fully_sharded_loras")
    f.lora_dtype = flag(body, {"lora-dtype", "lora_dtype"})
    f.lora_dtype = f.lora_dtype and f.lora_dtype:gsub("^torch%.", "")
    if f.lora_dtype == "None" then f.lora_dtype = nil end
  end
  f.max_num_batched_tokens = f.max_num_batched_tokens or
    at(f, "max_num_batched_tokens", int(last(body, {"Chunked prefill is enabled with max_num_batched_tokens=(%d+)"})))
  -- the GPU, where the log shows its name: torch's device properties
  -- (_CudaDeviceProperties(name='NVIDIA L4', ...)), collect_env.py or
  -- nvidia-smi -L ("GPU 0: NVIDIA H100 80GB HBM3"), nvidia-smi's table
  -- ("|   0  NVIDIA L4    On  |"); read as a catalog alias (M.check)
  f.gpu_name = at(f, "gpu", last(body, {"_CudaDeviceProperties%(name='([^']+)'",
                                        "GPU %d+: ((%u%u+)[^\n(]*[%w%)])", "|%s+%d+%s+(NVIDIA [^|]-)%s+O[nf]f?%s+|"}))
  -- the MXFP4 MoE kernel vLLM picked (mxfp4.py get_mxfp4_backend's log
  -- lines; Marlin also warns from marlin_utils_fp4.py). "Using Triton
  -- backend on V1 engine." is the attention backend's line (vllm/platforms/
  -- cuda.py get_attn_backend_cls, TRITON_ATTN), not the MoE kernel's
  if triton_moe_line(body) then f.mxfp4_backend = "triton"
  elseif body:find("Using Marlin backend") or body:find("leveraging the Marlin kernel") then
    f.mxfp4_backend = "marlin"
  elseif body:find("Using FlashInfer MXFP4 BF16 backend for SM90") then f.mxfp4_backend = "flashinfer_sm90"
  elseif body:find("Using FlashInfer MXFP4") then f.mxfp4_backend = "flashinfer"
  end
  -- the V1 sampler says which top-k/top-p path it takes
  if body:find("Using FlashInfer for top%-p & top%-k sampling") then f.flashinfer_sampler = true
  elseif body:find("Falling back to the PyTorch%-native implementation of top%-p & top%-k") then
    f.flashinfer_sampler = false
  end
  -- vLLM 0.21+ prints the utilization it runs with in the CUDA-graph line
  -- (gpu_worker.py: "The current --gpu-memory-utilization=U is equivalent to
  -- --gpu-memory-utilization=V without CUDA graph memory profiling. ...
  -- increase --gpu-memory-utilization to W"): U is the configured value; the
  -- generic flag pattern below would read that line's last "... to W" as "to";
  -- with the profiling disabled it says "... increasing
  -- --gpu-memory-utilization from U to W", U again the configured value
  f.utilization = at(f, "utilization", figure(last(body, {
                                     "The current %-%-gpu%-memory%-utilization=([%d.]+) is equivalent",
                                     "increasing %-%-gpu%-memory%-utilization from ([%d.]+) to",
                                     "gpu_memory_utilization%s*%(([%d.]+)%)",
                                     "gpu_memory_utilization=([%d.]+)", "gpu_memory_utilization%s+([%d.]+)"})
                         or flag(body, {"gpu-memory-utilization", "gpu_memory_utilization"})))
  f.mem_fraction_static = at(f, "utilization", figure(flag(body, {"mem-fraction-static", "mem_fraction_static"})
                                 or last(body, {"mem_fraction_static%s+([%d.]+)"})))
  -- given on SGLang's command line, or resolved by the server (its default)
  f.fraction_given = body:find("%-%-mem%-fraction%-static") ~= nil
  if body:find("LLM%(") then f.usage = "offline" elseif body:find("serve") or body:find("api_server") then
    f.usage = "server"
  end
  -- vLLM figures
  f.weights = figure(last(body, {"Loading model weights took ([%d.]+) GB", "Model loading took:? ([%d.]+) GiB",
                                 "model weights take%s*([%d.]+)%s*GiB", "weights memory: ([%d.]+) ?GiB"}))
  f.total = at(f, "total", figure(last(body, {"total_gpu_memory[%s=(]*([%d.]+)%s*GiB"})))
  f.non_torch = figure(last(body, {"non_torch_memory takes ([%d.]+)%s*GiB", "non_torch_memory[%s=]*([%d.]+)%s*GiB",
                                   "non%-torch forward increase memory: ([%d.]+) ?GiB",
                                   "Non%-torch memory: ([%d.]+) ?GiB"}))
  f.activation = figure(last(body, {"PyTorch activation peak memory takes ([%d.]+)%s*GiB",
                                    "PyTorch activation peak memory%s+([%d.]+)%s*GiB",
                                    "torch peak memory increase: ([%d.]+) ?GiB",
                                    "Peak activation memory: ([%d.]+) ?GiB"}))
  f.peak_torch = figure(last(body, {"peak_torch_memory=([%d.]+)GiB"}))
  f.kv_memory = at(f, "kv_memory", figure(last(body, {"Available KV cache memory: (%-?[%d.]+) GiB",
                                   "available_kv_cache_memory%s+(%-?[%d.]+)%s*GiB",
                                   "reserved for KV Cache is (%-?[%d.]+) ?GiB", "kv_cache_size=(%-?[%d.]+)GiB"})))
  -- the CUDA graphs' memory vLLM subtracts from the KV budget (vllm-project/
  -- vllm#30515, opt-in by VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1; on by
  -- default from #38284): gpu_model_runner.py profile_cudagraph_memory
  -- captures the first two graphs of each mode and extrapolates linearly,
  -- "Estimated CUDA graph memory: %.2f GiB total" (GiB = 2^30). A measurement,
  -- not modelled: read here, and whether gpu_worker.py determine_available_
  -- memory applied it ("CUDA graph memory profiling is enabled (default since
  -- v0.21.0). The current --gpu-memory-utilization=U is equivalent to ...
  -- without CUDA graph memory profiling", the shorter form without "is
  -- enabled" too) or not ("CUDA graph memory profiling is disabled
  -- (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0)", the estimate printed and
  -- dropped)
  f.cudagraph_estimate = at(f, "cudagraph", figure(last(body, {"Estimated CUDA graph memory: ([%d.]+) ?GiB total"})))
  if body:find("CUDA graph memory profiling is disabled") then
    f.cudagraph_applied = false
  elseif body:find("CUDA graph memory profiling is enabled")
         or body:find("is equivalent to %-%-gpu%-memory%-utilization=[%d.]+ without CUDA graph memory profiling") then
    f.cudagraph_applied = true
  end
  f.blocks = at(f, "blocks", int(last(body, {"# GPU blocks: ([%d,]+)", "# CUDA blocks: ([%d,]+)", "GPU blocks: ([%d,]+)",
                             "# cuda blocks: ([%d,]+)"})))
  f.kv_tokens = at(f, "kv_tokens", int(last(body, {"GPU KV cache size: ([%d,]+) tokens"})))
  -- a multimodal model's encoder profiling (V1 gpu_model_runner.py profile_run)
  local eb, ei = last(body, {"Encoder cache will be initialized with a budget of ([%d,]+) tokens, "
                             .. "and profiled with ([%d,]+) %a+ items"})
  if eb then f.encoder_budget, f.encoder_items = int(eb), int(ei) end
  local cl, cx = last(body, {"Maximum concurrency for ([%d,]+) tokens per request: ([%d.]+)x"})
  if cl then f.concurrency_len, f.concurrency = at(f, "max_model_len", int(cl)), figure(cx) end
  local rl, rt = last(body, {"max seq len %((%d+)%) is larger than the maximum number of tokens that can be stored in KV cache %((%d+)%)"})
  if rl then f.refused, f.refused_len, f.refused_tokens = true, at(f, "max_model_len", int(rl)), int(rt) end
  local ne, na = last(body, {"%(([%d.]+) GiB KV cache is needed, which is larger than the available KV cache memory %(([%d.]+) GiB%)"})
  if na then f.kv_memory, f.kv_needed = f.kv_memory or figure(na), figure(ne) end
  local el = last(body, {"estimated maximum model length is (%d+)"})
  if el then f.refused, f.estimated_len = true, int(el) end
  if body:find("larger than the available KV cache memory") then f.refused = true end
  -- a model with Mamba layers: max_num_seqs above the pool's blocks
  -- (vllm-project/vllm#38270; engine/core/starts.c): a refusal that names
  -- the max_num_seqs the engine ran with
  local ms = last(body, {"max_num_seqs %((%d+)%) exceeds available Mamba cache blocks %(%d+%)"})
  if ms then f.refused, f.max_num_seqs = true, at(f, "max_num_seqs", int(ms)) end
  -- SGLang figures (every question asked whatever the answers: M.reduce)
  local sw = last(body, {"Load weight end[^\n]-mem usage=([%d.]+) GB"})
  local avail = last(body, {"Load weight end[^\n]-avail mem=([%d.]+) GB"})
  if sw then
    f.weights = figure(sw)
    f.avail_after_load = figure(avail)
  end
  local st, sk, sv = last(body, {"KV Cache is allocated%.[^\n#]*#tokens: (%d+), K size: ([%d.]+) GB, V size: ([%d.]+) GB"})
  if st then f.sg_tokens, f.sg_k, f.sg_v = int(st), figure(sk), figure(sv) end
  -- an MLA model's one latent buffer a layer (python/sglang/srt/mem_cache/
  -- memory_pool.py MLATokenToKVPool: "KV Cache is allocated. #tokens:
  -- {size}, KV size: {kv_size / GB:.2f} GB", GB = 2^30)
  local mt, mk = last(body, {"KV Cache is allocated%.[^\n#]*#tokens: (%d+), KV size: ([%d.]+) GB"})
  if mt and not st then f.sg_tokens, f.sg_kv = int(mt), figure(mk) end
  f.max_total_num_tokens = int(last(body, {"max_total_num_tokens=(%d+)"}))
  local sf, ss = last(body, {"Use [Ss]liding window memory pool%. full_layer_tokens=(%d+), swa_layer_tokens=(%d+)"})
  f.sg_swa_full, f.sg_swa_tokens = int(sf), int(ss)
  -- TensorRT-LLM's lines where the log, its header or an argument says so
  local he = f.header and f.header.engine and M.engine_names[f.header.engine:lower()]
  if (f.engine_hint or he or f.engine) == "trtllm" then M.parse_trtllm(body, f) end
  -- a KV figure's line that names it but cannot be read as the engine
  -- prints it (vllm/v1/worker/gpu_worker.py "Available KV cache memory:
  -- %.2f GiB", vllm/v1/core/kv_cache_utils.py "GPU KV cache size: %s
  -- tokens"; V0 "# GPU blocks: %d"): the last such line, said in a row
  for _, a in ipairs(M.anchors) do
    local line = last(body, {"(" .. a.anchor .. "[^\n]*)"})
    if line then
      local n = hit and line_at(hit)
      if f[a.fact] == nil or (n and f.at[a.fact] and f.at[a.fact] < n) then
        f.garbled[#f.garbled + 1] = {figure = a.figure, line = n, text = line, expected = a.expected}
      end
    end
  end
end

--- TensorRT-LLM's startup lines into f (the PyTorch backend's
--- tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator.estimate_max_tokens
--- and _cal_max_tokens; the engine path's cpp/tensorrt_llm/batch_manager/
--- kvCacheManager.cpp calculateFreeMemBytes and calculateMaxNumBlocks, and
--- its "[MemUsageChange] Allocated ... for max tokens in paged KV cache").
function M.parse_trtllm(body, f)
  f.weights = nil
  f.max_num_batched_tokens = f.max_num_batched_tokens or int(flag(body, {"max_num_tokens", "max-num-tokens"}))
  f.trt_fraction = figure(flag(body, {"kv_cache_free_gpu_memory_fraction", "kv_cache_free_gpu_mem_fraction",
                                      "free_gpu_memory_fraction", "kv-cache-free-gpu-memory-fraction"}))
  local backend = flag(body, {"backend"})
  if backend == "pytorch" or backend == "tensorrt" then f.trt_backend = backend end
  -- PyTorch backend: weights (with the estimation's small KV cache), the
  -- dummy run's activation, what is outside torch, the budget and its tokens
  f.trt_weights_kv = figure(last(body, {"Memory used after loading model weights %(inside torch%) in memory "
                                        .. "usage profiling: ([%d.]+) ?GiB"}))
  f.activation = figure(last(body, {"Memory dynamically allocated during inference %(inside torch%) in "
                                    .. "memory usage profiling: ([%d.]+) ?GiB"}))
  f.non_torch = figure(last(body, {"Memory used outside torch %(e%.g%., NCCL and CUDA graphs%) in memory "
                                   .. "usage profiling: ([%d.]+) ?GiB"}))
  local peak, kvm, frac, size, total = last(body, {
    "Peak memory during memory usage profiling %(torch %+ non%-torch%): ([%d.]+) ?GiB, available KV "
    .. "cache memory when calculating max tokens: (%-?[%d.]+) ?GiB, fraction is set ([%d.]+), kv size "
    .. "is (%d+)%. device total memory ([%d.]+) ?GiB"})
  if peak then
    f.trt_peak, f.kv_memory, f.trt_kv_size, f.total = figure(peak), figure(kvm), int(size), figure(total)
    f.trt_fraction = figure(frac)
    f.trt_backend = f.trt_backend or "pytorch"
  end
  f.trt_tmp_kv = figure(last(body, {"tmp kv_mem ([%d.]+) ?GiB"}))
  if f.trt_weights_kv and f.trt_tmp_kv then
    -- "after loading model weights" counts the estimation's KV cache too
    local w = math.floor((f.trt_weights_kv.mid - f.trt_tmp_kv.mid) * 1e4 + 0.5) / 1e4
    f.weights = {mid = w, lo = f.trt_weights_kv.lo - f.trt_tmp_kv.hi, hi = f.trt_weights_kv.hi - f.trt_tmp_kv.lo}
  end
  -- the PyTorch backend's estimate; releases of 2023 printed the engine
  -- path's tokens before rounding up to blocks as "Using N tokens in paged
  -- KV cache" (NVIDIA/TensorRT-LLM#224)
  f.kv_tokens = int(last(body, {"Estimated max tokens in KV cache ?: ?(%d+)",
                                "Using (%d+) tokens in paged KV cache"}))
  -- 1.x prints the estimate as memory (_util.py: "Estimated max memory in
  -- KV cache : %.2f GiB", then kv_cache_config.max_tokens = int(that memory
  -- // kv size per token)); the KV cache manager built next prints those
  -- tokens (resource_manager.py calculate_max_num_blocks: "Both
  -- free_gpu_memory_fraction and max_tokens are set (to F and N,
  -- respectively)"), the line after it (the estimation run's own cache
  -- prints the same warning earlier, with its dummy tokens)
  local em = figure(last(body, {"Estimated max memory in KV cache ?: ?([%d.]+) ?GiB"}))
  f.kv_memory = f.kv_memory or em
  f.kv_tokens = f.kv_tokens or int(last(body, {"Estimated max memory in KV cache ?: ?[%d.]+ ?GiB\n[^\n]*"
                                               .. "Both free_gpu_memory_fraction and max_tokens are set "
                                               .. "%(to [%d.]+ and (%d+), respectively%)"}))
  if body:find("Estimated max tokens in KV cache") or f.trt_weights_kv or em then
    f.trt_backend = f.trt_backend or "pytorch"
  end
  -- engine path: the free memory it takes the fraction of, blocks, tokens
  local t, a = last(body, {"Memory usage when calculating max tokens in paged kv cache: total: ([%d.]+) ?GiB, "
                           .. "available: ([%d.]+) ?GiB"})
  if t then f.total, f.trt_free = figure(t), figure(a) end
  f.blocks = int(last(body, {"Number of blocks in KV cache primary pool: (%d+)", "%.primaryBlocks=(%d+)"}))
  f.trt_tokens_per_block = int(last(body, {"Number of tokens per block: (%d+)"}))
  local ag, at = last(body, {"%[MemUsageChange%] Allocated ([%d.]+) ?GiB for max tokens in paged KV cache %((%d+)%)"})
  if ag then f.trt_alloc, f.trt_alloc_tokens = figure(ag), int(at) end
  if f.trt_free and not f.trt_backend then f.trt_backend = "tensorrt" end
  -- refusals and the cut (resource_manager.py, trtGptModelInflightBatching.cpp)
  if body:find("Impossible to fit in any sequence in kvCache") or body:find("Impossibe to fit in any sequence")
     or body:find("Attention window too large to fit even a single sequence") then
    f.refused = true
  end
  -- the PyTorch backend's cut (resource_manager.py
  -- _validate_and_adjust_attention_windows: "Attention window size W exceeds
  -- upper bound B for available blocks"), the last: the real pool's
  local wa, wb = last(body, {"Attention window size (%d+) exceeds upper bound (%d+) for available blocks"})
  if wa then f.trt_window_asked, f.trt_window = int(wa), int(wb) end
  f.trt_reduced = int(last(body, {"They are reduced to (%d+)", "they are reduced to (%d+)",
                                  "maxSequenceLen is reduced to maxAttentionWindow: (%d+)"}))
end

-- ---- a log file streamed ---------------------------------------------------------

-- The longest run of plain characters every match of Lua pattern p holds
-- (nil when none is 3 bytes long): a block without it holds no match, found
-- by a plain search, far cheaper than the pattern's.
local function literal(p, min)
  local best, run, i, n = "", {}, 1, #p
  local function close()
    local s = table.concat(run)
    if #s > #best then best = s end
    run = {}
  end
  while i <= n do
    local c = p:sub(i, i)
    if c == "%" then
      local d = p:sub(i + 1, i + 1)
      if d:find("%w") then -- a class, a frontier %f[set] or a balance %bxy
        close()
        if d == "f" and p:sub(i + 2, i + 2) == "[" then -- past the frontier's set
          i = (p:find("]", i + (p:sub(i + 3, i + 3) == "]" and 4 or 3), true) or n) + 1
        else
          i = i + (d == "b" and 4 or 2)
        end
      else
        run[#run + 1], i = d, i + 2
      end
    elseif c == "[" then
      close()
      local j = i + 1
      if p:sub(j, j) == "^" then j = j + 1 end
      if p:sub(j, j) == "]" then j = j + 1 end
      while j <= n and p:sub(j, j) ~= "]" do j = j + (p:sub(j, j) == "%" and 2 or 1) end
      i = j + 1
    elseif c:find("[%*%+%-%?]") then -- the char before it repeats or may be absent
      run[#run] = nil
      close()
      i = i + 1
    elseif c:find("[%^%$%(%)%.]") then
      close()
      i = i + 1
    else
      run[#run + 1], i = c, i + 1
    end
  end
  close()
  return #best >= (min or 3) and best or nil
end
M.literal = literal

-- The plain characters a match of p starts with ("()" and the escapes of
-- punctuation read; a character a quantifier follows left out): every match
-- of p begins with them, so a search may jump from one to the next and try
-- p anchored there. nil when p starts with no plain character.
local function lead(p)
  local i, n, run = 1, #p, {}
  if p:sub(1, 2) == "()" then i = 3 end
  if p:sub(i, i) == "^" then return nil end
  while i <= n do
    local c = p:sub(i, i)
    local width, ch = 1, c
    if c == "%" then
      local d = p:sub(i + 1, i + 1)
      if d == "" or d:find("%w") then break end
      width, ch = 2, d
    elseif c:find("[%^%$%*%+%-%?%.%(%)%[]") then
      break
    end
    local q = p:sub(i + width, i + width)
    if q ~= "" and q:find("[%*%+%-%?]") then break end
    run[#run + 1], i = ch, i + width
  end
  return #run > 0 and table.concat(run) or nil
end
M.lead = lead

-- The patterns parse_body asks of a body: parse_body run on a recorder
-- that answers nothing, so every question is asked (the SGLang and
-- TensorRT-LLM ones too), each pattern once, in the order asked; `last`
-- those read through gmatch (their last match is read), the others only
-- by where they first match.
local asked
local function questions()
  if asked then return asked end
  local seen, list = {}, {}
  local function note(p, all)
    if not seen[p] then
      local ld = lead(p)
      seen[p] = {pattern = p, literal = literal(p), literal2 = literal(p, 2), lead = ld,
                 anchored = ld and ("^" .. p)}
      list[#list + 1] = seen[p]
    end
    seen[p].last = seen[p].last or all
    return nil
  end
  local rec = {find = function(_, p) return note(p, false) end, match = function(_, p) return note(p, false) end,
               gmatch = function(_, p) note(p, true) return function() end end}
  local was = unread
  unread = nil
  parse_body(rec, {header = {}})
  M.parse_trtllm(rec, {})
  unread = was
  -- the distinct literals of at least 3 bytes, scanned for in one pass a block
  local lits, index = {}, {}
  for _, q in ipairs(list) do
    if q.literal then
      if not index[q.literal] then lits[#lits + 1] = q.literal index[q.literal] = #lits end
      q.lit = index[q.literal]
    end
  end
  list.literals = lits
  asked = list
  return list
end

--- The longest line of a log kvplan validate reads, in bytes (1 MiB): past
--- it a file is no startup log (/dev/zero read until memory ran out).
M.max_line = 1 << 20

--- The bytes M.reduce reads at a time (256 KiB): a block of whole lines,
--- searched at once; a match may not run from one block into the next.
M.block_bytes = 1 << 18

--- The lines of a log that answer parse_body, read from the file `path`
--- in blocks, in memory bounded whatever the log's length: for every
--- question (pattern) the lines of its first and of its last match, and the
--- last header line of each key, in the log's order. M.parse of the text
--- this returns gives the facts M.parse of the whole log gives (the first
--- and last matches are all parse_body reads), for a log whose matches do
--- not run from one block of lines into the next (a match spans at most
--- the lines of one block of about 64 KiB). path "-" reads standard input
--- (a pipe: the same blocks, the same bounded memory).
function M.reduce(path)
  local fh <close>, err = util.open_input(path)
  if fh == nil then util.raise(path == "-" and "validate: %s" or "validate: cannot open %s", err) end
  local shown = util.input_name(path)
  local core = require "kvplan.core"
  local qs = questions()
  local lits = qs.literals
  local first, final, header = {}, {}, {} -- per question {line, texts}; per key {line, text}
  local lineno = 0 -- lines of the blocks done
  -- the first match of question qq in text from init: a jump from one
  -- occurrence of its leading characters to the next, the pattern anchored
  -- there (the same match as text:find(pattern, init), far cheaper)
  local function search(text, qq, init)
    if qq.lead == nil then return text:find(qq.pattern, init) end
    local from = init
    while true do
      local at = text:find(qq.lead, from, true)
      if at == nil then return nil end
      local s, e = text:find(qq.anchored, at)
      if s then return s, e end
      from = at + 1
    end
  end
  -- the questions asked of one block: text is "\n" and the block's body
  -- lines; at[i], raw[i] the log's line number and text of body line i;
  -- line_of(p) the body line holding text position p
  local function ask(text, at, raw, line_of)
    local present = core.scan_literals(text, lits)
    local function span(s, e)
      local a, b = line_of(math.max(s, 2)), line_of(math.max(e, 2))
      local t = {}
      for i = a, b do t[#t + 1] = {at(i), raw(i)} end
      return t
    end
    for _, qq in ipairs(qs) do
      local q = qq.pattern
      local s, e
      if (first[q] == nil or qq.last)
         and (qq.lit and present[qq.lit] or (qq.literal == nil
              and (qq.literal2 == nil or text:find(qq.literal2, 1, true)))) then
        s, e = search(text, qq, 1)
      end
      if s then
        if first[q] == nil then first[q] = span(s, e) end
        if qq.last then
          local ls, le = s, e
          while true do -- the last match, as gmatch goes: each after the one before
            s, e = search(text, qq, (e >= s and e or s) + 1)
            if s == nil then break end
            ls, le = s, e
          end
          final[q] = span(ls, le)
        end
      end
    end
  end
  -- a block of lines that needs them one by one: header lines out, a log
  -- quoted in Markdown without its emphasis
  local function block(lines)
    local parts, at, starts, raw, pos = {}, {}, {}, {}, 1
    for i, line in ipairs(lines) do
      local k = line:match("^#%s*([%w_]+):")
      if k then
        header[k] = {lineno + i, line}
      else
        local s = line:find("*", 1, true) and line:gsub("%*%*", "") or line
        parts[#parts + 1], at[#at + 1], raw[#raw + 1] = s, lineno + i, line
        starts[#starts + 1], pos = pos + 1, pos + 1 + #s
      end
    end
    if #parts == 0 then return end
    local function line_of(p) return line_index(starts, p) end
    ask("\n" .. table.concat(parts, "\n"), function(i) return at[i] end, function(i) return raw[i] end, line_of)
  end
  -- a block of whole lines as read (body: its text): searched
  -- as it is, its lines found only where a question matched
  local function chunk(body)
    if body:find("*", 1, true) or body:sub(1, 1) == "#" or body:find("\n#", 1, true) then
      local lines = {}
      for line in (body .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
      block(lines)
      return
    end
    local text = "\n" .. body
    local starts -- where each line starts in text, found at the first match
    local function index()
      if starts then return end
      starts = {}
      for p in text:gmatch("\n()") do starts[#starts + 1] = p end
    end
    local function line_of(p)
      index()
      return line_index(starts, p)
    end
    local function raw(i)
      index()
      local e = (starts[i + 1] or #text + 2) - 2
      return text:sub(starts[i], e)
    end
    ask(text, function(i) return lineno + i end, raw, line_of)
  end
  local carry = ""
  while true do
    local data, rerr = fh:read(M.block_bytes)
    if data == nil and rerr then util.raise("validate: cannot read '%s': %s", shown, rerr) end
    if data == nil then
      if #carry > 0 then chunk(carry) lineno = lineno + 1 end
      break
    end
    data = carry .. data
    local nl, last = core.scan_lines(data)
    if last == 0 then
      carry = data
    else
      -- every line but the last unfinished one; each at most max_line bytes
      local body = data:sub(1, last - 1)
      if #body > M.max_line then
        local from, i = 1, 0
        for line_end in (body .. "\n"):gmatch("()\n") do
          i = i + 1
          if line_end - from > M.max_line then
            util.raise("%s:%d: a line longer than %d bytes (a startup log's lines are short)", shown,
                       lineno + i, M.max_line)
          end
          from = line_end + 1
        end
      end
      chunk(body)
      lineno = lineno + nl
      carry = data:sub(last + 1)
    end
    if #carry > M.max_line then
      util.raise("%s:%d: a line longer than %d bytes (a startup log's lines are short)", shown,
                 lineno + 1, M.max_line)
    end
  end
  -- the lines kept, in the log's order, each once
  local keep = {}
  for _, t in pairs(first) do for _, l in ipairs(t) do keep[l[1]] = l[2] end end
  for _, t in pairs(final) do for _, l in ipairs(t) do keep[l[1]] = l[2] end end
  for _, h in pairs(header) do keep[h[1]] = h[2] end
  local order = util.sorted_keys(keep)
  table.sort(order)
  local out = {}
  for i, n in ipairs(order) do out[i] = keep[n] end
  return table.concat(out, "\n"), order
end

-- ---- the deployment a log describes ----------------------------------------------

-- The layers of each kind of a model description (its layer_kinds, a
-- cyclic pattern of runs, repeated over its layers), when every run has the
-- model's KV heads and head size (so a layer's KV bytes are the same in
-- every kind); nil otherwise
local function layer_kind_counts(m)
  local runs, n = type(m) == "table" and m.layer_kinds, type(m) == "table" and m.layers
  if type(runs) ~= "table" or #runs == 0 or math.type(n) ~= "integer" then return nil end
  for _, r in ipairs(runs) do
    if type(r) ~= "table" or r.kv_heads or r.head_dim or (r.n or 1) < 1 then return nil end
  end
  local counts, i = {}, 0
  while i < n do
    for _, r in ipairs(runs) do
      for _ = 1, r.n or 1 do
        if i < n then counts[r.kind] = (counts[r.kind] or 0) + 1; i = i + 1 end
      end
    end
  end
  return counts
end

-- kv.models.get(name), or nil where it raises. A name that is neither in
-- the catalog nor a checkpoint on disk nor a repo id ORG/NAME is one get
-- refuses (models.lua M.get) without being asked: its error computes the
-- closest catalog names (catalog.suggest, an edit distance to each of the
-- catalog's some 650 names: 0.02 s), and a log's model is tried under up to
-- eleven spellings (a kv.validate took 0.66 s where none was in the catalog).
local function model_get(kv, name)
  local m = kv.models.find(name)
  if m then return m end
  local hf = require "kvplan.hf"
  if not hf.is_checkpoint(name) and hf.repo_id(name) == nil then return nil end
  local ok
  ok, m = pcall(kv.models.get, name)
  if ok then return m end
  return nil
end

local function catalog_model(kv, name)
  if name == nil then return nil end
  local m = model_get(kv, name)
  if m then return m end
  -- a Hugging Face cache directory, models--ORG--NAME/snapshots/REV
  -- (huggingface_hub's cache layout): the model is NAME, not the revision
  local base = name:match("models%-%-[^/]-%-%-([^/]+)/snapshots") or name:gsub("/+$", ""):match("([^/]+)$") or name
  local tries = {base, base:gsub("%-Instruct.*$", ""), base:gsub("%-[Cc]hat.*$", ""),
                 base:gsub("%-AWQ.*$", ""):gsub("%-GPTQ.*$", ""):gsub("%-FP8.*$", ""):gsub("%-Instruct$", ""),
                 (base:gsub("^Meta%-", ""))}
  for _, t in ipairs(tries) do
    m = model_get(kv, t) or model_get(kv, t:lower())
    if m then return m end
  end
  return nil
end

-- The checkpoint's weight classes from the log's quantization flag (or its
-- name): GPTQ/AWQ int4 (group 128) and FP8 quantize the linear layers;
-- bitsandbytes (vLLM's quantization=bitsandbytes, the loader's in-flight
-- quantization or a bnb checkpoint) its linear layers and experts: 8-bit
-- when the name says so, else 4-bit with double-quantized absmax, the
-- in-flight loader's (quantize_4bit(compress_statistics=True), engines.lua)
-- and assumed for a 4-bit checkpoint (its config is not in the log); the
-- release then decides what vLLM holds (deploy.lua bnb_rule). The name is
-- the checkpoint the header or an argument states (its Hugging Face name,
-- which the log may not print), else the log's model. An unsloth dynamic 4-bit checkpoint
-- (named "...-unsloth-bnb-4bit") keeps the modules its config's
-- llm_int8_skip_modules lists in the model dtype ("Unsloth's Dynamic 4-bit
-- Quants selectively avoids quantizing certain parameters", the model cards of
-- unsloth's collection "Unsloth 4-bit Dynamic Quants"; unsloth/QwQ-32B-
-- unsloth-bnb-4bit at b5d53e9f38a1 lists layer 0's attention and some forty
-- MLPs), and vLLM keeps each one so (is_layer_skipped_bnb's prefix check,
-- bitsandbytes.py at 01f5395fdf04): which, the log does not say, so every
-- linear layer quantized is an assumption the third result says
-- (M.check: weights=assumed; --config DIR reads the skip list, hf.lua).
local function quantized_model(kv, m, f)
  local q = (f.quantization or ""):lower()
  local name = (f.checkpoint or f.model or ""):lower()
  if q == "none" or q == "" then
    if name:find("awq") then q = "awq" elseif name:find("gptq") then q = "gptq"
    elseif name:find("autoround") or name:find("auto%-round") then q = "auto_round"
    elseif name:find("fp8") then q = "fp8" elseif name:find("bnb") then q = "bitsandbytes" end
  end
  local wf
  if q:find("awq") then wf = "int4-g128"
  elseif q:find("gptq") then wf = name:find("int8") and "int8-g128" or "int4-g128-sym"
  -- AutoRound (quantization auto_round): vLLM's AutoRoundConfig packs
  -- auto_round:auto_gptq by default and quantizes each linear layer through
  -- GPTQ(-Marlin) with the checkpoint's bits, group and sym (vllm/
  -- model_executor/layers/quantization/auto_round.py at 04aa528e4876);
  -- those are in its quantization_config, not the log: 4-bit, group 128,
  -- symmetric (AutoRound's defaults) unless the name says int8, as for GPTQ
  elseif q:find("auto_round") or q:find("auto%-round") then
    wf = name:find("int8") and "int8-g128" or "int4-g128-sym"
  elseif q:find("fp8") then wf = "fp8"
  elseif q:find("bitsandbytes") then
    wf = (name:find("8bit") or name:find("int8")) and ("bnb-int8-g" .. m.hidden) or "bnb-4bit-dq"
  end
  if wf == nil or rawget(m, "weight_formats") then return m, nil end
  if rawget(m, "classes_unweighable") then
    util.raise("model '%s': %s", m.id, m.classes_unweighable)
  end
  local t = {}
  for k, v in pairs(m) do if k ~= "core" and k ~= "weight_bytes" then t[k] = v end end
  t.weight_formats = {attention = wf, mlp = wf, experts = wf, shared_experts = wf}
  t.weight_format = nil
  local dynamic = wf == "bnb-4bit-dq" and name:find("unsloth%-bnb%-4bit") ~= nil
  return kv.model(t), q, dynamic
end

local function version_row(engines, f)
  local v = f.version
  if f.engine ~= "vllm" then return nil end
  if v == nil then return nil end
  local minor = v:match("^(%d+%.%d+)")
  if minor == "0.7" and f.v1 and not f.v0 then v = "0.7-v1" end
  local ok, row, name = pcall(engines.vllm_version, v)
  if not ok then return nil end
  -- a V0 engine's lines on a release that ran V1 by default (VLLM_USE_V1=0)
  if f.v0 and not f.v1 and row.v1 then
    local okv, r0 = pcall(engines.vllm_engine, row, name, false)
    if okv then return r0, name, false end
  end
  -- a V1 engine's lines on a release whose oracle would fall back to V0
  -- (engines.vllm_v0_fallback): VLLM_USE_V1=1 was set, V1 it is
  if f.v1 and not f.v0 and row.v1 then return row, name, true end
  return row, name
end

-- The engine a log ran on: VLLM_USE_V1 as the header or the command line
-- states it (vllm_use_v1; kvplan startup writes it for a V0 engine on a V1
-- release) over what the log's lines say (version_row's).
local function stated_use_v1(st, use_v1)
  local g = st.vllm_use_v1
  if g == nil then return use_v1 end
  local v = g.value
  if type(v) == "string" then
    local l = v:lower()
    if l == "true" or l == "1" then return true end
    if l == "false" or l == "0" then return false end
    return use_v1
  end
  if type(v) == "boolean" then return v end
  return use_v1
end

-- ---- the checks ---------------------------------------------------------------------

local function relerr(k, l)
  if l == nil or k == nil then return nil end
  if l == 0 then return k == 0 and 0 or nil end
  return (k - l) / math.abs(l)
end

-- ---- what is stated beside the log: the command line and the header ----------------

--- Header keys read as their argument names (the field registry's, the
--- engines' spellings through fields.aliases, and these).
M.header_names = {version = "engine_version", quantization = "quantization", rank = "rank",
                  source = "source", note = "note", gpu_name = "gpu"}

--- The engine's names as users write them (any case): kvplan's own.
M.engine_names = {vllm = "vllm", sglang = "sglang", trtllm = "trtllm", ["tensorrt-llm"] = "trtllm",
                  tensorrt_llm = "trtllm", ["trt-llm"] = "trtllm", tensorrt = "trtllm"}

-- Counts a header states (tp, pp, ...) checked where they are read (M.check)
local header_counts = {tp = true, pp = true, max_model_len = true, data_parallel_size = true,
                       block = true, max_num_seqs = true, max_num_batched_tokens = true}

--- What the header and the arguments state: key -> {value, source}, the
--- arguments ("argument", converted by kv.options) over the header
--- ("header", strings as written). Keys are argument names.
function M.stated(f, args)
  local fields = require "kvplan.fields"
  local out = {}
  -- in the log's line order: of two spellings of one key (tp: and
  -- tensor_parallel_size:) the later line wins, as a key's later line does,
  -- not the one pairs() visited last
  local keys = util.sorted_keys(f.header)
  local at = f.header_line or {}
  table.sort(keys, function(a, b)
    local x, y = at[a] or 0, at[b] or 0
    if x ~= y then return x < y end
    return a < b
  end)
  for _, k in ipairs(keys) do
    local v = f.header[k]
    local key = M.header_names[k] or fields.aliases[(k:gsub("%-", "_"))] or (k:gsub("%-", "_"))
    if key ~= "source" and key ~= "note" then out[key] = {value = v, source = "header"} end
  end
  for k, v in pairs(args or {}) do out[k] = {value = v, source = "argument"} end
  return out
end

--- Rows for one log: see the header comment. opts: name (the file), config
--- (a Hugging Face directory for a model not in the catalog), lines (the log's
--- line number of each line of text, from M.reduce), args (key=value
--- arguments, converted: they override the header, which overrides the log).
function M.check(text, opts)
  opts = opts or {}
  local kv = require "kvplan"
  local engines = require "kvplan.engines"
  local given = opts.args and opts.args.engine
  local f = M.parse(text, opts.lines, given and M.engine_names[tostring(given):lower()])
  local rows = {}
  local name = opts.name or "log"
  -- "system_memory=assumed" on the figures memory others hold changes (the
  -- KV pool and whether it starts), set below for a unified-memory GPU
  local system_tag
  local by_system = {kv_memory_gib = true, kv_tokens = true, kv_blocks_x_block = true,
                     kv_blocks = true, starts = true, non_torch_gib = true}
  local function row(r)
    if system_tag and r.mode == "predict" and by_system[r.figure] then
      r.inputs = (r.inputs and r.inputs ~= "" and (r.inputs .. " ") or "") .. system_tag
    end
    r.log = name
    r.engine = f.engine or "unknown"
    r.version = f.version or ""
    for _, c in ipairs(M.columns) do
      local k = type(c) == "table" and c[1] or c
      if r[k] == nil then r[k] = "" end
    end
    rows[#rows + 1] = r
  end
  unread = nil -- the header's numbers below are checked where they are read
  local st = M.stated(f, opts.args)
  -- where an input came from: the argument, the header, the log's line
  local function logline(key) return f.at[key] and ("log:" .. f.at[key]) or "log" end
  local function pick(key, from_log, log_key)
    local g = st[key]
    if g then return g.value, g.source end
    if from_log ~= nil then return from_log, logline(log_key or key) end
    return nil
  end
  -- a KV connector the header states ('# kv_connector: NAME') where the
  -- log's excerpt shows no kv_transfer_config: its KV rows are missing, as
  -- for one the log names (parse_body)
  if f.kv_connector == nil and st.kv_connector ~= nil then
    f.kv_connector = util.escape(util.shown(st.kv_connector.value), 64)
  end
  for _, u in ipairs(f.unread) do
    row{figure = "log", mode = "parse", status = string.format(
      "missing: %sthe figure '%s' is no number kvplan reads (past 64 bits or not finite); "
      .. "what it states is not checked", u.line and ("line " .. u.line .. ": ") or "", util.escape(u.text, 64))}
  end
  for _, g in ipairs(f.garbled) do
    row{figure = g.figure, mode = "parse", status = string.format(
      "missing: line %s cannot be read (expected '%s'): '%s'; this figure is not checked",
      tostring(g.line), g.expected, util.escape(util.trim(g.text), 96))}
  end
  -- the engine: stated (any case), else the log's
  local eng, esrc = pick("engine", f.engine)
  if eng ~= nil then
    local e = M.engine_names[tostring(eng):lower()]
    if e == nil then
      row{figure = "engine", mode = "parse", status = string.format(
        "missing: %s engine '%s' is not one kvplan reads (expected vllm, sglang or trtllm)",
        esrc, util.escape(util.shown(eng), 64))}
      return rows, f
    end
    f.engine = e
  end
  if f.engine == nil then
    row{figure = "log", mode = "parse", status = "missing: no engine (no vLLM, SGLang or TensorRT-LLM line; "
        .. "give engine=vllm|sglang|trtllm)"}
    return rows, f
  end
  local ver, vsrc = pick("engine_version", f.version, "version")
  if ver ~= nil then f.version, f.version_source = tostring(ver), vsrc end
  -- a release given on the command line must be one the engine's release
  -- table knows, as kv.deploy's engine_version (12abc or nan was printed as
  -- given and the log's figures checked against the defaults of none)
  if ver ~= nil and vsrc == "argument" then
    local check = ({vllm = engines.vllm_version, sglang = engines.sglang_version,
                    trtllm = engines.trtllm_version})[f.engine]
    local ok, err = pcall(check, f.version)
    if not ok then
      require("kvplan.options").bad("validate: argument 'version' (engine_version) of %s: %s", name,
                                    util.escape((util.shown(err):gsub("^[^:]*:%d+: ", ""))))
    end
  end
  -- inputs and where they came from
  local src = {}
  local m
  local mname, msrc = pick("model", f.model)
  -- a model name that is a Hugging Face directory; under --sandbox io.open
  -- raises for a path outside the readable roots, and a name such as
  -- 'qwen3-1.7b' that is no readable path is the catalog's, silently
  local function hf_dir(d)
    if type(d) ~= "string" then return false end
    local ok, fh = pcall(io.open, d .. "/config.json", "rb")
    if ok and fh then fh:close() return true end
    return false
  end
  if opts.config then
    m = kv.models.from_hf(opts.config)
    src.model = "config"
  elseif hf_dir(mname) and msrc ~= "log" then
    m = kv.models.from_hf(mname)
    src.model = msrc == "argument" and "config" or msrc
  else
    m = catalog_model(kv, mname)
    src.model = msrc
    if m == nil and msrc ~= "log" then -- a stated id the catalog lacks: the log's own name
      m = catalog_model(kv, f.model)
      if m then src.model = logline("model") end
    end
  end
  if m == nil then
    row{figure = "model", mode = "parse", status = mname and string.format(
      "missing: model '%s' (%s) is not in the catalog (give model=ID or model=DIR, a Hugging Face "
      .. "directory)", mname, msrc)
      or "missing: the log names no model (no --model, 'vllm serve MODEL' or model='...' line; "
         .. "give model=ID or model=DIR, or a '# model: ID' header)"}
    return rows, f
  end
  local qfmt, qassumed
  -- the checkpoint's Hugging Face name where the log prints none ('# checkpoint:
  -- NAME'): read for what the name says of its quantization (quantized_model)
  local ck = pick("checkpoint", nil)
  if ck ~= nil then f.checkpoint = tostring(ck) end
  local q = pick("quantization", f.quantization)
  f.quantization = q
  local wfmt, wsrc = pick("weights", nil)
  local unweighed -- the checkpoint cannot be weighed: only the exact rows are checked
  if wfmt == nil then
    -- a catalog entry whose weight classes do not add up cannot be weighed
    -- by class: a row that says so; the figures that need no weights (the
    -- tokens and concurrency of the log's own KV memory) are still checked
    local ok, qm, qf, qdyn = pcall(quantized_model, kv, m, f)
    if not ok then
      -- (a prediction kvplan cannot make, not a line it cannot read: the log
      -- is read whole)
      row{figure = "weights_gib", mode = "predict", logged = f.weights and f.weights.mid,
          status = string.format(
        "missing: the %s checkpoint of '%s' cannot be weighed by class (%s); its weights and the "
        .. "figures that follow from them are not predicted", util.escape(util.shown(q), 64), m.id,
        tostring(qm):gsub("^.-: (model ')", "%1"))}
      unweighed = true
    else
      m, qfmt, qassumed = qm, qf, qdyn
    end
  end
  -- a header count that is no whole number >= 1 is said, not read as the
  -- default ('# tp: 9999999999999999999' was tp 1, said to be the header's)
  for _, k in ipairs(util.sorted_keys(header_counts)) do
    local g = st[k]
    if g and g.source == "header" then
      local n = int(g.value)
      if n == nil or n < 1 then
        row{figure = k, mode = "parse", status = string.format("missing: header '%s: %s' is not a %s "
            .. "(expected a whole number >= 1 below 2^63); the log is not checked", k, util.escape(g.value, 64), k)}
        return rows, f
      end
      g.value = n
    end
  end
  local tp, tsrc = pick("tp", f.tp)
  tp = tp or 1
  src.tp = tsrc or (f.args_seen and "default" or "assumed")
  local pp = pick("pp", f.pp) or 1
  local dp = pick("data_parallel_size", f.dp, "dp")
  local kvname, ksrc = pick("kv", f.kv_cache_dtype)
  if ksrc and ksrc ~= logline("kv") then src.kv = ksrc end
  local kvfmt = (kvname == nil or kvname == "auto") and "auto" or tostring(kvname)
  if kvfmt:find("fp8") then kvfmt = "fp8" end
  local bk, bsrc = pick("block", f.block)
  if bsrc == "argument" or bsrc == "header" then src.block = bsrc end
  local block = bk or (f.engine == "sglang" and 1 or 16)
  f.max_num_batched_tokens = pick("max_num_batched_tokens", f.max_num_batched_tokens)
  f.max_num_seqs = pick("max_num_seqs", f.max_num_seqs)
  local ee = pick("enforce_eager", f.enforce_eager)
  if type(ee) == "string" then ee = ee:lower() == "true" or ee == "1" or ee:lower() == "yes" end
  f.enforce_eager = ee
  local max_len, lsrc
  if st.max_model_len then
    max_len, lsrc = st.max_model_len.value, st.max_model_len.source
  elseif f.concurrency_len or f.refused_len or f.max_model_len then
    max_len = f.concurrency_len or f.refused_len or f.max_model_len
    lsrc = logline("max_model_len")
  end
  src.max_model_len = lsrc or "model"
  -- the GPU: stated, else the name the log prints (a catalog alias)
  local gpu_id, gsrc = nil, nil
  if st.gpu then
    gpu_id, gsrc = st.gpu.value, st.gpu.source
  elseif f.gpu_name then
    if pcall(kv.gpu, f.gpu_name) then
      gpu_id, gsrc = f.gpu_name, logline("gpu")
    else
      row{figure = "gpu", mode = "parse", status = string.format(
        "missing: the GPU '%s' (%s) is not in the catalog (give gpu=ID)", util.escape(f.gpu_name, 64),
        logline("gpu"))}
    end
  end
  -- the other deployment fields stated: kv.deploy's, for the prediction
  local extra = {}
  local taken = {engine = true, engine_version = true, model = true, quantization = true, tp = true,
                 pp = true, data_parallel_size = true, kv = true, block = true, max_num_batched_tokens = true,
                 max_num_seqs = true, enforce_eager = true, max_model_len = true, gpu = true,
                 utilization = true, rank = true, weights = true, system_memory = true,
                 mamba_cache_mode = true, speculative = true}
  local fields = require "kvplan.fields"
  for k, g in pairs(st) do
    if not taken[k] and fields.by_name[k] and g.source == "argument" then extra[k] = g.value end
  end
  if wfmt then extra.weights, src.weights = wfmt, wsrc end
  if dp and dp ~= 1 then extra.data_parallel_size = dp end
  -- memory others hold on the GPU (system_memory): stated by a header or an
  -- argument, else none; on a unified-memory GPU (the catalog's
  -- unified_memory, or unified_memory stated) that none is an assumption,
  -- so the "_stated" figures leave the log out. A figure the log prints
  -- (TensorRT-LLM's memory outside torch) is never fed back as an input.
  local sysv, syssrc = pick("system_memory", nil)
  if sysv ~= nil then
    extra.system_memory, src.system_memory = units.bytes(sysv, "system_memory"), syssrc
  else
    local uv = st.unified_memory and st.unified_memory.value
    local unified = uv == true or (type(uv) == "string" and (uv:lower() == "true" or uv:lower() == "yes"))
    if not unified and gpu_id then
      local okg, g = pcall(kv.gpu, gpu_id)
      unified = okg and g.unified_memory == true
    end
    if unified then system_tag = "system_memory=assumed" end
  end
  local util_v, usrc = pick("utilization", nil)
  if util_v ~= nil then
    local x = tonumber(util_v)
    util_v = x and figure(string.format("%.17g", x)) or nil
    if util_v == nil then
      row{figure = "utilization", mode = "parse", status = string.format(
        "missing: %s utilization '%s' is not a fraction; the log is not checked", usrc, util.shown(st.utilization.value))}
      return rows, f
    end
    if f.engine == "sglang" then f.mem_fraction_static, f.fraction_given = util_v, true
    elseif f.engine == "trtllm" then f.trt_fraction = util_v
    else f.utilization = util_v end
    f.at.utilization = nil
  end
  local function usource(read)
    if usrc then return usrc end
    return read and logline("utilization") or nil
  end
  local function inputs(extra)
    local t = {}
    for _, k in ipairs(util.sorted_keys(src)) do t[#t + 1] = k .. "=" .. src[k] end
    if extra then t[#t + 1] = extra end
    return table.concat(t, " ")
  end
  -- max_num_batched_tokens bounds what a sliding-window layer holds
  -- (SlidingWindowSpec); the log's value, else the version's default below
  local base = {model = m, tp = tp, pp = pp, kv = kvfmt, block = block, max_model_len = max_len,
                max_num_batched_tokens = f.max_num_batched_tokens}
  -- vLLM's Mamba state cache mode as the log states it ("align" with prefix
  -- caching on a hybrid model): the blocks a state group holds a request
  local mmode, mmsrc = pick("mamba_cache_mode", f.mamba_cache_mode)
  if mmode ~= nil and f.engine == "vllm" then
    base.mamba_cache_mode, src.mamba_cache_mode = tostring(mmode):lower(), mmsrc
  end
  -- speculative decoding as the log states it: the model's own MTP layers
  -- (vLLM's method "mtp" and the model-named "*_mtp": the draft's one
  -- decoder layer, reused for every speculative token, whose attention
  -- layer joins the KV cache), n-gram lookup (no KV layers), else a draft
  -- model kvplan does not know, whose KV layers no row can account for
  if f.spec_method and f.engine == "vllm" then
    local meth, n = f.spec_method:lower(), f.spec_tokens or 1
    if meth:find("mtp$") then
      base.speculative = {tokens = n, heads = "mtp"}
    elseif meth == "ngram" or meth == "suffix" then
      base.speculative = {tokens = n}
    else
      row{figure = "speculative", mode = "parse", status = string.format(
        "missing: the speculative draft (method '%s'%s) holds KV layers and weights kvplan does not "
        .. "know; the log is not checked", util.escape(meth, 32),
        f.spec_model and (", " .. util.escape(f.spec_model, 64)) or "")}
      return rows, f
    end
    src.speculative = logline("speculative")
  end
  -- the mode vLLM picks when the log states none: MambaModelConfig.
  -- verify_and_update_config (vllm/model_executor/models/config.py, the
  -- copy whose MODELS_CONFIG_MAP has Qwen3_5ForConditionalGenerationConfig)
  -- sets 'align' with prefix caching and speculative decoding on whether or
  -- not the model supports Mamba prefix caching ('all' without speculation
  -- for one that does, which kvplan does not know: left as given)
  if mmode == nil and f.engine == "vllm" and f.enable_prefix_caching == true and base.speculative
     and (m:kinds().state or 0) > 0 then
    base.mamba_cache_mode, src.mamba_cache_mode = "align", "default"
  end
  if unweighed and f.engine == "trtllm" then return rows, f end

  if f.engine == "trtllm" then
    M.check_trtllm(f, m, {tp = tp, pp = pp, kv = kvfmt, max_model_len = max_len, src = src,
                          row = row, inputs = inputs, relerr = relerr, gpu = gpu_id, gpu_src = gsrc,
                          extra = extra, fraction_src = usrc})
    return rows, f
  end

  -- exact: the engine's own KV memory in, tokens, blocks, concurrency out
  if f.engine == "vllm" and f.kv_memory then
    -- the log's release, whose "GPU KV cache size" the ledger prints
    local _, vname, use_v1 = version_row(engines, f)
    use_v1 = stated_use_v1(st, use_v1)
    -- the release as the log prints it, as the predictions take it (a
    -- release between rows can matter: V0's MLA entries padded from 0.7.2)
    local given = f.version and f.version:match("^v?(%d+%.%d+%.?%d*)")
    local ename = (given and vname and not vname:find("v1")) and given or vname
    local function at(e)
      local o = util.copy(base)
      o.engine_version, o.vllm_use_v1 = ename, use_v1
      -- the logged KV memory is the whole budget: no weights, nothing reserved
      local b = math.floor(f.kv_memory[e] * GiB)
      if b < 1 then b = 1 end
      -- (one byte of weights: weight_bytes 0 would mean "from the model")
      o.gpu_memory, o.utilization, o.activation, o.overhead, o.weight_bytes = b + 1, 1, 0, 0, 1
      if o.speculative then -- nor the draft's weights
        local sp = util.copy(o.speculative)
        if sp.heads or sp.draft then sp.weight_bytes = 0 end
        o.speculative = sp
      end
      local ok, d = pcall(kv.deploy, o)
      if not ok then return nil, d end
      return d:ledger()
    end
    local lo, elo = at("lo")
    local mid = at("mid")
    local hi = at("hi")
    if lo == nil or mid == nil or hi == nil then
      row{figure = "kv_tokens", mode = "exact", status = "error: " .. tostring(elo)}
    else
      local v0 = f.v0 and not f.v1
      local function tokens(l)
        if v0 then return l.kv_blocks * block end
        return l.vllm_kv_cache_tokens
      end
      local logged = f.kv_tokens or (f.blocks and f.blocks * block)
      if logged then
        local ok = logged >= tokens(lo) and logged <= tokens(hi)
        row{figure = f.kv_tokens and "kv_tokens" or "kv_blocks_x_block", mode = "exact",
            logged = logged, kvplan = tokens(mid), range = tokens(lo) .. "-" .. tokens(hi),
            rel_error = relerr(tokens(mid), logged), status = ok and "exact" or "differs",
            inputs = inputs("kv_memory=" .. logline("kv_memory"))}
      end
      if f.kv_needed and max_len then
        -- the KV memory one request of max_model_len needs (vLLM's startup
        -- check, the ledger's vllm_kv_needed)
        local need = mid.vllm_kv_needed / GiB
        local ok = need >= f.kv_needed.lo and need <= f.kv_needed.hi
        row{figure = "kv_needed_gib", mode = "exact", logged = f.kv_needed.mid, kvplan = need,
            rel_error = relerr(need, f.kv_needed.mid), status = ok and "exact" or "differs",
            inputs = inputs("max_model_len=log")}
      end
      if f.estimated_len then
        -- vLLM's estimate: the longest request whose blocks fit the KV memory
        -- (kv_cache_utils.py estimate_max_model_len: a binary search over
        -- max_memory_usage_bytes), for layers of one kind whole blocks
        local function est(l) return l.kv_blocks * block end
        local ok = f.estimated_len >= est(lo) and f.estimated_len <= est(hi)
        row{figure = "estimated_max_model_len", mode = "exact", logged = f.estimated_len,
            kvplan = est(mid), range = est(lo) .. "-" .. est(hi),
            rel_error = relerr(est(mid), f.estimated_len), status = ok and "exact" or "differs",
            inputs = inputs("kv_memory=" .. logline("kv_memory"))}
      end
      if f.concurrency and max_len then
        local function conc(l)
          if v0 then return l.kv_blocks * block / max_len end
          return l.vllm_max_concurrency
        end
        local lo_c = math.floor(conc(lo) * 100 + 0.5) / 100
        local hi_c = math.floor(conc(hi) * 100 + 0.5) / 100
        local ok = f.concurrency.mid >= lo_c - 1e-9 and f.concurrency.mid <= hi_c + 1e-9
        row{figure = "max_concurrency", mode = "exact", logged = f.concurrency.mid,
            kvplan = math.floor(conc(mid) * 100 + 0.5) / 100,
            range = string.format("%.2f-%.2f", lo_c, hi_c),
            rel_error = relerr(conc(mid), f.concurrency.mid), status = ok and "exact" or "differs",
            inputs = inputs("kv_memory=" .. logline("kv_memory"))}
      end
    end
  elseif f.engine == "sglang" and f.sg_tokens and f.sg_kv then
    -- MLA: (#tokens + page) x (kv_lora_rank + qk_rope_head_dim) a layer, the
    -- page's padded slot within the logged rounding for any real pool
    local d = kv.deploy{model = m, tp = tp, pp = pp, kv = kvfmt, gpu_memory = GiB, activation = 0,
                        overhead = 0, budget = "sglang", utilization = 1}
    local per = d.model:kv_bytes_per_token(d.kv, tp)
    local k = f.sg_tokens * per / GiB
    local ok = k >= f.sg_kv.lo and k <= f.sg_kv.hi
    row{figure = "kv_size_gib", mode = "exact", logged = f.sg_kv.mid, kvplan = k,
        rel_error = relerr(k, f.sg_kv.mid), status = ok and "exact" or "differs",
        inputs = inputs("tokens=log")}
  elseif f.engine == "sglang" and f.sg_tokens and f.sg_k then
    local d = kv.deploy{model = m, tp = tp, pp = pp, kv = kvfmt, gpu_memory = GiB, activation = 0,
                        overhead = 0, budget = "sglang", utilization = 1}
    local per = d.model:kv_bytes_per_token(d.kv, tp) -- K and V, all layers
    -- a hybrid sliding-window model's two pools (SGLang's hybrid SWA memory
    -- pool, model_runner's "Use sliding window memory pool. full_layer_tokens
    -- =F, swa_layer_tokens=S"): each "KV Cache is allocated" line is one
    -- pool, over the full or the sliding layers alone; the last line read
    -- is the pool whose tokens it names
    local src_pool = "tokens=log"
    if f.sg_swa_full then
      local nk = layer_kind_counts(m)
      local pool = f.sg_tokens == f.sg_swa_full and "full" or (f.sg_tokens == f.sg_swa_tokens and "sliding")
      if nk and pool and nk[pool] and m.layers then
        per = per * nk[pool] // m.layers
        src_pool = "tokens=log pool=" .. pool .. "_layers"
      end
    end
    local k = f.sg_tokens * per / 2 / GiB
    local ok = k >= f.sg_k.lo and k <= f.sg_k.hi
    row{figure = "k_size_gib", mode = "exact", logged = f.sg_k.mid, kvplan = k,
        rel_error = relerr(k, f.sg_k.mid), status = ok and "exact" or "differs",
        inputs = inputs(src_pool)}
  end

  -- without the checkpoint's weights nothing below is predicted
  if unweighed then return rows, f end

  -- SGLang's default mem_fraction_static, when the server chose it: the
  -- release's rule (engines.sglang_version) from the GPU's memory (the log's
  -- weights + memory free after loading, else the GPU named), tp and pp
  if f.engine == "sglang" and f.mem_fraction_static and not f.fraction_given then
    local ok, srow, sv = pcall(engines.sglang_version, f.version)
    local total = f.weights and f.avail_after_load and (f.weights.mid + f.avail_after_load.mid) * GiB
    local tsrc = total and "log"
    if total == nil and gpu_id and pcall(kv.gpu, gpu_id) then
      total, tsrc = kv.gpu(gpu_id).visible_bytes, gsrc
    end
    if not ok then
      row{figure = "mem_fraction_static", mode = "predict", logged = f.mem_fraction_static.mid,
          status = "missing: the SGLang version (" .. tostring(f.version) .. " is not modelled)"}
    elseif srow.rule == "tp" or total then
      local k = require("kvplan.deploy").sglang_fraction(srow, total, tp, pp, m)
      row{figure = "mem_fraction_static", mode = "predict", logged = f.mem_fraction_static.mid,
          kvplan = k, rel_error = relerr(k, f.mem_fraction_static.mid), status = "predicted",
          inputs = inputs("sglang_rule=" .. sv .. (srow.rule == "memory" and (" gpu_memory=" .. tsrc) or ""))}
    end
  end

  -- predict: GPU, model and flags alone
  local popts, no_gpu = {}, false
  for k, v in pairs(base) do popts[k] = v end
  for k, v in pairs(extra) do popts[k] = v end
  if f.total then
    popts.gpu_memory = f.total.mid * GiB // 1
    src.gpu = logline("total")
    if gpu_id then popts.gpu = gpu_id end
  elseif gpu_id then
    popts.gpu = gpu_id
    src.gpu = gsrc
  elseif not popts.gpu_memory then
    row{figure = "kv_memory_gib", mode = "predict", logged = f.kv_memory and f.kv_memory.mid,
        status = "missing: the GPU (neither the log nor its header names it; give gpu=ID)", inputs = inputs()}
    if not (f.weights and f.engine == "vllm" and version_row(engines, f)) then return rows, f end
    -- vLLM's weights of a checkpoint do not follow the GPU's memory (the
    -- MXFP4 kernel does, which an unknown GPU leaves at the checkpoint's
    -- layout): predicted on a GPU of any size, the other figures are not
    no_gpu = true
    popts.gpu_memory = 1 << 40
    src.gpu = "none (the weights do not depend on it)"
  else
    src.gpu_memory = "argument"
  end
  local vrow -- the vLLM release's row of engines.vllm
  local mx_src -- "log" when the log names the MXFP4 MoE kernel
  if popts.gpu and not pcall(kv.gpu, popts.gpu) then
    row{figure = "kv_memory_gib", mode = "predict", status = "missing: unknown GPU '" .. popts.gpu .. "'"}
    return rows, f
  end
  if f.engine == "vllm" then
    local vname, use_v1
    vrow, vname, use_v1 = version_row(engines, f)
    popts.vllm_use_v1 = stated_use_v1(st, use_v1)
    if st.vllm_use_v1 and popts.vllm_use_v1 ~= nil then src.vllm_use_v1 = st.vllm_use_v1.source end
    if vrow == nil then
      row{figure = "kv_memory_gib", mode = "predict", logged = f.kv_memory and f.kv_memory.mid,
          status = f.version and ("missing: the vLLM version (" .. f.version .. " is not modelled)")
                   or "missing: the vLLM version (the log prints none; give engine_version=)",
          inputs = inputs()}
      return rows, f
    end
    -- the release as the log prints it, whose row is the newest modelled
    -- one not after it: a release between rows can matter (bitsandbytes'
    -- absmax from 0.9.2, triton_kernels bundled from 0.12)
    local given = f.version and f.version:match("^v?(%d+%.%d+%.?%d*)")
    popts.engine_version = (given and not vname:find("v1")) and given or vname
    src.version = f.version_source
    -- not logged: the release's default (engines.lua M.vllm rows' utilization)
    popts.utilization = f.utilization and f.utilization.mid or vrow.utilization or 0.9
    src.utilization = usource(f.utilization) or (f.args_seen and "default" or "assumed")
    popts.max_num_seqs = f.max_num_seqs
    -- the entry point (vllm.LLM or the server): the arguments, the header
    -- ('# usage: offline'), else what the log shows
    local uv, us = pick("usage", f.usage)
    popts.usage = uv ~= nil and tostring(uv):lower() or nil
    if us == "header" or us == "argument" then src.usage = us end
    popts.enforce_eager = f.enforce_eager
    popts.flashinfer_sampler = f.flashinfer_sampler
    if f.enable_lora and popts.enable_lora == nil then
      -- the log's LoRA options where the arguments give none
      popts.enable_lora = true
      popts.max_loras = popts.max_loras or f.max_loras
      popts.max_lora_rank = popts.max_lora_rank or f.max_lora_rank
      if popts.fully_sharded_loras == nil then popts.fully_sharded_loras = f.fully_sharded_loras end
      popts.lora_dtype = popts.lora_dtype or f.lora_dtype
      src.lora = logline("enable_lora") or "log"
    end
    if f.mxfp4_backend and not base.weight_bytes and not base.weights then
      local wf = rawget(m, "weight_formats")
      if wf and wf.experts == "mxfp4" then popts.mxfp4_backend, mx_src = f.mxfp4_backend, "log" end
    end
    if f.max_model_len == nil and max_len == nil then src.max_model_len = "model" end
  else
    popts.budget = "sglang"
    popts.utilization = f.mem_fraction_static and f.mem_fraction_static.mid or nil
    src.utilization = usource(f.mem_fraction_static) or "default"
  end
  -- the weights' quantization as the log states it; every linear layer of an
  -- unsloth dynamic checkpoint quantized is an assumption (quantized_model),
  -- so the "_stated" figures leave its rows out
  local wtag = qfmt and (qassumed and ("weights=assumed (" .. qfmt .. " from the log, every linear layer "
                                        .. "quantized: the skip list of an unsloth dynamic checkpoint is not "
                                        .. "in the log; give --config DIR)")
                                  or ("weights=" .. qfmt .. " (log)"))
  local ok, d = pcall(kv.deploy, popts)
  if ok and f.engine == "vllm" and popts.max_num_batched_tokens == nil then
    -- the version's default also bounds the sliding windows' blocks
    popts.max_num_batched_tokens = d.profile_tokens
    ok, d = pcall(kv.deploy, popts)
  end
  if not ok then
    row{figure = "kv_memory_gib", mode = "predict", status = "error: " .. tostring(d), inputs = inputs()}
    return rows, f
  end
  local l = d:ledger()
  if no_gpu then
    row{figure = "weights_gib", mode = "predict", logged = f.weights.mid, kvplan = l.weights / GiB,
        rel_error = relerr(l.weights / GiB, f.weights.mid), status = "predicted",
        inputs = inputs(wtag)}
    return rows, f
  end
  local pin = inputs((wtag
                      or ("weights=" .. (src.model == "config" and "config" or "catalog")))
                     .. (d.mxfp4_backend and (" mxfp4_backend=" .. d.mxfp4_backend .. " ("
                                              .. (mx_src or "default") .. ")") or "")
                     .. (d.vllm_v0_reason and " engine=V0 (fallback)" or "")
                     .. " activation=" .. d.activation_source .. " overhead=" .. d.overhead_source)
  -- the KV pool is what is left after everything else: a connector's own
  -- buffers (not modelled) make it unpredictable, the weights are not
  local after_rest = {kv_memory_gib = true, kv_tokens = true, kv_blocks_x_block = true}
  local function pred(figname, k, logged)
    if logged == nil then return end
    if k == nil then
      row{figure = figname, mode = "predict", logged = logged,
          status = "missing: no vision tower kvplan models in this model", inputs = pin}
      return
    end
    if f.kv_connector and after_rest[figname] then
      row{figure = figname, mode = "predict", logged = logged, kvplan = k,
          status = "missing: the memory of the KV connector (" .. f.kv_connector
                   .. ") is not modelled", inputs = pin}
      return
    end
    row{figure = figname, mode = "predict", logged = logged, kvplan = k,
        rel_error = relerr(k, logged), status = "predicted", inputs = pin}
  end
  local signed = l.usable - l.weights - l.activation - l.overhead
  -- the releases that count memory others hold as non-torch (ledger.c)
  if f.engine == "vllm" and d.vllm_system_rule == 1 then signed = signed - l.system end
  local rank_act = l.activation
  local rank_s = st.rank and tostring(st.rank.value)
  local rank = int(rank_s)
  if rank_s and (rank == nil or rank < 0) then
    row{figure = "rank", mode = "parse", status = "missing: " .. st.rank.source .. " 'rank: " .. rank_s
        .. "' is not a rank (expected a whole number >= 0); its figures are predicted as rank 0's"}
  end
  if f.engine == "vllm" and rank and rank > 0 and (not vrow.v1 or d.vllm_v0) and (d.tp or 1) > 1
     and d.activation_source == "predicted" then
    -- V0 gathers the logits to the driver (rank 0) alone (LogitsProcessor.
    -- _gather_logits: tensor_model_parallel_gather; V1 all-gathers), so the
    -- other ranks profile no sampler: a figure quoted from such a rank is
    -- the forward's. The engine keeps the fewest blocks over its ranks, so
    -- tokens and refusals remain rank 0's.
    local a = d.activation_range -- its forward: a stage that does not sample
    if a then
      rank_act = a.forward
      signed = l.usable - l.weights - rank_act - l.overhead
               - ((d.vllm_system_rule == 1) and l.system or 0)
      pin = pin .. " rank=" .. st.rank.source
    end
  end
  if f.engine == "vllm" then
    pred("weights_gib", l.weights / GiB, f.weights and f.weights.mid)
    local act = f.activation and f.activation.mid
    if act == nil and f.peak_torch and f.weights then
      -- 0.6.4 prints the torch peak with the weights in it
      act = math.floor((f.peak_torch.mid - f.weights.mid) * 1e4 + 0.5) / 1e4
    end
    -- an activation kvplan does not predict (the model's profiling run is
    -- not modelled): neither it nor what follows from it is predicted
    local unpredicted = d.activation_source == "none"
    local why = "missing: the activation (" .. tostring(d.prediction_note) .. ")"
    local function missing(figname, logged)
      if logged then row{figure = figname, mode = "predict", logged = logged, status = why, inputs = pin} end
    end
    if unpredicted then missing("activation_gib", act) else pred("activation_gib", rank_act / GiB, act) end
    pred("non_torch_gib", l.overhead / GiB, f.non_torch and f.non_torch.mid)
    -- the CUDA graphs' estimate vLLM subtracted (parse_body): the log's
    -- figure, not kvplan's, taken off the KV memory and what follows from it
    -- (the ledger of the same deployment with that much more overhead);
    -- without such a line kvplan's KV figures hold it (docs/predictions.md)
    local lk = l
    if not unpredicted and f.cudagraph_applied and f.cudagraph_estimate then
      local cg = math.floor(f.cudagraph_estimate.mid * GiB + 0.5)
      local o = util.copy(popts)
      o.overhead = l.overhead + cg
      local ok2, d2 = pcall(kv.deploy, o)
      if ok2 then
        lk, d = d2:ledger(), d2
        signed = signed - cg
        pin = pin .. " cudagraph_estimate=" .. logline("cudagraph")
      end
    end
    if unpredicted then
      missing("kv_memory_gib", f.kv_memory and f.kv_memory.mid)
      missing("kv_tokens", f.kv_tokens)
      missing("kv_blocks_x_block", not f.kv_tokens and f.blocks and f.blocks * block)
    else
      pred("kv_memory_gib", signed / GiB, f.kv_memory and f.kv_memory.mid)
      if f.kv_tokens then pred("kv_tokens", lk.vllm_kv_cache_tokens, f.kv_tokens)
      elseif f.blocks then pred("kv_blocks_x_block", lk.kv_blocks * block, f.blocks * block) end
    end
    -- the encoder's dummy batch a multimodal model is profiled with (the
    -- budget in tokens and the items: engine/core/predict.c vision_run)
    local enc = d.activation_range and d.activation_range.encoder
    if f.encoder_items then
      pred("encoder_budget", enc and enc.budget, f.encoder_budget)
      pred("encoder_items", enc and enc.items, f.encoder_items)
    end
    -- the engine's refusal: max_model_len beyond what the KV cache holds
    -- no block at all is a refusal too (V0: "No available memory for the
    -- cache blocks"; V1: "No available memory for the cache blocks")
    local none = f.blocks == 0 or (f.kv_memory and f.kv_memory.mid <= 0)
    local logged_refusal = (f.refused or none) and "refuses" or
      ((f.kv_tokens or f.blocks or f.concurrency) and "starts" or nil)
    if logged_refusal and not unpredicted then
      local k = d:starts() and "starts" or "refuses"
      row{figure = "starts", mode = "predict", logged = logged_refusal, kvplan = k,
          status = k == logged_refusal and "agrees" or "differs", inputs = pin}
    end
  else
    pred("weights_gib", l.weights / GiB, f.weights and f.weights.mid)
    local logged = f.sg_tokens or f.max_total_num_tokens
    if logged then pred("kv_tokens", l.kv_budget // d.model:kv_bytes_per_token(d.kv, tp), logged) end
  end
  return rows, f
end

--- The rows of a TensorRT-LLM log (M.parse_trtllm's facts f, model m). c:
--- tp, pp, kv, max_model_len, src, and check's row, inputs and relerr.
---   exact    the per-token KV size the PyTorch backend prints ("kv size
---            is S") against kvplan's; its "Estimated max tokens in KV
---            cache" from the available KV memory it prints (floor(K / S),
---            _cal_max_tokens); the engine path's blocks from the free memory
---            it prints x the fraction (ceil(floor(A f / S) / tokens per
---            block), calculateMaxNumBlocks) and the GiB it allocates.
---   predict  kv.deploy{engine = "trtllm"} from the GPU, model and flags.
function M.check_trtllm(f, m, c)
  local kv = require "kvplan"
  local engines = require "kvplan.engines"
  local row, inputs, relerr, src = c.row, c.inputs, c.relerr, c.src
  -- the backend the log shows, else its release's default (1.0 on: PyTorch)
  local okr, vrow = pcall(engines.trtllm_version, f.version)
  local backend = f.trt_backend or (okr and vrow.backend) or "pytorch"
  local tpb = f.trt_tokens_per_block or engines.trtllm_tokens_per_block[backend]
  src.backend = f.trt_backend and "log" or "default"
  local okd, probe = pcall(kv.deploy, {model = m, tp = c.tp, pp = c.pp, kv = c.kv, gpu_memory = GiB,
                                       activation = 0, overhead = 0, weight_bytes = 1, budget = "trtllm"})
  if not okd then
    row{figure = "kv_size_per_token", mode = "exact", status = "error: " .. tostring(probe)}
    return
  end
  local per = probe:ledger().kv_bytes_per_token
  if f.trt_kv_size then
    row{figure = "kv_size_per_token", mode = "exact", logged = f.trt_kv_size, kvplan = per,
        rel_error = relerr(per, f.trt_kv_size), status = per == f.trt_kv_size and "exact" or "differs",
        inputs = inputs()}
  end
  if f.kv_memory and f.kv_tokens and per > 0 then
    local function tok(e) return math.max(math.floor(f.kv_memory[e] * GiB) // per, 0) end
    local ok = f.kv_tokens >= tok("lo") and f.kv_tokens <= tok("hi")
    row{figure = "kv_tokens", mode = "exact", logged = f.kv_tokens, kvplan = tok("mid"),
        range = tok("lo") .. "-" .. tok("hi"), rel_error = relerr(tok("mid"), f.kv_tokens),
        status = ok and "exact" or "differs", inputs = inputs("kv_memory=log")}
  end
  -- the pool's tokens from the max_tokens it names: whole blocks, rounded
  -- up ("Allocated ... for max tokens in paged KV cache (86720)" after
  -- max_tokens 86711 in 1.1.0rc3; engines.lua M.trtllm_tokens_per_block), as
  -- the ledger sizes its pool for that max_tokens (kv.deploy's max_kv_tokens)
  if not f.trt_free and f.trt_alloc_tokens and f.kv_tokens and f.kv_tokens > 0 then
    local okp, pd = pcall(kv.deploy, {model = m, tp = c.tp, pp = c.pp, kv = c.kv,
                                      gpu_memory = 1 << 50, activation = 0, overhead = 0,
                                      weight_bytes = 1, budget = "trtllm", block = tpb,
                                      max_kv_tokens = f.kv_tokens,
                                      max_model_len = f.trt_window_asked})
    if okp then
      local tsrc = "max_tokens=log tokens_per_block=" .. (f.trt_tokens_per_block and "log" or "default")
      local pool = pd:ledger().kv_tokens
      row{figure = "kv_pool_tokens", mode = "exact", logged = f.trt_alloc_tokens, kvplan = pool,
          rel_error = relerr(pool, f.trt_alloc_tokens),
          status = pool == f.trt_alloc_tokens and "exact" or "differs", inputs = inputs(tsrc)}
      -- the window a max_seq_len beyond the pool is cut to: blocks x
      -- tokens per block (the startup check's note, engine/core/starts.c)
      if f.trt_window then
        local _, why = pd:starts()
        local w = tonumber(why:match("reduced to (%d+)")) or f.trt_window_asked
        row{figure = "kv_window", mode = "exact", logged = f.trt_window, kvplan = w,
            rel_error = relerr(w, f.trt_window), status = w == f.trt_window and "exact" or "differs",
            inputs = inputs(tsrc .. " max_seq_len=log")}
      end
    end
  end
  -- the GiB allocated for the tokens it names, where the free memory is
  -- not in the log: kvCacheManager.cpp prints the primary pool's volume x
  -- its element size, blocks x tokens per block x the bytes of a token
  if not f.trt_free and f.trt_alloc and f.trt_alloc_tokens and per > 0 then
    local g = f.trt_alloc_tokens * per / GiB
    row{figure = "kv_allocated_gib", mode = "exact", logged = f.trt_alloc.mid, kvplan = g,
        rel_error = relerr(g, f.trt_alloc.mid),
        status = (g >= f.trt_alloc.lo and g <= f.trt_alloc.hi) and "exact" or "differs",
        inputs = inputs("tokens=log")}
  end
  local frac = f.trt_fraction and f.trt_fraction.mid or (okr and vrow.fraction)
               or engines.trtllm_defaults.fraction
  local fsrc = c.fraction_src or (f.trt_fraction and "log" or "default")
  if f.trt_free and (f.blocks or f.trt_alloc_tokens) and per > 0 then
    local function blocks(e)
      local t = math.floor(f.trt_free[e] * GiB * frac) // per
      return (t + tpb - 1) // tpb
    end
    local logged = f.blocks or f.trt_alloc_tokens // tpb
    local ok = logged >= blocks("lo") and logged <= blocks("hi")
    row{figure = "kv_blocks", mode = "exact", logged = logged, kvplan = blocks("mid"),
        range = blocks("lo") .. "-" .. blocks("hi"), rel_error = relerr(blocks("mid"), logged),
        status = ok and "exact" or "differs",
        inputs = inputs("free_memory=log fraction=" .. fsrc .. " tokens_per_block="
                        .. (f.trt_tokens_per_block and "log" or "default"))}
    if f.trt_alloc then
      local g = logged * tpb * per / GiB
      row{figure = "kv_allocated_gib", mode = "exact", logged = f.trt_alloc.mid, kvplan = g,
          rel_error = relerr(g, f.trt_alloc.mid),
          status = (g >= f.trt_alloc.lo and g <= f.trt_alloc.hi) and "exact" or "differs",
          inputs = inputs("blocks=log")}
    end
  end
  -- predict: GPU, model and flags alone
  local popts = {model = m, tp = c.tp, pp = c.pp, kv = c.kv, max_model_len = c.max_model_len,
                 engine = "trtllm", backend = backend, utilization = frac,
                 max_num_batched_tokens = f.max_num_batched_tokens}
  for k, v in pairs(c.extra or {}) do popts[k] = v end
  if okr and f.version then popts.engine_version, src.version = f.version, f.version_source end
  src.fraction = fsrc
  if f.total then
    popts.gpu_memory, src.gpu = f.total.mid * GiB // 1, "log"
    if c.gpu and pcall(kv.gpu, c.gpu) then popts.gpu = c.gpu end
  elseif c.gpu and pcall(kv.gpu, c.gpu) then
    popts.gpu, src.gpu = c.gpu, c.gpu_src
  elseif popts.gpu_memory then
    src.gpu_memory = "argument"
  else
    row{figure = "kv_memory_gib", mode = "predict", logged = f.kv_memory and f.kv_memory.mid,
        status = "missing: the GPU (neither the log nor its header names a known one)", inputs = inputs()}
    return
  end
  local ok, d = pcall(kv.deploy, popts)
  if not ok then
    row{figure = "kv_memory_gib", mode = "predict", status = "error: " .. tostring(d), inputs = inputs()}
    return
  end
  local l = d:ledger()
  local pin = inputs("weights=" .. (src.model == "config" and "config" or "catalog") .. " activation="
                     .. d.activation_source .. " overhead=" .. d.overhead_source)
  local function pred(figname, k, logged)
    if logged == nil then return end
    row{figure = figname, mode = "predict", logged = logged, kvplan = k,
        rel_error = relerr(k, logged), status = "predicted", inputs = pin}
  end
  pred("weights_gib", l.weights / GiB, f.weights and f.weights.mid)
  pred("activation_gib", l.activation / GiB, f.activation and f.activation.mid)
  -- "used outside torch" (_util.py) is all used memory less torch's: what
  -- others hold is in it
  pred("non_torch_gib", (l.overhead + l.system) / GiB, f.non_torch and f.non_torch.mid)
  if d.activation_source == "none" and (f.kv_memory or f.kv_tokens or f.blocks) then
    row{figure = "kv_memory_gib", mode = "predict", logged = f.kv_memory and f.kv_memory.mid,
        status = "missing: the activation (" .. tostring(d.prediction_note) .. ")", inputs = pin}
  else
    pred("kv_memory_gib", l.kv_budget / GiB, f.kv_memory and f.kv_memory.mid)
    if per > 0 then pred("kv_tokens", math.max(l.kv_budget, 0) // per, f.kv_tokens) end
    pred("kv_blocks", math.max(l.kv_budget, 0) // per // tpb, f.blocks)
  end
  local logged_start = f.refused and "refuses" or ((f.kv_tokens or f.blocks) and "starts" or nil)
  if logged_start and d.activation_source ~= "none" then
    local k = d:starts() and "starts" or "refuses"
    row{figure = "starts", mode = "predict", logged = logged_start, kvplan = k,
        status = k == logged_start and "agrees" or "differs", inputs = pin}
  end
end

M.columns = {"log", "engine", "version", "figure", "mode", "logged", {"kvplan", precision = 4},
             "range", {"rel_error", precision = 4}, "status", "inputs"}

--- Median and worst absolute relative error of the prediction rows, by
--- figure (rows from M.check over many logs), for the calibration-free rows
--- (logs whose name starts with "calib" are left out).
function M.summary(rows)
  local by, diff = {}, {}
  local function add(fig, r)
    by[fig] = by[fig] or {}
    diff[fig] = diff[fig] or {}
    table.insert(by[fig], math.abs(r.rel_error))
    if type(r.kvplan) == "number" and type(r.logged) == "number" then
      table.insert(diff[fig], math.abs(r.kvplan - r.logged))
    end
  end
  -- "<figure>_stated": the rows none of whose inputs is an assumed default
  -- (a log that shows no command line or engine arguments)
  local assumed = {}
  for _, r in ipairs(rows) do
    if r.mode == "predict" and type(r.rel_error) == "number" and not tostring(r.log):match("calib[^/]*$") then
      add(r.figure, r)
      if tostring(r.inputs):find("=assumed") then assumed[r.figure] = true end
    end
  end
  for _, r in ipairs(rows) do
    if r.mode == "predict" and type(r.rel_error) == "number" and assumed[r.figure]
       and not tostring(r.log):match("calib[^/]*$") and not tostring(r.inputs):find("=assumed") then
      add(r.figure .. "_stated", r)
    end
  end
  local function median(v)
    table.sort(v)
    local n = #v
    return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
  end
  local out = {}
  for _, k in ipairs(util.sorted_keys(by)) do
    local v, d = by[k], diff[k]
    out[#out + 1] = {figure = k, n = #v, median_abs_error = median(v), worst_abs_error = v[#v],
                     median_abs_diff = #d > 0 and median(d) or nil, worst_abs_diff = d[#d]}
  end
  local exact, total = 0, 0
  for _, r in ipairs(rows) do
    if r.mode == "exact" then
      total = total + 1
      if r.status == "exact" then exact = exact + 1 end
    end
  end
  out[#out + 1] = {figure = "exact_accounting", n = total, median_abs_error = nil,
                   worst_abs_error = nil, exact = exact}
  return out
end

--- validate's own arguments beside the deployment fields (fields.lua):
--- name, default, meaning.
M.own_arguments = {
  {"config", "", "a Hugging Face model directory (also --config DIR, or model=DIR)"},
  {"summary", false, "the median and worst error of each figure instead of the rows"},
  {"quantization", "", "the checkpoint's quantization as vLLM names it (awq, gptq, fp8, ...)"},
  {"rank", "", "the rank a log's figures were quoted from (V0 ranks other than 0 profile no sampler)"},
  {"version", "", "the same as engine_version (the header's '# version:')"},
  {"checkpoint", "", "the checkpoint's Hugging Face name where the log prints none, read for its quantization (an unsloth dynamic '-unsloth-bnb-4bit' one: weights=assumed)"},
  {"kv_connector", "", "the KV connector the deployment ran (LMCacheConnectorV1, ...) where the log shows none: its KV rows are missing"},
  {"unified_memory", "", "the GPU shares its memory with the OS (the catalog's unified_memory, for a GPU it lacks): without system_memory the prediction's inputs say system_memory=assumed"},
}

-- Registry fields validate takes as arguments: every one-word field
local arg_types = {count = true, bytes = true, fraction = true, number = true, boolean = true,
                   string = true, enum = true}

--- The defaults kv.options checks validate's key=value arguments against:
--- its own, then every one-word deployment field of the registry ("" for not
--- given: converted and checked as the field, fields.lua).
function M.argument_defaults()
  local fields = require "kvplan.fields"
  local d = {}
  for _, a in ipairs(M.own_arguments) do d[a[1]] = a[2] end
  for _, f in ipairs(fields.list) do
    if arg_types[f.type] and not f.every_command and d[f.name] == nil then d[f.name] = "" end
  end
  return d
end

--- What validate reads from a log, for its --help: a fact of M.parse (its
--- key) and what the log prints for it. validate_test.lua checks each is a
--- fact M.parse finds in a log of tests/validation (or raw/).
M.log_facts = {
  {"engine", "the engine (vLLM, SGLang or TensorRT-LLM) and its version"},
  {"model", "the model (a catalog id, or its Hugging Face name)"},
  {"gpu_name", "the GPU's name, as the engine or the driver prints it"},
  {"tp", "tensor- and pipeline-parallel sizes"},
  {"max_model_len", "max_model_len (context_length, max_seq_len)"},
  {"utilization", "gpu_memory_utilization, mem_fraction_static or the free fraction"},
  {"kv_cache_dtype", "the KV cache format and the checkpoint's quantization"},
  {"spec_method", "speculative decoding: its method and tokens (speculative_config)"},
  {"enable_prefix_caching", "prefix caching, and vLLM's Mamba cache mode ('align' lines, mamba_cache_mode)"},
  {"block", "the block (page) size"},
  {"max_num_seqs", "max_num_seqs and max_num_batched_tokens"},
  {"weights", "the memory the weights took"},
  {"activation", "the profiling run's activation peak and non-torch memory"},
  {"kv_memory", "the KV cache memory ('Available KV cache memory: N GiB')"},
  {"kv_tokens", "KV tokens and blocks ('GPU KV cache size: N tokens', '# GPU blocks')"},
  {"concurrency", "'Maximum concurrency for N tokens per request: X'"},
  {"refused", "a refusal to start (the KV cache too small for max_model_len)"},
}

--- `kvplan validate --help`: the arguments (validate's own, then every
--- registry field it takes, as the other commands list them) and what it
--- reads from a log.
function M.command_help()
  local fields = require "kvplan.fields"
  local lines = {
    "usage: kvplan validate LOG... [--config DIR] [summary=1] [key=value ...]",
    "Check kvplan against engine startup logs: one row per figure the log states, kvplan's",
    "value beside the log's (exact: given the KV memory the engine reports; predict: from",
    "the GPU, the model and the flags alone) and where each input came from. LOG '-' is",
    "standard input (a log piped in, read in blocks: any length in bounded memory).",
    "",
    "arguments (fill in or override what a log and its header state: argument > header",
    "> log > default):",
  }
  fields.argument_lines(lines, M.own_arguments)
  local own = {}
  for _, a in ipairs(M.own_arguments) do own[a[1]] = true end
  local defaults = M.argument_defaults()
  for _, f in ipairs(fields.list) do
    if defaults[f.name] ~= nil and not own[f.name] then
      lines[#lines + 1] = fields.help_line(f.name, f.meaning, f)
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "read from a log (what the log does not print, or prints wrongly, an argument states):"
  for _, r in ipairs(M.log_facts) do lines[#lines + 1] = "  " .. r[2] end
  lines[#lines + 1] = "A log may open with header lines '# key: value' naming any argument above (and"
  lines[#lines + 1] = "source, note): the thread's GPU, the command line it left out."
  lines[#lines + 1] = "Example: kvplan validate vllm.log gpu=h100-sxm; kubectl logs POD | kvplan validate -"
  return table.concat(lines, "\n") .. "\n"
end

-- is path a Hugging Face model directory (or its config.json)?
local function hf_path(path)
  if type(path) ~= "string" or path == "" then return false end
  for _, p in ipairs{path .. "/config.json", path} do
    local fh = io.open(p, "rb")
    if fh then
      local head = fh:read(1)
      fh:close()
      if p ~= path or head == "{" then return true end
    end
  end
  return false
end

--- kvplan validate LOG... [--config DIR] [summary=1] [key=value ...]
--- key=value: a deployment field (model, gpu, tp, pp, kv, weights, engine,
--- engine_version, utilization, block, max_model_len, ...; the engines'
--- spellings too) that fills in or overrides what each log and its header
--- state (argument > header > log > default); model may be a Hugging Face
--- directory. Raises after the report is written when a log could not be
--- read whole (a parse row): kvplan exits with status 1 and keeps the report.
function M.command(args)
  local files, named = {}, {}
  for k, v in pairs(args or {}) do
    if math.type(k) == "integer" then files[k] = v else named[k] = v end
  end
  -- a model given as a directory is the config's (kv.options would look it up)
  if hf_path(named.model) then
    if named.config and named.config ~= "" then
      require("kvplan.options").bad("validate: model=%s and config=%s both name the model",
                                    tostring(named.model), tostring(named.config))
    end
    named.config, named.model = named.model, nil
  end
  local o = require("kvplan.options").parse(named, M.argument_defaults(), true)
  local config = o.config ~= "" and o.config or nil
  local summary = o.summary
  local stated = {}
  for k, v in pairs(o) do
    if v ~= "" and k ~= "config" and k ~= "summary" then stated[k] = v end
  end
  if stated.version then
    if stated.engine_version then
      require("kvplan.options").bad("validate: version and engine_version are the same argument")
    end
    stated.engine_version, stated.version = stated.version, nil
  end
  if #files == 0 then util.raise("validate: no LOG file given (kvplan validate LOG... [--config DIR] [summary=1] [key=value ...])") end
  local all, unread_logs = {}, {}
  for _, path in ipairs(files) do
    local text, numbers = M.reduce(path)
    local rows = M.check(text, {name = path, config = config, lines = numbers, args = stated})
    local whole = true
    for _, r in ipairs(rows) do
      all[#all + 1] = r
      if r.mode == "parse" then whole = false end
    end
    if not whole then unread_logs[#unread_logs + 1] = path end
  end
  local report = require "kvplan.report"
  if summary then
    -- errors relative to the logged figure, and differences in its unit
    -- (GiB, tokens): a small logged figure makes a large relative error
    local r = report{columns = {"figure", "n", {"median_abs_error", precision = 4},
                                {"worst_abs_error", precision = 4}, "exact",
                                {"median_abs_diff", precision = 4}, {"worst_abs_diff", precision = 4}}}
    for _, s in ipairs(M.summary(all)) do
      for _, k in ipairs({"median_abs_error", "worst_abs_error", "exact", "median_abs_diff",
                          "worst_abs_diff"}) do
        if s[k] == nil then s[k] = "" end
      end
      r:row(s)
    end
    r:close()
  else
    local r = report{columns = M.columns}
    for _, row in ipairs(all) do r:row(row) end
    r:close()
  end
  if #unread_logs > 0 then
    -- status 1 says some logs were not read whole; the report, whole, says
    -- which and why (its parse rows): kept, where a failed run's files go
    -- (engine/cli/main.c run_script)
    local cli = package.loaded["kvplan.cli"]
    if cli ~= nil then cli.keep_outputs = true end
    util.raise("validate: %d of %d logs could not be read whole (their parse rows say why): %s",
               #unread_logs, #files, table.concat(unread_logs, ", "))
  end
end

return M
