-- tests/lua/throughput_test.lua: the published-measurement corpus
-- (tests/validation/throughput/). run.lua, run with ratchet=check, fails
-- when a held-out or dev figure is worse than ratchet.csv by more than 0.05
-- points, when rows are lost, or when README.md's and docs/time.md's
-- generated figures are not the run's; here its predictions must also be
-- results.csv and summary.txt byte for byte. Then the ratchet's rule, the
-- corpus checks and the ITL figure on cases made here.
-- Re-baseline (a human, after reading why it failed):
--   build/kvplan tests/validation/throughput/run.lua ratchet=update
local check = require "check"
local kv = require "kvplan"
local dir = check.tmpdir()
local folder = "tests/validation/throughput"
local run = assert(loadfile(folder .. "/run.lua"))
local M = run{out = dir}
local rebase = " (re-baseline: build/kvplan tests/validation/throughput/run.lua ratchet=update)"
check.eq(check.slurp(dir .. "/results.csv"), check.slurp(folder .. "/results.csv"), "results.csv" .. rebase)
check.eq(check.slurp(dir .. "/summary.txt"), check.slurp(folder .. "/summary.txt"), "summary.txt" .. rebase)

-- every corpus row is in results.csv, simulated or skipped with a reason
local rows = kv.csv.read(folder .. "/results.csv")
check.eq(#rows - 1, #M.rows, "results.csv rows")
for _, r in ipairs(M.rows) do
  assert(r.sim or (r.skipped and r.skipped ~= ""), r.id .. ": neither simulated nor skipped with a reason")
end

-- the ratchet's rule
local base = {{"heldout", "rows", 10}, {"heldout", "output_tok_s", 10, 20.0, 40.0},
              {"dev", "ttft_mean_ms", 5, 30.0, 50.0}}
local function figs(edit)
  local out = {}
  for i, t in ipairs(base) do out[i] = {t[1], t[2], t[3], t[4], t[5]} end
  if edit then edit(out) end
  return out
end
local f, better = M.compare(figs(), base)
check.eq(#f, 0, "same figures: failures")
check.eq(better, false, "same figures: better")
f = M.compare(figs(function(t) t[2][4] = 20.04 t[3][5] = 50.049 end), base)
check.eq(#f, 0, "within 0.05 points: failures")
f = M.compare(figs(function(t) t[2][4] = 20.06 end), base)
check.eq(#f, 1, "median 0.06 points worse: failures")
assert(f[1]:find("heldout output_tok_s: median |error| 20.06 %, ratchet.csv 20.00 % (worse)", 1, true), f[1])
f = M.compare(figs(function(t) t[3][5] = 51 end), base)
assert(#f == 1 and f[1]:find("dev ttft_mean_ms: p90", 1, true), f[1])
f = M.compare(figs(function(t) t[1][3] = 9 end), base)
assert(#f == 1 and f[1]:find("heldout rows: 9 rows, ratchet.csv 10 (rows lost)", 1, true), f[1])
f = M.compare(figs(function(t) table.remove(t, 3) end), base)
assert(#f == 1 and f[1]:find("dev ttft_mean_ms: 5 rows in ratchet.csv, none now", 1, true), f[1])
f = M.compare(figs(function(t) t[4] = {"dev", "itl_mean_ms", 3, 10, 20} end), base)
assert(#f == 1 and f[1]:find("dev itl_mean_ms: 3 rows now, not in ratchet.csv", 1, true), f[1])
f, better = M.compare(figs(function(t) t[2][4] = 19 end), base)
check.eq(#f, 0, "better: failures")
check.eq(better, true, "median 1 point better")
f, better = M.compare(figs(function(t) t[1][3] = 11 end), base)
check.eq(#f == 0 and better, true, "a row more")
check.eq(M.ratchet_text(figs()), M.ratchet_header .. "\nheldout,rows,10,,\nheldout,output_tok_s,10,20.00,40.00\n"
         .. "dev,ttft_mean_ms,5,30.00,50.00\n", "ratchet text")

-- quantiles as numpy's default (linear): median of 1..4 is 2.5, p90 3.7
check.eq(M.quantile({4, 1, 3, 2}, 0.5), 2.5, "median")
assert(math.abs(M.quantile({4, 1, 3, 2}, 0.9) - 3.7) < 1e-12, "p90")

-- the docs' block: its markers, found or named when missing
assert(M.find_block("text\n" .. M.begin_mark .. "\nx\n" .. M.end_mark .. "\n"))
local a, why = M.find_block("no block here")
assert(a == nil and why:find(M.begin_mark, 1, true), why)

-- corpus checks: a header that is not the schema's, a bad cell, a split
-- that is not the rule's, a duplicate id; each names file:line and column
local bad = check.tmpdir()
local function corpus(text)
  os.execute("rm -f " .. bad .. "/*.csv")
  local w = assert(io.open(bad .. "/x.csv", "wb"))
  w:write(text)
  w:close()
  local ok, msg = pcall(M.read, bad)
  assert(not ok, "expected the corpus to be refused")
  return msg
end
local header = table.concat(M.header, ",")
local good = {id = "a-1", source_id = "trtllm-perf-overview", split = "dev", engine = "vllm",
              model = "llama-3.1-8b", gpu = "h100-sxm", tp = "1", pp = "1", weights = "bf16",
              kv = "auto", budget = "vllm", prompt = "128", output = "128", requests = "10",
              output_stop = "fixed", measured_output_tok_s = "1000", source = "https://example.org"}
local function line(edit)
  local t = {}
  for k, v in pairs(good) do t[k] = v end
  for k, v in pairs(edit or {}) do t[k] = v end
  local cells = {}
  for i, k in ipairs(M.header) do cells[i] = t[k] or "" end
  return table.concat(cells, ",")
end
local msg = corpus(header:gsub("measured_itl_mean_ms", "measured_itl_ms") .. "\n")
assert(msg:find("x.csv:1: column 29: the header must be the schema's", 1, true), msg)
assert(msg:find("expected 'measured_itl_mean_ms', got 'measured_itl_ms'", 1, true), msg)
msg = corpus(header .. ",extra\n")
assert(msg:find("x.csv:1: column 34", 1, true), msg)
msg = corpus(header .. "\n" .. line() .. "\n" .. line{id = "a-2", tp = "two"} .. "\n")
assert(msg:find("x.csv:3: column 'tp': must be a number, got 'two'", 1, true), msg)
msg = corpus(header .. "\n" .. line{id = "a-2", output_stop = "eos"} .. "\n")
assert(msg:find("x.csv:2: column 'measured_requests_s': output_stop eos needs", 1, true), msg)
msg = corpus(header .. "\n" .. line() .. "\n" .. line() .. "\n")
assert(msg:find("x.csv:3: column 'id': 'a-1' is also the id of ", 1, true), msg)
-- sha256("vllm-issue-1")'s first hex digit is 5 or above: held-out
local p = io.popen("printf %s vllm-issue-1 | sha256sum")
local digit = tonumber(p:read("l"):sub(1, 1), 16)
p:close()
msg = corpus(header .. "\n" .. line{source_id = "vllm-issue-1", split = digit <= 4 and "heldout" or "dev"} .. "\n")
assert(msg:find("x.csv:2: column 'split': source 'vllm-issue-1' (family 'vllm-issue-1') is "
                .. (digit <= 4 and "dev" or "heldout"), 1, true), msg)
-- the sources of one document family share a part: every GPUStack page is
-- its family's (gpustack: dev), whatever the page's own hash says
check.eq(M.family("gpustack-qwen3-14b-a100"), "gpustack", "family of a GPUStack page")
check.eq(M.family("trtllm-perf-overview-v0.20"), "trtllm-perf-overview", "family of a document version")
check.eq(M.family("vllm-issue-1"), "vllm-issue-1", "a source of its own")
msg = corpus(header .. "\n" .. line{source_id = "gpustack-qwen3-14b-a100", split = "heldout"} .. "\n")
assert(msg:find("(family 'gpustack') is dev", 1, true), msg)
msg = corpus(header .. "\n" .. line{model = "no-such-model"} .. "\n")
assert(msg:find("x.csv:2: column 'model'", 1, true), msg)
-- a row's weights are its named checkpoint's format (README.md, "How a
-- row's weight format is read"): Qwen's FP8 checkpoints are block FP8 (their
-- model cards: "fine-grained fp8 quantization with block size of 128"),
-- NVIDIA's ModelOpt FP8 per-tensor; whatever the row's error
check.eq(M.checkpoint_weights("Serving command: `vllm serve Qwen/Qwen3-14B-FP8`."), "fp8-b128x128",
         "Qwen/Qwen3-14B-FP8")
check.eq(M.checkpoint_weights("`vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 -tp 4`"), "fp8-b128x128",
         "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8")
check.eq(M.checkpoint_weights("GPU Num taken as TP. Qwen FP8 checkpoint read as fp8-b128x128"), "fp8-b128x128",
         "the Qwen speed benchmark's FP8 rows")
check.eq(M.checkpoint_weights("ModelOpt FP8 checkpoint (the document's model lists)"), "fp8", "ModelOpt FP8")
check.eq(M.checkpoint_weights("trtllm-serve nvidia/Qwen3-235B-A22B-FP8"), "fp8", "nvidia/Qwen3-235B-A22B-FP8")
check.eq(M.checkpoint_weights("`vllm serve Qwen/Qwen3-32B-AWQ` and Qwen/Qwen3-14B"), nil, "no FP8 checkpoint")
check.eq(M.checkpoint_weights("RedHatAI/Qwen3-32B-FP8-dynamic"), nil, "not Qwen's own")
check.error("names a Qwen FP8 checkpoint (Qwen/...-FP8: fine-grained block FP8, 128 x 128) and an NVIDIA "
            .. "ModelOpt FP8 checkpoint (nvidia/...-FP8: quant_algo FP8, per-tensor): name the one the row ran",
            M.checkpoint_weights,
            "Qwen/Qwen3-32B-FP8 against nvidia/Qwen3-32B-FP8")
local q = {model = "qwen3-14b", weights = "fp8",
           notes = "Serving command: `python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8`"}
msg = corpus(header .. "\n" .. line(q) .. "\n")
assert(msg:find("x.csv:2: column 'weights': the row's notes and table name a Qwen FP8 checkpoint "
                .. "(Qwen/...-FP8: fine-grained block FP8, 128 x 128): must be 'fp8-b128x128', got 'fp8'", 1, true), msg)
msg = corpus(header .. "\n" .. line{model = "qwen3-235b-a22b", weights = "fp8-b128x128",
                                    notes = "ModelOpt FP8 checkpoint"} .. "\n")
assert(msg:find("x.csv:2: column 'weights': the row's notes and table name an NVIDIA ModelOpt FP8 "
                .. "checkpoint (quant_algo FP8, per-tensor): must be 'fp8', got 'fp8-b128x128'", 1, true), msg)
-- results*.csv and ratchet.csv are not corpus files
os.execute("rm -f " .. bad .. "/*.csv")
for _, name in ipairs{"results.csv", "results-old.csv", "ratchet.csv", "b.csv", "a.csv"} do
  local w = assert(io.open(bad .. "/" .. name, "wb"))
  w:write(header, "\n")
  w:close()
end
check.eq(table.concat(M.files(bad), " "), "a.csv b.csv", "corpus files")
os.execute("rm -r " .. bad)

-- trtllm-bench's own limits, counted by hand (tensorrt_llm/bench/build/
-- tuning.py): Llama 3.1 8B FP8 with FP8 KV on one H100 at 1000/1000 and KV
-- fraction 0.95: 2 x 32 layers x 8 heads x 128 x 1 byte = 65536 bytes a
-- token, the engine 8.03e9 x 1 byte; (NVML's 81559 MiB - engine) x 0.95 / (65536 x
-- 2000) requests, rounded up to 128s above 256; tokens = that x 2 -> at least
-- 2048
local h100 = kv.gpu("h100-sxm")
local kvmax = (81559 * 2^20 / 2^30 - kv.model("llama-3.1-8b").params / 2^30) * 0.95
              / (65536 / 2^30 * 2000)
local want = 128 * math.ceil(kvmax / 128)
local o = M.options{model = "llama-3.1-8b", gpu = "h100-sxm", tp = 1, pp = 1, budget = "trtllm",
                    engine = "tensorrt-llm", engine_version = "", weights = "fp8", kv = "fp8",
                    utilization = 0.95, prompt = 1000, output = 1000, requests = 10,
                    max_num_seqs = "trtllm-bench", max_num_batched_tokens = "trtllm-bench",
                    output_stop = "fixed", measured = {}}
assert(kvmax > 256 and kvmax < 1024, "the hand count's branch")
check.eq(o.max_num_seqs, math.tointeger(want), "trtllm-bench max_batch_size")
check.eq(o.max_num_batched_tokens, 2048, "trtllm-bench max_num_tokens (2 x kv_max below 2048)")
check.eq(o.engine, "trtllm", "engine")

-- and of an MXFP4 checkpoint (issue 18): trtllm-bench's param_count is the
-- checkpoint's safetensors element count (bench/build/dataclasses.py
-- get_param_count), its bytes an element 2 (quant_algo W4A16_MXFP4 or
-- W4A8_MXFP4_*, not in tuning.py's BYTES_PER_ELEM). gpt-oss-120b: 36 x 128
-- experts x 3 x 2880 x 2880 = 114661785600 expert weights, two a uint8
-- element and a uint8 scale a 32 = 60914073600 elements, the other
-- 2167371072 parameters bf16, an element each: 63081444672 elements, 2
-- bytes each = 117.5 GiB (not 116.8e9 x 2 = 217.6 GiB, more than either
-- GPU). KV a token 2 x 36 layers x 8 heads x 64 x (1 byte fp8 | 2 bf16).
local elements = 114661785600 // 2 + 114661785600 // 32 + 2167371072
check.eq(elements, 63081444672, "gpt-oss-120b's checkpoint elements")
local function oss(gpu, kvname, per_token)
  local kvmax = (M.nvml_total_mib[gpu] * 2^20 / 2^30 - elements * 2 / 2^30) * 0.95 / (per_token / 2^30 * 2048)
  local r = M.options{model = "gpt-oss-120b", gpu = gpu, tp = 1, pp = 1, ep = 1, budget = "trtllm",
                      engine = "tensorrt-llm", engine_version = "", weights = "native", kv = kvname,
                      utilization = 0.95, prompt = 1024, output = 1024, requests = 10,
                      max_num_seqs = "trtllm-bench", max_num_batched_tokens = "trtllm-bench",
                      output_stop = "fixed", measured = {}}
  return kvmax, r.max_num_seqs, r.max_num_batched_tokens
end
-- GB200: (185.03 - 117.50) GiB x 0.95 / (36864 B x 2048) = 912 requests:
-- 128 ceil(912 / 128) = 1024; tokens 2 x 912 -> 2048
local kvmax, bs, bt = oss("gb200", "fp8", 2 * 36 * 8 * 64)
assert(kvmax > 896 and kvmax < 1024, "gb200: the hand count's branch, got " .. kvmax)
check.eq(bs, 1024, "gpt-oss-120b gb200 trtllm-bench max_batch_size")
check.eq(bt, 2048, "gpt-oss-120b gb200 trtllm-bench max_num_tokens")
-- H200: (140.40 - 117.50) GiB x 0.95 / (73728 B x 2048) = 155 requests:
-- 32 ceil(151 / 32) = 160; tokens 2 x 151 -> 2048
kvmax, bs, bt = oss("h200", "bf16", 2 * 36 * 8 * 64 * 2)
assert(kvmax > 128 and kvmax < 160, "h200: the hand count's branch, got " .. kvmax)
check.eq(bs, 160, "gpt-oss-120b h200 trtllm-bench max_batch_size")
check.eq(bt, 2048, "gpt-oss-120b h200 trtllm-bench max_num_tokens")

-- and the GPU memory trtllm-bench sizes from (issue 18): bench/build/utils.py
-- get_device_memory is NVML's total (nvidia-smi's), 143771 MiB on an H200
-- (NVIDIA/cuda-samples issue 311), not the catalog's CUDA total (143156
-- MiB). gpt-oss-120b, bf16 KV, 1424/1024: (143771 MiB = 140.40 GiB - 117.50)
-- x 0.95 / (73728 B x 2448) = 129.4 requests: 32 ceil(129.4 / 32) = 160
-- (at the CUDA total, 139.80 GiB: 126.0 requests, 128); tokens 129.4 x (1 +
-- 1424 / 1024) = 309 -> 2048 (1424 + 160 below it).
check.eq(M.nvml_total_bytes(kv.gpu("h200")), 143771 * 1048576, "h200: NVML's total, nvidia-smi's MiB")
check.eq(M.nvml_total_bytes(kv.gpu("b200")), 183359 * 1048576, "b200: NVML's total")
check.eq(M.nvml_total_bytes(kv.gpu("h100-sxm")), 81559 * 1048576, "h100-sxm: NVML's total")
check.eq(M.nvml_total_bytes(kv.gpu("gb200")), kv.gpu("gb200").visible_bytes, "gb200: the catalog's is nvidia-smi's")
check.eq(M.nvml_total_bytes(kv.gpu("l4")), kv.gpu("l4").visible_bytes, "a GPU with no NVML total read: the catalog's")
kvmax = (143771 * 2^20 / 2^30 - elements * 2 / 2^30) * 0.95 / (73728 / 2^30 * 2448)
assert(kvmax > 128 and kvmax < 130, "h200 1424/1024: the hand count's branch, got " .. kvmax)
local r1424 = M.options{model = "gpt-oss-120b", gpu = "h200", tp = 1, pp = 1, ep = 1, budget = "trtllm",
                        engine = "tensorrt-llm", engine_version = "", weights = "native", kv = "bf16",
                        utilization = 0.95, prompt = 1424, output = 1024, requests = 10,
                        max_num_seqs = "trtllm-bench", max_num_batched_tokens = "trtllm-bench",
                        output_stop = "fixed", measured = {}}
check.eq(r1424.max_num_seqs, 160, "h200 1424/1024 trtllm-bench max_batch_size at NVML's total (128 at CUDA's)")
check.eq(r1424.max_num_batched_tokens, 2048, "h200 1424/1024 trtllm-bench max_num_tokens")

-- and the floor of trtllm-bench's PyTorch path without chunked prefill
-- (issue 18; benchmark/utils/general.py get_settings, pull request 5625,
-- from 1.0 here): max_num_tokens = max(tuned, max ISL + max_batch_size).
-- gpt-oss-120b on an H200, bf16 KV, 8192/1024: (140.40 - 117.50) GiB x 0.95
-- / (73728 B x 9216) = 34.4 requests: max_batch_size the floor 64; tokens 34.4 x
-- (1 + 8192 / 1024) = 309 -> 2048, raised to 8192 + 64 = 8256. A release
-- before the rule (0.20) or the TensorRT engine path keeps 2048.
local function oss8k(version)
  local r = M.options{model = "gpt-oss-120b", gpu = "h200", tp = 1, pp = 1, ep = 1, budget = "trtllm",
                      engine = "tensorrt-llm", engine_version = version, weights = "native", kv = "bf16",
                      utilization = 0.95, prompt = 8192, output = 1024, requests = 10,
                      max_num_seqs = "trtllm-bench", max_num_batched_tokens = "trtllm-bench",
                      output_stop = "fixed", measured = {}}
  return r.max_num_seqs, r.max_num_batched_tokens
end
kvmax = (143771 * 2^20 / 2^30 - elements * 2 / 2^30) * 0.95 / (73728 / 2^30 * 9216)
assert(kvmax > 34 and kvmax < 35, "h200 8192/1024: the hand count's branch, got " .. kvmax)
bs, bt = oss8k("")
check.eq(bs, 64, "8192/1024 trtllm-bench max_batch_size (newest release, pytorch)")
check.eq(bt, 8256, "8192/1024 trtllm-bench max_num_tokens: max ISL 8192 + max_batch_size 64")
bs, bt = oss8k("1.0 (pytorch backend)")
check.eq(bt, 8256, "8192/1024 trtllm-bench max_num_tokens under 1.0")
bs, bt = oss8k("0.20 (pytorch backend)")
check.eq(bt, 2048, "8192/1024 trtllm-bench max_num_tokens under 0.20 (before pull request 5625)")
check.eq(M.bench_isl_floor("1.0", "tensorrt"), false, "the TensorRT engine path has no such floor")
check.eq(M.bench_isl_floor("0.21", "pytorch"), false, "0.21: not counted")
check.eq(M.bench_isl_floor("1.2", "pytorch"), true, "1.2")

-- the serving command's --async-scheduling in the notes (README.md): only a
-- whole word inside a back-quoted vLLM server command; the last one wins
check.eq(M.notes_async_scheduling("Serving command: `vllm serve m --async-scheduling -tp 2`. x"), true,
         "--async-scheduling")
check.eq(M.notes_async_scheduling("`vllm serve m --async-scheduling --no-async-scheduling`"), false,
         "--no-async-scheduling last")
check.eq(M.notes_async_scheduling("`python -m vllm.entrypoints.openai.api_server --async-scheduling`"),
         true, "the entrypoint module")
check.eq(M.notes_async_scheduling("vLLM --async-scheduling was on"), nil, "prose: not a command")
check.eq(M.notes_async_scheduling("`python3 -m sglang.launch_server --async-scheduling`"), nil,
         "not vLLM's command")
check.eq(M.notes_async_scheduling("`vllm serve m --async-scheduling-x`"), nil, "not the whole word")
check.eq(M.notes_async_scheduling(nil), nil, "no notes")
local arow = {model = "llama-3.1-8b", gpu = "h100-sxm", tp = 1, pp = 1, budget = "vllm", engine = "vllm",
              engine_version = "0.10.2", weights = "native", kv = "auto", prompt = 100, output = 100,
              requests = 10, max_concurrency = 1, output_stop = "fixed", measured = {},
              notes = "Serving command: `vllm serve meta-llama/Llama-3.1-8B --async-scheduling`."}
check.eq(M.options(arow).async_scheduling, true, "a row's command: async_scheduling")
arow.notes = ""
check.eq(M.options(arow).async_scheduling, nil, "no command: the release's default")

-- the command's --enforce-eager in the notes (README.md): a whole word inside
-- a back-quoted vLLM server or offline-benchmark command
check.eq(M.notes_enforce_eager("`vllm serve m --enforce-eager -tp 2`"), true, "server --enforce-eager")
check.eq(M.notes_enforce_eager("Offline: `benchmark_throughput.py --backend vllm --enforce-eager --num-prompts 8`"),
         true, "benchmark_throughput.py --enforce-eager")
check.eq(M.notes_enforce_eager("`python -m vllm.entrypoints.openai.api_server --enforce-eager`"), true,
         "the entrypoint module")
check.eq(M.notes_enforce_eager("the run was --enforce-eager"), nil, "prose: not a command")
check.eq(M.notes_enforce_eager("`python3 -m sglang.launch_server --enforce-eager`"), nil, "not vLLM's command")
check.eq(M.notes_enforce_eager("`vllm serve m --enforce-eager-x`"), nil, "not the whole word")
check.eq(M.notes_enforce_eager(nil), nil, "no notes")
-- SGLang's --disable-cuda-graph, in a command that runs SGLang's engine
check.eq(M.notes_disable_cuda_graph("`python3 -m sglang.launch_server --model m --tp 8 --disable-cuda-graph`"),
         true, "launch_server --disable-cuda-graph")
check.eq(M.notes_disable_cuda_graph("`vllm serve m --disable-cuda-graph`"), nil, "not SGLang's command")
check.eq(M.notes_disable_cuda_graph("`python3 -m sglang.launch_server --disable-cuda-graph-padding`"), nil,
         "not the whole word")
check.eq(M.notes_disable_cuda_graph(nil), nil, "no notes")
-- and its --disable-overlap-schedule (issue 18)
check.eq(M.notes_disable_overlap_schedule("`python3 -m sglang.launch_server --model m --disable-overlap-schedule`"),
         true, "launch_server --disable-overlap-schedule")
check.eq(M.notes_disable_overlap_schedule("`python3 -m sglang.bench_serving --disable-overlap-schedule`"), nil,
         "the client is not SGLang's engine")
check.eq(M.notes_disable_overlap_schedule("run with --disable-overlap-schedule"), nil, "prose: not a command")
check.eq(M.notes_disable_overlap_schedule(nil), nil, "no notes")
-- --max-seq-len-to-capture N from a vLLM command, as --enforce-eager
check.eq(M.notes_max_seq_len_to_capture("`vllm serve m -tp 8 --max-seq-len-to-capture 16384 --foo`"), 16384,
         "server --max-seq-len-to-capture 16384")
check.eq(M.notes_max_seq_len_to_capture("`python -m vllm.entrypoints.openai.api_server --max_seq_len_to_capture=4096`"),
         4096, "underscores and =N")
check.eq(M.notes_max_seq_len_to_capture("Offline: `benchmark_throughput.py --max-seq-len-to-capture 2048 "
                                        .. "--max-seq-len-to-capture 32768`"), 32768, "the last one wins")
check.eq(M.notes_max_seq_len_to_capture("the run set --max-seq-len-to-capture 16384"), nil, "prose: not a command")
check.eq(M.notes_max_seq_len_to_capture("`python3 -m sglang.launch_server --max-seq-len-to-capture 16384`"), nil,
         "not vLLM's command")
check.eq(M.notes_max_seq_len_to_capture("`vllm serve m --max-seq-len-to-capture-x 16384`"), nil, "not the flag")
check.eq(M.notes_max_seq_len_to_capture("`vllm serve m --max-seq-len-to-capture`"), nil, "no value")
check.eq(M.notes_max_seq_len_to_capture(nil), nil, "no notes")
do
  local on, dp = M.notes_dp_attention("`python3 -m sglang.launch_server --model m --tp 8 --enable-dp-attention`")
  check.eq(on, true, "SGLang server --enable-dp-attention")
  check.eq(dp, nil, "no --dp: the release's rule")
  on, dp = M.notes_dp_attention("`python -m sglang.launch_server --tp 8 --enable-dp-attention --dp 2`")
  check.eq(dp, 2, "--dp 2")
  on, dp = M.notes_dp_attention("`python -m sglang.bench_offline_throughput --dp-size=4 --enable-dp-attention`")
  check.eq(dp, 4, "offline benchmark --dp-size=4")
  on, dp = M.notes_dp_attention("`python -m sglang.launch_server --data-parallel-size 2 --dp-size 8 --enable-dp-attention`")
  check.eq(dp, 8, "the last dp size wins")
  check.eq(M.notes_dp_attention("the server ran --enable-dp-attention"), nil, "prose: not a command")
  check.eq(M.notes_dp_attention("`python -m sglang.bench_serving --enable-dp-attention`"), nil, "the client: not the server")
  check.eq(M.notes_dp_attention("`vllm serve m --enable-dp-attention`"), nil, "not SGLang's command")
  check.eq(M.notes_dp_attention("`python -m sglang.launch_server --enable-dp-attention-x`"), nil, "not the whole word")
  check.eq(M.notes_dp_attention(nil), nil, "no notes")
  local srow = {engine = "sglang", engine_version = "0.4.1", budget = "sglang", model = "deepseek-v3",
                gpu = "h200", tp = 8, pp = 1, kv = "bf16", prompt = 1024, output = 1024, requests = 10,
                rate = 1, output_stop = "fixed", measured = {},
                notes = "server `python3 -m sglang.launch_server --tp 8 --enable-dp-attention`"}
  local o = M.options(srow)
  check.eq(o.enable_dp_attention, true, "an SGLang 0.4.1 row's command: enable_dp_attention")
  check.eq(o.data_parallel_size, 8, "SGLang 0.4.1 without --dp: dp_size = tp_size")
  srow.notes = "server `python3 -m sglang.launch_server --tp 8 --enable-dp-attention --dp 4`"
  check.eq(M.options(srow).data_parallel_size, 4, "the command's --dp")
  srow.engine_version, srow.notes = "0.5.2", "server `python3 -m sglang.launch_server --tp 8 --enable-dp-attention`"
  check.eq(M.options(srow).enable_dp_attention, nil, "SGLang 0.5 without --dp: dp size 1, no DP attention")
  srow.engine_version, srow.notes = "0.4.1", "the server ran with --enable-dp-attention"
  check.eq(M.options(srow).enable_dp_attention, nil, "prose sets nothing")
end
arow.notes = "Offline: `benchmark_throughput.py --backend vllm --model m --enforce-eager`."
check.eq(M.options(arow).enforce_eager, true, "a row's command: enforce_eager")
arow.engine, arow.notes = "nim", "`vllm serve m --enforce-eager`"
check.eq(M.options(arow).enforce_eager, nil, "a NIM row under budget vllm: not vLLM's flag")
arow.engine, arow.notes = "vllm", ""
check.eq(M.options(arow).enforce_eager, nil, "no command: graphs as the release captures them")
-- a row that ran without chunked prefill sets max_num_batched_tokens itself
-- (vLLM 0.6's default then, max(max_model_len, 2048)): the MI300X serving rows
for _, row in ipairs(M.rows) do
  if row.id == "dstack-405b-mi300x-meta-sharegpt-qps16" then
    check.eq(row.max_num_batched_tokens, 131072, "--enable-chunked-prefill=False: max(max_model_len, 2048)")
  end
end
-- GPUStack's Qwen3-32B H100 page: the FP8 run under "2. Quantization in
-- TensorRT-LLM" is TensorRT-LLM's (its summary chain and token count), not the
-- SGLang script pasted there
local trt_fp8
for _, row in ipairs(M.rows) do
  if row.id == "gs-qwen3-32b-h100-tensorrt-tp1-fp8-nochunk-sharegpt" then trt_fp8 = row end
  assert(row.id ~= "gs-qwen3-32b-h100-sglang-tp1-fp8-sharegpt", "the run recorded as SGLang's")
end
assert(trt_fp8, "the TensorRT-LLM FP8 run without chunked prefill")
check.eq(trt_fp8.engine, "tensorrt-llm", "section 2's FP8 run: TensorRT-LLM")
check.eq(trt_fp8.budget, "trtllm", "section 2's FP8 run: TensorRT-LLM's budget")

-- a `sharegpt:` row (vLLM's client on ShareGPT; prompt and output are the
-- run's means): both lengths drawn from kv.workload.sharegpt with those
-- means, not every request of the same length
local sg
for _, row in ipairs(M.rows) do
  if row.id == "gs-qwen3-14b-h100-vllm-tp1-sharegpt" then sg = row end
end
assert(sg and sg.notes:find("^sharegpt:"), "the ShareGPT row")
o = M.options(sg)
for _, k in ipairs{"prompt", "output"} do
  assert(getmetatable(o[k]) == kv.workload.Distribution, k .. " must be a distribution, got " .. tostring(o[k]))
  check.eq(o[k]:mean(), sg[k] + 0.0, "sharegpt row: mean " .. k)
  local v, differ = o[k]:sample(100, 1), false
  for i = 2, #v do differ = differ or v[i] ~= v[1] end
  assert(differ, "sharegpt row: " .. k .. " lengths all equal")
end

-- a row kvplan cannot express is skipped with its reason
local r = M.predict{model = "mixtral-8x7b", gpu = "h100-sxm", tp = 2, pp = 1, ep = 4, budget = "vllm",
                    engine = "vllm", engine_version = "", weights = "bf16", kv = "auto", prompt = 10,
                    output = 10, requests = 2, output_stop = "fixed", measured = {}}
assert(r.sim == nil and r.skipped:find("ep 4 with tp 2", 1, true), tostring(r.skipped))

-- ep on an SGLang row is SGLang's ep_size (ranks of the tp GPUs holding whole
-- experts), not vLLM's enable_expert_parallel
local ep_row = {model = "mixtral-8x7b", gpu = "h100-sxm", tp = 8, pp = 1, ep = 8, budget = "sglang",
                engine = "sglang", engine_version = "", weights = "bf16", kv = "auto", prompt = 10,
                output = 10, requests = 2, output_stop = "fixed", measured = {}}
o = M.options(ep_row)
check.eq(o.ep_size, 8, "SGLang row: ep is ep_size")
check.eq(o.enable_expert_parallel, nil, "SGLang row: not vLLM's enable_expert_parallel")
check.eq(kv.deploy{model = "mixtral-8x7b", gpu = "h100-sxm", tp = 8, budget = "sglang",
                   ep_size = o.ep_size}.sglang_ep, 8, "the deployment's SGLang EP")
-- on a TensorRT-LLM row ep is TensorRT-LLM's --ep_size (moe_ep_size x
-- moe_tp_size = tp): kv.deploy's ep_size under budget trtllm
ep_row.budget, ep_row.engine = "trtllm", "tensorrt-llm"
o = M.options(ep_row)
check.eq(o.ep_size, 8, "TensorRT-LLM row: ep is ep_size")
check.eq(o.enable_expert_parallel, nil, "TensorRT-LLM row: not vLLM's enable_expert_parallel")
check.eq(kv.deploy{model = "mixtral-8x7b", gpu = "h100-sxm", tp = 8, budget = "trtllm",
                   ep_size = o.ep_size}.sglang_ep, 8, "the deployment's TensorRT-LLM EP")
r = M.predict(ep_row)
assert(r.sim ~= nil and r.skipped == nil, tostring(r.skipped))

-- ITL: the mean gap between tokens over every request's tokens; with every
-- output the same length it is the mean TPOT
local itl
for _, fig in ipairs(M.figures) do if fig[1] == "itl_mean_ms" then itl = fig[3] end end
local s = kv.simulate{model = "llama-3.1-8b", gpu = "h100-sxm", requests = 50, prompt = 100,
                      output = 20, rate = 20, seed = 1}
assert(math.abs(itl(s) - s.tpot_ms.mean) < 1e-9 * s.tpot_ms.mean, "itl with equal outputs")
-- and by hand on two requests: gaps (e2e - ttft) summed over output - 1 summed
check.eq(itl{requests = 2, output_tokens = 2 + 10, e2e_ms = {mean = 60}, ttft_ms = {mean = 10}},
         (60 - 10) * 2 / 10, "itl by hand")
os.execute("rm -r " .. dir)
print("throughput ok")

-- a row without a release runs the release of its source's date (README.md,
-- "A row without a release"; issue 18), on made-up sources
do
  M.source_dates["made-up-2025"] = "2025-10-13"
  M.source_dates["made-up-2023"] = "2023-12-06"
  M.source_dates["made-up-bad"] = "13 October 2025"
  local v, note = M.release_of_date({source_id = "made-up-2025"}, "vllm")
  check.eq(v, "0.11", "a source of 2025-10-13: vLLM 0.11")
  check.eq(note, "2025-10-13 -> vllm 0.11", "its note")
  v, note = M.release_of_date({source_id = "made-up-2023"}, "vllm")
  check.eq(v, "0.6", "before vLLM 0.6: the oldest modelled")
  check.eq(note, "2023-12-06 -> vllm 0.6 (2023-12-06 is before vLLM 0.6 (2024-09-05), the oldest modelled)",
           "its note")
  v, note = M.release_of_date({source_id = "made-up-none"}, "vllm")
  check.eq(v, nil, "no date: the newest (nil)")
  check.eq(note, "no date read for the source", "its note")
  v, note = M.release_of_date({source_id = "made-up-2025"}, "trtllm")
  check.eq(v, nil, "no TensorRT-LLM release date: the newest (nil)")
  check.error("expected a date YYYY-MM-DD, got '13 October 2025'",
              function() M.release_of_date({source_id = "made-up-bad"}, "vllm") end)
  -- through M.options: an LMDeploy row (no release of its own, budget vllm)
  -- takes vLLM's release of its date; a row naming one keeps it
  local row = {engine = "lmdeploy", budget = "vllm", source_id = "made-up-2023", engine_version = "v0.1.0",
               model = "llama-3.1-8b", gpu = "h100-sxm", tp = 1, pp = 1, kv = "auto", weights = "native",
               prompt = 128, output = 128, requests = 8, notes = ""}
  check.eq(M.options(row).engine_version, "0.6", "LMDeploy of 2023-12-06: vLLM 0.6's rule")
  row.engine, row.engine_version, row.source_id = "vllm", "0.9.2", "made-up-2025"
  check.eq(M.options(row).engine_version, "0.9.2", "a named release is kept")
  row.engine_version = ""
  check.eq(M.options(row).engine_version, "0.11", "blank: the release of 2025-10-13")
  for _, k in ipairs{"made-up-2025", "made-up-2023", "made-up-bad"} do M.source_dates[k] = nil end
end
