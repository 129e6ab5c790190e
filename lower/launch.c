/* launch.c - the gpu-launch pass: which loops of a kernel run as GPU threads and blocks.
 *
 * requires: a lowered kernel (loops bound with FOR_BOUND and a blockIdx./threadIdx. tag);
 * breaks: nothing (reads only; the result is a LowerLaunchPlan).
 *
 * A kernel's body, below its workspace allocations, is a sequence of loop nests; each one
 * is a launch. Its grid is the largest extent bound to each index; a block index's loop
 * may run to a run-time extent (dims decided at run time: the grid is then an Expr of
 * them, which the host computes, and its bound's value is checked against the limits).
 * A bound loop shorter than the grid prints as a guard, so a barrier must not sit inside
 * one (nor inside an if): every thread of a block has to reach it. The printers turn the plan into kernels
 * and the hosts into launches; they decide nothing about the grid themselves.
 */
#include "launch.h"

#include <stdlib.h>
#include <string.h>

static const PassInfo launch_pass = {"gpu-launch",
                                     "split a GPU kernel into launches: grid, block, shared memory, barriers checked (GPU targets)"};

const PassInfo *lower_launch_pass(void) { return &launch_pass; }

/* A launch beyond these is refused whatever the target (blocks: x < 2^31, y and z <=
 * 65535; threads: z <= 64). */
#define GRID_Y_MAX 65535
#define GRID_Z_MAX 65535
#define BLOCK_Z_MAX 64

int lower_launch_slot(const char *tag)
{
    if (!tag)
        return -1;
    int base = !strncmp(tag, "blockIdx.", 9) ? 0 : !strncmp(tag, "threadIdx.", 10) ? 3 : -1;
    if (base < 0)
        return -1;
    char c = tag[base ? 10 : 9];
    return c >= 'x' && c <= 'z' && !tag[base ? 11 : 10] ? base + (c - 'x') : -1;
}

static int expr_f64(const Expr *e)
{
    if (!e)
        return 0;
    if (e->dtype == DT_F64)
        return 1;
    switch (e->kind) {
    case E_BIN: return expr_f64(e->u.bin.a) || expr_f64(e->u.bin.b);
    case E_UN: return expr_f64(e->u.un.a);
    case E_CAST:
    case E_BITCAST: return expr_f64(e->u.cast.a);
    case E_SELECT: return expr_f64(e->u.sel.cond) || expr_f64(e->u.sel.t) || expr_f64(e->u.sel.f);
    case E_CALL:
        for (int i = 0; i < KG_MAX_ARGS; i++)
            if (expr_f64(e->u.call.args[i]))
                return 1;
        return 0;
    case E_LOAD: return e->u.load.buf->dtype == DT_F64 || expr_f64(e->u.load.index);
    default: return 0;
    }
}

/* What one launch needs, gathered by scan_launch. */
typedef struct {
    const Kernel *k;
    int64_t ext[6];        /* extents of the six indices (0 where unbound) */
    Expr *dext[3];         /* the largest run-time extent bound to each block index, or NULL */
    int64_t cext[3];       /* the largest constant one */
    int active[6];         /* bound loops of each index open around the statement visited */
    int64_t shared;        /* bytes of shared memory */
    int barriers;
    int f64;               /* uses doubles */
} LaunchScan;

/* Does s store into shared buffers only (a cooperative copy)? */
static int stores_only_shared(const Stmt *s)
{
    if (!s)
        return 1;
    switch (s->kind) {
    case S_FOR: return stores_only_shared(s->u.loop.body);
    case S_LET: return stores_only_shared(s->u.let.body);
    case S_IF: return stores_only_shared(s->u.cond.then) && stores_only_shared(s->u.cond.els);
    case S_STORE: return s->u.store.buf->scope == SCOPE_SHARED;
    case S_ALLOC: return stores_only_shared(s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (!stores_only_shared(s->u.seq.items[i]))
                return 0;
        return 1;
    default: return 1;
    }
}

/* a variable that is not a dim decided at run time (ir_expr_find) */
static int not_dim(const Expr *e, const void *ctx)
{
    (void)ctx;
    return e->kind == E_VAR && !e->u.var->is_dim;
}

int lower_launch_guarded(const LowerLaunch *l, int slot, const Expr *extent)
{
    int64_t ext = 0, lo = 0, hi = 0;
    /* (a run-time count of blocks that can reach 0 is launched as one block: guarded) */
    if (slot < 3 && l->dext[slot])
        return !ir_expr_equal(extent, l->dext[slot]) || !ir_const_bounds(extent, NULL, &lo, &hi) || lo < 1;
    return !ir_expr_is_const(extent, &ext) || ext < l->ext[slot];
}

static int scan_launch(LaunchScan *L, const Stmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        L->f64 |= expr_f64(s->u.loop.min) || expr_f64(s->u.loop.extent);
        if (s->u.loop.kind != FOR_BOUND)
            return scan_launch(L, s->u.loop.body);
        int slot = lower_launch_slot(s->u.loop.bind_tag);
        int64_t lo = -1, ext = 0, dlo = 0;
        if (slot < 0)
            return ir_fail("kernel %s: loop %s is bound to '%s', not a GPU index", L->k->name, s->u.loop.var->name,
                           s->u.loop.bind_tag ? s->u.loop.bind_tag : "nothing");
        Expr *dx = s->u.loop.extent;
        int dyn = slot < 3 && !ir_expr_is_const(dx, &ext) && !ir_expr_find(dx, not_dim, NULL) &&
                  ir_const_bounds(dx, NULL, &dlo, &ext);
        if (!ir_expr_is_const(s->u.loop.min, &lo) || lo != 0 || (!dyn && !ir_expr_is_const(dx, &ext)) || ext < 1)
            return ir_fail("kernel %s: loop %s bound to %s needs a constant range starting at 0%s", L->k->name,
                           s->u.loop.var->name, s->u.loop.bind_tag,
                           ir_expr_is_const(dx, &lo) ? "" : " (a run-time extent only where a block index is bound)");
        if (dyn)   /* the grid: the largest of the extents bound to the index */
            L->dext[slot] = L->dext[slot] ? ir_simplify(ir_bin(OP_MAX, L->dext[slot], dx), NULL) : dx;
        else if (slot < 3 && ext > L->cext[slot])
            L->cext[slot] = ext;
        /* the same index again inside: only for a cooperative copy into shared memory, which
         * the block's threads share out (any other nesting would be the diagonal only) */
        if (L->active[slot] && !stores_only_shared(s->u.loop.body))
            return ir_fail("kernel %s: %s is bound twice in one loop nest (loop %s inside another loop bound to it)",
                           L->k->name, s->u.loop.bind_tag, s->u.loop.var->name);
        if (ext > L->ext[slot])
            L->ext[slot] = ext;
        int was = L->active[slot];
        L->active[slot] = 1;
        int rc = scan_launch(L, s->u.loop.body);
        L->active[slot] = was;
        return rc;
    }
    case S_LET:
        L->f64 |= s->u.let.var->dtype == DT_F64 || expr_f64(s->u.let.value);
        return scan_launch(L, s->u.let.body);
    case S_IF:
        L->f64 |= expr_f64(s->u.cond.cond);
        return scan_launch(L, s->u.cond.then) || scan_launch(L, s->u.cond.els);
    case S_STORE:
        L->f64 |= s->u.store.buf->dtype == DT_F64 || expr_f64(s->u.store.index) || expr_f64(s->u.store.value);
        return 0;
    case S_ALLOC:
        L->f64 |= s->u.alloc.buf->dtype == DT_F64;
        if (s->u.alloc.buf->scope == SCOPE_SHARED)
            L->shared += s->u.alloc.buf->size * ir_dtype_bytes(s->u.alloc.buf->dtype);
        return scan_launch(L, s->u.alloc.body);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (scan_launch(L, s->u.seq.items[i]))
                return -1;
        return 0;
    case S_BARRIER: L->barriers++; return 0;
    case S_PREFETCH:
    case S_COMMENT: return 0;
    }
    return 0;
}

/* After scan_launch: every thread of a block must reach each barrier, so none may sit
 * under a branch (a guard of a bound loop shorter than the launch, or any if). */
static int check_barriers(const Kernel *k, const Stmt *s, const LowerLaunch *launch, const char *branch)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case S_FOR: {
        int slot = s->u.loop.kind == FOR_BOUND ? lower_launch_slot(s->u.loop.bind_tag) : -1;
        if (slot >= 0 && lower_launch_guarded(launch, slot, s->u.loop.extent) && !branch)
            branch = s->u.loop.var->name;
        return check_barriers(k, s->u.loop.body, launch, branch);
    }
    case S_LET: return check_barriers(k, s->u.let.body, launch, branch);
    case S_IF:
        return check_barriers(k, s->u.cond.then, launch, branch ? branch : "an if") ||
               check_barriers(k, s->u.cond.els, launch, branch ? branch : "an if");
    case S_ALLOC: return check_barriers(k, s->u.alloc.body, launch, branch);
    case S_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (check_barriers(k, s->u.seq.items[i], launch, branch))
                return -1;
        return 0;
    case S_BARRIER:
        if (branch)
            return ir_fail("kernel %s: a barrier under divergent control flow (inside the guard of %s): not every "
                           "thread of a block would reach it; make the bound loops cover the block exactly",
                           k->name, branch);
        return 0;
    default: return 0;
    }
}

/* Scan one launch's statement into l and check it against the limits. 0 or -1. */
static int plan_one(const Kernel *k, const LowerLaunchLimits *lim, const Stmt *item, LowerLaunch *l)
{
    LaunchScan S = {.k = k};
    if (scan_launch(&S, item))
        return -1;
    if (S.f64 && lim->no_f64)
        return ir_fail("kernel %s: %s has no 64-bit floats (the kernel computes in f64)", k->name, lim->lang);
    l->body = item;
    for (int j = 0; j < 6; j++)
        l->ext[j] = S.ext[j] ? S.ext[j] : 1;
    for (int j = 0; j < 3; j++)   /* (a constant extent beside run-time ones counts too) */
        l->dext[j] = S.dext[j] && S.cext[j] ? ir_simplify(ir_bin(OP_MAX, S.dext[j], ir_idx(S.cext[j])), NULL) : S.dext[j];
    l->shared_bytes = S.shared;
    if (S.barriers && check_barriers(k, item, l, NULL))
        return -1;
    const int64_t *e = l->ext;
    int64_t threads = e[3] * e[4] * e[5];
    if (threads > lim->max_threads)
        return ir_fail("kernel %s: %lld threads per block, above the target's limit of %d (-max-threads)", k->name,
                       (long long)threads, lim->max_threads);
    if (e[0] > INT32_MAX || e[1] > GRID_Y_MAX || e[2] > GRID_Z_MAX || e[5] > BLOCK_Z_MAX)
        return ir_fail("kernel %s: a grid of %lld x %lld x %lld blocks of %lld x %lld x %lld threads is beyond what "
                       "GPUs launch (blocks: x < 2^31, y and z <= 65535; threads: z <= 64)", k->name, (long long)e[0],
                       (long long)e[1], (long long)e[2], (long long)e[3], (long long)e[4], (long long)e[5]);
    if (S.shared > lim->max_shared)
        return ir_fail("kernel %s: %lld bytes of shared memory per block, above the target's limit of %lld "
                       "(-max-shared)", k->name, (long long)S.shared, (long long)lim->max_shared);
    return 0;
}

static void dump_plan(FILE *f, const Kernel *k, const LowerLaunchPlan *plan)
{
    fprintf(f, "kernel %s: %d launch%s\n", k->name, plan->n, plan->n == 1 ? "" : "es");
    for (int i = 0; i < plan->n; i++) {
        const LowerLaunch *l = &plan->items[i];
        fprintf(f, "launch %d: grid %lld x %lld x %lld, block %lld x %lld x %lld, %lld shared bytes\n", i,
                (long long)l->ext[0], (long long)l->ext[1], (long long)l->ext[2], (long long)l->ext[3],
                (long long)l->ext[4], (long long)l->ext[5], (long long)l->shared_bytes);
        for (int j = 0; j < 3; j++)
            if (l->dext[j]) {
                fprintf(f, "  blocks in %c at run time: ", "xyz"[j]);
                ir_print_expr(f, l->dext[j]);
                fprintf(f, " (at most %lld)\n", (long long)l->ext[j]);
            }
        ir_print_stmt(f, l->body, 1);
    }
}

int lower_launch_plan(const Kernel *k, const LowerLaunchLimits *lim, LowerLaunchPlan *plan)
{
    memset(plan, 0, sizeof *plan);
    const Stmt *body = k->body;
    while (body && body->kind == S_ALLOC && body->u.alloc.buf->scope == SCOPE_WORKSPACE) {
        ir_vec_push(&plan->workspace, (void *)body->u.alloc.buf, 1 << 20, "workspace buffers");
        body = body->u.alloc.body;
    }
    const Stmt *const *items = &body;
    int nitems = 1;
    if (body && body->kind == S_SEQ) {
        items = (const Stmt *const *)body->u.seq.items;
        nitems = body->u.seq.n;
    }
    int n = 0;
    for (int i = 0; i < nitems; i++)
        n += items[i] && items[i]->kind != S_COMMENT;
    plan->items = calloc((size_t)(n ? n : 1), sizeof *plan->items);
    if (!plan->items)
        ir_die("out of memory");
    for (int i = 0; i < nitems; i++) {
        if (!items[i] || items[i]->kind == S_COMMENT)
            continue;
        if (plan_one(k, lim, items[i], &plan->items[plan->n]))
            return -1;
        plan->n++;
    }
    FILE *f = ir_pass_dump(launch_pass.name);
    if (f)
        dump_plan(f, k, plan);
    return 0;
}

void lower_launch_free(LowerLaunchPlan *plan)
{
    free(plan->items);     /* (the workspace vector lives in the IR arena) */
    memset(plan, 0, sizeof *plan);
}
