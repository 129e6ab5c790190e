#!/usr/bin/env bash
# js.sh - `make bench`'s browser-target table: the committed real models, and the full-size
# MobileNetV2 and ResNet-18 when refs.sh has exported them (WORK/models/NAME.onnx), as
# WebAssembly (--target wasm: SIMD128, emcc -O3; weights in a file, which compiles much faster
# than embedding them and runs the same code) and JavaScript (--target js) under node, one
# thread, next to the native C time bench.sh measured in the same run (WORK/models/NAME.c_ms)
# and next to onnxruntime-web's WebAssembly backend (SIMD, 1 thread: tests/bench/ort_run.mjs
# --web; npm onnxruntime-web into WORK/ortweb, or $ORTWEB_DIR), each as ratios: x_c is
# kgen's time over C's, x_ortweb kgen's wasm time over onnxruntime-web's. Median of 30 runs
# after a warm-up; JS gets more runs, since V8 optimises the kernels only after a few calls.
# "-" where a figure is unavailable (no emcc, no onnxruntime-web, a model that fails). Not a
# test: a failing model prints "-".
set -u
KGEN=${KGEN:-./kgen}
work=${1:-build/bench}
pin=""
command -v taskset > /dev/null && pin="taskset -c 1"
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
if ! command -v node > /dev/null 2>&1; then
  echo "# JS and WebAssembly: node not found, skipped"; exit 0
fi
have_emcc=1
command -v emcc > /dev/null 2>&1 || have_emcc=0
ortweb=${ORTWEB_DIR:-$work/ortweb}
if [ ! -d $ortweb/node_modules/onnxruntime-web ] && command -v npm > /dev/null; then
  mkdir -p $ortweb
  npm install --prefix $ortweb --no-audit --no-fund --silent onnxruntime-web > $ortweb/npm.log 2>&1 ||
    echo "# onnxruntime-web: npm install --prefix $ortweb onnxruntime-web failed (see $ortweb/npm.log)"
fi
echo "# real models in node $(node --version): WebAssembly SIMD128 (emcc -O3 -msimd128) and JavaScript, against"
echo "# the native C above (same run) and onnxruntime-web's wasm backend (SIMD, 1 thread); median of 30 runs"
printf '%-20s %10s %10s %8s %10s %9s %12s %8s\n' model c_ms wasm_ms x_c ortweb_ms x_ortweb js_ms x_c
bench() {  # bench DIR NAME INPUT: the median in ms, or "-"
  local ms
  ms=$(timeout 600 $pin node $1/$2_main.mjs --bench 30 $3 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  echo "${ms:--}"
}
ratio() { [ "$1" != - ] && [ -n "$2" ] && [ "$2" != - ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }' || echo -; }
models=()
for dir in tests/models/*/; do [ -f $dir/model.onnx ] && [ ! -f $dir/dims ] && models+=("$(basename $dir) $dir/model.onnx $dir/input_0.npy"); done
for name in mobilenetv2 resnet18; do
  [ -f $work/models/$name.onnx ] && models+=("$name $work/models/$name.onnx $work/models/${name}_input.npy")
done
for m in "${models[@]}"; do
  read -r name onnx input <<< "$m"
  d=$work/js/$name
  rm -rf $d
  mkdir -p $d
  c_ms=$(cat $work/models/$name.c_ms 2>/dev/null)
  c_ms=${c_ms:--}
  wasm=- js=- ort=-
  if [ $have_emcc = 1 ] && $KGEN $onnx --target wasm -o $d/wasm --name $name --main --weights=file > /dev/null 2>&1 &&
    make -s -C $d/wasm > $d.wasm.log 2>&1; then
    wasm=$(bench $d/wasm $name $input)
  fi
  if [ -d $ortweb/node_modules/onnxruntime-web ]; then
    ort=$(timeout 600 $pin node tests/bench/ort_run.mjs $onnx $input --web --ort $ortweb --runs 30 --warmup 3 2> $d.ortweb.log |
      sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
    ort=${ort:--}
  fi
  if $KGEN $onnx --target js -o $d/js --name $name --main --weights=file > /dev/null 2>&1; then
    js=$(bench $d/js $name $input)
  fi
  printf '%-20s %10s %10s %8s %10s %9s %12s %8s\n' $name "$c_ms" "$wasm" "$(ratio "$wasm" "$c_ms")" "$ort" \
    "$(ratio "$wasm" "$ort")" "$js" "$(ratio "$js" "$c_ms")"
done
[ $have_emcc = 1 ] || echo "(emcc not found: no WebAssembly column)"
