#!/usr/bin/env bash
# controlflow.sh - the ONNX node tests of control flow (If, Loop, Scan, and Range's
# expansion, whose Range is a Loop) from ${KGEN_ONNX_TESTS_MORE:-tests/data/onnx-node-tests-more},
# through the four conformance runs: C (conformance.sh), OpenCL (the same with
# KGEN_CONF_TARGET=opencl), JS (conformance_js.sh) and WASM (conformance_wasm.sh), each
# into its own $BUILD/controlflow/TARGET. Tests whose inputs or outputs are sequences or
# optionals are skipped (kgen refuses them with a message naming the input or the node).
# Each run's closing line is printed as "controlflow-TARGET: N passed, N failed, N skipped".
set -u
KGEN=$(cd "$(dirname "${KGEN:-./kgen}")" && pwd)/$(basename "${KGEN:-./kgen}")
BUILD=${BUILD:-build}
TESTS=${KGEN_ONNX_TESTS_MORE:-tests/data/onnx-node-tests-more}
ONLY='^test_(if|loop|scan|range_.*_expanded)'
SKIP='^(FLOAT8E8M0|FLOAT4.*|INT4|UINT4|INT2|UINT2|STRING|sequence_type|optional_type)$'
mkdir -p $BUILD/controlflow
for t in c opencl js wasm; do
  case $t in
    c) script=conformance.sh ;; opencl) script=conformance.sh ;;
    js) script=conformance_js.sh ;; wasm) script=conformance_wasm.sh ;;
  esac
  out=$BUILD/controlflow/$t.out
  mkdir -p $BUILD/controlflow/$t
  # unset KGEN_CONF_GEN: the suite's shared step 1 holds the other folder's tests
  env -u KGEN_CONF_GEN KGEN="$KGEN" BUILD=$BUILD/controlflow/$t KGEN_ONNX_TESTS="$TESTS" KGEN_ONNX_TESTS_MORE= KGEN_CONF_ONLY="$ONLY" \
    KGEN_CONF_SKIP="$SKIP" KGEN_CONF_TARGET=$t KGEN_CONF_BATCH=20 bash tests/$script > $out 2>&1
  grep -E '^(FAIL|SKIP)' $out | sed "s/^/    /"
  last=$(grep -E '^[A-Za-z_-]+: [0-9]+ passed, [0-9]+ failed' $out | tail -1)
  if [ -z "$last" ]; then
    echo "FAIL controlflow-$t: no result (see $out)"
    echo "controlflow-$t: 0 passed, 1 failed"
  else
    echo "controlflow-$t:${last#*:}"
  fi
done
