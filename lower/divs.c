/* divs.c - the loop pass "runtime-divisions".
 * requires: a simplified nest, after the passes that copy or unroll loops; breaks: nothing.
 *
 * A serial loop over w whose body takes floor(e / D) or e mod D, D a positive divisor
 * decided at run time (a Resize between sizes decided at run time: the source column of
 * output column w is ((2 w + 1) * In - Out) / (2 Out)) and e stepping by a loop-invariant s
 * from one w to the next, divides in every iteration: integer division is 20 to 40 cycles,
 * where a constant divisor is a multiplication. The pass keeps the quotient and the
 * remainder as two scalars instead, from their values at the loop's start, and steps them:
 *
 *     q = floor(e(min) / D);  r = e(min) mod D
 *     for w in [min, min + n):
 *         the body, q for floor(e / D) and r for e mod D
 *         q = q + floor(s / D) + (r + s mod D >= D);  r = r + s mod D - (r + s mod D >= D ? D : 0)
 *
 * (floor(s / D) and s mod D are the same in every iteration: compilers compute them once).
 * Loops inside GPU threads are left alone, and so are constant divisors.
 *
 * A vector loop's index arithmetic that the loop's variable does not change but that
 * divides by a run-time divisor (a Swin window's rows and columns from its number, i0 /
 * (Wp / 4) and i0 % (Wp / 4), inside a reflect pad's fold) is computed once before the
 * loop, in a let: told to vectorize, compilers compute it in every lane, each division
 * emulated lane by lane (tests/dyn/windows at 48x48: its window partition 0.061 ms, 0.012
 * with the let). */
#include "passes.h"

enum { MAX_PAIRS = 4 };

typedef struct {
    Var *w;
    const Stmt *body;       /* the loop's body: what its variables are bound in */
    Expr *e[MAX_PAIRS], *d[MAX_PAIRS];
    int n;
} Divs;

/* Does s bind a variable (a loop's, a let's) that e uses? */
static int uses_inner(const Stmt *s, const Expr *e)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return ir_expr_uses_var(e, s->u.loop.var) || uses_inner(s->u.loop.body, e);
    case S_LET: return ir_expr_uses_var(e, s->u.let.var) || uses_inner(s->u.let.body, e);
    case S_IF: return uses_inner(s->u.cond.then, e) || uses_inner(s->u.cond.els, e);
    case S_ALLOC: return uses_inner(s->u.alloc.body, e);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (uses_inner(s->u.seq.items[i], e))
                return 1;
        return 0;
    default: return 0;
    }
}

/* e as a * w + b, a and b free of w (sums, differences and multiples of w: the step a may
 * be decided at run time, which the simplifier's affine forms do not take). */
static int linear(Expr *e, Var *w, Expr **a, Expr **b)
{
    if (!ir_expr_uses_var(e, w)) {
        *a = ir_idx(0), *b = e;
        return 1;
    }
    if (e->kind == E_VAR) {
        *a = ir_idx(1), *b = ir_idx(0);
        return 1;
    }
    if (e->kind != E_BIN || e->dtype != DT_INDEX)
        return 0;
    Expr *a1, *b1, *a2, *b2;
    BinOp op = e->u.bin.op;
    if ((op != OP_ADD && op != OP_SUB && op != OP_MUL) || !linear(e->u.bin.a, w, &a1, &b1) ||
        !linear(e->u.bin.b, w, &a2, &b2))
        return 0;
    if (op != OP_MUL) {
        *a = ir_bin(op, a1, a2), *b = ir_bin(op, b1, b2);
        return 1;
    }
    if (ir_expr_uses_var(e->u.bin.a, w) && ir_expr_uses_var(e->u.bin.b, w))
        return 0;   /* w * w */
    Expr *k = ir_expr_uses_var(e->u.bin.a, w) ? e->u.bin.b : e->u.bin.a;
    Expr *a0 = ir_expr_uses_var(e->u.bin.a, w) ? a1 : a2, *b0 = ir_expr_uses_var(e->u.bin.a, w) ? b1 : b2;
    *a = ir_bin(OP_MUL, a0, k), *b = ir_bin(OP_MUL, b0, k);
    return 1;
}

/* e's step from w to w + 1 when e is linear in w, or NULL. */
static Expr *step(Var *w, Expr *e)
{
    Expr *a, *b;
    return linear(e, w, &a, &b) ? ir_simplify(a, NULL) : NULL;
}

static int candidate(Divs *v, const Expr *x)
{
    int64_t lo, hi;
    if (x->kind != E_BIN || (x->u.bin.op != OP_FLOORDIV && x->u.bin.op != OP_FLOORMOD) || x->dtype != DT_INDEX)
        return 0;
    Expr *e = x->u.bin.a, *d = x->u.bin.b;
    return ir_expr_uses_var(e, v->w) && !ir_expr_is_const(d, NULL) && !ir_expr_uses_var(d, v->w) &&
           !ir_expr_reads_memory(e) && !ir_expr_reads_memory(d) && !uses_inner(v->body, e) &&
           !uses_inner(v->body, d) && ir_const_bounds(d, NULL, &lo, &hi) && lo >= 1 && step(v->w, e);
}

static int find(const Divs *v, const Expr *e, const Expr *d)
{
    for (int i = 0; i < v->n; i++)
        if (ir_expr_equal(v->e[i], e) && ir_expr_equal(v->d[i], d))
            return i;
    return -1;
}

static Expr *collect_expr(Expr *x, void *ctx)
{
    Divs *v = ctx;
    if (candidate(v, x)) {
        if (find(v, x->u.bin.a, x->u.bin.b) < 0 && v->n < MAX_PAIRS) {
            v->e[v->n] = x->u.bin.a;
            v->d[v->n++] = x->u.bin.b;
        }
        return x;
    }
    return ir_expr_map(x, collect_expr, ctx);
}

static Stmt *collect(Stmt *s, void *ctx) { return ir_stmt_map(s, collect, collect_expr, ctx); }

typedef struct {
    Divs *v;
    Buffer *q[MAX_PAIRS], *r[MAX_PAIRS];
} Use;

static Expr *use_expr(Expr *x, void *ctx)
{
    Use *u = ctx;
    if (x->kind == E_BIN && (x->u.bin.op == OP_FLOORDIV || x->u.bin.op == OP_FLOORMOD)) {
        int i = find(u->v, x->u.bin.a, x->u.bin.b);
        if (i >= 0)
            return ir_load(x->u.bin.op == OP_FLOORDIV ? u->q[i] : u->r[i], ir_idx(0));
    }
    return ir_expr_map(x, use_expr, ctx);
}

static Stmt *use(Stmt *s, void *ctx) { return ir_stmt_map(s, use, use_expr, ctx); }

static Stmt *divs_loop(Stmt *loop)
{
    Divs v = {loop->u.loop.var, loop->u.loop.body, {0}, {0}, 0};
    collect(loop->u.loop.body, &v);
    if (!v.n)
        return NULL;
    Use u = {&v, {0}, {0}};
    int64_t one = 1;
    Stmt *init[2 * MAX_PAIRS], *next[2 * MAX_PAIRS + 1];
    Var *w = v.w;
    Expr *min = loop->u.loop.min;
    for (int i = 0; i < v.n; i++) {
        u.q[i] = ir_buffer_new(ir_fmt("%s_q%d", w->name, i), DT_INDEX, 1, &one, SCOPE_LOCAL);
        u.r[i] = ir_buffer_new(ir_fmt("%s_r%d", w->name, i), DT_INDEX, 1, &one, SCOPE_LOCAL);
        Expr *e0 = ir_simplify(ir_subst(v.e[i], &w, &min, 1), NULL), *d = v.d[i], *s = step(w, v.e[i]);
        init[2 * i] = ir_store(u.q[i], ir_idx(0), ir_simplify(ir_bin(OP_FLOORDIV, e0, d), NULL));
        init[2 * i + 1] = ir_store(u.r[i], ir_idx(0), ir_simplify(ir_bin(OP_FLOORMOD, e0, d), NULL));
        Expr *q = ir_load(u.q[i], ir_idx(0)), *r = ir_load(u.r[i], ir_idx(0));
        Expr *sum = ir_bin(OP_ADD, r, ir_simplify(ir_bin(OP_FLOORMOD, s, d), NULL)), *over = ir_bin(OP_GE, sum, d);
        next[2 * i] = ir_store(u.q[i], ir_idx(0),
                               ir_bin(OP_ADD, ir_bin(OP_ADD, q, ir_simplify(ir_bin(OP_FLOORDIV, s, d), NULL)),
                                      ir_select(over, ir_idx(1), ir_idx(0))));
        /* (r's new value from the old one: q's store reads r first) */
        next[2 * i + 1] = ir_store(u.r[i], ir_idx(0), ir_bin(OP_SUB, sum, ir_select(over, d, ir_idx(0))));
    }
    Stmt *items[2] = {use(loop->u.loop.body, &u), ir_seq(next, 2 * v.n)};
    Stmt *r = ir_seq2(ir_seq(init, 2 * v.n), ir_for_like(loop, min, loop->u.loop.extent, ir_seq(items, 2)));
    for (int i = v.n - 1; i >= 0; i--)
        r = ir_allocate(u.q[i], ir_allocate(u.r[i], r));
    return r;
}

/* ---------------------------------------------------------------- vector loops */

enum { MAX_HOISTED = 8 };

typedef struct {
    const Stmt *loop;
    Var *var[MAX_HOISTED];
    Expr *value[MAX_HOISTED];
    int n;
} Hoist;

static int divides_at_run_time(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_BIN && ir_expr_uses_dims(e->u.bin.b) &&
           (e->u.bin.op == OP_DIV || e->u.bin.op == OP_MOD || e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_FLOORMOD);
}

/* a division by a run-time divisor that can be below 1 (a select may guard it) */
static int divides_unsafely(const Expr *e, const void *ctx)
{
    int64_t lo, hi;
    return divides_at_run_time(e, ctx) && !(ir_const_bounds(e->u.bin.b, NULL, &lo, &hi) && lo >= 1);
}

static int loop_var(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_VAR && !e->u.var->is_dim;
}

/* e with its largest parts that h's loop does not change and that divide by a run-time
 * divisor replaced by lets' variables (divisors the dims' ranges show at least 1: computing
 * such a part where a select would not have chosen it is harmless) */
static Expr *hoist_expr(Expr *e, void *ctx)
{
    Hoist *h = ctx;
    const Stmt *l = h->loop;
    if ((e->dtype == DT_I32 || e->dtype == DT_I64) && !ir_expr_uses_var(e, l->u.loop.var) && !uses_inner(l->u.loop.body, e) &&
        !ir_expr_reads_memory(e) && ir_expr_find(e, loop_var, NULL) && ir_expr_find(e, divides_at_run_time, NULL) &&
        !ir_expr_find(e, divides_unsafely, NULL)) {
        for (int i = 0; i < h->n; i++)
            if (ir_expr_equal(h->value[i], e))
                return ir_varref(h->var[i]);
        if (h->n < MAX_HOISTED) {
            h->var[h->n] = ir_var_new("at", e->dtype);
            h->value[h->n] = e;
            return ir_varref(h->var[h->n++]);
        }
    }
    return ir_expr_map(e, hoist_expr, ctx);
}

static Stmt *hoist_stmt(Stmt *s, void *ctx) { return ir_stmt_map(s, hoist_stmt, hoist_expr, ctx); }

static Stmt *hoist_from_vector(Stmt *loop)
{
    Hoist h = {loop, {0}, {0}, 0};
    Stmt *body = hoist_stmt(loop->u.loop.body, &h);
    if (!h.n)
        return loop;
    Stmt *r = ir_for_like(loop, loop->u.loop.min, loop->u.loop.extent, body);
    for (int i = h.n - 1; i >= 0; i--)
        r = ir_let(h.var[i], h.value[i], r);
    return r;
}

static Stmt *divs(Stmt *s, void *ctx)
{
    if (s->kind == S_FOR && s->u.loop.kind == FOR_VECTORIZED)
        return hoist_from_vector(s);
    if (s->kind == S_FOR && (s->u.loop.kind == FOR_BOUND || s->u.loop.kind == FOR_TENSORIZED))
        return s;
    s = ir_stmt_map(s, divs, NULL, ctx);
    Stmt *r = s->kind == S_FOR && s->u.loop.kind == FOR_SERIAL ? divs_loop(s) : NULL;
    return r ? r : s;
}

Stmt *lower_runtime_divisions(Stmt *s) { return divs(s, NULL); }
