#!/usr/bin/env bash
# golden.sh - the generated C of every example is committed under out/examples/NAME/, and
# its CUDA, OpenCL, Metal and WebGPU under out/examples/NAME/{cuda,opencl,metal,webgpu}/; regenerating
# them must not change a byte; the same for the SHA-256 of each real model's generated C,
# committed in tests/models/generated.sha256. `make golden` (--update) rewrites them on
# purpose. Also checks that two runs give the same bytes (determinism).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
update=0
[ "${1:-}" = --update ] && update=1
pass=0 fail=0
for kg in examples/*.kg; do
  name=$(basename $kg .kg)
  want=out/examples/$name
  got=$BUILD/golden/$name
  rm -rf $got $got.again
  if ! $KGEN $kg --target c -o $got >$BUILD/golden.$name.log 2>&1 ||
     ! $KGEN $kg --target c -o $got.again >>$BUILD/golden.$name.log 2>&1 ||
     ! $KGEN $kg --target cuda,opencl,metal,webgpu -o $got >>$BUILD/golden.$name.log 2>&1 ||
     ! $KGEN $kg --target cuda,opencl,metal,webgpu -o $got.again >>$BUILD/golden.$name.log 2>&1; then
    echo "FAIL golden $name: kgen failed"; sed 's/^/    /' $BUILD/golden.$name.log | head; fail=$((fail + 1)); continue
  fi
  if ! diff -r $got $got.again >/dev/null; then
    echo "FAIL golden $name: two runs differ"; fail=$((fail + 1)); continue
  fi
  if [ $update = 1 ]; then
    rm -rf $want; mkdir -p $(dirname $want); cp -r $got $want
    echo "updated $want"; pass=$((pass + 1)); continue
  fi
  if diff -ru $want $got > $BUILD/golden.$name.diff 2>&1; then
    pass=$((pass + 1))
  else
    echo "FAIL golden $name: generated code differs from $want (run 'make golden' if intended)"
    head -30 $BUILD/golden.$name.diff | sed 's/^/    /'
    fail=$((fail + 1))
  fi
done

# The real models (tests/models/*/model.onnx, with --main): the SHA-256 of each file kgen
# generates is committed in tests/models/generated.sha256 (the files are megabytes), so the
# same bytes must come from any build of kgen on any machine (make sanitize checks a clang
# ASan build against them). The runtime headers copied beside them are left out.
sums=tests/models/generated.sha256
got=$BUILD/golden/models
rm -rf $got; mkdir -p $got
: > $got.sha256
for model in tests/models/*/model.onnx; do
  [ -f "$model" ] || continue
  [ -f $(dirname $model)/dims ] && continue   # run-time dims (tests/dyn_js.sh)
  name=$(basename $(dirname $model))
  if ! $KGEN $model --target c -o $got/$name --name $name --main > $got/$name.log 2>&1; then
    echo "FAIL golden model $name: kgen failed"; sed 's/^/    /' $got/$name.log | head; fail=$((fail + 1)); continue
  fi
  (cd $got && find $name -type f ! -name 'kgen_*.h' | LC_ALL=C sort | xargs sha256sum) >> $got.sha256
  if [ $update = 1 ]; then pass=$((pass + 1)); continue; fi
  if diff <(grep "  $name/" $sums 2>/dev/null) <(grep "  $name/" $got.sha256) > $got/$name.diff; then
    pass=$((pass + 1))
  else
    echo "FAIL golden model $name: generated files differ from $sums (run 'make golden' if intended)"
    sed 's/^/    /' $got/$name.diff | head -6
    fail=$((fail + 1))
  fi
done
if [ $update = 1 ]; then cp $got.sha256 $sums; echo "updated $sums"; fi
echo "golden: $pass passed, $fail failed"
