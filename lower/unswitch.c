/* unswitch.c - the loop pass "unswitch".
 * requires: a simplified nest (after peeling); breaks: nothing (the simplifier runs after it).
 *
 * A vectorized loop whose stores choose between two values on a condition the loop does
 * not change (padding's bounds check around a load: `h - 1 >= 0 && ... ? x[...] : 0`)
 * becomes an `if` around two copies of the loop, each storing one side. Compilers do not
 * vectorize a loop with a guarded load (gcc 12 unswitches it only after giving up on
 * vectorizing: a padding copy with its producer's bias and ReLU ran as scalars, 7x slower).
 * A condition that varies over the lanes, decided at run time, is versioned (below). */
#include "passes.h"

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

/* What pick_side replaces: the selects on cond, by their `then` (side 1) or `else` (side 0)
 * value. */
typedef struct {
    const Expr *cond;
    int side;
} Side;

static Expr *pick(Expr *e, void *ctx)
{
    const Side *p = ctx;
    if (e->kind == E_SELECT && ir_expr_equal(e->u.sel.cond, p->cond))
        return pick(p->side ? e->u.sel.t : e->u.sel.f, ctx);
    return ir_expr_map(e, pick, ctx);
}

/* e with every select on cond replaced by its `then` (side 1) or `else` (side 0) value. */
static Expr *pick_side(Expr *e, const Expr *cond, int side)
{
    Side p = {cond, side};
    return pick(e, &p);
}

/* The loop's stores (its body: one, or a sequence of them); 0 if the body holds anything
 * else, or a store that reads its own buffer: a register tile's update (a depthwise conv
 * summing a padded window) keeps its select, as a branch between the rows of a tile would
 * cost more than the select. */
int lower_body_stores(Stmt *loop, Stmt ***items, int *n)
{
    Stmt *s = loop->u.loop.body;
    if (s->kind == S_STORE)
        *items = &loop->u.loop.body, *n = 1;
    else if (s->kind == S_SEQ)
        *items = s->u.seq.items, *n = s->u.seq.n;
    else
        return 0;
    for (int i = 0; i < *n; i++)
        if ((*items)[i]->kind != S_STORE || lower_loads_other((*items)[i]->u.store.value, (*items)[i]->u.store.buf, NULL))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- lanes
 *
 * A select whose condition varies over the lanes but is decided at run time (padding of an
 * extent known only then: `w - P >= 0 && w - P < W ? x[w - P] : 0`, P and W of the dims)
 * is left by the peeling passes, which need constant bounds; so is any lane-varying
 * select inside a loop over a run-time extent (a padding copy's rows running to H, its
 * columns in vector chunks: `i - 1 >= 0 ? ... : 0`). When the condition is a
 * conjunction of comparisons affine in the loop's variable, it holds in every lane
 * exactly when it holds in the first and the last (each comparison holds on an interval):
 * the loop runs as the copy without the select where it does, as it was elsewhere. */

typedef struct {
    const Var *v;
    int runtime;   /* inside a loop over a run-time extent: the peeling passes left it all */
} LaneCtx;

/* a select whose condition uses v and a run-time dim (or any, inside a loop over a
 * run-time extent), a conjunction of comparisons affine in v */
static int lane_select(const Expr *e, const void *ctx)
{
    const LaneCtx *c = ctx;
    PtrVec parts = {0};
    return e->kind == E_SELECT && ir_expr_uses_var(e->u.sel.cond, c->v) &&
           (c->runtime || ir_expr_uses_dims(e->u.sel.cond)) && ir_affine_conjuncts(e->u.sel.cond, (Var *)c->v, &parts);
}

static Expr *lane_cond(Expr *e, const Var *v, int runtime)
{
    LaneCtx c = {v, runtime};
    Expr *sel = ir_expr_find(e, lane_select, &c);
    return sel ? sel->u.sel.cond : NULL;
}

/* The loop again, each of its stores taking the `side` of the selects on cond. */
static Stmt *unswitch_side(Stmt *loop, Stmt **items, int n, const Expr *cond, int side)
{
    Stmt **out = ir_alloc(sizeof *out * (size_t)n);
    for (int i = 0; i < n; i++)
        out[i] = ir_store(items[i]->u.store.buf, pick_side(items[i]->u.store.index, cond, side),
                          pick_side(items[i]->u.store.value, cond, side));
    return ir_for_like(loop, loop->u.loop.min, loop->u.loop.extent, loop->u.loop.body->kind == S_SEQ ? ir_seq(out, n) : out[0]);
}

/* The most copies of one vector loop: a Concat of 8 inputs read through a chain of
 * selects on the channel becomes 8 loops, one per input. */
#define MAX_UNSWITCHED 8

/* The vector loop s as an if over copies of it, while a condition is left and *copies
 * (the loops made so far, counting s) allows one more. */
static Stmt *unswitch_loop(Stmt *s, int *copies, int runtime)
{
    Stmt **items;
    int n;
    if (*copies >= MAX_UNSWITCHED || !lower_body_stores(s, &items, &n))
        return s;
    Expr *cond = NULL;
    for (int i = 0; i < n && !cond; i++)
        if (!(cond = invariant_cond(items[i]->u.store.value, s->u.loop.var)))
            cond = invariant_cond(items[i]->u.store.index, s->u.loop.var);
    if (!cond) {
        int64_t lo, ext;
        Var *v = s->u.loop.var;
        for (int i = 0; i < n && !cond; i++)
            cond = lane_cond(items[i]->u.store.value, v, runtime);
        if (!cond || !ir_expr_is_const(s->u.loop.min, &lo) || !ir_expr_is_const(s->u.loop.extent, &ext) || ext < 2)
            return s;
        ++*copies;
        Expr *first = ir_idx(lo), *last = ir_idx(lo + ext - 1);
        Expr *all = ir_simplify(ir_bin(OP_AND, ir_subst(cond, &v, &first, 1), ir_subst(cond, &v, &last, 1)), NULL);
        Stmt *r = ir_if(all, unswitch_loop(unswitch_side(s, items, n, cond, 1), copies, runtime), s);
        r->u.cond.likely = 1;
        return r;
    }
    ++*copies;
    Stmt *then = unswitch_loop(unswitch_side(s, items, n, cond, 1), copies, runtime);
    Stmt *els = unswitch_loop(unswitch_side(s, items, n, cond, 0), copies, runtime);
    /* the condition chooses padding's interior, a few times more often than not */
    Stmt *r = ir_if(cond, then, els);
    r->u.cond.likely = 1;
    return r;
}

/* ctx: an int, nonzero inside a loop over a run-time extent */
static Stmt *unswitch(Stmt *s, void *ctx)
{
    int runtime = *(int *)ctx;
    if (s->kind == S_FOR && s->u.loop.kind != FOR_VECTORIZED && !runtime &&
        (ir_expr_uses_dims(s->u.loop.min) || ir_expr_uses_dims(s->u.loop.extent))) {
        int inside = 1;
        return ir_for_like(s, s->u.loop.min, s->u.loop.extent, unswitch(s->u.loop.body, &inside));
    }
    if (s->kind != S_FOR || s->u.loop.kind != FOR_VECTORIZED)
        return ir_stmt_map(s, unswitch, NULL, ctx);
    int copies = 1;
    return unswitch_loop(s, &copies, runtime);
}

Stmt *lower_unswitch(Stmt *s)
{
    int runtime = 0;
    return unswitch(s, &runtime);
}
