-- batch test: a good script with one report
local kv = require "kvplan"
local r = kv.report{columns = {"model", "kv_bytes_per_token"}}
for _, id in ipairs{"llama-3.1-8b", "llama-3.1-70b"} do
  r:row{model = id, kv_bytes_per_token = kv.model(id):kv_bytes_per_token()}
end
