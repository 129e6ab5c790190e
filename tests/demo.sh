#!/usr/bin/env bash
# demo.sh - `make demo`: compile every example for every target kgen has, build and run
# what can run here, and print what happened and how long it took.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-cc}
work=build/demo
rm -rf $work; mkdir -p $work
ms() { date +%s%N | cut -c1-13; }
printf '%-18s %-7s %10s %10s %10s  %s\n' example target "kgen ms" "cc ms" "run ms" result
for kg in examples/*.kg; do
  name=$(basename $kg .kg)
  d=$work/$name
  t0=$(ms); $KGEN $kg --target c -o $d 2>$d.err; rc=$?; t1=$(ms)
  if [ $rc -ne 0 ]; then printf '%-18s %-7s %10s %10s %10s  %s\n' $name c - - - "kgen failed: $(head -1 $d.err)"; continue; fi
  $CC -O3 -march=native -std=c99 -I$d tests/exec/$name.c $d/$name.c -lm -o $d/run 2>$d.err; rc=$?; t2=$(ms)
  if [ $rc -ne 0 ]; then printf '%-18s %-7s %10s %10s %10s  %s\n' $name c $((t1 - t0)) - - "cc failed"; continue; fi
  $d/run >$d.out 2>&1; rc=$?; t3=$(ms)
  result="matches the reference"; [ $rc -ne 0 ] && result="MISMATCH (see $d.out)"
  printf '%-18s %-7s %10s %10s %10s  %s\n' $name c $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) "$result"
done
echo
echo "Generated sources are in $work/<example>/ (committed copies: out/examples/)."
echo "Run times include the plain reference each test program computes for comparison."

echo
echo "ONNX models (tests/models/): kgen, build the generated runner, run it, compare with torch"
mkdir -p $work/models
$CC -O1 -std=c99 -Itemplates tests/models/npycmp.c -lm -o $work/npycmp 2>/dev/null
printf '%-20s %-7s %10s %10s %12s  %s\n' model target "kgen ms" "cc ms" "median_ms" result
for dir in tests/models/*/; do
  [ -f $dir/model.onnx ] || continue   # (tests/models/dyn_*: output extents from values, tests/dyn_values.sh)
  name=$(basename $dir)
  d=$work/models/$name
  t0=$(ms); $KGEN $dir/model.onnx --target c -o $d --name $name --main 2>$d.err; rc=$?; t1=$(ms)
  if [ $rc -ne 0 ]; then printf '%-20s %-7s %10s %10s %12s  %s\n' $name c - - - "kgen failed: $(head -1 $d.err)"; continue; fi
  make -s -C $d CC="$CC" CFLAGS="-O3 -march=native" >$d.err 2>&1; rc=$?; t2=$(ms)
  if [ $rc -ne 0 ]; then printf '%-20s %-7s %10s %10s %12s  %s\n' $name c $((t1 - t0)) - - "build failed"; continue; fi
  result="matches torch"
  $d/$name $dir/input_0.npy -o $d/out >/dev/null 2>&1 && $work/npycmp $d/out/output_0.npy $dir/output_0.npy >$d.cmp 2>&1 ||
    result="MISMATCH (see $d.cmp)"
  med=$($d/$name --bench 20 $dir/input_0.npy | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  printf '%-20s %-7s %10s %10s %12s  %s\n' $name c $((t1 - t0)) $((t2 - t1)) "$med" "$result"
done

echo
echo "GPU targets: every example and model as CUDA, OpenCL and Metal; OpenCL runs here on pocl"
echo "(the CPU), CUDA is compiled by nvcc, Metal checked by metal-check (no GPU on this machine)."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
MC=${KGEN_METAL_CHECK:-tests/tools/metal-check}
printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' > $work/clprobe.c
have_cl=0; $CC $work/clprobe.c -o $work/clprobe -lOpenCL >/dev/null 2>&1 && $work/clprobe && have_cl=1
export POCL_CACHE_DIR=$PWD/$work/pocl-cache
printf '%-20s %-7s %10s  %s\n' model target "kgen ms" result
for dir in tests/models/*/; do
  [ -f $dir/model.onnx ] || continue
  name=$(basename $dir)
  for t in opencl cuda metal; do
    d=$work/gpu/$name/$t
    mkdir -p $work/gpu/$name
    t0=$(ms); $KGEN $dir/model.onnx --target $t -o $d --name $name --main 2>$d.err; rc=$?; t1=$(ms)
    if [ $rc -ne 0 ]; then printf '%-20s %-7s %10s  %s\n' $name $t - "kgen failed: $(head -1 $d.err)"; continue; fi
    case $t in
      opencl)
        if [ $have_cl = 0 ]; then result="not run: no OpenCL platform (pocl-opencl-icd)"
        elif make -s -C $d CC="$CC" >$d.err 2>&1 && $d/$name $dir/input_0.npy -o $d/out >/dev/null 2>>$d.err &&
             $work/npycmp $d/out/output_0.npy $dir/output_0.npy >$d.cmp 2>&1; then
          result="matches torch on pocl; $($d/$name --bench 5 $dir/input_0.npy 2>&1 | grep -o 'median_ms=[0-9.]*' | head -1)"
        else result="MISMATCH or build failure (see $d.err)"; fi ;;
      cuda)
        if [ ! -x "$NVCC" ]; then result="not compiled: no nvcc"
        elif "$NVCC" -arch=sm_90 -c $d/$name.cu -o $d/$name.o >$d.err 2>&1; then result="nvcc sm_90: compiles ($(grep -c '^__global__' $d/$name.cu) kernels)"
        else result="nvcc FAILED (see $d.err)"; fi ;;
      metal)
        if [ ! -x "$MC" ]; then result="not checked: no metal-check"
        elif "$MC" $d/$name.metal >$d.err 2>&1; then result="metal-check: accepted"
        else result="metal-check FAILED (see $d.err)"; fi ;;
    esac
    printf '%-20s %-7s %10s  %s\n' $name $t $((t1 - t0)) "$result"
  done
done

