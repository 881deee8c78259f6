-- tests/lua/vllm_step_test.lua: under vLLM's budget rule a sliding window
-- holds ceil((W - 1 + step) / block) + 1 blocks a request, step the
-- scheduler's max_num_batched_tokens (SlidingWindowSpec.max_memory_usage_bytes,
-- vllm/v1/kv_cache_interface.py: vllm_config.scheduler_config.max_num_batched_tokens).
-- A deployment that does not give it runs vLLM's default (8192 for the OpenAI
-- server on an H100 from 0.10 on): kvplan startup and launch (which writes
-- --max-num-batched-tokens) count that, as vLLM's log does; kvplan's
-- deployment alone (fit, capacity) a step of 1, steady decode, and startup
-- says both.
local kv = require "kvplan"
local check = require "check"

-- Gemma-3-27B at max_model_len 32000, fp8 KV, one H100: 10 full layers and
-- 52 sliding ones (window 1024) make 7 groups of 10 (the sliding type
-- padded to 6 groups). A request takes 32000 / 16 = 2000 blocks in the full
-- group and cdiv(min(1023 + 8192, 32000), 16) + 1 = 577 in each sliding
-- group: 2000 + 6 x 577 = 5462 blocks; with a step of 1, cdiv(1024, 16) + 1
-- = 65: 2000 + 6 x 65 = 2390.
local base = {model = "gemma-3-27b", gpu = "h100-sxm", kv = "fp8", max_model_len = 32000}
local d = kv.deploy(base)
local l = d:ledger()
check.eq(d.profile_tokens, 8192, "vLLM 0.11's server default on an H100")
check.eq(d.max_num_batched_tokens, 1, "kvplan's deployment alone: steady decode")
check.eq(l.kv_groups, 7, "groups")
check.eq(math.floor(l.kv_blocks / l.vllm_max_concurrency + 0.5), 2390, "blocks a request at a step of 1")
local o = {}
for k, v in pairs(base) do o[k] = v end
o.max_num_batched_tokens = 8192
local lv = kv.deploy(o):ledger()
check.eq(lv.kv_blocks, l.kv_blocks, "the same pool")
check.eq(math.floor(lv.kv_blocks / lv.vllm_max_concurrency + 0.5), 5462, "blocks a request, vLLM's count")
check.eq(lv:max_concurrency(32000), (lv.kv_blocks - 1) // 5462, "max_concurrency")

-- kvplan launch writes the default (--max-num-batched-tokens 8192): the
-- command reads back, and its deployment is the one with the default given
for _, c in ipairs{{model = "gemma-3-27b", gpu = "h100-sxm", kv = "fp8", max_model_len = 32000},
                   {model = "gemma-3-27b", gpu = "l40s", tp = 2, kv = "fp8", max_model_len = 32000},
                   {model = "gpt-oss-20b", gpu = "h100-sxm", max_model_len = 32768}} do
  local dc = kv.deploy(c)
  local text, info = kv.launch.command(dc, "vllm")
  assert(text, info)
  local step = tonumber(text:match("%-%-max%-num%-batched%-tokens (%d+)"))
  check.eq(step, c.gpu == "l40s" and 2048 or 8192, "the default written (2048 below 70 GiB)")
  local g = {}
  for k, v in pairs(c) do g[k] = v end
  g.engine, g.max_num_batched_tokens = "vllm", step
  local lg = kv.deploy(g):ledger()
  check.eq(info.ledger:max_concurrency(info.ledger.max_model_len), lg:max_concurrency(lg.max_model_len),
           c.model .. " on " .. c.gpu .. ": launch's requests at once")
end
check.eq(kv.launch.command(kv.deploy(base), "vllm") ~= nil, true, "gemma launches")

-- kvplan startup prints vLLM's figure, 8192's, and says the steady decode's
local out = assert(io.popen((arg and arg[-1] or "build/kvplan") .. " startup model=gemma-3-27b gpu=h100-sxm kv=fp8 max_model_len=32000"))
local text = out:read("a")
out:close()
assert(text:find(string.format("Maximum concurrency for 32,000 tokens per request: %.2fx",
                               lv.vllm_max_concurrency), 1, true), text)
assert(text:find(string.format("it holds %d requests of 32000 tokens at once", lv:max_concurrency(32000)), 1, true), text)
assert(text:find(string.format("(%d requests in steady decode", l:max_concurrency(32000)), 1, true), text)

-- a MXFP4 model launches: the kernel kvplan derives is vLLM's own pick; a
-- kernel given is refused (no flag carries it)
local t2 = kv.launch.command(kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm", max_model_len = 32768}, "vllm")
assert(t2, "gpt-oss-20b launches")
local t3, why = kv.launch.command(kv.deploy{model = "gpt-oss-20b", gpu = "h100-sxm", max_model_len = 32768,
                                           mxfp4_backend = "triton"}, "vllm")
check.eq(t3, nil, "a given MXFP4 kernel")
assert(why:find("mxfp4_backend", 1, true), why)

-- a step given stays the step (a small one holds more requests)
o.max_num_batched_tokens = 2048
local l3 = kv.deploy(o):ledger()
assert(l3:max_concurrency(32000) > lv:max_concurrency(32000), "a step of 2048 holds more than 8192's")

print("vllm_step_test: ok")
