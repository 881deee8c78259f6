#!/bin/sh
# tests/bench/validate.sh: `make bench`'s kvplan validate line: a generated
# 1 GB vLLM serving log (tests/bench/validate_log.py: a raw log's startup
# lines, a server's request and stats lines, its KV lines at the end) read
# by kvplan validate, beside `wc -l` of the same file (the speed of reading
# its lines) and, for memory, kvplan validate of a 1 MB log made the same
# way, all measured in this run (best of BENCH_N CPU seconds, peak RSS).
# Targets: under 20 CPU seconds for the 1 GB log (scope 5 of issue 20), the
# peak memory within 1.10x of the 1 MB log's. The logs are removed after.
# Usage: sh tests/bench/validate.sh build/kvplan [MISSED-FILE]
set -e
kvplan=$1
missed=${2:-/dev/null}
out=$(dirname "$kvplan")/bench
n=${BENCH_N:-3}
mkdir -p "$out"
big=$out/validate-1g.log
small=$out/validate-1m.log
trap 'rm -f "$big" "$small" "$out/validate-1g.csv" "$out/validate-1m.csv" "$out/validate-wc.txt"' EXIT
head=tests/validation/raw/vllm-24162-qwen2.5-0.5b-tp2.log
tail=tests/validation/raw/vllm-lmcache-1739-qwen3-14b.log
python3 tests/bench/validate_log.py "$big" 1000000000 "$head" "$tail"
python3 tests/bench/validate_log.py "$small" 1000000 "$head" "$tail"
bytes=$(wc -c < "$big")
tk=$(python3 tests/bench/timeit.py "$n" "$out/validate-1g.csv" "$kvplan" --quiet validate "$big" gpu=h100-sxm)
tw=$(python3 tests/bench/timeit.py "$n" "$out/validate-wc.txt" wc -l "$big")
ts=$(python3 tests/bench/timeit.py "$n" "$out/validate-1m.csv" "$kvplan" --quiet validate "$small" gpu=h100-sxm)
# the figures of both logs are the same rows (the startup and KV lines are)
if [ "$(cut -d, -f2- "$out/validate-1g.csv" | sed 's/log:[0-9]*/log/g')" != \
     "$(cut -d, -f2- "$out/validate-1m.csv" | sed 's/log:[0-9]*/log/g')" ]; then
  echo "bench: FAILED: validate of the 1 GB log and of the 1 MB log give other rows" >&2
  exit 1
fi
python3 - "$bytes" "$tk" "$tw" "$ts" "$missed" <<'PY'
import sys
size = int(sys.argv[1])
k, w, s = (list(map(float, a.split())) for a in sys.argv[2:5])
mb = size / 1e6
ok_t = k[0] < 20
ratio = k[2] / s[2]
ok_m = ratio <= 1.10
print("validate: a %.2f GB serving log (tests/bench/validate_log.py), rows as of a 1 MB one" % (size / 1e9))
print("    %-34s %8.2f s (%.2f s)  %.0f MB/s (target < 20 s%s)"
      % ("kvplan validate", k[0], k[1], mb / k[0], "" if ok_t else ": MISSED"))
print("    %-34s %8.2f s (%.2f s)  %.0f MB/s, kvplan at %.1f %% of its speed"
      % ("wc -l (reading its lines)", w[0], w[1], mb / w[0], 100 * w[0] / k[0]))
print("    peak memory: %d KB, of a 1 MB log %d KB: ratio %.3f (target <= 1.10%s)"
      % (k[2], s[2], ratio, "" if ok_m else ": MISSED"))
if not (ok_t and ok_m):
    with open(sys.argv[5], "a") as f:
        f.write("x\n")
PY
