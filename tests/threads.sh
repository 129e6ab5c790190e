#!/usr/bin/env bash
# threads.sh - the generated C built with -fopenmp and run on two threads: each kernel's
# parallel loop divided between them (schedule/default.c), the steps of a model function
# without run-time control flow run by one team of threads (emit/model.c), and two
# neighbouring kernels without parallel loops run side by side, one on each (lower/model.c,
# "beside"; in a team, KGEN_TEAM_SIDE, else OpenMP sections). For
# each model of tests/models below:
#   1. the runner builds with -fopenmp and strict flags (-Werror);
#   2. on two threads (OMP_NUM_THREADS=2) its output is the same, bit for bit, as the
#      build without -fopenmp gives (threads divide iterations, never a sum), and it
#      matches the model's reference (npycmp).
# The classifier's first layer, a wide matrix-vector product, is divided into parallel parts
# with their weights in blocks (schedule/default.c, gemv_schedule).
# And tests/dyn/crnn (a BiLSTM over a width decided at run time): its two LSTM directions
# are the steps run side by side, and on two threads it matches PyTorch at each extent;
# tests/published/bilstm_if's, where a run-time If leaves the model function no team.
# Prints "threads: N passed, N failed[, N skipped]"; without a compiler that takes
# -fopenmp, a skip (a failure under KGEN_REQUIRE_ALL=1).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
out=$BUILD/threads
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
done_() { echo "threads: $pass passed, $fail failed, $skip skipped"; [ $fail = 0 ]; exit; }
export OMP_NUM_THREADS=2

rm -rf $out && mkdir -p $out
if ! $CC -std=c99 -O2 -Wall -Wextra -pedantic -I templates tests/models/npycmp.c -o $out/npycmp -lm 2> $out/npycmp.log; then
  bad "threads: cannot build tests/models/npycmp.c"
  done_
fi
echo 'int main(void) { int n = 0;
#pragma omp parallel reduction(+ : n)
  n += 1;
  return n < 1; }' > $out/omp.c
if ! $CC -fopenmp $out/omp.c -o $out/omp > $out/omp.log 2>&1 || ! $out/omp; then
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
    bad "threads: $CC cannot build with -fopenmp (KGEN_REQUIRE_ALL=1): $(head -1 $out/omp.log)"
  else
    echo "SKIP threads: $CC cannot build with -fopenmp: $(head -1 $out/omp.log)"; skip=1
  fi
  done_
fi

# gen MODEL DIR NAME [ARGS...]: the runner built twice, DIR/NAME without threads and
# DIR/NAME.omp with them; status 0 when both built
gen() {
  local model=$1 dir=$2 name=$3; shift 3
  if ! timeout 120 $KGEN $model "$@" --main --name $name -o $dir > $dir.kgen.log 2>&1; then
    bad "$name: kgen failed: $(head -1 $dir.kgen.log)"; return 1
  fi
  local srcs
  srcs=$(cd $dir && ls $name.c ${name}_main.c ${name}_weights.c ${name}_weights.S 2>/dev/null)
  # shellcheck disable=SC2086
  if ! make -s -C $dir CC="$CC" CFLAGS="$STRICT" > $dir/build.log 2>&1 ||
     ! (cd $dir && $CC $STRICT -fopenmp -o $name.omp $srcs -lm) >> $dir/build.log 2>&1; then
    bad "$name: the runner does not build with -fopenmp -Werror: $(grep -m1 error $dir/build.log)"; return 1
  fi
  ok
}

# run DIR NAME INPUT REF TAG: two threads against one (bit for bit) and against REF
run() {
  local dir=$1 name=$2 x=$3 ref=$4 tag=$5
  rm -rf $dir/one_$tag $dir/two_$tag
  if ! timeout 60 $dir/$name $x -o $dir/one_$tag > $dir/one_$tag.log 2>&1 ||
     ! timeout 60 $dir/$name.omp $x -o $dir/two_$tag > $dir/two_$tag.log 2>&1; then
    bad "$name at $tag: a runner failed: $(tail -1 $dir/two_$tag.log)"; return
  fi
  if cmp -s $dir/one_$tag/output_0.npy $dir/two_$tag/output_0.npy; then
    ok
  else
    bad "$name at $tag: two threads give another output than one"
  fi
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $ref $dir/two_$tag/output_0.npy 2>&1); then
    echo "    $name at $tag, 2 threads: $(tail -1 <<< "$cmp")"; ok
  else
    bad "$name at $tag: on two threads the output differs from the reference: $(tail -1 <<< "$cmp")"
  fi
}

for name in small_cnn resnet_blocks wino_convs mobilenetv2_small transformer lstm classifier; do
  d=tests/models/$name
  [ -f $d/model.onnx ] || continue
  gen $d/model.onnx $out/$name $name --target c && run $out/$name $name $d/input_0.npy $d/output_0.npy static
done
# a model function that is a straight sequence of steps runs them on one team of threads
# (emit/model.c, use_team; kgen_runtime.h's KGEN_TEAM): the outputs above, bit for bit the
# one-thread build's, are the team's; steps without a parallel loop on thread 0 alone
for name in mobilenetv2_small wino_convs; do
  c=$out/$name/$name.c
  if grep -q "^    KGEN_TEAM(kgen_team)$" $c && grep -q "KGEN_TEAM_FOR" $c && grep -q "KGEN_TEAM_ONE" $c &&
     ! grep -q "KGEN_PARALLEL_FOR" $c; then ok
  else bad "$name: the model function does not run its steps on one team of threads"; fi
done
# and over run-time extents, a step's versions chosen in the team (tests/dyn/unet: some
# versions have a parallel loop, some run on thread 0 alone)
d=tests/dyn/unet dir=$out/unet_dyn
# shellcheck disable=SC2046
if gen $d/model.onnx $dir unet_dyn $(cat $d/args); then
  if grep -q "^    KGEN_TEAM(kgen_team)$" $dir/unet_dyn.c && grep -q "^        if (.*) {$" $dir/unet_dyn.c; then ok
  else bad "unet_dyn: its steps' versions are not chosen in one team of threads"; fi
  for ref in $d/out_*.npy; do
    k=$(basename $ref .npy); k=${k#out_}
    run $dir unet_dyn $d/in_$k.npy $ref $k
  done
fi
# the classifier's first layer, a matrix-vector product of 1.2 MB of weights: its row in 4
# parallel parts, each part's weights one block (panels of the part's columns)
if grep -Eq "KGEN_(PARALLEL|TEAM)_FOR" $out/classifier/classifier.c && grep -q "_BT_panels[0-9]*\[i1_outer_outer \* " $out/classifier/classifier.c; then
  ok
else
  bad "classifier: its first layer is not divided into parallel parts with their weights in blocks"
fi

d=tests/dyn/crnn dir=$out/crnn
# shellcheck disable=SC2046
if gen $d/model.onnx $dir crnn $(cat $d/args); then
  # (the only pair: the comments of the kernels and their versions name no other); in the
  # model function's team, one direction on thread 0 and the other on thread 1
  if grep -q "^    KGEN_TEAM(kgen_team)$" $dir/crnn.c &&
     awk '/KGEN_TEAM_SIDE\(0\)$/ { s = 0 } /KGEN_TEAM_SIDE\(1\)$/ { s = 1 }
          s != "" && /crnn_.*_state\(/ && s == 0 { a++ } s != "" && /crnn_.*_state_rev\(/ && s == 1 { b++ }
          /KGEN_TEAM_SYNC/ { s = "" } END { exit !(a && b) }' $dir/crnn.c &&
     [ "$(grep -c '^ \* runs beside ' $dir/crnn.c)" = 2 ]; then
    ok
  else
    bad "crnn: its LSTM's two directions are not run side by side (KGEN_TEAM_SIDE(0) and (1))"
  fi
  for ref in $d/out_*.npy; do
    k=$(basename $ref .npy); k=${k#out_}
    run $dir crnn $d/in_$k.npy $ref $k
  done
fi
# a model function without a team (tests/published/bilstm_if: a run-time If, then a BiLSTM)
# runs the pair in OpenMP sections, each on a thread of its own; both sides of the If
d=tests/published/bilstm_if dir=$out/bilstm_if
if gen $d/model.onnx $dir bilstm_if; then
  if awk '/KGEN_SIDE_BY_SIDE$/ { on = 1 } on && /bilstm_if_.*_state(_rev)?\(/ { n++ } on && /^    }$/ { exit } END { exit n != 2 }' \
       $dir/bilstm_if.c && ! grep -q "KGEN_TEAM(" $dir/bilstm_if.c; then
    ok
  else
    bad "bilstm_if: its LSTM's two directions are not run side by side in OpenMP sections (KGEN_SIDE_BY_SIDE)"
  fi
  run $dir bilstm_if $d/input_0.npy $d/output_0.npy then
  run $dir bilstm_if $d/data_1/input_0.npy $d/data_1/output_0.npy else
fi
# the pass's dump names the pair for C, and no pair for a target without threads
# shellcheck disable=SC2046
c=$($KGEN $d/model.onnx $(cat $d/args) --dump=beside 2>&1 | grep -c '_state beside .*_state_rev$')
# shellcheck disable=SC2046
js=$($KGEN $d/model.onnx $(cat $d/args) --target js --dump=beside 2>&1 | grep -c ' beside ')
if [ "$c" = 1 ] && [ "$js" = 0 ]; then ok; else bad "crnn: --dump=beside: $c pairs for C (1 wanted), $js for js (0)"; fi
done_
