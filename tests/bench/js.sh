#!/usr/bin/env bash
# js.sh - `make bench`'s browser-target table: the committed real models as JavaScript
# (--target js) and WebAssembly SIMD (--target "wasm -simd", emcc -O3) under node, one
# thread, next to the native C time bench.sh measured in the same run (WORK/models/NAME.c_ms)
# and as ratios to it. Median of N runs after a warm-up; JS gets more runs, since V8
# optimises the kernels only after a few calls. Not a test: a failing model prints a note.
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
echo "# committed real models in node $(node --version): JavaScript and WebAssembly SIMD (emcc -O3 -msimd128)"
echo "# against the native C above (same run); median of 30 runs, 1 thread"
printf '%-20s %10s %12s %8s %12s %8s\n' model c_ms wasm_simd_ms x_c js_ms x_c
bench() {  # bench DIR NAME INPUT: the median in ms, or "-"
  local ms
  ms=$(timeout 600 $pin node $1/$2_main.mjs --bench 30 $3 2>/dev/null | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  echo "${ms:--}"
}
ratio() { [ "$1" != - ] && [ -n "$2" ] && [ "$2" != - ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }' || echo -; }
for dir in tests/models/*/; do
  name=$(basename $dir)
  [ -f $dir/model.onnx ] || continue
  d=$work/js/$name
  rm -rf $d
  c_ms=$(cat $work/models/$name.c_ms 2>/dev/null)
  c_ms=${c_ms:--}
  wasm=- js=-
  if [ $have_emcc = 1 ] && $KGEN $dir/model.onnx --target "wasm -simd" -o $d/wasm --name $name --main > /dev/null 2>&1 &&
    make -s -C $d/wasm > $d.wasm.log 2>&1; then
    wasm=$(bench $d/wasm $name $dir/input_0.npy)
  fi
  if $KGEN $dir/model.onnx --target js -o $d/js --name $name --main --weights=file > /dev/null 2>&1; then
    js=$(bench $d/js $name $dir/input_0.npy)
  fi
  printf '%-20s %10s %12s %8s %12s %8s\n' $name "$c_ms" "$wasm" "$(ratio "$wasm" "$c_ms")" "$js" "$(ratio "$js" "$c_ms")"
done
[ $have_emcc = 1 ] || echo "(emcc not found: no WebAssembly column)"
