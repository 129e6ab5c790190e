// ort_ref.mjs - onnxruntime as the second reference of the random-graph test
// (tests/fuzz_graphs.sh, tests/fuzz/README.md). For each test folder (model.onnx and
// test_data_set_0/input_N.pb, float inputs), runs the model on onnxruntime-node's CPU
// provider with every graph optimization disabled (onnxruntime's Pad+MaxPool fusion is
// wrong) and either compares its outputs with the folder's output_N.pb (the interpreter's,
// `kgen --interp-write`) by the node tests' rule |got-exp| <= 1e-5 + 1e-3*|exp|, or, with
// --write, writes them as output_N.pb:
//
//     node tests/fuzz/ort_ref.mjs [--write] [--ort DIR] TESTDIR...
//
// prints "PASS DIR", "FAIL DIR: reason" or "ERROR DIR: onnxruntime's message" per folder,
// then "ort-ref: N passed, N failed, N errors". onnxruntime-node is looked up in
// DIR/node_modules (--ort DIR, else $ORT_DIR, else /work/ort-cache); exit status 3 when it
// is not there.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { readPb } from "../../templates/kgen_io.mjs";

const args = process.argv.slice(2);
let write = false, ortDir = process.env.ORT_DIR || "/work/ort-cache";
const dirs = [];
for (let i = 0; i < args.length; i++) {
    if (args[i] === "--write") write = true;
    else if (args[i] === "--ort" && i + 1 < args.length) ortDir = args[++i];
    else dirs.push(args[i]);
}
let ort;
try {
    ort = createRequire(resolve(ortDir) + "/")("onnxruntime-node");
} catch (e) {
    console.error(`ort_ref: onnxruntime-node not found under ${ortDir}/node_modules (${e.message.split("\n")[0]})`);
    process.exit(3);
}

// a float32 TensorProto: dims 1, data_type 2, name 8, raw_data 9
function tensorPb(name, dims, data) {
    const bytes = [];
    const varint = (v) => {
        v = BigInt.asUintN(64, BigInt(v));
        do {
            bytes.push(Number(v & 0x7fn) | (v > 0x7fn ? 0x80 : 0));
            v >>= 7n;
        } while (v);
    };
    for (const d of dims) { varint(1 << 3); varint(d); }
    varint(2 << 3); varint(1);
    const nm = new TextEncoder().encode(name);
    varint(8 << 3 | 2); varint(nm.length); bytes.push(...nm);
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    varint(9 << 3 | 2); varint(raw.length);
    const head = Uint8Array.from(bytes), out = new Uint8Array(head.length + raw.length);
    out.set(head);
    out.set(raw, head.length);
    return out;
}

function compare(got, exp) {
    if (got.dims.length !== exp.shape.length || got.dims.some((d, i) => d !== exp.shape[i]))
        return `shape [${got.dims}], expected [${exp.shape}]`;
    let worst = -1, at = 0;
    for (let i = 0; i < exp.data.length; i++) {
        const g = got.data[i], e = exp.data[i];
        if (Number.isNaN(e) && Number.isNaN(g)) continue;
        const bad = !Number.isFinite(e) ? g !== e : !(Math.abs(g - e) <= 1e-5 + 1e-3 * Math.abs(e));
        if (bad && (worst < 0 || Math.abs(g - e) > worst)) { worst = Math.abs(g - e); at = i; }
    }
    return worst < 0 ? null : `[${at}] onnxruntime ${got.data[at]}, reference ${exp.data[at]} (max error ${worst})`;
}

let pass = 0, fail = 0, errors = 0;
for (const dir of dirs) {
    try {
        const session = await ort.InferenceSession.create(`${dir}/model.onnx`, {
            executionProviders: ["cpu"], intraOpNumThreads: 1, interOpNumThreads: 1,
            executionMode: "sequential", graphOptimizationLevel: "disabled",
        });
        const feeds = {};
        session.inputNames.forEach((name, i) => {
            const t = readPb(readFileSync(`${dir}/test_data_set_0/input_${i}.pb`));
            feeds[name] = new ort.Tensor("float32", t.data, t.shape);
        });
        const result = await session.run(feeds);
        let why = null;
        session.outputNames.forEach((name, i) => {
            const path = `${dir}/test_data_set_0/output_${i}.pb`;
            if (write) writeFileSync(path, tensorPb(name, result[name].dims, result[name].data));
            else if (!why) why = existsSync(path) ? compare(result[name], readPb(readFileSync(path))) : `no ${path}`;
            if (why && !why.startsWith("output")) why = `output ${i} '${name}': ${why}`;
        });
        if (why) { fail++; console.log(`FAIL ${dir}: ${why}`); }
        else { pass++; console.log(`PASS ${dir}`); }
    } catch (e) {
        errors++;
        console.log(`ERROR ${dir}: ${String(e.message || e).split("\n")[0]}`);
    }
}
console.log(`ort-ref: ${pass} passed, ${fail} failed, ${errors} errors`);
