-- stdlib/kvplan/default.lua: the built-in default scenario (`kvplan` with no
-- script, and `make run`): the ledger of one H100 SXM for models from 8B to
-- 70B, with bf16 and fp8 KV, at 8K to 128K tokens. Activation peak and
-- non-torch memory are kv.deploy's predictions for vLLM (engines.lua); set
-- them from your own logs to replace them. It takes no key=value argument
-- (one is refused as the commands refuse an unknown one: exit status 2).
-- Stdlib layer.

local kv = require "kvplan"

return function(args)
  kv.options(args, {})
  local r = kv.report{columns = kv.report.ledger_columns}
  local cases = {
    -- model,          weights,     kv,     tp, context
    {"llama-3.1-8b",  nil,          "bf16", 1, 8192},
    {"llama-3.1-8b",  nil,          "fp8",  1, 32768},
    {"qwen3-32b",     nil,          "bf16", 1, 32768},
    {"llama-3.1-70b", nil,          "bf16", 1, 8192},
    {"llama-3.1-70b", "int4-g128",  "bf16", 1, 8192},
    {"llama-3.1-70b", "int4-g128",  "fp8",  1, 32768},
    {"llama-3.1-70b", nil,          "fp8",  2, 32768},
    {"llama-3.1-70b", nil,          "fp8",  4, 32768},
    {"llama-3.1-70b", nil,          "fp8",  8, 131072},
  }
  for _, c in ipairs(cases) do
    local d = kv.deploy{model = c[1], gpu = "h100-sxm", weights = c[2], kv = c[3], tp = c[4],
                        utilization = 0.9}
    r:row(kv.report.ledger_row(d, c[5], 1))
  end
  r:close()
end
