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
    Tensor *pf_tensor;            /* prefetch: the tensor read ahead (NULL: none), the */
    IterVar *pf_ahead, *pf_rows, *pf_blocks;   /* reduce loop, row and block axes */
    const char *origin;           /* "cache_write(C)" etc., for the kernel's header comment */
    PtrVec log;                   /* char*: the primitives applied, for the header comment */
};

typedef struct {
    Program *prog;
    PtrVec stages;                /* Stage*, in program order, cache stages placed before readers */
    int64_t arena_align;          /* alignment of a model's arena slices (0: 64 bytes; GPU
                                     targets ask more so that slices can be sub-buffers) */
    int simd_lanes;               /* f32 lanes of the target's vectors when it names a SIMD ISA
                                     (--target c -mattr=..., wasm): sch_tensorize_auto's; 0: none */
    int simd_regs;                /* vector registers for a register tile (wasm: 16); 0: by
                                     simd_lanes (sch_default_tiled) */
    const int64_t *plan;          /* the run-time dims' values (prog->dims order) the register
                                     tiles are chosen for; NULL: their bounds */
    int threads;                  /* the code runs on OpenMP's threads (C for CPUs): a wide
                                     matrix-vector product is divided into parts (default.c),
                                     neighbouring kernels without parallel loops run side by
                                     side (the model pass "beside", lower/model.c) */
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
/* tensorize: loop iv of st becomes calls of the micro-kernel `name` (fma_bcast, or
 * fma_bcast_f32xW for one width W of 4, 8, 16, 32, 64), checked when lowered
 * (ir/tensorize.c); `where` ("file.kg:3:5" or NULL) goes into that check's messages. */
int sch_tensorize(Stage *st, IterVar *iv, const char *name, const char *where);
/* With s->simd_lanes set: every vectorized loop of an f32 sum reduction is tensorized as
 * fma_bcast where it matches (a soft request: where not, it stays vectorized). */
int sch_tensorize_auto(Schedule *s);
int sch_compute_at(Schedule *s, Stage *st, Stage *parent, IterVar *iv);
int sch_compute_inline(Schedule *s, Stage *st);
int sch_compute_root(Stage *st);
/* cache_read: a new stage copies t into scope; the listed readers read the copy. */
Stage *sch_cache_read(Schedule *s, Tensor *t, Scope scope, Stage **readers, int nreaders);
/* cache_write: a new stage computes st's body into scope; st becomes a copy of it. */
Stage *sch_cache_write(Schedule *s, Stage *st, Scope scope);
/* Constant t, which st reads only as t[..., k, j] with j st's innermost output axis, stored
 * in panels of V columns: tp[..., j / V, k, j % V], of shape [..., ceil(N / V), K, V] (the
 * columns past N zero), which st reads instead; a register tile of V columns then reads
 * one contiguous panel rather than V columns of every row, N apart. One panel tensor per
 * (t, V), shared by the stages packed so. NULL when st reads t otherwise (st unchanged). */
Tensor *sch_const_panels(Schedule *s, Stage *st, Tensor *t, int64_t V);
int sch_storage_align(Stage *st, int axis, int64_t factor, int64_t offset);
/* prefetch: hide the memory latency of a tensor read in chunks (a conv's weights, one
 * input-channel block per iteration of reduce loop `ahead`). In every step of st's
 * innermost reduce loop, fetch the cache line of t that this step reads in the next
 * iteration of `ahead` (the last iteration fetches its own). The loops inside the innermost
 * reduce loop (a register tile) take their first value, except `blocks` (may be NULL),
 * which takes the value of loop `rows` modulo its extent: while the tile moves over the
 * rows, row r fetches block r mod B, spreading the fetches over the chunk's compute. `ahead`
 * must stay outside the innermost reduce loop, `rows` outside it too, `blocks` inside. */
int sch_prefetch(Stage *st, Tensor *t, IterVar *ahead, IterVar *rows, IterVar *blocks);

int sch_parse_scope(const char *name, Scope *out);
/* default.c: fusion (inline, compute_at of reductions into their epilogues) and simple
 * loop schedules for an imported model. */
int sch_default(Schedule *s);
/* The register tile each reduction of sch_default gets: up to `rows` rows of one output
 * axis (unrolled if `unroll`; 1: no row tile) by up to `cols` columns of the innermost
 * axis (vectorized if `vectorize`), each the largest divisor of the extent between half
 * and all of the request; reduce loops outside the rows (`k_outer`) or inside them; and
 * up to `blocks` blocks of an axis each broadcast value serves (an NCHWc conv's output
 * channel blocks; 1: none), unrolled with the rows. */
typedef struct {
    int rows, cols, vectorize, unroll, k_outer, blocks;
} SchTile;
extern const SchTile sch_tile_default;
/* The default schedule's generation, part of an ONNX model's tuning-log key: bumped when
 * the code a tile choice produces changes (records measured against an older default
 * would rank stale code). 2: two-block tiles, unrolled epilogues; 3: weight streaming,
 * matrix-vector products over whole rows (kgen 2026-11-29). */
#define SCH_DEFAULT_VERSION 3   /* 8 x 16 x 2 blocks, vectorized, unrolled, k outer */
int sch_default_tiled(Schedule *s, const SchTile *tile);
/* Part of sch_default_tiled: the outer loop of each root compute with enough work (at
 * least SCH_PAR_MIN_ELEMS output elements) marked parallel (after fusing leading loops to
 * at least 16 iterations). */
#define SCH_PAR_MIN_ELEMS 4096
int sch_default_parallel(Schedule *s);
/* Where reduction st is computed: its epilogue (returned, *P = st), else a local copy made
 * with cache_write (*P, inserted before st; st returned as the stage it is computed at).
 * NULL with ir_fail() if cache_write fails. */
Stage *sch_reduction_at(Schedule *s, Stage *st, Stage **P);
/* Reorder st's loops so that a then b are the innermost, the rest keeping its order. */
int sch_reorder_innermost(Stage *st, IterVar *c, IterVar *a, IterVar *b);
/* The fusion part of sch_default alone: injective stages inlined into their readers. */
int sch_default_fuse(Schedule *s);
/* The root stage a reduction st can be computed at (its single-reader epilogue), or NULL. */
Stage *sch_reduction_epilogue(Schedule *s, Stage *st);
/* gpu.c: the default GPU schedule: the same fusion, then every root stage's output
 * elements spread over blocks of `threads` threads (blockIdx.x, threadIdx.x), one thread
 * per element, with reductions accumulated in a register at that thread. */
int sch_default_gpu(Schedule *s, int threads);
void sch_print(FILE *f, Schedule *s);

/* ---------------------------------------------------------------- tune.c */

/* The auto-tuner's search space: knobs with the integer values each may take. */
#define SCH_TUNE_MAX_KNOBS 16
#define SCH_TUNE_MAX_VALUES 64
typedef struct {
    const char *name;
    int n;
    int64_t values[SCH_TUNE_MAX_VALUES];
} SchKnob;
typedef struct {
    int n;
    SchKnob knobs[SCH_TUNE_MAX_KNOBS];
} SchSpace;
typedef struct {
    int64_t v[SCH_TUNE_MAX_KNOBS];   /* a value per knob, in the space's order */
} SchConfig;
typedef struct {
    SchConfig cfg;
    double ms;                        /* its score, lower is faster: the median time over the
                                         untuned build's (log's rel=); < 0: failed */
} SchTrial;
typedef struct {
    const SchSpace *space;
    SchTrial *trials;                 /* every trial so far, the log's included */
    int n, cap;
    uint64_t rng;
} SchTuner;

void sch_tune_init(SchTuner *t, const SchSpace *sp, uint64_t seed);
void sch_tune_free(SchTuner *t);
void sch_tune_record(SchTuner *t, const SchConfig *c, double ms);
int sch_tune_seen(const SchTuner *t, const SchConfig *c);
/* The next point to try: a random one first, then mutations of the fastest. 0, or -1
 * when every point of the space has been tried. */
int sch_tune_next(SchTuner *t, SchConfig *out);
/* The fastest trial (NULL: none succeeded); a later one takes the lead only when 2% faster. */
const SchTrial *sch_tune_best(const SchTuner *t);
/* "NAME=VALUE,..." in knob order, and back (-1: a knob missing or a value not in the space) */
void sch_tune_format(const SchSpace *sp, const SchConfig *c, char *buf, size_t n);
int sch_tune_parse(const SchSpace *sp, const char *config, SchConfig *out);
int sch_tune_config_value(const char *config, const char *name, int64_t *out);   /* 0 or -1 */
/* The log: "WORKLOAD\tCONFIG\tms=MEDIAN rel=RATIO built=CC CFLAGS" or "...\terror=WHAT", one
 * line per trial; built= (the compiler and flags the trial was timed with) runs to the end
 * of the line, and records written before it existed have none. */
typedef void (*SchTuneVisit)(void *ctx, const char *config, double score);   /* < 0: failed */
int sch_tune_log_scan(const char *path, const char *workload, SchTuneVisit visit, void *ctx); /* records seen */
int sch_tune_log_append(const char *path, const char *workload, const char *config, double ms, double rel,
                        const char *built, const char *error);   /* rel < 0: none; built: NULL or "" */
/* The fastest record of workload (as sch_tune_best): 1 with config and its score filled
 * (and built, n bytes, with what it was built with, "" when the record does not say), 0
 * when there is none. */
int sch_tune_log_best(const char *path, const char *workload, char *config, size_t n, double *score, char *built);

/* Largest unroll and vector extents accepted (the loop IR's limits, ir/ir.h). */
#define SCH_MAX_UNROLL IR_MAX_UNROLL
#define SCH_MAX_VECTOR IR_MAX_VECTOR

#endif
