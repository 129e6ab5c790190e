/* signal.c - ONNX signal operators: DFT, STFT, the Hann, Hamming and Blackman windows, MelWeightMatrix. */
#include "ops.h"

const OpDef op_defs_signal[] = {
    {NULL, NULL},
};
