# Generates tests/data/onnx/conv_bn_relu: Conv -> BatchNormalization -> Relu with seeded
# random parameters and a numpy reference output (node-test layout). Deterministic.
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(7)
x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
b = rng.standard_normal(4).astype(np.float32) * 0.1
scale = rng.uniform(0.5, 1.5, 4).astype(np.float32)
beta = rng.standard_normal(4).astype(np.float32) * 0.1
mean = rng.standard_normal(4).astype(np.float32) * 0.2
var = rng.uniform(0.5, 2.0, 4).astype(np.float32)
eps = 1e-5

nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["n"], epsilon=eps, name="bn"),
         helper.make_node("Relu", ["n"], ["y"], name="relu")]
inits = [numpy_helper.from_array(a, n) for a, n in
         [(w, "w"), (b, "b"), (scale, "scale"), (beta, "beta"), (mean, "mean"), (var, "var")]]
g = helper.make_graph(nodes, "conv_bn_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen-tests")
m.ir_version = 8

xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((1, 4, 8, 8), np.float64)
for f in range(4):
    for yy in range(8):
        for xx in range(8):
            c[0, f, yy, xx] = (xp[0, :, yy:yy + 3, xx:xx + 3] * w[f]).sum() + b[f]
n = (c - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + eps) * scale[None, :, None, None] + beta[None, :, None, None]
y = np.maximum(n, 0).astype(np.float32)

d = "tests/data/onnx/conv_bn_relu"
onnx.save(m, d + "/model.onnx")
open(d + "/test_data_set_0/input_0.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
open(d + "/test_data_set_0/output_0.pb", "wb").write(numpy_helper.from_array(y, "y").SerializeToString())
