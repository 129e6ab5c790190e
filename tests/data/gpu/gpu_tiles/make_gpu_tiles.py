#!/usr/bin/python3
"""make_gpu_tiles.py - a model whose matmuls take kgen's shared-memory GPU tiling (every
extent a multiple of 16): a batched MatMul, then Gemm (transB, bias) and Relu, then a plain
MatMul with a weight. Writes model.onnx, input_0.npy and the numpy reference output_0.npy.
Run with Debian's /usr/bin/python3 (onnx, numpy)."""
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

rng = np.random.default_rng(7)
x = rng.standard_normal((2, 32, 48)).astype(np.float32)
w1 = rng.standard_normal((48, 64)).astype(np.float32) * 0.2       # batched MatMul: [2,32,48] x [48,64]
w2 = rng.standard_normal((32, 64)).astype(np.float32) * 0.2       # Gemm transB: [64,64] x [32,64]^T
b2 = rng.standard_normal((32,)).astype(np.float32)
w3 = rng.standard_normal((32, 16)).astype(np.float32) * 0.2       # MatMul [64,32] x [32,16]

nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["h1"]),
    helper.make_node("Reshape", ["h1", "shape"], ["h1r"]),
    helper.make_node("Gemm", ["h1r", "w2", "b2"], ["h2"], transB=1),
    helper.make_node("Relu", ["h2"], ["h3"]),
    helper.make_node("MatMul", ["h3", "w3"], ["y"]),
]
inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
         numpy_helper.from_array(b2, "b2"), numpy_helper.from_array(w3, "w3"),
         numpy_helper.from_array(np.array([64, 64], dtype=np.int64), "shape")]
g = helper.make_graph(nodes, "gpu_tiles",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 48])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 16])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, "model.onnx")

h1 = (x.astype(np.float64) @ w1).reshape(64, 64)
h3 = np.maximum(h1 @ w2.T.astype(np.float64) + b2, 0)
y = h3 @ w3
np.save("input_0.npy", x)
np.save("output_0.npy", y.astype(np.float32))
