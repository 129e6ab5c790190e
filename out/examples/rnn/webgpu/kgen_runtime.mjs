// kgen_runtime.mjs - helpers of the JavaScript and WebAssembly targets: C's float and
// integer semantics that JS lacks (NaN-propagating min/max, floor division, round half to
// even, erf, 64-bit wrapping), the f16/bf16/float8 storage conversions, and I/O glue
// (bytes from a URL or a path, base64, input checks). No dependencies; node and browsers.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bits = (x) => { f32[0] = x; return u32[0]; };
const fromBits = (u) => { u32[0] = u; return f32[0]; };
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

// ---------------------------------------------------------------- bits (BitCast)

export const f32_bits = bits;                                   // a Number in [0, 2^32)
export const bits_f32 = fromBits;                               // any int32 or uint32 Number
export const f64_bits = (x) => { f64[0] = x; return u64[0]; };  // a BigInt in [0, 2^64)
export const bits_f64 = (u) => { u64[0] = u; return f64[0]; };  // any int64 or uint64 BigInt

// ---------------------------------------------------------------- math

export const min = (a, b) => (a !== a ? a : b !== b ? b : a < b ? a : b);
export const max = (a, b) => (a !== a ? a : b !== b ? b : a > b ? a : b);
export const min_big = (a, b) => (a < b ? a : b);
export const max_big = (a, b) => (a > b ? a : b);
export const rsqrt = (x) => 1 / Math.sqrt(x);
export const sigmoid = (x) => 1 / (1 + Math.exp(-x));
export const isinf = (x) => x === Infinity || x === -Infinity;
export const fma = (a, b, c) => a * b + c;
// C's pow: pow(1, y) and pow(x, 0) are 1 even for NaN; pow(-1, +-inf) is 1
export const pow = (x, y) => (x === 1 || y === 0 ? 1 : x === -1 && isinf(y) ? 1 : Math.pow(x, y));
// rint: halves to even (ONNX Round)
export function rint(x) {
    const r = Math.round(x);
    return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
export function erf(x) {
    const z = Math.abs(x);
    if (z < 0.5) {        // Taylor series: full precision where 1 - erfc would cancel
        let term = x, sum = x;
        for (let n = 1; n < 12; n++) {
            term *= -x * x / n;
            sum += term / (2 * n + 1);
        }
        return sum * 1.1283791670955126;
    }
    const t = 1 / (1 + 0.5 * z);  // Numerical Recipes' erfc, relative error < 1.2e-7
    const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
        t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
        t * 0.17087277)))))))));
    return x >= 0 ? 1 - r : r - 1;
}
export function floormod(a, b) {
    const r = a % b;
    return r !== 0 && (r < 0) !== (b < 0) ? r + b : r;
}
export const floordiv_i32 = (a, b) => Math.floor(a / b) | 0;
export function floormod_i32(a, b) {
    const r = a % b;
    return (r !== 0 && (r < 0) !== (b < 0) ? r + b : r) | 0;
}
export function floordiv_i64(a, b) {
    let q = a / b;
    if (a % b !== 0n && (a < 0n) !== (b < 0n))
        q -= 1n;
    return BigInt.asIntN(64, q);
}
export function floormod_i64(a, b) {
    const r = a % b;
    return r !== 0n && (r < 0n) !== (b < 0n) ? r + b : r;
}
export const abs_i64 = (x) => BigInt.asIntN(64, x < 0n ? -x : x);
// float to 64-bit integer: truncation; NaN and out of range give x86's INT64_MIN
export function float_to_i64(x) {
    if (!(x > -9223372036854775808 && x < 9223372036854775808))
        return -9223372036854775808n;
    return BigInt(Math.trunc(x));
}
export function float_to_u64(x) {
    if (!(x > -9223372036854775808 && x < 18446744073709551616))
        return 9223372036854775808n;
    return BigInt.asUintN(64, BigInt(Math.trunc(x)));
}

// ---------------------------------------------------------------- storage floats

export function f16_to_f32(h) {
    const sign = (h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    if (exp === 0x1f)
        return fromBits((sign | 0x7f800000 | (man << 13)) >>> 0);
    if (exp !== 0)
        return fromBits((sign | ((exp + 112) << 23) | (man << 13)) >>> 0);
    if (man === 0)
        return fromBits(sign >>> 0);
    let e = 113;
    while (!(man & 0x400)) {
        man <<= 1;
        e--;
    }
    return fromBits((sign | (e << 23) | ((man & 0x3ff) << 13)) >>> 0);
}

export function f32_to_f16(f) {
    const x = bits(f);
    const sign = (x >>> 16) & 0x8000, exp = (x >>> 23) & 0xff;
    let man = x & 0x7fffff;
    const e = exp - 112;
    let h, rem, halfway;
    if (exp === 0xff)
        return sign | 0x7c00 | (man ? 0x200 | (man >>> 13) : 0);
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        man |= 0x800000;
        const shift = 14 - e;
        h = man >>> shift;
        rem = man & ((1 << shift) - 1);
        halfway = 1 << (shift - 1);
    } else {
        h = (e << 10) | (man >>> 13);
        rem = man & 0x1fff;
        halfway = 0x1000;
    }
    if (rem > halfway || (rem === halfway && (h & 1)))
        h++;
    return sign | h;
}

export const bf16_to_f32 = (h) => fromBits((h << 16) >>> 0);
export function f32_to_bf16(f) {
    const x = bits(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return ((x >>> 16) | 0x40) & 0xffff;
    return (((x + 0x7fff + ((x >>> 16) & 1)) >>> 0) >>> 16) & 0xffff;
}

// kind: 0 IEEE-like (e5m2), 1 FN, 2 FNUZ (see kgen_runtime.h)
function f8_to_f32(v, m, bias, kind) {
    const sign = (v & 0x80) << 24, exp = (v & 0x7f) >> m;
    let man = v & ((1 << m) - 1);
    if (kind === 2 && v === 0x80)
        return NaN;
    if (kind === 1 && (v & 0x7f) === 0x7f)
        return fromBits((sign | 0x7fc00000) >>> 0);
    if (kind === 0 && exp === 0x7f >> m)
        return fromBits((sign | 0x7f800000 | (man << (23 - m))) >>> 0);
    if (exp !== 0)
        return fromBits((sign | ((exp + 127 - bias) << 23) | (man << (23 - m))) >>> 0);
    if (man === 0)
        return fromBits(sign >>> 0);
    let e = 128 - bias;
    while (!(man & (1 << m))) {
        man <<= 1;
        e--;
    }
    return fromBits((sign | (e << 23) | ((man & ((1 << m) - 1)) << (23 - m))) >>> 0);
}

function f32_to_f8(f, m, bias, kind, maxcode) {
    const x = bits(f);
    const sign = (x >>> 24) & 0x80, exp = (x >>> 23) & 0xff;
    let man = x & 0x7fffff;
    const nan = kind === 2 ? 0x80 : sign | (kind === 1 ? 0x7f : 0x7e);
    const over = kind === 0 ? sign | 0x7c : nan;
    const zero = kind === 2 ? 0 : sign;
    const e = exp - 127 + bias;
    let h, rem, halfway;
    if (exp === 0xff)
        return man ? nan : over;
    if (e <= 0) {
        if (e < -24)
            return zero;
        const shift = 24 - e - m;
        if (shift > 25)
            return zero;
        man |= 0x800000;
        h = man >>> shift;
        rem = man & ((2 ** shift) - 1);
        halfway = 2 ** (shift - 1);
    } else {
        h = (e << m) | (man >>> (23 - m));
        rem = man & ((1 << (23 - m)) - 1);
        halfway = 1 << (22 - m);
    }
    if (rem > halfway || (rem === halfway && (h & 1)))
        h++;
    if (h > maxcode)
        return over;
    return h ? sign | h : zero;
}

export const f8e4m3fn_to_f32 = (v) => f8_to_f32(v, 3, 7, 1);
export const f8e4m3fnuz_to_f32 = (v) => f8_to_f32(v, 3, 8, 2);
export const f8e5m2_to_f32 = (v) => f8_to_f32(v, 2, 15, 0);
export const f8e5m2fnuz_to_f32 = (v) => f8_to_f32(v, 2, 16, 2);
export const f32_to_f8e4m3fn = (f) => f32_to_f8(f, 3, 7, 1, 0x7e);
export const f32_to_f8e4m3fnuz = (f) => f32_to_f8(f, 3, 8, 2, 0x7f);
export const f32_to_f8e5m2 = (f) => f32_to_f8(f, 2, 15, 0, 0x7b);
export const f32_to_f8e5m2fnuz = (f) => f32_to_f8(f, 2, 16, 2, 0x7f);

// f4e2m1 (a 4-bit code: sign, 2 exponent bits, 1 mantissa bit; 0, 0.5, 1, 1.5, 2, 3, 4, 6)
// and f8e8m0 (an exponent only, 2^(e - 127); 255 is NaN), as templates/kgen_lowbit.h
const f4values = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
export const f4e2m1_to_f32 = (c) => (c & 8 ? -f4values[c & 7] : f4values[c & 7]);
export function f32_to_f4e2m1(f) {
    if (f !== f)
        return 8;        // as ONNX's reference does
    const a = Math.abs(f);
    const m = a <= 0.25 ? 0 : a < 0.75 ? 1 : a <= 1.25 ? 2 : a < 1.75 ? 3 : a <= 2.5 ? 4 : a < 3.5 ? 5 : a <= 5 ? 6 : 7;
    return m | ((bits(f) >>> 28) & 8);
}
export const f8e8m0_to_f32 = (e) => (e === 255 ? NaN : fromBits(e ? e << 23 : 0x400000));
export function f32_to_f8e8m0(f) {   // rounded up to a power of two, saturating (Cast's defaults)
    const x = bits(f), e = (x >>> 23) & 0xff, m = x & 0x7fffff;
    if (e === 255)
        return m ? 255 : 254;
    if (e === 0)
        return m > 0x400000 ? 1 : 0;
    return Math.min(e + (m ? 1 : 0), 254);
}

// packed arrays (i4, u4, i2, u2, f4e2m1): 8 / bits elements a byte, the first in the low
// bits. A store is a read-modify-write of the byte (the loops around it stay serial).
export const u4 = (p, i) => (p[i >> 1] >> ((i & 1) << 2)) & 15;
export const u2 = (p, i) => (p[i >> 2] >> ((i & 3) << 1)) & 3;
export const i4 = (p, i) => (u4(p, i) ^ 8) - 8;
export const i2 = (p, i) => (u2(p, i) ^ 2) - 2;
export const wrap_u4 = (v) => v & 15;
export const wrap_u2 = (v) => v & 3;
export const wrap_i4 = (v) => ((v & 15) ^ 8) - 8;
export const wrap_i2 = (v) => ((v & 3) ^ 2) - 2;
export function set4(p, i, v) {
    const s = (i & 1) << 2;
    p[i >> 1] = (p[i >> 1] & ~(15 << s)) | ((v & 15) << s);
}
export function set2(p, i, v) {
    const s = (i & 3) << 1;
    p[i >> 2] = (p[i >> 2] & ~(3 << s)) | ((v & 3) << s);
}
export const packedBits = { i4: 4, u4: 4, i2: 2, u2: 2, f4e2m1: 4 };
// element i of a tensor of dtype (packed or not) as a number (floats of storage types as codes)
export const element = (dtype, data, i) =>
    !packedBits[dtype] ? data[i] : dtype === "i4" ? i4(data, i) : dtype === "i2" ? i2(data, i) : packedBits[dtype] === 4 ? u4(data, i) : u2(data, i);

// ---------------------------------------------------------------- tensors and I/O

export const arrayTypes = {
    bool: Uint8Array, i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array, i32: Int32Array,
    u32: Uint32Array, i64: BigInt64Array, u64: BigUint64Array, f16: Uint16Array, f32: Float32Array,
    f64: Float64Array, bf16: Uint16Array, f8e4m3fn: Uint8Array, f8e4m3fnuz: Uint8Array, f8e5m2: Uint8Array,
    f8e5m2fnuz: Uint8Array, i4: Uint8Array, u4: Uint8Array, i2: Uint8Array, u2: Uint8Array, f4e2m1: Uint8Array,
    f8e8m0: Uint8Array,
};
export const numel = (info) => info.shape.reduce((a, b) => a * b, 1);
// the length of a tensor's typed array: numel, or its bytes for a packed type (rounded up)
export const storageLength = (info) =>
    packedBits[info.dtype] ? Math.ceil((numel(info) * packedBits[info.dtype]) / 8) : numel(info);
export const newTensor = (info) => new arrayTypes[info.dtype](storageLength(info));
export const tensorBytes = (info) => storageLength(info) * arrayTypes[info.dtype].BYTES_PER_ELEMENT;

export function checkInputs(name, infos, inputs) {
    if (!Array.isArray(inputs) || inputs.length !== infos.length)
        throw new Error(`${name}: expected ${infos.length} inputs`);
    infos.forEach((v, i) => {
        const x = inputs[i], T = arrayTypes[v.dtype];
        if (!(x instanceof T) || x.length !== storageLength(v))
            throw new Error(`${name}: input ${i} '${v.name}' must be a ${T.name} of ${storageLength(v)} elements (${v.dtype}[${v.shape}]${packedBits[v.dtype] ? ", packed" : ""})`);
    });
}

export function fromBase64(s) {
    if (typeof Buffer !== "undefined") {
        const b = Buffer.from(s, "base64");
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();
    }
    const t = atob(s), u = new Uint8Array(t.length);
    for (let i = 0; i < t.length; i++)
        u[i] = t.charCodeAt(i);
    return u;
}

// bytes of a URL, a file path (node) or bytes already; an ArrayBuffer
export async function readBinary(src) {
    if (src instanceof ArrayBuffer)
        return src;
    if (ArrayBuffer.isView(src))
        return src.buffer.slice(src.byteOffset, src.byteOffset + src.byteLength);
    const isNode = typeof process === "object" && process.versions && process.versions.node;
    if (isNode && (typeof src === "string" || (src instanceof URL && src.protocol === "file:"))) {
        const fs = await import("node:fs/promises");
        const b = await fs.readFile(src);
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    }
    const r = await fetch(src);
    if (!r.ok)
        throw new Error(`cannot fetch ${src}: ${r.status}`);
    return r.arrayBuffer();
}

// a standalone wasm module from emcc: its few imports are stubs (nothing calls them)
export async function instantiate(bytes) {
    const stub = new Proxy({}, { get: () => () => 0 });
    const imports = new Proxy({}, { get: () => stub });
    const { instance } = await WebAssembly.instantiate(bytes, imports);
    if (instance.exports._initialize)
        instance.exports._initialize();
    return instance.exports;
}
