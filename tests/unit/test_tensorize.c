/* test_tensorize.c - tensorize: the C target's -mattr/-mcpu (emit/target.c), the schedule
 * primitive and its .kg syntax (schedule.c, gen/kg_sched.c), the pattern check and versioning
 * (ir/tensorize.c) and the calls the C printer makes of them; the requests that must fail,
 * with their messages. Execution is tests/tensorize.sh's. */
#include "../../gen/gen.h"
#include "../../emit/emit.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- target attributes */

static int lanes_of(const char *spec)
{
    Target t;
    ir_clear_error();
    if (target_parse(spec, &t))
        return -1;
    return target_simd_lanes(&t);
}

static const char *target_error(const char *spec)
{
    Target t;
    ir_clear_error();
    return target_parse(spec, &t) ? ir_errmsg() : "(no error)";
}

static void test_target(void)
{
    CHECK_EQ(8, lanes_of("c"));   /* any CPU: 8-lane tiles, the micro-kernels as the compiler enables */
    CHECK_EQ(16, lanes_of("c -mattr=+avx512f"));
    CHECK_EQ(8, lanes_of("c -mattr=+avx2,+fma"));
    CHECK_EQ(8, lanes_of("c -mattr=+avx2"));
    CHECK_EQ(4, lanes_of("c -mattr=+neon"));
    CHECK_EQ(8, lanes_of("c -mcpu=x86-64-v3"));
    CHECK_EQ(16, lanes_of("c -mcpu=x86-64-v4"));
    CHECK_EQ(16, lanes_of("c -mcpu=skylake-avx512"));
    CHECK_EQ(16, lanes_of("c -mcpu=znver4"));
    CHECK_EQ(4, lanes_of("c -mcpu=cortex-a72"));
    CHECK_EQ(4, lanes_of("c -mcpu=neoverse-n1"));
    CHECK_EQ(4, lanes_of("c -mcpu=apple-m1"));
    CHECK_EQ(8, lanes_of("c -mcpu=x86-64"));   /* no SIMD ISA named: the any-CPU shape */
    /* in order: -mcpu, then -mattr turning a feature off */
    CHECK_EQ(8, lanes_of("c -mcpu=x86-64-v4 -mattr=-avx512f"));
    CHECK_EQ(8, lanes_of("c -mattr=+avx512f -mcpu=x86-64"));
    Target t;
    target_parse("c -mattr=+avx512f", &t);
    CHECK_STR("avx512f", target_simd_name(&t));
    target_parse("c", &t);
    CHECK_STR("any CPU", target_simd_name(&t));
    /* the C target and wasm (SIMD128's 4 lanes, -nosimd too: the same C) have them */
    CHECK_EQ(4, lanes_of("wasm"));
    CHECK_EQ(4, lanes_of("wasm -nosimd"));
    CHECK_EQ(0, lanes_of("js"));
    CHECK_EQ(0, lanes_of("opencl"));

    CHECK_HAS(target_error("c -mattr=+sse9"), "unknown feature '+sse9'");
    CHECK_HAS(target_error("c -mattr=+avx2,avx512f"), "unknown feature 'avx512f'");
    CHECK_HAS(target_error("c -mattr="), "expected -mattr=+FEATURE");
    CHECK_HAS(target_error("c -mattr=+avx2,+neon"), "mixes x86");
    CHECK_HAS(target_error("c -mcpu=pentium3"), "unknown CPU 'pentium3'");
    CHECK_HAS(target_error("c -mcpu=native"), "named CPU");
    CHECK_HAS(target_error("cuda -mattr=+avx2"), "unknown attribute '-mattr=+avx2' for target cuda");
    CHECK_HAS(target_error("c -mfoo"), "c takes -mattr");
}

/* ---------------------------------------------------------------- .kg programs */

static KgModule mod;

static int parse(const char *src)
{
    ir_clear_error();
    return gen_parse_kg("t.kg", src, NULL, 0, "c", &mod);
}

/* the kernel printed as C (NULL when lowering fails) */
static char *print(Schedule *s)
{
    static char buf[1 << 16];
    ir_clear_error();
    Kernel *k = ir_lower(s, "mm");
    if (!k)
        return NULL;
    StrBuf b = {0};
    em_print_kernel(&b, k, &em_dialect_c);
    snprintf(buf, sizeof buf, "%s", b.data ? b.data : "");
    sb_free(&b);
    return buf;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, what)); p++)
        n++;
    return n;
}

#define MATMUL_HEAD                                        \
    "param M = 12\nparam N = 40\nparam K = 9\n"            \
    "input A : f32[M, K]\ninput B : f32[K, N]\n"           \
    "output C[i < M, j < N] = sum(k < K: A[i, k] * B[k, j])\n"

static void test_primitive(void)
{
    /* an explicit width, on a tile that overhangs N: versioned */
    const char *src = MATMUL_HEAD "schedule c {\n"
                                  "    CC = cache_write(C, local)\n"
                                  "    io, jo, ii, ji = tile(C, i, j, 4, 16)\n"
                                  "    compute_at(CC, C, jo)\n"
                                  "    reorder(CC, k, i, j)\n"
                                  "    unroll(CC, i)\n"
                                  "    tensorize(CC, j, fma_bcast_f32x8)\n"
                                  "}\n";
    CHECK_EQ(0, parse(src));
    CHECK_EQ(ANN_TENSORIZE, sch_find_axis(sch_find(mod.sched, "CC"), "j")->ann);
    char *c = print(mod.sched);
    CHECK(c != NULL);
    /* 4 rows x 2 calls of 8 lanes, under one condition: the tile is whole */
    CHECK_EQ(8, count(c, "kgen_fma_bcast_f32x8("));
    CHECK_HAS(c, "kgen_fma_bcast_f32x8(CC, A[io * 36 + k], &B[k * 40 + jo * 16]);");
    CHECK_HAS(c, "kgen_fma_bcast_f32x8(&CC[8], A[io * 36 + k], &B[k * 40 + jo * 16 + 8]);");
    /* the whole tiles (jo < 2) and the last one (columns 32 to 39) as two copies of the
     * tile, the last one's loops over its 8 columns: the loop pass runtime-tails splits a
     * serial loop holding a register tile at its constant bound too, no condition left */
    CHECK_EQ(0, count(c, "KGEN_LIKELY"));
    CHECK_EQ(1, count(c, "for (int32_t jo = 0; jo < 2; ++jo) {"));
    CHECK_EQ(2, count(c, "float CC[64];"));
    CHECK_EQ(4, count(c, "CC[j + 16] = CC[j + 16] + A[io * 36 + k + 9] * B[k * 40 + j + 32];") +
                    count(c, "CC[j] = CC[j] + A[io * 36 + k] * B[k * 40 + j + 32];") +
                    count(c, "CC[j + 32] = CC[j + 32] + A[io * 36 + k + 18] * B[k * 40 + j + 32];") +
                    count(c, "CC[j + 48] = CC[j + 48] + A[io * 36 + k + 27] * B[k * 40 + j + 32];"));
    CHECK_EQ(5, count(c, "for (int32_t j = 0; j < 8; ++j) {"));

    /* 13 rows in tiles of 4, the columns whole, the row tiles' loop parallel (runtime-tails
     * splits serial loops only): where the last row's guard holds, the tile has none (4
     * calls a step, unguarded); the last tile (io = 3) is its one row */
    const char *rows = "param M = 13\nparam N = 32\nparam K = 9\n"
                       "input A : f32[M, K]\ninput B : f32[K, N]\n"
                       "output C[i < M, j < N] = sum(k < K: A[i, k] * B[k, j])\n"
                       "schedule c {\n"
                       "    CC = cache_write(C, local)\n"
                       "    io, jo, ii, ji = tile(C, i, j, 4, 16)\n"
                       "    compute_at(CC, C, jo)\n"
                       "    reorder(CC, k, i, j)\n"
                       "    unroll(CC, i)\n"
                       "    tensorize(CC, j, fma_bcast_f32x16)\n"
                       "    parallel(C, io)\n"
                       "}\n";
    CHECK_EQ(0, parse(rows));
    c = print(mod.sched);
    CHECK(c != NULL);
    CHECK_EQ(1, count(c, "if (KGEN_LIKELY(io * 4 + 3 < 13)) {"));
    CHECK_EQ(0, count(c, "if (io * 4 + 1 < 13)"));
    CHECK_HAS(c, "    kgen_fma_bcast_f32x16(&CC[48], A[io * 36 + k + 27], &B[k * 32 + jo * 16]);\n"
                 "                }");
    CHECK_HAS(c, "kgen_fma_bcast_f32x16(CC, A[k + 108], &B[k * 32 + jo * 16]);");
    CHECK_EQ(5, count(c, "kgen_fma_bcast_f32x16("));

    /* the generic name takes the widest micro-kernels that fit: 16 = one call */
    const char *gen = MATMUL_HEAD "schedule c {\n"
                                  "    CC = cache_write(C, local)\n"
                                  "    io, jo, ii, ji = tile(C, i, j, 4, 16)\n"
                                  "    compute_at(CC, C, jo)\n"
                                  "    reorder(CC, k, i, j)\n"
                                  "    tensorize(CC, j, fma_bcast)\n"
                                  "}\n";
    CHECK_EQ(0, parse(gen));
    c = print(mod.sched);
    CHECK(c != NULL);
    CHECK_EQ(1, count(c, "kgen_fma_bcast_f32x16("));

    /* 40 columns: 32 + 8, the output itself as the accumulator */
    CHECK_EQ(0, parse(MATMUL_HEAD "schedule c {\n    reorder(C, i, k, j)\n    tensorize(C, j, fma_bcast)\n}\n"));
    c = print(mod.sched);
    CHECK_HAS(c, "kgen_fma_bcast_f32x32(&C[i * 40], A[i * 9 + k], &B[k * 40]);");
    CHECK_HAS(c, "kgen_fma_bcast_f32x8(&C[i * 40 + 32], A[i * 9 + k], &B[k * 40 + 32]);");

    /* the loop IR keeps the loop (the interpreter and other printers run it) */
    CHECK_EQ(0, parse(gen));
    Kernel *k = ir_lower(mod.sched, "k");
    CHECK(k != NULL);
    FILE *f = tmpfile();
    if (f && k) {
        char buf[1 << 14];
        ir_print_kernel(f, k);
        rewind(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        CHECK_HAS(buf, "tensorized for j in [0, +16) as fma_bcast");
    }
    if (f)
        fclose(f);
}

/* The versioned loop IR computes what the plain one does (the interpreter runs it). */
static void test_interp(void)
{
    const char *src = MATMUL_HEAD "schedule c {\n"
                                  "    CC = cache_write(C, local)\n"
                                  "    io, jo, ii, ji = tile(C, i, j, 5, 16)\n"
                                  "    compute_at(CC, C, jo)\n"
                                  "    reorder(CC, k, i, j)\n"
                                  "    unroll(CC, i)\n"
                                  "    tensorize(CC, j, fma_bcast_f32x4)\n"
                                  "}\n";
    static float A[12 * 9], B[9 * 40], C[12 * 40];
    for (int i = 0; i < 12 * 9; i++)
        A[i] = (float)((i * 7) % 13) - 6.0f;
    for (int i = 0; i < 9 * 40; i++)
        B[i] = (float)((i * 5) % 11) - 5.0f;
    CHECK_EQ(0, parse(src));
    Kernel *k = ir_lower(mod.sched, "mm");
    CHECK(k != NULL);
    if (!k)
        return;
    void *params[3] = {A, B, C};
    CHECK_EQ(0, ir_interp(k, params, NULL));
    int bad = 0;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 40; j++) {
            float s = 0;   /* small integers: exact in any order */
            for (int q = 0; q < 9; q++)
                s += A[i * 9 + q] * B[q * 40 + j];
            bad += C[i * 40 + j] != s;
        }
    CHECK_EQ(0, bad);
}

static void test_auto(void)
{
    /* -mattr: a vectorized loop of a sum reduction becomes calls, with the target's lanes */
    const char *src = MATMUL_HEAD "schedule c {\n"
                                  "    CC = cache_write(C, local)\n"
                                  "    io, jo, ii, ji = tile(C, i, j, 4, 8)\n"
                                  "    compute_at(CC, C, jo)\n"
                                  "    reorder(CC, k, i, j)\n"
                                  "    vectorize(CC, j)\n"
                                  "    vectorize(C, ji)\n"
                                  "}\n";
    CHECK_EQ(0, parse(src));
    mod.sched->simd_lanes = 8;
    CHECK_EQ(0, sch_tensorize_auto(mod.sched));
    char *c = print(mod.sched);
    CHECK_EQ(1, count(c, "kgen_fma_bcast_f32x8("));
    /* 8 columns are not a multiple of AVX-512's 16 lanes: the loop stays as it was */
    CHECK_EQ(0, parse(src));
    mod.sched->simd_lanes = 16;
    CHECK_EQ(0, sch_tensorize_auto(mod.sched));
    c = print(mod.sched);
    CHECK(c != NULL);
    CHECK_EQ(0, count(c, "kgen_fma_bcast"));
    CHECK_HAS(c, "KGEN_VECTORIZE");
    /* a max reduction is left alone (no request, no error) */
    CHECK_EQ(0, parse("input X : f32[4, 32]\n"
                      "output Y[i < 4, j < 32] = max(k < 4: X[k, j])\n"
                      "schedule c {\n    vectorize(Y, j)\n}\n"));
    mod.sched->simd_lanes = 16;
    CHECK_EQ(0, sch_tensorize_auto(mod.sched));
    CHECK_EQ(ANN_VECTORIZE, sch_find_axis(sch_find(mod.sched, "Y"), "j")->ann);
    /* a stride that does not match stays vectorized */
    CHECK_EQ(0, parse("input X : f32[64, 4]\n"
                      "output Y[i < 4, j < 16] = sum(k < 4: X[j * 4 + k, i])\n"
                      "schedule c {\n    reorder(Y, i, k, j)\n    vectorize(Y, j)\n}\n"));
    mod.sched->simd_lanes = 16;
    CHECK_EQ(0, sch_tensorize_auto(mod.sched));
    c = print(mod.sched);
    CHECK(c != NULL);
    CHECK_EQ(0, count(c, "kgen_fma_bcast"));
}

/* The elementwise micro-kernel: a depthwise conv over channels last, its zero padding
 * inline (a select on the window's position, which the channel loop does not change). */
#define DEPTHWISE_HEAD                                                                              \
    "param H = 5\nparam W = 6\nparam C = 16\n"                                                    \
    "input X : f32[H, W, C]\ninput K : f32[3, 3, C]\n"                                             \
    "output Y[y < H, x < W, c < C] = sum(ry < 3, rx < 3:\n"                                         \
    "    select(y + ry >= 1 && y + ry < H + 1 && x + rx >= 1 && x + rx < W + 1, X[y + ry - 1, x + rx - 1, c], 0.0)" \
    " * K[ry, rx, c])\n"

static void test_elementwise(void)
{
    CHECK_EQ(0, parse(DEPTHWISE_HEAD "schedule c {\n    reorder(Y, y, x, ry, rx, c)\n    tensorize(Y, c, fma)\n}\n"));
    char *c = print(mod.sched);
    CHECK(c != NULL);
    /* one call a tap, the padded row chosen by address: no branch, no select per lane */
    CHECK_EQ(1, count(c, "kgen_fma_f32x16("));
    CHECK_HAS(c, "kgen_fma_f32x16(&Y[y * 96 + x * 16], y + ry >= 1 && y + ry < 6 && x + rx >= 1 && "
                 "x + rx < 7 ? &X[y * 96 + ry * 96 + x * 16 + rx * 16 - 112] : kgen_zero_f32(), &K[ry * 48 + rx * 16]);");
    CHECK_EQ(0, count(c, "kgen_fma_bcast"));
    /* an explicit width: two calls of 8 */
    CHECK_EQ(0, parse(DEPTHWISE_HEAD "schedule c {\n    reorder(Y, y, x, ry, rx, c)\n    tensorize(Y, c, fma_f32x8)\n}\n"));
    c = print(mod.sched);
    CHECK_EQ(2, count(c, "kgen_fma_f32x8("));
    CHECK_HAS(c, ": kgen_zero_f32(), &K[ry * 48 + rx * 16 + 8]);");
    /* kgen's own request (-mattr) takes it too */
    CHECK_EQ(0, parse(DEPTHWISE_HEAD "schedule c {\n    reorder(Y, y, x, ry, rx, c)\n    vectorize(Y, c)\n}\n"));
    mod.sched->simd_lanes = 8;
    CHECK_EQ(0, sch_tensorize_auto(mod.sched));
    c = print(mod.sched);
    CHECK_EQ(1, count(c, "kgen_fma_f32x16("));

    /* the loop IR keeps the select: the interpreter computes the padded sum */
    static float X[5 * 6 * 16], K[3 * 3 * 16], Y[5 * 6 * 16];
    for (int i = 0; i < 5 * 6 * 16; i++)
        X[i] = (float)((i * 7) % 13) - 6.0f;
    for (int i = 0; i < 3 * 3 * 16; i++)
        K[i] = (float)((i * 5) % 11) - 5.0f;
    CHECK_EQ(0, parse(DEPTHWISE_HEAD "schedule c {\n    reorder(Y, y, x, ry, rx, c)\n    tensorize(Y, c, fma)\n}\n"));
    Kernel *k = ir_lower(mod.sched, "dw");
    CHECK(k != NULL);
    if (k) {
        void *params[3] = {X, K, Y};
        CHECK_EQ(0, ir_interp(k, params, NULL));
        int bad = 0;
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 6; x++)
                for (int ch = 0; ch < 16; ch++) {
                    float s = 0;   /* small integers: exact in any order */
                    for (int ry = 0; ry < 3; ry++)
                        for (int rx = 0; rx < 3; rx++) {
                            int iy = y + ry - 1, ix = x + rx - 1;
                            if (iy >= 0 && iy < 5 && ix >= 0 && ix < 6)
                                s += X[(iy * 6 + ix) * 16 + ch] * K[(ry * 3 + rx) * 16 + ch];
                        }
                    bad += Y[(y * 6 + x) * 16 + ch] != s;
                }
        CHECK_EQ(0, bad);
    }

    /* the kinds apart: fma where one factor is a scalar, fma_bcast where both vary */
    CHECK_EQ(0, parse(MATMUL_HEAD "schedule c {\n    reorder(C, i, k, j)\n    tensorize(C, j, fma)\n}\n"));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "one factor of the product does not vary along the loop (fma multiplies two vectors");
    CHECK_EQ(0, parse(DEPTHWISE_HEAD "schedule c {\n    reorder(Y, y, x, ry, rx, c)\n    tensorize(Y, c, fma_bcast)\n}\n"));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "both factors of the product vary along the loop");
    /* a padding condition on each factor: fma chooses one of them by address */
    CHECK_EQ(0, parse("input A : f32[4, 16]\ninput B : f32[4, 16]\nparam N = 3\n"
                      "output C[i < 4, j < 16] = sum(k < 4: select(i + k < 4, A[k, j], 0.0) * select(i + k >= N, B[k, j], 0.0))\n"
                      "schedule c {\n    reorder(C, i, k, j)\n    tensorize(C, j, fma)\n}\n"));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "both factors of the product are chosen by conditions");
}

/* a tensorize line that must fail: at parse time (the primitive) or when lowered */
static void bad(const char *sched, const char *expect)
{
    char src[4096];
    snprintf(src, sizeof src, MATMUL_HEAD "schedule c {\n%s}\n", sched);
    const char *msg;
    if (parse(src))
        msg = ir_errmsg();
    else
        msg = print(mod.sched) ? "(no error)" : ir_errmsg();
    CHECK_HAS(msg, expect);
}

static void test_errors(void)
{
    bad("    tensorize(C, j, fma_bcast_f32x12)\n", "unknown micro-kernel 'fma_bcast_f32x12'");
    bad("    tensorize(C, j, fma_f32x2)\n", "(kgen has fma_bcast and fma, and fma_bcast_f32xW and fma_f32xW");
    bad("    tensorize(C, k, fma_bcast)\n", "k is a reduce axis of C");
    bad("    tensorize(C, q, fma_bcast)\n", "unknown axis 'q'");
    bad("    tensorize(C, j)\n", "tensorize takes 3 arguments, got 2 (usage: tensorize(stage, axis, fma_bcast))");
    bad("    CC = cache_write(C, local)\n    tensorize(C, j, fma_bcast)\n", "C is not a sum reduction of f32");
    bad("    unroll(C, j)\n    tensorize(C, j, fma_bcast)\n", "axis j of C is already annotated");
    /* wrong width: 40 columns in loops of 16 */
    bad("    jo, ji = split(C, j, 20)\n    reorder(C, i, jo, k, ji)\n    tensorize(C, ji, fma_bcast_f32x16)\n",
        "tensorize(C, ji, fma_bcast_f32x16) at t.kg:10:5: the loop has 20 iterations, not a multiple of 16");
    bad("    jo, ji = split(C, j, 10)\n    reorder(C, i, jo, k, ji)\n    tensorize(C, ji, fma_bcast)\n",
        "the loop has 10 iterations, not a multiple of 4, the width of the narrowest micro-kernel");
    /* wrong pattern: j is not innermost, so the loop's body is a loop */
    bad("    jo, ji = split(C, j, 8)\n    tensorize(C, ji, fma_bcast)\n",
        "the loop body is not a single store acc[...] = acc[...] + a * b[...]");
    /* wrong pattern: both factors vary with j */
    char src[4096];
    snprintf(src, sizeof src, "input A : f32[4, 16]\ninput B : f32[4, 16]\n"
                              "output C[j < 16] = sum(k < 4: A[k, j] * B[k, j])\n"
                              "schedule c {\n    reorder(C, k, j)\n    tensorize(C, j, fma_bcast)\n}\n");
    CHECK_EQ(0, parse(src));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "both factors of the product vary along the loop");
    /* wrong pattern: a strided vector factor */
    snprintf(src, sizeof src, "input A : f32[4]\ninput B : f32[64, 4]\n"
                              "output C[j < 16] = sum(k < 4: A[k] * B[j * 4, k])\n"
                              "schedule c {\n    reorder(C, k, j)\n    tensorize(C, j, fma_bcast)\n}\n");
    CHECK_EQ(0, parse(src));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "does not read consecutive elements of B");
    /* wrong pattern: not a product */
    snprintf(src, sizeof src, "input A : f32[4, 16]\n"
                              "output C[j < 16] = sum(k < 4: A[k, j] + 1.0)\n"
                              "schedule c {\n    reorder(C, k, j)\n    tensorize(C, j, fma_bcast)\n}\n");
    CHECK_EQ(0, parse(src));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "is not a product a * b");
    /* too long: 96 iterations */
    snprintf(src, sizeof src, "input A : f32[4]\ninput B : f32[4, 96]\n"
                              "output C[j < 96] = sum(k < 4: A[k] * B[k, j])\n"
                              "schedule c {\n    reorder(C, k, j)\n    tensorize(C, j, fma_bcast)\n}\n");
    CHECK_EQ(0, parse(src));
    CHECK(print(mod.sched) == NULL);
    CHECK_HAS(ir_errmsg(), "axis j of C has extent 96, above the limit of 64");
    /* f64 */
    snprintf(src, sizeof src, "input A : f64[4, 16]\ninput B : f64[4]\n"
                              "output C[j < 16] = sum(k < 4: A[k, j] * B[k])\n"
                              "schedule c {\n    reorder(C, k, j)\n    tensorize(C, j, fma_bcast)\n}\n");
    CHECK_HAS(parse(src) ? ir_errmsg() : "(no error)", "not a sum reduction of f32");
}

int main(void)
{
    Arena *a = ir_arena_new();
    ir_arena_set(a);
    test_target();
    test_primitive();
    test_interp();
    test_auto();
    test_elementwise();
    test_errors();
    ir_arena_free(a);
    return test_done("tensorize_unit");
}
