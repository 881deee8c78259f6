#!/bin/sh
# tests/run_layers.sh: the files of engine/ depend on each other one way.
# From nm of the objects (B/obj/NAME.o for each engine/LAYER/NAME.c), file X
# uses file Y when X leaves undefined a global symbol that Y defines. Fails,
# naming the files and the symbols, when that graph has a circle of any
# length (a strongly connected component of two files or more), or when a
# file uses a file of a layer it may not see: core uses core only; io uses
# io only; lua uses lua, io and core; cli uses any. embed.c (a build tool)
# and the embedded stdlib (data) are not in the graph.
# Usage: sh tests/run_layers.sh [B]   (B: the build folder, build by default;
# make layers-test, and make test, run it on the objects they built)
b=${1:-build}
command -v nm >/dev/null 2>&1 || { echo "FAIL layers: nm not found (binutils)"; exit 1; }
list=$(mktemp) || exit 1
trap 'rm -f "$list"' EXIT
for layer in core io lua cli; do
  for c in engine/$layer/*.c; do
    name=$(basename "$c" .c)
    [ "$name" = embed ] && continue
    o=$b/obj/$name.o
    if [ ! -f "$o" ]; then echo "FAIL layers: $o (of $c) is not built"; exit 1; fi
    nm -P "$o" | awk -v layer="$layer" -v src="$c" '{ print layer, src, $2, $1 }' >> "$list" ||
      { echo "FAIL layers: nm $o"; exit 1; }
  done
done
awk '
  # rank of a layer; may[L] lists the layers L may use
  BEGIN { may["core"] = " core "; may["io"] = " io "; may["lua"] = " lua io core ";
          may["cli"] = " cli lua io core " }
  { layer[$2] = $1; if (!($2 in seen)) { seen[$2] = 1; files[++nf] = $2 } }
  $3 ~ /^[A-TV-Z]$/ { def[$4] = $2 }
  $3 ~ /^[Uwv]$/ { nu++; ufile[nu] = $2; usym[nu] = $4 }
  END {
    for (i = 1; i <= nu; i++) {
      s = usym[i]; x = ufile[i]
      if (!(s in def) || def[s] == x) continue
      y = def[s]; e = x SUBSEP y
      if (!(e in syms)) { syms[e] = s; ne++; adj[x] = adj[x] " " y } else syms[e] = syms[e] ", " s
    }
    bad = 0
    for (e in syms) {
      split(e, p, SUBSEP)
      if (index(may[layer[p[1]]], " " layer[p[2]] " ") == 0) {
        bad++; printf "FAIL layers: %s (%s) uses %s (%s), a layer it may not see: %s\n", p[1], layer[p[1]], p[2], layer[p[2]], syms[e]
      }
    }
    # Tarjan: the strongly connected components; one of two files or more is a circle
    for (i = 1; i <= nf; i++) if (!(files[i] in idx)) visit(files[i])
    for (c = 1; c <= nc; c++) {
      n = split(comp[c], m, " ")
      if (n < 2) continue
      bad++; printf "FAIL layers: a circle through %d files:%s\n", n, comp[c]
      # one shortest circle from the first of them (breadth first inside the component)
      split("", incomp); split("", from); split("", q); for (i = 1; i <= n; i++) incomp[m[i]] = 1
      q[1] = m[1]; qh = 1; qt = 1; found = 0
      while (qh <= qt && !found) {
        v = q[qh++]; k = split(adj[v], nb, " ")
        for (j = 1; j <= k && !found; j++) {
          w = nb[j]; if (!(w in incomp)) continue
          if (w == m[1]) { last = v; found = 1 }
          else if (!(w in from)) { from[w] = v; q[++qt] = w }
        }
      }
      path = ""; for (v = last; v != m[1]; v = from[v]) path = v " " path
      path = m[1] " " path
      k = split(path, pm, " "); pm[k + 1] = m[1]
      for (j = 1; j <= k; j++) printf "     %s uses %s: %s\n", pm[j], pm[j + 1], syms[pm[j] SUBSEP pm[j + 1]]
    }
    if (bad) { printf "layers: %d failed (%d files, %d edges)\n", bad, nf, ne; exit 1 }
    printf "ok   layers: %d files, %d edges of use, one way (no circle, no higher layer used)\n", nf, ne
  }
  function visit(v,    k, n, w, nb) {
    idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
    n = split(adj[v], nb, " ")
    for (k = 1; k <= n; k++) {
      w = nb[k]
      if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
      else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
    }
    if (low[v] == idx[v]) {
      nc++; comp[nc] = ""
      do { w = stack[sp--]; on[w] = 0; comp[nc] = comp[nc] " " w } while (w != v)
    }
  }
' "$list"
