// i64_inputs.mjs - for tests/webgpu.sh: writes the i64[3] inputs DIR/small.npy (values that fit
// in 32 bits, with INT64_MAX: the 64-bit extremes narrow to the 32-bit ones) and DIR/big.npy
// (2^40, which the webgpu host must refuse).
//     node i64_inputs.mjs DIR
import fs from "node:fs";
import { writeNpy } from "../../templates/kgen_io.mjs";

const dir = process.argv[2];
const npy = (values) => writeNpy({ dtype: "i64", shape: [3], data: BigInt64Array.from(values) });
fs.writeFileSync(`${dir}/small.npy`, npy([-5n, 7n, 9223372036854775807n]));
fs.writeFileSync(`${dir}/other.npy`, npy([3n, -8n, 1n]));
fs.writeFileSync(`${dir}/big.npy`, npy([1n, 1099511627776n, 2n]));
