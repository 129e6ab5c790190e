#!/usr/bin/env bash
# bigmodel.sh - a big model builds: tests/bench/bigmodel.py writes a chain of MatMul, Add
# and Relu with 336 MB of seeded random weights (about a ViT-B/16's 330 MB); kgen
# compiles it with the default --weights=auto (NAME_weights.bin linked by .incbin), and
# the generated Makefile builds the runner under /usr/bin/time -v: the build's wall time
# and the compiler's peak memory (the largest max RSS among cc1, as and ld) are printed,
# with the same figures for C arrays (--weights=embed) of a model at the 8 MiB threshold
# (at 336 MB they take minutes and about 10 GB). Part of `make bench`, runnable alone:
#   bash tests/bench/bigmodel.sh [WORKDIR]      (KGEN, CC honoured; needs /usr/bin/python3
#                                                with numpy and onnx, and /usr/bin/time)
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}/bigmodel
PY=/usr/bin/python3
if ! $PY -c "import onnx, numpy" 2> /dev/null || [ ! -x /usr/bin/time ]; then
  echo "# big model build: skipped (needs $PY with onnx and numpy, and /usr/bin/time)"
  exit 0
fi
rm -rf $work; mkdir -p $work
# figures NAME LOG: "wall S, peak RSS MB" from a /usr/bin/time -v log
figures() {
  awk -v n="$1" '/Elapsed \(wall clock\)/ { t = $NF; k = split(t, p, ":"); s = 0
                   for (i = 1; i <= k; i++) s = s * 60 + p[i] }
                 /Maximum resident set size/ { r = $NF }
                 END { printf "%-44s %8.1f s %10.0f MB\n", n, s, r / 1024 }' "$2"
}
echo "# big model build: kgen, then make (CC=$CC CFLAGS=-O2) of the runner; wall time, peak RSS"
# the model with ViT-like weights, and one just over the 8 MiB threshold (here forced to C arrays)
$PY tests/bench/bigmodel.py $work/big 20 2048 || exit 1
$PY tests/bench/bigmodel.py $work/small 1 1448 || exit 1
for m in big:auto small:embed; do
  name=${m%%:*} mode=${m#*:} d=$work/${m%%:*}
  if ! /usr/bin/time -v $KGEN $d/model.onnx --target c -o $d/out --name $name --main --weights=$mode \
       > $d/kgen.log 2> $d/kgen.time; then
    echo "$name: kgen failed: $(grep -m1 error $d/kgen.time)"; continue
  fi
  mb=$(stat -c %s $d/model.onnx | awk '{printf "%.0f", $1 / 1e6}')
  figures "kgen, $mb MB model, --weights=$mode" $d/kgen.time
  if ! /usr/bin/time -v make -s -C $d/out CC="$CC" CFLAGS=-O2 > $d/make.log 2> $d/make.time; then
    echo "$name: the build failed: $(grep -m1 -i error $d/make.time)"; continue
  fi
  how=$( [ -f $d/out/${name}_weights.S ] && echo ".incbin" || echo "C arrays $(stat -c %s $d/out/${name}_weights.c | awk '{printf "%.0f MB", $1 / 1e6}')")
  figures "make, $mb MB model, $how" $d/make.time
  if ! $d/out/$name --bench 3 $d/input_0.npy > $d/run.log 2>&1; then
    echo "$name: the runner failed: $(head -1 $d/run.log)"
  fi
done
