/* gemm_bench.c - C = A x B (N x N, fp32, one thread): kgen's matmul untuned
 * (mm_untuned) and tuned (mm_tuned), and OpenBLAS's cblas_sgemm when built with
 * -DWITH_BLAS, timed in turn in one process (median of several runs each); prints
 * GFLOP/s and checks that all agree. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mm_tuned.h"
#include "mm_untuned.h"

#ifndef N
#define N 512
#endif
#define REPS (N <= 512 ? 15 : 7)

#ifdef WITH_BLAS
/* cblas.h's prototype, with its enums as ints (CblasRowMajor 101, CblasNoTrans 111) */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc);
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double maxdiff(const float *x, const float *y)
{
    double d = 0;
    for (long i = 0; i < (long)N * N; i++)
        d = fabs(x[i] - y[i]) > d ? fabs(x[i] - y[i]) : d;
    return d;
}

int main(void)
{
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
    float *c[3] = {malloc(sizeof(float) * N * N), malloc(sizeof(float) * N * N), malloc(sizeof(float) * N * N)};
    size_t wsb = MM_TUNED_WORKSPACE_BYTES > MM_UNTUNED_WORKSPACE_BYTES ? MM_TUNED_WORKSPACE_BYTES : MM_UNTUNED_WORKSPACE_BYTES;
    unsigned char *raw = malloc(wsb + 128);
    void *ws = raw + (64 - (size_t)raw % 64);
    for (long i = 0; i < (long)N * N; i++) {
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    int nimpl = 2;
#ifdef WITH_BLAS
    nimpl = 3;
#endif
    double t[3][REPS];
    for (int rep = -1; rep < REPS; rep++) {   /* rep -1 warms up */
        for (int k = 0; k < nimpl; k++) {
            double t0 = now();
            if (k == 0)
                mm_untuned(a, b, c[0], ws);
            else if (k == 1)
                mm_tuned(a, b, c[1], ws);
#ifdef WITH_BLAS
            else
                cblas_sgemm(101, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c[2], N);
#endif
            if (rep >= 0)
                t[k][rep] = now() - t0;
        }
    }
    double flop = 2.0 * N * N * N, gf[3] = {0, 0, 0};
    for (int k = 0; k < nimpl; k++) {
        qsort(t[k], REPS, sizeof(double), cmp);
        gf[k] = flop / t[k][REPS / 2] * 1e-9;
    }
    double diff = maxdiff(c[0], c[1]);
    if (nimpl == 3 && maxdiff(c[0], c[2]) > diff)
        diff = maxdiff(c[0], c[2]);
    printf("untuned_gflops=%.1f tuned_gflops=%.1f blas_gflops=%.1f maxdiff=%.2g\n", gf[0], gf[1], gf[2], diff);
    return diff > 1e-2;
}
