#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exports models to ONNX for ipusim's "onnx" workload, without weights (only the graph).

    export_models.py OUTDIR resnet50           torchvision's ResNet-50 v1.5 -> OUTDIR/resnet50.onnx
    export_models.py OUTDIR mlp mlp_loss cnn block joins scaled norms norms_folded
                                               the small models the tests compare with JSON graphs
    export_models.py OUTDIR gpt2_small vit_b_16 vit_l_16 lstm_lm gru_lm mobilenet_v2 efficientnet_b0 densenet121
                                               the model set at full size (model_set.py), for the
                                               benchmark: exported with their losses at batch 2

Models are exported in training mode (torch.onnx.TrainingMode.TRAINING), so batch norm keeps
its own node and dropout stays, with node names carrying the module path ("/layer1/...") that
"blocks" prefixes match. Needs Debian's python3-torch and python3-torchvision.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_set  # noqa: E402


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 1024)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(1024, 10, bias=False)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


class Cnn(nn.Module):
    """A small residual CNN: strided convolutions, batch norm, pooling, a residual add."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.down = nn.Conv2d(16, 32, 1, stride=2, bias=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn0(self.stem(x))))
        x = torch.relu(self.bn1(self.conv(x)) + self.down(x))
        return self.fc(torch.flatten(self.gap(x), 1))


class Block(nn.Module):
    """A tiny post-norm transformer encoder layer: 4 heads of 16 over 32 tokens."""

    def __init__(self, seq=32, dim=64, heads=4):
        super().__init__()
        self.seq, self.dim, self.heads = seq, dim, heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, 4 * dim)
        self.ff2 = nn.Linear(4 * dim, dim)
        self.ln2 = nn.LayerNorm(dim)

    def split(self, t):
        return t.reshape(-1, self.seq, self.heads, self.dim // self.heads).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.permute(0, 1, 3, 2)) / (self.dim // self.heads) ** 0.5
        context = torch.matmul(torch.softmax(scores, -1), v).permute(0, 2, 1, 3).reshape(-1, self.seq, self.dim)
        x = self.ln1(x + self.proj(context))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))


class MlpLoss(Mlp):
    """The MLP with its loss inside, as PopTorch models return it: exports SoftmaxCrossEntropyLoss."""

    def forward(self, x, labels):
        return nn.functional.cross_entropy(super().forward(x), labels)


class Joins(nn.Module):
    """torch.cat, chunk and slicing: Concat, Split and Slice."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(16, 32)
        self.out = nn.Linear(32, 8)

    def forward(self, x):
        both = torch.cat([self.a(x), self.b(x)], dim=2)
        first, second = both.chunk(2, dim=1)
        return self.out(torch.relu(first[:, :, 8:40]) + second[:, :, 16:48])


class Scaled(nn.Module):
    """A squeeze-and-excitation gate and learned element-wise parameters (a per-channel scale
    and shift): Mul and Add of weight operands."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.gamma = nn.Parameter(torch.ones(16, 1, 1))
        self.beta = nn.Parameter(torch.zeros(1, 16, 1, 1))
        self.out = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        y = self.conv(x)
        y = y * torch.sigmoid(nn.functional.adaptive_avg_pool2d(y, 1))
        return self.out(torch.flatten(y * self.gamma + self.beta, 1))


class Norms(nn.Module):
    """GroupNorm (torch writes Reshape, InstanceNormalization, Reshape, then Mul and Add of its
    weights) and InstanceNorm2d (one InstanceNormalization), with learned parameters and without,
    then the mean of each channel's image (ReduceMean)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.gn = nn.GroupNorm(4, 16)
        self.inorm = nn.InstanceNorm2d(16, affine=True)
        self.gn_plain = nn.GroupNorm(2, 16, affine=False)
        self.inorm_plain = nn.InstanceNorm2d(16)
        self.out = nn.Linear(16, 10)

    def forward(self, x):
        x = self.inorm(torch.relu(self.gn(self.conv(x))))
        x = self.inorm_plain(torch.relu(self.gn_plain(x)))
        return self.out(x.mean([2, 3]))


def resnet50():
    import torchvision

    return torchvision.models.resnet50()  # v1.5: the stride on the 3x3 convolution


def torchvision_model(name):
    def make():
        import torchvision

        return torchvision.models.get_model(name, weights=None)
    return make


class WithLoss(nn.Module):
    """A classifier with its cross-entropy inside, as a PopTorch training model returns it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, labels):
        return nn.functional.cross_entropy(self.model(x), labels)


def classifier(name):
    return lambda: WithLoss(torchvision_model(name)())


def tokens(steps):
    return lambda: (torch.zeros(2, steps, dtype=torch.long), torch.zeros(2, steps, dtype=torch.long))


def images(side):
    return lambda: (torch.zeros(2, 3, side, side), torch.zeros(2, dtype=torch.long))


MODELS = {  # name: (constructor, example inputs)
    "mlp": (Mlp, lambda: (torch.zeros(1, 784),)),
    "mlp_loss": (MlpLoss, lambda: (torch.zeros(1, 784), torch.zeros(1, dtype=torch.long))),
    "cnn": (Cnn, lambda: (torch.zeros(1, 3, 32, 32),)),
    "block": (Block, lambda: (torch.zeros(1, 32, 64),)),
    "joins": (Joins, lambda: (torch.zeros(1, 8, 16),)),
    "scaled": (Scaled, lambda: (torch.zeros(1, 8, 8, 8),)),
    "norms": (Norms, lambda: (torch.zeros(1, 3, 8, 8),)),
    "norms_folded": (Norms, lambda: (torch.zeros(1, 3, 8, 8),)),
    "resnet50": (resnet50, lambda: (torch.zeros(1, 3, 224, 224),)),
    # The model set at full size.
    "gpt2_small": (lambda: model_set.Gpt(**model_set.GPT2_SMALL), tokens(model_set.GPT2_SMALL["seq"])),
    "lstm_lm": (lambda: model_set.RecurrentLm(nn.LSTM, **model_set.RNN_LM), tokens(model_set.RNN_STEPS)),
    "gru_lm": (lambda: model_set.RecurrentLm(nn.GRU, **model_set.RNN_LM), tokens(model_set.RNN_STEPS)),
    "vit_b_16": (classifier("vit_b_16"), images(224)),
    "vit_l_16": (classifier("vit_l_16"), images(224)),
    "mobilenet_v2": (classifier("mobilenet_v2"), images(224)),
    "efficientnet_b0": (classifier("efficientnet_b0"), images(224)),
    "densenet121": (classifier("densenet121"), images(224)),
}

# Exported without weights (graph inputs then), except for the model whose learned element-wise
# parameters only initializers mark as weights, and for one exported as torch does by default:
# with weights and constant folding (GroupNorm's unsqueezed weights become [C, 1, 1] constants).
WITH_WEIGHTS = {"scaled", "norms_folded"}
FOLDED = {"norms_folded"}


def export(name, out_dir):
    make, inputs = MODELS[name]
    torch.manual_seed(0)
    # Stochastic depth (EfficientNet-B0's) exports in training mode as a dropout.
    model = model_set.traceable(make()).train()
    example = inputs()
    torch.onnx.export(model, example, f"{out_dir}/{name}.onnx", opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=name in FOLDED,
                      export_params=name in WITH_WEIGHTS, input_names=["input", "labels"][:len(example)],
                      output_names=["output"])


def main():
    if len(sys.argv) < 3 or any(n not in MODELS for n in sys.argv[2:]):
        sys.exit(f"usage: export_models.py OUTDIR {{{'|'.join(MODELS)}}}...")
    import warnings

    warnings.filterwarnings("ignore")  # torch's notes on training-mode export
    for name in sys.argv[2:]:
        export(name, sys.argv[1])


if __name__ == "__main__":
    main()
