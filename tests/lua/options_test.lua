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
