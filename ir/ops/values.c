/* values.c - operators whose output extent depends on input values, computed at run time:
 * NonZero, Compress and Unique of inputs known only at run time, NonMaxSuppression, the
 * run-time K of TopK (reduce.c calls op_value_dim) and the scan outputs of a Loop run at
 * run time (the importer calls op_loop_scan_next and op_loop_scan_out).
 *
 * Each output keeps its bound as the static extent (the most elements the operator can
 * give: NonZero of n elements [rank, n], Compress the selected axis' extent, Unique n,
 * NonMaxSuppression batches * classes * min(max_output_boxes_per_class, boxes) rows) and
 * gets a dim computed from values (IrDim.count, ir/ir.h): a compute of one int64 element,
 * the real extent, which the model function reads after its kernel. What follows runs on
 * the real extent through Tensor.dyn like any run-time dim.
 *
 * The formulas are plain tensor expressions, correct before fast: a selection (a flag per
 * position) becomes, for output position j, the position whose flag is set and that has j
 * set flags before it (a sum over the positions: O(n^2) work, no scatter); Unique compares
 * every pair of slices; NonMaxSuppression's greedy suppression is a scan over the boxes in
 * score order (each step suppresses what the box it selects overlaps).
 */
#include "ops.h"

#include <string.h>

static Expr *bin(BinOp op, Expr *a, Expr *b) { return a && b ? ir_binary(op, a, b) : NULL; }
static Expr *sel(Expr *c, Expr *t, Expr *f) { return c && t && f ? ir_select(c, t, f) : NULL; }
static Expr *red(ReduceOp op, Expr *body, IterVar **axes, int n) { return body ? ir_reduce(op, body, axes, n) : NULL; }
static Expr *var(IterVar *iv) { return ir_varref(iv->var); }
static Expr *i64(int64_t v) { return ir_int(v, DT_I64); }
static Expr *as_index(Expr *e) { return e ? ir_cast(DT_INDEX, e) : NULL; }
static IterVar *raxis(const char *name, int64_t extent) { return ir_itervar_new(name, extent, IV_REDUCE); }
/* The sum over axes of v where cond holds (int64 0 elsewhere); count_if: of 1. */
static Expr *sum_if(Expr *cond, Expr *v, IterVar **axes, int n) { return red(RED_SUM, sel(cond, v, i64(0)), axes, n); }
static Expr *count_if(Expr *cond, IterVar **axes, int n) { return sum_if(cond, i64(1), axes, n); }
/* A gathered position, clamped to [0, n): the positions past a run-time extent (and the
 * branch a condition rules out) read in bounds whatever the code evaluates. */
static Expr *clamped(Expr *e, int64_t n)
{
    return e ? ir_bin(OP_MIN, ir_bin(OP_MAX, as_index(e), ir_idx(0)), ir_idx(n - 1)) : NULL;
}

IrDim *op_value_dim(OpCtx *c, Tensor *count, int64_t lo, int64_t hi, const char *name)
{
    IrDim *d = ir_program_add_value_dim(c->prog, name, lo, hi, count);
    count->comment = ir_fmt("the extent %s, computed from values", d->name);
    return d;
}

void op_set_value_dim(Tensor *t, int d, const IrDim *dm)
{
    t->dyn[d] = ir_varref(dm->var);
    if (t->kind == T_COMPUTE)
        t->axes[d]->dyn = t->dyn[d];
}

/* The element of x at flat (row-major) position `flat`, an index expression. */
static Expr *read_flat(Tensor *x, Expr *flat)
{
    Expr *idx[KG_MAX_DIMS];
    for (int d = x->ndim - 1; d >= 0; d--) {
        idx[d] = d ? ir_bin(OP_MOD, flat, ir_idx(x->shape[d])) : flat;
        flat = ir_bin(OP_DIV, flat, ir_idx(x->shape[d]));
    }
    return op_read(x, idx);
}

/* The first element of t (a scalar input: rank 0 or one element). */
static Expr *read0(Tensor *t)
{
    Expr *z[KG_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        z[d] = ir_idx(0);
    return op_read(t, z);
}

/* A selection over n positions, flag(k) a bool expression of k: the count (an int64 tensor
 * of one element, the dim *dim named name) and src, an int64 tensor [n] whose position j
 * (j < the count, its run-time extent) is the j-th selected position. */
static Tensor *compact(OpCtx *c, int64_t n, Expr *(*flag)(void *, Expr *), void *ctx, const char *name,
                       const IrDim **dim)
{
    /* rank[k]: the selected positions before k */
    IterVar **ax = op_axes(1, &n);
    IterVar *m = raxis("r0", n);
    Expr *before = bin(OP_LT, var(m), var(ax[0]));
    Expr *rank_body = count_if(bin(OP_AND, before, flag(ctx, var(m))), &m, 1);
    Tensor *rank = op_emit(c, op_name(c, "rank"), 1, ax, rank_body);
    int64_t one = 1;
    IterVar **cx = op_axes(1, &one);
    IterVar *q = raxis("r0", n);
    Tensor *count = op_emit(c, op_name(c, "count"), 1, cx, count_if(flag(ctx, var(q)), &q, 1));
    if (!rank || !count)
        return NULL;
    *dim = op_value_dim(c, count, 0, n, name);
    IterVar **sx = op_axes(1, &n);
    IterVar *k = raxis("r0", n);
    Expr *ki[1] = {var(k)};
    Expr *hit = bin(OP_AND, flag(ctx, var(k)), bin(OP_EQ, op_read(rank, ki), ir_cast(DT_I64, var(sx[0]))));
    Tensor *src = op_emit(c, op_name(c, "src"), 1, sx, sum_if(hit, ir_cast(DT_I64, var(k)), &k, 1));
    if (!src)
        return NULL;
    op_set_value_dim(src, 0, *dim);
    return src;
}

/* ---------------------------------------------------------------- NonZero, Compress */

typedef struct {
    Tensor *x;
} FlagCtx;

static Expr *nonzero_flag(void *ctx, Expr *k)
{
    Tensor *x = ((FlagCtx *)ctx)->x;
    return bin(OP_NE, read_flat(x, k), op_lit(0, x->dtype));
}

int op_nonzero_dyn(OpCtx *c, Tensor *x)
{
    if (ir_dtype_is_storage(x->dtype))
        return ir_fail("%s: unsupported type %s", c->op, ir_dtype_name(x->dtype));
    int64_t n = ir_tensor_numel(x);
    if (n < 1)
        return ir_fail("%s: an empty input", c->op);
    FlagCtx fc = {x};
    const IrDim *dim;
    const char *out = c->out_names[0] ? c->out_names[0] : c->base;
    Tensor *src = compact(c, n, nonzero_flag, &fc, ir_fmt("%s_dim1", out), &dim);
    if (!src)
        return -1;
    int64_t shape[2] = {x->ndim, n};
    IterVar **ax = op_axes(2, shape);
    Expr *si[1] = {var(ax[1])};
    Expr *flat = clamped(op_read(src, si), n), *body = NULL;
    /* coordinate d of the flat position: (flat / stride_d) % shape_d */
    for (int d = x->ndim - 1, stride = 1; d >= 0; stride *= (int)x->shape[d], d--) {
        Expr *v = ir_cast(DT_I64, ir_bin(OP_MOD, ir_bin(OP_DIV, flat, ir_idx(stride)), ir_idx(x->shape[d])));
        body = body ? sel(bin(OP_EQ, var(ax[0]), ir_idx(d)), v, body) : v;
    }
    Tensor *t = op_emit_out(c, 0, 2, ax, body);
    if (!t)
        return -1;
    op_set_value_dim(t, 1, dim);
    return 0;
}

typedef struct {
    Tensor *cond;
} CondCtx;

static Expr *compress_flag(void *ctx, Expr *k)
{
    Tensor *cond = ((CondCtx *)ctx)->cond;
    Expr *ki[1] = {k};
    return bin(OP_NE, op_read(cond, ki), op_lit(0, cond->dtype));
}

int op_compress_dyn(OpCtx *c, Tensor *x, Tensor *cond, int has_axis, int axis)
{
    int64_t len = has_axis ? x->shape[axis] : ir_tensor_numel(x);
    int64_t n = cond->shape[0] < len ? cond->shape[0] : len;
    if (n < 1)
        return ir_fail("%s: an empty condition or input", c->op);
    CondCtx cc = {cond};
    const IrDim *dim;
    const char *out = c->out_names[0] ? c->out_names[0] : c->base;
    Tensor *src = compact(c, n, compress_flag, &cc, ir_fmt("%s_dim%d", out, has_axis ? axis : 0), &dim);
    if (!src)
        return -1;
    int nd = has_axis ? x->ndim : 1;
    int64_t shape[KG_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = has_axis ? x->shape[d] : n;
    if (has_axis)
        shape[axis] = n;
    IterVar **ax = op_axes(nd, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, nd, idx);
    Expr *si[1] = {idx[has_axis ? axis : 0]};
    Expr *at = clamped(op_read(src, si), n);
    Expr *body;
    if (has_axis) {
        idx[axis] = at;
        body = op_read(x, idx);
    } else {
        body = read_flat(x, at);
    }
    Tensor *t = op_emit_out(c, 0, nd, ax, body);
    if (!t)
        return -1;
    op_set_value_dim(t, has_axis ? axis : 0, dim);
    return 0;
}

/* ---------------------------------------------------------------- Unique */

/* The input as L slices of P elements along the axis (without one: L = every element,
 * P = 1); slice a's element p, both index expressions, is elem(). */
typedef struct {
    Tensor *x;
    int axis;          /* -1: flattened */
    int64_t L, P, inner;
} Slices;

static Expr *slice_elem(const Slices *s, Expr *a, Expr *p)
{
    if (s->axis < 0)
        return read_flat(s->x, a);
    /* p runs over the other dims in order: outer = p / inner, rest = p % inner */
    Expr *idx[KG_MAX_DIMS], *outer = ir_bin(OP_DIV, p, ir_idx(s->inner)), *rest = ir_bin(OP_MOD, p, ir_idx(s->inner));
    for (int d = s->x->ndim - 1; d > s->axis; d--) {
        idx[d] = ir_bin(OP_MOD, rest, ir_idx(s->x->shape[d]));
        rest = ir_bin(OP_DIV, rest, ir_idx(s->x->shape[d]));
    }
    for (int d = s->axis - 1; d >= 0; d--) {
        idx[d] = ir_bin(OP_MOD, outer, ir_idx(s->x->shape[d]));
        outer = ir_bin(OP_DIV, outer, ir_idx(s->x->shape[d]));
    }
    idx[s->axis] = a;
    return op_read(s->x, idx);
}

/* Unique (opset 11): the distinct slices, sorted or in order of first occurrence.
 * diff[a][b]: the first element where slices a and b differ (P: equal); first[a]: no
 * earlier slice equals a; uidx[a]: a first occurrence's position in the output (the first
 * occurrences before it, or that sort before it); the count of first occurrences is the
 * output extent; pos[u]: the first occurrence of output u. */
static int unique(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x)
        return -1;
    if (ir_dtype_is_storage(x->dtype) || x->dtype == DT_BOOL)
        return ir_fail("%s: unsupported type %s", c->op, ir_dtype_name(x->dtype));
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    Slices s = {x, -1, ir_tensor_numel(x), 1, 1};
    if (op_attr(c, "axis")) {
        if (op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &s.axis))
            return -1;
        s.L = x->shape[s.axis];
        s.P = ir_tensor_numel(x) / (s.L ? s.L : 1);
        for (int d = s.axis + 1; d < x->ndim; d++)
            s.inner *= x->shape[d];
    }
    if (s.L < 1 || s.P < 1)
        return ir_fail("%s: an empty input", c->op);
    int sorted = op_attr_int(c, "sorted", 1) != 0;
    int64_t L = s.L, P = s.P, LL[2] = {L, L}, one = 1;

    /* diff[a][b] */
    IterVar **dx = op_axes(2, LL);
    IterVar *p = raxis("r0", P);
    Expr *ne = bin(OP_NE, slice_elem(&s, var(dx[0]), var(p)), slice_elem(&s, var(dx[1]), var(p)));
    Tensor *diff = op_emit(c, op_name(c, "diff"), 2, dx, red(RED_MIN, sel(ne, ir_cast(DT_I64, var(p)), i64(P)), &p, 1));
    if (!diff)
        return -1;
    /* dup[a]: equal slices before a */
    IterVar **ux = op_axes(1, &L);
    IterVar *b = raxis("r0", L);
    Expr *ab[2] = {var(ux[0]), var(b)};
    Expr *eq_before = bin(OP_AND, bin(OP_LT, var(b), var(ux[0])), bin(OP_EQ, op_read(diff, ab), i64(P)));
    Tensor *dup = op_emit(c, op_name(c, "dup"), 1, ux, count_if(eq_before, &b, 1));
    if (!dup)
        return -1;
    /* uidx[a] */
    IterVar **vx = op_axes(1, &L);
    IterVar *b2 = raxis("r0", L);
    Expr *bi[1] = {var(b2)};
    Expr *b_first = bin(OP_EQ, op_read(dup, bi), i64(0)), *ahead;
    if (sorted) {
        /* slice b sorts before slice a: they differ first at f, where b's element is less */
        Expr *ba[2] = {var(b2), var(vx[0])};
        Expr *f = op_read(diff, ba);
        Expr *fi = clamped(f, P);
        Expr *less = bin(OP_LT, slice_elem(&s, var(b2), fi), slice_elem(&s, var(vx[0]), fi));
        ahead = bin(OP_AND, bin(OP_LT, f, i64(P)), less);
    } else {
        ahead = bin(OP_LT, var(b2), var(vx[0]));
    }
    Tensor *uidx = op_emit(c, op_name(c, "uidx"), 1, vx, count_if(bin(OP_AND, b_first, ahead), &b2, 1));
    /* the count: the first occurrences */
    IterVar **cx = op_axes(1, &one);
    IterVar *b3 = raxis("r0", L);
    Expr *b3i[1] = {var(b3)};
    Tensor *count = op_emit(c, op_name(c, "count"), 1, cx,
                            count_if(bin(OP_EQ, op_read(dup, b3i), i64(0)), &b3, 1));
    if (!uidx || !count)
        return -1;
    const char *out = c->out_names[0] ? c->out_names[0] : c->base;
    const IrDim *dim = op_value_dim(c, count, 1, L, ir_fmt("%s_dim%d", out, s.axis < 0 ? 0 : s.axis));
    /* pos[u] */
    IterVar **px = op_axes(1, &L);
    IterVar *a = raxis("r0", L);
    Expr *ai[1] = {var(a)};
    Expr *is_u = bin(OP_AND, bin(OP_EQ, op_read(dup, ai), i64(0)),
                     bin(OP_EQ, op_read(uidx, ai), ir_cast(DT_I64, var(px[0]))));
    Tensor *pos = op_emit(c, c->out_names[1] && c->nout > 1 ? c->out_names[1] : op_name(c, "first"), 1, px,
                          sum_if(is_u, ir_cast(DT_I64, var(a)), &a, 1));
    if (!pos)
        return -1;
    op_set_value_dim(pos, 0, dim);
    /* Y */
    int64_t yshape[KG_MAX_DIMS];
    int ynd = s.axis < 0 ? 1 : x->ndim;
    memcpy(yshape, x->shape, sizeof yshape);
    if (s.axis < 0)
        yshape[0] = L;
    IterVar **yx = op_axes(ynd, yshape);
    Expr *yi[KG_MAX_DIMS];
    op_axis_exprs(yx, ynd, yi);
    int ua = s.axis < 0 ? 0 : s.axis;
    Expr *pu[1] = {yi[ua]};
    Expr *at = clamped(op_read(pos, pu), L);
    Expr *ybody;
    if (s.axis < 0) {
        ybody = read_flat(x, at);
    } else {
        yi[ua] = at;
        ybody = op_read(x, yi);
    }
    Tensor *y = op_emit_out(c, 0, ynd, yx, ybody);
    if (!y)
        return -1;
    op_set_value_dim(y, ua, dim);
    if (c->nout > 1)
        c->out[1] = pos;
    if (c->nout > 2 && c->out_names[2]) {
        /* inverse_indices[a] = uidx[the first slice equal to a] */
        IterVar **ix = op_axes(1, &L);
        IterVar *b4 = raxis("r0", L);
        Expr *ab4[2] = {var(ix[0]), var(b4)};
        Expr *same = bin(OP_EQ, op_read(diff, ab4), i64(P));
        Expr *first_eq = red(RED_MIN, sel(same, ir_cast(DT_I64, var(b4)), i64(L)), &b4, 1);
        Expr *fe[1] = {clamped(first_eq, L)};
        if (!op_emit_out(c, 2, 1, ix, op_read(uidx, fe)))
            return -1;
    }
    if (c->nout > 3 && c->out_names[3]) {
        /* counts[u]: the slices equal to output u's first occurrence */
        IterVar **kx = op_axes(1, &L);
        IterVar *a5 = raxis("r0", L);
        Expr *ku[1] = {var(kx[0])};
        Expr *d5[2] = {var(a5), clamped(op_read(pos, ku), L)};
        Tensor *counts = op_emit_out(c, 3, 1, kx, count_if(bin(OP_EQ, op_read(diff, d5), i64(P)), &a5, 1));
        if (!counts)
            return -1;
        op_set_value_dim(counts, 0, dim);
    }
    return 0;
}

/* ---------------------------------------------------------------- NonMaxSuppression */

typedef struct {
    Tensor *boxes;
    int center;        /* center_point_box: [x, y, w, h]; else [y1, x1, y2, x2] */
} Boxes;

/* Coordinate k of box n of batch b: lo (0) or hi (1) edge of axis ax (0: y, 1: x). */
static Expr *edge(const Boxes *bx, Expr *b, Expr *n, int ax, int hi)
{
    DType t = bx->boxes->dtype;
    Expr *i[3] = {b, n, NULL};
    if (bx->center) {
        Expr *ci[3] = {b, n, ir_idx(ax ? 0 : 1)}, *wi[3] = {b, n, ir_idx(ax ? 2 : 3)};
        Expr *half = bin(OP_MUL, op_read(bx->boxes, wi), op_lit(0.5, t));
        return bin(hi ? OP_ADD : OP_SUB, op_read(bx->boxes, ci), half);
    }
    i[2] = ir_idx(ax);
    Expr *a = op_read(bx->boxes, i);
    Expr *j[3] = {b, n, ir_idx(ax + 2)};
    Expr *z = op_read(bx->boxes, j);
    return bin(hi ? OP_MAX : OP_MIN, a, z);
}

/* Does box n overlap box m (both of batch b) by more than thr (intersection over union)?
 * As onnxruntime: no intersection, an empty box or an empty union never suppress. */
static Expr *overlaps(const Boxes *bx, Expr *b, Expr *n, Expr *m, Expr *thr)
{
    DType t = bx->boxes->dtype;
    Expr *inter = NULL, *area_n = NULL, *area_m = NULL, *ok = NULL;
    for (int ax = 0; ax < 2; ax++) {
        Expr *lo = bin(OP_MAX, edge(bx, b, n, ax, 0), edge(bx, b, m, ax, 0));
        Expr *hi = bin(OP_MIN, edge(bx, b, n, ax, 1), edge(bx, b, m, ax, 1));
        Expr *side = bin(OP_SUB, hi, lo);
        Expr *sn = bin(OP_SUB, edge(bx, b, n, ax, 1), edge(bx, b, n, ax, 0));
        Expr *sm = bin(OP_SUB, edge(bx, b, m, ax, 1), edge(bx, b, m, ax, 0));
        Expr *pos = bin(OP_GT, hi, lo);
        ok = ok ? bin(OP_AND, ok, pos) : pos;
        inter = inter ? bin(OP_MUL, inter, side) : side;
        area_n = area_n ? bin(OP_MUL, area_n, sn) : sn;
        area_m = area_m ? bin(OP_MUL, area_m, sm) : sm;
    }
    Expr *uni = bin(OP_SUB, bin(OP_ADD, area_n, area_m), inter);
    Expr *zero = op_lit(0, t);
    ok = bin(OP_AND, ok, bin(OP_AND, bin(OP_GT, area_n, zero), bin(OP_GT, area_m, zero)));
    ok = bin(OP_AND, ok, bin(OP_GT, uni, zero));
    Expr *safe = sel(bin(OP_GT, uni, zero), uni, op_lit(1, t));
    return bin(OP_AND, ok, bin(OP_GT, bin(OP_DIV, inter, safe), thr));
}

/* An optional scalar input (shape [] or [1]) as an expression of type t, or dflt. */
static Expr *scalar_in(OpCtx *c, int i, DType t, double dflt)
{
    if (!op_has_input(c, i))
        return op_lit(dflt, t);
    Expr *v = read0(c->in[i]);
    return v && v->dtype != t ? ir_cast(t, v) : v;
}

/* NonMaxSuppression (opset 10, 11): per batch b and class c, the boxes whose score is
 * above score_threshold in score order (ties: the lower index first); a scan over that
 * order keeps box p unless a kept box before it overlaps it by more than iou_threshold;
 * the first max_output_boxes_per_class kept are selected. Rows [b, c, box], by batch, class
 * and selection. */
static int nms(OpCtx *c)
{
    Tensor *boxes = op_input(c, 0, "boxes"), *scores = boxes ? op_input(c, 1, "scores") : NULL;
    if (!scores)
        return -1;
    if (boxes->ndim != 3 || boxes->shape[2] != 4 || scores->ndim != 3 || scores->shape[0] != boxes->shape[0] ||
        scores->shape[2] != boxes->shape[1])
        return ir_fail("%s: boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]", c->op);
    if (!ir_dtype_is_float(boxes->dtype) || ir_dtype_is_storage(boxes->dtype) || scores->dtype != boxes->dtype)
        return ir_fail("%s: boxes and scores must be f32 or f64", c->op);
    for (int i = 2; i < 5; i++)
        if (op_has_input(c, i) && ir_tensor_numel(c->in[i]) != 1)
            return ir_fail("%s: input %d must hold one value", c->op, i);
    int64_t B = boxes->shape[0], N = boxes->shape[1], C = scores->shape[1], mb = N;
    DType t = boxes->dtype;
    int64_t rows_shape[2] = {0, 3};
    if (op_has_input(c, 2) && c->in[2]->kind == T_CONSTANT) {
        if (op_const_ints(c, 2, "max_output_boxes_per_class", &mb, 1) < 0)
            return -1;
        mb = mb < 0 ? 0 : mb < N ? mb : N;
    } else if (!op_has_input(c, 2)) {
        mb = 0;
    }
    if (B * C * N == 0 || mb == 0) {
        /* nothing can be selected */
        Tensor *e = op_const_tensor(c, "selected", DT_I64, 2, rows_shape, NULL);
        if (!e)
            return -1;
        c->out[0] = e;
        return 0;
    }
    Boxes bx = {boxes, op_attr_int(c, "center_point_box", 0) != 0};
    Expr *thr = scalar_in(c, 3, t, 0), *sthr = op_has_input(c, 4) ? scalar_in(c, 4, t, 0) : NULL;
    if (!thr || (op_has_input(c, 4) && !sthr))
        return -1;

    /* rank[b][c][n]: candidates before n in score order */
    int64_t bcn[3] = {B, C, N}, bc[2] = {B, C};
    IterVar **rx = op_axes(3, bcn);
    IterVar *m = raxis("r0", N);
    Expr *sn[3] = {var(rx[0]), var(rx[1]), var(rx[2])}, *sm[3] = {var(rx[0]), var(rx[1]), var(m)};
    Expr *s_n = op_read(scores, sn), *s_m = op_read(scores, sm);
    Expr *cand_m = sthr ? bin(OP_GT, s_m, sthr) : ir_bool(1);
    Expr *ahead = bin(OP_OR, bin(OP_GT, s_m, s_n), bin(OP_AND, bin(OP_EQ, s_m, s_n), bin(OP_LT, var(m), var(rx[2]))));
    Tensor *rank = op_emit(c, op_name(c, "rank"), 3, rx, count_if(bin(OP_AND, cand_m, ahead), &m, 1));
    /* ncand[b][c] */
    IterVar **nx = op_axes(2, bc);
    IterVar *m2 = raxis("r0", N);
    Expr *sm2[3] = {var(nx[0]), var(nx[1]), var(m2)};
    Expr *cand2 = sthr ? bin(OP_GT, op_read(scores, sm2), sthr) : ir_bool(1);
    Tensor *ncand = op_emit(c, op_name(c, "ncand"), 2, nx, count_if(cand2, &m2, 1));
    if (!rank || !ncand)
        return -1;
    /* order[b][c][p]: the box of rank p */
    IterVar **ox = op_axes(3, bcn);
    IterVar *m3 = raxis("r0", N);
    Expr *sm3[3] = {var(ox[0]), var(ox[1]), var(m3)};
    Expr *cand3 = sthr ? bin(OP_GT, op_read(scores, sm3), sthr) : ir_bool(1);
    Expr *is_p = bin(OP_AND, cand3, bin(OP_EQ, op_read(rank, sm3), ir_cast(DT_I64, var(ox[2]))));
    Tensor *order = op_emit(c, op_name(c, "order"), 3, ox, sum_if(is_p, ir_cast(DT_I64, var(m3)), &m3, 1));
    if (!order)
        return -1;
    /* alive[s][b][c][q]: rank q is a candidate not suppressed by the boxes kept among the
     * first s ranks; step s decides rank s - 1 */
    int64_t ashape[4] = {N + 1, B, C, N};
    IterVar *sx[4];
    for (int d = 0; d < 4; d++)
        sx[d] = ir_itervar_new(ir_fmt("i%d", d), ashape[d], IV_SPATIAL);
    Tensor *alive = ir_scan_begin(op_name(c, "alive"), DT_BOOL, 4, sx);
    if (!alive)
        return -1;
    Expr *nc[2] = {var(sx[1]), var(sx[2])};
    Expr *init = bin(OP_LT, ir_cast(DT_I64, var(sx[3])), op_read(ncand, nc));
    Expr *prev = ir_bin(OP_SUB, var(sx[0]), ir_idx(1));
    Expr *aq[4] = {prev, var(sx[1]), var(sx[2]), var(sx[3])}, *ap[4] = {prev, var(sx[1]), var(sx[2]), prev};
    Expr *oq[3] = {var(sx[1]), var(sx[2]), var(sx[3])}, *op_[3] = {var(sx[1]), var(sx[2]), prev};
    Expr *hit = bin(OP_AND, bin(OP_GT, var(sx[3]), prev), op_read(alive, ap));
    Expr *box_p = clamped(op_read(order, op_), N), *box_q = clamped(op_read(order, oq), N);
    hit = bin(OP_AND, hit, overlaps(&bx, var(sx[1]), box_p, box_q, thr));
    Expr *update = bin(OP_AND, op_read(alive, aq), ir_un(UN_NOT, hit));
    if (!init || !update || ir_scan_finish(alive, 1, init, update) || ir_program_add(c->prog, alive))
        return -1;
    /* kept[b][c][p]: alive after the last step; before[b][c][p]: kept ranks before p */
    IterVar **kx = op_axes(3, bcn);
    IterVar *q = raxis("r0", N);
    Expr *kq[4] = {ir_idx(N), var(kx[0]), var(kx[1]), var(q)};
    Expr *kept_before = bin(OP_AND, bin(OP_LT, var(q), var(kx[2])), op_read(alive, kq));
    Tensor *before = op_emit(c, op_name(c, "before"), 3, kx, count_if(kept_before, &q, 1));
    if (!before)
        return -1;
    Expr *cap = op_has_input(c, 2) && c->in[2]->kind != T_CONSTANT ? scalar_in(c, 2, DT_I64, 0) : i64(mb);
    /* nsel[b][c]: kept and among the first max_output_boxes_per_class */
    IterVar **cx = op_axes(2, bc);
    IterVar *p1 = raxis("r0", N);
    Expr *k1[4] = {ir_idx(N), var(cx[0]), var(cx[1]), var(p1)}, *b1[3] = {var(cx[0]), var(cx[1]), var(p1)};
    Expr *ch1 = bin(OP_AND, op_read(alive, k1), bin(OP_LT, op_read(before, b1), cap));
    Tensor *nsel = op_emit(c, op_name(c, "nsel"), 2, cx, count_if(ch1, &p1, 1));
    if (!nsel)
        return -1;
    /* off[b][c]: rows of the (batch, class) pairs before */
    IterVar **fx = op_axes(2, bc);
    IterVar *rb[2] = {raxis("r0", B), raxis("r1", C)};
    Expr *flat_r = ir_bin(OP_ADD, ir_bin(OP_MUL, var(rb[0]), ir_idx(C)), var(rb[1]));
    Expr *flat_o = ir_bin(OP_ADD, ir_bin(OP_MUL, var(fx[0]), ir_idx(C)), var(fx[1]));
    Expr *rbi[2] = {var(rb[0]), var(rb[1])};
    Tensor *off = op_emit(c, op_name(c, "off"), 2, fx, sum_if(bin(OP_LT, flat_r, flat_o), op_read(nsel, rbi), rb, 2));
    /* the count */
    int64_t one = 1;
    IterVar **tx = op_axes(1, &one);
    IterVar *tb[2] = {raxis("r0", B), raxis("r1", C)};
    Expr *tbi[2] = {var(tb[0]), var(tb[1])};
    Tensor *count = op_emit(c, op_name(c, "count"), 1, tx, red(RED_SUM, op_read(nsel, tbi), tb, 2));
    if (!off || !count)
        return -1;
    int64_t R = B * C * mb;
    const char *out = c->out_names[0] ? c->out_names[0] : c->base;
    const IrDim *dim = op_value_dim(c, count, 0, R, ir_fmt("%s_dim0", out));
    /* selected[j][k]: the chosen (b, c, p) with off[b][c] + before[b][c][p] == j */
    int64_t oshape[2] = {R, 3};
    IterVar **yx = op_axes(2, oshape);
    IterVar *yr[3] = {raxis("r0", B), raxis("r1", C), raxis("r2", N)};
    Expr *yk[4] = {ir_idx(N), var(yr[0]), var(yr[1]), var(yr[2])}, *yb[3] = {var(yr[0]), var(yr[1]), var(yr[2])};
    Expr *yo[2] = {var(yr[0]), var(yr[1])};
    Expr *row = bin(OP_ADD, op_read(off, yo), op_read(before, yb));
    Expr *yhit = bin(OP_AND, bin(OP_AND, op_read(alive, yk), bin(OP_LT, op_read(before, yb), cap)),
                     bin(OP_EQ, row, ir_cast(DT_I64, var(yx[0]))));
    Expr *val = sel(bin(OP_EQ, var(yx[1]), ir_idx(0)), ir_cast(DT_I64, var(yr[0])),
                    sel(bin(OP_EQ, var(yx[1]), ir_idx(1)), ir_cast(DT_I64, var(yr[1])), op_read(order, yb)));
    Tensor *y = op_emit_out(c, 0, 2, yx, sum_if(yhit, val, yr, 3));
    if (!y)
        return -1;
    op_set_value_dim(y, 0, dim);
    return 0;
}

/* ---------------------------------------------------------------- Loop's scan outputs */

Tensor *op_loop_scan_next(OpCtx *c, Tensor *iter, Tensor *acc, Tensor *val)
{
    IterVar **ax = op_axes(acc->ndim, acc->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, acc->ndim, idx);
    Expr *at = bin(OP_EQ, ir_cast(DT_I64, idx[0]), read0(iter));
    return op_emit(c, op_name(c, ir_fmt("%s_next", acc->name)), acc->ndim, ax,
                   sel(at, op_read(val, idx + 1), op_read(acc, idx)));
}

int op_loop_scan_out(OpCtx *c, int out, Tensor *iter, Tensor *acc, const IrDim **dim)
{
    if (!*dim) {
        int64_t one = 1;
        IterVar **cx = op_axes(1, &one);
        Tensor *count = op_emit(c, op_name(c, "iterations"), 1, cx, read0(iter));
        if (!count)
            return -1;
        *dim = op_value_dim(c, count, 0, acc->shape[0], ir_fmt("%s_dim0", c->out_names[out]));
    }
    Tensor *t = op_copy(c, out, acc);
    if (!t)
        return -1;
    op_set_value_dim(t, 0, *dim);
    return 0;
}

const OpDef op_defs_values[] = {
    {"Unique", unique},
    {"NonMaxSuppression", nms},
    {NULL, NULL},
};
