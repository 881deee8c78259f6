#!/bin/sh
# tests/run_validate.sh: kvplan validate on the corpus of public startup logs
# (tests/validation/*.log). Fails when any row changes (tests/golden/
# validate.csv: an exact case that stops being exact changes its row), or
# when a prediction figure gets worse than tests/validation/LIMITS, the
# figures the README states.
# Usage: sh tests/run_validate.sh build/kvplan
kvplan=$1
out=$(dirname "$kvplan")/golden
mkdir -p "$out"
fail=0
# the corpus: every log is read whole (status 0, nothing on stderr)
"$kvplan" validate tests/validation/*.log > "$out/validate.csv" 2> "$out/validate.err"; rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$out/validate.err" ] &&
   diff -u tests/golden/validate.csv "$out/validate.csv"; then
  echo "ok   validate: every row as in tests/golden/validate.csv, every log read"
else
  fail=1; echo "FAIL validate: status $rc or rows differ from tests/golden/validate.csv"; cat "$out/validate.err"
fi
"$kvplan" validate tests/validation/*.log summary=1 > "$out/validate_summary.csv" 2> "$out/validate_summary.err"
if [ $? -ne 0 ] || ! grep -q "^exact_accounting," "$out/validate_summary.csv"; then
  fail=1; echo "FAIL validate summary"; cat "$out/validate_summary.csv" "$out/validate_summary.err"
fi
# status 0 when every log could be read
if "$kvplan" validate tests/validation/vllm-33263-qwen3-1.7b.log > /dev/null 2>&1; then
  echo "ok   validate: status 0 when every log is read"
else
  fail=1; echo "FAIL validate: status $? on a log read whole"
fi
# figures without the columns that say where the inputs came from (the
# header's line numbers and sources differ from the arguments')
figs() { cut -d, -f2-10 "$1" | sed 's/log:[0-9]*/log/g'; }
# every corpus log without its header, the header's keys given as arguments
# instead: the same figures (argument and header are the same statement)
same=0
for f in tests/validation/*.log; do
  b=$(basename "$f")
  grep -v '^# [a-z_]*:' "$f" > "$out/bare-$b"
  set --
  while IFS= read -r line; do
    k=${line#\# }; k=${k%%:*}; v=${line#*: }
    case $k in source|note) continue ;; esac
    set -- "$@" "$k=$v"
  done <<EOF2
$(grep '^# [a-z_]*: ' "$f")
EOF2
  "$kvplan" validate "$f" > "$out/head-$b.csv" 2>/dev/null
  "$kvplan" validate "$out/bare-$b" "$@" > "$out/args-$b.csv" 2>/dev/null
  if [ "$(figs "$out/head-$b.csv")" = "$(figs "$out/args-$b.csv")" ] && [ -s "$out/args-$b.csv" ]; then
    same=$((same + 1))
  else
    fail=1; echo "FAIL validate: $b without its header, given $*: other figures"
    diff "$out/head-$b.csv" "$out/args-$b.csv" | head -n 6
  fi
done
echo "ok   validate: $same corpus logs give the same figures with their header as arguments"
# raw logs as pasted into GitHub issues (tests/validation/raw/README.md):
# no header, gpu= on the command line, the same figures as the log with a
# '# gpu:' header, and as its corpus copy
while read -r log gpu corpus; do
  case $log in ''|'#'*) continue ;; esac
  { echo "# gpu: $gpu"; cat "tests/validation/raw/$log"; } > "$out/headed-$log"
  "$kvplan" validate "tests/validation/raw/$log" gpu="$gpu" > "$out/raw-$log.csv" 2>&1
  "$kvplan" validate "$out/headed-$log" > "$out/headed-$log.csv" 2>&1
  "$kvplan" validate "tests/validation/$corpus" > "$out/corpus-$log.csv" 2>&1
  if [ "$(figs "$out/raw-$log.csv")" = "$(figs "$out/headed-$log.csv")" ] &&
     grep -q ",predict,.*,gpu=argument " "$out/raw-$log.csv" &&
     [ "$(figs "$out/raw-$log.csv" | grep -v ',predict,' | cut -d, -f3-)" = \
       "$(figs "$out/corpus-$log.csv" | grep -v ',predict,' | cut -d, -f3-)" ]; then
    echo "ok   validate: raw $log with gpu=$gpu: the figures of the log with a header"
  else
    fail=1; echo "FAIL validate: raw $log with gpu=$gpu"; diff "$out/raw-$log.csv" "$out/headed-$log.csv"
  fi
done <<EOF2
sglang-21348-qwen3-235b-fp8-tp4.log h100-sxm sglang-21348-qwen3-235b-fp8-h100-tp4.log
vllm-21348-qwen3-235b-fp8-tp4.log h100-sxm vllm-21348-qwen3-235b-fp8-h100-tp4.log
EOF2
# raw logs on a GPU the catalog lacks (the log's own device memory, or
# nothing predicted): the arguments a user gives instead of gpu=, and the
# figures of the corpus copy
while read -r log corpus args; do
  case $log in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  "$kvplan" validate "tests/validation/raw/$log" $args > "$out/rawargs-$log.csv" 2>&1
  "$kvplan" validate "tests/validation/$corpus" > "$out/corpus-$log.csv" 2>&1
  if [ -s "$out/rawargs-$log.csv" ] && grep -q ",exact,.*,exact," "$out/rawargs-$log.csv" &&
     [ "$(figs "$out/rawargs-$log.csv" | cut -d, -f2-)" = "$(figs "$out/corpus-$log.csv" | cut -d, -f2-)" ]; then
    echo "ok   validate: raw $log with $args: the figures of its corpus copy"
  else
    fail=1; echo "FAIL validate: raw $log with $args"; diff "$out/rawargs-$log.csv" "$out/corpus-$log.csv"
  fi
done <<EOF2
trtllm-spark-gpt-oss-120b.log trtllm-spark-gpt-oss-120b-gb10.log tp=1 gpu=gb10
sglang-19718-gpt-oss-120b.log sglang-19718-gpt-oss-120b-rtxpro6000.log tp=1
EOF2
# LIMITS: "figure median worst" (fractions) or "exact N" (exact rows at least)
while read -r fig med worst; do
  case $fig in ''|'#'*) continue ;; esac
  line=$(grep "^$fig," "$out/validate_summary.csv")
  if [ -z "$line" ]; then fail=1; echo "FAIL validate: no summary for $fig"; continue; fi
  if [ "$fig" = exact_accounting ]; then
    got=$(echo "$line" | cut -d, -f5)
    if [ "$got" -lt "$med" ]; then fail=1; echo "FAIL validate: $got exact rows, README states $med"
    else echo "ok   validate: $got exact rows (>= $med)"; fi
    continue
  fi
  m=$(echo "$line" | cut -d, -f3); w=$(echo "$line" | cut -d, -f4)
  if awk -v m="$m" -v w="$w" -v M="$med" -v W="$worst" 'BEGIN { exit !(m <= M && w <= W) }'; then
    echo "ok   validate: $fig median $m (<= $med), worst $w (<= $worst)"
  else
    fail=1; echo "FAIL validate: $fig median $m worst $w, README states $med / $worst"
  fi
done < tests/validation/LIMITS
# a model from a Hugging Face directory instead of the catalog
if "$kvplan" validate tests/validation/vllm-pr17122-llama8b-l40s.log \
     config=tests/fixtures/hf/llama-3.1-8b > "$out/validate_config.csv" 2>&1 &&
   grep -q "model=config" "$out/validate_config.csv" &&
   grep -q ",weights_gib,predict,14.9889,14.9888," "$out/validate_config.csv"; then
  echo "ok   validate: config=DIR"
else
  fail=1; echo "FAIL validate: config=DIR"; cat "$out/validate_config.csv"
fi
# the same as an option, --config DIR and --config=DIR, anywhere on the line
for form in "--config tests/fixtures/hf/llama-3.1-8b" "--config=tests/fixtures/hf/llama-3.1-8b"; do
  # shellcheck disable=SC2086
  if "$kvplan" validate $form tests/validation/vllm-pr17122-llama8b-l40s.log \
       > "$out/validate_config2.csv" 2>&1 && cmp -s "$out/validate_config.csv" "$out/validate_config2.csv"; then
    echo "ok   validate: $form"
  else
    fail=1; echo "FAIL validate: $form"; cat "$out/validate_config2.csv"
  fi
done
if "$kvplan" fit --config x model=llama-3.1-8b > /dev/null 2> "$out/config_err.txt"; then
  fail=1; echo "FAIL validate: --config taken by fit"
elif grep -q "option '--config' is not for 'fit'" "$out/config_err.txt"; then
  echo "ok   validate: --config is validate's option only"
else
  fail=1; echo "FAIL validate: --config on fit: $(cat "$out/config_err.txt")"
fi
# the command's errors: status 1 and one clear line
err() { # WANT ARGS...
  want=$1; shift
  "$kvplan" validate "$@" > /dev/null 2> "$out/validate_err.txt"; got=$?
  if [ "$got" -eq 1 ] && [ "$(head -n 1 "$out/validate_err.txt")" = "$want" ]; then
    echo "ok   validate: $want"
  else
    fail=1; echo "FAIL validate: status $got, $(head -n 1 "$out/validate_err.txt") (wanted $want)"
  fi
}
err "kvplan: validate: no LOG file given (kvplan validate LOG... [--config DIR] [summary=1] [key=value ...])"
err "kvplan: validate: cannot open tests/validation/none.log: No such file or directory" \
  tests/validation/none.log
# a bad key=value argument: a usage error (status 2), checked as the field
usage() { # WANT ARGS...
  want=$1; shift
  "$kvplan" validate "$@" > /dev/null 2> "$out/validate_err.txt"; got=$?
  if [ "$got" -eq 2 ] && [ "$(head -n 1 "$out/validate_err.txt")" = "$want" ]; then
    echo "ok   validate: $want"
  else
    fail=1; echo "FAIL validate: status $got, $(head -n 1 "$out/validate_err.txt") (wanted $want)"
  fi
}
raw=tests/validation/raw/vllm-21348-qwen3-235b-fp8-tp4.log
usage "kvplan: command line: unknown argument 'bogus'" tests/validation/LIMITS bogus=1
usage "kvplan: command line: argument 'tp' must be an integer >= 1, got 0" "$raw" tp=0
usage "kvplan: command line: argument 'gpu': unknown gpu 'nonesuch' (closest: 'l40s', 'l4', 't4')" "$raw" gpu=nonesuch
usage "kvplan: command line: argument 'engine' must be 'vllm', 'sglang' or 'trtllm', got 'tgi'" "$raw" engine=tgi
usage "kvplan: command line: argument 'utilization' must be in (0, 1], got 1.5" "$raw" utilization=1.5
exit $fail
