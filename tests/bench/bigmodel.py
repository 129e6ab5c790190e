"""bigmodel.py - a model with big weights for tests/bench/bigmodel.sh: LAYERS blocks of
MatMul by a DIM x DIM matrix, Add of a bias and Relu, on an input of shape [1, DIM], with
seeded random weights (4 * LAYERS * DIM * (DIM + 1) bytes: 20 x 2048 is 336 MB, about a
ViT-B/16's 330 MB). Writes DIR/model.onnx and DIR/input_0.npy.

usage: /usr/bin/python3 tests/bench/bigmodel.py DIR [LAYERS [DIM]]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    dim = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
    rng = np.random.default_rng(14)
    nodes, inits = [], []
    x = "x"
    for i in range(layers):
        w = (rng.standard_normal((dim, dim), dtype=np.float32) * np.float32(1.4 / np.sqrt(dim)))
        b = rng.standard_normal(dim, dtype=np.float32) * np.float32(0.1)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        y = "y" if i == layers - 1 else f"h{i}"
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
                  helper.make_node("Relu", [f"a{i}"], [y], name=f"relu{i}")]
        x = y
    graph = helper.make_graph(nodes, "bigmodel", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, dim])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, dim])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kgen bench")
    model.ir_version = 8
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "input_0.npy"), rng.standard_normal((1, dim), dtype=np.float32))


if __name__ == "__main__":
    main()
