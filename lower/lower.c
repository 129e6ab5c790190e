/* lower.c - from a scheduled tensor program to loop IR: each root stage's loop nest, and
 * ir_lower (one kernel of them all).
 * requires: a verified program and a schedule whose primitives succeeded;
 * produces: loop nests over flat buffers, which the loop passes (passes.c) then simplify,
 * unroll, peel, unswitch, tensorize and check.
 *
 * Each stage becomes a loop nest over its leaf axes; root axis values are rebuilt from
 * the leaves through the split/fuse relations; non-divisible splits get guards placed at
 * the shallowest loop that defines them; stages attached with compute_at are computed
 * inside their consumer's loop over the region the consumer reads there (found by
 * affine interval analysis of its accesses), into a local buffer of constant size.
 */
#include "passes.h"

#include <string.h>

#define MAX_IV 256

/* Pending work produced while lowering an expression: statements to run before the use
 * and buffers to allocate around it. */
typedef struct {
    PtrVec pre;
    PtrVec allocs;
} Pending;

int lower_stage_idx(const Lower *L, const Tensor *t)
{
    if (t->id < 0 || t->id >= L->s->stages.n || ((Stage *)L->s->stages.items[t->id])->t != t)
        ir_die("stage numbering out of sync for %s", t->name);
    return t->id;
}

Stage *lower_stage_of(const Lower *L, const Tensor *t) { return L->s->stages.items[lower_stage_idx(L, t)]; }

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

/* Substitute inlined tensors into e (recursively), so accesses name only real buffers.
 * Operands are taken one after the other (ir_expr_map): inlining records what it fuses
 * (L->group), in the order it meets the tensors. */
static Expr *inline_at(Expr *e, void *ctx)
{
    Lower *L = ctx;
    e = ir_expr_map(e, inline_at, L);
    if (e->kind != E_ACCESS)
        return e;
    Tensor *t = e->u.access.t;
    if (t->kind != T_COMPUTE || lower_stage_of(L, t)->attach != ATTACH_INLINE)
        return e;
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
    return inline_at(ir_subst(t->body, vars, e->u.access.idx, t->ndim), L);
}

static Expr *inline_expr(Lower *L, Expr *e) { return inline_at(e, L); }

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
        sum = ir_bin(OP_ADD, sum, ir_bin(OP_MUL, i, ir_buffer_stride(b, d)));
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
    /* (an axis over a run-time dim runs to its extent) */
    for (int i = n - 1; i >= 0; i--)
        body = ir_for(axes[i]->var, ir_idx(0), axes[i]->dyn ? axes[i]->dyn : ir_idx(axes[i]->extent), FOR_SERIAL,
                      body);
    return body;
}

/* What lower_at works in: the lowering, and where the statements an expression needs go. */
typedef struct {
    Lower *L;
    Pending *p;
} ExprCtx;

static Expr *lower_expr(Lower *L, Expr *e, Pending *p);

/* e in loop IR: accesses become loads of their buffers; a select whose sides need
 * statements, and a reduction, become statements (pending) and a load of their result. */
static Expr *lower_at(Expr *e, void *ctx)
{
    Lower *L = ((ExprCtx *)ctx)->L;
    Pending *p = ((ExprCtx *)ctx)->p;
    switch (e->kind) {
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
        Expr *x = ir_expr_map(e, lower_at, ctx);   /* the indices */
        StageInfo *si = &L->info[lower_stage_idx(L, x->u.access.t)];
        if (!si->buf)
            ir_die("no buffer for %s", x->u.access.t->name);
        return ir_load(si->buf, flat_index(si->buf, x->u.access.idx, si->rmin));
    }
    default: return ir_expr_map(e, lower_at, ctx);
    }
}

static Expr *lower_expr(Lower *L, Expr *e, Pending *p)
{
    ExprCtx c = {L, p};
    return lower_at(e, &c);
}

/* ---------------------------------------------------------------- stages */

typedef struct {
    IterVar *iv;
    int64_t ext;
    Expr *dext;      /* a run-time dim's axis: its run-time extent (ext is the bound), or NULL */
    int exact;       /* a part of a fused run-time axis: its value stays below dext wherever
                        the fused one is in range (no guard of its own) */
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
    m->items[m->n] = (IvInfo){iv, 0, NULL, 0, NULL};
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

/* Can iv's loop run to a run-time extent? Not a vector, unrolled, tensorized or thread
 * one: those keep the bound's constant extent and a guard. A loop bound to a block index
 * can: the host computes the grid at run time (lower/launch.c). */
static int runtime_loop(const IterVar *iv)
{
    return iv->ann == ANN_NONE || iv->ann == ANN_PARALLEL ||
           (iv->ann == ANN_BIND && iv->bind_tag && !strncmp(iv->bind_tag, "blockIdx.", 9));
}

/* Is st a GPU stage (a loop bound to a GPU index)? Its fused run-time axes iterate over
 * the run-time extents (the grid shrinks with them); so do a CPU stage's parallel ones
 * (threads share the work there is); its other fused axes keep the bound's constant
 * divisors. */
static int stage_is_gpu(const Stage *st)
{
    for (int i = 0; i < st->leaf.n; i++)
        if (((const IterVar *)st->leaf.items[i])->ann == ANN_BIND)
            return 1;
    return 0;
}

static int st_is_leaf(const Stage *st, const IterVar *iv)
{
    for (int i = 0; i < st->leaf.n; i++)
        if (st->leaf.items[i] == iv)
            return 1;
    return 0;
}

/* The run-time extent of spatial root axis d of t over [rmin, rmin + rext): dim d's run-time
 * extent less a constant start when the region runs to the tensor's end, else NULL (a
 * region of another size is guarded instead). */
static Expr *root_dext(const Tensor *t, int d, Expr *rmin, int64_t rext)
{
    int64_t c = 0;
    if (!t->dyn[d] || (rmin && !ir_expr_is_const(rmin, &c)) || c + rext != t->shape[d])
        return NULL;
    return c ? ir_simplify(ir_add(t->dyn[d], ir_idx(-c)), NULL) : t->dyn[d];
}

/* A leaf loop's extent: the run-time one where it may have it */
static Expr *loop_extent(const IvInfo *ii)
{
    return ii->dext && runtime_loop(ii->iv) ? ii->dext : ir_idx(ii->ext);
}

int lower_leaf_of_var(const Stage *st, const Expr *e)
{
    int deepest = -1;
    for (int i = 0; i < st->leaf.n; i++)
        if (ir_expr_uses_var(e, ((IterVar *)st->leaf.items[i])->var))
            deepest = i;
    return deepest;
}

/* The reduce axes of the reductions in e, outermost first (at most MAX_IV in all). */
typedef struct {
    IterVar **out;
    int *n;
} AxesCtx;

static int reduce_axes_of(const Expr *e, const void *ctx)
{
    const AxesCtx *c = ctx;
    if (e->kind == E_REDUCE)
        for (int i = 0; i < e->u.reduce.naxes && *c->n < MAX_IV; i++)
            c->out[(*c->n)++] = e->u.reduce.axes[i];
    return 0;   /* on through every subexpression */
}

static void collect_reduce_axes(const Expr *e, IterVar **out, int *n)
{
    AxesCtx c = {out, n};
    ir_expr_find((Expr *)e, reduce_axes_of, &c);   /* (changes nothing) */
}

/* The accesses of tensor t in e, each after the accesses in its indices. */
typedef struct {
    const Tensor *t;
    PtrVec *out;
} AccessCtx;

static Expr *accesses_of(Expr *e, void *ctx)
{
    AccessCtx *c = ctx;
    ir_expr_map(e, accesses_of, c);   /* a walk: the callback returns what it is given */
    if (e->kind == E_ACCESS && e->u.access.t == c->t)
        ir_vec_push(c->out, e, 1 << 20, "accesses");
    return e;
}

static void collect_accesses(const Expr *e, const Tensor *t, PtrVec *out)
{
    AccessCtx c = {t, out};
    accesses_of((Expr *)e, &c);   /* (changes nothing) */
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
        StageInfo *ri = &L->info[lower_stage_idx(L, R->t)];
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
    StageInfo *si = &L->info[lower_stage_idx(L, t)];
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

/* if (c) s. Every thread of a GPU block must reach each barrier, so a guard over code with
 * barriers (a tile that overhangs the tensor, with shared stages inside) moves down to the
 * largest parts without one: the loops and barriers run for all threads, the work of the
 * threads outside the tensor is skipped. (A shared stage's copy carries its own guards.) */
static Stmt *guard(Lower *L, Expr *c, Stmt *s)
{
    if (s && s->kind == S_IF && !s->u.cond.els && ir_expr_equal(s->u.cond.cond, c))
        return s;     /* already guarded so */
    if (!ir_stmt_has_barrier(s))
        return ir_if(c, s, NULL);
    switch (s->kind) {
    case S_FOR: return ir_for_like(s, s->u.loop.min, s->u.loop.extent, guard(L, c, s->u.loop.body));
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
    const Buffer *b = L->info[lower_stage_idx(L, t)].buf;
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
    int nspatial = t->ndim, gpu = stage_is_gpu(st);
    for (int i = 0; i < st->root.n; i++) {
        IterVar *iv = st->root.items[i];
        IvInfo *ii = ivm(&ivs, iv, 1);
        ii->ext = i < nspatial ? rext[i] : iv->extent;
        /* a run-time extent: a root stage's spatial axes over the whole tensor (or from a
         * constant start to its end: a scan's update steps), reduce axes */
        ii->dext = i < nspatial ? root_dext(t, i, rmin[i], rext[i]) : iv->dyn;
    }
    /* extents forward through the relations (run-time ones to the outer axes of splits:
     * their loops run to ceil(extent / factor); the guards below hold the rest) */
    for (int r = 0; r < st->nrels; r++) {
        Relation *rel = &st->rels[r];
        if (rel->kind == REL_SPLIT) {
            IvInfo *pi = ivm(&ivs, rel->parent, 0);
            int64_t pe = pi->ext;
            int64_t in = rel->factor < pe ? rel->factor : pe;
            Expr *pd = pi->dext;
            ivm(&ivs, rel->inner, 1)->ext = in;
            ivm(&ivs, rel->outer, 1)->ext = (pe + rel->factor - 1) / rel->factor;
            ivm(&ivs, rel->outer, 0)->dext =
                pd ? ir_simplify(ir_bin(OP_FLOORDIV, ir_add(pd, ir_idx(rel->factor - 1)), ir_idx(rel->factor)), NULL)
                   : NULL;
        } else {
            IvInfo *oi = ivm(&ivs, rel->outer, 0), *ii = ivm(&ivs, rel->inner, 0), *fi = ivm(&ivs, rel->fused, 1);
            fi->ext = oi->ext * ii->ext;
            /* a GPU stage's fused run-time axis, or a CPU stage's parallel one: the product
             * of the run-time extents, taken apart by them below (its parts exact: only the
             * fused axis is guarded) */
            if ((gpu || rel->fused->ann == ANN_PARALLEL) && (oi->dext || ii->dext)) {
                fi->dext = ir_simplify(ir_bin(OP_MUL, oi->dext ? oi->dext : ir_idx(oi->ext),
                                              ii->dext ? ii->dext : ir_idx(ii->ext)), NULL);
                oi->exact = ii->exact = 1;
            }
        }
    }
    /* unroll and vectorize limits apply to the extents in force here (compute_at narrows) */
    for (int i = 0; i < st->leaf.n; i++) {
        IterVar *iv = st->leaf.items[i];
        int64_t e = ivm(&ivs, iv, 0)->ext;
        if ((iv->ann == ANN_UNROLL && e > IR_MAX_UNROLL) ||
            ((iv->ann == ANN_VECTORIZE || iv->ann == ANN_TENSORIZE) && e > IR_MAX_VECTOR)) {
            L->failed = ir_fail("%s: axis %s of %s has extent %lld, above the limit of %d (split it first)",
                                iv->ann == ANN_UNROLL ? "unroll" : iv->ann == ANN_VECTORIZE ? "vectorize" : "tensorize",
                                iv->var->name, t->name, (long long)e,
                                iv->ann == ANN_UNROLL ? IR_MAX_UNROLL : IR_MAX_VECTOR);
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
            if (oe > 1 && oe * rel->factor != pi->ext && !pi->dext)   /* (run-time: guarded below) */
                ir_vec_push(rel->parent->kind == IV_REDUCE ? &rguards : &guards,
                            ir_bin(OP_LT, pi->value, ir_idx(pi->ext)), 1 << 20, "guards");
        } else {
            IvInfo *fi = ivm(&ivs, rel->fused, 0), *ii = ivm(&ivs, rel->inner, 0), *oi = ivm(&ivs, rel->outer, 0);
            Expr *f = fi->value, *ie = fi->dext && ii->dext ? ii->dext : ir_idx(ii->ext);
            oi->value = ir_bin(OP_FLOORDIV, f, ie);
            ii->value = ir_bin(OP_FLOORMOD, f, ie);
            /* a CPU stage's constant outer part over a run-time inner one: f / E stays
             * below the part's extent, which the simplifier cannot see through E; said
             * as a min (0 for a single one) so the regions read from it need no guards
             * (a guarded tile with an unguarded copy out reads as uninitialised to gcc) */
            if (!gpu && fi->dext && ii->dext && !oi->dext) {
                oi->value = oi->ext == 1 ? ir_idx(0) : ir_bin(OP_MIN, oi->value, ir_idx(oi->ext - 1));
                if (oi->ext == 1)
                    ii->value = f;
            }
            /* a run-time outer part over a constant inner one (batch by heads): f / c
             * stays below the outer extent E; said as min(f / c, E - 1) so that a stage
             * computed at it (a reduction's tile) needs no guard of E either */
            if (!gpu && fi->dext && oi->dext && !ii->dext && ii->ext > 1)
                oi->value = ir_bin(OP_MIN, oi->value, ir_sub(oi->dext, ir_idx(1)));
        }
    }
    /* a fused run-time axis whose loops do not end at its extent exactly (split, or a
     * thread loop over the bound): guard it (its parts need none then) */
    for (int i = 0; i < ivs.n; i++) {
        IvInfo *fi = &ivs.items[i];
        int root = 0;
        for (int j = 0; j < st->root.n; j++)
            root |= st->root.items[j] == fi->iv;
        if (root || !fi->dext || fi->exact || (runtime_loop(fi->iv) && st_is_leaf(st, fi->iv)))
            continue;
        for (int r = 0; r < st->nrels; r++)
            if (st->rels[r].kind == REL_FUSE && st->rels[r].fused == fi->iv)
                ir_vec_push(fi->iv->kind == IV_REDUCE ? &rguards : &guards, ir_bin(OP_LT, fi->value, fi->dext),
                            1 << 20, "guards");
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
        IvInfo *ri = ivm(&ivs, iv, 0);
        if (ri->dext) {
            /* a run-time extent the leaf loops do not end at exactly: guard it (not a part
             * of a fused run-time axis: the fused one is guarded) */
            if (!ri->exact && !(runtime_loop(iv) && st_is_leaf(st, iv)))
                ir_vec_push(iv->kind == IV_REDUCE ? &rguards : &guards, ir_bin(OP_LT, v, ri->dext), 1 << 20, "guards");
            if (i < nspatial && rmin[i])
                v = ir_bin(OP_ADD, rmin[i], v);
        } else if (i < nspatial && rmin[i]) {
            v = ir_bin(OP_ADD, rmin[i], v);
            /* a region may reach past the tensor (tails, halos): guard it */
            ir_vec_push(&guards, ir_bin(OP_AND, ir_bin(OP_GE, v, ir_idx(0)), ir_bin(OP_LT, v, ir_tensor_dim(t, i))),
                        1 << 20, "guards");
        } else if (i < nspatial && t->dyn[i]) {
            ir_vec_push(&guards, ir_bin(OP_LT, v, t->dyn[i]), 1 << 20, "guards");
        }
        vars[nv] = iv->var;
        vals[nv++] = v;
    }
    if (body->kind == E_REDUCE && body->u.reduce.naxes == 0)   /* a reduction over nothing */
        body = combine(body->u.reduce.op, ir_reduce_identity(body->u.reduce.op, body->dtype), body->u.reduce.body);
    int is_reduce = body->kind == E_REDUCE;
    Expr *value = inline_expr(L, ir_subst(is_reduce ? body->u.reduce.body : body, vars, vals, nv));
    StageInfo *si = &L->info[lower_stage_idx(L, t)];
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
        StageInfo *pi = &L->info[lower_stage_idx(L, P->t)];
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
                    if (lower_leaf_of_var(st, c) == p - 1)
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
            cur = ir_allocate(L->info[lower_stage_idx(L, P->t)].buf, ir_seq2(ps, cur));
        }
        /* the reduction's initial value, before its first reduce loop */
        if (is_reduce && p - 1 == first_red) {
            Stmt *init = ir_store(si->buf, findex, ir_reduce_identity(body->u.reduce.op, t->dtype));
            /* (a register accumulator that the shared-memory loop updates unguarded is
             * initialized so too: every thread's is then defined) */
            int own = si->buf->scope == SCOPE_LOCAL && ir_stmt_has_barrier(cur);
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
            Stmt *loop = ir_for(iv->var, ir_idx(0), loop_extent(ivm(&ivs, iv, 0)), for_kind(iv), cur);
            if (iv->bind_tag)
                loop->u.loop.bind_tag = iv->bind_tag;
            loop->u.loop.tensorize = iv->tensorize;
            cur = ir_seq2(init, loop);
            continue;
        }
        Stmt *loop = ir_for(iv->var, ir_idx(0), loop_extent(ivm(&ivs, iv, 0)), for_kind(iv), cur);
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

/* Can workspace buffer b of t be laid out compactly at t's run-time extents (Buffer.run_ext)?
 * Not a packed type (its elements share bytes), not a buffer padded for alignment (the
 * schedule chose its strides), and not over a dim computed from values: the model function
 * places its intermediates before the first kernel runs, when such a dim is not known yet. */
static int compact_for_run(const Program *p, const Buffer *b, const Tensor *t)
{
    int64_t n = 1;
    int dyn = 0;
    for (int d = 0; d < b->ndim; d++) {
        n *= b->shape[d];
        dyn |= t->dyn[d] != NULL;
        for (int i = 0; i < p->dims.n && t->dyn[d]; i++) {
            const IrDim *dm = p->dims.items[i];
            if (dm->count && ir_expr_uses_var(t->dyn[d], dm->var))
                return 0;
        }
    }
    return dyn && b->ndim == t->ndim && n == b->size && !ir_dtype_is_packed(b->dtype);
}

int lower_setup(Lower *L, Schedule *s, PtrVec *roots)
{
    Program *p = s->prog;
    L->s = s;
    L->info = ir_alloc(sizeof *L->info * (size_t)(s->stages.n ? s->stages.n : 1));
    if (lower_check_schedule(L))
        return -1;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < p->tensors.n; i++) {
            Tensor *t = p->tensors.items[i];
            if (pass == 0 ? t->kind != T_PLACEHOLDER || t->is_output || t->loop_state
                          : pass == 1 ? t->kind != T_CONSTANT || t->is_output : !t->is_output)
                continue;   /* (an empty output may be a leaf: nothing computes it) */
            Buffer *b = ir_buffer_new(t->name, t->dtype, t->ndim, t->shape, SCOPE_PARAM);
            memcpy(b->dyn, t->dyn, sizeof b->dyn);   /* compact for the run-time extents */
            b->is_input = pass < 2;
            b->constant = pass == 1 ? t : NULL;
            L->info[lower_stage_idx(L, t)].buf = b;
            ir_vec_push(&L->k->params, b, 1 << 20, "parameters");
        }
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if ((ir_tensor_is_leaf(t) && !t->loop_state) || t->is_output || st->attach != ATTACH_ROOT)
            continue;   /* (a run-time loop's state is an intermediate the model function sets) */
        Scope sc = st->scope == SCOPE_LOCAL && !t->loop_state ? SCOPE_LOCAL : SCOPE_WORKSPACE;
        Buffer *b = make_buffer(t->name, t->dtype, t->ndim, t->shape, sc, st);
        if (sc == SCOPE_WORKSPACE && compact_for_run(p, b, t))
            memcpy(b->run_ext, t->dyn, sizeof b->run_ext);
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
static Stmt *serialize(Stmt *s, void *ctx)
{
    if (!s)
        return NULL;
    if (s->kind != S_FOR)
        return ir_stmt_map(s, serialize, NULL, ctx);
    return ir_for(s->u.loop.var, s->u.loop.min, s->u.loop.extent,
                  s->u.loop.kind == FOR_UNROLLED ? FOR_UNROLLED : FOR_SERIAL, serialize(s->u.loop.body, ctx));
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
Stmt *lower_root(Lower *L, Stage *st)
{
    Stmt *nest = lower_root_nest(L, st);
    return nest && stores_packed(nest) ? serialize(nest, NULL) : nest;
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

/* One kernel: every root stage's nest in program order, the workspace intermediates one
 * after another, then the loop passes over the whole (lower_finish). */
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
    if (lower_setup(&L, s, &roots))
        return NULL;
    int64_t off = 0;
    for (int i = 0; i < roots.n; i++) {
        Buffer *b = roots.items[i];
        if (b->scope != SCOPE_WORKSPACE)
            continue;
        b->ws_offset = off;
        off += (ir_dtype_size(b->dtype, b->size) + LOWER_ALIGN_BYTES - 1) / LOWER_ALIGN_BYTES * LOWER_ALIGN_BYTES;
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
    if (lower_finish(&b, L.k->name))
        return NULL;
    L.k->body = b;
    lower_kernel_dims(L.k, s->prog);
    return L.k;
}

void lower_kernel_dims(Kernel *k, const Program *p)
{
    k->dims.n = 0;
    for (int i = 0; i < p->dims.n; i++) {
        Var *v = ((IrDim *)p->dims.items[i])->var;
        int used = ir_stmt_uses_var(k->body, v);
        for (int j = 0; j < k->params.n && !used; j++) {
            const Buffer *b = k->params.items[j];
            for (int d = 0; d < b->ndim && !used; d++)
                used = b->dyn[d] && ir_expr_uses_var(b->dyn[d], v);
        }
        if (used)
            ir_vec_push(&k->dims, v, 64, "run-time dims");
    }
}
