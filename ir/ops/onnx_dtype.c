/* onnx_dtype.c - the names and sizes of ONNX's element types (onnx_dtype.h). */
#include "onnx_dtype.h"

static const struct {
    const char *name;
    int bits;
} dtypes[ONNX_NDTYPES] = {
#define X(name, value, bits) [value] = {#name, bits},
    ONNX_DTYPES(X)
#undef X
};

const char *onnx_dtype_name(int dt)
{
    return dt >= 0 && dt < ONNX_NDTYPES ? dtypes[dt].name : "?";
}

int onnx_dtype_bits(int dt)
{
    return dt >= 0 && dt < ONNX_NDTYPES ? dtypes[dt].bits : 0;
}

int onnx_dtype_size(int dt)
{
    int bits = onnx_dtype_bits(dt);
    return bits % 8 ? 0 : bits / 8;
}
