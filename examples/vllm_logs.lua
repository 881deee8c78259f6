-- examples/vllm_logs.lua: kvplan's vLLM ledger checked against real vLLM
-- startup logs posted in public GitHub issue threads.
--
-- Shows: for each log, the deployment built from what the log prints (total
-- GPU memory, gpu_memory_utilization, weights, activation peak, non-torch
-- memory, tensor parallelism, KV format, block size, max_model_len), and
-- kvplan's KV budget, KV tokens and vLLM's "Maximum concurrency" ratio beside
-- the logged figures. The logs print GiB with 2 (or 4) decimals, so every
-- logged GiB input is only known to +-half a unit of its last digit: kvplan is
-- evaluated at both ends of that range, and `agrees` says whether each logged
-- output lies between the two. No input is tuned; a row that disagrees stays,
-- with the reason in `note`.
--
-- How vLLM counts (the rules this file compares with):
--   V0 (vllm/worker/worker.py determine_num_available_blocks):
--     kv = total * utilization - peak_memory, peak_memory = torch peak (the
--     weights included) + non-torch memory; num_gpu_blocks = kv //
--     cache_block_size, the fewest over the TP workers; every block is usable.
--     "Maximum concurrency" = num_gpu_blocks * block_size / max_model_len
--     (vllm/executor/executor_base.py initialize_cache). 0.6.4 prints the
--     torch peak with the weights in it (peak_torch_memory=); 0.7 prints
--     weights and activation apart. "Loading model weights took X GB" divides
--     by 2^30: the GB are GiB.
--   V1 (vllm/v1/core/kv_cache_utils.py): num_blocks = available // page_size
--     // num_layers, the fewest over the workers; "GPU KV cache size" =
--     num_blocks * block_size (one KV group), which includes the null block
--     (vllm/v1/core/block_pool.py); "Maximum concurrency" = num_blocks /
--     cdiv(max_model_len, block_size) (get_max_concurrency_for_kv_cache_config).
--     Recent V1 logs print only "Available KV cache memory": for those the
--     logged KV memory is the budget, the one input (gpu_memory = that memory
--     plus kvplan's catalog weights, utilization 1, so that
--     usable - weights is exactly the logged figure).
-- kvplan's ledger: kv_blocks = kv_budget // (page bytes x layers) counts the
-- null block too, so kv_blocks * block is compared with vLLM's tokens;
-- kv_tokens = (kv_blocks - 1) * block is what requests can use under V1
-- (V0 reserves no null block, so there it is one block short).
--
-- Run: build/kvplan examples/vllm_logs.lua

local kv = require "kvplan"
local GiB = kv.units.GiB

-- Each log: the thread, the exact lines used, and the inputs as printed.
-- Figures are strings so that their printed precision is kept.
local logs = {
  {
    source = "vllm-project/vllm#10517 (comment by kaspersiminski, 2024-12-02)",
    lines = {
      "Loading model weights took 14.9888 GB",
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        .. "peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB "
        .. "non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90",
      "GPU blocks: 1952, # CPU blocks: 2048",
      "Maximum concurrency for 20000 tokens per request: 1.56x",
    },
    model = "llama-3.1-8b", gpu = "RTX 3090", tp = 1, block = 16, max_model_len = 20000,
    vllm = "V0 (0.6.4 profile format)", rule = "v0",
    total = "23.58", utilization = 0.90, weights = "14.9888", peak_torch = "17.06",
    non_torch = "0.35",
    logged = {kv = "3.81", blocks = 1952, concurrency = "1.56"},
  },
  {
    source = "vllm-project/vllm#10517 (comment by kaspersiminski, 2024-12-02)",
    lines = {
      "Loading model weights took 14.9888 GB",
      "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        .. "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB "
        .. "non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
      "# GPU blocks: 1478, # CPU blocks: 2048",
      "Maximum concurrency for 29000 tokens per request: 0.82x",
      "The model's max seq len (29000) is larger than the maximum number of tokens that "
        .. "can be stored in KV cache (23648).",
    },
    model = "llama-3.1-8b", gpu = "RTX 3090", tp = 1, block = 16, max_model_len = 29000,
    vllm = "V0 (0.6.4 profile format)", rule = "v0",
    total = "23.58", utilization = 0.90, weights = "14.9888", peak_torch = "17.98",
    non_torch = "0.35",
    logged = {kv = "2.89", blocks = 1478, concurrency = "0.82"},
    note = "a larger max_model_len raised the profiled activation peak by 0.92 GiB; "
      .. "1478 x 16 = 23648, the tokens the error message prints",
  },
  {
    source = "vllm-project/vllm#15815 (comment by Hemanth-stack, 2025-04-02)",
    lines = {
      "Initializing a V0 LLM engine (v0.7.1) with config: model='../models/"
        .. "qwen25_32b_instruct_HF/', ... dtype=torch.bfloat16, max_seq_len=10000, ... "
        .. "tensor_parallel_size=2, ... kv_cache_dtype=auto",
      "model_runner.py:1116] Loading model weights took 30.7098 GB",
      "the current vLLM instance can use total_gpu_memory (44.42GiB) x "
        .. "gpu_memory_utilization (0.90) = 39.98GiB",
      "model weights take 30.71GiB; non_torch_memory takes 0.30GiB; PyTorch activation "
        .. "peak memory takes 1.26GiB; the rest of the memory reserved for KV Cache is 7.71GiB.",
      "# CUDA blocks: 3947, # CPU blocks: 2048",
    },
    model = "qwen2.5-32b", gpu = "L40S", tp = 2, block = 16, max_model_len = 10000,
    vllm = "V0 0.7.1", rule = "v0",
    total = "44.42", utilization = 0.90, weights = "30.7098", activation = "1.26",
    non_torch = "0.30",
    logged = {kv = "7.71", blocks = 3947},
    note = "the concurrency line is cut off in the thread; per-GPU weights from the "
      .. "4-decimal loading line",
  },
  {
    source = "vllm-project/vllm#13882 (description by sancelot)",
    lines = {
      "model_runner.py:1115] Loading model weights took 5.2032 GB",
      "the current vLLM instance can use total_gpu_memory (8.00GiB) x "
        .. "gpu_memory_utilization (0.70) = 5.60GiB",
      "model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch activation "
        .. "peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.",
      "# cuda blocks: 0, # CPU blocks: 4681",
      "Maximum concurrency for 4096 tokens per request: 0.00x",
    },
    model = "qwen2.5-7b", gpu = "RTX 4060", tp = 1, block = 16, max_model_len = 4096,
    vllm = "V0 (0.7 profile format)", rule = "v0",
    total = "8.00", utilization = 0.70, weights = "5.2032", activation = "1.42",
    non_torch = "0.03",
    logged = {kv = "-1.05", blocks = 0, concurrency = "0.00"},
    note = "does not fit in either: vLLM has no block, kvplan no block either; 5.2 GiB "
      .. "are a 4-bit checkpoint's weights, the KV is bf16",
  },
  {
    source = "LMCache/LMCache#1739 (description by jaeyoun98)",
    lines = {
      "[gpu_worker.py:298] Available KV cache memory: 6.51 GiB",
      "[kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens",
      "[kv_cache_utils.py:868] Maximum concurrency for 32,768 tokens per request: 1.30x",
    },
    model = "qwen3-14b", gpu = "one GPU (type not quoted)", tp = 1, block = 16,
    max_model_len = 32768, vllm = "V1 (KV memory only)", rule = "v1",
    kv_only = "6.51",
    logged = {kv = "6.51", tokens = 42656, concurrency = "1.30"},
    note = "the log prints only the KV memory: it is the budget",
  },
  {
    source = "vllm-project/vllm#33263 (description by DominikHil, 2026-01-28)",
    lines = {
      "LLM(model=\"Qwen/Qwen3-1.7B\", max_num_seqs=1, max_model_len=1024)",
      "[gpu_worker.py:358] Available KV cache memory: 18.78 GiB",
      "[kv_cache_utils.py:1305] GPU KV cache size: 175,856 tokens",
    },
    model = "qwen3-1.7b", gpu = "24 GB GPU", tp = 1, block = 16, max_model_len = 1024,
    vllm = "V1 (KV memory only)", rule = "v1",
    kv_only = "18.78",
    logged = {kv = "18.78", tokens = 175856},
    note = "the log prints only the KV memory: it is the budget; no concurrency line quoted",
  },
  {
    source = "vllm-project/vllm#21348 (description by MMuzzammil1, 2025-07-22)",
    lines = {
      "vllm serve /path/to/Qwen3-235B-A22B-FP8 --tensor-parallel-size 4 "
        .. "--kv-transfer-config '{\"kv_connector\":\"LMCacheConnectorV1\",...}'",
      "Available KV cache memory: 8.11 GiB",
      "GPU KV cache size: 178,880 tokens",
    },
    model = "qwen3-235b-a22b", gpu = "4x H100", tp = 4, block = 16,
    vllm = "V1 (KV memory only)", rule = "v1",
    kv_only = "8.11",
    logged = {kv = "8.11", tokens = 178880},
    note = "disagrees: 178,880 tokens are 11180 blocks, 8.02 GiB at 770048 B a block "
      .. "(94 layers, 1 KV head per GPU at TP 4, bf16 KV: the FP8 checkpoint quantizes "
      .. "weights only); the quoted line is one rank's memory and vLLM keeps the fewest "
      .. "blocks over the 4 ranks, so a rank with ~0.09 GiB less would explain it, but "
      .. "the thread does not show the other ranks; max_model_len not given (model default)",
  },
}

-- A printed decimal figure as bytes: the value as printed, and the two ends
-- of its rounding interval (+-half a unit of the last printed digit).
local function figure(s)
  local sign, int, frac = s:match("^(%-?)(%d+)%.(%d+)$")
  assert(int, "a logged figure needs decimals: " .. s)
  local den = math.tointeger(10 ^ #frac)
  local n = math.tointeger(tonumber(int .. frac)) * (sign == "-" and -1 or 1)
  return {mid = n * GiB // den, lo = (2 * n - 1) * GiB // (2 * den),
          hi = (2 * n + 1) * GiB // (2 * den)}
end

-- The deployment of a log at one end of its rounding: end "mid" (as printed),
-- "lo" (least KV: least total, most of everything else) or "hi".
local function deployment(g, e)
  local other = e == "lo" and "hi" or e == "hi" and "lo" or "mid"
  local opts = {model = g.model, tp = g.tp, block = g.block, kv = "auto",
                max_model_len = g.max_model_len}
  if g.kv_only then
    -- the logged KV memory is the whole budget: weights are kvplan's own
    -- catalog estimate, added to the GPU memory and taken away again
    local w = kv.deploy{model = g.model, tp = g.tp, gpu_memory = GiB}:ledger().weights
    opts.gpu_memory = figure(g.kv_only)[e] + w
    opts.utilization = 1
    opts.activation, opts.overhead = 0, 0 -- inside the logged figure already
    return kv.deploy(opts)
  end
  local weights = figure(g.weights)
  local per_gpu = g.peak_torch and weights.mid or weights[other]
  opts.gpu_memory = figure(g.total)[e]
  opts.utilization = g.utilization
  opts.weight_bytes = per_gpu * g.tp -- the ledger splits it back over tp exactly
  -- 0.6.4 prints the torch peak with the weights in it
  opts.activation = g.peak_torch and figure(g.peak_torch)[other] - weights.mid
                    or figure(g.activation)[other]
  opts.overhead = figure(g.non_torch)[other]
  return kv.deploy(opts)
end

-- KV budget (signed: usable - weights - activation - overhead, which is the
-- ledger's kv_budget whenever that is not negative), blocks with the null
-- block, and vLLM's concurrency ratio from kvplan's integers.
local function measure(g, d)
  local l = d:ledger()
  local budget = l.usable - l.weights - l.activation - l.overhead
  local blocks = l.kv_blocks
  local len = l.max_model_len
  local ratio
  if g.rule == "v0" then
    ratio = blocks * g.block / len
  else
    ratio = blocks / ((len + g.block - 1) // g.block)
  end
  return {budget = budget, blocks = blocks, tokens = blocks * g.block,
          usable_tokens = l.kv_tokens, ratio = ratio, len = len, why = l.why}
end

local function between(x, a, b) return a <= x and x <= b end
local function pct2(x) return string.format("%.2f", x) end

local r = kv.report{columns = {
  "source", "model", "gpu", "tp", "kv", "block", "max_model_len", "vllm",
  "logged_kv_gib", {"kvplan_kv_budget_gib", precision = 2},
  "logged_kv_tokens", "kvplan_kv_tokens", "kvplan_kv_tokens_range", "kvplan_usable_tokens",
  "logged_concurrency", "kvplan_concurrency", "agrees", "note"}}

for _, g in ipairs(logs) do
  local d = deployment(g, "mid")
  local mid = measure(g, d)
  local lo = measure(g, deployment(g, "lo"))
  local hi = measure(g, deployment(g, "hi"))
  local logged_tokens = g.logged.tokens or g.logged.blocks * g.block
  local failed = {}
  if not g.kv_only and not between(figure(g.logged.kv).mid, lo.budget, hi.budget) then
    failed[#failed + 1] = "kv memory"
  end
  if not between(logged_tokens, lo.tokens, hi.tokens) then failed[#failed + 1] = "tokens" end
  if g.logged.concurrency
     and not between(tonumber(g.logged.concurrency), tonumber(pct2(lo.ratio)),
                     tonumber(pct2(hi.ratio))) then
    failed[#failed + 1] = "concurrency"
  end
  local notes = {}
  if g.logged.blocks then
    notes[1] = string.format("logged # GPU blocks %d x %d", g.logged.blocks, g.block)
  end
  if mid.why ~= "" then notes[#notes + 1] = "kvplan: " .. mid.why end
  notes[#notes + 1] = g.note
  r:row{
    source = g.source, model = g.model, gpu = g.gpu, tp = g.tp,
    kv = "auto (" .. d.kv.name .. ")", block = g.block, max_model_len = mid.len, vllm = g.vllm,
    logged_kv_gib = g.logged.kv, kvplan_kv_budget_gib = mid.budget / GiB,
    logged_kv_tokens = logged_tokens, kvplan_kv_tokens = mid.tokens,
    kvplan_kv_tokens_range = lo.tokens .. "-" .. hi.tokens,
    kvplan_usable_tokens = mid.usable_tokens,
    logged_concurrency = g.logged.concurrency or "",
    kvplan_concurrency = pct2(mid.ratio),
    agrees = #failed == 0 and "yes" or "no: " .. table.concat(failed, ", "),
    note = table.concat(notes, "; "),
  }
end

r:close()
