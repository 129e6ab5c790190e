#!/usr/bin/env bash
# passes.sh - the pipeline as `kgen --list-passes` names it and `--dump=NAME` shows it:
# the list holds the driver's steps and graph passes in their order, one "NAME  what" a
# line; every name it lists (and the alias tir) prints IR for a .kg file and for an ONNX
# model; the graph passes do what they say (prune drops computes, layout blocks convs,
# --layout=nchw leaves the program as prune left it); --dump=emit prints the files -o
# writes; nothing is printed while the importer folds constants (no "fold" kernel); an
# unknown name is an error that names the known ones.
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
work=$BUILD/passes
rm -rf $work; mkdir -p $work
pass=0 fail=0
kg=examples/conv2d.kg
onnx=tests/models/small_cnn/model.onnx
folds=tests/models/transformer/model.onnx   # its import folds constants

# ok WHAT CONDITION...: one check
ok() {
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL passes: $what"; fail=$((fail + 1)); fi
}

# the list: every line a name then a description; the fixed steps in this order (loop
# passes of the lowering may come between lower and emit)
$KGEN --list-passes > $work/list 2> $work/list.err
ok "--list-passes exits 0" test $? = 0
ok "--list-passes: every line is NAME then a description" \
  test "$(grep -cvE '^[a-z][a-z0-9-]* +[^ ].*' $work/list)" = 0
names=$(awk '{ print $1 }' $work/list)
order=$(printf '%s\n' $names | grep -xE 'import|prune|layout|schedule|lower|emit' | tr '\n' ' ')
ok "--list-passes order ($order)" test "$order" = "import prune layout schedule lower emit "
ok "--list-passes: no name twice" test "$(printf '%s\n' $names | sort | uniq -d | wc -l)" = 0
ok "--list-passes: import first, emit last" \
  test "$(head -1 $work/list | awk '{print $1}') $(tail -1 $work/list | awk '{print $1}')" = "import emit"

# every name prints something, for a .kg file and for an ONNX model
for n in $names tir; do
  # a model pass runs for ONNX models only, gpu-launch for GPU targets only
  line=$(grep "^$n " $work/list)
  files="$kg $onnx" tgt=c
  case $line in *"(models)"*) files=$onnx ;; esac
  case $line in *"(GPU targets)"*) tgt=opencl ;; esac
  for f in $files; do
    $KGEN $f --target $tgt --dump=$n > $work/dump 2> $work/dump.err
    ok "--dump=$n $f exits 0" test $? = 0
    ok "--dump=$n $f prints the IR" test -s $work/dump
  done
  $KGEN $folds --dump=$n > $work/fold 2>&1
  ok "--dump=$n $folds: nothing printed for the importer's constant folding" \
    test "$(grep -cE '^kernel fold|^ *fold' $work/fold)" = 0
done

# what the graph passes do, seen through their dumps
$KGEN $onnx --dump=import > $work/import
$KGEN $onnx --dump=prune > $work/prune
$KGEN $onnx --dump=layout > $work/layout
$KGEN $onnx --dump=layout --layout=nchw > $work/layout_nchw
$KGEN $onnx --dump=layout --target opencl > $work/layout_gpu
ok "import: the program begins 'program'" test "$(head -1 $work/import | awk '{print $1}')" = program
ok "prune drops computes the import left ($(wc -l < $work/import) -> $(wc -l < $work/prune) lines)" \
  test "$(wc -l < $work/prune)" -lt "$(wc -l < $work/import)"
ok "layout blocks the convs (CPU, --layout=auto)" grep -q '_nchwc' $work/layout
ok "layout with --layout=nchw: the program prune left" cmp -s $work/prune $work/layout_nchw
ok "layout on a GPU target: the program prune left" cmp -s $work/prune $work/layout_gpu
# the .kg program is scheduled by its own file: the graph passes leave it as imported
$KGEN $kg --dump=import > $work/kg_import
$KGEN $kg --dump=layout > $work/kg_layout
ok ".kg: the graph passes leave the program" cmp -s $work/kg_import $work/kg_layout

# --dump=emit prints the files -o writes, each under "==> NAME <=="
for f in $kg $onnx; do
  rm -rf $work/out
  $KGEN $f --dump=emit -o $work/out > $work/emit
  files=$(cd $work/out && ls | sort | tr '\n' ' ')
  shown=$(sed -n 's/^==> \(.*\) <==$/\1/p' $work/emit | sort | tr '\n' ' ')
  ok "--dump=emit $f names the files written ($files)" test "$files" = "$shown"
  first=$(sed -n 's/^==> \(.*\) <==$/\1/p' $work/emit | head -1)
  ok "--dump=emit $f: $first as written" \
    cmp -s $work/out/$first <(awk -v f="$first" '/^==> .* <==$/ { on = $0 == "==> " f " <==" ; next } on' $work/emit)
done

# reduce-interchange: an LSTM step's gate sums (a vector loop over the hidden units, a dot
# product in each) get an accumulator vector per gate, the unit loop inside the reduction;
# the pass before it leaves them scalar chains
lstm=tests/models/lstm/model.onnx
$KGEN $lstm --dump=unswitch > $work/lstm_before
$KGEN $lstm --dump=reduce-interchange > $work/lstm_after
ok "unswitch: the LSTM's gate sums are scalar accumulators" grep -q 'allocate acc[0-9]*: f32\[1\] in local' $work/lstm_before
ok "reduce-interchange: the LSTM's gate sums accumulate in vectors" \
  grep -q 'allocate acc[0-9]*: f32\[32\] in local' $work/lstm_after
ok "reduce-interchange: no scalar gate sum is left" test "$(grep -c 'allocate acc[0-9]*: f32\[1\] in local' $work/lstm_after)" = 0

# an unknown name: exit 1, a message naming the known passes, nothing written
rm -rf $work/out
$KGEN $kg --dump=bogus -o $work/out > $work/bad.out 2> $work/bad.err
ok "--dump=bogus exits 1" test $? = 1
ok "--dump=bogus names the known passes" grep -q "unknown pass 'bogus' for --dump (use import, prune, layout" $work/bad.err
ok "--dump=bogus writes nothing" test ! -e $work/out

echo "passes: $pass passed, $fail failed"
[ $fail = 0 ]
