-- stdlib/kvplan/models.lua: model descriptions and the model catalog.
-- Stdlib layer: the schema and defaults live here; the KV arithmetic is the
-- core's (engine/core/kv.c), reached through the Model's `core` userdata.
--
-- A model is a table of architecture facts (see the fields below); kv.model(t)
-- checks it and returns a Model. Catalog entries (catalog/models_data.lua)
-- are the same tables, each with the Hugging Face repo its config.json came
-- from.

local core = require "kvplan.core"
local util = require "kvplan.util"
local formats = require "kvplan.formats"

local M = {}

-- Fields the core reads.
local arch = {
  layers = true, hidden = true, heads = true, kv_heads = true, head_dim = true,
  head_dim_v = true, params = true, active = true, max_context = true, layer_kinds = true,
}
-- Fields kept for people and reports (not used by the arithmetic).
local meta = {
  id = true, name = true, aliases = true, hf = true, source = true, family = true,
  notes = true, intermediate = true, vocab = true, tie_embeddings = true, experts = true,
  experts_active = true, shared_experts = true, moe_intermediate = true, dtype = true,
  mla = true, weight_bytes = true, weight_source = true, weight_format = true,
}
local allowed = {}
for k in pairs(arch) do allowed[k] = true end
for k in pairs(meta) do allowed[k] = true end
M.fields = allowed

local Model = {}
Model.__index = Model
Model.__name = "kvplan.Model"
M.Model = Model

-- Native dtype -> the weight format of the checkpoint.
local dtype_format = {
  bf16 = "bf16", fp16 = "fp16", fp32 = "fp32", float16 = "fp16", bfloat16 = "bf16",
  float32 = "fp32",
  -- DeepSeek-V3 style fp8 with one fp32 scale per 128x128 block
  fp8 = {name = "fp8-b128", bits = 8, group = 16384, scale = 32},
  mxfp4 = "mxfp4",
}

--- A Model from a table of architecture facts.
function M.new(t)
  if type(t) ~= "table" then util.raise("a model must be a table, got %s", type(t)) end
  util.check_keys(t, allowed, "model" .. (t.id and (" '" .. tostring(t.id) .. "'") or ""))
  local c = {}
  for k in pairs(arch) do c[k] = t[k] end
  if t.mla then
    if type(t.mla) ~= "table" then util.raise("field 'mla' must be a table, got %s", type(t.mla)) end
    c.kv_lora_rank, c.rope_dim = t.mla.kv_lora_rank, t.mla.rope_dim or 0
    if c.kv_lora_rank == nil then util.raise("field 'mla.kv_lora_rank' is missing") end
  end
  local m = setmetatable({}, Model)
  for k, v in pairs(t) do m[k] = v end
  m.id = t.id or t.name or "custom"
  m.kv_heads = t.kv_heads or t.heads
  m.core = core.model(c)
  m.active = t.active or t.params
  return m
end

--- The weight format of the model's own checkpoint: `weight_format` when
--- the entry gives one (a quantized checkpoint), else from its dtype.
function Model:native_format()
  if rawget(self, "weight_format") ~= nil then return formats.get(self.weight_format, "weight_format") end
  local f = dtype_format[(self.dtype or "bf16"):lower()]
  if f == nil then
    util.raise("model '%s': unknown dtype '%s'", self.id, tostring(self.dtype))
  end
  return formats.get(f, "dtype")
end

--- The KV format vLLM's kv_cache_dtype 'auto' gives: the model's activation
--- dtype (bf16 for checkpoints stored in fp8 or fp4).
function Model:auto_kv_format()
  local d = (self.dtype or "bf16"):lower()
  if d == "fp16" or d == "float16" then return formats.get("fp16") end
  if d == "fp32" or d == "float32" then return formats.get("fp32") end
  return formats.get("bf16")
end

--- Bytes one token adds to the KV cache of one GPU (all layers, inside
--- their windows): an integer, or a float when the format packs bits.
function Model:kv_bytes_per_token(kv, tp)
  local bits = self.core:token_bits(formats.get(kv or self:auto_kv_format(), "kv"), tp)
  return bits % 8 == 0 and bits // 8 or bits / 8
end

--- Unpaged KV bytes of `batch` sequences of n tokens on one GPU (windows cap
--- the tokens, recurrent states are fixed). opts: kv, tp, batch.
function Model:kv_bytes(n, opts)
  opts = opts or {}
  util.check_keys(opts, {kv = true, tp = true, batch = true}, "kv_bytes options")
  local one = self.core:seq_bytes(n, formats.get(opts.kv or self:auto_kv_format(), "kv"), opts.tp)
  local batch = util.count(opts.batch or 1, "batch")
  local total = one * batch
  if total // batch ~= one then util.raise("KV bytes of %d sequences overflow 64 bits", batch) end
  return total
end

--- Bytes of all weights in format f (default: the checkpoint's own size
--- when the entry records it, else params in the native format).
function Model:weight_size(f)
  if f == nil and rawget(self, "weight_bytes") then return self.weight_bytes end
  return formats.bytes(formats.get(f or self:native_format(), "weights"), self.params or 0)
end

function Model:kinds() return self.core:kinds() end
function Model:layer(i) return self.core:layer(i) end
function Model:__tostring() return "kvplan.Model '" .. self.id .. "'" end

-- ---- the catalog ----------------------------------------------------------

--- M.add(t): add a model to the catalog under its id and aliases;
--- M.all(): every catalogued model; M.get(name): by id or alias, any case.
M.add, M.all, M.get = require("kvplan.catalog").new("model", Model, function(t) return M.new(t) end,
                                                   "kvplan.catalog.models_data")

--- A Model from a Hugging Face model directory or config.json (local files
--- only; see hf.lua).
function M.from_hf(path, opts) return require("kvplan.hf").from_hf(path, opts) end

--- Add the models of a CSV file to the catalog (see catalog_csv.lua).
function M.load_csv(path) return require("kvplan.catalog_csv").load_models(path) end

return M
