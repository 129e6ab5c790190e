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
 * host file. The generated host entry points are the C target's (NAME over host arrays,
 * NAME_tensors over DLPack tensors), so the same runner and tests serve every target.
 *
 * Files:  cuda    NAME.cu (kernels, tables, entry points), NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h, kgen_cuda_host.h
 *         opencl  NAME.cl (self-contained program), NAME_host.c, NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h, kgen_opencl_host.h
 *         metal   NAME.metal, NAME_host.m, NAME_manifest.json, NAME.h, NAME_weights.c,
 *                 kgen_runtime.h, kgen_gpu.h
 *  with --main the runner (NAME_main.c, kgen_io.h, kgen_main.h) and a Makefile.
 */
#include "cfamily.h"
#include "../schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

/* One entry of the buffer table. */
typedef struct {
    const Buffer *b;           /* NULL: the workspace of a single kernel */
    int kind;                  /* KGEN_GPU_* */
    int index;
    int64_t offset, bytes;
    const char *name;
} GBuf;

/* A run-time If's branch or loop over launches [first, last] (kgen_gpu.h). */
#define GPU_MAX_CONTROLS 64   /* KGEN_GPU_MAX_CONTROLS */
typedef struct {
    int loop;                  /* KGEN_GPU_WHILE, else KGEN_GPU_IF */
    int first, last, cond, cond_bytes, value, trip;
    int64_t trip_count;
} GControl;

/* One launch: which kernel it belongs to and the printer's launch data. */
typedef struct {
    const Kernel *k;
    EmLaunch l;
} GLaunch;

typedef struct {
    const char *name;          /* C prefix of the symbols */
    const char *file;          /* base name of the files */
    const char *source;
    const Target *t;
    const Dialect *d;
    GBuf *bufs;
    int nbufs, capbufs;
    GLaunch *launches;
    int nlaunches, caplaunches;
    int64_t arena_bytes;
    int ninputs, noutputs, nweights;
    StrBuf device;             /* the device source */
    GControl controls[GPU_MAX_CONTROLS];   /* run-time If and loops (kgen_gpu_control) */
    int ncontrols;
} GProg;

enum { GPU_INPUT, GPU_OUTPUT, GPU_WEIGHT, GPU_ARENA };
static const char *const kind_macro[] = {"KGEN_GPU_INPUT", "KGEN_GPU_OUTPUT", "KGEN_GPU_WEIGHT", "KGEN_GPU_ARENA"};
static const char *const kind_json[] = {"input", "output", "weight", "arena"};

static void add_buf(GProg *g, const Buffer *b, int kind, int index, int64_t offset, int64_t bytes, const char *name)
{
    if (g->nbufs == g->capbufs) {
        g->capbufs = g->capbufs ? g->capbufs * 2 : 16;
        g->bufs = realloc(g->bufs, sizeof *g->bufs * (size_t)g->capbufs);
        if (!g->bufs)
            ir_die("out of memory");
    }
    g->bufs[g->nbufs++] = (GBuf){b, kind, index, offset, bytes, name};
}

static int buf_index(const GProg *g, const Buffer *b)
{
    for (int i = 0; i < g->nbufs; i++)
        if (g->bufs[i].b == b)
            return i;
    return -1;
}

static int64_t buf_bytes(const Buffer *b) { return ir_dtype_size(b->dtype, b->size); }

static void gprog_free(GProg *g)
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
    switch (g->t->kind) {
    case TARGET_CUDA:
        sb_puts(o, "#include \"kgen_runtime.h\"\n");
        return 0;
    case TARGET_OPENCL:
    case TARGET_METAL: {
        const char *head = em_template(g->t->kind == TARGET_OPENCL ? "kgen_opencl.h" : "kgen_metal.h");
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
    default: return ir_fail("%s is not a GPU target", g->t->name);
    }
}

/* Print every kernel, recording its launches. */
static int device_kernels(GProg *g, const Kernel *const *ks, int nk)
{
    for (int i = 0; i < nk; i++) {
        EmLaunch *ls = NULL;
        sb_puts(&g->device, "\n");
        int n = em_print_gpu_kernel(&g->device, ks[i], g->d, g->t, &ls);
        if (n < 0)
            return -1;
        for (int j = 0; j < n; j++) {
            if (g->nlaunches == g->caplaunches) {
                g->caplaunches = g->caplaunches ? g->caplaunches * 2 : 16;
                g->launches = realloc(g->launches, sizeof *g->launches * (size_t)g->caplaunches);
                if (!g->launches)
                    ir_die("out of memory");
            }
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
        int bi = buf_index(g, k->params.items[i]);
        if (bi < 0)
            return ir_fail("kernel %s: parameter %s is not a model buffer", k->name,
                           ((const Buffer *)k->params.items[i])->name);
        out[n++] = bi;
    }
    if (!k->internal)
        out[n++] = buf_index(g, NULL);
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
        em_c_comment(o, b->name);
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
                  g->t->kind == TARGET_CUDA ? "(const void *)" : "NULL", g->t->kind == TARGET_CUDA ? l->name : "",
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
        *c = (GControl){1, first, last, buf_index(g, ml->cond), (int)ir_dtype_bytes(ml->cond->dtype), 1,
                        ml->trip ? buf_index(g, ml->trip) : -1, ml->trip ? -1 : ml->trip_count};
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
            int first, last, cond = buf_index(g, kk->guard_buf[d]);
            GControl *c;
            if (cond >= 0 && launch_range(g, mod, k, e, &first, &last) && (c = add_control(g)))
                *c = (GControl){0, first, last, cond, (int)ir_dtype_bytes(kk->guard_buf[d]->dtype), kk->guard_value[d],
                                -1, -1};
            k = e;
        }
    return 0;
}

/* The Metal manifest: the same tables as JSON, for a host in any language. */
static void manifest(StrBuf *o, const GProg *g, const char *metal_file)
{
    sb_printf(o, "{\n  \"generator\": \"kgen\",\n  \"name\": \"%s\",\n  \"library_source\": \"%s\",\n", g->name,
              metal_file);
    sb_printf(o, "  \"arena_bytes\": %lld,\n  \"buffers\": [\n", (long long)g->arena_bytes);
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *b = &g->bufs[i];
        sb_printf(o, "    {\"kind\": \"%s\", \"index\": %d, \"offset\": %lld, \"bytes\": %lld, \"name\": \"", kind_json[b->kind],
                  b->index, (long long)b->offset, (long long)b->bytes);
        for (const char *c = b->name; *c; c++)
            sb_printf(o, (*c == '"' || *c == '\\') ? "\\%c" : ((unsigned char)*c < 0x20 ? "?" : "%c"), *c);
        sb_printf(o, "\"}%s\n", i + 1 < g->nbufs ? "," : "");
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
        sb_printf(o, "]}%s\n", i + 1 < g->nlaunches ? "," : "");
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

/* The entry points over host arrays: NAME(inputs..., outputs..., arena) and the rest. */
static void host_entry(StrBuf *o, const GProg *g, const char *signature_text, const char *const *in_names,
                       const char *const *out_names)
{
    const char *N = g->name;
    const char *st = g->t->kind == TARGET_CUDA ? "kgen_cuda_state" : "kgen_cl_state";
    sb_printf(o, "\nstatic %s %s_state;\n\n", st, N);
    sb_printf(o, "%s\n{\n", signature_text);
    put_io_arrays(o, g, in_names, out_names);
    sb_printf(o, "    (void)%s;    /* the arena is in device memory */\n", in_names[g->ninputs + g->noutputs]);
    if (g->t->kind == TARGET_CUDA)
        sb_printf(o, "    return kgen_cuda_run(&%s_state, &%s_program, ins, outs);\n}\n\n", N, N);
    else {
        char *UP = em_c_macro_name(N);
        sb_printf(o, "    return kgen_cl_run(&%s_state, &%s_program, %s_CL_FILE, ins, outs);\n}\n\n", N, N, UP);
        free(UP);
    }
    sb_printf(o, "double %s_device_ms(void)\n{\n    return %s_state.last_ms;\n}\n\n", N, N);
    sb_printf(o, "void %s_release(void)\n{\n    %s(&%s_state, &%s_program);\n}\n", N,
              g->t->kind == TARGET_CUDA ? "kgen_cuda_release" : "kgen_cl_release", N, N);
}

/* The Objective-C host for Metal: reads the manifest's tables from the C arrays. */
static void metal_host(StrBuf *o, const GProg *g, const char *signature_text, const char *const *in_names,
                       const char *const *out_names)
{
    const char *N = g->name;
    char *UP = em_c_macro_name(N);
    em_c_banner(o, g->source);
    sb_puts(o, "/* The Metal host: compiles NAME.metal at run time (or use a .metallib from xcrun metal),\n"
               " * makes one pipeline per launch, keeps the weights and the arena in device buffers and\n"
               " * dispatches the launches in order in one compute encoder. Build on macOS/iOS with\n"
               " * -framework Metal -framework Foundation (see the Makefile). */\n");
    sb_puts(o, "#import <Foundation/Foundation.h>\n#import <Metal/Metal.h>\n#include <stdio.h>\n\n");
    sb_printf(o, "#include \"%s.h\"\n#include \"kgen_gpu.h\"\n\n", g->file);
    sb_printf(o, "#ifndef %s_METAL_FILE\n#define %s_METAL_FILE \"%s.metal\"\n#endif\n", UP, UP, g->file);
    for (int i = 0; i < g->nweights; i++) {
        const GBuf *b = NULL;
        for (int j = 0; j < g->nbufs; j++)
            if (g->bufs[j].kind == GPU_WEIGHT && g->bufs[j].index == i)
                b = &g->bufs[j];
        if (b && b->b)
            sb_printf(o, "extern const %s %s_w_%s[];\n", ir_dtype_ctype(b->b->dtype), N, b->b->name);
    }
    sb_printf(o, "static const void *const %s_weights[%d] = {", N, g->nweights ? g->nweights : 1);
    for (int i = 0; i < g->nweights; i++) {
        for (int j = 0; j < g->nbufs; j++)
            if (g->bufs[j].kind == GPU_WEIGHT && g->bufs[j].index == i)
                sb_printf(o, "%s%s_w_%s", i ? ", " : "", N, g->bufs[j].b->name);
    }
    sb_puts(o, g->nweights ? "};\n" : "NULL};\n");
    StrBuf tables = {0};
    GProg copy = *g;
    host_tables(&tables, &copy, ir_fmt("%s_weights", N));
    sb_puts(o, tables.data ? tables.data : "");
    sb_free(&tables);
    sb_printf(o, "\nstatic id<MTLDevice> %s_dev;\nstatic id<MTLCommandQueue> %s_queue;\n", N, N);
    sb_printf(o, "static NSMutableArray *%s_pipes;\nstatic NSMutableArray *%s_bufs;   /* one per buffer entry */\n", N, N);
    sb_printf(o, "static id<MTLBuffer> %s_arena;\nstatic double %s_ms;\n\n", N, N);
    sb_printf(o, "static int %s_init(void)\n{\n", N);
    sb_printf(o, "    const kgen_gpu_program *p = &%s_program;\n", N);
    sb_printf(o, "    NSError *err = nil;\n    %s_dev = MTLCreateSystemDefaultDevice();\n", N);
    sb_printf(o, "    if (!%s_dev) {\n        fprintf(stderr, \"%s: Metal: no device\\n\");\n        return KGEN_ERR_DEVICE;\n    }\n", N, N);
    sb_printf(o, "    NSString *src = [NSString stringWithContentsOfFile:@%s_METAL_FILE encoding:NSUTF8StringEncoding error:&err];\n", UP);
    sb_printf(o, "    id<MTLLibrary> lib = src ? [%s_dev newLibraryWithSource:src options:nil error:&err] : nil;\n", N);
    sb_printf(o, "    if (!lib) {\n        fprintf(stderr, \"%s: Metal: %%s: %%s\\n\", %s_METAL_FILE, err.localizedDescription.UTF8String);\n        return KGEN_ERR_DEVICE;\n    }\n", N, UP);
    sb_printf(o, "    %s_queue = [%s_dev newCommandQueue];\n    %s_pipes = [NSMutableArray array];\n    %s_bufs = [NSMutableArray array];\n", N, N, N, N);
    sb_printf(o, "    for (int i = 0; i < p->nlaunches; i++) {\n"
                 "        id<MTLFunction> f = [lib newFunctionWithName:@(p->launches[i].name)];\n"
                 "        id<MTLComputePipelineState> ps = f ? [%s_dev newComputePipelineStateWithFunction:f error:&err] : nil;\n"
                 "        if (!ps) {\n"
                 "            fprintf(stderr, \"%s: Metal: kernel %%s: %%s\\n\", p->launches[i].name, err ? err.localizedDescription.UTF8String : \"not found\");\n"
                 "            return KGEN_ERR_DEVICE;\n"
                 "        }\n"
                 "        [%s_pipes addObject:ps];\n    }\n", N, N, N);
    sb_printf(o, "    %s_arena = [%s_dev newBufferWithLength:(p->arena_bytes ? p->arena_bytes : 4) options:MTLResourceStorageModeShared];\n", N, N);
    sb_printf(o, "    for (int i = 0; i < p->nbuffers; i++) {\n"
                 "        const kgen_gpu_buffer *b = &p->buffers[i];\n"
                 "        size_t n = b->bytes ? b->bytes : 4;\n"
                 "        id<MTLBuffer> mb = b->kind == KGEN_GPU_ARENA ? %s_arena\n"
                 "                         : b->kind == KGEN_GPU_WEIGHT && b->bytes ? [%s_dev newBufferWithBytes:p->weights[b->index] length:n options:MTLResourceStorageModeShared]\n"
                 "                         : [%s_dev newBufferWithLength:n options:MTLResourceStorageModeShared];\n"
                 "        [%s_bufs addObject:mb];\n    }\n    return KGEN_OK;\n}\n\n", N, N, N, N);
    sb_printf(o, "%s\n{\n", signature_text);
    sb_printf(o, "    const kgen_gpu_program *p = &%s_program;\n", N);
    put_io_arrays(o, g, in_names, out_names);
    sb_printf(o, "    (void)%s;\n", in_names[g->ninputs + g->noutputs]);
    sb_printf(o, "    if (!%s_dev && %s_init() != KGEN_OK)\n        return KGEN_ERR_DEVICE;\n", N, N);
    sb_printf(o, "    @autoreleasepool {\n"
                 "        for (int i = 0; i < p->nbuffers; i++)\n"
                 "            if (p->buffers[i].kind == KGEN_GPU_INPUT && p->buffers[i].bytes)\n"
                 "                memcpy([(id<MTLBuffer>)%s_bufs[i] contents], ins[p->buffers[i].index], p->buffers[i].bytes);\n"
                 "        id<MTLCommandBuffer> cb = [%s_queue commandBuffer];\n"
                 "        id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];\n"
                 "        for (int i = 0; i < p->nlaunches; i++) {\n"
                 "            const kgen_gpu_launch *l = &p->launches[i];\n"
                 "            [enc setComputePipelineState:%s_pipes[i]];\n"
                 "            for (int a = 0; a < l->nargs; a++) {\n"
                 "                const kgen_gpu_buffer *b = &p->buffers[l->args[a]];\n"
                 "                [enc setBuffer:%s_bufs[l->args[a]] offset:(b->kind == KGEN_GPU_ARENA ? b->offset : 0) atIndex:a];\n"
                 "            }\n"
                 "            [enc dispatchThreadgroups:MTLSizeMake(l->grid[0], l->grid[1], l->grid[2])\n"
                 "                threadsPerThreadgroup:MTLSizeMake(l->block[0], l->block[1], l->block[2])];\n"
                 "        }\n"
                 "        [enc endEncoding];\n        [cb commit];\n        [cb waitUntilCompleted];\n"
                 "        if (cb.error) {\n"
                 "            fprintf(stderr, \"%s: Metal: %%s\\n\", cb.error.localizedDescription.UTF8String);\n"
                 "            return KGEN_ERR_DEVICE;\n        }\n"
                 "        %s_ms = (cb.GPUEndTime - cb.GPUStartTime) * 1e3;\n"
                 "        for (int i = 0; i < p->nbuffers; i++)\n"
                 "            if (p->buffers[i].kind == KGEN_GPU_OUTPUT && p->buffers[i].bytes)\n"
                 "                memcpy(outs[p->buffers[i].index], [(id<MTLBuffer>)%s_bufs[i] contents], p->buffers[i].bytes);\n"
                 "    }\n    return KGEN_OK;\n}\n\n", N, N, N, N, N, N, N);
    sb_printf(o, "double %s_device_ms(void)\n{\n    return %s_ms;\n}\n\n", N, N);
    sb_printf(o, "void %s_release(void)\n{\n    %s_pipes = nil;\n    %s_bufs = nil;\n    %s_arena = nil;\n    %s_queue = nil;\n    %s_dev = nil;\n}\n",
              N, N, N, N, N, N);
    free(UP);
}

static void put_runtime_headers(OutSet *o, const GProg *g)
{
    static const char *const names[] = {"kgen_runtime.h", "kgen_gpu.h", "kgen_cuda_host.h", "kgen_opencl_host.h"};
    for (int i = 0; i < 4; i++) {
        if ((i == 2 && g->t->kind != TARGET_CUDA) || (i == 3 && g->t->kind != TARGET_OPENCL))
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
            sb_printf(&weights_decl, "extern%s const %s %s[%lld];\n", g->t->kind == TARGET_CUDA ? " \"C\"" : "",
                      ir_dtype_ctype(b->dtype), em_c_weight_symbol(m, b),
                      (long long)(b->size ? ir_dtype_size(b->dtype, b->size) / ir_dtype_bytes(b->dtype) : 1));
        }
        sb_printf(&weights_decl, "static const void *const %s_weights[%d] = {", N, mod->constants.n ? mod->constants.n : 1);
        for (int i = 0; i < mod->constants.n; i++)
            sb_printf(&weights_decl, "%s%s", i ? ", " : "", em_c_weight_symbol(m, mod->constants.items[i]));
        sb_puts(&weights_decl, mod->constants.n ? "};\n" : "NULL};\n");
    }
    int rc = 0;
    switch (g->t->kind) {
    case TARGET_CUDA: {
        StrBuf *c = em_outset_add(o, ir_fmt("%s.cu", g->file));
        sb_puts(c, g->device.data);
        sb_puts(c, "\n/* ---------------------------------------------------------------- host */\n\n");
        sb_printf(c, "#include \"%s.h\"\n#include \"kgen_cuda_host.h\"\n", g->file);
        if (weights_decl.data)
            sb_puts(c, weights_decl.data);
        rc = host_tables(c, g, wa);
        sb_puts(c, "\nextern \"C\" {\n");
        host_entry(c, g, signature_text, names, names + g->ninputs);
        if (m)
            em_c_model_tables(c, m);
        sb_puts(c, "\n} /* extern \"C\" */\n");
        break;
    }
    case TARGET_OPENCL: {
        sb_puts(em_outset_add(o, ir_fmt("%s.cl", g->file)), g->device.data);
        StrBuf *c = em_outset_add(o, ir_fmt("%s_host.c", g->file));
        em_c_banner(c, g->source);
        sb_printf(c, "/* The OpenCL host: builds %s.cl on the first run (the path %s_CL_FILE, or that file\n"
                     " * in the folder $KGEN_CL_DIR), see kgen_opencl_host.h. */\n", g->file, UP);
        sb_printf(c, "#include \"%s.h\"\n#include \"kgen_opencl_host.h\"\n\n", g->file);
        sb_printf(c, "#ifndef %s_CL_FILE\n#define %s_CL_FILE \"%s.cl\"\n#endif\n", UP, UP, g->file);
        if (weights_decl.data)
            sb_puts(c, weights_decl.data);
        rc = host_tables(c, g, wa);
        host_entry(c, g, signature_text, names, names + g->ninputs);
        if (m)
            em_c_model_tables(c, m);
        break;
    }
    case TARGET_METAL: {
        sb_puts(em_outset_add(o, ir_fmt("%s.metal", g->file)), g->device.data);
        metal_host(em_outset_add(o, ir_fmt("%s_host.m", g->file)), g, signature_text, names, names + g->ninputs);
        manifest(em_outset_add(o, ir_fmt("%s_manifest.json", g->file)), g, ir_fmt("%s.metal", g->file));
        if (m) {
            StrBuf *c = em_outset_add(o, ir_fmt("%s_tables.c", g->file));
            em_c_banner(c, g->source);
            sb_printf(c, "/* NAME_tensors and the input/output tables (plain C, beside %s_host.m) */\n#include \"%s.h\"\n", N, N);
            em_c_model_tables(c, m);
        }
        break;
    }
    default: rc = ir_fail("%s is not a GPU target", g->t->name);
    }
    sb_free(&weights_decl);
    free(UP);
    put_runtime_headers(o, g);
    return rc;
}

/* The Makefile of a model's runner. */
static void makefile(OutSet *o, const GProg *g, const EmModel *m)
{
    const char *N = g->name;
    char *UP = em_c_macro_name(N);
    StrBuf *mk = em_outset_add(o, "Makefile");
    sb_printf(mk, "# Generated by kgen from %s. Builds the runner `%s` (%s).\n", m->source, N, g->t->name);
    const char *hdrs = "kgen_runtime.h kgen_gpu.h kgen_io.h kgen_main.h";
    switch (g->t->kind) {
    case TARGET_CUDA:
        sb_printf(mk, "NVCC ?= nvcc\nARCH ?= sm_%d\nNVCCFLAGS ?= -O2\nCC ?= cc\nCFLAGS ?= -O2\n\n", g->t->sm);
        sb_printf(mk, "%s: %s_main.c %s.cu %s_weights.c %s.h %s kgen_cuda_host.h\n", N, N, N, N, N, hdrs);
        sb_printf(mk, "\t$(CC) $(CFLAGS) -c %s_main.c -o %s_main.o\n\t$(CC) $(CFLAGS) -c %s_weights.c -o %s_weights.o\n", N, N, N, N);
        sb_printf(mk, "\t$(NVCC) $(NVCCFLAGS) -arch=$(ARCH) -o $@ %s.cu %s_main.o %s_weights.o\n\n", N, N, N);
        break;
    case TARGET_OPENCL:
        sb_puts(mk, "CC ?= cc\nCFLAGS ?= -O2\n\n");
        sb_printf(mk, "%s: %s_main.c %s_host.c %s_weights.c %s.cl %s.h %s kgen_opencl_host.h\n", N, N, N, N, N, N, hdrs);
        sb_printf(mk, "\t$(CC) $(CFLAGS) -D%s_CL_FILE='\"$(CURDIR)/%s.cl\"' -o $@ %s_main.c %s_host.c %s_weights.c -lOpenCL -lm\n\n",
                  UP, N, N, N, N);
        break;
    case TARGET_METAL:
        sb_puts(mk, "# macOS: the host is Objective-C over Metal.framework\nCC ?= clang\nCFLAGS ?= -O2\n\n");
        sb_printf(mk, "%s: %s_main.c %s_host.m %s_tables.c %s_weights.c %s.metal %s.h %s\n", N, N, N, N, N, N, N, hdrs);
        sb_printf(mk, "\t$(CC) $(CFLAGS) -fobjc-arc -D%s_METAL_FILE='\"$(CURDIR)/%s.metal\"' -o $@ %s_main.c %s_host.m %s_tables.c %s_weights.c "
                      "-framework Metal -framework Foundation\n\n",
                  UP, N, N, N, N, N);
        break;
    default: break;
    }
    sb_printf(mk, "clean:\n\trm -f %s *.o\n\n.PHONY: clean\n", N);
    free(UP);
}

static int gprog_init(GProg *g, const char *name, const char *source, const Target *t)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->file = name;
    g->source = source;
    g->t = t;
    g->d = em_dialect_for(t->kind);
    if (!g->d || !target_is_gpu(t))
        return ir_fail("%s is not a GPU target", t->name);
    return 0;
}

int em_gpu_model_files(OutSet *o, const EmModel *m)
{
    const Model *mod = m->model;
    if (m->weights_in_file)
        return ir_fail("--weights=file is not supported for the %s target yet (the weights are uploaded "
                       "from NAME_weights.c)", m->target->name);
    if (mod->nloops && m->target->kind == TARGET_METAL)
        return ir_fail("%s runs as a loop at run time, which the %s host does not do yet (the C, JS, WASM, "
                       "OpenCL and CUDA targets do; or fix its trip count and condition with --bind so that it "
                       "unrolls)", mod->loops[0].name, m->target->name);
    GProg g;
    if (gprog_init(&g, m->name, m->source, m->target))
        return -1;
    int rc = -1;
    for (int i = 0; i < m->ninputs; i++)
        add_buf(&g, m->inputs[i].buf, GPU_INPUT, i, 0, buf_bytes(m->inputs[i].buf), m->inputs[i].buf->name);
    for (int i = 0; i < m->noutputs; i++)
        add_buf(&g, m->outputs[i].buf, GPU_OUTPUT, i, 0, buf_bytes(m->outputs[i].buf), m->outputs[i].buf->name);
    for (int i = 0; i < mod->constants.n; i++) {
        const Buffer *b = mod->constants.items[i];
        add_buf(&g, b, GPU_WEIGHT, i, 0, buf_bytes(b), b->name);
    }
    for (int i = 0; i < mod->arena.n; i++) {
        const Buffer *b = mod->arena.items[i];
        add_buf(&g, b, GPU_ARENA, 0, b->ws_offset, buf_bytes(b), b->name);
    }
    g.ninputs = m->ninputs;
    g.noutputs = m->noutputs;
    g.nweights = mod->constants.n;
    g.arena_bytes = mod->arena_bytes;
    if (device_head(&g) || device_kernels(&g, (const Kernel *const *)mod->kernels.items, mod->kernels.n))
        goto done;
    /* (the Metal host runs every launch: it reads no condition back) */
    if (m->target->kind != TARGET_METAL && model_controls(&g, mod))
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
        makefile(o, &g, m);
    }
done:
    gprog_free(&g);
    return rc;
}

int em_gpu_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t)
{
    if (!name)
        name = k->name;
    if (!name || !name[0] || name[0] == '.' || strpbrk(name, "/\\\"\n"))
        return ir_fail("cannot use '%s' as an output file name", name ? name : "");
    GProg g;
    if (gprog_init(&g, name, source, t))
        return -1;
    char *fn = em_c_func_name(k);
    int rc = -1;
    /* the host entry keeps the C target's name; the device functions get a suffix */
    Kernel dk = *k;
    dk.name = ir_fmt("%s_kernel", fn);
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        int idx = 0;
        for (int j = 0; j < i; j++)
            idx += ((const Buffer *)k->params.items[j])->is_input == b->is_input;
        add_buf(&g, b, b->is_input ? GPU_INPUT : GPU_OUTPUT, idx, 0, buf_bytes(b), b->name);
        if (b->is_input)
            g.ninputs++;
        else
            g.noutputs++;
    }
    add_buf(&g, NULL, GPU_ARENA, 0, 0, k->workspace_bytes, "workspace");
    g.arena_bytes = k->workspace_bytes;
    g.name = fn;
    g.file = name;
    if (device_head(&g) || device_kernels(&g, (const Kernel *const *)&(const Kernel *){&dk}, 1))
        goto done;
    /* inputs and outputs in parameter order for the tables: map host names */
    const char **names = entry_names(&g, (const Buffer *const *)k->params.items, k->params.n, "workspace");
    StrBuf sig = {0};
    em_print_prototype(&sig, k, &em_dialect_c);
    em_c_kernel_header(em_outset_add(o, ir_fmt("%s.h", name)), k, fn, name, source, t);
    rc = gpu_files(o, &g, sig.data, names, 0, NULL);
    sb_free(&sig);
    if (rc == 0 && t->kind != TARGET_METAL) {
        /* NAME_tensors, as for C (the file already has the entry it calls) */
        StrBuf *c = NULL;
        for (int i = 0; i < o->n; i++)
            if (!strcmp(o->files[i].name, ir_fmt(t->kind == TARGET_CUDA ? "%s.cu" : "%s_host.c", name)))
                c = &o->files[i].text;
        if (c) {
            if (t->kind == TARGET_CUDA)
                sb_puts(c, "\nextern \"C\" {\n");
            sb_puts(c, "\n");
            em_c_tensors_entry(c, k, fn, "workspace");
            if (t->kind == TARGET_CUDA)
                sb_puts(c, "\n} /* extern \"C\" */\n");
        }
    }
done:
    free(fn);
    gprog_free(&g);
    return rc;
}
