/* graphgen.c - random valid ONNX graphs for the differential test (tests/fuzz_graphs.sh,
 * tests/fuzz/README.md), in the manner of NNSmith: a seeded walk keeps a pool of live
 * float tensors with known shapes and applies ops whose shape rules it knows.
 *
 *     graphgen SEED OUTDIR
 *
 * writes OUTDIR/model.onnx (opset 17, weights as initializers) and
 * OUTDIR/test_data_set_0/input_N.pb (seeded inputs), the layout of the ONNX node tests
 * (tests/data/onnx-node-tests/README.md), and prints the test's MANIFEST.tsv row (the name
 * is OUTDIR's last component). The expected outputs are not written here: kgen's
 * interpreter (`kgen --interp-write OUTDIR`) or onnxruntime (tests/fuzz/ort_ref.mjs) makes
 * them. The same SEED gives the same files, byte for byte, on every machine: the
 * generator is integer arithmetic and a 64-bit PRNG, its floats are rounded to f32.
 *
 * Values are kept tame, so that the node tests' rule |got-exp| <= 1e-5 + 1e-3*|exp| means
 * something: inputs in [-1, 1], weights uniform with variance 1/fan_in, batch-norm
 * variances in [0.5, 2], no division but by constants, layer norms over 4 or more values,
 * no nearest resize at a rounding tie. Tensors stay under MAX_NUMEL elements. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 5
#define MAX_POOL 256
#define MAX_NUMEL 24576
#define MAX_CHANNELS 64

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng;

/* splitmix64: the next 64 random bits */
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* an integer in [lo, hi] */
static int ri(int lo, int hi) { return hi <= lo ? lo : lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

/* 1 with probability pct percent */
static int chance(int pct) { return ri(0, 99) < pct; }

/* a float in [lo, hi), on a grid of 2^-24 of the range */
static float rf(double lo, double hi) { return (float)(lo + (hi - lo) * (double)(rnd() >> 40) / 16777216.0); }

/* ---------------------------------------------------------------- protobuf writing */

typedef struct {
    unsigned char *p;
    size_t n, cap;
} Buf;

static void put(Buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            fprintf(stderr, "graphgen: out of memory\n");
            exit(2);
        }
    }
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_varint(Buf *b, uint64_t v)
{
    do {
        unsigned char c = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        put(b, &c, 1);
        v >>= 7;
    } while (v);
}

static void put_key(Buf *b, int field, int wire) { put_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }

static void put_int(Buf *b, int field, int64_t v)
{
    put_key(b, field, 0);
    put_varint(b, (uint64_t)v);
}

static void put_bytes(Buf *b, int field, const void *data, size_t n)
{
    put_key(b, field, 2);
    put_varint(b, n);
    put(b, data, n);
}

static void put_str(Buf *b, int field, const char *s) { put_bytes(b, field, s, strlen(s)); }

/* sub as a length-delimited field of b; sub is emptied */
static void put_msg(Buf *b, int field, Buf *sub)
{
    put_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    *sub = (Buf){0};
}

static void put_f32(Buf *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    unsigned char c[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
    put(b, c, 4);
}

/* AttributeProto fields: name 1, f 2, i 3, s 4, floats 7, ints 8, type 20 */
static void attr_int(Buf *attrs, const char *name, int64_t v)
{
    Buf a = {0};
    put_str(&a, 1, name);
    put_int(&a, 3, v);
    put_int(&a, 20, 2);
    put_msg(attrs, 5, &a);
}

static void attr_float(Buf *attrs, const char *name, float v)
{
    Buf a = {0};
    put_str(&a, 1, name);
    put_key(&a, 2, 5);
    put_f32(&a, v);
    put_int(&a, 20, 1);
    put_msg(attrs, 5, &a);
}

static void attr_ints(Buf *attrs, const char *name, const int64_t *v, int n)
{
    Buf a = {0};
    put_str(&a, 1, name);
    for (int i = 0; i < n; i++)
        put_int(&a, 8, v[i]);
    put_int(&a, 20, 7);
    put_msg(attrs, 5, &a);
}

static void attr_str(Buf *attrs, const char *name, const char *s)
{
    Buf a = {0};
    put_str(&a, 1, name);
    put_str(&a, 4, s);
    put_int(&a, 20, 3);
    put_msg(attrs, 5, &a);
}

/* TensorProto: dims 1, data_type 2, name 8, raw_data 9 (1 FLOAT, 7 INT64) */
static void put_tensor(Buf *b, int field, const char *name, int dtype, const int64_t *dims, int nd,
                       const void *raw, size_t bytes)
{
    Buf t = {0};
    for (int i = 0; i < nd; i++)
        put_int(&t, 1, dims[i]);
    put_int(&t, 2, dtype);
    put_str(&t, 8, name);
    put_bytes(&t, 9, raw, bytes);
    put_msg(b, field, &t);
}

/* ValueInfoProto of a float tensor: name 1, type 2 { tensor_type 1 { elem_type 1, shape 2
 * { dim 1 { dim_value 1 } } } } */
static void put_value_info(Buf *b, int field, const char *name, const int64_t *dims, int nd)
{
    Buf vi = {0}, tp = {0}, tt = {0}, sh = {0};
    for (int i = 0; i < nd; i++) {
        Buf d = {0};
        put_int(&d, 1, dims[i]);
        put_msg(&sh, 1, &d);
    }
    put_int(&tt, 1, 1);
    put_msg(&tt, 2, &sh);
    put_msg(&tp, 1, &tt);
    put_str(&vi, 1, name);
    put_msg(&vi, 2, &tp);
    put_msg(b, field, &vi);
}

/* ---------------------------------------------------------------- the graph */

typedef struct {
    char name[24];
    int nd;
    int64_t d[MAX_RANK];
    int uses;    /* nodes that read it */
    int input;   /* a graph input */
    int flat;    /* may hold blocks of equal values (see step_flat) */
} Tens;

static Tens pool[MAX_POOL];
static int npool;
static Buf g_nodes, g_inits, g_inputs;   /* GraphProto fields 1, 5, 11 */
static int nnames;
static char ops_seen[1024];              /* the graph's distinct op types, comma-separated */
/* Set by an op whose output may hold blocks of equal values (a global pool, a reduce, a
 * softmax, a resize, a broadcast, a concat of a tensor with itself) or that reads such a
 * tensor: flatness is inherited by everything downstream. LayerNormalization refuses
 * such inputs: over a block of equal values it divides rounding noise by about
 * sqrt(epsilon), and two correct programs differ by more than the tolerance. */
static int step_flat;

static const char *fresh(const char *prefix)
{
    static char names[32][24];   /* a node's names stay valid until it is written */
    static int k;
    char *s = names[k++ % 32];
    snprintf(s, sizeof names[0], "%s%d", prefix, nnames++);
    return s;
}

static int64_t numel(const int64_t *d, int nd)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= d[i];
    return n;
}

/* a new pool tensor of this shape, or -1 (pool full, too large, an empty dimension) */
static int add_tensor(const int64_t *d, int nd)
{
    if (npool == MAX_POOL || nd > MAX_RANK || numel(d, nd) > MAX_NUMEL)
        return -1;
    for (int i = 0; i < nd; i++)
        if (d[i] < 1)
            return -1;
    Tens *t = &pool[npool];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", fresh("t"));
    t->nd = nd;
    memcpy(t->d, d, sizeof(int64_t) * (size_t)nd);
    return npool++;
}

/* NodeProto: input 1, output 2, name 3, op_type 4, attribute 5; attrs is emptied. "" in
 * ins is a left-out optional input. */
static void node(const char *op, const char *const *ins, int nin, const char *const *outs, int nout, Buf *attrs)
{
    Buf n = {0};
    for (int i = 0; i < nin; i++)
        put_str(&n, 1, ins[i]);
    for (int i = 0; i < nout; i++)
        put_str(&n, 2, outs[i]);
    put_str(&n, 3, fresh("n"));
    put_str(&n, 4, op);
    if (attrs && attrs->n)
        put(&n, attrs->p, attrs->n);
    if (attrs) {
        free(attrs->p);
        *attrs = (Buf){0};
    }
    put_msg(&g_nodes, 1, &n);
    char key[40];
    snprintf(key, sizeof key, ",%s,", op);
    char have[1040];
    snprintf(have, sizeof have, ",%s,", ops_seen);
    if (!strstr(have, key) && strlen(ops_seen) + strlen(op) + 2 < sizeof ops_seen)
        snprintf(ops_seen + strlen(ops_seen), sizeof ops_seen - strlen(ops_seen), "%s%s", ops_seen[0] ? "," : "", op);
}

/* a one-input, one-output node from pool tensor a to a new tensor of shape d */
static int unary_node(const char *op, int a, const int64_t *d, int nd, Buf *attrs)
{
    int o = add_tensor(d, nd);
    if (o < 0) {
        free(attrs ? attrs->p : NULL);
        if (attrs)
            *attrs = (Buf){0};
        return -1;
    }
    const char *in = pool[a].name, *out = pool[o].name;
    node(op, &in, 1, &out, 1, attrs);
    pool[a].uses++;
    return o;
}

/* a float initializer of shape d with values uniform in [lo, hi); its name */
static const char *init_f32(const int64_t *d, int nd, double lo, double hi)
{
    const char *name = fresh("w");
    int64_t n = numel(d, nd);
    Buf raw = {0};
    for (int64_t i = 0; i < n; i++)
        put_f32(&raw, rf(lo, hi));
    put_tensor(&g_inits, 5, name, 1, d, nd, raw.p, raw.n);
    free(raw.p);
    return name;
}

/* an int64 initializer holding v[0..n-1] (a 1-D tensor); its name */
static const char *init_i64(const int64_t *v, int n)
{
    const char *name = fresh("c");
    Buf raw = {0};
    for (int i = 0; i < n; i++) {
        unsigned char c[8];
        for (int k = 0; k < 8; k++)
            c[k] = (unsigned char)((uint64_t)v[i] >> (8 * k));
        put(&raw, c, 8);
    }
    int64_t dim = n;
    put_tensor(&g_inits, 5, name, 7, &dim, 1, raw.p, raw.n);
    free(raw.p);
    return name;
}

/* a weight initializer of shape d, variance 1/fan_in */
static const char *init_weight(const int64_t *d, int nd, int64_t fan_in)
{
    double a = sqrt(3.0 / (double)(fan_in > 0 ? fan_in : 1));
    return init_f32(d, nd, -a, a);
}

/* ---------------------------------------------------------------- spatial ops */

/* the output size of a window of k (dilation dil) at stride s over n with pads pb, pe;
 * < 1 when it does not fit */
static int64_t window_out(int64_t n, int k, int s, int dil, int pb, int pe)
{
    int64_t span = n + pb + pe - (int64_t)dil * (k - 1) - 1;
    return span < 0 ? 0 : span / s + 1;
}

/* Random kernel, stride, dilation and pads for the nsp spatial dims of x (a window op);
 * pads below the kernel. 0, or -1 when nothing fits. maxk: the largest kernel. */
static int pick_window(const Tens *x, int nsp, int maxk, int allow_dil, int64_t *k, int64_t *s, int64_t *dil,
                       int64_t *pads, int64_t *out)
{
    int square = chance(70);
    for (int i = 0; i < nsp; i++) {
        int64_t n = x->d[2 + i];
        for (int tries = 0;; tries++) {
            if (tries == 20)
                return -1;
            k[i] = square && i > 0 ? k[0] : ri(1, maxk);
            s[i] = square && i > 0 ? s[0] : (chance(60) ? 1 : ri(2, 3));
            dil[i] = allow_dil && chance(15) ? 2 : 1;
            int same = chance(50);
            pads[i] = same ? (dil[i] * (k[i] - 1)) / 2 : ri(0, (int)k[i] - 1);
            pads[nsp + i] = same ? dil[i] * (k[i] - 1) - pads[i] : ri(0, (int)k[i] - 1);
            if (pads[i] >= k[i] || pads[nsp + i] >= k[i])
                pads[i] = pads[nsp + i] = 0;
            out[i] = window_out(n, (int)k[i], (int)s[i], (int)dil[i], (int)pads[i], (int)pads[nsp + i]);
            if (out[i] >= 1)
                break;
            square = 0;
        }
    }
    return 0;
}

static int op_conv(int a)
{
    Tens x = pool[a];
    if (x.nd != 3 && x.nd != 4)
        return -1;
    int nsp = x.nd - 2;
    int64_t c = x.d[1], k[2], s[2], dil[2], pads[4], out[2];
    int64_t groups = 1, cout;
    int r = ri(0, 99);
    if (r < 25) {   /* depthwise */
        groups = c;
        cout = c * (chance(70) ? 1 : 2);
    } else if (r < 40) {   /* grouped: a divisor of c */
        int64_t g = ri(2, 4);
        if (c % g)
            g = 1;
        groups = g;
        cout = g * ri(1, 8);
    } else {
        static const int widths[] = {1, 2, 3, 4, 5, 8, 12, 16, 16, 24, 32, 32};
        cout = widths[ri(0, 11)];
    }
    if (cout > MAX_CHANNELS || pick_window(&x, nsp, 7, 1, k, s, dil, pads, out))
        return -1;
    int64_t od[4] = {x.d[0], cout, out[0], nsp == 2 ? out[1] : 0};
    int64_t wd[4] = {cout, c / groups, k[0], k[nsp - 1]};
    int64_t fan = c / groups * k[0] * (nsp == 2 ? k[1] : 1);
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    const char *ins[3] = {pool[a].name, init_weight(wd, x.nd, fan), ""};
    int nin = 2;
    if (chance(70)) {
        ins[2] = init_f32(&cout, 1, -0.5, 0.5);
        nin = 3;
    }
    Buf at = {0};
    attr_ints(&at, "kernel_shape", k, nsp);
    if (chance(10) && s[0] == 1 && (nsp == 1 || s[1] == 1)) {
        /* SAME_*: with stride 1 the output keeps the input's size */
        attr_str(&at, "auto_pad", chance(50) ? "SAME_UPPER" : "SAME_LOWER");   /* no dilation: onnxruntime refuses it */
        pool[o].d[2] = x.d[2];
        if (nsp == 2)
            pool[o].d[3] = x.d[3];
    } else {
        attr_ints(&at, "strides", s, nsp);
        attr_ints(&at, "pads", pads, 2 * nsp);
        attr_ints(&at, "dilations", dil, nsp);
    }
    attr_int(&at, "group", groups);
    const char *outn = pool[o].name;
    node("Conv", ins, nin, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

static int op_conv_transpose(int a)
{
    Tens x = pool[a];
    if (x.nd != 3 && x.nd != 4)
        return -1;
    int nsp = x.nd - 2;
    int64_t c = x.d[1], groups = chance(25) ? c : 1;
    int64_t cout = groups == c ? c : ri(1, 16);
    int64_t k[2], s[2], dil[2], pads[4], opad[2], out[2];
    for (int i = 0; i < nsp; i++) {
        k[i] = ri(1, 5);
        s[i] = ri(1, 3);
        dil[i] = chance(10) ? 2 : 1;
        pads[i] = ri(0, (int)k[i] - 1);
        pads[nsp + i] = ri(0, (int)k[i] - 1);
        opad[i] = chance(30) ? ri(0, (int)s[i] - 1) : 0;
        out[i] = s[i] * (x.d[2 + i] - 1) + opad[i] + dil[i] * (k[i] - 1) + 1 - pads[i] - pads[nsp + i];
        if (out[i] < 1)
            return -1;
    }
    int64_t od[4] = {x.d[0], cout, out[0], nsp == 2 ? out[1] : 0};
    int64_t wd[4] = {c, cout / groups, k[0], k[nsp - 1]};
    /* each output sums about c/groups * prod(k/s) terms */
    int64_t fan = c / groups * ((k[0] + s[0] - 1) / s[0]) * (nsp == 2 ? (k[1] + s[1] - 1) / s[1] : 1);
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    const char *ins[3] = {pool[a].name, init_weight(wd, x.nd, fan), ""};
    int nin = 2;
    if (chance(50)) {
        ins[2] = init_f32(&cout, 1, -0.5, 0.5);
        nin = 3;
    }
    Buf at = {0};
    attr_ints(&at, "kernel_shape", k, nsp);
    attr_ints(&at, "strides", s, nsp);
    attr_ints(&at, "pads", pads, 2 * nsp);
    attr_ints(&at, "dilations", dil, nsp);
    if (opad[0] || (nsp == 2 && opad[1]))
        attr_ints(&at, "output_padding", opad, nsp);
    attr_int(&at, "group", groups);
    const char *outn = pool[o].name;
    node("ConvTranspose", ins, nin, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

/* does every window of a pool (output size out) hold an element of the input: where
 * none does, the frameworks differ (onnxruntime gives -FLT_MAX, kgen -inf) */
static int windows_hit(int64_t n, int64_t out, int64_t k, int64_t s, int64_t dil, int64_t pb)
{
    for (int64_t o = 0; o < out; o++) {
        int hit = 0;
        for (int64_t j = 0; j < k && !hit; j++)
            hit = o * s - pb + j * dil >= 0 && o * s - pb + j * dil < n;
        if (!hit)
            return 0;
    }
    return 1;
}

static int op_pool(int a)
{
    Tens x = pool[a];
    if (x.nd != 3 && x.nd != 4)
        return -1;
    int nsp = x.nd - 2, max = chance(50);
    int64_t k[2], s[2], dil[2], pads[4], out[2];
    if (pick_window(&x, nsp, 4, max, k, s, dil, pads, out))
        return -1;
    int ceil_mode = chance(15);
    for (int i = 0; i < nsp && ceil_mode; i++) {
        /* ceil mode where the last window starts inside the input or the left pad only
         * (where the frameworks agree on it) */
        int64_t span = x.d[2 + i] + pads[i] + pads[nsp + i] - dil[i] * (k[i] - 1) - 1;
        int64_t oc = (span + s[i] - 1) / s[i] + 1;
        if ((oc - 1) * s[i] >= x.d[2 + i] + pads[i])
            ceil_mode = 0;
    }
    int64_t od[4] = {x.d[0], x.d[1], 0, 0};
    for (int i = 0; i < nsp; i++) {
        int64_t span = x.d[2 + i] + pads[i] + pads[nsp + i] - dil[i] * (k[i] - 1) - 1;
        od[2 + i] = ceil_mode ? (span + s[i] - 1) / s[i] + 1 : out[i];
        if (!windows_hit(x.d[2 + i], od[2 + i], k[i], s[i], max ? dil[i] : 1, pads[i]))
            return -1;
    }
    Buf at = {0};
    attr_ints(&at, "kernel_shape", k, nsp);
    attr_ints(&at, "strides", s, nsp);
    attr_ints(&at, "pads", pads, 2 * nsp);
    if (ceil_mode)
        attr_int(&at, "ceil_mode", 1);
    if (max && (dil[0] > 1 || (nsp == 2 && dil[1] > 1)))
        attr_ints(&at, "dilations", dil, nsp);
    if (!max && chance(50))
        attr_int(&at, "count_include_pad", 1);
    return unary_node(max ? "MaxPool" : "AveragePool", a, od, x.nd, &at);
}

static int op_global_pool(int a)
{
    Tens x = pool[a];
    if (x.nd < 3)
        return -1;
    step_flat = 1;
    int64_t od[MAX_RANK];
    for (int i = 0; i < x.nd; i++)
        od[i] = i < 2 ? x.d[i] : 1;
    return unary_node(chance(75) ? "GlobalAveragePool" : "GlobalMaxPool", a, od, x.nd, NULL);
}

/* Resize of the spatial dims: nearest (integer up scales, or halving with asymmetric
 * coordinates: no rounding tie) or linear (any size). */
static int op_resize(int a)
{
    Tens x = pool[a];
    if (x.nd != 3 && x.nd != 4)
        return -1;
    int linear = chance(50), by_sizes = linear && chance(50);
    step_flat = 1;
    int64_t od[4];
    float sc[4] = {1, 1, 1, 1};
    const char *ctm;
    memcpy(od, x.d, sizeof od);
    int down = chance(25);
    for (int i = 2; i < x.nd; i++) {
        if (by_sizes) {
            od[i] = ri(1, (int)x.d[i] * 2 + 1);
        } else {
            sc[i] = down ? 0.5f : (float)ri(1, 3);
            od[i] = (int64_t)floor((double)x.d[i] * sc[i]);
        }
    }
    if (linear) {
        /* align_corners and pytorch_half_pixel only where scale * L is the integer output
         * size: else ONNX's reference (whose output length is the real scale * L, which
         * kgen follows) and onnxruntime (the integer size) disagree */
        static const char *const modes[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
        int exact = 1;
        for (int i = 2; i < x.nd; i++)
            exact &= by_sizes || (double)x.d[i] * sc[i] == (double)od[i];
        ctm = modes[ri(0, exact ? 3 : 1)];
    } else {
        ctm = down || chance(50) ? "asymmetric" : "half_pixel";
    }
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    Buf at = {0};
    attr_str(&at, "mode", linear ? "linear" : "nearest");
    attr_str(&at, "coordinate_transformation_mode", ctm);
    if (!linear)
        attr_str(&at, "nearest_mode", !strcmp(ctm, "asymmetric") ? "floor" : "round_prefer_floor");
    const char *ins[4] = {pool[a].name, "", "", ""};
    int64_t nd = x.nd;
    if (by_sizes) {
        ins[3] = init_i64(od, x.nd);
    } else {
        Buf raw = {0};
        for (int i = 0; i < x.nd; i++)
            put_f32(&raw, sc[i]);
        ins[2] = fresh("s");
        put_tensor(&g_inits, 5, ins[2], 1, &nd, 1, raw.p, raw.n);
        free(raw.p);
    }
    const char *outn = pool[o].name;
    node("Resize", ins, by_sizes ? 4 : 3, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

/* Pad: constant (zero or a value), reflect (pads below the dim) or edge; spatial dims,
 * now and then the channels too (constant) */
static int op_pad(int a)
{
    Tens x = pool[a];
    if (x.nd < 3)
        return -1;
    int mode = ri(0, 2);
    int64_t pads[2 * MAX_RANK] = {0}, od[MAX_RANK];
    memcpy(od, x.d, sizeof od);
    for (int i = 1; i < x.nd; i++) {
        if (i == 1 && (mode != 0 || !chance(10)))
            continue;
        int lim = mode == 1 ? (int)x.d[i] - 1 : 3;
        if (lim > 3)
            lim = 3;
        pads[i] = ri(0, lim);
        pads[x.nd + i] = ri(0, lim);
        od[i] += pads[i] + pads[x.nd + i];
    }
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    static const char *const modes[] = {"constant", "reflect", "edge"};
    Buf at = {0};
    attr_str(&at, "mode", modes[mode]);
    const char *ins[3] = {pool[a].name, init_i64(pads, 2 * x.nd), ""};
    int nin = 2;
    if (mode == 0 && chance(50)) {
        ins[2] = init_f32(NULL, 0, -1, 1);
        nin = 3;
    }
    const char *outn = pool[o].name;
    node("Pad", ins, nin, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

/* ---------------------------------------------------------------- normalization, activations */

static int op_batchnorm(int a)
{
    Tens x = pool[a];
    if (x.nd < 2)
        return -1;
    int64_t c = x.d[1];
    const char *ins[5] = {pool[a].name, init_f32(&c, 1, 0.5, 1.5), init_f32(&c, 1, -0.5, 0.5),
                          init_f32(&c, 1, -0.5, 0.5), init_f32(&c, 1, 0.5, 2.0)};
    int o = add_tensor(x.d, x.nd);
    if (o < 0)
        return -1;
    Buf at = {0};
    attr_float(&at, "epsilon", chance(50) ? 1e-5f : 1e-3f);
    const char *outn = pool[o].name;
    node("BatchNormalization", ins, 5, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

static int op_layernorm(int a)
{
    Tens x = pool[a];
    if (x.flat)
        return -1;
    int axis = ri(x.nd > 1 ? 1 : 0, x.nd - 1);
    int64_t n = numel(x.d + axis, x.nd - axis);
    if (n < 4 || n > 4096)
        return -1;
    const char *ins[3] = {pool[a].name, init_f32(x.d + axis, x.nd - axis, 0.5, 1.5), ""};
    int nin = 2;
    if (chance(70)) {
        ins[2] = init_f32(x.d + axis, x.nd - axis, -0.5, 0.5);
        nin = 3;
    }
    int o = add_tensor(x.d, x.nd);
    if (o < 0)
        return -1;
    Buf at = {0};
    attr_int(&at, "axis", chance(50) ? axis : axis - x.nd);
    attr_float(&at, "epsilon", 1e-5f);
    const char *outn = pool[o].name;
    node("LayerNormalization", ins, nin, &outn, 1, &at);
    pool[a].uses++;
    return o;
}

/* Gelu as ONNX writes it before opset 20: 0.5 * x * (1 + erf(x / sqrt(2))) */
static int gelu(int a)
{
    Tens x = pool[a];
    int q = add_tensor(x.d, x.nd), e = add_tensor(x.d, x.nd), p = add_tensor(x.d, x.nd), m = add_tensor(x.d, x.nd),
        o = add_tensor(x.d, x.nd);
    if (o < 0)
        return -1;
    const char *div[2] = {pool[a].name, init_f32(NULL, 0, 1.4142135, 1.4142136)};
    const char *add[2] = {pool[e].name, init_f32(NULL, 0, 1, 1)};
    const char *mul1[2] = {pool[a].name, pool[p].name};
    const char *mul2[2] = {pool[m].name, init_f32(NULL, 0, 0.5, 0.5)};
    const char *on[5] = {pool[q].name, pool[e].name, pool[p].name, pool[m].name, pool[o].name};
    node("Div", div, 2, &on[0], 1, NULL);
    node("Erf", &on[0], 1, &on[1], 1, NULL);
    node("Add", add, 2, &on[2], 1, NULL);
    node("Mul", mul1, 2, &on[3], 1, NULL);
    node("Mul", mul2, 2, &on[4], 1, NULL);
    pool[a].uses += 2;
    pool[q].uses = pool[e].uses = pool[p].uses = pool[m].uses = 1;
    return o;
}

static int op_activation(int a)
{
    Tens x = pool[a];
    Buf at = {0};
    switch (ri(0, 9)) {
    case 0: return unary_node("Relu", a, x.d, x.nd, NULL);
    case 1: return unary_node("Sigmoid", a, x.d, x.nd, NULL);
    case 2: return unary_node("Tanh", a, x.d, x.nd, NULL);
    case 3: return unary_node("HardSwish", a, x.d, x.nd, NULL);
    case 4:
        attr_float(&at, "alpha", rf(0.1, 0.3));
        attr_float(&at, "beta", rf(0.4, 0.6));
        return unary_node("HardSigmoid", a, x.d, x.nd, &at);
    case 5:
        attr_float(&at, "alpha", rf(0.01, 0.3));
        return unary_node("LeakyRelu", a, x.d, x.nd, &at);
    case 6: return gelu(a);
    case 7: return unary_node("Relu", a, x.d, x.nd, NULL);
    default: {
        /* Clip with both bounds, the lower or the upper one alone */
        int which = ri(0, 2);
        int o = add_tensor(x.d, x.nd);
        if (o < 0)
            return -1;
        const char *ins[3] = {pool[a].name, which != 2 ? init_f32(NULL, 0, -1, 0) : "",
                              which != 1 ? init_f32(NULL, 0, 0.25, 6) : ""};
        const char *outn = pool[o].name;
        node("Clip", ins, which == 1 ? 2 : 3, &outn, 1, NULL);
        pool[a].uses++;
        return o;
    }
    }
}

static int op_softmax(int a)
{
    Tens x = pool[a];
    Buf at = {0};
    step_flat = 1;
    attr_int(&at, "axis", ri(-x.nd, x.nd - 1));
    return unary_node(chance(75) ? "Softmax" : "LogSoftmax", a, x.d, x.nd, &at);
}

static int op_reduce(int a)
{
    Tens x = pool[a];
    int keep = chance(50), n = 0;
    int64_t axes[MAX_RANK], od[MAX_RANK];
    int nd = 0;
    for (int i = 0; i < x.nd; i++) {
        int r = chance(40);
        if (r)
            axes[n++] = chance(50) ? i : i - x.nd;
        if (!r || keep)
            od[nd++] = r ? 1 : x.d[i];
    }
    if (n == 0 || nd == 0)
        return -1;
    step_flat = 1;
    Buf at = {0};
    attr_ints(&at, "axes", axes, n);
    attr_int(&at, "keepdims", keep);
    return unary_node(chance(70) ? "ReduceMean" : "ReduceMax", a, od, nd, &at);
}

/* ---------------------------------------------------------------- shapes */

/* the channel shuffle of ShuffleNet: Reshape [N,g,C/g,H,W], Transpose 0,2,1,3,4, Reshape back */
static int op_shuffle(int a)
{
    Tens x = pool[a];
    int64_t g = ri(2, 4);
    if (x.nd != 4 || x.d[1] % g)
        return -1;
    int64_t s5[5] = {x.d[0], g, x.d[1] / g, x.d[2], x.d[3]}, t5[5] = {x.d[0], x.d[1] / g, g, x.d[2], x.d[3]};
    int64_t perm[5] = {0, 2, 1, 3, 4}, back[4] = {chance(50) ? 0 : x.d[0], -1, x.d[2], x.d[3]};
    int r = add_tensor(s5, 5), t = add_tensor(t5, 5), o = add_tensor(x.d, 4);
    if (o < 0)
        return -1;
    const char *in1[2] = {pool[a].name, init_i64(s5, 5)}, *in3[2] = {pool[t].name, init_i64(back, 4)};
    const char *rn = pool[r].name, *tn = pool[t].name, *on = pool[o].name;
    Buf at = {0};
    attr_ints(&at, "perm", perm, 5);
    node("Reshape", in1, 2, &rn, 1, NULL);
    node("Transpose", &rn, 1, &tn, 1, &at);
    node("Reshape", in3, 2, &on, 1, NULL);
    pool[a].uses++;
    pool[r].uses = pool[t].uses = 1;
    return o;
}

static int op_transpose(int a)
{
    Tens x = pool[a];
    if (x.nd < 2)
        return -1;
    int64_t perm[MAX_RANK], od[MAX_RANK];
    for (int i = 0; i < x.nd; i++)
        perm[i] = i;
    for (int i = x.nd - 1; i > 0; i--) {
        int j = ri(0, i);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < x.nd; i++)
        od[i] = x.d[perm[i]];
    Buf at = {0};
    attr_ints(&at, "perm", perm, x.nd);
    return unary_node("Transpose", a, od, x.nd, &at);
}

/* Reshape to a random factorization of the same element count, or Flatten */
static int op_reshape(int a)
{
    Tens x = pool[a];
    int64_t n = numel(x.d, x.nd), od[MAX_RANK];
    if (chance(40) && x.nd >= 2) {
        int axis = ri(0, x.nd);
        od[0] = numel(x.d, axis);
        od[1] = n / od[0];
        Buf at = {0};
        attr_int(&at, "axis", axis);
        return unary_node("Flatten", a, od, 2, &at);
    }
    int nd = ri(1, 4);
    int64_t rest = n;
    for (int i = 0; i < nd - 1; i++) {
        int64_t f = ri(1, 8);
        while (rest % f)
            f--;
        od[i] = f;
        rest /= f;
    }
    od[nd - 1] = rest;
    int64_t shape[MAX_RANK];
    memcpy(shape, od, sizeof shape);
    shape[ri(0, nd - 1)] = -1;
    int o = add_tensor(od, nd);
    if (o < 0)
        return -1;
    const char *ins[2] = {pool[a].name, init_i64(shape, nd)}, *on = pool[o].name;
    node("Reshape", ins, 2, &on, 1, NULL);
    pool[a].uses++;
    return o;
}

static int op_squeeze(int a)
{
    Tens x = pool[a];
    int64_t axes[MAX_RANK], od[MAX_RANK];
    int n = 0, nd = 0;
    const char *op;
    if (chance(50) && x.nd < MAX_RANK) {
        int at = ri(0, x.nd);
        for (int i = 0; i <= x.nd; i++)
            od[i] = i < at ? x.d[i] : i == at ? 1 : x.d[i - 1];
        axes[n++] = chance(50) ? at : at - x.nd - 1;
        nd = x.nd + 1;
        op = "Unsqueeze";
    } else {
        for (int i = 0; i < x.nd; i++) {
            if (x.d[i] == 1 && nd + (x.nd - i) > 1)
                axes[n++] = i;
            else
                od[nd++] = x.d[i];
        }
        if (n == 0)
            return -1;
        op = "Squeeze";
    }
    int o = add_tensor(od, nd);
    if (o < 0)
        return -1;
    const char *ins[2] = {pool[a].name, init_i64(axes, n)}, *on = pool[o].name;
    node(op, ins, 2, &on, 1, NULL);
    pool[a].uses++;
    return o;
}

/* Slice one or two axes: step 1, 2 or -1, indices negative now and then */
static int op_slice(int a)
{
    Tens x = pool[a];
    int64_t st[2], en[2], ax[2], sp[2], od[MAX_RANK];
    int first_axis = -1;
    int n = chance(70) ? 1 : 2;
    memcpy(od, x.d, sizeof od);
    for (int k = 0; k < n; k++) {
        int axis = ri(0, x.nd - 1);
        int64_t d = x.d[axis];
        if (d < 2 || axis == first_axis)
            return -1;
        first_axis = axis;
        sp[k] = chance(70) ? 1 : chance(60) ? 2 : -1;
        int64_t lo = ri(0, (int)d - 2), hi = ri((int)lo + 1, (int)d);
        if (sp[k] > 0) {
            st[k] = lo;
            en[k] = chance(20) && hi == d ? INT64_MAX : hi;
            od[axis] = (hi - lo + sp[k] - 1) / sp[k];
        } else {
            st[k] = hi - 1;
            en[k] = lo == 0 && chance(50) ? -d - 1 : lo - 1;
            if (en[k] == -1)
                en[k] = -d - 1;
            od[axis] = hi - 1 - (lo == 0 ? -1 : lo - 1);
        }
        if (chance(20) && st[k] < d)
            st[k] -= d;
        ax[k] = chance(30) ? axis - x.nd : axis;
    }
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    const char *ins[5] = {pool[a].name, init_i64(st, n), init_i64(en, n), init_i64(ax, n), init_i64(sp, n)};
    const char *on = pool[o].name;
    node("Slice", ins, 5, &on, 1, NULL);
    pool[a].uses++;
    return o;
}

/* Split into 2 or 3 parts along an axis, sizes given or equal; every part joins the pool */
static int op_split(int a)
{
    Tens x = pool[a];
    int axis = ri(0, x.nd - 1), parts = ri(2, 3);
    int64_t d = x.d[axis], sizes[3];
    if (d < parts)
        return -1;
    int equal = d % parts == 0 && chance(50);
    int64_t left = d;
    for (int i = 0; i < parts; i++) {
        sizes[i] = equal ? d / parts : i == parts - 1 ? left : ri(1, (int)(left - (parts - 1 - i)));
        left -= sizes[i];
    }
    if (npool + parts > MAX_POOL)
        return -1;
    const char *outs[3];
    int first = npool;
    for (int i = 0; i < parts; i++) {
        int64_t od[MAX_RANK];
        memcpy(od, x.d, sizeof od);
        od[axis] = sizes[i];
        int o = add_tensor(od, x.nd);
        outs[i] = pool[o].name;
    }
    Buf at = {0};
    attr_int(&at, "axis", axis);
    const char *ins[2] = {pool[a].name, equal ? "" : init_i64(sizes, parts)};
    node("Split", ins, equal ? 1 : 2, outs, parts, &at);
    pool[a].uses++;
    return first + ri(0, parts - 1);
}

/* ---------------------------------------------------------------- several inputs */

/* can b broadcast against a (numpy rules, right-aligned) */
static int broadcasts(const Tens *a, const Tens *b, int64_t *od, int *nd)
{
    *nd = a->nd > b->nd ? a->nd : b->nd;
    for (int i = 0; i < *nd; i++) {
        int ia = a->nd - *nd + i, ib = b->nd - *nd + i;
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return 0;
        od[i] = da > db ? da : db;
    }
    return numel(od, *nd) <= MAX_NUMEL;
}

/* Add, Mul or Sub of a with an earlier pool tensor that broadcasts (a skip connection),
 * else with a constant: per channel, per last dim, a scalar or a whole tensor */
static int op_binary(int a)
{
    Tens x = pool[a];
    int64_t od[MAX_RANK];
    int nd, cand[MAX_POOL], n = 0;
    for (int i = 0; i < npool; i++)
        if (i != a && broadcasts(&x, &pool[i], od, &nd) && (chance(30) || numel(od, nd) == numel(x.d, x.nd)))
            cand[n++] = i;
    static const char *const ops[] = {"Add", "Add", "Add", "Mul", "Mul", "Sub"};
    const char *op = ops[ri(0, 5)];
    const char *other;
    if (n && chance(75)) {
        int b = cand[ri(0, n - 1)];
        broadcasts(&x, &pool[b], od, &nd);
        step_flat = pool[b].flat || numel(od, nd) != numel(pool[b].d, pool[b].nd) ||
                    numel(od, nd) != numel(x.d, x.nd);
        other = pool[b].name;
        pool[b].uses++;
    } else {
        int64_t cd[MAX_RANK];
        int cn = 0, kind = ri(0, 3);
        if (kind == 0 && x.nd >= 2) {   /* per channel: [C,1,...] */
            cd[cn++] = x.d[1];
            while (cn < x.nd - 1)
                cd[cn++] = 1;
        } else if (kind == 1) {
            cd[cn++] = x.d[x.nd - 1];
        } else if (kind == 3) {
            memcpy(cd, x.d, sizeof cd);
            cn = x.nd;
        }
        int mul = !strcmp(op, "Mul");
        other = init_f32(cd, cn, mul ? 0.5 : -1, mul ? 1.5 : 1);
        memcpy(od, x.d, sizeof od);
        nd = x.nd;
    }
    int o = add_tensor(od, nd);
    if (o < 0)
        return -1;
    const char *ins[2] = {pool[a].name, other};
    if (chance(50)) {
        ins[0] = other;
        ins[1] = pool[a].name;
    }
    const char *on = pool[o].name;
    node(op, ins, 2, &on, 1, NULL);
    pool[a].uses++;
    return o;
}

/* Concat of a with 1 or 2 pool tensors equal to it but on the axis (often a itself) */
static int op_concat(int a)
{
    Tens x = pool[a];
    int axis = x.nd >= 2 && chance(70) ? 1 : ri(0, x.nd - 1);
    int cand[MAX_POOL], n = 0;
    for (int i = 0; i < npool; i++) {
        int ok = pool[i].nd == x.nd;
        for (int k = 0; ok && k < x.nd; k++)
            ok = k == axis || pool[i].d[k] == x.d[k];
        if (ok)
            cand[n++] = i;
    }
    int m = ri(1, 2), pick[3] = {a, 0, 0};
    int64_t od[MAX_RANK];
    memcpy(od, x.d, sizeof od);
    for (int k = 1; k <= m; k++) {
        pick[k] = cand[ri(0, n - 1)];
        od[axis] += pool[pick[k]].d[axis];
        step_flat |= pool[pick[k]].flat || pick[k] == a || (k == 2 && pick[2] == pick[1]);
    }
    if (axis == 1 && x.nd >= 3 && od[1] > MAX_CHANNELS)
        return -1;
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    const char *ins[3];
    for (int k = 0; k <= m; k++) {
        ins[k] = pool[pick[k]].name;
        pool[pick[k]].uses++;
    }
    Buf at = {0};
    attr_int(&at, "axis", chance(30) ? axis - x.nd : axis);
    const char *on = pool[o].name;
    node("Concat", ins, m + 1, &on, 1, &at);
    return o;
}

/* MatMul with a weight [K, M] (any rank >= 2), or Gemm on a matrix */
static int op_matmul(int a)
{
    Tens x = pool[a];
    if (x.nd < 2)
        return -1;
    int64_t k = x.d[x.nd - 1], m = ri(1, 32);
    if (k > 1024)
        return -1;
    int64_t od[MAX_RANK];
    memcpy(od, x.d, sizeof od);
    od[x.nd - 1] = m;
    int flattened = 0;
    if (x.nd > 2 && chance(30) && numel(x.d + 1, x.nd - 1) <= 1024) {
        /* Flatten, then Gemm */
        int64_t fd[2] = {x.d[0], numel(x.d + 1, x.nd - 1)};
        Buf at = {0};
        attr_int(&at, "axis", 1);
        int f = unary_node("Flatten", a, fd, 2, &at);
        if (f < 0)
            return -1;
        pool[f].uses = 1;
        a = f;
        x = pool[f];
        k = x.d[1];
        memcpy(od, x.d, sizeof od);
        od[1] = m;
        flattened = 1;
    }
    if (x.nd == 2 && (flattened || chance(60))) {
        int tb = chance(50);
        int64_t wd[2] = {tb ? m : k, tb ? k : m};
        float alpha = chance(70) ? 1.0f : rf(0.5, 1.5);
        int o = add_tensor(od, 2);
        if (o < 0)
            return -1;
        const char *ins[3] = {pool[a].name, init_weight(wd, 2, k), ""};
        int nin = 2;
        if (chance(70)) {
            int64_t bd[2] = {chance(30) ? x.d[0] : 1, m};
            ins[2] = chance(50) ? init_f32(&m, 1, -0.5, 0.5) : init_f32(bd, 2, -0.5, 0.5);
            nin = 3;
        }
        Buf at = {0};
        if (tb)
            attr_int(&at, "transB", 1);
        if (alpha != 1.0f)
            attr_float(&at, "alpha", alpha);
        if (nin == 3 && chance(20))
            attr_float(&at, "beta", rf(0.5, 1.5));
        const char *on = pool[o].name;
        node("Gemm", ins, nin, &on, 1, &at);
        pool[a].uses++;
        return o;
    }
    int64_t wd[2] = {k, m};
    int o = add_tensor(od, x.nd);
    if (o < 0)
        return -1;
    const char *ins[2] = {pool[a].name, init_weight(wd, 2, k)}, *on = pool[o].name;
    node("MatMul", ins, 2, &on, 1, NULL);
    pool[a].uses++;
    return o;
}

/* squeeze-and-excitation: GlobalAveragePool, 1x1 conv down, Relu, 1x1 conv up, Sigmoid, Mul */
static int op_se(int a)
{
    Tens x = pool[a];
    if (x.nd != 4 || x.d[1] < 4)
        return -1;
    int64_t c = x.d[1], r = c / ri(2, 4), one[4] = {x.d[0], c, 1, 1}, mid[4] = {x.d[0], r, 1, 1};
    int p = add_tensor(one, 4), c1 = add_tensor(mid, 4), rl = add_tensor(mid, 4), c2 = add_tensor(one, 4),
        sg = add_tensor(one, 4), o = add_tensor(x.d, 4);
    if (o < 0)
        return -1;
    int64_t w1[4] = {r, c, 1, 1}, w2[4] = {c, r, 1, 1};
    const char *pi = pool[a].name, *pn = pool[p].name;
    const char *cv1[3] = {pool[p].name, init_weight(w1, 4, c), init_f32(&r, 1, -0.5, 0.5)};
    const char *cv2[3] = {pool[rl].name, init_weight(w2, 4, r), init_f32(&c, 1, -0.5, 0.5)};
    const char *c1n = pool[c1].name, *rln = pool[rl].name, *c2n = pool[c2].name, *sgn = pool[sg].name;
    const char *mul[2] = {pool[a].name, pool[sg].name}, *on = pool[o].name;
    node("GlobalAveragePool", &pi, 1, &pn, 1, NULL);
    node("Conv", cv1, 3, &c1n, 1, NULL);
    node("Relu", &c1n, 1, &rln, 1, NULL);
    node("Conv", cv2, 3, &c2n, 1, NULL);
    node("Sigmoid", &c2n, 1, &sgn, 1, NULL);
    node("Mul", mul, 2, &on, 1, NULL);
    pool[a].uses += 2;
    pool[p].uses = pool[c1].uses = pool[rl].uses = pool[c2].uses = pool[sg].uses = 1;
    return o;
}

/* ---------------------------------------------------------------- the walk */

typedef int (*OpFn)(int a);

static const struct {
    OpFn fn;
    int weight;
} op_table[] = {
    {op_conv, 22},    {op_conv_transpose, 4}, {op_pool, 6},    {op_global_pool, 2}, {op_resize, 4},
    {op_pad, 4},      {op_batchnorm, 6},      {op_layernorm, 3}, {op_activation, 16}, {op_softmax, 2},
    {op_reduce, 2},   {op_shuffle, 2},        {op_transpose, 2}, {op_reshape, 3},    {op_squeeze, 2},
    {op_slice, 4},    {op_split, 3},          {op_binary, 12},   {op_concat, 5},     {op_matmul, 4},
    {op_se, 2},
};

static OpFn pick_op(void)
{
    int total = 0, n = (int)(sizeof op_table / sizeof *op_table);
    for (int i = 0; i < n; i++)
        total += op_table[i].weight;
    int r = ri(0, total - 1);
    for (int i = 0; i < n; i++) {
        if (r < op_table[i].weight)
            return op_table[i].fn;
        r -= op_table[i].weight;
    }
    return op_table[0].fn;
}

/* a graph input of shape d with seeded values in [-1, 1] written to DIR's input_K.pb */
static int graph_input(const char *dir, int k, const int64_t *d, int nd)
{
    int t = add_tensor(d, nd);
    pool[t].input = 1;
    snprintf(pool[t].name, sizeof pool[t].name, "in%d", k);
    put_value_info(&g_inputs, 11, pool[t].name, d, nd);
    Buf raw = {0}, pb = {0};
    for (int64_t i = 0; i < numel(d, nd); i++)
        put_f32(&raw, rf(-1, 1));
    put_tensor(&pb, 1, pool[t].name, 1, d, nd, raw.p, raw.n);
    free(raw.p);
    /* put_tensor wrote a field around the message: drop its key and length */
    size_t skip = 1;
    while (pb.p[skip] & 0x80)
        skip++;
    skip++;
    char path[4096];
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, k);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(pb.p + skip, 1, pb.n - skip, f) != pb.n - skip || fclose(f)) {
        fprintf(stderr, "graphgen: cannot write %s\n", path);
        exit(2);
    }
    free(pb.p);
    return t;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: graphgen SEED OUTDIR\n");
        return 2;
    }
    char *end;
    unsigned long long seed = strtoull(argv[1], &end, 10);
    if (*end || !argv[1][0]) {
        fprintf(stderr, "graphgen: SEED must be a non-negative integer, not '%s'\n", argv[1]);
        return 2;
    }
    const char *dir = argv[2];
    char path[4096];
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    FILE *probe;
    snprintf(path + strlen(path), sizeof path - strlen(path), "/input_0.pb");
    if (!(probe = fopen(path, "wb"))) {
        fprintf(stderr, "graphgen: cannot write %s (make the folder first)\n", path);
        return 2;
    }
    fclose(probe);
    rng = seed * 0x2545f4914f6cdd1dULL + 1;

    /* the inputs: an image [N,C,H,W] or a sequence [N,C,L], now and then a second input */
    static const int chans[] = {1, 2, 3, 4, 6, 8, 8, 12, 16, 16, 16, 24, 32, 32};
    int64_t d[4] = {ri(1, 2), chans[ri(0, 13)], 0, 0};
    int nd = chance(20) ? 3 : 4;
    if (nd == 3) {
        d[2] = ri(4, 48);
    } else {
        d[2] = ri(1, 20);
        d[3] = chance(60) ? d[2] : ri(1, 20);
    }
    while (numel(d, nd) > MAX_NUMEL / 2)
        d[1] = d[1] > 1 ? d[1] / 2 : 1, d[2] = d[2] > 2 ? d[2] - 2 : d[2];
    int ninputs = 1;
    graph_input(dir, 0, d, nd);
    if (chance(15)) {
        int64_t d2[4];
        memcpy(d2, d, sizeof d2);
        if (chance(50))
            for (int i = 2; i < nd; i++)
                d2[i] = 1;
        graph_input(dir, 1, d2, nd);
        ninputs = 2;
    }

    int steps = ri(2, 12), cur = 0;
    for (int s = 0; s < steps; s++) {
        int a = chance(70) ? cur : ri(0, npool - 1), o = -1, before = npool;
        for (int tries = 0; tries < 30 && o < 0; tries++) {
            step_flat = 0;
            o = pick_op()(a);
            if (o < 0)
                npool = before;   /* the tensors of a refused op (it wrote no node) */
        }
        for (int i = before; i < npool; i++)
            pool[i].flat = pool[a].flat || step_flat;
        if (o >= 0)
            cur = o;
    }
    if (!g_nodes.n) {   /* nothing applied: one Relu */
        int64_t od[MAX_RANK];
        memcpy(od, pool[0].d, sizeof od);
        unary_node("Relu", 0, od, pool[0].nd, NULL);
    }

    /* the outputs: every tensor nothing reads (the last ones when there are many) */
    Buf graph = {0}, outs = {0};
    int nout = 0;
    char out_types[256] = "";
    for (int i = npool - 1; i >= 0 && nout < 6; i--) {
        if (pool[i].uses || pool[i].input)
            continue;
        put_value_info(&outs, 12, pool[i].name, pool[i].d, pool[i].nd);
        snprintf(out_types + strlen(out_types), sizeof out_types - strlen(out_types), "%sFLOAT", nout ? "," : "");
        nout++;
    }
    put(&graph, g_nodes.p, g_nodes.n);
    put_str(&graph, 2, "graphgen");
    put(&graph, g_inits.p, g_inits.n);
    put(&graph, g_inputs.p, g_inputs.n);
    put(&graph, outs.p, outs.n);
    Buf model = {0}, opset = {0};
    put_int(&model, 1, 8);   /* ir_version */
    put_str(&model, 2, "kgen-graphgen");
    put_str(&opset, 1, "");
    put_int(&opset, 2, 17);
    put_msg(&model, 8, &opset);
    put_msg(&model, 7, &graph);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(model.p, 1, model.n, f) != model.n || fclose(f)) {
        fprintf(stderr, "graphgen: cannot write %s\n", path);
        return 2;
    }
    const char *base = strrchr(dir, '/');
    base = base && base[1] ? base + 1 : dir;
    printf("%s\tGraph\t17\t%s\t%s\t%zu\t%s\n", base, ninputs == 2 ? "FLOAT,FLOAT" : "FLOAT", out_types, model.n,
           ops_seen);
    free(model.p);
    free(outs.p);
    free(g_nodes.p);
    free(g_inits.p);
    free(g_inputs.p);
    return 0;
}
