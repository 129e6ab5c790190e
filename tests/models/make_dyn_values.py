#!/usr/bin/python3
"""make_dyn_values.py - writes the models of tests/dyn_values.sh: operators whose output
extent depends on input values (NonZero, Compress, Unique, TopK with a run-time K,
NonMaxSuppression, the scan output of a Loop whose condition or trip count is known only at
run time),
each followed by elementwise operators, with several input sets whose counts differ (from
none selected to all).

For each model NAME this writes tests/models/NAME/net.onnx, the input sets in_S_I.npy
(set S, graph input I) and the references out_S_J.npy (output J of set S). References:
numpy/torch for NonZero, Compress, Unique and TopK (torch.nonzero, numpy.unique,
torch.topk); onnxruntime-node with graph optimizations disabled for NonMaxSuppression and
Loop (tests/bench/ort_run.mjs; onnxruntime-node in $ORT_DIR, default /work/ort-cache). The
files are committed: tests/dyn_values.sh needs neither python nor node.

    /usr/bin/python3 tests/models/make_dyn_values.py

Inputs are seeded; running it twice writes identical files.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORT_DIR = os.environ.get("ORT_DIR", "/work/ort-cache")


def save_model(name, nodes, inputs, outputs, inits=()):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_dyn_values.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(d, "net.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return d


def save_set(d, s, ins, outs):
    for i, a in enumerate(ins):
        np.save(os.path.join(d, "in_%d_%d.npy" % (s, i)), a)
    for j, a in enumerate(outs):
        np.save(os.path.join(d, "out_%d_%d.npy" % (s, j)), a)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def dyn_nonzero():
    """Relu, NonZero, then Cast * 2 + 1: the indices (int64) and the float result."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("NonZero", ["r"], ["idx"]),
        helper.make_node("Cast", ["idx"], ["idxf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["idxf", "two"], ["m"]),
        helper.make_node("Add", ["m", "one"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(2, np.float32), "two"),
             numpy_helper.from_array(np.array(1, np.float32), "one")]
    d = save_model("dyn_nonzero", nodes, [f32("x", [2, 3, 4])],
                   [f32("y", [3, None]), helper.make_tensor_value_info("idx", TensorProto.INT64, [3, None])], inits)
    rng = np.random.default_rng(11)
    for s, frac in enumerate([0.0, 0.25, 0.6, 1.0]):
        x = (rng.random((2, 3, 4)) + 0.1).astype(np.float32)
        x[rng.random((2, 3, 4)) >= frac] *= -1
        idx = torch.nonzero(torch.relu(torch.from_numpy(x))).T.contiguous().numpy().astype(np.int64)
        save_set(d, s, [x], [(idx.astype(np.float32) * 2 + 1).astype(np.float32), idx])


def dyn_compress():
    """Compress along axis 0 by a run-time condition, then Neg."""
    nodes = [
        helper.make_node("Compress", ["x", "cond"], ["c"], axis=0),
        helper.make_node("Neg", ["c"], ["y"]),
    ]
    d = save_model("dyn_compress", nodes,
                   [f32("x", [5, 3]), helper.make_tensor_value_info("cond", TensorProto.BOOL, [5])],
                   [f32("y", [None, 3])])
    rng = np.random.default_rng(12)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    for s, cond in enumerate([[0, 0, 0, 0, 0], [0, 1, 0, 0, 1], [1, 1, 0, 1, 1], [1, 1, 1, 1, 1]]):
        c = np.array(cond, dtype=bool)
        save_set(d, s, [x, c], [-np.compress(c, x, axis=0)])


def dyn_unique():
    """Unique (sorted) of a run-time vector: Y * 3 and its indices, inverse and counts."""
    nodes = [
        helper.make_node("Unique", ["x"], ["u", "ind", "inv", "cnt"], sorted=1),
        helper.make_node("Mul", ["u", "three"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(3, np.float32), "three")]
    i64 = TensorProto.INT64
    d = save_model("dyn_unique", nodes, [f32("x", [10])],
                   [f32("y", [None]), helper.make_tensor_value_info("ind", i64, [None]),
                    helper.make_tensor_value_info("inv", i64, [10]), helper.make_tensor_value_info("cnt", i64, [None])],
                   inits)
    rng = np.random.default_rng(13)
    for s, k in enumerate([1, 3, 6, 10]):
        vals = rng.permutation(np.arange(-5, 5))[:k].astype(np.float32) / 2
        x = np.concatenate([vals, rng.choice(vals, 10 - k)]).astype(np.float32)
        x = x[rng.permutation(10)]
        u, ind, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        save_set(d, s, [x], [(u * 3).astype(np.float32), ind.astype(np.int64), inv.astype(np.int64),
                             cnt.astype(np.int64)])


def dyn_topk():
    """TopK of a run-time K along axis 1: values * 2 and the indices."""
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
        helper.make_node("Mul", ["v", "two"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(2, np.float32), "two")]
    d = save_model("dyn_topk", nodes, [f32("x", [3, 8]), helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                   [f32("y", [3, None]), helper.make_tensor_value_info("i", TensorProto.INT64, [3, None])], inits)
    rng = np.random.default_rng(14)
    for s, k in enumerate([1, 3, 8]):
        x = np.stack([rng.permutation(8) for _ in range(3)]).astype(np.float32) - 3.5   # distinct per row
        v, i = torch.topk(torch.from_numpy(x), k, dim=1)
        save_set(d, s, [x, np.array([k], np.int64)], [(v.numpy() * 2).astype(np.float32), i.numpy().astype(np.int64)])


def dyn_nms():
    """NonMaxSuppression (2 classes, at most 3 boxes each), then Cast + 0.5 (float rows)."""
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "maxb", "iou", "sthr"], ["sel"]),
        helper.make_node("Cast", ["sel"], ["self"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["self", "half"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array([3], np.int64), "maxb"),
             numpy_helper.from_array(np.array([0.4], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.3], np.float32), "sthr"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    d = save_model("dyn_nms", nodes, [f32("boxes", [1, 8, 4]), f32("scores", [1, 2, 8])], [f32("y", [None, 3])], inits)
    rng = np.random.default_rng(15)
    for s, spread in enumerate([0.0, 0.5, 1.2, 6.0]):
        lo = rng.random((1, 8, 2)).astype(np.float32) * spread
        boxes = np.concatenate([lo, lo + 1 + rng.random((1, 8, 2)).astype(np.float32)], axis=2)
        scores = rng.permutation(16).reshape(1, 2, 8).astype(np.float32) / 16 + (0.0 if s else -1.0)
        save_set(d, s, [boxes.astype(np.float32), scores.astype(np.float32)], [])
        ort_ref(d, s, 2)


def dyn_mixed():
    """NonZero's count meets a dim given at run time (--dim W=1..6, in kgen_args): Cast + z,
    which the model checks agree while it runs (bad_0_*.npy: they do not)."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["i"]),
        helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["f", "z"], ["y"]),
    ]
    d = save_model("dyn_mixed", nodes, [f32("x", [2, 3]), f32("z", [2, "W"])], [f32("y", [2, None])])
    with open(os.path.join(d, "kgen_args"), "w") as f:
        f.write("--dim W=1..6\n")
    rng = np.random.default_rng(16)
    for s, n in enumerate([1, 3, 6]):
        x = np.zeros(6, np.float32)
        x[rng.permutation(6)[:n]] = rng.random(n).astype(np.float32) + 0.5
        x = x.reshape(2, 3)
        z = rng.standard_normal((2, n)).astype(np.float32)
        idx = torch.nonzero(torch.from_numpy(x)).T.contiguous().numpy().astype(np.float32)
        save_set(d, s, [x, z], [(idx + z).astype(np.float32)])
    np.save(os.path.join(d, "bad_0_0.npy"), np.ones((2, 3), np.float32))
    np.save(os.path.join(d, "bad_0_1.npy"), np.ones((2, 2), np.float32))


def ort_ref(d, s, nin):
    """Output 0 of set s by onnxruntime-node, graph optimizations disabled."""
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "out.npy")
        ins = [os.path.join(d, "in_%d_%d.npy" % (s, i)) for i in range(nin)]
        subprocess.run(["node", os.path.join(ROOT, "tests/bench/ort_run.mjs"), os.path.join(d, "net.onnx")] + ins +
                       ["--runs", "1", "--warmup", "0", "--ort", ORT_DIR, "--opt", "disabled", "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        np.save(os.path.join(d, "out_%d_0.npy" % s), np.load(out))


def dyn_loop():
    """A Loop of at most 6 iterations while a running sum stays under a run-time limit: its
    scan output (a row per iteration run) through Relu."""
    f = TensorProto.FLOAT
    body = helper.make_graph([
        helper.make_node("Cast", ["it"], ["itf"], to=f),
        helper.make_node("Add", ["s", "itf"], ["s1"]),
        helper.make_node("Mul", ["s1", "xs"], ["scan"]),
        helper.make_node("ReduceSum", ["s1"], ["tot"], keepdims=1),
        helper.make_node("Less", ["tot", "lim"], ["cond_out"]),
    ], "body", [helper.make_tensor_value_info("it", TensorProto.INT64, []),
                helper.make_tensor_value_info("cin", TensorProto.BOOL, []), f32("s", [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [1]), f32("s1", [2]), f32("scan", [2])])
    nodes = [helper.make_node("Loop", ["M", "t", "s0"], ["sf", "scans"], body=body),
             helper.make_node("Relu", ["scans"], ["y"])]
    inits = [numpy_helper.from_array(np.array(6, np.int64), "M"), numpy_helper.from_array(np.array(True), "t")]
    d = save_model("dyn_loop", nodes, [f32("s0", [2]), f32("lim", [1]), f32("xs", [2])],
                   [f32("y", [None, 2]), f32("sf", [2])], inits)
    for s, lim in enumerate([0.5, 3.0, 12.0, 100.0]):
        save_set(d, s, [np.array([0, 1], np.float32), np.array([lim], np.float32), np.array([1, -2], np.float32)], [])
        ort_ref(d, s, 3)


def dyn_loopm():
    """A Loop whose trip count is the run-time length of xs (M = Shape(xs)[0], --dim T=1..8 in
    kgen_args: the scan output's buffer holds 8 rows, its extent is T) and which has no
    condition: a running sum times w per iteration, its scan output through Relu, plus xs."""
    f = TensorProto.FLOAT
    body = helper.make_graph([
        helper.make_node("Identity", ["cin"], ["cond_out"]),
        helper.make_node("Cast", ["it"], ["itf"], to=f),
        helper.make_node("Add", ["s", "itf"], ["s1"]),
        helper.make_node("Mul", ["s1", "w"], ["scan"]),
    ], "body", [helper.make_tensor_value_info("it", TensorProto.INT64, []),
                helper.make_tensor_value_info("cin", TensorProto.BOOL, []), f32("s", [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), f32("s1", [2]), f32("scan", [2])])
    nodes = [helper.make_node("Shape", ["xs"], ["shp"]),
             helper.make_node("Gather", ["shp", "zero"], ["M"], axis=0),
             helper.make_node("Loop", ["M", "", "s0"], ["sf", "scans"], body=body),
             helper.make_node("Relu", ["scans"], ["r"]),
             helper.make_node("Add", ["r", "xs"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([1, -2], np.float32), "w")]
    d = save_model("dyn_loopm", nodes, [f32("s0", [2]), f32("xs", ["T", 2])], [f32("y", ["T", 2]), f32("sf", [2])],
                   inits)
    with open(os.path.join(d, "kgen_args"), "w") as fa:
        fa.write("--dim T=1..8\n")
    rng = np.random.default_rng(17)
    for s, t in enumerate([1, 3, 8]):
        s0 = np.array([0.5, -1.0], np.float32)
        xs = rng.standard_normal((t, 2)).astype(np.float32)
        # numpy: the same running sum
        acc, rows = s0.copy(), []
        for i in range(t):
            acc = (acc + np.float32(i)).astype(np.float32)
            rows.append(acc * np.array([1, -2], np.float32))
        y = (np.maximum(np.stack(rows), 0) + xs).astype(np.float32)
        save_set(d, s, [s0, xs], [y, acc])
        ort_ref(d, s, 2)
        assert np.allclose(np.load(os.path.join(d, "out_%d_0.npy" % s)), y, rtol=1e-6, atol=1e-6)


def dyn_loopmc():
    """dyn_loop with its trip count the run-time length of xs (M = Shape(xs)[0], --dim T=1..8 in
    kgen_args) and its condition a running sum under a run-time limit: the scan output's
    buffer holds 8 rows, its extent is the iterations run, computed from values."""
    f = TensorProto.FLOAT
    body = helper.make_graph([
        helper.make_node("Cast", ["it"], ["itf"], to=f),
        helper.make_node("Add", ["s", "itf"], ["s1"]),
        helper.make_node("Mul", ["s1", "w"], ["scan"]),
        helper.make_node("ReduceSum", ["s1"], ["tot"], keepdims=1),
        helper.make_node("Less", ["tot", "lim"], ["cond_out"]),
    ], "body", [helper.make_tensor_value_info("it", TensorProto.INT64, []),
                helper.make_tensor_value_info("cin", TensorProto.BOOL, []), f32("s", [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [1]), f32("s1", [2]), f32("scan", [2])])
    nodes = [helper.make_node("Shape", ["xs"], ["shp"]),
             helper.make_node("Gather", ["shp", "zero"], ["M"], axis=0),
             helper.make_node("Loop", ["M", "t", "s0"], ["sf", "scans"], body=body),
             helper.make_node("Relu", ["scans"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(True), "t"),
             numpy_helper.from_array(np.array([1, -2], np.float32), "w")]
    d = save_model("dyn_loopmc", nodes, [f32("s0", [2]), f32("lim", [1]), f32("xs", ["T", 2])],
                   [f32("y", [None, 2]), f32("sf", [2])], inits)
    with open(os.path.join(d, "kgen_args"), "w") as fa:
        fa.write("--dim T=1..8\n")
    # (T, lim): the count ends the loop, the condition does, none run past the first
    for s, (t, lim) in enumerate([(8, 0.5), (3, 100.0), (8, 12.0), (5, 1e4)]):
        xs = np.zeros((t, 2), np.float32)
        save_set(d, s, [np.array([0, 1], np.float32), np.array([lim], np.float32), xs], [])
        ort_ref(d, s, 3)


def main():
    for f in [dyn_nonzero, dyn_compress, dyn_unique, dyn_topk, dyn_nms, dyn_mixed, dyn_loop, dyn_loopm, dyn_loopmc]:
        if len(sys.argv) < 2 or f.__name__ in sys.argv[1:]:
            f()
            print("wrote", f.__name__)


if __name__ == "__main__":
    main()
