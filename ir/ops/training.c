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

static int same_shape(const Tensor *a, const Tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
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
 *     h = mix(i * (k1 | 1) + k2),  u = (h >> 8) * 2^-24,   uniform in [0, 1).
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
    const OnnxAttr *a = op_attr(c, "seed");
    if (a) {
        double v = a->type == ONNX_ATTR_INT ? (double)a->i : (double)a->f;
        if (a->type == ONNX_ATTR_INT)
            return (uint32_t)a->i;
        if (v == floor(v) && fabs(v) < 9e18)
            return (uint32_t)(int64_t)v;
        float f = a->f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return bits;
    }
    const char *name = c->node->noutputs > 0 ? c->node->outputs[0] : "";
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The element's 32 random bits: position `flat` (an index expression) of stream `stream`
 * (0 for the first draw of an element, 1 for a second one: RandomNormal's pair) */
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

/* The output type of a Random* op: the dtype attribute, else dflt; float types only. */
static int random_dtype(OpCtx *c, DType dflt, DType *out)
{
    *out = dflt;
    const OnnxAttr *a = op_attr(c, "dtype");
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
    if (c->nout > groups * *n)
        return ir_fail("%s: %d outputs for %d tensors to update (at most %d)", c->op, c->nout, *n, groups * *n);
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
        if (x->dtype != x0->dtype || !same_shape(x, x0))
            return ir_fail("%s: input %d differs in type or shape from the X it goes with (input %d)", c->op, i,
                           2 + (i - 2) % *n);
    }
    return 0;
}

/* The tensors of group g for X number k, read at the output position. */
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

const OpDef op_defs_training[] = {
    {"ai.onnx.preview.training:Adagrad", adagrad},
    {"ai.onnx.preview.training:Adam", adam},
    {"ai.onnx.preview.training:Momentum", momentum},
    {"Bernoulli", bernoulli},
    {"RandomUniform", random_uniform},
    {"RandomUniformLike", random_uniform_like},
    {"RandomNormal", random_normal},
    {"RandomNormalLike", random_normal_like},
    {NULL, NULL},
};
