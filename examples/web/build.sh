#!/usr/bin/env bash
# build.sh OUTDIR [MODEL_DIR] - the demo's models: kgen compiles MODEL_DIR/model.onnx (default
# tests/models/small_cnn) for the page into OUTDIR/js (weights in a file, fetched by the
# page), OUTDIR/wasm (wasm -nosimd) and OUTDIR/wasm-simd (SIMD128, built with emcc, two at a time), and writes
# OUTDIR/models.json, the list the page offers. Without emcc only js is built.
set -eu
KGEN=${KGEN:-./kgen}
out=${1:?usage: build.sh OUTDIR [MODEL_DIR]}
model=${2:-tests/models/small_cnn}
name=$(basename "$model")
rm -rf "$out"
mkdir -p "$out"
backends=(js)
"$KGEN" "$model/model.onnx" --target js -o "$out/js" --name "$name" --weights=file > "$out/js.log"
if command -v emcc > /dev/null 2>&1; then
  "$KGEN" "$model/model.onnx" --target "wasm -nosimd" -o "$out/wasm" --name "$name" > "$out/wasm.log"
  "$KGEN" "$model/model.onnx" --target wasm -o "$out/wasm-simd" --name "$name" > "$out/wasm-simd.log"
  make -s -C "$out/wasm" > "$out/wasm/build.log" 2>&1 & p1=$!
  make -s -C "$out/wasm-simd" > "$out/wasm-simd/build.log" 2>&1 & p2=$!
  wait $p1 || { cat "$out/wasm/build.log" >&2; exit 1; }
  wait $p2 || { cat "$out/wasm-simd/build.log" >&2; exit 1; }
  backends+=(wasm wasm-simd)
else
  echo "build.sh: emcc not found: the demo offers JavaScript only" >&2
fi
list=$(printf '"%s", ' "${backends[@]}")
printf '{"name": "%s", "backends": [%s]}\n' "$name" "${list%, }" > "$out/models.json"
echo "build.sh: $name for ${backends[*]} in $out"
