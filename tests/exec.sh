#!/usr/bin/env bash
# exec.sh - execution tests: every example, with its schedule and without, for several
# shapes (including sizes that the split factors do not divide), compiled by gcc and
# clang at -O2 with -std=c99 -Wall -Wextra -pedantic -Werror, run on random inputs and
# compared with a plain reference written separately (tests/exec/NAME.c). KGEN_GEN_CFLAGS
# is added to the flags of the generated code (e.g. sanitizers; workspaces are allocated
# at exactly their size).
# Prints one line per case and ends with "exec: N passed, N failed, N skipped".
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
work=$BUILD/exec
rm -rf "$work"
mkdir -p "$work"

# example | defines ... (one shape per line)
cases=(
  "matmul|-DM=64 -DN=64 -DK=64"
  "matmul|-DM=20 -DN=37 -DK=30"
  "matmul|-DM=1 -DN=5 -DK=3"
  "matmul|-DM=130 -DN=100 -DK=17 -DNB=16 -DMB=4"
  "batch_matmul|-DBATCH=2 -DM=16 -DN=32 -DK=8"
  "batch_matmul|-DBATCH=3 -DM=7 -DN=19 -DK=5"
  "conv2d|-DC=8 -DH=12 -DW=12 -DF=8"
  "conv2d|-DC=6 -DH=11 -DW=13 -DF=10 -DS=2 -DP=2 -DD=2 -DG=2"
  "conv2d|-DN=2 -DC=4 -DH=9 -DW=7 -DF=6 -DKH=1 -DKW=1 -DP=0"
  "conv2d|-DC=4 -DH=10 -DW=10 -DF=4 -DG=4 -DKH=5 -DKW=3 -DP=0 -DS=3"
  "depthwise_conv2d|-DC=8 -DH=16 -DW=16"
  "depthwise_conv2d|-DN=2 -DC=3 -DH=13 -DW=9 -DS=2 -DP=0"
  "maxpool2d|-DC=4 -DH=9 -DW=9"
  "maxpool2d|-DC=3 -DH=8 -DW=11 -DK=2 -DS=2 -DP=0"
  "avgpool2d|-DC=4 -DH=9 -DW=9"
  "avgpool2d|-DN=2 -DC=3 -DH=7 -DW=10 -DK=3 -DS=1 -DP=1"
  "softmax|-DR=4 -DL=37"
  "softmax|-DR=3 -DL=1"
  "layernorm|-DR=5 -DL=48"
  "layernorm|-DR=2 -DL=19"
  "rnn|-DT=3 -DI=5 -DH=7"
  "rnn|-DT=8 -DI=16 -DH=32"
)

compilers=()
for cc in gcc clang; do
  if command -v $cc >/dev/null 2>&1; then compilers+=($cc)
  elif [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then echo "FAIL exec: $cc not found (KGEN_REQUIRE_ALL=1)"; fail_missing=1
  else echo "SKIP exec: $cc not found"; fi
done

pass=0 fail=${fail_missing:-0} skip=0
[ ${#compilers[@]} -lt 2 ] && skip=$((skip + 1))
CFLAGS_GEN="-std=c99 -Wall -Wextra -pedantic -Werror -O2 ${KGEN_GEN_CFLAGS:-}"
# the references keep their buffers to the end (the generated code never allocates): no
# leak report for them under a sanitizer (kgen itself keeps ASAN_OPTIONS as given)
run_ref() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
i=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  defs=${c#*|}
  for mode in sched nosched; do
    i=$((i + 1))
    dir=$work/$i
    flag=""
    [ $mode = nosched ] && flag=--no-schedule
    if ! $KGEN examples/$name.kg --target c -o $dir $flag $defs >$dir.log 2>&1; then
      echo "FAIL exec $name [$defs] $mode: kgen failed"; sed 's/^/    /' $dir.log | head -20
      fail=$((fail + 1)); continue
    fi
    for cc in "${compilers[@]}"; do
      if $cc $CFLAGS_GEN -c $dir/$name.c -o $dir/$name.$cc.o >$dir.$cc.log 2>&1 &&
         $cc $CFLAGS_GEN -I$dir $defs tests/exec/$name.c $dir/$name.$cc.o -lm -o $dir/run.$cc >>$dir.$cc.log 2>&1 &&
         run_ref $dir/run.$cc >>$dir.$cc.log 2>&1; then
        pass=$((pass + 1))
      else
        echo "FAIL exec $name [$defs] $mode $cc"; sed 's/^/    /' $dir.$cc.log | head -20
        fail=$((fail + 1))
      fi
    done
  done
done
# the C API: a generator program linked with libkgen builds the same kind of kernel
d=$work/api
mkdir -p $d
if ${KGEN_API_CC:-${CC:-cc}} -std=c11 -Wall -Wextra -Werror -I. examples/api/matmul_api.c $BUILD/libkgen.a -lm -o $d/gen >$d.log 2>&1 &&
   $d/gen $d/out >>$d.log 2>&1 &&
   printf '#include "matmul_api.h"\n#define matmul matmul_api\n#define MATMUL_WORKSPACE_BYTES MATMUL_API_WORKSPACE_BYTES\n' \
       > $d/out/matmul.h &&
   ${CC:-cc} $CFLAGS_GEN -I$d/out -DM=256 -DN=256 -DK=256 tests/exec/matmul.c $d/out/matmul_api.c -lm -o $d/run >>$d.log 2>&1 &&
   run_ref $d/run >>$d.log 2>&1; then
  pass=$((pass + 1))
else
  echo "FAIL exec api (examples/api/matmul_api.c)"; sed 's/^/    /' $d.log | head -20; fail=$((fail + 1))
fi
echo "exec: $pass passed, $fail failed, $skip skipped"
