-- scripts/ledger.lua: where the memory of a deployment goes, per GPU: the
-- weights, the KV cache the requests take and what is left of it, the
-- activation peak, the non-torch overhead and the margin the engine holds
-- back (1 - utilization), each in GiB and as a share of the GPU. With
-- lists, one ledger a deployment (GPU x tp x pp x weights x KV format), in
-- the long form a stacked bar chart wants:
--   kvplan ledger model=llama-3.1-70b gpu=h100-sxm,h200 tp=4,8 -o ledger.csv
--   kvplan plot ledger.csv x=deployment y=gib_per_gpu by=item kind=stacked -o ledger.png
--
-- Run:  kvplan ledger model=llama-3.1-70b gpu=h100-sxm tp=4 pp=3 kv=bf16 context=32k concurrency=64
--
-- Arguments (key=value; lists are comma-separated):
--   model        catalog id or alias (required; `kvplan models` lists them),
--                else a Hugging Face directory or config.json, else a repo
--                id ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE,
--                $HF_HOME/hub, ~/.cache/huggingface/hub; no network)
--   revision     with a repo id: the cache's snapshot of this branch, tag or
--                commit (default: the one refs/main names)
--   gpu          GPU ids or aliases (required; `kvplan gpus` lists them)
--   tp, pp       tensor-parallel sizes and pipeline stages (default 1)
--   weights      weight formats (default native: the checkpoint's own)
--   kv           KV cache formats (default auto: the model's activation dtype)
--   context      tokens per request (default 0: max_model_len when given, else
--                the model's max_context)
--   concurrency  requests of `context` tokens at once (default 1)
--   utilization  fraction of the GPU the engine may use (default: the
--                engine's: vLLM's gpu_memory_utilization (0.92 in
--                its newest release, 0.9 before 0.20), TensorRT-LLM's 0.9;
--                SGLang's mem_fraction_static by tp and GPU)
--   activation, overhead   per GPU, e.g. 2.3GiB (default: predicted, as
--                kv.deploy does; read measured values from vLLM's startup log)
--   system_memory  per GPU, memory others hold on it at startup: the OS on
--                unified memory (DGX Spark), other processes (default 0;
--                each engine's budget sees it as its code does)
--   time         yes: add the step times of `concurrency` requests at
--                `context` tokens to every row (default no; see below)
--   price_per_hour  USD per GPU hour for usd_per_mtok (default 0: the GPU
--                catalog's price where it has one); a price turns time on
--   range        yes: with the step times, their ranges tokens_per_s_lo/hi,
--                tpot_ms_lo/hi, ttft_ms_lo/hi (d:time: every factor at the
--                slow and the fast end of its uncertainty; default no)
--   profile      a profile of `kvplan calibrate` (every command takes it; '-':
--                standard input)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (max_model_len, max_num_seqs,
--                max_num_batched_tokens, engine, engine_version, budget,
--                block, prefix, ...: max-model-len and
--                gpu-memory-utilization as vLLM spells them), checked as that
--                field; gpu and gpus stand for each other
--
-- Output: one row an item of each deployment, for one GPU of the tightest
-- pipeline stage (the one that decides):
--   deployment   "GPU tp T x pp P, weights W, kv K"
--   model, gpu, tp, pp, weights, kv, context, concurrency,
--   item         weights, kv_used (the requests' KV in whole blocks), kv_free
--                (the rest of the KV budget), activation, overhead (non-torch
--                memory), system (system_memory, when given or the GPU's
--                memory is unified), margin (held back by utilization, less
--                what system holds in it), kv_short (KV the
--                requests need beyond the budget; 0 when they fit)
--   gib_per_gpu  the item's GiB on one GPU; share_pct  its share of the GPU
--   note         where the number comes from; kv_short's is the verdict
--                (as kvplan fit): fits, why not, or the engine's refusal to start
-- The items add up to the GPU's memory (kv_short, which is not there, aside).
-- With time=yes, per deployment (the same on each of its rows; docs/time.md
-- "Step times and the serving simulator" has the formulas and the efficiency factors):
--   tpot_ms      time per output token of one decode step of `concurrency`
--                sequences at `context` tokens
--   ttft_ms      prefill of `context` tokens as one prompt
--   tokens_per_s output tokens a second of the GPU group at that batch
--   bound        memory or compute (the decode step's roofline)
--   kv_read_share  fraction of the decode step's bytes that are KV
--   usd_per_mtok price x GPUs / tokens_per_s, per million tokens ("" without
--                a price)

local kv = require "kvplan"

local defaults = {
  model = kv.options.required "model=llama-3.1-70b", gpu = {kv.options.required "gpu=h100-sxm"},
  tp = {1}, pp = {1}, weights = {"native"}, kv = {"auto"}, context = 0, concurrency = kv.options.at_least(1, 1),
  activation = "predicted", overhead = "predicted", time = false,
  price_per_hour = 0, range = false,
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
local given = kv.options.given_fields(opt, fields)
local with_time = opt.time or opt.price_per_hour > 0
local model = kv.model(opt.model)
local context = opt.context > 0 and opt.context
                or kv.options.length(opt.max_model_len)
                or model.max_context
local GiB = kv.units.GiB

local range_names = {"tokens_per_s_lo", "tokens_per_s_hi", "tpot_ms_lo", "tpot_ms_hi", "ttft_ms_lo",
                     "ttft_ms_hi"}
local rows = {}
-- a value refused only once computed with (price_per_hour=1e308: usd_per_mtok
-- past the largest double) is its argument's usage error (kv.options.as_usage)
kv.options.as_usage(opt, function()
  for _, g in ipairs(opt.gpu) do
    for _, tp in ipairs(opt.tp) do
      for _, pp in ipairs(opt.pp) do
        for _, wf in ipairs(opt.weights) do
          for _, kf in ipairs(opt.kv) do
            local o = {
              model = model, gpu = g, tp = tp, pp = pp, kv = kf,
              weights = wf ~= "native" and wf or nil,
              activation = opt.activation ~= "predicted" and opt.activation or nil,
              overhead = opt.overhead ~= "predicted" and opt.overhead or nil,
              price_per_hour = opt.price_per_hour > 0 and opt.price_per_hour or nil,
            }
            for k, v in pairs(given) do o[k] = v end
            local d = kv.deploy(o)
            local times = with_time and kv.report.time_fields(d, context, opt.concurrency) or {}
            if with_time and opt.range then
              local t = d:time(context, opt.concurrency)
              for _, k in ipairs(range_names) do times[k] = t[k] end
            end
            local l = d:ledger()
            local label = string.format("%s tp %d x pp %d, weights %s, kv %s", d.gpu.id, tp, pp,
                                        d.weights.name, d.kv.name)
            for _, it in ipairs(kv.report.ledger_items(d, context, opt.concurrency)) do
              local row = {
                deployment = label, model = model.id, gpu = d.gpu.id, tp = tp, pp = pp,
                weights = d.weights.name, kv = d.kv.name, context = context,
                concurrency = opt.concurrency, item = it.item, gib_per_gpu = it.bytes / GiB,
                share_pct = 100.0 * it.bytes / l.total, note = it.note, -- a float: 100 * bytes wrapped past 2^63
              }
              for k, v in pairs(times) do row[k] = v end
              rows[#rows + 1] = row
            end
          end
        end
      end
    end
  end
end)

local columns = {
  "deployment", "model", "gpu", "tp", "pp", "weights", "kv", "context", "concurrency", "item",
  {"gib_per_gpu", precision = 2}, {"share_pct", precision = 1}, "note",
}
if with_time then
  for _, c in ipairs(kv.report.time_columns) do columns[#columns + 1] = c end
  if opt.range then
    for _, k in ipairs(range_names) do columns[#columns + 1] = {k, precision = k:find("^tokens") and 1 or 3} end
  end
end
-- an HTML page (-f html) draws where each deployment's memory goes as stacked bars
local r = kv.report{columns = columns, chart = {x = "deployment", y = "gib_per_gpu", by = "item",
                                                 kind = "stacked", ylabel = "GiB per GPU",
                                                 title = "where one GPU's memory goes"}}
for _, row in ipairs(rows) do r:row(row) end
r:close()
