/* dialect.c - the C-family dialects as data: how C, CUDA, OpenCL and Metal differ (the
 * Dialect tables cprint.c prints through), and their math spellings as overrides of one
 * base table (em_math_name).
 *
 * requires: nothing; breaks: nothing (constant tables).
 */
#include "printer.h"

#include <stdio.h>

/* ---------------------------------------------------------------- dialect: plain C */

/* The base spelling of each math function: C's double library, and kgen_runtime.h's
 * helpers where it has none. A dialect names only what it spells otherwise. */
static const char *const base_math[FN_COUNT] = {
    [FN_EXP] = "exp", [FN_LOG] = "log", [FN_SQRT] = "sqrt", [FN_RSQRT] = "kgen_rsqrt",
    [FN_TANH] = "tanh", [FN_SIGMOID] = "kgen_sigmoid", [FN_ERF] = "erf", [FN_POW] = "pow",
    [FN_ABS] = "fabs", [FN_FLOOR] = "floor", [FN_CEIL] = "ceil",
    /* ONNX Round rounds halves to even. rint does, in the default rounding mode, which
     * generated code never changes; round would round them away from zero. */
    [FN_ROUND] = "rint",
    [FN_TRUNC] = "trunc", [FN_SIN] = "sin", [FN_COS] = "cos", [FN_TAN] = "tan",
    [FN_ASIN] = "asin", [FN_ACOS] = "acos", [FN_ATAN] = "atan", [FN_SINH] = "sinh",
    [FN_COSH] = "cosh", [FN_ASINH] = "asinh", [FN_ACOSH] = "acosh", [FN_ATANH] = "atanh",
    [FN_ISNAN] = "isnan", [FN_ISINF] = "isinf", [FN_FMA] = "fma",
};

/* C99's float library: fabsf, rintf ...; isnan and isinf are type-generic macros; exp, erf
 * and tanh are kgen_runtime.h's kgen_expf, kgen_erff and kgen_tanhf, which vectorize where
 * libm's do not. */
static const EmMathName c_f32_math[] = {{FN_ISNAN, "isnan"},    {FN_ISINF, "isinf"},     {FN_EXP, "kgen_expf"},
                                        {FN_ERF, "kgen_erff"}, {FN_TANH, "kgen_tanhf"}, {FN_COUNT, NULL}};

const char *em_math_name(const Dialect *d, MathFn fn, DType t, char *buf, size_t n)
{
    const char *over = em_math_override(t == DT_F64 ? d->f64_math : d->f32_math, fn);
    if (over)
        return over;
    if (t == DT_F64 || !d->f32_suffix)
        return base_math[fn];
    snprintf(buf, n, "%sf", base_math[fn]);
    return buf;
}

const Dialect em_dialect_c = {
    .name = "c",
    .kernel_prefix = NULL,       /* a host function returning a status */
    .restrict_kw = "restrict",
    .global_qual = NULL,
    .local_qual = NULL,
    .barrier = NULL,
    .prefetch = "KGEN_PREFETCH",
    .f32_suffix = 1,
    .f32_math = c_f32_math,
    .fmod_f32 = "fmodf",
    .has_openmp = 1,
    .workspace_type = "void",
};

/* ---------------------------------------------------------------- dialects: GPUs */

/* CUDA has C's float library in device code, and rsqrtf besides. */
static const EmMathName cuda_f32_math[] = {
    {FN_ISNAN, "isnan"}, {FN_ISINF, "isinf"}, {FN_RSQRT, "rsqrtf"}, {FN_COUNT, NULL}};

/* OpenCL C and Metal overload one name per function for every float type, rsqrt among
 * them; kgen's sigmoid helper has a float version (kgen_gpu.h). */
static const EmMathName opencl_f32_math[] = {{FN_RSQRT, "rsqrt"}, {FN_SIGMOID, "kgen_sigmoidf"}, {FN_COUNT, NULL}};
static const EmMathName opencl_f64_math[] = {{FN_RSQRT, "rsqrt"}, {FN_COUNT, NULL}};

/* Metal lacks erf: kgen_runtime.h's kgen_erff (a kernel helper) supplies it. */
static const EmMathName metal_f32_math[] = {
    {FN_RSQRT, "rsqrt"}, {FN_SIGMOID, "kgen_sigmoidf"}, {FN_ERF, "kgen_erff"}, {FN_COUNT, NULL}};

const Dialect em_dialect_cuda = {
    .name = "cuda",
    .kernel_prefix = "__global__ void",
    .restrict_kw = "__restrict__",
    .global_qual = NULL,
    .local_qual = "__shared__",
    .barrier = "__syncthreads();",
    .f32_suffix = 1,
    .f32_math = cuda_f32_math,
    .fmod_f32 = "fmodf",
    .block_index = "blockIdx.%c",
    .thread_index = "threadIdx.%c",
    .launch_bounds = "__launch_bounds__(%lld)",
    .workspace_type = "unsigned char",
};

const Dialect em_dialect_opencl = {
    .name = "opencl",
    .kernel_prefix = "__kernel void",
    .restrict_kw = "restrict",
    .global_qual = "__global",
    .local_qual = "__local",
    .barrier = "barrier(CLK_LOCAL_MEM_FENCE);",
    .f32_math = opencl_f32_math,
    .f64_math = opencl_f64_math,
    .fmod_f32 = "fmod",
    .block_index = "get_group_id(%d)",
    .thread_index = "get_local_id(%d)",
    .launch_bounds = "__attribute__((reqd_work_group_size(%lld, %lld, %lld)))",
    .workspace_type = "uchar",
};

const Dialect em_dialect_metal = {
    .name = "metal",
    .kernel_prefix = "kernel void",
    .restrict_kw = NULL,
    .global_qual = "device",
    .local_qual = "threadgroup",
    .barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);",
    .f32_math = metal_f32_math,
    .fmod_f32 = "fmod",
    .block_index = "kgen_block.%c",
    .thread_index = "kgen_thread.%c",
    .buffer_attr = " [[buffer(%d)]]",
    .scalar_param = "constant %s &%s",    /* (a kernel's scalars come in buffers: setBytes) */
    .index_params = "uint3 kgen_block [[threadgroup_position_in_grid]], uint3 kgen_thread [[thread_position_in_threadgroup]]",
    .workspace_type = "uchar",
    .no_f64 = 1,
};

const Dialect *em_dialect_for(TargetKind k)
{
    switch (k) {
    case TARGET_C: return &em_dialect_c;
    case TARGET_CUDA: return &em_dialect_cuda;
    case TARGET_OPENCL: return &em_dialect_opencl;
    case TARGET_METAL: return &em_dialect_metal;
    default: return NULL;
    }
}
