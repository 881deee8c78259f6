-- two reports, neither given a path: with -o FILE (or under kvplan batch
-- without names) both would go to one file, the second renamed over the first
local kv = require "kvplan"
local r = kv.report{columns = {"n"}}
r:row{n = 1}
r:close()
local r2 = kv.report{columns = {"m"}}
r2:row{m = 2}
