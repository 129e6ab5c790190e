#!/usr/bin/python3
"""make.py - writes the models of tests/dyn.sh: networks exported with dims decided at
run time, each with inputs and PyTorch's outputs at several extents.

For each model NAME: tests/dyn/NAME/model.onnx, args (kgen's options: the ranges),
in_K.npy and out_K.npy for each extent K, and bad_K.npy, an input outside the range
(the runner must refuse it). The files are committed; make test needs neither torch nor
python. Regenerate with

    /usr/bin/python3 tests/dyn/make.py [NAME ...]      (default: all)

(Debian's python3-torch, python3-torchvision, python3-onnx, python3-numpy). Weights are
seeded random; batch-norm layers get random statistics. Running it twice writes
identical files.

samepool and resizes are built here with onnx.helper (torch does not export auto_pad SAME
with a stride, nor these Resize modes); their inputs are seeded numpy draws and their
references onnxruntime's with graph optimizations disabled (tests/dyn/ort_refs.mjs, run by
node from build/bench/ort or $ORT_DIR).

tests/dyn/attention is not made here: it is tests/published/seq_dynamic's model (a
transformer block: LayerNorm by ReduceMean, attention reshaped from Shape values, a 1-D
conv, GELU) with a dynamic sequence length; its inputs are seeded numpy draws and its
references onnxruntime's with graph optimizations disabled (tests/dyn/ort_refs.mjs).
"""
import io
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def randomize_batchnorm(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.3, 0.3)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


class SmallNet(nn.Module):
    """Conv, BatchNorm, ReLU, a padded max pool, strided convs with a residual Add,
    global average pool and a linear head, over an input of any H and W."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.p = nn.MaxPool2d(3, 2, 1)
        self.c2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.c3 = nn.Conv2d(32, 32, 3, padding=1)
        self.d = nn.Conv2d(16, 32, 1, stride=2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.p(torch.relu(self.b1(self.c1(x))))
        y = torch.relu(self.c3(torch.relu(self.c2(x))) + self.d(x))
        return self.fc(nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


class CRNN(nn.Module):
    """A text-line recognizer: conv blocks pooling the height to 1, the width / 4 as the
    sequence of a bidirectional LSTM, a classifier of 40 symbols, log-softmax."""

    def __init__(self, classes=40):
        super().__init__()

        def blk(i, o, pool):
            return [nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(pool)]

        self.cnn = nn.Sequential(*blk(1, 16, (2, 2)), *blk(16, 32, (2, 2)), *blk(32, 48, (2, 1)),
                                 *blk(48, 64, (2, 1)))
        self.rnn = nn.LSTM(64, 48, bidirectional=True)
        self.fc = nn.Linear(96, classes)

    def forward(self, x):                        # [1, 1, 16, W]
        f = self.cnn(x).squeeze(2).permute(2, 0, 1)   # [W / 4, 1, 64]
        y, _ = self.rnn(f)
        return self.fc(y).log_softmax(2)         # [W / 4, 1, classes]


class Lstm(nn.Module):
    """Two stacked LSTM layers over a sequence of any length, a linear head per step."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(20, 32, num_layers=2)
        self.fc = nn.Linear(32, 8)

    def forward(self, x):                        # [T, 1, 20]
        y, _ = self.rnn(x)
        return self.fc(y)


class PosAttn(nn.Module):
    """A learned positional embedding gathered by arange over the sequence length (Range over
    a Shape value), one causal self-attention step (a mask from two aranges compared) and a
    linear head, over a sequence of any length."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(48, 16)
        self.q = nn.Linear(16, 16)
        self.fc = nn.Linear(16, 8)

    def forward(self, x):                        # [1, T, 16]
        t = torch.arange(x.shape[1])
        y = x + self.pos(t)
        mask = t[None, :] <= t[:, None]
        a = (self.q(y) @ y.transpose(1, 2)) * 0.25
        a = torch.softmax(a.masked_fill(~mask, -1e9), dim=-1)
        return self.fc(a @ y)


class Decoder(nn.Module):
    """A pre-norm decoder block as opset 17 exports it: LayerNormalization over the features
    (the tokens decided at run time), causal self-attention with two heads whose mask is
    torch.tril of torch.ones(t, t) (ConstantOfShape of a run-time shape, Trilu over run-time
    dims), a GELU MLP and the residuals."""

    def __init__(self):
        super().__init__()
        self.n1 = nn.LayerNorm(16)
        self.qkv = nn.Linear(16, 48)
        self.o = nn.Linear(16, 16)
        self.n2 = nn.LayerNorm(16)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))

    def forward(self, x):                        # [1, T, 16]
        t = x.shape[1]
        q, k, v = self.qkv(self.n1(x)).reshape(1, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
        keep = torch.tril(torch.ones(t, t))      # ConstantOfShape of [T, T], then Trilu
        a = (q @ k.transpose(-1, -2)) * 0.35 + (keep - 1) * 1e9
        y = x + self.o((torch.softmax(a, dim=-1) @ v).transpose(1, 2).reshape(1, t, 16))
        return y + self.mlp(self.n2(y))


class Tokens(nn.Module):
    """The shapes torch's exporter computes for a batch of token sequences, both decided at
    run time: a class token expanded to the batch and concatenated before the tokens
    (Concat along the run-time sequence), positions arange(T + 1) expanded to the batch
    (expand(b, -1): Shape of the shape, Equal and Where on extents, Expand), a gate
    expanded from a column (Expand of a run-time dim to itself), repeat (Tile) and
    new_zeros of the run-time shape."""

    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, 16))
        self.pos = nn.Embedding(41, 16)
        self.fc = nn.Linear(24, 8)

    def forward(self, x):                        # [B, T, 16]
        b, t = x.shape[0], x.shape[1]
        h = torch.cat([self.cls.expand(b, -1, -1), x], 1)
        h = h + self.pos(torch.arange(t + 1).unsqueeze(0).expand(b, -1))
        gate = torch.sigmoid(h[:, :, :1]).expand(b, t + 1, 8)
        y = self.fc(torch.cat([h, gate], 2))
        return y.repeat(1, 1, 2) + x.new_zeros(b, t + 1, 16)


class Picks(nn.Module):
    """Positions and parts of a run-time sequence: the tokens rolled by half their length
    (Slices from and to t // 2, Concat along the sequence), the last, middle and first
    tokens (Gather of -1, t // 2 and 0 along a run-time dim), the last two (a Slice from -2,
    one token at t = 1), the mean of all but the first (x[:, 1:]), the tokens reversed
    (x.flip(1): a Slice of step -1), every second token and every third from the last
    (x[:, ::2] and x.flip(1)[:, ::3]: steps 2 and -3)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):                        # [B, T, 16]
        h = x.shape[1] // 2
        rolled = torch.cat([x[:, h:], x[:, :h]], 1)
        picked = (2 * x[:, -1] + x[:, h] - x[:, 0]).unsqueeze(1)
        rest = x[:, 1:].sum(1, keepdim=True) / x.shape[1]
        return self.fc(torch.cat([rolled, picked, x[:, -2:], rest, x.flip(1), x[:, ::2], x.flip(1)[:, ::3]], 1))


class Heads(nn.Module):
    """Attention heads split by a view over a batch and a length both decided at run time
    (x.view(b, t, 2, 8).transpose(1, 2)), scaled by h.size(-1) ** 0.5: the batch-by-heads
    axis is fused and run in parallel, and a reduction's tile computed at it once read as
    uninitialised to gcc -O2 (a guard of the batch on its zeroing only)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):                        # [B, T, 16]
        b, t, _ = x.shape
        h = x.view(b, t, 2, 8).transpose(1, 2)
        a = (h @ h.transpose(-1, -2)) / (h.size(-1) ** 0.5)
        return self.fc((a.softmax(-1) @ h).transpose(1, 2).reshape(b, t, 16))


class Pads(nn.Module):
    """Explicit padding over dynamic H and W: constant (uneven), reflect and replicate pads
    (ONNX Pad's modes constant, reflect and edge), each before a 3x3 conv."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3)
        self.c2 = nn.Conv2d(4, 4, 3)
        self.c3 = nn.Conv2d(4, 4, 3)

    def forward(self, x):                        # [1, 3, H, W]
        y = self.c1(nn.functional.pad(x, (1, 2, 0, 1)))
        y = self.c2(nn.functional.pad(y, (2, 1, 1, 1), mode="reflect"))
        return self.c3(nn.functional.pad(y, (1, 1, 2, 0), mode="replicate"))


class Windows(nn.Module):
    """A Swin / SR-style block over dynamic H and W: a reflect pad to multiples of the window
    (4) by amounts computed from the extents (torch exports them through Concat, Reshape,
    a reversing Slice and Transpose), the windows partitioned (Hp viewed as Hp // 4 windows
    of 4 rows, a permute), attention within each window, the windows put back and cropped
    to H x W, a residual; then PixelUnshuffle (H and W even, checked at run time), a conv
    and PixelShuffle (DepthToSpace)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 3, padding=1)
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)
        self.body = nn.Conv2d(32, 12, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):                        # [1, 3, H, W]
        e = self.embed(x)
        b, c, h, w = e.shape
        y = nn.functional.pad(e, (0, (4 - w % 4) % 4, 0, (4 - h % 4) % 4), mode="reflect")
        hp, wp = y.shape[2], y.shape[3]
        t = y.permute(0, 2, 3, 1).reshape(b, hp // 4, 4, wp // 4, 4, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, 16, c)
        q, k, v = self.qkv(t).chunk(3, -1)
        t = self.proj((q @ k.transpose(1, 2) / c ** 0.5).softmax(-1) @ v)
        y = t.reshape(b, hp // 4, wp // 4, 4, 4, c).permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, c).permute(0, 3, 1, 2)
        y = y[:, :, :h, :w] + e
        return self.shuffle(self.body(nn.functional.pixel_unshuffle(y, 2)))


class RangeStep(nn.Module):
    """Range over the sequence length with a start, a step and a negative step, each
    gathering a learned embedding summed over its length; arange(2, T, 3) is empty at T=2
    (T=1 would be too, but torch refuses arange(2, 1, 3): the range starts at 2)."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(49, 16)

    def forward(self, x):                        # [1, T, 16]
        up = self.pos(torch.arange(2, x.shape[1], 3)).sum(0)
        down = self.pos(torch.arange(x.shape[1], 0, -2)).sum(0)
        return x.sum(1) + up + 2 * down


class SymArith(nn.Module):
    """Arithmetic on the sequence length as a value (Div, Mul, Sub, Add of Shape's extent
    and constants) giving Range's start and limit, each range gathering a learned
    embedding summed over its length."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(160, 16)

    def forward(self, x):                        # [1, T, 16]
        t = x.shape[1]
        half = self.pos(torch.arange(t // 2)).sum(0)
        down = self.pos(torch.arange(t * 3 - 2, t - 1, -3)).sum(0)
        tail = self.pos(torch.arange(t // 3 + 1, t + 2)).sum(0)
        return x.sum(1) + half + 2 * down + 3 * tail


class UNet(nn.Module):
    """A small U-Net / FPN decoder over an image of any H and W: stride-2 convs down, a
    ceil-mode max pool and a padded ceil-mode average pool (its size interpolated to the
    skip's), the low level interpolated (nearest) to the skip's size (Shape, Slice, Concat
    into Resize's sizes) and concatenated with it, a bilinear x2 (Resize by constant
    scales), a bilinear resize to the input's size and one to about half of it (sizes from
    Shape // 2: arithmetic on extents) and nearest back, and the means over H and W
    (ReduceMean over run-time dims) added."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.d1 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.d2 = nn.Conv2d(24, 16, 3, stride=2, padding=1)
        self.mp = nn.MaxPool2d(2, 2, ceil_mode=True)
        self.ap = nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)
        self.lat = nn.Conv2d(40, 16, 1)
        self.up = nn.Conv2d(16, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):                        # [1, 3, H, W]
        f = nn.functional
        a = torch.relu(self.c1(x))               # H
        b = torch.relu(self.d1(a))               # ceil(H / 2)
        p = f.interpolate(self.ap(a)[:, :8], size=b.shape[-2:], mode="nearest")
        b = torch.cat([b[:, :8], self.mp(a), p], 1)
        c = torch.relu(self.d2(b))               # ceil(H / 4)
        u = f.interpolate(c, size=b.shape[-2:], mode="nearest")
        u = torch.relu(self.lat(torch.cat([u, b], 1)))
        v = f.interpolate(u, scale_factor=2, mode="bilinear")            # 2 ceil(H / 2)
        v = f.interpolate(torch.relu(self.up(v)), size=a.shape[-2:], mode="bilinear") + a
        y = self.head(v)
        half = f.interpolate(y, size=(x.shape[2] // 2, x.shape[3] // 2 + 1), mode="bilinear")
        back = f.interpolate(half, size=y.shape[-2:], mode="nearest")
        return y + back + y.mean(dim=(2, 3), keepdim=True) + half.mean(dim=(2, 3), keepdim=True)


class Merge(nn.Module):
    """Views that merge and split dims decided at run time, over an image of any H and W:
    a conv map [1, 8, h, w] flattened to h w tokens (flatten(2), and reshape(n, c, h * w):
    Shape values multiplied) and transposed, a softmax attention over the tokens, the
    tokens reshaped back to [1, 8, h, w] from Shape values, a softmax over reshape(n, -1)
    (-1 = 4 h w) reshaped back to the map's shape, torch.flatten(z, 1) (ONNX Flatten) and a
    CRNN-style permute + reshape(n, w, -1) (-1 = 4 h: a fixed and a run-time dim merged)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.o = nn.Linear(8, 8)
        self.c3 = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):                        # [1, 3, H, W]
        y = torch.relu(self.c2(torch.relu(self.c1(x))))    # [1, 8, h, w], h = ceil(ceil(H / 2) / 2)
        n, c, h, w = y.shape
        t = y.flatten(2).transpose(1, 2)         # [1, h w, 8]
        u = y.reshape(n, c, h * w).transpose(1, 2)
        a = torch.softmax(self.q(t) @ self.k(u).transpose(1, 2) * 8 ** -0.5, -1)
        t = t + self.o(a @ u)
        z = torch.relu(self.c3(t.transpose(1, 2).reshape(n, c, h, w)))    # [1, 4, h, w]
        g = torch.softmax(z.reshape(n, -1), -1).reshape(z.shape)
        m = torch.flatten(z, 1).amax(1).reshape(n, 1, 1, 1)
        s = z.permute(0, 3, 1, 2).reshape(n, w, -1).mean(2).reshape(n, 1, 1, w)
        return z + g * 100 + m + s


class Upsample(nn.Module):
    """Upsample (the operator of opset 9, which Resize replaced: torch's export at opset 9)
    by 2 and by 1.5, nearest, over an input of any H and W."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 2, 3, stride=2, padding=1)

    def forward(self, x):                        # [1, 2, H, W]
        f = nn.functional
        y = self.c2(f.interpolate(torch.relu(self.c1(x)), scale_factor=2, mode="nearest"))
        return f.interpolate(y, scale_factor=1.5, mode="nearest")   # [1, 2, floor(1.5 H), floor(1.5 W)]


def mobilenet():
    return torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10)


# name: (model, example input shape, dynamic axes {axis: name}, args, extents, too small)
MODELS = {
    "cnn": (SmallNet, (1, 3, 40, 56), {2: "H", 3: "W"}, "--dim H=32..96 --dim W=32..128",
            [(1, 3, 32, 32), (1, 3, 47, 75), (1, 3, 64, 33), (1, 3, 96, 128)], (1, 3, 31, 64)),
    "mobilenet": (mobilenet, (1, 3, 64, 64), {2: "H", 3: "W"}, "--dim H=32..160 --dim W=32..160",
                  [(1, 3, 32, 32), (1, 3, 57, 91), (1, 3, 96, 160), (1, 3, 128, 128)], (1, 3, 64, 161)),
    "crnn": (CRNN, (1, 1, 16, 64), {3: "W"}, "--dim W=16..256",
             [(1, 1, 16, 16), (1, 1, 16, 44), (1, 1, 16, 100), (1, 1, 16, 256)], (1, 1, 16, 300)),
    "lstm": (Lstm, (10, 1, 20), {0: "T"}, "--dim T=1..64",
             [(1, 1, 20), (7, 1, 20), (33, 1, 20), (64, 1, 20)], (65, 1, 20)),
    "posattn": (PosAttn, (1, 10, 16), {1: "T"}, "--dim T=1..48",
                [(1, 1, 16), (1, 5, 16), (1, 17, 16), (1, 48, 16)], (1, 49, 16)),
    "decoder": (Decoder, (1, 10, 16), {1: "T"}, "--dim T=1..40",
                [(1, 1, 16), (1, 6, 16), (1, 19, 16), (1, 40, 16)], (1, 41, 16)),
    "tokens": (Tokens, (2, 10, 16), {0: "B", 1: "T"}, "--dim B=1..4 --dim T=1..40",
               [(1, 1, 16), (3, 7, 16), (2, 23, 16), (4, 40, 16)], (2, 41, 16)),
    "picks": (Picks, (2, 10, 16), {0: "B", 1: "T"}, "--dim B=1..3 --dim T=1..40",
              [(1, 1, 16), (2, 2, 16), (3, 9, 16), (2, 40, 16)], (4, 8, 16)),
    "heads": (Heads, (2, 10, 16), {0: "B", 1: "T"}, "--dim B=1..4 --dim T=1..40",
              [(1, 1, 16), (3, 7, 16), (4, 40, 16)], (5, 8, 16)),
    "pads": (Pads, (1, 3, 12, 12), {2: "H", 3: "W"}, "--dim H=4..48 --dim W=3..48",
             [(1, 3, 4, 3), (1, 3, 9, 16), (1, 3, 20, 7), (1, 3, 48, 48)], (1, 3, 3, 8)),
    "windows": (Windows, (1, 3, 12, 12), {2: "H", 3: "W"}, "--dim H=4..48 --dim W=4..48",
                [(1, 3, 4, 6), (1, 3, 10, 8), (1, 3, 18, 30), (1, 3, 48, 48)], (1, 3, 2, 8)),
    "rangestep": (RangeStep, (1, 10, 16), {1: "T"}, "--dim T=2..48",
                  [(1, 2, 16), (1, 3, 16), (1, 4, 16), (1, 48, 16)], (1, 1, 16)),
    "unet": (UNet, (1, 3, 40, 56), {2: "H", 3: "W"}, "--dim H=16..96 --dim W=16..128",
             [(1, 3, 16, 16), (1, 3, 33, 47), (1, 3, 64, 80), (1, 3, 75, 101), (1, 3, 96, 128)], (1, 3, 15, 64)),
    "symarith": (SymArith, (1, 10, 16), {1: "T"}, "--dim T=2..48",
                 [(1, 2, 16), (1, 3, 16), (1, 7, 16), (1, 33, 16), (1, 48, 16)], (1, 49, 16)),
    "merge": (Merge, (1, 3, 40, 56), {2: "H", 3: "W"}, "--dim H=8..64 --dim W=8..80",
              [(1, 3, 8, 8), (1, 3, 13, 29), (1, 3, 33, 47), (1, 3, 50, 17), (1, 3, 64, 80)], (1, 3, 64, 81)),
    "upsample": (Upsample, (1, 2, 20, 24), {2: "H", 3: "W"}, "--dim H=4..48 --dim W=4..48",
                 [(1, 2, 4, 4), (1, 2, 7, 13), (1, 2, 30, 19), (1, 2, 48, 48)], (1, 2, 3, 48)),
}
OPSET = {"upsample": 9, "decoder": 17}   # the others 13


def onnx_models():
    """name: (ModelProto, args, extents, too small or large): graphs torch does not export."""
    import onnx
    from onnx import TensorProto, helper
    rng = np.random.default_rng(7)

    def init(name, shape):
        return helper.make_tensor(name, TensorProto.FLOAT, shape, rng.standard_normal(shape).astype(np.float32) * 0.3)

    def ints(name, v):
        return helper.make_tensor(name, TensorProto.INT64, [len(v)], v)

    def floats(name, v):
        return helper.make_tensor(name, TensorProto.FLOAT, [len(v)], v)

    def graph(nodes, inits, c):
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tests/dyn/make.py")

    N = helper.make_node
    # strided auto_pad SAME (pads that depend on each extent's parity) and a padded ceil-mode
    # average pool counting the pads, each halving H and W
    same = graph([N("Conv", ["x", "w1", "b1"], ["a"], kernel_shape=[4, 4], strides=[2, 2], auto_pad="SAME_LOWER"),
                  N("Relu", ["a"], ["ar"]),
                  N("Conv", ["ar", "w2", "b2"], ["b"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
                  N("MaxPool", ["b"], ["c"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER"),
                  N("AveragePool", ["c"], ["d"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
                  N("AveragePool", ["d"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                    ceil_mode=1, count_include_pad=1)],
                 [init("w1", [8, 2, 4, 4]), init("b1", [8]), init("w2", [8, 8, 3, 3]), init("b2", [8])], 2)
    # Resize modes over run-time extents: linear align_corners to sizes 2E - 1 (Shape times
    # and minus constants), nearest half_pixel round_prefer_floor by scales 0.5 and 0.75,
    # linear pytorch_half_pixel back to the input's sizes, nearest tf_half_pixel_for_nn ceil
    # by 1.5 and 2
    rs = graph([N("Shape", ["x"], ["s"]), N("Mul", ["s", "two"], ["s2"]), N("Sub", ["s2", "one"], ["s3"]),
                N("Resize", ["x", "", "", "s3"], ["r1"], mode="linear", coordinate_transformation_mode="align_corners"),
                N("Resize", ["r1", "", "sc2"], ["r2"], mode="nearest", coordinate_transformation_mode="half_pixel",
                  nearest_mode="round_prefer_floor"),
                N("Resize", ["r2", "", "", "s"], ["r3"], mode="linear",
                  coordinate_transformation_mode="pytorch_half_pixel"),
                N("Add", ["r3", "x"], ["r4"]),
                N("Resize", ["r4", "", "sc4"], ["y"], mode="nearest",
                  coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="ceil")],
               [ints("two", [1, 1, 2, 2]), ints("one", [0, 0, 1, 1]), floats("sc2", [1, 1, 0.5, 0.75]),
                floats("sc4", [1, 1, 1.5, 2])], 2)
    return {
        "samepool": (same, "--dim H=40..160 --dim W=40..200",
                     [(1, 2, 40, 40), (1, 2, 47, 61), (1, 2, 97, 131), (1, 2, 133, 160), (1, 2, 160, 200)],
                     (1, 2, 39, 64)),
        "resizes": (rs, "--dim H=8..64 --dim W=8..64",
                    [(1, 2, 8, 8), (1, 2, 9, 13), (1, 2, 33, 47), (1, 2, 50, 21), (1, 2, 64, 64)], (1, 2, 8, 65)),
    }


def make_onnx(name, model, args, extents, bad):
    """A model of onnx_models(): inputs seeded numpy draws, references onnxruntime's."""
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(out, "args"), "w") as f:
        f.write(args + "\n")
    ort = os.environ.get("ORT_DIR", os.path.join(HERE, "..", "..", "build", "bench", "ort"))
    rng = np.random.default_rng(11)
    for shape in extents:
        k = f"{shape[2]}x{shape[3]}"
        np.save(os.path.join(out, f"in_{k}.npy"), rng.standard_normal(shape).astype(np.float32))
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["node", os.path.join(HERE, "ort_refs.mjs"), os.path.join(out, "model.onnx"),
                            os.path.join(out, f"in_{k}.npy"), tmp, ort], check=True)
            os.replace(os.path.join(tmp, "output_0.npy"), os.path.join(out, f"out_{k}.npy"))
    np.save(os.path.join(out, f"bad_{bad[2]}x{bad[3]}.npy"), rng.standard_normal(bad).astype(np.float32))


def tag(shape, axes):
    return "x".join(str(shape[a]) for a in sorted(axes))


def make(name):
    build, example, axes, args, extents, bad = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    randomize_batchnorm(model)
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    buf = io.BytesIO()
    torch.onnx.export(model, torch.randn(*example), buf, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": axes}, opset_version=OPSET.get(name, 13))
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    with open(os.path.join(out, "args"), "w") as f:
        f.write(args + "\n")
    g = torch.Generator().manual_seed(1)
    for shape in extents:
        x = torch.randn(*shape, generator=g)
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(out, f"in_{tag(shape, axes)}.npy"), x.numpy())
        np.save(os.path.join(out, f"out_{tag(shape, axes)}.npy"), y.numpy())
    np.save(os.path.join(out, f"bad_{tag(bad, axes)}.npy"), torch.randn(*bad, generator=g).numpy())


if __name__ == "__main__":
    helpers = onnx_models()
    for n in sys.argv[1:] or list(MODELS) + list(helpers):
        if n in helpers:
            make_onnx(n, *helpers[n])
        else:
            make(n)
