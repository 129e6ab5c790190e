/* tails.c - the loop pass "runtime-tails": a serial loop over o whose body is guarded by
 * `o * F + r < E`, E a run-time extent (an expression of dims decided at run time) and r
 * what the loops inside add (a register tile's column, a vector lane), runs as two loops:
 * the whole chunks, where every such guard holds and is dropped, then the rest with the
 * guards kept (at most one chunk when o's loop ends at ceil(E / F)). The constant-extent
 * case is peel.c's; this is its run-time form, for the tiles and vector loops over a dim
 * decided at run time (--input-shape x=1,3,32..224,W): without it every column of every
 * tile is guarded, and compilers keep a tile's accumulators in memory. A loop that holds a
 * local buffer (a register tile) takes constant bounds too, where its chunks overhang them
 * (an NCHW conv's 66 columns in tiles of 16: the last tile's 2 columns; peel.c's loops hold
 * none). Without a chunk
 * loop (the whole extent fits one tile at the bound) the tile runs in versions by E's
 * value, a vector loop over the bound over [0, E) (the section below). (A parallel loop of
 * fused axes over run-time extents runs to their product from the start: lower.c.)
 * requires: a simplified nest, before unrolling (a tile's unrolled column loop is shortened in the
 * last chunk); breaks: nothing (the simplifier runs after it).
 */
#include "passes.h"

enum { MAX_INNER = 32, MAX_LOCALS = 8 };

/* The guards taken come in families of one coefficient of o and one bound (a pool's
 * output columns against its output width, its input columns, twice as many, against the
 * input's); the whole chunks are those where every family's guards hold. The first family
 * (families[0]) is the one whose last chunk's lane loops are shortened. */
enum { MAX_FAMILIES = 4 };

typedef struct {
    Var *o;
    int consts;           /* constant bounds taken too (o's loop holds a local buffer) */
    int64_t F;            /* the first family: o's coefficient in its guards */
    Expr *E;              /* their bound */
    int64_t rhi;          /* the most the rest adds */
    int nfam;
    struct { int64_t F, rhi; Expr *E; } fam[MAX_FAMILIES];
    RangeMap inner;       /* the loops inside o, on the way down */
    int found;
    int64_t rem;          /* the last chunk's version for this many lanes (0: any, a loop) */
    Expr *off;            /* with rem: those lanes start here (pow2_pieces) */
    const Buffer *locals[MAX_LOCALS];   /* the chunk's own local buffers (pow2_pieces) */
    int nlocals;
} Tails;

static int not_dim(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_VAR && !e->u.var->is_dim;
}

/* cond is `o * F + r < E` with E run-time and free of the loops from o in; sets *F, *E
 * and *rhi (r's largest value). `max(o * F + r, c) < E` is one too when c < E always (a
 * pool's window clamped to the input at both ends: the start clamp is the constant). */
static int match_guard(Tails *t, Expr *cond, int64_t *F, Expr **E, int64_t *rhi)
{
    if (cond->kind != E_BIN || cond->u.bin.op != OP_LT)
        return 0;
    Expr *a = cond->u.bin.a, *e = cond->u.bin.b;
    int64_t c, elo, ehi;
    if (!(ir_expr_uses_dims(e) || (t->consts && ir_expr_is_const(e, &c))) || ir_expr_reads_memory(e) ||
        ir_expr_uses_var(e, t->o))
        return 0;
    while (a->kind == E_BIN && a->u.bin.op == OP_MAX && ir_expr_is_const(a->u.bin.b, &c) &&
           ir_const_bounds(e, NULL, &elo, &ehi) && c < elo)
        a = a->u.bin.a;
    if (!t->o) {   /* a tile of the whole extent: `r < E`, r of the loops inside */
        int64_t lo, hi;
        if (ir_expr_find(e, not_dim, NULL) || !ir_const_bounds(a, &t->inner, &lo, &hi))
            return 0;
        *F = 0;
        *E = e;
        *rhi = hi;
        return 1;
    }
    for (int i = 0; i < t->inner.n; i++)
        if (ir_expr_uses_var(e, t->inner.items[i].var))
            return 0;
    int64_t f;
    if (!ir_index_affine(a, &t->inner, &t->o, 1, &f) || f <= 0)
        return 0;
    Expr *r = ir_simplify(ir_sub(a, ir_mul(ir_varref(t->o), ir_idx(f))), &t->inner);
    int64_t lo, hi;
    if (ir_expr_uses_var(r, t->o) || !ir_const_bounds(r, &t->inner, &lo, &hi))
        return 0;
    *F = f;
    *E = e;
    *rhi = hi;
    return 1;
}

static void take(Tails *t, Expr *cond)
{
    int64_t F, rhi;
    Expr *E;
    if (!match_guard(t, cond, &F, &E, &rhi))
        return;
    int i = 0;
    while (i < t->nfam && !(t->fam[i].F == F && ir_expr_equal(t->fam[i].E, E)))
        i++;
    if (i == t->nfam) {
        if (t->nfam == MAX_FAMILIES)
            return;
        t->fam[t->nfam].F = F, t->fam[t->nfam].E = E, t->fam[t->nfam].rhi = rhi;
        t->nfam++;
    } else if (rhi > t->fam[i].rhi) {
        t->fam[i].rhi = rhi;
    }
    t->found = 1;
    t->F = t->fam[0].F, t->E = t->fam[0].E, t->rhi = t->fam[0].rhi;
}

/* does cond hold in the whole chunks (one of the guards taken)? */
static int taken(Tails *t, Expr *cond)
{
    int64_t F, rhi;
    Expr *E;
    if (!match_guard(t, cond, &F, &E, &rhi))
        return 0;
    for (int i = 0; i < t->nfam; i++)
        if (t->fam[i].F == F && ir_expr_equal(t->fam[i].E, E) && rhi <= t->fam[i].rhi)
            return 1;
    return 0;
}

/* min(a, E - 1), a clamp to a run-time extent (a max pool reading the input's edge for
 * its end padding): the guard `a < E` it is, else NULL. An a without loop variables is no
 * position clamped but arithmetic on extents (`min(2, T)`: how many of the last two tokens
 * there are), which no tile overhangs. */
static Expr *clamp_guard(const Expr *e)
{
    if (e->kind != E_BIN || e->u.bin.op != OP_MIN || !ir_expr_find(e->u.bin.a, not_dim, NULL))
        return NULL;
    Expr *E = ir_simplify(ir_add(e->u.bin.b, ir_idx(1)), NULL);
    return ir_expr_uses_dims(E) ? ir_bin(OP_LT, e->u.bin.a, E) : NULL;
}

/* the operands of the && chains of selects' conditions (padding: `x + k < W ? X[...] : 0`),
 * and clamps */
static int scan_select(const Expr *e, const void *ctx)
{
    Tails *t = (Tails *)ctx;
    Expr *g = clamp_guard(e);
    if (g)
        take(t, g);
    if (e->kind != E_SELECT)
        return 0;
    Expr *stack[64];
    int n = 0;
    stack[n++] = e->u.sel.cond;
    while (n > 0) {
        Expr *c = stack[--n];
        if (c->kind == E_BIN && c->u.bin.op == OP_AND && n + 2 <= 64) {
            stack[n++] = c->u.bin.a;
            stack[n++] = c->u.bin.b;
        } else {
            take(t, c);
        }
    }
    return 0;
}

static Expr *drop_cond(Tails *t, Expr *c)
{
    if (c->kind == E_BIN && c->u.bin.op == OP_AND) {
        Expr *a = drop_cond(t, c->u.bin.a), *b = drop_cond(t, c->u.bin.b);
        return a == c->u.bin.a && b == c->u.bin.b ? c : ir_bin(OP_AND, a, b);
    }
    return taken(t, c) ? ir_bool(1) : c;
}

static Expr *drop_expr(Expr *e, void *ctx)
{
    Tails *t = ctx;
    e = ir_expr_map(e, drop_expr, ctx);
    Expr *g = clamp_guard(e);
    if (g && taken(t, g))
        return e->u.bin.a;
    if (e->kind == E_SELECT) {
        Expr *c = drop_cond(t, e->u.sel.cond);
        if (c != e->u.sel.cond)
            return ir_select(c, e->u.sel.t, e->u.sel.f);
    }
    return e;
}

/* the guards of the body: the first one taken fixes F and E; others with the same join */
static void scan(Tails *t, const Stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR: {
        int64_t ext;
        int pushed = ir_expr_is_const(s->u.loop.min, &ext) && ext == 0 && ir_expr_is_const(s->u.loop.extent, &ext) &&
                     t->inner.n < MAX_INNER;
        if (pushed)
            ir_range_push(&t->inner, s->u.loop.var, 0, ext - 1);
        scan(t, s->u.loop.body);
        if (pushed)
            ir_range_pop(&t->inner);
        break;
    }
    case S_LET: scan(t, s->u.let.body); break;
    case S_IF: {
        if (!s->u.cond.els)
            take(t, s->u.cond.cond);
        scan(t, s->u.cond.then);
        scan(t, s->u.cond.els);
        break;
    }
    case S_ALLOC: scan(t, s->u.alloc.body); break;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            scan(t, s->u.seq.items[i]);
        break;
    case S_STORE:
        ir_expr_find(s->u.store.value, scan_select, t);
        break;
    default: break;
    }
}

/* the body with the guards taken replaced by what they guard */
static Stmt *drop(Stmt *s, void *ctx)
{
    Tails *t = ctx;
    if (s->kind == S_FOR) {
        int64_t ext;
        if (ir_expr_is_const(s->u.loop.min, &ext) && ext == 0 && ir_expr_is_const(s->u.loop.extent, &ext) &&
            t->inner.n < MAX_INNER) {
            ir_range_push(&t->inner, s->u.loop.var, 0, ext - 1);
            Stmt *r = ir_stmt_map(s, drop, NULL, ctx);
            ir_range_pop(&t->inner);
            return r;
        }
    }
    if (s->kind == S_IF && !s->u.cond.els && taken(t, s->u.cond.cond))
        return drop(s->u.cond.then, ctx);
    return ir_stmt_map(s, drop, s->kind == S_STORE ? drop_expr : NULL, ctx);
}

/* ---------------------------------------------------------------- the rest
 *
 * In the last chunk a loop over [0, F) whose every store is under `o * F + v < E` (a
 * register tile's columns, a vector loop's lanes) runs over [0, E - o * F) instead, a
 * serial loop without the guards: the columns past the extent were doing nothing. */

/* is c exactly `o * F + v < E` for the guards taken? */
static int lane_guard(Tails *t, const Expr *c, Var *v)
{
    if (c->kind != E_BIN || c->u.bin.op != OP_LT || !ir_expr_equal(c->u.bin.b, t->E))
        return 0;
    if (!t->o)   /* no chunk loop: `v < E` */
        return c->u.bin.a->kind == E_VAR && c->u.bin.a->u.var == v;
    Var *vars[2] = {t->o, v};
    int64_t k[2];
    if (!ir_index_affine(c->u.bin.a, NULL, vars, 2, k) || k[0] != t->F || k[1] != 1)
        return 0;
    Expr *r = ir_simplify(ir_sub(ir_sub(c->u.bin.a, ir_mul(ir_varref(t->o), ir_idx(t->F))), ir_varref(v)), NULL);
    int64_t z;
    return ir_expr_is_const(r, &z) && z == 0;
}

/* is every store of s under such a guard (guarded: already inside one)? */
static int all_guarded(Tails *t, const Stmt *s, Var *v, int guarded)
{
    if (!s)
        return 1;
    switch (s->kind) {
    case S_STORE:
    case S_PREFETCH: return guarded;
    case S_IF:
        if (!s->u.cond.els && lane_guard(t, s->u.cond.cond, v))
            return all_guarded(t, s->u.cond.then, v, 1);
        return all_guarded(t, s->u.cond.then, v, guarded) && all_guarded(t, s->u.cond.els, v, guarded);
    case S_FOR: return all_guarded(t, s->u.loop.body, v, guarded);
    case S_LET: return all_guarded(t, s->u.let.body, v, guarded);
    case S_ALLOC: return all_guarded(t, s->u.alloc.body, v, guarded);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!all_guarded(t, s->u.seq.items[i], v, guarded))
                return 0;
        return 1;
    case S_COMMENT: return 1;
    default: return 0;   /* a barrier: every lane must reach it */
    }
}

typedef struct {
    Tails *t;
    Var *v;
} Lane;

static Stmt *unguard(Stmt *s, void *ctx)
{
    Lane *l = ctx;
    if (s->kind == S_IF && !s->u.cond.els && lane_guard(l->t, s->u.cond.cond, l->v))
        return unguard(s->u.cond.then, ctx);
    return ir_stmt_map(s, unguard, NULL, ctx);
}

/* Is s a loop over the lanes that shorten() shortens: from 0 over F (any constant extent
 * without a chunk loop, t->o NULL), every store under `o * F + v < E`? ext: its extent. */
static int lane_loop(Tails *t, const Stmt *s, int64_t *ext)
{
    int64_t lo;
    return s->kind == S_FOR && ir_expr_is_const(s->u.loop.min, &lo) && lo == 0 &&
           ir_expr_is_const(s->u.loop.extent, ext) && (t->o ? *ext == t->F : *ext > t->rem) &&
           s->u.loop.kind != FOR_PARALLEL && s->u.loop.kind != FOR_BOUND && all_guarded(t, s->u.loop.body, s->u.loop.var, 0);
}

/* The lanes of a piece (pow2_pieces) at t->off: v is off + v, but in the chunk's own
 * local buffers (a register tile), whose columns the piece renames to 0 .. rem - 1 so that
 * the compiler keeps them in registers. */
typedef struct {
    const Tails *t;
    Var *v;
    Expr *at;
} Shift;

static int chunk_local(const Tails *t, const Buffer *b)
{
    for (int i = 0; i < t->nlocals; i++)
        if (t->locals[i] == b)
            return 1;
    return 0;
}

static Expr *shift_expr(Expr *e, void *ctx)
{
    Shift *x = ctx;
    if (e->kind == E_VAR && e->u.var == x->v)
        return x->at;
    if (e->kind == E_LOAD && chunk_local(x->t, e->u.load.buf))
        return e;
    return ir_expr_map(e, shift_expr, ctx);
}

static Stmt *shift(Stmt *s, void *ctx)
{
    Shift *x = ctx;
    if (s->kind == S_STORE && chunk_local(x->t, s->u.store.buf))
        return ir_store(s->u.store.buf, s->u.store.index, shift_expr(s->u.store.value, ctx));
    return ir_stmt_map(s, shift, shift_expr, ctx);
}

/* (without a chunk loop, t->o NULL: a loop of any constant extent, its lanes `v < E`) */
static Stmt *shorten(Stmt *s, void *ctx)
{
    Tails *t = ctx;
    s = ir_stmt_map(s, shorten, NULL, ctx);
    int64_t ext;
    if (!lane_loop(t, s, &ext))
        return s;
    Lane l = {t, s->u.loop.var};
    Stmt *body = unguard(s->u.loop.body, &l);
    /* a version for rem lanes: the loop keeps its kind (an unrolled tile stays one), a
     * micro-kernel's becomes a vector loop (its pattern is of the whole width) */
    if (t->rem && t->off) {
        Shift x = {t, s->u.loop.var, ir_add(t->off, ir_varref(s->u.loop.var))};
        body = shift(body, &x);
    }
    if (t->rem && s->u.loop.kind == FOR_TENSORIZED)
        return ir_for(s->u.loop.var, ir_idx(0), ir_idx(t->rem), FOR_VECTORIZED, body);
    if (t->rem)
        return ir_for_like(s, ir_idx(0), ir_idx(t->rem), body);
    Expr *left = t->o ? ir_sub(t->E, ir_mul(ir_varref(t->o), ir_idx(t->F))) : t->E;
    int64_t elo, ehi;
    if (!t->o && !(ir_const_bounds(t->E, NULL, &elo, &ehi) && ehi <= ext))
        left = ir_bin(OP_MIN, left, ir_idx(ext));
    return ir_for(s->u.loop.var, ir_idx(0), ir_simplify(left, NULL), FOR_SERIAL, body);
}

/* The last chunk of a tile at most TAIL_VERSIONS columns wide: one version per count of
 * columns left, each a tile of that width (registers, unrolled), chosen at run time;
 * wider chunks run their last one as a loop over the columns left. */
enum { TAIL_VERSIONS = 8 };

/* In the last chunk the guards of the first family that reach past its lanes (`o * F + r
 * < E`, r up to F or more: a convolution's input columns) are of the columns left, E - o *
 * F: with rem of them, `r < rem`; with F or more, `r < F || o * F + r < E`. Unrolled, r
 * becomes a constant or a kernel tap, and the simplifier drops the guards that hold. */
static Expr *rel_guard(Expr *e, void *ctx)
{
    Tails *t = ctx;
    e = ir_expr_map(e, rel_guard, ctx);
    int64_t f;
    if (e->kind != E_BIN || e->u.bin.op != OP_LT || !ir_expr_equal(e->u.bin.b, t->E) ||
        !ir_index_affine(e->u.bin.a, NULL, &t->o, 1, &f) || f != t->F)
        return e;
    Expr *r = ir_simplify(ir_sub(e->u.bin.a, ir_mul(ir_varref(t->o), ir_idx(t->F))), NULL);
    if (ir_expr_uses_var(r, t->o))
        return e;
    if (t->rem)
        return ir_bin(OP_LT, r, ir_idx(t->rem));
    return ir_bin(OP_OR, ir_bin(OP_LT, r, ir_idx(t->F)), e);
}

static Stmt *rel_guards(Stmt *s, void *ctx) { return ir_stmt_map(s, rel_guards, rel_guard, ctx); }

/* The last chunk's body when rem of its F columns are left: its lane loops shortened to
 * rem, the guards reaching past them relative to the chunk. */
static Stmt *rem_chunk(Tails *t, Stmt *body, int64_t rem)
{
    t->rem = rem;
    Stmt *r = rel_guards(shorten(body, t), t);
    t->rem = 0;
    return r;
}

static int is_E(const Expr *e, const void *ctx) { return ir_expr_equal(e, ctx); }

/* a comparison of indices with E on a side, of the chunk's columns (it uses o; without a
 * chunk loop, any): a guard of E's. (The rows of a tile over the same extent, a square
 * attention matrix's, are guarded by E too, not by the columns left; a comparison of
 * values read, a causal mask's positions, is no guard.) */
static int guard_of_E(const Expr *e, const void *ctx)
{
    const Tails *t = ctx;
    if (e->kind != E_BIN || (e->u.bin.op != OP_LT && e->u.bin.op != OP_LE && e->u.bin.op != OP_GT &&
                             e->u.bin.op != OP_GE && e->u.bin.op != OP_EQ && e->u.bin.op != OP_NE) ||
        ir_expr_reads_memory(e))
        return 0;
    return (ir_expr_find(e->u.bin.a, is_E, t->E) || ir_expr_find(e->u.bin.b, is_E, t->E)) &&
           (!t->o || ir_expr_uses_var(e, t->o));
}

static Expr *find_E(Expr *e, void *ctx)
{
    Tails *t = ctx;
    if (!t->found && ir_expr_find(e, guard_of_E, t))
        t->found = 1;
    return e;
}

static Stmt *find_E_stmt(Stmt *s, void *ctx) { return ir_stmt_map(s, find_E_stmt, find_E, ctx); }

/* The last chunk's left < F columns (F wider than TAIL_VERSIONS) in pieces of 2^k columns,
 * one for each bit of left, each at the columns of the bits above it: vector loops of a
 * constant width, where one loop over the columns left is scalar code (a 3x3 stride-2
 * conv's 10 columns in a 16-column tile ran 7 times as long as the static build's). NULL
 * where the chunk has guards of E other than its lanes' (they would need the columns
 * left). */
/* Is every access of the chunk's local buffers in s inside a lane loop and indexed by its
 * variable (then the pieces rename their columns consistently)? Collects them first. */
typedef struct {
    Tails *t;
    Var *lane;   /* the innermost lane loop's variable around, NULL outside them */
    int ok;
} LocalUse;

static int local_use_expr(const Expr *e, const void *ctx)
{
    const LocalUse *u = ctx;
    return e->kind == E_LOAD && chunk_local(u->t, e->u.load.buf) &&
           (!u->lane || !ir_expr_uses_var(e->u.load.index, u->lane));
}

static void local_uses(LocalUse *u, const Stmt *s)
{
    if (!s || !u->ok)
        return;
    int64_t ext;
    switch (s->kind) {
    case S_FOR: {
        Var *outer = u->lane;
        if (lane_loop(u->t, s, &ext))
            u->lane = s->u.loop.var;
        if (ir_expr_find(s->u.loop.extent, local_use_expr, u))
            u->ok = 0;
        local_uses(u, s->u.loop.body);
        u->lane = outer;
        return;
    }
    case S_LET:
        if (ir_expr_find(s->u.let.value, local_use_expr, u))
            u->ok = 0;
        local_uses(u, s->u.let.body);
        return;
    case S_IF:
        if (ir_expr_find(s->u.cond.cond, local_use_expr, u))
            u->ok = 0;
        local_uses(u, s->u.cond.then);
        local_uses(u, s->u.cond.els);
        return;
    case S_ALLOC:
        if (u->t->nlocals < MAX_LOCALS && s->u.alloc.buf->scope == SCOPE_LOCAL)
            u->t->locals[u->t->nlocals++] = s->u.alloc.buf;
        else
            u->ok = 0;
        local_uses(u, s->u.alloc.body);
        return;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            local_uses(u, s->u.seq.items[i]);
        return;
    case S_STORE:
    case S_PREFETCH:
        if ((chunk_local(u->t, s->u.store.buf) && (!u->lane || !ir_expr_uses_var(s->u.store.index, u->lane))) ||
            ir_expr_find(s->u.store.index, local_use_expr, u) ||
            (s->u.store.value && ir_expr_find(s->u.store.value, local_use_expr, u)))
            u->ok = 0;
        return;
    default: return;
    }
}

/* Does s only store constants into the chunk's local buffers (a register tile's zeros)? */
static int inits_local(const Tails *t, const Stmt *s)
{
    switch (s->kind) {
    case S_STORE:
        return chunk_local(t, s->u.store.buf) && (s->u.store.value->kind == E_FLOAT || s->u.store.value->kind == E_INT);
    case S_FOR: return s->u.loop.kind != FOR_PARALLEL && inits_local(t, s->u.loop.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!inits_local(t, s->u.seq.items[i]))
                return 0;
        return 1;
    default: return 0;
    }
}

/* A piece's tile is zeroed whole, without the guards of the other dims' rows (gcc
 * -Wmaybe-uninitialized cannot pair them with the guards of their uses): the rows past
 * the extent are never read, and zeros there are harmless. */
static Stmt *unguard_inits(Stmt *s, void *ctx)
{
    const Tails *t = ctx;
    if (s->kind == S_IF && !s->u.cond.els && inits_local(t, s->u.cond.then))
        return s->u.cond.then;
    return ir_stmt_map(s, unguard_inits, NULL, ctx);
}

static Stmt *pow2_pieces(Tails *t, Stmt *body, Expr *left)
{
    Tails l = *t;
    l.nlocals = 0;
    LocalUse u = {&l, NULL, 1};
    local_uses(&u, body);
    if (!u.ok)
        return NULL;
    int64_t w = 1;
    while (w * 2 < t->F)
        w *= 2;
    Stmt *seq = NULL;
    for (; w >= 1; w /= 2) {
        Tails c = l;
        c.rem = w;
        c.off = ir_simplify(ir_mul(ir_bin(OP_FLOORDIV, left, ir_idx(2 * w)), ir_idx(2 * w)), NULL);
        Stmt *piece = unguard_inits(shorten(body, &c), &c);
        c.found = 0;
        find_E_stmt(piece, &c);
        if (c.found)
            return NULL;
        piece = ir_if(ir_bin(OP_GE, ir_bin(OP_FLOORMOD, left, ir_idx(2 * w)), ir_idx(w)), piece, NULL);
        seq = seq ? ir_seq2(seq, piece) : piece;
    }
    return seq;
}

static Stmt *last_chunk(Tails *t, Stmt *body)
{
    /* (a chunk with F or more columns left, before the last, when other guards ended the
     * whole chunks early: the body as it was) */
    Expr *left = ir_simplify(ir_sub(t->E, ir_mul(ir_varref(t->o), ir_idx(t->F))), NULL);
    t->rem = 0;
    /* (that chunk has all its lanes: the first family's guards of lanes hold there, not
     * those that reach past them, a convolution's input columns of its end padding) */
    Tails first = *t;
    first.nfam = 1;
    first.fam[0].rhi = t->F - 1;
    Stmt *full = rel_guards(drop(body, &first), t);
    t->inner = first.inner;
    if (t->F > TAIL_VERSIONS) {
        Stmt *pieces = pow2_pieces(t, body, left);
        return ir_if(ir_bin(OP_LT, left, ir_idx(t->F)), pieces ? pieces : shorten(body, t), full);
    }
    Stmt *chain = full;
    for (int64_t r = t->F - 1; r >= 1; r--)
        chain = ir_if(ir_bin(OP_EQ, left, ir_idx(r)), rem_chunk(t, body, r), chain);
    return chain;
}

/* Is N = (a + c1) / F and K = (a + c2) / F with c1 >= c2 (then N >= K)? a + c2 >= 0. */
static int is_div(const Expr *e)
{
    return e->kind == E_BIN && (e->u.bin.op == OP_FLOORDIV || e->u.bin.op == OP_DIV);   /* (never negative here) */
}

/* Is N = (E + c) / F with 0 <= c < F: does every chunk o < N have a lane o * F < E? The
 * simplifier writes (a + k * F) / F as a / F + k (a padded width's chunks, (2 * W + 16) /
 * 16, print as 2 * W / 16 + 1). */
static int ceil_chunks(const Expr *N, Expr *E, int64_t F)
{
    int64_t f, c, k = 0;
    if (N->kind == E_BIN && N->u.bin.op == OP_ADD && is_div(N->u.bin.a) && ir_expr_is_const(N->u.bin.b, &k))
        N = N->u.bin.a;
    if (!is_div(N) || !ir_expr_is_const(N->u.bin.b, &f) || f != F)
        return 0;
    return ir_expr_is_const(ir_simplify(ir_sub(ir_add(N->u.bin.a, ir_idx(k * F)), E), NULL), &c) && c >= 0 && c < F;
}

static int ceil_at_least(const Expr *N, const Expr *K)
{
    if (!is_div(N) || !is_div(K) || !ir_expr_equal(N->u.bin.b, K->u.bin.b))
        return 0;
    int64_t d;
    return ir_expr_is_const(ir_simplify(ir_sub(N->u.bin.a, K->u.bin.a), NULL), &d) && d >= 0;
}

/* Does s allocate a local buffer: a register tile, or the scalar of a select or reduction
 * computed in statements? (A loop of chunks whose body is a vector loop, without one, is
 * peel.c's; with one, it is this pass's, constant bounds too.) */
static int holds_local(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_ALLOC: return s->u.alloc.buf->scope == SCOPE_LOCAL || holds_local(s->u.alloc.body);
    case S_FOR: return holds_local(s->u.loop.body);
    case S_LET: return holds_local(s->u.let.body);
    case S_IF: return holds_local(s->u.cond.then) || holds_local(s->u.cond.els);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (holds_local(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* Is every constant bound taken the extent that o's N chunks overhang, (N - 1) * F < E <
 * N * F (a tile's columns past the tensor)? Others (a conv's padding: rows against the
 * input's, a loop of chunks that divide the extent) gain nothing from a split. */
static int overhangs(const Tails *t, const Expr *N)
{
    int64_t n, e;
    for (int i = 0; i < t->nfam; i++)
        if (ir_expr_is_const(t->fam[i].E, &e) &&
            !(ir_expr_is_const(N, &n) && (n - 1) * t->fam[i].F < e && e < n * t->fam[i].F))
            return 0;
    return 1;
}

static Stmt *tails(Stmt *s, void *ctx)
{
    s = ir_stmt_map(s, tails, NULL, ctx);
    int64_t min;
    if (s->kind != S_FOR || s->u.loop.kind != FOR_SERIAL || !ir_expr_is_const(s->u.loop.min, &min) || min != 0 ||
        ir_expr_reads_memory(s->u.loop.extent))
        return s;
    Tails t = {0};
    t.o = s->u.loop.var;
    t.consts = holds_local(s->u.loop.body);
    scan(&t, s->u.loop.body);
    if (t.consts && !overhangs(&t, s->u.loop.extent)) {
        Tails u = {0};   /* the run-time bounds alone */
        u.o = t.o;
        scan(&u, s->u.loop.body);
        t = u;
    }
    if (!t.found)
        return s;
    /* o * F + rhi < E for o < K = (E - rhi - 1) / F + 1, for every family */
    Expr *Kraw = ir_bin(OP_FLOORDIV, ir_add(t.E, ir_idx(t.F - t.rhi - 1)), ir_idx(t.F));
    Expr *K = ir_simplify(Kraw, NULL), *N = s->u.loop.extent;
    int64_t klo, khi, nlo, nhi;
    /* the first family's last chunk is the rest's last (its lanes can be counted); the
     * chunks before it have all their lanes */
    int counted = ceil_chunks(N, t.E, t.F);
    for (int i = 1; i < t.nfam; i++) {
        Expr *Ki = ir_bin(OP_FLOORDIV, ir_add(t.fam[i].E, ir_idx(t.fam[i].F - t.fam[i].rhi - 1)), ir_idx(t.fam[i].F));
        K = ir_simplify(ir_bin(OP_MIN, K, Ki), NULL);
    }
    if (!ir_const_bounds(K, NULL, &klo, &khi) || klo < 0)
        K = ir_simplify(ir_bin(OP_MAX, K, ir_idx(0)), NULL);
    if (!(ir_const_bounds(K, NULL, &klo, &khi) && ir_const_bounds(N, NULL, &nlo, &nhi) && khi <= nlo) &&
        !ceil_at_least(N, Kraw))
        K = ir_simplify(ir_bin(OP_MIN, K, N), NULL);
    Stmt *whole = ir_for_like(s, ir_idx(0), K, drop(s->u.loop.body, &t));
    Stmt *body = counted ? last_chunk(&t, s->u.loop.body) : s->u.loop.body;
    /* constant bounds (a tile over 66 columns in chunks of 16): one last chunk, its rem
     * columns known, when the whole chunks end where the first family's lanes do */
    int64_t k, n, e;
    if (ir_expr_is_const(K, &k) && ir_expr_is_const(N, &n) && ir_expr_is_const(t.E, &e) && n == k + 1 &&
        e - k * t.F > 0 && e - k * t.F < t.F)
        body = rem_chunk(&t, s->u.loop.body, e - k * t.F);
    Stmt *rest = ir_for_like(s, K, ir_simplify(ir_sub(N, K), NULL), body);
    return ir_seq2(whole, rest);
}

/* ---------------------------------------------------------------- a tile of the whole extent
 *
 * A register tile as wide as a run-time extent's bound (a late layer's few columns: W / 32
 * at most 5) has no chunk loop over o; its columns are guarded `w < E` and, like a last
 * chunk's, keep its accumulators in memory. The tile's scope (its local allocation) runs in
 * one version per value E can have below the widest guard's reach, E replaced by that
 * number (the simplifier and the unroller drop the columns past it), and one for the
 * extents past them with the guards dropped (none when E's bound is among the versions). */

typedef struct {
    Expr *E;
    Expr *r;
} Subst;

static Expr *subst_expr(Expr *e, void *ctx)
{
    Subst *x = ctx;
    return ir_expr_equal(e, x->E) ? x->r : ir_expr_map(e, subst_expr, ctx);
}

static Stmt *subst(Stmt *s, void *ctx) { return ir_stmt_map(s, subst, subst_expr, ctx); }

/* body where E is r: E replaced, the loops of lanes `v < r` shortened to r */
static Stmt *version(Tails *t, Stmt *body, Expr *E, int64_t r)
{
    Subst x = {E, ir_idx(r)};
    Tails c = *t;
    c.E = x.r;
    c.rem = r;
    return r > 0 ? shorten(subst(body, &x), &c) : subst(body, &x);
}

/* At most this many versions of a tile as wide as the extent: the values a stride-16
 * layer's columns take over 32..160 (2..10; with 8 such tiles ran guarded, 2.6 times the
 * static build's time at 128) */
enum { WHOLE_TILE_VERSIONS = 12 };

static Stmt *whole_tile(Stmt *body)
{
    if (ir_stmt_has_barrier(body))   /* (each version's barrier would sit under an if) */
        return body;
    Tails t = {0};
    scan(&t, body);
    int64_t elo, ehi;
    if (!t.found || !ir_const_bounds(t.E, NULL, &elo, &ehi) || elo < 0 || elo > t.rhi)
        return body;
    /* the versions: E = elo .. m; past m (E > rhi) every guard taken holds */
    int64_t m = ehi < t.rhi + 1 ? ehi : t.rhi + 1;
    if (m - elo + 1 > WHOLE_TILE_VERSIONS)
        return body;
    Expr *E = t.E;
    Stmt *chain;
    if (m == ehi) {
        chain = version(&t, body, E, m);
    } else {
        t.nfam = 1;
        chain = drop(body, &t);
        m--;
    }
    for (int64_t r = m; r >= elo; r--)
        chain = ir_if(ir_bin(OP_EQ, E, ir_idx(r)), version(&t, body, E, r), chain);
    return chain;
}

/* A vector loop over a run-time extent's bound, every store under `v < E` (a padding
 * copy or transpose along a sequence, a softmax's row): vector loops of 2^k lanes, one for
 * each bit of E (pow2_pieces), where the bound is at most PIECES_BOUND; else a loop over
 * [0, E), both without the guards. The loop over [0, E) is scalar code below the
 * compiler's vector width: a softmax's exponentials over rows of 7 tokens ran at 2.3
 * times the static build's time. */
enum { PIECES_BOUND = 64 };

static Stmt *vector_lanes(Stmt *s)
{
    if (s->kind != S_FOR || (s->u.loop.kind != FOR_VECTORIZED && s->u.loop.kind != FOR_TENSORIZED))
        return s;
    Tails t = {0};
    scan(&t, s);
    for (int i = 0; i < t.nfam; i++) {
        t.E = t.fam[i].E;
        Stmt *r = shorten(s, &t);
        if (r == s)
            continue;
        int64_t ext, elo, ehi;
        if (s->u.loop.kind == FOR_VECTORIZED && ir_expr_is_const(s->u.loop.extent, &ext) && ext <= PIECES_BOUND &&
            ir_const_bounds(t.E, NULL, &elo, &ehi) && elo >= 0 && ehi <= ext) {
            t.F = ext + 1;   /* (pieces of left < F lanes: here E <= ext) */
            Stmt *pieces = pow2_pieces(&t, s, t.E);
            if (pieces)
                return pieces;
        }
        return r;
    }
    return s;
}

static Stmt *whole_tiles(Stmt *s, void *ctx)
{
    if (s->kind == S_ALLOC && s->u.alloc.buf->scope == SCOPE_LOCAL) {
        Stmt *b = whole_tile(s->u.alloc.body);
        if (b != s->u.alloc.body)
            return ir_allocate(s->u.alloc.buf, b);
    }
    return vector_lanes(ir_stmt_map(s, whole_tiles, NULL, ctx));
}

Stmt *lower_runtime_tails(Stmt *s) { return whole_tiles(tails(s, NULL), NULL); }
