/* test_cprint.c - the C-family printer, the C target files and the runtime header.
 *
 * Kernels are built by hand with the ir_* constructors and their printed text compared
 * with exact expected strings; then the C target is written to a temporary directory and
 * compiled (and run) with the toolchains found on the machine: cc, gcc, clang, g++. A
 * missing toolchain skips its checks with a note. */
#define _POSIX_C_SOURCE 200809L

#include "../../emit/emit.h"
#include "test.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static int64_t s1[1] = {1}, s4[1] = {4}, s8[1] = {8}, s16[1] = {16}, s64[1] = {64};

static Buffer *param(const char *name, DType t, int64_t *shape, int ndim, int input)
{
    Buffer *b = ir_buffer_new(name, t, ndim, shape, SCOPE_PARAM);
    b->is_input = input;
    return b;
}

static Kernel *kernel(const char *name, Buffer **params, int n, Stmt *body)
{
    Kernel *k = ir_alloc(sizeof *k);
    k->name = name;
    for (int i = 0; i < n; i++)
        ir_vec_push(&k->params, params[i], 64, "parameters");
    k->body = body;
    return k;
}

static StrBuf printed;

static const char *print_kernel(const Kernel *k)
{
    sb_free(&printed);
    em_print_kernel(&printed, k, &em_dialect_c);
    return printed.data;
}

static Expr *I(int64_t v) { return ir_int(v, DT_I32); }
static Expr *V(Var *v) { return ir_varref(v); }
static Expr *bin(BinOp op, Expr *a, Expr *b) { return ir_bin(op, a, b); }
static Expr *call1(MathFn fn, Expr *a)
{
    Expr *args[KG_MAX_ARGS] = {a};
    return ir_call(fn, args);
}

static Stmt *loop(Var *v, int64_t n, Stmt *body) { return ir_for(v, I(0), I(n), FOR_SERIAL, body); }

static Stmt *seq(int n, ...)
{
    Stmt *items[32];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        items[i] = va_arg(ap, Stmt *);
    va_end(ap);
    return ir_seq(items, n);
}

/* ---------------------------------------------------------------- expressions */

/* One expression printed inside a fixed kernel: loops i, j, k (i32) around a store to
 * Y[0] of the expression's dtype; A, B (f32), D (f64), H (f16), L (i64), U (u32), W (u64)
 * are the operand buffers. Returns the text after "Y[0] = " up to ";". */
static Var *vi, *vj, *vk;
static Buffer *bA, *bB, *bD, *bH, *bL, *bU, *bW;

static Expr *A(void) { return ir_load(bA, V(vi)); }
static Expr *B(void) { return ir_load(bB, V(vj)); }
static Expr *Dl(void) { return ir_load(bD, V(vi)); }
static Expr *Hl(void) { return ir_load(bH, V(vi)); }
static Expr *Ll(void) { return ir_load(bL, V(vi)); }
static Expr *Ul(void) { return ir_load(bU, V(vi)); }

static char extracted[1024];

static const char *ex(Expr *e)
{
    Buffer *y = param("Y", e->dtype == DT_BOOL ? DT_U8 : e->dtype, s1, 1, 0);
    Stmt *st = ir_store(y, I(0), e);
    Kernel *k = kernel("ex", (Buffer *[]){bA, bB, bD, bH, bL, bU, bW, y}, 8,
                       loop(vi, 4, loop(vj, 4, loop(vk, 4, st))));
    const char *text = print_kernel(k);
    const char *p = strstr(text, "Y[0] = ");
    if (!p)
        return "(no store)";
    p += 7;
    const char *q = strstr(p, ";\n");
    size_t n = (size_t)(q - p);
    if (n >= sizeof extracted)
        n = sizeof extracted - 1;
    memcpy(extracted, p, n);
    extracted[n] = 0;
    return extracted;
}

static void test_expressions(void)
{
    vi = ir_var_new("i", DT_I32);
    vj = ir_var_new("j", DT_I32);
    vk = ir_var_new("k", DT_I32);
    bA = param("A", DT_F32, s4, 1, 1);
    bB = param("B", DT_F32, s4, 1, 1);
    bD = param("D", DT_F64, s4, 1, 1);
    bH = param("H", DT_F16, s4, 1, 1);
    bL = param("L", DT_I64, s4, 1, 1);
    bU = param("U", DT_U32, s4, 1, 1);
    bW = param("W", DT_U64, s4, 1, 1);
    Expr *i = V(vi), *j = V(vj), *k = V(vk);

    /* precedence and associativity */
    CHECK_STR("i - (j - k)", ex(bin(OP_SUB, i, bin(OP_SUB, j, k))));
    CHECK_STR("i - j - k", ex(bin(OP_SUB, bin(OP_SUB, i, j), k)));
    CHECK_STR("i / (j * k)", ex(bin(OP_DIV, i, bin(OP_MUL, j, k))));
    CHECK_STR("i * j / k", ex(bin(OP_DIV, bin(OP_MUL, i, j), k)));
    CHECK_STR("(i + j) * k", ex(bin(OP_MUL, bin(OP_ADD, i, j), k)));
    CHECK_STR("i + j * k", ex(bin(OP_ADD, i, bin(OP_MUL, j, k))));
    CHECK_STR("i % (j % k)", ex(bin(OP_MOD, i, bin(OP_MOD, j, k))));
    CHECK_STR("A[i] + (B[j] + 1.0f)", ex(bin(OP_ADD, A(), bin(OP_ADD, B(), ir_float(1, DT_F32)))));
    CHECK_STR("A[i * 4 + j]", ex(ir_load(bA, bin(OP_ADD, bin(OP_MUL, i, I(4)), j))));

    /* unary minus and negative constants */
    CHECK_STR("-(-i)", ex(ir_un(UN_NEG, ir_un(UN_NEG, i))));
    CHECK_STR("-(-5)", ex(ir_un(UN_NEG, I(-5))));
    CHECK_STR("-(i + j)", ex(ir_un(UN_NEG, bin(OP_ADD, i, j))));
    CHECK_STR("i - (-5)", ex(bin(OP_SUB, i, I(-5))));
    CHECK_STR("i + (-j)", ex(bin(OP_ADD, i, ir_un(UN_NEG, j))));
    CHECK_STR("i * -5", ex(bin(OP_MUL, i, I(-5))));
    CHECK_STR("-5 * i", ex(bin(OP_MUL, I(-5), i)));
    CHECK_STR("-A[i]", ex(ir_un(UN_NEG, A())));
    CHECK_STR("-(-1.5f)", ex(ir_un(UN_NEG, ir_float(-1.5, DT_F32))));
    CHECK_STR("~i", ex(ir_un(UN_BITNOT, i)));
    CHECK_STR("!(i < j)", ex(ir_un(UN_NOT, bin(OP_LT, i, j))));

    /* integer constants */
    CHECK_STR("(-2147483647 - 1)", ex(I(INT32_MIN)));
    CHECK_STR("i - (-2147483647 - 1)", ex(bin(OP_SUB, i, I(INT32_MIN))));
    CHECK_STR("2147483647", ex(I(INT32_MAX)));
    CHECK_STR("INT64_C(5)", ex(ir_int(5, DT_I64)));
    CHECK_STR("-INT64_C(5)", ex(ir_int(-5, DT_I64)));
    CHECK_STR("L[i] - (-INT64_C(5))", ex(bin(OP_SUB, Ll(), ir_int(-5, DT_I64))));
    CHECK_STR("(-INT64_C(9223372036854775807) - 1)", ex(ir_int(INT64_MIN, DT_I64)));
    CHECK_STR("INT64_C(9223372036854775807)", ex(ir_int(INT64_MAX, DT_I64)));
    CHECK_STR("7u", ex(ir_int(7, DT_U32)));
    CHECK_STR("4294967295u", ex(ir_int(-1, DT_U32)));
    CHECK_STR("UINT64_C(18446744073709551615)", ex(ir_int(-1, DT_U64)));
    CHECK_STR("1", ex(ir_bool(1)));
    CHECK_STR("-3", ex(ir_int(-3, DT_I8)));

    /* float constants: shortest round-trip form, always a '.' or an exponent */
    CHECK_STR("1.0f", ex(ir_float(1, DT_F32)));
    CHECK_STR("1e-05f", ex(ir_float(1e-5, DT_F32)));
    CHECK_STR("0.1f", ex(ir_float(0.1, DT_F32)));
    CHECK_STR("-2.5f", ex(ir_float(-2.5, DT_F32)));
    CHECK_STR("100.0f", ex(ir_float(100, DT_F32)));
    CHECK_STR("1200000.0f", ex(ir_float(1.2e6, DT_F32)));
    CHECK_STR("1e+07f", ex(ir_float(1e7, DT_F32)));
    CHECK_STR("123.456f", ex(ir_float(123.456001, DT_F32)));
    CHECK_STR("16777216.0", ex(ir_float(16777216, DT_F64)));
    CHECK_STR("1e+20f", ex(ir_float(1e20, DT_F32)));
    CHECK_STR("3.4028235e+38f", ex(ir_float(3.4028234663852886e38, DT_F32)));
    CHECK_STR("1.1754944e-38f", ex(ir_float(1.17549435e-38, DT_F32)));
    CHECK_STR("1e-45f", ex(ir_float(1.4e-45, DT_F32)));
    CHECK_STR("0.33333334f", ex(ir_float(1.0 / 3.0, DT_F32)));
    CHECK_STR("-0.0f", ex(ir_float(-0.0, DT_F32)));
    CHECK_STR("INFINITY", ex(ir_float(INFINITY, DT_F32)));
    CHECK_STR("-INFINITY", ex(ir_float(-INFINITY, DT_F32)));
    CHECK_STR("NAN", ex(ir_float(NAN, DT_F32)));
    CHECK_STR("A[i] - (-INFINITY)", ex(bin(OP_SUB, A(), ir_float(-INFINITY, DT_F32))));
    CHECK_STR("A[i] * -INFINITY", ex(bin(OP_MUL, A(), ir_float(-INFINITY, DT_F32))));
    CHECK_STR("0.1", ex(ir_float(0.1, DT_F64)));
    CHECK_STR("0.3333333333333333", ex(ir_float(1.0 / 3.0, DT_F64)));
    CHECK_STR("2.0", ex(ir_float(2, DT_F64)));
    CHECK_STR("1e+100", ex(ir_float(1e100, DT_F64)));
    CHECK_STR("5e-324", ex(ir_float(5e-324, DT_F64)));
    CHECK_STR("kgen_f32_to_f16(0.5f)", ex(ir_float(0.5, DT_F16)));

    /* operators that become calls */
    CHECK_STR("kgen_min_f32(A[i], B[j])", ex(bin(OP_MIN, A(), B())));
    /* a constant bound that is not NaN: the helper without its NaN test, the bound second */
    CHECK_STR("kgen_max_f32k(A[i], 0.0f)", ex(bin(OP_MAX, A(), ir_float(0, DT_F32))));
    CHECK_STR("kgen_min_f32k(A[i], 6.0f)", ex(bin(OP_MIN, ir_float(6, DT_F32), A())));
    CHECK_STR("kgen_max_f32(A[i], NAN)", ex(bin(OP_MAX, A(), ir_float(NAN, DT_F32))));
    CHECK_STR("kgen_max_i32(i, j + 1)", ex(bin(OP_MAX, i, bin(OP_ADD, j, I(1)))));
    CHECK_STR("kgen_min_i64(L[i], INT64_C(0))", ex(bin(OP_MIN, Ll(), ir_int(0, DT_I64))));
    CHECK_STR("kgen_max_u32(U[i], 3u)", ex(bin(OP_MAX, Ul(), ir_int(3, DT_U32))));
    CHECK_STR("kgen_max_f64(D[i], 0.0)", ex(bin(OP_MAX, Dl(), ir_float(0, DT_F64))));
    CHECK_STR("kgen_floordiv_i32(i - 8, 4)", ex(bin(OP_FLOORDIV, bin(OP_SUB, i, I(8)), I(4))));
    CHECK_STR("kgen_floormod_i32(i, 4)", ex(bin(OP_FLOORMOD, i, I(4))));
    CHECK_STR("kgen_floordiv_i64(L[i], INT64_C(3))", ex(bin(OP_FLOORDIV, Ll(), ir_int(3, DT_I64))));
    CHECK_STR("U[i] / 3u", ex(bin(OP_FLOORDIV, Ul(), ir_int(3, DT_U32))));
    CHECK_STR("U[i] % 3u", ex(bin(OP_FLOORMOD, Ul(), ir_int(3, DT_U32))));
    CHECK_STR("floorf(A[i] / B[j])", ex(bin(OP_FLOORDIV, A(), B())));
    CHECK_STR("kgen_floormodf(A[i], B[j])", ex(bin(OP_FLOORMOD, A(), B())));
    CHECK_STR("fmodf(A[i], B[j])", ex(bin(OP_MOD, A(), B())));
    CHECK_STR("fmod(D[i], 2.0)", ex(bin(OP_MOD, Dl(), ir_float(2, DT_F64))));
    CHECK_STR("2 * kgen_floordiv_i32(i, 4)", ex(bin(OP_MUL, I(2), bin(OP_FLOORDIV, i, I(4)))));

    /* comparisons, logic, bits: no mixing without parentheses */
    CHECK_STR("i < j", ex(bin(OP_LT, i, j)));
    CHECK_STR("i + 1 <= j * 2", ex(bin(OP_LE, bin(OP_ADD, i, I(1)), bin(OP_MUL, j, I(2)))));
    CHECK_STR("(i < j) == (j < k)", ex(bin(OP_EQ, bin(OP_LT, i, j), bin(OP_LT, j, k))));
    CHECK_STR("i < j && j < k", ex(bin(OP_AND, bin(OP_LT, i, j), bin(OP_LT, j, k))));
    CHECK_STR("(i < j && j < k) || k == i",
              ex(bin(OP_OR, bin(OP_AND, bin(OP_LT, i, j), bin(OP_LT, j, k)), bin(OP_EQ, k, i))));
    CHECK_STR("i < j || j < k || k < i",
              ex(bin(OP_OR, bin(OP_OR, bin(OP_LT, i, j), bin(OP_LT, j, k)), bin(OP_LT, k, i))));
    CHECK_STR("i & (j + k)", ex(bin(OP_BITAND, i, bin(OP_ADD, j, k))));
    CHECK_STR("i & j & k", ex(bin(OP_BITAND, bin(OP_BITAND, i, j), k)));
    CHECK_STR("(i & j) | k", ex(bin(OP_BITOR, bin(OP_BITAND, i, j), k)));
    CHECK_STR("i << (j + 1)", ex(bin(OP_SHL, i, bin(OP_ADD, j, I(1)))));
    CHECK_STR("(i >> 2) + 1", ex(bin(OP_ADD, bin(OP_SHR, i, I(2)), I(1))));
    CHECK_STR("(i & 1) == 0", ex(bin(OP_EQ, bin(OP_BITAND, i, I(1)), I(0))));
    CHECK_STR("(!(i < j)) == (j < k)", ex(bin(OP_EQ, ir_un(UN_NOT, bin(OP_LT, i, j)), bin(OP_LT, j, k))));
    CHECK_STR("A[i] != A[i]", ex(bin(OP_NE, A(), A())));

    /* select and casts */
    CHECK_STR("(i < j ? A[i] : B[j])", ex(ir_select(bin(OP_LT, i, j), A(), B())));
    CHECK_STR("(i < j ? 1.0f : (j < k ? 2.0f : 3.0f))",
              ex(ir_select(bin(OP_LT, i, j), ir_float(1, DT_F32),
                           ir_select(bin(OP_LT, j, k), ir_float(2, DT_F32), ir_float(3, DT_F32)))));
    CHECK_STR("(float)i", ex(ir_cast(DT_F32, i)));
    CHECK_STR("(float)(i + j)", ex(ir_cast(DT_F32, bin(OP_ADD, i, j))));
    CHECK_STR("(float)(-i)", ex(ir_cast(DT_F32, ir_un(UN_NEG, i))));
    CHECK_STR("(int32_t)A[i]", ex(ir_cast(DT_I32, A())));
    CHECK_STR("(int64_t)i * INT64_C(3)", ex(bin(OP_MUL, ir_cast(DT_I64, i), ir_int(3, DT_I64))));
    CHECK_STR("(double)A[i]", ex(ir_cast(DT_F64, A())));
    CHECK_STR("(i != 0)", ex(ir_cast(DT_BOOL, i)));
    CHECK_STR("(A[i] + 1.0f != 0)", ex(ir_cast(DT_BOOL, bin(OP_ADD, A(), ir_float(1, DT_F32)))));
    CHECK_STR("((int32_t)(i < j) != 0)", ex(ir_cast(DT_BOOL, ir_cast(DT_I32, bin(OP_LT, i, j)))));
    CHECK_STR("(uint8_t)i", ex(ir_cast(DT_U8, i)));

    /* f16: loads widen, values are floats, casts to f16 round */
    CHECK_STR("kgen_f16_to_f32(H[i])", ex(ir_cast(DT_F32, Hl())));
    CHECK_STR("kgen_f32_to_f16(kgen_f16_to_f32(H[i]) * 2.0f)", ex(bin(OP_MUL, Hl(), ir_float(2, DT_F16))));
    CHECK_STR("kgen_f32_to_f16(A[i])", ex(ir_cast(DT_F16, A())));
    CHECK_STR("kgen_f32_to_f16((float)i)", ex(ir_cast(DT_F16, i)));
    CHECK_STR("kgen_f32_to_f16((float)(-i))", ex(ir_cast(DT_F16, ir_un(UN_NEG, i))));
    CHECK_STR("H[i + 1]", ex(ir_load(bH, bin(OP_ADD, i, I(1)))));
    CHECK_STR("kgen_f32_to_f16(kgen_f16_to_f32(kgen_f32_to_f16(A[i])) * 2.0f)",
              ex(bin(OP_MUL, ir_cast(DT_F16, A()), ir_float(2, DT_F16))));
    CHECK_STR("kgen_f16_to_f32(kgen_f32_to_f16((float)i))", ex(ir_cast(DT_F32, ir_cast(DT_F16, i))));
    CHECK_STR("kgen_f16_to_f32(kgen_f32_to_f16((float)D[i]))", ex(ir_cast(DT_F32, ir_cast(DT_F16, Dl()))));
    CHECK_STR("kgen_f32_to_f16(kgen_expf(kgen_f16_to_f32(H[i])))", ex(call1(FN_EXP, Hl())));

    /* math */
    CHECK_STR("kgen_expf(A[i])", ex(call1(FN_EXP, A())));
    CHECK_STR("exp(D[i])", ex(call1(FN_EXP, Dl())));
    CHECK_STR("kgen_rsqrtf(A[i])", ex(call1(FN_RSQRT, A())));
    CHECK_STR("kgen_sigmoidf(A[i])", ex(call1(FN_SIGMOID, A())));
    CHECK_STR("kgen_sigmoid(D[i])", ex(call1(FN_SIGMOID, Dl())));
    CHECK_STR("rintf(A[i])", ex(call1(FN_ROUND, A())));
    CHECK_STR("fabsf(A[i])", ex(call1(FN_ABS, A())));
    CHECK_STR("kgen_abs_i32(i - j)", ex(call1(FN_ABS, bin(OP_SUB, i, j))));
    CHECK_STR("kgen_abs_i64(L[i])", ex(call1(FN_ABS, Ll())));
    CHECK_STR("U[i] + 1u", ex(bin(OP_ADD, call1(FN_ABS, Ul()), ir_int(1, DT_U32))));
    CHECK_STR("(isnan(A[i]) != 0)", ex(call1(FN_ISNAN, A())));
    CHECK_STR("(isinf(D[i]) != 0) && i < j", ex(bin(OP_AND, call1(FN_ISINF, Dl()), bin(OP_LT, i, j))));
    CHECK_STR("kgen_tanhf(A[i])", ex(call1(FN_TANH, A())));
    CHECK_STR("tanh(D[i])", ex(call1(FN_TANH, Dl())));
    CHECK_STR("kgen_erff(A[i])", ex(call1(FN_ERF, A())));
    CHECK_STR("atanhf(A[i])", ex(call1(FN_ATANH, A())));
    {
        Expr *args[KG_MAX_ARGS] = {A(), B(), ir_float(1, DT_F32)};
        CHECK_STR("fmaf(A[i], B[j], 1.0f)", ex(ir_call(FN_FMA, args)));
        Expr *pargs[KG_MAX_ARGS] = {Dl(), ir_float(0.5, DT_F64)};
        CHECK_STR("pow(D[i], 0.5)", ex(ir_call(FN_POW, pargs)));
    }
}

/* ---------------------------------------------------------------- whole kernels */

static void test_loops(void)
{
    int64_t s416[2] = {4, 16};
    Buffer *a = param("A", DT_F32, s416, 2, 1), *b = param("B", DT_F32, s416, 2, 1);
    Buffer *c = param("C", DT_F32, s416, 2, 0);
    Var *i = ir_var_new("i", DT_I32), *j = ir_var_new("j", DT_I32);
    Expr *idx = bin(OP_ADD, bin(OP_MUL, V(i), I(16)), V(j));
    Stmt *body = loop(i, 4, loop(j, 16, ir_store(c, idx, bin(OP_ADD, ir_load(a, idx), ir_load(b, idx)))));
    Kernel *k = kernel("add", (Buffer *[]){a, b, c}, 3, body);
    ir_vec_push(&k->notes, "fused: Add_0", 8, "notes");
    ir_vec_push(&k->notes, "schedule: default", 8, "notes");
    CHECK_STR("/* add\n"
              " * fused: Add_0\n"
              " * schedule: default\n"
              " */\n"
              "int add(const float *restrict A, const float *restrict B, float *restrict C, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    for (int32_t i = 0; i < 4; ++i) {\n"
              "        for (int32_t j = 0; j < 16; ++j) {\n"
              "            C[i * 16 + j] = A[i * 16 + j] + B[i * 16 + j];\n"
              "        }\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));

    StrBuf proto = {0};
    em_print_prototype(&proto, k, &em_dialect_c);
    CHECK_STR("int add(const float *restrict A, const float *restrict B, float *restrict C, void *restrict workspace)",
              proto.data);
    sb_free(&proto);

    /* min offsets, loop kinds, let, if/else if/else, comments, long bodies */
    Buffer *x = param("X", DT_F32, s64, 1, 1), *y = param("Y", DT_F32, s64, 1, 0);
    Var *o = ir_var_new("i.outer", DT_I32), *in = ir_var_new("i.inner", DT_I32);
    Var *t = ir_var_new("t", DT_I32), *n = ir_var_new("n", DT_I32);
    Expr *pos = bin(OP_ADD, bin(OP_MUL, V(o), I(8)), V(in));
    Stmt *inner = ir_let(t, pos,
        ir_if(bin(OP_LT, V(t), I(10)), ir_store(y, V(t), ir_float(0, DT_F32)),
              ir_if(bin(OP_LT, V(t), I(20)), ir_store(y, V(t), ir_load(x, V(t))),
                    seq(2, ir_comment("clamp */ here"), ir_store(y, V(t), bin(OP_MIN, ir_load(x, V(t)), ir_float(6, DT_F32)))))));
    Stmt *loops = seq(3,
        ir_for(o, I(0), I(8), FOR_PARALLEL, ir_for(in, I(0), I(8), FOR_VECTORIZED, inner)),
        ir_for(n, I(2), I(4), FOR_UNROLLED, ir_store(y, V(n), ir_float(1, DT_F32))),
        ir_for(n, I(1), I(3), FOR_BOUND, ir_store(y, V(n), ir_float(2, DT_F32))));
    loops->u.seq.items[2]->u.loop.bind_tag = "threadIdx.x";
    k = kernel("kinds", (Buffer *[]){x, y}, 2, loops);
    CHECK_STR("/* kinds */\n"
              "int kinds(const float *restrict X, float *restrict Y, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    KGEN_PARALLEL_FOR\n"
              "    for (int32_t i_outer = 0; i_outer < 8; ++i_outer) {\n"
              "        KGEN_VECTORIZE\n"
              "        for (int32_t i_inner = 0; i_inner < 8; ++i_inner) {\n"
              "            const int32_t t = i_outer * 8 + i_inner;\n"
              "            if (t < 10) {\n"
              "                Y[t] = 0.0f;\n"
              "            } else if (t < 20) {\n"
              "                Y[t] = X[t];\n"
              "            } else {\n"
              "                /* clamp * / here */\n"
              "                Y[t] = kgen_min_f32k(X[t], 6.0f);\n"
              "            }\n"
              "        } /* i_inner */\n"
              "    } /* i_outer */\n"
              "    for (int32_t n = 2; n < 6; ++n) { /* unrolled */\n"
              "        Y[n] = 1.0f;\n"
              "    }\n"
              "    for (int32_t n = 1; n < 4; ++n) { /* threadIdx.x */\n"
              "        Y[n] = 2.0f;\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));

    /* a symbolic lower bound; an outer variable as the extent */
    Var *r = ir_var_new("r", DT_I32), *q = ir_var_new("q", DT_I32);
    body = loop(r, 4, ir_for(q, bin(OP_MUL, V(r), I(2)), bin(OP_SUB, I(8), V(r)), FOR_SERIAL,
                             ir_store(y, V(q), ir_float(3, DT_F32))));
    k = kernel("bounds", (Buffer *[]){x, y}, 2, body);
    CHECK_STR("/* bounds */\n"
              "int bounds(const float *restrict X, float *restrict Y, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    (void)X;\n"
              "    for (int32_t r = 0; r < 4; ++r) {\n"
              "        for (int32_t q = r * 2; q < r * 2 + (8 - r); ++q) {\n"
              "            Y[q] = 3.0f;\n"
              "        }\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));
}

static void test_allocs(void)
{
    Buffer *x = param("X", DT_F32, s16, 1, 1), *y = param("Y", DT_F32, s16, 1, 0);
    Buffer *ws = ir_buffer_new("T", DT_F32, 1, s16, SCOPE_WORKSPACE);
    Buffer *ws2 = ir_buffer_new("U", DT_I32, 1, s4, SCOPE_WORKSPACE);
    Buffer *loc = ir_buffer_new("acc", DT_F32, 1, s4, SCOPE_LOCAL);
    ws2->ws_offset = 64;
    Var *i = ir_var_new("i", DT_I32), *j = ir_var_new("j", DT_I32);
    Stmt *body = ir_allocate(ws, ir_allocate(ws2, seq(3,
        loop(i, 16, ir_store(ws, V(i), bin(OP_MUL, ir_load(x, V(i)), ir_float(2, DT_F32)))),
        loop(i, 4, ir_store(ws2, V(i), V(i))),
        loop(i, 4, ir_allocate(loc, seq(2,
            loop(j, 4, ir_store(loc, V(j), ir_load(ws, bin(OP_ADD, bin(OP_MUL, V(i), I(4)), V(j))))),
            loop(j, 4, ir_store(y, bin(OP_ADD, bin(OP_MUL, V(i), I(4)), V(j)),
                                bin(OP_ADD, ir_load(loc, V(j)), ir_cast(DT_F32, ir_load(ws2, V(j))))))))))));
    Kernel *k = kernel("allocs", (Buffer *[]){x, y}, 2, body);
    k->workspace_bytes = 80;
    CHECK_STR("/* allocs */\n"
              "int allocs(const float *restrict X, float *restrict Y, void *restrict workspace)\n"
              "{\n"
              "    float *restrict T = (float *)workspace;\n"
              "    int32_t *restrict U = (int32_t *)((unsigned char *)workspace + 64);\n"
              "    for (int32_t i = 0; i < 16; ++i) {\n"
              "        T[i] = X[i] * 2.0f;\n"
              "    }\n"
              "    for (int32_t i = 0; i < 4; ++i) {\n"
              "        U[i] = i;\n"
              "    }\n"
              "    for (int32_t i = 0; i < 4; ++i) {\n"
              "        KGEN_ALIGN(64) float acc[4];\n"
              "        for (int32_t j = 0; j < 4; ++j) {\n"
              "            acc[j] = T[i * 4 + j];\n"
              "        }\n"
              "        for (int32_t j = 0; j < 4; ++j) {\n"
              "            Y[i * 4 + j] = acc[j] + (float)U[j];\n"
              "        }\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));

    /* an unused local, an unused let, the same buffer allocated twice in one block */
    Var *u = ir_var_new("u", DT_I32);
    body = seq(3, ir_allocate(loc, ir_let(u, I(3), ir_store(y, I(0), ir_float(0, DT_F32)))),
               ir_allocate(loc, ir_store(loc, I(0), ir_float(1, DT_F32))),
               ir_store(y, I(1), ir_load(x, I(1))));
    k = kernel("unused", (Buffer *[]){x, y}, 2, body);
    CHECK_STR("/* unused */\n"
              "int unused(const float *restrict X, float *restrict Y, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    KGEN_ALIGN(64) float acc[4];\n"
              "    (void)acc;\n"
              "    const int32_t u = 3;\n"
              "    (void)u;\n"
              "    Y[0] = 0.0f;\n"
              "    {\n"
              "        KGEN_ALIGN(64) float acc[4];\n"
              "        acc[0] = 1.0f;\n"
              "    }\n"
              "    Y[1] = X[1];\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));
}

static void test_f16(void)
{
    Buffer *h = param("h", DT_F16, s8, 1, 1), *o = param("o", DT_F16, s8, 1, 0);
    Buffer *f = param("f", DT_F32, s8, 1, 0);
    Var *i = ir_var_new("i", DT_I32);
    Expr *hv = ir_load(h, V(i));
    Stmt *body = loop(i, 8, seq(2,
        ir_store(o, V(i), bin(OP_ADD, bin(OP_MUL, hv, hv), ir_float(1, DT_F16))),
        ir_store(f, V(i), ir_cast(DT_F32, hv))));
    Kernel *k = kernel("half", (Buffer *[]){h, o, f}, 3, body);
    CHECK_STR("/* half */\n"
              "int half_kernel(const uint16_t *restrict h, uint16_t *restrict o, float *restrict f, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    for (int32_t i = 0; i < 8; ++i) {\n"
              "        o[i] = kgen_f32_to_f16(kgen_f16_to_f32(h[i]) * kgen_f16_to_f32(h[i]) + 1.0f);\n"
              "        f[i] = kgen_f16_to_f32(h[i]);\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));
}

static void test_names(void)
{
    int64_t s2[1] = {2};
    Buffer *p1 = param("for", DT_F32, s2, 1, 1), *p2 = param("in.0", DT_F32, s2, 1, 1);
    Buffer *p3 = param("0out", DT_F32, s2, 1, 0);
    Var *a = ir_var_new("i", DT_I32), *b = ir_var_new("i", DT_I32), *c = ir_var_new("int", DT_I32);
    Var *d = ir_var_new("for", DT_I32), *e = ir_var_new("__x", DT_I32), *f = ir_var_new("i", DT_I32);
    /* i (a) { i (b) { int { for } } }, then a sibling i (f) and a let __x */
    Stmt *store = ir_store(p3, bin(OP_ADD, bin(OP_ADD, V(a), V(b)), bin(OP_ADD, V(c), V(d))),
                           bin(OP_ADD, ir_load(p1, V(a)), ir_load(p2, V(b))));
    Stmt *body = seq(2, loop(a, 2, loop(b, 2, loop(c, 1, ir_let(d, I(0), store)))),
                     loop(f, 2, ir_let(e, V(f), ir_store(p3, V(e), ir_float(0, DT_F32)))));
    Kernel *k = kernel("main", (Buffer *[]){p1, p2, p3}, 3, body);
    CHECK_STR("/* main */\n"
              "int main_kernel(\n"
              "    const float *restrict for_1,\n"
              "    const float *restrict in_0,\n"
              "    float *restrict v_0out,\n"
              "    void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    for (int32_t i = 0; i < 2; ++i) {\n"
              "        for (int32_t i_1 = 0; i_1 < 2; ++i_1) {\n"
              "            for (int32_t int_1 = 0; int_1 < 1; ++int_1) {\n"
              "                const int32_t for_2 = 0;\n"
              "                v_0out[i + i_1 + (int_1 + for_2)] = for_1[i] + in_0[i_1];\n"
              "            }\n"
              "        }\n"
              "    }\n"
              "    for (int32_t i = 0; i < 2; ++i) {\n"
              "        const int32_t v__x = i;\n"
              "        v_0out[v__x] = 0.0f;\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));

    /* a let that rebinds the Var it reads, and sibling lets of one name */
    Var *x = ir_var_new("x", DT_I32), *x2 = ir_var_new("x", DT_I32);
    body = loop(x, 2, seq(2, ir_let(x, bin(OP_ADD, V(x), I(1)), ir_store(p3, V(x), ir_float(0, DT_F32))),
                          ir_let(x2, I(1), ir_store(p3, V(x2), ir_float(1, DT_F32)))));
    k = kernel("lets", (Buffer *[]){p3}, 1, body);
    CHECK_STR("/* lets */\n"
              "int lets(float *restrict v_0out, void *restrict workspace)\n"
              "{\n"
              "    (void)workspace;\n"
              "    for (int32_t x = 0; x < 2; ++x) {\n"
              "        const int32_t x_1 = x + 1;\n"
              "        v_0out[x_1] = 0.0f;\n"
              "        const int32_t x_2 = 1;\n"
              "        v_0out[x_2] = 1.0f;\n"
              "    }\n"
              "    return KGEN_OK;\n"
              "}\n",
              print_kernel(k));
}

/* ---------------------------------------------------------------- toolchains */

static char tmpdir[512];

static int have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static int run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc;
}

static void write_text(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int file_exists(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* C[i] = A[i] * 2 + 1, run through both entry points. */
static const char *scale_main =
    "#include \"scale.h\"\n"
    "#include <stdio.h>\n"
    "int main(void)\n"
    "{\n"
    "    float a[8], c[8];\n"
    "    int64_t shape[1] = {8}, bad[1] = {7};\n"
    "    kgen_tensor ta = {a, {KGEN_DEVICE_CPU, 0}, 1, {KGEN_DTYPE_FLOAT, 32, 1}, shape, NULL, 0};\n"
    "    kgen_tensor tc = {c, {KGEN_DEVICE_CPU, 0}, 1, {KGEN_DTYPE_FLOAT, 32, 1}, shape, NULL, 0};\n"
    "    kgen_tensor *args[2] = {&ta, &tc};\n"
    "    int i, fails = 0;\n"
    "    for (i = 0; i < 8; i++) { a[i] = (float)i - 2.5f; c[i] = 0; }\n"
    "    if (scale(a, c, NULL) != KGEN_OK) fails++;\n"
    "    for (i = 0; i < 8; i++) if (c[i] != a[i] * 2.0f + 1.0f) fails++;\n"
    "    for (i = 0; i < 8; i++) c[i] = 0;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_OK) fails++;\n"
    "    for (i = 0; i < 8; i++) if (c[i] != a[i] * 2.0f + 1.0f) fails++;\n"
    "    if (scale_tensors(args, 1, NULL) != KGEN_ERR_NARGS) fails++;\n"
    "    tc.shape = bad;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_SHAPE) fails++;\n"
    "    tc.shape = shape; tc.dtype.bits = 64;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_DTYPE) fails++;\n"
    "    tc.dtype.bits = 32; tc.ndim = 2;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_NDIM) fails++;\n"
    "    tc.ndim = 1; tc.data = NULL;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_NULL) fails++;\n"
    "    tc.data = c; tc.byte_offset = 2;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_ALIGN) fails++;\n"
    "    tc.byte_offset = 0; tc.device.device_type = KGEN_DEVICE_CUDA;\n"
    "    if (scale_tensors(args, 2, NULL) != KGEN_ERR_DEVICE) fails++;\n"
    "    printf(\"%s %d\\n\", fails ? \"FAIL\" : \"ok\", fails);\n"
    "    return fails != 0;\n"
    "}\n";

/* Runtime helpers against plain C, compiled and run as a program. */
static const char *runtime_main =
    "#include \"kgen_runtime.h\"\n"
    "#include <stdio.h>\n"
    "int main(void)\n"
    "{\n"
    "    int fails = 0;\n"
    "    unsigned char block[100];\n"
    "    kgen_arena ar;\n"
    "    void *p, *q;\n"
    "    fails += kgen_floordiv_i32(-7, 2) != -4 || kgen_floormod_i32(-7, 2) != 1;\n"
    "    fails += kgen_floordiv_i32(7, -2) != -4 || kgen_floormod_i32(7, -2) != -1;\n"
    "    fails += kgen_floordiv_i32(6, 3) != 2 || kgen_floormod_i32(-6, 3) != 0;\n"
    "    fails += kgen_floordiv_i64(-7, 2) != -4 || kgen_floormod_i64(-1, 5) != 4;\n"
    "    fails += kgen_floormodf(-1.0f, 3.0f) != 2.0f || kgen_floormod(5.0, -3.0) != -1.0;\n"
    "    fails += !(kgen_min_f32(NAN, 1.0f) != kgen_min_f32(NAN, 1.0f));\n"
    "    fails += !(kgen_max_f32(1.0f, NAN) != kgen_max_f32(1.0f, NAN));\n"
    "    fails += !(kgen_max_f32k(NAN, 0.0f) != kgen_max_f32k(NAN, 0.0f));\n"
    "    fails += !(kgen_min_f32k(NAN, 6.0f) != kgen_min_f32k(NAN, 6.0f));\n"
    "    fails += kgen_max_f32k(-1.0f, 0.0f) != 0.0f || kgen_max_f32k(2.0f, 0.0f) != 2.0f;\n"
    "    fails += kgen_min_f32k(7.0f, 6.0f) != 6.0f || kgen_min_f32k(-7.0f, 6.0f) != -7.0f;\n"
    "    fails += signbit(kgen_max_f32k(-0.0f, 0.0f)) != 0 || signbit(kgen_min_f32k(0.0f, -0.0f)) == 0;\n"
    "    fails += !(kgen_min_f64(1.0, NAN) != kgen_min_f64(1.0, NAN));\n"
    "    fails += kgen_min_f32(1.0f, 2.0f) != 1.0f || kgen_max_f64(1.0, 2.0) != 2.0;\n"
    "    fails += kgen_min_u32(1u, 4000000000u) != 1u || kgen_max_u64(1u, 2u) != 2u;\n"
    "    fails += kgen_min_i64(-1, 1) != -1 || kgen_max_i32(-1, 1) != 1;\n"
    "    fails += kgen_abs_i32(-5) != 5 || kgen_abs_i64(-5) != 5 || kgen_abs_i32(INT32_MIN) != INT32_MIN;\n"
    "    fails += kgen_sigmoidf(0.0f) != 0.5f || kgen_sigmoid(0.0) != 0.5 || kgen_rsqrtf(4.0f) != 0.5f;\n"
    "    fails += !(kgen_sigmoidf(-1000.0f) >= 0.0f && kgen_sigmoidf(-1000.0f) < 1.7e-38f);\n"
    "    fails += kgen_sigmoidf(1000.0f) != 1.0f || kgen_sigmoidf(-INFINITY) >= 1.7e-38f;\n"
    "    fails += !(kgen_sigmoidf(NAN) != kgen_sigmoidf(NAN)) || kgen_sigmoidf(INFINITY) != 1.0f;\n"
    "    fails += kgen_f32_to_f16(1.0f) != 0x3c00 || kgen_f32_to_f16(-2.0f) != 0xc000;\n"
    "    fails += kgen_f32_to_f16(65504.0f) != 0x7bff || kgen_f32_to_f16(65520.0f) != 0x7c00;\n"
    "    fails += kgen_f32_to_f16(5.9604645e-8f) != 0x0001 || kgen_f32_to_f16(2.9802322e-8f) != 0;\n"
    "    fails += kgen_f32_to_f16(1.0009765625f + 0.00048828125f) != 0x3c02;\n"
    "    fails += kgen_f32_to_f16(1.0f + 0.00048828125f) != 0x3c00;\n"
    "    fails += kgen_f32_to_f16(INFINITY) != 0x7c00 || (kgen_f32_to_f16(NAN) & 0x7e00) != 0x7e00;\n"
    "    fails += kgen_f16_to_f32(0x0001) != 5.9604645e-8f || kgen_f16_to_f32(0x3555) != 0.333251953125f;\n"
    "    fails += kgen_f16_to_f32(0xfc00) != -INFINITY || kgen_f16_to_f32(0x8000) != 0.0f;\n"
    "    { unsigned h; for (h = 0; h < 0x7c00u; h++) fails += kgen_f32_to_f16(kgen_f16_to_f32((uint16_t)h)) != h; }\n"
    "    kgen_arena_init(&ar, block, sizeof block);\n"
    "    p = kgen_arena_alloc(&ar, 10, 1);\n"
    "    q = kgen_arena_alloc(&ar, 8, 16);\n"
    "    fails += !p || !q || ((uintptr_t)q % 16) != 0;\n"
    "    fails += kgen_arena_alloc(&ar, 200, 1) != NULL || kgen_arena_alloc(&ar, 4, 3) != NULL;\n"
    "    fails += KGEN_ALIGN_UP(13, 8) != 16 || KGEN_ALIGN_UP(16, 8) != 16;\n"
    "    fails += kgen_status_str(KGEN_OK)[0] != 'o' || kgen_status_str(99)[0] != 'u';\n"
    "    {   /* DLPack's DLTensor, spelled out: the layouts must match field for field */\n"
    "        typedef struct { int device_type; int32_t device_id; } DLDev;\n"
    "        typedef struct { uint8_t code, bits; uint16_t lanes; } DLType;\n"
    "        typedef struct { void *data; DLDev device; int32_t ndim; DLType dtype; int64_t *shape;\n"
    "                         int64_t *strides; uint64_t byte_offset; } DLT;\n"
    "        DLTensor t;\n"
    "        fails += sizeof(DLT) != sizeof(kgen_tensor) || sizeof t != sizeof(kgen_tensor);\n"
    "        fails += offsetof(DLT, device) != offsetof(kgen_tensor, device);\n"
    "        fails += offsetof(DLT, ndim) != offsetof(kgen_tensor, ndim);\n"
    "        fails += offsetof(DLT, dtype) != offsetof(kgen_tensor, dtype);\n"
    "        fails += offsetof(DLT, shape) != offsetof(kgen_tensor, shape);\n"
    "        fails += offsetof(DLT, strides) != offsetof(kgen_tensor, strides);\n"
    "        fails += offsetof(DLT, byte_offset) != offsetof(kgen_tensor, byte_offset);\n"
    "        fails += sizeof(DLType) != sizeof(kgen_dtype) || sizeof(DLDev) != sizeof(kgen_device);\n"
    "    }\n"
    "    printf(\"%s %d\\n\", fails ? \"FAIL\" : \"ok\", fails);\n"
    "    return fails != 0;\n"
    "}\n";

static Kernel *scale_kernel(void)
{
    Buffer *a = param("A", DT_F32, s8, 1, 1), *c = param("C", DT_F32, s8, 1, 0);
    Var *i = ir_var_new("i", DT_I32);
    Stmt *body = loop(i, 8, ir_store(c, V(i), bin(OP_ADD, bin(OP_MUL, ir_load(a, V(i)), ir_float(2, DT_F32)),
                                                 ir_float(1, DT_F32))));
    return kernel("scale", (Buffer *[]){a, c}, 2, body);
}

/* Every construct at once, compiled with -Werror and run against the same computation
 * done here. out[i] for i in [0, 16): see the comments. */
static Kernel *mix_kernel(void)
{
    Buffer *x = param("x", DT_F32, s16, 1, 1), *h = param("h", DT_F16, s16, 1, 1);
    Buffer *l = param("l", DT_I64, s16, 1, 1);
    Buffer *out = param("out", DT_F32, s16, 1, 0), *ho = param("ho", DT_F16, s16, 1, 0);
    Buffer *ws = ir_buffer_new("tmp", DT_F32, 1, s16, SCOPE_WORKSPACE);
    Buffer *loc = ir_buffer_new("acc", DT_F64, 1, s4, SCOPE_LOCAL);
    ws->ws_offset = 64;
    Var *i = ir_var_new("i", DT_I32), *o = ir_var_new("i.o", DT_I32), *in = ir_var_new("i.i", DT_I32);
    Var *t = ir_var_new("t", DT_F32), *m = ir_var_new("m", DT_I32);
    Expr *pos = bin(OP_ADD, bin(OP_MUL, V(o), I(4)), V(in));
    /* tmp[i] = max(x[i], -1) - (f16 h[i] - 0.5) */
    Stmt *st1 = ir_for(i, I(0), I(16), FOR_VECTORIZED,
        ir_store(ws, V(i), bin(OP_SUB, bin(OP_MAX, ir_load(x, V(i)), ir_float(-1, DT_F32)),
                                 bin(OP_SUB, ir_load(h, V(i)), ir_float(0.5, DT_F16)))));
    /* per block of 4: acc = (double)tmp; out[m] = even m: t + (ii-3)//2 + (ii-3)%%2,
       odd m: t < 0 ? -t : l[m] + sqrt(t) */
    Expr *fd = bin(OP_FLOORDIV, bin(OP_SUB, V(in), I(3)), I(2));   /* (ii-3) // 2 */
    Expr *fm = bin(OP_FLOORMOD, bin(OP_SUB, V(in), I(3)), I(2));
    Stmt *st2 = ir_for(o, I(0), I(4), FOR_PARALLEL, ir_allocate(loc, seq(2,
        ir_for(in, I(0), I(4), FOR_UNROLLED, ir_store(loc, V(in), ir_cast(DT_F64, ir_load(ws, pos)))),
        loop(in, 4, ir_let(t, ir_cast(DT_F32, ir_load(loc, V(in))), ir_let(m, pos,
            ir_if(bin(OP_EQ, bin(OP_FLOORMOD, V(m), I(2)), I(0)),
                  ir_store(out, V(m), bin(OP_ADD, V(t), ir_cast(DT_F32, bin(OP_ADD, fd, fm)))),
                  ir_store(out, V(m), ir_select(bin(OP_LT, V(t), ir_float(0, DT_F32)),
                                                ir_un(UN_NEG, V(t)),
                                                bin(OP_ADD, ir_cast(DT_F32, ir_load(l, V(m))),
                                                    call1(FN_SQRT, V(t))))))))))));
    /* ho[i] = f16(out[i] * 0.25) */
    Stmt *st3 = loop(i, 16, ir_store(ho, V(i), ir_cast(DT_F16, bin(OP_MUL, ir_load(out, V(i)), ir_float(0.25, DT_F32)))));
    Kernel *k = kernel("mix", (Buffer *[]){x, h, l, out, ho}, 5, ir_allocate(ws, seq(3, st1, st2, st3)));
    k->workspace_bytes = 128;
    ir_vec_push(&k->notes, "every construct at once", 4, "notes");
    return k;
}

static const char *mix_main =
    "#include \"mix.h\"\n"
    "#include <stdio.h>\n"
    "#include <math.h>\n"
    "static int64_t fdiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q; }\n"
    "static int64_t fmodi(int64_t a, int64_t b) { int64_t r = a % b; return (r != 0 && (r < 0) != (b < 0)) ? r + b : r; }\n"
    "int main(void)\n"
    "{\n"
    "    float x[16], out[16], tmp[16];\n"
    "    uint16_t h[16], ho[16];\n"
    "    int64_t l[16];\n"
    "    double ws[MIX_WORKSPACE_BYTES / 8 + 8];\n"
    "    int i, fails = 0;\n"
    "    for (i = 0; i < 16; i++) { x[i] = (float)i * 0.75f - 4.0f; h[i] = kgen_f32_to_f16((float)(i % 5) * 0.5f); l[i] = i * 3 - 20; }\n"
    "    if (mix(x, h, l, out, ho, ws) != KGEN_OK) fails++;\n"
    "    for (i = 0; i < 16; i++) {\n"
    "        float hv = kgen_f16_to_f32(h[i]);\n"
    "        float xm = x[i] > -1.0f ? x[i] : -1.0f;\n"
    "        tmp[i] = xm - (hv - 0.5f);\n"
    "    }\n"
    "    for (i = 0; i < 16; i++) {\n"
    "        int ii = i % 4;\n"
    "        float t = (float)(double)tmp[i], want;\n"
    "        if (i % 2 == 0) want = t + (float)(fdiv(ii - 3, 2) + fmodi(ii - 3, 2));\n"
    "        else want = t < 0.0f ? -t : (float)l[i] + sqrtf(t);\n"
    "        if (out[i] != want) { fails++; printf(\"out[%d] = %g, want %g\\n\", i, out[i], want); }\n"
    "        if (ho[i] != kgen_f32_to_f16(out[i] * 0.25f)) { fails++; printf(\"ho[%d]\\n\", i); }\n"
    "    }\n"
    "    printf(\"%s %d\\n\", fails ? \"FAIL\" : \"ok\", fails);\n"
    "    return fails != 0;\n"
    "}\n";

static const char *cxx_main =
    "#include \"mix.h\"\n"
    "#include \"scale.h\"\n"
    "int main() { kgen_tensor *args[2] = {0, 0}; return scale_tensors(args, 2, 0) == KGEN_ERR_NULL ? 0 : 1; }\n";

static void test_toolchains(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kgen_cprint_XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        CHECK(!"mkdtemp");
        return;
    }

    /* the C target files, through the outset (nested directory: mkdir -p) */
    OutSet os = {0};
    CHECK_EQ(0, em_c_kernel_files(&os, scale_kernel(), NULL, "scale.kg"));
    CHECK_EQ(0, em_c_kernel_files(&os, mix_kernel(), "mix", "tests/mix.kg"));
    CHECK_EQ(5, os.n);
    char out[600];
    snprintf(out, sizeof out, "%s/gen/c", tmpdir);
    CHECK_EQ(0, em_outset_write(&os, out));
    CHECK(file_exists(out, "scale.c") && file_exists(out, "scale.h") && file_exists(out, "kgen_runtime.h"));
    CHECK(file_exists(out, "mix.c") && file_exists(out, "mix.h"));
    CHECK(!file_exists(out, ".scale.c.tmp") && !file_exists(out, ".kgen_runtime.h.tmp"));
    for (int i = 0; i < os.n; i++)
        CHECK(!strncmp(os.files[i].text.data, "/* Generated by kgen from ", 26));
    const char *sc = NULL, *sh = NULL;
    for (int i = 0; i < os.n; i++) {
        if (!strcmp(os.files[i].name, "scale.c"))
            sc = os.files[i].text.data;
        if (!strcmp(os.files[i].name, "scale.h"))
            sh = os.files[i].text.data;
    }
    CHECK_HAS(sc, "/* Generated by kgen from scale.kg. Do not edit. */\n#include \"scale.h\"\n");
    CHECK_HAS(sc, "    status = kgen_check_tensor(args[0], KGEN_DEVICE_CPU, KGEN_DTYPE_FLOAT, 32, 1, shape0, strides0);\n");
    CHECK_HAS(sc, "    status = kgen_check_tensor(args[1], KGEN_DEVICE_CPU, KGEN_DTYPE_FLOAT, 32, 1, shape0, strides0);\n");
    CHECK_HAS(sc, "/* scale */\nint scale(const float *restrict A, float *restrict C, void *restrict workspace)\n{\n");
    CHECK(!strstr(sc, "shape1"));
    CHECK_HAS(sc, "    return scale((const float *)((char *)args[0]->data + args[0]->byte_offset),\n"
                  "                 (float *)((char *)args[1]->data + args[1]->byte_offset),\n"
                  "                 workspace);\n");
    CHECK_HAS(sh, "#ifndef KGEN_SCALE_H\n#define KGEN_SCALE_H\n");
    CHECK_HAS(sh, "#define SCALE_WORKSPACE_BYTES 0\n");
    CHECK_HAS(sh, " *   A: input f32[8]\n *   C: output f32[8]\n");
    CHECK_HAS(sh, "int scale(const float *restrict A, float *restrict C, void *restrict workspace);\n");
    CHECK_HAS(sh, "int scale_tensors(kgen_tensor *const *args, int nargs, void *workspace);\n");
    CHECK_HAS(sh, "extern \"C\" {");

    /* writing again over the same files works; a path below a file fails cleanly */
    CHECK_EQ(0, em_outset_write(&os, out));
    char bad[700];
    snprintf(bad, sizeof bad, "%s/scale.c/sub", out);
    ir_clear_error();
    CHECK_EQ(-1, em_outset_write(&os, bad));
    CHECK_HAS(ir_errmsg(), "cannot create directory");
    CHECK_HAS(ir_errmsg(), "scale.c/sub");

    /* a file that cannot be written: nothing new is left behind, not even temporaries */
    char blocked[700], fresh[700];
    snprintf(fresh, sizeof fresh, "%s/fresh", tmpdir);
    snprintf(blocked, sizeof blocked, "%s/fresh/.scale.h.tmp", tmpdir);
    CHECK_EQ(0, run("mkdir -p '%s'", blocked));    /* a directory where a temporary goes */
    ir_clear_error();
    CHECK_EQ(-1, em_outset_write(&os, fresh));
    CHECK_HAS(ir_errmsg(), "cannot write ");
    CHECK_HAS(ir_errmsg(), "fresh/.scale.h.tmp: Is a directory");
    CHECK(!file_exists(fresh, "scale.c") && !file_exists(fresh, ".scale.c.tmp") &&
          !file_exists(fresh, "kgen_runtime.h") && !file_exists(fresh, ".kgen_runtime.h.tmp"));

    /* adding a file again starts it over */
    StrBuf *again = em_outset_add(&os, "mix.c");
    CHECK_EQ(0, (long long)again->len);
    sb_puts(again, "x");
    CHECK_EQ(5, os.n);
    em_outset_free(&os);
    CHECK_EQ(0, os.n);

    /* bad names */
    OutSet os2 = {0};
    ir_clear_error();
    CHECK_EQ(-1, em_c_kernel_files(&os2, scale_kernel(), "a/b", "x"));
    CHECK_HAS(ir_errmsg(), "a/b");
    em_outset_free(&os2);

    for (int i = 0; i < 3; i++)
        write_text(i == 0 ? "scale_main.c" : i == 1 ? "runtime_main.c" : "mix_main.c",
                   i == 0 ? scale_main : i == 1 ? runtime_main : mix_main);
    write_text("cxx_main.cc", cxx_main);

    const char *cc = getenv("CC");
    if (!cc || !cc[0])
        cc = "cc";
    const char *strict = "-std=c99 -Wall -Wextra -pedantic -Werror";
    const char *compilers[] = {cc, "gcc", "clang"};
    int ran = 0;
    for (int c = 0; c < 3; c++) {
        if (!have(compilers[c])) {
            printf("cprint: %s not found, skipping its checks\n", compilers[c]);
            continue;
        }
        const char *tc = compilers[c];
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -x c -c kgen_runtime.h -o /dev/null", tmpdir, tc, strict));
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -c scale.c -o scale.o", tmpdir, tc, strict));
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -O2 -c mix.c -o mix.o", tmpdir, tc, strict));
        if (ran++)
            continue;     /* one run of each program is enough */
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -I. ../../scale_main.c scale.c -lm -o scale && ./scale >/dev/null", tmpdir,
                        tc, strict));
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -O2 -I. ../../runtime_main.c -lm -o rt && ./rt >/dev/null", tmpdir, tc,
                        strict));
        CHECK_EQ(0, run("cd %s/gen/c && %s %s -O1 -I. ../../mix_main.c mix.c -lm -o mix && ./mix", tmpdir, tc, strict));
    }
    /* the parallel loop under OpenMP, where the toolchain has it */
    if (have("gcc") && system("echo 'int x;' | gcc -fopenmp -x c -c - -o /dev/null 2>/dev/null") == 0)
        CHECK_EQ(0, run("cd %s/gen/c && gcc %s -fopenmp -O2 -I. ../../mix_main.c mix.c -lm -o mix_omp && ./mix_omp",
                        tmpdir, strict));
    const char *cxx[] = {"g++", "clang++"};
    for (int c = 0; c < 2; c++) {
        if (!have(cxx[c])) {
            printf("cprint: %s not found, skipping its checks\n", cxx[c]);
            continue;
        }
        CHECK_EQ(0, run("cd %s/gen/c && %s -Wall -Wextra -pedantic -Werror -x c++ -c kgen_runtime.h -o /dev/null",
                        tmpdir, cxx[c]));
        CHECK_EQ(0, run("cd %s/gen/c && %s -Wall -Wextra -pedantic -Werror -I. -c ../../cxx_main.cc -o cxx.o", tmpdir,
                        cxx[c]));
    }
    if (!test_failed && !getenv("KGEN_KEEP_TMP"))
        run("rm -rf '%s'", tmpdir);
    else
        printf("cprint: files kept in %s\n", tmpdir);
}

int main(void)
{
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    test_expressions();
    test_loops();
    test_allocs();
    test_f16();
    test_names();
    test_toolchains();
    sb_free(&printed);
    ir_arena_free(arena);
    return test_done("cprint");
}
