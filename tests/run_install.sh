#!/bin/sh
# tests/run_install.sh: what `make install` put under PREFIX works: the binary
# finds its ready scripts, the manual page reads, the docs and examples are
# there, lua5.4 loads the module.
# Usage: sh tests/run_install.sh DESTDIR/PREFIX
p=$1
pass=0; fail=0
check() {
  name=$1; shift
  if "$@" > /dev/null 2>&1; then pass=$((pass + 1)); echo "ok   install $name"
  else fail=$((fail + 1)); echo "FAIL install $name"; fi
}
for f in bin/kvplan lib/lua/5.4/kvplan.so lib/libkvplan.a include/kvplan/kvplan.h \
         share/kvplan/scripts/fit.lua share/kvplan/scripts/capacity.lua share/kvplan/scripts/ledger.lua \
         share/kvplan/scripts/best.lua share/man/man1/kvplan.1 share/doc/kvplan/README.md \
         share/doc/kvplan/SCRIPTING.md share/doc/kvplan/examples/capacity_curve.lua \
         share/doc/kvplan/docs/capacity_curve.png share/bash-completion/completions/kvplan \
         share/zsh/site-functions/_kvplan; do
  check "$f" test -s "$p/$f"
done
# the installed headers are the public ones, enough to build against the library
check "include/kvplan holds the public headers alone, which compile on their own" sh -c \
  "[ ! -e '$p/include/kvplan/core.h' ] && [ ! -e '$p/include/kvplan/vllm_kv.h' ] &&
   printf '#include <kvplan.h>\nint main(void) { kvp_deploy d; kvp_deploy_defaults(&d); return d.tp != 1; }\n' |
   \${CC:-cc} -std=c11 -I'$p/include/kvplan' -x c - -x none '$p/lib/libkvplan.a' -lm -o '$p/../hdr_test' && '$p/../hdr_test'"
# the installed shell completions: bash completes a command, a key and a value with
# them; zsh reads its file (zsh -n) when it is installed
check "the installed bash completion completes" bash -c "
  . '$p/share/bash-completion/completions/kvplan' &&
  COMP_WORDS=(kvplan fi); COMP_CWORD=1; _kvplan; [ \"\${COMPREPLY[*]}\" = fit ] &&
  COMP_WORDS=(kvplan fit max_model); COMP_CWORD=2; _kvplan; [ \"\${COMPREPLY[*]}\" = max_model_len= ] &&
  COMP_WORDS=(kvplan fit gpus=h100-s); COMP_CWORD=2; _kvplan; [ \"\${COMPREPLY[*]}\" = gpus=h100-sxm ]"
if command -v zsh > /dev/null 2>&1; then
  check "the installed zsh completion parses (zsh -n)" zsh -n "$p/share/zsh/site-functions/_kvplan"
fi
# the installed binary, run from elsewhere, finds the installed scripts
check "kvplan fit from the installed scripts" sh -c "cd /tmp && env -u KVPLAN_SCRIPTS '$PWD/$p/bin/kvplan' fit model=llama-3.1-8b gpus=l4 | grep -q '^llama-3.1-8b,l4,'"
check "--help names the installed scripts" sh -c "'$p/bin/kvplan' --help | grep -q 'ready scripts: .*$p/share/kvplan/scripts'"
if command -v man >/dev/null 2>&1; then
  # every option and command --help lists is in the manual page
  MANWIDTH=200 man -l "$p/share/man/man1/kvplan.1" 2>/dev/null > "$p/../man.txt"
  missing=""
  for w in $("$p/bin/kvplan" --help | grep -Eo '^ +(-[a-z], )?--[a-z-]+|^  [a-z]+ ' | grep -Eo -- '--[a-z-]+|[a-z][a-z]+'); do
    grep -q -- "$w" "$p/../man.txt" || missing="$missing $w"
  done
  check "the manual page has every option and command of --help${missing:+ (missing:$missing)}" [ -z "$missing" ]
  check "man page renders without warnings" sh -c "[ -z \"\$(man --warnings -l '$p/share/man/man1/kvplan.1' 2>&1 >/dev/null)\" ] && MANWIDTH=80 man -l '$p/share/man/man1/kvplan.1' | grep -q 'kvplan best'"
fi
if command -v lua5.4 >/dev/null 2>&1; then
  check "lua5.4 loads the installed module" lua5.4 -e "package.cpath = '$p/lib/lua/5.4/?.so;' .. package.cpath; assert(require('kvplan').model('llama-3.1-8b'))"
fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
