#!/usr/bin/env bash
# conformance_webgpu.sh - every ONNX node test through kgen's webgpu target, run in node
# through Dawn on chromium's SwiftShader (as tests/webgpu.sh finds them): tests/conformance_js.sh
# with KGEN_CONF_JS_TARGET=webgpu (its generation step, its batches of KGEN_CONF_JS_BATCH models
# per node process, here with one Dawn device per batch, its judging and gaps). Tests with
# DOUBLE tensors are skipped: WGSL has no f64, so the target refuses them by design (any
# other refusal counts as unsupported). Prints "conformance_webgpu: N passed, N failed, N
# skipped"; a missing Dawn or driver is a SKIP (a FAIL with KGEN_REQUIRE_ALL=1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
part=conformance_webgpu
skip_or_fail() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
    echo "FAIL $part: $1 (KGEN_REQUIRE_ALL=1)"; echo "$part: 0 passed, 1 failed, 0 skipped"; exit 1
  fi
  echo "SKIP $part: $1"; echo "$part: 0 passed, 0 failed, 1 skipped"; exit 0
}
dawn=${KGEN_NODE_WEBGPU:-$here/../node_modules/webgpu/index.js}
[ -f "$dawn" ] || skip_or_fail "Dawn not found: npm ci (package.json's webgpu) or KGEN_NODE_WEBGPU=PATH/webgpu/index.js"
export KGEN_NODE_WEBGPU=$(cd "$(dirname "$dawn")" && pwd)/$(basename "$dawn")
if [ -z "${VK_ICD_FILENAMES:-}" ]; then
  [ -f /usr/lib/chromium/vk_swiftshader_icd.json ] || skip_or_fail "no Vulkan driver: chromium's SwiftShader (apt-get install chromium) or VK_ICD_FILENAMES"
  export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
  export LD_LIBRARY_PATH=/usr/lib/chromium${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
KGEN_CONF_GAPS_MORE=$here/conformance_gaps_webgpu.txt KGEN_CONF_JS_TARGET=webgpu KGEN_CONF_JS_PART=$part KGEN_CONF_SKIP=${KGEN_CONF_SKIP:-'^(STRING|DOUBLE)$'} \
  exec bash "$here/conformance_js.sh"
