// dyn.mjs - helpers of tests/dyn_js.sh (dims decided at run time, JS and WASM targets):
//
//   node dyn.mjs zeros FILE.npy D0,D1,...   writes an f32 .npy of zeros of that shape
//   node dyn.mjs add MODULE.mjs             checks the module of tests/data/dyn/add_t.onnx
//                                           (y = Transpose(Relu(a + b)), --dim B=1..16
//                                           --dim C=1..16) through its API: the exports
//                                           (dims, -1 in inputInfo/outputInfo, outputShapes),
//                                           run() on tensors at B = C = 1, 5, 16 against the
//                                           values computed here (exact: one f32 add), and
//                                           the refusals (B != C, B out of range, an input
//                                           without a shape), none of which may return
//
// Prints "FAIL ..." per failed check and "N checks passed"; exit status 1 on any failure.
import { writeNpy } from "../../templates/kgen_io.mjs";
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [what, arg, shapeText] = process.argv.slice(2);
if (what === "zeros") {
    const shape = shapeText.split(",").map(Number);
    const n = shape.reduce((a, b) => a * b, 1);
    writeFileSync(arg, writeNpy({ dtype: "f32", shape, data: new Float32Array(n) }));
    process.exit(0);
}
if (what !== "add") {
    console.error("usage: node dyn.mjs zeros FILE.npy D0,D1,... | add MODULE.mjs");
    process.exit(2);
}

let passed = 0, failed = 0;
const check = (cond, msg) => {
    if (cond) passed++;
    else {
        failed++;
        console.log(`FAIL ${msg}`);
    }
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// f(): must throw an Error whose message matches re
function refuses(f, re, msg) {
    try {
        f();
        check(false, `${msg}: not refused`);
    } catch (e) {
        check(re.test(e.message), `${msg}: refused with '${e.message}', expected ${re}`);
    }
}

const m = await import(pathToFileURL(resolve(arg)).href);
await m.init();
check(same(m.dims, [{ name: "B", lo: 1, hi: 16, input: 0, dim: 0 }, { name: "C", lo: 1, hi: 16, input: 1, dim: 0 }]),
      `dims: ${JSON.stringify(m.dims)}`);
check(same(m.inputInfo.map((v) => v.shape), [[-1, 8], [-1, 8]]), `inputInfo shapes: ${JSON.stringify(m.inputInfo)}`);
check(same(m.outputInfo.map((v) => v.shape), [[8, -1]]), `outputInfo shapes: ${JSON.stringify(m.outputInfo)}`);
check(same(m.outputShapes(3, 3), [[8, 3]]), `outputShapes(3, 3): ${JSON.stringify(m.outputShapes(3, 3))}`);

let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 4 - 2;
const tensor = (rows) => ({ shape: [rows, 8], data: Float32Array.from({ length: rows * 8 }, rand) });
for (const n of [1, 5, 16, 5]) {   // 5 again: after a larger run, nothing stale
    const a = tensor(n), b = tensor(n);
    const [y] = m.run([a, b]);
    check(y.dtype === "f32" && same(y.shape, [8, n]) && y.data.length === 8 * n,
          `n=${n}: output ${y.dtype}[${y.shape}] of ${y.data.length} elements, expected f32[8, ${n}]`);
    let bad = 0;
    for (let i = 0; i < n; i++)
        for (let j = 0; j < 8; j++)
            if (y.data[j * n + i] !== Math.max(Math.fround(a.data[i * 8 + j] + b.data[i * 8 + j]), 0))
                bad++;
    check(bad === 0, `n=${n}: ${bad} of ${8 * n} values differ from relu(a + b) transposed`);
}
refuses(() => m.run([tensor(5), tensor(7)]), /must agree \(B = 5, C = 7\)/, "B=5, C=7");
refuses(() => m.run([tensor(17), tensor(17)]), /dim 0 \(B\) is 17, outside the range \[1, 16\]/, "B=17");
refuses(() => m.run([tensor(0), tensor(0)]), /outside the range \[1, 16\]/, "B=0");
refuses(() => m.run([new Float32Array(8), new Float32Array(8)]), /must be a tensor \{data, shape\}/, "typed arrays");
refuses(() => m.run([{ shape: [2, 8], data: new Float32Array(15) }, tensor(2)]), /must be a Float32Array of 16 elements/,
        "a short array");
refuses(() => m.run([{ shape: [2, 8], data: new Float64Array(16) }, tensor(2)]), /must be a Float32Array/, "an f64 array");
console.log(`${passed} checks passed`);
process.exit(failed ? 1 : 0);
