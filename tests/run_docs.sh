#!/bin/sh
# tests/run_docs.sh KVPLAN [check|update] FILE...: the commands and outputs
# shown in the docs, run. In Markdown a block
#   <!-- kvplan-run: ARGS -->
#       $ kvplan ARGS
#       ... what it prints on a terminal of 100 columns, indented 4 ...
#   <!-- kvplan-end -->
# is the output of `kvplan ARGS` (standard output and error) under script(1),
# COLUMNS=100, with --quiet (kvplan-run-verbose: without, for a command whose
# summary on standard error is shown); a block <!-- kvplan-cmd: ARGS --> ...
# <!-- kvplan-end --> shows the command alone ("    $ kvplan ARGS"), which must exit with status 0 (its
# output, a file it writes, is not shown). In roff (a FILE ending in .1) the
# markers are comments, `.\" kvplan-run: ARGS` (-verbose, -cmd alike) and
# `.\" kvplan-end`, the block between them .nf ... .fi with roff's escapes, the
# outputs at 78 columns. Every block of a file runs in order in one directory
# holding every ```lua block of the file that opens with "-- NAME.lua" as
# NAME.lua, copies of the repository's examples/, tests/validation/ and
# tests/fixtures/ and an empty docs/: a chart a
# command writes there (docs/NAME.png) is the file's docs/NAME.png, and every
# docs/*.png a Markdown file shows must be written by one of its commands.
# A figure <!-- fig:NAME -->VALUE<!-- /fig --> (Markdown) is VALUE as the
# catalogs and the validation run give it now (figures() below).
# check (make test) fails naming each block that differs or fails and each
# chart not written or not of the committed chart's width and height (the PNG
# header; gnuplot's bytes are the same run after run on one machine, not
# across gnuplot, cairo and font versions, so they are not compared); update
# (make docs) rewrites the blocks and copies the charts over docs/.
set -u
kvplan=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=$2
shift 2
root=$(pwd)
if ! command -v script > /dev/null 2>&1; then
  echo "skip docs: script(1) (util-linux) is not installed"
  exit 0
fi
# a PNG's width and height: bytes 17-24, two big-endian 32-bit integers
png_size() {
  od -An -tu1 -j16 -N8 "$1" 2> /dev/null |
    awk 'NF == 8 { printf "%dx%d", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'
}
# must_run ARGS LOG: `kvplan -q ARGS` (words as the shell splits them) in
# $work, its output in LOG; a status but 0 is reported naming $f
must_run() {
  shown=$1 log=$2
  (cd "$work" && eval "set -- $shown" && "$kvplan" -q "$@" < /dev/null > "$log" 2>&1)
  rc=$?
  [ "$rc" -eq 0 ] && return 0
  echo "FAIL docs $f: it shows 'kvplan $shown', which exits with status $rc (it must succeed):"
  head -5 "$log"
  return 1
}
# the figures a file quotes from the catalogs and the validation run, "NAME
# VALUE" a line: catalog sizes, the startup logs of tests/validation/ and the
# README's validation table (kvplan validate ... summary=1; errors in percent,
# two decimals below 1, one below 100, none above)
figures() {
  "$kvplan" -q -e "local kv = require 'kvplan'
    print('models ' .. #kv.models.all()); print('gpus ' .. #kv.gpus.all(true))"
  echo "logs $(ls tests/validation/*.log | wc -l)"
  echo "calibration_logs $(ls tests/validation/calib-*.log | wc -l)"
  "$kvplan" -q validate tests/validation/*.log summary=1 2> /dev/null | awk -F, '
    function pct(x) { x *= 100; return x == 0 ? "0" : x < 1 ? sprintf("%.2f", x) : x < 100 ? sprintf("%.1f", x) : sprintf("%.0f", x) }
    $1 == "exact_accounting" { print "exact_n " $2; print "exact " $5 }
    $1 == "weights_gib" { print "weights_n " $2; print "weights_median " pct($3); print "weights_worst " pct($4) }
    $1 == "kv_memory_gib" { print "kv_memory_n " $2; print "kv_memory_median " pct($3); print "kv_memory_worst " pct($4) }
    $1 == "kv_tokens" { print "kv_tokens_n " $2; print "kv_tokens_median " pct($3); print "kv_tokens_worst " pct($4) }
    $1 == "kv_tokens_stated" { print "kv_tokens_stated_worst " pct($4) }
    $1 == "activation_gib" { print "activation_n " $2; print "activation_median " pct($3); print "activation_worst " pct($4) }
    $1 == "non_torch_gib" { print "non_torch_n " $2; print "non_torch_median " pct($3); print "non_torch_worst " pct($4) }
    # every row of the summary: v_FIGURE_n, _median, _worst (percent) and
    # _median_diff, _worst_diff (its unit: two decimals, whole numbers as they are)
    function diff(x) { return x == int(x) ? sprintf("%d", x) : sprintf("%.2f", x) }
    NR > 1 && $1 != "exact_accounting" {
      v = "v_" $1; print v "_n " $2; print v "_median " pct($3); print v "_worst " pct($4)
      print v "_median_diff " diff($6); print v "_worst_diff " diff($7) }'
}
fail=0 pass=0
for f in "$@"; do
  work=$(mktemp -d)
  bad=0
  case $f in
    *.1) roff=1 cols=78 open='^\.\\" kvplan-\(run-verbose\|run\|cmd\): \(.*\)$' ;;
    *) roff=0 cols=100 open='^<!-- kvplan-\(run-verbose\|run\|cmd\): \(.*\) -->$' ;;
  esac
  # the scripts and files the file shows: a ```lua block opening with
  # "-- NAME.lua", a ```text block opening with "# NAME.EXT" (a manifest)
  awk -v dir="$work" '
    /^```(lua|text)$/ { inblock = 1; name = ""; next }
    inblock && /^```$/ { inblock = 0; if (name != "") close(dir "/" name); next }
    inblock && name == "" && /^-- [A-Za-z0-9_.-]+\.lua$/ { name = substr($0, 4) }
    inblock && name == "" && /^# [A-Za-z0-9_-]+\.[a-z]+$/ { name = substr($0, 3) }
    inblock && name != "" { print > (dir "/" name) }
  ' "$f"
  # copies, not links: a command the docs show cannot write into the tree
  cp -R "$root/examples" "$work/examples"
  mkdir "$work/tests" "$work/docs"
  cp -R "$root/tests/validation" "$root/tests/fixtures" "$work/tests/"
  # each block's command, run: "run ARGS" or "cmd ARGS" a line
  grep "$open" "$f" | sed "s/$open/\\1 \\2/" > "$work/.commands"
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    kind=${line%% *} args=${line#* }
    if [ "$kind" != cmd ]; then
      quiet=-q
      [ "$kind" = run-verbose ] && quiet=
      (cd "$work" && COLUMNS=$cols NO_COLOR=1 script -qec "$kvplan $quiet $args" /dev/null < /dev/null) |
        tr -d '\r' > "$work/.out.$n"
    else
      : > "$work/.out.$n"
      must_run "$args" "$work/.log.$n" || bad=1
    fi
  done < "$work/.commands"
  # the commands a Markdown file shows outside the blocks, each run: an
  # indented line "    kvplan ..." (a trailing "# comment" off, "\" joining
  # the next line, "; " parting two commands) and a code span `kvplan ...`
  # with an argument key=value, but for those with a placeholder ("...",
  # "[", "|", "<", an argument in capitals: FILE, M, "key=" alone) and the
  # indented lines after <!-- kvplan-not-run: WHY --> up to the next text
  # (recipes another test runs); each must exit 0
  if [ "$roff" = 0 ]; then
    awk '
      function spans(text,   at) {
        while (match(text, /`kvplan [^`]*`/)) {
          at = substr(text, RSTART + 1, RLENGTH - 2)
          if (at ~ /=/) print at
          text = substr(text, RSTART + RLENGTH)
        }
      }
      /^```/ { fence = !fence; next }
      fence { next }
      /^<!-- kvplan-(run-verbose|run|cmd): .* -->$/ { block = 1; next }
      /^<!-- kvplan-end -->$/ { block = 0; next }
      block { next }
      /^<!-- kvplan-not-run: .* -->$/ { notrun = 1; next }
      notrun && (/^$/ || /^    /) { next }
      { notrun = 0 }
      cont != "" { line = $0; sub(/^ +/, "", line); sub(/  +#.*$/, "", line); cont = cont " " line
        if (cont ~ /\\$/) { sub(/ *\\$/, "", cont); next }
        print cont; cont = ""; next }
      /^    kvplan / {
        line = substr($0, 5); sub(/  +#.*$/, "", line)
        if (line ~ /\\$/) { sub(/ *\\$/, "", line); cont = line; next }
        n = split(line, part, /; /); for (i = 1; i <= n; i++) print part[i]; next
      }
      /^$/ { spans(para); para = ""; next }
      /^    / { next }
      { para = para " " $0 }
      END { spans(para) }
    ' "$f" | sed 's/^kvplan //' | grep -v -E '\.\.\.|\[|\||<|=( |$)|(^|[ =])[A-Z][A-Z_]*([ ,]|$)' > "$work/.shown"
    m=0
    while IFS= read -r args; do
      m=$((m + 1))
      must_run "$args" "$work/.shown.$m" || bad=1
    done < "$work/.shown"
    n=$((n + m))
  fi
  # the figures it quotes, <!-- fig:NAME -->VALUE<!-- /fig -->
  if grep -q '<!-- fig:[a-z_]* -->' "$f"; then
    (cd "$root" && figures) > "$work/.figures"
  else
    : > "$work/.figures"
  fi
  # the file with every block as it runs now and every figure as it is
  awk -v dir="$work" -v roff="$roff" -v quote="'" '
    BEGIN { while ((getline line < (dir "/.figures")) > 0) { split(line, w, " "); fig[w[1]] = w[2] } }
    /<!-- fig:[a-z_]* -->/ {
      out = ""; rest = $0
      while (match(rest, /<!-- fig:[a-z_]* -->[^<]*<!-- \/fig -->/)) {
        name = substr(rest, RSTART + 9); sub(/ -->.*/, "", name)
        value = (name in fig) ? fig[name] : "(no figure " name ")"
        out = out substr(rest, 1, RSTART - 1) "<!-- fig:" name " -->" value "<!-- /fig -->"
        rest = substr(rest, RSTART + RLENGTH)
      }
      $0 = out rest
    }
    function esc(s) {
      gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
      if (substr(s, 1, 1) == "." || substr(s, 1, 1) == quote) s = "\\&" s
      return s
    }
    function block(args, n,   line) {
      if (roff) { print ".nf"; print esc("$ kvplan " args) }
      else print "    $ kvplan " args
      while ((getline line < (dir "/.out." n)) > 0) {
        if (roff) print esc(line)
        else if (line ~ /^ *$/) print ""
        else print "    " line
      }
      close(dir "/.out." n)
      if (roff) print ".fi"
    }
    BEGIN {
      head = roff ? "^\\.\\\\\" kvplan-(run-verbose|run|cmd): " : "^<!-- kvplan-(run-verbose|run|cmd): "
      tail = roff ? "$" : " -->$"
      end = roff ? "^\\.\\\\\" kvplan-end$" : "^<!-- kvplan-end -->$"
    }
    !skip && $0 ~ (head ".*" tail) {
      print; n++; args = $0
      sub(head, "", args); sub(tail, "", args)
      block(args, n); skip = 1; next
    }
    $0 ~ end { skip = 0 }
    !skip { print }
  ' "$f" > "$work/.new"
  if grep -q '<!-- fig:[a-z_]* -->(no figure ' "$work/.new"; then
    bad=1; echo "FAIL docs $f: it quotes a figure run_docs.sh does not compute:"
    grep -o '<!-- fig:[a-z_]* -->(no figure [a-z_]*)' "$work/.new" | sort -u
  fi
  # the charts the commands wrote, and those the file shows
  for png in "$work"/docs/*.png; do
    [ -e "$png" ] || continue
    name=docs/$(basename "$png")
    if [ "$mode" = update ]; then
      cp "$png" "$root/$name"; echo "updated docs $name"
    elif [ ! -e "$root/$name" ]; then
      bad=1; echo "FAIL docs $f: a command writes $name, which the repository lacks (make docs writes it)"
    elif [ "$(png_size "$png")" != "$(png_size "$root/$name")" ] || [ -z "$(png_size "$png")" ]; then
      bad=1; echo "FAIL docs $f: $name is $(png_size "$root/$name"), its command writes $(png_size "$png")"
    fi
  done
  if [ "$roff" = 0 ]; then
    for name in $(grep -o '](docs/[A-Za-z0-9_.-]*\.png)' "$f" | sed 's/^](//; s/)$//' | sort -u); do
      if [ ! -e "$work/$name" ]; then
        bad=1; echo "FAIL docs $f: it shows $name, which none of its kvplan-run or kvplan-cmd commands writes"
      fi
    done
  fi
  if [ "$bad" = 1 ]; then
    fail=$((fail + 1))
  elif cmp -s "$f" "$work/.new"; then
    pass=$((pass + 1)); echo "ok   docs $f ($n commands)"
  elif [ "$mode" = update ]; then
    cp "$work/.new" "$f"; pass=$((pass + 1)); echo "updated docs $f ($n commands)"
  else
    fail=$((fail + 1)); echo "FAIL docs $f: an output or figure shown is not what kvplan gives (make docs rewrites it):"
    diff "$f" "$work/.new" | head -20
  fi
  rm -rf "$work"
done
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
