#!/usr/bin/env bash
# errors.sh - the error corpus: every file under tests/error/kg/ must make kgen fail
# with exit status 1 (not a crash), print the message its first line names
# ("# expect: TEXT"; "# args: ..." adds options), and leave no output behind. The same
# for each tests/error/onnx/NAME.onnx, its message in NAME.expect, options in NAME.args
# (made by make_errors.py), and for files over --max-file-mb made here.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
work=$BUILD/errors
rm -rf $work; mkdir -p $work
pass=0 fail=0
# judge RC EXPECT: kgen's run as $name (stderr in $work/$name.stderr, output dir $out)
# failed with status 1, said EXPECT and wrote nothing
judge() {
  local why=""
  [ $1 -eq 1 ] || why="exit status $1, expected 1"
  [ -z "$why" ] && ! grep -qF -- "$2" $work/$name.stderr && why="message lacks '$2'"
  [ -z "$why" ] && [ -e $out ] && why="left output behind in $out"
  [ -z "$why" ] && [ ! -s $work/$name.stderr ] && why="no message"
  if [ -z "$why" ]; then pass=$((pass + 1)); else
    echo "FAIL error $name: $why"; sed 's/^/    /' $work/$name.stderr | head -8; fail=$((fail + 1)); fi
}
for f in tests/error/kg/*.kg; do
  name=$(basename $f .kg)
  expect=$(head -c 4096 "$f" | tr -d '\000' | sed -n 's/^# expect: \{0,1\}//p' | head -1)
  args=$(head -c 4096 "$f" | tr -d '\000' | sed -n 's/^# args: //p' | head -1)
  out=$work/$name.out
  $KGEN "$f" --target c -o $out $args >$work/$name.stdout 2>$work/$name.stderr
  rc=$?
  judge $rc "$expect"
done
# ONNX models: NAME.onnx with its expected message in NAME.expect
for f in tests/error/onnx/*.onnx; do
  name=onnx_$(basename $f .onnx)
  expect=$(head -1 ${f%.onnx}.expect)
  args=$(cat ${f%.onnx}.args 2>/dev/null)
  out=$work/$name.out
  $KGEN "$f" --target c -o $out $args >$work/$name.stdout 2>$work/$name.stderr
  rc=$?
  judge $rc "$expect"
done
# files over --max-file-mb=1: a model and a .kg source of 1 MiB and one byte
head -c $((1024 * 1024 + 1)) /dev/zero > $work/big.onnx
{ echo "input A : f32[4]"; echo "output B[i < 4] = A[i]"; head -c $((1024 * 1024)) /dev/zero | tr '\0' '#'; } > $work/big.kg
for f in $work/big.onnx $work/big.kg; do
  name=max_file_mb_${f##*.}
  out=$work/$name.out
  $KGEN "$f" --target c -o $out --max-file-mb=1 >$work/$name.stdout 2>$work/$name.stderr
  rc=$?
  expect="$f: larger than the limit of 1 MiB (--max-file-mb)"
  judge $rc "$expect"
done
# ONNX or .kg is told by the content, not the name: a model named .bin compiles (and so
# does a .kg named .txt); a text file named .onnx, garbage named .kg, an empty .onnx and a
# truncated model are "not an ONNX model" with the decoder's reason
cp tests/models/small_cnn/model.onnx $work/model.bin
cp examples/matmul.kg $work/matmul.txt
for f in $work/model.bin $work/matmul.txt; do
  name=content_${f##*.}
  if $KGEN "$f" --target c -o $work/$name.out > $work/$name.stdout 2> $work/$name.stderr; then pass=$((pass + 1)); else
    echo "FAIL error $name: $f does not compile"; sed 's/^/    /' $work/$name.stderr | head -8; fail=$((fail + 1)); fi
done
cp examples/matmul.kg $work/text.onnx
printf 'input A : f32[4]\noutput B[i < 4] = A[i]\n' > $work/input_line.onnx
{ printf '\377\376binary'; head -c 300 tests/models/small_cnn/output_0.npy; } > $work/garbage.kg
: > $work/empty.onnx
head -c 1000 tests/models/small_cnn/model.onnx > $work/truncated.bin
for c in "text.onnx:not an ONNX model (group (wire type 3) in field 4: groups are not supported at byte 0)" \
         "input_line.onnx:not an ONNX model (a ModelProto has no field 13 (fixed64) at byte 0)" \
         "garbage.kg:not an ONNX model (invalid wire type 7 in field 202735 at byte 0), nor a .kg program (a NUL byte at byte 15)" \
         "empty.onnx:not an ONNX model (the file is empty)" \
         "truncated.bin:not an ONNX model (truncated length-delimited field 7"; do
  f=$work/${c%%:*}
  expect="$f: ${c#*:}"
  name=content_$(basename ${c%%:*} | tr . _)
  out=$work/$name.out
  $KGEN "$f" --target c -o $out >$work/$name.stdout 2>$work/$name.stderr
  rc=$?
  judge $rc "$expect"
done
# dims decided at run time: a range that is not one, an operator that does not take run-time
# dims, extents used as values where kgen cannot follow them, a target without them
for c in "range_empty|tests/dyn/cnn/model.onnx|--dim H=96..32 --dim W=32..128|--dim H=96..32: the range '96..32' is empty or one value" \
         "range_one|tests/dyn/cnn/model.onnx|--input-shape x=1,3,5..5,32|the range '5..5' is empty or one value" \
         "range_loop|tests/published/loop_while/model.onnx|--dim n=1..16|has a dim decided at run time (dim 1: n), and kgen runs Loop only on fixed dims yet" \
         "range_shape_value|tests/published/sr_nested_if/model.onnx|--bind sr=16000 --dim samples=1..640|Greater: element 0 compares an extent decided at run time, and the answer depends on the extents" \
         "range_layernorm|tests/data/dyn/ln_t.onnx|--dim T=1..8|normalizes over dim 1 of 'x', decided at run time; kgen normalizes over fixed dims only yet" \
         "range_pad_crop|tests/data/dyn/pad_crop.onnx|--dim H=4..64 --dim W=4..64|node 36 '/Pad' (Pad): Pad: pads of axis 2 computed from dims decided at run time can be negative" \
         "range_target|tests/dyn/cnn/model.onnx|--dim H=32..96 --dim W=32..128 --target webgpu|are not supported by the WebGPU target yet"; do
  IFS='|' read -r name f args expect <<< "$c"
  name=dyn_$name
  out=$work/$name.out
  # shellcheck disable=SC2086
  $KGEN "$f" --target c -o $out $args >$work/$name.stdout 2>$work/$name.stderr
  rc=$?
  judge $rc "$expect"
done
echo "errors: $pass passed, $fail failed"
