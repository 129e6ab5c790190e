#!/usr/bin/env bash
# build.sh OUTDIR - the demo's model, the trained digit CNN of tests/models/digits, compiled
# by kgen for the page's three columns:
#   OUTDIR/js         --target js (weights in a file, fetched by the page)
#   OUTDIR/wasm-simd  --target wasm (SIMD128), built with emcc
#   OUTDIR/webgpu     --target webgpu, when this kgen has it
# and OUTDIR/models.json (examples/web/manifest.mjs): the targets built, the reason for each
# that was not (emcc missing, kgen refusing --target webgpu: the page shows the column as
# unavailable with that reason), and the held-out digits the page offers. A target that is
# not available is not an error; a failing kgen or emcc build of one that is, is.
set -eu
KGEN=${KGEN:-./kgen}
out=${1:?usage: build.sh OUTDIR}
model=tests/models/digits
name=digits
here=$(dirname "$0")
rm -rf "$out"
mkdir -p "$out"
status=()      # TARGET=ok or TARGET=the reason it is unavailable

"$KGEN" "$model/model.onnx" --target js -o "$out/js" --name $name --weights=file > "$out/js.log"
status+=("js=ok")

if command -v emcc > /dev/null 2>&1; then
  "$KGEN" "$model/model.onnx" --target wasm -o "$out/wasm-simd" --name $name > "$out/wasm-simd.log"
  make -s -C "$out/wasm-simd" > "$out/wasm-simd/build.log" 2>&1 || { cat "$out/wasm-simd/build.log" >&2; exit 1; }
  status+=("wasm-simd=ok")
else
  echo "build.sh: emcc not found: no WebAssembly column" >&2
  status+=("wasm-simd=not built: emcc (emscripten) not found")
fi

# WebGPU: offered when kgen accepts the target; its refusal is the column's reason
if "$KGEN" "$model/model.onnx" --target webgpu -o "$out/webgpu" --name $name > "$out/webgpu.log" 2>&1; then
  status+=("webgpu=ok")
else
  why=$(grep -m1 . "$out/webgpu.log" || echo "kgen --target webgpu failed")
  echo "build.sh: no WebGPU column: $why" >&2
  rm -rf "$out/webgpu"
  status+=("webgpu=not built: $why")
fi

node "$here/manifest.mjs" "$out/models.json" $name "$model" "${status[@]}"
built=$(printf '%s\n' "${status[@]}" | sed -n 's/=ok$//p' | tr '\n' ' ')
echo "build.sh: $name for ${built% } in $out"
