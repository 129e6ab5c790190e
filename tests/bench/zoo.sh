#!/usr/bin/env bash
# zoo.sh - the model-zoo benchmark: kgen's generated C against onnxruntime on whole models
# (torchvision classifiers and segmentation nets, a U-Net, a CRNN, an audio front end; seeded
# random weights, fp32, batch 1; the list is in tests/bench/zoo.py). Not a pass/fail test.
#
#     bash tests/bench/zoo.sh [WORK [quick|full|NAME,NAME...]]
#
# WORK defaults to build/bench; the set to $BENCH_ZOO, else quick: squeezenet1_1,
# mobilenet_v3_small, shufflenet_v2 and audio_frontend (`make bench` runs it, a few
# minutes). full is every model (`make bench-zoo`, or BENCH_ZOO=full make bench; about half
# an hour the first time, most of it exporting and compiling). Per model, one row:
#   MFLOPs       2 x the MACs `kgen --report` counts (it counts none for LSTM: CRNN's BiLSTM
#                is left out)
#   kgen_ms      kgen's runner (the default --weights, $CC -O3 -march=native), 1 thread, --bench
#   ort_ms       onnxruntime-node's CPU provider (tests/bench/ort_run.mjs: intra-op 1, inter-op 1,
#                sequential, graphOptimizationLevel all), the speed anchor
#   ratio        kgen_ms / ort_ms (below 1: kgen is faster)
#   kgen2t_ms    the same C built with -fopenmp, OMP_NUM_THREADS=2; 2t/1t: kgen_ms / kgen2t_ms
#   rt_ns        a cache line's round trip between the two cores, just before the 2-thread
#                timing (tests/bench/pingpong.c): a VM's host may move its two CPUs between
#                nearby and far-apart cores, and the 2t/1t column moves with it
#   c0/c1        the same 1-thread runner pinned to CPU 0 against CPU 1 (kgen_ms): above 1,
#                the host gives the other CPU less (a Firecracker VM's CPU 0 ran 1.2x slower
#                than its CPU 1 for an hour), and 2 threads wait for the slower one: 2t/1t
#                is at most about 1 + 1 / (c0/c1) then
#   max_abs_diff kgen's first output against onnxruntime's (graphOptimizationLevel disabled:
#                some of its fusions are wrong), with max|ort| beside it
#   top_kernel   the kernel taking the most time in the profiling runner (make net_profile,
#                --profile N), its share of the kernels' total, its ops and its node
# then the geometric mean of the ratios. Everything is built first (two builds at a time,
# nice), then timed: one thread pinned with taskset -c 1, two with -c 0,1 (when taskset is
# there), each figure the best of three medians. Runs per median: BENCH_ZOO_RUNS, else from
# the model's size (20 for the smallest, 5 from 2 GFLOPs up; tests/bench/lib.sh). A model that fails to export,
# that kgen refuses or that does not build gets a line saying so; a reference that is
# missing prints "-" and a note says why: no figure is ever made up.
# Needs /usr/bin/python3 with torch, torchvision, onnx and numpy (BENCH_PYTHON; torchvision
# is apt-get installed as python3-torchvision when root), node and npm for onnxruntime-node
# (installed into BENCH_ORT_DIR, default WORK/ort). Exports are cached in WORK/zoo.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}
set=${2:-${BENCH_ZOO:-quick}}
PY=${BENCH_PYTHON:-/usr/bin/python3}
flags="-O3 -march=native"
ort_dir=${BENCH_ORT_DIR:-$work/ort}
zoo=$work/zoo
mkdir -p $zoo/runs
pin1="" pin2=""
if command -v taskset >/dev/null; then pin1="taskset -c 1"; pin2="taskset -c 0,1"; fi
. tests/bench/lib.sh

# ------------------------------------------------------------------ references, models
if ! $PY -c "import torchvision" 2>/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "# torchvision missing: apt-get install -y python3-torchvision"
  apt-get install -y --no-install-recommends python3-torchvision > $zoo/apt.log 2>&1
fi
have_ort=0
npm_ref $ort_dir onnxruntime-node && have_ort=1
$PY tests/bench/zoo.py list > /dev/null 2>$zoo/list.log ||
  { echo "# model zoo: skipped, $PY cannot run tests/bench/zoo.py: $(why $zoo/list.log)"; exit 0; }
names=$(zoo_names $set)
# the exports the cache lacks (torch's warnings go to the log; "NAME: export failed: ..." lines
# are kept for the table)
$PY tests/bench/zoo.py export $zoo $names > $zoo/export.log 2>&1

# ------------------------------------------------------------------ builds
# per model: runs/NAME (the runner and the profiling runner) and runs/NAME.omp (-fopenmp)
for name in $names; do
  m=$zoo/$name.onnx d=$zoo/runs/$name
  [ -f $m ] || continue
  gen $m $d && build $d "net net_profile"
  gen $m $d.omp && build $d.omp net "$flags -fopenmp"
done
wait

# ------------------------------------------------------------------ timing
# top_kernel DIR INPUT RUNS: "SHARE% OPS NODE" of the kernel with the largest --profile median
top_kernel() {
  local k
  k=$($pin1 $1/net_profile --profile $3 $2 2>/dev/null |
    awk '$1 == "kernel_ms" && $4 + 0 > m { m = $4 + 0; k = $3 } $1 == "kernel_ms" { s += $4 }
         END { if (s > 0) printf "%s %.0f%%", k, 100 * m / s }')
  [ -n "$k" ] || { echo "- -"; return; }
  # the ops it computes and fuses (net.c's comment atop each kernel) and the node it computes
  awk -v k="${k% *}" -v share="${k#* }" '
    $0 == "/* " k { on = 1; next }
    on && /^ \* (computes|fuses) [^ ]*: / {
      op = $4; sub(/:$/, "", op)
      if (!(op in seen)) { seen[op] = 1; ops = ops (ops == "" ? "" : "+") op }
      if ($2 == "computes" && match($0, /'\''[^'\'']*'\''/)) node = substr($0, RSTART + 1, RLENGTH - 2)
      next }
    on { exit }
    END { printf "%s %s %s\n", share, ops == "" ? "?" : ops, node }' $1/net.c
}
ort_version=$(node -p "require(require('path').resolve(process.argv[1], 'node_modules/onnxruntime-node/package.json')).version" $ort_dir 2>/dev/null)
echo "# model zoo ($set): kgen generated C ($CC $flags, ${BENCH_MATTR:-(plain --target c)}) against onnxruntime-node $(
  [ $have_ort = 1 ] && echo "$ort_version CPU provider (intra 1, inter 1, all optimisations)" || echo "(missing)")"
echo "# fp32, batch 1; 1 thread ${pin1:-unpinned}, 2 threads ${pin2:-unpinned} (-fopenmp); best of 3 medians."
echo "# ratio: kgen / ort (below 1: kgen faster); 2t/1t: kgen's 2-thread speedup; max_abs_diff: kgen against"
echo "# onnxruntime without graph optimisations; top: the slowest kernel's share of the profile."
echo "# Load average now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) on $(nproc 2>/dev/null || echo ?) cores."
pingpong=""
$CC -std=c11 -O2 -pthread tests/bench/pingpong.c -o $zoo/pingpong > /dev/null 2>&1 && pingpong="$pin2 $zoo/pingpong"
round_trip() { { [ -n "$pingpong" ] && $pingpong 2>/dev/null | sed -n 's/^round_trip_ns=//p'; } | grep . || echo -; }
fmt='%-19s %8s %9s %9s %6s %9s %6s %6s %5s %12s %11s %5s %s\n'
printf "$fmt" model MFLOPs kgen_ms ort_ms ratio kgen2t_ms 2t/1t rt_ns c0/c1 max_abs_diff max_abs_ort top top_kernel
notes="" ratios=""
for name in $names; do
  m=$zoo/$name.onnx x=$zoo/${name}_input.npy d=$zoo/runs/$name
  if [ ! -f $m ]; then
    r=$(sed -n "s/^$name: export failed: //p" $zoo/export.log | head -1)
    echo "$name: skipped, not exported: ${r:-$(why $zoo/export.log)}"; continue
  fi
  if [ ! -f $d.ok ]; then
    if [ -d $d ]; then echo "$name: skipped, the build failed: $(why $d.build.log)"
    else echo "$name: skipped, kgen refused it: $(why $d.kgen.log)"; fi
    continue
  fi
  mflops=$(zoo_mflops $m)
  runs=$(zoo_runs $mflops)
  # the outputs first: kgen's, and onnxruntime's without graph optimisations
  rm -rf $d.out $d.ort.npy
  k=- k2=- o=- diff="- -" top="- -"
  if ! $d/net $x -o $d.out > $d.run.log 2>&1; then
    echo "$name: skipped, the runner failed: $(why $d.run.log)"; continue
  fi
  k=$(best median_ms $pin1 $d/net --bench $runs $x)
  k0=-
  [ -n "$pin1" ] && k0=$(best median_ms taskset -c 0 $d/net --bench $runs $x)
  rt=$(round_trip)
  [ -f $d.omp.ok ] && k2=$(best median_ms env OMP_NUM_THREADS=2 $pin2 $d.omp/net --bench $runs $x) ||
    notes="$notes\n# $name: no -fopenmp build: $(why $d.omp.kgen.log $d.omp.build.log)"
  if [ $have_ort = 1 ]; then
    : > $d.ort.log
    if node tests/bench/ort_run.mjs $m $x --runs 1 --warmup 0 --opt disabled --ort $ort_dir --out $d.ort.npy \
         > /dev/null 2>> $d.ort.log; then
      diff=$(cmp_npy $d.out/output_0.npy $d.ort.npy)
    else
      notes="$notes\n# $name: onnxruntime (no optimisations) failed: $(why $d.ort.log)"
    fi
    o=$(best median_ms ort_time $m $x $runs $d.ort.log --ort $ort_dir)
    [ "$o" = - ] && notes="$notes\n# $name: onnxruntime (all optimisations) failed: $(why $d.ort.log)"
  fi
  top=$(top_kernel $d $x $runs)
  ratio=$(div $k $o)
  [ "$ratio" != - ] && ratios="$ratios $ratio"
  printf "$fmt" $name $mflops $k $o $ratio $k2 $(div $k $k2) $rt $(div $k0 $k) $diff ${top%% *} "${top#* }"
done
[ $have_ort = 1 ] || notes="$notes\n# onnxruntime-node missing (npm install --prefix $ort_dir onnxruntime-node: $(why $ort_dir/npm.log)): its columns print -"
[ -n "$notes" ] && printf '%b\n' "${notes#\\n}"
geomean "kgen / ort" $ratios
