-- scripts/fit.lua: which GPUs, and at which tensor parallelism, hold a model
-- at a context length and a number of concurrent requests; for each that does
-- not, the limiting term and why.
--
-- Run:  kvplan fit model=llama-3.1-70b context=32768 concurrency=16
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
--   concurrency  requests running at once, each of `context` tokens (default 1)
--   gpus         GPU ids or aliases (default: every catalogued GPU)
--   tp           tensor-parallel sizes to try (default 1,2,4,8)
--   pp           pipeline-parallel stages (default 1)
--   kv           KV cache format (default auto: the model's activation dtype,
--                as vLLM's kv_cache_dtype=auto; or bf16, fp8, ...)
--   weights      weight format (default native: the checkpoint's own dtype
--                or recorded size; or bf16, fp8, int4-g128, ...)
--   utilization  fraction of the GPU memory the engine may use (default: the
--                engine's: vLLM's gpu_memory_utilization (0.92 in
--                its newest release, 0.9 before 0.20), TensorRT-LLM's 0.9;
--                SGLang's mem_fraction_static by tp and GPU)
--   activation   activation peak per GPU (default predicted: vLLM's profiling
--                run for this model, GPU and tp, stdlib/kvplan/engines.lua)
--   overhead     non-torch memory per GPU: CUDA context, NCCL (default
--                predicted, as kv.deploy does)
--   time         yes: add the step times of `concurrency` requests at
--                `context` tokens (tpot_ms, ttft_ms, tokens_per_s, bound,
--                kv_read_share, usd_per_mtok; see scripts/ledger.lua)
--   price_per_hour  USD per GPU hour for usd_per_mtok (default 0: the GPU
--                catalog's price where it has one); a price turns time on
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
-- Output: one CSV row per GPU and TP, in the order given:
--   model, gpu, tp, weights, kv, context, concurrency,
--   fits             true when `concurrency` requests of `context` tokens fit
--   limit            the limiting term: none, weights, reserved, no_block,
--                    kv, context, tp_heads, tp_kv_heads, pp_layers, starts
--                    (vLLM would refuse to start: max_model_len does not fit
--                    its KV cache)
--   max_concurrency  requests of `context` tokens that fit (0: none)
--   max_context      longest context for `concurrency` requests (0: none)
--   weights_gib_per_gpu    weights on one GPU
--   kv_budget_gib_per_gpu  memory one GPU leaves for the KV cache
--   why              the reason in words, empty when it fits

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-70b", context = 0, concurrency = kv.options.at_least(1, 1), gpus = {}, tp = {1, 2, 4, 8}, pp = 1,
  kv = "auto", weights = "native", activation = "predicted",
  overhead = "predicted", time = false, price_per_hour = 0,
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
local with_time = opt.time or opt.price_per_hour > 0
local model = kv.model(opt.model)
local context = opt.context > 0 and opt.context
                or kv.options.length(opt.max_model_len)
                or model.max_context
local list = #opt.gpus > 0 and opt.gpus or kv.gpus.all()
if #opt.tp == 0 then kv.util.raise("argument 'tp' needs at least one size, e.g. tp=1,2,4,8") end

-- an HTML page (-f html) answers the question by the swept axis, when there
-- is one: the requests of `context` tokens each GPU and tp holds at once, as
-- bars (a GPU a group, a bar a tp; or a bar a tp of one GPU, a GPU of one tp)
local chart
if #list > 1 or #opt.tp > 1 then
  local by_tp = #list > 1 and #opt.tp > 1
  chart = {x = #list > 1 and "gpu" or "tp", by = by_tp and "tp" or nil, y = "max_concurrency", kind = "bar",
           ylabel = "max concurrency (requests)",
           title = string.format("requests of %s tokens held at once (%d asked)", kv.util.fmt_num(context),
                                 opt.concurrency),
           data = function(r)
             return {gpu = r.gpu, tp = "tp " .. tostring(r.tp), max_concurrency = r.max_concurrency}
           end}
end

-- one sweep: GPU x tp, each checked before the first row (kv.sweep)
local columns = {
  "model", "gpu", "tp", "weights", "kv", "context", "concurrency", "fits", "limit",
  "max_concurrency", "max_context", {"weights_gib_per_gpu", precision = 2},
  {"kv_budget_gib_per_gpu", precision = 2}, "why",
}
if with_time then
  for _, c in ipairs(kv.report.time_columns) do columns[#columns + 1] = c end
end
-- a value refused only once computed with (price_per_hour=1e308: usd_per_mtok
-- past the largest double) is its argument's usage error (kv.options.as_usage)
kv.options.as_usage(opt, function() return kv.sweep{
  model = model, gpu = list, tp = opt.tp, context = context, concurrency = opt.concurrency,
  base = kv.options.given_fields(opt, fields, {
    pp = opt.pp, kv = opt.kv, weights = opt.weights ~= "native" and opt.weights or nil,
    activation = opt.activation ~= "predicted" and opt.activation or nil,
    overhead = opt.overhead ~= "predicted" and opt.overhead or nil,
    price_per_hour = opt.price_per_hour > 0 and opt.price_per_hour or nil,
  }),
  columns = columns,
}:write{chart = chart} end)
