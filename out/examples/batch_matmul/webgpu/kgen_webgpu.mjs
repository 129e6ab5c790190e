// kgen_webgpu.mjs - the WebGPU host of kgen's webgpu target: runs the tables of a generated
// NAME.mjs (its buffers, launches and run-time controls, as kgen_gpu.h describes them for
// the C hosts) on a GPUDevice, in browsers and in node.
//
//   createProgram(program, weights, {device}) -> {run(inputs), lastMs, release()}
//
// The device: options.device, else navigator.gpu in a browser, else (node) the Dawn module
// whose index.js $KGEN_NODE_WEBGPU names, else the npm package `webgpu`. Two storage buffers
// are bound to every entry point: mem (the arena, the inputs and the outputs) and wts (the
// weights, uploaded once); every element is one 32-bit word there, so the inputs are widened
// (bool, 8- and 16-bit types), narrowed (i64, u64: an error if a value does not fit in 32
// bits) or copied as they are, and the outputs converted back. One command encoder per run;
// a model with run-time Ifs and loops submits up to each condition and reads it back first.
// Device time comes from timestamp queries where the adapter has them (a run without reads
// back), else from the wall time between submit and done.
import { newTensor } from "./kgen_runtime.mjs";

const isNode = typeof process === "object" && !!(process.versions && process.versions.node);

async function nodeGPU() {
    const path = process.env.KGEN_NODE_WEBGPU;
    let mod;
    if (path) {
        const { pathToFileURL } = await import("node:url");
        mod = await import(pathToFileURL(path).href);
    } else {
        mod = await import("webgpu");
    }
    Object.assign(globalThis, mod.globals);
    return mod.create([]);
}

// the GPU object and adapters are kept alive here: Dawn's node module crashes when the
// GPU object behind a live device is garbage collected
const alive = [];

// the limits a program needs above WebGPU's defaults (a target given a larger
// -max-threads or -max-shared, a large arena), if the adapter has them
function limitsFor(adapter, program) {
    const bytes = Math.max(program.arenaWords, program.weightsWords) * 4, want = {};
    const most = (f) => program.launches.reduce((m, l) => Math.max(m, f(l)), 0);
    const needs = {
        maxStorageBufferBindingSize: [bytes, 134217728], maxBufferSize: [bytes, 268435456],
        maxComputeInvocationsPerWorkgroup: [most((l) => l.block[0] * l.block[1] * l.block[2]), 256],
        maxComputeWorkgroupSizeX: [most((l) => l.block[0]), 256], maxComputeWorkgroupSizeY: [most((l) => l.block[1]), 256],
        maxComputeWorkgroupSizeZ: [most((l) => l.block[2]), 64],
        maxComputeWorkgroupStorageSize: [most((l) => l.shared), 16384],
    };
    for (const [key, [need, base]] of Object.entries(needs)) {
        if (need > adapter.limits[key])
            throw new Error(`${program.name} needs ${key} ${need}, above the adapter's ${adapter.limits[key]}`);
        if (need > base)
            want[key] = need;
    }
    return want;
}

// A device for program (its limits; none given: WebGPU's defaults) and timestamp queries
// where the adapter has them.
export async function getDevice(program = null) {
    const gpu = typeof navigator === "object" && navigator.gpu ? navigator.gpu : isNode ? await nodeGPU() : null;
    if (!gpu)
        throw new Error("no WebGPU here (navigator.gpu is missing)");
    const adapter = await gpu.requestAdapter();
    alive.push(gpu, adapter);
    if (!adapter)
        throw new Error("no WebGPU adapter (a browser may need --enable-unsafe-webgpu; node needs a Vulkan driver)");
    const features = adapter.features.has("timestamp-query") ? ["timestamp-query"] : [];
    return adapter.requestDevice({ requiredFeatures: features, requiredLimits: program ? limitsFor(adapter, program) : {} });
}

// ---------------------------------------------------------------- conversions

// the packed types: bits per element, and whether their codes are signed
const packed = { i4: [4, true], u4: [4, false], i2: [2, true], u2: [2, false], f4e2m1: [4, false] };

// a tensor's elements as the words the GPU holds
function toWords(b, data) {
    const n = b.length;
    if (packed[b.dtype]) {
        const [bits, signed] = packed[b.dtype], per = 8 / bits, mask = (1 << bits) - 1, w = new Int32Array(n);
        for (let i = 0; i < n; i++) {
            const c = (data[(i / per) | 0] >> ((i % per) * bits)) & mask;
            w[i] = signed && c >> (bits - 1) ? c - (1 << bits) : c;
        }
        return new Uint32Array(w.buffer);
    }
    switch (b.dtype) {
    case "f32":
    case "i32":
    case "u32":
        return new Uint32Array(data.buffer.slice(data.byteOffset, data.byteOffset + n * 4));
    case "i8":
    case "i16":
        return new Uint32Array(Int32Array.from(data).buffer);
    case "i64":
    case "u64": {
        // (the 64-bit extremes, a Loop's "no bound" say, become the 32-bit ones, as kgen
        // narrows constants)
        const i64 = b.dtype === "i64", lo = i64 ? -2147483648n : 0n, hi = i64 ? 2147483647n : 4294967295n;
        const top = i64 ? 9223372036854775807n : 18446744073709551615n, bottom = i64 ? -9223372036854775808n : 0n;
        const w = new Uint32Array(n);
        for (let i = 0; i < n; i++) {
            const v = data[i] === top ? hi : data[i] === bottom ? lo : data[i];
            if (v < lo || v > hi)
                throw new Error(`${b.name}: element ${i} is ${data[i]}, which does not fit in 32 bits (the webgpu target narrows ${b.dtype} to 32 bits)`);
            w[i] = Number(BigInt.asUintN(32, v));
        }
        return w;
    }
    default:   // bool, u8, u16, f16 and bf16 bits
        return Uint32Array.from(data);
    }
}

// words read back as the tensor the caller gets
function fromWords(b, words) {
    const n = b.length, out = newTensor({ dtype: b.dtype, shape: [n] });
    if (packed[b.dtype]) {
        const [bits] = packed[b.dtype], per = 8 / bits, mask = (1 << bits) - 1;
        for (let i = 0; i < n; i++)
            out[(i / per) | 0] |= (words[i] & mask) << ((i % per) * bits);
        return out;
    }
    switch (b.dtype) {
    case "f32":
        out.set(new Float32Array(words.buffer, words.byteOffset, n));
        break;
    case "i32":
    case "i8":
    case "i16":
        out.set(new Int32Array(words.buffer, words.byteOffset, n));
        break;
    case "i64":
        for (let i = 0; i < n; i++)
            out[i] = BigInt(words[i] | 0);
        break;
    case "u64":
        for (let i = 0; i < n; i++)
            out[i] = BigInt(words[i]);
        break;
    case "bool":
        for (let i = 0; i < n; i++)
            out[i] = words[i] !== 0 ? 1 : 0;
        break;
    default:   // u8, u16, u32, f16, bf16
        for (let i = 0; i < n; i++)
            out[i] = words[i];
        break;
    }
    return out;
}

// ---------------------------------------------------------------- the program

export async function createProgram(program, weights, options = {}) {
    const device = options.device || (await getDevice(program));
    const U = GPUBufferUsage;
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ code: program.wgsl, label: program.name });
    const info = module.getCompilationInfo ? await module.getCompilationInfo() : { messages: [] };
    const errors = info.messages.filter((m) => m.type === "error");
    if (errors.length)
        throw new Error(`${program.name}: WGSL: ` + errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join("; "));
    const mem = device.createBuffer({ size: Math.max(program.arenaWords, 1) * 4, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC, label: "mem" });
    const wts = device.createBuffer({ size: Math.max(program.weightsWords, 1) * 4, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC, label: "wts" });
    if (weights.byteLength)
        device.queue.writeBuffer(wts, 0, weights);
    const storage = (binding, type) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } });
    const bgl = device.createBindGroupLayout({ entries: [storage(0, "storage"), storage(1, "read-only-storage")] });
    const layout = device.createPipelineLayout({ bindGroupLayouts: [bgl] });
    const bindGroup = device.createBindGroup({ layout: bgl, entries: [{ binding: 0, resource: { buffer: mem } }, { binding: 1, resource: { buffer: wts } }] });
    const pipelines = new Map();
    for (const l of program.launches)
        if (!pipelines.has(l.entry))
            pipelines.set(l.entry, device.createComputePipeline({ layout, compute: { module, entryPoint: l.entry } }));
    const err = await device.popErrorScope();
    if (err)
        throw new Error(`${program.name}: ${err.message}`);
    const inputs = program.buffers.filter((b) => b.kind === "input").sort((a, b) => a.index - b.index);
    const outputs = program.buffers.filter((b) => b.kind === "output").sort((a, b) => a.index - b.index);
    const outWords = outputs.reduce((n, b) => n + Math.max(b.length, 1), 0);
    const readback = device.createBuffer({ size: Math.max(outWords, 1) * 4, usage: U.MAP_READ | U.COPY_DST });
    const probe = device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST });
    const timed = device.features.has("timestamp-query") && program.controls.length === 0;
    const queries = timed ? device.createQuerySet({ type: "timestamp", count: 2 }) : null;
    const stamps = timed ? device.createBuffer({ size: 16, usage: U.QUERY_RESOLVE | U.COPY_SRC }) : null;
    const stampsRead = timed ? device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST }) : null;

    const self = { lastMs: 0, device };
    let encoder = null, pass = null;
    const begin = () => {
        if (!encoder) {
            encoder = device.createCommandEncoder();
            pass = encoder.beginComputePass(timed ? { timestampWrites: { querySet: queries, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
            pass.setBindGroup(0, bindGroup);
        }
    };
    // element 0 of buffer b (a word), after every launch before it finished (the copy goes
    // in the run's pending encoder, one submission)
    const word = async (bi) => {
        const b = program.buffers[bi];
        begin();
        pass.end();
        encoder.copyBufferToBuffer(b.binding ? wts : mem, b.word * 4, probe, 0, 4);
        device.queue.submit([encoder.finish()]);
        encoder = pass = null;
        await probe.mapAsync(GPUMapMode.READ);
        const v = new Int32Array(probe.getMappedRange(0, 4))[0];
        probe.unmap();
        return v;
    };
    // kgen_gpu_next: the launch after cursor.ran (past branches not taken, back round loops)
    const controls = program.controls, nl = program.launches.length;
    const next = async (c) => {
        let i = c.ran + 1;
        if (c.ran < 0)
            c.again = -1;
        controls.forEach((q, k) => {
            if (q.loop && c.ran >= 0 && c.ran === q.last) {
                c.iters[k]++;
                i = q.first;
                c.again = k;
            }
        });
        for (;;) {
            if (i >= nl)
                return nl;
            let skip = false;
            for (let pass = 0; pass < 2 && !skip; pass++)
                for (let k = 0; k < controls.length && !skip; k++) {
                    const q = controls[k];
                    if (q.first !== i || q.loop !== (pass ? 0 : 1))
                        continue;
                    const t = (await word(q.cond)) !== 0;
                    if (q.loop) {
                        // (the trip count is the Loop's input M: read once as the loop starts)
                        if (k !== c.again) {
                            c.iters[k] = 0;
                            c.bound[k] = q.trip >= 0 ? await word(q.trip) : q.tripCount;
                        }
                        skip = !t || (c.bound[k] >= 0 && c.iters[k] >= c.bound[k]);
                    } else {
                        skip = t !== (q.value !== 0);
                    }
                    if (skip)
                        i = q.last + 1;
                }
            c.again = -1;
            if (!skip)
                return i;
        }
    };

    self.run = async (xs) => {
        inputs.forEach((b, i) => device.queue.writeBuffer(mem, b.word * 4, toWords(b, xs[i])));
        const t0 = performance.now();
        const cursor = { ran: -1, again: -1, iters: controls.map(() => 0), bound: controls.map(() => -1) };
        for (let i = controls.length ? await next(cursor) : 0; i < nl; ) {
            const l = program.launches[i];
            begin();
            pass.setPipeline(pipelines.get(l.entry));
            pass.dispatchWorkgroups(l.grid[0], l.grid[1], l.grid[2]);
            cursor.ran = i;
            i = controls.length ? await next(cursor) : i + 1;
        }
        begin();   // (an empty pass when nothing is left: the encoder carries the copies)
        pass.end();
        let at = 0;
        for (const b of outputs) {
            encoder.copyBufferToBuffer(mem, b.word * 4, readback, at * 4, Math.max(b.length, 1) * 4);
            at += Math.max(b.length, 1);
        }
        if (timed) {
            encoder.resolveQuerySet(queries, 0, 2, stamps, 0);
            encoder.copyBufferToBuffer(stamps, 0, stampsRead, 0, 16);
        }
        device.queue.submit([encoder.finish()]);
        encoder = pass = null;
        await readback.mapAsync(GPUMapMode.READ);
        const words = new Uint32Array(readback.getMappedRange().slice(0));
        readback.unmap();
        self.lastMs = performance.now() - t0;
        if (timed) {
            await stampsRead.mapAsync(GPUMapMode.READ);
            const t = new BigUint64Array(stampsRead.getMappedRange().slice(0));
            stampsRead.unmap();
            if (t[1] > t[0])
                self.lastMs = Number(t[1] - t[0]) / 1e6;
        }
        at = 0;
        return outputs.map((b) => {
            const y = fromWords(b, words.subarray(at, at + b.length));
            at += Math.max(b.length, 1);
            return y;
        });
    };
    self.release = () => {
        for (const b of [mem, wts, readback, probe, stamps, stampsRead])
            if (b)
                b.destroy();
        if (queries)
            queries.destroy();
    };
    return self;
}

