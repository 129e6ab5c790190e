/* symshape.c - shapes as values when dims are decided at run time: what Shape gives of a
 * tensor with run-time dims is a constant whose elements are extents (Tensor.sym, the
 * bounds in its data), and the operators that only move such values around (Gather,
 * Concat, Unsqueeze, Squeeze, Slice, Identity, Cast between integer types, Where by a
 * constant condition, Transpose, Flatten) move the extents with them. The builder computes the output's data
 * from the bounds as for any constant; onnx_sym_values then gives it the extents its
 * elements came from. An output none of whose elements came from an extent is an ordinary
 * constant (a batch size picked out of a shape whose width is decided at run time). Any
 * other operator that meets such a value refuses it (op_const_ints, the importer's check),
 * so a bound is never taken for the value, except the builders that take such values
 * themselves: Reshape's shape, Range's start and limit (a vector computed at run time, its
 * extent an expression of the dims: ir/ops/misc.c), ConstantOfShape's and Expand's shape
 * (run-time output dims), Resize's sizes (ir/ops/resize.c), Pad's pads (ir/ops/shape.c),
 * and Shape and Size of a vector of extents (its shape is fixed).
 *
 * Arithmetic on such values (Add, Sub, Mul, Div, Mod, Max, Min: `x.shape[2] // 2`) is done
 * here, not by the operators' builders: each element of the output is the expression of
 * its operands' elements (an extent's expression, or a constant), and the data holds its
 * bound, the most it can be over the dims' ranges (ir_dims_bounds), as Shape's does.
 * Comparisons (torch's expand() asks which elements of a shape are -1) give constants
 * where the ranges decide them.
 */
#include "import.h"
#include "../ir/ops/ops.h"

#include <string.h>

int onnx_sym_op(const char *op)
{
    static const char *const ops[] = {"Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Identity", "Cast", "Where",
                                      "Transpose", "Flatten"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    /* 2: the builder takes them (Reshape's shape input: op_const_ints_sym; Range and
     * ConstantOfShape: run-time extents of their outputs) */
    static const char *const takers[] = {"Reshape", "Range", "Resize", "ConstantOfShape", "Expand", "Pad",
                                         /* (the shape of a vector of extents is fixed) */
                                         "Shape", "Size"};
    for (size_t i = 0; i < sizeof takers / sizeof *takers; i++)
        if (!strcmp(op, takers[i]))
            return 2;
    /* 3: arithmetic and comparisons, computed here (onnx_sym_arith) */
    static const char *const arith[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Mod",
                                        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    for (size_t i = 0; i < sizeof arith / sizeof *arith; i++)
        if (!strcmp(op, arith[i]))
            return 3;
    return 0;
}

/* May input i of op, of onnx_sym_op's second kind, hold extents? Only the inputs its
 * builder reads as extents (a shape, Range's bounds, Resize's sizes) or by their shape
 * alone (Shape, Size), and Reshape's data (flat order kept: onnx_sym_values carries them);
 * any other input would be computed on, and folded at the bounds. */
int onnx_sym_input_ok(const char *op, int i)
{
    if (!strcmp(op, "Reshape") || !strcmp(op, "Expand"))
        return i == 1 || (i == 0 && !strcmp(op, "Reshape"));
    if (!strcmp(op, "Resize"))
        return i == 3;
    if (!strcmp(op, "Pad"))
        return i == 1;
    return !strcmp(op, "Range") || !strcmp(op, "ConstantOfShape") || !strcmp(op, "Shape") || !strcmp(op, "Size");
}

/* element k of input t's extents (NULL: its data is its value) */
static Expr *sym_at(const Tensor *t, int64_t k) { return t->sym ? t->sym[k] : NULL; }

static int64_t const_int(const Tensor *t, int64_t k)
{
    int64_t v = 0;
    if (t->dtype == DT_I64)
        memcpy(&v, (const char *)t->data + 8 * k, 8);
    else if (t->dtype == DT_I32) {
        int32_t w;
        memcpy(&w, (const char *)t->data + 4 * k, 4);
        v = w;
    }
    return v;
}

/* the element of t that element k of out reads where t broadcasts to out's shape */
static int64_t bcast_at(const Tensor *t, const Tensor *out, int64_t k)
{
    int64_t j = 0, stride = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int64_t i = k % out->shape[d];
        k /= out->shape[d];
        int dt = d - (out->ndim - t->ndim);
        if (dt < 0)
            break;
        if (t->shape[dt] != 1)
            j += i * stride;
        stride *= t->shape[dt];
    }
    return j;
}

/* Cast of extents to a float type (a mean's divisor: `x.sum(1) / x.shape[1]`): a compute
 * of the input's (fixed) shape whose elements are the extents' expressions converted, read
 * at run time; it depends on the dims, so it is never folded at their bounds. */
static int sym_to_float(OpCtx *c, Tensor **out)
{
    Tensor *x = c->in[0], *t = *out;
    if ((t->dtype != DT_F32 && t->dtype != DT_F64) || x->ndim > 1)
        return ir_fail("%s: extents decided at run time cast to %s%s (float or double of a scalar or vector is "
                       "supported)", c->op, ir_dtype_name(t->dtype), x->ndim > 1 ? " in a tensor of rank 2 or more" : "");
    int64_t n = ir_tensor_numel(x);
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *body = NULL;
    for (int64_t k = n - 1; k >= 0; k--) {
        Expr *e = x->sym[k] ? ir_cast(t->dtype, x->sym[k]) : ir_float((double)const_int(x, k), t->dtype);
        body = body ? ir_select(ir_bin(OP_EQ, ir_varref(ax[0]->var), ir_idx(k)), e, body) : e;
    }
    Tensor *f = op_emit(c, op_name(c, "extents"), x->ndim, ax, body);
    if (!f)
        return -1;
    *out = f;
    return 0;
}

/* The extents of a mover's output whose computation, before it was folded, is one read of
 * input x (Transpose, Slice of any rank and step, Flatten): each element's is that of the
 * element of x it reads, its index by the read's formulas at the element's coordinates.
 * 0 where the computation is some other (sym untouched). */
static int sym_by_read(const Tensor *comp, const Tensor *x, int64_t n, Expr **sym)
{
    if (!comp || comp->kind != T_COMPUTE || !comp->body || comp->body->kind != E_ACCESS ||
        comp->body->u.access.t != x || comp->body->u.access.n != x->ndim)
        return 0;
    int r = comp->ndim;
    Var *vars[KG_MAX_DIMS];
    Expr *at[KG_MAX_DIMS];
    for (int d = 0; d < r; d++)
        vars[d] = comp->axes[d]->var;
    for (int64_t k = 0; k < n; k++) {
        for (int64_t d = r - 1, q = k; d >= 0; q /= comp->shape[d], d--)
            at[d] = ir_idx(q % comp->shape[d]);
        int64_t j = 0;
        for (int d = 0; d < x->ndim; d++) {
            int64_t v;
            if (!ir_expr_is_const(ir_simplify(ir_subst(comp->body->u.access.idx[d], vars, at, r), NULL), &v) ||
                v < 0 || v >= x->shape[d])
                return 0;
            j = j * x->shape[d] + v;
        }
        sym[k] = sym_at(x, j);
    }
    return 1;
}

int onnx_sym_values(OpCtx *c, Tensor **outp)
{
    Tensor *x = c->in[0], *out = *outp;
    if (!strcmp(c->op, "Cast") && ir_dtype_is_float(out->dtype) && ir_tensor_has_sym(x))
        return sym_to_float(c, outp);
    int64_t n = ir_tensor_numel(out);
    if ((!strcmp(c->op, "Slice") || !strcmp(c->op, "Gather")) && !ir_tensor_has_sym(x)) {
        out->sym = NULL;   /* (extents in the bounds or indices: the builder took them) */
        return 0;
    }
    if (out->kind != T_CONSTANT)
        return ir_fail("%s: an input holds extents decided at run time, and the output could not be folded",
                       c->op);
    Expr **sym = ir_alloc(sizeof *sym * (size_t)(n ? n : 1));
    int any = 0;
    if (!strcmp(c->op, "Concat")) {
        int64_t k = 0;
        for (int i = 0; i < c->nin; i++) {
            if (!c->in[i])
                continue;
            if (c->in[i]->ndim != 1)
                return ir_fail("%s: extents decided at run time in an input of rank %d (1 is supported)", c->op,
                               c->in[i]->ndim);
            for (int64_t j = 0; j < c->in[i]->shape[0] && k < n; j++)
                sym[k++] = sym_at(c->in[i], j);
        }
    } else if (!strcmp(c->op, "Gather")) {
        Tensor *ix = c->in[1];
        if (x->ndim != 1 || !ix || ix->kind != T_CONSTANT || ir_tensor_has_sym(ix))
            return ir_fail("%s: extents decided at run time gathered other than from a vector by constant indices",
                           c->op);
        for (int64_t k = 0; k < n; k++) {
            int64_t j = const_int(ix, k);
            sym[k] = sym_at(x, j < 0 ? j + x->shape[0] : j);
        }
    } else if (sym_by_read(c->out[0], x, n, sym)) {
        /* (Transpose, Slice of a matrix, ...: the same elements, moved) */
    } else if (!strcmp(c->op, "Slice")) {
        int64_t s[1], e[1], st[1] = {1};
        if (x->ndim != 1 || op_const_ints(c, 1, "starts", s, 1) != 1 || op_const_ints(c, 2, "ends", e, 1) != 1 ||
            (op_has_input(c, 4) && op_const_ints(c, 4, "steps", st, 1) != 1))
            return ir_fail("%s: extents decided at run time sliced other than a vector by constant bounds", c->op);
        int64_t b = s[0] < 0 ? s[0] + x->shape[0] : s[0];
        if (b < 0)
            b = 0;
        if (b > x->shape[0])
            b = x->shape[0] - (st[0] < 0);
        for (int64_t k = 0; k < n; k++)
            sym[k] = sym_at(x, b + k * st[0]);
    } else if (!strcmp(c->op, "Where")) {
        /* a choice by a constant condition (torch's expand(): an extent where the shape
         * says -1) takes the chosen element's extent */
        for (int i = 0; i < 3; i++)
            if (!c->in[i] || c->in[i]->kind != T_CONSTANT || (i == 0 && ir_tensor_has_sym(c->in[i])))
                return ir_fail("%s: extents decided at run time chosen by a condition that is not a constant",
                               c->op);
        for (int64_t k = 0; k < n; k++) {
            const unsigned char *cond = c->in[0]->data;
            int64_t j = bcast_at(c->in[0], out, k);
            Tensor *pick = cond[j] ? c->in[1] : c->in[2];
            sym[k] = sym_at(pick, bcast_at(pick, out, k));
        }
    } else {
        /* Unsqueeze, Squeeze, Identity, Cast, Reshape: the same elements in the same order */
        if (n != ir_tensor_numel(x) || (ir_dtype_is_float(out->dtype)))
            return ir_fail("%s: extents decided at run time cannot pass through here", c->op);
        for (int64_t k = 0; k < n; k++)
            sym[k] = sym_at(x, k);
    }
    for (int64_t k = 0; k < n; k++)
        any |= sym[k] != NULL;
    out->sym = any ? sym : NULL;
    return 0;
}

/* Element k of an integer constant operand of the arithmetic as an index expression: its
 * extent, or its value (which must fit index arithmetic). NULL with ir_fail(). */
static Expr *arith_operand(OpCtx *c, int i, int64_t k)
{
    Tensor *t = c->in[i];
    int64_t n = ir_tensor_numel(t);
    if (n == 1)
        k = 0;
    if (t->sym && t->sym[k])
        return t->sym[k];
    int64_t v = const_int(t, k);
    if (v < INT32_MIN || v > INT32_MAX) {
        ir_fail("%s: input %d holds %lld, past index arithmetic, next to an extent decided at run time", c->op, i,
                (long long)v);
        return NULL;
    }
    return ir_idx(v);
}

/* A comparison of extents with constants or other extents is a constant where the dims'
 * ranges decide it (torch's expand() asks whether each element of a shape is -1): the
 * difference's bounds give the answer, or there is none to give at compile time. */
static int sym_compare(OpCtx *c, BinOp op, int64_t n, int ndim)
{
    unsigned char *data = ir_alloc((size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++) {
        Expr *x = arith_operand(c, 0, k), *y = arith_operand(c, 1, k);
        if (!x || !y)
            return -1;
        int64_t lo, hi;
        if (!ir_dims_bounds(c->prog, ir_simplify(ir_sub(x, y), NULL), &lo, &hi))
            return ir_fail("%s: an extent decided at run time without a bound", c->op);
        int yes = op == OP_EQ ? lo == 0 && hi == 0
                  : op == OP_LT ? hi < 0
                  : op == OP_GT ? lo > 0
                  : op == OP_LE ? hi <= 0
                                : lo >= 0;
        int no = op == OP_EQ ? lo > 0 || hi < 0
                 : op == OP_LT ? lo >= 0
                 : op == OP_GT ? hi <= 0
                 : op == OP_LE ? lo > 0
                               : hi < 0;
        if (!yes && !no)
            return ir_fail("%s: element %lld compares an extent decided at run time, and the answer depends on "
                           "the extents (the dims' ranges decide it only where it is the same across them)",
                           c->op, (long long)k);
        data[k] = (unsigned char)yes;
    }
    Tensor *t = op_const_tensor(c, "value", DT_BOOL, ndim, &n, data);
    if (!t)
        return -1;
    c->out[0] = t;
    return 0;
}

int onnx_sym_arith(OpCtx *c)
{
    if (c->nin != 2 || !c->in[0] || !c->in[1])
        return ir_fail("%s: extents decided at run time take two operands here", c->op);
    for (int i = 0; i < 2; i++) {
        if (!op_is_const(c, i))   /* (folds a computed constant into c->in[i]) */
            return ir_fail("%s: input %d is computed, and the other holds extents decided at run time (kgen does "
                           "arithmetic on extents only with constants and other extents)", c->op, i);
        Tensor *t = c->in[i];
        if (t->dtype != DT_I64 && t->dtype != DT_I32)
            return ir_fail("%s: extents decided at run time in arithmetic of type %s (int64 or int32 is supported)",
                           c->op, ir_dtype_name(t->dtype));
        if (t->ndim > 1)
            return ir_fail("%s: extents decided at run time in an input of rank %d (0 or 1 is supported)", c->op,
                           t->ndim);
    }
    Tensor *a = c->in[0], *b = c->in[1];
    int64_t na = ir_tensor_numel(a), nb = ir_tensor_numel(b);
    if (a->dtype != b->dtype)
        return ir_fail("%s: inputs have different types", c->op);
    if (na != nb && na != 1 && nb != 1)
        return ir_fail("%s: %lld and %lld elements do not broadcast", c->op, (long long)na, (long long)nb);
    int64_t n = na > nb ? na : nb;
    int ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    static const struct {
        const char *name;
        BinOp op;
    } ops[] = {{"Add", OP_ADD}, {"Sub", OP_SUB}, {"Mul", OP_MUL}, {"Div", OP_FLOORDIV}, {"Mod", OP_FLOORMOD},
               {"Max", OP_MAX}, {"Min", OP_MIN}, {"Equal", OP_EQ}, {"Less", OP_LT}, {"Greater", OP_GT},
               {"LessOrEqual", OP_LE}, {"GreaterOrEqual", OP_GE}};
    size_t oi = 0;
    while (strcmp(ops[oi].name, c->op))
        oi++;
    BinOp op = ops[oi].op;
    if (op == OP_EQ || op == OP_LT || op == OP_GT || op == OP_LE || op == OP_GE)
        return sym_compare(c, op, n, ndim);
    Expr **sym = ir_alloc(sizeof *sym * (size_t)(n ? n : 1));
    int64_t *data = ir_alloc(sizeof *data * (size_t)(n ? n : 1));
    int any = 0;
    for (int64_t k = 0; k < n; k++) {
        Expr *x = arith_operand(c, 0, k), *y = arith_operand(c, 1, k);
        if (!x || !y)
            return -1;
        int64_t xlo, xhi, ylo, yhi, lo, hi;
        if (!ir_dims_bounds(c->prog, x, &xlo, &xhi) || !ir_dims_bounds(c->prog, y, &ylo, &yhi))
            return ir_fail("%s: an extent decided at run time without a bound", c->op);
        if ((op == OP_FLOORDIV || op == OP_FLOORMOD) && !(ylo > 0 && xlo >= 0))
            return ir_fail("%s: element %lld divides %s by %s; kgen divides extents only where both are "
                           "non-negative and the divisor is at least 1", c->op, (long long)k,
                           xlo >= 0 ? "a non-negative value" : "a value that can be negative",
                           ylo > 0 ? "a positive one" : "one that can be 0 or negative");
        Expr *e = ir_simplify(ir_bin(op, x, y), NULL);
        if (!ir_dims_bounds(c->prog, e, &lo, &hi) || lo < INT32_MIN || hi > INT32_MAX)
            return ir_fail("%s: element %lld, computed from extents decided at run time, has no bound within "
                           "index arithmetic", c->op, (long long)k);
        int64_t v;
        if (ir_expr_is_const(e, &v))
            data[k] = v;   /* a constant again (an extent times 0...) */
        else {
            sym[k] = e;
            data[k] = hi;
            any = 1;
        }
    }
    void *buf = data;
    if (a->dtype == DT_I32) {
        int32_t *w = ir_alloc(sizeof *w * (size_t)(n ? n : 1));
        for (int64_t k = 0; k < n; k++)
            w[k] = (int32_t)data[k];
        buf = w;
    }
    Tensor *t = op_const_tensor(c, "value", a->dtype, ndim, &n, buf);
    if (!t)
        return -1;
    t->sym = any ? sym : NULL;
    c->out[0] = t;
    return 0;
}
