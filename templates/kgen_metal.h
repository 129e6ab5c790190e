/* kgen_metal.h - the head of every Metal library source kgen writes: the names kgen's
 * kernels and helpers use that the Metal Shading Language spells differently. Metal has no
 * double, so the f64 helpers are left out (kgen refuses f64 models for Metal). */
#include <metal_stdlib>
using namespace metal;

#define KGEN_NO_F64

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
#ifndef INFINITY
#define INFINITY as_type<float>(0x7f800000u)
#endif
#ifndef NAN
#define NAN as_type<float>(0x7fc00000u)
#endif

#define KGEN_INLINE static inline
#define KGEN_INLINE_MATH static inline   /* kgen_runtime.h's per-element helpers */
#define KGEN_HAVE_BITCAST
KGEN_INLINE uint32_t kgen_f32_bits(float f) { return as_type<uint32_t>(f); }
KGEN_INLINE float kgen_bits_f32(uint32_t u) { return as_type<float>(u); }

/* the C names the helpers below use */
#define expf exp
#define sqrtf sqrt
#define fmodf fmod

/* Metal has no erf: kgen_runtime.h's kgen_erff, part of the kernel helpers, serves. */
