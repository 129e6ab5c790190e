#!/usr/bin/env bash
# gpu.sh - the GPU targets without a GPU:
#   OpenCL  every example (two shapes each, one not dividing the block size) and every
#           real model runs on the OpenCL device here (pocl on the CPU) through the
#           generated host, checked by the exec drivers (tests/exec/NAME.c) and npycmp;
#   CUDA    every example's and real model's .cu compiles with nvcc for sm_90 and sm_80
#           with warnings as errors (running needs a GPU: tests/gpu/run_cuda.sh);
#   Metal   every .metal passes tests/tools/metal-check (KGEN_METAL_CHECK), which accepts
#           the committed out/examples/*/metal and rejects each of tests/tools/metal/neg;
#   errors  schedules and options a GPU cannot honour are kgen errors.
# A missing toolchain is a SKIP, or a FAIL with KGEN_REQUIRE_ALL=1.
# Ends with "gpu: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
work=$BUILD/gpu
rm -rf "$work"
mkdir -p "$work"
export POCL_CACHE_DIR=$(cd "$work" && pwd)/pocl-cache

pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL gpu $1"; [ -f "${2:-}" ] && sed 's/^/    /' "$2" | head -15; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then echo "FAIL gpu: $1 (KGEN_REQUIRE_ALL=1)"; fail=$((fail + 1))
  else echo "SKIP gpu: $1"; skip=$((skip + 1)); fi
}

# ---------------------------------------------------------------- toolchains

have_cl=0
printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' > $work/probe.c
if $CC $work/probe.c -o $work/probe -lOpenCL >/dev/null 2>&1 && $work/probe; then have_cl=1
else missing "no OpenCL platform, headers or libOpenCL (pocl-opencl-icd ocl-icd-opencl-dev opencl-headers)"; fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
have_nvcc=0
# one nvcc run builds both architectures; any warning (nvcc's or gcc's on the host code) fails
NVFLAGS="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -Werror all-warnings -Xcompiler -Wall,-Wextra"
if [ -x "$NVCC" ]; then have_nvcc=1; else missing "nvcc not found (CUDA toolkit; set NVCC)"; fi
METAL_CHECK=${KGEN_METAL_CHECK:-tests/tools/metal-check}
have_metal=0
if [ -x "$METAL_CHECK" ] && command -v clang >/dev/null 2>&1; then have_metal=1
else missing "metal-check not found ($METAL_CHECK; set KGEN_METAL_CHECK)"; fi

# ---------------------------------------------------------------- examples

# example | defines (one shape per line)
cases=(
  "matmul|-DM=64 -DN=64 -DK=64"
  "matmul|-DM=20 -DN=37 -DK=30"
  "batch_matmul|-DBATCH=3 -DM=7 -DN=19 -DK=5"
  "batch_matmul|-DBATCH=2 -DM=32 -DN=16 -DK=48"
  "conv2d|-DC=8 -DH=12 -DW=12 -DF=8"
  "conv2d|-DC=6 -DH=11 -DW=13 -DF=10 -DS=2 -DP=2 -DD=2 -DG=2"
  "depthwise_conv2d|-DN=2 -DC=3 -DH=13 -DW=9 -DS=2 -DP=0"
  "maxpool2d|-DC=3 -DH=8 -DW=11 -DK=2 -DS=2 -DP=0"
  "avgpool2d|-DN=2 -DC=3 -DH=7 -DW=10 -DK=3 -DS=1 -DP=1"
  "softmax|-DR=4 -DL=37"
  "layernorm|-DR=5 -DL=48"
  "rnn|-DT=3 -DI=5 -DH=7"
)
i=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  defs=${c#*|}
  i=$((i + 1))
  [ $have_cl = 1 ] || continue
  d=$work/cl$i
  if ! $KGEN examples/$name.kg --target opencl -o $d $defs > $d.log 2>&1; then
    bad "opencl $name [$defs]: kgen failed" $d.log; continue
  fi
  up=$(echo $name | tr a-z A-Z)
  if $CC -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I$d $defs -D${up}_CL_FILE="\"$d/$name.cl\"" \
       tests/exec/$name.c $d/${name}_host.c -lOpenCL -lm -o $d/run >> $d.log 2>&1 && $d/run >> $d.log 2>&1; then
    ok
  else
    bad "opencl $name [$defs]: wrong result or no build" $d.log
  fi
done

# a hand-written shared-memory schedule (tests/data/kg/matmul_shared.kg), at sizes its tiles
# divide and at sizes they overhang (guards below the barriers); and, as an error case,
# at sizes where the block is larger than a tile loop (the barrier would sit under a guard)
if [ $have_cl = 1 ]; then
  for defs in "-DM=64 -DN=48 -DK=32" "-DM=20 -DN=37 -DK=30" "-DM=100 -DN=31 -DK=47" \
              "-DM=20 -DN=64 -DK=32"; do   # (rows overhang, columns fit: pocl once got it wrong)
    d=$work/shared_mm$(echo $defs | tr -dc 0-9)
    if $KGEN tests/data/kg/matmul_shared.kg --target opencl -o $d $defs > $d.log 2>&1 &&
       grep -q 'barrier(CLK_LOCAL_MEM_FENCE)' $d/matmul.cl &&
       $CC -std=c99 -O2 -I$d $defs -DMATMUL_CL_FILE="\"$d/matmul.cl\"" tests/exec/matmul.c $d/matmul_host.c \
         -lOpenCL -lm -o $d/run >> $d.log 2>&1 && $d/run >> $d.log 2>&1; then ok
    else bad "opencl shared-memory matmul [$defs]" $d.log; fi
  done
fi
for t in cuda metal; do
  d=$work/shared_mm_$t
  case $t in cuda) [ $have_nvcc = 1 ] || continue ;; metal) [ $have_metal = 1 ] || continue ;; esac
  if $KGEN tests/data/kg/matmul_shared.kg --target $t -o $d > $d.log 2>&1 &&
     if [ $t = cuda ]; then "$NVCC" $NVFLAGS -c $d/matmul.cu -o $d/matmul.o >> $d.log 2>&1
     else "$METAL_CHECK" $d/matmul.metal >> $d.log 2>&1; fi; then ok
  else bad "$t shared-memory matmul" $d.log; fi
done

# the Metal checker itself: it accepts the committed Metal of the examples (one run), and
# rejects each broken source of tests/tools/metal/neg with the message its first line
# names ("// expect: REGEX")
if [ $have_metal = 1 ]; then
  if "$METAL_CHECK" out/examples/*/metal/*.metal > $work/metal_examples.log 2>&1; then ok
  else bad "metal-check rejects the committed out/examples/*/metal" $work/metal_examples.log; fi
  for f in tests/tools/metal/neg/*.metal; do
    expect=$(sed -n '1s|^// expect: ||p' $f)
    log=$work/metal_neg_$(basename $f .metal).log
    if "$METAL_CHECK" $f > $log 2>&1; then bad "metal-check accepts $f" $log
    elif [ -n "$expect" ] && grep -qE "$expect" $log; then ok
    else bad "metal-check rejects $f without '$expect'" $log; fi
  done
fi

# CUDA and Metal: the default shapes of every example. The .cu files are compiled together
# at the end, as one translation unit (one nvcc start, not one per file).
cu_files=()
for kg in examples/*.kg; do
  name=$(basename $kg .kg)
  d=$work/ex_$name
  if ! $KGEN $kg --target cuda,metal -o $d > $d.log 2>&1; then
    bad "cuda,metal $name: kgen failed" $d.log; continue
  fi
  cu_files+=("$d/cuda/$name.cu")
  if [ $have_metal = 1 ]; then
    if "$METAL_CHECK" $d/metal/$name.metal > $d/metal.log 2>&1; then ok; else bad "metal $name: metal-check" $d/metal.log; fi
  fi
done

# ---------------------------------------------------------------- real models

$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $work/npycmp -lm 2> $work/npycmp.log || bad "cannot build npycmp" $work/npycmp.log
# the real models, and a model made for the shared-memory matmul tiling
for dir in tests/models/*/ tests/data/gpu/gpu_tiles/; do
  m=$(basename $dir)
  [ -f $dir/model.onnx ] || continue
  [ -f $dir/dims ] && continue   # run-time dims (tests/dyn_js.sh)
  d=$work/model_$m
  if [ $have_cl = 1 ]; then
    if ! $KGEN $dir/model.onnx --target opencl -o $d/opencl --name model --main > $d.cl.log 2>&1; then
      bad "opencl model $m: kgen failed" $d.cl.log
    elif make -s -C $d/opencl CC="$CC" CFLAGS="-O2 -std=c99 -Wall -Wextra -Werror" >> $d.cl.log 2>&1 &&
         $d/opencl/model $dir/input_0.npy -o $d/opencl/res >> $d.cl.log 2>&1 &&
         $work/npycmp $dir/output_0.npy $d/opencl/res/output_0.npy >> $d.cl.log 2>&1; then
      ok
    else
      bad "opencl model $m: wrong result or no build" $d.cl.log
    fi
  fi
  if ! $KGEN $dir/model.onnx --target cuda -o $d/cuda --name $m --main > $d.cu.log 2>&1 ||
     ! $KGEN $dir/model.onnx --target metal -o $d/metal --main >> $d.cu.log 2>&1; then
    bad "cuda,metal model $m: kgen failed" $d.cu.log; continue
  fi
  cu_files+=("$d/cuda/$m.cu")
  if [ $have_metal = 1 ]; then
    if "$METAL_CHECK" $d/metal/model.metal > $d/metal.log 2>&1; then ok; else bad "metal model $m: metal-check" $d/metal.log; fi
  fi
  # the Metal host's other files: the manifest is JSON, the tables are plain C
  if command -v node >/dev/null 2>&1 &&
     node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1])); if (!m.launches.length) process.exit(1)' \
       $d/metal/model_manifest.json > $d/manifest.log 2>&1 &&
     $CC -std=c99 -Wall -Wextra -Werror -c $d/metal/model_tables.c -o $d/metal/tables.o >> $d/manifest.log 2>&1; then ok
  else bad "metal model $m: manifest or tables" $d/manifest.log; fi
done

if [ $have_nvcc = 1 ] && [ ${#cu_files[@]} -gt 0 ]; then
  # absolute paths: a quoted #include is looked up beside all.cu, not in the current folder
  for f in "${cu_files[@]}"; do [[ $f == /* ]] || f=$PWD/$f; printf '#include "%s"\n' "$f"; done > $work/all.cu
  if "$NVCC" $NVFLAGS -c $work/all.cu -o $work/all.o > $work/all.cu.log 2>&1; then
    pass=$((pass + ${#cu_files[@]}))
  else
    # one file at a time, to name the ones that fail
    for f in "${cu_files[@]}"; do
      if "$NVCC" $NVFLAGS -c $f -o ${f%.cu}.o > ${f%.cu}.log 2>&1; then ok; else bad "cuda $f (sm_90 and sm_80): nvcc" ${f%.cu}.log; fi
    done
  fi
fi

# ---------------------------------------------------------------- what a GPU cannot honour

# a schedule asking for 512 threads, and one binding threadIdx.x inside itself
printf 'input A : f32[1024]\noutput B[i < 1024] = A[i] * 2.0\nschedule gpu {\n    io, ii = split(B, i, 512)\n    bind(B, io, blockIdx.x)\n    bind(B, ii, threadIdx.x)\n}\n' > $work/bind512.kg
printf 'input A : f32[64, 64]\noutput B[i < 64, j < 64] = A[i, j] * 2.0\nschedule gpu {\n    bind(B, i, threadIdx.x)\n    bind(B, j, threadIdx.x)\n}\n' > $work/twice.kg
printf 'input A : f32[70000, 2]\noutput B[i < 70000, j < 2] = A[i, j] * 2.0\nschedule gpu {\n    bind(B, i, blockIdx.y)\n    bind(B, j, threadIdx.x)\n}\n' > $work/grid_y.kg
# args | expected message
errors=(
  "$work/bind512.kg --target cuda -max-threads=256|512 threads per block, above the target's limit of 256"
  "$work/bind512.kg --target metal -max-shared=100|512 threads per block, above the target's limit of 256"
  "$work/twice.kg --target opencl|threadIdx.x is bound twice in one loop nest"
  "tests/data/kg/matmul_shared.kg --target cuda -DM=1 -DN=5 -DK=3|a barrier under divergent control flow"
  "$work/grid_y.kg --target opencl|is beyond what GPUs launch"
  "examples/softmax.kg --target opencl -max-threads=0|expected an integer from 1 to 1024"
  "examples/matmul.kg --target cuda -arch=sm_1|expected -arch=sm_NN"
  "examples/matmul.kg --target metal -arch=sm_90|unknown attribute '-arch=sm_90' for target metal"
  "examples/matmul.kg --target opencl -simd|unknown attribute '-simd' for target opencl"
  "examples/matmul.kg --target cuda,opencl -simd|'-simd' applies to none of the targets 'cuda,opencl'"
  "tests/models/small_cnn/model.onnx --target cuda --layout=nchwc|is a CPU layout"
  "tests/models/small_cnn/model.onnx --target opencl --weights=file|--weights=file is not supported for the opencl target"
)
k=0
for e in "${errors[@]}"; do
  args=${e%%|*}
  want=${e#*|}
  k=$((k + 1))
  d=$work/err$k
  $KGEN $args -o $d > $d.log 2>&1; rc=$?
  if [ $rc -eq 1 ] && grep -qF -- "$want" $d.log && [ ! -e $d ]; then ok
  else bad "error case '$args': exit $rc, expected '$want' and no output" $d.log; fi
done
# f64 has no place on Metal
printf 'input A : f64[8]\noutput B[i < 8] = A[i] * 2.0\n' > $work/f64.kg
$KGEN $work/f64.kg --target metal -o $work/f64_out > $work/f64.log 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -q "has no 64-bit floats" $work/f64.log && [ ! -e $work/f64_out ]; then ok
else bad "f64 on metal: exit $rc" $work/f64.log; fi

echo "gpu: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
