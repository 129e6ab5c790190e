#!/usr/bin/env bash
# fuzz_graphs.sh - the random-graph differential test (`make fuzz-graphs`, a part of
# `make test`; tests/fuzz/README.md). For seeds FIRST .. FIRST+N-1:
#  1. $BUILD/graphgen SEED DIR writes a random valid ONNX graph with seeded inputs
#     (tests/fuzz/graphgen.c) as node test gSEED under $BUILD/fuzz-graphs/tests;
#  2. `kgen --interp-write` writes its expected outputs: kgen's loop-IR interpreter on the
#     imported program, lowered without the layout pass or any schedule, so the reference
#     shares none of the layout, fusion and schedule code under test. A graph the
#     interpreter cannot build is skipped (SKIP line with kgen's message);
#  3. where onnxruntime-node is installed (ORT_DIR, else /work/ort-cache; optional), the
#     interpreter's outputs are checked against onnxruntime's with graph optimizations
#     disabled (tests/fuzz/ort_ref.mjs): a disagreement fails the graph as "reference";
#  4. the graphs run through the conformance machinery, each target judged by the node
#     tests' rule |got-exp| <= 1e-5 + 1e-3*|exp|: c (tests/conformance.sh, the default
#     layout: auto, NCHWc16 where a conv has 16 or more output channels), c-nchw (the same
#     with --layout=nchw, KGEN_CONF_FLAGS), c-avx2 (-mattr=+avx2,+fma: NCHWc8 and the
#     SIMD micro-kernels, built with -mavx2 -mfma; skipped on a CPU without them), opencl
#     (pocl), js (tests/conformance_js.sh), wasm and wasm-simd (tests/conformance_wasm.sh);
#     c-nchwc8 (--layout=nchwc8) on request. A target whose tools are missing is skipped
#     (its runner prints why).
# Every failing graph's folder is copied to $BUILD/fuzz-graphs-failed/gSEED with a line
# "FAIL gSEED (TARGET): reason" and a one-line reproduction command. The last line is
# "fuzz-graphs: N passed, N failed, N skipped", counting (graph, target) pairs.
#
#   bash tests/fuzz_graphs.sh [FIRST [N]]
#
# Environment: FUZZ_SEED (FIRST, 1), FUZZ_N (N, 40), FUZZ_TARGETS (the list above,
# space-separated), FUZZ_ORT (auto: use onnxruntime when found; 0: never; 1: required),
# KGEN (./kgen), BUILD (build), CC (cc), KGEN_REQUIRE_ALL (passed on to the runners).
set -u
export LC_ALL=C
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
FIRST=${1:-${FUZZ_SEED:-1}}
N=${2:-${FUZZ_N:-40}}
TARGETS=${FUZZ_TARGETS:-c c-nchw c-avx2 opencl js wasm wasm-simd}
ORT=${FUZZ_ORT:-auto}
ORT_DIR=${ORT_DIR:-/work/ort-cache}
here=$(cd "$(dirname "$0")" && pwd)
part=fuzz-graphs

if ! [[ $FIRST =~ ^[0-9]+$ && $N =~ ^[0-9]+$ ]]; then
  echo "FAIL $part: FIRST ($FIRST) and N ($N) must be non-negative integers"
  echo "$part: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
if [ ! -x "$KGEN" ]; then
  echo "FAIL $part: $KGEN is not an executable (run make first)"
  echo "$part: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
mkdir -p "$BUILD"
gg=$BUILD/graphgen
if [ ! -x "$gg" ] || [ "$here/fuzz/graphgen.c" -nt "$gg" ]; then
  if ! ${CC:-cc} -std=c11 -Wall -Wextra -O2 "$here/fuzz/graphgen.c" -lm -o "$gg" 2> "$BUILD/graphgen.log"; then
    echo "FAIL $part: tests/fuzz/graphgen.c does not build"
    head -20 "$BUILD/graphgen.log"
    echo "$part: 0 passed, 1 failed, 0 skipped"
    exit 1
  fi
fi
work=$(cd "$BUILD" && pwd)/fuzz-graphs
failed=$(cd "$BUILD" && pwd)/fuzz-graphs-failed
kgen_abs=$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")
rm -rf "$work"
mkdir -p "$work/tests" "$failed"
# the runners below make their own code for these tests, never tests/run.sh's shared step
unset KGEN_CONF_GEN KGEN_CONF_GEN_TARGETS KGEN_CONF_GEN_KGEN KGEN_CONF_ONLY
t0=$SECONDS

# ---------------------------------------------------------------- 1. graphs, 2. references
head -1 "$here/data/onnx-node-tests/MANIFEST.tsv" > "$work/all.tsv"
for ((s = FIRST; s < FIRST + N; s++)); do
  d=$work/tests/g$s
  mkdir -p "$d/test_data_set_0"
  if ! "$gg" "$s" "$d" >> "$work/all.tsv" 2> "$work/graphgen.err"; then
    echo "FAIL g$s (graphgen): $(head -1 "$work/graphgen.err")"
  fi
done
# one interpreter process per 25 graphs; a graph whose reference it cannot make is skipped
(cd "$work/tests" && ls -d g* 2> /dev/null | sort -V | xargs -r -n 25 timeout 600 "$kgen_abs" --interp-write) \
  > "$work/interp.log" 2>&1
declare -A skip_why fail_why
while IFS= read -r line; do
  case "$line" in
    "PASS "*) ;;
    "FAIL "*|"ERROR "*)
      n=${line#* }; n=${n%%:*}; skip_why[$n]="interpreter: ${line#*: }" ;;
  esac
done < "$work/interp.log"
for d in "$work"/tests/g*/; do
  n=$(basename "$d")
  [ -n "${skip_why[$n]:-}" ] || [ -f "$d/test_data_set_0/output_0.pb" ] ||
    skip_why[$n]="interpreter: no output (killed or timed out)"
done
t_ref=$SECONDS

# ---------------------------------------------------------------- 3. onnxruntime
ort_note="onnxruntime not used (FUZZ_ORT=0)"
if [ "$ORT" != 0 ]; then
  if command -v node > /dev/null 2>&1 && [ -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
    (cd "$work/tests" && ls -d g* | sort -V | while read -r n; do
       [ -f "$n/test_data_set_0/output_0.pb" ] && echo "$work/tests/$n"
     done | xargs -r -n 200 node "$here/fuzz/ort_ref.mjs" --ort "$ORT_DIR") > "$work/ort.log" 2> "$work/ort.err"
    agree=$(grep -c '^PASS ' "$work/ort.log")
    while IFS= read -r line; do
      n=${line#* }; n=${n%%:*}; n=$(basename "$n")
      case "$line" in
        "FAIL "*) fail_why[$n]="reference: the interpreter and onnxruntime disagree: ${line#*: }" ;;
        "ERROR "*) echo "NOTE $n: onnxruntime refuses the graph: ${line#*: }" ;;
      esac
    done < <(grep -E '^(FAIL|ERROR) ' "$work/ort.log")
    ort_note="onnxruntime agrees with the interpreter on $agree graphs"
  elif [ "$ORT" = 1 ]; then
    echo "FAIL $part: onnxruntime-node not found under $ORT_DIR/node_modules (FUZZ_ORT=1)"
    echo "$part: 0 passed, 1 failed, 0 skipped"
    exit 1
  else
    ort_note="onnxruntime-node not found under $ORT_DIR/node_modules: interpreter reference only"
  fi
fi

# the tests that have a reference, as a node-test folder for the runners
awk -F'\t' 'FILENAME == "-" { skip[$1] = 1; next } FNR == 1 || !($1 in skip)' \
  - "$work/all.tsv" < <(for n in "${!skip_why[@]}"; do echo "$n"; done) > "$work/tests/MANIFEST.tsv"
t_ort=$SECONDS
ntests=$(($(wc -l < "$work/tests/MANIFEST.tsv") - 1))

# ---------------------------------------------------------------- 4. the targets
# run TARGET: its runner on the folder; results in $work/TARGET.tsv (name, status, reason)
declare -A target_skip
run_target() {
  local t=$1 b=$work/run-$1 res=/nonexistent
  # batches of half the tests (60 at most): both cores compile, one C unit each
  local half=$(( (ntests + 1) / 2 ))
  [ $half -ge 1 ] || half=1
  [ $half -le 60 ] || half=60
  local -a env=(KGEN="$kgen_abs" BUILD="$b" KGEN_ONNX_TESTS="$work/tests" KGEN_ONNX_TESTS_MORE=
                KGEN_CONF_BATCH=$half KGEN_CONF_WASM_BATCH=$half)
  mkdir -p "$b"
  case $t in
    c) env "${env[@]}" bash "$here/conformance.sh"; res=$b/conf/results.tsv ;;
    c-nchw) env "${env[@]}" KGEN_CONF_FLAGS=--layout=nchw bash "$here/conformance.sh"; res=$b/conf/results.tsv ;;
    c-nchwc8) env "${env[@]}" KGEN_CONF_FLAGS=--layout=nchwc8 bash "$here/conformance.sh"; res=$b/conf/results.tsv ;;
    c-wino) env "${env[@]}" KGEN_CONF_FLAGS=--winograd=all bash "$here/conformance.sh"; res=$b/conf/results.tsv ;;
    c-avx2)
      if grep -qw avx2 /proc/cpuinfo 2> /dev/null && grep -qw fma /proc/cpuinfo; then
        env "${env[@]}" KGEN_CONF_FLAGS=-mattr=+avx2,+fma KGEN_GEN_CFLAGS="${KGEN_GEN_CFLAGS:-} -mavx2 -mfma" \
          bash "$here/conformance.sh"
      else
        echo "SKIP c-avx2: this CPU has no AVX2 and FMA"
      fi
      res=$b/conf/results.tsv ;;
    opencl) env "${env[@]}" KGEN_CONF_TARGET=opencl bash "$here/conformance.sh"; res=$b/conf-opencl/results.tsv ;;
    js) env "${env[@]}" bash "$here/conformance_js.sh"; res=$b/conf_js/results.tsv ;;
    wasm|wasm-simd)
      # one runner makes both variants, each on every graph
      if [ ! -f "$work/run-wasm/conf_wasm/list.tsv" ]; then
        env "${env[@]}" KGEN_CONF_WASM_SCALAR_EVERY=1 BUILD="$work/run-wasm" bash "$here/conformance_wasm.sh"
      else
        cat "$work/run-wasm.out"
      fi
      res=$work/run-wasm/conf_wasm/results-$t.tsv ;;
    *) echo "SKIP $part: unknown target '$t' in FUZZ_TARGETS (use c c-nchw c-nchwc8 c-wino c-avx2 opencl js wasm wasm-simd)" ;;
  esac > "$work/run-$t.out" 2>&1
  if [ -f "$res" ]; then
    # results.tsv rows: name, op, status, reason
    awk -F'\t' -v OFS='\t' '{ print $1, $3, $4 }' "$res" > "$work/$t.tsv"
  else
    target_skip[$t]=$(grep -m1 -E '^(SKIP|FAIL) ' "$work/run-$t.out" || echo "no results (see $work/run-$t.out)")
    : > "$work/$t.tsv"
  fi
}
for t in $TARGETS; do
  run_target "$t"
done
t_run=$SECONDS

# ---------------------------------------------------------------- report
pass=0 fail=0 skip=0
repro() {
  echo "    reproduce: make fuzz-graphs SEED=${1#g} N=1 TARGETS=$2   (or: $gg ${1#g} DIR && ./kgen --interp-write DIR && ./kgen DIR/model.onnx --target ${2%%-*} ...)"
}
keep() {
  rm -rf "$failed/$1"
  cp -r "$work/tests/$1" "$failed/$1"
  local t=$2
  [ "$t" = reference ] && t=c   # any run checks the reference
  printf 'graphgen seed %s\nmake fuzz-graphs SEED=%s N=1 TARGETS="%s"\n' "${1#g}" "${1#g}" "$t" > "$failed/$1/REPRO"
}
mapfile -t names < <(awk -F'\t' 'NR > 1 { print $1 }' "$work/all.tsv")
ntargets=$(wc -w <<< "$TARGETS")
for n in "${names[@]}"; do
  if [ -n "${skip_why[$n]:-}" ]; then
    echo "SKIP $n: ${skip_why[$n]}"
    skip=$((skip + ntargets))
    continue
  fi
  if [ -n "${fail_why[$n]:-}" ]; then
    echo "FAIL $n (reference): ${fail_why[$n]}"
    keep "$n" reference
    echo "    kept in $failed/$n; check: node tests/fuzz/ort_ref.mjs $failed/$n"
    fail=$((fail + ntargets))
    continue
  fi
  for t in $TARGETS; do
    if [ -n "${target_skip[$t]:-}" ]; then
      skip=$((skip + 1))
      continue
    fi
    row=$(awk -F'\t' -v n="$n" '$1 == n { print $2 "\t" $3; exit }' "$work/$t.tsv")
    st=${row%%$'\t'*} why=${row#*$'\t'}
    case "$st" in
      PASS) pass=$((pass + 1)) ;;
      SKIP) skip=$((skip + 1)) ;;
      *)
        [ -n "$st" ] || why="no result"
        [ "$st" = FAIL ] && st=
        echo "FAIL $n ($t): ${st:+$st: }$why"
        keep "$n" "$t"
        repro "$n" "$t"
        fail=$((fail + 1)) ;;
    esac
  done
done
for t in $TARGETS; do
  [ -n "${target_skip[$t]:-}" ] && echo "SKIP $part ($t): ${target_skip[$t]}"
done
echo "($ort_note; seeds $FIRST..$((FIRST + N - 1)); graphs and references $((t_ref - t0)) s, onnxruntime $((t_ort - t_ref)) s, targets $((t_run - t_ort)) s; failing graphs kept in $failed)"
if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
  for t in $TARGETS; do
    [ -n "${target_skip[$t]:-}" ] && fail=$((fail + 1))
  done
fi
echo "$part: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
