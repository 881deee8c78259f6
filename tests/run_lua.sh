#!/bin/sh
# tests/run_lua.sh: run every tests/lua/*_test.lua with the kvplan binary.
# Usage: sh tests/run_lua.sh build/kvplan
kvplan=$1
pass=0; fail=0
for t in tests/lua/*_test.lua; do
  if out=$("$kvplan" "$t" 2>&1); then
    pass=$((pass + 1)); echo "ok   $t"
  else
    fail=$((fail + 1)); echo "FAIL $t"; echo "$out" | sed 's/^/     /'
  fi
done
echo "lua: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
