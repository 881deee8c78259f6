-- tests/lua/options_test.lua: key=value script arguments.
local kv = require "kvplan"
local check = require "check"

local o = kv.options({context = "32768", gpu = "h100", tp = "4,8"},
                     {context = 8192, gpu = "a100", tp = {1}, quiet = false})
check.eq(o.context, 32768, "integer")
check.eq(math.type(o.context), "integer", "type")
check.eq(o.gpu, "h100", "string")
check.eq(#o.tp, 2, "list")
check.eq(o.tp[2], 8, "list item")
check.eq(o.quiet, false, "default kept")
check.error("unknown argument 'contxt' (did you mean 'context'", kv.options, {contxt = "1"}, {context = 1})
check.error("argument 'context' must be an integer, got '1.5'", kv.options, {context = "1.5"}, {context = 1})
check.error("argument 'context' must be a number, got 'nan'", kv.options, {context = "nan"}, {context = 1})
-- a boolean given false is false, not the word: 'and convert(...) or v' kept
-- the string "false" (truthy), so 'fit time=no' added the times and
-- 'best all=false' listed every candidate
do
  local d = {on = true, off = false}
  for _, w in ipairs{"false", "no", "0", "FALSE"} do
    local o = kv.options({on = w, off = w}, d)
    check.eq(o.on, false, "boolean '" .. w .. "' is false")
    check.eq(o.off, false, "boolean '" .. w .. "' over a false default is false")
  end
  check.eq(kv.options({off = "yes"}, d).off, true, "boolean 'yes' is true")
  check.eq(kv.options({enforce_eager = "0"}, {enforce_eager = ""}).enforce_eager, false,
           "a boolean deployment field given 0 is false")
end

-- an empty value of a field whose default is a word ('fit kv=' failed at the
-- script's line: "field 'kv': unknown format ''")
check.error("argument 'kv' is empty (expected e.g. kv=auto)", kv.options, {kv = ""}, {kv = "auto"})
check.eq(kv.options({name = ""}, {name = ""}).name, "", "a field not given stays as not given")

-- at_least(min, default): the default, and a value below min refused naming the argument
do
  local d = {n = kv.options.at_least(1, 4), x = kv.options.at_least(0.5, 1.0)}
  check.eq(kv.options({}, d).n, 4, "the default")
  check.eq(kv.options({n = "2k"}, d).n, 2000, "converted as its default's type")
  check.error("argument 'n' must be an integer >= 1, got '0'", kv.options, {n = "0"}, d)
  check.error("argument 'x' must be a number >= 0.5, got '0.25'", kv.options, {x = "0.25"}, d)
  check.error("argument 'n' must be an integer >= 1, got '0'", kv.options, {n = 0}, d)
end
