# SPDX-License-Identifier: MIT
"""A drop-in for the parts of PopTorch its tutorials use: change `import poptorch` to
`from ipusim import poptorch` and a script runs on a simulated IPU system.

Each host call (a call of a trainingModel or inferenceModel) computes for real with torch on the
CPU, so losses, predictions and accuracies are real, and advances a simulated clock by the cycles
the simulator gives that call. The model is exported to ONNX (torch.onnx.export, without weights)
on the first call of each input shape, with its blocks taken from the modules each poptorch.Block
encloses, and simulated as an "onnx" workload; `model.simulated_report()` gives the simulated time.
"""
import enum
import os

import torch

from . import optim
from ._blocks import BeginBlock, Block, BlockFunction
from ._executor import Executor, simulator_config
from ._options import (AutoStage, Liveness, Options, OutputMode, ParallelPhasedExecution, Phase, PipelinedExecution,
                       SerialPhasedExecution, ShardedExecution, Stage, TensorLocationSettings, _non_negative)

AnchorMode = OutputMode  # PopTorch's older name

__all__ = ["Options", "OutputMode", "AnchorMode", "TensorLocationSettings", "Block", "BeginBlock", "BlockFunction", "Stage",
           "PipelinedExecution", "ShardedExecution", "SerialPhasedExecution", "ParallelPhasedExecution", "Phase", "Liveness",
           "AutoStage", "DataLoader", "DataLoaderMode", "trainingModel", "inferenceModel", "identity_loss", "optim", "setLogLevel",
           "simulator_config"]


class DataLoaderMode(enum.Enum):
    Sync = 0
    Async = 1
    AsyncRebatched = 2


class DataLoader(torch.utils.data.DataLoader):
    """Batches of batch_size x device iterations x replicas x gradient accumulation samples: one
    host call's worth (PopTorch's combined batch). Loading runs in torch, with at most one worker
    process per CPU core; the mode and num_workers given are recorded in `options`, whose models
    made after it simulate the host's data loader with them (run.data_loader), at the per-sample
    cost Options.simulator(sample_seconds=...) gives."""

    def __init__(self, options, dataset, batch_size=1, shuffle=False, num_workers=0, drop_last=True, mode=DataLoaderMode.Sync,
                 **kwargs):
        if not isinstance(options, Options):
            raise TypeError(f"options: expected poptorch.Options, found {type(options).__name__}")
        self.combinedBatchSize = batch_size * options.device_iterations * options.replication_factor * \
            options.Training.gradient_accumulation
        if not drop_last and hasattr(dataset, "__len__") and len(dataset) % self.combinedBatchSize:
            # As PopTorch: a short last batch would not make a whole host call.
            raise ValueError(f"DataLoader: the dataset's {len(dataset)} samples are not a whole number of host calls of "
                             f"{self.combinedBatchSize} (batch_size x device iterations x replicas x gradient accumulation) "
                             "and drop_last is False: set drop_last=True")
        options._data_loader = {"mode": "sync" if DataLoaderMode(mode) == DataLoaderMode.Sync else "async",
                                "workers": _non_negative("num_workers", num_workers)}
        kwargs.pop("async_options", None)
        kwargs.pop("rebatched_worker_size", None)
        kwargs.pop("auto_distributed_partitioning", None)
        super().__init__(dataset, batch_size=self.combinedBatchSize, shuffle=shuffle, num_workers=min(num_workers, os.cpu_count() or 1),
                         drop_last=drop_last, **kwargs)


def identity_loss(x, reduction):
    """Marks x as the loss, reduced as torch's losses are ("sum", "mean" or "none"), and returns
    it. The simulator trains from the loss op the export holds beneath it (a
    SoftmaxCrossEntropyLoss or NegativeLogLikelihoodLoss, torch's cross_entropy or nll_loss); a
    scalar is returned as it is, so the export gets no reduction of one value."""
    if reduction not in ("sum", "mean", "none"):
        raise ValueError(f"identity_loss: reduction: expected 'sum', 'mean' or 'none', found {reduction!r}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"identity_loss: x: expected a torch.Tensor, found {type(x).__name__}")
    if x.dim() == 0 or reduction == "none":
        return x
    return x.sum() if reduction == "sum" else x.mean()


def setLogLevel(level):
    """Accepted: the simulator's notes go to stderr whatever the level."""
    del level


def trainingModel(model, options=None, optimizer=None):
    """The model, trained on the simulated system: call it with a combined batch."""
    return Executor(model, options or Options(), True, optimizer)


def inferenceModel(model, options=None):
    """The model, run forward on the simulated system: call it with a combined batch."""
    return Executor(model, options or Options(), False)
