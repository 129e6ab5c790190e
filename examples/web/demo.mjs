// demo.mjs - the page's logic: loads the model that build.sh compiled (models/models.json
// lists the targets built), turns the drawing or an uploaded image into the model's input
// (1 x 1 x H x W, gray in [0, 1], white on black), runs it and shows the scores and the
// time per inference. window.kgenDemo is the hook the browser test drives:
//   await kgenDemo.ready
//   await kgenDemo.run(target, x)  -> {output: [...], ms, runs}   x: numbers, the input
//   await kgenDemo.runCanvas(target) -> the same, on what the canvas shows
const $ = (id) => document.getElementById(id);
const draw = $("draw"), seen = $("seen"), status = $("status");
const dctx = draw.getContext("2d", { willReadFrequently: true });
const labels = { js: "JavaScript", wasm: "WebAssembly", "wasm-simd": "WebAssembly SIMD" };
const modules = new Map();   // target -> the initialised module
let info = null;             // models.json
const times = {};            // target -> the last time per inference, ms
const fmt = (ms) => (ms < 1 ? ms.toFixed(4) : ms.toFixed(2));

function log(msg) {
    status.textContent = msg;
}

function clearCanvas() {
    dctx.fillStyle = "#000";
    dctx.fillRect(0, 0, draw.width, draw.height);
}

async function load(target) {
    if (!info.backends.includes(target))
        throw new Error(`target '${target}' was not built (models.json offers ${info.backends.join(", ")})`);
    if (!modules.has(target)) {
        const t0 = performance.now();
        const m = await import(`./models/${target}/${info.name}.mjs`);
        await m.init();
        modules.set(target, m);
        console.log(`${info.name} (${target}) loaded in ${(performance.now() - t0).toFixed(1)} ms`);
    }
    return modules.get(target);
}

// time per inference: a warm-up (10 runs and 100 ms at least, 2 s at most: the engine
// optimises the JS kernels only after a few calls), then the median of batches; a batch
// lasts ~2 ms or more, since browsers round performance.now() to 0.1 ms
function timeRuns(m, x) {
    const t0 = performance.now();
    let n = 0;
    while ((n < 10 || performance.now() - t0 < 100) && performance.now() - t0 < 2000) {
        m.run([x]);
        n++;
    }
    const batch = Math.max(1, Math.ceil(2 / Math.max((performance.now() - t0) / n, 1e-3)));
    const ms = [], start = performance.now();
    while (ms.length < 5 || (ms.length < 50 && performance.now() - start < 200)) {
        const t = performance.now();
        for (let i = 0; i < batch; i++)
            m.run([x]);
        ms.push((performance.now() - t) / batch);
    }
    ms.sort((a, b) => a - b);
    const k = ms.length;
    return { ms: k % 2 ? ms[k >> 1] : (ms[k / 2 - 1] + ms[k / 2]) / 2, runs: k * batch };
}

function show(target, y, t) {
    const p = Array.from(y), top = p.indexOf(Math.max(...p));
    const e = p.map((v) => Math.exp(v - p[top])), sum = e.reduce((a, b) => a + b, 0);
    $("pred").textContent = String(top);
    $("time").textContent = `${labels[target]}: ${fmt(t.ms)} ms per inference (${t.runs} runs)`;
    times[target] = t.ms;
    $("times").innerHTML = info.backends.filter((b) => b in times).map((b) => `<tr><td>${labels[b]}</td><td>${fmt(times[b])} ms</td></tr>`).join("");
    $("scores").innerHTML = p.map((v, i) => `<tr${i === top ? ' class="top"' : ""}><td>${i}</td>` +
        `<td><div class="bar" style="width:${(120 * e[i]).toFixed(1)}px"></div></td>` +
        `<td>${(100 * e[i] / sum).toFixed(1)}%</td><td>${v.toFixed(4)}</td></tr>`).join("");
}

async function run(target, x) {
    const m = await load(target);
    const v = m.inputInfo[0], T = { f32: Float32Array, f64: Float64Array }[v.dtype];
    if (!T)
        throw new Error(`the demo feeds f32 or f64 images, the model takes ${v.dtype}`);
    const input = T.from(x);
    paint(v.shape, input);
    const y = m.run([input])[0];
    const t = timeRuns(m, input);
    show(target, y, t);
    document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
    log(`${info.name} on ${labels[target]}: class ${$("pred").textContent}, ${fmt(t.ms)} ms per inference`);
    return { output: Array.from(y, Number), ms: t.ms, runs: t.runs };
}

// an input given as numbers, shown where the drawing's scaled copy goes (first channel)
function paint(shape, x) {
    const [, , h, w] = shape, sctx = seen.getContext("2d");
    seen.width = w;
    seen.height = h;
    const img = sctx.createImageData(w, h);
    for (let i = 0; i < h * w; i++) {
        const g = Math.max(0, Math.min(255, Math.round(255 * x[i])));
        img.data.set([g, g, g, 255], 4 * i);
    }
    sctx.putImageData(img, 0, 0);
}

// the drawing, scaled to the model's H x W: gray in [0, 1], one value per pixel and channel
function canvasInput(m) {
    const [, c, h, w] = m.inputInfo[0].shape;
    seen.width = w;
    seen.height = h;
    const sctx = seen.getContext("2d", { willReadFrequently: true });
    sctx.imageSmoothingEnabled = true;
    sctx.imageSmoothingQuality = "high";
    sctx.drawImage(draw, 0, 0, w, h);
    const px = sctx.getImageData(0, 0, w, h).data, x = new Float32Array(c * h * w);
    for (let k = 0; k < c; k++)
        for (let i = 0; i < h * w; i++)
            x[k * h * w + i] = (px[4 * i] + px[4 * i + 1] + px[4 * i + 2]) / (3 * 255);
    return x;
}

async function runCanvas(target) {
    const m = await load(target);
    return run(target, canvasInput(m));
}

// an uploaded picture, fitted into the canvas; dark-on-light pictures are inverted
async function upload(file) {
    const img = await createImageBitmap(file);
    clearCanvas();
    const s = Math.min(draw.width / img.width, draw.height / img.height);
    const w = img.width * s, h = img.height * s;
    dctx.drawImage(img, (draw.width - w) / 2, (draw.height - h) / 2, w, h);
    const d = dctx.getImageData(0, 0, draw.width, draw.height);
    let sum = 0;
    for (let i = 0; i < d.data.length; i += 4)
        sum += d.data[i] + d.data[i + 1] + d.data[i + 2];
    if (sum / (d.data.length / 4) / 765 > 0.5) {
        for (let i = 0; i < d.data.length; i += 4)
            for (let k = 0; k < 3; k++)
                d.data[i + k] = 255 - d.data[i + k];
        dctx.putImageData(d, 0, 0);
    }
}

function wireDrawing(onStroke) {
    let last = null;
    const at = (e) => {
        const r = draw.getBoundingClientRect();
        return [(e.clientX - r.left) * draw.width / r.width, (e.clientY - r.top) * draw.height / r.height];
    };
    draw.addEventListener("pointerdown", (e) => {
        draw.setPointerCapture(e.pointerId);
        last = at(e);
    });
    draw.addEventListener("pointermove", (e) => {
        if (!last)
            return;
        const p = at(e);
        dctx.strokeStyle = "#fff";
        dctx.lineWidth = draw.width / 12;
        dctx.lineCap = dctx.lineJoin = "round";
        dctx.beginPath();
        dctx.moveTo(...last);
        dctx.lineTo(...p);
        dctx.stroke();
        last = p;
    });
    const end = () => {
        if (last)
            onStroke();
        last = null;
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
    const sel = $("backend");
    for (const b of info.backends)
        sel.add(new Option(labels[b] ?? b, b));
    sel.value = info.backends.includes("wasm-simd") ? "wasm-simd" : info.backends[0];
    $("about").textContent = `Model: ${info.name}, compiled by kgen for ${info.backends.map((b) => labels[b] ?? b).join(", ")}. ` +
        "The committed test CNN has seeded random weights, not trained ones: its class is a fingerprint of the input, not a reading of the digit.";
    const act = (f) => f().catch((e) => log(`error: ${e.message}`));
    const runNow = () => act(() => runCanvas(sel.value));
    $("run").onclick = runNow;
    $("clear").onclick = clearCanvas;
    sel.onchange = runNow;
    $("file").onchange = (e) => e.target.files[0] && act(async () => {
        await upload(e.target.files[0]);
        await runCanvas(sel.value);
    });
    wireDrawing(runNow);
    await load(sel.value);
    log(`ready: ${info.name}, targets ${info.backends.join(", ")}`);
}

const ready = start();
ready.catch((e) => log(`error: ${e.message}`));
window.kgenDemo = { ready, run, runCanvas, get backends() { return info?.backends ?? []; } };
