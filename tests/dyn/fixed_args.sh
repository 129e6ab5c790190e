# shellcheck shell=bash
# fixed_args.sh - sourced by tests/dyn.sh and tests/bench/dyn.sh, so that the build the
# benchmark times as its baseline is the one the tests check.
#
#   dyn_fixed_args ARGS TAG   ARGS (a model's args file: --dim SYMBOL=LO..HI ...) with each
#                             range fixed at TAG's extent: TAG is an in_TAG.npy's tag, its
#                             parts (AxB) in the order of the ranges in ARGS
dyn_fixed_args() {
  local fixed=$1 i=1 sym
  for sym in $(grep -o '[A-Za-z_0-9]*=[0-9]*\.\.[0-9]*' <<< "$1" | cut -d= -f1); do
    fixed=$(sed "s/$sym=[0-9]*\.\.[0-9]*/$sym=$(cut -dx -f$i <<< "$2")/" <<< "$fixed")
    i=$((i + 1))
  done
  echo "$fixed"
}
