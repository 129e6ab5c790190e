#!/usr/bin/env bash
# convt.sh - ConvTranspose models (tests/bench/convt_models.py: the PaddleOCR DB head
# pattern, a k 4 s 2 p 1 U-Net/GAN upsampler, a 1-D one): kgen's generated C (default
# options, -O3 -march=native, 1 thread, the runner's --bench) against onnxruntime-node's
# CPU provider (1 thread, all optimisations), measured in the same run: the best of 3
# medians and the smallest time of those runs (min: the steadier figure on a loaded
# machine). Each kgen given is timed (e.g. a baseline build beside the current
# one); max_rel: the largest |kgen - ort| / max|ort| against onnxruntime run with no graph
# optimisation (the reference).
#     bash tests/bench/convt.sh [WORK] [KGEN...]     (default build/bench/convt ./kgen)
# onnxruntime-node is looked up in $ORT_DIR (default WORK/ort, installed there with npm
# when missing).
set -u
work=${1:-build/bench/convt}
shift || true
kgens=("$@")
[ ${#kgens[@]} -gt 0 ] || kgens=(./kgen)
PY=${BENCH_PYTHON:-/usr/bin/python3}
CC=${CC:-gcc}
runs=${BENCH_CONVT_RUNS:-50}
ort_dir=${ORT_DIR:-$work/ort}
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
mkdir -p $work
if [ ! -d $ort_dir/node_modules/onnxruntime-node ] && command -v npm >/dev/null; then
  ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix $ort_dir --no-audit --no-fund --silent onnxruntime-node \
    > $work/npm.log 2>&1
fi
$PY tests/bench/convt_models.py $work/models > $work/export.log 2>&1 || { echo "export failed: $(tail -1 $work/export.log)"; exit 1; }
models="det_head up_k4 up_1d"
best() {   # best CMD...: "MEDIAN MIN", the smallest median_ms= and min_ms= of three runs
  local b="" v rep
  for rep in 1 2 3; do
    v=$("$@" 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\) min_ms=\([0-9.]*\).*/\1 \2/p' | head -1)
    [ -n "$v" ] && b=$(awk -v a="$v" -v b="$b" 'BEGIN { split(a, x, " "); if (b == "") { print a; exit }
      split(b, y, " "); printf "%.3f %.3f\n", x[1] < y[1] ? x[1] : y[1], x[2] < y[2] ? x[2] : y[2] }')
  done
  echo "${b:-- -}"
}
for m in $models; do
  for i in "${!kgens[@]}"; do
    d=$work/$m.k$i
    rm -rf $d
    ${kgens[$i]} $work/models/$m.onnx --target c -o $d --name net --main > $d.log 2>&1 &&
      make -s -C $d CC="$CC" CFLAGS="-O3 -march=native" net >> $d.log 2>&1 || echo "# $m: kgen ${kgens[$i]} failed ($d.log)"
  done
  node tests/bench/ort_run.mjs $work/models/$m.onnx $work/models/${m}_input.npy --runs 1 --warmup 0 --ort $ort_dir \
    --opt disabled --out $work/$m.ort.npy > /dev/null 2>&1 || echo "# $m: onnxruntime failed"
done
printf '%-10s' model
for i in "${!kgens[@]}"; do printf ' %10s %10s %9s' kgen${i}_med kgen${i}_min max_rel$i; done
printf ' %9s %9s\n' ort_med ort_min
for m in $models; do
  x=$work/models/${m}_input.npy
  printf '%-10s' $m
  for i in "${!kgens[@]}"; do
    d=$work/$m.k$i
    t=$(best $pin $d/net --bench $runs $x)
    rm -rf $d.out
    r=$($d/net $x -o $d.out > /dev/null 2>&1 && $PY -c 'import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print("%.2g" % (float(np.abs(a - b).max()) / float(np.abs(b).max())))' $d.out/output_0.npy $work/$m.ort.npy 2>/dev/null || echo -)
    printf ' %10s %10s %9s' $t $r
  done
  printf ' %9s %9s\n' $(best $pin node tests/bench/ort_run.mjs $work/models/$m.onnx $x --runs $runs --ort $ort_dir)
done
