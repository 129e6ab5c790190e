#!/usr/bin/env bash
# browser.sh - the browser demo (examples/web) in a real browser: builds the demo's models
# (examples/web/build.sh: small_cnn for js, wasm and wasm -simd), serves the page from
# 127.0.0.1 (examples/web/serve.mjs, a free port), and headless Chromium driven by
# playwright-core (tests/browser/check.mjs; `npm ci` installs it into node_modules when
# missing) runs the model in every target on tests/models/small_cnn/input_0.npy. Each
# target's output must match output_0.npy (npycmp, rtol 1e-3, atol 1e-4: models.sh's
# rule), and the page's controls (a drawn stroke, an uploaded picture) must show a result.
# The screenshot goes to out/browser/demo.png (git-ignored).
# A missing chromium, npm or emcc is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Ends with
# "browser: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
out=$BUILD/browser
model=tests/models/small_cnn
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
command -v emcc > /dev/null 2>&1 || missing "browser: emcc not found: the page is tested with JavaScript only"
if [ ! -f node_modules/playwright-core/package.json ]; then
  if ! command -v npm > /dev/null 2>&1; then missing "browser: npm not found (needed once, for playwright-core)"; finish; fi
  npm ci --no-audit --no-fund --ignore-scripts > $out/npm.log 2>&1 ||
    { bad "browser: npm ci failed: $(tail -1 $out/npm.log)"; finish; }
fi
$CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm || { bad "browser: cannot build npycmp"; finish; }
KGEN=$KGEN bash examples/web/build.sh $out/models $model > $out/build.log 2>&1 ||
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
timeout 300 node tests/browser/check.mjs "$url" $model/input_0.npy $out/results out/browser/demo.png > $out/check.log 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
grep '^FAIL' $out/check.log | while IFS= read -r line; do echo "$line"; done
fail=$((fail + $(grep -c '^FAIL' $out/check.log)))
[ $rc -eq 0 ] || grep -q '^FAIL' $out/check.log || bad "browser: the driver exited with $rc: $(tail -1 $out/check.log)"
for t in $(sed -n 's/^targets: //p' $out/check.log); do
  if [ ! -f $out/results/$t/output_0.npy ]; then
    bad "browser ($t): no output"; continue
  fi
  if cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $model/output_0.npy $out/results/$t/output_0.npy 2>&1); then
    echo "    small_cnn in chromium ($t): $(printf '%s\n' "$cmp" | tail -1), $(sed -n "s/^ok $t ms=\([0-9.]*\).*/\1/p" $out/check.log) ms per inference"
    ok
  else
    bad "browser ($t): output differs from the reference: $(printf '%s\n' "$cmp" | tail -1)"
  fi
  grep -q "^ok $t (controls)" $out/check.log && ok
done
[ -f out/browser/demo.png ] && echo "    screenshot: out/browser/demo.png (browser start, page and checks: ${ms} ms)"
finish
