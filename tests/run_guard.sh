#!/bin/sh
# tests/run_guard.sh: hostile input from the command line, the limits
# (--max-memory, --timeout, --max-rows) and the sandbox (--sandbox).
# Usage: sh tests/run_guard.sh build/kvplan
kvplan=$1
out=$(dirname "$kvplan")/guard
rm -rf "$out"; mkdir -p "$out"
pass=0; fail=0
# expect NAME STATUS STDERR-LINE -- ARGS...: exit status and the first stderr line
expect() {
  name=$1; status=$2; want=$3; shift 4
  "$kvplan" "$@" > "$out/$name.out" 2> "$out/$name.err" < /dev/null
  got=$?
  first=$(head -n 1 "$out/$name.err")
  if [ "$got" -eq "$status" ] && [ "$first" = "$want" ]; then
    pass=$((pass + 1)); echo "ok   guard $name"
  else
    fail=$((fail + 1)); echo "FAIL guard $name: status $got (want $status)"
    echo "     stderr: $first"; echo "     wanted: $want"
  fi
}

# --shard: numbers past 2^63 are refused, not clamped
expect shard_huge 2 "kvplan: bad --shard '1/99999999999999999999' (K and N must be below 2^63)" -- \
  --shard 1/99999999999999999999 tests/batch/sweep.lua
expect shard_sign 2 "kvplan: bad --shard '+1/2' (expected K/N with 1 <= K <= N)" -- --shard +1/2 tests/batch/sweep.lua
expect shard_space 2 "kvplan: bad --shard '1/ 2' (expected K/N with 1 <= K <= N)" -- --shard "1/ 2" tests/batch/sweep.lua
# the last of 2^63 - 1 shards of 3240 rows holds the last row (the product
# of the remainder and K passed 2^63 before: UBSan stopped it)
expect shard_max 0 "" -- --shard 9223372036854775807/9223372036854775807 tests/batch/sweep.lua
expect shard_first 0 "" -- --shard 1/9223372036854775807 tests/batch/sweep.lua
if [ "$(wc -l < "$out/shard_max.out")" -eq 2 ] && [ "$(wc -l < "$out/shard_first.out")" -eq 1 ]; then
  pass=$((pass + 1)); echo "ok   guard shard_max: the last shard holds the last row, the first none"
else fail=$((fail + 1)); echo "FAIL guard shard_max output"; fi

# messages: every byte, control characters escaped (a NUL used to end the
# message, an escape sequence reached the terminal)
expect msg_nul 1 'kvplan: (command line):1: a\x00b' -- -e 'error("a\0b")'
expect msg_escape 1 'kvplan: (command line):1: x\x1b[2Jcleared\nkvplan: forged line' -- \
  -e 'error("x\27[2Jcleared\nkvplan: forged line")'
if [ "$(wc -l < "$out/msg_escape.err")" -eq 1 ]; then pass=$((pass + 1)); echo "ok   guard msg_escape is one line"
else fail=$((fail + 1)); echo "FAIL guard msg_escape spans lines"; fi
"$kvplan" -e 'error(("x"):rep(4992))' 2> "$out/msg_long.err"
if [ "$(wc -c < "$out/msg_long.err")" -eq $((8 + 4096 + 20 + 1)) ] && grep -q 'x\.\.\. (914 more bytes)$' "$out/msg_long.err"; then
  pass=$((pass + 1)); echo "ok   guard msg_long is cut at 4096 bytes"
else fail=$((fail + 1)); echo "FAIL guard msg_long: $(wc -c < "$out/msg_long.err") bytes"; fi
printf 'id,layers,hidden,heads\n"a\033[31mred",2,8,3\n' > "$out/esc.csv"
expect csv_escape 1 "kvplan: (command line):1: $out/esc.csv:2:4: model 'a\\x1b[31mred': field 'heads' (3) does not divide field 'hidden' (8); give 'head_dim' when the heads are not hidden / heads wide" -- \
  -e "require('kvplan').models.load_csv('$out/esc.csv')"

echo "guard: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
