-- tests/fuzz/fuzz_log.lua: kvplan validate's startup-log parser and its
-- check on hostile logs.
local data = ...
local validate = require "kvplan.validate"
local ok, facts = pcall(validate.parse, data)
if ok then pcall(validate.check, data) end
