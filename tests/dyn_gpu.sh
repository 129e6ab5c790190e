#!/usr/bin/env bash
# dyn_gpu.sh - dims decided at run time (issue 16) through the GPU targets:
#   OpenCL  (runs here on pocl) tests/dyn/cnn (a CNN with input height and width decided
#           at run time; kgen's options in its file `args`) with --main, built with
#           strict flags: `--info` lists the dims; the runner on each in_HxW.npy against
#           torch's out_HxW.npy (npycmp, rtol 1e-3, atol 1e-4); inputs out of range (H
#           below, W above) or with a wrong fixed dim refused (exit 1, the message, no
#           output); the launches whose blocks follow the dims get their grid at run time
#           (NAME_at). tests/data/dyn/add_t.onnx (an output with a run-time dim, a derived
#           check B == C) through the host entry: tests/gpu/dyn_add.c. The models of
#           tests/data/dyn_gpu (a shared-memory matmul over a run-time M, a softmax over a
#           run-time axis, a conv and pool over a run-time batch and height; options in
#           NAME.dims) on their inputs against numpy's outputs, through OpenCL and, as a
#           control, through the C target; tests/dyn's other models (tests/dyn.sh's, options
#           in their args) at each of their extents against their references;
#   CUDA    every model's .cu compiles with nvcc -c for sm_90 and sm_80, warnings as errors;
#           with KGEN_DYN_GPU_CUDA=1 (a machine with a GPU: tests/gpu/run_cuda.sh) also
#           the OpenCL runs above through CUDA (CUDA_ARCH, default sm_90);
#   Metal   every model's .metal passes tests/tools/metal-check (KGEN_METAL_CHECK), the
#           manifest is JSON with the dims, the tables file is plain C.
# A missing toolchain is a SKIP, or a FAIL with KGEN_REQUIRE_ALL=1. Ends with
# "dyn_gpu: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
out=$BUILD/dyn_gpu
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror"
rm -rf $out
mkdir -p $out
export POCL_CACHE_DIR=$(cd $out && pwd)/pocl-cache
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -f "${2:-}" ] && sed 's/^/    /' "$2" | head -15; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}

# ---------------------------------------------------------------- toolchains (as gpu.sh)
have_cl=0
printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' > $out/probe.c
if $CC $out/probe.c -o $out/probe -lOpenCL >/dev/null 2>&1 && $out/probe; then have_cl=1
else missing "dyn_gpu: no OpenCL platform, headers or libOpenCL (pocl-opencl-icd ocl-icd-opencl-dev opencl-headers)"; fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NVFLAGS="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -Werror all-warnings -Xcompiler -Wall,-Wextra"
have_nvcc=0
if [ -x "$NVCC" ]; then have_nvcc=1; else missing "dyn_gpu: nvcc not found (CUDA toolkit; set NVCC)"; fi
METAL_CHECK=${KGEN_METAL_CHECK:-tests/tools/metal-check}
have_metal=0
if [ -x "$METAL_CHECK" ] && command -v clang >/dev/null 2>&1; then have_metal=1
else missing "dyn_gpu: metal-check not found ($METAL_CHECK; set KGEN_METAL_CHECK)"; fi

# npy_zeros FILE D0 D1 ...: a float32 .npy of zeros (the refused inputs)
npy_zeros() {
  local f=$1 n=1 d shape
  shift
  for d in "$@"; do n=$((n * d)); done
  shape=$(IFS=,; echo "$*" | sed 's/,/, /g')
  local h="{'descr': '<f4', 'fortran_order': False, 'shape': ($shape), }"
  while [ $(( (10 + ${#h} + 1) % 64 )) != 0 ]; do h="$h "; done
  local len=$((${#h} + 1))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"
    printf '%s\n' "$h"; head -c $((n * 4)) /dev/zero; } > $f
}

# gen TARGET DIR MODEL OPTIONS...: kgen into DIR (as m, with --main); 0 if it worked
gen() {
  local tg=$1 dir=$2 m=$3
  shift 3
  if timeout 120 "$KGEN" $m --target "$tg" -o $dir --name m --main "$@" > $dir.log 2>&1; then return 0; fi
  bad "dyn_gpu: $m ($tg): kgen failed" $dir.log
  return 1
}

model=tests/dyn/cnn
read -r -a dims < $model/args
add=tests/data/dyn/add_t.onnx
add_dims=(--dim B=1..16 --dim C=1..16)

# ---------------------------------------------------------------- runs: OpenCL here, CUDA on a GPU
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || bad "dyn_gpu: cannot build npycmp"
npy_zeros $out/h_low.npy 1 3 20 40
npy_zeros $out/w_high.npy 1 3 40 129
npy_zeros $out/c4.npy 1 4 40 40
small=(tests/data/dyn_gpu/*.onnx)
ARCH=${CUDA_ARCH:-sm_90}

# build TARGET DIR: the runner from the generated Makefile (strict flags for the C parts)
build() {
  make -s -C $2 CC="$CC" CFLAGS="$STRICT" NVCC="$NVCC" ARCH=$ARCH > $2.build.log 2>&1 && return 0
  bad "dyn_gpu: $2 ($1): no build" $2.build.log
  return 1
}

# against INPUT REF DIR LABEL: the runner in DIR on INPUT, output 0 against REF
against() {
  local in=$1 ref=$2 dir=$3 label=$4 e cmp
  e=$(basename $in .npy)
  if ! timeout 300 $dir/m $in -o $dir/$e > $dir.$e.log 2>&1; then bad "dyn_gpu: $label: the runner failed" $dir.$e.log; return; fi
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir/$e/output_0.npy 2>&1); then ok; echo "    $label: $cmp"
  else bad "dyn_gpu: $label: $cmp"; fi
}

# runs TARGET: cnn (runner, --info, four extents, refusals), add_t through the host
# entry, the small models; TARGET c takes the small models alone (the control)
runs() {
  local tg=$1 dir host in e f want rc src n
  local -a opts
  if [ $tg != c ]; then
    dir=$out/cnn.$tg
    if gen $tg $dir $model/model.onnx "${dims[@]}" && build $tg $dir; then
      ok
      # the grids that follow H and W are computed per run, from the dims
      host=$dir/m_host.c; [ $tg = cuda ] && host=$dir/m.cu
      if [ "$(grep -c '^    m_run_launches\[[0-9]*\]\.grid\[0\] = kgen_gpu_blocks(.*[HW]' $host)" -ge 5 ]; then ok
      else bad "dyn_gpu: cnn ($tg): fewer than 5 launches with a run-time grid in $host"; fi
      if $dir/m --info > $dir.info 2>&1 && grep -q "^input 0 'x': float32 \[1, 3, -1, -1\]" $dir.info &&
         grep -q '^dim H: 32..96 (input 0 dim 2)$' $dir.info && grep -q '^dim W: 32..128 (input 0 dim 3)$' $dir.info; then ok
      else bad "dyn_gpu: cnn ($tg): --info does not list the dims" $dir.info; fi
      for in in $model/in_*.npy; do
        e=$(basename $in .npy); e=${e#in_}
        against $in $model/out_$e.npy $dir "tests/dyn/cnn ($tg) $e"
      done
      for f in "h_low:dim 2 (H) is 20, outside the range \[32, 96\]" "w_high:dim 3 (W) is 129, outside the range \[32, 128\]" \
               "c4:expected float32 \[1, 3, -1, -1\], got float32 \[1, 4, 40, 40\]"; do
        want=${f#*:} f=${f%%:*}
        $dir/m $out/$f.npy -o $dir/bad_$f > $dir.bad_$f.log 2>&1; rc=$?
        if [ $rc = 1 ] && grep -q "$want" $dir.bad_$f.log && [ ! -e $dir/bad_$f ]; then ok
        else bad "dyn_gpu: cnn ($tg) $f.npy: exit $rc, expected 1 with '$want' and no output" $dir.bad_$f.log; fi
      done
    fi
    dir=$out/add.$tg
    if gen $tg $dir $add "${add_dims[@]}" &&
       if [ $tg = opencl ]; then
         $CC $STRICT -I$dir -DM_CL_FILE="\"$dir/m.cl\"" tests/gpu/dyn_add.c $dir/m_host.c $dir/m_weights.c -lOpenCL -lm \
           -o $dir/run > $dir.run.log 2>&1
       else
         $CC $STRICT -I$dir -c tests/gpu/dyn_add.c -o $dir/drv.o > $dir.run.log 2>&1 &&
           $CC $STRICT -c $dir/m_weights.c -o $dir/w.o >> $dir.run.log 2>&1 &&
           "$NVCC" -O2 -arch=$ARCH -o $dir/run $dir/m.cu $dir/drv.o $dir/w.o >> $dir.run.log 2>&1
       fi; then
      if timeout 120 $dir/run >> $dir.run.log 2>&1; then ok; echo "    add_t ($tg): $(tail -1 $dir.run.log)"
      else bad "dyn_gpu: add_t ($tg) through the host entry (tests/gpu/dyn_add.c)" $dir.run.log; fi
    elif [ -f $dir.run.log ]; then bad "dyn_gpu: add_t ($tg): no build of tests/gpu/dyn_add.c" $dir.run.log; fi
  fi
  for src in "${small[@]}"; do
    n=$(basename $src .onnx)
    read -r -a opts < ${src%.onnx}.dims
    dir=$out/$n.$tg
    gen $tg $dir $src "${opts[@]}" && build $tg $dir || continue
    for in in ${src%.onnx}_*[0-9].npy; do against $in ${in%.npy}.out.npy $dir "$(basename $in .npy) ($tg)"; done
  done
  # tests/dyn's models (tests/dyn.sh runs them through C), on a GPU target
  [ $tg = c ] && return
  for src in $(for d in ${KGEN_DYN_ONLY:-tests/dyn/*/}; do echo ${d%/}/model.onnx; done); do
    n=$(basename $(dirname $src))
    [ $n = cnn ] && continue   # (above)
    read -r -a opts < $(dirname $src)/args
    dir=$out/dyn_$n.$tg
    gen $tg $dir $src "${opts[@]}" && build $tg $dir || continue
    for in in $(dirname $src)/in_*.npy; do
      e=$(basename $in .npy); e=${e#in_}
      against $in $(dirname $src)/out_$e.npy $dir "tests/dyn/$n ($tg) $e"
    done
  done
}

runs c
[ $have_cl = 1 ] && runs opencl
# (a machine with an NVIDIA GPU, tests/gpu/run_cuda.sh: the same runs through CUDA)
[ "${KGEN_DYN_GPU_CUDA:-0}" = 1 ] && runs cuda

# ---------------------------------------------------------------- CUDA and Metal: compile and check
for m in cnn add "${small[@]}"; do
  if [ $m = cnn ]; then src=$model/model.onnx opts=("${dims[@]}")
  elif [ $m = add ]; then src=$add opts=("${add_dims[@]}")
  else src=$m; read -r -a opts < ${m%.onnx}.dims; m=$(basename $m .onnx); fi
  dir=$out/$m.cuda
  if [ $have_nvcc = 1 ] && gen cuda $dir $src "${opts[@]}"; then
    if "$NVCC" $NVFLAGS -c $dir/m.cu -o $dir/m.o > $dir.nvcc.log 2>&1; then ok
    else bad "dyn_gpu: $src (cuda): nvcc -c (sm_90 and sm_80)" $dir.nvcc.log; fi
  fi
  dir=$out/$m.metal
  if [ $have_metal = 1 ] && gen metal $dir $src "${opts[@]}"; then
    if "$METAL_CHECK" $dir/m.metal > $dir.check.log 2>&1; then ok
    else bad "dyn_gpu: $src (metal): metal-check" $dir.check.log; fi
    if command -v node >/dev/null 2>&1 &&
       node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1])); if (!m.dims.length) process.exit(1)' \
         $dir/m_manifest.json > $dir.manifest.log 2>&1 &&
       $CC $STRICT -c $dir/m_tables.c -o $dir/tables.o >> $dir.manifest.log 2>&1; then ok
    else bad "dyn_gpu: $src (metal): the manifest (with its dims) or the tables file" $dir.manifest.log; fi
  fi
done

echo "dyn_gpu: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
