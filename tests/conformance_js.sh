#!/usr/bin/env bash
# conformance_js.sh - every ONNX node test (both folders of tests/data, tests/conf_tests.sh)
# through kgen's JavaScript target and node, judged like tests/conformance.sh:
#  1. kgen DIR/model.onnx --target js --bind-inputs DIR/test_data_set_0, two jobs at a time
#     (tests/conf_gen.sh, shared with the other conformance runs under tests/run.sh);
#     a non-zero exit is "unsupported" (a known gap from tests/conformance_gaps.txt counts as
#     skipped), a crash or timeout a failure;
#  2. the generated modules are run in batches of BATCH per node process
#     (tests/js/conf_driver.mjs: same comparison rule as the C driver); a model whose batch
#     died or hung is run again alone, so one bad model fails alone.
# Tests with the dtypes conformance.sh skips are skipped. Prints FAIL/UNSUPPORTED lines and
# "conformance_js: N passed, N failed, N skipped"; results.tsv in $BUILD/conf_js.
# Environment: KGEN, BUILD, KGEN_ONNX_TESTS, KGEN_ONNX_TESTS_MORE (empty: the first folder
# only), KGEN_REQUIRE_ALL=1, KGEN_CONF_ONLY=REGEX,
# KGEN_CONF_JS_BATCH (100), KGEN_CONF_JS_TARGET (js; webgpu: tests/conformance_webgpu.sh),
# KGEN_CONF_JS_PART (the part's name, conformance_js), KGEN_CONF_GAPS_MORE (a second gap
# file in the same format, for what one target refuses by design).
set -u
export LC_ALL=C
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
ONLY=${KGEN_CONF_ONLY:-}
BATCH=${KGEN_CONF_JS_BATCH:-100}
JOBS=2
part=${KGEN_CONF_JS_PART:-conformance_js}
jst=${KGEN_CONF_JS_TARGET:-js}
here=$(cd "$(dirname "$0")" && pwd)

skip_or_fail() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
    echo "FAIL $part: $1 (KGEN_REQUIRE_ALL=1)"; echo "$part: 0 passed, 1 failed, 0 skipped"; exit 1
  fi
  echo "SKIP $part: $1"; echo "$part: 0 passed, 0 failed, 1 skipped"; exit 0
}
. "$here/conf_tests.sh"
conf_dirs
missing=$(conf_missing)
[ -z "$missing" ] || skip_or_fail "$missing not found"
command -v node >/dev/null 2>&1 || skip_or_fail "node not found"

work=$(mkdir -p "$BUILD" && cd "$BUILD" && pwd)/conf_$jst
rm -rf "$work"
mkdir -p "$work"
# the test folders as one: $work/tests/MANIFEST.tsv and $work/tests/NAME
conf_view "$work/tests"
tests_abs=$work/tests
cp "$KGEN" "$work/kgen.bin"

awk -F'\t' -v only="$ONLY" -v skipre="${KGEN_CONF_SKIP:-^(STRING)$}" '
  NR == 1 { next }
  only != "" && $1 !~ only { next }
  {
    skip = ""
    n = split($4 "," $5, ty, ",")
    for (i = 1; i <= n; i++) if (ty[i] ~ skipre) skip = ty[i]
    c = $1
    gsub(/[^A-Za-z0-9_]/, "_", c)
    if (c !~ /^[A-Za-z_]/) c = "t_" c
    while (c in used) c = c "_"
    used[c] = 1
    print $1 "\t" c "\t" $2 "\t" (skip == "" ? "-" : skip)
  }' "$tests_abs/MANIFEST.tsv" > "$work/list.tsv"

# step 1: tests/conf_gen.sh (see conformance.sh): test NAME (C name C) in $work/C, or in
# $KGEN_CONF_GEN/C/js when tests/run.sh made it there
if [ -n "${KGEN_CONF_GEN:-}" ] && [ "$jst" = js ] && [[ " ${KGEN_CONF_GEN_TARGETS:-} " == *" js "* ]] &&
   [ "${KGEN_CONF_GEN_KGEN:-}" = "$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")" ]; then
  gen=$KGEN_CONF_GEN msub=/js gen_targets=($KGEN_CONF_GEN_TARGETS)
else
  gen=$work msub= gen_targets=("$jst")
fi
awk -F'\t' '$4 == "-" { print $1 "\t" $2 }' "$work/list.tsv" |
  bash "$here/conf_gen.sh" "$gen" "$work/kgen.bin" "$tests_abs" "${gen_targets[@]}"
gen=$(cd "$gen" && pwd)

cat "$gen"/status.*.tsv > "$work/kgen-status.tsv" 2>/dev/null
: > "$work/run.txt"
awk -F'\t' -v t="$jst" -v gen="$gen" -v msub="$msub" -v tests="$tests_abs" -v run="$work/run.txt" '
  FILENAME == ARGV[1] { if ($3 == t) { rc[$1] = $4; first[$1] = $5 } next }
  $4 != "-" { printf "%s\t%s\tSKIP\tdtype %s\n", $1, $3, $4; next }
  {
    name = $1; c = $2
    r = (name in rc) ? rc[name] + 0 : 255
    mjs = gen "/" c msub "/" c ".mjs"
    if (r == 0 && (getline line < mjs) >= 0) { close(mjs); print name "\t" mjs "\t" tests "/" name "/test_data_set_0" > run }
    else if (r >= 124) printf "%s\t%s\tFAIL\tkgen crashed or timed out (status %d)\n", name, $3, r
    else printf "%s\t%s\tUNSUPPORTED\t%s\n", name, $3, first[name]
  }' "$work/kgen-status.tsv" "$work/list.tsv" > "$work/kgen.tsv"

# batches; a model without a verdict (its process died) runs again alone
split -l "$BATCH" -d -a 3 "$work/run.txt" "$work/batch."
drv=$here/js/conf_driver.mjs io=$here/../templates/kgen_io.mjs rtm=$here/../templates/kgen_runtime.mjs
: > "$work/verdicts.txt"
for b in "$work"/batch.*; do
  [ -f "$b" ] || continue
  timeout 300 node "$drv" "$b" "$io" "$rtm" >> "$work/verdicts.txt" 2> "$b.err"
done
awk -F'\t' 'NR == FNR { if (/^(PASS|FAIL) /) { n = substr($0, 6); sub(/:.*/, "", n); got[n] = 1 } next }
  !($1 in got)' "$work/verdicts.txt" "$work/run.txt" > "$work/again.txt"
while IFS=$'\t' read -r name mod data; do
  printf '%s\t%s\t%s\n' "$name" "$mod" "$data" > "$work/alone.txt"
  out=$(timeout 30 node "$drv" "$work/alone.txt" "$io" "$rtm" 2>&1 | tail -1)
  case "$out" in
    PASS*|FAIL*) echo "$out" >> "$work/verdicts.txt" ;;
    *) echo "FAIL $name: node died or timed out: $out" >> "$work/verdicts.txt" ;;
  esac
done < "$work/again.txt"

gaps=$work/gaps.txt   # the known gaps, and what only the C target supports yet
cat $here/conformance_gaps.txt $here/conformance_gaps_c_only.txt > "$gaps"
more_gaps=${KGEN_CONF_GAPS_MORE:-/dev/null}
awk -F'\t' -v gapfile="$gaps" -v moregaps="$more_gaps" '
  BEGIN { for (f = 1; f <= 2; f++) { file = f == 1 ? gapfile : moregaps
            while ((getline l < file) > 0) { k = split(l, g, /[ \t]+/); if (g[1] !~ /^#/ && g[1] != "") gap[g[1]] = (k > 1 && g[2] == "wrong:") ? 2 : 1 } } }
  FILENAME ~ /list.tsv$/ { op[$1] = $3; next }
  FILENAME ~ /kgen.tsv$/ { print; next }
  /^PASS / { n = substr($0, 6); print n "\t" op[n] "\tPASS"; next }
  /^FAIL / { n = substr($0, 6); sub(/: .*/, "", n); r = $0; sub(/^FAIL [^:]*: /, "", r); print n "\t" op[n] "\tFAIL\t" r }
' "$work/list.tsv" "$work/kgen.tsv" "$work/verdicts.txt" > "$work/results.tsv"
awk -F'\t' -v gapfile="$gaps" -v moregaps="$more_gaps" '
  BEGIN { for (f = 1; f <= 2; f++) { file = f == 1 ? gapfile : moregaps
            while ((getline l < file) > 0) { k = split(l, g, /[ \t]+/); if (g[1] !~ /^#/ && g[1] != "") gap[g[1]] = (k > 1 && g[2] == "wrong:") ? 2 : 1 } } }
  $3 == "PASS" { np++ }
  $3 == "PASS" && ($1 in gap) { print "GAP CLOSED " $1 ": passes now; remove it from tests/conformance_gaps.txt" }
  $3 == "SKIP" { ns++ }
  $3 == "UNSUPPORTED" && ($1 in gap) { ns++; next }
  $3 == "UNSUPPORTED" { nf++; print "UNSUPPORTED " $1 ": " $4; next }
  $3 == "FAIL" && gap[$1] == 2 { ns++; print "KNOWN FAIL " $1 ": " $4; next }
  $3 == "FAIL" { nf++; print "FAIL " $1 ": " $4 }
  END { printf "(pass rate %.1f%% of the tests that ran)\n", 100 * np / ((np + nf) ? np + nf : 1)
        printf "%s: %d passed, %d failed, %d skipped\n", part, np, nf, ns }
' part="$part" "$work/results.tsv"
