"""zoo.py - the models of the model-zoo benchmark (tests/bench/zoo.sh, `make bench-zoo`), made
with seeded random weights; none of them is committed.

    /usr/bin/python3 tests/bench/zoo.py list
        every model's name and input shape, one a line: NAME D0xD1x...
    /usr/bin/python3 tests/bench/zoo.py export OUTDIR NAME...
        write OUTDIR/NAME.onnx and a seeded input OUTDIR/NAME_input.npy for each NAME,
        skipping files already there; a model that fails to export prints
        "NAME: export failed: REASON" and the others go on (exit status 1 if any failed)

Every model is built after torch.manual_seed(0). BatchNorm layers get real statistics: with
the rest of the model in eval mode, they run in train mode with momentum=None (a cumulative
average) over a few seeded random batches, then the model goes to eval mode. Weight tensors
that are all zero (ViT's classifier head, say) are re-drawn from N(0, 0.02^2), so that no
output is identically zero. Export is torch.onnx.export at opset 13, or 17 when 13 fails.

The models: torchvision's shufflenet_v2_x1_0, efficientnet_b0, mnasnet1_0, regnet_y_400mf,
googlenet (aux_logits=False, init_weights=True), densenet121, resnet50, resnet18,
mobilenet_v2, squeezenet1_1 (Fire modules), mobilenet_v3_small and _large (SE blocks,
HardSwish), convnext_tiny, vit_b_16, swin_t (1x3x224x224), and the segmentation nets
lraspp_mobilenet_v3_large and fcn_resnet50 (1x3x224x224, the 'out' entry of their dict);
written here: a small U-Net (ConvTranspose upsampling with BatchNorm and ReLU, a final
Sigmoid, 1x3x224x224), a CRNN text recognizer (conv backbone on 1x3x48x320, a BiLSTM over the
width, Linear to 6000 classes) and an audio front end (Conv1d as an STFT: 257 * 2 windowed DFT
filters of 512 taps, stride 160, over 1x1x16000 samples; magnitude; an 80-band mel MatMul;
log). Needs torch, torchvision, onnx and numpy.
"""
import math
import os
import sys

import numpy as np
import torch
from torch import nn

IMAGE = (1, 3, 224, 224)


def tv(name, **kw):
    """a torchvision classification model without pretrained weights"""
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


class DictOut(nn.Module):
    """a segmentation model returning {'out': ..., ...}: its 'out' alone"""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def seg(name):
    def make():
        import torchvision
        return DictOut(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None))
    return make


def conv_bn_relu(cin, cout, k=3, pad=1):
    return [nn.Conv2d(cin, cout, k, padding=pad, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class UNet(nn.Module):
    """a small U-Net: three 2x2 max-pool downsamplings (16 to 128 channels), ConvTranspose
    (2x2, stride 2) upsampling, each followed by BatchNorm and ReLU, skip concatenations, a
    1x1 conv to one channel and a Sigmoid"""

    def __init__(self, base=16, depth=3):
        super().__init__()
        chans = [base << i for i in range(depth + 1)]
        self.down = nn.ModuleList()
        cin = 3
        for c in chans:
            self.down.append(nn.Sequential(*conv_bn_relu(cin, c), *conv_bn_relu(c, c)))
            cin = c
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        for c in reversed(chans[:-1]):
            self.up.append(nn.Sequential(nn.ConvTranspose2d(2 * c, c, 2, stride=2), nn.BatchNorm2d(c),
                                         nn.ReLU(inplace=True)))
            self.merge.append(nn.Sequential(*conv_bn_relu(2 * c, c), *conv_bn_relu(c, c)))
        self.head = nn.Conv2d(chans[0], 1, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            if i:
                x = nn.functional.max_pool2d(x, 2)
            x = block(x)
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1])):
            x = merge(torch.cat([up(x), skip], 1))
        return torch.sigmoid(self.head(x))


class CRNN(nn.Module):
    """a CRNN text recognizer: a VGG-like conv backbone takes 1x3x48x320 to 256 x 1 x 80, a
    bidirectional LSTM (256 hidden) runs over the 80 columns, a Linear maps each column to
    6000 classes: output 80 x 1 x 6000 (time, batch, class)"""

    def __init__(self, classes=6000, hidden=256):
        super().__init__()
        self.backbone = nn.Sequential(
            *conv_bn_relu(3, 64), nn.MaxPool2d(2),              # 24 x 160
            *conv_bn_relu(64, 128), nn.MaxPool2d(2),            # 12 x 80
            *conv_bn_relu(128, 256), *conv_bn_relu(256, 256),
            nn.MaxPool2d((2, 1)),                               # 6 x 80
            *conv_bn_relu(256, 256), nn.MaxPool2d((2, 1)),      # 3 x 80
            *conv_bn_relu(256, 256, (3, 1), 0))                 # 1 x 80
        self.rnn = nn.LSTM(256, hidden, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        f = self.backbone(x).squeeze(2).permute(2, 0, 1)       # 80 x 1 x 256
        y, _ = self.rnn(f)
        return self.fc(y)


def mel_bank(bins=257, mels=80, rate=16000):
    """triangular mel filters, bins x mels (HTK mel scale)"""
    mel = lambda f: 2595 * np.log10(1 + f / 700)
    hz = lambda m: 700 * (10 ** (m / 2595) - 1)
    edges = hz(np.linspace(mel(0), mel(rate / 2), mels + 2))
    freqs = np.linspace(0, rate / 2, bins)
    bank = np.zeros((bins, mels), np.float32)
    for m in range(mels):
        lo, mid, hi = edges[m], edges[m + 1], edges[m + 2]
        bank[:, m] = np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None)
    return torch.from_numpy(bank)


class AudioFrontEnd(nn.Module):
    """log-mel features: a Conv1d whose 514 filters are the Hann-windowed real and imaginary
    DFT rows of 512 taps (257 bins), stride 160 over 1x1x16000 samples, the magnitude, an
    80-band mel MatMul and log: output 1 x 97 x 80"""

    def __init__(self, n_fft=512, hop=160):
        super().__init__()
        bins = n_fft // 2 + 1
        t = np.arange(n_fft)
        window = 0.5 - 0.5 * np.cos(2 * math.pi * t / n_fft)
        k = np.arange(bins)[:, None]
        real = np.cos(2 * math.pi * k * t / n_fft) * window
        imag = -np.sin(2 * math.pi * k * t / n_fft) * window
        self.stft = nn.Conv1d(1, 2 * bins, n_fft, stride=hop, bias=False)
        with torch.no_grad():
            self.stft.weight.copy_(torch.from_numpy(np.concatenate([real, imag]).astype(np.float32)[:, None, :]))
        self.bins = bins
        self.register_buffer("mel", mel_bank(bins))

    def forward(self, x):
        y = self.stft(x)
        re, im = y[:, :self.bins], y[:, self.bins:]
        mag = torch.sqrt(re * re + im * im + 1e-9).transpose(1, 2)   # 1 x 97 x 257
        return torch.log(torch.matmul(mag, self.mel) + 1e-6)


# name: (maker, input shape)
MODELS = {
    "squeezenet1_1": (tv("squeezenet1_1"), IMAGE),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), IMAGE),
    "shufflenet_v2": (tv("shufflenet_v2_x1_0"), IMAGE),
    "mobilenet_v2": (tv("mobilenet_v2"), IMAGE),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), IMAGE),
    "mnasnet1_0": (tv("mnasnet1_0"), IMAGE),
    "efficientnet_b0": (tv("efficientnet_b0"), IMAGE),
    "regnet_y_400mf": (tv("regnet_y_400mf"), IMAGE),
    "resnet18": (tv("resnet18"), IMAGE),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), IMAGE),
    "densenet121": (tv("densenet121"), IMAGE),
    "resnet50": (tv("resnet50"), IMAGE),
    "convnext_tiny": (tv("convnext_tiny"), IMAGE),
    "vit_b_16": (tv("vit_b_16"), IMAGE),
    "swin_t": (tv("swin_t"), IMAGE),
    "lraspp_mbv3": (seg("lraspp_mobilenet_v3_large"), IMAGE),
    "fcn_resnet50": (seg("fcn_resnet50"), IMAGE),
    "unet": (UNet, IMAGE),
    "crnn": (CRNN, (1, 3, 48, 320)),
    "audio_frontend": (AudioFrontEnd, (1, 1, 16000)),
}


def calibrate(model, shape, batches=4, batch=4):
    """BatchNorm running statistics from seeded random batches (the rest in eval mode)"""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((batch,) + tuple(shape[1:]), generator=gen))
    model.eval()


def redraw_zero_weights(model):
    """weights (2 or more dims) that are all zero get N(0, 0.02^2): no dead head"""
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def export(name, out):
    make, shape = MODELS[name]
    onnx_path = os.path.join(out, name + ".onnx")
    npy_path = os.path.join(out, name + "_input.npy")
    if not os.path.exists(onnx_path):
        torch.manual_seed(0)
        model = make().eval()
        redraw_zero_weights(model)
        calibrate(model, shape)
        x = torch.randn(*shape)
        tmp = onnx_path + ".tmp"
        err = None
        for opset in (13, 17):
            try:
                # not under torch.no_grad(): there nn.MultiheadAttention (ViT) takes its fused
                # fast path, which has no ONNX export
                torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["input"],
                                  output_names=["output"])
                err = None
                break
            except Exception as e:  # torch raises many kinds; the reason is printed
                err = "opset %d: %s" % (opset, str(e).strip().split("\n")[0][:200])
        if err:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise RuntimeError(err)
        os.replace(tmp, onnx_path)
        print("exported %s (opset %d)" % (onnx_path, opset))
    if not os.path.exists(npy_path):
        rng = np.random.default_rng(1)
        np.save(npy_path, rng.standard_normal(shape).astype(np.float32))


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "list":
        for name, (_, shape) in MODELS.items():
            print(name, "x".join(map(str, shape)))
        return 0
    if len(sys.argv) < 3 or sys.argv[1] != "export":
        sys.exit("usage: zoo.py list | zoo.py export OUTDIR NAME...")
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    failed = 0
    for name in sys.argv[3:]:
        if name not in MODELS:
            print("%s: export failed: no such model (zoo.py list)" % name)
            failed = 1
            continue
        try:
            export(name, out)
        except Exception as e:
            print("%s: export failed: %s" % (name, str(e).strip().split("\n")[0]))
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
