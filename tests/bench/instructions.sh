#!/bin/sh
# tests/bench/instructions.sh: the kvplan side of each `make bench` shape run
# by two builds, compared by the instructions they execute (valgrind's
# callgrind, Ir: unlike CPU seconds, the same on a loaded or virtual machine)
# and by their outputs (cmp). For a change that must not make kvplan slower:
# build the old revision in a second worktree, then
#   sh tests/bench/instructions.sh OLD_CHECKOUT [NEW_CHECKOUT]
# Each checkout runs its own build/kvplan on its own tests/bench scripts.
# Needs valgrind (Debian: valgrind). Prints new/old a shape.
set -e
old=$1 new=${2:-.}
[ -x "$old/build/kvplan" ] && [ -x "$new/build/kvplan" ] ||
  { echo "usage: sh tests/bench/instructions.sh OLD_CHECKOUT [NEW_CHECKOUT] (each built: make all)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ir() { # CHECKOUT OUTFILE ARGS...: the instructions of one run
  dir=$1 file=$2; shift 2
  (cd "$dir" && valgrind --tool=callgrind --callgrind-out-file=/dev/null build/kvplan --quiet "$@" \
     2>&1 > "$file" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
}
shape() {
  name=$1; shift
  a=$(ir "$old" "$out/$name-old.csv" "$@")
  b=$(ir "$new" "$out/$name-new.csv" "$@")
  if cmp -s "$out/$name-old.csv" "$out/$name-new.csv"; then same="outputs identical"
  else same="OUTPUTS DIFFER: $(cmp "$out/$name-old.csv" "$out/$name-new.csv" | head -n 1)"; fi
  printf '(%s) old %s, new %s instructions: new/old %s; %s\n' "$name" "$a" "$b" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')" "$same"
}
shape a tests/bench/article_shape.lua lens=10
shape b tests/bench/sweep.lua contexts=125
shape c tests/bench/optim_shape.lua
shape c2 tests/bench/optim_combos.lua
shape d tests/bench/sweep.lua contexts=125 lua=true
shape d2 tests/bench/sweep.lua contexts=125 decl=true
shape e tests/bench/predict_shape.lua
