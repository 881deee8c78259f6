-- a deployment with a negative tensor-parallel degree
local kv = require "kvplan"
local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm",
                    tp = -1}
print(d)
