# SPDX-License-Identifier: MIT
"""A two-block PopTorch model trained on a simulated IPU-M2000 (docs/reference/python.md)."""
import torch

from ipusim import poptorch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(784, 256), torch.nn.Linear(256, 10)

    def forward(self, x, labels):
        with poptorch.Block("B1", ipu_id=0):
            x = torch.relu(self.fc1(x))
        with poptorch.Block("B2", ipu_id=1):
            x = self.fc2(x)
        return torch.nn.functional.cross_entropy(x, labels)


torch.manual_seed(0)
net = Net()
opts = poptorch.Options().deviceIterations(4)
opts.Training.gradientAccumulation(8)
model = poptorch.trainingModel(net, opts, optimizer=poptorch.optim.AdamW(net.parameters(), lr=1e-3))
for _ in range(3):  # a host call takes 4 x 8 micro-batches of 16
    loss = model(torch.randn(4 * 8 * 16, 784), torch.randint(0, 10, (4 * 8 * 16,)))
print(f"{model.calls} host calls, the last {model.last_call_seconds * 1e3:.3f} ms simulated")
print(model.report_text())
