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
            if (iv && x->dyn[d] && iv->extent == x->shape[d]) {
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
    Infer in = {p, t, {0}, 0, strict, 0, 0};
    for (int i = 0; i < t->ndim; i++)
        in.axes[in.naxes++] = t->axes[i];
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
