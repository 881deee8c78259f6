-- tests/lua/throughput_test.lua: the published-benchmark corpus
-- (tests/validation/throughput/) gives the same predictions byte for byte
-- as results.csv, and the README states the errors they give.
local check = require "check"
local dir = check.tmpdir()
local run = assert(loadfile("tests/validation/throughput/run.lua"))
local summary = run("out=" .. dir .. "/results.csv")
check.eq(check.slurp(dir .. "/results.csv"), check.slurp("tests/validation/throughput/results.csv"),
         "results.csv")
os.execute("rm -r " .. dir)
local readme = check.slurp("README.md")
assert(readme:find(summary, 1, true), "README.md does not state: " .. summary)
print("throughput ok")
