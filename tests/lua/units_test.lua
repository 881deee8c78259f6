-- tests/lua/units_test.lua: memory units parse to exact bytes.
local kv = require "kvplan"
local check = require "check"
local u = kv.units

check.eq(u.bytes("80 GiB"), 85899345920, "80 GiB")
check.eq(u.bytes("80GB"), 80000000000, "80GB")
check.eq(u.bytes("512 KiB"), 524288, "512 KiB")
check.eq(u.bytes("1.5 MiB"), 1572864, "1.5 MiB")
check.eq(u.bytes(12345), 12345, "integer")
check.eq(u.bytes(2^30), 1073741824, "integral float")
check.eq(math.type(u.bytes("2 GiB")), "integer", "type")
check.eq(u.format(2684354560), "2.50 GiB", "format")
check.eq(u.format(327680), "320 KiB", "format KiB")
check.eq(u.format(42949672960), "40 GiB", "format whole")
check.error("cannot read 'eighty GB' as bytes", u.bytes, "eighty GB", "memory")
check.error("field 'memory' must be a whole number of bytes >= 0, got nan", u.bytes, 0/0, "memory")
check.error("got -1", u.bytes, -1, "overhead")
check.error("cannot read '80 GXB'", u.bytes, "80 GXB")
-- a float number of bytes past 2^63 has no integer: an error naming it (it
-- was nil: kv.deploy{gpu_memory = 1e19} "attempt to compare nil with number"
-- in deploy.lua, and activation = 1e19 was taken as not given, predicted)
check.error("field 'gpu_memory' = 1e+19 exceeds 64-bit bytes", u.bytes, 1e19, "gpu_memory")
check.error("field 'activation' = 9.2233720368548e+18 exceeds 64-bit bytes", u.bytes, 2^63, "activation")
check.eq(u.bytes(2^62), 4611686018427387904, "2^62 as a float")
check.error("field 'activation' = 1e+19 exceeds 64-bit bytes", require("kvplan").deploy,
            {model = "llama-3.1-8b", gpu = "l4", activation = 1e19})
