#!/usr/bin/env bash
# webgpu.sh - the webgpu target run for real, in node through Dawn (npm `webgpu`) on the
# SwiftShader Vulkan driver that Debian's chromium package bundles (no GPU needed):
#   examples   every .kg example at two shapes (one not dividing the workgroup size), its
#              kernel module against the JS target's on the same random inputs
#              (tests/webgpu/kernel_check.mjs; tests/js.sh checks JS against C);
#   models     every committed real model (tests/models/*) and published-style model
#              (tests/published/*, with their run-time Ifs and Loops and every data set)
#              through the generated runner NAME_main.mjs, each output against the
#              reference (npycmp, rtol 1e-3, atol 1e-4: models.sh's rule);
#   runner     --info and --bench (device_ms is printed; SwiftShader's times say nothing
#              about GPUs), an input of the wrong shape refused, two kgen runs identical,
#              i64 inputs narrowed to 32 bits and one that does not fit refused;
#   page       small_cnn's module in headless Chromium (navigator.gpu, SwiftShader with
#              --enable-unsafe-webgpu; tests/webgpu/page.mjs, playwright-core from npm ci).
# Dawn: the package's index.js at $KGEN_NODE_WEBGPU, else node_modules/webgpu (npm ci);
# the Vulkan driver: $VK_ICD_FILENAMES, else chromium's SwiftShader. A missing node, Dawn or
# driver is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1). Ends with
# "webgpu: N passed, N failed, N skipped". Run from the repository root (KGEN, BUILD, CC).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
work=$BUILD/webgpu
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL webgpu $1"; [ -f "${2:-}" ] && sed 's/^/    /' "$2" | head -12; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then echo "FAIL webgpu: $1 (KGEN_REQUIRE_ALL=1)"; fail=$((fail + 1))
  else echo "SKIP webgpu: $1"; skip=$((skip + 1)); fi
}
finish() { echo "webgpu: $pass passed, $fail failed, $skip skipped"; [ $fail = 0 ]; exit; }

# ---------------------------------------------------------------- node, Dawn, a driver

command -v node > /dev/null 2>&1 || { missing "node not found"; finish; }
dawn=${KGEN_NODE_WEBGPU:-$PWD/node_modules/webgpu/index.js}
[ -f "$dawn" ] || { missing "Dawn not found: npm ci (package.json's webgpu) or KGEN_NODE_WEBGPU=PATH/webgpu/index.js"; finish; }
export KGEN_NODE_WEBGPU=$(cd "$(dirname "$dawn")" && pwd)/$(basename "$dawn")
if [ -z "${VK_ICD_FILENAMES:-}" ]; then
  [ -f /usr/lib/chromium/vk_swiftshader_icd.json ] || { missing "no Vulkan driver: chromium's SwiftShader (apt-get install chromium) or VK_ICD_FILENAMES"; finish; }
  export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
  export LD_LIBRARY_PATH=/usr/lib/chromium${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
cat > $work/probe.mjs <<'EOF'
const m = await import(new URL(`file://${process.env.KGEN_NODE_WEBGPU}`).href);
const gpu = m.create([]);
const a = await gpu.requestAdapter();
if (!a) process.exit(1);
console.log(`${a.info.vendor} ${a.info.architecture}`);
process.exit(0);
EOF
adapter=$(timeout 60 node $work/probe.mjs 2> $work/probe.log) || { missing "Dawn found no adapter: $(head -c 200 $work/probe.log)"; finish; }
echo "    adapter: $adapter"
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $work/npycmp -lm 2> $work/npycmp.log; then
  bad "cannot build tests/models/npycmp.c" $work/npycmp.log; finish
fi

# ---------------------------------------------------------------- examples

cases=(
  "matmul|-DM=64 -DN=64 -DK=64"
  "matmul|-DM=20 -DN=37 -DK=30"
  "batch_matmul|-DBATCH=3 -DM=7 -DN=19 -DK=5"
  "batch_matmul|-DBATCH=2 -DM=32 -DN=16 -DK=48"
  "conv2d|-DC=8 -DH=12 -DW=12 -DF=8"
  "conv2d|-DC=6 -DH=11 -DW=13 -DF=10 -DS=2 -DP=2 -DD=2 -DG=2"
  "depthwise_conv2d|-DN=2 -DC=3 -DH=13 -DW=9 -DS=2 -DP=0"
  "depthwise_conv2d|-DN=1 -DC=8 -DH=16 -DW=16 -DS=1 -DP=1"
  "maxpool2d|-DC=3 -DH=8 -DW=11 -DK=2 -DS=2 -DP=0"
  "maxpool2d|-DC=4 -DH=9 -DW=9 -DK=3 -DS=1 -DP=1"
  "avgpool2d|-DN=2 -DC=3 -DH=7 -DW=10 -DK=3 -DS=1 -DP=1"
  "avgpool2d|-DN=1 -DC=4 -DH=16 -DW=16 -DK=2 -DS=2 -DP=0"
  "softmax|-DR=4 -DL=37"
  "softmax|-DR=16 -DL=256"
  "layernorm|-DR=5 -DL=48"
  "layernorm|-DR=3 -DL=300"
  "rnn|-DT=5 -DI=7 -DH=9"
  "rnn|-DT=3 -DI=16 -DH=32"
)
i=0
for c in "${cases[@]}"; do
  name=${c%%|*} defs=${c#*|}
  i=$((i + 1)); d=$work/ex$i
  [ -f examples/$name.kg ] || { bad "$name: examples/$name.kg missing"; continue; }
  # shellcheck disable=SC2086
  if ! $KGEN examples/$name.kg --target js $defs -o $d/js > $d.log 2>&1 ||
     ! $KGEN examples/$name.kg --target webgpu $defs -o $d/webgpu >> $d.log 2>&1; then
    bad "$name $defs: kgen failed" $d.log; continue
  fi
  if timeout 120 node tests/webgpu/kernel_check.mjs $d/js $d/webgpu $name > $d.run 2>&1; then
    ok; echo "    $(tail -1 $d.run) $defs"
  else
    bad "$name $defs" $d.run
  fi
done

# a grid above 65535 workgroups in x (folded into two rows)
d=$work/big_grid
if $KGEN tests/webgpu/big_grid.kg --target js -o $d/js > $d.log 2>&1 &&
   $KGEN tests/webgpu/big_grid.kg --target webgpu -o $d/webgpu >> $d.log 2>&1 &&
   grep -q 'grid: \[32769, 2, 1\]' $d/webgpu/big_grid.mjs &&
   timeout 300 node tests/webgpu/kernel_check.mjs $d/js $d/webgpu big_grid > $d.run 2>&1; then
  ok; echo "    $(tail -1 $d.run) (65537 workgroups as 32769 x 2)"
else
  bad "big_grid" $d.run
fi

# ---------------------------------------------------------------- models

# model DIR TAG: kgen DIR/model.onnx (with DIR/args) for webgpu --main, run every data set
model() {
  local src=$1 tag=$2 args="" d=$work/$2 ds r ins
  [ -f $src/args ] && args=$(cat $src/args)
  # shellcheck disable=SC2086
  if ! $KGEN $src/model.onnx --target webgpu --main -o $d --name $tag $args > $d.log 2>&1; then
    bad "$tag: kgen failed" $d.log; return
  fi
  for ds in $src $src/data_*; do
    [ -f $ds/input_0.npy ] || continue
    ins=$(ls $ds/input_*.npy | sort)
    rm -rf $d/out
    # shellcheck disable=SC2086
    if ! timeout 300 node $d/${tag}_main.mjs $ins -o $d/out > $d.run 2>&1; then
      bad "$tag ${ds#$src}: the runner failed" $d.run; continue
    fi
    r=0
    for o in $ds/output_*.npy; do
      if ! $work/npycmp --rtol 1e-3 --atol 1e-4 $o $d/out/$(basename $o) > $d.cmp 2>&1; then
        bad "$tag ${ds#$src} $(basename $o)" $d.cmp; r=1
      fi
    done
    [ $r = 0 ] && { ok; echo "    $tag${ds#$src}: $(tail -1 $d.cmp)"; }
  done
}
for m in tests/models/*/model.onnx tests/published/*/model.onnx; do
  [ -f "$m" ] || continue
  [ -f $(dirname $m)/dims ] && continue   # run-time dims (tests/dyn_js.sh)
  model $(dirname $m) $(basename $(dirname $m))
done

# ---------------------------------------------------------------- the runner

r=$work/small_cnn
if [ -f $r/small_cnn_main.mjs ]; then
  if node $r/small_cnn_main.mjs --info > $work/info.log 2>&1 && grep -q "input 0 'input': f32\[1, 1, 28, 28\]" $work/info.log; then ok
  else bad "runner --info" $work/info.log; fi
  if node $r/small_cnn_main.mjs --bench 3 tests/models/small_cnn/input_0.npy > $work/bench.log 2>&1 &&
     grep -q '^median_ms=[0-9.]* .*runs=3$' $work/bench.log && grep -q '^device_ms=[0-9.]*' $work/bench.log; then
    ok; echo "    small_cnn --bench 3 (SwiftShader: says nothing about GPUs): $(tr '\n' ' ' < $work/bench.log)"
  else bad "runner --bench" $work/bench.log; fi
  if node $r/small_cnn_main.mjs tests/models/conv1d_front/input_0.npy > $work/shape.log 2>&1; then
    bad "runner: an input of the wrong shape was accepted" $work/shape.log
  elif grep -q "expected f32\[1, 1, 28, 28\]" $work/shape.log; then ok
  else bad "runner: the wrong shape's message" $work/shape.log; fi
  if $KGEN tests/models/small_cnn/model.onnx --target webgpu --main -o $work/again --name small_cnn > /dev/null 2>&1 &&
     diff -r -x out $r $work/again > $work/again.diff 2>&1; then ok
  else bad "two kgen runs differ" $work/again.diff; fi
fi
# the module in a browser: headless Chromium's navigator.gpu (playwright-core from npm ci)
if [ -f $r/small_cnn.mjs ]; then
  if [ ! -f node_modules/playwright-core/package.json ]; then
    missing "page: playwright-core not in node_modules (npm ci)"
  elif [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    missing "page: chromium not found (apt-get install chromium)"
  elif timeout 180 node tests/webgpu/page.mjs $r small_cnn tests/models/small_cnn/input_0.npy \
       tests/models/small_cnn/output_0.npy > $work/page.log 2>&1; then
    ok; echo "    $(tail -1 $work/page.log)"
  else
    bad "the module in Chromium" $work/page.log
  fi
fi

# i64 inputs: narrowed to 32 bits at the boundary (the extremes to the 32-bit ones), one
# that does not fit refused with its element
d=$work/i64
if $KGEN tests/data/onnx-node-tests/test_max_int64/model.onnx --target webgpu --main -o $d --name mx > $d.log 2>&1 &&
   node tests/webgpu/i64_inputs.mjs $d && node $d/mx_main.mjs $d/small.npy $d/other.npy > $d.run 2>&1 &&
   grep -q "= 3 7 2147483647$" $d.run; then ok
else bad "i64 inputs narrowed" $d.run; fi
if node $d/mx_main.mjs $d/big.npy $d/other.npy > $d.big 2>&1; then bad "an i64 input beyond 32 bits was accepted" $d.big
elif grep -q "element 1 is 1099511627776, which does not fit in 32 bits" $d.big; then ok
else bad "an i64 input beyond 32 bits: the message" $d.big; fi
finish
