#!/usr/bin/env bash
# fuzz.sh - behind `make fuzz`: seeds a corpus per target, runs each libFuzzer target for
# FUZZ_SECONDS, prints its figures, and copies any crashing input into
# tests/fuzz/regress/<target>/ (replayed by tests/fuzz_replay.sh).
set -u
B=${FUZZ_BUILD:-build-fuzz}
SECS=${FUZZ_SECONDS:-60}
# the ONNX node tests in the repository (tests/data; both folders: every node test of ONNX
# v1.22.0), or the folders these name
ONNX_TESTS=${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}
ONNX_TESTS_MORE=${KGEN_ONNX_TESTS_MORE-tests/data/onnx-node-tests-more}

seed() {  # seed TARGET FILE... : copy the files into $B/seeds/TARGET under unique names
  local t=$1 i=0 f
  shift
  mkdir -p "$B/seeds/$t"
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$B/seeds/$t/$i.${f##*.}"
    i=$((i + 1))
  done
}
rm -rf "$B/seeds"
seed fuzz_onnx "$ONNX_TESTS"/*/model.onnx ${ONNX_TESTS_MORE:+"$ONNX_TESTS_MORE"/*/model.onnx}
seed fuzz_kg examples/*.kg tests/error/kg/*.kg
# the .pb files: the repository's own and 600 small ones of the node tests' data sets
seed fuzz_io $(find tests -path tests/data/onnx-node-tests -prune -o -path tests/data/onnx-node-tests-more -prune -o -name '*.pb' -print) \
  $(find "$ONNX_TESTS" $ONNX_TESTS_MORE -path '*test_data_set_0/*.pb' -size -4k 2>/dev/null | sort | head -600)
mkdir -p "$B/seeds/npy" && "$B/mkseeds" "$B/seeds/npy" && cp "$B"/seeds/npy/*.npy "$B/seeds/fuzz_io/"

crashes=0
for t in fuzz_onnx fuzz_kg fuzz_io; do
  mkdir -p "$B/corpus/$t" "$B/artifacts/$t" "tests/fuzz/regress/$t"
  log=$B/$t.log
  echo "== $t: $(ls "$B/seeds/$t" | wc -l) seeds, ${SECS}s"
  "$B/$t" -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$B/artifacts/$t/" "$B/corpus/$t" "$B/seeds/$t" > "$log" 2>&1
  rc=$?
  grep -E '^#[0-9]+.*(INITED|DONE)' "$log" | tail -2
  grep -E '^(Done [0-9]+ runs|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' "$log"
  for a in "$B/artifacts/$t"/*; do
    [ -f "$a" ] || continue
    crashes=$((crashes + 1))
    cp "$a" "tests/fuzz/regress/$t/"
    echo "$t: finding $(basename "$a") -> tests/fuzz/regress/$t/ (log: $log)"
    grep -m1 -E 'ERROR: |runtime error:|error: ' "$log"
  done
  [ $rc -ne 0 ] && [ -z "$(ls "$B/artifacts/$t")" ] && echo "$t: exit $rc without an artifact, see $log"
done
echo "fuzz: $crashes finding(s)"
