/* util.c - helpers shared by the operator builders: attributes, constant inputs,
 * broadcasting and tensor creation. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- attributes */

const OpAttr *op_attr(OpCtx *c, const char *name)
{
    for (int i = 0; i < c->nattrs; i++)
        if (!strcmp(c->attrs[i].name, name))
            return &c->attrs[i];
    return NULL;
}

int64_t op_attr_int(OpCtx *c, const char *name, int64_t dflt)
{
    const OpAttr *a = op_attr(c, name);
    return a ? a->i : dflt;
}

double op_attr_float(OpCtx *c, const char *name, double dflt)
{
    const OpAttr *a = op_attr(c, name);
    return a ? (double)a->f : dflt;
}

const char *op_attr_str(OpCtx *c, const char *name, const char *dflt)
{
    const OpAttr *a = op_attr(c, name);
    return a && a->s ? a->s : dflt;
}

int op_attr_ints(OpCtx *c, const char *name, int64_t *out, int max)
{
    const OpAttr *a = op_attr(c, name);
    if (!a)
        return -1;
    int n = a->nints < max ? a->nints : max;
    for (int i = 0; i < n; i++)
        out[i] = a->ints[i];
    return n;
}

int op_attr_floats(OpCtx *c, const char *name, double *out, int max)
{
    const OpAttr *a = op_attr(c, name);
    if (!a)
        return -1;
    int n = a->nfloats < max ? a->nfloats : max;
    for (int i = 0; i < n; i++)
        out[i] = a->floats[i];
    return n;
}

/* ---------------------------------------------------------------- inputs */

int op_has_input(OpCtx *c, int i) { return i < c->nin && c->in[i] != NULL; }

Tensor *op_input(OpCtx *c, int i, const char *what)
{
    if (!op_has_input(c, i)) {
        ir_fail("%s: input %d (%s) is required", c->op, i, what);
        return NULL;
    }
    return c->in[i];
}

int op_is_const(OpCtx *c, int i)
{
    if (!op_has_input(c, i))
        return 0;
    Tensor *t = c->in[i];
    if (t->kind == T_CONSTANT || (t->kind == T_PLACEHOLDER && t->data))
        return 1;
    Tensor *k = c->known && t->kind != T_PLACEHOLDER ? c->known(c->importer, t) : NULL;
    if (k)
        c->in[i] = k;   /* the same value, as a constant */
    return k != NULL;
}

/* element k of a constant as double or int64 */
static double elem_f(const Tensor *t, int64_t k)
{
    if (ir_dtype_is_packed(t->dtype) && !ir_dtype_is_float(t->dtype))
        return (double)ir_packed_get(t->dtype, t->data, k);
    const unsigned char *p = (const unsigned char *)t->data + k * ir_dtype_bytes(t->dtype);
    switch (t->dtype) {
    case DT_BOOL:
    case DT_U8: return *p;
    case DT_I8: return (int8_t)*p;
    case DT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case DT_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case DT_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case DT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case DT_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    case DT_F32: { float v; memcpy(&v, p, 4); return v; }
    case DT_F64: { double v; memcpy(&v, p, 8); return v; }
    default: return ir_storage_to_f32(t->dtype, p);   /* f16, bf16, the float8 types */
    }
}

static int64_t elem_i(const Tensor *t, int64_t k)
{
    const unsigned char *p = (const unsigned char *)t->data + k * ir_dtype_bytes(t->dtype);
    if (t->dtype == DT_I64 || t->dtype == DT_U64) {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    double d = elem_f(t, k);
    if (!(d > -9.2e18 && d < 9.2e18))
        return d > 0 ? INT64_MAX : INT64_MIN;
    return (int64_t)d;
}

static Tensor *const_input_sym(OpCtx *c, int i, const char *what, int64_t max, int sym_ok);
static Tensor *const_input(OpCtx *c, int i, const char *what, int64_t max)
{
    return const_input_sym(c, i, what, max, 0);
}

static Tensor *const_input_sym(OpCtx *c, int i, const char *what, int64_t max, int sym_ok)
{
    Tensor *t = op_input(c, i, what);
    if (!t)
        return NULL;
    if (!op_is_const(c, i)) {
        ir_fail("%s: input %d (%s) must be known when compiling; kgen generates static code "
                "(make it an initializer or a Constant, or bind the input's data)",
                c->op, i, what);
        return NULL;
    }
    t = c->in[i];   /* (op_is_const may have put the folded value there) */
    if (!sym_ok && ir_tensor_has_sym(t)) {
        ir_fail("%s: input %d (%s) holds extents decided at run time (a shape of a tensor with run-time dims), "
                "which %s cannot take yet", c->op, i, what, c->op);
        return NULL;
    }
    if (ir_tensor_numel(t) > max) {
        ir_fail("%s: input %d (%s) has %lld elements, more than %lld", c->op, i, what,
                (long long)ir_tensor_numel(t), (long long)max);
        return NULL;
    }
    if (t->kind == T_PLACEHOLDER)
        t->frozen = 1;
    return t;
}

int64_t op_const_ints(OpCtx *c, int i, const char *what, int64_t *out, int64_t max)
{
    Tensor *t = const_input(c, i, what, max);
    if (!t)
        return -1;
    int64_t n = ir_tensor_numel(t);
    for (int64_t k = 0; k < n; k++)
        out[k] = elem_i(t, k);
    return n;
}

int64_t op_const_ints_sym(OpCtx *c, int i, const char *what, int64_t *out, Expr **sym, int64_t max)
{
    Tensor *t = const_input_sym(c, i, what, max, 1);
    if (!t)
        return -1;
    int64_t n = ir_tensor_numel(t);
    for (int64_t k = 0; k < n; k++) {
        out[k] = elem_i(t, k);
        sym[k] = t->sym ? t->sym[k] : NULL;
    }
    return n;
}

int64_t op_const_floats(OpCtx *c, int i, const char *what, double *out, int64_t max)
{
    Tensor *t = const_input(c, i, what, max);
    if (!t)
        return -1;
    int64_t n = ir_tensor_numel(t);
    for (int64_t k = 0; k < n; k++)
        out[k] = elem_f(t, k);
    return n;
}

/* ---------------------------------------------------------------- building */

const char *op_name(OpCtx *c, const char *what)
{
    const char *base = ir_fmt("%s_%s", c->base, what);
    const char *name = base;
    for (int k = 1; ir_program_find(c->prog, name); k++)
        name = ir_fmt("%s%d", base, k);
    return name;
}

IterVar **op_axes(int ndim, const int64_t *shape)
{
    IterVar **ax = ir_alloc(sizeof *ax * (size_t)(ndim ? ndim : 1));
    for (int d = 0; d < ndim; d++)
        ax[d] = ir_itervar_new(ir_fmt("i%d", d), shape[d], IV_SPATIAL);
    return ax;
}

IterVar **op_axes_dyn(int ndim, const int64_t *shape, Expr *const *ext)
{
    IterVar **ax = op_axes(ndim, shape);
    for (int d = 0; d < ndim; d++)
        ax[d]->dyn = ext[d];
    return ax;
}

void op_axis_exprs(IterVar **axes, int ndim, Expr **out)
{
    for (int d = 0; d < ndim; d++)
        out[d] = ir_varref(axes[d]->var);
}

Tensor *op_emit(OpCtx *c, const char *name, int ndim, IterVar **axes, Expr *body)
{
    if (!body)
        return NULL;
    Tensor *t = ir_compute(name, ndim, axes, body);
    if (!t || ir_program_add(c->prog, t))
        return NULL;
    return t;
}

Tensor *op_emit_out(OpCtx *c, int i, int ndim, IterVar **axes, Expr *body)
{
    const char *name = i < OP_MAX_IO && c->out_names[i] ? c->out_names[i] : op_name(c, ir_fmt("out%d", i));
    if (ir_program_find(c->prog, name))
        name = op_name(c, ir_fmt("out%d", i));
    Tensor *t = op_emit(c, name, ndim, axes, body);
    if (t && i < OP_MAX_IO)
        c->out[i] = t;
    return t;
}

Tensor *op_const_tensor(OpCtx *c, const char *what, DType t, int ndim, const int64_t *shape, const void *data)
{
    Tensor *x = ir_constant(op_name(c, what), t, ndim, shape, data);
    if (!x || ir_program_add(c->prog, x))
        return NULL;
    return x;
}

Tensor *op_copy(OpCtx *c, int out_index, Tensor *t)
{
    IterVar **ax = op_axes(t->ndim, t->shape);
    Expr *idx[KG_MAX_DIMS];
    op_axis_exprs(ax, t->ndim, idx);
    return op_emit_out(c, out_index, t->ndim, ax, op_read(t, idx));
}

int64_t op_gcd(int64_t a, int64_t b) { return b ? op_gcd(b, a % b) : a; }

Expr *op_read(Tensor *t, Expr **idx) { return ir_access(t, idx, t->ndim); }

int op_broadcast_shape(const Tensor *a, const Tensor *b, int *ndim, int64_t *shape)
{
    Tensor *ts[2] = {(Tensor *)a, (Tensor *)b};
    return op_broadcast_shapes(ts, 2, ndim, shape);
}

int op_broadcast_shapes(Tensor **ts, int n, int *ndim, int64_t *shape)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->ndim > r)
            r = ts[i]->ndim;
    for (int d = 0; d < r; d++)
        shape[d] = 1;
    for (int i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        int off = r - ts[i]->ndim;
        for (int d = 0; d < ts[i]->ndim; d++) {
            int64_t s = ts[i]->shape[d], *o = &shape[off + d];
            if (s == *o || s == 1)
                continue;
            if (*o == 1) {
                *o = s;
                continue;
            }
            return ir_fail("shapes cannot broadcast: dimension %d is %lld in one input and %lld in another",
                           off + d, (long long)*o, (long long)s);
        }
    }
    *ndim = r;
    return 0;
}

Expr *op_read_bcast(Tensor *t, Expr **idx, int ndim)
{
    Expr *ix[KG_MAX_DIMS];
    int off = ndim - t->ndim;
    for (int d = 0; d < t->ndim; d++)
        ix[d] = t->shape[d] == 1 ? ir_idx(0) : idx[off + d];
    return ir_access(t, ix, t->ndim);
}

Expr *op_lit(double v, DType t)
{
    if (ir_dtype_is_float(t))
        return ir_float(v, t);
    return ir_int((int64_t)v, t);
}

int op_axis(OpCtx *c, int64_t axis, int rank, const char *what, int *out)
{
    if (axis < -rank || axis >= (rank ? rank : 1))
        return ir_fail("%s: %s %lld is out of range for rank %d", c->op, what, (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

int op_norm_axes(OpCtx *c, int64_t *axes, int n, int r, const char *what)
{
    for (int i = 0; i < n; i++) {
        int a = 0;
        if (op_axis(c, axes[i], r, what, &a))
            return -1;
        axes[i] = a;
        for (int j = 0; j < i; j++)
            if (axes[j] == a)
                return ir_fail("%s: %s lists axis %d twice", c->op, what, a);
    }
    return 0;
}

Expr *op_f8_saturate(Expr *v, DType to, int saturate)
{
    if (to == DT_F8E8M0 && !saturate) {
        /* the conversion saturates (inf too); without it what lies above 2^127 is NaN */
        DType ct = v->dtype == DT_F64 ? DT_F64 : DT_F32;
        if (v->dtype != ct)
            v = ir_cast(ct, v);
        Expr *a = ir_mathcall(FN_ABS, &v, 1);
        return ir_select(ir_bin(OP_GT, a, ir_float(ir_dtype_float_max(to), ct)), ir_float(NAN, ct), v);
    }
    if (!ir_dtype_is_float8(to) || !saturate)
        return v;
    DType ct = v->dtype == DT_F64 ? DT_F64 : DT_F32;
    if (v->dtype != ct)
        v = ir_cast(ct, v);
    double m = ir_dtype_float_max(to);
    Expr *lo = ir_select(ir_bin(OP_LT, v, ir_float(-m, ct)), ir_float(-m, ct), v);
    return ir_select(ir_bin(OP_GT, v, ir_float(m, ct)), ir_float(m, ct), lo);
}

int op_dtype_from_onnx(int onnx_dtype, DType *out)
{
    switch (onnx_dtype) {
    case ONNX_FLOAT: *out = DT_F32; return 0;
    case ONNX_DOUBLE: *out = DT_F64; return 0;
    case ONNX_FLOAT16: *out = DT_F16; return 0;
    case ONNX_BFLOAT16: *out = DT_BF16; return 0;
    case ONNX_FLOAT8E4M3FN: *out = DT_F8E4M3FN; return 0;
    case ONNX_FLOAT8E4M3FNUZ: *out = DT_F8E4M3FNUZ; return 0;
    case ONNX_FLOAT8E5M2: *out = DT_F8E5M2; return 0;
    case ONNX_FLOAT8E5M2FNUZ: *out = DT_F8E5M2FNUZ; return 0;
    case ONNX_INT8: *out = DT_I8; return 0;
    case ONNX_UINT8: *out = DT_U8; return 0;
    case ONNX_INT16: *out = DT_I16; return 0;
    case ONNX_UINT16: *out = DT_U16; return 0;
    case ONNX_INT32: *out = DT_I32; return 0;
    case ONNX_UINT32: *out = DT_U32; return 0;
    case ONNX_INT64: *out = DT_I64; return 0;
    case ONNX_UINT64: *out = DT_U64; return 0;
    case ONNX_BOOL: *out = DT_BOOL; return 0;
    case ONNX_INT4: *out = DT_I4; return 0;
    case ONNX_UINT4: *out = DT_U4; return 0;
    case ONNX_INT2: *out = DT_I2; return 0;
    case ONNX_UINT2: *out = DT_U2; return 0;
    case ONNX_FLOAT4E2M1: *out = DT_F4E2M1; return 0;
    case ONNX_FLOAT8E8M0: *out = DT_F8E8M0; return 0;
    default: break;
    }
    return ir_fail("unsupported element type %s", onnx_dtype_name(onnx_dtype));
}

int op_dtype_to_onnx(DType t)
{
    switch (t) {
    case DT_F32: return ONNX_FLOAT;
    case DT_F64: return ONNX_DOUBLE;
    case DT_F16: return ONNX_FLOAT16;
    case DT_BF16: return ONNX_BFLOAT16;
    case DT_F8E4M3FN: return ONNX_FLOAT8E4M3FN;
    case DT_F8E4M3FNUZ: return ONNX_FLOAT8E4M3FNUZ;
    case DT_F8E5M2: return ONNX_FLOAT8E5M2;
    case DT_F8E5M2FNUZ: return ONNX_FLOAT8E5M2FNUZ;
    case DT_I8: return ONNX_INT8;
    case DT_U8: return ONNX_UINT8;
    case DT_I16: return ONNX_INT16;
    case DT_U16: return ONNX_UINT16;
    case DT_I32: return ONNX_INT32;
    case DT_U32: return ONNX_UINT32;
    case DT_I64: return ONNX_INT64;
    case DT_U64: return ONNX_UINT64;
    case DT_BOOL: return ONNX_BOOL;
    case DT_I4: return ONNX_INT4;
    case DT_U4: return ONNX_UINT4;
    case DT_I2: return ONNX_INT2;
    case DT_U2: return ONNX_UINT2;
    case DT_F4E2M1: return ONNX_FLOAT4E2M1;
    case DT_F8E8M0: return ONNX_FLOAT8E8M0;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- shared attribute and shape checks */

int op_spatial_attr(OpCtx *c, const char *name, int ns, int64_t dflt, int64_t minv, int64_t *out)
{
    int64_t v[2 * KG_MAX_DIMS + 1];
    for (int i = 0; i < ns; i++)
        out[i] = dflt;
    int n = op_attr_ints(c, name, v, 2 * KG_MAX_DIMS + 1);
    if (n < 0)
        return 0;
    if (n != ns)
        return ir_fail("%s: attribute %s has %d values, expected %d (one per spatial dimension)", c->op, name, n, ns);
    for (int i = 0; i < ns; i++) {
        if (v[i] < minv)
            return ir_fail("%s: attribute %s[%d] is %lld, must be at least %lld", c->op, name, i, (long long)v[i],
                           (long long)minv);
        if (v[i] > INT32_MAX)
            return ir_fail("%s: attribute %s[%d] is %lld, more than %d", c->op, name, i, (long long)v[i], INT32_MAX);
        out[i] = v[i];
    }
    return 0;
}

int op_pads_attr(OpCtx *c, int ns, int64_t *lo, int64_t *hi, int allow_negative)
{
    int64_t v[2 * KG_MAX_DIMS + 1];
    for (int i = 0; i < ns; i++)
        lo[i] = hi[i] = 0;
    int n = op_attr_ints(c, "pads", v, 2 * KG_MAX_DIMS + 1);
    if (n < 0)
        return 0;
    if (n != 2 * ns)
        return ir_fail("%s: attribute pads has %d values, expected %d (begin and end per spatial dimension)", c->op,
                       n, 2 * ns);
    for (int i = 0; i < 2 * ns; i++) {
        if (v[i] < 0 && !allow_negative)
            return ir_fail("%s: pads[%d] is %lld; pads must not be negative", c->op, i, (long long)v[i]);
        if (v[i] > INT32_MAX || v[i] < -(int64_t)INT32_MAX)
            return ir_fail("%s: pads[%d] is %lld, beyond %d", c->op, i, (long long)v[i], INT32_MAX);
    }
    for (int i = 0; i < ns; i++) {
        lo[i] = v[i];
        hi[i] = v[ns + i];
    }
    return 0;
}

int op_check_dims(OpCtx *c, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    if (ndim > KG_MAX_DIMS)
        return ir_fail("%s: the output would have rank %d (limit %d)", c->op, ndim, KG_MAX_DIMS);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 1)
            return ir_fail("%s: output dimension %d is %lld; empty tensors are not supported", c->op, d,
                           (long long)shape[d]);
        if (shape[d] > INT32_MAX || (n *= shape[d]) > INT32_MAX)
            return ir_fail("%s: the output has more than %d elements", c->op, INT32_MAX);
    }
    return 0;
}
