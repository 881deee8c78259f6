#!/bin/sh
# tests/run_golden.sh: every example (and the default scenario) must print
# exactly its golden CSV, twice in a row (determinism).
# Usage: sh tests/run_golden.sh build/kvplan
kvplan=$1
out=$(dirname "$kvplan")/golden
mkdir -p "$out"
pass=0; fail=0
check() { # name, command...
  name=$1; shift
  if "$@" > "$out/$name.csv" 2> "$out/$name.err" && "$@" > "$out/$name.2.csv" 2>&1 &&
     diff -u "tests/golden/$name.csv" "$out/$name.csv" && cmp -s "$out/$name.csv" "$out/$name.2.csv"; then
    pass=$((pass + 1)); echo "ok   golden $name"
  else
    fail=$((fail + 1)); echo "FAIL golden $name"; cat "$out/$name.err"
  fi
}
check default "$kvplan"
for ex in examples/*.lua; do
  name=$(basename "$ex" .lua)
  if [ ! -f "tests/golden/$name.csv" ]; then
    fail=$((fail + 1)); echo "FAIL golden $name: no tests/golden/$name.csv"; continue
  fi
  check "$name" "$kvplan" "$ex"
done
# ready scripts: tests/golden/scripts/NAME.args holds the script and its
# key=value arguments on one line; NAME.csv is what it must print
for a in tests/golden/scripts/*.args; do
  [ -e "$a" ] || continue
  name=scripts/$(basename "$a" .args)
  mkdir -p "$out/scripts"
  # shellcheck disable=SC2046
  check "$name" "$kvplan" $(cat "$a")
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
