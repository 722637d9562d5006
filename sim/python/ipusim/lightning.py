# SPDX-License-Identifier: MIT
"""PyTorch Lightning's IPU strategy on the simulator.

    from ipusim.lightning import IPUStrategy
    trainer = pl.Trainer(accelerator="ipu", devices=8, strategy=IPUStrategy(device_iterations=32))

Lightning's IPUStrategy (pytorch_lightning 1.6 to 1.9, pytorch_lightning/strategies/ipu.py) wraps
the LightningModule in poptorch.trainingModel and inferenceModel with poptorch.Options it builds
from its arguments and the Trainer's. Where Lightning is installed, IPUStrategy here is that
strategy running on ipusim.poptorch, so every host call is simulated. The options follow
Lightning's rules, which `poptorch_options` gives without Lightning:

    IPUStrategy / Trainer                     poptorch.Options (training; inference)
    device_iterations=n                       deviceIterations(n)
    Trainer(devices=d)                        replicationFactor(d), unless the options given set it
    Trainer(accumulate_grad_batches=g)        Training.gradientAccumulation(g); 1 for inference
    training_opts / inference_opts            used as given, in place of the above
    autoreport=True, autoreport_dir=dir       the simulated profile of each kind of host call in dir
    PL_GLOBAL_SEED (seed_everything)          randomSeed(seed)
"""
import json
import os

from . import poptorch

__all__ = ["IPUStrategy", "poptorch_options", "LIGHTNING_AVAILABLE"]


def poptorch_options(training, device_iterations=1, devices=1, accumulate_grad_batches=1, training_opts=None,
                     inference_opts=None):
    """The poptorch.Options Lightning's IPUStrategy uses for training (training=True) or for
    validation, testing and prediction: the user's, or built from the strategy's and the
    Trainer's arguments, with as many replicas as the user's options set, else `devices`."""
    for name, opts in (("training_opts", training_opts), ("inference_opts", inference_opts)):
        if opts is not None and not isinstance(opts, poptorch.Options):
            raise TypeError(f"{name}: expected poptorch.Options, found {type(opts).__name__}")
    given = training_opts if training else inference_opts
    if given is not None:
        return given
    replicas = (training_opts or inference_opts).replication_factor if (training_opts or inference_opts) else devices
    opts = poptorch.Options().deviceIterations(device_iterations).replicationFactor(replicas)
    opts.Training.gradientAccumulation(accumulate_grad_batches if training else 1)
    if os.environ.get("PL_GLOBAL_SEED"):
        opts.randomSeed(int(os.environ["PL_GLOBAL_SEED"]))
    return opts


def _autoreport(autoreport, autoreport_dir):
    """Lightning's autoreport: PopTorch's profile options, under which ipusim.poptorch writes the
    simulated profile of each kind of host call."""
    if autoreport:
        options = {"autoReport.all": True}
        if autoreport_dir:
            os.makedirs(autoreport_dir, exist_ok=True)
            options["autoReport.directory"] = str(autoreport_dir)
        os.environ["POPLAR_ENGINE_OPTIONS"] = json.dumps(options)


try:
    from pytorch_lightning.strategies import ipu as _lightning_ipu
    from pytorch_lightning.accelerators import ipu as _lightning_accelerator
    LIGHTNING_AVAILABLE = hasattr(_lightning_ipu, "IPUStrategy")
except ImportError:
    LIGHTNING_AVAILABLE = False

if LIGHTNING_AVAILABLE:
    class IPUStrategy(_lightning_ipu.IPUStrategy):
        """Lightning's IPUStrategy with ipusim.poptorch in place of PopTorch and the simulated
        system in place of IPU hardware."""

        def __init__(self, *args, **kwargs):
            # Lightning's strategy and accelerator look PopTorch and the hardware up in their
            # modules: point them at the simulator.
            _lightning_ipu.poptorch = poptorch
            _lightning_ipu._IPU_AVAILABLE = True
            _lightning_accelerator._IPU_AVAILABLE = True
            super().__init__(*args, **kwargs)

        def _create_opts(self, training):
            trainer = self.lightning_module.trainer
            return poptorch_options(training, self.device_iterations, self.replication_factor, trainer.accumulate_grad_batches)
else:
    class IPUStrategy:
        """Without Lightning: the strategy's arguments and the options Lightning would build from
        them (`options()`), to read or pass to ipusim.poptorch directly."""

        def __init__(self, device_iterations=1, autoreport=False, autoreport_dir=None, training_opts=None,
                     inference_opts=None, **lightning_arguments):
            if not isinstance(device_iterations, int) or device_iterations < 1:
                raise ValueError(f"device_iterations: expected a positive integer, found {device_iterations!r}")
            self.device_iterations = device_iterations
            self.lightning_arguments = lightning_arguments  # accelerator, plugins: Lightning's own
            self._training_opts = training_opts
            self._inference_opts = inference_opts
            poptorch_options(True, training_opts=training_opts, inference_opts=inference_opts)  # checks their types
            _autoreport(autoreport, autoreport_dir)

        def options(self, training, devices=1, accumulate_grad_batches=1):
            """The poptorch.Options of a Trainer(devices=..., accumulate_grad_batches=...)."""
            return poptorch_options(training, self.device_iterations, devices, accumulate_grad_batches, self._training_opts,
                                    self._inference_opts)

        def __getattr__(self, name):
            raise AttributeError(f"IPUStrategy.{name}: PyTorch Lightning (1.6 to 1.9) is not installed, so this strategy "
                                 "only maps its arguments to poptorch.Options (options()); run the model with ipusim.poptorch")
