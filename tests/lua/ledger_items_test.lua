-- tests/lua/ledger_items_test.lua: kvplan ledger's items (report.ledger_items)
-- add up to the GPU's memory under every engine's budget rule (kv_short,
-- which is not there, aside), and their notes name the engine whose rule
-- made them: vLLM's profiling run and gpu_memory_utilization, SGLang's
-- mem_fraction_static reserve (its activations and CUDA graphs,
-- docs/predictions.md), TensorRT-LLM's free_gpu_memory_fraction of the
-- memory free after loading (docs/optimizations.md, budget "trtllm").
local kv = require "kvplan"
local check = require "check"

local function items(o)
  local d = kv.deploy(o)
  local by, sum = {}, 0
  for _, it in ipairs(kv.report.ledger_items(d, 32768, 1)) do
    by[it.item] = it
    if it.item ~= "kv_short" then sum = sum + it.bytes end
  end
  return d, by, sum
end

for _, e in ipairs{"vllm", "sglang", "trtllm"} do
  local d, by, sum = items{model = "llama-3.1-8b", gpu = "h100-sxm", engine = e, max_model_len = 32768}
  local l = d:ledger()
  assert(math.abs(sum - l.total) <= 1, string.format("%s: items add up to %d, the GPU is %d (%.2f GiB apart)",
                                                     e, sum, l.total, (l.total - sum) / 2^30))
  check.eq(by.kv_short.bytes, 0, e .. " fits")
  if e ~= "vllm" then
    assert(not by.activation.note:find("vLLM", 1, true), e .. ": activation note " .. by.activation.note)
    assert(not by.margin.note:find("utilization", 1, true), e .. ": margin note " .. by.margin.note)
  end
end

-- TensorRT-LLM: the margin is the tenth of the free memory its default 0.9 leaves
local d, by = items{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "trtllm", max_model_len = 32768}
local l = d:ledger()
local free = l.total - l.weights - l.activation - l.overhead
assert(math.abs(by.margin.bytes - (free - l.kv_budget)) <= 1, "trtllm margin")
assert(math.abs(l.kv_budget - 0.9 * free) < 2^20 * 64, "0.9 of the free memory (whole blocks)")
assert(by.margin.note:find("free_gpu_memory_fraction 0.90", 1, true), by.margin.note)
print("ledger_items_test: ok")

-- vLLM's CUDA-graph estimate (engines.lua cudagraph_estimate, from the 0.20
-- row): measured by the engine, not modelled; the margin says the KV budget
-- is high by it, for V1 with CUDA graphs alone
do
  local base = {model = "llama-3.1-8b", gpu = "h100-sxm", engine = "vllm", max_model_len = 32768}
  local function margin(extra)
    local o = {}
    for k, v in pairs(base) do o[k] = v end
    for k, v in pairs(extra) do o[k] = v end
    local _, by = items(o)
    return by.margin.note
  end
  local said = "also takes its CUDA graphs' measured estimate off the KV budget"
  check.eq(margin{engine_version = "0.20"}:find(said, 1, true) ~= nil, true, "0.20: the margin says it")
  check.eq(margin{engine_version = "0.29"}:find("vLLM 0.29 " .. said, 1, true) ~= nil, true, "0.29 too")
  check.eq(margin{engine_version = "0.14"}:find(said, 1, true), nil, "0.14: no estimate")
  check.eq(margin{engine_version = "0.11"}:find(said, 1, true), nil, "0.11: none")
  check.eq(margin{}:find(said, 1, true) ~= nil, true, "no release (the newest modelled): the margin says it")
  check.eq(margin{engine_version = "0.21", enforce_eager = true}:find(said, 1, true), nil,
           "enforce_eager: no CUDA graphs, no estimate")
end
