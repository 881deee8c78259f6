-- tests/cli/control_chars.lua: a report whose cells hold control characters (an
-- OSC title, colours, BEL, DEL, the C1 CSI in UTF-8, tab, line breaks)
local kv = require 'kvplan'
local r = kv.report{columns = {'a', 'b'}}
r:row{a = 'x\27]0;TITLE\7y\27[31mred', b = 1}
r:row{a = 'c1\194\155z\127', b = 2}
r:row{a = 'tab\tnl\ncr\r', b = 3}
r:close()
