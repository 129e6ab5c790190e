#!/usr/bin/env bash
# movement.sh - data movement around reductions (kgen issue 18): whole models whose time
# goes into layout ops between convolutions and matmuls, kgen's generated C against
# onnxruntime, fp32, batch 1, 1 thread, and optionally against an earlier kgen:
#   crnn        a CRNN-like recognizer (tests/bench/export_models.py movement): conv
#               features [1,256,1,80] squeezed, transposed to [1,80,256], a MatMul with a
#               [256,6000] weight (the PaddleOCR recognizer's slow kernel)
#   shufflenet  torchvision shufflenet_v2_x1_0 (channel shuffles: Reshape, Transpose,
#               Reshape), squeezenet (squeezenet1_1: Fire modules, a Concat of two convs),
#               googlenet (Inception Concats), densenet121 (dense Concats), 1x3x224x224
#
#     bash tests/bench/movement.sh [WORK]      (default WORK build/bench/movement)
#
# Each figure is the best of three medians of BENCH_RUNS runs (default 20), the kgen
# builds and onnxruntime interleaved, pinned to one core with taskset when there is one.
#   KGEN        the kgen measured (default ./kgen): kgen_ms
#   KGEN_BASE   an earlier kgen, the "before" column (base_ms; "-" when unset)
# ort_ms: onnxruntime-node's CPU provider, every graph optimisation (tests/bench/ort_run.mjs,
# found under ORT_DIR, default /work/ort-cache then WORK/ort). max_rel: the largest
# |kgen - ort| / max |ort| of the output against onnxruntime with its graph optimisations
# off (its Pad+MaxPool fusion is wrong). The slowest kernels of each kgen build
# (--profile) go to WORK/NAME.profile. Needs /usr/bin/python3 with torch, torchvision, onnx.
set -u
KGEN=${KGEN:-./kgen}
BASE=${KGEN_BASE:-}
CC=${CC:-gcc}
work=${1:-build/bench/movement}
PY=${BENCH_PYTHON:-/usr/bin/python3}
runs=${BENCH_RUNS:-20}
flags="-O3 -march=native"
models=${BENCH_MODELS:-crnn shufflenet squeezenet googlenet densenet121}
pin=""
command -v taskset > /dev/null && pin="taskset -c 1"
ort_dir=${ORT_DIR:-/work/ort-cache}
[ -d $ort_dir/node_modules/onnxruntime-node ] || ort_dir=$work/ort
mkdir -p $work
$PY tests/bench/export_models.py movement $work > $work/export.log 2>&1 ||
  { echo "# cannot export the models: $(tail -1 $work/export.log)"; exit 1; }
have_ort=0
[ -d $ort_dir/node_modules/onnxruntime-node ] && command -v node > /dev/null && have_ort=1

median() {   # median CMD...: the median_ms=... CMD prints, or -
  local v
  v=$("$@" 2>/dev/null | sed -n "s/.*\bmedian_ms=\([0-9.]*\).*/\1/p" | head -1)
  echo "${v:--}"
}
div() { awk -v x="$1" -v y="$2" 'BEGIN { if (x != "-" && y != "-" && y + 0 > 0) printf "%.2f", x / y; else printf "-" }'; }
build() {   # build KGEN MODEL DIR: generate and make DIR's net and net_profile; 1 on failure
  rm -rf $3
  $1 $2 --target c -o $3 --name net --main --weights=file > $3.kgen.log 2>&1 &&
    nice -n 10 make -s -C $3 CC="$CC" CFLAGS="$flags" net net_profile > $3.build.log 2>&1
}

echo "# fp32, batch 1, 1 thread (${pin:-no taskset}); best of 3 medians of $runs runs; kgen: $CC $flags, --weights=file"
echo "# base_ms: ${BASE:-(KGEN_BASE unset)}; kgen_ms: $KGEN; ort_ms: onnxruntime-node $( [ $have_ort = 1 ] || echo "(missing)")"
printf '%-12s %9s %9s %9s %9s %9s %10s\n' model base_ms kgen_ms ort_ms base/ort kgen/ort max_rel
for m in $models; do
  x=$work/${m}_input.npy
  ok=1 bok=0
  build $KGEN $work/$m.onnx $work/$m.kgen || ok=0
  [ -n "$BASE" ] && build $BASE $work/$m.onnx $work/$m.base && bok=1
  if [ $ok = 0 ]; then echo "$m: kgen failed: $(tail -1 $work/$m.kgen.kgen.log $work/$m.kgen.build.log | tail -1)"; continue; fi
  k=- b=- o=- rel=-
  kb="" bb="" ob=""
  for rep in 1 2 3; do   # interleaved: each round runs every build once
    kb="$kb $(median $pin $work/$m.kgen/net --bench $runs $x)"
    [ $bok = 1 ] && bb="$bb $(median $pin $work/$m.base/net --bench $runs $x)"
    [ $have_ort = 1 ] && ob="$ob $(median $pin node tests/bench/ort_run.mjs $work/$m.onnx $x --runs $runs --ort $ort_dir)"
  done
  low() { echo $* | tr ' ' '\n' | grep -v '^-$' | sort -g | head -1; }
  k=$(low $kb); [ -n "$bb" ] && b=$(low $bb); [ -n "$ob" ] && o=$(low $ob)
  k=${k:--} b=${b:--} o=${o:--}
  if [ $have_ort = 1 ] && node tests/bench/ort_run.mjs $work/$m.onnx $x --runs 1 --warmup 0 --no-opt --ort $ort_dir \
       --out $work/$m.ort.npy > /dev/null 2>&1 && rm -rf $work/$m.out && $work/$m.kgen/net $x -o $work/$m.out > /dev/null 2>&1; then
    rel=$($PY -c 'import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); print("%.2g" % (float(np.abs(a - b).max()) / float(np.abs(b).max())))' \
      $work/$m.out/output_0.npy $work/$m.ort.npy 2>/dev/null || echo -)
  fi
  for d in kgen base; do
    [ -x $work/$m.$d/net_profile ] || continue
    $pin $work/$m.$d/net_profile --profile $runs $x 2>/dev/null | grep '^kernel_ms' | sort -k4 -g -r > $work/$m.$d.prof.all
    { head -8 $work/$m.$d.prof.all; awk '{ s += $4 } END { printf "total_ms %.3f\n", s }' $work/$m.$d.prof.all; } > $work/$m.$d.profile
  done
  printf '%-12s %9s %9s %9s %9s %9s %10s\n' $m $b $k $o $(div $b $o) $(div $k $o) $rel
done
