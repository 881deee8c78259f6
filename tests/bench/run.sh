#!/bin/sh
# tests/bench/run.sh: `make bench`: kvplan's sweep speed and memory, each
# figure beside its baseline measured in the same run, as a ratio.
#   1. a sweep of 2,080,000 rows written as CSV, against the same sweep
#      computed with the Python functions of the article that
#      examples/recompute_article_ledger.lua checks, and Python's csv module;
#   2. the same sweep against a hand-written C loop with printf (whose output
#      must be byte-identical to kvplan's);
#   3. peak memory of a 20,800,000-row sweep against the 2,080,000-row one;
#   4. the serving simulator on 100,000 requests (tests/bench/simulate.lua).
# Usage: sh tests/bench/run.sh build/kvplan
set -e
kvplan=$1
out=$(dirname "$kvplan")/bench
mkdir -p "$out"
cc -O2 -o "$out/c_loop" tests/bench/c_loop.c -lm
"$kvplan" tests/bench/sweep.lua inputs="$out/inputs.txt"

# best of three wall-clock seconds of a command (stdout to a file)
best() {
  dest=$1; shift
  b=""
  for i in 1 2 3; do
    t=$( { /usr/bin/time -f "%e" "$@" > "$dest"; } 2>&1 | tail -n 1)
    if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
  done
  echo "$b"
}

tk=$(best "$out/kvplan.csv" "$kvplan" --quiet tests/bench/sweep.lua)
tc=$(best "$out/c_loop.csv" "$out/c_loop" "$out/inputs.txt")
tp=$( { /usr/bin/time -f "%e" python3 tests/bench/seed_baseline.py "$out/inputs.txt" > "$out/python.csv"; } 2>&1 | tail -n 1)
n=$(($(wc -l < "$out/kvplan.csv") - 1))
cmp -s "$out/kvplan.csv" "$out/c_loop.csv" || { echo "bench: kvplan and the C loop disagree"; exit 1; }
[ "$(head -n 1 "$out/python.csv")" = "$(head -n 1 "$out/kvplan.csv")" ] || { echo "bench: columns differ"; exit 1; }

rate() { echo "scale=2; $1 / $2 / 1000000" | bc; }
ratio() { echo "scale=1; $1 / $2" | bc; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "rows: $n (kvplan and C loop byte-identical; Python: same columns, the article's formula)"
printf '%-44s %8s s  %7s M rows/s\n' "kvplan sweep" "$tk" "$(rate "$n" "$tk")"
printf '%-44s %8s s  %7s M rows/s\n' "article's Python functions + csv module" "$tp" "$(rate "$n" "$tp")"
printf '%-44s %8s s  %7s M rows/s\n' "hand-written C loop + printf" "$tc" "$(rate "$n" "$tc")"
echo "speed vs Python: $(ratio "$tp" "$tk")x (target >= 30x)"
echo "speed vs C printf loop: $(ratio "$tc" "$tk")x (target >= 1x)"

m2=$( { /usr/bin/time -f "%M" "$kvplan" --quiet tests/bench/sweep.lua > /dev/null; } 2>&1 | tail -n 1)
m20=$( { /usr/bin/time -f "%M" "$kvplan" --quiet tests/bench/sweep.lua contexts=2500 > /dev/null; } 2>&1 | tail -n 1)
echo "peak memory: $m2 KB for 2,080,000 rows, $m20 KB for 20,800,000 rows:" \
     "ratio $(echo "scale=3; $m20 / $m2" | bc) (target <= 1.10)"

# 4. the serving simulator: 100,000 chat-like requests (target < 1 s on one core)
"$kvplan" tests/bench/simulate.lua | sed 's/^/simulator: /; s/$/ (target < 1 s)/'
