// manifest.mjs OUT.json NAME MODEL_DIR TARGET=STATUS ... - writes the demo's models.json
// (examples/web/build.sh): {name, backends: the targets built (STATUS "ok"), in the order
// given; unavailable: {target: reason} for the others; heldout: {labels, digits} from
// MODEL_DIR/heldout.npy and heldout_labels.npy (each digit 64 cells, 0..16), for the page's
// "held-out digit" button and the browser test}.
import fs from "node:fs";
import { readNpy } from "../../templates/kgen_io.mjs";

const [out, name, dir, ...targets] = process.argv.slice(2);
if (!out || !name || !dir) {
    console.error("usage: node manifest.mjs OUT.json NAME MODEL_DIR TARGET=STATUS ...");
    process.exit(2);
}
const read = (f) => readNpy(new Uint8Array(fs.readFileSync(`${dir}/${f}`)));
const x = read("heldout.npy"), labels = Array.from(read("heldout_labels.npy").data, Number);
const cells = x.data.length / labels.length;
const digits = labels.map((_, i) => Array.from(x.data.subarray(i * cells, (i + 1) * cells)));
const backends = [], unavailable = {};
for (const t of targets) {
    const at = t.indexOf("=");
    if (t.slice(at + 1) === "ok")
        backends.push(t.slice(0, at));
    else
        unavailable[t.slice(0, at)] = t.slice(at + 1);
}
fs.writeFileSync(out, JSON.stringify({ name, backends, unavailable, heldout: { labels, digits } }) + "\n");
