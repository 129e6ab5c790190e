#!/usr/bin/env bash
# bench.sh - `make bench`: single-thread speed of generated code against a baseline
# measured in the same run (never a pass/fail test; the machines are shared and noisy).
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=build/bench
mkdir -p $work
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
echo "# generated matmul (examples/matmul.kg, hand schedule) vs a naive loop, $CC -O3 -march=native, 1 thread"
for n in 256 512 1024; do
  d=$work/matmul_$n
  $KGEN examples/matmul.kg --target c -o $d -DM=$n -DN=$n -DK=$n || exit 1
  $CC -O3 -march=native -std=c99 -I$d -DM=$n tests/bench/matmul_bench.c $d/matmul.c -lm -o $d/bench || exit 1
  $pin $d/bench
done

echo
KGEN=$KGEN bash tests/bench/gemm.sh $work
echo
KGEN=$KGEN bash tests/bench/refs.sh $work
echo
KGEN=$KGEN bash tests/bench/tuned_models.sh $work
echo
# the model zoo: its quick subset unless BENCH_ZOO says otherwise (full, or a list of names)
KGEN=$KGEN CC=$CC bash tests/bench/zoo.sh $work ${BENCH_ZOO:-quick}
echo
KGEN=$KGEN CC=$CC bash tests/bench/zoo_wasm.sh $work ${BENCH_ZOO:-quick}

echo
echo "# committed real models: generated C, $CC -O3 -march=native, 1 thread, median of 20 runs"
printf '%-20s %12s %14s %14s\n' model median_ms arena_bytes weights_bytes
for dir in tests/models/*/; do
  name=$(basename $dir)
  [ -f $dir/model.onnx ] || continue
  [ -f $dir/dims ] && continue   # run-time dims (tests/dyn_js.sh)
  d=$work/models/$name
  rm -rf $d
  $KGEN $dir/model.onnx --target c -o $d --name $name --main >/dev/null || { echo "$name: kgen failed"; continue; }
  make -s -C $d CC="$CC" CFLAGS="-O3 -march=native" >/dev/null 2>&1 || { echo "$name: build failed"; continue; }
  ms=$($pin $d/$name --bench 20 $dir/input_0.npy | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  echo "$ms" > $work/models/$name.c_ms   # for the JS and WebAssembly table below
  arena=$(sed -n "s/^#define [A-Z0-9_]*_ARENA_BYTES \([0-9]*\)/\1/p" $d/$name.h)
  wbytes=$($KGEN $dir/model.onnx --report | sed -n 's/.*weights \([0-9]*\) bytes.*/\1/p')
  printf '%-20s %12s %14s %14s\n' $name "$ms" "$arena" "$wbytes"
done

echo
KGEN=$KGEN CC=$CC bash tests/bench/dyn.sh $work

echo
KGEN=$KGEN bash tests/bench/js.sh $work

echo
KGEN=$KGEN CC=$CC bash tests/bench/bigmodel.sh $work

echo
echo "# conv layouts: NCHW against the blocked NCHWc layout pass (--layout=nchwc, nchwc16)"
LAYOUT_BENCH=1 BUILD=$work bash tests/layout.sh 2>/dev/null | grep "median ms"
