/* import.h - the ONNX importer (import.c): a model read by reader.c (onnx.h) to a tensor
 * program, with the options that fix its graph inputs' shapes and values. */
#ifndef KGEN_ONNX_IMPORT_H
#define KGEN_ONNX_IMPORT_H

#include "onnx.h"
#include "../ir/ir.h"

/* Data for a graph input. From --bind-inputs DIR (OnnxImportOpts.data) it is used only if
 * an operator needs the input's value when compiling (a shape, axes, a Loop's count):
 * that input is then frozen into a constant. From --bind (OnnxImportOpts.bind) the input
 * always becomes a constant and leaves the signature. */
typedef struct {
    const char *name;
    int dtype;                 /* OnnxDType */
    int ndim;
    int64_t dims[KG_MAX_DIMS];
    const void *data;          /* little-endian, packed */
    const char *literal;       /* --bind NAME=VALUE: the value as written (then dtype, dims
                                  and data are unset: the input's type decides) */
    const char *option;        /* the option as written, for messages ("--bind sr=16000") */
} OnnxBinding;

/* --input-shape NAME=D0,D1,...: every dim of graph input NAME; a dim given as a range
 * LO..HI is decided at run time (lo[d] = LO, dims[d] = HI; lo[d] == dims[d] otherwise) */
typedef struct {
    const char *name;
    int ndim;
    int64_t dims[KG_MAX_DIMS];
    int64_t lo[KG_MAX_DIMS];
} OnnxInputShape;

/* --dim SYMBOL=N: every dim named SYMBOL (dim_param) in every graph input; SYMBOL=LO..HI:
 * decided at run time in that range (lo < value), one run-time dim wherever it appears */
typedef struct {
    const char *symbol;
    int64_t value;
    int64_t lo;
} OnnxDimValue;

/* How the graph inputs get their shapes and values (all optional). */
typedef struct {
    const OnnxBinding *data;    /* --bind-inputs: values used where an operator needs them */
    int ndata;
    const OnnxBinding *bind;    /* --bind: inputs frozen into constants */
    int nbind;
    const OnnxInputShape *shapes;
    int nshapes;
    const OnnxDimValue *dims;
    int ndims;
} OnnxImportOpts;

/* Per graph input or output: the ONNX name and the tensor. */
typedef struct {
    const char *onnx_name;
    Tensor *t;
    int frozen;                /* an input turned into a constant */
} OnnxValue;

typedef struct {
    Program *prog;
    OnnxValue *inputs;          /* graph inputs (not initializers), in graph order */
    int ninputs;
    OnnxValue *outputs;
    int noutputs;
    int64_t opset;
    int nnodes;                /* ONNX nodes imported (unrolled loop bodies count each time) */
    int nfolded;               /* nodes folded into constants */
    PtrVec notes;              /* char*: what the import decided (a branch taken, a loop
                                  unrolled), for the header and --report */
} OnnxImport;

/* Build the program of an ONNX model (already read with onnx_load_*); opts may be NULL.
 * Returns 0, or -1 with "node 'NAME' (OP): problem" in ir_errmsg(). */
int onnx_import(const OnnxModel *model, const OnnxImportOpts *opts, OnnxImport *out);
/* symshape.c: extents decided at run time as values (Tensor.sym). onnx_sym_op: 1 if op
 * moves such values (Gather, Concat, ...), 2 if it takes them itself (Reshape's shape,
 * Expand's, Shape of them), 3 if it is arithmetic or a comparison on them, else 0.
 * onnx_sym_values gives *out, the folded output of a node of the first kind built with c,
 * the extents its elements came from (a Cast of them to float replaces *out by a compute
 * that reads them at run time); onnx_sym_arith builds a node of the third kind (its output
 * a constant of the bounds, with the expressions). 0, or -1 with ir_fail(). */
int onnx_sym_op(const char *op);
struct OpCtx;
int onnx_sym_values(struct OpCtx *c, Tensor **out);
int onnx_sym_input_ok(const char *op, int i);
int onnx_sym_arith(struct OpCtx *c);
/* A C identifier from any ONNX name ("conv1/W:0" -> "conv1_W_0"). */
const char *onnx_c_name(const char *onnx_name);

#endif
