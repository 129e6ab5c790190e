// check.mjs URL MODEL_DIR OUTDIR SHOT.png - the browser test's driver (tests/browser.sh):
// headless Chromium (playwright-core, Debian's /usr/bin/chromium or $CHROMIUM, WebGPU on
// through --enable-unsafe-webgpu) loads the digit demo at URL and checks, for every target
// the page runs (kgenDemo.targets), on the held-out digits of MODEL_DIR (heldout.npy, with
// heldout_labels.npy):
//   1. direct: each digit's 64 cells through kgenDemo.infer; the logits go to
//      OUTDIR/TARGET/heldout_logits.npy (browser.sh compares them with torch's,
//      heldout_logits.npy) and each prediction must be the label;
//   2. canvas: each digit painted on the drawing canvas and read back through the page's
//      own preprocessing (kgenDemo.runCanvas): the prediction must be the label on every
//      target; the logits go to OUTDIR/TARGET/canvas_logits.npy (browser.sh checks that the
//      targets agree);
//   3. drawn: digits drawn with the mouse (the strokes below), read through the page's
//      controls: the page must show the digit drawn, on every target, with a time;
//      (each drawing, as the page redrew it, goes to OUTDIR/drawn_DIGIT.png);
//   4. upload: the last drawing uploaded as a PNG through the file input: the same digit.
// Saves a screenshot of the page (the last drawn digit, timed) to SHOT.png. Prints
// "targets: ...", "unavailable TARGET: reason", "ok TARGET ..." lines and "FAIL ..." lines;
// exit 1 on a failure, 2 when the browser cannot start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { readNpy, writeNpy } from "../../templates/kgen_io.mjs";

const require = createRequire(path.resolve("package.json"));
const { chromium } = require("playwright-core");
const [url, modelDir, outdir, shot] = process.argv.slice(2);
const read = (f) => readNpy(new Uint8Array(fs.readFileSync(path.join(modelDir, f))));
const heldout = read("heldout.npy"), labels = Array.from(read("heldout_labels.npy").data, Number);
const digits = labels.map((_, i) => Array.from(heldout.data.subarray(64 * i, 64 * i + 64)));
let failed = 0;
const fail = (msg) => {
    console.log(`FAIL ${msg}`);
    failed++;
};
const argmax = (y) => y.indexOf(Math.max(...y));
const save = (t, file, rows) => {
    fs.mkdirSync(`${outdir}/${t}`, { recursive: true });
    fs.writeFileSync(`${outdir}/${t}/${file}`, writeNpy({ dtype: "f32", shape: [rows.length, rows[0].length], data: Float32Array.from(rows.flat()) }));
};

// digits drawn with the mouse, as polylines in canvas fractions (x right, y down), one
// array per stroke; the digit is what a person drawing those lines means
const arc = (cx, cy, rx, ry, a0, a1, n = 24) =>
    Array.from({ length: n + 1 }, (_, i) => {
        const a = (a0 + (a1 - a0) * i / n) * Math.PI / 180;
        return [cx + rx * Math.cos(a), cy + ry * Math.sin(a)];
    });
const DRAWN = [
    { digit: 0, strokes: [arc(0.5, 0.5, 0.22, 0.33, -90, 270)] },
    { digit: 1, strokes: [[[0.38, 0.28], [0.52, 0.15], [0.52, 0.85]]] },
    { digit: 2, strokes: [[...arc(0.5, 0.33, 0.2, 0.17, 200, 360), [0.66, 0.45], [0.3, 0.85], [0.72, 0.85]]] },
    { digit: 3, strokes: [[...arc(0.5, 0.32, 0.18, 0.16, 200, 450), ...arc(0.5, 0.66, 0.2, 0.18, 270, 510)]] },
    { digit: 4, strokes: [[[0.55, 0.15], [0.28, 0.6], [0.75, 0.6]], [[0.6, 0.38], [0.6, 0.85]]] },
    { digit: 5, strokes: [[[0.68, 0.17], [0.36, 0.17], [0.33, 0.45], ...arc(0.5, 0.63, 0.2, 0.2, 225, 495)]] },
    { digit: 6, strokes: [[[0.62, 0.16], ...arc(0.5, 0.64, 0.2, 0.2, 190, 550)]] },
    { digit: 8, strokes: [[...arc(0.5, 0.32, 0.16, 0.16, 90, 450), ...arc(0.5, 0.66, 0.2, 0.18, -90, 270)]] },
    { digit: 9, strokes: [[...arc(0.5, 0.35, 0.19, 0.19, 0, 360), [0.69, 0.35], [0.62, 0.85]]] },
    { digit: 7, strokes: [[[0.28, 0.18], [0.72, 0.18], [0.45, 0.85]]] },
];

async function drawStrokes(page, strokes) {
    const box = await page.locator("#draw").boundingBox();
    await page.click("#clear");
    for (const s of strokes) {
        const px = ([x, y]) => [box.x + box.width * x, box.y + box.height * y];
        await page.mouse.move(...px(s[0]));
        await page.mouse.down();
        for (let i = 1; i < s.length; i++) {
            const [a, b] = [s[i - 1], s[i]], n = Math.max(1, Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1]) / 0.03));
            for (let k = 1; k <= n; k++)
                await page.mouse.move(...px([a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n]));
        }
        const runs = Number(await page.evaluate(() => document.body.dataset.runs ?? 0));
        await page.mouse.up();       // the end of a stroke runs every target on the canvas
        await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
    }
}

// the digit each target shows in the page's table, and the time row
const shown = (page) => page.evaluate(() => {
    const rows = [...document.querySelectorAll("#targets tr")].map((r) => [...r.cells].map((c) => c.textContent.trim()));
    return { pred: document.getElementById("pred").textContent, rows };
});

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "kgen-chromium-"));
let ctx;
try {
    ctx = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, timeout: 60000,
        viewport: { width: 1000, height: 820 },
        args: ["--no-sandbox", "--disable-gpu", "--enable-unsafe-webgpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
} catch (e) {
    console.log(`FAIL chromium does not start: ${e.message.split("\n")[0]}`);
    fs.rmSync(profile, { recursive: true, force: true });
    process.exit(2);
}
try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    page.on("pageerror", (e) => fail(`page error: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && fail(`console error: ${m.text()}`));
    page.setDefaultTimeout(60000);
    await page.goto(url);
    await page.evaluate(() => window.kgenDemo.ready);
    const targets = await page.evaluate(() => window.kgenDemo.targets);
    console.log(`targets: ${targets.join(" ")}`);
    for (const [t, why] of Object.entries(await page.evaluate(() => window.kgenDemo.unavailable)))
        console.log(`unavailable ${t}: ${why}`);
    if (!targets.length)
        fail("the page runs no target");

    // 1. direct
    for (const t of targets) {
        const ys = [];
        for (const x of digits)
            ys.push(await page.evaluate(([t, x]) => window.kgenDemo.infer(t, x), [t, x]));
        save(t, "heldout_logits.npy", ys);
        const wrong = ys.map((y, i) => [argmax(y), labels[i]]).filter(([p, l]) => p !== l);
        if (wrong.length)
            fail(`${t} (direct): read ${wrong.map(([p, l]) => `${l} as ${p}`).join(", ")}`);
        else
            console.log(`ok ${t} direct: ${ys.length} of ${ys.length} held-out digits read right`);
    }

    // 2. canvas
    const canvas = Object.fromEntries(targets.map((t) => [t, []]));
    for (const [i, x] of digits.entries()) {
        await page.evaluate((x) => window.kgenDemo.showDigit(x), x);
        const r = await page.evaluate(() => window.kgenDemo.runCanvas({ timed: false }));
        for (const t of targets) {
            canvas[t].push(r.results[t].output);
            if (argmax(r.results[t].output) !== labels[i])
                fail(`${t} (canvas): held-out digit ${i} labelled ${labels[i]} read as ${argmax(r.results[t].output)}`);
        }
    }
    for (const t of targets) {
        save(t, "canvas_logits.npy", canvas[t]);
        const right = canvas[t].filter((y, i) => argmax(y) === labels[i]).length;
        if (right === labels.length)
            console.log(`ok ${t} canvas: ${right} of ${labels.length} held-out digits read right through the page's preprocessing`);
    }

    // 3. drawn, 4. upload
    const right = Object.fromEntries(targets.map((t) => [t, 0]));
    for (const d of DRAWN) {
        await drawStrokes(page, d.strokes);
        await page.locator("#draw").screenshot({ path: `${outdir}/drawn_${d.digit}.png` });
        const s = await shown(page);
        const digitRow = s.rows.find((r) => r[0] === "digit") ?? [];
        const cols = s.rows[0].slice(1);
        for (const t of targets) {
            const col = cols.findIndex((c) => c.startsWith(
                { js: "JavaScript", "wasm-simd": "WebAssembly SIMD128", webgpu: "WebGPU" }[t] ?? t));
            const got = digitRow[col + 1];
            if (got === String(d.digit))
                right[t]++;
            else
                fail(`${t} (drawn): the page shows '${got}' for a drawn ${d.digit}`);
        }
    }
    for (const t of targets)
        if (right[t] === DRAWN.length)
            console.log(`ok ${t} drawn: ${DRAWN.length} of ${DRAWN.length} drawn digits (${DRAWN.map((d) => d.digit).join(" ")}) read right`);
    const lastDigit = DRAWN[DRAWN.length - 1].digit;
    const png = Buffer.from((await page.evaluate(() => document.getElementById("draw").toDataURL("image/png"))).split(",")[1], "base64");
    {
        const runs = Number(await page.evaluate(() => document.body.dataset.runs ?? 0));
        await page.setInputFiles("#file", { name: "digit.png", mimeType: "image/png", buffer: png });
        await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, runs);
        const pred = await page.textContent("#pred");
        if (pred === String(lastDigit))
            console.log(`ok upload: the drawn ${lastDigit} as an uploaded PNG reads ${pred}`);
        else
            fail(`upload: the drawn ${lastDigit} as an uploaded PNG reads '${pred}'`);
    }

    // the screenshot: the drawing again, read and timed on every target
    await drawStrokes(page, DRAWN[DRAWN.length - 1].strokes);
    const s = await shown(page);
    const timeRow = s.rows.find((r) => r[0] === "time per inference") ?? [];
    console.log(`page: ${s.rows.map((r) => r.join(" | ")).join(" // ")}`);
    if (s.pred !== String(lastDigit) || !timeRow.slice(1).some((c) => / ms$/.test(c)))
        fail(`the page shows '${s.pred}' and times '${timeRow.slice(1).join(", ")}' for a drawn ${lastDigit}`);
    const r = await page.evaluate(() => window.kgenDemo.runCanvas({ timed: true }));
    const notes = await page.evaluate(() => window.kgenDemo.notes);
    for (const t of targets)
        console.log(`time ${t} ms=${r.results[t].ms.toFixed(4)} runs=${r.results[t].runs}` +
            (r.results[t].deviceMs ? ` device_ms=${r.results[t].deviceMs.toFixed(4)}` : "") + (notes[t] ? ` note=${notes[t]}` : ""));
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
    fail(e.message.split("\n")[0]);
} finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
