/* resize.c - ONNX Resize and Upsample: every mode (nearest, linear, cubic), coordinate
 * transformation and antialias. Along each axis the taps and weights of each output
 * position are compile-time tables computed in double precision as the ONNX reference
 * does; the output reads its input through them. Over extents decided at run time (an
 * input with run-time dims, or sizes from Shape) the tables cannot be made: nearest and
 * linear compute each position's taps and weights in the kernel instead (resize_dyn). */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- Resize, Upsample */

/* Resize is separable: along each axis, output position o reads a few input positions
 * with weights that depend on o only. Those are computed here, in double precision like
 * the ONNX reference, and become constant tables: idx[o][t] and w[o][t]. */

typedef enum { RS_NEAREST, RS_LINEAR, RS_CUBIC } ResizeMode;
typedef enum {
    CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_NN, CT_TF_CROP_AND_RESIZE
} CoordMode;
typedef enum { NR_ROUND_PREFER_FLOOR, NR_ROUND_PREFER_CEIL, NR_FLOOR, NR_CEIL } NearestMode;

typedef struct {
    ResizeMode mode;
    CoordMode ct;
    NearestMode nearest;
    double a;               /* cubic coefficient */
    int exclude_outside, antialias;
} ResizeOpts;

#define MAX_TAPS 64

typedef struct {
    int n;                  /* taps per output position */
    int32_t *idx;           /* [out][n] */
    double *w;              /* [out][n] */
    uint8_t *outside;       /* [out]: tf_crop_and_resize extrapolates there */
    int any_outside, unit;  /* unit: one tap of weight 1 everywhere */
    int identity;           /* unit and idx[o] == o */
} AxisTable;

static double cubic_w(double x, double a)
{
    x = fabs(x);
    if (x <= 1)
        return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* The coefficients for fraction `ratio` in (0, 1]; returns their count. */
static int resize_coeffs(const ResizeOpts *o, double ratio, double scale, double *cf)
{
    switch (o->mode) {
    case RS_NEAREST: {
        int hi;
        if (ratio == 1)
            hi = 1;
        else if (o->nearest == NR_ROUND_PREFER_FLOOR)
            hi = ratio > 0.5;
        else if (o->nearest == NR_ROUND_PREFER_CEIL)
            hi = ratio >= 0.5;
        else
            hi = o->nearest == NR_CEIL;
        cf[0] = !hi;
        cf[1] = hi;
        return 2;
    }
    case RS_LINEAR: {
        if (!o->antialias) {
            cf[0] = 1 - ratio;
            cf[1] = ratio;
            return 2;
        }
        double s = scale < 1 ? scale : 1, sum = 0;
        if (!(s * MAX_TAPS > 2))
            return -1;
        int64_t start = (int64_t)floor(-1 / s) + 1, n = 2 - 2 * start;
        if (n > MAX_TAPS)
            return -1;
        for (int64_t i = 0; i < n; i++) {
            double v = 1 - fabs(((double)(start + i) - ratio) * s);
            cf[i] = v < 0 ? 0 : v > 1 ? 1 : v;
            sum += cf[i];
        }
        for (int64_t i = 0; i < n; i++)
            cf[i] /= sum;
        return (int)n;
    }
    case RS_CUBIC: {
        if (!o->antialias) {
            cf[0] = cubic_w(ratio + 1, o->a);
            cf[1] = cubic_w(ratio, o->a);
            cf[2] = cubic_w(1 - ratio, o->a);
            cf[3] = cubic_w(2 - ratio, o->a);
            return 4;
        }
        double s = scale < 1 ? scale : 1, sum = 0;
        if (!(s * MAX_TAPS > 4))
            return -1;
        int64_t start = (int64_t)floor(-2 / s) + 1, n = 2 - 2 * start;
        if (n > MAX_TAPS)
            return -1;
        for (int64_t i = 0; i < n; i++) {
            cf[i] = cubic_w(s * ((double)(start + i) - ratio), o->a);
            sum += cf[i];
        }
        for (int64_t i = 0; i < n; i++)
            cf[i] /= sum;
        return (int)n;
    }
    }
    return -1;
}

/* Tables for one axis: input size L, output size O. */
static int axis_table(OpCtx *c, const ResizeOpts *o, int64_t L, int64_t O, double scale, double out_w,
                      double out_w_m1, double roi0, double roi_len, AxisTable *t)
{
    double cf[MAX_TAPS];
    int64_t nb[MAX_TAPS];
    int32_t *ti = malloc(sizeof *ti * (size_t)O * MAX_TAPS);
    double *tw = malloc(sizeof *tw * (size_t)O * MAX_TAPS);
    int *cnt = malloc(sizeof *cnt * (size_t)O);
    t->outside = ir_alloc((size_t)O);
    if (!ti || !tw || !cnt)
        ir_die("out of memory");
    int maxn = 1;
    /* an axis of scale 1 and as many outputs as inputs (a tensor's channels) is read as it
     * is, whatever the coordinate mode: tf_half_pixel_for_nn's (o + 0.5) / 1 under
     * nearest_mode ceil would take each channel's neighbour (onnxruntime, and the Resize
     * over run-time extents below, keep the axis as it is): asymmetric's x / 1 */
    int keep = scale == 1 && O == L && o->ct != CT_TF_CROP_AND_RESIZE;
    for (int64_t x = 0; x < O; x++) {
        double xo = 0, xd = (double)x;
        switch (keep ? CT_ASYMMETRIC : o->ct) {
        case CT_HALF_PIXEL: xo = (xd + 0.5) / scale - 0.5; break;
        case CT_HALF_PIXEL_SYM: {
            double adj = (double)O / out_w, center = (double)L / 2;
            xo = center * (1 - adj) + (xd + 0.5) / scale - 0.5;
            break;
        }
        case CT_PYTORCH_HALF_PIXEL: xo = out_w == 1 ? -0.5 : (xd + 0.5) / scale - 0.5; break;
        case CT_ALIGN_CORNERS: xo = out_w == 1 ? 0 : xd * (double)(L - 1) / out_w_m1; break;
        case CT_ASYMMETRIC: xo = xd / scale; break;
        case CT_TF_HALF_PIXEL_NN: xo = (xd + 0.5) / scale; break;
        case CT_TF_CROP_AND_RESIZE:
            if (out_w == 1)
                xo = roi_len * (double)(L - 1) / 2;
            else
                xo = xd * roi_len * (double)(L - 1) / out_w_m1;
            xo += roi0 * (double)(L - 1);
            if (xo < 0 || xo > (double)(L - 1)) {
                t->outside[x] = 1;
                t->any_outside = 1;
                cnt[x] = 1;
                ti[x * MAX_TAPS] = 0;
                tw[x * MAX_TAPS] = 1;
                continue;
            }
            break;
        }
        if (!(fabs(xo) < 1e15)) {
            free(ti), free(tw), free(cnt);
            return ir_fail("%s: output position %lld maps to input coordinate %g", c->op, (long long)x, xo);
        }
        double fl = floor(xo), ratio = xo == fl ? 1 : xo - fl;
        int n = resize_coeffs(o, ratio, scale, cf);
        if (n < 0) {
            free(ti), free(tw), free(cnt);
            return ir_fail("%s: the antialiasing filter is too wide (scale %g)", c->op, scale);
        }
        /* the n taps, in the coefficients' order: b - n / 2 + 1 .. b + n / 2, b the
         * coordinate's floor, or one below it where the coordinate is whole (ratio 1); in the
         * input edge-padded by pad elements a side. Counted from b, not as the n integers
         * nearest to xo + pad: a coordinate a rounding error above a whole number (15 + 2e-15:
         * linear 62 -> 42 columns, pytorch_half_pixel) has ratio 2e-15, but xo + pad rounds
         * to the whole number itself, whose nearest two start one lower. */
        int64_t pad = (n + 1) / 2, b = (int64_t)fl - (xo == fl);
        for (int i = 0; i < n; i++) {
            int64_t at = b + 1 - n / 2 + i + pad;
            nb[i] = at < 0 ? 0 : at >= L + 2 * pad ? L + 2 * pad - 1 : at;
        }
        if (o->exclude_outside) {
            double sum = 0;
            for (int i = 0; i < n; i++) {
                if (nb[i] - pad < 0 || nb[i] - pad >= L)
                    cf[i] = 0;
                sum += cf[i];
            }
            for (int i = 0; i < n; i++)
                cf[i] /= sum;
        }
        /* merge the taps that read the same (edge-clamped) element, drop zero weights */
        int m = 0;
        for (int i = 0; i < n; i++) {
            int64_t src = nb[i] - pad;
            src = src < 0 ? 0 : src >= L ? L - 1 : src;
            if (cf[i] == 0)
                continue;
            int j = 0;
            while (j < m && ti[x * MAX_TAPS + j] != src)
                j++;
            if (j == m) {
                ti[x * MAX_TAPS + m] = (int32_t)src;
                tw[x * MAX_TAPS + m++] = 0;
            }
            tw[x * MAX_TAPS + j] += cf[i];
        }
        if (m == 0) {
            ti[x * MAX_TAPS] = 0;
            tw[x * MAX_TAPS] = 0;
            m = 1;
        }
        cnt[x] = m;
        if (m > maxn)
            maxn = m;
    }
    t->n = maxn;
    t->idx = ir_alloc(sizeof *t->idx * (size_t)O * (size_t)maxn);
    t->w = ir_alloc(sizeof *t->w * (size_t)O * (size_t)maxn);
    t->unit = maxn == 1;
    t->identity = O == L;
    for (int64_t x = 0; x < O; x++)
        for (int i = 0; i < maxn; i++) {
            int have = i < cnt[x];
            t->idx[x * maxn + i] = have ? ti[x * MAX_TAPS + i] : 0;
            t->w[x * maxn + i] = have ? tw[x * MAX_TAPS + i] : 0;
            if (maxn == 1 && (t->w[x] != 1 || t->outside[x]))
                t->unit = 0;
        }
    for (int64_t x = 0; x < O && t->identity; x++)
        t->identity = t->unit && t->idx[x] == x;
    free(ti);
    free(tw);
    free(cnt);
    return 0;
}

/* Is any axis's position outside the crop (tf_crop_and_resize)? NULL: never. */
static Expr *outside_expr(Tensor **flags, int r, Expr **o)
{
    Expr *e = NULL;
    for (int d = 0; d < r; d++)
        if (flags[d]) {
            Expr *f = op_read(flags[d], &o[d]);
            e = e ? ir_bin(OP_OR, e, f) : f;
        }
    return e;
}

/* Build the output from the per-axis tables:
 *   out[o] = sum over taps t of prod_d w_d[o_d][t_d] * x[idx_d[o_d][t_d]...]
 * with no arithmetic at all where every axis has one tap of weight 1 (nearest). */
static int resize_emit(OpCtx *c, Tensor *x, const int64_t *os, AxisTable *tabs, double extrap)
{
    int r = x->ndim;
    DType ct = ir_dtype_is_float(x->dtype) ? x->dtype : DT_F64;
    int exact = 1;
    for (int d = 0; d < r; d++)
        exact = exact && tabs[d].unit;
    if (ir_dtype_is_storage(x->dtype) && !exact)
        return ir_fail("%s: unsupported type %s (only nearest mode copies it)", c->op, ir_dtype_name(x->dtype));
    if (op_check_dims(c, r, os))
        return -1;
    Tensor *ti[KG_MAX_DIMS] = {0}, *tw[KG_MAX_DIMS] = {0}, *tf[KG_MAX_DIMS] = {0};
    for (int d = 0; d < r; d++) {
        AxisTable *t = &tabs[d];
        int64_t sh[2] = {os[d], t->n};
        if (!t->identity && !(ti[d] = op_const_tensor(c, ir_fmt("idx%d", d), DT_I32, 2, sh, t->idx)))
            return -1;
        if (!exact && !t->unit) {
            void *wd = ir_alloc((size_t)(os[d] * t->n) * (size_t)ir_dtype_bytes(ct));
            for (int64_t k = 0; k < os[d] * t->n; k++) {
                if (ct == DT_F32)
                    ((float *)wd)[k] = (float)t->w[k];
                else
                    ((double *)wd)[k] = t->w[k];
            }
            if (!(tw[d] = op_const_tensor(c, ir_fmt("w%d", d), ct, 2, sh, wd)))
                return -1;
        }
        if (t->any_outside && !(tf[d] = op_const_tensor(c, ir_fmt("crop%d", d), DT_BOOL, 1, sh, t->outside)))
            return -1;
    }
    IterVar **ax = op_axes(r, os);
    Expr *o[KG_MAX_DIMS], *ix[KG_MAX_DIMS], *w = NULL;
    op_axis_exprs(ax, r, o);
    IterVar *rax[KG_MAX_DIMS];
    int nr = 0;
    for (int d = 0; d < r; d++) {
        if (!ti[d]) {
            ix[d] = o[d];
            continue;
        }
        Expr *tap = ir_idx(0);
        if (tabs[d].n > 1) {
            rax[nr] = ir_itervar_new(ir_fmt("t%d", d), tabs[d].n, IV_REDUCE);
            tap = ir_varref(rax[nr++]->var);
        }
        Expr *tix[2] = {o[d], tap};
        ix[d] = op_read(ti[d], tix);   /* the tables hold in-range indices only */
        if (tw[d]) {
            Expr *we = op_read(tw[d], tix);
            w = w ? ir_bin(OP_MUL, w, we) : we;
        }
    }
    Expr *v = op_read(x, ix);
    if (!exact) {
        if (v->dtype != ct)
            v = ir_cast(ct, v);
        if (w)
            v = ir_bin(OP_MUL, w, v);
    }
    Expr *body = nr ? ir_reduce(RED_SUM, v, rax, nr) : v;
    Expr *outside = outside_expr(tf, r, o);
    if (body->dtype == x->dtype && !outside)
        return op_emit_out(c, 0, r, ax, body) ? 0 : -1;
    if (nr) {
        /* a stage reduction first, then the cast and the extrapolation */
        Tensor *acc = op_emit(c, op_name(c, "acc"), r, ax, body);
        if (!acc)
            return -1;
        ax = op_axes(r, os);
        op_axis_exprs(ax, r, o);
        body = op_read(acc, o);
        outside = outside_expr(tf, r, o);
    }
    if (body->dtype != x->dtype)
        body = ir_cast(x->dtype, body);
    if (outside)
        body = ir_select(outside, op_lit(extrap, x->dtype), body);
    return op_emit_out(c, 0, r, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- over run-time extents */

/* One axis of a Resize whose extents may be decided at run time. The input coordinate of
 * output position o is the fraction A / B of index expressions (B > 0), exact in integers
 * for every coordinate mode below: with the scale as a ratio onum / lnum (sizes: O / L;
 * a constant scale s: p / q),
 *   asymmetric            o / s               = o * lnum / onum
 *   half_pixel            (o + 0.5) / s - 0.5 = ((2o + 1) * lnum - onum) / (2 onum)
 *   pytorch_half_pixel    the same, 0 where O is 1
 *   tf_half_pixel_for_nn  (o + 0.5) / s       = (2o + 1) * lnum / (2 onum)
 *   align_corners         o * (L - 1) / (O - 1), with O the resized length (s * L for a scale)
 * so nearest rounds it in integers (no tie decided by a float's rounding) and linear's
 * weight is the remainder over B, converted once. */
typedef struct {
    int identity;       /* O is L and the scale 1: out[o] reads in[o] */
    Expr *L, *O;        /* the input and output extents */
    Expr *A, *B;        /* the coordinate, A / B */
} DynAxis;

/* floor(a / b) for b > 0, and the ceiling */
static Expr *fdiv(Expr *a, Expr *b) { return ir_bin(OP_FLOORDIV, a, b); }
static Expr *cdiv(Expr *a, Expr *b) { return ir_un(UN_NEG, fdiv(ir_un(UN_NEG, a), b)); }
static Expr *clamp_index(Expr *i, Expr *L)
{
    return ir_bin(OP_MIN, ir_bin(OP_MAX, i, ir_idx(0)), ir_sub(L, ir_idx(1)));
}

/* The input coordinate A / B of output position o along axis a (a->L, a->O set):
 * onum / lnum the scale, len_num / len_den the resized length (align_corners). */
static void dyn_coord(const ResizeOpts *o, DynAxis *a, Expr *ov, Expr *onum, Expr *lnum, Expr *len_num,
                      Expr *len_den)
{
    Expr *two_o1 = ir_add(ir_mul(ir_idx(2), ov), ir_idx(1));
    switch (o->ct) {
    case CT_ASYMMETRIC: a->A = ir_mul(ov, lnum); a->B = onum; break;
    case CT_TF_HALF_PIXEL_NN: a->A = ir_mul(two_o1, lnum); a->B = ir_mul(ir_idx(2), onum); break;
    case CT_ALIGN_CORNERS:
        /* o (L - 1) / (len - 1) = o (L - 1) len_den / (len_num - len_den); len 1: o is 0 */
        a->A = ir_mul(ir_mul(ov, ir_sub(a->L, ir_idx(1))), len_den);
        a->B = ir_bin(OP_MAX, ir_sub(len_num, len_den), ir_idx(1));
        break;
    default:   /* half_pixel, pytorch_half_pixel */
        a->A = ir_sub(ir_mul(two_o1, lnum), onum);
        a->B = ir_mul(ir_idx(2), onum);
        if (o->ct == CT_PYTORCH_HALF_PIXEL) {
            int64_t lo, hi;
            ir_const_bounds(a->O, NULL, &lo, &hi);
            if (hi == 1)
                a->A = ir_idx(0);
            else if (lo == 1)
                a->A = ir_select(ir_bin(OP_EQ, a->O, ir_idx(1)), ir_idx(0), a->A);
        }
        break;
    }
    a->A = ir_simplify(a->A, NULL);
    a->B = ir_simplify(a->B, NULL);
}

/* Nearest's input position along a from its coordinate, before the clamp. */
static Expr *dyn_nearest(const ResizeOpts *o, const DynAxis *a)
{
    Expr *A2 = ir_mul(ir_idx(2), a->A), *B2 = ir_mul(ir_idx(2), a->B);
    switch (o->nearest) {
    case NR_FLOOR: return fdiv(a->A, a->B);
    case NR_CEIL: return cdiv(a->A, a->B);
    case NR_ROUND_PREFER_CEIL: return fdiv(ir_add(A2, a->B), B2);         /* floor(x + 1/2) */
    case NR_ROUND_PREFER_FLOOR: return cdiv(ir_sub(A2, a->B), B2);        /* ceil(x - 1/2) */
    }
    return NULL;
}

/* Nearest's input position n (of output position v < O) clamped to [0, L), or n itself
 * where it stays there for every value of the dims (ir_dims_bounds: n grows with v, so its
 * ends decide; an integer scale's floor(v / 2) for v < 2 L) and the program's check can
 * see it below a product of extents within x's bound (ir_dyn_index_below over the output
 * axes ax, which take their run-time extents). */
static Expr *nearest_clamped(const Program *p, const Tensor *x, int d, IterVar **ax, Expr *n, const DynAxis *a)
{
    Var *v = ax[d]->var;
    Expr *first = ir_idx(0), *last = ir_sub(a->O, ir_idx(1));
    int64_t lo, hi;
    Tensor out;
    memset(&out, 0, sizeof out);
    out.ndim = x->ndim;
    for (int k = 0; k < x->ndim; k++)
        out.axes[k] = ax[k];
    RangeMap m = {0};
    IrProd u;
    if (ir_dims_bounds(p, ir_simplify(ir_subst(n, &v, &first, 1), NULL), &lo, &hi) && lo >= 0 &&
        ir_dims_bounds(p, ir_simplify(ir_sub(ir_sub(a->L, ir_idx(1)), ir_subst(n, &v, &last, 1)), NULL), &lo, &hi) &&
        lo >= 0 && ir_dyn_index_below(&out, n, &m, &u) && ir_dims_bounds(p, ir_prod_expr(&u), &lo, &hi) &&
        hi <= x->shape[d])
        return n;
    return clamp_index(n, a->L);
}

/* Resize over run-time extents: out_ext[d] is each axis's output extent (NULL: as the
 * input's) and os[d] its bound, scale_p/scale_q each resized axis's constant scale as p / q
 * (q 0: sizes). */
static int resize_dyn(OpCtx *c, Tensor *x, const ResizeOpts *o, Expr **out_ext, const int64_t *os,
                      const int64_t *scale_p, const int64_t *scale_q)
{
    int r = x->ndim;
    const char *what = o->mode == RS_CUBIC ? "mode cubic"
                       : o->antialias  ? "antialias"
                       : o->ct == CT_TF_CROP_AND_RESIZE || o->ct == CT_HALF_PIXEL_SYM
                           ? ir_fmt("coordinate_transformation_mode %s",
                                    op_attr_str(c, "coordinate_transformation_mode", ""))
                           : NULL;
    if (what)
        return ir_fail("%s: %s over extents decided at run time is not supported (nearest and linear without "
                       "antialias are, in coordinate modes asymmetric, half_pixel, pytorch_half_pixel, "
                       "align_corners and tf_half_pixel_for_nn)", c->op, what);
    DType ct = x->dtype;
    if (o->mode == RS_LINEAR && (!ir_dtype_is_float(ct) || ir_dtype_is_storage(ct)))
        return ir_fail("%s: linear mode over extents decided at run time on type %s (float and double are "
                       "supported)", c->op, ir_dtype_name(ct));
    DynAxis ax_[KG_MAX_DIMS];
    memset(ax_, 0, sizeof ax_);
    for (int d = 0; d < r; d++) {
        DynAxis *a = &ax_[d];
        a->L = ir_tensor_dim(x, d);
        a->O = out_ext[d] ? out_ext[d] : a->L;
        int64_t lo, hi, lv, ov;
        if (!ir_dims_bounds(c->prog, a->O, &lo, &hi) || hi > os[d])
            ir_die("resize: output dim %d's extent is not within its bound", d);
        if (lo < 1)
            return ir_fail("%s: output dim %d can be %lld at the dims' lower ends (at least 1 is needed)", c->op, d,
                           (long long)lo);
        a->identity = !out_ext[d] || (scale_q[d] ? scale_p[d] == scale_q[d]
                                                   : ir_expr_equal(a->O, a->L) ||
                                                         (ir_expr_is_const(a->O, &ov) &&
                                                          ir_expr_is_const(a->L, &lv) && ov == lv));
    }
    if (op_check_dims(c, r, os))
        return -1;
    IterVar **ax = op_axes(r, os);
    Expr *ov[KG_MAX_DIMS];
    op_axis_exprs(ax, r, ov);
    /* the taps: one per nearest axis, two per linear one (i0 and i0 + 1, weights 1 - f, f) */
    Expr *i0[KG_MAX_DIMS], *frac[KG_MAX_DIMS];
    int lin[KG_MAX_DIMS], nlin = 0;
    RangeMap m = {0};
    for (int d = 0; d < r; d++) {
        DynAxis *a = &ax_[d];
        lin[d] = 0;
        ax[d]->dyn = a->O->kind == E_INT ? NULL : a->O;
        if (a->identity) {
            i0[d] = ov[d];
            continue;
        }
        Expr *onum = scale_q[d] ? ir_idx(scale_p[d]) : a->O, *lnum = scale_q[d] ? ir_idx(scale_q[d]) : a->L;
        Expr *len_num = scale_q[d] ? ir_mul(a->L, ir_idx(scale_p[d])) : a->O;
        Expr *len_den = scale_q[d] ? ir_idx(scale_q[d]) : ir_idx(1);
        dyn_coord(o, a, ov[d], onum, lnum, len_num, len_den);
        int64_t alo, ahi, blo, bhi;
        ir_range_push(&m, ax[d]->var, 0, os[d] - 1);
        int ok = ir_const_bounds(a->A, &m, &alo, &ahi) && ir_const_bounds(a->B, &m, &blo, &bhi);
        ir_range_pop(&m);
        const int64_t big = INT32_MAX / 4;   /* room for nearest's 2A + B */
        if (!ok || alo < -big || ahi > big || blo < 1 || bhi > big)
            return ir_fail("%s: the input coordinates of dim %d, decided at run time, pass index arithmetic", c->op,
                           d);
        if (o->mode == RS_NEAREST) {
            Expr *n = nearest_clamped(c->prog, x, d, ax, dyn_nearest(o, a), a);
            i0[d] = n;
            /* over a divisor decided at run time (sizes from Shape), or an output extent
             * decided then (constant scales), the input position as a table over the output
             * coordinate, computed once per run (the static build's is a constant): per
             * element, the division took a U-Net's final nearest Resize, fused into its Add,
             * to 3 times the static build's time; with constant scales the inline floor
             * divisions and clamps ran tests/dyn/resizes 1.12-1.40x the static build's time,
             * 1.02-1.30x with the table */
            if (ir_expr_uses_dims(a->B) || ax[d]->dyn) {
                IterVar **u = op_axes(1, &os[d]);
                u[0]->dyn = ax[d]->dyn;
                Expr *uv = ir_varref(u[0]->var), *at = ov[d];
                Var *v = ax[d]->var;
                Tensor *tn = op_emit(c, op_name(c, ir_fmt("idx%d", d)), 1, u, ir_cast(DT_I32, ir_subst(n, &v, &uv, 1)));
                if (!tn)
                    return -1;
                i0[d] = op_read(tn, &at);
            }
            continue;
        }
        lin[d] = 1;
        nlin++;
        Expr *fl = fdiv(a->A, a->B);
        i0[d] = fl;
        /* f = (A - floor(A / B) B) / B: A mod B, exact, over B */
        frac[d] = ir_bin(OP_DIV, ir_cast(ct, ir_bin(OP_FLOORMOD, a->A, a->B)), ir_cast(ct, a->B));
    }
    if (nlin > 3)
        return ir_fail("%s: linear over %d axes with extents decided at run time (3 at most)", c->op, nlin);
    /* a linear axis's taps and weights as tables over its output coordinate, computed once
     * per run (the static build's are constants): per element, the coordinates' divisions
     * and clamps ran the Resize 2 to 3 times the static build's time */
    Expr *tap[KG_MAX_DIMS][2];
    for (int d = 0; d < r; d++) {
        if (!lin[d])
            continue;
        IterVar **u = op_axes(1, &os[d]);
        u[0]->dyn = ax[d]->dyn;
        Expr *uv = ir_varref(u[0]->var), *at = ov[d];
        Var *v = ax[d]->var;
        Expr *lo = ir_subst(i0[d], &v, &uv, 1);
        Tensor *tl = op_emit(c, op_name(c, ir_fmt("lo%d", d)), 1, u, ir_cast(DT_I32, clamp_index(lo, ax_[d].L)));
        Tensor *th = op_emit(c, op_name(c, ir_fmt("hi%d", d)), 1, u,
                             ir_cast(DT_I32, clamp_index(ir_add(lo, ir_idx(1)), ax_[d].L)));
        Tensor *tf = op_emit(c, op_name(c, ir_fmt("frac%d", d)), 1, u, ir_subst(frac[d], &v, &uv, 1));
        if (!tl || !th || !tf)
            return -1;
        tap[d][0] = op_read(tl, &at);
        tap[d][1] = op_read(th, &at);
        frac[d] = op_read(tf, &at);
    }
    Expr *body = NULL;
    for (int t = 0; t < 1 << nlin; t++) {
        Expr *ix[KG_MAX_DIMS], *w = NULL;
        for (int d = 0, k = 0; d < r; d++) {
            if (!lin[d]) {
                ix[d] = i0[d];
                continue;
            }
            int hi = (t >> k++) & 1;
            ix[d] = tap[d][hi];
            Expr *wd = hi ? frac[d] : ir_bin(OP_SUB, op_lit(1, ct), frac[d]);
            w = w ? ir_bin(OP_MUL, w, wd) : wd;
        }
        Expr *v = op_read(x, ix);
        if (w)
            v = ir_bin(OP_MUL, w, v);
        body = body ? ir_bin(OP_ADD, body, v) : v;
    }
    return op_emit_out(c, 0, r, ax, body) ? 0 : -1;
}

static int parse_resize_opts(OpCtx *c, ResizeOpts *o, int legacy)
{
    memset(o, 0, sizeof *o);
    const char *m = op_attr_str(c, "mode", "nearest");
    if (!strcmp(m, "nearest"))
        o->mode = RS_NEAREST;
    else if (!strcmp(m, "linear") || !strcmp(m, "bilinear") || !strcmp(m, "trilinear"))
        o->mode = RS_LINEAR;
    else if (!strcmp(m, "cubic"))
        o->mode = RS_CUBIC;
    else
        return ir_fail("%s: unknown mode '%s'", c->op, m);
    if (legacy) {
        /* Upsample and Resize-10: asymmetric coordinates, nearest rounds down */
        o->ct = CT_ASYMMETRIC;
        o->nearest = NR_FLOOR;
        if (o->mode == RS_CUBIC)
            return ir_fail("%s: mode 'cubic' needs opset 11 or later", c->op);
        return 0;
    }
    static const char *const cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    const char *ct = op_attr_str(c, "coordinate_transformation_mode", "half_pixel");
    int i = 0;
    while (i < 7 && strcmp(ct, cts[i]))
        i++;
    if (i == 7)
        return ir_fail("%s: unknown coordinate_transformation_mode '%s'", c->op, ct);
    o->ct = (CoordMode)i;
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *nm = op_attr_str(c, "nearest_mode", "round_prefer_floor");
    for (i = 0; i < 4 && strcmp(nm, nms[i]); i++)
        ;
    if (i == 4)
        return ir_fail("%s: unknown nearest_mode '%s'", c->op, nm);
    o->nearest = (NearestMode)i;
    o->a = op_attr_float(c, "cubic_coeff_a", -0.75);
    o->exclude_outside = (int)op_attr_int(c, "exclude_outside", 0);
    o->antialias = (int)op_attr_int(c, "antialias", 0);
    if (o->antialias && o->mode == RS_NEAREST)
        return ir_fail("%s: antialias is not defined for mode 'nearest'", c->op);
    return 0;
}

/* Shared by Resize and Upsample. scales/sizes are over `axes` (naxes of them) or NULL. */
static int resize_common(OpCtx *c, Tensor *x, const ResizeOpts *o, const double *scales, int scales_f32,
                         const int64_t *sizes, const int64_t *axes, int naxes, const double *roi, int roi_f32)
{
    int r = x->ndim;
    double sc[KG_MAX_DIMS], ow[KG_MAX_DIMS], owm1[KG_MAX_DIMS], r0[KG_MAX_DIMS], r1[KG_MAX_DIMS];
    int64_t os[KG_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        sc[d] = 1;
        os[d] = x->shape[d];
        r0[d] = 0;
        r1[d] = 1;
    }
    for (int i = 0; i < naxes; i++) {
        int d = (int)axes[i];
        if (roi) {
            r0[d] = roi[i];
            r1[d] = roi[naxes + i];
        }
    }
    if (sizes) {
        for (int i = 0; i < naxes; i++) {
            if (sizes[i] < 1)
                return ir_fail("%s: sizes[%d] is %lld", c->op, i, (long long)sizes[i]);
            os[axes[i]] = sizes[i];
            sc[axes[i]] = (double)sizes[i] / (double)x->shape[axes[i]];
        }
        const char *pol = op_attr_str(c, "keep_aspect_ratio_policy", "stretch");
        int nl = !strcmp(pol, "not_larger"), ns = !strcmp(pol, "not_smaller");
        if (!nl && !ns && strcmp(pol, "stretch"))
            return ir_fail("%s: unknown keep_aspect_ratio_policy '%s'", c->op, pol);
        if (nl || ns) {
            double s = sc[axes[0]];
            for (int i = 1; i < naxes; i++)
                s = nl ? fmin(s, sc[axes[i]]) : fmax(s, sc[axes[i]]);
            for (int i = 0; i < naxes; i++) {
                int d = (int)axes[i];
                sc[d] = s;
                os[d] = (int64_t)(s * (double)x->shape[d] + 0.5);
            }
        }
        for (int d = 0; d < r; d++)
            ow[d] = sc[d] * (double)x->shape[d];
    } else {
        for (int i = 0; i < naxes; i++) {
            double s = scales[i];
            if (!(s > 0) || s * (double)x->shape[axes[i]] > INT32_MAX)
                return ir_fail("%s: scales[%d] is %g", c->op, i, s);
            sc[axes[i]] = s;
            os[axes[i]] = (int64_t)floor(s * (double)x->shape[axes[i]]);
        }
        for (int d = 0; d < r; d++)
            ow[d] = scales_f32 ? (double)(float)(sc[d] * (double)x->shape[d]) : sc[d] * (double)x->shape[d];
    }
    for (int d = 0; d < r; d++)
        owm1[d] = scales_f32 && !sizes ? (double)(float)(ow[d] - 1) : ow[d] - 1;
    if (op_check_dims(c, r, os))
        return -1;
    AxisTable tabs[KG_MAX_DIMS];
    memset(tabs, 0, sizeof tabs);
    for (int d = 0; d < r; d++) {
        double a0 = r0[d], dr = r1[d] - a0;
        if (roi_f32)
            dr = (double)(float)dr;
        if (axis_table(c, o, x->shape[d], os[d], sc[d], ow[d], owm1[d], a0, dr, &tabs[d]))
            return -1;
    }
    return resize_emit(c, x, os, tabs, op_attr_float(c, "extrapolation_value", 0));
}

/* Constant scales over an input with run-time dims: each scale as a ratio p / q of small
 * integers (2, 0.5, 1.5: the float's exact value), the output extent floor(L * p / q). */
static int resize_scales_dyn(OpCtx *c, Tensor *x, const ResizeOpts *o, const double *scales, const int64_t *axes,
                             int naxes, int have_roi)
{
    Expr *ext[KG_MAX_DIMS] = {0};
    int64_t p[KG_MAX_DIMS] = {0}, q[KG_MAX_DIMS] = {0}, os[KG_MAX_DIMS];
    memcpy(os, x->shape, sizeof *os * (size_t)x->ndim);
    if (have_roi)
        return ir_fail("%s: a roi over extents decided at run time is not supported", c->op);
    for (int i = 0; i < naxes; i++) {
        int d = (int)axes[i];
        double s = scales[i];
        int64_t k = 1;
        while (k <= 64 && !(s * (double)k == floor(s * (double)k)))
            k++;
        if (!(s > 0) || k > 64 || s * (double)k > 4096)
            return ir_fail("%s: scales[%d] is %g; over a dim decided at run time kgen takes a scale that is a "
                           "ratio p / q of integers (q at most 64)", c->op, i, s);
        p[d] = (int64_t)(s * (double)k);
        q[d] = k;
        Expr *L = ir_tensor_dim(x, d);
        ext[d] = ir_simplify(fdiv(ir_mul(L, ir_idx(p[d])), ir_idx(q[d])), NULL);
        os[d] = x->shape[d] * p[d] / q[d];   /* at the input's bound */
    }
    return resize_dyn(c, x, o, ext, os, p, q);
}

static int resize(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    int r = x->ndim, legacy = c->opset < 11;
    if (r < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    ResizeOpts o;
    if (parse_resize_opts(c, &o, legacy))
        return -1;
    int64_t axes[KG_MAX_DIMS];
    int naxes = op_attr_ints(c, "axes", axes, KG_MAX_DIMS);
    if (naxes < 0) {
        naxes = r;
        for (int d = 0; d < r; d++)
            axes[d] = d;
    }
    if (op_norm_axes(c, axes, naxes, r, "axes"))
        return -1;
    double scales[KG_MAX_DIMS], roi[2 * KG_MAX_DIMS];
    int64_t sizes[KG_MAX_DIMS];
    int si = legacy ? 1 : 2, have_roi = 0, roi_f32 = 0;
    int have_sizes = !legacy && op_has_input(c, 3) && ir_tensor_numel(c->in[3]) > 0;
    if (!legacy && op_has_input(c, 1) && o.ct == CT_TF_CROP_AND_RESIZE) {
        int64_t n = op_const_floats(c, 1, "roi", roi, 2 * KG_MAX_DIMS);
        if (n < 0)
            return -1;
        if (n != 2 * naxes)
            return ir_fail("%s: roi has %lld values for %d axes", c->op, (long long)n, naxes);
        have_roi = 1;
        roi_f32 = c->in[1]->dtype == DT_F32;
    }
    if (have_sizes) {
        Expr *sym[KG_MAX_DIMS];
        int64_t n = op_const_ints_sym(c, 3, "sizes", sizes, sym, KG_MAX_DIMS);
        if (n < 0)
            return -1;
        if (n != naxes)
            return ir_fail("%s: %lld sizes for %d axes", c->op, (long long)n, naxes);
        int dyn = ir_tensor_is_dynamic(x);
        for (int i = 0; i < naxes; i++)
            dyn |= sym[i] != NULL;
        if (dyn) {
            /* extents decided at run time: the sizes' (or the input's) */
            Expr *ext[KG_MAX_DIMS] = {0};
            int64_t p[KG_MAX_DIMS] = {0}, q[KG_MAX_DIMS] = {0}, os[KG_MAX_DIMS];
            memcpy(os, x->shape, sizeof *os * (size_t)r);
            if (have_roi || strcmp(op_attr_str(c, "keep_aspect_ratio_policy", "stretch"), "stretch"))
                return ir_fail("%s: %s over extents decided at run time is not supported", c->op,
                               have_roi ? "a roi" : "keep_aspect_ratio_policy other than stretch");
            for (int i = 0; i < naxes; i++) {
                if (sizes[i] < 1)
                    return ir_fail("%s: sizes[%d] is %lld", c->op, i, (long long)sizes[i]);
                ext[axes[i]] = sym[i] ? sym[i] : ir_idx(sizes[i]);
                os[axes[i]] = sizes[i];   /* (an extent's bound: as Shape's data holds it) */
            }
            return resize_dyn(c, x, &o, ext, os, p, q);
        }
        return resize_common(c, x, &o, NULL, 0, sizes, axes, naxes, have_roi ? roi : NULL, roi_f32);
    }
    if (!op_has_input(c, si))
        return ir_fail("%s: either scales or sizes is required", c->op);
    int64_t n = op_const_floats(c, si, "scales", scales, KG_MAX_DIMS);
    if (n < 0)
        return -1;
    if (n != naxes)
        return ir_fail("%s: %lld scales for %d axes", c->op, (long long)n, naxes);
    if (ir_tensor_is_dynamic(x))
        return resize_scales_dyn(c, x, &o, scales, axes, naxes, have_roi);
    return resize_common(c, x, &o, scales, c->in[si]->dtype == DT_F32, NULL, axes, naxes, have_roi ? roi : NULL,
                         roi_f32);
}

static int upsample(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    int r = x->ndim;
    ResizeOpts o;
    if (parse_resize_opts(c, &o, 1))
        return -1;
    double scales[KG_MAX_DIMS];
    int64_t axes[KG_MAX_DIMS], n;
    int f32 = 1;
    if (c->opset < 9 || !op_has_input(c, 1)) {
        n = op_attr_floats(c, "scales", scales, KG_MAX_DIMS);
        if (n < 0) {
            double hs = op_attr_float(c, "height_scale", 0), ws = op_attr_float(c, "width_scale", 0);
            if (r != 4 || hs <= 0 || ws <= 0)
                return ir_fail("%s: attribute 'scales' is required", c->op);
            scales[0] = scales[1] = 1;
            scales[2] = hs;
            scales[3] = ws;
            n = 4;
        }
    } else {
        n = op_const_floats(c, 1, "scales", scales, KG_MAX_DIMS);
        if (n < 0)
            return -1;
        f32 = c->in[1]->dtype == DT_F32;
    }
    if (n != r)
        return ir_fail("%s: %lld scales for rank %d", c->op, (long long)n, r);
    for (int d = 0; d < r; d++)
        axes[d] = d;
    if (ir_tensor_is_dynamic(x))
        return resize_scales_dyn(c, x, &o, scales, axes, r, 0);
    return resize_common(c, x, &o, scales, f32, NULL, axes, r, NULL, 0);
}

const OpDef op_defs_resize[] = {
    {"Resize", resize},
    {"Upsample", upsample},
    {NULL, NULL},
};
