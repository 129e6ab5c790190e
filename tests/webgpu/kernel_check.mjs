// kernel_check.mjs - a .kg kernel through the webgpu target against the same kernel through the
// JS target (tests/js.sh checks that one against the C target), on the same random inputs:
//
//     node kernel_check.mjs JS_DIR WEBGPU_DIR NAME
//
// Prints "ok NAME (N outputs, max error E)" and exits 0, or the first mismatch and exits 1.
import { pathToFileURL } from "node:url";
import { arrayTypes, newTensor } from "../../templates/kgen_runtime.mjs";

const [jsDir, wgDir, name] = process.argv.slice(2);
const js = await import(pathToFileURL(`${jsDir}/${name}.mjs`).href);
const wg = await import(pathToFileURL(`${wgDir}/${name}.mjs`).href);
const fn = wg.name;
let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
const args = wg.params.map((p) => {
    const t = newTensor(p);
    if (p.input)
        for (let i = 0; i < t.length; i++)
            t[i] = arrayTypes[p.dtype] === Float32Array ? rand() : Math.floor(rand() * 4);
    return t;
});
const jsArgs = args.map((t, i) => (wg.params[i].input ? t : newTensor(wg.params[i])));
js[fn](...jsArgs, new ArrayBuffer(js.WORKSPACE_BYTES));
await wg.init();
await wg[fn](...args);
let worst = 0;
for (let i = 0; i < args.length; i++) {
    if (wg.params[i].input)
        continue;
    const a = jsArgs[i], b = args[i];
    for (let j = 0; j < a.length; j++) {
        const d = Math.abs(a[j] - b[j]), tol = 1e-4 + 1e-4 * Math.abs(a[j]);
        if (!(d <= tol)) {
            console.log(`FAIL ${name}: output ${wg.params[i].name}[${j}] = ${b[j]}, the JS target gives ${a[j]}`);
            process.exit(1);
        }
        worst = Math.max(worst, d);
    }
}
console.log(`ok ${name} (max error ${worst.toExponential(2)}, device ${wg.deviceMs().toFixed(3)} ms)`);
wg.release();
process.exit(0);
