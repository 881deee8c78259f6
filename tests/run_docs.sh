#!/bin/sh
# tests/run_docs.sh KVPLAN [check|update] FILE...: the command outputs shown
# in the docs, run. A block
#   <!-- kvplan-run: ARGS -->
#       $ kvplan ARGS
#       ... what it prints on a terminal of 100 columns, indented 4 ...
#   <!-- kvplan-end -->
# is the output of `kvplan ARGS` (standard output and error) under script(1),
# COLUMNS=100, run in a directory holding every ```lua block of the same
# file that opens with "-- NAME.lua" as NAME.lua. check (make test) fails
# naming each block that differs; update (make docs) rewrites them.
set -u
kvplan=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=$2
shift 2
if ! command -v script > /dev/null 2>&1; then
  echo "skip docs: script(1) (util-linux) is not installed"
  exit 0
fi
fail=0 pass=0
for f in "$@"; do
  work=$(mktemp -d)
  # the scripts the file shows
  awk -v dir="$work" '
    /^```lua$/ { inblock = 1; name = ""; next }
    inblock && /^```$/ { inblock = 0; if (name != "") close(dir "/" name); next }
    inblock && name == "" && /^-- [A-Za-z0-9_.-]+\.lua$/ { name = substr($0, 4) }
    inblock && name != "" { print > (dir "/" name) }
  ' "$f"
  # each block's command, run
  grep '^<!-- kvplan-run: .* -->$' "$f" | sed 's/^<!-- kvplan-run: \(.*\) -->$/\1/' > "$work/.commands"
  n=0
  while IFS= read -r args; do
    n=$((n + 1))
    (cd "$work" && COLUMNS=100 NO_COLOR=1 script -qec "$kvplan -q $args" /dev/null < /dev/null) |
      tr -d '\r' | sed 's/^/    /; s/^ *$//' > "$work/.out.$n"
  done < "$work/.commands"
  # the file with every block as it runs now
  awk -v dir="$work" '
    /^<!-- kvplan-run: .* -->$/ {
      print; n++; args = $0; sub(/^<!-- kvplan-run: /, "", args); sub(/ -->$/, "", args)
      print "    $ kvplan " args
      while ((getline line < (dir "/.out." n)) > 0) print line
      close(dir "/.out." n); skip = 1; next
    }
    /^<!-- kvplan-end -->$/ { skip = 0 }
    !skip { print }
  ' "$f" > "$work/.new"
  if cmp -s "$f" "$work/.new"; then
    pass=$((pass + 1)); echo "ok   docs $f ($n outputs)"
  elif [ "$mode" = update ]; then
    cp "$work/.new" "$f"; echo "updated docs $f ($n outputs)"
  else
    fail=$((fail + 1)); echo "FAIL docs $f: an output shown is not what kvplan prints (make docs rewrites it):"
    diff "$f" "$work/.new" | head -20
  fi
  rm -rf "$work"
done
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
