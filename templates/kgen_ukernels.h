/* kgen_ukernels.h - the micro-kernels that tensorized loops call (kgen's tensorize).
 *
 *   kgen_fma_bcast_f32xW(acc, a, b):  acc[i] = acc[i] + a * b[i]  for i < W
 *   kgen_fma_f32xW(acc, a, b):        acc[i] = acc[i] + a[i] * b[i]  for i < W
 *
 * the update of one row of a register tile: a row of accumulators, one factor broadcast
 * to every lane (a conv's input value against a vector of weights), or a row of each
 * factor (a depthwise conv: a row of input channels against their weights; where the
 * window lies in the zero padding, the generated code passes kgen_zero_f32(), W zeros, for
 * the input row: the sum is then the same as with the padding's zeros read, and the call
 * needs no branch); W = 4, 8, 16, 32 or 64. Each body uses the
 * widest SIMD instructions the compiler enables: AVX-512F (-mavx512f, -march=x86-64-v4),
 * AVX with FMA (-mavx2 -mfma, -march=x86-64-v3), AArch64 NEON (always there), WebAssembly
 * SIMD128 (-msimd128); anywhere else, or with -DKGEN_UK_PORTABLE, it is the same loop in
 * plain C. So a file generated for one instruction set compiles, warning-free, and
 * computes the same sums with any C99 compiler. The x86 and ARM intrinsics fuse each
 * multiply with its add (one rounding); SIMD128, which has no fused multiply-add, and the
 * plain loop round twice (unless the compiler contracts the loop: gcc does by default,
 * -std=c99 does not).
 * The pointers need no alignment; acc must not overlap a or b.
 */
#ifndef KGEN_UKERNELS_H
#define KGEN_UKERNELS_H

#if !defined(KGEN_UK_PORTABLE)
#if defined(__AVX512F__)
#define KGEN_UK_AVX512 1
#endif
#if defined(__AVX__) && defined(__FMA__)
#define KGEN_UK_FMA 1
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#define KGEN_UK_NEON 1
#endif
#if defined(__wasm_simd128__)
#define KGEN_UK_WASM 1
#endif
#endif

#if defined(KGEN_UK_AVX512) || defined(KGEN_UK_FMA)
#include <immintrin.h>
#elif defined(KGEN_UK_NEON)
#include <arm_neon.h>
#elif defined(KGEN_UK_WASM)
#include <wasm_simd128.h>
#endif

static inline void kgen_fma_bcast_f32x4(float *restrict acc, float a, const float *restrict b)
{
#if defined(KGEN_UK_FMA)
    _mm_storeu_ps(acc, _mm_fmadd_ps(_mm_set1_ps(a), _mm_loadu_ps(b), _mm_loadu_ps(acc)));
#elif defined(KGEN_UK_NEON)
    vst1q_f32(acc, vfmaq_n_f32(vld1q_f32(acc), vld1q_f32(b), a));
#elif defined(KGEN_UK_WASM)
    wasm_v128_store(acc, wasm_f32x4_add(wasm_v128_load(acc), wasm_f32x4_mul(wasm_f32x4_splat(a), wasm_v128_load(b))));
#else
    for (int i = 0; i < 4; ++i)
        acc[i] = acc[i] + a * b[i];
#endif
}

static inline void kgen_fma_bcast_f32x8(float *restrict acc, float a, const float *restrict b)
{
#if defined(KGEN_UK_FMA)
    _mm256_storeu_ps(acc, _mm256_fmadd_ps(_mm256_set1_ps(a), _mm256_loadu_ps(b), _mm256_loadu_ps(acc)));
#elif defined(KGEN_UK_NEON)
    vst1q_f32(acc, vfmaq_n_f32(vld1q_f32(acc), vld1q_f32(b), a));
    vst1q_f32(acc + 4, vfmaq_n_f32(vld1q_f32(acc + 4), vld1q_f32(b + 4), a));
#elif defined(KGEN_UK_WASM)
    kgen_fma_bcast_f32x4(acc, a, b);
    kgen_fma_bcast_f32x4(acc + 4, a, b + 4);
#else
    for (int i = 0; i < 8; ++i)
        acc[i] = acc[i] + a * b[i];
#endif
}

static inline void kgen_fma_bcast_f32x16(float *restrict acc, float a, const float *restrict b)
{
#if defined(KGEN_UK_AVX512)
    _mm512_storeu_ps(acc, _mm512_fmadd_ps(_mm512_set1_ps(a), _mm512_loadu_ps(b), _mm512_loadu_ps(acc)));
#elif defined(KGEN_UK_FMA) || defined(KGEN_UK_NEON) || defined(KGEN_UK_WASM)
    kgen_fma_bcast_f32x8(acc, a, b);
    kgen_fma_bcast_f32x8(acc + 8, a, b + 8);
#else
    for (int i = 0; i < 16; ++i)
        acc[i] = acc[i] + a * b[i];
#endif
}

static inline void kgen_fma_bcast_f32x32(float *restrict acc, float a, const float *restrict b)
{
    kgen_fma_bcast_f32x16(acc, a, b);
    kgen_fma_bcast_f32x16(acc + 16, a, b + 16);
}

static inline void kgen_fma_bcast_f32x64(float *restrict acc, float a, const float *restrict b)
{
    kgen_fma_bcast_f32x32(acc, a, b);
    kgen_fma_bcast_f32x32(acc + 32, a, b + 32);
}

/* 64 zeros: the row of an elementwise update's factor that lies in zero padding */
static inline const float *kgen_zero_f32(void)
{
    static const float zeros[64];
    return zeros;
}

static inline void kgen_fma_f32x4(float *restrict acc, const float *restrict a, const float *restrict b)
{
#if defined(KGEN_UK_FMA)
    _mm_storeu_ps(acc, _mm_fmadd_ps(_mm_loadu_ps(a), _mm_loadu_ps(b), _mm_loadu_ps(acc)));
#elif defined(KGEN_UK_NEON)
    vst1q_f32(acc, vfmaq_f32(vld1q_f32(acc), vld1q_f32(a), vld1q_f32(b)));
#elif defined(KGEN_UK_WASM)
    wasm_v128_store(acc, wasm_f32x4_add(wasm_v128_load(acc), wasm_f32x4_mul(wasm_v128_load(a), wasm_v128_load(b))));
#else
    for (int i = 0; i < 4; ++i)
        acc[i] = acc[i] + a[i] * b[i];
#endif
}

static inline void kgen_fma_f32x8(float *restrict acc, const float *restrict a, const float *restrict b)
{
#if defined(KGEN_UK_FMA)
    _mm256_storeu_ps(acc, _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_loadu_ps(b), _mm256_loadu_ps(acc)));
#elif defined(KGEN_UK_NEON) || defined(KGEN_UK_WASM)
    kgen_fma_f32x4(acc, a, b);
    kgen_fma_f32x4(acc + 4, a + 4, b + 4);
#else
    for (int i = 0; i < 8; ++i)
        acc[i] = acc[i] + a[i] * b[i];
#endif
}

static inline void kgen_fma_f32x16(float *restrict acc, const float *restrict a, const float *restrict b)
{
#if defined(KGEN_UK_AVX512)
    _mm512_storeu_ps(acc, _mm512_fmadd_ps(_mm512_loadu_ps(a), _mm512_loadu_ps(b), _mm512_loadu_ps(acc)));
#elif defined(KGEN_UK_FMA) || defined(KGEN_UK_NEON) || defined(KGEN_UK_WASM)
    kgen_fma_f32x8(acc, a, b);
    kgen_fma_f32x8(acc + 8, a + 8, b + 8);
#else
    for (int i = 0; i < 16; ++i)
        acc[i] = acc[i] + a[i] * b[i];
#endif
}

static inline void kgen_fma_f32x32(float *restrict acc, const float *restrict a, const float *restrict b)
{
    kgen_fma_f32x16(acc, a, b);
    kgen_fma_f32x16(acc + 16, a + 16, b + 16);
}

static inline void kgen_fma_f32x64(float *restrict acc, const float *restrict a, const float *restrict b)
{
    kgen_fma_f32x32(acc, a, b);
    kgen_fma_f32x32(acc + 32, a + 32, b + 32);
}

#endif /* KGEN_UKERNELS_H */
