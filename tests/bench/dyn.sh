#!/usr/bin/env bash
# bench/dyn.sh WORK - run-time dims against fixed ones: each model of tests/dyn built once
# with its ranges (tests/dyn/NAME/args) and once with every dim fixed to one extent, both
# run at that extent in the same run, interleaved, best of five medians; the ratio ranged /
# static is the cost of taking the dims at run time (issue 16's goal: at most 1.15); each median
# is of enough runs for about 20 ms. Every
# extent each model has references for is measured, the largest (the bound) among them.
# DYN_MODELS="NAME ..." measures those models only.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-gcc}
w=${1:-build/bench}/dyn
mkdir -p $w
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
CFLAGS="-O3 -march=native"
echo "# run-time dims: ranged build / static build at the same extent, $CC $CFLAGS, 1 thread, best of 5 medians (interleaved, each of about 20 ms of runs)"
printf '%-10s %-22s %-10s %12s %12s %8s\n' model ranges extent static_ms ranged_ms ratio
best() { sort -g | head -1; }
. tests/dyn/fixed_args.sh
dirs=tests/dyn/*/
[ -n "${DYN_MODELS:-}" ] && dirs=$(for n in $DYN_MODELS; do echo tests/dyn/$n/; done)
for d in $dirs; do
  name=$(basename $d)
  args=$(cat $d/args)
  r=$w/$name.ranged
  # shellcheck disable=SC2086
  $KGEN $d/model.onnx $args --main --name $name -o $r > /dev/null 2>&1 && make -s -C $r CC="$CC" CFLAGS="$CFLAGS" > /dev/null 2>&1 ||
    { echo "$name: the ranged build failed"; continue; }
  for x in $d/in_*.npy; do
    k=$(basename $x .npy); k=${k#in_}
    # the same dims fixed at this extent: each SYMBOL=LO..HI becomes SYMBOL=N, N from the
    # extent tag (tests/dyn/fixed_args.sh)
    fixed=$(dyn_fixed_args "$args" $k)
    s=$w/$name.static_$k
    # shellcheck disable=SC2086
    $KGEN $d/model.onnx $fixed --main --name $name -o $s > /dev/null 2>&1 && make -s -C $s CC="$CC" CFLAGS="$CFLAGS" > /dev/null 2>&1 ||
      { echo "$name at $k: the static build failed"; continue; }
    # runs per median: enough for about 20 ms (a model of a few microseconds is otherwise
    # a handful of timer ticks and a scheduler's hiccup), at least 30
    one=$($pin $s/$name --bench 30 $x | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
    runs=$(awk -v m="${one:-1}" 'BEGIN { n = (m > 0 ? int(20 / m) : 30); print (n < 30 ? 30 : n > 20000 ? 20000 : n) }')
    : > $w/st.ms; : > $w/rg.ms
    for rep in 1 2 3 4 5; do
      $pin $s/$name --bench $runs $x | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' >> $w/st.ms
      $pin $r/$name --bench $runs $x | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' >> $w/rg.ms
    done
    st=$(best < $w/st.ms) rg=$(best < $w/rg.ms)
    printf '%-10s %-22s %-10s %12s %12s %8s\n' $name "$(grep -o '[0-9]*\.\.[0-9]*' <<< "$args" | paste -sd,)" $k $st $rg \
      "$(awk -v a=$rg -v b=$st 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  done
done
