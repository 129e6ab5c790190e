/* fold.h - what the ONNX importer folds as it goes (fold.c, bnfold.c): nodes whose
 * inputs are all known become constants, and a BatchNormalization after a Conv,
 * ConvTranspose or Gemm goes into its weights. Both work while importing (later nodes
 * read the folded values: shapes, axes, loop counts), so they are no graph passes. */
#ifndef KGEN_ONNX_FOLD_H
#define KGEN_ONNX_FOLD_H

#include "../gen/gen.h"
#include "../ir/ops/ops.h"

/* base, or base_1, base_2, ...: a tensor name p does not have yet */
const char *onnx_unique_name(Program *p, const char *base);

/* Run the computes behind t (of p, every one they read a constant, at most
 * GEN_MAX_FOLD_ELEMS elements) and return a new constant of p with t's value, named
 * t's name + "_c"; NULL when it cannot (the error is cleared). */
Tensor *onnx_fold(Program *p, Tensor *t);

/* The importer's names: the tensor an ONNX value name stands for, or NULL. */
typedef Tensor *(*OnnxLookup)(void *importer, const char *name);

/* Node ni of g, about to be built with c, is a Conv, ConvTranspose or Gemm that only a
 * BatchNormalization (inference) reads, every parameter constant f32: its weights and
 * bias in c->in[1..2] are replaced by folded constants (added to p). Returns the index of
 * the BN node (its output then stands for node ni's), or -1 (nothing changed). */
int onnx_fold_bn(Program *p, const OnnxGraph *g, int ni, OpCtx *c, OnnxLookup lookup, void *importer);

#endif
