-- a NaN context
local kv = require "kvplan"
local l = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm"}:ledger()
local context = 0 / 0
print(l:max_concurrency(context))
