# Generates the ONNX error corpus: each NAME.onnx must make kgen fail with the message in
# NAME.expect (a substring), exit status 1 and no output. Deterministic.
import onnx
from onnx import helper, TensorProto
import os

d = os.path.dirname(os.path.abspath(__file__))
f32 = TensorProto.FLOAT

def vi(name, shape, t=f32):
    return helper.make_tensor_value_info(name, t, shape)

def model(nodes, inputs, outputs, opset=13, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="kgen-tests")
    m.ir_version = 8
    return m

def save(name, m, expect, raw=None):
    data = raw if raw is not None else m.SerializeToString()
    open(os.path.join(d, name + ".onnx"), "wb").write(data)
    open(os.path.join(d, name + ".expect"), "w").write(expect + "\n")

ok = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2, 3])], [vi("y", [2, 3])])
save("unsupported_op", model([helper.make_node("FancyOp", ["x"], ["y"], name="fancy")], [vi("x", [2])], [vi("y", [2])]),
     "node 0 'fancy' (FancyOp): unsupported operator")
save("unknown_domain", model([helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.example")], [vi("x", [2])],
                             [vi("y", [2])]), "unsupported operator domain 'com.example'")
save("bad_opset", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2])], [vi("y", [2])], opset=99),
     "opset 99")
raw = ok.SerializeToString()
save("truncated", None, "truncated", raw=raw[: len(raw) - 7])
save("garbage", None, "model.onnx" if False else "garbage.onnx", raw=b"\xff\xff\xff\xff\x0fnot a model at all")
save("broadcast_mismatch", model([helper.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", [2, 3]), vi("b", [4])],
                                 [vi("y", [2, 3])]), "node 0 'add' (Add): Add: shapes cannot broadcast")
save("dangling_input", model([helper.make_node("Relu", ["nowhere"], ["y"], name="r")], [vi("x", [2])], [vi("y", [2])]),
     "input 'nowhere' is not produced")
save("missing_output", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2])], [vi("z", [2])]),
     "graph output 'z' is not produced")
save("dynamic_dim", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", ["N", 3])], [vi("y", ["N", 3])]),
     "dimension 0 is 'N'")
save("string_input", model([helper.make_node("Identity", ["x"], ["y"], name="i")], [vi("x", [2], TensorProto.STRING)],
                           [vi("y", [2], TensorProto.STRING)]), "unsupported element type STRING")
save("matmul_mismatch", model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], [vi("a", [2, 3]), vi("b", [4, 5])],
                              [vi("y", [2, 5])]), "(MatMul)")
save("conv_rank", model([helper.make_node("Conv", ["x", "w"], ["y"], name="cv")], [vi("x", [1, 3, 8]), vi("w", [4, 2, 3, 3])],
                        [vi("y", [1, 4, 6])]), "(Conv)")
save("reshape_dynamic", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", [2, 3]), vi("s", [2], TensorProto.INT64)],
                              [vi("y", [3, 2])]), "must be known when compiling")
