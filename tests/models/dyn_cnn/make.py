# make.py - tests/models/dyn_cnn: a small CNN whose input height and width are decided at
# run time (ONNX dims H, W), with torch's outputs at four extents. Not run by make test
# (the committed files are what the tests read); to remake them, from this folder:
#     /usr/bin/python3 make.py
# writes model.onnx and in_HxW.npy, out_HxW.npy for HxW in 32x32, 47x75, 96x128, 64x33
# (fixed seeds). Compile with: kgen model.onnx --dim H=32..96 --dim W=32..128 (the file dims).
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = nn.Conv2d(3, 16, 3, padding=1)
        s.b1 = nn.BatchNorm2d(16)
        s.p = nn.MaxPool2d(3, 2, 1)
        s.c2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        s.c3 = nn.Conv2d(32, 32, 3, padding=1)
        s.d = nn.Conv2d(16, 32, 1, stride=2)
        s.fc = nn.Linear(32, 10)

    def forward(s, x):
        x = torch.relu(s.b1(s.c1(x)))
        x = s.p(x)
        y = torch.relu(s.c2(x))
        y = s.c3(y) + s.d(x)
        y = torch.relu(y)
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return s.fc(y)


torch.manual_seed(0)
m = Net().eval()
with torch.no_grad():
    m.b1.running_mean.uniform_(-0.5, 0.5)
    m.b1.running_var.uniform_(0.5, 2)
torch.onnx.export(m, torch.randn(1, 3, 40, 56), "model.onnx", input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {2: "H", 3: "W"}}, opset_version=13)
g = torch.Generator().manual_seed(1)
for (h, w) in [(32, 32), (47, 75), (96, 128), (64, 33)]:
    x = torch.randn(1, 3, h, w, generator=g)
    with torch.no_grad():
        y = m(x)
    np.save(f"in_{h}x{w}.npy", x.numpy())
    np.save(f"out_{h}x{w}.npy", y.numpy())
