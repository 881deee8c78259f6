-- tests/lua/completion_test.lua: kvplan completion's scripts come from what
-- the commands take: every deployment field of the registry completes as a
-- key of the ready scripts that take them, enums complete their values.
local check = require "check"
local completion = require "kvplan.completion"
local fields = require "kvplan.fields"
local options = require "kvplan.options"

-- the binary hands the commands over as kvplan.cli.commands; here two by hand
local cli = package.loaded["kvplan.cli"]
check.error("run as 'kvplan completion bash|zsh'", completion.describe)
cli.commands = {
  commands = {{name = "fit", script = "scripts/fit.lua"}, {name = "validate", lua = true},
              {name = "batch"}},
  options = {{name = "format", letter = "f", arg = true}, {name = "quiet", letter = "q"}},
  formats = {"csv", "json"},
}
local d = completion.describe()
check.eq(cli.describe, nil, "describe mode ends with the scan")
local keys = {}
for _, c in ipairs(d.commands) do
  keys[c.name] = {}
  for _, k in ipairs(c.keys) do keys[c.name][k] = true end
end
for _, f in ipairs(fields.list) do
  if options.flat_field(f) then
    check.eq(keys.fit[f.name], true, "fit completes the registry's field " .. f.name)
  end
end
for _, k in ipairs{"model", "gpus", "context", "concurrency", "profile"} do
  check.eq(keys.fit[k], true, "fit completes its own " .. k)
end
check.eq(keys.validate.summary and keys.validate.max_model_len, true, "validate's keys")
check.eq(#d.commands[3].keys, 0, "batch takes no keys of its own")
-- values: enums of the registry, formats, catalogs, booleans, the engines' spellings
check.eq(table.concat(d.values.engine, " "), "sglang trtllm vllm", "engine's values")
check.eq(table.concat(d.values.enforce_eager, " "), "false true", "a boolean's values")
check.eq(d.values.kv_cache_dtype, d.values.kv, "vLLM's spelling completes as the field")
local has = {}
for _, v in ipairs(d.values.gpus) do has[v] = true end
check.eq(has["h100-sxm"] and has.l4, true, "the GPU catalog's ids")
-- a field added to the registry completes with no edit to completion.lua
table.insert(fields.list, {name = "brand_new_knob", type = "enum", values = {"on", "off"},
                           meaning = "a field added for this test"})
local d2 = completion.describe()
local bash, zsh = completion.bash(d2), completion.zsh(d2)
check.eq(bash:find("brand_new_knob=", 1, true) ~= nil, true, "a new field completes in bash")
check.eq(bash:find("brand_new_knob) list='off on' ;;", 1, true) ~= nil, true, "and its values")
check.eq(zsh:find("brand_new_knob) list=(off on) ;;", 1, true) ~= nil, true, "in zsh too")
table.remove(fields.list)
check.eq(zsh:sub(1, 16), "#compdef kvplan\n", "zsh: an autoloadable completion function")
check.eq(bash:find("-f|--format) COMPREPLY=($(compgen -W 'csv json'", 1, true) ~= nil, true, "-f: the binary's formats")
check.eq(bash:find("\ncomplete %-o default %-F _kvplan kvplan\n$") ~= nil, true, "bash: complete -F _kvplan")
