-- deployments whose fields contradict one another, in a script: errors at
-- this file's line, status 1 (the same given on a ready script's command
-- line are usage errors, status 2: tests/run_cli.sh combination_*)
local kv = require "kvplan"
local which = ...
if which.case == "kv_full" then
  kv.deploy{model = "llama-3.1-8b", gpu = "h100", kv_full = "fp8"}
end
kv.deploy{model = "llama-3.1-8b", gpu = "h100", engine = "sglang", budget = "vllm"}
