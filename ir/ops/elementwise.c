/* elementwise.c - ONNX elementwise operators: numpy-broadcast binary arithmetic and
 * comparisons, unary math and activations. Each output element depends on the
 * input elements at the same (broadcast) position only. */
#include "ops.h"

#include <math.h>

/* ---------------------------------------------------------------- binary */

/* out[i...] = f(a[bcast i...], b[bcast i...]) */
static int binary(OpCtx *c, BinOp op)
{
    Tensor *a = op_input(c, 0, "A"), *b = op_input(c, 1, "B");
    if (!a || !b)
        return -1;
    if (a->dtype != b->dtype)
        return ir_fail("%s: inputs have different types %s and %s", c->op, ir_dtype_name(a->dtype),
                       ir_dtype_name(b->dtype));
    int ndim;
    int64_t shape[KG_MAX_DIMS];
    if (op_broadcast_shape(a, b, &ndim, shape))
        return ir_fail("%s: %s", c->op, ir_errmsg());
    IterVar **ax = op_axes(ndim, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, idx);
    Expr *x = op_read_bcast(a, idx, ndim), *y = op_read_bcast(b, idx, ndim);
    Expr *body = ir_binary(op, x, y);
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, ndim, ax, body) ? 0 : -1;
}

static int add(OpCtx *c) { return binary(c, OP_ADD); }
static int sub(OpCtx *c) { return binary(c, OP_SUB); }
static int mul(OpCtx *c) { return binary(c, OP_MUL); }
static int div_(OpCtx *c) { return binary(c, OP_DIV); }

/* ---------------------------------------------------------------- unary */

typedef Expr *(*UnaryFn)(OpCtx *c, Expr *x);

static int unary(OpCtx *c, UnaryFn f, int float_only)
{
    Tensor *a = op_input(c, 0, "X");
    if (!a)
        return -1;
    if (float_only && !ir_dtype_is_float(a->dtype))
        return ir_fail("%s: input type %s is not supported (float types only)", c->op, ir_dtype_name(a->dtype));
    IterVar **ax = op_axes(a->ndim, a->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, a->ndim, idx);
    Expr *body = f(c, op_read(a, idx));
    if (!body)
        return -1;
    return op_emit_out(c, 0, a->ndim, ax, body) ? 0 : -1;
}

static Expr *math1(MathFn fn, Expr *x) { return ir_mathcall(fn, &x, 1); }

static Expr *f_relu(OpCtx *c, Expr *x) { (void)c; return ir_bin(OP_MAX, x, op_lit(0, x->dtype)); }
static Expr *f_sigmoid(OpCtx *c, Expr *x) { (void)c; return math1(FN_SIGMOID, x); }
static Expr *f_exp(OpCtx *c, Expr *x) { (void)c; return math1(FN_EXP, x); }
static Expr *f_tanh(OpCtx *c, Expr *x) { (void)c; return math1(FN_TANH, x); }

static int relu(OpCtx *c) { return unary(c, f_relu, 0); }
static int sigmoid(OpCtx *c) { return unary(c, f_sigmoid, 1); }
static int exp_(OpCtx *c) { return unary(c, f_exp, 1); }
static int tanh_(OpCtx *c) { return unary(c, f_tanh, 1); }

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

const OpDef op_defs_elementwise[] = {
    {"Add", add},
    {"Sub", sub},
    {"Mul", mul},
    {"Div", div_},
    {"Relu", relu},
    {"Sigmoid", sigmoid},
    {"Exp", exp_},
    {"Tanh", tanh_},
    {"Identity", identity},
    {NULL, NULL},
};
