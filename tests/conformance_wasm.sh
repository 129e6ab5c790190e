#!/usr/bin/env bash
# conformance_wasm.sh - every ONNX node test (both folders of tests/data, tests/conf_tests.sh)
# through kgen's WebAssembly target, built by emcc and run under node, as SIMD128 (what
# --target wasm builds: "conformance-wasm-simd") and scalar (--target "wasm -nosimd":
# "conformance-wasm"), judged like tests/conformance.sh:
#  1. kgen DIR/model.onnx --target wasm --bind-inputs DIR/test_data_set_0, two jobs at a time
#     (tests/conf_gen.sh, shared with the other conformance runs under tests/run.sh;
#     `wasm -nosimd` writes the same C, only its Makefile lacks -msimd128). A non-zero exit is
#     "unsupported" (a known gap from tests/conformance_gaps.txt counts as skipped), a crash
#     or a timeout a failure.
#  2. The models are batched like conformance.sh does (BATCH per batch; names where one is
#     the other plus "_..." go to different batches, so the exported NAME functions and the
#     NAME_... symbols cannot clash), and each batch is ONE .wasm: a unity .c that #includes
#     every model's NAME.c and NAME_weights.c, one `emcc -O1 -sSTANDALONE_WASM=1 --no-entry
#     -sALLOW_MEMORY_GROWTH=1 -sEXPORTED_FUNCTIONS=_NAME...,_malloc` (-msimd128 added for
#     SIMD). A batch that does not build drops the models the errors name (they fail with
#     emcc's first error), or else is split in halves, recursively.
#  3. One node process per batch (tests/js/conf_driver.mjs, the comparison rule of the C
#     driver) imports each model's NAME.mjs loader and calls init() with the batch's .wasm
#     bytes; a model whose process died or hung is run again alone.
# kgen runs once for both variants (the C is the same; only -msimd128 and the micro-kernels'
# plain-loop fallbacks differ); each variant is an emcc link and a node run per batch.
# SIMD128, what --target wasm builds, runs every test; scalar wasm (-nosimd) a deterministic
# subset, 1 test in KGEN_CONF_WASM_SCALAR_EVERY (3: the 1st, 4th, 7th, ... of the MANIFEST
# order), which saves about a third of this part's CPU time in make test; 1 runs it on all.
# KGEN_CONF_WASM_SIMD_EVERY=N likewise thins the SIMD variant (1, every test, by default).
# Batches of 200, not 100: each emcc start costs about 2 s of CPU before it compiles anything.
# Tests with the dtypes conformance.sh skips are skipped. Prints FAIL/UNSUPPORTED lines and
# "conformance-wasm: N passed, N failed, N skipped" and "conformance-wasm-simd: ...";
# results-wasm.tsv and results-wasm-simd.tsv in $BUILD/conf_wasm.
# Missing emcc or node: SKIP (FAIL with KGEN_REQUIRE_ALL=1). Debian's emcc needs
# NODE_PATH=/usr/share/nodejs (set here unless given).
# Environment: KGEN, BUILD, EMCC (emcc), KGEN_ONNX_TESTS, KGEN_ONNX_TESTS_MORE (empty: the first
# folder only), KGEN_REQUIRE_ALL=1,
# KGEN_CONF_ONLY=REGEX, KGEN_CONF_WASM_BATCH (200), KGEN_CONF_WASM_SIMD_EVERY (1), KGEN_CONF_WASM_SCALAR_EVERY (3).
set -u
export LC_ALL=C
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
EMCC=${EMCC:-emcc}
ONLY=${KGEN_CONF_ONLY:-}
BATCH=${KGEN_CONF_WASM_BATCH:-200}
SIMD_EVERY=${KGEN_CONF_WASM_SIMD_EVERY:-1}
SCALAR_EVERY=${KGEN_CONF_WASM_SCALAR_EVERY:-3}
JOBS=2
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
here=$(cd "$(dirname "$0")" && pwd)

skip_or_fail() {
  local v
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
    for v in conformance-wasm conformance-wasm-simd; do
      echo "FAIL $v: $1 (KGEN_REQUIRE_ALL=1)"; echo "$v: 0 passed, 1 failed, 0 skipped"
    done
    exit 1
  fi
  for v in conformance-wasm conformance-wasm-simd; do
    echo "SKIP $v: $1"; echo "$v: 0 passed, 0 failed, 1 skipped"
  done
  exit 0
}
. "$here/conf_tests.sh"
conf_dirs
missing=$(conf_missing)
[ -z "$missing" ] || skip_or_fail "$missing not found"
command -v node >/dev/null 2>&1 || skip_or_fail "node not found"
command -v "$EMCC" >/dev/null 2>&1 || skip_or_fail "$EMCC not found (Debian: apt-get install emscripten)"
if [ ! -x "$KGEN" ]; then
  echo "FAIL conformance-wasm: $KGEN is not an executable (run make first)"
  echo "conformance-wasm: 0 passed, 1 failed, 0 skipped"; echo "conformance-wasm-simd: 0 passed, 1 failed, 0 skipped"
  exit 1
fi

mkdir -p "$BUILD"
if command -v flock >/dev/null 2>&1; then
  exec 9> "$BUILD/conf_wasm.lock"
  if ! flock -n 9; then
    echo "conformance_wasm: waiting for another run on $BUILD to end" >&2
    flock 9
  fi
fi
work=$(cd "$BUILD" && pwd)/conf_wasm
rm -rf "$work"
mkdir -p "$work/res"
# the test folders as one: $work/tests/MANIFEST.tsv and $work/tests/NAME
conf_view "$work/tests"
tests_abs=$work/tests
cp "$KGEN" "$work/kgen.bin"
t_start=$SECONDS

# list.tsv: name, C name, op, the skipped dtypes ("-" when it runs), 1 when SIMD runs it,
# 1 when scalar wasm runs it
awk -F'\t' -v only="$ONLY" -v every="$SIMD_EVERY" -v scalar="$SCALAR_EVERY" -v skipre="${KGEN_CONF_SKIP:-^(STRING)$}" '
  NR == 1 { next }
  only != "" && $1 !~ only { next }
  {
    skip = ""
    n = split($4 "," $5, ty, ",")
    for (i = 1; i <= n; i++)
      if (ty[i] ~ skipre && index("," skip ",", "," ty[i] ",") == 0)
        skip = skip (skip == "" ? "" : ",") ty[i]
    c = $1
    gsub(/[^A-Za-z0-9_]/, "_", c)
    if (c !~ /^[A-Za-z_]/) c = "t_" c
    while (c in used) c = c "_"
    used[c] = 1
    print $1 "\t" c "\t" $2 "\t" (skip == "" ? "-" : skip) "\t" (k % every == 0 ? 1 : 0) "\t" (k % scalar == 0 ? 1 : 0)
    k++
  }' "$tests_abs/MANIFEST.tsv" > "$work/list.tsv"

# ---------------------------------------------------------------- 1. kgen
# step 1: tests/conf_gen.sh (see conformance.sh): test NAME (C name C) in $work/C, or in
# $KGEN_CONF_GEN/C/wasm when tests/run.sh made it there
if [ -n "${KGEN_CONF_GEN:-}" ] && [[ " ${KGEN_CONF_GEN_TARGETS:-} " == *" wasm "* ]] &&
   [ "${KGEN_CONF_GEN_KGEN:-}" = "$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")" ]; then
  gen=$KGEN_CONF_GEN msub=/wasm gen_targets=$KGEN_CONF_GEN_TARGETS
else
  gen=$work msub= gen_targets=wasm
fi
awk -F'\t' '$4 == "-" { print $1 "\t" $2 }' "$work/list.tsv" |
  bash "$here/conf_gen.sh" "$gen" "$work/kgen.bin" "$tests_abs" $gen_targets
gen=$(cd "$gen" && pwd)

cat "$gen"/status.*.tsv > "$work/kgen-status.tsv" 2>/dev/null
awk -F'\t' -v gen="$gen" -v msub="$msub" -v ok="$work/ok.txt" '
  function exists(f) { if ((getline line < f) < 0) return 0; close(f); return 1 }
  FILENAME == ARGV[1] { if ($3 == "wasm") { rc[$1] = $4; first[$1] = $5 } next }
  $4 != "-" { next }
  {
    name = $1; c = $2
    r = (name in rc) ? rc[name] + 0 : 255
    f = first[name]
    d = gen "/" c msub "/" c
    if (r == 0 && exists(d ".c") && exists(d ".mjs")) print name "\t" c > ok
    else if (r == 0) printf "%s\tFAIL\tkgen exited 0 but wrote no %s.c or %s.mjs\n", name, c, c
    else if (r == 124) printf "%s\tFAIL\tkgen timed out after 120 s\n", name
    else if (r >= 126) printf "%s\tFAIL\tkgen crashed or could not run (status %d)%s\n", name, r, (f == "" ? "" : ": " f)
    else printf "%s\tUNSUPPORTED\t%s\n", name, (f == "" ? "kgen exit status " r ", no message" : f)
  }' "$work/kgen-status.tsv" "$work/list.tsv" > "$work/res/kgen.tsv"
: >> "$work/ok.txt"
t_kgen=$SECONDS

# ---------------------------------------------------------------- 2. batches
# conformance.sh's grouping: no name in a batch is another one's prefix followed by "_"
awk -F'\t' -v max=$BATCH -f "$here/conf_batches.awk" "$work/ok.txt" > "$work/batches.tsv"

declare -A cname
while IFS=$'\t' read -r name c; do cname[$name]=$c; done < "$work/ok.txt"
# messages name a model's files as C/FILE, and the run's as PATH under $work
unpath="s|^$gen/\([^/]*\)$msub/|\1/|; s|^$work/||"
unpath_g="s|$gen/\([^/]*\)$msub/|\1/|g; s|$work/||g"

# build DIR FLAGS NAME...: DIR/batch.wasm with these models; DIR.built lists the built
# .wasm files with their models (wasm <TAB> name), DIR.res the models that fail to build.
build() {
  local dir=$1 flags=$2; shift 2
  local name c exports=_malloc log=$dir.emcc.log
  mkdir -p "$dir"
  for name in "$@"; do
    c=${cname[$name]}
    echo "#include \"$gen/$c$msub/$c.c\""
    [ -f "$gen/$c$msub/${c}_weights.c" ] && echo "#include \"$gen/$c$msub/${c}_weights.c\""
    exports="$exports,_$c"
  done > "$dir/unity.c"
  if "$EMCC" -O1 -w $flags -sSTANDALONE_WASM=1 --no-entry -sALLOW_MEMORY_GROWTH=1 \
       "-sEXPORTED_FUNCTIONS=$exports" -o "$dir/batch.wasm" "$dir/unity.c" > "$log" 2>&1; then
    for name in "$@"; do printf '%s\t%s\n' "$dir/batch.wasm" "$name"; done >> "$dir.built"
    return 0
  fi
  # errors inside a model's own files name it
  local bad=() keep=()
  for name in "$@"; do
    c=${cname[$name]}
    if grep -q "^$gen/$c$msub/[^:]*:[0-9]*:[0-9:]* error:" "$log"; then bad+=("$name"); else keep+=("$name"); fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    for name in "${bad[@]}"; do
      c=${cname[$name]}
      printf '%s\tFAIL\temcc: does not compile: %s\n' "$name" \
        "$(grep -m1 "^$gen/$c$msub/[^:]*:[0-9]*:[0-9:]* error:" "$log" | sed "$unpath" | tr '\t' ' ' | cut -c1-300)" >> "$dir.res"
    done
    if [ ${#keep[@]} -gt 0 ]; then
      build "${dir}r" "$flags" "${keep[@]}"
      cat "${dir}r.built" >> "$dir.built" 2>/dev/null
      cat "${dir}r.res" >> "$dir.res" 2>/dev/null
    fi
    return 0
  fi
  if [ $# -eq 1 ]; then
    printf '%s\tFAIL\temcc: does not build: %s\n' "$1" \
      "$(grep -m1 -E 'error|undefined|duplicate symbol' "$log" | sed "$unpath_g" | tr '\t' ' ' | cut -c1-300)" >> "$dir.res"
    return 0
  fi
  local half=$(($# / 2))
  build "${dir}a" "$flags" "${@:1:half}"
  build "${dir}b" "$flags" "${@:half+1}"
  cat "${dir}a.built" "${dir}b.built" >> "$dir.built" 2>/dev/null
  cat "${dir}a.res" "${dir}b.res" >> "$dir.res" 2>/dev/null
  return 0
}

drv=$here/js/conf_driver.mjs io=$here/../templates/kgen_io.mjs rtm=$here/../templates/kgen_runtime.mjs
# variant B V FLAGS NAME...: build and run batch B's models as variant V (wasm, wasm-simd);
# name/status/reason rows land in res/V.B.tsv
variant() {
  local b=$1 v=$2 flags=$3; shift 3
  local dir=$work/$v.b$b name c wasm
  : > "$dir.built"; : > "$dir.res"
  [ $# -gt 0 ] || { : > "$work/res/$v.b$b.tsv"; return; }
  build "$dir" "$flags" "$@"
  while IFS=$'\t' read -r wasm name; do
    c=${cname[$name]}
    printf '%s\t%s\t%s\t%s\n' "$name" "$gen/$c$msub/$c.mjs" "$tests_abs/$name/test_data_set_0" "$wasm"
  done < "$dir.built" > "$dir.run"
  timeout 300 node "$drv" "$dir.run" "$io" "$rtm" > "$dir.verdicts" 2> "$dir.node.err"
  # a model without a verdict (its process died or hung) runs again alone
  awk -F'\t' 'NR == FNR { if (/^(PASS|FAIL) /) { n = substr($0, 6); sub(/:.*/, "", n); got[n] = 1 } next }
    !($1 in got)' "$dir.verdicts" "$dir.run" > "$dir.again"
  while IFS=$'\t' read -r name rest; do
    printf '%s\t%s\n' "$name" "$rest" > "$dir.alone"
    local out
    out=$(timeout 60 node "$drv" "$dir.alone" "$io" "$rtm" 2>&1 | tail -1)
    case "$out" in
      PASS*|FAIL*) echo "$out" >> "$dir.verdicts" ;;
      *) echo "FAIL $name: node died or timed out: $out" >> "$dir.verdicts" ;;
    esac
  done < "$dir.again"
  {
    cat "$dir.res"
    sed -n -e 's/^PASS \([^ ]*\)$/\1\tPASS\t/p' -e 's/^FAIL \([^:]*\): \(.*\)$/\1\tFAIL\t\2/p' "$dir.verdicts"
  } > "$work/res/$v.b$b.tsv"
}

batch() {
  local b=$1 names=() simd=()
  mapfile -t names < <(awk -F'\t' -v b="$b" 'NR == FNR { if ($6 == 1) s[$1] = 1; next } $1 == b && ($2 in s) { print $2 }' \
    "$work/list.tsv" "$work/batches.tsv")
  mapfile -t simd < <(awk -F'\t' -v b="$b" 'NR == FNR { if ($5 == 1) s[$1] = 1; next } $1 == b && ($2 in s) { print $2 }' \
    "$work/list.tsv" "$work/batches.tsv")
  variant "$b" wasm "" "${names[@]}"
  variant "$b" wasm-simd "-msimd128" "${simd[@]}"
}

nbatches=$(awk -F'\t' 'BEGIN { n = 0 } $1 + 1 > n { n = $1 + 1 } END { print n }' "$work/batches.tsv")
running=0
for ((b = 0; b < nbatches; b++)); do
  batch $b &
  running=$((running + 1))
  if [ $running -ge $JOBS ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
t_end=$SECONDS

# ---------------------------------------------------------------- report
gaps=$work/gaps.txt   # the known gaps, and what only the C target supports yet
cat $here/conformance_gaps.txt $here/conformance_gaps_c_only.txt > "$gaps"
rc=0
for v in wasm wasm-simd; do
  cat "$work/res/kgen.tsv" "$work"/res/$v.b*.tsv > "$work/res.$v" 2>/dev/null
  awk -F'\t' -v OFS='\t' -v v=$v '
    FILENAME == ARGV[1] { st[$1] = $2; why[$1] = $3; next }
    v == "wasm-simd" && $5 != 1 { next }
    v == "wasm" && $6 != 1 { next }
    {
      name = $1; op = $3; skip = $4
      if (skip != "-") { s = "SKIP"; r = skip }
      else if (name in st) { s = st[name]; r = why[name] }
      else { s = "FAIL"; r = "no result (the batch was killed?)" }
      print name, op, s, r
    }' "$work/res.$v" "$work/list.tsv" > "$work/results-$v.tsv"
  awk -F'\t' -v gapfile="$gaps" -v part="conformance-$v" -v v=$v '
    BEGIN { while ((getline l < gapfile) > 0) { k = split(l, g, /[ \t]+/); if (g[1] !~ /^#/ && g[1] != "") gap[g[1]] = (k > 1 && g[2] == "wrong:") ? 2 : 1 } }
    $3 == "PASS" { np++ }
    $3 == "PASS" && ($1 in gap) { print "GAP CLOSED " $1 " (" v "): passes now; remove it from tests/conformance_gaps.txt" }
    $3 == "SKIP" { ns++ }
    $3 == "UNSUPPORTED" && ($1 in gap) { ns++; next }
    $3 == "UNSUPPORTED" { nf++; print "UNSUPPORTED " $1 " (" v "): " $4; next }
    $3 == "FAIL" && gap[$1] == 2 { ns++; print "KNOWN FAIL " $1 " (" v "): " $4; next }
    $3 == "FAIL" { nf++; print "FAIL " $1 " (" v "): " $4 }
    END { printf "(%s: pass rate %.1f%% of the tests that ran)\n", v, 100 * np / ((np + nf) ? np + nf : 1)
          printf "%s: %d passed, %d failed, %d skipped\n", part, np, nf, ns
          exit nf > 0 }
  ' "$work/results-$v.tsv" || rc=1
done
echo "conformance_wasm time: kgen $((t_kgen - t_start)) s, emcc and node $((t_end - t_kgen)) s ($nbatches batches of at most $BATCH; SIMD on 1 test in $SIMD_EVERY, scalar on 1 in $SCALAR_EVERY)"
exit $rc
