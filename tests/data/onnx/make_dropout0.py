# Generates tests/data/onnx/dropout_ratio0: Dropout in training mode with a constant ratio
# of 0 (what torchvision's Swin exports for its attention), then Relu; node-test layout.
# Every element is kept: y = relu(x), the mask all true. Deterministic.
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto

x = np.random.default_rng(11).standard_normal((2, 3, 5)).astype(np.float32)
nodes = [helper.make_node("Dropout", ["x", "ratio", "training"], ["d", "mask"], seed=3, name="dropout"),
         helper.make_node("Relu", ["d"], ["y"], name="relu")]
inits = [numpy_helper.from_array(np.array(0, np.float32), "ratio"),
         numpy_helper.from_array(np.array(True), "training")]
g = helper.make_graph(nodes, "dropout_ratio0", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 5]),
                       helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3, 5])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen-tests")
m.ir_version = 8

d = "tests/data/onnx/dropout_ratio0"
onnx.save(m, d + "/model.onnx")
open(d + "/test_data_set_0/input_0.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
open(d + "/test_data_set_0/output_0.pb", "wb").write(numpy_helper.from_array(np.maximum(x, 0), "y").SerializeToString())
open(d + "/test_data_set_0/output_1.pb", "wb").write(numpy_helper.from_array(np.ones(x.shape, bool), "mask").SerializeToString())
