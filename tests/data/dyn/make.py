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

# s2d_t.onnx for tests/dyn.sh: y = DepthToSpace(SpaceToDepth(x, 2), 2, DCR), the identity,
# over x: f32[1, 2, H, W] with H and W decided at run time (even: checked at run time), and
# its inputs s2d_in_*.npy (seeded draws; each is its own reference) and s2d_bad_5x4.npy (an
# odd H, refused)
import numpy as np  # noqa: E402

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "H", "W"])
nodes = [helper.make_node("SpaceToDepth", ["x"], ["s"], blocksize=2),
         helper.make_node("DepthToSpace", ["s"], ["y"], blocksize=2, mode="DCR")]
g = helper.make_graph(nodes, "s2d_t", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen tests")
onnx.save(m, "s2d_t.onnx")
rng = np.random.default_rng(5)
for h, w in [(2, 2), (4, 6), (10, 32)]:
    np.save(f"s2d_in_{h}x{w}.npy", rng.standard_normal((1, 2, h, w)).astype(np.float32))
np.save("s2d_bad_5x4.npy", rng.standard_normal((1, 2, 5, 4)).astype(np.float32))

# pad_crop.onnx for tests/errors.sh: torch's export of F.pad(x, (0, 0, 0, 8 - h)) over
# x: f32[1, 3, H, W] (opset 13): pads computed from H (through Concat, Reshape to [-1, 2], a
# reversing Slice and Transpose), which crop where H is above 8: with --dim H=4..64 kgen
# refuses them (it pads by computed amounts, never crops); needs Debian's python3-torch
import torch  # noqa: E402


class PadTo8(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.pad(x, (0, 0, 0, 8 - x.shape[2]))


torch.onnx.export(PadTo8(), (torch.zeros(1, 3, 6, 8),), "pad_crop.onnx", input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {2: "H", 3: "W"}}, opset_version=13)
