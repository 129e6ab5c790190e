#!/usr/bin/env bash
# dyn_arena.sh - the arena of a model whose dims are decided at run time (issue 16): its
# intermediates are compact at the run's extents and placed by them (lower/arena.c), so
# NAME_arena_bytes(dims) is what a run needs. For each model of tests/dyn (tests/dyn/*/args):
#   1. NAME_arena_bytes with every dim at its bound is NAME_ARENA_BYTES, and none of 500
#      extents across the ranges needs more (or a size not a multiple of 64);
#   2. with every dim at the bottom of its range it needs at most a quarter of the bound's
#      (the conv nets, the CRNN, the LSTM, the attention all shrink with their extents);
#   3. the runner built with AddressSanitizer and given an arena of exactly
#      NAME_arena_bytes(dims) bytes for the run's dims (a byte past it is caught) matches
#      PyTorch's output at each extent (out_K.npy); for the conv net, an arena 64 bytes
#      short is caught (the check can fail).
# Both programs are built at -O0: they check sizes and addresses, not speed, and the ranged
# models' C is large (MobileNetV2's 6 MB took 143 CPU s at -O1 with AddressSanitizer, 25 at
# -O0); tests/dyn.sh builds the same C at -O2 with -Werror.
# Prints "dyn_arena: N passed, N failed[, N skipped]".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
out=$BUILD/dyn_arena
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

rm -rf $out && mkdir -p $out
if ! $CC -std=c99 -O2 -Wall -Wextra -pedantic -I templates tests/models/npycmp.c -o $out/npycmp -lm 2> $out/npycmp.log; then
  bad "dyn_arena: cannot build tests/models/npycmp.c"
  echo "dyn_arena: $pass passed, $fail failed"
  exit 1
fi
echo 'int main(void) { return 0; }' > $out/asan.c
asan="-fsanitize=address -fno-omit-frame-pointer"
$CC $asan $out/asan.c -o $out/asan > /dev/null 2>&1 && $out/asan || asan=""

for d in ${KGEN_DYN_ONLY:-tests/dyn/*/}; do
  name=$(basename $d)
  [ -f $d/model.onnx ] || continue
  up=$(tr a-z A-Z <<< $name)
  dir=$out/$name
  # shellcheck disable=SC2086
  if ! timeout 120 $KGEN $d/model.onnx $(cat $d/args) --main --name $name -o $dir > $out/$name.kgen.log 2>&1; then
    bad "$name: kgen failed: $(head -1 $out/$name.kgen.log)"
    continue
  fi
  # 1 and 2: the need at the bound, at the bottom of each range, at each reference extent
  cat > $dir/need.c <<C
#include "$name.h"
#include <stdio.h>
int main(void)
{
    int64_t lo[${up}_NUM_DIMS], hi[${up}_NUM_DIMS];
    for (int i = 0; i < ${up}_NUM_DIMS; i++) {
        lo[i] = ${name}_dim_info[i].lo;
        hi[i] = ${name}_dim_info[i].hi;
    }
    /* 500 extents across the ranges (a fixed LCG): none needs more than the bound's plan,
     * and each needs a multiple of 64 bytes (the slices' alignment) */
    int over = 0;
    uint32_t r = 12345;
    for (int t = 0; t < 500; t++) {
        int64_t d[${up}_NUM_DIMS];
        for (int i = 0; i < ${up}_NUM_DIMS; i++) {
            r = r * 1103515245u + 12345u;
            d[i] = lo[i] + (int64_t)((r >> 8) % (uint32_t)(hi[i] - lo[i] + 1));
        }
        int64_t n = ${name}_arena_bytes(d);
        over += n > ${up}_ARENA_BYTES || n < 0 || n % 64 != 0;
    }
    printf("%lld %lld %lld %d\n", (long long)${up}_ARENA_BYTES, (long long)${name}_arena_bytes(hi),
           (long long)${name}_arena_bytes(lo), over);
    return 0;
}
C
  if ! $CC -std=c99 -O0 -Wall -Wextra -pedantic -Werror -I $dir $dir/need.c $dir/$name.c $dir/${name}_weights.c -lm \
       -o $dir/need > $dir/need.log 2>&1; then
    bad "$name: the arena check does not build: $(grep -m1 error $dir/need.log)"
    continue
  fi
  read -r bytes at_hi at_lo over <<< "$($dir/need)"
  echo "    $name: ${up}_ARENA_BYTES $bytes, ${name}_arena_bytes at the bound $at_hi, at the bottom of the ranges $at_lo"
  if [ "$at_hi" = "$bytes" ]; then ok; else bad "$name: the need at the bound ($at_hi) is not the plan's $bytes"; fi
  if [ "$over" = 0 ]; then ok; else bad "$name: $over of 500 extents need more than the bound's plan or an unaligned size"; fi
  if [ $((at_lo * 4)) -le "$bytes" ]; then ok; else bad "$name: at the bottom of the ranges it needs $at_lo of $bytes bytes"; fi
  if [ -z "$asan" ]; then
    skip=$((skip + 1))
    continue
  fi
  # 3: the runner with an arena of exactly the run's need. KGEN_MAIN_ARENA_BYTES is read
  # where kgen_main.h's main() has the run's dims (a local `dims`) and in --info, where the
  # file-scope `dims` below (the bounds) stands in.
  {
    sed "/#define KGEN_MAIN_ARENA_BYTES/d; /#include \"kgen_main.h\"/d" $dir/${name}_main.c
    echo "static const int64_t dims[${up}_NUM_DIMS] = {$(grep -o '=[0-9]*\.\.[0-9]*' $d/args | sed 's/.*\.\.//' | paste -sd,)};"
    echo "#define KGEN_MAIN_ARENA_BYTES ${name}_arena_bytes(dims)"
    echo "#include \"kgen_main.h\""
  } > $dir/exact_main.c
  # shellcheck disable=SC2086
  if ! $CC -std=c99 -O0 -g $asan -I $dir $dir/exact_main.c $dir/$name.c $dir/${name}_weights.c -lm -o $dir/exact \
       > $dir/exact.log 2>&1; then
    bad "$name: the exact-arena runner does not build: $(grep -m1 error $dir/exact.log)"
    continue
  fi
  # the control: 64 bytes short of the need, AddressSanitizer stops the conv net's run
  if [ $name = cnn ]; then
    sed 's/^#define KGEN_MAIN_ARENA_BYTES .*/#define KGEN_MAIN_ARENA_BYTES (cnn_arena_bytes(dims) - 64)/' $dir/exact_main.c > $dir/short_main.c
    if $CC -std=c99 -O0 -g $asan -I $dir $dir/short_main.c $dir/$name.c $dir/${name}_weights.c -lm -o $dir/short \
         > $dir/short.log 2>&1 && ! ASAN_OPTIONS=detect_leaks=0 $dir/short $d/in_32x32.npy -o $dir/out_short > $dir/short_run.log 2>&1 &&
       grep -q AddressSanitizer $dir/short_run.log; then
      ok
    else
      bad "cnn: an arena 64 bytes short of cnn_arena_bytes(dims) was not caught: $(tail -1 $dir/short_run.log)"
    fi
  fi
  for ref in $d/out_*.npy; do
    k=$(basename $ref .npy); k=${k#out_}
    rm -rf $dir/out_$k
    if ! ASAN_OPTIONS=detect_leaks=0 timeout 300 $dir/exact $d/in_$k.npy -o $dir/out_$k > $dir/run_$k.log 2>&1; then
      bad "$name at $k, an arena of exactly its need: the run failed: $(grep -m1 -E 'ERROR|error|:' $dir/run_$k.log)"
      continue
    fi
    if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir/out_$k/output_0.npy 2>&1); then
      ok
    else
      bad "$name at $k, an arena of exactly its need: the output differs from PyTorch's: $(tail -1 <<< "$cmp")"
    fi
  done
done

if [ $skip -gt 0 ]; then
  echo "dyn_arena: $pass passed, $fail failed, $skip skipped (no AddressSanitizer)"
else
  echo "dyn_arena: $pass passed, $fail failed"
fi
[ $fail -eq 0 ]
