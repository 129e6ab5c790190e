#!/usr/bin/env bash
# run.sh - the whole test suite behind `make test` and `make sanitize`. Each part prints
# a line "PART: N passed, N failed[, N skipped]"; the totals close the run.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
export KGEN BUILD
log=$BUILD/test.log
mkdir -p $BUILD
: > $log

total_p=0 total_f=0 total_s=0
tally() {
  # read "NAME: N passed, N failed[, N skipped]" lines from stdin, echo them, add them up
  local line
  while IFS= read -r line; do
    echo "$line"
    if [[ $line =~ ^[A-Za-z0-9_./-]+:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
      total_p=$((total_p + BASH_REMATCH[1]))
      total_f=$((total_f + BASH_REMATCH[2]))
      total_s=$((total_s + ${BASH_REMATCH[4]:-0}))
    fi
  done
}

# unit tests: one program each; a program that crashes counts as one failure
for t in $BUILD/tests/test_*; do
  [ -x "$t" ] || continue
  out=$("$t" "${KGEN_ONNX_TESTS:-../shared/onnx-node-tests}" 2>&1); rc=$?
  summary=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -z "$summary" ] || { [ $rc -ne 0 ] && ! printf '%s' "$summary" | grep -q ' [1-9][0-9]* failed'; }; then
    printf '%s\n' "$out" | tail -20
    summary="$(basename $t): 0 passed, 1 failed"
  elif [ $rc -ne 0 ]; then
    printf '%s\n' "$out" | grep -v -E ' passed, ' | tail -30
  fi
  tally <<< "$summary"
done

for part in tests/golden.sh tests/exec.sh tests/tune.sh tests/errors.sh tests/onnx.sh tests/layout.sh tests/models.sh tests/baremetal.sh tests/tensorize.sh tests/fuzz_replay.sh tests/gpu.sh tests/conformance.sh tests/js.sh tests/conformance_js.sh tests/conformance_wasm.sh tests/browser.sh; do
  [ -f $part ] || continue
  tally < <(bash $part 2>&1 | tee -a $log | grep -E '^(FAIL|SKIP)|^    |: [0-9]+ passed, [0-9]+ failed')
done
# the conformance set again, through the OpenCL target
tally < <(KGEN_CONF_TARGET=opencl bash tests/conformance.sh 2>&1 | tee -a $log | grep -E '^(FAIL|SKIP)|^    |: [0-9]+ passed, [0-9]+ failed')

echo "$total_p passed, $total_f failed, $total_s skipped"
[ $total_f -eq 0 ]
