-- examples/custom_optimization.lua: a new optimization, defined in Lua and
-- swept with the built-ins.
--
-- Shows: Cross-Layer Attention (Brandon et al., 2024, "Reducing Transformer
-- Key-Value Cache Size with Cross-Layer Attention"), where each pair of
-- adjacent layers shares one KV cache, written as a table of hooks (under 30
-- lines), then combined with GQA and fp8 KV in every subset. The combination
-- column names the members in phase order whatever order they are listed
-- in; its own column counts the layers that still hold KV. The activation
-- peak and non-torch memory are the ones kv.deploy predicts for vLLM, for
-- the derived models too: they are built from every fact of the model
-- (kv.models.facts), not from a list of its architecture fields.
--
-- Run: build/kvplan examples/custom_optimization.lua

local kv = require "kvplan"
local o = kv.optim

local cla = {
  name = "cla-2", phase = "model",
  doc = "CLA2: the odd layers reuse the KV of the layer below, so half the layers hold KV",
  source = "Brandon et al., 2024, arXiv:2405.12981",
  lossy = "an architecture change that needs training",
  apply = function(opts, ctx)
    local m = ctx.model(opts)
    -- every fact of the model (vocab and intermediate size the activation
    -- peak vLLM profiles), then what CLA changes
    local t = kv.models.facts(m)
    t.id, t.layer_kinds = m.id .. "+cla-2", {{kind = "full", n = 1}, {kind = "none", n = 1}}
    -- the sharing layers drop their K and V projections
    local cut = m.layers // 2 * 2 * m.hidden * m.kv_heads * m.head_dim
    t.params, t.active = m.params - cut, m.active - cut
    opts.model = kv.model(t)
    return opts
  end,
  columns = {kv_layers = function(row, ledger, d) return d.model:kinds().full end},
}

local combos = o.subsets{o.kv_quant "fp8", cla, o.gqa{kv_heads = 4}}
local cols = o.columns(combos)
local r = kv.report{columns = cols}
for _, c in ipairs(combos) do
  local d = kv.deploy{model = "llama-3.1-8b", gpu = "h100-sxm", utilization = 0.9, optim = c}
  r:row(o.row(d, 32768, 1, cols))
end
r:close()
