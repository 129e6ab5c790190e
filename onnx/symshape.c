/* symshape.c - shapes as values when dims are decided at run time: what Shape gives of a
 * tensor with run-time dims is a constant whose elements are extents (Tensor.sym, the
 * bounds in its data), and the operators that only move such values around (Gather,
 * Concat, Unsqueeze, Squeeze, Slice, Identity, Cast between integer types) move the
 * extents with them. The builder computes the output's data from the bounds as for any
 * constant; onnx_sym_values then gives it the extents its elements came from. An output
 * none of whose elements came from an extent is an ordinary constant (a batch size picked
 * out of a shape whose width is decided at run time). Any other operator that meets such
 * a value refuses it (op_const_ints, the importer's check), so a bound is never taken for
 * the value, except the builders that take such values themselves: Reshape's shape, and
 * Range's start and limit (a vector computed at run time, its extent an expression of the
 * dims: ir/ops/misc.c).
 */
#include "import.h"
#include "../ir/ops/ops.h"

#include <string.h>

int onnx_sym_op(const char *op)
{
    static const char *const ops[] = {"Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Identity", "Cast"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    /* 2: the builder takes them (Reshape's shape input: op_const_ints_sym; Range: a run-time
     * extent of its output) */
    return !strcmp(op, "Reshape") || !strcmp(op, "Range") ? 2 : 0;
}

/* element k of input t's extents (NULL: its data is its value) */
static Expr *sym_at(const Tensor *t, int64_t k) { return t->sym ? t->sym[k] : NULL; }

static int64_t const_int(const Tensor *t, int64_t k)
{
    int64_t v = 0;
    if (t->dtype == DT_I64)
        memcpy(&v, (const char *)t->data + 8 * k, 8);
    else if (t->dtype == DT_I32) {
        int32_t w;
        memcpy(&w, (const char *)t->data + 4 * k, 4);
        v = w;
    }
    return v;
}

int onnx_sym_values(OpCtx *c, Tensor *out)
{
    Tensor *x = c->in[0];
    int64_t n = ir_tensor_numel(out);
    if (out->kind != T_CONSTANT)
        return ir_fail("%s: an input holds extents decided at run time, and the output could not be folded",
                       c->op);
    Expr **sym = ir_alloc(sizeof *sym * (size_t)(n ? n : 1));
    int any = 0;
    if (!strcmp(c->op, "Concat")) {
        int64_t k = 0;
        for (int i = 0; i < c->nin; i++) {
            if (!c->in[i])
                continue;
            if (c->in[i]->ndim != 1)
                return ir_fail("%s: extents decided at run time in an input of rank %d (1 is supported)", c->op,
                               c->in[i]->ndim);
            for (int64_t j = 0; j < c->in[i]->shape[0] && k < n; j++)
                sym[k++] = sym_at(c->in[i], j);
        }
    } else if (!strcmp(c->op, "Gather")) {
        Tensor *ix = c->in[1];
        if (x->ndim != 1 || !ix || ix->kind != T_CONSTANT || ir_tensor_has_sym(ix))
            return ir_fail("%s: extents decided at run time gathered other than from a vector by constant indices",
                           c->op);
        for (int64_t k = 0; k < n; k++) {
            int64_t j = const_int(ix, k);
            sym[k] = sym_at(x, j < 0 ? j + x->shape[0] : j);
        }
    } else if (!strcmp(c->op, "Slice")) {
        int64_t s[1], e[1], st[1] = {1};
        if (x->ndim != 1 || op_const_ints(c, 1, "starts", s, 1) != 1 || op_const_ints(c, 2, "ends", e, 1) != 1 ||
            (op_has_input(c, 4) && op_const_ints(c, 4, "steps", st, 1) != 1))
            return ir_fail("%s: extents decided at run time sliced other than a vector by constant bounds", c->op);
        int64_t b = s[0] < 0 ? s[0] + x->shape[0] : s[0];
        if (b < 0)
            b = 0;
        if (b > x->shape[0])
            b = x->shape[0] - (st[0] < 0);
        for (int64_t k = 0; k < n; k++)
            sym[k] = sym_at(x, b + k * st[0]);
    } else {
        /* Unsqueeze, Squeeze, Identity, Cast: the same elements in the same order */
        if (n != ir_tensor_numel(x) || (ir_dtype_is_float(out->dtype)))
            return ir_fail("%s: extents decided at run time cannot pass through here", c->op);
        for (int64_t k = 0; k < n; k++)
            sym[k] = sym_at(x, k);
    }
    for (int64_t k = 0; k < n; k++)
        any |= sym[k] != NULL;
    out->sym = any ? sym : NULL;
    return 0;
}
