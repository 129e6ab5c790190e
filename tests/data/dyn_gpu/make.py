# make.py - tests/data/dyn_gpu: three small models with dims decided at run time for
# tests/dyn_gpu.sh, each with inputs at several extents and numpy's (torch's for the conv)
# outputs. Not run by make test (the committed files are what the test reads); to remake
# them, from this folder: /usr/bin/python3 make.py (fixed seed). Each NAME.onnx has its kgen
# options in NAME.dims; NAME_E.npy is an input at extent E, NAME_E.out.npy its output.
#   mm    relu(x @ W + b), x: f32[M, 32], --dim M=1..256: the shared-memory matmul tiling
#         with its blocks over a run-time M
#   sm    Softmax(x, axis=-1), x: f32[4, L], --dim L=1..300: reductions over a run-time axis
#         (the cached accumulators' axes keep the run-time extent)
#   cv    MaxPool(Relu(Conv(x, 3x3, pad 1)), 2x2), x: f32[N, 4, H, 16], --dim N=1..4
#         --dim H=4..64: a run-time batch and height
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def save(name, nodes, x_shape, inits, dims):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen tests"),
              name + ".onnx")
    with open(name + ".dims", "w") as f:
        f.write(dims + "\n")


def cases(name, shapes, ref):
    for s in shapes:
        x = rng.standard_normal(s).astype(np.float32)
        e = "x".join(map(str, s))
        np.save(f"{name}_{e}.npy", x)
        np.save(f"{name}_{e}.out.npy", ref(x).astype(np.float32))


W = rng.standard_normal((32, 24)).astype(np.float32)
b = rng.standard_normal(24).astype(np.float32)
save("mm", [helper.make_node("MatMul", ["x", "W"], ["t"]), helper.make_node("Add", ["t", "b"], ["u"]),
            helper.make_node("Relu", ["u"], ["y"])], ["M", 32], {"W": W, "b": b}, "--dim M=1..256")
cases("mm", [(1, 32), (7, 32), (129, 32), (200, 32)], lambda x: np.maximum(x @ W + b, 0))


def softmax(x):
    r = np.exp(x - x.max(-1, keepdims=True))
    return r / r.sum(-1, keepdims=True)


save("sm", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [4, "L"], {}, "--dim L=1..300")
cases("sm", [(4, 1), (4, 37), (4, 256), (4, 300)], softmax)

Wc = (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(np.float32)
save("cv", [helper.make_node("Conv", ["x", "Wc"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
     ["N", 4, "H", 16], {"Wc": Wc}, "--dim N=1..4 --dim H=4..64")
cases("cv", [(1, 4, 4, 16), (2, 4, 17, 16), (3, 4, 33, 16), (2, 4, 64, 16)],
      lambda x: torch.nn.functional.max_pool2d(
          torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(Wc), padding=1).relu(), 2, 2).numpy())
