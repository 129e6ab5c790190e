/* matmul_bench.c - times the generated matmul against a naive triple loop compiled
 * with the same flags, in the same process, and prints GFLOP/s and the ratio. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matmul.h"

#ifndef M
#define M 1024
#endif
#define N M
#define K M

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The baseline: what a plain loop generator would emit (i, k, j order so that the
 * compiler can vectorize the inner loop). */
static void naive(const float *restrict a, const float *restrict b, float *restrict c)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
            c[i * N + j] = 0;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                c[i * N + j] += a[i * K + k] * b[k * N + j];
    }
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(void)
{
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c = malloc(sizeof(float) * M * N), *r = malloc(sizeof(float) * M * N);
    void *ws = malloc(MATMUL_WORKSPACE_BYTES + 64);
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    double flop = 2.0 * M * N * K, tk[15], tn[15];
    int reps = M <= 256 ? 15 : M <= 512 ? 9 : 5;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        matmul(a, b, c, ws);
        tk[rep] = now() - t0;
        t0 = now();
        naive(a, b, r);
        tn[rep] = now() - t0;
    }
    double err = 0;
    for (int i = 0; i < M * N; i++)
        err = fmax(err, fabs(c[i] - r[i]) / (1.0 + fabs(r[i])));
    qsort(tk, reps, sizeof *tk, cmp);
    qsort(tn, reps, sizeof *tn, cmp);
    double gk = flop / tk[reps / 2] * 1e-9, gn = flop / tn[reps / 2] * 1e-9;
    printf("matmul %4d^3  kgen %7.1f GFLOP/s  naive %7.1f GFLOP/s  ratio %5.2fx  (max rel err %.1e)\n", M, gk, gn,
           gk / gn, err);
    return err > 1e-3;
}
