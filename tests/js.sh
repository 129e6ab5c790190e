#!/usr/bin/env bash
# js.sh - the JavaScript and WebAssembly targets under node:
#   1. every committed real model (tests/models/*) through --target js (weights embedded for
#      small_cnn, in a file for the others), --target wasm and --target "wasm -simd" (built
#      by the generated Makefile with emcc), each run by its NAME_main.mjs on input_0.npy and
#      compared with the reference output (npycmp, rtol 1e-3, atol 1e-4: models.sh's rule);
#   2. every example (examples/*.kg) through --target js, loaded and run on random inputs:
#      it must run and give finite outputs (a smoke test; the values are checked for C).
# A missing node or emcc is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Ends with
# "js: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
out=$BUILD/js
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}
rm -rf $out
mkdir -p $out
if ! command -v node >/dev/null 2>&1; then
  missing "js: node not found"
  echo "js: $pass passed, $fail failed, $skip skipped"
  [ $fail -eq 0 ]; exit
fi
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || { bad "js: cannot build npycmp"; }
have_emcc=1
command -v emcc >/dev/null 2>&1 || have_emcc=0
[ $have_emcc = 1 ] || missing "js: emcc not found (apt-get install emscripten): no WASM tests"

# check NAME TARGET LABEL [kgen options]: generate, build, run, compare
check() {
  local name=$1 target=$2 label=$3 dir=$out/$1.$3
  shift 3
  if ! timeout 120 "$KGEN" tests/models/$name/model.onnx --target "$target" -o $dir --name $name --main "$@" > $dir.log 2>&1; then
    bad "$name ($label): kgen failed: $(head -1 $dir.log)"; return
  fi
  if [ -f $dir/Makefile ] && ! make -s -C $dir > $dir/build.log 2>&1; then
    bad "$name ($label): emcc build failed: $(grep -m1 -i error $dir/build.log)"; return
  fi
  if ! timeout 120 node $dir/${name}_main.mjs tests/models/$name/input_0.npy -o $dir/out > $dir/run.log 2>&1; then
    bad "$name ($label): the runner failed: $(head -1 $dir/run.log)"; return
  fi
  local cmp
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 tests/models/$name/output_0.npy $dir/out/output_0.npy 2>&1); then
    echo "    $name ($label): $(printf '%s\n' "$cmp" | tail -1)"
    ok
  else
    bad "$name ($label): output differs from the reference: $(printf '%s\n' "$cmp" | tail -1)"
  fi
}

for model in tests/models/*/model.onnx; do
  name=$(basename "$(dirname "$model")")
  if [ $name = small_cnn ]; then check $name js js; else check $name js js --weights=file; fi
  if [ $have_emcc = 1 ]; then
    check $name wasm wasm
    check $name "wasm -simd" wasm-simd
  fi
done

# examples: smoke runs of the kernel modules
for kg in examples/*.kg; do
  name=$(basename $kg .kg)
  dir=$out/ex_$name
  if ! "$KGEN" $kg --target js -o $dir --name $name > $dir.log 2>&1; then
    bad "example $name: kgen failed: $(head -1 $dir.log)"; continue
  fi
  if msg=$(timeout 120 node tests/js/smoke.mjs $dir/$name.mjs $name 2>&1); then ok; else bad "example $name: $msg"; fi
done

echo "js: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
