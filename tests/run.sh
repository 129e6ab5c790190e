#!/usr/bin/env bash
# run.sh - the whole test suite behind `make test` and `make sanitize`. Each part prints
# a line "PART: N passed, N failed[, N skipped]"; the totals close the run.
#
# The parts run KGEN_TEST_JOBS at a time (default 2: the machines this runs on have two
# cores), the longest first. Each part's output is kept in $BUILD/parts/ and printed in the
# order of the list below when the part is done, with a line
# "time PART: W s wall, C s CPU (U user + S sys)" after it; $BUILD/test.log gets the
# parts' whole output, in the same order. The four conformance runs (C, OpenCL, JS, WASM)
# share their first step (the fifth, WebGPU's, makes its own): tests/conf_gen.sh makes every ONNX node test's code for the c,
# opencl, js and wasm targets once, one kgen process per test, in $BUILD/conf-gen.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
JOBS=${KGEN_TEST_JOBS:-2}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
export KGEN BUILD
log=$BUILD/test.log
mkdir -p $BUILD
: > $log
t0=$(date +%s.%N)

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
# timed NAME FILE: the line "time NAME: ..." from FILE's "WALL USER SYS" (bash's time)
TIMEFORMAT='%R %U %S'
timed() {
  awk -v n="$1" 'NF == 3 { w = $1; u = $2; s = $3 }
    END { if (w != "") printf "time %s: %.1f s wall, %.1f s CPU (%.1f user + %.1f sys)\n", n, w, u + s, u, s }' "$2"
}

# unit tests: one program each; a program that crashes counts as one failure
{ time for t in $BUILD/tests/test_*; do
  [ -x "$t" ] || continue
  out=$("$t" "${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}" 2>&1); rc=$?
  summary=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_./-]+: [0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -z "$summary" ] || { [ $rc -ne 0 ] && ! printf '%s' "$summary" | grep -q ' [1-9][0-9]* failed'; }; then
    printf '%s\n' "$out" | tail -20
    summary="$(basename $t): 0 passed, 1 failed"
  elif [ $rc -ne 0 ]; then
    printf '%s\n' "$out" | grep -v -E ' passed, ' | tail -30
  fi
  tally <<< "$summary"
done; } 2> $BUILD/unit.time
timed unit $BUILD/unit.time

# the parts, in the order they are printed
parts=()
for p in golden exec tune errors passes onnx controlflow layout winograd models dyn dyn_arena dyn_values threads published weights baremetal tensorize fuzz_replay gpu dyn_gpu webgpu \
         conformance js dyn_js conformance_js conformance_wasm conformance_webgpu browser conformance-opencl fuzz_graphs; do
  [ -f tests/${p%-opencl}.sh ] && parts+=($p)
done
# the order they start in: the longest first (CPU seconds of a run on 2 cores, 2026-12-02:
# conformance-opencl 327, conformance_wasm 232, published 127, conformance 107,
# conformance_webgpu 107, js 87, webgpu 85, fuzz_replay 82, fuzz_graphs 73, tensorize 72,
# gpu 66, layout 62, dyn_gpu 58; dyn_js and dyn_values about 100 each), then the rest: a long part started
# last runs alone on one core at the end
first=" conformance-opencl conformance_wasm published dyn_js dyn_values conformance conformance_js conformance_webgpu js webgpu fuzz_replay fuzz_graphs tensorize gpu layout dyn_gpu "
start=()
for p in $first; do [[ " ${parts[*]} " == *" $p "* ]] && start+=($p); done
for p in "${parts[@]}"; do [[ $first == *" $p "* ]] || start+=($p); done

dir=$BUILD/parts
rm -rf $dir
mkdir -p $dir
# the conformance runs' shared step 1 (tests/conf_gen.sh), made fresh for this run; a
# run with another kgen (tests/tensorize.sh's) makes its own
export KGEN_CONF_GEN=$(cd $BUILD && pwd)/conf-gen KGEN_CONF_GEN_TARGETS="c opencl js wasm"
export KGEN_CONF_GEN_KGEN=$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")
rm -rf "$KGEN_CONF_GEN"

# part NAME: its output in $dir/NAME.out, its times in NAME.time, then NAME.done. The
# conformance runs take both node-test folders (1765 tests), except OpenCL: it takes the
# first folder alone (1263), as pocl makes it the longest part (about 4 CPU s per 10 tests
# against 1 for C), and its kernels come from the C-family printer that also writes the C
# the second folder runs through; KGEN_CONF_OPENCL_ALL=1 gives it both folders too.
part() {
  if [ $1 = conformance-opencl ]; then
    local more=
    [ "${KGEN_CONF_OPENCL_ALL:-0}" = 1 ] && more=${KGEN_ONNX_TESTS_MORE-tests/data/onnx-node-tests-more}
    { time KGEN_CONF_TARGET=opencl KGEN_ONNX_TESTS_MORE=$more bash tests/conformance.sh > $dir/$1.out 2>&1; } 2> $dir/$1.time
  else
    { time bash tests/$1.sh > $dir/$1.out 2>&1; } 2> $dir/$1.time
  fi
  : > $dir/$1.done
}
# print the parts that are done, in order, up to the first that is not
next=0
show() {
  local p
  while [ $next -lt ${#parts[@]} ] && [ -f $dir/${parts[$next]}.done ]; do
    p=${parts[$next]}
    grep -E '^(FAIL|SKIP|GAP CLOSED|KNOWN FAIL)|^    |: [0-9]+ passed, [0-9]+ failed' $dir/$p.out > $dir/$p.lines
    tally < $dir/$p.lines
    timed $p $dir/$p.time
    cat $dir/$p.out >> $log
    next=$((next + 1))
  done
}
running=0
for p in "${start[@]}"; do
  if [ $running -ge $JOBS ]; then
    wait -n
    running=$((running - 1))
    show
  fi
  part $p &
  running=$((running + 1))
done
while [ $running -gt 0 ]; do
  wait -n
  running=$((running - 1))
  show
done
wait
show

times > $BUILD/run.times
awk -v t0=$t0 -v t1=$(date +%s.%N) 'NR == 2 {
    for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); c[i] = a[1] * 60 + a[2] }
    printf "time all: %.1f s wall, %.1f s CPU (%.1f user + %.1f sys)\n", t1 - t0, c[1] + c[2], c[1], c[2] }' $BUILD/run.times
echo "$total_p passed, $total_f failed, $total_s skipped"
[ $total_f -eq 0 ]
