/* common.h - shared pieces of the execution tests: each test compiles one generated
 * kernel with a driver that fills random inputs, runs the kernel, computes a plain
 * reference in double precision and compares. Built with -std=c99 -pedantic. */
#ifndef KGEN_EXEC_COMMON_H
#define KGEN_EXEC_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

/* Every buffer a test allocates is freed at exit, so that LeakSanitizer (make sanitize)
 * reports only the kernel's own leaks. */
static void *test_allocs[64];
static int test_nallocs;

static void test_free_all(void)
{
    while (test_nallocs > 0)
        free(test_allocs[--test_nallocs]);
}

static void *test_keep(void *p)
{
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (test_nallocs == 0)
        atexit(test_free_all);
    if (test_nallocs < 64)
        test_allocs[test_nallocs++] = p;
    return p;
}

/* uniform in [-1, 1), deterministic */
static float rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static float *new_input(size_t n)
{
    float *p = test_keep(malloc(n * sizeof *p + 1));
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = rnd();
    return p;
}

/* outputs start as NaN so a kernel that skips an element is caught */
static float *new_output(size_t n)
{
    float *p = test_keep(malloc(n * sizeof *p + 1));
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = (float)NAN;
    return p;
}

static void *new_workspace(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    p = test_keep(malloc(bytes));   /* exactly: under AddressSanitizer one byte more is caught */
    memset(p, 0xAB, bytes);
    /* the kernel may assume nothing about alignment beyond malloc's */
    return p;
}

/* |got - want| <= atol + rtol * |want| everywhere */
static int compare(const char *what, const float *got, const double *want, size_t n, double rtol, double atol)
{
    size_t i, bad = 0;
    double worst = 0;
    for (i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        double lim = atol + rtol * fabs(want[i]);
        if (!(d <= lim)) {
            if (bad < 5)
                fprintf(stderr, "%s[%lu]: got %.9g, want %.9g\n", what, (unsigned long)i, (double)got[i], want[i]);
            bad++;
        }
        if (d > worst)
            worst = d;
    }
    if (bad) {
        fprintf(stderr, "%s: %lu of %lu elements differ (max abs diff %g)\n", what, (unsigned long)bad,
                (unsigned long)n, worst);
        return 1;
    }
    return 0;
}

static double *new_ref(size_t n)
{
    return test_keep(calloc(n ? n : 1, sizeof(double)));
}

#define RTOL 1e-4
#define ATOL 1e-5

#endif
