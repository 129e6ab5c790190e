/* kgen_opencl.h - the head of every OpenCL C program kgen writes: the names kgen's
 * kernels and helpers use that OpenCL C spells differently. kgen_runtime.h's kernel
 * helpers follow it in the generated .cl file, which is therefore self-contained: the
 * host builds it with clBuildProgram and no include path. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#else
#define KGEN_NO_F64
#endif

typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define INT64_C(c) c##L
#define UINT64_C(c) c##UL

#define KGEN_INLINE static inline
#define KGEN_INLINE_MATH static inline   /* kgen_runtime.h's per-element helpers */
#define KGEN_HAVE_BITCAST
KGEN_INLINE uint32_t kgen_f32_bits(float f) { return as_uint(f); }
KGEN_INLINE float kgen_bits_f32(uint32_t u) { return as_float(u); }
#ifndef KGEN_NO_F64
KGEN_INLINE uint64_t kgen_f64_bits(double f) { return as_ulong(f); }
KGEN_INLINE double kgen_bits_f64(uint64_t u) { return as_double(u); }
#endif

/* the C names the helpers below use */
#define expf exp
#define sqrtf sqrt
#define fmodf fmod
