/* webgpu.c - the WebGPU target for one kernel or a whole model.
 *
 * requires: kernels lowered from a GPU schedule; breaks: nothing (adds files)
 *
 * The tables are gpu.c's (em_gpu_tables_model / _kernel: buffers, launches, run-time
 * controls), with the WGSL printer (wgslprint.c) in place of the C family's. Where each
 * buffer lives is decided here, before the kernels print (their accessors hold the
 * places), in 32-bit words (wgsl.h):
 *
 *   mem (binding 0)  the arena: its 4-byte slices at their planned offsets (byte offset / 4),
 *                    then, 256-byte aligned, the other slices (bool, the 8- and 16-bit types,
 *                    i64 narrowed, the packed ones) each element at the word of its first
 *                    planned bit in units of `unit` bits (8; 4 or 2 when a packed type of
 *                    that width is there), so slices that never share bits never share
 *                    words; then each input and output, 256-byte aligned, a word an element
 *   wts (binding 1)  the weights, one word per element, each 64-byte aligned, converted by
 *                    kgen (an i64 weight that does not fit in 32 bits is an error)
 *
 * Files:  NAME.wgsl     the compute shaders (also embedded in NAME.mjs)
 *         NAME.mjs      the ES module: name, inputInfo, outputInfo, ARENA_BYTES,
 *                       WEIGHTS_BYTES, await init(), await run([x, ...]) -> [y, ...],
 *                       deviceMs(), release(); for a kernel, await FN(params...) instead
 *         kgen_webgpu.mjs, kgen_runtime.mjs   the host runtime and the tensor helpers
 *  with --main NAME_main.mjs, kgen_main.mjs, kgen_io.mjs (the runner contract).
 */
#include "wgsl.h"
#include "gpu.h"
#include "jsemit.h"
#include "cfamily.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    GProg g;
    WgslModule *M;
    WgslPlace *at;             /* per buffer table entry: where element 0 lives */
    int64_t arena_words;       /* the size of mem */
    int64_t weights_words;     /* of wts */
    int64_t extra_word;        /* where the slices that are not 4 bytes per element start */
    int per_byte;              /* words per planned byte there: 8 / the smallest unit in bits */
    const Kernel *single;      /* a single kernel's workspace buffers (its locals), or NULL */
    int laid_out;
} WebGpu;

static int64_t align_words(int64_t w, int64_t a) { return (w + a - 1) / a * a; }

/* A buffer in the region of the slices that are not 4 bytes an element? */
static int is_extra(const Buffer *b)
{
    return ir_dtype_bytes(b->dtype) != 4 || ir_dtype_is_packed(b->dtype) || b->ws_offset % 4;
}

/* The arena slices (a model's, or a single kernel's workspace buffers, its locals) that go
 * to the extra region: the planned bytes they reach (*end) and the words per byte they
 * need (*per: 1, or 2 and 4 for the 4- and 2-bit packed types). */
static void extra_span(const WebGpu *W, const Kernel *single, int64_t *end, int *per)
{
    const GProg *g = &W->g;
    *end = 0;
    *per = 1;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? (single ? single->locals.n : 0) : g->nbufs;
        for (int i = 0; i < n; i++) {
            const Buffer *b = pass ? single->locals.items[i] : g->bufs[i].b;
            if (!b || b->size <= 0 || !is_extra(b) || (pass ? b->scope != SCOPE_WORKSPACE : g->bufs[i].kind != GPU_ARENA))
                continue;
            int64_t e = b->ws_offset + ir_dtype_size(b->dtype, b->size);
            if (e > *end)
                *end = e;
            if (ir_dtype_is_packed(b->dtype) && 8 / ir_dtype_bits(b->dtype) > *per)
                *per = 8 / ir_dtype_bits(b->dtype);
        }
    }
}

/* Where an arena or workspace buffer lives: a 4-byte type at its own word, the rest in the
 * extra region. */
static WgslPlace arena_place(const WebGpu *W, const Buffer *b)
{
    if (!is_extra(b))
        return (WgslPlace){0, b->ws_offset / 4, 1};
    int64_t stride = ir_dtype_is_packed(b->dtype) ? W->per_byte * ir_dtype_bits(b->dtype) / 8
                                                  : W->per_byte * ir_dtype_bytes(b->dtype);
    return (WgslPlace){0, W->extra_word + W->per_byte * b->ws_offset, stride};
}

/* Place every buffer of the table (see the file comment). */
static int layout(WebGpu *W, const Kernel *single)
{
    GProg *g = &W->g;
    W->at = calloc((size_t)(g->nbufs ? g->nbufs : 1), sizeof *W->at);
    if (!W->at)
        ir_die("out of memory");
    int64_t words = align_words((g->arena_bytes + 3) / 4, 64);
    W->extra_word = words;
    int64_t end;
    extra_span(W, single, &end, &W->per_byte);
    words = align_words(words + W->per_byte * end, 64);
    int64_t wwords = 0;
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *e = &g->bufs[i];
        const Buffer *b = e->b;
        WgslPlace *p = &W->at[i];
        if (b && !em_wgsl_dtype_ok(b->dtype))
            return em_wgsl_dtype_fail(e->name, b->dtype);
        switch (e->kind) {
        case GPU_INPUT:
        case GPU_OUTPUT:
            *p = (WgslPlace){0, words, 1};
            words = align_words(words + (b->size > 0 ? b->size : 1), 64);
            break;
        case GPU_WEIGHT:
            *p = (WgslPlace){1, wwords, 1};
            wwords = align_words(wwords + (b->size > 0 ? b->size : 1), 16);
            break;
        default:
            *p = b ? arena_place(W, b) : (WgslPlace){0, 0, 1};   /* NULL: a kernel's workspace */
            break;
        }
    }
    W->arena_words = words;
    W->weights_words = wwords;
    W->laid_out = 1;
    return 0;
}

static int place(void *ctx, const Buffer *b, WgslPlace *out)
{
    WebGpu *W = ctx;
    int i = em_gpu_buf_index(&W->g, b);
    if (i >= 0) {
        *out = W->at[i];
        return 0;
    }
    if (b->scope == SCOPE_WORKSPACE) {     /* a workspace buffer of a single kernel */
        *out = arena_place(W, b);
        return 0;
    }
    return ir_fail("buffer %s is not a model buffer", b->name);
}

/* ---------------------------------------------------------------- the weights */

/* one little-endian word (StrBuf holds text: the bytes go in as placeholders first) */
static void put_word(StrBuf *w, uint32_t v)
{
    sb_puts(w, "    ");
    unsigned char *p = (unsigned char *)w->data + w->len - 4;
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The weights as words (little-endian), in table order at their places. */
static int weight_words(StrBuf *w, const WebGpu *W)
{
    const GProg *g = &W->g;
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *e = &g->bufs[i];
        if (e->kind != GPU_WEIGHT)
            continue;
        const Buffer *b = e->b;
        const unsigned char *d = b->constant ? b->constant->data : NULL;
        int nb = ir_dtype_bytes(b->dtype);
        while ((int64_t)w->len < W->at[i].word * 4)
            put_word(w, 0);
        for (int64_t j = 0; j < b->size; j++) {
            uint32_t v = 0;
            const unsigned char *p = d && !ir_dtype_is_packed(b->dtype) ? d + j * nb : NULL;
            if (d && ir_dtype_is_packed(b->dtype)) {
                v = (uint32_t)(int32_t)ir_packed_get(b->dtype, d, j);   /* i4, i2 sign-extended */
            } else if (!p) {
                v = 0;
            } else if (nb == 8) {
                int64_t x;
                memcpy(&x, p, 8);
                if (b->dtype == DT_I64 ? (x < INT32_MIN || x > INT32_MAX) : (x < 0 || x > (int64_t)UINT32_MAX))
                    return ir_fail("weight %s: element %lld is %lld, which does not fit in 32 bits (the webgpu "
                                   "target narrows %s to 32 bits; WGSL has no 64-bit integers)", b->name,
                                   (long long)j, (long long)x, ir_dtype_name(b->dtype));
                v = (uint32_t)x;
            } else if (nb == 4) {
                memcpy(&v, p, 4);
            } else if (nb == 2) {
                uint16_t h;
                memcpy(&h, p, 2);
                v = b->dtype == DT_I16 ? (uint32_t)(int32_t)(int16_t)h : h;
            } else if (b->dtype == DT_I8) {
                v = (uint32_t)(int32_t)(int8_t)p[0];
            } else {
                v = b->dtype == DT_BOOL ? p[0] != 0 : p[0];
            }
            put_word(w, v);
        }
    }
    while ((int64_t)w->len < W->weights_words * 4)
        put_word(w, 0);
    return 0;
}

/* ---------------------------------------------------------------- NAME.mjs */

static const char *const kind_name[] = {"input", "output", "weight", "arena"};

/* text as a JS template literal's inside */
static void put_template_text(StrBuf *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '`' || *s == '\\' || (*s == '$' && s[1] == '{'))
            sb_printf(o, "\\%c", *s);
        else
            sb_printf(o, "%c", *s);
    }
}

/* the program: the tables kgen_webgpu.mjs runs */
static void put_program(StrBuf *s, const WebGpu *W)
{
    const GProg *g = &W->g;
    sb_puts(s, "\n/* where each buffer lives, in 32-bit words of mem (binding 0) or wts (binding 1) */\nconst buffers = [\n");
    for (int i = 0; i < g->nbufs; i++) {
        const GBuf *e = &g->bufs[i];
        const WgslPlace *p = &W->at[i];
        sb_printf(s, "    {kind: \"%s\", index: %d, binding: %d, word: %lld, stride: %lld, length: %lld, dtype: \"%s\", name: ",
                  kind_name[e->kind], e->index, p->binding, (long long)p->word, (long long)p->stride,
                  (long long)(e->b ? e->b->size : 0), e->b ? ir_dtype_name(e->b->dtype) : "u8");
        em_js_put_string(s, e->name);
        sb_puts(s, "},\n");
    }
    sb_puts(s, "];\n\n/* the launches in order: an entry point of the module, its workgroups, their size and "
               "workgroup memory */\nconst launches = [\n");
    for (int i = 0; i < g->nlaunches; i++) {
        const EmLaunch *l = &g->launches[i].l;
        sb_printf(s, "    {entry: \"%s\", grid: [%lld, %lld, %lld], block: [%lld, %lld, %lld], shared: %lld},\n", l->name,
                  (long long)l->grid[0], (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0],
                  (long long)l->block[1], (long long)l->block[2], (long long)l->shared_bytes);
    }
    sb_puts(s, "];\n\n/* run-time Ifs and loops (kgen_gpu.h's controls): launches to skip or repeat */\nconst controls = [\n");
    for (int i = 0; i < g->ncontrols; i++) {
        const GControl *c = &g->controls[i];
        sb_printf(s, "    {loop: %d, first: %d, last: %d, cond: %d, value: %d, trip: %d, tripCount: %lld},\n", c->loop,
                  c->first, c->last, c->cond, c->value, c->trip, (long long)c->trip_count);
    }
    sb_printf(s, "];\n\nconst program = {name, wgsl, buffers, launches, controls, arenaWords: %lld, weightsWords: %lld};\n",
              (long long)W->arena_words, (long long)W->weights_words);
}

static void put_wgsl_const(StrBuf *s, const char *file, const StrBuf *wgsl)
{
    sb_printf(s, "\n/* the compute shaders: %s.wgsl */\nconst wgsl = `", file);
    put_template_text(s, wgsl->data ? wgsl->data : "");
    sb_puts(s, "`;\n");
}

static void put_weights(StrBuf *s, const StrBuf *blob)
{
    sb_puts(s, "\n/* the weights as words, uploaded by init() */\nconst weights = ");
    if (blob->len) {
        sb_puts(s, "k.fromBase64(\n    \"");
        em_js_put_base64(s, (const unsigned char *)blob->data, blob->len);
        sb_puts(s, "\")");
    } else {
        sb_puts(s, "new Uint8Array(0)");
    }
    sb_puts(s, ";\n");
}

static const char *const api_text =
    "let gpu = null;\n\n"
    "/* Create the device (navigator.gpu in a browser; in node the Dawn module at $KGEN_NODE_WEBGPU, else\n"
    " * the package `webgpu`), build the pipelines and upload the weights. options: {device} to share one. */\n"
    "export async function init(options = {}) {\n"
    "    if (!gpu)\n"
    "        gpu = await createProgram(program, weights, options);\n"
    "}\n\n"
    "/* Device time of the last run in milliseconds (timestamp queries where the adapter has them, else the\n"
    " * time from submit to done). */\n"
    "export const deviceMs = () => (gpu ? gpu.lastMs : 0);\n\n"
    "/* Free the GPU buffers (init() again to use the model after). */\n"
    "export function release() {\n"
    "    if (gpu)\n"
    "        gpu.release();\n"
    "    gpu = null;\n"
    "}\n";

/* ---------------------------------------------------------------- files */

static void common_files(OutSet *o, const WebGpu *W, const StrBuf *wgsl)
{
    sb_puts(em_outset_add(o, ir_fmt("%s.wgsl", W->g.file)), wgsl->data ? wgsl->data : "");
    const char *rt = em_template("kgen_webgpu.mjs");
    if (!rt)
        ir_die("template kgen_webgpu.mjs missing");
    sb_puts(em_outset_add(o, "kgen_webgpu.mjs"), rt);
    em_js_runtime_file(o);
}

/* em_gpu_tables_* print as they go: lay the buffers out first (the tables' buffers are
 * added before any kernel prints; this runs at the first print) */
static int print_first(GProg *g, const Kernel *k, EmLaunch **launches)
{
    WebGpu *W = g->print_ctx;
    if (!W->laid_out && layout(W, W->single))
        return -1;
    return em_wgsl_kernel(W->M, k, k->name, launches);
}

static int webgpu_init(WebGpu *W, const char *name, const char *source, const Target *t)
{
    memset(W, 0, sizeof *W);
    W->g.name = name;
    W->g.file = name;
    W->g.source = source;
    W->g.t = t;
    W->g.print = print_first;
    W->g.print_ctx = W;
    W->M = em_wgsl_new(t, place, W);
    return 0;
}

static void webgpu_free(WebGpu *W)
{
    em_wgsl_free(W->M);
    free(W->at);
    em_gpu_prog_free(&W->g);
}

int em_webgpu_model_files(OutSet *o, const EmModel *m)
{
    if (m->weights_in_file)
        return ir_fail("--weights=file is not supported for the webgpu target yet (the weights are embedded "
                       "in NAME.mjs)");
    WebGpu W;
    webgpu_init(&W, m->name, m->source, m->target);
    StrBuf wgsl = {0}, blob = {0};
    int rc = -1;
    if (em_gpu_tables_model(&W.g, m, 1))
        goto done;
    if (!W.laid_out && layout(&W, NULL))
        goto done;
    if (em_wgsl_finish(W.M, &wgsl, m->source) || weight_words(&blob, &W))
        goto done;
    StrBuf *s = em_outset_add(o, ir_fmt("%s.mjs", m->name));
    em_js_banner(s, m->source);
    sb_printf(s, "/* %s: an ES module running the model on WebGPU (node with Dawn, browsers).\n"
                 " *   await init();              the device, the pipelines, the weights uploaded once\n"
                 " *   await run([x, ...]) -> [y, ...]   typed arrays, compact row-major (inputInfo, outputInfo)\n"
                 " *   deviceMs(), release()\n"
                 " * %d kernels, %d launches, arena %lld bytes; every element is one 32-bit word on the GPU\n"
                 " * (kgen_webgpu.mjs converts at the boundary; i64 is narrowed to i32, checked)\n */\n",
              m->name, m->model->kernels.n, W.g.nlaunches, (long long)m->model->arena_bytes);
    sb_puts(s, "import * as k from \"./kgen_runtime.mjs\";\nimport { createProgram } from \"./kgen_webgpu.mjs\";\n\n");
    em_js_put_model_info(s, m);
    sb_printf(s, "/* the GPU's arena buffer (intermediates, inputs, outputs) and weights buffer */\n"
                 "export const ARENA_BYTES = %lld;\nexport const WEIGHTS_BYTES = %lld;\n",
              (long long)W.arena_words * 4, (long long)W.weights_words * 4);
    put_wgsl_const(s, m->name, &wgsl);
    put_program(s, &W);
    put_weights(s, &blob);
    sb_puts(s, "\n");
    sb_puts(s, api_text);
    sb_puts(s, "\n/* Run on an array of input typed arrays; resolves to new output arrays. */\n"
               "export async function run(inputs) {\n"
               "    k.checkInputs(name, inputInfo, inputs);\n"
               "    if (!gpu)\n"
               "        throw new Error(`${name}: call init() first`);\n"
               "    return gpu.run(inputs);\n"
               "}\n");
    common_files(o, &W, &wgsl);
    if (m->with_main)
        em_js_runner_files(o, m, 1);
    rc = 0;
done:
    sb_free(&wgsl);
    sb_free(&blob);
    webgpu_free(&W);
    return rc;
}

int em_webgpu_kernel_files(OutSet *o, const Kernel *k, const char *name, const char *source, const Target *t)
{
    if (!(name = em_file_base(k, name)))
        return -1;
    WebGpu W;
    webgpu_init(&W, name, source, t);
    char *fn = em_js_ident(k->name);
    StrBuf wgsl = {0};
    int rc = -1;
    /* the buffers first (em_gpu_tables_kernel adds them, then prints) */
    Kernel dk = *k;
    dk.name = ir_fmt("%s_kernel", fn);
    W.single = k;
    W.g.name = fn;
    if (em_gpu_tables_kernel(&W.g, k, &dk))
        goto done;
    if (!W.laid_out && layout(&W, W.single))
        goto done;
    if (em_wgsl_finish(W.M, &wgsl, source))
        goto done;
    StrBuf *s = em_outset_add(o, ir_fmt("%s.mjs", name));
    em_js_banner(s, source);
    sb_printf(s, "/* %s on WebGPU: await init(), then await %s(", k->name, fn);
    for (int i = 0; i < k->params.n; i++)
        sb_printf(s, "%s%s", i ? ", " : "", ((const Buffer *)k->params.items[i])->name);
    sb_puts(s, ") over typed arrays as\n * the JS target's kernel takes them (the outputs are written; no workspace argument: it is on the GPU)\n");
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        sb_printf(s, " * %s: %s %s %s[", b->name, b->is_input ? "input" : "output", em_js_array_type(b->dtype),
                  ir_dtype_name(b->dtype));
        for (int d = 0; d < b->ndim; d++)
            sb_printf(s, "%s%lld", d ? ", " : "", (long long)b->shape[d]);
        sb_puts(s, "]\n");
    }
    sb_puts(s, " */\nimport { createProgram } from \"./kgen_webgpu.mjs\";\n\n");
    sb_puts(s, "export const name = ");
    em_js_put_string(s, fn);
    sb_printf(s, ";\nexport const WORKSPACE_BYTES = %lld;\nexport const params = [\n", (long long)k->workspace_bytes);
    for (int i = 0; i < k->params.n; i++) {
        const Buffer *b = k->params.items[i];
        sb_puts(s, "    {name: ");
        em_js_put_string(s, b->name);
        sb_printf(s, ", dtype: \"%s\", shape: [", ir_dtype_name(b->dtype));
        for (int d = 0; d < b->ndim; d++)
            sb_printf(s, "%s%lld", d ? ", " : "", (long long)b->shape[d]);
        sb_printf(s, "], input: %s},\n", b->is_input ? "true" : "false");
    }
    sb_puts(s, "];\n");
    put_wgsl_const(s, name, &wgsl);
    put_program(s, &W);
    sb_puts(s, "const weights = new Uint8Array(0);\n\n");
    sb_puts(s, api_text);
    sb_printf(s, "\n/* The kernel: inputs, then outputs (written), in the order above. */\nexport async function %s(", fn);
    for (int i = 0; i < k->params.n; i++)
        sb_printf(s, "%sp%d", i ? ", " : "", i);
    sb_puts(s, ") {\n    if (!gpu)\n        throw new Error(`${name}: call init() first`);\n    const outs = await gpu.run([");
    int first = 1;
    for (int i = 0; i < k->params.n; i++)
        if (((const Buffer *)k->params.items[i])->is_input) {
            sb_printf(s, "%sp%d", first ? "" : ", ", i);
            first = 0;
        }
    sb_puts(s, "]);\n");
    int oi = 0;
    for (int i = 0; i < k->params.n; i++)
        if (!((const Buffer *)k->params.items[i])->is_input)
            sb_printf(s, "    p%d.set(outs[%d]);\n", i, oi++);
    sb_puts(s, "}\n");
    common_files(o, &W, &wgsl);
    rc = 0;
done:
    free(fn);
    sb_free(&wgsl);
    webgpu_free(&W);
    return rc;
}
