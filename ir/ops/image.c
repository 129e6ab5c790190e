/* image.c - ONNX image and sampling operators: GridSample, AffineGrid, RoiAlign, DeformConv,
 * Col2Im, CenterCropPad, MaxUnpool.
 *
 * The samplers (GridSample, RoiAlign, DeformConv) read the input at positions computed from
 * data. A position is a float compute; per position and tap (2 per dimension for linear, 4
 * for cubic, from the floor) small tables hold the input index and the weight, and the
 * sampler sums weight * input over the taps as reduce axes. The tables run the coordinate
 * arithmetic once per position instead of once per channel and tap. Every data-dependent
 * index is clamped into its tensor and a select drops the taps outside, so no read leaves
 * its tensor whatever the data; a float becomes an integer only after a clamp (a NaN or a
 * huge position would make the conversion undefined in C). Shape-like inputs (AffineGrid's
 * size, Col2Im's image and block shapes, CenterCropPad's shape, MaxUnpool's output_shape)
 * are compile-time values. */
#include "ops.h"

#include <math.h>
#include <string.h>

#define MAX_SP (KG_MAX_DIMS - 2)   /* spatial dimensions of an N, C, ... tensor */

/* ---------------------------------------------------------------- expression helpers */

static Expr *fl(double v, DType t) { return ir_float(v, t); }
static Expr *add(Expr *a, Expr *b) { return ir_bin(OP_ADD, a, b); }
static Expr *sub(Expr *a, Expr *b) { return ir_bin(OP_SUB, a, b); }
static Expr *mul(Expr *a, Expr *b) { return ir_bin(OP_MUL, a, b); }
static Expr *dv(Expr *a, Expr *b) { return ir_bin(OP_DIV, a, b); }
static Expr *and_(Expr *a, Expr *b) { return a ? ir_bin(OP_AND, a, b) : b; }

static Expr *call1(MathFn fn, Expr *a)
{
    Expr *args[KG_MAX_ARGS] = {a};
    return ir_call(fn, args);
}

/* x clamped to [lo, hi] with selects; a NaN gives lo (a float min/max would keep it) */
static Expr *fclamp(Expr *x, double lo, double hi)
{
    DType t = x->dtype;
    return ir_select(ir_bin(OP_GT, x, fl(lo, t)), ir_select(ir_bin(OP_LT, x, fl(hi, t)), x, fl(hi, t)), fl(lo, t));
}

/* A float position as an index, truncated like C after a clamp to [lo, hi]. */
static Expr *to_idx(Expr *x, int64_t lo, int64_t hi) { return ir_cast(DT_INDEX, fclamp(x, (double)lo, (double)hi)); }

static Expr *iclamp(Expr *i, int64_t lo, int64_t hi)
{
    return ir_bin(OP_MIN, ir_bin(OP_MAX, i, ir_idx(lo)), ir_idx(hi));
}

/* 0 <= i < n */
static Expr *in_range(Expr *i, int64_t n) { return ir_bin(OP_AND, ir_bin(OP_GE, i, ir_idx(0)), ir_bin(OP_LT, i, ir_idx(n))); }

/* An index axis or tap as a float of type t. */
static Expr *as_float(Expr *i, DType t) { return ir_cast(t, i); }

/* The flat index of idx over dims (row-major). */
static Expr *flatten(Expr **idx, const int64_t *dims, int n)
{
    Expr *f = NULL;
    for (int d = 0; d < n; d++)
        f = f ? add(mul(f, ir_idx(dims[d])), idx[d]) : idx[d];
    return f ? f : ir_idx(0);
}

static void unflatten(Expr *flat, const int64_t *dims, int n, Expr **out)
{
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        Expr *e = stride > 1 ? dv(flat, ir_idx(stride)) : flat;
        out[d] = d > 0 ? ir_bin(OP_MOD, e, ir_idx(dims[d])) : e;
        stride *= dims[d];
    }
}

static int64_t prod(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

/* f32 or f64: the float types these operators compute in */
static int check_real(OpCtx *c, const Tensor *t, const char *what)
{
    if (t->dtype != DT_F32 && t->dtype != DT_F64)
        return ir_fail("%s: %s has type %s; f32 and f64 are supported", c->op, what, ir_dtype_name(t->dtype));
    return 0;
}

/* The samplers and MaxUnpool index their input with clamped positions: it must hold
 * elements. */
static int check_nonempty(OpCtx *c, const Tensor *t, const char *what)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 1)
            return ir_fail("%s: input %s has dimension %d of size %lld; empty tensors are not supported", c->op, what,
                           d, (long long)t->shape[d]);
    return 0;
}

/* The product of n positive values, or cap + 1 as soon as it passes cap (no overflow). */
static int64_t prod_capped(const int64_t *v, int n, int64_t cap)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (v[i] > cap || (p *= v[i]) > cap)
            return cap + 1;
    return p;
}

/* A spatial input: N, C and 1 to MAX_SP spatial dimensions. */
static Tensor *nc_input(OpCtx *c, int i, const char *what)
{
    Tensor *x = op_input(c, i, what);
    if (x && (x->ndim < 3 || x->ndim > KG_MAX_DIMS)) {
        ir_fail("%s: input %s has rank %d; expected N, C and 1 to %d spatial dimensions", c->op, what, x->ndim,
                MAX_SP);
        return NULL;
    }
    return x;
}

/* ---------------------------------------------------------------- interpolation */

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } SampleMode;
typedef enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION } PadMode;

/* How positions are sampled (GridSample's attributes; DeformConv samples linearly with
 * zeros outside). The borders of reflection are the corner pixels' centres with
 * align_corners, else their outer edges. */
typedef struct {
    SampleMode mode;
    PadMode pad;
    int align;
} Sampling;

static void borders(const Sampling *s, int64_t L, double *lo, double *hi)
{
    *lo = s->align ? 0 : -0.5;
    *hi = s->align ? (double)(L - 1) : (double)L - 0.5;
}

/* x folded back by the borders lo and hi until it lies between them: a triangle wave of
 * period 2*(hi-lo), hi - |((x-lo) mod 2(hi-lo)) - (hi-lo)|, the same as reflecting by the
 * nearer border again and again. Positions already inside stay exact. */
static Expr *reflect(Expr *x, double lo, double hi)
{
    DType t = x->dtype;
    double rng = hi - lo;
    if (!(rng > 0))
        return fl(lo, t);   /* one pixel with align_corners: every position is that pixel */
    Expr *u = sub(x, fl(lo, t));
    Expr *m = sub(u, mul(call1(FN_FLOOR, dv(u, fl(2 * rng, t))), fl(2 * rng, t)));
    Expr *folded = sub(fl(hi, t), call1(FN_ABS, sub(m, fl(rng, t))));
    Expr *inside = ir_bin(OP_AND, ir_bin(OP_GE, x, fl(lo, t)), ir_bin(OP_LE, x, fl(hi, t)));
    return ir_select(inside, x, folded);
}

/* Keys' cubic convolution kernel (a = -0.75) at distance s in [0, 2]. */
static Expr *cubic_weight(Expr *s)
{
    DType t = s->dtype;
    const double a = -0.75;
    Expr *near = add(mul(mul(sub(mul(fl(a + 2, t), s), fl(a + 3, t)), s), s), fl(1, t));
    Expr *far = sub(mul(add(mul(sub(mul(fl(a, t), s), fl(5 * a, t)), s), fl(8 * a, t)), s), fl(4 * a, t));
    return ir_select(ir_bin(OP_LE, s, fl(1, t)), near, far);
}

static int tap_count(SampleMode mode) { return mode == MODE_CUBIC ? 4 : mode == MODE_LINEAR ? 2 : 1; }

/* The input index of integer position i along a dimension of length L under the padding:
 * -1 outside for zeros, else moved inside. */
static Expr *padded_index(const Sampling *s, Expr *i, int64_t L, DType t)
{
    if (s->pad == PAD_ZEROS)
        return ir_select(in_range(i, L), i, ir_idx(-1));
    if (s->pad == PAD_REFLECTION) {
        double lo, hi;
        borders(s, L, &lo, &hi);
        i = to_idx(reflect(as_float(i, t), lo, hi), 0, L - 1);
    }
    return iclamp(i, 0, L - 1);
}

/* The taps of the positions in pos (any shape S; positions along a dimension of length L):
 * idx[S..., t], the input index of tap t (-1: outside, reads zero), and w[S..., t] its
 * weight, of type wt. Nearest has one tap: idx[S...] and no weights. The sampler reads
 * these tables, not the positions, so the coordinate arithmetic runs once per position
 * instead of once per channel and tap. */
static int tap_tables(OpCtx *c, Tensor *pos, int64_t L, const Sampling *s, DType wt, const char *what,
                      Tensor **idx, Tensor **w)
{
    int n = pos->ndim, taps = tap_count(s->mode);
    int64_t shape[KG_MAX_DIMS];
    memcpy(shape, pos->shape, sizeof(int64_t) * (size_t)n);
    shape[n] = taps;
    int nd = taps > 1 ? n + 1 : n;
    if (nd > KG_MAX_DIMS)
        return ir_fail("%s: the tap tables would have rank %d (limit %d)", c->op, nd, KG_MAX_DIMS);
    DType t = pos->dtype;
    IterVar **ax = op_axes(nd, shape);
    Expr *i[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, i);
    *w = NULL;
    if (taps == 1) {
        Expr *at = to_idx(call1(FN_ROUND, op_read(pos, i)), -1, L);
        return (*idx = op_emit(c, op_name(c, ir_fmt("%s_idx", what)), nd, ax, padded_index(s, at, L, t))) ? 0 : -1;
    }
    /* the floor as an index, once per position (a clamp first: the position may be huge) */
    IterVar **bax = op_axes(n, shape);
    Expr *bi[KG_MAX_DIMS];
    op_axis_exprs(bax, n, bi);
    Tensor *base = op_emit(c, op_name(c, ir_fmt("%s_floor", what)), n, bax,
                           to_idx(call1(FN_FLOOR, op_read(pos, bi)), -4, L + 4));
    if (!base)
        return -1;
    Expr *at = add(op_read(base, i), sub(i[n], ir_idx(taps / 2 - 1)));
    if (!(*idx = op_emit(c, op_name(c, ir_fmt("%s_idx", what)), nd, ax, padded_index(s, at, L, t))))
        return -1;
    ax = op_axes(nd, shape);
    op_axis_exprs(ax, nd, i);
    Expr *p = op_read(pos, i), *f = sub(p, call1(FN_FLOOR, p));
    if (s->mode == MODE_CUBIC) {
        /* the kernel reads the tap's distance seven times: a table of its own */
        Tensor *dist = op_emit(c, op_name(c, ir_fmt("%s_dist", what)), nd, ax,
                               call1(FN_ABS, sub(add(f, fl(1, t)), as_float(i[n], t))));
        if (!dist)
            return -1;
        ax = op_axes(nd, shape);
        op_axis_exprs(ax, nd, i);
        return (*w = op_emit(c, op_name(c, ir_fmt("%s_w", what)), nd, ax, ir_cast(wt, cubic_weight(op_read(dist, i)))))
                   ? 0
                   : -1;
    }
    Expr *wd = ir_select(ir_bin(OP_EQ, i[n], ir_idx(0)), sub(fl(1, t), f), f);
    return (*w = op_emit(c, op_name(c, ir_fmt("%s_w", what)), nd, ax, ir_cast(wt, wd))) ? 0 : -1;
}

/* out = sum over the taps t of prod_d w_d[pi..., t_d] * x[xi..., idx_d[pi..., t_d]...] for
 * the spatial dimensions d of x after its first `lead` (their indices in xi), zero where a
 * tap is outside (zeros: the tables mark such taps -1). pi indexes the tables without their
 * tap dimension. */
static Expr *sample(Tensor *x, int lead, Expr **xi, Tensor **idx, Tensor **w, int ns, Expr **pi, int npi, int taps,
                    int zeros)
{
    IterVar *rax[MAX_SP];
    Expr *ti[KG_MAX_DIMS], *inside = NULL, *wt = NULL;
    memcpy(ti, pi, sizeof(Expr *) * (size_t)npi);
    for (int d = 0; d < ns; d++) {
        if (taps > 1) {
            rax[d] = ir_itervar_new(ir_fmt("t%d", d), taps, IV_REDUCE);
            ti[npi] = ir_varref(rax[d]->var);
        }
        Expr *at = ir_access(idx[d], ti, idx[d]->ndim);
        inside = and_(inside, ir_bin(OP_GE, at, ir_idx(0)));
        xi[lead + d] = iclamp(at, 0, x->shape[lead + d] - 1);   /* the tables hold -1..L-1 */
        if (w[d]) {
            Expr *wd = ir_access(w[d], ti, w[d]->ndim);
            wt = wt ? mul(wt, wd) : wd;
        }
    }
    Expr *v = op_read(x, xi);
    if (zeros)
        v = ir_select(inside, v, fl(0, x->dtype));
    return taps > 1 ? ir_reduce(RED_SUM, mul(wt, v), rax, ns) : v;
}

/* ---------------------------------------------------------------- GridSample */

static int grid_opts(OpCtx *c, Sampling *s)
{
    const char *m = op_attr_str(c, "mode", c->opset < 20 ? "bilinear" : "linear");
    const char *p = op_attr_str(c, "padding_mode", "zeros");
    /* opset 20 renamed bilinear and bicubic; both spellings name the same modes */
    if (!strcmp(m, "nearest"))
        s->mode = MODE_NEAREST;
    else if (!strcmp(m, "linear") || !strcmp(m, "bilinear"))
        s->mode = MODE_LINEAR;
    else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic"))
        s->mode = MODE_CUBIC;
    else
        return ir_fail("%s: unknown mode '%s' (nearest, linear or cubic)", c->op, m);
    if (!strcmp(p, "zeros"))
        s->pad = PAD_ZEROS;
    else if (!strcmp(p, "border"))
        s->pad = PAD_BORDER;
    else if (!strcmp(p, "reflection"))
        s->pad = PAD_REFLECTION;
    else
        return ir_fail("%s: unknown padding_mode '%s' (zeros, border or reflection)", c->op, p);
    s->align = op_attr_int(c, "align_corners", 0) != 0;
    return 0;
}

/* pos[n, o...]: the position along spatial dimension d of X (length L) that grid[n, o...]
 * names, in input pixels, rounded for nearest and moved inside for border and reflection
 * padding (the order of the ONNX reference: round, then pad). */
static Tensor *grid_position(OpCtx *c, Tensor *grid, int d, int64_t L, const Sampling *s)
{
    int r = grid->ndim - 2, nd = grid->ndim - 1;
    DType t = grid->dtype;
    IterVar **ax = op_axes(nd, grid->shape);
    Expr *i[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, i);
    i[nd] = ir_idx(r - 1 - d);   /* the grid lists x (the last dimension) first */
    Expr *g1 = add(op_read(grid, i), fl(1, t));
    Expr *x = s->align ? mul(dv(g1, fl(2, t)), fl((double)(L - 1), t))
                       : dv(sub(mul(g1, fl((double)L, t)), fl(1, t)), fl(2, t));
    /* nearest rounds halves to even (nearbyint) in every rank: the node tests' 3-D results too */
    if (s->mode == MODE_NEAREST)
        x = call1(FN_ROUND, x);
    if (s->pad != PAD_ZEROS) {
        /* the padding below reads the position several times */
        Tensor *raw = op_emit(c, op_name(c, ir_fmt("raw%d", d)), nd, ax, x);
        if (!raw)
            return NULL;
        ax = op_axes(nd, grid->shape);
        op_axis_exprs(ax, nd, i);
        x = op_read(raw, i);
    }
    double lo, hi;
    borders(s, L, &lo, &hi);
    if (s->pad == PAD_BORDER) {
        Expr *out = ir_bin(OP_OR, ir_bin(OP_LT, x, fl(lo, t)), ir_bin(OP_GT, x, fl(hi, t)));
        x = ir_select(out, fclamp(x, 0, (double)(L - 1)), x);
    } else if (s->pad == PAD_REFLECTION) {
        x = reflect(x, lo, hi);
    }
    return op_emit(c, op_name(c, ir_fmt("pos%d", d)), nd, ax, x);
}

static int grid_sample(OpCtx *c)
{
    Tensor *x = nc_input(c, 0, "X"), *grid = op_input(c, 1, "grid");
    if (!x || !grid || check_real(c, x, "X") || check_real(c, grid, "grid") || check_nonempty(c, x, "X"))
        return -1;
    int r = x->ndim - 2, nd = x->ndim;
    if (grid->ndim != nd || grid->shape[0] != x->shape[0] || grid->shape[nd - 1] != r)
        return ir_fail("%s: grid must have shape (N, %d output dimensions, %d) for X of rank %d", c->op, r, r, nd);
    Sampling s;
    if (grid_opts(c, &s))
        return -1;
    int64_t shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int d = 0; d < r; d++)
        shape[2 + d] = grid->shape[1 + d];
    if (op_check_dims(c, nd, shape))
        return -1;
    Tensor *idx[MAX_SP], *w[MAX_SP];
    for (int d = 0; d < r; d++) {
        Tensor *pos = grid_position(c, grid, d, x->shape[2 + d], &s);
        if (!pos || tap_tables(c, pos, x->shape[2 + d], &s, x->dtype, ir_fmt("tap%d", d), &idx[d], &w[d]))
            return -1;
    }
    IterVar **ax = op_axes(nd, shape);
    Expr *o[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *pi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, o);
    pi[0] = o[0];
    for (int d = 0; d < r; d++)
        pi[1 + d] = o[2 + d];
    xi[0] = o[0];
    xi[1] = o[1];
    Expr *body = sample(x, 2, xi, idx, w, r, pi, 1 + r, tap_count(s.mode), s.pad == PAD_ZEROS);
    return op_emit_out(c, 0, nd, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- AffineGrid */

/* grid[n, s..., k] = sum_j theta[n, k, j] * base_j + theta[n, k, r]: base_0 (x) runs along
 * the last spatial dimension, base_1 (y) along the one before, and so on; each is a table of
 * the normalized pixel positions in [-1, 1] (centres of the corner pixels with
 * align_corners, else their outer edges). */
static int affine_grid(OpCtx *c)
{
    Tensor *theta = op_input(c, 0, "theta");
    if (!theta || check_real(c, theta, "theta"))
        return -1;
    int64_t size[KG_MAX_DIMS + 1];
    int64_t n = op_const_ints(c, 1, "size", size, KG_MAX_DIMS + 1);
    if (n < 0)
        return -1;
    if (n != 4 && n != 5)
        return ir_fail("%s: size has %lld values; (N, C, H, W) or (N, C, D, H, W) expected", c->op, (long long)n);
    int r = (int)n - 2, nd = r + 2;
    if (theta->ndim != 3 || theta->shape[0] != size[0] || theta->shape[1] != r || theta->shape[2] != r + 1)
        return ir_fail("%s: theta must have shape (%lld, %d, %d) for size of %d values", c->op, (long long)size[0], r,
                       r + 1, (int)n);
    int64_t shape[KG_MAX_DIMS];
    shape[0] = size[0];
    for (int d = 0; d < r; d++)
        shape[1 + d] = size[2 + d];
    shape[nd - 1] = r;
    if (op_check_dims(c, nd, shape))
        return -1;
    DType t = theta->dtype;
    int align = op_attr_int(c, "align_corners", 0) != 0;
    Tensor *base[MAX_SP];
    for (int d = 0; d < r; d++) {
        int64_t L = size[2 + d];
        /* like numpy.arange: start + i * step; one pixel with align_corners sits at 0 */
        double step = align ? (L > 1 ? 2.0 / (double)(L - 1) : 0) : 2.0 / (double)L;
        double start = align ? (L > 1 ? -1 : 0) : -1 + step / 2;
        double *v = ir_alloc(sizeof *v * (size_t)L);
        for (int64_t i = 0; i < L; i++)
            v[i] = start + (double)i * step;
        void *data = v;
        if (t == DT_F32) {
            float *f = ir_alloc(sizeof *f * (size_t)L);
            for (int64_t i = 0; i < L; i++)
                f[i] = (float)v[i];
            data = f;
        }
        if (!(base[d] = op_const_tensor(c, ir_fmt("base%d", d), t, 1, &L, data)))
            return -1;
    }
    IterVar **ax = op_axes(nd, shape);
    Expr *oi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, oi);
    Expr *ti[3] = {oi[0], oi[nd - 1], NULL}, *sum = NULL;
    for (int j = 0; j < r; j++) {
        ti[2] = ir_idx(j);
        Expr *term = mul(op_read(theta, ti), op_read(base[r - 1 - j], &oi[1 + r - 1 - j]));
        sum = sum ? add(sum, term) : term;
    }
    ti[2] = ir_idx(r);
    return op_emit_out(c, 0, nd, ax, add(sum, op_read(theta, ti))) ? 0 : -1;
}

/* ---------------------------------------------------------------- RoiAlign */

typedef struct {
    Tensor *rois;
    int64_t pooled, grid, L;   /* output bins, samples per bin, input length */
    double scale, offset;      /* spatial_scale; 0.5 for half_pixel */
    int clamp_size;            /* output_half_pixel: a region is at least one pixel */
} RoiAxis;

/* The sample positions along one axis: s[roi, bin, sample] = start + bin * b +
 * (sample + 0.5) * b / grid with b = (end - start) / pooled, from the roi's columns lo and
 * hi (x1, x2 or y1, y2). */
static Tensor *roi_samples(OpCtx *c, const RoiAxis *a, int lo, int hi, const char *what)
{
    DType t = a->rois->dtype;
    int64_t shape[3] = {a->rois->shape[0], a->pooled, a->grid};
    IterVar **ax = op_axes(3, shape);
    Expr *i[3];
    op_axis_exprs(ax, 3, i);
    Expr *ri[2] = {i[0], ir_idx(lo)};
    Expr *start = sub(mul(op_read(a->rois, ri), fl(a->scale, t)), fl(a->offset, t));
    ri[1] = ir_idx(hi);
    Expr *end = sub(mul(op_read(a->rois, ri), fl(a->scale, t)), fl(a->offset, t));
    Expr *len = sub(end, start);
    if (a->clamp_size)
        len = ir_bin(OP_MAX, len, fl(1, t));
    Expr *bin = dv(len, fl((double)a->pooled, t));
    Expr *in_bin = dv(mul(add(as_float(i[2], t), fl(0.5, t)), bin), fl((double)a->grid, t));
    Expr *s = add(add(start, mul(as_float(i[1], t), bin)), in_bin);
    return op_emit(c, op_name(c, what), 3, ax, s);
}

/* The two bilinear taps of each sample: idx[roi, bin, sample, tap] and their weights w
 * (0 for a sample more than a pixel outside the input: it adds nothing). A sample is
 * clamped to the first pixel from below and to the last from above, as the reference does. */
static int roi_taps(OpCtx *c, const RoiAxis *a, Tensor *s, const char *what, Tensor **idx, Tensor **w)
{
    DType t = s->dtype;
    int64_t shape[4] = {s->shape[0], s->shape[1], s->shape[2], 2}, L = a->L;
    Expr *i[4];
    IterVar **ax = op_axes(4, shape);
    op_axis_exprs(ax, 4, i);
    Expr *y = op_read(s, i);
    Expr *low = to_idx(y, 0, L);
    Expr *edge = ir_bin(OP_GE, low, ir_idx(L - 1));
    Expr *first = ir_bin(OP_EQ, i[3], ir_idx(0));
    Expr *body = ir_select(edge, ir_idx(L - 1), ir_select(first, low, add(low, ir_idx(1))));
    if (!(*idx = op_emit(c, op_name(c, ir_fmt("%s_idx", what)), 4, ax, body)))
        return -1;

    ax = op_axes(4, shape);
    op_axis_exprs(ax, 4, i);
    y = op_read(s, i);
    low = to_idx(y, 0, L);
    Expr *frac = ir_select(ir_bin(OP_GE, low, ir_idx(L - 1)), fl(0, t), sub(fclamp(y, 0, (double)L), as_float(low, t)));
    Expr *wt = ir_select(ir_bin(OP_EQ, i[3], ir_idx(0)), sub(fl(1, t), frac), frac);
    Expr *inside = ir_bin(OP_AND, ir_bin(OP_GE, y, fl(-1, t)), ir_bin(OP_LE, y, fl((double)L, t)));
    return (*w = op_emit(c, op_name(c, ir_fmt("%s_w", what)), 4, ax, ir_select(inside, wt, fl(0, t)))) ? 0 : -1;
}

/* Y[r, c, ph, pw] over the samples s and taps t of each bin: the sum (avg, divided by the
 * samples) or the max of wy * wx * X[batch r, c, iy, ix]. The max takes the weighted taps one
 * by one, as the reference does. */
static int roi_pool(OpCtx *c, Tensor *x, Tensor *bi, Tensor *iy, Tensor *wy, Tensor *ix, Tensor *wx, int is_max,
                    const int64_t *shape)
{
    DType t = x->dtype;
    int64_t ratio = iy->shape[2];
    IterVar **ax = op_axes(4, shape);
    Expr *o[4];
    op_axis_exprs(ax, 4, o);
    IterVar *rax[4] = {ir_itervar_new("sy", ratio, IV_REDUCE), ir_itervar_new("sx", ratio, IV_REDUCE),
                       ir_itervar_new("ty", 2, IV_REDUCE), ir_itervar_new("tx", 2, IV_REDUCE)};
    Expr *yi[4] = {o[0], o[2], ir_varref(rax[0]->var), ir_varref(rax[2]->var)};
    Expr *xi4[4] = {o[0], o[3], ir_varref(rax[1]->var), ir_varref(rax[3]->var)};
    Expr *b = op_read(bi, o);
    if (b->dtype != DT_I64)
        b = ir_cast(DT_I64, b);
    b = ir_cast(DT_INDEX, ir_bin(OP_MIN, ir_bin(OP_MAX, b, ir_int(0, DT_I64)), ir_int(x->shape[0] - 1, DT_I64)));
    Expr *xi[4] = {b, o[1], iclamp(op_read(iy, yi), 0, x->shape[2] - 1), iclamp(op_read(ix, xi4), 0, x->shape[3] - 1)};
    Expr *w = ir_cast(t, mul(op_read(wy, yi), op_read(wx, xi4)));
    Expr *body = ir_reduce(is_max ? RED_MAX : RED_SUM, mul(w, op_read(x, xi)), rax, 4);
    if (is_max)
        return op_emit_out(c, 0, 4, ax, body) ? 0 : -1;
    Tensor *acc = op_emit(c, op_name(c, "acc"), 4, ax, body);
    if (!acc)
        return -1;
    ax = op_axes(4, shape);
    op_axis_exprs(ax, 4, o);
    return op_emit_out(c, 0, 4, ax, dv(op_read(acc, o), fl((double)(ratio * ratio), t))) ? 0 : -1;
}

static int roi_align(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X"), *rois = op_input(c, 1, "rois"), *bi = op_input(c, 2, "batch_indices");
    if (!x || !rois || !bi || check_real(c, x, "X") || check_real(c, rois, "rois") || check_nonempty(c, x, "X"))
        return -1;
    if (x->ndim != 4)
        return ir_fail("%s: X must have rank 4 (N, C, H, W), not %d", c->op, x->ndim);
    if (rois->ndim != 2 || rois->shape[1] != 4)
        return ir_fail("%s: rois must have shape (num_rois, 4)", c->op);
    if (bi->ndim != 1 || bi->shape[0] != rois->shape[0] || ir_dtype_is_float(bi->dtype) || bi->dtype == DT_BOOL)
        return ir_fail("%s: batch_indices must be %lld integers, one per roi", c->op, (long long)rois->shape[0]);
    const char *mode = op_attr_str(c, "mode", "avg");
    int is_max = !strcmp(mode, "max");
    if (!is_max && strcmp(mode, "avg"))
        return ir_fail("%s: unknown mode '%s' (avg or max)", c->op, mode);
    /* opset 16 added the half-pixel shift and made it the default */
    const char *ctm = op_attr_str(c, "coordinate_transformation_mode", c->opset < 16 ? "output_half_pixel" : "half_pixel");
    int half = !strcmp(ctm, "half_pixel");
    if (!half && strcmp(ctm, "output_half_pixel"))
        return ir_fail("%s: unknown coordinate_transformation_mode '%s' (half_pixel or output_half_pixel)", c->op, ctm);
    int64_t oh = op_attr_int(c, "output_height", 1), ow = op_attr_int(c, "output_width", 1);
    int64_t ratio = op_attr_int(c, "sampling_ratio", 0);
    if (ratio <= 0)
        return ir_fail("%s: sampling_ratio %lld is not supported: adaptive sampling makes the samples per bin "
                       "follow each roi's size, a loop bound kgen would know only at run time; give a positive "
                       "sampling_ratio",
                       c->op, (long long)ratio);
    if (oh < 1 || ow < 1 || ratio > 4096 || oh > INT32_MAX || ow > INT32_MAX)
        return ir_fail("%s: output_height, output_width must be positive and sampling_ratio at most 4096", c->op);
    int64_t shape[4] = {rois->shape[0], x->shape[1], oh, ow};
    if (op_check_dims(c, 4, shape))
        return -1;
    double scale = op_attr_float(c, "spatial_scale", 1.0);
    RoiAxis ay = {rois, oh, ratio, x->shape[2], scale, half ? 0.5 : 0, !half};
    RoiAxis axx = {rois, ow, ratio, x->shape[3], scale, half ? 0.5 : 0, !half};
    Tensor *sy = roi_samples(c, &ay, 1, 3, "sy"), *sx = sy ? roi_samples(c, &axx, 0, 2, "sx") : NULL;
    Tensor *iy, *wy, *ix, *wx;
    if (!sx || roi_taps(c, &ay, sy, "y", &iy, &wy) || roi_taps(c, &axx, sx, "x", &ix, &wx))
        return -1;
    return roi_pool(c, x, bi, iy, wy, ix, wx, is_max, shape);
}

/* ---------------------------------------------------------------- DeformConv */

typedef struct {
    int ns;
    int64_t k[MAX_SP], stride[MAX_SP], dil[MAX_SP], lo[MAX_SP], hi[MAX_SP], out[MAX_SP];
    int64_t kprod, ogroups;
} Deform;

/* pos_d[n, g, k, o...]: where kernel tap k (flat over the kernel) of output position o
 * samples X along spatial dimension d for offset group g: o*stride - pad + k_d*dilation
 * plus the offset. */
static Tensor *deform_position(OpCtx *c, Tensor *off, const Deform *g, int d)
{
    int ns = g->ns, nd = 3 + ns;
    int64_t shape[KG_MAX_DIMS], kstride = prod(g->k + d + 1, ns - d - 1);
    shape[0] = off->shape[0];
    shape[1] = g->ogroups;
    shape[2] = g->kprod;
    memcpy(shape + 3, g->out, sizeof(int64_t) * (size_t)ns);
    IterVar **ax = op_axes(nd, shape);
    Expr *i[KG_MAX_DIMS], *fi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, i);
    /* the offset channel: (g * K + k) * ns + d */
    fi[0] = i[0];
    fi[1] = add(mul(add(mul(i[1], ir_idx(g->kprod)), i[2]), ir_idx(ns)), ir_idx(d));
    for (int j = 0; j < ns; j++)
        fi[2 + j] = i[3 + j];
    Expr *kd = kstride > 1 ? dv(i[2], ir_idx(kstride)) : i[2];
    if (d > 0)
        kd = ir_bin(OP_MOD, kd, ir_idx(g->k[d]));
    Expr *at = sub(add(mul(i[3 + d], ir_idx(g->stride[d])), mul(kd, ir_idx(g->dil[d]))), ir_idx(g->lo[d]));
    return op_emit(c, op_name(c, ir_fmt("pos%d", d)), nd, ax, add(as_float(at, off->dtype), op_read(off, fi)));
}

/* cols[n, ch, k, o...]: X[n, ch] sampled bilinearly (zero outside) at the positions of
 * ch's offset group, times the mask. */
static Tensor *deform_columns(OpCtx *c, Tensor *x, Tensor *off, Tensor *mask, const Deform *g)
{
    int ns = g->ns, nd = 3 + ns;
    Sampling s = {MODE_LINEAR, PAD_ZEROS, 1};
    Tensor *idx[MAX_SP], *w[MAX_SP];
    for (int d = 0; d < ns; d++) {
        Tensor *pos = deform_position(c, off, g, d);
        if (!pos || tap_tables(c, pos, x->shape[2 + d], &s, x->dtype, ir_fmt("tap%d", d), &idx[d], &w[d]))
            return NULL;
    }
    int64_t shape[KG_MAX_DIMS], C = x->shape[1];
    shape[0] = x->shape[0];
    shape[1] = C;
    shape[2] = g->kprod;
    memcpy(shape + 3, g->out, sizeof(int64_t) * (size_t)ns);
    IterVar **ax = op_axes(nd, shape);
    Expr *i[KG_MAX_DIMS], *pi[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, i);
    Expr *grp = g->ogroups == 1 ? ir_idx(0) : dv(i[1], ir_idx(C / g->ogroups));
    memcpy(pi, i, sizeof(Expr *) * (size_t)nd);
    pi[1] = grp;
    xi[0] = i[0];
    xi[1] = i[1];
    Expr *v = sample(x, 2, xi, idx, w, ns, pi, nd, 2, 1);
    if (mask) {
        Expr *mi[KG_MAX_DIMS];
        mi[0] = i[0];
        mi[1] = add(mul(grp, ir_idx(g->kprod)), i[2]);
        for (int j = 0; j < ns; j++)
            mi[2 + j] = i[3 + j];
        Expr *m = op_read(mask, mi);
        v = mul(v, ir_cast(x->dtype, m));
    }
    return op_emit(c, op_name(c, "cols"), nd, ax, v);
}

/* The kernel and output geometry from the attributes, checked against W, offset, mask and
 * B (mask and B may be NULL). */
static int deform_geometry(OpCtx *c, Tensor *x, Tensor *wt, Tensor *off, Tensor *mask, Tensor *b, Deform *g)
{
    memset(g, 0, sizeof *g);
    int ns = g->ns = x->ndim - 2, nd = x->ndim;
    if (4 + ns > KG_MAX_DIMS)   /* the tap tables: n, group, kernel tap, o..., tap */
        return ir_fail("%s: %d spatial dimensions; at most %d are supported", c->op, ns, KG_MAX_DIMS - 4);
    if (wt->ndim != nd || wt->dtype != x->dtype)
        return ir_fail("%s: W must have X's rank (%d) and type (%s)", c->op, nd, ir_dtype_name(x->dtype));
    int64_t group = op_attr_int(c, "group", 1), C = x->shape[1], M = wt->shape[0];
    g->ogroups = op_attr_int(c, "offset_group", 1);
    if (group < 1 || M % group || wt->shape[1] * group != C)
        return ir_fail("%s: group %lld must divide the output channels (%lld), and W's %lld input channels per "
                       "group times it must be X's %lld channels",
                       c->op, (long long)group, (long long)M, (long long)wt->shape[1], (long long)C);
    if (g->ogroups < 1 || C % g->ogroups)
        return ir_fail("%s: offset_group %lld must divide the input channels (%lld)", c->op, (long long)g->ogroups,
                       (long long)C);
    if (op_spatial_attr(c, "kernel_shape", ns, 1, 1, g->k) || op_spatial_attr(c, "strides", ns, 1, 1, g->stride) ||
        op_spatial_attr(c, "dilations", ns, 1, 1, g->dil) || op_pads_attr(c, ns, g->lo, g->hi, 0))
        return -1;
    for (int i = 0; i < ns; i++) {
        if (op_attr(c, "kernel_shape") && g->k[i] != wt->shape[2 + i])
            return ir_fail("%s: kernel_shape[%d] is %lld but W has %lld", c->op, i, (long long)g->k[i],
                           (long long)wt->shape[2 + i]);
        g->k[i] = wt->shape[2 + i];
        g->out[i] = (x->shape[2 + i] + g->lo[i] + g->hi[i] - ((g->k[i] - 1) * g->dil[i] + 1)) / g->stride[i] + 1;
        if (g->out[i] < 1)
            return ir_fail("%s: the kernel is larger than the padded input in spatial dimension %d", c->op, i);
    }
    g->kprod = prod(g->k, ns);
    if (off->ndim != nd || off->shape[0] != x->shape[0] || off->shape[1] != g->ogroups * g->kprod * ns)
        return ir_fail("%s: offset must have shape (N, offset_group * %lld * %d, output...)", c->op,
                       (long long)g->kprod, ns);
    for (int i = 0; i < ns; i++)
        if (off->shape[2 + i] != g->out[i])
            return ir_fail("%s: offset has %lld positions in spatial dimension %d; the attributes give %lld", c->op,
                           (long long)off->shape[2 + i], i, (long long)g->out[i]);
    if (mask && (mask->ndim != nd || mask->shape[0] != x->shape[0] || mask->shape[1] != g->ogroups * g->kprod ||
                 memcmp(mask->shape + 2, g->out, sizeof(int64_t) * (size_t)ns) || !ir_dtype_is_float(mask->dtype)))
        return ir_fail("%s: mask must be floats of shape (N, offset_group * %lld, output...)", c->op,
                       (long long)g->kprod);
    if (b && (b->ndim != 1 || b->shape[0] != M || b->dtype != x->dtype))
        return ir_fail("%s: B must be a vector of %lld %s values", c->op, (long long)M, ir_dtype_name(x->dtype));
    return 0;
}

/* Y[n, m, o...] = sum(rc, k...: W[m, rc, k...] * cols[n, group(m) * C/group + rc, flat k, o...])
 * (+ B[m]) as the node's output. */
static int deform_contract(OpCtx *c, Tensor *cols, Tensor *wt, Tensor *b, const Deform *g, const int64_t *shape)
{
    int ns = g->ns, nd = ns + 2;
    int64_t M = wt->shape[0], cg = wt->shape[1], group = cols->shape[1] / cg;
    IterVar **ax = op_axes(nd, shape);
    Expr *o[KG_MAX_DIMS], *wi[KG_MAX_DIMS], *ci[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, o);
    IterVar *rax[1 + MAX_SP];
    rax[0] = ir_itervar_new("rc", cg, IV_REDUCE);
    Expr *rc = ir_varref(rax[0]->var);
    wi[0] = o[1];
    wi[1] = rc;
    ci[0] = o[0];
    ci[1] = group == 1 ? rc : add(mul(dv(o[1], ir_idx(M / group)), ir_idx(cg)), rc);
    for (int d = 0; d < ns; d++) {
        rax[1 + d] = ir_itervar_new(ir_fmt("rk%d", d), g->k[d], IV_REDUCE);
        wi[2 + d] = ir_varref(rax[1 + d]->var);
        ci[3 + d] = o[2 + d];
    }
    ci[2] = flatten(wi + 2, g->k, ns);
    Expr *body = ir_reduce(RED_SUM, mul(op_read(wt, wi), op_read(cols, ci)), rax, 1 + ns);
    if (!b)
        return op_emit_out(c, 0, nd, ax, body) ? 0 : -1;
    Tensor *y = op_emit(c, op_name(c, "conv"), nd, ax, body);
    if (!y)
        return -1;
    ax = op_axes(nd, shape);
    op_axis_exprs(ax, nd, o);
    return op_emit_out(c, 0, nd, ax, add(op_read(y, o), op_read(b, &o[1]))) ? 0 : -1;
}

static int deform_conv(OpCtx *c)
{
    Tensor *x = nc_input(c, 0, "X"), *wt = op_input(c, 1, "W"), *off = op_input(c, 2, "offset");
    if (!x || !wt || !off || check_real(c, x, "X") || check_real(c, off, "offset") || check_nonempty(c, x, "X"))
        return -1;
    Tensor *b = op_has_input(c, 3) ? c->in[3] : NULL, *mask = op_has_input(c, 4) ? c->in[4] : NULL;
    Deform g;
    if (deform_geometry(c, x, wt, off, mask, b, &g))
        return -1;
    int64_t shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = wt->shape[0];
    memcpy(shape + 2, g.out, sizeof(int64_t) * (size_t)g.ns);
    if (op_check_dims(c, g.ns + 2, shape))
        return -1;
    Tensor *cols = deform_columns(c, x, off, mask, &g);
    return cols ? deform_contract(c, cols, wt, b, &g, shape) : -1;
}

/* ---------------------------------------------------------------- Col2Im */

/* out[n, c, p...] = sum over the block positions k of input[n, c*K + flat k, flat l] where
 * the block l*stride - pad + k*dilation == p lies inside the grid of blocks. */
static int col2im(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (x->ndim != 3)
        return ir_fail("%s: input must have rank 3 (N, C * prod(block_shape), L), not %d", c->op, x->ndim);
    if (x->dtype == DT_BOOL || ir_dtype_is_storage(x->dtype))
        return ir_fail("%s: input type %s is not supported", c->op, ir_dtype_name(x->dtype));
    int64_t img[MAX_SP + 1], blk[MAX_SP + 1];
    int64_t ns = op_const_ints(c, 1, "image_shape", img, MAX_SP + 1);
    if (ns < 0)
        return -1;
    if (ns < 1 || ns > MAX_SP)
        return ir_fail("%s: image_shape has %lld values; 1 to %d expected", c->op, (long long)ns, MAX_SP);
    int64_t nb = op_const_ints(c, 2, "block_shape", blk, MAX_SP + 1);
    if (nb < 0)
        return -1;
    if (nb != ns)
        return ir_fail("%s: block_shape has %lld values, image_shape %lld", c->op, (long long)nb, (long long)ns);
    int n = (int)ns;
    int64_t stride[MAX_SP], dil[MAX_SP], lo[MAX_SP], hi[MAX_SP], nblk[MAX_SP];
    if (op_spatial_attr(c, "strides", n, 1, 1, stride) || op_spatial_attr(c, "dilations", n, 1, 1, dil) ||
        op_pads_attr(c, n, lo, hi, 0))
        return -1;
    for (int d = 0; d < n; d++) {
        if (img[d] < 1 || blk[d] < 1 || img[d] > INT32_MAX || blk[d] > INT32_MAX)
            return ir_fail("%s: image_shape and block_shape must be positive", c->op);
        nblk[d] = (img[d] + lo[d] + hi[d] - (dil[d] * (blk[d] - 1) + 1)) / stride[d] + 1;
        if (img[d] + lo[d] + hi[d] < dil[d] * (blk[d] - 1) + 1)
            return ir_fail("%s: the block is larger than the padded image in dimension %d", c->op, d);
    }
    int64_t K = prod_capped(blk, n, x->shape[1]), nl = prod_capped(nblk, n, x->shape[2]);
    if (x->shape[1] % K)
        return ir_fail("%s: input dimension 1 (%lld) is not a multiple of the block size %lld", c->op,
                       (long long)x->shape[1], (long long)K);
    if (x->shape[2] != nl)
        return ir_fail("%s: input dimension 2 is %lld; the image holds %lld blocks", c->op, (long long)x->shape[2],
                       (long long)nl);
    int nd = n + 2;
    int64_t shape[KG_MAX_DIMS];
    shape[0] = x->shape[0];
    shape[1] = x->shape[1] / K;
    memcpy(shape + 2, img, sizeof(int64_t) * (size_t)n);
    if (op_check_dims(c, nd, shape))
        return -1;
    IterVar **ax = op_axes(nd, shape);
    Expr *o[KG_MAX_DIMS], *ki[MAX_SP], *li[MAX_SP], *cond = NULL;
    op_axis_exprs(ax, nd, o);
    IterVar *rax[MAX_SP];
    for (int d = 0; d < n; d++) {
        rax[d] = ir_itervar_new(ir_fmt("rk%d", d), blk[d], IV_REDUCE);
        ki[d] = ir_varref(rax[d]->var);
        /* u = p + pad - k*dilation: the block's start times the stride */
        Expr *u = sub(add(o[2 + d], ir_idx(lo[d])), mul(ki[d], ir_idx(dil[d])));
        if (stride[d] == 1) {
            li[d] = u;
            cond = and_(cond, in_range(u, nblk[d]));
        } else {
            li[d] = ir_bin(OP_FLOORDIV, u, ir_idx(stride[d]));
            cond = and_(cond, ir_bin(OP_AND, in_range(u, (nblk[d] - 1) * stride[d] + 1),
                                     ir_bin(OP_EQ, ir_bin(OP_FLOORMOD, u, ir_idx(stride[d])), ir_idx(0))));
        }
    }
    Expr *xi[3] = {o[0], add(mul(o[1], ir_idx(K)), flatten(ki, blk, n)), flatten(li, nblk, n)};
    Expr *body = ir_reduce(RED_SUM, ir_select(cond, op_read(x, xi), op_lit(0, x->dtype)), rax, n);
    return op_emit_out(c, 0, nd, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- CenterCropPad */

/* Each listed axis is cropped or padded (with zeros) to its new length around the
 * centre: out[o] = x[o + (in - new) / 2] when cropping, x[o - (new - in) / 2] when padding. */
static int center_crop_pad(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input_data");
    if (!x)
        return -1;
    int r = x->ndim;
    int64_t axes[KG_MAX_DIMS + 1], sh[KG_MAX_DIMS + 1];
    int na = op_attr_ints(c, "axes", axes, KG_MAX_DIMS + 1);
    if (na < 0)
        for (na = 0; na < r; na++)
            axes[na] = na;
    if (na > r)
        return ir_fail("%s: axes lists %d axes for rank %d", c->op, na, r);
    int64_t ns = op_const_ints(c, 1, "shape", sh, KG_MAX_DIMS + 1);
    if (ns < 0)
        return -1;
    if (ns != na)
        return ir_fail("%s: shape has %lld values for %d axes", c->op, (long long)ns, na);
    int64_t shape[KG_MAX_DIMS], shift[KG_MAX_DIMS] = {0};
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)r);
    int seen[KG_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
        int a;
        if (op_axis(c, axes[i], r, "axis", &a))
            return -1;
        if (seen[a]++)
            return ir_fail("%s: axes lists axis %d twice", c->op, a);
        shape[a] = sh[i];
        shift[a] = x->shape[a] >= sh[i] ? (x->shape[a] - sh[i]) / 2 : -((sh[i] - x->shape[a]) / 2);
    }
    if (op_check_dims(c, r, shape))
        return -1;
    IterVar **ax = op_axes(r, shape);
    Expr *o[KG_MAX_DIMS], *xi[KG_MAX_DIMS], *cond = NULL;
    op_axis_exprs(ax, r, o);
    for (int d = 0; d < r; d++) {
        xi[d] = shift[d] ? add(o[d], ir_idx(shift[d])) : o[d];
        if (shape[d] > x->shape[d])
            cond = and_(cond, in_range(xi[d], x->shape[d]));
    }
    Expr *v = op_read(x, xi);
    return op_emit_out(c, 0, r, ax, cond ? ir_select(cond, v, op_lit(0, x->dtype)) : v) ? 0 : -1;
}

/* ---------------------------------------------------------------- MaxUnpool */

/* The indices (MaxPool's second output) are flat positions in the unpooled tensor of the
 * inferred shape; each output position takes the last input element whose index names it
 * (a search over the input, as a scatter is written here), zero where none does. With
 * output_shape larger than the inferred shape, the unpooled tensor sits at its start. */
static int max_unpool(OpCtx *c)
{
    Tensor *x = nc_input(c, 0, "X"), *ind = op_input(c, 1, "I");
    if (!x || !ind || check_nonempty(c, x, "X"))
        return -1;
    int nd = x->ndim, ns = nd - 2;
    if (ind->ndim != nd || memcmp(ind->shape, x->shape, sizeof(int64_t) * (size_t)nd) ||
        (ind->dtype != DT_I64 && ind->dtype != DT_I32))
        return ir_fail("%s: I must be integer indices of X's shape", c->op);
    int64_t k[MAX_SP], stride[MAX_SP], lo[MAX_SP], hi[MAX_SP], inf[KG_MAX_DIMS], shape[KG_MAX_DIMS + 1];
    if (!op_attr(c, "kernel_shape"))
        return ir_fail("%s: attribute kernel_shape is required", c->op);
    if (op_spatial_attr(c, "kernel_shape", ns, 1, 1, k) || op_spatial_attr(c, "strides", ns, 1, 1, stride) ||
        op_pads_attr(c, ns, lo, hi, 0))
        return -1;
    inf[0] = x->shape[0];
    inf[1] = x->shape[1];
    for (int d = 0; d < ns; d++)
        inf[2 + d] = (x->shape[2 + d] - 1) * stride[d] - (lo[d] + hi[d]) + k[d];
    if (op_check_dims(c, nd, inf))
        return -1;
    memcpy(shape, inf, sizeof(int64_t) * (size_t)nd);
    if (op_has_input(c, 2)) {
        int64_t n = op_const_ints(c, 2, "output_shape", shape, KG_MAX_DIMS + 1);
        if (n < 0)
            return -1;
        if (n != nd)
            return ir_fail("%s: output_shape has %lld values for X of rank %d", c->op, (long long)n, nd);
        for (int d = 0; d < nd; d++)
            if (shape[d] < inf[d] || (d < 2 && shape[d] != inf[d]))
                return ir_fail("%s: output_shape[%d] is %lld; the unpooled shape needs %lld", c->op, d,
                               (long long)shape[d], (long long)inf[d]);
        if (op_check_dims(c, nd, shape))
            return -1;
    }
    int64_t total = prod(inf, nd), nx = ir_tensor_numel(x);

    /* last[p...]: the greatest flat input position whose index is p's flat position, or -1.
     * The search costs input size times output size; an exact scatter has no cheaper form
     * here, since nothing keeps an index inside its pooling window. */
    IterVar **ax = op_axes(nd, inf);
    Expr *p[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, p);
    IterVar *ru = ir_itervar_new("r", nx, IV_REDUCE);
    Expr *u = ir_varref(ru->var);
    unflatten(u, x->shape, nd, xi);
    Expr *iv = op_read(ind, xi);
    if (iv->dtype != DT_I64)
        iv = ir_cast(DT_I64, iv);
    iv = ir_select(ir_bin(OP_LT, iv, ir_int(0, DT_I64)), add(iv, ir_int(total, DT_I64)), iv);
    Expr *hit = ir_bin(OP_EQ, iv, ir_cast(DT_I64, flatten(p, inf, nd)));
    Tensor *last = op_emit(c, op_name(c, "last"), nd, ax, ir_reduce(RED_MAX, ir_select(hit, u, ir_idx(-1)), &ru, 1));
    if (!last)
        return -1;

    ax = op_axes(nd, shape);
    Expr *o[KG_MAX_DIMS], *inside = NULL;
    op_axis_exprs(ax, nd, o);
    for (int d = 2; d < nd; d++)
        if (shape[d] > inf[d])
            inside = and_(inside, ir_bin(OP_LT, o[d], ir_idx(inf[d])));
    Expr *li[KG_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        li[d] = shape[d] > inf[d] ? iclamp(o[d], 0, inf[d] - 1) : o[d];
    Expr *f = op_read(last, li);
    unflatten(iclamp(f, 0, nx - 1), x->shape, nd, xi);
    Expr *found = ir_bin(OP_GE, f, ir_idx(0));
    Expr *v = ir_select(inside ? ir_bin(OP_AND, inside, found) : found, op_read(x, xi), op_lit(0, x->dtype));
    return op_emit_out(c, 0, nd, ax, v) ? 0 : -1;
}

const OpDef op_defs_image[] = {
    {"GridSample", grid_sample},
    {"AffineGrid", affine_grid},
    {"RoiAlign", roi_align},
    {"DeformConv", deform_conv},
    {"Col2Im", col2im},
    {"CenterCropPad", center_crop_pad},
    {"MaxUnpool", max_unpool},
    {NULL, NULL},
};
