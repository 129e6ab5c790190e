#!/usr/bin/env bash
# zoo_wasm.sh - the model zoo (tests/bench/zoo.py) in WebAssembly under node: kgen's
# `--target wasm` (SIMD128, the default: emcc -O3 -msimd128, the generated Makefile) against onnxruntime-web's
# WebAssembly backend (SIMD, ort.env.wasm.numThreads=1; tests/bench/ort_run.mjs --backend web),
# one thread pinned with taskset -c 1 when there, best of three medians. Not a pass/fail test.
#
#     bash tests/bench/zoo_wasm.sh [WORK [quick|full|NAME,NAME...]]
#
# WORK (default build/bench) and the set (default $BENCH_ZOO, else quick) as in zoo.sh, whose
# exports in WORK/zoo it shares (made here when missing). Columns: MFLOPs (2 x kgen --report's
# MACs), kgen_wasm_ms, ortweb_ms, ratio (kgen / ort-web), max_abs_diff (kgen's first output
# against onnxruntime-web's without graph optimisations, max|ort| beside it). A model that
# kgen refuses or that does not link (large ones may not: "initial memory too small") prints
# "-" with the reason. Needs emcc, node, npm (onnxruntime-web into BENCH_ORTWEB_DIR, default
# WORK/ortweb) and what zoo.sh needs to export the models.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
work=${1:-build/bench}
set=${2:-${BENCH_ZOO:-quick}}
PY=${BENCH_PYTHON:-/usr/bin/python3}
flags=""
web_dir=${BENCH_ORTWEB_DIR:-$work/ortweb}
zoo=$work/zoo
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}   # Debian's emcc finds its modules there
mkdir -p $zoo/wasm
pin1=""
command -v taskset >/dev/null && pin1="taskset -c 1"
. tests/bench/lib.sh

command -v emcc >/dev/null || { echo "# model zoo, WebAssembly: skipped, emcc not found (apt-get install emscripten)"; exit 0; }
command -v node >/dev/null || { echo "# model zoo, WebAssembly: skipped, node not found"; exit 0; }
$PY tests/bench/zoo.py list > /dev/null 2>$zoo/list.log ||
  { echo "# model zoo, WebAssembly: skipped, $PY cannot run tests/bench/zoo.py: $(why $zoo/list.log)"; exit 0; }
have_web=0
npm_ref $web_dir onnxruntime-web && have_web=1
names=$(zoo_names $set)
$PY tests/bench/zoo.py export $zoo $names > $zoo/export_wasm.log 2>&1

# builds first, two at a time; the weights in net_weights.bin (--weights=file, as zoo.sh's C):
# ViT-B/16's as C initializers are 1.4 GB of source, which clang 14 could not compile in
# 24 GB
for name in $names; do
  [ -f $zoo/$name.onnx ] && GEN_TARGET="wasm" gen $zoo/$name.onnx $zoo/wasm/$name --weights=file && build $zoo/wasm/$name net.wasm
done
wait

web_version=$(node -p "require(require('path').resolve(process.argv[1], 'node_modules/onnxruntime-web/package.json')).version" $web_dir 2>/dev/null)
echo "# model zoo ($set), WebAssembly under node $(node --version), 1 thread ${pin1:-unpinned}: kgen --target wasm (SIMD128)"
echo "# (emcc -O3 -msimd128) against onnxruntime-web ${web_version:-(missing)} (wasm backend, SIMD, numThreads 1, all"
echo "# optimisations); best of 3 medians. ratio: kgen / ort-web. max_abs_diff: against ort-web without optimisations."
echo "# Load average now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) on $(nproc 2>/dev/null || echo ?) cores."
fmt='%-19s %8s %12s %10s %6s %12s %11s\n'
printf "$fmt" model MFLOPs kgen_wasm_ms ortweb_ms ratio max_abs_diff max_abs_ort
notes="" ratios=""
for name in $names; do
  m=$zoo/$name.onnx x=$zoo/${name}_input.npy d=$zoo/wasm/$name
  if [ ! -f $m ]; then
    r=$(sed -n "s/^$name: export failed: //p" $zoo/export_wasm.log | head -1)
    echo "$name: skipped, not exported: ${r:-$(why $zoo/export_wasm.log)}"; continue
  fi
  mflops=$(zoo_mflops $m)
  runs=$(zoo_runs $mflops)
  k=- o=- diff="- -"
  rm -rf $d.out $d.ort.npy
  if [ ! -f $d.ok ]; then
    notes="$notes\n# $name: no kgen WebAssembly: $( [ -d $d ] && echo "the build failed: $(why $d.build.log)" || echo "kgen refused it: $(why $d.kgen.log)")"
  elif ! node $d/net_main.mjs $x -o $d.out > $d.run.log 2>&1; then
    notes="$notes\n# $name: the kgen WebAssembly runner failed: $(why $d.run.log)"
  else
    k=$(best median_ms $pin1 node $d/net_main.mjs --bench $runs $x)
  fi
  if [ $have_web = 1 ]; then
    : > $d.ort.log
    if node tests/bench/ort_run.mjs $m $x --runs 1 --warmup 0 --opt disabled --backend web --ort $web_dir \
         --out $d.ort.npy > /dev/null 2>> $d.ort.log; then
      [ -f $d.out/output_0.npy ] && diff=$(cmp_npy $d.out/output_0.npy $d.ort.npy)
    else
      notes="$notes\n# $name: onnxruntime-web (no optimisations) failed: $(why $d.ort.log)"
    fi
    o=$(best median_ms ort_time $m $x $runs $d.ort.log --backend web --ort $web_dir)
    [ "$o" = - ] && notes="$notes\n# $name: onnxruntime-web (all optimisations) failed: $(why $d.ort.log)"
  fi
  ratio=$(div $k $o)
  [ "$ratio" != - ] && ratios="$ratios $ratio"
  printf "$fmt" $name $mflops $k $o $ratio $diff
done
[ $have_web = 1 ] || notes="$notes\n# onnxruntime-web missing (npm install --prefix $web_dir onnxruntime-web: $(why $web_dir/npm.log)): its columns print -"
[ -n "$notes" ] && printf '%b\n' "${notes#\\n}"
geomean "kgen / ort-web" $ratios
