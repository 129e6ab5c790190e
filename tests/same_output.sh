#!/usr/bin/env bash
# same_output.sh - is the generated code of two kgen binaries byte-identical? For
# refactorings that must not change output (the house issue). Not part of `make test`:
#
#     bash tests/same_output.sh OLD_KGEN NEW_KGEN [quick|full]
#
# Both binaries compile the same inputs with the same options into two trees, which must
# be equal file for file (and fail alike, with the same messages): the examples (.kg, every target), the committed
# models (tests/models, tests/published: c, js, wasm, opencl, cuda, metal), and the ONNX node
# tests (tests/data/onnx-node-tests*: quick, the default, every 7th through c, js and opencl;
# full, all of them through c, c -mattr=+avx2,+fma, js, wasm and opencl). Prints one line per
# difference and "same: N of N"; exits 1 on a difference. WORK is $SAME_WORK or
# build/same_output.
set -u
old=${1:?usage: same_output.sh OLD_KGEN NEW_KGEN [quick|full]} new=${2:?}
mode=${3:-quick}
w=${SAME_WORK:-build/same_output}
rm -rf $w && mkdir -p $w
n=0 d=0

# one DIR INPUT TARGET OPTS...: both binaries compile INPUT for TARGET, the trees compared
one() {
  local tag=$1 in=$2 tg=$3; shift 3
  local o=$w/old/$tag/${tg// /_} nn=$w/new/$tag/${tg// /_} r1 r2
  $old $in --target "$tg" -o $o --name m "$@" > $o.log 2>&1; r1=$?
  $new $in --target "$tg" -o $nn --name m "$@" > $nn.log 2>&1; r2=$?
  n=$((n + 1))
  if [ $r1 != $r2 ] || { [ $r1 = 0 ] && ! diff -rq $o $nn > /dev/null 2>&1; } ||
     ! diff -q <(sed "s#$old#KGEN#g" $o.log) <(sed "s#$new#KGEN#g" $nn.log) > /dev/null; then
    d=$((d + 1)); echo "DIFF $tag $tg (exit $r1 vs $r2)"
  fi
}
mkdir -p $w/old $w/new

for f in examples/*.kg tests/data/kg/*.kg; do
  tag=kg_$(basename $f .kg)
  mkdir -p $w/old/$tag $w/new/$tag
  for tg in c "c -mattr=+avx2,+fma" js wasm opencl cuda metal; do
    one $tag $f "$tg"
  done
done

for m in tests/models/*/model.onnx tests/published/*/model.onnx; do
  [ -f $(dirname $m)/dims ] && continue   # run-time dims (tests/dyn_js.sh)
  tag=$(basename $(dirname $m)); args=""
  [ -f $(dirname $m)/args ] && args=$(cat $(dirname $m)/args)
  mkdir -p $w/old/$tag $w/new/$tag
  for tg in c "c -mattr=+avx2,+fma" js wasm opencl cuda metal; do
    # shellcheck disable=SC2086
    one $tag $m "$tg" --main $args
  done
done

step=7 targets="c js opencl"
[ "$mode" = full ] && step=1 targets="c c-avx2 js wasm opencl"
i=0
for t in tests/data/onnx-node-tests*/*/; do
  i=$((i + 1)); [ $((i % step)) = 0 ] || continue
  tag=node_$(basename $t)
  mkdir -p $w/old/$tag $w/new/$tag
  for tg in $targets; do
    [ $tg = c-avx2 ] && tg="c -mattr=+avx2,+fma"
    one $tag $t/model.onnx "$tg" --bind-inputs $t/test_data_set_0
  done
done
echo "same: $((n - d)) of $n"
[ $d = 0 ]
