#!/bin/sh
# tests/run_browser.sh: an HTML report in a real browser, Debian's Chromium
# headless: the page loads from file:// (nothing fetched: its policy allows
# no source), its table has a row a report row, a click on a header sorts
# the rows (numbers as numbers, a second click the other way, text by code
# point), the chart is drawn (an SVG of its size on the page), and a
# screenshot is a PNG of the window's size, not of one colour (read back by
# Chromium itself: the PNG drawn on a canvas, its pixels compared).
# Skipped, saying so, only when Chromium is not installed (make
# browser-tests installs it with the other Debian packages: BROWSER_PKGS).
# Usage: sh tests/run_browser.sh build/kvplan
kvplan=$1
case $kvplan in /*) ;; *) kvplan=$(pwd)/$kvplan ;; esac
out=$(dirname "$kvplan")/browser
rm -rf "$out"; mkdir -p "$out"
KVPLAN_SCRIPTS=${KVPLAN_SCRIPTS:-$(pwd)/scripts}; export KVPLAN_SCRIPTS
browser=
for b in chromium chromium-browser; do
  if command -v "$b" > /dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "skip browser: Chromium is not installed and could not be (Debian: apt-get install chromium); the HTML report was not loaded in a browser"
  exit 0
fi
pass=0; fail=0
check() {
  name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   browser $name"
  else fail=$((fail + 1)); echo "FAIL browser $name"; fi
}
# chrome URL...: headless, its own profile, no GPU; as root it needs --no-sandbox
chrome() {
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --disable-background-networking --disable-sync --hide-scrollbars --force-device-scale-factor=1 \
    --user-data-dir="$out/profile" "$@" 2>> "$out/chromium.err"
}

cap="capacity model=llama-3.1-8b gpus=h100,l4 kv=bf16,fp8"
"$kvplan" $cap -o "$out/page.html" 2> /dev/null
"$kvplan" $cap -f csv > "$out/page.csv"
nrows=$(($(wc -l < "$out/page.csv") - 1))
# kv_tokens ascending as numbers, then the other way; kv (column 5) as text
col=$(head -n 1 "$out/page.csv" | tr , '\n' | grep -n '^kv_tokens$' | cut -d: -f1)
asc=$(tail -n +2 "$out/page.csv" | cut -d, -f"$col" | sort -n | tr '\n' ' ' | sed 's/ $//')
desc=$(tail -n +2 "$out/page.csv" | cut -d, -f"$col" | sort -rn | tr '\n' ' ' | sed 's/ $//')
kvs=$(tail -n +2 "$out/page.csv" | cut -d, -f5 | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')

# the page with a test script after its own: the rows, three clicks, the chart
sed 's|</body>|<script>\
(function(){var out=[],t=document.getElementById("report"),hs=t.tHead.rows[0].cells;\
function col(n){for(var i=0;i<hs.length;i++)if(hs[i].childNodes[0].nodeValue.trim()===n)return i;return -1;}\
function vals(c){return Array.prototype.map.call(t.tBodies[0].rows,function(r){return r.cells[c].textContent;}).join(" ");}\
out.push("rows="+t.tBodies[0].rows.length);\
var k=col("kv_tokens");hs[k].click();out.push("asc="+vals(k)+" "+hs[k].getAttribute("aria-sort"));\
hs[k].click();out.push("desc="+vals(k)+" "+hs[k].getAttribute("aria-sort"));\
var g=col("kv");hs[g].click();out.push("text="+vals(g));\
var s=document.querySelector("figure svg"),r=s?s.getBoundingClientRect():null;\
out.push("svg="+(r?Math.round(r.width)+"x"+Math.round(r.height)+" "+s.querySelectorAll("path,rect,text").length:"none"));\
var p=document.createElement("pre");p.id="result";p.textContent=out.join(";");document.body.appendChild(p);})();\
</script></body>|' "$out/page.html" > "$out/clicked.html"
chrome --window-size=1200,900 --dump-dom "file://$out/clicked.html" > "$out/clicked.dom"
result=$(sed -n 's|.*<pre id="result">\(.*\)</pre>.*|\1|p' "$out/clicked.dom")
echo "     $result"
check "the page loads, a table row a report row ($nrows)" sh -c "echo '$result' | grep -q '^rows=$nrows;'"
check "a click on kv_tokens sorts as numbers ($asc)" sh -c "echo '$result' | grep -q ';asc=$asc ascending;'"
check "a second click sorts the other way" sh -c "echo '$result' | grep -q ';desc=$desc descending;'"
check "a text column sorts by code point ($kvs)" sh -c "echo '$result' | grep -q ';text=$kvs;'"
if command -v gnuplot > /dev/null 2>&1; then
  check "the chart renders: an SVG of its size with its marks" sh -c "echo '$result' | grep -Eq ';svg=800x500 [0-9]{2,}\$'"
fi

# hostile CSV cells as the browser parses the page: text in their cells,
# no element or script of theirs (two scripts: the page's and this test's;
# the dump escapes the cells' text again)
"$kvplan" tests/cli/html_rows.lua -o "$out/hostile.html" 2> /dev/null
sed 's|</body>|<script>\
(function(){var c=document.getElementById("report").tBodies[0].rows[0].cells;\
var p=document.createElement("pre");p.id="result";\
p.textContent="cell="+c[0].textContent+";note="+c[2].textContent+";scripts="+document.scripts.length+\
";img="+document.getElementsByTagName("img").length+";onerror="+document.querySelectorAll("[onerror]").length;\
document.body.appendChild(p);})();\
</script></body>|' "$out/hostile.html" > "$out/hostile_dom.html"
hostile=$(chrome --dump-dom "file://$out/hostile_dom.html" | sed -n 's|.*<pre id="result">\(.*\)</pre>.*|\1|p')
echo "     $hostile"
check "hostile cells are text: <script> and an onerror image made nothing" sh -c "
  [ \"\$(printf '%s' '$hostile')\" = 'cell=&lt;script&gt;alert(1)&lt;/script&gt;;note=&lt;/td&gt;&lt;img src=x onerror=alert(2)&gt;;scripts=2;img=0;onerror=0' ]"

# a screenshot of the page: its size, more than one colour
chrome --screenshot="$out/shot.png" --window-size=1200,900 "file://$out/page.html" > /dev/null
size=$(od -An -tu1 -j16 -N8 "$out/shot.png" 2> /dev/null | tr -s ' ' | sed 's/^ //')
check "the screenshot is a 1200x900 PNG" sh -c "
  [ \"\$(head -c 8 '$out/shot.png' | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ] && [ '$size' = '0 0 4 176 0 0 3 132' ]"
{ printf '<!DOCTYPE html><html><body><img id="i" src="data:image/png;base64,'
  base64 -w0 "$out/shot.png"
  printf '"><pre id="r"></pre><script>\n'
  printf 'var i=document.getElementById("i");function go(){var c=document.createElement("canvas");'
  printf 'c.width=i.naturalWidth;c.height=i.naturalHeight;var x=c.getContext("2d");x.drawImage(i,0,0);'
  printf 'var d=x.getImageData(0,0,c.width,c.height).data,seen={},n=0;'
  printf 'for(var k=0;k<d.length;k+=4){var v=d[k]+","+d[k+1]+","+d[k+2];if(!seen[v]){seen[v]=1;n++;}}'
  printf 'document.getElementById("r").textContent=c.width+"x"+c.height+" colours="+n;}'
  printf 'if(i.complete)go();else i.onload=go;\n</script></body></html>\n'
} > "$out/pixels.html"
pixels=$(chrome --virtual-time-budget=10000 --dump-dom "file://$out/pixels.html" | sed -n 's|.*<pre id="r">\(.*\)</pre>.*|\1|p')
echo "     screenshot: $pixels"
check "the screenshot is not of one colour" sh -c "echo '$pixels' | grep -Eq '^1200x900 colours=([2-9]|[1-9][0-9]+)\$'"

echo "browser: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
