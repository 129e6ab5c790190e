#!/usr/bin/env bash
# dyn_values.sh - output extents computed from input values (IrDim.count: NonZero,
# Compress, Unique, TopK with a run-time K, NonMaxSuppression, a run-time Loop's scan
# outputs, also of a trip count decided by run-time dims), end to end on every target
# that takes them.
#
# For each tests/models/dyn_*/net.onnx (made by tests/models/make_dyn_values.py, with
# references from torch/numpy, or onnxruntime with graph optimizations disabled), through
# the C target, js, wasm (SIMD128), wasm -nosimd (node, emcc) and opencl (pocl):
#   1. kgen net.onnx --main ONCE (kgen_args holding the --dim), the runner built (C and
#      the OpenCL host with strict flags, -Werror; wasm with emcc); JS and WASM: --info
#      lists the count as a dim "(computed from values)" (dims: computed: true; dyn_loopm,
#      a Loop whose trip count is the run-time dim T and which has no condition: dim T,
#      the scan output's extent), and
#      dyn_mixed's module passes tests/js/dyn_values.mjs (its exports, run(), the JS model
#      function, the refusal);
#   2. the same runner on every input set in_S_*.npy (the sets select different counts,
#      none to all), each output compared with out_S_J.npy (npycmp: shape, dtype, values:
#      the outputs are written at their real shapes);
#   3. where the model has bad_0_*.npy (dyn_mixed: a count that meets a dim given at run
#      time), inputs whose extents do not agree: the model refuses them while it runs
#      (exit 1; C and OpenCL: KGEN_ERR_SHAPE, "wrong shape"; JS: the condition named;
#      WASM: status 4), no output written;
#   4. --bench 3 on the last set: the runs after the first get the capacity again (the C
#      runner sets the output shapes back) and succeed.
# CUDA: each model's .cu compiles with nvcc -c (sm_90, warnings as errors). Metal: each
# model's .metal passes tests/tools/metal-check, its manifest (JSON) names the buffer and
# the launch of each count, its tables file is plain C (dyn_loop, dyn_loopm, dyn_loopmc:
# the Metal host refuses a run-time loop, with a message). The target that still refuses such extents (webgpu:
# it takes no run-time dims) says so clearly.
# A missing node, emcc, OpenCL or nvcc is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Prints
# FAIL lines and last "dyn_values: N passed, N failed, N skipped". Run from the repository
# root (KGEN, BUILD, CC honoured).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
out=$BUILD/dyn_values
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL dyn_values $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP dyn_values $1"; skip=$((skip + 1)); fi
}
finish() { echo "dyn_values: $pass passed, $fail failed, $skip skipped"; [ $fail = 0 ]; exit; }

rm -rf $out; mkdir -p $out
root=$(pwd)
export POCL_CACHE_DIR=$root/$out/pocl-cache
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm > $out/npycmp.log 2>&1; then
  bad "cannot build tests/models/npycmp.c"; finish
fi

targets=(c)
if command -v node > /dev/null 2>&1; then
  targets+=(js)
  if command -v emcc > /dev/null 2>&1; then targets+=(wasm "wasm -nosimd")
  else missing "emcc not found (apt-get install emscripten): no WASM runs"; fi
else
  missing "node not found: no JS or WASM runs"
fi
printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' > $out/probe.c
if $CC $out/probe.c -o $out/probe -lOpenCL > /dev/null 2>&1 && $out/probe; then targets+=(opencl)
else missing "no OpenCL platform, headers or libOpenCL (pocl-opencl-icd ocl-icd-opencl-dev opencl-headers): no OpenCL runs"; fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
have_nvcc=0
if [ -x "$NVCC" ]; then have_nvcc=1; else missing "nvcc not found (CUDA toolkit; set NVCC): no CUDA compiles"; fi
METAL_CHECK=${KGEN_METAL_CHECK:-tests/tools/metal-check}
have_metal=0
if [ -x "$METAL_CHECK" ] && command -v clang > /dev/null 2>&1 && command -v python3 > /dev/null 2>&1; then have_metal=1
else missing "metal-check, clang or python3 not found ($METAL_CHECK; set KGEN_METAL_CHECK): no Metal checks"; fi

# run TARGET DIR -o OUT INPUTS... / run TARGET DIR --bench N INPUTS...: the target's runner
run() {
  local tg=$1 dir=$2
  shift 2
  case $tg in
    js|wasm*) timeout 120 node $dir/m_main.mjs "$@" ;;
    *) timeout 120 $dir/m "$@" ;;
  esac
}

nmodels=0
for model in tests/models/dyn_*/net.onnx; do
  [ -f "$model" ] || continue
  nmodels=$((nmodels + 1))
  src=$(dirname "$model") name=$(basename "$(dirname "$model")")
  args=()
  [ -f "$src/kgen_args" ] && read -r -a args < "$src/kgen_args"
  for tg in "${targets[@]}"; do
    label="$name ($tg)" dir=$out/$name.${tg// /}
    if ! timeout 60 "$KGEN" "$model" --target "$tg" -o "$dir" --name m --main "${args[@]}" > "$dir.kgen.log" 2>&1; then
      bad "$label: kgen failed: $(head -1 "$dir.kgen.log")"; continue
    fi
    if [ -f "$dir/Makefile" ] && ! make -s -C "$dir" CC="$CC" CFLAGS="$STRICT" > "$dir.build.log" 2>&1; then
      bad "$label: the runner does not build: $(grep -m3 -i -e error -e warning "$dir.build.log")"; continue
    fi
    ok
    # JS, WASM: the module's dims mark the count computed (the runner's --info says so)
    case $tg in
      js|wasm*)
        node $dir/m_main.mjs --info > "$dir.info" 2>&1
        want='^dim [A-Za-z_0-9]*: [0-9]*\.\.[0-9]* (computed from values)$'
        [ $name = dyn_loopm ] && want='^dim T: 1\.\.8 (input 1 dim 0)$'   # its extent is the trip count, T itself
        if grep -q "$want" "$dir.info"; then ok
        else bad "$label: --info shows no dim '$want': $(tr '\n' '|' < "$dir.info")"; fi
        # dyn_mixed through the module's API (tests/js/dyn_values.mjs)
        if [ $name = dyn_mixed ]; then
          if timeout 60 node tests/js/dyn_values.mjs $dir/m.mjs $src > "$dir.api.log" 2>&1; then ok
          else bad "$label: the module's API: $(grep -m3 FAIL "$dir.api.log" | tr '\n' '|')$(tail -1 "$dir.api.log")"; fi
        fi ;;
    esac
    last=()
    for first in "$src"/in_*_0.npy; do
      s=${first#"$src"/in_}; s=${s%_0.npy}
      ins=()
      for i in 0 1 2 3 4 5 6 7; do
        [ -f "$src/in_${s}_$i.npy" ] && ins+=("$root/$src/in_${s}_$i.npy")
      done
      last=("${ins[@]}")
      rm -rf "$dir/out_$s"
      if ! run "$tg" "$dir" "${ins[@]}" -o "$dir/out_$s" > "$dir.run$s.log" 2>&1; then
        bad "$label set $s: the runner failed: $(head -2 "$dir.run$s.log")"; continue
      fi
      for ref in "$src"/out_"$s"_*.npy; do
        j=${ref##*_}; j=${j%.npy}
        if "$out/npycmp" --rtol 1e-5 --atol 1e-6 "$ref" "$dir/out_$s/output_$j.npy" > "$dir.cmp${s}_$j.log" 2>&1; then
          ok
        else
          bad "$label set $s output $j: $(head -3 "$dir.cmp${s}_$j.log")"
        fi
      done
    done
    # inputs whose extents do not agree with the count: the model refuses them while it runs
    if [ -f "$src/bad_0_0.npy" ]; then
      case $tg in
        js) want="dims of z and y must agree" ;;
        wasm*) want="returned status 4 (wrong shape" ;;
        *) want="wrong shape" ;;
      esac
      run "$tg" "$dir" "$root/$src"/bad_0_*.npy -o "$dir/out_bad" > "$dir.bad.log" 2>&1; rc=$?
      if [ $rc = 1 ] && grep -q "$want" "$dir.bad.log" && [ ! -e "$dir/out_bad" ]; then ok; else
        bad "$label: extents that do not agree: exit $rc (expected 1, '$want', no output), $(head -2 "$dir.bad.log")"
      fi
    fi
    if run "$tg" "$dir" --bench 3 "${last[@]}" > "$dir.bench.log" 2>&1 && grep -q '^median_ms=' "$dir.bench.log"; then
      ok
    else
      bad "$label: --bench 3 failed: $(head -2 "$dir.bench.log")"
    fi
  done
  # CUDA: the kernels and the host (which reads each count back) compile
  if [ $have_nvcc = 1 ]; then
    dir=$out/$name.cuda
    if ! timeout 60 "$KGEN" "$model" --target cuda -o "$dir" --name m --main "${args[@]}" > "$dir.kgen.log" 2>&1; then
      bad "$name (cuda): kgen failed: $(head -1 "$dir.kgen.log")"
    elif (cd "$dir" && timeout 300 "$NVCC" -c -gencode arch=compute_90,code=sm_90 -Werror all-warnings \
            -Xcompiler -Wall,-Wextra m.cu -o m.o) > "$dir.nvcc.log" 2>&1; then
      ok
    else
      bad "$name (cuda): nvcc -c failed: $(grep -m2 -i error "$dir.nvcc.log")"
    fi
  fi
  # Metal: the kernels check, the manifest says where each count is, the tables are C
  if [ $have_metal = 1 ]; then
    dir=$out/$name.metal
    timeout 60 "$KGEN" "$model" --target metal -o "$dir" --name m --main "${args[@]}" > "$dir.kgen.log" 2>&1; rc=$?
    if [ $name = dyn_loop ] || [ $name = dyn_loopm ] || [ $name = dyn_loopmc ]; then
      if [ $rc = 1 ] && grep -q 'runs as a loop at run time, which the metal host does not do yet' "$dir.kgen.log"; then ok
      else bad "$name (metal): exit $rc, expected the run-time loop refused: $(head -1 "$dir.kgen.log")"; fi
    elif [ $rc != 0 ]; then
      bad "$name (metal): kgen failed: $(head -1 "$dir.kgen.log")"
    elif ! "$METAL_CHECK" "$dir/m.metal" > "$dir.check.log" 2>&1; then
      bad "$name (metal): metal-check: $(head -2 "$dir.check.log")"
    elif ! python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["dims"]
assert any(x["input"] == -1 and x["count_buffer"] >= 0 and x["count_after_launch"] >= 0 for x in d)' "$dir/m_manifest.json" \
           > "$dir.json.log" 2>&1; then
      bad "$name (metal): the manifest lacks a count: $(tail -1 "$dir.json.log")"
    elif ! $CC $STRICT -I"$dir" -c "$dir/m_tables.c" -o "$dir/m_tables.o" > "$dir.tables.log" 2>&1; then
      bad "$name (metal): m_tables.c does not compile: $(head -2 "$dir.tables.log")"
    else
      ok
    fi
  fi
done
[ $nmodels -gt 0 ] || bad "no tests/models/dyn_*/net.onnx"

# the targets that still refuse extents computed from values, with a message
if [ -f tests/models/dyn_nonzero/net.onnx ]; then
  for f in "webgpu:output extents computed from values (idx_dim1: .*) are not supported by the WebGPU target yet"; do
    tg=${f%%:*} want=${f#*:}
    "$KGEN" tests/models/dyn_nonzero/net.onnx --target $tg -o $out/$tg > $out/$tg.log 2>&1; rc=$?
    if [ $rc != 0 ] && [ $rc -lt 128 ] && grep -q "$want" $out/$tg.log; then ok; else
      bad "--target $tg: exit $rc, expected a refusal with '$want': $(head -1 $out/$tg.log)"
    fi
  done
fi
finish
