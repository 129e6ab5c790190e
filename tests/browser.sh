#!/usr/bin/env bash
# browser.sh - the browser demo (examples/web: the trained digit CNN of tests/models/digits)
# in a real browser: builds the demo's models (examples/web/build.sh: js, wasm SIMD128 and,
# when kgen has the target, webgpu), serves the page from 127.0.0.1 (examples/web/serve.mjs,
# a free port), and headless Chromium driven by playwright-core (tests/browser/check.mjs;
# `npm ci` installs it into node_modules when missing; WebGPU through
# --enable-unsafe-webgpu, SwiftShader here) reads held-out digits and drawn ones on every
# target the page runs. Checks per target: the held-out digits' logits match torch's
# (heldout_logits.npy; npycmp, rtol 1e-3, atol 1e-4: models.sh's rule) and read as their
# labels, fed directly and through the page's own preprocessing of the canvas; the
# canvas logits agree with the first target's (npycmp, the same rule); digits drawn with
# the mouse read as drawn. The screenshot goes to out/browser/demo.png (git-ignored).
# A missing chromium, npm or emcc, or a WebGPU column the page cannot offer (kgen without
# --target webgpu, no adapter), is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Ends with
# "browser: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
out=$BUILD/browser
model=tests/models/digits
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}
finish() { echo "browser: $pass passed, $fail failed, $skip skipped"; [ $fail -eq 0 ]; exit; }

rm -rf $out
mkdir -p $out
command -v node > /dev/null 2>&1 || { missing "browser: node not found"; finish; }
[ -x "$CHROMIUM" ] || command -v "$CHROMIUM" > /dev/null 2>&1 || { missing "browser: chromium not found (apt-get install chromium)"; finish; }
if [ ! -f node_modules/playwright-core/package.json ]; then
  if ! command -v npm > /dev/null 2>&1; then missing "browser: npm not found (needed once, for playwright-core)"; finish; fi
  npm ci --no-audit --no-fund --ignore-scripts > $out/npm.log 2>&1 ||
    { bad "browser: npm ci failed: $(tail -1 $out/npm.log)"; finish; }
fi
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || { bad "browser: cannot build npycmp"; finish; }
KGEN=$KGEN bash examples/web/build.sh $out/models > $out/build.log 2>&1 ||
  { bad "browser: the demo's build failed: $(grep -m1 -i error $out/build.log)"; finish; }

# the server prints its URL once listening; port 0 picks a free one
node examples/web/serve.mjs --port 0 examples/web /models=$out/models > $out/serve.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
url=
for _ in $(seq 50); do
  url=$(sed -n 's/^serving \(http[^ ]*\)$/\1/p' $out/serve.log)
  [ -n "$url" ] && break
  kill -0 $server 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { bad "browser: the server did not start: $(head -1 $out/serve.log)"; finish; }

t0=$(date +%s%N)
rm -f out/browser/demo.png
timeout 300 node tests/browser/check.mjs "$url" $model $out/results out/browser/demo.png > $out/check.log 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
grep '^FAIL' $out/check.log | while IFS= read -r line; do echo "$line"; done
fail=$((fail + $(grep -c '^FAIL' $out/check.log)))
[ $rc -eq 0 ] || grep -q '^FAIL' $out/check.log || bad "browser: the driver exited with $rc: $(tail -1 $out/check.log)"
sed -n 's/^unavailable \([^:]*\): \(.*\)/\1 \2/p' $out/check.log | while read -r t why; do
  echo "    $t: unavailable: $why"
done
for t in $(sed -n 's/^unavailable \([^:]*\):.*/\1/p' $out/check.log); do missing "browser ($t): the page cannot run it"; done
targets=$(sed -n 's/^targets: //p' $out/check.log)
first=${targets%% *}
for t in $targets; do
  time=$(sed -n "s/^time $t ms=\([0-9.]*\).*/\1/p" $out/check.log)
  dev=$(sed -n "s/^time $t .*device_ms=\([0-9.]*\).*/, device time \1 ms/p" $out/check.log)
  note=$(sed -n "s/^time $t .* note=\(.*\)/ (\1)/p" $out/check.log)
  if [ ! -f $out/results/$t/heldout_logits.npy ]; then
    bad "browser ($t): no logits"; continue
  fi
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $model/heldout_logits.npy $out/results/$t/heldout_logits.npy 2>&1); then
    echo "    digits in chromium ($t): held-out logits vs torch: $(printf '%s\n' "$cmp" | tail -1), ${time:-?} ms per inference$dev$note"
    ok
  else
    bad "browser ($t): held-out logits differ from torch's: $(printf '%s\n' "$cmp" | tail -1)"
  fi
  if [ $t != "$first" ]; then
    if [ ! -f $out/results/$t/canvas_logits.npy ] || [ ! -f $out/results/$first/canvas_logits.npy ]; then
      bad "browser ($t): no canvas logits"
    elif cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $out/results/$first/canvas_logits.npy $out/results/$t/canvas_logits.npy 2>&1); then
      echo "    digits in chromium ($t): canvas logits vs $first: $(printf '%s\n' "$cmp" | tail -1)"
      ok
    else
      bad "browser ($t): canvas logits differ from $first's: $(printf '%s\n' "$cmp" | tail -1)"
    fi
  fi
  for part in direct canvas drawn; do
    line=$(grep -m1 "^ok $t $part:" $out/check.log) && { echo "    ${line#ok }"; ok; }
  done
done
line=$(grep -m1 '^ok upload:' $out/check.log) && { echo "    ${line#ok }"; ok; }
[ -f out/browser/demo.png ] && echo "    screenshot: out/browser/demo.png (browser start, page and checks: ${ms} ms)"
finish
