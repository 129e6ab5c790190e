/* lower.h - lowering: a scheduled tensor program becomes loop IR, one kernel (ir_lower) or
 * a model of kernels (ir_lower_model), through named passes.
 *
 * The folder, one step per file:
 *   lower.c    each stage's loop nest (split/fuse relations, guards, compute_at regions)
 *   check.c    checks of the schedule before lowering and of the loops after
 *   passes.c   the loop passes every kernel goes through, a table run in order
 *   unroll.c   unrolled loops replicated
 *   tails.c    loops chunked over a run-time extent: whole chunks unguarded, then the rest
 *   peel.c     tails and heads of chunked vector loops peeled
 *   unswitch.c loop-invariant selects taken out of vector loops
 *   model.c    a model's kernels, one per root stage, and the model passes, a table run in order
 *   loops.c    the run-time loops of a model function (start and next kernels)
 *   arena.c    liveness, in-place outputs and the arena plan
 * `kgen --list-passes` prints lower_loop_passes and lower_model_passes; `--dump=NAME`
 * prints a kernel's loops after loop pass NAME, or a model's plan after model pass NAME
 * (ir/pass.h).
 */
#ifndef KGEN_LOWER_H
#define KGEN_LOWER_H

#include "../ir/pass.h"
#include "../schedule/schedule.h"

/* Lower a scheduled program into one kernel. Returns NULL with ir_fail() on a schedule
 * that cannot be lowered. */
Kernel *ir_lower(Schedule *s, const char *name);

/* A run-time loop of the model function (IrLoop): kernel `begin` sets its states, then
 * kernels [begin + 1, end) run while *iter < the trip count (element 0 of trip, or
 * trip_count; neither: no bound) and *cond is nonzero; the last of them copies the body's
 * next values into the states. */
typedef struct {
    const char *name;
    int begin, end;
    const Buffer *iter, *cond;   /* arena */
    const Buffer *trip;          /* int64 (a model buffer), or NULL */
    int64_t trip_count;          /* trip == NULL: the bound, or -1: none */
} ModelLoop;

/* A model: one kernel per root stage (with what is inlined into it or computed at its
 * loops), run in order by the model function. Intermediates between kernels share one
 * arena, placed by liveness. */
typedef struct {
    const char *name;
    PtrVec kernels;              /* Kernel* (internal), in execution order */
    PtrVec params;               /* Buffer*: graph inputs, then outputs */
    PtrVec constants;            /* Buffer*: weights (->constant) */
    PtrVec arena;                /* Buffer*: intermediates, ws_offset in the arena */
    int64_t arena_bytes;         /* the plan */
    int64_t arena_lower_bound;   /* most bytes live at once, counting in-place pairs as one */
    int ninplace;                /* intermediates written over an input that dies there */
    int64_t arena_align;         /* every slice offset is a multiple of this */
    ModelLoop *loops;            /* in kernel order, none nested */
    int nloops;
    /* per kernel, or NULL: beside[k] says kernel k and kernel k + 1 run side by side, each on
     * a thread of its own (the "beside" pass; the C model function's KGEN_SIDE_BY_SIDE) */
    unsigned char *beside;
    const Program *prog;         /* its dims decided at run time (prog->dims) and their checks */
    /* for each dim of prog computed from values (IrDim.count), NULL / -1 for the others:
     * the buffer of its count and the kernel that writes it, after which the model function
     * reads it (the "value-dims" pass) */
    const Buffer **dim_count;
    int *dim_after;
    /* with intermediates of run-time size (lower/arena.c): arena_at[i] is where arena item i
     * lies in a run, an expression of the dims and of at_vars, which the model function sets
     * in order (at_vars[k] = at_values[k], each reading the dims and those before it) before
     * its first kernel; arena_need is the bytes a run needs. NULL / 0: ws_offset and
     * arena_bytes for every run. */
    Expr **arena_at;
    Var **at_vars;
    Expr **at_values;
    int nat;
    Expr *arena_need;
} Model;

Model *ir_lower_model(Schedule *s, const char *name);

/* The bytes of m's arena a run needs, an expression of the run-time dims and m->at_vars
 * (m->arena_bytes without run-time dims; never more). */
Expr *lower_arena_need(const Model *m);
/* Where intermediate b lies in a run's arena: an expression of the dims and m->at_vars
 * (ws_offset, a constant, for one of fixed place). */
Expr *lower_arena_at(const Model *m, const Buffer *b);
/* e (an expression of run-time dims and m->at_vars) at the given dims (in the program's
 * order). */
int64_t lower_dims_eval(const Model *m, const Expr *e, const int64_t *dims);

/* k->dims: the run-time dims of p that k's body (or a run-time extent of its parameters)
 * reads, in p's order. */
void lower_kernel_dims(Kernel *k, const Program *p);

/* Does s hold a loop that threads share (FOR_PARALLEL), at any depth? */
int lower_has_parallel_loop(const Stmt *s);

/* The loop passes every kernel goes through after its nest is built, in order, and the
 * model passes of ir_lower_model, in order (n set to the count). */
const PassInfo *lower_loop_passes(int *n);
const PassInfo *lower_model_passes(int *n);

#endif
