# conf_tests.sh - sourced by the conformance runs (conformance.sh, conformance_js.sh,
# conformance_wasm.sh): the ONNX node-test folders they run over, seen as one.
#
#   KGEN_ONNX_TESTS       the first folder (tests/data/onnx-node-tests: 1263 tests)
#   KGEN_ONNX_TESTS_MORE  the rest of ONNX v1.22.0's node tests (tests/data/onnx-node-tests-more:
#                         502 tests); set it empty to run the first folder only
#
# conf_dirs sets TEST_DIRS to the folders. conf_missing prints the first MANIFEST.tsv that
# is not there (nothing when all are). conf_view DIR makes DIR the one folder the run
# reads: DIR/MANIFEST.tsv holds every folder's rows under one header, and DIR/NAME is a
# link to test NAME's own folder. A name that two folders hold is the first folder's.

conf_dirs() {
  TEST_DIRS=("${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}")
  local more=${KGEN_ONNX_TESTS_MORE-tests/data/onnx-node-tests-more}
  [ -n "$more" ] && TEST_DIRS+=("$more")
  return 0
}

conf_missing() {
  local d
  for d in "${TEST_DIRS[@]}"; do
    [ -f "$d/MANIFEST.tsv" ] || { echo "$d/MANIFEST.tsv"; return; }
  done
}

conf_view() {
  local view=$1 d abs
  mkdir -p "$view"
  : > "$view/MANIFEST.tsv.rows"
  for d in "${TEST_DIRS[@]}"; do
    abs=$(cd "$d" && pwd)
    # the links the view lacks yet (ln refuses the names it holds: the first folder's stay)
    find "$abs" -mindepth 1 -maxdepth 1 -type d -exec ln -s -t "$view" {} + 2> /dev/null
    awk 'FNR > 1' "$abs/MANIFEST.tsv" >> "$view/MANIFEST.tsv.rows"
  done
  { head -1 "${TEST_DIRS[0]}/MANIFEST.tsv"; awk -F'\t' '!seen[$1]++' "$view/MANIFEST.tsv.rows"; } > "$view/MANIFEST.tsv"
  rm -f "$view/MANIFEST.tsv.rows"
}
