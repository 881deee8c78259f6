-- tests/fuzz/fuzz_csv.lua: kv.models.load_csv and kv.gpus.load_csv on
-- hostile CSV files (the first byte picks the catalog).
local data, dir = ...
local kv = require "kvplan"
local path = dir .. "/catalog.csv"
local f = assert(io.open(path, "wb"))
f:write(data:sub(2))
f:close()
local load = (data:byte(1) or 0) % 2 == 0 and kv.models.load_csv or kv.gpus.load_csv
local ok, list = pcall(load, path)
if ok and list then
  for _, e in ipairs(list) do
    pcall(function()
      if load == kv.models.load_csv then kv.deploy{model = e, gpu = "h100-sxm"}:ledger():max_context(1)
      else kv.deploy{model = "llama-3.1-8b", gpu = e}:ledger():max_concurrency(1024) end
    end)
  end
end
