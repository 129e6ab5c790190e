/* gpu.c - the default GPU schedule.
 * requires: a verified program with its schedule fresh from sch_create.
 *
 * Fusion is the CPU default's (sch_default_fuse). A matmul-like reduction (one reduce
 * axis, the product of two materialized tensors, one indexed by the rows and k, the other
 * by k and the columns, every extent at least 16) is tiled through shared memory: a
 * block of 16 x 16 threads computes a 16 x 16 tile of the output, and for each step of 16
 * along k the block copies a 16 x 16 tile of each operand into shared memory together (one
 * element per thread, barriers around the copy) and every thread accumulates its element
 * from the two tiles. Every other root stage becomes one launch: its output axes are fused into one index and split into blocks of `threads`,
 * bound to blockIdx.x and threadIdx.x, so each thread computes one output element
 * (consecutive threads write consecutive elements: coalesced stores). A reduction is
 * computed at that thread: at its same-shaped epilogue if it has one (bias, activation,
 * residual add on the accumulator), else through a register copy (cache_write local),
 * so the sum lives in a register and the output is written once. Scans and scalar
 * outputs stay unbound: they run on one thread.
 */
#include "schedule.h"

/* Fuse all of st's loops (outermost first) into one, split it into blocks, bind. The inner
 * (thread) axis is returned in *thread. */
static int bind_flat(Stage *st, int threads, IterVar **thread)
{
    IterVar *f = st->leaf.items[0];
    while (st->leaf.n > 1)
        if (sch_fuse(st, st->leaf.items[0], st->leaf.items[1], &f))
            return -1;
    int64_t n = f->extent, b = threads;
    if (n < b)                          /* a small tensor: one block, rounded up to a warp */
        b = n <= 32 ? n : (n + 31) / 32 * 32;
    IterVar *bo, *bi;
    if (sch_split(st, f, b, &bo, &bi) || sch_bind(st, bo, "blockIdx.x") || sch_bind(st, bi, "threadIdx.x"))
        return -1;
    *thread = bi;
    return 0;
}

#define TILE 16

static int stage_index(const Schedule *s, const Stage *st)
{
    for (int i = 0; i < s->stages.n; i++)
        if (s->stages.items[i] == st)
            return i;
    return -1;
}

/* The dimension of access x whose index is exactly variable v, or -1. */
static int dim_of(const Expr *x, const Var *v)
{
    for (int d = 0; d < x->u.access.n; d++) {
        const Expr *e = x->u.access.idx[d];
        if (e->kind == E_VAR && e->u.var == v)
            return d;
    }
    return -1;
}

/* Does access x use variable v in any index? */
static int uses(const Expr *x, const Var *v)
{
    for (int d = 0; d < x->u.access.n; d++)
        if (ir_expr_uses_var(x->u.access.idx[d], v))
            return 1;
    return 0;
}

/* P: the reduction, E: the root stage with P's shape that P is computed at. 1 when the
 * shared-memory tiling applied, 0 when P is not matmul-like (or its k is decided at run
 * time: one thread per element then), -1 on error. */
static int shared_matmul(Schedule *s, Stage *P, Stage *E, int threads)
{
    Tensor *t = P->t;
    const Expr *body = t->body;
    int nd = t->ndim;
    if (threads < TILE * TILE || nd < 2 || E->leaf.n != nd || E->nrels || body->kind != E_REDUCE ||
        body->u.reduce.naxes != 1 || body->u.reduce.op != RED_SUM)
        return 0;
    const Expr *m = body->u.reduce.body;
    if (m->kind != E_BIN || m->u.bin.op != OP_MUL || m->u.bin.a->kind != E_ACCESS || m->u.bin.b->kind != E_ACCESS)
        return 0;
    const Expr *x = m->u.bin.a, *y = m->u.bin.b;
    const Var *a = t->axes[nd - 2]->var, *b = t->axes[nd - 1]->var, *k = body->u.reduce.axes[0]->var;
    if (t->axes[nd - 2]->extent < TILE || t->axes[nd - 1]->extent < TILE || body->u.reduce.axes[0]->extent < TILE)
        return 0;     /* (tiles past the edges are guarded; smaller operands gain nothing) */
    if (body->u.reduce.axes[0]->dyn)
        return 0;     /* k decided at run time: its last step's guard would hold the barriers */
    int xa = dim_of(x, a), xk = dim_of(x, k), yk = dim_of(y, k), yb = dim_of(y, b);
    if (xa < 0 || xk < 0 || yk < 0 || yb < 0 || uses(x, b) || uses(y, a) || x->u.access.t == y->u.access.t)
        return 0;
    Stage *X = sch_stage(s, x->u.access.t), *Y = sch_stage(s, y->u.access.t);
    if (!X || !Y || X->attach == ATTACH_INLINE || Y->attach == ATTACH_INLINE)
        return 0;

    /* the output: 16 x 16 tiles, one per block, one element per thread */
    IterVar *ao, *ai, *bo, *bi, *blk;
    if (sch_split(E, E->leaf.items[nd - 2], TILE, &ao, &ai) || sch_split(E, E->leaf.items[nd], TILE, &bo, &bi))
        return -1;
    if (sch_reorder_innermost(E, NULL, ai, bi))
        return -1;
    blk = E->leaf.items[0];
    while (E->leaf.n > 3)
        if (sch_fuse(E, E->leaf.items[0], E->leaf.items[1], &blk))
            return -1;
    if (sch_bind(E, blk, "blockIdx.x") || sch_bind(E, ai, "threadIdx.y") || sch_bind(E, bi, "threadIdx.x") ||
        sch_compute_at(s, P, E, bi))
        return -1;
    /* k in steps of 16, the operands' tiles in shared memory at each step */
    IterVar *kv = NULL, *ko, *ki;
    for (int i = 0; i < P->leaf.n; i++)
        if (((IterVar *)P->leaf.items[i])->kind == IV_REDUCE)
            kv = P->leaf.items[i];
    if (!kv || sch_split(P, kv, TILE, &ko, &ki))
        return -1;
    Stage *XS = sch_cache_read(s, x->u.access.t, SCOPE_SHARED, &P, 1);
    Stage *YS = XS ? sch_cache_read(s, y->u.access.t, SCOPE_SHARED, &P, 1) : NULL;
    if (!YS || sch_compute_at(s, XS, P, ko) || sch_compute_at(s, YS, P, ko))
        return -1;
    if (sch_bind(XS, XS->leaf.items[xa], "threadIdx.y") || sch_bind(XS, XS->leaf.items[xk], "threadIdx.x") ||
        sch_bind(YS, YS->leaf.items[yk], "threadIdx.y") || sch_bind(YS, YS->leaf.items[yb], "threadIdx.x"))
        return -1;
    return 1;
}

int sch_default_gpu(Schedule *s, int threads)
{
    if (threads < 1)
        return ir_fail("GPU schedule: %d threads per block", threads);
    if (sch_default_fuse(s))
        return -1;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        if (t->kind != T_COMPUTE || st->attach != ATTACH_ROOT || st->nrels || t->ndim == 0)
            continue;
        if (t->body->kind == E_REDUCE) {
            Stage *P, *E = sch_reduction_at(s, st, &P);
            if (!E)
                return -1;
            int tiled = shared_matmul(s, P, E, threads);
            if (tiled < 0)
                return -1;
            IterVar *th;
            if (!tiled && (bind_flat(E, threads, &th) || sch_compute_at(s, P, E, th)))
                return -1;
            i = stage_index(s, st);    /* cache stages were inserted before it */
            continue;
        }
        if (ir_expr_has_reduce(t->body))
            continue;   /* a nested reduction: left to one thread per element below */
        /* an epilogue that a reduction will be computed at is bound when that reduction is */
        int is_epilogue = 0;
        for (int j = 0; j < s->stages.n && !is_epilogue; j++) {
            Stage *r = s->stages.items[j];
            is_epilogue = j != i && r->attach == ATTACH_ROOT && r->t->kind == T_COMPUTE && r->t->body->kind == E_REDUCE &&
                          !r->nrels && r->t->ndim > 0 && sch_reduction_epilogue(s, r) == st;
        }
        if (is_epilogue)
            continue;
        IterVar *th;
        if (bind_flat(st, threads, &th))
            return -1;
    }
    /* stages with a reduction nested in their body: one thread per element too */
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        Tensor *t = st->t;
        IterVar *th;
        if (t->kind == T_COMPUTE && st->attach == ATTACH_ROOT && !st->nrels && t->ndim > 0 &&
            t->body->kind != E_REDUCE && ir_expr_has_reduce(t->body) && bind_flat(st, threads, &th))
            return -1;
    }
    return 0;
}
