-- a misspelled model name
local kv = require "kvplan"
kv.deploy{model = "llama-3.1-70", gpu = "h100-sxm"}
