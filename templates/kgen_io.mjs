// kgen_io.mjs - tensors in files for the JavaScript runner and tests: .npy (read and write)
// and ONNX TensorProto .pb (read). A tensor is {dtype, shape, data} with kgen's dtype names
// ("f32", "i64", ...) and data a typed array (kgen_runtime.mjs arrayTypes).
// The packed types (i4, u4, i2, u2, f4e2m1) hold their elements as ONNX does, 8 / bits a byte
// in a Uint8Array (kgen_runtime.mjs storageLength). NumPy has none of them: an i4 or i2
// input comes from .npy as int8, a u4 or u2 one as uint8, one element per value (packInput),
// and writeNpy writes such a tensor the same way (f4e2m1: its codes as uint8).
import { arrayTypes, element, packedBits, set2, set4, storageLength } from "./kgen_runtime.mjs";

const npyNames = {
    "b1": "bool", "i1": "i8", "u1": "u8", "i2": "i16", "u2": "u16", "i4": "i32", "u4": "u32", "i8": "i64",
    "u8": "u64", "f2": "f16", "f4": "f32", "f8": "f64",
};

export function readNpy(bytes) {
    const u8 = new Uint8Array(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength);
    if (u8.length < 10 || u8[0] !== 0x93 || String.fromCharCode(...u8.subarray(1, 6)) !== "NUMPY")
        throw new Error("not a .npy file");
    const major = u8[6];
    const hlen = major === 1 ? u8[8] | (u8[9] << 8) : u8[8] | (u8[9] << 8) | (u8[10] << 16) | (u8[11] << 24);
    const start = major === 1 ? 10 : 12;
    const header = new TextDecoder().decode(u8.subarray(start, start + hlen));
    const descr = /'descr':\s*'([<>|=])([a-z]\d+)'/.exec(header);
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
    if (!descr || !shape || /'fortran_order':\s*True/.test(header))
        throw new Error(`unsupported .npy header: ${header.trim()}`);
    if (descr[1] === ">" && descr[2] !== "b1" && !descr[2].endsWith("1"))
        throw new Error("big-endian .npy files are not supported");
    let dtype = npyNames[descr[2]];
    if (descr[2] === "V2" || descr[2] === "u2" && /bfloat16/.test(header))
        dtype = "bf16";
    if (!dtype)
        throw new Error(`unsupported .npy dtype '${descr[2]}'`);
    const dims = shape[1].split(",").map((s) => s.trim()).filter((s) => s.length).map(Number);
    const n = dims.reduce((a, b) => a * b, 1);
    const T = arrayTypes[dtype];
    const off = start + hlen;
    if (u8.length - off < n * T.BYTES_PER_ELEMENT)
        throw new Error(".npy file is truncated");
    const data = new T(u8.slice(off, off + n * T.BYTES_PER_ELEMENT).buffer);
    return { dtype, shape: dims, data };
}

// t read from .npy for a model input of packed dtype: its (u)int8 values packed (else t)
export function packInput(t, dtype) {
    const bits = packedBits[dtype];
    if (!bits || dtype === "f4e2m1" || t.dtype !== (dtype[0] === "i" ? "i8" : "u8"))
        return t;
    const lo = dtype[0] === "i" ? -(1 << (bits - 1)) : 0, hi = dtype[0] === "i" ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    const data = new Uint8Array(storageLength({ dtype, shape: t.shape }));
    t.data.forEach((x, i) => {
        if (x < lo || x > hi)
            throw new Error(`element ${i} is ${x}, outside ${dtype}'s range ${lo}..${hi}`);
        (bits === 4 ? set4 : set2)(data, i, x);
    });
    return { dtype, shape: t.shape, data };
}

export function writeNpy(t) {
    if (packedBits[t.dtype]) {
        const n = t.shape.reduce((a, b) => a * b, 1), T = t.dtype[0] === "i" ? Int8Array : Uint8Array;
        t = { dtype: t.dtype[0] === "i" ? "i8" : "u8", shape: t.shape, data: T.from({ length: n }, (_, i) => element(t.dtype, t.data, i)) };
    }
    const code = Object.keys(npyNames).find((c) => npyNames[c] === t.dtype) ?? (t.dtype === "bf16" ? "u2" : "u1");
    const descr = (code.endsWith("1") ? "|" : "<") + code;
    const shape = t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(", ")})`;
    let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
    h += " ".repeat(63 - ((10 + h.length) % 64)) + "\n";
    const head = new Uint8Array(10 + h.length);
    head.set([0x93, 78, 85, 77, 80, 89, 1, 0, h.length & 255, h.length >> 8]);
    head.set(new TextEncoder().encode(h), 10);
    const body = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    return out;
}

// ONNX TensorProto.DataType -> kgen dtype
const onnxTypes = {
    1: "f32", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "i32", 7: "i64", 9: "bool", 10: "f16", 11: "f64",
    12: "u32", 13: "u64", 16: "bf16", 17: "f8e4m3fn", 18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz",
    21: "u4", 22: "i4", 23: "f4e2m1", 24: "f8e8m0", 25: "u2", 26: "i2",
};

export function readPb(bytes) {
    const u8 = new Uint8Array(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength);
    const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
    let p = 0;
    const varint = () => {
        let v = 0n, s = 0n;
        for (;;) {
            if (p >= u8.length)
                throw new Error("truncated .pb");
            const b = u8[p++];
            v |= BigInt(b & 0x7f) << s;
            s += 7n;
            if (!(b & 0x80))
                return v;
        }
    };
    const dims = [], ints = [], floats = [], doubles = [];
    let type = 0, raw = null;
    while (p < u8.length) {
        const key = Number(varint()), field = key >> 3, wire = key & 7;
        if (wire === 0) {
            const v = varint();
            if (field === 1) dims.push(Number(BigInt.asIntN(64, v)));
            else if (field === 2) type = Number(v);
            else if (field === 5 || field === 7 || field === 11) ints.push(v);
        } else if (wire === 2) {
            const n = Number(varint()), end = p + n;
            if (field === 9) raw = u8.slice(p, end);
            else if (field === 1 || field === 5 || field === 7 || field === 11) {
                while (p < end) {
                    const v = varint();
                    (field === 1 ? dims : ints).push(field === 1 ? Number(BigInt.asIntN(64, v)) : v);
                }
            } else if (field === 4) {
                for (; p < end; p += 4) floats.push(dv.getFloat32(p, true));
            } else if (field === 10) {
                for (; p < end; p += 8) doubles.push(dv.getFloat64(p, true));
            }
            p = end;
        } else if (wire === 5) {
            if (field === 4) floats.push(dv.getFloat32(p, true));
            p += 4;
        } else if (wire === 1) {
            if (field === 10) doubles.push(dv.getFloat64(p, true));
            p += 8;
        } else {
            throw new Error(`bad .pb wire type ${wire}`);
        }
    }
    const dtype = onnxTypes[type];
    if (!dtype)
        throw new Error(`unsupported ONNX data type ${type}`);
    // (packed types: n counts bytes, as int32_data does, one packed byte an entry)
    const T = arrayTypes[dtype], n = storageLength({ dtype, shape: dims });
    let data;
    if (raw) {
        if (raw.byteLength !== n * T.BYTES_PER_ELEMENT)
            throw new Error(`.pb raw_data has ${raw.byteLength} bytes, expected ${n * T.BYTES_PER_ELEMENT}`);
        data = new T(raw.buffer);
    } else {
        data = new T(n);
        const src = dtype === "f32" ? floats : dtype === "f64" ? doubles : ints;
        if (src.length !== n)
            throw new Error(`.pb has ${src.length} values, expected ${n}`);
        for (let i = 0; i < n; i++)
            data[i] = T === BigInt64Array ? BigInt.asIntN(64, src[i]) : T === BigUint64Array ? BigInt.asUintN(64, src[i]) :
                typeof src[i] === "bigint" ? Number(BigInt.asIntN(64, src[i])) : src[i];
    }
    return { dtype, shape: dims, data };
}

// a .npy or .pb file by its extension (node)
export async function readTensorFile(path) {
    const fs = await import("node:fs/promises");
    const b = await fs.readFile(path);
    return path.endsWith(".pb") ? readPb(b) : readNpy(b);
}
