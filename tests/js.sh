#!/usr/bin/env bash
# js.sh - the JavaScript and WebAssembly targets under node:
#   1. every committed real model (tests/models/*) through --target js (weights embedded for
#      small_cnn, in a file for the others), --target "wasm -nosimd" and --target wasm (built
#      by the generated Makefile with emcc), each run by its NAME_main.mjs on input_0.npy and
#      compared with the reference output (npycmp, rtol 1e-3, atol 1e-4: models.sh's rule);
#   2. every example (examples/*.kg) through --target js, --target "wasm -nosimd" and
#      --target wasm (SIMD128; NAME.wasm built by the generated Makefile, run through the NAME.mjs
#      loader), on one of exec.sh's shapes, checked against the C execution test's
#      reference (tests/exec/NAME.c linked with a shim that runs the kernel module:
#      tests/js/shim.mjs); an example without one is a smoke run on random inputs (it must
#      run and give finite outputs);
#   3. the wasm Makefile's flags for --target wasm, "wasm -simd" and "wasm -nosimd"
#      (-msimd128 in the first two only; INITIAL_MEMORY in 64 KiB pages, above the model's
#      arena and weights), without emcc.
# The cases run KGEN_JS_JOBS at a time (default 2; the emcc builds dominate), the biggest
# first; results print in a fixed order. A missing node or emcc is a SKIP (a FAIL with
# KGEN_REQUIRE_ALL=1). Ends with "js: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
JOBS=${KGEN_JS_JOBS:-2}
out=$BUILD/js
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}
rm -rf $out
mkdir -p $out
if ! command -v node >/dev/null 2>&1; then
  missing "js: node not found"
  echo "js: $pass passed, $fail failed, $skip skipped"
  [ $fail -eq 0 ]; exit
fi
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || { bad "js: cannot build npycmp"; }
have_emcc=1
command -v emcc >/dev/null 2>&1 || have_emcc=0
[ $have_emcc = 1 ] || missing "js: emcc not found (apt-get install emscripten): no WASM tests"

# Each case writes one line to its .res file: "ok LINE" ("ok" alone prints nothing) or "FAIL MSG".

# build DIR: the generated wasm Makefile, at -O1 in place of its -O3 (its other flags kept):
# what runs is the same C, and emcc -O3 (wasm-opt) costs several times the CPU;
# tests/published.sh builds with the Makefile's defaults
build() {
  local flags
  flags=$(sed -n 's/^EMFLAGS ?= //p' $1/Makefile)
  make -s -C $1 EMFLAGS="${flags/-O3/-O1}"
}

# model NAME TARGET LABEL [kgen options]: generate, build, run, compare
model() {
  local name=$1 target=$2 label=$3 dir=$out/$1.$3
  shift 3
  exec > $dir.res
  if ! timeout 120 "$KGEN" tests/models/$name/model.onnx --target "$target" -o $dir --name $name --main "$@" > $dir.log 2>&1; then
    echo "FAIL $name ($label): kgen failed: $(head -1 $dir.log)"; return
  fi
  if [ -f $dir/Makefile ] && ! build $dir > $dir/build.log 2>&1; then
    echo "FAIL $name ($label): emcc build failed: $(grep -m1 -i error $dir/build.log)"; return
  fi
  if ! timeout 120 node $dir/${name}_main.mjs tests/models/$name/input_0.npy -o $dir/out > $dir/run.log 2>&1; then
    echo "FAIL $name ($label): the runner failed: $(head -1 $dir/run.log)"; return
  fi
  local cmp
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 tests/models/$name/output_0.npy $dir/out/output_0.npy 2>&1); then
    echo "ok     $name ($label): $(printf '%s\n' "$cmp" | tail -1)"
  else
    echo "FAIL $name ($label): output differs from the reference: $(printf '%s\n' "$cmp" | tail -1)"
  fi
}

# one shape per example, from exec.sh's cases (sizes the split factors do not divide)
declare -A shape=(
  [matmul]="-DM=20 -DN=37 -DK=30" [batch_matmul]="-DBATCH=3 -DM=7 -DN=19 -DK=5"
  [conv2d]="-DC=6 -DH=11 -DW=13 -DF=10 -DS=2 -DP=2 -DD=2 -DG=2"
  [depthwise_conv2d]="-DN=2 -DC=3 -DH=13 -DW=9 -DS=2 -DP=0"
  [maxpool2d]="-DC=3 -DH=8 -DW=11 -DK=2 -DS=2 -DP=0" [avgpool2d]="-DN=2 -DC=3 -DH=7 -DW=10 -DK=3 -DS=1 -DP=1"
  [softmax]="-DR=4 -DL=37" [layernorm]="-DR=2 -DL=19" [rnn]="-DT=3 -DI=5 -DH=7"
)

# example NAME [TARGET LABEL]: the JS kernel (or the wasm loader and NAME.wasm, built by
# the generated Makefile) against tests/exec/NAME.c's reference, or a smoke run
example() {
  local name=$1 target=${2:-js} label=${3:-js}
  local dir=$out/ex_$1${3:+.$3} defs=${shape[$1]:-} what="example $1${3:+ ($3)}"
  exec > $dir.res
  if ! "$KGEN" examples/$name.kg --target "$target" -o $dir --name $name $defs > $dir.log 2>&1; then
    echo "FAIL $what: kgen failed: $(head -1 $dir.log)"; return
  fi
  if [ -f $dir/Makefile ] && ! build $dir > $dir/build.log 2>&1; then
    echo "FAIL $what: emcc build failed: $(grep -m1 -i error $dir/build.log)"; return
  fi
  if [ ! -f tests/exec/$name.c ]; then
    local msg
    if msg=$(timeout 120 node tests/js/smoke.mjs $dir/$name.mjs $name 2>&1); then echo "ok"; else echo "FAIL $what: $msg"; fi
    return
  fi
  if { [ $label = js ] && ! "$KGEN" examples/$name.kg --target c -o $dir $defs >> $dir.log 2>&1; } ||
     ! node tests/js/shim.mjs gen $dir $name > $dir/shim.c 2>> $dir.log ||
     ! $CC -std=c99 -Wall -Wextra -O1 -I$dir $defs tests/exec/$name.c $dir/shim.c -lm -o $dir/run >> $dir.log 2>&1; then
    echo "FAIL $what: the reference check does not build: $(grep -m1 -i error $dir.log)"; return
  fi
  if timeout 120 $dir/run > $dir/run.log 2>&1; then
    echo "ok     $what [$defs]: matches tests/exec/$name.c"
  else
    echo "FAIL $what [$defs]: $(head -3 $dir/run.log | tr '\n' ' ')"
  fi
}

# flags ATTRS WANT: the wasm Makefile of `--target "wasm ATTRS"` has -msimd128 when WANT is
# 1 and not when 0, and an INITIAL_MEMORY in whole 64 KiB pages that holds the model's
# weights and arena (the figures of --report); no emcc needed
flags() {
  local dir=$out/flags.${1:-default} want=$2 mk mem need
  exec > $dir.res
  if ! "$KGEN" tests/models/resnet_blocks/model.onnx --target "wasm $1" -o $dir --name net > $dir.log 2>&1; then
    echo "FAIL wasm flags (${1:-default}): kgen failed: $(head -1 $dir.log)"; return
  fi
  mk=$(cat $dir/Makefile)
  mem=$(sed -n 's/.*-sINITIAL_MEMORY=\([0-9]*\).*/\1/p' $dir/Makefile)
  need=$("$KGEN" tests/models/resnet_blocks/model.onnx --report | sed -n 's/.*arena \([0-9]*\) bytes.*weights \([0-9]*\) bytes.*/\1 \2/p' |
    awk '{ print $1 + $2 }')
  if [ $want = 1 ] && [[ $mk != *"-msimd128"* ]]; then echo "FAIL wasm flags (${1:-default}): no -msimd128 in the Makefile"
  elif [ $want = 0 ] && [[ $mk == *"-msimd128"* ]]; then echo "FAIL wasm flags (${1:-default}): -msimd128 in the Makefile"
  elif [ -z "$mem" ] || [ $((mem % 65536)) != 0 ] || [ -z "$need" ] || [ "$mem" -lt "$need" ]; then
    echo "FAIL wasm flags (${1:-default}): INITIAL_MEMORY '$mem' is not whole pages holding arena + weights ('$need' bytes)"
  else
    echo "ok     wasm flags (${1:-default}): simd $want, INITIAL_MEMORY $mem >= $need"
  fi
}
( flags "" 1 )
( flags -simd 1 )
( flags -nosimd 0 )

# the cases, the longest first (the WASM builds of the biggest models)
cases=()
models=$(ls -S tests/models/*/model.onnx | xargs -n1 dirname | xargs -n1 basename)
if [ $have_emcc = 1 ]; then
  for name in $models; do cases+=("model $name wasm|-nosimd wasm" "model $name wasm wasm-simd"); done
fi
for name in $models; do
  if [ $name = small_cnn ]; then cases+=("model $name js js"); else cases+=("model $name js js --weights=file"); fi
done
for kg in examples/*.kg; do
  cases+=("example $(basename $kg .kg)")
  [ $have_emcc = 1 ] && cases+=("example $(basename $kg .kg) wasm|-nosimd wasm" "example $(basename $kg .kg) wasm wasm-simd")
done

running=0
for c in "${cases[@]}"; do
  read -r -a argv <<< "$c"
  argv=("${argv[@]//|/ }")   # "wasm|-nosimd" is one argument
  ( "${argv[@]}" ) &
  running=$((running + 1))
  if [ $running -ge $JOBS ]; then wait -n; running=$((running - 1)); fi
done
wait

# the results, in a fixed order
for res in $(ls $out/*.res | sort); do
  line=$(cat $res)
  case $line in
    ok) ok ;;
    "ok "*) echo "    ${line#ok     }"; ok ;;
    FAIL*) bad "${line#FAIL }" ;;
    *) bad "$(basename $res .res): no result" ;;
  esac
done

echo "js: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
