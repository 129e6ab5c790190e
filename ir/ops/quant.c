/* quant.c - ONNX quantization operators: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear and the integer contractions MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv.
 *
 * The integer contractions subtract the zero points in elementwise computes (i32), run
 * the one-reduction MatMul / Conv of nn.c on them with i32 accumulation, and requantize
 * in a final elementwise compute. Rounding is half to even, results saturate. */
#include "ops.h"

#include <math.h>
#include <string.h>

/* nn.c: the contraction cores (one stage reduction each) */
Tensor *op_nn_conv(OpCtx *c, Tensor *x, Tensor *w, Tensor *bias, Expr *fill, int out);
Tensor *op_nn_matmul(OpCtx *c, Tensor *a, Tensor *b, int out);

/* ---------------------------------------------------------------- helpers */

static int is_quant_int(DType t)
{
    return t == DT_I8 || t == DT_U8 || t == DT_I16 || t == DT_U16 || t == DT_I32 || t == DT_I4 || t == DT_U4 ||
           t == DT_I2 || t == DT_U2;
}

/* the float types quantized to: the float8 types and f4e2m1 (their conversions round) */
static int is_quant_float(DType t) { return ir_dtype_is_float8(t) || t == DT_F4E2M1; }

static void qrange(DType t, double *lo, double *hi)
{
    switch (t) {
    case DT_I8: *lo = -128, *hi = 127; return;
    case DT_U8: *lo = 0, *hi = 255; return;
    case DT_I16: *lo = -32768, *hi = 32767; return;
    case DT_U16: *lo = 0, *hi = 65535; return;
    case DT_I4: *lo = -8, *hi = 7; return;
    case DT_U4: *lo = 0, *hi = 15; return;
    case DT_I2: *lo = -2, *hi = 1; return;
    case DT_U2: *lo = 0, *hi = 3; return;
    default: *lo = -2147483648.0, *hi = 2147483647.0; return;
    }
}

/* round-half-to-even(v) saturated to t's range and converted (v is a float expression) */
static Expr *saturate_round(Expr *v, DType t)
{
    double lo, hi;
    qrange(t, &lo, &hi);
    Expr *r = ir_mathcall(FN_ROUND, &v, 1);
    r = ir_bin(OP_MAX, r, ir_float(lo, v->dtype));
    r = ir_bin(OP_MIN, r, ir_float(hi, v->dtype));
    return ir_cast(t, r);
}

/* A scale's type as computed in: f16 scales are widened to f32 (f16 is storage only). */
static DType compute_type(DType t) { return ir_dtype_is_storage(t) ? DT_F32 : t; }

/* Read a quantization parameter p (scale or zero point) for x's element at idx: one
 * element for the whole tensor, a vector along `axis`, or (block > 0) x's rank with the
 * axis dimension cut into blocks of `block`. */
static Expr *qparam(OpCtx *c, Tensor *p, const Tensor *x, Expr **idx, int axis, int64_t block, const char *what)
{
    Expr *pi[KG_MAX_DIMS];
    if (ir_tensor_numel(p) == 1) {
        for (int d = 0; d < p->ndim; d++)
            pi[d] = ir_idx(0);
        return op_read(p, pi);
    }
    if (block > 0) {
        if (p->ndim != x->ndim) {
            ir_fail("%s: %s has rank %d; blocked quantization needs the input's rank %d", c->op, what, p->ndim,
                    x->ndim);
            return NULL;
        }
        for (int d = 0; d < x->ndim; d++) {
            int64_t want = d == axis ? (x->shape[d] + block - 1) / block : x->shape[d];
            if (p->shape[d] != want) {
                ir_fail("%s: %s dimension %d is %lld, expected %lld (block_size %lld)", c->op, what, d,
                        (long long)p->shape[d], (long long)want, (long long)block);
                return NULL;
            }
            pi[d] = d == axis && block > 1 ? ir_bin(OP_DIV, idx[d], ir_idx(block)) : idx[d];
        }
        return op_read(p, pi);
    }
    if (axis < 0) {
        ir_fail("%s: %s must have one element here", c->op, what);
        return NULL;
    }
    if (p->ndim != 1 || x->ndim == 0 || p->shape[0] != x->shape[axis]) {
        ir_fail("%s: %s must have one element or one per index of axis %d (%lld)", c->op, what, axis,
                x->ndim ? (long long)x->shape[axis] : 0LL);
        return NULL;
    }
    pi[0] = idx[axis];
    return op_read(p, pi);
}

/* The axis and block_size attributes of (De)QuantizeLinear, checked against x where
 * the scale s is not a single value (only then do they mean anything). */
static int quant_axis(OpCtx *c, const Tensor *x, const Tensor *s, int *axis, int64_t *block)
{
    *axis = 0;
    *block = op_attr_int(c, "block_size", 0);
    if (*block < 0)
        return ir_fail("%s: block_size must not be negative, got %lld", c->op, (long long)*block);
    if (ir_tensor_numel(s) == 1)
        return 0;
    return op_axis(c, op_attr_int(c, "axis", 1), x->ndim, "axis", axis);
}

static int check_scale(OpCtx *c, const Tensor *s, const char *what)
{
    if (!ir_dtype_is_float(s->dtype))
        return ir_fail("%s: %s has type %s; a float type is required", c->op, what, ir_dtype_name(s->dtype));
    return 0;
}

static int check_quant_type(OpCtx *c, DType t, const char *what)
{
    if (!is_quant_int(t))
        return ir_fail("%s: %s has type %s; supported: i8, u8, i16, u16, i32, i4, u4, i2, u2", c->op, what, ir_dtype_name(t));
    return 0;
}

/* a rank-0 tensor's value */
static Expr *scalar(Tensor *t)
{
    Expr *none[1] = {NULL};
    return op_read(t, none);
}

/* ---------------------------------------------------------------- Quantize / Dequantize */

/* y = saturate(round(x / scale) + zero_point) */
static int quantize_linear(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x"), *s = op_input(c, 1, "y_scale");
    if (!x || !s || check_scale(c, s, "y_scale"))
        return -1;
    Tensor *zp = op_has_input(c, 2) ? c->in[2] : NULL;
    DType out = DT_U8;
    if (zp)
        out = zp->dtype;
    else if (op_attr(c, "output_dtype") && op_attr_int(c, "output_dtype", 0) != 0 &&
             op_dtype_from_onnx((int)op_attr_int(c, "output_dtype", 0), &out))
        return ir_fail("%s: output_dtype: %s", c->op, ir_errmsg());
    int f8 = is_quant_float(out);
    if (!f8 && check_quant_type(c, out, "the output"))
        return -1;
    if (x->dtype == DT_BOOL || ir_dtype_is_storage(x->dtype))
        return ir_fail("%s: input type %s is not supported", c->op, ir_dtype_name(x->dtype));
    int axis;
    int64_t block;
    if (quant_axis(c, x, s, &axis, &block))
        return -1;
    DType ct = compute_type(s->dtype);
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *sv = qparam(c, s, x, idx, axis, block, "y_scale");
    if (!sv)
        return -1;
    Expr *v = ir_bin(OP_DIV, ir_cast(ct, op_read(x, idx)), ir_cast(ct, sv));
    if (!f8)
        v = ir_mathcall(FN_ROUND, &v, 1);
    if (zp) {
        Expr *z = qparam(c, zp, x, idx, axis, block, "y_zero_point");
        if (!z)
            return -1;
        v = ir_bin(OP_ADD, v, ir_cast(ct, z));
    }
    if (f8)     /* float8, f4e2m1: rounded to nearest even by the conversion, 'saturate' (default 1) */
        return op_emit_out(c, 0, x->ndim, ax, ir_cast(out, op_f8_saturate(v, out, op_attr_int(c, "saturate", 1) != 0)))
                   ? 0 : -1;
    return op_emit_out(c, 0, x->ndim, ax, saturate_round(v, out)) ? 0 : -1;
}

/* y = (x - zero_point) * scale */
static int dequantize_linear(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x"), *s = op_input(c, 1, "x_scale");
    if (!x || !s || check_scale(c, s, "x_scale") ||
        (!is_quant_float(x->dtype) && check_quant_type(c, x->dtype, "x")))
        return -1;
    Tensor *zp = op_has_input(c, 2) ? c->in[2] : NULL;
    if (zp && zp->dtype != x->dtype)
        return ir_fail("%s: x_zero_point has type %s, x %s", c->op, ir_dtype_name(zp->dtype), ir_dtype_name(x->dtype));
    DType out = s->dtype;
    if (op_attr_int(c, "output_dtype", 0) != 0 && op_dtype_from_onnx((int)op_attr_int(c, "output_dtype", 0), &out))
        return ir_fail("%s: output_dtype: %s", c->op, ir_errmsg());
    if (!ir_dtype_is_float(out))
        return ir_fail("%s: output type %s is not a float type", c->op, ir_dtype_name(out));
    int axis;
    int64_t block;
    if (quant_axis(c, x, s, &axis, &block))
        return -1;
    DType ct = compute_type(s->dtype);
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *sv = qparam(c, s, x, idx, axis, block, "x_scale");
    if (!sv)
        return -1;
    Expr *v = ir_cast(ct, op_read(x, idx));
    if (zp) {
        Expr *z = qparam(c, zp, x, idx, axis, block, "x_zero_point");
        if (!z)
            return -1;
        v = ir_bin(OP_SUB, v, ir_cast(ct, z));
    }
    v = ir_bin(OP_MUL, v, ir_cast(ct, sv));
    return op_emit_out(c, 0, x->ndim, ax, ir_cast(out, v)) ? 0 : -1;
}

/* scale = (max(0, max x) - min(0, min x)) / 255, zero_point = saturate(round(-min / scale)),
 * y = saturate(round(x / scale) + zero_point), all u8. */
static int dynamic_quantize_linear(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x");
    if (!x)
        return -1;
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return ir_fail("%s: input type %s is not supported (f32, f64)", c->op, ir_dtype_name(x->dtype));
    DType t = x->dtype;
    int nd = x->ndim;
    Expr *xi[KG_MAX_DIMS];
    IterVar *rax[KG_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        rax[d] = ir_itervar_new(ir_fmt("r%d", d), x->shape[d], IV_REDUCE);
        xi[d] = ir_varref(rax[d]->var);
    }
    Expr *lo = nd ? ir_reduce(RED_MIN, op_read(x, xi), rax, nd) : op_read(x, xi);
    Expr *hi = nd ? ir_reduce(RED_MAX, op_read(x, xi), rax, nd) : op_read(x, xi);
    Tensor *mn = op_emit(c, op_name(c, "min"), 0, op_axes(0, NULL), lo);
    Tensor *mx = op_emit(c, op_name(c, "max"), 0, op_axes(0, NULL), hi);
    if (!mn || !mx)
        return -1;
    Expr *vmin = ir_bin(OP_MIN, scalar(mn), op_lit(0, t));
    Expr *vmax = ir_bin(OP_MAX, scalar(mx), op_lit(0, t));
    Expr *range = ir_select(ir_bin(OP_EQ, vmax, vmin), op_lit(1, t), ir_bin(OP_SUB, vmax, vmin));
    Tensor *scale = op_emit_out(c, 1, 0, op_axes(0, NULL), ir_bin(OP_DIV, range, op_lit(255, t)));
    if (!scale)
        return -1;
    Expr *vmin2 = ir_bin(OP_MIN, scalar(mn), op_lit(0, t));
    Tensor *zp = op_emit_out(c, 2, 0, op_axes(0, NULL),
                             saturate_round(ir_bin(OP_SUB, op_lit(0, t), ir_bin(OP_DIV, vmin2, scalar(scale))),
                                            DT_U8));
    if (!zp)
        return -1;
    IterVar **ax = op_axes(nd, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    Expr *q = ir_bin(OP_DIV, op_read(x, idx), scalar(scale));
    q = ir_bin(OP_ADD, ir_mathcall(FN_ROUND, &q, 1), ir_cast(t, scalar(zp)));
    return op_emit_out(c, 0, nd, ax, saturate_round(q, DT_U8)) ? 0 : -1;
}

/* ---------------------------------------------------------------- integer contractions */

/* i32(x) - i32(zero_point), with the zero point per tensor or a vector along `axis` (the
 * rows of a matrix operand, the output channels of a kernel); x itself widened when there
 * is no zero point. */
static Tensor *shift(OpCtx *c, Tensor *x, Tensor *zp, int axis, const char *what)
{
    if (check_quant_type(c, x->dtype, what))
        return NULL;
    if (zp && zp->dtype != x->dtype) {
        ir_fail("%s: the zero point of %s has type %s, %s has %s", c->op, what, ir_dtype_name(zp->dtype), what,
                ir_dtype_name(x->dtype));
        return NULL;
    }
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *v = ir_cast(DT_I32, op_read(x, idx));
    if (zp) {
        Expr *z = qparam(c, zp, x, idx, axis, 0, ir_fmt("the zero point of %s", what));
        if (!z)
            return NULL;
        v = ir_bin(OP_SUB, v, ir_cast(DT_I32, z));
    }
    return op_emit(c, op_name(c, ir_fmt("%s_i32", what)), x->ndim, ax, v);
}

static Tensor *opt_input(OpCtx *c, int i) { return op_has_input(c, i) ? c->in[i] : NULL; }

static int matmul_integer(OpCtx *c)
{
    Tensor *a = op_input(c, 0, "A"), *b = op_input(c, 1, "B");
    if (!a || !b)
        return -1;
    if (a->ndim < 1 || b->ndim < 1)
        return ir_fail("%s: operands must have rank at least 1", c->op);
    Tensor *sa = shift(c, a, opt_input(c, 2), a->ndim >= 2 ? a->ndim - 2 : -1, "A");
    Tensor *sb = sa ? shift(c, b, opt_input(c, 3), b->ndim - 1, "B") : NULL;
    if (!sb)
        return -1;
    return op_nn_matmul(c, sa, sb, 0) ? 0 : -1;
}

static int conv_integer(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x"), *w = op_input(c, 1, "w");
    if (!x || !w)
        return -1;
    if (x->ndim < 3)
        return ir_fail("%s: x has rank %d; expected N, C and spatial dimensions", c->op, x->ndim);
    Tensor *sx = shift(c, x, opt_input(c, 2), 1, "x");
    Tensor *sw = sx ? shift(c, w, opt_input(c, 3), 0, "w") : NULL;
    if (!sw)
        return -1;
    return op_nn_conv(c, sx, sw, NULL, ir_int(0, DT_I32), 0) ? 0 : -1;
}

/* The requantization of an i32 accumulator: y = saturate(round(acc * (a_scale * b_scale /
 * y_scale)) + y_zero_point), in f64 like the reference (i32 times a float scale). The
 * scales are per tensor or vectors along the accumulator's axes as_axis / bs_axis (-1: per tensor only). */
static int requantize(OpCtx *c, Tensor *acc, Tensor *as, int as_axis, Tensor *bs, int bs_axis, Tensor *ys,
                      Tensor *yzp, DType out)
{
    if (check_scale(c, as, "a scale") || check_scale(c, bs, "b scale") || check_scale(c, ys, "y_scale"))
        return -1;
    if (ir_tensor_numel(ys) != 1)
        return ir_fail("%s: y_scale must have one element", c->op);
    if (yzp && ir_tensor_numel(yzp) != 1)
        return ir_fail("%s: y_zero_point must have one element", c->op);
    DType ct = compute_type(as->dtype);
    IterVar **ax = op_axes(acc->ndim, acc->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, acc->ndim, idx);
    Expr *av = qparam(c, as, acc, idx, as_axis, 0, "the first scale");
    Expr *bv = av ? qparam(c, bs, acc, idx, bs_axis, 0, "the second scale") : NULL;
    Expr *yv = bv ? qparam(c, ys, acc, idx, 0, 0, "y_scale") : NULL;
    if (!yv)
        return -1;
    Expr *mult = ir_bin(OP_DIV, ir_bin(OP_MUL, ir_cast(ct, av), ir_cast(ct, bv)), ir_cast(ct, yv));
    Expr *v = ir_bin(OP_MUL, ir_cast(DT_F64, op_read(acc, idx)), ir_cast(DT_F64, mult));
    v = ir_mathcall(FN_ROUND, &v, 1);
    if (yzp) {
        Expr *z = qparam(c, yzp, acc, idx, 0, 0, "y_zero_point");
        if (!z)
            return -1;
        v = ir_bin(OP_ADD, v, ir_cast(DT_F64, z));
    }
    return op_emit_out(c, 0, acc->ndim, ax, saturate_round(v, out)) ? 0 : -1;
}

/* inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point */
static int qlinear_matmul(OpCtx *c)
{
    Tensor *a = op_input(c, 0, "a"), *as = op_input(c, 1, "a_scale"), *b = op_input(c, 3, "b");
    Tensor *bs = op_input(c, 4, "b_scale"), *ys = op_input(c, 6, "y_scale");
    if (!a || !as || !b || !bs || !ys)
        return -1;
    if (a->ndim < 1 || b->ndim < 1)
        return ir_fail("%s: a and b must have rank at least 1, got %d and %d", c->op, a->ndim, b->ndim);
    Tensor *yzp = opt_input(c, 7);
    DType out = yzp ? yzp->dtype : a->dtype;
    if (check_quant_type(c, out, "the output"))
        return -1;
    /* per-row a and per-column b parameters (a 1-D operand has one row / column) */
    Tensor *sa = shift(c, a, opt_input(c, 2), a->ndim >= 2 ? a->ndim - 2 : -1, "a");
    Tensor *sb = sa ? shift(c, b, opt_input(c, 5), b->ndim >= 2 ? b->ndim - 1 : -1, "b") : NULL;
    Tensor *acc = sb ? op_nn_matmul(c, sa, sb, -1) : NULL;
    if (!acc)
        return -1;
    int row = a->ndim >= 2 ? acc->ndim - (b->ndim >= 2 ? 2 : 1) : -1, col = b->ndim >= 2 ? acc->ndim - 1 : -1;
    return requantize(c, acc, as, row, bs, col, ys, yzp, out);
}

/* inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B */
static int qlinear_conv(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x"), *xs = op_input(c, 1, "x_scale"), *w = op_input(c, 3, "w");
    Tensor *ws = op_input(c, 4, "w_scale"), *ys = op_input(c, 6, "y_scale");
    if (!x || !xs || !w || !ws || !ys)
        return -1;
    if (x->ndim < 3)
        return ir_fail("%s: x has rank %d; expected N, C and spatial dimensions", c->op, x->ndim);
    if (ir_tensor_numel(xs) != 1)
        return ir_fail("%s: x_scale must have one element", c->op);
    Tensor *yzp = opt_input(c, 7), *bias = opt_input(c, 8);
    DType out = yzp ? yzp->dtype : x->dtype;
    if (check_quant_type(c, out, "the output"))
        return -1;
    if (bias && bias->dtype != DT_I32)
        return ir_fail("%s: B has type %s; i32 is required", c->op, ir_dtype_name(bias->dtype));
    Tensor *sx = shift(c, x, opt_input(c, 2), 1, "x");
    Tensor *sw = sx ? shift(c, w, opt_input(c, 5), 0, "w") : NULL;
    Tensor *acc = sw ? op_nn_conv(c, sx, sw, bias, ir_int(0, DT_I32), -1) : NULL;
    if (!acc)
        return -1;
    return requantize(c, acc, xs, 1, ws, 1, ys, yzp, out);
}

const OpDef op_defs_quant[] = {
    {"QuantizeLinear", quantize_linear},
    {"DequantizeLinear", dequantize_linear},
    {"DynamicQuantizeLinear", dynamic_quantize_linear},
    {"MatMulInteger", matmul_integer},
    {"ConvInteger", conv_integer},
    {"QLinearMatMul", qlinear_matmul},
    {"QLinearConv", qlinear_conv},
    {NULL, NULL},
};
