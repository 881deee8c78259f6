-- tests/fuzz/fuzz_log.lua: kvplan validate's startup-log parser on hostile
-- logs, and its check (which plans the logged deployment: 20 times slower)
-- on a quarter of them, picked by the first byte.
local data = ...
local validate = require "kvplan.validate"
local ok = pcall(validate.parse, data)
if ok and (data:byte(1) or 0) % 4 == 0 then pcall(validate.check, data) end
