#!/usr/bin/env bash
# golden.sh - the generated C of every example is committed under out/examples/NAME/, and
# its CUDA, OpenCL and Metal under out/examples/NAME/{cuda,opencl,metal}/; regenerating
# them must not change a byte. `make golden` (--update) rewrites it on purpose.
# Also checks that two runs give the same bytes (determinism).
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
     ! $KGEN $kg --target cuda,opencl,metal -o $got >>$BUILD/golden.$name.log 2>&1 ||
     ! $KGEN $kg --target cuda,opencl,metal -o $got.again >>$BUILD/golden.$name.log 2>&1; then
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
echo "golden: $pass passed, $fail failed"
