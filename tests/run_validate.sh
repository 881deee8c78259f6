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
if "$kvplan" validate tests/validation/*.log > "$out/validate.csv" 2> "$out/validate.err" &&
   diff -u tests/golden/validate.csv "$out/validate.csv"; then
  echo "ok   validate: every row as in tests/golden/validate.csv"
else
  fail=1; echo "FAIL validate: rows differ from tests/golden/validate.csv"; cat "$out/validate.err"
fi
if ! "$kvplan" validate tests/validation/*.log summary=1 > "$out/validate_summary.csv" 2>&1; then
  fail=1; echo "FAIL validate summary"; cat "$out/validate_summary.csv"
fi
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
   grep -q ",weights_gib,predict,14.9889,14.9575," "$out/validate_config.csv"; then
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
err "kvplan: validate: no LOG file given (kvplan validate LOG... [--config DIR] [summary=1])"
err "kvplan: validate: cannot open tests/validation/none.log: No such file or directory" \
  tests/validation/none.log
err "kvplan: validate: unknown argument 'bogus' (expected LOG files, --config DIR or config=DIR, summary=1)" \
  tests/validation/LIMITS bogus=1
exit $fail
