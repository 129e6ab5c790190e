/* dyn.c - run-time dims carried from the tensors a compute reads to its own axes.
 *
 * A dim decided at run time (Tensor.dyn) has its bound as the static extent. A compute
 * whose axis (spatial or reduce) is the very index of a run-time dim of a tensor it reads,
 * over that dim's whole bound, runs over that dim's run-time extent: out[i] = f(x[i]),
 * a sum over k of x[k], a transpose. ir_dyn_infer gives such axes the extent (IterVar.dyn,
 * and the compute's Tensor.dyn). Anything else that meets a run-time dim is a question
 * only the operator can answer (a window that slides over it, an average over it, a flat
 * index through it): a strict inference refuses it, so an operator that does not know run-
 * time dims can never compute at the bound by mistake; an operator that does (Conv, the
 * pools) sets its axes itself and asks for the lenient inference.
 *
 * Element counts over run-time dims are products of extents (IrProd), which compare and
 * divide as products whatever the order of their factors (a Reshape's view and its -1), and
 * an index that takes such a product apart (m / W of an axis m of extent H * W) is shown
 * below a product of extents where intervals over the bounds cannot show it in range.
 */
#include "ir.h"

#include <string.h>

enum { MAX_AXES = 64 };

typedef struct {
    Program *p;
    Tensor *t;
    IterVar *axes[MAX_AXES];   /* the compute's spatial axes, then its reduce axes */
    int naxes;
    int strict;
    int pass;                  /* 0: give axes extents; 1: check */
    IterVar *set[MAX_AXES];    /* the axes whose extents the builder gave */
    int nset;
    int failed;
} Infer;

static IterVar *axis_of(const Infer *in, const Expr *e)
{
    if (e->kind != E_VAR)
        return NULL;
    for (int i = 0; i < in->naxes; i++)
        if (in->axes[i]->var == e->u.var)
            return in->axes[i];
    return NULL;
}

/* Did the builder give iv its run-time extent? An operator that knows run-time dims (the
 * lenient inference) is then the authority on it: Pad's axis padded by amounts computed
 * from the extent reads the input at the axis's own index, over an extent that differs. */
static int builder_set(const Infer *in, const IterVar *iv)
{
    for (int i = 0; i < in->nset; i++)
        if (in->set[i] == iv)
            return 1;
    return 0;
}

static const char *dim_text(const Expr *e)
{
    if (e->kind == E_VAR)
        return ir_fmt("'%s'", e->u.var->name);
    return "derived from run-time dims";
}

static void access(Infer *in, const Expr *e)
{
    const Tensor *x = e->u.access.t;
    for (int d = 0; d < e->u.access.n && !in->failed; d++) {
        const Expr *ix = e->u.access.idx[d];
        IterVar *iv = axis_of(in, ix);
        if (in->pass == 0) {
            if (iv && x->dyn[d] && iv->extent == x->shape[d] && !(!in->strict && builder_set(in, iv))) {
                if (!iv->dyn)
                    iv->dyn = x->dyn[d];
                else if (!ir_expr_equal(iv->dyn, x->dyn[d]))
                    ir_program_add_check(in->p, ir_bin(OP_EQ, iv->dyn, x->dyn[d]),
                                         ir_fmt("'%s': dims of %s and %s must agree", in->t->name,
                                                x->name, in->t->name));
            }
            continue;
        }
        if (!in->strict)
            continue;
        if (x->dyn[d] && !(iv && iv->dyn)) {
            if (iv && iv->extent < x->shape[d]) {
                /* a part of the dim from its start: the run-time extent must hold it */
                ir_program_add_check(in->p, ir_bin(OP_GE, x->dyn[d], ir_idx(iv->extent)),
                                     ir_fmt("'%s' reads %lld positions of dim %d of '%s'", in->t->name,
                                            (long long)iv->extent, d, x->name));
                continue;
            }
            in->failed = ir_fail("'%s' reads dim %d of '%s', decided at run time (%s), in a way kgen cannot "
                                 "follow yet (only as a whole, position for position)",
                                 in->t->name, d, x->name, dim_text(x->dyn[d]));
        } else if (!x->dyn[d] && iv && iv->dyn && x->shape[d] != 1) {
            in->failed = ir_fail("'%s': dim %d of '%s' is %lld, fixed, where it meets a dim decided at run time "
                                 "(%s)", in->t->name, d, x->name, (long long)x->shape[d], dim_text(iv->dyn));
        }
    }
}

static void walk(Infer *in, const Expr *e)
{
    if (!e || in->failed)
        return;
    switch (e->kind) {
    case E_BIN: walk(in, e->u.bin.a); walk(in, e->u.bin.b); break;
    case E_UN: walk(in, e->u.un.a); break;
    case E_CAST:
    case E_BITCAST: walk(in, e->u.cast.a); break;
    case E_SELECT: walk(in, e->u.sel.cond); walk(in, e->u.sel.t); walk(in, e->u.sel.f); break;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            walk(in, e->u.call.args[i]);
        break;
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            walk(in, e->u.access.idx[i]);
        access(in, e);
        break;
    case E_REDUCE:
        for (int i = 0; i < e->u.reduce.naxes && in->pass == 0; i++)
            if (in->naxes < MAX_AXES)
                in->axes[in->naxes++] = e->u.reduce.axes[i];
        walk(in, e->u.reduce.body);
        break;
    default: break;
    }
}

int ir_dyn_infer(Program *p, Tensor *t, int strict)
{
    if (t->kind != T_COMPUTE && t->kind != T_SCAN)
        return 0;
    Infer in = {.p = p, .t = t, .strict = strict};
    for (int i = 0; i < t->ndim; i++) {
        in.axes[in.naxes++] = t->axes[i];
        if (t->axes[i]->dyn)
            in.set[in.nset++] = t->axes[i];
    }
    for (in.pass = 0; in.pass < 2 && !in.failed; in.pass++) {
        walk(&in, t->body);
        walk(&in, t->init);
        walk(&in, t->update);
    }
    if (in.failed)
        return -1;
    for (int i = 0; i < t->ndim; i++)
        if (t->axes[i]->dyn)
            t->dyn[i] = t->axes[i]->dyn;
    return 0;
}

int ir_dims_fold(const Program *p, const int64_t *values, const Expr *e, int64_t *out)
{
    int n = p->dims.n;
    Var **vars = ir_alloc(sizeof *vars * (size_t)(n ? n : 1));
    Expr **vals = ir_alloc(sizeof *vals * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        vars[i] = ((IrDim *)p->dims.items[i])->var;
        vals[i] = ir_idx(values[i]);
    }
    return ir_expr_is_const(ir_simplify(ir_subst((Expr *)e, vars, vals, n), NULL), out);
}

int ir_dims_bounds(const Program *p, const Expr *e, int64_t *lo, int64_t *hi)
{
    enum { MAX_POINTS = 4096 };
    int n = p->dims.n;
    int64_t points = 1;
    int64_t *v = ir_alloc(sizeof *v * (size_t)(n ? n : 1));
    int *used = ir_alloc(sizeof *used * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        const IrDim *d = p->dims.items[i];
        v[i] = d->lo;
        used[i] = ir_expr_uses_var(e, d->var);
        if (used[i] && points <= MAX_POINTS)
            points *= d->hi - d->lo + 1;
    }
    if (points > MAX_POINTS)
        return ir_const_bounds(e, NULL, lo, hi);
    /* every combination of the dims e uses, the first one fastest */
    for (int64_t k = 0; k < points; k++) {
        int64_t x;
        if (!ir_dims_fold(p, v, e, &x))
            return ir_const_bounds(e, NULL, lo, hi);
        if (k == 0 || x < *lo)
            *lo = x;
        if (k == 0 || x > *hi)
            *hi = x;
        for (int i = 0; i < n; i++) {
            const IrDim *d = p->dims.items[i];
            if (!used[i])
                continue;
            if (v[i] < d->hi) {
                v[i]++;
                break;
            }
            v[i] = d->lo;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- products of extents */

IrProd ir_prod_one(void)
{
    IrProd p;
    memset(&p, 0, sizeof p);
    p.coef = 1;
    p.ok = 1;
    return p;
}

static void factor(IrProd *p, Expr *e)
{
    int64_t v;
    if (ir_expr_is_const(e, &v)) {
        if (v < 0 || (v && p->coef > ((int64_t)1 << 40) / v))
            p->ok = 0;
        else
            p->coef *= v;
    } else if (e->kind == E_BIN && e->u.bin.op == OP_MUL) {
        factor(p, e->u.bin.a);
        factor(p, e->u.bin.b);
    } else if (p->n == IR_MAX_FACTORS) {
        p->ok = 0;
    } else {
        p->atom[p->n++] = e;
    }
}

void ir_prod_mul(IrProd *p, Expr *e) { factor(p, ir_simplify(e, NULL)); }

int ir_prod_div(const IrProd *a, const IrProd *b, IrProd *q)
{
    if (!a->ok || !b->ok || b->coef == 0 || a->coef % b->coef)
        return 0;
    int used[IR_MAX_FACTORS] = {0};
    for (int j = 0; j < b->n; j++) {
        int i = 0;
        while (i < a->n && (used[i] || !ir_expr_equal(a->atom[i], b->atom[j])))
            i++;
        if (i == a->n)
            return 0;
        used[i] = 1;
    }
    *q = ir_prod_one();
    q->coef = a->coef / b->coef;
    for (int i = 0; i < a->n; i++)
        if (!used[i])
            q->atom[q->n++] = a->atom[i];
    return 1;
}

int ir_prod_equal(const IrProd *a, const IrProd *b)
{
    IrProd q;
    return a->n == b->n && ir_prod_div(a, b, &q) && q.coef == 1;
}

Expr *ir_prod_expr(const IrProd *p)
{
    Expr *e = NULL;
    for (int i = 0; i < p->n; i++)
        e = e ? ir_mul(e, p->atom[i]) : p->atom[i];
    return !e ? ir_idx(p->coef) : p->coef != 1 ? ir_mul(e, ir_idx(p->coef)) : e;
}

static int is_mul_by(const Expr *e, const IrProd *by, const Expr **other)
{
    if (e->kind != E_BIN || e->u.bin.op != OP_MUL)
        return 0;
    for (int s = 0; s < 2; s++) {
        IrProd f = ir_prod_one();
        ir_prod_mul(&f, s ? e->u.bin.a : e->u.bin.b);
        if (ir_prod_equal(&f, by)) {
            *other = s ? e->u.bin.b : e->u.bin.a;
            return 1;
        }
    }
    return 0;
}

int ir_dyn_index_below(const Tensor *t, const Expr *e, const RangeMap *m, IrProd *below)
{
    int64_t lo, hi;
    *below = ir_prod_one();
    switch (e->kind) {
    case E_INT:
        if (e->u.ival < 0)
            return 0;
        below->coef = e->u.ival + 1;
        return 1;
    case E_VAR:
        for (int d = 0; d < t->ndim; d++)
            if (t->axes[d] && t->axes[d]->var == e->u.var) {
                ir_prod_mul(below, t->axes[d]->dyn ? t->axes[d]->dyn : ir_idx(t->axes[d]->extent));
                return below->ok;
            }
        if (!ir_const_bounds(e, m, &lo, &hi) || lo < 0 || e->u.var->is_dim)
            return 0;
        below->coef = hi + 1;
        return 1;
    case E_BIN: break;
    default: return 0;
    }
    Expr *a = e->u.bin.a, *b = e->u.bin.b;
    IrProd ua, ub;
    switch (e->u.bin.op) {
    case OP_ADD:
        /* p * E + o with o below E: below p's times E (a flat index over extents) */
        for (int s = 0; s < 2; s++) {
            const Expr *p;
            if (ir_dyn_index_below(t, s ? a : b, m, &ub) && is_mul_by(s ? b : a, &ub, &p) &&
                ir_dyn_index_below(t, p, m, &ua)) {
                *below = ua;
                for (int i = 0; i < ub.n; i++)
                    factor(below, ub.atom[i]);
                factor(below, ir_idx(ub.coef));
                return below->ok;
            }
        }
        return 0;
    case OP_DIV:
    case OP_FLOORDIV:
        /* A / S with A below U = Q * S: below Q */
        if (!ir_dyn_index_below(t, a, m, &ua))
            return 0;
        ub = ir_prod_one();
        ir_prod_mul(&ub, b);
        return ir_prod_div(&ua, &ub, below);
    case OP_MOD:
    case OP_FLOORMOD:
        /* A % E of a non-negative A: below E */
        if (!ir_dyn_index_below(t, a, m, &ua) || !ir_const_bounds(b, m, &lo, &hi) || lo < 1)
            return 0;
        ir_prod_mul(below, b);
        return below->ok;
    default: return 0;
    }
}
