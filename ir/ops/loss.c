/* loss.c - ONNX loss operators: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Both take log-probabilities [N, C, d1, ...] and a target of class indices [N, d1, ...]:
 * each target element gives minus the log-probability of its class, times that class's
 * weight when a weight input [C] is given, then the reduction: none (the per-element
 * losses), sum, or mean (the sum divided by the sum of the gathered weights; by the count
 * without weights). An element whose target is ignore_index adds 0 to the sum and its
 * weight 0 to the mean's denominator. SoftmaxCrossEntropyLoss first takes the LogSoftmax of
 * its scores over the class axis (1), which is also its optional second output. */
#include "ops.h"

#include <string.h>

/* ---------------------------------------------------------------- helpers */

typedef enum { LR_NONE, LR_SUM, LR_MEAN } LossReduction;

/* What both operators gather from, checked. */
typedef struct {
    Tensor *logp;           /* [N, C, d1, ...] */
    Tensor *target;         /* [N, d1, ...], i32 or i64 */
    Tensor *weight;         /* [C], or NULL */
    int has_ignore;
    int64_t ignore;         /* ignore_index, when has_ignore */
    LossReduction red;
} Loss;

static Expr *bin(BinOp op, Expr *a, Expr *b) { return ir_binary(op, a, b); }
static Expr *sel(Expr *c, Expr *t, Expr *f) { return c && t && f ? ir_select(c, t, f) : NULL; }

static int get_reduction(OpCtx *c, LossReduction *out)
{
    const char *s = op_attr_str(c, "reduction", "mean");
    static const char *const names[] = {"none", "sum", "mean"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (LossReduction)i;
            return 0;
        }
    return ir_fail("%s: unknown reduction '%s' (none, sum or mean)", c->op, s);
}

/* The inputs (x: scores or log-probabilities, checked as l->logp), the weight input and the
 * attributes. */
static int get_loss(OpCtx *c, Tensor *x, Loss *l)
{
    memset(l, 0, sizeof *l);
    Tensor *t = op_input(c, 1, "target");
    if (!x || !t)
        return -1;
    if (x->dtype != DT_F32 && x->dtype != DT_F64)
        return ir_fail("%s: input type %s is not supported (f32 or f64)", c->op, ir_dtype_name(x->dtype));
    if (t->dtype != DT_I32 && t->dtype != DT_I64)
        return ir_fail("%s: target has type %s (i32 or i64 expected)", c->op, ir_dtype_name(t->dtype));
    if (x->ndim < 2)
        return ir_fail("%s: the input must have rank 2 or more ([N, C, d1, ...]), got rank %d", c->op, x->ndim);
    if (t->ndim != x->ndim - 1)
        return ir_fail("%s: target must have rank %d (the input's less the class axis), got %d", c->op,
                       x->ndim - 1, t->ndim);
    for (int d = 0; d < t->ndim; d++) {
        int64_t want = x->shape[d ? d + 1 : 0];
        if (t->shape[d] != want)
            return ir_fail("%s: target dimension %d is %lld, the input's is %lld", c->op, d,
                           (long long)t->shape[d], (long long)want);
    }
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] < 1)
            return ir_fail("%s: input dimension %d is %lld; empty tensors are not supported", c->op, d,
                           (long long)x->shape[d]);
    Tensor *w = op_has_input(c, 2) ? c->in[2] : NULL;
    if (w && (w->ndim != 1 || w->shape[0] != x->shape[1]))
        return ir_fail("%s: weight must have shape [%lld] (one per class)", c->op, (long long)x->shape[1]);
    if (w && w->dtype != x->dtype)
        return ir_fail("%s: weight has type %s, the input %s", c->op, ir_dtype_name(w->dtype),
                       ir_dtype_name(x->dtype));
    const OpAttr *ii = op_attr(c, "ignore_index");
    *l = (Loss){x, t, w, ii != NULL, ii ? ii->i : 0, LR_MEAN};
    return get_reduction(c, &l->red);
}

/* Is the target element tv the ignored class? NULL when nothing is ignored. Compared in
 * i64, so that an ignore_index outside i32 never matches an i32 target by wrapping. */
static Expr *is_ignored(const Loss *l, Expr *tv)
{
    if (!l->has_ignore)
        return NULL;
    Expr *v = tv->dtype == DT_I64 ? tv : ir_cast(DT_I64, tv);
    return ir_bin(OP_EQ, v, ir_int(l->ignore, DT_I64));
}

/* The class a target element reads, clamped to 0..C-1: the ignored class (often -1 or
 * past C) and a target out of range (undefined in ONNX) must not read outside. */
static Expr *class_index(Expr *tv, int64_t nclass)
{
    Expr *k = ir_bin(OP_MIN, ir_bin(OP_MAX, tv, ir_int(0, tv->dtype)), ir_int(nclass - 1, tv->dtype));
    return ir_cast(DT_INDEX, k);
}

/* The weight of the target element at ti: weight[class] (1 without weights), 0 where the
 * element is ignored. */
static Expr *elem_weight(const Loss *l, Expr **ti)
{
    DType t = l->logp->dtype;
    Expr *tv = op_read(l->target, ti), *w = op_lit(1, t);
    if (l->weight) {
        Expr *k = class_index(tv, l->logp->shape[1]);
        w = op_read(l->weight, &k);
    }
    Expr *ign = is_ignored(l, tv);
    return ign ? sel(ign, op_lit(0, t), w) : w;
}

/* The loss of the target element at ti: -logp[n, class, d1, ...] * its weight, 0 where
 * ignored. */
static Expr *elem_loss(const Loss *l, Expr **ti)
{
    DType t = l->logp->dtype;
    Expr *tv = op_read(l->target, ti), *xi[KG_MAX_DIMS];
    xi[0] = ti[0];
    xi[1] = class_index(tv, l->logp->shape[1]);
    for (int d = 2; d < l->logp->ndim; d++)
        xi[d] = ti[d - 1];
    Expr *v = ir_un(UN_NEG, op_read(l->logp, xi));
    if (l->weight) {
        Expr *k = class_index(tv, l->logp->shape[1]);
        v = bin(OP_MUL, v, op_read(l->weight, &k));
    }
    Expr *ign = is_ignored(l, tv);
    return ign ? sel(ign, op_lit(0, t), v) : v;
}

/* A scalar: the sum over every target element of f (elem_loss or elem_weight). */
static Tensor *sum_all(OpCtx *c, const Loss *l, const char *what, Expr *(*f)(const Loss *, Expr **))
{
    const Tensor *t = l->target;
    IterVar *rax[KG_MAX_DIMS];
    Expr *ti[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        rax[d] = ir_itervar_new(ir_fmt("r%d", d), t->shape[d], IV_REDUCE);
        ti[d] = ir_varref(rax[d]->var);
    }
    Expr *v = f(l, ti);
    if (!v) {
        ir_fail("%s: %s", c->op, ir_errmsg());
        return NULL;
    }
    return op_emit(c, op_name(c, what), 0, op_axes(0, NULL), ir_reduce(RED_SUM, v, rax, t->ndim));
}

/* Output 0: the per-element losses, their sum or their weighted mean. */
static int emit_loss(OpCtx *c, const Loss *l)
{
    if (l->red == LR_NONE) {
        const Tensor *t = l->target;
        IterVar **ax = op_axes(t->ndim, t->shape);
        Expr *ti[KG_MAX_DIMS];
        op_axis_exprs(ax, t->ndim, ti);
        Expr *v = elem_loss(l, ti);
        if (!v)
            return ir_fail("%s: %s", c->op, ir_errmsg());
        return op_emit_out(c, 0, t->ndim, ax, v) ? 0 : -1;
    }
    Tensor *sum = sum_all(c, l, "loss_sum", elem_loss);
    if (!sum)
        return -1;
    Expr *scalar[1] = {NULL};   /* a rank-0 tensor's (empty) index */
    Expr *v = op_read(sum, scalar);
    if (l->red == LR_MEAN) {
        Expr *den;
        if (l->weight || l->has_ignore) {
            Tensor *wsum = sum_all(c, l, "weight_sum", elem_weight);
            if (!wsum)
                return -1;
            den = op_read(wsum, scalar);
        } else {
            den = op_lit((double)ir_tensor_numel(l->target), l->logp->dtype);
        }
        v = bin(OP_DIV, v, den);
    }
    if (!v)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, 0, op_axes(0, NULL), v) ? 0 : -1;
}

/* ---------------------------------------------------------------- NegativeLogLikelihoodLoss */

/* Opsets 12, 13 and 22 differ only in the types they list. */
static int nll_loss(OpCtx *c)
{
    Loss l;
    if (get_loss(c, op_input(c, 0, "input"), &l))
        return -1;
    return emit_loss(c, &l);
}

/* ---------------------------------------------------------------- SoftmaxCrossEntropyLoss */

/* A statistic of x over the class axis, shaped [N, 1, d1, ...]: the max of x, or, given that
 * max, the sum of exp(x - max). */
static Tensor *class_stat(OpCtx *c, Tensor *x, Tensor *mx)
{
    int r = x->ndim;
    int64_t s[KG_MAX_DIMS];
    memcpy(s, x->shape, sizeof *s * (size_t)r);
    s[1] = 1;
    IterVar **ax = op_axes(r, s);
    Expr *oi[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, r, oi);
    IterVar *rc = ir_itervar_new("r0", x->shape[1], IV_REDUCE);
    memcpy(xi, oi, sizeof *xi * (size_t)r);
    xi[1] = ir_varref(rc->var);
    Expr *v = op_read(x, xi);
    if (mx) {
        Expr *e = bin(OP_SUB, v, op_read(mx, oi));
        v = ir_mathcall(FN_EXP, &e, 1);
    }
    if (!v) {
        ir_fail("%s: %s", c->op, ir_errmsg());
        return NULL;
    }
    return op_emit(c, op_name(c, mx ? "exp_sum" : "max"), r, ax, ir_reduce(mx ? RED_SUM : RED_MAX, v, &rc, 1));
}

/* LogSoftmax of x over axis 1 in the stable form x - max - log(sum(exp(x - max))): output 1
 * when the node names it, else an intermediate. */
static Tensor *log_softmax(OpCtx *c, Tensor *x)
{
    Tensor *mx = class_stat(c, x, NULL);
    Tensor *sum = mx ? class_stat(c, x, mx) : NULL;
    if (!sum)
        return NULL;
    int r = x->ndim;
    IterVar **ax = op_axes(r, x->shape);
    Expr *xi[KG_MAX_DIMS], *ki[KG_MAX_DIMS];
    op_axis_exprs(ax, r, xi);
    memcpy(ki, xi, sizeof *ki * (size_t)r);
    ki[1] = ir_idx(0);
    Expr *s = op_read(sum, ki);
    Expr *v = bin(OP_SUB, bin(OP_SUB, op_read(x, xi), op_read(mx, ki)), ir_mathcall(FN_LOG, &s, 1));
    if (!v) {
        ir_fail("%s: %s", c->op, ir_errmsg());
        return NULL;
    }
    if (c->nout > 1 && c->out_names[1])
        return op_emit_out(c, 1, r, ax, v);
    return op_emit(c, op_name(c, "log_prob"), r, ax, v);
}

/* Opsets 12 and 13 differ only in the types they list. */
static int softmax_cross_entropy_loss(OpCtx *c)
{
    Loss l;
    Tensor *x = op_input(c, 0, "scores");
    if (get_loss(c, x, &l))
        return -1;
    if (!(l.logp = log_softmax(c, x)))
        return -1;
    return emit_loss(c, &l);
}

const OpDef op_defs_loss[] = {
    {"NegativeLogLikelihoodLoss", nll_loss},
    {"SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss},
    {NULL, NULL},
};
