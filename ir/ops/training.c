/* training.c - ONNX training and random operators: Adagrad, Adam, Momentum (domain
 * ai.onnx.preview.training), Bernoulli, RandomUniform(Like), RandomNormal(Like) and the
 * counter-based generator Dropout shares, and the numeric ai.onnx.ml operators
 * (Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble).
 *
 * The optimizers are elementwise formulas of their tensors and two scalars (the learning
 * rate R and the update count T), one compute per output. Random numbers are a hash of the
 * element's position and the node's seed (op_random_uniform): no state, so every target
 * draws the same numbers and every element is drawn independently. The ml operators turn
 * their attribute tables into select trees. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Element 0 of a one-element tensor (a scalar input such as R or T). */
static Expr *scalar(Tensor *t)
{
    Expr *idx[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        idx[d] = ir_idx(0);
    return op_read(t, idx);
}

static Expr *call1(MathFn fn, Expr *a) { return ir_call(fn, &a); }

static Expr *call2(MathFn fn, Expr *a, Expr *b)
{
    Expr *args[2] = {a, b};
    return ir_call(fn, args);
}


/* The flat (row-major) position of the element at idx in a tensor of the given shape. */
static Expr *flat_index(int ndim, const int64_t *shape, Expr **idx)
{
    Expr *f = ir_idx(0);
    for (int d = 0; d < ndim; d++)
        f = ir_add(ir_mul(f, ir_idx(shape[d])), idx[d]);
    return f;
}

/* ---------------------------------------------------------------- random numbers */

/* The generator. With mix(x) the 32-bit integer hash
 *     x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16
 * (Chris Wellons' "lowbias32"; all arithmetic mod 2^32), a node's seed s gives two keys
 *     k1 = mix(s + 0x9e3779b9),  k2 = mix(k1 + 0x9e3779b9),
 * and the element at flat row-major position i draws
 *     h = mix(i * (k1 | 1) + k2),  u = (h >> 8) * 2^-24,   uniform in [0, 1)
 * (RandomNormal(Like) draws two, u1 at position 2i and u2 at 2i + 1, and gives
 * mean + scale * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)).
 * s is the seed attribute (Dropout's int, the float of the Random* ops: an integral value
 * as that integer mod 2^32, any other as the bits of the float32), or, without one, the
 * 32-bit FNV-1a hash of the node's first output name. The keys are computed here; the
 * generated code holds the per-element formula only, in 32-bit unsigned arithmetic, so
 * every target draws the same bits. */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static Expr *u32(uint32_t v) { return ir_int(v, DT_U32); }

static Expr *mix32_expr(Expr *x)
{
    x = ir_bin(OP_BITXOR, x, ir_bin(OP_SHR, x, u32(16)));
    x = ir_bin(OP_MUL, x, u32(0x7feb352du));
    x = ir_bin(OP_BITXOR, x, ir_bin(OP_SHR, x, u32(15)));
    x = ir_bin(OP_MUL, x, u32(0x846ca68bu));
    return ir_bin(OP_BITXOR, x, ir_bin(OP_SHR, x, u32(16)));
}

static uint32_t node_seed(OpCtx *c)
{
    const OpAttr *a = op_attr(c, "seed");
    if (a) {
        if (a->kind == OP_ATTR_INT)
            return (uint32_t)a->i;
        double v = a->f;
        if (v == floor(v) && fabs(v) < 9e18)
            return (uint32_t)(int64_t)v;
        float f = a->f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return bits;
    }
    const char *name = c->first_output ? c->first_output : "";
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The element's 32 random bits: position flat * nstreams + stream of the node's sequence
 * (flat: an index expression; nstreams 2 for RandomNormal's pair of draws, else 1). */
static Expr *random_bits(OpCtx *c, Expr *flat, int nstreams, int stream)
{
    uint32_t k1 = mix32(node_seed(c) + 0x9e3779b9u), k2 = mix32(k1 + 0x9e3779b9u);
    Expr *i = ir_cast(DT_U32, flat);
    if (nstreams > 1)
        i = ir_bin(OP_ADD, ir_bin(OP_MUL, i, u32((uint32_t)nstreams)), u32((uint32_t)stream));
    return mix32_expr(ir_bin(OP_ADD, ir_bin(OP_MUL, i, u32(k1 | 1u)), u32(k2)));
}

static Expr *bits_to_unit(Expr *h, DType t)
{
    DType ct = t == DT_F64 ? DT_F64 : DT_F32;
    Expr *top = ir_cast(ct, ir_bin(OP_SHR, h, u32(8)));
    return ir_bin(OP_MUL, top, ir_float(1.0 / 16777216.0, ct));
}

Expr *op_random_uniform(OpCtx *c, int ndim, const int64_t *shape, Expr **idx, DType t)
{
    return bits_to_unit(random_bits(c, flat_index(ndim, shape, idx), 1, 0), t);
}

/* The output type of a Random* op: the dtype attribute, else dflt. */
static int random_dtype(OpCtx *c, DType dflt, DType *out)
{
    *out = dflt;
    const OpAttr *a = op_attr(c, "dtype");
    if (a && op_dtype_from_onnx((int)a->i, out))
        return ir_fail("%s: dtype: %s", c->op, ir_errmsg());
    return 0;
}

typedef enum { RND_UNIFORM, RND_NORMAL } RandomKind;

/* RandomUniform(Like): low + u * (high - low). RandomNormal(Like): mean + scale * z with z
 * from two draws by Box-Muller: sqrt(-2 log(1 - u1)) * cos(2 pi u2). */
static int random_op(OpCtx *c, RandomKind k, int like)
{
    int ndim = 0;
    int64_t shape[KG_MAX_DIMS];
    DType t = DT_F32;
    if (like) {
        Tensor *x = op_input(c, 0, "input");
        if (!x)
            return -1;
        ndim = x->ndim;
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)ndim);
        if (random_dtype(c, x->dtype, &t))
            return -1;
    } else {
        int64_t s[KG_MAX_DIMS + 1];
        int n = op_attr_ints(c, "shape", s, KG_MAX_DIMS + 1);
        if (n < 0)
            return ir_fail("%s: the shape attribute is required", c->op);
        if (n > KG_MAX_DIMS)
            return ir_fail("%s: the output would have rank %d (limit %d)", c->op, n, KG_MAX_DIMS);
        int64_t numel = 1;
        for (int d = 0; d < n; d++) {
            if (s[d] < 1 || s[d] > INT32_MAX || (numel *= s[d]) > INT32_MAX)
                return ir_fail("%s: shape dimension %d is %lld (1 to 2^31-1 elements in all)", c->op, d,
                               (long long)s[d]);
            shape[d] = s[d];
        }
        ndim = n;
        if (random_dtype(c, DT_F32, &t))
            return -1;
    }
    if (!ir_dtype_is_float(t) || ir_dtype_is_float8(t))
        return ir_fail("%s: output type %s is not supported (float16, bfloat16, float or double)", c->op,
                       ir_dtype_name(t));
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return ir_fail("%s: an empty output (dimension %d is 0) is not supported", c->op, d);
    DType ct = t == DT_F64 ? DT_F64 : DT_F32;
    IterVar **ax = op_axes(ndim, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, idx);
    Expr *flat = flat_index(ndim, shape, idx), *v;
    if (k == RND_UNIFORM) {
        double lo = op_attr_float(c, "low", 0), hi = op_attr_float(c, "high", 1);
        Expr *u = bits_to_unit(random_bits(c, flat, 1, 0), ct);
        v = ir_bin(OP_ADD, ir_float(lo, ct), ir_bin(OP_MUL, u, ir_float(hi - lo, ct)));
    } else {
        double mean = op_attr_float(c, "mean", 0), sc = op_attr_float(c, "scale", 1);
        Expr *u1 = bits_to_unit(random_bits(c, flat, 2, 0), ct);
        Expr *u2 = bits_to_unit(random_bits(c, flat, 2, 1), ct);
        Expr *r = call1(FN_SQRT, ir_bin(OP_MUL, ir_float(-2, ct), call1(FN_LOG, ir_bin(OP_SUB, ir_float(1, ct), u1))));
        Expr *z = ir_bin(OP_MUL, r, call1(FN_COS, ir_bin(OP_MUL, u2, ir_float(6.283185307179586, ct))));
        v = ir_bin(OP_ADD, ir_float(mean, ct), ir_bin(OP_MUL, z, ir_float(sc, ct)));
    }
    return op_emit_out(c, 0, ndim, ax, ir_cast(t, v)) ? 0 : -1;
}

static int random_uniform(OpCtx *c) { return random_op(c, RND_UNIFORM, 0); }
static int random_uniform_like(OpCtx *c) { return random_op(c, RND_UNIFORM, 1); }
static int random_normal(OpCtx *c) { return random_op(c, RND_NORMAL, 0); }
static int random_normal_like(OpCtx *c) { return random_op(c, RND_NORMAL, 1); }

/* Bernoulli: 1 where a uniform draw u < p (the input), else 0: 1 with probability p. */
static int bernoulli(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (!ir_dtype_is_float(x->dtype) || ir_dtype_is_float8(x->dtype))
        return ir_fail("%s: input type %s is not supported (float16, bfloat16, float or double)", c->op,
                       ir_dtype_name(x->dtype));
    DType t;
    if (random_dtype(c, x->dtype, &t))
        return -1;
    if (ir_dtype_is_float8(t))
        return ir_fail("%s: output type %s is not supported", c->op, ir_dtype_name(t));
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    DType ct = x->dtype == DT_F64 ? DT_F64 : DT_F32;
    Expr *p = ir_cast(ct, op_read(x, idx));
    Expr *hit = ir_bin(OP_LT, op_random_uniform(c, x->ndim, x->shape, idx, ct), p);
    return op_emit_out(c, 0, x->ndim, ax, ir_select(hit, op_lit(1, t), op_lit(0, t))) ? 0 : -1;
}

/* ---------------------------------------------------------------- optimizers */

/* The inputs of an optimizer node: R, T, then `groups` groups of n tensors each (X..., G...,
 * then V... and/or H...), all of one float type and the X's shapes. Sets *n. */
static int optimizer_inputs(OpCtx *c, int groups, int *n)
{
    if (c->nin < 2 + groups || (c->nin - 2) % groups)
        return ir_fail("%s: %d inputs; expected R, T and %d groups of tensors of the same count", c->op, c->nin,
                       groups);
    *n = (c->nin - 2) / groups;
    if (c->nout > (groups - 1) * *n)
        return ir_fail("%s: %d outputs for %d tensors to update (at most %d)", c->op, c->nout, *n, (groups - 1) * *n);
    Tensor *r = op_input(c, 0, "R"), *t = op_input(c, 1, "T");
    if (!r || !t)
        return -1;
    if (ir_tensor_numel(r) != 1 || !ir_dtype_is_float(r->dtype) || ir_dtype_is_storage(r->dtype))
        return ir_fail("%s: R must be a float or double scalar", c->op);
    if (ir_tensor_numel(t) != 1 || ir_dtype_is_float(t->dtype) || t->dtype == DT_BOOL)
        return ir_fail("%s: T must be an integer scalar", c->op);
    for (int i = 2; i < c->nin; i++) {
        Tensor *x = op_input(c, i, "a tensor to update");
        if (!x)
            return -1;
        Tensor *x0 = c->in[2 + (i - 2) % *n];
        if (x->dtype != DT_F32 && x->dtype != DT_F64)
            return ir_fail("%s: input %d has type %s (float or double expected)", c->op, i, ir_dtype_name(x->dtype));
        if (x->dtype != x0->dtype || !ir_tensor_same_shape(x, x0))
            return ir_fail("%s: input %d differs in type or shape from the X it goes with (input %d)", c->op, i,
                           2 + (i - 2) % *n);
    }
    return 0;
}

/* What the formulas of an optimizer read for X number k at one output position. */
typedef struct {
    Expr *x, *g, *v, *h;      /* v, h: NULL where the op has none */
    Expr *r, *t;              /* R, and T as a float, in x's type */
    Expr *t_pos;              /* T > 0 */
    DType dt;
} OptArgs;

static Expr *lit(double v, DType t) { return ir_float(v, t); }
static Expr *add(Expr *a, Expr *b) { return ir_bin(OP_ADD, a, b); }
static Expr *sub(Expr *a, Expr *b) { return ir_bin(OP_SUB, a, b); }
static Expr *mul(Expr *a, Expr *b) { return ir_bin(OP_MUL, a, b); }
static Expr *div_(Expr *a, Expr *b) { return ir_bin(OP_DIV, a, b); }

/* Reads X number k and its group mates at fresh axes; ax gets the axes. */
static void opt_args(OpCtx *c, int n, int k, const int *groups, IterVar ***ax, OptArgs *a)
{
    Tensor *x = c->in[2 + k];
    *ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(*ax, x->ndim, idx);
    memset(a, 0, sizeof *a);
    a->dt = x->dtype;
    a->x = op_read(x, idx);
    a->g = op_read(c->in[2 + n + k], idx);
    if (groups[0])
        a->v = op_read(c->in[2 + groups[0] * n + k], idx);
    if (groups[1])
        a->h = op_read(c->in[2 + groups[1] * n + k], idx);
    Expr *t = scalar(c->in[1]);
    a->r = ir_cast(a->dt, scalar(c->in[0]));
    a->t = ir_cast(a->dt, t);
    a->t_pos = ir_bin(OP_GT, t, ir_int(0, t->dtype));
}

/* Adagrad: r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G;
 * H_new = H + G' * G'; X_new = X - r * G' / (sqrt(H_new) + epsilon).
 * Outputs X_new..., H_new... */
static int adagrad(OpCtx *c)
{
    int n, groups[2] = {0, 2};
    if (optimizer_inputs(c, 3, &n))
        return -1;
    double decay = op_attr_float(c, "decay_factor", 0), eps = op_attr_float(c, "epsilon", 1e-6),
           norm = op_attr_float(c, "norm_coefficient", 0);
    for (int k = 0; k < n; k++) {
        for (int out = 0; out < 2; out++) {
            int o = out * n + k;
            if (o >= c->nout)
                continue;
            IterVar **ax;
            OptArgs a;
            opt_args(c, n, k, groups, &ax, &a);
            DType dt = a.dt;
            Expr *g = add(mul(lit(norm, dt), a.x), a.g);
            Expr *h_new = add(a.h, mul(g, g));
            Expr *r = div_(a.r, add(lit(1, dt), mul(a.t, lit(decay, dt))));
            Expr *x_new = sub(a.x, div_(mul(r, g), add(call1(FN_SQRT, h_new), lit(eps, dt))));
            if (!op_emit_out(c, o, c->in[2 + k]->ndim, ax, out ? h_new : x_new))
                return -1;
        }
    }
    return 0;
}

/* Momentum: G' = norm_coefficient * X + G; b = T > 0 ? beta : 1; V_new = alpha * V + b * G';
 * standard: X_new = X - R * V_new; nesterov: X_new = X - R * (G' + alpha * V_new).
 * Outputs X_new..., V_new... */
static int momentum(OpCtx *c)
{
    int n, groups[2] = {2, 0};
    if (optimizer_inputs(c, 3, &n))
        return -1;
    const char *need[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (int i = 0; i < 4; i++)
        if (!op_attr(c, need[i]))
            return ir_fail("%s: the %s attribute is required", c->op, need[i]);
    double alpha = op_attr_float(c, "alpha", 0), beta = op_attr_float(c, "beta", 0),
           norm = op_attr_float(c, "norm_coefficient", 0);
    const char *mode = op_attr_str(c, "mode", "");
    int nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard"))
        return ir_fail("%s: mode '%s' (standard or nesterov)", c->op, mode);
    for (int k = 0; k < n; k++) {
        for (int out = 0; out < 2; out++) {
            int o = out * n + k;
            if (o >= c->nout)
                continue;
            IterVar **ax;
            OptArgs a;
            opt_args(c, n, k, groups, &ax, &a);
            DType dt = a.dt;
            Expr *g = add(mul(lit(norm, dt), a.x), a.g);
            Expr *b = ir_select(a.t_pos, lit(beta, dt), lit(1, dt));
            Expr *v_new = add(mul(lit(alpha, dt), a.v), mul(b, g));
            Expr *step = nesterov ? add(g, mul(lit(alpha, dt), v_new)) : v_new;
            Expr *x_new = sub(a.x, mul(a.r, step));
            if (!op_emit_out(c, o, c->in[2 + k]->ndim, ax, out ? v_new : x_new))
                return -1;
        }
    }
    return 0;
}

/* Adam: G' = norm_coefficient * X + G; V_new = alpha * V + (1 - alpha) * G';
 * H_new = beta * H + (1 - beta) * G' * G';
 * R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
 * X_new = (1 - norm_coefficient_post) * (X - R' * V_new / (sqrt(H_new) + epsilon)).
 * Outputs X_new..., V_new..., H_new... */
static int adam(OpCtx *c)
{
    int n, groups[2] = {2, 3};
    if (optimizer_inputs(c, 4, &n))
        return -1;
    double alpha = op_attr_float(c, "alpha", 0.9), beta = op_attr_float(c, "beta", 0.999),
           eps = op_attr_float(c, "epsilon", 1e-6), norm = op_attr_float(c, "norm_coefficient", 0),
           post = op_attr_float(c, "norm_coefficient_post", 0);
    for (int k = 0; k < n; k++) {
        for (int out = 0; out < 3; out++) {
            int o = out * n + k;
            if (o >= c->nout)
                continue;
            IterVar **ax;
            OptArgs a;
            opt_args(c, n, k, groups, &ax, &a);
            DType dt = a.dt;
            Expr *g = add(mul(lit(norm, dt), a.x), a.g);
            Expr *v_new = add(mul(lit(alpha, dt), a.v), mul(lit(1 - alpha, dt), g));
            Expr *h_new = add(mul(lit(beta, dt), a.h), mul(lit(1 - beta, dt), mul(g, g)));
            Expr *y = out == 1 ? v_new : h_new;
            if (out == 0) {
                Expr *bias = div_(call1(FN_SQRT, sub(lit(1, dt), call2(FN_POW, lit(beta, dt), a.t))),
                                  sub(lit(1, dt), call2(FN_POW, lit(alpha, dt), a.t)));
                Expr *r = ir_select(a.t_pos, mul(a.r, bias), a.r);
                Expr *x_new = sub(a.x, div_(mul(r, v_new), add(call1(FN_SQRT, h_new), lit(eps, dt))));
                y = mul(lit(1 - post, dt), x_new);
            }
            if (!op_emit_out(c, o, c->in[2 + k]->ndim, ax, y))
                return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- ai.onnx.ml */

#define ML_MAX_TABLE ((int64_t)1 << 20)   /* elements of an attribute table (keys, nodes) */

/* The numbers of attribute `name` (ints, floats or a numeric tensor) as doubles in *vals
 * and as int64 in *ints (each if asked), their count in *count (-1 if the attribute is
 * absent) and their type in *dt if asked (i64 for ints, f32 for floats, the tensor's).
 * 0, or -1 with ir_fail(). */
static int attr_numbers(OpCtx *c, const char *name, int64_t *count, double **vals, int64_t **ints, DType *dt)
{
    const OpAttr *a = op_attr(c, name);
    *count = -1;
    if (!a)
        return 0;
    int64_t n;
    DType t;
    const OpAttrTensor *ot = a->has_tensor ? &a->t : NULL;
    if (ot) {
        if (ot->dtype == ONNX_STRING)
            return ir_fail("%s: %s: string tensors are not supported (numeric tables only)", c->op, name);
        if (op_dtype_from_onnx(ot->dtype, &t))
            return ir_fail("%s: %s: %s", c->op, name, ir_errmsg());
        n = ot->nelems;
        if (n && !ot->data)
            return ir_fail("%s: %s has no data", c->op, name);
    } else if (a->nstrings > 0) {
        return ir_fail("%s: %s: strings are not supported (numeric tables only)", c->op, name);
    } else if (a->kind == OP_ATTR_FLOATS || a->nfloats > 0) {
        t = DT_F32;
        n = a->nfloats;
    } else {
        t = DT_I64;
        n = a->nints;
    }
    if (n > ML_MAX_TABLE)
        return ir_fail("%s: %s has %lld elements (limit %lld)", c->op, name, (long long)n, (long long)ML_MAX_TABLE);
    double *v = ir_alloc(sizeof *v * (size_t)(n + 1));
    int64_t *iv = ir_alloc(sizeof *iv * (size_t)(n + 1));
    int sz = ir_dtype_bytes(t);
    for (int64_t k = 0; k < n; k++) {
        const unsigned char *p = ot ? (const unsigned char *)ot->data + k * sz : NULL;
        if (!ot && t == DT_F32) {
            v[k] = a->floats[k];
            iv[k] = (int64_t)v[k];
        } else if (!ot) {
            iv[k] = a->ints[k];
            v[k] = (double)iv[k];
        } else if (ir_dtype_is_storage(t)) {
            v[k] = ir_storage_to_f32(t, p);
            iv[k] = (int64_t)v[k];
        } else if (t == DT_F32 || t == DT_F64) {
            if (t == DT_F32) {
                float f;
                memcpy(&f, p, 4);
                v[k] = f;
            } else {
                memcpy(&v[k], p, 8);
            }
            iv[k] = isfinite(v[k]) && fabs(v[k]) < 9e18 ? (int64_t)v[k] : 0;
        } else {
            uint64_t u = 0;
            memcpy(&u, p, (size_t)sz);
            int64_t x = (int64_t)u;
            if (ir_dtype_is_signed(t) && sz < 8 && (u >> (8 * sz - 1)) & 1)
                x = (int64_t)(u | ~(((uint64_t)1 << (8 * sz)) - 1));
            iv[k] = x;
            v[k] = (double)x;
        }
    }
    if (vals)
        *vals = v;
    if (ints)
        *ints = iv;
    if (dt)
        *dt = t;
    *count = n;
    return 0;
}

/* Binarizer: 1 where X > threshold, else 0. */
static int binarizer(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    if (x->dtype == DT_BOOL || ir_dtype_is_float8(x->dtype))
        return ir_fail("%s: type %s is not supported (numeric types)", c->op, ir_dtype_name(x->dtype));
    DType ct = x->dtype == DT_F32 || ir_dtype_is_storage(x->dtype) ? DT_F32 : DT_F64;
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    Expr *hit = ir_bin(OP_GT, ir_cast(ct, op_read(x, idx)), ir_float(op_attr_float(c, "threshold", 0), ct));
    return op_emit_out(c, 0, x->ndim, ax, ir_select(hit, op_lit(1, x->dtype), op_lit(0, x->dtype))) ? 0 : -1;
}

/* ArrayFeatureExtractor: Z[..., j] = X[..., Y[j]] with Y's elements in row-major order
 * (negative ones count from the end; out-of-range ones are clamped); a 1-D X gives [1, m]. */
static int array_feature_extractor(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X"), *y = op_input(c, 1, "Y");
    if (!x || !y)
        return -1;
    if (x->ndim < 1)
        return ir_fail("%s: X must have rank 1 or more", c->op);
    if (y->dtype != DT_I64 && y->dtype != DT_I32)
        return ir_fail("%s: Y has type %s (int64 expected)", c->op, ir_dtype_name(y->dtype));
    int64_t m = ir_tensor_numel(y), n = x->shape[x->ndim - 1];
    if (m == 0 || n == 0)
        return ir_fail("%s: empty X or Y is not supported", c->op);
    int r = x->ndim == 1 ? 2 : x->ndim;
    int64_t s[KG_MAX_DIMS];
    for (int d = 0; d < r - 1; d++)
        s[d] = x->ndim == 1 ? 1 : x->shape[d];
    s[r - 1] = m;
    IterVar **ax = op_axes(r, s);
    Expr *idx[KG_MAX_DIMS], *yi[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, r, idx);
    Expr *j = idx[r - 1];
    for (int d = y->ndim - 1; d >= 0; d--) {
        yi[d] = ir_bin(OP_FLOORMOD, j, ir_idx(y->shape[d]));
        j = ir_bin(OP_FLOORDIV, j, ir_idx(y->shape[d]));
    }
    Expr *k = ir_cast(DT_INDEX, op_read(y, yi));
    k = ir_select(ir_bin(OP_LT, k, ir_idx(0)), ir_bin(OP_ADD, k, ir_idx(n)), k);
    k = ir_bin(OP_MIN, ir_bin(OP_MAX, k, ir_idx(0)), ir_idx(n - 1));
    for (int d = 0; d < x->ndim - 1; d++)
        xi[d] = idx[d];
    xi[x->ndim - 1] = k;
    return op_emit_out(c, 0, r, ax, op_read(x, xi)) ? 0 : -1;
}

/* LabelEncoder (numeric keys and values): Y = the value of the key equal to X, else the
 * default; a binary search over the sorted keys as a tree of selects (a NaN key matches
 * a NaN). */
#define LE_MAX_KEYS 16384
typedef struct {
    double kf, vf;
    int64_t ki, vi;
    int64_t order;            /* position in the attribute: equal keys sort by it */
} LePair;

typedef struct {
    Expr *x;
    DType kt, vt;
    const LePair *p;
    Expr *dflt;
} LeTree;

static int le_cmp_f(const void *a, const void *b)
{
    const LePair *p = a, *q = b;
    if (p->kf != q->kf)
        return p->kf < q->kf ? -1 : 1;
    return p->order < q->order ? -1 : p->order > q->order;
}

static int le_cmp_i(const void *a, const void *b)
{
    const LePair *p = a, *q = b;
    if (p->ki != q->ki)
        return p->ki < q->ki ? -1 : 1;
    return p->order < q->order ? -1 : p->order > q->order;
}

static Expr *le_key(const LeTree *T, int64_t k)
{
    return ir_dtype_is_float(T->kt) ? ir_float(T->p[k].kf, T->kt) : ir_int(T->p[k].ki, T->kt);
}

static Expr *le_value(const LeTree *T, int64_t k)
{
    return ir_dtype_is_float(T->vt) ? ir_float(T->p[k].vf, T->vt) : ir_int(T->p[k].vi, T->vt);
}

static Expr *le_search(const LeTree *T, int64_t lo, int64_t hi)
{
    if (lo > hi)
        return T->dflt;
    int64_t mid = lo + (hi - lo) / 2;
    Expr *key = le_key(T, mid);
    Expr *side = ir_select(ir_bin(OP_LT, T->x, key), le_search(T, lo, mid - 1), le_search(T, mid + 1, hi));
    return ir_select(ir_bin(OP_EQ, T->x, key), le_value(T, mid), side);
}

static int label_encoder(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    static const char *const kname[] = {"keys_tensor", "keys_int64s", "keys_floats"};
    static const char *const vname[] = {"values_tensor", "values_int64s", "values_floats"};
    if (op_attr(c, "keys_strings") || op_attr(c, "values_strings"))
        return ir_fail("%s: string keys or values are not supported (numeric tables only)", c->op);
    double *kf = NULL, *vf = NULL;
    int64_t *ki = NULL, *vi = NULL, nk = -1, nv = -1;
    DType kt = DT_I64, vt = DT_I64;
    for (int i = 0; i < 3 && nk == -1; i++)
        if (attr_numbers(c, kname[i], &nk, &kf, &ki, &kt))
            return -1;
    for (int i = 0; i < 3 && nv == -1; i++)
        if (attr_numbers(c, vname[i], &nv, &vf, &vi, &vt))
            return -1;
    if (nk < 0 || nv < 0)
        return ir_fail("%s: the keys_* and values_* attributes are required", c->op);
    if (nk != nv)
        return ir_fail("%s: %lld keys but %lld values", c->op, (long long)nk, (long long)nv);
    if (nk > LE_MAX_KEYS)
        return ir_fail("%s: %lld keys, more than the %d this unrolled search is made for", c->op, (long long)nk,
                       LE_MAX_KEYS);
    if (ir_dtype_is_storage(kt) || ir_dtype_is_storage(vt) || kt == DT_BOOL || vt == DT_BOOL)
        return ir_fail("%s: key or value type %s is not supported", c->op,
                       ir_dtype_name(ir_dtype_is_storage(kt) || kt == DT_BOOL ? kt : vt));
    if (x->dtype != kt)
        return ir_fail("%s: X has type %s but the keys are %s", c->op, ir_dtype_name(x->dtype), ir_dtype_name(kt));
    Expr *dflt;
    const OpAttr *da = op_attr(c, "default_tensor");
    if (da) {
        double *dv;
        int64_t *di;
        DType dt;
        int64_t nd;
        if (attr_numbers(c, "default_tensor", &nd, &dv, &di, &dt))
            return -1;
        if (nd != 1)
            return ir_fail("%s: default_tensor must have one element", c->op);
        dflt = ir_dtype_is_float(vt) ? ir_float(dv[0], vt) : ir_int(di[0], vt);
    } else if (ir_dtype_is_float(vt)) {
        dflt = ir_float(op_attr_float(c, "default_float", -0.0), vt);
    } else {
        dflt = ir_int(op_attr_int(c, "default_int64", -1), vt);
    }
    /* sorted, NaN keys apart; of equal keys the last one counts (as in a dict) */
    LePair *p = ir_alloc(sizeof *p * (size_t)(nk + 1));
    int64_t n = 0, nan_at = -1;
    for (int64_t k = 0; k < nk; k++) {
        if (ir_dtype_is_float(kt) && isnan(kf[k])) {
            nan_at = k;
            continue;
        }
        p[n].kf = kf[k];
        p[n].ki = ki[k];
        p[n].vf = vf[k];
        p[n].vi = vi[k];
        p[n].order = k;
        n++;
    }
    qsort(p, (size_t)n, sizeof *p, ir_dtype_is_float(kt) ? le_cmp_f : le_cmp_i);
    int64_t m = 0;
    for (int64_t a = 0; a < n; a++) {
        int next_same = a + 1 < n && (ir_dtype_is_float(kt) ? p[a + 1].kf == p[a].kf : p[a + 1].ki == p[a].ki);
        if (!next_same)
            p[m++] = p[a];
    }
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, idx);
    LeTree T = {op_read(x, idx), kt, vt, p, dflt};
    Expr *body = le_search(&T, 0, m - 1);
    if (nan_at >= 0)
        body = ir_select(call1(FN_ISNAN, T.x),
                         ir_dtype_is_float(vt) ? ir_float(vf[nan_at], vt) : ir_int(vi[nan_at], vt), body);
    return op_emit_out(c, 0, x->ndim, ax, body) ? 0 : -1;
}

/* TreeEnsemble (ai.onnx.ml opset 5): every tree unrolled into nested selects (only the
 * branch taken is evaluated, so a row walks one path), a leaf giving its weight to its
 * target and the aggregate's identity to the others; the trees combined by the aggregate
 * (SUM, AVERAGE: each weight / the tree count, MIN and MAX starting from the largest and
 * the lowest finite value), then the post transform (NONE, LOGISTIC, SOFTMAX over the
 * targets). */
#define TE_MAX_NODES ((int64_t)1 << 16)   /* tree nodes unrolled in all */
#define TE_MAX_DEPTH 200

enum { TE_LEQ, TE_LT, TE_GTE, TE_GT, TE_EQ, TE_NEQ, TE_MEMBER };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct {
    OpCtx *c;
    Tensor *x;
    Expr *row, *target;       /* the output position */
    DType ct;                 /* f32 or f64: the arithmetic */
    int64_t nnodes, nleaves, ntargets, budget;
    int64_t *feat, *tid, *fid, *tleaf, *fleaf, *missing, *mode, *ltarget;
    double *split, *lweight;
    int64_t *mfirst, *mcount; /* per node: its members in mval */
    double *mval;
    Expr *ident;
} Trees;

static Expr *te_walk(Trees *T, int64_t id, int leaf, int depth)
{
    OpCtx *c = T->c;
    if (--T->budget < 0) {
        ir_fail("%s: more than %lld tree nodes to unroll", c->op, (long long)TE_MAX_NODES);
        return NULL;
    }
    if (depth > TE_MAX_DEPTH) {
        ir_fail("%s: a tree deeper than %d (or a cycle in the node ids)", c->op, TE_MAX_DEPTH);
        return NULL;
    }
    if (leaf) {
        if (id < 0 || id >= T->nleaves) {
            ir_fail("%s: leaf index %lld out of range (%lld leaves)", c->op, (long long)id, (long long)T->nleaves);
            return NULL;
        }
        Expr *w = ir_float(T->lweight[id], T->ct);
        if (T->ntargets == 1)
            return w;
        return ir_select(ir_bin(OP_EQ, T->target, ir_idx(T->ltarget[id])), w, T->ident);
    }
    if (id < 0 || id >= T->nnodes) {
        ir_fail("%s: node index %lld out of range (%lld nodes)", c->op, (long long)id, (long long)T->nnodes);
        return NULL;
    }
    Expr *xi[2] = {T->row, ir_idx(T->feat[id])};
    Expr *x = ir_cast(T->ct, op_read(T->x, xi)), *s = ir_float(T->split[id], T->ct), *cond = NULL;
    switch (T->mode[id]) {
    case TE_LEQ: cond = ir_bin(OP_LE, x, s); break;
    case TE_LT: cond = ir_bin(OP_LT, x, s); break;
    case TE_GTE: cond = ir_bin(OP_GE, x, s); break;
    case TE_GT: cond = ir_bin(OP_GT, x, s); break;
    case TE_EQ: cond = ir_bin(OP_EQ, x, s); break;
    case TE_NEQ: cond = ir_bin(OP_NE, x, s); break;
    default:
        cond = ir_bool(0);
        for (int64_t k = 0; k < T->mcount[id]; k++) {
            Expr *eq = ir_bin(OP_EQ, x, ir_float(T->mval[T->mfirst[id] + k], T->ct));
            cond = k ? ir_bin(OP_OR, cond, eq) : eq;
        }
        break;
    }
    if (T->missing && T->missing[id])
        cond = ir_bin(OP_OR, cond, call1(FN_ISNAN, x));
    Expr *yes = te_walk(T, T->tid[id], T->tleaf[id] != 0, depth + 1);
    Expr *no = yes ? te_walk(T, T->fid[id], T->fleaf[id] != 0, depth + 1) : NULL;
    return no ? ir_select(cond, yes, no) : NULL;
}

/* The trees [lo, hi) combined by op, as a balanced tree (a shallow expression). */
static Expr *te_combine(Expr **e, int64_t lo, int64_t hi, BinOp op)
{
    if (hi - lo == 1)
        return e[lo];
    int64_t mid = lo + (hi - lo) / 2;
    return ir_bin(op, te_combine(e, lo, mid, op), te_combine(e, mid, hi, op));
}

/* An ints attribute that must have n elements (or may be absent, if optional). */
static int te_ints(OpCtx *c, const char *name, int64_t n, int optional, int64_t **out)
{
    int64_t k;
    if (attr_numbers(c, name, &k, NULL, out, NULL))
        return -1;
    if (k == -1 && optional) {
        *out = NULL;
        return 0;
    }
    if (k != n)
        return ir_fail("%s: %s has %lld elements, expected %lld", c->op, name, (long long)(k < 0 ? 0 : k),
                       (long long)n);
    return 0;
}

static int tree_ensemble(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    if (x->ndim != 2)
        return ir_fail("%s: X must have rank 2 [N, F]", c->op);
    if (x->dtype != DT_F32 && x->dtype != DT_F64 && x->dtype != DT_F16)
        return ir_fail("%s: X has type %s (float, double or float16)", c->op, ir_dtype_name(x->dtype));
    Trees T = {0};
    T.c = c;
    T.x = x;
    T.ct = x->dtype == DT_F64 ? DT_F64 : DT_F32;
    T.ntargets = op_attr_int(c, "n_targets", 0);
    if (T.ntargets < 1 || T.ntargets > INT32_MAX)
        return ir_fail("%s: n_targets must be given, 1 or more", c->op);
    int64_t agg = op_attr_int(c, "aggregate_function", AGG_SUM), post = op_attr_int(c, "post_transform", 0);
    if (agg < AGG_AVERAGE || agg > AGG_MAX)
        return ir_fail("%s: aggregate_function %lld (0 AVERAGE, 1 SUM, 2 MIN, 3 MAX)", c->op, (long long)agg);
    if (post != 0 && post != 1 && post != 2)
        return ir_fail("%s: post_transform %lld is not supported (0 NONE, 1 SOFTMAX, 2 LOGISTIC; not "
                       "SOFTMAX_ZERO or PROBIT)", c->op, (long long)post);
    if (attr_numbers(c, "nodes_splits", &T.nnodes, &T.split, NULL, NULL) ||
        attr_numbers(c, "leaf_weights", &T.nleaves, &T.lweight, NULL, NULL))
        return -1;
    if (T.nnodes < 0 || T.nleaves < 1)
        return ir_fail("%s: nodes_splits and leaf_weights are required", c->op);
    int64_t nmodes;
    if (attr_numbers(c, "nodes_modes", &nmodes, NULL, &T.mode, NULL))
        return -1;
    if (nmodes != T.nnodes)
        return ir_fail("%s: nodes_modes has %lld elements, expected %lld", c->op, (long long)(nmodes < 0 ? 0 : nmodes),
                       (long long)T.nnodes);
    if (te_ints(c, "nodes_featureids", T.nnodes, 0, &T.feat) || te_ints(c, "nodes_truenodeids", T.nnodes, 0, &T.tid) ||
        te_ints(c, "nodes_falsenodeids", T.nnodes, 0, &T.fid) || te_ints(c, "nodes_trueleafs", T.nnodes, 0, &T.tleaf) ||
        te_ints(c, "nodes_falseleafs", T.nnodes, 0, &T.fleaf) ||
        te_ints(c, "nodes_missing_value_tracks_true", T.nnodes, 1, &T.missing) ||
        te_ints(c, "leaf_targetids", T.nleaves, 0, &T.ltarget))
        return -1;
    int64_t *roots;
    int64_t ntrees;
    if (attr_numbers(c, "tree_roots", &ntrees, NULL, &roots, NULL))
        return -1;
    if (ntrees < 1)
        return ir_fail("%s: tree_roots is required", c->op);
    for (int64_t k = 0; k < T.nnodes; k++) {
        if (T.mode[k] < TE_LEQ || T.mode[k] > TE_MEMBER)
            return ir_fail("%s: node %lld has mode %lld (0 to 6)", c->op, (long long)k, (long long)T.mode[k]);
        if (T.feat[k] < 0 || T.feat[k] >= x->shape[1])
            return ir_fail("%s: node %lld reads feature %lld of %lld", c->op, (long long)k, (long long)T.feat[k],
                           (long long)x->shape[1]);
    }
    for (int64_t k = 0; k < T.nleaves; k++)
        if (T.ltarget[k] < 0 || T.ltarget[k] >= T.ntargets)
            return ir_fail("%s: leaf %lld has target %lld of %lld", c->op, (long long)k, (long long)T.ltarget[k],
                           (long long)T.ntargets);
    /* the set-membership nodes take the NaN-separated runs of membership_values in node order */
    T.mfirst = ir_alloc(sizeof *T.mfirst * (size_t)(T.nnodes + 1));
    T.mcount = ir_alloc(sizeof *T.mcount * (size_t)(T.nnodes + 1));
    int64_t nmv, at = 0;
    if (attr_numbers(c, "membership_values", &nmv, &T.mval, NULL, NULL))
        return -1;
    for (int64_t k = 0; k < T.nnodes; k++) {
        if (T.mode[k] != TE_MEMBER)
            continue;
        if (at >= nmv)
            return ir_fail("%s: membership_values has no set for node %lld", c->op, (long long)k);
        T.mfirst[k] = at;
        while (at < nmv && !isnan(T.mval[at]))
            at++;
        T.mcount[k] = at - T.mfirst[k];
        at++;   /* the NaN */
    }
    double big = ir_dtype_float_max(x->dtype);
    T.ident = ir_float(agg == AGG_MIN ? big : agg == AGG_MAX ? -big : 0, T.ct);
    if (agg == AGG_AVERAGE)
        for (int64_t k = 0; k < T.nleaves; k++)
            T.lweight[k] /= (double)ntrees;
    T.budget = TE_MAX_NODES;
    int64_t shape[2] = {x->shape[0], T.ntargets};
    IterVar **ax = op_axes(2, shape);
    T.row = ir_varref(ax[0]->var);
    T.target = ir_varref(ax[1]->var);
    Expr **per = ir_alloc(sizeof *per * (size_t)ntrees);
    for (int64_t k = 0; k < ntrees; k++) {
        int64_t r = roots[k];
        if (r < 0 || r >= T.nnodes)
            return ir_fail("%s: tree root %lld out of range (%lld nodes)", c->op, (long long)r, (long long)T.nnodes);
        /* a tree that is one leaf: the root's ids are both that leaf */
        int leaf = T.tleaf[r] && T.fleaf[r] && T.tid[r] == T.fid[r];
        if (!(per[k] = te_walk(&T, r, leaf, 0)))
            return -1;
    }
    Expr *y = te_combine(per, 0, ntrees, agg == AGG_MIN ? OP_MIN : agg == AGG_MAX ? OP_MAX : OP_ADD);
    if (post == 2)
        y = div_(lit(1, T.ct), add(lit(1, T.ct), call1(FN_EXP, ir_un(UN_NEG, y))));
    if (post != 1)
        return op_emit_out(c, 0, 2, ax, ir_cast(x->dtype, y)) ? 0 : -1;
    /* SOFTMAX over the targets: exp(y - max) / sum exp(y - max) */
    Tensor *raw = op_emit(c, op_name(c, "raw"), 2, ax, y);
    if (!raw)
        return -1;
    Tensor *st[2];
    for (int k = 0; k < 2; k++) {
        IterVar **rx = op_axes(1, shape);
        IterVar *t = ir_itervar_new("r0", T.ntargets, IV_REDUCE);
        Expr *ri[2] = {ir_varref(rx[0]->var), ir_varref(t->var)};
        Expr *v = op_read(raw, ri);
        if (k == 1) {
            Expr *mi[1] = {ri[0]};
            v = call1(FN_EXP, sub(v, op_read(st[0], mi)));
        }
        if (!(st[k] = op_emit(c, op_name(c, k ? "sum" : "max"), 1, rx, ir_reduce(k ? RED_SUM : RED_MAX, v, &t, 1))))
            return -1;
    }
    IterVar **ox = op_axes(2, shape);
    Expr *oi[2] = {ir_varref(ox[0]->var), ir_varref(ox[1]->var)};
    Expr *e = call1(FN_EXP, sub(op_read(raw, oi), op_read(st[0], oi)));
    return op_emit_out(c, 0, 2, ox, ir_cast(x->dtype, div_(e, op_read(st[1], oi)))) ? 0 : -1;
}

const OpDef op_defs_training[] = {
    {"ai.onnx.preview.training:Adagrad", adagrad},
    {"ai.onnx.preview.training:Adam", adam},
    {"ai.onnx.preview.training:Momentum", momentum},
    {"Bernoulli", bernoulli},
    {"RandomUniform", random_uniform},
    {"RandomUniformLike", random_uniform_like},
    {"RandomNormal", random_normal},
    {"RandomNormalLike", random_normal_like},
    {"ai.onnx.ml:Binarizer", binarizer},
    {"ai.onnx.ml:ArrayFeatureExtractor", array_feature_extractor},
    {"ai.onnx.ml:LabelEncoder", label_encoder},
    {"ai.onnx.ml:TreeEnsemble", tree_ensemble},
    {NULL, NULL},
};
