/* tensorize.c - tensorized loops: the check of their pattern, and guards versioned out.
 * requires: a simplified, unrolled loop nest (the loop pass "tensorize", lower/passes.c); breaks: nothing
 *
 * Two patterns, the register-tile updates of a sum reduction. fma_bcast (a conv's or a
 * matmul's tile):
 *     for j in [0, E): acc[i0 + j] = acc[i0 + j] + a * b[b0 + j]
 * with the scalar a (broadcast over the lanes) free of j and of acc, and b another f32
 * buffer read at unit stride; and fma (a depthwise conv's: channels against their weights):
 *     for j in [0, E): acc[i0 + j] = acc[i0 + j] + a[a0 + j] * b[b0 + j]
 * where a[...] may be zero padding on a condition c free of j, select(c, a[...], 0): the
 * call then reads its row from kgen_zero_f32() where c fails (no branch between the lanes;
 * clang 14 left such updates scalar and branching, a depthwise conv 8x slower than gcc's).
 * The loop IR keeps the loop: the interpreter, the JavaScript printer and the GPU dialects
 * run it as it is; the C printer makes it calls of kgen_fma_bcast_f32xW or kgen_fma_f32xW
 * (templates/kgen_ukernels.h, W = 4, 8, 16, 32, 64), whose bodies are AVX-512, AVX2, NEON
 * or WebAssembly SIMD intrinsics where the compiler enables them and the same loop
 * elsewhere. kgen's own requests (-mattr) take whichever pattern a loop matches.
 *
 * A tile that overhangs the tensor (a guard `x0 + j < n` around the update) and zero
 * padding inlined into the vector operand (`select(c(j), b[...], 0)`) are versioned: each
 * such condition is a conjunction of comparisons affine in j, so it holds for every j in
 * [0, E) exactly when it holds at 0 and at E - 1. Where it does, the micro-kernel runs on
 * the plain update; elsewhere the loop runs as it was (vectorized).
 */
#include "ir.h"

#include <string.h>

const int ir_tz_widths[IR_TZ_NWIDTHS] = {64, 32, 16, 8, 4};

/* ---------------------------------------------------------------- expressions */

static int loads_buf(const Expr *e, const Buffer *b)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case E_LOAD: return e->u.load.buf == b || loads_buf(e->u.load.index, b);
    case E_BIN: return loads_buf(e->u.bin.a, b) || loads_buf(e->u.bin.b, b);
    case E_UN: return loads_buf(e->u.un.a, b);
    case E_CAST:
    case E_BITCAST: return loads_buf(e->u.cast.a, b);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (loads_buf(e->u.call.args[i], b))
                return 1;
        return 0;
    case E_SELECT: return loads_buf(e->u.sel.cond, b) || loads_buf(e->u.sel.t, b) || loads_buf(e->u.sel.f, b);
    default: return 0;
    }
}

static Expr *at(Expr *e, Var *j, int64_t v)
{
    Expr *x = ir_idx(v);
    return ir_subst(e, &j, &x, 1);
}

/* An index that is its value at j = 0 plus j: that value in *base. */
static int unit_stride(Expr *e, Var *j, Expr **base)
{
    if (e->dtype != DT_INDEX)
        return 0;
    Expr *b0 = ir_simplify(at(e, j, 0), NULL);
    Expr *d = ir_simplify(ir_sub(e, b0), NULL);
    if (d->kind != E_VAR || d->u.var != j)
        return 0;
    *base = b0;
    return 1;
}

/* An index expression of the form c * j + (something free of j). */
static int affine(Expr *e, Var *j)
{
    if (e->dtype != DT_INDEX)
        return 0;
    if (!ir_expr_uses_var(e, j))
        return 1;
    Expr *e0 = ir_simplify(at(e, j, 0), NULL);
    int64_t c, r;
    if (!ir_expr_is_const(ir_simplify(ir_sub(at(e, j, 1), e0), NULL), &c))
        return 0;
    Expr *rest = ir_simplify(ir_sub(ir_sub(e, e0), ir_mul(ir_idx(c), ir_varref(j))), NULL);
    return ir_expr_is_const(rest, &r) && r == 0;
}

/* Split a condition into its conjuncts; 0 if one that uses j is not a comparison of
 * affine forms in j (it might hold at both ends of the tile and fail in between). */
int ir_affine_conjuncts(Expr *c, Var *j, PtrVec *out)
{
    if (c->kind == E_BIN && c->u.bin.op == OP_AND)
        return ir_affine_conjuncts(c->u.bin.a, j, out) && ir_affine_conjuncts(c->u.bin.b, j, out);
    if (ir_expr_reads_memory(c))
        return 0;    /* tested once before the tile, it must not depend on memory */
    if (ir_expr_uses_var(c, j)) {
        if (c->kind != E_BIN)
            return 0;
        BinOp op = c->u.bin.op;
        if (op != OP_LT && op != OP_LE && op != OP_GT && op != OP_GE)
            return 0;
        if (!affine(c->u.bin.a, j) || !affine(c->u.bin.b, j))
            return 0;
    }
    ir_vec_push(out, c, 1 << 20, "conditions");
    return 1;
}

static int is_zero(const Expr *e)
{
    return (e->kind == E_FLOAT && e->u.fval == 0) || (e->kind == E_INT && e->u.ival == 0);
}

/* ---------------------------------------------------------------- the pattern */

typedef struct {
    Var *j;
    PtrVec conds;           /* Expr*: conjuncts that must hold for every j (guards, padding) */
    Buffer *acc, *b;
    Expr *acc_index, *b_index, *scalar;   /* the indices with j */
    int elem;               /* TZ_ELEM: a[a_index] * b[b_index], a under a_cond if set */
    Buffer *a;
    Expr *a_index, *a_cond;
} Update;

/* A factor that varies along j: a load at unit stride of an f32 buffer other than acc,
 * under zero-padding selects. Those on conditions in j are versioned (collected in
 * u->conds, with `versioned` only); with `invariant`, those on conditions free of j are
 * gathered in *inv (their conjunction) instead. NULL, or what does not match. */
static const char *vector_factor(Expr *f, Var *j, Buffer *acc, int versioned, int invariant, Update *u, Expr **inv,
                                 Expr **load)
{
    while (f->kind == E_SELECT && is_zero(f->u.sel.f)) {
        Expr *c = f->u.sel.cond;
        if (invariant && !ir_expr_uses_var(c, j) && !ir_expr_reads_memory(c))
            *inv = *inv ? ir_bin(OP_AND, *inv, c) : c;
        else if (!versioned || !ir_affine_conjuncts(c, j, &u->conds))
            return "the condition of a select in the vector factor is not made of comparisons affine in the loop "
                   "variable";
        f = f->u.sel.t;
    }
    if (f->kind != E_LOAD)
        return "the factor that varies along the loop is not a load b[...]";
    Buffer *b = f->u.load.buf;
    Expr *base;
    if (b == acc)
        return ir_fmt("the vector factor reads %s, the buffer being updated", acc->name);
    if (b->dtype != DT_F32)
        return ir_fmt("the vector factor reads %s, an %s buffer (the micro-kernels are f32)", b->name,
                      ir_dtype_name(b->dtype));
    if (!unit_stride(f->u.load.index, j, &base))
        return ir_fmt("the vector factor does not read consecutive elements of %s along the loop", b->name);
    *load = f;
    return NULL;
}

/* Match s against the update of one of the kinds (TZ_BCAST, TZ_ELEM); NULL, or what does
 * not match. With `versioned`, guards and zero-padding selects in j are accepted
 * (collected in u->conds). */
static const char *match_update(const Stmt *s, Var *j, int kinds, int versioned, Update *u)
{
    while (versioned && s && s->kind == S_IF && !s->u.cond.els) {
        if (!ir_affine_conjuncts(s->u.cond.cond, j, &u->conds))
            return "a guard in the loop is not made of comparisons affine in the loop variable";
        s = s->u.cond.then;
    }
    if (!s || s->kind != S_STORE)
        return "the loop body is not a single store acc[...] = acc[...] + a * b[...]";
    Buffer *acc = s->u.store.buf;
    Expr *v = s->u.store.value, *idx = s->u.store.index, *base;
    if (acc->dtype != DT_F32)
        return ir_fmt("it stores into %s, an %s buffer (the micro-kernels are f32)", acc->name,
                      ir_dtype_name(acc->dtype));
    if (v->kind != E_BIN || v->u.bin.op != OP_ADD || v->dtype != DT_F32)
        return ir_fmt("the value stored into %s is not a sum acc + a * b", acc->name);
    Expr *prod = NULL;
    for (int side = 0; side < 2 && !prod; side++) {
        Expr *x = side ? v->u.bin.b : v->u.bin.a, *y = side ? v->u.bin.a : v->u.bin.b;
        if (x->kind == E_LOAD && x->u.load.buf == acc && ir_expr_equal(x->u.load.index, idx))
            prod = y;
    }
    if (!prod)
        return ir_fmt("the value stored into %s does not add to its own element", acc->name);
    if (!unit_stride(idx, j, &base))
        return ir_fmt("%s is not stored at consecutive elements along the loop", acc->name);
    if (prod->kind != E_BIN || prod->u.bin.op != OP_MUL || prod->dtype != DT_F32)
        return "the term added is not a product a * b";
    int ua = ir_expr_uses_var(prod->u.bin.a, j), ub = ir_expr_uses_var(prod->u.bin.b, j);
    const char *why;
    Expr *vec, *scalar = NULL;
    if (!ua && !ub)
        return "neither factor of the product varies along the loop";
    if (ua && ub) {
        /* the elementwise update: at most one factor under selects free of j (a depthwise
         * conv's padded input), which the call takes as a choice of address */
        if (!(kinds & TZ_ELEM))
            return "both factors of the product vary along the loop (fma_bcast broadcasts one of them)";
        Expr *load[2] = {NULL, NULL}, *inv[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++)
            if ((why = vector_factor(k ? prod->u.bin.b : prod->u.bin.a, j, acc, versioned, 1, u, &inv[k], &load[k])))
                return why;
        if (inv[0] && inv[1])
            return "both factors of the product are chosen by conditions (fma takes one)";
        int ka = inv[1] ? 1 : 0;
        u->elem = 1;
        u->a = load[ka]->u.load.buf;
        u->a_index = load[ka]->u.load.index;
        u->a_cond = inv[ka];
        vec = load[1 - ka];
    } else {
        if (!(kinds & TZ_BCAST))
            return "one factor of the product does not vary along the loop (fma multiplies two vectors; "
                   "fma_bcast broadcasts one)";
        scalar = ua ? prod->u.bin.b : prod->u.bin.a;
        if (loads_buf(scalar, acc))
            return ir_fmt("the broadcast factor reads %s, the buffer being updated", acc->name);
        if ((why = vector_factor(ua ? prod->u.bin.a : prod->u.bin.b, j, acc, versioned, 0, u, NULL, &vec)))
            return why;
    }
    u->j = j;
    u->acc = acc;
    u->b = vec->u.load.buf;
    u->acc_index = idx;
    u->b_index = vec->u.load.index;
    u->scalar = scalar;
    return NULL;
}

/* The update u as a store (the plain update of a tensorized loop). */
static Stmt *update_store(const Update *u)
{
    Expr *f = u->scalar;
    if (u->elem) {
        f = ir_load(u->a, u->a_index);
        if (u->a_cond)
            f = ir_select(u->a_cond, f, ir_float(0, DT_F32));
    }
    return ir_store(u->acc, u->acc_index, ir_bin(OP_ADD, ir_load(u->acc, u->acc_index), ir_bin(OP_MUL, f, ir_load(u->b, u->b_index))));
}

/* The micro-kernel widths a tensorized loop of ext iterations is cut into. */
static int chunks(const Tensorize *t, int64_t ext, int *w)
{
    int n = 0;
    int64_t left = ext;
    for (int k = 0; k < IR_TZ_NWIDTHS && left > 0; k++) {
        int width = ir_tz_widths[k];
        if (t->width && width != t->width)
            continue;
        while (left >= width && n < IR_TZ_MAX_CHUNKS) {
            w[n++] = width;
            left -= width;
        }
    }
    return left == 0 ? n : 0;
}

int ir_tensorize_match(const Stmt *loop, IrTzCall *out)
{
    int64_t lo, ext;
    memset(out, 0, sizeof *out);
    if (loop->kind != S_FOR || loop->u.loop.kind != FOR_TENSORIZED || !loop->u.loop.tensorize ||
        !ir_expr_is_const(loop->u.loop.min, &lo) || lo != 0 || !ir_expr_is_const(loop->u.loop.extent, &ext))
        return 0;
    Update u = {0};
    if (match_update(loop->u.loop.body, loop->u.loop.var, loop->u.loop.tensorize->kinds, 0, &u))
        return 0;
    out->nchunks = chunks(loop->u.loop.tensorize, ext, out->width);
    if (!out->nchunks)
        return 0;
    out->acc = u.acc;
    out->b = u.b;
    unit_stride(u.acc_index, u.j, &out->acc_index);
    unit_stride(u.b_index, u.j, &out->b_index);
    out->scalar = u.scalar;
    out->elem = u.elem;
    if (u.elem) {
        out->a = u.a;
        unit_stride(u.a_index, u.j, &out->a_index);
        out->a_cond = u.a_cond;
    }
    return 1;
}

/* ---------------------------------------------------------------- the pass */

static int tz_fail(const Tensorize *t, const char *what)
{
    return ir_fail("tensorize(%s, %s, %s)%s%s: %s", t->stage, t->axis, t->name, t->where ? " at " : "",
                   t->where ? t->where : "", what);
}

static const char *extent_problem(const Tensorize *t, int64_t ext)
{
    int unit = t->width ? t->width : 4;
    if (t->lanes > unit && t->lanes % unit == 0)
        unit = t->lanes;
    if (ext > IR_MAX_VECTOR)
        return ir_fmt("the loop has %lld iterations, above the limit of %d (split the axis first)", (long long)ext,
                      IR_MAX_VECTOR);
    if (ext % unit)
        return ir_fmt("the loop has %lld iterations, not a multiple of %d, the width of %s (split the axis by %d)",
                      (long long)ext, unit, t->width || t->lanes > 4 ? "the micro-kernel" : "the narrowest micro-kernel",
                      unit);
    return NULL;
}

int ir_tensorize_extent(const Tensorize *t, int64_t ext)
{
    const char *why = extent_problem(t, ext);
    return why ? tz_fail(t, why) : 0;
}

typedef struct {
    RangeMap m;
    int failed;
    PtrVec versioned;    /* Stmt*: the ifs tensorize_loop made */
} Pass;

static int is_versioned(const Pass *P, const Stmt *s)
{
    if (s->kind != S_IF || !s->u.cond.els)
        return 0;
    for (int i = P->versioned.n - 1; i >= 0; i--)
        if (P->versioned.items[i] == s)
            return 1;
    return 0;
}

static Stmt *tensorize_loop(Pass *P, Stmt *s)
{
    const Tensorize *t = s->u.loop.tensorize;
    Var *j = s->u.loop.var;
    int64_t lo, ext;
    Stmt *plain = ir_for(j, s->u.loop.min, s->u.loop.extent, FOR_VECTORIZED, s->u.loop.body);
    const char *why = NULL;
    if (!t)
        ir_die("tensorized loop %s without its request", j->name);
    if (!ir_expr_is_const(s->u.loop.min, &lo) || lo != 0 || !ir_expr_is_const(s->u.loop.extent, &ext))
        why = "the loop does not have a constant range from 0";
    else
        why = extent_problem(t, ext);
    Update u = {0};
    if (!why)
        why = match_update(s->u.loop.body, j, t->kinds, 1, &u);
    if (why) {
        if (!t->soft)
            P->failed = tz_fail(t, why);
        return plain;
    }
    /* the fast path's condition: every conjunct at both ends of the tile */
    PtrVec fast = {0};
    int never = 0;
    for (int i = 0; i < u.conds.n && !never; i++) {
        Expr *c = u.conds.items[i];
        Expr *ends[2] = {at(c, j, 0), at(c, j, ext - 1)};
        for (int e = 0; e < (ir_expr_uses_var(c, j) ? 2 : 1); e++) {
            Expr *x = ir_simplify(ends[e], &P->m);
            int64_t v;
            if (ir_expr_is_const(x, &v)) {
                never |= !v;
                continue;
            }
            int dup = 0;
            for (int k = 0; k < fast.n && !dup; k++)
                dup = ir_expr_equal(fast.items[k], x);
            if (!dup)
                ir_vec_push(&fast, x, 1 << 20, "conditions");
        }
    }
    if (never)
        return plain;    /* no tile of this loop is whole: the loop as it was */
    Stmt *tz = ir_for(j, s->u.loop.min, s->u.loop.extent, FOR_TENSORIZED, update_store(&u));
    tz->u.loop.tensorize = t;
    if (!fast.n)
        return tz;
    Expr *cond = fast.items[0];
    for (int i = 1; i < fast.n; i++)
        cond = ir_bin(OP_AND, cond, fast.items[i]);
    Stmt *r = ir_if(cond, tz, plain);
    ir_vec_push(&P->versioned, r, 1 << 24, "tensorized loops");
    return r;
}

/* Adjacent versioned loops under the same condition (the rows of one tile) share one if:
 * the condition reads no memory, so the first branch cannot change it for the second. */
static Stmt *merge_versions(Pass *P, Stmt **items, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        Stmt *x = items[i], *prev = m ? items[m - 1] : NULL;
        if (prev && x && is_versioned(P, prev) && is_versioned(P, x) && ir_expr_equal(prev->u.cond.cond, x->u.cond.cond)) {
            Stmt *r = ir_if(prev->u.cond.cond, ir_seq2(prev->u.cond.then, x->u.cond.then),
                            ir_seq2(prev->u.cond.els, x->u.cond.els));
            ir_vec_push(&P->versioned, r, 1 << 24, "tensorized loops");
            items[m - 1] = r;
        } else {
            items[m++] = x;
        }
    }
    return ir_seq(items, m);
}

/* ---------------------------------------------------------------- whole tiles
 *
 * A register tile (a local buffer's allocation) whose updates are versioned on a condition
 * that does not change inside it (the tile's columns overhang the tensor: 197 columns in
 * tiles of 16) becomes an if over two copies of the tile: the whole tiles', where every
 * update is the micro-kernel and the guards the condition implies are dropped, and the last
 * tile's, as it was. In one copy the plain updates index the local buffer by their loop's
 * variable, and C compilers then keep the whole tile in memory, not in registers, for the
 * whole tiles too (ViT-B/16's Q K^T, 197 x 197 by 64 a head, ran at a sixth of the speed of
 * its other matmuls). */

/* The variables bound inside the tile as the copy walks it: loops' with their ranges, lets'
 * (hi < lo: no range). */
typedef struct {
    Var *var[64];
    int64_t lo[64], hi[64];
    int n;
} Inner;

/* Does every j-free conjunct g hold wherever the facts (the conjuncts of the tile's
 * condition) hold: constant true under the ranges, or one of them? */
static int implied_here(Pass *P, Expr *g, const PtrVec *facts)
{
    int64_t v;
    Expr *x = ir_simplify(g, &P->m);
    if (ir_expr_is_const(x, &v))
        return v != 0;
    for (int i = 0; i < facts->n; i++) {
        const Expr *f = facts->items[i];
        if (ir_expr_equal(x, f))
            return 1;
        /* a' < b gives a < b where a' - a is a constant d >= 0 (a tile's last row) */
        if (x->kind == E_BIN && x->u.bin.op == OP_LT && f->kind == E_BIN && f->u.bin.op == OP_LT &&
            ir_expr_equal(x->u.bin.b, f->u.bin.b) &&
            ir_expr_is_const(ir_simplify(ir_sub(f->u.bin.a, x->u.bin.a), &P->m), &v) && v >= 0)
            return 1;
    }
    return 0;
}

/* Does the guard c hold wherever the facts hold? Each conjunct uses at most one variable
 * of the tile, a loop's, in which it is an affine comparison: then it holds over the loop
 * when it holds at both ends. */
static int implied(Pass *P, Expr *c, const PtrVec *facts, const Inner *in)
{
    PtrVec parts = {0};
    int ok = 1;
    if (!ir_affine_conjuncts(c, NULL, &parts))
        ok = 0;
    for (int i = 0; ok && i < parts.n; i++) {
        Expr *g = parts.items[i];
        int k = -1, used = 0;
        for (int d = 0; d < in->n; d++)
            if (ir_expr_uses_var(g, in->var[d]))
                k = d, used++;
        if (used == 0)
            ok = implied_here(P, g, facts);
        else if (used > 1 || in->hi[k] < in->lo[k])
            ok = 0;
        else {
            PtrVec one = {0};
            ok = ir_affine_conjuncts(g, in->var[k], &one) && implied_here(P, at(g, in->var[k], in->lo[k]), facts) &&
                 implied_here(P, at(g, in->var[k], in->hi[k]), facts);
        }
    }
    return ok;
}

/* The tile s again, its versioned ifs on cond taking their `side` and, in the whole tiles'
 * copy (side 1), the guards cond implies dropped. */
static Stmt *assume(Pass *P, Stmt *s, const Expr *cond, const PtrVec *facts, int side, Inner *in)
{
    if (!s)
        return s;
    switch (s->kind) {
    case S_IF:
        if (is_versioned(P, s) && ir_expr_equal(s->u.cond.cond, cond))
            return assume(P, side ? s->u.cond.then : s->u.cond.els, cond, facts, side, in);
        if (side && !s->u.cond.els && implied(P, s->u.cond.cond, facts, in))
            return assume(P, s->u.cond.then, cond, facts, side, in);
        return ir_if_like(s, s->u.cond.cond, assume(P, s->u.cond.then, cond, facts, side, in),
                          assume(P, s->u.cond.els, cond, facts, side, in));
    case S_FOR:
    case S_LET: {
        if (in->n == 64)
            return s;
        int loop = s->kind == S_FOR, known = 0;
        int64_t lo = 1, hi = 0, elo, ehi;
        if (loop && ir_const_bounds(s->u.loop.min, &P->m, &lo, &hi) &&
            ir_const_bounds(s->u.loop.extent, &P->m, &elo, &ehi) && ehi >= 1) {
            known = 1;
            hi = hi + ehi - 1;
            ir_range_push(&P->m, s->u.loop.var, lo, hi);
        } else {
            lo = 1, hi = 0;
        }
        in->var[in->n] = loop ? s->u.loop.var : s->u.let.var;
        in->lo[in->n] = lo, in->hi[in->n] = hi;
        in->n++;
        Stmt *body = assume(P, loop ? s->u.loop.body : s->u.let.body, cond, facts, side, in);
        in->n--;
        if (known)
            ir_range_pop(&P->m);
        return loop ? ir_for_like(s, s->u.loop.min, s->u.loop.extent, body) : ir_let(s->u.let.var, s->u.let.value, body);
    }
    case S_ALLOC: return ir_allocate(s->u.alloc.buf, assume(P, s->u.alloc.body, cond, facts, side, in));
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
        for (int i = 0; i < s->u.seq.n; i++)
            items[i] = assume(P, s->u.seq.items[i], cond, facts, side, in);
        return ir_seq(items, s->u.seq.n);
    }
    default: return s;
    }
}

/* Does e use a variable that s binds (a loop's, a let's)? */
static int uses_bound(const Stmt *s, const Expr *e)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return ir_expr_uses_var(e, s->u.loop.var) || uses_bound(s->u.loop.body, e);
    case S_LET: return ir_expr_uses_var(e, s->u.let.var) || uses_bound(s->u.let.body, e);
    case S_IF: return uses_bound(s->u.cond.then, e) || uses_bound(s->u.cond.els, e);
    case S_ALLOC: return uses_bound(s->u.alloc.body, e);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (uses_bound(s->u.seq.items[i], e))
                return 1;
        return 0;
    default: return 0;
    }
}

/* The condition of a versioned if in s that nothing bound in the tile changes, or NULL. */
static Expr *tile_cond(const Pass *P, const Stmt *s, const Stmt *tile)
{
    if (!s)
        return NULL;
    Expr *c = NULL;
    switch (s->kind) {
    case S_FOR: return tile_cond(P, s->u.loop.body, tile);
    case S_LET: return tile_cond(P, s->u.let.body, tile);
    case S_IF:
        if (is_versioned(P, s) && !uses_bound(tile, s->u.cond.cond))
            return s->u.cond.cond;
        return (c = tile_cond(P, s->u.cond.then, tile)) ? c : tile_cond(P, s->u.cond.els, tile);
    case S_ALLOC: return tile_cond(P, s->u.alloc.body, tile);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n && !c; i++)
            c = tile_cond(P, s->u.seq.items[i], tile);
        return c;
    default: return NULL;
    }
}

/* e with every subexpression equal to x replaced by `with` (a statement's expressions:
 * replace_stmt) */
typedef struct {
    const Expr *x;
    Expr *with;
} Replace;

static Expr *replace_expr(Expr *e, void *ctx)
{
    const Replace *r = ctx;
    return ir_expr_equal(e, r->x) ? r->with : ir_expr_map(e, replace_expr, ctx);
}

static Stmt *replace_stmt(Stmt *s, void *ctx) { return ir_stmt_map(s, replace_stmt, replace_expr, ctx); }

/* The subexpressions of c that may index the tiles (variables, their quotients and
 * remainders: a tile loop fused with another). */
static void tile_indices(Expr *c, Expr **out, int *n, int max)
{
    if (*n == max)
        return;
    if (c->kind == E_VAR ||
        (c->kind == E_BIN && (c->u.bin.op == OP_MOD || c->u.bin.op == OP_DIV || c->u.bin.op == OP_FLOORMOD ||
                              c->u.bin.op == OP_FLOORDIV) && ir_expr_is_const(c->u.bin.b, NULL))) {
        out[(*n)++] = c;
        return;
    }
    if (c->kind == E_BIN) {
        tile_indices(c->u.bin.a, out, n, max);
        tile_indices(c->u.bin.b, out, n, max);
    }
}

/* Does the tile condition c fail only at the last tile: c an affine comparison of one
 * index x of the tiles (and constants), true at x's next to last value and false at its
 * last? Then *x and its last value *last. */
static int last_tile(Pass *P, Expr *c, Expr **x, int64_t *last)
{
    Expr *cand[8];
    int n = 0;
    tile_indices(c, cand, &n, 8);
    for (int i = 0; i < n; i++) {
        int64_t lo, hi, v0, v1;
        if (!ir_const_bounds(cand[i], &P->m, &lo, &hi) || hi <= lo)
            continue;
        Var *t = ir_var_new("t", DT_INDEX);
        Replace r = {cand[i], ir_varref(t)};
        Expr *ct = replace_expr(c, &r);
        PtrVec one = {0};
        if (!ir_affine_conjuncts(ct, t, &one) || one.n != 1 || !ir_expr_is_const(ir_simplify(at(ct, t, hi), NULL), &v1) ||
            !ir_expr_is_const(ir_simplify(at(ct, t, hi - 1), NULL), &v0) || v1 || !v0)
            continue;
        *x = cand[i];
        *last = hi;
        return 1;
    }
    return 0;
}

/* A vector loop over [0, N) whose body is guarded by a comparison of its variable alone
 * that holds on [0, M) only runs over [0, M) without it (the last tile's columns). */
static Stmt *tighten(Stmt *s, void *ctx)
{
    s = ir_stmt_map(s, tighten, NULL, ctx);
    int64_t lo, n;
    if (s->kind != S_FOR || s->u.loop.kind != FOR_VECTORIZED || !ir_expr_is_const(s->u.loop.min, &lo) || lo ||
        !ir_expr_is_const(s->u.loop.extent, &n) || s->u.loop.body->kind != S_IF || s->u.loop.body->u.cond.els)
        return s;
    Var *j = s->u.loop.var;
    PtrVec parts = {0};
    if (!ir_affine_conjuncts(s->u.loop.body->u.cond.cond, j, &parts))
        return s;
    Expr *keep = NULL;
    int64_t m = n;
    for (int i = 0; i < parts.n; i++) {
        Expr *g = parts.items[i];
        /* (an affine comparison holds on a half-line: on [0, k) when it holds there and
         * not at n - 1) */
        int64_t k = 0, v;
        while (k < n && ir_expr_is_const(ir_simplify(at(g, j, k), NULL), &v) && v)
            k++;
        int prefix = k == n || (ir_expr_is_const(ir_simplify(at(g, j, n - 1), NULL), &v) && !v);
        if (prefix && ir_expr_uses_var(g, j))
            m = k < m ? k : m;
        else
            keep = keep ? ir_bin(OP_AND, keep, g) : g;
    }
    if (m == n)
        return s;
    if (m == 0)
        return ir_seq(NULL, 0);
    Stmt *body = keep ? ir_if_like(s->u.loop.body, keep, s->u.loop.body->u.cond.then, NULL) : s->u.loop.body->u.cond.then;
    return ir_for_like(s, s->u.loop.min, ir_idx(m), body);
}

/* The local tile s (its body walked) as an if over its whole tiles' copy and the rest: the
 * last tile's where the condition fails at the last value of a tile index only, which that
 * copy then takes as a constant (its guards on the columns become constant bounds: a 5-
 * column tail is a loop of 5, its accumulators in registers again). */
/* The conditions of the ifs in s (without an else, not versioned) that nothing bound in
 * the tile changes and that read no memory: the guards of a tile's rows (a tile of 5 rows
 * over a run-time count, `o * 5 + 4 < E`, every row under its own); none where the tile
 * holds a barrier. */
static int row_guards(const Pass *P, const Stmt *s, const Stmt *tile, PtrVec *out)
{
    if (!s)
        return 1;
    switch (s->kind) {
    case S_FOR: return row_guards(P, s->u.loop.body, tile, out);
    case S_LET: return row_guards(P, s->u.let.body, tile, out);
    case S_ALLOC: return row_guards(P, s->u.alloc.body, tile, out);
    case S_BARRIER: return 0;
    case S_IF: {
        Expr *c = s->u.cond.cond;
        if (!s->u.cond.els && !is_versioned(P, s) && !uses_bound(tile, c) && !ir_expr_reads_memory(c) &&
            out->n < 64) {
            int dup = 0;
            for (int i = 0; i < out->n && !dup; i++)
                dup = ir_expr_equal(out->items[i], c);
            if (!dup)
                ir_vec_push(out, c, 64, "row guards");
        }
        return row_guards(P, s->u.cond.then, tile, out) && row_guards(P, s->u.cond.els, tile, out);
    }
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!row_guards(P, s->u.seq.items[i], tile, out))
                return 0;
        return 1;
    default: return 1;
    }
}

/* Of the tile's row guards, the one that implies the most others (the last row's), where
 * it implies two at least; or NULL. */
static Expr *row_cond(Pass *P, Stmt *tile)
{
    PtrVec g = {0};
    if (!row_guards(P, tile->u.alloc.body, tile, &g) || g.n < 2)
        return NULL;
    Expr *best = NULL;
    int most = 1;
    for (int i = 0; i < g.n; i++) {
        PtrVec facts = {0};
        if (!ir_affine_conjuncts(g.items[i], NULL, &facts))
            continue;
        int n = 0;
        for (int k = 0; k < g.n; k++) {
            PtrVec parts = {0};
            int ok = ir_affine_conjuncts(g.items[k], NULL, &parts);
            for (int q = 0; ok && q < parts.n; q++)
                ok = implied_here(P, parts.items[q], &facts);
            n += ok;
        }
        if (n > most)
            best = g.items[i], most = n;
    }
    return best;
}

static Stmt *whole_tiles(Pass *P, Stmt *s)
{
    Expr *c = s->u.alloc.buf->scope == SCOPE_LOCAL ? tile_cond(P, s->u.alloc.body, s) : NULL;
    if (!c && s->u.alloc.buf->scope == SCOPE_LOCAL && (c = row_cond(P, s))) {
        /* no versioned condition, but rows under guards: the tiles whose last row's guard
         * holds have none of the guards it implies (their accumulators in registers), the
         * others stay as they were */
        PtrVec facts = {0};
        ir_affine_conjuncts(c, NULL, &facts);
        Inner in = {{0}, {0}, {0}, 0};
        Stmt *rest = s;
        Expr *x;
        int64_t last;
        if (last_tile(P, c, &x, &last)) {   /* (the last tile's rows then known: 13 = 3 x 4 + 1) */
            Replace rp = {x, ir_idx(last)};
            rest = ir_simplify_stmt(replace_stmt(rest, &rp));
        }
        Stmt *r = ir_if(c, assume(P, s, c, &facts, 1, &in), rest);
        r->u.cond.likely = 1;
        return r;
    }
    if (!c)
        return s;
    PtrVec facts = {0};
    if (!ir_affine_conjuncts(c, NULL, &facts))
        return s;
    Inner in = {{0}, {0}, {0}, 0};
    Stmt *whole = assume(P, s, c, &facts, 1, &in), *rest = assume(P, s, c, &facts, 0, &in);
    Expr *x;
    int64_t last;
    if (last_tile(P, c, &x, &last)) {
        Replace r = {x, ir_idx(last)};
        rest = ir_simplify_stmt(tighten(ir_simplify_stmt(replace_stmt(rest, &r)), NULL));
    }
    Stmt *r = ir_if(c, whole, rest);
    r->u.cond.likely = 1;
    return r;
}

static Stmt *walk(Pass *P, Stmt *s)
{
    if (!s || P->failed)
        return s;
    switch (s->kind) {
    case S_FOR: {
        if (s->u.loop.kind == FOR_TENSORIZED)
            return tensorize_loop(P, s);
        int64_t lo, hi, elo, ehi;
        int known = ir_const_bounds(s->u.loop.min, &P->m, &lo, &hi) &&
                    ir_const_bounds(s->u.loop.extent, &P->m, &elo, &ehi);
        if (known)
            ir_range_push(&P->m, s->u.loop.var, lo, hi + ehi - 1);
        Stmt *body = walk(P, s->u.loop.body);
        if (known)
            ir_range_pop(&P->m);
        if (body == s->u.loop.body)
            return s;
        Stmt *r = ir_for(s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, body);
        r->u.loop.bind_tag = s->u.loop.bind_tag;
        r->u.loop.tensorize = s->u.loop.tensorize;
        return r;
    }
    case S_LET: {
        Stmt *body = walk(P, s->u.let.body);
        return body == s->u.let.body ? s : ir_let(s->u.let.var, s->u.let.value, body);
    }
    case S_IF: {
        Stmt *t = walk(P, s->u.cond.then), *e = walk(P, s->u.cond.els);
        return t == s->u.cond.then && e == s->u.cond.els ? s : ir_if_like(s, s->u.cond.cond, t, e);
    }
    case S_ALLOC: {
        Stmt *body = walk(P, s->u.alloc.body);
        return body == s->u.alloc.body ? s : whole_tiles(P, ir_allocate(s->u.alloc.buf, body));
    }
    case S_SEQ: {
        Stmt **items = NULL;
        for (int i = 0; i < s->u.seq.n; i++) {
            Stmt *x = walk(P, s->u.seq.items[i]);
            if (x != s->u.seq.items[i] && !items) {
                items = ir_alloc(sizeof(Stmt *) * (size_t)s->u.seq.n);
                memcpy(items, s->u.seq.items, sizeof(Stmt *) * (size_t)i);
            }
            if (items)
                items[i] = x;
        }
        return items ? merge_versions(P, items, s->u.seq.n) : s;
    }
    default: return s;
    }
}

int ir_tensorize(Stmt **s)
{
    Pass P = {{0}, 0, {0}};
    Stmt *r = walk(&P, *s);
    if (P.failed)
        return -1;
    *s = r;
    return 0;
}
