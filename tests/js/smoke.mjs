// smoke.mjs MODULE NAME - run a generated kernel module (kgen --target js on a .kg file) on
// random inputs: every parameter array is made from the kernel's header comment; the
// outputs must be finite. Exit 1 with a reason otherwise.
import fs from "node:fs";
import { pathToFileURL } from "node:url";

const [path, name] = process.argv.slice(2);
const src = fs.readFileSync(path, "utf8");
const m = await import(pathToFileURL(path));
const fn = m[name] ?? Object.values(m).find((v) => typeof v === "function");
// " * A: Float32Array f32[64, 32]" lines of the header comment
const params = [...src.matchAll(/^ \* (\w+): (\w+) \w+\[([\d, ]*)\]( \*\/)?$/gm)].map((x) => ({
    name: x[1], T: globalThis[x[2]], n: x[3].split(",").filter((s) => s.trim()).reduce((a, b) => a * Number(b), 1),
}));
let seed = 1;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
const args = params.map((p) => {
    const a = new p.T(p.n);
    for (let i = 0; i < p.n; i++) a[i] = p.T === BigInt64Array ? BigInt(Math.round(rnd() * 4)) : rnd();
    return a;
});
const ws = m.WORKSPACE_BYTES ? new ArrayBuffer(m.WORKSPACE_BYTES) : null;
fn(...args, ws);
for (const [i, a] of args.entries())
    for (const v of a)
        if (typeof v === "number" && !Number.isFinite(v)) {
            console.log(`parameter ${params[i].name} holds ${v} after the run`);
            process.exit(1);
        }
