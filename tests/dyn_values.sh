#!/usr/bin/env bash
# dyn_values.sh - output extents computed from input values (IrDim.count: NonZero,
# Compress, Unique, TopK with a run-time K, NonMaxSuppression), end to end on the C target.
#
# For each tests/models/dyn_*/net.onnx (made by tests/models/make_dyn_values.py, with
# references from torch/numpy, or onnxruntime with graph optimizations disabled):
#   1. kgen net.onnx --main ONCE, the runner built with strict flags (-Werror);
#   2. the same runner on every input set in_S_*.npy (the sets select different counts,
#      none to all), each output compared with out_S_J.npy (npycmp: shape, dtype, values);
#   3. where the model has bad_0_*.npy (dyn_mixed: a count that meets a dim given at run
#      time, kgen_args holding the --dim), inputs whose extents do not agree: the model
#      returns KGEN_ERR_SHAPE while it runs;
#   4. --bench 3 on the last set: the runs after the first get the capacity again (the
#      runner sets the output shapes back) and return KGEN_OK.
# Then a target other than C refuses such a model with a clear message.
# Prints FAIL lines and last "dyn_values: N passed, N failed". Run from the repository
# root (KGEN, BUILD, CC honoured).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
out=$BUILD/dyn_values
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL dyn_values $*"; fail=$((fail + 1)); }

rm -rf $out; mkdir -p $out
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm > $out/npycmp.log 2>&1; then
  bad "cannot build tests/models/npycmp.c"; echo "dyn_values: $pass passed, $fail failed"; exit 1
fi

nmodels=0
for model in tests/models/dyn_*/net.onnx; do
  [ -f "$model" ] || continue
  nmodels=$((nmodels + 1))
  src=$(dirname "$model") name=$(basename "$(dirname "$model")")
  dir=$out/$name
  args=()
  [ -f "$src/kgen_args" ] && read -r -a args < "$src/kgen_args"
  if ! timeout 60 "$KGEN" "$model" --target c -o "$dir" --name "$name" --main "${args[@]}" > "$dir.kgen.log" 2>&1; then
    bad "$name: kgen failed: $(head -1 "$dir.kgen.log")"; continue
  fi
  if ! make -s -C "$dir" CC="$CC" CFLAGS="$STRICT" > "$dir.build.log" 2>&1; then
    bad "$name: the runner does not build: $(head -3 "$dir.build.log")"; continue
  fi
  ok
  last=()
  for first in "$src"/in_*_0.npy; do
    s=${first#"$src"/in_}; s=${s%_0.npy}
    ins=()
    for i in 0 1 2 3 4 5 6 7; do
      [ -f "$src/in_${s}_$i.npy" ] && ins+=("$src/in_${s}_$i.npy")
    done
    last=("${ins[@]}")
    rm -rf "$dir/out_$s"
    if ! timeout 60 "$dir/$name" "${ins[@]}" -o "$dir/out_$s" > "$dir.run$s.log" 2>&1; then
      bad "$name set $s: the runner failed: $(head -2 "$dir.run$s.log")"; continue
    fi
    for ref in "$src"/out_"$s"_*.npy; do
      j=${ref##*_}; j=${j%.npy}
      if "$out/npycmp" --rtol 1e-5 --atol 1e-6 "$ref" "$dir/out_$s/output_$j.npy" > "$dir.cmp${s}_$j.log" 2>&1; then
        ok
      else
        bad "$name set $s output $j: $(head -3 "$dir.cmp${s}_$j.log")"
      fi
    done
  done
  # inputs whose extents do not agree with the count: the model refuses them while it runs
  if [ -f "$src/bad_0_0.npy" ]; then
    timeout 60 "$dir/$name" "$src"/bad_0_*.npy -o "$dir/out_bad" > "$dir.bad.log" 2>&1; rc=$?
    if [ $rc = 1 ] && grep -q 'wrong shape' "$dir.bad.log"; then ok; else
      bad "$name: extents that do not agree: exit $rc, $(head -2 "$dir.bad.log")"
    fi
  fi
  if timeout 60 "$dir/$name" --bench 3 "${last[@]}" > "$dir.bench.log" 2>&1 && grep -q '^median_ms=' "$dir.bench.log"; then
    ok
  else
    bad "$name: --bench 3 failed: $(head -2 "$dir.bench.log")"
  fi
done
[ $nmodels -gt 0 ] || bad "no tests/models/dyn_*/net.onnx"

# another target refuses extents computed from values, with a message
if [ -f tests/models/dyn_nonzero/net.onnx ]; then
  "$KGEN" tests/models/dyn_nonzero/net.onnx --target js -o $out/js > $out/js.log 2>&1; rc=$?
  if [ $rc != 0 ] && [ $rc -lt 128 ] && grep -q 'C target only' $out/js.log; then ok; else
    bad "--target js: exit $rc, $(head -1 $out/js.log)"
  fi
fi
echo "dyn_values: $pass passed, $fail failed"
[ $fail = 0 ]
