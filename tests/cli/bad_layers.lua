-- a model with no layers
local kv = require "kvplan"
local m = kv.model{id = "empty", layers = 0, hidden = 4096, heads = 32}
print(m)
