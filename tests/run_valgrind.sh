#!/bin/sh
# tests/run_valgrind.sh: the Lua tests and the examples under valgrind's
# memcheck: no invalid read or write, no use of uninitialised memory, no
# definite or indirect leak (the build without sanitizers: valgrind and ASan
# do not mix). Run by `make check`.
# Usage: sh tests/run_valgrind.sh build/kvplan [FILE...]
# Without FILEs: every tests/lua/*_test.lua and examples/*.lua but the ones
# named in SKIP below (each with its reason).
kvplan=$1; shift
out=$(dirname "$kvplan")/valgrind
mkdir -p "$out"
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind: 0 passed, 1 failed (valgrind not found: apt-get install valgrind)"; exit 1
fi
# sim_test and throughput_test run the serving simulator over thousands of
# steps: 20x slower under valgrind for code the other tests already cover
# (the simulator's C is checked by ASan in the same `make check`).
SKIP="tests/lua/sim_test.lua tests/lua/throughput_test.lua"
files="$*"
[ -n "$files" ] || files=$(ls tests/lua/*_test.lua examples/*.lua)
pass=0; fail=0; skip=0
for f in $files; do
  case " $SKIP " in *" $f "*) skip=$((skip + 1)); echo "skip valgrind $f"; continue ;; esac
  name=$(basename "$f" .lua)
  if valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
       --errors-for-leak-kinds=definite,indirect --track-origins=no \
       "$kvplan" "$f" > "$out/$name.out" 2> "$out/$name.err"; then
    pass=$((pass + 1)); echo "ok   valgrind $f"
  else
    fail=$((fail + 1)); echo "FAIL valgrind $f"; head -n 30 "$out/$name.err" | sed 's/^/     /'
  fi
done
echo "valgrind: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
