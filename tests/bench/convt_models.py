"""convt_models.py - the ConvTranspose models of tests/bench/convt.sh, made with seeded
random weights (torch.manual_seed(0)), eval mode, ONNX opset 13; none is committed.

    /usr/bin/python3 tests/bench/convt_models.py OUTDIR

    det_head  1x64x40x40 -> ConvTranspose(64, 64, k 2, s 2) + BN + ReLU
              -> ConvTranspose(64, 1, k 2, s 2) + Sigmoid (the PaddleOCR DB head pattern)
    up_k4     1x64x40x40 -> ConvTranspose(64, 32, k 4, s 2, p 1) + BN + ReLU (U-Net / GAN)
    up_1d     1x64x400   -> ConvTranspose1d(64, 32, k 4, s 2, p 1) + ReLU

write OUTDIR/NAME.onnx and a seeded input OUTDIR/NAME_input.npy. Needs torch, onnx, numpy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():   # non-trivial statistics, so that a wrong fold shows
        b.running_mean.uniform_(-0.5, 0.5)
        b.running_var.uniform_(0.5, 2.0)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.2, 0.2)
    return b


MODELS = {
    "det_head": (lambda: nn.Sequential(nn.ConvTranspose2d(64, 64, 2, 2), bn(64), nn.ReLU(),
                                       nn.ConvTranspose2d(64, 1, 2, 2), nn.Sigmoid()), (1, 64, 40, 40)),
    "up_k4": (lambda: nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), bn(32), nn.ReLU()), (1, 64, 40, 40)),
    "up_1d": (lambda: nn.Sequential(nn.ConvTranspose1d(64, 32, 4, 2, 1), nn.ReLU()), (1, 64, 400)),
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: convt_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, (make, shape) in MODELS.items():
        torch.manual_seed(0)
        model = make().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            torch.onnx.export(model, x, os.path.join(out, name + ".onnx"), opset_version=13,
                              input_names=["input"], output_names=["output"])
        rng = np.random.default_rng(1)
        np.save(os.path.join(out, name + "_input.npy"), rng.standard_normal(shape).astype(np.float32))
        print("exported", name)


if __name__ == "__main__":
    main()
