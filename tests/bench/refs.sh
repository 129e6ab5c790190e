#!/usr/bin/env bash
# refs.sh - part of `make bench`: kgen against reference libraries, measured in the same
# run, fp32, batch 1. Each figure is the best of three medians (three processes).
#   1. 3x3 convolutions, 56x56, pad 1, stride 1 (64 -> 64 channels; depthwise 64 and 144
#      channels): kgen's generated C with default options, a conv inside a network (what a
#      second conv adds to a model, timed kernel by kernel with the runner's --profile),
#      against oneDNN (tests/bench/dnnl_conv.c), 1 thread.
#   2. MobileNetV2 and ResNet-18 (torchvision, random weights, 1x3x224x224) end to end:
#      kgen's generated C, untuned (default options, and --layout=nchwc16) and, when the
#      tuning log has a record for the model, tuned, against onnxruntime's CPU provider
#      (tests/bench/ort_run.mjs), 1 thread; the largest difference between the outputs.
#   3. ResNet-18 kgen built with -fopenmp (default options, and --layout=nchwc16): 2
#      threads against 1.
# The references are found or installed here: oneDNN (libdnnl-dev, apt-get when root),
# onnxruntime-node (npm, into WORK/ort), torch and torchvision for /usr/bin/python3 to
# export the models (into WORK/conv and WORK/models). A missing one is named and its
# column prints "-"; no figure is ever made up.
#   BENCH_E2E_TUNING_LOG   the tuning log for the tuned column (default WORK/models_tune.log)
#   BENCH_REFS_RUNS        runs per median (default 50 for convs, 20 for models)
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}
PY=${BENCH_PYTHON:-/usr/bin/python3}
flags="-O3 -march=native"
log=${BENCH_E2E_TUNING_LOG:-$work/models_tune.log}
conv_runs=${BENCH_REFS_RUNS:-50}
model_runs=${BENCH_REFS_RUNS:-20}
mkdir -p $work/refs
pin1="" pin2=""
if command -v taskset >/dev/null; then pin1="taskset -c 1"; pin2="taskset -c 0,1"; fi

# best, div, npm_ref, gen, build, cmp_npy
. tests/bench/lib.sh

# ------------------------------------------------------------------ references
# oneDNN: the header and the library (Debian's libdnnl-dev, oneDNN 2.x C API)
dnnl=$work/refs/dnnl_conv
build_dnnl() { $CC -O2 -std=c99 -fopenmp tests/bench/dnnl_conv.c -ldnnl -o $dnnl > $work/refs/dnnl_conv.log 2>&1; }
if ! build_dnnl; then
  if [ ! -f /usr/include/oneapi/dnnl/dnnl.h ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "# oneDNN missing: apt-get install -y libdnnl-dev"
    apt-get install -y libdnnl-dev > $work/refs/apt.log 2>&1
  fi
  build_dnnl || { dnnl=""; echo "# oneDNN missing: apt-get install libdnnl-dev (its columns print -; $work/refs/dnnl_conv.log)"; }
fi

# onnxruntime-node, from npm into WORK/ort
ort_dir=$work/ort
have_ort=0
npm_ref $ort_dir onnxruntime-node && have_ort=1 || echo "# onnxruntime missing: npm install --prefix $ort_dir onnxruntime-node failed or npm/node absent (see $ort_dir/npm.log); its columns print -"

# the models: ONNX exports made by /usr/bin/python3 with torch
$PY tests/bench/export_models.py convs $work/conv > $work/refs/export_convs.log 2>&1 ||
  echo "# cannot export the conv models ($PY with torch and onnx needed): $(tail -1 $work/refs/export_convs.log)"
$PY tests/bench/export_models.py models $work/models > $work/refs/export_models.log 2>&1 ||
  echo "# cannot export MobileNetV2 and ResNet-18 ($PY with torch, torchvision and onnx needed): $(tail -1 $work/refs/export_models.log)"

# ------------------------------------------------------------------ builds
# every kgen build first, two at a time, so that nothing compiles while something is timed;
# a directory whose generated files and build flags did not change since the last run keeps
# its runner (DIR.ok holds the flags it was built with)
convs="conv3x3_64_56:64:1 dw3x3_64_56:64:64 dw3x3_144_56:144:144"
for spec in $convs; do
  IFS=: read -r name c g <<< "$spec"
  [ -f $work/conv/$name.onnx ] || continue
  for m in $name ${name}_x2; do
    [ -f $work/conv/$m.onnx ] && gen $work/conv/$m.onnx $work/refs/$m && build $work/refs/$m net_profile
  done
done
# whole models with the default --weights (over 8 MiB, .incbin), as a user builds them:
# --weights=file ran 1-4 % slower (gcc cannot fold the weights' addresses into the kernels)
for name in mobilenetv2 resnet18; do
  [ -f $work/models/$name.onnx ] || continue
  d=$work/refs/$name
  gen $work/models/$name.onnx $d.u && build $d.u net
  # the same code built with -fopenmp, for the threads rows
  if [ $name = resnet18 ]; then
    gen $work/models/$name.onnx $d.omp && build $d.omp net "$flags -fopenmp"
    gen $work/models/$name.onnx $d.c16.omp --layout=nchwc16 && build $d.c16.omp net "$flags -fopenmp"
  fi
  gen $work/models/$name.onnx $d.c16 --layout=nchwc16 && build $d.c16 net
  if [ -f "$log" ] && gen $work/models/$name.onnx $d.t --tuning-log "$log" &&
     ! grep -q "no record" $d.t.kgen.log; then build $d.t net; else rm -rf $d.t $d.t.ok; fi
done
wait

# ------------------------------------------------------------------ 1. convolutions
# kgen's conv time: the second conv of NAME_x2 (two identical convs in a row), i.e. a conv
# inside a network, reading the layout the previous op left (NCHWc16 by default): the
# --profile medians of the kernels that compute its node ('/1/Conv') summed, its padding
# included, less the kernel converting the result to NCHW at the model's output (the bias
# add is fused there). single_ms: every kernel of the one-conv model, conversions included.
second_conv_kernels() {   # the kernels computing node /1/Conv, not converting to NCHW
  awk '/^\/\* [A-Za-z0-9_]+$/ { k = $2 } /^ \* computes .*: Conv .\/1\/Conv.$/ { c[k] = 1 }
       /^ \* fuses .*: layout: .* to NCHW$/ { e[k] = 1 } END { for (k in c) if (!(k in e)) print k }' $1/net.c | sort
}
kgen_profile() {  # kgen_profile DIR INPUT [KERNEL...]: the smallest of three summed profiles
  local d=$1 x=$2 b="" rep v; shift 2
  local want=" $* "
  for rep in 1 2 3; do
    v=$($pin1 $d/net_profile --profile $conv_runs $x 2>/dev/null |
      awk -v want="$want" '$1 == "kernel_ms" && (want == "  " || index(want, " " $3 " ")) { s += $4; n++ }
                           END { if (n) printf "%.6f", s }')
    [ -n "$v" ] && b=$(awk -v a=$v -v b="$b" 'BEGIN { print (b == "" || a < b) ? a : b }')
  done
  echo "${b:--}"
}
impl=""
echo "# 3x3 conv, stride 1, pad 1, bias, fp32, batch 1, 1 thread (${pin1:-no taskset}): kgen generated C ($CC $flags,"
echo "# ${BENCH_MATTR:-plain --target c}) against oneDNN $( [ -n "$dnnl" ] && echo "(direct, format any; reorders not timed)" || echo "(missing)"); best of 3 medians of $conv_runs runs."
echo "# kgen_ms: the second of two such convs in a row (its kernels' --profile medians summed, its padding"
echo "# included, the bias add fused into the output's conversion to NCHW left out): a conv inside a network."
echo "# single_ms: a one-conv model with its NCHW conversions. onednn+reorders_ms: with reorders from and to NCHW."
echo "# ratio: kgen GFLOP/s over oneDNN's (goal >= 0.80)."
printf '%-14s %9s %11s %10s %9s %13s %6s %18s\n' figure kgen_ms kgen_GFLOPs single_ms onednn_ms onednn_GFLOPs ratio \
  onednn+reorders_ms
for spec in $convs; do
  IFS=: read -r name c g <<< "$spec"
  flops=$(awk -v c=$c -v g=$g 'BEGIN { printf "%.0f", 2 * c * 56 * 56 * (c / g) * 9 }')
  o_ms=- o_full=-
  if [ -n "$dnnl" ]; then
    o_ms=$(best conv_ms env OMP_NUM_THREADS=1 $pin1 $dnnl $c 56 56 $g $conv_runs 1)
    o_full=$(best reorder_ms env OMP_NUM_THREADS=1 $pin1 $dnnl $c 56 56 $g $conv_runs 1)
    impl="$impl $name:$(OMP_NUM_THREADS=1 $dnnl $c 56 56 $g 1 1 2>/dev/null | sed -n 's/^impl=\([^ ]*\).*/\1/p')"
  fi
  o_gf=$(div $flops "$(awk -v m=$o_ms 'BEGIN { print m == "-" ? "-" : m * 1e6 }')")
  d1=$work/refs/$name d2=$work/refs/${name}_x2
  if [ ! -f $d1.ok ] || [ ! -f $d2.ok ]; then
    printf '%-14s %s\n' $name "kgen failed: $(tail -1 $d1.kgen.log $d1.build.log $d2.kgen.log $d2.build.log 2>/dev/null | tail -1)"
    continue
  fi
  one=$(kgen_profile $d1 $work/conv/${name}_input.npy)
  ks=$(second_conv_kernels $d2)
  k_ms=-
  [ -n "$ks" ] && k_ms=$(kgen_profile $d2 $work/conv/${name}_x2_input.npy $ks)
  k_gf=$(div $flops "$(awk -v m=$k_ms 'BEGIN { print m == "-" ? "-" : m * 1e6 }')")
  printf '%-14s %9s %11s %10s %9s %13s %6s %18s\n' $name $k_ms $k_gf $one $o_ms $o_gf $(div $o_ms $k_ms) $o_full
done
[ -n "$impl" ] && echo "# oneDNN implementations:$impl"

# ------------------------------------------------------------------ 2. whole models
echo
echo "# MobileNetV2 and ResNet-18 (torchvision, random weights, 1x3x224x224), fp32, 1 thread: kgen generated C"
echo "# (${BENCH_MATTR:-(plain --target c)}, $CC $flags) against onnxruntime $( [ $have_ort = 1 ] && echo "CPU provider (intra 1, inter 1, sequential, all optimisations)" || echo "(missing)");"
echo "# best of 3 medians of $model_runs runs. kgen_ms: default options; nchwc16_ms: --layout=nchwc16; tuned_ms:"
echo "# --tuning-log $log, when it holds a record for the model. ratio: kgen / ort (goal <= 1.0)."
echo "# max_abs_diff: kgen's default build's output against onnxruntime's (max |ort| beside it)."
printf '%-12s %9s %9s %6s %10s %6s %9s %6s %13s %11s\n' model kgen_ms ort_ms ratio nchwc16_ms ratio tuned_ms ratio \
  max_abs_diff max_abs_ort
for name in mobilenetv2 resnet18; do
  x=$work/models/${name}_input.npy
  d=$work/refs/$name
  [ -f $work/models/$name.onnx ] || { echo "$name: not exported"; continue; }
  [ -f $d.u.ok ] || { echo "$name: kgen failed: $(tail -1 $d.u.kgen.log $d.u.build.log 2>/dev/null | tail -1)"; continue; }
  k=$(best median_ms $pin1 $d.u/net --bench $model_runs $x)
  t=- c16=-
  [ -f $d.t.ok ] && t=$(best median_ms $pin1 $d.t/net --bench $model_runs $x)
  [ -f $d.c16.ok ] && c16=$(best median_ms $pin1 $d.c16/net --bench $model_runs $x)
  o=- diff="- -"
  if [ $have_ort = 1 ]; then
    o=$(best median_ms $pin1 node tests/bench/ort_run.mjs $work/models/$name.onnx $x --runs $model_runs --ort $ort_dir)
    rm -rf $d.out
    if node tests/bench/ort_run.mjs $work/models/$name.onnx $x --runs 1 --warmup 0 --ort $ort_dir --out $d.ort.npy >/dev/null 2>&1 &&
       $d.u/net $x -o $d.out >/dev/null 2>&1; then
      diff=$(cmp_npy $d.out/output_0.npy $d.ort.npy)
    fi
  fi
  printf '%-12s %9s %9s %6s %10s %6s %9s %6s %13s %11s\n' $name $k $o $(div $k $o) $c16 $(div $c16 $o) $t $(div $t $o) $diff
done
for name in mobilenetv2 resnet18; do
  [ -f $work/refs/$name.u.ok ] && [ ! -f $work/refs/$name.t.ok ] &&
    echo "# $name: no tuning record in $log, tuned column empty (kgen tune $work/models/$name.onnx --log $log)"
done

# ------------------------------------------------------------------ 3. threads
echo
echo "# ResNet-18 kgen, built with -fopenmp ($CC $flags): OMP_NUM_THREADS=1 (${pin1:-no taskset}) against 2"
echo "# (${pin2:-no taskset}); best of 3 medians of $model_runs runs; parallel_loops: the loops the generated C marks"
echo "# parallel (KGEN_PARALLEL_FOR, or KGEN_TEAM_FOR in a team). goal: speedup >= 1.7. Load average now: $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?) on"
echo "# $(nproc 2>/dev/null || echo ?) cores (two threads need two idle cores: other work on either one stalls every barrier)"
printf '%-12s %-8s %14s %12s %12s %8s\n' model layout parallel_loops 1thread_ms 2threads_ms speedup
for v in default:omp nchwc16:c16.omp; do
  IFS=: read -r layout sfx <<< "$v"
  d=$work/refs/resnet18.$sfx
  if [ ! -f $d.ok ]; then
    printf '%-12s %-8s %s\n' resnet18 $layout "the -fopenmp build failed: $(tail -1 $d.kgen.log $d.build.log 2>/dev/null | tail -1)"
    continue
  fi
  x=$work/models/resnet18_input.npy
  one=$(best median_ms env OMP_NUM_THREADS=1 $pin1 $d/net --bench $model_runs $x)
  two=$(best median_ms env OMP_NUM_THREADS=2 $pin2 $d/net --bench $model_runs $x)
  printf '%-12s %-8s %14s %12s %12s %8s\n' resnet18 $layout "$(grep -Ec "KGEN_(PARALLEL|TEAM)_FOR" $d/net.c)" $one $two \
    $(div $one $two "%.2fx")
done
