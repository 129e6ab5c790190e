#!/usr/bin/python3
"""Writes the ONNX reader's test files into this folder (deterministic: same bytes each run).

ext_model.onnx  a small model whose initializer 'w' lives in ext_weights.bin (offset 16,
                length 24), with inline tensors of several payload kinds, attributes of
                every list kind, an If node with two subgraphs and symbolic dims.
ext_weights.bin 16 bytes of padding, then 'w' (FLOAT [2, 3]: 0, 0.5, ..., 2.5).

Run: cd tests/data/onnx && /usr/bin/python3 make_models.py
"""
import struct

import onnx
from onnx import TensorProto, helper


def external(name, dims, location, offset, length):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key = k
        e.value = v
    return t


def main():
    w = [0.5 * i for i in range(6)]
    with open("ext_weights.bin", "wb") as f:
        f.write(b"\xee" * 16 + struct.pack("<6f", *w))

    inits = [
        external("w", [2, 3], "ext_weights.bin", 16, 24),
        helper.make_tensor("b", TensorProto.INT64, [3], [1, -2, 3]),
        helper.make_tensor("d", TensorProto.DOUBLE, [2], [0.25, -1.5]),
        helper.make_tensor("u", TensorProto.UINT32, [2], [1, 4000000000]),
        helper.make_tensor("s", TensorProto.STRING, [2], [b"ab", b"c"]),
        helper.make_tensor("i8", TensorProto.INT8, [3], [-1, 2, -128]),
    ]

    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["t_out"],
                          value=helper.make_tensor("tv", TensorProto.FLOAT, [1], [1.0]))],
        "then_body", [], [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [1])])
    else_g = helper.make_graph(
        [helper.make_node("Constant", [], ["e_out"],
                          value=helper.make_tensor("ev", TensorProto.FLOAT, [1], [2.0]))],
        "else_body", [], [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [1])])

    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
        helper.make_node("CustomOp", ["xw"], ["y"], name="custom", domain="com.example",
                         alpha=1.5, count=7, mode="fast", scales=[0.5, -2.0],
                         axes=[0, -1, 2], tags=["p", "qr"]),
        helper.make_node("If", ["cond"], ["z"], name="branch",
                         then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(
        nodes, "ext_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", None]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1])],
        initializer=inits,
        value_info=[helper.make_tensor_value_info("xw", TensorProto.FLOAT, ["N", 3])])
    model = helper.make_model(
        graph, producer_name="kgen-test", producer_version="1",
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    # serialize directly: onnx.save would try to handle the external tensor itself
    with open("ext_model.onnx", "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
