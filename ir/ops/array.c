/* array.c - ONNX array operators added for the whole node-test set: BitCast, CumProd, Det,
 * Shrink, ReverseSequence, TensorScatter and LpNormalization. Each is one or a few
 * computes; the storage floats (f16, bf16) are computed in f32 where there is arithmetic
 * and rounded once by the output's store. */
#include "ops.h"

#include <string.h>

#define DET_MAX 64   /* largest matrix Det unrolls (a few computes per elimination step) */

/* ---------------------------------------------------------------- helpers */

static Expr *bin(BinOp op, Expr *a, Expr *b) { return ir_binary(op, a, b); }
static Expr *sel(Expr *c, Expr *t, Expr *f) { return c && t && f ? ir_select(c, t, f) : NULL; }
static Expr *idx(int64_t v) { return ir_idx(v); }

/* The type arithmetic is done in: f32 for the storage floats, else t itself. */
static DType compute_type(DType t) { return ir_dtype_is_storage(t) ? DT_F32 : t; }

static int float_input(OpCtx *c, const Tensor *x)
{
    if (!ir_dtype_is_float(x->dtype))
        return ir_fail("%s: input type %s is not supported (float types only)", c->op, ir_dtype_name(x->dtype));
    return 0;
}

static int numeric_input(OpCtx *c, const Tensor *x)
{
    if (x->dtype == DT_BOOL)
        return ir_fail("%s: bool input is not supported (numeric types only)", c->op);
    return 0;
}

/* A scalar integer input (one element, 0-D or [1]) known when compiling. */
static int const_scalar(OpCtx *c, int i, const char *what, int64_t *v)
{
    int64_t n = op_const_ints(c, i, what, v, 1);
    if (n < 0)
        return -1;
    if (n != 1)
        return ir_fail("%s: %s must hold one value", c->op, what);
    return 0;
}

/* An integer tensor element as an index clamped to lo..hi (computed in i64, so a large
 * value cannot wrap into range). */
static Expr *clamped_index(Expr *v, int64_t lo, int64_t hi)
{
    Expr *w = ir_cast(DT_I64, v);
    w = bin(OP_MIN, bin(OP_MAX, w, ir_int(lo, DT_I64)), ir_int(hi, DT_I64));
    return w ? ir_cast(DT_INDEX, w) : NULL;
}

/* ---------------------------------------------------------------- BitCast */

/* The same bits as another type of the same width. Between integers (and bool) that is a
 * value cast, which wraps exactly like the bits; floats go through ir_bitcast. A byte
 * read as bool is its truth value (ONNX bools are 0 or 1). */
static int bitcast(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    const OpAttr *a = op_attr(c, "to");
    if (!a)
        return ir_fail("%s: the 'to' attribute is required", c->op);
    DType from = x->dtype, to;
    if (op_dtype_from_onnx((int)op_attr_int(c, "to", 0), &to))
        return ir_fail("%s: to: %s", c->op, ir_errmsg());
    if (ir_dtype_bits(from) != ir_dtype_bits(to))
        return ir_fail("%s: %s (%d bits) and %s (%d bits) differ in width", c->op, ir_dtype_name(from),
                       ir_dtype_bits(from), ir_dtype_name(to), ir_dtype_bits(to));
    if (from == to) {
        c->out[0] = x;
        return 0;
    }
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *ix[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, ix);
    Expr *v = op_read(x, ix);
    if (!ir_dtype_is_float(from) && !ir_dtype_is_float(to)) {
        v = ir_cast(to, v);
    } else {
        if (from == DT_BOOL)
            v = ir_cast(DT_U8, v);
        v = ir_bitcast(to == DT_BOOL ? DT_U8 : to, v);
        if (v && to == DT_BOOL)
            v = ir_cast(DT_BOOL, v);
    }
    if (!v)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, v) ? 0 : -1;
}

/* ---------------------------------------------------------------- CumProd */

/* out[i] = product of x[r] for r <= i (r < i exclusive; r >= i, r > i reversed): a guarded
 * reduction over the whole axis like CumSum's, O(n^2) along it; the factors left out are
 * 1, so the product of the ones taken is exact in its order. */
static int cumprod(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "x");
    if (!x || numeric_input(c, x))
        return -1;
    if (ir_dtype_is_storage(x->dtype))
        return ir_fail("%s: input type %s is not supported (f32, f64 or integers)", c->op, ir_dtype_name(x->dtype));
    if (x->ndim < 1)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int64_t a;
    int axis;
    if (const_scalar(c, 1, "axis", &a) || op_axis(c, a, x->ndim, "axis", &axis))
        return -1;
    int excl = op_attr_int(c, "exclusive", 0) != 0, rev = op_attr_int(c, "reverse", 0) != 0;

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *ix[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, ix);
    IterVar *r = ir_itervar_new("r0", x->shape[axis], IV_REDUCE);
    for (int d = 0; d < x->ndim; d++)
        xi[d] = d == axis ? ir_varref(r->var) : ix[d];
    BinOp cmp = rev ? (excl ? OP_GT : OP_GE) : (excl ? OP_LT : OP_LE);
    Expr *f = sel(bin(cmp, ir_varref(r->var), ix[axis]), op_read(x, xi), op_lit(1, x->dtype));
    if (!f)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, ir_reduce(RED_PROD, f, &r, 1)) ? 0 : -1;
}

/* ---------------------------------------------------------------- Det */

/* A[batch..., i, j] read as the compute type */
static Expr *mat(Tensor *a, Expr **bi, int nb, Expr *i, Expr *j, DType ct)
{
    Expr *ix[KG_MAX_DIMS];
    memcpy(ix, bi, sizeof *bi * (size_t)nb);
    ix[nb] = i;
    ix[nb + 1] = j;
    return ir_cast(ct, op_read(a, ix));
}

/* Gaussian elimination step k with partial pivoting, on every matrix of the batch: the
 * pivot p is the first row r >= k with the largest |a[r, k]|; rows k and p swap, the rows
 * below k lose their multiple of the pivot row, and row k is negated when a swap happened,
 * so that the determinant is the product of the final diagonal. A zero pivot (the column
 * is zero from k down) eliminates nothing and leaves that diagonal 0. */
static Tensor *det_step(OpCtx *c, Tensor *a, int nb, int64_t M, int k, DType ct)
{
    int64_t bshape[KG_MAX_DIMS + 2];
    memcpy(bshape, a->shape, sizeof *bshape * (size_t)nb);
    Expr *bi[KG_MAX_DIMS];

    IterVar **ax = op_axes(nb, bshape);
    op_axis_exprs(ax, nb, bi);
    IterVar *r = ir_itervar_new("r", M - k, IV_REDUCE);
    Expr *row = bin(OP_ADD, ir_varref(r->var), idx(k));
    Expr *mag = ir_mathcall(FN_ABS, (Expr *[]){mat(a, bi, nb, row, idx(k), ct)}, 1);
    Tensor *mx = op_emit(c, op_name(c, ir_fmt("pivmax%d", k)), nb, ax, ir_reduce(RED_MAX, mag, &r, 1));
    if (!mx)
        return NULL;

    ax = op_axes(nb, bshape);
    op_axis_exprs(ax, nb, bi);
    r = ir_itervar_new("r", M - k, IV_REDUCE);
    row = bin(OP_ADD, ir_varref(r->var), idx(k));
    mag = ir_mathcall(FN_ABS, (Expr *[]){mat(a, bi, nb, row, idx(k), ct)}, 1);
    Expr *first = sel(bin(OP_EQ, mag, op_read(mx, bi)), row, idx(M - 1));   /* (NaNs: the last row) */
    Tensor *piv = first ? op_emit(c, op_name(c, ir_fmt("piv%d", k)), nb, ax, ir_reduce(RED_MIN, first, &r, 1)) : NULL;
    if (!piv)
        return NULL;

    ax = op_axes(nb + 2, a->shape);
    Expr *ix[KG_MAX_DIMS];
    op_axis_exprs(ax, nb + 2, ix);
    Expr *i = ix[nb], *j = ix[nb + 1], *p = op_read(piv, ix);
    Expr *src = sel(bin(OP_EQ, i, idx(k)), p, sel(bin(OP_EQ, i, p), idx(k), i));   /* row i after the swap */
    Expr *pk = mat(a, ix, nb, p, idx(k), ct);
    Expr *zero = op_lit(0, ct);
    Expr *f = sel(bin(OP_EQ, pk, zero), zero, bin(OP_DIV, mat(a, ix, nb, src, idx(k), ct), pk));
    Expr *below = bin(OP_SUB, mat(a, ix, nb, src, j, ct), bin(OP_MUL, f, mat(a, ix, nb, p, j, ct)));
    Expr *pivot_row = sel(bin(OP_EQ, p, idx(k)), mat(a, ix, nb, p, j, ct),
                          ir_unary(UN_NEG, mat(a, ix, nb, p, j, ct)));
    Expr *body = sel(bin(OP_GT, i, idx(k)), below, sel(bin(OP_EQ, i, idx(k)), pivot_row, mat(a, ix, nb, i, j, ct)));
    if (!body) {
        ir_fail("%s: %s", c->op, ir_errmsg());
        return NULL;
    }
    return op_emit(c, op_name(c, ir_fmt("elim%d", k)), nb + 2, ax, body);
}

static int det(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "X");
    if (!x || float_input(c, x))
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: the input must have rank 2 or more, got %d", c->op, x->ndim);
    int nb = x->ndim - 2;
    int64_t M = x->shape[nb];
    if (x->shape[nb + 1] != M)
        return ir_fail("%s: the matrices are %lldx%lld, not square", c->op, (long long)M,
                       (long long)x->shape[nb + 1]);
    if (M > DET_MAX)
        return ir_fail("%s: %lldx%lld matrices are larger than the %dx%d kgen unrolls", c->op, (long long)M,
                       (long long)M, DET_MAX, DET_MAX);
    DType dt = x->dtype, ct = compute_type(dt);
    Tensor *a = x;
    for (int k = 0; k + 1 < M; k++)
        if (!(a = det_step(c, a, nb, M, k, ct)))
            return -1;
    IterVar **ax = op_axes(nb, x->shape);
    Expr *bi[KG_MAX_DIMS];
    op_axis_exprs(ax, nb, bi);
    IterVar *r = ir_itervar_new("r", M, IV_REDUCE);
    Expr *diag = mat(a, bi, nb, ir_varref(r->var), ir_varref(r->var), ct);
    Expr *body = ir_reduce(RED_PROD, diag, &r, 1);   /* (an empty matrix: 1) */
    if (ct == dt)
        return op_emit_out(c, 0, nb, ax, body) ? 0 : -1;
    Tensor *d = op_emit(c, op_name(c, "det"), nb, ax, body);
    if (!d)
        return -1;
    ax = op_axes(nb, x->shape);
    op_axis_exprs(ax, nb, bi);
    return op_emit_out(c, 0, nb, ax, ir_cast(dt, op_read(d, bi))) ? 0 : -1;
}

/* ---------------------------------------------------------------- Shrink */

/* y = x + bias where x < -lambd, x - bias where x > lambd, else 0; integers compute in f64
 * and truncate back, as the float attributes make the reference do. */
static int shrink(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x || numeric_input(c, x))
        return -1;
    double lambd = op_attr_float(c, "lambd", 0.5), bias = op_attr_float(c, "bias", 0);
    DType dt = x->dtype, ct = ir_dtype_is_float(dt) ? compute_type(dt) : DT_F64;
    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *ix[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, ix);
    Expr *v = ir_cast(ct, op_read(x, ix));
    Expr *body = sel(bin(OP_LT, v, op_lit(-lambd, ct)), bin(OP_ADD, v, op_lit(bias, ct)),
                     sel(bin(OP_GT, v, op_lit(lambd, ct)), bin(OP_SUB, v, op_lit(bias, ct)), op_lit(0, ct)));
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, ir_cast(dt, body)) ? 0 : -1;
}

/* ---------------------------------------------------------------- ReverseSequence */

/* Along the time axis, the first sequence_lens[b] elements of batch b reversed, the rest
 * as they are. A length outside 0..T is clamped into it, so no read leaves the tensor. */
static int reverse_sequence(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input"), *lens = op_input(c, 1, "sequence_lens");
    if (!x || !lens)
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: the input must have rank 2 or more, got %d", c->op, x->ndim);
    int64_t ta = op_attr_int(c, "time_axis", 0), ba = op_attr_int(c, "batch_axis", 1);
    if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return ir_fail("%s: time_axis %lld and batch_axis %lld must be 0 and 1 in some order", c->op,
                       (long long)ta, (long long)ba);
    int64_t T = x->shape[ta], B = x->shape[ba];
    if (lens->dtype != DT_I64 && lens->dtype != DT_I32)
        return ir_fail("%s: sequence_lens has type %s, expected int64", c->op, ir_dtype_name(lens->dtype));
    if (lens->ndim != 1 || lens->shape[0] != B)
        return ir_fail("%s: sequence_lens must have shape [%lld] (the batch)", c->op, (long long)B);

    IterVar **ax = op_axes(x->ndim, x->shape);
    Expr *ix[KG_MAX_DIMS], *xi[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, ix);
    Expr *t = ix[ta], *len = clamped_index(op_read(lens, &ix[ba]), 0, T);
    memcpy(xi, ix, sizeof *ix * (size_t)x->ndim);
    xi[ta] = sel(bin(OP_LT, t, len), bin(OP_SUB, bin(OP_SUB, len, idx(1)), t), t);
    if (!xi[ta])
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, op_read(x, xi)) ? 0 : -1;
}

/* ---------------------------------------------------------------- TensorScatter */

/* present = past with update written along `axis` from write_indices[b] on (modulo the
 * cache length in circular mode), computed per output element: sequence position q holds
 * update[s] for s = q - write_indices[b] when 0 <= s < sequence_length, else past. Writes
 * that would fall past the cache (linear mode) are dropped. */
static int tensor_scatter(OpCtx *c)
{
    Tensor *past = op_input(c, 0, "past_cache"), *upd = op_input(c, 1, "update");
    if (!past || !upd)
        return -1;
    Tensor *wi = op_has_input(c, 2) ? c->in[2] : NULL;
    const char *mode = op_attr_str(c, "mode", "linear");
    int circular = !strcmp(mode, "circular");
    if (!circular && strcmp(mode, "linear"))
        return ir_fail("%s: mode '%s' is not linear or circular", c->op, mode);
    if (upd->dtype != past->dtype)
        return ir_fail("%s: update has type %s, past_cache %s", c->op, ir_dtype_name(upd->dtype),
                       ir_dtype_name(past->dtype));
    int r = past->ndim, axis;
    if (r < 2 || upd->ndim != r)
        return ir_fail("%s: past_cache and update must have the same rank, 2 or more", c->op);
    if (op_axis(c, op_attr_int(c, "axis", -2), r, "axis", &axis))
        return -1;
    if (axis == 0)
        return ir_fail("%s: axis 0 is the batch; the sequence axis must be another", c->op);
    for (int d = 0; d < r; d++)
        if (d != axis && upd->shape[d] != past->shape[d])
            return ir_fail("%s: update dimension %d is %lld, past_cache's %lld", c->op, d, (long long)upd->shape[d],
                           (long long)past->shape[d]);
    int64_t M = past->shape[axis], S = upd->shape[axis];
    if (S > M)
        return ir_fail("%s: the update's %lld steps exceed the cache's %lld", c->op, (long long)S, (long long)M);
    if (wi && (ir_dtype_is_float(wi->dtype) || wi->dtype == DT_BOOL || wi->ndim != 1 || wi->shape[0] != past->shape[0]))
        return ir_fail("%s: write_indices must be integers of shape [%lld]", c->op, (long long)past->shape[0]);

    IterVar **ax = op_axes(r, past->shape);
    Expr *ix[KG_MAX_DIMS], *ui[KG_MAX_DIMS];
    op_axis_exprs(ax, r, ix);
    /* (clamped to -M..M: any index outside writes nothing, as one there would) */
    Expr *w = wi ? clamped_index(op_read(wi, ix), -M, M) : idx(0);
    Expr *s = bin(OP_SUB, ix[axis], w);
    if (circular)
        s = bin(OP_FLOORMOD, s, idx(M));
    memcpy(ui, ix, sizeof *ix * (size_t)r);
    ui[axis] = s;
    Expr *in = bin(OP_AND, bin(OP_GE, s, idx(0)), bin(OP_LT, s, idx(S)));
    Expr *body = sel(in, op_read(upd, ui), op_read(past, ix));
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, r, ax, body) ? 0 : -1;
}

/* ---------------------------------------------------------------- LpNormalization */

/* x / ||x||_p along one axis (p = 1 or 2), without an epsilon; a zero vector stays 0 (the
 * reference's rule, where the division would give NaN). */
static int lp_normalization(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x || float_input(c, x))
        return -1;
    int64_t p = op_attr_int(c, "p", 2);
    if (p != 1 && p != 2)
        return ir_fail("%s: p is %lld; only 1 and 2 are defined", c->op, (long long)p);
    int axis;
    if (x->ndim < 1 || op_axis(c, op_attr_int(c, "axis", -1), x->ndim, "axis", &axis))
        return x->ndim < 1 ? ir_fail("%s: the input must have rank 1 or more", c->op) : -1;
    DType dt = x->dtype, ct = compute_type(dt);

    int64_t ns[KG_MAX_DIMS];
    memcpy(ns, x->shape, sizeof *ns * (size_t)x->ndim);
    ns[axis] = 1;
    IterVar **ax = op_axes(x->ndim, ns);
    Expr *ix[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, ix);
    IterVar *rv = ir_itervar_new("r0", x->shape[axis], IV_REDUCE);
    ix[axis] = ir_varref(rv->var);
    Expr *v = ir_cast(ct, op_read(x, ix));
    Expr *term = p == 1 ? ir_mathcall(FN_ABS, &v, 1) : bin(OP_MUL, v, v);
    Tensor *sum = term ? op_emit(c, op_name(c, "norm"), x->ndim, ax, ir_reduce(RED_SUM, term, &rv, 1)) : NULL;
    if (!sum)
        return -1;

    ax = op_axes(x->ndim, x->shape);
    Expr *oi[KG_MAX_DIMS], *ni[KG_MAX_DIMS];
    op_axis_exprs(ax, x->ndim, oi);
    memcpy(ni, oi, sizeof *oi * (size_t)x->ndim);
    ni[axis] = idx(0);
    Expr *norm = op_read(sum, ni);
    if (p == 2)
        norm = ir_mathcall(FN_SQRT, &norm, 1);
    Expr *body = sel(bin(OP_EQ, norm, op_lit(0, ct)), op_lit(0, ct), bin(OP_DIV, ir_cast(ct, op_read(x, oi)), norm));
    if (!body)
        return ir_fail("%s: %s", c->op, ir_errmsg());
    return op_emit_out(c, 0, x->ndim, ax, ir_cast(dt, body)) ? 0 : -1;
}

const OpDef op_defs_array[] = {
    {"BitCast", bitcast},
    {"CumProd", cumprod},
    {"Det", det},
    {"Shrink", shrink},
    {"ReverseSequence", reverse_sequence},
    {"TensorScatter", tensor_scatter},
    {"LpNormalization", lp_normalization},
    {NULL, NULL},
};
