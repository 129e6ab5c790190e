/* arena.c - the model passes "in-place" and "arena": when each intermediate of a model
 * lives (the kernels from its first use to its last), which kernel outputs take the place
 * of an input that dies there, and where in the one arena each intermediate lies.
 * requires: the model's kernels in their final order (after "run-time-loops");
 * produces: m->arena's ws_offset, arena_bytes, arena_lower_bound and ninplace, kernels
 * whose in-place output replaces the input it overwrites; with intermediates of run-time
 * size, where a run places them (m->arena_at, at_vars, at_values) and what it needs
 * (m->arena_need).
 */
#include "passes.h"

#include <stdlib.h>

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

/* ---------------------------------------------------------------- in place */

/* Does e load buffer b anywhere other than at index `at` (NULL: anywhere at all)? */
int lower_loads_other(const Expr *e, const Buffer *b, const Expr *at)
{
    switch (e->kind) {
    case E_LOAD:
        if (e->u.load.buf == b && (!at || !ir_expr_equal(e->u.load.index, at)))
            return 1;
        return lower_loads_other(e->u.load.index, b, NULL);
    case E_BIN: return lower_loads_other(e->u.bin.a, b, at) || lower_loads_other(e->u.bin.b, b, at);
    case E_UN: return lower_loads_other(e->u.un.a, b, at);
    case E_CAST:
    case E_BITCAST: return lower_loads_other(e->u.cast.a, b, at);
    case E_CALL:
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++)
            if (lower_loads_other(e->u.call.args[i], b, at))
                return 1;
        return 0;
    case E_SELECT:
        return lower_loads_other(e->u.sel.cond, b, at) || lower_loads_other(e->u.sel.t, b, at) || lower_loads_other(e->u.sel.f, b, at);
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
        return !lower_loads_other(s->u.loop.min, in, NULL) && !lower_loads_other(s->u.loop.extent, in, NULL) &&
               inplace_ok(s->u.loop.body, in, out);
    case S_LET: return !lower_loads_other(s->u.let.value, in, NULL) && inplace_ok(s->u.let.body, in, out);
    case S_IF:
        return !lower_loads_other(s->u.cond.cond, in, NULL) && !lower_loads_other(s->u.cond.cond, out, NULL) &&
               inplace_ok(s->u.cond.then, in, out) && inplace_ok(s->u.cond.els, in, out);
    case S_STORE:
        if (lower_loads_other(s->u.store.index, in, NULL) || lower_loads_other(s->u.store.value, out, NULL) ||
            lower_loads_other(s->u.store.index, out, NULL))
            return 0;
        return !lower_loads_other(s->u.store.value, in, s->u.store.buf == out ? s->u.store.index : NULL);
    case S_PREFETCH: return !lower_loads_other(s->u.store.index, in, NULL) && !lower_loads_other(s->u.store.index, out, NULL);
    case S_ALLOC: return inplace_ok(s->u.alloc.body, in, out);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!inplace_ok(s->u.seq.items[i], in, out))
                return 0;
        return 1;
    default: return 1;
    }
}

/* s with buffer `from` read and written as buffer `to` instead (the same layout) */
typedef struct {
    const Buffer *from;
    Buffer *to;
} Rebuf;

static Expr *rebuf_expr(Expr *e, void *ctx)
{
    const Rebuf *r = ctx;
    e = ir_expr_map(e, rebuf_expr, ctx);
    return e->kind == E_LOAD && e->u.load.buf == r->from ? ir_load(r->to, e->u.load.index) : e;
}

static Stmt *rebuf_stmt(Stmt *s, void *ctx)
{
    const Rebuf *r = ctx;
    if (!s)
        return NULL;
    s = ir_stmt_map(s, rebuf_stmt, rebuf_expr, ctx);
    if (s->kind == S_STORE && s->u.store.buf == r->from)
        return ir_store(r->to, s->u.store.index, s->u.store.value);
    if (s->kind == S_PREFETCH && s->u.store.buf == r->from)
        return ir_prefetch(r->to, s->u.store.index);
    return s;
}

static Stmt *rebuf(Stmt *s, const Buffer *from, Buffer *to)
{
    Rebuf r = {from, to};
    return rebuf_stmt(s, &r);
}

/* ---------------------------------------------------------------- the passes */

/* Liveness of the intermediates over the kernel sequence: b->first, b->last, b->state. */
static void liveness(LowerModel *b)
{
    Model *m = b->m;
    int na = m->arena.n;
    int *first = b->first = ir_alloc(sizeof *first * (size_t)(na ? na : 1));
    int *last = b->last = ir_alloc(sizeof *last * (size_t)(na ? na : 1));
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
    /* two kernels side by side (the "beside" pass) run at once: what either uses lives
     * through both, so neither's output takes the place of what the other still reads */
    for (int k = 0; m->beside && k + 1 < m->kernels.n; k++)
        for (int i = 0; i < na && m->beside[k]; i++) {
            if (first[i] == k + 1)
                first[i] = k;
            if (last[i] == k)
                last[i] = k + 1;
        }
    /* a run-time loop's states live through the whole loop, and so does whatever the loop
     * reads from before it (each iteration reads it again) */
    unsigned char *state = b->state = ir_alloc((size_t)(na ? na : 1));
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
}

/* Do a and b (of the same bound layout) have the same layout at every run-time extent? */
static int same_run_layout(const Buffer *a, const Buffer *b)
{
    if (a->ndim != b->ndim)
        return !ir_buffer_run_ext(a) && !ir_buffer_run_ext(b);
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || !a->run_ext[d] != !b->run_ext[d] ||
            (a->run_ext[d] && !ir_expr_equal(a->run_ext[d], b->run_ext[d])))
            return 0;
    return 1;
}

int lower_inplace(LowerModel *b)
{
    liveness(b);
    Model *m = b->m;
    int na = m->arena.n;
    const int *first = b->first, *last = b->last;
    const unsigned char *state = b->state;
    /* in place: a kernel's output takes the place of an input of the same size that dies
     * there, when each element is read only to compute the same element */
    int *alias = b->alias = ir_alloc(sizeof *alias * (size_t)(na ? na : 1));
    unsigned char *taken = ir_alloc((size_t)(na ? na : 1));   /* taken[i]: some alias[o] == i */
    for (int o = 0; o < na; o++)
        alias[o] = -1;   /* all of them before any is read */
    for (int o = 0; o < na; o++) {
        Buffer *ob = m->arena.items[o];
        for (int i = 0; i < na && alias[o] < 0; i++) {
            Buffer *ib = m->arena.items[i];
            /* the same type, not only the same size: the kernel's loads of ib become loads of
             * ob, which would read ib's bits as ob's type */
            if (i == o || taken[i] || alias[i] >= 0 || state[o] || last[i] != first[o] || ib->size != ob->size ||
                ib->dtype != ob->dtype || ib->strides[0] != ob->strides[0] || !same_run_layout(ib, ob))
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
    m->ninplace = 0;
    for (int o = 0; o < na; o++)
        m->ninplace += alias[o] >= 0;
    return 0;
}

static void plan_run(Model *m, const PtrVec *roots, const int *first, const int *last);

int lower_plan_arena(LowerModel *b)
{
    Model *m = b->m;
    int na = m->arena.n;
    const int *first = b->first, *last = b->last, *alias = b->alias;
    /* an aliased output is planned as part of its input: one lifetime, one place */
    PtrVec own = m->arena;
    PtrVec roots = {0};
    int *f2 = ir_alloc(sizeof *f2 * (size_t)(na ? na : 1)), *l2 = ir_alloc(sizeof *l2 * (size_t)(na ? na : 1));
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
        ir_vec_push(&roots, m->arena.items[i], 1 << 20, "buffers");
        nr++;
    }
    m->arena = roots;
    plan_arena(m, f2, l2);
    plan_run(m, &roots, f2, l2);
    m->arena = own;
    Expr **at = m->arena_at ? ir_alloc(sizeof *at * (size_t)(na ? na : 1)) : NULL;
    for (int o = 0, k = 0; o < na; o++) {
        int r = o;
        while (alias[r] >= 0)
            r = alias[r];
        ((Buffer *)m->arena.items[o])->ws_offset = ((Buffer *)m->arena.items[r])->ws_offset;
        if (at && alias[o] < 0)
            at[o] = m->arena_at[k++];   /* (roots are in arena order) */
    }
    for (int o = 0; o < na && at; o++) {
        int r = o;
        while (alias[r] >= 0)
            r = alias[r];
        at[o] = at[r];
    }
    if (at)
        m->arena_at = at;
    return 0;
}

void lower_dump_inplace(FILE *f, const LowerModel *b)
{
    const Model *m = b->m;
    fprintf(f, "model %s after in-place: %d of %d intermediates in place\n", m->name, m->ninplace, m->arena.n);
    for (int i = 0; i < m->arena.n; i++) {
        const Buffer *x = m->arena.items[i];
        fprintf(f, "  %s: kernels %d to %d%s", x->name, b->first[i], b->last[i], b->state[i] ? ", a loop state" : "");
        if (b->alias[i] >= 0)
            fprintf(f, ", in place of %s", ((const Buffer *)m->arena.items[b->alias[i]])->name);
        fputc('\n', f);
    }
}

void lower_dump_arena(FILE *f, const LowerModel *b)
{
    const Model *m = b->m;
    fprintf(f, "model %s after arena: %lld bytes (at least %lld live at once), slices aligned to %lld\n", m->name,
            (long long)m->arena_bytes, (long long)m->arena_lower_bound, (long long)m->arena_align);
    for (int i = 0; i < m->arena.n; i++) {
        const Buffer *x = m->arena.items[i];
        fprintf(f, "  %s at %lld, %lld bytes, kernels %d to %d\n", x->name, (long long)x->ws_offset,
                (long long)aligned_bytes(m, x), b->first[i], b->last[i]);
    }
    for (int k = 0; k < m->nat; k++) {
        fprintf(f, "  in a run: %s = ", m->at_vars[k]->name);
        ir_print_expr(f, m->at_values[k]);
        fputc('\n', f);
    }
    if (m->arena_need) {
        fputs("  a run needs ", f);
        ir_print_expr(f, m->arena_need);
        fputc('\n', f);
    }
}

/* ---------------------------------------------------------------- places at run time */

/* Where the intermediates lie when the dims are decided at run time. Each intermediate of
 * a run-time dim is compact for the run's extents (Buffer.run_ext), so it needs fewer bytes
 * than the bound's plan reserves. The plan's placement order is kept: of two buffers live
 * at once, the one the bound's plan puts below stays below. A buffer's offset in a run is
 * then the longest path to it through the buffers below it that it meets,
 *     at_i = max over j below i, live with i, of (at_j + bytes_j(dims)),   0 if none,
 * and the arena's need the most any buffer reaches. Each pair live at once stays apart
 * (one ends where the other may start), every bytes_j is a multiple of the alignment, and
 * sizes grow with the dims: at the bound each at_i is the plan's offset (the greedy plan
 * put i right on top of one of those below it) and at smaller dims no offset is larger,
 * so every run fits the bound's arena and needs no more than the bound's plan. */

/* b's bytes in a run (aligned), an expression of the dims */
static Expr *run_bytes(const Model *m, const Buffer *b)
{
    Expr *const *ext = ir_buffer_run_ext(b);
    if (!ext || b->scope != SCOPE_WORKSPACE)
        return ir_idx(aligned_bytes(m, b));
    Expr *n = ir_idx(ir_dtype_bytes(b->dtype));
    for (int d = 0; d < b->ndim; d++)
        n = ir_mul(n, ext[d] ? ext[d] : ir_idx(b->shape[d]));
    int64_t a = m->arena_align;
    return ir_simplify(ir_mul(ir_bin(OP_FLOORDIV, ir_add(n, ir_idx(a - 1)), ir_idx(a)), ir_idx(a)), NULL);
}

/* m->arena_at, at_vars, at_values and arena_need for the plan of roots (the buffers the
 * plan placed, lifetimes first[i]..last[i]). Nothing without a buffer of run-time size. */
static void plan_run(Model *m, const PtrVec *roots, const int *first, const int *last)
{
    int n = roots->n, dyn = 0;
    for (int i = 0; i < n; i++)
        dyn |= ir_buffer_run_ext(roots->items[i]) != NULL;
    if (!dyn)
        return;
    Expr **bytes = ir_alloc(sizeof *bytes * (size_t)n), **at = ir_alloc(sizeof *at * (size_t)n);
    int64_t *size = ir_alloc(sizeof *size * (size_t)n);
    int *order = ir_alloc(sizeof *order * (size_t)n), *below = ir_alloc(sizeof *below * (size_t)n);
    for (int i = 0; i < n; i++) {
        bytes[i] = run_bytes(m, roots->items[i]);
        size[i] = aligned_bytes(m, roots->items[i]);
        order[i] = i;
    }
    const Buffer *const *r = (const Buffer *const *)roots->items;
#define MEET(i, j) ((i) != (j) && size[i] > 0 && size[j] > 0 && first[i] <= last[j] && first[j] <= last[i])
#define BELOW(j, i) (MEET(i, j) && r[j]->ws_offset + size[j] <= r[i]->ws_offset)
    for (int i = 1; i < n; i++)   /* by the plan's offset: those below come first */
        for (int j = i; j > 0 && r[order[j]]->ws_offset < r[order[j - 1]]->ws_offset; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    m->at_vars = ir_alloc(sizeof *m->at_vars * (size_t)n);
    m->at_values = ir_alloc(sizeof *m->at_values * (size_t)n);
    m->nat = 0;
    for (int oi = 0; oi < n; oi++) {
        int i = order[oi], nb = 0;
        /* those below i that it meets, less any that lies below another of them (a path
         * through that one is at least as long) */
        for (int j = 0; j < n; j++)
            if (BELOW(j, i))
                below[nb++] = j;
        Expr *v = NULL;
        for (int q = 0; q < nb; q++) {
            int j = below[q], covered = 0;
            for (int p = 0; p < nb && !covered; p++)
                covered = BELOW(j, below[p]);
            if (!covered) {
                Expr *end = ir_simplify(ir_add(at[j], bytes[j]), NULL);
                v = v ? ir_bin(OP_MAX, v, end) : end;
            }
        }
        int64_t c = 0;
        if (!v || ir_expr_is_const(v, &c)) {
            at[i] = ir_idx(c);
            continue;
        }
        Var *x = ir_var_new(ir_fmt("kgen_at_%s", r[i]->name), DT_INDEX);
        m->at_vars[m->nat] = x;
        m->at_values[m->nat++] = v;
        at[i] = ir_varref(x);
    }
    /* the need: the most the buffers with none above them reach */
    Expr *need = NULL;
    int64_t fixed = 0;
    for (int i = 0; i < n; i++) {
        int covered = size[i] == 0;
        for (int k = 0; k < n && !covered; k++)
            covered = BELOW(i, k);
        if (covered)
            continue;
        Expr *end = ir_simplify(ir_add(at[i], bytes[i]), NULL);
        int64_t c;
        if (ir_expr_is_const(end, &c))
            fixed = c > fixed ? c : fixed;
        else
            need = need ? ir_bin(OP_MAX, need, end) : end;
    }
#undef BELOW
#undef MEET
    if (!need)
        need = ir_idx(fixed);
    else if (fixed > 0)
        need = ir_bin(OP_MAX, need, ir_idx(fixed));
    m->arena_need = need;
    m->arena_at = at;   /* (the roots'; lower_plan_arena gives the aliased their root's) */
}

Expr *lower_arena_at(const Model *m, const Buffer *b)
{
    for (int i = 0; i < m->arena.n && m->arena_at; i++)
        if (m->arena.items[i] == b)
            return m->arena_at[i];
    return ir_idx(b->ws_offset);
}

Expr *lower_arena_need(const Model *m) { return m->arena_need ? m->arena_need : ir_idx(m->arena_bytes); }

int64_t lower_dims_eval(const Model *m, const Expr *e, const int64_t *dims)
{
    const PtrVec *ds = &m->prog->dims;
    int n = ds->n + m->nat;
    Var **vars = ir_alloc(sizeof *vars * (size_t)(n ? n : 1));
    Expr **vals = ir_alloc(sizeof *vals * (size_t)(n ? n : 1));
    for (int i = 0; i < ds->n; i++) {
        vars[i] = ((IrDim *)ds->items[i])->var;
        vals[i] = ir_idx(dims[i]);
    }
    int64_t r = -1;
    for (int k = 0; k < m->nat; k++) {   /* the offsets in order: each reads those before */
        Expr *v = ir_simplify(ir_subst(m->at_values[k], vars, vals, ds->n + k), NULL);
        if (!ir_expr_is_const(v, &r))
            ir_die("an arena offset that does not fold at given dims");
        vars[ds->n + k] = m->at_vars[k];
        vals[ds->n + k] = ir_idx(r);
    }
    Expr *v = ir_simplify(ir_subst((Expr *)e, vars, vals, n), NULL);
    if (!ir_expr_is_const(v, &r))
        ir_die("a run-time extent that does not fold at given dims");
    return r;
}
