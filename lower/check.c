/* check.c - what lowering checks: the schedule as a whole before any nest is built, and
 * the loops' annotations after the loop passes (the last of them, "check-loops").
 * requires: a schedule (lower_check_schedule), a kernel's finished loops (lower_check_loops);
 * breaks: nothing (each fails with ir_fail() and a message naming the stage or loop).
 */
#include "passes.h"

static int check_loops(const Stmt *s, int in_parallel, int in_vector)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        int64_t e;
        int vec = s->u.loop.kind == FOR_VECTORIZED || s->u.loop.kind == FOR_TENSORIZED;
        if (vec && !ir_expr_is_const(s->u.loop.extent, &e))
            return ir_fail("%s: loop %s has a non-constant extent",
                           s->u.loop.kind == FOR_VECTORIZED ? "vectorize" : "tensorize", s->u.loop.var->name);
        if (s->u.loop.kind == FOR_PARALLEL && in_parallel)
            return ir_fail("parallel: loop %s is nested inside another parallel loop", s->u.loop.var->name);
        if (s->u.loop.kind == FOR_PARALLEL && in_vector)
            return ir_fail("parallel: loop %s is inside a vectorized loop", s->u.loop.var->name);
        return check_loops(s->u.loop.body, in_parallel || s->u.loop.kind == FOR_PARALLEL, in_vector || vec);
    }
    case S_LET: return check_loops(s->u.let.body, in_parallel, in_vector);
    case S_IF: return check_loops(s->u.cond.then, in_parallel, in_vector) || check_loops(s->u.cond.els, in_parallel, in_vector);
    case S_ALLOC: return check_loops(s->u.alloc.body, in_parallel, in_vector);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (check_loops(s->u.seq.items[i], in_parallel, in_vector))
                return -1;
        return 0;
    default: return 0;
    }
}

/* Does e read t, directly or through the stages inlined into it? Allocates nothing (the
 * compute_at check asks it for every pair of stages). */
typedef struct {
    const Lower *L;
    const Tensor *t;
} ReadsCtx;

static int reads_inlined(const Lower *L, const Expr *e, const Tensor *t);

static int reads_at(const Expr *e, const void *ctx)
{
    const ReadsCtx *c = ctx;
    if (e->kind != E_ACCESS)
        return 0;
    const Tensor *x = e->u.access.t;
    return x == c->t ||
           (x->kind == T_COMPUTE && lower_stage_of(c->L, x)->attach == ATTACH_INLINE && reads_inlined(c->L, x->body, c->t));
}

static int reads_inlined(const Lower *L, const Expr *e, const Tensor *t)
{
    ReadsCtx c = {L, t};
    return ir_expr_find((Expr *)e, reads_at, &c) != NULL;   /* (changes nothing) */
}

/* The deepest expression that inlining may build (operations from the root to a leaf,
 * through every inlined body): lowering, the simplifier and the printer recurse over it,
 * and a schedule inlining a chain of thousands of stages would run them out of stack.
 * (The default schedule stays under half of it.) */
#define MAX_INLINED_DEPTH 2000

static int check_inline_depth(Lower *L)
{
    Schedule *s = L->s;
    /* depth[i]: of stage i's body with its inlined inputs substituted (an upper bound) */
    int *depth = ir_alloc(sizeof *depth * (size_t)(s->stages.n + 1));
    for (int i = 0; i < s->stages.n; i++) {   /* stages come after what they read */
        Stage *st = s->stages.items[i];
        if (st->t->kind != T_COMPUTE)
            continue;
        PtrVec reads = {0};
        ir_expr_tensors(st->t->body, &reads);
        int d = 0;
        for (int j = 0; j < reads.n; j++) {
            const Tensor *r = reads.items[j];
            if (r != st->t && !ir_tensor_is_leaf(r) && lower_stage_of(L, r)->attach == ATTACH_INLINE &&
                depth[lower_stage_idx(L, r)] > d)
                d = depth[lower_stage_idx(L, r)];
        }
        depth[i] = d + ir_expr_depth(st->t->body);
        if (depth[i] > MAX_INLINED_DEPTH)
            return ir_fail("%s: with the stages inlined into it, an expression %d operations deep, over the "
                           "limit of %d (compute one of them at the root)", st->t->name, depth[i], MAX_INLINED_DEPTH);
    }
    return 0;
}

int lower_check_schedule(Lower *L)
{
    Schedule *s = L->s;
    Program *p = s->prog;
    if (check_inline_depth(L))
        return -1;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (st->attach != ATTACH_AT)
            continue;
        Stage *root = st;
        for (int depth = 0; root->attach == ATTACH_AT; depth++) {
            if (depth > s->stages.n)
                return ir_fail("compute_at: %s is attached in a cycle", st->t->name);
            root = root->attach_stage;
        }
        if (root->attach == ATTACH_INLINE)
            return ir_fail("compute_at: %s is computed inside %s, which is inlined", st->t->name, root->t->name);
        for (int j = 0; j < s->stages.n; j++) {
            Stage *r = s->stages.items[j];
            if (r == st->attach_stage || r->attach == ATTACH_INLINE || ir_tensor_is_leaf(r->t))
                continue;
            if (r->attach == ATTACH_AT && r->attach_stage == st->attach_stage) {
                /* a sibling computed in the same loop nest, at the same loop or deeper */
                int ps = -1, pr = -1;
                for (int q = 0; q < st->attach_stage->leaf.n; q++) {
                    if (st->attach_stage->leaf.items[q] == st->attach_iv)
                        ps = q;
                    if (st->attach_stage->leaf.items[q] == r->attach_iv)
                        pr = q;
                }
                if (pr >= ps)
                    continue;
            }
            Expr *e = r->t->kind == T_COMPUTE ? r->t->body : r->t->update;
            if (reads_inlined(L, e, st->t) || (r->t->kind == T_SCAN && reads_inlined(L, r->t->init, st->t)))
                return ir_fail("compute_at(%s, %s, %s): %s is also read by %s", st->t->name,
                               st->attach_stage->t->name, st->attach_iv->var->name, st->t->name, r->t->name);
        }
        if (lower_leaf_of_var(st->attach_stage, ir_varref(st->attach_iv->var)) < 0)
            return ir_fail("compute_at(%s, %s, %s): %s is no longer a loop of %s (it was split or fused later)",
                           st->t->name, st->attach_stage->t->name, st->attach_iv->var->name,
                           st->attach_iv->var->name, st->attach_stage->t->name);
    }

    /* index arithmetic is 32-bit: every tensor must be addressable with it */
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] == 0) {
                n = 0;
                break;
            }
            if (n > INT32_MAX / t->shape[d])
                return ir_fail("tensor %s is too large: kgen's index arithmetic is 32-bit (at most %d elements)",
                               t->name, INT32_MAX);
            n *= t->shape[d];
        }
    }
    return 0;
}

int lower_check_loops(Stmt **s) { return check_loops(*s, 0, 0); }
