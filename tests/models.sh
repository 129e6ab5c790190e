#!/usr/bin/env bash
# models.sh - end-to-end tests on real exported networks (tests/models/*/model.onnx, made
# by tests/models/make_models.py; no python is needed here). For each model:
#   1. kgen MODEL --main into $BUILD/models/NAME, and again into $BUILD/models/NAME.again:
#      the two trees must be byte-identical (determinism);
#   2. build the runner with $CC and strict flags (-Werror);
#   3. run it on input_0.npy and compare output_0.npy with the reference (npycmp, rtol
#      1e-3, atol 1e-4).
# For mobilenetv2_small it also checks that kgen takes under 2 s and that the generated
# source without NAME_weights.c stays under 1 MB, and prints both figures.
# Prints a FAIL line with the reason for each failure, indented figures, and finally
# "models: N passed, N failed". Run from the repository root (KGEN, BUILD, CC honoured;
# KGEN_GEN_CFLAGS is added to the flags of the generated code, e.g. sanitizers: the runner
# allocates inputs, outputs and the arena at exactly their size, see kgen_io.h).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="${MODELS_CFLAGS:-"-O2 -std=c99 -Wall -Wextra -pedantic -Werror"} ${KGEN_GEN_CFLAGS:-}"
RTOL=1e-3 ATOL=1e-4
MAX_KGEN_MS=2000                 # mobilenetv2_small: kgen time (CPU, user + system)
MAX_SRC_BYTES=$((1024 * 1024))   # mobilenetv2_small: generated source without weights
out=$BUILD/models
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# run kgen on MODEL into DIR as NAME; its output goes to LOG, "WALL_MS CPU_MS" to stdout
timed_kgen() {
  local TIMEFORMAT='%R %U %S' t rc
  t=$( { time timeout 60 "$KGEN" "$1" --target c -o "$2" --name "$3" --main > "$4" 2>&1; } 2>&1 ); rc=$?
  awk '{printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000}' <<< "$t"
  return $rc
}
first_lines() { head -c 2000 "$1" | head -3 | sed 's/^/    /'; }

mkdir -p $out
if ! $CC -std=c99 -O2 -Wall -Wextra -pedantic -Werror -I templates tests/models/npycmp.c \
     -o $out/npycmp -lm 2> $out/npycmp.log; then
  first_lines $out/npycmp.log
  bad "models: cannot build tests/models/npycmp.c"
  echo "models: $pass passed, $fail failed"
  exit 1
fi

# build the runner of one generated model in the background: DIR -> DIR/build.log, DIR/build.rc
build_runner() {
  ( make -s -C "$1" CC="$CC" CFLAGS="$STRICT" > "$1/build.log" 2>&1; echo $? > "$1/build.rc" ) &
}

names=()
for model in tests/models/*/model.onnx; do
  [ -f "$model" ] || continue
  name=$(basename "$(dirname "$model")")
  dir=$out/$name
  rm -rf "$dir" "$dir.again"
  if ! times=$(timed_kgen "$model" "$dir" "$name" "$out/$name.kgen.log"); then
    bad "$name: kgen failed: $(head -1 "$out/$name.kgen.log")"
    continue
  fi
  if ! timeout 60 "$KGEN" "$model" --target c -o "$dir.again" --name "$name" --main > /dev/null 2>&1; then
    bad "$name: the second kgen run failed"
    continue
  fi
  if ! diff -r "$dir" "$dir.again" > "$out/$name.diff" 2>&1; then
    bad "$name: two kgen runs differ: $(head -1 "$out/$name.diff")"
    continue
  fi
  rm -rf "$dir.again"
  if [ "$name" = mobilenetv2_small ]; then
    read -r wall ms <<< "$times"
    src=$(find "$dir" -type f ! -name "${name}_weights.c" -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    wts=$(stat -c %s "$dir/${name}_weights.c")
    echo "    $name: kgen ${ms} ms CPU, ${wall} ms wall (limit $MAX_KGEN_MS), generated source $src bytes without weights (limit $MAX_SRC_BYTES), ${name}_weights.c $wts bytes"
    if [ $ms -lt $MAX_KGEN_MS ]; then ok; else bad "$name: kgen took $ms ms, limit $MAX_KGEN_MS ms"; fi
    if [ $src -lt $MAX_SRC_BYTES ]; then ok; else bad "$name: generated source is $src bytes, limit $MAX_SRC_BYTES"; fi
  fi
  names+=("$name")
done

# two builds at a time (the machine has two cores), after every kgen run so that they do
# not disturb its timing
for name in "${names[@]}"; do
  if [ $(jobs -rp | wc -l) -ge 2 ]; then wait -n; fi
  build_runner "$out/$name"
done
wait

for name in "${names[@]}"; do
  dir=$out/$name
  if [ "$(cat "$dir/build.rc" 2>/dev/null)" != 0 ]; then
    bad "$name: the runner does not build with CC=$CC CFLAGS=\"$STRICT\": $(grep -m1 -E 'error|Error' "$dir/build.log")"
    continue
  fi
  rm -rf "$dir/out"
  if ! timeout 60 "$dir/$name" "tests/models/$name/input_0.npy" -o "$dir/out" > "$dir/run.log" 2>&1; then
    bad "$name: the runner failed: $(head -1 "$dir/run.log")"
    continue
  fi
  if cmp=$("$out/npycmp" --rtol $RTOL --atol $ATOL "tests/models/$name/output_0.npy" "$dir/out/output_0.npy" 2>&1); then
    echo "    $name: $(printf '%s\n' "$cmp" | tail -1)"
    ok
  else
    printf '%s\n' "$cmp" | sed 's/^/    /'
    bad "$name: output_0.npy differs from the reference"
  fi
done

# the per-element float helpers of kgen_runtime.h (kgen_expf, kgen_sigmoidf, kgen_tanhf,
# ...) are always inlined, so a loop of them vectorizes even where gcc's own inlining stops
# (a kernel of many such loops): with -fno-inline, which leaves only always_inline, no call
# of one may remain
helpers='kgen_(expf|sigmoidf|tanhf|erff|rsqrtf|floormodf|select_f32_|min_f32k?|max_f32k?|bits_f32|f32_bits)'
for name in "${names[@]}"; do
  dir=$out/$name
  grep -qE "$helpers" "$dir/$name.c" || continue
  if ! $CC -O2 -fno-inline -S -o "$dir/noinline.s" "$dir/$name.c" > "$dir/noinline.log" 2>&1; then
    bad "$name: $CC -O2 -fno-inline -S failed: $(head -1 "$dir/noinline.log")"
  elif calls=$(grep -E "(call|jmp|bl|b)[a-z]*[[:space:]]+_?$helpers\b" "$dir/noinline.s" | sort -u | head -3 | tr -s ' \t\n' ' '); [ -n "$calls" ]; then
    bad "$name: with -fno-inline the kernels still call the runtime's helpers: $calls"
  else
    ok
  fi
done

echo "models: $pass passed, $fail failed"
[ $fail -eq 0 ]
