#!/usr/bin/env bash
# tune.sh - the auto-tuner end to end on tiny spaces (few trials, fixed seeds): the log is
# written, a second run resumes it (reads it, appends, never repeats a point), the same
# seed and log give the same next point, a candidate that fails to compile is logged and skipped,
# and `kgen --tuning-log` applies the best record with correct results; for a .kg file
# (examples/matmul.kg, a shape its tiles do not divide) and an ONNX model (small_cnn).
# Ends with "tune: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${TUNE_CC:-cc}
work=$BUILD/tune
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0 skip=0
ok() { echo "PASS tune $1"; pass=$((pass + 1)); }
bad() { echo "FAIL tune $1"; shift; for l in "$@"; do echo "    $l"; done; fail=$((fail + 1)); }

if ! command -v $CC >/dev/null; then
  echo "SKIP tune: no C compiler ($CC)"; echo "tune: 0 passed, 0 failed, 1 skipped"; exit 0
fi
flags="-O1"
shape="-DM=20 -DN=37 -DK=30"
points() { cut -f2 "$1" | grep -v '^#'; }

# 1. a fresh log, then a resumed run
log=$work/mm.log
$KGEN tune examples/matmul.kg $shape --trials 3 --seed 7 --log $log --cc $CC --cflags "$flags" --runs 3 \
  > $work/run1.out 2> $work/run1.err
n1=$(grep -c . $log 2>/dev/null)
if [ "$n1" = 3 ] && grep -q '^best ' $work/run1.out && grep -q 'ms=' $log; then ok "log written (3 trials)"
else bad "log written" "$(tail -3 $work/run1.err)" "log lines: $n1"; fi
cp $log $work/mm.first
$KGEN tune examples/matmul.kg $shape --trials 2 --seed 7 --log $log --cc $CC --cflags "$flags" --runs 3 \
  --runner env > $work/run2.out 2> $work/run2.err
n2=$(grep -c . $log 2>/dev/null)
if [ "$n2" = 5 ] && [ "$(head -3 $log)" = "$(cat $work/mm.first)" ] && grep -q '3 records' $work/run2.err &&
   [ "$(points $log | sort | uniq -d)" = "" ]; then ok "resumed (2 more trials appended, no point twice)"
else bad "resumed" "$(tail -3 $work/run2.err)" "log lines: $n2"; fi

# 2. the same seed and the same log give the same next point (times steer the search,
# so only the first new point is determined by the log alone)
cp $work/mm.first $work/mm2.log
$KGEN tune examples/matmul.kg $shape --trials 1 --seed 7 --log $work/mm2.log --cc $CC --cflags "$flags" --runs 1 \
  >/dev/null 2>&1
if [ "$(points $log | head -4)" = "$(points $work/mm2.log)" ]; then ok "deterministic for a seed and a log"
else bad "deterministic" "$(points $log | tr '\n' ' ')" "$(points $work/mm2.log | tr '\n' ' ')"; fi

# 3. applied: the best record's params, and the outputs match the untuned build's
# (kgen's rule, schedule/tune.c: in log order, a record takes the lead only when 2% faster)
best=$(awk -F'\t' '$3 ~ / rel=/ { r = $3; sub(".* rel=", "", r); sub(" .*", "", r)
                                   if (b == "" || r + 0 < b * 0.98) { b = r + 0; cfg = $2 } } END { print cfg }' $log)
d=$work/applied
if $KGEN examples/matmul.kg $shape --tuning-log $log --name cand -o $d 2> $work/apply.err &&
   $KGEN examples/matmul.kg $shape $(echo "-D$best" | sed 's/,/ -D/g') --name cand -o $work/byhand 2>/dev/null &&
   diff -r $d $work/byhand >/dev/null; then ok "applied ($best)"
else bad "applied ($best)" "$(cat $work/apply.err)"; fi
# each trial records what it was built with, and applying the log says it
if [ "$(grep -c " built=$CC $flags\$" $log)" = 5 ] && grep -q "was tuned built with '$CC $flags'" $work/apply.err; then
  ok "the log records the build flags and applying it names them"
else bad "build flags recorded" "$(head -2 $log)" "$(cat $work/apply.err)"; fi
if $CC $flags -I$d $d/cand.c $log.work/harness.c -lm -o $d/run 2> $work/applied.cc &&
   $d/run 1 - $log.work/ref.bin > $work/applied.run 2>&1 && grep -q median_ms $work/applied.run; then
  ok "applied result correct"
else bad "applied result correct" "$(cat $work/applied.cc $work/applied.run | head -5)"; fi
if $KGEN examples/matmul.kg -DM=21 -DN=37 -DK=30 --tuning-log $log -o $work/other 2> $work/other.err &&
   grep -q 'no record' $work/other.err; then ok "another workload stays untuned"
else bad "another workload stays untuned" "$(cat $work/other.err)"; fi

# 4. a candidate that does not compile is logged as an error and the search goes on
cat > $work/flaky_cc.sh <<EOF
#!/bin/sh
# links a program (the untuned build's run, then each candidate): every second link fails
case "\$*" in *cand.bin*)
  n=\$(cat $work/flaky.count 2>/dev/null || echo 0); echo \$((n + 1)) > $work/flaky.count
  [ \$((n % 2)) = 1 ] && { echo "flaky_cc: error: refused on purpose" >&2; exit 1; } ;;
esac
exec $CC "\$@"
EOF
chmod +x $work/flaky_cc.sh
$KGEN tune examples/matmul.kg $shape --trials 3 --seed 3 --log $work/flaky.log --cc $work/flaky_cc.sh \
  --cflags "$flags" --runs 1 > /dev/null 2> $work/flaky.err
if grep -q 'error=compile: flaky_cc: error: refused on purpose' $work/flaky.log && grep -q 'rejected' $work/flaky.err &&
   [ "$(grep -c 'ms=' $work/flaky.log)" = 2 ]; then ok "a candidate that fails to compile is rejected and logged"
else bad "compile failure logged" "$(cat $work/flaky.log)"; fi

# 5. an ONNX model: the default schedule's register tile
model=tests/models/small_cnn/model.onnx
if [ -f $model ]; then
  olog=$work/cnn.log
  $KGEN tune $model --trials 2 --seed 1 --log $olog --cc $CC --cflags "$flags" --runs 1 > $work/cnn.out 2> $work/cnn.err
  $KGEN tune $model --trials 1 --seed 1 --log $olog --cc $CC --cflags "$flags" --runs 1 >> $work/cnn.out 2>> $work/cnn.err
  if [ "$(grep -c 'ms=' $olog)" = 3 ] && grep -q 'rows=8,cols=16,vectorize=1,unroll=1,k_outer=1' $olog; then
    ok "onnx: log written and resumed"
  else bad "onnx: log written and resumed" "$(tail -3 $work/cnn.err)"; fi
  d=$work/cnn_applied
  if $KGEN $model --tuning-log $olog --name cand -o $d 2> $work/cnn_apply.err &&
     $CC $flags -I$d $d/*.c $olog.work/harness.c -lm -o $d/run 2> $work/cnn_applied.cc &&
     $d/run 1 - $olog.work/ref.bin > $work/cnn_applied.run 2>&1; then ok "onnx: applied, result correct"
  else bad "onnx: applied, result correct" "$(cat $work/cnn_apply.err $work/cnn_applied.cc $work/cnn_applied.run | head -5)"; fi
  # candidates share the objects of identical files: the weights are compiled once per
  # layout (seed 7: the untuned point's layout 8, then 8 and 16)
  cat > $work/count_cc.sh <<EOF
#!/bin/sh
case "\$*" in *"-c "*cand_weights.c*) echo x >> $work/weights.count ;; esac
exec $CC "\$@"
EOF
  chmod +x $work/count_cc.sh
  rm -rf $work/share.log $work/share.log.work $work/weights.count
  $KGEN tune $model --trials 3 --seed 7 --log $work/share.log --cc $work/count_cc.sh --cflags "$flags" --runs 1 \
    > /dev/null 2> $work/share.err
  builds=$(grep -c 'ms=' $work/share.log)
  layouts=$(grep -o 'layout=[0-9]*' $work/share.log | sort -u | wc -l)
  compiled=$(cat $work/weights.count 2>/dev/null | wc -l)
  if [ "$builds" -gt "$layouts" ] && [ "$compiled" = "$layouts" ]; then
    ok "onnx: $builds builds compiled their weights $compiled times (once per layout)"
  else bad "onnx: weights compiled once per layout" "builds $builds, layouts $layouts, weights compiled $compiled times" \
    "$(tail -3 $work/share.err)"; fi
else
  echo "SKIP tune onnx: $model missing"; skip=$((skip + 1))
fi

# 5b. a model with symbolic dims tunes with the shape options, which are part of its
# workload: the record applies to the same shape, not to another
m=tests/published/cnn_dynamic/model.onnx
if [ -f $m ]; then
  rm -rf $work/dyn.log $work/dyn.log.work
  if $KGEN tune $m --input-shape input=1,3,32,40 --trials 1 --log $work/dyn.log --cflags "$flags" --runs 1 \
       > /dev/null 2> $work/dyn.err &&
     $KGEN $m --input-shape input=1,3,32,40 --tuning-log $work/dyn.log -o $work/dyn_same > /dev/null 2> $work/dyn_same.err &&
     ! grep -q "no record" $work/dyn_same.err &&
     $KGEN $m --input-shape input=1,3,32,48 --tuning-log $work/dyn.log -o $work/dyn_other > /dev/null 2> $work/dyn_other.err &&
     grep -q "no record" $work/dyn_other.err; then
    ok "onnx: --input-shape is part of the workload (tune, then apply to the same and another shape)"
  else bad "onnx: --input-shape is part of the workload" "$(tail -2 $work/dyn.err $work/dyn_same.err $work/dyn_other.err)"; fi
fi

# 6. the command line refuses what it cannot do
if ! $KGEN tune examples/softmax.kg --log $work/x.log > /dev/null 2> $work/none.err && grep -q 'nothing to tune' $work/none.err; then
  ok "a file without tune lines is refused"
else bad "a file without tune lines is refused" "$(cat $work/none.err)"; fi
echo "tune: $pass passed, $fail failed, $skip skipped"
