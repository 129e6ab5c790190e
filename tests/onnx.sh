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
# --weights=file: the weights in a binary file loaded at run time give the same outputs
d=$work/weights_file
if $KGEN tests/models/small_cnn/model.onnx --target c -o $d --name scw --main --weights=file >$d.log 2>&1 &&
   [ -f $d/scw_weights.bin ] && [ ! -f $d/scw_weights.c ] &&
   make -s -C $d CC=${CC:-cc} CFLAGS="-O2 -std=c99 -Wall -Wextra -pedantic -Werror" >>$d.log 2>&1 &&
   $d/scw tests/models/small_cnn/input_0.npy -o $d/out >>$d.log 2>&1 &&
   ${CC:-cc} -O1 -std=c99 -Itemplates tests/models/npycmp.c -lm -o $work/npycmp >>$d.log 2>&1 &&
   $work/npycmp $d/out/output_0.npy tests/models/small_cnn/output_0.npy >>$d.log 2>&1; then
  pass=$((pass + 1)); else
  echo "FAIL onnx --weights=file (small_cnn)"; sed 's/^/    /' $d.log | tail -5; fail=$((fail + 1)); fi
echo "onnx: $pass passed, $fail failed"
