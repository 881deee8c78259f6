#!/bin/sh
# tests/run_cli.sh: the command line's exit status and error text for bad input.
# Usage: sh tests/run_cli.sh build/kvplan
kvplan=$1
out=$(dirname "$kvplan")/cli
mkdir -p "$out"
pass=0; fail=0
# the ready scripts of this tree, wherever the binary was built (build/asan too)
KVPLAN_SCRIPTS=${KVPLAN_SCRIPTS:-$(pwd)/scripts}; export KVPLAN_SCRIPTS
# expect NAME STATUS STDERR-LINE -- ARGS...: exit status and the first stderr line
# (standard input: /dev/null, or the file fed names)
expect() {
  name=$1; status=$2; want=$3; shift 4
  "$kvplan" "$@" > "$out/$name.out" 2> "$out/$name.err" < "${input:-/dev/null}"
  got=$?
  first=$(head -n 1 "$out/$name.err")
  if [ "$got" -eq "$status" ] && [ "$first" = "$want" ]; then
    pass=$((pass + 1)); echo "ok   cli $name"
  else
    fail=$((fail + 1)); echo "FAIL cli $name: status $got (want $status)"
    echo "     stderr: $first"; echo "     wanted: $want"
  fi
}
# check NAME CONDITION...: one test that passes when the shell condition holds
check() {
  name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   cli $name"
  else fail=$((fail + 1)); echo "FAIL cli $name"; fi
}
c=tests/cli
expect tp_negative 1 "kvplan: $c/bad_tp.lua:3: field 'tp' must be an integer >= 1, got -1" -- $c/bad_tp.lua
expect layers_zero 1 "kvplan: $c/bad_layers.lua:3: field 'layers' must be an integer >= 1, got 0" -- $c/bad_layers.lua
expect context_nan 1 "kvplan: $c/bad_context.lua:5: field 'context' must be an integer, got nan" -- $c/bad_context.lua
expect unknown_model 1 "kvplan: $c/bad_model.lua:3: unknown model 'llama-3.1-70' (did you mean 'llama-3.1-70b', 'llama-3.1-8b', 'llama-3.3-70b'?)" -- $c/bad_model.lua
expect syntax 1 "kvplan: $c/bad_syntax.lua:1: unexpected symbol near '='" -- $c/bad_syntax.lua
expect no_script 1 "kvplan: cannot open $c/none.lua: No such file or directory" -- $c/none.lua
expect e_error 1 "kvplan: (command line):1: attempt to call a nil value (global 'nosuch')" -- -e "nosuch()"
# --traceback (main.c set_traceback; no test ran it): the same first line, then Lua's stack
"$kvplan" --traceback -e "local function f() nosuch() end f()" > /dev/null 2> "$out/traceback.err"
rc=$?
check "traceback: --traceback adds the Lua stack after the message" sh -c "[ $rc -eq 1 ] &&
  head -n 1 '$out/traceback.err' | grep -qxF \"kvplan: (command line):1: attempt to call a nil value (global 'nosuch')\" &&
  sed -n 2p '$out/traceback.err' | grep -qx 'stack traceback:' && grep -qF \"in local 'f'\" '$out/traceback.err'"
expect bad_option 2 "kvplan: unknown option '--bogus' (try 'kvplan --help'; words for the script go after '--')" -- --bogus
expect o_no_file 2 "kvplan: option '-o' needs an argument (try 'kvplan --help')" -- -o
expect bad_arg 2 "kvplan: command line: argument 'context' must be a number, got 'lots'" -- $c/args.lua context=lots
expect unknown_arg 2 "kvplan: command line: unknown argument 'modle' (did you mean 'model'?)" -- $c/args.lua modle=x
# a misspelt engine name of a field is suggested the engine's name (issue 13:
# vLLM's option names; 'gpu_memory' alone, another field, before)
expect suggest_engine_name 2 "kvplan: command line: unknown argument 'gpu_memory_utilisation' (did you mean 'gpu_memory_utilization', 'gpu_memory'?)" -- \
  fit model=llama-3.1-8b gpu_memory_utilisation=0.9
expect suggest_engine_name_tp 2 "kvplan: command line: unknown argument 'tensor_parallel' (did you mean 'tensor_parallel_size'?)" -- \
  ledger model=llama-3.1-8b gpu=h100 tensor_parallel=2
expect bad_arg_model 2 "kvplan: command line: argument 'model': unknown model 'llama-3.1-70' (did you mean 'llama-3.1-70b', 'llama-3.1-8b', 'llama-3.3-70b'?)" -- \
  fit model=llama-3.1-70 context=32768
expect bad_arg_gpus 2 "kvplan: command line: argument 'gpus': unknown gpu 'h100x' (did you mean 'h100-sxm' (alias 'h100'), 'a100-sxm-80gb' (alias 'a100'), 'h200'?)" -- \
  fit model=llama-3.1-70b gpus=l40s,h100x
expect bad_arg_kv 2 "kvplan: command line: argument 'kv': unknown format 'fp9' (did you mean 'fp4', 'fp8', 'fp16'?)" -- \
  capacity model=llama-3.1-70b kv=bf16,fp9
expect bad_tokens 2 "kvplan: command line: argument 'context': decimals are not allowed with the binary suffix in '1.5K' (did you mean '1.5k'?)" -- \
  fit model=llama-3.1-70b context=1.5K
# unitless sizes are refused with the units accepted ('activation=2' was 2
# bytes); 0 and the fields whose name says bytes take a plain number
expect bytes_no_unit 2 "kvplan: command line: argument 'activation': '2' has no unit (expected e.g. '2 GiB', '2 GB', '2G' = 2 GiB, '2g' = 2 GB, or '2B' bytes)" -- \
  ledger model=llama-3.1-8b gpu=l4 activation=2
expect bytes_zero 0 "" -- ledger model=llama-3.1-8b gpu=l4 activation=0
# the exit status of each row of the manual's EXIT STATUS table, one example each
codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH ENVIRONMENT/p' docs/kvplan.1 |
  awk 'prev == ".TP" && /^\.BI? / { sub(/^\.BI? /, ""); gsub(/ /, ""); printf "%s ", $0 } { prev = $0 }')
check "the manual's EXIT STATUS table lists 0, 1, 2 and 128+N" [ "$codes" = "0 1 2 128+N " ]
for code in $codes; do
  case $code in
    0) expect exit_0 0 "" -- fit model=llama-3.1-8b gpus=l4 ;;
    1) expect exit_1 1 "kvplan: (command line):1: stopped" -- -e "error('stopped')"
       "$kvplan" batch -d "$out/exit_batch" tests/batch/good_a.lua tests/batch/bad.lua 2> "$out/exit_batch.err"
       rc=$?
       check "exit_1_batch: a batch of which one script failed is 1" sh -c "[ $rc -eq 1 ] &&
         grep -qx 'kvplan: batch: 2 scripts, 1 ok, 1 failed' '$out/exit_batch.err'"
       printf '# model: llama-3.1-8b\n# gpu: h100-sxm\nGPU KV cache size: many tokens\n' > "$out/exit_parse.log"
       expect exit_1_validate 1 "kvplan: validate: 1 of 1 logs could not be read whole (their parse rows say why): $out/exit_parse.log" -- \
         validate "$out/exit_parse.log" ;;
    2) expect exit_2_option 2 "kvplan: unknown option '--bogus' (try 'kvplan --help'; words for the script go after '--')" -- fit --bogus
       expect exit_2_key 2 "kvplan: command line: unknown argument 'modle' (did you mean 'model'?)" -- fit modle=llama-3.1-8b
       expect exit_2_value 2 "kvplan: command line: argument 'tp' must be an integer >= 1, got -1" -- fit model=llama-3.1-8b tp=-1
       expect exit_2_size 2 "kvplan: command line: argument 'activation': '2' has no unit (expected e.g. '2 GiB', '2 GB', '2G' = 2 GiB, '2g' = 2 GB, or '2B' bytes)" -- \
         ledger model=llama-3.1-8b gpu=l4 activation=2
       expect exit_2_required 2 "kvplan: command line: argument 'model' is required, e.g. model=llama-3.1-70b" -- fit
       expect exit_2_command 2 "kvplan: unknown command 'fti' (did you mean 'fit'? 'kvplan --help' lists the commands; a script is a file such as run.lua)" -- fti ;;
    128+N) "$kvplan" -e "while true do end" 2> "$out/exit_term.err" & pid=$!
       sleep 0.5; kill -TERM $pid; wait $pid 2> /dev/null; rc=$?
       check "exit_128+N: SIGTERM is 143" [ $rc -eq 143 ]
       "$kvplan" -e "while true do end" 2> "$out/exit_hup.err" & pid=$!
       sleep 0.5; kill -HUP $pid; wait $pid 2> /dev/null; rc=$?
       check "exit_128+N: SIGHUP is 129" [ $rc -eq 129 ]
       # SIGINT (^C) to a long command writing -o FILE: 130, and neither the
       # file nor its temporary is left (a background job of sh starts with
       # SIGINT ignored: env --default-signal gives it back, as a terminal's
       # job has); the signal lands once the temporary exists
       int_code=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH ENVIRONMENT/p' docs/kvplan.1 | grep -oE '[0-9]+ for SIGINT' | cut -d' ' -f1)
       si=$out/exit_int; rm -rf "$si"; mkdir -p "$si"
       env --default-signal=INT "$kvplan" -q simulate model=llama-3.1-8b gpu=l4 requests=5000000 prompt=1000 \
         output=250 rate=2 -o "$si/sim.csv" 2> "$out/exit_int.err" & pid=$!
       t=0
       while [ $t -lt 250 ] && [ -z "$(ls "$si" | grep '\.tmp\.')" ]; do sleep 0.02; t=$((t + 1)); done
       sleep 0.2; kill -INT $pid; wait $pid 2> /dev/null; rc=$?
       check "exit_128+N: SIGINT to a long simulate -o FILE is the manual's $int_code (130), no file or temporary left" sh -c "
         [ '$int_code' = 130 ] && [ $rc -eq 130 ] && [ -z \"\$(ls '$si')\" ] &&
         grep -qx 'kvplan: interrupted by SIGINT while running .*scripts/simulate.lua' '$out/exit_int.err' &&
         grep -qx \"kvplan: '$si/sim.csv' not written (left as it was)\" '$out/exit_int.err'" ;;
    *) fail=$((fail + 1)); echo "FAIL cli the manual's exit status '$code' has no example here" ;;
  esac
done
# every status the program's code exits with is in that table: the literals
# engine/cli returns or passes to exit() and _exit() (all but the terminal's
# default width, 80 columns, in terminal_columns) are documented codes, and
# the signals it dies of again (raise) are those 128+N names
used=$(awk '/^static size_t terminal_columns/ { skip = 1 } skip && /^}/ { skip = 0; next } !skip' engine/cli/*.c |
  grep -oE '(_?exit\(|return )[0-9]+[);]' | grep -oE '[0-9]+' | sort -un | tr '\n' ' ')
check "exit statuses of engine/cli ($used) are documented ($codes)" sh -c "
  for u in $used; do case ' $codes' in *\" \$u \"*) ;; *) exit 1 ;; esac; done"
man_sigs=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH ENVIRONMENT/p' docs/kvplan.1 | grep -oE 'SIG[A-Z]+' | sort -u | tr '\n' ' ')
check "the signals engine/cli/signals.c handles ($man_sigs) are the manual's" sh -c "
  for g in \$(grep -oE 'SIG(INT|TERM|HUP|QUIT|PIPE|USR1|USR2|ALRM)' engine/cli/signals.c | sort -u); do
    case ' $man_sigs' in *\" \$g \"*) ;; *) exit 1 ;; esac; done"
# same_as NAME ARGS... -- ARGS...: two command lines give the same report
same_as() {
  name=$1; shift; a=""; while [ "$1" != "--" ]; do a="$a '$1'"; shift; done; shift; b=""
  for w in "$@"; do b="$b '$w'"; done
  if eval "\"$kvplan\" $a" > "$out/$name.a" 2> "$out/$name.err" && eval "\"$kvplan\" $b" > "$out/$name.b" &&
     cmp -s "$out/$name.a" "$out/$name.b" && [ -s "$out/$name.a" ]; then
    pass=$((pass + 1)); echo "ok   cli $name"
  else fail=$((fail + 1)); echo "FAIL cli $name: $(head -n 1 "$out/$name.err")"; fi
}
same_as list_trimmed fit model=llama-3.1-70b "gpus=h100, l40s" -- fit model=llama-3.1-70b gpus=h100,l40s
same_as gpu_by_spaced_alias fit model=llama-3.1-70b "gpus=H100 80GB" -- fit model=llama-3.1-70b gpus=h100-sxm
same_as bytes_G capacity model=llama-3.1-8b gpus=l4 activation=2G overhead=512M -- capacity model=llama-3.1-8b gpus=l4 activation=2GiB overhead=512MiB
same_as bytes_g capacity model=llama-3.1-8b gpus=l4 activation=2g -- capacity model=llama-3.1-8b gpus=l4 activation=2GB
same_as tokens_k fit model=llama-3.1-70b context=32k concurrency=1k -- fit model=llama-3.1-70b context=32000 concurrency=1000
same_as tokens_K fit model=llama-3.1-70b context=32K -- fit model=llama-3.1-70b context=32768
same_as tokens_decimal fit model=llama-3.1-70b context=25.6k -- fit model=llama-3.1-70b context=25600
same_as vllm_names capacity model=llama-3.1-70b gpus=h100-sxm tensor_parallel_size=2,4 kv_cache_dtype=fp8 gpu_memory_utilization=0.85 block_size=32 -- \
  capacity model=llama-3.1-70b gpus=h100-sxm tp=2,4 kv=fp8 utilization=0.85 block=32
same_as vllm_dashes capacity model=llama-3.1-70b gpus=h100-sxm tensor-parallel-size=4 -- capacity model=llama-3.1-70b gpus=h100-sxm tp=4
expect vllm_both 2 "kvplan: command line: arguments 'tp' and 'tensor_parallel_size' are the same option" -- \
  capacity model=llama-3.1-70b tp=2 tensor_parallel_size=4
# two engines' spellings of one option: refused too (one of them won, by the
# order of a Lua table's keys)
expect engines_both 2 "kvplan: command line: arguments 'tensor_parallel_size' and 'tp_size' are the same option" -- \
  fit model=llama-3.1-8b gpus=h100-sxm tensor_parallel_size=2 tp_size=4
# arguments named as deployment fields are converted and checked by the field
# registry (stdlib/kvplan/fields.lua), reported as arguments, not at the script's line
expect field_fraction 2 "kvplan: command line: argument 'utilization' must be in (0, 1], got 1.5" -- \
  capacity model=llama-3.1-8b gpus=l4 gpu_memory_utilization=1.5
expect field_count 2 "kvplan: command line: argument 'tp' must be an integer >= 1, got 0" -- \
  fit model=llama-3.1-8b gpus=l4 tp=1,0
expect field_bytes 2 "kvplan: command line: argument 'activation': cannot read 'lots' as bytes (expected e.g. '80 GiB', '80 GB', '512 MiB', '2G')" -- \
  ledger model=llama-3.1-8b gpu=l4 activation=lots
# system_memory (memory others hold on the GPU): a bytes field like the others, never negative
expect field_system_memory 2 "kvplan: command line: argument 'system_memory': cannot read 'lots' as bytes (expected e.g. '80 GiB', '80 GB', '512 MiB', '2G')" -- \
  ledger model=llama-3.1-8b gpu=l4 system_memory=lots
expect field_system_memory_negative 1 "kvplan: (command line):1: field 'system_memory' must be >= 0 bytes, got -1" -- \
  -e 'require("kvplan").deploy{model = "llama-3.1-8b", gpu = "l4", system_memory = -1}'
# vLLM V1 refuses when free memory (the H100's 79.19 GiB less 10) < 0.9 x 79.19 GiB
# (gpu_worker.py init_device), before the weights load; 5 GiB leaves 74.19 >= 71.27
# (vLLM 0.11's utilization 0.9, pinned: the figures of its error)
check startup_system_memory_refuses sh -c "'$kvplan' startup model=llama-3.1-8b gpu=h100 system_memory=10G engine_version=0.11 | grep -qxF 'ValueError: Free memory on device (69.19/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.' && ! '$kvplan' startup model=llama-3.1-8b gpu=h100 system_memory=10G engine_version=0.11 | grep -q 'Model loading took' && '$kvplan' startup model=llama-3.1-8b gpu=h100 system_memory=5G engine_version=0.11 | grep -q '^kvplan: vllm starts' && '$kvplan' fit model=llama-3.1-8b gpus=h100 system_memory=10G | grep -q 'Free memory on device'"
expect field_enum 2 "kvplan: command line: argument 'engine' must be 'vllm', 'sglang' or 'trtllm', got 'vlm'" -- \
  capacity model=llama-3.1-8b gpus=l4 engine=vlm
expect field_number 0 "" -- fit model=llama-3.1-8b gpus=l4 price_per_hour=2.5
same_as field_bytes_units capacity model=llama-3.1-8b gpus=l4 activation=2.5GiB -- capacity model=llama-3.1-8b gpus=l4 activation=2684354560B
expect suggest_not_typed 1 "kvplan: (command line):1: unknown gpu 'H100 80G' (did you mean 'h100-sxm' (alias 'h100'), 'a100-sxm-80gb' (alias 'a100-80g'), 'a100-sxm-40gb' (alias 'a100-40g')?)" -- \
  -e "require('kvplan').gpu('H100 80G')"
expect deploy_vllm_names 0 "" -- -e "local kv = require 'kvplan'
  local a = kv.deploy{model = 'llama-3.1-70b', gpu = 'h100-sxm', tensor_parallel_size = 4, kv_cache_dtype = 'fp8', gpu_memory_utilization = 0.8}:ledger()
  local b = kv.deploy{model = 'llama-3.1-70b', gpu = 'h100-sxm', tp = 4, kv = 'fp8', utilization = 0.8}:ledger()
  assert(a.kv_tokens == b.kv_tokens and a.kv_bytes_per_token == 40960, 'vLLM names')"
expect help 0 "" -- --help
expect version 0 "" -- --version
expect args_ok 0 "" -- $c/args.lua model=llama-3.1-70b context=16384
if [ "$(cat "$out/args_ok.out")" = "model,context,max_concurrency
llama-3.1-70b,16384,0" ]; then pass=$((pass + 1)); echo "ok   cli args_ok output"
else fail=$((fail + 1)); echo "FAIL cli args_ok output: $(cat "$out/args_ok.out")"; fi

# -o: the report appears whole or not at all
rm -f "$out/o.csv" "$out"/o.csv.tmp.*
expect o_failed 1 "kvplan: $c/fail_after_rows.lua:5: stopped on purpose" -- -o "$out/o.csv" $c/fail_after_rows.lua
if [ ! -e "$out/o.csv" ] && [ -z "$(ls "$out" | grep 'o.csv.tmp')" ]; then
  pass=$((pass + 1)); echo "ok   cli o_failed leaves no file"
else fail=$((fail + 1)); echo "FAIL cli o_failed left a file"; fi
# the commands issues 2 and 4 accept by (build/kvplan examples/seed_ledger.lua):
# the examples' names before 4e90b24 renamed them recompute_article_*, kept
# as links so those commands still run and print the same golden bytes
expect seed_ledger_name 0 "" -- examples/seed_ledger.lua
check "seed_ledger_name prints the article ledger's golden" cmp -s "$out/seed_ledger_name.out" tests/golden/recompute_article_ledger.csv
expect seed_optimizations_name 0 "" -- examples/seed_optimizations.lua
check "seed_optimizations_name prints the article optimizations' golden" cmp -s "$out/seed_optimizations_name.out" tests/golden/recompute_article_optimizations.csv
expect o_ok 0 "" -- -o "$out/o.csv" examples/recompute_article_ledger.lua
if cmp -s "$out/o.csv" tests/golden/recompute_article_ledger.csv && [ ! -s "$out/o_ok.out" ]; then
  pass=$((pass + 1)); echo "ok   cli o_ok writes the report to the file"
else fail=$((fail + 1)); echo "FAIL cli o_ok"; fi
# kvplan batch: good reports written, the failure named, status 1, no partial file
rm -rf "$out/batch"
expect batch 1 "kvplan: batch: ok     tests/batch/good_a.lua" -- \
  batch -d "$out/batch" tests/batch/good_a.lua tests/batch/bad.lua tests/batch/good_b.lua
if [ -s "$out/batch/good_a.csv" ] && [ -s "$out/batch/good_b.csv" ] && [ -s "$out/batch/good_b-gpus.csv" ] &&
   [ ! -e "$out/batch/bad.csv" ] && [ -z "$(ls "$out/batch" | grep tmp)" ] &&
   grep -q "FAILED tests/batch/bad.lua" "$out/batch.err" &&
   grep -q "^kvplan: tests/batch/bad.lua:5: field 'tp' must be an integer >= 1, got 0$" "$out/batch.err" &&
   grep -q "kvplan: batch: 3 scripts, 2 ok, 1 failed" "$out/batch.err"; then
  pass=$((pass + 1)); echo "ok   cli batch reports and summary"
else fail=$((fail + 1)); echo "FAIL cli batch reports and summary"; ls "$out/batch"; cat "$out/batch.err"; fi

# two reports of one script to one file: the second refused, the first kept
# (before: the second was renamed over the first, status 0, the first lost);
# on standard output both are written, one after the other
rm -f "$out/two.csv"
expect two_reports_o 1 "kvplan: $c/two_reports.lua:7: report path '$out/two.csv' was already written by an earlier report of this run: this one would replace it (give each report its own path, or a name under kvplan batch)" -- \
  -o "$out/two.csv" $c/two_reports.lua
# the run failed: the first report goes too (a failed run keeps none of its files)
check "two_reports_o removes the first report" [ ! -e "$out/two.csv" ]
expect two_reports_stdout 0 "" -- $c/two_reports.lua
check "two_reports_stdout writes both" [ "$(cat "$out/two_reports_stdout.out")" = "$(printf 'n\n1\nm\n2')" ]
# -o /dev/stdout with standard output redirected to a file: written through the
# descriptor, both reports, the link left as it was (before: stat followed the
# link to the regular file, the second report was refused, and the commit renamed
# a temporary over /dev/stdout itself, as root for every process)
stdout_link=$(ls -l /dev/stdout 2> /dev/null)
expect o_dev_stdout 0 "" -- -o /dev/stdout $c/two_reports.lua
check "o_dev_stdout writes both reports to standard output" [ "$(cat "$out/o_dev_stdout.out")" = "$(printf 'n\n1\nm\n2')" ]
check "o_dev_stdout leaves /dev/stdout as it was" [ "$(ls -l /dev/stdout 2> /dev/null)" = "$stdout_link" ]
rm -rf "$out/batch2"
expect two_reports_batch 1 "kvplan: $c/two_reports.lua:7: report path '$out/batch2/two_reports.csv' was already written by an earlier report of this run: this one would replace it (give each report its own path, or a name under kvplan batch)" -- \
  batch -d "$out/batch2" $c/two_reports.lua
check "two_reports_batch removes the first report" [ ! -e "$out/batch2/two_reports.csv" ]

# a script that closes reports, then fails: every file it wrote is removed and
# named, under -o and under kvplan batch (before: kept, status 1, and
# docs/sweeps.md said a failing script's report never appears); a file the
# run replaced is not restored; validate's status 1 keeps its whole report
rm -rf "$out/fac" "$out/fac_batch"; mkdir -p "$out/fac"
echo old > "$out/fac/o.csv"
expect fail_after_close 1 "kvplan: failed on purpose after two reports" -- \
  -o "$out/fac/o.csv" $c/fail_after_close.lua dir="$out/fac"
check "fail_after_close: both files removed and named, the old -o file not restored" sh -c "
  [ ! -e '$out/fac/fac-named.csv' ] && [ ! -e '$out/fac/o.csv' ] && [ -z \"\$(ls '$out/fac')\" ] &&
  grep -qxF \"kvplan: removed '$out/fac/fac-named.csv': the run failed after writing it (a failed run keeps none of the files it wrote)\" '$out/fail_after_close.err' &&
  grep -qxF \"kvplan: removed '$out/fac/o.csv': the run failed after writing it (a failed run keeps none of the files it wrote)\" '$out/fail_after_close.err'"
mkdir -p "$out/fac_batch"
expect fail_after_close_batch 1 "kvplan: batch: ok     tests/batch/good_a.lua" -- \
  batch -d "$out/fac_batch" tests/batch/good_a.lua $c/fail_after_close.lua
check "fail_after_close_batch: the failed script's files removed and named, the others kept" sh -c "
  [ -s '$out/fac_batch/good_a.csv' ] && [ ! -e '$out/fac_batch/fail_after_close.csv' ] &&
  [ ! -e '$out/fac_batch/fail_after_close-named.csv' ] &&
  grep -qxF \"kvplan: removed '$out/fac_batch/fail_after_close-named.csv': the run failed after writing it (a failed run keeps none of the files it wrote)\" '$out/fail_after_close_batch.err' &&
  grep -qxF \"kvplan: removed '$out/fac_batch/fail_after_close.csv': the run failed after writing it (a failed run keeps none of the files it wrote)\" '$out/fail_after_close_batch.err' &&
  grep -qxF 'kvplan: batch: 2 scripts, 1 ok, 1 failed' '$out/fail_after_close_batch.err'"
printf '# model: llama-3.1-8b\n# gpu: h100-sxm\nGPU KV cache size: many tokens\n' > "$out/fac/parse.log"
expect fail_after_close_validate 1 "kvplan: validate: 1 of 1 logs could not be read whole (their parse rows say why): $out/fac/parse.log" -- \
  validate "$out/fac/parse.log" -o "$out/fac/parse.csv"
check "fail_after_close_validate: validate keeps its whole report" sh -c "
  grep -q ',parse,' '$out/fac/parse.csv' && ! grep -q 'removed' '$out/fail_after_close_validate.err'"

# --shard: the parts joined (header once) equal the unsharded run, with and
# without the Lua path; two runs give identical bytes
for lua in false true; do
  "$kvplan" tests/batch/sweep.lua lua=$lua > "$out/whole.csv" &&
  "$kvplan" tests/batch/sweep.lua lua=$lua > "$out/whole2.csv" &&
  for k in 1 2 3 4 5; do "$kvplan" --quiet --shard $k/5 tests/batch/sweep.lua lua=$lua > "$out/part$k.csv" || exit 1; done &&
  "$kvplan" merge -o "$out/joined.csv" "$out"/part1.csv "$out"/part2.csv "$out"/part3.csv "$out"/part4.csv "$out"/part5.csv &&
  { head -n 1 "$out/part1.csv"; for k in 1 2 3 4 5; do tail -n +2 "$out/part$k.csv"; done; } > "$out/joined2.csv"
  if cmp -s "$out/whole.csv" "$out/whole2.csv" && cmp -s "$out/whole.csv" "$out/joined.csv" &&
     cmp -s "$out/whole.csv" "$out/joined2.csv" && [ "$(wc -l < "$out/whole.csv")" -gt 1000 ]; then
    pass=$((pass + 1)); echo "ok   cli shards joined equal the whole sweep (lua=$lua)"
  else fail=$((fail + 1)); echo "FAIL cli shards (lua=$lua)"; fi
done
expect batch_same_name 2 "kvplan: batch: 'tests/batch/sweep.lua' and './tests/batch/sweep.lua' would write the same report in '$out/b2'" -- \
  batch -d "$out/b2" tests/batch/sweep.lua ./tests/batch/sweep.lua
expect bad_shard 2 "kvplan: bad --shard '3/2' (expected K/N with 1 <= K <= N)" -- --shard 3/2 tests/batch/sweep.lua
expect merge_headers 1 "kvplan: '$out/batch/good_b-gpus.csv' has another header than '$out/batch/good_a.csv': gpu" -- \
  merge -o "$out/m.csv" "$out/batch/good_a.csv" "$out/batch/good_b-gpus.csv"
# progress: a line on a terminal's stderr, none with --quiet or off a terminal. script(1)
# gets /dev/null as input: else it forwards whatever the caller's stdin holds to the
# pseudo-terminal, whose echo (NUL bytes as ^@) would land in the captured output.
if command -v script >/dev/null 2>&1; then
  script -qc "$kvplan tests/bench/sweep.lua contexts=600 > /dev/null" /dev/null < /dev/null > "$out/tty.txt" 2>&1
  script -qc "$kvplan --quiet tests/bench/sweep.lua contexts=600 > /dev/null" /dev/null < /dev/null > "$out/tty_quiet.txt" 2>&1
  "$kvplan" tests/bench/sweep.lua contexts=600 > /dev/null 2> "$out/notty.txt"
  if grep -q "sweep: 5568000/5568000 rows (100 %)" "$out/tty.txt" && [ ! -s "$out/tty_quiet.txt" ] &&
     [ ! -s "$out/notty.txt" ]; then
    pass=$((pass + 1)); echo "ok   cli progress line only on a terminal"
  else fail=$((fail + 1)); echo "FAIL cli progress"; fi
fi
# kvplan's options anywhere on the line until '--'; unknown options are errors
rm -f "$out/after.csv"
expect o_after_script 0 "" -- tests/batch/sweep.lua lua=false -o "$out/after.csv" --quiet
check "o_after_script writes the file" test -s "$out/after.csv" -a ! -s "$out/o_after_script.out"
expect eq_option 0 "" -- examples/recompute_article_ledger.lua --output="$out/eq.csv"
check "eq_option writes the file" cmp -s "$out/eq.csv" tests/golden/recompute_article_ledger.csv
expect bad_option_after 2 "kvplan: unknown option '--frobnicate' (try 'kvplan --help'; words for the script go after '--')" -- \
  tests/cli/args.lua model=llama-3.1-8b --frobnicate
expect dashdash 0 "" -- -e "local a = ...; io.write(a[1], ' ', a[2], ' ', a.k)" -- -o --x k=v
check "dashdash passes the words after -- to the script" [ "$(cat "$out/dashdash.out")" = "-o --x v" ]
expect negative_word 0 "" -- -e "io.write((...)[1])" -5
check "negative_word is a word, not an option" [ "$(cat "$out/negative_word.out")" = "-5" ]
expect d_not_run 2 "kvplan: option '-d' is not for 'kvplan' (try 'kvplan --help')" -- -d x tests/cli/args.lua
expect help_lists 0 "" -- --help
for w in fit capacity ledger best models gpus plot batch merge --format --shard "ready scripts:" "man kvplan"; do
  grep -q -e "$w" "$out/help_lists.out" || { fail=$((fail + 1)); echo "FAIL cli --help does not mention $w"; }
done
# a command after kvplan's options
expect cmd_after_options 0 "" -- --quiet -f csv fit model=llama-3.1-8b gpus=l4
check "cmd_after_options: kvplan --quiet -f csv fit ... runs fit" grep -q '^llama-3.1-8b,l4,1,' "$out/cmd_after_options.out"
# ready scripts by name
expect fit_cmd 0 "" -- fit model=llama-3.1-70b context=32768 concurrency=16 gpus=h100-sxm
check "fit_cmd runs scripts/fit.lua" sh -c "'$kvplan' scripts/fit.lua model=llama-3.1-70b context=32768 concurrency=16 gpus=h100-sxm | cmp -s - '$out/fit_cmd.out'"
# batch with a manifest: each script its own pairs
rm -rf "$out/mbatch"
expect batch_manifest 0 "kvplan: batch: ok     $(cd scripts && pwd)/fit.lua" -- batch -d "$out/mbatch" -m tests/batch/manifest.txt
check "batch_manifest: each script got its own arguments" sh -c "
  '$kvplan' fit model=llama-3.1-70b context=32768 concurrency=16 gpus=h100-sxm | cmp -s - '$out/mbatch/fit.csv' &&
  '$kvplan' capacity model=qwen3-32b context=32768 gpus=h100-sxm,l40s kv=bf16 | cmp -s - '$out/mbatch/capacity.csv' &&
  test -s '$out/mbatch/small.csv'"
printf 'fit model=x\nfit model=y\n' > "$out/dup.txt"
expect batch_manifest_dup 2 "kvplan: batch: '$(cd scripts && pwd)/fit.lua' and '$(cd scripts && pwd)/fit.lua' would write the same report in '$out/b3' (name one with a first word 'NAME:')" -- batch -d "$out/b3" -m "$out/dup.txt"
# a key given twice in one place is refused (the script's table keeps one
# value a key, so the first was dropped silently); a manifest line's pair
# still overrides the command line's, as the manual says
expect key_twice 2 "kvplan: argument 'gpus' is given twice ('h100-sxm', then 'l4'): give it once" -- \
  fit model=llama-3.1-8b gpus=h100-sxm gpus=l4
printf 'fit model=llama-3.1-8b model=qwen3-8b\n' > "$out/twice.txt"
rm -rf "$out/b_twice"
expect manifest_key_twice 2 "kvplan: $out/twice.txt:1: argument 'model' is given twice ('llama-3.1-8b', then 'qwen3-8b'): give it once" -- \
  batch -d "$out/b_twice" -m "$out/twice.txt"
check "manifest_key_twice: nothing ran" test ! -e "$out/b_twice"
printf 'fit model=llama-3.1-8b gpus=l4 context=4096\n' > "$out/over.txt"
rm -rf "$out/b_over"
expect manifest_overrides 0 "kvplan: batch: ok     $(cd scripts && pwd)/fit.lua" -- batch -d "$out/b_over" -m "$out/over.txt" context=8192
check "manifest_overrides: the line's context won" sh -c "
  '$kvplan' fit model=llama-3.1-8b gpus=l4 context=4096 | cmp -s - '$out/b_over/fit.csv'"
# manifests are read line by line, whatever a line's length: the tail of a
# line past 4095 bytes ran as a job of its own (here evil.lua)
m="$out/man"; rm -rf "$m"; mkdir -p "$m"
printf 'require("kvplan").report{columns = {"a"}}:row{a = 1}\n' > "$m/ok.lua"
printf 'io.open("%s/evil_ran", "w"):close()\n' "$m" > "$m/evil.lua"
python3 -c "print('$m/ok.lua x=' + 'A'*4086 + '$m/evil.lua')" > "$m/long.txt"
expect manifest_long_line 0 "kvplan: batch: ok     $m/ok.lua" -- batch -d "$m/o1" -m "$m/long.txt"
check "manifest_long_line: one job, the tail is its argument" sh -c "
  [ ! -e '$m/evil_ran' ] && grep -qx 'kvplan: batch: 1 scripts, 1 ok, 0 failed' '$out/manifest_long_line.err'"
# a NUL is refused (the bytes after it were dropped), naming file:line
printf '%s/ok.lua\n%s/ok.lua a=1\0%s/evil.lua\n' "$m" "$m" "$m" > "$m/nul.txt"
expect manifest_nul 2 "kvplan: $m/nul.txt:2: a NUL byte at byte $((${#m} + 12)) of the line (a manifest is text)" -- \
  batch -d "$m/o2" -m "$m/nul.txt"
check "manifest_nul: nothing ran" test ! -e "$m/o2"
# NAME: is checked as kvplan.report checks report names (it wrote outside OUTDIR)
printf '../escaped: %s/ok.lua\n' "$m" > "$m/name.txt"
expect manifest_name 2 "kvplan: $m/name.txt:1: report name must be letters, digits, '_', '.' or '-' (at most 255), got '../escaped'" -- \
  batch -d "$m/o3" -m "$m/name.txt"
check "manifest_name: no report outside OUTDIR" test ! -e "$m/escaped.csv"
# past 64 KiB (refused before) and a line of 100,000 bytes
{ python3 -c "print(('# ' + 'c' * 98 + '\n') * 700, end='')"; printf 'a: %s/ok.lua\n' "$m"
  python3 -c "print('b: $m/ok.lua x=' + 'B' * 100000)"; } > "$m/big.txt"
expect manifest_big 0 "kvplan: batch: ok     $m/ok.lua" -- batch -d "$m/o4" -m "$m/big.txt"
check "manifest_big: both jobs ran" sh -c "
  [ \$(wc -c < '$m/big.txt') -gt 65536 ] && grep -qx 'kvplan: batch: 2 scripts, 2 ok, 0 failed' '$out/manifest_big.err'"
# simulate: a negative rate or concurrency is refused (both were taken as 0,
# the rate echoed as -1 in the row), as a bad command line (kv.options refuses
# a negative value where the default is >= 0)
"$kvplan" simulate model=llama-3.1-8b gpu=h100 requests=10 rate=-1 > /dev/null 2> "$out/sim_rate.err"
check "sim_rate_negative: status 2, the argument named" sh -c "[ $? -eq 2 ] &&
  grep -Eqx \"kvplan: command line: argument 'rate' must be an? [a-z]+ >= 0, got '-1'\" '$out/sim_rate.err'"
expect sim_concurrency_negative 2 "kvplan: command line: argument 'concurrency' must be an integer >= 0, got '-1'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 concurrency=-1
# and so anywhere: best context=-1 was the model's context, top=-1 no row
expect best_context_negative 2 "kvplan: command line: argument 'context' must be an integer >= 0, got '-1'" -- \
  best model=llama-3.1-8b context=-1 concurrency=4 gpus=l4
# an empty list where the default is not: 'tp=' ran no row, 'kv=' planned auto
expect empty_list 2 "kvplan: command line: argument 'tp' is empty (expected e.g. tp=1)" -- \
  ledger model=llama-3.1-8b gpu=l4 tp=
expect empty_name 2 "kvplan: command line: argument 'kv' is empty (expected e.g. kv=auto)" -- \
  ledger model=llama-3.1-8b gpu=l4 kv=
# simulate takes every option kv.simulate takes: a TensorRT-LLM and an SGLang
# run on the command line give kv.simulate's figures (none could be
# expressed before: no engine, version, limit or KV-fraction argument)
sim_row() { # NAME LUA-OPTIONS -- ARGS: the row's throughput is kv.simulate's
  # (model llama-3.1-8b unless MODEL= names another: a key is given once)
  name=$1; lua=$2; shift 3
  want=$("$kvplan" -e "local kv = require 'kvplan'
    local r = kv.simulate{model = '${MODEL:-llama-3.1-8b}', gpu = 'h100-sxm', prompt = kv.workload.fixed(1000),
                          output = kv.workload.fixed(500), requests = 200, $lua}
    print(string.format('%s,%.1f', r.scheduler, r.throughput_tokens_s))" 2> "$out/$name.err")
  got=$("$kvplan" simulate model="${MODEL:-llama-3.1-8b}" gpu=h100 requests=200 prompt=1000 output=500 sigma=0 \
    "$@" -f csv 2>> "$out/$name.err" | sed -n 2p | cut -d, -f6,9)
  if [ -n "$want" ] && [ "$got" = "$want" ]; then pass=$((pass + 1)); echo "ok   cli $name"
  else fail=$((fail + 1)); echo "FAIL cli $name: got '$got', kv.simulate '$want'"; head -n 2 "$out/$name.err"; fi
}
sim_row sim_trtllm "engine = 'trtllm', engine_version = '1.0', weights = 'fp8', kv = 'fp8', max_num_seqs = 256, utilization = 0.95" -- \
  engine=trtllm engine_version=1.0 weights=fp8 kv=fp8 max_batch_size=256 kv_cache_free_gpu_memory_fraction=0.95
sim_row sim_sglang "engine = 'sglang', engine_version = '0.4.3', max_num_seqs = 64, max_num_batched_tokens = 4096" -- \
  engine=sglang engine_version=0.4.3 max_running_requests=64 chunked_prefill_size=4096
sim_row sim_sglang_as_vllm "engine = 'sglang', scheduler = 'continuous'" -- engine=sglang scheduler=continuous
sim_row sim_budget_limits "budget = 'trtllm', max_num_batched_tokens = 2048, prefix = 256" -- \
  budget=trtllm max_num_batched_tokens=2048 prefix=256
sim_row sim_swap "swap = true, offload = {host = 64 * 2^30, pcie_gbps = 50}, max_num_seqs = 512" -- \
  swap=true offload_host=64GiB offload_pcie_gbps=50 max_num_seqs=512
sim_row sim_speculative "speculative = {tokens = 2, acceptance = 0.7, heads = 'eagle'}" -- \
  speculative_tokens=2 speculative_acceptance=0.7 speculative_heads=eagle
# data parallelism (issue 19, scope 5): vLLM's engines and SGLang's replicas
# split the arrivals, the row's throughput the deployment's; SGLang's
# attention DP and EP spelt as SGLang spells them
sim_row sim_vllm_dp "data_parallel_size = 2" -- data_parallel_size=2
sim_row sim_sglang_dp "engine = 'sglang', data_parallel_size = 2" -- engine=sglang dp_size=2
MODEL=qwen3-30b-a3b; sim_row sim_sglang_dp_attention "engine = 'sglang', tp = 4, data_parallel_size = 4, enable_dp_attention = true, ep_size = 4" -- \
  engine=sglang tp=4 dp_size=4 enable_dp_attention=true expert_parallel_size=4
unset MODEL
# kv.simulate's efficiency and perf tables, a key an argument
sim_row sim_perf "perf = {attn_floor_us = 50, launch_us = 2, request_ms = 5}, efficiency = {memory = 0.6}" -- \
  perf.attn_floor_us=50 perf.launch_us=2 perf.request_ms=5 efficiency.memory=0.6
# the API server's serial work a request (sim.lua api_ms), a FIFO queue
sim_row sim_api_ms "perf = {api_ms = 3}, max_concurrency = 4" -- perf.api_ms=3 max_concurrency=4
expect sim_api_ms_negative 2 "kvplan: command line: argument 'perf.api_ms' must be a number >= 0, got '-1'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 perf.api_ms=-1
expect sim_api_ms_text 2 "kvplan: command line: argument 'perf.api_ms' must be a number, got 'x'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 perf.api_ms=x
expect sim_perf_unknown 2 "kvplan: command line: unknown argument 'perf.bogus'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 perf.bogus=1
expect sim_perf_negative 2 "kvplan: command line: argument 'perf.launch_us' must be a number >= 0, got '-1'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 perf.launch_us=-1
expect sim_efficiency_range 2 "kvplan: command line: efficiency 'memory' must be in (0, 1], got 1.5" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=10 efficiency.memory=1.5
sim_at=$(grep -n "kv.simulate(o)" scripts/simulate.lua | head -1 | cut -d: -f1)
expect sim_dp_attention_alone 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: field 'enable_dp_attention' needs data_parallel_size (SGLang's dp_size) > 1, got 1 (SGLang's server_args: 'Please set a dp-size > 1')" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=20 engine=sglang enable_dp_attention=true
expect sim_ep_size_vllm 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: field 'ep_size' is SGLang's and TensorRT-LLM's and needs budget 'sglang' or 'trtllm' (vLLM's expert-parallel size is data_parallel_size x tp: give enable_expert_parallel), got budget 'vllm'" -- \
  simulate model=qwen3-30b-a3b gpu=h100 tp=2 requests=20 ep_size=2
# vLLM's --async-scheduling (issue 18): the option as the engine spells it,
# its refusal before 0.10 naming the field, value and what is expected
sim_row sim_async_scheduling "engine_version = '0.11', async_scheduling = true" -- \
  engine_version=0.11 async_scheduling=true
expect sim_async_scheduling_0_9 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: field 'async_scheduling' = true: vLLM 0.9 has no --async-scheduling (V1 from 0.10.0 on, vllm-project/vllm#19970); expected a release of 0.10 or later on V1" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=20 engine_version=0.9 async_scheduling=true
check "async_scheduling=true: faster than the 0.11 row's waiting for the host" sh -c "
  a=\$('$kvplan' simulate model=llama-3.1-8b gpu=h100 requests=50 prompt=100 output=100 sigma=0 engine_version=0.11 -f csv | sed -n 2p | cut -d, -f9)
  b=\$('$kvplan' simulate model=llama-3.1-8b gpu=h100 requests=50 prompt=100 output=100 sigma=0 engine_version=0.11 async_scheduling=true -f csv | sed -n 2p | cut -d, -f9)
  awk -v a=\"\$a\" -v b=\"\$b\" 'BEGIN { exit !(b > a && a > 0) }'"
# best rate= on a MoE model compares its expert- and data-parallel layouts
# (kv.plan.parallel_layouts) with tp alone, in a layout column
expect best_rate_moe 0 "" -- best model=qwen3-30b-a3b gpus=h100-sxm input=1000 output=200 rate=10 \
  tpot_ms=100 tp=2 pp=1 --quiet
check "best rate=: a MoE model's layouts beside tp alone" sh -c "
  head -1 '$out/best_rate_moe.out' | grep -q '^rank,gpu,tp,pp,layout,replicas,gpus,' &&
  grep -q '^[0-9]*,h100-sxm,1,1,\"DP 2 x tp 1, EP 2\",1,2,' '$out/best_rate_moe.out' &&
  grep -q '^[0-9]*,h100-sxm,2,1,EP 2,1,2,' '$out/best_rate_moe.out' &&
  grep -q '^[0-9]*,h100-sxm,2,1,,1,2,' '$out/best_rate_moe.out'"
# a mistyped command gets the nearest command's name, a usage error (exit 2);
# key=value without a script are the default scenario's (it takes none)
expect cmd_typo 2 "kvplan: unknown command 'fti' (did you mean 'fit'? 'kvplan --help' lists the commands; a script is a file such as run.lua)" -- fti
expect cmd_typo_long 2 "kvplan: unknown command 'simualte' (did you mean 'simulate'? 'kvplan --help' lists the commands; a script is a file such as run.lua)" -- simualte
expect cmd_unknown 2 "kvplan: unknown command 'frobnicate' ('kvplan --help' lists the commands; a script is a file such as run.lua)" -- frobnicate
expect default_arg 2 "kvplan: command line: unknown argument 'tp'" -- tp=2
# kvplan COMMAND --help is the command's own: a ready script's opening
# comment (its arguments, defaults and output), not the general usage
for cmd in fit capacity ledger best pareto; do
  expect "${cmd}_help" 0 "" -- $cmd --help
  check "${cmd}_help is the command's own" sh -c "head -1 '$out/${cmd}_help.out' | grep -q '^usage: kvplan $cmd ' &&
    grep -q '^Arguments' '$out/${cmd}_help.out' && ! grep -q '^commands:' '$out/${cmd}_help.out'"
done
# every key=value argument a command takes (kvplan completion's lists: the
# command's kv.options defaults) is in its --help and in its entry of the
# manual page or the manual's generated list of deployment fields (fit's,
# capacity's, ledger's, best's, startup's, pareto's and calibrate's --help named
# "any other deployment field" only; the manual lacked time, range, version,
# max_gpus, tokens_per_s, simulate's own, ...; startup had no .TP of its own)
"$kvplan" completion bash | sed -n "s/^    \([a-z]*\)) list='\(.*\)' ;;\$/\1 \2/p" > "$out/help_keys.txt"
: > "$out/help_keys_missing.txt"
while read -r cmd keys; do
  "$kvplan" $cmd --help > "$out/help_keys_$cmd.txt" 2>&1 || echo "status $cmd --help" >> "$out/help_keys_missing.txt"
  awk -v c="$cmd" '/^\.(TP|SH)/{inb=0} /^\.B /{ if (prev ~ /^\.TP/ && ($0 ~ "^\\.B " c " " || $0 ~ "^\\.B " c "$")) inb=1 } {prev=$0} inb' \
    docs/kvplan.1 > "$out/help_keys_man_$cmd.txt"
  sed -n '/deployment fields: generated/,/end of the generated fields/p' docs/kvplan.1 >> "$out/help_keys_man_$cmd.txt"
  sed -i 's/\\-/-/g; s/\\f[BIR]//g' "$out/help_keys_man_$cmd.txt"
  for key in $keys; do key=${key%=}
    grep -qE "(^|[^a-z_.])$key([^a-z_]|\$)" "$out/help_keys_$cmd.txt" || echo "help $cmd $key" >> "$out/help_keys_missing.txt"
    grep -qE "(^|[^a-z_.])$key([^a-z_]|\$)" "$out/help_keys_man_$cmd.txt" || echo "man $cmd $key" >> "$out/help_keys_missing.txt"
  done
done < "$out/help_keys.txt"
check "every command's --help and man page entry list every argument it takes" sh -c "
  [ \$(wc -l < '$out/help_keys.txt') -ge 13 ] && [ ! -s '$out/help_keys_missing.txt' ]"
[ -s "$out/help_keys_missing.txt" ] && sed -n '1,20s/^/     missing: /p' "$out/help_keys_missing.txt"
expect models_help 0 "" -- models --help
check "models_help names its usage" sh -c "head -1 '$out/models_help.out' | grep -q '^usage: kvplan models'"
# every deployment field of the registry on every command, under its own
# name or its engines' (max_model_len was refused by fit, capacity and
# ledger: "did you mean 'model'?"), checked as that field; gpu and gpus
# stand for each other
for cmd in fit capacity ledger; do
  expect "${cmd}_max_model_len" 0 "" -- $cmd model=llama-3.1-8b gpu=h100 max_model_len=8192 max_num_seqs=128 -f csv
  check "${cmd}_max_model_len plans 8192 tokens" grep -q ',8192,' "$out/${cmd}_max_model_len.out"
done
# best too (unknown argument 'max_model_len' before): context defaults to it,
# every candidate starts with it; with rate= it must hold input + output
expect best_max_model_len 0 "" -- best model=llama-3.1-8b gpu=h100 concurrency=4 max-model-len=8192 tp=1 block=16 -f csv
# (56.34 GiB of KV under the newest vLLM modelled: 56 requests of 8192 tokens,
# 1 GiB each in bf16; 51 under 0.11's 51.33 GiB)
check "best_max_model_len: requests of 8192 tokens (56 on one H100, 3 of the model's 131072)" \
  grep -q '^1,h100-sxm,1,1,1,bf16,bf16,56,' "$out/best_max_model_len.out"
expect best_max_model_len_rate 2 "kvplan: command line: argument 'max_model_len' must hold input + output = 1200 tokens, got '1000'" -- \
  best model=llama-3.1-8b input=1000 output=200 rate=5 tpot_ms=50 gpus=h100 max_model_len=1000
# gpus and gpu stand for each other on every command that takes one of them
for cmd in ledger startup simulate launch; do
  more=; [ $cmd = simulate ] && more=requests=10
  expect "${cmd}_gpus" 0 "" -- $cmd model=llama-3.1-8b gpus=h100 max_model_len=8192 $more
done
# a value out of its range is refused naming the argument, as a usage error
# (concurrency=0 failed at 'scripts/fit.lua:84: field 'concurrency' ...')
for t in "fit concurrency" "ledger concurrency" "best concurrency" "best max_gpus" "pareto max_gpus" \
         "simulate requests" "simulate prompt" "simulate output"; do
  cmd=${t% *}; arg=${t#* }
  case $cmd in
    pareto) extra="gpus=l4 input=100 output=10" ;; fit|best) extra="gpus=l4" ;; *) extra="gpu=l4" ;;
  esac
  # shellcheck disable=SC2086
  expect "range_${cmd}_$arg" 2 "kvplan: command line: argument '$arg' must be an integer >= 1, got '0'" -- \
    $cmd model=llama-3.1-8b $extra $arg=0
done
expect fit_vllm_names 0 "" -- fit model=llama-3.1-8b gpus=h100 tp=1 max-model-len=8192 gpu-memory-utilization=0.8 -f csv
check "fit_vllm_names reads vLLM's spellings" sh -c "grep -q '^llama-3.1-8b,h100-sxm,1,bf16,bf16,8192,' '$out/fit_vllm_names.out' &&
  ! cmp -s '$out/fit_vllm_names.out' '$out/fit_max_model_len.out'"
expect fit_bad_version 2 "kvplan: command line: argument 'engine_version': unknown vLLM version '0.1' (modelled: 0.6, 0.7, 0.7-v1, 0.8, 0.9, 0.10, 0.11, 0.14, 0.20, 0.21, 0.29)" -- \
  fit model=llama-3.1-8b gpus=h100 engine_version=0.1
expect ledger_bad_seqs 2 "kvplan: command line: argument 'max_num_seqs' must be an integer >= 1, got 0" -- \
  ledger model=llama-3.1-8b gpu=h100 max_num_seqs=0
# vLLM's LoRA slots: a row of their own beside the weights; a rank vLLM
# does not take and a MoE model are refused, naming why
expect ledger_lora 0 "" -- ledger model=llama-3.1-8b gpu=h100 enable_lora=true max_loras=4 max_lora_rank=64
check "ledger_lora has its row" grep -q ',lora,1.25,1.6,"4 LoRA slots of rank 64 (max_loras, max_lora_rank)"$' "$out/ledger_lora.out"
lat=$(grep -n 'local d = kv.deploy(o)' scripts/ledger.lua | cut -d: -f1)
# a command-line value kv.deploy refuses: ledger's usage error (kv.options.as_usage)
expect ledger_lora_rank 2 "kvplan: command line: argument 'max_lora_rank' must be one of vLLM's ranks (1, 8, 16, 32, 64, 128, 256, 320, 512), got 24" -- \
  ledger model=llama-3.1-8b gpu=h100 enable_lora=true max_lora_rank=24
expect ledger_lora_moe 1 "kvplan: $KVPLAN_SCRIPTS/ledger.lua:$lat: model 'mixtral-8x7b': LoRA slots of MoE experts (vllm/lora/layers/fused_moe.py) are not modelled" -- \
  ledger model=mixtral-8x7b gpu=h100 enable_lora=true
# kvplan startup prints the engine's startup lines as kvplan predicts them,
# a log kvplan validate reads back to kvplan's own figures: every row exact,
# or predicted within 0.1 % (the printed digits), starts or refuses agreeing
startup_validates() { # NAME ARGS...: the startup text, then validate on it
  n=$1; shift
  expect "startup_$n" 0 "" -- startup "$@"
  cp "$out/startup_$n.out" "$out/startup_$n.log"
  expect "startup_${n}_validate" 0 "" -- validate "$out/startup_$n.log"
  check "startup_$n validates to kvplan's figures" awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { s = $c["status"]; e = $c["rel_error"] + 0; n++
      if (s != "exact" && s != "agrees" && !(s == "predicted" && e < 0.001 && e > -0.001)) bad++ }
    END { exit !(n >= 2 && bad == 0) }' "$out/startup_${n}_validate.out"
}
# vLLM 0.11's lines (pinned: its utilization 0.9, its sort-path sampler, the
# "GPU KV cache size" of num_blocks x block)
startup_validates vllm model=llama-3.1-8b gpu=h100 max_model_len=32768 engine_version=0.11
check "startup_vllm prints vLLM's lines" sh -c "grep -q '^Available KV cache memory: 51.33 GiB$' '$out/startup_vllm.out' &&
  grep -q '^GPU KV cache size: 420,528 tokens$' '$out/startup_vllm.out' &&
  grep -q '^Maximum concurrency for 32,768 tokens per request: 12.83x$' '$out/startup_vllm.out'"
startup_validates refuses model=llama-3.1-8b gpu=l4 engine_version=0.11
check "startup_refuses prints vLLM's error and the length that starts" sh -c "
  grep -q '^ValueError: To serve at least one request with the models.s max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.39 GiB). Based on the available memory, the estimated maximum model length is 27744. Try' '$out/startup_refuses.out' &&
  grep -q '^kvplan: max_model_len=27744 starts' '$out/startup_refuses.out'"
# --max-model-len auto (vllm-project/vllm#29431): the length the KV memory
# holds, in _auto_fit_max_model_len's words, and a log that validates (0.29's
# default utilization 0.92: 35520 tokens and 4.34 GiB at 0.9)
startup_validates auto model=llama-3.1-8b gpu=a10g max_model_len=auto engine_version=0.29
check "startup_auto prints the auto-fit line" grep -q '^Auto-fit max_model_len: reduced from 131072 to 39136 to fit in available GPU memory (4.78 GiB available for KV cache)$' "$out/startup_auto.out"
expect startup_auto_old 1 "kvplan: $KVPLAN_SCRIPTS/startup.lua:75: field 'max_model_len' = auto: vLLM 0.11 has no --max-model-len auto (assumed from 0.14, vllm-project/vllm#29431): give engine_version" -- \
  startup model=llama-3.1-8b gpu=l4 max_model_len=-1 engine_version=0.11
startup_validates sglang model=qwen3-32b gpu=h100 tp=2 engine=sglang
# a V0 engine on a V1 release (0.9's own fallback on a T4) prints V1's words:
# its header says which engine, and validating it gives its figures back
startup_validates v0_fallback model=llama-3.2-1b gpu=t4 engine_version=0.9 max_model_len=4096
check "startup_v0_fallback says the engine is V0" grep -q '^# vllm_use_v1: false$' "$out/startup_v0_fallback.out"
expect startup_trtllm 2 "kvplan: command line: argument 'engine' must be 'vllm' or 'sglang' (TensorRT-LLM's startup lines are not written by kvplan startup; kvplan ledger engine=trtllm has its figures), got 'trtllm'" -- \
  startup model=llama-3.1-8b gpu=h100 engine=trtllm
expect startup_help 0 "" -- startup --help
# model= a Hugging Face directory, a config.json, or a repo id read from the
# local Hugging Face cache (tests/fixtures/hf-home: $HF_HUB_CACHE, else
# $HF_HOME/hub, else ~/.cache/huggingface/hub); the catalog first
hub=tests/fixtures/hf-home/hub
smol="model=HuggingFaceTB/SmolLM2-135M gpu=l4 context=8192"
# model_column CASE: the model column of CASE's CSV output, its rows agreeing
model_column() { tail -n +2 "$out/$1.out" | cut -d, -f2 | sort -u; }
for n in hub_cache hf_home home_cache; do
  case $n in
    hub_cache) env HF_HUB_CACHE=$hub HF_HOME= "$kvplan" ledger $smol > "$out/$n.out" 2> "$out/$n.err" ;;
    hf_home) env -u HF_HUB_CACHE -u HUGGINGFACE_HUB_CACHE HF_HOME=tests/fixtures/hf-home "$kvplan" ledger $smol \
               > "$out/$n.out" 2> "$out/$n.err" ;;
    home_cache) mkdir -p "$out/home/.cache/huggingface" && rm -f "$out/home/.cache/huggingface/hub" &&
                ln -s "$(pwd)/$hub" "$out/home/.cache/huggingface/hub" &&
                env -u HF_HUB_CACHE -u HUGGINGFACE_HUB_CACHE -u HF_HOME -u XDG_CACHE_HOME HOME="$out/home" \
                  "$kvplan" ledger $smol > "$out/$n.out" 2> "$out/$n.err" ;;
  esac
  check "model=ORG/NAME from the cache ($n): SmolLM2-135M's ledger" sh -c "
    [ \"\$(tail -n +2 '$out/$n.out' | cut -d, -f4 | sort -u)\" = HuggingFaceTB/SmolLM2-135M ] && [ ! -s '$out/$n.err' ]"
done
HF_HUB_CACHE=$hub; export HF_HUB_CACHE
expect hub_catalog_first 0 "" -- fit model=meta-llama/Llama-3.1-8B gpus=l4 context=8192
check "model=meta-llama/Llama-3.1-8B: the catalog's alias before the cache" sh -c "
  [ \"\$(tail -n +2 '$out/hub_catalog_first.out' | cut -d, -f1 | sort -u)\" = llama-3.1-8b ]"
expect hub_revision 0 "" -- capacity model=meta-llama/Llama-3.1-8B revision=18cf537a24c1076a5cdaa56091448ad394d1a381 gpus=h100
check "revision= picks the snapshot: its id is ORG/NAME@REVISION" sh -c "
  [ \"\$(tail -n +2 '$out/hub_revision.out' | cut -d, -f1 | sort -u)\" = meta-llama/Llama-3.1-8B@18cf537a24c1076a5cdaa56091448ad394d1a381 ]"
for e in vllm sglang trtllm k8s; do
  expect hub_launch_$e 0 "" -- launch model=meta-llama/Llama-3.1-8B revision=18cf537a24c1076a5cdaa56091448ad394d1a381 gpu=h100 engine=$e
  check "launch engine=$e of a cache snapshot asks the engine for that revision" \
    grep -q -e '--revision 18cf537a24c1076a5cdaa56091448ad394d1a381 ' -e '^ *- "18cf537a24c1076a5cdaa56091448ad394d1a381"$' "$out/hub_launch_$e.out"
done
check "launch of a repo id without revision= names no revision" sh -c "
  HF_HUB_CACHE=$hub '$kvplan' launch model=HuggingFaceTB/SmolLM2-135M gpu=l4 | grep -q -v -e '--revision' &&
  ! HF_HUB_CACHE=$hub '$kvplan' launch model=HuggingFaceTB/SmolLM2-135M gpu=l4 | grep -q -e '--revision'"
expect hub_best 0 "" -- best model=HuggingFaceTB/SmolLM2-135M context=8k concurrency=64 gpus=l4,t4 --quiet
expect hub_missing 2 "kvplan: command line: argument 'model': unknown model 'org/none': not in the catalog, and it is not in the local Hugging Face cache: no directory $hub/models--org--none (the cache directory $hub: \$HF_HUB_CACHE, the first set of \$HF_HUB_CACHE, \$HF_HOME/hub, ~/.cache/huggingface/hub); kvplan reads local files only: \`huggingface-cli download org/none config.json\` puts its config.json there (model.safetensors.index.json too for the checkpoint's exact size)" -- \
  fit model=org/none gpus=l4
expect hub_bad_revision 2 "kvplan: command line: argument 'revision' must be a branch, tag or commit of the repo (letters, digits, '.', '_', '-'), got '../main'" -- \
  ledger model=meta-llama/Llama-3.1-8B revision=../main gpu=l4
expect hub_revision_catalog 2 "kvplan: command line: argument 'revision' picks a snapshot of a Hugging Face repo id in the local cache (model=ORG/NAME), got model 'llama-3.1-8b'" -- \
  ledger model=llama-3.1-8b revision=main gpu=l4
unset HF_HUB_CACHE
expect model_dir 0 "" -- ledger model=tests/fixtures/hf/qwen3-8b gpu=h100 context=8192
expect model_config 0 "" -- fit model=tests/fixtures/hf/qwen3-8b/config.json gpus=h100 context=8192
check "model= a directory or a config.json: the checkpoint's model" sh -c "
  grep -q ',qwen3-8b,h100-sxm,' '$out/model_dir.out' && grep -q '^qwen3-8b,h100-sxm,' '$out/model_config.out'"
# on a terminal of 80 columns (a pseudo-terminal by script(1)), best, ledger
# and capacity print no line longer than 80 columns; --wide keeps the wide
# table (199-250 columns before)
if command -v script > /dev/null 2>&1; then
  for t in "best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16" \
           "ledger model=llama-3.1-70b gpu=h100-sxm tp=4 pp=3 context=32k concurrency=64" \
           "capacity model=qwen3-32b gpus=h100,l40s kv=bf16,fp8 tp=1,2"; do
    n=tty_$(echo "$t" | cut -d' ' -f1)
    COLUMNS=80 script -qec "$kvplan -q $t" /dev/null < /dev/null | tr -d '\r' > "$out/$n.out"
    check "$n fits 80 columns" sh -c "[ \$(LC_ALL=C.UTF-8 wc -L < '$out/$n.out') -le 80 ] && [ \$(wc -l < '$out/$n.out') -ge 4 ]"
  done
  # best under an SLA without -q: its table and the simulations' count on
  # standard error (99 columns on one line before)
  COLUMNS=80 script -qec "$kvplan best model=llama-3.1-70b input=2048 output=256 rate=20 ttft_ms=2000 tpot_ms=50 percentile=p90 gpus=h100-sxm,h200,mi300x prices=examples/prices.csv" \
    /dev/null < /dev/null | tr -d '\r' > "$out/tty_best_sla.out"
  check "tty_best_sla fits 80 columns, standard error too" sh -c "[ \$(LC_ALL=C.UTF-8 wc -L < '$out/tty_best_sla.out') -le 80 ] &&
    grep -q '^kvplan best: [0-9]* candidates' '$out/tty_best_sla.out'"
  COLUMNS=80 script -qec "$kvplan -q --wide $t" /dev/null < /dev/null | tr -d '\r' > "$out/tty_wide.out"
  check "tty_wide keeps every column" sh -c "[ \$(LC_ALL=C.UTF-8 wc -L < '$out/tty_wide.out') -gt 80 ]"
  check "tty_capacity names what it left out" grep -q '^(not shown, to fit 80 columns:' "$out/tty_capacity.out"
  # best on a terminal: the top rows, then one line for each other GPU (the
  # catalog's GPUs: 29 rows of 14 columns before); the CSV keeps every row (one a GPU:
  # a row a GPU and the header: 28 lines before the GB10 entry, 29 with it, 31 since the A40
  # and the RTX A5000)
  b="best model=llama-3.1-70b context=32k concurrency=16 top=3"
  COLUMNS=80 script -qec "$kvplan -q $b" /dev/null < /dev/null | tr -d '\r' > "$out/tty_best_top.out"
  "$kvplan" -q $b > "$out/best_top.csv"
  gpus=$(tail -n +2 "$out/best_top.csv" | cut -d, -f2 | sort -u | wc -l)
  check "tty_best_top: 3 ranked rows, then a line for each of the other GPUs, within 80 columns" sh -c "
    [ \$(LC_ALL=C.UTF-8 wc -L < '$out/tty_best_top.out') -le 80 ] &&
    [ \$(grep -Ec '^ +[0-9]+  [a-z0-9-]+ ' '$out/tty_best_top.out') -eq $gpus ] &&
    sed '/^Other GPUs, the best deployment of each/q' '$out/tty_best_top.out' | grep -Ec '^ +[0-9]+  [a-z0-9-]+ ' | grep -qx 3 &&
    grep -Eq '^ +13  h200 +tp 1 x pp 3 +3 GPUs  needs 3 GPUs\$' '$out/tty_best_top.out' &&
    [ $gpus -gt 20 ] && [ \$(wc -l < '$out/best_top.csv') -eq 31 ]"
  COLUMNS=80 script -qec "$kvplan -q $b all=true" /dev/null < /dev/null | tr -d '\r' > "$out/tty_best_all.out"
  check "tty_best_all: every candidate a row, no summary" sh -c "
    ! grep -q '^Other GPUs' '$out/tty_best_all.out' && [ \$(grep -Ec '^ +[0-9]+  ' '$out/tty_best_all.out') -gt 100 ] &&
    [ \$(LC_ALL=C.UTF-8 wc -L < '$out/tty_best_all.out') -le 80 ]"
else
  echo "skip cli tty_*: script(1) (util-linux) is not installed"
fi
# -f vertical: every command that prints a table writes each row as a block
# of 'column: value' lines, names aligned, a blank line between rows (off a
# terminal the values whole); its --help says so; on a terminal of 60 columns
# no line is longer (values cut)
vert_ok() { # NAME ROWS: NAME.out holds ROWS blocks of name: value lines, the values in one
  # column, a line a cell of NAME.csv, and NAME.err nothing
  [ "$2" -ge 1 ] && [ ! -s "$out/$1.err" ] &&
  [ "$(grep -c . "$out/$1.out")" -eq $(($2 * $(head -n 1 "$out/$1.csv" | awk -F, '{ print NF }'))) ] &&
  awk -v rows="$2" '
    /^$/ { blocks++; next }
    { if (!match($0, /^[A-Za-z0-9_%.]+:( +|$)/)) bad = 1
      if (RLENGTH < length($0)) { if (col == "") col = RLENGTH; else if (col != RLENGTH) bad = 1 } }
    END { exit !(NR > 0 && !bad && blocks + 1 == rows) }' "$out/$1.out"
}
for t in "fit model=llama-3.1-8b gpus=l4 tp=1,2 context=8192 concurrency=4" \
         "capacity model=qwen3-32b gpus=h100,l40s kv=bf16 tp=1" \
         "ledger model=llama-3.1-8b gpu=l4 context=8192" \
         "best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16 top=3" \
         "simulate model=llama-3.1-8b gpu=l4,h100 requests=20 prompt=100 output=20" \
         "models qwen3-32" "tests/cli/args.lua"; do
  n=vertical_$(echo "$t" | cut -d' ' -f1 | tr -c 'a-z\n' _)
  "$kvplan" -q $t -f csv > "$out/$n.csv"
  "$kvplan" -q $t -f vertical > "$out/$n.out" 2> "$out/$n.err"
  rows=$(($(wc -l < "$out/$n.csv") - 1))
  check "$n: -f vertical writes the $rows rows as blocks of 'column: value' lines" vert_ok $n $rows
done
for cmd in fit capacity ledger best simulate pareto validate models gpus; do
  "$kvplan" $cmd --help > "$out/help_vertical_$cmd.out" 2>&1
  check "$cmd --help lists -f vertical" grep -q "^  -f vertical  each row a block of 'column: value' lines" "$out/help_vertical_$cmd.out"
done
check "kvplan --help lists vertical among --format's names" sh -c "'$kvplan' --help | grep -q 'csv, table, vertical'"
check "the completion offers -f vertical" sh -c "'$kvplan' completion bash | grep -q 'csv table vertical json markdown html'"
if command -v script > /dev/null 2>&1; then
  COLUMNS=60 script -qec "$kvplan -q best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16 top=3 -f vertical" \
    /dev/null < /dev/null | tr -d '\r' > "$out/tty_vertical.out"
  check "tty_vertical: best -f vertical on 60 columns: every row a block, no line past 60, a why cut" sh -c "
    [ \$(LC_ALL=C.UTF-8 wc -L < '$out/tty_vertical.out') -le 60 ] && grep -q '^rank: *3\$' '$out/tty_vertical.out' &&
    grep -q \"^why: .*\$(printf '\\342\\200\\246')\\\$\" '$out/tty_vertical.out' && ! grep -q '^Other GPUs' '$out/tty_vertical.out'"
fi
expect sim_help 0 "" -- simulate --help
check "sim_help lists every option kv.simulate takes" sh -c "
  for w in engine engine_version budget utilization max_num_seqs max_num_batched_tokens scheduler \
      weights prefix speculative_tokens swap offload_host trace max_concurrency profile \
      max_running_requests max_batch_size; do grep -q \"^  \$w \\|also.*\$w\" '$out/sim_help.out' || exit 1; done"
# a bad value of each: a usage error (exit 2) naming the argument, the value
# and what was expected
sim="simulate model=llama-3.1-8b gpu=h100 requests=10"
cl="kvplan: command line:"
expect sim_bad_engine 2 "$cl argument 'engine' must be 'vllm', 'sglang' or 'trtllm', got 'foo'" -- $sim engine=foo
expect sim_bad_version 2 "$cl argument 'engine_version': unknown SGLang release '0.3' for field 'engine_version' (known: 0.4, 0.5; a later release takes the newest before it)" -- \
  $sim engine=sglang engine_version=0.3
expect sim_bad_trt_version 2 "$cl argument 'engine_version': unknown TensorRT-LLM release '0.4' for field 'engine_version' (known: 0.5, 0.11, 0.14, 0.21, 1.0; a later release takes the newest before it)" -- \
  $sim engine=trtllm engine_version=0.4
expect sim_unmodelled_trt_version 2 "$cl argument 'engine_version': TensorRT-LLM release '0.10.0' for field 'engine_version' is not modelled: releases 0.8 to 0.10 (trtllm-build's defaults of those releases were not read) (known: 0.5, 0.11, 0.14, 0.21, 1.0)" -- \
  $sim engine=trtllm engine_version=0.10.0
expect sim_bad_budget 2 "$cl argument 'budget' must be 'vllm', 'sglang' or 'trtllm', got 'tgi'" -- $sim budget=tgi
expect sim_bad_utilization 2 "$cl argument 'utilization' must be in (0, 1], got 1.5" -- $sim utilization=1.5
expect sim_bad_seqs 2 "$cl argument 'max_num_seqs' must be an integer >= 1, got 0" -- $sim max_num_seqs=0
expect sim_bad_tokens 2 "$cl argument 'max_num_batched_tokens' must be an integer >= 1, got 0" -- $sim max_num_batched_tokens=0
expect sim_bad_scheduler 2 "$cl argument 'scheduler' must be 'continuous', 'no_evict', 'static' or 'sglang', got 'fifo'" -- $sim scheduler=fifo
expect sim_bad_weights 2 "$cl argument 'weights': unknown format 'fp9' (did you mean 'fp4', 'fp8', 'fp16'?)" -- $sim weights=fp9
expect sim_bad_prefix 2 "$cl argument 'prefix' must be an integer >= 0, got -1" -- $sim prefix=-1
expect sim_bad_swap 2 "$cl argument 'swap' must be true or false, got 'maybe'" -- $sim swap=maybe
expect sim_swap_no_host 2 "$cl argument 'swap' needs offload_host > 0 (host memory for the swapped KV, e.g. 64GiB)" -- $sim swap=true
# zero host memory (hostile4): kv.simulate's "field 'swap' needs host memory:
# give offload = {host = ...}" at the script's line, status 1, before
expect sim_swap_host_zero 2 "$cl argument 'swap' needs offload_host > 0 (host memory for the swapped KV, e.g. 64GiB), got '0'" -- \
  $sim swap=true offload_host=0
expect sim_bad_host 2 "$cl argument 'offload_host' must be bytes of host memory (e.g. 64GiB), got 'lots'" -- $sim offload_host=lots
expect sim_pcie_no_host 2 "$cl argument 'offload_pcie_gbps' needs offload_host (host memory, e.g. 64GiB)" -- $sim offload_pcie_gbps=10
expect sim_bad_spec 2 "$cl argument 'speculative_tokens' must be an integer >= 0, got '-1'" -- $sim speculative_tokens=-1
expect sim_bad_acceptance 2 "$cl argument 'speculative_acceptance' must be in [0, 1), got 2" -- \
  $sim speculative_tokens=2 speculative_acceptance=2
# an acceptance of 1 passed the script's [0, 1] and was the core's "field
# 'acceptance' must be in [0, 1)" at the script's line, status 1 (hostile4)
expect sim_acceptance_one 2 "$cl argument 'speculative_acceptance' must be in [0, 1), got 1" -- \
  $sim speculative_tokens=2 speculative_acceptance=1
expect sim_heads_no_tokens 2 "$cl argument 'speculative_heads' needs speculative_tokens > 0" -- $sim speculative_heads=eagle
expect sim_bad_trace 2 "$cl argument 'trace': cannot open 'tests/none.csv': No such file or directory" -- \
  simulate model=llama-3.1-8b gpu=h100 trace=tests/none.csv
expect sim_trace_and_requests 2 "$cl argument 'trace' gives arrivals and lengths: drop 'requests'" -- \
  $sim trace=tests/none.csv
expect sim_bad_max_concurrency 2 "$cl argument 'max_concurrency' must be an integer >= 0, got '-1'" -- \
  $sim max_concurrency=-1
expect sim_two_concurrency 2 "$cl arguments 'max_concurrency' and 'concurrency' are the same option: give one" -- \
  $sim max_concurrency=2 concurrency=2
# a rate in decimals (rate=2.5 was refused as not an integer)
expect sim_rate_decimal 0 "" -- $sim rate=2.5 -f csv
check "sim_rate_decimal: the row's rate" grep -q '^llama-3.1-8b,h100-sxm,1,1,bf16,continuous,2.5,10,' "$out/sim_rate_decimal.out"
# output formats: table, JSON Lines (streamed sweeps too), Markdown
fitargs="model=llama-3.1-70b context=32768 concurrency=16 gpus=h100-sxm,l40s"
expect fmt_csv 0 "" -- fit $fitargs
expect fmt_table 0 "" -- fit $fitargs --format table
check "fmt_table: header, rule, one line a row, no commas between columns" sh -c "
  [ \$(wc -l < '$out/fmt_table.out') -eq \$((\$(wc -l < '$out/fmt_csv.out') + 1)) ] &&
  sed -n 2p '$out/fmt_table.out' | grep -Eq '^-+(  -+)+\$' &&
  head -n 1 '$out/fmt_table.out' | grep -Eq '^model +gpu +tp +weights'"
check "fmt_table: numbers right-aligned under their header" sh -c "
  awk 'NR == 1 { i = index(\$0, \"max_concurrency\") + length(\"max_concurrency\") } NR > 2 { if (substr(\$0, i - 1, 1) !~ /[0-9]/) bad = 1 } END { exit bad }' '$out/fmt_table.out'"
expect fmt_md 0 "" -- fit $fitargs -f markdown
check "fmt_md: a Markdown table" sh -c "sed -n 2p '$out/fmt_md.out' | grep -Eq '^\\|[-:|]+\\|\$' && grep -c '^| llama-3.1-70b ' '$out/fmt_md.out' | grep -qx 8"
expect fmt_json 0 "" -- fit $fitargs -f json
rm -f "$out/sweep.jsonl"
expect fmt_json_sweep 0 "" -- tests/batch/sweep.lua lua=false -o "$out/sweep.jsonl" --quiet
"$kvplan" --quiet tests/batch/sweep.lua lua=false > "$out/sweep_json.csv"
expect json_same_values 0 "" -- -e "
  local json, csv = require 'kvplan.json', require 'kvplan.csv'
  local function same(jpath, cpath)
    local rows = csv.read(cpath)
    local n = 0
    for line in io.lines(jpath) do
      n = n + 1
      local o, r = json.decode(line, jpath), rows[n + 1]
      for i, v in ipairs(r) do
        local k = rows[1][i]
        local j = o[k]
        if j == json.null then j = '' elseif type(j) ~= 'string' then j = tostring(j) end
        if type(o[k]) == 'number' then assert(tonumber(v) == o[k], k .. ' ' .. v) else assert(j == v, k .. ': ' .. tostring(j) .. ' ~= ' .. v) end
      end
    end
    assert(n == #rows - 1 and (n > 1000 or jpath:find('fmt_json')), 'rows ' .. n .. ' ' .. #rows)
  end
  same('$out/fmt_json.out', '$out/fmt_csv.out')
  same('$out/sweep.jsonl', '$out/sweep_json.csv')"
expect sweep_format 0 "" -- -e "require('kvplan').sweep{model = 'llama-3.1-8b', gpu = {'l4', 'h100'}, columns = {'gpu', 'fits'}}:write{format = 'json'}"
check "sweep_format: s:write{format = 'json'}" [ "$(cat "$out/sweep_format.out")" = '{"gpu":"l4","fits":false}
{"gpu":"h100-sxm","fits":true}' ]
expect report_format 0 "" -- -e "
  local kv = require 'kvplan'
  local r = kv.report{columns = {'a', {'b', precision = 2}}, format = 'json'}
  r:row{a = 'x \"y\"', b = 1.5}
  r:close()"
check "report_format: kv.report{format = 'json'}" [ "$(cat "$out/report_format.out")" = '{"a":"x \"y\"","b":1.50}' ]
expect report_used 0 "" -- -e "
  local kv = require 'kvplan'
  local r = kv.report{columns = 'used', order = {'model', 'kv', {'spec_tokens', precision = 2}, 'evicted'}}
  r:row{model = 'm', kv = 'fp8', spec_tokens = '', evicted = ''}
  r:row{model = 'n', kv = 'bf16', spec_tokens = 2.5, evicted = '', extra = 1}
  r:close()"
check "report_used: empty columns left out" [ "$(cat "$out/report_used.out")" = "model,kv,spec_tokens,extra
m,fp8,,
n,bf16,2.50,1" ]
if command -v script >/dev/null 2>&1; then
  script -qc "$kvplan fit $fitargs" /dev/null < /dev/null > "$out/tty_table.txt" 2>&1
  check "a terminal gets a table by default" sh -c "grep -aEq '^gpu +tp ' '$out/tty_table.txt' && grep -aq '^model: ' '$out/tty_table.txt' && ! grep -aq 'model,gpu' '$out/tty_table.txt'"
fi
# control characters from data never reach a terminal raw, in any format
# (a cell's ESC reached it through -f table); to a file CSV keeps every byte
raw_ctl() { od -An -tx1 "$1" | grep -Eq '(^| )(1b|07|7f|9b)( |$)'; }
escaped_ctl() { grep -qi '1b.0;TITLE' "$1" && ! raw_ctl "$1"; }
if command -v script >/dev/null 2>&1; then
  for f in csv table markdown json; do
    script -qc "$kvplan -f $f $c/control_chars.lua" /dev/null < /dev/null > "$out/ctl_$f.txt" 2>&1
    check "control characters escaped on a terminal: -f $f" escaped_ctl "$out/ctl_$f.txt"
  done
fi
"$kvplan" -f csv $c/control_chars.lua > "$out/ctl_file.csv"
check "control characters kept in a CSV file" raw_ctl "$out/ctl_file.csv"
# JSON text is UTF-8: a cell that is not says its row, column and byte ("Cannot
# allocate memory" before)
expect json_not_utf8 1 "kvplan: (command line):3: cannot write 'standard output': row 2, column \"a\": the value is not UTF-8 (byte 0xff at byte 2), which JSON text must be" -- \
  -f json -e "local r = require('kvplan').report{columns = {'a', 'b'}}
  r:row{a = 'ok', b = 1}
  r:row{a = 'x\\255y', b = 2} r:close()"
check "json_not_utf8: the rows before it written" [ "$(cat "$out/json_not_utf8.out")" = '{"a":"ok","b":1}' ]
# kvplan best: the acceptance shape: TP 8 x PP 2 or better, in a table
expect best_table 0 "" -- best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16 --format table
# (72 requests at tp 4 x pp 3 under the newest vLLM modelled, no release
# given: 0.92 utilization and FlashInfer's sampler; 68 under 0.11)
check "best: rank 1 is h100-sxm tp 4 x pp 3 (12 GPUs, better than tp 8 x pp 2)" sh -c "
  sed -n 3p '$out/best_table.out' | grep -Eq '^ +1  h100-sxm +4 +3 +12  bf16 +bf16 +72 .* best: fewest GPUs'"
expect best_all 0 "" -- best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16 all=true
check "best all=true: tp 8 x pp 2 serves, lost on GPU count; tp 8 x pp 1 does not serve" sh -c "
  grep -Eq '^[0-9]+,h100-sxm,8,2,16,bf16,bf16,100,.*,\"needs 16 GPUs, h100-sxm tp 4 x pp 3 needs 12\"\$' '$out/best_all.out' &&
  grep -Eq '^,h100-sxm,8,1,8,bf16,bf16,[0-9]+,.*,\"KV for 64 x 32768 tokens needs' '$out/best_all.out'"
expect best_tp_sizes 0 "" -- -e "
  local kv = require 'kvplan'
  local b = require 'kvplan.best'
  assert(table.concat(b.tp_sizes(kv.model 'llama-2-13b', 64), ',') == '1,2,4,5,8,10,20,40')
  assert(table.concat(b.tp_sizes(kv.model 'llama-3.1-70b', 64), ',') == '1,2,4,8,16,32,64')
  local r = kv.best{model = 'llama-2-13b', context = 4096, concurrency = 100, gpus = {'l4'}, kv = {'fp16'}, pp = {1}}
  local five = false
  for _, c in ipairs(r) do five = five or c.tp == 5 end
  assert(five, 'tp 5 searched')"
# kv.best: a candidate whose engine refuses to start does not serve (vLLM: one request of
# Llama-3.1-8B's 131072 tokens needs 16 GiB of KV, one L4 has 3.4 GiB), as report rows say
expect best_refused 0 "" -- -e "
  local kv = require 'kvplan'
  local r = kv.best{model = 'llama-3.1-8b', context = 2048, concurrency = 1, gpus = {'l4'}, tp = {1, 2}, pp = {1}}
  assert(r[1].rank == 1 and r[1].tp == 2, 'rank 1: tp 2')
  local one = r[2]
  assert(one.tp == 1 and one.fits == false and one.limit == 'starts' and one.rank == nil, 'tp 1 does not serve')
  assert(one.why:find('vLLM refuses to start', 1, true) == 1, one.why)
  local row = kv.report.ledger_row(one.deployment, 2048, 1)
  assert(row.fits == false and row.why == one.why, 'as the report row')"
expect best_cost 0 "" -- best model=llama-3.1-70b context=32k concurrency=16 gpus=h100-sxm,h200,l40s,a100-80gb rank=cost prices=tests/fixtures/csv/prices.csv
check "best rank=cost: cheapest per hour first, unpriced GPUs say why" sh -c "
  sed -n 2p '$out/best_cost.out' | grep -Eq '^1,l40s,' &&
  grep -q 'no price_per_hour for gpu .a100-sxm-80gb.' '$out/best_cost.out' &&
  grep -Eq '^[0-9]+,h200,.*costs [0-9.]+/h \\([0-9]+ GPUs\\), l40s tp' '$out/best_cost.out'"
expect best_conc 0 "" -- best model=llama-3.1-8b context=8k concurrency=8 gpus=l4,h100 rank=concurrency
check "best rank=concurrency: most requests per GPU first" sh -c "
  awk -F, 'NR > 1 && \$1 != \"\" { if (prev != \"\" && \$9 + 0 > prev + 0) bad = 1; prev = \$9 } END { exit bad }' '$out/best_conc.out'"
expect best_tput 0 "" -- best model=llama-3.1-8b context=8k concurrency=32 gpus=h100-sxm tokens_per_s=3000 all=true
check "best tokens_per_s: ranked rows reach the target, tp 1 lost on throughput" sh -c "
  awk -F, 'NR > 1 && \$1 != \"\" { n++; if (\$11 + 0 < 3000) bad = 1 } END { exit bad || n == 0 }' '$out/best_tput.out' &&
  grep -Eq '^,h100-sxm,1,1,1,.*\"?decodes [0-9]+ tokens/s at 32 requests, target 3000' '$out/best_tput.out'"
# kvplan best rate=: a service, replicas by each deployment's capacity under the SLA
expect best_rate 0 "" -- best model=llama-3.1-8b input=1000 output=200 rate=30 ttft_ms=1000 tpot_ms=40 \
  gpus=h100-sxm,l40s pp=1 prices=tests/fixtures/csv/prices.csv --format table --quiet
check "best rate=: a ranked table of replicas, GPUs, capacity, binding, latencies and cost" sh -c "
  sed -n 1p '$out/best_rate.out' | grep -Eq '^rank +gpu +tp +pp +replicas +gpus +rate_per_replica +binding +ttft_ms_p90 +tpot_ms_p90 +tokens_per_s +cost_per_hour +usd_per_mtok +why' &&
  sed -n 3p '$out/best_rate.out' | grep -Eq '^ +1  h100-sxm +[0-9]+ +1 +[0-9]+ +[0-9]+ +[0-9.]+  [a-z_]+ .* best: fewest GPUs' &&
  grep -Eq ' l40s .*(needs [0-9]+ GPUs|serves)' '$out/best_rate.out'"
expect best_rate_top 0 "" -- best model=llama-3.1-8b input=1000 output=200 rate=30 ttft_ms=1000 tpot_ms=40 \
  gpus=h100-sxm,l40s pp=1 prices=tests/fixtures/csv/prices.csv top=1 --format table --quiet
check "best rate= top=1 table: rank 1, then l40s's best in one line: replicas x tp x pp, GPUs, cost, why" sh -c "
  [ \$(grep -c ' h100-sxm ' '$out/best_rate_top.out') -eq 1 ] && grep -q '^Other GPUs, the best deployment of each' '$out/best_rate_top.out' &&
  grep -Eq '^ +[0-9]+  l40s  [0-9]+ x tp [0-9]+ x pp 1  [0-9]+ GPUs  \\\$[0-9.]+/h  needs [0-9]+ GPUs \\([0-9]+ replicas of [0-9.]+ req/s\\)\$' '$out/best_rate_top.out'"
expect best_rate_csv 0 "" -- best model=llama-3.1-8b input=1000 output=200 rate=30 tpot_ms=40 gpus=l40s tp=1,2 pp=1 \
  rank=usd_per_mtok prices=tests/fixtures/csv/prices.csv percentile=p99 -o "$out/best_rate.csv" --quiet
check "best rate= -o: every column, at the percentile asked, cost per million tokens" sh -c "
  sed -n 1p '$out/best_rate.csv' | grep -qx 'rank,mode,gpu,tp,pp,weights,kv,max_num_seqs,max_num_batched_tokens,replicas,gpus,rate_per_replica,utilization,binding,ttft_ms_p99,tpot_ms_p99,e2e_ms_p99,tokens_per_s,tokens_per_s_user,cost_per_hour,usd_per_mtok_output,usd_per_mtok_total,why' &&
  sed -n 2p '$out/best_rate.csv' | grep -Eq '^1,aggregated,l40s,[12],1,bf16,bf16,,,[0-9]+,[0-9]+,[0-9.]+,0\.[0-9]+,[a-z_]+,.*,6000,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,best: lowest cost per million output tokens\$' &&
  '$kvplan' best model=llama-3.1-8b input=1000 output=200 rate=30 tpot_ms=40 gpus=l40s tp=1,2 pp=1 -o /dev/null 2>&1 |
    tr '\\n' '|' | grep -Eqx 'kvplan best: 2 candidates, 2 simulated \\([0-9]+ simulations\\),\\|  0 not simulated by their lower bound\\|'"
expect best_rate_limits 0 "" -- best model=llama-3.1-8b input=1000 output=200 rate=10 tpot_ms=40 gpus=h100-sxm tp=1 pp=1 \
  max_num_seqs=16,256 -o "$out/best_limits.csv" --quiet
check "best max_num_seqs=16,256: each a candidate; 16 sequences serve fewer requests a replica" sh -c "
  grep -Eq '^1,aggregated,h100-sxm,1,1,bf16,bf16,256,,' '$out/best_limits.csv' &&
  grep -Eq '^2,aggregated,h100-sxm,1,1,bf16,bf16,16,,' '$out/best_limits.csv'"
expect best_rate_modes 0 "" -- best model=llama-3.1-8b input=4000 output=200 rate=10 ttft_ms=2000 tpot_ms=20 \
  gpus=h100-sxm tp=1,2 pp=1 modes=aggregated,disaggregated -o "$out/best_modes.csv" --quiet
check "best modes=aggregated,disaggregated: both modes in one table, the pools and the KV transfer" sh -c "
  grep -Eq '^[0-9]+,disaggregated,h100-sxm,.*,[0-9]+ x h100-sxm tp [12] x pp 1,[0-9]+ x h100-sxm tp [12] x pp 1,[0-9.]+,' '$out/best_modes.csv' &&
  grep -Eq '^[0-9]+,aggregated,h100-sxm,' '$out/best_modes.csv'"
# Disaggregation wins with long prompts and a tight TPOT: an 8192-token prefill (210
# ms) stalls an aggregated replica's decodes, a decode pool never waits for one
# (tests/lua/disagg_test.lua checks the bound); it loses with short prompts: one GPU
# serves the rate, two pools need two. Each row's transfer and gain or loss shown
expect best_disagg_wins 0 "" -- best model=llama-3.1-8b input=8192 output=512 rate=10 ttft_ms=3000 tpot_ms=15 \
  gpus=h100-sxm tp=1,2 pp=1 requests=300 modes=aggregated,disaggregated -o "$out/best_disagg.csv" --quiet
check "best modes=: disaggregation wins with long prompts, its pools and transfer shown" sh -c "
  sed -n 2p '$out/best_disagg.csv' | grep -Eq '^1,disaggregated,h100-sxm,1,1,bf16,bf16,.*,[0-9]+ x h100-sxm tp 1 x pp 1,[0-9]+ x h100-sxm tp [12] x pp 1,28\.17,.*GPUs? fewer than the best aggregated' &&
  grep -Eq '^[0-9]+,aggregated,h100-sxm,' '$out/best_disagg.csv'"
expect best_disagg_loses 0 "" -- best model=llama-3.1-8b input=128 output=128 rate=10 ttft_ms=3000 tpot_ms=15 \
  gpus=h100-sxm tp=1,2 pp=1 requests=300 modes=aggregated,disaggregated -o "$out/best_disagg_short.csv" --quiet
check "best modes=: disaggregation loses with short prompts, the loss stated" sh -c "
  sed -n 2p '$out/best_disagg_short.csv' | grep -Eq '^1,aggregated,h100-sxm,1,1,bf16,bf16,,,1,1,' &&
  grep -Eq '^[23],disaggregated,h100-sxm,1,1,bf16,bf16,,,2,2,.*1 GPU more than the best aggregated \(1 x h100-sxm tp 1 pp 1: 1 GPU\)' '$out/best_disagg_short.csv'"
expect best_disagg_link 0 "" -- best model=llama-3.1-8b input=8192 output=512 rate=10 ttft_ms=3000 tpot_ms=15 \
  gpus=h100-sxm tp=1 pp=1 requests=300 modes=disaggregated kv_link_gbps=25 kv_link_latency_us=0 -o "$out/best_link.csv" --quiet
check "best kv_link_gbps=25 kv_link_latency_us=0: 8192 tokens x 131072 bytes over 25 GB/s" sh -c "
  grep -Eq '^1,disaggregated,.*,42\.95,' '$out/best_link.csv'"
expect best_modes_no_rate 2 "kvplan: command line: argument 'modes' needs rate= (requests a second): latency targets, lengths and engine limits plan a service; without rate= best holds concurrency=N requests of context=L tokens" -- \
  best model=llama-3.1-8b modes=disaggregated
expect best_percentile 2 "kvplan: command line: argument 'percentile' must be p50, p90 or p99, got 'p95'" -- \
  best model=llama-3.1-8b input=1000 output=200 rate=10 tpot_ms=40 percentile=p95
expect best_rate_zero 2 "kvplan: command line: argument 'rate' must be a number > 0 (requests a second), got '0'" -- \
  best model=llama-3.1-8b input=1000 output=200 rate=0
expect best_rate_negative 2 "kvplan: command line: argument 'rate' must be a number >= 0, got '-2'" -- \
  best model=llama-3.1-8b input=1000 output=200 rate=-2
expect best_ttft_no_rate 2 "kvplan: command line: argument 'ttft_ms' needs rate= (requests a second): latency targets, lengths and engine limits plan a service; without rate= best holds concurrency=N requests of context=L tokens" -- \
  best model=llama-3.1-8b ttft_ms=500
expect best_rate_no_input 2 "kvplan: command line: argument 'input' must be an integer >= 1 (tokens per request) with rate=, got '0'" -- \
  best model=llama-3.1-8b rate=5 output=100
expect best_rate_context 2 "kvplan: command line: argument 'context' is for the memory search; with rate= give input= and output= (tokens per request) and latency targets" -- \
  best model=llama-3.1-8b rate=5 input=100 output=100 context=8k
expect best_rate_rank 2 "kvplan: command line: argument 'rank' must be gpus, cost or usd_per_mtok with rate=, got 'concurrency'" -- \
  best model=llama-3.1-8b rate=5 input=100 output=100 rank=concurrency
expect best_goodput 2 "kvplan: command line: argument 'goodput' must be a fraction in (0, 1] (the share of requests meeting every target), got '1.5'" -- \
  best model=llama-3.1-8b rate=5 input=100 output=100 tpot_ms=30 goodput=1.5
expect best_tpot_negative 2 "kvplan: command line: argument 'tpot_ms' must be a number >= 0, got '-30'" -- \
  best model=llama-3.1-8b rate=5 input=100 output=100 tpot_ms=-30
expect best_gcd 0 "" -- best model=llama-3.1-8b context=8k concurrency=8
check "best over all GPUs plans the MI250X as one GCD" sh -c "grep -q ',mi250x-gcd,' '$out/best_gcd.out' && ! grep -q ',mi250x,' '$out/best_gcd.out'"
expect best_module 2 "kvplan: command line: argument 'gpus': gpu 'mi250x' is a module the runtime shows as several devices; plan with 'mi250x-gcd' (AMD Instinct MI250X 128GB (OAM module, 2 GCDs))" -- \
  best model=llama-3.1-8b gpus=mi250x
# kvplan pareto: points of deployments x client concurrencies, the front marked
expect pareto_cmd 0 "kvplan pareto: 2 deployments, 21 simulations; 21 points, 11 on the front" -- \
  pareto model=llama-3.1-8b gpus=h100-sxm tp=1,2 input=1000 output=200 tpot_ms=20
check "pareto: a row a point, the SLA columns, every row meeting TPOT p90 <= 20 ms marked" sh -c "
  head -n 1 '$out/pareto_cmd.out' | grep -q '^gpu,tp,pp,gpus,weights,kv,concurrency,requests,tokens_per_s,tokens_per_s_gpu,tokens_per_s_user,.*,pareto,meets_sla,pareto_sla,why\$' &&
  [ \$(wc -l < '$out/pareto_cmd.out') -eq 22 ] &&
  awk -F, 'NR > 1 { if ((\$16 + 0 <= 20) != (\$21 == \"true\")) bad = 1; if (\$22 == \"true\" && \$20 != \"true\") bad = 1 } END { exit bad }' '$out/pareto_cmd.out'"
expect pareto_front_only 0 "" -- --quiet pareto model=llama-3.1-8b gpus=h100-sxm tp=1,2 input=1000 output=200 front=true concurrency=1,64
check "pareto front=true: only rows on the front, no SLA columns without a target" sh -c "
  head -n 1 '$out/pareto_front_only.out' | grep -q ',pareto\$' && [ \$(wc -l < '$out/pareto_front_only.out') -ge 2 ] &&
  ! tail -n +2 '$out/pareto_front_only.out' | grep -qv ',true\$'"
expect pareto_input_zero 2 "kvplan: command line: argument 'input' must be an integer >= 1 (prompt tokens), got '0'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=0 output=200
expect pareto_output_one 2 "kvplan: command line: argument 'output' must be an integer >= 2 (TPOT is the time between output tokens), got '1'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=1
expect pareto_no_input 2 "kvplan: command line: argument 'input' is required (tokens per request, e.g. input=1000)" -- \
  pareto model=llama-3.1-8b gpus=h100 output=200
expect pareto_tpot_negative 2 "kvplan: command line: argument 'tpot_ms' must be a number >= 0, got '-1'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 tpot_ms=-1
expect pareto_percentile 2 "kvplan: command line: argument 'percentile' must be p50, p90 or p99, got 'p95'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 percentile=p95
expect pareto_unknown_gpu 2 "kvplan: command line: argument 'gpus': unknown gpu 'h100x' (did you mean 'h100-sxm' (alias 'h100'), 'a100-sxm-80gb' (alias 'a100'), 'h200'?)" -- \
  pareto model=llama-3.1-8b gpus=h100x input=1000 output=200
expect pareto_concurrency_zero 2 "kvplan: command line: argument 'concurrency' must be integers >= 1, got '0'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 concurrency=4,0
expect pareto_chart_ext 2 "kvplan: command line: argument 'chart' must name a .png or .svg file, got 'x.gif'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 chart=x.gif
expect pareto_max_model_len 2 "kvplan: command line: argument 'max_model_len' must hold input + output = 1200 tokens, got '1000'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 max_model_len=1000
expect pareto_bad_seqs 2 "kvplan: command line: argument 'max_num_seqs' must be an integer >= 1, got 0" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 max_num_seqs=0
# a deployment field reaches the deployments: vLLM's max-num-seqs caps the ladder
expect pareto_seqs 0 "kvplan pareto: 1 deployment, 7 simulations; 7 points, 7 on the front" -- \
  pareto model=llama-3.1-8b gpus=h100 tp=1 input=1000 output=200 max-num-seqs=64
check "pareto max-num-seqs=64: the ladder ends at 64" sh -c "tail -n 1 '$out/pareto_seqs.out' | grep -q '^h100-sxm,1,1,1,bf16,bf16,64,512,'"
expect pareto_goodput 2 "kvplan: command line: argument 'goodput' must be a fraction in (0, 1] (the share of requests meeting every target), got '1.5'" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 tpot_ms=20 goodput=1.5
expect pareto_goodput_alone 2 "kvplan: command line: argument 'goodput' needs a target: tpot_ms, ttft_ms or e2e_ms" -- \
  pareto model=llama-3.1-8b gpus=h100 input=1000 output=200 goodput=0.9
# kvplan best ... pareto=yes: the same code, the same report
expect best_pareto 0 "kvplan pareto: 2 deployments, 21 simulations; 21 points, 11 on the front" -- \
  best model=llama-3.1-8b gpus=h100-sxm tp=1,2 input=1000 output=200 tpot_ms=20 pareto=yes
check "best pareto=yes prints kvplan pareto's report" cmp -s "$out/best_pareto.out" "$out/pareto_cmd.out"
expect best_pareto_rate 2 "kvplan: command line: argument 'rate' is not for pareto=yes (its points are deployments x client concurrencies; kvplan pareto --help)" -- \
  best model=llama-3.1-8b gpus=h100-sxm input=1000 output=200 rate=3 pareto=yes
expect best_pareto_no_input 2 "kvplan: command line: argument 'input' is required (tokens per request, e.g. input=1000)" -- \
  best model=llama-3.1-8b gpus=h100-sxm output=200 pareto=yes
expect best_chart_alone 2 "kvplan: command line: argument 'chart' goes with pareto=yes" -- \
  best model=llama-3.1-8b gpus=h100-sxm context=8k chart=x.png
expect pareto_none_fits 1 "kvplan: no deployment of llama-3.1-70b with at most 8 GPUs holds one request of 1200 tokens and starts: l4 tp 1: weights need 131.4 GiB per GPU, 20.2 GiB usable" -- \
  pareto model=llama-3.1-70b gpus=l4 tp=1 input=1000 output=200
# kvplan ledger: the items of one GPU add up to its memory
expect ledger_cmd 0 "" -- ledger model=llama-3.1-70b gpu=h100-sxm,l40s tp=4,8 pp=1,3 kv=bf16 context=32k concurrency=64
check "ledger: weights, kv_used, kv_free, activation, overhead, margin add up to the GPU" sh -c "
  '$kvplan' -e \"local kv = require 'kvplan'
    local rows = require('kvplan.csv').read('$out/ledger_cmd.out')
    local sum, n = {}, 0
    for i = 2, #rows do
      local r = rows[i]
      if r[10] ~= 'kv_short' then sum[r[1]] = (sum[r[1]] or 0) + tonumber(r[11]) end
    end
    for dep, s in pairs(sum) do
      n = n + 1
      local g = kv.gpu(dep:match('^(%S+)')).visible_bytes / 2^30
      assert(math.abs(s - g) < 0.05, dep .. ': ' .. s .. ' vs ' .. g)
    end
    assert(n == 8, n)\""
check "ledger: a deployment that does not fit says by how much" grep -q ',kv_short,[0-9.]*,[0-9.]*,"does not fit: KV for 64 x 32000 tokens needs' "$out/ledger_cmd.out"
# one verdict (engine/core/starts.c kvp_verdict): Llama-3.1-8B on one L4 holds 2048-token
# requests, but vLLM refuses its 131072-token max_model_len; ledger, fit and capacity
# (max_num_seqs capping the count too) all say so, in the same words
expect verdict_ledger 0 "" -- ledger model=llama-3.1-8b gpu=l4 context=2048
expect verdict_fit 0 "" -- fit model=llama-3.1-8b gpus=l4 tp=1 context=2048
expect verdict_capacity 0 "" -- capacity model=llama-3.1-8b gpus=l4 kv=auto context=16 engine=vllm
check "ledger, fit and capacity agree: vLLM refuses to start" sh -c "
  '$kvplan' -e \"local csv = require 'kvplan.csv'
    local function row(f, want)
      local rows = csv.read('$out/' .. f .. '.out')
      local h, r = {}, rows[#rows]
      for j, n in ipairs(rows[1]) do h[n] = r[j] end
      if want then assert(h.item == want, f) end
      return h
    end
    local fit, ledger, cap = row('verdict_fit'), row('verdict_ledger', 'kv_short'), row('verdict_capacity')
    assert(fit.fits == 'false' and fit.limit == 'starts', fit.limit)
    assert(fit.why:find('vLLM refuses to start: one request of max_model_len 131072 tokens', 1, true) == 1, fit.why)
    assert(ledger.note == fit.why, ledger.note)
    assert(cap.limit == 'starts' and cap.why == fit.why and cap.max_concurrency == '256', cap.limit)\""
# time=yes / price_per_hour add the step-time columns after the memory ones, the same
# numbers d:time gives; without them the columns are the memory ones only
expect ledger_time 0 "" -- ledger model=llama-3.1-8b gpu=h100-sxm,l4 context=4096 concurrency=16 price_per_hour=2
expect fit_time 0 "" -- fit model=llama-3.1-8b gpus=h100-sxm tp=1,2 context=4096 concurrency=16 time=yes
check "ledger, fit: time columns equal d:time at (context, concurrency)" sh -c "
  '$kvplan' -e \"local kv = require 'kvplan'
    local csv = require 'kvplan.csv'
    for _, f in ipairs{'$out/ledger_time.out', '$out/fit_time.out'} do
      local rows = csv.read(f)
      local h = {}
      for j, n in ipairs(rows[1]) do h[n] = j end
      assert(h.tpot_ms and h.usd_per_mtok == #rows[1], f)
      for i = 2, #rows do
        local r = rows[i]
        local d = kv.deploy{model = 'llama-3.1-8b', gpu = r[h.gpu], tp = tonumber(r[h.tp]),
                            price_per_hour = f:find('ledger') and 2 or nil}
        local t = d:time(4096, 16)
        assert(math.abs(tonumber(r[h.tpot_ms]) - t.tpot_ms) < 1e-3, f .. ' tpot ' .. i)
        assert(math.abs(tonumber(r[h.tokens_per_s]) - t.tokens_per_s) < 0.1, f .. ' tok/s ' .. i)
        assert(r[h.bound] == t.bound, f .. ' bound ' .. i)
        if f:find('ledger') then
          assert(math.abs(tonumber(r[h.usd_per_mtok]) - t.usd_per_mtok) < 1e-4, f .. ' usd ' .. i)
        end
      end
    end\""
check "ledger without time has no time columns" sh -c "! grep -q tpot_ms '$out/ledger_cmd.out'"
# charts by gnuplot: PNGs of the requested size with a picture in them
blank() { # blank.png of W x H: the same terminal with nothing drawn
  gnuplot -e "set terminal pngcairo size $1,$2; set output '$out/blank_$1x$2.png'; unset border; unset tics; unset key; plot [0:1][0:1] NaN"
}
if command -v gnuplot >/dev/null 2>&1; then
  blank 900 500; blank 800 500; blank 640 400
  rm -f "$out/cap.png" "$out/ledger.png" "$out/bars.png" "$out/bars.svg"
  expect plot_capacity 0 "" -- examples/capacity_curve.lua chart="$out/cap.png"
  expect png_capacity 0 "" -- tests/cli/png_check.lua path="$out/cap.png" width=800 height=500 blank="$out/blank_800x500.png"
  # axes by the quantity: the README's capacity chart from kvplan plot alone has
  # both axes logarithmic (1K..128K tokens, 411 requests down to 1), the
  # registry's labels and the question as its title
  "$kvplan" --quiet examples/capacity_curve.lua -o "$out/cap_curve.csv"
  expect plot_curve_svg 0 "" -- plot "$out/cap_curve.csv" x=context y=max_concurrency by=series -o "$out/curve.svg"
  check "plot_curve_svg: labels with units, the title from the data, log axes" sh -c "
    grep -q '>context (tokens)<' '$out/curve.svg' && grep -q '>max concurrency (requests)<' '$out/curve.svg' &&
    grep -q '>Llama-3.1-8B: max concurrency vs context<' '$out/curve.svg' &&
    grep -q '> 10000<' '$out/curve.svg' && ! grep -q '> 20000<' '$out/curve.svg'"
  expect plot_linear_svg 0 "" -- plot "$out/cap_curve.csv" x=context y=max_concurrency by=series logx=no logy=no title=T -o "$out/linear.svg"
  check "plot_linear_svg: logx=no draws a linear x axis, title= the title" sh -c "
    grep -q '> 20000<' '$out/linear.svg' && grep -q '>T<' '$out/linear.svg'"
  expect plot_bad_log 2 "kvplan: command line: argument 'logy' must be yes, no or auto (logarithmic where the data span two decades), got 'maybe'" -- \
    plot "$out/cap_curve.csv" x=context y=max_concurrency logy=maybe -o "$out/x.png"
  expect plot_ledger 0 "" -- examples/ledger_bars.lua chart="$out/ledger.png"
  # the README's Pareto chart (docs/pareto.png): the example draws it, the command the same way
  rm -f "$out/pareto.png" "$out/pareto_cmd.png" "$out/pareto.svg"
  expect plot_pareto 0 "" -- examples/pareto_front.lua chart="$out/pareto.png"
  expect png_pareto 0 "" -- tests/cli/png_check.lua path="$out/pareto.png" width=900 height=500 blank="$out/blank_900x500.png"
  expect plot_pareto_cmd 0 "" -- --quiet pareto model=llama-3.1-8b gpus=h100-sxm tp=1,2 input=1000 output=200 tpot_ms=20 chart="$out/pareto_cmd.png"
  expect png_pareto_cmd 0 "" -- tests/cli/png_check.lua path="$out/pareto_cmd.png" width=900 height=500 blank="$out/blank_900x500.png"
  expect plot_pareto_svg 0 "" -- --quiet pareto model=llama-3.1-8b gpus=h100-sxm tp=1 input=1000 output=200 tpot_ms=20 concurrency=1,8,64 chart="$out/pareto.svg"
  "$kvplan" --quiet pareto model=llama-3.1-8b gpus=h100-sxm tp=1 input=1000 output=200 concurrency=1,8,64 > "$out/pareto_report.csv"
  expect plot_scatter_cmd 0 "" -- plot "$out/pareto_report.csv" x=tokens_per_s_user y=tokens_per_s_gpu by=pareto kind=scatter lines=true vline=50 vline_title=SLA -o "$out/scatter.png" width=640 height=400
  expect png_scatter_cmd 0 "" -- tests/cli/png_check.lua path="$out/scatter.png" width=640 height=400 blank="$out/blank_640x400.png"
  expect plot_bad_vline 2 "kvplan: command line: argument 'vline' must be a finite number (the x of a vertical line), got 'x'" -- \
    plot "$out/pareto_report.csv" x=tokens_per_s_user y=tokens_per_s_gpu vline=x -o "$out/x.png"
  expect plot_vline_bar 1 "kvplan: field 'vline' goes with kind = \"line\" or \"scatter\"" -- \
    plot "$out/pareto_report.csv" x=gpu y=tokens_per_s_gpu kind=bar vline=3 -o "$out/x.png"
  expect plot_lines_line 1 "kvplan: field 'lines' goes with kind = \"scatter\"" -- \
    plot "$out/pareto_report.csv" x=tokens_per_s_user y=tokens_per_s_gpu lines=true -o "$out/x.png"
  check "plot_pareto_svg: the front, the points and the SLA line in the key" sh -c "grep -q '<svg' '$out/pareto.svg' && grep -q 'Pareto front' '$out/pareto.svg' && grep -q 'h100-sxm tp 1' '$out/pareto.svg' && grep -q 'SLA: TPOT p90 &lt;= 20 ms' '$out/pareto.svg'"
  expect png_ledger 0 "" -- tests/cli/png_check.lua path="$out/ledger.png" width=900 height=500 blank="$out/blank_900x500.png"
  "$kvplan" capacity model=llama-3.1-8b gpus=h100,l40s kv=bf16,fp8 > "$out/cap_report.csv"
  expect plot_cmd 0 "" -- plot "$out/cap_report.csv" x=gpu y=max_concurrency by=kv kind=bar -o "$out/bars.png" width=640 height=400
  expect png_cmd 0 "" -- tests/cli/png_check.lua path="$out/bars.png" width=640 height=400 blank="$out/blank_640x400.png"
  expect plot_svg 0 "" -- plot "$out/cap_report.csv" x=gpu y=kv_tokens by=kv kind=bar width=640 height=400 -o "$out/bars.svg"
  check "plot_svg: an SVG of the requested size" sh -c "grep -q '<svg' '$out/bars.svg' && grep -q 'width=\"640\"' '$out/bars.svg' && grep -q 'height=\"400\"' '$out/bars.svg'"
  expect plot_bad_column 1 "kvplan: $out/cap_report.csv has no column 'max_conc' (did you mean 'max_concurrency'?)" -- \
    plot "$out/cap_report.csv" x=gpu y=max_conc -o "$out/x.png"
  expect plot_bad_ext 1 "kvplan: field 'output' must name a .png or .svg file, got '$out/x.gif'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency -o "$out/x.gif"
  expect plot_no_o 2 "kvplan: command line: kvplan plot needs -o CHART.png or -o CHART.svg" -- plot "$out/cap_report.csv" x=gpu y=max_concurrency
  # (brief hostile3) a kind kv.plot has not was its field error, status 1
  expect plot_kind_bad 2 "kvplan: command line: argument 'kind' must be line, scatter, bar or stacked, got 'pie'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency kind=pie -o "$out/pie.svg"
  expect plot_vline_hex 2 "kvplan: command line: argument 'vline' must be a finite number (the x of a vertical line), got '0x10'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency vline=0x10 -o "$out/vline.svg"
  expect plot_line_text 1 "kvplan: $out/cap_report.csv:2: column 'gpu' holds 'h100-sxm', not a number" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency -o "$out/x.png"
  # a command's own key=value arguments are usage errors too (exit 1 before)
  expect plot_bad_width 2 "kvplan: command line: argument 'width' must be an integer, got '0.5'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency width=0.5 -o "$out/x.png"
  # its bounds too, named: width=-1 said ">= 0", width=0 ">= 16" as kv.plot's
  # error (status 1), width=100000 "field 'width'" (status 1)
  expect plot_width_minus1 2 "kvplan: command line: argument 'width' must be an integer >= 16, got '-1'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency width=-1 -o "$out/x.png"
  expect plot_height_zero 2 "kvplan: command line: argument 'height' must be an integer >= 16, got '0'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency height=0 -o "$out/x.png"
  expect plot_width_huge 2 "kvplan: command line: argument 'width' must be an integer of at most 8192 pixels, got '100000'" -- \
    plot "$out/cap_report.csv" x=gpu y=max_concurrency width=100000 -o "$out/x.png"
  # bars that add up past the largest double: 'set yrange [0:inf]' reached gnuplot (found by fuzz_plot)
  printf 'x,y\na,1e308\na,1e308\n' > "$out/inf.csv"
  expect plot_bars_inf 1 "kvplan: $out/inf.csv: the bars of column 'y' add up past the largest number (1.8e308): a chart cannot scale them" -- \
    plot "$out/inf.csv" x=x y=y kind=bar -o "$out/x.png"
  expect plot_sandbox 1 "kvplan: cannot draw '$out/x.png': charts run gnuplot, a separate program, which --sandbox forbids" -- \
    --sandbox plot "$out/cap_report.csv" x=gpu y=max_concurrency kind=bar -o "$out/x.png"
  check "failed plots leave no file" sh -c "! ls '$out' | grep -q '^x\\.'"
else
  fail=$((fail + 1)); echo "FAIL cli plots: gnuplot missing (make deps installs gnuplot-nox)"
fi
# per-GPU columns say so: ready scripts, ledger rows, sweep columns by those names
check "per-GPU column names" sh -c "
  '$kvplan' fit model=llama-3.1-8b gpus=l4 | head -n 1 | grep -q ',weights_gib_per_gpu,kv_budget_gib_per_gpu,' &&
  '$kvplan' capacity model=llama-3.1-8b gpus=l4 | head -n 1 | grep -q ',kv_bytes_per_token_per_gpu,weights_gib_per_gpu,kv_budget_gib_per_gpu,' &&
  '$kvplan' | head -n 1 | grep -q ',weights_gib_per_gpu,activation_gib_per_gpu,overhead_gib_per_gpu,kv_budget_gib_per_gpu,kv_bytes_per_token_per_gpu,' &&
  '$kvplan' -e \"require('kvplan').sweep{model = 'llama-3.1-8b', gpu = 'l4', columns = {'weights_gib_per_gpu', 'weights_gib', 'kv_bytes_per_token_per_gpu'}}:write()\" | cmp -s - tests/cli/per_gpu_sweep.csv"
# sweeps: Lua column precision, row.kv_bytes_per_token, optimization columns
expect sweep_columns 0 "" -- tests/cli/sweep_columns.lua
expect sweep_precision_range 1 "kvplan: (command line):1: precision of column 'x' must be 0..17, got 18" -- \
  -e "require('kvplan').sweep{model = 'llama-3.1-8b', gpu = 'l4', columns = {{'x', function() return 1 end, precision = 18}}}"
# the catalogs listed by commands
expect models_cmd 0 "" -- models llama-3.1
check "models_cmd lists the matching models" [ "$(cut -d, -f1 "$out/models_cmd.out" | tr '\n' ' ')" = "model llama-3.1-8b llama-3.1-70b llama-3.1-405b " ]
check "models_cmd gives KV bytes per token" grep -q '^llama-3.1-70b,llama,gqa,70.55,70.55,80,64,8,128,bf16,131072,bf16,327680,327680,131.42,' "$out/models_cmd.out"
expect models_mla 0 "" -- models deepseek-v3
check "models_mla marks MLA and MoE" grep -q '^deepseek-v3,deepseek_v3,mla moe:8x256,' "$out/models_mla.out"
expect gpus_cmd 0 "" -- gpus "H100 80GB"
check "gpus_cmd finds h100-sxm by its alias" grep -q '^h100-sxm,NVIDIA H100 SXM5 80GB,nvidia,80 GB,79.19,' "$out/gpus_cmd.out"
expect gpus_module 0 "" -- gpus mi250x
check "gpus_cmd: the MI250X module says to plan with a GCD" grep -q '^mi250x,.*,mi250x-gcd,' "$out/gpus_module.out"
expect gpus_none 1 "kvplan: no GPU matches 'zzz' (try 'kvplan gpus')" -- gpus zzz
expect models_bad_arg 2 "kvplan: command line: unknown argument 'foo'" -- models llama foo=1
check "gpus_none writes nothing" [ ! -s "$out/gpus_none.out" ]
expect module_deploy 1 "kvplan: (command line):1: gpu 'mi250x' is a module the runtime shows as several devices; plan with 'mi250x-gcd' (AMD Instinct MI250X 128GB (OAM module, 2 GCDs))" -- \
  -e "require('kvplan').deploy{model = 'llama-3.1-8b', gpu = 'mi250x'}"
expect all_plannable 0 "" -- -e "for _, g in ipairs(require('kvplan').gpus.all()) do io.write(g.id, ' ') end"
check "all GPUs: the MI250X GCD, not the module" sh -c "grep -q ' mi250x-gcd ' '$out/all_plannable.out' && ! grep -q ' mi250x ' '$out/all_plannable.out'"
# merge joins JSON Lines parts too (no header), and refuses a mix
for k in 1 2 3; do "$kvplan" --quiet --shard $k/3 tests/batch/sweep.lua -o "$out/jpart$k.jsonl" || exit 1; done
"$kvplan" --quiet tests/batch/sweep.lua -o "$out/jwhole.jsonl"
expect merge_json 0 "" -- merge -o "$out/jall.jsonl" "$out/jpart1.jsonl" "$out/jpart2.jsonl" "$out/jpart3.jsonl"
check "merge_json: the parts joined equal the whole sweep" cmp -s "$out/jall.jsonl" "$out/jwhole.jsonl"
expect merge_mixed 1 "kvplan: '$out/whole.csv' is CSV but '$out/jpart1.jsonl' is JSON Lines: merge parts of one format" -- \
  merge -o "$out/jmix.jsonl" "$out/jpart1.jsonl" "$out/whole.csv"
# a part without line ends stops at merge's bound on a line (16 MiB), not
# at the machine's memory: /dev/zero as a header, then as a row
printf 'a,b\n1,2\n' > "$out/mp1.csv"
rm -f "$out/mz.csv"
timeout 10 "$kvplan" merge -o "$out/mz.csv" "$out/mp1.csv" /dev/zero 2> "$out/merge_zero.err"
rc=$?
check "merge_zero: /dev/zero refused at line 1" sh -c "[ $rc -eq 1 ] && [ ! -e '$out/mz.csv' ] &&
  [ \"\$(cat '$out/merge_zero.err')\" = 'kvplan: /dev/zero:1: a line longer than 16777216 bytes (merge reads lines of at most 16 MiB)' ]"
{ printf 'a,b\n3,4\n'; head -c 17000000 /dev/zero; } |
  timeout 10 "$kvplan" merge -o "$out/mz.csv" "$out/mp1.csv" /dev/stdin 2> "$out/merge_row.err"
check "merge_zero: a row past the bound refused at its line" sh -c "[ ! -e '$out/mz.csv' ] &&
  [ \"\$(cat '$out/merge_row.err')\" = 'kvplan: /dev/stdin:3: a line longer than 16777216 bytes (merge reads lines of at most 16 MiB)' ]"
# validate streams a log in constant memory: /dev/zero stops at the bound on a
# line (1 MiB) under a 64 MB memory limit (it read until memory ran out)
timeout 10 "$kvplan" --max-memory 64M validate /dev/zero > /dev/null 2> "$out/validate_zero.err"
rc=$?
check "validate_zero: /dev/zero refused at line 1" sh -c "[ $rc -eq 1 ] &&
  [ \"\$(cat '$out/validate_zero.err')\" = 'kvplan: /dev/zero:1: a line longer than 1048576 bytes (a startup log'\\''s lines are short)' ]"
# the README's GNU parallel and Slurm recipes, run as written
bindir=$(cd "$(dirname "$kvplan")" && pwd)
rdir="$out/recipes"; rm -rf "$rdir"; mkdir -p "$rdir"; ln -s "$(pwd)/examples" "$rdir/examples"
par=$(grep -E '^    parallel kvplan ' README.md | sed 's/^    //')
merge=$(grep -E '^    kvplan merge -o all.csv part1.csv' README.md | sed 's/^    //')
slurm=$(grep -E '^    kvplan .*SLURM_ARRAY_TASK_ID' README.md | sed 's/^    //')
smerge=$(grep -E '^    # then: kvplan merge' README.md | sed 's/^    # then: //')
if command -v parallel >/dev/null 2>&1 && [ -n "$par" ] && [ -n "$merge" ] && [ -n "$slurm" ] && [ -n "$smerge" ]; then
  (cd "$rdir" && PATH="$bindir:$PATH" && "$bindir/kvplan" --quiet examples/capacity_sweep.lua > whole.csv &&
   sh -c "$par" < /dev/null && sh -c "$merge" && mv all.csv parallel.csv && rm part*.csv &&
   for i in 1 2 3 4 5 6 7 8; do SLURM_ARRAY_TASK_ID=$i sh -c "$slurm" || exit 1; done &&
   sh -c "$smerge") > "$out/recipes.log" 2>&1
  check "README parallel recipe" cmp -s "$rdir/whole.csv" "$rdir/parallel.csv"
  check "README Slurm recipe" cmp -s "$rdir/whole.csv" "$rdir/all.csv"
  check "README recipes: a sweep of more rows than shards" [ "$(wc -l < "$rdir/whole.csv")" -gt 1000 ]
else
  fail=$((fail + 1)); echo "FAIL cli README recipes: GNU parallel missing (make deps) or recipe not found in README.md"
fi
# kvplan calibrate: a good run writes the profile, which another command applies;
# each bad input names the file (line, key), the value and what was expected
cf=tests/fixtures/calibrate
cdep="model=mistral-7b-v0.3 gpu=rtx-4090 max_num_seqs=256 max_num_batched_tokens=2048"
rm -f "$out/profile.json"
expect calibrate_good 0 "" -- calibrate $cf/vllm_serve_c4.json $cf/benchmark_serving_c8.json \
  $cf/sglang_c16_c32.jsonl $cf/plain.csv $cdep -o "$out/profile.json"
check "calibrate_good: factors, errors and the profile" sh -c "grep -q '^memory (fraction) ' '$out/calibrate_good.out' &&
  grep -q '^link (fraction) .*not fitted: tp 1 x pp 1: no collectives' '$out/calibrate_good.out' &&
  grep -q '^median |error|: fit: throughput ' '$out/calibrate_good.out' &&
  grep -q '\"kvplan_profile\": 1' '$out/profile.json'"
expect calibrate_profile_applied 0 "" -- ledger model=mistral-7b-v0.3 gpu=rtx-4090 context=2048 concurrency=16 \
  time=yes profile="$out/profile.json"
check "calibrate_profile_applied: other step times than the defaults" sh -c "\"$kvplan\" ledger model=mistral-7b-v0.3 \
  gpu=rtx-4090 context=2048 concurrency=16 time=yes > '$out/ledger_default.out' &&
  ! cmp -s '$out/ledger_default.out' '$out/calibrate_profile_applied.out'"
at=$(grep -n 'local d = kv.deploy(o)' scripts/ledger.lua | cut -d: -f1) # the line that deploys
expect calibrate_profile_other_gpu 1 "kvplan: $KVPLAN_SCRIPTS/ledger.lua:$at: profile '$out/profile.json' was fitted on gpu 'rtx-4090', this deployment runs on 'h100-sxm' (profile_any = true applies it anyway)" -- \
  ledger model=mistral-7b-v0.3 gpu=h100 profile="$out/profile.json"
expect calibrate_profile_missing 2 "kvplan: command line: argument 'profile': cannot read profile '$out/none.json': $out/none.json: No such file or directory" -- \
  fit model=mistral-7b-v0.3 profile="$out/none.json"
expect calibrate_missing_file 1 "kvplan: cannot read result file '$cf/none.json': $cf/none.json: No such file or directory" -- \
  calibrate $cf/none.json $cdep
expect calibrate_wrong_format 1 "kvplan: $cf/bad/unknown.json: not a benchmark result kvplan reads (keys 'hello', 'world'; expected a result of vllm bench serve --save-result or benchmark_serving.py (JSON), SGLang bench_serving (JSON Lines), trtllm-bench --report_json (JSON), or a CSV with columns input_len,output_len,output_tok_s[,concurrency|rate,requests,mean_ttft_ms,mean_tpot_ms])" -- \
  calibrate $cf/bad/unknown.json $cdep
expect calibrate_bad_key 1 "kvplan: $cf/bad/bad_type.json: key 'output_throughput' is 'fast' (expected output tokens a second > 0)" -- \
  calibrate $cf/bad/bad_type.json $cdep
expect calibrate_bad_cell 1 "kvplan: $cf/bad/bad_cell.csv:3: column 'output_len' is 'abc' (expected tokens, an integer >= 1)" -- \
  calibrate $cf/bad/bad_cell.csv $cdep
expect calibrate_unknown_arg 1 "kvplan: unknown argument 'tpp' (did you mean 'pp', 'tp', 'gpu'?)" -- \
  calibrate $cf/plain.csv $cdep tpp=2
expect calibrate_unknown_factor 1 "kvplan: field 'factors': unknown factor 'memry' (known: memory, compute, experts, link, launch_us, seq_host_us, step_overhead_ms, request_ms, api_ms, link_latency_us) (did you mean 'memory'?)" -- \
  calibrate $cf/plain.csv $cdep factors=memry
printf 'input_len,output_len,concurrency,requests,output_tok_s\n16,64,1,50,5000\n' > "$out/too_fast.csv"
expect calibrate_at_bound 0 "" -- calibrate "$out/too_fast.csv" $cdep factors=memory
check "calibrate_at_bound: memory reported at its upper bound" \
  grep -q '^memory (fraction) .*at its upper bound 1: the results ask for more than the box allows' "$out/calibrate_at_bound.out"
expect simulate_range 0 "" -- simulate model=mistral-7b-v0.3 gpu=rtx-4090 requests=20 range=yes -f csv
check "simulate_range: the range columns" grep -q ',steps,throughput_tokens_s_lo,throughput_tokens_s_hi,ttft_ms_p50_lo,ttft_ms_p50_hi,tpot_ms_p50_lo,tpot_ms_p50_hi$' "$out/simulate_range.out"
expect ledger_range 0 "" -- ledger model=mistral-7b-v0.3 gpu=rtx-4090 context=2048 concurrency=16 time=yes range=yes -f csv
check "ledger_range: the range columns" grep -q ',usd_per_mtok,tokens_per_s_lo,tokens_per_s_hi,tpot_ms_lo,tpot_ms_hi,ttft_ms_lo,ttft_ms_hi$' "$out/ledger_range.out"
expect calibrate_help 0 "" -- calibrate --help
check "calibrate_help: the command's own text" grep -q '^usage: kvplan calibrate RESULT' "$out/calibrate_help.out"
# kvplan launch (scripts/launch.lua, kv.launch): the command of a deployment
# that starts; bad input named; a deployment that would not start refused
expect launch_vllm 0 "" -- launch model=llama-3.1-70b gpu=h100-sxm tp=4 kv=fp8
check "launch_vllm: the vllm serve line and its flags" sh -c "
  grep -qx 'vllm serve meta-llama/Llama-3.1-70B \\\\' '$out/launch_vllm.out' &&
  grep -q -- '--tensor-parallel-size 4' '$out/launch_vllm.out' && grep -q -- '--kv-cache-dtype fp8' '$out/launch_vllm.out'"
expect launch_unknown_engine 2 "kvplan: command line: argument 'engine' must be vllm, sglang, trtllm or k8s, got 'vlm' (did you mean 'vllm'?)" -- \
  launch model=llama-3.1-70b gpu=h100-sxm tp=4 engine=vlm
expect launch_no_start 1 "kvplan: not launched: vLLM would not start: weights need 131.4 GiB per GPU, 72.9 GiB usable" -- \
  launch model=llama-3.1-70b gpu=h100-sxm tp=1
check "launch_no_start: nothing on stdout" test ! -s "$out/launch_no_start.out"
expect launch_sglang_no_start 1 "kvplan: not launched: SGLang would not start: SGLang refuses to start (\"Not enough memory. Please try to increase --mem-fraction-static.\"): mem_fraction_static 0.880 of 79.19 GiB leaves -62.15 GiB after 131.48 GiB of weights, no KV token of 327680 bytes" -- \
  launch model=llama-3.1-70b gpu=h100-sxm tp=1 engine=sglang
expect launch_bad_tp 2 "kvplan: command line: argument 'tp' must be an integer >= 1, got 0" -- \
  launch model=llama-3.1-70b gpu=h100-sxm tp=0
expect launch_no_model 2 "kvplan: command line: argument 'model' is required, e.g. model=llama-3.1-70b" -- launch gpu=h100-sxm
expect launch_trtllm_amd 1 "kvplan: not launched: TensorRT-LLM runs on NVIDIA GPUs, not on mi300x (amd)" -- \
  launch model=llama-3.1-8b gpu=mi300x engine=trtllm
expect launch_help 0 "" -- launch --help
check "launch_help: the command's own text and the registry's fields" sh -c "
  grep -q '^usage: kvplan launch model=M gpu=G' '$out/launch_help.out' &&
  grep -q '^  max_num_seqs .*also max_running_requests, max_batch_size' '$out/launch_help.out'"
# the round trip: a printed command's flags, written key=value (the engines'
# own names), give the same command again
# launch_args FILE ENGINE: the key=value words of the command in FILE (its
# flags under the engine's own names, the GPU from its comment)
launch_args() {
  skip=3; [ "$2" = sglang ] && skip=4
  sed -n 's/^# kvplan [a-z0-9]* gpu=\([^ :]*\).*/gpu=\1/p' "$1"
  grep -v '^#' "$1" | tr '\\\n' '  ' | awk -v skip="$skip" '{
    if (skip == 4) printf "model_path=%s ", $5; else printf "model=%s ", $3
    for (i = (skip == 4 ? 6 : 4); i <= NF; i += 2) { sub(/^--/, "", $i); printf "%s=%s ", $i, $(i + 1) } }'
}
launch_round() { # NAME ENGINE ARGS...: the printed flags fed back print the same text
  name=$1; engine=$2; shift 2
  "$kvplan" launch engine="$engine" "$@" > "$out/$name.a" 2> "$out/$name.err"
  # shellcheck disable=SC2046
  if "$kvplan" launch engine="$engine" $(launch_args "$out/$name.a" "$engine") > "$out/$name.b" 2>> "$out/$name.err" &&
     [ -s "$out/$name.a" ] && cmp -s "$out/$name.a" "$out/$name.b"; then
    pass=$((pass + 1)); echo "ok   cli $name"
  else fail=$((fail + 1)); echo "FAIL cli $name: $(head -n 1 "$out/$name.err")"; fi
}
launch_round launch_round_vllm vllm model=llama-3.1-70b gpu=h100-sxm tp=4 kv=fp8 max_model_len=32k max_num_seqs=128
launch_round launch_round_vllm_h200 vllm model=llama-3.1-70b gpu=h200 tp=2 pp=2 utilization=0.85 block=32
launch_round launch_round_sglang sglang model=llama-3.1-70b gpu=h100-sxm tp=4 kv=fp8
launch_round launch_round_sglang_l40s sglang model=llama-3.1-8b gpu=l40s max_model_len=32768 utilization=0.8
# kvplan best emit=: the ranked table, then the winner's command, whose flags
# (vLLM's names) given back to kvplan launch give the same deployment: the
# same text, its comment the same KV tokens, blocks and concurrency
expect best_emit_vllm 0 "" -- best model=llama-3.1-70b input=2048 output=256 rate=20 ttft_ms=2000 tpot_ms=50 \
  percentile=p90 gpus=h100-sxm,h200,mi300x emit=vllm --quiet
sed -n '/^# kvplan vllm /,$p' "$out/best_emit_vllm.out" > "$out/best_emit_vllm.cmd"
expect best_emit_html 2 "kvplan: command line: argument 'emit' writes the launch command after the report, which is an HTML page on standard output; write the page to a file (-o FILE.html) and the command comes to standard output" -- \
  best model=llama-3.1-8b input=1000 output=200 rate=5 ttft_ms=2000 tpot_ms=50 gpus=h100-sxm emit=vllm -f html --quiet
expect best_emit_html_file 0 "" -- best model=llama-3.1-8b input=1000 output=200 rate=5 ttft_ms=2000 tpot_ms=50 \
  gpus=h100-sxm emit=vllm -o "$out/best_emit.html" --quiet
check "best emit= -o page.html: the page whole, the command on standard output" sh -c "
  tail -c 8 '$out/best_emit.html' | grep -q '</html>' && grep -q '^vllm serve ' '$out/best_emit_html_file.out'"
check "best_emit_vllm: the ranked table, then a vllm serve line" sh -c "
  head -n 1 '$out/best_emit_vllm.out' | grep -q '^rank,gpu,tp,pp,replicas,gpus,rate_per_replica,binding,' &&
  grep -q '^1,' '$out/best_emit_vllm.out' && grep -q '^vllm serve meta-llama/Llama-3.1-70B ' '$out/best_emit_vllm.cmd' &&
  [ \$(grep -n '^1,' '$out/best_emit_vllm.out' | cut -d: -f1) -lt \$(grep -n '^vllm serve' '$out/best_emit_vllm.out' | cut -d: -f1) ]"
# shellcheck disable=SC2046
"$kvplan" launch engine=vllm $(launch_args "$out/best_emit_vllm.cmd" vllm) > "$out/best_emit_back.out" 2> "$out/best_emit_back.err"
check "best_emit_vllm: the emitted flags read back give the same ledger" \
  sh -c "[ -s '$out/best_emit_vllm.cmd' ] && cmp -s '$out/best_emit_vllm.cmd' '$out/best_emit_back.out'"
expect best_emit_bad 2 "kvplan: command line: argument 'emit' must be vllm, sglang, trtllm or k8s, got 'vlm' (did you mean 'vllm'?)" -- \
  best model=llama-3.1-70b context=8192 concurrency=8 gpus=h100-sxm emit=vlm
expect best_emit_memory 0 "" -- best model=llama-3.1-70b context=8192 concurrency=8 gpus=h100-sxm emit=k8s
check "best_emit_memory: the memory search's winner as a Deployment" sh -c "
  grep -q '^kind: Deployment' '$out/best_emit_memory.out' && grep -q 'nvidia.com/gpu: 3' '$out/best_emit_memory.out'"
expect best_emit_disagg 0 "" -- best model=llama-3.1-8b input=8000 output=200 rate=4 tpot_ms=20 gpus=h100-sxm tp=1,2 \
  modes=aggregated,disaggregated requests=100 emit=vllm --quiet
check "best_emit_disagg: a disaggregated winner, one vllm serve a pool with its KV role" sh -c "
  grep -q '^1,disaggregated,' '$out/best_emit_disagg.out' && [ \$(grep -c '^vllm serve ' '$out/best_emit_disagg.out') -eq 2 ] &&
  grep -q '^# prefill pool: ' '$out/best_emit_disagg.out' && grep -q 'kv_producer' '$out/best_emit_disagg.out' &&
  grep -q '^# decode pool: ' '$out/best_emit_disagg.out' && grep -q 'kv_consumer' '$out/best_emit_disagg.out'"
expect best_emit_none 1 "kvplan: not launched: no deployment serves, so there is none to launch" -- \
  best model=llama-3.1-405b context=131072 concurrency=64 gpus=l4 max_gpus=2 emit=vllm
# '-' is standard input wherever kvplan reads a file, one '-' a command line
# fed NAME FILE STATUS STDERR-LINE -- ARGS...: expect, with FILE as standard input
fed() {
  n=$1; input=$2; shift 2
  expect "$n" "$@"
  input=
}
printf 'local a = ...\nio.write("from stdin ", a.k, "\\n")\n' > "$out/stdin_script.lua"
fed stdin_script "$out/stdin_script.lua" 0 "" -- - k=v
check "stdin_script: kvplan - runs the script piped in" [ "$(cat "$out/stdin_script.out")" = "from stdin v" ]
printf 'local x = 1\nerror("stopped")\n' > "$out/stdin_error.lua"
fed stdin_error "$out/stdin_error.lua" 1 "kvplan: stdin:2: stopped" -- -
fed stdin_script_empty /dev/null 1 "kvplan: standard input ('-') is empty: 'kvplan -' runs the Lua script piped in" -- -
expect stdin_twice 2 "kvplan: 'prices=-' and 'trace=-' both read standard input ('-'), which can be read once: give one of them a file" -- \
  simulate model=llama-3.1-8b gpu=h100 prices=- trace=-
expect stdin_twice_manifest 2 "kvplan: '-m -' and 'x=-' both read standard input ('-'), which can be read once: give one of them a file" -- \
  batch -d "$out/stdin_batch" -m - x=-
expect stdin_words_after_dashes 0 "" -- -e "io.write(#{...})" -- - -
# validate -: a log piped in, read as a file is: the same rows
vlog=tests/validation/calib-vllm-10517-llama8b-3090-20k.log
"$kvplan" validate "$vlog" | cut -d, -f2- > "$out/stdin_validate.want"
fed stdin_validate "$vlog" 0 "" -- validate -
check "stdin_validate: the rows of the log read as a file" sh -c "
  cut -d, -f2- '$out/stdin_validate.out' | cmp -s - '$out/stdin_validate.want' && [ -s '$out/stdin_validate.want' ] &&
  sed -n 2p '$out/stdin_validate.out' | grep -q '^-,vllm,'"
fed stdin_validate_empty /dev/null 1 "kvplan: validate: standard input ('-') is empty: nothing was piped in" -- validate -
# ... streamed from a pipe in bounded memory: 64 MB of a server's access lines after
# the startup log, under --max-memory 24M (reading it whole does not fit there)
serving() {
  cat "$vlog"
  awk 'BEGIN { for (i = 0; i < 900000; i++) print "INFO:     127.0.0.1:" 40000 + i % 20000 " - \"POST /v1/chat/completions HTTP/1.1\" 200 OK" }'
}
serving | "$kvplan" --max-memory 24M validate - 2> "$out/stdin_pipe.err" | cut -d, -f2- > "$out/stdin_pipe.out"
check "stdin_pipe: validate - streams a 64 MB pipe in 24 MB, the startup log's rows" \
  cmp -s "$out/stdin_pipe.out" "$out/stdin_validate.want"
serving | "$kvplan" --max-memory 24M -e "local s = io.read('a')" 2> "$out/stdin_pipe_whole.err"
check "stdin_pipe: the 64 MB log read whole exceeds 24 MB (the bound is tight)" \
  grep -q '^kvplan: memory limit exceeded' "$out/stdin_pipe_whole.err"
# file-valued arguments: a CSV of prices, a trace, a plot's report, a merge part, a CSV catalog
prices_args="best model=qwen3-32b context=32k concurrency=32 rank=cost gpus=h100-sxm,a100-sxm-80gb"
# shellcheck disable=SC2086
"$kvplan" $prices_args prices=examples/prices.csv > "$out/stdin_prices.want"
# shellcheck disable=SC2086
fed stdin_prices examples/prices.csv 0 "" -- $prices_args prices=-
check "stdin_prices: prices=- reads the CSV piped in" sh -c "cmp -s '$out/stdin_prices.out' '$out/stdin_prices.want' && grep -q '^1,' '$out/stdin_prices.want'"
# shellcheck disable=SC2086
fed stdin_prices_empty /dev/null 2 "kvplan: command line: argument 'prices': standard input ('-') is empty: nothing was piped in" -- $prices_args prices=-
printf 'arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n1,300,5\n' > "$out/stdin_trace.csv"
"$kvplan" simulate model=llama-3.1-8b gpu=h100 trace="$out/stdin_trace.csv" > "$out/stdin_trace.want"
fed stdin_trace "$out/stdin_trace.csv" 0 "" -- simulate model=llama-3.1-8b gpu=h100 trace=-
check "stdin_trace: trace=- reads the trace piped in" sh -c "cmp -s '$out/stdin_trace.out' '$out/stdin_trace.want' && [ -s '$out/stdin_trace.want' ]"
fed stdin_trace_empty /dev/null 2 "kvplan: command line: argument 'trace': standard input ('-') is empty: nothing was piped in" -- \
  simulate model=llama-3.1-8b gpu=h100 trace=-
# kvplan calibrate - (a result file piped in: CSV or JSON) fits the factors the
# file gives, and profile=- applies a profile piped in, as a file does
cal="model=mistral-7b-v0.3 gpu=rtx-4090"
for r in plain.csv vllm_serve_c4.json; do
  n=stdin_calibrate_${r%%.*}
  "$kvplan" calibrate tests/fixtures/calibrate/$r $cal -o "$out/$n.want.json" > "$out/$n.want" 2> /dev/null
  fed $n tests/fixtures/calibrate/$r 0 "" -- calibrate - $cal -o "$out/$n.json"
  sed -n '1,/^result /p' "$out/$n.want" > "$out/$n.factors"
  check "$n: the result piped in fits the factors the file does" sh -c "
    sed -n '1,/^result /p' '$out/$n.out' | cmp -s - '$out/$n.factors' &&
    grep -q '^memory (fraction) ' '$out/$n.out' && grep -q '^standard input' '$out/$n.out' &&
    grep -q '\"value\"' '$out/$n.json'"
done
fed stdin_calibrate_empty /dev/null 1 "kvplan: cannot read result file: standard input ('-') is empty: nothing was piped in" -- \
  calibrate - $cal
"$kvplan" -q ledger $cal time=yes profile="$out/stdin_calibrate_plain.want.json" > "$out/stdin_profile.want"
fed stdin_profile "$out/stdin_calibrate_plain.want.json" 0 "" -- -q ledger $cal time=yes profile=-
check "stdin_profile: profile=- applies the profile piped in" sh -c "
  cmp -s '$out/stdin_profile.out' '$out/stdin_profile.want' && [ -s '$out/stdin_profile.want' ]"
fed stdin_profile_empty /dev/null 2 "kvplan: command line: argument 'profile': cannot read profile: standard input ('-') is empty: nothing was piped in" -- \
  ledger $cal profile=-
printf '{"a": 1}\n' > "$out/stdin_profile_bad.json"
fed stdin_profile_bad "$out/stdin_profile_bad.json" 2 "kvplan: command line: argument 'profile': standard input: not a kvplan profile (no key 'kvplan_profile'; \`kvplan calibrate ... -o profile.json\` writes one)" -- \
  ledger $cal profile=-
check "calibrate --help says a RESULT '-' reads standard input" sh -c "'$kvplan' calibrate --help | grep -q \"'-' reads standard input\""
"$kvplan" fit model=llama-3.1-8b gpus=l4,h100-sxm -f csv > "$out/stdin_part.csv"
fed stdin_merge "$out/stdin_part.csv" 0 "" -- merge -o "$out/stdin_merged.csv" - "$out/stdin_part.csv"
check "stdin_merge: a part piped in joins a part on disk" sh -c "
  [ \$(wc -l < '$out/stdin_merged.csv') -eq \$((2 * \$(wc -l < '$out/stdin_part.csv') - 1)) ]"
fed stdin_merge_empty /dev/null 1 "kvplan: standard input ('-') is empty: nothing was piped in" -- merge -o "$out/stdin_merged.csv" -
printf 'context,n\n1024,8\n2048,4\n' > "$out/stdin_plot.csv"
fed stdin_plot_empty /dev/null 1 "kvplan: standard input ('-') is empty: nothing was piped in" -- plot - x=context y=n -o "$out/stdin_plot.svg"
if command -v gnuplot > /dev/null 2>&1; then
  fed stdin_plot "$out/stdin_plot.csv" 0 "" -- plot - x=context y=n -o "$out/stdin_plot.svg"
  check "stdin_plot: the chart of the report piped in" grep -q '<svg' "$out/stdin_plot.svg"
fi
fed stdin_catalog tests/fixtures/csv/gpus.csv 0 "" -- -e "local kv = require 'kvplan'
  local added = kv.gpus.load_csv('-'); io.write(#added, ' ', kv.gpu(added[1].id).id)"
check "stdin_catalog: kv.gpus.load_csv('-') adds the GPUs piped in" grep -Eqx '[1-9][0-9]* [a-z0-9-]+' "$out/stdin_catalog.out"
# batch -m -: the manifest piped in
printf 'fit model=llama-3.1-8b gpus=l4\n' > "$out/stdin_manifest.txt"
rm -rf "$out/stdin_batch"
fed stdin_manifest "$out/stdin_manifest.txt" 0 "kvplan: batch: ok     $(cd scripts && pwd)/fit.lua" -- batch -d "$out/stdin_batch" -m -
check "stdin_manifest: the job of the manifest piped in wrote its report" grep -q '^llama-3.1-8b,l4,1,' "$out/stdin_batch/fit.csv"
fed stdin_manifest_empty /dev/null 2 "kvplan: batch: standard input ('-m -') is empty: nothing was piped in" -- batch -d "$out/stdin_batch" -m -
expect stdin_batch_script 2 "kvplan: batch: a script is a file ('-', standard input, is for the manifest: -m -)" -- batch -d "$out/stdin_batch" -
# kvplan validate --help: the keys it takes, from the field registry as the other
# commands list them, and what it reads from a log
expect validate_help 0 "" -- validate --help
check "validate_help lists its keys and what it reads from a log" sh -c "
  for k in model gpu tp pp version engine_version max_model_len utilization kv block summary config; do
    grep -q \"^  \$k  *[^ ]\" '$out/validate_help.out' || exit 1
  done
  grep -q '^  max_model_len .*also context_length, max_seq_len' '$out/validate_help.out' &&
  grep -q '^read from a log' '$out/validate_help.out' && grep -q 'GPU KV cache size: N tokens' '$out/validate_help.out'"
# NO_COLOR (https://no-color.org): kvplan colours nothing; on a terminal, with NO_COLOR
# unset and a colour TERM, no output holds an escape (ESC): tables, errors, help, progress
if command -v script > /dev/null 2>&1; then
  : > "$out/no_color.txt"
  for t in "fit model=llama-3.1-8b gpus=l4,h100" "ledger model=llama-3.1-8b gpu=l4" \
           "capacity model=qwen3-32b gpus=h100,l40s kv=bf16,fp8" "best model=llama-3.1-8b context=8k concurrency=8 gpus=l4" \
           "validate $vlog" "fit model=llama-3.1-70" "--help" "tests/bench/sweep.lua contexts=600"; do
    env -u NO_COLOR TERM=xterm-256color script -qec "$kvplan $t" /dev/null < /dev/null >> "$out/no_color.txt" 2>&1
  done
  check "no_color: outputs on a terminal hold no ESC" sh -c "
    grep -q 'did you mean' '$out/no_color.txt' && grep -q '^gpu' '$out/no_color.txt' &&
    ! LC_ALL=C grep -q \"\$(printf '\\033')\" '$out/no_color.txt'"
fi
# --columns a,b,c: a report's columns chosen and ordered, in every format and on a
# fitted terminal table; an unknown one names the report's columns and the nearest
"$kvplan" fit model=llama-3.1-8b gpus=l4,h100 -f csv | awk -F, '{ print $3 "," $2 "," $8 }' > "$out/columns.want"
expect columns_csv 0 "" -- fit model=llama-3.1-8b gpus=l4,h100 -f csv --columns tp,gpu,fits
check "columns_csv: the chosen columns in the order given" sh -c "
  cmp -s '$out/columns_csv.out' '$out/columns.want' && head -n 1 '$out/columns.want' | grep -qx 'tp,gpu,fits'"
expect columns_blanks 0 "" -- fit model=llama-3.1-8b gpus=l4,h100 -f csv "--columns= tp, gpu ,fits"
check "columns_blanks: blanks around the names dropped" cmp -s "$out/columns_blanks.out" "$out/columns.want"
expect columns_json 0 "" -- fit model=llama-3.1-8b gpus=l4 -f json --columns fits,tp
check "columns_json: one key a chosen column, in order" sh -c "head -n 1 '$out/columns_json.out' | grep -qx '{\"fits\":false,\"tp\":1}'"
expect columns_md 0 "" -- capacity model=qwen3-32b gpus=h100 -f markdown --columns kv_tokens,gpu
check "columns_md: a Markdown table of the chosen columns" sh -c "head -n 1 '$out/columns_md.out' | grep -Eq '^\\| *kv_tokens *\\| *gpu *\\|\$'"
expect columns_unknown 2 "kvplan: command line: --columns: unknown column 'tpp' (did you mean 'tp', 'gpu'?); the report's columns: model, gpu, tp, weights, kv, context, concurrency, fits, limit, max_concurrency, max_context, weights_gib_per_gpu, kv_budget_gib_per_gpu, why" -- \
  fit model=llama-3.1-8b gpus=l4 --columns gpu,tpp
check "columns_unknown: nothing written" test ! -s "$out/columns_unknown.out"
expect columns_twice 2 "kvplan: command line: --columns: column 'tp' given twice" -- fit model=llama-3.1-8b gpus=l4 --columns tp,gpu,tp
expect columns_empty 2 "kvplan: bad --columns 'tp,,gpu' (expected column names separated by commas, e.g. --columns gpu,tp,max_concurrency)" -- \
  fit model=llama-3.1-8b gpus=l4 --columns tp,,gpu
expect columns_not_merge 2 "kvplan: option '--columns' is not for 'merge' (try 'kvplan --help')" -- merge -o "$out/x.csv" --columns a "$out/columns.want"
# a sweep written by the core, and a report of the columns its rows fill
"$kvplan" tests/batch/sweep.lua -f csv | awk -F, '{ print $9 "," $3 }' > "$out/columns_sweep.want"
expect columns_sweep 0 "" -- tests/batch/sweep.lua -f csv --columns max_concurrency,tp
check "columns_sweep: the sweep's chosen columns" sh -c "cmp -s '$out/columns_sweep.out' '$out/columns_sweep.want' && [ \$(wc -l < '$out/columns_sweep.want') -gt 1000 ]"
expect columns_sweep_unknown 2 "kvplan: command line: --columns: unknown column 'fit' (did you mean 'fits'?); the report's columns: model, gpu, tp, kv, context, concurrency, kv_budget_gib, kv_bytes_per_token, max_concurrency, max_context, fits, limit, why" -- \
  tests/batch/sweep.lua --columns fit
expect columns_used 0 "" -- -f csv --columns c,a -e "local r = require('kvplan').report{columns = 'used', order = {'a', 'b', 'c'}}
  r:row{a = 1, c = 'x'}; r:row{a = 2, b = 5, c = 'y'}; r:close()"
check "columns_used: a report of the columns its rows fill" [ "$(cat "$out/columns_used.out")" = "c,a
x,1
y,2" ]
if command -v script > /dev/null 2>&1; then
  COLUMNS=80 script -qec "$kvplan -q best model=llama-3.1-70b context=32768 concurrency=64 gpus=h100-sxm kv=bf16 top=3 --columns why,rank,tp,pp,max_concurrency" \
    /dev/null < /dev/null | tr -d '\r' > "$out/columns_tty.out"
  check "columns_tty: a fitted table of the chosen columns in order, within 80 columns" sh -c "
    grep -Eq '^why +rank +tp +pp +max_concurrency\$' '$out/columns_tty.out' && grep -Eq '^best: fewest GPUs.* +1 +4 +3 +72\$' '$out/columns_tty.out' &&
    [ \$(LC_ALL=C.UTF-8 wc -L < '$out/columns_tty.out') -le 80 ]"
fi
# kvplan completion bash|zsh: the bash function run in bash as bash runs it (COMP_WORDS,
# COMP_CWORD), for a command, an option, a key, a value, a list's item, '=' split off
expect completion_bash 0 "" -- completion bash
# comp WORDS...: COMPREPLY for the last word, with '=' as bash splits it or not
cat > "$out/comp.bash" << EOF
. '$out/completion_bash.out'
comp() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _kvplan; echo "\${COMPREPLY[*]}"; }
comp kvplan fi
comp kvplan --quiet ca
comp kvplan fit max_model
comp kvplan fit --colu
comp kvplan simulate model=llama-3.1-7
comp kvplan simulate model = llama-3.1-7
comp kvplan fit gpus=h100-sxm,l4
comp kvplan capacity kv_cache_dtype=fp8_e
comp kvplan -f j
comp kvplan -f h
comp kvplan launch engine=s
comp kvplan completion z
EOF
bash "$out/comp.bash" > "$out/comp.out" 2>&1
check "completion_bash: command, options, keys, values (a list's item, '=' split, an engine's spelling)" [ "$(cat "$out/comp.out")" = "fit
capacity calibrate
max_model_len=
--columns
model=llama-3.1-70b
llama-3.1-70b
gpus=h100-sxm,l4 gpus=h100-sxm,l40 gpus=h100-sxm,l40s
kv_cache_dtype=fp8_e4m3 kv_cache_dtype=fp8_e5m2
json
html
engine=sglang
zsh" ]
expect completion_zsh 0 "" -- completion zsh
if command -v zsh > /dev/null 2>&1; then
  check "completion_zsh: zsh -n reads it" zsh -n "$out/completion_zsh.out"
  # zsh's completion builtins as stubs that keep what would be offered
  cat > "$out/comp.zsh" << EOF
compadd() { local a p=\${words[CURRENT]}; for a in "\$@"; do case \$a in -S|=|--) ;; *) [[ \$a == \${p}* ]] && reply+=("\$a") ;; esac; done; }
compset() { [[ \$2 == '*=' ]] && words[CURRENT]=\${words[CURRENT]#*=}; [[ \$2 == '*,' ]] && words[CURRENT]=\${words[CURRENT]##*,}; return 0; }
_files() { reply+=(FILES); }
source '$out/completion_zsh.out'
comp() { reply=(); words=("\$@"); CURRENT=\$#; _kvplan; print -r -- "\${reply[*]}"; }
comp kvplan fi
comp kvplan fit max_model
comp kvplan simulate model=llama-3.1-7
comp kvplan fit gpus=h100-sxm,l4
comp kvplan -f j
comp kvplan -f h
EOF
  zsh -f "$out/comp.zsh" > "$out/comp_zsh.out" 2>&1
  check "completion_zsh: command, key, value, a list's item, an option's values" [ "$(cat "$out/comp_zsh.out")" = "fit FILES
max_model_len
llama-3.1-70b
l4 l40 l40s
json
html" ]
else
  echo "skip cli completion_zsh: zsh is not installed (make test installs it); only its structure checked"
fi
check "completion_zsh: an autoloadable #compdef function that calls itself" sh -c "
  head -n 1 '$out/completion_zsh.out' | grep -qx '#compdef kvplan' && grep -q '^_kvplan() {\$' '$out/completion_zsh.out' &&
  tail -n 1 '$out/completion_zsh.out' | grep -qx '_kvplan \"\\\$@\"'"
expect completion_fish 2 "kvplan: command line: usage: kvplan completion bash|zsh (got 'fish')" -- completion fish
# capacity under another engine: a command-line error (status 2) naming the
# commands that take it, not a script error at a line of capacity.lua
expect capacity_engine_trtllm 2 "kvplan: command line: argument 'engine' must be 'vllm' (or absent: the memory rule alone), got 'trtllm' (capacity's columns are vLLM's startup figures; kvplan fit, ledger and best take engine=sglang and engine=trtllm)" -- capacity model=llama-3.1-8b gpus=h100 engine=trtllm
# one deployment under SGLang, one answer: fit, ledger and best take SGLang's
# own mem_fraction_static (0.87 for tp 2 on an A100) as startup and launch
# do, not vLLM's 0.9 (Qwen3-32B, fp8 KV, 32K: 18 requests; 20 before)
sg="model=qwen3-32b tp=2 kv=fp8 engine=sglang"
"$kvplan" launch $sg gpu=a100 max_model_len=32K > "$out/sg_launch.out" 2>&1
sg_n=$(sed -n '1s/.*, \([0-9]*\) requests of 32768 tokens at once.*/\1/p' "$out/sg_launch.out")
sg_fit=$("$kvplan" fit $sg gpus=a100 context=32K -f csv --columns max_concurrency | tail -n 1)
sg_best=$("$kvplan" best $sg gpus=a100 pp=1 context=32K -f csv --columns max_concurrency | sed -n 2p)
sg_led=$("$kvplan" ledger $sg gpu=a100 context=32K -f csv | grep -c 'room for 17 more requests of 32768 tokens')
sg_start=$("$kvplan" startup $sg gpu=a100 max_model_len=32K | grep -c '^kvplan: sglang starts; 18 requests of 32768 tokens')
check sglang_one_answer [ "$sg_n" = 18 ] && [ "$sg_fit" = 18 ] && [ "$sg_best" = 18 ] && [ "$sg_led" = 1 ] && [ "$sg_start" = 1 ]
# hostile input (docs/reliability.md, 2026-12-03): a boolean argument given
# false, no or 0 is false; it was the word itself, a true value ('fit time=no'
# added the time columns, 'best all=false' listed all, 'ledger enforce_eager=0'
# failed at scripts/ledger.lua:103 with "must be true or false, got 0")
expect bool_time_no 0 "" -- fit model=llama-3.1-8b gpus=l4 tp=1 context=4096 time=no -f csv
check "bool_time_no: no time columns" sh -c "! head -n 1 '$out/bool_time_no.out' | grep -q tpot_ms"
expect bool_all_false 0 "" -- best model=llama-3.1-8b context=4096 concurrency=4 gpus=l4 all=false -f csv
expect bool_all_default 0 "" -- best model=llama-3.1-8b context=4096 concurrency=4 gpus=l4 -f csv
check "bool_all_false: the rows of all's default" cmp -s "$out/bool_all_false.out" "$out/bool_all_default.out"
expect bool_field_0 0 "" -- ledger model=llama-3.1-8b gpu=l4 enforce_eager=0 -f csv
# the ready scripts' lines the errors below name, found rather than written
# (a change above them moves them)
led_line=$(grep -n 'kv.report.ledger_items(d, context' scripts/ledger.lua | cut -d: -f1)
fit_line=$(grep -n 'kv.options.as_usage(opt, function() return kv.sweep{' scripts/fit.lua | cut -d: -f1)
sim_line=$(grep -n 'local s = kv.simulate(o)' scripts/simulate.lua | cut -d: -f1)
# past 2^63: share_pct was 100 * bytes in integers (-59097283.1 % for 10^9
# requests), kv_used and kv_short 0.00 GiB for 10^15 (own * concurrency
# wrapped), context=1e18 "request_bytes: arithmetic overflow: a count exceeds 64 bits"
expect ledger_share_wrap 0 "" -- ledger model=llama-3.1-8b gpu=h100 context=1024 concurrency=1000000000 -f csv
check "ledger_share_wrap: no negative share" sh -c "! grep -q ',-[0-9]' '$out/ledger_share_wrap.out'"
expect ledger_need_wrap 0 "" -- ledger model=llama-3.1-8b gpu=h100 context=1024 concurrency=1000000000000000 -f csv
check "ledger_need_wrap: kv_used the whole budget, a shortfall" sh -c "grep -q ',kv_used,56.34,' '$out/ledger_need_wrap.out' &&
  ! grep -q ',kv_short,0.00,' '$out/ledger_need_wrap.out'"
expect ledger_request_wrap 1 "kvplan: $(pwd)/scripts/ledger.lua:$led_line: request_bytes: arithmetic overflow past 2^63: the KV of one request of 1000000000000000000 tokens exceeds 64 bits" -- \
  ledger model=llama-3.1-8b gpu=h100 context=1000000000000000000
# a sweep's overflow names its inputs ("sweep: arithmetic overflow: a count
# exceeds 64 bits" for samples=1e18 before), and leaves no file
expect sweep_overflow_named 1 "kvplan: $(pwd)/scripts/fit.lua:$fit_line: sweep: arithmetic overflow past 2^63: caused by field 'samples' = 1000000000000000000 (too large to count in 64 bits)" -- \
  fit model=llama-3.1-8b gpus=l4 samples=1000000000000000000 -o "$out/sweep_overflow.csv"
check "sweep_overflow_named: no file" sh -c "! ls '$out'/sweep_overflow.csv* 2> /dev/null"
expect fit_kv_empty 2 "kvplan: command line: argument 'kv' is empty (expected e.g. kv=auto)" -- fit model=llama-3.1-8b gpus=l4 kv=
expect fit_weights_empty 2 "kvplan: command line: argument 'weights' is empty (expected e.g. weights=native)" -- fit model=llama-3.1-8b gpus=l4 weights=
# a finite price whose usd_per_mtok passes the largest double: named ("cannot
# write 'standard output': Numerical argument out of domain" from fit before);
# a command-line value, so a usage error (status 1 at fit.lua's line before)
expect price_huge 2 "kvplan: command line: argument 'price_per_hour' = 1e+308: usd_per_mtok at context 131072 and concurrency 1 exceeds the largest double (expected USD per GPU hour)" -- \
  fit model=llama-3.1-8b gpus=l4 tp=1 price_per_hour=1e308
expect ledger_price_huge 2 "kvplan: command line: argument 'price_per_hour' = 1e+308: usd_per_mtok at context 131072 and concurrency 1 exceeds the largest double (expected USD per GPU hour)" -- \
  ledger model=llama-3.1-8b gpu=l4 price_per_hour=1e308
# kv.deploy's contradictions given on a ready script's command line: usage
# errors naming the arguments (status 1 at the script's line before); in a
# script's own kv.deploy{} they stay errors at its line, status 1
expect combination_fit 2 "kvplan: command line: arguments 'engine' ('sglang') and 'budget' ('vllm') disagree: give one" -- \
  fit model=llama-3.1-8b gpus=h100 engine=sglang budget=vllm
expect combination_ledger 2 "kvplan: command line: arguments 'engine' ('sglang') and 'budget' ('vllm') disagree: give one" -- \
  ledger model=llama-3.1-8b gpu=h100 engine=sglang budget=vllm
expect combination_simulate 2 "kvplan: command line: arguments 'engine' ('sglang') and 'budget' ('vllm') disagree: give one" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=3 engine=sglang budget=vllm
expect combination_best 2 "kvplan: command line: arguments 'engine' ('sglang') and 'budget' ('vllm') disagree: give one" -- \
  best model=llama-3.1-8b context=1024 gpus=h100 engine=sglang budget=vllm
expect combination_kv_full 2 "kvplan: command line: argument 'kv_full' ('fp8') needs 'kv_recent' (the tokens kept in that format)" -- \
  fit model=llama-3.1-8b gpus=h100 kv_full=fp8
expect combination_kv_full_ledger 2 "kvplan: command line: argument 'kv_full' ('fp8') needs 'kv_recent' (the tokens kept in that format)" -- \
  ledger model=llama-3.1-8b gpu=h100 kv_full=fp8
expect combination_kv_full_recent 0 "" -- fit model=llama-3.1-8b gpus=h100 tp=1 kv_full=fp8 kv_recent=4096
expect combination_script 1 "kvplan: $c/bad_combination.lua:9: fields 'engine' ('sglang') and 'budget' ('vllm') disagree: give one" -- \
  $c/bad_combination.lua
expect combination_script_kv_full 1 "kvplan: $c/bad_combination.lua:7: field 'kv_full' ('fp8') needs 'kv_recent' (the tokens kept in that format)" -- \
  $c/bad_combination.lua case=kv_full
# simulate: max_model_len=1e18 said "field 'max' must be an integer in
# 1..2^40, got 500000000000000000" (a field never given), rate=1e-320
# "request 1: arrival must be a time >= 0 s, got inf"
expect sim_len_huge 0 "" -- simulate model=llama-3.1-8b gpu=h100 requests=5 max_model_len=1000000000000000000 -f csv
expect sim_rate_tiny 1 "kvplan: $(pwd)/scripts/simulate.lua:$sim_line: field 'rate' = 9.99989e-321: the arrival of request 1 is past the largest double (expected requests a second)" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=5 rate=1e-320
# pareto over every GPU (gpus= not given, its default) skips the GPUs without
# the rates step times need; it failed at "gpu 'a10g' has no dense tensor rate"
expect pareto_all_gpus 0 "" -- pareto model=llama-3.1-8b input=100 output=20 -q -f csv
# best: a tp past max_gpus is a usage error (the header alone, status 0, before;
# tp=1e18 ranked "at -446744073709551616 GPUs": tests/lua/best_test.lua)
expect best_tp_past_max 2 "kvplan: command line: argument 'tp': no size is within max_gpus 64 (a deployment uses tp x pp GPUs), got '1000000000000000000'" -- \
  best model=llama-3.1-8b context=4096 concurrency=4 gpus=l4 tp=1000000000000000000
# startup's kv_blocks line says how its tokens are counted beside vLLM's figure:
# the null block (one group), blocks // groups x block (hybrid groups); vLLM
# 0.11's log, pinned (from the 0.20 row it prints max_concurrency x length)
"$kvplan" startup model=llama-3.1-8b gpu=h100 kv=fp8 max_model_len=32K engine_version=0.11 > "$out/st_null.out" 2>&1
"$kvplan" startup model=gemma-3-27b gpu=h100 kv=fp8 max_model_len=32K engine_version=0.11 > "$out/st_groups.out" 2>&1
check startup_tokens_vllm grep -q "^GPU KV cache size: 841,056 tokens" "$out/st_null.out"
check startup_tokens_null_block grep -qF "(841040 tokens; vLLM's 841,056 above counts its null block too)" "$out/st_null.out"
check startup_tokens_groups grep -qF "(40640 tokens: 17783 // 7 KV cache groups x 16)" "$out/st_groups.out"
# startup at a max_model_len one block past what the pool holds beside the
# null block (vLLM 0.11 starts: its check counts the null block): the
# summary said "0 requests ... fit at once" and nothing why; one request is
# "1 request", not "1 requests"
expect startup_null_block 0 "" -- startup model=llama-3.1-8b gpu=l4 max_model_len=27744 engine_version=0.11
check "startup_null_block: why no request fits whole" grep -q "no request of 27744 tokens fits whole: vLLM's startup check at this release counts its null block" "$out/startup_null_block.out"
expect startup_one_request 0 "" -- startup model=llama-3.1-8b gpu=l4 max_model_len=27744 engine_version=0.29
check "startup_one_request: singular" grep -q "it holds 1 request of 27744 tokens at once" "$out/startup_one_request.out"
# the front door with hostile values (docs/reliability.md, 2026-12-04)
h="$out/hostile"; rm -rf "$h"; mkdir -p "$h"
printf 'a,b\n1,2\n' > "$h/ok.csv"
# --max-memory took strtod's forms ('0x1p20', ' 1M') and fractions of a byte
# ('1.5': "cannot create the Lua state: out of memory", no option named)
expect mem_hex 2 "kvplan: bad --max-memory '0x1p20' (expected a size such as 512M, 2G or 2GiB)" -- --max-memory 0x1p20 -e ''
expect mem_blank 2 "kvplan: bad --max-memory ' 1M' (expected a size such as 512M, 2G or 2GiB)" -- --max-memory ' 1M' -e ''
expect mem_fraction 2 "kvplan: bad --max-memory '1.5': 1.5 bytes is not a whole number of bytes (expected a size such as 512M, 2G or 2GiB)" -- --max-memory 1.5 -e ''
expect mem_too_small 1 "kvplan: memory limit exceeded (--max-memory 100 bytes) creating the Lua state: kvplan needs more to start" -- --max-memory 100 -e ''
expect mem_exponent 0 "" -- --max-memory 1e9 -e ''
expect timeout_hex 2 "kvplan: bad --timeout '0x10' (expected seconds > 0, such as 30 or 0.5)" -- --timeout 0x10 -e ''
# -o '' reached the writer ("cannot rename '.tmp.HkMRg8' to ''"); -o DIR/ and
# a missing directory named the random temporary
expect o_empty 2 "kvplan: option '-o' needs a file name, got '' (try 'kvplan --help')" -- fit model=llama-3.1-8b -o ''
expect o_slash 1 "kvplan: $(pwd)/scripts/fit.lua:$fit_line: cannot write '$h/none/': the name ends in '/' (expected a file name)" -- \
  fit model=llama-3.1-8b gpus=l4 -o "$h/none/"
expect o_missing_dir 1 "kvplan: $(pwd)/scripts/fit.lua:$fit_line: cannot write '$h/none/f.csv': No such file or directory (creating a file in '$h/none')" -- \
  fit model=llama-3.1-8b gpus=l4 -o "$h/none/f.csv"
check "o_missing_dir: no temporary, no directory" test ! -e "$h/none"
# a CSV input without line breaks (/dev/zero) grew one field without end
# (1.5 GB in 8 s for plot, prices=, trace=); a directory said "cannot read '.'"
expect csv_dev_zero 1 "kvplan: /dev/zero:1: a line longer than 16777216 bytes (a CSV file's lines are at most 16 MiB)" -- \
  --max-memory 512M plot /dev/zero x=a y=b -o "$h/z.svg"
expect csv_prices_dev_zero 2 "kvplan: command line: argument 'prices': /dev/zero:1: a line longer than 16777216 bytes (a CSV file's lines are at most 16 MiB)" -- \
  --max-memory 512M best model=llama-3.1-8b context=8k concurrency=8 rank=cost prices=/dev/zero
expect csv_trace_dir 2 "kvplan: command line: argument 'trace': cannot read '$h': it is a directory (expected a CSV file)" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$h"
# --max-memory let a growing CSV field through: glibc rounds a large block
# to whole pages, so a realloc to the size it already had grew it by a page,
# unchecked (480 MB under --max-memory 8M on /dev/zero); now the field stops
# at the limit (before: read whole, then "not enough memory" from Lua)
head -c 15000000 /dev/zero | tr '\0' a > "$h/line.csv"
expect mem_csv_field 0 "" -- --max-memory 8M -e "print(pcall(require('kvplan.csv').read, '$h/line.csv'))"
check "mem_csv_field: the CSV reader stops at the limit" \
  grep -qF "false	(command line):1: $h/line.csv:1: not enough memory for a field of $h/line.csv (memory exhausted while increasing buffer size)" "$out/mem_csv_field.out"
rm -f "$h/line.csv"
# a directory as a result file or profile: "the file is empty", "is not JSON"
expect calibrate_dir 1 "kvplan: cannot read result file '$h': Is a directory" -- calibrate "$h" model=llama-3.1-8b gpu=h100
expect profile_dir 2 "kvplan: command line: argument 'profile': cannot read profile '$h': Is a directory" -- \
  fit model=llama-3.1-8b gpus=l4 profile="$h"
# batch -d naming a file ran every script to fail on its report; an empty
# manifest was the usage text
cp tests/cli/args.lua "$h/s.lua"
expect batch_d_file 2 "kvplan: batch: -d '$h/ok.csv' is not a directory (expected the directory for the reports)" -- \
  batch -d "$h/ok.csv" "$h/s.lua"
expect batch_d_empty 2 "kvplan: option '-d' needs a directory, got '' (try 'kvplan --help')" -- batch -d '' "$h/s.lua"
printf '# nothing\n\n' > "$h/none.txt"
expect batch_manifest_empty 2 "kvplan: batch: manifest '$h/none.txt' lists no script (expected lines '[NAME:] SCRIPT key=value ...')" -- \
  batch -d "$h/b" -m "$h/none.txt"
# completion with a word too many said "(got 'bash')"
expect completion_extra 2 "kvplan: command line: usage: kvplan completion bash|zsh (got 'bash' 'extra')" -- completion bash extra
# --escape-formulas (OWASP "CSV Injection"): a text cell that begins with
# = + - @, a tab or a carriage return gets a leading quote in CSV, numbers and
# other formats are untouched; without it every byte is kept
cat > "$h/inj.lua" <<'EOF'
local kv = require "kvplan"
local r = kv.report{columns = {"id", "n", "note", "x"}}
r:row{id = "=1+2", n = -5, note = "-5", x = "+PagedAttention"}
r:row{id = "@SUM(A1)", n = 1.5, note = "a,=b", x = "=\"quoted, cell\""}
r:row{id = "-", n = -0.25, note = "\tTAB", x = "-1e5"}
EOF
expect escape_formulas 0 "" -- --escape-formulas -f csv "$h/inj.lua"
printf '%s\n' 'id,n,note,x' "'=1+2,-5,-5,'+PagedAttention" "'@SUM(A1),1.5,\"a,=b\",\"'=\"\"quoted, cell\"\"\"" \
  "'-,-0.25,'	TAB,-1e5" > "$h/inj.want"
check "escape_formulas: text cells quoted, numbers kept" cmp -s "$out/escape_formulas.out" "$h/inj.want"
expect escape_formulas_off 0 "" -- -f csv "$h/inj.lua"
check "escape_formulas_off: every byte as given" grep -qxF '=1+2,-5,-5,+PagedAttention' "$out/escape_formulas_off.out"
expect escape_formulas_json 0 "" -- --escape-formulas -f json "$h/inj.lua"
check "escape_formulas_json: other formats untouched" grep -qF '{"id":"=1+2","n":-5,' "$out/escape_formulas_json.out"
# a sweep's rows (built in C) and a batch's reports too: a catalog id '=evil'
printf 'id,layers,hidden,heads,kv_heads,head_dim,vocab,intermediate,max_context,params,dtype\n=evil,32,4096,32,8,128,128256,14336,8192,8000000000,bf16\n' > "$h/evil.csv"
printf '%s\n' 'local kv = require "kvplan"' \
  "kv.sweep{model = kv.models.load_csv('$h/evil.csv')[1], gpu = 'h100', tp = {1, 2}, columns = {'model', 'tp', 'max_concurrency'}}:write()" > "$h/sw.lua"
expect escape_formulas_batch 0 "kvplan: batch: ok     $h/sw.lua" -- --escape-formulas batch -d "$h/eb" "$h/sw.lua"
check "escape_formulas_batch: the sweep's model cells quoted" sh -c "sed -n 2p '$h/eb/sw.csv' | grep -q \"^'=evil,1,\""
# merge dropped a key=value word without a word (a part 'x=y' was no part)
expect merge_key_value 2 "kvplan: command line: kvplan merge takes parts, no key=value: got 'x=y'" -- \
  merge -o "$h/m.csv" "$h/ok.csv" x=y
check "merge_key_value: nothing written" test ! -e "$h/m.csv"
# --timeout cutting short the open of a FIFO no one writes said "Interrupted
# system call" (status 2 for a profile=, a bad argument), not the limit
mkfifo "$h/fifo"
# (--timeout 3: the deadline must fall inside the open, which blocks for
# ever; with 0.5 a slow start (the sanitizer build beside other jobs) passed
# it before, and the limit was named at a Lua line instead: "command line:
# argument 'model': time limit exceeded (--timeout 0.5 s)")
expect timeout_fifo 1 "kvplan: time limit exceeded (--timeout 3 s): cannot open '$h/fifo': Interrupted system call" -- \
  --timeout 3 plot "$h/fifo" x=a y=b -o "$h/f.svg"
expect timeout_fifo_profile 1 "kvplan: time limit exceeded (--timeout 3 s): command line: argument 'profile': cannot read profile '$h/fifo': $h/fifo: Interrupted system call" -- \
  --timeout 3 fit model=llama-3.1-8b gpus=l4 profile="$h/fifo"
rm -f "$h/fifo"
# a NaN in a message printed as "-nan" (the sign bit x86 gives 0/0, C's and
# Lua's %g): one helper (kvp_shown, util.shown and util.raise) shows "nan"
expect nan_rate_sign 1 "kvplan: (command line):1: field 'rate' must be a number > 0 (requests a second; nil: all at once), got nan" -- \
  -e "require('kvplan').simulate{model = 'llama-3.1-8b', gpu = 'l4', requests = 3, prompt = 100, output = 10, rate = 0/0*-1}"
expect nan_rate_plain 1 "kvplan: (command line):1: field 'rate' must be a number > 0 (requests a second; nil: all at once), got nan" -- \
  -e "require('kvplan').simulate{model = 'llama-3.1-8b', gpu = 'l4', requests = 3, prompt = 100, output = 10, rate = -(0/0)}"
# a release given to validate was printed as given (version=12abc, nan) and
# the log checked against no release's defaults: now kv.deploy's check
vl=tests/validation/vllm-dennislee-qwen2-7b-a100-40-tp2.log
expect validate_version_junk 2 "kvplan: command line: validate: argument 'version' (engine_version) of $vl: unknown vLLM version '12abc' (modelled: 0.6, 0.7, 0.7-v1, 0.8, 0.9, 0.10, 0.11, 0.14, 0.20, 0.21, 0.29)" -- \
  validate "$vl" version=12abc
expect validate_version_nan 2 "kvplan: command line: validate: argument 'version' (engine_version) of $vl: unknown vLLM version 'nan' (modelled: 0.6, 0.7, 0.7-v1, 0.8, 0.9, 0.10, 0.11, 0.14, 0.20, 0.21, 0.29)" -- \
  validate "$vl" engine_version=nan
expect validate_version_ok 0 "" -- validate "$vl" version=0.10
# integers in decimal (docs/formulas.md: token counts as vLLM's
# human_readable_int reads them, whose plain int() refuses both): '0x10' and
# '1e3' were 16 and 1000 (Lua's tonumber), in arguments and trace cells
expect int_hex 2 "kvplan: command line: argument 'context' must be a whole number written in decimal, got '0x10'" -- \
  fit model=llama-3.1-8b gpus=l4 context=0x10
expect int_exponent 2 "kvplan: command line: argument 'concurrency' must be a whole number written in decimal, got '1e3'" -- \
  ledger model=llama-3.1-8b gpu=l4 concurrency=1e3
expect int_exponent_field 2 "kvplan: command line: argument 'tp' must be a whole number written in decimal, got '1e0'" -- \
  fit model=llama-3.1-8b gpus=l4 tp=1e0
printf 'arrival,prompt,output\n0,1e3,10\n' > "$h/trace_exp.csv"
expect trace_cell_exponent 2 "kvplan: command line: argument 'trace': $h/trace_exp.csv:2: prompt '1e3' must be a whole number written in decimal" -- \
  simulate model=llama-3.1-8b gpu=l4 trace="$h/trace_exp.csv"
printf 'arrival,prompt,output\n1e-3,0x10,10\n' > "$h/trace_hex.csv"
expect trace_cell_hex 2 "kvplan: command line: argument 'trace': $h/trace_hex.csv:2: prompt '0x10' must be a whole number written in decimal" -- \
  simulate model=llama-3.1-8b gpu=l4 trace="$h/trace_hex.csv"
printf 'arrival,prompt,output\n1e-3,100,10\n' > "$h/trace_arrival_exp.csv"
expect trace_arrival_exponent 0 "" -- simulate model=llama-3.1-8b gpu=l4 trace="$h/trace_arrival_exp.csv" -f csv
# a precompiled chunk piped to 'kvplan -' said only "attempt to load a binary
# chunk (mode is 't')", not what was refused nor --allow-binary
if command -v luac5.4 > /dev/null 2>&1; then
  echo 'print(1)' > "$h/p.lua"
  luac5.4 -o "$h/p.luac" "$h/p.lua"
  fed stdin_binary "$h/p.luac" 1 "kvplan: standard input ('-') is a precompiled (binary) chunk: refused, as Lua does not verify bytecode (--allow-binary accepts it)" -- -
  fed stdin_binary_allowed "$h/p.luac" 0 "" -- --allow-binary -
fi
# pairs() visits a table's string keys in an order that changes run to run
# (Lua seeds its string hash per state: lstate.c luai_makeseed, the time and
# addresses): of several bad inputs the one reported, a model's facts, a
# header's spelling that wins must not hang on it. stable NAME STATUS
# STDERR-LINE -- ARGS...: expect's check in $runs fresh processes, the same
# standard output in each (two outcomes in equal odds pass $runs runs by
# chance once in 2^$runs)
runs=12
stable() {
  name=$1; status=$2; want=$3; shift 4
  i=1; why=""
  while [ $i -le $runs ] && [ -z "$why" ]; do
    "$kvplan" "$@" > "$out/$name.out" 2> "$out/$name.err" < /dev/null
    got=$?
    first=$(head -n 1 "$out/$name.err")
    [ $i -eq 1 ] && cp "$out/$name.out" "$out/$name.out1"
    if [ "$got" -ne "$status" ] || [ "$first" != "$want" ]; then why="run $i: status $got (want $status), stderr: $first"
    elif ! cmp -s "$out/$name.out" "$out/$name.out1"; then why="run $i: another standard output than run 1"; fi
    i=$((i + 1))
  done
  if [ -z "$why" ]; then pass=$((pass + 1)); echo "ok   cli $name"
  else fail=$((fail + 1)); echo "FAIL cli $name: $why"; echo "     wanted: $want"; fi
}
dk='local kv = require "kvplan"'
stable order_arguments 2 "kvplan: command line: unknown argument 'bogus1'" -- \
  capacity model=llama-3.1-70b bogus2=1 bogus1=2
stable order_argument_values 2 "kvplan: command line: argument 'context' must be a number, got 'lots'" -- \
  fit model=llama-3.1-8b gpus=h100-sxm context=lots utilization=7
stable order_check_keys 1 "kvplan: (command line):1: unknown field 'bar' in deployment" -- \
  -e "$dk; kv.deploy{model = 'llama-3.1-8b', gpu = 'l4', foo = 1, bar = 2}"
stable order_engine_names 1 "kvplan: (command line):1: deployment gives both 'tensor_parallel_size' and 'tp_size' (the same option)" -- \
  -e "$dk; kv.deploy{model = 'llama-3.1-8b', gpu = 'h100-sxm', tensor_parallel_size = 2, tp_size = 4}"
stable order_booleans 1 "kvplan: (command line):1: field 'enable_lora' must be true or false, got 4" -- \
  -e "$dk; kv.deploy{model = 'llama-3.1-8b', gpu = 'l4', enforce_eager = 3, enable_lora = 4}"
stable order_model_fields 1 "kvplan: (command line):1: model 'x': field 'intermediate' must be an integer >= 0, got -1" -- \
  -e "$dk; kv.model{id = 'x', layers = 2, heads = 2, head_dim = 64, hidden = 128, intermediate = -1, vocab = -2}"
stable order_weight_formats 1 "kvplan: (command line):1: field 'weight_formats.attention': unknown format 'fp9' (did you mean 'fp4', 'fp8', 'fp16'?)" -- \
  -e "$dk; kv.model{id = 'x', layers = 2, heads = 2, head_dim = 64, hidden = 128, intermediate = 256, vocab = 1000, weight_formats = {attention = 'fp9', mlp = 'fp7'}}"
stable order_core_keys 1 "kvplan: (command line):1: unknown field 'bogus1' in model" -- \
  -e "require('kvplan.core').model{layers = 2, bogus2 = 1, bogus1 = 2}"
stable order_core_key_types 1 "kvplan: (command line):1: unexpected key in model (field names are strings, got 2)" -- \
  -e "require('kvplan.core').model{layers = 2, bogus = 1, [3] = 1, [2] = 2}"
stable order_sim_options 1 "kvplan: (command line):1: unknown simulation option 'bogus1'" -- \
  -e "$dk; kv.simulate{model = 'llama-3.1-8b', gpu = 'l4', bogus2 = 1, bogus1 = 2}"
stable order_sim_efficiency 1 "kvplan: (command line):1: efficiency 'compute' must be in (0, 1], got 3" -- \
  -e "$dk; kv.simulate{model = 'llama-3.1-8b', gpu = 'l4', efficiency = {memory = 2, compute = 3}}"
stable order_sweep_axes 1 "kvplan: (command line):1: unknown sweep axis 'bogus1'" -- \
  -e "$dk; kv.sweep{model = 'llama-3.1-8b', gpu = 'l4', columns = {'tp'}, bogus2 = {1}, bogus1 = {2}}"
# (the filter columns as one bad column alone lists them)
takes=$("$kvplan" -e "$dk; kv.sweep{model = 'llama-3.1-8b', gpu = 'l4', columns = {'tp'}, filter = {bogus1 = 1}}" 2>&1 |
  sed -n 's/.*(a filter table takes //p')
stable order_sweep_filter 1 "kvplan: (command line):1: filter: unknown column 'bogus1' (a filter table takes $takes" -- \
  -e "$dk; kv.sweep{model = 'llama-3.1-8b', gpu = 'l4', context = {1024}, columns = {'tp'}, filter = {bogus2 = 1, bogus1 = 2}}"
stable order_optim_hooks 1 "kvplan: (command line):1: unknown hook 'bogus1' in optimization 'x'" -- \
  -e "$dk; kv.optim.define{name = 'x', phase = 'kv', bogus2 = 1, bogus1 = 2}"
stable order_optim_columns 0 "" -- -e "$dk; local o = kv.optim.define{name = 'x', phase = 'budget',
    apply = function(t) return t end, columns = {a = function() return 'A' end, b = function(r) return r.a end}}
  print(kv.optim.row(kv.deploy{model = 'llama-3.1-8b', gpu = 'l4', optim = o}, 1024, 1).b)"
check "order_optim_columns: column b sees column a (by name)" [ "$(cat "$out/order_optim_columns.out")" = "A" ]
stable order_report_columns 1 "kvplan: (command line):1: row has a value for unknown column 'bogus1'" -- \
  -e "$dk; kv.report{columns = {'a'}}:row{bogus2 = 1, bogus1 = 2}"
stable order_factors 1 "kvplan: (command line):1: factors: unknown factor 'bogus1' (known: memory, compute, experts, link, launch_us, seq_host_us, step_overhead_ms, request_ms, api_ms, link_latency_us)" -- \
  -e "require('kvplan.factors').apply({}, {bogus2 = 1, bogus1 = 2})"
stable order_launch_no_flag 0 "" -- -e "$dk; print(require('kvplan.launch').command(kv.deploy{model = 'llama-3.1-8b', gpu = 'l4', kv_recent = 128, allocation = 'contiguous'}, 'vllm'))"
check "order_launch_no_flag: allocation's reason" grep -qx "nil	contiguous allocation is no engine's option" "$out/order_launch_no_flag.out"
stable order_launch_env 0 "" -- -e "$dk; print(require('kvplan.launch').command(kv.deploy{model = 'llama-3.1-8b', gpu = 'l4', vllm_use_v1 = true, flashinfer_sampler = true}, 'sglang'))"
check "order_launch_env: flashinfer_sampler's reason" grep -qx "nil	field 'flashinfer_sampler' is vLLM's; SGLang has no such setting" "$out/order_launch_env.out"
stable order_calibrate_keys 1 "kvplan: (command line):1: field 'prompt' is the results' own (each result file gives it), not the deployment's" -- \
  -e "$dk; kv.calibrate{deployment = {model = 'mistral-7b-v0.3', gpu = 'rtx-4090', rate = 2, prompt = 10}, results = {'$cf/plain.csv'}}"
printf '{"kvplan_profile": 1, "deployment": {"gpu": "l4"}, "factors": {"memory": {"value": 7}, "compute": {"value": 9}}}\n' > "$out/two_bad.json"
stable order_profile_factors 2 "kvplan: command line: argument 'profile': $out/two_bad.json: factors.compute: key 'value' is 9 (expected a number in 0.05 .. 1)" -- \
  fit model=llama-3.1-8b gpus=l4 profile="$out/two_bad.json"
stable order_sorted_keys 0 "" -- -e "local t = {[5] = 1, ['5'] = 2, [1.5] = 3, ['1.5'] = 4}
  for i = 1, 40 do t['k' .. i] = i end
  local o = {}
  for _, k in ipairs(require('kvplan.util').sorted_keys(t)) do o[#o + 1] = type(k) .. ':' .. tostring(k) end
  print(table.concat(o, ' ', 1, 4))"
check "order_sorted_keys: a number before the string of its text" grep -qx "number:1.5 string:1.5 number:5 string:5" "$out/order_sorted_keys.out"
# a GPTQ config's dynamic '-:' entries: the model's facts in one order
mkdir -p "$out/dynamic"
sed 's/"vocab_size"/"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": {"-:.*self_attn.*": {}, "-:.*mlp.*": {}}},\n  "vocab_size"/' \
  tests/fixtures/hf/llama-3.1-8b/config.json > "$out/dynamic/config.json"
stable order_hf_facts 0 "" -- -e "print(require('kvplan').models.from_hf('$out/dynamic').source)"
check "order_hf_facts: the dynamic entries sorted" grep -q "dynamic -:.\*mlp.\*: a module vLLM leaves unquantized, not read: counted quantized; dynamic -:.\*self_attn.\*: " "$out/order_hf_facts.out"
# a log's header: of two spellings of one key the later line wins (as a
# key's later line does); of two bad counts the same one is reported
vlog=tests/validation/calib-vllm-15815-qwen32b-l40s-tp2.log
{ echo "# tensor_parallel_size: 4"; echo "# tp: 2"; cat "$vlog"; } > "$out/spellings.log"
stable order_header_spellings 0 "" -- validate "$out/spellings.log"
check "order_header_spellings: tp 2, the later line's" grep -q "^$out/spellings.log,vllm,0.7.1,kv_blocks_x_block,exact,63152,63152,.* tp=header " "$out/order_header_spellings.out"
{ echo "# tp: x"; echo "# pp: y"; cat "$vlog"; } > "$out/two_counts.log"
stable order_header_counts 1 "kvplan: validate: 1 of 1 logs could not be read whole (their parse rows say why): $out/two_counts.log" -- \
  validate "$out/two_counts.log"
check "order_header_counts: pp reported (sorted)" grep -q ",pp,parse,,,,,missing: header 'pp: y' is not a pp" "$out/order_header_counts.out"
# max_model_len=auto (or -1), vLLM's: a script's default context is the
# model's max_context (fit, capacity, ledger and simulate compared "auto"
# with 0: "attempt to compare number with string" at the script's line);
# pareto sets max_model_len itself and refuses it naming the value (hostile)
expect mml_auto_fit 0 "" -- fit model=llama-3.1-8b gpus=l4 max_model_len=auto -f csv
check "mml_auto_fit: tp 1 holds no request of 131072 tokens, its fitted max_model_len 38336" \
  grep -q "^llama-3.1-8b,l4,1,bf16,bf16,131072,1,false,context,0,38336,.*context 131072 exceeds max_model_len 38336" "$out/mml_auto_fit.out"
expect mml_minus1_capacity 0 "" -- capacity model=llama-3.1-8b gpus=l4 tp=1 max_model_len=-1 -f csv
expect mml_auto_ledger 0 "" -- ledger model=llama-3.1-8b gpu=l4 max_model_len=auto -f csv
expect mml_auto_simulate 0 "" -- simulate model=llama-3.1-8b gpu=l4 requests=3 prompt=100 output=10 max_model_len=auto -f csv
expect mml_auto_best_rate 0 "" -- -q best model=llama-3.1-8b gpus=l4 input=1000 output=100 rate=1 max_model_len=auto -f csv
expect mml_auto_pareto 2 "kvplan: command line: argument 'max_model_len' = auto: pareto starts each deployment at input + output = 120 tokens (the default) or at the count given, expected a count >= 120" -- \
  pareto model=llama-3.1-8b gpus=l4 input=100 output=20 max_model_len=auto
# finite step-time inputs whose steps take no finite time: named (perf.tflops
# = 1e-320 said "column 'ttft_ms_p50' has no finite value (got nan)" and
# kv.simulate returned a NaN TTFT; a deployment's time "overflows" alone)
expect sim_tflops_subnormal 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: step 1 takes inf s: the run passes the largest double (expected step-time inputs of finite times: hbm_gbps 300 x 0.8, tflops 1e-320 x 0.7, step_overhead_ms 0, launch_us 0.91, seq_host_us 1.1, loop_host_us 0, index_tflops 0, gemm_tile_m 0)" -- \
  simulate model=llama-3.1-8b gpu=l4 requests=3 prompt=100 output=10 perf.tflops=1e-320
expect sim_overhead_huge 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: step 1 takes 1e+305 s: the run passes the largest double (expected step-time inputs of finite times: hbm_gbps 300 x 0.8, tflops 121 x 0.7, step_overhead_ms 1e+308, launch_us 0.91, seq_host_us 1.1, loop_host_us 0, index_tflops 0, gemm_tile_m 0)" -- \
  simulate model=llama-3.1-8b gpu=l4 requests=3 prompt=100 output=10 perf.step_overhead_ms=1e308 -o "$out/sim_overhead_huge.csv"
check "sim_overhead_huge: no report written" [ ! -e "$out/sim_overhead_huge.csv" ]
expect time_memory_subnormal 1 "kvplan: (command line):1: step time at context 1000 and concurrency 1 overflows (expected step-time inputs that give a finite time: hbm_gbps = 300.0 at efficiency 9.9998886718268e-321, tflops = 121.0 at efficiency 0.7, step_overhead_ms = 0.0, launch_us = 0.91, seq_host_us = 1.1, loop_host_us = 0.0, index_tflops = 0.0, gemm_tile_m = 0.0)" -- \
  -e "require('kvplan').deploy{model = 'llama-3.1-8b', gpu = 'l4', efficiency = {memory = 1e-320}}:time(1000, 1)"
# CSV inputs from a spreadsheet: a UTF-8 byte order mark before the header is
# dropped by the reader (trace= said "the trace needs a column 'arrival'",
# prices= "expected columns 'gpu' and 'price_per_hour', got '<BOM>gpu,...'");
# a column named twice or a GPU priced twice is refused (the last one won:
# a second 'gpu' column left l4 unpriced, "no price_per_hour for gpu 'l4'")
printf '\357\273\277arrival_s,prompt_tokens,output_tokens\r\n0,100,10\r\n0.5,200,20\r\n' > "$out/bom_trace.csv"
expect csv_bom_trace 0 "" -- simulate model=llama-3.1-8b gpu=l4 trace="$out/bom_trace.csv" -f csv
check "csv_bom_trace: both requests" grep -q "^llama-3.1-8b,l4,1,1,bf16,continuous,0,2," "$out/csv_bom_trace.out"
printf '\357\273\277gpu,price_per_hour\r\nl4,0.8\r\n' > "$out/bom_prices.csv"
expect csv_bom_prices 0 "" -- -q best model=llama-3.1-8b gpus=l4 context=4096 concurrency=8 rank=cost prices="$out/bom_prices.csv" -f csv
check "csv_bom_prices: priced" grep -q "^1,l4,2,1,2,bf16,bf16,48,24.00,1.60," "$out/csv_bom_prices.out"
input="$out/bom_prices.csv" expect csv_bom_stdin 0 "" -- -q best model=llama-3.1-8b gpus=l4 context=4096 concurrency=8 rank=cost prices=- -f csv
printf 'arrival_s,prompt_tokens,output_tokens,arrival\n0,100,10,1\n' > "$out/dup_trace.csv"
expect csv_dup_trace 2 "kvplan: command line: argument 'trace': $out/dup_trace.csv:1: the trace names its arrival column twice (column 4 'arrival'; expected one)" -- \
  simulate model=llama-3.1-8b gpu=l4 trace="$out/dup_trace.csv"
printf 'gpu,price_per_hour,gpu\nl4,0.8,h100\n' > "$out/dup_col_prices.csv"
expect csv_dup_col_prices 2 "kvplan: command line: argument 'prices': $out/dup_col_prices.csv:1: column 'gpu' appears twice (expected one gpu column and one price_per_hour)" -- \
  best model=llama-3.1-8b gpus=l4 context=4096 concurrency=8 rank=cost prices="$out/dup_col_prices.csv"
printf 'gpu,price_per_hour\nl4,0.8\nl4-24gb,0.9\n' > "$out/dup_gpu_prices.csv"
expect csv_dup_gpu_prices 2 "kvplan: command line: argument 'prices': $out/dup_gpu_prices.csv:3: gpu 'l4' is priced twice (line 2, as 'l4'; expected one price a GPU)" -- \
  best model=llama-3.1-8b gpus=l4 context=4096 concurrency=8 rank=cost prices="$out/dup_gpu_prices.csv"
# a log line of one long word: validate's pattern for a Hugging Face cache
# path was tried at every byte of it, quadratic in its length (a 30,000-digit
# token count took 15 s, 100,000 digits more than 60 s; now 0.7 s)
awk 'BEGIN { s = "GPU KV cache size: "; for (i = 0; i < 100000; i++) s = s "9"; print s " tokens" }' > "$out/long_word.log"
expect validate_long_word 1 "kvplan: validate: 1 of 1 logs could not be read whole (their parse rows say why): $out/long_word.log" -- \
  --timeout 20 validate "$out/long_word.log"
check "validate_long_word: the figure named as past 64 bits" grep -q "is no number kvplan reads (past 64 bits or not finite)" "$out/validate_long_word.out"
# a result file and a profile with a UTF-8 byte order mark (PowerShell's
# Out-File writes one): read as without it (a JSON result was "malformed
# CSV", a profile "is not JSON: invalid token near ...")
{ printf '\357\273\277'; cat tests/fixtures/calibrate/vllm_serve_c4.json; } > "$out/bom_result.json"
expect calibrate_bom 0 "" -- -q calibrate "$out/bom_result.json" model=mistral-7b-v0.3 gpu=rtx-4090 -o "$out/bom_profile.json"
{ printf '\357\273\277'; cat "$out/bom_profile.json"; } > "$out/bom_profile2.json"
expect profile_bom 0 "" -- -q fit model=mistral-7b-v0.3 gpus=rtx-4090 profile="$out/bom_profile2.json" -f csv
# simulations' arrays lie outside Lua's heap: kv.simulate steps the collector
# by their size, so results no longer referenced are freed before more pile
# up (this pareto peaked at 431 MB, now 241 MB; output=100000 at 7.1 GB, now
# 3.6 GB)
expect pareto_sims_collected 0 "" -- -q --max-memory 320M pareto model=llama-3.1-8b gpus=l4 tp=2,4 input=100 output=8000 -f csv
# a negative value of an argument with a least value names that bound: the
# generic check of counts said ">= 0" (simulate requests=-1, prompt=-1), where
# 0 is refused too (">= 1")
expect sim_requests_minus1 2 "kvplan: command line: argument 'requests' must be an integer >= 1, got '-1'" -- \
  simulate model=llama-3.1-8b gpu=l4 requests=-1
expect sim_prompt_minus1 2 "kvplan: command line: argument 'prompt' must be an integer >= 1, got '-1'" -- \
  simulate model=llama-3.1-8b gpu=l4 prompt=-1
expect fit_concurrency_minus1 2 "kvplan: command line: argument 'concurrency' must be an integer >= 1, got '-1'" -- \
  fit model=llama-3.1-8b concurrency=-1
# merge: a part named twice (its rows were joined twice, status 0) is a usage
# error; a part's UTF-8 byte order mark is no header text (it was "another
# header than", the mark invisible in the message)
printf 'a,b\n3,4\n' > "$out/mtwice.csv"
printf '\357\273\277a,b\n5,6\n' > "$out/mbom.csv"
expect merge_twice 2 "kvplan: command line: kvplan merge: part './$out/mtwice.csv' is named twice (parts 1 and 2): each part once" -- \
  merge -o "$out/mt.csv" "$out/mtwice.csv" "./$out/mtwice.csv"
check "merge_twice: no output" [ ! -e "$out/mt.csv" ]
expect merge_bom 0 "" -- merge -o "$out/mb.csv" "$out/mtwice.csv" "$out/mbom.csv"
check "merge_bom: one header, both rows" [ "$(cat "$out/mb.csv")" = "a,b
3,4
5,6" ]
# a manifest saved with a UTF-8 byte order mark and CRLF line ends: the mark
# is no part of the first script's name ("cannot open '<BOM>good_a.lua'")
printf '\357\273\277tests/batch/good_a.lua\r\n' > "$out/bom_manifest.txt"
expect batch_manifest_bom 0 "kvplan: batch: ok     tests/batch/good_a.lua" -- batch -d "$out/b_bom" -m "$out/bom_manifest.txt"
# pareto: concurrencies all above what every deployment runs at once are
# named (it said "no deployment ... holds one request of 120 tokens and starts")
expect pareto_concurrency_above 2 "kvplan: command line: argument 'concurrency': no deployment of llama-3.1-8b with at most 8 GPUs runs the concurrencies asked (l4 tp 1: it runs at most 256 requests at once, below concurrency 1000000, the least asked)" -- \
  pareto model=llama-3.1-8b gpus=l4 input=100 output=20 concurrency=1000000
# launch engine=k8s writes image= unquoted into the YAML: a value that is
# no image reference is refused (a line break then "securityContext:
# {privileged: true}" became a key of the container; 'x #c' a comment)
launch_at=$(grep -n "launch.command(d, engine" scripts/launch.lua | head -1 | cut -d: -f1)
expect launch_image_yaml 1 "kvplan: $KVPLAN_SCRIPTS/launch.lua:$launch_at: field 'image' must be a container image reference (letters, digits, '.', '_', '-', '/', ':', '@'; e.g. vllm/vllm-openai:v0.11.0), got 'x\n        securityContext: {privileged: true}'" -- \
  launch model=llama-3.1-8b gpu=l4 max_model_len=8192 engine=k8s "image=x
        securityContext: {privileged: true}"
check "launch_image_yaml: nothing written" [ ! -s "$out/launch_image_yaml.out" ]
expect launch_image_ok 0 "" -- launch model=llama-3.1-8b gpu=l4 max_model_len=8192 engine=k8s image=localhost:5000/vllm@sha256:0123abcd
check "launch_image_ok: the image as given" grep -qx "        image: localhost:5000/vllm@sha256:0123abcd" "$out/launch_image_ok.out"
# (brief hostile3) best's rank= without rate= was checked by kv.best only:
# status 1 at scripts/best.lua's line, not a usage error
expect best_rank_bad 2 "kvplan: command line: argument 'rank' must be gpus, cost or concurrency, got 'xyz'" -- \
  best model=llama-3.1-8b context=1024 concurrency=4 gpus=l4 rank=xyz
# simulate perf.KEY= of a rate or time the core refuses (perf.hbm_gbps=0):
# the core's "field 'hbm_gbps' must be a number > 0" at scripts/simulate.lua's line, status 1
expect sim_perf_zero 2 "kvplan: command line: perf 'hbm_gbps' must be a number > 0 (the GPU's memory bandwidth, GB/s), got 0" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=5 prompt=100 output=10 perf.hbm_gbps=0
expect sim_perf_tflops_zero 2 "kvplan: command line: perf 'tflops' must be a number > 0 (the GPU's dense peak, TFLOP/s), got 0" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=5 prompt=100 output=10 perf.tflops=-0
# simulate sigma= past the lognormal's bound: kv.workload's error at the script's line, status 1
expect sim_sigma_huge 2 "kvplan: command line: argument 'sigma' must be a number in [0, 10] (0: every request exactly the median), got '1e308'" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=5 prompt=100 output=10 sigma=1e308
# a list with an empty item was the list without it (fit tp=1,,2 planned tp 1 and 2)
expect list_empty_item 2 "kvplan: command line: argument 'tp' has an empty item in '1,,2' (expected values separated by single commas)" -- \
  fit model=llama-3.1-8b gpus=l4 tp=1,,2
expect list_trailing_comma 2 "kvplan: command line: argument 'gpus' has an empty item in 'l4,' (expected values separated by single commas)" -- \
  fit model=llama-3.1-8b gpus=l4,
expect list_leading_comma 2 "kvplan: command line: argument 'concurrency' has an empty item in ',1' (expected values separated by single commas)" -- \
  pareto model=llama-3.1-8b input=100 output=10 gpus=h100 concurrency=,1
# -o naming a file the run reads replaced that input with the report (the
# script itself, a startup log, a trace); a report the script names itself
# over an input (timeline=) too; merge may write over one of its parts
printf 'local kv = require "kvplan"\nkv.report{columns = {"a"}}:row{a = 1}\n' > "$out/self.lua"
cp "$out/self.lua" "$out/self.orig"
expect output_is_script 2 "kvplan: -o '$out/self.lua' is the script '$out/self.lua' of this run: the report would replace it (write the report to another file)" -- \
  "$out/self.lua" -o "$out/self.lua"
check "output_is_script: the script kept" cmp -s "$out/self.lua" "$out/self.orig"
ln -sf self.lua "$out/self-link.lua"
expect output_is_script_link 2 "kvplan: -o '$out/self-link.lua' is the script '$out/self.lua' of this run: the report would replace it (write the report to another file)" -- \
  "$out/self.lua" -o "$out/self-link.lua"
cp tests/validation/llmd-llama-3.1-8b-h100.log "$out/in.log"
expect output_is_log 2 "kvplan: -o '$out/in.log' is the input '$out/in.log' of this run: the report would replace it (write the report to another file)" -- \
  validate "$out/in.log" -o "$out/in.log"
check "output_is_log: the log kept" cmp -s "$out/in.log" tests/validation/llmd-llama-3.1-8b-h100.log
printf 'arrival,prompt,output\n0,100,10\n1,100,10\n' > "$out/in-trace.csv"
cp "$out/in-trace.csv" "$out/in-trace.orig"
expect output_is_trace 2 "kvplan: -o '$out/in-trace.csv' is the input 'trace=$out/in-trace.csv' of this run: the report would replace it (write the report to another file)" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/in-trace.csv" -o "$out/in-trace.csv"
# a command-line value: a usage error naming the argument (status 1 at
# simulate.lua's line before)
expect timeline_is_trace 2 "kvplan: command line: argument 'timeline=$out/in-trace.csv': cannot write '$out/in-trace.csv': it is the input 'trace=$out/in-trace.csv' of this run, which the report would replace (write the report to another file)" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/in-trace.csv" timeline="$out/in-trace.csv"
check "timeline_is_trace: the trace kept" cmp -s "$out/in-trace.csv" "$out/in-trace.orig"
# a word naming a file the run writes but does not read (timeline= of an earlier run) is rewritten
rm -f "$out/tl-again.csv"
expect timeline_again_1 0 "" -- simulate model=llama-3.1-8b gpu=h100 requests=3 prompt=10 output=2 timeline="$out/tl-again.csv"
expect timeline_again_2 0 "" -- simulate model=llama-3.1-8b gpu=h100 requests=3 prompt=10 output=2 timeline="$out/tl-again.csv"
expect output_is_part 0 "" -- merge -o "$out/in-trace.csv" "$out/in-trace.csv"
check "output_is_part: merge of one part over itself keeps it" cmp -s "$out/in-trace.csv" "$out/in-trace.orig"
# a number argument, price or arrival in hexadecimal was read (Lua's
# tonumber: utilization=0x1p-1 was 0.5); Python's float(), the engines'
# reader of these flags, refuses it
expect float_hex 2 "kvplan: command line: argument 'utilization' must be a number written in decimal, got '0x1p-1'" -- \
  fit model=llama-3.1-8b gpus=l4 utilization=0x1p-1
printf 'gpu,price_per_hour\nl4,0x10\n' > "$out/prices_hex.csv"
expect prices_hex 2 "kvplan: command line: argument 'prices': $out/prices_hex.csv:2: price_per_hour of 'l4' must be a number >= 0, got '0x10'" -- \
  best model=llama-3.1-8b context=1024 concurrency=4 gpus=l4 rank=cost prices="$out/prices_hex.csv"
printf 'arrival,prompt,output\n0x10,100,10\n' > "$out/trace_arrival_hex.csv"
expect trace_arrival_hex 2 "kvplan: command line: argument 'trace': $out/trace_arrival_hex.csv:2: bad arrival '0x10' (expected a number of seconds)" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/trace_arrival_hex.csv"
expect float_decimal_forms 0 "" -- fit model=llama-3.1-8b gpus=l4 utilization=.5
# a finite price whose cost over a candidate's GPUs passes the largest double
# ranked an inf cost: "column 'cost_per_hour' has no finite value (got inf)"
printf 'gpu,price_per_hour\nl4,1e308\n' > "$out/prices_huge.csv"
best_at=$(grep -n "^local ranked, shape = kv.best{" scripts/best.lua | head -1 | cut -d: -f1)
expect prices_huge 1 "kvplan: $KVPLAN_SCRIPTS/best.lua:$best_at: price_per_hour of gpu 'l4' = 1e+308: the cost of 2 GPUs exceeds the largest double (expected USD per GPU hour)" -- \
  best model=llama-3.1-8b context=1024 concurrency=4 gpus=l4 rank=cost prices="$out/prices_huge.csv"
# a latency finite in seconds past the largest double in milliseconds
# (perf.api_ms=1e308: the API server's queue): the report said "column
# 'ttft_ms_p50' has no finite value (got inf)"
sim_at=$(grep -n "kv.simulate(o)" scripts/simulate.lua | head -1 | cut -d: -f1)
expect sim_api_ms_huge 1 "kvplan: $KVPLAN_SCRIPTS/simulate.lua:$sim_at: a request's TTFT of 2e+306 s passes the largest double in milliseconds (expected latencies a report can hold: perf.api_ms, perf.request_ms and the step-time inputs give finite times)" -- \
  simulate model=llama-3.1-8b gpu=h100 requests=20 prompt=100 output=10 perf.api_ms=1e308
# ---- hostile4 (docs/reliability.md, 2026-12-06) ----
# trace rows the simulator refuses were read, then refused as "request 1:
# prompt and output must be >= 1 token" (or "field 'arrival' must be a finite
# number, got inf") at the script's line, status 1, naming no file or line
printf 'arrival_s,prompt_tokens,output_tokens\n0,10,10\n1,0,10\n' > "$out/trace_prompt0.csv"
expect trace_prompt_zero 2 "kvplan: command line: argument 'trace': $out/trace_prompt0.csv:3: prompt '0' must be >= 1 token" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/trace_prompt0.csv"
printf 'arrival_s,prompt_tokens,output_tokens\n0,10,0\n' > "$out/trace_output0.csv"
expect trace_output_zero 2 "kvplan: command line: argument 'trace': $out/trace_output0.csv:2: output '0' must be >= 1 token" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/trace_output0.csv"
printf 'arrival_s,prompt_tokens,output_tokens\n0,10,10\n1e999,10,10\n' > "$out/trace_arrival_inf.csv"
expect trace_arrival_inf 2 "kvplan: command line: argument 'trace': $out/trace_arrival_inf.csv:3: arrival '1e999' must be a finite time >= 0 s" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/trace_arrival_inf.csv"
printf 'arrival_s,prompt_tokens,output_tokens\n-1,10,10\n' > "$out/trace_arrival_neg.csv"
expect trace_arrival_negative 2 "kvplan: command line: argument 'trace': $out/trace_arrival_neg.csv:2: arrival '-1' must be a finite time >= 0 s" -- \
  simulate model=llama-3.1-8b gpu=h100 trace="$out/trace_arrival_neg.csv"
# launch checkpoint=--help: the engines' argparse takes it for a flag; it was
# kvplan's own read-back failing, "launch.parse: no model after the program"
expect launch_checkpoint_dash 2 "kvplan: command line: argument 'checkpoint' must be a model path or Hugging Face id that does not begin with '-' (write ./-x for a path '-x'), got '--help'" -- \
  launch model=llama-3.1-8b gpu=h100-sxm checkpoint=--help
expect launch_checkpoint_dash_sglang 2 "kvplan: command line: argument 'checkpoint' must be a model path or Hugging Face id that does not begin with '-' (write ./-x for a path '-x'), got '-x'" -- \
  launch model=llama-3.1-8b gpu=h100-sxm engine=sglang checkpoint=-x
# flashinfer_sampler=false (the default from vLLM 0.21 is true) wrote no
# VLLM_USE_FLASHINFER_SAMPLER and failed its own read-back, "a kvplan bug"
expect launch_flashinfer_false 0 "" -- launch model=llama-3.1-8b gpu=h100-sxm flashinfer_sampler=false
check "launch_flashinfer_false: VLLM_USE_FLASHINFER_SAMPLER=0 written" grep -q '^VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve ' "$out/launch_flashinfer_false.out"
# a Kubernetes container's args expand $(VAR) and read $$ as $: a checkpoint
# '$(HOME)/m' was the container's home; now every '$' doubled
expect launch_k8s_dollar 0 "" -- launch model=llama-3.1-8b gpu=h100-sxm engine=k8s 'checkpoint=$(HOME)/m'
check "launch_k8s_dollar: \$ doubled in args" grep -qxF '        - "$$(HOME)/m"' "$out/launch_k8s_dollar.out"
# calibrate of figures far from any prediction printed each error with %.1f:
# a measured 1e-300 tok/s was a cell of 300 digits
printf 'input_len,output_len,concurrency,requests,output_tok_s,mean_ttft_ms,mean_tpot_ms\n256,100,48,300,1e-300,1e-300,1e-300\n' > "$out/cal_tiny.csv"
expect calibrate_tiny_figures 0 "" -- calibrate "$out/cal_tiny.csv" model=llama-3.1-8b gpu=h100 -o "$out/cal_tiny.json"
check "calibrate_tiny_figures: errors as %.3g, no line past 200 columns" sh -c "grep -q 'e+[0-9]* %' '$out/calibrate_tiny_figures.out' &&
  ! awk 'length > 200 { bad = 1 } END { exit !bad }' '$out/calibrate_tiny_figures.out'"
# an input read with io.open (calibrate's profile) was not marked read, so a
# report the script writes over it replaced it: the profile became the timeline
cp tests/fixtures/calibrate/vllm_serve_c4.json "$out/h4-results.json"
"$kvplan" calibrate "$out/h4-results.json" model=mistral-7b-v0.3 gpu=rtx-4090 -o "$out/h4-profile.json" > /dev/null 2>&1
cp "$out/h4-profile.json" "$out/h4-profile.orig"
expect timeline_is_profile 2 "kvplan: command line: argument 'timeline=$out/h4-profile.json': cannot write '$out/h4-profile.json': it is the input 'profile=$out/h4-profile.json' of this run, which the report would replace (write the report to another file)" -- \
  simulate model=mistral-7b-v0.3 gpu=rtx-4090 requests=5 profile="$out/h4-profile.json" timeline="$out/h4-profile.json"
check "timeline_is_profile: the profile kept" cmp -s "$out/h4-profile.json" "$out/h4-profile.orig"
# an axis value given twice, by value or by two names of one entry, ran every
# row twice (best ranked a candidate "ties with" itself); now a usage error
expect axis_dup_value 2 "kvplan: command line: argument 'tp' gives '2' twice in '2,1,2' (items 1 and 3; expected each value once)" -- \
  capacity model=llama-3.1-8b gpus=l4 tp=2,1,2
expect axis_dup_gpu 2 "kvplan: command line: argument 'gpus' gives 'l4' twice in 'l4,l4' (items 1 and 2; expected each value once)" -- \
  best model=llama-3.1-8b context=4096 concurrency=8 gpus=l4,l4
expect axis_dup_alias 2 "kvplan: command line: argument 'gpus' names gpu 'h100-sxm' twice ('h100', item 1, and 'H100-SXM', item 2; expected each once)" -- \
  pareto model=llama-3.1-8b gpus=h100,H100-SXM input=100 output=10
expect axis_dup_sim 2 "kvplan: command line: argument 'gpu' names gpu 'l4' twice ('l4', item 1, and 'L4', item 2; expected each once)" -- \
  simulate model=llama-3.1-8b gpu=l4,L4 requests=5
expect axis_one_item 0 "" -- capacity model=llama-3.1-8b gpus=l4 tp=1 kv=bf16 -f csv
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
