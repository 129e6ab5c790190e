#!/usr/bin/env bash
# dyn_js.sh - dims decided at run time (issue 16) through --target js, "wasm -nosimd" and
# wasm (SIMD128), under node:
#   1. every model of tests/dyn (kgen's options in its file args; tests/dyn.sh runs the C
#      target): generated with --main, built (wasm: by the
#      generated Makefile at -O1), `--info` lists the dims; the runner on
#      each in_K.npy against the reference out_K.npy (npycmp, rtol 1e-3, atol 1e-4: models.sh's
#      rule); bad_K.npy (outside a range) and, for tests/dyn/cnn, an input with a wrong fixed
#      dim are refused: exit 1, a message naming the range or the shape, no output written;
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
# an input of tests/dyn/cnn with a wrong channel count (the ranges' refusals: bad_*.npy)
node tests/js/dyn.mjs zeros $out/c4.npy 1,4,40,40 || bad "dyn_js: cannot write the refused input"
targets=(js)
if command -v emcc >/dev/null 2>&1; then targets+=("wasm -nosimd" wasm)
else missing "dyn_js: emcc not found (apt-get install emscripten): no WASM tests"; fi

# generate TARGET DIR MODEL OPTIONS...: kgen, then make for wasm; 0 if both worked
generate() {
  local tg=$1 dir=$2 m=$3
  shift 3
  if ! timeout 120 "$KGEN" $m --target "$tg" -o $dir --name m --main "$@" > $dir.log 2>&1; then
    bad "$m ($tg): kgen failed: $(head -1 $dir.log)"; return 1
  fi
  # the Makefile's own flags at -O1: the ranged models' C is large (MobileNetV2's about 1 MB),
  # and emcc -O3 (wasm-opt) took 98 CPU s on it, -O1 15; conformance_wasm.sh builds at -O1 too
  local flags
  flags=$(sed -n 's/^EMFLAGS ?= //p' $dir/Makefile 2>/dev/null)
  if [ -f $dir/Makefile ] && ! make -s -C $dir EMFLAGS="${flags/-O3/-O1}" > $dir.build.log 2>&1; then
    bad "$m ($tg): emcc build failed: $(grep -m1 -i error $dir.build.log)"; return 1
  fi
}

for tg in "${targets[@]}"; do
  label=${tg// /}
  # every model of tests/dyn (tests/dyn.sh runs them through C): kgen's options in args
  for model in ${KGEN_DYN_ONLY:-tests/dyn/*/}; do
    name=$(basename $model)
    [ -f $model/model.onnx ] || continue
    read -r -a args < $model/args
    dir=$out/$name.$label
    generate "$tg" $dir $model/model.onnx "${args[@]}" || continue
    # --info lists each run-time dim with its range, as args gives it
    node $dir/m_main.mjs --info > $dir.info 2>&1
    for r in $(grep -o '[A-Za-z_0-9]*=[0-9]*\.\.[0-9]*' $model/args); do
      if grep -q "^dim ${r%%=*}: ${r#*=} " $dir.info; then ok
      else bad "$name ($tg): --info lacks dim ${r%%=*}: ${r#*=}: $(tr '\n' '|' < $dir.info)"; fi
    done
    for in in $model/in_*.npy; do
      e=$(basename $in .npy); e=${e#in_}
      if ! timeout 120 node $dir/m_main.mjs $in -o $dir/out_$e > $dir.run_$e.log 2>&1; then
        bad "$name ($tg) $e: the runner failed: $(head -1 $dir.run_$e.log)"; continue
      fi
      if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $model/out_$e.npy $dir/out_$e/output_0.npy 2>&1); then
        ok; echo "    $name ($tg) $e: $cmp"
      else bad "$name ($tg) $e: $cmp"; fi
    done
    # an input outside the range: exit 1, the range named, nothing written
    for b in $model/bad_*.npy; do
      node $dir/m_main.mjs $b -o $dir/bad > $dir.bad.log 2>&1; rc=$?
      if [ $rc = 1 ] && grep -q "outside the range" $dir.bad.log && [ ! -e $dir/bad ]; then ok
      else bad "$name ($tg) $(basename $b): exit $rc, expected 1 naming the range and no output: $(head -1 $dir.bad.log)"; fi
    done
  done
  # a wrong fixed dim: the shape named
  dir=$out/cnn.$label
  if [ -d $dir ]; then
    node $dir/m_main.mjs $out/c4.npy -o $dir/bad_c4 > $dir.bad_c4.log 2>&1; rc=$?
    if [ $rc = 1 ] && grep -q "expected f32\[1, 3, -1, -1\], got f32\[1, 4, 40, 40\]" $dir.bad_c4.log && [ ! -e $dir/bad_c4 ]; then ok
    else bad "cnn ($tg) c4.npy: exit $rc, expected 1 naming the shapes and no output: $(head -1 $dir.bad_c4.log)"; fi
  fi

  dir=$out/add_t.$label
  generate "$tg" $dir tests/data/dyn/add_t.onnx --dim B=1..16 --dim C=1..16 || continue
  if node tests/js/dyn.mjs add $dir/m.mjs > $dir.api.log 2>&1; then
    ok; echo "    add_t ($tg): $(tail -1 $dir.api.log)"
  else bad "add_t ($tg): $(grep -m3 FAIL $dir.api.log | tr '\n' '|')$(tail -1 $dir.api.log)"; fi
done
finish
