"""export_models.py - part of `make bench` (tests/bench/refs.sh): the models it compares
with reference libraries, made with seeded random weights; none of them is committed.

    /usr/bin/python3 tests/bench/export_models.py models OUTDIR
        full-size MobileNetV2 and ResNet-18 from torchvision (weights=None,
        torch.manual_seed(0)), eval mode, ONNX opset 13, input 1x3x224x224
    /usr/bin/python3 tests/bench/export_models.py movement OUTDIR
        the data-movement models of tests/bench/movement.sh (kgen issue 18): crnn, a small
        CRNN-like recognizer (conv backbone to [1,256,1,80], Squeeze, Transpose to
        [1,80,256], Linear to 6000 classes; input 1x3x48x320), and torchvision's
        shufflenet_v2_x1_0 (channel shuffles), squeezenet1_1 (Fire modules: Concat of
        conv outputs), googlenet (aux_logits=False, init_weights=True: Inception Concats)
        and densenet121 (dense Concats), input 1x3x224x224
    /usr/bin/python3 tests/bench/export_models.py convs OUTDIR
        3x3 convolutions, stride 1, pad 1, with bias, batch 1, 56x56: conv3x3_64_56
        (64 -> 64 channels), dw3x3_64_56 and dw3x3_144_56 (depthwise); each also as
        NAME_x2, two such convs in a row (the bench times the second one: a conv inside a
        network, reading the layout the previous op left)

write OUTDIR/NAME.onnx and a seeded input OUTDIR/NAME_input.npy, skipping those already
there. Needs torch (and torchvision for the models), onnx and numpy.
"""
import os
import sys

import numpy as np
import torch


def export(name, make, out, shape=(1, 3, 224, 224)):
    onnx_path = os.path.join(out, name + ".onnx")
    npy_path = os.path.join(out, name + "_input.npy")
    if not os.path.exists(onnx_path):
        torch.manual_seed(0)
        model = make().eval()
        x = torch.randn(*shape)
        tmp = onnx_path + ".tmp"
        with torch.no_grad():
            torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"], output_names=["output"])
        os.replace(tmp, onnx_path)
        print("exported", onnx_path)
    if not os.path.exists(npy_path):
        rng = np.random.default_rng(1)
        np.save(npy_path, rng.standard_normal(shape).astype(np.float32))


def conv3x3(c, groups, count=1):
    return lambda: torch.nn.Sequential(
        *[torch.nn.Conv2d(c, c, 3, stride=1, padding=1, groups=groups, bias=True) for _ in range(count)])


class Crnn(torch.nn.Module):
    """A CRNN-like recognizer: convs and pools take 3x48x320 to 256x1x80, then the
    sequence [80, 256] goes through a Linear layer (a MatMul with a [256, 6000] weight)."""

    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        r = torch.nn.ReLU
        self.backbone = torch.nn.Sequential(
            c(3, 32, 3, padding=1), r(), torch.nn.MaxPool2d(2),
            c(32, 64, 3, padding=1), r(), torch.nn.MaxPool2d(2),
            c(64, 128, 3, padding=1), r(), torch.nn.MaxPool2d((2, 1)),
            c(128, 256, 3, padding=1), r(), torch.nn.MaxPool2d((2, 1)),
            c(256, 256, (3, 1)), r())
        self.fc = torch.nn.Linear(256, 6000)

    def forward(self, x):
        f = self.backbone(x).squeeze(2).permute(0, 2, 1)
        return self.fc(f)


def movement(out):
    import torchvision

    m = torchvision.models
    export("crnn", Crnn, out, (1, 3, 48, 320))
    export("shufflenet", lambda: m.shufflenet_v2_x1_0(weights=None), out)
    export("squeezenet", lambda: m.squeezenet1_1(weights=None), out)
    export("googlenet", lambda: m.googlenet(weights=None, aux_logits=False, init_weights=True), out)
    export("densenet121", lambda: m.densenet121(weights=None), out)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("models", "convs", "movement"):
        sys.exit("usage: export_models.py models|convs|movement OUTDIR")
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if sys.argv[1] == "movement":
        movement(out)
    elif sys.argv[1] == "models":
        import torchvision

        export("mobilenetv2", lambda: torchvision.models.mobilenet_v2(weights=None), out)
        export("resnet18", lambda: torchvision.models.resnet18(weights=None), out)
    else:
        for name, c, g in (("conv3x3_64_56", 64, 1), ("dw3x3_64_56", 64, 64), ("dw3x3_144_56", 144, 144)):
            export(name, conv3x3(c, g), out, (1, c, 56, 56))
            export(name + "_x2", conv3x3(c, g, 2), out, (1, c, 56, 56))


if __name__ == "__main__":
    main()
