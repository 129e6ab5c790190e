/* peel.c - the loop passes "peel-tails" and "peel-heads": the first and last chunks of a
 * chunked vector loop (a loop over o around a vectorized loop over i, a split of an axis)
 * become loops of their own where a condition in them varies, so that the simplifier can
 * drop the condition from the rest.
 * requires: a simplified, unrolled nest; breaks: nothing (the simplifier runs after both).
 */
#include "passes.h"

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

static Stmt *peel_tails(Stmt *s, void *ctx)
{
    s = ir_stmt_map(s, peel_tails, NULL, ctx);
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
        Stmt *whole = ir_for_like(s, s->u.loop.min, ir_idx(N - 1), ir_for_like(in, in->u.loop.min, in->u.loop.extent, x));
        Stmt *tail = ir_for_like(in, in->u.loop.min, ir_idx(E - (N - 1) * F), ir_stmt_subst(x, &o, &last, 1));
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

static Stmt *peel_heads(Stmt *s, void *ctx)
{
    s = ir_stmt_map(s, peel_heads, NULL, ctx);
    Stmt **items;
    int n;
    HeadSearch h = {0};
    if (!chunk_loops(s, &h.N, &h.F) || !lower_body_stores(s->u.loop.body, &items, &n))
        return s;
    h.o = s->u.loop.var;
    h.i = s->u.loop.body->u.loop.var;
    for (int k = 0; k < n; k++)
        ir_expr_find(items[k]->u.store.value, head_select, &h);
    if (!h.o1)
        return s;
    Stmt *in = s->u.loop.body;
    return ir_seq2(ir_for_like(s, s->u.loop.min, ir_idx(h.o1), in), ir_for_like(s, ir_idx(h.o1), ir_idx(h.N - h.o1), in));
}

Stmt *lower_peel_tails(Stmt *s) { return peel_tails(s, NULL); }
Stmt *lower_peel_heads(Stmt *s) { return peel_heads(s, NULL); }
