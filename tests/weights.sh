#!/usr/bin/env bash
# weights.sh - how the C target links a model's weights (--weights). For committed models
# (tests/models/NAME/model.onnx):
#   1. --weights=auto (the default) of a small model writes the same files as embed;
#   2. --weights=incbin writes NAME_weights.bin and NAME_weights.S instead of
#      NAME_weights.c, and NAME.c only differs in its "weights:" comment line;
#   3. both runners build with the generated Makefile ($CC and clang if present, strict
#      flags); the incbin folder is then moved elsewhere and rebuilt there, and its runner
#      runs with the .bin deleted and from another directory (the weights are inside it);
#   4. both give byte-identical outputs;
#   5. the targets other than C ignore incbin (js, wasm: the same files as embed).
# Prints a FAIL line per failure and "weights: N passed, N failed". Run from the repository
# root (KGEN, BUILD, CC honoured).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror"
work=$BUILD/weights
rm -rf $work; mkdir -p $work
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL weights $*"; fail=$((fail + 1)); }
root=$(pwd)

compilers=$CC
command -v clang > /dev/null && [ "$CC" != clang ] && compilers="$CC clang"

for name in small_cnn transformer; do
  model=tests/models/$name/model.onnx
  [ -f $model ] || continue
  d=$work/$name
  for mode in auto embed incbin; do
    if ! $KGEN $model --target c -o $d.$mode --name $name --main --weights=$mode > $d.$mode.log 2>&1; then
      bad "$name: kgen --weights=$mode failed: $(head -1 $d.$mode.log)"; continue 2
    fi
  done
  if diff -r $d.auto $d.embed > /dev/null; then ok; else bad "$name: --weights=auto differs from embed for small weights"; fi
  if [ -f $d.incbin/${name}_weights.S ] && [ -f $d.incbin/${name}_weights.bin ] && [ ! -e $d.incbin/${name}_weights.c ] &&
     diff <(grep -v '^/\* weights: ' $d.embed/$name.c) <(grep -v '^/\* weights: ' $d.incbin/$name.c) > /dev/null; then ok
  else bad "$name: --weights=incbin: expected ${name}_weights.S and .bin, no .c, and $name.c as with embed but its weights comment"; fi
  for cc in $compilers; do
    here=$work/$cc.$name moved=$work/moved/$cc/$name
    rm -rf $here $moved; mkdir -p $(dirname $moved)
    cp -r $d.incbin $here
    make -s -C $d.embed clean > /dev/null
    if ! make -s -C $d.embed CC=$cc CFLAGS="$STRICT" > $d.embed.$cc.build 2>&1; then
      bad "$name: $cc: the embed runner does not build: $(grep -m1 -i error $d.embed.$cc.build)"; continue
    fi
    if ! make -s -C $here CC=$cc CFLAGS="$STRICT" > $here.build 2>&1; then
      bad "$name: $cc: the incbin runner does not build: $(grep -m1 -i error $here.build)"; continue
    fi
    mv $here $moved
    make -s -C $moved clean > /dev/null
    if ! make -s -C $moved CC=$cc CFLAGS="$STRICT" > $moved.build 2>&1; then
      bad "$name: $cc: the incbin runner does not build after the move: $(grep -m1 -i error $moved.build)"; continue
    fi
    rm -f $moved/${name}_weights.bin
    rm -rf $work/out.embed $work/out.incbin
    "$d.embed/$name" tests/models/$name/input_0.npy -o $work/out.embed > /dev/null 2>&1
    if ! (cd / && "$root/$moved/$name" "$root/tests/models/$name/input_0.npy" -o "$root/$work/out.incbin") > $moved.run 2>&1; then
      bad "$name: $cc: the incbin runner failed: $(head -1 $moved.run)"; continue
    fi
    if cmp -s $work/out.embed/output_0.npy $work/out.incbin/output_0.npy; then ok
    else bad "$name: $cc: the incbin runner's output differs from the embedded one's"; fi
  done
  for t in js wasm; do
    $KGEN $model --target $t -o $d.$t.embed --name $name --main --weights=embed > /dev/null 2>&1 &&
      $KGEN $model --target $t -o $d.$t.incbin --name $name --main --weights=incbin > /dev/null 2>&1 &&
      diff -r $d.$t.embed $d.$t.incbin > /dev/null && ok || bad "$name: --target $t --weights=incbin differs from embed"
  done
done
echo "weights: $pass passed, $fail failed"
[ $fail -eq 0 ]
