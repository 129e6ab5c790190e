/* passes.h - inside lower/: the state the lowering files share, the loop passes and the
 * model passes (lower.h is the outside's view).
 *
 * A kernel's nest (lower.c) goes through the loop passes of passes.c in order
 * (lower_finish); a model (model.c) through its model passes, which share a LowerModel.
 */
#ifndef KGEN_LOWER_PASSES_H
#define KGEN_LOWER_PASSES_H

#include "lower.h"

#define LOWER_ALIGN_BYTES 64   /* workspace and (by default) arena slices are aligned so */

/* ---------------------------------------------------------------- lower.c */

typedef struct {
    Buffer *buf;                  /* NULL for inlined stages */
    Expr *rmin[KG_MAX_DIMS];      /* region origin of the buffer (NULL: 0) */
} StageInfo;

typedef struct {
    Schedule *s;
    Kernel *k;
    StageInfo *info;              /* indexed like s->stages */
    int ntmp;                     /* counter for temporary names */
    int failed;
    PtrVec *group;                /* Tensor*: what the stage being lowered fuses, or NULL */
} Lower;

/* t's stage number (dies when the numbering is out of sync), and its stage */
int lower_stage_idx(const Lower *L, const Tensor *t);
Stage *lower_stage_of(const Lower *L, const Tensor *t);
/* The deepest of st's leaf loops whose variable e uses (-1: none). */
int lower_leaf_of_var(const Stage *st, const Expr *e);
/* Checks of the schedule (lower_check_schedule), then parameter buffers for inputs,
 * constants and outputs (in that order), and buffers for the root intermediates (pushed
 * on roots, not placed yet). 0, or -1 with ir_fail(). */
int lower_setup(Lower *L, Schedule *s, PtrVec *roots);
/* The loop nest of one root stage, before the loop passes (NULL with L->failed set). */
Stmt *lower_root(Lower *L, Stage *st);

/* ---------------------------------------------------------------- check.c */

/* The schedule as a whole can be lowered: attachments, inlined depth, 32-bit indexing. */
int lower_check_schedule(Lower *L);
/* Loop annotations hold: vectorized loops have constant extents, parallel loops do not
 * nest in each other nor sit in vector loops. 0, or -1 with ir_fail(). */
int lower_check_loops(Stmt **s);

/* ---------------------------------------------------------------- loop passes */

/* Run the loop passes over *b, the nest of kernel `kernel` (for --dump), in order. 0, or
 * -1 with ir_fail() when a loop annotation cannot hold. */
int lower_finish(Stmt **b, const char *kernel);

Stmt *lower_unroll(Stmt *s);       /* unroll.c */
Stmt *lower_runtime_tails(Stmt *s);   /* tails.c */
Stmt *lower_runtime_divisions(Stmt *s);   /* divs.c */
Stmt *lower_peel_tails(Stmt *s);   /* peel.c */
Stmt *lower_peel_heads(Stmt *s);
Stmt *lower_unswitch(Stmt *s);     /* unswitch.c */
Stmt *lower_reduce_interchange(Stmt *s);   /* interchange.c */
Stmt *lower_reduce_lanes(Stmt *s);         /* lanes.c */
/* The loop's stores (its body: one, or a sequence of them); 0 if the body holds anything
 * else, or a store that reads its own buffer (unswitch.c). */
int lower_body_stores(Stmt *loop, Stmt ***items, int *n);
/* Does e load buffer b anywhere other than at index `at` (NULL: anywhere at all)? (arena.c) */
int lower_loads_other(const Expr *e, const Buffer *b, const Expr *at);

/* ---------------------------------------------------------------- model passes */

/* A model being built: what the model passes read and fill. */
typedef struct {
    Lower L;                      /* L.k collects the model's parameters */
    Schedule *s;
    const char *name;
    Model *m;
    PtrVec roots;                 /* Buffer*: the root intermediates (become m->arena) */
    PtrVec kloop;                 /* per kernel: the run-time loop (IrLoop) it runs in, or NULL */
    /* per arena buffer (arena.c): the kernels of its lifetime [first, last], whether it is
     * a run-time loop's state, and the buffer whose place it takes (-1: its own) */
    int *first, *last, *alias;
    unsigned char *state;
} LowerModel;

int lower_place_loops(LowerModel *b);       /* loops.c: "run-time-loops" */
int lower_inplace(LowerModel *b);           /* arena.c: "in-place" */
int lower_plan_arena(LowerModel *b);        /* arena.c: "arena" */
void lower_dump_inplace(FILE *f, const LowerModel *b);
void lower_dump_arena(FILE *f, const LowerModel *b);

/* model.c: the buffers s reads or writes, each once, appended to out; the model's buffer
 * named `name` (NULL: none); k's parameters sorted in model order */
void lower_stmt_buffers(const Stmt *s, PtrVec *out);
const Buffer *lower_model_buffer(const Model *m, const char *name);
void lower_sort_params(const Model *m, Kernel *k);

#endif
