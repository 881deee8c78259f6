-- writes rows, then fails: the -o file must not appear
local kv = require "kvplan"
local r = kv.report{columns = {"n"}}
for i = 1, 1000 do r:row{n = i} end
error("stopped on purpose")
