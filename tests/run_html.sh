#!/bin/sh
# tests/run_html.sh: HTML reports from the command line: -o FILE.html and
# -f html for commands, scripts and sweeps, hostile cells as text, the same
# bytes twice, a page without gnuplot, kvplan batch -f html's index page.
# (tests/run_browser.sh loads the pages in Chromium.)
# Usage: sh tests/run_html.sh build/kvplan
kvplan=$1
case $kvplan in /*) ;; *) kvplan=$(pwd)/$kvplan ;; esac
out=$(dirname "$kvplan")/html
rm -rf "$out"; mkdir -p "$out"
KVPLAN_SCRIPTS=${KVPLAN_SCRIPTS:-$(pwd)/scripts}; export KVPLAN_SCRIPTS
pass=0; fail=0
check() {
  name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   html $name"
  else fail=$((fail + 1)); echo "FAIL html $name"; fi
}
# rows NAME: the data rows of a page's report table
rows() { sed -n '/<table id="report">/,/<\/tbody>/p' "$1" | grep -c '^<tr><td'; }
# scripts PAGE: the <script> elements of a page (its own sort, one)
scripts() { grep -c '<script>' "$1"; }

cap="capacity model=llama-3.1-8b gpus=h100,l4 kv=bf16,fp8"
"$kvplan" $cap -o "$out/cap.html" 2> "$out/cap.err"; rc=$?
"$kvplan" $cap -f csv > "$out/cap.csv"
check "capacity -o cap.html: status 0, a row a CSV row" sh -c "
  [ $rc -eq 0 ] && [ \$(sed -n '/<table id=\"report\">/,/<\/tbody>/p' '$out/cap.html' | grep -c '^<tr><td') -eq \$((\$(wc -l < '$out/cap.csv') - 1)) ]"
check "capacity page: every column, units in the headers" sh -c "
  for c in \$(head -n 1 '$out/cap.csv' | tr , ' '); do grep -q \">\$c\\( <span class=\\\"unit\\\">([^)]*)</span>\\)\\?</th>\" '$out/cap.html' || exit 1; done &&
  grep -q '>kv_budget_gib_per_gpu <span class=\"unit\">(GiB)</span></th>' '$out/cap.html' &&
  grep -q '>max_concurrency <span class=\"unit\">(requests)</span></th>' '$out/cap.html'"
check "capacity page: the command, the options in effect, kvplan's version" sh -c "
  grep -q '<td>kvplan $cap</td>' '$out/cap.html' && grep -q '<th scope=\"row\">options in effect</th><td>.*model=llama-3.1-8b' '$out/cap.html' &&
  grep -q \"Written by kvplan \$('$kvplan' --version | cut -d' ' -f2)\\.\" '$out/cap.html'"
check "capacity page: one script (its own), nothing fetched" sh -c "
  [ \$(grep -c '<script>' '$out/cap.html') -eq 1 ] && ! grep -Eq '(src|href)=\"(https?:)?//' '$out/cap.html' &&
  ! grep -q '<link' '$out/cap.html'"
"$kvplan" $cap -o "$out/cap2.html" 2> /dev/null
"$kvplan" $cap -f html > "$out/cap3.html" 2> /dev/null
check "capacity page: the same bytes twice, and from -f html on stdout" sh -c "cmp -s '$out/cap.html' '$out/cap2.html' && cmp -s '$out/cap.html' '$out/cap3.html'"

# a chart: drawn inline when gnuplot is there; without it the page says so
# and the table is written all the same
if command -v gnuplot > /dev/null 2>&1; then
  check "capacity page: its chart as inline SVG" sh -c "
    grep -q '^<figcaption>requests of 131072 tokens held at once</figcaption>' '$out/cap.html' && grep -q '^<svg' '$out/cap.html' &&
    ! grep -q '<?xml' '$out/cap.html'"
fi
env PATH=/nonexistent "$kvplan" $cap -o "$out/nognuplot.html" 2> "$out/nognuplot.err"; rc=$?
check "without gnuplot: status 0, the page says so, the table written" sh -c "
  [ $rc -eq 0 ] && grep -q '<p class=\"note\">No chart: gnuplot is not installed (Debian: apt-get install gnuplot-nox)</p>' '$out/nognuplot.html' &&
  ! grep -q '<svg' '$out/nognuplot.html' && [ \$(sed -n '/<table id=\"report\">/,/<\/tbody>/p' '$out/nognuplot.html' | grep -c '^<tr><td') -eq 4 ]"
"$kvplan" --sandbox $cap -o "$out/sandbox.html" 2> /dev/null; rc=$?
check "under --sandbox: the page says why there is no chart" sh -c "
  [ $rc -eq 0 ] && grep -q '<p class=\"note\">No chart: .*sandbox' '$out/sandbox.html'"

# hostile cells of a CSV: text on the page and in the chart
"$kvplan" tests/cli/html_rows.lua -o "$out/hostile.html" 2> "$out/hostile.err"; rc=$?
check "hostile CSV cells: escaped in the table, no script or handler from data" sh -c "
  [ $rc -eq 0 ] && grep -q '<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>' '$out/hostile.html' &&
  grep -q '<td>&lt;/td&gt;&lt;img src=x onerror=alert(2)&gt;</td>' '$out/hostile.html' &&
  grep -q '<td>it&#39;s &quot;quoted&quot;</td>' '$out/hostile.html' &&
  [ \$(grep -c '<script>' '$out/hostile.html') -eq 1 ] && ! grep -q '<img' '$out/hostile.html' &&
  [ \$(sed -n '/<table id=\"report\">/,/<\/tbody>/p' '$out/hostile.html' | grep -c '^<tr><td') -eq 3 ]"
if command -v gnuplot > /dev/null 2>&1; then
  check "hostile CSV cells: the chart's labels escaped" sh -c "
    sed -n '/^<svg/,/<\/svg>/p' '$out/hostile.html' | grep -q '&lt;script>alert(1)&lt;/script>' &&
    ! sed -n '/^<svg/,/<\/svg>/p' '$out/hostile.html' | grep -qi '<script'"
fi

# other commands: ledger (stacked bars), a sweep streamed into a page, fit
"$kvplan" ledger model=llama-3.1-8b gpu=l4 context=4096 concurrency=2 -f html > "$out/ledger.html" 2> /dev/null
check "ledger -f html: eight items (the rotary cache one), a chart" sh -c "
  [ \$(sed -n '/<table id=\"report\">/,/<\/tbody>/p' '$out/ledger.html' | grep -c '^<tr><td') -eq 8 ] &&
  grep -q '^<figcaption>where one GPU&#39;s memory goes</figcaption>' '$out/ledger.html'"
# fit, best and simulate: the chart that answers each one's question (issue
# 22: their pages had none); captions from the command's own words
# chart_texts PAGE: the text elements of the page's charts, one a line
chart_texts() { sed -n '/^<svg/,/<\/svg>/p' "$1" | grep -o '<text[^>]*>[^<]*' | sed 's/^<text[^>]*>//'; }
if command -v gnuplot > /dev/null 2>&1; then
  fitc="fit model=llama-3.1-8b gpus=l4,h100 tp=1,2 context=8192 concurrency=4"
  "$kvplan" -q $fitc -o "$out/fit.html"; rc=$?
  "$kvplan" -q $fitc -o "$out/fit2.html"
  check "fit page: bars of the requests each GPU (a group) and tp (a bar) holds, the same bytes twice" sh -c "
    [ $rc -eq 0 ] && grep -q '^<figcaption>requests of 8192 tokens held at once (4 asked)</figcaption>' '$out/fit.html' &&
    [ \$(grep -c '^<svg' '$out/fit.html') -eq 1 ] && cmp -s '$out/fit.html' '$out/fit2.html'"
  chart_texts "$out/fit.html" > "$out/fit.texts"
  check "fit chart: the GPUs along, a series a tp, the quantity up" sh -c "
    grep -qx 'l4' '$out/fit.texts' && grep -qx 'h100-sxm' '$out/fit.texts' && grep -qx 'tp 1' '$out/fit.texts' &&
    grep -qx 'tp 2' '$out/fit.texts' && grep -qx 'max concurrency (requests)' '$out/fit.texts'"
  "$kvplan" -q fit model=llama-3.1-8b gpus=l4 tp=1 context=8192 -o "$out/fit1.html"
  check "fit page of one GPU and one tp: no axis swept, no chart" sh -c "! grep -q '<svg' '$out/fit1.html' && ! grep -q '<h2>Charts' '$out/fit1.html'"
  "$kvplan" -q --shard 1/2 $fitc -o "$out/fit_shard.html"
  check "fit page of a shard: the chart left out, the page says why" \
    grep -q '<p class="note">No chart: a shard of the sweep (--shard)' "$out/fit_shard.html"
  "$kvplan" -q best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm,h200 kv=bf16 top=3 -o "$out/best.html"; rc=$?
  chart_texts "$out/best.html" > "$out/best.texts"
  check "best page: the ranked metric (GPUs) of the top 3, a bar a candidate in rank order" sh -c "
    [ $rc -eq 0 ] && grep -q '^<figcaption>the best deployments by GPUs, 64 requests of 32768 tokens</figcaption>' '$out/best.html' &&
    [ \$(grep -Ec '^[0-9]+\. [a-z0-9-]+ tp [0-9]+ x pp [0-9]+\$' '$out/best.texts') -eq 3 ] &&
    grep -E '^[0-9]+\. ' '$out/best.texts' | cut -d. -f1 | tr '\n' ' ' | grep -qx '1 2 3 '"
  "$kvplan" -q best model=llama-3.1-8b input=1000 output=100 rate=2 gpus=l4,h100 rank=gpus -o "$out/best_sla.html"; rc=$?
  check "best rate= page: replicas under the SLA, the ranked metric by candidate" sh -c "
    [ $rc -eq 0 ] && grep -q '^<figcaption>the best deployments by GPUs, 2 requests a second under the SLA</figcaption>' '$out/best_sla.html' &&
    grep -q '^<svg' '$out/best_sla.html'"
  "$kvplan" -q simulate model=llama-3.1-8b gpu=l4 requests=50 rate=1,2,4 -o "$out/sim.html"; rc=$?
  check "simulate page, rate swept: throughput, TTFT and TPOT against the rate" sh -c "
    [ $rc -eq 0 ] && [ \$(grep -c '^<svg' '$out/sim.html') -eq 3 ] &&
    grep -q '^<figcaption>output throughput (tokens/s) by request rate</figcaption>' '$out/sim.html' &&
    grep -q '^<figcaption>TTFT p99 (ms) by request rate</figcaption>' '$out/sim.html' &&
    grep -q '^<figcaption>TPOT p99 (ms) by request rate</figcaption>' '$out/sim.html' &&
    sed -n '/^<svg/,/<\/svg>/p' '$out/sim.html' | grep -q '>request rate (requests/s)<'"
  "$kvplan" -q simulate model=llama-3.1-8b gpu=l4,h100 requests=50 -o "$out/sim_gpu.html"
  check "simulate page, GPUs swept: bars of each GPU" sh -c "
    [ \$(grep -c '^<svg' '$out/sim_gpu.html') -eq 3 ] && grep -q '^<figcaption>output throughput (tokens/s) by gpu</figcaption>' '$out/sim_gpu.html'"
  "$kvplan" -q simulate model=llama-3.1-8b gpu=l4 requests=50 -o "$out/sim1.html"
  check "simulate page of one simulation: nothing swept, no chart" sh -c "! grep -q '<svg' '$out/sim1.html'"
fi
"$kvplan" --quiet tests/batch/sweep.lua -o "$out/sweep.html"; rc=$?
"$kvplan" --quiet tests/batch/sweep.lua -f csv > "$out/sweep.csv"
check "a sweep -o sweep.html: every row, streamed" sh -c "
  [ $rc -eq 0 ] && [ \$(sed -n '/<table id=\"report\">/,/<\/tbody>/p' '$out/sweep.html' | grep -c '^<tr><td') -eq \$((\$(wc -l < '$out/sweep.csv') - 1)) ] &&
  grep -q '<td>kvplan tests/batch/sweep.lua</td>' '$out/sweep.html'"
"$kvplan" -e "local kv = require 'kvplan'
  local r = kv.report{columns = {'a'}, format = 'html', title = 'from -e'}
  r:row{a = 1} r:close()" > "$out/e.html"
check "kv.report{format = 'html'} on standard output" sh -c "grep -q '<h1>from -e</h1>' '$out/e.html' && grep -q '<p id=\"rows\">1 row</p>' '$out/e.html'"
"$kvplan" fit model=llama-3.1-8b gpus=l4 -f htm > /dev/null 2> "$out/badfmt.err"; rc=$?
check "-f htm: status 2, the formats named" sh -c "
  [ $rc -eq 2 ] && grep -q \"^kvplan: bad --format 'htm' (expected csv, table, vertical, json, markdown or html)\" '$out/badfmt.err'"

# a command's text (startup, launch): -o FILE writes it there (it went to
# standard output, -o unheard), -o FILE.html as a page, both atomically
st="startup model=llama-3.1-8b gpu=h100"
"$kvplan" $st > "$out/startup.out" 2> /dev/null
"$kvplan" $st -o "$out/startup.txt" > "$out/startup_o.out" 2> /dev/null; rc=$?
check "startup -o FILE: the text in the file, nothing on standard output" sh -c "
  [ $rc -eq 0 ] && [ -s '$out/startup.out' ] && cmp -s '$out/startup.out' '$out/startup.txt' && [ ! -s '$out/startup_o.out' ]"
"$kvplan" $st -o "$out/startup.html" 2> /dev/null; rc=$?
check "startup -o FILE.html: a page of the engine's lines and the inputs" sh -c "
  [ $rc -eq 0 ] && grep -q '^<pre id=\"text\"># source: kvplan startup' '$out/startup.html' &&
  grep -q '^GPU KV cache size: [0-9,]* tokens\$' '$out/startup.html' && grep -q '<td>kvplan $st</td>' '$out/startup.html' &&
  ! grep -q '<script' '$out/startup.html' && grep -q 'Written by kvplan' '$out/startup.html'"
"$kvplan" launch model=llama-3.1-8b gpu=h100 -f html > "$out/launch.html" 2> /dev/null; rc=$?
"$kvplan" launch model=llama-3.1-8b gpu=h100 -f html > "$out/launch2.html" 2> /dev/null
check "launch -f html: the command on a page, the same bytes twice" sh -c "
  [ $rc -eq 0 ] && grep -q '^vllm serve meta-llama/Llama-3.1-8B ' '$out/launch.html' && cmp -s '$out/launch.html' '$out/launch2.html'"

# kvplan batch -f html: a page a script and the index linking them
rm -rf "$out/b"
"$kvplan" batch -q -f html -d "$out/b" capacity ledger startup tests/batch/bad.lua model=llama-3.1-8b gpu=l4 2> "$out/batch.err"; rc=$?
check "batch -f html: status 1 (a script failed), a page each, the index" sh -c "
  [ $rc -eq 1 ] && [ -s '$out/b/capacity.html' ] && [ -s '$out/b/ledger.html' ] && [ -s '$out/b/index.html' ] &&
  grep -q '^<pre id=\"text\">' '$out/b/startup.html' &&
  ! ls '$out/b' | grep -q '\.tmp\.'"
check "batch index: each script, its status, links to its pages" sh -c "
  grep -q '<p id=\"summary\">4 scripts, 3 ok, 1 failed.</p>' '$out/b/index.html' &&
  grep -q '<a href=\"startup.html\">startup.html</a>' '$out/b/index.html' &&
  grep -q '<tr><td>capacity</td><td>ok</td><td>capacity</td><td>model=llama-3.1-8b gpu=l4</td><td><a href=\"capacity.html\">capacity.html</a></td></tr>' '$out/b/index.html' &&
  grep -q '<td>kvplan capacity model=llama-3.1-8b gpu=l4</td>' '$out/b/capacity.html' &&
  grep -q '<tr><td>bad</td><td class=\"note\">FAILED</td><td>tests/batch/bad.lua</td>.*none (the batch' '$out/b/index.html' &&
  grep -q 'Written by kvplan' '$out/b/index.html'"
cp "$out/b/index.html" "$out/index1.html"
"$kvplan" batch -q -f html -d "$out/b" capacity ledger startup tests/batch/bad.lua model=llama-3.1-8b gpu=l4 2> /dev/null
check "batch index: the same bytes twice" cmp -s "$out/index1.html" "$out/b/index.html"
printf 'index: capacity model=llama-3.1-8b\n' > "$out/m.txt"
"$kvplan" batch -q -f html -d "$out/b2" -m "$out/m.txt" 2> "$out/index_name.err"; rc=$?
check "batch -f html: a report named index is refused (status 2), nothing run" sh -c "
  [ $rc -eq 2 ] && grep -q \"would be named 'index'\" '$out/index_name.err' && [ ! -e '$out/b2' ]"

echo "html: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
