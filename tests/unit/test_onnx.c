/* test_onnx.c - unit tests of the ONNX reader (onnx/pb.c, onnx/reader.c).
 *
 *   test_onnx [ONNX_NODE_TESTS_DIR [DATA_DIR]]
 *
 * ONNX_NODE_TESTS_DIR defaults to tests/data/onnx-node-tests, DATA_DIR to tests/data/onnx
 * (run from the repository root). Checks decoded values of a few node-test models and tensors,
 * a model made by tests/data/onnx/make_models.py (external data, subgraphs, every attribute
 * kind), hand-made buffers (packed and unpacked fields, unknown fields, an error corpus that
 * must fail with its message), mutated files that must fail or load without a crash, and
 * then every model.onnx and .pb of the node tests, cross-checked with MANIFEST.tsv. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../onnx/onnx.h"

static int passed, failed;

static void check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ASSERT(expected, expr): integers; prints `expr => value` when they differ */
#define ASSERT(expected, expr)                                                              \
    do {                                                                                    \
        long long e_ = (long long)(expected), g_ = (long long)(expr);                       \
        check(e_ == g_, __FILE__, __LINE__, "%s => %lld, expected %lld", #expr, g_, e_);  \
    } while (0)

#define ASSERT_STR(expected, expr)                                                          \
    do {                                                                                    \
        const char *e_ = (expected), *g_ = (expr);                                          \
        check(g_ && !strcmp(e_, g_), __FILE__, __LINE__, "%s => \"%s\", expected \"%s\"",   \
              #expr, g_ ? g_ : "(null)", e_);                                               \
    } while (0)

#define ASSERT_FLOAT(expected, expr)                                                        \
    do {                                                                                    \
        float e_ = (expected), g_ = (expr);                                                 \
        check(e_ == g_, __FILE__, __LINE__, "%s => %.9g, expected %.9g", #expr, g_, e_);  \
    } while (0)

/* ASSERT_TRUE stops the calling test when it fails, for pointers the rest depends on */
#define ASSERT_TRUE(expr, ...)                                                              \
    do {                                                                                    \
        int ok_ = !!(expr);                                                                 \
        check(ok_, __FILE__, __LINE__, __VA_ARGS__);                                        \
        if (!ok_)                                                                           \
            return;                                                                         \
    } while (0)

static float f32_at(const OnnxTensor *t, int64_t i)
{
    const uint8_t *b = (const uint8_t *)t->data + 4 * i;
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                 (uint32_t)b[3] << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int64_t i64_at(const OnnxTensor *t, int64_t i)
{
    const uint8_t *b = (const uint8_t *)t->data + 8 * i;
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--)
        u = u << 8 | b[k];
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static double f64_at(const OnnxTensor *t, int64_t i)
{
    int64_t v = i64_at(t, i);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static int byte_at(const OnnxTensor *t, size_t i)
{
    return i < t->nbytes ? ((const uint8_t *)t->data)[i] : -1;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s)
        abort();
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

static OnnxModel *load_model(const char *dir, const char *rel)
{
    char err[512];
    char *path = join(dir, rel);
    OnnxModel *m = onnx_load_file(path, err, sizeof err);
    check(m != NULL, __FILE__, __LINE__, "loading %s: %s", path, err);
    free(path);
    return m;
}

static OnnxTensor *load_tensor(const char *dir, const char *rel)
{
    char err[512];
    char *path = join(dir, rel);
    OnnxTensor *t = onnx_load_tensor_file(path, err, sizeof err);
    check(t != NULL, __FILE__, __LINE__, "loading %s: %s", path, err);
    free(path);
    return t;
}

static void assert_dims(const char *what, const int64_t *dims, int ndim, const int64_t *want,
                        int nwant, int line)
{
    int ok = ndim == nwant;
    for (int i = 0; ok && i < ndim; i++)
        ok = dims[i] == want[i];
    check(ok, __FILE__, line, "%s: wrong dims (rank %d, expected %d)", what, ndim, nwant);
}
#define ASSERT_DIMS(what, dims, ndim, ...)                                                  \
    do {                                                                                    \
        static const int64_t w_[] = {__VA_ARGS__};                                          \
        assert_dims(what, dims, ndim, w_, (int)(sizeof w_ / sizeof w_[0]), __LINE__);        \
    } while (0)

/* ---------------------------------------------------------------- node-test models */

static void test_conv(const char *dir)
{
    OnnxModel *m = load_model(dir, "test_conv_with_strides_padding/model.onnx");
    ASSERT_TRUE(m, "conv model");
    ASSERT(10, m->ir_version);
    ASSERT_STR("backend-test", m->producer);
    ASSERT(22, onnx_opset(m, ""));
    ASSERT(22, onnx_opset(m, "ai.onnx"));
    ASSERT(-1, onnx_opset(m, "com.microsoft"));
    const OnnxGraph *g = &m->graph;
    ASSERT_STR("test_conv_with_strides_padding", g->name);
    ASSERT(1, g->nnodes);
    ASSERT(0, g->ninit);
    const OnnxNode *n = &g->nodes[0];
    ASSERT_STR("Conv", n->op_type);
    ASSERT_STR("", n->domain);
    ASSERT(2, n->ninputs);
    ASSERT_STR("x", n->inputs[0]);
    ASSERT_STR("W", n->inputs[1]);
    ASSERT(1, n->noutputs);
    ASSERT_STR("y", n->outputs[0]);
    ASSERT(3, n->nattrs);
    const OnnxAttr *a = onnx_node_attr(n, "pads");
    ASSERT_TRUE(a, "pads attribute");
    ASSERT(ONNX_ATTR_INTS, a->type);
    ASSERT(4, a->nints);
    ASSERT(1, a->ints[0] + a->ints[1] + a->ints[2] + a->ints[3] - 3);
    a = onnx_node_attr(n, "strides");
    ASSERT_TRUE(a, "strides attribute");
    ASSERT(2, a->nints);
    ASSERT(2, a->ints[0]);
    ASSERT(2, a->ints[1]);
    a = onnx_node_attr(n, "kernel_shape");
    ASSERT_TRUE(a, "kernel_shape attribute");
    ASSERT(3, a->ints[1]);
    ASSERT(1, onnx_node_attr(n, "dilations") == NULL);
    ASSERT(2, g->ninputs);
    ASSERT_STR("x", g->inputs[0].name);
    ASSERT(ONNX_TYPE_TENSOR, g->inputs[0].kind);
    ASSERT(ONNX_FLOAT, g->inputs[0].dtype);
    ASSERT(1, g->inputs[0].has_shape);
    ASSERT_DIMS("x", g->inputs[0].dims, g->inputs[0].ndim, 1, 1, 7, 5);
    ASSERT_DIMS("W", g->inputs[1].dims, g->inputs[1].ndim, 1, 1, 3, 3);
    ASSERT(1, g->noutputs);
    ASSERT_DIMS("y", g->outputs[0].dims, g->outputs[0].ndim, 1, 1, 4, 3);
    ASSERT(1, g->outputs[0].dim_params[0] == NULL);
    onnx_free(m);

    OnnxTensor *t = load_tensor(dir, "test_conv_with_strides_padding/test_data_set_0/input_0.pb");
    ASSERT_TRUE(t, "conv input_0");
    ASSERT_STR("x", t->name);
    ASSERT(ONNX_FLOAT, t->dtype);
    ASSERT_DIMS("input_0", t->dims, t->ndim, 1, 1, 7, 5);
    ASSERT(35, t->nelems);
    ASSERT(140, t->nbytes);
    ASSERT_FLOAT(0.0f, f32_at(t, 0));
    ASSERT_FLOAT(1.0f, f32_at(t, 1));
    ASSERT_FLOAT(34.0f, f32_at(t, 34));
    ASSERT(0, (int)((uintptr_t)t->data % 16));
    onnx_tensor_free(t);

    t = load_tensor(dir, "test_conv_with_strides_padding/test_data_set_0/output_0.pb");
    ASSERT_TRUE(t, "conv output_0");
    ASSERT_DIMS("output_0", t->dims, t->ndim, 1, 1, 4, 3);
    ASSERT_FLOAT(12.0f, f32_at(t, 0));
    ASSERT_FLOAT(27.0f, f32_at(t, 1));
    ASSERT_FLOAT(108.0f, f32_at(t, 4));
    onnx_tensor_free(t);
}

static void test_gemm(const char *dir)
{
    OnnxModel *m = load_model(dir, "test_gemm_default_matrix_bias/model.onnx");
    ASSERT_TRUE(m, "gemm model");
    ASSERT(7, m->ir_version);
    ASSERT(13, onnx_opset(m, ""));
    const OnnxNode *n = &m->graph.nodes[0];
    ASSERT_STR("Gemm", n->op_type);
    ASSERT(3, n->ninputs);
    ASSERT_STR("c", n->inputs[2]);
    ASSERT(0, n->nattrs);
    ASSERT(1, onnx_node_attr(n, "alpha") == NULL);
    ASSERT(3, m->graph.ninputs);
    ASSERT_DIMS("a", m->graph.inputs[0].dims, m->graph.inputs[0].ndim, 3, 6);
    ASSERT_DIMS("b", m->graph.inputs[1].dims, m->graph.inputs[1].ndim, 6, 4);
    ASSERT_DIMS("c", m->graph.inputs[2].dims, m->graph.inputs[2].ndim, 3, 4);
    onnx_free(m);

    OnnxTensor *t = load_tensor(dir, "test_gemm_default_matrix_bias/test_data_set_0/input_0.pb");
    ASSERT_TRUE(t, "gemm input_0");
    ASSERT_STR("a", t->name);
    ASSERT(72, t->nbytes);
    ASSERT(0x0b, byte_at(t, 0));
    ASSERT(0x7f, byte_at(t, 1));
    ASSERT(0x0c, byte_at(t, 2));
    ASSERT(0x3f, byte_at(t, 3));
    onnx_tensor_free(t);
}

static void test_constant(const char *dir)
{
    OnnxModel *m = load_model(dir, "test_constant/model.onnx");
    ASSERT_TRUE(m, "constant model");
    const OnnxNode *n = &m->graph.nodes[0];
    ASSERT_STR("Constant", n->op_type);
    ASSERT(0, n->ninputs);
    ASSERT_STR("values", n->outputs[0]);
    const OnnxAttr *a = onnx_node_attr(n, "value");
    ASSERT_TRUE(a && a->t, "Constant value tensor");
    ASSERT(ONNX_ATTR_TENSOR, a->type);
    ASSERT_STR("const_tensor", a->t->name);
    ASSERT(ONNX_FLOAT, a->t->dtype);
    ASSERT_DIMS("const_tensor", a->t->dims, a->t->ndim, 5, 5);
    ASSERT(100, a->t->nbytes);
    ASSERT_FLOAT(1.764052391052246f, f32_at(a->t, 0));
    ASSERT_FLOAT(-0.9772778749465942f, f32_at(a->t, 5));
    ASSERT_FLOAT(2.269754648208618f, f32_at(a->t, 24));
    ASSERT(0, m->graph.ninputs);
    onnx_free(m);

    /* int32_data holding an INT32 */
    m = load_model(dir, "test_constantofshape_int_shape_zero/model.onnx");
    ASSERT_TRUE(m, "constantofshape model");
    a = onnx_node_attr(&m->graph.nodes[0], "value");
    ASSERT_TRUE(a && a->t, "ConstantOfShape value");
    ASSERT(ONNX_INT32, a->t->dtype);
    ASSERT(4, a->t->nbytes);
    ASSERT(0, byte_at(a->t, 0));
    ASSERT_DIMS("y", m->graph.outputs[0].dims, m->graph.outputs[0].ndim, 0);
    ASSERT(ONNX_INT32, m->graph.outputs[0].dtype);
    ASSERT(ONNX_INT64, m->graph.inputs[0].dtype);
    onnx_free(m);
}

static void test_attr_kinds(const char *dir)
{
    OnnxModel *m = load_model(dir, "test_resize_upsample_scales_linear/model.onnx");
    ASSERT_TRUE(m, "resize model");
    const OnnxNode *n = &m->graph.nodes[0];
    ASSERT(3, n->ninputs);
    ASSERT_STR("", n->inputs[1]);   /* an optional input left out */
    const OnnxAttr *a = onnx_node_attr(n, "mode");
    ASSERT_TRUE(a, "mode attribute");
    ASSERT(ONNX_ATTR_STRING, a->type);
    ASSERT_STR("linear", a->s);
    ASSERT(6, a->slen);
    onnx_free(m);

    m = load_model(dir, "test_layer_normalization_3d_axis1_epsilon/model.onnx");
    ASSERT_TRUE(m, "layernorm model");
    a = onnx_node_attr(&m->graph.nodes[0], "epsilon");
    ASSERT_TRUE(a, "epsilon attribute");
    ASSERT(ONNX_ATTR_FLOAT, a->type);
    ASSERT_FLOAT(0.1f, a->f);
    a = onnx_node_attr(&m->graph.nodes[0], "axis");
    ASSERT_TRUE(a, "axis attribute");
    ASSERT(ONNX_ATTR_INT, a->type);
    ASSERT(1, a->i);
    onnx_free(m);

    m = load_model(dir, "test_cast_FLOAT_to_FLOAT16/model.onnx");
    ASSERT_TRUE(m, "cast model");
    a = onnx_node_attr(&m->graph.nodes[0], "to");
    ASSERT_TRUE(a, "to attribute");
    ASSERT(ONNX_FLOAT16, a->i);
    ASSERT(ONNX_FLOAT16, m->graph.outputs[0].dtype);
    onnx_free(m);
}

/* payload kinds of the .pb files: raw_data, int32_data narrowed, packed nibbles, empty */
static void test_tensor_files(const char *dir)
{
    OnnxTensor *t = load_tensor(dir, "test_dequantizelinear_int4/test_data_set_0/input_0.pb");
    ASSERT_TRUE(t, "int4 tensor");
    ASSERT(ONNX_INT4, t->dtype);
    ASSERT(5, t->nelems);
    ASSERT(3, t->nbytes);
    ASSERT(16, byte_at(t, 0));
    ASSERT(199, byte_at(t, 1));
    ASSERT(8, byte_at(t, 2));
    onnx_tensor_free(t);

    t = load_tensor(dir, "test_quantizelinear_blocked_symmetric/test_data_set_0/output_0.pb");
    ASSERT_TRUE(t, "int16 tensor from int32_data");
    ASSERT(ONNX_INT16, t->dtype);
    ASSERT(24, t->nbytes);
    ASSERT(4, byte_at(t, 0));
    ASSERT(0, byte_at(t, 1));
    ASSERT(0xfb, byte_at(t, 2));   /* -5 */
    ASSERT(0xff, byte_at(t, 3));
    onnx_tensor_free(t);

    t = load_tensor(dir, "test_dequantizelinear_e4m3fn_zero_point/test_data_set_0/input_0.pb");
    ASSERT_TRUE(t, "float8 tensor");
    ASSERT(ONNX_FLOAT8E4M3FN, t->dtype);
    ASSERT(5, t->nbytes);
    ASSERT(126, byte_at(t, 3));
    ASSERT(237, byte_at(t, 4));
    onnx_tensor_free(t);

    t = load_tensor(dir, "test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb");
    ASSERT_TRUE(t, "float16 tensor");
    ASSERT(ONNX_FLOAT16, t->dtype);
    ASSERT(24, t->nbytes);
    ASSERT(0xaa, byte_at(t, 0));
    ASSERT(0x37, byte_at(t, 1));
    onnx_tensor_free(t);

    t = load_tensor(dir,
                    "test_reduce_sum_empty_set_non_reduced_axis_zero/test_data_set_0/output_0.pb");
    ASSERT_TRUE(t, "empty tensor");
    ASSERT_DIMS("empty", t->dims, t->ndim, 2, 0, 1);
    ASSERT(0, t->nelems);
    ASSERT(0, t->nbytes);
    ASSERT(1, t->data != NULL);
    onnx_tensor_free(t);

    ASSERT_STR("FLOAT8E4M3FN", onnx_dtype_name(ONNX_FLOAT8E4M3FN));
    ASSERT_STR("INT2", onnx_dtype_name(26));
    ASSERT_STR("?", onnx_dtype_name(27));
    ASSERT(2, onnx_dtype_size(ONNX_BFLOAT16));
    ASSERT(16, onnx_dtype_size(ONNX_COMPLEX128));
    ASSERT(0, onnx_dtype_size(ONNX_UINT4));
    ASSERT(0, onnx_dtype_size(ONNX_STRING));
    ASSERT(2, onnx_dtype_bits(ONNX_UINT2));
}

/* ---------------------------------------------------------------- the generated model */

static void test_ext_model(const char *data_dir)
{
    OnnxModel *m = load_model(data_dir, "ext_model.onnx");
    ASSERT_TRUE(m, "ext_model.onnx (made by tests/data/onnx/make_models.py)");
    ASSERT(8, m->ir_version);
    ASSERT_STR("kgen-test", m->producer);
    ASSERT_STR("1", m->producer_version);
    ASSERT(17, onnx_opset(m, "ai.onnx"));
    ASSERT(1, onnx_opset(m, "com.example"));
    const OnnxGraph *g = &m->graph;
    ASSERT_STR("ext_graph", g->name);
    ASSERT(6, g->ninit);
    if (g->ninit == 6) {
        const OnnxTensor *w = &g->initializers[0];
        ASSERT_STR("w", w->name);
        ASSERT(1, w->external);
        ASSERT(24, w->nbytes);
        ASSERT_FLOAT(0.0f, f32_at(w, 0));
        ASSERT_FLOAT(0.5f, f32_at(w, 1));
        ASSERT_FLOAT(2.5f, f32_at(w, 5));
        const OnnxTensor *b = &g->initializers[1];
        ASSERT(ONNX_INT64, b->dtype);
        ASSERT(-2, i64_at(b, 1));
        ASSERT(3, i64_at(b, 2));
        const OnnxTensor *d = &g->initializers[2];
        ASSERT(ONNX_DOUBLE, d->dtype);
        ASSERT(1, f64_at(d, 0) == 0.25 && f64_at(d, 1) == -1.5);
        const OnnxTensor *u = &g->initializers[3];
        ASSERT(ONNX_UINT32, u->dtype);
        ASSERT(8, u->nbytes);
        ASSERT(0xee, byte_at(u, 7));   /* 4000000000 = 0xee6b2800 */
        ASSERT(0x00, byte_at(u, 4));
        const OnnxTensor *s = &g->initializers[4];
        ASSERT(ONNX_STRING, s->dtype);
        ASSERT(1, s->data == NULL);
        ASSERT_TRUE(s->strings, "string tensor strings");
        ASSERT_STR("ab", s->strings[0]);
        ASSERT_STR("c", s->strings[1]);
        ASSERT(1, s->string_lens[1]);
        const OnnxTensor *i8 = &g->initializers[5];
        ASSERT(3, i8->nbytes);
        ASSERT(0xff, byte_at(i8, 0));
        ASSERT(0x02, byte_at(i8, 1));
        ASSERT(0x80, byte_at(i8, 2));
    }
    ASSERT(3, g->nnodes);
    ASSERT_TRUE(g->nnodes == 3, "three nodes");
    const OnnxNode *n = &g->nodes[1];
    ASSERT_STR("custom", n->name);
    ASSERT_STR("CustomOp", n->op_type);
    ASSERT_STR("com.example", n->domain);
    const OnnxAttr *a = onnx_node_attr(n, "alpha");
    ASSERT_TRUE(a, "alpha");
    ASSERT(ONNX_ATTR_FLOAT, a->type);
    ASSERT_FLOAT(1.5f, a->f);
    a = onnx_node_attr(n, "count");
    ASSERT_TRUE(a, "count");
    ASSERT(7, a->i);
    a = onnx_node_attr(n, "mode");
    ASSERT_TRUE(a, "mode");
    ASSERT_STR("fast", a->s);
    a = onnx_node_attr(n, "scales");
    ASSERT_TRUE(a, "scales");
    ASSERT(ONNX_ATTR_FLOATS, a->type);
    ASSERT(2, a->nfloats);
    ASSERT_FLOAT(-2.0f, a->floats[1]);
    a = onnx_node_attr(n, "axes");
    ASSERT_TRUE(a, "axes");
    ASSERT(3, a->nints);
    ASSERT(-1, a->ints[1]);
    a = onnx_node_attr(n, "tags");
    ASSERT_TRUE(a, "tags");
    ASSERT(ONNX_ATTR_STRINGS, a->type);
    ASSERT(2, a->nstrings);
    ASSERT_STR("qr", a->strings[1]);
    ASSERT(2, a->string_lens[1]);

    n = &g->nodes[2];
    ASSERT_STR("If", n->op_type);
    a = onnx_node_attr(n, "then_branch");
    ASSERT_TRUE(a && a->g, "then_branch subgraph");
    ASSERT(ONNX_ATTR_GRAPH, a->type);
    ASSERT_STR("then_body", a->g->name);
    ASSERT(1, a->g->nnodes);
    ASSERT_STR("Constant", a->g->nodes[0].op_type);
    const OnnxAttr *v = onnx_node_attr(&a->g->nodes[0], "value");
    ASSERT_TRUE(v && v->t, "then_branch Constant value");
    ASSERT_FLOAT(1.0f, f32_at(v->t, 0));
    ASSERT_STR("t_out", a->g->outputs[0].name);

    ASSERT(2, g->ninputs);
    const OnnxValueInfo *x = &g->inputs[0];
    ASSERT_DIMS("x", x->dims, x->ndim, -1, 2);
    ASSERT_STR("N", x->dim_params[0]);
    ASSERT(1, x->dim_params[1] == NULL);
    const OnnxValueInfo *cond = &g->inputs[1];
    ASSERT(ONNX_BOOL, cond->dtype);
    ASSERT(1, cond->has_shape);
    ASSERT(0, cond->ndim);
    const OnnxValueInfo *y = &g->outputs[0];
    ASSERT_DIMS("y", y->dims, y->ndim, -1, -1);
    ASSERT_STR("N", y->dim_params[0]);
    ASSERT(1, y->dim_params[1] == NULL);   /* unknown, neither value nor param */
    ASSERT(1, g->nvalue_info);
    ASSERT_STR("xw", g->value_info[0].name);
    ASSERT_DIMS("xw", g->value_info[0].dims, g->value_info[0].ndim, -1, 3);
    onnx_free(m);

    /* loaded from memory without a directory, the external tensor cannot be read */
    char *path = join(data_dir, "ext_model.onnx");
    FILE *fp = fopen(path, "rb");
    free(path);
    ASSERT_TRUE(fp, "open ext_model.onnx");
    static uint8_t buf[4096];
    size_t len = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    char err[512];
    m = onnx_load_buffer(buf, len, "mem.onnx", NULL, err, sizeof err);
    ASSERT(1, m == NULL);
    check(strstr(err, "mem.onnx: graph.initializer[0]: tensor 'w'") &&
              strstr(err, "needs the model's directory"),
          __FILE__, __LINE__, "unexpected message: %s", err);
    onnx_free(m);
}

/* ---------------------------------------------------------------- a small encoder */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} Buf;

static void put(Buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->b = realloc(b->b, cap);
        if (!b->b)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void put_byte(Buf *b, int x)
{
    uint8_t c = (uint8_t)x;
    put(b, &c, 1);
}

static void put_varint(Buf *b, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(b, (int)(v & 0x7f) | 0x80);
        v >>= 7;
    }
    put_byte(b, (int)v);
}

static void put_tag(Buf *b, uint32_t field, int wire)
{
    put_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

static void put_int(Buf *b, uint32_t field, int64_t v)
{
    put_tag(b, field, ONNX_PB_VARINT);
    put_varint(b, (uint64_t)v);
}

static void put_bytes(Buf *b, uint32_t field, const void *p, size_t n)
{
    put_tag(b, field, ONNX_PB_LEN);
    put_varint(b, n);
    put(b, p, n);
}

static void put_str(Buf *b, uint32_t field, const char *s)
{
    put_bytes(b, field, s, strlen(s));
}

static void put_f32(Buf *b, uint32_t field, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_tag(b, field, ONNX_PB_FIXED32);
    for (int i = 0; i < 4; i++)
        put_byte(b, (int)(u >> (8 * i)) & 0xff);
}

/* appends sub as a LEN field and frees it */
static void put_msg(Buf *b, uint32_t field, Buf *sub)
{
    put_bytes(b, field, sub->b, sub->n);
    free(sub->b);
    memset(sub, 0, sizeof *sub);
}

static void put_packed_ints(Buf *b, uint32_t field, const int64_t *v, int n)
{
    Buf p = {0};
    for (int i = 0; i < n; i++)
        put_varint(&p, (uint64_t)v[i]);
    put_msg(b, field, &p);
}

static void put_packed_floats(Buf *b, uint32_t field, const float *v, int n)
{
    Buf p = {0};
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        for (int k = 0; k < 4; k++)
            put_byte(&p, (int)(u >> (8 * k)) & 0xff);
    }
    put_msg(b, field, &p);
}

/* field numbers, from onnx.proto */
enum {
    M_IR = 1, M_GRAPH = 7, M_OPSET = 8,
    G_NODE = 1, G_NAME = 2, G_INIT = 5, G_INPUT = 11, G_OUTPUT = 12,
    N_INPUT = 1, N_OUTPUT = 2, N_NAME = 3, N_OP = 4, N_ATTR = 5,
    A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_FLOATS = 7, A_INTS = 8,
    A_TYPE = 20,
    T_DIMS = 1, T_DTYPE = 2, T_FLOAT = 4, T_INT32 = 5, T_INT64 = 7, T_NAME = 8, T_RAW = 9,
    T_EXT = 13, T_LOC = 14
};

/* a model around graph g (freed) */
static Buf model_of(Buf *g)
{
    Buf m = {0}, o = {0};
    put_int(&m, M_IR, 8);
    put_str(&o, 1, "");
    put_int(&o, 2, 17);
    put_msg(&m, M_OPSET, &o);
    put_msg(&m, M_GRAPH, g);
    return m;
}

/* a model with one node holding attribute a (freed) */
static Buf model_with_attr(Buf *a)
{
    Buf n = {0}, g = {0};
    put_str(&n, N_OP, "Op");
    put_msg(&n, N_ATTR, a);
    put_msg(&g, G_NODE, &n);
    return model_of(&g);
}

/* a model with initializer t (freed) */
static Buf model_with_init(Buf *t)
{
    Buf g = {0};
    put_msg(&g, G_INIT, t);
    return model_of(&g);
}

/* Must fail with a message holding each of the NULL-ended needles; frees b. */
static void expect_error(int line, Buf *b, int tensor, const char *dir, ...)
{
    char err[512] = "";
    void *r = tensor ? (void *)onnx_load_tensor_buffer(b->b, b->n, "t.pb", dir, err, sizeof err)
                     : (void *)onnx_load_buffer(b->b, b->n, "t.onnx", dir, err, sizeof err);
    check(r == NULL, __FILE__, line, "a malformed %s loaded", tensor ? "tensor" : "model");
    if (getenv("TEST_VERBOSE"))
        printf("expected error: %s\n", err);
    va_list ap;
    va_start(ap, dir);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        check(strstr(err, needle) != NULL, __FILE__, line, "message \"%s\" lacks \"%s\"", err,
              needle);
    va_end(ap);
    if (r && tensor)
        onnx_tensor_free(r);
    else if (r)
        onnx_free(r);
    free(b->b);
    memset(b, 0, sizeof *b);
}
#define MODEL_ERROR(b, ...) expect_error(__LINE__, b, 0, NULL, __VA_ARGS__, (const char *)NULL)
#define TENSOR_ERROR(b, dir, ...) expect_error(__LINE__, b, 1, dir, __VA_ARGS__, (const char *)NULL)

/* ---------------------------------------------------------------- hand-made models */

static void test_handmade(void)
{
    Buf n = {0}, g = {0}, a = {0}, t = {0};

    /* a node whose list attributes mix packed and unpacked runs, and unknown fields of
     * every wire type */
    put_str(&n, N_INPUT, "x");
    put_str(&n, N_OUTPUT, "y");
    put_str(&n, N_NAME, "r");
    put_str(&n, N_OP, "Relu");
    put_int(&n, 100, 5);
    put_tag(&n, 101, ONNX_PB_FIXED64);
    put(&n, "\1\2\3\4\5\6\7\10", 8);
    put_f32(&n, 102, 3.0f);
    put_str(&n, 103, "skip me");
    put_str(&a, A_NAME, "ints_mixed");
    put_packed_ints(&a, A_INTS, (const int64_t[]){1, -2}, 2);
    put_int(&a, A_INTS, 3);
    put_int(&a, A_TYPE, ONNX_ATTR_INTS);
    put_msg(&n, N_ATTR, &a);
    put_str(&a, A_NAME, "floats_mixed");
    put_f32(&a, A_FLOATS, 1.25f);
    put_packed_floats(&a, A_FLOATS, (const float[]){2.5f, -0.5f}, 2);
    put_int(&a, A_TYPE, ONNX_ATTR_FLOATS);
    put_msg(&n, N_ATTR, &a);
    put_str(&a, A_NAME, "untyped");   /* no type field: inferred from i */
    put_int(&a, A_I, -5);
    put_msg(&n, N_ATTR, &a);
    put_str(&a, A_NAME, "bytes");
    put_bytes(&a, A_S, "a\0b", 3);
    put_int(&a, A_TYPE, ONNX_ATTR_STRING);
    put_msg(&n, N_ATTR, &a);
    put_msg(&g, G_NODE, &n);

    /* initializers: packed dims after an unpacked one, packed float_data */
    put_str(&t, T_NAME, "p");
    put_int(&t, T_DIMS, 2);
    put_packed_ints(&t, T_DIMS, (const int64_t[]){2}, 1);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    put_packed_floats(&t, T_FLOAT, (const float[]){1, 2, 3, -4}, 4);
    put_msg(&g, G_INIT, &t);
    /* INT8 values one to an int32, unpacked, data_type after the data */
    put_str(&t, T_NAME, "q");
    put_int(&t, T_DIMS, 3);
    put_int(&t, T_INT32, -1);
    put_int(&t, T_INT32, 127);
    put_int(&t, T_INT32, -128);
    put_int(&t, T_DTYPE, ONNX_INT8);
    put_msg(&g, G_INIT, &t);
    /* FLOAT16 bits in packed int32_data */
    put_str(&t, T_NAME, "h");
    put_int(&t, T_DIMS, 2);
    put_int(&t, T_DTYPE, ONNX_FLOAT16);
    put_packed_ints(&t, T_INT32, (const int64_t[]){0x3c00, 0xc000}, 2);
    put_msg(&g, G_INIT, &t);
    /* UINT4: three nibbles in two packed bytes */
    put_str(&t, T_NAME, "n");
    put_int(&t, T_DIMS, 3);
    put_int(&t, T_DTYPE, ONNX_UINT4);
    put_packed_ints(&t, T_INT32, (const int64_t[]){0x21, 0x03}, 2);
    put_msg(&g, G_INIT, &t);
    /* UINT2 in raw_data: five elements, two bytes */
    put_str(&t, T_NAME, "u2");
    put_int(&t, T_DIMS, 5);
    put_int(&t, T_DTYPE, ONNX_UINT2);
    put_bytes(&t, T_RAW, "\xe4\x01", 2);
    put_msg(&g, G_INIT, &t);
    /* a BOOL scalar */
    put_str(&t, T_NAME, "flag");
    put_int(&t, T_DTYPE, ONNX_BOOL);
    put_int(&t, T_INT32, 1);
    put_msg(&g, G_INIT, &t);
    /* COMPLEX64: two floats an element */
    put_str(&t, T_NAME, "z");
    put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, ONNX_COMPLEX64);
    put_f32(&t, T_FLOAT, 1.0f);
    put_f32(&t, T_FLOAT, 2.0f);
    put_msg(&g, G_INIT, &t);
    /* a graph input without a shape */
    Buf vi = {0}, ty = {0}, tt = {0};
    put_str(&vi, 1, "x");
    put_int(&tt, 1, ONNX_FLOAT);
    put_msg(&ty, 1, &tt);
    put_msg(&vi, 2, &ty);
    put_msg(&g, G_INPUT, &vi);
    Buf m = model_of(&g);
    put_str(&m, 14, "metadata, skipped");
    put_f32(&m, 99, 1.0f);

    char err[512];
    OnnxModel *mo = onnx_load_buffer(m.b, m.n, "hand.onnx", NULL, err, sizeof err);
    free(m.b);
    ASSERT_TRUE(mo, "hand-made model: %s", err);
    ASSERT(17, onnx_opset(mo, ""));
    const OnnxNode *nd = &mo->graph.nodes[0];
    ASSERT_STR("Relu", nd->op_type);
    ASSERT_STR("r", nd->name);
    ASSERT(4, nd->nattrs);
    const OnnxAttr *at = onnx_node_attr(nd, "ints_mixed");
    ASSERT_TRUE(at, "ints_mixed");
    ASSERT(3, at->nints);
    ASSERT(-2, at->ints[1]);
    ASSERT(3, at->ints[2]);
    at = onnx_node_attr(nd, "floats_mixed");
    ASSERT_TRUE(at, "floats_mixed");
    ASSERT(3, at->nfloats);
    ASSERT_FLOAT(1.25f, at->floats[0]);
    ASSERT_FLOAT(-0.5f, at->floats[2]);
    at = onnx_node_attr(nd, "untyped");
    ASSERT_TRUE(at, "untyped");
    ASSERT(ONNX_ATTR_INT, at->type);
    ASSERT(-5, at->i);
    at = onnx_node_attr(nd, "bytes");
    ASSERT_TRUE(at, "bytes");
    ASSERT(3, at->slen);
    ASSERT('b', at->s[2]);

    const OnnxGraph *gr = &mo->graph;
    ASSERT(7, gr->ninit);
    ASSERT_TRUE(gr->ninit == 7, "seven initializers");
    ASSERT_DIMS("p", gr->initializers[0].dims, gr->initializers[0].ndim, 2, 2);
    ASSERT_FLOAT(-4.0f, f32_at(&gr->initializers[0], 3));
    const OnnxTensor *q = &gr->initializers[1];
    ASSERT(ONNX_INT8, q->dtype);
    ASSERT(3, q->nbytes);
    ASSERT(0xff, byte_at(q, 0));
    ASSERT(0x7f, byte_at(q, 1));
    ASSERT(0x80, byte_at(q, 2));
    const OnnxTensor *h = &gr->initializers[2];
    ASSERT(4, h->nbytes);
    ASSERT(0x00, byte_at(h, 0));
    ASSERT(0x3c, byte_at(h, 1));
    ASSERT(0xc0, byte_at(h, 3));
    const OnnxTensor *u4 = &gr->initializers[3];
    ASSERT(2, u4->nbytes);
    ASSERT(0x21, byte_at(u4, 0));
    ASSERT(0x03, byte_at(u4, 1));
    ASSERT(2, gr->initializers[4].nbytes);
    ASSERT(0xe4, byte_at(&gr->initializers[4], 0));
    const OnnxTensor *flag = &gr->initializers[5];
    ASSERT(0, flag->ndim);
    ASSERT(1, flag->nelems);
    ASSERT(1, byte_at(flag, 0));
    const OnnxTensor *z = &gr->initializers[6];
    ASSERT(8, z->nbytes);
    ASSERT_FLOAT(2.0f, f32_at(z, 1));
    ASSERT(1, gr->ninputs);
    ASSERT(0, gr->inputs[0].has_shape);
    ASSERT(ONNX_FLOAT, gr->inputs[0].dtype);
    onnx_free(mo);
}

/* nested If subgraphs, `levels` deep */
static Buf nested_model(int levels)
{
    Buf n = {0}, g = {0}, a = {0};
    put_str(&n, N_OP, "Relu");
    put_msg(&g, G_NODE, &n);
    for (int i = 0; i < levels; i++) {
        put_str(&a, A_NAME, "then_branch");
        put_int(&a, A_TYPE, ONNX_ATTR_GRAPH);
        put_msg(&a, A_G, &g);
        put_str(&n, N_OP, "If");
        put_msg(&n, N_ATTR, &a);
        put_msg(&g, G_NODE, &n);
    }
    return model_of(&g);
}

static void test_errors(const char *data_dir)
{
    Buf b = {0}, a = {0}, t = {0}, n = {0}, g = {0};

    /* wire format */
    MODEL_ERROR(&b, "t.onnx: the model has no graph at byte 0");
    put(&b, "\x08\x80", 2);
    MODEL_ERROR(&b, "t.onnx: truncated varint in field 1 at byte 0");
    put(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11);
    MODEL_ERROR(&b, "varint longer than 64 bits");
    put(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11);
    MODEL_ERROR(&b, "varint longer than 64 bits");
    put(&b, "\x3a\x10\x01\x02\x03", 5);
    MODEL_ERROR(&b, "truncated length-delimited field 7 (length 16, 3 bytes left) at byte 0");
    put(&b, "\x0b\x0c", 2);
    MODEL_ERROR(&b, "groups are not supported");
    put(&b, "\x0f", 1);
    MODEL_ERROR(&b, "invalid wire type 7");
    put(&b, "\x00\x01", 2);
    MODEL_ERROR(&b, "invalid field number 0");
    put_int(&b, M_IR, 8);
    put(&b, "\x9d\x06\x01\x02", 4);   /* field 99, fixed32, two bytes */
    MODEL_ERROR(&b, "truncated fixed32 field 99 at byte 2");
    put(&b, "\x99\x06\x01", 3);
    MODEL_ERROR(&b, "truncated fixed64 field 99");

    /* a length running past its own message, deep inside: the path and offset name it */
    put_str(&a, A_NAME, "a");
    put(&a, "\x22\x32xy", 4);
    b = model_with_attr(&a);
    size_t at = 0;
    while (at + 4 <= b.n && memcmp(b.b + at, "\x22\x32xy", 4))
        at++;
    char want[160];
    snprintf(want, sizeof want, "t.onnx: graph.node[0].attribute[0]: truncated "
             "length-delimited field 4 (length 50, 2 bytes left) at byte %zu", at);
    MODEL_ERROR(&b, want);

    /* wrong wire types for known fields */
    put_str(&b, M_IR, "8");
    MODEL_ERROR(&b, "t.onnx: ir_version: expected wire type 0 (varint), found 2 "
                "(length-delimited) at byte 0");
    put_int(&n, N_OP, 3);
    put_msg(&g, G_NODE, &n);
    b = model_of(&g);
    MODEL_ERROR(&b, "graph.node[0].op_type: expected wire type 2");
    put_int(&b, M_GRAPH, 1);
    MODEL_ERROR(&b, "graph: expected a message");
    put_str(&a, A_NAME, "f");
    put_int(&a, A_F, 1);
    b = model_with_attr(&a);
    MODEL_ERROR(&b, "graph.node[0].attribute[0].f: expected wire type 5 (fixed32)");
    put_str(&a, A_NAME, "fl");
    put_str(&a, A_FLOATS, "abc");
    b = model_with_attr(&a);
    MODEL_ERROR(&b, "packed fixed32 field 7 has 3 bytes, not a multiple of 4");
    put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, ONNX_DOUBLE);
    put_f32(&t, 10, 1.0f);
    b = model_with_init(&t);
    MODEL_ERROR(&b, "graph.initializer[0].double_data: expected wire type 1 (fixed64)");

    /* limits */
    for (int i = 0; i < 9; i++)
        put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    TENSOR_ERROR(&t, NULL, "t.pb: dims: 9 dims, over the rank limit of 8");
    {
        Buf d = {0};
        for (int i = 0; i < 1000000; i++)
            put_varint(&d, 1);
        put_msg(&t, T_DIMS, &d);
        put_int(&t, T_DTYPE, ONNX_FLOAT);
        b = model_with_init(&t);
        MODEL_ERROR(&b, "graph.initializer[0].dims: 1000000 dims, over the rank limit of 8");
    }
    put_packed_ints(&t, T_DIMS, (const int64_t[]){1 << 20, 1 << 20, 2}, 3);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    TENSOR_ERROR(&t, NULL, "more than 1099511627776 elements, the limit (--max-elements)");
    put_int(&t, T_DIMS, -3);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    TENSOR_ERROR(&t, NULL, "dims: negative dim -3");
    b = nested_model(4);
    {
        char err[512];
        OnnxModel *m = onnx_load_buffer(b.b, b.n, "deep.onnx", NULL, err, sizeof err);
        check(m != NULL, __FILE__, __LINE__, "4 nested subgraphs: %s", err);
        onnx_free(m);
        free(b.b);
    }
    b = nested_model(5);
    MODEL_ERROR(&b, "messages nested deeper than 16 levels",
                "graph.node[0].attribute[0].g.node[0].attribute[0].g");
    {
        Buf vi = {0}, ty = {0}, tt = {0}, sh = {0}, dim = {0};
        for (int i = 0; i < ONNX_MAX_RANK + 1; i++) {
            put_int(&dim, 1, 4);
            put_msg(&sh, 1, &dim);
        }
        put_int(&tt, 1, ONNX_FLOAT);
        put_msg(&tt, 2, &sh);
        put_msg(&ty, 1, &tt);
        put_str(&vi, 1, "x");
        put_msg(&vi, 2, &ty);
        put_msg(&g, G_INPUT, &vi);
        b = model_of(&g);
        MODEL_ERROR(&b, "graph.input[0].type.tensor_type.shape.dim: 9 dims, over the rank "
                    "limit of 8");
    }
    if (sizeof(size_t) > 4) {
        /* the size is refused before a byte is read */
        char err[256];
        static const uint8_t one[1];
        ASSERT(1, onnx_load_buffer(one, (size_t)ONNX_MAX_FILE_SIZE + 1, "huge.onnx", NULL, err,
                                   sizeof err) == NULL);
        check(strstr(err, "huge.onnx: larger than the limit of 2048 MiB (--max-file-mb)") != NULL,
              __FILE__, __LINE__, "message: %s", err);
    }
    put_str(&n, N_OP, "Big");
    for (int i = 0; i < ONNX_MAX_ATTRS + 1; i++)
        put_str(&n, N_ATTR, "");
    put_msg(&g, G_NODE, &n);
    b = model_of(&g);
    MODEL_ERROR(&b, "graph.node[0]: 1001 attributes, over the limit of 1000");
    for (int i = 0; i < ONNX_MAX_NODES + 1; i++)
        put_str(&g, G_NODE, "");
    b = model_of(&g);
    MODEL_ERROR(&b, "graph: 1000001 nodes, over the limit of 1000000 (--max-nodes)");
    {
        /* limits given to one load: nodes, elements, file size */
        char err[512];
        OnnxLimits lim = {.nodes = 3};
        for (int i = 0; i < 4; i++)
            put_str(&g, G_NODE, "");
        b = model_of(&g);
        ASSERT(1, onnx_load_buffer_ex(b.b, b.n, "l.onnx", NULL, &lim, err, sizeof err) == NULL);
        check(strstr(err, "l.onnx: graph: 4 nodes, over the limit of 3 (--max-nodes)") != NULL, __FILE__,
              __LINE__, "message: %s", err);
        lim = (OnnxLimits){.file_bytes = 10};
        ASSERT(1, onnx_load_buffer_ex(b.b, b.n, "l.onnx", NULL, &lim, err, sizeof err) == NULL);
        check(strstr(err, "l.onnx: larger than the limit of 10 bytes (--max-file-mb)") != NULL, __FILE__,
              __LINE__, "message: %s", err);
        free(b.b);
        put_packed_ints(&t, T_DIMS, (const int64_t[]){10, 10}, 2);
        put_int(&t, T_DTYPE, ONNX_FLOAT);
        lim = (OnnxLimits){.elements = 99};
        ASSERT(1, onnx_load_tensor_buffer_ex(t.b, t.n, "l.pb", NULL, &lim, err, sizeof err) == NULL);
        check(strstr(err, "l.pb: tensor '': more than 99 elements, the limit (--max-elements)") != NULL,
              __FILE__, __LINE__, "message: %s", err);
        free(t.b);
        memset(&t, 0, sizeof t);
    }

    /* meaning */
    put_int(&t, T_DIMS, 4);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    put_str(&t, T_NAME, "w");
    put_bytes(&t, T_RAW, "123456789012", 12);
    b = model_with_init(&t);
    MODEL_ERROR(&b, "graph.initializer[0]: tensor 'w': raw_data holds 12 bytes, but 4 FLOAT "
                "elements need 16");
    put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    put_bytes(&t, T_RAW, "1234", 4);
    put_f32(&t, T_FLOAT, 1.0f);
    TENSOR_ERROR(&t, NULL, "holds both float_data and raw_data");
    put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, ONNX_INT64);
    put_f32(&t, T_FLOAT, 1.0f);
    TENSOR_ERROR(&t, NULL, "float_data cannot hold INT64 values");
    put_int(&t, T_DIMS, 3);
    put_int(&t, T_DTYPE, ONNX_INT64);
    put_int(&t, T_INT64, 1);
    TENSOR_ERROR(&t, NULL, "int64_data holds 1 values, but 3 INT64 elements need 3");
    put_int(&t, T_DIMS, 1);
    put_int(&t, T_DTYPE, 99);
    TENSOR_ERROR(&t, NULL, "unknown data_type 99");
    put_int(&t, T_DIMS, 1);
    put_f32(&t, T_FLOAT, 1.0f);
    TENSOR_ERROR(&t, NULL, "tensor '' has no data_type");
    put_int(&t, T_DIMS, 2);
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    TENSOR_ERROR(&t, NULL, "2 elements but no data");
    put_int(&t, T_DTYPE, ONNX_FLOAT);
    put_f32(&t, T_FLOAT, 1.0f);
    put_int(&t, T_LOC, 2);
    TENSOR_ERROR(&t, NULL, "unknown data_location 2");
    put_bytes(&t, T_NAME, "a\0b", 3);
    TENSOR_ERROR(&t, NULL, "name: NUL byte inside a name");
    put_int(&a, A_I, 1);
    b = model_with_attr(&a);
    MODEL_ERROR(&b, "graph.node[0].attribute[0]: attribute has no name");
    put_str(&a, A_NAME, "x");
    put_int(&a, A_TYPE, 99);
    b = model_with_attr(&a);
    MODEL_ERROR(&b, "attribute[0].type: unknown attribute type 99");
    put_str(&a, A_NAME, "value");
    put_int(&a, A_TYPE, ONNX_ATTR_TENSOR);
    b = model_with_attr(&a);
    MODEL_ERROR(&b, "attribute 'value' of type TENSOR has no tensor");
    put_str(&n, N_NAME, "nameless");
    put_msg(&g, G_NODE, &n);
    b = model_of(&g);
    MODEL_ERROR(&b, "graph.node[0]: node 'nameless' has no op_type");
    put_str(&g, G_NAME, "g");
    b = model_of(&g);
    put_str(&g, G_NAME, "again");
    put_msg(&b, M_GRAPH, &g);
    MODEL_ERROR(&b, "graph: the field appears twice");

    /* external data: every path is checked before anything is opened */
    static const struct {
        const char *location, *offset, *length, *needle;
    } ext[] = {
        {"../ext_weights.bin", "16", "24", "must be a relative path without '..'"},
        {"/etc/passwd", "0", "24", "must be a relative path without '..'"},
        {"sub/../ext_weights.bin", "16", "24", "must be a relative path without '..'"},
        {"C:\\weights.bin", "16", "24", "must be a relative path without '..'"},
        {"missing.bin", "0", "24", "cannot open external data"},
        {"ext_weights.bin", "32", "24", "is 40 bytes, too short for 24 bytes at offset 32"},
        {"ext_weights.bin", "16", "20", "external data length 20, but 6 FLOAT elements need 24"},
        {"ext_weights.bin", "0", NULL, "holds 40 bytes after offset 0, but 6 FLOAT"},
        {"ext_weights.bin", "1x", "24", "offset '1x' is not a non-negative number"},
        {"ext_weights.bin", "-1", "24", "offset '-1' is not a non-negative number"},
        {"ext_weights.bin", "99999999999999999999", "24", "is not a non-negative number"},
        {NULL, "16", "24", "external data has no location"},
    };
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        put_str(&t, T_NAME, "w");
        put_packed_ints(&t, T_DIMS, (const int64_t[]){2, 3}, 2);
        put_int(&t, T_DTYPE, ONNX_FLOAT);
        put_int(&t, T_LOC, 1);
        const char *kv[3][2] = {{"location", ext[i].location}, {"offset", ext[i].offset},
                                {"length", ext[i].length}};
        for (int k = 0; k < 3; k++) {
            Buf e = {0};
            if (!kv[k][1])
                continue;
            put_str(&e, 1, kv[k][0]);
            put_str(&e, 2, kv[k][1]);
            put_msg(&t, T_EXT, &e);
        }
        TENSOR_ERROR(&t, data_dir, "t.pb: tensor 'w': ", ext[i].needle);
    }
    /* the same without length, from offset 16 to the end: loads */
    {
        Buf e = {0};
        put_str(&t, T_NAME, "w");
        put_packed_ints(&t, T_DIMS, (const int64_t[]){2, 3}, 2);
        put_int(&t, T_DTYPE, ONNX_FLOAT);
        put_int(&t, T_LOC, 1);
        put_str(&e, 1, "location");
        put_str(&e, 2, "./ext_weights.bin");
        put_msg(&t, T_EXT, &e);
        put_str(&e, 1, "offset");
        put_str(&e, 2, "16");
        put_msg(&t, T_EXT, &e);
        char err[512];
        OnnxTensor *w = onnx_load_tensor_buffer(t.b, t.n, "w.pb", data_dir, err, sizeof err);
        check(w != NULL, __FILE__, __LINE__, "external tensor without length: %s", err);
        if (w) {
            ASSERT(1, w->external);
            ASSERT_FLOAT(1.5f, f32_at(w, 3));
        }
        onnx_tensor_free(w);
        put_bytes(&t, T_RAW, "", 0);
        TENSOR_ERROR(&t, data_dir, "tensor 'w' has external data and raw_data");
    }

    /* a message that does not fit, and err buffers that are tiny or absent */
    {
        char small[8];
        put(&b, "\x08\x80", 2);
        ASSERT(1, onnx_load_buffer(b.b, b.n, "t.onnx", NULL, small, sizeof small) == NULL);
        ASSERT(7, strlen(small));
        ASSERT(1, onnx_load_buffer(b.b, b.n, "t.onnx", NULL, NULL, 0) == NULL);
        free(b.b);
        ASSERT(1, onnx_load_buffer(NULL, 0, "t.onnx", NULL, NULL, 0) == NULL);
        char err[256];
        ASSERT(1, onnx_load_file("/nonexistent/model.onnx", err, sizeof err) == NULL);
        check(strstr(err, "/nonexistent/model.onnx: cannot open") != NULL, __FILE__, __LINE__,
              "message: %s", err);
        ASSERT(1, onnx_load_tensor_file(data_dir, err, sizeof err) == NULL);   /* a folder */
    }
}

/* ---------------------------------------------------------------- mutations */

static uint32_t rng(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Every prefix and a few thousand byte changes of the file: each load either succeeds or
 * fails with a message; ASan and UBSan watch for the rest. */
static void mutate_file(const char *path, int tensor, const char *dir)
{
    FILE *fp = fopen(path, "rb");
    check(fp != NULL, __FILE__, __LINE__, "cannot open %s", path);
    if (!fp)
        return;
    static uint8_t orig[1 << 16], buf[1 << 16];
    size_t len = fread(orig, 1, sizeof orig, fp);
    fclose(fp);
    uint32_t seed = 12345;
    int loads = 0, ok = 0, silent = 0;
    for (size_t cut = 0; cut <= len + 2 * len * 4; cut++) {
        size_t n = len;
        memcpy(buf, orig, len);
        if (cut < len) {
            n = cut;
        } else {
            int changes = 1 + (int)(rng(&seed) % 3);
            for (int k = 0; k < changes; k++) {
                size_t i = rng(&seed) % len;
                uint32_t r = rng(&seed);
                buf[i] = r & 1 ? (uint8_t)(r >> 1) : (uint8_t)(buf[i] ^ (1u << (r >> 1) % 8));
            }
        }
        char err[512] = "";
        loads++;
        if (tensor) {
            OnnxTensor *t = onnx_load_tensor_buffer(buf, n, path, dir, err, sizeof err);
            ok += t != NULL;
            silent += !t && !err[0];
            onnx_tensor_free(t);
        } else {
            OnnxModel *m = onnx_load_buffer(buf, n, path, dir, err, sizeof err);
            ok += m != NULL;
            silent += !m && !err[0];
            onnx_free(m);
        }
    }
    check(silent == 0, __FILE__, __LINE__, "%s: %d failed loads without a message", path, silent);
    printf("mutations of %s: %d loads, %d loaded, %d failed with a message\n", path, loads, ok,
           loads - ok);
}

/* ---------------------------------------------------------------- every node test */

/* a,b,c vs the dtype names of the value infos */
static int same_dtypes(const char *list, const OnnxValueInfo *v, int n)
{
    if (!strcmp(list, "-"))
        return n == 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    int i = 0;
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","), i++)
        if (i >= n || strcmp(s, onnx_dtype_name(v[i].dtype)))
            return 0;
    return i == n;
}

static int same_ops(const char *list, const OnnxGraph *g)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    int listed = 0;
    for (char *s = strtok(buf, ","); s; s = strtok(NULL, ","), listed++) {
        int found = 0;
        for (int i = 0; i < g->nnodes && !found; i++)
            found = !strcmp(g->nodes[i].op_type, s);
        if (!found)
            return 0;
    }
    int distinct = 0;
    for (int i = 0; i < g->nnodes; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(g->nodes[i].op_type, g->nodes[j].op_type);
        distinct += !seen;
    }
    return distinct == listed;
}

/* the tensor matches the value info wherever the latter knows */
static int matches(const OnnxTensor *t, const OnnxValueInfo *v)
{
    if (t->dtype != v->dtype || (v->has_shape && t->ndim != v->ndim))
        return 0;
    for (int i = 0; v->has_shape && i < v->ndim; i++)
        if (v->dims[i] >= 0 && v->dims[i] != t->dims[i])
            return 0;
    return 1;
}

static void test_all(const char *dir)
{
    char *manifest = join(dir, "MANIFEST.tsv");
    FILE *fp = fopen(manifest, "r");
    check(fp != NULL, __FILE__, __LINE__, "cannot open %s", manifest);
    free(manifest);
    if (!fp)
        return;
    static char line[8192];
    int models = 0, models_ok = 0, tensors = 0, tensors_ok = 0, mismatch = 0;
    if (!fgets(line, sizeof line, fp))
        line[0] = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = 0;
        char *col[7];
        int ncol = 0;
        for (char *s = line; ncol < 7; ncol++) {
            col[ncol] = s;
            s = strchr(s, '\t');
            if (!s) {
                ncol++;
                break;
            }
            *s++ = 0;
        }
        if (ncol < 7)
            continue;
        char rel[512], err[512];
        snprintf(rel, sizeof rel, "%s/model.onnx", col[0]);
        char *path = join(dir, rel);
        models++;
        OnnxModel *m = onnx_load_file(path, err, sizeof err);
        free(path);
        if (!m) {
            check(0, __FILE__, __LINE__, "%s", err);
            continue;
        }
        models_ok++;
        int bad = onnx_opset(m, "") != atoll(col[2]) ||
                  !same_dtypes(col[3], m->graph.inputs, m->graph.ninputs) ||
                  !same_dtypes(col[4], m->graph.outputs, m->graph.noutputs) ||
                  !same_ops(col[6], &m->graph);
        for (int kind = 0; kind < 2; kind++) {
            for (int i = 0;; i++) {
                snprintf(rel, sizeof rel, "%s/test_data_set_0/%s_%d.pb", col[0],
                         kind ? "output" : "input", i);
                path = join(dir, rel);
                FILE *probe = fopen(path, "rb");
                if (!probe) {
                    free(path);
                    break;
                }
                fclose(probe);
                tensors++;
                OnnxTensor *t = onnx_load_tensor_file(path, err, sizeof err);
                free(path);
                if (!t) {
                    check(0, __FILE__, __LINE__, "%s", err);
                    continue;
                }
                tensors_ok++;
                int nv = kind ? m->graph.noutputs : m->graph.ninputs;
                const OnnxValueInfo *v = kind ? m->graph.outputs : m->graph.inputs;
                bad |= i >= nv || !matches(t, &v[i]);
                onnx_tensor_free(t);
            }
        }
        check(!bad, __FILE__, __LINE__, "%s: the model, its .pb files and MANIFEST.tsv disagree",
              col[0]);
        mismatch += bad;
        onnx_free(m);
    }
    fclose(fp);
    check(models > 1000, __FILE__, __LINE__, "only %d models in MANIFEST.tsv", models);
    printf("node tests: %d/%d models loaded, %d/%d tensors loaded, %d disagreeing with "
           "MANIFEST.tsv\n", models_ok, models, tensors_ok, tensors, mismatch);
}

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: %s [ONNX_NODE_TESTS_DIR [DATA_DIR]]\n", argv[0]);
        return 2;
    }
    const char *dir = argc > 1 ? argv[1] : "tests/data/onnx-node-tests";
    const char *data_dir = argc > 2 ? argv[2] : "tests/data/onnx";

    test_conv(dir);
    test_gemm(dir);
    test_constant(dir);
    test_attr_kinds(dir);
    test_tensor_files(dir);
    test_ext_model(data_dir);
    test_handmade();
    test_errors(data_dir);

    char *p = join(dir, "test_conv_with_strides_padding/model.onnx");
    mutate_file(p, 0, NULL);
    free(p);
    p = join(dir, "test_constant/model.onnx");
    mutate_file(p, 0, NULL);
    free(p);
    p = join(dir, "test_dequantizelinear_int4/test_data_set_0/input_0.pb");
    mutate_file(p, 1, NULL);
    free(p);
    p = join(data_dir, "ext_model.onnx");
    mutate_file(p, 0, data_dir);
    free(p);

    test_all(dir);

    printf("onnx: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
