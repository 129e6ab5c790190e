/* loss.c - ONNX loss operators: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
#include "ops.h"

const OpDef op_defs_loss[] = {
    {NULL, NULL},
};
