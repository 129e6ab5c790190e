// page.mjs - for tests/webgpu.sh: a generated webgpu model module run in headless Chromium
// (navigator.gpu; its SwiftShader adapter with --enable-unsafe-webgpu), driven by
// playwright-core:
//
//     node page.mjs MODEL_DIR NAME INPUT.npy OUTPUT.npy
//
// serves MODEL_DIR and the two .npy files on 127.0.0.1, loads a page that imports
// MODEL_DIR/NAME.mjs, runs it on the input and compares with the output (|got - exp| <=
// 1e-4 + 1e-3 |exp|). Prints "ok NAME in Chromium (adapter ..., max error E)" and exits 0,
// or the reason and exits 1 (2: the browser could not be driven).
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const [dir, name, input, output] = process.argv.slice(2);
const require = createRequire(path.join(process.cwd(), "package.json"));
const { chromium } = require("playwright-core");
const page = `<!doctype html><meta charset="utf-8"><pre id="out"></pre><script type="module">
import * as m from "./${name}.mjs";
import { readNpy } from "./kgen_io.mjs";
const out = document.getElementById("out");
try {
    const get = async (u) => readNpy(new Uint8Array(await (await fetch(u)).arrayBuffer()));
    const x = await get("input.npy"), ref = await get("output.npy");
    const a = await navigator.gpu.requestAdapter();
    await m.init();
    const [y] = await m.run([x.data]);
    let worst = 0, bad = -1;
    for (let i = 0; i < y.length; i++) {
        const d = Math.abs(y[i] - ref.data[i]);
        if (!(d <= 1e-4 + 1e-3 * Math.abs(ref.data[i])) && bad < 0) bad = i;
        worst = Math.max(worst, d);
    }
    out.textContent = bad >= 0 ? \`FAIL element \${bad}: \${y[bad]}, expected \${ref.data[bad]}\`
                               : \`PASS adapter \${a.info.vendor} \${a.info.architecture}, max error \${worst.toExponential(2)}\`;
} catch (e) {
    out.textContent = "FAIL " + e.message;
}
out.dataset.done = "1";
</script>`;
const files = { "/index.html": [page, "text/html"], "/input.npy": [fs.readFileSync(input)], "/output.npy": [fs.readFileSync(output)] };
const server = http.createServer((q, r) => {
    const p = q.url.split("?")[0];
    let body = files[p], type = "application/octet-stream";
    if (body) {
        type = body[1] || type;
        body = body[0];
    } else if (/^\/[A-Za-z0-9_.-]+$/.test(p) && fs.existsSync(path.join(dir, p))) {
        body = fs.readFileSync(path.join(dir, p));
        type = p.endsWith(".mjs") ? "text/javascript" : type;
    }
    r.writeHead(body ? 200 : 404, { "content-type": type });
    r.end(body || "");
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/index.html`;
let code = 2;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "kgen-webgpu-"));
try {
    const ctx = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
        args: ["--no-sandbox", "--enable-unsafe-webgpu", "--no-first-run", "--disable-background-networking"],
    });
    const tab = ctx.pages()[0] || (await ctx.newPage());
    await tab.goto(url);
    await tab.waitForSelector("#out[data-done]", { timeout: 120000 });
    const text = await tab.textContent("#out");
    await ctx.close();
    code = text.startsWith("PASS") ? 0 : 1;
    console.log(code ? `${name} in Chromium: ${text}` : `ok ${name} in Chromium (${text.slice(5)})`);
} catch (e) {
    console.log(`${name} in Chromium: cannot drive the browser: ${e.message.split("\n")[0]}`);
}
server.close();
fs.rmSync(profile, { recursive: true, force: true });
process.exit(code);
