#!/usr/bin/python3
"""make_models.py - writes the corpus of tests/published.sh: small models shaped like the
ones people publish (symbolic and unnamed dims, If, Loop, bound inputs, NHWC converters,
streaming state, extra opset domains), each with the kgen options that make it compile.

For each model NAME this writes, under tests/published/NAME/:
  model.onnx      the model (torch.onnx.export, opset 13, or built with onnx.helper)
  args            one line: the kgen options it needs (--dim, --input-shape, --bind)
  input_K.npy     the K-th input the generated runner takes (a bound input is not one)
  output_K.npy    the K-th graph output, computed by torch itself (the reference)
  data_S/         further data sets (input_K.npy, output_K.npy) for the same build,
                  e.g. the other side of a run-time If, or the next streaming step

    /usr/bin/python3 tests/published/make_models.py [NAME ...]      (default: all)

Needs Debian's python3-torch (1.13), python3-onnx (1.12) and python3-numpy: use
/usr/bin/python3. Everything is seeded; batch-norm layers get statistics measured on
random batches in train mode and then perturbed; no head is zero-initialised. Running
the script twice writes identical files. The files are committed: the test needs no
python.
"""
import io
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13
warnings.filterwarnings("ignore")


# ---------------------------------------------------------------- helpers

def seed(n):
    torch.manual_seed(n)
    np.random.seed(n)


def calibrate_batchnorm(model, batches, seed_):
    """Random BN affine parameters, running statistics from a few train-mode batches, then
    perturbed, so every BN is a real, non-trivial affine map after folding."""
    g = torch.Generator().manual_seed(seed_)
    bns = [m for m in model.modules() if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))]
    for bn in bns:
        c = bn.num_features
        with torch.no_grad():
            bn.weight.copy_(0.6 + 0.8 * torch.rand(c, generator=g))
            bn.bias.copy_(0.2 * torch.randn(c, generator=g))
        bn.reset_running_stats()
        bn.momentum = None              # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for b in batches:
            model(*b) if isinstance(b, tuple) else model(b)
    for bn in bns:
        c = bn.num_features
        with torch.no_grad():
            bn.running_mean.add_(0.1 * torch.randn(c, generator=g) * bn.running_var.sqrt())
            bn.running_var.mul_(0.7 + 0.6 * torch.rand(c, generator=g))
        bn.momentum = 0.1
    model.eval()


def export(module, args, input_names, output_names, dynamic_axes=None):
    buf = io.BytesIO()
    torch.onnx.export(module, args, buf, opset_version=OPSET, do_constant_folding=True,
                      input_names=input_names, output_names=output_names,
                      dynamic_axes=dynamic_axes)
    return onnx.load_from_string(buf.getvalue())


def unname_dim(model, input_name, axis):
    """Make one dim of a graph input '?': neither dim_value nor dim_param."""
    for i in model.graph.input:
        if i.name == input_name:
            i.type.tensor_type.shape.dim[axis].Clear()
            return
    raise KeyError(input_name)


def rename_dim(model, input_name, axis, param):
    for i in model.graph.input:
        if i.name == input_name:
            d = i.type.tensor_type.shape.dim[axis]
            d.Clear()
            d.dim_param = param
            return
    raise KeyError(input_name)


def numpy_outputs(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res += numpy_outputs(o)
        return res
    return [out.detach().numpy()]


def write(name, model, args, inputs, outputs, extra_sets=()):
    """model: ModelProto; args: the kgen options; inputs/outputs: lists of numpy arrays
    (the runner's inputs, the graph's outputs); extra_sets: (inputs, outputs) pairs."""
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    onnx.checker.check_model(model)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(d, "args"), "w") as f:
        f.write(args + "\n")
    sets = [(d, inputs, outputs)]
    for s, (ins, outs) in enumerate(extra_sets, 1):
        sets.append((os.path.join(d, "data_%d" % s), ins, outs))
    for sd, ins, outs in sets:
        os.makedirs(sd, exist_ok=True)
        for k, a in enumerate(ins):
            np.save(os.path.join(sd, "input_%d.npy" % k), np.ascontiguousarray(a) if a.ndim else a)
        for k, a in enumerate(outs):
            np.save(os.path.join(sd, "output_%d.npy" % k), np.ascontiguousarray(a) if a.ndim else a)
    nw = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    print("%-18s %7d bytes of initializers  args: %s" % (name, nw, args))


# ---------------------------------------------------------------- a. CNN, dynamic N, H, W

class DynCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 2, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
            nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(32, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.Hardswish())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        y = self.features(x)
        y = F.adaptive_avg_pool2d(y, 1)
        y = y.view(y.size(0), -1)               # Shape/Gather/Concat/Reshape to fold
        return self.head(y)


def cnn_dynamic():
    seed(11)
    m = DynCNN()
    calibrate_batchnorm(m, [torch.randn(8, 3, 32, 40) for _ in range(3)], 111)
    x = torch.randn(1, 3, 32, 40)
    model = export(m, (x,), ["input"], ["logits"],
                   {"input": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}})
    unname_dim(model, "input", 2)           # H becomes '?': only --input-shape fixes it
    with torch.no_grad():
        y = m(x)
    write("cnn_dynamic", model, "--input-shape input=1,3,32,40", [x.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- b. sequence block, dynamic batch, seq

class SeqBlock(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.conv = nn.Conv1d(d, d, 5, padding=2, groups=d)
        self.norm2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 64)
        self.ff2 = nn.Linear(64, d)
        self.out = nn.Linear(d, 6)

    def forward(self, x):                     # x: [batch, seq, 32]
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // h) ** 0.5, dim=-1)
        y = (a @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.conv(x.transpose(1, 2)).transpose(1, 2)
        x = x + self.ff2(F.gelu(self.ff1(self.norm2(x))))
        return self.out(x)


def seq_dynamic():
    seed(12)
    m = SeqBlock()
    g = torch.Generator().manual_seed(112)
    with torch.no_grad():
        for ln in (m.norm1, m.norm2):
            ln.weight.copy_(1.0 + 0.2 * torch.randn(32, generator=g))
            ln.bias.copy_(0.1 * torch.randn(32, generator=g))
    m.eval()
    x = torch.randn(1, 20, 32)
    model = export(m, (torch.randn(2, 11, 32),), ["x"], ["y"],
                   {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    with torch.no_grad():
        y = m(x)
    write("seq_dynamic", model, "--dim batch=1 --dim seq=20", [x.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- c. If decided at run time

class RuntimeIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        if bool(x.sum() > 0):
            y = torch.relu(self.conv(x))
        else:
            y = self.conv2(x) * 0.5
        return self.head(y)


def if_runtime():
    seed(13)
    m = RuntimeIf().eval()
    s = torch.jit.script(m)
    x = torch.randn(1, 3, 16, 16)
    pos = x.abs() * 0.5 + 0.1 * x          # sum > 0: the then branch
    neg = -pos                             # sum < 0: the else branch
    model = export(s, (pos,), ["x"], ["y"], {"x": {0: "N"}, "y": {0: "N"}})
    with torch.no_grad():
        yp, yn = m(pos), m(neg)
    assert pos.sum() > 0 and neg.sum() < 0
    write("if_runtime", model, "--dim N=1", [pos.numpy()], numpy_outputs(yp),
          [([neg.numpy()], numpy_outputs(yn))])


# ---------------------------------------------------------------- d. Loop over a dim

class StepLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(12, 24)
        self.rec = nn.Linear(24, 24)
        self.out = nn.Linear(24, 5)

    def forward(self, x):                    # x: [batch, steps, 12]
        h = torch.zeros(x.size(0), 24)
        for t in range(x.size(1)):          # Loop whose trip count is a dim
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
        return self.out(h)


def loop_steps():
    seed(14)
    m = StepLoop().eval()
    s = torch.jit.script(m)
    x = torch.randn(1, 6, 12)
    model = export(s, (torch.randn(2, 4, 12),), ["x"], ["y"],
                   {"x": {0: "batch", 1: "steps"}, "y": {0: "batch"}})
    assert any(n.op_type == "Loop" for n in model.graph.node)
    with torch.no_grad():
        y = m(x)
    write("loop_steps", model, "--dim batch=1 --dim steps=6", [x.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- d2. Loops decided at run time

def write_refused(name, what):
    """The targets that refuse the model (published.sh checks the message)."""
    with open(os.path.join(HERE, name, "refused"), "w") as f:
        for t in ("metal",):
            f.write("%s %s\n" % (t, what))


class NewtonSqrt(nn.Module):
    """A while loop on the data: Newton's method until the square is within 1e-4 (a Loop
    with an unbounded count and a condition known only at run time)."""
    def forward(self, x):
        y = x
        i = torch.zeros(1, dtype=torch.long)
        d = (y * y - x).abs().max()
        while bool(d > 1e-4):
            y = 0.5 * (y + x / y)
            d = (y * y - x).abs().max()
            i = i + 1
        return y, i


def loop_while():
    seed(21)
    m = torch.jit.script(NewtonSqrt())
    model = export(m, (torch.rand(1, 16) + 0.5,), ["x"], ["root", "steps"], {"x": {1: "n"}})
    assert any(n.op_type == "Loop" for n in model.graph.node)
    sets = []
    for scale in (3.0, 0.01, 400.0):
        x = torch.rand(1, 16) * scale + 0.5 * scale
        with torch.no_grad():
            sets.append(([x.numpy()], numpy_outputs(m(x))))
    assert len({int(s[1][1][0]) for s in sets}) > 1     # the data sets take different counts
    write("loop_while", model, "--dim n=16", *sets[0], sets[1:])
    write_refused("loop_while", "runs as a loop at run time")


class FixedPoint(nn.Module):
    """At most 40 steps of a contraction, stopping early once it has converged: a Loop
    with a known count whose condition the body computes (torch's `break`)."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(12, 12)
        self.inp = nn.Linear(12, 12)

    def forward(self, x):
        u = self.inp(x)
        h = torch.zeros_like(u)
        for _ in range(40):
            h_new = 0.5 * torch.tanh(self.lin(h) + u)
            done = bool((h_new - h).abs().max() < 1e-3)
            h = h_new
            if done:
                break
        return h


def loop_break():
    seed(22)
    m = FixedPoint().eval()
    s = torch.jit.script(m)
    model = export(s, (torch.randn(2, 12),), ["x"], ["h"], {"x": {0: "batch"}})
    assert any(n.op_type == "Loop" for n in model.graph.node)
    xs = [torch.randn(2, 12), 4 * torch.randn(2, 12)]
    with torch.no_grad():
        outs = [numpy_outputs(m(x)) for x in xs]
    write("loop_break", model, "--dim batch=2", [xs[0].numpy()], outs[0], [([xs[1].numpy()], outs[1])])
    write_refused("loop_break", "runs as a loop at run time")


class ConvSteps(nn.Module):
    """n refinement steps of a conv block, n a graph input (a Loop whose trip count is
    known only at run time; the conv is blocked by the layout pass inside the loop)."""
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.step = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x, n: int):
        u = torch.relu(self.stem(x))
        h = u
        for _ in range(n):
            h = torch.relu(self.step(h) * 0.5 + u)
        return self.head(h)


def loop_count():
    seed(23)
    m = ConvSteps().eval()
    s = torch.jit.script(m)
    model = export(s, (torch.randn(1, 3, 10, 10), torch.tensor(2)), ["x", "n"], ["y"])
    assert any(n.op_type == "Loop" for n in model.graph.node)
    sets = []
    for n in (3, 0, 6):
        x = torch.randn(1, 3, 10, 10)
        with torch.no_grad():
            y = m(x, n)
        sets.append(([x.numpy(), np.array(n, dtype=np.int64)], numpy_outputs(y)))
    write("loop_count", model, "", *sets[0], sets[1:])
    write_refused("loop_count", "runs as a loop at run time")


def loop_long():
    """10000 steps of a leaky integrator, a constant count with no condition: too many to
    unroll, so a counted loop (built with onnx.helper; numpy is the reference)."""
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Mul", ["s_in", "decay"], ["s_decayed"]),
         helper.make_node("Add", ["s_decayed", "x"], ["s_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("iter", i64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", f32, [1, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", f32, [1, 8])],
        [numpy_helper.from_array(np.full((1, 8), 0.999, np.float32), "decay")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body)],
        "loop_long",
        [helper.make_tensor_value_info("x", f32, [1, 8]), helper.make_tensor_value_info("s0", f32, [1, 8])],
        [helper.make_tensor_value_info("s", f32, [1, 8])],
        [numpy_helper.from_array(np.array(10000, np.int64), "M")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    g = np.random.RandomState(124)
    sets = []
    for _ in range(2):
        x = (g.randn(1, 8) * 0.01).astype(np.float32)
        s0 = g.randn(1, 8).astype(np.float32)
        s = s0.copy()
        decay = np.float32(0.999)
        for _ in range(10000):
            s = (s * decay + x).astype(np.float32)
        sets.append(([x, s0], [s]))
    write("loop_long", model, "", *sets[0], sets[1:])
    write_refused("loop_long", "runs as a loop at run time")


def loop_converge():
    """At most 50 steps of s = 0.5 s + x, stopping once a step changes s by less than 1e-3:
    a constant count and a condition the body computes from the data (onnx.helper; numpy
    is the reference)."""
    f32, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Mul", ["s_in", "half"], ["s_half"]),
         helper.make_node("Add", ["s_half", "x"], ["s_out"]),
         helper.make_node("Sub", ["s_out", "s_in"], ["delta"]),
         helper.make_node("Abs", ["delta"], ["adelta"]),
         helper.make_node("ReduceMax", ["adelta"], ["change"], keepdims=0),
         helper.make_node("Greater", ["change", "tol"], ["cond_out"]),
         helper.make_node("Add", ["n_in", "one"], ["n_out"])],
        "body",
        [helper.make_tensor_value_info("iter", i64, []), helper.make_tensor_value_info("cond_in", b, []),
         helper.make_tensor_value_info("s_in", f32, [1, 8]), helper.make_tensor_value_info("n_in", i64, [])],
        [helper.make_tensor_value_info("cond_out", b, []), helper.make_tensor_value_info("s_out", f32, [1, 8]),
         helper.make_tensor_value_info("n_out", i64, [])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(1e-3, np.float32), "tol"),
         numpy_helper.from_array(np.array(1, np.int64), "one")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "go", "s0", "n0"], ["s", "steps"], body=body)],
        "loop_converge",
        [helper.make_tensor_value_info("x", f32, [1, 8]), helper.make_tensor_value_info("s0", f32, [1, 8])],
        [helper.make_tensor_value_info("s", f32, [1, 8]), helper.make_tensor_value_info("steps", i64, [])],
        [numpy_helper.from_array(np.array(50, np.int64), "M"), numpy_helper.from_array(np.array(True), "go"),
         numpy_helper.from_array(np.array(0, np.int64), "n0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    g = np.random.RandomState(125)
    sets = []
    for scale in (1.0, 1e-4, 1e3):
        x = (g.randn(1, 8) * scale).astype(np.float32)
        s0 = np.zeros((1, 8), np.float32)
        s, n = s0, 0
        for _ in range(50):
            s_new = (s * np.float32(0.5) + x).astype(np.float32)
            go = np.abs(s_new - s).max() > np.float32(1e-3)
            s, n = s_new, n + 1
            if not go:
                break
        sets.append(([x, s0], [s, np.array(n, np.int64)]))
    assert len({int(o[1]) for _, o in sets}) == 3        # converges early, at once, never
    write("loop_converge", model, "", *sets[0], sets[1:])
    write_refused("loop_converge", "runs as a loop at run time")


# ---------------------------------------------------------------- e. If on a sample rate, nested Ifs on shapes

class SampleRateNet(nn.Module):
    """Like a voice-activity model: the sample rate picks the front end, and inside each
    branch the input length picks a variant; then a shared encoder."""
    def __init__(self):
        super().__init__()
        self.fe16_long = nn.Conv1d(1, 16, 9, stride=4)
        self.fe16_short = nn.Conv1d(1, 16, 5, stride=2)
        self.fe8_long = nn.Conv1d(1, 16, 5, stride=2)
        self.fe8_short = nn.Conv1d(1, 16, 3, stride=1)
        self.enc = nn.Sequential(nn.Conv1d(16, 24, 3, padding=1), nn.BatchNorm1d(24), nn.ReLU(),
                                 nn.Conv1d(24, 24, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Linear(24, 2)

    def forward(self, x, sr: int):           # x: [1, samples]
        x = x.unsqueeze(1)
        if sr == 16000:
            if x.shape[-1] > 512:
                f = self.fe16_long(x)
            else:
                f = self.fe16_short(x)
        elif sr == 8000:
            if x.shape[-1] > 256:
                f = self.fe8_long(x)
            else:
                f = self.fe8_short(x)
        else:
            f = torch.zeros(1, 16, 8)
        y = self.enc(torch.relu(f))
        return torch.sigmoid(self.head(y.mean(dim=2)))


def sr_nested_if():
    seed(15)
    m = SampleRateNet()
    calibrate_batchnorm(m, [(torch.randn(4, 640), 16000), (torch.randn(4, 200), 8000)], 115)
    s = torch.jit.script(m)
    model = export(s, (torch.randn(1, 640), torch.tensor(16000)), ["x", "sr"], ["prob"],
                   {"x": {1: "samples"}})
    x16 = torch.randn(1, 640)
    x8 = torch.randn(1, 200)
    with torch.no_grad():
        y16, y8 = m(x16, 16000), m(x8, 8000)
    # the same model, two builds: 16 kHz with 640 samples (then, then) and 8 kHz with 200
    write("sr_nested_if", model, "--bind sr=16000 --dim samples=640", [x16.numpy()], numpy_outputs(y16))
    write("sr_nested_if_8k", model, "--bind sr=8000 --dim samples=200", [x8.numpy()], numpy_outputs(y8))


# ---------------------------------------------------------------- f. If on a comparison of two constants

def if_const_cond():
    seed(16)
    g = np.random.RandomState(116)
    w = (g.randn(8, 4, 3, 3) * 0.3).astype(np.float32)
    b = (g.randn(8) * 0.1).astype(np.float32)
    scale = (g.rand(1, 8, 1, 1) + 0.5).astype(np.float32)
    f32 = TensorProto.FLOAT

    def const(name, value):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(np.array(value, dtype=np.float32), name))

    # then: (relu(c) * scale, mean over H, W); else: (sigmoid(c), max over H, W);
    # both read the outer tensor c and the outer initializer scale
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["c"], ["t_relu"]),
         helper.make_node("Mul", ["t_relu", "scale"], ["t_y"]),
         helper.make_node("ReduceMean", ["t_y"], ["t_pool"], axes=[2, 3], keepdims=0)],
        "then_branch", [],
        [helper.make_tensor_value_info("t_y", f32, [None, 8, 10, 12]),
         helper.make_tensor_value_info("t_pool", f32, [None, 8])])
    else_g = helper.make_graph(
        [helper.make_node("Sigmoid", ["c"], ["e_y"]),
         helper.make_node("ReduceMax", ["e_y"], ["e_pool"], axes=[2, 3], keepdims=0)],
        "else_branch", [],
        [helper.make_tensor_value_info("e_y", f32, [None, 8, 10, 12]),
         helper.make_tensor_value_info("e_pool", f32, [None, 8])])
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        const("version", 3.0),
        const("threshold", 2.0),
        helper.make_node("Greater", ["version", "threshold"], ["cond"], name="greater"),
        helper.make_node("If", ["cond"], ["y", "pool"], name="If_0",
                         then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(
        nodes, "if_const_cond",
        [helper.make_tensor_value_info("x", f32, [None, 4, 10, 12])],
        [helper.make_tensor_value_info("y", f32, [None, 8, 10, 12]),
         helper.make_tensor_value_info("pool", f32, [None, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(scale, "scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="kgen-tests")
    model.ir_version = 7
    unname_dim(model, "x", 0)
    x = torch.randn(1, 4, 10, 12)
    c = F.conv2d(x, torch.from_numpy(w), torch.from_numpy(b), padding=1)
    y = torch.relu(c) * torch.from_numpy(scale)       # 3.0 > 2.0: the then branch
    pool = y.mean(dim=(2, 3))
    write("if_const_cond", model, "--input-shape x=1,4,10,12", [x.numpy()], [y.numpy(), pool.numpy()])


# ---------------------------------------------------------------- g. Keras-style NHWC

class KerasNHWC(nn.Module):
    """What TensorFlow converters emit: NHWC tensors, a Transpose to NCHW before every
    conv and one back after it, activations in NHWC, a global average at the end."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.c3 = nn.Conv2d(16, 24, 1)
        self.c4 = nn.Conv2d(24, 24, 3, padding=1)
        self.dense = nn.Linear(24, 7)

    def forward(self, x):                    # x: [batch, 24, 20, 3]
        for conv in (self.c1, self.c2, self.c3, self.c4):
            x = conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
            x = torch.relu(x)
        # two outputs: the class scores and the last feature map (NHWC), which a wrong
        # spatial layout could not hide behind the global average
        return torch.softmax(self.dense(x.mean(dim=(1, 2))), dim=-1), x


def keras_nhwc():
    seed(17)
    m = KerasNHWC().eval()
    with torch.no_grad():
        m.dense.weight.mul_(16.0)            # scores far from uniform
    x = torch.randn(1, 24, 20, 3)
    model = export(m, (x,), ["input_1"], ["dense_1", "conv2d_3"],
                   {"input_1": {0: "unk__42"}, "dense_1": {0: "unk__43"}, "conv2d_3": {0: "unk__44"}})
    assert sum(n.op_type == "Transpose" for n in model.graph.node) >= 8
    with torch.no_grad():
        y = m(x)
    write("keras_nhwc", model, "--dim unk__42=1", [x.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- h. streaming step with state

class LSTMStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.fe = nn.Linear(40, 32)
        self.lstm = nn.LSTM(32, 32, batch_first=True)
        self.head = nn.Linear(32, 3)

    def forward(self, x, h, c):              # x: [batch, 1, 40]; h, c: [1, batch, 32]
        y, (h2, c2) = self.lstm(torch.relu(self.fe(x)), (h, c))
        return torch.log_softmax(self.head(y), dim=-1), h2, c2


class GRUStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 24, batch_first=True)
        self.head = nn.Linear(24, 1)

    def forward(self, x, h):                 # x: [batch, 1, 16]; h: [1, batch, 24]
        y, h2 = self.gru(x, h)
        return torch.sigmoid(self.head(y)), h2


def lstm_stream():
    seed(18)
    m = LSTMStep().eval()
    x0, x1 = torch.randn(1, 1, 40), torch.randn(1, 1, 40)
    h0 = 0.5 * torch.randn(1, 1, 32)
    c0 = 0.5 * torch.randn(1, 1, 32)
    model = export(m, (x0, h0, c0), ["x", "h", "c"], ["out", "hn", "cn"],
                   {"x": {0: "batch"}, "h": {1: "batch"}, "c": {1: "batch"},
                    "out": {0: "batch"}, "hn": {1: "batch"}, "cn": {1: "batch"}})
    with torch.no_grad():
        o0, h1, c1 = m(x0, h0, c0)
        o1, h2, c2 = m(x1, h1, c1)          # the next step, fed the state of the first
    write("lstm_stream", model, "--dim batch=1",
          [x0.numpy(), h0.numpy(), c0.numpy()], numpy_outputs((o0, h1, c1)),
          [([x1.numpy(), h1.numpy(), c1.numpy()], numpy_outputs((o1, h2, c2)))])


def gru_stream():
    seed(19)
    m = GRUStep().eval()
    x0, x1 = torch.randn(1, 1, 16), torch.randn(1, 1, 16)
    h0 = 0.5 * torch.randn(1, 1, 24)
    # dynamic_axes as lists: torch names the dims itself, input_dynamic_axes_1 and
    # state_dynamic_axes_1, two symbols for one batch
    model = export(m, (x0, h0), ["input", "state"], ["prob", "state_out"],
                   {"input": [0], "state": [1], "prob": [0], "state_out": [1]})
    syms = [d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param]
    assert syms == ["input_dynamic_axes_1", "state_dynamic_axes_1"], syms
    with torch.no_grad():
        p0, h1 = m(x0, h0)
        p1, h2 = m(x1, h1)
    write("gru_stream", model, "--dim input_dynamic_axes_1=1 --dim state_dynamic_axes_1=1",
          [x0.numpy(), h0.numpy()], numpy_outputs((p0, h1)),
          [([x1.numpy(), h1.numpy()], numpy_outputs((p1, h2)))])


# ---------------------------------------------------------------- i. unused extra opset domains

class TinyClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(40, 64), nn.BatchNorm1d(64), nn.ReLU(),
                                 nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)


def extra_domains():
    seed(20)
    m = TinyClassifier()
    calibrate_batchnorm(m, [torch.randn(16, 40) for _ in range(3)], 120)
    x = torch.randn(1, 40)
    model = export(m, (x,), ["features"], ["scores"], {"features": {0: "N"}, "scores": {0: "N"}})
    # what ONNX Runtime's tools and converters leave: domains imported, none used
    model.opset_import.extend([helper.make_opsetid("com.microsoft", 1),
                               helper.make_opsetid("ai.onnx.ml", 3)])
    unname_dim(model, "features", 0)
    with torch.no_grad():
        y = m(x)
    write("extra_domains", model, "--input-shape features=1,40", [x.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- j. U-Net decoder, ConvTranspose

class UNetDecoder(nn.Module):
    """ConvTranspose upsamplers as U-Nets, GANs and detector heads use them, at uneven
    sizes: odd H and W, output_padding, k 4 s 2 p 1, a grouped one, stride 3 by 2."""
    def __init__(self):
        super().__init__()
        self.up1 = nn.Sequential(nn.ConvTranspose2d(16, 16, 3, 2, 1, output_padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.mix = nn.Sequential(nn.Conv2d(24, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.up2 = nn.Sequential(nn.ConvTranspose2d(16, 16, 4, 2, 1, groups=4, bias=False), nn.BatchNorm2d(16),
                                 nn.ReLU())
        self.up3 = nn.ConvTranspose2d(16, 3, (3, 2), (3, 2), (1, 0), output_padding=(2, 1))

    def forward(self, x, skip):              # x: [1, 16, 7, 9]; skip: [1, 8, 14, 18]
        y = self.mix(torch.cat([self.up1(x), skip], 1))
        return torch.sigmoid(self.up3(self.up2(y)))


def unet_convt():
    seed(21)
    m = UNetDecoder()
    calibrate_batchnorm(m, [(torch.randn(4, 16, 7, 9), torch.randn(4, 8, 14, 18)) for _ in range(3)], 121)
    x, skip = torch.randn(1, 16, 7, 9), torch.randn(1, 8, 14, 18)
    model = export(m, (x, skip), ["x", "skip"], ["image"])
    assert sum(n.op_type == "ConvTranspose" for n in model.graph.node) == 3
    with torch.no_grad():
        y = m(x, skip)
    write("unet_convt", model, "", [x.numpy(), skip.numpy()], numpy_outputs(y))


# ---------------------------------------------------------------- i. a BiLSTM, then a run-time If

class BiLSTMIf(nn.Module):
    """A run-time If (its branches' padding steps guarded), then a BiLSTM whose two
    directions run side by side on two threads: the If keeps the model function from
    running as one team of threads, so tests/threads.sh checks the OpenMP sections it
    uses then."""
    def __init__(self):
        super().__init__()
        self.a = nn.Conv1d(24, 24, 3, padding=1)
        self.b = nn.Conv1d(24, 24, 5, padding=2)
        self.rnn = nn.LSTM(24, 48, batch_first=True, bidirectional=True)
        self.head = nn.Linear(96, 6)

    def forward(self, x):                     # x: [1, 24, 40]
        if bool(x.sum() > 0):
            y = self.a(x)
        else:
            y = self.b(x)
        z, _ = self.rnn(y.transpose(1, 2))
        return self.head(z)


def bilstm_if():
    seed(22)
    m = BiLSTMIf().eval()
    s = torch.jit.script(m)
    x = torch.randn(1, 24, 40)
    x = x if x.sum() > 0 else -x             # the then branch; -x takes the else branch
    with torch.no_grad():
        y0, y1 = m(x), m(-x)
    model = export(s, (x,), ["x"], ["y"])
    assert any(n.op_type == "If" for n in model.graph.node)
    write("bilstm_if", model, "", [x.numpy()], numpy_outputs(y0), [([(-x).numpy()], numpy_outputs(y1))])


MODELS = [cnn_dynamic, seq_dynamic, if_runtime, loop_steps, loop_while, loop_break, loop_count, loop_long,
          loop_converge, sr_nested_if, if_const_cond, keras_nhwc, lstm_stream, gru_stream, extra_domains,
          unet_convt, bilstm_if]


def main():
    names = sys.argv[1:]
    known = {f.__name__: f for f in MODELS}
    for n in names:
        if n not in known:
            sys.exit("make_models.py: unknown model '%s' (known: %s)" % (n, " ".join(known)))
    torch.set_num_threads(1)
    for f in MODELS:
        if not names or f.__name__ in names:
            f()


if __name__ == "__main__":
    main()
