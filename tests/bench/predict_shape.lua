-- tests/bench/predict_shape.lua: shape (e) of `make bench`: vLLM's budget
-- with its reserves predicted, nothing given but the utilization: the
-- activation peak of the profiling run (V1's defaults: 8192 tokens and 1024
-- sequences on a GPU of >= 70 GiB that is not an A100, else 2048 and 256;
-- compiled, the PyTorch sort sampler), the non-torch memory by tp, over
-- dense models x GPUs x tp x `lens` max_model_len values, at context
-- max_model_len and concurrency 1 and 64: many deployments, few rows each,
-- every deployment axis looped in C (the core predicts again per deployment,
-- engine/core/predict.c kvp_predict_deploy).
-- Arguments: lens=N (max_model_len 2048, 4096, ... N * 2048), inputs=FILE
-- (write the facts the baselines read there and stop).
local kv = require "kvplan"
local engines = require "kvplan.engines"
local o = kv.options(..., {lens = 100, inputs = ""})

local models = {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
                "llama-3.3-70b", "mistral-nemo-12b", "qwen2.5-7b", "qwen2.5-72b", "command-r"}
local gpus = {}
for _, g in ipairs(kv.gpus.all()) do
  if g.memory_basis == "visible" then gpus[#gpus + 1] = g.id end
end
local lens = {}
for i = 1, o.lens do lens[i] = 2048 * i end

if o.inputs ~= "" then
  local f = assert(io.open(o.inputs, "w"))
  for _, id in ipairs(models) do
    local m = kv.model(id)
    -- the parameters every TP rank holds whole (the norms of these families)
    local r = m:replicated_params()
    f:write(string.format("model %s %d %d %d %d %d %d %d %d %d %d\n", m.id, m.layers, m.heads,
                          m.kv_heads, m.head_dim, m.params, m.max_context, m.hidden,
                          m.intermediate, m.vocab, r.attention.params + r.other))
  end
  for _, id in ipairs(gpus) do
    local g = kv.gpu(id)
    f:write(string.format("gpu %s %d %d %d %d\n", id, g.visible_bytes,
                          engines.names_a100(g.name or g.id) and 1 or 0,
                          engines.peer_to_peer(g) and 1 or 0, engines.cublas_workspace(g)))
  end
  -- the version's row and the non-torch constants (engines.lua)
  local row, version = engines.vllm_version()
  local nt = engines.non_torch
  f:write(string.format("version %d %d %d %d %d\n", row.v1 and 1 or 0, row.big_seqs,
                        row.nccl_counted and 1 or 0, row.context_counted and 1 or 0,
                        engines.vllm_sampler_hidden(row, version)))
  f:write(string.format("nontorch %.17g %.17g %.17g %.17g %.17g\n", nt.base.point,
                        nt.context.point, nt.nccl_connection, nt.nccl_channels.point,
                        nt.custom_ar))
  f:write("lens " .. table.concat(lens, " ") .. "\n")
  f:close()
  return
end

local no_rope = dofile("tests/bench/no_rope.lua")
local swept = {}
for i, id in ipairs(models) do swept[i] = no_rope(id) end
kv.sweep{model = swept, gpu = gpus, tp = {1, 2, 4, 8}, max_model_len = lens, concurrency = {1, 64},
         -- the PyTorch sort sampler given: the baseline's profiling run samples so
         -- (the default release samples with FlashInfer's, whose peak it lacks)
         base = {utilization = 0.9, flashinfer_sampler = false},
         columns = {"model", "gpu", "tp", "max_model_len", "concurrency", "activation_bytes",
                    "overhead_bytes", "kv_budget_gib", "max_concurrency", "fits"}}:write()
