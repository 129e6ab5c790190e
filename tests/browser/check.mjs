// check.mjs URL INPUT.npy OUTDIR SHOT.png - the browser test's driver (tests/browser.sh):
// headless Chromium (playwright-core, Debian's /usr/bin/chromium or $CHROMIUM) loads the
// demo page at URL and, for every target the page offers,
//   1. runs the model on INPUT.npy through window.kgenDemo.run and writes the output to
//      OUTDIR/TARGET/output_0.npy (browser.sh compares it with the reference);
//   2. runs it through the page's controls: a stroke drawn with the mouse, then the canvas
//      as an uploaded PNG; each must show a class and a time.
// Saves a screenshot of the page to SHOT.png. Prints "ok TARGET ms=..." per target, or
// "FAIL ..." lines; exit 1 on a failure, 2 when the browser cannot start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { readNpy, writeNpy } from "../../templates/kgen_io.mjs";

const require = createRequire(path.resolve("package.json"));
const { chromium } = require("playwright-core");
const [url, inputPath, outdir, shot] = process.argv.slice(2);
const input = readNpy(new Uint8Array(fs.readFileSync(inputPath)));
let failed = 0;
const fail = (msg) => {
    console.log(`FAIL ${msg}`);
    failed++;
};

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "kgen-chromium-"));
let ctx;
try {
    ctx = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, timeout: 60000,
        viewport: { width: 1100, height: 800 },
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"],
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
    page.setDefaultTimeout(30000);
    await page.goto(url);
    await page.evaluate(() => window.kgenDemo.ready);
    const targets = await page.evaluate(() => window.kgenDemo.backends);
    console.log(`targets: ${targets.join(" ")}`);
    for (const t of targets) {
        // 1. the fixed input, through the page's API
        const r = await page.evaluate(([t, x]) => window.kgenDemo.run(t, x), [t, Array.from(input.data)]);
        fs.mkdirSync(`${outdir}/${t}`, { recursive: true });
        fs.writeFileSync(`${outdir}/${t}/output_0.npy`, writeNpy({ dtype: "f32", shape: [1, r.output.length], data: Float32Array.from(r.output) }));
        console.log(`ok ${t} ms=${r.ms.toFixed(4)} runs=${r.runs}`);
    }
    // 2. the controls: pick each target, draw, then upload the canvas as a picture
    const box = await page.locator("#draw").boundingBox();
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.2);
    await page.mouse.down();
    for (let i = 1; i <= 8; i++)
        await page.mouse.move(box.x + box.width * (0.5 - 0.02 * i), box.y + box.height * (0.2 + 0.08 * i));
    await page.mouse.up();
    const png = await page.locator("#draw").screenshot();
    for (const t of targets) {
        const runs = async () => Number(await page.evaluate(() => document.body.dataset.runs ?? 0));
        let n = await runs();
        await page.selectOption("#backend", t);   // a change runs the model on the drawing
        await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, n);
        n = await runs();
        await page.setInputFiles("#file", { name: "digit.png", mimeType: "image/png", buffer: png });
        await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, n);
        const pred = await page.textContent("#pred"), time = await page.textContent("#time");
        if (!/^[0-9]$/.test(pred) || !/ms per inference/.test(time))
            fail(`${t}: the page shows class '${pred}', time '${time}'`);
        else
            console.log(`ok ${t} (controls): class ${pred}, ${time}`);
    }
    // the fixed input last, so the screenshot shows the tested numbers
    await page.evaluate(([t, x]) => window.kgenDemo.run(t, x), [targets[targets.length - 1], Array.from(input.data)]);
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
    fail(e.message.split("\n")[0]);
} finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
