/* ops.h - ONNX operators defined as tensor-IR computes.
 *
 * Every operator is a builder: it reads its inputs (tensors of the program being built),
 * its attributes and, where the operator needs them, the *values* of constant inputs
 * (shapes, axes, pads...), and adds computes to the program that produce its outputs.
 * No operator is a hand-written kernel: the computes go through scheduling, lowering and
 * the printers like any other, so every target gets them. Shapes are static.
 *
 * A builder returns 0, or -1 with ir_fail("...") naming the problem; the importer adds
 * the node's name and op type. It must not crash on any attribute or shape it is given.
 *
 * Builders see no file format: the importer hands them the node's attributes as plain
 * values (OpAttr) and its inputs as tensors. Element types are ONNX's DataType codes
 * (onnx_dtype.h), which attributes such as Cast's `to` carry.
 */
#ifndef KGEN_OPS_H
#define KGEN_OPS_H

#include "onnx_dtype.h"
#include "../ir.h"

#define OP_MAX_IO 32

/* An attribute's kind, as the model declares it. UNDEFINED: the model left the type out
 * (the values decide); OTHER: a kind no builder reads (lists of tensors or graphs, sparse
 * tensors, types). */
typedef enum {
    OP_ATTR_UNDEFINED,
    OP_ATTR_FLOAT,
    OP_ATTR_INT,
    OP_ATTR_STRING,
    OP_ATTR_TENSOR,
    OP_ATTR_GRAPH,
    OP_ATTR_FLOATS,
    OP_ATTR_INTS,
    OP_ATTR_STRINGS,
    OP_ATTR_OTHER
} OpAttrKind;

/* A tensor-valued attribute (a Constant's value): nelems packed little-endian elements
 * of ONNX type dtype (sub-byte types packed, the first in the low bits); data is NULL
 * for STRING tensors and may be NULL when an empty tensor has no payload. */
typedef struct {
    int dtype;                     /* OnnxDType */
    int ndim;
    const int64_t *dims;
    int64_t nelems;
    const void *data;
} OpAttrTensor;

/* One attribute of the node, as the importer hands it over: only the fields of its value
 * are set (a scalar's i or f, a string's s, a list's array and count). The arrays live as
 * long as the model the importer reads. */
typedef struct {
    const char *name;
    OpAttrKind kind;
    int64_t i;
    float f;
    const char *s;                 /* NULL unless a string was given */
    const int64_t *ints;
    int nints;
    const float *floats;
    int nfloats;
    const char *const *strings;
    int nstrings;
    int has_tensor;                /* t is set */
    OpAttrTensor t;
    /* a subgraph (If's branches, Loop's body, FlexAttention's score_mod): opaque here, only
     * OpCtx.subgraph and the importer read it; NULL unless given. Its formal input and
     * output counts, for builders that check a body's form. */
    const void *graph;
    int graph_ninputs, graph_noutputs;
} OpAttr;

typedef struct OpCtx OpCtx;
struct OpCtx {
    const OpAttr *attrs;           /* the node's attributes, in the model's order */
    int nattrs;
    const char *op;                /* op_type */
    int64_t opset;                 /* of the default domain */
    int64_t domain_opset;          /* of the node's domain (the default domain's: opset) */
    Program *prog;                 /* add every new tensor here (op_emit does) */
    int nin;
    Tensor *in[OP_MAX_IO];         /* NULL where an optional input is omitted ("") */
    int nout;                      /* outputs the node declares (names may be "") */
    Tensor *out[OP_MAX_IO];        /* set by the builder; an output may be an input
                                      (Identity) or NULL if the node leaves it unnamed */
    const char *out_names[OP_MAX_IO]; /* C-safe unique names for the outputs */
    const char *base;              /* C-safe base name for new tensors (node output 0) */
    const char *first_output;      /* node output 0 as the model names it ("" if none): the
                                      default seed of the Random* ops */
    int ntmp;                      /* counter for op_name() */
    int dyn_own;                   /* set by a builder of dyn_generic that computed its
                                      run-time extents itself (Concat along a run-time
                                      axis): the lenient inference checks the node */
    /* optional: t's value if the importer can compute it now (a compute over graph inputs
     * bound with --bind-inputs data), else NULL; op_is_const asks it */
    Tensor *(*known)(void *importer, Tensor *t);
    /* optional: imports an attribute's graph (OpAttr.graph; what: its name, for messages)
     * over the inputs args[0..nargs) and sets outs[i] to its output i; 0, or -1 with
     * ir_fail() */
    int (*subgraph)(void *importer, const void *graph, const char *what, Tensor **args, int nargs,
                    Tensor **outs);
    void *importer;
};

typedef int (*OpBuild)(OpCtx *c);

typedef struct {
    const char *name;              /* ONNX op_type of the default domain, or "DOMAIN:OP"
                                      for another ("ai.onnx.ml:Binarizer") */
    OpBuild build;
} OpDef;

/* The registry (ops.c): NULL if the op is not supported. */
const OpDef *op_find(const char *op_type);
/* How op_type takes inputs with run-time dims (ops.c): 0 it does not (an error), 1 the
 * strict inference of ir_dyn_infer checks its build, 2 it handles them itself. */
int op_dyn_kind(const char *op_type);
/* Does op_type (of the default domain) make NCHW images, whose axis 2 is the rows
 * (Tensor.rows_axis): 2-D convs, pools, Resize (ops.c)? */
int op_makes_images(const char *op_type);
/* The names of all supported ops, for --help and reports. */
int op_count(void);
const char *op_name_at(int i);

/* ---------------------------------------------------------------- util.c: attributes */

/* The attribute called name (the first of that name), NULL if absent. */
const OpAttr *op_attr(OpCtx *c, const char *name);
int64_t op_attr_int(OpCtx *c, const char *name, int64_t dflt);
double op_attr_float(OpCtx *c, const char *name, double dflt);
const char *op_attr_str(OpCtx *c, const char *name, const char *dflt);
/* Copies up to max ints; returns the count, or -1 if the attribute is absent. */
int op_attr_ints(OpCtx *c, const char *name, int64_t *out, int max);
int op_attr_floats(OpCtx *c, const char *name, double *out, int max);

/* ---------------------------------------------------------------- util.c: inputs */

/* Input i, failing with "OP: input i (what) is required" if it is missing. */
Tensor *op_input(OpCtx *c, int i, const char *what);
/* Is input i present (not omitted)? */
int op_has_input(OpCtx *c, int i);
/* The values of a constant input (or of a graph input bound with data, which this
 * freezes), converted to int64 / double. Returns the element count, or -1 with
 * ir_fail() when the input is not known at compile time or has more than max elements. */
int64_t op_const_ints(OpCtx *c, int i, const char *what, int64_t *out, int64_t max);
int64_t op_const_floats(OpCtx *c, int i, const char *what, double *out, int64_t max);
/* op_const_ints of an input that may hold extents decided at run time (Tensor.sym):
 * sym[k] is element k's (NULL: out[k] is its value). */
int64_t op_const_ints_sym(OpCtx *c, int i, const char *what, int64_t *out, Expr **sym, int64_t max);
/* Is input i's value known at compile time (constant or bound)? */
int op_is_const(OpCtx *c, int i);

/* ---------------------------------------------------------------- util.c: building */

/* A fresh tensor name: "<base>_<what>" (made unique in the program). */
const char *op_name(OpCtx *c, const char *what);
/* ndim fresh spatial axes with the given extents (names i0, i1, ...). */
IterVar **op_axes(int ndim, const int64_t *shape);
/* op_axes, axis d running to the run-time extent ext[d] where that is not NULL (the
 * output's Tensor.dyn follows from them: ir_dyn_infer) */
IterVar **op_axes_dyn(int ndim, const int64_t *shape, Expr *const *ext);
/* Index expressions of those axes. */
void op_axis_exprs(IterVar **axes, int ndim, Expr **out);
/* ir_compute + ir_program_add; NULL with ir_fail() on failure. */
Tensor *op_emit(OpCtx *c, const char *name, int ndim, IterVar **axes, Expr *body);
/* Output `i`: op_emit named after the node's output i (sets c->out[i]). */
Tensor *op_emit_out(OpCtx *c, int i, int ndim, IterVar **axes, Expr *body);
/* A constant tensor added to the program. */
Tensor *op_const_tensor(OpCtx *c, const char *what, DType t, int ndim, const int64_t *shape, const void *data);
/* A tensor that copies `t` (used where an output must be a new tensor). */
Tensor *op_copy(OpCtx *c, int out_index, Tensor *t);

/* Read t at the given indices (t's rank). */
/* the greatest common divisor of a and b (non-negative; gcd(a, 0) = a) */
int64_t op_gcd(int64_t a, int64_t b);
Expr *op_read(Tensor *t, Expr **idx);
/* Numpy broadcasting: the shape of a and b (0, or -1 with ir_fail() if incompatible). */
int op_broadcast_shape(const Tensor *a, const Tensor *b, int *ndim, int64_t *shape);
int op_broadcast_shapes(Tensor **ts, int n, int *ndim, int64_t *shape);
/* Read t broadcast to an output of rank ndim indexed by idx (right-aligned; size-1
 * dimensions read index 0). */
Expr *op_read_bcast(Tensor *t, Expr **idx, int ndim);

/* Literals of a dtype. */
Expr *op_lit(double v, DType t);

/* A per-spatial-dimension attribute (strides, dilations, kernel_shape): ns values in
 * minv..INT32_MAX; dflt where the attribute is absent. 0, or -1 with ir_fail(). */
int op_spatial_attr(OpCtx *c, const char *name, int ns, int64_t dflt, int64_t minv, int64_t *out);
/* Explicit pads: 2*ns values (all begins, then all ends), zeros where absent. */
int op_pads_attr(OpCtx *c, int ns, int64_t *lo, int64_t *hi, int allow_negative);
/* The output dimensions are positive and the element count fits a 32-bit index. */
int op_check_dims(OpCtx *c, int ndim, const int64_t *shape);
/* v (any type) ready for a store to the float8 type `to` under ONNX's saturate rule: with
 * saturate, a clamp to +-the largest finite value (infinities too; NaN stays NaN), computed
 * in float (double for f64); without, v itself: the store turns overflow into NaN, or inf
 * for f8e5m2. f8e8m0, whose store saturates: v, or without saturate NaN where |v| > 2^127.
 * Other types: v. */
Expr *op_f8_saturate(Expr *v, DType to, int saturate);
/* Normalize an axis given in -r..r-1 (error names the attribute). */
int op_axis(OpCtx *c, int64_t axis, int rank, const char *what, int *out);
/* Normalize a list of axes against rank r in place; fails on duplicates. */
int op_norm_axes(OpCtx *c, int64_t *axes, int n, int r, const char *what);

/* ONNX TensorProto.DataType to DType; -1 with ir_fail() if unsupported. */
int op_dtype_from_onnx(int onnx_dtype, DType *out);
int op_dtype_to_onnx(DType t);

/* ---------------------------------------------------------------- values.c: extents from values */
/* A dim computed from values (ir_program_add_value_dim): count, an int64 tensor of one
 * element the builder emitted, in [lo, hi]; named after name. */
IrDim *op_value_dim(OpCtx *c, Tensor *count, int64_t lo, int64_t hi, const char *name);
/* Dim d of t (and of its axis, for a compute) runs to dm's extent. */
void op_set_value_dim(Tensor *t, int d, const IrDim *dm);
/* NonZero of x and Compress of x by cond (along axis, or flattened) known only at run
 * time: output 0 with its extent computed from the values. 0, or -1 with ir_fail(). */
int op_nonzero_dyn(OpCtx *c, Tensor *x);
int op_compress_dyn(OpCtx *c, Tensor *x, Tensor *cond, int has_axis, int axis);
/* A run-time Loop's scan output: acc, a state [bound, ...] of the loop, gets row *iter (the
 * iteration-number state) from val, the body's scan value, in the compute this returns
 * (the state's next value); after the loop, output `out` is acc's first *iter rows, a dim
 * computed from values (*dim: made by the first scan output, shared by the others). */
Tensor *op_loop_scan_next(OpCtx *c, Tensor *iter, Tensor *acc, Tensor *val);
int op_loop_scan_out(OpCtx *c, int out, Tensor *iter, Tensor *acc, const IrDim **dim);
/* ---------------------------------------------------------------- training.c: random numbers */

/* A uniform draw in [0, 1) in the float type t (f32 or f64) for the element at idx of a
 * tensor of the given shape: a hash of its flat position and the node's seed attribute
 * (the formula is in training.c), the same on every target. */
Expr *op_random_uniform(OpCtx *c, int ndim, const int64_t *shape, Expr **idx, DType t);

#endif
