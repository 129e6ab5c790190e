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
     "input 'x' dim 0 ('N'): pass --dim N=N or --input-shape x=...")
if False: save("dynamic_dim", None,
     "dimension 0 is 'N'")
save("string_input", model([helper.make_node("Identity", ["x"], ["y"], name="i")], [vi("x", [2], TensorProto.STRING)],
                           [vi("y", [2], TensorProto.STRING)]), "unsupported element type STRING")
save("matmul_mismatch", model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")], [vi("a", [2, 3]), vi("b", [4, 5])],
                              [vi("y", [2, 5])]), "(MatMul)")
save("conv_rank", model([helper.make_node("Conv", ["x", "w"], ["y"], name="cv")], [vi("x", [1, 3, 8]), vi("w", [4, 2, 3, 3])],
                        [vi("y", [1, 4, 6])]), "(Conv)")
save("reshape_dynamic", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [vi("x", [2, 3]), vi("s", [2], TensorProto.INT64)],
                              [vi("y", [3, 2])]), "must be known when compiling")

# ---------------------------------------------------------------- hostile files
# Raw protobuf: field numbers of ModelProto (1 ir_version, 7 graph, 8 opset_import),
# GraphProto (1 node, 5 initializer, 11 input, 12 output), NodeProto (1 input, 2 output,
# 3 name, 4 op_type, 5 attribute), TensorProto (1 dims, 2 data_type, 4 float_data,
# 8 name, 9 raw_data, 13 external_data, 14 data_location).
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def fld(num, wire, payload):
    return varint(num << 3 | wire) + payload

def vint(num, v):
    return fld(num, 0, varint(v))

def ld(num, data):
    if isinstance(data, str):
        data = data.encode()
    return fld(num, 2, varint(len(data)) + data)

opset13 = ld(8, vint(2, 13))

def raw_model(graph):
    return vint(1, 8) + opset13 + ld(7, graph)

def save_args(name, args):
    open(os.path.join(d, name + ".args"), "w").write(args + "\n")

relu_node = ld(1, ld(1, "x") + ld(2, "y") + ld(3, "r") + ld(4, "Relu"))
io = ld(11, ok.graph.input[0].SerializeToString()) + ld(12, ok.graph.output[0].SerializeToString())

save("wire_graph_varint", None, "graph: expected a message (length-delimited), found wire type 0 (varint)",
     raw=vint(1, 8) + opset13 + vint(7, 5))
save("wire_name_varint", None, "graph.node[0].name: expected wire type 2 (length-delimited), found 0 (varint)",
     raw=raw_model(ld(1, ld(1, "x") + ld(2, "y") + vint(3, 7) + ld(4, "Relu")) + io))
save("truncated_varint", None, "truncated varint in field tag", raw=vint(1, 8) + b"\x80")
save("varint_overflow", None, "varint longer than 64 bits in field 1", raw=b"\x08" + b"\xff" * 10 + b"\x01")
save("group_wire_type", None, "group (wire type 3) in field 2: groups are not supported", raw=vint(1, 8) + b"\x13")
save("invalid_wire_type", None, "invalid wire type 7 in field 1", raw=b"\x0f\x00")
save("truncated_length", None, "truncated length-delimited field 7 (length 100",
     raw=vint(1, 8) + fld(7, 2, varint(100)) + b"abc")

def init_model(tensor_bytes, extra=b""):
    g = relu_node + ld(5, tensor_bytes) + io + extra
    return raw_model(g)

save("negative_dim", None, "graph.initializer[0].dims: negative dim -3",
     raw=init_model(vint(1, -3) + vint(2, 1) + ld(8, "w")))
save("huge_tensor", None, "tensor 'w': more than 2147483647 elements, the limit (--max-elements)",
     raw=init_model(vint(1, 1 << 20) + vint(1, 1 << 20) + vint(1, 2) + vint(2, 1) + ld(8, "w")))
save("rank_too_high", None, "dims: 9 dims, over the rank limit of 8",
     raw=init_model(b"".join(vint(1, 1) for _ in range(9)) + vint(2, 1) + ld(8, "w")))
save("raw_data_size", None, "tensor 'w': raw_data holds 12 bytes, but 4 FLOAT elements need 16",
     raw=init_model(vint(1, 4) + vint(2, 1) + ld(8, "w") + ld(9, b"\0" * 12)))
save("two_payloads", None, "tensor 'w' holds both float_data and raw_data",
     raw=init_model(vint(1, 1) + vint(2, 1) + ld(8, "w") + fld(4, 5, b"\0\0\0\0") + ld(9, b"\0" * 4)))
save("unknown_dtype", None, "tensor 'w': unknown data_type 99",
     raw=init_model(vint(1, 1) + vint(2, 99) + ld(8, "w")))
save("no_data", None, "tensor 'w': 6 elements but no data",
     raw=init_model(vint(1, 2) + vint(1, 3) + vint(2, 1) + ld(8, "w")))
ext = lambda k, v: ld(13, ld(1, k) + ld(2, v))
save("external_escape", None, "external data location '../../etc/passwd' must be a relative path without '..'",
     raw=init_model(vint(1, 4) + vint(2, 1) + ld(8, "w") + ext("location", "../../etc/passwd") + vint(14, 1)))
save("external_missing", None, "tensor 'w': cannot open external data",
     raw=init_model(vint(1, 4) + vint(2, 1) + ld(8, "w") + ext("location", "no_such_file.bin") + vint(14, 1)))
save("no_graph", None, "the model has no graph", raw=vint(1, 8) + opset13)
save("no_op_type", None, "node 'r' has no op_type", raw=raw_model(ld(1, ld(1, "x") + ld(2, "y") + ld(3, "r")) + io))
save("too_many_attrs", None, "graph.node[0]: 1001 attributes, over the limit of 1000",
     raw=raw_model(ld(1, ld(1, "x") + ld(2, "y") + ld(4, "Relu") + b"".join(ld(5, ld(1, "a%d" % i) + vint(3, 1))
                                                                              for i in range(1001))) + io))
# If nodes whose then_branch holds another If, five deep: past 16 nested messages
def nest(level):
    inner = relu_node if level == 0 else ld(1, ld(4, "If") + ld(2, "y") + ld(5, ld(1, "then_branch") + vint(20, 5) + ld(6, nest(level - 1))))
    return inner
save("nested_too_deep", None, "messages nested deeper than 16 levels", raw=raw_model(nest(5) + io))

# ---------------------------------------------------------------- graphs that cannot compile
save("cyclic_graph", model([helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2")],
                           [vi("x", [2])], [vi("b", [2])]),
     "node 0 'r1' (Relu): input 'b' is produced only by node 1 'r2' (Relu), at or after this one: the graph has a cycle")
save("self_loop", model([helper.make_node("Add", ["x", "y"], ["y"], name="acc")], [vi("x", [2])], [vi("y", [2])]),
     "node 0 'acc' (Add): input 'y' is produced only by node 0 'acc' (Add), at or after this one")
save("type_mismatch", model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                            [vi("a", [2]), vi("b", [2], TensorProto.INT64)], [vi("y", [2])]),
     "node 0 'add' (Add): Add: inputs have different types f32 and i64")
save("huge_input", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [100000, 100000])],
                         [vi("y", [100000, 100000])]),
     "graph input 'x' has shape [100000, 100000], over the limit of 2147483647 elements (--max-elements)")
save("negative_input_dim", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2, -5])], [vi("y", [2, 5])]),
     "graph input 'x': dimension 1 is -5; dimensions cannot be negative")
shape_c = helper.make_tensor("s", TensorProto.INT64, [2], [65536, 65536])
save("expand_huge", model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex")], [vi("x", [1])], [vi("y", [65536, 65536])],
                          inits=[shape_c]),
     "node 0 'ex' (Expand): Expand: the output has more than 2147483647 elements")
save("onehot_huge", model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh")], [vi("i", [100000], TensorProto.INT64)],
                          [vi("y", [100000, 100000])], inits=[helper.make_tensor("d", TensorProto.INT64, [], [100000]),
                                                              helper.make_tensor("v", f32, [2], [0, 1])]),
     "node 0 'oh' (OneHot): 'y' has shape [100000, 100000], over the limit of 2147483647 elements (--max-elements)")
save("sequence_input", model([helper.make_node("Identity", ["x"], ["y"], name="i")],
                             [helper.make_tensor_sequence_value_info("x", f32, [2])], [vi("y", [2])]),
     "graph input 'x' is not a tensor")
save("unsupported_loop", model([helper.make_node("Loop", ["", "", "x"], ["y"], name="lp",
                                                 body=helper.make_graph([], "b", [], []))], [vi("x", [2])], [vi("y", [2])]),
     "node 0 'lp' (Loop): Loop: the body has 0 inputs; the node gives 1 loop-carried values, so 3 are expected")
save("no_shape", model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                       [helper.make_tensor_value_info("x", f32, None)], [vi("y", [2])]),
     "input 'x' has no shape: pass --input-shape x=D0,D1,...")
save("gemm_mismatch", model([helper.make_node("Gemm", ["a", "b"], ["y"], name="gm")], [vi("a", [2, 3]), vi("b", [4, 5])],
                            [vi("y", [2, 5])]), "node 0 'gm' (Gemm): Gemm: inner dimensions differ: A gives 3, B 4")

# limits given on the command line (NAME.args)
chain = model([helper.make_node("Relu", ["x"], ["h"], name="r1"), helper.make_node("Relu", ["h"], ["y"], name="r2"),
               helper.make_node("Neg", ["y"], ["z"], name="n")], [vi("x", [20, 20])], [vi("z", [20, 20])])
save("max_nodes", chain, "graph: 3 nodes, over the limit of 2 (--max-nodes)")
save_args("max_nodes", "--max-nodes=2")
save("max_elements", chain, "graph input 'x' has shape [20, 20], over the limit of 100 elements (--max-elements)")
save_args("max_elements", "--max-elements=100")

# shapes and values from the command line (--input-shape, --dim, --bind), control flow
import numpy as np
i64 = TensorProto.INT64
sym = model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
def case(name, m, args, expect):
    save(name, m, expect)
    save_args(name, args)
case("dim_unknown", sym, "--dim nope=3", "--dim nope=3: no graph input has a dimension named 'nope' (named dimensions: 'batch')")
case("dim_twice", sym, "--dim batch=1 --dim batch=2", "--dim batch=2: dimension 'batch' is given twice")
case("dim_zero", sym, "--dim batch=0", "--dim batch=0: '0' is not a dimension")
case("input_shape_unknown", sym, "--input-shape y=1,3", "--input-shape y=1,3: the model has no graph input 'y' (its inputs: 'x')")
case("input_shape_rank", sym, "--input-shape x=1", "--input-shape x=1: input 'x' has rank 2, this shape 1 dimensions")
case("input_shape_static", sym, "--input-shape x=1,4", "--input-shape x=1,4: dimension 1 of input 'x' is 3 in the model")
case("input_shape_twice", sym, "--input-shape x=1,3 --input-shape x=2,3", "input 'x' is given --input-shape twice")
case("input_shape_syntax", sym, "--input-shape x", "--input-shape x: expected NAME=D0,D1,...")
# Range over extents decided at run time: start and limit may hold them, delta may not, and a
# limit computed from values is not known when compiling
def rng_const(n, v):
    return helper.make_node("Constant", [], [n], value=helper.make_tensor(n, i64, [], [v]))
rng_t = [helper.make_node("Shape", ["x"], ["s"], name="sh"), rng_const("one", 1),
         helper.make_node("Gather", ["s", "one"], ["t"], name="g")]
case("range_delta_extent", model(rng_t + [rng_const("z", 0), rng_const("l", 100),
                                          helper.make_node("Range", ["z", "l", "t"], ["r"], name="rg")],
                                 [vi("x", [1, "T"])], [vi("r", None, i64)]),
     "--dim T=1..20", "node 5 'rg' (Range): Range: delta holds an extent decided at run time (only start and limit may)")
case("range_limit_values", model([helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0, name="rm"),
                                  helper.make_node("Cast", ["m"], ["l"], to=i64, name="c"), rng_const("z", 0), rng_const("o", 1),
                                  helper.make_node("Range", ["z", "l", "o"], ["r"], name="rg")],
                                 [vi("x", [1, "T"])], [vi("r", None, i64)]),
     "--dim T=1..20", "node 4 'rg' (Range): Range: input 1 (limit) must be known when compiling")
case("gather_runtime_axis", model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1, name="g")],
                                  [vi("x", [1, "T"]), vi("i", [1], i64)], [vi("y", None)]),
     "--dim T=2..20", "node 0 'g' (Gather): Gather: gathers along dim 1, decided at run time, by indices computed at run time")
# Resize over extents decided at run time: nearest and linear only, scales that are ratios
case("resize_sizes_extents", model([helper.make_node("Shape", ["s"], ["ss"], name="sh"),
                                    helper.make_node("Resize", ["x", "", "", "ss"], ["y"], mode="cubic", name="rs")],
                                   [vi("x", [1, 1, 4, 4]), vi("s", [1, 1, "H", "W"])], [vi("y", None)]),
     "--dim H=4..16 --dim W=4..16",
     "node 1 'rs' (Resize): Resize: mode cubic over extents decided at run time is not supported")
case("resize_scale_extents", model([helper.make_node("Constant", [], ["sc"], value=helper.make_tensor("sc", f32, [4], [1, 1, 1 / 3, 2])),
                                    helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest", name="rs")],
                                   [vi("x", [1, 1, "H", "W"])], [vi("y", None)]),
     "--dim H=4..16 --dim W=4..16",
     "node 1 'rs' (Resize): Resize: scales[2] is 0.333333; over a dim decided at run time kgen takes a scale that is a ratio p / q of integers")
# Reshape over run-time dims: a -1 that is not the input's count over the other dims exactly as
# products of extents, a shape whose count differs from the input's at every extent, and a shape
# value that can be 0 (a copy) at some extent
case("reshape_infer_extents", model([helper.make_node("Constant", [], ["sh2"], value=helper.make_tensor("sh2", i64, [3], [1, 2, -1])),
                                     helper.make_node("Reshape", ["x", "sh2"], ["y"], name="rs")],
                                    [vi("x", [1, 3, "H", "W"])], [vi("y", None)]),
     "--dim H=2..8 --dim W=2..8",
     "node 1 'rs' (Reshape): Reshape: cannot infer the -1 dimension: the other dims' product does not divide the input's element count, a product of extents decided at run time, into a product of its extents")
case("reshape_count_extents", model([helper.make_node("Shape", ["x"], ["s"], name="sh"),
                                     helper.make_node("Constant", [], ["ij"], value=helper.make_tensor("ij", i64, [2], [2, 3])),
                                     helper.make_node("Gather", ["s", "ij"], ["hw"], name="g"),
                                     helper.make_node("Constant", [], ["pre"], value=helper.make_tensor("pre", i64, [2], [1, 3])),
                                     helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", i64, [1], [2])),
                                     helper.make_node("Concat", ["pre", "hw", "two"], ["sh2"], axis=0, name="cat"),
                                     helper.make_node("Reshape", ["x", "sh2"], ["y"], name="rs")],
                                    [vi("x", [1, 3, "H", "W"])], [vi("y", None)]),
     "--dim H=2..8 --dim W=2..8",
     "node 6 'rs' (Reshape): Reshape: the shape never holds as many elements as the input, at any extents of the dims decided at run time")
case("reshape_zero_extent", model([helper.make_node("Shape", ["x"], ["s"], name="sh"),
                                   helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", i64, [4], [0, 0, 0, 1])),
                                   helper.make_node("Sub", ["s", "one"], ["s1"], name="sub"),
                                   helper.make_node("Reshape", ["x", "s1"], ["y"], name="rs")],
                                  [vi("x", [1, 3, "H", "W"])], [vi("y", None)]),
     "--dim H=1..8 --dim W=1..8",
     "node 3 'rs' (Reshape): Reshape: shape[3], an extent decided at run time, can be 0 (a copy of the input's dim) or negative")
# strided SAME pools over run-time dims: an average's counts computed at run time, for windows
# without dilation only
case("avgpool_dilated_extents", model([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                                        dilations=[2, 2], auto_pad="SAME_UPPER", name="ap")],
                                      [vi("x", [1, 1, "H", "W"])], [vi("y", None)], opset=19),
     "--dim H=8..32 --dim W=8..32",
     "node 0 'ap' (AveragePool): AveragePool: dilations over spatial dimension 0, which is decided at run time, with padding that depends on it (not supported)")
case("input_shape_initializer", model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], [vi("x", [2]), vi("w", [2])],
                                      [vi("y", [2])], inits=[helper.make_tensor("w", f32, [2], [1, 2])]),
     "--input-shape w=2", "--input-shape w=2: 'w' is an initializer (a weight), not an input the caller gives")
two = model([helper.make_node("Add", ["a", "b"], ["y"], name="a")], [vi("a", ["B", 4]), vi("b", ["B", None])],
            [vi("y", ["B", 4])])
save("unresolved_many", two, "input 'b' dim 1 (unnamed): pass --input-shape b=...")
sr = model([helper.make_node("Cast", ["sr"], ["f"], to=f32, name="c"), helper.make_node("Mul", ["x", "f"], ["y"], name="m")],
           [vi("x", [2]), vi("sr", [], i64)], [vi("y", [2])])
case("bind_not_number", sr, "--bind sr=abc", "--bind sr=abc: 'abc' is not a whole number (input 'sr' is i64")
case("bind_twice", sr, "--bind sr=1 --bind sr=2", "--bind sr=2: input 'sr' is bound twice")
case("bind_unknown", sr, "--bind rate=1", "--bind rate=1: the model has no graph input 'rate' (its inputs: 'x', 'sr')")
case("bind_literal_shape", sr, "--bind x=3", "--bind x=3: input 'x' has shape [2]; a single value binds only an input of one element")
case("bind_syntax", sr, "--bind sr", "--bind sr: expected --bind NAME=VALUE or --bind NAME=FILE.npy|FILE.pb")
np.save(os.path.join(d, "bind_i32.npy"), np.array([1, 2], dtype=np.int32))
np.save(os.path.join(d, "bind_f32x3.npy"), np.array([1, 2, 3], dtype=np.float32))
case("bind_file_dtype", sr, "--bind x=tests/error/onnx/bind_i32.npy", "the file holds INT32, input 'x' is FLOAT")
case("bind_file_shape", sr, "--bind x=tests/error/onnx/bind_f32x3.npy", "the file has shape [3], input 'x' [2]")
case("bind_file_missing", sr, "--bind x=tests/error/onnx/no_such_file.npy", "no_such_file.npy: cannot open")
b8 = model([helper.make_node("Cast", ["v"], ["f"], to=f32, name="c"), helper.make_node("Mul", ["x", "f"], ["y"], name="m")],
           [vi("x", [2]), vi("v", [1], TensorProto.INT8)], [vi("y", [2])])
case("bind_overflow", b8, "--bind v=300", "--bind v=300: 300 does not fit input 'v' of type i8")
bb = model([helper.make_node("Cast", ["v"], ["f"], to=f32, name="c"), helper.make_node("Mul", ["x", "f"], ["y"], name="m")],
           [vi("x", [2]), vi("v", [], TensorProto.BOOL)], [vi("y", [2])])
case("bind_bool", bb, "--bind v=maybe", "--bind v=maybe: input 'v' is bool; give true, false, 1 or 0")
save("output_declared", model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2, 3])], [vi("y", [2, 4])]),
     "graph output 'y' is declared with shape [2, 4], but computes [2, 3]")
def branch(name, nodes, out):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, f32, None)])
cond_model = lambda then_g, else_g: model(
    [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="rs"), helper.make_node("Greater", ["s", "zero"], ["c"], name="g"),
     helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="branch")],
    [vi("x", [4])], [vi("y", None)], inits=[helper.make_tensor("zero", f32, [], [0])])
save("if_disagree", cond_model(branch("t", [helper.make_node("Relu", ["x"], ["t"])], "t"),
                               branch("e", [helper.make_node("ReduceSum", ["x"], ["e"], keepdims=1)], "e")),
     "node 2 'branch' (If): If: output 0 is f32[4] in then_branch and f32[1] in else_branch, and the condition is known only at run time")
save("if_no_else", model([helper.make_node("If", ["c"], ["y"], then_branch=branch("t", [helper.make_node("Relu", ["x"], ["t"])], "t"),
                                           name="branch")], [vi("x", [4]), vi("c", [], TensorProto.BOOL)], [vi("y", [4])]),
     "If: attribute 'else_branch' (a graph) is required")
body = helper.make_graph([helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", ["v", "v"], ["v2"])], "body",
                         [vi("i", [], i64), vi("cin", [], TensorProto.BOOL), vi("v", [2])],
                         [vi("cout", [], TensorProto.BOOL), vi("v2", [2])])
# a Loop decided at run time runs as a loop (C, JS, WASM); what it cannot do is refused
bodys = helper.make_graph([helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", ["v", "v"], ["v2"]),
                           helper.make_node("Relu", ["v"], ["sc"])], "body",
                          [vi("i", [], i64), vi("cin", [], TensorProto.BOOL), vi("v", [2])],
                          [vi("cout", [], TensorProto.BOOL), vi("v2", [2]), vi("sc", [2])])
save("loop_runtime_scan", model([helper.make_node("Loop", ["n", "", "x"], ["y", "scan"], body=bodys, name="lp")],
                                [vi("x", [2]), vi("n", [], i64)], [vi("y", [2]), vi("scan", [None, 2])]),
     "node 0 'lp' (Loop): Loop: the trip count is known only at run time, and scan output 0 is used: its length would be known only at run time, and so would its bound, the trip count M, which comes from tensor values rather than from run-time dims; kgen sizes a scan output for a bound known when compiling: fix the inputs M depends on with --bind, compute M from the shape of an input whose dim has a range")
save("loop_too_long", model([helper.make_node("Loop", ["n", "", "x"], ["y", "scan"], body=bodys, name="lp")],
                            [vi("x", [2])], [vi("y", [2]), vi("scan", [None, 2])], inits=[helper.make_tensor("n", i64, [], [100000])]),
     "Loop: 100000 iterations of a body of 3 nodes, more than kgen unrolls (8192 nodes in all), and its scan outputs are used")
body1 = helper.make_graph([helper.make_node("Relu", ["v"], ["sc"])], "body",
                          [vi("i", [], i64), vi("cin", [], TensorProto.BOOL), vi("v", [2])],
                          [vi("cin", [], TensorProto.BOOL), vi("v", [2]), vi("sc", [2])])
save("loop_too_many", model([helper.make_node("Loop", ["n", "", "x"], ["y", "scan"], body=body1, name="lp")],
                            [vi("x", [2])], [vi("y", [2]), vi("scan", [None, 2])], inits=[helper.make_tensor("n", i64, [], [5000])]),
     "Loop: runs more than 4096 times, too many to unroll, and its scan outputs are used")
# a trip count from a run-time dim (Shape): the scan output's bound is the dim's top
save("loop_dim_bound", model([helper.make_node("Shape", ["x"], ["shp"], name="shape"),
                              helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0, name="gather"),
                              helper.make_node("Loop", ["n", "", "v"], ["y", "scan"], body=bodys, name="lp")],
                             [vi("v", [2]), vi("x", ["T", 2])], [vi("y", [2]), vi("scan", [None, 2])],
                             inits=[helper.make_tensor("zero", i64, [], [0])]),
     "Loop: the trip count is an extent decided at run time (at most 5000), and scan output 0 is used: its length would be known only at run time, and its bound, the trip count's top over the run-time dims' ranges, 5000, is more than kgen stacks at run time (4096)")
save_args("loop_dim_bound", "--dim T=1..5000")
bodyg = helper.make_graph([helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Concat", ["v", "v"], ["v2"], axis=0)],
                          "body", [vi("i", [], i64), vi("cin", [], TensorProto.BOOL), vi("v", [None])],
                          [vi("cout", [], TensorProto.BOOL), vi("v2", [None])])
save("loop_grows", model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=bodyg, name="lp")],
                         [vi("x", [2]), vi("n", [], i64)], [vi("y", [None])]),
     "Loop: loop-carried value 0 ('v') is f32[2] before the loop and f32[4] after an iteration; the trip count is known only at run time, so it runs as a loop")
bodyl = helper.make_graph([helper.make_node("Loop", ["n", "", "x"], ["t"], body=body, name="inner")], "t", [],
                          [helper.make_tensor_value_info("t", f32, None)])
save("loop_in_runtime_if", model(
         [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="rs"), helper.make_node("Greater", ["s", "zero"], ["c"], name="g"),
          helper.make_node("If", ["c"], ["y"], then_branch=bodyl, else_branch=branch("e", [helper.make_node("Relu", ["x"], ["e"])], "e"),
                           name="branch")],
         [vi("x", [2]), vi("n", [], i64)], [vi("y", None)], inits=[helper.make_tensor("zero", f32, [], [0])]),
     "Loop: the trip count is known only at run time, inside the branch of an If decided at run time")
bodyo = helper.make_graph([helper.make_node("Identity", ["cin"], ["cout"]),
                           helper.make_node("Loop", ["n", "", "v"], ["v2"], body=body, name="inner")], "body",
                          [vi("i", [], i64), vi("cin", [], TensorProto.BOOL), vi("v", [2])],
                          [vi("cout", [], TensorProto.BOOL), vi("v2", [2])])
save("loop_nested_runtime", model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=bodyo, name="outer")],
                                  [vi("x", [2]), vi("n", [], i64)], [vi("y", [2])]),
     "Loop: the trip count is known only at run time, inside the body of Loop 'outer', which runs at run time too")
save("loop_runtime_gpu", model([helper.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="lp")],
                               [vi("x", [2]), vi("n", [], i64)], [vi("y", [2])]),
     "Loop 'lp' runs as a loop at run time, which the metal host does not do yet")
save_args("loop_runtime_gpu", "--target metal")
# f8e8m0 (ONNX type 24): the conversion rounds up; the other round modes are refused by name
save("cast_e8m0_round_mode", model([helper.make_node("Cast", ["x"], ["y"], to=24, round_mode="nearest", name="c")],
                                   [vi("x", [4])], [vi("y", [4], 24)], opset=25),
     "node 0 'c' (Cast): Cast: round_mode 'nearest' to f8e8m0 is not supported (only 'up')")
