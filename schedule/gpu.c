/* gpu.c - the default GPU schedule.
 * requires: a verified program with its schedule fresh from sch_create.
 *
 * Fusion is the CPU default's (sch_default_fuse). Then each root stage becomes one
 * launch: its output axes are fused into one index and split into blocks of `threads`,
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
            Stage *P = st, *E = sch_reduction_epilogue(s, st);
            if (!E) {
                P = sch_cache_write(s, st, SCOPE_LOCAL);
                if (!P)
                    return -1;
                E = st;
                i++;    /* the cache stage was inserted before st */
            }
            IterVar *th;
            if (bind_flat(E, threads, &th) || sch_compute_at(s, P, E, th))
                return -1;
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
