#!/bin/sh
# tests/run_module.sh: require "kvplan" from a stock lua5.4 through build/kvplan.so
# and compute the same per-token bytes as the binary.
# Usage: sh tests/run_module.sh lua5.4 build
lua=$1; dir=$2
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
then echo "module: 1 passed, 0 failed"; else echo "module: 0 passed, 1 failed"; exit 1; fi
