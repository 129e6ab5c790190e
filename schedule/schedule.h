/* schedule.h - how a program is computed: stages, loop relations and the primitives.
 *
 * A schedule has one stage per tensor of the program (placeholders included, so the
 * numbering matches) plus the stages that cache_read/cache_write add. Each primitive
 * checks its preconditions and fails with ir_fail() and a message that names the stage and
 * axes; the frontend prepends the source position.
 */
#ifndef KGEN_SCHEDULE_H
#define KGEN_SCHEDULE_H

#include "../ir/ir.h"

typedef enum { REL_SPLIT, REL_FUSE } RelKind;

/* split: parent = outer * factor + inner (inner extent = factor, outer = ceil(parent/factor))
 * fuse:  fused = outer * extent(inner) + inner */
typedef struct {
    RelKind kind;
    IterVar *parent, *outer, *inner, *fused;
    int64_t factor;
} Relation;

typedef enum {
    ATTACH_ROOT,     /* its own loop nest in the kernel body */
    ATTACH_INLINE,   /* substituted into its readers; no loops, no buffer */
    ATTACH_AT        /* computed inside attach_stage's loop attach_iv, over the region needed */
} AttachKind;

typedef struct Stage Stage;
struct Stage {
    Tensor *t;                    /* the tensor this stage computes (a placeholder has no loops) */
    PtrVec leaf;                  /* IterVar*: current loop order, outermost first */
    PtrVec root;                  /* IterVar*: spatial axes then reduce axes */
    Relation *rels;
    int nrels, caprels;
    AttachKind attach;
    Stage *attach_stage;
    IterVar *attach_iv;
    Scope scope;                  /* where an intermediate lives (default: workspace at root,
                                     local when attached) */
    int align_axis;               /* storage_align: stride of dim align_axis is padded to */
    int64_t align_factor, align_offset;   /* a multiple of factor plus offset; factor 0 = off */
    const char *origin;           /* "cache_write(C)" etc., for the kernel's header comment */
    PtrVec log;                   /* char*: the primitives applied, for the header comment */
};

typedef struct {
    Program *prog;
    PtrVec stages;                /* Stage*, in program order, cache stages placed before readers */
    int64_t arena_align;          /* alignment of a model's arena slices (0: 64 bytes; GPU
                                     targets ask more so that slices can be sub-buffers) */
} Schedule;

Schedule *sch_create(Program *p);
Stage *sch_stage(Schedule *s, Tensor *t);            /* NULL if t has none */
Stage *sch_find(Schedule *s, const char *name);
IterVar *sch_find_axis(Stage *st, const char *name); /* among leaf axes, then root */

/* Primitives: 0 on success, -1 with ir_fail() otherwise. */
int sch_split(Stage *st, IterVar *parent, int64_t factor, IterVar **outer, IterVar **inner);
int sch_tile(Stage *st, IterVar *x, IterVar *y, int64_t fx, int64_t fy,
             IterVar **xo, IterVar **yo, IterVar **xi, IterVar **yi);
int sch_fuse(Stage *st, IterVar *outer, IterVar *inner, IterVar **fused);
int sch_reorder(Stage *st, IterVar **order, int n);
int sch_unroll(Stage *st, IterVar *iv);
int sch_vectorize(Stage *st, IterVar *iv);
int sch_parallel(Stage *st, IterVar *iv);
int sch_bind(Stage *st, IterVar *iv, const char *tag);
int sch_compute_at(Schedule *s, Stage *st, Stage *parent, IterVar *iv);
int sch_compute_inline(Schedule *s, Stage *st);
int sch_compute_root(Stage *st);
/* cache_read: a new stage copies t into scope; the listed readers read the copy. */
Stage *sch_cache_read(Schedule *s, Tensor *t, Scope scope, Stage **readers, int nreaders);
/* cache_write: a new stage computes st's body into scope; st becomes a copy of it. */
Stage *sch_cache_write(Schedule *s, Stage *st, Scope scope);
int sch_storage_align(Stage *st, int axis, int64_t factor, int64_t offset);

int sch_parse_scope(const char *name, Scope *out);
/* default.c: fusion (inline, compute_at of reductions into their epilogues) and simple
 * loop schedules for an imported model. */
int sch_default(Schedule *s);
/* The fusion part of sch_default alone: injective stages inlined into their readers. */
int sch_default_fuse(Schedule *s);
/* The root stage a reduction st can be computed at (its single-reader epilogue), or NULL. */
Stage *sch_reduction_epilogue(Schedule *s, Stage *st);
/* gpu.c: the default GPU schedule: the same fusion, then every root stage's output
 * elements spread over blocks of `threads` threads (blockIdx.x, threadIdx.x), one thread
 * per element, with reductions accumulated in a register at that thread. */
int sch_default_gpu(Schedule *s, int threads);
void sch_print(FILE *f, Schedule *s);

/* Largest unroll and vector extents accepted (guards against code explosion). */
#define SCH_MAX_UNROLL 64
#define SCH_MAX_VECTOR 64

/* ---------------------------------------------------------------- lowering (ir/lower.c) */

/* Lower a scheduled program into one kernel. Returns NULL with ir_fail() on a schedule
 * that cannot be lowered. */
Kernel *ir_lower(Schedule *s, const char *name);

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
} Model;

Model *ir_lower_model(Schedule *s, const char *name);

#endif
