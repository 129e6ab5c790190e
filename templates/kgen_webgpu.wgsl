// kgen_webgpu.wgsl - the helpers every WGSL module of kgen's starts with: what C's libm and
// kgen_runtime.h give the other targets and WGSL lacks or defines differently.
//
// WGSL lets an implementation assume that floats are never infinite or NaN, so the tests
// for them look at the bits, and infinity itself comes from a private variable (a constant
// expression that overflows is a shader-creation error).

var<private> kg_inf_bits: u32 = 0x7f800000u;
var<private> kg_nan_bits: u32 = 0x7fc00000u;

fn kg_inf() -> f32 { return bitcast<f32>(kg_inf_bits); }
fn kg_nan() -> f32 { return bitcast<f32>(kg_nan_bits); }
fn kg_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn kg_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }

// min and max that return NaN when an operand is NaN (WGSL's may return either)
fn kg_min_f32(a: f32, b: f32) -> f32 { return select(b, a, a < b || kg_isnan(a)); }
fn kg_max_f32(a: f32, b: f32) -> f32 { return select(b, a, a > b || kg_isnan(a)); }

// division and remainder rounding towards minus infinity (C's / and % truncate, as WGSL's)
fn kg_floordiv_i32(a: i32, b: i32) -> i32 {
    let q = a / b;
    return select(q, q - 1, a % b != 0 && (a < 0) != (b < 0));
}
fn kg_floormod_i32(a: i32, b: i32) -> i32 {
    let r = a % b;
    return select(r, r + b, r != 0 && (r < 0) != (b < 0));
}
fn kg_floormod_f32(a: f32, b: f32) -> f32 {
    let r = a % b;
    return select(r, r + b, r != 0.0f && (r < 0.0f) != (b < 0.0f));
}

// C's pow: WGSL's is exp2(y * log2(x)), undefined for x < 0
fn kg_pow(x: f32, y: f32) -> f32 {
    if (y == 0.0f || x == 1.0f) {
        return 1.0f;
    }
    if (kg_isnan(x) || kg_isnan(y)) {
        return kg_nan();
    }
    let ax = abs(x);
    var r: f32;
    if (ax == 0.0f) {
        r = select(kg_inf(), 0.0f, y > 0.0f);
    } else if (kg_isinf(ax)) {
        r = select(0.0f, kg_inf(), y > 0.0f);
    } else if (kg_isinf(y)) {
        r = select(select(kg_inf(), 0.0f, y > 0.0f), select(0.0f, kg_inf(), y > 0.0f), ax > 1.0f);
        if (ax == 1.0f) {
            r = 1.0f;
        }
        return r;
    } else {
        r = pow(ax, y);
    }
    if (x < 0.0f) {
        if (trunc(y) != y) {
            return kg_nan();
        }
        if (abs(y) < 16777216.0f && (i32(abs(y)) & 1) == 1) {
            r = -r;
        }
    }
    return r;
}

// tanh without the overflow of e^2x for large |x| (some drivers return NaN there)
fn kg_tanh(x: f32) -> f32 { return select(tanh(x), sign(x), abs(x) > 10.0f); }
fn kg_sigmoid(x: f32) -> f32 { return 1.0f / (1.0f + exp(-x)); }

// erf: a float-accurate rational approximation near 0 (|err| < 2 ulp), the Numerical
// Recipes erfc Chebyshev fit beyond (relative error < 1.2e-7), as for Metal
fn kg_erf(x: f32) -> f32 {
    let a = abs(x);
    if (a < 0.84375f) {
        let z = x * x;
        let p = 1.28379166e-01f + z * (-3.25042108e-01f + z * (-2.84817495e-02f + z * (-5.77027029e-03f + z * -2.37630166e-05f)));
        let q = 1.0f + z * (3.97917226e-01f + z * (6.50222525e-02f + z * (5.08130631e-03f + z * (1.32494736e-04f + z * -3.96022825e-06f))));
        return x + x * (p / q);
    }
    var r = 1.0f;
    if (a < 6.0f) {
        let t = 1.0f / (1.0f + 0.5f * a);
        let y = t * exp(-a * a - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f +
                t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
        r = 1.0f - y;
    }
    return select(r, -r, x < 0.0f);
}

// the storage floats: f16 and bf16 encodings (in a word's low 16 bits) to and from f32,
// rounding to nearest even
fn kg_f16_to_f32(h: u32) -> f32 { return unpack2x16float(h & 0xffffu).x; }
fn kg_f32_to_f16(f: f32) -> u32 {
    let u = bitcast<u32>(f);
    let sign = (u >> 16u) & 0x8000u;
    let a = u & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return sign | 0x7e00u;                    // NaN
    }
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;                    // rounds to infinity
    }
    if (a < 0x38800000u) {                        // a subnormal half, or zero
        if (a < 0x33000000u) {
            return sign;
        }
        let e = a >> 23u;
        let m = (a & 0x7fffffu) | 0x800000u;
        let shift = 126u - e;                     // 14 to 24
        let h = m >> shift;
        let rem = m & ((1u << shift) - 1u);
        let half = 1u << (shift - 1u);
        return sign | (h + select(0u, 1u, rem > half || (rem == half && (h & 1u) == 1u)));
    }
    let h = ((a >> 13u) - (112u << 10u));
    let rem = a & 0x1fffu;
    return sign | (h + select(0u, 1u, rem > 0x1000u || (rem == 0x1000u && (h & 1u) == 1u)));
}
fn kg_bf16_to_f32(h: u32) -> f32 { return bitcast<f32>((h & 0xffffu) << 16u); }
fn kg_f32_to_bf16(f: f32) -> u32 {
    let u = bitcast<u32>(f);
    if (kg_isnan(f)) {
        return (u >> 16u) | 0x40u;
    }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

// C's conversions to the narrow integer types: the low bits, sign-extended for signed ones
fn kg_wrap_i8(v: i32) -> i32 { return (v << 24u) >> 24u; }
fn kg_wrap_i16(v: i32) -> i32 { return (v << 16u) >> 16u; }
fn kg_wrap_u8(v: u32) -> u32 { return v & 0xffu; }
fn kg_wrap_u16(v: u32) -> u32 { return v & 0xffffu; }

// the float8 types: kind 0 has inf (e5m2), 1 has one NaN code per sign (e4m3fn), 2 has one
// NaN, 0x80, and no negative zero (the fnuz types); m mantissa bits, the exponent's bias
fn kg_f8_to_f32(v: u32, m: u32, bias: u32, kind: u32) -> f32 {
    let sign = (v & 0x80u) << 24u;
    let e = (v & 0x7fu) >> m;
    var man = v & ((1u << m) - 1u);
    if (kind == 2u && v == 0x80u) {
        return kg_nan();
    }
    if (kind == 1u && (v & 0x7fu) == 0x7fu) {
        return bitcast<f32>(sign | 0x7fc00000u);
    }
    if (kind == 0u && e == (0x7fu >> m)) {
        return bitcast<f32>(sign | 0x7f800000u | (man << (23u - m)));
    }
    if (e != 0u) {
        return bitcast<f32>(sign | ((e + 127u - bias) << 23u) | (man << (23u - m)));
    }
    if (man == 0u) {
        return bitcast<f32>(sign);
    }
    var x = 128u - bias;                          // a subnormal: normalize the mantissa
    for (var k = 0u; k < 4u && (man & (1u << m)) == 0u; k++) {
        man = man << 1u;
        x = x - 1u;
    }
    return bitcast<f32>(sign | (x << 23u) | ((man & ((1u << m) - 1u)) << (23u - m)));
}
// rounding to nearest even; overflow gives NaN, inf for kind 0 (ONNX's saturate=0)
fn kg_f32_to_f8(f: f32, m: u32, bias: u32, kind: u32, maxcode: u32) -> u32 {
    let x = bitcast<u32>(f);
    let sign = (x >> 24u) & 0x80u;
    let ex = (x >> 23u) & 0xffu;
    var man = x & 0x7fffffu;
    let nan = select(sign | select(0x7eu, 0x7fu, kind == 1u), 0x80u, kind == 2u);
    let over = select(nan, sign | 0x7cu, kind == 0u);
    let zero = select(sign, 0u, kind == 2u);
    let e = i32(ex) - 127 + i32(bias);
    var h: u32;
    var rem: u32;
    var halfway: u32;
    if (ex == 0xffu) {
        return select(over, nan, man != 0u);
    }
    if (e <= 0) {
        if (e < -24) {
            return zero;
        }
        let shift = u32(24 - e) - m;
        if (shift > 25u) {
            return zero;
        }
        man = man | 0x800000u;
        h = man >> shift;
        rem = man & ((1u << shift) - 1u);
        halfway = 1u << (shift - 1u);
    } else {
        h = (u32(e) << m) | (man >> (23u - m));
        rem = man & ((1u << (23u - m)) - 1u);
        halfway = 1u << (22u - m);
    }
    if (rem > halfway || (rem == halfway && (h & 1u) == 1u)) {
        h = h + 1u;
    }
    if (h > maxcode) {
        return over;
    }
    return select(zero, sign | h, h != 0u);
}
fn kg_f8e4m3fn_to_f32(v: u32) -> f32 { return kg_f8_to_f32(v, 3u, 7u, 1u); }
fn kg_f8e4m3fnuz_to_f32(v: u32) -> f32 { return kg_f8_to_f32(v, 3u, 8u, 2u); }
fn kg_f8e5m2_to_f32(v: u32) -> f32 { return kg_f8_to_f32(v, 2u, 15u, 0u); }
fn kg_f8e5m2fnuz_to_f32(v: u32) -> f32 { return kg_f8_to_f32(v, 2u, 16u, 2u); }
fn kg_f32_to_f8e4m3fn(f: f32) -> u32 { return kg_f32_to_f8(f, 3u, 7u, 1u, 0x7eu); }
fn kg_f32_to_f8e4m3fnuz(f: f32) -> u32 { return kg_f32_to_f8(f, 3u, 8u, 2u, 0x7fu); }
fn kg_f32_to_f8e5m2(f: f32) -> u32 { return kg_f32_to_f8(f, 2u, 15u, 0u, 0x7bu); }
fn kg_f32_to_f8e5m2fnuz(f: f32) -> u32 { return kg_f32_to_f8(f, 2u, 16u, 2u, 0x7fu); }

// f4e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; to it rounding to nearest even,
// saturating at 6, NaN as code 8 (ONNX's reference); f8e8m0: 2^(e - 127), 255 is NaN,
// rounded up to a power of two and saturating (Cast's defaults)
fn kg_f4e2m1_to_f32(c: u32) -> f32 {
    let m = c & 7u;
    return bitcast<f32>(((c & 8u) << 28u) | select((m + 252u) << 22u, m * 0x3f000000u, m < 2u));
}
fn kg_f32_to_f4e2m1(f: f32) -> u32 {
    if (kg_isnan(f)) {
        return 8u;
    }
    let a = abs(f);
    var m = 7u;
    if (a <= 0.25f) { m = 0u; } else if (a < 0.75f) { m = 1u; } else if (a <= 1.25f) { m = 2u; }
    else if (a < 1.75f) { m = 3u; } else if (a <= 2.5f) { m = 4u; } else if (a < 3.5f) { m = 5u; }
    else if (a <= 5.0f) { m = 6u; }
    return m | ((bitcast<u32>(f) >> 28u) & 8u);
}
fn kg_f8e8m0_to_f32(e: u32) -> f32 {
    return bitcast<f32>(select(select(0x400000u, e << 23u, e != 0u), 0x7fc00000u, e == 255u));
}
fn kg_f32_to_f8e8m0(f: f32) -> u32 {
    let x = bitcast<u32>(f);
    var e = (x >> 23u) & 0xffu;
    let m = x & 0x7fffffu;
    if (e == 255u) {
        return select(254u, 255u, m != 0u);
    }
    if (e == 0u) {
        return select(0u, 1u, m > 0x400000u);
    }
    e = e + select(0u, 1u, m != 0u);
    return min(e, 254u);
}

// the packed integer types: C's wrap of a value into their range (the code's low bits,
// sign-extended for i4 and i2)
fn kg_wrap_u4(v: i32) -> i32 { return v & 15; }
fn kg_wrap_u2(v: i32) -> i32 { return v & 3; }
fn kg_wrap_i4(v: i32) -> i32 { return ((v & 15) ^ 8) - 8; }
fn kg_wrap_i2(v: i32) -> i32 { return ((v & 3) ^ 2) - 2; }
