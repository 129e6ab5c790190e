// conf_driver.mjs - written for tests/conformance_js.sh: runs generated JavaScript (or WASM)
// models against ONNX node-test data, one line of the list file per model:
//   NAME <TAB> MODULE_PATH <TAB> TEST_DATA_DIR [<TAB> WASM_PATH]
// (a WASM_PATH is handed to the loader's init(): tests/conformance_wasm.sh builds one .wasm
// for a whole batch of models; its bytes are read once per path)
// reads input_{graphIndex}.pb for each listed input, runs, compares each output with
// output_{graphIndex}.pb (shape, dtype; floats |got-exp| <= 1e-5 + 1e-3*|exp|, NaN meets
// NaN, infinities exact; integers and bools exact) and prints "PASS name" or
// "FAIL name: reason". The same rule as tests/conformance.sh, random outputs included: a
// test whose graph (the MANIFEST's graph_ops, next to the test folders) holds one of ONNX's
// random generators is judged on shapes and dtypes only.
import fs from "node:fs";
import { pathToFileURL } from "node:url";

const [list, ioPath, rtPath] = process.argv.slice(2);
const { readPb } = await import(pathToFileURL(ioPath));
const rt = await import(pathToFileURL(rtPath));
const floatTypes = new Set(["f16", "f32", "f64", "bf16", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f4e2m1", "f8e8m0"]);
const toFloat = {
    f16: rt.f16_to_f32, bf16: rt.bf16_to_f32, f8e4m3fn: rt.f8e4m3fn_to_f32, f8e4m3fnuz: rt.f8e4m3fnuz_to_f32,
    f8e5m2: rt.f8e5m2_to_f32, f8e5m2fnuz: rt.f8e5m2fnuz_to_f32, f4e2m1: rt.f4e2m1_to_f32, f8e8m0: rt.f8e8m0_to_f32,
};

const randomOps = new Set(["Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial"]);
const manifests = new Map();   // tests folder -> the names of the tests with random outputs
function drawsRandom(name, data) {
    const dir = `${data}/../..`;
    if (!manifests.has(dir)) {
        const names = new Set();
        try {
            for (const row of fs.readFileSync(`${dir}/MANIFEST.tsv`, "utf8").split("\n").slice(1)) {
                const f = row.split("\t");
                // (a Dropout given training_mode, a BOOL input, draws its mask)
                if (f.length > 6 && (f[6].split(",").some((op) => randomOps.has(op)) ||
                                     (f[1] === "Dropout" && f[3].split(",").includes("BOOL"))))
                    names.add(f[0]);
            }
        } catch (e) { /* no MANIFEST: every output is judged on its values */ }
        manifests.set(dir, names);
    }
    return manifests.get(dir).has(name);
}

function compare(k, v, got, exp, values) {
    if (v.dtype !== exp.dtype || v.shape.length !== exp.shape.length || v.shape.some((d, i) => d !== exp.shape[i]))
        return `output ${k}: model gives ${v.dtype}[${v.shape}], expected ${exp.dtype}[${exp.shape}]`;
    if (!values)
        return null;
    const conv = toFloat[v.dtype];
    let bad = 0, first = -1;
    const n = v.shape.reduce((x, y) => x * y, 1);   // (packed types: data holds bytes)
    const at = (d, i) => rt.element(v.dtype, d, i);
    for (let i = 0; i < n; i++) {
        let a = at(got, i), b = at(exp.data, i), ok;
        if (floatTypes.has(v.dtype)) {
            if (conv) { a = conv(a); b = conv(b); }
            ok = (a !== a && b !== b) || (!isFinite(b) && a === b) || (isFinite(b) && Math.abs(a - b) <= 1e-5 + 1e-3 * Math.abs(b));
        } else {
            ok = a === b;
        }
        if (!ok && bad++ === 0)
            first = i;
    }
    if (bad)
        return `output ${k}: ${bad} of ${n} elements differ, first at flat index ${first}: got ${at(got, first)}, expected ${at(exp.data, first)}`;
    return null;
}

const wasmBytes = new Map();
function readWasm(p) {
    if (!wasmBytes.has(p)) {
        const b = fs.readFileSync(p);
        wasmBytes.set(p, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    }
    return wasmBytes.get(p);
}

let device = null;
for (const line of fs.readFileSync(list, "utf8").split("\n")) {
    if (!line.trim())
        continue;
    const [name, mod, data, wasm] = line.split("\t");
    let why = null;
    try {
        const m = await import(pathToFileURL(mod));
        if (m.deviceMs) {
            // a webgpu module: one device for the whole batch, the model's buffers freed after
            if (!device) {
                const host = await import(new URL("./kgen_webgpu.mjs", pathToFileURL(mod)));
                device = await host.getDevice();
            }
            await m.init({ device });
        } else {
            await m.init(wasm ? readWasm(wasm) : undefined);
        }
        // a module with dims decided at run time (m.dims: an output extent computed from
        // values) takes and returns tensors {data, shape}, the outputs at their real shapes
        const pbs = m.inputInfo.map((v) => readPb(fs.readFileSync(`${data}/input_${v.graphIndex}.pb`)));
        const inputs = m.dims ? pbs.map((t) => ({data: t.data, shape: t.shape})) : pbs.map((t) => t.data);
        const outs = await m.run(inputs);   // (a promise from the webgpu target)
        if (m.release)
            m.release();
        const values = !drawsRandom(name, data);
        for (let k = 0; k < outs.length && !why; k++) {
            const v = m.dims ? {...m.outputInfo[k], shape: outs[k].shape} : m.outputInfo[k];
            why = compare(k, v, m.dims ? outs[k].data : outs[k], readPb(fs.readFileSync(`${data}/output_${v.graphIndex}.pb`)), values);
        }
    } catch (e) {
        why = `threw ${String(e && e.message || e).split("\n")[0].slice(0, 200)}`;
    }
    console.log(why ? `FAIL ${name}: ${why}` : `PASS ${name}`);
}
