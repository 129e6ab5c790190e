#!/usr/bin/env bash
# layout.sh - the NCHWc layout pass (--layout=nchwc, ir/layout.c) end to end.
#
# For tests/models/{resnet_blocks,mobilenetv2_small,small_cnn} and a few conv node tests
# of tests/data/onnx-node-tests (run with --bind-inputs and their .pb inputs), and for a
# generated model with the awkward convs (channels that are not a multiple of the block,
# depthwise, depthwise with a multiplier, grouped), each layout in nchw nchwc nchwc16:
#   1. kgen MODEL --main --layout=L, the runner built with strict flags (-Werror);
#   2. the outputs compared with the reference (npycmp; the generated model's reference is
#      its own NCHW output);
# and with --dump=tir, that the blocked models convert layouts only at the edges of the
# blocked region (the count of X_to_nchwc / X_to_nchw conversions, no conversion between
# two convs). Then the single-thread latency of resnet_blocks and mobilenetv2_small with
# and without the layout (-O3 -march=native, runner --bench 50: median ms), a figure, not
# a test. Prints FAIL lines, figures, and last "layout: N passed, N failed".
# Run from the repository root (KGEN, BUILD, CC honoured; LAYOUT_BENCH=0 skips the timing).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror"
NODE_TESTS=${KGEN_ONNX_TESTS:-tests/data/onnx-node-tests}
out=$BUILD/layout
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL layout $*"; fail=$((fail + 1)); }

rm -rf $out; mkdir -p $out
# a copy of kgen, so that a rebuild while this runs cannot mix two versions
cp "$KGEN" $out/kgen || { echo "FAIL layout: no kgen at $KGEN"; echo "layout: 0 passed, 1 failed"; exit 1; }
KGEN=$(cd $out && pwd)/kgen
if ! $CC -std=c99 -O2 -I templates tests/models/npycmp.c -o $out/npycmp -lm > $out/npycmp.log 2>&1; then
  bad "cannot build tests/models/npycmp.c"; echo "layout: $pass passed, $fail failed"; exit 1
fi

# compile MODEL as NAME into DIR with layout L (extra kgen args after), build the runner
build() {
  local model=$1 dir=$2 name=$3 layout=$4; shift 4
  rm -rf "$dir"
  timeout 60 "$KGEN" "$model" --target c -o "$dir" --name "$name" --main --layout="$layout" "$@" > "$dir.kgen.log" 2>&1 &&
    make -s -C "$dir" CC="$CC" CFLAGS="$STRICT" > "$dir.build.log" 2>&1
}
# run DIR/NAME on the inputs into DIR/out, compare output K with REF
run_cmp() {
  local dir=$1 name=$2 ref=$3 k=$4; shift 4
  rm -rf "$dir/out"
  timeout 60 "$dir/$name" "$@" -o "$dir/out" > "$dir.run.log" 2>&1 &&
    "$out/npycmp" --rtol 1e-3 --atol 1e-4 "$ref" "$dir/out/output_$k.npy" > "$dir.cmp$k.log" 2>&1
}
# count of the conversions to blocked and back in the tensor IR: "TO_B TO_N"
conversions() {
  "$KGEN" "$@" --dump=tir 2>/dev/null |
    awk '/^  [A-Za-z0-9_]+_to_nchwc\[/ {b++} /^  [A-Za-z0-9_]+_to_nchw\[/ {n++} END {print b + 0, n + 0}'
}

# ---------------------------------------------------------------- repository models
for name in resnet_blocks mobilenetv2_small small_cnn; do
  model=tests/models/$name/model.onnx
  for L in nchw nchwc nchwc16; do
    d=$out/$name.$L
    if ! build $model $d $name $L; then bad "$name --layout=$L: kgen or build failed: $(tail -1 $d.kgen.log) $(grep -m1 error $d.build.log)"; continue; fi
    if run_cmp $d $name tests/models/$name/output_0.npy 0 tests/models/$name/input_0.npy; then ok
    else bad "$name --layout=$L: output differs: $(tail -1 $d.cmp0.log) $(head -1 $d.run.log)"; fi
  done
done

# KGEN_WIDE_VECTORS (kgen_runtime.h) on the kernels, or parallel bodies, that call no
# broadcasting micro-kernel (mobilenetv2_small's depthwise convs, whose taps call the
# elementwise kgen_fma_f32x8), not on those that call one (its 1x1 convs): counted per
# function; the depthwise taps read their zero padding as kgen_zero_f32() (no select per
# lane); and the file compiles warning-free where the macro is the attribute (gcc,
# -mavx2, no AVX-512)
f=$out/mobilenetv2_small.nchwc/mobilenetv2_small.c
if [ -f $f ]; then
  wide=$(awk '/^static / { fn = 1; w = /KGEN_WIDE_VECTORS/; uk = 0; el = 0; par = 0 }
              fn && /kgen_fma_bcast/ { uk = 1 }
              fn && /kgen_fma_f32x8\(.* : kgen_zero_f32\(\), / { el = 1 }
              fn && /KGEN_(PARALLEL|TEAM)_FOR/ { par = 1 }
              fn && /^}/ { fn = 0; if (!par) { if (w && !uk) { a++; d += el } else if (!w && uk) b++; else c++ } }
              END { printf "%d %d %d %d", a, b, c, d }' $f)
  read -r a b c d <<< "$wide"
  if [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ "$c" = 0 ] && [ "$d" -gt 0 ]; then ok
  else bad "mobilenetv2_small --layout=nchwc: kernels wide without broadcasting micro-kernels, plain with them, neither, wide with padded elementwise ones: $wide (want N M 0 K)"; fi
  if ! $CC -dM -E -x c /dev/null 2>/dev/null | grep -q __clang__; then
    if $CC $STRICT -mavx2 -mfma -c -o $out/wide.o $f > $out/wide.log 2>&1 &&
       $CC -dM -E -x c -mavx2 -mfma - < /dev/null | grep -q __AVX2__; then ok
    else bad "mobilenetv2_small.c with -mavx2 -mfma: $(grep -m1 -E 'error|warning' $out/wide.log)"; fi
  fi
fi

# conversions only at the edges: resnet_blocks converts its input once for the residual
# Add of block 0 (conv1 reads NCHW directly) and goes back once before the pooling;
# mobilenetv2_small (stem conv reads NCHW) and small_cnn go back once, before pooling /
# flatten. No conversion is read by a conv or by another conversion.
expect_conv() {
  local name=$1 want=$2 L=$3 got
  got=$(conversions tests/models/$name/model.onnx --layout=$L)
  if [ "$got" = "$want" ]; then ok; else bad "$name --layout=$L: conversions (to blocked, to NCHW) are '$got', expected '$want'"; fi
}
for L in nchwc nchwc16; do
  expect_conv resnet_blocks "1 1" $L
  expect_conv mobilenetv2_small "0 1" $L
done
for B in 8 16; do
  L=nchwc$B
  tir=$("$KGEN" tests/models/mobilenetv2_small/model.onnx --layout=$L --dump=tir 2>/dev/null)
  # every conv (a sum over rk0, rk1) has a 5-D blocked output whose last axis is the block
  nconv=$("$KGEN" tests/models/mobilenetv2_small/model.onnx --layout=nchw --dump=tir 2>/dev/null | grep -c 'sum(rc < ')
  nblk=$(grep -cE "^  [A-Za-z0-9_]+\[n < [0-9]+, co < [0-9]+, h < [0-9]+, w < [0-9]+, ci < $B\] : f32 = sum\(.*_nchwc$B\[" <<< "$tir")
  if [ "$nconv" -gt 0 ] && [ "$nconv" = "$nblk" ]; then ok; else bad "mobilenetv2_small --layout=$L: $nblk of $nconv convs blocked"; fi
  # no blocked tensor reads a conversion back to NCHW
  if ! grep -qE '^  [A-Za-z0-9_]+\[n < .*_to_nchw\[' <<< "$tir"; then ok
  else bad "mobilenetv2_small --layout=$L: a conversion to NCHW is read inside the blocked region"; fi
done
# --layout=auto, the default: NCHWc8 for a CPU target (any CPU, -mattr=+avx2), NCHWc16
# where the target names 16-lane vectors (-mattr=+avx512f), NCHW on a GPU target
m=tests/models/mobilenetv2_small/model.onnx
auto8=$("$KGEN" $m --dump=tir 2>/dev/null | grep -c '_nchwc8\[')
auto16=$("$KGEN" $m --target c -mattr=+avx512f --dump=tir 2>/dev/null | grep -c '_nchwc16\[')
gpu=$("$KGEN" $m --target opencl --dump=tir 2>/dev/null | grep -c '_nchwc')
if [ "$auto16" -gt 0 ] && [ "$auto8" -gt 0 ] && [ "$gpu" = 0 ]; then ok
else bad "--layout=auto: blocked reads: $auto8 (nchwc8, default), $auto16 (nchwc16, -mattr=+avx512f), $gpu (opencl, want 0)"; fi
# the report still fuses the epilogue (bias, clip) into the blocked conv kernels
if "$KGEN" tests/models/mobilenetv2_small/model.onnx --layout=nchwc --report > $out/report.txt 2>&1 &&
   grep -q "fuses .*_conv: Conv" $out/report.txt; then ok; else bad "mobilenetv2_small --layout=nchwc --report: no conv fused"; fi
# two runs give the same bytes
d=$out/mobilenetv2_small.nchwc
if timeout 60 "$KGEN" tests/models/mobilenetv2_small/model.onnx --target c -o $d.again --name mobilenetv2_small --main --layout=nchwc > /dev/null 2>&1 &&
   diff -r -x out -x '*.o' -x mobilenetv2_small $d $d.again > /dev/null 2>&1; then ok; else bad "mobilenetv2_small --layout=nchwc: two kgen runs differ"; fi
# a bad layout name is a user error
if "$KGEN" tests/models/small_cnn/model.onnx --report --layout=nhwc > $out/bad.log 2>&1; then bad "--layout=nhwc was accepted"
elif grep -q "unknown layout 'nhwc'" $out/bad.log; then ok; else bad "--layout=nhwc: unexpected message: $(head -1 $out/bad.log)"; fi

# ---------------------------------------------------------------- node tests
if [ -d "$NODE_TESTS" ]; then
  for t in test_conv_with_strides_padding test_basic_conv_with_padding test_conv_with_autopad_same \
           test_conv_with_strides_and_asymmetric_padding test_conv_with_strides_no_padding; do
    dir=$NODE_TESTS/$t
    [ -d "$dir" ] || continue
    for L in nchw nchwc nchwc16; do
      d=$out/$t.$L
      if ! build $dir/model.onnx $d $t $L --bind-inputs $dir/test_data_set_0; then bad "$t --layout=$L: kgen or build failed: $(tail -1 $d.kgen.log)"; continue; fi
      if run_cmp $d $t $dir/test_data_set_0/output_0.pb 0 $dir/test_data_set_0/input_*.pb; then ok
      else bad "$t --layout=$L: output differs: $(tail -1 $d.cmp0.log) $(head -1 $d.run.log)"; fi
    done
    # the conv is blocked (its weights packed at run time: W is an input), and the graph
    # output is the conversion back
    if "$KGEN" $dir/model.onnx --layout=nchwc --dump=tir 2>/dev/null |
       grep -qE '^  [A-Za-z0-9_]+\[n < .*ci < 8\] : f32 = sum\(.*W_nchwc8\['; then ok
    else bad "$t --layout=nchwc: the conv is not blocked"; fi
  done
else
  echo "    layout: $NODE_TESTS not found, node tests skipped"
fi

# ---------------------------------------------------------------- awkward convs
# A model written by tests/layout_model.py-like code below (pure python, no onnx
# package): X[1,12,10,10] -> Conv 3x3 12->12 (NCHW input, 12 channels: padded) -> Sigmoid
# (not zero-preserving: guarded) -> depthwise 3x3 stride 2 (12 channels) -> Conv group 2
# (6 in / 8 out per group) -> Conv 1x1 16->32 -> depthwise with multiplier 2 (32->64) ->
# Conv group 4 (16 in / 8 out per group) -> Relu, outputs Y and the depthwise result D; and
# from the first Relu, Conv 1x1 32->24 -> Relu -> Conv 3x3 24->20 (24 input channels: not a
# whole number of 16-blocks, summed over the real channels only) -> output Z; from Z, Conv
# 3x3 group 5 (4 in / 4 out per group, 20 channels: the last 16-block half padding) + bias
# -> Relu -> output Q, and from the Relu before Z, Conv 3x3 group 3 (8 in / 8 out) -> output
# P: groups whose width divides the block, run as block-diagonal dense convs; and from a
# second input X2[1,256,6,11], Relu(Conv 3x3 256->32 + bias + Conv 1x1 256->32) -> output
# S: with NCHWc16 the 3x3 conv's weights (295 KB per two blocks) are streamed (the reduce
# loop over input-channel blocks outside the rows, rows unrolled, the next chunk
# prefetched), over 11 columns that tiles of 8 do not divide; and from a third input
# X3[1,300], Relu(Gemm(X3, W^T[250,300], bias)) -> output G: a matrix-vector product with
# 300 KB of weights, whose reduction runs outside the row (250 columns: 15 vectors and a
# tail of 10), checked against a reference computed here in Python; and from the first
# Relu, two Concats along the channels, each of two 1x1 convs, then a 1x1 conv: K of
# 16 + 20 channels (blocked: the first part whole blocks, the last padded) and L of
# 20 + 16 (stays NCHW: its first part is not a whole number of blocks); and from the Relu
# before Z (24 channels), MaxPool 3x3 stride 2 pad 1 and AveragePool 2x2, each then a 1x1
# conv 24->16 -> outputs M and A: blocked pools over a block half padding, computed
# without a guard on the channels (their windows over the padding's zeros are zeros); and
# from a fourth input X4[1,16,4,8], Relu(Conv 1x1 16->24 + bias) -> output V: 3 output
# blocks of 8 (an odd count) over 8 columns, AVX2's tile of 3 blocks of 4 rows.
# The reference is the model's own NCHW output (G's: the Python one).
if command -v python3 > /dev/null 2>&1; then
  gen=$out/awkward
  mkdir -p $gen
  python3 - $gen << 'EOF'
import struct, sys
out = sys.argv[1]
def varint(n):
    b = b""
    while True:
        c = n & 0x7F; n >>= 7
        if n: b += bytes([c | 0x80])
        else: return b + bytes([c])
def key(f, wt): return varint(f << 3 | wt)
def ld(f, data): return key(f, 2) + varint(len(data)) + data
def vi(f, n): return key(f, 0) + varint(n)
def s(f, text): return ld(f, text.encode())
seed = [12345]
def rnd():
    seed[0] = (seed[0] * 1103515245 + 12345) % 2**31
    return seed[0] / 2**31 - 0.5
def tensor(name, dims, vals):
    return b"".join(vi(1, d) for d in dims) + vi(2, 1) + ld(9, struct.pack("<%df" % len(vals), *vals)) + s(8, name)
def rt(name, dims):
    n = 1
    for d in dims: n *= d
    return tensor(name, dims, [rnd() for _ in range(n)])
def attr_i(name, v): return s(1, name) + vi(3, v) + vi(20, 2)
def attr_is(name, vs): return s(1, name) + b"".join(vi(8, v) for v in vs) + vi(20, 7)
def node(op, ins, outs, attrs=()):
    return b"".join(s(1, i) for i in ins) + b"".join(s(2, o) for o in outs) + s(3, outs[0]) + s(4, op) + \
        b"".join(ld(5, a) for a in attrs)
def vinfo(name, dims):
    shape = b"".join(ld(1, vi(1, d)) for d in dims)
    return s(1, name) + ld(2, ld(1, vi(1, 1) + ld(2, shape)))
inits = [rt("w1", [12, 12, 3, 3]), rt("b1", [12]), rt("wd", [12, 1, 3, 3]), rt("bd", [12]),
         rt("wg", [16, 6, 1, 1]), rt("wm", [32, 16, 1, 1]), rt("bm", [32]), rt("wdm", [64, 1, 3, 3]),
         rt("wgg", [32, 16, 1, 1]), rt("bgg", [32]), rt("wz1", [24, 32, 1, 1]), rt("bz1", [24]),
         rt("wz2", [20, 24, 3, 3]), rt("ws", [32, 256, 3, 3]), rt("bs", [32]), rt("wu", [32, 256, 1, 1]),
         rt("wk1", [16, 32, 1, 1]), rt("bk1", [16]), rt("wk2", [20, 32, 1, 1]), rt("bk2", [20]),
         rt("wk3", [16, 36, 1, 1]), rt("wl3", [16, 36, 1, 1]),
         rt("wq", [20, 4, 3, 3]), rt("bq", [20]), rt("wp", [24, 8, 3, 3]), rt("wmp", [16, 24, 1, 1]),
         rt("wap", [16, 24, 1, 1]), rt("wv", [24, 16, 1, 1]), rt("bv", [24])]
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
w3 = [f32(rnd()) for _ in range(250 * 300)]
b3 = [f32(rnd()) for _ in range(250)]
inits += [tensor("wg3", [250, 300], w3), tensor("bg3", [250], b3)]
p1 = [attr_is("pads", [1, 1, 1, 1])]
nodes = [node("Conv", ["X", "w1", "b1"], ["c1"], p1), node("Sigmoid", ["c1"], ["s1"]),
         node("Conv", ["s1", "wd", "bd"], ["D"], p1 + [attr_i("group", 12), attr_is("strides", [2, 2])]),
         node("Conv", ["D", "wg"], ["g1"], [attr_i("group", 2)]),
         node("Conv", ["g1", "wm", "bm"], ["m1"]), node("Relu", ["m1"], ["r1"]),
         node("Conv", ["r1", "wdm"], ["dm"], p1 + [attr_i("group", 32)]),
         node("Conv", ["dm", "wgg", "bgg"], ["gg"], [attr_i("group", 4)]), node("Relu", ["gg"], ["Y"]),
         node("Conv", ["r1", "wz1", "bz1"], ["z1"]), node("Relu", ["z1"], ["zr"]),
         node("Conv", ["zr", "wz2"], ["Z"], p1),
         node("Conv", ["Z", "wq", "bq"], ["q1"], p1 + [attr_i("group", 5)]), node("Relu", ["q1"], ["Q"]),
         node("Conv", ["zr", "wp"], ["P"], p1 + [attr_i("group", 3)]),
         node("Conv", ["X2", "ws", "bs"], ["sv"], p1), node("Conv", ["X2", "wu"], ["su"]),
         node("Add", ["sv", "su"], ["sa"]), node("Relu", ["sa"], ["S"]),
         node("Gemm", ["X3", "wg3", "bg3"], ["g3"], [attr_i("transB", 1)]), node("Relu", ["g3"], ["G"]),
         node("Conv", ["r1", "wk1", "bk1"], ["k1"]), node("Conv", ["r1", "wk2", "bk2"], ["k2"]),
         node("Concat", ["k1", "k2"], ["kc"], [attr_i("axis", 1)]), node("Conv", ["kc", "wk3"], ["K"]),
         node("Concat", ["k2", "k1"], ["lc"], [attr_i("axis", 1)]), node("Conv", ["lc", "wl3"], ["L"]),
         node("MaxPool", ["zr"], ["mp"], p1 + [attr_is("kernel_shape", [3, 3]), attr_is("strides", [2, 2])]),
         node("Conv", ["mp", "wmp"], ["M"]),
         node("AveragePool", ["zr"], ["ap"], [attr_is("kernel_shape", [2, 2])]), node("Conv", ["ap", "wap"], ["A"]),
         node("Conv", ["X4", "wv", "bv"], ["v1"]), node("Relu", ["v1"], ["V"])]
graph = b"".join(ld(1, n) for n in nodes) + s(2, "awkward") + b"".join(ld(5, t) for t in inits) + \
    ld(11, vinfo("X", [1, 12, 10, 10])) + ld(11, vinfo("X2", [1, 256, 6, 11])) + ld(12, vinfo("Y", [1, 32, 5, 5])) + \
    ld(11, vinfo("X3", [1, 300])) + ld(12, vinfo("D", [1, 12, 5, 5])) + ld(12, vinfo("Z", [1, 20, 5, 5])) + \
    ld(12, vinfo("S", [1, 32, 6, 11])) + ld(12, vinfo("G", [1, 250])) + ld(12, vinfo("K", [1, 16, 5, 5])) + \
    ld(12, vinfo("L", [1, 16, 5, 5])) + ld(12, vinfo("Q", [1, 20, 5, 5])) + ld(12, vinfo("P", [1, 24, 5, 5])) + \
    ld(12, vinfo("M", [1, 16, 3, 3])) + ld(12, vinfo("A", [1, 16, 4, 4])) + ld(11, vinfo("X4", [1, 16, 4, 8])) + \
    ld(12, vinfo("V", [1, 24, 4, 8]))
model = vi(1, 8) + ld(8, s(1, "") + vi(2, 13)) + ld(7, graph)
open(out + "/model.onnx", "wb").write(model)
def npy(path, shape, x):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(str(d) for d in shape)
    hdr += " " * (63 - len(hdr) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() +
                           struct.pack("<%df" % len(x), *x))
npy(out + "/input_0.npy", (1, 12, 10, 10), [rnd() * 4 for _ in range(12 * 10 * 10)])
npy(out + "/input_1.npy", (1, 256, 6, 11), [rnd() * 4 for _ in range(256 * 6 * 11)])
x3 = [f32(rnd() * 4) for _ in range(300)]
npy(out + "/input_2.npy", (1, 300), x3)
npy(out + "/input_3.npy", (1, 16, 4, 8), [rnd() * 4 for _ in range(16 * 4 * 8)])
g = [max(0.0, b3[j] + sum(x3[k] * w3[j * 300 + k] for k in range(300))) for j in range(250)]
npy(out + "/g_ref.npy", (1, 250), g)
EOF
  if [ -f $gen/model.onnx ] && build $gen/model.onnx $gen/ref awkward nchw && run_cmp $gen/ref awkward /dev/null 0 $gen/input_0.npy $gen/input_1.npy $gen/input_2.npy $gen/input_3.npy; [ -f $gen/ref/out/output_4.npy ]; then
    ok
    for L in nchwc nchwc16; do
      d=$gen/$L
      # nchwc16 with the tiles of 16 lanes it is for (-mattr=+avx512f; built without
      # -mavx512f, the micro-kernels' plain C)
      if ! build $gen/model.onnx $d awkward $L $([ $L = nchwc16 ] && echo -mattr=+avx512f); then bad "awkward --layout=$L: kgen or build failed: $(tail -1 $d.kgen.log)"; continue; fi
      if run_cmp $d awkward $gen/ref/out/output_0.npy 0 $gen/input_0.npy $gen/input_1.npy $gen/input_2.npy $gen/input_3.npy &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_1.npy $d/out/output_1.npy > $d.cmp1.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_2.npy $d/out/output_2.npy > $d.cmp2.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-4 $gen/ref/out/output_3.npy $d/out/output_3.npy > $d.cmp3.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-4 $gen/ref/out/output_5.npy $d/out/output_5.npy > $d.cmp5.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-4 $gen/ref/out/output_6.npy $d/out/output_6.npy > $d.cmp6.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_7.npy $d/out/output_7.npy > $d.cmp7.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_8.npy $d/out/output_8.npy > $d.cmp8.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_9.npy $d/out/output_9.npy > $d.cmp9.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_10.npy $d/out/output_10.npy > $d.cmp10.log 2>&1 &&
         "$out/npycmp" --rtol 1e-4 --atol 1e-5 $gen/ref/out/output_11.npy $d/out/output_11.npy > $d.cmp11.log 2>&1; then ok
      else bad "awkward --layout=$L: outputs differ from NCHW: $(tail -1 $d.cmp0.log) $(tail -1 $d.cmp1.log 2>/dev/null) $(tail -1 $d.cmp2.log 2>/dev/null) $(tail -1 $d.cmp3.log 2>/dev/null) $(tail -1 $d.cmp5.log 2>/dev/null) $(tail -1 $d.cmp6.log 2>/dev/null) $(tail -1 $d.cmp7.log 2>/dev/null) $(tail -1 $d.cmp8.log 2>/dev/null) $(tail -1 $d.cmp9.log 2>/dev/null) $(tail -1 $d.cmp10.log 2>/dev/null) $(tail -1 $d.cmp11.log 2>/dev/null)"; fi
    done
    # G, the same matrix-vector code in every layout, against Python's reference
    if "$out/npycmp" --rtol 1e-4 --atol 1e-4 $gen/g_ref.npy $gen/ref/out/output_4.npy > $gen/g.cmp.log 2>&1; then ok
    else bad "awkward: G (Gemm 300 -> 250) differs from the Python reference: $(tail -1 $gen/g.cmp.log)"; fi
    # ... computed with its reduce loop outside the row: one loop over the 300 inputs around
    # the row's 32 vectors of 8 lanes (the last one guarded)
    if grep -A1 'for (int32_t rk = 0; rk < 300; ++rk) {' $gen/ref/awkward.c | grep -q 'for (int32_t i1_outer = 0; i1_outer < 32; ++i1_outer) {'; then ok
    else bad "awkward: G's reduction is not outside its row (matrix-vector schedule)"; fi
    # the 3x3 conv into S streams its weights under nchwc16 (12 row tiles: 6 rows of two
    # column tiles, each prefetching), and nothing does under nchwc (8-lane blocks: 147 KB)
    npf16=$(grep -c 'KGEN_PREFETCH(&' $gen/nchwc16/awkward.c 2>/dev/null)
    npf8=$(grep -c 'KGEN_PREFETCH(&' $gen/nchwc/awkward.c 2>/dev/null)
    if [ "$npf16" = 12 ] && [ "$npf8" = 0 ]; then ok
    else bad "awkward: prefetches in the streamed conv: $npf16 with nchwc16 (expected 12), $npf8 with nchwc (expected 0)"; fi
    # V's 1x1 conv to 24 channels (3 blocks of 8) over 8 columns: under nchwc (8 lanes, the
    # AVX2 tiles) a register tile of 3 blocks of 4 rows, 12 accumulators
    if sed -n '/computes v1_conv: Conv/,/^}/p' $gen/nchwc/awkward.c | grep -q 'co \* 32 + w \* 8'; then ok
    else bad "awkward --layout=nchwc: V's conv (24 channels over 8 columns) is not in tiles of 3 blocks of 4 rows"; fi
    # nchwc: conv1 reads NCHW directly; the depthwise (12 channels) blocked, the grouped
    # conv with 6 channels per group stays NCHW, the 1x1 conv reads it directly, the
    # depthwise with multiplier 2 stays NCHW, the grouped conv (16/8 per group) converts
    # its input once; back to NCHW for D's bias (a graph output; the group-2 conv reads D),
    # for the multiplier depthwise (its padded input), for Y, for Q (a graph output's Relu,
    # NCHW, after the blocked group-5 conv) and for S (both of S's convs read X2 directly);
    # the group-3 conv P reads the blocked Relu before Z and is itself a graph output;
    # K's Concat stays blocked, L's converts both its parts back; V's conv reads X4 directly
    # and goes back for V.
    got=$(conversions $gen/model.onnx --layout=nchwc)
    if [ "$got" = "1 8" ]; then ok; else bad "awkward --layout=nchwc: conversions '$got', expected '1 8'"; fi
    # the pools over 24 channels in blocks of 16 read the padding's zeros, unguarded
    if [ "$(sed -n '/computes mp: MaxPool/,/^}/p; /computes ap_sum: AveragePool/,/^}/p' $gen/nchwc16/awkward.c | grep -c '< 24')" = 0 ] &&
       grep -q 'computes mp: MaxPool' $gen/nchwc16/awkward.c; then ok
    else bad "awkward --layout=nchwc16: the blocked pools over 24 channels guard their channels"; fi
    # K's Concat is blocked: it reads whole blocks of its parts
    if "$KGEN" $gen/model.onnx --layout=nchwc --dump=tir 2>/dev/null |
       grep -qE '^  kc\[n < 1, co < 5, h < 5, w < 5, ci < 8\] : f32 = select\(\(co < 2\), k1\[n, co, h, w, ci\], k2\[n, \(co - 2\), h, w, ci\]\)'; then ok
    else bad "awkward --layout=nchwc: the Concat of 16 + 20 channels is not blocked"; fi
  else
    bad "awkward: could not make the model or its NCHW reference: $(tail -1 $gen/ref.kgen.log 2>/dev/null)"
  fi
else
  echo "    layout: python3 not found, generated model skipped"
fi

# ---------------------------------------------------------------- latency (a figure)
if [ "${LAYOUT_BENCH:-0}" != 0 ]; then   # make bench sets it
  for name in resnet_blocks mobilenetv2_small; do
    line="    $name median ms (1 thread, -O3 -march=native):"
    for L in nchw nchwc nchwc16; do
      d=$out/bench.$name.$L
      rm -rf $d
      if timeout 60 "$KGEN" tests/models/$name/model.onnx --target c -o $d --name $name --main --layout=$L > /dev/null 2>&1 &&
         make -s -C $d CC="$CC" CFLAGS="-O3 -march=native -std=c99" > /dev/null 2>&1; then
        ms=$(OMP_NUM_THREADS=1 "$d/$name" --bench 50 tests/models/$name/input_0.npy 2>&1 | grep -o 'median_ms[ =:]*[0-9.]*' | grep -o '[0-9.]*$')
        line="$line $L ${ms:-?}"
      else
        line="$line $L (build failed)"
      fi
    done
    echo "$line"
  done
fi

echo "layout: $pass passed, $fail failed"
[ $fail -eq 0 ]
