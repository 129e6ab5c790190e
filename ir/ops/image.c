/* image.c - ONNX image and sampling operators: GridSample, AffineGrid, RoiAlign, DeformConv, Col2Im,
 * CenterCropPad, MaxUnpool. */
#include "ops.h"

const OpDef op_defs_image[] = {
    {NULL, NULL},
};
