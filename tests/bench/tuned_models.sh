#!/usr/bin/env bash
# tuned_models.sh - part of `make bench`: committed real models, generated C untuned and
# tuned by `kgen tune` (the register tile of the default schedule and the conv layout;
# BENCH_TUNE_TRIALS more trials per run, default 8, log build/bench/models_tune.log), both
# built by the runner's Makefile and timed in turn (--bench 30, the best of three medians).
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}/tuned_models
trials=${BENCH_TUNE_TRIALS:-8}
flags="-O3 -march=native"
log=$work/../models_tune.log
mkdir -p $work
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
echo "# real models, 1 thread, $CC $flags: untuned vs tuned ($trials more trials of kgen tune each run, log $log)"
printf '%-20s %12s %12s %8s  %s\n' model untuned_ms tuned_ms speedup tuned_config
best_ms() {   # the best median of three --bench runs
  local b="" m
  for rep in 1 2 3; do
    m=$($pin $1 --bench 30 $2 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
    b=$(awk -v a="$m" -v b="$b" 'BEGIN { print (b == "" || a < b) ? a : b }')
  done
  echo $b
}
for name in ${BENCH_TUNE_MODELS:-mobilenetv2_small resnet_blocks}; do
  dir=tests/models/$name
  [ -f $dir/model.onnx ] || { echo "$name: missing"; continue; }
  d=$work/$name
  rm -rf $d/u $d/t
  $KGEN tune $dir/model.onnx --trials $trials --log $log --cc "$CC" --cflags "$flags" --runs 9 --work $d/tune \
    > $d.tune.out 2> $d.tune.err || { echo "$name: kgen tune failed: $(tail -1 $d.tune.err)"; continue; }
  $KGEN $dir/model.onnx --name net --main -o $d/u >/dev/null &&
    $KGEN $dir/model.onnx --name net --main --tuning-log $log -o $d/t >/dev/null 2>&1 &&
    make -s -C $d/u CC="$CC" CFLAGS="$flags" >/dev/null 2>&1 && make -s -C $d/t CC="$CC" CFLAGS="$flags" >/dev/null 2>&1 ||
    { echo "$name: build failed"; continue; }
  u=$(best_ms $d/u/net $dir/input_0.npy)
  t=$(best_ms $d/t/net $dir/input_0.npy)
  cfg=$(sed -n 's/^best \([^:]*\):.*/\1/p' $d.tune.out)
  printf '%-20s %12s %12s %8s  %s\n' $name $u $t $(awk -v u=$u -v t=$t 'BEGIN { printf "%.2fx", u / t }') "$cfg"
done
