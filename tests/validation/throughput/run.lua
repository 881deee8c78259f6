-- tests/validation/throughput/run.lua: kvplan's time model against published
-- serving measurements (the corpus CSVs beside this file; README.md there
-- describes them, docs/time.md "Checked against published measurements"
-- states the result).
--
-- Every corpus CSV of the folder (`*.csv` except results*.csv and
-- ratchet.csv) has the schema's header, in order (`M.header`). Each row is
-- predicted with kv.simulate as its benchmark ran:
--   deployment  model, GPU, tp, pp, ep (SGLang's ep_size on an SGLang row,
--               TensorRT-LLM's ep_size on a TensorRT-LLM row, else vLLM's
--               enable_expert_parallel when ep = tp), weight and KV formats, budget rule and fraction,
--               the engine and its release where kvplan has that engine
--               (vllm, sglang, tensorrt-llm -> trtllm); NIM and LMDeploy rows
--               are scheduled under their budget column's engine (kvplan has
--               neither), their release not passed
--   limits      max_num_seqs and max_num_batched_tokens as run (blank: the
--               engine's default; `trtllm-bench`: the limits trtllm-bench
--               computes itself, trtllm_bench_limits below)
--   arrivals    all at once (rate blank), Poisson at `rate` requests a second
--               (seed 1), a closed-loop client keeping `max_concurrency` in
--               flight; a static batch of B is requests = max_concurrency =
--               max_num_seqs = B, which is what those three options give
--   outputs     `fixed`: every request generates `output` tokens; `eos`: the
--               request may stop early, the lengths min(G, output) with G
--               geometric of the published mean (eos_lengths below);
--               `sharegpt:` rows (vLLM's client on ShareGPT, `prompt` and
--               `output` the run's means): prompt and output lengths drawn
--               from kv.workload.sharegpt with those means
-- A row kvplan cannot express (an engine release, an ep, an output mean it
-- has no way to give, a deployment kv.simulate refuses) is skipped with its
-- reason, printed, listed in summary.txt and counted; the ratchet counts the
-- rows simulated, so a row lost this way fails `make test`.
--
-- Figures compared where the source measured them (`M.figures`): output
-- tokens/s of the deployment, mean and p99 TTFT, mean and p99 TPOT, mean ITL,
-- mean E2E. kv.simulate has no ITL: a request's tokens after its first come
-- (e2e - ttft) / (output - 1) apart on average (its tpot), so the mean gap
-- between tokens over all requests (vLLM's "Mean ITL", the mean of every
-- request's gaps pooled) is the mean of the requests' tpot weighted by their
-- output - 1 gaps, sum(e2e - ttft) / sum(output - 1), which the summary's
-- means and token counts give exactly. The simulator emits a step's tokens
-- at the step's end, so this mean gap is its tpot's, not a streamed chunk's.
-- Errors are (predicted - measured) / measured in percent; a prediction is
-- optimistic when it is faster (more tokens/s, or less time). Nothing here
-- is fitted.
--
-- Run from the source tree:
--   build/kvplan tests/validation/throughput/run.lua [out=DIR] [ratchet=check|none|update]
-- out=DIR writes results.csv and summary.txt into DIR. ratchet=check (the
-- default) compares the held-out and dev figures with ratchet.csv and the
-- figures README.md and docs/time.md state, and fails naming every
-- difference; ratchet=update (a human's re-baseline, after reading those
-- differences) rewrites results.csv, summary.txt and ratchet.csv in the
-- corpus folder and the generated blocks of README.md and docs/time.md.
-- Every row is simulated with the request count its benchmark sent (30,000
-- and 114,688 included): the corpus takes about 10 s of CPU, so no row is
-- shortened.

local kv = require "kvplan"
local csv = require "kvplan.csv"
local engines = require "kvplan.engines"
local args = kv.options(..., {dir = "tests/validation/throughput", out = "", ratchet = "check",
                                 timing = false})
if args.ratchet ~= "check" and args.ratchet ~= "none" and args.ratchet ~= "update" then
  error(string.format("ratchet must be check, none or update, got '%s'", args.ratchet), 0)
end

local M = {}

M.header = {"id", "source_id", "split", "engine", "engine_version", "model", "gpu", "tp", "pp",
            "ep", "weights", "kv", "budget", "utilization", "prompt", "output", "requests", "rate",
            "max_concurrency", "max_num_seqs", "max_num_batched_tokens", "output_stop",
            "measured_output_tok_s", "measured_requests_s", "measured_ttft_mean_ms",
            "measured_ttft_p99_ms", "measured_tpot_mean_ms", "measured_tpot_p99_ms",
            "measured_itl_mean_ms", "measured_e2e_mean_ms", "source", "table", "notes"}

-- name, measured column, the prediction from a kv.simulate result, whether
-- more is faster
M.figures = {
  {"output_tok_s", "measured_output_tok_s", function(s) return s.throughput_tokens_s end, true},
  {"ttft_mean_ms", "measured_ttft_mean_ms", function(s) return s.ttft_ms.mean end},
  {"ttft_p99_ms", "measured_ttft_p99_ms", function(s) return s.ttft_ms.p99 end},
  {"tpot_mean_ms", "measured_tpot_mean_ms", function(s) return s.tpot_ms.mean end},
  {"tpot_p99_ms", "measured_tpot_p99_ms", function(s) return s.tpot_ms.p99 end},
  {"itl_mean_ms", "measured_itl_mean_ms", function(s)
     local gaps = s.output_tokens - s.requests
     return gaps > 0 and (s.e2e_ms.mean - s.ttft_ms.mean) * s.requests / gaps or 0 end},
  {"e2e_mean_ms", "measured_e2e_mean_ms", function(s) return s.e2e_ms.mean end},
}

-- kvplan's engine for the corpus's engine column (nil: none of its own)
local ENGINE = {vllm = "vllm", sglang = "sglang", ["tensorrt-llm"] = "trtllm", nim = false,
                lmdeploy = false}
local BUDGET = {vllm = true, sglang = true, trtllm = true}
-- The split goes by family: the sources of one publisher's document (its
-- versions, a lab's pages, a cookbook's recipes) repeat setups and at times
-- numbers, so they share a part. A source not listed is its own family.
local FAMILY = {{"^trtllm%-perf%-overview", "trtllm-perf-overview"}, {"^gpustack%-", "gpustack"},
                {"^sgl%-cookbook%-", "sgl-cookbook"}, {"^dstack%-", "dstack"}}
function M.family(id)
  for _, f in ipairs(FAMILY) do
    if id:find(f[1]) then return f[2] end
  end
  return id
end
-- The families whose rows were used to check constants before the split rule
-- existed: dev whatever their hash says.
local GRANDFATHERED = {["trtllm-perf-overview"] = true, ["mushfiqrahman-4090"] = true}

-- ---- reading the corpus ----------------------------------------------------

local function fail(file, line, col, fmt, ...)
  error(string.format("%s:%d: column '%s': " .. fmt, file, line, col, ...), 0)
end

--- The split the rule gives source_id: the first hex digit of its family's
--- sha256, 0-4 dev, 5-f heldout.
local split_cache = {}
local function split_of(source)
  local id = M.family(source)
  if GRANDFATHERED[id] then return "dev" end
  if split_cache[id] == nil then
    local p = assert(io.popen("printf %s '" .. id .. "' | sha256sum"))
    local h = p:read("l")
    p:close()
    local d = tonumber((h or ""):sub(1, 1), 16)
    if d == nil then error("sha256sum gave no digest for source_id '" .. id .. "'", 0) end
    split_cache[id] = d <= 4 and "dev" or "heldout"
  end
  return split_cache[id]
end

--- The corpus files of dir, sorted.
function M.files(dir)
  local p = assert(io.popen("LC_ALL=C ls -1 '" .. dir:gsub("'", "'\\''") .. "'"))
  local out = {}
  for name in p:lines() do
    if name:match("%.csv$") and not name:match("^results") and name ~= "ratchet.csv" then
      out[#out + 1] = name
    end
  end
  p:close()
  table.sort(out)
  return out
end

-- A cell's checks: a number (integer when int) above `min` (or at least it
-- when `ge`), or blank when `blank`.
local function number(c, col, opt)
  local v = c(col)
  if v == "" then
    if opt.blank then return nil end
    c.fail(col, "must be given")
  end
  local n = tonumber(v)
  if n == nil or n ~= n or n == math.huge then c.fail(col, "must be a number, got '%s'", v) end
  if opt.int then
    n = math.tointeger(n)
    if n == nil then c.fail(col, "must be a whole number, got '%s'", v) end
  end
  if n < (opt.min or 0) or (n == (opt.min or 0) and not opt.ge) then
    c.fail(col, "must be %s %s, got '%s'", opt.ge and ">=" or ">", tostring(opt.min or 0), v)
  end
  return n
end

local FORMATS = {}
for _, n in ipairs(kv.formats.names()) do FORMATS[n] = true end

--- The weight format a row reads is its checkpoint's as stored (issue 18;
--- README.md, "How a row's weight format is read"), decided from the
--- checkpoint its `notes` or `table` name, never from the row's error. Each
--- entry: a Lua pattern (or plain text) naming checkpoints, the format they
--- are stored in, and why:
---   Qwen's own FP8 checkpoints (Qwen/Qwen3-*-FP8, Qwen/Qwen3-*-A*B-*-FP8;
---     the Qwen speed benchmark's FP8 rows run them): block FP8, 128 x 128.
---     The Qwen3 model cards, "Note on FP8": "The quantization method is
---     fine-grained `fp8` quantization with block size of 128. You can find
---     more details in the `quantization_config` field in `config.json`"
---     (huggingface.co/Qwen/Qwen3-235B-A22B-FP8 README.md; the same words
---     on Qwen3-30B-A3B-Instruct-2507-FP8, Qwen3-235B-A22B-Thinking-2507-FP8);
---     that field, quant_method "fp8" with weight_block_size [128, 128], is
---     what the engines read as block FP8: vLLM's and SGLang's Fp8Config
---     (weight_block_size), TensorRT-LLM's ModelConfig.load_hf_quant_config
---     (tensorrt_llm/_torch/model_config.py: quant_method "fp8" and a
---     weight_block_size -> QuantAlgo.FP8_BLOCK_SCALES, "FP8_BLOCK_SCALES
---     only supports block_size=(128,128)").
---   NVIDIA ModelOpt FP8 checkpoints (nvidia/*-FP8; "ModelOpt FP8" in the
---     TensorRT-LLM overview rows): per-tensor fp8, their hf_quant_config.json
---     `"quant_algo": "FP8"` (e.g. huggingface.co/nvidia/Llama-3.1-405B-
---     Instruct-FP8), TensorRT-LLM's QuantAlgo.FP8, without block scales.
--- A row naming checkpoints of two formats is refused (name one).
M.checkpoint_formats = {
  {find = "Qwen/Qwen[%w.%-]*%-FP8%f[^%w%-]", weights = "fp8-b128x128",
   what = "a Qwen FP8 checkpoint (Qwen/...-FP8: fine-grained block FP8, 128 x 128)"},
  {find = "Qwen FP8 checkpoint", plain = true, weights = "fp8-b128x128",
   what = "a Qwen FP8 checkpoint (fine-grained block FP8, 128 x 128)"},
  {find = "nvidia/[%w.%-]+%-FP8%f[^%w%-]", weights = "fp8",
   what = "an NVIDIA ModelOpt FP8 checkpoint (nvidia/...-FP8: quant_algo FP8, per-tensor)"},
  {find = "ModelOpt FP8", plain = true, weights = "fp8",
   what = "an NVIDIA ModelOpt FP8 checkpoint (quant_algo FP8, per-tensor)"},
}

--- The weight format of the checkpoint `text` (a row's notes and table)
--- names (M.checkpoint_formats) and what names it; nil when it names none;
--- an error when it names checkpoints of two formats.
function M.checkpoint_weights(text)
  local got, what
  for _, e in ipairs(M.checkpoint_formats) do
    if text:find(e.find, 1, e.plain) then
      if got ~= nil and got ~= e.weights then
        error(string.format("names %s and %s: name the one the row ran", what, e.what), 0)
      end
      got, what = got or e.weights, what or e.what
    end
  end
  return got, what
end

--- One corpus row, checked: a table of its cells converted, or an error
--- naming file:line and the column.
local function parse_row(cells, file, line, seen)
  local idx = {}
  for j, k in ipairs(M.header) do idx[k] = j end
  local c = setmetatable({fail = function(col, fmt, ...) fail(file, line, col, fmt, ...) end},
                         {__call = function(_, k) return cells[idx[k]] or "" end})
  if #cells ~= #M.header then
    fail(file, line, "id", "the row has %d cells, the header %d", #cells, #M.header)
  end
  local r = {file = file, line = line}
  r.id = c("id")
  if not r.id:match("^[a-z0-9.-]+$") then c.fail("id", "must be lowercase [a-z0-9.-]+, got '%s'", r.id) end
  if seen[r.id] then c.fail("id", "'%s' is also the id of %s", r.id, seen[r.id]) end
  seen[r.id] = file .. ":" .. line
  r.source_id = c("source_id")
  if not r.source_id:match("^[a-z0-9.-]+$") then
    c.fail("source_id", "must be lowercase [a-z0-9.-]+, got '%s'", r.source_id)
  end
  r.split = c("split")
  local rule = split_of(r.source_id)
  if r.split ~= rule then
    c.fail("split", "source '%s' (family '%s') is %s by the rule (the first hex digit of the "
           .. "family's sha256: 0-4 dev, 5-f heldout), got '%s'", r.source_id, M.family(r.source_id),
           rule, r.split)
  end
  r.engine = c("engine")
  if ENGINE[r.engine] == nil then
    c.fail("engine", "must be vllm, sglang, tensorrt-llm, nim or lmdeploy, got '%s'", r.engine)
  end
  r.engine_version = c("engine_version")
  r.model, r.gpu = c("model"), c("gpu")
  local ok, m = pcall(kv.model, r.model)
  if not ok then c.fail("model", "%s", m) end
  local okg, g = pcall(kv.gpu, r.gpu)
  if not okg then c.fail("gpu", "%s", g) end
  r.class = m.active < m.params and "moe" or "dense"
  r.tp = number(c, "tp", {int = true})
  r.pp = number(c, "pp", {int = true})
  r.ep = number(c, "ep", {int = true, blank = true})
  r.weights, r.kv = c("weights"), c("kv")
  -- a named format, or a parametric one kvplan reads (fp8-bHxW block FP8, ...)
  if r.weights ~= "native" and not FORMATS[r.weights]
     and not pcall(kv.formats.get, r.weights, "weights") then
    c.fail("weights", "must be native or a kvplan format (%s), got '%s'",
           table.concat(kv.formats.names(), ", "), r.weights)
  end
  if r.kv ~= "auto" and not FORMATS[r.kv] then
    c.fail("kv", "must be auto or a kvplan format (%s), got '%s'", table.concat(kv.formats.names(), ", "),
           r.kv)
  end
  r.budget = c("budget")
  if not BUDGET[r.budget] then c.fail("budget", "must be vllm, sglang or trtllm, got '%s'", r.budget) end
  r.utilization = number(c, "utilization", {blank = true})
  if r.utilization and r.utilization > 1 then
    c.fail("utilization", "must be in (0, 1], got '%s'", c("utilization"))
  end
  r.prompt = number(c, "prompt", {int = true})
  r.output = number(c, "output", {int = true})
  r.requests = number(c, "requests", {int = true, blank = true})
  r.rate = number(c, "rate", {blank = true})
  r.max_concurrency = number(c, "max_concurrency", {int = true, blank = true})
  if r.requests == nil and r.max_concurrency == nil then
    c.fail("requests", "must be given (blank only with max_concurrency: a closed loop's steady state)")
  end
  for _, k in ipairs{"max_num_seqs", "max_num_batched_tokens"} do
    if c(k) == "trtllm-bench" then r[k] = "trtllm-bench"
    else r[k] = number(c, k, {int = true, blank = true}) end
  end
  r.output_stop = c("output_stop")
  if r.output_stop ~= "fixed" and r.output_stop ~= "eos" then
    c.fail("output_stop", "must be fixed or eos, got '%s'", r.output_stop)
  end
  r.measured = {}
  local any = false
  for _, f in ipairs(M.figures) do
    r.measured[f[1]] = number(c, f[2], {blank = true})
    any = any or r.measured[f[1]] ~= nil
  end
  if not any then c.fail("measured_output_tok_s", "the row measures none of the figures") end
  r.measured_requests_s = number(c, "measured_requests_s", {blank = true})
  if r.output_stop == "eos" and (r.measured_requests_s == nil or r.measured.output_tok_s == nil) then
    c.fail("measured_requests_s", "output_stop eos needs measured_output_tok_s and "
           .. "measured_requests_s (their ratio is the mean output)")
  end
  r.source, r.table, r.notes = c("source"), c("table"), c("notes")
  if r.source == "" then c.fail("source", "must be given") end
  -- the checkpoint's own format (M.checkpoint_weights), whatever the row's error
  local okw, want, what = pcall(M.checkpoint_weights, r.notes .. " " .. r.table)
  if not okw then c.fail("weights", "the row's notes and table %s", want) end
  if want ~= nil and r.weights ~= want then
    c.fail("weights", "the row's notes and table name %s: must be '%s', got '%s'", what, want,
           r.weights)
  end
  return r
end

--- Every row of the corpus files in dir (a list), and the files read.
function M.read(dir)
  local rows, seen, files = {}, {}, M.files(dir)
  for _, name in ipairs(files) do
    local path = dir .. "/" .. name
    local t, lines = csv.read(path)
    if t == nil then error(lines, 0) end
    local head = t[1] or {}
    for j, k in ipairs(M.header) do
      if head[j] ~= k then
        error(string.format("%s:1: column %d: the header must be the schema's (README.md), expected "
                            .. "'%s', got '%s'", path, j, k, tostring(head[j])), 0)
      end
    end
    if #head ~= #M.header then
      error(string.format("%s:1: column %d: the header must be the schema's, got the extra '%s'",
                          path, #M.header + 1, head[#M.header + 1]), 0)
    end
    for i = 2, #t do rows[#rows + 1] = parse_row(t[i], path, lines[i], seen) end
  end
  return rows, files
end

-- ---- predicting a row ------------------------------------------------------

-- trtllm-bench's own limits when the command gives none: NVIDIA/TensorRT-LLM
-- tensorrt_llm/bench/build/tuning.py, calc_engine_setting and
-- finetune_setting (cited at commit 00f37686aa85; re-read for issue 18 at
-- the stored 04cba882084a, which adds the Nemotron-H Mamba cache, and
-- bench/build/dataclasses.py there). Bytes per element of the
-- weights and of the KV by their quant_algo (BYTES_PER_ELEM: FP8 and
-- FP8_BLOCK_SCALES 1, NVFP4 0.5, anything else 2: an MXFP4 checkpoint's
-- quant_algo is W4A16_MXFP4 below SM 100, W4A8_MXFP4_MXFP8 or
-- W4A8_MXFP4_FP8 from SM 100 (tensorrt_llm/_torch/model_config.py
-- get_mxfp4_quant_algo, load_hf_quant_config quant_method "mxfp4"), none in
-- the table, so 2); KV bytes a token over the TP group: 2 x
-- num_hidden_layers x max(tp, num_key_value_heads) x head_size x those bytes
-- (every layer, sliding or not: num_attention_layers is num_hidden_layers
-- but for Nemotron-H); the engine: param_count x those bytes, param_count
-- the checkpoint's safetensors element count (bench/build/dataclasses.py
-- ModelConfig.get_param_count: sum(metadata.parameter_count.values()),
-- huggingface_hub's elements by dtype), not the model's parameters
-- (checkpoint_elements below); the rest of the GPUs' memory
-- (get_device_memory: NVML's total, M.nvml_total_mib below) x the KV
-- fraction holds kv_max requests of prompt + output tokens; then
--   bs = min(kv_max, 4096) / pp, tokens = min(bs x (1 + prompt / output), 32768)
--   max_batch_size = max(64, 32 ceil(bs / 32)) below 256, 128 ceil(bs / 128)
--                    below 1024, else 256 ceil(bs / 256)
--   max_num_tokens = max(2048, 256 ceil(t / 256)) below 4096, 512 ceil(t / 512)
--                    below 8192, else 1024 ceil(t / 1024)
local function quant_bytes(name)
  if name:match("nvfp4") then return 0.5 end
  if name:match("mxfp4") then return 2 end
  if name:match("fp8") then return 1 end
  return 2
end

-- The safetensors elements of the checkpoint trtllm-bench counts as its
-- param_count: a class of weights in a format of fewer than 8 bits packed
-- two values a uint8 element (ModelOpt NVFP4's weight tensor; OpenAI
-- MXFP4's *_blocks), an element a value at 8 bits or more; each group's
-- scale one element (NVFP4's fp8 weight_scale a 16, MXFP4's uint8 *_scales
-- a 32, FP8 block scales one fp32 a block); the format's per-matrix fp32
-- scalars (NVFP4's weight_scale_2 and input_scale) one element a matrix
-- (class_shapes). A mixed checkpoint (weights native, weight_formats) holds
-- each class in its own format; a single-format ModelOpt checkpoint
-- quantizes the linear layers only: embeddings, lm_head (hf_quant_config.json
-- exclude_modules ["lm_head"] for quant_algo FP8 and NVFP4:
-- NVIDIA/TensorRT-Model-Optimizer modelopt/torch/export/unified_export_hf.py
-- _export_hf_checkpoint), norms, routers and the
-- rest ("other", "vision") stay in the model's dtype, an element a value.
local LINEAR = {attention = true, mlp = true, experts = true, shared_experts = true}
local CLASSES = {"embeddings", "lm_head", "attention", "mlp", "experts", "shared_experts", "vision", "other"}
local function checkpoint_elements(d)
  local m, f = d.model, d.weights
  local c, shapes, dtype = m:weight_class_params(), m:class_shapes(), m:dtype_format()
  local mixed = f.name == m:mixed_format_name()
  local n = 0
  for _, k in ipairs(CLASSES) do
    local fk = mixed and m:class_format(k, f) or (LINEAR[k] and f or dtype)
    if (fk.col or 0) > 0 or (fk.zero or 0) > 0 then
      error(string.format("trtllm-bench's parameter count: weight format '%s' of class %s: expected "
                          .. "no zero points or column tensors (ModelOpt, MXFP4 or 16-bit)", fk.name, k), 0)
    end
    local p = c[k] or 0
    local e = p * (fk.bits < 8 and fk.bits / 8 or 1)
    if (fk.group or 0) > 0 then e = e + p / fk.group end
    if (fk.tensor or 0) > 0 and p > 0 and shapes[k] then e = e + shapes[k].shards * fk.tensor / 32 end
    n = n + e
  end
  return n
end
M.checkpoint_elements = checkpoint_elements

-- The max_num_tokens floor of trtllm-bench's PyTorch path:
-- tensorrt_llm/bench/benchmark/utils/general.py get_settings ("Retrieve
-- basic runtime config for pytorch backend path"; throughput.py calls it for
-- every backend but tensorrt, whose engine keeps the limits trtllm-build
-- gave it, get_settings_from_engine) takes tuning.py's limits
-- (get_benchmark_engine_settings at the dataset's avg_isl and avg_osl), then,
-- when chunked prefill is off, max_num_tokens = max(max_num_tokens,
-- dataset_metadata.max_isl + max_batch_size): the longest prompt (not prompt
-- + output) plus the rounded max_batch_size, not rounded again; max_seq_len
-- (the dataset's longest ISL + OSL) and the KV fraction are not adjusted
-- there. enable_chunked_prefill is False unless params or the
-- extra_llm_api_options YAML set it (the overview's llm_options.yml does
-- not: cuda_graph_config and enable_attention_dp only). Read at
-- NVIDIA/TensorRT-LLM 0171265edef1c67ef334e0db2427148161aa2815 and
-- c0b2ee6edd6b86235350271d2c99b4e5f6c1222d (both the same rule). NVIDIA/
-- TensorRT-LLM pull request 5625 (merged 2025-06-30 on main, "sets the
-- maximum number of tokens to the max of ISL+MBS when chunking is disabled")
-- brought it; the code before it was not read. Its first release here is
-- 1.0: 0.19 and 0.20 were out before it (0.20's release notes, pull request
-- 5150, 2025-06-12), and 0.21's branch too (0.21.0rc2 by 2025-06-18,
-- triton-inference-server/tensorrtllm_backend pull request 765; whether the
-- fix was picked into 0.21 was not read: no corpus row runs 0.21).
M.trtllm_bench_isl_floor_from = {1, 0}
local function bench_isl_floor(release, backend)
  if backend ~= "pytorch" then return false end
  local x, y = tostring(release or ""):match("^v?(%d+)%.(%d+)")
  if x == nil then return false end
  x, y = tonumber(x), tonumber(y)
  local f = M.trtllm_bench_isl_floor_from
  return x > f[1] or (x == f[1] and y >= f[2])
end
M.bench_isl_floor = bench_isl_floor

-- The GPU's memory trtllm-bench sizes the KV from: bench/build/utils.py
-- get_device_memory (NVIDIA/TensorRT-LLM at the stored
-- 7ed07f0691dff2c1c89196adee670ce9f4f15f67) is pynvml
-- nvmlDeviceGetMemoryInfo(handle of GPU 0).total / 1024^3, NVML's total, the
-- figure nvidia-smi prints as the memory total, not the CUDA runtime's
-- (cudaMemGetInfo, deviceQuery, torch total_memory) the catalog stores as
-- visible_bytes for most GPUs, a few hundred MiB lower. MiB as nvidia-smi
-- prints them:
--   h100-sxm 81559: NVIDIA/nccl issue 1264, wilicc/gpu-burn issue 114 (as
--     cited in the catalog's visible_source)
--   h200 143771: NVIDIA/cuda-samples issue 311 (nvidia-smi of 8x 'NVIDIA
--     H200', driver 550.54.15, 2024-12-06: '0MiB / 143771MiB')
--   b200 183359: NVIDIA/TensorRT-LLM issue 10278 (nvidia-smi of 8x 'NVIDIA
--     B200', driver 580.95.05, 2025-12-24: '166593MiB / 183359MiB')
--   gb200 189471: the catalog's visible_bytes, itself nvidia-smi's
--     (SlinkyProject/slurm-operator docs/installation.md at ed421c4b41b4)
--   a100-sxm-80gb 81920: modal-labs/modal-client pull request 2797 (as cited
--     in the catalog)
--   l40s 46068: akash-network/provider-configs pull request 99,
--     modal-labs/modal-client pull request 2797 (as cited in the catalog)
--   gh200-96gb 97871: slitvinov/grace README.md at ef75c9bb003b (as cited
--     in the catalog)
-- A GPU not listed keeps the catalog's visible_bytes (no NVML total read).
M.nvml_total_mib = {
  ["h100-sxm"] = 81559, h200 = 143771, b200 = 183359, gb200 = 189471,
  ["a100-sxm-80gb"] = 81920, l40s = 46068, ["gh200-96gb"] = 97871,
}
local function nvml_total_bytes(gpu)
  local mib = M.nvml_total_mib[gpu.id]
  if mib then return mib * 1048576 end
  return gpu.visible_bytes
end
M.nvml_total_bytes = nvml_total_bytes

local function trtllm_bench_limits(d, prompt, output, fraction, isl_floor)
  local model, gpu, tp, pp = d.model, d.gpu, d.tp, d.pp
  local GiB = 2 ^ 30
  local per_token = 2 * model.layers * math.max(tp, model.kv_heads) * model.head_dim
                    * quant_bytes(d.kv.name) / GiB
  local engine = checkpoint_elements(d) * quant_bytes(d.weights.name) / GiB
  local available = nvml_total_bytes(gpu) / GiB * tp * pp - engine
  local kv_max = available * fraction / (per_token * (prompt + output))
  local bs = math.min(kv_max, 4096) / pp
  local t = math.min(bs * (1 + prompt / output), 32768)
  local max_bs
  if bs < 256 then max_bs = math.max(64, 32 * math.ceil(bs / 32))
  elseif bs < 1024 then max_bs = 128 * math.ceil(bs / 128)
  else max_bs = 256 * math.ceil(bs / 256) end
  local max_tokens
  if t < 4096 then max_tokens = math.max(2048, 256 * math.ceil(t / 256))
  elseif t < 8192 then max_tokens = 512 * math.ceil(t / 512)
  else max_tokens = 1024 * math.ceil(t / 1024) end
  -- get_settings' floor without chunked prefill (bench_isl_floor above)
  if isl_floor then max_tokens = math.max(max_tokens, prompt + max_bs) end
  return math.tointeger(max_bs), math.tointeger(max_tokens)
end

-- The lengths min(G, cap), G geometric on 1, 2, ... with P(G > k) = (1 - q)^k,
-- whose mean sum_{k<cap} (1 - q)^k = (1 - (1 - q)^cap) / q is `mean`: a
-- constant chance of the end-of-sequence token at every token (an
-- assumption: the sources give only the mean), 1000 quantiles as an
-- empirical distribution. A mean that rounds to the cap (every request ran
-- to it, or `output` is itself the run's mean; ShareGPT rows do not come
-- here, M.options draws theirs from kv.workload.sharegpt) is `cap`
-- tokens for every request. nil and why when no such q exists.
local function eos_lengths(mean, cap)
  if mean >= cap - 0.5 then return cap end
  if not (mean > 1 and mean < cap) then
    return nil, string.format("output_stop eos: the mean output (measured_output_tok_s / "
                              .. "measured_requests_s = %.2f) must be in (1, %d)", mean, cap)
  end
  local function m(q) return (1 - (1 - q) ^ cap) / q end
  local lo, hi = 1e-12, 1 - 1e-12 -- m falls from cap to 1 as q rises
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if m(mid) > mean then lo = mid else hi = mid end
  end
  local q, v = (lo + hi) / 2, {}
  for i = 1, 1000 do
    local u = (i - 0.5) / 1000
    v[i] = math.min(cap, math.max(1, math.ceil(math.log(1 - u) / math.log(1 - q))))
  end
  return kv.workload.empirical(v)
end

-- kvplan's message for a refused row: its first line, without the
-- position in this script that the stdlib's error names
local function first_line(msg)
  local m = tostring(msg):match("^[^\n]*")
  return (m:gsub("^[^:]*run%.lua:%d+: ", ""))
end

-- The words of each back-quoted command in a row's notes that runs(span)
-- accepts, in order: where the notes readers below look for engine flags
-- (prose that names a flag sets nothing).
local function commands(notes, runs)
  local out = {}
  for span in (notes or ""):gmatch("`([^`]*)`") do
    if runs(span) then
      local words = {}
      for w in span:gmatch("%S+") do words[#words + 1] = w end
      out[#out + 1] = words
    end
  end
  return out
end

-- The integer of flag words[i] written `--flag N` or `--flag=N` (eq: what
-- follows the flag's name in the word), or nil.
local function flag_int(words, i, eq)
  local v
  if eq == "" then v = (words[i + 1] or ""):match("^(%d+)$") else v = eq:match("^=(%d+)$") end
  return v and tonumber(v)
end

-- Does a back-quoted span run vLLM's server (`vllm serve ...` or `python -m
-- vllm.entrypoints...`)?
local function runs_vllm_server(span)
  return (span .. " "):match("^%s*vllm%s+serve%s") ~= nil or span:find("vllm.entrypoints", 1, true) ~= nil
end

-- Does it run vLLM's engine: the server, or vLLM's offline benchmark scripts
-- benchmark_throughput.py and benchmark_latency.py, which pass their engine
-- arguments to vLLM's EngineArgs?
local function runs_vllm_engine(span)
  if runs_vllm_server(span) then return true end
  for w in span:gmatch("%S+") do
    if w:match("benchmark_throughput%.py$") or w:match("benchmark_latency%.py$") then return true end
  end
  return false
end

-- Does it run SGLang's engine: its server or offline benchmarks
-- (`sglang.launch_server`, `sglang.bench_offline_throughput`,
-- `sglang.bench_one_batch`, which take ServerArgs.add_cli_args; the client
-- `sglang.bench_serving` does not)?
local function runs_sglang_engine(span)
  for w in span:gmatch("%S+") do
    if w == "sglang.launch_server" or w == "sglang.bench_offline_throughput"
       or w == "sglang.bench_one_batch" then
      return true
    end
  end
  return false
end

-- true when a back-quoted command of the notes that `runs` accepts holds
-- `flag` as a whole word, else nil
local function notes_word(notes, runs, flag)
  for _, words in ipairs(commands(notes, runs)) do
    for _, w in ipairs(words) do
      if w == flag then return true end
    end
  end
  return nil
end

--- The --async-scheduling a row's notes give vLLM (README.md, "Serving
--- command"): true for `--async-scheduling`, false for
--- `--no-async-scheduling`, nil when neither is there, read only inside a
--- back-quoted command that runs vLLM's server, as a whole word (the last
--- one wins, as argparse takes it).
function M.notes_async_scheduling(notes)
  local found
  for _, words in ipairs(commands(notes, runs_vllm_server)) do
    for _, w in ipairs(words) do
      if w == "--async-scheduling" then found = true
      elseif w == "--no-async-scheduling" then found = false end
    end
  end
  return found
end

--- The --enforce-eager a row's notes give vLLM (README.md, "a serving or
--- benchmark command"): true when a back-quoted command that runs vLLM's
--- engine holds `--enforce-eager` as a whole word, else nil
--- (`EngineArgs.add_cli_args`: "--enforce-eager: Always use eager-mode
--- PyTorch. If False, will use eager mode and CUDA graph in hybrid", so no
--- step replays a CUDA/HIP graph).
function M.notes_enforce_eager(notes)
  return notes_word(notes, runs_vllm_engine, "--enforce-eager")
end

--- The --disable-cuda-graph a row's notes give SGLang, read as
--- M.notes_enforce_eager reads vLLM's flag but in a command that runs
--- SGLang's engine (ServerArgs.add_cli_args: "--disable-cuda-graph: Disable
--- cuda graph."; kv.deploy's enforce_eager, SGLang's alias): true, else nil.
function M.notes_disable_cuda_graph(notes)
  return notes_word(notes, runs_sglang_engine, "--disable-cuda-graph")
end

--- The --disable-overlap-schedule a row's notes give SGLang, read as
--- M.notes_disable_cuda_graph reads its flag (ServerArgs.add_cli_args:
--- "--disable-overlap-schedule"; kv.deploy's disable_overlap_schedule: the
--- scheduler waits for the host between steps, kvplan.sim.sglang_overlap):
--- true, else nil.
function M.notes_disable_overlap_schedule(notes)
  return notes_word(notes, runs_sglang_engine, "--disable-overlap-schedule")
end

--- The --max-seq-len-to-capture N a row's notes give vLLM, read as
--- M.notes_enforce_eager reads --enforce-eager (`--max-seq-len-to-capture N`
--- or `=N`, underscores for dashes too, the last one winning as argparse
--- takes it): vLLM V0 replays no decode graph for a batch with a longer
--- sequence (kv.deploy's max_seq_len_to_capture, engines.lua
--- vllm_v0_max_seq_len_to_capture); nil when no command gives it.
function M.notes_max_seq_len_to_capture(notes)
  local found
  for _, words in ipairs(commands(notes, runs_vllm_engine)) do
    for i, w in ipairs(words) do
      local flag, eq = w:match("^(%-%-max[-_]seq[-_]len[-_]to[-_]capture)(=?.*)$")
      if flag and flag:gsub("_", "-") == "--max-seq-len-to-capture" then
        found = flag_int(words, i, eq) or found
      end
    end
  end
  return found
end

--- SGLang's DP attention a row's notes give: a back-quoted command that runs
--- SGLang's engine holding `--enable-dp-attention` as a whole word. Returns
--- true and the command's dp size (`--dp N`, `--dp-size N`,
--- `--data-parallel-size N` or `=N`: ServerArgs.add_cli_args's
--- "--data-parallel-size", "--dp-size", which argparse also takes as the
--- prefix `--dp`; the last one winning), or nil when no command gives the
--- flag. No dp size given: nil (M.options: the release's rule).
function M.notes_dp_attention(notes)
  local enabled, dp
  for _, words in ipairs(commands(notes, runs_sglang_engine)) do
    for i, w in ipairs(words) do
      if w == "--enable-dp-attention" then enabled = true end
      local flag, eq = w:match("^(%-%-[%a-]+)(=?.*)$")
      if flag == "--dp" or flag == "--dp-size" or flag == "--data-parallel-size" then
        dp = flag_int(words, i, eq) or dp
      end
    end
  end
  if not enabled then return nil end
  return true, dp
end

-- The date of each source whose rows name no release (README.md, "A row
-- without a release"): the date of the commit its URL pins, or the page's
-- own date, as README.md's section on the source states it. A source not
-- here has no date read: its rows run the newest modelled release.
--   cloudrift-server-benchmark  commit 5af039c512c1 of cloudrift-ai/server-
--     benchmark, 2025-10-13 (README.md; its rows' notes: "committed 2025-10-13")
--   oci-mi300x-llama31-405b  the Oracle blog page's date, "October 10, 2024"
--     (README.md)
--   lmdeploy-a100-fp16-v0.1  commit 3e391df46733 of InternLM/lmdeploy,
--     "reformat tables", committed 2023-12-06T12:23:10+08:00 (the
--     repository's history, git show -s)
-- Not found: mushfiqrahman-4090 (the page, https://mushfiqrahman.dev/?p=1668,
-- states no date in the corpus or README), trtllm-perf-overview-585c7565 and
-- trtllm-dsr1-best-perf (the dates of TensorRT-LLM commits 585c756579dc and
-- 01c4ece911eb were not read), nim-benchmarking-llm-1.0 (the page states no
-- publication date; "read 2026-12-01" is when it was read).
M.source_dates = {
  ["cloudrift-server-benchmark"] = "2025-10-13",
  ["oci-mi300x-llama31-405b"] = "2024-10-10",
  ["lmdeploy-a100-fp16-v0.1"] = "2023-12-06",
}

--- The release row r runs by its source's date when it names none (README.md,
--- "A row without a release"): engine is kvplan's engine of the row (its
--- budget's for NIM and LMDeploy). Returns the release or nil, and a note:
--- "DATE -> RELEASE" or why the row stays on the newest release.
function M.release_of_date(r, engine)
  local date = M.source_dates[r.source_id]
  if date == nil then return nil, "no date read for the source" end
  local v, why, kind = engines.release_at(engine, date)
  if v == nil and kind == "before" then
    v = engines.oldest_release(engine)
    return v, string.format("%s -> %s %s (%s)", date, engine, v, why)
  end
  if v == nil then return nil, string.format("%s: %s", date, why) end
  return v, string.format("%s -> %s %s", date, engine, v)
end

--- kv.simulate's options for row r, or nil and why kvplan cannot express it.
function M.options(r)
  local engine = ENGINE[r.engine]
  if engine and engine ~= r.budget then
    return nil, string.format("engine %s with budget %s: kvplan's %s has its own budget rule",
                              r.engine, r.budget, engine)
  end
  local o = {model = r.model, gpu = r.gpu, tp = r.tp, pp = r.pp, budget = r.budget,
             weights = r.weights ~= "native" and r.weights or nil, kv = r.kv,
             utilization = r.utilization}
  if engine then
    o.engine = engine
    -- a release is a number ("0.17", "1.0 (pytorch backend)"); a commit or
    -- "release not stated" is no release: the engine's default, as blank
    if r.engine_version:match("^v?%d") then o.engine_version = r.engine_version:gsub("^v", "") end
    -- TensorRT-LLM's backend where the source names it: "0.19 (pytorch
    -- backend)" runs the PyTorch backend, "0.17 (TensorRT engine, ...)" the
    -- engine path (a release's row alone picks its default backend)
    if engine == "trtllm" then
      local v = r.engine_version:lower()
      if v:find("pytorch backend", 1, true) then o.backend = "pytorch"
      elseif v:find("tensorrt engine", 1, true) then o.backend = "tensorrt" end
    end
  end
  -- no release named: the release of the source's date (README.md)
  if o.engine_version == nil and engine ~= nil then
    local v, note = M.release_of_date(r, engine or r.budget)
    o.engine_version, r.release_note = v, note
  end
  if r.ep ~= nil and r.ep > 1 then
    if r.budget == "sglang" then
      -- SGLang's --ep-size: ep ranks of the tp GPUs hold whole experts, each
      -- split over tp / ep (kv.deploy's ep_size; the deployment checks it
      -- divides tp)
      o.ep_size = r.ep
    elseif r.budget == "trtllm" then
      -- TensorRT-LLM's --ep_size: moe_ep_size x moe_tp_size = tp
      -- (tensorrt_llm/mapping.py), kv.deploy's ep_size under budget trtllm
      o.ep_size = r.ep
    elseif r.ep ~= r.tp then
      return nil, string.format("ep %d with tp %d: kvplan's expert parallelism is vLLM's "
                                .. "enable_expert_parallel over the tp ranks (ep = tp)", r.ep, r.tp)
    else
      o.enable_expert_parallel = true
    end
  end
  -- the serving command's --async-scheduling (kv.deploy's async_scheduling;
  -- before 0.20 vLLM waits for the host between steps unless it is given)
  if r.budget == "vllm" then o.async_scheduling = M.notes_async_scheduling(r.notes) end
  -- the command's --enforce-eager (kv.deploy's enforce_eager: no step
  -- replays a CUDA graph, kvplan.sim.cuda_graphs)
  if r.engine == "vllm" then o.enforce_eager = M.notes_enforce_eager(r.notes) end
  -- SGLang's --disable-cuda-graph (the same field: no step replays a graph)
  if r.engine == "sglang" and r.budget == "sglang" then
    o.enforce_eager = M.notes_disable_cuda_graph(r.notes)
    -- and --disable-overlap-schedule (kv.deploy's disable_overlap_schedule)
    o.disable_overlap_schedule = M.notes_disable_overlap_schedule(r.notes)
  end
  -- the command's --max-seq-len-to-capture (kv.deploy's field: V0's decode
  -- graphs hold no longer sequence, kvplan.sim.graph_seq_max)
  if r.engine == "vllm" then o.max_seq_len_to_capture = M.notes_max_seq_len_to_capture(r.notes) end
  -- the command's --enable-dp-attention (kv.deploy's enable_dp_attention with
  -- data_parallel_size under budget sglang): the command's dp size, else
  -- SGLang 0.4.1's: ServerArgs.__post_init__ sets "self.dp_size =
  -- self.tp_size" under enable_dp_attention (python/sglang/srt/server_args.py
  -- of the 0.4 releases before sgl-project/sglang PR #4390 of 2025-03-13,
  -- which made --dp explicit; later releases turn DP attention off at dp
  -- size 1, so a 0.5 row without --dp runs none)
  if r.engine == "sglang" and r.budget == "sglang" then
    local on, dp = M.notes_dp_attention(r.notes)
    if on then
      local x, y = (o.engine_version or ""):match("^(%d+)%.(%d+)")
      if dp == nil and x and tonumber(x) == 0 and tonumber(y) <= 4 then dp = r.tp end
      if dp and dp > 1 then o.enable_dp_attention, o.data_parallel_size = true, dp end
    end
  end
  local seqs, tokens = r.max_num_seqs, r.max_num_batched_tokens
  if seqs == "trtllm-bench" or tokens == "trtllm-bench" then
    local ok, d = pcall(kv.deploy, o)
    if not ok then return nil, first_line(d) end
    -- the release the row runs (its own, else the deployment's: the newest
    -- modelled when no date gives one) and its backend
    local floor = bench_isl_floor(o.engine_version or d.engine_version, d.trtllm_backend)
    local bs, bt = trtllm_bench_limits(d, r.prompt, r.output, r.utilization or 0.95, floor)
    if seqs == "trtllm-bench" then seqs = bs end
    if tokens == "trtllm-bench" then tokens = bt end
  end
  o.max_num_seqs, o.max_num_batched_tokens = seqs, tokens
  -- a closed loop measured over a time window (genai-perf's, NIM's tool)
  -- gives no request count: its steady state, simulated with 10 rounds of
  -- max_concurrency requests (at least 100), so that the first wave's
  -- common start and the last one's tail weigh a tenth at most
  o.requests = r.requests or math.max(100, 10 * r.max_concurrency)
  o.prompt, o.seed = r.prompt, 1
  o.rate, o.max_concurrency = r.rate, r.max_concurrency
  if r.notes and r.notes:find("^sharegpt:") then
    -- vLLM's client on ShareGPT (README.md, `sharegpt:`): prompt and output
    -- are the run's means; both lengths drawn from kv.workload.sharegpt,
    -- the source's shape scaled to them (stdlib/kvplan/workload.lua)
    local w = kv.workload.sharegpt{prompt_mean = r.prompt, output_mean = r.output}
    o.prompt, o.output = w.prompt, w.output
  elseif r.output_stop == "eos" then
    local lengths, why = eos_lengths(r.measured.output_tok_s / r.measured_requests_s, r.output)
    if lengths == nil then return nil, why end
    o.output = lengths
  else
    o.output = r.output
  end
  return o
end

--- Row r predicted: r.sim (kv.simulate's result) and r.predicted, or
--- r.skipped (why).
function M.predict(r)
  local o, why = M.options(r)
  if o == nil then r.skipped = why return r end
  local ok, s = pcall(kv.simulate, o)
  if not ok then r.skipped = first_line(s) return r end
  r.sim, r.predicted, r.err = s, {}, {}
  for _, f in ipairs(M.figures) do
    local p, m = f[3](s), r.measured[f[1]]
    r.predicted[f[1]] = p
    if m ~= nil then
      r.err[f[1]] = 100 * (p - m) / m
    end
  end
  return r
end

-- ---- statistics --------------------------------------------------------------

--- The q-quantile of v (sorted in place), linear between order statistics
--- (numpy's default, as the simulator's percentiles).
function M.quantile(v, q)
  table.sort(v)
  local n = #v
  if n == 0 then return nil end
  local h = (n - 1) * q + 1
  local lo = math.floor(h)
  local hi = math.min(lo + 1, n)
  return v[lo] + (h - lo) * (v[hi] - v[lo])
end

--- {n, median, p90, optimistic} of figure f over rows (simulated ones
--- measuring it).
function M.stats(rows, f)
  local abs, opt = {}, 0
  for _, r in ipairs(rows) do
    local e = r.err and r.err[f[1]]
    if e ~= nil then
      abs[#abs + 1] = math.abs(e)
      if (f[4] and e > 0) or (not f[4] and e < 0) then opt = opt + 1 end
    end
  end
  if #abs == 0 then return nil end
  return {n = #abs, median = M.quantile(abs, 0.5), p90 = M.quantile(abs, 0.9), optimistic = opt}
end

--- The groups of the summary: {split, label, rows}, dev and heldout whole,
--- then the held-out rows by class, engine and GPU (sorted).
function M.groups(rows)
  local by = {dev = {}, heldout = {}}
  for _, r in ipairs(rows) do
    if r.sim then table.insert(by[r.split], r) end
  end
  local out = {{"dev", "all", by.dev}, {"heldout", "all", by.heldout}}
  for _, key in ipairs{"class", "engine", "gpu"} do
    local parts, names = {}, {}
    for _, r in ipairs(by.heldout) do
      local v = r[key]
      if parts[v] == nil then parts[v] = {} names[#names + 1] = v end
      table.insert(parts[v], r)
    end
    table.sort(names)
    for _, v in ipairs(names) do out[#out + 1] = {"heldout", key .. "=" .. v, parts[v]} end
  end
  return out
end

--- The summary's line for figure f of a group (one format, also the docs').
function M.line(split, label, f, st)
  if st == nil then return string.format("%-7s %-20s %-12s no rows", split, label, f[1]) end
  return string.format("%-7s %-20s %-12s n=%-3d  median %5.1f %%  p90 %5.1f %%  "
                       .. "optimistic %d/%d (%.0f %%)", split, label, f[1], st.n, st.median, st.p90,
                       st.optimistic, st.n, 100 * st.optimistic / st.n)
end

--- The lines of the groups whose split and label pass keep(split, label).
function M.lines(rows, keep)
  local out = {}
  for _, g in ipairs(M.groups(rows)) do
    if keep(g[1], g[2]) then
      local any = false
      for _, f in ipairs(M.figures) do
        local st = M.stats(g[3], f)
        if st then out[#out + 1] = M.line(g[1], g[2], f, st) any = true end
      end
      if not any then out[#out + 1] = M.line(g[1], g[2], {"rows"}, nil) end
    end
  end
  return out
end

--- One line counting the rows, sources and skips of each split.
function M.corpus_line(rows)
  local n, src, sim = {dev = 0, heldout = 0}, {dev = {}, heldout = {}}, {dev = 0, heldout = 0}
  local nsrc = {dev = 0, heldout = 0}
  for _, r in ipairs(rows) do
    n[r.split] = n[r.split] + 1
    if not src[r.split][r.source_id] then
      src[r.split][r.source_id] = true
      nsrc[r.split] = nsrc[r.split] + 1
    end
    if r.sim then sim[r.split] = sim[r.split] + 1 end
  end
  return string.format("heldout: %d rows from %d sources, %d simulated, %d skipped; "
                       .. "dev: %d rows from %d sources, %d simulated, %d skipped",
                       n.heldout, nsrc.heldout, sim.heldout, n.heldout - sim.heldout,
                       n.dev, nsrc.dev, sim.dev, n.dev - sim.dev)
end

--- summary.txt: the corpus line, every group's lines, the skipped rows.
function M.summary(rows)
  local out = {"# tests/validation/throughput/summary.txt, written by run.lua: |error| of each "
               .. "figure in percent of the measurement (median, p90), and the rows whose "
               .. "prediction is faster than the measurement (optimistic)",
               M.corpus_line(rows), ""}
  for _, l in ipairs(M.lines(rows, function() return true end)) do out[#out + 1] = l end
  local skipped = {}
  for _, r in ipairs(rows) do
    if r.skipped then skipped[#skipped + 1] = string.format("%s (%s): %s", r.id, r.split, r.skipped) end
  end
  table.sort(skipped)
  out[#out + 1] = ""
  out[#out + 1] = string.format("skipped: %d", #skipped)
  for _, s in ipairs(skipped) do out[#out + 1] = "  " .. s end
  -- the rows without a release, by source: the release of their date, or
  -- why they stay on the newest (README.md, "A row without a release")
  local notes, order = {}, {}
  for _, r in ipairs(rows) do
    if r.release_note then
      local k = string.format("%s (%s): %s", r.source_id, r.split, r.release_note)
      if not notes[k] then notes[k] = 0; order[#order + 1] = k end
      notes[k] = notes[k] + 1
    end
  end
  table.sort(order)
  out[#out + 1] = ""
  out[#out + 1] = "without a release, the release of the source's date:"
  for _, k in ipairs(order) do out[#out + 1] = string.format("  %s, %d rows", k, notes[k]) end
  return table.concat(out, "\n") .. "\n"
end

-- ---- the ratchet ---------------------------------------------------------------

M.ratchet_header = "split,figure,n,median_abs_pct,p90_abs_pct"

--- The figures the ratchet holds: {split, figure, n, median, p90} for the
--- rows simulated of each split ("rows") and each figure measured there.
function M.ratchet_figures(rows)
  local out = {}
  for _, g in ipairs(M.groups(rows)) do
    if g[2] == "all" then
      out[#out + 1] = {g[1], "rows", #g[3]}
      for _, f in ipairs(M.figures) do
        local st = M.stats(g[3], f)
        if st then out[#out + 1] = {g[1], f[1], st.n, st.median, st.p90} end
      end
    end
  end
  return out
end

--- ratchet.csv's text for figures.
function M.ratchet_text(figs)
  local out = {M.ratchet_header}
  for _, t in ipairs(figs) do
    out[#out + 1] = t[4] and string.format("%s,%s,%d,%.2f,%.2f", t[1], t[2], t[3], t[4], t[5])
                    or string.format("%s,%s,%d,,", t[1], t[2], t[3])
  end
  return table.concat(out, "\n") .. "\n"
end

--- ratchet.csv read: {split, figure, n, median, p90} rows.
function M.read_ratchet(path)
  local t, lines = csv.read(path)
  if t == nil then error(lines, 0) end
  if table.concat(t[1] or {}, ",") ~= M.ratchet_header then
    error(string.format("%s:1: the header must be %s", path, M.ratchet_header), 0)
  end
  local out = {}
  for i = 2, #t do
    local c = t[i]
    local n = math.tointeger(tonumber(c[3]))
    if n == nil then error(string.format("%s:%d: column 'n': a count, got '%s'", path, lines[i], c[3]), 0) end
    out[#out + 1] = {c[1], c[2], n, tonumber(c[4]), tonumber(c[5])}
  end
  return out
end

M.tolerance = 0.05 -- percentage points a median or p90 may get worse by

--- The current figures against the ratchet's: a list of failures (a
--- figure worse by more than the tolerance, a count that dropped, a figure
--- on one side only) and whether any figure got better.
function M.compare(figs, ratchet)
  local now, failures, better = {}, {}, false
  for _, t in ipairs(figs) do now[t[1] .. " " .. t[2]] = t end
  local held = {}
  for _, t in ipairs(ratchet) do
    local key = t[1] .. " " .. t[2]
    held[key] = true
    local c = now[key]
    if c == nil then
      failures[#failures + 1] = string.format("%s: %d rows in ratchet.csv, none now (rows lost)", key, t[3])
    else
      if c[3] < t[3] then
        failures[#failures + 1] = string.format("%s: %d rows, ratchet.csv %d (rows lost)", key, c[3], t[3])
      elseif c[3] > t[3] then
        better = true
      end
      for j, what in pairs{[4] = "median", [5] = "p90"} do
        if t[j] ~= nil and c[j] ~= nil then
          if c[j] > t[j] + M.tolerance then
            failures[#failures + 1] = string.format("%s: %s |error| %.2f %%, ratchet.csv %.2f %% (worse)",
                                                    key, what, c[j], t[j])
          elseif c[j] < t[j] - M.tolerance then
            better = true
          end
        end
      end
    end
  end
  for _, t in ipairs(figs) do
    local key = t[1] .. " " .. t[2]
    if not held[key] then
      failures[#failures + 1] = string.format("%s: %d rows now, not in ratchet.csv", key, t[3])
    end
  end
  table.sort(failures)
  return failures, better
end

-- ---- the docs' generated blocks --------------------------------------------

M.begin_mark = "<!-- generated by tests/validation/throughput/run.lua ratchet=update: do not edit -->"
M.end_mark = "<!-- end of the generated figures -->"

--- The generated block of README.md (held-out whole and by class, dev
--- whole) or docs/time.md (also the held-out part by engine and GPU).
function M.block(rows, which)
  local keep
  if which == "readme" then
    keep = function(split, label) return label == "all" or label:match("^class=") end
  else
    keep = function() return true end
  end
  local lines = {M.corpus_line(rows), ""}
  -- held-out first: the part never used to derive or check a constant
  local held, dev = {}, {}
  for _, l in ipairs(M.lines(rows, keep)) do
    if l:match("^heldout") then held[#held + 1] = l else dev[#dev + 1] = l end
  end
  for _, l in ipairs(held) do lines[#lines + 1] = l end
  for _, l in ipairs(dev) do lines[#lines + 1] = l end
  return M.begin_mark .. "\n```text\n" .. table.concat(lines, "\n") .. "\n```\n" .. M.end_mark
end

local function slurp(path)
  local f, err = io.open(path, "rb")
  if not f then error(err, 0) end
  local s = f:read("a")
  f:close()
  return s
end

--- The generated block of the text doc, or nil and why.
function M.find_block(doc)
  local a = doc:find(M.begin_mark, 1, true)
  if a == nil then return nil, "no line '" .. M.begin_mark .. "'" end
  local b = doc:find(M.end_mark, a, true)
  if b == nil then return nil, "no line '" .. M.end_mark .. "' after the block's first" end
  return a, b + #M.end_mark - 1
end

M.docs = {{"README.md", "readme"}, {"docs/time.md", "time"}}

--- The docs whose generated block is not the run's: a list of failures.
function M.check_docs(rows)
  local failures = {}
  for _, d in ipairs(M.docs) do
    local doc = slurp(d[1])
    local a, b = M.find_block(doc)
    if a == nil then
      failures[#failures + 1] = d[1] .. ": " .. b
    elseif doc:sub(a, b) ~= M.block(rows, d[2]) then
      local want, have, before = {}, {}, #failures
      for l in M.block(rows, d[2]):gmatch("[^\n]+") do want[l] = true end
      for l in doc:sub(a, b):gmatch("[^\n]+") do have[l] = true end
      for l in M.block(rows, d[2]):gmatch("[^\n]+") do
        if not have[l] then failures[#failures + 1] = d[1] .. " lacks the run's: " .. l end
      end
      for l in doc:sub(a, b):gmatch("[^\n]+") do
        if not want[l] then failures[#failures + 1] = d[1] .. " states, not the run: " .. l end
      end
      if #failures == before then
        failures[#failures + 1] = d[1] .. ": the block's lines are not in the run's order"
      end
    end
  end
  return failures
end

local function write(path, text)
  local f <close> = csv.atomic(path)
  f:write(text)
  f:commit()
end

-- ---- the run ---------------------------------------------------------------------

local REPORT = {"id", "source_id", "split", "class", "engine", "gpu", "model", "tp", "prompt",
                "output", "requests", "max_num_seqs", "max_num_batched_tokens", "preemptions"}
for _, f in ipairs(M.figures) do
  local p = f[1] == "output_tok_s" and 1 or 2
  REPORT[#REPORT + 1] = "measured_" .. f[1]
  REPORT[#REPORT + 1] = {"predicted_" .. f[1], precision = p}
  REPORT[#REPORT + 1] = {"err_" .. f[1] .. "_pct", precision = 1}
end
REPORT[#REPORT + 1] = "skipped"

--- results.csv written to path: one row per corpus row.
function M.results(rows, path)
  local rep = kv.report{path = path, columns = REPORT}
  for _, r in ipairs(rows) do
    local t = {id = r.id, source_id = r.source_id, split = r.split, class = r.class, engine = r.engine,
               gpu = r.gpu, model = r.model, tp = r.tp, prompt = r.prompt, output = r.output,
               requests = r.sim and r.sim.requests or r.requests or "", max_num_seqs = "", max_num_batched_tokens = "",
               preemptions = "", skipped = r.skipped or ""}
    if r.sim then
      t.max_num_seqs, t.max_num_batched_tokens = r.sim.max_num_seqs, r.sim.max_num_batched_tokens
      t.preemptions = r.sim.num_preemptions
    end
    for _, f in ipairs(M.figures) do
      local m = r.measured[f[1]]
      t["measured_" .. f[1]] = m or ""
      t["predicted_" .. f[1]] = r.predicted and r.predicted[f[1]] or ""
      t["err_" .. f[1] .. "_pct"] = r.err and r.err[f[1]] or ""
    end
    rep:row(t)
  end
  rep:close()
end

local rows = M.read(args.dir)
local clock = os.clock()
for _, r in ipairs(rows) do
  local t0 = os.clock()
  M.predict(r)
  if args.timing then io.stderr:write(string.format("%6.2f s %s\n", os.clock() - t0, r.id)) end
  if r.skipped then io.stderr:write(string.format("skipped %s (%s:%d): %s\n", r.id, r.file, r.line, r.skipped)) end
end
M.rows = rows
M.text = M.summary(rows)

local ratchet_path = args.dir .. "/ratchet.csv"
if args.ratchet == "update" then
  M.results(rows, args.dir .. "/results.csv")
  write(args.dir .. "/summary.txt", M.text)
  write(ratchet_path, M.ratchet_text(M.ratchet_figures(rows)))
  for _, d in ipairs(M.docs) do
    local doc = slurp(d[1])
    local a, b = M.find_block(doc)
    if a == nil then error(d[1] .. ": " .. b, 0) end
    write(d[1], doc:sub(1, a - 1) .. M.block(rows, d[2]) .. doc:sub(b + 1))
  end
end
if args.out ~= "" then
  M.results(rows, args.out .. "/results.csv")
  write(args.out .. "/summary.txt", M.text)
end
io.stdout:write(M.text)
if args.ratchet == "check" then
  local failures, better = M.compare(M.ratchet_figures(rows), M.read_ratchet(ratchet_path))
  for _, f in ipairs(M.check_docs(rows)) do failures[#failures + 1] = f end
  if better then
    io.stdout:write("figures better than ratchet.csv; its new text, to paste after checking:\n",
                    M.ratchet_text(M.ratchet_figures(rows)))
  end
  if #failures > 0 then
    for _, f in ipairs(failures) do io.stderr:write(f, "\n") end
    error(string.format("%d throughput figures differ from ratchet.csv or the docs (above); after "
                        .. "reading them, re-baseline with: build/kvplan "
                        .. "tests/validation/throughput/run.lua ratchet=update", #failures), 0)
  end
end
return M
