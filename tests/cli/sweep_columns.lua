-- tests/cli/sweep_columns.lua: Lua columns in sweeps keep their precision and
-- see kv_bytes_per_token; optimizations' own columns (built-in and custom)
-- are sweep columns, equal to the single deployment's kv.optim.row values.
local kv = require "kvplan"
local o = kv.optim
local cla = {
  name = "cla-2", phase = "model", doc = "pairs of layers share one KV cache",
  apply = function(opts, ctx)
    local m = ctx.model(opts)
    local t = {id = m.id .. "+cla", layer_kinds = {{kind = "full", n = 1}, {kind = "none", n = 1}}}
    for _, k in ipairs{"layers", "hidden", "heads", "kv_heads", "head_dim", "params", "max_context", "dtype"} do
      t[k] = m[k]
    end
    opts.model = kv.model(t)
    return opts
  end,
  columns = {kv_layers = function(_, _, d) return d.model:kinds().full end},
}
local off = o.offload{host = "64 GiB", pcie_gbps = 64}
local combos = {o.none, off, cla}
local s = kv.sweep{
  model = "llama-3.1-70b", gpu = "h100-sxm", optim = combos, tp = {4, 8}, context = {8192, 32768},
  concurrency = {4},
  columns = {"optim", "tp", "context", "kv_bytes_per_token", "host_kv_gib",
             {"pcie_gib_per_step", precision = 6}, "kv_layers",
             {"third", function(r) return r.kv_bytes_per_token / 3 end, precision = 2},
             {"bytes", function(r) return r.kv_bytes_per_token end}},
}
local path = os.tmpname()
s:write(path)
local rows = kv.csv.read(path)
os.remove(path)
local h = {}
for i, n in ipairs(rows[1]) do h[n] = i end
local n = 0
for i = 2, #rows do
  local r = rows[i]
  local function v(c) return r[h[c]] end
  assert(v("bytes") == v("kv_bytes_per_token"), "row.kv_bytes_per_token")
  assert(v("third") == string.format("%.2f", tonumber(v("kv_bytes_per_token")) / 3), "precision: " .. v("third"))
  local combo = ({none = o.none, ["offload-64GiB"] = off, ["cla-2"] = cla})[v("optim")]
  local d = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = tonumber(v("tp")), optim = combo}
  local want = o.row(d, tonumber(v("context")), 4, o.columns(combos))
  for _, c in ipairs{"host_kv_gib", "kv_layers"} do
    local w = want[c] == "" and "" or (math.type(want[c]) == "integer" and tostring(want[c]) or string.format("%.4f", want[c]))
    assert(v(c) == w, string.format("row %d %s: sweep '%s', deployment '%s'", i, c, v(c), w))
  end
  local w = want.pcie_gib_per_step
  assert(v("pcie_gib_per_step") == (w == "" and "" or string.format("%.6f", w)), "pcie_gib_per_step")
  n = n + 1
end
assert(n == 12, n)
io.write("ok ", n, " rows\n")
