/* test.h - a tiny unit-test harness: CHECK(cond), CHECK_EQ(expected, actual) print the
 * failing expression with its value; test_done() prints "NAME: N passed, N failed". */
#ifndef KGEN_TEST_H
#define KGEN_TEST_H

#include <stdio.h>
#include <string.h>

static int test_passed, test_failed;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (cond)                                                             \
            test_passed++;                                                    \
        else {                                                                \
            test_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
        }                                                                     \
    } while (0)

#define CHECK_EQ(expected, actual)                                            \
    do {                                                                      \
        long long e_ = (long long)(expected), a_ = (long long)(actual);      \
        if (e_ == a_)                                                         \
            test_passed++;                                                    \
        else {                                                                \
            test_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s => %lld, expected %lld\n", __FILE__, __LINE__, #actual, a_, e_); \
        }                                                                     \
    } while (0)

#define CHECK_STR(expected, actual)                                           \
    do {                                                                      \
        const char *e_ = (expected), *a_ = (actual);                          \
        if (a_ && !strcmp(e_, a_))                                            \
            test_passed++;                                                    \
        else {                                                                \
            test_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s =>\n%s\nexpected\n%s\n", __FILE__, __LINE__, #actual, a_ ? a_ : "(null)", e_); \
        }                                                                     \
    } while (0)

/* a substring check for error messages */
#define CHECK_HAS(haystack, needle)                                           \
    do {                                                                      \
        const char *h_ = (haystack), *n_ = (needle);                          \
        if (h_ && strstr(h_, n_))                                             \
            test_passed++;                                                    \
        else {                                                                \
            test_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s => \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, #haystack, h_ ? h_ : "(null)", n_); \
        }                                                                     \
    } while (0)

static int test_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed != 0;
}

#endif
