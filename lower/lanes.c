/* lanes.c - the loop pass "reduce-lanes".
 * requires: a simplified, unrolled nest (after the interchange); breaks: nothing (the
 * simplifier runs after it).
 *
 * A serial reduction loop whose terms read memory at consecutive elements along it, each
 * term folded into an accumulator that the loop does not index
 *
 *     for r in [0, N):  acc[0] = acc[0] + exp(x[r] - m[0]);  if (c) acc[1] = ...
 *
 * (a softmax's row sums, a LayerNorm's mean, a global pooling over a row of NCHW data: the
 * rows a tile holds are the output's, and the data runs along the reduction) is a chain of
 * dependent scalar operations per accumulator, its terms computed one at a time (ViT-B/16's
 * softmax sums: 9 ns an element). The pass gives each accumulator LANES lanes, which a vector
 * loop over each chunk of LANES terms folds into, then folds the lanes and the last N % LANES
 * terms into the accumulator:
 *
 *     vectorized for l: lane[0 * LANES + l] = identity           (each accumulator's lanes)
 *     for ro in [0, N / LANES):
 *         vectorized for l: lane[l] = lane[l] + exp(x[ro * LANES + l] - m[0]);  if (c) ...
 *     for r in [N / LANES * LANES, N): the loop's body as it was
 *     for l in [0, LANES): acc[0] = acc[0] + lane[l];  if (c) ...
 *
 * Sums (f32) then add their terms in another order, LANES partial sums, as every vectorized
 * library's reductions do; max and min give the same result (NaN included: kgen's max and
 * min pass a NaN on from either side). N may be decided at run time (a softmax over a
 * row of H * W / 16 tokens): the chunks and the rest are then counted at run time. Loops
 * inside GPU threads are left alone. */
#include "passes.h"

#include <math.h>

enum { LANES = 8 };   /* AVX2's 8 f32 lanes, two vectors of NEON's or wasm's 4 */

typedef struct {
    Expr *cond;     /* the guard around the update (NULL: none) */
    Buffer *acc;    /* the accumulator, at index `at` */
    Expr *at;
    BinOp op;       /* OP_ADD, OP_MAX or OP_MIN */
    Expr *term;     /* the term folded in, in r */
    int acc_left;   /* acc is op's left operand */
} Update;

#define MAX_UPDATES 32

/* Is s an update acc[at] = acc[at] op term (guarded by an if free of r) that the pass
 * takes? Fills *u. */
static int match_update(Stmt *s, const Var *r, Update *u)
{
    u->cond = NULL;
    if (s->kind == S_IF && !s->u.cond.els) {
        if (ir_expr_uses_var(s->u.cond.cond, r) || ir_expr_reads_memory(s->u.cond.cond))
            return 0;
        u->cond = s->u.cond.cond;
        s = s->u.cond.then;
    }
    if (s->kind != S_STORE || s->u.store.buf->dtype != DT_F32 || ir_expr_uses_var(s->u.store.index, r))
        return 0;
    Expr *v = s->u.store.value;
    if (v->kind != E_BIN || (v->u.bin.op != OP_ADD && v->u.bin.op != OP_MAX && v->u.bin.op != OP_MIN))
        return 0;
    for (int side = 0; side < 2; side++) {
        Expr *a = side ? v->u.bin.b : v->u.bin.a, *t = side ? v->u.bin.a : v->u.bin.b;
        if (a->kind == E_LOAD && a->u.load.buf == s->u.store.buf && ir_expr_equal(a->u.load.index, s->u.store.index)) {
            *u = (Update){u->cond, s->u.store.buf, s->u.store.index, v->u.bin.op, t, !side};
            return 1;
        }
    }
    return 0;
}

/* ir_expr_find's visitor: a load that varies along ctx->r at another stride than 1 (a
 * gather, once vectorized); ctx->unit counts the loads at stride 1. */
typedef struct {
    Var *r;
    int unit;
} Strides;

static int bad_load(const Expr *e, const void *ctx)
{
    Strides *c = (Strides *)ctx;
    if (e->kind != E_LOAD || !ir_expr_uses_var(e->u.load.index, c->r))
        return 0;
    /* the index one further along r, less the index: 1 (its other terms, run-time
     * extents' products included, cancel) */
    Expr *next = ir_add(ir_varref(c->r), ir_idx(1));
    int64_t step;
    if (!ir_expr_is_const(ir_simplify(ir_sub(ir_subst(e->u.load.index, &c->r, &next, 1), e->u.load.index), NULL),
                          &step) ||
        step != 1)
        return 1;
    c->unit++;
    return 0;
}

static Expr *identity(BinOp op)
{
    return ir_float(op == OP_ADD ? -0.0 : op == OP_MAX ? -INFINITY : INFINITY, DT_F32);
}

/* acc op x, with the operands in the update's order */
static Expr *fold(const Update *u, Expr *acc, Expr *x)
{
    return ir_bin(u->op, u->acc_left ? acc : x, u->acc_left ? x : acc);
}

static Stmt *guarded(const Update *u, Stmt *s) { return u->cond ? ir_if(u->cond, s, NULL) : s; }

/* The loop rewritten, or NULL where it does not take the pass. */
static Stmt *lanes_loop(Stmt *loop)
{
    int64_t min, n = -1;
    Var *r = loop->u.loop.var;
    Expr *ext = loop->u.loop.extent;
    if (loop->u.loop.kind != FOR_SERIAL || !ir_expr_is_const(loop->u.loop.min, &min) || min != 0 ||
        (ir_expr_is_const(ext, &n) && n < 2 * LANES) || ir_expr_uses_var(ext, r) || ir_expr_reads_memory(ext))
        return NULL;
    Stmt *body = loop->u.loop.body;
    Stmt **items = body->kind == S_SEQ ? body->u.seq.items : &body;
    int count = body->kind == S_SEQ ? body->u.seq.n : 1;
    if (count > MAX_UPDATES)
        return NULL;
    Update u[MAX_UPDATES];
    Strides st = {r, 0};
    for (int i = 0; i < count; i++) {
        if (!match_update(items[i], r, &u[i]) || ir_expr_find(u[i].term, bad_load, &st))
            return NULL;
        for (int k = 0; k <= i; k++)
            if (lower_loads_other(u[i].term, u[k].acc, NULL) || (k < i && u[k].acc == u[i].acc && u[k].op != u[i].op))
                return NULL;
    }
    if (!st.unit)
        return NULL;   /* no term reads along r: nothing to vectorize */
    int64_t size = (int64_t)count * LANES;
    Buffer *lane = ir_buffer_new(ir_fmt("%s_lanes", u[0].acc->name), DT_F32, 1, &size, SCOPE_LOCAL);
    Var *l = ir_var_new("l", DT_INDEX), *ro = ir_var_new(ir_fmt("%s_outer", r->name), DT_INDEX);
    Stmt **step = ir_alloc(sizeof *step * (size_t)count), **out = ir_alloc(sizeof *out * (size_t)count);
    /* a run-time extent (n < 0): chunks and the tail counted at run time */
    Expr *chunks = n >= 0 ? ir_idx(n / LANES) : ir_bin(OP_FLOORDIV, ext, ir_idx(LANES));
    Expr *done = n >= 0 ? ir_idx(n / LANES * LANES) : ir_mul(chunks, ir_idx(LANES));
    Expr *at_r = ir_add(ir_mul(ir_varref(ro), ir_idx(LANES)), ir_varref(l));
    for (int i = 0; i < count; i++) {
        Expr *li = ir_add(ir_idx((int64_t)i * LANES), ir_varref(l));
        Expr *term = ir_subst(u[i].term, &r, &at_r, 1);
        step[i] = guarded(&u[i], ir_for(l, ir_idx(0), ir_idx(LANES), FOR_VECTORIZED,
                                        ir_store(lane, li, fold(&u[i], ir_load(lane, li), term))));
        out[i] = guarded(&u[i], ir_for(l, ir_idx(0), ir_idx(LANES), FOR_SERIAL,
                                       ir_store(u[i].acc, u[i].at, fold(&u[i], ir_load(u[i].acc, u[i].at),
                                                                        ir_load(lane, li)))));
    }
    /* the lanes' identities: one nest where they agree, else a loop per accumulator */
    int same = 1;
    for (int i = 1; i < count; i++)
        same &= u[i].op == u[0].op;
    Var *k = ir_var_new("k", DT_INDEX);
    Stmt **init = ir_alloc(sizeof *init * (size_t)count);
    for (int i = 0; i < (same ? 1 : count); i++) {
        Expr *at = same ? ir_add(ir_mul(ir_varref(k), ir_idx(LANES)), ir_varref(l))
                        : ir_add(ir_idx((int64_t)i * LANES), ir_varref(l));
        init[i] = ir_for(l, ir_idx(0), ir_idx(LANES), FOR_VECTORIZED, ir_store(lane, at, identity(u[i].op)));
    }
    Stmt *parts[4];
    int np = 0;
    Stmt *first = ir_seq2(same ? ir_for(k, ir_idx(0), ir_idx(count), FOR_SERIAL, init[0]) : ir_seq(init, count),
                          ir_for(ro, ir_idx(0), chunks, FOR_SERIAL, ir_seq(step, count)));
    Stmt *last = ir_seq(out, count);
    /* a run-time extent below LANES (a softmax over 7 tokens) has no chunk: the lanes are
     * neither set nor folded, the terms go through the rest alone (the lanes' 16 steps a
     * row cost 4 times a 7-term row's own) */
    Expr *any = n < 0 ? ir_bin(OP_GE, ext, ir_idx(LANES)) : NULL;
    parts[np++] = any ? ir_if(any, first, NULL) : first;
    if (n < 0 || n % LANES)
        parts[np++] = ir_for_like(loop, done, n >= 0 ? ir_idx(n % LANES) : ir_bin(OP_SUB, ext, done), body);
    parts[np++] = any ? ir_if(any, last, NULL) : last;
    return ir_allocate(lane, ir_seq(parts, np));
}

static Stmt *lanes(Stmt *s, void *ctx)
{
    if (s->kind == S_FOR && (s->u.loop.kind == FOR_BOUND || s->u.loop.kind == FOR_VECTORIZED ||
                             s->u.loop.kind == FOR_TENSORIZED))
        return s;
    s = ir_stmt_map(s, lanes, NULL, ctx);
    Stmt *r = s->kind == S_FOR ? lanes_loop(s) : NULL;
    return r ? r : s;
}

Stmt *lower_reduce_lanes(Stmt *s) { return lanes(s, NULL); }
