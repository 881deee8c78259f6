-- tests/validation/throughput/run.lua: kvplan's time model against published
-- serving benchmarks (benchmarks.csv beside this file; docs/time.md,
-- "Step times and the serving simulator" states the result).
--
-- For each benchmark: the deployment it names (model, GPU, tp, weight and KV
-- formats, budget rule and fraction), its workload (fixed prompt and output
-- lengths, that many requests queued at once) and its limits (max_num_seqs,
-- max_num_batched_tokens; the client's max_concurrency where it had one),
-- then two predictions of the output tokens per second:
--   roofline   decode alone at the largest batch that fits and the mean
--              context (prompt + output / 2): d:time(...).tokens_per_s. No
--              prefill, no scheduling: an optimistic figure by construction.
--   simulator  kv.simulate on the same workload: prefill, chunking, the pool,
--              preemption, the tail of the run; also its mean time to first
--              token where the source measured one.
-- Output lengths: output_stop "fixed" means every request generates `output`
-- tokens (trtllm-bench's synthetic requests); "eos" means the client did not
-- set ignore_eos (vllm bench serve's --ignore-eos is off unless given,
-- vllm-project/vllm vllm/benchmarks/serve.py, add_cli_args), so a request
-- stops at the model's end-of-sequence token or at `output`. The source
-- gives the mean it got: output tokens/s over requests/s (about 100 of the
-- 128 asked for). The lengths are then min(G, output) with G geometric
-- (a constant chance of EOS at each token, an assumption: the source gives
-- only the mean) of that mean, 1000 quantiles as an empirical distribution.
-- Errors are (predicted - measured) / measured in percent. Nothing here is
-- fitted: the efficiency factors are kvplan.sim's (its per-GPU table from
-- published microbenchmarks, else its documented defaults).
--
-- Run: build/kvplan tests/validation/throughput/run.lua [out=results.csv]

local kv = require "kvplan"
local csv = require "kvplan.csv"
local args = kv.options(..., {out = "", corpus = "tests/validation/throughput/benchmarks.csv"})

local rows, lines = csv.read(args.corpus)
if rows == nil then error(lines, 0) end
local head = {}
for j, name in ipairs(rows[1]) do head[name] = j end

local r = kv.report{path = args.out ~= "" and args.out or nil, columns = {
  "id", "engine", "model", "gpu", "tp", "prompt", "output", "batch", "measured_output_tok_s",
  {"roofline_tok_s", precision = 0}, {"roofline_err_pct", precision = 1},
  {"sim_tok_s", precision = 0}, {"sim_err_pct", precision = 1}, "sim_preemptions",
  "measured_ttft_mean_ms", {"sim_ttft_mean_ms", precision = 1}, {"ttft_err_pct", precision = 1}}}

local function median(v)
  table.sort(v)
  local n = #v
  if n % 2 == 1 then return v[(n + 1) // 2] end
  return (v[n // 2] + v[n // 2 + 1]) / 2
end

-- trtllm-bench's own limits when the command gives none (the performance
-- overview's commands give none): NVIDIA/TensorRT-LLM
-- tensorrt_llm/bench/build/tuning.py, calc_engine_setting and
-- finetune_setting. KV bytes a token over the TP group: 2 x layers x
-- max(tp, kv_heads) x head_size x 1 byte (FP8 KV); the engine: parameters x
-- 1 byte (FP8); the rest of the GPUs' memory (get_device_memory, taken here
-- as the memory CUDA reports: the catalog's visible_bytes) x the KV fraction
-- holds kv_max requests of prompt + output tokens; then
--   bs = min(kv_max, 4096) / pp, tokens = min(bs x (1 + prompt / output), 32768)
--   max_batch_size = max(64, 32 ceil(bs / 32)) below 256, 128 ceil(bs / 128)
--                    below 1024, else 256 ceil(bs / 256)
--   max_num_tokens = max(2048, 256 ceil(t / 256)) below 4096, 512 ceil(t / 512)
--                    below 8192, else 1024 ceil(t / 1024)
local function trtllm_bench_limits(model, gpu, tp, pp, prompt, output, fraction)
  local GiB = 2 ^ 30
  local per_token = 2 * model.layers * math.max(tp, model.kv_heads) * model.head_dim / GiB
  local engine = model.params / GiB
  local available = gpu.visible_bytes / GiB * tp * pp - engine
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
  return math.tointeger(max_bs), math.tointeger(max_tokens)
end

-- The lengths min(G, cap), G geometric on 1, 2, ... with P(G > k) = (1 - q)^k,
-- whose mean sum_{k<cap} (1 - q)^k = (1 - (1 - q)^cap) / q is `mean`.
local function eos_lengths(mean, cap)
  if not (mean > 1 and mean < cap) then
    error(string.format("mean output %.2f must be in (1, %d)", mean, cap), 0)
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
  return v
end

local abs_roof, abs_sim, over_roof, over_sim, abs_ttft = {}, {}, 0, 0, {}
for i = 2, #rows do
  local c = function(k) return rows[i][head[k]] end
  local n = function(k) return tonumber(c(k)) end
  local max_seqs, max_tokens = n("max_num_seqs"), n("max_num_batched_tokens")
  if c("max_num_seqs") == "trtllm-bench" then
    max_seqs, max_tokens = trtllm_bench_limits(kv.model(c("model")), kv.gpu(c("gpu")), n("tp"),
                                               n("pp"), n("prompt"), n("output"), n("utilization"))
  end
  local opts = {model = c("model"), gpu = c("gpu"), tp = n("tp"), pp = n("pp"), weights = c("weights"),
                kv = c("kv"), budget = c("budget"), utilization = n("utilization"),
                max_num_seqs = c("budget") == "vllm" and max_seqs or nil,
                max_num_batched_tokens = max_tokens}
  local d = kv.deploy(opts)
  local prompt, output = n("prompt"), n("output")
  local fit = d:ledger():max_concurrency(prompt + output)
  local client = n("max_concurrency")
  local batch = math.min(fit, max_seqs, client or math.huge)
  local roof = d:time(prompt + output // 2, batch).tokens_per_s
  local sim_output = output
  if c("output_stop") == "eos" then
    sim_output = kv.workload.empirical(eos_lengths(n("measured_output_tok_s") /
                                                n("measured_requests_s"), output))
  elseif c("output_stop") ~= "fixed" then
    error(string.format("%s: output_stop must be fixed or eos, got '%s'", c("id"), c("output_stop")), 0)
  end
  local sopts = {requests = n("requests"), prompt = prompt, output = sim_output, seed = 1}
  for k, v in pairs(opts) do sopts[k] = v end
  sopts.max_num_seqs, sopts.max_concurrency = max_seqs, client
  local s = kv.simulate(sopts)
  local m = n("measured_output_tok_s")
  local er, es = 100 * (roof - m) / m, 100 * (s.throughput_tokens_s - m) / m
  abs_roof[#abs_roof + 1], abs_sim[#abs_sim + 1] = math.abs(er), math.abs(es)
  if er > 0 then over_roof = over_roof + 1 end
  if es > 0 then over_sim = over_sim + 1 end
  local mt = n("measured_ttft_mean_ms")
  if mt then abs_ttft[#abs_ttft + 1] = math.abs(100 * (s.ttft_ms.mean - mt) / mt) end
  r:row{id = c("id"), engine = c("engine"), model = c("model"), gpu = c("gpu"), tp = n("tp"),
        prompt = prompt, output = output, batch = batch, measured_output_tok_s = m,
        roofline_tok_s = roof, roofline_err_pct = er, sim_tok_s = s.throughput_tokens_s,
        sim_err_pct = es, sim_preemptions = s.num_preemptions,
        measured_ttft_mean_ms = c("measured_ttft_mean_ms"),
        sim_ttft_mean_ms = n("measured_ttft_mean_ms") and s.ttft_ms.mean or "",
        ttft_err_pct = n("measured_ttft_mean_ms") and
          100 * (s.ttft_ms.mean - n("measured_ttft_mean_ms")) / n("measured_ttft_mean_ms") or ""}
end
r:close()
local summary = string.format("%d benchmarks: median |error| roofline %.1f %% (above the "
  .. "measurement in %d), simulator %.1f %% (above in %d); mean TTFT of %d: median |error| %.1f %%",
  #abs_roof, median(abs_roof), over_roof, median(abs_sim), over_sim, #abs_ttft, median(abs_ttft))
io.stderr:write(summary, "\n")
return summary
