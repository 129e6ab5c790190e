# make.py - add_t.onnx for tests/dyn_js.sh: y = Transpose(Relu(a + b)) with a: f32[B, 8] and
# b: f32[C, 8], B and C symbolic; compiled with --dim B=1..16 --dim C=1..16, its output has a
# run-time dim ([8, B]) and the Add a derived check (B == C). Run: /usr/bin/python3 make.py
import onnx
from onnx import TensorProto, helper

a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", 8])
b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["C", 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
         helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])]
g = helper.make_graph(nodes, "add_t", [a, b], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen tests")
onnx.save(m, "add_t.onnx")

# ln_t.onnx for tests/errors.sh: LayerNormalization of x: f32[1, T, 4] from axis 1, over T
# (decided at run time with --dim T=1..8): refused, the count it divides by being fixed
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T", 4])
ln = helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=1)
s = helper.make_tensor("s", TensorProto.FLOAT, [1, 4], [1.0, 1.0, 1.0, 1.0])
g = helper.make_graph([ln], "ln_t", [x], [y], [s])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="kgen tests")
onnx.save(m, "ln_t.onnx")

# pad_computed.onnx for tests/errors.sh: torch's export of F.pad(x, (0, 0, 0, (8 - h % 8) % 8))
# over x: f32[1, 3, H, W] (opset 13): the pads are computed from H and reshaped to [-1, 2],
# reversed by a Slice and transposed as values, which kgen refuses (the extent would be lost
# on the way); needs Debian's python3-torch
import torch  # noqa: E402


class PadToEight(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.pad(x, (0, 0, 0, (8 - x.shape[2] % 8) % 8))


torch.onnx.export(PadToEight(), (torch.zeros(1, 3, 8, 8),), "pad_computed.onnx", input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {2: "H", 3: "W"}}, opset_version=13)
