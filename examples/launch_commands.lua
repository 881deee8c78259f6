-- examples/launch_commands.lua: the commands that start a few catalog
-- deployments under vLLM, SGLang and TensorRT-LLM, and a Kubernetes
-- Deployment of the vLLM one, each with every flag kvplan assumed written
-- out, and the deployments kvplan predicts would not start refused instead.
--
-- Shows: kv.launch.command(d, engine) on a deployment as each engine runs
-- it (its budget rule and defaults: SGLang's mem_fraction_static by tp,
-- TensorRT-LLM's 32-token blocks on its PyTorch backend), the engines' own
-- flag names from the field registry (tensor-parallel-size, tp-size, tp_size;
-- gpu-memory-utilization, mem-fraction-static, kv_cache_config's
-- free_gpu_memory_fraction; max-num-seqs, max-running-requests,
-- max_batch_size), the engine's default limits spelt out, and the refusals:
-- a 70B model on one 80 GB GPU (the weights do not fit), and FP8 weights
-- under TensorRT-LLM from a BF16 checkpoint (no online quantization in
-- trtllm-serve). Every command printed has been read back by
-- kv.launch.parse and rebuilt: its ledger is the deployment's
-- (launch.command checks it before returning). The comment line of each is
-- kvplan's prediction; nothing here is measured.
--
-- Run: build/kvplan examples/launch_commands.lua

local kv = require "kvplan"

local deployments = {
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, kv = "fp8"},
  {model = "llama-3.1-8b", gpu = "l40s", max_model_len = 32768},
  {model = "qwen3-32b", gpu = "h200", weights = "fp8", max_num_seqs = 128},
  {model = "llama-3.1-70b", gpu = "h100-sxm", tp = 1},
}

for _, o in ipairs(deployments) do
  local d = kv.deploy(o)
  print(string.format("## %s on %d x %s", d.model.id, d.tp * d.pp, d.gpu.id))
  for _, engine in ipairs(kv.launch.engines) do
    local text, why = kv.launch.command(d, engine, {replicas = 2})
    print("### " .. engine)
    io.write(text or ("not launched: " .. why .. "\n"))
  end
  print()
end
