#!/bin/sh
# tests/run_valgrind.sh: the Lua tests and the examples under valgrind's
# memcheck: no invalid read or write, no use of uninitialised memory, no
# definite or indirect leak (the build without sanitizers: valgrind and ASan
# do not mix). Run by `make check`, JOBS files at a time (default: the
# number of processors); each file's verdict is printed in order once all
# have run.
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
# The files below execute no line of engine/ that the other files run here
# do not (gcov, 2026-12-04: each file run alone by a --coverage build,
# B=build/cov CFLAGS="-O0 -g --coverage" LDFLAGS=--coverage; the lines the
# others run together hold every line these run): 25 of 54 files, 130 of
# 990 s on a loaded machine (validate_test and plan_test, 470 s, have lines
# of their own: scan.c's log reader, the simulator's goodput count).
COVERED="examples/capacity_curve.lua examples/custom_optimization.lua examples/disaggregated.lua
  examples/engine_startup.lua examples/hybrid_groups.lua examples/launch_commands.lua
  examples/ledger_bars.lua examples/memory_bound.lua examples/pareto_front.lua
  examples/predicted_reserves.lua examples/recompute_article_ledger.lua
  examples/recompute_article_optimizations.lua tests/lua/calibrate_half_test.lua
  tests/lua/catalog_test.lua tests/lua/completion_test.lua tests/lua/ledger_items_test.lua
  tests/lua/options_test.lua tests/lua/pareto_test.lua tests/lua/plot_test.lua
  tests/lua/rotary_test.lua tests/lua/sglang_weights_test.lua tests/lua/sim_running_test.lua
  tests/lua/trtllm_test.lua tests/lua/units_test.lua tests/lua/vllm_step_test.lua"
# shellcheck disable=SC2086
SKIP=$(echo tests/lua/sim_test.lua tests/lua/throughput_test.lua $COVERED)
files="$*"
[ -n "$files" ] || files=$(ls tests/lua/*_test.lua examples/*.lua)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
run=""; skip=0
for f in $files; do
  case " $SKIP " in *" $f "*) skip=$((skip + 1)); echo "skip valgrind $f"; continue ;; esac
  run="$run $f"
done
# one valgrind a file, JOBS at once; NAME.rc holds its status
rm -f "$out"/*.rc
# shellcheck disable=SC2086
printf '%s\n' $run | xargs -P "$jobs" -I {} sh -c '
  f=$1; out=$2; kvplan=$3; name=$(basename "$f" .lua)
  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --track-origins=no \
    "$kvplan" "$f" > "$out/$name.out" 2> "$out/$name.err"
  echo $? > "$out/$name.rc"' sh {} "$out" "$kvplan"
pass=0; fail=0
for f in $run; do
  name=$(basename "$f" .lua)
  if [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ]; then
    pass=$((pass + 1)); echo "ok   valgrind $f"
  else
    fail=$((fail + 1)); echo "FAIL valgrind $f"; head -n 30 "$out/$name.err" | sed 's/^/     /'
  fi
done
echo "valgrind: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
