// ort_refs.mjs - references for tests/dyn models that PyTorch did not export here (the
// attention block is tests/published/seq_dynamic's model): runs MODEL on onnxruntime-node's
// CPU provider with every graph optimization disabled (some of its fusions are wrong) and
// writes each output as OUTDIR/output_I.npy. Not run by make test:
//
//     node tests/dyn/ort_refs.mjs MODEL.onnx INPUT.npy OUTDIR [ORT_DIR]
//
// onnxruntime-node is looked up in ORT_DIR/node_modules (default build/bench/ort), installed
// with `ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix ORT_DIR onnxruntime-node`.
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { readNpy, writeNpy } from "../../templates/kgen_io.mjs";

const [model, input, outdir, ortDir = "build/bench/ort"] = process.argv.slice(2);
const ort = createRequire(resolve(ortDir, "node_modules") + "/")("onnxruntime-node");
const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: "disabled" });
const x = readNpy(readFileSync(input));
const result = await session.run({ [session.inputNames[0]]: new ort.Tensor("float32", x.data, x.shape) });
mkdirSync(outdir, { recursive: true });
session.outputNames.forEach((name, i) => {
    const t = result[name];
    writeFileSync(`${outdir}/output_${i}.npy`, writeNpy({ dtype: "f32", shape: t.dims.map(Number), data: t.data }));
});
