/* map.c - rebuilding expressions and statements through a callback (ir_expr_map,
 * ir_stmt_map in ir.h): the walk a pass would otherwise write out for every node kind.
 * requires: well-formed trees; breaks: nothing (a node is copied only when a callback
 * changed something below it, the rest is shared). */
#include "ir.h"

Expr *ir_expr_map(Expr *e, Expr *(*f)(Expr *, void *), void *ctx)
{
    switch (e->kind) {
    case E_BIN: {
        Expr *a = f(e->u.bin.a, ctx);
        Expr *b = f(e->u.bin.b, ctx);
        return a == e->u.bin.a && b == e->u.bin.b ? e : ir_bin(e->u.bin.op, a, b);
    }
    case E_UN: {
        Expr *a = f(e->u.un.a, ctx);
        return a == e->u.un.a ? e : ir_un(e->u.un.op, a);
    }
    case E_CAST:
    case E_BITCAST: {
        Expr *a = f(e->u.cast.a, ctx);
        return a == e->u.cast.a ? e : ir_cast_like(e, a);
    }
    case E_CALL: {
        Expr *args[KG_MAX_ARGS] = {0};
        int changed = 0;
        for (int i = 0; i < ir_mathfn_arity(e->u.call.fn); i++) {
            args[i] = f(e->u.call.args[i], ctx);
            changed |= args[i] != e->u.call.args[i];
        }
        return changed ? ir_call(e->u.call.fn, args) : e;
    }
    case E_SELECT: {
        Expr *c = f(e->u.sel.cond, ctx);
        Expr *t = f(e->u.sel.t, ctx);
        Expr *x = f(e->u.sel.f, ctx);
        return c == e->u.sel.cond && t == e->u.sel.t && x == e->u.sel.f ? e : ir_select(c, t, x);
    }
    case E_ACCESS: {
        Expr *idx[KG_MAX_DIMS];
        int changed = 0;
        for (int i = 0; i < e->u.access.n; i++) {
            idx[i] = f(e->u.access.idx[i], ctx);
            changed |= idx[i] != e->u.access.idx[i];
        }
        return changed ? ir_access(e->u.access.t, idx, e->u.access.n) : e;
    }
    case E_LOAD: {
        Expr *i = f(e->u.load.index, ctx);
        return i == e->u.load.index ? e : ir_load(e->u.load.buf, i);
    }
    case E_REDUCE: {
        Expr *b = f(e->u.reduce.body, ctx);
        return b == e->u.reduce.body ? e : ir_reduce(e->u.reduce.op, b, e->u.reduce.axes, e->u.reduce.naxes);
    }
    case E_INT:
    case E_FLOAT:
    case E_VAR: return e;
    }
    return e;
}

/* fs(s) (s itself when fs is NULL), and the same for fe */
static Stmt *stmt_at(Stmt *s, Stmt *(*fs)(Stmt *, void *), void *ctx) { return fs ? fs(s, ctx) : s; }
static Expr *expr_at(Expr *e, Expr *(*fe)(Expr *, void *), void *ctx) { return fe ? fe(e, ctx) : e; }

Stmt *ir_stmt_map(Stmt *s, Stmt *(*fs)(Stmt *, void *), Expr *(*fe)(Expr *, void *), void *ctx)
{
    switch (s->kind) {
    case S_FOR: {
        Expr *m = expr_at(s->u.loop.min, fe, ctx), *x = expr_at(s->u.loop.extent, fe, ctx);
        Stmt *b = stmt_at(s->u.loop.body, fs, ctx);
        return m == s->u.loop.min && x == s->u.loop.extent && b == s->u.loop.body ? s : ir_for_like(s, m, x, b);
    }
    case S_LET: {
        Expr *v = expr_at(s->u.let.value, fe, ctx);
        Stmt *b = stmt_at(s->u.let.body, fs, ctx);
        return v == s->u.let.value && b == s->u.let.body ? s : ir_let(s->u.let.var, v, b);
    }
    case S_IF: {
        Expr *c = expr_at(s->u.cond.cond, fe, ctx);
        Stmt *t = stmt_at(s->u.cond.then, fs, ctx), *e = s->u.cond.els ? stmt_at(s->u.cond.els, fs, ctx) : NULL;
        return c == s->u.cond.cond && t == s->u.cond.then && e == s->u.cond.els ? s : ir_if_like(s, c, t, e);
    }
    case S_STORE: {
        Expr *i = expr_at(s->u.store.index, fe, ctx), *v = expr_at(s->u.store.value, fe, ctx);
        return i == s->u.store.index && v == s->u.store.value ? s : ir_store(s->u.store.buf, i, v);
    }
    case S_PREFETCH: {
        Expr *i = expr_at(s->u.store.index, fe, ctx);
        return i == s->u.store.index ? s : ir_prefetch(s->u.store.buf, i);
    }
    case S_ALLOC: {
        Stmt *b = stmt_at(s->u.alloc.body, fs, ctx);
        return b == s->u.alloc.body ? s : ir_allocate(s->u.alloc.buf, b);
    }
    case S_SEQ: {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
        int changed = 0;
        for (int i = 0; i < s->u.seq.n; i++) {
            items[i] = stmt_at(s->u.seq.items[i], fs, ctx);
            changed |= items[i] != s->u.seq.items[i];
        }
        return changed ? ir_seq(items, s->u.seq.n) : s;
    }
    case S_COMMENT:
    case S_BARRIER: return s;
    }
    return s;
}
