-- stdlib/kvplan/gpus.lua: accelerators and the GPU catalog.
-- Stdlib layer. Budgets multiply the memory the runtime reports
-- (`visible_bytes`), not the marketed size: an 80 GB H100 shows 79.19 GiB.

local util = require "kvplan.util"
local units = require "kvplan.units"

local M = {}

local allowed = {
  id = true, aliases = true, name = true, vendor = true, memory_marketed = true,
  memory_bytes = true, visible_bytes = true, visible_source = true, hbm_gbps = true,
  bf16_tflops = true, fp16_tflops = true, fp8_tflops = true, fp4_tflops = true, int8_tops = true,
  interconnect_gbps = true, interconnect = true, pcie_gbps = true, tdp_w = true,
  source = true, notes = true, memory = true, plan_as = true, price_per_hour = true,
  scaleout_gbps = true, scaleout = true, scaleout_source = true,
  -- true: the GPU shares one memory with the CPU and the OS (the vendor's
  -- datasheet says unified), so what they hold is not counted unless
  -- system_memory says it (report.lua ledger_items, validate.lua)
  unified_memory = true,
}
M.fields = allowed

local GPU = {}
GPU.__index = GPU
GPU.__name = "kvplan.GPU"
M.GPU = GPU

--- A GPU from a table. `memory` ("80 GiB" or bytes) is shorthand for a
--- visible memory; without visible_bytes the marketed memory_bytes is used and
--- `memory_basis` says so.
function M.new(t)
  if type(t) ~= "table" then util.raise("a GPU must be a table, got %s", type(t)) end
  util.check_keys(t, allowed, "gpu" .. (t.id and (" '" .. tostring(t.id) .. "'") or ""))
  local g = setmetatable({}, GPU)
  for k, v in pairs(t) do g[k] = v end
  g.id = t.id or t.name or "custom"
  if t.memory ~= nil then g.visible_bytes = units.bytes(t.memory, "memory") end
  if g.visible_bytes then
    g.visible_bytes = units.bytes(g.visible_bytes, "visible_bytes")
    g.memory_basis = "visible"
  elseif g.memory_bytes then
    g.visible_bytes = units.bytes(g.memory_bytes, "memory_bytes")
    g.memory_basis = "marketed"
  else
    util.raise("gpu '%s' needs memory, visible_bytes or memory_bytes", g.id)
  end
  if g.visible_bytes < 1 then util.raise("gpu '%s': memory must be > 0 bytes", g.id) end
  return g
end

function GPU:__tostring() return "kvplan.GPU '" .. self.id .. "'" end

--- M.add(t): add a GPU to the catalog under its id and aliases;
--- M.all(): every catalogued GPU; M.get(name): by id or alias, any case;
--- M.find(name): the same or nil (a hash lookup, no suggestions).
--- M.all(true) also lists entries that are not planned as one device (a
--- module of several, `plan_as` names the device to plan with).
local all
M.add, all, M.get, M.find = require("kvplan.catalog").new("gpu", GPU, function(t) return M.new(t) end,
                                                 "kvplan.catalog.gpus_data")
function M.all(everything)
  local out = {}
  for _, g in ipairs(all()) do
    if everything or g.plan_as == nil then out[#out + 1] = g end
  end
  return out
end

--- An error unless g is planned as one device: a module of several devices
--- (plan_as) explains which entry to plan with.
function M.check_plannable(g)
  if g.plan_as ~= nil then
    util.raise("gpu '%s' is a module the runtime shows as several devices; plan with '%s' (%s)",
               g.id, g.plan_as, g.name or g.id)
  end
  return g
end

--- Prices per GPU-hour from a CSV file (columns gpu, price_per_hour) set on
--- the catalog's GPUs (see best.lua).
function M.load_prices(path) return require("kvplan.best").load_prices(path) end

--- Add the GPUs of a CSV file to the catalog (see catalog_csv.lua).
function M.load_csv(path) return require("kvplan.catalog_csv").load_gpus(path) end

-- a method called with something else as self: an error at the user's line
util.methods(GPU)

return M
