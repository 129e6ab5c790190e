/* kgen_lowbit.h - the packed and small-float storage types (i4, u4, i2, u2, f4e2m1,
 * f8e8m0). The C-family printer copies this text once into a generated source whose
 * kernels use one of them (after kgen_runtime.h or the GPU head, whose KGEN_INLINE,
 * kgen_bits_f32 and kgen_f32_bits it uses), so files without them do not change.
 *
 * Packed arrays hold 8 / bits elements per byte, as ONNX stores them: element i is in
 * byte i / (8 / bits), the first element in the low bits. The accessors are macros, not
 * functions, because an OpenCL or Metal buffer pointer carries an address space that a
 * function parameter would have to name. A store rewrites its bits of the byte only
 * (read, modify, write): kgen keeps every loop nest that stores a packed array serial,
 * so no other thread or vector lane writes the same byte meanwhile. */
#ifndef KGEN_LOWBIT_H
#define KGEN_LOWBIT_H

/* element i as its code, unsigned (u4, u2, f4e2m1) and sign-extended (i4, i2) */
#define KGEN_U4(p, i) ((int32_t)((p)[(i) >> 1] >> (((i) & 1) << 2)) & 15)
#define KGEN_U2(p, i) ((int32_t)((p)[(i) >> 2] >> (((i) & 3) << 1)) & 3)
#define KGEN_I4(p, i) ((KGEN_U4(p, i) ^ 8) - 8)
#define KGEN_I2(p, i) ((KGEN_U2(p, i) ^ 2) - 2)
/* a value wrapped into the type's range, as a store keeps it */
#define KGEN_WRAP_U4(v) ((int32_t)(v) & 15)
#define KGEN_WRAP_U2(v) ((int32_t)(v) & 3)
#define KGEN_WRAP_I4(v) ((KGEN_WRAP_U4(v) ^ 8) - 8)
#define KGEN_WRAP_I2(v) ((KGEN_WRAP_U2(v) ^ 2) - 2)
/* store code v (its low bits) as element i */
#define KGEN_SET4(p, i, v) \
    ((p)[(i) >> 1] = (uint8_t)(((p)[(i) >> 1] & ~(15u << (((i) & 1) << 2))) | (((uint32_t)(v) & 15u) << (((i) & 1) << 2))))
#define KGEN_SET2(p, i, v) \
    ((p)[(i) >> 2] = (uint8_t)(((p)[(i) >> 2] & ~(3u << (((i) & 3) << 1))) | (((uint32_t)(v) & 3u) << (((i) & 3) << 1))))

/* f4e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; codes 0..7 are 0, 0.5, 1, 1.5,
 * 2, 3, 4, 6; no infinity or NaN */
KGEN_INLINE float kgen_f4e2m1_to_f32(int32_t c)
{
    uint32_t m = (uint32_t)c & 7u;
    return kgen_bits_f32((((uint32_t)c & 8u) << 28) | (m < 2u ? m * 0x3f000000u : (m + 252u) << 22));
}

/* round to nearest even, saturating at 6; NaN gives code 8 (ONNX's reference does) */
KGEN_INLINE int32_t kgen_f32_to_f4e2m1(float f)
{
    if (f != f)
        return 8;
    float a = f < 0.0f ? -f : f;
    int32_t m = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 : a <= 2.5f ? 4 : a < 3.5f ? 5
              : a <= 5.0f ? 6 : 7;
    return m | (int32_t)((kgen_f32_bits(f) >> 28) & 8u);
}

/* f8e8m0: an exponent only, 2^(e - 127); 255 is NaN */
KGEN_INLINE float kgen_f8e8m0_to_f32(uint8_t e)
{
    return kgen_bits_f32(e == 255 ? 0x7fc00000u : e ? (uint32_t)e << 23 : 0x400000u);
}

/* |f| rounded up to a power of two, saturating at 2^127 (infinity too); Cast's defaults */
KGEN_INLINE uint8_t kgen_f32_to_f8e8m0(float f)
{
    uint32_t x = kgen_f32_bits(f), e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
    if (e == 255u)
        return (uint8_t)(m ? 255u : 254u);
    if (e == 0u)   /* zero and subnormals: code 0 is 2^-127, the subnormal 0x400000 */
        return (uint8_t)(m > 0x400000u);
    e += m != 0u;
    return (uint8_t)(e > 254u ? 254u : e);
}

#endif
