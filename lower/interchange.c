/* interchange.c - the loop pass "reduce-interchange".
 * requires: a simplified nest (after unswitching); breaks: nothing (the simplifier runs
 * after it).
 *
 * A vector loop whose elements each sum a dot product into a scalar accumulator
 *
 *     vectorized for j:  acc = 0;  for k: acc = acc + w[k*N + j] * h[k];  y[j] = f(acc)
 *
 * leaves the compiler a chain of dependent adds per element, one multiply-add every four
 * or five cycles (an LSTM step's four gate sums ran so: 55 ms of a 170 ms model). The pass
 * gives each element of the vector loop its own accumulator and puts the element loop
 * inside the reduction:
 *
 *     vectorized for j: acc[j] = 0
 *     for k:  vectorized for j: acc[j] = acc[j] + w[k*N + j] * h[k]
 *     vectorized for j: y[j] = f(acc[j])
 *
 * (several such sums over the same range share one loop over k).
 * Each element still adds its terms in the same order, so the results are bit for bit
 * the same. Splitting the vector loop in three is sound because a vector loop's
 * iterations are independent (what its annotation asserts, and what every loop the
 * schedule vectorizes satisfies). An `if` on a condition the vector loop does not change
 * (an LSTM's two state halves) is hoisted out first, the statements after it copied into
 * both sides.
 *
 * It applies when the accumulations open the loop's body (after its scalar allocations):
 * each an initial store into a one-element local buffer followed by a serial loop, not
 * depending on j, that stores into it alone; and when every buffer they read is read at
 * consecutive elements along j or at one element (a strided read along j, a row of a
 * row-major matrix, would turn each step into a gather).
 */
#include "passes.h"

#include <string.h>

typedef struct {
    Buffer *acc;      /* the scalar accumulator */
    Buffer *vec;      /* its per-element replacement */
} Acc;

#define MAX_ACCS 16

typedef struct {
    const Stmt *loop;   /* the vector loop */
    Acc accs[MAX_ACCS];
    int n;
} Rewrite;

static int is_scalar_local(const Buffer *b) { return b->scope == SCOPE_LOCAL && b->size == 1; }

/* The body's statements with the scalar allocations around and inside it taken off (their
 * buffers are distinct objects, so widening their scope to the whole body is harmless). */
static void flatten(Stmt *s, PtrVec *allocs, PtrVec *items)
{
    if (!s)
        return;
    if (s->kind == S_ALLOC && is_scalar_local(s->u.alloc.buf)) {
        ir_vec_push(allocs, s->u.alloc.buf, 1 << 20, "allocations");
        flatten(s->u.alloc.body, allocs, items);
    } else if (s->kind == S_SEQ) {
        for (int i = 0; i < s->u.seq.n; i++)
            flatten(s->u.seq.items[i], allocs, items);
    } else {
        ir_vec_push(items, s, 1 << 20, "statements");
    }
}

/* items[0..n) as a body inside the allocations */
static Stmt *rebuild(PtrVec *allocs, Stmt **items, int n)
{
    Stmt *body = ir_seq(items, n);
    for (int i = allocs->n - 1; i >= 0; i--)
        body = ir_allocate(allocs->items[i], body);
    return body;
}

/* ---------------------------------------------------------------- which loads are fine */

typedef struct {
    const Var *j;
    const PtrVec *allocs;
} LoadCheck;

/* Every load of e: a scalar of the body, or a buffer read at j's coefficient 0 or 1. */
static int bad_load(const Expr *e, const void *ctx)
{
    const LoadCheck *c = ctx;
    if (e->kind != E_LOAD)
        return 0;
    for (int i = 0; i < c->allocs->n; i++)
        if (c->allocs->items[i] == e->u.load.buf)
            return 0;
    if (!ir_expr_uses_var(e->u.load.index, c->j))
        return 0;
    Var *v = (Var *)c->j;
    int64_t coef;
    RangeMap m = {0};
    return !ir_index_affine(e->u.load.index, &m, &v, 1, &coef) || coef != 1;
}

static int loads_fine(Expr *e, const Var *j, const PtrVec *allocs)
{
    LoadCheck c = {j, allocs};
    return ir_expr_find(e, bad_load, &c) == NULL;
}

/* Does e read one of the accumulators acc[0..n), other than `self`? */
static int reads_acc(const Expr *e, const Acc *accs, int n, const Buffer *self)
{
    for (int i = 0; i < n; i++)
        if (accs[i].acc != self && lower_loads_other(e, accs[i].acc, NULL))
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- the rewrite */

/* j: the element's place in its accumulator vector (the loop starts at 0) */
static Expr *elem(const Rewrite *rw) { return ir_varref(rw->loop->u.loop.var); }

static Expr *widen_expr(Expr *e, void *ctx)
{
    const Rewrite *rw = ctx;
    if (e->kind == E_LOAD)
        for (int i = 0; i < rw->n; i++)
            if (e->u.load.buf == rw->accs[i].acc)
                return ir_load(rw->accs[i].vec, elem(rw));
    return ir_expr_map(e, widen_expr, ctx);
}

static Stmt *widen_stmt(Stmt *s, void *ctx)
{
    const Rewrite *rw = ctx;
    if (s->kind == S_STORE)
        for (int i = 0; i < rw->n; i++)
            if (s->u.store.buf == rw->accs[i].acc)
                return ir_store(rw->accs[i].vec, elem(rw), widen_expr(s->u.store.value, ctx));
    return ir_stmt_map(s, widen_stmt, widen_expr, ctx);
}

/* the vector loop again around body */
static Stmt *vloop(const Rewrite *rw, Stmt *body)
{
    return ir_for_like(rw->loop, rw->loop->u.loop.min, rw->loop->u.loop.extent, body);
}

static Stmt *interchange(Stmt *s, void *ctx);
static Stmt *interchange_loop(Stmt *loop, int *changed);

/* An if whose condition the vector loop leaves alone, opening its body: the loop inside
 * each side (the statements after the if in both), when that lets a side interchange.
 * NULL when the body opens with no such if, or neither side gains. */
static Stmt *hoist_if(Stmt *loop, PtrVec *allocs, PtrVec *items, int *changed)
{
    Stmt *first = items->n ? items->items[0] : NULL;
    if (!first || first->kind != S_IF || ir_expr_uses_var(first->u.cond.cond, loop->u.loop.var) ||
        ir_expr_reads_memory(first->u.cond.cond))
        return NULL;
    Stmt **rest = (Stmt **)items->items + 1;
    int nrest = items->n - 1;
    Stmt *sides[2] = {first->u.cond.then, first->u.cond.els};
    Stmt *loops[2] = {NULL, NULL};
    int gained = 0;
    for (int k = 0; k < 2; k++) {
        if (!sides[k] && !nrest)
            continue;
        Stmt **body = ir_alloc(sizeof *body * (size_t)(nrest + 1));
        body[0] = sides[k];
        memcpy(body + 1, rest, sizeof *body * (size_t)nrest);
        loops[k] = interchange_loop(ir_for_like(loop, loop->u.loop.min, loop->u.loop.extent, rebuild(allocs, body, nrest + 1)),
                                    &gained);
    }
    if (!gained)
        return NULL;
    *changed = 1;
    return ir_if_like(first, first->u.cond.cond, loops[0], loops[1]);
}

/* The vector loop rewritten (and *changed set), or as it was. */
static Stmt *interchange_loop(Stmt *loop, int *changed)
{
    PtrVec allocs = {0}, items = {0};
    flatten(loop->u.loop.body, &allocs, &items);
    Stmt *hoisted = hoist_if(loop, &allocs, &items, changed);
    if (hoisted)
        return hoisted;
    int64_t min, ext;
    if (!ir_expr_is_const(loop->u.loop.min, &min) || min != 0 || !ir_expr_is_const(loop->u.loop.extent, &ext))
        return loop;
    const Var *j = loop->u.loop.var;
    Rewrite rw = {loop, {{0}}, 0};
    int i = 0;
    /* the accumulations: an initial store, then a serial loop that stores into it alone */
    while (i + 1 < items.n && rw.n < MAX_ACCS) {
        Stmt *init = items.items[i], *red = items.items[i + 1];
        if (init->kind != S_STORE || !is_scalar_local(init->u.store.buf) || red->kind != S_FOR ||
            red->u.loop.kind != FOR_SERIAL || red->u.loop.body->kind != S_STORE ||
            red->u.loop.body->u.store.buf != init->u.store.buf || ir_expr_uses_var(red->u.loop.min, j) ||
            ir_expr_uses_var(red->u.loop.extent, j))
            break;
        Buffer *acc = init->u.store.buf;
        Expr *upd = red->u.loop.body->u.store.value;
        if (reads_acc(init->u.store.value, rw.accs, rw.n, NULL) || reads_acc(upd, rw.accs, rw.n, acc) ||
            !loads_fine(init->u.store.value, j, &allocs) || !loads_fine(upd, j, &allocs))
            break;
        Buffer *vec = ir_buffer_new(acc->name, acc->dtype, 1, &ext, SCOPE_LOCAL);
        rw.accs[rw.n++] = (Acc){acc, vec};
        i += 2;
    }
    if (!rw.n)
        return loop;
    *changed = 1;
    PtrVec out = {0};
    Stmt **inits = ir_alloc(sizeof *inits * (size_t)rw.n);
    for (int a = 0; a < rw.n; a++)
        inits[a] = widen_stmt(items.items[2 * a], &rw);
    ir_vec_push(&out, vloop(&rw, ir_seq(inits, rw.n)), 1 << 20, "statements");
    /* the reductions, those over the same range in one loop (an LSTM's four gates: each
     * step's h[k] loaded once for all four) */
    for (int a = 0; a < rw.n;) {
        Stmt *red = items.items[2 * a + 1];
        int b = a;
        Stmt **body = ir_alloc(sizeof *body * (size_t)rw.n);
        for (; b < rw.n; b++) {
            Stmt *other = items.items[2 * b + 1];
            if (!ir_expr_equal(other->u.loop.min, red->u.loop.min) || !ir_expr_equal(other->u.loop.extent, red->u.loop.extent))
                break;
            Expr *k = ir_varref(red->u.loop.var);
            body[b - a] = vloop(&rw, widen_stmt(ir_stmt_subst(other->u.loop.body, &other->u.loop.var, &k, 1), &rw));
        }
        ir_vec_push(&out, ir_for_like(red, red->u.loop.min, red->u.loop.extent, ir_seq(body, b - a)), 1 << 20, "statements");
        a = b;
    }
    /* the rest in a vector loop of its own, inside the allocations it still uses */
    PtrVec keep = {0};
    for (int a = 0; a < allocs.n; a++) {
        int widened = 0;
        for (int b = 0; b < rw.n; b++)
            widened |= rw.accs[b].acc == allocs.items[a];
        if (!widened)
            ir_vec_push(&keep, allocs.items[a], 1 << 20, "allocations");
    }
    if (i < items.n) {
        Stmt **rest = ir_alloc(sizeof *rest * (size_t)(items.n - i));
        for (int k = i; k < items.n; k++)
            rest[k - i] = widen_stmt(items.items[k], &rw);
        ir_vec_push(&out, vloop(&rw, rebuild(&keep, rest, items.n - i)), 1 << 20, "statements");
    }
    Stmt *r = ir_seq((Stmt **)out.items, out.n);
    for (int a = rw.n - 1; a >= 0; a--)
        r = ir_allocate(rw.accs[a].vec, r);
    return r;
}

static Stmt *interchange(Stmt *s, void *ctx)
{
    int changed = 0;
    if (s->kind == S_FOR && s->u.loop.kind == FOR_VECTORIZED)
        return interchange_loop(s, &changed);
    return ir_stmt_map(s, interchange, NULL, ctx);
}

Stmt *lower_reduce_interchange(Stmt *s) { return interchange(s, NULL); }
