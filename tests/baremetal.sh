#!/usr/bin/env bash
# baremetal.sh - the small_cnn test model (tests/models/small_cnn) on bare-metal Cortex-M
# under QEMU: kgen generates its C, arm-none-eabi-gcc compiles it with picolibc and
# semihosting together with tests/baremetal/main_m4.c (the input embedded as a C array by
# tests/baremetal/npy2c), qemu-system-arm runs it, and the printed outputs are compared
# with output_0.npy (rtol 1e-3, atol 1e-4). Targets: Cortex-M4F (hard float, mps2-an386)
# and Cortex-M3 (soft float, mps2-an385). Prints flash (text + data) and RAM (data + bss,
# which holds the arena, + the stack the run used, measured by painting) per target, and
# the model's share of flash, then "baremetal: N passed, N failed, N skipped".
# Without arm-none-eabi-gcc, picolibc or qemu-system-arm it prints a SKIP line (a FAIL
# when KGEN_REQUIRE_ALL=1). Run from the repository root (KGEN, BUILD, CC honoured).
set -u
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
NAME=small_cnn
UNAME=SMALL_CNN
SRC=tests/models/$NAME
out=$BUILD/baremetal
MAX_WEIGHTS=$((64 * 1024))
STRICT="-O2 -std=c99 -Wall -Wextra -pedantic -Werror"
MEM="-Wl,--defsym=__flash=0x00000000 -Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x400000"
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() {
  echo "baremetal: $pass passed, $fail failed, $skip skipped"
  [ $fail -eq 0 ]
  exit
}
indent() { sed 's/^/    /'; }

missing=""
command -v arm-none-eabi-gcc > /dev/null 2>&1 || missing="$missing arm-none-eabi-gcc"
command -v arm-none-eabi-size > /dev/null 2>&1 || missing="$missing arm-none-eabi-size"
command -v qemu-system-arm > /dev/null 2>&1 || missing="$missing qemu-system-arm"
if [ -z "$missing" ] && [ ! -e "$(arm-none-eabi-gcc -print-file-name=picolibc.specs)" ] &&
   [ ! -e /usr/lib/picolibc/arm-none-eabi/picolibc.specs ]; then
  missing=" picolibc.specs"
fi
if [ -n "$missing" ]; then
  msg="baremetal: not installed:$missing (apt-get install gcc-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm)"
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then bad "$msg"; else echo "SKIP $msg"; skip=1; fi
  finish
fi

rm -rf "$out"
mkdir -p "$out"
for tool in tests/baremetal/npy2c.c tests/models/npycmp.c; do
  t=$(basename $tool .c)
  if ! $CC -std=c99 -O2 -Wall -Wextra -pedantic -Werror -I templates $tool -o $out/$t -lm 2> $out/$t.log; then
    indent < $out/$t.log | head -5
    bad "baremetal: cannot build $tool"
    finish
  fi
done
gen=$out/$NAME
if ! "$KGEN" $SRC/model.onnx --target c -o $gen --name $NAME > $out/kgen.log 2>&1; then
  bad "baremetal: kgen $SRC/model.onnx failed: $(head -1 $out/kgen.log)"
  finish
fi
if ! $out/npy2c $SRC/input_0.npy kgen_bm_input_0 > $out/input_0.h 2> $out/npy2c.log; then
  bad "baremetal: npy2c: $(head -1 $out/npy2c.log)"
  finish
fi
nout=$($out/npy2c --count $SRC/output_0.npy)

# Berkeley sizes of a file: "text data bss"
sizes() { arm-none-eabi-size -B "$1" | awk 'NR == 2 {print $1, $2, $3}'; }

for target in m4f m3; do
  case $target in
  m4f) cpu="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" machine=mps2-an386 label="Cortex-M4F" ;;
  m3) cpu="-mcpu=cortex-m3 -mthumb" machine=mps2-an385 label="Cortex-M3" ;;
  esac
  d=$out/$target
  mkdir -p $d
  cflags="$cpu $STRICT --specs=picolibc.specs -I$gen -I$out"
  defs="-DKGEN_BM_HEADER=\"$NAME.h\" -DKGEN_BM_NAME=$NAME -DKGEN_BM_UNAME=$UNAME -DKGEN_BM_INPUT=\"input_0.h\" -DKGEN_BM_OUT_FLOATS=$nout"
  if ! { arm-none-eabi-gcc $cflags -c $gen/$NAME.c -o $d/model.o &&
         arm-none-eabi-gcc $cflags -c $gen/${NAME}_weights.c -o $d/weights.o &&
         arm-none-eabi-gcc $cflags $defs -c tests/baremetal/main_m4.c -o $d/main.o &&
         arm-none-eabi-gcc $cpu --specs=picolibc.specs --oslib=semihost --crt0=semihost $MEM \
             $d/main.o $d/model.o $d/weights.o -lm -o $d/$NAME.elf; } > $d/build.log 2>&1; then
    indent < $d/build.log | head -8
    bad "$label: $NAME does not build with arm-none-eabi-gcc $STRICT"
    continue
  fi
  # -icount makes SysTick count instructions (deterministic); semihosting output is on stderr
  timeout 60 qemu-system-arm -M $machine -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native -icount shift=6 -kernel $d/$NAME.elf \
      > $d/run.log 2>&1 < /dev/null
  rc=$?
  if [ $rc -ne 0 ]; then
    indent < $d/run.log | tail -5
    bad "$label: $NAME exited with status $rc under qemu-system-arm -M $machine"
    continue
  fi
  # the outputs are the lines that are one number each ("%.6e"); QEMU may print more
  grep -E '^[-+]?([0-9]+\.?[0-9]*(e[-+]?[0-9]+)?|nan|inf)$' $d/run.log > $d/values.txt
  if ! cmp=$($out/npycmp --rtol 1e-3 --atol 1e-4 $SRC/output_0.npy --text $d/values.txt 2>&1); then
    printf '%s\n' "$cmp" | indent
    bad "$label: $NAME's outputs differ from the reference"
    continue
  fi
  read -r text data bss <<< "$(sizes $d/$NAME.elf)"
  read -r mtext mdata mbss <<< "$(sizes $d/model.o)"
  read -r wtext wdata wbss <<< "$(sizes $d/weights.o)"
  stack=$(sed -n 's/^stack_bytes=//p' $d/run.log)
  arena=$(sed -n 's/^arena_bytes=//p' $d/run.log)
  ticks=$(sed -n 's/^systick_ticks=//p' $d/run.log)
  echo "    $label $NAME: $(printf '%s\n' "$cmp" | tail -1)"
  echo "    $label $NAME: flash $((text + data)) B = text $text + data $data (model code $((mtext + mdata)) B, weights $((wtext + wdata)) B, the rest main, embedded input and picolibc);" \
       "RAM $((data + bss + stack)) B = data $data + bss $bss (arena $arena, outputs $((4 * nout))) + stack $stack (measured);" \
       "about $((ticks * 40 / 64)) instructions"
  ok
  if [ $target = m4f ]; then
    if [ $((wtext + wdata)) -lt $MAX_WEIGHTS ]; then ok; else bad "$NAME: weights take $((wtext + wdata)) B of flash, limit $MAX_WEIGHTS"; fi
  fi
done

finish
