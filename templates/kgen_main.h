/* kgen_main.h - the command-line runner of a generated model. `kgen --main` writes a
 * NAME_main.c that includes the model's header, names the model's symbols and includes
 * this file, which supplies main():
 *
 *     #define _POSIX_C_SOURCE 199309L          (before any #include: clock_gettime, mkdir)
 *     #include "NAME.h"
 *     #define KGEN_MAIN_NAME "NAME"
 *     #define KGEN_MAIN_RUN NAME_tensors
 *     #define KGEN_MAIN_INPUTS NAME_input_info
 *     #define KGEN_MAIN_OUTPUTS NAME_output_info
 *     #define KGEN_MAIN_NUM_INPUTS NAME_NUM_INPUTS
 *     #define KGEN_MAIN_NUM_OUTPUTS NAME_NUM_OUTPUTS
 *     #define KGEN_MAIN_ARENA_BYTES NAME_ARENA_BYTES
 *     #include "kgen_main.h"
 *
 * The program it makes (the same on every host target):
 *
 *     NAME IN0 [IN1 ...] [-o OUTDIR]   reads the inputs (.npy or ONNX TensorProto .pb, by
 *                                       extension) in the order of NAME_input_info, checks
 *                                       each dtype and shape, runs the model and writes
 *                                       OUTDIR/output_0.npy ... (OUTDIR is created); without
 *                                       -o it prints each output's first values instead
 *     NAME --bench N IN0 ...           one warm-up run, then N timed runs; prints
 *                                       "median_ms=... min_ms=... mean_ms=... runs=N"
 *     NAME --profile N IN0 ...         built with -DKGEN_PROFILE (the Makefile's NAME_profile):
 *                                       one warm-up run, then N runs timing each kernel call;
 *                                       prints "kernel_ms I NAME MEDIAN" per kernel, then
 *                                       "profile_sum_ms=... median_ms=... runs=N kernels=K clock=C"
 *                                       (the sum of the kernels' medians; the whole run's).
 *                                       Without OpenMP a kernel's time is the thread's CPU
 *                                       time (CLOCK_THREAD_CPUTIME_ID), which other processes
 *                                       on a busy machine do not inflate; the line says
 *                                       "clock=cpu", or "clock=wall" for a -fopenmp build and
 *                                       where reading the CPU clock takes over 250 ns
 *     NAME --info                      the inputs and outputs with their shapes
 *     NAME --help                      usage
 *
 * Exit status: 0 on success, 1 when a file cannot be read or written, an input does not
 * match the model or the model returns an error status, 2 for a usage error.
 *
 * A model without inputs may leave NAME_input_info undefined: it is only referenced when
 * NAME_NUM_INPUTS > 0. Needs POSIX (clock_gettime, mkdir) besides C99 and libc. With
 * KGEN_PROFILE defined it supplies kgen_profile_begin() and kgen_profile_end(), the hooks
 * that kgen_runtime.h's KGEN_PROFILE_BEGIN/END call around each kernel of the model.
 */
#ifndef KGEN_MAIN_H
#define KGEN_MAIN_H

#if !defined(KGEN_MAIN_NAME) || !defined(KGEN_MAIN_RUN) || !defined(KGEN_MAIN_OUTPUTS) ||     \
    !defined(KGEN_MAIN_NUM_INPUTS) || !defined(KGEN_MAIN_NUM_OUTPUTS) || !defined(KGEN_MAIN_ARENA_BYTES)
#error "define KGEN_MAIN_NAME, _RUN, _INPUTS, _OUTPUTS, _NUM_INPUTS, _NUM_OUTPUTS and _ARENA_BYTES first"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "kgen_io.h"

#if !defined(CLOCK_MONOTONIC)
#error "kgen_main.h needs clock_gettime: put #define _POSIX_C_SOURCE 199309L before the first #include"
#endif

#define KGEN_MAIN_NIN_ ((int)(KGEN_MAIN_NUM_INPUTS))
#define KGEN_MAIN_NOUT_ ((int)(KGEN_MAIN_NUM_OUTPUTS))

static const kgen_value_info *kgen_main_input_(int i)
{
#if KGEN_MAIN_NUM_INPUTS > 0
    return &KGEN_MAIN_INPUTS[i];
#else
    (void)i;
    return NULL;
#endif
}

static const kgen_value_info *kgen_main_output_(int i) { return &KGEN_MAIN_OUTPUTS[i]; }

static void kgen_main_usage_(FILE *f)
{
    char ty[256];
    const kgen_value_info *v;
    int i;
    fprintf(f, "usage: %s INPUTS [-o OUTDIR]\n"
               "         run once, write OUTDIR/output_0.npy ... (no -o: print each output's first values)\n"
               "       %s --bench N INPUTS\n"
               "         one warm-up run, then N timed runs: median_ms=... min_ms=... mean_ms=... runs=N\n"
               "       %s --profile N INPUTS\n"
               "         (built with -DKGEN_PROFILE) one warm-up run, then N runs: each kernel's median ms\n"
               "       %s --info\n"
               "         the inputs and outputs\n",
            KGEN_MAIN_NAME, KGEN_MAIN_NAME, KGEN_MAIN_NAME, KGEN_MAIN_NAME);
    if (KGEN_MAIN_NIN_ == 0)
        fprintf(f, "INPUTS: none, the model takes no inputs\n");
    else
        fprintf(f, "INPUTS: %d .npy or ONNX TensorProto .pb file%s, in this order:\n", KGEN_MAIN_NIN_,
                KGEN_MAIN_NIN_ == 1 ? "" : "s");
    for (i = 0; i < KGEN_MAIN_NIN_; i++) {
        v = kgen_main_input_(i);
        fprintf(f, "  '%s': %s\n", v->name, kgen_io_format_type(ty, sizeof ty, v->dtype, v->ndim, v->shape));
    }
}

static void kgen_main_info_(void)
{
    char ty[256];
    const kgen_value_info *v;
    int i;
    printf("%s: %d input%s, %d output%s, arena %lu bytes\n", KGEN_MAIN_NAME, KGEN_MAIN_NIN_,
           KGEN_MAIN_NIN_ == 1 ? "" : "s", KGEN_MAIN_NOUT_, KGEN_MAIN_NOUT_ == 1 ? "" : "s",
           (unsigned long)(KGEN_MAIN_ARENA_BYTES));
    for (i = 0; i < KGEN_MAIN_NIN_; i++) {
        v = kgen_main_input_(i);
        printf("input %d '%s': %s (graph input %d)\n", i, v->name,
               kgen_io_format_type(ty, sizeof ty, v->dtype, v->ndim, v->shape), (int)v->graph_index);
    }
    for (i = 0; i < KGEN_MAIN_NOUT_; i++) {
        v = kgen_main_output_(i);
        printf("output %d '%s': %s\n", i, v->name, kgen_io_format_type(ty, sizeof ty, v->dtype, v->ndim, v->shape));
    }
#ifdef KGEN_MAIN_DIMS
    /* (-1 above: a dim decided at run time) */
    for (i = 0; i < KGEN_MAIN_NUM_DIMS; i++)
        printf("dim %s: %lld..%lld (input %d dim %d)\n", KGEN_MAIN_DIMS[i].name, (long long)KGEN_MAIN_DIMS[i].lo,
               (long long)KGEN_MAIN_DIMS[i].hi, (int)KGEN_MAIN_DIMS[i].input, (int)KGEN_MAIN_DIMS[i].dim);
#endif
}

/* mkdir -p */
static int kgen_main_mkdirs_(const char *dir)
{
    char path[4096];
    size_t i, n = strlen(dir);
    struct stat st;
    if (n == 0 || n >= sizeof path) {
        fprintf(stderr, "%s: bad output directory '%s'\n", KGEN_MAIN_NAME, dir);
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != 0)
            continue;
        path[i] = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "%s: cannot create %s: %s\n", KGEN_MAIN_NAME, path, strerror(errno));
            return -1;
        }
        path[i] = dir[i];
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s is not a directory\n", KGEN_MAIN_NAME, dir);
        return -1;
    }
    return 0;
}

/* clock c's time in ms */
static double kgen_main_ms_(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double kgen_main_now_ms_(void) { return kgen_main_ms_(CLOCK_MONOTONIC); }

static int kgen_main_cmp_(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median of n times (sorts them) */
static double kgen_main_median_(double *t, long n)
{
    qsort(t, (size_t)n, sizeof *t, kgen_main_cmp_);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

#ifdef KGEN_PROFILE
/* A kernel's time: the calling thread's CPU time where that is the whole of the kernel's
 * work (no OpenMP), so that a time slice given to another process in the middle of a
 * kernel does not count, unless reading that clock is slow: it is a system call, which
 * costs 1.3 us under some hypervisors (a Firecracker VM: every kernel of 40 ns then read
 * as 1.3 us), and then wall time, whose reading costs tens of ns; the medians of many runs
 * filter out a time slice taken by another process. Wall time for a build whose kernels
 * run on several threads. kgen_main_prof_pick_clock_() decides before the runs. */
#define KGEN_MAIN_PROF_CPU_MAX_NS_ 250.0
static clockid_t kgen_main_prof_clock_ = CLOCK_MONOTONIC;
static const char *kgen_main_prof_clock_name_ = "wall";

static double kgen_main_prof_now_ms_(void) { return kgen_main_ms_(kgen_main_prof_clock_); }

/* the CPU clock where one reading of it (the least time between two in a row, of 64
 * tries) takes at most KGEN_MAIN_PROF_CPU_MAX_NS_ */
static void kgen_main_prof_pick_clock_(void)
{
#if defined(CLOCK_THREAD_CPUTIME_ID) && !defined(_OPENMP)
    double best = 1e30;
    int i;
    for (i = 0; i < 64; i++) {
        double a = kgen_main_ms_(CLOCK_THREAD_CPUTIME_ID), b = kgen_main_ms_(CLOCK_THREAD_CPUTIME_ID);
        if (b - a < best)
            best = b - a;
    }
    if (best * 1e6 <= KGEN_MAIN_PROF_CPU_MAX_NS_) {
        kgen_main_prof_clock_ = CLOCK_THREAD_CPUTIME_ID;
        kgen_main_prof_clock_name_ = "cpu";
    }
#endif
}

/* The hooks around each kernel call: the time of each kernel in the current run, by its
 * index in the model (the table grows during the warm-up run, not while timing). */
static double kgen_main_prof_t0_;
static double *kgen_main_prof_ms_;
static const char **kgen_main_prof_names_;
static int kgen_main_prof_n_, kgen_main_prof_cap_;

void kgen_profile_begin(int kernel)
{
    (void)kernel;
    kgen_main_prof_t0_ = kgen_main_prof_now_ms_();
}

void kgen_profile_end(int kernel, const char *name)
{
    double t = kgen_main_prof_now_ms_() - kgen_main_prof_t0_;
    if (kernel < 0)
        return;
    if (kernel >= kgen_main_prof_cap_) {
        int cap = kernel + 64, i;
        double *ms = (double *)realloc(kgen_main_prof_ms_, (size_t)cap * sizeof *ms);
        const char **names = ms ? (const char **)realloc((void *)kgen_main_prof_names_, (size_t)cap * sizeof *names) : NULL;
        if (!ms || !names) {
            fprintf(stderr, "%s: out of memory\n", KGEN_MAIN_NAME);
            exit(1);
        }
        for (i = kgen_main_prof_cap_; i < cap; i++) {
            ms[i] = 0;
            names[i] = "?";
        }
        kgen_main_prof_ms_ = ms;
        kgen_main_prof_names_ = names;
        kgen_main_prof_cap_ = cap;
    }
    if (kernel >= kgen_main_prof_n_)
        kgen_main_prof_n_ = kernel + 1;
    kgen_main_prof_names_[kernel] = name;
    kgen_main_prof_ms_[kernel] += t;
}
#endif

/* the first few elements of an output, for a run without -o */
static void kgen_main_print_(int k, const kgen_io_tensor *t)
{
    char ty[256];
    const unsigned char *p = (const unsigned char *)t->data;
    size_t i, n = t->count < 8 ? t->count : 8, sz = kgen_io_dtype_size(t->dtype);
    printf("output %d '%s': %s =", k, kgen_main_output_(k)->name,
           kgen_io_format_type(ty, sizeof ty, t->dtype, t->ndim, t->shape));
    for (i = 0; i < n; i++, p += sz) {
        int8_t i8; int16_t i16; int32_t i32; int64_t i64;
        uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
        float f32; double f64;
        if (kgen_io_packed_bits(t->dtype)) {   /* (p is not used: several elements a byte) */
            if (t->dtype.code == KGEN_DTYPE_FLOAT)
                printf(" %.6g", kgen_io_lowbit_float(t->dtype, (unsigned)kgen_io_packed_get(t->data, i, t->dtype)));
            else
                printf(" %lld", kgen_io_packed_get(t->data, i, t->dtype));
            continue;
        }
        switch (t->dtype.code * 100 + t->dtype.bits) {
        case KGEN_DTYPE_INT * 100 + 8: memcpy(&i8, p, 1); printf(" %d", i8); break;
        case KGEN_DTYPE_INT * 100 + 16: memcpy(&i16, p, 2); printf(" %d", i16); break;
        case KGEN_DTYPE_INT * 100 + 32: memcpy(&i32, p, 4); printf(" %ld", (long)i32); break;
        case KGEN_DTYPE_INT * 100 + 64: memcpy(&i64, p, 8); printf(" %lld", (long long)i64); break;
        case KGEN_DTYPE_UINT * 100 + 8:
        case KGEN_DTYPE_BOOL * 100 + 8: memcpy(&u8, p, 1); printf(" %u", u8); break;
        case KGEN_DTYPE_UINT * 100 + 16: memcpy(&u16, p, 2); printf(" %u", u16); break;
        case KGEN_DTYPE_UINT * 100 + 32: memcpy(&u32, p, 4); printf(" %lu", (unsigned long)u32); break;
        case KGEN_DTYPE_UINT * 100 + 64: memcpy(&u64, p, 8); printf(" %llu", (unsigned long long)u64); break;
        case KGEN_DTYPE_FLOAT * 100 + 16: memcpy(&u16, p, 2); printf(" %.6g", kgen_f16_to_f32(u16)); break;
        case KGEN_DTYPE_BFLOAT * 100 + 16:
            memcpy(&u16, p, 2);
            printf(" %.6g", kgen_bits_f32((uint32_t)u16 << 16));
            break;
        case KGEN_DTYPE_FLOAT8_E4M3FN * 100 + 8: printf(" %.6g", kgen_f8e4m3fn_to_f32(*p)); break;
        case KGEN_DTYPE_FLOAT8_E4M3FNUZ * 100 + 8: printf(" %.6g", kgen_f8e4m3fnuz_to_f32(*p)); break;
        case KGEN_DTYPE_FLOAT8_E5M2 * 100 + 8: printf(" %.6g", kgen_f8e5m2_to_f32(*p)); break;
        case KGEN_DTYPE_FLOAT8_E5M2FNUZ * 100 + 8: printf(" %.6g", kgen_f8e5m2fnuz_to_f32(*p)); break;
        case KGEN_DTYPE_FLOAT * 100 + 8: printf(" %.6g", kgen_io_lowbit_float(t->dtype, *p)); break;
        case KGEN_DTYPE_FLOAT * 100 + 32: memcpy(&f32, p, 4); printf(" %.7g", f32); break;
        case KGEN_DTYPE_FLOAT * 100 + 64: memcpy(&f64, p, 8); printf(" %.15g", f64); break;
        default: printf(" ?"); break;
        }
    }
    printf("%s\n", t->count > n ? " ..." : "");
}

int main(int argc, char **argv)
{
    kgen_io_tensor ins[KGEN_MAIN_NIN_ + 1], outs[KGEN_MAIN_NOUT_ + 1], arena_block;
    kgen_tensor views[KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_ + 1];
    kgen_tensor *args[KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_ + 1];
    const char *paths[KGEN_MAIN_NIN_ + 1] = {0};
    const char *outdir = NULL;
    char err[512], want[256], got[256], file[4200];
    void *arena;
    int64_t arena_shape[1], oshape[KGEN_MAX_DIMS];
#ifdef KGEN_MAIN_DIMS
    int64_t dims[KGEN_MAIN_NUM_DIMS];
#endif
    double *times = NULL, *ktimes = NULL, sum = 0, t0;
#ifdef KGEN_MAIN_DEVICE_MS
    double dev_sum = 0;
#endif
    long bench = 0, profile = 0;
    int i, k, same, npaths = 0, status, rc = 1, only_paths = 0;
    const kgen_value_info *v;

    for (i = 0; i < KGEN_MAIN_NIN_ + 1; i++)
        kgen_io_init(&ins[i]);
    for (i = 0; i < KGEN_MAIN_NOUT_ + 1; i++)
        kgen_io_init(&outs[i]);
    kgen_io_init(&arena_block);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_paths && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            kgen_main_usage_(stdout);
            return 0;
        } else if (!only_paths && !strcmp(a, "--info")) {
            kgen_main_info_();
            return 0;
        } else if (!only_paths && (!strcmp(a, "--bench") || !strncmp(a, "--bench=", 8))) {
            const char *n = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : "";
            char *e;
            bench = strtol(n, &e, 10);
            if (*n == 0 || *e != 0 || bench < 1 || bench > 100000000L) {
                fprintf(stderr, "%s: --bench needs a run count (1 or more), not '%s'\n", KGEN_MAIN_NAME, n);
                return 2;
            }
        } else if (!only_paths && (!strcmp(a, "--profile") || !strncmp(a, "--profile=", 10))) {
            const char *n = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i] : "";
            char *e;
            profile = strtol(n, &e, 10);
            if (*n == 0 || *e != 0 || profile < 1 || profile > 100000000L) {
                fprintf(stderr, "%s: --profile needs a run count (1 or more), not '%s'\n", KGEN_MAIN_NAME, n);
                return 2;
            }
#ifndef KGEN_PROFILE
            fprintf(stderr, "%s: --profile needs the runner built with -DKGEN_PROFILE (make %s_profile)\n",
                    KGEN_MAIN_NAME, KGEN_MAIN_NAME);
            return 2;
#endif
        } else if (!only_paths && !strcmp(a, "-o")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: -o needs a directory\n", KGEN_MAIN_NAME);
                return 2;
            }
            outdir = argv[++i];
        } else if (!only_paths && !strcmp(a, "--")) {
            only_paths = 1;
        } else if (!only_paths && a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "%s: unknown option '%s'\n", KGEN_MAIN_NAME, a);
            kgen_main_usage_(stderr);
            return 2;
        } else {
            if (npaths >= KGEN_MAIN_NIN_) {
                fprintf(stderr, "%s: too many inputs: the model takes %d\n", KGEN_MAIN_NAME, KGEN_MAIN_NIN_);
                kgen_main_usage_(stderr);
                return 2;
            }
            paths[npaths++] = a;
        }
    }
    if (bench > 0 && profile > 0) {
        fprintf(stderr, "%s: --bench and --profile do not go together\n", KGEN_MAIN_NAME);
        return 2;
    }
    if (npaths != KGEN_MAIN_NIN_) {
        fprintf(stderr, "%s: %d input%s given, the model takes %d\n", KGEN_MAIN_NAME, npaths,
                npaths == 1 ? "" : "s", KGEN_MAIN_NIN_);
        kgen_main_usage_(stderr);
        return 2;
    }

    for (i = 0; i < KGEN_MAIN_NIN_; i++) {
        v = kgen_main_input_(i);
        /* (kgen_io_pack: an int4, uint4, int2 or uint2 input comes from .npy as (u)int8) */
        if (kgen_io_read(paths[i], &ins[i], err, sizeof err) != KGEN_IO_OK ||
            kgen_io_pack(&ins[i], v->dtype, err, sizeof err) != KGEN_IO_OK) {
            fprintf(stderr, "%s: input %d '%s': %s\n", KGEN_MAIN_NAME, i, v->name, err);
            goto done;
        }
        same = kgen_io_dtype_equal(v->dtype, ins[i].dtype) && v->ndim == ins[i].ndim;
        for (k = 0; same && k < v->ndim; k++)
            same = v->shape[k] == ins[i].shape[k] || v->shape[k] < 0;   /* -1: decided at run time */
        if (!same) {
            fprintf(stderr, "%s: input %d '%s' (%s): expected %s, got %s\n", KGEN_MAIN_NAME, i, v->name,
                    paths[i], kgen_io_format_type(want, sizeof want, v->dtype, v->ndim, v->shape),
                    kgen_io_format_type(got, sizeof got, ins[i].dtype, ins[i].ndim, ins[i].shape));
            goto done;
        }
        views[i] = kgen_io_view(&ins[i]);
    }
#ifdef KGEN_MAIN_DIMS
    /* the run-time dims from the inputs' shapes; each output's shape from them */
    for (i = 0; i < KGEN_MAIN_NUM_DIMS; i++) {
        const kgen_dim_info *di = &KGEN_MAIN_DIMS[i];
        dims[i] = ins[di->input].shape[di->dim];
        if (dims[i] < di->lo || dims[i] > di->hi) {
            fprintf(stderr, "%s: input %d '%s': dim %d (%s) is %lld, outside the range [%lld, %lld] it was built for\n",
                    KGEN_MAIN_NAME, (int)di->input, kgen_main_input_(di->input)->name, (int)di->dim, di->name,
                    (long long)dims[i], (long long)di->lo, (long long)di->hi);
            goto done;
        }
    }
#endif
    for (i = 0; i < KGEN_MAIN_NOUT_; i++) {
        v = kgen_main_output_(i);
        memcpy(oshape, v->shape, sizeof oshape);
#ifdef KGEN_MAIN_DIMS
        KGEN_MAIN_OUTPUT_SHAPE(i, dims, oshape);
#endif
        if (kgen_io_alloc(&outs[i], v->dtype, v->ndim, oshape, err, sizeof err) != KGEN_IO_OK) {
            fprintf(stderr, "%s: output %d '%s': %s\n", KGEN_MAIN_NAME, i, v->name, err);
            goto done;
        }
        views[KGEN_MAIN_NIN_ + i] = kgen_io_view(&outs[i]);
    }
    for (i = 0; i < KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_; i++)
        args[i] = &views[i];
    /* exactly the planned size, 64-byte aligned; under AddressSanitizer a byte past either
     * end is caught (kgen_io_alloc) */
    arena_shape[0] = (int64_t)(KGEN_MAIN_ARENA_BYTES);
    if (kgen_io_alloc(&arena_block, kgen_io_dtype(KGEN_DTYPE_UINT, 8), 1, arena_shape, err, sizeof err) !=
        KGEN_IO_OK) {
        fprintf(stderr, "%s: the %lu-byte arena: %s\n", KGEN_MAIN_NAME, (unsigned long)(KGEN_MAIN_ARENA_BYTES), err);
        goto done;
    }
    arena = arena_block.data;

#ifdef KGEN_PROFILE
    if (profile > 0)
        kgen_main_prof_pick_clock_();
#endif
    status = KGEN_MAIN_RUN(args, KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_, arena);
    if (status == KGEN_OK && bench > 0) {
        times = (double *)malloc((size_t)bench * sizeof *times);
        if (!times) {
            fprintf(stderr, "%s: out of memory\n", KGEN_MAIN_NAME);
            goto done;
        }
        for (i = 0; i < bench && status == KGEN_OK; i++) {
            t0 = kgen_main_now_ms_();
            status = KGEN_MAIN_RUN(args, KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_, arena);
            times[i] = kgen_main_now_ms_() - t0;
            sum += times[i];
#ifdef KGEN_MAIN_DEVICE_MS
            dev_sum += KGEN_MAIN_DEVICE_MS();
#endif
        }
    }
#ifdef KGEN_PROFILE
    if (status == KGEN_OK && profile > 0) {
        /* the warm-up run above sized the table; times[r] is run r, ktimes[k * profile + r]
         * kernel k in run r */
        int nk = kgen_main_prof_n_;
        double ksum = 0;
        times = (double *)malloc((size_t)profile * sizeof *times);
        ktimes = (double *)malloc((size_t)profile * (size_t)(nk ? nk : 1) * sizeof *ktimes);
        if (!times || !ktimes) {
            fprintf(stderr, "%s: out of memory\n", KGEN_MAIN_NAME);
            goto done;
        }
        for (i = 0; i < profile && status == KGEN_OK; i++) {
            for (k = 0; k < kgen_main_prof_n_; k++)
                kgen_main_prof_ms_[k] = 0;
            t0 = kgen_main_prof_now_ms_();
            status = KGEN_MAIN_RUN(args, KGEN_MAIN_NIN_ + KGEN_MAIN_NOUT_, arena);
            times[i] = kgen_main_prof_now_ms_() - t0;
            for (k = 0; k < nk; k++)
                ktimes[(long)k * profile + i] = kgen_main_prof_ms_[k];
        }
        if (status == KGEN_OK) {
            if (nk == 0)
                printf("no kernel was timed: this target's model function has no profiling hooks\n");
            for (k = 0; k < nk; k++) {
                double med = kgen_main_median_(ktimes + (long)k * profile, profile);
                ksum += med;
                printf("kernel_ms %d %s %.6f\n", k, kgen_main_prof_names_[k], med);
            }
            printf("profile_sum_ms=%.6f median_ms=%.6f runs=%ld kernels=%d clock=%s\n", ksum,
                   kgen_main_median_(times, profile), profile, nk, kgen_main_prof_clock_name_);
        }
    }
#endif
    if (status != KGEN_OK) {
        fprintf(stderr, "%s: the model returned status %d (%s)\n", KGEN_MAIN_NAME, status, kgen_status_str(status));
        goto done;
    }
    if (bench > 0) {
        double med = kgen_main_median_(times, bench);
        printf("median_ms=%.6f min_ms=%.6f mean_ms=%.6f runs=%ld\n", med, times[0], sum / (double)bench, bench);
#ifdef KGEN_MAIN_DEVICE_MS
        /* GPU targets: the kernels alone, from the device's own timer (no copies) */
        printf("device_mean_ms=%.6f\n", dev_sum / (double)bench);
#endif
    }
    if (outdir) {
        if (kgen_main_mkdirs_(outdir) != 0)
            goto done;
        for (i = 0; i < KGEN_MAIN_NOUT_; i++) {
            snprintf(file, sizeof file, "%s/output_%d.npy", outdir, i);
            if (kgen_io_write_npy(file, outs[i].dtype, outs[i].ndim, outs[i].shape, outs[i].data, err,
                                  sizeof err) != KGEN_IO_OK) {
                fprintf(stderr, "%s: %s\n", KGEN_MAIN_NAME, err);
                goto done;
            }
        }
    } else if (bench == 0 && profile == 0) {
        for (i = 0; i < KGEN_MAIN_NOUT_; i++)
            kgen_main_print_(i, &outs[i]);
    }
    rc = 0;
done:
    for (i = 0; i < KGEN_MAIN_NIN_; i++)
        kgen_io_free(&ins[i]);
    for (i = 0; i < KGEN_MAIN_NOUT_; i++)
        kgen_io_free(&outs[i]);
    kgen_io_free(&arena_block);
    free(times);
    free(ktimes);
#ifdef KGEN_PROFILE
    free(kgen_main_prof_ms_);
    free((void *)kgen_main_prof_names_);
#endif
    return rc;
}

#endif /* KGEN_MAIN_H */
