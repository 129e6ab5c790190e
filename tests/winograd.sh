#!/usr/bin/env bash
# winograd.sh - the Winograd pass (--winograd, ir/winograd.c) end to end, on
# tests/models/wino_convs: 3x3 convs of stride 1 over maps that tiles of 4 and of 2 do not
# divide (30x27, 28x25 without padding, 14x12, 7x6), a batch of 2, a residual block with a
# folded batch norm, output channels padded to the block, a conv that two steps read; the
# reference is PyTorch's output (tests/models/make_models.py). For --winograd=off and auto
# with blocks of 8 (plain --target c), and all with blocks of 8, of 16 (--layout=nchwc16)
# and, where this CPU runs it, -mattr=+avx512f (blocks of 16, micro-kernels):
#   1. kgen, the runner built with strict flags (-Werror), its output against the reference
#      (npycmp: rtol 1e-3, atol 1e-4);
#   2. the convs the mode takes (the products' tensors in --dump=tir): off none; all the
#      model's four blocked convs (the first reads the NCHW input directly: not blocked),
#      both F(4x4, 3x3) and F(2x2, 3x3) among them; auto at least one;
#   3. with all: no select over a position left in the generated C (h % 4 == ..., the
#      default schedule unrolls the positions: schedule/default.c);
# then tests/dyn's cnn, crnn and unet (dims decided at run time) with --winograd=all at each
# of their extents against PyTorch, --target js and wasm with --winograd=all (when node, and
# emcc, are here; models.sh and js.sh run the default mode), and a bad mode as a user error.
# Prints FAIL lines and last "winograd: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror ${KGEN_GEN_CFLAGS:-}"
model=tests/models/wino_convs
out=$BUILD/winograd
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL winograd $*"; fail=$((fail + 1)); }
missing() {
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$1 (KGEN_REQUIRE_ALL=1)"; else echo "SKIP $1"; skip=$((skip + 1)); fi
}
done_() { echo "winograd: $pass passed, $fail failed, $skip skipped"; [ $fail -eq 0 ]; exit; }

rm -rf $out; mkdir -p $out
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm > $out/npycmp.log 2>&1; then
  bad "cannot build tests/models/npycmp.c"; done_
fi
cmp_ref() { "$out/npycmp" --rtol 1e-3 --atol 1e-4 $model/output_0.npy "$1/out/output_0.npy" > "$1.cmp.log" 2>&1; }
products() { "$KGEN" $model/model.onnx "$@" --dump=tir 2>/dev/null | grep -cE '^  [A-Za-z0-9_]+_wino_gemm\['; }

isas=("" "--layout=nchwc16")
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then isas+=("-mattr=+avx512f"); fi
for mode in off auto all; do
  for isa in "${isas[@]}"; do
    [ $mode = all ] || [ -z "$isa" ] || continue
    what="--winograd=$mode${isa:+ $isa}"
    d=$out/$mode${isa:+.${isa//[^a-z0-9]/}}
    # shellcheck disable=SC2086
    if ! timeout 60 "$KGEN" $model/model.onnx --target c $isa -o $d --name net --main --winograd=$mode > $d.kgen.log 2>&1; then
      bad "$what: kgen failed: $(tail -1 $d.kgen.log)"; continue
    fi
    if ! make -s -C $d CC="$CC" CFLAGS="$STRICT" > $d.build.log 2>&1; then
      bad "$what: the build failed: $(grep -m1 -E 'error|warning' $d.build.log)"; continue
    fi
    if timeout 60 $d/net $model/input_0.npy -o $d/out > $d.run.log 2>&1 && cmp_ref $d; then ok
    else bad "$what: output differs from PyTorch's: $(tail -1 $d.cmp.log) $(head -1 $d.run.log)"; fi
    # shellcheck disable=SC2086
    n=$(products --target c $isa --winograd=$mode)
    case $mode in
      off) [ "$n" = 0 ] && ok || bad "$what: $n convs as Winograd products, expected none" ;;
      auto) [ "$n" -ge 1 ] && ok || bad "$what: no conv as Winograd products" ;;
      all)
        [ "$n" = 4 ] && ok || bad "$what: $n convs as Winograd products, expected 4"
        if grep -q 'F(4x4, 3x3) products' $d/net.c && grep -q 'F(2x2, 3x3) products' $d/net.c; then ok
        else bad "$what: F(4x4) and F(2x2) are not both used"; fi
        if grep -qE '% [24] == [0-9]' $d/net.c; then bad "$what: a select over a position is left: $(grep -m1 -oE '.{40}% [24] == [0-9].{20}' $d/net.c)"
        else ok; fi ;;
    esac
  done
done

# extents decided at run time (the tiles counted at run time): tests/dyn's models with 3x3
# convs, built once with their ranges and --winograd=all, at each extent against PyTorch
for name in cnn crnn unet; do
  dd=tests/dyn/$name d=$out/dyn_$name
  [ -f $dd/model.onnx ] || { bad "$dd/model.onnx is missing"; continue; }
  # shellcheck disable=SC2046
  if ! timeout 60 "$KGEN" $dd/model.onnx $(cat $dd/args) --main --name $name -o $d --winograd=all > $d.kgen.log 2>&1; then
    bad "dyn $name --winograd=all: kgen failed: $(tail -1 $d.kgen.log)"; continue
  fi
  if ! make -s -C $d CC="$CC" CFLAGS="$STRICT" > $d.build.log 2>&1; then
    bad "dyn $name --winograd=all: the build failed: $(grep -m1 -E 'error|warning' $d.build.log)"; continue
  fi
  if grep -q '_wino_gemm$' $d/$name.c; then ok; else bad "dyn $name --winograd=all: no conv as Winograd products"; fi
  for x in $dd/in_*.npy; do
    k=$(basename $x .npy); k=${k#in_}
    rm -rf $d/out
    if timeout 60 $d/$name $x -o $d/out > $d.run.log 2>&1 &&
       "$out/npycmp" --rtol 1e-3 --atol 1e-4 $dd/out_$k.npy $d/out/output_0.npy > $d.cmp.log 2>&1; then ok
    else bad "dyn $name --winograd=all at $k: output differs from PyTorch's: $(tail -1 $d.cmp.log) $(head -1 $d.run.log)"; fi
  done
done

# js and wasm (JavaScript's schedule blocks by 16, wasm's by 8)
if command -v node > /dev/null 2>&1; then
  targets=(js)
  if command -v emcc > /dev/null 2>&1; then targets+=(wasm); else missing "winograd: emcc not found: no wasm run"; fi
  for t in "${targets[@]}"; do
    d=$out/$t
    if ! timeout 60 "$KGEN" $model/model.onnx --target $t -o $d --name net --main --winograd=all > $d.kgen.log 2>&1; then
      bad "--target $t: kgen failed: $(tail -1 $d.kgen.log)"; continue
    fi
    flags=$(sed -n 's/^EMFLAGS ?= //p' $d/Makefile 2>/dev/null)
    if [ $t = wasm ] && ! make -s -C $d EMFLAGS="${flags/-O3/-O1}" > $d.build.log 2>&1; then
      bad "--target wasm: the emcc build failed: $(grep -m1 -i error $d.build.log)"; continue
    fi
    if timeout 120 node $d/net_main.mjs $model/input_0.npy -o $d/out > $d.run.log 2>&1 && cmp_ref $d; then ok
    else bad "--target $t --winograd=all: output differs from PyTorch's: $(tail -1 $d.cmp.log) $(head -1 $d.run.log)"; fi
  done
else
  missing "winograd: node not found: no js and wasm runs"
fi

# a bad mode is a user error
if "$KGEN" $model/model.onnx --winograd=yes --report > $out/bad.log 2>&1; then bad "--winograd=yes was accepted"
elif grep -q "unknown winograd mode 'yes'" $out/bad.log; then ok
else bad "--winograd=yes: unexpected message: $(head -1 $out/bad.log)"; fi
done_
