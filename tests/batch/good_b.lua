-- batch test: a good script with a sweep and a named report
local kv = require "kvplan"
kv.sweep{model = "llama-3.1-8b", gpu = {"h100-sxm", "l4"}, context = {8192, 32768},
         columns = {"model", "gpu", "context", "max_concurrency"}}:write()
local r = kv.report{name = "gpus", columns = {"gpu"}}
r:row{gpu = "h100-sxm"}
