-- batch test: fails after writing rows; its report must not appear
local kv = require "kvplan"
local r = kv.report{columns = {"n"}}
for i = 1, 100 do r:row{n = i} end
kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", tp = 0}
