/* onnx_dtype.h - ONNX's element types: TensorProto.DataType's codes and names, the one
 * vocabulary the model reader and the operator builders share (Cast's `to`, a Constant's
 * value and a model's tensors all carry these codes). It depends on nothing, so the
 * reader includes it and nothing under ir/ includes the frontend. */
#ifndef KGEN_ONNX_DTYPE_H
#define KGEN_ONNX_DTYPE_H

/* X(name, TensorProto.DataType value, bits per element; 0: not a fixed-size number) */
#define ONNX_DTYPES(X)          \
    X(UNDEFINED, 0, 0)          \
    X(FLOAT, 1, 32)             \
    X(UINT8, 2, 8)              \
    X(INT8, 3, 8)               \
    X(UINT16, 4, 16)            \
    X(INT16, 5, 16)             \
    X(INT32, 6, 32)             \
    X(INT64, 7, 64)             \
    X(STRING, 8, 0)             \
    X(BOOL, 9, 8)               \
    X(FLOAT16, 10, 16)          \
    X(DOUBLE, 11, 64)           \
    X(UINT32, 12, 32)           \
    X(UINT64, 13, 64)           \
    X(COMPLEX64, 14, 64)        \
    X(COMPLEX128, 15, 128)      \
    X(BFLOAT16, 16, 16)         \
    X(FLOAT8E4M3FN, 17, 8)      \
    X(FLOAT8E4M3FNUZ, 18, 8)    \
    X(FLOAT8E5M2, 19, 8)        \
    X(FLOAT8E5M2FNUZ, 20, 8)    \
    X(UINT4, 21, 4)             \
    X(INT4, 22, 4)              \
    X(FLOAT4E2M1, 23, 4)        \
    X(FLOAT8E8M0, 24, 8)        \
    X(UINT2, 25, 2)             \
    X(INT2, 26, 2)

typedef enum {
#define X(name, value, bits) ONNX_##name = value,
    ONNX_DTYPES(X)
#undef X
    ONNX_NDTYPES
} OnnxDType;

const char *onnx_dtype_name(int dt);   /* "FLOAT", ... as in TensorProto.DataType; "?" if unknown */
int onnx_dtype_size(int dt);           /* bytes per element; 0 for sub-byte, STRING, unknown */
int onnx_dtype_bits(int dt);           /* bits per element (4 for INT4); 0 for STRING, unknown */

#endif
