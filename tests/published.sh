#!/usr/bin/env bash
# published.sh - models shaped like published ones (tests/published/*/, made by
# tests/published/make_models.py; no python is needed here): symbolic and unnamed dims,
# If decided at compile time and at run time, Loop, a bound sample-rate input, a
# Keras-style NHWC graph, streaming state, unused opset domains. For each model NAME:
#   1. kgen NAME/model.onnx with the options in NAME/args, for the targets c, js,
#      wasm (SIMD128), opencl, cuda and metal in one kgen run (if it fails, one run per
#      target, to say which fail); a target named in NAME/refused ("TARGET TEXT" lines)
#      must refuse the model with a message containing TEXT;
#   2. c, js, wasm-simd and opencl: build the runner (c with strict flags and
#      KGEN_GEN_CFLAGS, wasm by the generated Makefile with emcc, the opencl host at -O0
#      with warnings as errors, its kernels run by pocl), run it on every data set
#      (NAME/input_K.npy, and NAME/data_S/input_K.npy: the other side of a run-time If,
#      the next streaming step) and compare each output_K.npy with torch's (npycmp,
#      rtol 1e-3, atol 1e-4: tests/models.sh's rule). Scalar wasm
#      (wasm -nosimd) writes the same C as wasm (only its Makefile lacks -msimd128), so it runs only
#      with KGEN_PUBLISHED_WASM="wasm wasm-simd" (an emcc build per model more);
#   3. cuda: every model's .cu compiled by nvcc for sm_90 and sm_80, warnings as errors,
#      as one translation unit (as tests/gpu.sh does); metal: metal-check on each .metal,
#      the manifest parsed and the tables compiled.
# One result per model and target. The cases run KGEN_PUBLISHED_JOBS at a time (default
# 2). A missing toolchain is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Prints a FAIL line
# with the reason for each failure, one indented line per passing run case (its largest
# error), and "published: N passed, N failed[, N skipped]". Run from the repository root
# (KGEN, BUILD, CC, KGEN_GEN_CFLAGS, NVCC, KGEN_METAL_CHECK, EMCC honoured).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
EMCC=${EMCC:-emcc}
JOBS=${KGEN_PUBLISHED_JOBS:-2}
WASM_VARIANTS=${KGEN_PUBLISHED_WASM:-wasm-simd}   # wasm, wasm-simd or both
SRC=${KGEN_PUBLISHED_DIR:-tests/published}   # the corpus (another folder for trials)
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
RTOL=1e-3 ATOL=1e-4
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
work=$BUILD/published
rm -rf "$work"
mkdir -p "$work/res"
export POCL_CACHE_DIR=$(cd "$work" && pwd)/pocl-cache

pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL published $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then echo "FAIL published: $1 (KGEN_REQUIRE_ALL=1)"; fail=$((fail + 1))
  else echo "SKIP published: $1"; skip=$((skip + 1)); fi
}
# the first line of FILE that names an error, else its first line
first_error() { grep -m1 -iE 'error' "$1" 2> /dev/null || grep -m1 . "$1" 2> /dev/null; }
summary() {
  if [ $skip -gt 0 ]; then echo "published: $pass passed, $fail failed, $skip skipped"
  else echo "published: $pass passed, $fail failed"; fi
  [ $fail -eq 0 ]
}

if [ ! -x "$KGEN" ]; then bad "$KGEN is not an executable (build kgen first)"; summary; exit; fi
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $work/npycmp -lm 2> $work/npycmp.log; then
  bad "cannot build tests/models/npycmp.c: $(head -1 $work/npycmp.log)"; summary; exit
fi

# ---------------------------------------------------------------- toolchains

# the targets whose runners run here, and the compile-only ones
run_targets="c"
if command -v node > /dev/null 2>&1; then
  run_targets+=" js"
  if command -v "$EMCC" > /dev/null 2>&1; then run_targets+=" $WASM_VARIANTS"
  else missing "$EMCC not found (apt-get install emscripten): no wasm tests"; fi
else
  missing "node not found: no js and wasm tests"
fi
printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' > $work/probe.c
if $CC $work/probe.c -o $work/probe -lOpenCL > /dev/null 2>&1 && $work/probe; then run_targets+=" opencl"
else missing "no OpenCL platform, headers or libOpenCL (pocl-opencl-icd ocl-icd-opencl-dev opencl-headers): no opencl tests"; fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NVFLAGS="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -Werror all-warnings -Xcompiler -Wall,-Wextra"
have_nvcc=0
if [ -x "$NVCC" ]; then have_nvcc=1; else missing "nvcc not found (CUDA toolkit; set NVCC): no cuda tests"; fi
METAL_CHECK=${KGEN_METAL_CHECK:-tests/tools/metal-check}
have_metal=0
if [ -x "$METAL_CHECK" ] && command -v clang > /dev/null 2>&1; then have_metal=1
else missing "metal-check not found ($METAL_CHECK; set KGEN_METAL_CHECK): no metal tests"; fi

# ---------------------------------------------------------------- 1. kgen

# the kgen target name of a test target
kgen_target() { case $1 in wasm-simd) echo "wasm" ;; wasm) echo "wasm -nosimd" ;; *) echo "$1" ;; esac; }
all_targets="c js $WASM_VARIANTS opencl cuda metal"
first="c js opencl cuda metal"   # the targets of the first kgen run, and wasm (SIMD128)
[[ " $WASM_VARIANTS " == *" wasm-simd "* ]] && first+=" wasm-simd"
list=""
for t in $first; do list+="${list:+,}$(kgen_target $t)"; done
names=()
for model in $SRC/*/model.onnx; do
  [ -f "$model" ] || continue
  dir=$(dirname "$model")
  name=$(basename "$dir")
  args=()
  [ -f "$dir/args" ] && read -r -a args < "$dir/args"
  out=$work/$name
  # one run for all the targets but scalar wasm (its folder would be "wasm" too); a model
  # that some targets refuse (NAME/refused) goes one target at a time
  if [ ! -f "$dir/refused" ] && timeout 120 "$KGEN" "$model" --target "$list" -o "$out" --name "$name" --main "${args[@]}" \
       > "$out.kgen.log" 2>&1 &&
     { [[ " $first " != *" wasm-simd "* ]] || mv "$out/wasm" "$out/wasm-simd"; } &&
     { [[ " $WASM_VARIANTS " != *" wasm "* ]] ||
       timeout 120 "$KGEN" "$model" --target "wasm -nosimd" -o "$out/wasm" --name "$name" --main "${args[@]}" >> "$out.kgen.log" 2>&1; }; then
    :
  else
    # one target at a time, to say which fail
    rm -rf "$out"
    mkdir -p "$out"
    for t in $all_targets; do
      # NAME/refused: lines "TARGET TEXT": that target refuses the model with a message
      # containing TEXT (a run-time loop on a GPU target)
      expect=$(awk -v t=$t '$1 == t { $1 = ""; sub(/^ +/, ""); print; exit }' "$dir/refused" 2> /dev/null)
      if ! timeout 120 "$KGEN" "$model" --target "$(kgen_target $t)" -o "$out/$t" --name "$name" --main "${args[@]}" \
           > "$out/$t.kgen.log" 2>&1; then
        rm -rf "$out/$t"
        if [ -n "$expect" ] && grep -qF -- "$expect" "$out/$t.kgen.log" && ! grep -qiE 'internal|assert' "$out/$t.kgen.log"; then
          echo "ok $name ($t): refused as expected: $(grep -m1 . "$out/$t.kgen.log" | cut -c1-100)" > $work/res/$name.$t.res
        else
          echo "FAIL $name ($t): kgen${args[*]:+ ${args[*]}} failed: $(grep -m1 . "$out/$t.kgen.log")" > $work/res/$name.$t.res
        fi
      elif [ -n "$expect" ]; then
        rm -rf "$out/$t"
        echo "FAIL $name ($t): kgen compiled it; expected a refusal saying '$expect'" > $work/res/$name.$t.res
      fi
    done
  fi
  names+=("$name")
done

# ---------------------------------------------------------------- 2. build, run, compare

# run_case NAME TARGET: one line in res/NAME.TARGET.res, "ok LINE" or "FAIL LINE"
run_case() {
  local name=$1 t=$2 d=$work/$1/$2 src=$SRC/$1
  exec > $work/res/$name.$t.res
  case $t in
    c) make -s -C $d CC="$CC" CFLAGS="$STRICT" > $d/build.log 2>&1 ;;
    # the host at -O0: its hex-float weights take a second at -O1, and tests/gpu.sh
    # builds the same host code at -O2
    opencl) make -s -C $d CC="$CC" CFLAGS="-O0 -std=c99 -Wall -Wextra -Werror" > $d/build.log 2>&1 ;;
    wasm|wasm-simd) make -s -C $d EMCC="$EMCC" > $d/build.log 2>&1 ;;
    js) true ;;
  esac || { echo "FAIL $name ($t): the runner does not build: $(first_error $d/build.log)"; return; }
  local set s k n worst="" e cmp ins
  s=0
  for set in $src $src/data_*; do
    [ -f $set/input_0.npy ] || [ -f $set/output_0.npy ] || continue
    ins=()
    for ((k = 0; ; k++)); do [ -f $set/input_$k.npy ] || break; ins+=($set/input_$k.npy); done
    rm -rf $d/out$s
    case $t in
      c|opencl) timeout 120 $d/$name "${ins[@]}" -o $d/out$s > $d/run$s.log 2>&1 ;;
      *) timeout 120 node $d/${name}_main.mjs "${ins[@]}" -o $d/out$s > $d/run$s.log 2>&1 ;;
    esac || { echo "FAIL $name ($t): the runner failed on $set: $(grep -m1 . $d/run$s.log)"; return; }
    n=$(ls $set/output_*.npy | wc -l)
    if [ "$(ls $d/out$s/output_*.npy 2> /dev/null | wc -l)" != $n ]; then
      echo "FAIL $name ($t): $(ls $d/out$s 2> /dev/null | wc -l) outputs on $set, the reference has $n"; return
    fi
    for ((k = 0; k < n; k++)); do
      if ! cmp=$($work/npycmp --rtol $RTOL --atol $ATOL $set/output_$k.npy $d/out$s/output_$k.npy 2>&1); then
        echo "FAIL $name ($t): $set/output_$k.npy differs: $(printf '%s\n' "$cmp" | tail -1)"; return
      fi
      e=$(printf '%s\n' "$cmp" | tail -1 | sed -n 's/.*max_abs_err=\([^ ]*\).*/\1/p')
      worst=$(awk -v a="${worst:-0}" -v b="${e:-0}" 'BEGIN { print (b + 0 > a + 0) ? b : a }')
    done
    s=$((s + 1))
  done
  echo "ok $name ($t): $s data set(s), max_abs_err=${worst:-0}"
}

# metal_case NAME: metal-check, the manifest is JSON with launches, the tables are C
metal_case() {
  local name=$1 d=$work/$1/metal
  exec > $work/res/$name.metal.res
  if ! "$METAL_CHECK" $d/$name.metal > $d/check.log 2>&1; then
    echo "FAIL $name (metal): metal-check: $(first_error $d/check.log)"; return
  fi
  if command -v node > /dev/null 2>&1 &&
     ! node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1])); if (!m.launches.length) process.exit(1)' \
       $d/${name}_manifest.json > $d/manifest.log 2>&1; then
    echo "FAIL $name (metal): ${name}_manifest.json: $(grep -m1 . $d/manifest.log)"; return
  fi
  if ! $CC -std=c99 -Wall -Wextra -Werror -c $d/${name}_tables.c -o $d/tables.o > $d/tables.log 2>&1; then
    echo "FAIL $name (metal): ${name}_tables.c: $(first_error $d/tables.log)"; return
  fi
  echo ok
}

# cuda_all: every .cu in one nvcc run; if that fails, one at a time, to name the failures
cuda_all() {
  local name f
  for name in "${names[@]}"; do
    f=$work/$name/cuda/$name.cu
    [ -f $f ] && printf '#include "%s"\n' "$(cd $(dirname $f) && pwd)/$name.cu"
  done > $work/all.cu
  if "$NVCC" $NVFLAGS -c $work/all.cu -o $work/all.o > $work/all.cu.log 2>&1; then
    for name in "${names[@]}"; do [ -f $work/$name/cuda/$name.cu ] && echo ok > $work/res/$name.cuda.res; done
    return
  fi
  for name in "${names[@]}"; do
    f=$work/$name/cuda/$name.cu
    [ -f $f ] || continue
    if "$NVCC" $NVFLAGS -c $f -o ${f%.cu}.o > ${f%.cu}.log 2>&1; then echo ok > $work/res/$name.cuda.res
    else echo "FAIL $name (cuda): nvcc: $(first_error ${f%.cu}.log)" > $work/res/$name.cuda.res; fi
  done
}

# the cases, nvcc (the longest) first
cases=()
[ $have_nvcc = 1 ] && cases+=("cuda_all")
for name in "${names[@]}"; do
  for t in wasm-simd wasm opencl c js; do
    [[ " $run_targets " == *" $t "* ]] && [ -d $work/$name/$t ] && cases+=("run_case $name $t")
  done
  [ $have_metal = 1 ] && [ -d $work/$name/metal ] && cases+=("metal_case $name")
done
for c in "${cases[@]}"; do
  if [ $(jobs -rp | wc -l) -ge $JOBS ]; then wait -n; fi
  ( $c ) &
done
wait

# the run-time If of if_runtime: the model function runs one branch's kernel (C, and so
# WASM; JS), the condition tested once for each value; the data sets above take each way
if [ -d $work/if_runtime/c ]; then
  for t in c js; do
    f=$(ls $work/if_runtime/$t/if_runtime.c $work/if_runtime/$t/if_runtime.mjs 2>/dev/null | head -1)
    if [ -n "$f" ] && [ "$(grep -cE '^ +if \(.*\[0\] != 0\)$' $f)" = 1 ] && [ "$(grep -cE '^ +if \(.*\[0\] == 0\)$' $f)" = 1 ]; then ok
    else bad "if_runtime ($t): the model function does not skip the branch not taken (${f:-no source})"; fi
  done
fi

# ... and the OpenCL and CUDA hosts read its condition back: a control for each branch
for t in opencl cuda; do
  f=$work/if_runtime/$t/if_runtime.c
  [ $t = cuda ] && f=$work/if_runtime/$t/if_runtime.cu
  [ -f $f ] || continue
  if [ "$(grep -c '^    {KGEN_GPU_IF, ' $f)" = 2 ]; then ok
  else bad "if_runtime ($t): the host tables do not hold a control for each branch ($f)"; fi
done

# a Loop decided at run time (the models that Metal refuses for it) is one loop in the
# model function of C (and so WASM) and JS, not unrolled, and one loop control in the
# OpenCL and CUDA host tables
for name in "${names[@]}"; do
  grep -qs 'runs as a loop at run time' $SRC/$name/refused || continue
  for t in c js opencl cuda; do
    f=$(ls $work/$name/$t/$name.c $work/$name/$t/$name.mjs $work/$name/$t/$name.cu 2> /dev/null | head -1)
    [ -n "$f" ] || continue
    case $t in
      c|js) n=$(grep -cE '^    while \(.*\) \{$' $f) ;;
      *) n=$(grep -c '^    {KGEN_GPU_WHILE, ' $f) ;;
    esac
    if [ "$n" = 1 ]; then ok
    else bad "$name ($t): the model does not hold one run-time loop (${f})"; fi
  done
done

# ---------------------------------------------------------------- results, in a fixed order

for name in "${names[@]}"; do
  for t in $all_targets; do
    res=$work/res/$name.$t.res
    case $t in
      cuda) [ $have_nvcc = 1 ] || [ -f $res ] || continue ;;
      metal) [ $have_metal = 1 ] || [ -f $res ] || continue ;;
      *) [[ " $run_targets " == *" $t "* ]] || [ -f $res ] || continue ;;
    esac
    line=$(cat $res 2> /dev/null)
    case $line in
      ok) ok ;;
      "ok "*) echo "    ${line#ok }"; ok ;;
      FAIL*) bad "${line#FAIL }" ;;
      *) bad "$name ($t): no result" ;;
    esac
  done
done
summary
