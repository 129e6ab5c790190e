/* shape.c - ONNX operators that move data without arithmetic on it: reshapes, transposes,
 * concatenation and splits, slices and pads, gathers and scatters, depth/space shuffles
 * and Trilu (Resize, which interpolates, is resize.c's). Each output element reads input elements at positions computed from
 * its own index: out[idx] = in[f(idx)]. Shapes, axes, pads and scales are compile-time
 * values (a Reshape's shape may hold extents decided at run time, and Reshape and Flatten
 * merge and split run-time dims); index tensors (Gather, Scatter*) may be data, read with
 * wrapped and clamped indices. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64       /* elements of a shape, axes, pads or steps input (ranks are <= 8) */

/* ---------------------------------------------------------------- helpers */

static Expr *iconst(int64_t v) { return ir_idx(v); }

static Expr *to_index(Expr *e) { return e->dtype == DT_INDEX ? e : ir_cast(DT_INDEX, e); }

/* A data index in -n..n-1 to 0..n-1, clamped so that a bad index cannot read outside the
 * tensor (ONNX leaves that case undefined). */
static Expr *wrap_index(Expr *e, int64_t n)
{
    e = to_index(e);
    e = ir_select(ir_bin(OP_LT, e, iconst(0)), ir_bin(OP_ADD, e, iconst(n)), e);
    return ir_bin(OP_MIN, ir_bin(OP_MAX, e, iconst(0)), iconst(n - 1));
}

static int check_rank(OpCtx *c, int r)
{
    if (r > KG_MAX_DIMS)
        return ir_fail("%s: the output would have rank %d (limit %d)", c->op, r, KG_MAX_DIMS);
    return 0;
}

/* An empty value (a zero dimension): a constant without elements. The IR computes
 * nothing over it; operators that read shapes as values see zero elements, and Concat
 * drops empty parts. */
static Tensor *empty_value(OpCtx *c, const char *what, DType t, int ndim, const int64_t *shape)
{
    return op_const_tensor(c, what, t, ndim, shape, NULL);
}

/* Output `out` = fn(its index) over fresh axes of `shape` (an empty constant of type t
 * when the shape has a zero). */
typedef Expr *(*BodyFn)(OpCtx *c, void *arg, Expr **idx);

static int emit_body(OpCtx *c, int out, int ndim, const int64_t *shape, DType t, BodyFn fn, void *arg)
{
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return (c->out[out] = empty_value(c, "empty", t, ndim, shape)) ? 0 : -1;
    if (op_check_dims(c, ndim, shape))
        return -1;
    IterVar **ax = op_axes(ndim, shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, idx);
    Expr *body = fn(c, arg, idx);
    if (!body)
        return -1;
    return op_emit_out(c, out, ndim, ax, body) ? 0 : -1;
}

/* Axes from an attribute (before opset `input_from`) or from input `in`; -1 with an error,
 * or the count (0 when absent). */
static int get_list(OpCtx *c, const char *attr, int in, int64_t input_from, int64_t *out, int max)
{
    if (c->opset < input_from) {
        int n = op_attr_ints(c, attr, out, max);
        return n < 0 ? 0 : n;
    }
    if (!op_has_input(c, in))
        return 0;
    int64_t n = op_const_ints(c, in, attr, out, max);
    return (int)n;
}

/* Run-time extents that a Reshape divides exactly: E = k * (E / k), E's remainder by the
 * constant k being 0 at every run (shown by the dims' ranges, or checked at run time), where
 * one side of the view has E and the other E / k and k: Swin's windows (a padded Hp viewed
 * as Hp / 4 windows of 4 rows and back), PixelUnshuffle (H as H / 2 rows of 2). The products
 * of extents see E as k * (E / k) then. */
enum { MAX_EXACT = 2 * KG_MAX_DIMS };
typedef struct {
    int n;
    Expr *e[MAX_EXACT], *q[MAX_EXACT];   /* E (simplified) and E / k */
    int64_t k[MAX_EXACT];
} ExactDivs;

/* *p times extent e, E of an exact division as k * (E / k) */
static void prod_mul_dim(IrProd *p, Expr *e, const ExactDivs *dv)
{
    Expr *se = dv ? ir_simplify(e, NULL) : NULL;
    for (int i = 0; dv && i < dv->n; i++)
        if (ir_expr_equal(se, dv->e[i])) {
            ir_prod_mul(p, dv->q[i]);
            ir_prod_mul(p, iconst(dv->k[i]));
            return;
        }
    ir_prod_mul(p, e);
}

/* The product of dims [from, to) of a tensor's run-time extents ext (its shape where NULL) */
static IrProd prod_of(Expr *const *ext, const int64_t *shape, int from, int to, const ExactDivs *dv)
{
    IrProd p = ir_prod_one();
    for (int d = from; d < to; d++)
        prod_mul_dim(&p, ext && ext[d] ? ext[d] : iconst(shape[d]), dv);
    return p;
}

/* The exact divisions a view between extents ext and x's might make: each extent E / k of
 * either side (k a constant above 1; the simplifier writes a floor division of a
 * non-negative E as C's) whose E is a run-time extent of the other */
static void exact_divs_find(ExactDivs *dv, Expr *const *ext, int n, Tensor *x)
{
    for (int side = 0; side < 2; side++) {
        Expr *const *from = side ? x->dyn : ext, *const *other = side ? ext : x->dyn;
        int nf = side ? x->ndim : n, no = side ? n : x->ndim;
        for (int d = 0; d < nf && dv->n < MAX_EXACT; d++) {
            const Expr *q = from[d];
            int64_t k;
            if (!q || q->kind != E_BIN || (q->u.bin.op != OP_FLOORDIV && q->u.bin.op != OP_DIV) ||
                !ir_expr_is_const(q->u.bin.b, &k) || k < 2)
                continue;
            Expr *e = ir_simplify(q->u.bin.a, NULL);
            for (int j = 0; j < no; j++)
                if (other[j] && ir_expr_equal(ir_simplify(other[j], NULL), e)) {
                    dv->e[dv->n] = e;
                    dv->q[dv->n] = from[d];
                    dv->k[dv->n++] = k;
                    break;
                }
        }
    }
}

/* The run-time checks that make dv's divisions exact, where the dims' ranges do not show it */
static void exact_divs_check(OpCtx *c, const ExactDivs *dv)
{
    for (int i = 0; i < dv->n; i++) {
        Expr *r = ir_simplify(ir_bin(OP_FLOORMOD, dv->e[i], ir_idx(dv->k[i])), NULL);
        int64_t lo, hi;
        if (ir_dims_bounds(c->prog, r, &lo, &hi) && lo == 0 && hi == 0)
            continue;
        ir_program_add_check(c->prog, ir_bin(OP_EQ, r, ir_idx(0)),
                             ir_fmt("'%s': %s views an extent as rows of %lld, a multiple of it",
                                    c->out_names[0] ? c->out_names[0] : c->base, c->op, (long long)dv->k[i]));
    }
}

/* x read at element `oidx` of the same data viewed with shape oshape, whose dim d runs to
 * oext[d] at run time (NULL there: oshape[d]; oext NULL: x and the view have fixed dims).
 * Runs of dimensions with equal products map one to one (for run-time extents, a run ends
 * where the products are the same expression, or where the dims end: the element counts
 * agree, as the caller checked); fixed size-1 dimensions vanish. A run of x's dims read
 * through one flat index is taken apart by their extents (divisions and remainders by
 * run-time extents, which the simplifier merges back into the flat index where x is stored
 * compact at them). */
static Expr *read_reshaped(Tensor *x, int ondim, const int64_t *oshape, Expr *const *oext, Expr **oidx,
                           const ExactDivs *dv)
{
    Expr *ix[KG_MAX_DIMS];
    int a = 0, b = 0;
    while (a < x->ndim || b < ondim) {
        if (a < x->ndim && x->shape[a] == 1 && !x->dyn[a]) {
            ix[a++] = iconst(0);
            continue;
        }
        if (b < ondim && oshape[b] == 1 && !(oext && oext[b])) {
            b++;
            continue;
        }
        if ((a >= x->ndim || b >= ondim) && !oext)
            ir_die("reshape of different element counts");
        if (a >= x->ndim || b >= ondim) {
            while (a < x->ndim)
                ix[a++] = iconst(0);   /* (extents that are 1 at run time) */
            break;
        }
        int a0 = a, b0 = b;
        int64_t pa = x->shape[a++], pb = oshape[b++];
        IrProd qa = prod_of(x->dyn, x->shape, a0, a, dv), qb = prod_of(oext, oshape, b0, b, dv);
        while (!ir_prod_equal(&qa, &qb)) {
            int ma = a < x->ndim, mb = b < ondim;
            if (!oext && !((pa < pb && ma) || (pb < pa && mb)))
                ir_die("reshape of different element counts");
            if (!ma && !mb)
                break;   /* the last run */
            if (ma && (pa <= pb || !mb)) {
                pa *= x->shape[a];
                prod_mul_dim(&qa, ir_tensor_dim(x, a), dv);
                a++;
            }
            if (mb && (pb <= pa || !ma) && !ir_prod_equal(&qa, &qb)) {
                pb *= oshape[b];
                prod_mul_dim(&qb, oext && oext[b] ? oext[b] : iconst(oshape[b]), dv);
                b++;
            }
        }
        /* (over run-time extents in the form flat * E + i throughout, unsimplified, which
         * ir_dyn_index_below follows) */
        Expr *flat = NULL;
        for (int k = b0; k < b; k++)
            flat = !flat ? oidx[k]
                   : oext ? ir_bin(OP_ADD, ir_bin(OP_MUL, flat, oext[k] ? oext[k] : iconst(oshape[k])), oidx[k])
                          : ir_add(ir_mul(flat, iconst(oshape[k])), oidx[k]);
        /* strides within the run from the inside out, as ir_buffer_stride builds them */
        Expr *stride[KG_MAX_DIMS];
        stride[a - 1] = iconst(1);
        for (int k = a - 2; k >= a0; k--)
            stride[k] = ir_mul(stride[k + 1], ir_tensor_dim(x, k + 1));
        for (int k = a0; k < a; k++) {
            Expr *e = flat;
            int64_t one;
            if (!ir_expr_is_const(stride[k], &one) || one != 1)
                e = ir_bin(OP_DIV, e, stride[k]);
            if (k > a0)
                e = ir_bin(OP_MOD, e, ir_tensor_dim(x, k));
            ix[k] = x->shape[k] == 1 && !x->dyn[k] ? iconst(0) : e;
        }
    }
    return ir_access(x, ix, x->ndim);
}

typedef struct {
    Tensor *x;
    int ndim;
    const int64_t *shape;
} ReshapeArg;

static Expr *reshape_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    ReshapeArg *r = arg;
    return read_reshaped(r->x, r->ndim, r->shape, NULL, idx, NULL);
}

/* Output 0 = x viewed with shape `shape` whose dim d runs to ext[d] at run time (NULL:
 * shape[d]), x or the view having dims decided at run time. The element counts are the
 * same product of extents, or are checked at run time where kgen cannot tell (an extent
 * from values that other arithmetic gave); counts that differ at every extent fail. */
static int emit_reshape_dyn(OpCtx *c, Tensor *x, int ndim, const int64_t *shape, Expr *const *ext)
{
    IrProd px = prod_of(x->dyn, x->shape, 0, x->ndim, NULL), po = prod_of(ext, shape, 0, ndim, NULL);
    ExactDivs divs = {0}, *dv = NULL;
    if (!ir_prod_equal(&px, &po)) {
        /* the same count where extents divide exactly (Hp as Hp / 4 windows of 4)? */
        exact_divs_find(&divs, ext, ndim, x);
        IrProd dx = prod_of(x->dyn, x->shape, 0, x->ndim, &divs), dob = prod_of(ext, shape, 0, ndim, &divs);
        if (divs.n && ir_prod_equal(&dx, &dob)) {
            dv = &divs;
            exact_divs_check(c, dv);
            px = dx;
            po = dob;
        }
    }
    if (!ir_prod_equal(&px, &po)) {
        Expr *nx = ir_idx(1), *no = ir_idx(1);
        for (int d = 0; d < x->ndim; d++)
            nx = ir_mul(nx, ir_tensor_dim(x, d));
        for (int d = 0; d < ndim; d++)
            no = ir_mul(no, ext[d] ? ext[d] : iconst(shape[d]));
        int64_t lo, hi;
        if (!ir_dims_bounds(c->prog, ir_sub(nx, no), &lo, &hi))
            lo = -1, hi = 1;
        if (lo > 0 || hi < 0)
            return ir_fail("%s: the shape never holds as many elements as the input, at any extents of the dims "
                           "decided at run time", c->op);
        if (lo != 0 || hi != 0)
            ir_program_add_check(c->prog, ir_bin(OP_EQ, nx, no),
                                 ir_fmt("'%s': %s's shape holds as many elements as its input '%s'",
                                        c->out_names[0] ? c->out_names[0] : c->base, c->op, x->name));
    }
    int same = ndim == x->ndim;
    for (int d = 0; same && d < ndim; d++) {
        IrProd a = prod_of(x->dyn, x->shape, d, d + 1, NULL), b = prod_of(ext, shape, d, d + 1, NULL);
        same = shape[d] == x->shape[d] && ir_prod_equal(&a, &b);
    }
    if (same) {
        c->out[0] = x;
        return 0;
    }
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return (c->out[0] = empty_value(c, "empty", x->dtype, ndim, shape)) ? 0 : -1;
    if (op_check_dims(c, ndim, shape))
        return -1;
    IterVar **ax = op_axes_dyn(ndim, shape, ext);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, ndim, idx);
    return op_emit_out(c, 0, ndim, ax, read_reshaped(x, ndim, shape, ext, idx, dv)) ? 0 : -1;
}

/* Output 0 = x viewed with another shape (x itself when the shape is the same); ext as for
 * emit_reshape_dyn, or NULL: every dim of the view fixed. */
static int emit_reshape(OpCtx *c, Tensor *x, int ndim, const int64_t *shape, Expr *const *ext)
{
    int dyn = ir_tensor_is_dynamic(x);
    for (int d = 0; ext && d < ndim; d++)
        dyn |= ext[d] != NULL;
    if (dyn) {
        Expr *none[KG_MAX_DIMS] = {0};
        return emit_reshape_dyn(c, x, ndim, shape, ext ? ext : none);
    }
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    if (n != ir_tensor_numel(x))
        return ir_fail("%s: cannot view %lld elements with %lld", c->op, (long long)ir_tensor_numel(x), (long long)n);
    int same = ndim == x->ndim;
    for (int d = 0; same && d < ndim; d++)
        same = shape[d] == x->shape[d];
    if (same) {
        c->out[0] = x;
        return 0;
    }
    ReshapeArg r = {x, ndim, shape};
    return emit_body(c, 0, ndim, shape, x->dtype, reshape_body, &r);
}

/* ---------------------------------------------------------------- Reshape, Flatten, Squeeze, Unsqueeze */

/* The -1 of a shape over run-time extents: the input's element count divided by the other
 * dims' product, exactly as products of extents (C * H * W by C: H * W); its bound *bound.
 * 0 with ext[d] (NULL: a fixed *bound), or -1 with ir_fail(). */
static int infer_dyn(OpCtx *c, Tensor *x, int n, const int64_t *s, Expr **ext, int infer, int64_t *bound)
{
    IrProd px = prod_of(x->dyn, x->shape, 0, x->ndim, NULL), po = ir_prod_one(), q;
    for (int d = 0; d < n; d++)
        if (d != infer)
            ir_prod_mul(&po, ext[d] ? ext[d] : iconst(s[d]));
    if (po.ok && po.coef == 0)
        return ir_fail("%s: cannot infer the -1 dimension next to a 0", c->op);
    if (!ir_prod_div(&px, &po, &q)) {
        /* where extents divide exactly (PixelUnshuffle's H / 2 rows of 2, then -1) */
        ExactDivs divs = {0};
        exact_divs_find(&divs, ext, n, x);
        IrProd dx = prod_of(x->dyn, x->shape, 0, x->ndim, &divs), dob = ir_prod_one();
        for (int d = 0; d < n; d++)
            if (d != infer)
                prod_mul_dim(&dob, ext[d] ? ext[d] : iconst(s[d]), &divs);
        if (divs.n && ir_prod_div(&dx, &dob, &q))
            px = dx, po = dob;
    }
    IrProd po1 = po, q1;
    po1.coef = 1;
    Expr *num = NULL;   /* an extent of x that the -1 divides exactly */
    int64_t g = 1;
    if (!ir_prod_div(&px, &po, &q) && po.ok && po.coef > 1 && ir_prod_div(&px, &po1, &q1) && q1.n > 0) {
        g = op_gcd(q1.coef, po.coef);
        q1.coef /= g;
        num = ir_simplify(ir_prod_expr(&q1), NULL);
        int in_x = 0;
        for (int d = 0; d < x->ndim && !in_x; d++)
            in_x = x->dyn[d] && ir_expr_equal(ir_simplify(x->dyn[d], NULL), num);
        if (!in_x)
            num = NULL;
    }
    if (num) {
        /* the other dims' constants do not divide the count's (PixelUnshuffle's H * W by
         * 2 * W), and what is left is an extent of the input: the -1 is that extent divided
         * by the rest, exactly (emit_reshape_dyn's exact division, checked at run time) */
        Expr *e = ir_simplify(ir_bin(OP_FLOORDIV, num, ir_idx(po.coef / g)), NULL);
        int64_t lo;
        ext[infer] = e;
        if (!ir_dims_bounds(c->prog, e, &lo, bound) || *bound > INT32_MAX || lo < 1)
            return ir_fail("%s: the -1 dimension, decided at run time, can be 0 or has no bound within index "
                           "arithmetic", c->op);
        return 0;
    }
    if (!ir_prod_div(&px, &po, &q))
        return ir_fail("%s: cannot infer the -1 dimension: the other dims' product does not divide the input's "
                       "element count, a product of extents decided at run time, into a product of its extents", c->op);
    int64_t lo;
    Expr *e = ir_prod_expr(&q);
    if (ir_expr_is_const(e, bound))
        return 0;
    ext[infer] = e;
    if (!ir_dims_bounds(c->prog, e, &lo, bound) || *bound > INT32_MAX)
        return ir_fail("%s: the -1 dimension, decided at run time, has no bound within index arithmetic", c->op);
    return 0;
}

static int reshape(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t s[MAX_LIST];
    Expr *sym[MAX_LIST] = {0};
    int n;
    if (c->opset < 5) {
        n = op_attr_ints(c, "shape", s, MAX_LIST);
        if (n < 0)
            return ir_fail("%s: attribute 'shape' is required", c->op);
    } else if ((n = (int)op_const_ints_sym(c, 1, "shape", s, sym, MAX_LIST)) < 0) {
        return -1;
    }
    if (check_rank(c, n))
        return -1;
    int allowzero = (int)op_attr_int(c, "allowzero", 0), infer = -1;
    int64_t known = 1;
    /* run-time extents of the output: a dim copied (0) from the input's, or a value of the
     * shape decided at run time (Shape's extents, arithmetic on them; s[d] holds its bound) */
    Expr *ext[KG_MAX_DIMS] = {0};
    int dyn = ir_tensor_is_dynamic(x);
    for (int d = 0; d < n; d++) {
        if (sym[d]) {
            int64_t lo, hi;
            if (!ir_dims_bounds(c->prog, sym[d], &lo, &hi) || lo < (allowzero ? 0 : 1))
                return ir_fail("%s: shape[%d], an extent decided at run time, can be %s", c->op, d,
                               allowzero ? "negative" : "0 (a copy of the input's dim) or negative");
            ext[d] = sym[d];
            dyn = 1;
        } else if (s[d] == 0 && !allowzero) {
            if (d >= x->ndim)
                return ir_fail("%s: shape[%d] is 0 (copy) but the input has rank %d", c->op, d, x->ndim);
            s[d] = x->shape[d];
            ext[d] = x->dyn[d];
        }
        if (s[d] == -1 && !sym[d]) {
            if (infer >= 0)
                return ir_fail("%s: more than one -1 in the shape", c->op);
            infer = d;
            continue;
        }
        if (s[d] < 0)
            return ir_fail("%s: shape[%d] is %lld", c->op, d, (long long)s[d]);
        known *= s[d];
        if (known > ((int64_t)1 << 40))
            return ir_fail("%s: the shape is too large", c->op);
    }
    if (dyn) {
        if (infer >= 0 && infer_dyn(c, x, n, s, ext, infer, &s[infer]))
            return -1;
        return emit_reshape(c, x, n, s, ext);
    }
    int64_t numel = ir_tensor_numel(x);
    if (infer >= 0) {
        if (known == 0)
            return ir_fail("%s: cannot infer the -1 dimension next to a 0", c->op);
        if (numel % known)
            return ir_fail("%s: cannot infer the -1 dimension: %lld elements are not a multiple of %lld", c->op,
                           (long long)numel, (long long)known);
        s[infer] = numel / known;
    }
    return emit_reshape(c, x, n, s, NULL);
}

static int flatten(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    int64_t axis = op_attr_int(c, "axis", 1);
    if (axis < -x->ndim || axis > x->ndim)
        return ir_fail("%s: axis %lld is out of range for rank %d", c->op, (long long)axis, x->ndim);
    if (axis < 0)
        axis += x->ndim;
    int64_t s[2] = {1, 1};
    for (int d = 0; d < x->ndim; d++)
        s[d >= axis] *= x->shape[d];
    /* over run-time dims: each side's product of extents */
    Expr *ext[2] = {NULL, NULL};
    for (int d = 0; d < x->ndim; d++)
        if (x->dyn[d])
            ext[d >= axis] = iconst(1);
    for (int d = 0; d < x->ndim; d++)
        if (ext[d >= axis])
            ext[d >= axis] = ir_mul(ext[d >= axis], ir_tensor_dim(x, d));
    return emit_reshape(c, x, 2, s, ext);
}

static int squeeze(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t axes[KG_MAX_DIMS * 2];
    int n = get_list(c, "axes", 1, 13, axes, KG_MAX_DIMS * 2);
    if (n < 0 || op_norm_axes(c, axes, n, x->ndim, "axes"))
        return -1;
    int drop[KG_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        if (x->shape[axes[i]] != 1)
            return ir_fail("%s: axis %lld has size %lld, not 1", c->op, (long long)axes[i],
                           (long long)x->shape[axes[i]]);
        drop[axes[i]] = 1;
    }
    if (n == 0)
        for (int d = 0; d < x->ndim; d++)
            drop[d] = x->shape[d] == 1;
    int64_t s[KG_MAX_DIMS];
    Expr *ext[KG_MAX_DIMS];
    int r = 0;
    for (int d = 0; d < x->ndim; d++)
        if (!drop[d]) {
            ext[r] = x->dyn[d];
            s[r++] = x->shape[d];
        }
    return emit_reshape(c, x, r, s, ext);
}

static int unsqueeze(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int64_t axes[KG_MAX_DIMS * 2];
    int n = get_list(c, "axes", 1, 13, axes, KG_MAX_DIMS * 2);
    if (n < 0)
        return -1;
    if (n == 0)
        return ir_fail("%s: axes are required", c->op);
    int r = x->ndim + n;
    if (check_rank(c, r) || op_norm_axes(c, axes, n, r, "axes"))
        return -1;
    int ins[KG_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++)
        ins[axes[i]] = 1;
    int64_t s[KG_MAX_DIMS];
    Expr *ext[KG_MAX_DIMS];
    for (int d = 0, k = 0; d < r; d++) {
        ext[d] = ins[d] ? NULL : x->dyn[k];
        s[d] = ins[d] ? 1 : x->shape[k++];
    }
    return emit_reshape(c, x, r, s, ext);
}

/* ---------------------------------------------------------------- Transpose */

typedef struct {
    Tensor *x;
    int perm[KG_MAX_DIMS];
} PermArg;

static Expr *transpose_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    PermArg *p = arg;
    Expr *ix[KG_MAX_DIMS];
    for (int j = 0; j < p->x->ndim; j++)
        ix[p->perm[j]] = idx[j];
    return op_read(p->x, ix);
}

static int transpose(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int r = x->ndim;
    int64_t perm[KG_MAX_DIMS + 1];
    int n = op_attr_ints(c, "perm", perm, KG_MAX_DIMS + 1);
    if (n < 0) {
        n = r;
        for (int d = 0; d < r; d++)
            perm[d] = r - 1 - d;
    }
    if (n != r)
        return ir_fail("%s: perm has %d entries for rank %d", c->op, n, r);
    if (op_norm_axes(c, perm, n, r, "perm"))
        return -1;
    PermArg p = {x, {0}};
    int64_t s[KG_MAX_DIMS];
    for (int j = 0; j < r; j++) {
        p.perm[j] = (int)perm[j];
        s[j] = x->shape[perm[j]];
    }
    return emit_body(c, 0, r, s, x->dtype, transpose_body, &p);
}

/* ---------------------------------------------------------------- Concat, Split */

typedef struct {
    Tensor **xs;
    int n, axis;
} ConcatArg;

/* Along a run-time axis (a class token before a sequence of run-time length: ViT's) the
 * inputs' offsets are sums of extents, and the output's extent is their sum. */
static Expr *concat_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    ConcatArg *a = arg;
    Expr *off[OP_MAX_IO + 1];
    off[0] = iconst(0);
    for (int i = 0; i < a->n; i++)
        off[i + 1] = ir_simplify(ir_add(off[i], ir_tensor_dim(a->xs[i], a->axis)), NULL);
    Expr *e = NULL;
    for (int i = a->n - 1; i >= 0; i--) {
        Expr *ix[KG_MAX_DIMS];
        memcpy(ix, idx, sizeof(Expr *) * (size_t)a->xs[i]->ndim);
        ix[a->axis] = ir_sub(idx[a->axis], off[i]);
        Expr *r = op_read(a->xs[i], ix);
        e = e ? ir_select(ir_bin(OP_LT, idx[a->axis], off[i + 1]), r, e) : r;
    }
    return e;
}

static int concat(OpCtx *c)
{
    Tensor *xs[OP_MAX_IO];
    int n = 0;
    for (int i = 0; i < c->nin; i++)
        if (c->in[i])
            xs[n++] = c->in[i];
    if (n == 0)
        return ir_fail("%s: no inputs", c->op);
    Tensor *x0 = xs[0];
    int axis;
    const OpAttr *aa = op_attr(c, "axis");
    if (!aa && c->opset >= 4)
        return ir_fail("%s: attribute 'axis' is required", c->op);
    if (x0->ndim == 0)
        return ir_fail("%s: inputs must have rank 1 or more", c->op);
    if (op_axis(c, aa ? aa->i : 1, x0->ndim, "axis", &axis))
        return -1;
    int64_t s[KG_MAX_DIMS];
    memcpy(s, x0->shape, sizeof s);
    s[axis] = 0;
    for (int i = 0; i < n; i++) {
        if (xs[i]->dtype != x0->dtype)
            return ir_fail("%s: inputs have different types %s and %s", c->op, ir_dtype_name(x0->dtype),
                           ir_dtype_name(xs[i]->dtype));
        if (xs[i]->ndim != x0->ndim)
            return ir_fail("%s: input %d has rank %d, input 0 rank %d", c->op, i, xs[i]->ndim, x0->ndim);
        for (int d = 0; d < x0->ndim; d++)
            if (d != axis && xs[i]->shape[d] != x0->shape[d])
                return ir_fail("%s: input %d has size %lld in dimension %d, input 0 %lld", c->op, i,
                               (long long)xs[i]->shape[d], d, (long long)x0->shape[d]);
        s[axis] += xs[i]->shape[axis];
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (ir_tensor_numel(xs[i]) > 0)
            xs[m++] = xs[i];
    if (m == 0) {
        c->out[0] = empty_value(c, "empty", x0->dtype, x0->ndim, s);
        return 0;
    }
    if (m == 1) {
        c->out[0] = xs[0];
        return 0;
    }
    ConcatArg a = {xs, m, axis};
    Expr *ext = NULL;
    for (int i = 0; i < m; i++)
        if (xs[i]->dyn[axis])
            ext = iconst(0);
    if (!ext)
        return emit_body(c, 0, x0->ndim, s, x0->dtype, concat_body, &a);
    /* (the lenient inference gives the other axes their inputs' run-time dims and checks
     * that those agree; a fixed dim beside a run-time one is refused here) */
    for (int i = 1; i < m; i++)
        for (int d = 0; d < x0->ndim; d++)
            if (d != axis && !xs[i]->dyn[d] != !xs[0]->dyn[d])
                return ir_fail("%s: dim %d of input %d is %s, of input 0 %s", c->op, d, i,
                               xs[i]->dyn[d] ? "decided at run time" : "fixed",
                               xs[0]->dyn[d] ? "decided at run time" : "fixed");
    for (int i = 0; i < m; i++)
        ext = ir_add(ext, ir_tensor_dim(xs[i], axis));
    if (emit_body(c, 0, x0->ndim, s, x0->dtype, concat_body, &a))
        return -1;
    c->out[0]->axes[axis]->dyn = ir_simplify(ext, NULL);
    c->dyn_own = 1;
    return 0;
}

typedef struct {
    Tensor *x;
    int axis;
    int64_t start;
} OffsetArg;

static Expr *offset_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    OffsetArg *a = arg;
    Expr *ix[KG_MAX_DIMS];
    memcpy(ix, idx, sizeof(Expr *) * (size_t)a->x->ndim);
    ix[a->axis] = ir_add(idx[a->axis], iconst(a->start));
    return op_read(a->x, ix);
}

static int split(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (x->ndim == 0)
        return ir_fail("%s: the input must have rank 1 or more", c->op);
    int axis;
    if (op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &axis))
        return -1;
    if (x->dyn[axis])
        return ir_fail("%s: splitting dim %d, which is decided at run time, is not supported yet", c->op, axis);
    int64_t len = x->shape[axis], sp[OP_MAX_IO + 1];
    int n = get_list(c, "split", 1, 13, sp, OP_MAX_IO + 1);
    if (n < 0)
        return -1;
    int nout = c->nout;
    if (n > 0) {
        if (n != nout)
            return ir_fail("%s: 'split' has %d entries for %d outputs", c->op, n, nout);
    } else {
        int64_t parts = op_attr_int(c, "num_outputs", nout);
        if (parts != nout || nout < 1)
            return ir_fail("%s: num_outputs is %lld but the node has %d outputs", c->op, (long long)parts, nout);
        int64_t chunk = (len + nout - 1) / nout;
        if (!op_attr(c, "num_outputs") && len % nout)
            return ir_fail("%s: dimension %d (%lld) does not split evenly into %d outputs", c->op, axis,
                           (long long)len, nout);
        for (int i = 0; i < nout; i++) {
            int64_t left = len - chunk * i;
            sp[i] = left < chunk ? left : chunk;
        }
        n = nout;
    }
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sp[i] < 0 || sp[i] > len)
            return ir_fail("%s: split[%d] (%lld) is out of range", c->op, i, (long long)sp[i]);
        total += sp[i];
    }
    if (total != len)
        return ir_fail("%s: the splits sum to %lld, dimension %d has %lld", c->op, (long long)total, axis,
                       (long long)len);
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        if (c->out_names[i]) {
            int64_t s[KG_MAX_DIMS];
            memcpy(s, x->shape, sizeof s);
            s[axis] = sp[i];
            if (sp[i] == len) {
                c->out[i] = x;
            } else {
                OffsetArg a = {x, axis, start};
                if (emit_body(c, i, x->ndim, s, x->dtype, offset_body, &a))
                    return -1;
            }
        }
        start += sp[i];
    }
    return 0;
}

/* ---------------------------------------------------------------- Slice */

typedef struct {
    Tensor *x;
    int64_t start[KG_MAX_DIMS], step[KG_MAX_DIMS];
} SliceArg;

static Expr *slice_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    SliceArg *a = arg;
    Expr *ix[KG_MAX_DIMS];
    for (int d = 0; d < a->x->ndim; d++)
        ix[d] = ir_add(iconst(a->start[d]), ir_mul(idx[d], iconst(a->step[d])));
    return op_read(a->x, ix);
}

/* A Slice over run-time dims (a dim decided at run time sliced, `x[:, 1:]`, `x[:, ::2]`, or
 * bounds that hold extents, `x[:, t // 2:]`): the start and end clamped to the axis's
 * extent as expressions of the dims, the output's extent their difference (at least 0)
 * divided by the step, rounded up, bound by the ranges. */
typedef struct {
    Tensor *x;
    Expr *start[KG_MAX_DIMS];
    int64_t step[KG_MAX_DIMS];   /* negative: backwards (`x.flip(1)`) */
} DynSliceArg;

static Expr *dyn_slice_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    DynSliceArg *a = arg;
    Expr *ix[KG_MAX_DIMS];
    for (int d = 0; d < a->x->ndim; d++) {
        int64_t k = a->step[d];
        Expr *i = k == 1 || k == -1 ? idx[d] : ir_mul(idx[d], iconst(k < 0 ? -k : k));
        /* (backwards, start - i stays above the end, at least -1: the max only tells the
         * bound checker so) */
        ix[d] = !a->start[d] ? idx[d]
                : k < 0 ? ir_bin(OP_MAX, ir_sub(a->start[d], i), iconst(0))
                        : ir_add(a->start[d], i);
    }
    return op_read(a->x, ix);
}

/* min(a, b) or max(a, b) (op), or the one the dims' ranges always pick */
static Expr *pick(OpCtx *c, BinOp op, Expr *a, Expr *b)
{
    int64_t lo, hi;
    if (ir_dims_bounds(c->prog, ir_simplify(ir_sub(a, b), NULL), &lo, &hi)) {
        if (op == OP_MIN ? hi <= 0 : lo >= 0)
            return ir_simplify(a, NULL);
        if (op == OP_MIN ? lo >= 0 : hi <= 0)
            return ir_simplify(b, NULL);
    }
    return ir_simplify(ir_bin(op, a, b), NULL);
}

/* start or end v (sym: an extent) of an axis of extent E, clamped to [0, E], or with a
 * step of -1 (back) to [-1, E - 1] */
static Expr *slice_point(OpCtx *c, int64_t v, Expr *sym, Expr *E, int back, int *ok)
{
    Expr *top = back ? ir_simplify(ir_sub(E, ir_idx(1)), NULL) : E;
    int64_t low = back ? -1 : 0;
    if (sym) {
        int64_t lo, hi;
        if (!ir_dims_bounds(c->prog, sym, &lo, &hi) || lo < 0)
            *ok = 0;
        return pick(c, OP_MIN, sym, top);
    }
    if (v < 0)
        return v < INT32_MIN ? ir_idx(low) : pick(c, OP_MAX, ir_add(E, ir_idx(v)), ir_idx(low));
    return v > INT32_MAX ? top : pick(c, OP_MIN, ir_idx(v), top);
}

static int dyn_slice(OpCtx *c, Tensor *x, int n, const int64_t *st, Expr *const *sst, const int64_t *en,
                     Expr *const *sen, const int64_t *ax, const int64_t *sp)
{
    int r = x->ndim;
    DynSliceArg a = {x, {0}, {0}};
    int64_t s[KG_MAX_DIMS];
    Expr *ext[KG_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        s[d] = x->shape[d];
        ext[d] = x->dyn[d];
    }
    for (int i = 0; i < n; i++) {
        int d = (int)ax[i];
        if (sp[i] == 0 || sp[i] > INT32_MAX || sp[i] < -INT32_MAX)
            return ir_fail("%s: axis %d: a step of %lld", c->op, d, (long long)sp[i]);
        Expr *E = ir_tensor_dim(x, d);
        int ok = 1, back = sp[i] < 0;
        int64_t k = back ? -sp[i] : sp[i];
        Expr *b = slice_point(c, st[i], sst[i], E, back, &ok), *e = slice_point(c, en[i], sen[i], E, back, &ok), *cnt;
        if (!ok)
            return ir_fail("%s: axis %d: a start or end decided at run time can be negative or has no bound",
                           c->op, d);
        a.step[d] = sp[i];
        if (back) {
            cnt = pick(c, OP_MAX, ir_sub(b, e), ir_idx(0));
        } else if (!sst[i] && st[i] < 0 && !sen[i] && en[i] >= x->shape[d]) {
            /* the last -start elements (`x[:, -2:]`): min(-start, E) of them, E - max(E +
             * start, 0) as intervals show it (at least 1: a GPU launch needs that) */
            cnt = pick(c, OP_MIN, ir_idx(-st[i]), E);
        } else {
            cnt = pick(c, OP_MAX, ir_sub(e, b), ir_idx(0));
        }
        if (k > 1)   /* every k-th of them, from the first */
            cnt = ir_simplify(ir_bin(OP_FLOORDIV, ir_add(cnt, ir_idx(k - 1)), ir_idx(k)), NULL);
        int64_t lo, hi;
        if (!ir_dims_bounds(c->prog, cnt, &lo, &hi) || hi > x->shape[d])
            return ir_fail("%s: axis %d: the slice's extent has no bound within the dim", c->op, d);
        a.start[d] = b;
        s[d] = hi;
        ext[d] = lo == hi ? NULL : cnt;
    }
    for (int d = 0; d < r; d++)
        if (s[d] == 0)
            return (c->out[0] = empty_value(c, "empty", x->dtype, r, s)) ? 0 : -1;
    IterVar **axv = op_axes_dyn(r, s, ext);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(axv, r, idx);
    c->dyn_own = 1;
    return op_emit_out(c, 0, r, axv, dyn_slice_body(c, &a, idx)) ? 0 : -1;
}

static int slice(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int r = x->ndim;
    int64_t st[MAX_LIST], en[MAX_LIST], ax[MAX_LIST], sp[MAX_LIST];
    Expr *sst[MAX_LIST] = {0}, *sen[MAX_LIST] = {0};
    int n, ne, na = -1, ns = -1;
    if (c->opset < 10) {
        n = op_attr_ints(c, "starts", st, MAX_LIST);
        ne = op_attr_ints(c, "ends", en, MAX_LIST);
        na = op_attr_ints(c, "axes", ax, MAX_LIST);
        if (n < 0 || ne < 0)
            return ir_fail("%s: attributes 'starts' and 'ends' are required", c->op);
    } else {
        if ((n = (int)op_const_ints_sym(c, 1, "starts", st, sst, MAX_LIST)) < 0 ||
            (ne = (int)op_const_ints_sym(c, 2, "ends", en, sen, MAX_LIST)) < 0)
            return -1;
        if (op_has_input(c, 3) && (na = (int)op_const_ints(c, 3, "axes", ax, MAX_LIST)) < 0)
            return -1;
        if (op_has_input(c, 4) && (ns = (int)op_const_ints(c, 4, "steps", sp, MAX_LIST)) < 0)
            return -1;
    }
    if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
        return ir_fail("%s: starts, ends, axes and steps have different lengths", c->op);
    if (n > r)
        return ir_fail("%s: %d starts for rank %d", c->op, n, r);
    if (na < 0)
        for (int i = 0; i < n; i++)
            ax[i] = i;
    if (ns < 0)
        for (int i = 0; i < n; i++)
            sp[i] = 1;
    if (op_norm_axes(c, ax, n, r, "axes"))
        return -1;
    for (int i = 0; i < n; i++)
        if (x->dyn[ax[i]] || sst[i] || sen[i])
            return dyn_slice(c, x, n, st, sst, en, sen, ax, sp);
    SliceArg a = {x, {0}, {0}};
    int64_t s[KG_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        a.start[d] = 0;
        a.step[d] = 1;
        s[d] = x->shape[d];
    }
    int same = 1;
    for (int i = 0; i < n; i++) {
        int d = (int)ax[i];
        int64_t dim = x->shape[d], step = sp[i], b = st[i], e = en[i];
        if (step == 0)
            return ir_fail("%s: step for axis %d is 0", c->op, d);
        /* a step past the dimension takes one element: keep it small */
        if (step > dim)
            step = dim > 0 ? dim : 1;
        if (step < -dim)
            step = dim > 0 ? -dim : -1;
        if (b < 0)
            b = b < -dim ? -1 - dim : b + dim;   /* stays below 0 when far below */
        if (e < 0)
            e = e < -dim ? -1 - dim : e + dim;
        int64_t cnt;
        if (step > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
            cnt = e > b ? (e - b - 1) / step + 1 : 0;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            cnt = b > e ? (b - e - 1) / (-step) + 1 : 0;
        }
        a.start[d] = b;
        a.step[d] = cnt == 1 ? 1 : step;
        s[d] = cnt;
        same = same && cnt == dim && b == 0 && a.step[d] == 1;
    }
    if (same) {
        c->out[0] = x;
        return 0;
    }
    return emit_body(c, 0, r, s, x->dtype, slice_body, &a);
}

/* ---------------------------------------------------------------- Expand, Tile */

/* Run-time dims (ONNX's broadcasting, over extents): a dim of the shape that holds an
 * extent (Tensor.sym: torch's x.expand(b, t, 8) of x.shape's values) broadcasts an input
 * dim of 1 to it, or must equal the input's run-time dim; a shape's 1 keeps the input's
 * run-time dim, which is read position for position. */
static int expand(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    int64_t sh[MAX_LIST];
    Expr *sym[MAX_LIST] = {0};
    int n = (int)op_const_ints_sym(c, 1, "shape", sh, sym, MAX_LIST);
    if (n < 0 || check_rank(c, n))
        return -1;
    int r = n > x->ndim ? n : x->ndim;
    int64_t s[KG_MAX_DIMS];
    Expr *ext[KG_MAX_DIMS] = {0};
    for (int d = 0; d < r; d++) {
        int dx = d - (r - x->ndim), ds = d - (r - n);
        int64_t a = dx >= 0 ? x->shape[dx] : 1, b = ds >= 0 ? sh[ds] : 1;
        Expr *ea = dx >= 0 ? x->dyn[dx] : NULL, *eb = ds >= 0 ? sym[ds] : NULL;
        if (b < 0)
            return ir_fail("%s: shape[%d] is %lld", c->op, ds, (long long)b);
        if (eb) {
            /* an extent: b holds its bound */
            int64_t lo, hi;
            if (!ir_dims_bounds(c->prog, eb, &lo, &hi) || lo < 1)
                return ir_fail("%s: shape[%d], an extent decided at run time, can be 0 or has no bound", c->op, ds);
            if (ea && !ir_expr_equal(ea, eb))   /* (two run-time extents: the input's kept) */
                ir_program_add_check(c->prog, ir_bin(OP_OR, ir_bin(OP_EQ, eb, ea), ir_bin(OP_EQ, eb, ir_idx(1))),
                                     ir_fmt("'%s': %s's shape[%d] is 1 or dim %d of its input '%s'", c->base,
                                            c->op, ds, dx, x->name));
            else if (!ea && a != 1 && !(lo == hi && hi == a))
                ir_program_add_check(c->prog, ir_bin(OP_OR, ir_bin(OP_EQ, eb, ir_idx(a)), ir_bin(OP_EQ, eb, ir_idx(1))),
                                     ir_fmt("'%s': %s's shape[%d] is 1 or %lld, input dim %d of '%s'", c->base,
                                            c->op, ds, (long long)a, dx, x->name));
            s[d] = a == 1 && !ea ? hi : a;
            ext[d] = ea ? ea : a == 1 && lo != hi ? eb : NULL;
            continue;
        }
        if (ea && b != 1)
            return ir_fail("%s: shape[%d] is %lld where input dim %d is decided at run time (1 keeps it)", c->op, ds,
                           (long long)b, dx);
        if (a != b && a != 1 && b != 1)
            return ir_fail("%s: input dimension %lld cannot broadcast to %lld", c->op, (long long)a, (long long)b);
        s[d] = a == 1 ? b : a;
        ext[d] = ea;
    }
    int same = r == x->ndim;
    for (int d = 0; same && d < r; d++)
        same = s[d] == x->shape[d] && ((!ext[d] && !x->dyn[d]) || (ext[d] && x->dyn[d] &&
                                                                    ir_expr_equal(ext[d], x->dyn[d])));
    if (same) {
        c->out[0] = x;
        return 0;
    }
    for (int d = 0; d < r; d++)
        if (s[d] == 0)
            return (c->out[0] = empty_value(c, "empty", x->dtype, r, s)) ? 0 : -1;
    if (op_check_dims(c, r, s))
        return -1;
    IterVar **ax = op_axes_dyn(r, s, ext);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, r, idx);
    return op_emit_out(c, 0, r, ax, op_read_bcast(x, idx, r)) ? 0 : -1;
}

typedef struct {
    Tensor *x;
    const int64_t *rep;
} TileArg;

static Expr *tile_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    TileArg *a = arg;
    Tensor *x = a->x;
    Expr *ix[KG_MAX_DIMS];
    /* (a dim repeated once is read position for position, a run-time one too) */
    for (int d = 0; d < x->ndim; d++)
        ix[d] = x->shape[d] == 1 ? iconst(0) : a->rep[d] == 1 ? idx[d] : ir_bin(OP_MOD, idx[d], iconst(x->shape[d]));
    return op_read(x, ix);
}

static int tile(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    int64_t rep[MAX_LIST];
    int n = (int)op_const_ints(c, 1, "repeats", rep, MAX_LIST);
    if (n < 0)
        return -1;
    if (n != x->ndim)
        return ir_fail("%s: %d repeats for rank %d", c->op, n, x->ndim);
    int64_t s[KG_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        if (rep[d] < 0)
            return ir_fail("%s: repeats[%d] is %lld", c->op, d, (long long)rep[d]);
        if (x->shape[d] && rep[d] > INT32_MAX / x->shape[d])
            return ir_fail("%s: repeats[%d] is too large", c->op, d);
        s[d] = x->shape[d] * rep[d];
    }
    TileArg a = {x, rep};
    return emit_body(c, 0, n, s, x->dtype, tile_body, &a);
}

/* ---------------------------------------------------------------- Pad */

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } PadMode;

typedef struct {
    Tensor *x;
    PadMode mode;
    int64_t before[KG_MAX_DIMS];
    int padded[KG_MAX_DIMS];
    /* a dim decided at run time, or padded by amounts computed from such dims (torch's
     * F.pad to a multiple of 8): its extent and its pad before as expressions */
    Expr *n_dyn[KG_MAX_DIMS], *before_dyn[KG_MAX_DIMS];
    Expr *value;
} PadArg;

/* A run-time dim (its extent an expression) is padded by the same formulas over its
 * extent: pad_dyn below. */
static Expr *pad_dyn_index(PadArg *a, int d, Expr *i, Expr **inside)
{
    Expr *n = a->n_dyn[d];
    switch (a->mode) {
    case PAD_CONSTANT: {
        Expr *ok = ir_bin(OP_AND, ir_bin(OP_GE, i, iconst(0)), ir_bin(OP_LT, i, n));
        *inside = *inside ? ir_bin(OP_AND, *inside, ok) : ok;
        return i;
    }
    case PAD_EDGE: return ir_bin(OP_MIN, ir_bin(OP_MAX, i, iconst(0)), ir_sub(n, iconst(1)));
    case PAD_WRAP: return ir_bin(OP_FLOORMOD, i, n);
    case PAD_REFLECT: {
        /* one bounce at most, the pads being below n (checked at run time): |i| folded
         * at n - 1, without a division per element (the outer max and min only tell the
         * bound checker what is true anyway) */
        Expr *m = ir_bin(OP_MAX, i, ir_sub(iconst(0), i)), *p = ir_mul(ir_sub(n, iconst(1)), iconst(2));
        return ir_bin(OP_MAX, ir_bin(OP_MIN, ir_bin(OP_MIN, m, ir_sub(p, m)), ir_sub(n, iconst(1))), iconst(0));
    }
    }
    return i;
}

static Expr *pad_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    PadArg *a = arg;
    Expr *ix[KG_MAX_DIMS], *inside = NULL;
    for (int d = 0; d < a->x->ndim; d++) {
        int64_t n = a->x->shape[d];
        Expr *i = ir_sub(idx[d], a->before_dyn[d] ? a->before_dyn[d] : iconst(a->before[d]));
        if (a->n_dyn[d]) {
            ix[d] = a->padded[d] ? pad_dyn_index(a, d, i, &inside) : idx[d];
            continue;
        }
        switch (a->mode) {
        case PAD_CONSTANT: {
            Expr *ok = ir_bin(OP_AND, ir_bin(OP_GE, i, iconst(0)), ir_bin(OP_LT, i, iconst(n)));
            inside = inside ? ir_bin(OP_AND, inside, ok) : ok;
            break;
        }
        case PAD_EDGE: i = ir_bin(OP_MIN, ir_bin(OP_MAX, i, iconst(0)), iconst(n - 1)); break;
        case PAD_WRAP: i = ir_bin(OP_FLOORMOD, i, iconst(n)); break;
        case PAD_REFLECT:
            if (n == 1) {
                i = iconst(0);
            } else {
                /* reflection is periodic with period 2(n-1); the outer min only tells
                 * the bound checker what is true anyway */
                Expr *m = ir_bin(OP_FLOORMOD, i, iconst(2 * (n - 1)));
                i = ir_bin(OP_MIN, ir_bin(OP_MIN, m, ir_sub(iconst(2 * (n - 1)), m)), iconst(n - 1));
            }
            break;
        }
        ix[d] = i;
    }
    Expr *v = op_read(a->x, ix);
    return inside ? ir_select(inside, v, a->value) : v;
}

static int pad(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data");
    if (!x)
        return -1;
    int r = x->ndim;
    const char *ms = op_attr_str(c, "mode", "constant");
    PadArg a = {x, PAD_CONSTANT, {0}, {0}, {0}, {0}, NULL};
    if (!strcmp(ms, "reflect"))
        a.mode = PAD_REFLECT;
    else if (!strcmp(ms, "edge"))
        a.mode = PAD_EDGE;
    else if (!strcmp(ms, "wrap"))
        a.mode = PAD_WRAP;
    else if (strcmp(ms, "constant"))
        return ir_fail("%s: unknown mode '%s'", c->op, ms);
    int64_t pads[MAX_LIST], axes[KG_MAX_DIMS];
    Expr *psym[MAX_LIST] = {0};   /* pads computed from run-time dims (their bounds in pads) */
    int np, na = -1;
    if (c->opset < 11) {
        np = op_attr_ints(c, c->opset < 2 ? "paddings" : "pads", pads, MAX_LIST);
        if (np < 0)
            return ir_fail("%s: attribute 'pads' is required", c->op);
        a.value = op_lit(op_attr_float(c, "value", 0), x->dtype);
    } else {
        if ((np = (int)op_const_ints_sym(c, 1, "pads", pads, psym, MAX_LIST)) < 0)
            return -1;
        if (op_has_input(c, 2)) {
            Tensor *v = c->in[2];
            if (v->dtype != x->dtype)
                return ir_fail("%s: constant_value has type %s, data %s", c->op, ir_dtype_name(v->dtype),
                               ir_dtype_name(x->dtype));
            if (ir_tensor_numel(v) != 1)
                return ir_fail("%s: constant_value must have one element", c->op);
            Expr *zero[KG_MAX_DIMS];
            for (int d = 0; d < v->ndim; d++)
                zero[d] = iconst(0);
            a.value = op_read(v, zero);
        } else {
            a.value = op_lit(0, x->dtype);
        }
        if (op_has_input(c, 3) && (na = (int)op_const_ints(c, 3, "axes", axes, KG_MAX_DIMS)) < 0)
            return -1;
    }
    if (na < 0) {
        na = r;
        for (int d = 0; d < r; d++)
            axes[d] = d;
    }
    if (op_norm_axes(c, axes, na, r, "axes"))
        return -1;
    if (np != 2 * na)
        return ir_fail("%s: %d pads for %d axes", c->op, np, na);
    int64_t s[KG_MAX_DIMS];
    memcpy(s, x->shape, sizeof s);
    Expr *out_dyn[KG_MAX_DIMS] = {0};   /* the output's run-time extents */
    for (int d = 0; d < r; d++)
        a.n_dyn[d] = x->dyn[d];
    for (int i = 0; i < na; i++) {
        int d = (int)axes[i];
        int64_t b = pads[i], e = pads[na + i];
        if (b > INT32_MAX || e > INT32_MAX || b < -x->shape[d] || e < -x->shape[d])
            return ir_fail("%s: pads for axis %d are out of range", c->op, d);
        a.before[d] = b;
        a.padded[d] = b != 0 || e != 0;
        s[d] = x->shape[d] + b + e;
        if (psym[i] || psym[na + i]) {
            /* pads computed from run-time dims: b and e are their bounds; the output's
             * extent is the sum's expression, its bound the sum's largest over the ranges */
            Expr *pb = psym[i] ? psym[i] : ir_idx(b), *pe = psym[na + i] ? psym[na + i] : ir_idx(e);
            int64_t blo, bhi, elo, ehi, lo, hi;
            if (!ir_dims_bounds(c->prog, pb, &blo, &bhi) || !ir_dims_bounds(c->prog, pe, &elo, &ehi) || blo < 0 ||
                elo < 0)
                return ir_fail("%s: pads of axis %d computed from dims decided at run time can be negative (kgen "
                               "pads by such amounts, never crops)", c->op, d);
            if (!a.n_dyn[d])
                a.n_dyn[d] = ir_idx(x->shape[d]);
            out_dyn[d] = ir_simplify(ir_add(ir_add(a.n_dyn[d], pb), pe), NULL);
            if (!ir_dims_bounds(c->prog, out_dyn[d], &lo, &hi) || hi > INT32_MAX)
                return ir_fail("%s: axis %d padded by amounts computed from run-time dims has no bound", c->op, d);
            s[d] = hi;
            a.before_dyn[d] = pb;
            a.padded[d] = 1;
            if (a.mode == PAD_REFLECT)
                ir_program_add_check(c->prog, ir_bin(OP_AND, ir_bin(OP_GT, a.n_dyn[d], pb), ir_bin(OP_GT, a.n_dyn[d], pe)),
                                     ir_fmt("'%s': %s reflects axis %d of '%s' by less than its extent", c->base,
                                            c->op, d, x->name));
            continue;
        }
        if (x->dyn[d] && (b < 0 || e < 0))
            return ir_fail("%s: negative pads (a crop) of axis %d, decided at run time (kgen pads run-time dims "
                           "only)", c->op, d);
        if (x->dyn[d] && a.padded[d] && a.mode == PAD_REFLECT)
            ir_program_add_check(c->prog, ir_bin(OP_GT, x->dyn[d], ir_idx(b > e ? b : e)),
                                 ir_fmt("'%s': %s reflects axis %d of '%s' by %lld, less than its extent", c->base,
                                        c->op, d, x->name, (long long)(b > e ? b : e)));
        if (x->dyn[d])
            out_dyn[d] = ir_simplify(ir_add(x->dyn[d], ir_idx(b + e)), NULL);
    }
    int any_dyn = 0;
    for (int d = 0; d < r; d++) {
        if (x->dyn[d] && !out_dyn[d])
            out_dyn[d] = x->dyn[d];   /* (not padded) */
        any_dyn |= out_dyn[d] != NULL;
    }
    if (any_dyn) {
        /* the output's run-time dims: the extents padded */
        if (emit_body(c, 0, r, s, x->dtype, pad_body, &a))
            return -1;
        for (int d = 0; d < r; d++)
            if (out_dyn[d]) {
                c->out[0]->axes[d]->dyn = out_dyn[d];
                c->out[0]->dyn[d] = out_dyn[d];
            }
        return 0;
    }
    for (int d = 0; d < r; d++) {
        if (s[d] < 0)
            return ir_fail("%s: negative pads remove more than axis %d has", c->op, d);
        if (x->shape[d] == 0 && s[d] > 0 && a.mode != PAD_CONSTANT)
            return ir_fail("%s: mode '%s' cannot pad the empty axis %d", c->op, ms, d);
    }
    if (ir_tensor_numel(x) == 0 && a.mode == PAD_CONSTANT) {
        /* nothing to read: every element is the pad value */
        int empty = 0;
        for (int d = 0; d < r; d++)
            empty |= s[d] == 0;
        if (empty)
            return emit_body(c, 0, r, s, x->dtype, pad_body, &a);
        if (op_check_dims(c, r, s))
            return -1;
        IterVar **ax = op_axes(r, s);
        return op_emit_out(c, 0, r, ax, a.value) ? 0 : -1;
    }
    return emit_body(c, 0, r, s, x->dtype, pad_body, &a);
}

/* ---------------------------------------------------------------- Gather family */

typedef struct {
    Tensor *x, *ind;
    int axis, batch;
} GatherArg;

static Expr *gather_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    GatherArg *a = arg;
    int q = a->ind->ndim;
    Expr *ix[KG_MAX_DIMS];
    for (int d = 0; d < a->axis; d++)
        ix[d] = idx[d];
    ix[a->axis] = wrap_index(op_read(a->ind, idx + a->axis), a->x->shape[a->axis]);
    for (int d = a->axis + 1; d < a->x->ndim; d++)
        ix[d] = idx[d - 1 + q];
    return op_read(a->x, ix);
}

static int check_indices(OpCtx *c, Tensor *ind)
{
    if (ind->dtype != DT_I32 && ind->dtype != DT_I64)
        return ir_fail("%s: indices have type %s (i32 or i64 expected)", c->op, ir_dtype_name(ind->dtype));
    return 0;
}

/* Gather along a run-time dim (`x[:, -1]`, `x[:, t // 2]`): constant positions, or
 * extents (Tensor.sym), each an expression of the dims (-1: the extent less 1), checked at
 * run time to lie inside the dim where the ranges do not show it. The indices are a scalar
 * or a short vector (a choice by the output position). */
enum { MAX_DYN_GATHER = 16 };

typedef struct {
    Tensor *x;
    int axis, q;
    int64_t n;
    Expr *pos[MAX_DYN_GATHER];
} DynGatherArg;

static Expr *dyn_gather_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    DynGatherArg *a = arg;
    Expr *ix[KG_MAX_DIMS];
    for (int d = 0; d < a->axis; d++)
        ix[d] = idx[d];
    Expr *p = a->pos[a->n - 1];
    for (int64_t k = a->n - 2; k >= 0; k--)
        p = ir_select(ir_bin(OP_EQ, idx[a->axis], ir_idx(k)), a->pos[k], p);
    ix[a->axis] = p;
    for (int d = a->axis + 1; d < a->x->ndim; d++)
        ix[d] = idx[d - 1 + a->q];
    return op_read(a->x, ix);
}

static int dyn_gather(OpCtx *c, Tensor *x, Tensor *ind, int axis, int r, const int64_t *s)
{
    DynGatherArg a = {x, axis, ind->ndim, 0, {0}};
    int64_t v[MAX_DYN_GATHER];
    Expr *sym[MAX_DYN_GATHER] = {0};
    if (ind->ndim > 1 || ind->kind != T_CONSTANT || ir_tensor_numel(ind) > MAX_DYN_GATHER ||
        ir_tensor_numel(ind) == 0)
        return ir_fail("%s: gathers along dim %d, decided at run time, by %s (kgen takes up to %d constant "
                       "positions or extents there)", c->op, axis,
                       ind->kind != T_CONSTANT ? "indices computed at run time" : "more than a short vector",
                       MAX_DYN_GATHER);
    a.n = op_const_ints_sym(c, 1, "indices", v, sym, MAX_DYN_GATHER);
    if (a.n < 0)
        return -1;
    Expr *E = x->dyn[axis];
    int64_t elo, ehi;
    if (!ir_dims_bounds(c->prog, E, &elo, &ehi))
        return ir_fail("%s: dim %d, decided at run time, has no bound", c->op, axis);
    for (int64_t k = 0; k < a.n; k++) {
        int64_t lo, hi;
        Expr *p = sym[k] ? sym[k] : v[k] < 0 ? ir_simplify(ir_add(E, ir_idx(v[k])), NULL) : ir_idx(v[k]);
        if (!sym[k] && (v[k] < -ehi || v[k] >= ehi))
            return ir_fail("%s: index %lld is outside dim %d at every extent (at most %lld)", c->op,
                           (long long)v[k], axis, (long long)ehi);
        if (!ir_dims_bounds(c->prog, p, &lo, &hi) || (sym[k] && lo < 0))
            return ir_fail("%s: index %lld, decided at run time, can be negative or has no bound", c->op,
                           (long long)k);
        int64_t dlo, dhi;
        Expr *in = ir_bin(OP_AND, ir_bin(OP_GE, p, ir_idx(0)), ir_bin(OP_LT, p, E));
        if (!(ir_dims_bounds(c->prog, ir_simplify(ir_sub(E, p), NULL), &dlo, &dhi) && dlo >= 1 && lo >= 0))
            ir_program_add_check(c->prog, in, ir_fmt("'%s': %s's index %lld lies inside dim %d of '%s'",
                                                     c->base, c->op, (long long)k, axis, x->name));
        a.pos[k] = p;
    }
    Expr *ext[KG_MAX_DIMS] = {0};   /* (data's other run-time dims, position for position) */
    for (int d = 0; d < x->ndim; d++)
        if (d != axis)
            ext[d < axis ? d : d - 1 + a.q] = x->dyn[d];
    IterVar **ax = op_axes_dyn(r, s, ext);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, r, idx);
    c->dyn_own = 1;
    return op_emit_out(c, 0, r, ax, dyn_gather_body(c, &a, idx)) ? 0 : -1;
}

static int gather(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data"), *ind = op_input(c, 1, "indices");
    if (!x || !ind || check_indices(c, ind))
        return -1;
    if (x->ndim == 0)
        return ir_fail("%s: data must have rank 1 or more", c->op);
    GatherArg a = {x, ind, 0, 0};
    if (op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &a.axis))
        return -1;
    int r = x->ndim - 1 + ind->ndim;
    if (check_rank(c, r))
        return -1;
    int64_t s[KG_MAX_DIMS];
    for (int d = 0; d < a.axis; d++)
        s[d] = x->shape[d];
    for (int d = 0; d < ind->ndim; d++)
        s[a.axis + d] = ind->shape[d];
    for (int d = a.axis + 1; d < x->ndim; d++)
        s[d - 1 + ind->ndim] = x->shape[d];
    if (x->dyn[a.axis] || ir_tensor_has_sym(ind))
        return x->dyn[a.axis] ? dyn_gather(c, x, ind, a.axis, r, s)
                              : ir_fail("%s: indices decided at run time into dim %d, which is fixed (kgen "
                                        "gathers by extents along run-time dims only)", c->op, a.axis);
    return emit_body(c, 0, r, s, x->dtype, gather_body, &a);
}

static Expr *gather_elements_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    GatherArg *a = arg;
    Expr *ix[KG_MAX_DIMS];
    memcpy(ix, idx, sizeof(Expr *) * (size_t)a->x->ndim);
    ix[a->axis] = wrap_index(op_read(a->ind, idx), a->x->shape[a->axis]);
    return op_read(a->x, ix);
}

static int gather_elements(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data"), *ind = op_input(c, 1, "indices");
    if (!x || !ind || check_indices(c, ind))
        return -1;
    if (x->ndim == 0 || ind->ndim != x->ndim)
        return ir_fail("%s: data and indices must have the same rank (1 or more)", c->op);
    GatherArg a = {x, ind, 0, 0};
    if (op_axis(c, op_attr_int(c, "axis", 0), x->ndim, "axis", &a.axis))
        return -1;
    for (int d = 0; d < x->ndim; d++)
        if (d != a.axis && ind->shape[d] > x->shape[d])
            return ir_fail("%s: indices dimension %d (%lld) exceeds data's (%lld)", c->op, d,
                           (long long)ind->shape[d], (long long)x->shape[d]);
    return emit_body(c, 0, ind->ndim, ind->shape, x->dtype, gather_elements_body, &a);
}

/* GatherND: out[b..., u..., t...] = data[b..., indices[b..., u..., :]..., t...] */
static Expr *gather_nd_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    GatherArg *a = arg;
    int q = a->ind->ndim, k = (int)a->ind->shape[q - 1], b = a->batch;
    Expr *ix[KG_MAX_DIMS], *ii[KG_MAX_DIMS];
    for (int d = 0; d < q - 1; d++)
        ii[d] = idx[d];
    for (int d = 0; d < b; d++)
        ix[d] = idx[d];
    for (int j = 0; j < k; j++) {
        ii[q - 1] = iconst(j);
        ix[b + j] = wrap_index(op_read(a->ind, ii), a->x->shape[b + j]);
    }
    for (int d = b + k; d < a->x->ndim; d++)
        ix[d] = idx[q - 1 + d - b - k];
    return op_read(a->x, ix);
}

static int gather_nd(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data"), *ind = op_input(c, 1, "indices");
    if (!x || !ind || check_indices(c, ind))
        return -1;
    int64_t b = op_attr_int(c, "batch_dims", 0);
    int q = ind->ndim;
    if (q < 1 || x->ndim < 1)
        return ir_fail("%s: data and indices must have rank 1 or more", c->op);
    int64_t k = ind->shape[q - 1];
    if (b < 0 || b >= q || b >= x->ndim)
        return ir_fail("%s: batch_dims %lld is out of range", c->op, (long long)b);
    if (k < 1 || k > x->ndim - b)
        return ir_fail("%s: the last indices dimension (%lld) exceeds data's rank minus batch_dims", c->op,
                       (long long)k);
    for (int d = 0; d < b; d++)
        if (ind->shape[d] != x->shape[d])
            return ir_fail("%s: batch dimension %d differs between data and indices", c->op, d);
    int r = q - 1 + x->ndim - (int)b - (int)k;
    if (check_rank(c, r))
        return -1;
    int64_t s[KG_MAX_DIMS];
    for (int d = 0; d < q - 1; d++)
        s[d] = ind->shape[d];
    for (int d = (int)(b + k); d < x->ndim; d++)
        s[q - 1 + d - b - k] = x->shape[d];
    GatherArg a = {x, ind, 0, (int)b};
    return emit_body(c, 0, r, s, x->dtype, gather_nd_body, &a);
}

/* ---------------------------------------------------------------- Scatter family */

typedef enum { RD_NONE, RD_ADD, RD_MUL, RD_MAX, RD_MIN } Reduction;

static int get_reduction(OpCtx *c, DType t, Reduction *out)
{
    const char *s = op_attr_str(c, "reduction", "none");
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) {
            *out = (Reduction)i;
            if (i && (t == DT_BOOL || ir_dtype_is_storage(t)))
                return ir_fail("%s: reduction '%s' on type %s is not supported", c->op, s, ir_dtype_name(t));
            return 0;
        }
    return ir_fail("%s: unknown reduction '%s'", c->op, s);
}

/* The last part of a scatter: out = data where no update lands, else
 *   none:     updates at the last matching position (pos[p] >= 0)
 *   reduced:  data (op) the reduction of the matching updates.
 * `found` is a compute over the output positions (or a prefix of them). */
static Expr *combine(Reduction rd, Expr *data, Expr *found, Expr *update_at_found)
{
    switch (rd) {
    case RD_NONE: return ir_select(ir_bin(OP_GE, found, iconst(0)), update_at_found, data);
    case RD_ADD: return ir_bin(OP_ADD, data, found);
    case RD_MUL: return ir_bin(OP_MUL, data, found);
    case RD_MAX: return ir_bin(OP_MAX, data, found);
    case RD_MIN: return ir_bin(OP_MIN, data, found);
    }
    return NULL;
}

static ReduceOp red_op(Reduction rd)
{
    switch (rd) {
    case RD_ADD: return RED_SUM;
    case RD_MUL: return RED_PROD;
    case RD_MIN: return RED_MIN;
    default: return RED_MAX;
    }
}

/* Split a flat index over dims[0..n) into per-dimension indices. */
static void unflatten(Expr *flat, const int64_t *dims, int n, Expr **out)
{
    int64_t stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        Expr *e = stride > 1 ? ir_bin(OP_DIV, flat, iconst(stride)) : flat;
        out[d] = d > 0 ? ir_bin(OP_MOD, e, iconst(dims[d])) : e;
        stride *= dims[d];
    }
}

static int scatter_nd(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data"), *ind = op_input(c, 1, "indices"), *up = op_input(c, 2, "updates");
    if (!x || !ind || !up || check_indices(c, ind))
        return -1;
    Reduction rd;
    if (get_reduction(c, x->dtype, &rd))
        return -1;
    int q = ind->ndim, r = x->ndim;
    if (q < 1 || r < 1)
        return ir_fail("%s: data and indices must have rank 1 or more", c->op);
    if (ind->shape[q - 1] < 1 || ind->shape[q - 1] > r)
        return ir_fail("%s: the last indices dimension (%lld) exceeds data's rank", c->op,
                       (long long)ind->shape[q - 1]);
    int k = (int)ind->shape[q - 1];
    if (up->dtype != x->dtype)
        return ir_fail("%s: updates have type %s, data %s", c->op, ir_dtype_name(up->dtype), ir_dtype_name(x->dtype));
    if (up->ndim != q - 1 + r - k)
        return ir_fail("%s: updates have rank %d, expected %d", c->op, up->ndim, q - 1 + r - k);
    for (int d = 0; d < q - 1; d++)
        if (up->shape[d] != ind->shape[d])
            return ir_fail("%s: updates' shape does not match indices'", c->op);
    for (int d = k; d < r; d++)
        if (up->shape[q - 1 + d - k] != x->shape[d])
            return ir_fail("%s: updates' shape does not match data's", c->op);
    int64_t nup = 1;
    for (int d = 0; d < q - 1; d++)
        nup *= ind->shape[d];
    if (nup > INT32_MAX)
        return ir_fail("%s: too many updates", c->op);

    /* found[p...]: a reduction over the update positions u; for none it is the last
     * u that lands on p, which depends on p[0..k) only */
    int fr = rd == RD_NONE ? k : r;
    IterVar **fax = op_axes(fr, x->shape);
    Expr *p[KG_MAX_DIMS];
    op_axis_exprs(fax, fr, p);
    IterVar *ru = ir_itervar_new("r", nup, IV_REDUCE);
    Expr *u = ir_varref(ru->var), *uix[KG_MAX_DIMS], *ii[KG_MAX_DIMS];
    unflatten(u, ind->shape, q - 1, uix);
    memcpy(ii, uix, sizeof(Expr *) * (size_t)(q - 1));
    Expr *match = NULL;
    for (int j = 0; j < k; j++) {
        ii[q - 1] = iconst(j);
        Expr *e = ir_bin(OP_EQ, wrap_index(op_read(ind, ii), x->shape[j]), p[j]);
        match = match ? ir_bin(OP_AND, match, e) : e;
    }
    Expr *body;
    if (rd == RD_NONE) {
        body = ir_select(match, u, iconst(-1));
    } else {
        Expr *upix[KG_MAX_DIMS];
        memcpy(upix, uix, sizeof(Expr *) * (size_t)(q - 1));
        for (int d = k; d < r; d++)
            upix[q - 1 + d - k] = p[d];
        body = ir_select(match, op_read(up, upix), ir_reduce_identity(red_op(rd), x->dtype));
    }
    Tensor *found = op_emit(c, op_name(c, rd == RD_NONE ? "last" : "acc"), fr, fax,
                            ir_reduce(rd == RD_NONE ? RED_MAX : red_op(rd), body, &ru, 1));
    if (!found)
        return -1;

    IterVar **oax = op_axes(r, x->shape);
    Expr *o[KG_MAX_DIMS];
    op_axis_exprs(oax, r, o);
    Expr *f = ir_access(found, o, fr);
    Expr *at = NULL;
    if (rd == RD_NONE) {
        Expr *upix[KG_MAX_DIMS];
        unflatten(f, ind->shape, q - 1, upix);
        for (int d = k; d < r; d++)
            upix[q - 1 + d - k] = o[d];
        at = op_read(up, upix);
    }
    return op_emit_out(c, 0, r, oax, combine(rd, op_read(x, o), f, at)) ? 0 : -1;
}

/* ScatterElements (and the old Scatter): the updates that can land on p differ from p
 * only along the axis, so the reduction runs over that axis of the indices. */
static int scatter_elements(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "data"), *ind = op_input(c, 1, "indices"), *up = op_input(c, 2, "updates");
    if (!x || !ind || !up || check_indices(c, ind))
        return -1;
    Reduction rd;
    if (get_reduction(c, x->dtype, &rd))
        return -1;
    int r = x->ndim, axis;
    if (r < 1 || ind->ndim != r || up->ndim != r)
        return ir_fail("%s: data, indices and updates must have the same rank (1 or more)", c->op);
    if (up->dtype != x->dtype)
        return ir_fail("%s: updates have type %s, data %s", c->op, ir_dtype_name(up->dtype), ir_dtype_name(x->dtype));
    if (op_axis(c, op_attr_int(c, "axis", 0), r, "axis", &axis))
        return -1;
    for (int d = 0; d < r; d++) {
        if (up->shape[d] != ind->shape[d])
            return ir_fail("%s: updates and indices have different shapes", c->op);
        if (d != axis && ind->shape[d] > x->shape[d])
            return ir_fail("%s: indices dimension %d (%lld) exceeds data's (%lld)", c->op, d,
                           (long long)ind->shape[d], (long long)x->shape[d]);
    }
    IterVar **ax = op_axes(r, x->shape);
    Expr *p[KG_MAX_DIMS], *ii[KG_MAX_DIMS];
    op_axis_exprs(ax, r, p);
    IterVar *ru = ir_itervar_new("r", ind->shape[axis], IV_REDUCE);
    Expr *u = ir_varref(ru->var);
    Expr *inb = NULL;
    for (int d = 0; d < r; d++) {
        ii[d] = d == axis ? u : p[d];
        if (d != axis && ind->shape[d] < x->shape[d]) {
            Expr *e = ir_bin(OP_LT, p[d], iconst(ind->shape[d]));
            inb = inb ? ir_bin(OP_AND, inb, e) : e;
        }
    }
    Expr *match = ir_bin(OP_EQ, wrap_index(op_read(ind, ii), x->shape[axis]), p[axis]);
    Expr *none = rd == RD_NONE ? iconst(-1) : ir_reduce_identity(red_op(rd), x->dtype);
    Expr *hit = rd == RD_NONE ? u : op_read(up, ii);
    Expr *body = ir_select(match, hit, none);
    if (inb)
        body = ir_select(inb, body, none);
    Tensor *found = op_emit(c, op_name(c, rd == RD_NONE ? "last" : "acc"), r, ax,
                            ir_reduce(rd == RD_NONE ? RED_MAX : red_op(rd), body, &ru, 1));
    if (!found)
        return -1;
    IterVar **oax = op_axes(r, x->shape);
    Expr *o[KG_MAX_DIMS];
    op_axis_exprs(oax, r, o);
    Expr *f = op_read(found, o), *at = NULL;
    if (rd == RD_NONE) {
        Expr *uix[KG_MAX_DIMS];
        memcpy(uix, o, sizeof(Expr *) * (size_t)r);
        uix[axis] = f;
        at = op_read(up, uix);
    }
    return op_emit_out(c, 0, r, oax, combine(rd, op_read(x, o), f, at)) ? 0 : -1;
}

/* ---------------------------------------------------------------- DepthToSpace, SpaceToDepth */

typedef struct {
    Tensor *x;
    int64_t b;
    int crd;
} BlockArg;

static Expr *d2s_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    BlockArg *a = arg;
    int64_t b = a->b, co = a->x->shape[1] / (b * b);
    Expr *h = ir_bin(OP_DIV, idx[2], iconst(b)), *i = ir_bin(OP_MOD, idx[2], iconst(b));
    Expr *w = ir_bin(OP_DIV, idx[3], iconst(b)), *j = ir_bin(OP_MOD, idx[3], iconst(b));
    Expr *ch = a->crd ? ir_add(ir_mul(idx[1], iconst(b * b)), ir_add(ir_mul(i, iconst(b)), j))
                      : ir_add(ir_mul(ir_add(ir_mul(i, iconst(b)), j), iconst(co)), idx[1]);
    Expr *ix[4] = {idx[0], ch, h, w};
    return op_read(a->x, ix);
}

static Expr *s2d_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    BlockArg *a = arg;
    int64_t b = a->b, ci = a->x->shape[1];
    Expr *i = ir_bin(OP_DIV, idx[1], iconst(b * ci));
    Expr *j = ir_bin(OP_MOD, ir_bin(OP_DIV, idx[1], iconst(ci)), iconst(b));
    Expr *ch = ir_bin(OP_MOD, idx[1], iconst(ci));
    Expr *ix[4] = {idx[0], ch, ir_add(ir_mul(idx[2], iconst(b)), i), ir_add(ir_mul(idx[3], iconst(b)), j)};
    return op_read(a->x, ix);
}

static int depth_space(OpCtx *c, int to_space)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (x->ndim != 4)
        return ir_fail("%s: the input must have rank 4 (N, C, H, W)", c->op);
    int64_t b = op_attr_int(c, "blocksize", 0);
    if (b < 1 || b > 65536)
        return ir_fail("%s: blocksize %lld is invalid", c->op, (long long)b);
    const char *mode = op_attr_str(c, "mode", "DCR");
    BlockArg a = {x, b, !strcmp(mode, "CRD")};
    if (to_space && !a.crd && strcmp(mode, "DCR"))
        return ir_fail("%s: unknown mode '%s'", c->op, mode);
    if (x->dyn[1])
        return ir_fail("%s: the channels are decided at run time (kgen moves fixed channels only)", c->op);
    int64_t s[4];
    Expr *ext[4] = {x->dyn[0], NULL, NULL, NULL};   /* the output's run-time extents */
    if (to_space) {
        if (x->shape[1] % (b * b))
            return ir_fail("%s: channels (%lld) are not a multiple of blocksize^2", c->op, (long long)x->shape[1]);
        int64_t sh[4] = {x->shape[0], x->shape[1] / (b * b), x->shape[2] * b, x->shape[3] * b};
        memcpy(s, sh, sizeof s);
        for (int d = 2; d < 4; d++)   /* (PixelShuffle over an image of any size) */
            if (x->dyn[d])
                ext[d] = ir_simplify(ir_mul(x->dyn[d], ir_idx(b)), NULL);
        if (emit_body(c, 0, 4, s, x->dtype, d2s_body, &a))
            return -1;
    } else {
        for (int d = 2; d < 4; d++) {
            if (!x->dyn[d] && x->shape[d] % b)
                return ir_fail("%s: height and width must be multiples of blocksize", c->op);
            if (x->dyn[d]) {
                /* a run-time extent: a multiple of the block, checked at run time; the
                 * bound's blocks below it */
                ir_program_add_check(c->prog, ir_bin(OP_EQ, ir_bin(OP_FLOORMOD, x->dyn[d], ir_idx(b)), ir_idx(0)),
                                     ir_fmt("'%s': %s needs dim %d of '%s' to be a multiple of %lld", c->base, c->op,
                                            d, x->name, (long long)b));
                ext[d] = ir_simplify(ir_bin(OP_FLOORDIV, x->dyn[d], ir_idx(b)), NULL);
            }
        }
        int64_t sh[4] = {x->shape[0], x->shape[1] * b * b, x->shape[2] / b, x->shape[3] / b};
        memcpy(s, sh, sizeof s);
        if (emit_body(c, 0, 4, s, x->dtype, s2d_body, &a))
            return -1;
    }
    for (int d = 0; d < 4; d++)
        if (ext[d]) {
            c->out[0]->axes[d]->dyn = ext[d];
            c->out[0]->dyn[d] = ext[d];
        }
    return 0;
}

static int depth_to_space(OpCtx *c) { return depth_space(c, 1); }
static int space_to_depth(OpCtx *c) { return depth_space(c, 0); }

/* ---------------------------------------------------------------- Trilu */

typedef struct {
    Tensor *x;
    int upper;
    int64_t k;
} TriluArg;

static Expr *trilu_body(OpCtx *c, void *arg, Expr **idx)
{
    (void)c;
    TriluArg *a = arg;
    int r = a->x->ndim;
    Expr *diff = ir_sub(idx[r - 1], idx[r - 2]);   /* j - i */
    int64_t k = a->k < -INT32_MAX ? -INT32_MAX : a->k > INT32_MAX ? INT32_MAX : a->k;
    Expr *keep = ir_bin(a->upper ? OP_GE : OP_LE, diff, iconst(k));
    return ir_select(keep, op_read(a->x, idx), op_lit(0, a->x->dtype));
}

static int trilu(OpCtx *c)
{
    Tensor *x = op_input(c, 0, "input");
    if (!x)
        return -1;
    if (x->ndim < 2)
        return ir_fail("%s: the input must have rank 2 or more", c->op);
    TriluArg a = {x, (int)op_attr_int(c, "upper", 1), 0};
    if (op_has_input(c, 1)) {
        int64_t k[2];
        int64_t n = op_const_ints(c, 1, "k", k, 1);
        if (n < 0)
            return -1;
        if (n != 1)
            return ir_fail("%s: k must have one element", c->op);
        a.k = k[0];
    }
    return emit_body(c, 0, x->ndim, x->shape, x->dtype, trilu_body, &a);
}

const OpDef op_defs_shape[] = {
    {"Reshape", reshape},
    {"Flatten", flatten},
    {"Squeeze", squeeze},
    {"Unsqueeze", unsqueeze},
    {"Transpose", transpose},
    {"Concat", concat},
    {"Split", split},
    {"Slice", slice},
    {"Expand", expand},
    {"Tile", tile},
    {"Pad", pad},
    {"Gather", gather},
    {"GatherElements", gather_elements},
    {"GatherND", gather_nd},
    {"ScatterND", scatter_nd},
    {"ScatterElements", scatter_elements},
    {"Scatter", scatter_elements},
    {"DepthToSpace", depth_to_space},
    {"SpaceToDepth", space_to_depth},
    {"Trilu", trilu},
    {NULL, NULL},
};
