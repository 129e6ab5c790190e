/* nn.c - ONNX neural-network operators: convolutions, pooling, Gemm, MatMul, Einsum.
 *
 * Every contraction is one compute whose whole body is a reduction (a stage reduction
 * the scheduler can tile, reorder and vectorize); padding, bias, scaling and averaging
 * are separate elementwise computes around it, which the scheduler may inline. Padding is
 * a compute with a select guard, so the reduction itself reads without conditions. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SP (KG_MAX_DIMS - 2)   /* spatial dimensions of an N, C, ... tensor */

/* ---------------------------------------------------------------- small helpers */

/* a * s + b * d on indices, leaving out the unit factors (readable generated code) */
static Expr *lin(Expr *a, int64_t s, Expr *b, int64_t d)
{
    Expr *x = s == 1 ? a : ir_bin(OP_MUL, a, ir_idx(s));
    if (!b)
        return x;
    Expr *y = d == 1 ? b : ir_bin(OP_MUL, b, ir_idx(d));
    return ir_bin(OP_ADD, x, y);
}

static Expr *and_(Expr *a, Expr *b) { return a ? ir_bin(OP_AND, a, b) : b; }

/* lo <= e < hi */
static Expr *in_range(Expr *e, int64_t lo, int64_t hi)
{
    return ir_bin(OP_AND, ir_bin(OP_GE, e, ir_idx(lo)), ir_bin(OP_LT, e, ir_idx(hi)));
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static int want_output(OpCtx *c, int i) { return i < c->nout && c->out_names[i]; }

/* The compute that ends an operator: its output `out` when out >= 0, else a temporary. */
static Tensor *emit(OpCtx *c, int out, const char *what, int ndim, IterVar **ax, Expr *body)
{
    if (!body)
        return NULL;
    if (out >= 0)
        return op_emit_out(c, out, ndim, ax, body);
    return op_emit(c, op_name(c, what), ndim, ax, body);
}

/* The data input of a convolution or pooling: N, C and at least one spatial dimension. */
static Tensor *nc_input(OpCtx *c, int i, const char *what)
{
    Tensor *x = op_input(c, i, what);
    if (!x)
        return NULL;
    if (x->ndim < 3) {
        ir_fail("%s: input %s has rank %d; expected N, C and 1 to %d spatial dimensions", c->op, what, x->ndim,
                MAX_SP);
        return NULL;
    }
    return x;
}

/* ---------------------------------------------------------------- window geometry */

/* A sliding window over the spatial dimensions of an N, C, ... tensor: output position o
 * reads input positions o*stride + r*dil - lo for r in [0, k). hi is the end padding the
 * attributes ask for (for the count of an average); the windows may read less or more
 * (ceil mode) than in + lo + hi. */
typedef struct {
    int ns;
    int64_t in[MAX_SP], k[MAX_SP], stride[MAX_SP], dil[MAX_SP], lo[MAX_SP], hi[MAX_SP], out[MAX_SP];
    int64_t off[MAX_SP];   /* added to every read position (0 but in ConvTranspose's phases) */
    /* a spatial dim decided at run time: its input and output extents (in and out are their
     * bounds); NULL where fixed */
    Expr *din[MAX_SP], *dout[MAX_SP];
    /* its pads where they depend on the extent (auto_pad SAME with a stride: lo and hi are
     * those at the bound); NULL where lo and hi hold */
    Expr *dlo[MAX_SP], *dhi[MAX_SP];
    int ceil_rt[MAX_SP];   /* ceil_mode over it: a last window may end past the end padding */
} Geom;

/* The output axes' run-time extents: dim 0 as x's (the batch), dims 2.. as g's. */
static void geom_axes_dyn(const Geom *g, const Tensor *x, IterVar **ax)
{
    ax[0]->dyn = x->dyn[0];
    for (int i = 0; i < g->ns; i++)
        ax[2 + i]->dyn = g->dout[i];
}

static int fwd_geom(OpCtx *c, const Tensor *x, const int64_t *k, int ceil_mode, Geom *g)
{
    int ns = x->ndim - 2;
    memset(g, 0, sizeof *g);
    g->ns = ns;
    for (int i = 0; i < ns; i++) {
        g->in[i] = x->shape[2 + i];
        g->din[i] = x->dyn[2 + i];
        g->k[i] = k[i];
    }
    if (op_spatial_attr(c, "strides", ns, 1, 1, g->stride) || op_spatial_attr(c, "dilations", ns, 1, 1, g->dil) ||
        op_pads_attr(c, ns, g->lo, g->hi, 0))
        return -1;
    const char *ap = op_attr_str(c, "auto_pad", "NOTSET");
    int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    int valid = !strcmp(ap, "VALID");
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") && ap[0])
        return ir_fail("%s: unknown auto_pad '%s' (NOTSET, SAME_UPPER, SAME_LOWER or VALID)", c->op, ap);
    for (int i = 0; i < ns; i++) {
        int64_t ek = (g->k[i] - 1) * g->dil[i] + 1, in = g->in[i], s = g->stride[i];
        if (same_upper || same_lower) {
            g->out[i] = ceil_div(in, s);
            int64_t total = (g->out[i] - 1) * s + ek - in;
            if (total < 0)
                total = 0;
            g->lo[i] = same_upper ? total / 2 : total - total / 2;
            g->hi[i] = total - g->lo[i];
        } else {
            if (valid)
                g->lo[i] = g->hi[i] = 0;
            int64_t span = in + g->lo[i] + g->hi[i] - ek;
            if (span < 0)
                return ir_fail("%s: the window (%lld with dilation) is larger than the padded input (%lld) in "
                               "spatial dimension %d",
                               c->op, (long long)ek, (long long)(in + g->lo[i] + g->hi[i]), i);
            g->out[i] = (ceil_mode && !valid ? ceil_div(span, s) : span / s) + 1;
            /* ceil mode: a last window that would start in the end padding is dropped */
            if (ceil_mode && !valid && g->out[i] > 1 && (g->out[i] - 1) * s >= in + g->lo[i])
                g->out[i]--;
        }
        if (!g->din[i])
            continue;
        /* decided at run time: the same arithmetic on the extent */
        if ((same_upper || same_lower) && s == 1) {
            g->dout[i] = g->din[i];   /* the pads are ek - 1 whatever the extent */
            continue;
        }
        if (same_upper || same_lower) {
            /* out = ceil(E / s); the pads (out - 1) s + ek - E in all depend on E mod s */
            Expr *E = g->din[i];
            g->dout[i] = ir_simplify(ir_bin(OP_FLOORDIV, ir_add(E, ir_idx(s - 1)), ir_idx(s)), NULL);
            Expr *reach = ir_add(ir_mul(ir_add(g->dout[i], ir_idx(-1)), ir_idx(s)), ir_idx(ek));
            Expr *total = ir_simplify(ir_bin(OP_MAX, ir_idx(0), ir_sub(reach, E)), NULL);
            int64_t tv;
            if (ir_expr_is_const(total, &tv))
                continue;   /* the pads at the bound hold at every extent */
            Expr *half = ir_bin(OP_FLOORDIV, total, ir_idx(2));
            g->dlo[i] = ir_simplify(same_upper ? half : ir_sub(total, half), NULL);
            g->dhi[i] = ir_simplify(ir_sub(total, g->dlo[i]), NULL);
            continue;
        }
        int64_t lo, hi;
        if (!ir_const_bounds(g->din[i], NULL, &lo, &hi))
            ir_die("a run-time dim without a range");
        if (lo + g->lo[i] + g->hi[i] - ek < 0)
            return ir_fail("%s: the window (%lld with dilation) is larger than the padded input in spatial dimension "
                           "%d at its smallest run-time extent (%lld); raise the range's lower end",
                           c->op, (long long)ek, i, (long long)lo);
        Expr *span = ir_add(g->din[i], ir_idx(g->lo[i] + g->hi[i] - ek));
        if (ceil_mode && !valid && s != 1) {
            /* ceil(span / s) + 1 windows, but none starting in the end padding: at most
             * (E + lo - 1) / s + 1 */
            Expr *up = ir_add(ir_bin(OP_FLOORDIV, ir_add(span, ir_idx(s - 1)), ir_idx(s)), ir_idx(1));
            Expr *most = ir_add(ir_bin(OP_FLOORDIV, ir_add(g->din[i], ir_idx(g->lo[i] - 1)), ir_idx(s)), ir_idx(1));
            g->dout[i] = ir_simplify(ir_bin(OP_MIN, up, most), NULL);
            g->ceil_rt[i] = 1;
            continue;
        }
        g->dout[i] = ir_simplify(ir_add(ir_bin(OP_FLOORDIV, span, ir_idx(s)), ir_idx(1)), NULL);
    }
    return 0;
}

/* The last input position the windows of g read in spatial dimension i (input
 * coordinates: in or beyond when they reach into the end padding). */
static int64_t window_last(const Geom *g, int i)
{
    return (g->out[i] - 1) * g->stride[i] + (g->k[i] - 1) * g->dil[i] - g->lo[i];
}

/* x padded on the spatial dimensions: lo[i] positions before the input and up to size[i]
 * in all; the padding reads `fill`. x itself when nothing is added. A dim decided at run
 * time (x->dyn) has the padded extent dsize[i] (dsize may be NULL when none is), and
 * dlo[i] positions before it where dlo (may be NULL) has them (lo[i]: at the bound). */
static Tensor *pad_to(OpCtx *c, Tensor *x, int ns, const int64_t *lo, Expr *const *dlo, const int64_t *size,
                      Expr *const *dsize, Expr *fill)
{
    int64_t shape[KG_MAX_DIMS];
    int need = 0;
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int i = 0; i < ns; i++) {
        shape[2 + i] = size[i];
        if (lo[i] > 0 || size[i] > x->shape[2 + i] || (x->dyn[2 + i] && !ir_expr_equal(dsize[i], x->dyn[2 + i])) ||
            (dlo && dlo[i]))
            need = 1;
    }
    if (!need)
        return x;
    int nd = 2 + ns;
    IterVar **ax = op_axes(nd, shape);
    ax[0]->dyn = x->dyn[0];
    for (int i = 0; i < ns; i++)
        ax[2 + i]->dyn = x->dyn[2 + i] ? dsize[i] : NULL;
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *cond = NULL;
    op_axis_exprs(ax, nd, idx);
    xi[0] = idx[0];
    xi[1] = idx[1];
    for (int i = 0; i < ns; i++) {
        Expr *p = idx[2 + i];
        if (dlo && dlo[i])
            p = ir_sub(p, dlo[i]);
        else if (lo[i])
            p = ir_bin(OP_SUB, p, ir_idx(lo[i]));
        xi[2 + i] = p;
        if (x->dyn[2 + i])
            cond = and_(cond, ir_bin(OP_AND, ir_bin(OP_GE, p, ir_idx(0)), ir_bin(OP_LT, p, x->dyn[2 + i])));
        else if (lo[i] > 0 || size[i] > x->shape[2 + i])
            cond = and_(cond, in_range(p, 0, x->shape[2 + i]));
    }
    return op_emit(c, op_name(c, "pad"), nd, ax, ir_select(cond, op_read(x, xi), fill));
}

/* x padded on the spatial dimensions so that every window read of g is in range; the
 * padding reads `fill`. x itself when no window leaves it. */
static Tensor *pad_spatial(OpCtx *c, Tensor *x, const Geom *g, Expr *fill)
{
    int64_t size[MAX_SP];
    Expr *dsize[MAX_SP];
    for (int i = 0; i < g->ns; i++) {
        size[i] = window_last(g, i) + g->lo[i] + 1;
        /* run time: the windows read up to (out - 1) * stride + (k - 1) * dil, padded */
        dsize[i] = g->dout[i] ? ir_simplify(ir_add(ir_mul(ir_add(g->dout[i], ir_idx(-1)), ir_idx(g->stride[i])),
                                                   ir_idx((g->k[i] - 1) * g->dil[i] + 1)),
                                            NULL)
                              : NULL;
    }
    return pad_to(c, x, g->ns, g->lo, g->dlo, size, dsize, fill);
}

/* Is every window of g contiguous (no dilation) and holds at least one input position
 * (none lies wholly in the padding)? Then a window that reaches into the padding also
 * holds the input's edge, and a max or min over it may read the edge for each position in
 * the padding instead of the padding's identity: max(x, x) = x, the same result, with
 * the reduction reading x itself (clamped indices, no padded copy, no guard). */
static int windows_hit_input(const Geom *g)
{
    for (int i = 0; i < g->ns; i++)
        if (g->dil[i] != 1 || (g->din[i] && (g->lo[i] >= g->k[i] || g->hi[i] >= g->k[i] || g->dlo[i])))
            return 0;   /* at run time, a window ends at most hi past the input: hi < k keeps one in it */
    for (int i = 0; i < g->ns; i++)
        for (int64_t o = 0; o < g->out[i]; o++) {
            int64_t first = o * g->stride[i] - g->lo[i];   /* position of r = 0 */
            int64_t r = first >= 0 ? 0 : ceil_div(-first, g->dil[i]);
            if (r >= g->k[i] || first + r * g->dil[i] >= g->in[i])
                return 0;
        }
    return 1;
}

/* Reduce axes rk0.. over the window and the input indices o*stride + rk*dil + off they
 * read (in padded coordinates). idx holds the output indices (N, C, o...). */
static void window_axes(const Geom *g, Expr **idx, IterVar **rax, Expr **xi)
{
    for (int i = 0; i < g->ns; i++) {
        rax[i] = ir_itervar_new(ir_fmt("rk%d", i), g->k[i], IV_REDUCE);
        xi[2 + i] = lin(idx[2 + i], g->stride[i], g->k[i] > 1 ? ir_varref(rax[i]->var) : NULL, g->dil[i]);
        if (g->off[i])
            xi[2 + i] = ir_bin(OP_ADD, xi[2 + i], ir_idx(g->off[i]));
    }
}

/* ---------------------------------------------------------------- Conv */

/* Y[n, m, o...] = sum(rc, rk...: Xp[n, group(m)*C/g + rc, o*s + rk*d] * W[m, rc, rk...]) over
 * the padded input xp. out: output index or -1 for a temporary named after `what`. */
static Tensor *conv_reduce(OpCtx *c, Tensor *xp, Tensor *w, const Geom *g, int64_t group, const char *what, int out)
{
    int ns = g->ns, nd = ns + 2;
    int64_t C = xp->shape[1], M = w->shape[0], cg = C / group, mg = M / group;
    int64_t shape[KG_MAX_DIMS];
    shape[0] = xp->shape[0];
    shape[1] = M;
    for (int i = 0; i < ns; i++)
        shape[2 + i] = g->out[i];
    IterVar **ax = op_axes(nd, shape);
    geom_axes_dyn(g, xp, ax);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *wi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    IterVar *rax[KG_MAX_DIMS];
    rax[0] = ir_itervar_new("rc", cg, IV_REDUCE);
    window_axes(g, idx, rax + 1, xi);
    Expr *rc = ir_varref(rax[0]->var);
    xi[0] = idx[0];
    xi[1] = group == 1 ? rc : lin(ir_bin(OP_DIV, idx[1], ir_idx(mg)), cg, rc, 1);
    wi[0] = idx[1];
    wi[1] = rc;
    for (int i = 0; i < ns; i++)
        wi[2 + i] = ir_varref(rax[1 + i]->var);
    if (!ir_dtype_is_storage(xp->dtype)) {
        Expr *body = ir_reduce(RED_SUM, ir_binary(OP_MUL, op_read(xp, xi), op_read(w, wi)), rax, 1 + ns);
        return emit(c, out, what, nd, ax, body);
    }
    /* f16, bf16: the sum in f32, rounded once (as MatMul: an f16 accumulator loses a bit a step) */
    Expr *prod = ir_binary(OP_MUL, ir_cast(DT_F32, op_read(xp, xi)), ir_cast(DT_F32, op_read(w, wi)));
    Tensor *sum = emit(c, -1, ir_fmt("%s32", what), nd, ax, ir_reduce(RED_SUM, prod, rax, 1 + ns));
    if (!sum)
        return NULL;
    ax = op_axes(nd, shape);
    op_axis_exprs(ax, nd, idx);
    return emit(c, out, what, nd, ax, ir_cast(xp->dtype, op_read(sum, idx)));
}

/* A 1-D conv with a long or strided window (an STFT's 257 or 514 filters of 512 taps at
 * stride 160, a waveform front end) vectorizes badly along its output positions: each
 * lane reads the input `stride` apart, and a filter's taps are summed one output at a
 * time. It is built instead with the output channels innermost,
 *     Yt[n, o, m] = sum(rc, rk: Xp[n, rc, o*s + rk*d] * Wt[rc, rk, m])
 * over the weights transposed at compile time (Wt, its channels padded with zeros to a
 * multiple of 16), which the default register tile vectorizes along m, a few output
 * positions unrolled, reading the input as scalars over its contiguous taps; then
 * Y[n, m, o] = Yt[n, o, m] (+ bias[m]). For constant float weights, group 1, at least 16
 * output channels and two outputs, with stride > 1 or 16 taps or more. */
enum { CONV1D_MIN_CHANNELS = 16, CONV1D_MIN_TAPS = 16, CONV1D_CHANNEL_PAD = 16 };

static int conv1d_channels_last(const Tensor *w, const Geom *g, int64_t group)
{
    return g->ns == 1 && group == 1 && ir_dtype_is_float(w->dtype) && !ir_dtype_is_storage(w->dtype) &&
           w->kind == T_CONSTANT && w->data && w->shape[0] >= CONV1D_MIN_CHANNELS && g->out[0] >= 2 &&
           (g->stride[0] > 1 || g->k[0] >= CONV1D_MIN_TAPS);
}

static Tensor *conv1d_by_channels(OpCtx *c, Tensor *xp, Tensor *w, Tensor *bias, const Geom *g, int out)
{
    int64_t M = w->shape[0], C = w->shape[1], K = w->shape[2];
    int64_t Mp = (M + CONV1D_CHANNEL_PAD - 1) / CONV1D_CHANNEL_PAD * CONV1D_CHANNEL_PAD;
    size_t esz = (size_t)ir_dtype_bytes(w->dtype);
    unsigned char *buf = calloc((size_t)(C * K * Mp) * esz + 1, 1);
    if (!buf)
        ir_die("out of memory");
    for (int64_t m = 0; m < M; m++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t k = 0; k < K; k++)
                memcpy(buf + (size_t)((ch * K + k) * Mp + m) * esz,
                       (const unsigned char *)w->data + (size_t)((m * C + ch) * K + k) * esz, esz);
    int64_t wshape[3] = {C, K, Mp}, shape[3] = {xp->shape[0], g->out[0], Mp};
    Tensor *wt = op_const_tensor(c, "wt", w->dtype, 3, wshape, buf);
    free(buf);
    if (!wt)
        return NULL;
    IterVar **ax = op_axes(3, shape), *rax[2];
    ax[0]->dyn = xp->dyn[0];
    ax[1]->dyn = g->dout[0];
    Expr *idx[3], *xi[3];
    op_axis_exprs(ax, 3, idx);
    Expr *nmo[3] = {idx[0], idx[2], idx[1]};   /* (n, m, o), window_axes' order */
    rax[0] = ir_itervar_new("rc", C, IV_REDUCE);
    window_axes(g, nmo, rax + 1, xi);
    Expr *rc = ir_varref(rax[0]->var), *rk = ir_varref(rax[1]->var);
    xi[0] = idx[0];
    xi[1] = rc;
    Expr *wi[3] = {rc, rk, idx[2]};
    Tensor *yt = emit(c, -1, "conv", 3, ax,
                      ir_reduce(RED_SUM, ir_binary(OP_MUL, op_read(xp, xi), op_read(wt, wi)), rax, 2));
    if (!yt)
        return NULL;
    int64_t yshape[3] = {xp->shape[0], M, g->out[0]};
    ax = op_axes(3, yshape);
    op_axis_exprs(ax, 3, idx);
    Expr *ti[3] = {idx[0], idx[2], idx[1]}, *body = op_read(yt, ti);
    if (bias)
        body = ir_binary(OP_ADD, body, op_read(bias, &idx[1]));
    return emit(c, out, bias ? "bias" : "conv_t", 3, ax, body);
}

/* y[n, m, ...] + b[m] as output `out` */
static Tensor *add_channel_bias(OpCtx *c, Tensor *y, Tensor *b, int out)
{
    IterVar **ax = op_axes(y->ndim, y->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, y->ndim, idx);
    Expr *bi = idx[1];
    Expr *body = ir_binary(OP_ADD, op_read(y, idx), b->ndim == 1 ? op_read(b, &bi) : op_read(b, idx));
    if (!body) {
        ir_fail("%s: bias: %s", c->op, ir_errmsg());
        return NULL;
    }
    return emit(c, out, "bias", y->ndim, ax, body);
}

/* Shared by Conv, ConvInteger and QLinearConv (quant.c prepares its operands and calls
 * this): checks shapes against the attributes, pads x with `fill` and convolves. bias may
 * be NULL. */
Tensor *op_nn_conv(OpCtx *c, Tensor *x, Tensor *w, Tensor *bias, Expr *fill, int out);

Tensor *op_nn_conv(OpCtx *c, Tensor *x, Tensor *w, Tensor *bias, Expr *fill, int out)
{
    int ns = x->ndim - 2;
    if (w->ndim != x->ndim) {
        ir_fail("%s: W has rank %d, X rank %d; they must match", c->op, w->ndim, x->ndim);
        return NULL;
    }
    if (x->dtype != w->dtype) {
        ir_fail("%s: X has type %s and W %s", c->op, ir_dtype_name(x->dtype), ir_dtype_name(w->dtype));
        return NULL;
    }
    int64_t group = op_attr_int(c, "group", 1), k[MAX_SP];
    int64_t C = x->shape[1], M = w->shape[0];
    if (group < 1 || C % group || M % group) {
        ir_fail("%s: group %lld must divide the input channels (%lld) and the output channels (%lld)", c->op,
                (long long)group, (long long)C, (long long)M);
        return NULL;
    }
    if (w->shape[1] * group != C) {
        ir_fail("%s: W has %lld input channels per group; X has %lld channels in %lld groups", c->op,
                (long long)w->shape[1], (long long)C, (long long)group);
        return NULL;
    }
    if (op_spatial_attr(c, "kernel_shape", ns, 1, 1, k))
        return NULL;
    for (int i = 0; i < ns; i++) {
        if (op_attr(c, "kernel_shape") && k[i] != w->shape[2 + i]) {
            ir_fail("%s: kernel_shape[%d] is %lld but W has %lld", c->op, i, (long long)k[i],
                    (long long)w->shape[2 + i]);
            return NULL;
        }
        k[i] = w->shape[2 + i];
    }
    if (bias && (bias->ndim != 1 || bias->shape[0] != M || bias->dtype != x->dtype)) {
        ir_fail("%s: B must be a vector of %lld %s values", c->op, (long long)M, ir_dtype_name(x->dtype));
        return NULL;
    }
    Geom g;
    if (fwd_geom(c, x, k, 0, &g))
        return NULL;
    Tensor *xp = pad_spatial(c, x, &g, fill);
    if (!xp)
        return NULL;
    if (conv1d_channels_last(w, &g, group))
        return conv1d_by_channels(c, xp, w, bias, &g, out);
    Tensor *y = conv_reduce(c, xp, w, &g, group, "conv", bias ? -1 : out);
    if (!y || !bias)
        return y;
    return add_channel_bias(c, y, bias, out);
}

static int conv(OpCtx *c)
{
    Tensor *x = nc_input(c, 0, "X"), *w = op_input(c, 1, "W");
    if (!x || !w)
        return -1;
    Tensor *b = op_has_input(c, 2) ? c->in[2] : NULL;
    return op_nn_conv(c, x, w, b, op_lit(0, x->dtype), 0) ? 0 : -1;
}

/* ---------------------------------------------------------------- ConvTranspose */

/* ConvTranspose's attributes and shapes checked, its geometry in g: output position o
 * gathers input position i through tap r where i*s + r*d - lo == o. cg, mg: input and
 * output channels per group. */
static int convt_geom(OpCtx *c, Tensor *x, Tensor *w, Tensor *b, Geom *g, int64_t *cg, int64_t *mg)
{
    int ns = x->ndim - 2, nd = x->ndim;
    if (w->ndim != nd)
        return ir_fail("%s: W has rank %d, X rank %d; they must match", c->op, w->ndim, nd);
    if (x->dtype != w->dtype)
        return ir_fail("%s: X has type %s and W %s", c->op, ir_dtype_name(x->dtype), ir_dtype_name(w->dtype));
    int64_t group = op_attr_int(c, "group", 1), C = x->shape[1];
    if (group < 1 || C % group)
        return ir_fail("%s: group %lld must divide the input channels (%lld)", c->op, (long long)group, (long long)C);
    if (w->shape[0] != C)
        return ir_fail("%s: W has %lld input channels, X %lld", c->op, (long long)w->shape[0], (long long)C);
    *cg = C / group;
    *mg = w->shape[1];
    int64_t M = *mg * group;
    if (b && (b->ndim != 1 || b->shape[0] != M || b->dtype != x->dtype))
        return ir_fail("%s: B must be a vector of %lld %s values", c->op, (long long)M, ir_dtype_name(x->dtype));

    memset(g, 0, sizeof *g);
    g->ns = ns;
    int64_t k[MAX_SP], opad[MAX_SP], oshape[KG_MAX_DIMS + 1];
    if (op_spatial_attr(c, "kernel_shape", ns, 1, 1, k) || op_spatial_attr(c, "strides", ns, 1, 1, g->stride) ||
        op_spatial_attr(c, "dilations", ns, 1, 1, g->dil) || op_spatial_attr(c, "output_padding", ns, 0, 0, opad) ||
        op_pads_attr(c, ns, g->lo, g->hi, 1))
        return -1;
    for (int i = 0; i < ns; i++) {
        if (op_attr(c, "kernel_shape") && k[i] != w->shape[2 + i])
            return ir_fail("%s: kernel_shape[%d] is %lld but W has %lld", c->op, i, (long long)k[i],
                           (long long)w->shape[2 + i]);
        g->k[i] = w->shape[2 + i];
        g->in[i] = x->shape[2 + i];
    }
    int nos = op_attr_ints(c, "output_shape", oshape, KG_MAX_DIMS + 1);
    if (nos >= 0 && nos != ns && nos != nd)
        return ir_fail("%s: output_shape has %d values, expected %d", c->op, nos, ns);
    const char *ap = op_attr_str(c, "auto_pad", "NOTSET");
    int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    if (!same_upper && !same_lower && strcmp(ap, "VALID") && strcmp(ap, "NOTSET") && ap[0])
        return ir_fail("%s: unknown auto_pad '%s' (NOTSET, SAME_UPPER, SAME_LOWER or VALID)", c->op, ap);
    for (int i = 0; i < ns; i++) {
        int64_t full = g->stride[i] * (g->in[i] - 1) + opad[i] + (g->k[i] - 1) * g->dil[i] + 1;
        if (nos >= 0 || same_upper || same_lower) {
            /* the output size is given (or in*stride); the pads follow from it */
            int64_t o = nos >= 0 ? oshape[nos - ns + i] : g->in[i] * g->stride[i];
            int64_t total = full - o;
            g->lo[i] = same_upper ? floor_div(total, 2) : total - floor_div(total, 2);
            g->hi[i] = total - g->lo[i];
            g->out[i] = o;
        } else {
            if (!strcmp(ap, "VALID"))
                g->lo[i] = g->hi[i] = 0;
            g->out[i] = full - g->lo[i] - g->hi[i];
        }
        if (g->out[i] < 1)
            return ir_fail("%s: output spatial dimension %d would be %lld", c->op, i, (long long)g->out[i]);
    }
    return 0;
}

/* The general form, for what the phases do not cover:
 * Y[n, m, o] = sum(rc, rk: X[n, group(m)*C/g + rc, i] * W[group(m)*C/g + rc, m % (M/g), rk])
 * over the (i, rk) with i*s + rk*d - lo == o: the input position is (o + lo - rk*d) / s
 * where that divides exactly and lands inside X (a guard inside the sum). */
static Tensor *convt_guarded(OpCtx *c, Tensor *x, Tensor *w, const Geom *g, int64_t cg, int64_t mg, int out)
{
    int ns = g->ns, nd = ns + 2;
    int64_t group = x->shape[1] / cg, shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = mg * group;
    for (int i = 0; i < ns; i++)
        shape[2 + i] = g->out[i];
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *wi[KG_MAX_DIMS], *cond = NULL;
    op_axis_exprs(ax, nd, idx);
    IterVar *rax[KG_MAX_DIMS];
    rax[0] = ir_itervar_new("rc", cg, IV_REDUCE);
    Expr *rc = ir_varref(rax[0]->var);
    Expr *ch = group == 1 ? rc : lin(ir_bin(OP_DIV, idx[1], ir_idx(mg)), cg, rc, 1);
    xi[0] = idx[0];
    xi[1] = ch;
    wi[0] = ch;
    wi[1] = group == 1 ? idx[1] : ir_bin(OP_MOD, idx[1], ir_idx(mg));
    for (int i = 0; i < ns; i++) {
        rax[1 + i] = ir_itervar_new(ir_fmt("rk%d", i), g->k[i], IV_REDUCE);
        Expr *rk = ir_varref(rax[1 + i]->var);
        wi[2 + i] = rk;
        /* t = o + lo - rk*d: the input position times the stride */
        Expr *t = idx[2 + i];
        if (g->lo[i])
            t = ir_bin(OP_ADD, t, ir_idx(g->lo[i]));
        if (g->k[i] > 1)
            t = ir_bin(OP_SUB, t, g->dil[i] == 1 ? rk : ir_bin(OP_MUL, rk, ir_idx(g->dil[i])));
        if (g->stride[i] == 1) {
            xi[2 + i] = t;
            cond = and_(cond, in_range(t, 0, g->in[i]));
        } else {
            xi[2 + i] = ir_bin(OP_FLOORDIV, t, ir_idx(g->stride[i]));
            cond = and_(cond, ir_bin(OP_AND, in_range(t, 0, g->in[i] * g->stride[i] - g->stride[i] + 1),
                                     ir_bin(OP_EQ, ir_bin(OP_FLOORMOD, t, ir_idx(g->stride[i])), ir_idx(0))));
        }
    }
    Expr *prod = ir_binary(OP_MUL, op_read(x, xi), op_read(w, wi));
    return emit(c, out, "convt", nd, ax, ir_reduce(RED_SUM, ir_select(cond, prod, op_lit(0, x->dtype)), rax, 1 + ns));
}

/* The phase (sub-pixel) form. Output position o = s*q + p of phase p gathers the taps r
 * with r*d = p + lo (mod s): none, or r = r0 + j*step (step = s / gcd(s, d)) for j in
 * [0, kp), which read input position i = q + c0 - j*(d / gcd(s, d)), c0 = (p + lo - r0*d) / s.
 * With the taps reversed (j' = kp - 1 - j) that is a stride-1 correlation, dilation
 * d / gcd, starting at input position base = c0 - (kp - 1)*(d / gcd) for q = 0: each
 * phase is a Conv (the layout pass blocks it, the schedule tiles it, no guard in the sum)
 * and the output interleaves the phases. */
#define CONVT_MAX_PHASES 64   /* more (large strides in 3-D): the guarded form */

typedef struct {
    int64_t qn;        /* the phase's output positions: q in [0, qn) */
    int64_t r0, kp;    /* its taps r0, r0 + step, ... (kp of them; 0: it reads nothing) */
    int64_t step, dil; /* the tap step, the dilation of its correlation */
    int64_t base;      /* the input position read at q = 0, j' = 0 */
} PhaseDim;


static void phase_dim(const Geom *g, int i, int64_t p, PhaseDim *ph)
{
    int64_t s = g->stride[i], d = g->dil[i], gd = op_gcd(s, d);
    memset(ph, 0, sizeof *ph);
    ph->qn = (g->out[i] - p + s - 1) / s;
    ph->step = s / gd;
    ph->dil = d / gd;
    for (int64_t r = 0; r < ph->step && r < g->k[i]; r++) {
        int64_t t = p + g->lo[i] - r * d;
        if (t - floor_div(t, s) * s == 0) {
            ph->r0 = r;
            ph->kp = (g->k[i] - r + ph->step - 1) / ph->step;
            ph->base = floor_div(t, s) - (ph->kp - 1) * ph->dil;
            return;
        }
    }
}

/* Phase number f (row-major over the per-dimension phase counts np) as per-dimension
 * phases; 0 when one of them reads nothing. */
static int phase_of(const Geom *g, const int64_t *np, int64_t f, PhaseDim *ph)
{
    int live = 1;
    for (int i = g->ns - 1; i >= 0; i--) {
        phase_dim(g, i, f % np[i], &ph[i]);
        live &= ph[i].kp > 0;
        f /= np[i];
    }
    return live;
}

/* The kernel of phases ph[0 .. nstack-1] (ns PhaseDims each, the same kp) as a Conv's,
 * the phases' output channels one after the other:
 *   Wp[f*M + m, rc, j'...] = W[group(m)*cg + rc, m % mg, r0(f) + (kp - 1 - j')*step ...];
 * a constant when W is, else a compute (one phase only). */
static Tensor *phase_weights(OpCtx *c, Tensor *w, const PhaseDim *ph, int nstack, int ns, int64_t cg, int64_t mg,
                             int64_t f)
{
    int nd = ns + 2;
    int64_t M = w->shape[0] / cg * mg, shape[KG_MAX_DIMS];
    shape[0] = M * nstack;
    shape[1] = cg;
    for (int i = 0; i < ns; i++)
        shape[2 + i] = ph[i].kp;
    const char *what = ir_fmt(nstack > 1 ? "w_phases" : "w_phase%lld", (long long)f);
    if (w->kind == T_CONSTANT && w->data && ir_dtype_is_float(w->dtype)) {
        int64_t n = 1;
        for (int d = 0; d < nd; d++)
            n *= shape[d];
        size_t esz = (size_t)ir_dtype_bytes(w->dtype);
        unsigned char *buf = malloc((size_t)n * esz + 1);
        if (!buf)
            ir_die("out of memory");
        for (int64_t e = 0; e < n; e++) {
            int64_t rest = e, src, j[KG_MAX_DIMS];
            for (int d = nd - 1; d >= 0; d--) {
                j[d] = rest % shape[d];
                rest /= shape[d];
            }
            const PhaseDim *pf = ph + j[0] / M * ns;
            int64_t m = j[0] % M;
            src = ((m / mg) * cg + j[1]) * mg + m % mg;
            for (int i = 0; i < ns; i++)
                src = src * w->shape[2 + i] + pf[i].r0 + (pf[i].kp - 1 - j[2 + i]) * pf[i].step;
            memcpy(buf + (size_t)e * esz, (const unsigned char *)w->data + (size_t)src * esz, esz);
        }
        Tensor *t = op_const_tensor(c, what, w->dtype, nd, shape, buf);
        free(buf);
        return t;
    }
    if (nstack > 1)
        ir_die("phase_weights: stacked phases need constant weights");
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS], *wi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    wi[0] = cg == w->shape[0] ? idx[1] : lin(ir_bin(OP_DIV, idx[0], ir_idx(mg)), cg, idx[1], 1);
    wi[1] = cg == w->shape[0] ? idx[0] : ir_bin(OP_MOD, idx[0], ir_idx(mg));
    for (int i = 0; i < ns; i++) {
        /* r0 + (kp - 1)*step - j'*step */
        Expr *r = ir_idx(ph[i].r0 + (ph[i].kp - 1) * ph[i].step);
        wi[2 + i] = ph[i].kp == 1 ? r : ir_bin(OP_SUB, r, lin(idx[2 + i], ph[i].step, NULL, 1));
    }
    return emit(c, -1, what, nd, ax, op_read(w, wi));
}

/* Y at output indices idx from the phases: phase (o0 % s0, ...) at (o0 / s0, ...), read
 * in ph[f] (NULL: the phase reads nothing) at channel m + choff[f]; dimension i and on,
 * phase number f so far. */
static Expr *interleave(Tensor **ph, const int64_t *choff, const Geom *g, const int64_t *np, Expr **idx, int i,
                        int64_t f, DType t)
{
    if (i == g->ns) {
        if (!ph[f])
            return op_lit(0, t);
        Expr *qi[KG_MAX_DIMS];
        qi[0] = idx[0];
        qi[1] = choff[f] ? ir_bin(OP_ADD, idx[1], ir_idx(choff[f])) : idx[1];
        for (int d = 0; d < g->ns; d++)
            qi[2 + d] = g->stride[d] == 1 ? idx[2 + d] : ir_bin(OP_DIV, idx[2 + d], ir_idx(g->stride[d]));
        return op_read(ph[f], qi);
    }
    Expr *e = interleave(ph, choff, g, np, idx, i + 1, f * np[i] + np[i] - 1, t);
    for (int64_t p = np[i] - 2; p >= 0; p--) {
        Expr *is_p = ir_bin(OP_EQ, ir_bin(OP_MOD, idx[2 + i], ir_idx(g->stride[i])), ir_idx(p));
        e = ir_select(is_p, interleave(ph, choff, g, np, idx, i + 1, f * np[i] + p, t), e);
    }
    return e;
}

/* The phase count per dimension (a phase for each residue of o mod s that occurs) in np
 * and the number of phases; 0 when there are more than CONVT_MAX_PHASES. */
static int64_t phase_counts(const Geom *g, int64_t *np)
{
    int64_t n = 1;
    for (int i = 0; i < g->ns; i++) {
        np[i] = g->stride[i] < g->out[i] ? g->stride[i] : g->out[i];
        if (n * np[i] > CONVT_MAX_PHASES)
            return 0;
        n *= np[i];
    }
    return n;
}

/* Can the phases ph (nph of ns PhaseDims) be one Conv with their output channels one
 * after the other (ConvTranspose's k a multiple of s, pads of s: every phase reads the same
 * window, only its taps differ)? Constant weights and one group only. */
static int phases_stack(const Tensor *w, int64_t group, const PhaseDim *ph, int64_t nph, int ns)
{
    if (nph < 2 || group != 1 || w->kind != T_CONSTANT || !w->data || !ir_dtype_is_float(w->dtype))
        return 0;
    for (int64_t f = 0; f < nph; f++)
        for (int i = 0; i < ns; i++) {
            const PhaseDim *a = &ph[f * ns + i], *b = &ph[i];
            if (!a->kp || a->kp != b->kp || a->base != b->base || a->qn != b->qn)
                return 0;
        }
    return 1;
}

/* The phase form (see above) as output `out` (or a temporary when out < 0). */
static Tensor *convt_phases(OpCtx *c, Tensor *x, Tensor *w, const Geom *g, int64_t cg, int64_t mg, int out)
{
    int ns = g->ns, nd = ns + 2, strided = 0;
    int64_t np[MAX_SP], nph = phase_counts(g, np), group = x->shape[1] / cg, M = mg * group;
    for (int i = 0; i < ns; i++)
        strided |= g->stride[i] > 1;
    PhaseDim *ph = ir_alloc(sizeof *ph * (size_t)(nph * ns));
    unsigned char *live = ir_alloc((size_t)nph);
    for (int64_t f = 0; f < nph; f++)
        live[f] = (unsigned char)phase_of(g, np, f, ph + f * ns);
    /* one copy of X padded for every phase: plo positions before it, size in all */
    int64_t plo[MAX_SP] = {0}, size[MAX_SP];
    for (int i = 0; i < ns; i++)
        size[i] = g->in[i];
    for (int64_t f = 0; f < nph; f++)
        for (int i = 0; live[f] && i < ns; i++) {
            const PhaseDim *pd = &ph[f * ns + i];
            int64_t last = pd->qn - 1 + pd->base + (pd->kp - 1) * pd->dil;
            if (-pd->base > plo[i])
                plo[i] = -pd->base;
            if (last + 1 > size[i])
                size[i] = last + 1;
        }
    for (int i = 0; i < ns; i++)
        size[i] += plo[i];
    Tensor *xp = pad_to(c, x, ns, plo, NULL, size, NULL, op_lit(0, x->dtype));
    if (!xp)
        return NULL;
    int stack = phases_stack(w, group, ph, nph, ns);
    Tensor **phase = ir_alloc(sizeof *phase * (size_t)nph);
    int64_t *choff = ir_alloc(sizeof *choff * (size_t)nph);
    for (int64_t f = 0; f < nph; f++) {
        if (!live[f])
            continue;
        if (stack && f > 0) {
            phase[f] = phase[0];
            choff[f] = f * M;
            continue;
        }
        const PhaseDim *pf = ph + f * ns;
        Geom pg;
        memset(&pg, 0, sizeof pg);
        pg.ns = ns;
        for (int i = 0; i < ns; i++) {
            pg.k[i] = pf[i].kp;
            pg.stride[i] = 1;
            pg.dil[i] = pf[i].dil;
            pg.out[i] = pf[i].qn;
            pg.off[i] = pf[i].base + plo[i];
        }
        Tensor *wp = phase_weights(c, w, pf, stack ? (int)nph : 1, ns, cg, mg, f);
        /* stride 1 everywhere: the one phase is the output */
        const char *what = !strided ? "conv" : stack ? "phases" : ir_fmt("phase%lld", (long long)f);
        phase[f] = wp ? conv_reduce(c, xp, wp, &pg, group, what, strided ? -1 : out) : NULL;
        if (!phase[f])
            return NULL;
        if (!strided)
            return phase[f];
    }
    int64_t shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = M;
    for (int i = 0; i < ns; i++)
        shape[2 + i] = g->out[i];
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    return emit(c, out, "convt", nd, ax, interleave(phase, choff, g, np, idx, 0, 0, x->dtype));
}

static int conv_transpose(OpCtx *c)
{
    Tensor *x = nc_input(c, 0, "X"), *w = op_input(c, 1, "W");
    if (!x || !w)
        return -1;
    Tensor *b = op_has_input(c, 2) ? c->in[2] : NULL;
    Geom g;
    int64_t cg = 1, mg = 1, np[MAX_SP];
    if (convt_geom(c, x, w, b, &g, &cg, &mg))
        return -1;
    int out = b ? -1 : 0;
    Tensor *y = phase_counts(&g, np) ? convt_phases(c, x, w, &g, cg, mg, out) : convt_guarded(c, x, w, &g, cg, mg, out);
    if (!y || (b && !add_channel_bias(c, y, b, 0)))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- pooling */

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } PoolKind;

/* LpPool's p: an int, a float in opset 1 (whole numbers only here). */
static int lp_order(OpCtx *c, int64_t *p)
{
    const OpAttr *a = op_attr(c, "p");
    *p = 2;
    if (a && a->kind == OP_ATTR_FLOAT) {
        if (a->f != floorf(a->f))
            return ir_fail("%s: p = %g is not supported (whole numbers only)", c->op, (double)a->f);
        *p = (int64_t)a->f;
    } else if (a) {
        *p = a->i;
    }
    if (*p < 1)
        return ir_fail("%s: p must be at least 1, got %lld", c->op, (long long)*p);
    return 0;
}

/* The geometry of a pooling node: kernel_shape is required. */
static int pool_geom(OpCtx *c, Tensor *x, Geom *g)
{
    int ns = x->ndim - 2;
    int64_t k[MAX_SP];
    if (!op_attr(c, "kernel_shape"))
        return ir_fail("%s: attribute kernel_shape is required", c->op);
    if (op_spatial_attr(c, "kernel_shape", ns, 1, 1, k))
        return -1;
    int64_t ceil_mode = op_attr_int(c, "ceil_mode", 0);
    return fwd_geom(c, x, k, ceil_mode != 0, g);
}

/* The number of window positions of output position o (dimension i) that count for an
 * average: inside the input, or also inside the pads. */
static int64_t window_count(const Geom *g, int i, int64_t o, int include_pad)
{
    int64_t lo = include_pad ? -g->lo[i] : 0, hi = include_pad ? g->in[i] + g->hi[i] : g->in[i], n = 0;
    for (int64_t r = 0; r < g->k[i]; r++) {
        int64_t p = o * g->stride[i] + r * g->dil[i] - g->lo[i];
        n += p >= lo && p < hi;
    }
    return n;
}

/* y / count over spatial dims decided at run time whose windows' counts depend on the
 * extent (the padding they cut into, a ceil-mode window past the end padding): the count
 * computed in the kernel, per dim the window [start, start + k) cut to [first, end), the
 * input (and the pads, with count_include_pad). Windows without dilation only. */
static int avg_divide_rt(OpCtx *c, Tensor *sum, const Geom *g, int include_pad)
{
    int ns = g->ns, nd = ns + 2;
    IterVar **ax = op_axes(nd, sum->shape);
    Expr *idx[KG_MAX_DIMS], *count = NULL;
    op_axis_exprs(ax, nd, idx);
    for (int i = 0; i < ns; i++) {
        if (g->dil[i] != 1)
            return ir_fail("%s: dilations over spatial dimension %d, which is decided at run time, with padding "
                           "that depends on it (not supported)", c->op, i);
        if (g->lo[i] >= g->k[i] || g->hi[i] >= g->k[i])
            return ir_fail("%s: pads as large as the window over spatial dimension %d, which is decided at run "
                           "time (not supported)", c->op, i);
        Expr *E = g->din[i] ? g->din[i] : ir_idx(g->in[i]);
        Expr *lo = g->dlo[i] ? g->dlo[i] : ir_idx(g->lo[i]), *hi = g->dhi[i] ? g->dhi[i] : ir_idx(g->hi[i]);
        Expr *start = ir_sub(ir_mul(idx[2 + i], ir_idx(g->stride[i])), lo);
        Expr *first = include_pad ? ir_un(UN_NEG, lo) : ir_idx(0), *end = include_pad ? ir_add(E, hi) : E;
        Expr *ci = ir_sub(ir_bin(OP_MIN, ir_add(start, ir_idx(g->k[i])), end), ir_bin(OP_MAX, start, first));
        count = count ? ir_mul(count, ci) : ci;
    }
    Expr *den = ir_cast(sum->dtype, ir_simplify(count, NULL));
    return op_emit_out(c, 0, nd, ax, ir_binary(OP_DIV, op_read(sum, idx), den)) ? 0 : -1;
}

/* y / count, where the count of an average window depends on its position only where
 * padding cuts into it: then it is a constant tensor over the output's spatial shape. */
static int avg_divide(OpCtx *c, Tensor *sum, const Geom *g, int include_pad)
{
    int ns = g->ns, nd = ns + 2, uniform = 1;
    int64_t n = 1, first = 1;
    for (int i = 0; i < ns; i++)
        if (g->din[i] && (g->dlo[i] || g->ceil_rt[i] || (!include_pad && (g->lo[i] || g->hi[i]))))
            return avg_divide_rt(c, sum, g, include_pad);
    for (int i = 0; i < ns; i++) {
        n *= g->out[i];
        first *= window_count(g, i, 0, include_pad);
    }
    double *cnt = ir_alloc(sizeof *cnt * (size_t)n);
    for (int64_t e = 0; e < n; e++) {
        int64_t rem = e, v = 1;
        for (int i = ns - 1; i >= 0; i--) {
            v *= window_count(g, i, rem % g->out[i], include_pad);
            rem /= g->out[i];
        }
        if (v < 1)
            return ir_fail("%s: an output window holds no input element", c->op);
        cnt[e] = (double)v;
        uniform &= v == first;
    }
    IterVar **ax = op_axes(nd, sum->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    Expr *den;
    if (uniform) {
        den = op_lit((double)first, sum->dtype);
    } else {
        void *data = cnt;
        if (sum->dtype == DT_F32) {
            float *f = ir_alloc(sizeof *f * (size_t)n);
            for (int64_t e = 0; e < n; e++)
                f[e] = (float)cnt[e];
            data = f;
        }
        Tensor *t = op_const_tensor(c, "count", sum->dtype, ns, g->out, data);
        if (!t)
            return -1;
        den = op_read(t, idx + 2);
    }
    return op_emit_out(c, 0, nd, ax, ir_binary(OP_DIV, op_read(sum, idx), den)) ? 0 : -1;
}

/* The flat position of x[n, c, p...] as MaxPool's Indices count it (row- or column-major
 * spatial order), in i64. */
static Expr *flat_index(const Tensor *x, Expr **xi, int column_major)
{
    int nd = x->ndim;
    int64_t plane = 1;
    for (int d = 2; d < nd; d++)
        plane *= x->shape[d];
    Expr *nc = ir_bin(OP_ADD, ir_bin(OP_MUL, ir_cast(DT_I64, xi[0]), ir_int(x->shape[1], DT_I64)),
                      ir_cast(DT_I64, xi[1]));
    Expr *f = ir_bin(OP_MUL, nc, ir_int(plane, DT_I64));
    int64_t stride = 1;
    for (int k = 0; k < nd - 2; k++) {
        int d = column_major ? 2 + k : nd - 1 - k;
        f = ir_bin(OP_ADD, f, ir_bin(OP_MUL, ir_cast(DT_I64, xi[d]), ir_int(stride, DT_I64)));
        stride *= x->shape[d];
    }
    return f;
}

/* MaxPool's Indices: the first window position holding the maximum y. */
static int max_indices(OpCtx *c, Tensor *x, Tensor *y, const Geom *g)
{
    int64_t order = op_attr_int(c, "storage_order", 0);
    if (order != 0 && order != 1)
        return ir_fail("%s: storage_order must be 0 or 1, got %lld", c->op, (long long)order);
    int nd = x->ndim;
    IterVar **ax = op_axes(nd, y->shape);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *valid = NULL;
    op_axis_exprs(ax, nd, idx);
    IterVar *rax[KG_MAX_DIMS];
    window_axes(g, idx, rax, xi);
    xi[0] = idx[0];
    xi[1] = idx[1];
    for (int i = 0; i < g->ns; i++) {
        if (g->lo[i])
            xi[2 + i] = ir_bin(OP_SUB, xi[2 + i], ir_idx(g->lo[i]));
        if (g->lo[i] > 0 || window_last(g, i) >= g->in[i])
            valid = and_(valid, in_range(xi[2 + i], 0, g->in[i]));
    }
    Expr *none = ir_int(INT64_MAX, DT_I64);
    Expr *hit = ir_select(ir_bin(OP_EQ, op_read(x, xi), op_read(y, idx)), flat_index(x, xi, order == 1), none);
    if (valid)
        hit = ir_select(valid, hit, none);
    return op_emit_out(c, 1, nd, ax, ir_reduce(RED_MIN, hit, rax, g->ns)) ? 0 : -1;
}

static int pool(OpCtx *c, PoolKind kind)
{
    Tensor *x = nc_input(c, 0, "X");
    if (!x)
        return -1;
    DType t = x->dtype;
    if (kind != POOL_MAX && !ir_dtype_is_float(t))
        return ir_fail("%s: input type %s is not supported (float types only)", c->op, ir_dtype_name(t));
    if (t == DT_BOOL)
        return ir_fail("%s: bool input is not supported", c->op);
    if (ir_dtype_is_storage(t))
        return ir_fail("%s: input type %s is not supported", c->op, ir_dtype_name(t));
    Geom g;
    int64_t p = 2;
    if (pool_geom(c, x, &g) || (kind == POOL_LP && lp_order(c, &p)))
        return -1;
    Expr *fill = kind == POOL_MAX ? ir_reduce_identity(RED_MAX, t) : op_lit(0, t);
    int clamp = kind == POOL_MAX && windows_hit_input(&g);
    Tensor *xp = clamp ? x : pad_spatial(c, x, &g, fill);
    if (!xp)
        return -1;
    int nd = x->ndim;
    int64_t shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int i = 0; i < g.ns; i++)
        shape[2 + i] = g.out[i];
    IterVar **ax = op_axes(nd, shape);
    geom_axes_dyn(&g, x, ax);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    IterVar *rax[KG_MAX_DIMS];
    window_axes(&g, idx, rax, xi);
    xi[0] = idx[0];
    xi[1] = idx[1];
    for (int i = 0; clamp && i < g.ns; i++) {
        /* the max pool reads x at the nearest input position (windows_hit_input) */
        if (g.lo[i])
            xi[2 + i] = ir_bin(OP_MAX, ir_bin(OP_SUB, xi[2 + i], ir_idx(g.lo[i])), ir_idx(0));
        if (g.din[i])
            xi[2 + i] = ir_bin(OP_MIN, xi[2 + i], ir_add(g.din[i], ir_idx(-1)));
        else if (window_last(&g, i) >= g.in[i])
            xi[2 + i] = ir_bin(OP_MIN, xi[2 + i], ir_idx(g.in[i] - 1));
    }
    Expr *v = op_read(xp, xi);
    if (kind == POOL_MAX) {
        Tensor *y = op_emit_out(c, 0, nd, ax, ir_reduce(RED_MAX, v, rax, g.ns));
        if (!y)
            return -1;
        if (want_output(c, 1) && ir_tensor_is_dynamic(x))
            return ir_fail("%s: output Indices of an input with dims decided at run time is not supported yet",
                           c->op);
        return want_output(c, 1) ? max_indices(c, x, y, &g) : 0;
    }
    if (kind == POOL_LP) {
        Expr *a = ir_mathcall(FN_ABS, &v, 1);
        Expr *pw[2] = {a, op_lit((double)p, t)};
        Expr *term = p == 1 ? a : p == 2 ? ir_bin(OP_MUL, v, v) : ir_mathcall(FN_POW, pw, 2);
        Tensor *s = op_emit(c, op_name(c, "sum"), nd, ax, ir_reduce(RED_SUM, term, rax, g.ns));
        if (!s)
            return -1;
        IterVar **ax2 = op_axes(nd, shape);
        op_axis_exprs(ax2, nd, idx);
        Expr *sv = op_read(s, idx), *root[2] = {sv, op_lit(1.0 / (double)p, t)};
        Expr *body = p == 1 ? sv : p == 2 ? ir_mathcall(FN_SQRT, &sv, 1) : ir_mathcall(FN_POW, root, 2);
        return op_emit_out(c, 0, nd, ax2, body) ? 0 : -1;
    }
    Tensor *s = op_emit(c, op_name(c, "sum"), nd, ax, ir_reduce(RED_SUM, v, rax, g.ns));
    if (!s)
        return -1;
    return avg_divide(c, s, &g, op_attr_int(c, "count_include_pad", 0) != 0);
}

static int max_pool(OpCtx *c) { return pool(c, POOL_MAX); }
static int average_pool(OpCtx *c) { return pool(c, POOL_AVG); }
static int lp_pool(OpCtx *c) { return pool(c, POOL_LP); }

/* Global pools: one window over all spatial dimensions; the output keeps them as 1s. */
static int global_pool(OpCtx *c, PoolKind kind)
{
    Tensor *x = nc_input(c, 0, "X");
    if (!x)
        return -1;
    DType t = x->dtype;
    if ((kind != POOL_MAX && !ir_dtype_is_float(t)) || t == DT_BOOL || ir_dtype_is_storage(t))
        return ir_fail("%s: input type %s is not supported", c->op, ir_dtype_name(t));
    int nd = x->ndim, ns = nd - 2;
    int64_t p = 2, shape[KG_MAX_DIMS], n = 1;
    if (kind == POOL_LP && lp_order(c, &p))
        return -1;
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int i = 0; i < ns; i++) {
        shape[2 + i] = 1;
        n *= x->shape[2 + i];
    }
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *count = ir_idx(n);
    op_axis_exprs(ax, nd, idx);
    IterVar *rax[KG_MAX_DIMS];
    xi[0] = idx[0];
    xi[1] = idx[1];
    if (ir_tensor_is_dynamic(x))
        count = ir_idx(1);
    for (int i = 0; i < ns; i++) {
        rax[i] = ir_itervar_new(ir_fmt("rk%d", i), x->shape[2 + i], IV_REDUCE);
        rax[i]->dyn = x->dyn[2 + i];
        xi[2 + i] = ir_varref(rax[i]->var);
        if (ir_tensor_is_dynamic(x))
            count = ir_mul(count, ir_tensor_dim(x, 2 + i));
    }
    Expr *v = op_read(x, xi);
    if (kind == POOL_MAX)
        return op_emit_out(c, 0, nd, ax, ir_reduce(RED_MAX, v, rax, ns)) ? 0 : -1;
    Expr *a = ir_mathcall(FN_ABS, &v, 1), *pw[2] = {a, op_lit((double)p, t)};
    Expr *term = kind == POOL_AVG || p == 1 ? (kind == POOL_AVG ? v : a)
                 : p == 2                   ? ir_bin(OP_MUL, v, v)
                                            : ir_mathcall(FN_POW, pw, 2);
    Tensor *s = op_emit(c, op_name(c, "sum"), nd, ax, ir_reduce(RED_SUM, term, rax, ns));
    if (!s)
        return -1;
    IterVar **ax2 = op_axes(nd, shape);
    op_axis_exprs(ax2, nd, idx);
    Expr *sv = op_read(s, idx), *root[2] = {sv, op_lit(1.0 / (double)p, t)}, *body;
    if (kind == POOL_AVG && ir_tensor_is_dynamic(x))
        body = ir_binary(OP_DIV, sv, ir_cast(t, count));   /* the count at run time */
    else if (kind == POOL_AVG)
        body = ir_binary(OP_DIV, sv, op_lit((double)n, t));
    else
        body = p == 1 ? sv : p == 2 ? ir_mathcall(FN_SQRT, &sv, 1) : ir_mathcall(FN_POW, root, 2);
    return op_emit_out(c, 0, nd, ax2, body) ? 0 : -1;
}

static int global_average_pool(OpCtx *c) { return global_pool(c, POOL_AVG); }
static int global_max_pool(OpCtx *c) { return global_pool(c, POOL_MAX); }
static int global_lp_pool(OpCtx *c) { return global_pool(c, POOL_LP); }

/* ---------------------------------------------------------------- Gemm */

static int gemm(OpCtx *c)
{
    Tensor *a = op_input(c, 0, "A"), *b = op_input(c, 1, "B");
    if (!a || !b)
        return -1;
    Tensor *cc = op_has_input(c, 2) ? c->in[2] : NULL;
    if (a->ndim != 2 || b->ndim != 2)
        return ir_fail("%s: A and B must be matrices, got ranks %d and %d", c->op, a->ndim, b->ndim);
    if (a->dtype != b->dtype || (cc && cc->dtype != a->dtype))
        return ir_fail("%s: inputs have different types", c->op);
    if (a->dtype == DT_BOOL)
        return ir_fail("%s: bool inputs are not supported", c->op);
    int ta = op_attr_int(c, "transA", 0) != 0, tb = op_attr_int(c, "transB", 0) != 0;
    double alpha = op_attr_float(c, "alpha", 1.0), beta = op_attr_float(c, "beta", 1.0);
    int64_t M = a->shape[ta], K = a->shape[!ta], Kb = b->shape[tb], N = b->shape[!tb];
    if (K != Kb)
        return ir_fail("%s: inner dimensions differ: A gives %lld, B %lld", c->op, (long long)K, (long long)Kb);
    int64_t shape[2] = {M, N};
    if (cc) {
        if (cc->ndim > 2)
            return ir_fail("%s: C has rank %d; at most 2", c->op, cc->ndim);
        for (int d = 0; d < cc->ndim; d++) {
            int64_t s = cc->shape[d], want = shape[2 - cc->ndim + d];
            if (s != 1 && s != want)
                return ir_fail("%s: C (dimension %d is %lld) does not broadcast to %lld x %lld", c->op, d,
                               (long long)s, (long long)M, (long long)N);
        }
    }
    if (tb && op_is_const(c, 1)) {
        /* constant B^T (a classifier's weights): transposed once here, so the output
         * columns a schedule vectorizes read consecutive weights */
        b = c->in[1];   /* (maybe folded just now) */
        size_t es = (size_t)ir_dtype_bytes(b->dtype);
        unsigned char *t = ir_alloc(es * (size_t)(K * N));
        const unsigned char *src = b->data;
        for (int64_t j = 0; j < N; j++)
            for (int64_t q = 0; q < K; q++)
                memcpy(t + es * (size_t)(q * N + j), src + es * (size_t)(j * K + q), es);
        int64_t tshape[2] = {K, N};
        b = op_const_tensor(c, "BT", b->dtype, 2, tshape, t);
        if (!b)
            return -1;
        tb = 0;
    }
    int epilogue = alpha != 1.0 || (cc && beta != 0.0);
    IterVar **ax = op_axes(2, shape);
    Expr *idx[2], *ai[2], *bi[2];
    op_axis_exprs(ax, 2, idx);
    IterVar *rk = ir_itervar_new("rk", K, IV_REDUCE);
    Expr *k = ir_varref(rk->var);
    ai[ta] = idx[0];
    ai[!ta] = k;
    bi[tb] = k;
    bi[!tb] = idx[1];
    Expr *body = ir_reduce(RED_SUM, ir_binary(OP_MUL, op_read(a, ai), op_read(b, bi)), &rk, 1);
    Tensor *y = emit(c, epilogue ? -1 : 0, "mm", 2, ax, body);
    if (!y || !epilogue)
        return y ? 0 : -1;
    IterVar **ax2 = op_axes(2, shape);
    op_axis_exprs(ax2, 2, idx);
    Expr *e = op_read(y, idx);
    if (alpha != 1.0)
        e = ir_binary(OP_MUL, op_lit(alpha, a->dtype), e);
    if (cc && beta != 0.0) {
        Expr *cv = op_read_bcast(cc, idx, 2);
        if (beta != 1.0)
            cv = ir_binary(OP_MUL, op_lit(beta, a->dtype), cv);
        e = ir_binary(OP_ADD, e, cv);
    }
    return op_emit_out(c, 0, 2, ax2, e) ? 0 : -1;
}

/* ---------------------------------------------------------------- MatMul */

/* Rows of a matmul with 2-D weights, [..., M, K] x [K, N], over batch dims and an M
 * shorter than FLAT_ROWS_MAX: computed as one [rows, K] x [K, N] product and viewed with
 * the batch dims after. The register tiles then run down all the rows, not down each
 * short M (ConvNeXt's and Swin's [1, 7, 7, 768] x [768, 3072]: tiles of 4 and 3 rows of
 * 7, 8 and 6 accumulators; of 49 rows, 6). What follows the product (a GELU, a residual
 * add) is then a pass of its own instead of the tile's epilogue: for such short M a
 * small tensor. Returns the rows, or 0 where the matmul keeps its shape. */
enum { FLAT_ROWS_MAX = 32 };

static int64_t flat_rows(const Tensor *a, const Tensor *b)
{
    if (b->ndim != 2 || a->ndim < 3 || a->shape[a->ndim - 2] >= FLAT_ROWS_MAX || ir_tensor_is_dynamic(a) ||
        ir_tensor_is_dynamic(b))
        return 0;
    int64_t rows = 1;
    for (int d = 0; d < a->ndim - 1; d++)
        rows *= a->shape[d];
    return rows > a->shape[a->ndim - 2] ? rows : 0;
}

/* numpy matmul of a and b (1-D operands are a row / a column that the result drops) as
 * one reduction; quant.c uses it on operands it prepared. out: output index or -1. */
Tensor *op_nn_matmul(OpCtx *c, Tensor *a, Tensor *b, int out);

static Tensor *matmul_flat_rows(OpCtx *c, Tensor *a, Tensor *b, int out, int64_t rows)
{
    int ra = a->ndim;
    int64_t K = a->shape[ra - 1], N = b->shape[1], shape2[2] = {rows, N};
    IterVar **ax = op_axes(2, shape2);
    Expr *idx[KG_MAX_DIMS], *ai[KG_MAX_DIMS], *bi[2];
    op_axis_exprs(ax, 2, idx);
    IterVar *rk = ir_itervar_new("rk", K, IV_REDUCE);
    /* row m of the product is a's row (m / (its dims after d)) % dim d, dim by dim */
    int64_t after = 1;
    for (int d = ra - 2; d >= 0; d--) {
        ai[d] = a->shape[d] == 1 ? ir_idx(0)
                                 : ir_bin(OP_MOD, ir_bin(OP_DIV, idx[0], ir_idx(after)), ir_idx(a->shape[d]));
        after *= a->shape[d];
    }
    ai[ra - 1] = bi[0] = ir_varref(rk->var);
    bi[1] = idx[1];
    Expr *body = ir_reduce(RED_SUM, ir_binary(OP_MUL, op_read(a, ai), op_read(b, bi)), &rk, 1);
    Tensor *y = emit(c, -1, "mm", 2, ax, body);
    if (!y)
        return NULL;
    /* the product viewed with a's dims */
    int64_t shape[KG_MAX_DIMS];
    for (int d = 0; d < ra - 1; d++)
        shape[d] = a->shape[d];
    shape[ra - 1] = N;
    IterVar **vx = op_axes(ra, shape);
    Expr *vi[KG_MAX_DIMS], *yi[2];
    op_axis_exprs(vx, ra, vi);
    yi[0] = ir_idx(0);
    for (int d = 0; d < ra - 1; d++)
        yi[0] = ir_bin(OP_ADD, ir_bin(OP_MUL, yi[0], ir_idx(a->shape[d])), vi[d]);
    yi[1] = vi[ra - 1];
    return emit(c, out, "rows", ra, vx, op_read(y, yi));
}

Tensor *op_nn_matmul(OpCtx *c, Tensor *a, Tensor *b, int out)
{
    if (a->ndim < 1 || b->ndim < 1) {
        ir_fail("%s: operands must have rank at least 1, got %d and %d", c->op, a->ndim, b->ndim);
        return NULL;
    }
    if (a->dtype != b->dtype) {
        ir_fail("%s: operands have different types %s and %s", c->op, ir_dtype_name(a->dtype),
                ir_dtype_name(b->dtype));
        return NULL;
    }
    if (a->dtype == DT_BOOL) {
        ir_fail("%s: bool operands are not supported", c->op);
        return NULL;
    }
    int ra = a->ndim, rb = b->ndim, ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    int nb = ba > bb ? ba : bb, hasm = ra >= 2, hasn = rb >= 2, nd = nb + hasm + hasn;
    int64_t K = a->shape[ra - 1], Kb = rb == 1 ? b->shape[0] : b->shape[rb - 2];
    if (K != Kb) {
        ir_fail("%s: inner dimensions differ: %lld and %lld", c->op, (long long)K, (long long)Kb);
        return NULL;
    }
    if (nd > KG_MAX_DIMS) {
        ir_fail("%s: result rank %d is over the limit %d", c->op, nd, KG_MAX_DIMS);
        return NULL;
    }
    int64_t shape[KG_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - ba), db = d - (nb - bb);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            ir_fail("%s: batch dimensions cannot broadcast: %lld and %lld", c->op, (long long)sa, (long long)sb);
            return NULL;
        }
        shape[d] = sa == 1 ? sb : sa;
    }
    if (hasm)
        shape[nb] = a->shape[ra - 2];
    if (hasn)
        shape[nb + hasm] = b->shape[rb - 1];
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS], *ai[KG_MAX_DIMS], *bi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    IterVar *rk = ir_itervar_new("rk", K, IV_REDUCE);
    Expr *k = ir_varref(rk->var);
    for (int d = 0; d < ba; d++)
        ai[d] = a->shape[d] == 1 ? ir_idx(0) : idx[nb - ba + d];
    for (int d = 0; d < bb; d++)
        bi[d] = b->shape[d] == 1 ? ir_idx(0) : idx[nb - bb + d];
    if (hasm)
        ai[ra - 2] = idx[nb];
    ai[ra - 1] = k;
    if (hasn) {
        bi[rb - 2] = k;
        bi[rb - 1] = idx[nb + hasm];
    } else {
        bi[0] = k;
    }
    if (!ir_dtype_is_storage(a->dtype)) {
        int64_t rows = flat_rows(a, b);
        if (rows)
            return matmul_flat_rows(c, a, b, out, rows);
        Expr *body = ir_reduce(RED_SUM, ir_binary(OP_MUL, op_read(a, ai), op_read(b, bi)), &rk, 1);
        return emit(c, out, "mm", nd, ax, body);
    }
    /* f16, bf16: the sum in f32, rounded once (an f16 accumulator loses a bit a step) */
    Expr *prod = ir_binary(OP_MUL, ir_cast(DT_F32, op_read(a, ai)), ir_cast(DT_F32, op_read(b, bi)));
    Tensor *sum = emit(c, -1, "mm32", nd, ax, ir_reduce(RED_SUM, prod, &rk, 1));
    if (!sum)
        return NULL;
    ax = op_axes(nd, shape);
    op_axis_exprs(ax, nd, idx);
    return emit(c, out, "mm", nd, ax, ir_cast(a->dtype, op_read(sum, idx)));
}

static int matmul(OpCtx *c)
{
    Tensor *a = op_input(c, 0, "A"), *b = op_input(c, 1, "B");
    if (!a || !b)
        return -1;
    return op_nn_matmul(c, a, b, 0) ? 0 : -1;
}

/* ---------------------------------------------------------------- Einsum */

/* Labels: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (so label order is ASCII order, which the
 * implicit output uses), the dimensions under "..." are 52.. right-aligned. */
#define NLETTERS 52
#define MAX_LABELS (NLETTERS + KG_MAX_DIMS)

static int letter_label(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return 26 + ch - 'a';
    return -1;
}

/* Parse one term into labels; *ell is where "..." stands (-1 if absent), *n the letters. */
static int einsum_term(OpCtx *c, const char *s, size_t len, int *labels, int *n, int *ell)
{
    *n = 0;
    *ell = -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*ell >= 0 || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return ir_fail("%s: bad '...' in equation term '%.*s'", c->op, (int)len, s);
            *ell = *n;
            i += 2;
            continue;
        }
        int l = letter_label(s[i]);
        if (l < 0)
            return ir_fail("%s: bad character '%c' in equation", c->op, s[i]);
        if (*n == KG_MAX_DIMS)
            return ir_fail("%s: equation term '%.*s' has too many labels", c->op, (int)len, s);
        labels[(*n)++] = l;
    }
    return 0;
}

static int einsum(OpCtx *c)
{
    const char *eq0 = op_attr_str(c, "equation", NULL);
    if (!eq0)
        return ir_fail("%s: attribute equation is required", c->op);
    char *eq = ir_strdup(eq0), *w = eq;
    for (const char *r = eq0; *r; r++)
        if (*r != ' ')
            *w++ = *r;
    *w = 0;
    char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + strlen(eq);

    int nin = c->nin;
    if (nin < 1)
        return ir_fail("%s: no inputs", c->op);
    int lab[OP_MAX_IO][KG_MAX_DIMS], nlab[OP_MAX_IO];
    int64_t extent[MAX_LABELS];
    int count[MAX_LABELS];
    for (int l = 0; l < MAX_LABELS; l++) {
        extent[l] = 0;
        count[l] = 0;
    }
    int nell = 0, t = 0;
    Tensor *ins[OP_MAX_IO];
    const char *p = eq;
    for (;; t++) {
        const char *e = p;
        while (e < lhs_end && *e != ',')
            e++;
        if (t >= nin)
            return ir_fail("%s: the equation has more terms than the %d inputs", c->op, nin);
        Tensor *x = ins[t] = op_input(c, t, "Inputs");
        if (!x)
            return -1;
        if (x->dtype != ins[0]->dtype)
            return ir_fail("%s: inputs have different types", c->op);
        int letters[KG_MAX_DIMS], n, ell;
        if (einsum_term(c, p, (size_t)(e - p), letters, &n, &ell))
            return -1;
        int ne = x->ndim - n;
        if (ne < 0 || (ell < 0 && ne != 0))
            return ir_fail("%s: term %d has %d labels but input %d has rank %d", c->op, t, n, t, x->ndim);
        if (ne > nell)
            nell = ne;
        /* labels per dimension; ellipsis dims are numbered from the right later */
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (i == ell)
                for (int j = 0; j < ne; j++)
                    lab[t][k++] = -1 - j;
            lab[t][k++] = letters[i];
        }
        if (ell == n)
            for (int j = 0; j < ne; j++)
                lab[t][k++] = -1 - j;
        nlab[t] = k;
        if (e == lhs_end)
            break;
        p = e + 1;
    }
    if (t + 1 != nin)
        return ir_fail("%s: the equation has %d terms but the node %d inputs", c->op, t + 1, nin);
    /* ellipsis dims right-aligned: dim j of ne becomes label NLETTERS + nell - ne + j */
    for (int i = 0; i < nin; i++) {
        int ne = 0;
        for (int d = 0; d < nlab[i]; d++)
            ne += lab[i][d] < 0;
        for (int d = 0; d < nlab[i]; d++)
            if (lab[i][d] < 0)
                lab[i][d] = NLETTERS + nell - ne + (-1 - lab[i][d]);
        int seen[MAX_LABELS] = {0};
        for (int d = 0; d < nlab[i]; d++) {
            int l = lab[i][d];
            int64_t s = ins[i]->shape[d];
            if (extent[l] && extent[l] != s && s != 1 && extent[l] != 1)
                return ir_fail("%s: label dimension sizes differ: %lld and %lld", c->op, (long long)extent[l],
                               (long long)s);
            if (!extent[l] || extent[l] == 1)
                extent[l] = s;
            if (!seen[l]++)
                count[l]++;
            if (seen[l] > 1)
                count[l]++;   /* a repeated label (diagonal) is never implicit output */
        }
    }
    /* the output labels */
    int olab[KG_MAX_DIMS], no = 0;
    if (arrow) {
        int letters[KG_MAX_DIMS], n, ell;
        const char *o = arrow + 2;
        if (einsum_term(c, o, strlen(o), letters, &n, &ell))
            return -1;
        for (int i = 0; i <= n; i++) {
            if (i == ell)
                for (int j = 0; j < nell && no < KG_MAX_DIMS; j++)
                    olab[no++] = NLETTERS + j;
            if (i < n) {
                if (no == KG_MAX_DIMS)
                    return ir_fail("%s: output rank over the limit %d", c->op, KG_MAX_DIMS);
                olab[no++] = letters[i];
            }
        }
    } else {
        for (int j = 0; j < nell; j++)
            olab[no++] = NLETTERS + j;
        for (int l = 0; l < NLETTERS; l++)
            if (count[l] == 1) {
                if (no == KG_MAX_DIMS)
                    return ir_fail("%s: output rank over the limit %d", c->op, KG_MAX_DIMS);
                olab[no++] = l;
            }
    }
    Var *var[MAX_LABELS] = {0};
    int64_t shape[KG_MAX_DIMS];
    for (int i = 0; i < no; i++) {
        if (!extent[olab[i]])
            return ir_fail("%s: output label '%c' does not appear in the inputs", c->op,
                           olab[i] < 26 ? 'A' + olab[i] : 'a' + olab[i] - 26);
        shape[i] = extent[olab[i]];
    }
    IterVar **ax = op_axes(no, shape);
    for (int i = 0; i < no; i++) {
        if (var[olab[i]])
            return ir_fail("%s: a label appears twice in the output", c->op);
        var[olab[i]] = ax[i]->var;
    }
    IterVar *rax[MAX_LABELS];
    int nr = 0;
    for (int l = 0; l < MAX_LABELS; l++)
        if (extent[l] && !var[l]) {
            rax[nr] = ir_itervar_new(ir_fmt("r%d", nr), extent[l], IV_REDUCE);
            var[l] = rax[nr++]->var;
        }
    Expr *body = NULL;
    for (int i = 0; i < nin; i++) {
        Expr *xi[KG_MAX_DIMS];
        for (int d = 0; d < nlab[i]; d++)
            xi[d] = ins[i]->shape[d] == 1 ? ir_idx(0) : ir_varref(var[lab[i][d]]);
        Expr *v = op_read(ins[i], xi);
        body = body ? ir_binary(OP_MUL, body, v) : v;
    }
    if (nr)
        body = ir_reduce(RED_SUM, body, rax, nr);
    return op_emit_out(c, 0, no, ax, body) ? 0 : -1;
}

const OpDef op_defs_nn[] = {
    {"Conv", conv},
    {"ConvTranspose", conv_transpose},
    {"MaxPool", max_pool},
    {"AveragePool", average_pool},
    {"LpPool", lp_pool},
    {"GlobalAveragePool", global_average_pool},
    {"GlobalMaxPool", global_max_pool},
    {"GlobalLpPool", global_lp_pool},
    {"Gemm", gemm},
    {"MatMul", matmul},
    {"Einsum", einsum},
    {NULL, NULL},
};
