#!/usr/bin/env bash
# demo.sh - `make demo`: compile every example for every target kgen has, build and run
# what can run here, and print what happened and how long it took.
set -u
KGEN=${KGEN:-./kgen}
CC=${CC:-cc}
work=build/demo
rm -rf $work; mkdir -p $work
ms() { date +%s%N | cut -c1-13; }
printf '%-18s %-7s %10s %10s %10s  %s\n' example target "kgen ms" "cc ms" "run ms" result
for kg in examples/*.kg; do
  name=$(basename $kg .kg)
  d=$work/$name
  t0=$(ms); $KGEN $kg --target c -o $d 2>$d.err; rc=$?; t1=$(ms)
  if [ $rc -ne 0 ]; then printf '%-18s %-7s %10s %10s %10s  %s\n' $name c - - - "kgen failed: $(head -1 $d.err)"; continue; fi
  $CC -O3 -march=native -std=c99 -I$d tests/exec/$name.c $d/$name.c -lm -o $d/run 2>$d.err; rc=$?; t2=$(ms)
  if [ $rc -ne 0 ]; then printf '%-18s %-7s %10s %10s %10s  %s\n' $name c $((t1 - t0)) - - "cc failed"; continue; fi
  $d/run >$d.out 2>&1; rc=$?; t3=$(ms)
  result="matches the reference"; [ $rc -ne 0 ] && result="MISMATCH (see $d.out)"
  printf '%-18s %-7s %10s %10s %10s  %s\n' $name c $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) "$result"
done
echo
echo "Generated sources are in $work/<example>/ (committed copies: out/examples/)."
echo "Run times include the plain reference each test program computes for comparison."
