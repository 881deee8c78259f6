#!/bin/sh
# tests/run_module.sh: require "kvplan" from a stock lua5.4 through build/kvplan.so
# and compute the same per-token bytes as the binary.
# Usage: sh tests/run_module.sh lua5.4 build
lua=$1; dir=$2
# the ready scripts of this tree, wherever the binary was built (build/asan too)
KVPLAN_SCRIPTS=${KVPLAN_SCRIPTS:-$(pwd)/scripts}; export KVPLAN_SCRIPTS
if ! command -v "$lua" >/dev/null 2>&1; then
  echo "module: 0 passed, 1 failed ($lua not found: apt-get install lua5.4)"; exit 1
fi
if "$lua" -e "package.cpath = '$dir/?.so;' .. package.cpath" - <<'LUA'
local kv = require "kvplan"
assert(kv.version == kv.core.version)
local m = kv.model "llama-3.1-70b"
assert(m:kv_bytes_per_token("bf16") == 327680, m:kv_bytes_per_token("bf16"))
assert(kv.model("llama-3.1-8b"):kv_bytes_per_token() == 131072)
assert(kv.model("deepseek-v3"):kv_bytes_per_token("bf16", 8) == 70272)
local l = kv.deploy{model = "llama-3.1-70b", gpu = "h100-sxm", tp = 4, kv = "fp8"}:ledger()
assert(l.kv_bytes_per_token == 40960 and l.fits)
local ok, err = pcall(kv.deploy, {model = "llama-3.1-70b", gpu = "h100-sxm", tp = -1})
assert(not ok and err:find("field 'tp' must be an integer >= 1, got %-1"), err)
print("kvplan " .. kv.version .. " loaded by " .. _VERSION)
LUA
then pass=1; fail=0; else pass=0; fail=1; fi
# the ready scripts run by a stock lua5.4 give the same reports as kvplan's
# commands (kv.options reads the words of lua's `arg`)
out=$dir/module; mkdir -p "$out"
for cmd in "fit model=llama-3.1-70b context=32k concurrency=16 gpus=h100-sxm,l40s" \
           "capacity model=qwen3-32b gpus=h100,l40s kv=bf16,fp8 tp=1,2"; do
  set -- $cmd; name=$1; shift
  if LUA_CPATH="$dir/?.so;;" "$lua" "scripts/$name.lua" "$@" > "$out/$name.lua.csv" 2> "$out/$name.err" &&
     "$dir/kvplan" "$name" "$@" > "$out/$name.kvplan.csv" && [ -s "$out/$name.lua.csv" ] &&
     cmp -s "$out/$name.lua.csv" "$out/$name.kvplan.csv"; then
    pass=$((pass + 1)); echo "ok   module: $lua scripts/$name.lua"
  else fail=$((fail + 1)); echo "FAIL module: $lua scripts/$name.lua: $(head -n 1 "$out/$name.err")"; fi
done
if ! LUA_CPATH="$dir/?.so;;" "$lua" scripts/fit.lua context=lots > /dev/null 2> "$out/bad.err" &&
   grep -q "command line: argument 'context' must be a number, got 'lots'" "$out/bad.err"; then
  pass=$((pass + 1)); echo "ok   module: a bad argument under $lua names the argument"
else fail=$((fail + 1)); echo "FAIL module: bad argument under $lua: $(head -n 1 "$out/bad.err")"; fi
echo "module: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
