-- stdlib/kvplan/deploy.lua: deployments (a model on GPUs of one kind) and
-- their ledgers.
-- Stdlib layer: names are resolved and defaults applied here; the binding
-- checks every field once and the core computes the ledger (engine/ledger.c).

local core = require "kvplan.core"
local util = require "kvplan.util"
local units = require "kvplan.units"
local formats = require "kvplan.formats"
local models = require "kvplan.models"
local gpus = require "kvplan.gpus"

local M = {}

local Deployment = {}
Deployment.__index = Deployment
Deployment.__name = "kvplan.Deployment"
M.Deployment = Deployment

-- Budget rules: how much of the GPU an engine lets the KV cache have.
-- vllm: usable = gpu_memory_utilization * total (default 0.9), KV gets what
-- weights, the activation peak and non-torch memory leave
-- (vllm/v1/worker/gpu_worker.py).
M.budgets = {
  vllm = {utilization = 0.9},
}

local fields = {
  model = true, gpu = true, gpu_memory = true, tp = true, pp = true, kv = true,
  weights = true, weight_bytes = true, utilization = true, activation = true,
  overhead = true, block = true, max_num_batched_tokens = true, max_model_len = true,
  budget = true, name = true,
}
M.fields = fields

--- A deployment from options (see the API reference for each field).
function M.new(opts)
  if type(opts) ~= "table" then util.raise("deploy needs an options table, got %s", type(opts)) end
  util.check_keys(opts, fields, "deployment")
  if opts.model == nil then util.raise("deployment needs a 'model'") end
  if opts.gpu == nil and opts.gpu_memory == nil then
    util.raise("deployment needs a 'gpu' (or 'gpu_memory')")
  end
  local d = setmetatable({}, Deployment)
  d.model = models.get(opts.model)
  d.gpu = opts.gpu ~= nil and gpus.get(opts.gpu) or gpus.new{memory = opts.gpu_memory}
  d.gpu_bytes = opts.gpu_memory ~= nil and units.bytes(opts.gpu_memory, "gpu_memory")
                or d.gpu.visible_bytes
  d.budget = opts.budget or "vllm"
  local rule = M.budgets[d.budget]
  if rule == nil then
    util.raise("unknown budget rule '%s'%s", tostring(d.budget),
               util.suggest(tostring(d.budget), util.sorted_keys(M.budgets)))
  end
  d.tp = opts.tp or 1
  d.pp = opts.pp or 1
  d.kv = (opts.kv == nil or opts.kv == "auto") and d.model:auto_kv_format()
         or formats.get(opts.kv, "kv")
  d.weights = opts.weights ~= nil and formats.get(opts.weights, "weights")
              or d.model:native_format()
  d.weight_bytes = opts.weight_bytes ~= nil and units.bytes(opts.weight_bytes, "weight_bytes")
                   or (opts.weights == nil and rawget(d.model, "weight_bytes") or nil)
  d.utilization = opts.utilization or rule.utilization
  d.activation = units.bytes(opts.activation or 0, "activation")
  d.overhead = units.bytes(opts.overhead or 0, "overhead")
  d.block = opts.block or 16
  d.max_num_batched_tokens = opts.max_num_batched_tokens or 1
  d.max_model_len = opts.max_model_len
  d.name = opts.name
  d:ledger() -- check every field now, at the user's line
  return d
end

--- The table the core reads.
function Deployment:spec()
  return {
    model = self.model.core, gpu_bytes = self.gpu_bytes, tp = self.tp, pp = self.pp,
    kv = self.kv, weights = self.weights, weight_bytes = self.weight_bytes,
    utilization = self.utilization, activation = self.activation, overhead = self.overhead,
    block = self.block, max_num_batched_tokens = self.max_num_batched_tokens,
    max_model_len = self.max_model_len,
  }
end

--- The evaluated ledger of one GPU (a kvplan.Ledger, computed once).
function Deployment:ledger()
  if self._ledger == nil then self._ledger = core.ledger(self:spec()) end
  return self._ledger
end

--- A copy with some options changed: d:with{tp = 4, kv = "fp8"}. An optional
--- setting given as false returns to its default: d:with{gpu_memory = false}.
function Deployment:with(changes)
  local opts = {
    model = self.model, gpu = self.gpu, tp = self.tp, pp = self.pp, kv = self.kv,
    weights = self.weights, weight_bytes = self.weight_bytes, utilization = self.utilization,
    activation = self.activation, overhead = self.overhead, block = self.block,
    max_num_batched_tokens = self.max_num_batched_tokens, max_model_len = self.max_model_len,
    budget = self.budget, name = self.name,
  }
  if self.gpu_bytes ~= self.gpu.visible_bytes then opts.gpu_memory = self.gpu_bytes end
  util.check_keys(changes, fields, "deployment change")
  for k, v in pairs(changes) do
    if v == false then opts[k] = nil else opts[k] = v end
  end
  if changes.weights ~= nil and changes.weight_bytes == nil then opts.weight_bytes = nil end
  return M.new(opts)
end

--- Smallest power-of-two tp (<= max_tp, default 64) at which `concurrency`
--- requests of `context` tokens fit: tp, or 0 and the reason at the largest.
function Deployment:min_tp(context, concurrency, max_tp)
  return core.min_tp(self:spec(), context, concurrency or 1, max_tp)
end

function Deployment:__tostring()
  return string.format("kvplan.Deployment '%s' on %s (tp %d, pp %d)", self.model.id,
                       self.gpu.id, self.tp, self.pp)
end

return M
