/* loops.c - the model pass "run-time-loops": a model function's loops (IrLoop: ONNX Loop
 * and Scan run at run time) get a kernel that sets their states before the first
 * iteration and one that copies the body's next values into them after each, placed
 * around the loop's body kernels, and a ModelLoop each.
 * requires: the model's kernels, one per root stage ("partition"); produces: m->kernels
 * with the loops' kernels, m->loops; -1 with ir_fail() on loops that interleave.
 */
#include "passes.h"

/* dst = src, element by element (the same shape, maybe other strides), over the run-time
 * extents where either has them (a buffer compact for them holds no more) */
static Stmt *copy_stmt(Buffer *dst, Buffer *src)
{
    Var *v[KG_MAX_DIMS];
    Expr *di = ir_idx(0), *si = ir_idx(0);
    Expr *const *dx = ir_buffer_run_ext(dst), *const *sx = ir_buffer_run_ext(src);
    for (int d = 0; d < dst->ndim; d++) {
        v[d] = ir_var_new(ir_fmt("i%d", d), DT_INDEX);
        di = ir_add(di, ir_mul(ir_varref(v[d]), ir_buffer_stride(dst, d)));
        si = ir_add(si, ir_mul(ir_varref(v[d]), ir_buffer_stride(src, d)));
    }
    Stmt *st = ir_store(dst, di, ir_load(src, si));
    for (int d = dst->ndim - 1; d >= 0; d--) {
        Expr *ext = dx && dx[d] ? dx[d] : sx && d < src->ndim && sx[d] ? sx[d] : ir_idx(dst->shape[d]);
        st = ir_for(v[d], ir_idx(0), ext, FOR_SERIAL, st);
    }
    return st;
}

/* The model's buffer of tensor t of loop L (found by name: passes may have rebuilt t) */
static Buffer *loop_buffer(const Model *m, const IrLoop *L, const Tensor *t)
{
    Buffer *b = (Buffer *)lower_model_buffer(m, t->name);
    if (!b)
        ir_fail("%s: %s, which the model function copies, has no buffer of its own (the schedule inlined it)",
                L->name, t->name);
    return b;
}

/* The kernel that sets L's states before its first iteration (next: 0), or the one that
 * copies the body's next values into them after each iteration (next: 1). */
static Kernel *loop_kernel(const Model *m, const IrLoop *L, int next)
{
    Stmt *items[IR_LOOP_MAX_STATES];
    int n = 0;
    Buffer *iter = loop_buffer(m, L, L->state[0]);
    if (!iter || L->nstate > IR_LOOP_MAX_STATES)
        return NULL;
    items[n++] = ir_store(iter, ir_idx(0), next ? ir_bin(OP_ADD, ir_load(iter, ir_idx(0)), ir_int(1, DT_I64))
                                                : ir_int(0, DT_I64));
    for (int i = 1; i < L->nstate; i++) {
        const Tensor *from = next ? L->next[i] : L->init[i];
        Buffer *dst = loop_buffer(m, L, L->state[i]), *src = from ? loop_buffer(m, L, from) : NULL;
        if (!dst || (from && !src))
            return NULL;
        if (src)
            items[n++] = copy_stmt(dst, src);
        else if (i == 1 && !next)
            items[n++] = ir_store(dst, ir_idx(0), ir_bool(1));   /* no condition: run */
    }
    Kernel *k = ir_alloc(sizeof *k);
    k->name = ir_fmt("%s_%s_%s", m->name, L->state[0]->name, next ? "next" : "start");
    k->internal = 1;
    k->body = ir_simplify_stmt(ir_seq(items, n));
    lower_stmt_buffers(k->body, &k->params);
    lower_sort_params(m, k);
    lower_kernel_dims(k, m->prog);
    ir_vec_push(&k->notes, ir_fmt(next ? "%s: the next iteration's states (after each iteration)"
                                       : "%s: the states before the first iteration", L->name), 1 << 20, "notes");
    return k;
}

/* Places the run-time loops (IrLoop) in m's kernel sequence; kloop[k] is the loop kernel k
 * computes a tensor of (NULL: none). Each loop's body kernels are contiguous; its start
 * kernel goes before them and its next kernel after them. A loop whose body computes
 * nothing leaves its states at their initial values: only its start kernel runs. */
static int place_loops(Model *m, const Schedule *s, const PtrVec *kloop)
{
    PtrVec loops = {0};
    for (int i = 0; i < s->stages.n; i++) {
        const Tensor *t = ((Stage *)s->stages.items[i])->t;
        if (t->loop_state && t->loop_state->state[0] == t)
            ir_vec_push(&loops, (void *)t->loop_state, 1 << 16, "loops");
    }
    if (!loops.n)
        return 0;
    int nk = m->kernels.n, nl = loops.n;
    int *b = ir_alloc(sizeof *b * (size_t)nl), *e = ir_alloc(sizeof *e * (size_t)nl);
    for (int j = 0; j < nl; j++) {
        b[j] = e[j] = -1;
        for (int k = 0; k < nk; k++)
            if (kloop->items[k] == loops.items[j]) {
                if (b[j] < 0)
                    b[j] = k;
                e[j] = k;
            }
        const IrLoop *L = loops.items[j];
        if (b[j] >= 0)
            continue;
        /* no body kernel: before the first kernel that reads a state */
        b[j] = nk;
        for (int k = nk - 1; k >= 0; k--)
            for (int i = 0; i < L->nstate; i++) {
                const Buffer *sb = lower_model_buffer(m, L->state[i]->name);
                Kernel *kk = m->kernels.items[k];
                for (int q = 0; q < kk->params.n; q++)
                    if (kk->params.items[q] == sb)
                        b[j] = k;
            }
        e[j] = b[j] - 1;
    }
    for (int j = 0; j < nl; j++)
        for (int i = 0; i < nl; i++)
            if (i != j && b[i] <= e[j] && b[i] >= b[j])
                return ir_fail("%s and %s: the kernels of two run-time loops interleave", ((IrLoop *)loops.items[j])->name,
                               ((IrLoop *)loops.items[i])->name);
    /* nothing after a loop reads what its body computes (only its states) */
    for (int j = 0; j < nl; j++)
        for (int k = e[j] + 1; k < nk; k++) {
            Kernel *kk = m->kernels.items[k];
            for (int q = 0; q < kk->params.n; q++)
                for (int r = b[j]; r <= e[j]; r++)
                    if (ir_stmt_stores(((Kernel *)m->kernels.items[r])->body, kk->params.items[q]))
                        return ir_fail("%s: kernel %s, after the loop, reads %s, which the loop's body computes",
                                       ((IrLoop *)loops.items[j])->name, kk->name,
                                       ((Buffer *)kk->params.items[q])->name);
        }
    PtrVec out = {0};
    m->loops = ir_alloc(sizeof *m->loops * (size_t)nl);
    int *slot = ir_alloc(sizeof *slot * (size_t)nl);   /* loop j's ModelLoop */
    for (int k = 0; k <= nk; k++) {
        for (int j = 0; j < nl; j++) {
            const IrLoop *L = loops.items[j];
            if (b[j] == k) {
                Kernel *start = loop_kernel(m, L, 0);
                if (!start)
                    return -1;
                ir_vec_push(&out, start, 1 << 20, "kernels");
                if (e[j] < b[j])
                    continue;   /* no body */
                slot[j] = m->nloops;
                ModelLoop *ml = &m->loops[m->nloops++];
                ml->name = L->name;
                ml->begin = out.n - 1;
                ml->iter = lower_model_buffer(m, L->state[0]->name);
                ml->cond = lower_model_buffer(m, L->state[1]->name);
                ml->trip = L->trip ? loop_buffer(m, L, L->trip) : NULL;
                ml->trip_count = L->trip_count;
                if (L->trip && !ml->trip)
                    return -1;
            }
        }
        if (k < nk)
            ir_vec_push(&out, m->kernels.items[k], 1 << 20, "kernels");
        for (int j = 0; j < nl; j++)
            if (e[j] == k && e[j] >= b[j]) {
                Kernel *next = loop_kernel(m, loops.items[j], 1);
                if (!next)
                    return -1;
                ir_vec_push(&out, next, 1 << 20, "kernels");
                m->loops[slot[j]].end = out.n;
            }
    }
    m->kernels = out;
    return 0;
}

int lower_place_loops(LowerModel *b) { return place_loops(b->m, b->s, &b->kloop); }
