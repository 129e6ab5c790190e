// ort_run.mjs - part of `make bench` (tests/bench/refs.sh, zoo.sh, zoo_wasm.sh, js.sh, convt.sh,
// movement.sh): the onnxruntime reference for a whole model. Runs MODEL on the CPU execution provider of onnxruntime-node with one
// intra-op and one inter-op thread, sequential execution, every graph optimisation, and
// prints the median time of RUNS runs after WARMUP warm-up runs:
//
//     node tests/bench/ort_run.mjs MODEL.onnx IN0.npy [IN1.npy ...] [--runs N] [--warmup N]
//          [--threads N] [--out OUT.npy] [--ort DIR] [--opt all|disabled] [--backend node|web]
//
// prints "ort=VERSION median_ms=... min_ms=... runs=N threads=N cpu_ms=..." (cpu_ms: the
// process's CPU time per timed run, all its threads: steadier than wall time on a busy
// machine, and comparable with kgen's --profile clock=cpu sums). --out writes the first
// output as .npy (to compare with kgen's). onnxruntime-node is looked up in DIR/node_modules
// (--ort DIR, else $ORT_DIR, else build/bench/ort), where refs.sh installs it with npm.
// --opt disabled turns the graph optimisations off (--no-opt says the same): take reference
// outputs so, since some of onnxruntime's fusions are wrong (Pad + MaxPool).
// --backend web (or --web) runs onnxruntime-web's WebAssembly backend instead (SIMD128, ort.env.wasm.numThreads
// = --threads, proxy off: the figure to hold kgen's --target wasm against), looked up in DIR
// (--ort DIR, else $ORTWEB_DIR, else build/bench/ortweb); it prints "ort-web=VERSION ...".
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { readNpy, writeNpy } from "../../templates/kgen_io.mjs";

const args = process.argv.slice(2);
const opt = { runs: 50, warmup: 5, threads: 1, out: null, ort: null, web: false, opt: "all" };
const files = [];
for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--runs" || a === "--warmup" || a === "--threads") {
        const n = Number(args[++i]);
        if (!Number.isInteger(n) || n < (a === "--warmup" ? 0 : 1))
            usage(`${a} needs a count`);
        opt[a.slice(2)] = n;
    } else if (a === "--out" || a === "--ort") {
        if (i + 1 >= args.length)
            usage(`${a} needs a path`);
        opt[a.slice(2)] = args[++i];
    } else if (a === "--web") {
        opt.web = true;
    } else if (a === "--no-opt") {
        opt.opt = "disabled";
    } else if (a === "--opt" || a === "--backend") {
        const v = args[++i];
        if (!(a === "--opt" ? ["all", "disabled"] : ["node", "web"]).includes(v))
            usage(`${a}: '${v}' is none of ${a === "--opt" ? "all, disabled" : "node, web"}`);
        if (a === "--opt")
            opt.opt = v;
        else
            opt.web = v === "web";
    } else if (a.startsWith("-")) {
        usage(`unknown option ${a}`);
    } else {
        files.push(a);
    }
}
if (files.length < 1)
    usage("no model given");

function usage(msg) {
    console.error(`ort_run: ${msg}\nusage: node ort_run.mjs MODEL.onnx IN0.npy ... [--runs N] [--warmup N] ` +
        "[--threads N] [--out OUT.npy] [--ort DIR] [--opt all|disabled] [--backend node|web]");
    process.exit(2);
}

const pkg = opt.web ? "onnxruntime-web" : "onnxruntime-node";
opt.ort ??= opt.web ? process.env.ORTWEB_DIR || "build/bench/ortweb" : process.env.ORT_DIR || "build/bench/ort";
let ort;
try {
    ort = createRequire(resolve(opt.ort) + "/")(pkg);
} catch (e) {
    console.error(`ort_run: ${pkg} not found under ${opt.ort}/node_modules (${e.message.split("\n")[0]})`);
    process.exit(3);
}
if (opt.web) {
    ort.env.wasm.numThreads = opt.threads;
    ort.env.wasm.proxy = false;
}

const session = await ort.InferenceSession.create(opt.web ? new Uint8Array(readFileSync(files[0])) : files[0], {
    executionProviders: [opt.web ? "wasm" : "cpu"],
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: opt.opt,
});
if (files.length - 1 !== session.inputNames.length)
    usage(`the model takes ${session.inputNames.length} inputs, ${files.length - 1} given`);
const ortTypes = { f32: "float32", f64: "float64", i64: "int64", i32: "int32", u8: "uint8", i8: "int8", bool: "bool" };
const feeds = {};
session.inputNames.forEach((name, i) => {
    const t = readNpy(readFileSync(files[i + 1]));
    if (!ortTypes[t.dtype])
        usage(`${files[i + 1]}: dtype ${t.dtype} not supported here`);
    feeds[name] = new ort.Tensor(ortTypes[t.dtype], t.data, t.shape);
});

let result;
for (let i = 0; i < opt.warmup; i++)
    result = await session.run(feeds);
const times = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < opt.runs; i++) {
    const t0 = performance.now();
    result = await session.run(feeds);
    times.push(performance.now() - t0);
}
const cpu = process.cpuUsage(cpu0);   // microseconds, every thread of the process
const cpuMs = (cpu.user + cpu.system) / 1000 / opt.runs;
times.sort((a, b) => a - b);
const n = times.length;
const median = n % 2 ? times[n >> 1] : (times[n / 2 - 1] + times[n / 2]) / 2;
if (opt.out) {
    const y = result[session.outputNames[0]];
    if (y.type !== "float32")
        usage(`--out: the first output is ${y.type}, only float32 is written`);
    writeFileSync(opt.out, writeNpy({ dtype: "f32", shape: y.dims.map(Number), data: y.data }));
}
console.log(`${opt.web ? "ort-web" : "ort"}=${ort.env.versions?.common ?? "?"} median_ms=${median.toFixed(6)} min_ms=${times[0].toFixed(6)} ` +
    `runs=${n} threads=${opt.threads} cpu_ms=${cpuMs.toFixed(6)}`);
