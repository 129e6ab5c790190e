/* elementwise.c - ONNX elementwise operators: numpy-broadcast binary and variadic
 * arithmetic, comparisons, logic and bit operations, unary math and activations, casts.
 * Each output element depends on the input elements at the same (broadcast) position
 * only. */
#include "ops.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- type classes */

/* The element kinds an operator accepts. */
enum { K_FLOAT = 1, K_SINT = 2, K_UINT = 4, K_BOOL = 8 };
#define K_INT (K_SINT | K_UINT)
#define K_NUM (K_FLOAT | K_INT)
#define K_SIGNED (K_FLOAT | K_SINT)
#define K_ANY (K_NUM | K_BOOL)

static int kind_of(DType t)
{
    if (t == DT_BOOL)
        return K_BOOL;
    if (ir_dtype_is_float(t))
        return K_FLOAT;
    return ir_dtype_is_signed(t) ? K_SINT : K_UINT;
}

static const char *kinds_text(int kinds)
{
    if (kinds == K_FLOAT)
        return "float types only";
    if (kinds == K_INT)
        return "integer types only";
    if (kinds == K_UINT)
        return "unsigned integer types only";
    if (kinds == K_BOOL)
        return "bool only";
    if (kinds == K_NUM)
        return "numeric types only";
    if (kinds == K_SIGNED)
        return "float and signed integer types only";
    return "type not allowed here";
}

static int check_kind(OpCtx *c, const char *what, DType t, int kinds)
{
    if (kind_of(t) & kinds)
        return 0;
    return ir_fail("%s: %s has type %s, not supported (%s)", c->op, what, ir_dtype_name(t), kinds_text(kinds));
}

/* All of ts[0..n) have the same dtype. */
static int check_same(OpCtx *c, Tensor **ts, int n)
{
    for (int i = 1; i < n; i++)
        if (ts[i]->dtype != ts[0]->dtype)
            return ir_fail("%s: inputs have different types %s and %s", c->op, ir_dtype_name(ts[0]->dtype),
                           ir_dtype_name(ts[i]->dtype));
    return 0;
}

/* ---------------------------------------------------------------- broadcasting */

/* Combines the broadcast elements x[0..n) of one output position; arg is the caller's. */
typedef Expr *(*CombineFn)(OpCtx *c, Expr **x, int n, int arg);

/* Output 0 over the broadcast shape of ts[0..n): out[i...] = f(ts[k][bcast i...]...). */
static int emit_bcast(OpCtx *c, Tensor **ts, int n, CombineFn f, int arg)
{
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    if (op_broadcast_shapes(ts, n, &ndim, shape))
        return ir_fail("%s: %s", c->op, ir_errmsg());
    IterVar **ax = op_axes(ndim, shape);
    Expr *idx[KG_MAX_DIMS], *x[OP_MAX_IO];
    op_axis_exprs(ax, ndim, idx);
    for (int i = 0; i < n; i++)
        x[i] = op_read_bcast(ts[i], idx, ndim);
    Expr *body = f(c, x, n, arg);
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, ndim, ax, body) ? 0 : -1;
}

/* x[0] op x[1] op ... (left to right) */
static Expr *c_fold(OpCtx *c, Expr **x, int n, int op)
{
    (void)c;
    Expr *e = x[0];
    for (int i = 1; i < n && e; i++)
        e = ir_binary((BinOp)op, e, x[i]);
    return e;
}

/* The inputs of a variadic node (at least min of them, none omitted). */
static int gather(OpCtx *c, int min, int max, Tensor **ts)
{
    if (c->nin < min || c->nin > max) {
        if (min == max)
            return ir_fail("%s: takes %d inputs, got %d", c->op, min, c->nin);
        return ir_fail("%s: takes %d to %d inputs, got %d", c->op, min, max, c->nin);
    }
    for (int i = 0; i < c->nin; i++)
        if (!(ts[i] = op_input(c, i, "data")))
            return -1;
    return c->nin;
}

/* ---------------------------------------------------------------- binary and variadic */

/* Operators that are one BinOp folded over 2 (or, variadic, 1 or more) inputs. */
static const struct {
    const char *name;
    BinOp op;
    int kinds;
    int variadic;
} bin_ops[] = {
    {"Add", OP_ADD, K_NUM, 0},
    {"Sub", OP_SUB, K_NUM, 0},
    {"Mul", OP_MUL, K_NUM, 0},
    {"Div", OP_DIV, K_NUM, 0},        /* integers truncate towards zero, as ONNX does */
    {"And", OP_AND, K_BOOL, 0},
    {"Or", OP_OR, K_BOOL, 0},
    {"Xor", OP_NE, K_BOOL, 0},
    {"Equal", OP_EQ, K_ANY, 0},
    {"Less", OP_LT, K_NUM, 0},
    {"Greater", OP_GT, K_NUM, 0},
    {"LessOrEqual", OP_LE, K_NUM, 0},
    {"GreaterOrEqual", OP_GE, K_NUM, 0},
    {"BitwiseAnd", OP_BITAND, K_INT, 0},
    {"BitwiseOr", OP_BITOR, K_INT, 0},
    {"BitwiseXor", OP_BITXOR, K_INT, 0},
    {"Max", OP_MAX, K_NUM, 1},        /* NaN-propagating, like numpy.maximum */
    {"Min", OP_MIN, K_NUM, 1},
    {"Sum", OP_ADD, K_NUM, 1},
};

static int binop(OpCtx *c)
{
    int k = 0;
    while (strcmp(bin_ops[k].name, c->op))
        k++;
    Tensor *ts[OP_MAX_IO];
    int n = bin_ops[k].variadic ? gather(c, 1, OP_MAX_IO, ts) : gather(c, 2, 2, ts);
    if (n < 0 || check_same(c, ts, n) || check_kind(c, "input", ts[0]->dtype, bin_ops[k].kinds))
        return -1;
    return emit_bcast(c, ts, n, c_fold, bin_ops[k].op);
}

static Expr *c_mean(OpCtx *c, Expr **x, int n, int arg)
{
    Expr *s = c_fold(c, x, n, arg);
    return s ? ir_binary(OP_DIV, s, op_lit(n, s->dtype)) : NULL;
}

static int mean(OpCtx *c)
{
    Tensor *ts[OP_MAX_IO];
    int n = gather(c, 1, OP_MAX_IO, ts);
    if (n < 0 || check_same(c, ts, n) || check_kind(c, "input", ts[0]->dtype, K_FLOAT))
        return -1;
    return emit_bcast(c, ts, n, c_mean, OP_ADD);
}

/* Pow: the result has the base's type. A float base takes the exponent converted to
 * its type; an integer base is raised in double and truncated back, like numpy's
 * power(...).astype(base type). */
static Expr *c_pow(OpCtx *c, Expr **x, int n, int square)
{
    (void)c, (void)n;
    DType bt = x[0]->dtype;
    Expr *args[2];
    if (square)
        return ir_binary(OP_MUL, x[0], x[0]);
    if (ir_dtype_is_float(bt)) {
        args[0] = x[0];
        args[1] = ir_cast(bt, x[1]);
        return ir_mathcall(FN_POW, args, 2);
    }
    args[0] = ir_cast(DT_F64, x[0]);
    args[1] = ir_cast(DT_F64, x[1]);
    Expr *p = ir_mathcall(FN_POW, args, 2);
    return p ? ir_cast(bt, p) : NULL;
}

static int pow_(OpCtx *c)
{
    Tensor *ts[2];
    if (gather(c, 2, 2, ts) < 0 || check_kind(c, "base", ts[0]->dtype, K_NUM) ||
        check_kind(c, "exponent", ts[1]->dtype, K_NUM))
        return -1;
    /* a float squared (LayerNorm's variance, Pow(x, 2.0)): x * x, the correctly rounded
     * square powf gives, and a vector multiply where a powf call per element is not */
    double e;
    int square = ir_dtype_is_float(ts[0]->dtype) && ir_tensor_numel(ts[1]) == 1 && op_is_const(c, 1) &&
                 op_const_floats(c, 1, "exponent", &e, 1) == 1 && e == 2.0;
    return emit_bcast(c, ts, 2, c_pow, square);
}

/* Mod: fmod=1 is C's fmod / truncating %, the sign of the dividend; fmod=0 follows the
 * sign of the divisor (numpy.mod). */
static Expr *c_mod(OpCtx *c, Expr **x, int n, int fmod_)
{
    (void)c, (void)n;
    DType t = x[0]->dtype;
    if (fmod_ || kind_of(t) == K_UINT)
        return ir_binary(OP_MOD, x[0], x[1]);
    if (!ir_dtype_is_float(t))
        return ir_binary(OP_FLOORMOD, x[0], x[1]);
    /* r = fmod(a, b); r + b where r is nonzero and its sign differs from b's */
    Expr *r = ir_binary(OP_MOD, x[0], x[1]), *zero = op_lit(0, t);
    if (!r)
        return NULL;
    Expr *fix = ir_binary(OP_AND, ir_binary(OP_NE, r, zero),
                          ir_binary(OP_NE, ir_binary(OP_LT, r, zero), ir_binary(OP_LT, x[1], zero)));
    Expr *sum = ir_binary(OP_ADD, r, x[1]);
    return fix && sum ? ir_select(fix, sum, r) : NULL;
}

static int mod(OpCtx *c)
{
    Tensor *ts[2];
    int64_t f = op_attr_int(c, "fmod", 0);
    if (gather(c, 2, 2, ts) < 0 || check_same(c, ts, 2) || check_kind(c, "input", ts[0]->dtype, K_NUM))
        return -1;
    if (f != 0 && f != 1)
        return ir_fail("%s: fmod must be 0 or 1, got %lld", c->op, (long long)f);
    return emit_bcast(c, ts, 2, c_mod, (int)f);
}

/* BitShift: shifting by the width or more gives 0 (C leaves it undefined). */
static Expr *c_shift(OpCtx *c, Expr **x, int n, int op)
{
    (void)c, (void)n;
    DType t = x[0]->dtype;
    Expr *sh = ir_binary((BinOp)op, x[0], x[1]);
    Expr *ok = ir_binary(OP_LT, x[1], op_lit(8 * ir_dtype_bytes(t), t));
    return sh && ok ? ir_select(ok, sh, op_lit(0, t)) : NULL;
}

static int bitshift(OpCtx *c)
{
    Tensor *ts[2];
    if (gather(c, 2, 2, ts) < 0 || check_same(c, ts, 2) || check_kind(c, "input", ts[0]->dtype, K_UINT))
        return -1;
    const char *dir = op_attr_str(c, "direction", "");
    BinOp op;
    if (!strcmp(dir, "LEFT"))
        op = OP_SHL;
    else if (!strcmp(dir, "RIGHT"))
        op = OP_SHR;
    else
        return ir_fail("%s: direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", c->op, dir);
    return emit_bcast(c, ts, 2, c_shift, op);
}

/* PRelu: x < 0 ? slope * x : x, slope broadcast to x. */
static Expr *c_prelu(OpCtx *c, Expr **x, int n, int arg)
{
    (void)c, (void)n, (void)arg;
    Expr *neg = ir_binary(OP_LT, x[0], op_lit(0, x[0]->dtype));
    Expr *scaled = ir_binary(OP_MUL, x[1], x[0]);
    return neg && scaled ? ir_select(neg, scaled, x[0]) : NULL;
}

static int prelu(OpCtx *c)
{
    Tensor *ts[2];
    if (gather(c, 2, 2, ts) < 0 || check_same(c, ts, 2) || check_kind(c, "input", ts[0]->dtype, K_NUM))
        return -1;
    return emit_bcast(c, ts, 2, c_prelu, 0);
}

static Expr *c_where(OpCtx *c, Expr **x, int n, int arg)
{
    (void)c, (void)n, (void)arg;
    return ir_select(x[0], x[1], x[2]);
}

static int where(OpCtx *c)
{
    Tensor *ts[3];
    if (gather(c, 3, 3, ts) < 0 || check_kind(c, "condition", ts[0]->dtype, K_BOOL) || check_same(c, ts + 1, 2))
        return -1;
    return emit_bcast(c, ts, 3, c_where, 0);
}

/* ---------------------------------------------------------------- clip */

/* min(max(x, lo), hi) like numpy.clip: where lo > hi the result is hi. Bounds are scalar
 * inputs (opset 11 on) or float attributes (before); a missing one does not clamp. */
static int clip(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x || check_kind(c, "input", x->dtype, K_NUM))
        return -1;
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *zero[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    for (int d = 0; d < KG_MAX_DIMS; d++)
        zero[d] = ir_idx(0);
    Expr *body = op_read(x, idx);
    static const char *const names[2] = {"min", "max"};
    for (int k = 0; k < 2; k++) {
        Expr *bound = NULL;
        if (c->opset < 11) {
            if (c->nin > 1)
                return ir_fail("%s: opset %lld takes min and max as attributes, not inputs", c->op,
                               (long long)c->opset);
            if (op_attr(c, names[k])) {
                if (!ir_dtype_is_float(x->dtype))
                    return ir_fail("%s: %s attribute on a %s input", c->op, names[k], ir_dtype_name(x->dtype));
                bound = op_lit(op_attr_float(c, names[k], 0), x->dtype);
            }
        } else if (op_has_input(c, k + 1)) {
            Tensor *b = c->in[k + 1];
            if (ir_tensor_numel(b) != 1)
                return ir_fail("%s: %s must be a scalar, has %lld elements", c->op, names[k],
                               (long long)ir_tensor_numel(b));
            if (b->dtype != x->dtype)
                return ir_fail("%s: %s has type %s, input has %s", c->op, names[k], ir_dtype_name(b->dtype),
                               ir_dtype_name(x->dtype));
            /* a known finite float bound becomes a literal (ReLU6's 0 and 6): the C compiler
             * then drops the bound's NaN check and vectorizes the clamp as two compares */
            double v;
            if ((x->dtype == DT_F32 || x->dtype == DT_F64) && op_is_const(c, k + 1) &&
                op_const_floats(c, k + 1, names[k], &v, 1) == 1 && isfinite(v))
                bound = op_lit(v, x->dtype);
            else
                bound = op_read(b, zero);
        }
        if (bound)
            body = ir_binary(k == 0 ? OP_MAX : OP_MIN, body, bound);
    }
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- unary */

typedef Expr *(*UnaryFn)(OpCtx *c, Expr *x);

/* Output 0 = f(input 0), elementwise; kinds: the input types allowed. */
static int unary(OpCtx *c, UnaryFn f, int kinds)
{
    Tensor *a = op_input(c, 0, "X");
    if (!a || check_kind(c, "input", a->dtype, kinds))
        return -1;
    IterVar **ax = op_axes(a->ndim, a->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, a->ndim, idx);
    Expr *body = f(c, op_read(a, idx));
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, a->ndim, ax, body) ? 0 : -1;
}

static Expr *math1(MathFn fn, Expr *x) { return ir_mathcall(fn, &x, 1); }
static Expr *lit(double v, Expr *like) { return op_lit(v, like->dtype); }
static Expr *add(Expr *a, Expr *b) { return ir_binary(OP_ADD, a, b); }
static Expr *mul(Expr *a, Expr *b) { return ir_binary(OP_MUL, a, b); }
static Expr *max_(Expr *a, Expr *b) { return ir_binary(OP_MAX, a, b); }
static Expr *min_(Expr *a, Expr *b) { return ir_binary(OP_MIN, a, b); }
/* cond(x) ? t : f with NULLs passed through */
static Expr *sel(Expr *cond, Expr *t, Expr *f) { return cond && t && f ? ir_select(cond, t, f) : NULL; }

/* One math function of a float. */
static const struct {
    const char *name;
    MathFn fn;
} math_ops[] = {
    {"Sqrt", FN_SQRT},   {"Exp", FN_EXP},     {"Log", FN_LOG},     {"Sin", FN_SIN},     {"Cos", FN_COS},
    {"Tan", FN_TAN},     {"Asin", FN_ASIN},   {"Acos", FN_ACOS},   {"Atan", FN_ATAN},   {"Sinh", FN_SINH},
    {"Cosh", FN_COSH},   {"Asinh", FN_ASINH}, {"Acosh", FN_ACOSH}, {"Atanh", FN_ATANH}, {"Floor", FN_FLOOR},
    {"Ceil", FN_CEIL},   {"Round", FN_ROUND}, {"Erf", FN_ERF},     {"Tanh", FN_TANH},   {"Sigmoid", FN_SIGMOID},
};

static Expr *f_math(OpCtx *c, Expr *x)
{
    int k = 0;
    while (strcmp(math_ops[k].name, c->op))
        k++;
    return math1(math_ops[k].fn, x);
}

static int math_unary(OpCtx *c) { return unary(c, f_math, K_FLOAT); }

/* unsigned values are their own absolute value (and abs() of a u64 would see a sign) */
static Expr *f_abs(OpCtx *c, Expr *x) { (void)c; return kind_of(x->dtype) == K_UINT ? x : math1(FN_ABS, x); }
static Expr *f_neg(OpCtx *c, Expr *x) { (void)c; return ir_unary(UN_NEG, x); }
static Expr *f_not(OpCtx *c, Expr *x) { (void)c; return ir_unary(UN_NOT, x); }
static Expr *f_bitnot(OpCtx *c, Expr *x) { (void)c; return ir_unary(UN_BITNOT, x); }
static Expr *f_isnan(OpCtx *c, Expr *x) { (void)c; return math1(FN_ISNAN, x); }
static Expr *f_reciprocal(OpCtx *c, Expr *x) { (void)c; return ir_binary(OP_DIV, lit(1, x), x); }
static Expr *f_relu(OpCtx *c, Expr *x) { (void)c; return max_(x, lit(0, x)); }

/* 1, -1 or 0; NaN stays NaN (x itself where neither comparison holds) */
static Expr *f_sign(OpCtx *c, Expr *x)
{
    (void)c;
    return sel(ir_binary(OP_GT, x, lit(0, x)), lit(1, x), sel(ir_binary(OP_LT, x, lit(0, x)), lit(-1, x), x));
}

static Expr *f_isinf(OpCtx *c, Expr *x)
{
    int pos = op_attr_int(c, "detect_positive", 1) != 0, neg = op_attr_int(c, "detect_negative", 1) != 0;
    Expr *inf = math1(FN_ISINF, x);
    if (pos && neg)
        return inf;
    if (!pos && !neg)
        return ir_bool(0);
    return ir_binary(OP_AND, inf, ir_binary(pos ? OP_GT : OP_LT, x, lit(0, x)));
}

static Expr *f_leakyrelu(OpCtx *c, Expr *x)
{
    Expr *alpha = lit(op_attr_float(c, "alpha", 0.01), x);
    return sel(ir_binary(OP_LT, x, lit(0, x)), mul(alpha, x), x);
}

static Expr *f_thresholdedrelu(OpCtx *c, Expr *x)
{
    Expr *alpha = lit(op_attr_float(c, "alpha", 1.0), x);
    return sel(ir_binary(OP_GT, x, alpha), x, lit(0, x));
}

/* x < 0 ? alpha * (exp(x) - 1) : x */
static Expr *f_elu(OpCtx *c, Expr *x)
{
    Expr *alpha = lit(op_attr_float(c, "alpha", 1.0), x);
    Expr *em1 = ir_binary(OP_SUB, math1(FN_EXP, x), lit(1, x));
    return sel(ir_binary(OP_LT, x, lit(0, x)), mul(alpha, em1), x);
}

/* gamma * (x > 0 ? x : alpha * exp(x) - alpha) */
static Expr *f_selu(OpCtx *c, Expr *x)
{
    Expr *alpha = lit(op_attr_float(c, "alpha", 1.67326319217681884765625), x);
    Expr *gamma = lit(op_attr_float(c, "gamma", 1.05070102214813232421875), x);
    Expr *neg = ir_binary(OP_SUB, mul(alpha, math1(FN_EXP, x)), alpha);
    return mul(gamma, sel(ir_binary(OP_GT, x, lit(0, x)), x, neg));
}

/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
static Expr *f_celu(OpCtx *c, Expr *x)
{
    double a = op_attr_float(c, "alpha", 1.0);
    if (a == 0) {
        ir_fail("alpha must not be 0");
        return NULL;
    }
    Expr *alpha = lit(a, x);
    Expr *em1 = ir_binary(OP_SUB, math1(FN_EXP, ir_binary(OP_DIV, x, alpha)), lit(1, x));
    return add(max_(lit(0, x), x), min_(lit(0, x), mul(alpha, em1)));
}

/* max(0, min(1, alpha * x + beta)) */
static Expr *hard_sigmoid(Expr *x, double alpha, double beta)
{
    return max_(lit(0, x), min_(lit(1, x), add(mul(lit(alpha, x), x), lit(beta, x))));
}

static Expr *f_hardsigmoid(OpCtx *c, Expr *x)
{
    return hard_sigmoid(x, op_attr_float(c, "alpha", 0.2), op_attr_float(c, "beta", 0.5));
}

static Expr *f_hardswish(OpCtx *c, Expr *x) { (void)c; return mul(x, hard_sigmoid(x, 1.0 / 6, 0.5)); }

/* log(exp(x) + 1), as the ONNX reference computes it */
static Expr *softplus(Expr *x) { return math1(FN_LOG, add(math1(FN_EXP, x), lit(1, x))); }
static Expr *f_softplus(OpCtx *c, Expr *x) { (void)c; return softplus(x); }
static Expr *f_softsign(OpCtx *c, Expr *x) { (void)c; return ir_binary(OP_DIV, x, add(lit(1, x), math1(FN_ABS, x))); }
static Expr *f_mish(OpCtx *c, Expr *x) { (void)c; return mul(x, math1(FN_TANH, softplus(x))); }

static Expr *f_swish(OpCtx *c, Expr *x)
{
    return mul(x, math1(FN_SIGMOID, mul(lit(op_attr_float(c, "alpha", 1.0), x), x)));
}

/* none: x/2 (1 + erf(x / sqrt 2)); tanh: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
static Expr *f_gelu(OpCtx *c, Expr *x)
{
    const char *approx = op_attr_str(c, "approximate", "none");
    Expr *inner;
    if (!strcmp(approx, "none"))
        inner = math1(FN_ERF, mul(x, lit(1 / sqrt(2.0), x)));
    else if (!strcmp(approx, "tanh")) {
        Expr *cube = mul(mul(x, x), x);
        inner = math1(FN_TANH, mul(lit(sqrt(2 / 3.14159265358979323846), x), add(x, mul(lit(0.044715, x), cube))));
    } else {
        ir_fail("approximate must be \"none\" or \"tanh\", got \"%s\"", approx);
        return NULL;
    }
    return mul(mul(lit(0.5, x), x), add(lit(1, x), inner));
}

static int abs_(OpCtx *c) { return unary(c, f_abs, K_NUM); }
static int neg(OpCtx *c) { return unary(c, f_neg, K_SIGNED); }
static int sign(OpCtx *c) { return unary(c, f_sign, K_NUM); }
static int reciprocal(OpCtx *c) { return unary(c, f_reciprocal, K_FLOAT); }
static int not_(OpCtx *c) { return unary(c, f_not, K_BOOL); }
static int bitnot(OpCtx *c) { return unary(c, f_bitnot, K_INT); }
static int isnan_(OpCtx *c) { return unary(c, f_isnan, K_FLOAT); }
static int isinf_(OpCtx *c) { return unary(c, f_isinf, K_FLOAT); }
static int relu(OpCtx *c) { return unary(c, f_relu, K_SIGNED); }
static int leakyrelu(OpCtx *c) { return unary(c, f_leakyrelu, K_FLOAT); }
static int thresholdedrelu(OpCtx *c) { return unary(c, f_thresholdedrelu, K_FLOAT); }
static int elu(OpCtx *c) { return unary(c, f_elu, K_FLOAT); }
static int selu(OpCtx *c) { return unary(c, f_selu, K_FLOAT); }
static int celu(OpCtx *c) { return unary(c, f_celu, K_FLOAT); }
static int hardsigmoid(OpCtx *c) { return unary(c, f_hardsigmoid, K_FLOAT); }
static int hardswish(OpCtx *c) { return unary(c, f_hardswish, K_FLOAT); }
static int softplus_(OpCtx *c) { return unary(c, f_softplus, K_FLOAT); }
static int softsign(OpCtx *c) { return unary(c, f_softsign, K_FLOAT); }
static int mish(OpCtx *c) { return unary(c, f_mish, K_FLOAT); }
static int swish(OpCtx *c) { return unary(c, f_swish, K_FLOAT); }
static int gelu(OpCtx *c) { return unary(c, f_gelu, K_FLOAT); }

/* ---------------------------------------------------------------- types and copies */

/* Cast and CastLike: a conversion of each element. Float to integer truncates towards
 * zero; anything to bool is "!= 0". To a float8 type, 'saturate' (default 1) clamps to
 * the largest finite value first (op_f8_saturate); saturate=0 leaves overflow to the
 * conversion, which makes it NaN (inf for f8e5m2). Float conversions round to nearest even. */
static int cast_to(OpCtx *c, Tensor *x, DType to)
{
    /* f8e8m0: the conversion rounds up to a power of two (ONNX's default round_mode) */
    const char *rm = op_attr_str(c, "round_mode", "up");
    if (to == DT_F8E8M0 && strcmp(rm, "up"))
        return ir_fail("%s: round_mode '%s' to f8e8m0 is not supported (only 'up')", c->op, rm);
    if (ir_tensor_numel(x) == 0)   /* an empty value stays one, of the new type */
        return (c->out[0] = op_const_tensor(c, "empty", to, x->ndim, x->shape, NULL)) ? 0 : -1;
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *v = op_f8_saturate(op_read(x, idx), to, op_attr_int(c, "saturate", 1) != 0);
    return op_emit_out(c, 0, x->ndim, ax, ir_cast(to, v)) ? 0 : -1;
}

static int cast(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (!op_attr(c, "to"))
        return ir_fail("%s: the 'to' attribute is required", c->op);
    DType to;
    if (op_dtype_from_onnx((int)op_attr_int(c, "to", 0), &to))
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return cast_to(c, x, to);
}

static int castlike(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input"), *like = op_input(c, 1, "target_type");
    return x && like ? cast_to(c, x, like->dtype) : -1;
}

/* Identity (and Dropout in inference): the output is the input itself; the importer
 * makes a copy only where a graph output needs its own buffer. */
static int identity(OpCtx *c)
{
    Tensor *a = op_input(c, 0, "input");
    if (!a)
        return -1;
    c->out[0] = a;
    return 0;
}

/* Dropout. In inference (training_mode absent or false) the data passes through and the
 * optional mask keeps everything. In training mode (which must be known when compiling) an
 * element is kept where a uniform draw u >= ratio (op_random_uniform, keyed by the seed
 * attribute): output = keep ? x / (1 - ratio) : 0, mask = keep. ratio may be run-time data;
 * a constant 0 is inference's pass-through. */
static int dropout(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t train = 0;
    if (op_has_input(c, 2) && op_const_ints(c, 2, "training_mode", &train, 1) < 0)
        return -1;
    int mask = c->nout > 1 && c->out_names[1];
    /* a constant ratio of 0 keeps every element (u >= 0 always), as inference does (what
     * torchvision's Swin exports for its attention: 8% of its time went to the draws) */
    double r0 = 1;
    if (train && op_has_input(c, 1) && op_is_const(c, 1) && ir_tensor_numel(c->in[1]) == 1 &&
        op_const_floats(c, 1, "ratio", &r0, 1) == 1 && r0 == 0)
        train = 0;
    if (!train) {
        c->out[0] = x;
        if (mask) {
            IterVar **ax = op_axes(x->ndim, x->shape);
            if (!op_emit_out(c, 1, x->ndim, ax, ir_bool(1)))
                return -1;
        }
        return 0;
    }
    if (check_kind(c, "data", x->dtype, K_FLOAT) || ir_dtype_is_float8(x->dtype))
        return ir_dtype_is_float8(x->dtype) ? ir_fail("%s: data type %s is not supported in training mode", c->op,
                                                      ir_dtype_name(x->dtype))
                                            : -1;
    DType ct = x->dtype == DT_F64 ? DT_F64 : DT_F32;
    Expr *ratio = ir_float(0.5, ct);
    if (op_has_input(c, 1)) {
        Tensor *r = c->in[1];
        if (ir_tensor_numel(r) != 1 || check_kind(c, "ratio", r->dtype, K_FLOAT))
            return ir_fail("%s: ratio must be a float scalar", c->op);
        Expr *zero[KG_MAX_DIMS];
        for (int d = 0; d < r->ndim; d++)
            zero[d] = ir_idx(0);
        ratio = ir_cast(ct, op_read(r, zero));
    }
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *keep = ir_bin(OP_GE, op_random_uniform(c, x->ndim, x->shape, idx, ct), ratio);
    if (mask) {
        Tensor *m = op_emit_out(c, 1, x->ndim, ax, keep);
        if (!m)
            return -1;
        ax = op_axes(x->ndim, x->shape);
        op_axis_exprs(ax, x->ndim, idx);
        keep = op_read(m, idx);
    }
    Expr *scaled = ir_bin(OP_DIV, ir_cast(ct, op_read(x, idx)), ir_bin(OP_SUB, ir_float(1, ct), ratio));
    return op_emit_out(c, 0, x->ndim, ax, ir_cast(x->dtype, ir_select(keep, scaled, ir_float(0, ct)))) ? 0 : -1;
}

const OpDef op_defs_elementwise[] = {
    {"Add", binop},
    {"Sub", binop},
    {"Mul", binop},
    {"Div", binop},
    {"And", binop},
    {"Or", binop},
    {"Xor", binop},
    {"Equal", binop},
    {"Less", binop},
    {"Greater", binop},
    {"LessOrEqual", binop},
    {"GreaterOrEqual", binop},
    {"BitwiseAnd", binop},
    {"BitwiseOr", binop},
    {"BitwiseXor", binop},
    {"Max", binop},
    {"Min", binop},
    {"Sum", binop},
    {"Mean", mean},
    {"Pow", pow_},
    {"Mod", mod},
    {"BitShift", bitshift},
    {"PRelu", prelu},
    {"Where", where},
    {"Clip", clip},
    {"Sqrt", math_unary},
    {"Exp", math_unary},
    {"Log", math_unary},
    {"Sin", math_unary},
    {"Cos", math_unary},
    {"Tan", math_unary},
    {"Asin", math_unary},
    {"Acos", math_unary},
    {"Atan", math_unary},
    {"Sinh", math_unary},
    {"Cosh", math_unary},
    {"Asinh", math_unary},
    {"Acosh", math_unary},
    {"Atanh", math_unary},
    {"Floor", math_unary},
    {"Ceil", math_unary},
    {"Round", math_unary},
    {"Erf", math_unary},
    {"Tanh", math_unary},
    {"Sigmoid", math_unary},
    {"Abs", abs_},
    {"Neg", neg},
    {"Sign", sign},
    {"Reciprocal", reciprocal},
    {"Not", not_},
    {"BitwiseNot", bitnot},
    {"IsNaN", isnan_},
    {"IsInf", isinf_},
    {"Relu", relu},
    {"LeakyRelu", leakyrelu},
    {"ThresholdedRelu", thresholdedrelu},
    {"Elu", elu},
    {"Selu", selu},
    {"Celu", celu},
    {"HardSigmoid", hardsigmoid},
    {"HardSwish", hardswish},
    {"Softplus", softplus_},
    {"Softsign", softsign},
    {"Mish", mish},
    {"Swish", swish},
    {"Gelu", gelu},
    {"Cast", cast},
    {"CastLike", castlike},
    {"Identity", identity},
    {"Dropout", dropout},
    {NULL, NULL},
};
