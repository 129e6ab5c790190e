# lib.sh - shell functions shared by the benchmark scripts that compare kgen with reference
# libraries (tests/bench/refs.sh, zoo.sh, zoo_wasm.sh); sourced, never run. The caller sets
# KGEN, CC, PY (a python with numpy), flags (the default CFLAGS) and work (the work folder).
#
#   best FIELD CMD...        run CMD three times, print the smallest FIELD=... it printed (or -)
#   div X Y [FORMAT]         X / Y with FORMAT (default %.2f), "-" when either is "-" or Y is 0
#   npm_ref DIR PACKAGE      DIR/node_modules/PACKAGE installed with npm when missing (and npm
#                            is there); status 0 when it and node are there afterwards
#   host_mattr               kgen's -mattr for this machine's SIMD, what -march=native compiles
#                            for: +avx512f, +avx2,+fma or +neon (nothing when it has none)
#   gen MODEL DIR [OPTS...]  kgen MODEL --target $GEN_TARGET (default c; for c with $BENCH_MATTR,
#                            default host_mattr's: the tiles of the ISA the reference libraries
#                            use here too; BENCH_MATTR= for plain --target c) -o DIR --name net
#                            --main OPTS: status 1 on failure (DIR.kgen.log says why); DIR is
#                            kept when nothing changed (its built files aside)
#   build DIR TARGETS [CFLAGS]
#                            make TARGETS in DIR in the background, two builds at a time, nice;
#                            DIR.ok when it worked (DIR.build.log otherwise); `wait` for them
#   why FILE...              the last line of the first of FILE... that has one (a log's reason)
#   cmp_npy A.npy B.npy      "max|a-b| max|b|" (or "- -", also when the shapes differ)
#   ort_time MODEL IN RUNS LOG [OPTS...]
#                            tests/bench/ort_run.mjs's line for RUNS runs after 2 warm-ups, on
#                            $pin1, with OPTS (--ort DIR ...); its errors appended to LOG
# and for the model zoo (tests/bench/zoo.sh, zoo_wasm.sh):
#   zoo_names SET            the models of SET: quick, full (every one zoo.py lists) or a
#                            comma-separated list of names
#   zoo_mflops MODEL         2 x the MACs `kgen --report` counts, in millions (or -)
#   zoo_runs MFLOPS          runs per median: $BENCH_ZOO_RUNS, else 10000 / MFLOPS within 5..20
#   geomean WHAT RATIO...    "geometric mean of WHAT over N models: G" (or why there is none)

best() {
  local field=$1 b="" v rep; shift
  for rep in 1 2 3; do
    v=$("$@" 2>/dev/null | sed -n "s/.*\b$field=\([0-9.]*\).*/\1/p" | head -1)
    [ -n "$v" ] && b=$(awk -v a="$v" -v b="$b" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')
  done
  echo "${b:--}"
}

div() { awk -v x="$1" -v y="$2" -v f="${3:-%.2f}" 'BEGIN { if (x != "-" && y != "-" && y + 0 > 0) printf f, x / y; else printf "-" }'; }

npm_ref() {
  local dir=$1 pkg=$2
  if [ ! -d $dir/node_modules/$pkg ] && command -v npm >/dev/null; then
    echo "# $pkg: npm install into $dir"
    mkdir -p $dir
    # ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node without its CUDA extras
    ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
      npm install --prefix $dir --no-audit --no-fund --silent $pkg > $dir/npm.log 2>&1
  fi
  [ -d $dir/node_modules/$pkg ] && command -v node >/dev/null
}

host_mattr() {
  local f
  f=" $(grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  if [[ $f == *" avx512f "* ]]; then echo "-mattr=+avx512f"
  elif [[ $f == *" avx2 "* && $f == *" fma "* ]]; then echo "-mattr=+avx2,+fma"
  elif [[ $f == *" asimd "* ]]; then echo "-mattr=+neon"
  fi
}
[ -n "${BENCH_MATTR+set}" ] || BENCH_MATTR=$(host_mattr)

gen() {
  local model=$1 d=$2 isa=""; shift 2
  [ "${GEN_TARGET:-c}" = c ] && isa=$BENCH_MATTR
  rm -rf $d.new
  # shellcheck disable=SC2086
  $KGEN $model --target "${GEN_TARGET:-c}" $isa -o $d.new --name net --main "$@" > $d.kgen.log 2>&1 ||
    { rm -rf $d $d.new $d.ok; return 1; }
  if [ -d $d ] && diff -rq -x net -x net_profile -x net.wasm $d $d.new > /dev/null 2>&1; then
    rm -rf $d.new
  else
    rm -rf $d $d.ok; mv $d.new $d
  fi
}

jobs_running() { jobs -rp | wc -l; }

build() {
  local cflags="${3:-$flags}"
  [ -f $1.ok ] && [ "$(cat $1.ok)" = "$CC $cflags $2" ] && [ -f $1/${2%% *} ] && return
  while [ "$(jobs_running)" -ge 2 ]; do wait -n; done
  rm -f $1.ok
  ( nice -n 10 make -s -C $1 CC="$CC" CFLAGS="$cflags" $2 > $1.build.log 2>&1 && echo "$CC $cflags $2" > $1.ok ) &
}

why() {
  local f
  for f in "$@"; do
    [ -s "$f" ] && { grep -v '^\s*$' "$f" | tail -1 | cut -c1-160; return; }
  done
  echo "no log"
}

cmp_npy() {
  $PY -c 'import sys, numpy as np; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); assert a.shape == b.shape; print("%.3g %.3g" % (float(np.abs(a.astype(np.float64) - b).max()), float(np.abs(b).max())))' "$1" "$2" 2>/dev/null || echo "- -"
}

ort_time() {
  local m=$1 x=$2 n=$3 log=$4; shift 4
  $pin1 node tests/bench/ort_run.mjs $m $x --runs $n --warmup 2 "$@" 2>>$log
}

zoo_quick="squeezenet1_1 mobilenet_v3_small shufflenet_v2 audio_frontend"
zoo_names() {
  case $1 in
    quick) echo $zoo_quick ;;
    full) $PY tests/bench/zoo.py list | cut -d' ' -f1 ;;
    *) echo ${1//,/ } ;;
  esac
}

zoo_mflops() {
  local macs
  macs=$($KGEN $1 --report 2>/dev/null | sed -n 's/^total MACs \([0-9]*\).*/\1/p')
  awk -v m="$macs" 'BEGIN { if (m == "") print "-"; else printf "%.0f", 2 * m / 1e6 }'
}

zoo_runs() {
  [ -n "${BENCH_ZOO_RUNS:-}" ] && { echo $BENCH_ZOO_RUNS; return; }
  awk -v f=$1 'BEGIN { r = f == "-" ? 5 : int(10000 / (f + 1)); print (r < 5 ? 5 : r > 20 ? 20 : r) }'
}

geomean() {
  local what=$1; shift
  echo "$*" | awk -v what="$what" '{ s = 0; for (i = 1; i <= NF; i++) s += log($i)
    if (NF) printf "geometric mean of %s over %d models: %.3f\n", what, NF, exp(s / NF)
    else printf "geometric mean of %s: - (no model has both times)\n", what }'
}
