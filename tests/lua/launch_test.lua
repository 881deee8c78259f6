-- tests/lua/launch_test.lua: kv.launch (stdlib/kvplan/launch.lua): every
-- emitted command reads back (launch.parse) as a deployment whose ledger is
-- the original's, field by field; a deployment kvplan predicts would not
-- start is never emitted; the flags carry the engines' own names.
local kv = require "kvplan"
local check = require "check"
local launch = kv.launch

local cases = {
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4},
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 2, kv = "fp8", weights = "fp8"},
  {model = "llama-3.1-8b", gpu = "l40s", max_model_len = 32768, block = 32, utilization = 0.85},
  {model = "llama-3.1-70b", gpu = "h200", tp = 2, pp = 2, max_num_seqs = 64,
   max_num_batched_tokens = 4096, prefix = 1000},
  {model = "qwen3-32b", gpu = "mi300x", kv = "fp8", max_model_len = 40960},
  {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6.3", enforce_eager = true},
  {model = "llama-3.1-8b", gpu = "h100-sxm", engine_version = "0.6.3", max_seq_len_to_capture = 4096},
  {model = "llama-3.1-8b", gpu = "h100-sxm", tp = 2, enable_lora = true, max_loras = 4,
   max_lora_rank = 64, max_cpu_loras = 8, fully_sharded_loras = true},
}

-- every case under every engine: emitted (or refused with a reason), and
-- the emitted text parses back to the same figures
local emitted = 0
for i, c in ipairs(cases) do
  local d = kv.deploy(c)
  for _, e in ipairs(launch.engines) do
    local text, info = launch.command(d, e, {replicas = 2})
    if text then
      emitted = emitted + 1
      local dl = info.deployment
      local opts, limits = launch.parse(text, e, {gpu = c.gpu, prefix = c.prefix})
      local same, why = launch.same(dl, opts, limits, info.limits)
      assert(same, string.format("case %d %s: %s\n%s", i, e, tostring(why), text))
      -- field by field, as the issue asks: KV budget bytes, blocks, concurrency, starts
      local a, b = dl:ledger(), kv.deploy(opts):ledger()
      check.eq(b.kv_budget, a.kv_budget, "kv_budget " .. e)
      check.eq(b.kv_blocks, a.kv_blocks, "kv_blocks " .. e)
      check.eq(b:max_concurrency(b.max_model_len), a:max_concurrency(a.max_model_len), "max_concurrency " .. e)
      check.eq(b:starts(), true, "starts " .. e)
      assert(a:starts(), "an emitted deployment starts")
    else
      assert(type(info) == "string" and #info > 0, "a refusal says why")
    end
  end
end
assert(emitted >= 20, "most cases emit: " .. emitted)

-- the engines' names, from the registry (no release: the newest vLLM
-- modelled, its default utilization 0.92 written out)
local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, kv = "fp8"}
local v = assert(launch.command(d, "vllm"))
assert(v:find("\nvllm serve meta-llama/Llama-3.1-70B \\\n", 1, true), v)
for _, f in ipairs{"--tensor-parallel-size 4", "--pipeline-parallel-size 1", "--max-model-len 131072",
                   "--gpu-memory-utilization 0.92", "--kv-cache-dtype fp8", "--max-num-seqs 1024",
                   "--max-num-batched-tokens 8192"} do
  assert(v:find(f, 1, true), f .. " in\n" .. v)
end
-- VLLM_USE_V1=0 (the V0 engine of 0.8 to 0.10) is written and read back
local d0 = kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine_version = "0.9", vllm_use_v1 = false}
local v0 = assert(launch.command(d0, "vllm"))
assert(v0:find("\nVLLM_USE_V1=0 vllm serve", 1, true), v0)
assert(launch.parse(v0, "vllm", {gpu = "h100"}).vllm_use_v1 == false, "read back")
-- --async-scheduling where the deployment's differs from its release's
-- default (0.11 waits, 0.20 on hides), read back; nothing at the default
do
  local function cmd(v, a)
    return assert(launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine_version = v,
                                           async_scheduling = a}, "vllm"))
  end
  local on = cmd("0.11", true)
  assert(on:find("--async-scheduling", 1, true), on)
  check.eq(launch.parse(on, "vllm", {gpu = "h100"}).async_scheduling, true, "--async-scheduling read back")
  assert(not cmd("0.11", false):find("async", 1, true), "0.11 false: the default, no flag")
  assert(not cmd("0.20", true):find("async", 1, true), "0.20 true: the default, no flag")
  local off = cmd("0.20", false)
  assert(off:find("--no-async-scheduling", 1, true), off)
  check.eq(launch.parse(off, "vllm", {gpu = "h100"}).async_scheduling, false,
           "--no-async-scheduling read back")
end
local s = assert(launch.command(d, "sglang"))
for _, f in ipairs{"--model-path meta-llama/Llama-3.1-70B", "--tp-size 4", "--context-length 131072",
                   "--mem-fraction-static 0.85", "--kv-cache-dtype fp8_e4m3", "--max-running-requests",
                   "--chunked-prefill-size"} do
  assert(s:find(f, 1, true), f .. " in\n" .. s)
end
local t = assert(launch.command(d, "trtllm"))
for _, f in ipairs{"trtllm-serve meta-llama/Llama-3.1-70B", "--backend pytorch", "--tp_size 4",
                   "--max_seq_len 131072", "--max_batch_size 2048", "--max_num_tokens 8192",
                   "kv_cache_config:\n  free_gpu_memory_fraction: 0.9\n  dtype: fp8\n",
                   "--extra_llm_api_options extra_llm_api_options.yaml"} do
  assert(t:find(f, 1, true), f .. " in\n" .. t)
end
local k = assert(launch.command(d, "k8s", {replicas = 3}))
for _, f in ipairs{"kind: Deployment", "replicas: 3", 'image: vllm/vllm-openai:v0.29.0',
                   '- "--tensor-parallel-size"\n        - "4"', "nvidia.com/gpu: 4"} do
  assert(k:find(f, 1, true), f .. " in\n" .. k)
end
check.eq(launch.command(d, "k8s", {replicas = 3}), k, "deterministic text")
local amd = assert(launch.command(kv.deploy{model = "llama-3.1-70b", gpu = "mi300x", tp = 2}, "k8s"))
assert(amd:find("amd.com/gpu: 2", 1, true) and not amd:find("nvidia.com", 1, true), amd)

-- TensorRT-LLM's moe_config.backend (moe_backend) is a YAML section kvplan
-- does not write: refused, not dropped
do
  local mb = kv.deploy{model = "qwen3-30b-a3b", gpu = "b200", weights = "nvfp4", engine = "trtllm",
                       moe_backend = "trtllm"}
  local text, why = launch.command(mb, "trtllm")
  check.eq(text, nil, "moe_backend: no command")
  assert(why:find("moe_backend", 1, true) and why:find("does not write", 1, true), why)
end

-- never emitted: a deployment that would not start, with the refusal
local big = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 1}
for _, e in ipairs(launch.engines) do
  local text, why = launch.command(big, e)
  check.eq(text, nil, "no command for a deployment that does not start (" .. e .. ")")
  assert(why:find("would not start", 1, true) and why:find("weights", 1, true), why)
end
-- vLLM's max_model_len check: the model's context does not fit one request
local long = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 2, utilization = 0.6}
local ok, note = long:ledger():starts()
assert(not ok, "the check refuses this deployment: " .. tostring(note))
local text, why = launch.command(long, "vllm")
check.eq(text, nil, "vLLM's startup check refuses it")
assert(why:find(note, 1, true), why)
-- TensorRT-LLM is NVIDIA's
local _, w2 = launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "mi300x"}, "trtllm")
assert(w2:find("NVIDIA", 1, true), w2)
-- settings no command carries are refused, not dropped
local _, w3 = launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm",
                                       evict = {sinks = 4, recent = 1000}}, "vllm")
assert(w3:find("evict", 1, true), w3)
local _, w4 = launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", weights = "int4-g128"}, "vllm")
assert(w4:find("quantized", 1, true), w4)
check.error("unknown engine 'vlm' (expected vllm, sglang, trtllm or k8s) (did you mean 'vllm'?)",
            launch.command, d, "vlm")

-- a changed flag reads back as another deployment: the check can fail
local opts, limits = launch.parse(v, "vllm", {gpu = "h100-sxm"})
assert(launch.same(d:with{engine = "vllm"}, opts, limits))
local changed = v:gsub("%-%-gpu%-memory%-utilization 0%.92", "--gpu-memory-utilization 0.8")
local o2, l2 = launch.parse(changed, "vllm", {gpu = "h100-sxm"})
local same, diff = launch.same(d:with{engine = "vllm"}, o2, l2)
check.eq(same, false, "utilization 0.8 is another deployment")
assert(diff:find("^kv_budget"), diff)
check.eq(o2.tp, 4, "tensor_parallel_size read as tp")
check.eq(o2.utilization, 0.8, "gpu_memory_utilization read as utilization")
-- the comment's gpu= and engine_version= stand in for a base
local o3 = launch.parse(v, "vllm")
check.eq(o3.gpu, "h100-sxm", "gpu from the comment")
check.eq(o3.engine_version, "0.29", "engine_version from the comment (the release d ran: the newest)")
-- SGLang's and TensorRT-LLM's running-request caps are the scheduler's
-- enforce_eager is SGLang's --disable-cuda-graph, written and read back
do
  local de = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang", enforce_eager = true}
  local se = assert(launch.command(de, "sglang"))
  assert(se:find("--disable-cuda-graph", 1, true), se)
  check.eq(launch.parse(se, "sglang", {gpu = "h100-sxm"}).enforce_eager, true, "--disable-cuda-graph read back")
  assert(not assert(launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang"},
                                   "sglang")):find("disable-cuda-graph", 1, true), "not written unless given")
  -- disable_overlap_schedule is SGLang's --disable-overlap-schedule (issue 18)
  local dn = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", budget = "sglang",
                       disable_overlap_schedule = true}
  local sn = assert(launch.command(dn, "sglang"))
  assert(sn:find("--disable-overlap-schedule", 1, true), sn)
  check.eq(launch.parse(sn, "sglang", {gpu = "h100-sxm"}).disable_overlap_schedule, true,
           "--disable-overlap-schedule read back")
  assert(not se:find("disable-overlap-schedule", 1, true), "not written unless given")
end
local _, ls = launch.parse(s, "sglang", {gpu = "h100-sxm"})
assert(ls.max_num_seqs and ls.max_num_seqs > 0, "max_running_requests read as a limit")
-- bad input
check.error("unknown vllm flag '--tensor-parallel'", launch.parse,
            "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel 2", "vllm")
check.error("expected 'serve'", launch.parse, "vllm run x", "vllm")
check.error("must be an integer, got 'two'", launch.parse,
            "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size two", "vllm")
check.error("sets 'tp' a second time", launch.parse,
            "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --tensor_parallel_size 2", "vllm")
-- --revision names the snapshot: read back as model=ORG/NAME@REV (the local
-- cache's model, as model= revision= names it)
local rv = launch.parse("vllm serve meta-llama/Llama-3.1-8B --revision abc123 --tensor-parallel-size 2", "vllm")
check.eq(rv.model, "meta-llama/Llama-3.1-8B@abc123", "--revision read back into the model")
check.eq(rv.tp, 2, "the flags after --revision")
check.error("flag '--revision' given a second time", launch.parse,
            "vllm serve meta-llama/Llama-3.1-8B --revision a --revision b", "vllm")
check.error("flag '--revision' needs a value", launch.parse, "vllm serve meta-llama/Llama-3.1-8B --revision", "vllm")
check.error("needs a model given as ORG/NAME, got 'meta-llama/Llama-3.1-8B@a'", launch.parse,
            "vllm serve meta-llama/Llama-3.1-8B@a --revision b", "vllm")
print("launch_test: ok (" .. emitted .. " commands read back)")

-- a ranked candidate's commands (launch.emit): replicas, and one command a
-- pool of a disaggregated candidate with its KV role
local c = {deployment = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4}, replicas = 3}
local e1 = assert(launch.emit(c, "vllm"))
assert(e1:find("^# 3 replicas of\n# kvplan vllm"), e1)
assert(assert(launch.emit(c, "k8s")):find("\n  replicas: 3\n", 1, true), "k8s replicas")
local dis = {deployment = c.deployment,
             prefill = {gpu = "h200", tp = 2, replicas = 2}, decode = {gpu = "h100-sxm", tp = 4, replicas = 3}}
local e2 = assert(launch.emit(dis, "vllm"))
assert(e2:find("# prefill pool: 2 replica(s) of\n# kvplan vllm gpu=h200", 1, true), e2)
assert(e2:find('--kv-transfer-config \'{"kv_connector": "NixlConnector", "kv_role": "kv_producer"}\'', 1, true), e2)
assert(e2:find("# decode pool: 3 replica(s) of\n# kvplan vllm gpu=h100-sxm", 1, true), e2)
assert(e2:find('"kv_role": "kv_consumer"', 1, true), e2)
local e3 = assert(launch.emit(dis, "sglang"))
assert(e3:find("--disaggregation-mode prefill", 1, true) and e3:find("--disaggregation-mode decode", 1, true), e3)
local k2 = assert(launch.emit(dis, "k8s"))
assert(k2:find("name: llama-3.1-70b-h200-prefill", 1, true) == nil, "DNS names")
assert(k2:find("name: llama-3-1-70b-h200-prefill\n", 1, true) and k2:find("\n---\n", 1, true), k2)
local _, w5 = launch.emit(dis, "trtllm")
assert(w5:find("^prefill pool: a disaggregated prefill pool needs trtllm%-serve"), w5)
local _, lr = launch.parse(e2:match("# prefill pool.-\n(.-)\n# decode"), "vllm", {gpu = "h200"})
check.eq(lr.role, "prefill", "the KV role read back")
-- a pool that cannot start is no command
local _, w6 = launch.emit({deployment = c.deployment, prefill = {tp = 1}, decode = {tp = 4}}, "vllm")
assert(w6:find("^prefill pool: vLLM would not start"), w6)
print("launch_test: emit ok")
-- SGLang's attention DP and EP: the server's dp_size, --enable-dp-attention
-- and --ep-size written and read back; the limits are the server's, each
-- of the 8 ranks taking an eighth (deploy.engine_limits)
local dq = kv.deploy{model = "qwen3-235b-a22b", gpu = "h200", tp = 8, max_model_len = 8192,
                     engine = "sglang", dp_size = 8, enable_dp_attention = true, ep_size = 8}
local sq, sinfo = assert(launch.command(dq, "sglang"))
for _, f in ipairs{"--tp-size 8", "--dp-size 8", "--enable-dp-attention", "--ep-size 8",
                   "on 8 x h200", "on each of 8 DP ranks"} do
  assert(sq:find(f, 1, true), f .. " in\n" .. sq)
end
local sopts, slimits = launch.parse(sq, "sglang", {gpu = "h200"})
check.eq(sopts.enable_dp_attention, true, "read back: attention DP")
check.eq(sopts.ep_size, 8, "read back: ep_size")
check.eq((launch.same(sinfo.deployment, sopts, slimits, sinfo.limits)), true, "SGLang DP round trip")
local _, seqs = kv.deployments.engine_limits(dq, {max_num_seqs = 800})
check.eq(seqs, 100, "a given max_running_requests is the server's: 800 // 8 a rank")
-- chunked_prefill_size under attention DP: // dp_size in 0.5, // 2 in the
-- 0.4 releases (0.4.1's ServerArgs.__post_init__; engines.lua M.sglang
-- dp_attention_chunk_divisor)
check.eq((kv.deployments.engine_limits(dq, {max_num_batched_tokens = 16384})), 2048,
         "SGLang 0.5 attention DP 8: chunked_prefill_size // 8 a rank")
check.eq((kv.deployments.engine_limits(dq, {engine_version = "0.4.1", max_num_batched_tokens = 16384})),
         8192, "SGLang 0.4.1 attention DP 8: chunked_prefill_size // 2 a rank")
-- TensorRT-LLM's --ep_size is kv.deploy's ep_size, written and read back
local tq = assert(launch.command(kv.deploy{model = "qwen3-235b-a22b", gpu = "h200", tp = 8,
  max_model_len = 8192, engine = "trtllm", ep_size = 4}, "trtllm"))
assert(tq:find("--ep_size 4", 1, true), tq)
check.eq(launch.parse(tq, "trtllm").ep_size, 4, "read back: TensorRT-LLM's ep_size")
-- vLLM's DP: 8 engines of tp 1, 8 GPUs
local vq = assert(launch.command(kv.deploy{model = "qwen3-235b-a22b", gpu = "h200", tp = 1,
  max_model_len = 8192, data_parallel_size = 8, enable_expert_parallel = true}, "vllm"))
assert(vq:find("on 8 x h200", 1, true) and vq:find("--data-parallel-size 8", 1, true), vq)
-- TensorRT-LLM has no DP flag kvplan writes
check.eq((launch.command(kv.deploy{model = "qwen3-235b-a22b", gpu = "h200", tp = 1,
  max_model_len = 8192, data_parallel_size = 8, enable_expert_parallel = true}, "trtllm")), nil,
  "no TensorRT-LLM DP")

-- the round trip guards every command: a command that reads back as another
-- deployment is an error, never returned
local real_same = launch.same
local lmod = require "kvplan.launch"
lmod.same = function() return false, "kv_budget 1, read back 2" end
check.error("does not read back as the deployment (kv_budget 1, read back 2); a kvplan bug",
            launch.command, kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}, "vllm")
lmod.same = real_same
assert(launch.command(kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}, "vllm"))
print("launch_test: guard ok")

-- launch.winner: rank 1's command, or the first ranked one kvplan can write,
-- saying why the ones before it were passed over
local r1 = {rank = 1, gpu = "mi300x", tp = 1, deployment = kv.deploy{model = "llama-3.1-8b", gpu = "mi300x"}}
local r2 = {rank = 2, gpu = "h100-sxm", tp = 1, deployment = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}}
local wt, wc = launch.winner({r1, r2, {gpu = "l4", tp = 1, why = "not ranked"}}, "trtllm")
check.eq(wc, r2, "the first ranked candidate TensorRT-LLM runs")
assert(wt:find("^# rank 1 %(mi300x, tp 1%) not launched: TensorRT%-LLM runs on NVIDIA GPUs"), wt)
assert(wt:find("\n# rank 2:\n# kvplan trtllm gpu=h100-sxm", 1, true), wt)
local vt, vc = launch.winner({r1, r2}, "vllm")
check.eq(vc, r1, "rank 1 when its command can be written")
assert(vt:find("^# kvplan vllm gpu=mi300x"), vt)
local nt, nwhy = launch.winner({{gpu = "l4", tp = 1}}, "vllm")
check.eq(nt, nil, "nothing ranked, nothing launched")
check.eq(nwhy, "no deployment serves, so there is none to launch", "why")
print("launch_test: winner ok")

-- a disaggregated winner of kv.plan: one command a pool, each read back
local planned = kv.plan{model = "llama-3.1-8b", input = 8000, output = 200, rate = 4, tpot_ms = 20,
                        gpus = {"h100-sxm"}, tp = {1, 2}, modes = {"aggregated", "disaggregated"},
                        requests = 100}
local dwin
for _, c in ipairs(planned) do if c.rank and c.mode == "disaggregated" then dwin = c break end end
assert(dwin, "kv.plan ranks a disaggregated candidate here")
local dt = assert(launch.emit(dwin, "vllm"))
assert(dt:find(string.format("# prefill pool: %d replica(s) of\n", dwin.prefill.replicas), 1, true), dt)
assert(dt:find(string.format("# decode pool: %d replica(s) of\n", dwin.decode.replicas), 1, true), dt)
check.eq(select(2, dt:gsub("\nvllm serve ", "")), 2, "two vllm serve commands")
print("launch_test: plan's disaggregated winner ok")

-- a checkpoint path with a quote: the command quotes it as POSIX sh does
-- ('...'\''...'), and the read-back takes \' outside quotes as a quote
-- (it failed: "launch.parse: a quote is not closed in 'vllm serve ...'")
do
  local dq = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}
  local path = "/m/$(id);'\" x"
  for _, e in ipairs{"vllm", "sglang", "trtllm"} do
    local text = assert(launch.command(dq, e, {model_path = path}))
    assert(text:find("'/m/$(id);'\\''\" x'", 1, true), e .. ": the path quoted: " .. text)
  end
  check.eq(launch.parse("vllm serve a\\'b\\ c --tensor-parallel-size 1", "vllm",
                        {gpu = "h100-sxm", model = dq.model}).tensor_parallel_size or 1, 1, "backslashes read")
end
