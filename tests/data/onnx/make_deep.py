#!/usr/bin/python3
"""Writes deep_chain.onnx: x (FLOAT [4]) through 3000 elementwise nodes one after the
other (Neg, Relu, Abs in turn), for the test that such a graph compiles and runs: as one
fused expression it would be thousands of operations deep (kgen's simplifier once ran out
of stack on it; the default schedule now materializes a stage every 1000 operations).

Run: cd tests/data/onnx && /usr/bin/python3 make_deep.py   (deterministic)
"""
import onnx
from onnx import TensorProto, helper

N = 3000
ops = ["Neg", "Relu", "Abs"]
nodes = [helper.make_node(ops[i % 3], ["v%x" % i], ["v%x" % (i + 1)]) for i in range(N)]
g = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("v%x" % N, TensorProto.FLOAT, [4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kgen-tests")
m.ir_version = 8
open("deep_chain.onnx", "wb").write(m.SerializeToString())
