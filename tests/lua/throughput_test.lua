-- tests/lua/throughput_test.lua: the published-benchmark corpus
-- (tests/validation/throughput/) gives the same predictions byte for byte
-- as results.csv, and docs/time.md states the errors they give.
local check = require "check"
local dir = check.tmpdir()
local run = assert(loadfile("tests/validation/throughput/run.lua"))
local summary = run("out=" .. dir .. "/results.csv")
check.eq(check.slurp(dir .. "/results.csv"), check.slurp("tests/validation/throughput/results.csv"),
         "results.csv")
os.execute("rm -r " .. dir)
local doc = check.slurp("docs/time.md")
assert(doc:find(summary, 1, true), "docs/time.md does not state: " .. summary)
print("throughput ok")
