/* driver.c - the one pipeline behind the command line and libkgen:
 *   import (a frontend: the .kg parser, or the ONNX reader and importer, told apart by the
 *   file's content) -> the graph passes -> schedule -> lower (and the loop passes inside
 *   it) -> emit,
 * with --dump=NAME after any of them and --list-passes printing them in order. The
 * frontends hand over a GenUnit (a Program and their facts); the steps after differ only
 * where a .kg file brings its own schedule and lowers to one kernel, an ONNX model to a
 * model of kernels. Everything is built in one arena that goes at once. */
#include "gen.h"
#include "../onnx/onnx.h"
#include "../lower/launch.h"
#include "../emit/cfamily.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the pipeline */

static const PassInfo step_import = {"import", "an ONNX graph (folding constants and BatchNorms as it goes) or a "
                                               ".kg file to tensor IR"};
/* the graph passes, in order; they run on ONNX programs (a .kg file schedules its own) */
static const GraphPass *const graph_passes[] = {&ir_pass_prune, &ir_pass_layout, &ir_pass_winograd};
#define NGRAPH_PASSES (sizeof graph_passes / sizeof graph_passes[0])
static const PassInfo step_schedule = {"schedule", "the schedule: a .kg file's section for the target, else "
                                                   "kgen's default (fusion, register tiles, vectorize, parallel)"};
static const PassInfo step_emit = {"emit", "print the target's source files (--dump=emit: their text)"};

#define STEP_LOWER "lower"   /* its dump: the driver's, of the kernels lowering made */

/* The lowering and what it runs, in order: the loop passes over each kernel's statements
 * (lower/passes.c), then, for a model, the model passes over its kernels and buffers
 * (lower/model.c), and on a GPU target the launch split its printers start from
 * (lower/launch.c). Their dumps are printed where they run. */
static const PassInfo step_lower = {
    STEP_LOWER, "the schedule to loop IR, one nest per root stage (--dump=lower: each kernel's loop IR at the end)"};

static int lowering_list(const PassInfo **list, int max)
{
    int n = 0, nloop, nmodel;
    const PassInfo *loop = lower_loop_passes(&nloop), *model = lower_model_passes(&nmodel);
    list[n++] = &step_lower;
    for (int i = 0; i < nloop && n < max; i++)
        list[n++] = &loop[i];
    for (int i = 0; i < nmodel && n < max; i++)
        list[n++] = &model[i];
    if (n < max)
        list[n++] = lower_launch_pass();
    return n;
}

#define MAX_PIPELINE 64

/* The whole pipeline, in order, into list; returns the count. */
static int pipeline(const PassInfo **list)
{
    int n = 0;
    list[n++] = &step_import;
    for (size_t i = 0; i < NGRAPH_PASSES; i++)
        list[n++] = &graph_passes[i]->info;
    list[n++] = &step_schedule;
    n += lowering_list(list + n, MAX_PIPELINE - 1 - n);
    list[n++] = &step_emit;
    return n;
}

/* --dump=tir: the tensor IR after the graph passes and the schedule (which may add
 * stages: cache_write), as --dump=tir always printed it */
#define DUMP_TIR "tir"

void gen_list_passes(FILE *f)
{
    const PassInfo *list[MAX_PIPELINE];
    int n = pipeline(list);
    for (int i = 0; i < n; i++)
        fprintf(f, "%-16s %s\n", list[i]->name, list[i]->what);
}

int gen_pass_known(const char *name)
{
    const PassInfo *list[MAX_PIPELINE];
    int n = pipeline(list);
    char known[1024] = "";   /* no arena yet: the command line is being read */
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(list[i]->name, name))
            return 1;
        if (len < sizeof known)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s, ", list[i]->name);
    }
    if (!strcmp(name, DUMP_TIR))
        return 1;
    ir_fail("unknown pass '%s' for --dump (use %sor %s; kgen --list-passes says what each does)", name, known,
            DUMP_TIR);
    return 0;
}

/* The program after the step or pass `name`, where --dump asks for it */
static void dump_program(const char *name, Program *p)
{
    FILE *f = ir_pass_dump(name);
    if (f)
        ir_print_program(f, p);
}

int gen_graph_passes(Program *p, const PassCtx *ctx)
{
    for (size_t i = 0; i < NGRAPH_PASSES; i++) {
        if (graph_passes[i]->run(p, ctx))
            return -1;
        dump_program(graph_passes[i]->info.name, p);
    }
    return 0;
}

/* ---------------------------------------------------------------- names, frontends */

const char *gen_name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn(base, ".");
    char *name = ir_alloc(n + 3);
    size_t k = 0;
    if (n == 0 || isdigit((unsigned char)base[0]))
        name[k++] = 'k', name[k++] = '_';
    for (size_t i = 0; i < n; i++)
        name[k++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    name[k] = 0;
    return name;
}

/* Is s a C identifier? */
static int valid_name(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* GenOptions.weights_in_file travels into EmModel as it is */
_Static_assert(EM_WEIGHTS_AUTO == 0 && EM_WEIGHTS_FILE == 1 && EM_WEIGHTS_EMBED == 2 && EM_WEIGHTS_INCBIN == 3,
               "--weights modes: gen/main.c's table follows EM_WEIGHTS_*");

/* Does the file read as an ONNX ModelProto at its top level? Every field must be
 * well-formed protobuf, and those numbered below 16 (one-byte tags: ASCII bytes, so text
 * lands there) ModelProto fields of their wire type, unless the file holds control bytes
 * (then the loader judges the fields). Text rarely gets past its first byte: '#', 'k',
 * 'o', 's' are groups or invalid wire types, 'i' is a fixed64 field 13 that ModelProto does
 * not have. Returns 1, or 0 with the reason in why (no file name, "... at byte N"). */
static int is_onnx_model(const char *text, size_t len, int binary, char *why, size_t whylen)
{
    /* ModelProto's fields 1 to 15 and their wire types; -1: none */
    static const char *const name[16] = {NULL, "ir_version", "producer_name", "producer_version", "domain",
                                         "model_version", "doc_string", "graph", "opset_import", [14] = "metadata_props"};
    static const int8_t wire[16] = {-1, ONNX_PB_VARINT, ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_VARINT,
                                    ONNX_PB_LEN, ONNX_PB_LEN, ONNX_PB_LEN, -1, -1, -1, -1, -1, ONNX_PB_LEN, -1};
    char err[512];
    OnnxPb p = {(const uint8_t *)text, 0, len, 0, NULL, "", err, sizeof err};
    OnnxPbField f;
    int r, nfields = 0;
    while ((r = onnx_pb_next(&p, &f)) == 1) {
        if (f.num < 16 && wire[f.num] != f.wire && !binary) {
            if (wire[f.num] < 0)
                snprintf(why, whylen, "a ModelProto has no field %u (%s) at byte %zu", f.num,
                         onnx_pb_wire_name(f.wire), f.at);
            else
                snprintf(why, whylen, "field %u (%s) is %s, not %s, at byte %zu", f.num, name[f.num],
                         onnx_pb_wire_name(wire[f.num]), onnx_pb_wire_name(f.wire), f.at);
            return 0;
        }
        nfields++;
    }
    if (r < 0) {
        snprintf(why, whylen, "%s", err + 2);   /* after the empty file name's ": " */
        return 0;
    }
    if (!nfields) {
        snprintf(why, whylen, "the file is empty");
        return 0;
    }
    return 1;
}

/* The .kg frontend: parse the file (its schedule section for the target applied) into
 * u->kg; the kernel name from `kernel NAME` unless --name gave one. */
static int kg_front(const GenOptions *opt, const char *text, GenUnit *u)
{
    Define defs[GEN_MAX_DEFINES];
    memcpy(defs, opt->defines, sizeof defs[0] * (size_t)opt->ndefines);
    if (gen_parse_kg(opt->input, text, defs, opt->ndefines, opt->no_schedule ? "none" : opt->target, &u->kg))
        return -1;
    u->prog = u->kg.prog;
    if (!opt->name && u->kg.kernel_name)
        u->name = u->kg.kernel_name;
    if (!valid_name(u->name))
        return ir_fail("kernel name '%s' is not a C identifier", u->name);
    return 0;
}

/* Read the input and run the frontend its content calls for. -1 with ir_fail(). */
static int front(const GenOptions *opt, GenUnit *u, char **text)
{
    size_t len;
    if (gen_read_file(opt->input, opt->max_file_bytes, text, &len))
        return -1;
    /* ONNX or .kg by the content; a name ending in .onnx never makes a .kg program */
    size_t n = strlen(opt->input), nul = strlen(*text);
    int named_onnx = n > 5 && !strcmp(opt->input + n - 5, ".onnx"), binary = 0;
    for (size_t i = 0; i < len && !binary; i++)   /* control bytes but whitespace: not text */
        binary = ((unsigned char)(*text)[i] < 0x20 && !strchr("\t\n\v\f\r", (*text)[i])) || (*text)[i] == 0x7f;
    char why[640];
    if (is_onnx_model(*text, len, binary, why, sizeof why)) {
        free(*text);   /* the reader loads the model itself, within the limits */
        *text = NULL;
        return gen_onnx_front(opt, u);
    }
    if (nul != len)
        return ir_fail("%s: not an ONNX model (%s), nor a .kg program (a NUL byte at byte %zu)", opt->input, why, nul);
    if (named_onnx)
        return ir_fail("%s: not an ONNX model (%s)", opt->input, why);
    return kg_front(opt, *text, u);
}

/* ---------------------------------------------------------------- schedule, lower, emit */

/* A .kg file's schedule: its section for the target (applied by the parser); with -mattr
 * or -mcpu the vector loops of sum reductions become SIMD micro-kernel calls where they
 * match (a .kg's own tensorize lines apply on any target); a GPU target without a section
 * gets kgen's default GPU schedule, one thread per output element. */
static Schedule *kg_schedule(const GenOptions *opt, GenUnit *u)
{
    KgModule *mod = &u->kg;
    mod->sched->simd_lanes = opt->no_schedule ? 0 : target_simd_lanes(&opt->tgt);
    if (sch_tensorize_auto(mod->sched)) {
        ir_fail("%s: tensorize: %s", opt->input, ir_errmsg());
        return NULL;
    }
    if (!mod->scheduled && !opt->no_schedule && target_is_gpu(&opt->tgt)) {
        if (sch_default_gpu(mod->sched, target_block_threads(&opt->tgt))) {
            ir_fail("%s: default GPU schedule: %s", opt->input, ir_errmsg());
            return NULL;
        }
        mod->default_gpu = 1;
    }
    return mod->sched;
}

/* An ONNX model's schedule: kgen's default, for the GPU (a GPU target, --schedule=gpu) or
 * the CPU (register tiles, tensorized for the target's SIMD; --tuning-log's tile) */
static Schedule *onnx_schedule(const GenOptions *opt, GenUnit *u, const int64_t *plan)
{
    int gpu = target_is_gpu(&opt->tgt) || opt->gpu_schedule;
    Schedule *s = sch_create(u->prog);
    s->plan = plan;
    if (!gpu) {
        s->simd_lanes = target_simd_lanes(&opt->tgt);   /* -mattr, wasm: sch_default tensorizes */
        s->simd_regs = target_simd_regs(&opt->tgt);     /* wasm: tiles for 16 registers */
        s->threads = opt->tgt.kind == TARGET_C;          /* OpenMP's */
    }
    s->arena_align = target_arena_align(&opt->tgt, opt->gpu_schedule);
    if (gpu ? sch_default_gpu(s, target_block_threads(&opt->tgt))
            : sch_default_tiled(s, opt->tile ? opt->tile : &sch_tile_default)) {
        ir_fail("%s: default schedule: %s", opt->input, ir_errmsg());
        return NULL;
    }
    return s;
}

/* ---------------------------------------------------------------- versions by extent */

/* Register tiles chosen for a run-time extent's bound leave few multiply-add chains at
 * small extents (a late layer's 5 columns at W = 160 are 1 at W = 32). So with ranges, each
 * model step is also scheduled for smaller extents: the dims at NPLANS points from the
 * lower bounds up, geometrically (32..160: 32, 48, 72, 107; the bound is the step itself). A step whose version differs from
 * the next larger one's keeps it, run where the extents it writes are at most the point's:
 * a step whose extents are small at the bound, any version; any step, its first version
 * with too few elements for threads at the point (schedule/default.c, plan_numel). */
#define NPLANS 4

/* the plan's value of dim d at point j: lo * r^j, r = (hi / lo)^(1 / NPLANS) */
static int64_t plan_value(const IrDim *d, int j)
{
    if (d->count || d->hi <= d->lo)
        return d->hi;
    double lo = d->lo > 0 ? (double)d->lo : 1, v = lo * pow((double)d->hi / lo, (double)j / NPLANS);
    int64_t p = (int64_t)ceil(v - 1e-9);
    return p < d->lo ? d->lo : p > d->hi ? d->hi : p;
}

static int same_params(const Kernel *a, const Kernel *b)
{
    if (a->params.n != b->params.n || a->dims.n != b->dims.n || a->nguards != b->nguards)
        return 0;
    for (int i = 0; i < a->dims.n; i++)
        if (a->dims.items[i] != b->dims.items[i])
            return 0;
    for (int i = 0; i < a->params.n; i++) {
        const Buffer *x = a->params.items[i], *y = b->params.items[i];
        Expr *const *ex = ir_buffer_run_ext(x), *const *ey = ir_buffer_run_ext(y);
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim || x->size != y->size ||
            x->scope != y->scope || !ex != !ey ||
            memcmp(x->shape, y->shape, sizeof x->shape) || memcmp(x->strides, y->strides, sizeof x->strides))
            return 0;
    }
    return 1;
}

/* k printed as C under the name `name` */
static char *kernel_text(const Kernel *k, const char *name)
{
    Kernel c = *k;
    c.name = name;
    StrBuf t = {0};
    em_print_kernel(&t, &c, &em_dialect_c);
    char *s = ir_strdup(t.data ? t.data : "");
    sb_free(&t);
    return s;
}

/* where version v, planned at dims `plan`, runs: each run-time extent of what it writes at
 * most its value there. NULL: it writes no run-time extent, or one whose bound is more than
 * `small` (a layer of many tiles, where only the last one is short: no version). With few,
 * also *few: whether what it writes at run time holds at most n_few elements per output. */
static Expr *variant_when(const Kernel *v, const Program *p, const int64_t *plan, int64_t small, Expr **few,
                          int64_t n_few)
{
    Expr *when = NULL;
    if (few)
        *few = NULL;
    for (int i = 0; i < v->params.n; i++) {
        const Buffer *b = v->params.items[i];
        Expr *const *ext = ir_buffer_run_ext(b);
        if (!ext || !ir_stmt_stores(v->body, b))
            continue;
        Expr *num = NULL;
        for (int d = 0; d < b->ndim; d++) {
            int64_t at;
            Expr *e = ext[d] ? ext[d] : ir_int(b->shape[d], DT_INDEX);
            num = num ? ir_bin(OP_MUL, num, e) : e;
            if (ext[d] && ext[d]->kind != E_INT && b->shape[d] > small)
                return NULL;
            if (!ext[d] || ext[d]->kind == E_INT || !ir_dims_fold(p, plan, ext[d], &at) || at >= b->shape[d])
                continue;   /* fixed, or at its bound at the plan: no condition */
            Expr *le = ir_bin(OP_LE, ext[d], ir_int(at, ext[d]->dtype));
            when = when ? ir_bin(OP_AND, when, le) : le;
        }
        if (few && num) {
            Expr *le = ir_bin(OP_LE, num, ir_int(n_few, num->dtype));
            *few = *few ? ir_bin(OP_AND, *few, le) : le;
        }
    }
    return when;
}

/* What a schedule changes in the program itself, kept and put back: each version is
 * scheduled from the unscheduled program. The annotations on the program's own axes
 * (vectorize, bind, tensorize), its list of tensors (a cache is added to it) and their
 * bodies (cache_write makes a tensor a copy of its cache, cache_read and panels retarget
 * its readers): scheduled again, a conv's cache would get a cache of its own, its kernel
 * another name, and no version. */
typedef struct {
    IterVar *iv;
    Annotation ann;
    const char *bind_tag;
    const Tensorize *tensorize;
} AxisMarks;

typedef struct {
    Tensor *t;
    Expr *body, *init, *update;
} TensorBodies;

typedef struct {
    AxisMarks *items;
    int n, cap;
    Program *prog;
    TensorBodies *bodies;   /* prog's tensors, in order */
    int nbodies;
} ProgramState;

static void keep_axis(ProgramState *st, IterVar *iv)
{
    if (st->n == st->cap)
        st->items = ir_grow_arena(st->items, st->n, &st->cap, sizeof *st->items, 64);
    st->items[st->n++] = (AxisMarks){iv, iv->ann, iv->bind_tag, iv->tensorize};
}

static Expr *keep_reduce_axes(Expr *e, void *st)
{
    ir_expr_map(e, keep_reduce_axes, st);   /* a walk */
    if (e->kind == E_REDUCE)
        for (int i = 0; i < e->u.reduce.naxes; i++)
            keep_axis(st, e->u.reduce.axes[i]);
    return e;
}

static ProgramState program_kept(Program *p)
{
    ProgramState st = {0};
    st.prog = p;
    st.bodies = ir_alloc(sizeof *st.bodies * (size_t)(p->tensors.n + 1));
    for (int i = 0; i < p->tensors.n; i++) {
        Tensor *t = p->tensors.items[i];
        st.bodies[st.nbodies++] = (TensorBodies){t, t->body, t->init, t->update};
        if (t->kind != T_COMPUTE && t->kind != T_SCAN)
            continue;
        for (int d = 0; d < t->ndim; d++)
            keep_axis(&st, t->axes[d]);
        Expr *es[3] = {t->body, t->init, t->update};
        for (int k = 0; k < 3; k++)
            if (es[k])
                keep_reduce_axes(es[k], &st);
    }
    return st;
}

static void program_put_back(const ProgramState *st)
{
    for (int i = 0; i < st->n; i++) {
        st->items[i].iv->ann = st->items[i].ann;
        st->items[i].iv->bind_tag = st->items[i].bind_tag;
        st->items[i].iv->tensorize = st->items[i].tensorize;
    }
    PtrVec *ts = &st->prog->tensors;
    ts->n = 0;
    for (int i = 0; i < st->nbodies; i++) {
        const TensorBodies *b = &st->bodies[i];
        b->t->body = b->body;
        b->t->init = b->init;
        b->t->update = b->update;
        b->t->id = i;
        ir_vec_push(ts, b->t, 1 << 20, "tensors");
    }
}

/* Extent 1 of a run-time dim makes loops over it single iterations and their tails
 * nothing: a decoder's step over one token, a batch of one. So a step that reads dims
 * whose range starts at 1 (given as extents, not counted from values) gets one more
 * version, run where each of them is 1: `from`'s body with them replaced by 1 and
 * simplified (unit loops vanish, the tails' conditions fold). NULL where the step reads
 * none. (tests/dyn/attention, a transformer block over seq=1..20, at one token: 1.86x the
 * time of its build for 1 without this version, 1.00x with it.) */
static Kernel *unit_version(const Kernel *base, const Kernel *from, const Program *p, Expr **when)
{
    enum { MAXV = 16 };
    Var *vars[MAXV];
    Expr *ones[MAXV];
    int n = 0;
    *when = NULL;
    for (int q = 0; q < base->dims.n && n < MAXV; q++) {
        Var *v = base->dims.items[q];
        const IrDim *d = NULL;
        for (int i = 0; i < p->dims.n && !d; i++)
            if (((const IrDim *)p->dims.items[i])->var == v)
                d = p->dims.items[i];
        if (!d || d->count || d->lo != 1 || d->hi <= 1)
            continue;
        vars[n] = v;
        ones[n++] = ir_int(1, v->dtype);
        Expr *is1 = ir_bin(OP_EQ, ir_varref(v), ir_int(1, v->dtype));
        *when = *when ? ir_bin(OP_AND, *when, is1) : is1;
    }
    if (!n)
        return NULL;
    Kernel *k = ir_alloc(sizeof *k);
    *k = *from;
    k->body = ir_simplify_stmt(ir_stmt_subst(from->body, vars, ones, n));
    k->notes = (PtrVec){0};
    k->variants = k->when = (PtrVec){0};
    k->name = ir_fmt("%s_at1", base->name);
    k->internal = 1;
    return k;
}

static int kernel_variants(const GenOptions *opt, GenUnit *u, Model *m, const ProgramState *bare)
{
    const PtrVec *dims = &u->prog->dims;
    int ranged = 0;
    for (int i = 0; i < dims->n; i++) {
        const IrDim *d = dims->items[i];
        ranged |= !d->count && d->hi > d->lo;
    }
    if (!ranged || opt->tgt.kind != TARGET_C || opt->gpu_schedule || opt->no_extent_versions)
        return 0;
    int64_t rows = (opt->tile ? opt->tile : &sch_tile_default)->rows;
    Model *vm[NPLANS];
    int64_t *plan[NPLANS];
    ProgramState scheduled = program_kept(u->prog);
    ir_pass_dump_set(NULL, NULL);   /* the versions' lowering is not dumped */
    for (int j = 0; j < NPLANS; j++) {
        plan[j] = ir_alloc(sizeof *plan[j] * (size_t)(dims->n + 1));
        for (int i = 0; i < dims->n; i++)
            plan[j][i] = plan_value(dims->items[i], j);
        program_put_back(bare);
        Schedule *s = onnx_schedule(opt, u, plan[j]);
        if (!s || !(vm[j] = ir_lower_model(s, u->name)))
            return ir_fail("%s: the version for smaller extents: %s", opt->input, ir_errmsg());
    }
    program_put_back(&scheduled);
    ir_pass_dump_set(opt->dump, opt->dump_out ? opt->dump_out : stdout);
    for (int k = 0; k < m->kernels.n; k++) {
        Kernel *base = m->kernels.items[k], *keep[NPLANS];
        Expr *keep_when[NPLANS];
        int nkeep = 0;
        char *next = kernel_text(base, base->name);
        int above_parallel = lower_has_parallel_loop(base->body);
        for (int j = NPLANS - 1; j >= 0; j--) {   /* each against the next larger one kept */
            if (vm[j]->kernels.n != m->kernels.n)
                continue;
            Kernel *v = vm[j]->kernels.items[k];
            if (strcmp(v->name, base->name) || !same_params(base, v))
                continue;
            /* the first version without the parallel loop of the one above (too few
             * elements for threads at these extents) is kept at any bound */
            char *text = kernel_text(v, base->name);
            int serial = above_parallel && !lower_has_parallel_loop(v->body);
            /* the version without threads also runs wherever its outputs are too few for
             * them, as the static build's rule has it (a call per row of a parallel loop
             * costs more than its work there: tests/dyn/picks at 2x40) */
            Expr *few = NULL;
            Expr *when = strcmp(text, next) ? variant_when(v, u->prog, plan[j], serial ? INT64_MAX : 2 * rows,
                                                           serial ? &few : NULL, SCH_PAR_MIN_ELEMS - 1)
                                            : NULL;
            if (!when)
                continue;
            if (few)
                when = ir_bin(OP_OR, when, few);
            next = text;
            if (serial)
                above_parallel = 0;
            v->name = ir_fmt("%s_v%d", base->name, j);
            v->internal = 1;
            StrBuf at = {0};
            em_c_put_dim_expr(&at, when);
            ir_vec_push(&v->notes, ir_fmt("the version for extents where %s: register tiles chosen for them", at.data),
                        1 << 20, "notes");
            sb_free(&at);
            keep[nkeep] = v;
            keep_when[nkeep++] = when;
        }
        Expr *at1_when;
        Kernel *at1 = unit_version(base, nkeep ? keep[nkeep - 1] : base, u->prog, &at1_when);
        if (at1) {
            StrBuf at = {0};
            em_c_put_dim_expr(&at, at1_when);
            ir_vec_push(&at1->notes, ir_fmt("the version for extents where %s: its loops over them folded", at.data),
                        1 << 20, "notes");
            sb_free(&at);
            ir_vec_push(&base->variants, at1, 1 << 20, "variants");
            ir_vec_push(&base->when, at1_when, 1 << 20, "variants");
        }
        for (int i = nkeep - 1; i >= 0; i--) {   /* smallest first: the model function tries them in order */
            ir_vec_push(&base->variants, keep[i], 1 << 20, "variants");
            ir_vec_push(&base->when, keep_when[i], 1 << 20, "variants");
        }
    }
    return 0;
}

/* A .kg file's kernel, with the header notes that say how it was scheduled */
static Kernel *kg_lower(const GenOptions *opt, GenUnit *u, Schedule *s)
{
    const KgModule *mod = &u->kg;
    Kernel *k = ir_lower(s, u->name);
    if (!k) {
        ir_fail("%s: cannot lower the schedule: %s", opt->input, ir_errmsg());
        return NULL;
    }
    if (mod->default_gpu)
        ir_vec_push(&k->notes, ir_fmt("schedule: kgen's default GPU schedule (no section for %s)", opt->target), 1 << 20, "notes");
    else if (!mod->scheduled)
        ir_vec_push(&k->notes, opt->no_schedule ? "schedule: none (--no-schedule)" : ir_fmt("schedule: none for target %s", opt->target), 1 << 20, "notes");
    for (int i = 0; i < mod->schedule_lines.n; i++)
        ir_vec_push(&k->notes, ir_fmt("  %s", (char *)mod->schedule_lines.items[i]), 1 << 20, "notes");
    if (s->simd_lanes)
        ir_vec_push(&k->notes, ir_fmt("tensorize: for %s, the vector loops of sum reductions call kgen_ukernels.h "
                                      "where they match", target_simd_name(&opt->tgt)), 1 << 20, "notes");
    return k;
}

/* The generated files: printed for --dump=emit, written into -o DIR. 0, or -1. */
static int write_files(const GenOptions *opt, OutSet *o)
{
    FILE *f = ir_pass_dump(step_emit.name);
    for (int i = 0; f && i < o->n; i++)
        fprintf(f, "==> %s <==\n%.*s", o->files[i].name, (int)o->files[i].text.len,
                o->files[i].text.data ? o->files[i].text.data : "");
    return opt->outdir ? em_outset_write(o, opt->outdir) : 0;
}

/* ---------------------------------------------------------------- the driver */

/* Everything after the frontend: graph passes, schedule, lower, (report,) emit */
static int compile_unit(const GenOptions *opt, GenUnit *u)
{
    dump_program(step_import.name, u->prog);
    PassCtx ctx = {opt->input, opt->target, target_is_gpu(&opt->tgt) || opt->gpu_schedule,
                   target_simd_lanes(&opt->tgt), opt->layout_block, opt->winograd};
    if (u->onnx && gen_graph_passes(u->prog, &ctx))
        return -1;
    for (size_t i = 0; !u->onnx && i < NGRAPH_PASSES; i++)
        dump_program(graph_passes[i]->info.name, u->prog);   /* a .kg program, as it is */
    ProgramState bare = program_kept(u->prog);
    Schedule *s = u->onnx ? onnx_schedule(opt, u, NULL) : kg_schedule(opt, u);
    if (!s)
        return -1;
    dump_program(DUMP_TIR, u->prog);
    FILE *f = ir_pass_dump(step_schedule.name);
    if (f)
        sch_print(f, s);
    Kernel *k = NULL;
    Model *m = NULL;
    if (u->onnx) {
        m = ir_lower_model(s, u->name);
        if (!m)
            return ir_fail("%s: cannot lower: %s", opt->input, ir_errmsg());
        if (kernel_variants(opt, u, m, &bare))
            return -1;
    } else if (!(k = kg_lower(opt, u, s))) {
        return -1;
    }
    if ((f = ir_pass_dump(STEP_LOWER)))
        for (int i = 0; i < (m ? m->kernels.n : 1); i++)
            ir_print_kernel(f, m ? m->kernels.items[i] : k);
    if (opt->report && m)
        gen_onnx_report(u, m, s);
    /* printing runs the GPU launch split too: its dump needs the files made */
    if (!opt->outdir && !ir_pass_dump(step_emit.name) && !ir_pass_dump(lower_launch_pass()->name))
        return 0;
    OutSet o = {0};
    int rc = (m ? gen_onnx_files(&o, opt, u, m, s) : em_kernel_files(&o, k, u->name, u->source, &opt->tgt)) ||
                     write_files(opt, &o)
                 ? -1
                 : 0;
    em_outset_free(&o);
    return rc;
}

int gen_compile(const GenOptions *opt)
{
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    GenUnit u = {0};
    const char *slash = strrchr(opt->input, '/');
    u.source = slash ? slash + 1 : opt->input;
    u.name = opt->name ? opt->name : gen_name_from_path(opt->input);
    char *text = NULL;
    /* no dumps while importing: constant folding lowers programs of its own */
    ir_pass_dump_set(NULL, NULL);
    int rc = front(opt, &u, &text);
    if (!rc) {
        ir_pass_dump_set(opt->dump, opt->dump_out ? opt->dump_out : stdout);
        rc = compile_unit(opt, &u);
        ir_pass_dump_set(NULL, NULL);
    }
    gen_onnx_release(&u);
    free(text);
    ir_arena_free(arena);
    return rc;
}
