-- stdlib/kvplan/columns.lua: what the reports' columns measure and in which
-- unit, declared once: a chart's axis labels (kv.plot: max_concurrency ->
-- "max concurrency (requests)", context -> "context (tokens)",
-- weights_gib_per_gpu -> "weights per GPU (GiB)") and the units in an HTML
-- report's headers (report.column_unit).
-- Stdlib layer, data. A column is found by its name (M.known, then a
-- deployment field of fields.lua, whose unit the registry declares), else
-- by the suffix that names its unit (M.suffixes: _gib, _bytes, _ms, _pct,
-- ... with a percentile after it); a name none of them knows is its own
-- label, without a unit.

local M = {}

-- name = {what it measures, unit}: the columns of the ready scripts'
-- reports (scripts/*.lua), kv.report.ledger_row, the sweep's built-in
-- columns (engine/lua/sweep_spec_lua.c) and the examples'.
M.known = {
  context = {"context", "tokens"},
  input = {"input", "tokens"},
  limit_concurrency = {"concurrency limit", "requests"},
  real_token_pct = {"real tokens", "%"},
  concurrency = {"concurrency", "requests"},
  max_concurrency = {"max concurrency", "requests"},
  max_context = {"max context", "tokens"},
  kv_tokens = {"KV cache", "tokens"},
  kv_blocks = {"KV cache", "blocks"},
  kv_bytes_per_token = {"KV per token", "bytes"},
  kv_bytes_per_token_per_gpu = {"KV per token per GPU", "bytes"},
  kv_bytes_per_token_bf16 = {"KV per token at bf16", "bytes"},
  kv_write_bytes_per_token = {"KV written per token", "bytes"},
  seq_bytes = {"KV of one request", "bytes"},
  gib_per_gpu = {"memory per GPU", "GiB"},
  share_pct = {"share of the GPU", "%"},
  requests = {"requests", "requests"},
  requests_per_gpu = {"requests per GPU", "requests"},
  requests_s = {"completed", "requests/s"},
  rate = {"request rate", "requests/s"},
  rate_per_replica = {"request rate per replica", "requests/s"},
  tokens_per_s = {"output", "tokens/s"},
  tokens_per_s_gpu = {"output per GPU", "tokens/s"},
  tokens_per_s_user = {"output per user", "tokens/s"},
  tokens_per_s_lo = {"output, slow end", "tokens/s"},
  tokens_per_s_hi = {"output, fast end", "tokens/s"},
  throughput_tokens_s = {"throughput", "tokens/s"},
  num_preemptions = {"preemptions", "requests"},
  kv_cache_usage_mean = {"mean KV cache usage", "share of the pool"},
  kv_cache_usage_peak = {"peak KV cache usage", "share of the pool"},
  kv_read_share = {"KV share of the bytes read", "share"},
  steps = {"engine steps", "steps"},
  steps_per_token = {"engine steps per token", "steps"},
  gpus = {"GPUs", "GPUs"},
  replicas = {"replicas", "replicas"},
  cost_per_hour = {"cost", "USD per hour"},
  usd_per_mtok = {"cost", "USD per million output tokens"},
  usd_per_mtok_output = {"cost", "USD per million output tokens"},
  usd_per_mtok_total = {"cost", "USD per million tokens"},
  kv_transfer_ms = {"KV transfer of one request", "ms"},
  params_b = {"parameters", "billions"},
  active_b = {"active parameters", "billions"},
  layers = {"layers", "layers"},
  hbm_gbps = {"memory bandwidth", "GB/s"},
  bf16_tflops = {"bf16 tensor rate", "TFLOP/s"},
  fp8_tflops = {"fp8 tensor rate", "TFLOP/s"},
}

-- Suffixes that name a unit, longest first: the words before them are the
-- quantity (kv_budget_gib_per_gpu: "KV budget per GPU (GiB)").
M.suffixes = {
  {"_gib_per_gpu", " per GPU", "GiB"}, {"_bytes_per_gpu", " per GPU", "bytes"},
  {"_gib", "", "GiB"}, {"_bytes", "", "bytes"}, {"_ms", "", "ms"}, {"_pct", "", "%"},
  {"_usd", "", "USD"}, {"_s", "", "s"},
}

-- Words written as people write them.
local words = {kv = "KV", gpu = "GPU", gpus = "GPUs", ttft = "TTFT", tpot = "TPOT", e2e = "E2E",
               itl = "ITL", tp = "TP", pp = "PP", dp = "DP", ep = "EP", usd = "USD"}

local function spoken(name)
  local out = {}
  for w in name:gmatch("[^_]+") do out[#out + 1] = words[w] or w end
  return table.concat(out, " ")
end

--- What column `name` measures and its unit (nil when none is known):
--- "max concurrency", "requests"; "TTFT p90", "ms"; "foo", nil.
function M.quantity(name)
  name = tostring(name)
  local k = M.known[name]
  if k then return k[1], k[2] end
  local f = require("kvplan.fields").by_name[name]
  if f and f.unit then return spoken(name), f.unit end
  -- a percentile or a range end after the unit: ttft_ms_p90, tpot_ms_lo
  local base, tail = name:match("^(.-)_(p%d+)$")
  if not base then base, tail = name:match("^(.-)_(lo)$") end
  if not base then base, tail = name:match("^(.-)_(hi)$") end
  base = base or name
  for _, s in ipairs(M.suffixes) do
    local suffix, per, unit = s[1], s[2], s[3]
    if #base > #suffix and base:sub(-#suffix) == suffix then
      local what = spoken(base:sub(1, -#suffix - 1)) .. per
      if tail then what = what .. " " .. tail end
      return what, unit
    end
  end
  return name, nil
end

--- An axis label: the quantity and its unit, "max concurrency (requests)";
--- the name itself when the registry does not know it.
function M.label(name)
  local what, unit = M.quantity(name)
  if unit == nil or unit == what then return what end
  return what .. " (" .. unit .. ")"
end

return M
