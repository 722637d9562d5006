#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PopTorch pipelining tutorial's MNIST script, on a simulated IPU-M2000.

This is the tutorial's script (its model with blocks B1-B4, its options, its training and test
loops and command line) with one change: `from ipusim import poptorch` where it has
`import poptorch`. Training and testing compute for real with torch on the CPU, so losses and
accuracies are real; every host call also advances a simulated IPU clock by the cycles the
simulator gives it. Each host call prints its simulated time, each epoch its simulated
throughput beside the wall-clock one.

Data: a local MNIST copy (--data-dir, torchvision's layout), else torchvision's download, else
(no network, no torchvision, or --generated) a generated stand-in of the same shape.

    PYTHONPATH=build/python python3 tools/examples/mnist_pipelining.py --epochs 1
"""
import argparse
import contextlib
import json
import os
import socket
import sys
import time

import torch
import torch.nn as nn

from ipusim import poptorch

torch.manual_seed(0)  # the tutorial's seed: the same weights and shuffles every run

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # the tutorial's normalisation


def generated_mnist(samples, seed):
    """A stand-in for MNIST when it cannot be had: 28x28 grey images of 10 classes, each class a
    fixed pattern of strokes, shifted by up to 2 pixels and noised per image. The model learns it
    as it learns MNIST, so accuracies mean something; they are not MNIST's."""
    generator = torch.Generator().manual_seed(1234)  # the classes are the same in both splits
    coarse = torch.rand(10, 1, 7, 7, generator=generator)
    patterns = (nn.functional.interpolate(coarse, size=28, mode="bilinear", align_corners=False) > 0.6).float()
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 10, (samples,), generator=generator)
    images = patterns[labels]
    shifts = torch.randint(-2, 3, (samples, 2), generator=generator)
    for i, (dy, dx) in enumerate(shifts.tolist()):
        images[i] = torch.roll(images[i], (dy, dx), dims=(1, 2))
    images = (images + 0.9 * torch.randn(images.shape, generator=generator)).clamp(0, 1)
    return torch.utils.data.TensorDataset((images - MNIST_MEAN) / MNIST_STD, labels)


def mnist(opts, train):
    """MNIST's training or test split, or the generated stand-in."""
    if not opts.generated:
        try:
            import torchvision
            transform = torchvision.transforms.Compose(
                [torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((MNIST_MEAN,), (MNIST_STD,))])
            root = opts.data_dir or os.path.expanduser("~/.torch/datasets")
            socket.setdefaulttimeout(20)  # an unreachable mirror fails instead of hanging
            with contextlib.redirect_stdout(sys.stderr):  # torchvision reports its download on stdout
                return torchvision.datasets.MNIST(root, train=train, download=opts.data_dir is None, transform=transform)
        except Exception as error:  # no torchvision, no network, or no copy where --data-dir says
            if opts.data_dir:
                sys.exit(f"--data-dir {opts.data_dir}: expected MNIST in torchvision's layout (MNIST/raw/...): {error}")
            print(f"MNIST is not available ({type(error).__name__}: {error}); using a generated stand-in", file=sys.stderr)
            opts.generated = True
    samples = opts.generated_samples if train else opts.generated_samples // 5
    return generated_mnist(samples, seed=1 if train else 2)


def get_mnist_data(opts):
    options = poptorch.Options()
    options.Training.gradientAccumulation(opts.gradient_accumulation)
    options.deviceIterations(opts.device_iterations)
    training_data = poptorch.DataLoader(options, mnist(opts, train=True), batch_size=opts.batch_size, shuffle=True,
                                        mode=poptorch.DataLoaderMode.Async, num_workers=16)
    test_options = poptorch.Options().deviceIterations(opts.gradient_accumulation * opts.device_iterations)
    test_data = poptorch.DataLoader(test_options, mnist(opts, train=False), batch_size=opts.test_batch_size, shuffle=True,
                                    drop_last=True, mode=poptorch.DataLoaderMode.Async, num_workers=16)
    return training_data, test_data


class ConvLayer(nn.Module):
    def __init__(self, in_channels, num_filters, kernel_size, pool_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, num_filters, kernel_size=kernel_size)
        self.pool = nn.MaxPool2d(kernel_size=pool_size)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = self.relu(x)
        return x


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = ConvLayer(1, 10, 5, 2)
        self.layer2 = ConvLayer(10, 20, 5, 2)
        self.layer3 = nn.Linear(320, 256)
        self.layer3_act = nn.ReLU()
        self.layer4 = nn.Linear(256, 10)

    def forward(self, x):
        with poptorch.Block("B1"):
            x = self.layer1(x)
        with poptorch.Block("B2"):
            x = self.layer2(x)
        with poptorch.Block("B3"):
            x = x.view(-1, 320)
            x = self.layer3_act(self.layer3(x))
        with poptorch.Block("B4"):
            x = self.layer4(x)
        return x


class TrainingModelWithLoss(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss = nn.CrossEntropyLoss()

    def forward(self, args, labels=None):
        output = self.model(args)
        if labels is None:
            return output
        with poptorch.Block("B4"):
            loss = self.loss(output, labels)
        return output, loss


def accuracy(predictions, labels):
    _, ind = torch.max(predictions, 1)
    # By default a training call returns the last micro-batch's predictions only: score those.
    labels = labels[-predictions.size()[0]:]
    return torch.sum(torch.eq(ind, labels)).item() / labels.size()[0] * 100.0


def simulated_seconds(model):
    """The simulated IPU time of the model's host calls so far (None on real PopTorch)."""
    return getattr(model, "simulated_seconds", None)


def throughput(samples, wall, simulated, model):
    text = f"{samples:,} samples: wall-clock {samples / wall:,.1f} samples/s ({wall:.2f} s)"
    if simulated is not None:
        # What the simulated figure assumes, beside it: the IPUs and the host model.
        text += f" | simulated IPU {samples / simulated:,.1f} samples/s ({simulated:.6f} s; {model.simulator_assumptions})"
    return text


def train(training_model, training_data, opts):
    for epoch in range(1, opts.epochs + 1):
        print(f"Epoch {epoch}/{opts.epochs}")
        start, simulated_start, samples = time.perf_counter(), simulated_seconds(training_model), 0
        for step, (data, labels) in enumerate(training_data, 1):
            preds, losses = training_model(data, labels)
            samples += len(data)
            mean_loss = torch.mean(losses).item()
            line = f"  call {step}/{len(training_data)}  Loss:{mean_loss:0.4f} | Accuracy:{accuracy(preds, labels):0.2f}%"
            if simulated_start is not None:
                line += f" | IPU {training_model.last_call_seconds * 1e3:.3f} ms"
            print(line, flush=True)
        simulated = simulated_seconds(training_model)
        print(f"  epoch {epoch}: " + throughput(samples, time.perf_counter() - start,
                                                None if simulated is None else simulated - simulated_start, training_model))


def test(inference_model, test_data):
    start, samples, sum_acc = time.perf_counter(), 0, 0.0
    for data, labels in test_data:
        output = inference_model(data)
        samples += len(data)
        sum_acc += accuracy(output, labels)
    print(f"Accuracy on test set: {sum_acc / len(test_data):0.2f}%")
    print("  test: " + throughput(samples, time.perf_counter() - start, simulated_seconds(inference_model), inference_model))


def arguments():
    parser = argparse.ArgumentParser(description="MNIST training in PopTorch, on a simulated IPU-M2000")
    parser.add_argument("--batch-size", type=int, default=40, help="batch size for training (default: 40)")
    parser.add_argument("--device-iterations", type=int, default=10, help="device iterations for training (default: 10)")
    parser.add_argument("--gradient-accumulation", type=int, default=10, help="gradient accumulation count (default: 10)")
    parser.add_argument("--test-batch-size", type=int, default=8, help="batch size for testing (default: 8)")
    parser.add_argument("--epochs", type=int, default=3, help="number of epochs to train (default: 3)")
    parser.add_argument("--learning-rate", type=float, default=0.001, help="learning rate (default: 0.001)")
    parser.add_argument("--profile", action="store_true",
                        help="write the simulated profile (summary.json, a Perfetto trace.json) of each kind of host call")
    parser.add_argument("--profile-dir", default="./profile", help="where to write the profile (default: ./profile)")
    parser.add_argument("--strategy", choices=["sharded", "pipelined"], default="pipelined", help="execution strategy")
    parser.add_argument("--offload-optimiser", action="store_true", help="offload the optimiser state to Streaming Memory")
    parser.add_argument("--debug", action="store_true", help="print debug logging")
    parser.add_argument("--data-dir", help="a local MNIST copy in torchvision's layout (default: download)")
    parser.add_argument("--generated", action="store_true", help="use the generated stand-in for MNIST, not MNIST")
    parser.add_argument("--generated-samples", type=int, default=8000,
                        help="training images of the generated stand-in; its test set has a fifth as many (default: 8000)")
    return parser.parse_args()


def main():
    opts = arguments()
    if opts.debug:
        poptorch.setLogLevel(1)
    training_data, test_data = get_mnist_data(opts)
    model = Network()
    model_with_loss = TrainingModelWithLoss(model)
    model_opts = poptorch.Options().deviceIterations(opts.device_iterations)
    stages = [poptorch.Stage(f"B{i + 1}").ipu(i) for i in range(4)]
    if opts.strategy == "pipelined":
        model_opts.setExecutionStrategy(poptorch.PipelinedExecution(*stages))
        model_opts.Training.gradientAccumulation(opts.gradient_accumulation)
    else:
        model_opts.setExecutionStrategy(poptorch.ShardedExecution(*stages))
    if opts.offload_optimiser:
        # Activations, weights and accumulators stay on chip; the optimiser state goes to
        # Streaming Memory and is streamed in for each weight update.
        model_opts.TensorLocations.setActivationLocation(poptorch.TensorLocationSettings().useOnChipStorage(True))
        model_opts.TensorLocations.setWeightLocation(poptorch.TensorLocationSettings().useOnChipStorage(True))
        model_opts.TensorLocations.setAccumulatorLocation(poptorch.TensorLocationSettings().useOnChipStorage(True))
        model_opts.TensorLocations.setOptimizerLocation(poptorch.TensorLocationSettings().useOnChipStorage(False))
    if opts.profile:
        os.environ["POPLAR_ENGINE_OPTIONS"] = json.dumps({"autoReport.all": "true", "autoReport.directory": opts.profile_dir})

    training_model = poptorch.trainingModel(model_with_loss, model_opts,
                                            optimizer=poptorch.optim.AdamW(model.parameters(), lr=opts.learning_rate))
    print("Training...")
    train(training_model, training_data, opts)

    # Test with the trained weights and the same strategy, each host call taking as many
    # micro-batches as a training call did.
    model_opts = model_opts.clone()
    model_opts.Training.gradientAccumulation(1)
    model_opts.deviceIterations(opts.device_iterations * opts.gradient_accumulation)
    inference_model = poptorch.inferenceModel(model, model_opts)
    training_model.detachFromDevice()
    print("Testing...")
    test(inference_model, test_data)
    inference_model.detachFromDevice()


if __name__ == "__main__":
    main()
