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
