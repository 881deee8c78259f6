-- tests/fuzz/fuzz_args.lua: key=value arguments as the command line gives
-- them (words separated by NUL or newline) through kv.options, the unit
-- parsers, and a deployment built from them.
local data = ...
local kv = require "kvplan"
local units = require "kvplan.units"
local words = {}
for w in (data .. "\0"):gmatch("([^%z\n]*)[%z\n]") do words[#words + 1] = w end
local args = {}
for _, w in ipairs(words) do
  local k, v = w:match("^([^=]+)=(.*)$")
  if k then args[k] = v else args[#args + 1] = w end
  pcall(units.bytes, w, "fuzz")
end
local defaults = {model = "llama-3.1-8b", gpu = "h100-sxm", tp = 1, pp = 1, context = 8192,
                  concurrency = 1, kv = "bf16", utilization = 0.9, overhead = "1 GiB",
                  max_model_len = 0, block = 16, name = "x", fast = false}
local ok, o = pcall(kv.options, args, defaults)
if ok then
  pcall(function()
    local d = kv.deploy{model = o.model, gpu = o.gpu, tp = o.tp, pp = o.pp, kv = o.kv,
                        utilization = o.utilization, overhead = o.overhead, block = o.block,
                        max_model_len = o.max_model_len ~= 0 and o.max_model_len or nil}
    local l = d:ledger()
    l:fit(o.context, o.concurrency)
    l:max_concurrency(o.context)
    l:max_context(o.concurrency)
  end)
end
