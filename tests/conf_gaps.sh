#!/usr/bin/env bash
# conf_gaps.sh - writes tests/conformance_gaps.txt anew: every ONNX node test of both
# folders (tests/conf_tests.sh) that kgen refuses today, with the first line of kgen's
# message as its reason. Every test is tried, those of the element types the conformance
# runs skip too (so that a shorter skip list does not turn them into failures), for the
# c, opencl, js and wasm targets in one kgen run per test (tests/conf_gen.sh); a test is
# listed when a target refuses it. A crash or a timeout is not a gap: it is printed and
# left out, so that the conformance runs fail on it. The lines of the old list whose
# reason starts with "wrong:" (a test kgen compiles whose result is known to be off, said
# by hand) are kept while kgen compiles the test.
#
#   bash tests/conf_gaps.sh          (KGEN, BUILD, KGEN_ONNX_TESTS, KGEN_ONNX_TESTS_MORE)
#
# Run it after kgen learns an operator (the conformance runs print "GAP CLOSED" for each
# listed test that passes) and review the difference with git diff.
set -u
export LC_ALL=C
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/conf_tests.sh"
conf_dirs
missing=$(conf_missing)
[ -z "$missing" ] || { echo "conf_gaps: $missing not found" >&2; exit 1; }
[ -x "$KGEN" ] || { echo "conf_gaps: $KGEN is not an executable (run make first)" >&2; exit 1; }

work=$(mkdir -p "$BUILD" && cd "$BUILD" && pwd)/conf-gaps
rm -rf "$work"
mkdir -p "$work"
conf_view "$work/tests"
cp "$KGEN" "$work/kgen.bin"
# the C names as the conformance runs make them
awk -F'\t' 'NR > 1 {
    c = $1
    gsub(/[^A-Za-z0-9_]/, "_", c)
    if (c !~ /^[A-Za-z_]/) c = "t_" c
    while (c in used) c = c "_"
    used[c] = 1
    print $1 "\t" c
  }' "$work/tests/MANIFEST.tsv" |
  bash "$here/conf_gen.sh" "$work/gen" "$work/kgen.bin" "$work/tests" c opencl js wasm

out=$here/conformance_gaps.txt
touch "$out"
{
  cat <<'EOF'
# Known gaps of the ONNX conformance runs (C, OpenCL, JS, WASM): the node tests kgen
# refuses today, each with the first line of kgen's message (made by tests/conf_gaps.sh).
# A listed test that kgen refuses counts as skipped, not failed; a listed test that fails
# any other way is a failure, unless its reason starts with "wrong:" (a known wrong
# result, written by hand: such a failure is printed as KNOWN FAIL and skipped); one that
# passes is reported ("GAP CLOSED") so that its line can go. One test name a line; the
# text after the name is the reason.
EOF
  cat "$work"/gen/status.*.tsv |
    awk -F'\t' -v old="$out" '
      BEGIN {
        while ((getline l < old) > 0) {
          n = split(l, w, /[ \t]+/)
          if (n > 1 && w[1] !~ /^#/ && w[2] == "wrong:") { r = l; sub(/^[^ \t]+[ \t]+/, "", r); wrong[w[1]] = r }
        }
      }
      $4 >= 124 { printf "conf_gaps: %s (%s): kgen crashed or timed out (status %d), not listed\n", $1, $3, $4 > "/dev/stderr"; next }
      $4 != 0 && !($1 in why) {
        r = $5
        sub(/^kgen: error: [^ ]*\/model\.onnx: /, "", r)
        why[$1] = r
      }
      $4 == 0 && ($1 in wrong) { ok[$1] = 1 }
      END {
        for (n in why) printf "%-56s %s\n", n, why[n]
        for (n in wrong) if ((n in ok) && !(n in why)) printf "%-56s %s\n", n, wrong[n]
      }' | sort
} > "$out.tmp" && mv "$out.tmp" "$out"
echo "conf_gaps: $(grep -vc '^#' "$out") tests in $out"
