// demo.mjs - the page's logic: loads the digit model that build.sh compiled for each target
// (models/models.json: the targets built and why the others were not), turns the drawing,
// an uploaded picture or a held-out digit into the model's 8 x 8 input (preprocess.mjs: the
// way the training data was made), runs it on JavaScript, WebAssembly SIMD128 and WebGPU
// side by side and shows each one's digit, probability and time per inference.
// window.kgenDemo is the hook the browser test (tests/browser/check.mjs) drives:
//   await kgenDemo.ready
//   kgenDemo.targets            the targets that run here; kgenDemo.unavailable: {target: reason}
//   kgenDemo.notes              {target: a note} (webgpu: the adapter, and whether its times mean much)
//   kgenDemo.heldout            {labels, digits} from models.json
//   await kgenDemo.infer(target, cells)  -> the logits (numbers), nothing shown or timed
//   kgenDemo.showDigit(cells)   paints 64 cells (0..16) on the drawing canvas
//   await kgenDemo.runCanvas({timed})  -> {cells, results: {target: {output, ms, runs, deviceMs}}}:
//                               the canvas through the page's own path, every target, shown
import { CELLS, digitCells, grayOf, inkOf, penWidthFor } from "./preprocess.mjs";

const $ = (id) => document.getElementById(id);
const draw = $("draw"), seen = $("seen");
const dctx = draw.getContext("2d", { willReadFrequently: true });
const COLUMNS = [["js", "JavaScript"], ["wasm-simd", "WebAssembly SIMD128"], ["webgpu", "WebGPU"]];
const label = (t) => (COLUMNS.find((c) => c[0] === t) ?? [t, t])[1];
const modules = new Map();     // target -> its initialised module
const unavailable = {};        // target -> why it does not run here
const last = {};               // target -> {output, ms, runs, deviceMs} of the latest run
const notes = {};              // target -> a line under its name (the WebGPU adapter)
let info = null;               // models.json
let heldoutAt = 0;             // the next held-out digit the button paints
let strokes = [];              // the drawing: polylines of canvas points; [] for a picture
const PEN = draw.width / 10;    // the pen while drawing, before the width is normalised
const fmt = (ms) => (ms < 1 ? ms.toFixed(4) : ms.toFixed(2));

function log(msg) {
    $("status").textContent = msg;
}

function clearCanvas() {
    dctx.fillStyle = "#000";
    dctx.fillRect(0, 0, draw.width, draw.height);
}

const canvasCells = () => digitCells(grayOf(dctx.getImageData(0, 0, draw.width, draw.height).data), draw.width, draw.height);

// one polyline with round caps and joins (a single point: a dot)
function strokeLine(s, width) {
    dctx.strokeStyle = "#fff";
    dctx.lineWidth = width;
    dctx.lineCap = dctx.lineJoin = "round";
    dctx.beginPath();
    dctx.moveTo(...s[0]);
    for (const p of s.length > 1 ? s.slice(1) : s)
        dctx.lineTo(...p);
    dctx.stroke();
}

// the drawing redrawn with the pen width that gives the training digits' ink
// (preprocess.mjs penWidthFor): what the canvas then shows is what the model reads
function normaliseStrokes() {
    let width = PEN;
    for (let round = 0; round < 6; round++) {
        clearCanvas();
        for (const s of strokes)
            strokeLine(s, width);
        const next = penWidthFor(width, inkOf(canvasCells().cells), draw.width / 4);
        if (next === null)
            break;
        width = next;
    }
}

const softmax = (y) => {
    const top = Math.max(...y), e = y.map((v) => Math.exp(v - top)), s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
};
const argmax = (y) => y.indexOf(Math.max(...y));

// the WebGPU adapter, for the column's note: SwiftShader is a CPU emulation of a GPU
async function adapterNote() {
    try {
        const a = await navigator.gpu.requestAdapter();
        const i = a?.info ?? {};
        const name = [i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(" ") || "unknown adapter";
        return /swiftshader/i.test(name) ? `${name}: a CPU emulation, its time says nothing about GPUs` : name;
    } catch {
        return "";
    }
}

// loads every target models.json offers; one that fails to load is unavailable, with why
async function loadAll() {
    for (const [t] of COLUMNS) {
        if (!info.backends.includes(t)) {
            unavailable[t] = info.unavailable?.[t] ?? "not built by examples/web/build.sh";
            continue;
        }
        if (t === "webgpu" && !navigator.gpu) {
            unavailable[t] = "this browser has no WebGPU (navigator.gpu is missing; Chromium on Linux: --enable-unsafe-webgpu)";
            continue;
        }
        try {
            const t0 = performance.now();
            const m = await import(`./models/${t}/${info.name}.mjs`);
            await m.init();
            const v = m.inputInfo[0];
            if (v.dtype !== "f32" || v.shape.reduce((a, b) => a * b, 1) !== CELLS * CELLS)
                throw new Error(`the model takes ${v.dtype}[${v.shape}], the page makes f32[1, 1, ${CELLS}, ${CELLS}]`);
            modules.set(t, m);
            if (t === "webgpu")
                notes[t] = await adapterNote();
            console.log(`${info.name} (${t}) loaded in ${(performance.now() - t0).toFixed(1)} ms`);
        } catch (e) {
            unavailable[t] = `failed to load: ${e.message}`;
        }
    }
}

// one inference; the JS and WASM modules answer at once, the WebGPU one with a promise
async function infer(target, cells) {
    const m = modules.get(target);
    if (!m)
        throw new Error(`target '${target}' does not run here: ${unavailable[target] ?? "unknown target"}`);
    const y = await m.run([Float32Array.from(cells)]);
    return Array.from(y[0], Number);
}

// time per inference: a warm-up (5 runs and 50 ms at least, 1 s at most: the engine optimises
// the JS kernels only after a few calls), then the median of batches; a batch lasts ~2 ms or
// more, since browsers round performance.now() to 0.1 ms. Synchronous modules are timed
// without an await per run.
async function timeRuns(m, x) {
    const first = m.run([x]);
    const sync = typeof first?.then !== "function";
    await first;
    const runs = sync ? (n) => { for (let i = 0; i < n; i++) m.run([x]); }
        : async (n) => { for (let i = 0; i < n; i++) await m.run([x]); };
    const t0 = performance.now();
    let n = 0;
    while ((n < 5 || performance.now() - t0 < 50) && performance.now() - t0 < 1000) {
        await runs(1);
        n++;
    }
    const batch = Math.max(1, Math.ceil(2 / Math.max((performance.now() - t0) / n, 1e-3)));
    const ms = [], start = performance.now();
    while (ms.length < 5 || (ms.length < 30 && performance.now() - start < 150)) {
        const t = performance.now();
        await runs(batch);
        ms.push((performance.now() - t) / batch);
    }
    ms.sort((a, b) => a - b);
    const k = ms.length;
    return { ms: k % 2 ? ms[k >> 1] : (ms[k / 2 - 1] + ms[k / 2]) / 2, runs: k * batch };
}

// the 64 cells as the 8 x 8 picture the model sees
function paintSeen(cells) {
    const sctx = seen.getContext("2d"), img = sctx.createImageData(CELLS, CELLS);
    for (let i = 0; i < CELLS * CELLS; i++) {
        const g = Math.max(0, Math.min(255, Math.round(255 * cells[i] / 16)));
        img.data.set([g, g, g, 255], 4 * i);
    }
    sctx.putImageData(img, 0, 0);
}

// the three columns: digit, probability, time per inference; or why a target is missing
function showTargets() {
    const cols = COLUMNS.map(([t]) => t);
    const head = cols.map((t) => `<th>${label(t)}${notes[t] ? `<div class="note">${notes[t]}</div>` : ""}</th>`).join("");
    const cell = (t, f, cls = "") => {
        if (unavailable[t])
            return "";
        return `<td class="${cls}">${last[t] ? f(last[t]) : "-"}</td>`;
    };
    const na = (t) => (unavailable[t] ? `<td class="na" rowspan="5">unavailable: ${unavailable[t]}</td>` : "");
    const row = (name, f, cls, first) => `<tr><td>${name}</td>${cols.map((t) => (first ? na(t) : "") + cell(t, f, cls)).join("")}</tr>`;
    const p = (r) => softmax(r.output)[argmax(r.output)];
    $("targets").innerHTML = `<tr><th></th>${head}</tr>` +
        row("digit", (r) => String(argmax(r.output)), "digit", true) +
        row("probability", (r) => `${(100 * p(r)).toFixed(1)}%`, "", false) +
        row("time per inference", (r) => (r.ms === undefined ? "-" : `${fmt(r.ms)} ms`), "", false) +
        row("runs timed", (r) => (r.runs === undefined ? "-" : String(r.runs)), "", false) +
        row("device time", (r) => (r.deviceMs ? `${fmt(r.deviceMs)} ms` : "-"), "", false);
}

// the prediction (the first target's scores), and whether the targets agree
function showPrediction(results) {
    const ts = Object.keys(results);
    if (!ts.length)
        return;
    const y = results[ts[0]].output, p = softmax(y), top = argmax(y);
    $("pred").textContent = String(top);
    $("prob").textContent = `probability ${(100 * p[top]).toFixed(1)}% (${label(ts[0])})`;
    const digits = ts.map((t) => argmax(results[t].output));
    const same = digits.every((d) => d === top);
    $("agree").textContent = ts.length < 2 ? "" : same ? `${ts.map(label).join(", ")} agree`
        : `the targets disagree: ${ts.map((t, i) => `${label(t)} ${digits[i]}`).join(", ")}`;
    $("agree").className = same ? "note" : "warn";
    $("scores").innerHTML = y.map((v, i) => `<tr${i === top ? ' class="top"' : ""}><td>${i}</td>` +
        `<td><div class="bar" style="width:${(120 * p[i]).toFixed(1)}px"></div></td>` +
        `<td>${(100 * p[i]).toFixed(1)}%</td><td>${v.toFixed(3)}</td></tr>`).join("");
}

// the canvas through the page's path (preprocess.mjs), on every target; timed unless told
async function runCanvas({ timed = true } = {}) {
    const { cells } = canvasCells();
    paintSeen(cells);
    const results = {};
    for (const t of modules.keys()) {
        const output = await infer(t, cells);
        results[t] = { output };
        const m = modules.get(t);
        if (timed)
            Object.assign(results[t], await timeRuns(m, Float32Array.from(cells)));
        if (typeof m.deviceMs === "function" && m.deviceMs() > 0)
            results[t].deviceMs = m.deviceMs();    // the WebGPU module's: the last run on the device
        last[t] = results[t];
        showTargets();
        showPrediction(results);
        await new Promise((r) => setTimeout(r, 0));    // let the page paint between targets
    }
    document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
    const t = Object.keys(results)[0];
    log(t ? `read ${argmax(results[t].output)} on ${Object.keys(results).map(label).join(", ")}` : "no target runs here");
    return { cells: Array.from(cells), results };
}

// 64 cells (0..16) painted on the canvas, one square of whole pixels per cell
function showDigit(cells) {
    strokes = [];
    clearCanvas();
    const s = draw.width / CELLS;
    for (let i = 0; i < CELLS * CELLS; i++) {
        const g = Math.max(0, Math.min(255, Math.round(255 * cells[i] / 16)));
        dctx.fillStyle = `rgb(${g}, ${g}, ${g})`;
        dctx.fillRect((i % CELLS) * s, Math.floor(i / CELLS) * s, s, s);
    }
}

// an uploaded picture, fitted into the canvas; dark-on-light pictures are inverted
async function upload(file) {
    const img = await createImageBitmap(file);
    strokes = [];
    clearCanvas();
    const s = Math.min(draw.width / img.width, draw.height / img.height);
    const w = img.width * s, h = img.height * s;
    dctx.drawImage(img, (draw.width - w) / 2, (draw.height - h) / 2, w, h);
    const d = dctx.getImageData(0, 0, draw.width, draw.height);
    const gray = grayOf(d.data);
    if (gray.reduce((a, b) => a + b, 0) / gray.length > 0.5) {
        for (let i = 0; i < d.data.length; i += 4)
            for (let k = 0; k < 3; k++)
                d.data[i + k] = 255 - d.data[i + k];
        dctx.putImageData(d, 0, 0);
    }
}

function wireDrawing(onStroke) {
    let prev = null;
    const at = (e) => {
        const r = draw.getBoundingClientRect();
        return [(e.clientX - r.left) * draw.width / r.width, (e.clientY - r.top) * draw.height / r.height];
    };
    draw.addEventListener("pointerdown", (e) => {
        draw.setPointerCapture(e.pointerId);
        prev = at(e);
        if (!strokes.length)
            clearCanvas();     // a new drawing replaces a picture
        strokes.push([prev]);
        $("source").textContent = "your drawing";
    });
    draw.addEventListener("pointermove", (e) => {
        if (!prev)
            return;
        const p = at(e);
        strokeLine([prev, p], PEN);
        strokes[strokes.length - 1].push(p);
        prev = p;
    });
    const end = () => {
        if (prev) {
            normaliseStrokes();
            onStroke();
        }
        prev = null;
    };
    draw.addEventListener("pointerup", end);
    draw.addEventListener("pointercancel", end);
}

async function start() {
    clearCanvas();
    const r = await fetch("models/models.json");
    if (!r.ok)
        throw new Error(`models/models.json: ${r.status} (run make web-demo, which builds the models)`);
    info = await r.json();
    await loadAll();
    showTargets();
    const act = (f) => f().catch((e) => log(`error: ${e.message}`));
    const runNow = () => act(() => runCanvas());
    $("clear").onclick = () => {
        strokes = [];
        clearCanvas();
        $("source").textContent = "";
    };
    $("heldout").onclick = () => act(async () => {
        const i = heldoutAt++ % info.heldout.labels.length;
        showDigit(info.heldout.digits[i]);
        $("source").textContent = `held-out digit ${i + 1} of ${info.heldout.labels.length}, labelled ${info.heldout.labels[i]}`;
        await runCanvas();
    });
    $("file").onchange = (e) => e.target.files[0] && act(async () => {
        await upload(e.target.files[0]);
        $("source").textContent = `picture ${e.target.files[0].name}`;
        await runCanvas();
    });
    wireDrawing(runNow);
    $("about").textContent = `Model: ${info.name} (tests/models/digits: trained by train.py, accuracy in accuracy.txt), ` +
        `compiled by kgen for ${info.backends.map(label).join(", ")}.`;
    const off = Object.keys(unavailable);
    log(`ready: ${[...modules.keys()].map(label).join(", ")}` + (off.length ? `; unavailable: ${off.map(label).join(", ")}` : ""));
}

const ready = start();
ready.catch((e) => log(`error: ${e.message}`));
window.kgenDemo = {
    ready, infer, runCanvas, showDigit,
    get targets() { return [...modules.keys()]; },
    get unavailable() { return { ...unavailable }; },
    get notes() { return { ...notes }; },
    get heldout() { return info?.heldout; },
};
