/* reduce.c - ONNX operators that reduce over axes: the Reduce* family, ArgMax/ArgMin,
 * Softmax/LogSoftmax/Hardmax, CumSum, TopK and the normalizations (Layer, RMS, Group,
 * Instance, Batch, MeanVariance, LRN). Each reduction is a compute whose body is the
 * ir_reduce (a stage reduction); statistics (max, sum, moments) are intermediate tensors
 * shaped like the input with the reduced dimensions kept at size 1, read back by an
 * elementwise compute. */
#include "ops.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* NULL-propagating wrappers: the checked constructors already pass NULL through. */
static Expr *bin(BinOp op, Expr *a, Expr *b) { return ir_binary(op, a, b); }
static Expr *math1(MathFn fn, Expr *x) { return ir_mathcall(fn, &x, 1); }
static Expr *cast(DType t, Expr *a) { return a ? ir_cast(t, a) : NULL; }
static Expr *sel(Expr *c, Expr *t, Expr *f) { return c && t && f ? ir_select(c, t, f) : NULL; }
static Expr *red(ReduceOp op, Expr *body, IterVar **axes, int n) { return body ? ir_reduce(op, body, axes, n) : NULL; }

static int is_real(DType t) { return t == DT_F32 || t == DT_F64; }

/* Input types an operator takes. */
enum { TY_FLOAT = 1, TY_INT = 2, TY_BOOL = 4 };

static int check_type(OpCtx *c, const Tensor *x, int allowed)
{
    DType t = x->dtype;
    int ok = (is_real(t) && (allowed & TY_FLOAT)) || (t == DT_BOOL && (allowed & TY_BOOL)) ||
             (!ir_dtype_is_float(t) && t != DT_BOOL && (allowed & TY_INT));
    if (ok)
        return 0;
    const char *what = allowed == TY_FLOAT ? "f32 or f64" : allowed == (TY_FLOAT | TY_INT) ? "f32, f64 or integers"
                                                                                        : "f32, f64, integers or bool";
    return ir_fail("%s: input type %s is not supported (%s)", c->op, ir_dtype_name(t), what);
}

/* The iteration space of a reduction of x over the dims flagged in red[]: the output
 * axes (reduced dims kept at size 1 when keep), fresh reduce axes, and x's index in
 * terms of both. Every compute gets its own axes. */
typedef struct {
    int ndim;                       /* output rank */
    int64_t shape[KG_MAX_DIMS];
    IterVar **ax;                   /* output axes */
    Expr *oi[KG_MAX_DIMS];          /* their index expressions */
    IterVar *rax[KG_MAX_DIMS];      /* one reduce axis per reduced dim, in dim order */
    int nr;
    Expr *xi[KG_MAX_DIMS];          /* x's index */
} Space;

static void space(const Tensor *x, const int *red_dims, int keep, Space *s)
{
    memset(s, 0, sizeof *s);
    for (int d = 0; d < x->ndim; d++)
        if (!red_dims[d] || keep)
            s->shape[s->ndim++] = red_dims[d] ? 1 : x->shape[d];
    s->ax = op_axes(s->ndim, s->shape);
    op_axis_exprs(s->ax, s->ndim, s->oi);
    for (int d = 0, k = 0; d < x->ndim; d++) {
        if (red_dims[d]) {
            s->rax[s->nr] = ir_itervar_new(ir_fmt("r%d", s->nr), x->shape[d], IV_REDUCE);
            s->xi[d] = ir_varref(s->rax[s->nr++]->var);
            k += keep;
        } else {
            s->xi[d] = s->oi[k++];
        }
    }
}

/* The index of a keepdims-shaped statistic from a full-shape index. */
static void keep_index(int n, const int *red_dims, Expr **idx, Expr **out)
{
    for (int d = 0; d < n; d++)
        out[d] = red_dims[d] ? ir_idx(0) : idx[d];
}

static int64_t reduced_count(const Tensor *x, const int *red_dims)
{
    int64_t n = 1;
    for (int d = 0; d < x->ndim; d++)
        if (red_dims[d])
            n *= x->shape[d];
    return n;
}

/* Flag the dims named by axes (normalized, no duplicates). */
static int axes_set(OpCtx *c, const Tensor *x, const int64_t *axes, int n, int *red_dims)
{
    for (int d = 0; d < KG_MAX_DIMS; d++)
        red_dims[d] = 0;
    for (int i = 0; i < n; i++) {
        int a;
        if (op_axis(c, axes[i], x->ndim, "axis", &a))
            return -1;
        if (red_dims[a])
            return ir_fail("%s: axis %lld appears twice", c->op, (long long)axes[i]);
        red_dims[a] = 1;
    }
    return 0;
}

/* Flag the dims from `from` to the last. */
static void tail_set(int ndim, int from, int *red_dims)
{
    for (int d = 0; d < KG_MAX_DIMS; d++)
        red_dims[d] = d < ndim && d >= from;
}

/* Output i if the node names it. */
static int wants(OpCtx *c, int i) { return i < c->nout && c->out_names[i]; }

/* A keepdims-shaped reduction of f(x) where f is x or its square. */
static Tensor *stat(OpCtx *c, const char *what, Tensor *x, const int *red_dims, ReduceOp op, int square)
{
    Space s;
    space(x, red_dims, 1, &s);
    Expr *v = op_read(x, s.xi);
    if (square)
        v = bin(OP_MUL, v, op_read(x, s.xi));
    return op_emit(c, op_name(c, what), s.ndim, s.ax, red(op, v, s.rax, s.nr));
}

/* Sum of x and sum of squared deviations from the mean, keepdims-shaped (two passes:
 * stable where E[x^2] - E[x]^2 is not). */
static int moments(OpCtx *c, Tensor *x, const int *red_dims, Tensor **sum, Tensor **dev2)
{
    *sum = stat(c, "sum", x, red_dims, RED_SUM, 0);
    if (!*sum)
        return -1;
    double n = (double)reduced_count(x, red_dims);
    Space s;
    space(x, red_dims, 1, &s);
    Expr *d = bin(OP_SUB, op_read(x, s.xi), bin(OP_DIV, op_read(*sum, s.oi), op_lit(n, x->dtype)));
    *dev2 = op_emit(c, op_name(c, "dev2"), s.ndim, s.ax, red(RED_SUM, bin(OP_MUL, d, d), s.rax, s.nr));
    return *dev2 ? 0 : -1;
}

/* Read a per-channel parameter p (shape [C] or broadcastable) at channel index ch. */
static int check_channel(OpCtx *c, const Tensor *p, int64_t ch, const char *what)
{
    if (p->ndim != 1 || p->shape[0] != ch)
        return ir_fail("%s: %s must have shape [%lld]", c->op, what, (long long)ch);
    return 0;
}

/* Check that p broadcasts (right-aligned) to x's dims from `from` on. */
static int check_tail_bcast(OpCtx *c, const Tensor *p, const Tensor *x, int from, const char *what)
{
    if (p->ndim > x->ndim - from)
        return ir_fail("%s: %s has rank %d, more than the %d normalized dimensions", c->op, what, p->ndim,
                       x->ndim - from);
    for (int d = 0; d < p->ndim; d++) {
        int64_t s = p->shape[d], want = x->shape[x->ndim - p->ndim + d];
        if (s != 1 && s != want)
            return ir_fail("%s: %s dimension %d is %lld, expected %lld or 1", c->op, what, d, (long long)s,
                           (long long)want);
    }
    if (p->dtype != x->dtype)
        return ir_fail("%s: %s has type %s, X has %s", c->op, what, ir_dtype_name(p->dtype), ir_dtype_name(x->dtype));
    return 0;
}

/* ---------------------------------------------------------------- Reduce* */

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ } RedKind;

/* The dims a Reduce* node reduces (axes from the attribute in old opsets, the optional
 * second input in new ones). Returns the count of reduced dims, or -1. */
static int reduce_dims(OpCtx *c, const Tensor *x, int *red_dims)
{
    int64_t axes[KG_MAX_DIMS];
    int n = op_attr_ints(c, "axes", axes, KG_MAX_DIMS);
    if (n < 0 && op_has_input(c, 1)) {
        int64_t m = op_const_ints(c, 1, "axes", axes, KG_MAX_DIMS);
        if (m < 0)
            return -1;
        n = (int)m;
    }
    if (n <= 0) {
        if (op_attr_int(c, "noop_with_empty_axes", 0)) {
            axes_set(c, x, axes, 0, red_dims);
            return 0;
        }
        tail_set(x->ndim, 0, red_dims);
        return x->ndim;
    }
    if (axes_set(c, x, axes, n, red_dims))
        return -1;
    return n;
}

/* A reduction over an empty set: a constant of the output shape filled with the identity
 * (0 for sums, 1 for products, -inf or the type's least value for max, ...). */
static int reduce_empty(OpCtx *c, RedKind k, Tensor *x, const int *red_dims, int keep)
{
    Space s;
    space(x, red_dims, keep, &s);
    int64_t n = 1;
    for (int d = 0; d < s.ndim; d++)
        n *= s.shape[d];
    DType t = x->dtype;
    Expr *v;
    switch (k) {
    case R_MAX: v = ir_reduce_identity(RED_MAX, t); break;
    case R_MIN: v = ir_reduce_identity(RED_MIN, t); break;
    case R_PROD: v = ir_int(1, t); break;
    case R_MEAN: v = is_real(t) ? ir_float(NAN, t) : ir_int(0, t); break;
    case R_LOGSUM:
    case R_LOGSUMEXP: v = is_real(t) ? ir_float(-INFINITY, t) : ir_reduce_identity(RED_MAX, t); break;
    default: v = ir_int(0, t); break;
    }
    int bytes = ir_dtype_bytes(t);
    unsigned char one[8];
    unsigned char *data = ir_alloc((size_t)(n * bytes) + 1);   /* (an empty output: no elements) */
    if (t == DT_F32) {
        float f = (float)v->u.fval;
        memcpy(one, &f, 4);
    } else if (t == DT_F64) {
        memcpy(one, &v->u.fval, 8);
    } else {
        uint64_t u = (uint64_t)v->u.ival;
        for (int b = 0; b < bytes; b++)
            one[b] = (unsigned char)(u >> (8 * b));   /* little-endian, as constants are stored */
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(data + i * bytes, one, (size_t)bytes);
    c->out[0] = op_const_tensor(c, "empty", t, s.ndim, s.shape, data);
    return c->out[0] ? 0 : -1;
}

static int reduce_op(OpCtx *c, RedKind k)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int allowed = TY_FLOAT | TY_INT | (k == R_MAX || k == R_MIN ? TY_BOOL : 0);
    if (check_type(c, x, allowed))
        return -1;
    int red_dims[KG_MAX_DIMS];
    int nred = reduce_dims(c, x, red_dims);
    if (nred < 0)
        return -1;
    int keep = op_attr_int(c, "keepdims", 1) != 0;
    DType xt = x->dtype;
    /* integers go through f64 where the math is floating point */
    DType ct = (k == R_L2 || k == R_LOGSUM || k == R_LOGSUMEXP) && !is_real(xt) ? DT_F64 : xt;
    ReduceOp rop = k == R_MAX ? RED_MAX : k == R_MIN ? RED_MIN : k == R_PROD ? RED_PROD : RED_SUM;

    for (int d = 0; d < x->ndim; d++)
        if (red_dims[d] && x->shape[d] == 0)
            return reduce_empty(c, k, x, red_dims, keep);
    if (nred == 0 && (k == R_SUM || k == R_MEAN || k == R_MAX || k == R_MIN || k == R_PROD)) {
        c->out[0] = x;   /* noop_with_empty_axes: nothing to reduce */
        return 0;
    }

    /* LogSumExp subtracts the max first (kept at 0 when infinite, so all -inf gives -inf) */
    Tensor *mx = NULL;
    if (k == R_LOGSUMEXP && nred) {
        Space s;
        space(x, red_dims, keep, &s);
        mx = op_emit(c, op_name(c, "max"), s.ndim, s.ax, ir_reduce(RED_MAX, op_read(x, s.xi), s.rax, s.nr));
        if (!mx)
            return -1;
    }

    Space s;
    space(x, red_dims, keep, &s);
    Expr *m = NULL;
    if (mx) {
        m = cast(ct, op_read(mx, s.oi));
        m = sel(math1(FN_ISINF, m), op_lit(0, ct), m);
    }
    Expr *v = cast(ct, op_read(x, s.xi));
    switch (k) {
    case R_L1:
        if (ir_dtype_is_signed(ct))
            v = math1(FN_ABS, v);
        break;
    case R_L2:
    case R_SUMSQ: v = bin(OP_MUL, v, v); break;
    case R_LOGSUMEXP: v = math1(FN_EXP, m ? bin(OP_SUB, v, m) : v); break;
    default: break;
    }
    if (!v)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    int post = k == R_MEAN || k == R_L2 || k == R_LOGSUM || k == R_LOGSUMEXP || ct != xt;
    if (!post)
        return op_emit_out(c, 0, s.ndim, s.ax, nred ? ir_reduce(rop, v, s.rax, s.nr) : v) ? 0 : -1;

    /* the reduction as its own stage, then the elementwise finish */
    Expr *a = v;
    if (nred) {
        Tensor *acc = op_emit(c, op_name(c, "acc"), s.ndim, s.ax, ir_reduce(rop, v, s.rax, s.nr));
        if (!acc)
            return -1;
        space(x, red_dims, keep, &s);
        a = op_read(acc, s.oi);
        if (mx) {
            m = cast(ct, op_read(mx, s.oi));
            m = sel(math1(FN_ISINF, m), op_lit(0, ct), m);
        }
    }
    switch (k) {
    case R_MEAN: {
        /* over dims decided at run time: divided by their extents' product, at run time */
        Expr *count = NULL;
        for (int d = 0; d < x->ndim; d++)
            if (red_dims[d] && x->dyn[d])
                count = count ? ir_mul(count, x->dyn[d]) : x->dyn[d];
        if (count) {
            int64_t fixed = 1;
            for (int d = 0; d < x->ndim; d++)
                if (red_dims[d] && !x->dyn[d])
                    fixed *= x->shape[d];
            a = bin(OP_DIV, a, ir_cast(ct, ir_simplify(ir_mul(count, ir_idx(fixed)), NULL)));
        } else
            a = bin(OP_DIV, a, op_lit((double)reduced_count(x, red_dims), ct));
        break;
    }
    case R_L2: a = math1(FN_SQRT, a); break;
    case R_LOGSUM: a = math1(FN_LOG, a); break;
    case R_LOGSUMEXP: a = math1(FN_LOG, a); if (m) a = bin(OP_ADD, m, a); break;
    default: break;
    }
    a = cast(xt, a);
    if (!a)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, s.ndim, s.ax, a) ? 0 : -1;
}

static int reduce_sum(OpCtx *c) { return reduce_op(c, R_SUM); }
static int reduce_mean(OpCtx *c) { return reduce_op(c, R_MEAN); }
static int reduce_max(OpCtx *c) { return reduce_op(c, R_MAX); }
static int reduce_min(OpCtx *c) { return reduce_op(c, R_MIN); }
static int reduce_prod(OpCtx *c) { return reduce_op(c, R_PROD); }
static int reduce_l1(OpCtx *c) { return reduce_op(c, R_L1); }
static int reduce_l2(OpCtx *c) { return reduce_op(c, R_L2); }
static int reduce_logsum(OpCtx *c) { return reduce_op(c, R_LOGSUM); }
static int reduce_logsumexp(OpCtx *c) { return reduce_op(c, R_LOGSUMEXP); }
static int reduce_sumsq(OpCtx *c) { return reduce_op(c, R_SUMSQ); }

/* ---------------------------------------------------------------- ArgMax, ArgMin */

/* The extreme value, then the first (or last) index that holds it. A NaN counts as the
 * extreme, as in numpy. */
static int arg_op(OpCtx *c, int is_max)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x || check_type(c, x, TY_FLOAT | TY_INT))
        return -1;
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int axis;
    if (op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &axis))
        return -1;
    int keep = op_attr_int(c, "keepdims", 1) != 0, last = op_attr_int(c, "select_last_index", 0) != 0;
    int red_dims[KG_MAX_DIMS];
    int64_t ax64 = axis;
    axes_set(c, x, &ax64, 1, red_dims);

    Space s;
    space(x, red_dims, keep, &s);
    Tensor *m = op_emit(c, op_name(c, is_max ? "max" : "min"), s.ndim, s.ax,
                        ir_reduce(is_max ? RED_MAX : RED_MIN, op_read(x, s.xi), s.rax, s.nr));
    if (!m)
        return -1;
    space(x, red_dims, keep, &s);
    Expr *v = op_read(x, s.xi);
    Expr *hit = bin(OP_EQ, v, op_read(m, s.oi));
    if (is_real(x->dtype))
        hit = bin(OP_OR, hit, math1(FN_ISNAN, op_read(x, s.xi)));
    Expr *r = ir_cast(DT_I64, ir_varref(s.rax[0]->var));
    Expr *body = last ? red(RED_MAX, sel(hit, r, ir_int(-1, DT_I64)), s.rax, s.nr)
                      : red(RED_MIN, sel(hit, r, ir_int(INT64_MAX, DT_I64)), s.rax, s.nr);
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, s.ndim, s.ax, body) ? 0 : -1;
}

static int argmax(OpCtx *c) { return arg_op(c, 1); }
static int argmin(OpCtx *c) { return arg_op(c, 0); }

/* ---------------------------------------------------------------- Softmax family */

typedef enum { SM_SOFTMAX, SM_LOGSOFTMAX, SM_HARDMAX } SmKind;

/* Before opset 13 the input is coerced to 2-D at `axis` (the dims from axis on are one);
 * from 13 on only `axis` is reduced. The storage floats (f16, bf16) are computed in f32,
 * the sum of exponentials included, and rounded once by the output's store. */
static int softmax_op(OpCtx *c, SmKind k)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x || (!ir_dtype_is_storage(x->dtype) && check_type(c, x, TY_FLOAT)))
        return -1;
    int old = c->opset < 13;
    int axis, red_dims[KG_MAX_DIMS];
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    if (op_axis(c, op_attr_int(c, "axis", old ? 1 : -1), x->ndim, "axis", &axis))
        return -1;
    if (old)
        tail_set(x->ndim, axis, red_dims);
    else {
        int64_t a = axis;
        axes_set(c, x, &a, 1, red_dims);
    }
    DType t = x->dtype, ct = ir_dtype_is_storage(t) ? DT_F32 : t;
    Tensor *mx = stat(c, "max", x, red_dims, RED_MAX, 0);   /* (exact in any type) */
    if (!mx)
        return -1;

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *ki[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    keep_index(x->ndim, red_dims, idx, ki);
    Expr *body;
    if (k == SM_HARDMAX) {
        /* the first position (row-major over the reduced dims) that holds the max, or a NaN */
        Space s;
        space(x, red_dims, 1, &s);
        Expr *flat = ir_idx(0), *oflat = ir_idx(0);
        for (int d = 0, r = 0; d < x->ndim; d++)
            if (red_dims[d]) {
                flat = bin(OP_ADD, bin(OP_MUL, flat, ir_idx(x->shape[d])), ir_varref(s.rax[r++]->var));
                oflat = bin(OP_ADD, bin(OP_MUL, oflat, ir_idx(x->shape[d])), idx[d]);
            }
        Expr *hit = bin(OP_OR, bin(OP_EQ, op_read(x, s.xi), op_read(mx, s.oi)), math1(FN_ISNAN, op_read(x, s.xi)));
        Tensor *first = op_emit(c, op_name(c, "first"), s.ndim, s.ax,
                                red(RED_MIN, sel(hit, flat, ir_idx(INT32_MAX)), s.rax, s.nr));
        if (!first)
            return -1;
        body = sel(bin(OP_EQ, oflat, op_read(first, ki)), op_lit(1, t), op_lit(0, t));
    } else {
        Space s;
        space(x, red_dims, 1, &s);
        Expr *e = math1(FN_EXP, bin(OP_SUB, cast(ct, op_read(x, s.xi)), cast(ct, op_read(mx, s.oi))));
        Tensor *sum = op_emit(c, op_name(c, "sum"), s.ndim, s.ax, red(RED_SUM, e, s.rax, s.nr));
        if (!sum)
            return -1;
        Expr *sh = bin(OP_SUB, cast(ct, op_read(x, idx)), cast(ct, op_read(mx, ki)));
        if (k == SM_SOFTMAX)
            body = bin(OP_DIV, math1(FN_EXP, sh), op_read(sum, ki));
        else
            body = bin(OP_SUB, sh, math1(FN_LOG, op_read(sum, ki)));
        body = cast(t, body);
    }
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, body) ? 0 : -1;
}

static int softmax(OpCtx *c) { return softmax_op(c, SM_SOFTMAX); }
static int logsoftmax(OpCtx *c) { return softmax_op(c, SM_LOGSOFTMAX); }
static int hardmax(OpCtx *c) { return softmax_op(c, SM_HARDMAX); }

/* ---------------------------------------------------------------- CumSum */

/* out[i] = sum of x[r] for r <= i (r < i exclusive; r >= i, r > i reversed): a guarded
 * reduction over the whole axis, O(n^2) along it. */
static int cumsum(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x");
    if (!x || check_type(c, x, TY_FLOAT | TY_INT))
        return -1;
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int64_t a;
    int64_t n = op_const_ints(c, 1, "axis", &a, 1);
    if (n < 0)
        return -1;
    if (n != 1)
        return ir_fail("%s: axis must hold one value", c->op);
    int axis;
    if (op_axis(c, a, x->ndim, "axis", &axis))
        return -1;
    int excl = op_attr_int(c, "exclusive", 0) != 0, rev = op_attr_int(c, "reverse", 0) != 0;

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    IterVar *r = ir_itervar_new("r0", x->shape[axis], IV_REDUCE);
    for (int d = 0; d < x->ndim; d++)
        xi[d] = d == axis ? ir_varref(r->var) : idx[d];
    Expr *rv = ir_varref(r->var);
    BinOp cmp = rev ? (excl ? OP_GT : OP_GE) : (excl ? OP_LT : OP_LE);
    Expr *body = red(RED_SUM, sel(bin(cmp, rv, idx[axis]), op_read(x, xi), op_lit(0, x->dtype)), &r, 1);
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- TopK */

/* rank[i] = #{m : x[m] beats x[i], or ties with it at a lower index}; output j is the
 * element of rank j. The ranks are a permutation, so each output sums exactly one hit.
 * O(n^2) along the axis; `sorted` = 0 gets the sorted order too. A K known only at run
 * time (not bound): the outputs hold the axis' extent and run to K, a dim computed from
 * values (values.c). */
static int topk(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x || check_type(c, x, TY_FLOAT | TY_INT))
        return -1;
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int64_t k;
    int axis;
    if (op_axis(c, op_attr_int(c, "axis", -1), x->ndim, "axis", &axis))
        return -1;
    int64_t len = x->shape[axis];
    const IrDim *kdim = NULL;   /* K known only at run time: the outputs' extent */
    if (c->opset < 10) {
        k = op_attr_int(c, "k", -1);
    } else if (op_has_input(c, 1) && !op_is_const(c, 1)) {
        if (ir_tensor_numel(c->in[1]) != 1 || (c->in[1]->dtype != DT_I64 && c->in[1]->dtype != DT_I32))
            return ir_fail("%s: K must hold one integer", c->op);
        int64_t one = 1;
        IterVar **kx = op_axes(1, &one);
        Expr *z[KG_MAX_DIMS] = {0};
        for (int d = 0; d < c->in[1]->ndim; d++)
            z[d] = ir_idx(0);
        Tensor *kt = op_emit(c, op_name(c, "k"), 1, kx, ir_cast(DT_I64, op_read(c->in[1], z)));
        if (!kt)
            return -1;
        kdim = op_value_dim(c, kt, 0, len, ir_fmt("%s_dim%d", c->out_names[0] ? c->out_names[0] : c->base, axis));
        k = len;
    } else {
        int64_t n = op_const_ints(c, 1, "K", &k, 1);
        if (n < 0)
            return -1;
        if (n != 1)
            return ir_fail("%s: K must hold one value", c->op);
    }
    if (k < 1 || k > len)
        return ir_fail("%s: K is %lld, outside 1..%lld (the axis length)", c->op, (long long)k, (long long)len);
    int largest = op_attr_int(c, "largest", 1) != 0;

    /* ranks */
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *mi[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    IterVar *m = ir_itervar_new("r0", len, IV_REDUCE);
    for (int d = 0; d < x->ndim; d++)
        mi[d] = d == axis ? ir_varref(m->var) : idx[d];
    Expr *beats = bin(largest ? OP_GT : OP_LT, op_read(x, mi), op_read(x, idx));
    Expr *same = bin(OP_EQ, op_read(x, mi), op_read(x, idx));
    if (is_real(x->dtype)) {
        /* NaNs rank after every number and tie among themselves: the ranks stay a permutation */
        Expr *nan_m = math1(FN_ISNAN, op_read(x, mi)), *nan_i = math1(FN_ISNAN, op_read(x, idx));
        beats = bin(OP_OR, beats, bin(OP_AND, ir_un(UN_NOT, nan_m), nan_i));
        same = bin(OP_OR, same, bin(OP_AND, nan_m, nan_i));
    }
    Expr *tie = bin(OP_AND, same, bin(OP_LT, ir_varref(m->var), idx[axis]));
    Expr *rank_body = red(RED_SUM, sel(bin(OP_OR, beats, tie), ir_idx(1), ir_idx(0)), &m, 1);
    if (!rank_body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    Tensor *rank = op_emit(c, op_name(c, "rank"), x->ndim, ax, rank_body);
    if (!rank)
        return -1;

    int64_t oshape[KG_MAX_DIMS];
    memcpy(oshape, x->shape, sizeof oshape);
    oshape[axis] = k;
    for (int o = 0; o < 2; o++) {
        if (!wants(c, o) && o)
            continue;
        IterVar **oa = op_axes(x->ndim, oshape);
        Expr *oi[KG_MAX_DIMS], *ii[KG_MAX_DIMS];
        op_axis_exprs(oa, x->ndim, oi);
        IterVar *i = ir_itervar_new("r0", len, IV_REDUCE);
        for (int d = 0; d < x->ndim; d++)
            ii[d] = d == axis ? ir_varref(i->var) : oi[d];
        Expr *hit = bin(OP_EQ, op_read(rank, ii), oi[axis]);
        Expr *v = o == 0 ? op_read(x, ii) : ir_cast(DT_I64, ir_varref(i->var));
        Expr *body = red(RED_SUM, sel(hit, v, op_lit(0, v->dtype)), &i, 1);
        if (!body)
            return ir_fail("%s: %s", c->op, ir_errmsg());
        Tensor *t = op_emit_out(c, o, x->ndim, oa, body);
        if (!t)
            return -1;
        if (kdim)
            op_set_value_dim(t, axis, kdim);
    }
    return 0;
}

/* ---------------------------------------------------------------- LayerNormalization, RMSNormalization */

static int layer_norm_op(OpCtx *c, int rms)
{
    Tensor *x = op_input(c, 0, "X"), *scale = op_input(c, 1, "Scale");
    Tensor *bias = !rms && op_has_input(c, 2) ? c->in[2] : NULL;
    if (!x || !scale || check_type(c, x, TY_FLOAT))
        return -1;
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int axis;
    if (op_axis(c, op_attr_int(c, "axis", -1), x->ndim, "axis", &axis))
        return -1;
    if (check_tail_bcast(c, scale, x, axis, "Scale") || (bias && check_tail_bcast(c, bias, x, axis, "B")))
        return -1;
    double eps = op_attr_float(c, "epsilon", 1e-5);
    int red_dims[KG_MAX_DIMS];
    tail_set(x->ndim, axis, red_dims);
    /* the dims before axis may be decided at run time (a sequence's tokens, each normalized
     * on its own); the statistics' count is the normalized dims' constant product */
    for (int d = axis; d < x->ndim; d++)
        if (x->dyn[d])
            return ir_fail("%s: normalizes over dim %d of '%s', decided at run time; kgen normalizes over fixed "
                           "dims only yet (the dims from axis %d on)", c->op, d, x->name, axis);
    DType t = x->dtype;
    Expr *n = op_lit((double)reduced_count(x, red_dims), t);

    Tensor *sum = NULL, *dev2;
    if (rms) {
        dev2 = stat(c, "sumsq", x, red_dims, RED_SUM, 1);
        if (!dev2)
            return -1;
    } else if (moments(c, x, red_dims, &sum, &dev2)) {
        return -1;
    }

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *ki[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    keep_index(x->ndim, red_dims, idx, ki);
    Expr *inv = math1(FN_RSQRT, bin(OP_ADD, bin(OP_DIV, op_read(dev2, ki), n), op_lit(eps, t)));
    Expr *centered = op_read(x, idx);
    if (sum)
        centered = bin(OP_SUB, centered, bin(OP_DIV, op_read(sum, ki), n));
    Expr *y = bin(OP_MUL, bin(OP_MUL, centered, inv), op_read_bcast(scale, idx, x->ndim));
    if (bias)
        y = bin(OP_ADD, y, op_read_bcast(bias, idx, x->ndim));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    if (!op_emit_out(c, 0, x->ndim, ax, y))
        return -1;

    /* Mean and InvStdDev: keepdims-shaped */
    for (int o = 1; o <= 2 && !rms; o++) {
        if (!wants(c, o))
            continue;
        Space s;
        space(x, red_dims, 1, &s);
        Expr *v = o == 1 ? bin(OP_DIV, op_read(sum, s.oi), n)
                         : math1(FN_RSQRT, bin(OP_ADD, bin(OP_DIV, op_read(dev2, s.oi), n), op_lit(eps, t)));
        if (!op_emit_out(c, o, s.ndim, s.ax, v))
            return -1;
    }
    return 0;
}

static int layer_norm(OpCtx *c) { return layer_norm_op(c, 0); }
static int rms_norm(OpCtx *c) { return layer_norm_op(c, 1); }

/* ---------------------------------------------------------------- GroupNormalization */

/* Statistics per (n, group) over the group's channels and all spatial positions. Scale
 * and bias are per group before opset 21 and per channel from 21 on. */
static int group_norm(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X"), *scale = op_input(c, 1, "scale"), *bias = op_input(c, 2, "bias");
    if (!x || !scale || !bias || check_type(c, x, TY_FLOAT))
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: X must have rank 2 or more (N x C x ...)", c->op);
    int64_t g = op_attr_int(c, "num_groups", 0), ch = x->shape[1];
    if (g < 1 || ch % g)
        return ir_fail("%s: num_groups %lld must be positive and divide the %lld channels", c->op, (long long)g,
                       (long long)ch);
    int64_t cg = ch / g, pshape = c->opset < 21 ? g : ch;
    if (check_channel(c, scale, pshape, "scale") || check_channel(c, bias, pshape, "bias"))
        return -1;
    if (scale->dtype != x->dtype || bias->dtype != x->dtype)
        return ir_fail("%s: scale and bias must have X's type %s", c->op, ir_dtype_name(x->dtype));
    double eps = op_attr_float(c, "epsilon", 1e-5);
    DType t = x->dtype;
    int64_t cnt = cg;
    for (int d = 2; d < x->ndim; d++)
        cnt *= x->shape[d];
    Expr *n = op_lit((double)cnt, t);

    /* the two passes over [N, G] */
    Tensor *st[2] = {NULL, NULL};
    for (int p = 0; p < 2; p++) {
        int64_t sshape[2] = {x->shape[0], g};
        IterVar **ax = op_axes(2, sshape);
        IterVar *rax[KG_MAX_DIMS];
        Expr *xi[KG_MAX_DIMS];
        rax[0] = ir_itervar_new("r0", cg, IV_REDUCE);
        xi[0] = ir_varref(ax[0]->var);
        xi[1] = bin(OP_ADD, bin(OP_MUL, ir_varref(ax[1]->var), ir_idx(cg)), ir_varref(rax[0]->var));
        for (int d = 2; d < x->ndim; d++) {
            rax[d - 1] = ir_itervar_new(ir_fmt("r%d", d - 1), x->shape[d], IV_REDUCE);
            xi[d] = ir_varref(rax[d - 1]->var);
        }
        Expr *v = op_read(x, xi);
        if (p == 1) {
            Expr *si[2] = {ir_varref(ax[0]->var), ir_varref(ax[1]->var)};
            v = bin(OP_SUB, v, bin(OP_DIV, op_read(st[0], si), n));
            v = bin(OP_MUL, v, v);
        }
        st[p] = op_emit(c, op_name(c, p ? "dev2" : "sum"), 2, ax, red(RED_SUM, v, rax, x->ndim - 1));
        if (!st[p])
            return -1;
    }

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *grp = bin(OP_FLOORDIV, idx[1], ir_idx(cg));
    Expr *si[2] = {idx[0], grp};
    Expr *pi[1] = {c->opset < 21 ? grp : idx[1]};
    Expr *y = bin(OP_SUB, op_read(x, idx), bin(OP_DIV, op_read(st[0], si), n));
    y = bin(OP_MUL, y, math1(FN_RSQRT, bin(OP_ADD, bin(OP_DIV, op_read(st[1], si), n), op_lit(eps, t))));
    y = bin(OP_ADD, bin(OP_MUL, y, op_read(scale, pi)), op_read(bias, pi));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
}

/* ---------------------------------------------------------------- InstanceNormalization, MeanVarianceNormalization */

static int instance_norm(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input"), *scale = op_input(c, 1, "scale"), *bias = op_input(c, 2, "B");
    if (!x || !scale || !bias || check_type(c, x, TY_FLOAT))
        return -1;
    if (x->ndim < 3)
        return ir_fail("%s: the input must have rank 3 or more (N x C x D1 ...)", c->op);
    if (check_channel(c, scale, x->shape[1], "scale") || check_channel(c, bias, x->shape[1], "B"))
        return -1;
    if (scale->dtype != x->dtype || bias->dtype != x->dtype)
        return ir_fail("%s: scale and B must have the input's type %s", c->op, ir_dtype_name(x->dtype));
    double eps = op_attr_float(c, "epsilon", 1e-5);
    int red_dims[KG_MAX_DIMS];
    tail_set(x->ndim, 2, red_dims);
    Tensor *sum, *dev2;
    if (moments(c, x, red_dims, &sum, &dev2))
        return -1;
    DType t = x->dtype;
    Expr *n = op_lit((double)reduced_count(x, red_dims), t);
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *ki[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    keep_index(x->ndim, red_dims, idx, ki);
    Expr *pi[1] = {idx[1]};
    Expr *y = bin(OP_SUB, op_read(x, idx), bin(OP_DIV, op_read(sum, ki), n));
    y = bin(OP_MUL, y, math1(FN_RSQRT, bin(OP_ADD, bin(OP_DIV, op_read(dev2, ki), n), op_lit(eps, t))));
    y = bin(OP_ADD, bin(OP_MUL, y, op_read(scale, pi)), op_read(bias, pi));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
}

/* (x - mean) / (std + 1e-9) over `axes` (default [0, 2, 3]). */
static int mvn(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x || check_type(c, x, TY_FLOAT))
        return -1;
    int64_t axes[KG_MAX_DIMS] = {0, 2, 3};
    int na = op_attr_ints(c, "axes", axes, KG_MAX_DIMS);
    if (na < 0)
        na = 3;
    int red_dims[KG_MAX_DIMS];
    if (axes_set(c, x, axes, na, red_dims))
        return -1;
    if (na == 0) {
        /* nothing reduced: each element is its own mean */
        IterVar **ax = op_axes(x->ndim, x->shape);
        return op_emit_out(c, 0, x->ndim, ax, op_lit(0, x->dtype)) ? 0 : -1;
    }
    Tensor *sum, *dev2;
    if (moments(c, x, red_dims, &sum, &dev2))
        return -1;
    DType t = x->dtype;
    Expr *n = op_lit((double)reduced_count(x, red_dims), t);
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *ki[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    keep_index(x->ndim, red_dims, idx, ki);
    Expr *y = bin(OP_SUB, op_read(x, idx), bin(OP_DIV, op_read(sum, ki), n));
    y = bin(OP_DIV, y, bin(OP_ADD, math1(FN_SQRT, bin(OP_DIV, op_read(dev2, ki), n)), op_lit(1e-9, t)));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
}

/* ---------------------------------------------------------------- BatchNormalization */

/* With scale, B, mean and var constant (f32 or f64): *scale = scale / sqrt(var + eps) and
 * *bias = B - mean * that, new constant tensors, computed in double; 1 when so, 0 when the
 * statistics are not constant (or the type is another), -1 after ir_fail(). */
static int fold_affine(OpCtx *c, const Tensor *x, int64_t ch, double eps, Tensor **scale, Tensor **bias)
{
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return 0;
    for (int i = 1; i <= 4; i++)
        if (!op_is_const(c, i))
            return 0;
    const void *p[4] = {c->in[1]->data, c->in[2]->data, c->in[3]->data, c->in[4]->data};
    int f32 = x->dtype == DT_F32;
    size_t es = f32 ? sizeof(float) : sizeof(double);
    unsigned char *ms = ir_alloc(es * (size_t)ch), *bs = ir_alloc(es * (size_t)ch);
    for (int64_t k = 0; k < ch; k++) {
        double v[4];
        for (int i = 0; i < 4; i++)
            v[i] = f32 ? (double)((const float *)p[i])[k] : ((const double *)p[i])[k];
        double m = v[0] / sqrt(v[3] + eps), b = v[1] - v[2] * m;
        if (f32) {
            ((float *)ms)[k] = (float)m;
            ((float *)bs)[k] = (float)b;
        } else {
            ((double *)ms)[k] = m;
            ((double *)bs)[k] = b;
        }
    }
    *scale = op_const_tensor(c, "scale", x->dtype, 1, &ch, ms);
    *bias = op_const_tensor(c, "shift", x->dtype, 1, &ch, bs);
    return *scale && *bias ? 1 : -1;
}

/* Inference: y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + B[c]. Training mode
 * (opset 14+) normalizes with the batch statistics and also returns the running mean and
 * variance: input * momentum + batch * (1 - momentum), the variance biased. */
static int batch_norm(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X"), *scale = op_input(c, 1, "scale"), *bias = op_input(c, 2, "B");
    Tensor *mean = op_input(c, 3, "input_mean"), *var = op_input(c, 4, "input_var");
    if (!x || !scale || !bias || !mean || !var || check_type(c, x, TY_FLOAT))
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: X must have rank 2 or more (N x C x ...)", c->op);
    int64_t ch = x->shape[1];
    Tensor *ps[4] = {scale, bias, mean, var};
    const char *pn[4] = {"scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 4; i++) {
        if (check_channel(c, ps[i], ch, pn[i]))
            return -1;
        if (ps[i]->dtype != x->dtype)
            return ir_fail("%s: %s has type %s, X has %s (mixed types are not supported)", c->op, pn[i],
                           ir_dtype_name(ps[i]->dtype), ir_dtype_name(x->dtype));
    }
    double eps = op_attr_float(c, "epsilon", 1e-5);
    int training = c->opset >= 14 && op_attr_int(c, "training_mode", 0);
    if (!training && c->opset < 14 && (wants(c, 1) || wants(c, 2) || wants(c, 3) || wants(c, 4)))
        return ir_fail("%s: training outputs (mean, var, saved statistics) before opset 14 are not supported",
                       c->op);
    DType t = x->dtype;
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *pi[1] = {idx[1]};
    Expr *y;
    int folded = training ? 0 : fold_affine(c, x, ch, eps, &scale, &bias);
    if (folded < 0)
        return -1;
    if (folded) {
        /* constant statistics: y = x * scale' + B' with the per-channel factors computed
         * here (a BatchNormalization no Conv absorbs: DenseNet's BN-ReLU before each conv) */
        y = bin(OP_ADD, bin(OP_MUL, op_read(x, idx), op_read(scale, pi)), op_read(bias, pi));
        if (!y)
            return ir_fail("%s: %s", c->op, ir_errmsg());
        return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
    }
    if (!training) {
        y = bin(OP_SUB, op_read(x, idx), op_read(mean, pi));
        y = bin(OP_MUL, y, math1(FN_RSQRT, bin(OP_ADD, op_read(var, pi), op_lit(eps, t))));
    } else {
        int red_dims[KG_MAX_DIMS];
        tail_set(x->ndim, 0, red_dims);
        red_dims[1] = 0;
        Tensor *sum, *dev2;
        if (moments(c, x, red_dims, &sum, &dev2))
            return -1;
        Expr *n = op_lit((double)reduced_count(x, red_dims), t), *ki[KG_MAX_DIMS];
        keep_index(x->ndim, red_dims, idx, ki);
        y = bin(OP_SUB, op_read(x, idx), bin(OP_DIV, op_read(sum, ki), n));
        y = bin(OP_MUL, y, math1(FN_RSQRT, bin(OP_ADD, bin(OP_DIV, op_read(dev2, ki), n), op_lit(eps, t))));
        double mom = op_attr_float(c, "momentum", 0.9);
        for (int o = 1; o <= 2; o++) {
            if (!wants(c, o))
                continue;
            IterVar **ca = op_axes(1, &ch);
            Expr *ci[1] = {ir_varref(ca[0]->var)}, *si[KG_MAX_DIMS];
            for (int d = 0; d < x->ndim; d++)
                si[d] = d == 1 ? ci[0] : ir_idx(0);
            Expr *batch = bin(OP_DIV, op_read(o == 1 ? sum : dev2, si), n);
            Expr *run = bin(OP_ADD, bin(OP_MUL, op_read(o == 1 ? mean : var, ci), op_lit(mom, t)),
                            bin(OP_MUL, batch, op_lit(1 - mom, t)));
            if (!op_emit_out(c, o, 1, ca, run))
                return -1;
        }
    }
    y = bin(OP_ADD, bin(OP_MUL, y, op_read(scale, pi)), op_read(bias, pi));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
}

/* ---------------------------------------------------------------- LRN */

/* y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta; the window
 * runs from c - floor((size-1)/2) to c + ceil((size-1)/2), clipped to the channels. */
static int lrn(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x || check_type(c, x, TY_FLOAT))
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: X must have rank 2 or more (N x C x ...)", c->op);
    int64_t size = op_attr_int(c, "size", 0);
    if (size < 1)
        return ir_fail("%s: size must be positive, got %lld", c->op, (long long)size);
    double alpha = op_attr_float(c, "alpha", 1e-4), beta = op_attr_float(c, "beta", 0.75);
    double bias = op_attr_float(c, "bias", 1.0);
    DType t = x->dtype;
    int64_t lo = (size - 1) / 2, ch = x->shape[1];

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS], *wi[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    IterVar *r = ir_itervar_new("r0", size, IV_REDUCE);
    for (int d = 0; d < x->ndim; d++)
        wi[d] = idx[d];
    wi[1] = bin(OP_ADD, bin(OP_SUB, idx[1], ir_idx(lo)), ir_varref(r->var));
    Expr *inside = bin(OP_AND, bin(OP_GE, wi[1], ir_idx(0)), bin(OP_LT, wi[1], ir_idx(ch)));
    Expr *sq = bin(OP_MUL, op_read(x, wi), op_read(x, wi));
    Tensor *ss = op_emit(c, op_name(c, "sqsum"), x->ndim, ax, red(RED_SUM, sel(inside, sq, op_lit(0, t)), &r, 1));
    if (!ss)
        return -1;

    ax = op_axes(x->ndim, x->shape);
    op_axis_exprs(ax, x->ndim, idx);
    Expr *den = bin(OP_ADD, op_lit(bias, t), bin(OP_MUL, op_lit(alpha / (double)size, t), op_read(ss, idx)));
    Expr *pw[2] = {den, op_lit(beta, t)};
    Expr *y = bin(OP_DIV, op_read(x, idx), ir_mathcall(FN_POW, pw, 2));
    if (!y)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, y) ? 0 : -1;
}

const OpDef op_defs_reduce[] = {
    {"ReduceSum", reduce_sum},
    {"ReduceMean", reduce_mean},
    {"ReduceMax", reduce_max},
    {"ReduceMin", reduce_min},
    {"ReduceProd", reduce_prod},
    {"ReduceL1", reduce_l1},
    {"ReduceL2", reduce_l2},
    {"ReduceLogSum", reduce_logsum},
    {"ReduceLogSumExp", reduce_logsumexp},
    {"ReduceSumSquare", reduce_sumsq},
    {"ArgMax", argmax},
    {"ArgMin", argmin},
    {"Softmax", softmax},
    {"LogSoftmax", logsoftmax},
    {"Hardmax", hardmax},
    {"CumSum", cumsum},
    {"TopK", topk},
    {"LayerNormalization", layer_norm},
    {"RMSNormalization", rms_norm},
    {"GroupNormalization", group_norm},
    {"InstanceNormalization", instance_norm},
    {"BatchNormalization", batch_norm},
    {"MeanVarianceNormalization", mvn},
    {"LRN", lrn},
    {NULL, NULL},
};
