-- closes two reports (one at a path of its own, one to -o or the batch's
-- file), then fails: a failed run keeps none of the files it wrote
-- (engine/cli/main.c run_script; docs/sweeps.md)
local kv = require "kvplan"
local o = kv.options(..., {dir = ""}) -- under kvplan batch: a report named, beside the other
local mine = kv.report{columns = {"n"}, path = o.dir ~= "" and o.dir .. "/fac-named.csv" or nil,
                       name = o.dir == "" and "named" or nil}
mine:row{n = 1}
mine:close()
local r = kv.report{columns = {"m"}}
r:row{m = 2}
r:close()
error("failed on purpose after two reports", 0)
