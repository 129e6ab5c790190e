/* check.c - runs an ONNX node test through the importer and the loop-IR interpreter
 * (no C compiler involved): the quick way to check an operator's semantics, and the
 * reference of the random-graph test (tests/fuzz_graphs.sh), which writes the
 * interpreter's outputs as the test's expected ones. Neither runs the layout pass nor a
 * schedule: the program is the importer's, lowered as it is. */
#include "gen.h"
#include "../onnx/onnx.h"
#include "../ir/ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double get_f(const void *p, DType t, int64_t k)
{
    const unsigned char *q = (const unsigned char *)p + k * ir_dtype_bytes(t);
    switch (t) {
    case DT_F32: { float v; memcpy(&v, q, 4); return v; }
    case DT_F64: { double v; memcpy(&v, q, 8); return v; }
    default: return 0;
    }
}

static int64_t get_i(const void *p, DType t, int64_t k)
{
    const unsigned char *q = (const unsigned char *)p + k * ir_dtype_bytes(t);
    switch (t) {
    case DT_BOOL:
    case DT_U8: return *q;
    case DT_I8: return (int8_t)*q;
    case DT_I16: { int16_t v; memcpy(&v, q, 2); return v; }
    case DT_U16: { uint16_t v; memcpy(&v, q, 2); return v; }
    case DT_I32: { int32_t v; memcpy(&v, q, 4); return v; }
    case DT_U32: { uint32_t v; memcpy(&v, q, 4); return v; }
    default: { int64_t v; memcpy(&v, q, 8); return v; }
    }
}

/* The node tests' rule: shape and type equal; floats within atol + rtol*|expected| (NaN
 * meets NaN, infinities exactly; float16, bfloat16 and float8 after decoding); integers exactly.
 * values == 0: shape and type only. */
static int compare(const char *what, const Tensor *t, const void *got, const OnnxTensor *want, int values)
{
    DType wt;
    if (op_dtype_from_onnx(want->dtype, &wt))
        return ir_fail("%s: expected type %s is not supported", what, onnx_dtype_name(want->dtype));
    if (wt != t->dtype)
        return ir_fail("%s: type %s, expected %s", what, ir_dtype_name(t->dtype), ir_dtype_name(wt));
    int same = want->ndim == t->ndim;
    for (int d = 0; same && d < t->ndim; d++)
        same = want->dims[d] == t->shape[d];
    if (!same)
        return ir_fail("%s: shape differs from the expected one", what);
    int64_t n = values ? ir_tensor_numel(t) : 0;
    for (int64_t k = 0; k < n; k++) {
        if (ir_dtype_is_packed(t->dtype)) {   /* the same code (f4e2m1 has no NaN) */
            int64_t a = ir_packed_get(t->dtype, got, k), b = ir_packed_get(t->dtype, want->data, k);
            if (a != b)
                return ir_fail("%s[%lld]: got %s code %lld, expected %lld", what, (long long)k, ir_dtype_name(t->dtype),
                               (long long)a, (long long)b);
        } else if (ir_dtype_is_float(t->dtype) && !ir_dtype_is_storage(t->dtype)) {
            double g = get_f(got, t->dtype, k), w = get_f(want->data, t->dtype, k);
            int ok = (isnan(w) && isnan(g)) || (isinf(w) ? g == w : fabs(g - w) <= 1e-5 + 1e-3 * fabs(w));
            if (!ok)
                return ir_fail("%s[%lld]: got %.9g, expected %.9g", what, (long long)k, g, w);
        } else if (ir_dtype_is_storage(t->dtype)) {
            /* float16, bfloat16, float8: the same rule after decoding */
            int nb = ir_dtype_bytes(t->dtype);
            const unsigned char *pa = (const unsigned char *)got + nb * k, *pb = (const unsigned char *)want->data + nb * k;
            double g = ir_storage_to_f32(t->dtype, pa), w = ir_storage_to_f32(t->dtype, pb);
            int ok = (isnan(w) && isnan(g)) || (isinf(w) ? g == w : fabs(g - w) <= 1e-5 + 1e-3 * fabs(w));
            if (!ok)
                return ir_fail("%s[%lld]: got %.9g, expected %.9g (%s)", what, (long long)k, g, w,
                               ir_dtype_name(t->dtype));
        } else if (get_i(got, t->dtype, k) != get_i(want->data, t->dtype, k)) {
            return ir_fail("%s[%lld]: got %lld, expected %lld", what, (long long)k,
                           (long long)get_i(got, t->dtype, k), (long long)get_i(want->data, t->dtype, k));
        }
    }
    return 0;
}

/* The tests' README: the outputs of a random operator (Bernoulli; its expansion draws with
 * RandomUniformLike) are judged on shape and type only, since no generator draws the
 * reference's numbers. A graph (or a subgraph of it) with a node of one of ONNX's random
 * generators, or a Dropout given its training_mode input (in training mode it draws its
 * mask). */
static int draws_random(const OnnxGraph *g)
{
    static const char *const random_ops[] = {"Bernoulli",    "RandomUniform",    "RandomUniformLike",
                                             "RandomNormal", "RandomNormalLike", "Multinomial"};
    for (int i = 0; i < g->nnodes; i++) {
        const OnnxNode *n = &g->nodes[i];
        int std = !n->domain[0] || !strcmp(n->domain, "ai.onnx");
        for (size_t k = 0; k < sizeof random_ops / sizeof *random_ops; k++)
            if (std && !strcmp(n->op_type, random_ops[k]))
                return 1;
        if (std && !strcmp(n->op_type, "Dropout") && n->ninputs >= 3 && n->inputs[2][0])
            return 1;
        for (int a = 0; a < n->nattrs; a++) {
            if (n->attrs[a].g && draws_random(n->attrs[a].g))
                return 1;
            for (int k = 0; k < n->attrs[a].ngraphs; k++)
                if (draws_random(&n->attrs[a].graphs[k]))
                    return 1;
        }
    }
    return 0;
}

/* protobuf writing for write_tensor: a varint, a field key */
static void pb_varint(FILE *f, uint64_t v)
{
    do {
        fputc((int)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)), f);
        v >>= 7;
    } while (v);
}

static void pb_key(FILE *f, int field, int wire) { pb_varint(f, (uint64_t)field << 3 | (uint64_t)wire); }

/* PATH: an onnx.TensorProto (dims, data_type, name, raw_data) of tensor t's data */
static int write_tensor(const char *path, const char *name, const Tensor *t, const void *data)
{
    int code = op_dtype_to_onnx(t->dtype);
    if (code <= 0 || ir_dtype_is_packed(t->dtype))
        return ir_fail("%s: cannot write an output of type %s", path, ir_dtype_name(t->dtype));
    FILE *f = fopen(path, "wb");
    if (!f)
        return ir_fail("%s: cannot create the file", path);
    size_t bytes = (size_t)ir_tensor_numel(t) * (size_t)ir_dtype_bytes(t->dtype), len = strlen(name);
    for (int d = 0; d < t->ndim; d++) {
        pb_key(f, 1, 0);
        pb_varint(f, (uint64_t)t->shape[d]);
    }
    pb_key(f, 2, 0);
    pb_varint(f, (uint64_t)code);
    pb_key(f, 8, 2);
    pb_varint(f, len);
    fwrite(name, 1, len, f);
    pb_key(f, 9, 2);
    pb_varint(f, bytes);
    int bad = bytes && fwrite(data, 1, bytes, f) != bytes;
    if (fclose(f) || bad)
        return ir_fail("%s: write error", path);
    return 0;
}

/* The test in DIR through the interpreter. write == 0: compare the outputs with
 * DIR/test_data_set_0/output_N.pb (gen_check_onnx_dir); write == 1: write them there
 * (gen_interp_write_dir). */
static int run_dir(const char *dir, int write)
{
    char err[1024];
    OnnxModel *m = onnx_load_file(ir_fmt("%s/model.onnx", dir), err, sizeof err);
    if (!m)
        return ir_fail("%s", err), -1;
    OnnxTensor *ins[64] = {0}, *outs[64] = {0};
    int nin = 0, nout = 0, rc = -1;
    OnnxBinding binds[64];
    for (int i = 0; i < m->graph.ninputs && nin < 64; i++) {
        const char *path = ir_fmt("%s/test_data_set_0/input_%d.pb", dir, nin);
        OnnxTensor *t = onnx_load_tensor_file(path, err, sizeof err);
        if (!t)
            break;
        ins[nin] = t;
        binds[nin].name = m->graph.inputs[nin].name;
        binds[nin].dtype = t->dtype;
        binds[nin].ndim = t->ndim;
        memcpy(binds[nin].dims, t->dims, sizeof(int64_t) * (size_t)(t->ndim < KG_MAX_DIMS ? t->ndim : KG_MAX_DIMS));
        binds[nin].data = t->data;
        binds[nin].literal = NULL;
        binds[nin].option = NULL;
        nin++;
    }
    for (int i = 0; i < 64 && !write; i++) {
        OnnxTensor *t = onnx_load_tensor_file(ir_fmt("%s/test_data_set_0/output_%d.pb", dir, i), err, sizeof err);
        if (!t)
            break;
        outs[nout++] = t;
    }
    OnnxImport im;
    OnnxImportOpts io = {0};
    io.data = binds;
    io.ndata = nin;
    PassCtx passes = {dir, "c", 0, 0, IR_LAYOUT_NCHW, IR_WINOGRAD_AUTO};   /* the compile's graph passes, NCHW */
    if (onnx_import(m, &io, &im) || gen_graph_passes(im.prog, &passes))
        goto done;
    if (write)
        nout = im.noutputs;
    if (im.noutputs != nout) {
        ir_fail("%d outputs, expected %d", im.noutputs, nout);
        goto done;
    }
    Schedule *s = sch_create(im.prog);
    Kernel *k = ir_lower(s, "check");
    if (!k)
        goto done;
    void **params = calloc((size_t)k->params.n + 1, sizeof *params);
    void *ws = calloc((size_t)k->workspace_bytes + 64, 1);
    void **bufs = calloc((size_t)k->params.n + 1, sizeof *bufs);
    if (!params || !ws || !bufs)
        ir_die("out of memory");
    for (int i = 0; i < k->params.n; i++) {
        Buffer *b = k->params.items[i];
        if (b->constant) {
            params[i] = (void *)b->constant->data;
            continue;
        }
        for (int j = 0; j < im.ninputs; j++)
            if (!strcmp(im.inputs[j].t->name, b->name))
                for (int q = 0; q < nin; q++)
                    if (!strcmp(binds[q].name, im.inputs[j].onnx_name))
                        params[i] = (void *)binds[q].data;
        if (!params[i])
            params[i] = bufs[i] = calloc((size_t)ir_dtype_size(b->dtype, b->size) + 1, 1);
    }
    rc = 1;
    int values = !draws_random(&m->graph);
    if (ir_interp(k, params, ws) == 0) {
        rc = 0;
        for (int o = 0; o < nout && !rc; o++)
            for (int i = 0; i < k->params.n; i++) {
                Buffer *b = k->params.items[i];
                if (strcmp(b->name, im.outputs[o].t->name))
                    continue;
                else if (write)
                    rc = write_tensor(ir_fmt("%s/test_data_set_0/output_%d.pb", dir, o), im.outputs[o].onnx_name,
                                      im.outputs[o].t, params[i]) ? 1 : 0;
                else if (compare(im.outputs[o].onnx_name, im.outputs[o].t, params[i], outs[o], values))
                    rc = 1;
            }
    }
    for (int i = 0; i < k->params.n; i++)
        free(bufs[i]);
    free(bufs);
    free(params);
    free(ws);
done:
    for (int i = 0; i < nin; i++)
        onnx_tensor_free(ins[i]);
    for (int i = 0; i < nout; i++)
        onnx_tensor_free(outs[i]);
    onnx_free(m);
    return rc;
}

int gen_check_onnx_dir(const char *dir) { return run_dir(dir, 0); }

int gen_interp_write_dir(const char *dir) { return run_dir(dir, 1); }
