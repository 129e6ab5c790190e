#!/usr/bin/env bash
# dyn.sh - models compiled once with dims decided at run time (tests/dyn/*, made by
# tests/dyn/make.py), run at several extents through the C target. For each model:
#   1. kgen MODEL $(cat args) --main, twice: byte-identical trees (determinism);
#   2. the runner builds with strict flags (-Werror); --info names every range;
#   3. at each extent K the runner's output matches PyTorch's out_K.npy (npycmp);
#   4. bad_K.npy, an input outside the range, is refused: non-zero exit, a message naming
#      the range, no output written;
#   5. the model built with its dims fixed at its first reference extent matches that
#      reference as well.
# And for tests/dyn/cnn the entry points themselves: NAME() with a dim outside its range
# and NAME_tensors() with an output of the wrong shape return KGEN_ERR_SHAPE, and
# NAME_output_shape() gives the runner's shapes; tests/data/dyn/s2d_t.onnx (SpaceToDepth
# then DepthToSpace over run-time H and W) gives back its inputs and refuses an odd H.
# Prints "dyn: N passed, N failed".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
out=$BUILD/dyn
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

. tests/dyn/fixed_args.sh
rm -rf $out && mkdir -p $out
if ! $CC -std=c99 -O2 -Wall -Wextra -pedantic -I templates tests/models/npycmp.c -o $out/npycmp -lm 2> $out/npycmp.log; then
  bad "dyn: cannot build tests/models/npycmp.c"
  echo "dyn: $pass passed, $fail failed"
  exit 1
fi

for d in tests/dyn/*/; do
  name=$(basename $d)
  [ -f $d/model.onnx ] || continue
  args=$(cat $d/args)
  dir=$out/$name
  # shellcheck disable=SC2086
  if ! timeout 120 $KGEN $d/model.onnx $args --main --name $name -o $dir > $out/$name.kgen.log 2>&1; then
    bad "$name: kgen failed: $(head -1 $out/$name.kgen.log)"
    continue
  fi
  # shellcheck disable=SC2086
  timeout 120 $KGEN $d/model.onnx $args --main --name $name -o $dir.again > /dev/null 2>&1
  if diff -r $dir $dir.again > /dev/null 2>&1; then ok; else bad "$name: two kgen runs differ"; fi
  rm -rf $dir.again
  if ! make -s -C $dir CC="$CC" CFLAGS="$STRICT" > $dir/build.log 2>&1; then
    bad "$name: the runner does not build with -Werror: $(grep -m1 -E 'error' $dir/build.log)"
    continue
  fi
  ok
  # --info lists each run-time dim with its range, as args gives it
  info=$($dir/$name --info)
  for r in $(grep -o '[A-Za-z_0-9]*=[0-9]*\.\.[0-9]*' $d/args); do
    want="dim ${r%%=*}: ${r#*=}"
    if grep -qF "$want" <<< "$info"; then ok; else bad "$name: --info lacks '$want'"; fi
  done
  for ref in $d/out_*.npy; do
    k=$(basename $ref .npy); k=${k#out_}
    rm -rf $dir/out_$k
    if ! timeout 60 $dir/$name $d/in_$k.npy -o $dir/out_$k > $dir/run_$k.log 2>&1; then
      bad "$name at $k: the runner failed: $(head -1 $dir/run_$k.log)"
      continue
    fi
    if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir/out_$k/output_0.npy 2>&1); then
      echo "    $name at $k: $(tail -1 <<< "$cmp")"
      ok
    else
      bad "$name at $k: the output differs from PyTorch's: $(tail -1 <<< "$cmp")"
    fi
  done
  # 5. the model with its dims fixed at one reference extent (the baseline tests/bench/dyn.sh
  #    times the ranged build against) matches the reference too: both builds must compute
  #    the same thing (a Resize's axis of scale 1 once read neighbours in the fixed build)
  ref=$(ls $d/out_*.npy | head -1)
  k=$(basename $ref .npy); k=${k#out_}
  fixed=$(dyn_fixed_args "$args" $k)
  rm -rf $dir.fixed
  # shellcheck disable=SC2086
  if ! timeout 120 $KGEN $d/model.onnx $fixed --main --name $name -o $dir.fixed > $dir.fixed.log 2>&1 ||
    ! make -s -C $dir.fixed CC="$CC" CFLAGS="$STRICT" >> $dir.fixed.log 2>&1 ||
    ! timeout 60 $dir.fixed/$name $d/in_$k.npy -o $dir.fixed/out > $dir.fixed/run.log 2>&1; then
    bad "$name built with $fixed: $(grep -m1 -iE 'error|fail' $dir.fixed.log $dir.fixed/run.log 2>/dev/null)"
  elif cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir.fixed/out/output_0.npy 2>&1); then
    echo "    $name built for $k: $(tail -1 <<< "$cmp")"
    ok
  else
    bad "$name built for $k: the output differs from the reference: $(tail -1 <<< "$cmp")"
  fi
  for b in $d/bad_*.npy; do
    rm -rf $dir/out_bad
    if timeout 60 $dir/$name $b -o $dir/out_bad > $dir/run_bad.log 2>&1; then
      bad "$name: $(basename $b), outside the range, was run"
    elif ! grep -q "outside the range" $dir/run_bad.log || [ -e $dir/out_bad/output_0.npy ]; then
      bad "$name: $(basename $b) refused without the range named, or an output written: $(head -1 $dir/run_bad.log)"
    else
      ok
    fi
  done
done

# the entry points of tests/dyn/cnn (H in 32..96, W in 32..128)
dir=$out/cnn
if [ -f $dir/cnn.h ]; then
  cat > $out/entry.c <<'C'
#include "cnn.h"
#include <stdio.h>
#include <stdlib.h>

static float x[1 * 3 * 96 * 128], y[10];
int main(void)
{
    void *arena = malloc(CNN_ARENA_BYTES + 64);
    int64_t dims[2] = {47, 75}, shape[2] = {0, 0}, xs[4] = {1, 3, 47, 75}, ys[2] = {1, 10}, bad[2] = {1, 9};
    kgen_tensor tx = {x, {KGEN_DEVICE_CPU, 0}, 4, {KGEN_DTYPE_FLOAT, 32, 1}, xs, NULL, 0};
    kgen_tensor ty = {y, {KGEN_DEVICE_CPU, 0}, 2, {KGEN_DTYPE_FLOAT, 32, 1}, ys, NULL, 0};
    kgen_tensor *args[2] = {&tx, &ty};
    int fails = 0;
    void *a = (void *)(((uintptr_t)arena + 63) & ~(uintptr_t)63);
    fails += cnn(x, y, a, 31, 64) != KGEN_ERR_SHAPE;       /* H below its range */
    fails += cnn(x, y, a, 32, 129) != KGEN_ERR_SHAPE;      /* W above */
    fails += cnn(x, y, a, 47, 75) != KGEN_OK;
    fails += cnn_tensors(args, 2, a) != KGEN_OK;
    ty.shape = bad;
    fails += cnn_tensors(args, 2, a) != KGEN_ERR_SHAPE;    /* an output of the wrong shape */
    fails += cnn_output_shape(0, dims, shape) != KGEN_OK || shape[0] != 1 || shape[1] != 10;
    fails += CNN_NUM_DIMS != 2 || cnn_dim_info[0].lo != 32 || cnn_dim_info[1].hi != 128;
    printf("%d failed\n", fails);
    free(arena);
    return fails != 0;
}
C
  if $CC $STRICT -I $dir $out/entry.c $dir/cnn.c $dir/cnn_weights.c -lm -o $out/entry > $out/entry.log 2>&1 &&
     $out/entry >> $out/entry.log 2>&1; then
    ok
  else
    bad "cnn: the entry points' checks: $(tail -1 $out/entry.log)"
  fi
fi

# --extent-versions=off: one version of each step (no NAME_STEP_vN), still right at every
# extent; the default build of the same model has versions, among them one without threads
for name in upsample crnn; do
  d=tests/dyn/$name dir=$out/$name.noversions
  # shellcheck disable=SC2086
  if ! $KGEN $d/model.onnx $(cat $d/args) --extent-versions=off --main --name $name -o $dir > $out/$name.nov.log 2>&1 ||
     ! make -s -C $dir CC="$CC" CFLAGS="$STRICT" > $dir/build.log 2>&1; then
    bad "$name --extent-versions=off: kgen or the build failed: $(head -1 $out/$name.nov.log)"
    continue
  fi
  if grep -q "_v[0-9](" $dir/$name.c || ! grep -q "_v[0-9](" $out/$name/$name.c; then
    bad "$name: versions for smaller extents with --extent-versions=off, or none without it"
  else
    ok
  fi
  for ref in $d/out_*.npy; do
    k=$(basename $ref .npy); k=${k#out_}
    if timeout 60 $dir/$name $d/in_$k.npy -o $dir/out_$k > $dir/run_$k.log 2>&1 &&
       cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir/out_$k/output_0.npy 2>&1); then
      ok
    else
      bad "$name --extent-versions=off at $k: $(tail -1 $dir/run_$k.log) $(tail -1 <<< "${cmp:-}")"
    fi
  done
done
rm -rf $out/badopt
if $KGEN tests/dyn/upsample/model.onnx --extent-versions=some -o $out/badopt > $out/badopt.log 2>&1 ||
   ! grep -q "extent-versions takes on or off" $out/badopt.log || [ -e $out/badopt ]; then
  bad "--extent-versions=some: not refused with a message, or output written: $(head -1 $out/badopt.log)"
else
  ok
fi
# the upsampler's final resize at its smallest extents: a version with no parallel loop
if awk '/^static (KGEN_WIDE_VECTORS )?void upsample_y_v[0-9]\(/,/^}$/' $out/upsample/upsample.c | grep -q "for (" &&
   ! awk '/^static (KGEN_WIDE_VECTORS )?void upsample_y_v[0-9]\(/,/^}$/' $out/upsample/upsample.c | grep -Eq "KGEN_(PARALLEL|TEAM)_FOR"; then
  ok
else
  bad "upsample: no version of its final resize without threads"
fi

# a dim whose range starts at 1 (attention's seq=1..20: a decoder's one token): each step
# that reads it has a version for extent 1, its loops over the dim folded, which the model
# function tries first (the outputs at extent 1 above come from those versions); none for
# a dim that starts above 1 (upsample's 4..48), none with --extent-versions=off
at1=$(awk '/^static (KGEN_WIDE_VECTORS )?void attention_t_Softmax_output_0__sum_at1\(/,/^}$/' $out/attention/attention.c)
if [ -n "$at1" ] && ! grep -q "for (.*seq" <<< "$at1" &&
   grep -q "^    if ((seq == 1))$" $out/attention/attention.c && ! grep -q "_at1(" $out/upsample/upsample.c &&
   $KGEN tests/dyn/attention/model.onnx $(cat tests/dyn/attention/args) --extent-versions=off -o $out/at1off > /dev/null 2>&1 &&
   ! grep -q "_at1(" $out/at1off/model.c; then
  ok
else
  bad "attention: no version of its steps for seq == 1 with its loops folded, or one where there should be none"
fi

# a linear Resize between sizes decided at run time reads its taps and weights from tables
# over each output coordinate (computed once a run), not from divisions in every element
r1=$($KGEN tests/dyn/resizes/model.onnx $(cat tests/dyn/resizes/args) --dump=import 2>&1 | grep -E '^  r1(_lo2)?\[')
if grep -q '^  r1_lo2\[' <<< "$r1" && ! grep '^  r1\[' <<< "$r1" | grep -q '//'; then
  ok
else
  bad "resizes: r1 computes its coordinates per element: $(grep '^  r1\[' <<< "$r1" | cut -c1-160)"
fi
# a nearest Resize by constant scales to an extent decided at run time reads its input
# positions from tables over the output coordinates too (r2: scales 0.5 and 0.75)
r2=$($KGEN tests/dyn/resizes/model.onnx $(cat tests/dyn/resizes/args) --dump=import 2>&1 | grep -E '^  r2(_idx[23])?\[')
if grep -q '^  r2_idx2\[' <<< "$r2" && grep -q '^  r2_idx3\[' <<< "$r2" && ! grep '^  r2\[' <<< "$r2" | grep -q '//'; then
  ok
else
  bad "resizes: r2 computes its input positions per element: $(grep '^  r2\[' <<< "$r2" | cut -c1-160)"
fi

# the window partition of tests/dyn/windows: its vector loop reads at an offset computed
# before it (runtime-divisions), not one divided by run-time extents in every lane
part=$(awk '/^static (KGEN_PARALLEL_BODY )?(KGEN_WIDE_VECTORS )?void windows_t_Reshape_3_output_0__body\(/,/^}$/' $out/windows/windows.c)
if grep -q "const int32_t at = " <<< "$part" && ! sed -n '/KGEN_VECTORIZE/,$p' <<< "$part" | grep -q '[/%]'; then
  ok
else
  bad "windows: the window partition divides by run-time extents inside its vector loop"
fi

# SpaceToDepth and DepthToSpace over run-time H and W (tests/data/dyn/s2d_t.onnx: the one
# undoes the other, so each input is its own reference); an odd H is refused while the
# model runs (a multiple of the block is checked at run time)
dir=$out/s2d
if $KGEN tests/data/dyn/s2d_t.onnx --dim H=2..32 --dim W=2..32 --main --name s2d -o $dir > $out/s2d.log 2>&1 &&
   make -s -C $dir CC="$CC" CFLAGS="$STRICT" > $dir/build.log 2>&1; then
  for x in tests/data/dyn/s2d_in_*.npy; do
    k=$(basename $x .npy)
    if timeout 60 $dir/s2d $x -o $dir/$k > $dir/$k.log 2>&1 &&
       cmp=$($out/npycmp --rtol 0 --atol 0 $x $dir/$k/output_0.npy 2>&1); then
      ok
    else
      bad "s2d_t at ${k#s2d_in_}: $(tail -1 $dir/$k.log) $(tail -1 <<< "${cmp:-}")"
    fi
  done
  $dir/s2d tests/data/dyn/s2d_bad_5x4.npy -o $dir/bad > $dir/bad.log 2>&1; rc=$?
  if [ $rc = 1 ] && [ ! -e $dir/bad ]; then ok; else bad "s2d_t: an odd H not refused (exit $rc): $(head -1 $dir/bad.log)"; fi
else
  bad "s2d_t: kgen or the build failed: $(head -1 $out/s2d.log) $(grep -m1 error $dir/build.log 2>/dev/null)"
fi

echo "dyn: $pass passed, $fail failed"
[ $fail -eq 0 ]
