// dyn_values.mjs - a helper of tests/dyn_values.sh: the API of the JS or WASM module of
// tests/models/dyn_mixed (an output whose extent is a count computed from values, which must
// meet W, a dim given at run time: --dim W=1..6), generated with --name m:
//
//   node dyn_values.mjs MODULE.mjs DIR        DIR: tests/models/dyn_mixed
//
// Checks: the dims export (W read from input 1 dim 1; the count `computed: true`, input and
// dim -1, in [0, 6]); checkDims takes the count at any value and refuses W out of range;
// run() on each input set in_S_*.npy gives out_S_0.npy (shape and values) as a tensor
// {dtype, shape, data} whose data holds exactly the real extent's elements; the JS model
// function m(x, z, y, W) returns every dim, the count included, and writes y compact for it;
// run() on bad_0_*.npy (a count that differs from W) throws naming the condition.
// Prints "FAIL ..." per failed check and "N checks passed"; exit status 1 on any failure.
import { readTensorFile } from "../../templates/kgen_io.mjs";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [modPath, dir] = process.argv.slice(2);
if (!modPath || !dir) {
    console.error("usage: node dyn_values.mjs MODULE.mjs DIR");
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
const throws = (f, re, msg) => {
    try {
        f();
    } catch (e) {
        check(re.test(String(e && e.message)), `${msg}: threw '${e && e.message}', expected ${re}`);
        return;
    }
    check(false, `${msg}: did not throw`);
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const m = await import(pathToFileURL(resolve(modPath)));
await m.init();
check(Array.isArray(m.dims) && m.dims.length === 2, `dims: ${JSON.stringify(m.dims)}`);
const [w, c] = m.dims;
check(w && w.name === "W" && w.input === 1 && w.dim === 1 && w.lo === 1 && w.hi === 6 && !w.computed,
      `dims[0] is W of input 1 dim 1 in [1, 6]: ${JSON.stringify(w)}`);
check(c && c.computed === true && c.input === -1 && c.dim === -1 && c.lo === 0 && c.hi === 6,
      `dims[1] is the count, computed: true, input and dim -1, in [0, 6]: ${JSON.stringify(c)}`);
check(same(m.outputInfo[0].shape, [2, -1]), `outputInfo[0].shape: ${JSON.stringify(m.outputInfo[0].shape)}`);
// the count is not checked before the run (any value), W is
for (const n of [0, 6, 99])
    try {
        m.checkDims(3, n);
        check(true, "");
    } catch (e) {
        check(false, `checkDims(3, ${n}) threw '${e.message}': the count is the model's to check`);
    }
throws(() => m.checkDims(7, 0), /outside the range \[1, 6\]/, "checkDims(7, 0)");

const load = async (f) => {
    const t = await readTensorFile(f);
    return { data: t.data, shape: t.shape };
};
let sets = 0;
for (let s = 0; existsSync(`${dir}/in_${s}_0.npy`); s++, sets++) {
    const inputs = [await load(`${dir}/in_${s}_0.npy`), await load(`${dir}/in_${s}_1.npy`)];
    const ref = await readTensorFile(`${dir}/out_${s}_0.npy`);
    const y = m.run(inputs)[0];
    const n = ref.shape.reduce((a, b) => a * b, 1);
    check(y.dtype === "f32" && same(y.shape, ref.shape), `set ${s}: run() gives ${y.dtype}[${y.shape}], expected f32[${ref.shape}]`);
    check(y.data instanceof Float32Array && y.data.length === n, `set ${s}: data of ${y.data.length} elements, expected ${n}`);
    check(Array.from(y.data).every((v, i) => v === ref.data[i]), `set ${s}: values differ from out_${s}_0.npy`);
    if (typeof m.m === "function") {   // the JS model function (the WASM loader has run() only)
        const W = inputs[1].shape[1], out = new Float32Array(2 * c.hi);
        const d = m.m(inputs[0].data, inputs[1].data, out, W);
        check(same(d, [W, ref.shape[1]]), `set ${s}: m() returns ${JSON.stringify(d)}, expected [${W}, ${ref.shape[1]}]`);
        check(Array.from(out.subarray(0, n)).every((v, i) => v === ref.data[i]), `set ${s}: m() writes y compact for the count`);
    }
}
check(sets >= 2, `${sets} input sets in ${dir}`);
const bad = [await load(`${dir}/bad_0_0.npy`), await load(`${dir}/bad_0_1.npy`)];
throws(() => m.run(bad), /dims of z and y must agree|status 4 \(wrong shape/, "run() on bad_0");

console.log(`${passed} checks passed`);
process.exit(failed ? 1 : 0);
