-- tests/bench/no_rope.lua: a catalog model as the bench's baselines see it.
-- The Python and C baselines of `make bench` weigh a model as params x
-- format; kvplan also counts vLLM's rotary cos/sin tables in the loaded
-- weights (engines.vllm_rotary). So that both compute the same rule and
-- their outputs can be compared byte for byte, the shapes sweep each model
-- as its catalog entry with rope = false (no rotary table). Returns
-- function(id) -> a kvplan model, one per id (a list repeating an id, as
-- the peak-memory line of shape (a) does, gets the same model, as catalog
-- ids do).
local kv = require "kvplan"
local entries, made = {}, {}
for _, e in ipairs(require "kvplan.catalog.models_data") do entries[e.id] = e end
return function(id)
  if made[id] == nil then
    local t = {}
    for k, v in pairs(assert(entries[id], id)) do t[k] = v end
    t.aliases, t.rope = nil, false
    made[id] = kv.models.new(t)
  end
  return made[id]
end
