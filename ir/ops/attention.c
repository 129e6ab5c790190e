/* attention.c - ONNX attention-family operators beyond Attention (rnn.c): LinearAttention,
 * CausalConvWithState. */
#include "ops.h"

const OpDef op_defs_attention[] = {
    {NULL, NULL},
};
