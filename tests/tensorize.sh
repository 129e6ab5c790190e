#!/usr/bin/env bash
# tensorize.sh - SIMD micro-kernels (--target c -mattr=..., -mcpu=..., and .kg tensorize
# lines; templates/kgen_ukernels.h) against plain references, on shapes that the tiles do
# not divide:
#   1. the examples of tests/exec.sh (and tests/data/kg/matmul_tensorize.kg, explicit
#      tensorize lines) with each target ISA, checked by tests/exec's references;
#   2. three real models (tests/models: resnet_blocks, transformer, wino_convs) through the
#      runner, compared with output_0.npy (rtol 1e-3, atol 1e-4), and generated twice
#      (determinism); in the AVX-512 output the transformer's matmul tiles are rows of two
#      vectors (32 columns) and wino_convs' 48-channel products tiles of three blocks;
#   3. the ONNX node tests of Conv, MatMul and Gemm (tests/conformance.sh's rule) through
#      -mattr=+neon, whose 4-lane tiles tensorize even those small shapes.
# Modes: avx512 (kgen -mattr=+avx512f, built with -mavx512f -mfma) and avx2 (-mattr=+avx2,+fma,
# built with -mavx2 -mfma), each run only where this CPU has those features (else a SKIP
# line); native (the CPU's own ISA, -march=native, gcc and clang); portable (the avx512f
# output built without -m flags: the plain C bodies); neon (-mcpu=neoverse-n1, built with
# aarch64-linux-gnu-gcc and run under qemu-aarch64: correctness, not speed). Every build is
# -std=c99 -Wall -Wextra -pedantic -Werror. A case marked to tensorize must call a
# micro-kernel in each mode's output. Without the AArch64 toolchain or qemu-aarch64 the
# neon mode prints a SKIP line (a FAIL with KGEN_REQUIRE_ALL=1).
# Ends with "tensorize: N passed, N failed, N skipped". KGEN, BUILD, CC honoured.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
work=$BUILD/tensorize
rm -rf "$work"
mkdir -p "$work"
STRICT="-std=c99 -Wall -Wextra -pedantic -Werror -O2"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL tensorize $*"; fail=$((fail + 1)); }
indent() { sed 's/^/    /' | head -${1:-12}; }
missing() {   # a toolchain or CPU feature is missing: SKIP, or FAIL when everything is required
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ] && [ "${2:-tool}" = tool ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"
  else echo "SKIP tensorize: $1"; skip=$((skip + 1)); fi
}

# ---------------------------------------------------------------- modes
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { [[ " $flags " == *" $1 "* ]]; }
modes=()
if has avx512f; then modes+=(avx512); else missing "this CPU has no avx512f: the AVX-512 runs are skipped" cpu; fi
if has avx2 && has fma; then modes+=(avx2); else missing "this CPU has no avx2+fma: the AVX2 runs are skipped" cpu; fi
native_attr=""
if has avx512f; then native_attr=-mattr=+avx512f; elif has avx2 && has fma; then native_attr=-mattr=+avx2,+fma; fi
[ "$(uname -m)" = aarch64 ] && native_attr=-mattr=+neon
if [ -n "$native_attr" ]; then modes+=(native); else missing "no SIMD ISA kgen knows on this CPU: the native runs are skipped" cpu; fi
modes+=(portable)
A64CC=${A64CC:-aarch64-linux-gnu-gcc}
QEMU="qemu-aarch64 -L ${A64_SYSROOT:-/usr/aarch64-linux-gnu}"
neon_missing=""
command -v $A64CC > /dev/null 2>&1 || neon_missing="$neon_missing $A64CC"
command -v qemu-aarch64 > /dev/null 2>&1 || neon_missing="$neon_missing qemu-aarch64"
if [ -z "$neon_missing" ]; then
  printf 'int main(void) { return 0; }\n' > $work/probe.c
  { $A64CC $work/probe.c -o $work/probe && $QEMU $work/probe; } > $work/probe.log 2>&1 ||
    neon_missing=" a working $A64CC with the arm64 C library (libc6-dev-arm64-cross)"
fi
if [ -z "$neon_missing" ]; then modes+=(neon)
else missing "neon: not installed:$neon_missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"; fi

# mode -> kgen attribute, compilers, their flags, the command prefix that runs the result
attr_of() {
  case $1 in avx512 | portable) echo -mattr=+avx512f ;; avx2) echo -mattr=+avx2,+fma ;;
    native) echo $native_attr ;; neon) echo -mcpu=neoverse-n1 ;; esac
}
ccs_of() {
  case $1 in neon) echo $A64CC ;;
    native) echo gcc; command -v clang > /dev/null 2>&1 && echo clang ;;
    *) echo $CC ;; esac
}
# the build's flags beyond $STRICT: KGEN_GEN_CFLAGS (sanitizers) for the host's builds only
mflags_of() {
  local m=""
  case $1 in avx512) m="-mavx512f -mfma" ;; avx2) m="-mavx2 -mfma" ;; native) m=-march=native ;; esac
  [ $1 = neon ] || m="$m ${KGEN_GEN_CFLAGS:-}"
  echo $m
}
# the exec drivers keep their buffers to the end: no leak report for them (as in exec.sh)
runner_of() { if [ $1 = neon ]; then echo "$QEMU"; else echo "env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; fi; }

# ---------------------------------------------------------------- 1. examples
# source | defines | t: every mode's output must call a micro-kernel (-: correctness only)
cases=(
  "examples/matmul.kg|-DM=64 -DN=64 -DK=64|t"
  "examples/matmul.kg|-DM=20 -DN=37 -DK=30|t"
  "examples/matmul.kg|-DM=130 -DN=100 -DK=17 -DNB=16 -DMB=4|t"
  "examples/matmul.kg|-DM=9 -DN=50 -DK=7 -DNB=48 -DMB=3|t"
  "examples/batch_matmul.kg|-DBATCH=3 -DM=7 -DN=19 -DK=5|t"
  "examples/conv2d.kg||t"
  "examples/conv2d.kg|-DC=3 -DH=9 -DW=37 -DF=6|t"
  "examples/conv2d.kg|-DC=6 -DH=11 -DW=13 -DF=10 -DS=2 -DP=2 -DD=2 -DG=2|-"
  "examples/depthwise_conv2d.kg|-DN=2 -DC=3 -DH=13 -DW=35|t"
  "examples/maxpool2d.kg|-DC=3 -DH=8 -DW=11 -DK=2 -DS=2 -DP=0|-"
  "tests/data/kg/matmul_tensorize.kg|-DM=33 -DN=70 -DK=19|t"
  "tests/data/kg/matmul_tensorize.kg|-DM=8 -DN=16 -DK=1|t"
)
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r src defs want <<< "$c"
  name=$(sed -n 's/^kernel \([A-Za-z_0-9]*\).*/\1/p' $src | head -1)
  for mode in "${modes[@]}"; do
    i=$((i + 1))
    d=$work/ex$i
    label="$(basename $src) [$defs] $mode"
    if ! $KGEN $src --target c $(attr_of $mode) -o $d $defs > $d.log 2>&1; then
      bad "$label: kgen failed"; indent < $d.log; continue
    fi
    if [ $want = t ] && ! grep -q 'kgen_fma_bcast_f32x' $d/$name.c; then
      bad "$label: no micro-kernel call in $d/$name.c"; continue
    fi
    for cc in $(ccs_of $mode); do
      if $cc $STRICT $(mflags_of $mode) -I$d $defs tests/exec/$name.c $d/$name.c -lm -o $d/run.$cc > $d.$cc.log 2>&1 &&
         $(runner_of $mode) $d/run.$cc >> $d.$cc.log 2>&1; then
        ok
      else
        bad "$label $cc"; indent < $d.$cc.log
      fi
    done
  done
done

# ---------------------------------------------------------------- 2. models
# kgen first, then the runners built two at a time (the machine has two cores), then runs
if ! $CC $STRICT -I templates tests/models/npycmp.c -o $work/npycmp -lm > $work/npycmp.log 2>&1; then
  bad "cannot build tests/models/npycmp.c"; indent < $work/npycmp.log
else
  built=()
  for name in resnet_blocks transformer wino_convs; do
    model=tests/models/$name/model.onnx
    [ -f $model ] || { bad "$model is missing"; continue; }
    for mode in "${modes[@]}"; do
      d=$work/$name.$mode
      if ! $KGEN $model --target c $(attr_of $mode) -o $d --name $name --main > $d.log 2>&1; then
        bad "$name $mode: kgen failed"; indent < $d.log; continue
      fi
      if [ $mode = portable ]; then   # once per model: the same bytes again
        $KGEN $model --target c $(attr_of $mode) -o $d.again --name $name --main > /dev/null 2>&1
        if diff -r $d $d.again > $d.diff 2>&1; then ok; else bad "$name: two kgen runs differ"; indent < $d.diff; fi
      fi
      if ! grep -q 'kgen_fma_bcast_f32x' $d/$name.c; then bad "$name $mode: no micro-kernel call in $d/$name.c"; continue; fi
      # AVX-512's matmul tiles: rows of two 16-lane vectors (32 columns), as its 32
      # registers allow; the transformer's products all have a multiple of 32 columns
      if [ $name = transformer ] && [ "$(attr_of $mode)" = -mattr=+avx512f ]; then
        if grep -q 'kgen_fma_bcast_f32x16(' $d/$name.c || ! grep -q 'kgen_fma_bcast_f32x32(' $d/$name.c; then
          bad "$name $mode: the AVX-512 matmul tiles are not rows of 32 columns"; continue
        fi
        ok
      fi
      # and its conv tiles of three blocks where the blocks are odd in count (wino_convs'
      # 48-channel products: 3 blocks of 7 or 8 rows, 336 or 384 accumulators' floats)
      if [ $name = wino_convs ] && [ "$(attr_of $mode)" = -mattr=+avx512f ]; then
        if ! grep -qE '_local\[(336|384)\];' $d/$name.c; then
          bad "$name $mode: no AVX-512 conv tile of three blocks"; continue
        fi
        ok
      fi
      built+=("$name.$mode")
    done
  done
  for nm in "${built[@]}"; do
    if [ $(jobs -rp | wc -l) -ge 2 ]; then wait -n; fi
    name=${nm%.*} mode=${nm##*.}
    ( make -s -C $work/$nm CC="$(ccs_of $mode | head -1)" CFLAGS="$STRICT $(mflags_of $mode)" $name \
        > $work/$nm/build.log 2>&1; echo $? > $work/$nm/build.rc ) &
  done
  wait
  for nm in "${built[@]}"; do
    name=${nm%.*} mode=${nm##*.} d=$work/$nm
    if [ "$(cat $d/build.rc 2>/dev/null)" != 0 ]; then
      bad "$name $mode: the runner does not build"; indent < $d/build.log; continue
    fi
    if ! $([ $mode = neon ] && echo "$QEMU") $d/$name tests/models/$name/input_0.npy -o $d/out > $d/run.log 2>&1; then
      bad "$name $mode: the runner failed"; indent < $d/run.log; continue
    fi
    if cmp=$($work/npycmp --rtol 1e-3 --atol 1e-4 tests/models/$name/output_0.npy $d/out/output_0.npy 2>&1); then
      ok
    else
      bad "$name $mode: output_0.npy differs from the reference"; indent <<< "$cmp"
    fi
  done
fi

# ---------------------------------------------------------------- 3. ONNX node tests
tests_dir=${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}
if [ ! -f "$tests_dir/MANIFEST.tsv" ]; then
  missing "no ONNX node tests at $tests_dir: the conformance part is skipped"
else
  kg_abs=$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")
  printf '#!/bin/sh\nexec "%s" "$@" -mattr=+neon\n' "$kg_abs" > $work/kgen-neon
  chmod +x $work/kgen-neon
  native=""
  has avx2 && has fma && native=-march=native
  KGEN=$work/kgen-neon BUILD=$work/conf KGEN_CONF_ONLY='^test_(conv|matmul|gemm)' KGEN_GEN_CFLAGS="$native" \
    bash tests/conformance.sh > $work/conf.log 2>&1
  line=$(grep -E '^conformance: [0-9]+ passed' $work/conf.log | tail -1)
  calls=$(grep -l 'kgen_fma_bcast_f32x' $work/conf/conf/*/*.c 2>/dev/null | wc -l)
  if [[ $line =~ ^conformance:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]] && [ ${BASH_REMATCH[2]} = 0 ] &&
     [ ${BASH_REMATCH[1]} -gt 0 ] && [ $calls -gt 0 ]; then
    echo "    conformance (Conv, MatMul, Gemm) with -mattr=+neon $native: ${BASH_REMATCH[1]} passed, $calls tensorized"
    ok
  else
    bad "conformance (Conv, MatMul, Gemm) with -mattr=+neon: ${line:-no summary} ($calls tensorized)"
    grep -E '^(FAIL|UNSUPPORTED)' $work/conf.log | indent
  fi
fi

echo "tensorize: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
