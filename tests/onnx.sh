#!/usr/bin/env bash
# onnx.sh - the ONNX path on models kept in the repository (tests/data/onnx/*/ in the
# node-test layout): run through the importer and interpreter (--check-onnx), then as
# generated C compiled by the system compiler and run by the generated runner.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
work=$BUILD/onnx
rm -rf $work; mkdir -p $work
pass=0 fail=0
for d in tests/data/onnx/*/; do
  d=${d%/}
  name=$(basename $d)
  if $KGEN --check-onnx $d >$work/$name.check 2>&1; then pass=$((pass + 1)); else
    echo "FAIL onnx $name (interpreter)"; sed 's/^/    /' $work/$name.check | head -5; fail=$((fail + 1)); fi
done
# batch-norm folding and fusion: Conv + BatchNormalization + Relu become one kernel (after
# the padded input, which is materialized so the convolution's inner loop has no guard)
if $KGEN tests/data/onnx/conv_bn_relu/model.onnx --report >$work/report.txt 2>&1 &&
   grep -q "1 folded" $work/report.txt && grep -A3 "kernel model_y" $work/report.txt | grep -q "fuses c_conv: Conv"; then
  pass=$((pass + 1)); else
  echo "FAIL onnx conv_bn_relu report (expected the folded batch norm and the conv fused into the relu kernel)"
  sed 's/^/    /' $work/report.txt | head; fail=$((fail + 1)); fi
# Dropout in training mode with a constant ratio of 0 keeps every element: no draws, the
# data passes through (no kernel computes the Dropout)
if $KGEN tests/data/onnx/dropout_ratio0/model.onnx --report >$work/dropout0.txt 2>&1 &&
   grep -q "computes y: Relu" $work/dropout0.txt && ! grep -q "Dropout" $work/dropout0.txt; then
  pass=$((pass + 1)); else
  echo "FAIL onnx dropout_ratio0 report (expected no kernel computing the Dropout)"
  sed 's/^/    /' $work/dropout0.txt | head; fail=$((fail + 1)); fi
# --weights=file: the weights in a binary file loaded at run time give the same outputs
d=$work/weights_file
if $KGEN tests/models/small_cnn/model.onnx --target c -o $d --name scw --main --weights=file >$d.log 2>&1 &&
   [ -f $d/scw_weights.bin ] && [ ! -f $d/scw_weights.c ] &&
   make -s -C $d CC=${CC:-cc} CFLAGS="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}" >>$d.log 2>&1 &&
   $d/scw tests/models/small_cnn/input_0.npy -o $d/out >>$d.log 2>&1 &&
   ${CC:-cc} -O1 -std=c99 -Itemplates tests/models/npycmp.c -lm -o $work/npycmp >>$d.log 2>&1 &&
   $work/npycmp $d/out/output_0.npy tests/models/small_cnn/output_0.npy >>$d.log 2>&1; then
  pass=$((pass + 1)); else
  echo "FAIL onnx --weights=file (small_cnn)"; sed 's/^/    /' $d.log | tail -5; fail=$((fail + 1)); fi
# the runner checks each input file against the model: a wrong shape, a wrong dtype, a
# truncated file or a wrong count are refused with a message naming the input, no outputs
# written. (Uses the scw runner built just above.)
# npy FILE DESCR SHAPE NBYTES: a .npy file of zeros
npy() {
  local h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }" n pad
  pad=$(( 63 - (10 + ${#h}) % 64 ))     # the header ends with a newline at a multiple of 64
  n=$(( ${#h} + pad + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "$(printf '\\%03o\\%03o' $((n % 256)) $((n / 256)))"
    printf '%s%*s\n' "$h" $pad ''; head -c $4 /dev/zero; } > $1
}
refuse() {   # NAME EXPECTED-STATUS MESSAGE RUNNER-ARGS...
  local what=$1 want=$2 msg=$3 rc; shift 3
  rm -rf $d/bad
  $d/scw "$@" -o $d/bad > $d/refuse.log 2>&1; rc=$?
  if [ $rc = $want ] && grep -qF -- "$msg" $d/refuse.log && [ ! -e $d/bad ]; then pass=$((pass + 1)); else
    echo "FAIL onnx runner refuses $what: status $rc (want $want), output $([ -e $d/bad ] && echo written || echo none)," \
         "message lacks '$msg'"; sed 's/^/    /' $d/refuse.log | head -5; fail=$((fail + 1)); fi
}
if [ -x $d/scw ]; then
  npy $d/i64.npy '<i8' '(1, 1, 28, 28)' $((8 * 784))
  npy $d/short.npy '<f4' '(1, 1, 28, 28)' 100
  npy $d/ok.npy '<f4' '(1, 1, 28, 28)' $((4 * 784))
  refuse "a wrong shape" 1 "input 0 'input' (tests/models/mobilenetv2_small/input_0.npy): expected float32 [1, 1, 28, 28], got float32 [1, 3, 96, 96]" \
    tests/models/mobilenetv2_small/input_0.npy
  refuse "a wrong dtype" 1 "expected float32 [1, 1, 28, 28], got int64 [1, 1, 28, 28]" $d/i64.npy
  refuse "a wrong .pb" 1 "expected float32 [1, 1, 28, 28], got float32 [1, 3, 8, 8]" \
    tests/data/onnx/conv_bn_relu/test_data_set_0/input_0.pb
  refuse "a truncated file" 1 "input 0 'input': $d/short.npy:" $d/short.npy
  refuse "two inputs" 2 "too many inputs: the model takes 1" $d/ok.npy $d/ok.npy
  # and the well-formed file of zeros runs
  if $d/scw $d/ok.npy -o $d/okout > $d/refuse.log 2>&1 && [ -f $d/okout/output_0.npy ]; then pass=$((pass + 1)); else
    echo "FAIL onnx runner on a well-formed .npy of zeros"; sed 's/^/    /' $d/refuse.log | head -5; fail=$((fail + 1)); fi
  # --profile: the runner built with -DKGEN_PROFILE (the Makefile's NAME_profile) times
  # each kernel call, one kernel_ms line per kernel, then their sum; the plain one refuses
  nk=$(grep -c "KGEN_PROFILE_BEGIN(" $d/scw.c)
  if make -s -C $d CC=${CC:-cc} CFLAGS="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}" scw_profile \
       > $d/profile.txt 2>&1 && $d/scw_profile --profile 3 tests/models/small_cnn/input_0.npy > $d/profile.txt 2>&1 &&
     [ $nk -gt 0 ] && [ "$(grep -c '^kernel_ms [0-9]* scw_[A-Za-z0-9_]* [0-9.]*$' $d/profile.txt)" = $nk ] &&
     grep -q "^profile_sum_ms=[0-9.]* median_ms=[0-9.]* runs=3 kernels=$nk clock=\(cpu\|wall\)$" $d/profile.txt; then
    pass=$((pass + 1)); else
    echo "FAIL onnx runner --profile ($nk kernels)"; sed 's/^/    /' $d/profile.txt | head -5; fail=$((fail + 1)); fi
  refuse "--profile without -DKGEN_PROFILE" 2 "--profile needs the runner built with -DKGEN_PROFILE (make scw_profile)" \
    --profile 3 tests/models/small_cnn/input_0.npy
fi
# the runner's Makefile builds the fast way by default: -O3, -march=native where the
# compiler takes it, the named CPU or the -mattr features' flags otherwise
mkflags() {   # mkflags TARGET...: the compile line `make -n` prints for the small CNN (not
              # the flags a `make test CFLAGS=...` above passes down)
  rm -rf $work/mk && $KGEN tests/models/small_cnn/model.onnx --target "$*" -o $work/mk --name mk --main >/dev/null 2>&1 &&
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS make -n -s -C $work/mk CC=${CC:-cc} mk 2>/dev/null | head -1
}
native=""; ${CC:-cc} -march=native -E -x c /dev/null >/dev/null 2>&1 && native=" -march=native"
for spec in "c|-O3$native " "c -mcpu=x86-64-v3|-O3 -march=x86-64-v3 " "c -mcpu=neoverse-n1|-O3 -mcpu=neoverse-n1 " \
            "c -mattr=+avx2,+fma|-O3 -mavx2 -mfma "; do
  tgt=${spec%%|*} want=${spec#*|}
  got=$(mkflags $tgt)
  if [[ "$got" == "${CC:-cc} $want"* ]]; then pass=$((pass + 1)); else
    echo "FAIL onnx runner Makefile default flags for '$tgt': '$got', expected '${CC:-cc} $want...'"; fail=$((fail + 1)); fi
done
# a chain of 3000 elementwise nodes (tests/data/onnx/make_deep.py): as one fused
# expression it would be thousands of operations deep (the simplifier once ran out of
# stack); it must compile, build and run
d=$work/deep
npy $work/x4.npy '<f4' '(4,)' 16
if $KGEN tests/data/onnx/deep_chain.onnx --target c -o $d --name deep --main >$d.log 2>&1 &&
   make -s -C $d CC=${CC:-cc} CFLAGS="-O1 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}" >>$d.log 2>&1 &&
   $d/deep $work/x4.npy -o $d/out >>$d.log 2>&1 && [ -f $d/out/output_0.npy ]; then
  pass=$((pass + 1)); else
  echo "FAIL onnx deep_chain (3000 nodes in a row)"; sed 's/^/    /' $d.log | tail -5; fail=$((fail + 1)); fi
# node tests of empty tensors, in one --check-onnx run: an empty kernel once crashed the
# lowering's peeling passes, which ended a check over a whole folder
T=${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}
if [ -d $T/test_tril_zero ]; then
  if $KGEN --check-onnx $T/test_constantofshape_int_shape_zero $T/test_reshape_allowzero_reordered \
       $T/test_shape_start_greater_than_end $T/test_slice_start_out_of_bounds $T/test_split_zero_size_splits_opset13 \
       $T/test_split_zero_size_splits_opset18 $T/test_tril_zero $T/test_triu_zero > $work/empty.check 2>&1 &&
     grep -q "^check: 8 passed, 0 failed" $work/empty.check; then pass=$((pass + 1)); else
    echo "FAIL onnx empty tensors (--check-onnx)"; sed 's/^/    /' $work/empty.check | tail -5; fail=$((fail + 1)); fi
fi
echo "onnx: $pass passed, $fail failed"
