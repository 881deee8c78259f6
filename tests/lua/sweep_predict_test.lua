-- tests/lua/sweep_predict_test.lua: a sweep whose activation peak, non-torch
-- memory and vLLM's default max_num_seqs are predicted keeps the GPU,
-- max_model_len, max_num_batched_tokens, max_num_seqs and tp as C axes (the
-- core predicts them again, engine/core/predict.c kvp_predict_deploy), and
-- each of its rows says what kv.deploy's ledger of that deployment says.
local kv = require "kvplan"
local check = require "check"

local dir = check.tmpdir()

-- The sweep written, then each of its rows against the same deployment
-- built alone by kv.deploy: every answer column equals what that
-- deployment's ledger says (the rows follow the axes in their order: model,
-- gpu, the other options given as lists sorted by name, then tp, pp, kv,
-- weights, context, concurrency; the last varies fastest). This tests the
-- sweep's axis handling: which values reach the core, and that the core's
-- predictions per deployment are kv.deploy's.
local answers = {
  gpu_bytes = function(l) return l.total end, usable_bytes = function(l) return l.usable end,
  weights_bytes = function(l) return l.weights end,
  activation_bytes = function(l) return l.activation end,
  overhead_bytes = function(l) return l.overhead end,
  kv_budget_bytes = function(l) return l.kv_budget end, kv_tokens = function(l) return l.kv_tokens end,
  max_concurrency = function(l, ctx) return l:max_concurrency(ctx) end,
  max_context = function(l, _, conc) return l:max_context(conc) end,
  fits = function(l, ctx, conc) return (l:fit(ctx, conc)) end,
  limit = function(l, ctx, conc) return select(3, l:fit(ctx, conc)) end,
}
local not_options = {columns = true, base = true, model = true, gpu = true, tp = true, pp = true,
                     kv = true, weights = true, context = true, concurrency = true}
local function list(v)
  if type(v) == "table" and v[1] ~= nil then return v end
  return {v}
end
local function both_ways(spec, what)
  local path = dir .. "/sweep.csv"
  local s = kv.sweep(spec)
  local n = s:write(path)
  local rows = kv.csv.read(path)
  check.eq(n, #rows - 1, what .. ": rows written")
  local head = rows[1]
  local axes = {}
  local function add(k) if spec[k] ~= nil then axes[#axes + 1] = {k, list(spec[k])} end end
  add("model")
  add("gpu")
  local others = {}
  for k in pairs(spec) do if not not_options[k] then others[#others + 1] = k end end
  table.sort(others)
  for _, k in ipairs(others) do add(k) end
  for _, k in ipairs{"tp", "pp", "kv", "weights", "context", "concurrency"} do add(k) end
  local i, opts = 1, {}
  local function walk(a)
    if a <= #axes then
      for _, v in ipairs(axes[a][2]) do
        opts[axes[a][1]] = v
        walk(a + 1)
      end
      return
    end
    i = i + 1
    local o = {}
    for k, v in pairs(spec.base or {}) do o[k] = v end
    for k, v in pairs(opts) do o[k] = v end
    local ctx, conc = o.context, o.concurrency or 1
    o.context, o.concurrency = nil, nil
    local l = kv.deploy(o):ledger()
    ctx = ctx or l.max_model_len
    local r = rows[i]
    check.eq(r ~= nil, true, what .. ": a row " .. (i - 1))
    for j, name in ipairs(head) do
      local f = answers[name]
      if f then
        local want = tostring(f(l, ctx, conc))
        if r[j] ~= want then
          error(string.format("%s: row %d, column %s: sweep %s, kv.deploy %s (%s)", what, i - 1,
                              name, r[j], want, table.concat(r, ",")), 0)
        end
      end
    end
  end
  walk(1)
  check.eq(i - 1, n, what .. ": every deployment of the product has its row")
  os.remove(path)
  return s
end

local cols = {"model", "gpu", "tp", "context", "concurrency", "gpu_bytes", "activation_bytes",
              "overhead_bytes", "kv_budget_bytes", "kv_tokens", "max_concurrency", "max_context",
              "fits", "limit"}

-- vLLM's budget, nothing given: dense, GQA, MoE and MLA models on GPUs that
-- take the big-GPU defaults (H100, H200), an A100 of 80 GB that does not,
-- and small ones; tp splits the activation; non-torch memory by tp
local s = both_ways({
  model = {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v2-lite", "mistral-7b-v0.3"},
  gpu = {"h100-sxm", "a100-sxm-80gb", "l4", "h200"},
  max_model_len = {4096, 40000}, tp = {1, 2, 4}, context = {1024, 4096}, concurrency = {1, 64},
  columns = cols,
}, "vLLM defaults")
-- the C axes: one deployment per model
check.eq(s.nbase, 4, "one base deployment per model")
for _, a in ipairs(s.axes) do
  if a.name ~= "model" then check.eq(a.field ~= "base", true, a.name .. " is a C axis") end
end
check.eq(s.tp ~= nil, true, "tp is a C axis")

-- the engine named (its default max_num_seqs caps concurrency), V0 and V1
-- releases (V0: chunked prefill past 32768 tokens), offline usage, the
-- step tokens and sequences given as lists
both_ways({
  model = {"llama-3.1-8b", "mixtral-8x7b"}, gpu = {"h100-sxm", "a100-sxm-40gb"},
  engine = "vllm", engine_version = {"0.6", "0.7-v1", "0.11"}, usage = {"server", "offline"},
  max_model_len = {8192, 65536}, tp = {1, 2}, concurrency = {1, 300, 2000},
  columns = {"model", "gpu", "engine_version", "usage", "max_model_len", "tp", "concurrency",
             "activation_bytes", "overhead_bytes", "max_concurrency", "fits", "limit"},
}, "engine named")
both_ways({
  model = "qwen3-8b", gpu = {"h100-sxm", "l40s"}, engine = "vllm",
  max_num_batched_tokens = {512, 8192, 32768}, max_num_seqs = {16, 1024}, tp = {1, 2},
  concurrency = {8, 512, 4096},
  columns = {"gpu", "max_num_batched_tokens", "max_num_seqs", "tp", "concurrency",
             "activation_bytes", "overhead_bytes", "max_concurrency", "fits", "limit"},
}, "tokens and seqs given")
-- the V1 releases that counted the CUDA context (0.7-v1) and NCCL (0.8)
both_ways({
  model = "llama-3.1-70b", gpu = {"h100-sxm", "h20"}, engine_version = {"0.7-v1", "0.8", "0.11"},
  tp = {1, 2, 4, 8}, enforce_eager = {false, true}, flashinfer_sampler = {false, true},
  columns = {"gpu", "engine_version", "tp", "enforce_eager", "flashinfer_sampler",
             "activation_bytes", "overhead_bytes", "kv_budget_bytes", "fits"},
}, "versions and switches")
-- vLLM's LoRA slots: the C loop over tp and pp sizes them again per
-- deployment (kvp_lora_layer_bytes in each stage's weights)
both_ways({
  model = {"llama-3.1-8b", "qwen2.5-7b"}, gpu = "h100-sxm", enable_lora = true,
  max_lora_rank = {16, 64}, max_loras = {1, 4}, tp = {1, 2}, pp = {1, 2},
  columns = {"model", "max_lora_rank", "max_loras", "tp", "pp", "kv_budget_bytes", "fits"},
}, "LoRA slots")
-- SGLang's budget (its overhead from the context's range), budgets side by side
both_ways({
  model = {"llama-3.1-8b", "gemma-2-9b"}, gpu = {"h100-sxm", "l4"}, budget = {"vllm", "sglang"},
  utilization = 0.85, tp = {1, 2}, max_model_len = {8192, 32768},
  columns = {"model", "gpu", "budget", "tp", "max_model_len", "activation_bytes",
             "overhead_bytes", "kv_budget_bytes", "kv_tokens"},
}, "SGLang beside vLLM")
-- TensorRT-LLM's dry run (the core's rule too) beside vLLM's in one sweep,
-- the PyTorch backend and the engine path (no activation predicted)
both_ways({
  model = {"llama-3.1-8b", "qwen3-30b-a3b"}, gpu = {"h100-sxm", "l40s"}, engine = {"vllm", "trtllm"},
  tp = {1, 2}, max_model_len = {8192, 32768}, max_num_batched_tokens = {2048, 8192},
  columns = {"model", "gpu", "engine", "tp", "max_model_len", "max_num_batched_tokens",
             "activation_bytes", "overhead_bytes", "kv_budget_bytes", "kv_tokens"},
}, "TensorRT-LLM beside vLLM")
local st = both_ways({
  model = {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v2-lite"}, gpu = {"h100-sxm", "l40s"},
  engine = "trtllm", backend = {"pytorch", "tensorrt"}, tp = {1, 2, 4}, max_model_len = {2048, 8192, 131072},
  max_num_batched_tokens = {1024, 8192},
  columns = {"model", "gpu", "backend", "tp", "max_model_len", "max_num_batched_tokens",
             "activation_bytes", "overhead_bytes", "kv_budget_bytes", "kv_tokens", "fits"},
}, "TensorRT-LLM's dry run")
check.eq(st.nbase, 3 * 2, "TensorRT-LLM: one base a model and backend")
-- a vision tower's encoder run (kv.deploy's, built in Lua per deployment)
both_ways({
  model = {"qwen2.5-vl-7b", "llama-3.1-8b"}, gpu = {"h100-sxm", "l40s"}, tp = {1, 2},
  max_model_len = {8192, 32768}, max_num_seqs = {4, 256},
  columns = {"model", "gpu", "tp", "max_model_len", "max_num_seqs", "activation_bytes",
             "overhead_bytes", "kv_budget_bytes"},
}, "vision tower")
both_ways({
  model = {"qwen2.5-vl-7b", "qwen2.5-vl-3b"}, gpu = {"h100-sxm", "l4"}, engine_version = {"0.6", "0.7", "0.11"},
  limit_mm_per_prompt = {1, 3}, tp = {1, 2, 4}, max_model_len = {4096, 40000},
  max_num_batched_tokens = {2048, 16384},
  columns = {"model", "gpu", "engine_version", "limit_mm_per_prompt", "tp", "max_model_len",
             "max_num_batched_tokens", "activation_bytes", "kv_budget_bytes"},
}, "vision tower, V0 and V1, limits")
local vpath = dir .. "/vpp.csv"
kv.sweep{model = "qwen2.5-vl-7b", gpu = {"h100-sxm", "l40s"}, engine_version = {"0.7", "0.11"},
         tp = {1, 2}, pp = {1, 2, 4}, columns = {"gpu", "engine_version", "tp", "pp", "activation_bytes",
                                                "kv_budget_bytes", "kv_tokens"}}:write(vpath)
local vrows = kv.csv.read(vpath)
check.eq(#vrows, 2 * 2 * 2 * 3 + 1, "vision pp rows")
for i = 2, #vrows do
  local r = vrows[i]
  local l = kv.deploy{model = "qwen2.5-vl-7b", gpu = r[1], engine_version = r[2], tp = tonumber(r[3]),
                      pp = tonumber(r[4])}:ledger()
  check.eq(tonumber(r[5]), l.activation, "activation_bytes, vision pp row " .. i)
  check.eq(tonumber(r[6]), l.kv_budget, "kv_budget_bytes, vision pp row " .. i)
  check.eq(tonumber(r[7]), l.kv_tokens, "kv_tokens, vision pp row " .. i)
end
os.remove(vpath)
-- SGLang's default fraction by tp (v0.4's rule, no engine_version): tp a C axis
local sg = both_ways({
  model = {"llama-3.1-8b", "qwen2.5-72b"}, gpu = {"h100-sxm", "l40s"}, budget = "sglang",
  tp = {1, 2, 4, 8, 16}, max_model_len = {8192, 32768},
  columns = {"model", "gpu", "tp", "max_model_len", "usable_bytes", "overhead_bytes",
             "kv_budget_bytes", "kv_tokens", "fits"},
}, "SGLang fraction by tp")
check.eq(sg.nbase, 2, "SGLang by tp: one base deployment per model")
check.eq(sg.tp ~= nil, true, "SGLang by tp: tp is a C axis")
check.eq(sg.built_in_lua, nil, "SGLang by tp: not built in Lua")
-- SGLang's weights hold the caching allocator's slack, which depends on
-- tp, pp and the weight format (engines.sglang_alloc_slack), and the
-- rotary tables, float32 but on AMD GPUs: the sweep hands the core each
-- base's table of them along its C axes (tp 1/2/4, bf16 and fp8 with
-- 128x128 block scales, an AMD GPU beside NVIDIA's, pp 1 and 2)
local sw = both_ways({
  model = {"llama-3.1-8b", "qwen3-8b", "qwen2.5-7b", "qwen3-30b-a3b"},
  gpu = {"h100-sxm", "mi300x"}, budget = "sglang", tp = {1, 2, 4}, pp = {1, 2},
  weights = {"bf16", "fp8-b128x128"},
  columns = {"model", "gpu", "tp", "pp", "weights", "weights_bytes", "kv_budget_bytes",
             "kv_tokens", "fits"},
}, "SGLang's weights by tp, pp, format and GPU")
check.eq(sw.nbase, 4, "SGLang weights: one base deployment per model")
check.eq(sw.tp ~= nil and sw.pp ~= nil and sw.weights ~= nil, true,
         "SGLang weights: tp, pp and weights are C axes")
for _, a in ipairs(sw.axes) do
  if a.name == "gpu" then check.eq(a.field ~= "base", true, "SGLang weights: the GPU is a C axis") end
end
-- the slack moves with tp and the format: the rows differ from the base's
local d1 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang", tp = 1}
local d4 = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang", tp = 4,
                     weights = "fp8-b128x128"}
check.eq(d1.sglang_alloc_bytes ~= d4.sglang_alloc_bytes and d4.sglang_alloc_bytes ~= nil, true,
         "SGLang weights: the slack differs by tp and format")
-- a given weight_bytes (the loaded bytes): no slack, its list built in Lua
both_ways({
  model = "llama-3.1-8b", gpu = {"h100-sxm", "mi300x"}, budget = "sglang", tp = {1, 2},
  weight_bytes = {"15 GiB", "16 GiB"},
  columns = {"gpu", "weight_bytes", "tp", "weights_bytes", "kv_budget_bytes"},
}, "SGLang with weight_bytes given")
-- SGLang's fraction from the GPU's memory, tp and pp (engine_version 0.5)
-- beside v0.4's by tp: GPUs of every memory class, tp a C axis
local sm = both_ways({
  model = {"llama-3.1-8b", "qwen2.5-72b"}, gpu = {"l4", "a100-sxm-40gb", "h100-sxm", "b200", "t4"},
  budget = "sglang", engine_version = {"0.4", "0.5"}, tp = {1, 2, 4, 8},
  columns = {"model", "gpu", "engine_version", "tp", "usable_bytes", "kv_budget_bytes", "kv_tokens"},
}, "SGLang's memory heuristic")
check.eq(sm.nbase, 2 * 2, "SGLang memory: one base a model and version")
local sgpath = dir .. "/sgpp.csv"
kv.sweep{model = "llama-3.1-70b", gpu = {"h100-sxm", "l40s"}, budget = "sglang", engine_version = "0.5",
         tp = {1, 4}, pp = {1, 2, 4}, columns = {"gpu", "tp", "pp", "usable_bytes", "kv_tokens"}}:write(sgpath)
local sgrows = kv.csv.read(sgpath)
check.eq(#sgrows, 2 * 2 * 3 + 1, "SGLang pp rows")
for i = 2, #sgrows do
  local r = sgrows[i]
  local l = kv.deploy{model = "llama-3.1-70b", gpu = r[1], budget = "sglang", engine_version = "0.5",
                      tp = tonumber(r[2]), pp = tonumber(r[3])}:ledger()
  check.eq(tonumber(r[4]), l.usable, "usable_bytes, SGLang pp row " .. i)
  check.eq(tonumber(r[5]), l.kv_tokens, "kv_tokens, SGLang pp row " .. i)
end
os.remove(sgpath)
-- an engine rule in Lua (a budget's reserves hook): every deployment is
-- kv.deploy's, tp and pp included, and the sweep says so
local deploy = require "kvplan.deploy"
deploy.budgets.sglang.reserves = function(d)
  return {utilization = d.tp > 2 and 0.8 or 0.86, activation = d.pp * 2^30}
end
local ok3, err3 = pcall(function()
  local hs = both_ways({model = "llama-3.1-8b", gpu = {"h100-sxm", "l40s"}, budget = "sglang",
                        tp = {1, 2, 4}, pp = {1, 2},
                        columns = {"gpu", "tp", "pp", "usable_bytes", "activation_bytes",
                                   "kv_budget_bytes"}}, "own rule")
  check.eq(hs.nbase, 2 * 3 * 2, "own rule: a deployment for each GPU, tp and pp")
  check.eq(hs.built_in_lua, "budget 'sglang' has a reserves hook (an engine rule in Lua)",
           "the sweep says why it runs in Lua")
  check.eq(tostring(hs):find("every deployment built in Lua", 1, true) ~= nil, true,
           "and its text says it")
  local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang", tp = 4}
  check.eq(d.utilization, 0.8, "the hook's fraction")
  check.eq(d.activation_source, "rule", "the hook's activation")
  check.eq(d.engine_rule, nil, "no engine rule left for the core")
  check.eq(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang", tp = 4,
                     utilization = 0.7}.utilization, 0.7, "a given value still wins")
  local plain = kv.sweep{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "vllm", tp = {1, 2},
                         columns = {"tp", "kv_budget_bytes"}}
  check.eq(plain.built_in_lua, nil, "a sweep of other budgets stays in C")
  check.eq(plain.nbase, 1, "one base")
end)
deploy.budgets.sglang.reserves = nil
if not ok3 then error(err3, 0) end
-- a model without the activation model's facts (Mamba): nothing predicted
-- but the non-torch memory
both_ways({
  model = {"falcon-mamba-7b", "qwen2.5-7b"}, gpu = {"h100-sxm", "l4"}, tp = {1, 2},
  max_model_len = {4096, 16384},
  columns = {"model", "gpu", "tp", "max_model_len", "activation_bytes", "overhead_bytes",
             "kv_budget_bytes"},
}, "no shape")

-- pipeline parallelism: every stage but the last reserves the forward
-- alone; each row equals kv.deploy's ledger with the row's tp and pp
local path = dir .. "/pp.csv"
local sp = kv.sweep{model = {"llama-3.1-70b", "qwen3-30b-a3b"}, gpu = {"h100-sxm", "a100-sxm-80gb"},
                    max_model_len = {8192, 65536}, tp = {1, 2}, pp = {1, 2, 4},
                    columns = {"model", "gpu", "max_model_len", "tp", "pp", "usable_bytes",
                               "activation_bytes", "kv_budget_bytes", "kv_tokens"}}
check.eq(sp.nbase, 2, "pp: one base deployment per model")
sp:write(path)
local rows = kv.csv.read(path)
check.eq(#rows, 2 * 2 * 2 * 2 * 3 + 1, "pp rows")
for i = 2, #rows do
  local r = rows[i]
  local d = kv.deploy{model = r[1], gpu = r[2], max_model_len = tonumber(r[3]), tp = tonumber(r[4]),
                      pp = tonumber(r[5])}
  local l = d:ledger()
  check.eq(tonumber(r[6]), l.usable, "usable_bytes, pp row " .. i)
  check.eq(tonumber(r[7]), l.activation, "activation_bytes, pp row " .. i)
  check.eq(tonumber(r[8]), l.kv_budget, "kv_budget_bytes, pp row " .. i)
  check.eq(tonumber(r[9]), l.kv_tokens, "kv_tokens, pp row " .. i)
end
os.remove(path)
sp = kv.sweep{model = {"llama-3.1-70b", "qwen3-30b-a3b"}, gpu = "h100-sxm", engine = "trtllm",
              max_model_len = {8192, 65536}, tp = {1, 2}, pp = {1, 2, 4},
              columns = {"model", "max_model_len", "tp", "pp", "activation_bytes", "kv_budget_bytes",
                         "kv_tokens"}}
sp:write(path)
rows = kv.csv.read(path)
check.eq(#rows, 2 * 2 * 2 * 3 + 1, "TensorRT-LLM pp rows")
for i = 2, #rows do
  local r = rows[i]
  local d = kv.deploy{model = r[1], gpu = "h100-sxm", engine = "trtllm", max_model_len = tonumber(r[2]),
                      tp = tonumber(r[3]), pp = tonumber(r[4])}
  local l = d:ledger()
  check.eq(tonumber(r[5]), l.activation, "activation_bytes, TensorRT-LLM pp row " .. i)
  check.eq(tonumber(r[6]), l.kv_budget, "kv_budget_bytes, TensorRT-LLM pp row " .. i)
  check.eq(tonumber(r[7]), l.kv_tokens, "kv_tokens, TensorRT-LLM pp row " .. i)
end
os.remove(path)

-- MXFP4 experts weighed as each GPU's kernel and tp load them (kv.deploy),
-- activation and overhead given or not
both_ways({
  model = {"gpt-oss-20b", "llama-3.1-8b"}, gpu = {"h100-sxm", "b200", "a100-sxm-80gb"}, tp = {1, 2},
  overhead = {"1 GiB", "2 GiB"}, base = {activation = 0},
  columns = {"model", "gpu", "tp", "overhead", "weights_bytes", "kv_budget_bytes"},
}, "MXFP4, reserves given")
-- GPUs that take different MoE kernels (Marlin on Hopper, FlashInfer on
-- Blackwell, the checkpoint's layout without a known compute capability):
-- the GPU stays a C axis, its kernel travels with its memory
local mx = both_ways({
  model = {"gpt-oss-20b", "llama-3.1-8b"}, gpu = {"h100-sxm", "b200", "a100-sxm-80gb", "mi300x"},
  tp = {1, 2}, max_model_len = {8192, 32768},
  columns = {"model", "gpu", "tp", "max_model_len", "weights_bytes", "activation_bytes",
             "kv_budget_bytes"},
}, "MXFP4, reserves predicted")
check.eq(mx.nbase, 2, "MXFP4 kernels by GPU: one base a model")
-- gpu_memory given: the GPU axis sets the GPU's facts alone (vLLM's
-- defaults read its name: the A100 keeps the small ones)
local gm = both_ways({
  model = {"llama-3.1-8b", "gpt-oss-20b"}, gpu = {"h100-sxm", "a100-sxm-80gb", "b200"},
  gpu_memory = "80 GiB", engine = "vllm", tp = {1, 2}, concurrency = {1, 300, 2000},
  columns = {"model", "gpu", "tp", "concurrency", "gpu_bytes", "weights_bytes", "activation_bytes",
             "max_concurrency", "fits", "limit"},
}, "gpu_memory given")
check.eq(gm.nbase, 2, "gpu_memory given: one base a model")
for _, a in ipairs(gm.axes) do
  if a.name == "gpu" then check.eq(a.field, "gpu", "the GPU's facts alone") end
end
both_ways({
  model = {"gpt-oss-20b", "gpt-oss-120b"}, gpu = "h100-sxm", mxfp4_backend = {"triton", "flashinfer", "marlin"},
  tp = {1, 2, 4, 8}, weights = {"mxfp4", "bf16"},
  columns = {"model", "mxfp4_backend", "tp", "weights", "weights_bytes", "kv_budget_bytes"},
}, "MXFP4 kernels by tp, weight formats")
-- a release that bundles triton_kernels: the GPU axis takes each GPU's
-- kernel of that release (Triton on the H100, Marlin on the A100)
both_ways({
  model = "gpt-oss-20b", gpu = {"h100-sxm", "a100-sxm-80gb", "b200"}, engine_version = {"0.11", "0.12"},
  tp = {1, 2}, columns = {"gpu", "engine_version", "tp", "weights_bytes", "kv_budget_bytes"},
}, "MXFP4 kernels by GPU and release")
-- a max_num_seqs list is checked as kv.deploy checks one value
check.error("field 'max_num_seqs' must be an integer >= 1, got 0", kv.sweep,
            {model = "llama-3.1-8b", gpu = "h100-sxm", max_num_seqs = {8, 0}, columns = {"fits"}})

-- the non-torch rule's constants stay the stdlib's: a changed table changes
-- both paths alike, a bad one is named
local engines = require "kvplan.engines"
local saved = engines.non_torch.base
engines.non_torch.base = {lo = 0, point = 1.5 * 2^30, hi = 2 * 2^30}
local ok, err = pcall(both_ways, {model = "llama-3.1-8b", gpu = "h100-sxm", tp = {1, 2, 4},
                                  columns = {"tp", "overhead_bytes"}}, "changed constants")
engines.non_torch.base = {lo = 0, point = 3 * 2^30, hi = 2 * 2^30}
local ok2, err2 = pcall(kv.deploy, {model = "llama-3.1-8b", gpu = "h100-sxm", tp = 2, engine_version = "0.10"})
engines.non_torch.base = saved
if not ok then error(err, 0) end
check.eq(ok2, false, "a rule whose point is past its high end fails")
check.eq(tostring(err2):find("non_torch.base must have 0 <= lo <= point <= hi", 1, true) ~= nil, true,
         "the bad constant is named: " .. tostring(err2))

os.remove(dir)
print("sweep_predict: ok")
