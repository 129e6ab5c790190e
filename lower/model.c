/* model.c - ir_lower_model: a scheduled program as a model, one kernel per root stage run
 * in order by the model function, through the model passes (the table below): the
 * kernels, the run-time loops' kernels between them, where each extent computed from
 * values is read, the constants they read, the in-place outputs and the arena plan.
 * requires: a verified program and a schedule whose primitives succeeded; produces: a
 * Model (lower.h), or NULL with ir_fail().
 */
#include "passes.h"

#include <string.h>

/* out gets each buffer `b` is not yet in */
static void add_buffer(PtrVec *out, Buffer *b)
{
    for (int i = 0; i < out->n; i++)
        if (out->items[i] == b)
            return;
    ir_vec_push(out, b, 1 << 20, "buffers");
}

/* the buffers e loads, each after those its index loads */
static Expr *expr_buffers_at(Expr *e, void *out)
{
    ir_expr_map(e, expr_buffers_at, out);   /* a walk: the callback returns what it is given */
    if (e->kind == E_LOAD)
        add_buffer(out, e->u.load.buf);
    return e;
}

static void expr_buffers(const Expr *e, PtrVec *out) { expr_buffers_at((Expr *)e, out); }

void lower_stmt_buffers(const Stmt *s, PtrVec *out)
{
    if (!s)
        return;
    switch (s->kind) {
    case S_FOR:
        expr_buffers(s->u.loop.min, out);
        expr_buffers(s->u.loop.extent, out);
        lower_stmt_buffers(s->u.loop.body, out);
        return;
    case S_LET:
        expr_buffers(s->u.let.value, out);
        lower_stmt_buffers(s->u.let.body, out);
        return;
    case S_IF:
        expr_buffers(s->u.cond.cond, out);
        lower_stmt_buffers(s->u.cond.then, out);
        lower_stmt_buffers(s->u.cond.els, out);
        return;
    case S_STORE:
    case S_PREFETCH: {
        expr_buffers(s->u.store.index, out);
        if (s->kind == S_STORE)
            expr_buffers(s->u.store.value, out);
        add_buffer(out, s->u.store.buf);
        return;
    }
    case S_ALLOC: lower_stmt_buffers(s->u.alloc.body, out); return;
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            lower_stmt_buffers(s->u.seq.items[i], out);
        return;
    default: return;
    }
}

static int guard_within(const IrGuard *a, const IrGuard *g)
{
    for (; a; a = a->up)
        if (a == g)
            return 1;
    return g == NULL;
}

const Buffer *lower_model_buffer(const Model *m, const char *name)
{
    const PtrVec *lists[3] = {&m->params, &m->arena, &m->constants};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < lists[l]->n; i++)
            if (!strcmp(((const Buffer *)lists[l]->items[i])->name, name))
                return lists[l]->items[i];
    return NULL;
}

/* Kernel k, of a run-time If's branch g, runs only when g's conditions hold, where each
 * condition is a buffer of the model (not one computed inside a kernel). */
static void set_guards(const Model *m, Kernel *k, const IrGuard *g)
{
    int n = 0;
    for (const IrGuard *c = g; c; c = c->up)
        n++;
    if (n > IR_MAX_GUARDS)
        return;
    int depth = n;
    for (const IrGuard *c = g; c; c = c->up) {   /* innermost first: fill from the end */
        const Buffer *b = lower_model_buffer(m, c->cond->name);
        if (!b || b->size < 1 || ir_dtype_is_storage(b->dtype))
            return;
        k->guard_buf[--n] = b;
        k->guard_value[n] = c->value;
    }
    k->nguards = depth;
    for (int i = 0; i < k->nguards; i++)
        ir_vec_push(&k->notes, ir_fmt("runs only if %s %s 0", k->guard_buf[i]->name, k->guard_value[i] ? "!=" : "=="),
                    1 << 20, "notes");
}

/* k's parameters in model order: inputs, constants, intermediates, outputs (buffers
 * allocated inside the kernel are in none of the lists and are left out) */
void lower_sort_params(const Model *m, Kernel *k)
{
    int n = 0;
    const PtrVec *order[4] = {&m->params, &m->constants, &m->arena, &m->params};
    Buffer **sorted = ir_alloc(sizeof *sorted * (size_t)(k->params.n + 1));
    for (int g = 0; g < 4; g++)
        for (int j = 0; j < order[g]->n; j++) {
            Buffer *b = order[g]->items[j];
            if ((g == 0 && !b->is_input) || (g == 3 && b->is_input))
                continue;
            for (int q = 0; q < k->params.n; q++)
                if (k->params.items[q] == b)
                    sorted[n++] = b;
        }
    memcpy(k->params.items, sorted, sizeof *sorted * (size_t)n);
    k->params.n = n;
}

/* ---------------------------------------------------------------- the passes */

/* "partition": one kernel per root stage, with what is inlined into it or computed at its
 * loops, each through the loop passes; b->kloop gets the run-time loop each runs in. */
static int partition(LowerModel *b)
{
    Schedule *s = b->s;
    Lower *L = &b->L;
    Model *m = b->m;
    for (int i = 0; i < s->stages.n; i++) {
        Stage *st = s->stages.items[i];
        if (ir_tensor_is_leaf(st->t) || st->attach != ATTACH_ROOT)
            continue;
        PtrVec group = {0};
        L->group = &group;
        Stmt *nest = lower_root(L, st);
        L->group = NULL;
        const char *kname = ir_fmt("%s_%s", b->name, st->t->name);
        if (L->failed || lower_finish(&nest, kname))
            return -1;
        Kernel *k = ir_alloc(sizeof *k);
        k->name = kname;
        k->internal = 1;
        k->body = nest;
        lower_stmt_buffers(nest, &k->params);
        lower_sort_params(m, k);
        lower_kernel_dims(k, s->prog);
        /* the header comment: what this kernel computes and fuses */
        ir_vec_push(&k->notes, ir_fmt("computes %s%s%s", st->t->name, st->t->comment ? ": " : "",
                                      st->t->comment ? st->t->comment : ""), 1 << 20, "notes");
        const IrGuard *gd = st->t->guard;
        for (int g = 0; g < group.n; g++) {
            Tensor *t = group.items[g];
            ir_vec_push(&k->notes, ir_fmt("fuses %s%s%s", t->name, t->comment ? ": " : "", t->comment ? t->comment : ""),
                        1 << 20, "notes");
            if (!guard_within(t->guard, gd))
                gd = NULL;   /* it computes something needed outside the branch */
        }
        set_guards(m, k, gd);
        if (st->t->loop)
            ir_vec_push(&k->notes, ir_fmt("runs in every iteration of %s", st->t->loop->name), 1 << 20, "notes");
        ir_vec_push(&m->kernels, k, 1 << 20, "kernels");
        ir_vec_push(&b->kloop, (void *)st->t->loop, 1 << 20, "kernels");
    }
    return 0;
}

/* "beside": neighbouring kernels that threads run side by side. A kernel with no parallel
 * loop (a recurrence's scan; a step too small to divide) keeps one thread busy and the
 * others waiting. Where the next kernel has none either, has as much work, and neither
 * reads nor writes what the other writes, the C model function runs the two each on a
 * thread of its own under OpenMP (KGEN_SIDE_BY_SIDE, kgen_runtime.h; one after the other
 * without it): the two directions of a bidirectional LSTM or GRU. Their intermediates live
 * through both (arena.c). Pairs only; not inside a run-time loop or If, nor next to a
 * kernel that computes an extent from values; C for CPUs only (Schedule.threads). */
enum { BESIDE_MIN_WORK = 1 << 16 };

int lower_has_parallel_loop(const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: return s->u.loop.kind == FOR_PARALLEL || lower_has_parallel_loop(s->u.loop.body);
    case S_LET: return lower_has_parallel_loop(s->u.let.body);
    case S_IF: return lower_has_parallel_loop(s->u.cond.then) || lower_has_parallel_loop(s->u.cond.els);
    case S_ALLOC: return lower_has_parallel_loop(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (lower_has_parallel_loop(s->u.seq.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* About how many times s's stores run, a vector loop's iterations counted by 8 lanes and a
 * run-time extent at its bound (1 where it does not fold): a kernel's work, roughly */
static double stmt_work(const Stmt *s, const Model *m)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        int64_t n = 1, lo;
        if (!ir_expr_is_const(s->u.loop.extent, &n) && !ir_dims_bounds(m->prog, s->u.loop.extent, &lo, &n))
            n = 1;
        double iters = s->u.loop.kind == FOR_VECTORIZED ? (double)(n + 7) / 8 : (double)n;
        return (iters > 1 ? iters : 1) * stmt_work(s->u.loop.body, m);
    }
    case S_LET: return stmt_work(s->u.let.body, m);
    case S_IF: return stmt_work(s->u.cond.then, m) + stmt_work(s->u.cond.els, m);
    case S_ALLOC: return stmt_work(s->u.alloc.body, m);
    case S_SEQ: {
        double w = 0;
        for (int i = 0; i < s->u.seq.n; i++)
            w += stmt_work(s->u.seq.items[i], m);
        return w;
    }
    case S_STORE: return 1;
    default: return 0;
    }
}

/* Does b read or write a buffer a writes? */
static int touches_writes(const Kernel *a, const Kernel *b)
{
    for (int i = 0; i < a->params.n; i++) {
        const Buffer *w = a->params.items[i];
        if (!ir_stmt_stores(a->body, w))
            continue;
        for (int j = 0; j < b->params.n; j++)
            if (b->params.items[j] == w)
                return 1;
    }
    return 0;
}

/* Can kernel k run beside others: one thread's work, on its own (no guard, loop or value
 * dim) */
static int alone_and_serial(const Model *m, int k)
{
    const Kernel *kk = m->kernels.items[k];
    for (int j = 0; j < m->nloops; j++)
        if (k >= m->loops[j].begin && k < m->loops[j].end)
            return 0;
    for (int i = 0; i < m->prog->dims.n; i++)
        if (m->dim_after[i] == k)
            return 0;
    return !kk->nguards && !lower_has_parallel_loop(kk->body) && stmt_work(kk->body, m) >= BESIDE_MIN_WORK;
}

static int beside(LowerModel *b)
{
    Model *m = b->m;
    /* (a schedule with a plan lowers the versions for smaller extents, gen/driver.c: their
     * kernels are taken one by one, and the model function pairs the model's own) */
    if (!b->s->threads || b->s->plan || m->kernels.n < 2)
        return 0;
    m->beside = ir_alloc((size_t)m->kernels.n);
    for (int k = 0; k + 1 < m->kernels.n; k++) {
        Kernel *x = m->kernels.items[k], *y = m->kernels.items[k + 1];
        if ((k && m->beside[k - 1]) || !alone_and_serial(m, k) || !alone_and_serial(m, k + 1) ||
            touches_writes(x, y) || touches_writes(y, x))
            continue;
        m->beside[k] = 1;
        const char *how = "under OpenMP, each on a thread of its own";
        ir_vec_push(&x->notes, ir_fmt("runs beside %s: %s", y->name, how), 1 << 20, "notes");
        ir_vec_push(&y->notes, ir_fmt("runs beside %s: %s", x->name, how), 1 << 20, "notes");
    }
    return 0;
}

static void dump_beside(FILE *f, const LowerModel *b)
{
    const Model *m = b->m;
    fprintf(f, "model %s after beside:\n", m->name);
    for (int k = 0; m->beside && k + 1 < m->kernels.n; k++)
        if (m->beside[k])
            fprintf(f, "  %s beside %s\n", ((const Kernel *)m->kernels.items[k])->name,
                    ((const Kernel *)m->kernels.items[k + 1])->name);
}

/* "prune-constants": constants no kernel reads (a conv's weights once the layout pass
 * packed a blocked copy, a shape input that was folded) are not emitted: the binary
 * carries each weight once */
static int prune_constants(LowerModel *b)
{
    Model *m = b->m;
    int nc = 0;
    for (int i = 0; i < m->constants.n; i++) {
        Buffer *c = m->constants.items[i];
        int used = 0;
        for (int k = 0; k < m->kernels.n && !used; k++) {
            Kernel *kk = m->kernels.items[k];
            for (int q = 0; q < kk->params.n && !used; q++)
                used = kk->params.items[q] == c;
        }
        if (used)
            m->constants.items[nc++] = c;
    }
    m->constants.n = nc;
    return 0;
}

/* "value-dims": each dim computed from values gets the buffer of its count and the kernel
 * that writes it; no kernel before that one, nor it, may read the dim, and that kernel
 * must run exactly once (not in a run-time If's branch or a run-time loop). */
static int value_dims(LowerModel *b)
{
    Model *m = b->m;
    const PtrVec *dims = &m->prog->dims;
    m->dim_count = ir_alloc(sizeof *m->dim_count * (size_t)(dims->n + 1));
    m->dim_after = ir_alloc(sizeof *m->dim_after * (size_t)(dims->n + 1));
    for (int i = 0; i < dims->n; i++) {
        const IrDim *d = dims->items[i];
        m->dim_after[i] = -1;
        if (!d->count)
            continue;
        const Buffer *c = lower_model_buffer(m, d->count->name);
        int k = -1;
        for (int j = 0; j < m->kernels.n && c && k < 0; j++) {
            const Kernel *kk = m->kernels.items[j];
            for (int q = 0; q < kk->params.n && k < 0; q++)
                if (kk->params.items[q] == c)
                    k = j;
        }
        if (k < 0 || c->dtype != DT_I64 || c->size < 1)
            return ir_fail("the extent %s (computed from values) has no kernel that computes it", d->name);
        const Kernel *kk = m->kernels.items[k];
        int in_loop = 0;
        for (int j = 0; j < m->nloops; j++)
            in_loop |= k >= m->loops[j].begin && k < m->loops[j].end;
        if (kk->nguards || in_loop)
            return ir_fail("the extent %s is computed from values inside a run-time %s: not supported yet",
                           d->name, in_loop ? "Loop" : "If");
        for (int j = 0; j <= k; j++) {
            const Kernel *r = m->kernels.items[j];
            for (int q = 0; q < r->dims.n; q++)
                if (r->dims.items[q] == d->var)
                    return ir_fail("kernel %s reads the extent %s before it is computed", r->name, d->name);
        }
        m->dim_count[i] = c;
        m->dim_after[i] = k;
    }
    return 0;
}

static void dump_value_dims(FILE *f, const LowerModel *b)
{
    const Model *m = b->m;
    fprintf(f, "model %s after value-dims:\n", m->name);
    for (int i = 0; i < m->prog->dims.n; i++)
        if (m->dim_count[i])
            fprintf(f, "  %s = %s[0] after kernel %d %s\n", ((const IrDim *)m->prog->dims.items[i])->name,
                    m->dim_count[i]->name, m->dim_after[i],
                    ((const Kernel *)m->kernels.items[m->dim_after[i]])->name);
}

/* the kernels in order, each with its parameters (and with its loops, full) */
static void dump_kernels(FILE *f, const LowerModel *b, const char *pass, int full)
{
    const Model *m = b->m;
    fprintf(f, "model %s after %s: %d kernels\n", m->name, pass, m->kernels.n);
    for (int k = 0; k < m->kernels.n; k++)
        if (full)
            ir_print_kernel(f, m->kernels.items[k]);
        else
            fprintf(f, "  %s\n", ((const Kernel *)m->kernels.items[k])->name);
    for (int j = 0; j < m->nloops; j++)
        fprintf(f, "  loop %s: kernels %d to %d\n", m->loops[j].name, m->loops[j].begin, m->loops[j].end - 1);
}

static void dump_partition(FILE *f, const LowerModel *b) { dump_kernels(f, b, "partition", 1); }
static void dump_loops(FILE *f, const LowerModel *b) { dump_kernels(f, b, "run-time-loops", 0); }

static void dump_constants(FILE *f, const LowerModel *b)
{
    const Model *m = b->m;
    fprintf(f, "model %s after prune-constants: %d constants\n", m->name, m->constants.n);
    for (int i = 0; i < m->constants.n; i++)
        fprintf(f, "  %s\n", ((const Buffer *)m->constants.items[i])->name);
}

typedef struct {
    PassInfo info;
    int (*run)(LowerModel *b);                        /* 0, or -1 with ir_fail() */
    void (*dump)(FILE *f, const LowerModel *b);       /* for --dump */
} ModelPass;

static const ModelPass model_passes[] = {
    {{"partition", "one kernel per root stage, through the loop passes (models)"}, partition, dump_partition},
    {{"run-time-loops", "the start and next kernels of each run-time loop placed around its body's (models)"},
     lower_place_loops, dump_loops},
    {{"value-dims", "each extent computed from values read after the kernel that counts it (models)"}, value_dims,
     dump_value_dims},
    {{"beside", "neighbouring kernels without parallel loops run side by side, a thread each, in C (models)"}, beside,
     dump_beside},
    {{"prune-constants", "the constants no kernel reads dropped (models)"}, prune_constants, dump_constants},
    {{"in-place", "liveness of the intermediates; outputs written over an input that dies there (models)"}, lower_inplace,
     lower_dump_inplace},
    {{"arena", "the intermediates placed in one arena by liveness, largest first (models)"}, lower_plan_arena,
     lower_dump_arena},
};
#define NMODEL_PASSES ((int)(sizeof model_passes / sizeof *model_passes))

const PassInfo *lower_model_passes(int *n)
{
    static PassInfo info[NMODEL_PASSES];
    for (int i = 0; i < NMODEL_PASSES; i++)
        info[i] = model_passes[i].info;
    *n = NMODEL_PASSES;
    return info;
}

Model *ir_lower_model(Schedule *s, const char *name)
{
    LowerModel b = {0};
    b.s = s;
    b.name = name;
    b.L.k = ir_alloc(sizeof *b.L.k);   /* collects the model's parameters */
    b.L.k->name = ir_strdup(name);
    if (lower_setup(&b.L, s, &b.roots))
        return NULL;
    Model *m = b.m = ir_alloc(sizeof *m);
    m->arena_align = s->arena_align > 0 ? s->arena_align : LOWER_ALIGN_BYTES;
    m->name = ir_strdup(name);
    m->prog = s->prog;
    for (int i = 0; i < b.L.k->params.n; i++) {
        Buffer *p = b.L.k->params.items[i];
        ir_vec_push(p->constant ? &m->constants : &m->params, p, 1 << 20, "buffers");
    }
    for (int i = 0; i < b.roots.n; i++)
        ir_vec_push(&m->arena, b.roots.items[i], 1 << 20, "buffers");
    for (int i = 0; i < NMODEL_PASSES; i++) {
        if (model_passes[i].run(&b))
            return NULL;
        FILE *f = ir_pass_dump(model_passes[i].info.name);
        if (f)
            model_passes[i].dump(f, &b);
    }
    return m;
}
