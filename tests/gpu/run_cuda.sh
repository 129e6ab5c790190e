#!/usr/bin/env bash
# run_cuda.sh - the CUDA target on a machine with an NVIDIA GPU: the whole ONNX conformance
# set (tests/conformance.sh with KGEN_CONF_TARGET=cuda: batches of models in one nvcc
# build each, every model run in its own process on the GPU), the committed real
# models (built with their generated Makefile, run, compared with the reference) and the
# models with dims decided at run time (tests/dyn_gpu.sh with KGEN_DYN_GPU_CUDA=1), then
# "N passed, N failed". Needs nvcc and a driver; everything else is made here.
#
#   bash tests/gpu/run_cuda.sh            (from the repository root; `make` first)
#   CUDA_ARCH=sm_80 NVCC=/path/to/nvcc KGEN_CUDA_DEVICE=1 bash tests/gpu/run_cuda.sh
set -u
cd "$(dirname "$0")/../.."
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
ARCH=${CUDA_ARCH:-sm_90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export KGEN BUILD CC NVCC CUDA_ARCH=$ARCH
[ -x "$KGEN" ] || make -s kgen
work=$BUILD/cuda_models
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0

# the real models
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $work/npycmp -lm
for dir in tests/models/*/; do
  m=$(basename $dir)
  d=$work/$m
  t0=$(date +%s.%N)
  if $KGEN $dir/model.onnx --target "cuda -arch=$ARCH" -o $d --main > $d.log 2>&1 &&
     make -s -C $d NVCC="$NVCC" ARCH=$ARCH >> $d.log 2>&1 &&
     $d/model $dir/input_0.npy -o $d/res >> $d.log 2>&1 &&
     $work/npycmp $dir/output_0.npy $d/res/output_0.npy >> $d.log 2>&1; then
    echo "PASS model $m ($(tail -1 $d.log)); latency: $($d/model --bench 100 $dir/input_0.npy 2>&1 | tail -2 | tr '\n' ' ')"
    pass=$((pass + 1))
  else
    echo "FAIL model $m:"; sed 's/^/    /' $d.log | tail -8
    fail=$((fail + 1))
  fi
done

# dims decided at run time: tests/dyn_gpu.sh's runs through CUDA too
KGEN_DYN_GPU_CUDA=1 bash tests/dyn_gpu.sh 2>&1 | tee $work/dyn_gpu.log | grep -E '^FAIL|^dyn_gpu:'
line=$(grep '^dyn_gpu:' $work/dyn_gpu.log)
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
  pass=$((pass + BASH_REMATCH[1])); fail=$((fail + BASH_REMATCH[2]))
else
  fail=$((fail + 1))
fi

# the conformance set
KGEN_CONF_TARGET=cuda bash tests/conformance.sh 2>&1 | tee $work/conformance.log | grep -E '^(FAIL|UNSUPPORTED)|^passed|^time|conformance-cuda:'
line=$(grep '^conformance-cuda:' $work/conformance.log)
if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
  pass=$((pass + BASH_REMATCH[1])); fail=$((fail + BASH_REMATCH[2]))
else
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
