#!/bin/sh
# tests/run_layout.sh: docs/layout.md has a line for every file under engine/,
# stdlib/ and scripts/ (a list item: "- `path`: its concept"), once, and every
# path it lists that way exists. Run from the repository's root.
# Usage: sh tests/run_layout.sh [docs/layout.md]
doc=${1:-docs/layout.md}
pass=0; fail=0
listed=$(sed -n 's/^- `\([^`]*\)`.*/\1/p' "$doc")
for f in $(find engine stdlib scripts -type f | LC_ALL=C sort); do
  if printf '%s\n' "$listed" | grep -qxF "$f"; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL layout: $f has no line in $doc (add: - \`$f\`: its concept)"; fi
done
for p in $listed; do
  if [ -e "$p" ]; then pass=$((pass + 1))
  else fail=$((fail + 1)); echo "FAIL layout: $doc lists $p, which does not exist"; fi
done
for p in $(printf '%s\n' "$listed" | LC_ALL=C sort | uniq -d); do
  fail=$((fail + 1)); echo "FAIL layout: $doc lists $p more than once"
done
echo "layout: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
