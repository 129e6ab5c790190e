#!/usr/bin/python3
"""make_models.py - writes the end-to-end test models of tests/models.sh.

For each model NAME this writes tests/models/NAME/model.onnx, input_0.npy (seeded random
input) and output_0.npy (PyTorch's float32 output for that input). The files are
committed: the tests need neither torch nor python, only this script to regenerate them.

    /usr/bin/python3 tests/models/make_models.py [NAME ...]      (default: all)

Needs Debian's python3-torch, python3-torchvision, python3-onnx and python3-numpy (use
/usr/bin/python3: another python3 first on PATH may lack them). Weights are seeded random
(no download); batch-norm layers get random affine parameters and running statistics
calibrated on random data and then perturbed, so that every layer sees normalised,
non-degenerate activations and the outputs are far from constant. Export: opset 13,
constant folding, static shapes, eval mode. Running the script twice writes identical
files.
"""
import io
import os
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13


def randomize_batchnorm(model, calib_input, seed):
    """Random BN affine parameters; running statistics from a calibration batch, then
    perturbed. Without this a random-weight deep net's output is nearly constant."""
    g = torch.Generator().manual_seed(seed)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for bn in bns:
        c = bn.num_features
        with torch.no_grad():
            bn.weight.copy_(torch.rand(c, generator=g) * 1.0 + 0.5)
            bn.bias.copy_(torch.randn(c, generator=g) * 0.2)
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the calibration pass
    model.train()
    with torch.no_grad():
        model(calib_input)
    for bn in bns:
        c = bn.num_features
        with torch.no_grad():
            bn.running_mean.add_(torch.randn(c, generator=g) * 0.05 * bn.running_var.sqrt())
            bn.running_var.mul_(torch.rand(c, generator=g) * 0.4 + 0.8)
        bn.momentum = 0.1
    model.eval()


# ---------------------------------------------------------------- models

def mobilenetv2_small():
    import torchvision
    torch.manual_seed(1)
    model = torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10)
    randomize_batchnorm(model, torch.randn(16, 3, 96, 96), seed=101)
    x = torch.randn(1, 3, 96, 96)
    return model, x


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.downsample is None else self.downsample(x)
        return self.relu(y + skip)


class ResNetBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2),
                                    BasicBlock(32, 32, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(x)), 1))


def resnet_blocks():
    torch.manual_seed(2)
    model = ResNetBlocks()
    randomize_batchnorm(model, torch.randn(16, 16, 32, 32), seed=102)
    x = torch.randn(1, 16, 32, 32)
    return model, x


class LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=16, hidden_size=32, num_layers=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):          # x: [seq 8, batch 1, 16]
        y, _ = self.lstm(x)        # [8, 1, 32]
        return self.fc(y)          # [8, 1, 10]


def lstm():
    torch.manual_seed(3)
    model = LSTMHead().eval()
    x = torch.randn(8, 1, 16)
    return model, x


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                dropout=0.0, batch_first=True)

    def forward(self, x):          # x: [1, 8, 32]
        return self.layer(x)


def transformer():
    torch.manual_seed(4)
    model = Transformer()
    g = torch.Generator().manual_seed(104)
    with torch.no_grad():
        for ln in (model.layer.norm1, model.layer.norm2):
            ln.weight.copy_(1.0 + 0.2 * torch.randn(32, generator=g))
            ln.bias.copy_(0.1 * torch.randn(32, generator=g))
    model.eval()
    x = torch.randn(1, 8, 32)
    return model, x


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)     # 28 -> 26, pool -> 13
        self.conv2 = nn.Conv2d(8, 16, 3)    # 13 -> 11, pool -> 5
        self.pool = nn.MaxPool2d(2)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(16 * 5 * 5, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def small_cnn():
    torch.manual_seed(5)
    model = SmallCNN().eval()
    x = torch.rand(1, 1, 28, 28)            # pixel-like values in [0, 1)
    return model, x


# Conv1d front end of an audio model (ir/ops/nn.c builds these with the output channels
# innermost: strided, and 16 taps or more): a strided dilated conv with padding and bias
# (20 channels, padded to 32 in the transposed weights), and one of 16 taps, stride 1
# (24 channels), magnitude-like and log steps after.
class Conv1dFront(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(2, 20, 24, stride=3, padding=2, dilation=2)
        self.conv2 = nn.Conv1d(20, 24, 16, bias=False)

    def forward(self, x):           # x: [1, 2, 400]
        y = self.conv2(torch.relu(self.conv1(x)))
        return torch.log(y * y + 1e-3)


def conv1d_front():
    torch.manual_seed(6)
    return Conv1dFront().eval(), torch.randn(1, 2, 400)


# 3x3 convs of stride 1 for the Winograd pass (ir/winograd.c, tests/winograd.sh): a batch of
# 2 over 30x27 (tiles of 4 that do not divide the map), a residual block with a folded
# batch norm, a conv without padding to 48 channels, a pooled 14x12 map into 32 channels
# (F(2x2)'s size), a 7x6 map into 20 channels (padded to a block) whose conv two steps read.
def conv3(cin, cout, pad=1, bias=True):
    return nn.Conv2d(cin, cout, 3, 1, pad, bias=bias)


class WinoConvs(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2, self.bn2 = conv3(16, 16), conv3(16, 16, bias=False), nn.BatchNorm2d(16)
        self.c3, self.c4, self.c5 = conv3(16, 48, pad=0), conv3(48, 32), conv3(32, 20)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):           # x: [2, 16, 30, 27]
        a = torch.relu(self.c1(x))
        b = torch.relu(self.bn2(self.c2(a)) + x)
        p = self.pool(torch.relu(self.c3(b)))          # 28x25 -> 14x12
        q = self.pool(torch.relu(self.c4(p)))          # 14x12 -> 7x6
        r = self.c5(q)
        return torch.cat([torch.flatten(torch.sigmoid(r), 1), torch.flatten(r, 1)], 1)


def wino_convs():
    torch.manual_seed(7)
    model = WinoConvs()
    randomize_batchnorm(model, torch.randn(8, 16, 30, 27), seed=107)
    return model, torch.randn(2, 16, 30, 27)


# A classifier head: its first layer (600 x 520 weights, 1.2 MB) a matrix-vector product
# wide enough that with threads kgen divides its row into parts, each part's weights one
# block (schedule/default.c, gemv_schedule; tests/threads.sh runs it on two threads).
class ClassifierHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(600, 520)
        self.act = nn.Hardswish()
        self.fc2 = nn.Linear(520, 10)

    def forward(self, x):          # x: [1, 600]
        return self.fc2(self.act(self.fc1(x)))


def classifier():
    torch.manual_seed(8)
    return ClassifierHead().eval(), torch.randn(1, 600)


class Resamples(nn.Module):
    """Resizes whose source coordinates fall on whole numbers up to a rounding error:
    bilinear 40x62 -> 41x42 (column 10's (10 + 0.5) * 62 / 42 - 0.5 is 15 + 2e-15 in
    double) and bicubic back to 40x62 (row and column 15 map to 10, a hair below it), each
    with pytorch_half_pixel coordinates; a 1x1 conv mixes the channels in between, which
    the Resizes must leave as they are."""

    def __init__(self):
        super().__init__()
        self.mix = nn.Conv2d(3, 3, 1)

    def forward(self, x):          # x: [1, 3, 40, 62]
        f = nn.functional
        y = self.mix(f.interpolate(x, size=(41, 42), mode="bilinear", align_corners=False))
        return f.interpolate(y, size=(40, 62), mode="bicubic", align_corners=False) + x


def resamples():
    torch.manual_seed(9)
    return Resamples().eval(), torch.randn(1, 3, 40, 62)


MODELS = {
    "mobilenetv2_small": mobilenetv2_small,
    "resnet_blocks": resnet_blocks,
    "lstm": lstm,
    "transformer": transformer,
    "small_cnn": small_cnn,
    "conv1d_front": conv1d_front,
    "wino_convs": wino_convs,
    "classifier": classifier,
    "resamples": resamples,
}


# ---------------------------------------------------------------- export

def export(name):
    model, x = MODELS[name]()
    model.eval()
    with torch.no_grad():
        y = model(x)
    buf = io.BytesIO()
    torch.onnx.export(model, (x,), buf, opset_version=OPSET, do_constant_folding=True,
                      input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)
    data = buf.getvalue()

    import onnx
    m = onnx.load_from_string(data)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})

    out_dir = os.path.join(HERE, name)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(data)
    np.save(os.path.join(out_dir, "input_0.npy"), x.numpy().astype(np.float32))
    out = y.numpy().astype(np.float32)
    np.save(os.path.join(out_dir, "output_0.npy"), out)
    nparams = sum(p.numel() for p in model.parameters())
    print("%-18s %8d bytes  %7d params  in %s out %s  std(out)=%.3f  ops: %s"
          % (name, len(data), nparams, list(x.shape), list(out.shape), out.std(), " ".join(ops)))


def main():
    torch.set_num_threads(1)       # the same summation order on every run
    names = sys.argv[1:] or list(MODELS)
    for name in names:
        if name not in MODELS:
            sys.exit("unknown model %s (have: %s)" % (name, " ".join(MODELS)))
        export(name)


if __name__ == "__main__":
    main()
