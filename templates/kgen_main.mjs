// kgen_main.mjs - the command-line runner of a generated JavaScript or WebAssembly model,
// with the C runner's contract (kgen_main.h); NAME_main.mjs calls main(model, argv):
//
//   node NAME_main.mjs IN0 [IN1 ...] [-o OUTDIR]   reads the inputs (.npy or ONNX .pb) in the
//                         order of inputInfo, checks dtype and shape, runs the model and
//                         writes OUTDIR/output_0.npy ...; without -o prints the first values
//   node NAME_main.mjs --bench N IN0 ...   one warm-up run, then N timed runs; prints
//                         "median_ms=... min_ms=... mean_ms=... runs=N"
//   node NAME_main.mjs --info              the inputs and outputs with their shapes
//
// Exit status: 0 on success, 1 for a file that cannot be read or written, an input that does
// not match or a model error, 2 for a usage error.
import { packInput, readTensorFile, writeNpy } from "./kgen_io.mjs";
import { element, numel } from "./kgen_runtime.mjs";

const type = (v) => `${v.dtype}[${v.shape.join(", ")}]`;

export async function main(model, argv) {
    const name = model.name;
    let bench = 0, outdir = null;
    const paths = [];
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--help" || a === "-h") {
            console.log(`usage: ${name} INPUTS [-o OUTDIR] | --bench N INPUTS | --info`);
            model.inputInfo.forEach((v) => console.log(`  '${v.name}': ${type(v)}`));
            return 0;
        } else if (a === "--info") {
            console.log(`${name}: ${model.inputInfo.length} inputs, ${model.outputInfo.length} outputs, arena ${model.ARENA_BYTES} bytes`);
            model.inputInfo.forEach((v, k) => console.log(`input ${k} '${v.name}': ${type(v)} (graph input ${v.graphIndex})`));
            model.outputInfo.forEach((v, k) => console.log(`output ${k} '${v.name}': ${type(v)}`));
{{INFO_DIMS}}            return 0;
        } else if (a === "--bench") {
            bench = Number(argv[++i]);
            if (!Number.isInteger(bench) || bench < 1) {
                console.error(`${name}: --bench needs a run count (1 or more), not '${argv[i]}'`);
                return 2;
            }
        } else if (a === "-o") {
            outdir = argv[++i];
            if (!outdir) {
                console.error(`${name}: -o needs a directory`);
                return 2;
            }
        } else if (a.startsWith("-") && a !== "-") {
            console.error(`${name}: unknown option '${a}'`);
            return 2;
        } else {
            paths.push(a);
        }
    }
    if (paths.length !== model.inputInfo.length) {
        console.error(`${name}: ${paths.length} inputs given, the model takes ${model.inputInfo.length}`);
        return 2;
    }
    const inputs = [];
    for (let i = 0; i < paths.length; i++) {
        const v = model.inputInfo[i];
        let t;
        try {
            t = packInput(await readTensorFile(paths[i]), v.dtype);   // (i4, u4, i2, u2 from .npy)
        } catch (e) {
            console.error(`${name}: input ${i} '${v.name}': ${paths[i]}: ${e.message}`);
            return 1;
        }
        if (t.dtype !== v.dtype || t.shape.length !== v.shape.length || t.shape.some((d, k) => d !== v.shape[k]{{ANY_EXTENT}})) {
            console.error(`${name}: input ${i} '${v.name}' (${paths[i]}): expected ${type(v)}, got ${type(t)}`);
            return 1;
        }
        inputs.push({{INPUT}});
    }
{{CHECK_DIMS}}    let outputs;
    try {
        await model.init();
        outputs = {{AWAIT}}model.run(inputs);
        if (bench) {
            const ms = [];
            for (let r = 0; r < bench; r++) {
                const t0 = performance.now();
                {{AWAIT}}model.run(inputs);
                ms.push(performance.now() - t0);
            }
            ms.sort((a, b) => a - b);
            const median = ms.length % 2 ? ms[ms.length >> 1] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
            const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
            console.log(`median_ms=${median.toFixed(6)} min_ms=${ms[0].toFixed(6)} mean_ms=${mean.toFixed(6)} runs=${bench}`);
{{DEVICE_MS}}            return 0;
        }
    } catch (e) {
        // the module's own errors already begin with the model's name
        console.error(e.message.startsWith(`${name}: `) ? e.message : `${name}: ${e.message}`);
        return 1;
    }
    if (outdir !== null) {
        const fs = await import("node:fs/promises");
        try {
            await fs.mkdir(outdir, { recursive: true });
            for (let i = 0; i < outputs.length; i++) {
                const v = {{OUTPUT_INFO}};
                await fs.writeFile(`${outdir}/output_${i}.npy`, writeNpy({ dtype: v.dtype, shape: v.shape, data: outputs[i]{{DATA}} }));
            }
        } catch (e) {
            console.error(`${name}: ${e.message}`);
            return 1;
        }
        return 0;
    }
    outputs.forEach((y, i) => {
        const v = {{OUTPUT_INFO}}, n = Math.min(numel(v), 8);
        const first = Array.from({ length: n }, (_, k) => element(v.dtype, y{{DATA}}, k));
        console.log(`output ${i} '${v.name}': ${type(v)} = ${first.join(" ")}${numel(v) > n ? " ..." : ""}`);
    });
    return 0;
}
