/* onnx_driver.c - `kgen model.onnx ...`: read, import, schedule by default, lower into a
 * model, report, emit. Everything lives in one arena that goes at once. */
#include "gen.h"
#include "../emit/emit.h"
#include "../ir/layout.h"
#include "../ir/ops/ops.h"
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

static void report(const GenImport *im, const Model *m, Schedule *s)
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
    for (int i = 0; i < m->arena.n; i++) {
        const Buffer *b = m->arena.items[i];
        printf("  %-40s offset %10lld  bytes %10lld\n", b->name, (long long)b->ws_offset,
               (long long)(b->size * ir_dtype_bytes(b->dtype)));
    }
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
static int parse_bind(const char *arg, const OnnxLimits *lim, int k, BindFiles *files, GenBinding *b)
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
static void report_value(const char *what, const GenValue *v)
{
    const Tensor *t = v->t;
    printf("%s '%s': %s[", what, v->onnx_name, ir_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++)
        printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf("]%s\n", v->frozen ? ", a constant (bound or frozen)" : "");
}

/* The final shape of each input and output, and what the import decided, for --report */
static void report_inputs(const GenImport *im)
{
    for (int i = 0; i < im->ninputs; i++)
        report_value("input", &im->inputs[i]);
    for (int i = 0; i < im->noutputs; i++)
        report_value("output", &im->outputs[i]);
    for (int i = 0; i < im->notes.n; i++)
        printf("%s\n", (const char *)im->notes.items[i]);
}

int gen_compile_onnx(const GenOptions *opt)
{
    char err[1024];
    OnnxLimits lim = {opt->max_file_bytes, opt->max_nodes, opt->max_elements ? opt->max_elements : GEN_MAX_ELEMS};
    OnnxModel *om = onnx_load_file_ex(opt->input, &lim, err, sizeof err);
    if (!om)
        return ir_fail("%s", err);
    OnnxTensor *bound[MAX_BINDS] = {0};
    GenBinding binds[MAX_BINDS];
    int nb = 0;
    if (opt->bind_dir) {
        int gi = 0;
        for (int i = 0; i < om->graph.ninputs && nb < MAX_BINDS; i++) {
            int is_init = 0;
            for (int j = 0; j < om->graph.ninit && !is_init; j++)
                is_init = !strcmp(om->graph.initializers[j].name, om->graph.inputs[i].name);
            if (is_init)
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/input_%d.pb", opt->bind_dir, gi++);
            OnnxTensor *t = onnx_load_tensor_file_ex(path, &lim, err, sizeof err);
            if (!t)
                continue;
            if (t->ndim > KG_MAX_DIMS || !t->data) {
                onnx_tensor_free(t);
                continue;
            }
            bound[nb] = t;
            memset(&binds[nb], 0, sizeof binds[nb]);
            binds[nb].name = om->graph.inputs[i].name;
            binds[nb].dtype = t->dtype;
            binds[nb].ndim = t->ndim;
            memcpy(binds[nb].dims, t->dims, sizeof(int64_t) * (size_t)t->ndim);
            binds[nb].data = t->data;
            nb++;
        }
    }
    BindFiles *files = calloc(1, sizeof *files);
    if (!files)
        ir_die("out of memory");
    Arena *arena = ir_arena_new();
    ir_arena_set(arena);
    int rc = -1;
    const char *name = opt->name ? opt->name : gen_name_from_path(opt->input);
    if (strcmp(gen_c_name(name), name)) {
        ir_fail("model name '%s' is not a C identifier kgen can use (a keyword, a C library name, or "
                "a kgen_ prefix); try --name %s", name, gen_c_name(name));
        goto done;
    }
    GenBinding frozen[GEN_MAX_SHAPE_ARGS];
    for (int k = 0; k < opt->nbinds; k++)
        if (parse_bind(opt->binds[k], &lim, k, files, &frozen[k]))
            goto done;
    GenImportOpts io = {binds, nb, frozen, opt->nbinds, opt->shapes, opt->nshapes, opt->dims, opt->ndims};
    GenImport im;
    if (gen_onnx_import(om, &io, &im)) {
        ir_fail("%s: %s", opt->input, ir_errmsg());
        goto done;
    }
    /* --layout: blocked convolutions (ir/layout.c); auto (the default) blocks a CPU
     * target's program when it has convs worth it */
    int gpu = target_is_gpu(&opt->tgt) || opt->gpu_schedule;
    if (gpu && opt->layout_block > GEN_LAYOUT_NCHW) {
        ir_fail("--layout=nchwc is a CPU layout; the %s target keeps NCHW", opt->target);
        goto done;
    }
    int block = opt->layout_block;
    if (block == GEN_LAYOUT_AUTO)
        block = gpu ? 0 : ir_layout_auto_block(im.prog, target_simd_lanes(&opt->tgt));
    if (block > GEN_LAYOUT_NCHW && ir_layout_nchwc(im.prog, block)) {
        ir_fail("%s: %s", opt->input, ir_errmsg());
        goto done;
    }
    Schedule *s = sch_create(im.prog);
    if (!gpu) {
        s->simd_lanes = target_simd_lanes(&opt->tgt);   /* -mattr, wasm: sch_default tensorizes */
        s->simd_regs = target_simd_regs(&opt->tgt);     /* wasm: tiles for 16 registers */
    }
    if (gpu)
        s->arena_align = 512;   /* OpenCL sub-buffers need CL_DEVICE_MEM_BASE_ADDR_ALIGN (4096 bits at most seen) */
    if (gpu ? sch_default_gpu(s, opt->tgt.max_threads < 256 ? opt->tgt.max_threads : 256)
            : sch_default_tiled(s, opt->tile ? opt->tile : &sch_tile_default)) {
        ir_fail("%s: default schedule: %s", opt->input, ir_errmsg());
        goto done;
    }
    FILE *dump = opt->dump_out ? opt->dump_out : stdout;
    if (opt->dump && !strcmp(opt->dump, "tir"))
        ir_print_program(dump, im.prog);
    if (opt->dump && !strcmp(opt->dump, "schedule"))
        sch_print(dump, s);
    Model *m = ir_lower_model(s, name);
    if (!m) {
        ir_fail("%s: cannot lower: %s", opt->input, ir_errmsg());
        goto done;
    }
    if (opt->dump && !strcmp(opt->dump, "lower"))
        for (int k = 0; k < m->kernels.n; k++)
            ir_print_kernel(dump, m->kernels.items[k]);
    if (opt->report) {
        report_inputs(&im);
        report(&im, m, s);
    }
    if (opt->outdir) {
        EmModel em = {0};
        em.model = m;
        em.name = name;
        const char *slash = strrchr(opt->input, '/');
        em.source = slash ? slash + 1 : opt->input;
        em.with_main = opt->with_main;
        em.weights_in_file = opt->weights_in_file;
        em.target = &opt->tgt;
        EmValue *ins = ir_alloc(sizeof *ins * (size_t)(im.ninputs + 1));
        EmValue *outs = ir_alloc(sizeof *outs * (size_t)(im.noutputs + 1));
        for (int i = 0; i < im.ninputs; i++) {
            if (im.inputs[i].frozen)
                continue;
            for (int j = 0; j < m->params.n; j++) {
                Buffer *b = m->params.items[j];
                if (!strcmp(b->name, im.inputs[i].t->name))
                    ins[em.ninputs++] = (EmValue){im.inputs[i].onnx_name, b, i};
            }
        }
        for (int i = 0; i < im.noutputs; i++)
            for (int j = 0; j < m->params.n; j++) {
                Buffer *b = m->params.items[j];
                if (!b->is_input && !strcmp(b->name, im.outputs[i].t->name))
                    outs[em.noutputs++] = (EmValue){im.outputs[i].onnx_name, b, i};
            }
        em.inputs = ins;
        em.outputs = outs;
        ir_vec_push(&em.notes, ir_fmt("opset %lld, %d nodes, %d kernels, arena %lld bytes", (long long)im.opset,
                                      im.nnodes, m->kernels.n, (long long)m->arena_bytes),
                    1 << 20, "notes");
        if (s->simd_lanes)
            ir_vec_push(&em.notes, ir_fmt("tensorize: for %s, the register tiles call kgen_ukernels.h where they "
                                          "match", target_simd_name(&opt->tgt)), 1 << 20, "notes");
        for (int i = 0; i < im.ninputs; i++)
            if (im.inputs[i].frozen)
                ir_vec_push(&em.notes, ir_fmt("input '%s' is a constant: %s", im.inputs[i].onnx_name,
                                              strstr(im.inputs[i].t->comment, "bound by")
                                                  ? strstr(im.inputs[i].t->comment, "bound by")
                                                  : "its value was needed when compiling (a shape, a loop count)"),
                            1 << 20, "notes");
        for (int i = 0; i < im.notes.n; i++)
            ir_vec_push(&em.notes, im.notes.items[i], 1 << 20, "notes");
        OutSet o = {0};
        if (em_model_files(&o, &em, &opt->tgt) || em_outset_write(&o, opt->outdir)) {
            em_outset_free(&o);
            goto done;
        }
        em_outset_free(&o);
    }
    rc = 0;
done:
    ir_arena_free(arena);
    for (int i = 0; i < nb; i++)
        onnx_tensor_free(bound[i]);
    for (int i = 0; i < GEN_MAX_SHAPE_ARGS; i++) {
        onnx_tensor_free(files->pb[i]);
        kgen_io_free(&files->npy[i]);
    }
    free(files);
    onnx_free(om);
    return rc;
}
