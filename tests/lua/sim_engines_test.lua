-- tests/lua/sim_engines_test.lua: kv.simulate schedules each engine as it
-- schedules: its own limits (not the memory profile's), its own release
-- table, its own scheduler (SGLang's prefill and decode batches).
local kv = require "kvplan"
local check = require "check"

local base = {model = "llama-3.1-8b", gpu = "h100-sxm", weights = "fp8", kv = "fp8",
              requests = 200, prompt = 1000, output = 1000}
local function sim(extra)
  local o = {}
  for k, v in pairs(base) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return kv.simulate(o)
end

-- TensorRT-LLM 1.0: the runtime batch is max_batch_size (2048 by default,
-- BuildConfig), not the dummy run's one request; max_num_seqs caps it
local r = sim{engine = "trtllm", engine_version = "1.0"}
check.eq(r.max_num_seqs, 2048, "TensorRT-LLM 1.0: max_batch_size")
check.eq(r.max_num_batched_tokens, 8192, "TensorRT-LLM 1.0: max_num_tokens")
assert(r.throughput_tokens_s > 5000, "a batch of 200, not of 1: got " .. r.throughput_tokens_s)
check.eq(r.deployment.profile_seqs, 1, "the dummy run still sizes the memory profile")
local r64 = sim{engine = "trtllm", engine_version = "1.0", max_num_seqs = 64}
check.eq(r64.max_num_seqs, 64, "max_num_seqs (max_batch_size) given")
assert(r64.throughput_tokens_s < r.throughput_tokens_s, "64 at once is slower than 200")
check.eq(sim{engine = "trtllm", max_num_batched_tokens = 4096}.max_num_batched_tokens, 4096,
         "max_num_tokens given")
check.eq(sim{budget = "trtllm"}.max_num_seqs, 2048, "the budget alone: TensorRT-LLM's limits")
-- the deployment of a simulation given max_num_seqs rebuilds
for _, e in ipairs{{engine = "trtllm"}, {budget = "trtllm"}, {engine = "sglang"}} do
  e.max_num_seqs = 128
  local d = sim(e).deployment
  check.eq(d:with{}.budget, d.budget, "with{} after max_num_seqs (" .. d.budget .. ")")
  check.eq(d:with{tp = 2}.tp, 2, "with{tp = 2}")
end

-- each engine's version in its own table
local s43 = sim{engine = "sglang", engine_version = "0.4.3"}
check.eq(s43.deployment.engine_version, "0.4", "SGLang 0.4.3: the 0.4 row")
check.eq(s43.max_num_batched_tokens, 8192, "SGLang 0.4 on 80 GB: chunked_prefill_size 8192")
check.eq(sim{engine = "sglang", engine_version = "0.4.3", gpu = "l4"}.max_num_batched_tokens, 2048,
         "SGLang 0.4 under 25,000 MB: chunked_prefill_size 2048")
local sd4 = s43.deployment.sglang_defaults
check.eq(sd4.cuda_graph_max_bs, 160, "SGLang 0.4 on 80 GB: cuda_graph_max_bs 160")
check.eq(sd4.mem_fraction_static, 0.88, "SGLang 0.4 at tp 1: mem_fraction_static 0.88")
local l4 = kv.deploy{model = "llama-3.1-8b", gpu = "l4", engine = "sglang", engine_version = "0.4",
                     tp = 4}.sglang_defaults
check.eq(l4.cuda_graph_max_bs, 80, "SGLang 0.4 under 25,000 MB at tp 4: cuda_graph_max_bs 80")
check.eq(l4.mem_fraction_static, 0.85, "SGLang 0.4 at tp 4: 0.85")
check.eq(sim{engine = "sglang", engine_version = "0.5"}.max_num_batched_tokens,
         kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", engine = "sglang",
                   engine_version = "0.5"}.sglang_defaults.chunked_prefill_size,
         "SGLang 0.5: the memory heuristic's chunked_prefill_size")
check.eq(sim{engine = "trtllm", engine_version = "0.21.0"}.deployment.trtllm_backend, "tensorrt",
         "TensorRT-LLM 0.21: the engine path")
check.error("unknown TensorRT-LLM release '0.4' for field 'engine_version' (known: 0.5, 0.11, 0.14, 0.21, 1.0",
            sim, {engine = "trtllm", engine_version = "0.4"})
check.error("TensorRT-LLM release '0.10.0' for field 'engine_version' is not modelled: releases 0.8 to 0.10",
            sim, {engine = "trtllm", engine_version = "0.10.0"})
-- 0.5 to 0.7: build.py's engine, max_batch_size 8 and max_num_tokens 8 x 2048
local r05 = sim{engine = "trtllm", engine_version = "0.6.1"}
check.eq(r05.deployment.engine_version, "0.5", "TensorRT-LLM 0.6.1: the 0.5 row")
check.eq(r05.max_num_seqs, 8, "TensorRT-LLM 0.6.1: max_batch_size 8")
check.eq(r05.max_num_batched_tokens, 8 * 2048, "TensorRT-LLM 0.6.1: max_num_tokens 8 x 2048")
-- 0.14.0 had vLLM's limits; its own: trtllm-build's max_batch_size 2048 (256 in 0.11-0.13)
local r14 = sim{engine = "trtllm", engine_version = "0.14.0"}
check.eq(r14.deployment.engine_version, "0.14", "TensorRT-LLM 0.14.0: the 0.14 row")
check.eq(r14.max_num_seqs, 2048, "TensorRT-LLM 0.14: max_batch_size 2048")
check.eq(sim{engine = "trtllm", engine_version = "0.12.0"}.max_num_seqs, 256,
         "TensorRT-LLM 0.12: max_batch_size 256")
check.eq(sim{engine = "trtllm", engine_version = "0.17"}.max_num_batched_tokens, 8192,
         "TensorRT-LLM 0.17: max_num_tokens 8192")
check.error("unknown SGLang release '0.3.6' for field 'engine_version' (known: 0.4, 0.5",
            sim, {engine = "sglang", engine_version = "0.3.6"})
check.error("unknown vLLM version '0.5.4'", sim, {engine = "vllm", engine_version = "0.5.4"})

-- SGLang is scheduled as SGLang: prefill and decode batches apart
local sg = sim{engine = "sglang", requests = 300, prompt = 3000, output = 200}
check.eq(sg.scheduler, "sglang", "SGLang's scheduler by default")
local dir = check.tmpdir()
sg:timeline(dir .. "/sg.csv")
local mixed, prefill, decode = 0, 0, 0
local lines = 0
for line in io.lines(dir .. "/sg.csv") do
  lines = lines + 1
  if lines > 1 then
    local f = {}
    for x in line:gmatch("[^,]+") do f[#f + 1] = x end
    local tokens, pre = tonumber(f[8]), tonumber(f[9])
    if pre > 0 and pre < tokens then mixed = mixed + 1 end
    if pre > 0 then prefill = prefill + 1 else decode = decode + 1 end
  end
end
check.eq(mixed, 0, "no step mixes prefill and decode tokens")
assert(prefill > 0 and decode > 0, "prefill and decode steps both")
local vl = sim{engine = "sglang", requests = 300, prompt = 3000, output = 200, scheduler = "continuous"}
check.eq(vl.scheduler, "continuous", "scheduler= overrides the engine's")
assert(vl.steps ~= sg.steps, "vLLM's scheduler is not SGLang's")
check.eq(sim{engine = "vllm", scheduler = "sglang", requests = 20}.scheduler, "sglang",
         "SGLang's scheduler under another engine")
os.execute("rm -r " .. dir)
print("sim engines ok")

-- SGLang's DP attention schedules less conservatively: ServerArgs multiplies
-- schedule_conservativeness by 0.3 under enable_dp_attention (sgl-project/
-- sglang PR #2096, from 0.4.0 on; engines.lua M.sglang
-- dp_attention_conservativeness). Hand-counted: init 0.7 x 0.3 = 0.21, min
-- 0.21 x 0.14 = 0.0294, decay (0.21 - 0.0294) / 600 = 0.000301; without it
-- 0.7, 0.098, 0.602 / 600
do
  local engines = require "kvplan.engines"
  local function near(a, b, what) check.eq(math.abs(a - b) < 1e-12, true, what .. ": " .. a .. " ~ " .. b) end
  for _, v in ipairs{"0.4.1", "0.5"} do
    local row = engines.sglang_version(v)
    local i, m, dec = engines.sglang_new_token_ratios(row, true)
    near(i, 0.21, v .. " DP attention: init_new_token_ratio")
    near(m, 0.0294, v .. " DP attention: min_new_token_ratio")
    near(dec, 0.1806 / 600, v .. " DP attention: new_token_ratio_decay")
    i, m, dec = engines.sglang_new_token_ratios(row, false)
    near(i, 0.7, v .. " no DP attention: init_new_token_ratio")
    near(m, 0.098, v .. " no DP attention: min_new_token_ratio")
    near(dec, 0.602 / 600, v .. " no DP attention: new_token_ratio_decay")
  end
  -- a release row without the rule (none modelled: PR #2096 predates 0.4.0)
  local i = engines.sglang_new_token_ratios({max_prefill_tokens = 16384}, true)
  near(i, 0.7, "a row without dp_attention_conservativeness")
  -- kv.simulate applies it: the smaller reservation admits more, so long
  -- outputs retract more than with the rule taken off the 0.4 row
  local o = {model = "qwen3-235b-a22b", gpu = "h200", tp = 8, engine = "sglang",
             engine_version = "0.4.1", data_parallel_size = 8, enable_dp_attention = true,
             max_model_len = 8192, requests = 2000, prompt = 1000, output = 4000}
  local with = kv.simulate(o)
  local saved = engines.sglang["0.4"].dp_attention_conservativeness
  engines.sglang["0.4"].dp_attention_conservativeness = nil
  local without = kv.simulate(o)
  engines.sglang["0.4"].dp_attention_conservativeness = saved
  check.eq(with.num_preemptions > without.num_preemptions, true,
           "DP attention x 0.3: more retractions (" .. with.num_preemptions .. " against "
           .. without.num_preemptions .. ")")
  -- without enable_dp_attention (dp_size replicas) the ratio stays 0.7: the
  -- rule off the row changes nothing
  o.enable_dp_attention = nil
  local rep = kv.simulate(o).num_preemptions
  engines.sglang["0.4"].dp_attention_conservativeness = nil
  check.eq(kv.simulate(o).num_preemptions, rep, "dp_size replicas: no x 0.3")
  engines.sglang["0.4"].dp_attention_conservativeness = saved
end
