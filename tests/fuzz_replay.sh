#!/usr/bin/env bash
# fuzz_replay.sh - replays every file under tests/fuzz/regress/<target>/ through the plain
# (non-libFuzzer) build of that target under ASan+UBSan. One check that all targets
# build, then one per file; the last line is "fuzz-replay: N passed, N failed".
set -u
B=${FUZZ_BUILD:-build-fuzz}
pass=0 fail=0
mkdir -p "$B"
if make -s fuzz-build > "$B/replay-build.log" 2>&1; then
  pass=$((pass + 1))
else
  echo "fuzz-replay: the fuzz targets do not build"
  tail -20 "$B/replay-build.log"
  fail=$((fail + 1))
fi
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in fuzz_onnx fuzz_kg fuzz_io; do
  for f in tests/fuzz/regress/$t/*; do
    [ -f "$f" ] || continue
    if out=$(timeout 60 "$B/plain/$t" "$f" 2>&1); then
      pass=$((pass + 1))
    else
      echo "FAIL $t $f"
      printf '%s\n' "$out" | tail -15
      fail=$((fail + 1))
    fi
  done
done
echo "fuzz-replay: $pass passed, $fail failed"
[ $fail -eq 0 ]
