/* lower.c - from a scheduled tensor program to one kernel of loop IR.
 * requires: a verified program and a schedule whose primitives succeeded;
 * produces: a simplified, unrolled loop nest over flat buffers.
 *
 * Each stage becomes a loop nest over its leaf axes; root axis values are rebuilt from
 * the leaves through the split/fuse relations; non-divisible splits get guards placed at
 * the shallowest loop that defines them; stages attached with compute_at are computed
 * inside their consumer's loop over the region the consumer reads there (found by
 * affine interval analysis of its accesses), into a local buffer of constant size.
 */
#include "../schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

#define MAX_IV 256
#define ALIGN_BYTES 64

typedef struct {
    Buffer *buf;                  /* NULL for inlined stages */
    Expr *rmin[KG_MAX_DIMS];      /* region origin of the buffer (NULL: 0) */
} StageInfo;

typedef struct {
    Schedule *s;
    Kernel *k;
    StageInfo *info;              /* indexed like s->stages */
    int ntmp;                     /* counter for temporary names */
    int failed;
    PtrVec *group;                /* Tensor*: what the stage being lowered fuses, or NULL */
} Lower;

/* Pending work produced while lowering an expression: statements to run before the use
 * and buffers to allocate around it. */
typedef struct {
    PtrVec pre;
    PtrVec allocs;
} Pending;

static int stage_idx(Lower *L, const Tensor *t)
{
    if (t->id < 0 || t->id >= L->s->stages.n || ((Stage *)L->s->stages.items[t->id])->t != t)
        ir_die("stage numbering out of sync for %s", t->name);
    return t->id;
}

static Stage *stage_of(Lower *L, const Tensor *t) { return L->s->stages.items[stage_idx(L, t)]; }

static Stmt *wrap_pending(Pending *p, Stmt *s)
{
    Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)(p->pre.n + 1));
    for (int i = 0; i < p->pre.n; i++)
        items[i] = p->pre.items[i];
    items[p->pre.n] = s;
    s = ir_seq(items, p->pre.n + 1);
    for (int i = p->allocs.n - 1; i >= 0; i--)
        s = ir_allocate(p->allocs.items[i], s);
    return s;
}

static Buffer *make_buffer(const char *name, DType t, int ndim, const int64_t *shape, Scope scope, const Stage *st)
{
    Buffer *b = ir_buffer_new(name, t, ndim, shape, scope);
    if (st && st->align_factor > 0 && st->align_axis >= 0 && st->align_axis < ndim - 1) {
        int a = st->align_axis;
        int64_t stride = b->strides[a];
        while (stride % st->align_factor != st->align_offset)
            stride++;
        b->strides[a] = stride;
        for (int d = a - 1; d >= 0; d--)
            b->strides[d] = b->strides[d + 1] * b->shape[d + 1];
        b->size = b->strides[0] * b->shape[0];
    }
    return b;
}

static const char *tmp_name(Lower *L, const char *base)
{
    int n = L->ntmp++;
    return n ? ir_fmt("%s%d", base, n) : base;
}

/* ---------------------------------------------------------------- inlining */

/* Substitute inlined tensors into e (recursively), so accesses name only real buffers. */
static Expr *inline_expr(Lower *L, Expr *e)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return e;
    case E_BIN: {
        /* operands one after the other: inlining records what it fuses (L->group), and C
         * leaves the order of a call's arguments to the compiler */
        Expr *a = inline_expr(L, e->u.bin.a);
        Expr *b = inline_expr(L, e->u.bin.b);
        return ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: return ir_un(e->u.un.op, inline_expr(L, e->u.un.a));
    case E_CAST:
    case E_BITCAST: return ir_cast_like(e, inline_expr(L, e->u.cast.a));
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            args[i] = inline_expr(L, e->u.call.args[i]);
        return ir_call(e->u.call.fn, args);
    }
    case E_SELECT: {
        Expr *c = inline_expr(L, e->u.sel.cond);
        Expr *t = inline_expr(L, e->u.sel.t);
        Expr *f = inline_expr(L, e->u.sel.f);
        return ir_select(c, t, f);
    }
    case E_REDUCE:
        return ir_reduce(e->u.reduce.op, inline_expr(L, e->u.reduce.body), e->u.reduce.axes, e->u.reduce.naxes);
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        for (int i = 0; i < e->u.access.n; i++)
            idx[i] = inline_expr(L, e->u.access.idx[i]);
        Tensor *t = e->u.access.t;
        if (t->kind == T_COMPUTE && stage_of(L, t)->attach == ATTACH_INLINE) {
            if (L->group) {
                int seen = 0;
                for (int i = 0; i < L->group->n && !seen; i++)
                    seen = L->group->items[i] == t;
                if (!seen)
                    ir_vec_push(L->group, t, 1 << 20, "tensors");
            }
            Var *vars[KG_MAX_DIMS];
            for (int d = 0; d < t->ndim; d++)
                vars[d] = t->axes[d]->var;
            return inline_expr(L, ir_subst(t->body, vars, idx, t->ndim));
        }
        return ir_access(t, idx, e->u.access.n);
    }
    }
    return e;
}

/* ---------------------------------------------------------------- expressions */

static Expr *flat_index(Buffer *b, Expr **idx, Expr **rmin)
{
    Expr *sum = ir_idx(0);
    for (int d = 0; d < b->ndim; d++) {
        Expr *i = idx[d];
        if (i->dtype != DT_INDEX)
            i = ir_cast(DT_INDEX, i);
        if (rmin && rmin[d])
            i = ir_bin(OP_SUB, i, rmin[d]);
        sum = ir_bin(OP_ADD, sum, ir_bin(OP_MUL, i, ir_idx(b->strides[d])));
    }
    return ir_simplify(sum, NULL);
}

static Expr *combine(ReduceOp op, Expr *acc, Expr *x)
{
    switch (op) {
    case RED_SUM: return ir_bin(OP_ADD, acc, x);
    case RED_PROD: return ir_bin(OP_MUL, acc, x);
    case RED_MAX: return ir_bin(OP_MAX, acc, x);
    case RED_MIN: return ir_bin(OP_MIN, acc, x);
    default: break;
    }
    ir_die("bad reduce op");
    return NULL;
}

static Stmt *reduce_loops(IterVar **axes, int n, Stmt *body)
{
    for (int i = n - 1; i >= 0; i--)
        body = ir_for(axes[i]->var, ir_idx(0), ir_idx(axes[i]->extent), FOR_SERIAL, body);
    return body;
}

static Expr *lower_expr(Lower *L, Expr *e, Pending *p)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return e;
    case E_BIN: {
        Expr *a = lower_expr(L, e->u.bin.a, p);
        Expr *b = lower_expr(L, e->u.bin.b, p);
        return ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: return ir_un(e->u.un.op, lower_expr(L, e->u.un.a, p));
    case E_CAST:
    case E_BITCAST: return ir_cast_like(e, lower_expr(L, e->u.cast.a, p));
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            args[i] = lower_expr(L, e->u.call.args[i], p);
        return ir_call(e->u.call.fn, args);
    }
    case E_SELECT: {
        Expr *c = lower_expr(L, e->u.sel.cond, p);
        Pending pt = {0}, pf = {0};
        Expr *t = lower_expr(L, e->u.sel.t, &pt);
        Expr *f = lower_expr(L, e->u.sel.f, &pf);
        if (!pt.pre.n && !pt.allocs.n && !pf.pre.n && !pf.allocs.n)
            return ir_select(c, t, f);
        /* a side needs statements: evaluate only the chosen one, as select promises */
        int64_t one = 1;
        Buffer *tmp = ir_buffer_new(tmp_name(L, "sel"), e->dtype, 1, &one, SCOPE_LOCAL);
        Stmt *st = wrap_pending(&pt, ir_store(tmp, ir_idx(0), t));
        Stmt *sf = wrap_pending(&pf, ir_store(tmp, ir_idx(0), f));
        ir_vec_push(&p->allocs, tmp, 1 << 20, "temporaries");
        ir_vec_push(&p->pre, ir_if(c, st, sf), 1 << 20, "statements");
        return ir_load(tmp, ir_idx(0));
    }
    case E_REDUCE: {
        /* a reduction inside an expression: an accumulator and its own loops */
        int64_t one = 1;
        Buffer *acc = ir_buffer_new(tmp_name(L, "acc"), e->dtype, 1, &one, SCOPE_LOCAL);
        Pending inner = {0};
        Expr *body = lower_expr(L, e->u.reduce.body, &inner);
        Stmt *upd = wrap_pending(&inner, ir_store(acc, ir_idx(0), combine(e->u.reduce.op, ir_load(acc, ir_idx(0)), body)));
        ir_vec_push(&p->allocs, acc, 1 << 20, "temporaries");
        ir_vec_push(&p->pre, ir_store(acc, ir_idx(0), ir_reduce_identity(e->u.reduce.op, e->dtype)), 1 << 20,
                    "statements");
        ir_vec_push(&p->pre, reduce_loops(e->u.reduce.axes, e->u.reduce.naxes, upd), 1 << 20, "statements");
        return ir_load(acc, ir_idx(0));
    }
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        for (int i = 0; i < e->u.access.n; i++)
            idx[i] = lower_expr(L, e->u.access.idx[i], p);
        Tensor *t = e->u.access.t;
        StageInfo *si = &L->info[stage_idx(L, t)];
        if (!si->buf)
            ir_die("no buffer for %s", t->name);
        return ir_load(si->buf, flat_index(si->buf, idx, si->rmin));
    }
    }
    return e;
}

/* ---------------------------------------------------------------- stages */

typedef struct {
    IterVar *iv;
    int64_t ext;
    Expr *value;     /* in terms of leaf loop variables */
} IvInfo;

typedef struct {
    IvInfo items[MAX_IV];
    int n;
} IvMap;

static IvInfo *ivm(IvMap *m, IterVar *iv, int create)
{
    for (int i = 0; i < m->n; i++)
        if (m->items[i].iv == iv)
            return &m->items[i];
    if (!create)
        return NULL;
    if (m->n == MAX_IV)
        ir_die("too many axes");
    m->items[m->n] = (IvInfo){iv, 0, NULL};
    return &m->items[m->n++];
}

static ForKind for_kind(const IterVar *iv)
{
    switch (iv->ann) {
    case ANN_UNROLL: return FOR_UNROLLED;
    case ANN_VECTORIZE: return FOR_VECTORIZED;
    case ANN_PARALLEL: return FOR_PARALLEL;
    case ANN_BIND: return FOR_BOUND;
    case ANN_TENSORIZE: return FOR_TENSORIZED;
    default: return FOR_SERIAL;
    }
}

static int leaf_of_var(Stage *st, const Expr *e)
{
    int deepest = -1;
    for (int i = 0; i < st->leaf.n; i++)
        if (ir_expr_uses_var(e, ((IterVar *)st->leaf.items[i])->var))
            deepest = i;
    return deepest;
}

static void collect_reduce_axes(const Expr *e, IterVar **out, int *n)
{
    switch (e->kind) {
    case E_REDUCE:
        for (int i = 0; i < e->u.reduce.naxes && *n < MAX_IV; i++)
            out[(*n)++] = e->u.reduce.axes[i];
        collect_reduce_axes(e->u.reduce.body, out, n);
        return;
    case E_BIN:
        collect_reduce_axes(e->u.bin.a, out, n);
        collect_reduce_axes(e->u.bin.b, out, n);
        return;
    case E_UN: collect_reduce_axes(e->u.un.a, out, n); return;
    case E_CAST:
    case E_BITCAST: collect_reduce_axes(e->u.cast.a, out, n); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            collect_reduce_axes(e->u.call.args[i], out, n);
        return;
    case E_SELECT:
        collect_reduce_axes(e->u.sel.cond, out, n);
        collect_reduce_axes(e->u.sel.t, out, n);
        collect_reduce_axes(e->u.sel.f, out, n);
        return;
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            collect_reduce_axes(e->u.access.idx[i], out, n);
        return;
    default: return;
    }
}

static void collect_accesses(const Expr *e, const Tensor *t, PtrVec *out)
{
    switch (e->kind) {
    case E_REDUCE: collect_accesses(e->u.reduce.body, t, out); return;
    case E_BIN:
        collect_accesses(e->u.bin.a, t, out);
        collect_accesses(e->u.bin.b, t, out);
        return;
    case E_UN: collect_accesses(e->u.un.a, t, out); return;
    case E_CAST:
    case E_BITCAST: collect_accesses(e->u.cast.a, t, out); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            collect_accesses(e->u.call.args[i], t, out);
        return;
    case E_SELECT:
        collect_accesses(e->u.sel.cond, t, out);
        collect_accesses(e->u.sel.t, t, out);
        collect_accesses(e->u.sel.f, t, out);
        return;
    case E_ACCESS:
        for (int i = 0; i < e->u.access.n; i++)
            collect_accesses(e->u.access.idx[i], t, out);
        if (e->u.access.t == t)
            ir_vec_push(out, (void *)e, 1 << 20, "accesses");
        return;
    default: return;
    }
}

static Stmt *lower_stage(Lower *L, Stage *st, Expr **rmin, const int64_t *rext, Expr *body, RangeMap *outer);

/* Is v the variable of a loop bound to a thread index (threadIdx.*) in any stage? */
static int is_thread_var(const Lower *L, const Var *v)
{
    for (int j = 0; j < L->s->stages.n; j++) {
        const Stage *st = L->s->stages.items[j];
        for (int i = 0; i < st->leaf.n; i++) {
            const IterVar *iv = st->leaf.items[i];
            if (iv->var == v && iv->bind_tag && !strncmp(iv->bind_tag, "threadIdx", 9))
                return 1;
        }
    }
    return 0;
}

/* The region of producer P that consumer expression `cexpr` (in leaf variables of the
 * consumer) reads inside loop position p, then P's nest over it. */
/* The region of producer P computed at loop position p of st: the union of what st reads
 * below that loop and what the stages attached to st after P (already placed, in
 * `later`) read over their own regions. Sets P's buffer and region origin. */
static int attached_region(Lower *L, Stage *P, Stage *st, int p, Expr *cexpr, IvMap *ivs, RangeMap *outer,
                           PtrVec *later, RangeMap *mout)
{
    Tensor *t = P->t;
    PtrVec acc = {0};
    collect_accesses(cexpr, t, &acc);
    Var *inner[MAX_IV];
    int64_t exts[MAX_IV];
    int ninner = 0;
    for (int i = 0; i < later->n; i++) {
        Stage *R = later->items[i];
        StageInfo *ri = &L->info[stage_idx(L, R->t)];
        Var *rv[KG_MAX_DIMS];
        Expr *rval[KG_MAX_DIMS];
        for (int d = 0; d < R->t->ndim; d++) {
            rv[d] = R->t->axes[d]->var;
            rval[d] = ir_bin(OP_ADD, ri->rmin[d], ir_varref(rv[d]));
        }
        Expr *re = inline_expr(L, ir_subst(R->t->body, rv, rval, R->t->ndim));
        int before = acc.n;
        collect_accesses(re, t, &acc);
        if (acc.n == before)
            continue;
        for (int d = 0; d < R->t->ndim && ninner < MAX_IV; d++) {
            inner[ninner] = rv[d];
            exts[ninner++] = ri->buf->shape[d];
        }
        IterVar *rr[MAX_IV];
        int nrr = 0;
        collect_reduce_axes(re, rr, &nrr);
        for (int k = 0; k < nrr && ninner < MAX_IV; k++) {
            inner[ninner] = rr[k]->var;
            exts[ninner++] = rr[k]->extent;
        }
    }
    if (!acc.n) {
        L->failed = ir_fail("compute_at(%s, %s, %s): %s does not read %s", t->name, st->t->name,
                            P->attach_iv->var->name, st->t->name, t->name);
        return -1;
    }
    for (int i = p + 1; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        inner[ninner] = iv->var;
        exts[ninner++] = ivm(ivs, iv, 0)->ext;
    }
    IterVar *raxes[MAX_IV];
    int nr = 0;
    collect_reduce_axes(cexpr, raxes, &nr);
    for (int i = 0; i < nr && ninner < MAX_IV; i++) {
        inner[ninner] = raxes[i]->var;
        exts[ninner++] = raxes[i]->extent;
    }
    RangeMap m = {0};
    for (int i = 0; i < outer->n; i++)
        ir_range_push(&m, outer->items[i].var, outer->items[i].lo, outer->items[i].hi);
    for (int i = 0; i <= p; i++) {
        IterVar *iv = st->leaf.items[i];
        ir_range_push(&m, iv->var, 0, ivm(ivs, iv, 0)->ext - 1);
    }
    /* shared memory serves the whole block: its region spans every thread of it, so the
     * loops bound to threadIdx around the attach point count as inner (TVM's relaxation) */
    if (P->scope == SCOPE_SHARED) {
        for (int i = 0; i < outer->n && ninner < MAX_IV; i++)
            if (is_thread_var(L, outer->items[i].var) && outer->items[i].lo == 0) {
                inner[ninner] = outer->items[i].var;
                exts[ninner++] = outer->items[i].hi + 1;
            }
        for (int i = 0; i <= p && ninner < MAX_IV; i++) {
            IterVar *iv = st->leaf.items[i];
            if (iv->bind_tag && !strncmp(iv->bind_tag, "threadIdx", 9)) {
                inner[ninner] = iv->var;
                exts[ninner++] = ivm(ivs, iv, 0)->ext;
            }
        }
    }
    *mout = m;
    Expr *rmin[KG_MAX_DIMS];
    int64_t ext[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        Expr *lo = NULL, *hi = NULL;
        int ok = 1;
        for (int a = 0; a < acc.n && ok; a++) {
            Expr *ix = ((Expr *)acc.items[a])->u.access.idx[d], *l, *h;
            if (!ir_affine_interval(ix, inner, exts, ninner, &m, &l, &h)) {
                ok = 0;
                break;
            }
            lo = lo ? ir_simplify(ir_bin(OP_MIN, lo, l), &m) : l;
            hi = hi ? ir_simplify(ir_bin(OP_MAX, hi, h), &m) : h;
        }
        int64_t e = 0, llo, lhi;
        if (ok) {
            Expr *x = ir_simplify(ir_bin(OP_ADD, ir_bin(OP_SUB, hi, lo), ir_idx(1)), &m);
            ok = ir_expr_is_const(x, &e) && e >= 1;
        }
        if (ok && e > t->shape[d] && ir_const_bounds(lo, &m, &llo, &lhi) && llo >= 0)
            e = t->shape[d];
        if (!ok || e > t->shape[d] * 2 + 64) {
            rmin[d] = ir_idx(0);   /* not affine: compute the whole dimension */
            ext[d] = t->shape[d];
        } else {
            rmin[d] = lo;
            ext[d] = e;
        }
    }
    StageInfo *si = &L->info[stage_idx(L, t)];
    if (L->group)
        ir_vec_push(L->group, t, 1 << 20, "tensors");
    si->buf = make_buffer(t->name, t->dtype, t->ndim, ext, P->scope == SCOPE_WORKSPACE ? SCOPE_LOCAL : P->scope, P);
    for (int d = 0; d < t->ndim; d++)
        si->rmin[d] = rmin[d];
    ir_vec_push(&L->k->locals, si->buf, 1 << 20, "buffers");
    return 0;
}

static int loads_from_memory(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_LOAD && e->u.load.buf->scope != SCOPE_SHARED && e->u.load.buf->scope != SCOPE_LOCAL;
}

static int reads_memory(Expr *e) { return e && ir_expr_find(e, loads_from_memory, NULL) != NULL; }

/* Does s store, and only into buffers of scope `scope`? With `own_reads`, its expressions
 * also read only shared and per-thread buffers (never a tensor in memory). */
static int stores_only(const Stmt *s, Scope scope, int own_reads)
{
    int n = 0, ok = 1;
    PtrVec todo = {0};
    ir_vec_push(&todo, (void *)s, 1 << 20, "statements");
    while (todo.n && ok) {
        const Stmt *t = todo.items[--todo.n];
        if (!t)
            continue;
        switch (t->kind) {
        case S_FOR:
            ok = !own_reads || !reads_memory(t->u.loop.extent);
            ir_vec_push(&todo, t->u.loop.body, 1 << 20, "statements");
            break;
        case S_LET:
            ok = !own_reads || !reads_memory(t->u.let.value);
            ir_vec_push(&todo, t->u.let.body, 1 << 20, "statements");
            break;
        case S_IF:
            ok = !own_reads || !reads_memory(t->u.cond.cond);
            ir_vec_push(&todo, t->u.cond.then, 1 << 20, "statements");
            ir_vec_push(&todo, t->u.cond.els, 1 << 20, "statements");
            break;
        case S_ALLOC: ir_vec_push(&todo, t->u.alloc.body, 1 << 20, "statements"); break;
        case S_SEQ:
            for (int i = 0; i < t->u.seq.n; i++)
                ir_vec_push(&todo, t->u.seq.items[i], 1 << 20, "statements");
            break;
        case S_STORE:
            n++;
            ok = t->u.store.buf->scope == scope &&
                 (!own_reads || (!reads_memory(t->u.store.index) && !reads_memory(t->u.store.value)));
            break;
        case S_BARRIER: break;
        default: ok = !own_reads; break;
        }
    }
    return ok && n > 0;
}

/* Does s store, and only into shared buffers (a cooperative copy)? */
static int only_shared_stores(const Stmt *s) { return stores_only(s, SCOPE_SHARED, 0); }

/* Does s only compute into the thread's own buffers from shared and per-thread ones (a
 * register tile's update from shared memory)? Such work needs no bounds guard. */
static int thread_own_work(const Stmt *s) { return stores_only(s, SCOPE_LOCAL, 1); }

static int has_barrier(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_BARRIER: return 1;
    case S_FOR: return has_barrier(s->u.loop.body);
    case S_LET: return has_barrier(s->u.let.body);
    case S_IF: return has_barrier(s->u.cond.then) || has_barrier(s->u.cond.els);
    case S_ALLOC: return has_barrier(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (has_barrier(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* if (c) s. Every thread of a GPU block must reach each barrier, so a guard over code with
 * barriers (a tile that overhangs the tensor, with shared stages inside) moves down to the
 * largest parts without one: the loops and barriers run for all threads, the work of the
 * threads outside the tensor is skipped. (A shared stage's copy carries its own guards.) */
static Stmt *guard(Lower *L, Expr *c, Stmt *s)
{
    if (s && s->kind == S_IF && !s->u.cond.els && ir_expr_equal(s->u.cond.cond, c))
        return s;     /* already guarded so */
    if (!has_barrier(s))
        return ir_if(c, s, NULL);
    switch (s->kind) {
    case S_FOR: {
        Stmt *r = ir_for(s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, guard(L, c, s->u.loop.body));
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, guard(L, c, s->u.alloc.body));
    case S_SEQ: {
        /* the copies into shared memory between the barriers are the block's, not this
         * thread's: they run for every thread (each guards its own reads); so does the
         * work of a thread into its own registers from shared memory, which reads and
         * writes nothing outside the tile (uniform control flow between barriers: pocl
         * 3.1 miscomputes such an update under a guard) */
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = only_shared_stores(s->u.seq.items[i]) || thread_own_work(s->u.seq.items[i])
                           ? s->u.seq.items[i]
                           : guard(L, c, s->u.seq.items[i]);
        return ir_seq(items, s->u.seq.n);
    }
    case S_BARRIER: return s;
    default:
        /* a let or an if over a barrier: left as it was; the GPU printer refuses the barrier */
        return ir_if(c, s, NULL);
    }
}

static int loads_buffer(const Expr *e, const void *b) { return e->kind == E_LOAD && e->u.load.buf == b; }

/* st's prefetch (sch_prefetch) as the statement that starts each step of its innermost
 * reduce loop (position last_red of the leaf order): the line of the prefetched tensor
 * that rhs, the step's value, reads in the next iteration of the `ahead` loop, with the
 * tile's loops inside at their first value but for the blocks, which take turns by row. */
static Stmt *prefetch_stmt(Lower *L, Stage *st, Expr *rhs, IvMap *ivs, int last_red)
{
    const Tensor *t = st->pf_tensor;
    const Buffer *b = L->info[stage_idx(L, t)].buf;
    const Expr *ld = b ? ir_expr_find(rhs, loads_buffer, b) : NULL;
    int pa = -1, pr = -1, pb = -1;
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        pa = iv == st->pf_ahead ? i : pa;
        pr = iv == st->pf_rows ? i : pr;
        pb = iv == st->pf_blocks ? i : pb;
    }
    if (!ld) {
        L->failed = ir_fail("prefetch: stage %s no longer reads %s from memory (inlined or cached)", st->t->name,
                            t->name);
        return NULL;
    }
    if (pa < 0 || pa >= last_red || (st->pf_rows && (pr < 0 || pr >= last_red)) ||
        (st->pf_blocks && (pb < 0 || pb <= last_red))) {
        L->failed = ir_fail("prefetch: in stage %s, %s and the rows axis must be loops outside the innermost reduce "
                            "loop and the blocks axis one inside it", st->t->name, st->pf_ahead->var->name);
        return NULL;
    }
    Var *vars[MAX_IV];
    Expr *vals[MAX_IV];
    int n = 0;
    int64_t ae = ivm(ivs, st->pf_ahead, 0)->ext;
    vars[n] = st->pf_ahead->var;
    vals[n++] = ir_bin(OP_MIN, ir_bin(OP_ADD, ir_varref(st->pf_ahead->var), ir_idx(1)), ir_idx(ae - 1));
    for (int i = last_red + 1; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        vars[n] = iv->var;
        vals[n++] = iv == st->pf_blocks
                        ? ir_bin(OP_FLOORMOD, ir_varref(st->pf_rows->var), ir_idx(ivm(ivs, iv, 0)->ext))
                        : ir_idx(0);
    }
    return ir_prefetch(ld->u.load.buf, ir_subst(ld->u.load.index, vars, vals, n));
}

/* Lower stage st with spatial root axis d over [rmin[d], rmin[d] + rext[d]); body is the
 * value to compute (a top-level reduction is the stage's own). */
static Stmt *lower_stage(Lower *L, Stage *st, Expr **rmin, const int64_t *rext, Expr *body, RangeMap *outer)
{
    Tensor *t = st->t;
    IvMap ivs = {{{0}}, 0};
    int nspatial = t->ndim;
    for (int i = 0; i < st->root.n; i++) {
        IterVar *iv = st->root.items[i];
        ivm(&ivs, iv, 1)->ext = i < nspatial ? rext[i] : iv->extent;
    }
    /* extents forward through the relations */
    for (int r = 0; r < st->nrels; r++) {
        Relation *rel = &st->rels[r];
        if (rel->kind == REL_SPLIT) {
            int64_t pe = ivm(&ivs, rel->parent, 0)->ext;
            int64_t in = rel->factor < pe ? rel->factor : pe;
            ivm(&ivs, rel->inner, 1)->ext = in;
            ivm(&ivs, rel->outer, 1)->ext = (pe + rel->factor - 1) / rel->factor;
        } else {
            ivm(&ivs, rel->fused, 1)->ext = ivm(&ivs, rel->outer, 0)->ext * ivm(&ivs, rel->inner, 0)->ext;
        }
    }
    /* unroll and vectorize limits apply to the extents in force here (compute_at narrows) */
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        int64_t e = ivm(&ivs, iv, 0)->ext;
        if ((iv->ann == ANN_UNROLL && e > SCH_MAX_UNROLL) ||
            ((iv->ann == ANN_VECTORIZE || iv->ann == ANN_TENSORIZE) && e > SCH_MAX_VECTOR)) {
            L->failed = ir_fail("%s: axis %s of %s has extent %lld, above the limit of %d (split it first)",
                                iv->ann == ANN_UNROLL ? "unroll" : iv->ann == ANN_VECTORIZE ? "vectorize" : "tensorize",
                                iv->var->name, t->name, (long long)e,
                                iv->ann == ANN_UNROLL ? SCH_MAX_UNROLL : SCH_MAX_VECTOR);
            return NULL;
        }
        /* a tensorized loop that is cut short or vanishes (extent 1) is still an error */
        if (iv->ann == ANN_TENSORIZE && !iv->tensorize->soft && ir_tensorize_extent(iv->tensorize, e)) {
            L->failed = -1;
            return NULL;
        }
    }
    /* values backward from the leaves */
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        ivm(&ivs, iv, 1)->value = ir_varref(iv->var);
    }
    PtrVec guards = {0}, rguards = {0};   /* spatial guards, reduce guards */
    for (int r = st->nrels - 1; r >= 0; r--) {
        Relation *rel = &st->rels[r];
        if (rel->kind == REL_SPLIT) {
            IvInfo *pi = ivm(&ivs, rel->parent, 0);
            Expr *o = ivm(&ivs, rel->outer, 0)->value, *in = ivm(&ivs, rel->inner, 0)->value;
            pi->value = ir_bin(OP_ADD, ir_bin(OP_MUL, o, ir_idx(rel->factor)), in);
            int64_t oe = ivm(&ivs, rel->outer, 0)->ext;
            if (oe > 1 && oe * rel->factor != pi->ext)
                ir_vec_push(rel->parent->kind == IV_REDUCE ? &rguards : &guards,
                            ir_bin(OP_LT, pi->value, ir_idx(pi->ext)), 1 << 20, "guards");
        } else {
            Expr *f = ivm(&ivs, rel->fused, 0)->value;
            int64_t ie = ivm(&ivs, rel->inner, 0)->ext;
            ivm(&ivs, rel->outer, 0)->value = ir_bin(OP_FLOORDIV, f, ir_idx(ie));
            ivm(&ivs, rel->inner, 0)->value = ir_bin(OP_FLOORMOD, f, ir_idx(ie));
        }
    }
    /* substitute root axis variables in the body */
    Var *vars[MAX_IV];
    Expr *vals[MAX_IV];
    int nv = 0;
    for (int i = 0; i < st->root.n; i++) {
        IterVar *iv = st->root.items[i];
        Expr *v = ivm(&ivs, iv, 0)->value;
        if (!v)
            ir_die("axis %s has no value", iv->var->name);
        if (i < nspatial && rmin[i]) {
            v = ir_bin(OP_ADD, rmin[i], v);
            /* a region may reach past the tensor (tails, halos): guard it */
            ir_vec_push(&guards, ir_bin(OP_AND, ir_bin(OP_GE, v, ir_idx(0)), ir_bin(OP_LT, v, ir_idx(t->shape[i]))),
                        1 << 20, "guards");
        }
        vars[nv] = iv->var;
        vals[nv++] = v;
    }
    if (body->kind == E_REDUCE && body->u.reduce.naxes == 0)   /* a reduction over nothing */
        body = combine(body->u.reduce.op, ir_reduce_identity(body->u.reduce.op, body->dtype), body->u.reduce.body);
    int is_reduce = body->kind == E_REDUCE;
    Expr *value = inline_expr(L, ir_subst(is_reduce ? body->u.reduce.body : body, vars, vals, nv));
    StageInfo *si = &L->info[stage_idx(L, t)];
    Expr *idx[KG_MAX_DIMS];
    for (int d = 0; d < nspatial; d++) {
        idx[d] = ivm(&ivs, st->root.items[d], 0)->value;
        if (rmin[d])
            idx[d] = ir_bin(OP_ADD, rmin[d], idx[d]);
    }
    Expr *findex = flat_index(si->buf, idx, si->rmin);

    /* simplify guards under the loop ranges; drop the ones that always hold */
    RangeMap m = {0};
    for (int i = 0; i < outer->n; i++)
        ir_range_push(&m, outer->items[i].var, outer->items[i].lo, outer->items[i].hi);
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        ir_range_push(&m, iv->var, 0, ivm(&ivs, iv, 0)->ext - 1);
    }
    PtrVec *gl[2] = {&guards, &rguards};
    for (int g = 0; g < 2; g++) {
        int n = 0;
        for (int i = 0; i < gl[g]->n; i++) {
            Expr *c = ir_simplify(gl[g]->items[i], &m);
            int64_t v;
            if (ir_expr_is_const(c, &v) && v)
                continue;
            int dup = 0;
            for (int h = 0; h <= g && !dup; h++)
                for (int q = 0; q < (h == g ? n : gl[h]->n) && !dup; q++)
                    dup = ir_expr_equal(gl[h]->items[q], c);
            if (!dup)
                gl[g]->items[n++] = c;
        }
        gl[g]->n = n;
    }

    /* stages computed at one of this stage's loops: their regions and buffers first, since
     * this stage's loads from them depend on the region origins */
    PtrVec att[MAX_IV], later = {0};
    memset(att, 0, sizeof att);
    RangeMap amaps[MAX_IV];
    int apos[MAX_IV], natt = 0;
    Stage *astages[MAX_IV];
    Expr *cexpr = NULL;
    for (int j = L->s->stages.n - 1; j >= 0 && natt < MAX_IV; j--) {
        Stage *P = L->s->stages.items[j];
        if (P->attach != ATTACH_AT || P->attach_stage != st)
            continue;
        int pos = -1;
        for (int i = 0; i < st->leaf.n; i++)
            if (st->leaf.items[i] == P->attach_iv)
                pos = i;
        if (pos < 0)
            ir_die("attach axis vanished");
        if (!cexpr)
            cexpr = inline_expr(L, ir_subst(body, vars, vals, nv));
        if (attached_region(L, P, st, pos, cexpr, &ivs, outer, &later, &amaps[natt]))
            return NULL;
        ir_vec_push(&later, P, 1 << 20, "stages");
        astages[natt] = P;
        apos[natt++] = pos;
    }
    for (int a = natt - 1; a >= 0; a--) {
        Stage *P = astages[a];
        StageInfo *pi = &L->info[stage_idx(L, P->t)];
        Stmt *ps = lower_stage(L, P, pi->rmin, pi->buf->shape, P->t->body, &amaps[a]);
        if (L->failed)
            return NULL;

        ir_vec_push(&att[apos[a]], P, 1 << 20, "stages");
        ir_vec_push(&att[apos[a]], ps, 1 << 20, "stages");
    }

    /* the innermost statement */
    Pending pend = {0};
    Expr *rhs = lower_expr(L, value, &pend);
    if (L->failed)
        return NULL;
    Stmt *inner;
    if (is_reduce)
        inner = ir_store(si->buf, findex, combine(body->u.reduce.op, ir_load(si->buf, findex), rhs));
    else
        inner = ir_store(si->buf, findex, rhs);
    inner = wrap_pending(&pend, inner);

    int first_red = -1, last_red = -1;
    if (is_reduce)
        for (int i = 0; i < st->leaf.n; i++)
            if (((IterVar *)st->leaf.items[i])->kind == IV_REDUCE) {
                first_red = first_red < 0 ? i : first_red;
                last_red = i;
            }
    Stmt *pf = NULL;
    if (st->pf_tensor && last_red >= 0 && !(pf = prefetch_stmt(L, st, rhs, &ivs, last_red)))
        return NULL;

    /* inside out */
    Stmt *cur = inner;
    for (int p = st->leaf.n; p >= 0; p--) {
        /* guards whose deepest variable is at p-1 wrap the body of loop p-1 */
        {
            for (int g = 0; g < 2; g++)
                for (int i = 0; i < gl[g]->n; i++) {
                    Expr *c = gl[g]->items[i];
                    if (leaf_of_var(st, c) == p - 1)
                        cur = guard(L, c, cur);
                }
        }
        if (p == 0)
            break;
        if (pf && p - 1 == last_red)
            cur = ir_seq2(pf, cur);
        IterVar *iv = st->leaf.items[p - 1];
        /* stages computed at this loop come first in its body. A block fills its shared
         * stages together: a barrier before them (every thread is done with the previous
         * contents) and one after them (the new contents are all written). */
        int nshared = 0;
        for (int j = 0; j < att[p - 1].n; j += 2)
            nshared += ((Stage *)att[p - 1].items[j])->scope == SCOPE_SHARED;
        for (int j = att[p - 1].n - 2, seen = 0; j >= 0; j -= 2) {
            Stage *P = att[p - 1].items[j];
            Stmt *ps = att[p - 1].items[j + 1];
            if (P->scope == SCOPE_SHARED) {
                if (seen == 0)
                    ps = ir_seq2(ps, ir_barrier());        /* after the last shared stage */
                if (++seen == nshared)
                    ps = ir_seq2(ir_barrier(), ps);        /* before the first */
            }
            cur = ir_allocate(L->info[stage_idx(L, P->t)].buf, ir_seq2(ps, cur));
        }
        /* the reduction's initial value, before its first reduce loop */
        if (is_reduce && p - 1 == first_red) {
            Stmt *init = ir_store(si->buf, findex, ir_reduce_identity(body->u.reduce.op, t->dtype));
            /* (a register accumulator that the shared-memory loop updates unguarded is
             * initialized so too: every thread's is then defined) */
            int own = si->buf->scope == SCOPE_LOCAL && has_barrier(cur);
            for (int i = 0; i < guards.n && !own; i++)
                init = ir_if(guards.items[i], init, NULL);
            for (int i = st->leaf.n - 1; i > first_red; i--) {
                IterVar *jv = st->leaf.items[i];
                if (jv->kind == IV_REDUCE)
                    continue;
                /* (a tensorized axis: its zero fill stays a vectorized loop) */
                init = ir_for(jv->var, ir_idx(0), ir_idx(ivm(&ivs, jv, 0)->ext),
                              jv->ann == ANN_VECTORIZE || jv->ann == ANN_TENSORIZE ? FOR_VECTORIZED : FOR_SERIAL,
                              init);
            }
            Stmt *loop = ir_for(iv->var, ir_idx(0), ir_idx(ivm(&ivs, iv, 0)->ext), for_kind(iv), cur);
            if (iv->bind_tag)
                loop->u.loop.bind_tag = iv->bind_tag;
            loop->u.loop.tensorize = iv->tensorize;
            cur = ir_seq2(init, loop);
            continue;
        }
        Stmt *loop = ir_for(iv->var, ir_idx(0), ir_idx(ivm(&ivs, iv, 0)->ext), for_kind(iv), cur);
        if (iv->bind_tag)
            loop->u.loop.bind_tag = iv->bind_tag;
        loop->u.loop.tensorize = iv->tensorize;
        cur = loop;
    }
    if (is_reduce && first_red < 0) {
        /* no reduce loops at all (every reduce axis had extent 1 is impossible; keep safe) */
        Stmt *init = ir_store(si->buf, findex, ir_reduce_identity(body->u.reduce.op, t->dtype));
        cur = ir_seq2(init, cur);
    }
    return cur;
}

/* ---------------------------------------------------------------- post passes */

static Stmt *unroll(Stmt *s)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case S_FOR: {
        Stmt *body = unroll(s->u.loop.body);
        int64_t lo, ext;
        if (s->u.loop.kind == FOR_UNROLLED && ir_expr_is_const(s->u.loop.min, &lo) &&
            ir_expr_is_const(s->u.loop.extent, &ext) && ext <= SCH_MAX_UNROLL) {
            Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)(ext ? ext : 1));
            Var *v = s->u.loop.var;
            for (int64_t i = 0; i < ext; i++) {
                Expr *val = ir_idx(lo + i);
                items[i] = ir_stmt_subst(body, &v, &val, 1);
            }
            return ir_seq(items, (int)ext);
        }
        Stmt *r = ir_for(s->u.loop.var, s->u.loop.min, s->u.loop.extent,
                         s->u.loop.kind == FOR_UNROLLED ? FOR_SERIAL : s->u.loop.kind, body);
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_LET: return ir_let(s->u.let.var, s->u.let.value, unroll(s->u.let.body));
    case S_IF: return ir_if_like(s, s->u.cond.cond, unroll(s->u.cond.then), unroll(s->u.cond.els));
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, unroll(s->u.alloc.body));
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = unroll(s->u.seq.items[i]);
        return ir_seq(items, s->u.seq.n);
    }
    default: return s;
    }
}

/* Loop s again, over [min, min + extent) with body: the same variable, kind and
 * annotations. */
static Stmt *copy_loop_from(const Stmt *s, Expr *min, Expr *extent, Stmt *body)
{
    Stmt *r = ir_for(s->u.loop.var, min, extent, s->u.loop.kind, body);
    r->u.loop.bind_tag = s->u.loop.bind_tag;
    r->u.loop.tensorize = s->u.loop.tensorize;
    return r;
}

/* The same from s's own start. */
static Stmt *copy_loop(const Stmt *s, Expr *extent, Stmt *body)
{
    return copy_loop_from(s, s->u.loop.min, extent, body);
}

/* s with f applied to each statement directly inside it (a loop's body, a let's, both
 * sides of an if, an allocation's body, a sequence's items); s itself when nothing changed.
 * The passes below rewrite the statements they match and recurse through the rest. */
static Stmt *map_children(Stmt *s, Stmt *(*f)(Stmt *))
{
    switch (s->kind) {
    case S_FOR: {
        Stmt *b = f(s->u.loop.body);
        return b == s->u.loop.body ? s : copy_loop(s, s->u.loop.extent, b);
    }
    case S_LET: {
        Stmt *b = f(s->u.let.body);
        return b == s->u.let.body ? s : ir_let(s->u.let.var, s->u.let.value, b);
    }
    case S_IF: {
        Stmt *t = f(s->u.cond.then), *e = s->u.cond.els ? f(s->u.cond.els) : NULL;
        return t == s->u.cond.then && e == s->u.cond.els ? s : ir_if_like(s, s->u.cond.cond, t, e);
    }
    case S_ALLOC: {
        Stmt *b = f(s->u.alloc.body);
        return b == s->u.alloc.body ? s : ir_allocate(s->u.alloc.buf, b);
    }
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        int changed = 0;
        for (int i = 0; i < s->u.seq.n; i++) {
            items[i] = f(s->u.seq.items[i]);
            changed |= items[i] != s->u.seq.items[i];
        }
        return changed ? ir_seq(items, s->u.seq.n) : s;
    }
    default: return s;
    }
}

/* ---------------------------------------------------------------- tail peeling
 *
 * A loop over o whose body is a vectorized loop over i guarded by `o * F + i < E` (a split
 * that does not divide its extent: 229 columns in chunks of 16) checks the guard in every
 * chunk, and gcc does not vectorize a loop with a guarded store. It becomes the loop over
 * the whole chunks, unguarded, then one loop over the last chunk's E - (N - 1) * F
 * iterations. */

static int is_var(const Expr *e, const Var *v) { return e->kind == E_VAR && e->u.var == v; }

/* Is c the guard `o * F + i < E` (either operand order)? Sets *E. */
static int tail_guard(const Expr *c, const Var *o, const Var *i, int64_t F, int64_t *E)
{
    if (c->kind != E_BIN || c->u.bin.op != OP_LT || !ir_expr_is_const(c->u.bin.b, E))
        return 0;
    const Expr *s = c->u.bin.a;
    if (s->kind != E_BIN || s->u.bin.op != OP_ADD)
        return 0;
    const Expr *m = s->u.bin.a, *iv = s->u.bin.b;
    if (!is_var(iv, i))
        m = s->u.bin.b, iv = s->u.bin.a;
    if (!is_var(iv, i) || m->kind != E_BIN || m->u.bin.op != OP_MUL)
        return 0;
    int64_t f;
    return (is_var(m->u.bin.a, o) && ir_expr_is_const(m->u.bin.b, &f) && f == F) ||
           (is_var(m->u.bin.b, o) && ir_expr_is_const(m->u.bin.a, &f) && f == F);
}

/* Is s a loop over [0, N), N >= 2, (serial or parallel) whose body is a vectorized loop
 * over [0, F), the chunks of a split? Sets *N and *F. */
static int chunk_loops(const Stmt *s, int64_t *N, int64_t *F)
{
    int64_t lo, ilo;
    if (s->kind != S_FOR)
        return 0;
    const Stmt *in = s->u.loop.body;
    return (s->u.loop.kind == FOR_SERIAL || s->u.loop.kind == FOR_PARALLEL) && in->kind == S_FOR && in->u.loop.kind == FOR_VECTORIZED && ir_expr_is_const(s->u.loop.min, &lo) && !lo &&
           ir_expr_is_const(s->u.loop.extent, N) && *N >= 2 && ir_expr_is_const(in->u.loop.min, &ilo) && !ilo &&
           ir_expr_is_const(in->u.loop.extent, F);
}

static Stmt *peel_tails(Stmt *s)
{
    s = map_children(s, peel_tails);
    int64_t N, F, E;
    if (!chunk_loops(s, &N, &F))
        return s;
    Stmt *in = s->u.loop.body;
    if (in->u.loop.body->kind == S_IF && !in->u.loop.body->u.cond.els &&
        tail_guard(in->u.loop.body->u.cond.cond, s->u.loop.var, in->u.loop.var, F, &E) && E > (N - 1) * F &&
        E < N * F) {
        Stmt *x = in->u.loop.body->u.cond.then;
        Var *o = s->u.loop.var;
        Expr *last = ir_idx(N - 1);
        Stmt *whole = copy_loop(s, ir_idx(N - 1), copy_loop(in, in->u.loop.extent, x));
        Stmt *tail = copy_loop(in, ir_idx(E - (N - 1) * F), ir_stmt_subst(x, &o, &last, 1));
        return ir_seq2(whole, tail);
    }
    return s;
}

/* ---------------------------------------------------------------- head peeling
 *
 * The same at the start: a loop over o around a vectorized loop over i whose stores
 * choose on a condition (one operand of a chain of &&s) that holds for every i once o
 * reaches o1, but not before (an NCHW padded copy's left border: `o * 16 + i - 3 >= 0`),
 * runs its first o1 iterations as one loop and the rest as another, where the simplifier
 * then drops the condition; the unswitching below can then take the rest (the row's
 * condition) out of the vector loop. At most HEAD_MAX iterations are peeled. */
enum { HEAD_MAX = 2 };

/* Does e (a condition) hold for every i of [0, F) when o runs over [o1, N)? */
static int holds_from(Expr *e, Var *o, int64_t o1, int64_t N, Var *i, int64_t F)
{
    RangeMap m = {0};
    ir_range_push(&m, o, o1, N - 1);
    ir_range_push(&m, i, 0, F - 1);
    int64_t v;
    return ir_expr_is_const(ir_simplify(e, &m), &v) && v;
}

/* What head_select looks for, and the smallest o1 found so far (0: none). */
typedef struct {
    Var *o, *i;
    int64_t N, F, o1;
} HeadSearch;

/* ir_expr_find's visitor (it matches nothing, so it sees every subexpression, and keeps
 * its finding in the HeadSearch passed as ctx): for a select, the smallest o1 in [1, HEAD_MAX] from which an operand of its condition's &&
 * chain, using o and i and nothing else that varies (no loads), always holds. */
static int head_select(const Expr *e, const void *ctx)
{
    HeadSearch *h = (HeadSearch *)ctx;
    if (e->kind != E_SELECT)
        return 0;
    Expr *stack[64], *c;
    int n = 0;
    stack[n++] = e->u.sel.cond;
    while (n > 0) {
        c = stack[--n];
        if (c->kind == E_BIN && c->u.bin.op == OP_AND && n + 2 <= 64) {
            stack[n++] = c->u.bin.a;
            stack[n++] = c->u.bin.b;
            continue;
        }
        if (!ir_expr_uses_var(c, h->o) || !ir_expr_uses_var(c, h->i) || ir_expr_reads_memory(c) ||
            holds_from(c, h->o, 0, h->N, h->i, h->F))
            continue;
        for (int64_t o1 = 1; o1 <= HEAD_MAX && o1 < h->N; o1++)
            if (holds_from(c, h->o, o1, h->N, h->i, h->F)) {
                h->o1 = !h->o1 || o1 < h->o1 ? o1 : h->o1;
                break;
            }
    }
    return 0;
}

static int body_stores(Stmt *loop, Stmt ***items, int *n);

static Stmt *peel_heads(Stmt *s)
{
    s = map_children(s, peel_heads);
    Stmt **items;
    int n;
    HeadSearch h = {0};
    if (!chunk_loops(s, &h.N, &h.F) || !body_stores(s->u.loop.body, &items, &n))
        return s;
    h.o = s->u.loop.var;
    h.i = s->u.loop.body->u.loop.var;
    for (int k = 0; k < n; k++)
        ir_expr_find(items[k]->u.store.value, head_select, &h);
    if (!h.o1)
        return s;
    Stmt *in = s->u.loop.body;
    return ir_seq2(copy_loop(s, ir_idx(h.o1), in), copy_loop_from(s, ir_idx(h.o1), ir_idx(h.N - h.o1), in));
}

/* ---------------------------------------------------------------- unswitching
 *
 * A vectorized loop whose stores choose between two values on a condition the loop does
 * not change (padding's bounds check around a load: `h - 1 >= 0 && ... ? x[...] : 0`)
 * becomes an `if` around two copies of the loop, each storing one side. Compilers do not
 * vectorize a loop with a guarded load (gcc 12 unswitches it only after giving up on
 * vectorizing: a padding copy with its producer's bias and ReLU ran as scalars, 7x slower). */

/* Is e a select whose condition does not depend on the variable v (nor on memory)? */
static int invariant_select(const Expr *e, const void *v)
{
    return e->kind == E_SELECT && !ir_expr_uses_var(e->u.sel.cond, v) && !ir_expr_reads_memory(e->u.sel.cond);
}

/* The condition of the first select in e that does not depend on v (nor on memory). */
static Expr *invariant_cond(Expr *e, const Var *v)
{
    Expr *sel = ir_expr_find(e, invariant_select, v);
    return sel ? sel->u.sel.cond : NULL;
}

/* e with every select on cond replaced by its `then` (side 1) or `else` (side 0) value. */
static Expr *pick_side(Expr *e, const Expr *cond, int side)
{
    switch (e->kind) {
    case E_SELECT: {
        if (ir_expr_equal(e->u.sel.cond, cond))
            return pick_side(side ? e->u.sel.t : e->u.sel.f, cond, side);
        Expr *c = pick_side(e->u.sel.cond, cond, side), *t = pick_side(e->u.sel.t, cond, side);
        Expr *f = pick_side(e->u.sel.f, cond, side);
        return c == e->u.sel.cond && t == e->u.sel.t && f == e->u.sel.f ? e : ir_select(c, t, f);
    }
    case E_BIN: {
        Expr *a = pick_side(e->u.bin.a, cond, side), *b = pick_side(e->u.bin.b, cond, side);
        return a == e->u.bin.a && b == e->u.bin.b ? e : ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: {
        Expr *a = pick_side(e->u.un.a, cond, side);
        return a == e->u.un.a ? e : ir_un(e->u.un.op, a);
    }
    case E_CAST:
    case E_BITCAST: {
        Expr *a = pick_side(e->u.cast.a, cond, side);
        return a == e->u.cast.a ? e : ir_cast_like(e, a);
    }
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        int changed = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++) {
            args[i] = pick_side(e->u.call.args[i], cond, side);
            changed |= args[i] != e->u.call.args[i];
        }
        return changed ? ir_call(e->u.call.fn, args) : e;
    }
    case E_LOAD: {
        Expr *i = pick_side(e->u.load.index, cond, side);
        return i == e->u.load.index ? e : ir_load(e->u.load.buf, i);
    }
    default: return e;
    }
}

static int loads_other(const Expr *e, const Buffer *b, const Expr *at);

/* The loop's stores (its body: one, or a sequence of them); 0 if the body holds anything
 * else, or a store that reads its own buffer: a register tile's update (a depthwise conv
 * summing a padded window) keeps its select, as a branch between the rows of a tile would
 * cost more than the select. */
static int body_stores(Stmt *loop, Stmt ***items, int *n)
{
    Stmt *s = loop->u.loop.body;
    if (s->kind == S_STORE)
        *items = &loop->u.loop.body, *n = 1;
    else if (s->kind == S_SEQ)
        *items = s->u.seq.items, *n = s->u.seq.n;
    else
        return 0;
    for (int i = 0; i < *n; i++)
        if ((*items)[i]->kind != S_STORE || loads_other((*items)[i]->u.store.value, (*items)[i]->u.store.buf, NULL))
            return 0;
    return 1;
}

/* The loop again, each of its stores taking the `side` of the selects on cond. */
static Stmt *unswitch_side(Stmt *loop, Stmt **items, int n, const Expr *cond, int side)
{
    Stmt **out = ir_alloc(sizeof *out * (size_t)n);
    for (int i = 0; i < n; i++)
        out[i] = ir_store(items[i]->u.store.buf, pick_side(items[i]->u.store.index, cond, side),
                          pick_side(items[i]->u.store.value, cond, side));
    return copy_loop(loop, loop->u.loop.extent, loop->u.loop.body->kind == S_SEQ ? ir_seq(out, n) : out[0]);
}

static Stmt *unswitch(Stmt *s)
{
    Stmt **items;
    int n;
    if (s->kind != S_FOR || s->u.loop.kind != FOR_VECTORIZED || !body_stores(s, &items, &n))
        return map_children(s, unswitch);
    Expr *cond = NULL;
    for (int i = 0; i < n && !cond; i++)
        if (!(cond = invariant_cond(items[i]->u.store.value, s->u.loop.var)))
            cond = invariant_cond(items[i]->u.store.index, s->u.loop.var);
    if (!cond)
        return s;
    /* the condition chooses padding's interior, a few times more often than not */
    Stmt *r = ir_if(cond, unswitch_side(s, items, n, cond, 1), unswitch_side(s, items, n, cond, 0));
    r->u.cond.likely = 1;
    return r;
}

static int check_loops(const Stmt *s, int in_parallel, int in_vector)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        int64_t e;
        int vec = s->u.loop.kind == FOR_VECTORIZED || s->u.loop.kind == FOR_TENSORIZED;
        if (vec && !ir_expr_is_const(s->u.loop.extent, &e))
            return ir_fail("%s: loop %s has a non-constant extent",
                           s->u.loop.kind == FOR_VECTORIZED ? "vectorize" : "tensorize", s->u.loop.var->name);
        if (s->u.loop.kind == FOR_PARALLEL && in_parallel)
            return ir_fail("parallel: loop %s is nested inside another parallel loop", s->u.loop.var->name);
        if (s->u.loop.kind == FOR_PARALLEL && in_vector)
            return ir_fail("parallel: loop %s is inside a vectorized loop", s->u.loop.var->name);
        return check_loops(s->u.loop.body, in_parallel || s->u.loop.kind == FOR_PARALLEL, in_vector || vec);
    }
    case S_LET: return check_loops(s->u.let.body, in_parallel, in_vector);
    case S_IF: return check_loops(s->u.cond.then, in_parallel, in_vector) || check_loops(s->u.cond.els, in_parallel, in_vector);
    case S_ALLOC: return check_loops(s->u.alloc.body, in_parallel, in_vector);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (check_loops(s->u.seq.items[i], in_parallel, in_vector))
                return -1;
        return 0;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- the kernel */

static void note_stage(Kernel *k, Stage *st)
{
    static const char *ann[] = {"", " (unrolled)", " (vectorized)", " (parallel)", " (bound)", " (tensorized)"};
    StrBuf b = {0};
    sb_printf(&b, "%s", st->t->name);
    if (st->origin)
        sb_printf(&b, " = %s", st->origin);
    if (st->attach == ATTACH_INLINE)
        sb_puts(&b, ": inlined");
    else {
        if (st->attach == ATTACH_AT)
            sb_printf(&b, ": computed at %s.%s", st->attach_stage->t->name, st->attach_iv->var->name);
        else
            sb_puts(&b, ": root");
        sb_puts(&b, "; loops");
        for (int i = 0; i < st->leaf.n; i++) {
            IterVar *iv = st->leaf.items[i];
            sb_printf(&b, "%s %s%s", i ? "," : "", iv->var->name, iv->bind_tag ? "" : ann[iv->ann]);
            if (iv->bind_tag)
                sb_printf(&b, " (%s)", iv->bind_tag);
        }
        if (st->pf_tensor)
            sb_printf(&b, "; prefetch %s one %s ahead", st->pf_tensor->name, st->pf_ahead->var->name);
    }
    ir_vec_push(&k->notes, ir_strdup(b.data), 1 << 20, "notes");
    sb_free(&b);
}

/* Checks of the schedule as a whole, then parameter buffers for inputs, constants and
 * outputs (in that order), and buffers for the root intermediates (not placed yet). */
/* Does e read t, directly or through the stages inlined into it? Allocates nothing (the
 * compute_at check asks it for every pair of stages). */
static int reads_inlined(Lower *L, const Expr *e, const Tensor *t)
{
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_VAR:
    case E_LOAD: return 0;
    case E_BIN: return reads_inlined(L, e->u.bin.a, t) || reads_inlined(L, e->u.bin.b, t);
    case E_UN: return reads_inlined(L, e->u.un.a, t);
    case E_CAST:
    case E_BITCAST: return reads_inlined(L, e->u.cast.a, t);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (reads_inlined(L, e->u.call.args[i], t))
                return 1;
        return 0;
    case E_SELECT:
        return reads_inlined(L, e->u.sel.cond, t) || reads_inlined(L, e->u.sel.t, t) || reads_inlined(L, e->u.sel.f, t);
    case E_REDUCE: return reads_inlined(L, e->u.reduce.body, t);
    case E_ACCESS: {
        const Tensor *x = e->u.access.t;
        if (x == t)
            return 1;
        for (int i = 0; i < e->u.access.n; i++)
            if (reads_inlined(L, e->u.access.idx[i], t))
                return 1;
        return x->kind == T_COMPUTE && stage_of(L, x)->attach == ATTACH_INLINE && reads_inlined(L, x->body, t);
    }
    }
    return 0;
}

/* The deepest expression that inlining may build (operations from the root to a leaf,
 * through every inlined body): lowering, the simplifier and the printer recurse over it,
 * and a schedule inlining a chain of thousands of stages would run them out of stack.
 * (The default schedule stays under half of it.) */
#define MAX_INLINED_DEPTH 2000

static int check_inline_depth(Lower *L)
{
    Schedule *s = L->s;
    /* depth[i]: of stage i's body with its inlined inputs substituted (an upper bound) */
    int *depth = ir_alloc(sizeof *depth * (size_t)(s->stages.n + 1));
    for (int i = 0; i < s->stages.n; i++) {   /* stages come after what they read */
        Stage *st = s->stages.items[i];
        if (st->t->kind != T_COMPUTE)
            continue;
        PtrVec reads = {0};
        ir_expr_tensors(st->t->body, &reads);
        int d = 0;
        for (int j = 0; j < reads.n; j++) {
            const Tensor *r = reads.items[j];
            if (r != st->t && !ir_tensor_is_leaf(r) && stage_of(L, r)->attach == ATTACH_INLINE &&
                depth[stage_idx(L, r)] > d)
                d = depth[stage_idx(L, r)];
        }
        depth[i] = d + ir_expr_depth(st->t->body);
        if (depth[i] > MAX_INLINED_DEPTH)
            return ir_fail("%s: with the stages inlined into it, an expression %d operations deep, over the "
                           "limit of %d (compute one of them at the root)", st->t->name, depth[i], MAX_INLINED_DEPTH);
    }
    return 0;
}

static int setup(Lower *L, Schedule *s, PtrVec *roots)
{
    Program *p = s->prog;
    L->s = s;
    L->info = ir_alloc(sizeof *L->info * (size_t)(s->stages.n ? s->stages.n : 1));
    if (check_inline_depth(L))
        return -1;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (st->attach != ATTACH_AT)
            continue;
        Stage *root = st;
        for (int depth = 0; root->attach == ATTACH_AT; depth++) {
            if (depth > s->stages.n)
                return ir_fail("compute_at: %s is attached in a cycle", st->t->name);
            root = root->attach_stage;
        }
        if (root->attach == ATTACH_INLINE)
            return ir_fail("compute_at: %s is computed inside %s, which is inlined", st->t->name, root->t->name);
        for (int j = 0; j < s->stages.n; j++) {
            Stage *r = s->stages.items[j];
            if (r == st->attach_stage || r->attach == ATTACH_INLINE || ir_tensor_is_leaf(r->t))
                continue;
            if (r->attach == ATTACH_AT && r->attach_stage == st->attach_stage) {
                /* a sibling computed in the same loop nest, at the same loop or deeper */
                int ps = -1, pr = -1;
                for (int q = 0; q < st->attach_stage->leaf.n; q++) {
                    if (st->attach_stage->leaf.items[q] == st->attach_iv)
                        ps = q;
                    if (st->attach_stage->leaf.items[q] == r->attach_iv)
                        pr = q;
                }
                if (pr >= ps)
                    continue;
            }
            Expr *e = r->t->kind == T_COMPUTE ? r->t->body : r->t->update;
            if (reads_inlined(L, e, st->t) || (r->t->kind == T_SCAN && reads_inlined(L, r->t->init, st->t)))
                return ir_fail("compute_at(%s, %s, %s): %s is also read by %s", st->t->name,
                               st->attach_stage->t->name, st->attach_iv->var->name, st->t->name, r->t->name);
        }
        if (leaf_of_var(st->attach_stage, ir_varref(st->attach_iv->var)) < 0)
            return ir_fail("compute_at(%s, %s, %s): %s is no longer a loop of %s (it was split or fused later)",
                           st->t->name, st->attach_stage->t->name, st->attach_iv->var->name,
                           st->attach_iv->var->name, st->attach_stage->t->name);
    }

    /* index arithmetic is 32-bit: every tensor must be addressable with it */
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] == 0) {
                n = 0;
                break;
            }
            if (n > INT32_MAX / t->shape[d])
                return ir_fail("tensor %s is too large: kgen's index arithmetic is 32-bit (at most %d elements)",
                               t->name, INT32_MAX);
            n *= t->shape[d];
        }
    }

    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < p->tensors.n; i++) {
            Tensor *t = p->tensors.items[i];
            if (pass == 0 ? t->kind != T_PLACEHOLDER || t->is_output || t->loop_state
                          : pass == 1 ? t->kind != T_CONSTANT || t->is_output : !t->is_output)
                continue;   /* (an empty output may be a leaf: nothing computes it) */
            Buffer *b = ir_buffer_new(t->name, t->dtype, t->ndim, t->shape, SCOPE_PARAM);
            b->is_input = pass < 2;
            b->constant = pass == 1 ? t : NULL;
            L->info[stage_idx(L, t)].buf = b;
            ir_vec_push(&L->k->params, b, 1 << 20, "parameters");
        }
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if ((ir_tensor_is_leaf(t) && !t->loop_state) || t->is_output || st->attach != ATTACH_ROOT)
            continue;   /* (a run-time loop's state is an intermediate the model function sets) */
        Scope sc = st->scope == SCOPE_LOCAL && !t->loop_state ? SCOPE_LOCAL : SCOPE_WORKSPACE;
        Buffer *b = make_buffer(t->name, t->dtype, t->ndim, t->shape, sc, st);
        L->info[i].buf = b;
        ir_vec_push(roots, b, 1 << 20, "buffers");
        ir_vec_push(&L->k->locals, b, 1 << 20, "buffers");
    }
    return 0;
}

/* Does s store into a packed buffer (i4, u4, i2, u2, f4e2m1)? */
static int stores_packed(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return stores_packed(s->u.loop.body);
    case S_LET: return stores_packed(s->u.let.body);
    case S_IF: return stores_packed(s->u.cond.then) || stores_packed(s->u.cond.els);
    case S_ALLOC: return stores_packed(s->u.alloc.body);
    case S_STORE: return ir_dtype_is_packed(s->u.store.buf->dtype);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (stores_packed(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* s with every loop serial (unrolled ones stay unrolled) */
static Stmt *serialize(Stmt *s)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case S_FOR:
        return ir_for(s->u.loop.var, s->u.loop.min, s->u.loop.extent,
                      s->u.loop.kind == FOR_UNROLLED ? FOR_UNROLLED : FOR_SERIAL, serialize(s->u.loop.body));
    case S_LET: return ir_let(s->u.let.var, s->u.let.value, serialize(s->u.let.body));
    case S_IF: return ir_if_like(s, s->u.cond.cond, serialize(s->u.cond.then), serialize(s->u.cond.els));
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, serialize(s->u.alloc.body));
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof *items * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = serialize(s->u.seq.items[i]);
        return ir_seq(items, s->u.seq.n);
    }
    default: return s;
    }
}

/* The loop nest of one root stage (a compute, or both halves of a scan).
 *
 * A store into a packed buffer is a read-modify-write of the byte its element shares
 * with its neighbours, so two threads (or vector lanes) storing neighbours would lose
 * one of the two. A nest that stores into one therefore runs serially: its parallel,
 * vectorized and GPU-bound loops become serial loops (on a GPU the nest then runs as a
 * launch of one thread). Packed tensors are small (they come from Cast and
 * QuantizeLinear), and their readers keep their schedules. */
static Stmt *lower_root_nest(Lower *L, Stage *st);
static Stmt *lower_root(Lower *L, Stage *st)
{
    Stmt *nest = lower_root_nest(L, st);
    return nest && stores_packed(nest) ? serialize(nest) : nest;
}

static Stmt *lower_root_nest(Lower *L, Stage *st)
{
    Tensor *t = st->t;
    Expr *rmin[KG_MAX_DIMS] = {0};
    int64_t rext[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        rext[d] = t->shape[d];
    RangeMap none = {0};
    if (t->kind == T_COMPUTE)
        return lower_stage(L, st, rmin, rext, t->body, &none);
    rmin[0] = ir_idx(0);
    rext[0] = t->init_steps;
    Stmt *init = lower_stage(L, st, rmin, rext, t->init, &none);
    if (L->failed || t->shape[0] <= t->init_steps)
        return init;
    rmin[0] = ir_idx(t->init_steps);
    rext[0] = t->shape[0] - t->init_steps;
    Stmt *upd = lower_stage(L, st, rmin, rext, t->update, &none);
    return ir_seq2(init, upd);
}

/* Simplify, unroll, tensorize (ir/tensorize.c), check; -1 with ir_fail() when a loop
 * annotation cannot hold. */
static int finish(Stmt **b)
{
    *b = ir_simplify_stmt(*b);
    *b = ir_simplify_stmt(unroll(*b));
    if (!*b)
        return 0;   /* nothing to run: every tensor of the kernel is empty */
    Stmt *p = peel_heads(peel_tails(*b));
    if (p != *b)
        *b = p = ir_simplify_stmt(p);
    Stmt *u = unswitch(p);
    if (u != *b)
        *b = ir_simplify_stmt(u);
    if (ir_tensorize(b))
        return -1;
    return check_loops(*b, 0, 0);
}

Kernel *ir_lower(Schedule *s, const char *name)
{
    Lower L = {0};
    L.k = ir_alloc(sizeof *L.k);
    L.k->name = ir_strdup(name);
    PtrVec roots = {0};
    for (int i = 0; i < s->prog->tensors.n; i++) {
        const Tensor *t = s->prog->tensors.items[i];
        if (t->loop || t->loop_state) {
            ir_fail("%s: %s runs at run time, as a loop of a model function; one kernel cannot hold it", t->name,
                    (t->loop ? t->loop : t->loop_state)->name);
            return NULL;
        }
    }
    if (setup(&L, s, &roots))
        return NULL;
    int64_t off = 0;
    for (int i = 0; i < roots.n; i++) {
        Buffer *b = roots.items[i];
        if (b->scope != SCOPE_WORKSPACE)
            continue;
        b->ws_offset = off;
        off += (ir_dtype_size(b->dtype, b->size) + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
    }
    L.k->workspace_bytes = off;

    PtrVec body = {0};
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (ir_tensor_is_leaf(st->t))
            continue;
        note_stage(L.k, st);
        if (st->attach != ATTACH_ROOT)
            continue;
        Stmt *nest = lower_root(&L, st);
        if (L.failed)
            return NULL;
        ir_vec_push(&body, nest, 1 << 20, "statements");
    }
    Stmt *b = ir_seq((Stmt **)body.items, body.n);
    for (int i = roots.n - 1; i >= 0; i--)
        b = ir_allocate(roots.items[i], b);
    if (finish(&b))
        return NULL;
    L.k->body = b;
    return L.k;
}

/* ---------------------------------------------------------------- models */

static void stmt_buffers(const Stmt *s, PtrVec *out);

static void expr_buffers(const Expr *e, PtrVec *out)
{
    switch (e->kind) {
    case E_BIN:
        expr_buffers(e->u.bin.a, out);
        expr_buffers(e->u.bin.b, out);
        return;
    case E_UN: expr_buffers(e->u.un.a, out); return;
    case E_CAST:
    case E_BITCAST: expr_buffers(e->u.cast.a, out); return;
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            expr_buffers(e->u.call.args[i], out);
        return;
    case E_SELECT:
        expr_buffers(e->u.sel.cond, out);
        expr_buffers(e->u.sel.t, out);
        expr_buffers(e->u.sel.f, out);
        return;
    case E_LOAD:
        expr_buffers(e->u.load.index, out);
        for (int i = 0; i < out->n; i++)
            if (out->items[i] == e->u.load.buf)
                return;
        ir_vec_push(out, e->u.load.buf, 1 << 20, "buffers");
        return;
    default: return;
    }
}

static void stmt_buffers(const Stmt *s, PtrVec *out)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR:
        expr_buffers(s->u.loop.min, out);
        expr_buffers(s->u.loop.extent, out);
        stmt_buffers(s->u.loop.body, out);
        return;
    case S_LET:
        expr_buffers(s->u.let.value, out);
        stmt_buffers(s->u.let.body, out);
        return;
    case S_IF:
        expr_buffers(s->u.cond.cond, out);
        stmt_buffers(s->u.cond.then, out);
        stmt_buffers(s->u.cond.els, out);
        return;
    case S_STORE:
    case S_PREFETCH: {
        expr_buffers(s->u.store.index, out);
        if (s->kind == S_STORE)
            expr_buffers(s->u.store.value, out);
        int seen = 0;
        for (int i = 0; i < out->n && !seen; i++)
            seen = out->items[i] == s->u.store.buf;
        if (!seen)
            ir_vec_push(out, s->u.store.buf, 1 << 20, "buffers");
        return;
    }
    case S_ALLOC: stmt_buffers(s->u.alloc.body, out); return;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            stmt_buffers(s->u.seq.items[i], out);
        return;
    default: return;
    }
}

static int64_t aligned_bytes(const Model *m, const Buffer *b)
{
    int64_t a = m->arena_align;
    return (ir_dtype_size(b->dtype, b->size) + a - 1) / a * a;
}

/* Place arena buffers by liveness: largest first, each at the lowest offset that does
 * not overlap a placed buffer whose lifetime [first, last] (kernel indices) overlaps. */
static void plan_arena(Model *m, const int *first, const int *last)
{
    int n = m->arena.n;
    int *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    int *placed = malloc(sizeof *placed * (size_t)(n ? n : 1));
    if (!order || !placed)
        ir_die("out of memory");
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++)   /* stable insertion sort by size, largest first */
        for (int j = i; j > 0 && aligned_bytes(m, m->arena.items[order[j]]) > aligned_bytes(m, m->arena.items[order[j - 1]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int np = 0;
    m->arena_bytes = 0;
    for (int oi = 0; oi < n; oi++) {
        int i = order[oi];
        Buffer *b = m->arena.items[i];
        int64_t size = aligned_bytes(m, b), off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int q = 0; q < np; q++) {
                int j = placed[q];
                Buffer *o = m->arena.items[j];
                if (last[i] < first[j] || last[j] < first[i])
                    continue;   /* never live together */
                if (off < o->ws_offset + aligned_bytes(m, o) && o->ws_offset < off + size) {
                    off = o->ws_offset + aligned_bytes(m, o);
                    moved = 1;
                }
            }
        }
        b->ws_offset = off;
        placed[np++] = i;
        if (off + size > m->arena_bytes)
            m->arena_bytes = off + size;
    }
    /* the lower bound: the most bytes live at any one step */
    m->arena_lower_bound = 0;
    for (int k = 0; k < m->kernels.n; k++) {
        int64_t live = 0;
        for (int i = 0; i < n; i++)
            if (first[i] <= k && k <= last[i])
                live += aligned_bytes(m, m->arena.items[i]);
        if (live > m->arena_lower_bound)
            m->arena_lower_bound = live;
    }
    free(order);
    free(placed);
}

/* ---------------------------------------------------------------- in-place */

/* Does e load buffer b anywhere other than at index `at` (NULL: anywhere at all)? */
static int loads_other(const Expr *e, const Buffer *b, const Expr *at)
{
    switch (e->kind) {
    case E_LOAD:
        if (e->u.load.buf == b && (!at || !ir_expr_equal(e->u.load.index, at)))
            return 1;
        return loads_other(e->u.load.index, b, NULL);
    case E_BIN: return loads_other(e->u.bin.a, b, at) || loads_other(e->u.bin.b, b, at);
    case E_UN: return loads_other(e->u.un.a, b, at);
    case E_CAST:
    case E_BITCAST: return loads_other(e->u.cast.a, b, at);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (loads_other(e->u.call.args[i], b, at))
                return 1;
        return 0;
    case E_SELECT:
        return loads_other(e->u.sel.cond, b, at) || loads_other(e->u.sel.t, b, at) || loads_other(e->u.sel.f, b, at);
    default: return 0;
    }
}

/* Can out overwrite in, element by element? Legal when every read of `in` sits in the
 * value of a store to `out` at that store's own index, and nothing reads `out`: each
 * element of in is read only to compute the same element of out. */
static int inplace_ok(const Stmt *s, const Buffer *in, const Buffer *out)
{
    if (!s)
        return 1;
    switch (s->kind) {
    case S_FOR:
        return !loads_other(s->u.loop.min, in, NULL) && !loads_other(s->u.loop.extent, in, NULL) &&
               inplace_ok(s->u.loop.body, in, out);
    case S_LET: return !loads_other(s->u.let.value, in, NULL) && inplace_ok(s->u.let.body, in, out);
    case S_IF:
        return !loads_other(s->u.cond.cond, in, NULL) && !loads_other(s->u.cond.cond, out, NULL) &&
               inplace_ok(s->u.cond.then, in, out) && inplace_ok(s->u.cond.els, in, out);
    case S_STORE:
        if (loads_other(s->u.store.index, in, NULL) || loads_other(s->u.store.value, out, NULL) ||
            loads_other(s->u.store.index, out, NULL))
            return 0;
        return !loads_other(s->u.store.value, in, s->u.store.buf == out ? s->u.store.index : NULL);
    case S_PREFETCH: return !loads_other(s->u.store.index, in, NULL) && !loads_other(s->u.store.index, out, NULL);
    case S_ALLOC: return inplace_ok(s->u.alloc.body, in, out);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!inplace_ok(s->u.seq.items[i], in, out))
                return 0;
        return 1;
    default: return 1;
    }
}

/* e with loads of buffer `from` reading buffer `to` instead (same layout) */
static Expr *rebuf_expr(Expr *e, const Buffer *from, Buffer *to)
{
    switch (e->kind) {
    case E_LOAD: {
        Expr *i = rebuf_expr(e->u.load.index, from, to);
        return ir_load(e->u.load.buf == from ? to : e->u.load.buf, i);
    }
    case E_BIN: return ir_bin(e->u.bin.op, rebuf_expr(e->u.bin.a, from, to), rebuf_expr(e->u.bin.b, from, to));
    case E_UN: return ir_un(e->u.un.op, rebuf_expr(e->u.un.a, from, to));
    case E_CAST:
    case E_BITCAST: return ir_cast_like(e, rebuf_expr(e->u.cast.a, from, to));
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            args[i] = rebuf_expr(e->u.call.args[i], from, to);
        return ir_call(e->u.call.fn, args);
    }
    case E_SELECT:
        return ir_select(rebuf_expr(e->u.sel.cond, from, to), rebuf_expr(e->u.sel.t, from, to),
                         rebuf_expr(e->u.sel.f, from, to));
    default: return e;
    }
}

static Stmt *rebuf(Stmt *s, const Buffer *from, Buffer *to)
{
    if (!s)
        return NULL;
    switch (s->kind) {
    case S_FOR: {
        Stmt *r = ir_for(s->u.loop.var, rebuf_expr(s->u.loop.min, from, to), rebuf_expr(s->u.loop.extent, from, to),
                         s->u.loop.kind, rebuf(s->u.loop.body, from, to));
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_LET: return ir_let(s->u.let.var, rebuf_expr(s->u.let.value, from, to), rebuf(s->u.let.body, from, to));
    case S_IF:
        return ir_if_like(s, rebuf_expr(s->u.cond.cond, from, to), rebuf(s->u.cond.then, from, to),
                          rebuf(s->u.cond.els, from, to));
    case S_STORE:
        return ir_store(s->u.store.buf == from ? to : s->u.store.buf, rebuf_expr(s->u.store.index, from, to),
                        rebuf_expr(s->u.store.value, from, to));
    case S_PREFETCH:
        return ir_prefetch(s->u.store.buf == from ? to : s->u.store.buf, rebuf_expr(s->u.store.index, from, to));
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, rebuf(s->u.alloc.body, from, to));
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = rebuf(s->u.seq.items[i], from, to);
        return ir_seq(items, s->u.seq.n);
    }
    default: return s;
    }
}

/* Is guard g one of a's conditions (or NULL: no condition)? */
static int guard_within(const IrGuard *a, const IrGuard *g)
{
    for (; a; a = a->up)
        if (a == g)
            return 1;
    return g == NULL;
}

static const Buffer *model_buffer(const Model *m, const char *name)
{
    const PtrVec *lists[3] = {&m->params, &m->arena, &m->constants};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < lists[l]->n; i++)
            if (!strcmp(((const Buffer *)lists[l]->items[i])->name, name))
                return lists[l]->items[i];
    return NULL;
}

/* Kernel k, of a run-time If's branch g, runs only when g's conditions hold, where each
 * condition is a buffer of the model (not one computed inside a kernel). */
static void set_guards(const Model *m, Kernel *k, const IrGuard *g)
{
    int n = 0;
    for (const IrGuard *c = g; c; c = c->up)
        n++;
    if (n > IR_MAX_GUARDS)
        return;
    int depth = n;
    for (const IrGuard *c = g; c; c = c->up) {   /* innermost first: fill from the end */
        const Buffer *b = model_buffer(m, c->cond->name);
        if (!b || b->size < 1 || ir_dtype_is_storage(b->dtype))
            return;
        k->guard_buf[--n] = b;
        k->guard_value[n] = c->value;
    }
    k->nguards = depth;
    for (int i = 0; i < k->nguards; i++)
        ir_vec_push(&k->notes, ir_fmt("runs only if %s %s 0", k->guard_buf[i]->name, k->guard_value[i] ? "!=" : "=="),
                    1 << 20, "notes");
}

/* k's parameters in model order: inputs, constants, intermediates, outputs (buffers
 * allocated inside the kernel are in none of the lists and are left out) */
static void sort_params(const Model *m, Kernel *k)
{
    int n = 0;
    const PtrVec *order[4] = {&m->params, &m->constants, &m->arena, &m->params};
    Buffer **sorted = ir_alloc(sizeof *sorted * (size_t)(k->params.n + 1));
    for (int g = 0; g < 4; g++)
        for (int j = 0; j < order[g]->n; j++) {
            Buffer *b = order[g]->items[j];
            if ((g == 0 && !b->is_input) || (g == 3 && b->is_input))
                continue;
            for (int q = 0; q < k->params.n; q++)
                if (k->params.items[q] == b)
                    sorted[n++] = b;
        }
    memcpy(k->params.items, sorted, sizeof *sorted * (size_t)n);
    k->params.n = n;
}

/* ---------------------------------------------------------------- run-time loops */

/* dst = src, element by element (the same shape, maybe other strides) */
static Stmt *copy_stmt(Buffer *dst, Buffer *src)
{
    Var *v[KG_MAX_DIMS];
    Expr *di = ir_idx(0), *si = ir_idx(0);
    for (int d = 0; d < dst->ndim; d++) {
        v[d] = ir_var_new(ir_fmt("i%d", d), DT_INDEX);
        di = ir_add(di, ir_mul(ir_varref(v[d]), ir_idx(dst->strides[d])));
        si = ir_add(si, ir_mul(ir_varref(v[d]), ir_idx(src->strides[d])));
    }
    Stmt *st = ir_store(dst, di, ir_load(src, si));
    for (int d = dst->ndim - 1; d >= 0; d--)
        st = ir_for(v[d], ir_idx(0), ir_idx(dst->shape[d]), FOR_SERIAL, st);
    return st;
}

/* The model's buffer of tensor t of loop L (found by name: passes may have rebuilt t) */
static Buffer *loop_buffer(const Model *m, const IrLoop *L, const Tensor *t)
{
    Buffer *b = (Buffer *)model_buffer(m, t->name);
    if (!b)
        ir_fail("%s: %s, which the model function copies, has no buffer of its own (the schedule inlined it)",
                L->name, t->name);
    return b;
}

/* The kernel that sets L's states before its first iteration (next: 0), or the one that
 * copies the body's next values into them after each iteration (next: 1). */
static Kernel *loop_kernel(const Model *m, const IrLoop *L, int next)
{
    Stmt *items[IR_LOOP_MAX_STATES];
    int n = 0;
    Buffer *iter = loop_buffer(m, L, L->state[0]);
    if (!iter || L->nstate > IR_LOOP_MAX_STATES)
        return NULL;
    items[n++] = ir_store(iter, ir_idx(0), next ? ir_bin(OP_ADD, ir_load(iter, ir_idx(0)), ir_int(1, DT_I64))
                                                : ir_int(0, DT_I64));
    for (int i = 1; i < L->nstate; i++) {
        const Tensor *from = next ? L->next[i] : L->init[i];
        Buffer *dst = loop_buffer(m, L, L->state[i]), *src = from ? loop_buffer(m, L, from) : NULL;
        if (!dst || (from && !src))
            return NULL;
        if (src)
            items[n++] = copy_stmt(dst, src);
        else if (i == 1 && !next)
            items[n++] = ir_store(dst, ir_idx(0), ir_bool(1));   /* no condition: run */
    }
    Kernel *k = ir_alloc(sizeof *k);
    k->name = ir_fmt("%s_%s_%s", m->name, L->state[0]->name, next ? "next" : "start");
    k->internal = 1;
    k->body = ir_simplify_stmt(ir_seq(items, n));
    stmt_buffers(k->body, &k->params);
    sort_params(m, k);
    ir_vec_push(&k->notes, ir_fmt(next ? "%s: the next iteration's states (after each iteration)"
                                       : "%s: the states before the first iteration", L->name), 1 << 20, "notes");
    return k;
}


/* Places the run-time loops (IrLoop) in m's kernel sequence; kloop[k] is the loop kernel k
 * computes a tensor of (NULL: none). Each loop's body kernels are contiguous; its start
 * kernel goes before them and its next kernel after them. A loop whose body computes
 * nothing leaves its states at their initial values: only its start kernel runs. */
static int place_loops(Model *m, const Schedule *s, const PtrVec *kloop)
{
    PtrVec loops = {0};
    for (int i = 0; i < s->stages.n; i++) {
        const Tensor *t = ((Stage *)s->stages.items[i])->t;
        if (t->loop_state && t->loop_state->state[0] == t)
            ir_vec_push(&loops, (void *)t->loop_state, 1 << 16, "loops");
    }
    if (!loops.n)
        return 0;
    int nk = m->kernels.n, nl = loops.n;
    int *b = ir_alloc(sizeof *b * (size_t)nl), *e = ir_alloc(sizeof *e * (size_t)nl);
    for (int j = 0; j < nl; j++) {
        b[j] = e[j] = -1;
        for (int k = 0; k < nk; k++)
            if (kloop->items[k] == loops.items[j]) {
                if (b[j] < 0)
                    b[j] = k;
                e[j] = k;
            }
        const IrLoop *L = loops.items[j];
        if (b[j] >= 0)
            continue;
        /* no body kernel: before the first kernel that reads a state */
        b[j] = nk;
        for (int k = nk - 1; k >= 0; k--)
            for (int i = 0; i < L->nstate; i++) {
                const Buffer *sb = model_buffer(m, L->state[i]->name);
                Kernel *kk = m->kernels.items[k];
                for (int q = 0; q < kk->params.n; q++)
                    if (kk->params.items[q] == sb)
                        b[j] = k;
            }
        e[j] = b[j] - 1;
    }
    for (int j = 0; j < nl; j++)
        for (int i = 0; i < nl; i++)
            if (i != j && b[i] <= e[j] && b[i] >= b[j])
                return ir_fail("%s and %s: the kernels of two run-time loops interleave", ((IrLoop *)loops.items[j])->name,
                               ((IrLoop *)loops.items[i])->name);
    /* nothing after a loop reads what its body computes (only its states) */
    for (int j = 0; j < nl; j++)
        for (int k = e[j] + 1; k < nk; k++) {
            Kernel *kk = m->kernels.items[k];
            for (int q = 0; q < kk->params.n; q++)
                for (int r = b[j]; r <= e[j]; r++)
                    if (ir_stmt_stores(((Kernel *)m->kernels.items[r])->body, kk->params.items[q]))
                        return ir_fail("%s: kernel %s, after the loop, reads %s, which the loop's body computes",
                                       ((IrLoop *)loops.items[j])->name, kk->name,
                                       ((Buffer *)kk->params.items[q])->name);
        }
    PtrVec out = {0};
    m->loops = ir_alloc(sizeof *m->loops * (size_t)nl);
    int *slot = ir_alloc(sizeof *slot * (size_t)nl);   /* loop j's ModelLoop */
    for (int k = 0; k <= nk; k++) {
        for (int j = 0; j < nl; j++) {
            const IrLoop *L = loops.items[j];
            if (b[j] == k) {
                Kernel *start = loop_kernel(m, L, 0);
                if (!start)
                    return -1;
                ir_vec_push(&out, start, 1 << 20, "kernels");
                if (e[j] < b[j])
                    continue;   /* no body */
                slot[j] = m->nloops;
                ModelLoop *ml = &m->loops[m->nloops++];
                ml->name = L->name;
                ml->begin = out.n - 1;
                ml->iter = model_buffer(m, L->state[0]->name);
                ml->cond = model_buffer(m, L->state[1]->name);
                ml->trip = L->trip ? loop_buffer(m, L, L->trip) : NULL;
                ml->trip_count = L->trip_count;
                if (L->trip && !ml->trip)
                    return -1;
            }
        }
        if (k < nk)
            ir_vec_push(&out, m->kernels.items[k], 1 << 20, "kernels");
        for (int j = 0; j < nl; j++)
            if (e[j] == k && e[j] >= b[j]) {
                Kernel *next = loop_kernel(m, loops.items[j], 1);
                if (!next)
                    return -1;
                ir_vec_push(&out, next, 1 << 20, "kernels");
                m->loops[slot[j]].end = out.n;
            }
    }
    m->kernels = out;
    return 0;
}

Model *ir_lower_model(Schedule *s, const char *name)
{
    Lower L = {0};
    L.k = ir_alloc(sizeof *L.k);   /* collects the model's parameters */
    L.k->name = ir_strdup(name);
    PtrVec roots = {0};
    if (setup(&L, s, &roots))
        return NULL;
    Model *m = ir_alloc(sizeof *m);
    m->arena_align = s->arena_align > 0 ? s->arena_align : ALIGN_BYTES;
    m->name = ir_strdup(name);
    for (int i = 0; i < L.k->params.n; i++) {
        Buffer *b = L.k->params.items[i];
        ir_vec_push(b->constant ? &m->constants : &m->params, b, 1 << 20, "buffers");
    }
    for (int i = 0; i < roots.n; i++)
        ir_vec_push(&m->arena, roots.items[i], 1 << 20, "buffers");

    PtrVec kloop = {0};   /* per kernel: the run-time loop it runs in, or NULL */
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (ir_tensor_is_leaf(st->t) || st->attach != ATTACH_ROOT)
            continue;
        PtrVec group = {0};
        L.group = &group;
        Stmt *nest = lower_root(&L, st);
        L.group = NULL;
        if (L.failed || finish(&nest))
            return NULL;
        Kernel *k = ir_alloc(sizeof *k);
        k->name = ir_fmt("%s_%s", name, st->t->name);
        k->internal = 1;
        k->body = nest;
        stmt_buffers(nest, &k->params);
        sort_params(m, k);
        /* the header comment: what this kernel computes and fuses */
        ir_vec_push(&k->notes, ir_fmt("computes %s%s%s", st->t->name, st->t->comment ? ": " : "",
                                      st->t->comment ? st->t->comment : ""), 1 << 20, "notes");
        const IrGuard *gd = st->t->guard;
        for (int g = 0; g < group.n; g++) {
            Tensor *t = group.items[g];
            ir_vec_push(&k->notes, ir_fmt("fuses %s%s%s", t->name, t->comment ? ": " : "", t->comment ? t->comment : ""),
                        1 << 20, "notes");
            if (!guard_within(t->guard, gd))
                gd = NULL;   /* it computes something needed outside the branch */
        }
        set_guards(m, k, gd);
        if (st->t->loop)
            ir_vec_push(&k->notes, ir_fmt("runs in every iteration of %s", st->t->loop->name), 1 << 20, "notes");
        ir_vec_push(&m->kernels, k, 1 << 20, "kernels");
        ir_vec_push(&kloop, (void *)st->t->loop, 1 << 20, "kernels");
    }
    if (place_loops(m, s, &kloop))
        return NULL;
    /* constants no kernel reads (a conv's weights once the layout pass packed a blocked
     * copy, a shape input that was folded) are not emitted: the binary carries each
     * weight once */
    int nc = 0;
    for (int i = 0; i < m->constants.n; i++) {
        Buffer *b = m->constants.items[i];
        int used = 0;
        for (int k = 0; k < m->kernels.n && !used; k++) {
            Kernel *kk = m->kernels.items[k];
            for (int q = 0; q < kk->params.n && !used; q++)
                used = kk->params.items[q] == b;
        }
        if (used)
            m->constants.items[nc++] = b;
    }
    m->constants.n = nc;
    /* liveness of the intermediates over the kernel sequence */
    int na = m->arena.n;
    int *first = malloc(sizeof *first * (size_t)(na ? na : 1)), *last = malloc(sizeof *last * (size_t)(na ? na : 1));
    if (!first || !last)
        ir_die("out of memory");
    for (int i = 0; i < na; i++) {
        first[i] = m->kernels.n;
        last[i] = -1;
        for (int k = 0; k < m->kernels.n; k++) {
            Kernel *kk = m->kernels.items[k];
            for (int q = 0; q < kk->params.n; q++)
                if (kk->params.items[q] == m->arena.items[i]) {
                    if (k < first[i])
                        first[i] = k;
                    last[i] = k;
                }
        }
        if (last[i] < 0)
            first[i] = last[i] = 0;
    }
    /* a run-time loop's states live through the whole loop, and so does whatever the loop
     * reads from before it (each iteration reads it again) */
    unsigned char *state = calloc((size_t)(na ? na : 1), 1);
    if (!state)
        ir_die("out of memory");
    for (int j = 0; j < m->nloops; j++) {
        const ModelLoop *ml = &m->loops[j];
        for (int i = 0; i < na; i++) {
            int is_state = 0;
            for (int k = ml->begin; k < ml->end && !is_state; k++) {
                Kernel *kk = m->kernels.items[k];
                is_state = (k == ml->begin || k == ml->end - 1) && ir_stmt_stores(kk->body, m->arena.items[i]);
            }
            state[i] |= is_state;
            if (is_state && first[i] > ml->begin)
                first[i] = ml->begin;
            if ((is_state || m->arena.items[i] == ml->trip || (first[i] < ml->begin && last[i] >= ml->begin)) &&
                last[i] < ml->end - 1)
                last[i] = ml->end - 1;
        }
    }
    /* in place: a kernel's output takes the place of an input of the same size that dies
     * there, when each element is read only to compute the same element */
    int *alias = malloc(sizeof *alias * (size_t)(na ? na : 1));
    unsigned char *taken = calloc((size_t)(na ? na : 1), 1);   /* taken[i]: some alias[o] == i */
    if (!alias || !taken)
        ir_die("out of memory");
    for (int o = 0; o < na; o++)
        alias[o] = -1;   /* all of them before any is read */
    for (int o = 0; o < na; o++) {
        Buffer *ob = m->arena.items[o];
        for (int i = 0; i < na && alias[o] < 0; i++) {
            Buffer *ib = m->arena.items[i];
            /* the same type, not only the same size: the kernel's loads of ib become loads of
             * ob, which would read ib's bits as ob's type */
            if (i == o || taken[i] || alias[i] >= 0 || state[o] || last[i] != first[o] || ib->size != ob->size ||
                ib->dtype != ob->dtype || ib->strides[0] != ob->strides[0])
                continue;
            Kernel *kk = m->kernels.items[first[o]];
            if (inplace_ok(kk->body, ib, ob)) {
                /* one pointer for both: two restrict parameters may not alias */
                alias[o] = i;
                taken[i] = 1;
                kk->body = rebuf(kk->body, ib, ob);
                int n = 0;
                for (int q = 0; q < kk->params.n; q++)
                    if (kk->params.items[q] != ib)
                        kk->params.items[n++] = kk->params.items[q];
                kk->params.n = n;
                ir_vec_push(&kk->notes, ir_fmt("writes %s in place of %s", ob->name, ib->name), 1 << 20, "notes");
            }
        }
    }
    /* an aliased output is planned as part of its input: one lifetime, one place */
    PtrVec own = m->arena;
    PtrVec roots2 = {0};
    int *f2 = malloc(sizeof *f2 * (size_t)(na ? na : 1)), *l2 = malloc(sizeof *l2 * (size_t)(na ? na : 1));
    if (!f2 || !l2)
        ir_die("out of memory");
    int nr = 0;
    for (int i = 0; i < na; i++) {
        if (alias[i] >= 0)
            continue;
        f2[nr] = first[i];
        l2[nr] = last[i];
        for (int o = 0; o < na; o++)
            for (int j = o; j >= 0 && alias[j] >= 0; j = alias[j])
                if (alias[j] == i && last[o] > l2[nr])
                    l2[nr] = last[o];
        ir_vec_push(&roots2, m->arena.items[i], 1 << 20, "buffers");
        nr++;
    }
    m->arena = roots2;
    plan_arena(m, f2, l2);
    m->arena = own;
    for (int o = 0; o < na; o++) {
        int r = o;
        while (alias[r] >= 0)
            r = alias[r];
        ((Buffer *)m->arena.items[o])->ws_offset = ((Buffer *)m->arena.items[r])->ws_offset;
    }
    m->ninplace = 0;
    for (int o = 0; o < na; o++)
        m->ninplace += alias[o] >= 0;
    free(alias);
    free(taken);
    free(state);
    free(f2);
    free(l2);
    free(first);
    free(last);
    return m;
}
