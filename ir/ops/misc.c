/* misc.c - ONNX operators that make tensors from attributes, shapes or compile-time
 * values: Constant, ConstantOfShape, Shape, Size, Range, EyeLike, OneHot and NonZero.
 * Shapes are static, so Shape and Size give constants; Range, whose output shape depends
 * on input values, needs those values at compile time; NonZero and Compress fold values
 * known when compiling (constants, inputs bound with --bind or --bind-inputs data) and
 * compute their extent at run time otherwise (values.c). */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMS ((int64_t)1 << 24)   /* largest output these ops build as a constant */

/* ---------------------------------------------------------------- helpers */

/* An empty value (a zero dimension): a constant without elements. The IR computes
 * nothing over it; operators that read shapes as values see zero elements, and Concat
 * drops empty parts. */
static Tensor *empty_value(OpCtx *c, const char *what, DType t, int ndim, const int64_t *shape)
{
    return op_const_tensor(c, what, t, ndim, shape, NULL);
}

/* A tensor decoded from the model (an attribute) as a constant of the program. */
static Tensor *from_attr_tensor(OpCtx *c, const OpAttrTensor *ot, const char *what)
{
    DType t;
    if (op_dtype_from_onnx(ot->dtype, &t)) {
        ir_fail("%s: %s: %s", c->op, what, ir_errmsg());
        return NULL;
    }
    if (ot->ndim > KG_MAX_DIMS) {
        ir_fail("%s: %s has rank %d (limit %d)", c->op, what, ot->ndim, KG_MAX_DIMS);
        return NULL;
    }
    for (int d = 0; d < ot->ndim; d++)
        if (ot->dims[d] < 1)
            return empty_value(c, "value", t, ot->ndim, ot->dims);
    if (!ot->data) {
        ir_fail("%s: %s has no data", c->op, what);
        return NULL;
    }
    return op_const_tensor(c, "value", t, ot->ndim, ot->dims, ot->data);
}

/* Store v (an integer) as element k of a buffer of dtype t. */
static void put_int(void *buf, DType t, int64_t k, int64_t v)
{
    unsigned char *p = (unsigned char *)buf + k * ir_dtype_bytes(t);
    switch (t) {
    case DT_BOOL: *p = v != 0; break;
    case DT_I8: case DT_U8: *p = (unsigned char)v; break;
    case DT_I16: case DT_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case DT_I32: case DT_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case DT_I64: case DT_U64: memcpy(p, &v, 8); break;
    case DT_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
    case DT_F64: { double x = (double)v; memcpy(p, &x, 8); break; }
    default: break;
    }
}

static void put_float(void *buf, DType t, int64_t k, double v)
{
    unsigned char *p = (unsigned char *)buf + k * ir_dtype_bytes(t);
    if (t == DT_F32) {
        float x = (float)v;
        memcpy(p, &x, 4);
    } else if (t == DT_F64) {
        memcpy(p, &v, 8);
    } else if (ir_dtype_is_storage(t)) {
        ir_f32_to_storage(t, (float)v, p);
    } else {
        put_int(buf, t, k, (int64_t)v);
    }
}

/* ---------------------------------------------------------------- Constant */

static int constant(OpCtx *c)
{
    const OpAttr *a;
    Tensor *t = NULL;
    if ((a = op_attr(c, "value")) && a->has_tensor) {
        t = from_attr_tensor(c, &a->t, "value");
    } else if ((a = op_attr(c, "value_float"))) {
        float v = a->f;
        t = op_const_tensor(c, "value", DT_F32, 0, NULL, &v);
    } else if ((a = op_attr(c, "value_int"))) {
        int64_t v = a->i;
        t = op_const_tensor(c, "value", DT_I64, 0, NULL, &v);
    } else if ((a = op_attr(c, "value_floats"))) {
        int64_t n = a->nfloats;
        t = n ? op_const_tensor(c, "value", DT_F32, 1, &n, a->floats) : empty_value(c, "value", DT_F32, 1, &n);
    } else if ((a = op_attr(c, "value_ints"))) {
        int64_t n = a->nints;
        t = n ? op_const_tensor(c, "value", DT_I64, 1, &n, a->ints) : empty_value(c, "value", DT_I64, 1, &n);
    } else if (op_attr(c, "sparse_value")) {
        return ir_fail("%s: sparse_value is not supported", c->op);
    } else if (op_attr(c, "value_string") || op_attr(c, "value_strings")) {
        return ir_fail("%s: string constants are not supported", c->op);
    } else {
        return ir_fail("%s: no value attribute", c->op);
    }
    if (!t)
        return -1;
    c->out[0] = t;
    return 0;
}

/* ---------------------------------------------------------------- ConstantOfShape */

/* The shape may hold extents decided at run time (Tensor.sym: torch.ones(t, t) of a
 * sequence's length): the output has those dims, bound by their ranges' most. */
static int constant_of_shape(OpCtx *c)
{
    int64_t s[KG_MAX_DIMS + 1];
    Expr *sym[KG_MAX_DIMS + 1];
    int64_t n = op_const_ints_sym(c, 0, "input", s, sym, KG_MAX_DIMS + 1);
    if (n < 0)
        return -1;
    if (n > KG_MAX_DIMS)
        return ir_fail("%s: the output would have rank %lld (limit %d)", c->op, (long long)n, KG_MAX_DIMS);
    int64_t numel = 1;
    for (int d = 0; d < n; d++) {
        int64_t lo, hi;
        if (sym[d] && (!ir_dims_bounds(c->prog, sym[d], &lo, &hi) || lo < 1))
            return ir_fail("%s: dimension %d, decided at run time, can be 0 or has no bound", c->op, d);
        if (sym[d]) {
            s[d] = hi;
            sym[d] = lo != hi ? sym[d] : NULL;   /* one value in its range: fixed */
        }
        if (s[d] < 0)
            return ir_fail("%s: dimension %d is %lld", c->op, d, (long long)s[d]);
        if (s[d] > INT32_MAX || (numel *= s[d]) > INT32_MAX)
            return ir_fail("%s: the output is too large", c->op);
    }
    Expr *v = ir_float(0, DT_F32);
    int empty = 0;
    for (int d = 0; d < n; d++)
        empty |= s[d] == 0;
    const OpAttr *a = op_attr(c, "value");
    if (a && a->has_tensor) {
        const OpAttrTensor *ot = &a->t;
        DType t;
        if (op_dtype_from_onnx(ot->dtype, &t))
            return ir_fail("%s: value: %s", c->op, ir_errmsg());
        if (ot->nelems != 1 || !ot->data)
            return ir_fail("%s: value must have one element", c->op);
        if (ir_dtype_is_storage(t))
            return ir_fail("%s: unsupported type %s", c->op, ir_dtype_name(t));
        const unsigned char *p = ot->data;
        switch (t) {
        case DT_F32: { float f; memcpy(&f, p, 4); v = ir_float(f, t); break; }
        case DT_F64: { double f; memcpy(&f, p, 8); v = ir_float(f, t); break; }
        case DT_BOOL: v = ir_int(*p != 0, t); break;
        case DT_U8: v = ir_int(*p, t); break;
        case DT_I8: v = ir_int((int8_t)*p, t); break;
        case DT_I16: { int16_t x; memcpy(&x, p, 2); v = ir_int(x, t); break; }
        case DT_U16: { uint16_t x; memcpy(&x, p, 2); v = ir_int(x, t); break; }
        case DT_I32: { int32_t x; memcpy(&x, p, 4); v = ir_int(x, t); break; }
        case DT_U32: { uint32_t x; memcpy(&x, p, 4); v = ir_int(x, t); break; }
        case DT_I4:
        case DT_U4:
        case DT_I2:
        case DT_U2: v = ir_int(ir_packed_get(t, p, 0), t); break;   /* (one byte holds it) */
        default: { int64_t x; memcpy(&x, p, 8); v = ir_int(x, t); break; }
        }
    }
    if (empty) {
        c->out[0] = empty_value(c, "empty", v->dtype, (int)n, s);
        return 0;
    }
    return op_emit_out(c, 0, (int)n, op_axes_dyn((int)n, s, sym), v) ? 0 : -1;
}

/* ---------------------------------------------------------------- Shape, Size */

static int shape(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t r = x->ndim, b = op_attr_int(c, "start", 0), e = op_attr_int(c, "end", r);
    if (b < 0)
        b += r;
    if (e < 0)
        e += r;
    b = b < 0 ? 0 : b > r ? r : b;
    e = e < 0 ? 0 : e > r ? r : e;
    int64_t n = e > b ? e - b : 0;
    if (n == 0) {
        c->out[0] = empty_value(c, "shape", DT_I64, 1, &n);
        return 0;
    }
    Tensor *t = op_const_tensor(c, "shape", DT_I64, 1, &n, x->shape + b);
    if (!t)
        return -1;
    if (ir_tensor_is_dynamic(x)) {
        /* the run-time extents as values (the data holds their bounds) */
        t->sym = ir_alloc(sizeof *t->sym * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            t->sym[i] = x->dyn[b + i];
    }
    c->out[0] = t;
    return 0;
}

static int size(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t n = ir_tensor_numel(x);
    Tensor *t = op_const_tensor(c, "size", DT_I64, 0, NULL, &n);
    if (!t)
        return -1;
    c->out[0] = t;
    return 0;
}

/* ---------------------------------------------------------------- Range */

/* Range whose start or limit holds an extent decided at run time (Tensor.sym: a Shape
 * value of a tensor with run-time dims), delta a constant: a compute over the most
 * elements the dims' ranges give, start + k * delta, whose run-time extent is
 * max(0, ceil((limit - start) / delta)), an expression of the dims. */
static int range_sym(OpCtx *c, Tensor **ts, const char *const *names)
{
    DType t = ts[0]->dtype;
    if (t != DT_I64 && t != DT_I32)
        return ir_fail("%s: extents decided at run time in an input of type %s (int64 or int32 is supported)",
                       c->op, ir_dtype_name(t));
    int64_t v[3];
    Expr *sym[3];
    for (int i = 0; i < 3; i++)
        if (op_const_ints_sym(c, i, names[i], &v[i], &sym[i], 1) < 0)
            return -1;
    if (sym[2])
        return ir_fail("%s: delta holds an extent decided at run time (only start and limit may)", c->op);
    if (v[2] == 0)
        return ir_fail("%s: delta is 0", c->op);
    Expr *start = sym[0] ? sym[0] : ir_idx(v[0]);
    Expr *limit = sym[1] ? sym[1] : ir_idx(v[1]);
    Expr *n;
    if (!sym[0] && v[0] == 0 && v[2] == 1)
        n = limit;   /* arange(limit): the extent itself */
    else {
        int64_t d = v[2] > 0 ? v[2] : -v[2];
        Expr *span = v[2] > 0 ? ir_bin(OP_SUB, limit, start) : ir_bin(OP_SUB, start, limit);
        n = ir_bin(OP_MAX, ir_idx(0), ir_bin(OP_FLOORDIV, ir_bin(OP_ADD, span, ir_idx(d - 1)), ir_idx(d)));
    }
    int64_t lo, hi;
    if (!ir_dims_bounds(c->prog, n, &lo, &hi))   /* (exact where the dims' values are few) */
        return ir_fail("%s: the element count, decided at run time, has no bound", c->op);
    if (hi > MAX_ELEMS)
        return ir_fail("%s: more than %lld elements", c->op, (long long)MAX_ELEMS);
    if (hi < 1) {
        int64_t z = 0;
        Tensor *out = empty_value(c, "range", t, 1, &z);
        if (!out)
            return -1;
        c->out[0] = out;
        return 0;
    }
    /* the values are index arithmetic (int32): they must fit it */
    const int64_t vmax = INT32_MAX;
    int64_t slo, shi;
    if (!ir_const_bounds(start, NULL, &slo, &shi) || slo < -vmax || shi > vmax ||
        (v[2] > 0 ? v[2] > (vmax - (shi > 0 ? shi : 0)) / hi : -v[2] > (vmax + (slo < 0 ? slo : 0)) / hi))
        return ir_fail("%s: values past +-%lld, with an extent decided at run time", c->op, (long long)vmax);
    IterVar **ax = op_axes(1, &hi);
    Expr *k = ir_varref(ax[0]->var);
    Expr *body = ir_cast(t, ir_bin(OP_ADD, start, ir_bin(OP_MUL, k, ir_idx(v[2]))));
    Tensor *out = op_emit_out(c, 0, 1, ax, body);
    if (!out)
        return -1;
    if (lo != hi) {
        ax[0]->dyn = n;
        out->dyn[0] = n;
    }
    return 0;
}

static int range(OpCtx *c)
{
    Tensor *ts[3];
    const char *names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        if (!(ts[i] = op_input(c, i, names[i])))
            return -1;
        if (ir_tensor_numel(ts[i]) != 1)
            return ir_fail("%s: %s must be a scalar", c->op, names[i]);
        if (ts[i]->dtype != ts[0]->dtype)
            return ir_fail("%s: inputs have different types", c->op);
    }
    for (int i = 0; i < 3; i++)
        if (ir_tensor_has_sym(ts[i]))
            return range_sym(c, ts, names);
    DType t = ts[0]->dtype;
    int64_t n;
    void *buf;
    if (ir_dtype_is_float(t)) {
        double v[3];
        for (int i = 0; i < 3; i++)
            if (op_const_floats(c, i, names[i], &v[i], 1) < 0)
                return -1;
        if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
            return ir_fail("%s: delta is 0 or an input is not finite", c->op);
        double cnt = ceil((v[1] - v[0]) / v[2]);
        if (cnt > (double)MAX_ELEMS)
            return ir_fail("%s: more than %lld elements", c->op, (long long)MAX_ELEMS);
        n = cnt < 1 ? 0 : (int64_t)cnt;
        buf = ir_alloc((size_t)n * (size_t)ir_dtype_bytes(t) + 1);
        for (int64_t k = 0; k < n; k++) {
            /* like numpy.arange: start + k * delta in the element type (f16 and bf16:
             * in float, rounded once by the store) */
            if (t != DT_F64)
                put_float(buf, t, k, (float)v[0] + (float)k * (float)v[2]);
            else
                put_float(buf, t, k, v[0] + (double)k * v[2]);
        }
    } else {
        int64_t v[3];
        for (int i = 0; i < 3; i++)
            if (op_const_ints(c, i, names[i], &v[i], 1) < 0)
                return -1;
        if (v[2] == 0)
            return ir_fail("%s: delta is 0", c->op);
        double span = ((double)v[1] - (double)v[0]) / (double)v[2];
        if (span > (double)MAX_ELEMS)
            return ir_fail("%s: more than %lld elements", c->op, (long long)MAX_ELEMS);
        /* unsigned arithmetic: the distance may not fit in int64 */
        n = 0;
        if (v[2] > 0 && v[1] > v[0])
            n = (int64_t)(((uint64_t)v[1] - (uint64_t)v[0] - 1) / (uint64_t)v[2] + 1);
        else if (v[2] < 0 && v[1] < v[0])
            n = (int64_t)(((uint64_t)v[0] - (uint64_t)v[1] - 1) / (0 - (uint64_t)v[2]) + 1);
        buf = ir_alloc((size_t)n * (size_t)ir_dtype_bytes(t) + 1);
        for (int64_t k = 0; k < n; k++)
            put_int(buf, t, k, (int64_t)((uint64_t)v[0] + (uint64_t)k * (uint64_t)v[2]));
    }
    Tensor *out = n ? op_const_tensor(c, "range", t, 1, &n, buf) : empty_value(c, "range", t, 1, &n);
    if (!out)
        return -1;
    c->out[0] = out;
    return 0;
}

/* ---------------------------------------------------------------- EyeLike */

static int eye_like(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (x->ndim != 2)
        return ir_fail("%s: the input must have rank 2", c->op);
    DType t = x->dtype;
    const OpAttr *a = op_attr(c, "dtype");
    if (a && op_dtype_from_onnx((int)a->i, &t))
        return ir_fail("%s: %s", c->op, ir_errmsg());
    if (ir_dtype_is_storage(t))
        return ir_fail("%s: unsupported type %s", c->op, ir_dtype_name(t));
    int64_t k = op_attr_int(c, "k", 0);
    k = k < -INT32_MAX ? -INT32_MAX : k > INT32_MAX ? INT32_MAX : k;
    IterVar **ax = op_axes(2, x->shape);
    Expr *i[2];
    op_axis_exprs(ax, 2, i);
    Expr *on = ir_bin(OP_EQ, ir_sub(i[1], i[0]), ir_idx(k));
    return op_emit_out(c, 0, 2, ax, ir_select(on, op_lit(1, t), op_lit(0, t))) ? 0 : -1;
}

/* ---------------------------------------------------------------- OneHot */

static int one_hot(OpCtx *c)
{
    Tensor *ind = op_input(c, 0, "indices"), *vals = op_input(c, 2, "values");
    if (!ind || !vals)
        return -1;
    if (ir_tensor_numel(vals) != 2 || vals->ndim != 1)
        return ir_fail("%s: values must have two elements [off, on]", c->op);
    double dv;
    if (op_const_floats(c, 1, "depth", &dv, 1) < 0)
        return -1;
    if (!(dv >= 1 && dv <= INT32_MAX))
        return ir_fail("%s: depth %g is invalid", c->op, dv);
    int64_t depth = (int64_t)dv;
    int r = ind->ndim + 1, axis;
    if (r > KG_MAX_DIMS)
        return ir_fail("%s: the output would have rank %d (limit %d)", c->op, r, KG_MAX_DIMS);
    if (op_axis(c, op_attr_int(c, "axis", -1), r, "axis", &axis))
        return -1;
    int64_t s[KG_MAX_DIMS];
    for (int d = 0, k = 0; d < r; d++)
        s[d] = d == axis ? depth : ind->shape[k++];
    IterVar **ax = op_axes(r, s);
    Expr *o[KG_MAX_DIMS], *ii[KG_MAX_DIMS];
    op_axis_exprs(ax, r, o);
    for (int d = 0, k = 0; d < r; d++)
        if (d != axis)
            ii[k++] = o[d];
    /* indices may be of any numeric type: compare in the index type after truncation */
    Expr *v = op_read(ind, ii);
    if (ir_dtype_is_float(v->dtype)) {
        Expr *arg = v;
        v = ir_mathcall(FN_TRUNC, &arg, 1);
        if (!v)
            return -1;
    }
    if (v->dtype != DT_I64)
        v = ir_cast(DT_I64, v);
    v = ir_select(ir_bin(OP_LT, v, ir_int(0, DT_I64)), ir_bin(OP_ADD, v, ir_int(depth, DT_I64)), v);
    Expr *hit = ir_bin(OP_EQ, v, ir_cast(DT_I64, o[axis]));
    Expr *i0[1] = {ir_idx(0)}, *i1[1] = {ir_idx(1)};
    return op_emit_out(c, 0, r, ax, ir_select(hit, op_read(vals, i1), op_read(vals, i0))) ? 0 : -1;
}

/* ---------------------------------------------------------------- NonZero */

static int non_zero(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    if (x->ndim == 0)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    if (!op_is_const(c, 0))
        return op_nonzero_dyn(c, x);   /* known at run time: values.c */
    x = c->in[0];   /* (maybe folded just now) */
    int64_t numel = ir_tensor_numel(x);
    if (numel > MAX_ELEMS)
        return ir_fail("%s: the input is too large", c->op);
    double *v = malloc(sizeof *v * (size_t)numel);
    if (!v)
        ir_die("out of memory");
    if (ir_dtype_is_storage(x->dtype) || op_const_floats(c, 0, "X", v, numel) < 0) {
        free(v);
        return ir_dtype_is_storage(x->dtype) ? ir_fail("%s: unsupported type %s", c->op, ir_dtype_name(x->dtype)) : -1;
    }
    int64_t nnz = 0;
    for (int64_t k = 0; k < numel; k++)
        nnz += v[k] != 0;
    int r = x->ndim;
    int64_t *out = ir_alloc(sizeof *out * (size_t)(r * nnz) + 1);
    for (int64_t k = 0, j = 0; k < numel; k++) {
        if (v[k] == 0)
            continue;
        int64_t rest = k;
        for (int d = x->ndim - 1; d >= 0; d--) {
            out[d * nnz + j] = rest % x->shape[d];
            rest /= x->shape[d];
        }
        j++;
    }
    free(v);
    int64_t s[2] = {x->ndim, nnz};
    Tensor *t = nnz ? op_const_tensor(c, "nonzero", DT_I64, 2, s, out) : empty_value(c, "nonzero", DT_I64, 2, s);
    if (!t)
        return -1;
    c->out[0] = t;
    return 0;
}

/* Compress with a condition known when compiling (the output's extent is the count of its
 * true elements): a gather along the axis (the flattened input without one) at the
 * selected positions, read from a constant index table. */
static int compress(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input"), *cond = x ? op_input(c, 1, "condition") : NULL;
    if (!cond)
        return -1;
    if (cond->ndim != 1)
        return ir_fail("%s: the condition has rank %d, not 1", c->op, cond->ndim);
    int has_axis = op_attr(c, "axis") != NULL;
    int axis = 0;
    if (has_axis && op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &axis))
        return -1;
    if (!op_is_const(c, 1))
        return op_compress_dyn(c, x, cond, has_axis, axis);   /* known at run time: values.c */
    int64_t len = has_axis ? x->shape[axis] : ir_tensor_numel(x), n = ir_tensor_numel(c->in[1]);
    if (n > MAX_ELEMS)
        return ir_fail("%s: the condition is too large", c->op);
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    if (!v)
        ir_die("out of memory");
    if (op_const_floats(c, 1, "condition", v, n) < 0) {
        free(v);
        return -1;
    }
    int64_t *pick = ir_alloc(sizeof *pick * (size_t)(n + 1)), k = 0;
    for (int64_t i = 0; i < n && i < len; i++)
        if (v[i] != 0)
            pick[k++] = i;
    free(v);
    int64_t shape[KG_MAX_DIMS];
    int nd = has_axis ? x->ndim : 1;
    for (int d = 0; d < nd; d++)
        shape[d] = has_axis ? x->shape[d] : k;
    if (has_axis)
        shape[axis] = k;
    if (!k) {
        Tensor *t = empty_value(c, "compress", x->dtype, nd, shape);
        if (!t)
            return -1;
        c->out[0] = t;
        return 0;
    }
    Tensor *tab = op_const_tensor(c, "picked", DT_I64, 1, &k, pick);
    if (!tab)
        return -1;
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    Expr *ti[1] = {idx[has_axis ? axis : 0]};
    Expr *at = ir_cast(DT_INDEX, op_read(tab, ti));
    Expr *body;
    if (has_axis) {
        idx[axis] = at;
        body = op_read(x, idx);
    } else {
        /* the flat position, back to the input's indices */
        Expr *xi[KG_MAX_DIMS];
        for (int d = x->ndim - 1; d >= 0; d--) {
            xi[d] = d ? ir_bin(OP_MOD, at, ir_idx(x->shape[d])) : at;
            at = ir_bin(OP_DIV, at, ir_idx(x->shape[d]));
        }
        body = op_read(x, xi);
    }
    return op_emit_out(c, 0, nd, ax, body) ? 0 : -1;
}

/* TfIdfVectorizer over integer tokens (strings are refused by the importer): each pool
 * n-gram j of length L (L in [min_gram_length, max_gram_length]) is counted as a sum over
 * the start positions i and the skips s of AND_k x[i + k (s + 1)] == pool[j][k], the last
 * token inside the row (a unigram counts once: skips make no other unigrams); then
 * Y[..., ngram_indexes[j]] is the count (TF), weight[j] if it is nonzero (IDF), or
 * count * weight[j] (TFIDF). */
#define TFIDF_MAX_POOL 4096
static int tfidf_vectorizer(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    if ((x->ndim != 1 && x->ndim != 2) || (x->dtype != DT_I32 && x->dtype != DT_I64))
        return ir_fail("%s: X is %s with rank %d; int32 or int64 of rank 1 or 2 is supported", c->op,
                       ir_dtype_name(x->dtype), x->ndim);
    int64_t lo = op_attr_int(c, "min_gram_length", 1), hi = op_attr_int(c, "max_gram_length", 1);
    int64_t skips = op_attr_int(c, "max_skip_count", 0);
    const char *mode = op_attr_str(c, "mode", "TF");
    int m = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
    if (m < 0)
        return ir_fail("%s: mode '%s' (expected TF, IDF or TFIDF)", c->op, mode);
    if (lo < 1 || hi < lo || skips < 0 || skips > 64)
        return ir_fail("%s: gram lengths %lld..%lld and max_skip_count %lld are not valid", c->op, (long long)lo,
                       (long long)hi, (long long)skips);
    if (op_attr(c, "pool_strings"))
        return ir_fail("%s: pool_strings: string n-grams are not supported", c->op);
    int64_t *pool = ir_alloc(sizeof *pool * TFIDF_MAX_POOL), counts[64], *index = ir_alloc(sizeof *index * TFIDF_MAX_POOL);
    double *weight = ir_alloc(sizeof *weight * TFIDF_MAX_POOL);
    int np = op_attr_ints(c, "pool_int64s", pool, TFIDF_MAX_POOL), nc = op_attr_ints(c, "ngram_counts", counts, 64);
    int ni = op_attr_ints(c, "ngram_indexes", index, TFIDF_MAX_POOL);
    int nw = op_attr_floats(c, "weights", weight, TFIDF_MAX_POOL);
    if (np < 0 || nc < 1 || ni < 1 || np >= TFIDF_MAX_POOL || ni >= TFIDF_MAX_POOL)
        return ir_fail("%s: pool_int64s, ngram_counts and ngram_indexes are required (at most %d entries)", c->op,
                       TFIDF_MAX_POOL - 1);
    int64_t width = 0;
    for (int j = 0; j < ni; j++) {
        if (index[j] < 0 || index[j] >= TFIDF_MAX_POOL)
            return ir_fail("%s: ngram_indexes[%d] = %lld is out of range", c->op, j, (long long)index[j]);
        if (index[j] + 1 > width)
            width = index[j] + 1;
    }
    if (nw >= 0 && nw != ni)
        return ir_fail("%s: %d weights for %d n-grams", c->op, nw, ni);
    int64_t C = x->shape[x->ndim - 1];
    int64_t oshape[2] = {x->shape[0], width};
    int ond = x->ndim;
    if (ond == 1)
        oshape[0] = width;
    IterVar **ax = op_axes(ond, oshape);
    Expr *o = ir_varref(ax[ond - 1]->var);
    Expr *y = op_lit(0, DT_F32);
    /* the pool, n-gram by n-gram: those of length L start at ngram_counts[L - 1] */
    int j = 0;
    for (int L = 1; L <= nc; L++) {
        int64_t start = counts[L - 1], end = L < nc ? counts[L] : np;
        if (start < 0 || end > np || start > end || (end - start) % L)
            return ir_fail("%s: ngram_counts[%d] = %lld does not split the pool into %d-grams", c->op, L - 1,
                           (long long)start, L);
        for (int64_t p = start; p < end; p += L, j++) {
            if (j >= ni)
                return ir_fail("%s: the pool holds more n-grams than ngram_indexes (%d)", c->op, ni);
            if (L < lo || L > hi)
                continue;
            int64_t ns = L == 1 ? 1 : skips + 1;
            IterVar **cax = op_axes(ond == 2 ? 1 : 0, oshape);   /* the count's: the row */
            IterVar *ri = ir_itervar_new("i", C, IV_REDUCE), *rs = ir_itervar_new("s", ns, IV_REDUCE);
            Expr *i = ir_varref(ri->var), *sk = ir_varref(rs->var);
            Expr *step = ir_bin(OP_ADD, sk, ir_idx(1));
            /* the innermost condition first: the last token inside the row, then each match */
            Expr *hit = op_lit(1, DT_F32);
            for (int k = L - 1; k >= 0; k--) {
                Expr *pos = ir_bin(OP_ADD, i, ir_bin(OP_MUL, ir_idx(k), step));
                Expr *idx[2] = {ond == 2 ? ir_varref(cax[0]->var) : pos, pos};
                Expr *tok = ir_access(x, idx + (ond == 2 ? 0 : 1), x->ndim);
                Expr *eq = ir_bin(OP_EQ, tok, ir_int(pool[p + k], x->dtype));
                hit = ir_select(eq, hit, op_lit(0, DT_F32));
            }
            Expr *last = ir_bin(OP_ADD, i, ir_bin(OP_MUL, ir_idx(L - 1), step));
            hit = ir_select(ir_bin(OP_LT, last, ir_idx(C)), hit, op_lit(0, DT_F32));
            IterVar *rax[2] = {ri, rs};
            Tensor *cnt = op_emit(c, op_name(c, ir_fmt("count%d", j)), ond == 2 ? 1 : 0, cax,
                                  ir_reduce(RED_SUM, hit, rax, 2));
            if (!cnt)
                return -1;
            Expr *ci[1] = {ond == 2 ? ir_varref(ax[0]->var) : NULL};
            Expr *n = op_read(cnt, ci);
            double w = nw >= 0 ? weight[j] : 1;
            Expr *v = m == 0 ? n
                      : m == 1 ? ir_select(ir_bin(OP_GT, n, op_lit(0, DT_F32)), op_lit(w, DT_F32), op_lit(0, DT_F32))
                               : ir_bin(OP_MUL, n, op_lit(w, DT_F32));
            y = ir_select(ir_bin(OP_EQ, o, ir_idx(index[j])), v, y);
        }
    }
    return op_emit_out(c, 0, ond, ax, y) ? 0 : -1;
}

/* OptionalHasElement, OptionalGetElement over plain tensors: kgen has no optional values
 * (a graph input or output of optional type is refused by the importer), so an input given
 * is a tensor that is there, and an omitted one is an empty optional. */
static int optional_has_element(OpCtx *c)
{
    int64_t one = 1;
    unsigned char has = op_has_input(c, 0);
    c->out[0] = op_const_tensor(c, "has", DT_BOOL, 0, &one, &has);
    return c->out[0] ? 0 : -1;
}

static int optional_get_element(OpCtx *c)
{
    if (!op_has_input(c, 0))
        return ir_fail("%s: the optional is empty (no input), so it has no element to get", c->op);
    c->out[0] = c->in[0];
    return 0;
}

const OpDef op_defs_misc[] = {
    {"Constant", constant},
    {"ConstantOfShape", constant_of_shape},
    {"Shape", shape},
    {"Size", size},
    {"Range", range},
    {"EyeLike", eye_like},
    {"OneHot", one_hot},
    {"NonZero", non_zero},
    {"Compress", compress},
    {"TfIdfVectorizer", tfidf_vectorizer},
    {"OptionalHasElement", optional_has_element},
    {"OptionalGetElement", optional_get_element},
    {NULL, NULL},
};
