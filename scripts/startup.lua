-- scripts/startup.lua: what the engine will print when it starts a
-- deployment: the memory lines of its startup log in its own wording, as
-- kvplan predicts them, or the error it stops with and the largest
-- max_model_len that would start; then kvplan's ledger of one GPU beside them.
--
-- Run:  kvplan startup model=llama-3.1-8b gpu=h100 max_model_len=32768
--       kvplan startup model=llama-3.1-8b gpu=l4 engine=vllm engine_version=0.11
--       kvplan startup model=qwen3-32b gpu=h100 tp=2 engine=sglang
--
-- Arguments (key=value):
--   model        catalog id or alias (required; `kvplan models` lists them),
--                else a Hugging Face directory or config.json, else a repo
--                id ORG/NAME in the local Hugging Face cache ($HF_HUB_CACHE,
--                $HF_HOME/hub, ~/.cache/huggingface/hub; no network)
--   revision     with a repo id: the cache's snapshot of this branch, tag or
--                commit (default: the one refs/main names)
--   gpu          GPU id or alias (required; `kvplan gpus` lists them)
--   tp, pp       tensor-parallel size and pipeline stages (default 1)
--   kv           KV cache format (default auto: as the engine does with the
--                checkpoint)
--   weights      weight format (default native: the checkpoint's own)
--   engine       vllm or sglang (default vllm)
--   any other deployment field of the registry (docs/fields.md), under its
--                name or its engines' (max_model_len, engine_version,
--                utilization, max_num_seqs, max_num_batched_tokens, block,
--                kv_cache_memory_bytes, num_gpu_blocks_override, ...: also
--                max-model-len and gpu-memory-utilization as vLLM spells
--                them), checked as that field
--
-- Output (text): header lines "# key: value" that say what the log would not
-- (model, gpu, engine, version, tp, and that the figures are kvplan's
-- prediction), the engine's lines, then kvplan's ledger of the GPU that binds
-- (the tightest pipeline stage). The engine's lines are those its code logs
-- (figures it measures that kvplan does not predict, such as seconds, shown
-- as "..."):
--   vLLM (vllm/v1/worker/gpu_model_runner.py load_model, gpu_worker.py
--   determine_available_memory, vllm/v1/core/kv_cache_utils.py
--   _report_kv_cache_config and _check_enough_kv_cache_memory, read at
--   vllm-project/vllm 001cabc1be16):
--     Model loading took W GiB and ... seconds
--     Available KV cache memory: K GiB
--     GPU KV cache size: N tokens
--     Maximum concurrency for L tokens per request: Xx
--   or the ValueError it stops with ("No available memory for the cache
--   blocks ..." or "To serve at least one request with the models's max seq
--   len (L), (G GiB KV cache is needed, ..."), the estimated maximum model
--   length included; releases after 0.11 add the documentation link.
--   SGLang (python/sglang/srt/model_executor/model_runner.py): "KV Cache is
--   allocated. #tokens: N, K size: x GB, V size: y GB" (its GB are GiB), or
--   its RuntimeError "Not enough memory. Please try to increase
--   --mem-fraction-static." and the requests it cuts to its pool.
-- The text is a log `kvplan validate` reads: validating it gives kvplan's own
-- figures back (tests/run_cli.sh startup_validates).
-- Exit status 0 whether or not the engine starts (the answer is the output);
-- 1 for a deployment kvplan cannot evaluate, 2 for a bad argument.

local kv = require "kvplan"
local GiB = kv.units.GiB

local defaults = {
  model = kv.options.required "model=llama-3.1-8b", gpu = kv.options.required "gpu=h100-sxm",
  tp = 1, pp = 1, kv = "auto", weights = "native", engine = "vllm",
}
local fields = kv.options.deployment_fields(defaults) -- every other deployment field
local opt = kv.options(..., defaults)
if opt.engine ~= "vllm" and opt.engine ~= "sglang" then
  kv.options.bad("argument 'engine' must be 'vllm' or 'sglang' (TensorRT-LLM's startup lines are "
                 .. "not written by kvplan startup; kvplan ledger engine=trtllm has its figures), got '%s'",
                 kv.util.escape(opt.engine))
end
local o = kv.options.given_fields(opt, fields, {
  model = opt.model, gpu = opt.gpu, tp = opt.tp, pp = opt.pp, kv = opt.kv, engine = opt.engine,
  weights = opt.weights ~= "native" and opt.weights or nil,
})
local d = kv.deploy(o)
-- vLLM counts a sliding or chunked layer's blocks for its scheduler's
-- max_num_batched_tokens beyond the window (SlidingWindowSpec
-- max_memory_usage_bytes), its default when none is given: the figures it
-- logs are those of the deployment with that default given (as kvplan
-- launch writes it and kvplan validate reads a log); kvplan's deployment
-- alone counts a step of 1, steady decode
local step_note
if d.budget == "vllm" and o.max_num_batched_tokens == nil then
  local step = kv.deployments.engine_limits(d, d.options)
  local d2 = d:with{max_num_batched_tokens = step}
  if d2:ledger():max_concurrency(d2:ledger().max_model_len) ~= d:ledger():max_concurrency(d:ledger().max_model_len) then
    step_note = string.format("kvplan: its sliding or chunked layers hold blocks for max_num_batched_tokens %d "
                              .. "beyond the window, as vLLM counts them (%s in steady decode, "
                              .. "as kvplan fit and capacity count)", step,
                              kv.util.count_of(d:ledger():max_concurrency(d:ledger().max_model_len), "request"))
  end
  d = d2
end
local l = d:ledger()
local starts, why = d:starts()

-- numbers as the engines print them: thousands separators (f"{n:,}")
local function commas(n)
  local s = tostring(math.tointeger(n) or n)
  local sign, digits = s:match("^(%-?)(%d+)$")
  if digits == nil then return s end
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end
local function gib(b, places) return string.format("%." .. (places or 2) .. "f", b / GiB) end

local out = {}
local function line(fmt, ...) out[#out + 1] = string.format(fmt, ...) end
line("# source: kvplan startup %s: predicted, not measured (kvplan.deploy, ledger)", kv.version or "")
line("# model: %s", d.model.id)
line("# gpu: %s", d.gpu.id)
line("# engine: %s", d.budget)
line("# version: %s", d.engine_version or "latest")
line("# tp: %d", d.tp)
-- a V0 engine on a release that runs V1 by default (VLLM_USE_V1=0, or the
-- release's own fallback: d.vllm_v0_reason) prints V1's lines here, so the
-- header says which engine the figures are (kvplan validate reads it)
if d.budget == "vllm" and d.vllm_v0 and d.engine_version
   and require("kvplan.engines").vllm_version(d.engine_version).v1 then
  line("# vllm_use_v1: false")
end
if d.pp > 1 then line("# note: pp %d; the figures are the tightest stage's", d.pp) end

local mml = l.max_model_len
-- vLLM V1's init_device refuses before the weights load when the memory
-- others hold (system_memory) leaves less free than total x utilization
-- (engine/core/starts.c; gpu_worker.py at 35d5cda123ec), its words quoted
local free_refusal = d.budget == "vllm" and not starts and why
                     and why:match('%("(Free memory on device .-%))"%)')
if free_refusal then
  line("ValueError: %s. Decrease GPU memory utilization or reduce GPU memory used by other "
       .. "processes.", free_refusal)
elseif d.budget == "vllm" then
  line("Model loading took %s GiB and ... seconds", gib(l.weights, 4))
  if l.kv_budget <= 0 then
    line("ValueError: No available memory for the cache blocks. Try increasing "
         .. "`gpu_memory_utilization` when initializing the engine.%s", d.engine_version == "0.20"
         and " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details." or "")
  else
    line("Available KV cache memory: %s GiB", gib(l.kv_budget))
    -- --max-model-len auto: _auto_fit_max_model_len's lines (vllm/v1/core/
    -- kv_cache_utils.py at 002f10e0cfa1; the rule: engine/core/ledger.c)
    local derived = d.model.max_context
    if d.vllm_max_model_len_auto and l.vllm_starts and derived and mml >= derived then
      line("Auto-fit max_model_len: full model context length %d fits in available GPU memory",
           derived)
    elseif d.vllm_max_model_len_auto and l.vllm_starts and derived then
      line("Auto-fit max_model_len: reduced from %d to %d to fit in available GPU memory (%s GiB "
           .. "available for KV cache)", derived, mml, gib(l.kv_budget))
    end
    if d.vllm_max_model_len_auto and not l.vllm_starts then
      line("ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve "
           .. "even a single token. Try increasing `gpu_memory_utilization`.")
    elseif l.vllm_starts then
      line("GPU KV cache size: %s tokens", commas(l.vllm_kv_cache_tokens))
      line("Maximum concurrency for %s tokens per request: %.2fx", commas(mml), l.vllm_max_concurrency)
      -- a model with Mamba layers: max_num_seqs above the pool's blocks
      -- (engine/core/starts.c, vllm-project/vllm#38270), vLLM's words quoted
      local mamba = not starts and why and why:match('%("(max_num_seqs %(%d+%) exceeds available '
                                                     .. 'Mamba cache blocks.-)"%)')
      if mamba then line("ValueError: %s", mamba) end
    else
      local est = l.vllm_max_model_len
      line("ValueError: To serve at least one request with the models's max seq len (%d), (%s GiB KV "
           .. "cache is needed, which is larger than the available KV cache memory (%s GiB). %s"
           .. "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
           .. "initializing the engine.%s", mml, gib(l.vllm_kv_needed), gib(l.kv_budget),
           est > 0 and string.format("Based on the available memory, the estimated maximum model "
                                     .. "length is %d. ", est) or "",
           d.engine_version == "0.20" and " See https://docs.vllm.ai/en/latest/configuration/"
           .. "conserving_memory/ for more details." or "")
    end
  end
else -- sglang
  if l.kv_tokens <= 0 or not starts then
    line("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
  else
    local half = l.kv_tokens * l.kv_bytes_per_token / 2
    line("KV Cache is allocated. #tokens: %d, K size: %s GB, V size: %s GB", l.kv_tokens, gib(half),
         gib(half))
  end
end

-- kvplan's side: the ledger of one GPU and the verdict
line("")
line("kvplan: the ledger of one GPU (%s, tp %d x pp %d, weights %s, kv %s, max_model_len %d):",
     d.gpu.id, d.tp, d.pp, d.weights.name, d.kv.name, mml)
for _, it in ipairs(kv.report.ledger_items(d, mml, 1)) do
  if it.item ~= "kv_short" then
    line("  %-10s %9s GiB  %s", it.item, gib(it.bytes), it.note)
  end
end
-- the tokens said as they are counted: a pool that KV cache groups share
-- holds blocks // groups x block tokens; vLLM's "GPU KV cache size" of one
-- group counts the null block too, which no request gets
-- (kv_cache_utils.py _report_kv_cache_config, block_pool.py; formulas.md Paging)
local how = ""
if l.kv_groups > 1 and l.kv_tokens == (l.kv_blocks // l.kv_groups) * l.block then
  how = string.format(": %d // %d KV cache groups x %d", l.kv_blocks, l.kv_groups, l.block)
elseif d.budget == "vllm" and l.vllm_starts and l.kv_groups == 1 and l.null_blocks > 0
       and l.vllm_kv_cache_tokens == l.kv_tokens + l.null_blocks * l.block then
  how = string.format("; vLLM's %s above counts its null block too", commas(l.vllm_kv_cache_tokens))
end
line("  %-10s %9d      blocks of %d tokens (%d tokens%s)", "kv_blocks", l.kv_blocks, l.block, l.kv_tokens, how)
if starts then
  line("kvplan: %s starts; it holds %s of %d tokens at once", d.budget,
       kv.util.count_of(l:max_concurrency(mml), "request"), mml)
  -- vLLM before its null-block fix checks against a pool that counts the
  -- null block, which no request gets (vllm-project/vllm#47272: engines.lua
  -- check_null_block): it starts with a max_model_len one block too long
  if d.budget == "vllm" and l:max_concurrency(mml) == 0 and l.null_blocks > 0 then
    line("kvplan: no request of %d tokens fits whole: vLLM's startup check at this release counts "
         .. "its null block, which no request gets (fixed by vllm-project/vllm#47272, v0.28.1): the "
         .. "pool cannot hold all the tokens of a request that long", mml)
  end
  if step_note then line("%s", step_note) end
else
  line("kvplan: %s", why)
  local blocks = why:match("Please lower max_num_seqs to at most (%d+)")
  if d.budget == "vllm" and blocks then
    line("kvplan: it starts with max_num_seqs at most %s (vLLM's own bound, as above)", blocks)
  elseif d.budget == "vllm" and not free_refusal and l.vllm_max_model_len > 0 then
    line("kvplan: max_model_len=%d starts (vLLM's own estimate, as above)", l.vllm_max_model_len)
  end
end
-- to standard output, or -o FILE (an HTML page for FILE.html or -f html)
kv.report.text(table.concat(out, "\n") .. "\n", {title = "kvplan startup"})
