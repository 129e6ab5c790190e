#!/usr/bin/env bash
# gemm.sh - part of `make bench`: kgen's sgemm (examples/matmul.kg) untuned and tuned by
# `kgen tune` against OpenBLAS, one thread, measured in one process per size. The tuning
# log build/bench/gemm_tune.log persists, so each `make bench` resumes the search with
# BENCH_TUNE_TRIALS more trials per size (default 12).
# OpenBLAS runs with OPENBLAS_CORETYPE=SkylakeX (Debian's 0.3.21 does not recognise this
# CPU and would fall back to SSE3 kernels) and OPENBLAS_L2_SIZE unset.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}/gemm
trials=${BENCH_TUNE_TRIALS:-12}
flags="-O3 -march=native"
mkdir -p $work
log=$work/../gemm_tune.log
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
blas=""
probe() { echo 'void cblas_sgemm(); int main(void) { cblas_sgemm(); return 0; }' | $CC -x c - -lopenblas -o $work/probe 2>/dev/null; }
if ! probe && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "# OpenBLAS missing: apt-get install -y libopenblas-dev"
  apt-get install -y libopenblas-dev >/dev/null 2>&1
fi
if probe; then blas="-DWITH_BLAS -lopenblas"; else echo "# OpenBLAS: MISSING (install libopenblas-dev); its column stays 0"; fi

echo "# sgemm N^3, fp32, 1 thread, $CC $flags: kgen untuned (matmul.kg as written), tuned ($trials more trials of"
echo "# kgen tune each run, log $log), OpenBLAS (CORETYPE=SkylakeX); GFLOP/s: in one process, the median of
# several runs each; the best of three processes"
printf '%-6s %10s %10s %10s %14s %14s  %s\n' N untuned tuned OpenBLAS tuned/OpenBLAS untuned/OpenBLAS tuned_config
for n in 512 1024; do
  d=$work/$n
  shape="-DM=$n -DN=$n -DK=$n"
  $KGEN tune examples/matmul.kg $shape --trials $trials --log $log --cc "$CC" --cflags "$flags" --runs 9 \
    --work $d/tune > $d.tune.out 2> $d.tune.err || { echo "$n: kgen tune failed: $(tail -1 $d.tune.err)"; continue; }
  $KGEN examples/matmul.kg $shape --name mm_untuned -o $d/untuned || exit 1
  $KGEN examples/matmul.kg $shape --name mm_tuned --tuning-log $log -o $d/tuned 2>/dev/null || exit 1
  cfg=$(sed -n 's/^best \([^:]*\):.*/\1/p' $d.tune.out)
  $CC $flags -std=c99 -DN=$n -I$d/tuned -I$d/untuned tests/bench/gemm_bench.c $d/tuned/mm_tuned.c \
    $d/untuned/mm_untuned.c $blas -lm -o $d/bench || exit 1
  # three runs of the program, the best median of each column (the machine is shared)
  u=0 t=0 b=0
  for rep in 1 2 3; do
    line=$(env -u OPENBLAS_L2_SIZE OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 $pin $d/bench) ||
      { echo "$n: the results differ: $line"; continue 2; }
    u=$(echo "$line $u" | sed -n 's/.*untuned_gflops=\([0-9.]*\).* \([0-9.]*\)$/\1 \2/p' | awk '{print ($1 > $2 ? $1 : $2)}')
    t=$(echo "$line $t" | sed -n 's/.* tuned_gflops=\([0-9.]*\).* \([0-9.]*\)$/\1 \2/p' | awk '{print ($1 > $2 ? $1 : $2)}')
    b=$(echo "$line $b" | sed -n 's/.*blas_gflops=\([0-9.]*\).* \([0-9.]*\)$/\1 \2/p' | awk '{print ($1 > $2 ? $1 : $2)}')
  done
  ratio() { awk -v x=$1 -v y=$2 'BEGIN { if (y > 0) printf "%.2f", x / y; else printf "n/a" }'; }
  printf '%-6s %10s %10s %10s %14s %14s  %s\n' $n $u $t $b $(ratio $t $b) $(ratio $u $b) "$cfg"
done
