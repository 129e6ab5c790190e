#!/usr/bin/env bash
# conformance.sh - `make conformance`: every ONNX node test (the MANIFEST.tsv rows of
# tests/data/onnx-node-tests and tests/data/onnx-node-tests-more, or of the folders
# KGEN_ONNX_TESTS and KGEN_ONNX_TESTS_MORE name: tests/conf_tests.sh) through kgen and a
# real C compiler, judged by the rule in tests/data/onnx-node-tests/README.md.
#
#  1. kgen, two jobs at a time:  $KGEN DIR/model.onnx --target c -o $BUILD/conf/T --name T
#     --bind-inputs DIR/test_data_set_0 (tests/conf_gen.sh; under tests/run.sh, one kgen
#     run per test for the four conformance targets, into $BUILD/conf-gen/T/c). A non-zero
#     exit is "unsupported" (kgen's first line is kept); a crash (status >= 128) or a
#     timeout is a failure.
#  2. The generated models are batched (BATCH per batch; names where one is the other plus
#     "_..." go to different batches, so generated symbols cannot clash), and each batch is
#     ONE C driver compiled with its models' .c files by a single `$CC -O1 -std=c99 -w`:
#     the driver #includes them, one translation unit, which compiles in a third of the
#     time that separate files take (KGEN_CONF_UNITY=0 passes them as separate files).
#     A batch that does not compile drops the models the errors name, or else is split in
#     halves, recursively, so one bad model fails alone with its compiler message.
#  3. The driver runs each model in a forked child (a crash or a hang, cut by alarm(), fails
#     that model only): it reads input_{graph_index}.pb for every listed input (kgen_io.h),
#     fills outputs and arena with garbage, calls NAME_tensors, and compares each output with
#     output_{graph_index}.pb: shape, dtype, floats |got-exp| <= 1e-5 + 1e-3*|exp| with NaN
#     meeting NaN and infinities exact, integers and bools exact.
#
# A test whose graph (MANIFEST graph_ops) holds one of ONNX's random generators (Bernoulli,
# RandomUniform(Like), RandomNormal(Like), Multinomial) is judged on its outputs' shapes and
# dtypes only: the tests' README says so of Bernoulli, whose expansion draws with
# RandomUniformLike; no generator draws the reference's numbers. So is a Dropout test whose
# inputs include training_mode (a BOOL input): in training mode it draws its mask.
#
# Tests whose MANIFEST dtypes include STRING are
# skipped (KGEN_CONF_SKIP, a regex of dtypes). Prints FAIL and UNSUPPORTED lines, a per-op table and ends
# with "conformance: N passed, N failed, N skipped" (unsupported counts as failed, except the
# known gaps listed in tests/conformance_gaps.txt, which count as skipped).
# Everything it makes is under $BUILD/conf; results.tsv there has one row per test.
#
# KGEN_CONF_TARGET=opencl runs the same tests through `--target opencl` on the OpenCL
# device (pocl on the CPU here): the driver links each model's NAME_host.c, and the
# kernels of a batch are joined into one program (one build, then pocl's cache for every
# child), checked first with clang's OpenCL front end; a model whose kernels do not
# compile fails alone. Its results go to $BUILD/conf-opencl, its last line starts with
# "conformance-opencl:".
#
# Environment: KGEN (./kgen), BUILD (build), CC (cc), KGEN_ONNX_TESTS, KGEN_ONNX_TESTS_MORE
# (empty: the first folder only), KGEN_REQUIRE_ALL=1 (a missing test folder fails instead of
# skipping), KGEN_CONF_ONLY=REGEX (run only the
# matching test names), KGEN_CONF_TIMEOUT (seconds per model run, 10), KGEN_CONF_BATCH (60),
# KGEN_GEN_CFLAGS (added to the flags of the C build, e.g. -O1 -fsanitize=address,undefined
# for `make sanitize`: inputs, outputs and the arena are allocated at exactly their size,
# and a sanitizer report fails the model, its text in the batch's run.stderr).
set -u
export LC_ALL=C
KGEN=${KGEN:-./kgen}
BUILD=${BUILD:-build}
CC=${CC:-cc}
ONLY=${KGEN_CONF_ONLY:-}
RUN_TIMEOUT=${KGEN_CONF_TIMEOUT:-10}
JOBS=2
BATCH=${KGEN_CONF_BATCH:-60}
UNITY=${KGEN_CONF_UNITY:-1}
TARGET=${KGEN_CONF_TARGET:-c}
case $TARGET in
  c) part=conformance; sub=conf; src_suffix=.c; libs="-lm" ;;
  opencl) part=conformance-opencl; sub=conf-opencl; src_suffix=_host.c; libs="-lOpenCL -lm"
          RUN_TIMEOUT=${KGEN_CONF_TIMEOUT:-60} ;;
  # cuda: for tests/gpu/run_cuda.sh on a machine with a GPU (NVCC, CUDA_ARCH=sm_90)
  cuda) part=conformance-cuda; sub=conf-cuda; src_suffix=.cu; libs="-lm"; UNITY=0
        NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}; RUN_TIMEOUT=${KGEN_CONF_TIMEOUT:-60} ;;
  *) echo "FAIL conformance: KGEN_CONF_TARGET=$TARGET (use c, opencl or cuda)"; echo "conformance: 0 passed, 1 failed, 0 skipped"; exit 1 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
templates=$here/../templates
. "$here/conf_tests.sh"
conf_dirs

missing=$(conf_missing)
if [ -n "$missing" ]; then
  if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
    echo "FAIL $part: $missing not found (KGEN_REQUIRE_ALL=1)"
    echo "$part: 0 passed, 1 failed, 0 skipped"
    exit 1
  fi
  echo "SKIP $part: $missing not found"
  echo "$part: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
if [ ! -x "$KGEN" ]; then
  echo "FAIL $part: $KGEN is not an executable (run make first)"
  echo "$part: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
if [ "$TARGET" = opencl ]; then
  # an OpenCL platform to run on, and the headers and library to build the hosts (the
  # probe goes in BUILD, which a first run with BUILD=DIR has not made yet)
  mkdir -p "${BUILD:-build}"
  if ! printf '#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void){cl_uint n=0;return clGetPlatformIDs(0,0,&n)!=CL_SUCCESS||n==0;}\n' |
       $CC -x c - -o "${BUILD:-build}/cl_probe" -lOpenCL >/dev/null 2>&1 || ! "${BUILD:-build}/cl_probe"; then
    if [ "${KGEN_REQUIRE_ALL:-0}" = 1 ]; then
      echo "FAIL $part: no OpenCL platform, headers or libOpenCL (pocl-opencl-icd ocl-icd-opencl-dev opencl-headers; KGEN_REQUIRE_ALL=1)"
      echo "$part: 0 passed, 1 failed, 0 skipped"
      exit 1
    fi
    echo "SKIP $part: no OpenCL platform, headers or libOpenCL (install pocl-opencl-icd ocl-icd-opencl-dev opencl-headers)"
    echo "$part: 0 passed, 0 failed, 1 skipped"
    exit 0
  fi
fi

mkdir -p "$BUILD"
# two runs on one build folder would delete each other's files
if command -v flock >/dev/null 2>&1; then
  exec 9> "$BUILD/$sub.lock"
  if ! flock -n 9; then
    echo "conformance: waiting for another run on $BUILD to end" >&2
    flock 9
  fi
fi
work=$(cd "$BUILD" && pwd)/$sub
kgen_abs=$(cd "$(dirname "$KGEN")" && pwd)/$(basename "$KGEN")
rm -rf "$work"
mkdir -p "$work/res"
# the test folders as one: $work/tests/MANIFEST.tsv and $work/tests/NAME
conf_view "$work/tests"
tests_abs=$work/tests
# pocl keeps compiled kernels here: fresh for each run, shared by the run's children
[ "$TARGET" = opencl ] && export POCL_CACHE_DIR=$work/pocl-cache
# a private copy, so that a rebuild of kgen during the run changes nothing
kgen_given=$kgen_abs
cp "$kgen_abs" "$work/kgen.bin" && kgen_abs=$work/kgen.bin
# limit SECONDS COMMAND...: the command, killed after SECONDS where coreutils' timeout exists
to=""
command -v timeout >/dev/null 2>&1 && to=timeout
limit() {
  if [ -n "$to" ]; then timeout "$@"; else shift; "$@"; fi
}

# ---------------------------------------------------------------- the test list

# list.tsv: name, C name, op, the skipped dtypes ("-" when it runs), how outputs are judged
# ("values", or "shape" for random outputs: shape and dtype only)
awk -F'\t' -v only="$ONLY" -v skipre="${KGEN_CONF_SKIP:-^(STRING)$}" \
    -v randre='^(Bernoulli|RandomUniform|RandomUniformLike|RandomNormal|RandomNormalLike|Multinomial)$' '
  NR == 1 { next }
  only != "" && $1 !~ only { next }
  {
    skip = ""
    n = split($4 "," $5, ty, ",")
    for (i = 1; i <= n; i++)
      if (ty[i] ~ skipre && index("," skip ",", "," ty[i] ",") == 0)
        skip = skip (skip == "" ? "" : ",") ty[i]
    c = $1
    gsub(/[^A-Za-z0-9_]/, "_", c)
    if (c !~ /^[A-Za-z_]/) c = "t_" c
    while (c in used) c = c "_"
    used[c] = 1
    judge = "values"
    m = split($7, gops, ",")
    for (i = 1; i <= m; i++)
      if (gops[i] ~ randre) judge = "shape"
    if ($2 == "Dropout" && $4 ~ /BOOL/) judge = "shape"   # training_mode given: it draws
    print $1 "\t" c "\t" $2 "\t" (skip == "" ? "-" : skip) "\t" judge
  }' "$tests_abs/MANIFEST.tsv" > "$work/list.tsv"

# ---------------------------------------------------------------- 1. kgen

# tests/conf_gen.sh: one kgen run per test, its status and first line of output in
# $gen/status.*.tsv. On its own this run makes its one target, test NAME (C name C) in
# $work/C. tests/run.sh makes every conformance target once for all the runs
# (KGEN_CONF_GEN, KGEN_CONF_GEN_TARGETS: several targets in one kgen process per test,
# into $KGEN_CONF_GEN/C/TARGET), used here when this run's target and kgen are among them.
if [ -n "${KGEN_CONF_GEN:-}" ] && [[ " ${KGEN_CONF_GEN_TARGETS:-} " == *" $TARGET "* ]] &&
   [ "${KGEN_CONF_GEN_KGEN:-}" = "$kgen_given" ]; then
  gen=$KGEN_CONF_GEN msub=/$TARGET gen_targets=$KGEN_CONF_GEN_TARGETS
else
  gen=$work msub= gen_targets=$TARGET
fi
t_start=$SECONDS
awk -F'\t' '$4 == "-" { print $1 "\t" $2 }' "$work/list.tsv" |
  bash "$here/conf_gen.sh" "$gen" "$kgen_abs" "$tests_abs" $gen_targets
gen=$(cd "$gen" && pwd)

# res/kgen.tsv: name, status, reason for the ones kgen refused; ok.txt: the ones it made
cat "$gen"/status.*.tsv > "$work/kgen-status.tsv" 2>/dev/null
awk -F'\t' -v target="$TARGET" -v gen="$gen" -v msub="$msub" -v suf="$src_suffix" -v ok="$work/ok.txt" '
    FILENAME == ARGV[1] { if ($3 == target) { rc[$1] = $4; first[$1] = $5 } next }
    $4 != "-" { next }
    {
      name = $1; c = $2
      r = (name in rc) ? rc[name] + 0 : 255
      f = first[name]
      src = gen "/" c msub "/" c suf
      if (r == 0 && (getline line < src) >= 0) { close(src); print name "\t" c > ok }
      else if (r == 0) printf "%s\tFAIL\tkgen exited 0 but wrote no %s%s\n", name, c, suf
      else if (r == 126 || r == 127) printf "%s\tFAIL\tkgen could not be run: %s\n", name, f
      else if (r == 124) printf "%s\tFAIL\tkgen timed out after 120 s\n", name
      else if (r >= 128) printf "%s\tFAIL\tkgen crashed (signal %d)%s\n", name, r - 128, (f == "" ? "" : ": " f)
      else printf "%s\tUNSUPPORTED\t%s\n", name, (f == "" ? "kgen exit status " r ", no message" : f)
    }' "$work/kgen-status.tsv" "$work/list.tsv" > "$work/res/kgen.tsv"
: >> "$work/ok.txt"

t_kgen=$SECONDS
# ---------------------------------------------------------------- 2. batches

# no name in a batch is another one's prefix followed by "_" (tests/conf_batches.awk)
awk -F'\t' -v max=$BATCH -f "$here/conf_batches.awk" "$work/ok.txt" > "$work/batches.tsv"

# The part of every driver that does not depend on its models.
cat > "$work/conf_driver.h" <<'EOF'
/* conf_driver.h - written by tests/conformance.sh: runs a table of generated models
 * (ConfModel), each in a forked child, and prints "PASS name" or "FAIL name: reason". */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgen_io.h"

typedef struct {
    const char *name, *data;
    int (*run)(kgen_tensor *const *args, int nargs, void *arena);
    const kgen_value_info *ins;
    int nin;
    const kgen_value_info *outs;
    int nout;
    unsigned long long arena;
    int values;     /* 0: outputs of random draws, judged on shape and dtype only */
} ConfModel;

static int conf_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* element i of a floating-point tensor, as a double */
static double conf_float(const kgen_io_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data + i * kgen_io_dtype_size(t->dtype);
    uint16_t h;
    float f;
    double d;
    if (kgen_io_packed_bits(t->dtype))
        return kgen_io_lowbit_float(t->dtype, (unsigned)kgen_io_packed_get(t->data, i, t->dtype));
    if (t->dtype.code == KGEN_DTYPE_FLOAT && t->dtype.bits == 8)
        return kgen_io_lowbit_float(t->dtype, *p);
    switch (t->dtype.code) {
    case KGEN_DTYPE_BFLOAT: memcpy(&h, p, 2); return kgen_bf16_to_f32(h);
    case KGEN_DTYPE_FLOAT8_E4M3FN: return kgen_f8e4m3fn_to_f32(*p);
    case KGEN_DTYPE_FLOAT8_E4M3FNUZ: return kgen_f8e4m3fnuz_to_f32(*p);
    case KGEN_DTYPE_FLOAT8_E5M2: return kgen_f8e5m2_to_f32(*p);
    case KGEN_DTYPE_FLOAT8_E5M2FNUZ: return kgen_f8e5m2fnuz_to_f32(*p);
    default: break;
    }
    switch (t->dtype.bits) {
    case 16: memcpy(&h, p, 2); return kgen_f16_to_f32(h);
    case 32: memcpy(&f, p, 4); return f;
    default: memcpy(&d, p, 8); return d;
    }
}

static long long conf_int(const kgen_io_tensor *t, size_t i)
{
    const unsigned char *p = (const unsigned char *)t->data + i * kgen_io_dtype_size(t->dtype);
    int sign = t->dtype.code == KGEN_DTYPE_INT;
    int8_t a; int16_t b; int32_t c; int64_t d;
    uint8_t ua; uint16_t ub; uint32_t uc; uint64_t ud;
    if (kgen_io_packed_bits(t->dtype))
        return kgen_io_packed_get(t->data, i, t->dtype);
    switch (t->dtype.bits) {
    case 8: if (sign) { memcpy(&a, p, 1); return a; } memcpy(&ua, p, 1); return ua;
    case 16: if (sign) { memcpy(&b, p, 2); return b; } memcpy(&ub, p, 2); return ub;
    case 32: if (sign) { memcpy(&c, p, 4); return c; } memcpy(&uc, p, 4); return uc;
    default: if (sign) { memcpy(&d, p, 8); return d; } memcpy(&ud, p, 8); return (long long)ud;
    }
}

static void conf_index(char *buf, size_t n, const kgen_io_tensor *t, size_t flat)
{
    size_t idx[KGEN_IO_MAX_DIMS];
    int k;
    for (k = t->ndim - 1; k >= 0; k--) {
        idx[k] = t->shape[k] ? flat % (size_t)t->shape[k] : 0;
        flat = t->shape[k] ? flat / (size_t)t->shape[k] : 0;
    }
    snprintf(buf, n, "[");
    for (k = 0; k < t->ndim; k++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%lu", k ? ", " : "", (unsigned long)idx[k]);
    snprintf(buf + strlen(buf), n - strlen(buf), "]");
}

/* got against expected: 0, or 1 with the reason in msg; values == 0: shape and dtype only */
static int conf_compare(int k, const char *name, const kgen_io_tensor *got, const kgen_io_tensor *exp,
                        int values, char *msg, size_t n)
{
    char a[200], b[200], at[120];
    size_t i, bad = 0, first = 0;
    int is_float = exp->dtype.code != KGEN_DTYPE_INT && exp->dtype.code != KGEN_DTYPE_UINT &&
                   exp->dtype.code != KGEN_DTYPE_BOOL;
    double worst = 0;
    int same = kgen_io_dtype_equal(got->dtype, exp->dtype) && got->ndim == exp->ndim;
    for (i = 0; same && i < (size_t)got->ndim; i++)
        same = got->shape[i] == exp->shape[i];
    if (!same) {
        snprintf(msg, n, "output %d '%s': the model makes %s, expected %s", k, name,
                 kgen_io_format_type(a, sizeof a, got->dtype, got->ndim, got->shape),
                 kgen_io_format_type(b, sizeof b, exp->dtype, exp->ndim, exp->shape));
        return 1;
    }
    for (i = 0; values && i < exp->count; i++) {
        int ok;
        if (is_float) {
            double g = conf_float(got, i), e = conf_float(exp, i);
            if (e != e)
                ok = g != g;
            else if (isinf(e))
                ok = g == e;
            else {
                ok = g == g && fabs(g - e) <= 1e-5 + 1e-3 * fabs(e);
                if (g == g && fabs(g - e) > worst)
                    worst = fabs(g - e);
            }
        } else
            ok = conf_int(got, i) == conf_int(exp, i);
        if (!ok && bad++ == 0)
            first = i;
    }
    if (bad == 0)
        return 0;
    conf_index(at, sizeof at, exp, first);
    if (is_float)
        snprintf(msg, n, "output %d '%s': %lu of %lu values differ; first at %s: got %.9g, expected %.9g "
                 "(largest finite error %.3g)", k, name, (unsigned long)bad, (unsigned long)exp->count, at,
                 conf_float(got, first), conf_float(exp, first), worst);
    else
        snprintf(msg, n, "output %d '%s': %lu of %lu values differ; first at %s: got %lld, expected %lld", k,
                 name, (unsigned long)bad, (unsigned long)exp->count, at, conf_int(got, first),
                 conf_int(exp, first));
    return 1;
}

/* one model: 0 pass, 1 fail with the reason in msg */
static int conf_check(const ConfModel *m, char *msg, size_t n)
{
    kgen_io_tensor ins[64], outs[64], exp;
    kgen_tensor views[128];
    kgen_tensor *args[128];
    char path[4096], err[512], a[200], b[200];
    kgen_io_tensor block;
    int64_t arena_shape[1];
    void *arena;
    int i, k, status, rc = 1, nin = 0, nout = 0, same;
    kgen_io_init(&block);
    if (m->nin > 64 || m->nout > 64) {
        snprintf(msg, n, "too many inputs or outputs for the driver");
        return 1;
    }
    snprintf(path, sizeof path, "%s/output_%d.pb", m->data, m->nout);
    if (conf_exists(path)) {
        snprintf(msg, n, "the model has %d outputs, the test expects more (%s exists)", m->nout, path);
        return 1;
    }
    for (i = 0; i < m->nin; i++, nin++) {
        const kgen_value_info *v = &m->ins[i];
        snprintf(path, sizeof path, "%s/input_%d.pb", m->data, (int)v->graph_index);
        if (kgen_io_read_pb(path, &ins[i], err, sizeof err) != KGEN_IO_OK) {
            snprintf(msg, n, "input %d '%s': %s", i, v->name, err);
            goto done;
        }
        same = kgen_io_dtype_equal(v->dtype, ins[i].dtype) && v->ndim == ins[i].ndim;
        for (k = 0; same && k < v->ndim; k++)
            same = v->shape[k] == ins[i].shape[k];
        if (!same) {
            snprintf(msg, n, "input %d '%s': the model takes %s, input_%d.pb is %s", i, v->name,
                     kgen_io_format_type(a, sizeof a, v->dtype, v->ndim, v->shape), (int)v->graph_index,
                     kgen_io_format_type(b, sizeof b, ins[i].dtype, ins[i].ndim, ins[i].shape));
            nin++;
            goto done;
        }
        views[i] = kgen_io_view(&ins[i]);
    }
    for (i = 0; i < m->nout; i++, nout++) {
        const kgen_value_info *v = &m->outs[i];
        if (kgen_io_alloc(&outs[i], v->dtype, v->ndim, v->shape, err, sizeof err) != KGEN_IO_OK) {
            snprintf(msg, n, "output %d '%s': %s", i, v->name, err);
            goto done;
        }
        memset(outs[i].data, 0xff, outs[i].nbytes);   /* NaN, -1, 0xff: unwritten values show */
        views[m->nin + i] = kgen_io_view(&outs[i]);
    }
    for (i = 0; i < m->nin + m->nout; i++)
        args[i] = &views[i];
    /* exactly the planned size: under AddressSanitizer one byte more is caught */
    arena_shape[0] = (int64_t)m->arena;
    if (kgen_io_alloc(&block, kgen_io_dtype(KGEN_DTYPE_UINT, 8), 1, arena_shape, err, sizeof err) != KGEN_IO_OK) {
        snprintf(msg, n, "an arena of %llu bytes: %s", m->arena, err);
        goto done;
    }
    arena = block.data;
    memset(arena, 0xa5, (size_t)m->arena);        /* the arena is not zeroed for the model */
    status = m->run(args, m->nin + m->nout, arena);
    if (status != KGEN_OK) {
        snprintf(msg, n, "NAME_tensors returned %d (%s)", status, kgen_status_str(status));
        goto done;
    }
    for (i = 0; i < m->nout; i++) {
        const kgen_value_info *v = &m->outs[i];
        snprintf(path, sizeof path, "%s/output_%d.pb", m->data, (int)v->graph_index);
        if (kgen_io_read_pb(path, &exp, err, sizeof err) != KGEN_IO_OK) {
            snprintf(msg, n, "output %d '%s': %s", i, v->name, err);
            goto done;
        }
        k = conf_compare(i, v->name, &outs[i], &exp, m->values, msg, n);
        kgen_io_free(&exp);
        if (k)
            goto done;
    }
    rc = 0;
done:
    for (i = 0; i < nin; i++)
        kgen_io_free(&ins[i]);
    for (i = 0; i < nout; i++)
        kgen_io_free(&outs[i]);
    kgen_io_free(&block);
    return rc;
}

/* every model in a child of its own: a crash or a hang fails that model only */
/* argv: SECONDS per model, FIRST model to run (0). With $KGEN_CONF_INPROC set the models
 * run in this process, one after the other (GPU runtimes are slow to start in every
 * child); a crash ends the run, and the caller starts again at the first model without a
 * result, in the forked mode. */
static int conf_main(const ConfModel *models, int count, int argc, char **argv)
{
    unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 10;
    int i, failed = 0, first = argc > 2 ? atoi(argv[2]) : 0;
    if (getenv("KGEN_CONF_INPROC")) {
        for (i = first; i < count; i++) {
            char msg[2048];
            alarm(seconds);
            if (conf_check(&models[i], msg, sizeof msg)) {
                printf("FAIL %s: %s\n", models[i].name, msg);
                failed++;
            } else {
                printf("PASS %s\n", models[i].name);
            }
            fflush(stdout);
        }
        return failed != 0;
    }
    for (i = first; i < count; i++) {
        char msg[2048];
        int fd[2], st = 0;
        ssize_t got;
        size_t len = 0;
        pid_t pid;
        fflush(stdout);
        if (pipe(fd) != 0 || (pid = fork()) < 0) {
            printf("FAIL %s: the driver could not fork\n", models[i].name);
            failed++;
            continue;
        }
        if (pid == 0) {
            close(fd[0]);
            fprintf(stderr, "== %s\n", models[i].name);   /* what a sanitizer report is about */
            alarm(seconds);
            msg[0] = 'P';
            if (conf_check(&models[i], msg + 1, sizeof msg - 1))
                msg[0] = 'F';
            len = strlen(msg);
            while (len > 0 && (got = write(fd[1], msg, len)) > 0)
                len -= (size_t)got;
            _exit(0);
        }
        close(fd[1]);
        while (len < sizeof msg - 1 && (got = read(fd[0], msg + len, sizeof msg - 1 - len)) > 0)
            len += (size_t)got;
        msg[len] = 0;
        close(fd[0]);
        while (waitpid(pid, &st, 0) < 0)
            ;
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
            printf("FAIL %s: timed out after %u s\n", models[i].name, seconds);
        else if (WIFSIGNALED(st))
            printf("FAIL %s: crashed (signal %d, %s)\n", models[i].name, WTERMSIG(st),
                   WTERMSIG(st) == SIGSEGV ? "SIGSEGV" : WTERMSIG(st) == SIGFPE ? "SIGFPE" :
                   WTERMSIG(st) == SIGABRT ? "SIGABRT" : WTERMSIG(st) == SIGBUS ? "SIGBUS" :
                   WTERMSIG(st) == SIGILL ? "SIGILL" : "other");
        else if (len == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            printf("FAIL %s: the child exited with status %d and no result (its stderr, a sanitizer's "
                   "report say, is in run.stderr)\n", models[i].name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        else if (msg[0] == 'P')
            printf("PASS %s\n", models[i].name);
        else
            printf("FAIL %s: %s\n", models[i].name, msg + 1);
        failed += !(len > 0 && msg[0] == 'P' && WIFEXITED(st));
    }
    fflush(stdout);
    return failed != 0;
}
EOF

# driver DIR NAME... writes DIR/driver.c for the models (test names; C names from list.tsv)
gen_driver() {
  local dir=$1; shift
  mkdir -p "$dir"
  {
    echo "/* generated by tests/conformance.sh */"
    echo "#include \"conf_driver.h\""
    local i=0 name c C
    for name in "$@"; do
      c=${cname[$name]}
      C=${c^^}
      printf '%s\n' "" "#include \"$c$msub/$c.h\"" "#if defined(${C}_ARENA_BYTES)" \
        "#define M${i}_ARENA ${C}_ARENA_BYTES" "#define M${i}_NIN ${C}_NUM_INPUTS" "#define M${i}_NOUT ${C}_NUM_OUTPUTS" \
        "#else" "#define M${i}_ARENA ${c}_ARENA_BYTES" "#define M${i}_NIN ${c}_NUM_INPUTS" "#define M${i}_NOUT ${c}_NUM_OUTPUTS" \
        "#endif" "#if M${i}_NIN > 0" "#define M${i}_INS ${c}_input_info" "#else" "#define M${i}_INS NULL" "#endif"
      i=$((i + 1))
    done
    if [ "$UNITY" = 1 ]; then
      echo
      echo "/* the models' sources, in this one translation unit */"
      for name in "$@"; do
        c=${cname[$name]}
        C=${c^^}
        [ "$TARGET" = opencl ] && echo "#define ${C}_CL_FILE \"$dir/batch.cl\""
        echo "#include \"$c$msub/$c$src_suffix\""
        [ -f "$gen/$c$msub/${c}_weights.c" ] && echo "#include \"$c$msub/${c}_weights.c\""
      done
    fi
    echo
    echo "static const ConfModel conf_models[] = {"
    i=0
    for name in "$@"; do
      c=${cname[$name]}
      echo "    {\"$name\", \"$tests_abs/$name/test_data_set_0\", ${c}_tensors, M${i}_INS, M${i}_NIN, ${c}_output_info, M${i}_NOUT, M${i}_ARENA, ${judge[$name]}},"
      i=$((i + 1))
    done
    echo "};"
    echo
    echo "int main(int argc, char **argv) { return conf_main(conf_models, (int)(sizeof conf_models / sizeof conf_models[0]), argc, argv); }"
  } > "$dir/driver.c"
}

# join_cl DIR NAME...: DIR/batch.cl, one OpenCL program with the kernels of all these
# models (the common head once). When clang's OpenCL front end rejects it, the models
# whose own .cl it rejects fail with the first error, and the batch is built without them.
join_cl() {
  local dir=$1; shift
  local name c first=1 bad=() keep=()
  mkdir -p "$dir"
  # the first file whole, the others from the line after their "kernels" line (one awk)
  local cls=()
  for name in "$@"; do c=${cname[$name]}; cls+=("$gen/$c$msub/$c.cl"); done
  awk 'FNR == 1 { nfile++; seen = 0 } nfile == 1 || seen { print; next }
       FNR > 1 && /^\/\* -* kernels \*\/$/ { seen = 1 }' "${cls[@]}" > "$dir/batch.cl"
  command -v clang >/dev/null 2>&1 || return 0
  clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only -w "$dir/batch.cl" > "$dir.cl.log" 2>&1 && return 0
  for name in "$@"; do
    c=${cname[$name]}
    if clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only -w "$gen/$c$msub/$c.cl" > "$work/$c.cl.log" 2>&1; then
      keep+=("$name")
    else
      printf '%s\tFAIL\tOpenCL C does not compile: %s\n' "$name" \
        "$(grep -m1 'error:' "$work/$c.cl.log" | sed "$unpath" | tr '\t' ' ' | cut -c1-300)" >> "$dir.res"
    fi
  done
  [ ${#keep[@]} -gt 0 ] && build "${dir}k" "${keep[@]}" && cat "${dir}k.built" >> "$dir.built" 2>/dev/null
  cat "${dir}k.res" >> "$dir.res" 2>/dev/null
  return 1
}

# build DIR NAME...: compile a driver for these models. On errors that name model files,
# those models fail with their first error and the rest is built again; other errors split
# the batch in halves. Built drivers are listed in DIR.../run (one executable per line).
build() {
  local dir=$1; shift
  local name c files=() log=$dir.cc.log
  gen_driver "$dir" "$@"
  for name in "$@"; do
    [ "$UNITY" = 1 ] && break
    c=${cname[$name]}
    files+=("$gen/$c$msub/$c$src_suffix")
    [ -f "$gen/$c$msub/${c}_weights.c" ] && files+=("$gen/$c$msub/${c}_weights.c")
  done
  [ "$TARGET" = opencl ] && { join_cl "$dir" "$@" || return 0; }
  if [ "$TARGET" = cuda ]; then
    # the models' .cu files in one nvcc run, their weights and the driver by the C compiler
    local wfiles=() cufiles=()
    for name in "$@"; do c=${cname[$name]}; wfiles+=("$gen/$c$msub/${c}_weights.c"); cufiles+=("$gen/$c$msub/$c.cu"); done
    printf '#include "%s"\n' "${cufiles[@]}" > "$dir/batch.cu"
    if "$NVCC" -arch=${CUDA_ARCH:-sm_90} -O1 -w -I"$templates" -c "$dir/batch.cu" -o "$dir/batch.o" > "$log" 2>&1 &&
       $CC -O1 -std=c99 -w -I"$work" -I"$gen" -I"$templates" -c "$dir/driver.c" -o "$dir/driver.o" >> "$log" 2>&1 &&
       cat "${wfiles[@]}" > "$dir/weights.c" && $CC -O1 -w -c "$dir/weights.c" -o "$dir/weights.o" >> "$log" 2>&1 &&
       "$NVCC" -arch=${CUDA_ARCH:-sm_90} -o "$dir/run" "$dir/driver.o" "$dir/batch.o" "$dir/weights.o" >> "$log" 2>&1; then
      echo "$dir/run" >> "$dir.built"
      return
    fi
    # nvcc writes FILE(LINE): error
    sed -i -E "s|^($gen/[^(]*)\(([0-9]+)\): error|\1:\2:0: error|" "$log"
  elif $CC -O1 -std=c99 -w ${KGEN_GEN_CFLAGS:-} -I"$work" -I"$gen" -I"$templates" -o "$dir/run" "$dir/driver.c" "${files[@]}" $libs > "$log" 2>&1; then
    echo "$dir/run" >> "$dir.built"
    return
  fi
  # errors inside a model's own files (its .c, .h, weights) name it
  local bad=() keep=()
  for name in "$@"; do
    c=${cname[$name]}
    if grep -q "^$gen/$c$msub/[^:]*:[0-9]*:[0-9:]* error:" "$log"; then bad+=("$name"); else keep+=("$name"); fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    for name in "${bad[@]}"; do
      c=${cname[$name]}
      printf '%s\tFAIL\tdoes not compile: %s\n' "$name" \
        "$(grep -m1 "^$gen/$c$msub/[^:]*:[0-9]*:[0-9:]* error:" "$log" | sed "$unpath" | tr '\t' ' ' | cut -c1-300)" >> "$dir.res"
    done
    [ ${#keep[@]} -gt 0 ] && build "${dir}r" "${keep[@]}" && cat "${dir}r.built" >> "$dir.built" 2>/dev/null
    cat "${dir}r.res" >> "$dir.res" 2>/dev/null
    return 0
  fi
  if [ $# -eq 1 ]; then
    printf '%s\tFAIL\tdoes not build: %s\n' "$1" \
      "$(grep -m1 -E 'error|undefined|multiple definition' "$log" | sed "$unpath_g" | tr '\t' ' ' | cut -c1-300)" >> "$dir.res"
    return 0
  fi
  local half=$(($# / 2))
  build "${dir}a" "${@:1:half}"
  build "${dir}b" "${@:half+1}"
  cat "${dir}a.built" "${dir}b.built" >> "$dir.built" 2>/dev/null
  cat "${dir}a.res" "${dir}b.res" >> "$dir.res" 2>/dev/null
  return 0
}

# batch B: build its driver(s), run them, and leave name/status/reason rows in res/B.tsv
batch() {
  local b=$1 dir=$work/b$1
  local names=()
  mapfile -t names < <(awk -F'\t' -v b="$b" '$1 == b { print $2 }' "$work/batches.tsv")
  : > "$dir.built"
  : > "$dir.res"
  build "$dir" "${names[@]}"
  {
    cat "$dir.res"
    local exe
    while read -r exe; do
      [ -n "$exe" ] || continue
      if [ "$TARGET" = c ]; then
        limit $((RUN_TIMEOUT * 70 + 60)) "$exe" "$RUN_TIMEOUT" 2> "$exe.stderr"
      else
        # in one process; after a crash or a hang, the rest each in a child of its own
        local got total
        KGEN_CONF_INPROC=1 limit $((RUN_TIMEOUT * 70 + 60)) "$exe" "$RUN_TIMEOUT" 2> "$exe.stderr" > "$exe.out"
        cat "$exe.out"
        got=$(grep -c -E '^(PASS|FAIL) ' "$exe.out")
        total=$(grep -c '^    {"' "$(dirname "$exe")/driver.c")
        [ "$got" -lt "$total" ] && limit $((RUN_TIMEOUT * 70 + 60)) "$exe" "$RUN_TIMEOUT" "$got" 2>> "$exe.stderr"
      fi |
        sed -n -e 's/^PASS \([^ ]*\)$/\1\tPASS\t/p' -e 's/^FAIL \([^:]*\): \(.*\)$/\1\tFAIL\t\2/p' | tr -d '\r'
    done < "$dir.built"
  } > "$work/res/b$b.tsv"
}

declare -A cname judge
while IFS=$'\t' read -r name c; do cname[$name]=$c; done < "$work/ok.txt"
while IFS=$'\t' read -r name c op skip how; do
  judge[$name]=1
  [ "$how" = shape ] && judge[$name]=0
done < "$work/list.tsv"
# messages name a model's files as C/FILE, and the run's as PATH under $work
unpath="s|^$gen/\([^/]*\)$msub/|\1/|; s|^$work/||"
unpath_g="s|$gen/\([^/]*\)$msub/|\1/|g; s|$work/||g"

nbatches=$(awk -F'\t' 'BEGIN { n = 0 } $1 + 1 > n { n = $1 + 1 } END { print n }' "$work/batches.tsv")
running=0
for ((b = 0; b < nbatches; b++)); do
  batch $b &
  running=$((running + 1))
  if [ $running -ge $JOBS ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
t_end=$SECONDS

# ---------------------------------------------------------------- report

cat "$work"/res/*.tsv > "$work/res.all"
awk -F'\t' -v OFS='\t' '
  FILENAME == ARGV[1] { st[$1] = $2; why[$1] = $3; next }
  {
    name = $1; op = $3; skip = $4
    if (skip != "-") { s = "SKIP"; r = skip }
    else if (name in st) { s = st[name]; r = why[name] }
    else { s = "FAIL"; r = "no result (the batch driver was killed?)" }
    print name, op, s, r
  }' "$work/res.all" "$work/list.tsv" > "$work/results.tsv"

# a test tests/conformance_gaps.txt lists as "wrong: ..." fails as a known failure
gaps=tests/conformance_gaps.txt
[ -f $gaps ] || gaps=/dev/null
if [ "$TARGET" != c ] && [ -f tests/conformance_gaps_c_only.txt ]; then
  cat $gaps tests/conformance_gaps_c_only.txt > "$work/gaps.txt"   # what only the C target supports yet
  gaps=$work/gaps.txt
fi
awk 'NR == FNR { if ($2 == "wrong:") w[$1] = 1; next }
  $3 == "FAIL" { print (($1 in w) ? "KNOWN FAIL " : "FAIL ") $1 ": " $4 }' $gaps FS='\t' "$work/results.tsv"
awk -F'\t' '$3 == "UNSUPPORTED" { print "UNSUPPORTED " $1 ": " $4 }' "$work/results.tsv"

echo
printf '%-32s %7s %7s %12s %8s\n' op_type passed failed unsupported skipped
awk -F'\t' '
  { ops[$2] = 1; n[$2, $3]++ }
  END { for (o in ops) printf "%-32s %7d %7d %12d %8d\n", o, n[o, "PASS"], n[o, "FAIL"], n[o, "UNSUPPORTED"], n[o, "SKIP"] }
' "$work/results.tsv" | sort
echo

awk -F'\t' '
  $3 == "SKIP" { k = split($4, ty, ","); for (i = 1; i <= k; i++) c[ty[i]]++ }
  END { for (d in c) print d " " c[d] }
' "$work/results.tsv" | sort | paste -sd, - | sed 's/,/, /g; s/^./skipped tests by dtype: &/'

# known gaps (tests/conformance_gaps.txt): a listed test refused as unsupported is not a
# failure, nor is a failure of one listed as "wrong: ..."
known=$(awk 'NR == FNR { if ($1 !~ /^#/ && NF) g[$1] = $2 == "wrong:" ? 2 : 1; next }
  ($3 == "UNSUPPORTED" && ($1 in g)) || ($3 == "FAIL" && g[$1] == 2)' $gaps FS='\t' "$work/results.tsv" | wc -l)
awk 'NR == FNR { if ($1 !~ /^#/ && NF) g[$1] = 1; next } ($3 == "PASS" && ($1 in g)) { print "GAP CLOSED " $1 ": passes now; remove it from tests/conformance_gaps.txt" }' $gaps FS='\t' "$work/results.tsv"
pass=$(awk -F'\t' '$3 == "PASS"' "$work/results.tsv" | wc -l)
fail=$(awk -F'\t' '$3 == "FAIL" || $3 == "UNSUPPORTED"' "$work/results.tsv" | wc -l)
unsup=$(awk -F'\t' '$3 == "UNSUPPORTED"' "$work/results.tsv" | wc -l)
skip=$(awk -F'\t' '$3 == "SKIP"' "$work/results.tsv" | wc -l)
total=$((pass + fail + skip))
echo "time: kgen $((t_kgen - t_start)) s, build and run $((t_end - t_kgen)) s ($nbatches batches of at most $BATCH)"
echo "($unsup of the failures are unsupported by kgen; $known failures are known gaps listed in $gaps; details in $work/results.tsv)"
echo "passed $pass of $total tests ($((pass * 1000 / (total ? total : 1))) per mille); $skip skipped for element types not supported yet"
fail=$((fail - known))
skip=$((skip + known))
echo "$part: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
