/* misc.c - ONNX operators: (being written). */
#include "ops.h"

const OpDef op_defs_misc[] = {
    {NULL, NULL},
};
