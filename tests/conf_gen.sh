#!/usr/bin/env bash
# conf_gen.sh - step 1 of the conformance runs (conformance.sh, conformance_js.sh,
# conformance_wasm.sh): kgen on ONNX node tests, for one target or several.
#
#   conf_gen.sh GEN KGEN TESTS TARGET... < LIST
#
# LIST has lines "test name<TAB>C name". For each test, and each TARGET that GEN holds no
# result of yet, kgen runs as
#   KGEN TESTS/NAME/model.onnx --target T -o DIR --name C --bind-inputs TESTS/NAME/test_data_set_0
# with DIR = GEN/C for a single TARGET, GEN/C/T for several. Its exit status and first
# non-blank line of output (tabs made spaces, 300 bytes at most) become a row
# "test name<TAB>C name<TAB>T<TAB>status<TAB>first line" of GEN/status.*.tsv (one file per
# worker). Each kgen run is limited to 120 s where coreutils' timeout exists (status 124).
# KGEN_CONF_FLAGS (empty) adds options to every kgen run, e.g. --layout=nchw for
# tests/fuzz_graphs.sh (a GEN made with other flags than the run's must not be reused).
#
# With several targets, the ones a test lacks are made by ONE kgen process
# (`--target c,opencl,...` writes DIR/T for each). kgen compiles each target of the list on
# its own, so when that run exits 0 each target's files are those of a run for it alone,
# and 0 is each one's status. When it does not (a target kgen refuses, a timeout, a crash),
# its files go and every target runs alone: each status and message is its own run's.
# tests/run.sh has every target of `make test` made so, once (KGEN_CONF_GEN).
#
# Two kgen runs at a time, in workers of 16 tests: one process start per test and run, as
# process starts are most of this step's time. Runs on the same GEN wait for each other
# (flock), so that what one made the next one finds.
set -u
export LC_ALL=C
gen=$1 kgen=$2 tests=$3
shift 3

if [ "${1:-}" = --worker ]; then
  # --worker NESTED "NAME<TAB>C<TAB>T[,T...]"...: one worker's tests, rows into GEN/status.PID.tsv
  nested=$2
  shift 2
  to=""
  command -v timeout > /dev/null 2>&1 && to="timeout 120"
  # run NAME C DIR T[,T...]: one kgen run; the rows of its targets, unless several failed
  run() {
    local name=$1 c=$2 out=$3 list=$4 rc line first="" t ts log=$gen/$c.${4//[, ]/_}.log
    $to "$kgen" "$tests/$name/model.onnx" --target "$list" -o "$out" --name "$c" \
      --bind-inputs "$tests/$name/test_data_set_0" ${KGEN_CONF_FLAGS:-} > "$log" 2>&1
    rc=$?
    [ $rc = 0 ] || [ "${list/,/}" = "$list" ] || return $rc
    while IFS= read -r line || [ -n "$line" ]; do
      [[ $line =~ ^[[:space:]]*$ ]] && continue
      first=${line//$'\t'/ }
      first=${first:0:300}
      break
    done < "$log"
    IFS=, read -r -a ts <<< "$list"
    for t in "${ts[@]}"; do
      printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$t" "$rc" "$first"
    done >> "$gen/status.$$.tsv"
  }
  for arg in "$@"; do
    IFS=$'\t' read -r name c list <<< "$arg"
    if [ $nested = 0 ]; then
      run "$name" "$c" "$gen/$c" "$list"
    elif [ "${list/,/}" = "$list" ]; then
      run "$name" "$c" "$gen/$c/$list" "$list"
    elif ! run "$name" "$c" "$gen/$c" "$list"; then
      IFS=, read -r -a ts <<< "$list"
      for t in "${ts[@]}"; do
        rm -rf "$gen/$c/$t"
        run "$name" "$c" "$gen/$c/$t" "$t"
      done
    fi
  done
  exit 0
fi

nested=0
[ $# -gt 1 ] && nested=1
mkdir -p "$gen"
if command -v flock > /dev/null 2>&1; then
  exec 8> "$gen/.lock"
  flock 8
fi
# the targets each test lacks, in workers of 16 tests, two at a time
shopt -s nullglob
targets=$(IFS=,; echo "$*")
awk -F'\t' -v targets="$targets" '
  FILENAME ~ /status\.[0-9]+\.tsv$/ { done[$2, $3] = 1; next }
  {
    miss = ""
    n = split(targets, t, ",")
    for (i = 1; i <= n; i++) if (!(($2, t[i]) in done)) miss = miss (miss == "" ? "" : ",") t[i]
    if (miss != "") print $1 "\t" $2 "\t" miss
  }' "$gen"/status.*.tsv - |
  xargs -d '\n' -P 2 -n 16 bash "$0" "$gen" "$kgen" "$tests" --worker $nested 2> /dev/null
exit 0
