/* gpu.c - the GPU targets (CUDA, OpenCL, Metal) for one kernel or a whole model.
 *
 * requires: kernels lowered from a GPU schedule (bound loops); breaks: nothing (adds files)
 *
 * The device code comes from the one C-family printer (cprint.c) with the target's
 * dialect: each kernel prints as one function per launch. Around it the host needs to
 * know what to allocate and what to launch in which order, and that is written once, as
 * data: a table of buffers (inputs, outputs, weights, arena slices) and a table of
 * launches (kernel name, grid, block, arguments as buffer indices), see kgen_gpu.h. A
 * small header-only host runtime per API (kgen_cuda_host.h, kgen_opencl_host.h) runs any
 * such table; for Metal the same table is written as a JSON manifest and an Objective-C
 * host file. What the APIs differ in is one row each of gpu_apis (file names, runtime
 * headers and entry points, C++ linkage, whether conditions are read back); the Metal
 * host and the runners' Makefiles are templates (templates/kgen_metal_host.m,
 * kgen_cuda.mk, kgen_opencl.mk, kgen_metal.mk). The generated host entry points are the C
 * target's (NAME over host arrays,
 * NAME_tensors over DLPack tensors), so the same runner and tests serve every target.
 * With dims decided at run time the tables hold the bound, and NAME_at() (dims_tables)
 * copies them with one run's input/output bytes and grids (the launch plan's run-time
 * extents, printed as C over the dims); the kernels take the dims after their buffers
 * (kgen_gpu_dims.h, written for such models only). A dim computed from values is read
 * back after the launch that counts it (NAME_after: checked, the tables set again at it).
 *
 * Files:  cuda    NAME.cu (kernels, tables, entry points), NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h, kgen_cuda_host.h
 *         opencl  NAME.cl (self-contained program), NAME_host.c, NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h, kgen_opencl_host.h
 *         metal   NAME.metal, NAME_host.m, NAME_manifest.json, NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h
 *  (and kgen_gpu_dims.h with dims decided at run time)
 *  with --main the runner (NAME_main.c, kgen_io.h, kgen_main.h) and a Makefile.
 */
#include "cfamily.h"
#include "gpu.h"

#include <stdlib.h>
#include <string.h>

/* What the three APIs' files differ in, as data. Templates fill {{KEY}} placeholders
 * (em_template_fill): the runner Makefile's NAME, MACRO (NAME in capitals), SOURCE and SM
 * (CUDA's compute capability); the Metal host's NAME, MACRO, FILE (the files' base name),
 * WEIGHTS and TABLES (the weight array and the buffer and launch tables), SIGNATURE, IO
 * (the ins and outs arrays) and ARENA (the last parameter's name). */
struct GpuApi {
    TargetKind kind;
    const char *device_head;   /* template the device source starts with; NULL: it includes
                                  kgen_runtime.h (CUDA compiles it as C++ with the host) */
    const char *device_file;   /* the kernels: NAME.cu, NAME.cl, NAME.metal */
    const char *host_file;     /* the host entry points; CUDA's follow the kernels in NAME.cu */
    const char *host_header;   /* the header-only host runtime copied beside, or NULL */
    const char *host_head;     /* the host file's first lines (em_fill: NAME, MACRO, FILE) */
    const char *state_type;    /* what the host runtime keeps between runs */
    const char *run, *release; /* its entry points (a NULL run: host_template has its own) */
    const char *run_dims;      /* run for a model with dims decided at run time (kgen_gpu_dims.h) */
    const char *run_file;      /* the macro suffix of the device file's path run takes, or NULL */
    const char *host_template; /* the whole host as a template, or NULL */
    const char *makefile;      /* the runner's Makefile template */
    int cplusplus;             /* the host file is C++: extern "C" entry points, and the launch
                                  table holds the kernels' addresses */
    int reads_back;            /* the host reads conditions back: run-time If and loops */
};

static const GpuApi gpu_apis[] = {
    {TARGET_CUDA, NULL, "%s.cu", "%s.cu", "kgen_cuda_host.h", "#include \"{{FILE}}.h\"\n#include \"kgen_cuda_host.h\"\n",
     "kgen_cuda_state", "kgen_cuda_run", "kgen_cuda_release", "kgen_cuda_run_dims", NULL, NULL, "kgen_cuda.mk", 1, 1},
    {TARGET_OPENCL, "kgen_opencl.h", "%s.cl", "%s_host.c", "kgen_opencl_host.h",
     "/* The OpenCL host: builds {{FILE}}.cl on the first run (the path {{MACRO}}_CL_FILE, or that file\n"
     " * in the folder $KGEN_CL_DIR), see kgen_opencl_host.h. */\n"
     "#include \"{{FILE}}.h\"\n#include \"kgen_opencl_host.h\"\n\n"
     "#ifndef {{MACRO}}_CL_FILE\n#define {{MACRO}}_CL_FILE \"{{FILE}}.cl\"\n#endif\n",
     "kgen_cl_state", "kgen_cl_run", "kgen_cl_release", "kgen_cl_run_dims", "_CL_FILE", NULL, "kgen_opencl.mk", 0, 1},
    {TARGET_METAL, "kgen_metal.h", "%s.metal", "%s_host.m", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "kgen_metal_host.m",
     "kgen_metal.mk", 0, 0},
};

static const GpuApi *gpu_api(TargetKind k)
{
    for (size_t i = 0; i < sizeof gpu_apis / sizeof *gpu_apis; i++)
        if (gpu_apis[i].kind == k)
            return &gpu_apis[i];
    return NULL;
}
static const char *const kind_macro[] = {"KGEN_GPU_INPUT", "KGEN_GPU_OUTPUT", "KGEN_GPU_WEIGHT", "KGEN_GPU_ARENA"};
static const char *const kind_json[] = {"input", "output", "weight", "arena"};

static void add_buf(GProg *g, const Buffer *b, int kind, int index, int64_t offset, int64_t bytes, const char *name)
{
    if (g->nbufs == g->capbufs)
        g->bufs = ir_grow(g->bufs, &g->capbufs, sizeof *g->bufs, 16);
    g->bufs[g->nbufs++] = (GBuf){b, kind, index, offset, bytes, name, NULL};
}

int em_gpu_buf_index(const GProg *g, const Buffer *b)
{
    for (int i = 0; i < g->nbufs; i++)
        if (g->bufs[i].b == b)
            return i;
    return -1;
}

static int64_t buf_bytes(const Buffer *b) { return ir_dtype_size(b->dtype, b->size); }

void em_gpu_prog_free(GProg *g)
{
    for (int i = 0; i < g->nlaunches; i++)
        free(g->launches[i].l.name);
    free(g->launches);
    free(g->bufs);
    sb_free(&g->device);
}

/* The kgen_runtime.h part that kernels use (between its KGEN_KERNEL_HELPERS markers). */
static int put_helpers(StrBuf *o)
{
    const char *rt = em_template("kgen_runtime.h");
    const char *a = rt ? strstr(rt, "KGEN_KERNEL_HELPERS_BEGIN") : NULL;
    const char *b = a ? strstr(a, "/* KGEN_KERNEL_HELPERS_END */") : NULL;
    if (!a || !b)
        return ir_fail("the kgen_runtime.h template in this build has no kernel helpers section");
    a = strstr(a, "*/\n");
    if (!a || a > b)
        return ir_fail("the kgen_runtime.h template's helper markers are malformed");
    a += 3;
    size_t n = (size_t)(b - a);
    char *text = malloc(n + 1);
    if (!text)
        ir_die("out of memory");
    memcpy(text, a, n);
    text[n] = 0;
    sb_puts(o, text);
    free(text);
    return 0;
}

/* The device source's head: what the kernels need before them. */
static int device_head(GProg *g)
{
    StrBuf *o = &g->device;
    em_c_banner(o, g->source);
    if (!g->api->device_head) {
        sb_puts(o, "#include \"kgen_runtime.h\"\n");
        return 0;
    }
    const char *head = em_template(g->api->device_head);
    if (!head)
        return ir_fail("the %s head template is missing from this build", g->t->name);
    sb_puts(o, "\n");
    sb_puts(o, head);
    sb_puts(o, "\n/* ---------------------------------------------------------------- kgen_runtime.h's"
               " kernel helpers */\n");
    if (put_helpers(o))
        return -1;
    /* the line after which only this program's kernels follow (tools may join programs) */
    sb_puts(o, "\n/* ---------------------------------------------------------------- kernels */\n");
    return 0;
}

/* Print every kernel, recording its launches. */
static int device_kernels(GProg *g, const Kernel *const *ks, int nk)
{
    for (int i = 0; i < nk; i++) {
        EmLaunch *ls = NULL;
        sb_puts(&g->device, "\n");
        int n = g->print ? g->print(g, ks[i], &ls) : em_print_gpu_kernel(&g->device, ks[i], g->d, g->t, &ls);
        if (n < 0)
            return -1;
        for (int j = 0; j < n; j++) {
            if (g->nlaunches == g->caplaunches)
                g->launches = ir_grow(g->launches, &g->caplaunches, sizeof *g->launches, 16);
            g->launches[g->nlaunches].k = ks[i];
            g->launches[g->nlaunches++].l = ls[j];
        }
        free(ls);   /* the names moved into g->launches */
    }
    return 0;
}

/* The arguments of a launch of kernel k: its parameters, then the workspace. */
static int launch_args(const GProg *g, const Kernel *k, int *out)
{
    int n = 0;
    for (int i = 0; i < k->params.n; i++) {
        int bi = em_gpu_buf_index(g, k->params.items[i]);
        if (bi < 0)
            return ir_fail("kernel %s: parameter %s is not a model buffer", k->name,
                           ((const Buffer *)k->params.items[i])->name);
        out[n++] = bi;
    }
    if (!k->internal)
        out[n++] = em_gpu_buf_index(g, NULL);
    return n;
}

/* The buffer and launch tables as C (kgen_gpu.h types). */
static int host_tables(StrBuf *o, const GProg *g, const char *weights_array)
{
    sb_printf(o, "\n/* buffers: what each kernel argument is */\nstatic const kgen_gpu_buffer %s_buffers[%d] = {\n", g->name,
              g->nbufs ? g->nbufs : 1);
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *b = &g->bufs[i];
        sb_printf(o, "    {%s, %d, %lld, %lld, \"", kind_macro[b->kind], b->index, (long long)b->offset,
                  (long long)b->bytes);
        em_comment_text(o, b->name);
        sb_puts(o, "\"},\n");
    }
    if (!g->nbufs)
        sb_puts(o, "    {0, 0, 0, 0, \"\"},\n");
    sb_puts(o, "};\n");
    for (int i = 0; i < g->nlaunches; i++) {
        int args[KG_MAX_ARGS + 1024];
        const GLaunch *l = &g->launches[i];
        if (l->k->params.n + 1 > (int)(sizeof args / sizeof *args))
            return ir_fail("kernel %s has too many parameters", l->k->name);
        int n = launch_args(g, l->k, args);
        if (n < 0)
            return -1;
        sb_printf(o, "static const int %s_args_%d[%d] = {", g->name, i, n ? n : 1);
        for (int a = 0; a < n; a++)
            sb_printf(o, "%s%d", a ? ", " : "", args[a]);
        sb_puts(o, n ? "};\n" : "0};\n");
    }
    sb_printf(o, "\n/* launches, in order */\nstatic const kgen_gpu_launch %s_launches[%d] = {\n", g->name,
              g->nlaunches ? g->nlaunches : 1);
    for (int i = 0; i < g->nlaunches; i++) {
        const EmLaunch *l = &g->launches[i].l;
        int n = launch_args(g, g->launches[i].k, (int[KG_MAX_ARGS + 1024]){0});
        sb_printf(o, "    {\"%s\", %s%s, {%lld, %lld, %lld}, {%lld, %lld, %lld}, %d, %s_args_%d},\n", l->name,
                  g->api->cplusplus ? "(const void *)" : "NULL", g->api->cplusplus ? l->name : "",
                  (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                  (long long)l->block[1], (long long)l->block[2], n, g->name, i);
    }
    if (!g->nlaunches)
        sb_puts(o, "    {\"\", NULL, {1, 1, 1}, {1, 1, 1}, 0, NULL},\n");
    sb_puts(o, "};\n");
    if (g->ncontrols) {
        sb_printf(o, "\n/* run-time branches and loops: launches to skip or repeat */\n"
                     "static const kgen_gpu_control %s_controls[%d] = {\n", g->name, g->ncontrols);
        for (int i = 0; i < g->ncontrols; i++) {
            const GControl *c = &g->controls[i];
            sb_printf(o, "    {%s, %d, %d, %d, %d, %d, %d, %lld},\n", c->loop ? "KGEN_GPU_WHILE" : "KGEN_GPU_IF", c->first,
                      c->last, c->cond, c->cond_bytes, c->value, c->trip, (long long)c->trip_count);
        }
        sb_puts(o, "};\n");
    }
    sb_printf(o, "\nstatic const kgen_gpu_program %s_program = {\n    \"%s\", %d, %s_buffers, %d, %s_launches, %lld, %d, %d, %d, %s",
              g->name, g->name, g->nbufs, g->name, g->nlaunches, g->name, (long long)g->arena_bytes, g->ninputs,
              g->noutputs, g->nweights, weights_array);
    if (g->ncontrols)
        sb_printf(o, ",\n    %d, %s_controls\n};\n", g->ncontrols, g->name);
    else
        sb_puts(o, ", 0, NULL\n};\n");
    return 0;
}

/* ---------------------------------------------------------------- dims decided at run time */

/* An input's or output's bytes at run time (compact at the actual extents), or NULL when
 * none of its extents is decided at run time. */
static Expr *run_bytes(const Buffer *b)
{
    int dyn = 0, bits = ir_dtype_bits(b->dtype);
    Expr *n = ir_idx(1);
    for (int d = 0; d < b->ndim; d++) {
        dyn |= b->dyn[d] != NULL;
        n = ir_bin(OP_MUL, n, b->dyn[d] ? b->dyn[d] : ir_idx(b->shape[d]));
    }
    if (!dyn)
        return NULL;
    n = bits < 8 ? ir_bin(OP_FLOORDIV, ir_add(ir_bin(OP_MUL, n, ir_idx(bits)), ir_idx(7)), ir_idx(8))
                 : ir_bin(OP_MUL, n, ir_idx(bits / 8));
    return ir_simplify(n, NULL);
}

/* The index of dim variable v in the program's dims, or -1. */
static int dim_index(const Program *p, const Var *v)
{
    for (int i = 0; i < p->dims.n; i++)
        if (((const IrDim *)p->dims.items[i])->var == v)
            return i;
    return -1;
}

/* "NAME_at(H, W)": one run's tables at the host entry's dims. */
static const char *at_call(const GProg *g)
{
    StrBuf t = {0};
    sb_printf(&t, "%s_at(", g->name);
    for (int i = 0; i < g->dims->dims.n; i++)
        sb_printf(&t, "%s%s", i ? ", " : "", ((const IrDim *)g->dims->dims.items[i])->name);
    sb_puts(&t, ")");
    const char *r = ir_fmt("%s", t.data);
    sb_free(&t);
    return r;
}

/* Has the model dims computed from values (IrDim.count)? */
static int has_value_dims(const GProg *g)
{
    for (int i = 0; g->dims && i < g->dims->dims.n; i++)
        if (((const IrDim *)g->dims->dims.items[i])->count)
            return 1;
    return 0;
}

/* The launch after which dim i of the model, computed from values, is read back: the last
 * of the kernel that counts it; -1 for a dim given (or a kernel without launches). */
static int count_launch(const GProg *g, int i)
{
    const Model *mod = g->mod;
    if (!mod || !mod->dim_count[i])
        return -1;
    int last = -1;
    for (int l = 0; l < g->nlaunches; l++)
        if (g->launches[l].k == mod->kernels.items[mod->dim_after[i]])
            last = l;
    return last;
}

/* NAME_after (kgen_gpu_after_fn): after the last launch of the kernel that counts a dim
 * from values, that count read back from the device, checked against its range and the
 * conditions that need it (as the C target's model function does), and the run's tables
 * set again at it (NAME_at). */
static int after_hook(StrBuf *o, const GProg *g)
{
    const char *N = g->name;
    const Model *mod = g->mod;
    const PtrVec *dims = &g->dims->dims;
    if (!mod)
        return ir_fail("%s: dims computed from values outside a model", N);
    sb_printf(o, "\n/* after a launch: the dims it computes from values read back and checked, and the\n"
                 " * tables again at them (the launches after it take them, the outputs are copied out at\n"
                 " * them); KGEN_ERR_SHAPE, or KGEN_ERR_DEVICE where the read fails */\n"
                 "static int %s_after(int launch, kgen_gpu_read_fn read, void *ctx)\n{\n", N);
    for (int i = 0; i < dims->n; i++)
        sb_printf(o, "    int64_t %s = %s_run.dims[%d];\n", ((const IrDim *)dims->items[i])->name, N, i);
    sb_puts(o, "    switch (launch) {\n");
    for (int i = 0; i < dims->n; i++)
        if (mod->dim_count[i] && count_launch(g, i) < 0)
            return ir_fail("the extent %s is counted by kernel %s, which has no launch", ((const IrDim *)dims->items[i])->name,
                           ((const Kernel *)mod->kernels.items[mod->dim_after[i]])->name);
    for (int l = 0; l < g->nlaunches; l++) {
        int any = 0;
        for (int i = 0; i < dims->n; i++) {
            const IrDim *d = dims->items[i];
            if (count_launch(g, i) != l)
                continue;
            int c = em_gpu_buf_index(g, mod->dim_count[i]);
            if (c < 0)
                return ir_fail("the extent %s is counted in %s, which is not a model buffer", d->name,
                               mod->dim_count[i]->name);
            if (!any)
                sb_printf(o, "    case %d:    /* %s */\n", l, g->launches[l].l.name);
            any = 1;
            sb_printf(o, "        /* the extent %s, computed by %s */\n", d->name, mod->dim_count[i]->name);
            sb_printf(o, "        if (read(ctx, %d, &%s, sizeof %s))\n            return KGEN_ERR_DEVICE;\n", c, d->name,
                      d->name);
            sb_printf(o, "        if (%s < %lld || %s > %lld)\n            return KGEN_ERR_SHAPE;\n", d->name,
                      (long long)d->lo, d->name, (long long)d->hi);
        }
        if (!any)
            continue;
        const Program *p = mod->prog;
        for (int i = 0; i < p->checks.n; i++) {
            int after = em_c_check_after(mod, p->checks.items[i]);
            if (after < 0 || g->launches[l].k != mod->kernels.items[after])
                continue;
            sb_puts(o, "        /* ");
            em_comment_text(o, p->check_msgs.items[i]);
            sb_puts(o, " */\n        if (!");
            em_c_put_dim_expr(o, p->checks.items[i]);
            sb_puts(o, ")\n            return KGEN_ERR_SHAPE;\n");
        }
        sb_puts(o, "        break;\n");
    }
    sb_puts(o, "    default:\n        return KGEN_OK;\n    }\n");
    sb_printf(o, "    %s_at(", N);
    for (int i = 0; i < dims->n; i++)
        sb_printf(o, "%s%s", i ? ", " : "", ((const IrDim *)dims->items[i])->name);
    sb_puts(o, ");\n    return KGEN_OK;\n}\n");
    return 0;
}

/* With dims decided at run time, after the bound's tables: the dims each launch takes
 * (after its buffers) and NAME_at(), one run's tables (kgen_gpu_dims.h): the bound's
 * copied, then the bytes of the inputs and outputs and the grids that follow the dims. */
static int dims_tables(StrBuf *o, const GProg *g)
{
    const char *N = g->name;
    const PtrVec *dims = &g->dims->dims;
    if (dims->n > 16)
        return ir_fail("%s: %d dims decided at run time, above the GPU hosts' limit of 16", N, dims->n);
    sb_puts(o, "\n/* dims decided at run time: the ones each launch takes after its buffers, and the tables\n"
               " * of one run (the bound's with this run's bytes and grids), see kgen_gpu_dims.h */\n"
               "#include \"kgen_gpu_dims.h\"\n\n");
    for (int i = 0; i < g->nlaunches; i++) {
        const Kernel *k = g->launches[i].k;
        if (!k->dims.n)
            continue;
        sb_printf(o, "static const int %s_dims_%d[%d] = {", N, i, k->dims.n);
        for (int j = 0; j < k->dims.n; j++) {
            int di = dim_index(g->dims, k->dims.items[j]);
            if (di < 0)
                return ir_fail("kernel %s reads %s, which is not a dim of the model", k->name,
                               ((const Var *)k->dims.items[j])->name);
            sb_printf(o, "%s%d", j ? ", " : "", di);
        }
        sb_puts(o, "};\n");
    }
    sb_printf(o, "static const kgen_gpu_dim_args %s_dim_args[%d] = {\n", N, g->nlaunches ? g->nlaunches : 1);
    for (int i = 0; i < g->nlaunches; i++) {
        int n = g->launches[i].k->dims.n;
        sb_printf(o, n ? "    {%d, %s_dims_%d},\n" : "    {0, NULL},\n", n, N, i);
    }
    if (!g->nlaunches)
        sb_puts(o, "    {0, NULL},\n");
    sb_puts(o, "};\n");
    sb_printf(o, "static kgen_gpu_buffer %s_run_buffers[%d];\nstatic kgen_gpu_launch %s_run_launches[%d];\n"
                 "static kgen_gpu_run %s_run;\n\n",
              N, g->nbufs ? g->nbufs : 1, N, g->nlaunches ? g->nlaunches : 1, N);
    int values = has_value_dims(g);
    if (values)
        sb_printf(o, "static int %s_after(int launch, kgen_gpu_read_fn read, void *ctx);\n\n", N);
    sb_printf(o, "/* the tables at these extents (each in its range: the caller checks) */\nstatic const kgen_gpu_run *%s_at(", N);
    for (int i = 0; i < dims->n; i++)
        sb_printf(o, "%sint64_t %s", i ? ", " : "", ((const IrDim *)dims->items[i])->name);
    sb_puts(o, ")\n{\n");
    sb_printf(o, "    memcpy(%s_run_buffers, %s_buffers, sizeof %s_run_buffers);\n", N, N, N);
    sb_printf(o, "    memcpy(%s_run_launches, %s_launches, sizeof %s_run_launches);\n", N, N, N);
    for (int i = 0; i < g->nbufs; i++) {
        if (!g->bufs[i].dbytes)
            continue;
        sb_printf(o, "    %s_run_buffers[%d].bytes = (size_t)", N, i);
        em_c_put_dim_expr(o, g->bufs[i].dbytes);
        sb_puts(o, ";    /* ");
        em_comment_text(o, g->bufs[i].name);
        sb_puts(o, " */\n");
    }
    for (int i = 0; i < g->nlaunches; i++)
        for (int j = 0; j < 3; j++) {
            if (!g->launches[i].l.dgrid[j])
                continue;
            sb_printf(o, "    %s_run_launches[%d].grid[%d] = kgen_gpu_blocks(", N, i, j);
            em_c_put_dim_expr(o, g->launches[i].l.dgrid[j]);
            sb_printf(o, ");    /* %s */\n", g->launches[i].l.name);
        }
    sb_printf(o, "    %s_run.program = %s_program;\n", N, N);
    sb_printf(o, "    %s_run.program.buffers = %s_run_buffers;\n", N, N);
    sb_printf(o, "    %s_run.program.launches = %s_run_launches;\n", N, N);
    sb_printf(o, "    %s_run.args = %s_dim_args;\n    %s_run.ndims = %d;\n", N, N, N, dims->n);
    for (int i = 0; i < dims->n; i++)
        sb_printf(o, "    %s_run.dims[%d] = (int32_t)%s;\n", N, i, ((const IrDim *)dims->items[i])->name);
    if (values)
        sb_printf(o, "    %s_run.after = %s_after;\n", N, N);
    sb_printf(o, "    return &%s_run;\n}\n", N);
    return values ? after_hook(o, g) : 0;
}

/* The launches of kernels [kb, ke) of the model: *first..*last, or 0 if none */
static int launch_range(const GProg *g, const Model *mod, int kb, int ke, int *first, int *last)
{
    *first = *last = -1;
    for (int i = 0; i < g->nlaunches; i++)
        for (int k = kb; k < ke; k++)
            if (g->launches[i].k == mod->kernels.items[k]) {
                if (*first < 0)
                    *first = i;
                *last = i;
            }
    return *first >= 0;
}

static GControl *add_control(GProg *g)
{
    return g->ncontrols < GPU_MAX_CONTROLS ? &g->controls[g->ncontrols++] : NULL;
}

/* The controls of a model: each run-time loop, and each run-time If's branch (a run of
 * launches under the same condition at one nesting depth). Past GPU_MAX_CONTROLS a branch
 * is left out (it runs whether taken or not, which is what its results allow). */
static int model_controls(GProg *g, const Model *mod)
{
    for (int j = 0; j < mod->nloops; j++) {
        const ModelLoop *ml = &mod->loops[j];
        GControl *c = add_control(g);
        int first, last;
        if (!c)
            return ir_fail("%s: more than %d run-time loops for the %s host", ml->name, GPU_MAX_CONTROLS, g->t->name);
        if (!launch_range(g, mod, ml->begin + 1, ml->end, &first, &last))
            return ir_fail("%s: the loop's kernels have no launches", ml->name);
        *c = (GControl){1, first, last, em_gpu_buf_index(g, ml->cond), (int)ir_dtype_bytes(ml->cond->dtype), 1,
                        ml->trip ? em_gpu_buf_index(g, ml->trip) : -1, ml->trip ? -1 : ml->trip_count};
        if (c->cond < 0 || (ml->trip && c->trip < 0))
            return ir_fail("%s: its condition or trip count is not a model buffer", ml->name);
    }
    for (int d = 0; d < IR_MAX_GUARDS; d++)
        for (int k = 0; k < mod->kernels.n;) {
            const Kernel *kk = mod->kernels.items[k];
            if (kk->nguards <= d) {
                k++;
                continue;
            }
            int e = k + 1;   /* the kernels after it under the same condition */
            while (e < mod->kernels.n) {
                const Kernel *ke = mod->kernels.items[e];
                if (ke->nguards <= d || ke->guard_buf[d] != kk->guard_buf[d] || ke->guard_value[d] != kk->guard_value[d])
                    break;
                e++;
            }
            int first, last, cond = em_gpu_buf_index(g, kk->guard_buf[d]);
            GControl *c;
            if (cond >= 0 && launch_range(g, mod, k, e, &first, &last) && (c = add_control(g)))
                *c = (GControl){0, first, last, cond, (int)ir_dtype_bytes(kk->guard_buf[d]->dtype), kk->guard_value[d],
                                -1, -1};
            k = e;
        }
    return 0;
}

/* ", "KEY": "EXPR"" for a run-time extent of the Metal manifest (a C expression of the dims) */
static void json_dim_expr(StrBuf *o, const char *key, const Expr *e)
{
    sb_printf(o, ", \"%s\": \"", key);
    em_c_put_dim_expr(o, e);
    sb_puts(o, "\"");
}

/* The Metal manifest: the same tables as JSON, for a host in any language. With dims
 * decided at run time also the dims (each launch's kernel takes the ones it lists after
 * its buffers, as 4-byte ints) and, as C expressions of them, the bytes of the inputs and
 * outputs and the grids that follow them (bytes and threadgroups hold the bound's); a dim
 * computed from values names the buffer whose element 0 (int64) holds it once the launch
 * count_after_launch has completed. */
static void manifest(StrBuf *o, const GProg *g, const char *metal_file)
{
    sb_printf(o, "{\n  \"generator\": \"kgen\",\n  \"name\": \"%s\",\n  \"library_source\": \"%s\",\n", g->name,
              metal_file);
    for (int i = 0; g->dims && i < g->dims->dims.n; i++) {
        const IrDim *d = g->dims->dims.items[i];
        sb_printf(o, "%s    {\"name\": \"%s\", \"lo\": %lld, \"hi\": %lld, \"input\": %d, \"dim\": %d", i ? "" : "  \"dims\": [\n",
                  d->name, (long long)d->lo, (long long)d->hi, d->input, d->dim);
        if (d->count)   /* computed from values: element 0 (int64) of a buffer, after a launch */
            sb_printf(o, ", \"count_buffer\": %d, \"count_after_launch\": %d",
                      em_gpu_buf_index(g, g->mod->dim_count[i]), count_launch(g, i));
        sb_printf(o, "}%s\n", i + 1 < g->dims->dims.n ? "," : "\n  ],");
    }
    sb_printf(o, "  \"arena_bytes\": %lld,\n  \"buffers\": [\n", (long long)g->arena_bytes);
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *b = &g->bufs[i];
        sb_printf(o, "    {\"kind\": \"%s\", \"index\": %d, \"offset\": %lld, \"bytes\": %lld, \"name\": \"", kind_json[b->kind],
                  b->index, (long long)b->offset, (long long)b->bytes);
        for (const char *c = b->name; *c; c++)
            sb_printf(o, (*c == '"' || *c == '\\') ? "\\%c" : ((unsigned char)*c < 0x20 ? "?" : "%c"), *c);
        sb_puts(o, "\"");
        if (b->dbytes)
            json_dim_expr(o, "bytes_at_run_time", b->dbytes);
        sb_printf(o, "}%s\n", i + 1 < g->nbufs ? "," : "");
    }
    sb_puts(o, "  ],\n  \"launches\": [\n");
    for (int i = 0; i < g->nlaunches; i++) {
        const EmLaunch *l = &g->launches[i].l;
        int args[KG_MAX_ARGS + 1024];
        int n = launch_args(g, g->launches[i].k, args);
        sb_printf(o, "    {\"kernel\": \"%s\", \"threadgroups\": [%lld, %lld, %lld], \"threads_per_threadgroup\": [%lld, %lld, %lld], \"buffers\": [",
                  l->name, (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                  (long long)l->block[1], (long long)l->block[2]);
        for (int a = 0; a < n; a++)
            sb_printf(o, "%s%d", a ? ", " : "", args[a]);
        sb_puts(o, "]");
        const Kernel *k = g->launches[i].k;
        for (int j = 0; g->dims && j < k->dims.n; j++)
            sb_printf(o, "%s%d%s", j ? ", " : ", \"dims\": [", dim_index(g->dims, k->dims.items[j]), j + 1 < k->dims.n ? "" : "]");
        for (int j = 0; j < 3; j++)
            if (l->dgrid[j])
                json_dim_expr(o, ir_fmt("threadgroups_%c_at_run_time", "xyz"[j]), l->dgrid[j]);
        sb_printf(o, "}%s\n", i + 1 < g->nlaunches ? "," : "");
    }
    sb_puts(o, "  ]\n}\n");
}

/* The first lines of a host entry: its array arguments gathered as ins[] and outs[]. */
static void put_io_arrays(StrBuf *o, const GProg *g, const char *const *in_names, const char *const *out_names)
{
    sb_printf(o, "    const void *ins[%d] = {", g->ninputs ? g->ninputs : 1);
    for (int i = 0; i < g->ninputs; i++)
        sb_printf(o, "%s%s", i ? ", " : "", in_names[i]);
    sb_puts(o, g->ninputs ? "};\n" : "NULL};\n");
    sb_printf(o, "    void *outs[%d] = {", g->noutputs ? g->noutputs : 1);
    for (int i = 0; i < g->noutputs; i++)
        sb_printf(o, "%s%s", i ? ", " : "", out_names[i]);
    sb_puts(o, g->noutputs ? "};\n" : "NULL};\n");
}

/* The entry points over host arrays: NAME(inputs..., outputs..., arena) and the rest, over
 * the API's host runtime. */
static void host_entry(StrBuf *o, const GProg *g, const EmModel *m, const char *signature_text,
                       const char *const *in_names, const char *const *out_names)
{
    const char *N = g->name;
    const GpuApi *api = g->api;
    sb_printf(o, "\nstatic %s %s_state;\n\n", api->state_type, N);
    sb_printf(o, "%s\n{\n", signature_text);
    put_io_arrays(o, g, in_names, out_names);
    sb_printf(o, "    (void)%s;    /* the arena is in device memory */\n", in_names[g->ninputs + g->noutputs]);
    if (g->dims)
        em_c_dim_checks(o, m);
    /* the dims computed from values that outputs have: their values after a run */
    int nret = 0;
    for (int i = 0; g->dims && i < g->dims->dims.n; i++)
        nret += em_c_dim_returned(m, g->dims->dims.items[i]);
    sb_printf(o, nret ? "    int status = %s(&%s_state, &%s_program, " : "    return %s(&%s_state, &%s_program, ",
              g->dims ? api->run_dims : api->run, N, N);
    if (g->dims)
        sb_printf(o, "%s, ", at_call(g));
    if (api->run_file) {
        char *UP = em_c_macro_name(N);
        sb_printf(o, "%s%s, ", UP, api->run_file);
        free(UP);
    }
    sb_puts(o, "ins, outs);\n");
    if (nret) {
        sb_puts(o, "    if (status != KGEN_OK)\n        return status;\n");
        for (int i = 0; i < g->dims->dims.n; i++)
            if (em_c_dim_returned(m, g->dims->dims.items[i]))
                sb_printf(o, "    *out_%s = %s_run.dims[%d];\n", ((const IrDim *)g->dims->dims.items[i])->name, N, i);
        sb_puts(o, "    return KGEN_OK;\n");
    }
    sb_puts(o, "}\n\n");
    sb_printf(o, "double %s_device_ms(void)\n{\n    return %s_state.last_ms;\n}\n\n", N, N);
    sb_printf(o, "void %s_release(void)\n{\n    %s(&%s_state, &%s_program);\n}\n", N, api->release, N, N);
}

/* The Metal host's parts for dims computed from values (kgen_metal_host.m's READ,
 * VALUES_START, AFTER, VALUES_MS and DIM_OUT): after a launch that counts one, the
 * command buffer so far committed and waited for, NAME_after reading the count from the
 * shared buffer, the rest encoded in a new command buffer; the device time summed; the
 * counts returned. */
static void metal_values(StrBuf *v, const GProg *g, const EmModel *m)
{
    const char *N = g->name;
    const PtrVec *dims = &g->dims->dims;
    sb_printf(&v[0], "\n/* kgen_gpu_read_fn: the first bytes of a buffer (shared storage: the command buffer that\n"
                     " * wrote it has completed) */\n"
                     "static int %s_read(void *ctx, int buffer, void *dst, size_t bytes)\n{\n"
                     "    const kgen_gpu_buffer *b = &%s_buffers[buffer];\n"
                     "    (void)ctx;\n"
                     "    memcpy(dst, (const char *)[(id<MTLBuffer>)%s_bufs[buffer] contents] + (b->kind == KGEN_GPU_ARENA ? b->offset : 0), bytes);\n"
                     "    return 0;\n}\n",
              N, N, N);
    sb_puts(&v[1], "        double ms_before = 0;   /* the command buffers before a count was read back */\n");
    sb_puts(&v[2], "            if (");
    for (int i = 0, n = 0; i < dims->n; i++)
        if (count_launch(g, i) >= 0)
            sb_printf(&v[2], "%si == %d", n++ ? " || " : "", count_launch(g, i));
    sb_printf(&v[2], ") {\n"
                     "                /* it counts a dim from values: run what is encoded, read the count back */\n"
                     "                [enc endEncoding];\n"
                     "                [cb commit];\n"
                     "                [cb waitUntilCompleted];\n"
                     "                if (cb.error) {\n"
                     "                    fprintf(stderr, \"%s: Metal: %%s\\n\", cb.error.localizedDescription.UTF8String);\n"
                     "                    return KGEN_ERR_DEVICE;\n"
                     "                }\n"
                     "                ms_before += (cb.GPUEndTime - cb.GPUStartTime) * 1e3;\n"
                     "                int status = %s_after(i, %s_read, NULL);\n"
                     "                if (status != KGEN_OK)\n"
                     "                    return status;\n"
                     "                cb = [%s_queue commandBuffer];\n"
                     "                enc = [cb computeCommandEncoder];\n"
                     "            }\n",
              N, N, N, N);
    sb_printf(&v[3], "        %s_ms += ms_before;\n", N);
    for (int i = 0; i < dims->n; i++)
        if (em_c_dim_returned(m, dims->items[i]))
            sb_printf(&v[4], "    *out_%s = %s_run.dims[%d];\n", ((const IrDim *)dims->items[i])->name, N, i);
}

/* A host written whole as a template (Metal's Objective-C): the weights' declarations and
 * the tables, then the template. */
static int host_from_template(StrBuf *o, const GProg *g, const EmModel *m, const char *signature_text,
                              const char *const *in_names, const char *const *out_names)
{
    const char *N = g->name;
    StrBuf weights = {0}, tables = {0}, io = {0}, checks = {0}, args = {0}, values[5] = {{0}};
    for (int i = 0; i < g->nweights; i++) {
        const GBuf *b = NULL;
        for (int j = 0; j < g->nbufs; j++)
            if (g->bufs[j].kind == GPU_WEIGHT && g->bufs[j].index == i)
                b = &g->bufs[j];
        if (b && b->b)
            sb_printf(&weights, "extern const %s %s_w_%s[];\n", ir_dtype_ctype(b->b->dtype), N, b->b->name);
    }
    sb_printf(&weights, "static const void *const %s_weights[%d] = {", N, g->nweights ? g->nweights : 1);
    for (int i = 0; i < g->nweights; i++) {
        for (int j = 0; j < g->nbufs; j++)
            if (g->bufs[j].kind == GPU_WEIGHT && g->bufs[j].index == i)
                sb_printf(&weights, "%s%s_w_%s", i ? ", " : "", N, g->bufs[j].b->name);
    }
    sb_puts(&weights, g->nweights ? "};\n" : "NULL};\n");
    int rc = host_tables(&tables, g, ir_fmt("%s_weights", N));
    if (rc == 0 && g->dims) {
        /* the dims: checked, this run's tables, and each launch's after its buffers */
        rc = dims_tables(&tables, g);
        em_c_dim_checks(&checks, m);
        sb_printf(&checks, "    p = &%s->program;\n", at_call(g));
        sb_printf(&args, "            for (int a = 0; a < %s_run.args[i].ndims; a++)\n"
                         "                [enc setBytes:&%s_run.dims[%s_run.args[i].dims[a]] length:sizeof(int32_t) atIndex:l->nargs + a];\n",
                  N, N, N);
        if (rc == 0 && has_value_dims(g))
            metal_values(values, g, m);
    }
    put_io_arrays(&io, g, in_names, out_names);
    char *UP = em_c_macro_name(N);
    const char *vars[] = {"NAME", N, "MACRO", UP, "FILE", g->file, "WEIGHTS", weights.data, "TABLES",
                          tables.data ? tables.data : "", "SIGNATURE", signature_text, "IO", io.data,
                          "ARENA", in_names[g->ninputs + g->noutputs], "DIM_CHECKS", checks.data ? checks.data : "",
                          "DIM_ARGS", args.data ? args.data : "", "READ", values[0].data ? values[0].data : "",
                          "VALUES_START", values[1].data ? values[1].data : "", "AFTER", values[2].data ? values[2].data : "",
                          "VALUES_MS", values[3].data ? values[3].data : "", "DIM_OUT", values[4].data ? values[4].data : "",
                          NULL};
    em_c_banner(o, g->source);
    if (rc == 0)
        rc = em_template_fill(o, g->api->host_template, vars);
    free(UP);
    sb_free(&weights);
    sb_free(&tables);
    sb_free(&io);
    sb_free(&checks);
    sb_free(&args);
    for (int i = 0; i < 5; i++)
        sb_free(&values[i]);
    return rc;
}

static void put_runtime_headers(OutSet *o, const GProg *g)
{
    const char *const names[] = {"kgen_runtime.h", "kgen_gpu.h", g->api->host_header,
                                 g->dims ? "kgen_gpu_dims.h" : NULL};
    for (int i = 0; i < 4; i++) {
        if (!names[i])
            continue;
        StrBuf *r = em_outset_add(o, names[i]);
        em_c_banner(r, g->source);
        sb_puts(r, em_template(names[i]));
    }
}

/* The parameter names of a host entry, inputs, outputs and then the arena/workspace. */
static const char **entry_names(const GProg *g, const Buffer *const *params, int n, const char *last)
{
    const char **names = ir_alloc(sizeof *names * (size_t)(n + 2));
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if ((pass == 0) == (params[i]->is_input != 0))
                names[k++] = params[i]->name;
    names[k++] = last;
    (void)g;
    return names;
}

/* Files common to kernels and models once the tables are known. */
static int gpu_files(OutSet *o, GProg *g, const char *signature_text, const char **names, int with_weights,
                     const EmModel *m)
{
    const char *N = g->name;
    char *UP = em_c_macro_name(N);
    const char *wa = with_weights ? ir_fmt("%s_weights", N) : "NULL";
    StrBuf weights_decl = {0};
    if (with_weights) {
        const Model *mod = m->model;
        sb_puts(&weights_decl, "\n/* weights: the arrays of NAME_weights.c, uploaded on the first run */\n");
        for (int i = 0; i < mod->constants.n; i++) {
            const Buffer *b = mod->constants.items[i];
            sb_printf(&weights_decl, "extern%s const %s %s[%lld];\n", g->api->cplusplus ? " \"C\"" : "",
                      ir_dtype_ctype(b->dtype), em_c_weight_symbol(m, b),
                      (long long)(b->size ? ir_dtype_size(b->dtype, b->size) / ir_dtype_bytes(b->dtype) : 1));
        }
        sb_printf(&weights_decl, "static const void *const %s_weights[%d] = {", N, mod->constants.n ? mod->constants.n : 1);
        for (int i = 0; i < mod->constants.n; i++)
            sb_printf(&weights_decl, "%s%s", i ? ", " : "", em_c_weight_symbol(m, mod->constants.items[i]));
        sb_puts(&weights_decl, mod->constants.n ? "};\n" : "NULL};\n");
    }
    const GpuApi *api = g->api;
    StrBuf *c;
    int rc = 0;
    if (!strcmp(api->device_file, api->host_file)) {   /* CUDA: the host follows the kernels */
        c = em_outset_add(o, ir_fmt(api->host_file, g->file));
        sb_puts(c, g->device.data);
        sb_puts(c, "\n/* ---------------------------------------------------------------- host */\n\n");
    } else {
        sb_puts(em_outset_add(o, ir_fmt(api->device_file, g->file)), g->device.data);
        c = em_outset_add(o, ir_fmt(api->host_file, g->file));
    }
    if (api->host_template) {
        rc = host_from_template(c, g, m, signature_text, names, names + g->ninputs);
        manifest(em_outset_add(o, ir_fmt("%s_manifest.json", g->file)), g, ir_fmt(api->device_file, g->file));
        if (m) {
            /* NAME_tensors and the tables, in plain C beside the host */
            StrBuf *t = em_outset_add(o, ir_fmt("%s_tables.c", g->file));
            em_c_banner(t, g->source);
            sb_printf(t, "/* NAME_tensors and the input/output tables (plain C, beside %s_host.m) */\n#include \"%s.h\"\n", N, N);
            em_c_model_tables(t, m);
        }
    } else {
        const char *vars[] = {"NAME", N, "MACRO", UP, "FILE", g->file, NULL};
        if (strcmp(api->device_file, api->host_file))
            em_c_banner(c, g->source);
        if (em_fill(c, api->host_head, "host head", vars))
            rc = -1;
        if (weights_decl.data)
            sb_puts(c, weights_decl.data);
        if (rc == 0)
            rc = host_tables(c, g, wa);
        if (rc == 0 && g->dims)
            rc = dims_tables(c, g);
        if (api->cplusplus)
            sb_puts(c, "\nextern \"C\" {\n");
        host_entry(c, g, m, signature_text, names, names + g->ninputs);
        if (m)
            em_c_model_tables(c, m);
        if (api->cplusplus)
            sb_puts(c, "\n} /* extern \"C\" */\n");
    }
    sb_free(&weights_decl);
    free(UP);
    put_runtime_headers(o, g);
    return rc;
}

/* The Makefile of a model's runner, from the API's template. */
static int makefile(OutSet *o, const GProg *g, const EmModel *m)
{
    char *UP = em_c_macro_name(g->name);
    const char *vars[] = {"NAME", g->name, "MACRO", UP, "SOURCE", m->source, "SM", ir_fmt("%d", g->t->sm), NULL};
    int rc = em_template_fill(em_outset_add(o, "Makefile"), g->api->makefile, vars);
    free(UP);
    return rc;
}

static int gprog_init(GProg *g, const char *name, const char *source, const Target *t)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->file = name;
    g->source = source;
    g->t = t;
    g->d = em_dialect_for(t->kind);
    g->api = gpu_api(t->kind);
    if (!g->d || !g->api)
        return ir_fail("%s is not a GPU target", t->name);
    return 0;
}

/* (declared in gpu.h) */
int em_gpu_tables_model(GProg *g, const EmModel *m, int controls)
{
    const Model *mod = m->model;
    for (int i = 0; i < m->ninputs + m->noutputs; i++) {
        int in = i < m->ninputs;
        const Buffer *b = in ? m->inputs[i].buf : m->outputs[i - m->ninputs].buf;
        add_buf(g, b, in ? GPU_INPUT : GPU_OUTPUT, in ? i : i - m->ninputs, 0, buf_bytes(b), b->name);
        g->bufs[g->nbufs - 1].dbytes = run_bytes(b);
    }
    for (int i = 0; i < mod->constants.n; i++) {
        const Buffer *b = mod->constants.items[i];
        add_buf(g, b, GPU_WEIGHT, i, 0, buf_bytes(b), b->name);
    }
    for (int i = 0; i < mod->arena.n; i++) {
        const Buffer *b = mod->arena.items[i];
        add_buf(g, b, GPU_ARENA, 0, b->ws_offset, buf_bytes(b), b->name);
    }
    g->ninputs = m->ninputs;
    g->noutputs = m->noutputs;
    g->nweights = mod->constants.n;
    g->mod = mod;
    g->arena_bytes = mod->arena_bytes;
    if (device_kernels(g, (const Kernel *const *)mod->kernels.items, mod->kernels.n))
        return -1;
    /* (the Metal host runs every launch: it reads no condition back) */
    return controls ? model_controls(g, mod) : 0;
}

/* (declared in gpu.h) */
int em_gpu_tables_kernel(GProg *g, const Kernel *k, const Kernel *dk)
{
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        int idx = 0;
        for (int j = 0; j < i; j++)
            idx += ((const Buffer *)k->params.items[j])->is_input == b->is_input;
        add_buf(g, b, b->is_input ? GPU_INPUT : GPU_OUTPUT, idx, 0, buf_bytes(b), b->name);
        if (b->is_input)
            g->ninputs++;
        else
            g->noutputs++;
    }
    add_buf(g, NULL, GPU_ARENA, 0, 0, k->workspace_bytes, "workspace");
    g->arena_bytes = k->workspace_bytes;
    return device_kernels(g, (const Kernel *const *)&dk, 1);
}

int em_gpu_model_files(OutSet *o, const EmModel *m)
{
    const Model *mod = m->model;
    if (m->weights_in_file)
        return ir_fail("--weights=file is not supported for the %s target yet (the weights are uploaded "
                       "from NAME_weights.c)", m->target->name);
    if (mod->nloops && !gpu_api(m->target->kind)->reads_back)
        return ir_fail("%s runs as a loop at run time, which the %s host does not do yet (the C, JS, WASM, "
                       "OpenCL and CUDA targets do; or fix its trip count and condition with --bind so that it "
                       "unrolls)", mod->loops[0].name, m->target->name);
    GProg g;
    if (gprog_init(&g, m->name, m->source, m->target))
        return -1;
    g.dims = mod->prog->dims.n ? mod->prog : NULL;
    int rc = -1;
    if (device_head(&g) || em_gpu_tables_model(&g, m, g.api->reads_back))
        goto done;
    const Buffer **params = ir_alloc(sizeof *params * (size_t)(m->ninputs + m->noutputs + 1));
    for (int i = 0; i < m->ninputs; i++)
        params[i] = m->inputs[i].buf;
    for (int i = 0; i < m->noutputs; i++)
        params[m->ninputs + i] = m->outputs[i].buf;
    const char **names = entry_names(&g, params, m->ninputs + m->noutputs, "arena");
    StrBuf sig = {0};
    em_c_model_signature(&sig, m);
    em_c_model_header(em_outset_add(o, ir_fmt("%s.h", m->name)), m);
    em_c_weights_file(em_outset_add(o, ir_fmt("%s_weights.c", m->name)), m);
    rc = gpu_files(o, &g, sig.data, names, 1, m);
    sb_free(&sig);
    if (rc == 0 && m->with_main) {
        em_c_runner_files(o, m);
        rc = makefile(o, &g, m);
    }
done:
    em_gpu_prog_free(&g);
    return rc;
}

int em_gpu_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t)
{
    if (!(name = em_file_base(k, name)))
        return -1;
    if (k->dims.n)
        return ir_fail("kernel %s reads dims decided at run time: the %s target takes those in models only", k->name,
                       t->name);
    GProg g;
    if (gprog_init(&g, name, source, t))
        return -1;
    char *fn = em_c_func_name(k);
    int rc = -1;
    /* the host entry keeps the C target's name; the device functions get a suffix */
    Kernel dk = *k;
    dk.name = ir_fmt("%s_kernel", fn);
    g.name = fn;
    g.file = name;
    if (device_head(&g) || em_gpu_tables_kernel(&g, k, &dk))
        goto done;
    /* inputs and outputs in parameter order for the tables: map host names */
    const char **names = entry_names(&g, (const Buffer *const *)k->params.items, k->params.n, "workspace");
    StrBuf sig = {0};
    em_print_prototype(&sig, k, &em_dialect_c);
    em_c_kernel_header(em_outset_add(o, ir_fmt("%s.h", name)), k, fn, name, source, t);
    rc = gpu_files(o, &g, sig.data, names, 0, NULL);
    sb_free(&sig);
    if (rc == 0 && !g.api->host_template) {
        /* NAME_tensors, as for C (the file already has the entry it calls) */
        StrBuf *c = NULL;
        for (int i = 0; i < o->n; i++)
            if (!strcmp(o->files[i].name, ir_fmt(g.api->host_file, name)))
                c = &o->files[i].text;
        if (c) {
            if (g.api->cplusplus)
                sb_puts(c, "\nextern \"C\" {\n");
            sb_puts(c, "\n");
            em_c_tensors_entry(c, k, fn, "workspace", NULL);
            if (g.api->cplusplus)
                sb_puts(c, "\n} /* extern \"C\" */\n");
        }
    }
done:
    free(fn);
    em_gpu_prog_free(&g);
    return rc;
}
