/* tensor.c - tensors (placeholders, computes, scans), programs and their verifier. */
#include "ir.h"

#include <string.h>

#define MAX_TENSORS 100000

IterVar *ir_itervar_new(const char *name, int64_t extent, IterKind kind)
{
    IterVar *iv = ir_alloc(sizeof *iv);
    iv->var = ir_var_new(name, DT_INDEX);
    iv->extent = extent;
    iv->kind = kind;
    return iv;
}

static Tensor *tensor_new(const char *name, TensorKind kind, DType dtype, int ndim)
{
    Tensor *t = ir_alloc(sizeof *t);
    t->name = ir_strdup(name);
    t->kind = kind;
    t->dtype = dtype;
    t->ndim = ndim;
    return t;
}

Tensor *ir_placeholder(const char *name, DType dtype, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > KG_MAX_DIMS) {
        ir_fail("'%s': rank %d is outside 0..%d", name, ndim, KG_MAX_DIMS);
        return NULL;
    }
    Tensor *t = tensor_new(name, T_PLACEHOLDER, dtype, ndim);
    for (int i = 0; i < ndim; i++) {
        /* an empty input is allowed (an operator may use only its type); computes are not */
        if (shape[i] < 0) {
            ir_fail("'%s': dimension %d is %lld; dimensions cannot be negative", name, i, (long long)shape[i]);
            return NULL;
        }
        t->shape[i] = shape[i];
    }
    return t;
}

Tensor *ir_constant(const char *name, DType dtype, int ndim, const int64_t *shape, const void *data)
{
    Tensor *t = ir_placeholder(name, dtype, ndim, shape);
    if (!t)
        return NULL;
    t->kind = T_CONSTANT;
    size_t bytes = (size_t)ir_dtype_size(dtype, ir_tensor_numel(t));
    void *copy = ir_alloc(bytes ? bytes : 1);
    if (bytes)
        memcpy(copy, data, bytes);
    t->data = copy;
    return t;
}

/* min_extent: 1 for scans; 0 for computes, where an empty axis makes an empty tensor */
static int set_axes(Tensor *t, int ndim, IterVar **axes, int64_t min_extent)
{
    if (ndim < 0 || ndim > KG_MAX_DIMS)
        return ir_fail("'%s': rank %d is outside 0..%d", t->name, ndim, KG_MAX_DIMS);
    for (int i = 0; i < ndim; i++) {
        if (axes[i]->kind != IV_SPATIAL)
            return ir_fail("'%s': axis %s is a reduce axis", t->name, axes[i]->var->name);
        if (axes[i]->extent < min_extent)
            return ir_fail("'%s': axis %s has extent %lld; extents must be at least %lld", t->name,
                           axes[i]->var->name, (long long)axes[i]->extent, (long long)min_extent);
        t->axes[i] = axes[i];
        t->shape[i] = axes[i]->extent;
        t->dyn[i] = axes[i]->dyn;
    }
    return 0;
}

static int reduces_nothing(const Expr *e)
{
    if (e->kind != E_REDUCE)
        return 0;
    for (int i = 0; i < e->u.reduce.naxes; i++)
        if (e->u.reduce.axes[i]->extent == 0)
            return 1;
    return 0;
}

/* e with each reduction over an empty axis replaced by its identity (a sum of nothing is
 * 0, a max of nothing the type's least value), so no later pass sees a loop of no
 * iterations; the nodes on the way to one are rebuilt, the rest shared. */
static Expr *drop_empty_reduces(Expr *e)
{
    if (reduces_nothing(e))
        return ir_reduce_identity(e->u.reduce.op, e->dtype);
    Expr *r = e, *a, *b, *c;
    switch (e->kind) {
    case E_BIN:
        a = drop_empty_reduces(e->u.bin.a), b = drop_empty_reduces(e->u.bin.b);
        if (a != e->u.bin.a || b != e->u.bin.b)
            r = ir_bin(e->u.bin.op, a, b);
        break;
    case E_UN:
        if ((a = drop_empty_reduces(e->u.un.a)) != e->u.un.a)
            r = ir_un(e->u.un.op, a);
        break;
    case E_CAST:
    case E_BITCAST:
        if ((a = drop_empty_reduces(e->u.cast.a)) != e->u.cast.a)
            r = ir_cast_like(e, a);
        break;
    case E_SELECT:
        a = drop_empty_reduces(e->u.sel.cond), b = drop_empty_reduces(e->u.sel.t), c = drop_empty_reduces(e->u.sel.f);
        if (a != e->u.sel.cond || b != e->u.sel.t || c != e->u.sel.f)
            r = ir_select(a, b, c);
        break;
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        int changed = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            changed |= (args[i] = drop_empty_reduces(e->u.call.args[i])) != e->u.call.args[i];
        if (changed)
            r = ir_call(e->u.call.fn, args);
        break;
    }
    case E_REDUCE:
        if ((a = drop_empty_reduces(e->u.reduce.body)) != e->u.reduce.body)
            r = ir_reduce(e->u.reduce.op, a, e->u.reduce.axes, e->u.reduce.naxes);
        break;
    default: break;   /* leaves; an access's indices hold no reduction */
    }
    if (r != e)
        r->dtype = e->dtype;   /* as built, whatever the plain constructor infers */
    return r;
}

/* A compute with an empty axis has nothing to compute: it is an empty constant (the
 * lowering gives it no kernel, the importer a name where it is an output). */
Tensor *ir_compute(const char *name, int ndim, IterVar **axes, Expr *body)
{
    if (!body)
        return NULL;
    Tensor *t = tensor_new(name, T_COMPUTE, body->dtype, ndim);
    if (set_axes(t, ndim, axes, 0))
        return NULL;
    if (ir_tensor_numel(t) == 0)
        return ir_constant(name, body->dtype, ndim, t->shape, NULL);
    t->body = drop_empty_reduces(body);
    return t;
}

Tensor *ir_scan_begin(const char *name, DType dtype, int ndim, IterVar **axes)
{
    if (ndim < 1) {
        ir_fail("scan '%s' needs a time axis", name);
        return NULL;
    }
    Tensor *t = tensor_new(name, T_SCAN, dtype, ndim);
    if (set_axes(t, ndim, axes, 1))
        return NULL;
    return t;
}

/* Does e read t at a time index that is not provably earlier than `time`? */
static int reads_current(const Expr *e, const Tensor *t, const Var *time);

int ir_scan_finish(Tensor *t, int64_t init_steps, Expr *init, Expr *update)
{
    if (!init || !update)
        return -1;
    if (init_steps < 1 || init_steps > t->shape[0])
        return ir_fail("scan '%s': init steps %lld must be within 1..%lld", t->name, (long long)init_steps,
                       (long long)t->shape[0]);
    if (init->dtype != t->dtype && !(init = ir_cast(t->dtype, init)))
        return -1;
    if (update->dtype != t->dtype)
        return ir_fail("scan '%s': update has type %s but init has %s", t->name, ir_dtype_name(update->dtype),
                       ir_dtype_name(t->dtype));
    PtrVec reads = {0};
    ir_expr_tensors(init, &reads);
    for (int i = 0; i < reads.n; i++)
        if (reads.items[i] == t)
            return ir_fail("scan '%s': init may not read '%s' itself", t->name, t->name);
    if (reads_current(update, t, t->axes[0]->var))
        return ir_fail("scan update may read '%s' only at earlier time steps (index %s - k with k >= 1)",
                       t->name, t->axes[0]->var->name);
    t->init_steps = init_steps;
    t->init = init;
    t->update = update;
    return 0;
}

static int reads_current(const Expr *e, const Tensor *t, const Var *time)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return 0;
    case E_BIN: return reads_current(e->u.bin.a, t, time) || reads_current(e->u.bin.b, t, time);
    case E_UN: return reads_current(e->u.un.a, t, time);
    case E_CAST:
    case E_BITCAST: return reads_current(e->u.cast.a, t, time);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (reads_current(e->u.call.args[i], t, time))
                return 1;
        return 0;
    case E_SELECT:
        return reads_current(e->u.sel.cond, t, time) || reads_current(e->u.sel.t, t, time) ||
               reads_current(e->u.sel.f, t, time);
    case E_REDUCE: return reads_current(e->u.reduce.body, t, time);
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            if (reads_current(e->u.access.idx[i], t, time))
                return 1;
        if (e->u.access.t != t)
            return 0;
        {
            /* the time index must be `time - k`, k >= 1 */
            Expr *d = ir_simplify(ir_bin(OP_SUB, ir_varref((Var *)time), e->u.access.idx[0]), NULL);
            int64_t k;
            return !ir_expr_is_const(d, &k) || k < 1;
        }
    }
    return 1;
}

int ir_tensor_is_leaf(const Tensor *t) { return t->kind == T_PLACEHOLDER || t->kind == T_CONSTANT; }

int ir_tensor_same_shape(const Tensor *a, const Tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

int64_t ir_tensor_numel(const Tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

/* ---------------------------------------------------------------- programs */

Expr *ir_tensor_dim(const Tensor *t, int d) { return t->dyn[d] ? t->dyn[d] : ir_idx(t->shape[d]); }

int ir_tensor_is_dynamic(const Tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->dyn[d])
            return 1;
    return 0;
}

int ir_var_is_dim(const Var *v) { return v->is_dim; }

int ir_tensor_has_sym(const Tensor *t)
{
    if (!t->sym)
        return 0;
    int64_t n = ir_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (t->sym[i])
            return 1;
    return 0;
}

IrDim *ir_program_add_dim(Program *p, const char *name, int64_t lo, int64_t hi, int input, int dim)
{
    IrDim *d = ir_alloc(sizeof *d);
    d->name = ir_strdup(name);
    d->var = ir_var_new(name, DT_INDEX);
    d->var->is_dim = 1;
    d->var->lo = lo;
    d->var->hi = hi;
    d->lo = lo;
    d->hi = hi;
    d->input = input;
    d->dim = dim;
    ir_vec_push(&p->dims, d, 64, "run-time dims");
    return d;
}

IrDim *ir_program_add_value_dim(Program *p, const char *name, int64_t lo, int64_t hi, const Tensor *count)
{
    const char *n = name;
    for (int k = 2;; k++) {
        int taken = 0;
        for (int i = 0; i < p->dims.n && !taken; i++)
            taken = !strcmp(((const IrDim *)p->dims.items[i])->name, n);
        if (!taken)
            break;
        n = ir_fmt("%s_%d", name, k);
    }
    IrDim *d = ir_program_add_dim(p, n, lo, hi, -1, -1);
    d->count = count;
    return d;
}

void ir_program_add_check(Program *p, Expr *cond, const char *msg)
{
    for (int i = 0; i < p->checks.n; i++)
        if (ir_expr_equal(p->checks.items[i], cond))
            return;
    ir_vec_push(&p->checks, cond, 1 << 16, "run-time checks");
    ir_vec_push(&p->check_msgs, (void *)ir_strdup(msg), 1 << 16, "run-time checks");
}

Program *ir_program_new(const char *name)
{
    Program *p = ir_alloc(sizeof *p);
    p->name = ir_strdup(name);
    return p;
}

Tensor *ir_program_find(Program *p, const char *name)
{
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        if (!strcmp(t->name, name))
            return t;
    }
    return NULL;
}

int ir_program_add(Program *p, Tensor *t)
{
    if (!t)
        return -1;
    if (ir_program_find(p, t->name))
        return ir_fail("tensor '%s' is defined twice", t->name);
    t->id = p->tensors.n;
    ir_vec_push(&p->tensors, t, MAX_TENSORS, "tensors");
    return 0;
}

/* Does e read t? Allocates nothing: the default schedule asks this for every pair of
 * stages, so a long chain of nodes must not fill the arena. */
static int expr_reads(const Expr *e, const Tensor *t)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return 0;
    case E_BIN: return expr_reads(e->u.bin.a, t) || expr_reads(e->u.bin.b, t);
    case E_UN: return expr_reads(e->u.un.a, t);
    case E_CAST:
    case E_BITCAST: return expr_reads(e->u.cast.a, t);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (expr_reads(e->u.call.args[i], t))
                return 1;
        return 0;
    case E_SELECT: return expr_reads(e->u.sel.cond, t) || expr_reads(e->u.sel.t, t) || expr_reads(e->u.sel.f, t);
    case E_REDUCE: return expr_reads(e->u.reduce.body, t);
    case E_ACCESS:
        if (e->u.access.t == t)
            return 1;
        for (int i = 0; i < e->u.access.n; i++)
            if (expr_reads(e->u.access.idx[i], t))
                return 1;
        return 0;
    }
    return 0;
}

int ir_tensor_reads(const Tensor *r, const Tensor *t)
{
    if (r->kind == T_COMPUTE)
        return expr_reads(r->body, t);
    if (r->kind == T_SCAN)
        return expr_reads(r->init, t) || expr_reads(r->update, t);
    return 0;
}

void ir_program_renumber(Program *p)
{
    for (int i = 0; i < p->tensors.n; i++)
        ((Tensor *)p->tensors.items[i])->id = i;
}

void ir_expr_tensors(const Expr *e, PtrVec *out)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return;
    case E_BIN:
        ir_expr_tensors(e->u.bin.a, out);
        ir_expr_tensors(e->u.bin.b, out);
        return;
    case E_UN: ir_expr_tensors(e->u.un.a, out); return;
    case E_CAST:
    case E_BITCAST: ir_expr_tensors(e->u.cast.a, out); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            ir_expr_tensors(e->u.call.args[i], out);
        return;
    case E_SELECT:
        ir_expr_tensors(e->u.sel.cond, out);
        ir_expr_tensors(e->u.sel.t, out);
        ir_expr_tensors(e->u.sel.f, out);
        return;
    case E_REDUCE: ir_expr_tensors(e->u.reduce.body, out); return;
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            ir_expr_tensors(e->u.access.idx[i], out);
        for (int i = 0; i < out->n; i++)
            if (out->items[i] == e->u.access.t)
                return;
        ir_vec_push(out, e->u.access.t, MAX_TENSORS, "tensors read by one expression");
        return;
    }
}

/* Check accesses: rank, and index ranges outside any select (a select guards its sides). */
static int verify_expr(Program *p, Tensor *owner, const Expr *e, RangeMap *m, int guarded)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR: return 0;
    case E_LOAD: return ir_fail("'%s': a flat buffer load in the tensor IR", owner->name);
    case E_BIN:
        return verify_expr(p, owner, e->u.bin.a, m, guarded) || verify_expr(p, owner, e->u.bin.b, m, guarded);
    case E_UN: return verify_expr(p, owner, e->u.un.a, m, guarded);
    case E_CAST:
    case E_BITCAST: return verify_expr(p, owner, e->u.cast.a, m, guarded);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (verify_expr(p, owner, e->u.call.args[i], m, guarded))
                return -1;
        return 0;
    case E_SELECT:
        return verify_expr(p, owner, e->u.sel.cond, m, guarded) || verify_expr(p, owner, e->u.sel.t, m, 1) ||
               verify_expr(p, owner, e->u.sel.f, m, 1);
    case E_REDUCE: {
        for (int i = 0; i < e->u.reduce.naxes; i++)
            if (e->u.reduce.axes[i]->extent < 1 || e->u.reduce.axes[i]->extent > INT32_MAX)
                return ir_fail("'%s': reduce axis %s has extent %lld, outside 1..%d", owner->name,
                               e->u.reduce.axes[i]->var->name, (long long)e->u.reduce.axes[i]->extent, INT32_MAX);
        for (int i = 0; i < e->u.reduce.naxes; i++)
            ir_range_push(m, e->u.reduce.axes[i]->var, 0, e->u.reduce.axes[i]->extent - 1);
        int r = verify_expr(p, owner, e->u.reduce.body, m, guarded);
        for (int i = 0; i < e->u.reduce.naxes; i++)
            ir_range_pop(m);
        return r;
    }
    case E_ACCESS: {
        Tensor *t = e->u.access.t;
        if (t != owner && (t->id >= p->tensors.n || p->tensors.items[t->id] != t))
            return ir_fail("'%s' reads '%s', which is not defined before it", owner->name, t->name);
        if (t == owner && owner->kind != T_SCAN)
            return ir_fail("'%s' reads itself", owner->name);
        if (e->u.access.n != t->ndim)
            return ir_fail("'%s' has %d dimension%s, indexed with %d", t->name, t->ndim, t->ndim == 1 ? "" : "s",
                           e->u.access.n);
        for (int i = 0; i < e->u.access.n; i++) {
            const Expr *ix = e->u.access.idx[i];
            if (ir_dtype_is_float(ix->dtype) || ix->dtype == DT_BOOL)
                return ir_fail("index %d of '%s' has type %s; indices are integers", i, t->name,
                               ir_dtype_name(ix->dtype));
            if (verify_expr(p, owner, ix, m, guarded))
                return -1;
            /* (or below a product of extents that is at most the bound at every run: an index
             * taken apart from a run-time product, which intervals over the bounds overrate) */
            int64_t lo, hi, ulo, uhi;
            IrProd u;
            if (!guarded && ir_const_bounds(ix, m, &lo, &hi) && (lo < 0 || hi >= t->shape[i]) &&
                !(ir_dyn_index_below(owner, ix, m, &u) && ir_dims_bounds(p, ir_prod_expr(&u), &ulo, &uhi) &&
                  uhi <= t->shape[i]))
                return ir_fail("index %d of '%s' ranges over %lld..%lld, outside 0..%lld (guard it with select)", i,
                               t->name, (long long)lo, (long long)hi, (long long)(t->shape[i] - 1));
        }
        return 0;
    }
    }
    return 0;
}

int ir_program_verify(Program *p)
{
    int outputs = 0;
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        outputs += t->is_output;
        if (ir_tensor_is_leaf(t))
            continue;
        RangeMap m = {0};
        for (int d = 0; d < t->ndim; d++)
            ir_range_push(&m, t->axes[d]->var, 0, t->axes[d]->extent - 1);
        int r = 0;
        if (t->kind == T_COMPUTE)
            r = verify_expr(p, t, t->body, &m, 0);
        else if (!t->update)
            r = ir_fail("scan '%s' has no update", t->name);
        else {
            m.items[0].hi = t->init_steps - 1;
            r = verify_expr(p, t, t->init, &m, 0);
            m.items[0].lo = t->init_steps;
            m.items[0].hi = t->shape[0] - 1;
            if (!r)
                r = verify_expr(p, t, t->update, &m, 0);
        }
        if (r)
            return -1;
        if (t->kind == T_COMPUTE) {
            /* a reduction below the top must not reuse an axis of an enclosing one */
        }
        if (t->is_output && ir_tensor_is_leaf(t) && ir_tensor_numel(t) > 0)
            return ir_fail("output '%s' is an input", t->name);
    }
    if (!outputs)
        return ir_fail("the program has no output (mark one with 'output')");
    return 0;
}

void ir_print_program(FILE *f, Program *p)
{
    fprintf(f, "program %s\n", p->name);
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        switch (t->kind) {
        case T_PLACEHOLDER:
        case T_CONSTANT:
            fprintf(f, "  %s %s : %s[", t->kind == T_CONSTANT ? "const" : "input", t->name, ir_dtype_name(t->dtype));
            for (int d = 0; d < t->ndim; d++) {
                fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
                if (t->dyn[d]) {
                    fputs(" (run time: ", f);
                    ir_print_expr(f, t->dyn[d]);
                    fputs(")", f);
                }
            }
            fputs("]\n", f);
            break;
        case T_COMPUTE:
        case T_SCAN:
            fprintf(f, "  %s%s%s[", t->is_output ? "output " : "", t->kind == T_SCAN ? "scan " : "", t->name);
            for (int d = 0; d < t->ndim; d++) {
                fprintf(f, "%s%s < %lld", d ? ", " : "", t->axes[d]->var->name, (long long)t->shape[d]);
                if (t->dyn[d]) {
                    fputs(" (run time: ", f);
                    ir_print_expr(f, t->dyn[d]);
                    fputs(")", f);
                }
            }
            fprintf(f, "] : %s", ir_dtype_name(t->dtype));
            if (t->kind == T_COMPUTE) {
                fputs(" = ", f);
                ir_print_expr(f, t->body);
            } else {
                fprintf(f, "\n    init(%lld) = ", (long long)t->init_steps);
                ir_print_expr(f, t->init);
                fputs("\n    update = ", f);
                ir_print_expr(f, t->update);
            }
            fputc('\n', f);
            break;
        }
    }
}
