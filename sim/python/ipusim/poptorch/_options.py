# SPDX-License-Identifier: MIT
"""poptorch.Options and the execution strategies, and the simulator config they make."""
import copy
import enum
import sys

import torch

from .. import _ipusim


class OutputMode(enum.IntEnum):
    """What a host call returns of its micro-batches' outputs (values as PopTorch's)."""
    Final = 0
    EveryN = 1
    All = 2
    Sum = 3
    Default = 4

    def ipusim(self):
        return {OutputMode.Final: "final", OutputMode.All: "all", OutputMode.Sum: "sum", OutputMode.EveryN: "every_n"}[self]


class AutoStage(enum.Enum):
    SameAsIpu = 0
    AutoIncrement = 1


class Stage:
    """poptorch.Stage("B1", "B2").ipu(0): blocks run as one pipeline stage on one IPU."""

    def __init__(self, *block_names):
        self.blocks = list(block_names)
        self._ipu = None

    def ipu(self, ipu_id):
        self._ipu = ipu_id
        return self


class _Strategy:
    kind = None

    def __init__(self, *stages_or_blocks):
        # AutoStage: one stage per block on the IPU its annotation names, which is what no
        # explicit stage gives.
        self.stages = [s if isinstance(s, Stage) else Stage(s) for s in stages_or_blocks if not isinstance(s, AutoStage)]

    def ipusim(self):
        """The "strategy" of the config: explicit stages, or (none given) one per block on the
        IPU its annotation names (auto-staging)."""
        strategy = {"kind": self.kind}
        if self.stages:
            strategy["stages"] = [{"blocks": s.blocks, "ipu": s._ipu if s._ipu is not None else i}
                                  for i, s in enumerate(self.stages)]
        return strategy


class PipelinedExecution(_Strategy):
    kind = "pipelined"


class ShardedExecution(_Strategy):
    kind = "sharded"


class Liveness(enum.IntEnum):
    """Where phased execution keeps tensors between phases (values as PopTorch's). The
    simulator's phases keep nothing on chip between their turns: weights and saved activations
    stream from and to Streaming Memory whatever this says."""
    AlwaysLive = 0
    OffChipAfterFwd = 1
    OffChipAfterFwdNoOverlap = 2
    OffChipAfterEachPhase = 3


class Phase:
    """poptorch.Phase(Stage("A"), Stage("B")) or Phase("A", "B") (one stage of those blocks): what
    one execution phase runs."""

    def __init__(self, *stages_or_blocks):
        if stages_or_blocks and all(isinstance(a, Stage) for a in stages_or_blocks):
            self.stages = list(stages_or_blocks)
        elif stages_or_blocks and all(isinstance(a, str) for a in stages_or_blocks):
            self.stages = [Stage(*stages_or_blocks)]
        else:
            raise TypeError("Phase: expected poptorch.Stage objects or block names (strings), found "
                            f"{[type(a).__name__ for a in stages_or_blocks]}")

    def stage(self, index):
        return self.stages[index]

    def ipus(self, *ipus):
        """One IPU per stage of the phase."""
        if len(ipus) != len(self.stages):
            raise ValueError(f"Phase.ipus: the phase has {len(self.stages)} stage(s), found {len(ipus)} IPUs")
        for stage, ipu in zip(self.stages, ipus):
            stage.ipu(ipu)
        return self


class _PhasedExecution(_Strategy):
    """Phases of blocks that take turns, their weights streamed in from Streaming Memory: serial
    on IPU 0, parallel alternating between IPUs 0 and 1 (the next phase's loads overlapping this
    one's compute). Each phase runs one stage; the simulator places the phases itself."""
    kind = "phased"
    serial = True

    def __init__(self, *phases):
        if len(phases) == 1 and isinstance(phases[0], list) and all(isinstance(p, Phase) for p in phases[0]):
            phases = phases[0]  # a list of phases, as PopTorch's examples pass them
        if not phases:
            raise ValueError(f"{type(self).__name__}: expected the phases (PopTorch has no automatic staging for phased execution)")
        self.phases = [p if isinstance(p, Phase) else Phase(*(p if isinstance(p, list) else [p])) for p in phases]
        self.stages = []

    def phase(self, index):
        return self.phases[index]

    def useSeparateBackwardPhase(self, use=True):
        _note(f"useSeparateBackwardPhase({use!r}) is not simulated: each phase's backward pass is a turn of its own")
        return self

    def ipusim(self):
        name = type(self).__name__
        stages = []
        for i, phase in enumerate(self.phases):
            if len(phase.stages) != 1:
                raise ValueError(f"{name}: phase {i} has {len(phase.stages)} stages; the simulator runs one stage a phase "
                                 "(give its blocks as one Stage: Phase(\"A\", \"B\"))")
            stage = phase.stages[0]
            ipu = 0 if self.serial else i % 2
            if stage._ipu is not None and stage._ipu != ipu:
                raise ValueError(f"{name}: phase {i} on IPU {stage._ipu}; the simulator runs " +
                                 ("every phase on IPU 0" if self.serial else "phases alternately on IPUs 0 and 1") +
                                 f", phase {i} on IPU {ipu}")
            stages.append({"blocks": list(stage.blocks), "ipu": ipu})
        return {"kind": "phased", "phased": "serial" if self.serial else "parallel", "stages": stages}


class SerialPhasedExecution(_PhasedExecution):
    serial = True

    def setTensorsLiveness(self, liveness):
        _note(f"setTensorsLiveness({Liveness(liveness).name}) is not simulated: phases keep nothing on chip between their turns")
        return self


class ParallelPhasedExecution(_PhasedExecution):
    serial = False

    def sendTensorsOffChipAfterFwd(self, off_chip=True):
        _note(f"sendTensorsOffChipAfterFwd({off_chip!r}) is not simulated: phases keep nothing on chip between their turns")
        return self


class TensorLocationSettings:
    def __init__(self):
        self.on_chip = True

    def useOnChipStorage(self, use=True):
        self.on_chip = bool(use)
        return self


class _TrainingOptions:
    def __init__(self):
        self.gradient_accumulation = 1

    def gradientAccumulation(self, n):
        self.gradient_accumulation = _positive("Training.gradientAccumulation", n)
        return self


class _PrecisionOptions:
    def __init__(self):
        self.partials = None  # None: as the weights

    def setPartialsType(self, dtype):
        if dtype not in (torch.float, torch.half):
            raise ValueError(f"Precision.setPartialsType: expected torch.float or torch.half, found {dtype}")
        self.partials = "fp32" if dtype == torch.float else "fp16"
        return self


class _TensorLocationOptions:
    """Where tensors live. The simulator models the optimizer state in Streaming Memory; the other
    kinds stay on chip, as PopTorch keeps them by default."""

    def __init__(self):
        self.optimizer_on_chip = True
        self.io_tiles = 0

    def numIOTiles(self, n):
        """Tiles set aside for host I/O: the simulator prefetches every data input into them."""
        self.io_tiles = _non_negative("numIOTiles", n)
        return self

    def setOptimizerLocation(self, settings):
        self.optimizer_on_chip = _settings("setOptimizerLocation", settings).on_chip
        return self

    def setActivationLocation(self, settings):
        return self._on_chip_only("setActivationLocation", settings)

    def setWeightLocation(self, settings):
        return self._on_chip_only("setWeightLocation", settings)

    def setAccumulatorLocation(self, settings):
        return self._on_chip_only("setAccumulatorLocation", settings)

    def _on_chip_only(self, name, settings):
        if not _settings(name, settings).on_chip:
            raise NotImplementedError(f"{name}: only on-chip storage is simulated; of the tensor locations, "
                                      "setOptimizerLocation can offload the optimizer state")
        return self


def _settings(name, settings):
    if not isinstance(settings, TensorLocationSettings):
        raise TypeError(f"{name}: expected TensorLocationSettings, found {type(settings).__name__}")
    return settings


class _PopartOptions:
    """PopART's own options: the prefetch depth (defaultPrefetchBufferingDepth, or its newer name
    defaultBufferingDepth) is simulated with IO tiles; the others tune a compilation the
    simulator does not make."""

    _DEPTH_KEYS = ("defaultPrefetchBufferingDepth", "defaultBufferingDepth")

    def __init__(self):
        self.prefetch_depth = None  # None: the config's default, PopART's 1

    def set(self, key, value):
        if key in self._DEPTH_KEYS:
            self.prefetch_depth = _positive(f"_Popart.set({key!r})", value)
        else:
            _note(f"_Popart.set({key!r}, {value!r}) is ignored: PopART options tune a compilation that is not simulated")
        return self


def _note(message):
    print(f"ipusim: {message}", file=sys.stderr)


def _positive(name, n):
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"{name}: expected a positive integer, found {n!r}")
    return n


def _non_negative(name, n):
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{name}: expected an integer >= 0, found {n!r}")
    return n


class Options:
    """poptorch.Options: the settings the simulator models, and `simulator()` for the hardware."""

    def __init__(self):
        self.device_iterations = 1
        self.replication_factor = 1
        self.output_mode = OutputMode.Default
        self.output_return_period = 1
        self.strategy = None
        self.available_memory_proportion = None
        self.Training = _TrainingOptions()
        self.Precision = _PrecisionOptions()
        self.TensorLocations = _TensorLocationOptions()
        self._Popart = _PopartOptions()
        self.random_seed = None
        self.system = None  # None: the smallest system with enough IPUs
        # The host model: None keeps a system config file's own host and gives a preset PopTorch's
        # host as configs/validation/host.json calibrates it (DEFAULT_HOST).
        self.host = None
        self.simulated_precision = None  # None: float32
        self.system_overrides = {}
        self.sample_seconds = 0.0  # the host's time to load one sample on one core
        self._data_loader = None  # {"mode", "workers"} of the last poptorch.DataLoader made with these options

    def deviceIterations(self, n):
        self.device_iterations = _positive("deviceIterations", n)
        return self

    def replicationFactor(self, n):
        self.replication_factor = _positive("replicationFactor", n)
        return self

    def outputMode(self, mode, output_return_period=None):
        self.output_mode = OutputMode(mode)
        if output_return_period is not None:
            self.output_return_period = _positive("output_return_period", output_return_period)
        return self

    def anchorMode(self, mode, anchor_return_period=None):
        """The older name of outputMode (PopTorch's AnchorMode)."""
        return self.outputMode(mode, anchor_return_period)

    def setExecutionStrategy(self, strategy):
        if not isinstance(strategy, _Strategy):
            raise TypeError("setExecutionStrategy: expected PipelinedExecution, ShardedExecution, SerialPhasedExecution or "
                            f"ParallelPhasedExecution, found {type(strategy).__name__}")
        self.strategy = strategy
        return self

    def setAvailableMemoryProportion(self, proportions):
        """{"IPU0": 0.3, ...}: the simulator takes one proportion per IPU of a replica."""
        if not isinstance(proportions, dict) or not proportions:
            raise TypeError('setAvailableMemoryProportion: expected a dict such as {"IPU0": 0.3}')
        by_ipu = {}
        for key, value in proportions.items():
            if not (isinstance(key, str) and key.startswith("IPU") and key[3:].isdigit()) or not 0 < value <= 1:
                raise ValueError(f'setAvailableMemoryProportion: expected "IPU<n>": a proportion in (0, 1], found {key!r}: {value!r}')
            by_ipu[int(key[3:])] = float(value)
        self.available_memory_proportion = by_ipu
        return self

    def randomSeed(self, seed):
        """The IPU's random seed. The real computation runs in torch on the CPU: seed it with
        torch.manual_seed; the simulated time does not depend on it."""
        if not isinstance(seed, int):
            raise TypeError(f"randomSeed: expected an integer, found {type(seed).__name__}")
        self.random_seed = seed
        return self

    def enableExecutableCaching(self, path):
        _note(f"enableExecutableCaching({path!r}) is ignored: nothing is compiled for hardware")
        return self

    def simulator(self, system=None, precision=None, sample_seconds=None, host=None, **overrides):
        """The simulated hardware: a hardware preset of the library ("mk2", "m2000", "pod16",
        "pod64", "pod128", "pod256"), a config path, or None for the smallest with enough IPUs; `overrides` set values of it
        by JSON pointer under /system, e.g. simulator("pod16", **{"ipu/tiles": 1216}).
        `precision` "fp16" simulates the float32 model in half precision (weights, activations
        and, unless Precision.setPartialsType says otherwise, partials), as model.half() would
        run on IPUs; the CPU, which has no half matmuls, computes in float32. `sample_seconds` is the
        host's time to load and transform one sample on one core (your data set's and transforms'
        cost, which the simulator cannot know; default 0, a free loader): the data loader made
        with these options then builds each host call's batch with its workers in that time. `host`
        is the host model (configs/hardware/host/): "poptorch_calibrated", PopTorch's per-call and
        per-exchange costs as calibrated on a measured PopTorch run, or "ideal", a host that costs
        nothing (the bound the IPUs alone set); by default a preset system gets
        "poptorch_calibrated" and a system config file keeps its own host."""
        if host is not None:
            models = _ipusim.host_models()
            if host not in models:
                raise ValueError(f"simulator: expected host to be one of {', '.join(models)}, found {host!r}")
            self.host = host
        if precision not in (None, "fp16", "fp32"):
            raise ValueError(f'simulator: expected precision "fp16" or "fp32", found {precision!r}')
        if sample_seconds is not None:
            if isinstance(sample_seconds, bool) or not isinstance(sample_seconds, (int, float)) or not 0 <= sample_seconds <= 10:
                raise ValueError(f"simulator: expected sample_seconds from 0 to 10, found {sample_seconds!r}")
            self.sample_seconds = float(sample_seconds)
        self.simulated_precision = precision
        self.system = system
        self.system_overrides = {f"/system/{k.lstrip('/')}": v for k, v in overrides.items()}
        return self

    def toDict(self):
        """The options the simulator models, by PopTorch's names."""
        return {"device_iterations": self.device_iterations, "replication_factor": self.replication_factor,
                "gradient_accumulation": self.Training.gradient_accumulation, "output_mode": self.output_mode.name,
                "output_return_period": self.output_return_period, "random_seed": self.random_seed,
                "optimizer_on_chip": self.TensorLocations.optimizer_on_chip, "partials": self.Precision.partials,
                "available_memory_proportion": self.available_memory_proportion,
                "execution_strategy": self.strategy.ipusim() if self.strategy else None, "simulator": self.system, "host": self.host,
                "data_loader": self._data_loader, "sample_seconds": self.sample_seconds,
                "io_tiles": self.TensorLocations.io_tiles, "prefetch_depth": self._Popart.prefetch_depth}

    def clone(self):
        return copy.deepcopy(self)
