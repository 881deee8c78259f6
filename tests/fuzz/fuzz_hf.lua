-- tests/fuzz/fuzz_hf.lua: kv.models.from_hf on hostile files. The first
-- byte picks the file the rest of the input becomes: config.json (with no
-- weights), model.safetensors (beside a valid config), or
-- model.safetensors.index.json (beside a valid config and one shard).
local data, dir = ...
local kv = require "kvplan"
local CONFIG = '{"model_type":"llama","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":2,' ..
               '"num_key_value_heads":1,"vocab_size":32,"intermediate_size":16,"max_position_embeddings":64}'
local function put(name, text)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
end
for _, f in ipairs{"config.json", "model.safetensors", "model.safetensors.index.json"} do
  os.remove(dir .. "/" .. f)
end
local mode, rest = (data:byte(1) or 0) % 3, data:sub(2)
if mode == 0 then
  put("config.json", rest)
elseif mode == 1 then
  put("config.json", CONFIG)
  put("model.safetensors", rest)
else
  put("config.json", CONFIG)
  local header = '{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}'
  put("model.safetensors", string.pack("<I8", #header) .. header .. ("\0"):rep(8))
  put("model.safetensors.index.json", rest)
end
local ok, m = pcall(kv.models.from_hf, dir)
if ok then
  -- a model that loads must plan without a crash either
  pcall(function() kv.deploy{model = m, gpu = "h100-sxm"}:ledger():max_context(1) end)
end
