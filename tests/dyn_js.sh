#!/usr/bin/env bash
# dyn_js.sh - dims decided at run time (issue 16) through --target js, "wasm -nosimd" and
# wasm (SIMD128), under node:
#   1. tests/models/dyn_cnn (a CNN with input height and width decided at run time; kgen's
#      options in its file `dims`): generated with --main, built (wasm), `--info` lists the
#      dims and -1 in the input's shape; the runner on each in_HxW.npy against torch's
#      out_HxW.npy (npycmp, rtol 1e-3, atol 1e-4: models.sh's rule); inputs out of range
#      (H below, W above) or with a wrong fixed dim are refused: exit 1, a message naming
#      the dim or the shape, no output written;
#   2. tests/data/dyn/add_t.onnx (an output with a run-time dim, a derived check B == C):
#      its module through the API (tests/js/dyn.mjs add): the exports, run() on tensors at
#      three extents against values computed in JS, and the refusals.
# A missing node or emcc is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Ends with
# "dyn_js: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
out=$BUILD/dyn_js
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}
finish() { echo "dyn_js: $pass passed, $fail failed, $skip skipped"; [ $fail -eq 0 ]; exit; }
rm -rf $out
mkdir -p $out
if ! command -v node >/dev/null 2>&1; then
  missing "dyn_js: node not found"
  finish
fi
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || { bad "dyn_js: cannot build npycmp"; finish; }
targets=(js)
if command -v emcc >/dev/null 2>&1; then targets+=("wasm -nosimd" wasm)
else missing "dyn_js: emcc not found (apt-get install emscripten): no WASM tests"; fi

model=tests/models/dyn_cnn
read -r -a dims < $model/dims
# the refused inputs: H below its range, W above, a wrong channel count
node tests/js/dyn.mjs zeros $out/h_low.npy 1,3,20,40 && node tests/js/dyn.mjs zeros $out/w_high.npy 1,3,40,129 &&
  node tests/js/dyn.mjs zeros $out/c4.npy 1,4,40,40 || bad "dyn_js: cannot write the refused inputs"

# generate TARGET DIR MODEL OPTIONS...: kgen, then make for wasm; 0 if both worked
generate() {
  local tg=$1 dir=$2 m=$3
  shift 3
  if ! timeout 120 "$KGEN" $m --target "$tg" -o $dir --name m --main "$@" > $dir.log 2>&1; then
    bad "$m ($tg): kgen failed: $(head -1 $dir.log)"; return 1
  fi
  if [ -f $dir/Makefile ] && ! make -s -C $dir > $dir.build.log 2>&1; then
    bad "$m ($tg): emcc build failed: $(grep -m1 -i error $dir.build.log)"; return 1
  fi
}

for tg in "${targets[@]}"; do
  label=${tg// /}
  dir=$out/dyn_cnn.$label
  generate "$tg" $dir $model/model.onnx "${dims[@]}" || continue
  if node $dir/m_main.mjs --info > $dir.info 2>&1 && grep -q "^input 0 'x': f32\[1, 3, -1, -1\]" $dir.info &&
     grep -q '^dim H: 32..96 (input 0 dim 2)$' $dir.info && grep -q '^dim W: 32..128 (input 0 dim 3)$' $dir.info; then ok
  else bad "dyn_cnn ($tg): --info does not list the dims: $(tr '\n' '|' < $dir.info)"; fi
  for in in $model/in_*.npy; do
    e=$(basename $in .npy); e=${e#in_}
    if ! timeout 120 node $dir/m_main.mjs $in -o $dir/out_$e > $dir.run_$e.log 2>&1; then
      bad "dyn_cnn ($tg) $e: the runner failed: $(head -1 $dir.run_$e.log)"; continue
    fi
    if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $model/out_$e.npy $dir/out_$e/output_0.npy 2>&1); then
      ok; echo "    dyn_cnn ($tg) $e: $cmp"
    else bad "dyn_cnn ($tg) $e: $cmp"; fi
  done
  for b in "h_low:dim 2 (H) is 20, outside the range \[32, 96\]" "w_high:dim 3 (W) is 129, outside the range \[32, 128\]" \
           "c4:expected f32\[1, 3, -1, -1\], got f32\[1, 4, 40, 40\]"; do
    f=${b%%:*} want=${b#*:}
    node $dir/m_main.mjs $out/$f.npy -o $dir/bad_$f > $dir.bad_$f.log 2>&1; rc=$?
    if [ $rc = 1 ] && grep -q "$want" $dir.bad_$f.log && [ ! -e $dir/bad_$f ]; then ok
    else bad "dyn_cnn ($tg) $f.npy: exit $rc, expected 1 with '$want' and no output: $(head -1 $dir.bad_$f.log)"; fi
  done

  dir=$out/add_t.$label
  generate "$tg" $dir tests/data/dyn/add_t.onnx --dim B=1..16 --dim C=1..16 || continue
  if node tests/js/dyn.mjs add $dir/m.mjs > $dir.api.log 2>&1; then
    ok; echo "    add_t ($tg): $(tail -1 $dir.api.log)"
  else bad "add_t ($tg): $(grep -m3 FAIL $dir.api.log | tr '\n' '|')$(tail -1 $dir.api.log)"; fi
done
finish
