-- scripts/capacity.lua: the KV token capacity and the maximum concurrency of
-- a model over GPUs, tensor-parallel sizes and KV cache formats: what vLLM
-- logs at startup as "GPU KV cache size: N tokens" and "Maximum concurrency
-- for L tokens per request: X".
--
-- Run:  kvplan capacity model=qwen3-32b context=32768 gpus=h100,l40s kv=bf16,fp8
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required; `kvplan models` lists them),
--                else a Hugging Face directory or config.json, else a repo
--                id ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE,
--                $HF_HOME/hub, ~/.cache/huggingface/hub; no network)
--   revision     with a repo id: the cache's snapshot of this branch, tag or
--                commit (default: the one refs/main names)
--   context      tokens per request (default 0: max_model_len when given, else
--                the model's max_context)
--   gpus         GPU ids or aliases (default: every catalogued GPU)
--   kv           KV cache formats (default auto,fp8; auto is the model's
--                activation dtype, as vLLM's kv_cache_dtype=auto)
--   tp           tensor-parallel sizes (default 1)
--   pp           pipeline-parallel stages (default 1)
--   weights      weight format (default native: the checkpoint's own dtype
--                or recorded size; or bf16, fp8, int4-g128, ...)
--   utilization  fraction of the GPU memory the engine may use (default vLLM's
--                gpu_memory_utilization of the release: 0.9, 0.92 from 0.20)
--   activation   activation peak per GPU (default predicted: vLLM's profiling
--                run for this model, GPU and tp, stdlib/kvplan/engines.lua)
--   overhead     non-torch memory per GPU: CUDA context, NCCL (default
--                predicted, as kv.deploy does)
--   block        tokens per KV cache block (default 16, vLLM's block_size)
--   engine       vllm: the engine itself, not only its memory rule: its
--                default max_num_seqs caps max_concurrency (limit
--                max_num_seqs) and its release's KV defaults apply
--                (default: none, the memory rule alone)
--   version      the vLLM release (engine_version: 0.10, 0.11, ...; implies
--                engine=vllm; default: the newest modelled, as latest)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (max_model_len, max_num_seqs,
--                max_num_batched_tokens, engine, engine_version, budget,
--                block, prefix, ...: max-model-len and
--                gpu-memory-utilization as vLLM spells them), checked as that
--                field; gpu and gpus stand for each other
-- Measured values from vLLM's startup log ("non_torch_memory takes X GiB;
-- PyTorch activation peak memory takes Y GiB") replace the predictions, e.g.
-- activation=2.3GiB.
--
-- Output: one CSV row per GPU, TP and KV format, in the order given:
--   model, gpu, tp, weights, kv,
--   kv_bytes_per_token_per_gpu  KV bytes one token adds on one GPU (all
--                       its layers)
--   weights_gib_per_gpu    weights on one GPU
--   kv_budget_gib_per_gpu  memory one GPU leaves for the KV cache
--   kv_tokens           tokens the KV cache holds (whole blocks, the null
--                       block set aside; 0 when the model does not fit)
--   context, max_concurrency  requests of `context` tokens that fit at once
--   limit               none when one request fits, else what stops it
--                       (weights, reserved, no_block, context, kv, tp_heads, ...),
--                       or max_num_seqs when vLLM's scheduler caps the answer,
--                       or starts when the engine would refuse to start (vLLM:
--                       one request of max_model_len does not fit its KV cache;
--                       max_concurrency is still what the KV cache holds,
--                       capped by max_num_seqs)
--   why                 the reason in words, empty when one request fits

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-8b", context = 0, gpus = {}, kv = {"auto", "fp8"}, tp = {1}, pp = 1,
  weights = "native", activation = "predicted", overhead = "predicted", block = 16,
  engine = "", version = "",
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
if opt.version ~= "" and opt.engine_version ~= "" then
  kv.options.bad("arguments 'version' and 'engine_version' are the same option: give one")
end
if opt.engine ~= "" and opt.engine ~= "vllm" then
  kv.options.bad("argument 'engine' must be 'vllm' (or absent: the memory rule alone), got '%s' "
                 .. "(capacity's columns are vLLM's startup figures; kvplan fit, ledger and best take "
                 .. "engine=sglang and engine=trtllm)", kv.util.escape(opt.engine))
end
local model = kv.model(opt.model)
local context = opt.context > 0 and opt.context
                or kv.options.length(opt.max_model_len)
                or model.max_context
local list = #opt.gpus > 0 and opt.gpus or kv.gpus.all()
if #opt.kv == 0 then kv.util.raise("argument 'kv' needs at least one format, e.g. kv=bf16,fp8") end
if #opt.tp == 0 then kv.util.raise("argument 'tp' needs at least one size, e.g. tp=1,2") end

-- one sweep: GPU x tp x KV format in C, its rows kept so that a bad name or
-- format fails before any output (kv.sweep each)
local rows, kvs = {}, {}
for i, f in ipairs(opt.kv) do kvs[i] = f == "auto" and model:auto_kv_format().name or f end
kv.sweep{
  model = model, gpu = list, tp = opt.tp, kv = kvs, context = context,
  base = kv.options.given_fields(opt, fields, {
    pp = opt.pp, weights = opt.weights ~= "native" and opt.weights or nil,
    activation = opt.activation ~= "predicted" and opt.activation or nil,
    overhead = opt.overhead ~= "predicted" and opt.overhead or nil,
    block = opt.block, engine = opt.engine ~= "" and opt.engine or nil,
    engine_version = opt.version ~= "" and opt.version or nil,
  }),
  columns = {"max_concurrency"},
}:each(function(l)
  -- the limit and why of max_concurrency (l:max_concurrency: starts where the
  -- engine refuses to start, the count still the KV cache's)
  rows[#rows + 1] = {
    model = model.id, gpu = l.gpu, tp = l.tp, weights = l.weights, kv = l.kv,
    kv_bytes_per_token_per_gpu = l.kv_bytes_per_token,
    weights_gib_per_gpu = kv.units.gib(l.weights_bytes), kv_budget_gib_per_gpu = kv.units.gib(l.kv_budget_bytes),
    kv_tokens = l.kv_tokens, context = context, max_concurrency = l.max_concurrency,
    limit = l.max_concurrency_limit, why = l.max_concurrency_why,
  }
end)

-- an HTML page (-f html) draws the maximum concurrency of each GPU and tp as bars, a series a KV format
local bars = {}
for _, row in ipairs(rows) do
  bars[#bars + 1] = {deployment = string.format("%s tp %d", row.gpu, row.tp), kv = row.kv,
                     max_concurrency = row.max_concurrency}
end
local r = kv.report{columns = {
  "model", "gpu", "tp", "weights", "kv", "kv_bytes_per_token_per_gpu", {"weights_gib_per_gpu", precision = 2},
  {"kv_budget_gib_per_gpu", precision = 2}, "kv_tokens", "context", "max_concurrency", "limit", "why",
}, chart = {data = bars, x = "deployment", y = "max_concurrency", by = "kv", kind = "bar",
            ylabel = "max concurrency (requests)",
            title = string.format("requests of %s tokens held at once",
                                  kv.util.fmt_num(context))}}
for _, row in ipairs(rows) do r:row(row) end
r:close()
