/* ops.c - the operator registry: one table per family file. */
#include "ops.h"

#include <string.h>

extern const OpDef op_defs_elementwise[], op_defs_reduce[], op_defs_nn[], op_defs_shape[], op_defs_resize[],
    op_defs_rnn[], op_defs_quant[], op_defs_misc[], op_defs_loss[], op_defs_signal[], op_defs_image[],
    op_defs_array[], op_defs_attention[], op_defs_training[], op_defs_values[];

static const OpDef *const tables[] = {op_defs_elementwise, op_defs_reduce, op_defs_nn,    op_defs_shape,
                                      op_defs_resize,      op_defs_rnn,    op_defs_quant, op_defs_misc,
                                      op_defs_loss,        op_defs_signal, op_defs_image, op_defs_array,
                                      op_defs_attention,   op_defs_training, op_defs_values};

#define NTABLES ((int)(sizeof tables / sizeof *tables))

const OpDef *op_find(const char *op_type)
{
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            if (!strcmp(d->name, op_type))
                return d;
    return NULL;
}

int op_count(void)
{
    int n = 0;
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            n++;
    return n;
}

const char *op_name_at(int i)
{
    for (int t = 0; t < NTABLES; t++)
        for (const OpDef *d = tables[t]; d->name; d++)
            if (i-- == 0)
                return d->name;
    return NULL;
}

/* Operators that take run-time dims (ir/dyn.c). Generic: every output position reads its
 * inputs' run-time dims position for position, or reduces over them as a whole with no
 * count in the formula (elementwise, broadcasting, Transpose, Softmax, MatMul's sum,
 * Trilu's mask of positions; LayerNormalization's count is of the fixed dims it
 * normalizes, its builder refuses run-time ones); the strict inference checks each build.
 * Aware: the builder computes its run-time extents itself (windows over a run-time dim,
 * averages over one, a view that merges or splits one). */
static const char *const dyn_generic[] = {
    "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BatchNormalization", "Cast",
    "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Floor",
    "Gelu", "Gather", "Gemm", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN",
    "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "Min", "Mish", "Mod", "Mul", "Neg",
    "Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
    "Softmax", "Softplus", "Softsign", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu",
    "Transpose", "Unsqueeze", "Where", "Xor", "Concat", "ReduceMax", "ReduceMin", "ReduceSum",
    "Slice", "Split", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ReduceProd",
    "Trilu", "LayerNormalization", "RMSNormalization", "Tile",
};
static const char *const dyn_aware[] = {
    "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Shape", "Reshape", "Flatten", "Resize",
    "Upsample", "RNN", "GRU", "LSTM", "Expand", "Pad", "DepthToSpace", "SpaceToDepth",
};

int op_makes_images(const char *op_type)
{
    static const char *const image_ops[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
                                            "Resize", "Upsample"};
    for (size_t i = 0; i < sizeof image_ops / sizeof *image_ops; i++)
        if (!strcmp(image_ops[i], op_type))
            return 1;
    return 0;
}

int op_dyn_kind(const char *op_type)
{
    for (size_t i = 0; i < sizeof dyn_generic / sizeof *dyn_generic; i++)
        if (!strcmp(dyn_generic[i], op_type))
            return 1;
    for (size_t i = 0; i < sizeof dyn_aware / sizeof *dyn_aware; i++)
        if (!strcmp(dyn_aware[i], op_type))
            return 2;
    return 0;
}
