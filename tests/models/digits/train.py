#!/usr/bin/python3
"""train.py - trains the browser demo's digit CNN and writes its committed files.

The data: scikit-learn's `load_digits`, the UCI "optical recognition of handwritten digits"
test set (1797 digits of 8x8 cells, each cell the number of ink pixels in a 4x4 block of a
32x32 bitmap, 0..16). A fixed stratified split (random_state=0) holds out 20% (360 digits)
for the test accuracy; the model never sees them while training.

The model (about 10k parameters): 1x1x8x8 input in 0..16 -> conv 3x3 (16, pad 1) -> relu
-> conv 3x3 (32, pad 1) -> relu -> max pool 2 -> linear 512 -> 10 logits. Training sees
x / 16; after training the 1/16 is folded into the first convolution's weights, so the
exported model takes the cells as they are (0..16), as examples/web/preprocess.mjs makes
them from a drawing. Training moves half the digits by a small random affine map (slant,
shear, scale, a shift up to one cell), for drawings, which differ from the UCI digits so. Fixed seeds and one thread: running
the script twice writes identical files. It takes a few seconds on one CPU core.

Writes, next to this script:
  model.onnx        opset 13, static shape [1, 1, 8, 8] -> [1, 10] (as tests/models/make_models.py)
  input_0.npy       the first held-out digit, [1, 1, 8, 8] f32 (tests/models.sh and the others)
  output_0.npy      torch's logits for it, [1, 10] f32
  heldout.npy       the first held-out digit of each class 0..9, [10, 1, 8, 8] f32
  heldout_labels.npy  their labels, [10] int64 (0..9)
  heldout_logits.npy  torch's logits for them, [10, 10] f32
  accuracy.txt      the held-out test accuracy, and how the files were made

Run with Debian's interpreter (python3-sklearn, python3-torch, python3-onnx, python3-numpy):
    apt-get install -y python3-sklearn
    /usr/bin/python3 tests/models/digits/train.py
No test runs this script: the tests read the committed files only.
"""
import io
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13
EPOCHS = 40
BATCH = 32


class DigitCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):           # x: [N, 1, 8, 8]
        y = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        y = torch.max_pool2d(y, 2)
        return self.fc(torch.flatten(y, 1))


def augmented(x, g):
    """x [N, 1, 8, 8] with each digit moved by a random affine map (rotation up to 12
    degrees, shear up to 0.2, scale 0.9 to 1.1, shift up to one cell; bilinear, zeros
    come in), for half the digits; the rest unchanged. Drawings differ from the UCI
    digits in slant and proportion more than in anything else."""
    n = x.shape[0]
    a = (torch.rand(n, generator=g) * 2 - 1) * (12 * np.pi / 180)
    sh = (torch.rand(n, generator=g) * 2 - 1) * 0.2
    sc = 0.9 + torch.rand(n, generator=g) * 0.2
    t = (torch.rand(n, 2, generator=g) * 2 - 1) * 0.25          # 1 cell = 0.25 of [-1, 1]
    keep = torch.rand(n, generator=g) < 0.5
    cos, sin = torch.cos(a) / sc, torch.sin(a) / sc
    theta = torch.stack([torch.stack([cos, -sin + sh, t[:, 0]], 1),
                         torch.stack([sin, cos, t[:, 1]], 1)], 1)
    theta[keep] = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
    grid = nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
    return nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    torch.set_num_threads(1)        # the same summation order on every run
    torch.manual_seed(0)
    digits = load_digits()
    images = digits.images.astype(np.float32)
    xtr, xte, ytr, yte = train_test_split(images, digits.target, test_size=0.2,
                                          random_state=0, stratify=digits.target)
    xtr = torch.from_numpy(xtr).unsqueeze(1)
    xte = torch.from_numpy(xte).unsqueeze(1)
    ytr = torch.from_numpy(ytr).long()
    yte = torch.from_numpy(yte).long()

    model = DigitCNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    g = torch.Generator().manual_seed(1)
    for epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(xtr), generator=g)
        for k in range(0, len(order), BATCH):
            idx = order[k:k + BATCH]
            loss = nn.functional.cross_entropy(model(augmented(xtr[idx], g) / 16), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    model.eval()
    acc_scaled = accuracy(model, xte / 16, yte)

    # fold the input scaling into the first convolution: the model takes 0..16
    with torch.no_grad():
        model.conv1.weight.mul_(1.0 / 16)
    acc = accuracy(model, xte, yte)
    train_acc = accuracy(model, xtr, ytr)

    first = [int(np.nonzero(yte.numpy() == c)[0][0]) for c in range(10)]
    heldout = xte[first]
    with torch.no_grad():
        logits = model(heldout)
    x0 = xte[:1]
    with torch.no_grad():
        y0 = model(x0)

    buf = io.BytesIO()
    torch.onnx.export(model, (x0,), buf, opset_version=OPSET, do_constant_folding=True,
                      input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)
    import onnx
    m = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(m)
    with open(os.path.join(HERE, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    np.save(os.path.join(HERE, "input_0.npy"), x0.numpy().astype(np.float32))
    np.save(os.path.join(HERE, "output_0.npy"), y0.numpy().astype(np.float32))
    np.save(os.path.join(HERE, "heldout.npy"), heldout.numpy().astype(np.float32))
    np.save(os.path.join(HERE, "heldout_labels.npy"), yte[first].numpy().astype(np.int64))
    np.save(os.path.join(HERE, "heldout_logits.npy"), logits.numpy().astype(np.float32))

    wrong = int(round((1 - acc) * len(yte)))
    pred = logits.argmax(1).numpy()
    nparams = sum(p.numel() for p in model.parameters())
    lines = [
        "digits: held-out test accuracy %.2f%% (%d of %d wrong), train accuracy %.2f%%"
        % (100 * acc, wrong, len(yte), 100 * train_acc),
        "model: %d parameters, %d bytes of ONNX (opset %d), ops %s"
        % (nparams, len(buf.getvalue()), OPSET, " ".join(sorted({n.op_type for n in m.graph.node}))),
        "data: sklearn.datasets.load_digits, train_test_split(test_size=0.2, random_state=0, "
        "stratify=labels): %d train, %d test" % (len(ytr), len(yte)),
        "training: %d epochs, batch %d, Adam lr 3e-3 cosine, random affine maps, seed 0, "
        "torch %s (accuracy before folding the 1/16: %.2f%%)" % (EPOCHS, BATCH, torch.__version__, 100 * acc_scaled),
        "heldout.npy: the first test digit of each class (test indices %s), torch predicts %s"
        % (" ".join(map(str, first)), " ".join(map(str, pred))),
        "remake: apt-get install -y python3-sklearn; /usr/bin/python3 tests/models/digits/train.py",
    ]
    with open(os.path.join(HERE, "accuracy.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
