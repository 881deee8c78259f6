-- key=value arguments, checked against defaults
local kv = require "kvplan"
local o = kv.options(..., {model = "llama-3.1-8b", context = 8192})
local l = kv.deploy{model = o.model, gpu = "h100-sxm"}:ledger()
local r = kv.report{columns = {"model", "context", "max_concurrency"}}
r:row{model = o.model, context = o.context, max_concurrency = l:max_concurrency(o.context)}
