/* unroll.c - the loop pass "unroll": each loop the schedule unrolled (FOR_UNROLLED, a
 * constant extent of at most IR_MAX_UNROLL) becomes its body once per iteration, the loop
 * variable replaced by the iteration's value; an unrolled loop whose extent is not
 * constant is left a serial loop.
 * requires: a kernel's nest; breaks: nothing (the simplifier runs after it).
 */
#include "passes.h"

static Stmt *unroll(Stmt *s, void *ctx)
{
    if (!s)
        return NULL;
    if (s->kind != S_FOR)
        return ir_stmt_map(s, unroll, NULL, ctx);
    Stmt *body = unroll(s->u.loop.body, ctx);
    int64_t lo, ext;
    if (s->u.loop.kind == FOR_UNROLLED && ir_expr_is_const(s->u.loop.min, &lo) &&
        ir_expr_is_const(s->u.loop.extent, &ext) && ext <= IR_MAX_UNROLL) {
        Stmt **items = ir_alloc(sizeof(Stmt *) * (size_t)(ext ? ext : 1));
        Var *v = s->u.loop.var;
        for (int64_t i = 0; i < ext; i++) {
            Expr *val = ir_idx(lo + i);
            items[i] = ir_stmt_subst(body, &v, &val, 1);
        }
        return ir_seq(items, (int)ext);
    }
    Stmt *r = ir_for_like(s, s->u.loop.min, s->u.loop.extent, body);
    if (r->u.loop.kind == FOR_UNROLLED)
        r->u.loop.kind = FOR_SERIAL;
    return r;
}

Stmt *lower_unroll(Stmt *s) { return unroll(s, NULL); }
