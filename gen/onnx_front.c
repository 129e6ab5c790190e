/* onnx_front.c - the ONNX frontend of the driver (driver.c): read the model and the
 * values bound to its inputs, import it (onnx_import.c); then, for the later steps, the
 * --report and the model's files with its inputs and outputs by ONNX name.
 * requires: GenOptions; gives: a GenUnit with the imported program and its facts. */
#include "gen.h"
#include "../ir/ops/ops.h"
#include "../onnx/onnx.h"
#include "../templates/kgen_io.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BINDS 64

/* MACs of a kernel: output elements times reduction steps, for each stage it computes */
static int64_t stage_macs(const Tensor *t)
{
    if (t->kind != T_COMPUTE || t->body->kind != E_REDUCE)
        return 0;
    int64_t n = ir_tensor_numel(t);
    for (int i = 0; i < t->body->u.reduce.naxes; i++)
        n *= t->body->u.reduce.axes[i]->extent;
    return n;
}

/* The run-time dims and the arena a run needs at a few of their extents (NAME_arena_bytes):
 * each dim at its smallest, a quarter, half and three quarters of the way, and its largest
 * (the bound, NAME_ARENA_BYTES). */
static void report_dims(const Model *m)
{
    const PtrVec *ds = &m->prog->dims;
    if (!ds->n)
        return;
    printf("dims decided at run time:");
    for (int i = 0; i < ds->n; i++) {
        const IrDim *d = ds->items[i];
        printf("%s %s in [%lld, %lld]", i ? "," : "", d->name, (long long)d->lo, (long long)d->hi);
    }
    printf("\narena a run needs (intermediates compact at its extents; NAME_arena_bytes(dims) in the header):\n");
    Expr *need = lower_arena_need(m);
    for (int q = 0; q <= 4; q++) {
        int64_t dims[64];
        printf("  at");
        for (int i = 0; i < ds->n && i < 64; i++) {
            const IrDim *d = ds->items[i];
            dims[i] = d->lo + (d->hi - d->lo) * q / 4;
            printf(" %s=%lld", d->name, (long long)dims[i]);
        }
        int64_t n = lower_dims_eval(m, need, dims);
        if (q == 4)
            printf(": %lld bytes (the bound)\n", (long long)n);
        else
            printf(": %lld bytes (%.0f%% of the bound)\n", (long long)n,
                   m->arena_bytes > 0 ? 100.0 * (double)n / (double)m->arena_bytes : 0.0);
    }
    for (int i = 0; i < m->prog->checks.n; i++)
        printf("  checked at run time: %s\n", (const char *)m->prog->check_msgs.items[i]);
}

static void report(const OnnxImport *im, const Model *m, Schedule *s)
{
    printf("model %s: %d ONNX nodes (%d folded into constants), %d kernels\n", m->name, im->nnodes, im->nfolded,
           m->kernels.n);
    int64_t total = 0, weights = 0;
    for (int k = 0; k < m->kernels.n; k++) {
        const Kernel *kk = m->kernels.items[k];
        int64_t macs = 0;
        const char *root = kk->name + strlen(m->name) + 1;
        for (int i = 0; i < s->stages.n; i++) {
            Stage *st = s->stages.items[i];
            if (strcmp(st->t->name, root) == 0 || (st->attach == ATTACH_AT && !strcmp(st->attach_stage->t->name, root)))
                macs += stage_macs(st->t);
        }
        total += macs;
        printf("  kernel %-40s MACs %12lld\n", kk->name, (long long)macs);
        for (int i = 0; i < kk->notes.n; i++)
            printf("      %s\n", (const char *)kk->notes.items[i]);
    }
    for (int i = 0; i < m->constants.n; i++) {
        const Buffer *b = m->constants.items[i];
        weights += b->size * ir_dtype_bytes(b->dtype);
    }
    printf("total MACs %lld\n", (long long)total);
    printf("memory plan: arena %lld bytes (lower bound %lld: the most bytes live at once), weights %lld bytes, "
           "%d intermediates written in place\n",
           (long long)m->arena_bytes, (long long)m->arena_lower_bound, (long long)weights, m->ninplace);
    if (m->arena_at)
        printf("  (offsets and bytes at the bound; a run places them at its extents: below)\n");
    for (int i = 0; i < m->arena.n; i++) {
        const Buffer *b = m->arena.items[i];
        printf("  %-40s offset %10lld  bytes %10lld\n", b->name, (long long)b->ws_offset,
               (long long)(b->size * ir_dtype_bytes(b->dtype)));
    }
    report_dims(m);
}

/* The ONNX element type of a .npy file's dtype; -1 if it has none. */
static int onnx_dtype_of(kgen_dtype t)
{
    switch (t.code) {
    case KGEN_DTYPE_FLOAT: return t.bits == 16 ? ONNX_FLOAT16 : t.bits == 32 ? ONNX_FLOAT : t.bits == 64 ? ONNX_DOUBLE : -1;
    case KGEN_DTYPE_INT:
        return t.bits == 8 ? ONNX_INT8 : t.bits == 16 ? ONNX_INT16 : t.bits == 32 ? ONNX_INT32 : t.bits == 64 ? ONNX_INT64 : -1;
    case KGEN_DTYPE_UINT:
        return t.bits == 8    ? ONNX_UINT8
               : t.bits == 16 ? ONNX_UINT16
               : t.bits == 32 ? ONNX_UINT32
               : t.bits == 64 ? ONNX_UINT64
                              : -1;
    case KGEN_DTYPE_BOOL: return ONNX_BOOL;
    default: return -1;
    }
}

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && !strcmp(s + n - k, end);
}

/* Data read for --bind FILE; freed after the compile. */
typedef struct {
    OnnxTensor *pb[GEN_MAX_SHAPE_ARGS];
    kgen_io_tensor npy[GEN_MAX_SHAPE_ARGS];
} BindFiles;

/* --bind NAME=VALUE|FILE (split on the last '=': ONNX names may hold one) into b. */
static int parse_bind(const char *arg, const OnnxLimits *lim, int k, BindFiles *files, OnnxBinding *b)
{
    const char *eq = strrchr(arg, '=');
    memset(b, 0, sizeof *b);
    b->option = ir_fmt("--bind %s", arg);
    if (!eq || eq == arg || !eq[1])
        return ir_fail("%s: expected --bind NAME=VALUE or --bind NAME=FILE.npy|FILE.pb", b->option);
    b->name = ir_fmt("%.*s", (int)(eq - arg), arg);
    const char *v = eq + 1;
    char err[1024];
    if (ends_with(v, ".pb")) {
        OnnxTensor *t = onnx_load_tensor_file_ex(v, lim, err, sizeof err);
        if (!t)
            return ir_fail("%s: %s", b->option, err);
        files->pb[k] = t;
        if (t->ndim > KG_MAX_DIMS || !t->data)
            return ir_fail("%s: %s holds a %s tensor of rank %d, which kgen cannot bind", b->option, v,
                           onnx_dtype_name(t->dtype), t->ndim);
        b->dtype = t->dtype;
        b->ndim = t->ndim;
        memcpy(b->dims, t->dims, sizeof(int64_t) * (size_t)t->ndim);
        b->data = t->data;
    } else if (ends_with(v, ".npy")) {
        kgen_io_tensor *t = &files->npy[k];
        if (kgen_io_read_npy(v, t, err, sizeof err) != KGEN_IO_OK)
            return ir_fail("%s: %s", b->option, err);
        b->dtype = onnx_dtype_of(t->dtype);
        if (b->dtype < 0 || t->ndim > KG_MAX_DIMS)
            return ir_fail("%s: %s holds a tensor of type %s and rank %d, which kgen cannot bind", b->option, v,
                           kgen_io_dtype_name(t->dtype), (int)t->ndim);
        b->ndim = t->ndim;
        memcpy(b->dims, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        b->data = t->data;
    } else {
        b->literal = v;
    }
    return 0;
}

/* "input 'x': f32[1, 3, 224, 224]", for --report */
static void report_value(const char *what, const OnnxValue *v)
{
    const Tensor *t = v->t;
    printf("%s '%s': %s[", what, v->onnx_name, ir_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++)
        printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf("]%s\n", v->frozen ? ", a constant (bound or frozen)" : "");
}

/* The final shape of each input and output, and what the import decided, for --report */
static void report_inputs(const OnnxImport *im)
{
    for (int i = 0; i < im->ninputs; i++)
        report_value("input", &im->inputs[i]);
    for (int i = 0; i < im->noutputs; i++)
        report_value("output", &im->outputs[i]);
    for (int i = 0; i < im->notes.n; i++)
        printf("%s\n", (const char *)im->notes.items[i]);
}

/* What the frontend read, freed after the compile: the model, the --bind-inputs data,
 * the --bind files. */
typedef struct {
    OnnxModel *model;
    OnnxTensor *bound[MAX_BINDS];
    int nbound;
    BindFiles files;
} Front;

/* --bind-inputs DIR: input_N.pb for the graph's Nth input that is not an initializer,
 * where it exists and kgen can bind it, into binds (the tensors kept in f). */
static int load_bind_dir(const char *dir, const OnnxLimits *lim, Front *f, OnnxBinding *binds)
{
    const OnnxGraph *g = &f->model->graph;
    char err[1024];
    int gi = 0, nb = 0;
    for (int i = 0; i < g->ninputs && nb < MAX_BINDS; i++) {
        int is_init = 0;
        for (int j = 0; j < g->ninit && !is_init; j++)
            is_init = !strcmp(g->initializers[j].name, g->inputs[i].name);
        if (is_init)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/input_%d.pb", dir, gi++);
        OnnxTensor *t = onnx_load_tensor_file_ex(path, lim, err, sizeof err);
        if (!t)
            continue;
        if (t->ndim > KG_MAX_DIMS || !t->data) {
            onnx_tensor_free(t);
            continue;
        }
        f->bound[nb] = t;
        memset(&binds[nb], 0, sizeof binds[nb]);
        binds[nb].name = g->inputs[i].name;
        binds[nb].dtype = t->dtype;
        binds[nb].ndim = t->ndim;
        memcpy(binds[nb].dims, t->dims, sizeof(int64_t) * (size_t)t->ndim);
        binds[nb].data = t->data;
        nb++;
    }
    f->nbound = nb;
    return nb;
}

int gen_onnx_front(const GenOptions *opt, GenUnit *u)
{
    char err[1024];
    OnnxLimits lim = {opt->max_file_bytes, opt->max_nodes, opt->max_elements ? opt->max_elements : GEN_MAX_ELEMS};
    Front *f = calloc(1, sizeof *f);
    if (!f)
        ir_die("out of memory");
    u->onnx = 1;
    u->front = f;
    f->model = onnx_load_file_ex(opt->input, &lim, err, sizeof err);
    if (!f->model)
        return ir_fail("%s", err);
    OnnxBinding binds[MAX_BINDS];
    int nb = opt->bind_dir ? load_bind_dir(opt->bind_dir, &lim, f, binds) : 0;
    if (strcmp(onnx_c_name(u->name), u->name))
        return ir_fail("model name '%s' is not a C identifier kgen can use (a keyword, a C library name, or "
                       "a kgen_ prefix); try --name %s", u->name, onnx_c_name(u->name));
    OnnxBinding frozen[GEN_MAX_SHAPE_ARGS];
    for (int k = 0; k < opt->nbinds; k++)
        if (parse_bind(opt->binds[k], &lim, k, &f->files, &frozen[k]))
            return -1;
    OnnxImportOpts io = {binds, nb, frozen, opt->nbinds, opt->shapes, opt->nshapes, opt->dims, opt->ndims};
    if (onnx_import(f->model, &io, &u->im))
        return ir_fail("%s: %s", opt->input, ir_errmsg());
    u->prog = u->im.prog;
    return 0;
}

void gen_onnx_release(GenUnit *u)
{
    Front *f = u->front;
    if (!f)
        return;
    for (int i = 0; i < f->nbound; i++)
        onnx_tensor_free(f->bound[i]);
    for (int i = 0; i < GEN_MAX_SHAPE_ARGS; i++) {
        onnx_tensor_free(f->files.pb[i]);
        kgen_io_free(&f->files.npy[i]);
    }
    onnx_free(f->model);
    free(f);
    u->front = NULL;
}

void gen_onnx_report(const GenUnit *u, const Model *m, Schedule *s)
{
    report_inputs(&u->im);
    report(&u->im, m, s);
}

/* The graph inputs (not the frozen ones) and outputs as the model's parameters */
static void model_values(const OnnxImport *im, const Model *m, EmModel *em)
{
    EmValue *ins = ir_alloc(sizeof *ins * (size_t)(im->ninputs + 1));
    EmValue *outs = ir_alloc(sizeof *outs * (size_t)(im->noutputs + 1));
    for (int i = 0; i < im->ninputs; i++) {
        if (im->inputs[i].frozen)
            continue;
        for (int j = 0; j < m->params.n; j++) {
            Buffer *b = m->params.items[j];
            if (!strcmp(b->name, im->inputs[i].t->name))
                ins[em->ninputs++] = (EmValue){im->inputs[i].onnx_name, b, i};
        }
    }
    for (int i = 0; i < im->noutputs; i++)
        for (int j = 0; j < m->params.n; j++) {
            Buffer *b = m->params.items[j];
            if (!b->is_input && !strcmp(b->name, im->outputs[i].t->name))
                outs[em->noutputs++] = (EmValue){im->outputs[i].onnx_name, b, i};
        }
    em->inputs = ins;
    em->outputs = outs;
}

int gen_onnx_files(OutSet *o, const GenOptions *opt, const GenUnit *u, const Model *m, const Schedule *s)
{
    const OnnxImport *im = &u->im;
    EmModel em = {0};
    em.model = m;
    em.name = u->name;
    em.source = u->source;
    em.with_main = opt->with_main;
    em.weights_in_file = opt->weights_in_file;
    em.target = &opt->tgt;
    model_values(im, m, &em);
    ir_vec_push(&em.notes, ir_fmt("opset %lld, %d nodes, %d kernels, arena %lld bytes", (long long)im->opset,
                                  im->nnodes, m->kernels.n, (long long)m->arena_bytes),
                1 << 20, "notes");
    if (s->simd_lanes)
        ir_vec_push(&em.notes, ir_fmt("tensorize: for %s, the register tiles call kgen_ukernels.h where they "
                                      "match", target_simd_name(&opt->tgt)), 1 << 20, "notes");
    for (int i = 0; i < im->ninputs; i++)
        if (im->inputs[i].frozen)
            ir_vec_push(&em.notes, ir_fmt("input '%s' is a constant: %s", im->inputs[i].onnx_name,
                                          strstr(im->inputs[i].t->comment, "bound by")
                                              ? strstr(im->inputs[i].t->comment, "bound by")
                                              : "its value was needed when compiling (a shape, a loop count)"),
                        1 << 20, "notes");
    for (int i = 0; i < im->notes.n; i++)
        ir_vec_push(&em.notes, im->notes.items[i], 1 << 20, "notes");
    return em_model_files(o, &em, &opt->tgt);
}
