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
#define KGEN_HAVE_BITCAST
KGEN_INLINE uint32_t kgen_f32_bits(float f) { return as_type<uint32_t>(f); }
KGEN_INLINE float kgen_bits_f32(uint32_t u) { return as_type<float>(u); }

/* the C names the helpers below use */
#define expf exp
#define sqrtf sqrt
#define fmodf fmod

/* Metal has no erf: Abramowitz-Stegun 7.1.26 would lose digits, so this is the
 * float-accurate rational approximation used by common math libraries (|err| < 2 ulp
 * near 0, < 1e-7 elsewhere). */
static inline float kgen_erff(float x)
{
    float a = fabs(x);
    float r;
    if (a < 0.84375f) {
        float z = x * x;
        float p = 1.28379166e-01f + z * (-3.25042108e-01f + z * (-2.84817495e-02f + z * (-5.77027029e-03f + z * -2.37630166e-05f)));
        float q = 1.0f + z * (3.97917226e-01f + z * (6.50222525e-02f + z * (5.08130631e-03f + z * (1.32494736e-04f + z * -3.96022825e-06f))));
        return x + x * (p / q);
    }
    if (a < 6.0f) {
        float t = 1.0f / (1.0f + 0.5f * a);
        /* Numerical Recipes erfc Chebyshev fit: relative error < 1.2e-7 */
        float y = t * exp(-a * a - 1.26551223f +
                          t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f +
                          t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f +
                          t * 0.17087277f)))))))));
        r = 1.0f - y;
    } else {
        r = 1.0f;
    }
    return x < 0.0f ? -r : r;
}
